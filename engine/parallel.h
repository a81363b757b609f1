/* parallel.h: a small parallel-for for the numerical kernels of the implicit integrator (matrix
 * assembly, matrix-vector products, multigrid smoothing). Internal to the engine.
 *
 * par_for(fn, ctx, n) calls fn(ctx, i) once for every i in [0, n) and returns when all are done.
 * The calling thread and one worker thread claim the i one at a time, so if the worker is busy or
 * descheduled (a shared machine) the caller simply runs more of them itself. Work is cut into a
 * fixed number of chunks (PAR_CHUNKS) by the callers, so results do not depend on which thread ran
 * what, nor on whether a worker exists (one CPU, or IMPETUS_THREADS=1). The chunks must write
 * disjoint memory, and no script callback may run inside fn. */
#ifndef IMPETUS_PARALLEL_H
#define IMPETUS_PARALLEL_H

#define PAR_CHUNKS 8

typedef void (*par_fn)(void *ctx, int chunk);

void par_for(par_fn fn, void *ctx, int n);

/* the items [lo, hi) of chunk `chunk` when n items are cut into PAR_CHUNKS nearly equal runs */
static inline void par_range(int n, int chunk, int *lo, int *hi)
{
    *lo = (int)((long long)n * chunk / PAR_CHUNKS), *hi = (int)((long long)n * (chunk + 1) / PAR_CHUNKS);
}
int par_threads(void); /* 2 when a worker thread helps, else 1 */

#endif

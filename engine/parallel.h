/* parallel.h: a two-way fork-join for the numerical kernels of the implicit integrator (matrix
 * assembly, matrix-vector products, multigrid smoothing). Internal to the engine.
 *
 * par_run(fn, ctx) calls fn(ctx, 0) on the calling thread and fn(ctx, 1) on one worker thread,
 * and returns when both have finished. Without a worker (one CPU, IMPETUS_THREADS=1, or a worker
 * that could not start) it calls fn(ctx, 0) then fn(ctx, 1) itself: the same work, in order.
 * The two parts must write disjoint memory. No script callback may run inside fn. */
#ifndef IMPETUS_PARALLEL_H
#define IMPETUS_PARALLEL_H

typedef void (*par_fn)(void *ctx, int part);

void par_run(par_fn fn, void *ctx);
int par_parts(void); /* 2 when a worker thread takes part 1, else 1 */

#endif

/* cg.h: preconditioned conjugate gradient for symmetric positive (semi)definite systems, matrix-free:
 * the caller supplies y = A x and, optionally, a filter S that projects out constrained directions
 * (Baraff and Witkin, "Large steps in cloth simulation", 1998: the modified PCG). */
#ifndef IMPETUS_CG_H
#define IMPETUS_CG_H

typedef struct cg_problem {
    int n;
    void *ctx;
    void (*mul)(void *ctx, const double *x, double *y);  /* y = A x                             */
    const double *precond;  /* diagonal preconditioner P^-1 (n values), or NULL for none        */
    void (*filter)(void *ctx, double *x);                 /* x = S x in place, or NULL            */
    double tol;             /* stop when |r| <= tol |b| (relative), default 1e-8 when 0         */
    int max_iter;           /* default 2 n when 0                                               */
    double abs_tol;         /* also stop when |r| <= abs_tol (0: never), for right sides near 0  */
    /* s = P^-1 r for a preconditioner that is not diagonal (block Jacobi, multigrid, incomplete
     * Cholesky), or NULL; used in place of precond when set. P^-1 must be symmetric positive definite. */
    void (*precond_apply)(void *ctx, const double *r, double *s);
    /* optional, with chunks: precond_apply that may also give as = A s (the product mul would give, up
     * to rounding), returning nonzero when it did. The caller promises S s = s (a filter that only
     * zeroes whole particles, whose rows of r and of the preconditioner stay zero). Then the next
     * direction's product needs no mul: S A d = S (A s + beta A d_old) (see cg.c). */
    int (*precond_product)(void *ctx, const double *r, double *s, double *as);
    /* the norm of the stopping test (of S b and of r) in place of the Euclidean one, or NULL;
     * abs_tol is then in its units (the implicit integrator measures velocity errors) */
    double (*norm)(void *ctx, const double *v);
    /* nonzero: keep the start x only when it lowers phi(x) = x^T A x / 2 - b^T x below phi(0) = 0
     * (a start that merely passes the tolerance is not kept when 0 is better), else start from 0;
     * the test reuses the product A x of the first residual */
    int warm_check;
    /* called once, before the preconditioner is first applied (not at all when the start already
     * passes the test): the caller makes the preconditioner's values only when an iteration runs */
    void (*prepare)(void *ctx);
    /* optional: PAR_CHUNKS + 1 cuts of [0, n] (parallel.h). The iteration's vector work then runs in
     * these chunks on both threads, a dot product is the sum, in chunk order, of each chunk's sum of
     * four interleaved partial sums (independent additions, not one chain), and the norm is
     * norm_part's in place of norm's: the largest of its values over the chunks (a max-norm, which
     * chunks do not change), or without norm_part the Euclidean norm from the chunks' sums. The
     * results do not depend on which thread ran which chunk. NULL: one thread, one chain. */
    const int *chunks;
    double (*norm_part)(void *ctx, const double *v, int lo, int hi);
    /* with chunks: x = S x on the entries of one chunk (the iteration's filters then run inside the
     * chunks' jobs), or NULL: filter the whole vector */
    void (*filter_part)(void *ctx, double *x, int chunk);
} cg_problem;

typedef struct cg_result {
    int iterations;
    double residual;        /* |r| / |S b| at exit, in the problem's norm                        */
    int converged;
} cg_result;

typedef struct cg_work {
    double *r, *d, *q, *s, *as;
    int cap;
} cg_work;

/* solve A x = b starting from the x given (filtered); scratch in w, grown as needed */
cg_result cg_solve(const cg_problem *p, double *x, const double *b, cg_work *w);
void cg_work_free(cg_work *w);

#endif

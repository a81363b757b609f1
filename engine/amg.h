/* amg.h: an aggregation multigrid preconditioner for symmetric positive definite bsr3 matrices
 * (3x3 blocks), used by the implicit integrator's conjugate gradient. Internal to the engine.
 *
 *   amg_build   once per sparsity pattern: the aggregates of every level, the coarse patterns and
 *               the map from each fine block to the coarse block it sums into
 *   amg_update  every step, with the matrix's values: the coarse matrices, the smoothers'
 *               inverse diagonal blocks, the Cholesky factor of the coarsest matrix
 *   amg_apply   z = one symmetric V-cycle applied to r (z ~ A^-1 r), a valid CG preconditioner;
 *               z and r are distinct vectors
 */
#ifndef IMPETUS_AMG_H
#define IMPETUS_AMG_H

#include "parallel.h"
#include "sparse.h"

#define AMG_MAX_LEVELS 12

typedef struct amg_level {
    bsr3 A;              /* level 0: points at the caller's matrix (not owned); coarser: owned     */
    double *dinv;        /* 9 per block row: inverse of the diagonal block                        */
    double *x, *b, *r;   /* 3 per block row                                                       */
    int *agg;            /* block row -> block row of the next level (all but the last level)     */
    int *bmap;           /* block -> block of the next level                                      */
    /* the same map read the other way (all but the last level): the blocks that sum into block c of
     * the next level are gather[gather_start[c] .. gather_start[c + 1]), in increasing order */
    int *gather_start, *gather;
    /* the blocks and inverse diagonal blocks column-major (sparse.h, bsr3_cm_fill), made by amg_update
     * for the smoother's vector products on every smoothed level, with each row's diagonal block
     * index; on level 0 the caller's own products of the same matrix may use cm (bsr3_mul_rows_cm)
     * until its values change */
    double *cm, *dinv_cm;
    size_t cm_cap, dinv_cm_cap;
    int *dpos, dpos_cap;
    /* level 0 only: per row, the bounds of the blocks whose columns lie in the row's own parallel
     * chunk, left and right of the diagonal (the smoother reads the others from before the sweep) */
    int *klo, *khi;
} amg_level;

typedef struct amg {
    int levels;
    amg_level lev[AMG_MAX_LEVELS];
    double *chol;        /* dense Cholesky factor of the coarsest matrix (lower, row-major)        */
    int chol_n;
    int split[PAR_CHUNKS + 1]; /* level 0's rows are smoothed in these parallel chunks        */
    double *snap;        /* level 0: x before a parallel sweep                                    */
    double *delta;       /* level 0: what the backward sweep changed (amg_apply_product)          */
    bool cm_filled;      /* amg_fill_cm made level 0's copy of the values amg_update is given next */
    /* level 0's aggregates read the other way: the rows of level-1 row I are
     * member[member_start[I] .. member_start[I + 1]), in increasing order */
    int *member_start, *member;
} amg;

/* split: the row ranges of level 0's parallel chunks (parallel.h); the result does not depend on
 * which thread runs which chunk */
void amg_build(amg *g, const bsr3 *A, const int *split);
void amg_update(amg *g, const bsr3 *A);
/* level 0's column-major copy of A's values alone (parallel chunks), for the caller's products before
 * the multigrid's values are needed; the next amg_update then keeps it. False (nothing done) before
 * the first amg_update has made the hierarchy. */
bool amg_fill_cm(amg *g, const bsr3 *A);
/* after amg_build: take the hierarchy another run built for this pattern (snapshot.c), levels and the
 * aggregates of every level but the last (levels 0: none made yet) */
void amg_adopt(amg *g, const bsr3 *A, int levels, const int *const *agg);
void amg_apply(const amg *g, const double *r, double *z);
/* amg_apply, and az = A z from the last sweep's own sums (half a product: amg.c, sweep_product), the
 * matrix amg_update was given; false (az not made) when the hierarchy has one level */
bool amg_apply_product(const amg *g, const double *r, double *z, double *az);
void amg_free(amg *g);

#endif

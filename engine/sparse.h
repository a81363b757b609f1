/* sparse.h: block-sparse matrices for the implicit integrator and the constraint solver.
 *
 *   bsr3  an n x n matrix of 3x3 blocks (one block row per particle), symmetric pattern, stored as
 *         compressed block rows. Built once from a list of coupled pairs, refilled every step.
 *         Used for A = M - h df/dv - h^2 df/dx (implicit.c).
 *   jmat  an m x n matrix of 1x3 blocks (one row per scalar constraint, one block column per
 *         particle), stored as the list of entries e[0, count) its owner appends to. Used for the
 *         constraint Jacobians J and Jdot (tinkertoy.c): products J x and J^T y.
 */
#ifndef IMPETUS_SPARSE_H
#define IMPETUS_SPARSE_H

#include <stddef.h>

#include "imp_math.h"

typedef struct bsr3 {
    int n;          /* block rows and columns                                      */
    int *row_start; /* n + 1 offsets into col and val                               */
    int *col;       /* block column of each stored block, sorted within a row      */
    double *val;    /* 9 doubles per block, row-major                               */
    int nnz, cap;   /* stored blocks                                                */
} bsr3;

/* append the pair (i, j) to a growing list of pairs (2 ints each) for bsr3_build */
void bsr3_pair(int **pairs, int *count, int *cap, int i, int j);
/* pattern: the diagonal plus both (i, j) and (j, i) for each of the npairs pairs */
void bsr3_build(bsr3 *a, int n, const int *pairs, int npairs);
void bsr3_free(bsr3 *a);
void bsr3_zero(bsr3 *a);
/* index of block (i, j) in val / 9, or -1 when it is not in the pattern */
int bsr3_find(const bsr3 *a, int i, int j);
/* y = A x (x, y: 3n) */
void bsr3_mul(const bsr3 *a, const double *x, double *y);
/* the block rows [r0, r1) of y = A x */
void bsr3_mul_rows(const bsr3 *a, const double *x, double *y, int r0, int r1);

/* Column-major copies of the blocks, for the products that run many times over one matrix (the
 * conjugate gradient's and the multigrid smoother's). With a block's columns contiguous, B x is
 * col0 x_0 + col1 x_1 + col2 x_2 in three-lane vector operations, and lane r computes
 * (B_r0 x_0 + B_r1 x_1) + B_r2 x_2, the same operations in the same order as b3_mul_v: the vector
 * and the scalar paths give the same bits (no fused multiply-add on either). The copy holds
 * 9 doubles per block and one more after the last (a four-lane load of the last column reads it).
 * bsr3_cm_size: the doubles a copy of nblocks blocks needs. */
size_t bsr3_cm_size(int nblocks);
/* cm[9k + 3c + r] = val[9k + 3r + c] for the blocks [k0, k1) (and the pad after the last) */
void bsr3_cm_fill(const bsr3 *a, double *cm, int k0, int k1);
/* the block rows [r0, r1) of y = A x from the copy cm: the same bits as bsr3_mul_rows */
void bsr3_mul_rows_cm(const bsr3 *a, const double *cm, const double *x, double *y, int r0, int r1);

typedef struct jentry {
    int row, particle;  /* constraint row, particle (dense index) */
    double g[3];        /* the 1x3 block                          */
} jentry;

typedef struct jmat {
    int rows;
    jentry *e;
    int count, cap;
} jmat;

void jmat_clear(jmat *j, int rows);
void jmat_free(jmat *j);
void jmat_mul(const jmat *j, const double *x, double *y);   /* y (rows) = J x (3n)        */
void jmat_mul_t(const jmat *j, const double *y, double *x, int n); /* x (3n) = J^T y (rows) */

#endif

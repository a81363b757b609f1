/* sparse.h: block-sparse matrices for the implicit integrator and the constraint solver.
 *
 *   bsr3  an n x n matrix of 3x3 blocks (one block row per particle), symmetric pattern, stored as
 *         compressed block rows. Built once from a list of coupled pairs, refilled every step.
 *         Used for A = M - h df/dv - h^2 df/dx (implicit.c).
 *   jmat  an m x n matrix of 1x3 blocks (one row per scalar constraint, one block column per
 *         particle), stored as a list of entries. Used for the constraint Jacobians J and Jdot
 *         (tinkertoy.c): products J x and J^T y.
 */
#ifndef IMPETUS_SPARSE_H
#define IMPETUS_SPARSE_H

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
/* a(i, j) += s * m (m row-major 3x3); the block must be in the pattern */
void bsr3_add(bsr3 *a, int i, int j, const double m[9], double s);
/* y = A x (x, y: 3n) */
void bsr3_mul(const bsr3 *a, const double *x, double *y);
/* the block rows [r0, r1) of y = A x */
void bsr3_mul_rows(const bsr3 *a, const double *x, double *y, int r0, int r1);

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
void jmat_add(jmat *j, int row, int particle, imp_vec3 g);
void jmat_mul(const jmat *j, const double *x, double *y);   /* y (rows) = J x (3n)        */
void jmat_mul_t(const jmat *j, const double *y, double *x, int n); /* x (3n) = J^T y (rows) */

#endif

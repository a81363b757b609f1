/* ic0.h: the incomplete Cholesky factorization IC(0) of a sparse symmetric matrix (ic0.c), a
 * preconditioner for conjugate gradient (cg.h). */
#ifndef IMPETUS_IC0_H
#define IMPETUS_IC0_H

struct ic0_key;

/* A ~ L D L^T over the lower triangle of A in compressed rows: row i's entries are
 * [start[i], start[i + 1]), columns ascending, the diagonal last */
typedef struct ic0 {
    int n, nnz;                 /* rows; stored entries                                             */
    int *start, *col;           /* n + 1 row offsets; the column of each entry                      */
    double *a;                  /* A's values in the pattern: the caller fills them before ic0_factor */
    double *l, *m, *dinv;       /* L and M = L D in the same pattern (L's unit diagonal not stored); 1 / D_i */
    int start_cap, entry_cap, row_cap;
    struct ic0_key *keys;       /* ic0_pattern's scratch                                            */
    int keys_cap;
} ic0;

/* The pattern of an n x n matrix from count entries (rc[2k], rc[2k + 1]) = (row, column) of its
 * lower triangle (column <= row), repeats allowed: slot[k] receives the index in a that entry k
 * sums into. Every row must hold its diagonal. */
void ic0_pattern(ic0 *f, int n, const int *rc, int count, int *slot);
/* L, D from the values in a */
void ic0_factor(ic0 *f);
/* s = (L D L^T)^-1 r */
void ic0_apply(const ic0 *f, const double *r, double *s);
void ic0_free(ic0 *f);

#endif

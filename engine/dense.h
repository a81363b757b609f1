/* dense.h: the engine's dense inverses: Gauss-Jordan elimination with partial pivoting for any small
 * matrix, and for a symmetric positive definite one its L D L^T factors (dense_invert_spd, below).
 * dense_invert inverts an n x n matrix in place (row-major, row stride `stride`, so a block inside a
 * larger array works).
 *
 * For each column c: the row p >= c with the largest |A[p][c]| is swapped into row c, row c is scaled
 * by 1 / A[c][c], and column c is eliminated from every other row. Storing each eliminated column's
 * multipliers where the identity's column would be makes the array end as the inverse of the row-
 * swapped matrix; undoing the swaps as column swaps, last first, gives A^-1. Returns false (A
 * garbage) when a pivot is below 1e-300 or not finite: the matrix is singular to working precision.
 *
 * Used for the joints' m x m blocks (m <= 7, hot: inlined, so a constant n and stride unroll) and for
 * the generic backward Euler step of small systems (ode.c); dense_invert_spd for the contact patches'
 * normal and friction rows (impulse.c). */
#ifndef IMPETUS_DENSE_H
#define IMPETUS_DENSE_H

#include <math.h>
#include <stdbool.h>

#define DENSE_MAX 64 /* the largest n whose row swaps fit the solver's own record */

static inline __attribute__((always_inline)) bool dense_invert(double *A, int n, int stride)
{
    int piv[DENSE_MAX];
    if (n > DENSE_MAX) return false;
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[stride * r + c]) > fabs(A[stride * p + c])) p = r;
        if (!(fabs(A[stride * p + c]) > 1e-300) || !isfinite(A[stride * p + c])) return false;
        piv[c] = p;
        if (p != c)
            for (int k = 0; k < n; k++) {
                double t = A[stride * c + k];
                A[stride * c + k] = A[stride * p + k], A[stride * p + k] = t;
            }
        double d = 1 / A[stride * c + c];
        A[stride * c + c] = 1;
        for (int k = 0; k < n; k++) A[stride * c + k] *= d;
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double f = A[stride * r + c];
            if (f == 0) continue;
            A[stride * r + c] = 0;
            for (int k = 0; k < n; k++) A[stride * r + k] -= f * A[stride * c + k];
        }
    }
    for (int c = n - 1; c >= 0; c--) /* undo the row swaps as column swaps */
        if (piv[c] != c)
            for (int r = 0; r < n; r++) {
                double t = A[stride * r + c];
                A[stride * r + c] = A[stride * r + piv[c]], A[stride * r + piv[c]] = t;
            }
    return true;
}

/* The inverse of a symmetric positive definite n x n matrix (n <= DENSE_SPD_MAX) in place, by its
 * factors A = L D L^T (L unit lower triangular, D diagonal; no pivoting is needed for such a matrix):
 *     d_j = A_jj - sum_{k<j} L_jk^2 d_k,   L_ij = (A_ij - sum_{k<j} L_ik L_jk d_k) / d_j   (i > j),
 * then W = L^-1 (unit lower triangular: W_ij = -sum_{j<=k<i} L_ik W_kj) and
 *     A^-1 = W^T D^-1 W,   (A^-1)_ij = sum_{k>=max(i,j)} W_ki W_kj / d_k,
 * about half the work of Gauss-Jordan and exactly symmetric. Reads the lower triangle. Returns false
 * (A unchanged) when a pivot d_j is not above 1e-300 or not finite: A is not positive definite to
 * working precision. */
#define DENSE_SPD_MAX 4
static inline __attribute__((always_inline)) bool dense_invert_spd(double *A, int n, int stride)
{
    double L[DENSE_SPD_MAX][DENSE_SPD_MAX], d[DENSE_SPD_MAX], inv_d[DENSE_SPD_MAX];
    if (n > DENSE_SPD_MAX) return false;
    _Pragma("GCC unroll 4")
    for (int j = 0; j < n; j++) {
        double dj = A[stride * j + j];
        _Pragma("GCC unroll 4")
        for (int k = 0; k < j; k++) dj -= L[j][k] * L[j][k] * d[k];
        if (!(dj > 1e-300) || !isfinite(dj)) return false;
        d[j] = dj, inv_d[j] = 1 / dj;
        _Pragma("GCC unroll 4")
        for (int i = j + 1; i < n; i++) {
            double l = A[stride * i + j];
            _Pragma("GCC unroll 4")
            for (int k = 0; k < j; k++) l -= L[i][k] * L[j][k] * d[k];
            L[i][j] = l * inv_d[j];
        }
    }
    double W[DENSE_SPD_MAX][DENSE_SPD_MAX];
    _Pragma("GCC unroll 4")
    for (int i = 0; i < n; i++)
        _Pragma("GCC unroll 4")
        for (int j = 0; j < i; j++) {
            double w = -L[i][j];
            _Pragma("GCC unroll 4")
            for (int k = j + 1; k < i; k++) w -= L[i][k] * W[k][j];
            W[i][j] = w;
        }
    _Pragma("GCC unroll 4")
    for (int i = 0; i < n; i++)
        _Pragma("GCC unroll 4")
        for (int j = 0; j <= i; j++) {
            double a = inv_d[i] * (i == j ? 1 : W[i][j]);
            _Pragma("GCC unroll 4")
            for (int k = i + 1; k < n; k++) a += W[k][i] * W[k][j] * inv_d[k];
            A[stride * i + j] = A[stride * j + i] = a;
        }
    return true;
}

#endif

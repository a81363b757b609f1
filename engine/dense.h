/* dense.h: the engine's one dense solver: Gauss-Jordan elimination with partial pivoting, inverting
 * an n x n matrix in place (row-major, row stride `stride`, so a block inside a larger array works).
 *
 * For each column c: the row p >= c with the largest |A[p][c]| is swapped into row c, row c is scaled
 * by 1 / A[c][c], and column c is eliminated from every other row. Storing each eliminated column's
 * multipliers where the identity's column would be makes the array end as the inverse of the row-
 * swapped matrix; undoing the swaps as column swaps, last first, gives A^-1. Returns false (A
 * garbage) when a pivot is below 1e-300 or not finite: the matrix is singular to working precision.
 *
 * Used for the joints' m x m blocks (m <= 7, hot: inlined, so a constant n and stride unroll) and for
 * the generic backward Euler step of small systems (ode.c). */
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

#endif

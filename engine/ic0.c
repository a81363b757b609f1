/* ic0.c: incomplete Cholesky factorization without fill, IC(0) (Meijerink and van der Vorst 1977),
 * in its square-root-free form A ~ L D L^T, as a preconditioner for conjugate gradient.
 *
 * The complete factorization A = L D L^T (L unit lower triangular, D diagonal) follows, row by row,
 * from A_ik = sum_{j<=k} L_ij D_j L_kj. Writing M_ik = L_ik D_k:
 *
 *     M_ik = A_ik - sum_{j<k} M_ij L_kj,   L_ik = M_ik / D_k           (k < i)
 *     D_i  = A_ii - sum_{k<i} L_ik M_ik
 *
 * IC(0) computes exactly these, but only at the positions (i, k) where A itself has an entry: every
 * fill-in L would gain outside A's pattern is dropped, so L costs what A costs. Where the complete
 * factor has no fill (a tridiagonal matrix: a chain), IC(0) is exact and preconditioned CG converges
 * in one iteration. A pivot D_i that is not clearly positive (a singular or nearly singular A: rows
 * that repeat others, rows that are zero) is replaced by A_ii, or by 1 when that is not positive
 * either, which keeps L D L^T positive definite, as CG needs of its preconditioner. The L D L^T form
 * costs one division per row and no square root; on a chain each row's pivot waits on the one
 * before, so that division is the sequential part. */
#include <stdlib.h>
#include <string.h>

#include "ic0.h"
#include "ids.h"

typedef struct ic0_key { int row, col, entry; } ic0_key;

static int cmp_key(const void *a, const void *b)
{
    const ic0_key *x = a, *y = b;
    if (x->row != y->row) return (x->row > y->row) - (x->row < y->row);
    return (x->col > y->col) - (x->col < y->col);
}

void ic0_pattern(ic0 *f, int n, const int *rc, int count, int *slot)
{
    if (count > f->keys_cap) {
        f->keys_cap = 2 * count;
        f->keys = ids_grow(f->keys, sizeof(ic0_key), f->keys_cap);
    }
    ic0_key *keys = f->keys;
    for (int k = 0; k < count; k++) keys[k] = (ic0_key){rc[2 * k], rc[2 * k + 1], k};
    qsort(keys, (size_t)count, sizeof(ic0_key), cmp_key);
    if (n + 1 > f->start_cap) {
        f->start_cap = 2 * (n + 1);
        f->start = ids_grow(f->start, sizeof(int), f->start_cap);
    }
    if (count > f->entry_cap) {
        f->col = ids_grow(f->col, sizeof(int), count);
        f->a = ids_grow(f->a, sizeof(double), count);
        f->l = ids_grow(f->l, sizeof(double), count);
        f->m = ids_grow(f->m, sizeof(double), count);
        f->entry_cap = count;
    }
    if (n > f->row_cap) {
        f->row_cap = 2 * n;
        f->dinv = ids_grow(f->dinv, sizeof(double), f->row_cap);
    }
    /* the distinct (row, column) in sorted order are the compressed rows */
    int nnz = 0;
    for (int r = 0; r <= n; r++) f->start[r] = 0;
    for (int k = 0; k < count; k++) {
        if (k == 0 || keys[k].row != keys[k - 1].row || keys[k].col != keys[k - 1].col) {
            f->col[nnz] = keys[k].col;
            f->start[keys[k].row + 1]++;
            nnz++;
        }
        slot[keys[k].entry] = nnz - 1;
    }
    for (int r = 0; r < n; r++) f->start[r + 1] += f->start[r];
    f->nnz = nnz;
    f->n = n;
}

/* the recurrences at the top of the file, row by row; the inner sum runs over the columns rows i
 * and k share left of k (a merge of two sorted rows) */
void ic0_factor(ic0 *f)
{
    const int n = f->n, *st = f->start, *col = f->col;
    const double *A = f->a;
    double *L = f->l, *M = f->m, *Dinv = f->dinv;
    for (int i = 0; i < n; i++) {
        const int diag = st[i + 1] - 1; /* the diagonal closes its row (largest column) */
        double sum = 0;
        for (int p = st[i]; p < diag; p++) {
            const int k = col[p], kdiag = st[k + 1] - 1;
            double s = A[p];
            for (int q1 = st[i], q2 = st[k]; q1 < p && q2 < kdiag;) {
                if (col[q1] == col[q2]) s -= M[q1++] * L[q2++];
                else if (col[q1] < col[q2]) q1++;
                else q2++;
            }
            M[p] = s;
            L[p] = s * Dinv[k];
            sum += L[p] * s;
        }
        const double aii = A[diag], d = aii - sum;
        Dinv[i] = 1 / (d > 1e-10 * aii ? d : aii > 0 ? aii : 1.0);
    }
}

/* forward substitution with the unit L, scaling by 1 / D, back substitution with L^T (a column
 * sweep over L's rows) */
void ic0_apply(const ic0 *f, const double *r, double *s)
{
    const int n = f->n, *st = f->start, *col = f->col;
    const double *L = f->l, *Dinv = f->dinv;
    for (int i = 0; i < n; i++) {
        double v = r[i];
        for (int p = st[i]; p < st[i + 1] - 1; p++) v -= L[p] * s[col[p]];
        s[i] = v;
    }
    for (int i = 0; i < n; i++) s[i] *= Dinv[i];
    for (int i = n - 1; i >= 0; i--) {
        const double si = s[i];
        for (int p = st[i]; p < st[i + 1] - 1; p++) s[col[p]] -= L[p] * si;
    }
}

void ic0_free(ic0 *f)
{
    free(f->start), free(f->col), free(f->a), free(f->l), free(f->m), free(f->dinv), free(f->keys);
    memset(f, 0, sizeof *f);
}

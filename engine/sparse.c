/* sparse.c: block-sparse matrices (see sparse.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "sparse.h"
#include "sparse_simd.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void bsr3_pair(int **pairs, int *count, int *cap, int i, int j)
{
    if (*count == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        *pairs = ids_grow(*pairs, 2 * sizeof(int), *cap);
    }
    (*pairs)[2 * *count] = i, (*pairs)[2 * *count + 1] = j;
    (*count)++;
}

void bsr3_build(bsr3 *a, int n, const int *pairs, int npairs)
{
    /* count the blocks of each row (diagonal + both directions of each pair), then fill */
    int *count = calloc((size_t)n + 1, sizeof(int));
    if (!count) abort();
    for (int i = 0; i < n; i++) count[i] = 1;
    for (int k = 0; k < npairs; k++) {
        count[pairs[2 * k]]++;
        count[pairs[2 * k + 1]]++;
    }
    a->n = n;
    a->row_start = ids_grow(a->row_start, sizeof(int), n + 1);
    a->row_start[0] = 0;
    for (int i = 0; i < n; i++) a->row_start[i + 1] = a->row_start[i] + count[i];
    int total = a->row_start[n];
    if (total > a->cap) {
        a->col = ids_grow(a->col, sizeof(int), total);
        a->val = ids_grow(a->val, 9 * sizeof(double), total);
        a->cap = total;
    }
    for (int i = 0; i < n; i++) {
        count[i] = a->row_start[i];
        a->col[count[i]++] = i;
    }
    for (int k = 0; k < npairs; k++) {
        int i = pairs[2 * k], j = pairs[2 * k + 1];
        a->col[count[i]++] = j;
        a->col[count[j]++] = i;
    }
    /* sort each row and drop duplicate pairs */
    int out = 0;
    for (int i = 0; i < n; i++) {
        int s = a->row_start[i], e = a->row_start[i + 1];
        qsort(a->col + s, (size_t)(e - s), sizeof(int), cmp_int);
        a->row_start[i] = out;
        for (int k = s; k < e; k++)
            if (k == s || a->col[k] != a->col[k - 1]) a->col[out++] = a->col[k];
    }
    a->row_start[n] = out;
    a->nnz = out;
    free(count);
    bsr3_zero(a);
}

void bsr3_free(bsr3 *a)
{
    free(a->row_start), free(a->col), free(a->val);
    memset(a, 0, sizeof *a);
}

void bsr3_zero(bsr3 *a)
{
    if (a->nnz) memset(a->val, 0, 9 * sizeof(double) * (size_t)a->nnz);
}

int bsr3_find(const bsr3 *a, int i, int j)
{
    int lo = a->row_start[i], hi = a->row_start[i + 1];
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a->col[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->row_start[i + 1] && a->col[lo] == j ? lo : -1;
}

void bsr3_mul(const bsr3 *a, const double *x, double *y) { bsr3_mul_rows(a, x, y, 0, a->n); }

void bsr3_mul_rows(const bsr3 *a, const double *x, double *y, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        imp_vec3 yi = v3(0, 0, 0);
        for (int k = a->row_start[i]; k < a->row_start[i + 1]; k++)
            yi = v3_add(yi, b3_mul_v(a->val + 9 * k, v3_load(x + 3 * a->col[k])));
        v3_store(y + 3 * i, yi);
    }
}

void jmat_clear(jmat *j, int rows)
{
    j->rows = rows;
    j->count = 0;
}

void jmat_free(jmat *j)
{
    free(j->e);
    memset(j, 0, sizeof *j);
}

void jmat_mul(const jmat *j, const double *x, double *y)
{
    memset(y, 0, sizeof(double) * (size_t)j->rows);
    for (int k = 0; k < j->count; k++) {
        const jentry *e = &j->e[k];
        const double *xp = x + 3 * e->particle;
        y[e->row] += e->g[0] * xp[0] + e->g[1] * xp[1] + e->g[2] * xp[2];
    }
}

void jmat_mul_t(const jmat *j, const double *y, double *x, int n)
{
    memset(x, 0, 3 * sizeof(double) * (size_t)n);
    for (int k = 0; k < j->count; k++) {
        const jentry *e = &j->e[k];
        double *xp = x + 3 * e->particle, s = y[e->row];
        xp[0] += e->g[0] * s, xp[1] += e->g[1] * s, xp[2] += e->g[2] * s;
    }
}

/* ---- column-major copies (sparse.h, sparse_simd.h) ------------------------------------------------ */

size_t bsr3_cm_size(int nblocks) { return 9 * (size_t)(nblocks > 0 ? nblocks : 0) + 1; }

void bsr3_cm_fill(const bsr3 *a, double *cm, int k0, int k1)
{
    for (int k = k0; k < k1; k++) {
        const double *b = a->val + 9 * (size_t)k;
        double *c = cm + 9 * (size_t)k;
        c[0] = b[0], c[1] = b[3], c[2] = b[6];
        c[3] = b[1], c[4] = b[4], c[5] = b[7];
        c[6] = b[2], c[7] = b[5], c[8] = b[8];
    }
    if (k1 == a->nnz) cm[9 * (size_t)a->nnz] = 0;
}

#if SPARSE_HAVE_AVX
bool sparse_avx(void)
{
    static atomic_int state = -1; /* -1: not decided yet; every thread decides the same */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s < 0) {
        const char *env = getenv("IMPETUS_SIMD");
        s = __builtin_cpu_supports("avx") && !(env && strcmp(env, "0") == 0);
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s;
}

static SPARSE_AVX void mul_rows_cm_avx(const bsr3 *a, const double *cm, const double *x, double *y, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        __m256d yi = _mm256_setzero_pd();
        for (int k = a->row_start[i]; k < a->row_start[i + 1]; k++)
            yi = _mm256_add_pd(yi, sparse_cm_mul(cm + 9 * (size_t)k, x + 3 * (size_t)a->col[k]));
        sparse_store3(y + 3 * (size_t)i, yi);
    }
}
#endif

void bsr3_mul_rows_cm(const bsr3 *a, const double *cm, const double *x, double *y, int r0, int r1)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        mul_rows_cm_avx(a, cm, x, y, r0, r1);
        return;
    }
#endif
    for (int i = r0; i < r1; i++) {
        double yi[3] = {0, 0, 0}, p[3];
        for (int k = a->row_start[i]; k < a->row_start[i + 1]; k++) {
            sparse_cm_mul_scalar(cm + 9 * (size_t)k, x + 3 * (size_t)a->col[k], p);
            yi[0] += p[0], yi[1] += p[1], yi[2] += p[2];
        }
        y[3 * (size_t)i] = yi[0], y[3 * (size_t)i + 1] = yi[1], y[3 * (size_t)i + 2] = yi[2];
    }
}

/* sparse.c: block-sparse matrices (see sparse.h). */
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "sparse.h"

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

void bsr3_add(bsr3 *a, int i, int j, const double m[9], double s)
{
    int k = bsr3_find(a, i, j);
    if (k < 0) return;
    double *b = a->val + 9 * k;
    for (int e = 0; e < 9; e++) b[e] += s * m[e];
}

void bsr3_mul(const bsr3 *a, const double *x, double *y) { bsr3_mul_rows(a, x, y, 0, a->n); }

void bsr3_mul_rows(const bsr3 *a, const double *x, double *y, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        double y0 = 0, y1 = 0, y2 = 0;
        for (int k = a->row_start[i]; k < a->row_start[i + 1]; k++) {
            const double *b = a->val + 9 * k, *xj = x + 3 * a->col[k];
            y0 += b[0] * xj[0] + b[1] * xj[1] + b[2] * xj[2];
            y1 += b[3] * xj[0] + b[4] * xj[1] + b[5] * xj[2];
            y2 += b[6] * xj[0] + b[7] * xj[1] + b[8] * xj[2];
        }
        y[3 * i] = y0, y[3 * i + 1] = y1, y[3 * i + 2] = y2;
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

void jmat_add(jmat *j, int row, int particle, imp_vec3 g)
{
    if (j->count == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 64;
        j->e = ids_grow(j->e, sizeof(jentry), j->cap);
    }
    jentry *e = &j->e[j->count++];
    e->row = row, e->particle = particle;
    e->g[0] = g.x, e->g[1] = g.y, e->g[2] = g.z;
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

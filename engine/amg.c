/* amg.c: aggregation multigrid for the implicit integrator's linear systems (see amg.h).
 *
 * Why: A = M - h D - h^2 K of stiff cloth has its stiffness in the in-plane stretch, a
 * Laplacian-like operator whose condition number grows with the square of the resolution, so
 * conjugate gradient with a (block) diagonal preconditioner needs iterations in proportion to the
 * resolution. A multigrid V-cycle removes the smooth error on coarser levels, where it is oscillatory
 * and the smoother takes it out, and the iteration count stays about constant as the cloth is refined.
 *
 * Coarsening is by aggregation on the matrix graph (plain aggregation, Vanek et al.): each
 * aggregate of block rows becomes one block row of the next level, the prolongation P copies an
 * aggregate's value to each member (piecewise constant, 3x3 identity blocks), and the Galerkin
 * coarse matrix P^T A P is then just the sum of the fine blocks between two aggregates:
 *
 *     A_c(I, J) = sum_{i in I, j in J} A(i, j)
 *
 * which costs one pass over the fine blocks per step (the map block -> coarse block, and its
 * inverse, are built with the pattern; each coarse block gathers its fine blocks, so level 1's
 * blocks are summed in parallel chunks). The smoother is block Gauss-Seidel, forward before the
 * coarse correction and backward after, so the V-cycle is a symmetric positive definite operator,
 * as CG requires. The coarsest level is solved by a dense Cholesky factorization when it has at
 * most COARSEST block rows; when coarsening stalls above that (many small disconnected pieces, such
 * as hair strands, each aggregate alone) it gets symmetric Gauss-Seidel sweeps instead.
 *
 * On the finest level the rows are cut in chunks that are smoothed at the same time (parallel.h):
 * each chunk runs Gauss-Seidel over its own rows and reads the other chunks' values from before
 * the sweep (a "hybrid" Gauss-Seidel: block Jacobi between the chunks). The forward sweep's
 * operator is then blockdiag(D + L) of the chunks and the backward one its transpose, so the
 * V-cycle stays symmetric, and it is the same whichever thread runs which chunk. Level 0's restriction
 * (each aggregate's sum gathered from its members in increasing order) and prolongation run in the same
 * chunks, with the bits of a pass over the rows. Every smoothed level
 * keeps column-major copies of its blocks and inverse diagonal blocks (sparse.h), made with its values,
 * from which the sweeps run as AVX code with the scalar code's bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "ids.h"
#include "imp_math.h"
#include "parallel.h"
#include "sparse_simd.h"

#define COARSEST 48   /* block rows below which a level is solved directly */

static void level_vectors(amg_level *L, int n)
{
    L->dinv = ids_grow(L->dinv, 9 * sizeof(double), n);
    L->x = ids_grow(L->x, 3 * sizeof(double), n);
    L->b = ids_grow(L->b, 3 * sizeof(double), n);
    L->r = ids_grow(L->r, 3 * sizeof(double), n);
}

static double block_norm(const double *B)
{
    double s = 0;
    for (int e = 0; e < 9; e++) s += B[e] * B[e];
    return sqrt(s);
}

/* Greedy aggregation (Vanek, Mandel, Brezina 1996) over the strong couplings of the matrix, those
 * with |A_ij| >= theta sqrt(|A_ii| |A_jj|) (Frobenius norms of blocks): a row whose strong
 * neighbours are all free seeds an aggregate with them; rows left over join the aggregate of their
 * strongest aggregated neighbour; isolated rows stay alone. Weak couplings (the bend terms across
 * an edge, next to stretch) would otherwise make aggregates large and coarse corrections poor.
 * Returns the number of aggregates. */
#define STRONG 0.25
static int aggregate(const bsr3 *A, int *agg)
{
    const int n = A->n;
    double *dn = ids_grow(NULL, sizeof(double), n > 0 ? n : 1);
    for (int i = 0; i < n; i++) dn[i] = block_norm(A->val + 9 * (size_t)bsr3_find(A, i, i));
#define IS_STRONG(i, k) (A->col[k] != (i) && block_norm(A->val + 9 * (size_t)(k)) >= STRONG * sqrt(dn[i] * dn[A->col[k]]))
    for (int i = 0; i < n; i++) agg[i] = -1;
    int na = 0;
    for (int i = 0; i < n; i++) {
        if (agg[i] >= 0) continue;
        bool free_all = true;
        for (int k = A->row_start[i]; k < A->row_start[i + 1] && free_all; k++)
            if (IS_STRONG(i, k)) free_all = agg[A->col[k]] < 0;
        if (!free_all) continue;
        agg[i] = na;
        for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++)
            if (IS_STRONG(i, k)) agg[A->col[k]] = na;
        na++;
    }
    /* leftovers join their strongest neighbour's aggregate (tagged -2 - a so that they do not
     * pass their aggregate on to other leftovers in this sweep) */
    for (int i = 0; i < n; i++) {
        if (agg[i] >= 0) continue;
        double best = 0;
        int to = -1;
        for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++) {
            int j = A->col[k];
            if (j == i || agg[j] < 0) continue;
            double s = block_norm(A->val + 9 * (size_t)k);
            if (s > best) best = s, to = agg[j];
        }
        if (to >= 0) agg[i] = -2 - to;
    }
#undef IS_STRONG
    for (int i = 0; i < n; i++) {
        if (agg[i] <= -2) agg[i] = -2 - agg[i];
        else if (agg[i] < 0) agg[i] = na++;
    }
    free(dn);
    return na;
}

void amg_free(amg *g)
{
    for (int l = 0; l < AMG_MAX_LEVELS; l++) {
        amg_level *L = &g->lev[l];
        if (l > 0) bsr3_free(&L->A);
        free(L->dinv), free(L->x), free(L->b), free(L->r), free(L->agg), free(L->bmap), free(L->gather_start), free(L->gather);
        free(L->cm), free(L->dinv_cm), free(L->dpos), free(L->klo), free(L->khi);
    }
    free(g->chol), free(g->snap), free(g->delta), free(g->member_start), free(g->member);
    memset(g, 0, sizeof *g);
}

void amg_build(amg *g, const bsr3 *A, const int *split)
{
    amg_free(g);
    g->lev[0].A = *A; /* pattern and values are the caller's */
    memcpy(g->split, split, sizeof g->split);
    g->levels = 0;    /* the hierarchy is made by the first amg_update, from the matrix's values */
}

/* coarse matrix values: the sums of the fine blocks, for the coarse blocks [c0, c1). Each coarse
 * block adds its fine blocks in increasing order from zero, so the sums do not depend on how the
 * coarse blocks are cut into parallel chunks. */
static void coarse_values(const amg_level *F, amg_level *C, int c0, int c1)
{
    const double *fv = F->A.val;
    double *cv = C->A.val;
    for (int c = c0; c < c1; c++) {
        double sum[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        for (int g = F->gather_start[c]; g < F->gather_start[c + 1]; g++) {
            const double *s = fv + 9 * (size_t)F->gather[g];
            for (int e = 0; e < 9; e++) sum[e] += s[e];
        }
        memcpy(cv + 9 * (size_t)c, sum, sizeof sum);
    }
}

typedef struct coarse_job {
    amg *g;
} coarse_job;

/* level 1's blocks in PAR_CHUNKS runs of whole block rows */
static void coarse_part(void *ctx, int chunk)
{
    amg *g = ((const coarse_job *)ctx)->g;
    amg_level *C = &g->lev[1];
    int r0, r1;
    par_range(C->A.n, chunk, &r0, &r1);
    coarse_values(&g->lev[0], C, C->A.row_start[r0], C->A.row_start[r1]);
}

/* gather_start and gather of a level from its bmap (a counting sort: within each coarse block the
 * fine blocks stay in increasing order) */
static void gather_map(amg_level *F, int coarse_blocks)
{
    const int nnz = F->A.nnz;
    F->gather_start = ids_grow(F->gather_start, sizeof(int), (size_t)coarse_blocks + 1);
    F->gather = ids_grow(F->gather, sizeof(int), nnz > 0 ? nnz : 1);
    memset(F->gather_start, 0, sizeof(int) * ((size_t)coarse_blocks + 1));
    for (int k = 0; k < nnz; k++) F->gather_start[F->bmap[k] + 1]++;
    for (int c = 0; c < coarse_blocks; c++) F->gather_start[c + 1] += F->gather_start[c];
    for (int k = 0; k < nnz; k++) F->gather[F->gather_start[F->bmap[k]]++] = k;
    for (int c = coarse_blocks; c > 0; c--) F->gather_start[c] = F->gather_start[c - 1];
    F->gather_start[0] = 0;
}

/* aggregate level after level, with the strengths of the values at hand; or, given the aggregates of
 * levels 0 .. given_levels - 2 (amg_adopt), with those */
static void level_pattern(amg_level *L);

/* level 0's klo and khi: for row i of the chunk [lo, hi), blocks [klo, dpos) and (dpos, khi) have
 * their columns in [lo, hi) (a row's columns are sorted) */
static void chunk_bounds(amg *g)
{
    amg_level *L = &g->lev[0];
    const bsr3 *A = &L->A;
    const int n = A->n > 0 ? A->n : 1;
    L->klo = ids_grow(L->klo, sizeof(int), (size_t)n);
    L->khi = ids_grow(L->khi, sizeof(int), (size_t)n);
    for (int c = 0; c < PAR_CHUNKS; c++) {
        const int lo = g->split[c], hi = g->split[c + 1];
        for (int i = lo; i < hi; i++) {
            const int kd = L->dpos[i];
            int k_lo = A->row_start[i], k_hi = A->row_start[i + 1];
            while (k_lo < kd && A->col[k_lo] < lo) k_lo++;
            while (k_hi > kd + 1 && A->col[k_hi - 1] >= hi) k_hi--;
            L->klo[i] = k_lo, L->khi[i] = k_hi;
        }
    }
}

static void hierarchy(amg *g, int given_levels, const int *const *given)
{
    const bsr3 *A = &g->lev[0].A;
    level_vectors(&g->lev[0], A->n);
    g->snap = ids_grow(g->snap, 3 * sizeof(double), A->n > 0 ? A->n : 1);
    g->delta = ids_grow(g->delta, 3 * sizeof(double), A->n > 0 ? A->n : 1);
    g->levels = 1;
    int *pairs = NULL, pair_cap = 0;
    while (given ? g->levels < given_levels : g->levels < AMG_MAX_LEVELS && g->lev[g->levels - 1].A.n > COARSEST) {
        amg_level *F = &g->lev[g->levels - 1], *C = &g->lev[g->levels];
        const bsr3 *Af = &F->A;
        F->agg = ids_grow(F->agg, sizeof(int), Af->n);
        int nc = 0;
        if (given) {
            memcpy(F->agg, given[g->levels - 1], sizeof(int) * (size_t)Af->n);
            for (int i = 0; i < Af->n; i++) nc = F->agg[i] >= nc ? F->agg[i] + 1 : nc;
        } else {
            nc = aggregate(Af, F->agg);
            if (nc > Af->n * 4 / 5) break; /* coarsening has stalled: this level is the coarsest */
        }
        /* coarse pattern: the aggregate pairs of every fine block */
        int np = 0;
        if (Af->nnz > pair_cap) {
            pair_cap = Af->nnz;
            pairs = ids_grow(pairs, 2 * sizeof(int), pair_cap);
        }
        for (int i = 0; i < Af->n; i++)
            for (int k = Af->row_start[i]; k < Af->row_start[i + 1]; k++) {
                int I = F->agg[i], J = F->agg[Af->col[k]];
                if (I < J) pairs[2 * np] = I, pairs[2 * np + 1] = J, np++;
            }
        memset(&C->A, 0, sizeof C->A);
        bsr3_build(&C->A, nc, pairs, np);
        F->bmap = ids_grow(F->bmap, sizeof(int), Af->nnz);
        for (int i = 0; i < Af->n; i++)
            for (int k = Af->row_start[i]; k < Af->row_start[i + 1]; k++)
                F->bmap[k] = bsr3_find(&C->A, F->agg[i], F->agg[Af->col[k]]);
        gather_map(F, C->A.nnz);
        level_vectors(C, nc);
        if (!given) coarse_values(F, C, 0, C->A.nnz); /* (adopted: the next amg_update brings the values) */
        g->levels++;
    }
    free(pairs);
    for (int l = 0; l < g->levels; l++) level_pattern(&g->lev[l]);
    chunk_bounds(g);
    if (g->levels > 1) { /* level 0's members of each aggregate (a counting sort: increasing rows) */
        const int nf = g->lev[0].A.n, na = g->lev[1].A.n;
        g->member_start = ids_grow(g->member_start, sizeof(int), (size_t)na + 1);
        g->member = ids_grow(g->member, sizeof(int), nf > 0 ? nf : 1);
        memset(g->member_start, 0, sizeof(int) * ((size_t)na + 1));
        for (int i = 0; i < nf; i++) g->member_start[g->lev[0].agg[i] + 1]++;
        for (int a = 0; a < na; a++) g->member_start[a + 1] += g->member_start[a];
        for (int i = 0; i < nf; i++) g->member[g->member_start[g->lev[0].agg[i]]++] = i;
        for (int a = na; a > 0; a--) g->member_start[a] = g->member_start[a - 1];
        g->member_start[0] = 0;
    }
    const int nc = g->lev[g->levels - 1].A.n;
    g->chol_n = nc <= COARSEST ? 3 * nc : 0; /* 0: the coarsest level is smoothed, not factored */
    if (g->chol_n) g->chol = ids_grow(g->chol, sizeof(double), g->chol_n * g->chol_n);
}

/* the hierarchy of another run of the same pattern (a snapshot's): levels, and the aggregates of
 * levels 0 .. levels - 2 (each lev[l].A.n entries, in 0 .. the next level's rows); the values come
 * with the next amg_update, as after amg_build. A hierarchy made from the values of an earlier step
 * is not the one these values would make, so a restored run keeps the one it had. */
void amg_adopt(amg *g, const bsr3 *A, int levels, const int *const *agg)
{
    g->lev[0].A = *A;
    if (levels > 0) hierarchy(g, levels, agg);
}

/* inverse of a 3x3 block (cofactors); a singular block gets the inverse of its diagonal */
static void inv3(const double *B, double *P)
{
    double c00 = B[4] * B[8] - B[5] * B[7], c01 = B[5] * B[6] - B[3] * B[8], c02 = B[3] * B[7] - B[4] * B[6];
    double det = B[0] * c00 + B[1] * c01 + B[2] * c02;
    if (!(fabs(det) > 1e-300)) {
        memset(P, 0, 9 * sizeof(double));
        for (int d = 0; d < 3; d++) P[4 * d] = fabs(B[4 * d]) > 1e-300 ? 1 / B[4 * d] : 0;
        return;
    }
    double id = 1 / det;
    P[0] = c00 * id, P[1] = (B[2] * B[7] - B[1] * B[8]) * id, P[2] = (B[1] * B[5] - B[2] * B[4]) * id;
    P[3] = c01 * id, P[4] = (B[0] * B[8] - B[2] * B[6]) * id, P[5] = (B[2] * B[3] - B[0] * B[5]) * id;
    P[6] = c02 * id, P[7] = (B[1] * B[6] - B[0] * B[7]) * id, P[8] = (B[0] * B[4] - B[1] * B[3]) * id;
}

/* what the per-step values of a level need from its pattern: room for the column-major copies of its
 * blocks and inverse diagonal blocks (and their pads), and each row's diagonal block index */
static void level_pattern(amg_level *L)
{
    const size_t need = bsr3_cm_size(L->A.nnz), need_d = bsr3_cm_size(L->A.n);
    if (need > L->cm_cap) {
        L->cm = ids_grow(L->cm, sizeof(double), need);
        L->cm_cap = need;
    }
    if (need_d > L->dinv_cm_cap) {
        L->dinv_cm = ids_grow(L->dinv_cm, sizeof(double), need_d);
        L->dinv_cm_cap = need_d;
    }
    if (L->A.n > L->dpos_cap) {
        L->dpos = ids_grow(L->dpos, sizeof(int), (size_t)L->A.n);
        L->dpos_cap = L->A.n;
    }
    L->cm[need - 1] = 0, L->dinv_cm[need_d - 1] = 0;
    for (int i = 0; i < L->A.n; i++) L->dpos[i] = bsr3_find(&L->A, i, i);
}

/* rows [r0, r1) of a level's values: the column-major copy of their blocks and, when the level is
 * smoothed, the inverses of their diagonal blocks (row-major and column-major) */
static void level_values(amg_level *L, bool smoothed, bool cm, int r0, int r1)
{
    const bsr3 *A = &L->A;
    if (cm) bsr3_cm_fill(A, L->cm, A->row_start[r0], A->row_start[r1]);
    if (!smoothed) return;
    for (int i = r0; i < r1; i++) {
        double *b = L->dinv + 9 * (size_t)i, *c = L->dinv_cm + 9 * (size_t)i;
        inv3(A->val + 9 * (size_t)L->dpos[i], b);
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) c[3 * q + r] = b[3 * r + q];
    }
}

typedef struct values_job {
    amg *g;
    bool smoothed, cm;
} values_job;

static void values_part(void *ctx, int chunk)
{
    const values_job *jb = ctx;
    level_values(&jb->g->lev[0], jb->smoothed, jb->cm, jb->g->split[chunk], jb->g->split[chunk + 1]);
}

static void fill_cm_part(void *ctx, int chunk)
{
    amg *g = ctx;
    const bsr3 *A = &g->lev[0].A;
    bsr3_cm_fill(A, g->lev[0].cm, A->row_start[g->split[chunk]], A->row_start[g->split[chunk + 1]]);
}

bool amg_fill_cm(amg *g, const bsr3 *A)
{
    if (g->levels == 0) return false;
    g->lev[0].A = *A;
    par_for(fill_cm_part, g, PAR_CHUNKS);
    g->cm_filled = true;
    return true;
}

void amg_update(amg *g, const bsr3 *A)
{
    g->lev[0].A = *A;
    if (g->levels == 0) hierarchy(g, 0, NULL);
    else
        for (int l = 0; l + 1 < g->levels; l++) {
            if (l == 0) {
                coarse_job jb = {g};
                par_for(coarse_part, &jb, PAR_CHUNKS);
            } else {
                coarse_values(&g->lev[l], &g->lev[l + 1], 0, g->lev[l + 1].A.nnz);
            }
        }
    for (int l = 0; l < g->levels; l++) {
        const bool smoothed = l + 1 < g->levels || !g->chol_n;
        if (l == 0) { /* (level 0's column-major copy serves the caller's products too) */
            values_job jb = {g, smoothed, !g->cm_filled};
            if (smoothed || jb.cm) par_for(values_part, &jb, PAR_CHUNKS);
        } else if (smoothed) {
            level_values(&g->lev[l], true, true, 0, g->lev[l].A.n);
        }
    }
    g->cm_filled = false;
    if (!g->chol_n) return;
    /* the coarsest level: dense, Cholesky A = L L^T (regularized if a pivot is not positive) */
    const bsr3 *Ac = &g->lev[g->levels - 1].A;
    const int nd = 3 * Ac->n;
    double *Lm = g->chol;
    memset(Lm, 0, sizeof(double) * (size_t)nd * nd);
    for (int i = 0; i < Ac->n; i++)
        for (int k = Ac->row_start[i]; k < Ac->row_start[i + 1]; k++)
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) Lm[(size_t)(3 * i + r) * nd + 3 * Ac->col[k] + c] = Ac->val[9 * (size_t)k + 3 * r + c];
    for (int j = 0; j < nd; j++) {
        double d = Lm[(size_t)j * nd + j];
        for (int k = 0; k < j; k++) d -= Lm[(size_t)j * nd + k] * Lm[(size_t)j * nd + k];
        double scale = fabs(Lm[(size_t)j * nd + j]);
        if (!(d > 1e-12 * scale) || !(d > 0)) d = scale > 0 ? scale : 1;
        d = sqrt(d);
        Lm[(size_t)j * nd + j] = d;
        for (int i = j + 1; i < nd; i++) {
            double s = Lm[(size_t)i * nd + j];
            for (int k = 0; k < j; k++) s -= Lm[(size_t)i * nd + k] * Lm[(size_t)j * nd + k];
            Lm[(size_t)i * nd + j] = s / d;
        }
    }
}

/* x_i = D_i^-1 (b_i - sum_{j != i} A_ij x_j) over rows [lo, hi), forward or backward. Columns outside
 * [lo, hi) read snap (the other half's values before the sweep), or count as 0 when from_zero: a
 * forward sweep from x = 0, where the blocks right of the diagonal meet zeros and are skipped. */
static void gs_sweep(const amg_level *L, bool forward, bool from_zero, int lo, int hi, const double *snap, double *delta)
{
    const bsr3 *A = &L->A;
    for (int t = lo; t < hi; t++) {
        int i = forward ? t : hi - 1 - (t - lo);
        imp_vec3 s = v3_load(L->b + 3 * i);
        for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++) {
            int j = A->col[k];
            if (j == i) continue;
            if (from_zero && j > i) break;
            const double *xj;
            if (j >= lo && j < hi) xj = L->x + 3 * j;
            else if (from_zero) continue;
            else xj = snap + 3 * j;
            s = v3_sub(s, b3_mul_v(A->val + 9 * (size_t)k, v3_load(xj)));
        }
        const imp_vec3 xi = b3_mul_v(L->dinv + 9 * (size_t)i, s);
        v3_store(L->x + 3 * i, xi);
        if (delta) v3_store(delta + 3 * i, v3_sub(xi, v3_load(snap + 3 * i)));
    }
}

/* A x after a chunked backward sweep of level 0 (amg_apply_product), over rows [lo, hi). The sweep
 * made row i's D_i x_i = b_i - sum_{stale} A_ij x'_j - sum_{fresh} A_ij x_j, where x' is x before
 * the sweep (snap), the fresh blocks are those right of the diagonal inside the chunk (their x_j
 * were already new) and the stale ones the rest: left of the diagonal, or outside the chunk. So
 *     (A x)_i = b_i + sum_{stale} A_ij (x_j - x'_j) = b_i + sum_{stale} A_ij delta_j
 * with delta = x - x' from the sweep: about half of a product, in the row's column order. */
static void sweep_product(const amg_level *L, int lo, int hi, const double *delta, double *az)
{
    const bsr3 *A = &L->A;
    for (int i = lo; i < hi; i++) {
        imp_vec3 s = v3_load(L->b + 3 * i);
        for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++) {
            const int j = A->col[k];
            if (j >= i && j < hi) continue;
            s = v3_add(s, b3_mul_v(A->val + 9 * (size_t)k, v3_load(delta + 3 * j)));
        }
        v3_store(az + 3 * i, s);
    }
}

/* r = b - A x over rows [lo, hi) after a forward sweep from zero on [lo, hi): the sweep made
 * b_i - sum_{lo<=j<=i} A_ij x_j vanish, so r_i = -sum_{j>i} A_ij x_j - sum_{j<lo} A_ij x_j */
static void upper_residual(const amg_level *L, int lo, int hi)
{
    const bsr3 *A = &L->A;
    for (int i = lo; i < hi; i++) {
        imp_vec3 s = v3(0, 0, 0);
        for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++) {
            int j = A->col[k];
            if (j >= lo && j <= i) continue;
            s = v3_sub(s, b3_mul_v(A->val + 9 * (size_t)k, v3_load(L->x + 3 * j)));
        }
        v3_store(L->r + 3 * i, s);
    }
}

#if SPARSE_HAVE_AVX
/* gs_sweep and upper_residual from a level's column-major copies: the same operations in the same
 * order, as vector code (sparse_simd.h) */
static inline __attribute__((always_inline)) SPARSE_AVX void gs_sweep_cm(const amg_level *L, bool forward, bool from_zero,
                                                                          int lo, int hi, const double *snap, bool chunked,
                                                                          double *delta)
{
    const bsr3 *A = &L->A;
    const int *col = A->col;
    const double *cm = L->cm;
    double *x = L->x;
    for (int t = lo; t < hi; t++) {
        const int i = forward ? t : hi - 1 - (t - lo);
        const int rs = A->row_start[i], re = A->row_start[i + 1], kd = L->dpos[i];
        /* the row's blocks in column order: [rs, k_lo) left of the chunk, [k_lo, kd) inside and left
         * of the diagonal, (kd, k_hi) inside and right of it, [k_hi, re) right of the chunk (level
         * 0's chunks: chunk_bounds; a whole level: every block is inside) */
        const int k_lo = chunked ? L->klo[i] : rs, k_hi = chunked ? L->khi[i] : re;
        __m256d s = sparse_load3(L->b + 3 * (size_t)i);
        if (!from_zero)
            for (int k = rs; k < k_lo; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, snap + 3 * (size_t)col[k]));
        for (int k = k_lo; k < kd; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, x + 3 * (size_t)col[k]));
        if (!from_zero) {
            for (int k = kd + 1; k < k_hi; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, x + 3 * (size_t)col[k]));
            for (int k = k_hi; k < re; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, snap + 3 * (size_t)col[k]));
        }
        double sv[4];
        _mm256_storeu_pd(sv, s);
        const __m256d xi = sparse_cm_mul(L->dinv_cm + 9 * (size_t)i, sv);
        sparse_store3(x + 3 * (size_t)i, xi);
        if (delta) sparse_store3(delta + 3 * (size_t)i, _mm256_sub_pd(xi, sparse_load3(snap + 3 * (size_t)i)));
    }
}

static SPARSE_AVX void sweep_product_cm(const amg_level *L, int lo, int hi, const double *delta, double *az)
{
    const bsr3 *A = &L->A;
    const int *col = A->col;
    const double *cm = L->cm;
    for (int i = lo; i < hi; i++) {
        const int rs = A->row_start[i], re = A->row_start[i + 1], kd = L->dpos[i], k_hi = L->khi[i];
        __m256d s = sparse_load3(L->b + 3 * (size_t)i);
        for (int k = rs; k < kd; k++) s = _mm256_add_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, delta + 3 * (size_t)col[k]));
        for (int k = k_hi; k < re; k++) s = _mm256_add_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, delta + 3 * (size_t)col[k]));
        sparse_store3(az + 3 * (size_t)i, s);
    }
}

static inline __attribute__((always_inline)) SPARSE_AVX void upper_residual_cm(const amg_level *L, int lo, int hi,
                                                                                bool chunked)
{
    const bsr3 *A = &L->A;
    const int *col = A->col;
    const double *cm = L->cm, *x = L->x;
    for (int i = lo; i < hi; i++) {
        const int rs = A->row_start[i], re = A->row_start[i + 1], kd = L->dpos[i];
        const int k_lo = chunked ? L->klo[i] : rs;
        __m256d s = _mm256_setzero_pd();
        for (int k = rs; k < k_lo; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, x + 3 * (size_t)col[k]));
        for (int k = kd + 1; k < re; k++) s = _mm256_sub_pd(s, sparse_cm_mul(cm + 9 * (size_t)k, x + 3 * (size_t)col[k]));
        sparse_store3(L->r + 3 * (size_t)i, s);
    }
}

/* the sweeps and residuals the V-cycle runs, each compiled with its flags constant (the same code) */
static SPARSE_AVX void chunk_forward_cm(const amg_level *L, int lo, int hi)
{
    gs_sweep_cm(L, true, true, lo, hi, NULL, true, NULL);
}
static SPARSE_AVX void chunk_backward_cm(const amg_level *L, int lo, int hi, const double *snap)
{
    gs_sweep_cm(L, false, false, lo, hi, snap, true, NULL);
}
static SPARSE_AVX void chunk_backward_delta_cm(const amg_level *L, int lo, int hi, const double *snap, double *delta)
{
    gs_sweep_cm(L, false, false, lo, hi, snap, true, delta);
}
static SPARSE_AVX void chunk_residual_cm(const amg_level *L, int lo, int hi) { upper_residual_cm(L, lo, hi, true); }
static SPARSE_AVX void level_sweep_cm(const amg_level *L, bool forward, bool from_zero)
{
    if (forward && from_zero) gs_sweep_cm(L, true, true, 0, L->A.n, NULL, false, NULL);
    else if (forward) gs_sweep_cm(L, true, false, 0, L->A.n, NULL, false, NULL);
    else gs_sweep_cm(L, false, from_zero, 0, L->A.n, NULL, false, NULL);
}
static SPARSE_AVX void level_residual_cm(const amg_level *L) { upper_residual_cm(L, 0, L->A.n, false); }
#endif

/* the finest level's smoothing, chunk by chunk */
typedef struct sweep_job {
    const amg *g;
    const amg_level *L; /* level 0, with the caller's vectors (amg_apply) */
    int phase; /* 0: forward from zero, 1: residual, 2: backward, 3: restriction, 4: prolongation,
                * 5: A x after the backward sweep (sweep_product) */
    double *az; /* phase 2: keep delta for phase 5 when not NULL; phase 5: A x into it */
} sweep_job;

/* level 1's right side b_I = sum of r_i over the members i of aggregate I, over the aggregates of a
 * chunk: each sum from zero in increasing i, as a pass over the rows adding r_i into b_agg(i) makes it */
static void restrict_part(const amg *g, const amg_level *L, int chunk)
{
    const amg_level *C = &g->lev[1];
    int a0, a1;
    par_range(C->A.n, chunk, &a0, &a1);
    for (int a = a0; a < a1; a++) {
        double s0 = 0, s1 = 0, s2 = 0;
        for (int m = g->member_start[a]; m < g->member_start[a + 1]; m++) {
            const double *ri = L->r + 3 * g->member[m];
            s0 += ri[0], s1 += ri[1], s2 += ri[2];
        }
        C->b[3 * a] = s0, C->b[3 * a + 1] = s1, C->b[3 * a + 2] = s2;
    }
}

/* x += P x_c on a chunk's rows, and the snapshot of x the backward sweep reads across chunks */
static void prolong_part(const amg *g, const amg_level *L, int lo, int hi)
{
    const double *cxs = g->lev[1].x;
    for (int i = lo; i < hi; i++) {
        const double *cx = cxs + 3 * L->agg[i];
        double *xi = L->x + 3 * i, *si = g->snap + 3 * i;
        xi[0] += cx[0], xi[1] += cx[1], xi[2] += cx[2];
        si[0] = xi[0], si[1] = xi[1], si[2] = xi[2];
    }
}

static void sweep_part(void *ctx, int chunk)
{
    const sweep_job *jb = ctx;
    const amg *g = jb->g;
    const amg_level *L = jb->L;
    int lo = g->split[chunk], hi = g->split[chunk + 1];
    if (jb->phase == 3) {
        restrict_part(g, L, chunk);
        return;
    }
    if (jb->phase == 4) {
        prolong_part(g, L, lo, hi);
        return;
    }
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        if (jb->phase == 0) chunk_forward_cm(L, lo, hi);
        else if (jb->phase == 1) chunk_residual_cm(L, lo, hi);
        else if (jb->phase == 5) sweep_product_cm(L, lo, hi, g->delta, jb->az);
        else if (jb->az) chunk_backward_delta_cm(L, lo, hi, g->snap, g->delta);
        else chunk_backward_cm(L, lo, hi, g->snap);
        return;
    }
#endif
    if (jb->phase == 0) gs_sweep(L, true, true, lo, hi, NULL, NULL);
    else if (jb->phase == 1) upper_residual(L, lo, hi);
    else if (jb->phase == 5) sweep_product(L, lo, hi, g->delta, jb->az);
    else gs_sweep(L, false, false, lo, hi, g->snap, jb->az ? g->delta : NULL);
}

/* a whole coarser level (one chunk): its sweep and residual, as vector code where AVX is there */
static void level_sweep(const amg_level *L, bool forward, bool from_zero)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        level_sweep_cm(L, forward, from_zero);
        return;
    }
#endif
    gs_sweep(L, forward, from_zero, 0, L->A.n, NULL, NULL);
}

static void level_residual(const amg_level *L)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        level_residual_cm(L);
        return;
    }
#endif
    upper_residual(L, 0, L->A.n);
}

/* one V-cycle from level l down; L is level l (level 0: a copy with the caller's b and x); az: level
 * 0 of two or more levels only, A x into it, else NULL */
static void vcycle(const amg *g, int l, const amg_level *L, double *az)
{
    const int n = L->A.n;
    if (l == g->levels - 1 && !g->chol_n) {
        /* too large to factor: two symmetric Gauss-Seidel sweeps (forward from zero, backward, forward, backward) */
        level_sweep(L, true, true);
        level_sweep(L, false, false);
        level_sweep(L, true, false);
        level_sweep(L, false, false);
        return;
    }
    if (l == g->levels - 1) {
        /* dense: L y = b, L^T x = y */
        const int nd = g->chol_n;
        const double *Lm = g->chol;
        double *x = L->x;
        memcpy(x, L->b, sizeof(double) * (size_t)nd);
        for (int i = 0; i < nd; i++) {
            double s = x[i];
            for (int k = 0; k < i; k++) s -= Lm[(size_t)i * nd + k] * x[k];
            x[i] = s / Lm[(size_t)i * nd + i];
        }
        for (int i = nd - 1; i >= 0; i--) {
            double s = x[i];
            for (int k = i + 1; k < nd; k++) s -= Lm[(size_t)k * nd + i] * x[k];
            x[i] = s / Lm[(size_t)i * nd + i];
        }
        return;
    }
    sweep_job jb = {g, L, 0, NULL};
    if (l == 0) {
        par_for(sweep_part, &jb, PAR_CHUNKS);
        jb.phase = 1;
        par_for(sweep_part, &jb, PAR_CHUNKS);
    } else {
        level_sweep(L, true, true);
        level_residual(L);
    }
    const amg_level *C = &g->lev[l + 1];
    if (l == 0) {
        jb.phase = 3;
        par_for(sweep_part, &jb, PAR_CHUNKS);
    } else {
        memset(C->b, 0, 3 * sizeof(double) * (size_t)C->A.n);
        for (int i = 0; i < n; i++) {
            double *cb = C->b + 3 * L->agg[i];
            const double *ri = L->r + 3 * i;
            cb[0] += ri[0], cb[1] += ri[1], cb[2] += ri[2];
        }
    }
    vcycle(g, l + 1, C, NULL);
    if (l == 0) {
        jb.phase = 4;
        par_for(sweep_part, &jb, PAR_CHUNKS);
        jb.phase = 2, jb.az = az;
        par_for(sweep_part, &jb, PAR_CHUNKS);
        if (az) {
            jb.phase = 5;
            par_for(sweep_part, &jb, PAR_CHUNKS);
        }
    } else {
        for (int i = 0; i < n; i++) {
            const double *cx = C->x + 3 * L->agg[i];
            double *xi = L->x + 3 * i;
            xi[0] += cx[0], xi[1] += cx[1], xi[2] += cx[2];
        }
        level_sweep(L, false, false);
    }
}

void amg_apply(const amg *g, const double *r, double *z)
{
    /* level 0 smooths straight from r (only read) into z: its own b and x are not used */
    amg_level L0 = g->lev[0];
    L0.b = (double *)r, L0.x = z;
    vcycle(g, 0, &L0, NULL);
}

bool amg_apply_product(const amg *g, const double *r, double *z, double *az)
{
    amg_level L0 = g->lev[0];
    L0.b = (double *)r, L0.x = z;
    const bool product = g->levels > 1;
    vcycle(g, 0, &L0, product ? az : NULL);
    return product;
}

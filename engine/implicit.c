/* implicit.c: linearized backward Euler for stiff systems (S3 "Implicit methods"; Baraff and
 * Witkin, "Large steps in cloth simulation", 1998).
 *
 * Backward Euler evaluates the derivative where the step lands, X1 = X0 + h f(X1), and linearizes
 * f about X0 (S3 eq. 3-2). For particles, x'' = M^-1 f(x, v), the 2n x 2n system reduces to one
 * n x n system in the velocity change (S3 eq. 4-5, written with M on the left so that the
 * Jacobians are those of forces, not accelerations: GUIDE.md trap 6):
 *
 *     (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0),        dx = h (v0 + dv)
 *
 * A = M - h D - h^2 K is block sparse (3x3 blocks, one block row per particle, a block wherever two
 * particles share a force element), built once per topology and refilled every step. It is
 * symmetric positive definite (see implicit.h for which stiffness terms keep it so), and is solved
 * by the filtered preconditioned conjugate gradient of cg.c. The filter S is Baraff and Witkin's:
 * a particle's velocity change is prescribed in the directions S removes,
 *
 *     fixed or kinematic particle       S_i = 0,             dv_i = 0
 *     resting contact, sliding          S_i = I - n n^T,     n . (v0 + dv - u) = 0
 *     resting contact, sticking         S_i = 0,             v0 + dv = u
 *
 * (u: the surface's velocity at the contact, a body's as the step starts; a collider's is zero)
 *
 * so pinned cloth needs no huge masses, and cloth lies on a collider without jitter. Whether a
 * resting contact holds is decided from the force at the start of the step (it must push into the
 * surface), and it sticks when it is not sliding and that force is inside the friction cone.
 * After the solve each contact's constraint impulse j = (A dv - b)_i is checked: a contact whose
 * normal impulse pulls is released, a sticking one whose tangential impulse exceeds mu j_n slides,
 * and the system is solved again (up to three solves). Coulomb friction then takes at most mu j_n
 * off a sliding particle's tangential momentum. Each contact's impulse on the particle goes back to
 * particle_collide.c (a body takes the opposite: particle_contact.c). Force fields (Lua callbacks)
 * have no Jacobian: they are explicit forces in f0, evaluated at the start of the step.
 *
 * The same file holds imp_world_jacobian_check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "assemble.h"
#include "cg.h"
#include "cloth.h"
#include "collider.h"
#include "forces.h"
#include "ids.h"
#include "imp_math.h"
#include "implicit.h"
#include "parallel.h"
#include "particle_collide.h"
#include "particles.h"
#include "sparse.h"
#include "step.h"
#include "world_parts.h"

#define STICK_SPEED 1e-3         /* m/s: a resting contact slower than this may stick */
enum { CONTACT_OFF, CONTACT_SLIDE, CONTACT_STICK };

imp_implicit_settings imp_implicit_settings_default(void)
{
    imp_implicit_settings s;
    s.cg_tolerance = 1e-2;
    s.cg_max_iterations = 200;
    s.full_jacobian = false;
    return s;
}

static implicit_state *state_get(imp_world *w)
{
    if (!w->implicit) {
        w->implicit = calloc(1, sizeof(implicit_state));
        if (!w->implicit) abort();
        w->implicit->set = imp_implicit_settings_default();
    }
    return w->implicit;
}

imp_implicit_settings imp_world_implicit(const imp_world *w)
{
    return w->implicit ? w->implicit->set : imp_implicit_settings_default();
}

void imp_world_set_implicit(imp_world *w, const imp_implicit_settings *s)
{
    implicit_state *st = state_get(w);
    st->set = *s;
    if (!(st->set.cg_tolerance > 0)) st->set.cg_tolerance = 1e-2;
    if (st->set.cg_max_iterations < 1) st->set.cg_max_iterations = 1;
}

void implicit_free(imp_world *w)
{
    implicit_state *st = w->implicit;
    if (!st) return;
    bsr3_free(&st->A);
    free(st->diag), free(st->tpos), free(st->pairs);
    for (int c = 0; c < PAR_CHUNKS; c++) free(st->undo[c].at), free(st->undo[c].val);
    free(st->f), free(st->bK), free(st->b), free(st->y), free(st->z), free(st->dv), free(st->tmp), free(st->inv_m2), free(st->near);
    free(st->filter_kind), free(st->filter_normal), free(st->filtered), free(st->filtered_rows), free(st->contact_kind),
        free(st->contact_impulse);
    cg_work_free(&st->cg);
    amg_free(&st->mg);
    free(st);
    w->implicit = NULL;
}

/* ---- the pattern ------------------------------------------------------------------------------------- */

static void reserve(implicit_state *st, int n)
{
    if (n <= st->cap) return;
    int cap = st->cap ? st->cap : 64;
    while (cap < n) cap *= 2;
    double **vecs[] = {&st->f, &st->bK, &st->b, &st->y, &st->z, &st->dv, &st->tmp};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) *vecs[k] = ids_grow(*vecs[k], 3 * sizeof(double), cap);
    st->diag = ids_grow(st->diag, sizeof(int), cap);
    st->inv_m2 = ids_grow(st->inv_m2, sizeof(double), cap);
    st->near = ids_grow(st->near, 1, cap);
    st->filter_kind = ids_grow(st->filter_kind, 1, cap);
    st->filter_normal = ids_grow(st->filter_normal, 6 * sizeof(double), cap);
    st->filtered = ids_grow(st->filtered, sizeof(int), cap);
    st->filtered_rows = ids_grow(st->filtered_rows, sizeof(int), cap);
    memset(st->dv + 3 * (size_t)st->cap, 0, 3 * sizeof(double) * (size_t)(cap - st->cap));
    st->cap = cap;
}

/* which blocks exist: the diagonal, and every pair of particles that share a force element */
static void rebuild(imp_world *w, implicit_state *st)
{
    const int n = w->particles->ids.count;
    int count = 0;
    forces_pairs(w, &st->pairs, &count, &st->pair_cap);
    cloth_pairs(w, &st->pairs, &count, &st->pair_cap);
    bsr3_build(&st->A, n, st->pairs, count);
    for (int i = 0; i < n; i++) st->diag[i] = bsr3_find(&st->A, i, i);
    if (st->A.nnz > st->tpos_cap) {
        st->tpos_cap = st->A.nnz;
        st->tpos = ids_grow(st->tpos, sizeof(int), st->tpos_cap);
    }
    for (int i = 0; i < n; i++)
        for (int k = st->A.row_start[i]; k < st->A.row_start[i + 1]; k++) st->tpos[k] = bsr3_find(&st->A, st->A.col[k], i);

    forces_bind_blocks(w, &st->A, st->diag);
    /* the row ranges of the parallel chunks: about the same number of blocks in each */
    for (int c = 0, i = 0; c <= PAR_CHUNKS; c++) {
        while (i < n && (long)st->A.row_start[i] * PAR_CHUNKS < (long)st->A.nnz * c) i++;
        st->split[c] = c == PAR_CHUNKS ? n : i;
    }
    cloth_bind_blocks(w, &st->A, st->split);
    amg_build(&st->mg, &st->A, st->split);
    memset(st->dv, 0, 3 * sizeof(double) * (size_t)n); /* dense indices moved: no warm start */
    st->topology = w->particles->topology;
    st->n = n;
    st->built = true;
}

/* the pattern for the particles and force objects as they are (a restored snapshot's: snapshot.c) */
bool implicit_current(const imp_world *w)
{
    const implicit_state *st = w->implicit;
    return st && st->built && st->topology == w->particles->topology && st->n == w->particles->ids.count;
}

void implicit_rebuild(imp_world *w)
{
    implicit_state *st = state_get(w);
    reserve(st, w->particles->ids.count);
    rebuild(w, st);
}

/* ---- the filter -------------------------------------------------------------------------------------- */

/* x_i = S_i x_i */
static inline void filter_one(const implicit_state *st, int i, double *x)
{
    double *xi = x + 3 * i;
    if (st->filter_kind[i] == 1) {
        xi[0] = xi[1] = xi[2] = 0;
        return;
    }
    for (int c = 0; c < st->filter_kind[i] - 1; c++) {
        const double *nv = st->filter_normal + 6 * i + 3 * c;
        double d = xi[0] * nv[0] + xi[1] * nv[1] + xi[2] * nv[2];
        xi[0] -= d * nv[0], xi[1] -= d * nv[1], xi[2] -= d * nv[2];
    }
}

/* x = S x: remove the prescribed directions of every constrained particle */
static void filter_apply(void *ctx, double *x)
{
    const implicit_state *st = ctx;
    for (int k = 0; k < st->nfiltered; k++) filter_one(st, st->filtered[k], x);
}

/* the same on the rows of one parallel chunk */
static void filter_apply_part(void *ctx, double *x, int chunk)
{
    const implicit_state *st = ctx;
    for (int k = st->filtered_chunk[chunk]; k < st->filtered_chunk[chunk + 1]; k++) filter_one(st, st->filtered_rows[k], x);
}

/* the stopping test's norm: the largest velocity a residual momentum gives one particle,
 * max_i |r_i| / m_i, so that no particle is left with a large error because others dominate a sum;
 * over the entries [lo, hi) (whole particles: CG's chunks are 3 times the rows' split) */
static double velocity_norm_part(void *ctx, const double *r, int lo, int hi)
{
    const implicit_state *st = ctx;
    double worst = 0;
    for (int i = lo / 3; i < hi / 3; i++) {
        const double *ri = r + 3 * i;
        double e = (ri[0] * ri[0] + ri[1] * ri[1] + ri[2] * ri[2]) * st->inv_m2[i];
        if (e > worst) worst = e; /* (fmax's result, NaN skipped, without a call) */
    }
    return sqrt(worst);
}

static void multigrid(void *ctx, const double *r, double *s)
{
    const implicit_state *st = ctx;
    amg_apply(&st->mg, r, s);
}

/* the same, with A s from the V-cycle's last sweep (cg.h, precond_product). Only while every filtered
 * particle is held whole (S_i = 0): its row of the filtered matrix is c I and of r zero, so every sweep
 * leaves its s_i = 0, and S s = s as CG's recurrence needs. */
static int multigrid_product(void *ctx, const double *r, double *s, double *as)
{
    const implicit_state *st = ctx;
    return amg_apply_product(&st->mg, r, s, as);
}

typedef struct mul_job {
    const implicit_state *st;
    const double *cm; /* the blocks column-major (bsr3_mul_rows_cm), or NULL: A's own */
    const double *x;
    double *y;
} mul_job;

static void matrix_mul_part(void *ctx, int chunk)
{
    const mul_job *jb = ctx;
    const implicit_state *st = jb->st;
    if (jb->cm) bsr3_mul_rows_cm(&st->A, jb->cm, jb->x, jb->y, st->split[chunk], st->split[chunk + 1]);
    else bsr3_mul_rows(&st->A, jb->x, jb->y, st->split[chunk], st->split[chunk + 1]);
}

static void matrix_mul(void *ctx, const double *x, double *y)
{
    mul_job jb = {ctx, NULL, x, y};
    par_for(matrix_mul_part, &jb, PAR_CHUNKS);
}

/* the products of the conjugate gradient once the multigrid's column-major copy holds this matrix
 * (amg_fill_cm, amg_update): from that copy (the same bits as matrix_mul) */
static void matrix_mul_solve(void *ctx, const double *x, double *y)
{
    const implicit_state *st = ctx;
    mul_job jb = {st, st->mg.lev[0].cm, x, y};
    par_for(matrix_mul_part, &jb, PAR_CHUNKS);
}

/* Build S and z: fixed and kinematic particles keep their velocity (z = 0); a particle in an active
 * resting contact gets its normal velocity zeroed, z = -(n . v0) n per normal (Gram-Schmidt
 * orthonormalized; three or more normals stop it). Returns whether any z is nonzero. */
static bool filter_build(imp_world *w, implicit_state *st, const double *v0)
{
    const int n = w->particles->ids.count;
    st->nfiltered = 0;
    for (int i = 0; i < n; i++) {
        st->filter_kind[i] = w->particles->motion[i] == IMP_DYNAMIC ? 0 : 1;
        if (st->filter_kind[i]) st->filtered[st->nfiltered++] = i;
    }
    memset(st->z, 0, 3 * sizeof(double) * (size_t)n);
    bool any = false;
    for (int k = 0; k < w->pcontacts->count; k++) {
        if (st->contact_kind[k] == CONTACT_OFF) continue;
        int i = w->pcontacts->contact[k].particle;
        if (st->filter_kind[i] == 1) continue;
        if (st->contact_kind[k] == CONTACT_STICK) { /* static friction: stop it (on the surface) */
            if (st->filter_kind[i] == 0) st->filtered[st->nfiltered++] = i;
            st->filter_kind[i] = 1;
            v3_store(st->z + 3 * i, v3_scale(pcollide_contact_relative(w, k, v0), -1));
            any = true;
            continue;
        }
        imp_vec3 N = pcollide_contact_normal(w, k);
        for (int c = 0; c < st->filter_kind[i] - 1; c++) {
            imp_vec3 prev = v3_load(st->filter_normal + 6 * i + 3 * c);
            N = v3_mad(N, prev, -v3_dot(N, prev));
        }
        double len = v3_len(N);
        if (len < 1e-6) continue; /* parallel to a normal it already has */
        N = v3_scale(N, 1.0 / len);
        if (st->filter_kind[i] == 0) {
            st->filter_kind[i] = 2;
            st->filtered[st->nfiltered++] = i;
        } else if (st->filter_kind[i] == 2) {
            st->filter_kind[i] = 3;
        } else {
            st->filter_kind[i] = 1; /* a third independent normal: no free direction left */
            v3_store(st->z + 3 * i, v3_scale(pcollide_contact_relative(w, k, v0), -1));
            any = true;
            continue;
        }
        v3_store(st->filter_normal + 6 * i + 3 * (st->filter_kind[i] - 2), N);
        imp_vec3 vi = pcollide_contact_relative(w, k, v0); /* relative to the surface */
        v3_accum(st->z + 3 * i, v3_scale(N, -v3_dot(N, vi)));
        any = true;
    }
    /* the filtered particles in row order, cut at the parallel chunks */
    int m = 0;
    for (int c = 0; c < PAR_CHUNKS; c++) {
        st->filtered_chunk[c] = m;
        for (int i = st->split[c]; i < st->split[c + 1]; i++)
            if (st->filter_kind[i]) st->filtered_rows[m++] = i;
    }
    st->filtered_chunk[PAR_CHUNKS] = m;
    return any;
}

/* S_i as a 3x3 matrix */
static void filter_matrix(const implicit_state *st, int i, double *S)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(S, I3, sizeof I3);
    if (st->filter_kind[i] == 1) {
        memset(S, 0, 9 * sizeof(double));
        return;
    }
    for (int c = 0; c < st->filter_kind[i] - 1; c++) {
        const imp_vec3 nv = v3_load(st->filter_normal + 6 * (size_t)i + 3 * c);
        b3_add_outer(S, nv, nv, -1);
    }
}

static void undo_push(implicit_state *st, struct implicit_undo *u, int k)
{
    if (u->count == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 256;
        u->at = ids_grow(u->at, sizeof(int), u->cap);
        u->val = ids_grow(u->val, 9 * sizeof(double), u->cap);
    }
    u->at[u->count] = k;
    memcpy(u->val + 9 * (size_t)u->count, st->A.val + 9 * (size_t)k, 9 * sizeof(double));
    u->count++;
}

/* B = L B R for 3x3 blocks (L or R NULL: identity) */
static void block_sandwich(double *B, const double *Lm, const double *Rm)
{
    double T[9];
    if (Rm) {
        b3_mul(B, Rm, T);
        memcpy(B, T, sizeof T);
    }
    if (Lm) {
        b3_mul(Lm, B, T);
        memcpy(B, T, sizeof T);
    }
}

/* A -> S A S + (I - S) c in place, c = tr(A_ii) / 3 on each constrained particle: the same matrix on
 * the free directions (so CG is unchanged), and one whose multigrid hierarchy knows that pinned
 * particles are pinned. The changed blocks go to the undo log of the chunk. Each block is changed by
 * one filtered particle alone (its row's, or for a free row j the block (j, i) by i) from its own
 * values and its row's diagonal block, so the chunks of the filtered list run in parallel. */
static void matrix_filter_part(void *ctx, int chunk)
{
    implicit_state *st = ctx;
    struct implicit_undo *u = &st->undo[chunk];
    u->count = 0;
    int q0, q1;
    par_range(st->nfiltered, chunk, &q0, &q1);
    double Si[9], Sj[9];
    for (int q = q0; q < q1; q++) {
        int i = st->filtered[q];
        const bool pinned = st->filter_kind[i] == 1; /* S_i = 0: row and column i vanish, no 3 x 3 products */
        if (!pinned) filter_matrix(st, i, Si);
        for (int k = st->A.row_start[i]; k < st->A.row_start[i + 1]; k++) {
            int j = st->A.col[k];
            double *B = st->A.val + 9 * (size_t)k;
            undo_push(st, u, k);
            if (j == i) {
                double c = (B[0] + B[4] + B[8]) / 3;
                if (pinned) {
                    memset(B, 0, 9 * sizeof(double));
                    B[0] = B[4] = B[8] = c;
                } else {
                    block_sandwich(B, Si, Si);
                    for (int e = 0; e < 9; e++) B[e] += c * ((e % 4 == 0) - Si[e]);
                }
                continue;
            }
            bool jc = st->filter_kind[j] != 0;
            if (pinned) memset(B, 0, 9 * sizeof(double));
            else {
                if (jc) filter_matrix(st, j, Sj);
                block_sandwich(B, Si, jc ? Sj : NULL);
            }
            if (!jc) { /* the transpose block in the free row j: A_ji S_i */
                int kt = st->tpos[k];
                double *Bt = st->A.val + 9 * (size_t)kt;
                undo_push(st, u, kt);
                if (pinned) memset(Bt, 0, 9 * sizeof(double));
                else block_sandwich(Bt, NULL, Si);
            }
        }
    }
}

static void matrix_filter(implicit_state *st)
{
    par_for(matrix_filter_part, st, PAR_CHUNKS);
}

static void matrix_unfilter_part(void *ctx, int chunk)
{
    implicit_state *st = ctx;
    struct implicit_undo *u = &st->undo[chunk];
    for (int e = 0; e < u->count; e++) memcpy(st->A.val + 9 * (size_t)u->at[e], u->val + 9 * (size_t)e, 9 * sizeof(double));
    u->count = 0;
}

static void matrix_unfilter(implicit_state *st)
{
    par_for(matrix_unfilter_part, st, PAR_CHUNKS);
}

/* (A x)_i for one block row */
static imp_vec3 row_mul(const bsr3 *A, int i, const double *x)
{
    imp_vec3 y = v3(0, 0, 0);
    for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++)
        y = v3_add(y, b3_mul_v(A->val + 9 * (size_t)k, v3_load(x + 3 * A->col[k])));
    return y;
}

/* The multigrid's values for the filtered matrix, made when CG first needs its preconditioner (a
 * solve whose start already passes the test needs none); CG's products run from the multigrid's
 * column-major copy of the matrix (the same bits as the row-major product), which solve() makes
 * first and amg_update keeps, or (before the first update has made the hierarchy) from A itself. */
static void solve_prepare(void *ctx)
{
    implicit_state *st = ctx;
    amg_update(&st->mg, &st->A);
    st->mg_current = true;
}

static void matrix_mul_cg(void *ctx, const double *x, double *y)
{
    const implicit_state *st = ctx;
    if (st->mg_current) matrix_mul_solve(ctx, x, y);
    else matrix_mul(ctx, x, y);
}

/* rhs = b - A z. z is nonzero only on constrained particles, so only the rows that have a block in
 * the column of one of them change; each such row's product is row_mul's, the same operations in
 * the same order as bsr3_mul's (the zero columns it skips add nothing). The rows in parallel chunks. */
typedef struct rhs_job {
    implicit_state *st;
    double *rhs;
} rhs_job;

static void rhs_part(void *ctx, int chunk)
{
    const rhs_job *jb = ctx;
    const implicit_state *st = jb->st;
    const int lo = st->split[chunk], hi = st->split[chunk + 1];
    memcpy(jb->rhs + 3 * (size_t)lo, st->b + 3 * (size_t)lo, 3 * sizeof(double) * (size_t)(hi - lo));
    for (int i = lo; i < hi; i++) {
        if (!st->near[i]) continue;
        imp_vec3 az = row_mul(&st->A, i, st->z);
        double *ri = jb->rhs + 3 * i;
        ri[0] -= az.x, ri[1] -= az.y, ri[2] -= az.z;
    }
}

static void rhs_minus_az(implicit_state *st, int n, double *rhs)
{
    memset(st->near, 0, (size_t)n);
    for (int q = 0; q < st->nfiltered; q++) {
        int i = st->filtered[q];
        const double *zi = st->z + 3 * i;
        if (zi[0] == 0 && zi[1] == 0 && zi[2] == 0) continue;
        for (int k = st->A.row_start[i]; k < st->A.row_start[i + 1]; k++) st->near[st->A.col[k]] = 1;
    }
    rhs_job jb = {st, rhs};
    par_for(rhs_part, &jb, PAR_CHUNKS);
}

/* solve A dv = b with the filter: dv = z + y, S y = y, A y = b - A z. The start is the last solve's
 * dv, when it is a better start than 0 (cg.h, warm_check): CG minimizes phi(y) = y^T A y / 2 - rhs^T y, phi(0) = 0, and
 * a start that merely passes the tolerance would otherwise be kept (a cloth at rest would keep the
 * last step's velocity change). */
static cg_result solve(implicit_state *st, int n, bool has_z, double abs_tol)
{
    const int n3 = 3 * n;
    double *rhs = st->b;
    if (has_z) {
        rhs_minus_az(st, n, st->tmp);
        rhs = st->tmp;
    }
    memcpy(st->y, st->dv, sizeof(double) * (size_t)n3);
    matrix_filter(st);
    /* CG's products from the column-major copy from the start (the multigrid's update keeps it) */
    st->mg_current = amg_fill_cm(&st->mg, &st->A);
    int chunks[PAR_CHUNKS + 1];
    for (int c = 0; c <= PAR_CHUNKS; c++) chunks[c] = 3 * st->split[c];
    cg_problem p = {.n = n3, .ctx = st, .mul = matrix_mul_cg, .filter = st->nfiltered ? filter_apply : NULL,
                    .tol = st->set.cg_tolerance, .max_iter = st->set.cg_max_iterations, .abs_tol = abs_tol,
                    .precond_apply = multigrid, .warm_check = 1, .prepare = solve_prepare, .chunks = chunks,
                    .norm_part = velocity_norm_part, .filter_part = filter_apply_part};
    bool whole = true; /* every filtered particle held in all directions */
    for (int q = 0; q < st->nfiltered && whole; q++) whole = st->filter_kind[st->filtered[q]] == 1;
    if (whole) p.precond_product = multigrid_product;
    cg_result r = cg_solve(&p, st->y, rhs, &st->cg);
    matrix_unfilter(st);
    for (int e = 0; e < n3; e++) st->dv[e] = st->z[e] + st->y[e];
    return r;
}

/* ---- the step ---------------------------------------------------------------------------------------- */

typedef struct asm_job {
    imp_world *w;
    implicit_state *st;
    asm_ctx *a;
} asm_job;

/* one chunk of the rows: zero them, the per-particle forces, M - h (-kd I) on the diagonal, and
 * the cloth elements whose particles all lie in this chunk */
static void assemble_part(void *ctx, int chunk)
{
    asm_job *jb = ctx;
    imp_world *w = jb->w;
    implicit_state *st = jb->st;
    const int lo = st->split[chunk], hi = st->split[chunk + 1];
    const bsr3 *A = &st->A;
    size_t b0 = (size_t)A->row_start[lo], b1 = (size_t)A->row_start[hi];
    memset(A->val + 9 * b0, 0, 9 * sizeof(double) * (b1 - b0));
    memset(st->bK + 3 * (size_t)lo, 0, 3 * sizeof(double) * (size_t)(hi - lo));
    particle_range r = {w, lo, hi - lo, 0, 0, 0};
    forces_local(w, &r, w->particles->v + 3 * (size_t)lo, st->f + 3 * (size_t)lo);
    const double kd = w->settings.drag, h = jb->a->h;
    for (int i = lo; i < hi; i++) {
        b3_add_diag(A->val + 9 * (size_t)st->diag[i], w->particles->mass[i] + h * kd);
    }
    cloth_assemble(w, jb->a, chunk);
}

/* the cloth elements that cross from a chunk of rows into the next ones, by the chunk of their lowest
 * row (cloth.h: the groups write disjoint rows) */
static void assemble_crossing(void *ctx, int chunk)
{
    asm_job *jb = ctx;
    cloth_assemble(jb->w, jb->a, PAR_CHUNKS + chunk);
}

/* forces (all but the fields) and the system matrix A = M - h D - h^2 K, with h^2 K v0 on the side,
 * at the committed state: chunks of rows in parallel, each with the cloth elements that touch only
 * it, then the cloth elements that cross chunks (in parallel where cloth_bind_blocks could group
 * them so), then the rest. generic: the cloth triangles through the generic kernel. */
static int assemble(imp_world *w, implicit_state *st, double h, bool generic)
{
    asm_ctx a = {.x = w->particles->x, .v = w->particles->v, .f = st->f, .A = st->A.val, .bK = st->bK, .h = h, .h2 = h * h,
                 .full = st->set.full_jacobian, .generic = generic};
    asm_job jb = {w, st, &a};
    par_for(assemble_part, &jb, PAR_CHUNKS);
    par_for(assemble_crossing, &jb, PAR_CHUNKS);
    cloth_assemble(w, &a, CLOTH_GROUPS - 1);
    return forces_assemble(w, &a, true);
}

/* Resting contacts hold when the force at the start of the step pushes into the surface. One that is
 * not sliding, and whose tangential force is within the friction cone, sticks: all its directions
 * are prescribed (dv = -v0), so static friction is part of the solve. */
static void contacts_classify(imp_world *w, implicit_state *st)
{
    if (w->pcontacts->count > st->contact_cap) {
        st->contact_cap = w->pcontacts->count;
        st->contact_kind = ids_grow(st->contact_kind, 1, st->contact_cap);
        st->contact_impulse = ids_grow(st->contact_impulse, sizeof(double), st->contact_cap);
    }
    for (int k = 0; k < w->pcontacts->count; k++) {
        const pcontact *pc = &w->pcontacts->contact[k];
        imp_vec3 N = pcollide_contact_normal(w, k), fi = v3_load(st->f + 3 * pc->particle);
        double fn = v3_dot(N, fi), mu = pcollide_contact_friction(w, k);
        imp_vec3 ft = v3_mad(fi, N, -fn);
        st->contact_kind[k] = fn >= 0 ? CONTACT_OFF
                       : v3_len(pc->vt0) < STICK_SPEED && v3_len(ft) <= mu * -fn ? CONTACT_STICK : CONTACT_SLIDE;
    }
}

/* The constraint impulse A dv - b of each contact must push (Baraff and Witkin 5.3), and a sticking
 * one must stay inside the friction cone, |j_t| <= mu j_n, or it slides: the contacts that break
 * these change their kind (in the first two passes) and the normal impulses go to contact_impulse.
 * Each contact writes only its own entries, so the contacts run in parallel chunks. */
typedef struct check_job {
    imp_world *w;
    implicit_state *st;
    int pass;
    bool changed[PAR_CHUNKS];
} check_job;

static void contacts_check_part(void *ctx, int chunk)
{
    check_job *jb = ctx;
    imp_world *w = jb->w;
    implicit_state *st = jb->st;
    const int pass = jb->pass;
    bool changed = false;
    int k0, k1;
    par_range(w->pcontacts->count, chunk, &k0, &k1);
    for (int k = k0; k < k1; k++) {
        st->contact_impulse[k] = 0;
        if (st->contact_kind[k] == CONTACT_OFF) continue;
        int i = w->pcontacts->contact[k].particle;
        imp_vec3 N = pcollide_contact_normal(w, k);
        imp_vec3 imp = v3_sub(row_mul(&st->A, i, st->dv), v3_load(st->b + 3 * i));
        double jn = v3_dot(N, imp), mu = pcollide_contact_friction(w, k);
        if (jn < 0 && pass < 2) {
            st->contact_kind[k] = CONTACT_OFF;
            changed = true;
        } else if (st->contact_kind[k] == CONTACT_STICK && v3_len(v3_mad(imp, N, -jn)) > mu * jn * (1 + 1e-9) && pass < 2) {
            st->contact_kind[k] = CONTACT_SLIDE;
            changed = true;
        }
        st->contact_impulse[k] = fmax(jn, 0);
        /* the contact's impulse on the particle (a body takes the opposite: particle_contact.c) */
        pcollide_set_impulse(w, k, st->contact_kind[k] == CONTACT_STICK ? v3_mad(imp, N, st->contact_impulse[k] - jn)
                                                                         : v3_scale(N, st->contact_impulse[k]));
    }
    jb->changed[chunk] = changed;
}

/* returns whether any contact changed */
static bool contacts_check(imp_world *w, implicit_state *st, int pass)
{
    check_job jb = {.w = w, .st = st, .pass = pass};
    par_for(contacts_check_part, &jb, PAR_CHUNKS);
    bool changed = false;
    for (int c = 0; c < PAR_CHUNKS; c++) changed = changed || jb.changed[c];
    return changed;
}

/* Coulomb friction on sliding contacts: the tangential impulse is at most mu times the normal one */
static void contacts_friction(imp_world *w, implicit_state *st, const double *v)
{
    for (int k = 0; k < w->pcontacts->count; k++) {
        if (st->contact_kind[k] != CONTACT_SLIDE || st->contact_impulse[k] <= 0) continue;
        int i = w->pcontacts->contact[k].particle;
        if (w->particles->motion[i] != IMP_DYNAMIC) continue;
        double mu = pcollide_contact_friction(w, k);
        imp_vec3 N = pcollide_contact_normal(w, k);
        imp_vec3 v1 = v3_add(pcollide_contact_relative(w, k, v), v3_load(st->dv + 3 * i)); /* relative to the surface */
        imp_vec3 vt = v3_mad(v1, N, -v3_dot(N, v1));
        double speed = v3_len(vt), cut = mu * st->contact_impulse[k] * w->particles->inv_mass[i];
        imp_vec3 dvt = speed <= cut ? vt : v3_scale(vt, cut / speed);
        v3_store(st->dv + 3 * i, v3_sub(v3_load(st->dv + 3 * i), dvt));
        pcollide_add_impulse(w, k, v3_scale(dvt, -w->particles->mass[i]));
    }
}

/* v1 = v0 + dv, x1 = x0 + h v1; fixed particles stay, kinematic ones keep their velocity */
static void integrate(imp_world *w, const implicit_state *st, double h)
{
    double *x = w->particles->x, *v = w->particles->v;
    for (int i = 0; i < w->particles->ids.count; i++) {
        double *xi = x + 3 * i, *vi = v + 3 * i;
        const double *dvi = st->dv + 3 * i;
        switch (w->particles->motion[i]) {
        case IMP_FIXED:
            break;
        case IMP_DYNAMIC:
            vi[0] += dvi[0], vi[1] += dvi[1], vi[2] += dvi[2];
            /* fall through */
        default:
            xi[0] += h * vi[0], xi[1] += h * vi[1], xi[2] += h * vi[2];
        }
    }
}

int implicit_step(imp_world *w, double t, double h, imp_profile *prof)
{
    implicit_state *st = state_get(w);
    const int n = w->particles->ids.count;
    if (n == 0) return 0;
    reserve(st, n);
    if (!st->built || st->topology != w->particles->topology || st->n != n) rebuild(w, st);
    const size_t n3 = 3 * (size_t)n;
    double *x = w->particles->x, *v = w->particles->v;
    const double t_asm = step_clock_ms();
    particle_range all = {w, 0, n, 0, w->pcontacts->count, 0};
    int rc = assemble(w, st, h, false);
    if (!rc) rc = forces_fields(w, t, &all, x, v, st->f); /* explicit: no Jacobian */
    if (rc) return rc;
    prof->forces = step_clock_ms() - t_asm; /* forces and the system matrix */

    /* b = h f0 + h^2 K v0 */
    for (size_t e = 0; e < n3; e++) st->b[e] = h * st->f[e] + st->bK[e];
    /* CG stops when every particle's velocity error is below tol times the largest velocity change
     * of the step, or below tol times what max(|g|, 1 m/s^2) adds in a step (a cloth at rest) */
    for (int i = 0; i < n; i++) st->inv_m2[i] = w->particles->inv_mass[i] * w->particles->inv_mass[i];
    double abs_tol = st->set.cg_tolerance * h * fmax(v3_len(w->settings.gravity), 1.0);

    contacts_classify(w, st);
    cg_result res = {0, 0, 1};
    for (int pass = 0; pass < 3; pass++) {
        bool has_z = filter_build(w, st, v);
        cg_result r = solve(st, n, has_z, abs_tol);
        res.iterations += r.iterations;
        res.residual = r.residual;
        res.converged = r.converged;
        if (!contacts_check(w, st, pass)) break;
    }
    prof->cg_iterations = res.iterations;
    prof->cg_residual = res.residual;
    contacts_friction(w, st, v);
    integrate(w, st, h);
    return 0;
}

/* ---- the Jacobian check ------------------------------------------------------------------------------ */

imp_status imp_world_jacobian_check(imp_world *w, double eps, imp_jacobian_report *out)
{
    memset(out, 0, sizeof *out);
    const int n = w->particles->ids.count;
    if (n > 400) {
        world_error(w, "jacobian_check: at most 400 particles (the check is dense)");
        return IMP_ERR_ARG;
    }
    if (w->forces->field_ids.count) {
        world_error(w, "jacobian_check: force fields have no analytic Jacobian; destroy them first");
        return IMP_ERR_ARG;
    }
    for (int k = 0; k < w->forces->behavior_ids.count; k++)
        if (w->forces->behaviors[k].def.kind == IMP_BEHAVE_CALLBACK) {
            world_error(w, "jacobian_check: \"function\" behaviours have no analytic Hessian");
            return IMP_ERR_ARG;
        }
    if (n == 0) return IMP_OK;
    if (!(eps > 0)) eps = 1e-6;
    const size_t n3 = 3 * (size_t)n;
    double *K = calloc(n3 * n3, sizeof(double)), *D = calloc(n3 * n3, sizeof(double));
    double *f = calloc(n3, sizeof(double)), *fp = calloc(n3, sizeof(double)), *fm = calloc(n3, sizeof(double));
    double *xs = malloc(n3 * sizeof(double)), *vs = malloc(n3 * sizeof(double));
    if (!K || !D || !f || !fp || !fm || !xs || !vs) abort();
    memcpy(xs, w->particles->x, n3 * sizeof(double));
    memcpy(vs, w->particles->v, n3 * sizeof(double));
    particle_range all = {w, 0, n, 0, 0, 0};

    /* analytic */
    asm_ctx a = {.x = xs, .v = vs, .f = f, .full = true, .Kd = K, .Dd = D, .n3 = (int)n3};
    forces_local(w, &all, vs, f);
    for (size_t e = 0; e < n3; e++) D[e * n3 + e] -= w->settings.drag;
    forces_assemble(w, &a, false);
    cloth_assemble(w, &a, -1);

    /* central differences of the forces, one coordinate at a time */
    double errx = 0, errv = 0, maxx = 0, maxv = 0;
    for (size_t e = 0; e < n3 * n3; e++) maxx = fmax(maxx, fabs(K[e])), maxv = fmax(maxv, fabs(D[e]));
    for (int pass = 0; pass < 2; pass++) {
        double *s = pass == 0 ? xs : vs, *J = pass == 0 ? K : D, *err = pass == 0 ? &errx : &errv;
        for (size_t j = 0; j < n3; j++) {
            double keep = s[j], step = eps * fmax(1.0, fabs(keep));
            s[j] = keep + step;
            forces_accumulate(w, w->time, &all, xs, vs, fp);
            s[j] = keep - step;
            forces_accumulate(w, w->time, &all, xs, vs, fm);
            s[j] = keep;
            for (size_t i = 0; i < n3; i++) *err = fmax(*err, fabs((fp[i] - fm[i]) / (2 * step) - J[i * n3 + j]));
        }
    }
    out->dfdx_max = maxx, out->dfdv_max = maxv;
    out->dfdx_error = maxx > 0 ? errx / maxx : errx;
    out->dfdv_error = maxv > 0 ? errv / maxv : errv;

    /* the integrator's own system matrix (fused kernels, both threads) against the same matrix
     * through the generic kernels whose Jacobians were just checked */
    implicit_state *st = state_get(w);
    reserve(st, n);
    if (!st->built || st->topology != w->particles->topology || st->n != n) rebuild(w, st);
    const double h = 1.0 / 60;
    assemble(w, st, h, false);
    size_t nv = 9 * (size_t)st->A.nnz;
    double *A1 = malloc(nv * sizeof(double)), *b1 = malloc(n3 * sizeof(double)), *f1 = malloc(n3 * sizeof(double));
    if (!A1 || !b1 || !f1) abort();
    memcpy(A1, st->A.val, nv * sizeof(double));
    memcpy(b1, st->bK, n3 * sizeof(double));
    memcpy(f1, st->f, n3 * sizeof(double));
    assemble(w, st, h, true);
    double amax = 0, aerr = 0, bmax = 0, berr = 0;
    for (size_t e = 0; e < nv; e++) amax = fmax(amax, fabs(st->A.val[e])), aerr = fmax(aerr, fabs(A1[e] - st->A.val[e]));
    for (size_t e = 0; e < n3; e++) {
        bmax = fmax(bmax, fmax(fabs(st->bK[e]), fabs(st->f[e])));
        berr = fmax(berr, fmax(fabs(b1[e] - st->bK[e]), fabs(f1[e] - st->f[e])));
    }
    out->matrix_error = fmax(amax > 0 ? aerr / amax : aerr, bmax > 0 ? berr / bmax : berr);
    free(A1), free(b1), free(f1);
    free(K), free(D), free(f), free(fp), free(fm), free(xs), free(vs);
    return IMP_OK;
}

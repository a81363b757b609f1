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
 *     resting contact, sliding          S_i = I - n n^T,     n . (v0 + dv) = 0
 *     resting contact, sticking         S_i = 0,             v0 + dv = 0
 *
 * so pinned cloth needs no huge masses, and cloth lies on a collider without jitter. Whether a
 * resting contact holds is decided from the force at the start of the step (it must push into the
 * surface), and it sticks when it is not sliding and that force is inside the friction cone.
 * After the solve each contact's constraint impulse j = (A dv - b)_i is checked: a contact whose
 * normal impulse pulls is released, a sticking one whose tangential impulse exceeds mu j_n slides,
 * and the system is solved again (up to three solves). Coulomb friction then takes at most mu j_n
 * off a sliding particle's tangential momentum. Force fields (Lua callbacks) have no Jacobian:
 * they are explicit forces in f0, evaluated at the start of the step.
 *
 * The same file holds the generic backward Euler of impetus.ode (a finite-difference Jacobian and a
 * dense solve) and imp_world_jacobian_check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amg.h"
#include "cg.h"
#include "implicit.h"
#include "parallel.h"

#define ANCHORED_SLOT UINT32_MAX /* spring.b of a spring to a fixed point (forces.c) */
#define STICK_SPEED 1e-3         /* m/s: a resting contact slower than this may stick */
enum { CONTACT_OFF, CONTACT_SLIDE, CONTACT_STICK };
#define BEHAVE_BLOCKS (IMP_BEHAVE_MAX * IMP_BEHAVE_MAX)

typedef struct implicit_state {
    imp_implicit_settings set;
    bool built;
    uint64_t topology;
    int n, cap;          /* particles the pattern was built for; capacity of the per-particle arrays */
    bsr3 A;
    int *diag;           /* block index of (i, i)                                                  */
    int *tpos;           /* block index of the transpose of each block                             */
    int tpos_cap;
    int *undo_at;        /* blocks the filter changed in place, and their old values (9 each)     */
    double *undo_val;
    int undo_count, undo_cap;
    int *spring_blk;     /* 4 per spring: (a,a) (a,b) (b,a) (b,b); 1 when anchored                 */
    int *behave_blk;     /* BEHAVE_BLOCKS per behaviour                                           */
    int spring_blk_cap, behave_blk_cap;
    int *pairs, pair_cap;
    /* per-particle vectors, 3 doubles each */
    double *f, *bK, *b, *y, *z, *dv, *tmp, *tmp2;
    double *inv_m2;      /* 1 / m^2 per particle, for the stopping test                            */
    int split[PAR_CHUNKS + 1]; /* row ranges of the parallel chunks (about equal blocks each)     */
    /* the filter */
    uint8_t *ftype;      /* 0 free; 1 all directions prescribed; 2, 3: one or two normals          */
    double *fnorm;       /* 6 per particle: up to two orthonormal prescribed directions            */
    int *cons, ncons;    /* particles with ftype != 0                                             */
    uint8_t *cactive;    /* per resting contact: CONTACT_OFF, _SLIDE (normal held), _STICK (all)  */
    double *cimpulse;    /* per resting contact: normal impulse (N s)                              */
    int ccap;
    cg_work cg;
    amg mg;
} implicit_state;

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
    free(st->diag), free(st->tpos), free(st->undo_at), free(st->undo_val), free(st->spring_blk), free(st->behave_blk), free(st->pairs);
    free(st->f), free(st->bK), free(st->b), free(st->y), free(st->z), free(st->dv), free(st->tmp), free(st->tmp2), free(st->inv_m2);
    free(st->ftype), free(st->fnorm), free(st->cons), free(st->cactive), free(st->cimpulse);
    cg_work_free(&st->cg);
    amg_free(&st->mg);
    free(st);
    w->implicit = NULL;
}

/* ---- element assembly (see implicit.h) ------------------------------------------------------------ */

void asm_condition(asm_ctx *a, int m, const int *idx, const int *blk, double C, const double *g, const double *H,
                   bool convex, double k, double kd)
{
    const int n = 3 * m;
    double Cdot = 0, vl[12];
    for (int i = 0; i < m; i++) {
        const double *vi = a->v + 3 * idx[i];
        vl[3 * i] = vi[0], vl[3 * i + 1] = vi[1], vl[3 * i + 2] = vi[2];
        Cdot += g[3 * i] * vi[0] + g[3 * i + 1] * vi[1] + g[3 * i + 2] * vi[2];
    }
    const double s = -(k * C + kd * Cdot);
    for (int i = 0; i < m; i++) {
        double *fi = a->f + 3 * idx[i];
        fi[0] += s * g[3 * i], fi[1] += s * g[3 * i + 1], fi[2] += s * g[3 * i + 2];
    }
    double Hv[12] = {0};
    if (H && (a->A || a->Kd))
        for (int p = 0; p < n; p++) {
            double acc = 0;
            for (int q = 0; q < n; q++) acc += H[p * n + q] * vl[q];
            Hv[p] = acc;
        }
    if (a->A) {
        /* A -= h D + h^2 K with D = -kd g g^T, K = -k (g g^T + [C H]) */
        const bool useH = H && (a->full || (convex && C > 0));
        const double alpha = a->h * kd + a->h2 * k, beta = useH ? a->h2 * k * C : 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double *B = a->A + 9 * (size_t)blk[i * m + j];
                const double *gi = g + 3 * i, *gj = g + 3 * j;
                for (int r = 0; r < 3; r++) {
                    B[3 * r + 0] += alpha * gi[r] * gj[0];
                    B[3 * r + 1] += alpha * gi[r] * gj[1];
                    B[3 * r + 2] += alpha * gi[r] * gj[2];
                }
                if (useH)
                    for (int r = 0; r < 3; r++) {
                        const double *Hr = H + (3 * i + r) * n + 3 * j;
                        B[3 * r + 0] += beta * Hr[0];
                        B[3 * r + 1] += beta * Hr[1];
                        B[3 * r + 2] += beta * Hr[2];
                    }
            }
        /* h^2 K v0 = -h^2 k (g Cdot + [C H v0]) */
        const double c1 = -a->h2 * k * Cdot, c2 = useH ? -a->h2 * k * C : 0;
        for (int i = 0; i < m; i++) {
            double *bi = a->bK + 3 * idx[i];
            for (int r = 0; r < 3; r++) bi[r] += c1 * g[3 * i + r] + c2 * Hv[3 * i + r];
        }
    }
    if (a->Kd) {
        for (int p = 0; p < n; p++) {
            size_t row = (size_t)(3 * idx[p / 3] + p % 3) * (size_t)a->n3;
            for (int q = 0; q < n; q++) {
                size_t at = row + (size_t)(3 * idx[q / 3] + q % 3);
                double Hpq = H ? H[p * n + q] : 0;
                a->Kd[at] += -k * (g[p] * g[q] + C * Hpq) - kd * (Cdot * Hpq + g[p] * Hv[q]);
                a->Dd[at] += -kd * g[p] * g[q];
            }
        }
    }
}

void asm_local(asm_ctx *a, int m, const int *idx, const int *blk, const double *fl, const double *Ks,
               const double *Kx, const double *Dl)
{
    const int n = 3 * m;
    for (int i = 0; i < m; i++)
        for (int r = 0; r < 3; r++) a->f[3 * idx[i] + r] += fl[3 * i + r];
    if (a->A) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double *B = a->A + 9 * (size_t)blk[i * m + j];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) {
                        int at = (3 * i + r) * n + 3 * j + c;
                        B[3 * r + c] -= a->h * Dl[at] + a->h2 * Ks[at];
                    }
            }
        for (int p = 0; p < n; p++) {
            double acc = 0;
            for (int q = 0; q < n; q++) acc += Ks[p * n + q] * a->v[3 * idx[q / 3] + q % 3];
            a->bK[3 * idx[p / 3] + p % 3] += a->h2 * acc;
        }
    }
    if (a->Kd)
        for (int p = 0; p < n; p++) {
            size_t row = (size_t)(3 * idx[p / 3] + p % 3) * (size_t)a->n3;
            for (int q = 0; q < n; q++) {
                size_t at = row + (size_t)(3 * idx[q / 3] + q % 3);
                a->Kd[at] += Kx[p * n + q];
                a->Dd[at] += Dl[p * n + q];
            }
        }
}

/* ---- springs and behaviours as condition terms ------------------------------------------------------
 * The damped spring of S3 eq. 1 is the energy term of C = |x_a - x_b| - r (GUIDE.md: it reproduces
 * eq. 1 exactly): with u = l / |l| and P = (I - u u^T) / |l|,
 *     dC/dx_a = u = -dC/dx_b,      d2C/dx_a2 = P = d2C/dx_b2 = -d2C/dx_a dx_b
 * so K_aa = -k_s (u u^T + (1 - r/|l|)(I - u u^T)), the familiar spring Jacobian. */

bool asm_length_condition(const double *xa, const double *xb, double rest, int m, double *C, double *g, double *H,
                             const asm_ctx *a)
{
    imp_vec3 l = v3_sub(v3_load(xa), v3_load(xb));
    double len = v3_len(l);
    if (len < 1e-12) return false; /* direction undefined: no force (as forces.c) */
    imp_vec3 u = v3_scale(l, 1.0 / len);
    double uu[3] = {u.x, u.y, u.z};
    *C = len - rest;
    for (int r = 0; r < 3; r++) {
        g[r] = uu[r];
        if (m == 2) g[3 + r] = -uu[r];
    }
    if (!asm_wants_hessian(a, *C, true)) return false;
    const int n = 3 * m;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double P = ((r == c) - uu[r] * uu[c]) / len;
            H[r * n + c] = P;
            if (m == 2) {
                H[r * n + 3 + c] = -P;
                H[(3 + r) * n + c] = -P;
                H[(3 + r) * n + 3 + c] = P;
            }
        }
    return true;
}

static void springs_assemble(imp_world *w, implicit_state *st, asm_ctx *a)
{
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        int idx[2] = {particles_slot_dense(w, s->a), 0};
        int m = 2;
        const double *xb;
        if (s->b == ANCHORED_SLOT) {
            m = 1;
            xb = &s->anchor.x;
        } else {
            idx[1] = particles_slot_dense(w, s->b);
            xb = a->x + 3 * idx[1];
        }
        double C, g[6], H[36];
        imp_vec3 l = v3_sub(v3_load(a->x + 3 * idx[0]), v3_load(xb));
        if (v3_len(l) < 1e-12) continue;
        bool hasH = asm_length_condition(a->x + 3 * idx[0], xb, s->rest, m, &C, g, H, a);
        asm_condition(a, m, idx, st ? st->spring_blk + 4 * k : NULL, C, g, hasH ? H : NULL, true, s->ks, s->kd);
    }
}

/* behaviours (S3 eq. 2): built-in kinds with exact Hessians; "function" behaviours give only C and
 * its gradient, so they enter the matrix as the Gauss-Newton term -k_s g g^T */
static int behaviors_assemble(imp_world *w, implicit_state *st, asm_ctx *a)
{
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *bh = &w->forces->behaviors[k];
        const imp_behavior_def *d = &bh->def;
        int idx[IMP_BEHAVE_MAX];
        for (int i = 0; i < d->n; i++) idx[i] = particles_slot_dense(w, bh->slots[i]);
        const int *blk = st ? st->behave_blk + BEHAVE_BLOCKS * k : NULL;
        double g[3 * IMP_BEHAVE_MAX] = {0}, C;
        switch (d->kind) {
        case IMP_BEHAVE_DISTANCE: {
            double H[36];
            imp_vec3 l = v3_sub(v3_load(a->x + 3 * idx[0]), v3_load(a->x + 3 * idx[1]));
            if (v3_len(l) < 1e-12) break;
            bool hasH = asm_length_condition(a->x + 3 * idx[0], a->x + 3 * idx[1], d->rest, 2, &C, g, H, a);
            asm_condition(a, 2, idx, blk, C, g, hasH ? H : NULL, true, d->ks, d->kd);
            break;
        }
        case IMP_BEHAVE_COINCIDE:
        case IMP_BEHAVE_ANCHOR: {
            /* three linear rows C_c = (x1 - x2)_c (or x1 - p): zero Hessian */
            imp_vec3 other = d->kind == IMP_BEHAVE_ANCHOR ? d->point : v3_load(a->x + 3 * idx[1]);
            imp_vec3 Cv = v3_sub(v3_load(a->x + 3 * idx[0]), other);
            double Cc[3] = {Cv.x, Cv.y, Cv.z};
            for (int c = 0; c < 3; c++) {
                memset(g, 0, sizeof g);
                g[c] = 1.0;
                g[3 + c] = -1.0;
                asm_condition(a, d->n, idx, blk, Cc[c], g, NULL, false, d->ks, d->kd);
            }
            break;
        }
        case IMP_BEHAVE_PLANE:
            v3_store(g, d->normal);
            asm_condition(a, 1, idx, blk, v3_dot(d->normal, v3_load(a->x + 3 * idx[0])) - d->offset, g, NULL, false,
                          d->ks, d->kd);
            break;
        case IMP_BEHAVE_CALLBACK: {
            double xs[3 * IMP_BEHAVE_MAX];
            C = 0;
            for (int i = 0; i < d->n; i++) memcpy(xs + 3 * i, a->x + 3 * idx[i], 3 * sizeof(double));
            if (d->fn(d->user, d->n, xs, &C, g)) return IMP_ERR_CALLBACK;
            if (d->n <= 4) {
                asm_condition(a, d->n, idx, blk, C, g, NULL, false, d->ks, d->kd);
            } else {
                /* more than 4 particles: the force, and the matrix's Gauss-Newton term by blocks */
                double Cdot = 0;
                for (int i = 0; i < d->n; i++) Cdot += v3_dot(v3_load(g + 3 * i), v3_load(a->v + 3 * idx[i]));
                double s = -(d->ks * C + d->kd * Cdot), alpha = a->h * d->kd + a->h2 * d->ks;
                for (int i = 0; i < d->n; i++) v3_accum(a->f + 3 * idx[i], v3_scale(v3_load(g + 3 * i), s));
                if (a->A)
                    for (int i = 0; i < d->n; i++) {
                        v3_accum(a->bK + 3 * idx[i], v3_scale(v3_load(g + 3 * i), -a->h2 * d->ks * Cdot));
                        for (int j = 0; j < d->n; j++) {
                            double *B = a->A + 9 * (size_t)blk[i * d->n + j];
                            for (int r = 0; r < 3; r++)
                                for (int c = 0; c < 3; c++) B[3 * r + c] += alpha * g[3 * i + r] * g[3 * j + c];
                        }
                    }
            }
            break;
        }
        }
    }
    return 0;
}

/* ---- the pattern ------------------------------------------------------------------------------------- */

static void push_pair(implicit_state *st, int *count, int i, int j)
{
    if (*count == st->pair_cap) {
        st->pair_cap = st->pair_cap ? 2 * st->pair_cap : 1024;
        st->pairs = ids_grow(st->pairs, 2 * sizeof(int), st->pair_cap);
    }
    st->pairs[2 * *count] = i;
    st->pairs[2 * *count + 1] = j;
    (*count)++;
}

static void reserve(implicit_state *st, int n)
{
    if (n <= st->cap) return;
    int cap = st->cap ? st->cap : 64;
    while (cap < n) cap *= 2;
    double **vecs[] = {&st->f, &st->bK, &st->b, &st->y, &st->z, &st->dv, &st->tmp, &st->tmp2};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) *vecs[k] = ids_grow(*vecs[k], 3 * sizeof(double), cap);
    st->diag = ids_grow(st->diag, sizeof(int), cap);
    st->inv_m2 = ids_grow(st->inv_m2, sizeof(double), cap);
    st->ftype = ids_grow(st->ftype, 1, cap);
    st->fnorm = ids_grow(st->fnorm, 6 * sizeof(double), cap);
    st->cons = ids_grow(st->cons, sizeof(int), cap);
    memset(st->dv + 3 * (size_t)st->cap, 0, 3 * sizeof(double) * (size_t)(cap - st->cap));
    st->cap = cap;
}

/* which blocks exist: the diagonal, and every pair of particles that share a force element */
static void rebuild(imp_world *w, implicit_state *st)
{
    const int n = w->particles->ids.count;
    int count = 0;
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        if (s->b != ANCHORED_SLOT) push_pair(st, &count, particles_slot_dense(w, s->a), particles_slot_dense(w, s->b));
    }
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *bh = &w->forces->behaviors[k];
        for (int i = 0; i < bh->def.n; i++)
            for (int j = i + 1; j < bh->def.n; j++)
                push_pair(st, &count, particles_slot_dense(w, bh->slots[i]), particles_slot_dense(w, bh->slots[j]));
    }
    cloth_pairs(w, &st->pairs, &count, &st->pair_cap);
    bsr3_build(&st->A, n, st->pairs, count);
    for (int i = 0; i < n; i++) st->diag[i] = bsr3_find(&st->A, i, i);
    if (st->A.nnz > st->tpos_cap) {
        st->tpos_cap = st->A.nnz;
        st->tpos = ids_grow(st->tpos, sizeof(int), st->tpos_cap);
    }
    for (int i = 0; i < n; i++)
        for (int k = st->A.row_start[i]; k < st->A.row_start[i + 1]; k++) st->tpos[k] = bsr3_find(&st->A, st->A.col[k], i);

    if (w->forces->spring_ids.count > st->spring_blk_cap) {
        st->spring_blk_cap = w->forces->spring_ids.count;
        st->spring_blk = ids_grow(st->spring_blk, 4 * sizeof(int), st->spring_blk_cap);
    }
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        int a = particles_slot_dense(w, s->a), *blk = st->spring_blk + 4 * k;
        if (s->b == ANCHORED_SLOT) {
            blk[0] = st->diag[a];
            continue;
        }
        int b = particles_slot_dense(w, s->b);
        blk[0] = st->diag[a], blk[1] = bsr3_find(&st->A, a, b), blk[2] = bsr3_find(&st->A, b, a), blk[3] = st->diag[b];
    }
    if (w->forces->behavior_ids.count > st->behave_blk_cap) {
        st->behave_blk_cap = w->forces->behavior_ids.count;
        st->behave_blk = ids_grow(st->behave_blk, BEHAVE_BLOCKS * sizeof(int), st->behave_blk_cap);
    }
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *bh = &w->forces->behaviors[k];
        int nb = bh->def.n, *blk = st->behave_blk + BEHAVE_BLOCKS * k;
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < nb; j++)
                blk[i * nb + j] = bsr3_find(&st->A, particles_slot_dense(w, bh->slots[i]),
                                            particles_slot_dense(w, bh->slots[j]));
    }
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

/* ---- the filter -------------------------------------------------------------------------------------- */

/* x = S x: remove the prescribed directions of every constrained particle */
static void filter_apply(void *ctx, double *x)
{
    const implicit_state *st = ctx;
    for (int k = 0; k < st->ncons; k++) {
        int i = st->cons[k];
        double *xi = x + 3 * i;
        if (st->ftype[i] == 1) {
            xi[0] = xi[1] = xi[2] = 0;
            continue;
        }
        for (int c = 0; c < st->ftype[i] - 1; c++) {
            const double *nv = st->fnorm + 6 * i + 3 * c;
            double d = xi[0] * nv[0] + xi[1] * nv[1] + xi[2] * nv[2];
            xi[0] -= d * nv[0], xi[1] -= d * nv[1], xi[2] -= d * nv[2];
        }
    }
}

/* the stopping test's norm: the largest velocity a residual momentum gives one particle,
 * max_i |r_i| / m_i, so that no particle is left with a large error because others dominate a sum */
static double velocity_norm(void *ctx, const double *r)
{
    const implicit_state *st = ctx;
    double worst = 0;
    for (int i = 0; i < st->n; i++) {
        const double *ri = r + 3 * i;
        worst = fmax(worst, (ri[0] * ri[0] + ri[1] * ri[1] + ri[2] * ri[2]) * st->inv_m2[i]);
    }
    return sqrt(worst);
}

static void multigrid(void *ctx, const double *r, double *s)
{
    const implicit_state *st = ctx;
    amg_apply(&st->mg, r, s);
}

typedef struct mul_job {
    const implicit_state *st;
    const double *x;
    double *y;
} mul_job;

static void matrix_mul_part(void *ctx, int chunk)
{
    const mul_job *jb = ctx;
    const implicit_state *st = jb->st;
    bsr3_mul_rows(&st->A, jb->x, jb->y, st->split[chunk], st->split[chunk + 1]);
}

static void matrix_mul(void *ctx, const double *x, double *y)
{
    mul_job jb = {ctx, x, y};
    par_for(matrix_mul_part, &jb, PAR_CHUNKS);
}

/* Build S and z: fixed and kinematic particles keep their velocity (z = 0); a particle in an active
 * resting contact gets its normal velocity zeroed, z = -(n . v0) n per normal (Gram-Schmidt
 * orthonormalized; three or more normals stop it). Returns whether any z is nonzero. */
static bool filter_build(imp_world *w, implicit_state *st, const double *v0)
{
    const int n = w->particles->ids.count;
    st->ncons = 0;
    for (int i = 0; i < n; i++) {
        st->ftype[i] = w->particles->motion[i] == IMP_DYNAMIC ? 0 : 1;
        if (st->ftype[i]) st->cons[st->ncons++] = i;
    }
    memset(st->z, 0, 3 * sizeof(double) * (size_t)n);
    bool any = false;
    for (int k = 0; k < w->pcontacts->count; k++) {
        if (st->cactive[k] == CONTACT_OFF) continue;
        int i = w->pcontacts->contact[k].particle;
        if (st->ftype[i] == 1) continue;
        if (st->cactive[k] == CONTACT_STICK) { /* static friction: stop it */
            if (st->ftype[i] == 0) st->cons[st->ncons++] = i;
            st->ftype[i] = 1;
            v3_store(st->z + 3 * i, v3_scale(v3_load(v0 + 3 * i), -1));
            any = true;
            continue;
        }
        imp_vec3 N = pcollide_contact_normal(w, k);
        for (int c = 0; c < st->ftype[i] - 1; c++) {
            imp_vec3 prev = v3_load(st->fnorm + 6 * i + 3 * c);
            N = v3_mad(N, prev, -v3_dot(N, prev));
        }
        double len = v3_len(N);
        if (len < 1e-6) continue; /* parallel to a normal it already has */
        N = v3_scale(N, 1.0 / len);
        if (st->ftype[i] == 0) {
            st->ftype[i] = 2;
            st->cons[st->ncons++] = i;
        } else if (st->ftype[i] == 2) {
            st->ftype[i] = 3;
        } else {
            st->ftype[i] = 1; /* a third independent normal: no free direction left */
            v3_store(st->z + 3 * i, v3_scale(v3_load(v0 + 3 * i), -1));
            any = true;
            continue;
        }
        v3_store(st->fnorm + 6 * i + 3 * (st->ftype[i] - 2), N);
        imp_vec3 vi = v3_load(v0 + 3 * i);
        v3_accum(st->z + 3 * i, v3_scale(N, -v3_dot(N, vi)));
        any = true;
    }
    return any;
}

/* S_i as a 3x3 matrix */
static void filter_matrix(const implicit_state *st, int i, double *S)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(S, I3, sizeof I3);
    if (st->ftype[i] == 1) {
        memset(S, 0, 9 * sizeof(double));
        return;
    }
    for (int c = 0; c < st->ftype[i] - 1; c++) {
        const double *nv = st->fnorm + 6 * (size_t)i + 3 * c;
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) S[3 * r + q] -= nv[r] * nv[q];
    }
}

static void undo_push(implicit_state *st, int k)
{
    if (st->undo_count == st->undo_cap) {
        st->undo_cap = st->undo_cap ? 2 * st->undo_cap : 256;
        st->undo_at = ids_grow(st->undo_at, sizeof(int), st->undo_cap);
        st->undo_val = ids_grow(st->undo_val, 9 * sizeof(double), st->undo_cap);
    }
    st->undo_at[st->undo_count] = k;
    memcpy(st->undo_val + 9 * (size_t)st->undo_count, st->A.val + 9 * (size_t)k, 9 * sizeof(double));
    st->undo_count++;
}

/* B = L B R for 3x3 blocks (L or R NULL: identity) */
static void block_sandwich(double *B, const double *Lm, const double *Rm)
{
    double T[9];
    if (Rm) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) T[3 * r + c] = B[3 * r] * Rm[c] + B[3 * r + 1] * Rm[3 + c] + B[3 * r + 2] * Rm[6 + c];
        memcpy(B, T, sizeof T);
    }
    if (Lm) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) T[3 * r + c] = Lm[3 * r] * B[c] + Lm[3 * r + 1] * B[3 + c] + Lm[3 * r + 2] * B[6 + c];
        memcpy(B, T, sizeof T);
    }
}

/* A -> S A S + (I - S) c in place, c = tr(A_ii) / 3 on each constrained particle: the same matrix on
 * the free directions (so CG is unchanged), and one whose multigrid hierarchy knows that pinned
 * particles are pinned. The changed blocks go to the undo log. */
static void matrix_filter(implicit_state *st)
{
    st->undo_count = 0;
    double Si[9], Sj[9];
    for (int q = 0; q < st->ncons; q++) {
        int i = st->cons[q];
        filter_matrix(st, i, Si);
        for (int k = st->A.row_start[i]; k < st->A.row_start[i + 1]; k++) {
            int j = st->A.col[k];
            double *B = st->A.val + 9 * (size_t)k;
            undo_push(st, k);
            if (j == i) {
                double c = (B[0] + B[4] + B[8]) / 3;
                block_sandwich(B, Si, Si);
                for (int e = 0; e < 9; e++) B[e] += c * ((e % 4 == 0) - Si[e]);
                continue;
            }
            bool jc = st->ftype[j] != 0;
            if (jc) filter_matrix(st, j, Sj);
            block_sandwich(B, Si, jc ? Sj : NULL);
            if (!jc) { /* the transpose block in the free row j: A_ji S_i */
                int kt = st->tpos[k];
                undo_push(st, kt);
                block_sandwich(st->A.val + 9 * (size_t)kt, NULL, Si);
            }
        }
    }
}

static void matrix_unfilter(implicit_state *st)
{
    for (int u = st->undo_count - 1; u >= 0; u--)
        memcpy(st->A.val + 9 * (size_t)st->undo_at[u], st->undo_val + 9 * (size_t)u, 9 * sizeof(double));
    st->undo_count = 0;
}

/* (A x)_i for one block row */
static imp_vec3 row_mul(const bsr3 *A, int i, const double *x)
{
    double y0 = 0, y1 = 0, y2 = 0;
    for (int k = A->row_start[i]; k < A->row_start[i + 1]; k++) {
        const double *B = A->val + 9 * (size_t)k, *xj = x + 3 * A->col[k];
        y0 += B[0] * xj[0] + B[1] * xj[1] + B[2] * xj[2];
        y1 += B[3] * xj[0] + B[4] * xj[1] + B[5] * xj[2];
        y2 += B[6] * xj[0] + B[7] * xj[1] + B[8] * xj[2];
    }
    return v3(y0, y1, y2);
}

/* solve A dv = b with the filter: dv = z + y, S y = y, A y = b - A z */
static cg_result solve(implicit_state *st, int n, bool has_z, double abs_tol)
{
    const int n3 = 3 * n;
    double *rhs = st->b;
    if (has_z) {
        bsr3_mul(&st->A, st->z, st->tmp);
        for (int e = 0; e < n3; e++) st->tmp[e] = st->b[e] - st->tmp[e];
        rhs = st->tmp;
    }
    /* warm start from the last step's dv, when it is a better start than 0: CG minimizes
     * phi(y) = y^T A y / 2 - rhs^T y, phi(0) = 0. (A start that merely passes the tolerance would
     * otherwise be kept, and a cloth at rest would keep the last step's velocity change.) */
    memcpy(st->y, st->dv, sizeof(double) * (size_t)n3);
    filter_apply(st, st->y);
    matrix_mul(st, st->y, st->tmp2);
    double phi = 0;
    for (int e = 0; e < n3; e++) phi += st->y[e] * (0.5 * st->tmp2[e] - rhs[e]);
    if (!(phi < 0)) memset(st->y, 0, sizeof(double) * (size_t)n3);
    matrix_filter(st);
    amg_update(&st->mg, &st->A);
    cg_problem p = {n3, st, matrix_mul, NULL, st->ncons ? filter_apply : NULL, st->set.cg_tolerance,
                    st->set.cg_max_iterations, abs_tol, multigrid, velocity_norm};
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
        double *B = A->val + 9 * (size_t)st->diag[i], d = w->particles->mass[i] + h * kd;
        B[0] += d, B[4] += d, B[8] += d;
    }
    cloth_assemble(w, jb->a, chunk);
}

/* forces (all but the fields) and the system matrix A = M - h D - h^2 K, with h^2 K v0 on the side,
 * at the committed state: chunks of rows in parallel, each with the cloth elements that touch only
 * it, then the rest. generic: the cloth triangles through the generic kernel. */
static int assemble(imp_world *w, implicit_state *st, double h, bool generic)
{
    asm_ctx a = {.x = w->particles->x, .v = w->particles->v, .f = st->f, .A = st->A.val, .bK = st->bK, .h = h, .h2 = h * h,
                 .full = st->set.full_jacobian, .generic = generic};
    asm_job jb = {w, st, &a};
    par_for(assemble_part, &jb, PAR_CHUNKS);
    cloth_assemble(w, &a, PAR_CHUNKS);
    springs_assemble(w, st, &a);
    return behaviors_assemble(w, st, &a);
}

static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
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
    const double t_asm = clock_ms();
    particle_range all = {w, 0, n, 0, w->pcontacts->count, 0};
    int rc = assemble(w, st, h, false);
    if (!rc) rc = forces_fields(w, t, &all, x, v, st->f); /* explicit: no Jacobian */
    w->particle_system->solver.evaluations++;
    if (rc) return rc;
    prof->forces = clock_ms() - t_asm; /* forces and the system matrix */

    /* b = h f0 + h^2 K v0 */
    for (size_t e = 0; e < n3; e++) st->b[e] = h * st->f[e] + st->bK[e];
    /* CG stops when every particle's velocity error is below tol times the largest velocity change
     * of the step, or below tol times what max(|g|, 1 m/s^2) adds in a step (a cloth at rest) */
    for (int i = 0; i < n; i++) st->inv_m2[i] = w->particles->inv_mass[i] * w->particles->inv_mass[i];
    double abs_tol = st->set.cg_tolerance * h * fmax(v3_len(w->settings.gravity), 1.0);

    /* Resting contacts hold when the force at the start of the step pushes into the surface. One
     * that is not sliding, and whose tangential force is within the friction cone, sticks: all its
     * directions are prescribed (dv = -v0), so static friction is part of the solve. */
    if (w->pcontacts->count > st->ccap) {
        st->ccap = w->pcontacts->count;
        st->cactive = ids_grow(st->cactive, 1, st->ccap);
        st->cimpulse = ids_grow(st->cimpulse, sizeof(double), st->ccap);
    }
    for (int k = 0; k < w->pcontacts->count; k++) {
        const pcontact *pc = &w->pcontacts->contact[k];
        imp_vec3 N = pcollide_contact_normal(w, k), fi = v3_load(st->f + 3 * pc->particle);
        double fn = v3_dot(N, fi), mu = w->colliders->collider[pc->collider].def.friction;
        imp_vec3 ft = v3_mad(fi, N, -fn);
        st->cactive[k] = fn >= 0 ? CONTACT_OFF
                       : v3_len(pc->vt0) < STICK_SPEED && v3_len(ft) <= mu * -fn ? CONTACT_STICK : CONTACT_SLIDE;
    }

    cg_result res = {0, 0, 1};
    for (int pass = 0; pass < 3; pass++) {
        bool has_z = filter_build(w, st, v);
        cg_result r = solve(st, n, has_z, abs_tol);
        res.iterations += r.iterations;
        res.residual = r.residual;
        res.converged = r.converged;
        /* the constraint impulse A dv - b of each contact must push (Baraff and Witkin 5.3), and a
         * sticking one must stay inside the friction cone, |j_t| <= mu j_n, or it slides */
        bool changed = false;
        for (int k = 0; k < w->pcontacts->count; k++) {
            st->cimpulse[k] = 0;
            if (st->cactive[k] == CONTACT_OFF) continue;
            int i = w->pcontacts->contact[k].particle;
            imp_vec3 N = pcollide_contact_normal(w, k);
            imp_vec3 imp = v3_sub(row_mul(&st->A, i, st->dv), v3_load(st->b + 3 * i));
            double jn = v3_dot(N, imp), mu = w->colliders->collider[w->pcontacts->contact[k].collider].def.friction;
            if (jn < 0 && pass < 2) {
                st->cactive[k] = CONTACT_OFF;
                changed = true;
            } else if (st->cactive[k] == CONTACT_STICK && v3_len(v3_mad(imp, N, -jn)) > mu * jn * (1 + 1e-9) && pass < 2) {
                st->cactive[k] = CONTACT_SLIDE;
                changed = true;
            }
            st->cimpulse[k] = fmax(jn, 0);
        }
        if (!changed) break;
    }
    prof->cg_iterations = res.iterations;
    prof->cg_residual = res.residual;

    /* Coulomb friction on sliding contacts: the tangential impulse is at most mu times the normal one */
    for (int k = 0; k < w->pcontacts->count; k++) {
        if (st->cactive[k] != CONTACT_SLIDE || st->cimpulse[k] <= 0) continue;
        int i = w->pcontacts->contact[k].particle;
        if (w->particles->motion[i] != IMP_DYNAMIC) continue;
        double mu = w->colliders->collider[w->pcontacts->contact[k].collider].def.friction;
        imp_vec3 N = pcollide_contact_normal(w, k);
        imp_vec3 v1 = v3_add(v3_load(v + 3 * i), v3_load(st->dv + 3 * i));
        imp_vec3 vt = v3_mad(v1, N, -v3_dot(N, v1));
        double speed = v3_len(vt), cut = mu * st->cimpulse[k] * w->particles->inv_mass[i];
        imp_vec3 dvt = speed <= cut ? vt : v3_scale(vt, cut / speed);
        v3_store(st->dv + 3 * i, v3_sub(v3_load(st->dv + 3 * i), dvt));
    }

    /* v1 = v0 + dv, x1 = x0 + h v1; fixed particles stay, kinematic ones keep their velocity */
    for (int i = 0; i < n; i++) {
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
    springs_assemble(w, NULL, &a);
    behaviors_assemble(w, NULL, &a);
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

/* ---- backward Euler for a generic system (impetus.ode) ------------------------------------------------
 * The first-order form of S3 eq. 3-2 with the time term of eq. 4-6 (GUIDE.md trap 6: it carries h):
 *
 *     (I - h df/dx) dX = h (f(X0, t0) + h df/dt),        X1 = X0 + dX
 *
 * df/dx and df/dt by central differences (steps 6e-6 max(1, |x_j|), about eps^(1/3): exact up to
 * rounding for a linear f), and a dense Gaussian elimination with partial pivoting. For
 * x' = -k x this gives x / (1 + h k) for any h; as h grows without bound, X1 -> X0 - J^-1 f(X0),
 * the origin for a linear field. 2 dim + 3 evaluations per step: for small systems. */
int implicit_ode_step(const imp_ode_system *sys, imp_ode_solver *s, double *x, double t, double h)
{
    const int n = sys->dim;
    /* solver_work (ode.c) reserved 8 n + n^2 + 4 n doubles: [0, 8n) belongs to the other methods */
    double *f0 = s->work + 8 * (size_t)n, *fp = f0 + n, *fm = fp + n, *rhs = fm + n, *M = rhs + n;
    double *xs = s->work + 4 * (size_t)n; /* the explicit methods' stage buffer, free here */
    int rc = sys->deriv(sys->ctx, t, x, f0);
    s->evaluations++;
    if (rc) return rc;
    memcpy(xs, x, sizeof(double) * (size_t)n);
    for (int j = 0; j < n; j++) {
        double step = 6e-6 * fmax(1.0, fabs(x[j]));
        xs[j] = x[j] + step;
        if ((rc = sys->deriv(sys->ctx, t, xs, fp))) return rc;
        xs[j] = x[j] - step;
        if ((rc = sys->deriv(sys->ctx, t, xs, fm))) return rc;
        xs[j] = x[j];
        s->evaluations += 2;
        for (int i = 0; i < n; i++) M[(size_t)i * n + j] = -h * (fp[i] - fm[i]) / (2 * step) + (i == j);
    }
    double dt = 6e-6 * fmax(1.0, fabs(t));
    if ((rc = sys->deriv(sys->ctx, t + dt, x, fp))) return rc;
    if ((rc = sys->deriv(sys->ctx, t - dt, x, fm))) return rc;
    s->evaluations += 2;
    for (int i = 0; i < n; i++) rhs[i] = h * (f0[i] + h * (fp[i] - fm[i]) / (2 * dt));
    /* Gaussian elimination with partial pivoting, rows swapped in place */
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(M[(size_t)r * n + c]) > fabs(M[(size_t)piv * n + c])) piv = r;
        double pv = M[(size_t)piv * n + c];
        if (!(fabs(pv) > 1e-300) || !isfinite(pv)) return IMP_ODE_SINGULAR;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double tmp = M[(size_t)c * n + k];
                M[(size_t)c * n + k] = M[(size_t)piv * n + k];
                M[(size_t)piv * n + k] = tmp;
            }
            double tmp = rhs[c];
            rhs[c] = rhs[piv], rhs[piv] = tmp;
        }
        for (int r = c + 1; r < n; r++) {
            double l = M[(size_t)r * n + c] / pv;
            if (l == 0) continue;
            for (int k = c; k < n; k++) M[(size_t)r * n + k] -= l * M[(size_t)c * n + k];
            rhs[r] -= l * rhs[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double acc = rhs[r];
        for (int k = r + 1; k < n; k++) acc -= M[(size_t)r * n + k] * rhs[k];
        rhs[r] = acc / M[(size_t)r * n + r];
    }
    for (int i = 0; i < n; i++) x[i] += rhs[i];
    s->steps++;
    return 0;
}

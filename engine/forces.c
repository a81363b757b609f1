/* forces.c: force objects for particles (S3 "Particle system dynamics" sections 4 and 6).
 *
 * Every derivative evaluation starts from zero force and lets each force object add into the
 * accumulator, at the state (x, v) the solver asks about, never the committed one:
 *
 *   gravity          f = m g                              (wired in, S3 4.1)
 *   viscous drag     f = -k_d v                           (wired in)
 *   damped spring    f_a = -[k_s(|l| - r) + k_d (ldot . l)/|l|] l/|l|,  f_b = -f_a,   l = a - b  (S3 eq. 1)
 *   behaviour        f_i = (-k_s C - k_d Cdot) dC/dx_i,   Cdot = sum_i dC/dx_i . v_i         (S3 eq. 2)
 *                    for a scalar behaviour function C; a vector C is a list of scalar rows.
 *   field            f = fn(x, v, t), a user callback per particle
 *   cloth, hair      triangle stretch/shear/bend energies, springs and angular springs (cloth.c)
 *
 * The implicit integrator (implicit.c) computes the coupled forces itself, with their Jacobians,
 * and takes only forces_local and forces_fields from here.
 */
#include <string.h>

#include "assemble.h"
#include "cloth.h"
#include "forces.h"
#include "ids.h"
#include "imp_math.h"
#include "particle_attach.h"
#include "particles.h"
#include "sparse.h"
#include "world_parts.h"

/* ---- springs ------------------------------------------------------------------------------------ */

#define ANCHORED UINT32_MAX

imp_spring_def imp_spring_def_default(void)
{
    imp_spring_def d;
    memset(&d, 0, sizeof d);
    d.ks = 100.0;
    d.kd = 1.0;
    d.rest = -1.0;
    return d;
}

imp_id imp_spring_create(imp_world *w, const imp_spring_def *def)
{
    int ia = ids_lookup(&w->particles->ids, def->a);
    int ib = imp_id_is_null(def->b) ? -1 : ids_lookup(&w->particles->ids, def->b);
    if (ia < 0 || (!imp_id_is_null(def->b) && ib < 0)) return (imp_id){0, 0};
    if (w->forces->spring_ids.count == w->forces->spring_cap) {
        w->forces->spring_cap = w->forces->spring_cap ? 2 * w->forces->spring_cap : 64;
        w->forces->springs = ids_grow(w->forces->springs, sizeof(spring), w->forces->spring_cap);
    }
    imp_id id = ids_alloc(&w->forces->spring_ids);
    w->particles->topology++;
    spring *s = &w->forces->springs[w->forces->spring_ids.count - 1];
    s->a = def->a.index;
    s->b = ib < 0 ? ANCHORED : def->b.index;
    s->anchor = def->anchor;
    s->ks = def->ks;
    s->kd = def->kd;
    imp_vec3 xb = ib < 0 ? def->anchor : v3_load(w->particles->x + 3 * ib);
    s->rest = def->rest >= 0 ? def->rest : v3_len(v3_sub(v3_load(w->particles->x + 3 * ia), xb));
    return id;
}

void imp_spring_destroy(imp_world *w, imp_id id)
{
    int d = ids_remove(&w->forces->spring_ids, id);
    if (d >= 0) w->forces->springs[d] = w->forces->springs[w->forces->spring_ids.count], w->particles->topology++;
}

bool imp_spring_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->forces->spring_ids, id) >= 0; }

imp_spring_def imp_spring_get(const imp_world *w, imp_id id)
{
    imp_spring_def d = imp_spring_def_default();
    int i = ids_lookup(&w->forces->spring_ids, id);
    if (i < 0) return d;
    const spring *s = &w->forces->springs[i];
    d.a = ids_of(&w->particles->ids, particles_slot_dense(w, s->a));
    if (s->b != ANCHORED) d.b = ids_of(&w->particles->ids, particles_slot_dense(w, s->b));
    d.anchor = s->anchor;
    d.ks = s->ks, d.kd = s->kd, d.rest = s->rest;
    return d;
}

void imp_spring_set(imp_world *w, imp_id id, const imp_spring_def *def)
{
    int i = ids_lookup(&w->forces->spring_ids, id);
    if (i < 0) return;
    spring *s = &w->forces->springs[i];
    s->anchor = def->anchor;
    s->ks = def->ks, s->kd = def->kd;
    if (def->rest >= 0) s->rest = def->rest;
}

int imp_spring_count(const imp_world *w) { return w->forces->spring_ids.count; }

void imp_spring_endpoints(const imp_world *w, int i, imp_vec3 *a, imp_vec3 *b)
{
    const spring *s = &w->forces->springs[i];
    *a = v3_load(w->particles->x + 3 * particles_slot_dense(w, s->a));
    *b = s->b == ANCHORED ? s->anchor : v3_load(w->particles->x + 3 * particles_slot_dense(w, s->b));
}

/* S3 eq. 1 for every spring */
static void springs_apply(imp_world *w, const double *x, const double *v, double *f)
{
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        int a = particles_slot_dense(w, s->a);
        imp_vec3 xa = v3_load(x + 3 * a), va = v3_load(v + 3 * a), xb, vb;
        int b = -1;
        if (s->b == ANCHORED) {
            xb = s->anchor, vb = v3(0, 0, 0);
        } else {
            b = particles_slot_dense(w, s->b);
            xb = v3_load(x + 3 * b), vb = v3_load(v + 3 * b);
        }
        imp_vec3 l = v3_sub(xa, xb), ldot = v3_sub(va, vb);
        double len = v3_len(l);
        if (len < 1e-12) continue; /* direction undefined: no force */
        double mag = s->ks * (len - s->rest) + s->kd * v3_dot(ldot, l) / len;
        imp_vec3 fa = v3_scale(l, -mag / len);
        v3_accum(f + 3 * a, fa);
        if (b >= 0) v3_accum(f + 3 * b, v3_scale(fa, -1));
    }
}

double forces_spring_energy(const imp_world *w)
{
    double e = 0;
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        imp_vec3 a, b;
        imp_spring_endpoints(w, k, &a, &b);
        double s = v3_len(v3_sub(a, b)) - w->forces->springs[k].rest;
        e += 0.5 * w->forces->springs[k].ks * s * s;
    }
    return e + cloth_energy(w); /* and the elastic energy of cloth and hair */
}

/* ---- behaviours (energy-function forces) --------------------------------------------------------- */

imp_behavior_def imp_behavior_def_default(void)
{
    imp_behavior_def d;
    memset(&d, 0, sizeof d);
    d.kind = IMP_BEHAVE_DISTANCE;
    d.ks = 100.0;
    d.kd = 1.0;
    d.normal = v3(0, 1, 0);
    return d;
}

static int behavior_arity(imp_behavior_kind k) { return k == IMP_BEHAVE_ANCHOR || k == IMP_BEHAVE_PLANE ? 1 : 2; }

imp_id imp_behavior_create(imp_world *w, const imp_behavior_def *def)
{
    int n = def->kind == IMP_BEHAVE_CALLBACK ? def->n : behavior_arity(def->kind);
    if (n < 1 || n > IMP_BEHAVE_MAX || (def->kind == IMP_BEHAVE_CALLBACK && !def->fn)) return (imp_id){0, 0};
    for (int i = 0; i < n; i++)
        if (ids_lookup(&w->particles->ids, def->particles[i]) < 0) return (imp_id){0, 0};
    if (w->forces->behavior_ids.count == w->forces->behavior_cap) {
        w->forces->behavior_cap = w->forces->behavior_cap ? 2 * w->forces->behavior_cap : 16;
        w->forces->behaviors = ids_grow(w->forces->behaviors, sizeof(behavior), w->forces->behavior_cap);
    }
    imp_id id = ids_alloc(&w->forces->behavior_ids);
    w->particles->topology++;
    behavior *b = &w->forces->behaviors[w->forces->behavior_ids.count - 1];
    b->def = *def;
    b->def.n = n;
    for (int i = 0; i < n; i++) b->slots[i] = def->particles[i].index;
    return id;
}

void imp_behavior_destroy(imp_world *w, imp_id id)
{
    int d = ids_lookup(&w->forces->behavior_ids, id);
    if (d < 0) return;
    imp_behavior_def gone = w->forces->behaviors[d].def;
    ids_remove(&w->forces->behavior_ids, id);
    w->particles->topology++;
    w->forces->behaviors[d] = w->forces->behaviors[w->forces->behavior_ids.count];
    if (gone.release) gone.release(gone.user);
}

bool imp_behavior_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->forces->behavior_ids, id) >= 0; }

/* add (-ks C - kd Cdot) grad_i to particle i, for one scalar row C with gradients grad[3n] */
static void behavior_row(double *f, const int *idx, int n, const double *v, double ks, double kd, double C,
                         const double *grad)
{
    double Cdot = 0;
    for (int i = 0; i < n; i++) Cdot += v3_dot(v3_load(grad + 3 * i), v3_load(v + 3 * idx[i]));
    double s = -ks * C - kd * Cdot;
    for (int i = 0; i < n; i++) v3_accum(f + 3 * idx[i], v3_scale(v3_load(grad + 3 * i), s));
}

static int behaviors_apply(imp_world *w, const double *x, const double *v, double *f)
{
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *b = &w->forces->behaviors[k];
        const imp_behavior_def *d = &b->def;
        int idx[IMP_BEHAVE_MAX];
        for (int i = 0; i < d->n; i++) idx[i] = particles_slot_dense(w, b->slots[i]);
        imp_vec3 x1 = v3_load(x + 3 * idx[0]);
        double grad[3 * IMP_BEHAVE_MAX] = {0};
        switch (d->kind) {
        case IMP_BEHAVE_DISTANCE: {
            /* C = |l| - r, dC/dx1 = l/|l| = -dC/dx2 */
            imp_vec3 l = v3_sub(x1, v3_load(x + 3 * idx[1]));
            double len = v3_len(l);
            if (len < 1e-12) break;
            v3_store(grad, v3_scale(l, 1.0 / len));
            v3_store(grad + 3, v3_scale(l, -1.0 / len));
            behavior_row(f, idx, 2, v, d->ks, d->kd, len - d->rest, grad);
            break;
        }
        case IMP_BEHAVE_COINCIDE:
        case IMP_BEHAVE_ANCHOR: {
            /* C = x1 - x2 (or x1 - p): row c has gradient e_c on x1 and -e_c on x2 */
            imp_vec3 other = d->kind == IMP_BEHAVE_ANCHOR ? d->point : v3_load(x + 3 * idx[1]);
            imp_vec3 C = v3_sub(x1, other);
            double Cc[3] = {C.x, C.y, C.z};
            for (int c = 0; c < 3; c++) {
                memset(grad, 0, sizeof grad);
                grad[c] = 1.0;
                grad[3 + c] = -1.0;
                behavior_row(f, idx, d->n, v, d->ks, d->kd, Cc[c], grad);
            }
            break;
        }
        case IMP_BEHAVE_PLANE:
            v3_store(grad, d->normal);
            behavior_row(f, idx, 1, v, d->ks, d->kd, v3_dot(d->normal, x1) - d->offset, grad);
            break;
        case IMP_BEHAVE_CALLBACK: {
            double xs[3 * IMP_BEHAVE_MAX], C = 0;
            for (int i = 0; i < d->n; i++) memcpy(xs + 3 * i, x + 3 * idx[i], 3 * sizeof(double));
            if (d->fn(d->user, d->n, xs, &C, grad)) return IMP_ERR_CALLBACK;
            behavior_row(f, idx, d->n, v, d->ks, d->kd, C, grad);
            break;
        }
        }
    }
    return 0;
}

/* ---- fields ------------------------------------------------------------------------------------- */

imp_id imp_field_create(imp_world *w, const imp_field_def *def)
{
    if (!def->fn) return (imp_id){0, 0};
    if (w->forces->field_ids.count == w->forces->field_cap) {
        w->forces->field_cap = w->forces->field_cap ? 2 * w->forces->field_cap : 8;
        w->forces->fields = ids_grow(w->forces->fields, sizeof(field), w->forces->field_cap);
    }
    imp_id id = ids_alloc(&w->forces->field_ids);
    w->forces->fields[w->forces->field_ids.count - 1].def = *def;
    return id;
}

void imp_field_destroy(imp_world *w, imp_id id)
{
    int d = ids_lookup(&w->forces->field_ids, id);
    if (d < 0) return;
    field gone = w->forces->fields[d];
    ids_remove(&w->forces->field_ids, id);
    w->forces->fields[d] = w->forces->fields[w->forces->field_ids.count];
    if (gone.def.release) gone.def.release(gone.def.user);
}

bool imp_field_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->forces->field_ids, id) >= 0; }

static int fields_apply(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f)
{
    const uint8_t *motion = w->particles->motion + r->first;
    for (int k = 0; k < w->forces->field_ids.count; k++) {
        const imp_field_def *d = &w->forces->fields[k].def;
        for (int i = 0; i < r->count; i++) {
            if (motion[i] != IMP_DYNAMIC && motion[i] != IMP_CURVE) continue;
            double out[3] = {0, 0, 0};
            if (d->fn(d->user, x + 3 * i, v + 3 * i, t, out)) return IMP_ERR_CALLBACK;
            f[3 * i + 0] += out[0], f[3 * i + 1] += out[1], f[3 * i + 2] += out[2];
        }
    }
    return 0;
}

/* ---- all together ----------------------------------------------------------------------------------- */

/* springs, behaviours, cloth and hair act on several particles at once */
bool forces_coupled(const imp_world *w)
{
    return w->forces->spring_ids.count > 0 || w->forces->behavior_ids.count > 0 || cloth_object_count(w) > 0;
}

void forces_local(imp_world *w, const particle_range *r, const double *v, double *f)
{
    const int n = r->count;
    const imp_vec3 g = w->settings.gravity;
    const double kd = w->settings.drag, *m = w->particles->mass + r->first;
    for (int i = 0; i < n; i++) {
        f[3 * i + 0] = m[i] * g.x - kd * v[3 * i + 0];
        f[3 * i + 1] = m[i] * g.y - kd * v[3 * i + 1];
        f[3 * i + 2] = m[i] * g.z - kd * v[3 * i + 2];
    }
    attach_forces(w, r->first, n, f); /* particles carrying a share of a body: its load (particle_attach.c) */
}

int forces_fields(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f)
{
    return fields_apply(w, t, r, x, v, f);
}

int forces_accumulate(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f)
{
    forces_local(w, r, v, f);
    if (forces_coupled(w)) {
        /* n-ary forces index the store directly: only the whole store is ever stepped here */
        springs_apply(w, x, v, f);
        int rc = behaviors_apply(w, x, v, f);
        if (rc) return rc;
        cloth_forces(w, x, v, f);
    }
    return fields_apply(w, t, r, x, v, f);
}

/* a particle is going away: the springs and behaviours that hold it go with it */
void forces_particle_removed(imp_world *w, uint32_t slot)
{
    for (int k = w->forces->spring_ids.count - 1; k >= 0; k--) {
        const spring *s = &w->forces->springs[k];
        if (s->a == slot || s->b == slot) imp_spring_destroy(w, ids_of(&w->forces->spring_ids, k));
    }
    for (int k = w->forces->behavior_ids.count - 1; k >= 0; k--) {
        const behavior *b = &w->forces->behaviors[k];
        for (int i = 0; i < b->def.n; i++)
            if (b->slots[i] == slot) {
                imp_behavior_destroy(w, ids_of(&w->forces->behavior_ids, k));
                break;
            }
    }
}

/* ---- the implicit integrator's assembly (implicit.c; see assemble.h) ------------------------------------ */

/* the particle pairs the springs and behaviours couple: blocks of the system matrix */
void forces_pairs(imp_world *w, int **pairs, int *count, int *cap)
{
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        if (s->b != ANCHORED) bsr3_pair(pairs, count, cap, particles_slot_dense(w, s->a), particles_slot_dense(w, s->b));
    }
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *bh = &w->forces->behaviors[k];
        for (int i = 0; i < bh->def.n; i++)
            for (int j = i + 1; j < bh->def.n; j++)
                bsr3_pair(pairs, count, cap, particles_slot_dense(w, bh->slots[i]), particles_slot_dense(w, bh->slots[j]));
    }
}

/* each element's blocks in the matrix A built from those pairs (diag: the block index of (i, i)) */
void forces_bind_blocks(imp_world *w, const bsr3 *A, const int *diag)
{
    force_store *fs = w->forces;
    if (fs->spring_ids.count > fs->spring_block_cap) {
        fs->spring_block_cap = fs->spring_ids.count;
        fs->spring_block = ids_grow(fs->spring_block, 4 * sizeof(int), fs->spring_block_cap);
    }
    for (int k = 0; k < fs->spring_ids.count; k++) {
        const spring *s = &fs->springs[k];
        int a = particles_slot_dense(w, s->a), *block = fs->spring_block + 4 * k;
        if (s->b == ANCHORED) {
            block[0] = diag[a];
            continue;
        }
        int b = particles_slot_dense(w, s->b);
        block[0] = diag[a], block[1] = bsr3_find(A, a, b), block[2] = bsr3_find(A, b, a), block[3] = diag[b];
    }
    if (fs->behavior_ids.count > fs->behavior_block_cap) {
        fs->behavior_block_cap = fs->behavior_ids.count;
        fs->behavior_block = ids_grow(fs->behavior_block, BEHAVIOR_BLOCKS * sizeof(int), fs->behavior_block_cap);
    }
    for (int k = 0; k < fs->behavior_ids.count; k++) {
        const behavior *bh = &fs->behaviors[k];
        int nb = bh->def.n, *block = fs->behavior_block + BEHAVIOR_BLOCKS * k;
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < nb; j++)
                block[i * nb + j] = bsr3_find(A, particles_slot_dense(w, bh->slots[i]), particles_slot_dense(w, bh->slots[j]));
    }
}

static void springs_assemble(imp_world *w, asm_ctx *a, bool bound)
{
    for (int k = 0; k < w->forces->spring_ids.count; k++) {
        const spring *s = &w->forces->springs[k];
        int idx[2] = {particles_slot_dense(w, s->a), 0};
        int m = 2;
        const double *xb;
        if (s->b == ANCHORED) {
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
        asm_condition(a, m, idx, bound ? w->forces->spring_block + 4 * k : NULL, C, g, hasH ? H : NULL, true, s->ks, s->kd);
    }
}

/* behaviours (S3 eq. 2): built-in kinds with exact Hessians; "function" behaviours give only C and
 * its gradient, so they enter the matrix as the Gauss-Newton term -k_s g g^T */
static int behaviors_assemble(imp_world *w, asm_ctx *a, bool bound)
{
    for (int k = 0; k < w->forces->behavior_ids.count; k++) {
        const behavior *bh = &w->forces->behaviors[k];
        const imp_behavior_def *d = &bh->def;
        int idx[IMP_BEHAVE_MAX];
        for (int i = 0; i < d->n; i++) idx[i] = particles_slot_dense(w, bh->slots[i]);
        const int *block = bound ? w->forces->behavior_block + BEHAVIOR_BLOCKS * k : NULL;
        double g[3 * IMP_BEHAVE_MAX] = {0}, C;
        switch (d->kind) {
        case IMP_BEHAVE_DISTANCE: {
            double H[36];
            imp_vec3 l = v3_sub(v3_load(a->x + 3 * idx[0]), v3_load(a->x + 3 * idx[1]));
            if (v3_len(l) < 1e-12) break;
            bool hasH = asm_length_condition(a->x + 3 * idx[0], a->x + 3 * idx[1], d->rest, 2, &C, g, H, a);
            asm_condition(a, 2, idx, block, C, g, hasH ? H : NULL, true, d->ks, d->kd);
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
                asm_condition(a, d->n, idx, block, Cc[c], g, NULL, false, d->ks, d->kd);
            }
            break;
        }
        case IMP_BEHAVE_PLANE:
            v3_store(g, d->normal);
            asm_condition(a, 1, idx, block, v3_dot(d->normal, v3_load(a->x + 3 * idx[0])) - d->offset, g, NULL, false,
                          d->ks, d->kd);
            break;
        case IMP_BEHAVE_CALLBACK: {
            double xs[3 * IMP_BEHAVE_MAX];
            C = 0;
            for (int i = 0; i < d->n; i++) memcpy(xs + 3 * i, a->x + 3 * idx[i], 3 * sizeof(double));
            if (d->fn(d->user, d->n, xs, &C, g)) return IMP_ERR_CALLBACK;
            if (d->n <= 4) {
                asm_condition(a, d->n, idx, block, C, g, NULL, false, d->ks, d->kd);
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
                            double *B = a->A + 9 * (size_t)block[i * d->n + j];
                            b3_add_outer(B, v3_load(g + 3 * i), v3_load(g + 3 * j), alpha);
                        }
                    }
            }
            break;
        }
        }
    }
    return 0;
}

/* the springs' and behaviours' forces and, with a->A, their part of the system matrix (bound: their
 * blocks were bound to it by forces_bind_blocks); nonzero when a behaviour callback failed */
int forces_assemble(imp_world *w, asm_ctx *a, bool bound)
{
    springs_assemble(w, a, bound);
    return behaviors_assemble(w, a, bound);
}

/* particle_attach.c: particles pinned to points of bodies: a cloth corner sewn to a moving body, a rope
 * of particles tied to a crate, hair rooted in a head.
 *
 * A particle attached to a static or kinematic body is driven: through the particle stage it is a
 * kinematic particle at the body point, moving with the point's velocity (the implicit integrator
 * filters it, the explicit ones give it no acceleration), and after the bodies' stage it is put on
 * the point where the body ended.
 *
 * A particle attached to a dynamic body carries a share of the body through the particle stage. The
 * stages run one after the other (particles, then bodies), so a rope of light particles holding a
 * heavy crate would feel only its own particles within a step and the crate would fall through it;
 * the crate's inertia and load have to be inside the particle integration. So for the integration
 * the particle's mass is m + S, S = M / k (M the body's mass, k the particles attached to it), and
 * its force gains S (a - g): with the mass, gravity already pulls S g, and a is the acceleration the
 * point had over the last step from everything but its attachments (gravity and the body's own forces,
 * its contacts, its joints). A hanging crate has a = g: the rope carries S g. A crate resting on the
 * floor has a = 0: the floor carries it and the rope feels only the crate's inertia.
 *
 * The exchange. Over the step the particle, of mass m + S, changes its velocity by dv under its
 * own forces F (springs, rods, cloth, fields and its own gravity) and S a:
 *
 *     (m + S) dv = (F + S a) h        (for any integrator linear in the forces, as Runge-Kutta and
 *                                      linearized backward Euler are: h F the impulse of F)
 *
 * A particle of mass m alone would have m dv = F h + J_p, J_p the attachment's impulse on it, so
 *
 *     J_p = m dv - F h = -S (dv - a h),   and the body gets J_b = -J_p = S (dv - a h)
 *
 * at the point: as the force J_b / h over the bodies' stage (body:apply_force at the point, so both
 * contact modes take it as an applied force: the exact mode's contact forces see it). Momentum is
 * conserved: the particle gained F h + J_p, the body J_b = -J_p on top of its own forces. After the
 * bodies' stage the particle is put on the body point and given its velocity u; the change of the
 * particle's momentum that makes, m (u - v), goes to the body as the impulse -m (u - v) at the point.
 *
 * The support a for the next step is measured then: the point's velocity change over the step, less
 * what the attachments' impulses gave it, divided by h. The attachments of one body act on it
 * together: their impulses J_j at lever arms r_j change the velocity of the point at r_i by
 *
 *     du_i = sum_j J_j / M + (I^-1 sum_j r_j x J_j) x r_i
 *
 * A new attachment starts with a = g (the body as if it were free). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "ids.h"
#include "imp_math.h"
#include "particle_attach.h"
#include "particles.h"
#include "world_parts.h"

static attach_set *set_get(imp_world *w)
{
    if (!w->attach) {
        w->attach = calloc(1, sizeof *w->attach);
        if (!w->attach) abort();
    }
    return w->attach;
}

void attach_free(imp_world *w)
{
    if (!w->attach) return;
    free(w->attach->a);
    free(w->attach->body_count), free(w->attach->body_j), free(w->attach->body_l);
    free(w->attach);
    w->attach = NULL;
}

static int find(const attach_set *s, imp_id p)
{
    for (int k = 0; s && k < s->count; k++)
        if (s->a[k].particle.index == p.index && s->a[k].particle.generation == p.generation) return k;
    return -1;
}

static void remove_at(attach_set *s, int k) { s->a[k] = s->a[--s->count]; }

static imp_quat state_q(const double *X) { return quat_normalize(quat(X[3], X[4], X[5], X[6])); }

/* body b's velocity and angular velocity in state X (kinematic: the script's; static: zero) */
static void body_velocity(const imp_world *w, int b, const double *X, imp_vec3 *v, imp_vec3 *omega)
{
    const body *bd = &w->bodies->body[b];
    if (bd->motion == IMP_KINEMATIC) {
        *v = bd->kin_v, *omega = bd->kin_w;
    } else if (bd->motion == IMP_FIXED) {
        *v = *omega = v3(0, 0, 0);
    } else {
        imp_mat3 R = quat_to_m3(state_q(X));
        *v = v3_scale(v3_load(X + 7), bd->inv_mass);
        *omega = m3_mul_v(R, m3_mul_v(bd->Ibody_inv, m3_mul_tv(R, v3_load(X + 10))));
    }
}

/* the attachment's point in state X of its body: where it is, its lever arm and its velocity */
static void body_point(const imp_world *w, int b, const double *X, imp_vec3 local, imp_vec3 *at, imp_vec3 *r, imp_vec3 *u)
{
    imp_vec3 v, omega;
    *r = m3_mul_v(quat_to_m3(state_q(X)), local);
    *at = v3_add(v3_load(X), *r);
    body_velocity(w, b, X, &v, &omega);
    *u = v3_add(v, v3_cross(omega, *r));
}

/* ---- the public API ------------------------------------------------------------------------------------ */

imp_status imp_particle_attach(imp_world *w, imp_id p, imp_id b, imp_vec3 at)
{
    if (w->locked) {
        world_error(w, "particle:attach called from inside the world's own step");
        return IMP_ERR_LOCKED;
    }
    const int i = ids_lookup(&w->particles->ids, p), bi = ids_lookup(&w->bodies->ids, b);
    if (i < 0 || bi < 0) {
        world_error(w, "attach: the %s does not exist", i < 0 ? "particle" : "body");
        return IMP_ERR_ARG;
    }
    if (w->particles->motion[i] == IMP_CURVE) {
        world_error(w, "attach: a curve particle moves along its curve; it cannot be attached");
        return IMP_ERR_ARG;
    }
    if (!v3_finite(at)) {
        world_error(w, "attach: the point must be finite");
        return IMP_ERR_ARG;
    }
    attach_set *s = set_get(w);
    int k = find(s, p);
    if (k < 0) {
        if (s->count == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 16;
            s->a = ids_grow(s->a, sizeof(attachment), s->cap);
        }
        k = s->count++;
    }
    const double *X = w->bodies->state + BODY_DIM * bi;
    attachment *a = &s->a[k];
    memset(a, 0, sizeof *a);
    a->particle = p, a->body = b;
    a->local = m3_mul_tv(quat_to_m3(state_q(X)), v3_sub(at, v3_load(X)));
    a->support = w->settings.gravity;
    a->dense = a->body_dense = -1;
    return IMP_OK;
}

void imp_particle_detach(imp_world *w, imp_id p)
{
    const int k = find(w->attach, p);
    if (k >= 0 && !w->locked) remove_at(w->attach, k);
}

bool imp_particle_attachment(const imp_world *w, imp_id p, imp_id *b, imp_vec3 *at, imp_vec3 *impulse)
{
    const int k = find(w->attach, p);
    if (k < 0) return false;
    const attachment *a = &w->attach->a[k];
    const int bi = ids_lookup(&w->bodies->ids, a->body);
    if (bi < 0 || ids_lookup(&w->particles->ids, p) < 0) return false;
    imp_vec3 r, u;
    *b = a->body;
    body_point(w, bi, w->bodies->state + BODY_DIM * bi, a->local, at, &r, &u);
    *impulse = a->impulse;
    return true;
}

void attach_particle_removed(imp_world *w, imp_id p)
{
    const int k = find(w->attach, p);
    if (k >= 0) remove_at(w->attach, k);
}

/* ---- the step ------------------------------------------------------------------------------------------- */

static void body_scratch(attach_set *s, int nb)
{
    if (nb <= s->body_cap) return;
    s->body_cap = nb + nb / 2 + 16;
    s->body_count = ids_grow(s->body_count, sizeof(int), s->body_cap);
    s->body_j = ids_grow(s->body_j, sizeof(imp_vec3), s->body_cap);
    s->body_l = ids_grow(s->body_l, sizeof(imp_vec3), s->body_cap);
}

/* Before the particles' state is saved: attachments whose particle or body is gone are dropped; each
 * attached particle is put on its point; a driven one becomes kinematic for the integration, and one
 * on a dynamic body carries its share of the body (mass and force). */
void attach_begin(imp_world *w, const imp_step *st)
{
    (void)st;
    attach_set *s = w->attach;
    if (!s || s->count == 0) return;
    particle_store *P = w->particles;
    const int nb = w->bodies->ids.count;
    body_scratch(s, nb);
    if (nb) memset(s->body_count, 0, sizeof(int) * (size_t)nb); /* (not allocated while there are no bodies) */
    for (int k = 0; k < s->count;) {
        attachment *a = &s->a[k];
        a->dense = ids_lookup(&P->ids, a->particle);
        a->body_dense = ids_lookup(&w->bodies->ids, a->body);
        if (a->dense < 0 || a->body_dense < 0) {
            remove_at(s, k);
            continue;
        }
        k++;
        a->share = 0, a->force = v3(0, 0, 0);
        if (P->motion[a->dense] != IMP_DYNAMIC) { /* fixed or kinematic by the script: it holds nothing */
            a->dense = -1;
            continue;
        }
        imp_vec3 r;
        body_point(w, a->body_dense, w->bodies->state + BODY_DIM * a->body_dense, a->local, &a->at0, &r, &a->u0);
        v3_store(P->x + 3 * a->dense, a->at0);
        v3_store(P->v + 3 * a->dense, a->u0);
        a->motion0 = P->motion[a->dense];
        a->mass0 = P->mass[a->dense];
        if (w->bodies->body[a->body_dense].motion != IMP_DYNAMIC) P->motion[a->dense] = IMP_KINEMATIC;
        else s->body_count[a->body_dense]++;
    }
    for (int k = 0; k < s->count; k++) {
        attachment *a = &s->a[k];
        if (a->dense < 0 || w->bodies->body[a->body_dense].motion != IMP_DYNAMIC) continue;
        a->share = w->bodies->body[a->body_dense].mass / s->body_count[a->body_dense];
        a->force = v3_scale(v3_sub(a->support, w->settings.gravity), a->share);
        P->mass[a->dense] = a->mass0 + a->share;
        P->inv_mass[a->dense] = 1.0 / P->mass[a->dense];
    }
    s->integrating = true;
}

static void restore(imp_world *w, attachment *a)
{
    particle_store *P = w->particles;
    P->motion[a->dense] = a->motion0;
    P->mass[a->dense] = a->mass0;
    P->inv_mass[a->dense] = 1.0 / a->mass0;
}

/* a callback failed: during the integration, the masses and motions go back; after the exchange,
 * the forces it put on the bodies come off again */
void attach_abort(imp_world *w)
{
    attach_set *s = w->attach;
    if (!s) return;
    for (int k = 0; k < s->count; k++) {
        attachment *a = &s->a[k];
        if (a->dense < 0) continue;
        if (s->integrating) restore(w, a);
        else if (v3_dot(a->applied, a->applied) > 0) imp_body_apply_force(w, a->body, v3_scale(a->applied, -1), a->at0);
        a->applied = a->impulse = v3(0, 0, 0);
        a->dense = -1;
    }
    s->integrating = false;
}

/* After the integration: J_b = S (dv - a h) goes to the body as the force J_b / h at the point (the
 * derivation at the top); v0: the particles' velocities at the start of the step */
void attach_exchange(imp_world *w, const imp_step *st, const double *v0)
{
    attach_set *s = w->attach;
    if (!s || !s->integrating) return;
    s->integrating = false;
    for (int k = 0; k < s->count; k++) {
        attachment *a = &s->a[k];
        a->impulse = a->applied = v3(0, 0, 0);
        if (a->dense < 0) continue;
        restore(w, a);
        if (a->share <= 0) continue;
        imp_vec3 dv = v3_sub(v3_load(w->particles->v + 3 * a->dense), v3_load(v0 + 3 * a->dense));
        a->impulse = v3_scale(v3_mad(dv, a->support, -st->dt), a->share);
        a->applied = v3_scale(a->impulse, st->inv_dt);
        imp_body_apply_force(w, a->body, a->applied, a->at0);
    }
}

void attach_forces(const imp_world *w, int first, int count, double *f)
{
    const attach_set *s = w->attach;
    if (!s || !s->integrating) return;
    for (int k = 0; k < s->count; k++) {
        const attachment *a = &s->a[k];
        if (a->dense >= first && a->dense < first + count && a->share > 0) v3_accum(f + 3 * (a->dense - first), a->force);
    }
}

/* After the bodies' stage: each particle on its point with the point's velocity, the momentum that
 * takes from the particle given to the body, and the support measured for the next step */
void attach_follow(imp_world *w, const imp_step *st, uint8_t *driven)
{
    attach_set *s = w->attach;
    if (!s || s->count == 0) return;
    particle_store *P = w->particles;
    const int nb = w->bodies->ids.count;
    body_scratch(s, nb);
    for (int b = 0; b < nb; b++) s->body_j[b] = s->body_l[b] = v3(0, 0, 0);
    /* what the exchanges gave each body, J and the moment r x J about its centre at the start */
    for (int k = 0; k < s->count; k++) {
        const attachment *a = &s->a[k];
        if (a->dense < 0 || a->share <= 0) continue;
        const imp_vec3 r0 = v3_sub(a->at0, v3_load(st->bodies0 + BODY_DIM * a->body_dense));
        s->body_j[a->body_dense] = v3_add(s->body_j[a->body_dense], a->impulse);
        s->body_l[a->body_dense] = v3_add(s->body_l[a->body_dense], v3_cross(r0, a->impulse));
    }
    for (int k = 0; k < s->count; k++) {
        attachment *a = &s->a[k];
        if (a->dense < 0) continue;
        const int b = a->body_dense;
        const body *bd = &w->bodies->body[b];
        const double *X = w->bodies->state + BODY_DIM * b;
        imp_vec3 at, r, u;
        body_point(w, b, X, a->local, &at, &r, &u);
        if (driven) driven[a->dense] = 1;
        if (bd->motion == IMP_DYNAMIC) {
            imp_mat3 R = quat_to_m3(state_q(X));
            imp_mat3 Iinv = m3_rotate_tensor(R, bd->Ibody_inv);
            imp_vec3 du = v3_add(v3_scale(s->body_j[b], bd->inv_mass), v3_cross(m3_mul_v(Iinv, s->body_l[b]), r));
            a->support = v3_scale(v3_sub(v3_sub(u, a->u0), du), st->inv_dt);
            /* the particle's momentum change onto the point, taken from the body */
            imp_vec3 j = v3_scale(v3_sub(v3_load(P->v + 3 * a->dense), u), P->mass[a->dense]);
            imp_body_apply_impulse(w, a->body, j, at);
            a->impulse = v3_add(a->impulse, j);
        }
        v3_store(P->x + 3 * a->dense, at);
        v3_store(P->v + 3 * a->dense, u);
    }
}

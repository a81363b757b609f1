/* particle_collide.c: particles against static planes, spheres and boxes (S3 "Particle system
 * dynamics" section 7: detection, response, contact).
 *
 * Detection. Every collider has a signed distance d(x) and an outward normal N(x); a particle of
 * radius r collides when d(x) - r < 0 (S3's (X - P) . N test, grown by the radius).
 *
 * Collision response (after the ODE step). Within one step the particle is taken to move with the
 * constant acceleration a = (v1 - v0)/h its integrator produced, so the time of impact tau solves
 * d0 + vn0 tau + an tau^2 / 2 = 0 (exact for a free fall, so bounce heights come out as r^2 h0).
 * Curved colliders use the swept segment x0 -> x1, so fast particles cannot tunnel. At impact
 *
 *     V' = V_T - e V_N                  (S3 7.2, restitution e; e = 0 below a resting speed)
 *     |dV_T| <= mu |dV_N|               (Coulomb friction for the impulse)
 *
 * and the particle flies on for the rest of the step, with up to three impacts per step.
 *
 * Resting contact (inside the ODE step). A particle on a surface with no normal velocity at the
 * start of a step is in contact: in every derivative evaluation the pushing part of the force is
 * cancelled, f_c = -(N . f) N when N . f < 0 (S3 7.3, with GUIDE.md trap 7's fix), and Coulomb
 * friction acts with the normal force |N . f|: kinetic -mu |N.f| v_T/|v_T| while sliding (v_T taken
 * at the start of the step); while stuck, the tangential force is cancelled up to mu |N . f|. A
 * slide that would reverse within a step is stopped there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collider.h"
#include "ids.h"
#include "imp_math.h"
#include "particle_collide.h"
#include "particles.h"
#include "shape.h"
#include "world_parts.h"

#define CONTACT_SLOP PCOLLIDE_REST_SLOP
#define CONTACT_VN PCOLLIDE_REST_SPEED
#define STICK_SPEED 1e-6   /* m/s: tangential speed below which a resting particle is stuck        */

/* resting contacts found before a script removed or moved a particle, or added or removed a collider,
 * are stale: dense indices or surfaces moved. They are found again at the next step; until then
 * nothing reads them. */
static bool pcontacts_stale(const imp_world *w)
{
    return w->pcontacts->particle_edits != w->particles->edits || w->pcontacts->collider_edits != w->colliders->edits;
}

void pcollide_free(particle_contacts *pcs)
{
    free(pcs->contact), free(pcs->hit), free(pcs->bound), free(pcs->near_plane), free(pcs->near_box);
    for (int c = 0; c < PAR_CHUNKS; c++) free(pcs->chunk[c].contact), free(pcs->chunk[c].hit);
}

void pcollide_drop_stale(imp_world *w)
{
    if (pcontacts_stale(w)) w->pcontacts->count = 0;
}

int imp_contact_count(const imp_world *w) { return pcontacts_stale(w) ? 0 : w->pcontacts->count; }

/* signed distance from x to the collider's surface, and the outward normal there (also
 * particle_contact.c) */
double pcollide_distance(const imp_collider_def *c, imp_vec3 x, imp_vec3 *n)
{
    switch (c->shape) {
    case IMP_COLLIDER_PLANE:
        *n = c->normal;
        return v3_dot(c->normal, v3_sub(x, c->position));
    case IMP_COLLIDER_SPHERE: {
        imp_vec3 r = v3_sub(x, c->position);
        double len = v3_len(r);
        *n = len > 1e-12 ? v3_scale(r, 1.0 / len) : v3(0, 1, 0);
        return len - c->radius;
    }
    case IMP_COLLIDER_BOX: {
        const double d = v3_box_distance(m3_mul_tv(c->rotation, v3_sub(x, c->position)), c->half, n); /* box frame */
        *n = m3_mul_v(c->rotation, *n);
        return d;
    }
    }
    *n = v3(0, 1, 0);
    return INFINITY;
}

/* first time in [0, span] at which d(t) = d0 + vn t + an t^2/2 reaches 0, or -1 */
static double plane_impact_time(double d0, double vn, double an, double span)
{
    if (d0 <= 0) return 0;
    double best = -1;
    if (fabs(an) < 1e-12) {
        if (vn < 0) best = -d0 / vn;
    } else {
        double disc = vn * vn - 2 * an * d0;
        if (disc >= 0) {
            double sq = sqrt(disc);
            double r1 = (-vn - sq) / an, r2 = (-vn + sq) / an;
            if (r1 > r2) { double t = r1; r1 = r2; r2 = t; }
            best = r1 >= 0 ? r1 : r2;
        }
    }
    return best >= 0 && best <= span ? best : -1;
}

bool pcollide_beyond(const imp_collider_def *c, imp_vec3 x, double reach)
{
    switch (c->shape) {
    case IMP_COLLIDER_PLANE: return v3_dot(c->normal, v3_sub(x, c->position)) > reach;
    case IMP_COLLIDER_SPHERE: {
        const imp_vec3 r = v3_sub(x, c->position);
        const double R = c->radius + reach;
        return R >= 0 && v3_dot(r, r) > R * R;
    }
    case IMP_COLLIDER_BOX: {
        /* the distance is at least the largest excess of a box-frame coordinate over its half size */
        const imp_vec3 p = m3_mul_tv(c->rotation, v3_sub(x, c->position));
        return fabs(p.x) - c->half.x > reach || fabs(p.y) - c->half.y > reach || fabs(p.z) - c->half.z > reach;
    }
    }
    return false;
}

const pcollide_bound *pcollide_bounds(imp_world *w)
{
    particle_contacts *pcs = w->pcontacts;
    const int nc = w->colliders->ids.count;
    if (nc > pcs->bound_cap) {
        pcs->bound_cap = nc + nc / 2 + 8;
        pcs->bound = ids_grow(pcs->bound, sizeof(pcollide_bound), (size_t)pcs->bound_cap);
    }
    for (int k = 0; k < nc; k++) {
        const imp_collider_def *c = &w->colliders->collider[k].def;
        pcollide_bound *b = &pcs->bound[k];
        b->plane = c->shape == IMP_COLLIDER_PLANE, b->sensor = c->sensor;
        b->c = c->position, b->n = c->normal;
        if (c->shape == IMP_COLLIDER_SPHERE) {
            b->e = v3(c->radius, c->radius, c->radius);
        } else if (c->shape == IMP_COLLIDER_BOX) {
            const imp_mat3 R = c->rotation;
            b->e = v3(fabs(R.m[0][0]) * c->half.x + fabs(R.m[0][1]) * c->half.y + fabs(R.m[0][2]) * c->half.z,
                      fabs(R.m[1][0]) * c->half.x + fabs(R.m[1][1]) * c->half.y + fabs(R.m[1][2]) * c->half.z,
                      fabs(R.m[2][0]) * c->half.x + fabs(R.m[2][1]) * c->half.y + fabs(R.m[2][2]) * c->half.z);
            b->e = v3_scale(b->e, 1 + 1e-12); /* rounding never makes the box smaller than the collider */
        } else {
            b->e = v3(INFINITY, INFINITY, INFINITY);
        }
    }
    if (nc > pcs->near_cap) {
        pcs->near_cap = pcs->bound_cap;
        pcs->near_plane = ids_grow(pcs->near_plane, sizeof(pcollide_bound), (size_t)pcs->near_cap);
        pcs->near_box = ids_grow(pcs->near_box, sizeof *pcs->near_box, (size_t)pcs->near_cap);
    }
    pcs->near_planes = pcs->near_boxes = 0;
    for (int k = 0; k < nc; k++) {
        const pcollide_bound *b = &pcs->bound[k];
        if (b->sensor) continue;
        if (b->plane) pcs->near_plane[pcs->near_planes++] = *b;
        else {
            struct pcollide_near_box *nb = &pcs->near_box[pcs->near_boxes++];
            const double c[3] = {b->c.x, b->c.y, b->c.z}, e[3] = {b->e.x, b->e.y, b->e.z};
            for (int a = 0; a < 3; a++) nb->c[a] = c[a], nb->e[a] = e[a], nb->axis[a] = a;
            for (int a = 1; a < 3; a++) /* insertion sort of three */
                for (int q = a; q > 0 && e[nb->axis[q]] < e[nb->axis[q - 1]]; q--) {
                    const int swap = nb->axis[q];
                    nb->axis[q] = nb->axis[q - 1], nb->axis[q - 1] = swap;
                }
        }
    }
    return pcs->bound;
}

/* fraction s in [0,1] at which the segment a -> b first enters the collider grown by r, or -1 */
static double segment_entry(const imp_collider_def *c, imp_vec3 a, imp_vec3 b, double r)
{
    imp_vec3 n;
    if (c->shape == IMP_COLLIDER_BOX) {
        /* a segment beside the grown box along one of its axes never enters it (nor starts in it) */
        const imp_vec3 pa = m3_mul_tv(c->rotation, v3_sub(a, c->position)), pb = m3_mul_tv(c->rotation, v3_sub(b, c->position));
        const double oa[3] = {pa.x, pa.y, pa.z}, ob[3] = {pb.x, pb.y, pb.z}, h[3] = {c->half.x + r, c->half.y + r, c->half.z + r};
        for (int k = 0; k < 3; k++)
            if ((oa[k] > h[k] && ob[k] > h[k]) || (oa[k] < -h[k] && ob[k] < -h[k])) return -1;
    }
    if (pcollide_distance(c, a, &n) - r <= 0) return 0;
    if (c->shape == IMP_COLLIDER_SPHERE) {
        /* |a + s (b - a) - c|^2 = R^2 */
        imp_vec3 d = v3_sub(b, a), m = v3_sub(a, c->position);
        double R = c->radius + r, A = v3_dot(d, d), B = v3_dot(m, d), C = v3_dot(m, m) - R * R;
        /* on the surface, |m| - R > 0 above can still round to C <= 0 here: then it enters at once
         * (otherwise s comes out a hair below 0 and the impact is missed) */
        if (C <= 0) return 0;
        double disc = B * B - A * C;
        if (A < 1e-30 || disc < 0) return -1;
        double s = (-B - sqrt(disc)) / A;
        return s >= 0 && s <= 1 ? s : -1;
    }
    if (c->shape == IMP_COLLIDER_BOX) {
        /* slab test in the box frame against the box grown by r */
        imp_vec3 pa = m3_mul_tv(c->rotation, v3_sub(a, c->position));
        imp_vec3 pb = m3_mul_tv(c->rotation, v3_sub(b, c->position));
        double o[3] = {pa.x, pa.y, pa.z}, d[3] = {pb.x - pa.x, pb.y - pa.y, pb.z - pa.z};
        double h[3] = {c->half.x + r, c->half.y + r, c->half.z + r}, t0 = 0, t1 = 1;
        for (int k = 0; k < 3; k++) {
            if (fabs(d[k]) < 1e-15) {
                if (fabs(o[k]) > h[k]) return -1;
                continue;
            }
            double ta = (-h[k] - o[k]) / d[k], tb = (h[k] - o[k]) / d[k];
            if (ta > tb) { double t = ta; ta = tb; tb = t; }
            t0 = fmax(t0, ta);
            t1 = fmin(t1, tb);
            if (t0 > t1) return -1;
        }
        return t0;
    }
    return -1;
}

/* ---- resting contacts ------------------------------------------------------------------------------ */

/* contacts in particle order (particles_ode finds a range's by bisection), a particle's body
 * contact (collider -1) before its collider contacts, those in collider order: one total order */
static int contact_order(const void *a, const void *b)
{
    const pcontact *p = a, *q = b;
    if (p->particle != q->particle) return p->particle < q->particle ? -1 : 1;
    return (p->collider > q->collider) - (p->collider < q->collider);
}

/* the body contacts (the first `bodies` contacts) of particles that rest on a collider too are
 * dropped (pcontact_find_bodies); the collider contacts after them are in particle order, and the
 * whole list is put in particle order */
static void drop_shared_body_contacts(imp_world *w, int bodies)
{
    particle_contacts *pcs = w->pcontacts;
    if (bodies == 0) return;
    int kept = 0;
    for (int k = 0; k < pcs->count; k++) {
        const pcontact *pc = &pcs->contact[k];
        bool shared = false;
        if (k < bodies) {
            int lo = bodies, hi = pcs->count;
            while (lo < hi) {
                const int mid = (lo + hi) / 2;
                if (pcs->contact[mid].particle < pc->particle) lo = mid + 1;
                else hi = mid;
            }
            shared = lo < pcs->count && pcs->contact[lo].particle == pc->particle;
        }
        if (!shared) pcs->contact[kept++] = *pc;
    }
    pcs->count = kept;
    if (bodies > 0) qsort(pcs->contact, (size_t)kept, sizeof *pcs->contact, contact_order);
}

void pcollide_begin_contacts(imp_world *w)
{
    w->pcontacts->count = 0;
    w->pcontacts->particle_edits = w->particles->edits;
    w->pcontacts->collider_edits = w->colliders->edits;
}

/* the chunks on both threads from CHUNKED_PARTICLES particles on (fewer are not worth waking the worker
 * for), else one after another on this one: the same results either way */
#define CHUNKED_PARTICLES 512
static void run_chunks(par_fn fn, void *ctx, int particles)
{
    if (particles >= CHUNKED_PARTICLES) par_for(fn, ctx, PAR_CHUNKS);
    else for (int c = 0; c < PAR_CHUNKS; c++) fn(ctx, c);
}

/* the resting contacts of one chunk of the particles (each particle's alone: its own x, v) */
static void find_contacts_chunk(void *ctx, int chunk)
{
    imp_world *w = ctx;
    particle_contacts *pcs = w->pcontacts;
    const int nc = w->colliders->ids.count;
    int lo, hi;
    par_range(w->particles->ids.count, chunk, &lo, &hi);
    pcs->chunk[chunk].count = 0;
    const pcollide_bound *bound = pcs->bound;
    const collider *cs = w->colliders->collider;
    for (int i = lo; i < hi; i++) {
        if (w->particles->motion[i] != IMP_DYNAMIC) continue;
        double *x = w->particles->x + 3 * i, *v = w->particles->v + 3 * i;
        const double r = w->particles->radius[i], reach = r + CONTACT_SLOP;
        if (!pcollide_planes_near(pcs, v3_load(x), reach) && !pcollide_boxes_near(pcs, v3_load(x), reach)) continue;
        for (int c = 0; c < nc; c++) {
            if (bound[c].sensor) continue; /* sensors never push (sensor.c) */
            imp_vec3 N;
            if (pcollide_beyond_bound(&bound[c], &cs[c].def, v3_load(x), reach)) continue;
            double d = pcollide_distance(&cs[c].def, v3_load(x), &N) - r;
            if (d > CONTACT_SLOP) continue;
            double vn = v3_dot(N, v3_load(v));
            if (vn > CONTACT_VN || vn < -CONTACT_VN) continue;
            /* on the surface with no normal velocity: make that exact, then it is a contact */
            v3_store(x, v3_mad(v3_load(x), N, -d));
            if (vn < 0) v3_store(v, v3_mad(v3_load(v), N, -vn));
            if (pcs->chunk[chunk].count == pcs->chunk[chunk].cap) {
                pcs->chunk[chunk].cap = pcs->chunk[chunk].cap ? 2 * pcs->chunk[chunk].cap : 64;
                pcs->chunk[chunk].contact = ids_grow(pcs->chunk[chunk].contact, sizeof(pcontact), pcs->chunk[chunk].cap);
            }
            imp_vec3 vv = v3_load(v);
            pcontact *pc = &pcs->chunk[chunk].contact[pcs->chunk[chunk].count++];
            memset(pc, 0, sizeof *pc);
            pc->particle = i;
            pc->collider = c;
            pc->body = pc->shape = -1;
            pc->mu = w->colliders->collider[c].def.friction;
            pc->vt0 = v3_mad(vv, N, -v3_dot(N, vv));
        }
    }
}

/* the colliders' resting contacts, after the bodies' that are there (particle_contact.c adds those
 * under the implicit integrator, between pcollide_begin_contacts and this) */
void pcollide_find_contacts(imp_world *w)
{
    particle_contacts *pcs = w->pcontacts;
    const int bodies = pcs->count;
    if (w->particles->ids.count > 0 && w->colliders->ids.count > 0) {
        pcollide_bounds(w);
        run_chunks(find_contacts_chunk, w, w->particles->ids.count);
        int total = pcs->count;
        for (int c = 0; c < PAR_CHUNKS; c++) total += pcs->chunk[c].count;
        if (total > pcs->cap) {
            pcs->cap = total + total / 2 + 64;
            pcs->contact = ids_grow(pcs->contact, sizeof(pcontact), pcs->cap);
        }
        for (int c = 0; c < PAR_CHUNKS; c++) {
            if (pcs->chunk[c].count == 0) continue;
            memcpy(pcs->contact + pcs->count, pcs->chunk[c].contact, sizeof(pcontact) * (size_t)pcs->chunk[c].count);
            pcs->count += pcs->chunk[c].count;
        }
    }
    drop_shared_body_contacts(w, bodies);
}

void pcollide_add_contact(imp_world *w, const pcontact *pc)
{
    if (w->pcontacts->count == w->pcontacts->cap) {
        w->pcontacts->cap = w->pcontacts->cap ? 2 * w->pcontacts->cap : 64;
        w->pcontacts->contact = ids_grow(w->pcontacts->contact, sizeof(pcontact), w->pcontacts->cap);
    }
    w->pcontacts->contact[w->pcontacts->count++] = *pc;
}

double pcollide_contact_friction(const imp_world *w, int k) { return w->pcontacts->contact[k].mu; }

imp_vec3 pcollide_contact_relative(const imp_world *w, int k, const double *v)
{
    const pcontact *pc = &w->pcontacts->contact[k];
    return v3_sub(v3_load(v + 3 * pc->particle), pc->u);
}

void pcollide_set_impulse(imp_world *w, int k, imp_vec3 j) { w->pcontacts->contact[k].impulse = j; }
void pcollide_add_impulse(imp_world *w, int k, imp_vec3 j) { w->pcontacts->contact[k].impulse = v3_add(w->pcontacts->contact[k].impulse, j); }

imp_vec3 pcollide_contact_force(const imp_world *w, int k, imp_vec3 x, imp_vec3 fi)
{
    const pcontact *pc = &w->pcontacts->contact[k];
    if (pc->collider < 0) return fi; /* a body's: the implicit integrator's alone */
    const imp_collider_def *c = &w->colliders->collider[pc->collider].def;
    imp_vec3 N;
    pcollide_distance(c, x, &N);
    double fn = v3_dot(N, fi);
    if (fn >= 0) return fi; /* pulled away: no contact force, the particle leaves */
    fi = v3_mad(fi, N, -fn);  /* cancel the pushing part: f_c = -(N . f) N */
    double limit = c->friction * -fn;
    /* kinetic friction opposes the slide as it was at the start of the step: taking the
     * direction of each stage's velocity instead makes RK4's stages cancel when the slide
     * stops inside the step, and the particle never comes to rest */
    double speed = v3_len(pc->vt0);
    if (speed > STICK_SPEED) return v3_mad(fi, pc->vt0, -limit / speed); /* kinetic */
    imp_vec3 ft = v3_mad(fi, N, -v3_dot(N, fi));
    double ftl = v3_len(ft);
    return ftl <= limit ? v3_sub(fi, ft) : v3_mad(fi, ft, -limit / ftl); /* static, or breaking away */
}

void pcollide_contact_forces(imp_world *w, const particle_range *r, const double *x, double *f)
{
    for (int k = r->contact_lo; k < r->contact_hi; k++) {
        const int i = w->pcontacts->contact[k].particle - r->first;
        v3_store(f + 3 * i, pcollide_contact_force(w, k, v3_load(x + 3 * i), v3_load(f + 3 * i)));
    }
}

/* resting contact k at positions x (dense): its particle, the outward normal there, and the gap
 * (signed distance minus radius). tinkertoy.c makes a unilateral row of it for constrained particles. */
int pcollide_contact_row(const imp_world *w, int k, const double *x, imp_vec3 *normal, double *gap)
{
    const pcontact *pc = &w->pcontacts->contact[k];
    if (pc->collider < 0) { /* a body's (the implicit integrator's): never taut here */
        *normal = v3(0, 1, 0), *gap = 1;
        return pc->particle;
    }
    *gap = pcollide_distance(&w->colliders->collider[pc->collider].def, v3_load(x + 3 * pc->particle), normal) - w->particles->radius[pc->particle];
    return pc->particle;
}

/* the outward normals of the colliders particle i (dense) touches now (gap <= CONTACT_SLOP), at most
 * max of them; returns how many. tinkertoy.c projects constrained velocities against them. */
int pcollide_touching(const imp_world *w, int i, imp_vec3 *normals, int max)
{
    int n = 0;
    for (int c = 0; c < w->colliders->ids.count && n < max; c++) {
        if (w->colliders->collider[c].def.sensor) continue;
        imp_vec3 N;
        double d = pcollide_distance(&w->colliders->collider[c].def, v3_load(w->particles->x + 3 * i), &N) - w->particles->radius[i];
        if (d <= CONTACT_SLOP) normals[n++] = N;
    }
    return n;
}

/* the outward normal of resting contact k at its particle's current position (implicit.c) */
imp_vec3 pcollide_contact_normal(const imp_world *w, int k)
{
    const pcontact *pc = &w->pcontacts->contact[k];
    if (pc->collider < 0) return pc->normal; /* the body is where it was found until the particle stage ends */
    imp_vec3 N;
    pcollide_distance(&w->colliders->collider[pc->collider].def, v3_load(w->particles->x + 3 * pc->particle), &N);
    return N;
}

void pcollide_friction_clamp(imp_world *w)
{
    for (int k = 0; k < w->pcontacts->count; k++) {
        const pcontact *pc = &w->pcontacts->contact[k];
        if (pc->collider < 0 || w->colliders->collider[pc->collider].def.friction <= 0) continue;
        int i = pc->particle;
        imp_vec3 N, v = v3_load(w->particles->v + 3 * i);
        pcollide_distance(&w->colliders->collider[pc->collider].def, v3_load(w->particles->x + 3 * i), &N);
        imp_vec3 vt = v3_mad(v, N, -v3_dot(N, v));
        if (v3_dot(vt, pc->vt0) < 0) v3_store(w->particles->v + 3 * i, v3_sub(v, vt));
    }
}

/* ---- collisions ------------------------------------------------------------------------------------ */

/* V' = V_T - e V_N with Coulomb friction on the tangential part */
static imp_vec3 bounce(imp_vec3 v, imp_vec3 N, double e, double mu, double rest_speed)
{
    double vn = v3_dot(N, v);
    if (vn >= 0) return v;
    if (-vn < rest_speed) e = 0;
    double dvn = -(1 + e) * vn;
    v = v3_mad(v, N, dvn);
    imp_vec3 vt = v3_mad(v, N, -v3_dot(N, v));
    double st = v3_len(vt), cut = mu * dvn;
    return st <= cut ? v3_sub(v, vt) : v3_mad(v, vt, -cut / st);
}

/* one chunk of the collision pass (each particle's alone: its own x, v, and its impacts in the chunk's list) */
typedef struct resolve_job {
    imp_world *w;
    const double *x0, *v0;
    double h, rest_speed;
} resolve_job;

static void resolve_chunk(void *ctx, int chunk)
{
    const resolve_job *job = ctx;
    imp_world *w = job->w;
    particle_contacts *pcs = w->pcontacts;
    const double *x0 = job->x0, *v0 = job->v0, h = job->h, rest_speed = job->rest_speed;
    const int nc = w->colliders->ids.count;
    int lo, hi;
    par_range(w->particles->ids.count, chunk, &lo, &hi);
    pcs->chunk[chunk].hit_count = 0;
    for (int i = lo; i < hi; i++) {
        if (w->particles->motion[i] != IMP_DYNAMIC) continue;
        const double r = w->particles->radius[i];
        imp_vec3 xs = v3_load(x0 + 3 * i), vs = v3_load(v0 + 3 * i);
        imp_vec3 x1 = v3_load(w->particles->x + 3 * i), v1 = v3_load(w->particles->v + 3 * i);
        {
            /* no collider near the path (each one passed over in the first pass below): nothing to do */
            const double reach = (r + v3_len(v3_sub(x1, xs))) * (1 + 1e-9) + 1e-12;
            bool near = pcollide_boxes_near(pcs, x1, reach);
            for (int t = 0; t < pcs->near_planes && !near; t++) {
                const pcollide_bound *b = &pcs->near_plane[t];
                near = !(v3_dot(b->n, v3_sub(x1, b->c)) - r >= 0 && v3_dot(b->n, v3_sub(xs, b->c)) - r >= 0);
            }
            if (!near) continue;
        }
        imp_vec3 a = v3_scale(v3_sub(v1, vs), 1.0 / h); /* the step's mean acceleration */
        double span = h;
        bool hit_any = false;
        for (int pass = 0; pass < 3; pass++) {
            double best = INFINITY;
            int who = -1;
            /* every point of the segment lies within its length of x1: beyond r + that, it never comes
             * within r of a collider (with a margin of 1e-9 relative, so that a particle resting on the
             * surface, where rounding decides, gets the exact test) */
            const double reach = (r + v3_len(v3_sub(x1, xs))) * (1 + 1e-9) + 1e-12;
            for (int c = 0; c < nc; c++) {
                if (pcs->bound[c].sensor) continue;
                const imp_collider_def *cd = &w->colliders->collider[c].def;
                imp_vec3 N;
                double tau;
                if (cd->shape == IMP_COLLIDER_PLANE) { /* pcollide_distance's plane, written out */
                    N = cd->normal;
                    double d0 = v3_dot(N, v3_sub(xs, cd->position)) - r;
                    double d1 = v3_dot(N, v3_sub(x1, cd->position)) - r;
                    if (d1 >= 0 && d0 >= 0) continue;
                    tau = plane_impact_time(d0, v3_dot(N, vs), v3_dot(N, a), span);
                    if (tau < 0) tau = d0 > 0 ? span * d0 / (d0 - d1) : 0;
                } else {
                    if (pcollide_beyond_bound(&pcs->bound[c], cd, x1, reach)) continue;
                    double s = segment_entry(cd, xs, x1, r);
                    if (s < 0) continue;
                    tau = s * span;
                }
                if (tau < best) best = tau, who = c;
            }
            if (who < 0) break;
            const imp_collider_def *cd = &w->colliders->collider[who].def;
            imp_vec3 xc = v3_add(xs, v3_add(v3_scale(vs, best), v3_scale(a, 0.5 * best * best)));
            imp_vec3 vc = v3_mad(vs, a, best), N;
            double d = pcollide_distance(cd, xc, &N) - r;
            if (d > 1e-9 && cd->shape == IMP_COLLIDER_BOX) {
                /* the grown box's corner is not the rounded one: no contact here after all */
                if (best >= span) break;
            }
            if (d < 0) xc = v3_mad(xc, N, -d);
            if (v3_dot(N, vc) >= 0 && pass > 0) break; /* already leaving: nothing more this step */
            vc = bounce(vc, N, cd->restitution, cd->friction, rest_speed);
            hit_any = true;
            if (pcs->chunk[chunk].hit_count == pcs->chunk[chunk].hit_cap) { /* recorded for tinkertoy.c */
                pcs->chunk[chunk].hit_cap = pcs->chunk[chunk].hit_cap ? 2 * pcs->chunk[chunk].hit_cap : 64;
                pcs->chunk[chunk].hit = ids_grow(pcs->chunk[chunk].hit, sizeof(phit), pcs->chunk[chunk].hit_cap);
            }
            pcs->chunk[chunk].hit[pcs->chunk[chunk].hit_count++] = (phit){i, N};
            double rem = span - best;
            xs = xc, vs = vc, span = rem;
            x1 = v3_add(xc, v3_add(v3_scale(vc, rem), v3_scale(a, 0.5 * rem * rem)));
            v1 = v3_mad(vc, a, rem);
            if (rem <= 0) break;
        }
        if (!hit_any) continue;
        /* whatever remains inside a collider is pushed out and loses its inward velocity */
        for (int c = 0; c < nc; c++) {
            if (w->colliders->collider[c].def.sensor) continue; /* sensors never push (sensor.c) */
            imp_vec3 N;
            if (pcollide_beyond_bound(&pcs->bound[c], &w->colliders->collider[c].def, x1, r)) continue; /* (d > 0) */
            double d = pcollide_distance(&w->colliders->collider[c].def, x1, &N) - r;
            if (d >= 0) continue;
            x1 = v3_mad(x1, N, -d);
            double vn = v3_dot(N, v1);
            if (vn < 0) v1 = v3_mad(v1, N, -vn);
        }
        v3_store(w->particles->x + 3 * i, x1);
        v3_store(w->particles->v + 3 * i, v1);
    }
}

void pcollide_resolve(imp_world *w, const double *x0, const double *v0, double h)
{
    particle_contacts *pcs = w->pcontacts;
    pcs->hit_count = 0;
    if (w->colliders->ids.count == 0 || w->particles->ids.count == 0 || h <= 0) return;
    /* impacts slower than what gravity adds over two steps come to rest instead of bouncing */
    const resolve_job job = {w, x0, v0, h, 2 * v3_len(w->settings.gravity) * h + 1e-3};
    pcollide_bounds(w);
    run_chunks(resolve_chunk, (void *)&job, w->particles->ids.count);
    for (int c = 0; c < PAR_CHUNKS; c++) {
        const int k = pcs->chunk[c].hit_count;
        if (k == 0) continue;
        if (pcs->hit_count + k > pcs->hit_cap) {
            pcs->hit_cap = pcs->hit_count + k + (pcs->hit_count + k) / 2 + 64;
            pcs->hit = ids_grow(pcs->hit, sizeof(phit), pcs->hit_cap);
        }
        memcpy(pcs->hit + pcs->hit_count, pcs->chunk[c].hit, sizeof(phit) * (size_t)k);
        pcs->hit_count += k;
    }
}

/* body.c: the rigid body store and the bodies as an ODE system (S3 "Rigid body dynamics").
 *
 * State of one body, 13 doubles, contiguous so the solver's get/set state is one memcpy:
 *
 *     X = [ x(3)  q(4)  P(3)  L(3) ]        x centre of mass, q = [s, v] unit quaternion,
 *                                            P = M v linear momentum, L = I(t) omega angular momentum
 *
 *     dX/dt = [ v  (1/2) omega q  F  tau ]   v = P / M,  I^-1(t) = R I_body^-1 R^T,  omega = I^-1 L
 *
 * (S3: dq/dt = 1/2 [0, omega] q, with R = R(q) of the normalized q.) The state's q drifts off unit
 * length under any integrator; set_state renormalizes it in the store (the state itself, not a
 * copy, GUIDE.md trap 8). Static bodies have dX/dt = 0. Kinematic bodies are moved by the script:
 * dx/dt is the velocity it set, dq/dt = 1/2 [0, omega] q with its angular velocity, momenta stay 0.
 * Forces and torques are accumulated by apply_force/apply_torque (S3 5.2-5.5: a force f at world
 * point p adds f to F and (p - x) x f to tau), held constant over the step, and cleared after it;
 * gravity M g and the world's linear drag -k_d v act on every dynamic body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "hull.h"
#include "ids.h"
#include "imp_math.h"
#include "parallel.h"
#include "shape.h"
#include "world_parts.h"

imp_body_def imp_body_def_default(void)
{
    imp_body_def d;
    memset(&d, 0, sizeof d);
    d.orientation = quat_identity();
    d.motion = IMP_DYNAMIC;
    d.group = 1;
    d.mask = 0xffffffffu;
    d.gravity_scale = 1;
    d.color[0] = 0.35f, d.color[1] = 0.6f, d.color[2] = 0.9f, d.color[3] = 1.0f;
    return d;
}

static void store_reserve(imp_world *w, int n)
{
    if (n <= w->bodies->cap) return;
    int cap = w->bodies->cap ? w->bodies->cap : 64;
    while (cap < n) cap *= 2;
    w->bodies->body = ids_grow(w->bodies->body, sizeof(body), cap);
    w->bodies->state = ids_grow(w->bodies->state, BODY_DIM * sizeof(double), cap);
    w->bodies->cap = cap;
}

static void shapes_reserve(imp_world *w, int n)
{
    if (n <= w->shapes->cap) return;
    int cap = w->shapes->cap ? w->shapes->cap : 64;
    while (cap < n) cap *= 2;
    w->shapes->shape = ids_grow(w->shapes->shape, sizeof(shape), cap);
    w->shapes->cap = cap;
}

int bodies_dense(const imp_world *w, uint32_t slot) { return (int)w->bodies->ids.slot_dense[slot]; }

#define BODY_OR(ret)                             \
    int i = ids_lookup(&w->bodies->ids, id);        \
    if (i < 0) return ret

static void destroy_shape(imp_world *w, uint32_t slot)
{
    imp_id sid = ids_of(&w->shapes->ids, (int)w->shapes->ids.slot_dense[slot]);
    shapes_log(w->shapes, sid, true, w->shapes->shape[w->shapes->ids.slot_dense[slot]].type == IMP_SHAPE_PLANE);
    int d = ids_remove(&w->shapes->ids, sid);
    shape_free(&w->shapes->shape[d]);
    int last = w->shapes->ids.count;
    if (d != last) w->shapes->shape[d] = w->shapes->shape[last];
}

/* Combine the shapes' mass properties into the body's (S3 "Computing the inertia tensor", and the
 * parallel-axis theorem for compounds): with shape i of mass m_i, centre c_i (body frame) and inertia
 * J_i about c_i in its own frame (rotation R_i),
 *     M = sum m_i,   c = sum m_i c_i / M,
 *     I_body = sum [ R_i J_i R_i^T + m_i ( |d_i|^2 1 - d_i d_i^T ) ],   d_i = c_i - c */
static void body_mass_properties(imp_world *w, body *b, double want_mass)
{
    double m = 0;
    imp_vec3 c = v3(0, 0, 0);
    for (int k = 0; k < b->nshapes; k++) {
        const shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        imp_vec3 ci = v3_add(s->lpos, quat_rotate(s->lq, s->center));
        m += s->mass;
        c = v3_mad(c, ci, s->mass);
    }
    b->com = m > 0 ? v3_scale(c, 1.0 / m) : v3(0, 0, 0);
    imp_mat3 I = {{{0}}};
    for (int k = 0; k < b->nshapes; k++) {
        const shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        imp_vec3 d = v3_sub(v3_add(s->lpos, quat_rotate(s->lq, s->center)), b->com);
        I = m3_add(I, m3_rotate_tensor(quat_to_m3(s->lq), s->inertia));
        double dd = v3_dot(d, d);
        imp_mat3 pa = {{{dd - d.x * d.x, -d.x * d.y, -d.x * d.z}, {-d.y * d.x, dd - d.y * d.y, -d.y * d.z},
                        {-d.z * d.x, -d.z * d.y, dd - d.z * d.z}}};
        I = m3_add(I, m3_scale(pa, s->mass));
    }
    if (want_mass > 0 && m > 0) {
        double f = want_mass / m;
        I = m3_scale(I, f);
        m = want_mass;
        for (int k = 0; k < b->nshapes; k++) {
            shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
            s->mass *= f;
            s->inertia = m3_scale(s->inertia, f);
        }
    }
    b->mass = m;
    b->Ibody = I;
    b->Ibody_inv = m3_inverse(I);
    b->principal = rot_principal(I);
    b->inv_mass = (b->motion == IMP_DYNAMIC && m > 0) ? 1.0 / m : 0;
    if (b->motion != IMP_DYNAMIC) b->Ibody_inv = (imp_mat3){{{0}}};
}

imp_id imp_body_create(imp_world *w, const imp_body_def *def)
{
    imp_id none = {0, 0};
    if (!def || def->shape_count <= 0 || !def->shapes) {
        world_error(w, "a body needs at least one shape");
        return none;
    }
    for (int k = 0; k < def->shape_count; k++) {
        imp_shape_type t = def->shapes[k].type;
        if ((t == IMP_SHAPE_PLANE || t == IMP_SHAPE_MESH) && def->motion != IMP_FIXED) {
            world_error(w, "plane and mesh shapes belong to static bodies only");
            return none;
        }
    }
    store_reserve(w, w->bodies->ids.count + 1);
    shapes_reserve(w, w->shapes->ids.count + def->shape_count);
    imp_id id = ids_alloc(&w->bodies->ids);
    int i = w->bodies->ids.count - 1;
    body *b = &w->bodies->body[i];
    memset(b, 0, sizeof *b);
    b->motion = (uint8_t)def->motion;
    b->group = def->group;
    b->mask = def->mask;
    memcpy(b->color, def->color, sizeof b->color);
    b->shapes = ids_grow(NULL, sizeof(uint32_t), def->shape_count);
    for (int k = 0; k < def->shape_count; k++) {
        imp_id sid = ids_alloc(&w->shapes->ids);
        shape *s = &w->shapes->shape[w->shapes->ids.count - 1];
        memset(s, 0, sizeof *s);
        s->body = id.index;
        s->index = k;
        b->shapes[b->nshapes++] = sid.index;
        char err[200];
        if (!shape_build(s, &def->shapes[k], err, sizeof err)) {
            world_error(w, "%s", err);
            imp_body_destroy(w, id);
            return none;
        }
    }
    body_mass_properties(w, b, def->mass);
    bool finite = isfinite(b->mass) && v3_finite(b->com);
    for (int r = 0; r < 3; r++) finite = finite && v3_finite(v3(b->Ibody.m[r][0], b->Ibody.m[r][1], b->Ibody.m[r][2]));
    if (!finite) {
        world_error(w, "the body's mass properties are not finite numbers (are its shapes too large?)");
        imp_body_destroy(w, id);
        return none;
    }
    if (def->motion == IMP_DYNAMIC && !(b->mass > 0)) {
        world_error(w, "a dynamic body needs a positive mass (its shapes have no volume)");
        imp_body_destroy(w, id);
        return none;
    }
    b->bullet = def->bullet, b->asleep = 0, b->sleep_time = 0;
    b->lin_damp = b->ang_damp = 0;
    if (!imp_body_set_damping(w, id, def->linear_damping, def->angular_damping)) {
        imp_body_destroy(w, id);
        return none;
    }
    b->gravity_scale = 1;
    if (!imp_body_set_gravity_scale(w, id, def->gravity_scale)) {
        imp_body_destroy(w, id);
        return none;
    }
    double *X = w->bodies->state + BODY_DIM * i;
    imp_quat q = quat_normalize(def->orientation);
    imp_mat3 R = quat_to_m3(q);
    v3_store(X, v3_add(def->position, m3_mul_v(R, b->com)));
    X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
    memset(X + 7, 0, 6 * sizeof(double));
    if (def->motion == IMP_DYNAMIC) {
        v3_store(X + 7, v3_scale(def->velocity, b->mass));
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(R, b->Ibody), def->angular_velocity));
    } else if (def->motion == IMP_KINEMATIC) {
        b->kin_v = def->velocity;
        b->kin_w = def->angular_velocity;
    }
    w->bodies->edits++;
    for (int k = 0; k < b->nshapes; k++) {
        shape *sh = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        shape_place(sh, X, b->com);
        shapes_log(w->shapes, ids_of(&w->shapes->ids, (int)w->shapes->ids.slot_dense[b->shapes[k]]), false, sh->type == IMP_SHAPE_PLANE);
    }
    return id;
}

void imp_body_destroy(imp_world *w, imp_id id)
{
    BODY_OR();
    w->bodies->edits++;
    body *b = &w->bodies->body[i];
    for (int k = 0; k < b->nshapes; k++) destroy_shape(w, b->shapes[k]);
    free(b->shapes);
    int d = ids_remove(&w->bodies->ids, id);
    int last = w->bodies->ids.count;
    if (d != last) {
        w->bodies->body[d] = w->bodies->body[last];
        memcpy(w->bodies->state + BODY_DIM * d, w->bodies->state + BODY_DIM * last, BODY_DIM * sizeof(double));
    }
}

bool imp_body_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->bodies->ids, id) >= 0; }
int imp_body_count(const imp_world *w) { return w->bodies->ids.count; }
imp_id imp_body_id(const imp_world *w, int i) { return ids_of(&w->bodies->ids, i); }

static imp_quat state_q(const double *X) { return quat(X[3], X[4], X[5], X[6]); }

imp_vec3 imp_body_center_of_mass(const imp_world *w, imp_id id) { BODY_OR(v3(0, 0, 0)); return v3_load(w->bodies->state + BODY_DIM * i); }
imp_quat imp_body_orientation(const imp_world *w, imp_id id) { BODY_OR(quat_identity()); return state_q(w->bodies->state + BODY_DIM * i); }

imp_vec3 imp_body_position(const imp_world *w, imp_id id)
{
    BODY_OR(v3(0, 0, 0));
    const double *X = w->bodies->state + BODY_DIM * i;
    return v3_sub(v3_load(X), quat_rotate(state_q(X), w->bodies->body[i].com));
}

imp_mat3 imp_body_inertia_body(const imp_world *w, imp_id id) { BODY_OR(m3_identity()); return w->bodies->body[i].Ibody; }
imp_mat3 imp_body_inertia(const imp_world *w, imp_id id)
{
    BODY_OR(m3_identity());
    return m3_rotate_tensor(quat_to_m3(state_q(w->bodies->state + BODY_DIM * i)), w->bodies->body[i].Ibody);
}

imp_vec3 imp_body_velocity(const imp_world *w, imp_id id)
{
    BODY_OR(v3(0, 0, 0));
    const body *b = &w->bodies->body[i];
    if (b->motion == IMP_KINEMATIC) return b->kin_v;
    if (b->motion == IMP_FIXED) return v3(0, 0, 0);
    return v3_scale(v3_load(w->bodies->state + BODY_DIM * i + 7), 1.0 / b->mass);
}

/* omega = I^-1(t) L with I^-1(t) = R I_body^-1 R^T */
static imp_vec3 omega_of(const body *b, const double *X)
{
    imp_mat3 R = quat_to_m3(quat_normalize(state_q(X)));
    return m3_mul_v(R, m3_mul_v(b->Ibody_inv, m3_mul_tv(R, v3_load(X + 10))));
}

imp_vec3 imp_body_angular_velocity(const imp_world *w, imp_id id)
{
    BODY_OR(v3(0, 0, 0));
    const body *b = &w->bodies->body[i];
    if (b->motion == IMP_KINEMATIC) return b->kin_w;
    if (b->motion == IMP_FIXED) return v3(0, 0, 0);
    return omega_of(b, w->bodies->state + BODY_DIM * i);
}

imp_vec3 imp_body_momentum(const imp_world *w, imp_id id) { BODY_OR(v3(0, 0, 0)); return v3_load(w->bodies->state + BODY_DIM * i + 7); }
imp_vec3 imp_body_angular_momentum(const imp_world *w, imp_id id) { BODY_OR(v3(0, 0, 0)); return v3_load(w->bodies->state + BODY_DIM * i + 10); }
double imp_body_mass(const imp_world *w, imp_id id) { BODY_OR(0); return w->bodies->body[i].motion == IMP_FIXED ? 0 : w->bodies->body[i].mass; }
imp_vec3 imp_body_force(const imp_world *w, imp_id id) { BODY_OR(v3(0, 0, 0)); return w->bodies->body[i].force; }
imp_vec3 imp_body_torque(const imp_world *w, imp_id id) { BODY_OR(v3(0, 0, 0)); return w->bodies->body[i].torque; }
imp_motion imp_body_motion(const imp_world *w, imp_id id) { BODY_OR(IMP_FIXED); return (imp_motion)w->bodies->body[i].motion; }
uint32_t imp_body_group(const imp_world *w, imp_id id) { BODY_OR(0); return w->bodies->body[i].group; }
uint32_t imp_body_mask(const imp_world *w, imp_id id) { BODY_OR(0); return w->bodies->body[i].mask; }
void imp_body_set_filter(imp_world *w, imp_id id, uint32_t group, uint32_t mask) { BODY_OR(); w->bodies->body[i].group = group, w->bodies->body[i].mask = mask; }
void imp_body_color(const imp_world *w, imp_id id, float rgba[4]) { BODY_OR(); memcpy(rgba, w->bodies->body[i].color, 4 * sizeof(float)); }
void imp_body_set_color(imp_world *w, imp_id id, const float rgba[4]) { BODY_OR(); memcpy(w->bodies->body[i].color, rgba, 4 * sizeof(float)); }

/* kinetic energy 1/2 M v.v + 1/2 omega . L */
static double body_energy(const body *b, const double *X)
{
    if (b->motion != IMP_DYNAMIC) return 0;
    imp_vec3 P = v3_load(X + 7), L = v3_load(X + 10);
    return 0.5 * v3_dot(P, P) / b->mass + 0.5 * v3_dot(omega_of(b, X), L);
}

double imp_body_kinetic_energy(const imp_world *w, imp_id id) { BODY_OR(0); return body_energy(&w->bodies->body[i], w->bodies->state + BODY_DIM * i); }

double bodies_kinetic_energy(const imp_world *w)
{
    double e = 0;
    for (int i = 0; i < w->bodies->ids.count; i++) e += body_energy(&w->bodies->body[i], w->bodies->state + BODY_DIM * i);
    return e;
}

double bodies_potential_energy(const imp_world *w)
{
    double e = 0;
    for (int i = 0; i < w->bodies->ids.count; i++)
        if (w->bodies->body[i].motion == IMP_DYNAMIC)
            e -= w->bodies->body[i].mass * w->bodies->body[i].gravity_scale * v3_dot(w->settings.gravity, v3_load(w->bodies->state + BODY_DIM * i));
    return e;
}

/* the world pose and bounds of body i's shapes from its state */
void bodies_place_shapes(imp_world *w, int i)
{
    const body *b = &w->bodies->body[i];
    const double *X = w->bodies->state + BODY_DIM * i;
    for (int k = 0; k < b->nshapes; k++) shape_place(&w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]], X, b->com);
}

/* the same for one shape */
void bodies_place_shape(imp_world *w, shape *s)
{
    int i = bodies_dense(w, s->body);
    shape_place(s, w->bodies->state + BODY_DIM * i, w->bodies->body[i].com);
}

void imp_body_set_position(imp_world *w, imp_id id, imp_vec3 origin)
{
    BODY_OR();
    w->bodies->edits++;
    w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; /* touched by the script: awake */
    double *X = w->bodies->state + BODY_DIM * i;
    v3_store(X, v3_add(origin, quat_rotate(state_q(X), w->bodies->body[i].com)));
    bodies_place_shapes(w, i);
}

/* turn about the origin: the centre of mass moves with the orientation; omega is kept, so L follows */
void imp_body_set_orientation(imp_world *w, imp_id id, imp_quat q)
{
    BODY_OR();
    w->bodies->edits++;
    w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; /* touched by the script: awake */
    double *X = w->bodies->state + BODY_DIM * i;
    body *b = &w->bodies->body[i];
    imp_vec3 origin = imp_body_position(w, id);
    imp_vec3 omega = b->motion == IMP_DYNAMIC ? omega_of(b, X) : v3(0, 0, 0);
    q = quat_normalize(q);
    X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
    v3_store(X, v3_add(origin, quat_rotate(q, b->com)));
    if (b->motion == IMP_DYNAMIC) v3_store(X + 10, m3_mul_v(m3_rotate_tensor(quat_to_m3(q), b->Ibody), omega));
    bodies_place_shapes(w, i);
}

void imp_body_set_velocity(imp_world *w, imp_id id, imp_vec3 v)
{
    BODY_OR();
    w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; /* touched by the script: awake */
    body *b = &w->bodies->body[i];
    if (b->motion == IMP_DYNAMIC) v3_store(w->bodies->state + BODY_DIM * i + 7, v3_scale(v, b->mass));
    else if (b->motion == IMP_KINEMATIC) b->kin_v = v;
}

void imp_body_set_angular_velocity(imp_world *w, imp_id id, imp_vec3 omega)
{
    BODY_OR();
    w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; /* touched by the script: awake */
    body *b = &w->bodies->body[i];
    double *X = w->bodies->state + BODY_DIM * i;
    if (b->motion == IMP_DYNAMIC) v3_store(X + 10, m3_mul_v(m3_rotate_tensor(quat_to_m3(state_q(X)), b->Ibody), omega));
    else if (b->motion == IMP_KINEMATIC) b->kin_w = omega;
}

void imp_body_set_motion(imp_world *w, imp_id id, imp_motion m)
{
    BODY_OR();
    w->bodies->edits++;
    body *b = &w->bodies->body[i];
    if (m == b->motion) return;
    if (m != IMP_FIXED && !(b->mass > 0)) return; /* planes and meshes stay static */
    imp_vec3 v = imp_body_velocity(w, id), omega = imp_body_angular_velocity(w, id);
    b->motion = (uint8_t)m;
    b->inv_mass = m == IMP_DYNAMIC ? 1.0 / b->mass : 0;
    b->Ibody_inv = m == IMP_DYNAMIC ? m3_inverse(b->Ibody) : (imp_mat3){{{0}}};
    memset(w->bodies->state + BODY_DIM * i + 7, 0, 6 * sizeof(double));
    b->kin_v = b->kin_w = v3(0, 0, 0);
    if (m != IMP_FIXED) imp_body_set_velocity(w, id, v), imp_body_set_angular_velocity(w, id, omega);
}

void imp_body_set_mass(imp_world *w, imp_id id, double m)
{
    BODY_OR();
    body *b = &w->bodies->body[i];
    if (!(m > 0) || !isfinite(m) || !(b->mass > 0)) return;
    double f = m / b->mass;
    double *X = w->bodies->state + BODY_DIM * i;
    b->mass = m;
    b->Ibody = m3_scale(b->Ibody, f);
    b->principal = rot_principal(b->Ibody);
    if (b->motion == IMP_DYNAMIC) {
        b->inv_mass = 1.0 / m;
        b->Ibody_inv = m3_inverse(b->Ibody);
        for (int k = 7; k < 13; k++) X[k] *= f; /* P = M v, L = I omega: the velocities are kept */
    }
    for (int k = 0; k < b->nshapes; k++) {
        shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        s->mass *= f, s->inertia = m3_scale(s->inertia, f);
    }
}

void imp_body_apply_force(imp_world *w, imp_id id, imp_vec3 f, imp_vec3 at)
{
    BODY_OR();
    body *b = &w->bodies->body[i];
    b->force = v3_add(b->force, f);
    b->torque = v3_add(b->torque, v3_cross(v3_sub(at, v3_load(w->bodies->state + BODY_DIM * i)), f));
}

void imp_body_apply_central_force(imp_world *w, imp_id id, imp_vec3 f) { BODY_OR(); w->bodies->body[i].force = v3_add(w->bodies->body[i].force, f); }
void imp_body_apply_torque(imp_world *w, imp_id id, imp_vec3 tau) { BODY_OR(); w->bodies->body[i].torque = v3_add(w->bodies->body[i].torque, tau); }

void imp_body_apply_impulse(imp_world *w, imp_id id, imp_vec3 j, imp_vec3 at)
{
    BODY_OR();
    w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; /* touched by the script: awake */
    if (w->bodies->body[i].motion != IMP_DYNAMIC) return;
    double *X = w->bodies->state + BODY_DIM * i;
    v3_accum(X + 7, j);
    v3_accum(X + 10, v3_cross(v3_sub(at, v3_load(X)), j));
}

void imp_body_aabb(const imp_world *w, imp_id id, imp_vec3 *lo, imp_vec3 *hi)
{
    BODY_OR();
    const body *b = &w->bodies->body[i];
    *lo = v3(INFINITY, INFINITY, INFINITY), *hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int k = 0; k < b->nshapes; k++) {
        const shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        lo->x = fmin(lo->x, s->lo.x), lo->y = fmin(lo->y, s->lo.y), lo->z = fmin(lo->z, s->lo.z);
        hi->x = fmax(hi->x, s->hi.x), hi->y = fmax(hi->y, s->hi.y), hi->z = fmax(hi->z, s->hi.z);
    }
}

/* The bodies' damping, dP/dt = -c P and dL/dt = -c L, split off the ODE step and taken exactly: P and L
 * times exp(-c h) after it (inside the derivative an explicit solver would blow up once c h passes ~2.8,
 * and c goes up to 1e6). skip (may be NULL): bodies whose velocities the impulse stage already damped. */
void bodies_damp(imp_world *w, double h, const uint8_t *skip)
{
    for (int i = 0; i < w->bodies->ids.count; i++) {
        const body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC || b->asleep || (skip && skip[i]) || (b->lin_damp == 0 && b->ang_damp == 0)) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        v3_store(X + 7, v3_scale(v3_load(X + 7), exp(-b->lin_damp * h)));
        v3_store(X + 10, v3_scale(v3_load(X + 10), exp(-b->ang_damp * h)));
    }
}

void bodies_clear_accumulators(imp_world *w)
{
    for (int i = 0; i < w->bodies->ids.count; i++) w->bodies->body[i].force = w->bodies->body[i].torque = v3(0, 0, 0);
}

/* put back bodies whose state went non-finite, at rest; returns how many */
/* finite, within IMP_GUARD_COORD of the origin, slower than IMP_GUARD_SPEED and IMP_GUARD_SPIN (the
 * spin bounded by |I_body^-1|_F |L|, which holds in any frame), and q of a norm the step keeps near 1 */
static bool body_in_range(const body *b, const double *X)
{
    for (int k = 0; k < BODY_DIM; k++)
        if (!isfinite(X[k])) return false;
    const imp_vec3 x = v3_load(X), P = v3_load(X + 7), L = v3_load(X + 10);
    const double q2 = X[3] * X[3] + X[4] * X[4] + X[5] * X[5] + X[6] * X[6];
    double inv2 = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) inv2 += b->Ibody_inv.m[r][c] * b->Ibody_inv.m[r][c];
    return fabs(x.x) <= IMP_GUARD_COORD && fabs(x.y) <= IMP_GUARD_COORD && fabs(x.z) <= IMP_GUARD_COORD &&
           v3_len(P) * b->inv_mass <= IMP_GUARD_SPEED && sqrt(inv2) * v3_len(L) <= IMP_GUARD_SPIN && q2 > 0.25 && q2 < 4;
}

int bodies_nan_guard(imp_world *w, const double *x0)
{
    int bad = 0, first = -1;
    for (int i = 0; i < w->bodies->ids.count; i++) {
        double *X = w->bodies->state + BODY_DIM * i;
        if (body_in_range(&w->bodies->body[i], X)) continue;
        if (first < 0) first = i;
        bad++;
        memcpy(X, x0 + BODY_DIM * i, 7 * sizeof(double));
        memset(X + 7, 0, 6 * sizeof(double));
        w->bodies->body[i].kin_v = w->bodies->body[i].kin_w = v3(0, 0, 0);
        bodies_place_shapes(w, i);
    }
    if (bad) {
        char msg[256];
        snprintf(msg, sizeof msg, "NaN guard: %d bod%s went non-finite (or past %g m, %g m/s, %g rad/s) at t = %.4f s (first: body #%u); "
                 "they were put back and stopped", bad, bad == 1 ? "y" : "ies", IMP_GUARD_COORD, IMP_GUARD_SPEED, IMP_GUARD_SPIN,
                 w->time, ids_of(&w->bodies->ids, first).index);
        if (w->error[0]) strncat(w->error, "; ", sizeof w->error - strlen(w->error) - 1);
        strncat(w->error, msg, sizeof w->error - strlen(w->error) - 1);
    }
    return bad;
}

/* ---- the bodies as an ODE system -------------------------------------------------------------------- */

static void bodies_get_state(void *ctx, double *X)
{
    imp_world *w = ((const body_ode *)ctx)->w;
    memcpy(X, w->bodies->state, sizeof(double) * BODY_DIM * (size_t)w->bodies->ids.count);
}

/* install the state and renormalize every q in the store (the state, not a copy) */
static void bodies_set_state(void *ctx, const double *X)
{
    imp_world *w = ((const body_ode *)ctx)->w;
    const int n = w->bodies->ids.count;
    memcpy(w->bodies->state, X, sizeof(double) * BODY_DIM * (size_t)n);
    for (int i = 0; i < n; i++) {
        double *q = w->bodies->state + BODY_DIM * i + 3;
        double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (l > 0 && isfinite(l)) q[0] /= l, q[1] /= l, q[2] /= l, q[3] /= l;
    }
}

/* the derivative of the bodies [lo, hi): each body's own, so chunks of bodies run on both threads */
typedef struct deriv_job {
    const body_ode *o;
    const double *X;
    double *dX;
} deriv_job;

static void deriv_part(void *ctx, int chunk)
{
    const deriv_job *job = ctx;
    const body_ode *o = job->o;
    const double *X = job->X;
    double *dX = job->dX;
    imp_world *w = o->w;
    const imp_vec3 g = w->settings.gravity;
    const double kd = w->settings.drag;
    const int n = w->bodies->ids.count;
    int lo, hi;
    par_range(n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        const body *b = &w->bodies->body[i];
        const double *x = X + BODY_DIM * i;
        double *d = dX + BODY_DIM * i;
        if (b->motion == IMP_FIXED) {
            memset(d, 0, BODY_DIM * sizeof(double));
            continue;
        }
        imp_quat q = state_q(x);
        imp_vec3 v, omega;
        if (b->motion == IMP_KINEMATIC) {
            v = b->kin_v, omega = b->kin_w;
            memset(d + 7, 0, 6 * sizeof(double));
        } else {
            v = v3_scale(v3_load(x + 7), b->inv_mass);
            omega = omega_of(b, x);
            if (o->held && o->held[i]) {
                /* the impulse mode already applied this body's forces (S1: velocities, then positions) */
                memset(d + 7, 0, 6 * sizeof(double));
            } else {
                v3_store(d + 7, v3_add(b->force, v3_sub(v3_scale(g, b->mass * b->gravity_scale), v3_scale(v, kd))));
                v3_store(d + 10, b->torque); /* (the body's damping: bodies_damp, after the step) */
            }
        }
        v3_store(d, v);
        /* dq/dt = 1/2 [0, omega] q */
        imp_quat dq = quat_mul(quat(0, omega.x, omega.y, omega.z), q);
        d[3] = 0.5 * dq.w, d[4] = 0.5 * dq.x, d[5] = 0.5 * dq.y, d[6] = 0.5 * dq.z;
    }
}

/* below this many bodies a derivative runs on the calling thread alone (same numbers either way) */
#define DERIV_PARALLEL_MIN 256

static int bodies_deriv(void *ctx, double t, const double *X, double *dX)
{
    (void)t;
    const body_ode *o = ctx;
    imp_world *w = o->w;
    deriv_job job = {o, X, dX};
    if (w->bodies->ids.count >= DERIV_PARALLEL_MIN) par_for(deriv_part, &job, PAR_CHUNKS);
    else
        for (int c = 0; c < PAR_CHUNKS; c++) deriv_part(&job, c);
    /* the exact contact mode: the resting contact forces, with the external forces in place (trap 9) */
    return o->contact_forces ? o->contact_forces(w, X, dX) : 0;
}

void imp_body_refresh_all(imp_world *w)
{
    for (int i = 0; i < w->bodies->ids.count; i++) bodies_place_shapes(w, i);
}

imp_ode_system bodies_ode(body_ode *o)
{
    imp_ode_system sys = {BODY_DIM * o->w->bodies->ids.count, o, bodies_get_state, bodies_set_state, bodies_deriv};
    return sys;
}

/* the bodies with their applied forces alone */
imp_ode_system imp_body_ode(imp_world *w) { return bodies_ode(&w->bodies->plain); }

/* ---- impulse-mode properties of bodies (the solver is in impulse.c) ----------------------------------- */
bool imp_body_asleep(const imp_world *w, imp_id id) { BODY_OR(false); return w->bodies->body[i].asleep; }
void imp_body_wake(imp_world *w, imp_id id) { BODY_OR(); w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0; }
bool imp_body_bullet(const imp_world *w, imp_id id) { BODY_OR(false); return w->bodies->body[i].bullet; }
void imp_body_damping(const imp_world *w, imp_id id, double *linear, double *angular)
{
    *linear = *angular = 0;
    BODY_OR();
    *linear = w->bodies->body[i].lin_damp, *angular = w->bodies->body[i].ang_damp;
}
bool imp_body_set_damping(imp_world *w, imp_id id, double linear, double angular)
{
    BODY_OR(false);
    if (!(linear >= 0 && linear <= IMP_MAX_DAMPING && angular >= 0 && angular <= IMP_MAX_DAMPING)) {
        world_error(w, "damping must be a number in 0 .. %g 1/s (got %g, %g)", IMP_MAX_DAMPING, linear, angular);
        return false;
    }
    w->bodies->body[i].lin_damp = linear, w->bodies->body[i].ang_damp = angular;
    return true;
}
void imp_body_set_bullet(imp_world *w, imp_id id, bool on) { BODY_OR(); w->bodies->body[i].bullet = on; }
double imp_body_gravity_scale(const imp_world *w, imp_id id)
{
    const int i = ids_lookup(&w->bodies->ids, id);
    return i < 0 ? 0 : w->bodies->body[i].gravity_scale;
}
bool imp_body_set_gravity_scale(imp_world *w, imp_id id, double scale)
{
    const int i = ids_lookup(&w->bodies->ids, id);
    if (i < 0) return false;
    if (!(fabs(scale) <= IMP_MAX_GRAVITY_SCALE)) {
        world_error(w, "gravity_scale must be a finite number within +-%g (got %g)", IMP_MAX_GRAVITY_SCALE, scale);
        return false;
    }
    if (scale != w->bodies->body[i].gravity_scale) w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0;
    w->bodies->body[i].gravity_scale = scale;
    return true;
}

void imp_body_shape_material(const imp_world *w, imp_id id, int index, double *friction, double *static_friction, double *restitution)
{
    BODY_OR();
    const body *b = &w->bodies->body[i];
    if (index < 0 || index >= b->nshapes) return;
    const shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[index]]];
    *friction = s->friction, *static_friction = s->static_friction >= 0 ? s->static_friction : s->friction;
    *restitution = s->restitution;
}

void imp_body_set_material(imp_world *w, imp_id id, int index, double friction, double static_friction, double restitution)
{
    BODY_OR();
    const body *b = &w->bodies->body[i];
    for (int k = 0; k < b->nshapes; k++) {
        if (index >= 0 && k != index) continue;
        shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
        if (friction >= 0) s->friction = friction;
        if (static_friction >= 0) s->static_friction = static_friction;
        if (restitution >= 0) s->restitution = restitution;
    }
}

static const shape *body_shape_at(const imp_world *w, imp_id id, int index)
{
    const int i = ids_lookup(&w->bodies->ids, id);
    if (i < 0 || index < 0 || index >= w->bodies->body[i].nshapes) return NULL;
    return &w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[index]]];
}
bool imp_body_shape_sensor(const imp_world *w, imp_id id, int index)
{
    const shape *s = body_shape_at(w, id, index);
    return s && s->sensor;
}
bool imp_body_shape_pre_solve(const imp_world *w, imp_id id, int index)
{
    const shape *s = body_shape_at(w, id, index);
    return s && s->pre_solve;
}

int imp_body_shape_count(const imp_world *w, imp_id id)
{
    int i = ids_lookup(&w->bodies->ids, id);
    return i < 0 ? 0 : w->bodies->body[i].nshapes;
}

imp_shape_info imp_body_shape(const imp_world *w, imp_id id, int index)
{
    imp_shape_info info;
    memset(&info, 0, sizeof info);
    int i = ids_lookup(&w->bodies->ids, id);
    if (i < 0 || index < 0 || index >= w->bodies->body[i].nshapes) return info;
    const shape *s = &w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[index]]];
    info.type = s->type;
    info.position = s->wpos;
    info.rotation = s->wrot;
    info.radius = s->radius;
    info.half_height = s->half_height;
    info.half = s->half;
    info.mass = s->mass;
    info.volume = s->volume;
    info.center = s->center;
    info.inertia = s->inertia;
    if (s->type == IMP_SHAPE_PLANE) {
        geom g;
        shape_geom(s, &g);
        info.normal = g.normal, info.offset = g.offset;
    }
    if (s->hull) {
        info.vertex_count = s->hull->nv, info.face_count = s->hull->nf, info.triangle_count = s->hull->ntri;
        info.vertices = s->hull->v, info.triangles = s->hull->tris;
    }
    if (s->mesh) {
        info.vertex_count = s->mesh->nv, info.triangle_count = s->mesh->nt;
        info.vertices = s->mesh->v, info.triangles = s->mesh->tri;
    }
    return info;
}

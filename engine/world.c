/* world.c: imp_world_step, the pipeline read top to bottom (making a world is world_store.c's).
 *
 * The engine in layers; each file calls only files of the layers below it (and of its own layer
 * below it), never one above:
 *
 *   world.c                   the step: pre-solve -> particles -> bodies -> particle contacts -> contacts
 *                             -> finish
 *   snapshot.c                the whole state in and out (rewind, replay, files)
 *   world_store.c             making and unmaking a world   step_undo.c (the undo of a failing step)
 *   rigid-body contact modes  impulse.c (S1's stages)   contact_qp.c (exact contact)   toi.c
 *                             joint*.c (joints; joint_force.c their forces and breaking)   island.c
 *                             (contact graph, sleeping)   solver_bodies.h
 *   particle dynamics         particle_contact.c   particle_system.c   implicit.c   tinkertoy.c
 *                             curve.c   forces.c   cloth.c   assemble.c   particle_attach.c
 *                             particle_collide.c   particle_shape.c
 *   collision                 query.c   query_cast.c   contact.c   sensor.c   presolve.c   broadphase.c
 *                             narrowphase.c
 *   stores                    body.c   shape.c   collider.c   particles.c
 *   kernels                   ode.c   lcp.c   amg.c   cg.c   ic0.c   sparse.c   dense.h   rotation.c   hull.c
 *                             gjk.c   mass.c   ids.c   parallel.c   imp_math.h
 *   the layout                world_parts.h (the world's parts)   step.h (the step context)
 *                             impetus.h (the public C API)
 *
 * imp_world_step(world, dt) makes the step context (step.h) and calls the stages in order:
 *   pre-solve   the script's pre_solve callback on the contacts the step starts from (presolve.c), the
 *               one callback before anything moves: an error returns with the world as it was
 *   particles   resting contacts -> integrate (the chosen ODE solver; forces.c, then the constraint
 *               forces of tinkertoy.c; or "implicit": one backward Euler step of implicit.c) -> curve
 *               particles onto their curves -> collisions inside the step -> constrained particles
 *               projected back (particle_system.c)
 *   bodies      the contact mode (impulse.c: S1's collisions -> velocities -> contacts and joints level
 *               by level -> shock propagation -> positions, bullets swept after; contact_qp.c:
 *               collision impulses, the resting contact forces in every derivative evaluation, the
 *               step cut at each time of impact); bodies that touch nothing move by their ODE (body.c)
 *   particle contacts  attached particles onto their body points; particles against the bodies' shapes
 *               over the step's motion of both, and against each other; the bodies take the opposite
 *               impulses into their momenta (particle_contact.c)
 *   contacts    broad phase -> narrow phase -> manifolds -> begin/end events (contact.c), after the
 *               bodies moved, so the contacts a script reads describe the state it sees
 *   finish      the clock; the NaN guard (a particle or body that went non-finite is put back, at
 *               rest, and reported)
 *
 * Scripts are called at the start (pre_solve) and in the particle stage, before the bodies move; a
 * failing callback aborts the step and what it may have changed is put back from the undo kept at the
 * start of the step (step_undo.c, and the particles' own start state: particle_system.c), or from a
 * snapshot taken before a step that collides before pre_solve, so the world is bit for bit as it was
 * before the call, caches and warm starts included. Each stage is timed into the
 * step's profile. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "broadphase.h"
#include "cloth.h"
#include "collider.h"
#include "contact.h"
#include "contact_qp.h"
#include "curve.h"
#include "forces.h"
#include "ids.h"
#include "imp_math.h"
#include "implicit.h"
#include "impulse.h"
#include "joint.h"
#include "joint_force.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_contact.h"
#include "particle_system.h"
#include "particles.h"
#include "presolve.h"
#include "sensor.h"
#include "shape.h"
#include "snapshot.h"
#include "step.h"
#include "step_undo.h"
#include "tinkertoy.h"
#include "toi.h"
#include "world_parts.h"

/* ---- the stages -------------------------------------------------------------------------------------- */

/* the bodies: the contact mode's stages (impulse.c: S1's collisions -> velocities -> contacts and joints
 * level by level -> shock propagation -> positions, bullets swept after; contact_qp.c: collision
 * impulses, the resting contact forces inside every derivative evaluation, the step cut at each time
 * of impact); bodies that touch nothing move by the world's ODE solver */
static void bodies_step(imp_step *s)
{
    imp_world *w = s->w;
    const double t0 = step_clock_ms();
    /* "implicit" is the particles' integrator (implicit.c: cloth and hair); the bodies' ODE has no
     * stiff forces, and ode.c's generic backward Euler solves a dense (13 n)^2 Jacobian, O(n^3) a
     * step for n bodies: under "implicit" the bodies step by RK4 */
    w->body_solver.method = w->settings.integrator == IMP_IMPLICIT ? IMP_RK4 : w->settings.integrator;
    w->body_solver.tolerance = w->settings.tolerance;
    /* the contacts the stages start from describe the state at the start of the step: found again
     * when bodies came, went or were moved by a script since the last collide stage */
    if (!contacts_current(w)) contacts_update(w);
    joints_springs_kick(w, s->dt); /* springs between bodies: their impulse over the step (joint_force.c) */
    if (w->settings.contact_mode == IMP_CONTACT_QP) {
        qp_step(s);
        if (toi_bullets(w, s->bodies0)) s->collided = false; /* a bullet put back: the contacts are found again */
    } else impulse_step(s);
    bodies_clear_accumulators(w);
    s->profile->bodies = step_clock_ms() - t0;
}

/* broad phase -> narrow phase -> manifolds -> begin/end events, after the bodies moved, so the
 * contacts a script reads describe the state it sees; unless the bodies' stage collided at the step's
 * final state already (the exact mode, in its time-of-impact search) */
static void contacts_step(const imp_step *s)
{
    imp_world *w = s->w;
    const double t0 = step_clock_ms();
    if (!s->collided) contacts_update(w);
    s->profile->contacts = step_clock_ms() - t0;
    s->profile->pairs = w->contacts->pair_count;
    s->profile->manifolds = w->contacts->manifold_count;
}

/* lock the world, and keep the bodies' states and the undo of the particle stage at the start of the
 * step */
static imp_step step_begin(imp_world *w, double dt, imp_profile *profile)
{
    const int n = w->bodies->ids.count;
    if (n > w->bstate0_cap) {
        w->bstate0_cap = n + n / 2 + 16;
        free(w->bstate0);
        w->bstate0 = ids_grow(NULL, BODY_DIM * sizeof(double), w->bstate0_cap);
    }
    if (n) memcpy(w->bstate0, w->bodies->state, BODY_DIM * sizeof(double) * (size_t)n);
    w->error[0] = 0;
    step_undo_keep(w);
    w->locked = true;
    contacts_clear_events(w);
    return (imp_step){w, w->time, dt, 1 / dt, profile, w->bstate0, false};
}

/* a callback failed, or the adaptive integrator gave up: the world as it was before the step, from
 * the snapshot taken before it when there is one (the step collided before pre_solve), else from the
 * step's undo (particles: whether the particle stage ran); the error message stays */
static void step_undo(imp_world *w, imp_snapshot *before, bool particles)
{
    w->locked = false;
    if (before) {
        char error[sizeof w->error];
        memcpy(error, w->error, sizeof error);
        imp_snapshot_restore(w, before);
        memcpy(w->error, error, sizeof error);
        imp_snapshot_free(before);
        return;
    }
    if (particles) particles_undo(w);
    step_undo_put_back(w);
}

/* the clock moves on; non-finite particles and bodies are put back and reported */
static imp_status step_finish(const imp_step *s, double t_start)
{
    imp_world *w = s->w;
    w->time += s->dt;
    w->steps++;
    w->locked = false;
    int bad = particles_nan_guard(w);
    bad += bodies_nan_guard(w, s->bodies0);
    s->profile->total = step_clock_ms() - t_start;
    w->profile = *s->profile;
    return bad ? IMP_ERR_NAN : IMP_OK;
}

imp_status imp_world_step(imp_world *w, double dt)
{
    if (w->locked) {
        world_error(w, "world:step called from inside the world's own step");
        return IMP_ERR_LOCKED;
    }
    if (!(dt > 0) || !isfinite(dt)) {
        world_error(w, "step: dt must be a positive number (got %g)", dt);
        return IMP_ERR_ARG;
    }
    if (w->settings.integrator == IMP_IMPLICIT && tinker_active(w)) {
        world_error(w, "step: constraints and curve particles need an explicit integrator (\"rk4\", "
                       "\"midpoint\", \"euler\" or \"adaptive\"); the implicit one does not solve them");
        return IMP_ERR_ARG;
    }
    if (w->presolve && w->presolve->fn && w->settings.contact_mode == IMP_CONTACT_QP) {
        world_error(w, "step: the exact mode (\"qp\") cannot take a pre_solve callback: it cuts the step at each time of impact "
                       "and collides again, so a step has no one set of contacts to modify; use the impulse mode or remove pre_solve");
        return IMP_ERR_ARG;
    }
    const char *refusal = w->settings.contact_mode == IMP_CONTACT_QP ? joints_exact_refusal(w) : NULL;
    if (refusal) {
        world_error(w, "step: %s", refusal);
        return IMP_ERR_ARG;
    }
    const double t_start = step_clock_ms();
    imp_profile profile = {0};
    /* pre-solve: the script modifies the contacts the step starts from before anything moves. When the
     * script changed the world since the last step, the contacts are collided first, which changes the
     * contact set, the broad phase and the sensors: a snapshot then keeps the world for a callback that
     * fails in this step (pre_solve's or the particle stage's); otherwise the step's undo puts back the
     * events step_begin cleared */
    const bool presolve = w->presolve && w->presolve->fn;
    imp_snapshot *before = presolve && !contacts_current(w) ? imp_snapshot_take(w) : NULL;
    imp_step s = step_begin(w, dt, &profile);
    if (presolve) {
        if (before) contacts_update(w);
        if (presolve_run(w)) {
            if (!w->error[0]) world_error(w, "the pre_solve callback failed");
            step_undo(w, before, false);
            return IMP_ERR_CALLBACK;
        }
    }
    particles_step_begin(&s);   /* the particles' state at the start, for the undo */
    particle_contacts_rest(&s); /* the resting contacts the particle stage starts from */
    const int rc = particles_step(&s);
    if (rc == IMP_ODE_SUBSTEPS) { /* the adaptive integrator gave up: the world as it was before the step */
        step_undo(w, before, true);
        world_error(w, "step: the adaptive integrator would need more than %ld steps to reach t + dt (the tolerance %g is out "
                       "of reach at dt = %g: a stiff system?); the step was not taken", w->particle_system->solver.max_substeps,
                    w->settings.tolerance, dt);
        return IMP_ERR_STEP;
    }
    if (rc) { /* a callback failed: the bodies are untouched, the particle stage undone */
        if (!w->error[0]) world_error(w, "a callback failed during the step");
        step_undo(w, before, true);
        return IMP_ERR_CALLBACK;
    }
    imp_snapshot_free(before);
    particle_contacts_rest_give(&s); /* the bodies carry the particles resting on them in their stage */
    const long gave_up = w->body_solver.gave_up;
    joints_forces_begin(w);
    bodies_step(&s);
    particle_contacts_step(&s);
    contacts_step(&s);
    imp_status status = step_finish(&s, t_start);
    joints_forces_finish(w, dt); /* (unlocked: a joint past its break force or torque is destroyed) */
    if (status == IMP_OK && w->body_solver.gave_up != gave_up) {
        world_error(w, "step: the adaptive integrator would need more than %ld steps to reach t + dt (the tolerance %g is out "
                       "of reach at dt = %g); the bodies' motion under forces was left out of this step", w->body_solver.max_substeps,
                    w->settings.tolerance, dt);
        status = IMP_ERR_STEP;
    }
    return status;
}

const char *imp_world_error(const imp_world *w) { return w->error; }
bool imp_world_locked(const imp_world *w) { return w->locked; }
double imp_world_time(const imp_world *w) { return w->time; }
long imp_world_step_count(const imp_world *w) { return w->steps; }
imp_profile imp_world_profile(const imp_world *w) { return w->profile; }
imp_vec3 imp_world_gravity(const imp_world *w) { return w->settings.gravity; }
void imp_world_set_gravity(imp_world *w, imp_vec3 g) { w->settings.gravity = g; }
double imp_world_drag(const imp_world *w) { return w->settings.drag; }
void imp_world_set_drag(imp_world *w, double kd) { w->settings.drag = kd; }
imp_method imp_world_integrator(const imp_world *w) { return w->settings.integrator; }
void imp_world_set_integrator(imp_world *w, imp_method m) { w->settings.integrator = m; w->particle_system->solver.h = 0; }
double imp_world_tolerance(const imp_world *w) { return w->settings.tolerance; }
void imp_world_set_tolerance(imp_world *w, double tol) { w->settings.tolerance = tol; }

double imp_world_kinetic_energy(const imp_world *w)
{
    double e = 0;
    for (int i = 0; i < w->particles->ids.count; i++) {
        if (w->particles->motion[i] == IMP_FIXED) continue;
        imp_vec3 v = v3_load(w->particles->v + 3 * i);
        e += 0.5 * w->particles->mass[i] * v3_dot(v, v);
    }
    return e + bodies_kinetic_energy(w);
}

/* P = sum m v (particles) + sum P (bodies); L about the origin = sum x x m v + sum (x x P + L) */
void imp_world_momentum(const imp_world *w, imp_vec3 *linear, imp_vec3 *angular)
{
    imp_vec3 P = v3(0, 0, 0), L = v3(0, 0, 0);
    for (int i = 0; i < w->particles->ids.count; i++) {
        if (w->particles->motion[i] == IMP_FIXED) continue;
        imp_vec3 p = v3_scale(v3_load(w->particles->v + 3 * i), w->particles->mass[i]);
        P = v3_add(P, p);
        L = v3_add(L, v3_cross(v3_load(w->particles->x + 3 * i), p));
    }
    for (int i = 0; i < w->bodies->ids.count; i++) {
        if (w->bodies->body[i].motion != IMP_DYNAMIC) continue;
        const double *X = w->bodies->state + BODY_DIM * i;
        imp_vec3 p = v3_load(X + 7);
        P = v3_add(P, p);
        L = v3_add(L, v3_add(v3_cross(v3_load(X), p), v3_load(X + 10)));
    }
    *linear = P, *angular = L;
}

/* gravitational potential -m g . x (zero at the origin) plus the springs' elastic energy */
double imp_world_potential_energy(const imp_world *w)
{
    double e = 0;
    for (int i = 0; i < w->particles->ids.count; i++) {
        if (w->particles->motion[i] == IMP_FIXED) continue;
        e -= w->particles->mass[i] * v3_dot(w->settings.gravity, v3_load(w->particles->x + 3 * i));
    }
    return e + forces_spring_energy(w) + bodies_potential_energy(w);
}

/* contact response settings (the solver is impulse.c) */
void imp_world_set_contact_mode(imp_world *w, imp_contact_mode m) { w->settings.contact_mode = m; }
imp_contact_mode imp_world_contact_mode(const imp_world *w) { return w->settings.contact_mode; }
void imp_world_set_planar(imp_world *w, bool planar) { w->settings.planar = planar; }
bool imp_world_planar(const imp_world *w) { return w->settings.planar; }
void imp_world_set_iterations(imp_world *w, int velocity, int position)
{
    if (velocity >= 1 && velocity <= 1000) w->settings.velocity_iterations = velocity;
    if (position >= 0 && position <= 1000) w->settings.position_iterations = position;
}
bool imp_world_set_restitution_threshold(imp_world *w, double speed)
{
    if (!(speed >= 0) || !isfinite(speed)) return false;
    w->settings.restitution_threshold = speed;
    return true;
}
double imp_world_restitution_threshold(const imp_world *w) { return w->settings.restitution_threshold; }
void imp_world_iterations(const imp_world *w, int *velocity, int *position) { *velocity = w->settings.velocity_iterations, *position = w->settings.position_iterations; }
void imp_world_set_sleeping(imp_world *w, bool on)
{
    w->settings.sleeping = on;
    if (!on) for (int i = 0; i < w->bodies->ids.count; i++) w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0;
}
bool imp_world_sleeping(const imp_world *w) { return w->settings.sleeping; }

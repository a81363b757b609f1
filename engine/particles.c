/* particles.c: the particle store (S3 "Particle system dynamics") and the particle system as an ODE.
 *
 * Particles are kept as structure of arrays, dense, so the solver's state vector is two memcpys:
 *
 *     X = [ x_1 .. x_n | v_1 .. v_n ]       dX/dt = [ v_1 .. v_n | f_1/m_1 .. f_n/m_n ]
 *
 * Fixed particles have dX/dt = 0. Kinematic (script-controlled) particles move with their velocity
 * and ignore forces; their velocity is what the script set, so velocity-dependent forces (damped
 * springs) see them correctly, as S3 asks of controlled particles. */
#include <string.h>

#include "ids.h"
#include "imp_math.h"
#include "particles.h"
#include "world_parts.h"

imp_particle_def imp_particle_def_default(void)
{
    imp_particle_def d;
    memset(&d, 0, sizeof d);
    d.mass = 1.0;
    d.radius = 0.05;
    d.motion = IMP_DYNAMIC;
    d.restitution = 0;
    d.friction = 0.5;
    d.color[0] = 0.95f, d.color[1] = 0.55f, d.color[2] = 0.15f, d.color[3] = 1.0f;
    return d;
}

static void store_reserve(particle_store *p, int n)
{
    if (n <= p->cap) return;
    int cap = p->cap ? p->cap : 64;
    while (cap < n) cap *= 2;
    p->x = ids_grow(p->x, 3 * sizeof(double), cap);
    p->v = ids_grow(p->v, 3 * sizeof(double), cap);
    p->mass = ids_grow(p->mass, sizeof(double), cap);
    p->inv_mass = ids_grow(p->inv_mass, sizeof(double), cap);
    p->radius = ids_grow(p->radius, sizeof(double), cap);
    p->restitution = ids_grow(p->restitution, sizeof(double), cap);
    p->friction = ids_grow(p->friction, sizeof(double), cap);
    p->motion = ids_grow(p->motion, 1, cap);
    p->color = ids_grow(p->color, 4 * sizeof(float), cap);
    p->cap = cap;
}

imp_id imp_particle_create(imp_world *w, const imp_particle_def *def)
{
    particle_store *p = w->particles;
    store_reserve(p, p->ids.count + 1);
    imp_id id = ids_alloc(&p->ids);
    w->particles->topology++;
    int i = p->ids.count - 1;
    v3_store(p->x + 3 * i, def->position);
    v3_store(p->v + 3 * i, def->motion == IMP_FIXED ? v3(0, 0, 0) : def->velocity);
    p->mass[i] = def->mass > 0 ? def->mass : 1.0;
    p->inv_mass[i] = 1.0 / p->mass[i];
    p->radius[i] = def->radius >= 0 ? def->radius : 0;
    p->restitution[i] = def->restitution >= 0 && def->restitution <= 1 ? def->restitution : 0;
    p->friction[i] = def->friction >= 0 && isfinite(def->friction) ? def->friction : 0.5;
    p->motion[i] = (uint8_t)def->motion;
    memcpy(p->color + 4 * i, def->color, 4 * sizeof(float));
    return id;
}

/* take particle id out of the store: the last one moves into its place. Whatever holds on to it
 * (springs, constraints, cloth) must have let go first (imp_particle_destroy, particle_system.c). */
void particles_remove(imp_world *w, imp_id id)
{
    particle_store *p = w->particles;
    int d = ids_remove(&p->ids, id);
    p->topology++;
    p->edits++;
    int last = p->ids.count;
    if (d != last) {
        memcpy(p->x + 3 * d, p->x + 3 * last, 3 * sizeof(double));
        memcpy(p->v + 3 * d, p->v + 3 * last, 3 * sizeof(double));
        p->mass[d] = p->mass[last];
        p->inv_mass[d] = p->inv_mass[last];
        p->radius[d] = p->radius[last];
        p->restitution[d] = p->restitution[last];
        p->friction[d] = p->friction[last];
        p->motion[d] = p->motion[last];
        memcpy(p->color + 4 * d, p->color + 4 * last, 4 * sizeof(float));
    }
}

bool imp_particle_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->particles->ids, id) >= 0; }

int particles_slot_dense(const imp_world *w, uint32_t slot) { return (int)w->particles->ids.slot_dense[slot]; }

/* Accessors: callers check validity first (the Lua binding does); a stale id reads particle 0's
 * slot harmlessly only if one exists, so guard with -1 -> zero values. */
#define DENSE_OR(ret)                          \
    int i = ids_lookup(&w->particles->ids, id);         \
    if (i < 0) return ret

imp_vec3 imp_particle_position(const imp_world *w, imp_id id) { DENSE_OR(v3(0, 0, 0)); return v3_load(w->particles->x + 3 * i); }
imp_vec3 imp_particle_velocity(const imp_world *w, imp_id id) { DENSE_OR(v3(0, 0, 0)); return v3_load(w->particles->v + 3 * i); }
double imp_particle_mass(const imp_world *w, imp_id id) { DENSE_OR(0); return w->particles->mass[i]; }
double imp_particle_radius(const imp_world *w, imp_id id) { DENSE_OR(0); return w->particles->radius[i]; }
imp_motion imp_particle_motion(const imp_world *w, imp_id id) { DENSE_OR(IMP_DYNAMIC); return (imp_motion)w->particles->motion[i]; }

void imp_particle_color(const imp_world *w, imp_id id, float rgba[4])
{
    DENSE_OR();
    memcpy(rgba, w->particles->color + 4 * i, 4 * sizeof(float));
}

/* a curve particle's position and velocity follow its coordinate u: set that instead */
void imp_particle_set_position(imp_world *w, imp_id id, imp_vec3 x)
{
    DENSE_OR();
    if (w->particles->motion[i] == IMP_CURVE) return;
    v3_store(w->particles->x + 3 * i, x);
    w->particles->edits++;
}

void imp_particle_set_velocity(imp_world *w, imp_id id, imp_vec3 v)
{
    DENSE_OR();
    if (w->particles->motion[i] != IMP_FIXED && w->particles->motion[i] != IMP_CURVE) v3_store(w->particles->v + 3 * i, v);
}

void imp_particle_set_mass(imp_world *w, imp_id id, double m)
{
    DENSE_OR();
    if (m > 0) w->particles->mass[i] = m, w->particles->inv_mass[i] = 1.0 / m;
}

void imp_particle_set_radius(imp_world *w, imp_id id, double r) { DENSE_OR(); if (r >= 0) w->particles->radius[i] = r; }
double imp_particle_restitution(const imp_world *w, imp_id id) { DENSE_OR(0); return w->particles->restitution[i]; }
double imp_particle_friction(const imp_world *w, imp_id id) { DENSE_OR(0); return w->particles->friction[i]; }

bool imp_particle_set_restitution(imp_world *w, imp_id id, double e)
{
    DENSE_OR(false);
    if (!(e >= 0 && e <= 1)) return false;
    w->particles->restitution[i] = e;
    return true;
}

bool imp_particle_set_friction(imp_world *w, imp_id id, double mu)
{
    DENSE_OR(false);
    if (!(mu >= 0) || !isfinite(mu)) return false;
    w->particles->friction[i] = mu;
    return true;
}

void imp_particle_set_motion(imp_world *w, imp_id id, imp_motion m)
{
    DENSE_OR();
    if (w->particles->motion[i] == IMP_CURVE || m == IMP_CURVE) return; /* only curve.c makes curve particles */
    w->particles->motion[i] = (uint8_t)m;
    if (m == IMP_FIXED) v3_store(w->particles->v + 3 * i, v3(0, 0, 0));
}

void imp_particle_set_color(imp_world *w, imp_id id, const float rgba[4]) { DENSE_OR(); memcpy(w->particles->color + 4 * i, rgba, 4 * sizeof(float)); }

void imp_particle_move_to(imp_world *w, imp_id id, imp_vec3 target, double dt)
{
    DENSE_OR();
    if (w->particles->motion[i] != IMP_KINEMATIC || !(dt > 0)) return;
    v3_store(w->particles->v + 3 * i, v3_scale(v3_sub(target, v3_load(w->particles->x + 3 * i)), 1.0 / dt));
}

int imp_particle_count(const imp_world *w) { return w->particles->ids.count; }
imp_id imp_particle_id(const imp_world *w, int i) { return ids_of(&w->particles->ids, i); }
const double *imp_particle_positions(const imp_world *w) { return w->particles->x; }
const double *imp_particle_velocities(const imp_world *w) { return w->particles->v; }
const double *imp_particle_radii(const imp_world *w) { return w->particles->radius; }
const float *imp_particle_colors(const imp_world *w) { return w->particles->color; }


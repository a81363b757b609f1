/* world_parts.h: the world, composed of one part per stage. Each part's type is its stage's own (in
 * that stage's header); here the world only holds them, so a file includes the world and the headers
 * of the parts it reads, and none of the others. The comment on each part names the file that writes
 * it; every other file only reads it. */
#ifndef IMPETUS_WORLD_PARTS_H
#define IMPETUS_WORLD_PARTS_H

#include <stdarg.h>
#include <stdio.h>

#include "impetus.h"

/* what the script chose: world.c and the bindings write it, every stage reads it */
typedef struct world_settings {
    imp_vec3 gravity;                 /* m/s^2                                                  */
    double drag;                      /* the world's viscous drag k_d: f = -k_d v               */
    imp_method integrator;
    double tolerance;                 /* the adaptive integrator's                              */
    imp_contact_mode contact_mode;    /* the rigid bodies' contact response                     */
    bool planar;                      /* bodies move in the x-y plane and turn about z          */
    bool sleeping;                    /* resting islands may sleep                              */
    int velocity_iterations, position_iterations; /* the impulse mode's sweeps                 */
    double restitution_threshold;     /* m/s: the impulse mode's slower approaches do not bounce */
    bool particle_collisions;         /* particles collide with each other (particle_contact.c) */
} world_settings;

struct imp_world {
    world_settings settings;

    /* world.c: the clock, the lock while a step runs, and what the last call or step reports */
    double time;
    long steps;
    bool locked;
    char error[512];
    imp_profile profile;
    double *bstate0; int bstate0_cap;           /* the bodies' states at the start of the step      */

    /* snapshot.c */
    uint64_t serial;                            /* unique in the process: a snapshot's callbacks are its world's */
    void (*retain)(void *user);                 /* a snapshot's hold on a callback (NULL: none)     */
    struct step_undo *undo;                     /* what the particle stage may change, kept at the
                                                   start of each step for a callback that fails     */

    /* stores */
    struct particle_store *particles;           /* particles.c                                      */
    struct body_store *bodies;                  /* body.c                                           */
    struct shape_store *shapes;                 /* shape.c, body.c                                  */
    struct collider_store *colliders;           /* collider.c                                       */
    struct force_store *forces;                 /* forces.c: springs, behaviours, fields            */

    /* collision */
    struct broadphase *broadphase;              /* broadphase.c                                     */
    struct contact_set *contacts;               /* contact.c: pairs, manifolds, events              */
    struct presolve_set *presolve;              /* presolve.c: the pre-solve callback and this step's modifications */
    struct sensor_set *sensors;                 /* sensor.c: overlaps and their events (NULL until the first sensor pair) */

    /* particle dynamics */
    struct particle_contacts *pcontacts;        /* particle_collide.c: resting contacts, impacts    */
    struct cloth_store *cloth;                  /* cloth.c: cloth and hair (NULL until the first)   */
    struct curve_set *curves;                   /* curve.c: particles on curves (NULL until the first) */
    struct tinker *tinker;                      /* tinkertoy.c: constraints                         */
    struct implicit_state *implicit;            /* implicit.c (NULL until first used)               */
    struct particle_system *particle_system;    /* particle_system.c: the stage's solver, scratch   */
    struct attach_set *attach;                  /* particle_attach.c: particles held by bodies (NULL until the first) */
    struct particle_coupling *coupling;         /* particle_contact.c: scratch of the stage after the bodies' */

    /* rigid-body contact modes */
    imp_ode_solver body_solver;                 /* the bodies' ODE solver (its adaptive h carries over) */
    struct joint_set *joints;                   /* joint.c (NULL until the first joint)             */
    struct joint_break_list *joints_broken;     /* joint_force.c: the joints the last step broke (NULL until one) */
    struct impulse_state *impulse;              /* impulse.c (NULL until first used)                */
    struct qp_state *qp;                        /* contact_qp.c (NULL until first used)             */
};

/* the message imp_world_error returns: why the last call failed, or what the last step reported */
static inline void world_error(imp_world *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
}

#endif

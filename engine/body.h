/* body.h: the rigid body store and the bodies as an ODE system (body.c). */
#ifndef IMPETUS_BODY_H
#define IMPETUS_BODY_H

#include "ids.h"
#include "rotation.h"
#include "shape.h"

typedef struct body {
    double mass, inv_mass;
    imp_mat3 Ibody, Ibody_inv;  /* about the centre of mass, body frame                 */
    rot_inertia principal;      /* Ibody's principal moments and axes (rotation.h)     */
    imp_vec3 com;               /* centre of mass relative to the origin, body frame   */
    imp_vec3 force, torque;     /* accumulators, cleared after each step               */
    imp_vec3 kin_v, kin_w;      /* kinematic bodies: the velocities the script set     */
    uint8_t motion;             /* imp_motion                                          */
    uint8_t bullet, asleep;     /* continuous collision; sleeping (impulse.c)          */
    double lin_damp, ang_damp;  /* 1/s: dP/dt -= c P, dL/dt -= c L (imp_body_damping)   */
    double gravity_scale;       /* the body feels gravity_scale * the world's gravity    */
    float sleep_time;           /* seconds it has been slow enough to sleep            */
    uint32_t group, mask;
    float color[4];
    uint32_t *shapes;           /* shape slots                                         */
    int nshapes;
} body;

#define BODY_DIM 13 /* x(3) q(4) P(3) L(3) */

/* The bodies as an ODE system (body.c: bodies_ode). held, when set, marks the bodies whose forces the
 * impulse mode already applied in its velocity stage (their momenta are held through the position
 * update); contact_forces, when set, adds the exact contact mode's resting contact forces to each
 * derivative (contact_qp.c). */
typedef struct body_ode {
    imp_world *w;
    const uint8_t *held;
    int (*contact_forces)(imp_world *w, const double *X, double *dX);
} body_ode;

/* the body store: bodies dense by id, and their state vectors side by side (body.c) */
typedef struct body_store {
    idtable ids;
    body *body;
    double *state;        /* BODY_DIM per body: what the ODE solvers step */
    int cap;
    body_ode plain;       /* the system with the applied forces alone (imp_body_ode) */
    uint64_t edits;       /* bumped when a body comes or goes or a script moves it or changes its motion:
                             the contacts found before are stale (contact.c) */
} body_store;

/* body.c */
int bodies_dense(const imp_world *w, uint32_t slot);
void bodies_clear_accumulators(imp_world *w);
void bodies_damp(imp_world *w, double h, const uint8_t *skip); /* P, L *= exp(-c h) (body.c) */
int bodies_nan_guard(imp_world *w, const double *x0);
double bodies_kinetic_energy(const imp_world *w);
double bodies_potential_energy(const imp_world *w);
imp_ode_system bodies_ode(body_ode *o);
void bodies_place_shapes(imp_world *w, int i);  /* body i's shapes placed from its state */
void bodies_place_shape(imp_world *w, shape *s);

#endif

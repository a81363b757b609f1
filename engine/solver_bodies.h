/* solver_bodies.h: the bodies as the velocity-level stages see them. The impulse mode fills it each step
 * (impulse.c); the joints (joint*.c) and the islands (island.c) read and change it. Dense body i < n;
 * index n is the static world, with zero velocity, inverse mass and inverse inertia, so a row against
 * it needs no branch. */
#ifndef IMPETUS_SOLVER_BODIES_H
#define IMPETUS_SOLVER_BODIES_H

#include "imp_math.h"

typedef struct solver_bodies {
    int n;               /* bodies; n + 1 entries in every array                                   */
    double h;            /* the step, s                                                            */
    imp_vec3 *v, *w;     /* velocity and angular velocity                                          */
    imp_vec3 *vp, *wp;   /* split-impulse pseudo velocities: they move the positions once, then
                            are forgotten                                                          */
    imp_mat3 *Iinv;      /* inverse inertia, world frame                                           */
    double *im;          /* inverse mass; 0 for a body that does not move in this step (static,
                            kinematic, asleep)                                                     */
} solver_bodies;

#endif

/* particles.h: the particle store (particles.c): dense arrays by id, and a range of them as the ODE solvers step it. */
#ifndef IMPETUS_PARTICLES_H
#define IMPETUS_PARTICLES_H

#include "ids.h"

/* the particle store: dense arrays by id (particles.c) */
typedef struct particle_store {
    idtable ids;
    int cap;
    double *x, *v;      /* 3 per particle: committed state                     */
    double *mass, *inv_mass, *radius;
    double *restitution, *friction; /* material against bodies and other particles (particle_contact.c) */
    uint8_t *motion;    /* imp_motion                                          */
    float *color;       /* 4 per particle                                      */
    uint64_t topology;  /* bumped when particles or force objects come or go  */
    uint64_t edits;     /* bumped when a particle is removed or moved by a script: resting contacts
                           found before are stale (particle_collide.c)                               */
} particle_store;

/* the particles the ODE solver is stepping: [first, first + count) of the dense arrays, and the
 * resting contacts among them, [contact_lo, contact_hi) */
typedef struct particle_range {
    imp_world *w;
    int first, count;
    int contact_lo, contact_hi;
    int extra; /* state entries after [x | v]: the curve particles' [u | udot] (whole store only) */
} particle_range;

/* particles.c */
int particles_slot_dense(const imp_world *w, uint32_t slot);
void particles_remove(imp_world *w, imp_id id);

#endif

/* tinkertoy.h: constrained particle dynamics with Lagrange multipliers (tinkertoy.c). */
#ifndef IMPETUS_TINKERTOY_H
#define IMPETUS_TINKERTOY_H

#include "impetus.h"

/* tinkertoy.c: constrained dynamics. Active while there are constraints or curve particles (the
 * parametric constraints of curve.c): the whole store is then one ODE, and particles_deriv adds the
 * constraint forces after the applied and contact forces, before a = f/m. */
bool tinker_active(const imp_world *w);
int tinker_constraint_forces(imp_world *w, const double *x, const double *v, double *f);
/* after the collision pass: velocities of constrained particles touching colliders projected so the
 * constraints' Cdot = 0 and no contact pulls (impulses). Returns nonzero when a callback failed */
int tinker_after_collide(imp_world *w);
void tinker_particle_removed(imp_world *w, uint32_t slot);
void tinker_free(imp_world *w);

#endif

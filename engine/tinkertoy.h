/* tinkertoy.h: constrained particle dynamics with Lagrange multipliers, and curve particles (tinkertoy.c). */
#ifndef IMPETUS_TINKERTOY_H
#define IMPETUS_TINKERTOY_H

#include "impetus.h"

/* tinkertoy.c: constrained dynamics. When tinker_active, the whole store is one ODE whose state is
 * [x | v | u | udot]; particles_deriv places the curve particles on their curves, adds the
 * constraint forces after the applied and contact forces, and gives the curve particles' u''. */
bool tinker_active(const imp_world *w);
int tinker_state_dim(const imp_world *w);            /* 2 per curve particle                      */
void tinker_get_state(const imp_world *w, double *U);
void tinker_set_state(imp_world *w, const double *U);
/* x, v: the state's positions and velocities with the curve particles put at x(u), x_u udot */
int tinker_curves_place(imp_world *w, const double *X, int n, const double **x, const double **v);
int tinker_constraint_forces(imp_world *w, const double *x, const double *v, double *f);
void tinker_curves_deriv(imp_world *w, int n, const double *U, const double *f, double *dX);
/* after the ODE step: curve particles exactly on their curves; u put back where non-finite (U0: the
 * saved [u | udot]). Returns nonzero when a callback failed */
int tinker_after_integrate(imp_world *w, const double *U0);
/* after the collision pass: velocities of constrained particles touching colliders projected so the
 * constraints' Cdot = 0 and no contact pulls (impulses). Returns nonzero when a callback failed */
int tinker_after_collide(imp_world *w);
void tinker_particle_removed(imp_world *w, uint32_t slot);
void tinker_free(imp_world *w);

#endif

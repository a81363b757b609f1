/* implicit.h: the implicit integrator of particles, cloth and hair (implicit.c). */
#ifndef IMPETUS_IMPLICIT_H
#define IMPETUS_IMPLICIT_H

#include "impetus.h"

/* implicit.c: the world's implicit step (particles_step calls it in place of imp_ode_advance), cleanup */
int implicit_step(imp_world *w, double t, double h, imp_profile *prof);
void implicit_free(imp_world *w);

#endif

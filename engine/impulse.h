/* impulse.h: the impulse contact mode, S1's step order (impulse.c). */
#ifndef IMPETUS_IMPULSE_H
#define IMPETUS_IMPULSE_H

#include "impetus.h"

/* impulse.c: the impulse contact mode (S1's step order); returns nonzero when it did the step */
int impulse_step(imp_world *w, double dt);
void impulse_bullets(imp_world *w, const double *X0); /* continuous collision of bullets after the step */
void impulse_free(imp_world *w);

#endif

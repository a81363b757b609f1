/* toi.h: time of impact in the impulse mode (toi.c). */
#ifndef IMPETUS_TOI_H
#define IMPETUS_TOI_H

#include "impetus.h"

/* bullets that crossed a static surface in the step (X0: the bodies' states at its start) are put back
 * touching it */
void toi_bullets(imp_world *w, const double *X0);

#endif

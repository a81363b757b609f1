/* toi.h: continuous collision of bullets, in both contact modes (toi.c). */
#ifndef IMPETUS_TOI_H
#define IMPETUS_TOI_H

#include "impetus.h"

/* bullets that crossed a shape in the step (X0: the bodies' states at its start) are put back touching
 * it; returns how many were moved (their contacts are stale then) */
int toi_bullets(imp_world *w, const double *X0);

#endif

/* impulse.h: the impulse contact mode, S1's step order (impulse.c). */
#ifndef IMPETUS_IMPULSE_H
#define IMPETUS_IMPULSE_H

#include "step.h"

/* the bodies' stage of a step in the impulse mode (and with contact response off: the ODE alone) */
void impulse_step(const imp_step *st);
void impulse_free(imp_world *w);
void impulse_restore_hits(imp_world *w, const imp_contact_hit *hits, int count); /* snapshot.c */

#endif

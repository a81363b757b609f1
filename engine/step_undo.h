/* step_undo.h: the undo of a failing step (step_undo.c): the part of the world's state (snapshot.c
 * takes the whole) that a step's particle stage changes, kept at the start of every step. */
#ifndef IMPETUS_STEP_UNDO_H
#define IMPETUS_STEP_UNDO_H

#include "impetus.h"

/* A step calls scripts only in its particle stage (force fields, behaviours, constraints, curves);
 * the bodies' and the contacts' stages call none, so a failing callback always leaves them as they
 * were, and the undo keeps what the particle stage may have changed by then: the particle solver's
 * adaptive step size and counters, the particles' resting contacts and impacts, the curve
 * particles, and the constraint solver's multipliers, warm start, Jacobian and statistics. The
 * particles' positions and velocities are not copied here: the stage keeps them at its start
 * anyway (the collision pass sweeps from there), and puts them back itself (particle_system.c).
 * The implicit integrator changes nothing that outlives the step before its last callback (fields
 * and behaviours are evaluated before its solve). */
void step_undo_keep(imp_world *w);       /* at the start of a step                          */
void step_undo_put_back(imp_world *w);   /* a callback failed: everything above as it was   */
void step_undo_free(imp_world *w);

#endif

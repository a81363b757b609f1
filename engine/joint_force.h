/* joint_force.h: what the joints applied in a step, and breaking them (joint_force.c). */
#ifndef IMPETUS_JOINT_FORCE_H
#define IMPETUS_JOINT_FORCE_H

#include "impetus.h"

/* world.c: at the start of a step, every joint's impulse to zero */
void joints_forces_begin(imp_world *w);
/* world.c: after the step (the world unlocked), each joint's force and torque from its impulse, and the
 * joints that exceeded their break_force or break_torque destroyed, with an event each */
void joints_forces_finish(imp_world *w, double dt);
void joints_breaks_free(imp_world *w);
/* snapshot.c: the last step's broken joints as a snapshot held them (count 0: none) */
void joints_breaks_restore(imp_world *w, const imp_joint_break *ev, int count);
/* world.c, at the bodies' stage's start: each spring joint's impulse on its bodies over the step h */
void joints_springs_kick(imp_world *w, double h);
/* why the exact mode cannot step this world's joints, or NULL */
const char *joints_exact_refusal(const imp_world *w);

#endif

/* joint_position.h: the joints at the position level (joint_position.c): pre-stabilization (S1
 * section IV) and the position update of jointed bodies. */
#ifndef IMPETUS_JOINT_POSITION_H
#define IMPETUS_JOINT_POSITION_H

#include "solver_bodies.h"

/* impulses that make the joint state after the position update allowed */
void joints_pre_stabilize(imp_world *w, solver_bodies *sb);
/* the position update of jointed bodies (the prediction of pre-stabilization), then their
 * post-stabilization; states0: the bodies' states at the start of the step */
void joints_positions(imp_world *w, solver_bodies *sb, const double *states0);

#endif

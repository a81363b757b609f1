/* joint_velocity.h: the joints at the velocity level (joint_velocity.c): post-stabilization (S1 section
 * V) and the joints' rows inside the contact sweeps and the split impulses (S1 section VI). */
#ifndef IMPETUS_JOINT_VELOCITY_H
#define IMPETUS_JOINT_VELOCITY_H

#include "solver_bodies.h"

/* the velocities projected onto the joints' rows (motors: with the motor rows) */
void joints_post_stabilize(imp_world *w, solver_bodies *sb, bool motors);
/* S1 section VI: the joints processed level by level with the contacts. joints_contacts_begin builds
 * their rows for the stage; joints_level solves those whose level is in [lo, hi) (blevel: contact-graph
 * level per dense body; shock: shock propagation, the lower body of a joint across two levels held) */
void joints_contacts_begin(imp_world *w, const solver_bodies *sb);
void joints_level(imp_world *w, solver_bodies *sb, int lo, int hi, const int *blevel, bool shock);
/* the split impulses' pseudo velocities (sb->vp, sb->wp) projected onto the joints' equality rows */
void joints_split(imp_world *w, solver_bodies *sb);

#endif

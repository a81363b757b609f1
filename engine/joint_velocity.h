/* joint_velocity.h: the joints at the velocity level (joint_velocity.c): post-stabilization (S1 section
 * V) and the joints' rows inside the contact sweeps and the split impulses (S1 section VI). */
#ifndef IMPETUS_JOINT_VELOCITY_H
#define IMPETUS_JOINT_VELOCITY_H

#include "solver_bodies.h"

void joints_post_stabilize(imp_world *w, solver_bodies *sb, bool motors);
/* S1 section VI: joints processed level by level with the contacts (blevel: contact-graph level per
 * dense body; `outside` or more: not in the graph) */
void joints_contacts_begin(imp_world *w, const solver_bodies *sb);
void joints_level(imp_world *w, solver_bodies *sb, int lo, int hi, const int *blevel, bool shock);
void joints_split(imp_world *w, solver_bodies *sb);

#endif

/* joint.h: articulated rigid bodies, the joints of S1 (joint.c): what the step and the exact contact mode
 * read of them. */
#ifndef IMPETUS_JOINT_H
#define IMPETUS_JOINT_H

#include "solver_bodies.h"

/* the impulse mode's joints (S1): which bodies are jointed this step, and the pairs they join; the
 * stabilizations are joint_velocity.h's and joint_position.h's */
void joints_free(imp_world *w);
int joints_prepare(imp_world *w, int n);                 /* the step's topology; returns the live joints */
const uint8_t *joints_jointed(const imp_world *w);       /* per dense body: awake, dynamic, jointed (NULL: no joints) */
bool joints_connected(const imp_world *w, int a, int b); /* dense bodies a and b are joined: no contact between them */
int joints_pairs(const imp_world *w, const uint64_t **pairs); /* dense body pairs joined (sorted lo << 32 | hi; the world is n) */
/* the jointed bodies whose joint island `touches` (per dense body) leaves alone take their forces' impulse
 * in two halves around the position update; joints_half_kick: whether body i does this step */
void joints_mark_half_kicks(imp_world *w, const uint8_t *touches, int n);
bool joints_half_kick(const imp_world *w, int i);
/* the constrained directions of joint k (dense index 0..count-1) now, in world coordinates, for the QP
 * mode's equality rows: returns the number of rows written (<= 6; 0 for a joint whose body is gone). A
 * row is linear (relative velocity of the two articulation points pa, pb along dir) or angular
 * (relative angular velocity along dir); b is the null id for the static world (pb then a world point) */
typedef struct joint_row {
    imp_id a, b;
    imp_vec3 pa, pb;   /* the articulation points now (world)                                     */
    imp_vec3 dir;      /* the row's direction now (world)                                         */
    bool angular;
    imp_quat fa, fb;   /* the joint frame (x = axis) in A's body frame, in B's (the world's): aligned at
                          creation, so they give the rows' position errors (the frames agree when held) */
} joint_row;
int joints_rows(const imp_world *w, int k, joint_row out[6]);
int joints_count(const imp_world *w);

#endif

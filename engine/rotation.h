/* rotation.h: the torque-free rotation of a rigid body over a step, with its derivative (rotation.c). */
#ifndef IMPETUS_ROTATION_H
#define IMPETUS_ROTATION_H

#include <stdbool.h>

#include "imp_math.h"

/* a body's inertia in its principal frame: I_body = axes diag(moments) axes^T, axes a rotation (its
 * columns the principal axes in the body frame) */
typedef struct rot_inertia {
    imp_mat3 axes;
    imp_vec3 moments;
    bool body_axes;        /* the axes are the body's own (axes = 1)                                  */
    int j, k;              /* the moments other than the reference (the middle one, I_r)             */
    double Ir, cj, ck;     /* I_r and c = 1/I - 1/I_r of j and k                                      */
    bool use_j, use_k;     /* j, k differ from the reference: a part of the flow of their own         */
} rot_inertia;

rot_inertia rot_principal(imp_mat3 I_body);

/* The body at orientation q with angular velocity om (world) turns for h with its angular momentum
 * L = I(q) om held: the new orientation q1 (in the hemisphere of q) and HL = d(theta1)/d(om), theta1 the
 * world rotation vector of a change of q1 (q1 -> exp(d theta1) q1), at q fixed. A body of three
 * different moments is turned in `pieces` Strang pieces. */
void rot_flow(const rot_inertia *in, imp_quat q, imp_vec3 om, double h, int pieces, imp_quat *q1, imp_mat3 *HL);

/* the pieces rot_flow needs for a body at q with angular momentum L: each turns it by at most
 * ROT_PIECE about a principal axis (rotation.c); 1 for an axially symmetric body (exact) */
int rot_pieces(const rot_inertia *in, imp_quat q, imp_vec3 L, double h);

/* The symmetry axis of an axially symmetric body (two equal moments, the third apart) in its body frame,
 * into *axis; false for any other body */
static inline bool rot_symmetry_axis(const rot_inertia *in, imp_vec3 *axis)
{
    if (in->use_j == in->use_k) return false;
    const int ax = in->use_j ? in->j : in->k;
    *axis = in->body_axes ? v3(ax == 0, ax == 1, ax == 2) : m3_col(in->axes, ax);
    return true;
}

/* The turn of an axially symmetric body (rot_flow) as its points on the symmetry axis see it: Rc, the
 * turn about L by h L / I_r, and HLa = (h / I_r) J_l(h L / I_r) I(q) (a0 the symmetry axis in the world
 * at q), with the turn as a quaternion e. The turn about the axis that completes the flow leaves those points in place, and its share
 * s a' u^T of HL meets them only through a' . (c' x t) = 0 (c' along a'), so for a point c on the axis
 * the predicted offset is Rc c and HLa acts as HL. */
void rot_axial_turn(const rot_inertia *in, imp_vec3 a0, imp_vec3 om, double h, imp_quat *e, imp_mat3 *Rc, imp_mat3 *HLa);
/* ... and the whole flow's q1 from it (rot_flow's, up to rounding): q normalized, e the turn about L
 * (a quaternion, rot_axial_turn's), a1 = Rc a0 */
imp_quat rot_axial_finish(const rot_inertia *in, imp_quat q, imp_quat e, imp_vec3 a0, imp_vec3 a1, imp_vec3 om, double h);

/* exp(h om) q in the hemisphere of q, and h J_l(h om), J_l the left Jacobian of SO(3): the turn at a
 * held angular velocity, and the flow of a body whose principal moments are equal */
void rot_exp(imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL);

#endif

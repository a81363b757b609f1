/* joint.c: articulated rigid bodies in the impulse contact mode, after Weinstein, Teran and Fedkiw (S1):
 * the joint types, their frames, limits and motors, the public imp_joint_* functions, the step's joint
 * topology (joints_prepare), and the rows of each type that the stages solve.
 *
 * A joint joins body A and body B (or the static world) and keeps a frame in each (S1 section III): an
 * articulation point (la, lb: body frames; the world frame when B is the world) and an orientation (fa,
 * fb: the joint frame's axes in the body; x is the joint axis). At creation the two frames coincide; the
 * joint state is A's frame relative to B's, and each type is a projection of that state to the allowed
 * set (S1's black-box joint models):
 *   point      origin common, rotation free        (+ limit: swing of the axis inside a cone)
 *   hinge      origin common, rotation about x     (+ limit: angle about x in [lo, hi])
 *   twist      as hinge (S1 Fig. 9: the axis through the two faces; default A's centre -> B's centre)
 *   rigid      origin common, rotation as created
 *   prismatic  rotation as created, origin on B's x line (+ limit: slide along x in [lo, hi])
 *   planar     origin in B's plane normal to x, rotation about x only (S1's fridge magnet)
 *
 * Rows. A joint is a list of m <= 7 rows: the constrained directions of its type, a limit row while the
 * limit is met, a motor row. Row r has an impulse direction on each side, the 6-vectors
 * g_A = (d, r_A x d) and g_B = -(d, r_B x d) of a linear impulse along d at the midpoint of the two
 * articulation points now (lever arms r = midpoint - x), or g = +-(0, d) of an angular impulse. A
 * multiplier lambda_r changes the velocities (v, omega) of side X by W_X g_X lambda_r, W = diag(1/M, I^-1).
 * Velocity rows (joint_rows_velocity) have C = G and f = target - u, u_r = g_A.V_A + g_B.V_B.
 *
 * Predicted rows (joint_rows_predicted, for pre-stabilization). The predicted articulation point of
 * side X after the position update is
 *     p'_X = x_X + h v_X + c'_X,   c'_X = R'_X l_X,   c_X = R(q_X) l_X (its offset now)
 * and its predicted frame F'_X = q'_X f_X, with q'_X the body's turn over h: S1 takes
 * q' = exp(h omega) q (omega held), which for a body of unequal moments changes its angular momentum
 * L = I omega as it turns and loses the gyroscopic motion (a pinned top would precess at twice the rate);
 * here the body turns as a free body does, L held (rotation.c), and the joints add only their impulses.
 * A row's residual f_r is the predicted joint error in its direction, and C the derivative of f with
 * respect to each side's (v, omega). A change d omega turns the predicted rotation by dtheta = HL d omega
 * (rotation.c; by S1's appendix HL = h J_l(h omega) for the turn at held omega, J_l the left Jacobian
 * of SO(3)), and d(R c) = dtheta x c', so
 *     point row t.(p'_A - p'_B):   C_A = ( h t,  HL_A^T (c'_A x t) ),   C_B = -( h t, HL_B^T (c'_B x t) )
 * (a direction t' fixed in B, prismatic and planar, adds g.(dtheta_B x t') = dtheta_B.(t' x g), g the
 * predicted gap); an orientation row with de = rho_A.dtheta_A + rho_B.dtheta_B has C_X = (0, HL_X^T rho_X):
 *     hinge/twist/planar, e = t.(a'_A x a'_B) (S1 eq. 6, in the plane normal to the axis):
 *         rho_A = a'_A x (a'_B x t),   rho_B = a'_B x (t x a'_A)
 *     rigid/prismatic, e = 2 sgn(w) vec(q_e), q_e = F'_A conj(F'_B) = (w, v), one hemisphere (GUIDE trap 8):
 *         rho_A = sgn(w) (w e_i + v x e_i),   rho_B = -sgn(w) (w e_i - v x e_i)
 *     hinge angle theta = 2 atan2(x, w) of conj(F'_B) F'_A (unwrapped):  rho_A = b, rho_B = -b
 *         (b B's predicted axis: theta dot = b.(omega_A - omega_B))
 *     point swing phi = angle(a'_A, a'_B), n = a'_A x a'_B / |.|:        rho_A = -n, rho_B = n
 * A limit row drives the predicted coordinate to its bound, a motor row to the coordinate now plus
 * h speed (joint_position.c says when each is active).
 *
 * The stages that solve the rows: joint_velocity.c (post-stabilization, S1 section V, and the rows
 * inside the contact sweeps, section VI), joint_position.c (pre-stabilization, section IV, and the
 * position update), both through joint_solve.c's sparse block solve of K = C W G^T.
 *
 * Quaternions (GUIDE trap 8): exp(theta/2) uses sin(t/2)/t with its series near t = 0, J_l its series,
 * and a new q is kept in the hemisphere of the old one. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "ids.h"
#include "imp_math.h"
#include "joint.h"
#include "joint_internal.h"
#include "rotation.h"
#include "solver_bodies.h"
#include "world_parts.h"

#define LIMIT_SLOP 1e-7   /* a coordinate this close to its bound is at the limit (post-stabilization) */
#define LIMIT_REACH 0.25  /* rad or m: a limit far from the coordinate now is approached by this much a step */

static bool limits_ok(imp_joint_type t, double lo, double hi);
/* a motor: |speed| <= IMP_JOINT_MAX_COORD (rad/s or m/s), 0 <= max <= IMP_JOINT_MAX_FORCE */
static bool motor_ok(double speed, double max) { return fabs(speed) <= IMP_JOINT_MAX_COORD && max >= 0 && max <= IMP_JOINT_MAX_FORCE; }

void joints_free(imp_world *w)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    ids_free(&js->ids);
    free(js->joint);
    free(js->jointed), free(js->pairs), free(js->island_parent), free(js->loop_parent), free(js->pivot), free(js->half_kick);
    free(js->body_q_state), free(js->body_q), free(js->body_R);
    free(js->pred_q), free(js->pred_R), free(js->pred_HL), free(js->vel_version), free(js->pred_version), free(js->pred_epoch);
    free(js->axis_e), free(js->axis_R), free(js->axis_HL), free(js->axis_version), free(js->axis_epoch);
    free(js->nodes), free(js->rows), free(js->body_node_start), free(js->body_nodes), free(js->fill_cursor), free(js->moving_ends);
    free(js->hub_node), free(js->node_size), free(js->order), free(js->order_pos), free(js->upper_start), free(js->upper_node);
    free(js->diag), free(js->upper), free(js->lower), free(js->rhs), free(js->sol), free(js->coupling);
    free(js->rhs_kept), free(js->kept_rows), free(js->level_K), free(js->level_Kinv), free(js->level_acc);
    free(js->pred_v), free(js->pred_w), free(js->saved_v), free(js->saved_w), free(js->scratch_v), free(js->scratch_w);
    free(js);
    w->joints = NULL;
}

/* the world's joint set, made on first use */
static struct joint_set *joint_set_of(imp_world *w)
{
    if (!w->joints) {
        w->joints = calloc(1, sizeof(struct joint_set));
        if (!w->joints) abort();
    }
    return w->joints;
}

/* a unit quaternion whose rotation takes x to the unit vector a */
static imp_quat frame_from_axis(imp_vec3 a)
{
    imp_vec3 t1, t2;
    v3_basis(a, &t1, &t2);
    imp_vec3 y = v3_scale(t1, -1), z = v3_scale(t2, -1);
    imp_mat3 m = {{{a.x, y.x, z.x}, {a.y, y.y, z.y}, {a.z, y.z, z.z}}};
    return quat_normalize(quat_from_m3(m));
}

/* a dynamic body that a joint's change concerns wakes */
static void body_wake(imp_world *w, imp_id id)
{
    int k = imp_id_is_null(id) ? -1 : ids_lookup(&w->bodies->ids, id);
    if (k >= 0 && w->bodies->body[k].motion == IMP_DYNAMIC) w->bodies->body[k].asleep = 0, w->bodies->body[k].sleep_time = 0;
}

static joint *joint_find(const imp_world *w, imp_id id)
{
    if (!w->joints) return NULL;
    int k = ids_lookup(&w->joints->ids, id);
    return k < 0 ? NULL : &w->joints->joint[k];
}

imp_id imp_joint_create(imp_world *w, const imp_joint_def *d)
{
    imp_id none = {0, 0};
    int ka = ids_lookup(&w->bodies->ids, d->a);
    int kb = imp_id_is_null(d->b) ? -1 : ids_lookup(&w->bodies->ids, d->b);
    if (ka < 0 || (!imp_id_is_null(d->b) && kb < 0) || ka == kb) return none;
    if ((int)d->type < 0 || d->type > IMP_JOINT_SPRING) return none;
    const bool two_points = d->type == IMP_JOINT_DISTANCE || d->type == IMP_JOINT_SPRING;
    if (two_points && (!v3_finite(d->anchor_b) || !(v3_len(d->anchor_b) <= IMP_JOINT_MAX_COORD))) return none;
    if (d->type == IMP_JOINT_DISTANCE && !(d->lo >= 0 && d->lo <= d->hi && d->hi <= IMP_JOINT_MAX_COORD)) return none;
    if (d->type == IMP_JOINT_SPRING && !(d->stiffness > 0 && d->stiffness <= IMP_JOINT_MAX_FORCE && d->damping >= 0 &&
                                         d->damping <= IMP_JOINT_MAX_FORCE && d->rest >= 0 && d->rest <= IMP_JOINT_MAX_COORD)) return none;
    if (!v3_finite(d->anchor) || (d->has_axis && !v3_finite(d->axis))) return none;
    const double *XA = w->bodies->state + BODY_DIM * ka;
    const double *XB = kb >= 0 ? w->bodies->state + BODY_DIM * kb : NULL;
    imp_vec3 axis = d->axis;
    if (!d->has_axis) { /* twist: the line through the two centres (S1 Fig. 9); point: anchor to A's centre */
        axis = d->type == IMP_JOINT_TWIST ? v3_sub(XB ? v3_load(XB) : d->anchor, v3_load(XA)) : v3_sub(v3_load(XA), d->anchor);
        if (!(v3_len(axis) > 1e-12)) {
            if (d->type == IMP_JOINT_TWIST) return none;
            axis = v3(0, 1, 0);
        }
    }
    if (!(v3_len(axis) > 1e-12) || !isfinite(v3_len(axis))) return none; /* |axis| may overflow */
    if (!(v3_len(d->anchor) <= IMP_JOINT_MAX_COORD)) return none;
    if (!two_points && d->has_limits && !limits_ok(d->type, d->lo, d->hi)) return none;
    if (d->has_motor && (two_points || !motor_ok(d->speed, d->max))) return none;
    axis = v3_normalize(axis);
    struct joint_set *js = joint_set_of(w);
    imp_id id = ids_alloc(&js->ids);
    if (js->ids.count > js->joint_cap) {
        js->joint_cap = js->ids.count * 2 + 8;
        js->joint = ids_grow(js->joint, sizeof(joint), js->joint_cap);
    }
    joint *jt = &js->joint[js->ids.count - 1];
    memset(jt, 0, sizeof *jt);
    jt->type = d->type, jt->a = d->a, jt->b = d->b;
    imp_quat F = frame_from_axis(axis);
    imp_quat qa = quat_of(XA);
    jt->la = quat_rotate(quat_conj(qa), v3_sub(d->anchor, v3_load(XA)));
    jt->fa = quat_normalize(quat_mul(quat_conj(qa), F));
    const imp_vec3 anchor_b = two_points ? d->anchor_b : d->anchor; /* distance, spring: a point of its own on B */
    if (XB) {
        imp_quat qb = quat_of(XB);
        jt->lb = quat_rotate(quat_conj(qb), v3_sub(anchor_b, v3_load(XB)));
        jt->fb = quat_normalize(quat_mul(quat_conj(qb), F));
    } else {
        jt->lb = anchor_b, jt->fb = F;
    }
    jt->has_limits = d->has_limits, jt->lo = d->lo, jt->hi = d->hi;
    if (d->type == IMP_JOINT_DISTANCE) jt->has_limits = false; /* (its range is lo, hi: rows_distance) */
    jt->stiffness = d->stiffness, jt->damping = d->damping, jt->rest = d->rest;
    jt->has_motor = d->has_motor, jt->speed = d->speed, jt->max = d->max;
    body_wake(w, d->a), body_wake(w, d->b);
    return id;
}

bool imp_joint_valid(const imp_world *w, imp_id id) { return joint_find(w, id) != NULL; }

void imp_joint_destroy(imp_world *w, imp_id id)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    joint *jt = joint_find(w, id);
    if (!jt) return;
    body_wake(w, jt->a), body_wake(w, jt->b); /* the partners feel the joint go */
    int d = ids_remove(&js->ids, id);
    if (d < 0) return;
    js->joint[d] = js->joint[js->ids.count];
}

int imp_world_joint_count(const imp_world *w) { return w->joints ? w->joints->ids.count : 0; }
int joints_count(const imp_world *w) { return imp_world_joint_count(w); }

/* a joint is live while both its bodies are; a destroyed body leaves its joints inert */
static bool joint_bodies(const imp_world *w, joint *jt, int n)
{
    jt->ia = ids_lookup(&w->bodies->ids, jt->a);
    jt->ib = imp_id_is_null(jt->b) ? n : ids_lookup(&w->bodies->ids, jt->b);
    return jt->ia >= 0 && jt->ib >= 0;
}

bool imp_joint_bodies_live(const imp_world *w, imp_id id)
{
    joint *p = joint_find(w, id);
    if (!p) return false;
    joint jt = *p;
    return joint_bodies(w, &jt, w->bodies->ids.count);
}

imp_joint_type imp_joint_kind(const imp_world *w, imp_id id)
{
    joint *p = joint_find(w, id);
    return p ? p->type : IMP_JOINT_POINT;
}

bool imp_joint_ends(const imp_world *w, imp_id id, imp_id *a, imp_id *b)
{
    joint *p = joint_find(w, id);
    if (!p) return false;
    *a = p->a, *b = p->b;
    return true;
}

/* ---- geometry ------------------------------------------------------------------------------------ */

/* body i turned over h from q at angular velocity om (world): a dynamic body with its angular momentum
 * held, as a free body turns (rotation.c; in the pieces its momentum at the step's start, in its state
 * X0, asks for), a kinematic one at om. The predicted rotation q1 and HL = d(theta1)/d(om), which is
 * h J_l(h om) for a body of equal moments. */
void joint_predict_rotation(const imp_world *w, int i, const double *X0, imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL)
{
    const body *b = &w->bodies->body[i];
    if (b->motion == IMP_DYNAMIC) rot_flow(&b->principal, q, om, h, rot_pieces(&b->principal, q, v3_load(X0 + 10), h), q1, HL);
    else rot_exp(q, om, h, q1, HL);
}

static imp_vec3 frame_axis(imp_quat F, int k) { return quat_rotate(F, v3(k == 0, k == 1, k == 2)); }

/* side X of a joint now (its frame F only with frame: a plain ball joint needs no axes) */
void joint_side_now(const imp_world *w, int i, int n, imp_vec3 l, imp_quat f, const double *im, bool frame, joint_side *s)
{
    s->i = i;
    if (i >= n) {
        s->moves = false, s->x = v3(0, 0, 0), s->c = s->c1 = s->p = s->p1 = l, s->F = s->F1 = f, s->q = quat_identity();
        s->HL = (imp_mat3){{{0}}};
        return;
    }
    s->moves = im && im[i] > 0;
    const double *X = w->bodies->state + BODY_DIM * i;
    struct joint_set *js = w->joints;
    imp_mat3 Rq;
    if (js && js->body_table_cap > i) { /* the body's normalized rotation, kept while its state quaternion is the same */
        if (memcmp(&js->body_q_state[i], X + 3, sizeof(imp_quat))) {
            memcpy(&js->body_q_state[i], X + 3, sizeof(imp_quat));
            js->body_q[i] = quat_of(X), js->body_R[i] = quat_to_m3(js->body_q[i]);
        }
        s->q = js->body_q[i], Rq = js->body_R[i];
    } else {
        s->q = quat_of(X), Rq = quat_to_m3(s->q);
    }
    s->x = v3_load(X), s->c = m3_mul_v(Rq, l), s->p = v3_add(s->x, s->c);
    if (frame) s->F = quat_mul(s->q, f);
}

/* which sides of a plain ball joint have their point on the symmetry axis of an axially symmetric
 * dynamic body (bit 0: A, bit 1: B), as joint_side_predict's rot_axial_turn asks */
static uint8_t joint_axis_sides(const imp_world *w, const joint *jt, int n)
{
    if (jt->type != IMP_JOINT_POINT || jt->has_limits || jt->has_motor || jt->has_twist) return 0;
    uint8_t sides = 0;
    const int ends[2] = {jt->ia, jt->ib};
    const imp_vec3 ls[2] = {jt->la, jt->lb};
    for (int e = 0; e < 2; e++) {
        if (ends[e] >= n) continue;
        const body *b = &w->bodies->body[ends[e]];
        imp_vec3 axis;
        if (b->motion != IMP_DYNAMIC || !rot_symmetry_axis(&b->principal, &axis)) continue;
        const imp_vec3 x = v3_cross(ls[e], axis);
        if (v3_dot(x, x) <= 1e-24 * v3_dot(ls[e], ls[e])) sides |= (uint8_t)(1 << e);
    }
    return sides;
}

/* the prediction of a side whose state now (x, q) is in s (its frame F1 only with frame); on_axis: its
 * point is on its body's symmetry axis (joint_axis_sides) */
static void joint_side_predict(const imp_world *w, imp_vec3 l, imp_quat f, const imp_vec3 *v, const imp_vec3 *om, double h, bool frame, bool on_axis, joint_side *s)
{
    const int i = s->i;
    if (i >= w->bodies->ids.count) return; /* the world: set by joint_side_now */
    struct joint_set *js = w->joints;
    const double *X0 = w->bodies->state + BODY_DIM * i; /* the step's start: predictions come before the position update */
    imp_quat q1;
    imp_mat3 R1;
    bool cache = js->body_table_cap > i && h == js->pred_cache_h && v == js->pred_v; /* pre-stabilization's predictions */
    const body *b = &w->bodies->body[i];
    imp_vec3 axis;
    if (on_axis && cache && !frame && s->moves && rot_symmetry_axis(&b->principal, &axis)) { /* (rot_axial_turn) */
        if (!(js->axis_epoch[i] == js->epoch && js->axis_version[i] == js->vel_version[i])) {
            rot_axial_turn(&b->principal, m3_mul_v(js->body_R[i], axis), om[i], h, &js->axis_e[i], &js->axis_R[i], &js->axis_HL[i]);
            js->axis_version[i] = js->vel_version[i], js->axis_epoch[i] = js->epoch;
        }
        s->HL = js->axis_HL[i];
        s->c1 = m3_mul_v(js->axis_R[i], s->c), s->p1 = v3_add(v3_add(s->x, v3_scale(v[i], h)), s->c1);
        return;
    }
    if (cache && js->pred_epoch[i] == js->epoch && js->pred_version[i] == js->vel_version[i]) { /* shared by the body's joints */
        q1 = js->pred_q[i], s->HL = js->pred_HL[i], R1 = js->pred_R[i];
    } else {
        joint_predict_rotation(w, i, X0, s->q, om[i], h, &q1, &s->HL);
        if (!s->moves) s->HL = (imp_mat3){{{0}}};
        R1 = quat_to_m3(q1);
        if (cache) js->pred_q[i] = q1, js->pred_HL[i] = s->HL, js->pred_R[i] = R1, js->pred_version[i] = js->vel_version[i], js->pred_epoch[i] = js->epoch;
    }
    s->c1 = m3_mul_v(R1, l), s->p1 = v3_add(v3_add(s->x, v3_scale(v[i], h)), s->c1);
    if (frame) s->F1 = quat_mul(q1, f);
}

/* the hinge angle of frame A relative to frame B about x, unwrapped to the turn nearest `near` */
double joint_hinge_angle(imp_quat FA, imp_quat FB, double near)
{
    imp_quat r = quat_mul(quat_conj(FB), FA);
    double a = 2 * atan2(r.x, r.w);
    double k = floor((near - a) / (2 * M_PI) + 0.5);
    return a + 2 * M_PI * k;
}

/* the orientation error quaternion F_A conj(F_B) in the hemisphere w >= 0 */
static imp_quat frame_error(imp_quat FA, imp_quat FB)
{
    imp_quat e = quat_mul(FA, quat_conj(FB));
    return e.w < 0 ? quat(-e.w, -e.x, -e.y, -e.z) : e;
}

static bool has_coordinate(imp_joint_type t) { return t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST || t == IMP_JOINT_PRISMATIC; }

/* limits a joint of type t can take: lo <= hi within IMP_JOINT_MAX_COORD; a point joint's swing cone
 * 0 < hi <= pi */
static bool limits_ok(imp_joint_type t, double lo, double hi)
{
    if (!(fabs(lo) <= IMP_JOINT_MAX_COORD && fabs(hi) <= IMP_JOINT_MAX_COORD && lo <= hi)) return false;
    return t != IMP_JOINT_POINT || (hi > 0 && hi <= M_PI);
}

/* a limited joint's coordinate at frames FA, FB and articulation points pA, pB: the angle about the axis
 * (hinge, twist; unwrapped near the last one), the slide along B's axis (prismatic), or the swing of A's
 * axis from B's (point) */
static double limit_coordinate(const joint *jt, imp_joint_type ty, imp_quat FA, imp_quat FB, imp_vec3 pA, imp_vec3 pB)
{
    if (angular_free(ty)) return joint_hinge_angle(FA, FB, jt->angle);
    if (ty == IMP_JOINT_PRISMATIC) return v3_dot(v3_sub(pA, pB), frame_axis(FB, 0));
    imp_vec3 a1 = frame_axis(FA, 0), b1 = frame_axis(FB, 0);
    return atan2(v3_len(v3_cross(a1, b1)), v3_dot(a1, b1));
}

/* joint errors now (see impetus.h) */
static void errors_now(const imp_world *w, const joint *jt, int n, double *gap, double *ax)
{
    joint_side A, B;
    joint_side_now(w, jt->ia, n, jt->la, jt->fa, NULL, true, &A);
    joint_side_now(w, jt->ib, n, jt->lb, jt->fb, NULL, true, &B);
    imp_vec3 g = v3_sub(A.p, B.p), e = frame_axis(B.F, 0);
    switch (jt->type) {
    case IMP_JOINT_PRISMATIC: *gap = v3_len(v3_sub(g, v3_scale(e, v3_dot(g, e)))); break;
    case IMP_JOINT_PLANAR: *gap = fabs(v3_dot(g, e)); break;
    case IMP_JOINT_DISTANCE: *gap = fmax(fmax(jt->lo - v3_len(g), v3_len(g) - jt->hi), 0); break;
    case IMP_JOINT_SPRING: *gap = 0; break;
    default: *gap = v3_len(g);
    }
    if (jt->type == IMP_JOINT_DISTANCE || jt->type == IMP_JOINT_SPRING) {
        *ax = 0;
    } else if (jt->type == IMP_JOINT_RIGID || jt->type == IMP_JOINT_PRISMATIC) {
        imp_quat q = frame_error(A.F, B.F);
        *ax = 2 * atan2(sqrt(q.x * q.x + q.y * q.y + q.z * q.z), q.w);
    } else if (jt->type == IMP_JOINT_POINT) {
        *ax = 0;
    } else {
        *ax = v3_len(v3_cross(frame_axis(A.F, 0), e));
    }
}

int imp_joint_hub_count(const imp_world *w) { return w->joints && w->joints->ids.count ? w->joints->hub_count : 0; }

int imp_joint_errors(const imp_world *w, imp_id id, double *gap, double *axis_error)
{
    joint *p = joint_find(w, id);
    if (!p) return 0;
    joint jt = *p;
    if (!joint_bodies(w, &jt, w->bodies->ids.count)) return 0;
    errors_now(w, &jt, w->bodies->ids.count, gap, axis_error);
    return 1;
}

static imp_vec3 body_velocity(const imp_world *w, int i, int n)
{
    if (i >= n) return v3(0, 0, 0);
    return v3_scale(v3_load(w->bodies->state + BODY_DIM * i + 7), w->bodies->body[i].inv_mass);
}

static imp_vec3 body_angular_velocity(const imp_world *w, int i, int n)
{
    if (i >= n) return v3(0, 0, 0);
    const double *X = w->bodies->state + BODY_DIM * i;
    return m3_mul_v(m3_rotate_tensor(quat_to_m3(quat_of(X)), w->bodies->body[i].Ibody_inv), v3_load(X + 10));
}

int imp_joint_coordinate(const imp_world *w, imp_id id, double *value, double *speed)
{
    joint *p = joint_find(w, id);
    if (!p || !has_coordinate(p->type)) return 0;
    joint jt = *p;
    const int n = w->bodies->ids.count;
    if (!joint_bodies(w, &jt, n)) return 0;
    joint_side A, B;
    joint_side_now(w, jt.ia, n, jt.la, jt.fa, NULL, true, &A);
    joint_side_now(w, jt.ib, n, jt.lb, jt.fb, NULL, true, &B);
    imp_vec3 e = frame_axis(B.F, 0);
    imp_vec3 va = body_velocity(w, jt.ia, n), wa = body_angular_velocity(w, jt.ia, n), vb = body_velocity(w, jt.ib, n), wb = body_angular_velocity(w, jt.ib, n);
    if (angular_free(jt.type)) {
        *value = joint_hinge_angle(A.F, B.F, jt.angle);
        *speed = v3_dot(e, v3_sub(wa, wb));
    } else {
        imp_vec3 g = v3_sub(A.p, B.p);
        *value = v3_dot(g, e);
        imp_vec3 u = v3_sub(v3_add(va, v3_cross(wa, A.c)), v3_add(vb, v3_cross(wb, jt.ib < n ? B.c : v3(0, 0, 0))));
        *speed = v3_dot(u, e) + v3_dot(g, v3_cross(wb, e));
    }
    return 1;
}

void imp_joint_set_limits(imp_world *w, imp_id id, bool on, double lo, double hi)
{
    joint *p = joint_find(w, id);
    if (!p) return;
    if (on && !limits_ok(p->type, lo, hi)) return;
    p->has_limits = on, p->lo = lo, p->hi = hi;
    body_wake(w, p->a), body_wake(w, p->b);
}

bool imp_joint_set_twist_limits(imp_world *w, imp_id id, bool on, double lo, double hi)
{
    joint *p = joint_find(w, id);
    if (!p || p->type != IMP_JOINT_POINT) return false;
    if (on && !(lo <= hi && lo >= -M_PI && hi <= M_PI)) return false;
    p->has_twist = on, p->twist_lo = lo, p->twist_hi = hi;
    body_wake(w, p->a), body_wake(w, p->b);
    return true;
}
bool imp_joint_set_ball_motor(imp_world *w, imp_id id, bool on, imp_vec3 velocity, double max)
{
    joint *p = joint_find(w, id);
    if (!p || p->type != IMP_JOINT_POINT) return false;
    if (on && !(v3_len(velocity) <= IMP_JOINT_MAX_COORD && max >= 0 && max <= IMP_JOINT_MAX_FORCE)) return false;
    p->has_motor = on, p->motor_velocity = velocity, p->max = max, p->speed = 0;
    body_wake(w, p->a), body_wake(w, p->b);
    return true;
}
bool imp_joint_ball_motor(const imp_world *w, imp_id id, imp_vec3 *velocity, double *max)
{
    joint *p = joint_find(w, id);
    if (!p || p->type != IMP_JOINT_POINT || !p->has_motor) return false;
    *velocity = p->motor_velocity, *max = p->max;
    return true;
}
bool imp_joint_twist_limits(const imp_world *w, imp_id id, double *lo, double *hi)
{
    joint *p = joint_find(w, id);
    if (!p || !p->has_twist) return false;
    *lo = p->twist_lo, *hi = p->twist_hi;
    return true;
}
bool imp_joint_limits(const imp_world *w, imp_id id, double *lo, double *hi)
{
    joint *p = joint_find(w, id);
    if (!p || !p->has_limits) return false;
    *lo = p->lo, *hi = p->hi;
    return true;
}

void imp_joint_set_motor(imp_world *w, imp_id id, bool on, double speed, double max)
{
    joint *p = joint_find(w, id);
    if (!p) return;
    if (on && !motor_ok(speed, max)) return;
    p->has_motor = on, p->speed = speed, p->max = max;
    body_wake(w, p->a), body_wake(w, p->b);
}

bool imp_joint_motor(const imp_world *w, imp_id id, double *speed, double *max)
{
    joint *p = joint_find(w, id);
    if (!p || !p->has_motor) return false;
    *speed = p->speed, *max = p->max;
    return true;
}


/* ---- rows ----------------------------------------------------------------------------------------- */

/* the impulse directions of the rows (now): linear d at the midpoint, or angular d */
static void row_lin(row_block *R, int r, imp_vec3 d, imp_vec3 ra, imp_vec3 rb)
{
    imp_vec3 ta = v3_cross(ra, d), tb = v3_cross(rb, d);
    double *a = R->gA[r], *b = R->gB[r];
    a[0] = d.x, a[1] = d.y, a[2] = d.z, a[3] = ta.x, a[4] = ta.y, a[5] = ta.z;
    b[0] = -d.x, b[1] = -d.y, b[2] = -d.z, b[3] = -tb.x, b[4] = -tb.y, b[5] = -tb.z;
}

static void row_ang(row_block *R, int r, imp_vec3 d)
{
    double *a = R->gA[r], *b = R->gB[r];
    a[0] = a[1] = a[2] = 0, a[3] = d.x, a[4] = d.y, a[5] = d.z;
    b[0] = b[1] = b[2] = 0, b[3] = -d.x, b[4] = -d.y, b[5] = -d.z;
}


/* derivative of a predicted point row t.(p'_A - p'_B) (t fixed) into C; tb: t is B's, g the predicted gap */
static void joint_deriv_point(row_block *R, int r, imp_vec3 t, const joint_side *A, const joint_side *B, bool tb, imp_vec3 g, double h)
{
    set6(R->cA[r], v3_scale(t, h), m3_mul_tv(A->HL, v3_cross(A->c1, t)));
    imp_vec3 angb = v3_scale(m3_mul_tv(B->HL, v3_cross(B->c1, t)), -1);
    if (tb) angb = v3_add(angb, m3_mul_tv(B->HL, v3_cross(t, g)));
    set6(R->cB[r], v3_scale(t, -h), angb);
}

static void deriv_ang(row_block *R, int r, imp_vec3 rho_a, imp_vec3 rho_b, const joint_side *A, const joint_side *B)
{
    set6(R->cA[r], v3(0, 0, 0), m3_mul_tv(A->HL, rho_a));
    set6(R->cB[r], v3(0, 0, 0), m3_mul_tv(B->HL, rho_b));
}

/* the derivatives of a plain ball joint's three rows that a line search's trial left out (derivs_pending), at the
 * same prediction (the sides kept in R) */
void joint_rows_point_derivs(row_block *R, double h)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    imp_vec3 g = v3_sub(A->p1, B->p1);
    for (int c = 0; c < 3; c++) joint_deriv_point(R, c, v3(c == 0, c == 1, c == 2), A, B, false, g, h);
    R->derivs_pending = false;
}

/* the two sides of jt now (their frames only with frames: a plain ball joint needs no axes) */
static void rows_sides_now(const imp_world *w, const joint *jt, row_block *R, int n, const double *im, bool frames)
{
    joint_side_now(w, jt->ia, n, jt->la, jt->fa, im, frames, &R->sA);
    joint_side_now(w, jt->ib, n, jt->lb, jt->fb, im, frames, &R->sB);
}

/* the limit row, when the coordinate is at or past a bound: in pre-stabilization the predicted one, in
 * post-stabilization the one now. Returns the rows so far (m, or m + 1) */
static int rows_add_limit(joint *jt, row_block *R, int m, imp_vec3 ra, imp_vec3 rb, imp_vec3 aa, imp_vec3 eb, bool pre)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    const imp_joint_type ty = jt->type;
    double bound = 0, side = 0;
    const double x = pre ? limit_coordinate(jt, ty, A->F1, B->F1, A->p1, B->p1) : limit_coordinate(jt, ty, A->F, B->F, A->p, B->p);
    imp_vec3 dir = eb;
    if (ty == IMP_JOINT_POINT) { /* swing: phi = angle(a_A, a_B), a "hi" limit; row direction -n so that u = phi dot */
        imp_vec3 cr = v3_cross(aa, eb);
        if (!(v3_len(cr) > 1e-12)) cr = v3_cross(aa, fabs(aa.x) < 0.6 ? v3(1, 0, 0) : v3(0, 1, 0)); /* antiparallel: any normal */
        dir = v3_scale(v3_normalize(cr), -1);
    }
    double lo = ty == IMP_JOINT_POINT ? -INFINITY : jt->lo, hi = jt->hi, slop = pre ? 0 : LIMIT_SLOP;
    if (x < lo + slop) bound = lo, side = 1;
    else if (x > hi - slop) bound = hi, side = -1;
    /* in pre-stabilization a limit met at any prediction of the stage stays active to its end:
     * otherwise a solve that brought the prediction back to the bound would drop the row, and
     * the next (the global Newton, without it) carry the coordinate past the bound again */
    if (pre && side != 0) jt->pre_side = (int)side, jt->pre_bound = bound;
    else if (pre && jt->pre_side) side = jt->pre_side, bound = jt->pre_bound;
    if (!(side != 0 && v3_len(dir) > 0)) return m;
    if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, dir, ra, rb);
    else row_ang(R, m, dir);
    R->kind[m] = ROW_LIMIT;
    R->lo[m] = side > 0 ? 0 : -INFINITY, R->hi[m] = side > 0 ? INFINITY : 0;
    /* a bound far from the coordinate now (limits set away from the pose) is approached by at
     * most LIMIT_REACH a step: a step's turn cannot be followed past pi */
    const double now = pre ? limit_coordinate(jt, ty, A->F, B->F, A->p, B->p) : x;
    R->limit_target = fmin(fmax(bound, now - LIMIT_REACH), now + LIMIT_REACH);
    return m + 1;
}

/* the motor row. In pre-stabilization, while the motor has torque to spare (it was not clamped in the
 * velocity stages) and no limit row is active, the predicted coordinate is the one now plus h speed, so
 * the position update turns the joint at the motor's speed exactly, whatever the curvature of the other
 * joints' paths asks of the velocities. In post-stabilization (with motor) its multiplier is boxed by
 * what is left of this step's max h (the motor acts in several stages). Returns the rows so far */
static int rows_add_motor(const joint *jt, row_block *R, int m, imp_vec3 ra, imp_vec3 rb, imp_vec3 eb, double h, bool pre, bool motor)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    const imp_joint_type ty = jt->type;
    if (pre && jt->has_motor && !jt->motor_sat && has_coordinate(ty) && m < MAX_ROWS && (m == 0 || R->kind[m - 1] != ROW_LIMIT)) {
        if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, eb, ra, rb), R->motor_target = v3_dot(v3_sub(A->p, B->p), eb);
        else row_ang(R, m, eb), R->motor_target = joint_hinge_angle(A->F, B->F, jt->angle);
        R->motor_target += h * jt->speed;
        R->kind[m] = ROW_MOTOR, R->lo[m] = -INFINITY, R->hi[m] = INFINITY;
        R->motor_speed[m] = jt->speed, R->motor_axis[m] = -1;
        return m + 1;
    }
    if (!pre && motor && jt->has_motor && has_coordinate(ty) && m < MAX_ROWS) {
        if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, eb, ra, rb);
        else row_ang(R, m, eb);
        R->kind[m] = ROW_MOTOR, R->lo[m] = fmin(-jt->max * h - jt->motor_used, 0), R->hi[m] = fmax(jt->max * h - jt->motor_used, 0);
        R->motor_speed[m] = jt->speed, R->motor_axis[m] = -1;
        return m + 1;
    }
    /* a point joint's motor: three angular rows along the world axes, each driving its component of
     * omega_A - omega_B to the motor's velocity with at most max h of impulse in the step (velocity
     * stages only: a ball joint has no coordinate for pre-stabilization to aim at) */
    if (!pre && motor && jt->has_motor && ty == IMP_JOINT_POINT && m + 3 <= MAX_ROWS) {
        const double target[3] = {jt->motor_velocity.x, jt->motor_velocity.y, jt->motor_velocity.z};
        for (int c = 0; c < 3; c++, m++) {
            row_ang(R, m, v3(c == 0, c == 1, c == 2));
            const double used = jt->motor_used_axis[c];
            R->kind[m] = ROW_MOTOR, R->lo[m] = fmin(-jt->max * h - used, 0), R->hi[m] = fmax(jt->max * h - used, 0);
            R->motor_speed[m] = target[c], R->motor_axis[m] = c;
        }
    }
    return m;
}

/* A distance joint's row: along the line of its two points now, d = (p_A - p_B) / |p_A - p_B| (y when they
 * coincide), a linear row at the midpoint; an equality when lo == hi (a rod), else an inequality while the
 * distance (predicted in pre-stabilization, now in post-stabilization) is at or past a bound: at hi the
 * multiplier may only pull (lambda <= 0), at lo only push; none in between (a slack rope). As a limit, a
 * bound once met in pre-stabilization stays a row for the stage. A spring has no rows. */
static void rows_distance(joint *jt, row_block *R, imp_vec3 ra, imp_vec3 rb, bool pre)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    R->m = 0, R->axis_rows = false, R->twist_row = -1;
    if (jt->type != IMP_JOINT_DISTANCE) return;
    imp_vec3 d = v3_sub(A->p, B->p);
    d = v3_len(d) > 1e-12 ? v3_normalize(d) : v3(0, 1, 0);
    const double x = v3_len(pre ? v3_sub(A->p1, B->p1) : v3_sub(A->p, B->p)), slop = pre ? 0 : LIMIT_SLOP;
    double side = 0, bound = 0;
    if (jt->lo == jt->hi) side = 2, bound = jt->lo;
    else if (x < jt->lo + slop) side = 1, bound = jt->lo;
    else if (x > jt->hi - slop) side = -1, bound = jt->hi;
    if (pre && side != 0) jt->pre_side = (int)side, jt->pre_bound = bound;
    else if (pre && jt->pre_side) side = jt->pre_side, bound = jt->pre_bound;
    if (side == 0) return;
    row_lin(R, 0, d, ra, rb);
    R->kind[0] = side == 2 ? ROW_EQ : ROW_LIMIT;
    R->lo[0] = side > 0 ? (side == 2 ? -INFINITY : 0) : -INFINITY, R->hi[0] = side < 0 ? 0 : INFINITY;
    R->limit_target = bound;
    R->m = 1;
}

/* A point joint's twist limit: the twist theta = 2 atan2(x, w) of q = conj(F_B) F_A (the rotation about
 * x left when the swing that takes B's axis onto A's is taken out), in (-pi, pi]; its rate is about
 * b.(omega_A - omega_B), b B's axis, the row's angular direction (exact without swing, as a hinge's). A row
 * while the twist (predicted in pre-stabilization) is at or past a bound, pushing one way, and kept for the
 * stage once met. Before the swing limit's row, so that residuals_limit_motor finds that one after it. */
static int rows_add_twist(joint *jt, row_block *R, int m, imp_vec3 eb, bool pre)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    R->twist_row = -1;
    if (!jt->has_twist || jt->type != IMP_JOINT_POINT || m >= MAX_ROWS) return m;
    const double x = pre ? joint_hinge_angle(A->F1, B->F1, 0) : joint_hinge_angle(A->F, B->F, 0), slop = pre ? 0 : LIMIT_SLOP;
    double side = 0, bound = 0;
    if (x < jt->twist_lo + slop) side = 1, bound = jt->twist_lo;
    else if (x > jt->twist_hi - slop) side = -1, bound = jt->twist_hi;
    if (pre && side != 0) jt->twist_pre_side = (int)side, jt->twist_pre_bound = bound;
    else if (pre && jt->twist_pre_side) side = jt->twist_pre_side, bound = jt->twist_pre_bound;
    if (side == 0) return m;
    row_ang(R, m, eb);
    R->kind[m] = ROW_LIMIT, R->lo[m] = side > 0 ? 0 : -INFINITY, R->hi[m] = side > 0 ? INFINITY : 0;
    const double now = pre ? joint_hinge_angle(A->F, B->F, 0) : x;
    R->twist_target = fmin(fmax(bound, now - LIMIT_REACH), now + LIMIT_REACH);
    R->twist_row = m;
    return m + 1;
}

/* the rows' impulse directions now (linear d at the midpoint of the two articulation points, or angular
 * d), their kinds and bounds, and W g; pre: which limit rows are active at the prediction */
static void rows_directions(joint *jt, row_block *R, const imp_mat3 *Iinv, const double *im, double h, bool frames, bool pre, bool motor)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    const imp_joint_type ty = jt->type;
    /* a plain ball joint's directions depend on its sides alone (no limit, motor or twist row comes or
     * goes): the stages at one set of positions (post-stabilization after the position update, the next
     * step's after the velocity update and its pre-stabilization) build the same ones */
    const bool plain = ty == IMP_JOINT_POINT && !jt->has_limits && !jt->has_motor && !jt->has_twist;
    double key[DIR_KEY];
    if (plain) {
        const joint_side *S[2] = {A, B};
        double *k = key;
        for (int e = 0; e < 2; e++) {
            const joint_side *X = S[e];
            *k++ = X->i, *k++ = X->moves, *k++ = X->moves ? im[X->i] : 0;
            *k++ = X->x.x, *k++ = X->x.y, *k++ = X->x.z, *k++ = X->c.x, *k++ = X->c.y, *k++ = X->c.z;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) *k++ = X->moves ? Iinv[X->i].m[r][c] : 0;
        }
        if (R->dir_valid && !memcmp(key, R->dir_key, sizeof key)) {
            for (int r = 0; r < MAX_ROWS; r++) R->fixed[r] = false;
            return;
        }
    }
    R->dir_valid = false, R->dir_version++;
    if (ty == IMP_JOINT_DISTANCE || ty == IMP_JOINT_SPRING) {
        const imp_vec3 mid = v3_scale(v3_add(A->p, B->p), 0.5);
        rows_distance(jt, R, v3_sub(mid, A->x), v3_sub(mid, B->x), pre);
        joint_rows_weights(R, Iinv, im);
        for (int r = 0; r < MAX_ROWS; r++) R->fixed[r] = false;
        return;
    }
    imp_vec3 mid = v3_scale(v3_add(A->p, B->p), 0.5);
    imp_vec3 ra = v3_sub(mid, A->x), rb = v3_sub(mid, B->x);
    imp_vec3 aa = frames ? frame_axis(A->F, 0) : v3(0, 0, 0), eb = frames ? frame_axis(B->F, 0) : v3(0, 0, 0);
    int m = 0;
    if (ty == IMP_JOINT_PRISMATIC) {
        row_lin(R, m++, frame_axis(B->F, 1), ra, rb), row_lin(R, m++, frame_axis(B->F, 2), ra, rb);
    } else if (ty == IMP_JOINT_PLANAR) {
        row_lin(R, m++, eb, ra, rb);
    } else {
        for (int c = 0; c < 3; c++) row_lin(R, m++, v3(c == 0, c == 1, c == 2), ra, rb);
    }
    R->axis_rows = ty != IMP_JOINT_PRISMATIC && ty != IMP_JOINT_PLANAR;
    if (ty == IMP_JOINT_HINGE || ty == IMP_JOINT_TWIST || ty == IMP_JOINT_PLANAR) {
        imp_vec3 t1, t2;
        v3_basis(aa, &t1, &t2);
        row_ang(R, m++, t1), row_ang(R, m++, t2);
    } else if (ty == IMP_JOINT_RIGID || ty == IMP_JOINT_PRISMATIC) {
        for (int c = 0; c < 3; c++) row_ang(R, m++, v3(c == 0, c == 1, c == 2));
    }
    for (int r = 0; r < m; r++) R->kind[r] = ROW_EQ, R->lo[r] = -INFINITY, R->hi[r] = INFINITY;
    m = rows_add_twist(jt, R, m, eb, pre);
    if (jt->has_limits && (angular_free(ty) || ty == IMP_JOINT_PRISMATIC || ty == IMP_JOINT_POINT)) m = rows_add_limit(jt, R, m, ra, rb, aa, eb, pre);
    R->m = rows_add_motor(jt, R, m, ra, rb, eb, h, pre, motor);
    joint_rows_weights(R, Iinv, im);
    for (int r = 0; r < MAX_ROWS; r++) R->fixed[r] = false;
    if (plain) R->dir_valid = true, memcpy(R->dir_key, key, sizeof key);
}

/* velocity rows: C = G, and the right-hand side f = target - u at the velocities (v, om) */
static void rows_velocity_rhs(row_block *R, int n, const imp_vec3 *v, const imp_vec3 *om)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    imp_vec3 va = A->i < n ? v[A->i] : v3(0, 0, 0), wa = A->i < n ? om[A->i] : v3(0, 0, 0);
    imp_vec3 vb = B->i < n ? v[B->i] : v3(0, 0, 0), wb = B->i < n ? om[B->i] : v3(0, 0, 0);
    for (int r = 0; r < R->m; r++) {
        memcpy(R->cA[r], R->gA[r], sizeof R->cA[r]), memcpy(R->cB[r], R->gB[r], sizeof R->cB[r]);
        const double *a = R->gA[r], *b = R->gB[r];
        double u = a[0] * va.x + a[1] * va.y + a[2] * va.z + a[3] * wa.x + a[4] * wa.y + a[5] * wa.z +
                   b[0] * vb.x + b[1] * vb.y + b[2] * vb.z + b[3] * wb.x + b[4] * wb.y + b[5] * wb.z;
        R->f[r] = (R->kind[r] == ROW_MOTOR ? R->motor_speed[r] : 0) - u;
    }
}

/* the predicted residuals and derivatives of the limit row (row m: the coordinate against the target
 * kept from the directions' build) and of the motor row after it (the coordinate against now + h speed) */
static void residuals_limit_motor(const joint *jt, row_block *R, int m, int n, imp_vec3 g, imp_vec3 a1, imp_vec3 b1, double h)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    const imp_joint_type ty = jt->type;
    if (m < R->m && m == R->twist_row) { /* a point joint's twist limit (rows_add_twist) */
        R->f[m] = joint_hinge_angle(A->F1, B->F1, 0) - R->twist_target;
        deriv_ang(R, m, b1, v3_scale(b1, -1), A, B);
        m++;
    }
    if (m < R->m && R->kind[m] == ROW_LIMIT) {
        double target = R->limit_target;
        if (angular_free(ty)) {
            R->f[m] = joint_hinge_angle(A->F1, B->F1, jt->angle) - target;
            deriv_ang(R, m, b1, v3_scale(b1, -1), A, B);
        } else if (ty == IMP_JOINT_PRISMATIC) {
            R->f[m] = v3_dot(g, b1) - target;
            joint_deriv_point(R, m, b1, A, B, jt->ib < n, g, h);
        } else {
            imp_vec3 cr = v3_cross(a1, b1);
            double s = v3_len(cr);
            R->f[m] = atan2(s, v3_dot(a1, b1)) - target;
            imp_vec3 nn = s > 1e-12 ? v3_scale(cr, 1 / s) : v3(0, 0, 0);
            deriv_ang(R, m, v3_scale(nn, -1), nn, A, B);
        }
        m++;
    }
    if (m < R->m && R->kind[m] == ROW_MOTOR) {
        if (angular_free(ty)) {
            R->f[m] = joint_hinge_angle(A->F1, B->F1, R->motor_target) - R->motor_target;
            deriv_ang(R, m, b1, v3_scale(b1, -1), A, B);
        } else {
            R->f[m] = v3_dot(g, b1) - R->motor_target;
            joint_deriv_point(R, m, b1, A, B, jt->ib < n, g, h);
        }
    }
}

/* the predicted residuals f and their derivatives C of every row (the header's table) */
static inline __attribute__((always_inline)) void rows_residuals(const imp_world *w, const joint *jt, row_block *R, int n, double h, bool frames)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    const imp_joint_type ty = jt->type;
    R->derivs_pending = false;
    imp_vec3 g = v3_sub(A->p1, B->p1);
    if (ty == IMP_JOINT_DISTANCE || ty == IMP_JOINT_SPRING) { /* |g| - bound, d|g| = (g / |g|) . dg */
        if (R->m == 1) {
            const double len = v3_len(g);
            R->f[0] = len - R->limit_target;
            joint_deriv_point(R, 0, len > 1e-12 ? v3_scale(g, 1 / len) : v3(0, 1, 0), A, B, false, g, h);
        }
        return;
    }
    imp_vec3 a1 = frames ? frame_axis(A->F1, 0) : v3(0, 0, 0), b1 = frames ? frame_axis(B->F1, 0) : v3(0, 0, 0);
    int m = 0;
    if (ty == IMP_JOINT_PRISMATIC || ty == IMP_JOINT_PLANAR) {
        for (int k = ty == IMP_JOINT_PLANAR ? 0 : 1; k <= (ty == IMP_JOINT_PLANAR ? 0 : 2); k++) {
            imp_vec3 t = frame_axis(B->F1, k);
            R->f[m] = v3_dot(g, t);
            joint_deriv_point(R, m++, t, A, B, jt->ib < n, g, h);
        }
    } else {
        /* a plain ball joint in a line search's trial: the residuals only, its C when a step needs it
         * (joint_rows_point_derivs: the same numbers from the same sides) */
        const bool defer = ty == IMP_JOINT_POINT && R->m == 3 && w->joints && w->joints->line_trial;
        for (int c = 0; c < 3; c++) {
            imp_vec3 t = v3(c == 0, c == 1, c == 2);
            R->f[m] = v3_dot(g, t);
            if (defer) m++;
            else joint_deriv_point(R, m++, t, A, B, false, g, h);
        }
        R->derivs_pending = defer;
    }
    if (ty == IMP_JOINT_HINGE || ty == IMP_JOINT_TWIST || ty == IMP_JOINT_PLANAR) {
        imp_vec3 e = v3_cross(a1, b1), t[2];
        v3_basis(a1, &t[0], &t[1]);
        for (int k = 0; k < 2; k++) {
            R->f[m] = v3_dot(t[k], e);
            deriv_ang(R, m++, v3_cross(a1, v3_cross(b1, t[k])), v3_cross(b1, v3_cross(t[k], a1)), A, B);
        }
    } else if (ty == IMP_JOINT_RIGID || ty == IMP_JOINT_PRISMATIC) {
        imp_quat q = quat_mul(A->F1, quat_conj(B->F1));
        double sg = q.w < 0 ? -1 : 1;
        imp_vec3 vq = v3(q.x, q.y, q.z);
        for (int c = 0; c < 3; c++) {
            imp_vec3 ei = v3(c == 0, c == 1, c == 2);
            R->f[m] = 2 * sg * v3_dot(vq, ei);
            imp_vec3 vx = v3_cross(vq, ei);
            deriv_ang(R, m++, v3_scale(v3_add(v3_scale(ei, q.w), vx), sg), v3_scale(v3_sub(v3_scale(ei, q.w), vx), -sg), A, B);
        }
    }
    residuals_limit_motor(jt, R, m, n, g, a1, b1, h);
}

/* a plain ball joint needs no axes */
static bool needs_frames(const joint *jt)
{
    return (jt->type != IMP_JOINT_POINT && jt->type != IMP_JOINT_DISTANCE && jt->type != IMP_JOINT_SPRING) || jt->has_limits || jt->has_twist;
}

/* Post-stabilization's rows of jt at the positions now: with directions, the impulse directions G, the
 * kinds and bounds (motor rows if motor) and W G, else those of the stage's first build; then, with v,
 * C = G and f = target - u at the velocities (v, om) (without v: the directions only, joints_rows) */
void joint_rows_velocity(const imp_world *w, joint *jt, row_block *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                         const imp_mat3 *Iinv, const double *im, double h, bool directions, bool motor)
{
    const bool frames = needs_frames(jt);
    rows_sides_now(w, jt, R, n, im, frames);
    if (directions) rows_directions(jt, R, Iinv, im, h, frames, false, motor);
    if (v) rows_velocity_rhs(R, n, v, om);
}

/* Pre-stabilization's rows of jt: the residuals f and derivatives C at the prediction from the velocities
 * (v, om) over h; with directions also the sides now, the impulse directions G and which limit rows are
 * active (kept through the Newton iteration: without, those of the last build with directions) */
void joint_rows_predicted(const imp_world *w, joint *jt, row_block *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                          const imp_mat3 *Iinv, const double *im, double h, bool directions)
{
    const bool frames = needs_frames(jt);
    if (directions) rows_sides_now(w, jt, R, n, im, frames);
    joint_side_predict(w, jt->la, jt->fa, v, om, h, frames, jt->axis_sides & 1, &R->sA);
    joint_side_predict(w, jt->lb, jt->fb, v, om, h, frames, jt->axis_sides & 2, &R->sB);
    if (directions) rows_directions(jt, R, Iinv, im, h, frames, true, false);
    rows_residuals(w, jt, R, n, h, frames);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* ---- the step's topology ------------------------------------------------------------------------------ */

/* the per-body and per-pair tables of joints_prepare, grown to n bodies */
static void prepare_tables(struct joint_set *js, int n)
{
    if (n > js->body_cap || !js->loop_parent) { /* (allocated with no bodies too: loop_parent[n] is the world) */
        js->body_cap = n * 3 / 2 + 16;
        js->jointed = ids_grow(js->jointed, 1, js->body_cap);
        js->island_parent = ids_grow(js->island_parent, sizeof(int), js->body_cap);
        js->loop_parent = ids_grow(js->loop_parent, sizeof(int), js->body_cap + 1);
        js->pivot = ids_grow(js->pivot, sizeof(int), js->body_cap);
        js->half_kick = ids_grow(js->half_kick, 1, js->body_cap);
    }
    if (js->ids.count > js->pair_cap) {
        js->pair_cap = js->ids.count * 3 / 2 + 16;
        js->pairs = ids_grow(js->pairs, sizeof(uint64_t), js->pair_cap);
    }
}

static int uf_root(int *parent, int r)
{
    while (parent[r] != r) r = parent[r] = parent[parent[r]];
    return r;
}

/* a live joint's part of the step's topology: its body pair; the union-find with everything that does
 * not move as one node (a joint whose ends are already joined closes a loop); the joint islands of
 * dynamic bodies (sleeping) */
static void prepare_joint(imp_world *w, struct joint_set *js, const joint *jt, int n)
{
    uint64_t lo = (uint64_t)(jt->ia < jt->ib ? jt->ia : jt->ib), hi = (uint64_t)(jt->ia < jt->ib ? jt->ib : jt->ia);
    js->pairs[js->npairs++] = lo << 32 | hi; /* the world is n */
    int ra = jt->ia < n && w->bodies->body[jt->ia].motion == IMP_DYNAMIC ? jt->ia : n;
    int rb = jt->ib < n && w->bodies->body[jt->ib].motion == IMP_DYNAMIC ? jt->ib : n;
    ra = uf_root(js->loop_parent, ra), rb = uf_root(js->loop_parent, rb);
    if (ra == rb) js->loops = js->loops || ra != n; /* no dynamic end: an inert joint, no loop */
    else js->loop_parent[ra] = rb;
    if (jt->ib < n && w->bodies->body[jt->ia].motion == IMP_DYNAMIC && w->bodies->body[jt->ib].motion == IMP_DYNAMIC) {
        ra = uf_root(js->island_parent, jt->ia), rb = uf_root(js->island_parent, jt->ib);
        if (ra != rb) js->island_parent[ra] = rb;
    }
}

/* a joint island sleeps and wakes as one: any awake member wakes the rest; then jointed marks the awake
 * dynamic bodies with a live joint */
static void prepare_islands(imp_world *w, struct joint_set *js, int n)
{
    body *bodies = w->bodies->body;
    memset(js->jointed, 0, (size_t)n);
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->joint[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++)
            if (ends[e] < n && bodies[ends[e]].motion == IMP_DYNAMIC && !bodies[ends[e]].asleep) {
                int r = ends[e];
                while (js->island_parent[r] != r) r = js->island_parent[r];
                js->jointed[r] = 2; /* the root marks an awake island */
            }
    }
    for (int i = 0; i < n; i++) {
        int r = i;
        while (js->island_parent[r] != r) r = js->island_parent[r];
        if (js->jointed[r] == 2 && bodies[i].asleep) bodies[i].asleep = 0, bodies[i].sleep_time = 0;
    }
    memset(js->jointed, 0, (size_t)n);
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->joint[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++)
            if (ends[e] < n && bodies[ends[e]].motion == IMP_DYNAMIC && !bodies[ends[e]].asleep) js->jointed[ends[e]] = 1;
    }
}

/* The step's topology: each joint's dense bodies (a joint whose body was destroyed wakes its partner,
 * once), the pairs joined (their contacts are ignored), whether the joints close a loop, and the joint
 * islands, awake as one. Returns the live joints */
int joints_prepare(imp_world *w, int n)
{
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return 0;
    prepare_tables(js, n);
    js->npairs = 0, js->pre_stab_h = 0;
    for (int i = 0; i < n; i++) js->island_parent[i] = i;
    for (int i = 0; i <= n; i++) js->loop_parent[i] = i;
    js->loops = false;
    int live = 0;
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->joint[k];
        jt->motor_used = 0, jt->motor_sat = false; /* a new step */
        jt->motor_used_axis[0] = jt->motor_used_axis[1] = jt->motor_used_axis[2] = 0;
        if (!joint_bodies(w, jt, n)) {
            if (!jt->woke) { /* a body of it was destroyed: the partner wakes, once */
                jt->woke = true;
                if (jt->ia >= 0 && jt->ia < n) w->bodies->body[jt->ia].asleep = 0, w->bodies->body[jt->ia].sleep_time = 0;
                if (jt->ib >= 0 && jt->ib < n) w->bodies->body[jt->ib].asleep = 0, w->bodies->body[jt->ib].sleep_time = 0;
            }
            continue;
        }
        if (jt->type == IMP_JOINT_SPRING) { /* no rows, no island: joint_force.c kicks its bodies */
            jt->ia = jt->ib = -1;
            continue;
        }
        live++;
        prepare_joint(w, js, jt, n);
        jt->axis_sides = joint_axis_sides(w, jt, n);
    }
    prepare_islands(w, js, n);
    qsort(js->pairs, (size_t)js->npairs, sizeof(uint64_t), cmp_u64);
    return live;
}

/* the jointed bodies of joint islands that no body of `touches` (per dense body) is in take their
 * forces' impulse in two halves, around the position update (impulse.c's velocity stage) */
void joints_mark_half_kicks(imp_world *w, const uint8_t *touches, int n)
{
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    for (int i = 0; i < n; i++) js->half_kick[i] = 1;
    for (int i = 0; i < n; i++)
        if (touches[i]) js->half_kick[uf_root(js->island_parent, i)] = 0;
    for (int i = 0; i < n; i++) js->half_kick[i] = js->jointed[i] && js->half_kick[uf_root(js->island_parent, i)];
}

bool joints_half_kick(const imp_world *w, int i) { return w->joints && w->joints->half_kick && w->joints->half_kick[i]; }

/* are dense bodies a and b joined (their contacts are ignored, as S1's articulated bodies' are)? */
bool joints_connected(const imp_world *w, int a, int b)
{
    const struct joint_set *js = w->joints;
    if (!js || !js->npairs) return false;
    uint64_t key = (uint64_t)(a < b ? a : b) << 32 | (uint64_t)(a < b ? b : a);
    int lo = 0, hi = js->npairs;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (js->pairs[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < js->npairs && js->pairs[lo] == key;
}

const uint8_t *joints_jointed(const imp_world *w) { return w->joints && w->joints->ids.count ? w->joints->jointed : NULL; }

int joints_pairs(const imp_world *w, const uint64_t **pairs)
{
    if (!w->joints) return 0;
    *pairs = w->joints->pairs;
    return w->joints->npairs;
}

int joints_rows(const imp_world *w, int k, joint_row out[6])
{
    if (!w->joints || k < 0 || k >= w->joints->ids.count) return 0;
    joint jt = w->joints->joint[k];
    const int n = w->bodies->ids.count;
    if (!joint_bodies(w, &jt, n)) return 0;
    jt.has_limits = false;
    row_block R;
    R.dir_valid = false, R.dir_version = 0; /* (no directions kept: built here) */
    joint_rows_velocity(w, &jt, &R, n, NULL, NULL, NULL, NULL, 0, true, false);
    joint_side A, B;
    joint_side_now(w, jt.ia, n, jt.la, jt.fa, NULL, true, &A);
    joint_side_now(w, jt.ib, n, jt.lb, jt.fb, NULL, true, &B);
    for (int r = 0; r < R.m; r++) {
        const double *g = R.gA[r];
        bool ang = g[0] == 0 && g[1] == 0 && g[2] == 0;
        out[r].a = jt.a, out[r].b = jt.b, out[r].pa = A.p, out[r].pb = B.p, out[r].angular = ang;
        out[r].fa = jt.fa, out[r].fb = jt.fb;
        out[r].dir = ang ? v3(g[3], g[4], g[5]) : v3(g[0], g[1], g[2]);
    }
    return R.m;
}

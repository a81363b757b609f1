/* rotation.c: the torque-free rotation of a rigid body over a step, with its derivative.
 *
 * A free body keeps its angular momentum L (world) while it turns; its angular velocity
 * omega = I(t)^-1 L changes as the inertia turns with it, which is the gyroscopic motion (precession,
 * nutation, the flips about the intermediate axis). The stages that move jointed bodies (joint.c's
 * prediction, joint_position.c's position update) turn them by this flow, so they keep L as a free
 * body does and the joints add only their impulses.
 *
 * The flow (Dullweber, Leimkuhler and McLachlan 1997; Touma and Wisdom): with pi = R^T L the momentum
 * in the principal frame (moments I_1, I_2, I_3) the energy splits as
 *     H = |pi|^2 / (2 I_r)  +  sum_i c_i pi_i^2 / 2,      c_i = 1/I_i - 1/I_r,
 * I_r the middle moment, so one c_i is zero. Each part's flow is a rotation, exactly:
 *     |pi|^2 / (2 I_r):   R -> exp(h L / I_r) R              (about L; |pi| is conserved by every part,
 *                                                              so this flow commutes with the others)
 *     c_i pi_i^2 / 2:     R -> Rot(a_i, h c_i (a_i . L)) R   (about the principal axis a_i = R e_i,
 *                                                              which it leaves in place)
 * An axially symmetric body (I_1 = I_2 or I_2 = I_3) has one part besides the first, and the product of
 * the two rotations is its exact flow. Otherwise the two parts that do not commute are composed
 * symmetrically (Strang: a_j for h/2, a_k for h, a_j for h/2) in pieces that turn the body by at most
 * ROT_PIECE about either axis (counted by the caller from the step's starting momentum, so that the
 * count is the same for every evaluation of a step): second order, and every piece keeps L and |pi|
 * exactly.
 *
 * The derivative. Write a change of the orientation as a world rotation vector, R -> exp(dtheta) R. The
 * rotation about L: exp(theta_c) with theta_c = h L / I_r, so
 *     dtheta' = Rot(theta_c) dtheta + (h / I_r) J_l(theta_c) dL
 * (J_l the left Jacobian of SO(3)). The rotation about a with angle phi = s (a . L), s = h c_i:
 * R' = Rot(a, phi) R. A change dtheta of R moves the axis, da = dtheta x a, and the angle,
 * dphi = s (da . L + a . dL) = s (dtheta . (a x L) + a . dL). Perturbing both, with da normal to a,
 *     Rot(a + da, phi + dphi) Rot(a, phi)^-1 = exp(dphi a + sin(phi) da + (1 - cos(phi)) a x da)
 *     Rot(a, phi) exp(dtheta) Rot(a, phi)^-1 = exp(Rot(a, phi) dtheta)
 * and Rot(a, phi) = 1 + sin(phi) [a]x + (1 - cos(phi)) [a]x^2 cancels against the da terms:
 *     dtheta' = dtheta + s a ((a x L) . dtheta + a . dL).
 * Composed over the parts from dtheta = 0 (q is given) this is G = dtheta1 / dL, and with L = I(q) om,
 * HL = G I(q). For equal moments it is h J_l(h om), the turn at held omega. */
#include <math.h>
#include <stddef.h>

#include "rotation.h"

#define ROT_PIECE 0.1         /* rad: the most a Strang piece turns about a principal axis         */
#define ROT_MAX_PIECES 32
#define ROT_EQUAL 1e-12       /* moments equal to this fraction are equal (no part of their own)    */
#define JACOBI_SWEEPS 32

void rot_exp(imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL)
{
    imp_vec3 th = v3_scale(om, h);
    double t = v3_len(th), t2 = t * t, ex, cw, c1, c2;
    if (t < 1e-4) {
        ex = 0.5 - t2 / 48, cw = cos(0.5 * t), c1 = 0.5 - t2 / 24, c2 = 1.0 / 6 - t2 / 120;
    } else {
        double sh = sin(0.5 * t), ch = cos(0.5 * t);
        ex = sh / t, cw = ch, c1 = 2 * sh * sh / t2, c2 = (t - 2 * sh * ch) / (t2 * t);
    }
    imp_quat e = quat(cw, ex * th.x, ex * th.y, ex * th.z);
    imp_quat r = quat_normalize(quat_mul(e, q));
    if (r.w * q.w + r.x * q.x + r.y * q.y + r.z * q.z < 0) r = quat(-r.w, -r.x, -r.y, -r.z);
    *q1 = r;
    /* [theta]x^2 = theta theta^T - t^2 1, so h J_l = h ((1 - c2 t^2) 1 + c1 [theta]x + c2 theta theta^T) */
    const double d = h * (1 - c2 * t2), a = h * c1, b = h * c2;
    const double xx = b * th.x * th.x, yy = b * th.y * th.y, zz = b * th.z * th.z;
    const double xy = b * th.x * th.y, xz = b * th.x * th.z, yz = b * th.y * th.z;
    *HL = (imp_mat3){{{d + xx, xy - a * th.z, xz + a * th.y}, {xy + a * th.z, d + yy, yz - a * th.x}, {xz - a * th.y, yz + a * th.x, d + zz}}};
}

static double moment(imp_vec3 m, int i) { return i == 0 ? m.x : i == 1 ? m.y : m.z; }

/* Cyclic Jacobi rotations zero the off-diagonal entries of the symmetric I one pair at a time; the
 * product of the rotations is the axes. The columns are made a right-handed frame. */
rot_inertia rot_principal(imp_mat3 I)
{
    double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) a[r][c] = 0.5 * (I.m[r][c] + I.m[c][r]);
    for (int sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        double diag = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
        if (!(off > 1e-17 * diag)) break;
        for (int p = 0; p < 2; p++)
            for (int k = p + 1; k < 3; k++) {
                if (a[p][k] == 0) continue;
                /* the rotation in the (p, k) plane that zeroes a_pk: tan(2 phi) = 2 a_pk / (a_kk - a_pp) */
                double theta = (a[k][k] - a[p][p]) / (2 * a[p][k]);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int r = 0; r < 3; r++) { /* a <- a J */
                    double x = a[r][p], y = a[r][k];
                    a[r][p] = c * x - s * y, a[r][k] = s * x + c * y;
                }
                for (int r = 0; r < 3; r++) { /* a <- J^T a */
                    double x = a[p][r], y = a[k][r];
                    a[p][r] = c * x - s * y, a[k][r] = s * x + c * y;
                }
                for (int r = 0; r < 3; r++) { /* v <- v J */
                    double x = v[r][p], y = v[r][k];
                    v[r][p] = c * x - s * y, v[r][k] = s * x + c * y;
                }
            }
    }
    rot_inertia out;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out.axes.m[r][c] = v[r][c];
    if (m3_det(out.axes) < 0)
        for (int r = 0; r < 3; r++) out.axes.m[r][2] = -out.axes.m[r][2];
    out.moments = v3(a[0][0], a[1][1], a[2][2]);
    out.body_axes = true;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out.body_axes = out.body_axes && out.axes.m[r][c] == (r == c);
    const imp_vec3 m = out.moments;
    int ref = 0;
    if ((m.x - m.y) * (m.z - m.y) <= 0) ref = 1;
    else if ((m.x - m.z) * (m.y - m.z) <= 0) ref = 2;
    out.j = (ref + 1) % 3, out.k = (ref + 2) % 3;
    out.Ir = moment(m, ref);
    out.cj = 1 / moment(m, out.j) - 1 / out.Ir, out.ck = 1 / moment(m, out.k) - 1 / out.Ir;
    out.use_j = out.Ir > 0 && fabs(moment(m, out.j) - out.Ir) > ROT_EQUAL * out.Ir;
    out.use_k = out.Ir > 0 && fabs(moment(m, out.k) - out.Ir) > ROT_EQUAL * out.Ir;
    return out;
}

/* R -> Rot(a, s (a . L)) R on the quaternion r and the other tracked axis b (if any);
 * G += s a ((a x L)^T G + a^T) */
static void flow_axis(imp_vec3 a, double s, imp_vec3 L, imp_quat *r, imp_vec3 *b, imp_mat3 *G)
{
    const double phi = s * v3_dot(a, L);
    const imp_vec3 u = v3_add(m3_mul_tv(*G, v3_cross(a, L)), a); /* G^T (a x L) + a */
    for (int i = 0; i < 3; i++) {
        const double ai = s * (i == 0 ? a.x : i == 1 ? a.y : a.z);
        G->m[i][0] += ai * u.x, G->m[i][1] += ai * u.y, G->m[i][2] += ai * u.z;
    }
    const double sh = sin(0.5 * phi), ch = cos(0.5 * phi);
    *r = quat_mul(quat(ch, sh * a.x, sh * a.y, sh * a.z), *r);
    if (!b) return;
    /* Rodrigues on b */
    const double sp = sin(phi), cp = cos(phi);
    const imp_vec3 axb = v3_cross(a, *b);
    *b = v3_add(v3_add(v3_scale(*b, cp), v3_scale(axb, sp)), v3_scale(a, v3_dot(a, *b) * (1 - cp)));
}

/* the principal axes in the world at q */
static imp_mat3 world_axes(const rot_inertia *in, imp_quat q)
{
    const imp_mat3 R = quat_to_m3(quat_normalize(q));
    return in->body_axes ? R : m3_mul(R, in->axes);
}

int rot_pieces(const rot_inertia *in, imp_quat q, imp_vec3 L, double h)
{
    if (!in->use_j || !in->use_k) return 1; /* exact in one piece */
    const imp_mat3 A = world_axes(in, q);
    const double turn = h * fmax(fabs(in->cj * v3_dot(m3_col(A, in->j), L)), fabs(in->ck * v3_dot(m3_col(A, in->k), L)));
    if (!(turn > ROT_PIECE)) return 1;
    return turn < ROT_MAX_PIECES * ROT_PIECE ? (int)ceil(turn / ROT_PIECE) : ROT_MAX_PIECES;
}

/* the principal axis `i` in the world at the unit quaternion q */
static imp_vec3 world_axis(const rot_inertia *in, imp_quat q, int i)
{
    const double w = q.w, x = q.x, y = q.y, z = q.z;
    if (in->body_axes) { /* a column of quat_to_m3 */
        if (i == 0) return v3(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y));
        if (i == 1) return v3(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x));
        return v3(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y));
    }
    return quat_rotate(q, m3_col(in->axes, i));
}

/* rot_flow of an axially symmetric body (moments I_r, I_r, I_a about its axis a): I(q) = I_r 1 +
 * (I_a - I_r) a a^T, the turn about L by h L / I_r, then about the axis (moved by that turn to a') by
 * h c (a . L) (a . L is kept by the turn about L); G = (h / I_r) J_l + s a' u^T, HL = G I(q) */
static void axial_flow(const rot_inertia *in, imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL)
{
    const int ax = in->use_j ? in->j : in->k;
    const double c = in->use_j ? in->cj : in->ck, Ia = moment(in->moments, ax), Ir = in->Ir;
    const imp_quat qn = quat_normalize(q);
    const imp_vec3 a0 = world_axis(in, qn, ax);
    const imp_vec3 L = v3_mad(v3_scale(om, Ir), a0, (Ia - Ir) * v3_dot(a0, om));
    imp_quat r;
    imp_mat3 G;
    rot_exp(q, v3_scale(L, 1 / Ir), h, &r, &G);
    G = m3_scale(G, 1 / Ir);
    const imp_vec3 a1 = world_axis(in, r, ax);
    flow_axis(a1, h * c, L, &r, NULL, &G);
    r = quat_normalize(r);
    if (r.w * q.w + r.x * q.x + r.y * q.y + r.z * q.z < 0) r = quat(-r.w, -r.x, -r.y, -r.z);
    *q1 = r;
    const imp_vec3 Ga = m3_mul_v(G, a0);
    const double d = Ia - Ir;
    for (int i = 0; i < 3; i++) {
        const double gi = d * (i == 0 ? Ga.x : i == 1 ? Ga.y : Ga.z);
        HL->m[i][0] = Ir * G.m[i][0] + gi * a0.x, HL->m[i][1] = Ir * G.m[i][1] + gi * a0.y, HL->m[i][2] = Ir * G.m[i][2] + gi * a0.z;
    }
}

/* axial_flow's first part alone (rotation.h): the rotation of exp(theta), theta = h L / I_r, from its
 * quaternion, and h J_l(theta) (rot_exp's) with I(q) = I_r 1 + (I_a - I_r) a0 a0^T applied */
void rot_axial_turn(const rot_inertia *in, imp_vec3 a0, imp_vec3 om, double h, imp_quat *e, imp_mat3 *Rc, imp_mat3 *HLa)
{
    const int ax = in->use_j ? in->j : in->k;
    const double Ir = in->Ir, ratio = (moment(in->moments, ax) - Ir) / Ir;
    const imp_vec3 w = v3_mad(om, a0, ratio * v3_dot(a0, om)); /* L / I_r */
    const imp_vec3 th = v3_scale(w, h);
    const double t = v3_len(th), t2 = t * t;
    double ex, cw, c1, c2;
    if (t < 1e-4) {
        ex = 0.5 - t2 / 48, cw = cos(0.5 * t), c1 = 0.5 - t2 / 24, c2 = 1.0 / 6 - t2 / 120;
    } else {
        const double sh = sin(0.5 * t), ch = cos(0.5 * t), it = 1 / t;
        ex = sh * it, cw = ch, c1 = 2 * sh * sh * it * it, c2 = (t - 2 * sh * ch) * it * it * it;
    }
    *e = quat(cw, ex * th.x, ex * th.y, ex * th.z);
    *Rc = quat_to_m3(*e);
    const double d = h * (1 - c2 * t2), a = h * c1, b = h * c2;
    const double xx = b * th.x * th.x, yy = b * th.y * th.y, zz = b * th.z * th.z;
    const double xy = b * th.x * th.y, xz = b * th.x * th.z, yz = b * th.y * th.z;
    const imp_mat3 J = {{{d + xx, xy - a * th.z, xz + a * th.y}, {xy + a * th.z, d + yy, yz - a * th.x}, {xz - a * th.y, yz + a * th.x, d + zz}}};
    const imp_vec3 Ja = v3_scale(m3_mul_v(J, a0), ratio);
    for (int i = 0; i < 3; i++) {
        const double gi = i == 0 ? Ja.x : i == 1 ? Ja.y : Ja.z;
        HLa->m[i][0] = J.m[i][0] + gi * a0.x, HLa->m[i][1] = J.m[i][1] + gi * a0.y, HLa->m[i][2] = J.m[i][2] + gi * a0.z;
    }
}

/* axial_flow's q1 from its first part's turn e: e q, then the turn about the moved axis a1 by
 * h c (a0 . L), a0 . L = I_a (a0 . om) */
imp_quat rot_axial_finish(const rot_inertia *in, imp_quat q, imp_quat e, imp_vec3 a0, imp_vec3 a1, imp_vec3 om, double h)
{
    const int ax = in->use_j ? in->j : in->k;
    const double phi = h * (in->use_j ? in->cj : in->ck) * moment(in->moments, ax) * v3_dot(a0, om);
    const double sh = sin(0.5 * phi), ch = cos(0.5 * phi);
    imp_quat r = quat_normalize(quat_mul(quat(ch, sh * a1.x, sh * a1.y, sh * a1.z), quat_mul(e, q)));
    if (r.w * q.w + r.x * q.x + r.y * q.y + r.z * q.z < 0) r = quat(-r.w, -r.x, -r.y, -r.z);
    return r;
}

void rot_flow(const rot_inertia *in, imp_quat q, imp_vec3 om, double h, int pieces, imp_quat *q1, imp_mat3 *HL)
{
    if (!in->use_j && !in->use_k) {
        rot_exp(q, om, h, q1, HL);
        return;
    }
    if (in->use_j != in->use_k) {
        axial_flow(in, q, om, h, q1, HL);
        return;
    }
    if (pieces < 1) pieces = 1;
    const imp_vec3 m = in->moments;
    const imp_mat3 A = world_axes(in, q);
    /* I(q) = sum_i m_i a_i a_i^T, L = I(q) om */
    imp_mat3 Iw = {{{0}}};
    for (int i = 0; i < 3; i++) {
        const imp_vec3 a = m3_col(A, i);
        const double mi = moment(m, i);
        for (int r = 0; r < 3; r++) {
            const double ar = mi * (r == 0 ? a.x : r == 1 ? a.y : a.z);
            Iw.m[r][0] += ar * a.x, Iw.m[r][1] += ar * a.y, Iw.m[r][2] += ar * a.z;
        }
    }
    const imp_vec3 L = m3_mul_v(Iw, om);
    /* about L by h L / I_r, whole: it commutes with the other parts. G = (h / I_r) J_l(theta_c) */
    imp_quat r;
    imp_mat3 G;
    rot_exp(q, v3_scale(L, 1 / in->Ir), h, &r, &G);
    G = m3_scale(G, 1 / in->Ir);
    const imp_mat3 Ac = world_axes(in, r);
    imp_vec3 aj = m3_col(Ac, in->j), ak = m3_col(Ac, in->k);
    const double hs = h / pieces; /* Strang, in pieces: a_j for hs/2, a_k for hs, a_j for hs/2 */
    for (int p = 0; p < pieces; p++) {
        flow_axis(aj, 0.5 * hs * in->cj, L, &r, &ak, &G);
        flow_axis(ak, hs * in->ck, L, &r, &aj, &G);
        flow_axis(aj, 0.5 * hs * in->cj, L, &r, &ak, &G);
    }
    r = quat_normalize(r);
    if (r.w * q.w + r.x * q.x + r.y * q.y + r.z * q.z < 0) r = quat(-r.w, -r.x, -r.y, -r.z);
    *q1 = r;
    *HL = m3_mul(G, Iw);
}

/* joint.c: articulated rigid bodies in the impulse contact mode, after Weinstein, Teran and Fedkiw
 * (S1). A joint joins body A and body B (or the static world) at an articulation point fixed in each
 * body (la, lb: body frames; the world frame when B is the world). Kinds so far: "point" (ball: the two
 * articulation points coincide) and "hinge" (point, and a unit axis fixed in each body stays common).
 *
 * The step (impulse.c, S1 section VI) calls in:
 *   joints_prepare          which bodies are jointed; they are awake and take the impulse stages
 *   joints_post_stabilize   velocities (S1 section V): after collisions and after the velocity update
 *   joints_pre_stabilize    positions (S1 section IV, eqs. 4-6): after the contacts, impulses that make
 *                           the PREDICTED joint frame (positions after the position update with the
 *                           velocities as they are) satisfy the joint, so the joint never drifts
 *   joints_positions        the position update of jointed bodies, exactly the prediction:
 *                           x' = x + h v, q' = exp(h omega) q (omega held), then post-stabilization again
 *
 * Pre-stabilization, point joint (S1 eq. 5). A linear impulse j at the midpoint m of the two articulation
 * points (lever arms r_a = m - x_a, r_b = m - x_b) on A and -j on B changes the velocities to
 *     v_a(j) = v_a + j / M_a,   omega_a(j) = omega_a + I_a^-1 (r_a x j)   (B: -j)
 * and the predicted articulation point to p_a(j) = x_a + h v_a(j) + R(h omega_a(j)) c_a, where
 * c_a = R(q_a) la is its offset now and R(theta) the rotation by the vector theta. Newton on the three
 * equations f(j) = p_a(j) - p_b(j) = 0: j <- j - J^-1 f with J = df/dj. Differentiating the rotation
 * at the predicted offset c'_a = R(h omega_a) c_a by the rule d(R(theta) c) = dtheta x c' (the first
 * with the left Jacobian J_l of S1's appendix, below: d(R(theta) c) = (J_l(theta) dtheta) x c'):
 *     J = h [ (1/M_a + 1/M_b) 1 - [c'_a]x J_l,a I_a^-1 [r_a]x - [c'_b]x J_l,b I_b^-1 [r_b]x ]
 * The iteration stops when |f| < tol (tightening over the sweeps, S1 section IV).
 *
 * Pre-stabilization, hinge axis (S1 eq. 6). An angular impulse tau (A: +tau, B: -tau) turns the predicted
 * axes a_a = R(h omega_a) R(q_a) ua and a_b likewise; the hinge wants e = a_a x a_b = 0 (three
 * equations of rank two). With d a_a = dtheta_a x a_a, dtheta_a = h I_a^-1 dtau, dtheta_b = -h I_b^-1 dtau:
 *     de = (dtheta_a x a_a) x a_b + a_a x (dtheta_b x a_b)       (dtheta through J_l as above)
 *        = h ([a_b]x [a_a]x J_l,a I_a^-1 + [a_a]x [a_b]x J_l,b I_b^-1) dtau = J dtau
 * solved in the least-squares sense (S1's normal equations): (J^T J + eps) dtau = -J^T e.
 * An angular impulse moves the articulation points again, so each sweep does position, axis, position;
 * the sweeps over all joints (Gauss-Seidel, alternating direction) tighten the tolerance from 1e-4, and
 * a global Newton iteration on every joint equation at once (global_newton, below) finishes to 1e-10.
 *
 * Post-stabilization (S1 section V): the relative velocity of the articulation points,
 * u = (v_a + omega_a x c_a) - (v_b + omega_b x c_b), is removed by j = -K^-1 u with
 * K = (1/M_a + 1/M_b) 1 - [c_a]x I_a^-1 [c_a]x - [c_b]x I_b^-1 [c_b]x (S0's collision matrix); a hinge
 * also removes the relative angular velocity across its axis: tau in the plane normal to the axis a
 * with P (omega_a - omega_b + (I_a^-1 + I_b^-1) tau) = 0, P = 1 - a a^T (a 2x2 system in that plane).
 *
 * Quaternions (GUIDE trap 8): exp(theta/2) uses sin(t/2)/t with its series near t = 0, and a new q is
 * kept in the hemisphere of the old one. No allocation per step: the tables grow with the world. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PRE_SWEEPS 8 /* S1's sweeps; the global Newton below finishes */
#define NEWTON_ITERS 20
#define POST_SWEEPS 8
#define FINAL_TOL 1e-10 /* m, and rad for the axis */

typedef struct joint {
    imp_joint_type type;
    imp_id a, b;      /* b null: the static world                                 */
    imp_vec3 la, lb;  /* articulation point in A's frame, in B's (or the world's) */
    imp_vec3 ua, ub;  /* hinge axis, likewise                                     */
    int ia, ib;       /* dense body indices of this step; the world is n          */
} joint;

struct joint_set {
    idtable ids;
    joint *j;
    int cap;
    uint8_t *jointed;
    imp_vec3 *sv, *sw; /* velocities saved at the global solve's start (restored if it made things worse) */
    int body_cap;
    uint64_t *pairs; /* sorted (lo << 32 | hi) dense body pairs joined this step: no contact between them */
    int npairs, pair_cap;
    double *G, *rhs;  /* the global Newton system (dense, rows x rows) */
    int *row_off, *piv;
    struct jpred *pred;
    int g_cap, r_cap;
};

void joints_free(imp_world *w)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    ids_free(&js->ids);
    free(js->j), free(js->jointed), free(js->sv), free(js->sw), free(js->pairs), free(js->G), free(js->rhs), free(js->row_off), free(js->piv), free(js->pred), free(js);
    w->joints = NULL;
}

static struct joint_set *jset(imp_world *w)
{
    if (!w->joints) {
        w->joints = calloc(1, sizeof(struct joint_set));
        if (!w->joints) abort();
    }
    return w->joints;
}

static imp_mat3 rot_of(const double *X) { return quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6]))); }

imp_id imp_joint_create(imp_world *w, const imp_joint_def *d)
{
    imp_id none = {0, 0};
    int ka = ids_lookup(&w->body_ids, d->a);
    int kb = imp_id_is_null(d->b) ? -1 : ids_lookup(&w->body_ids, d->b);
    if (ka < 0 || (!imp_id_is_null(d->b) && kb < 0) || ka == kb) return none;
    if (!v3_finite(d->anchor) || !v3_finite(d->axis)) return none;
    imp_vec3 axis = d->axis;
    if (d->type == IMP_JOINT_HINGE) {
        if (!(v3_len(axis) > 1e-12)) return none;
        axis = v3_normalize(axis);
    }
    struct joint_set *js = jset(w);
    imp_id id = ids_alloc(&js->ids);
    if (js->ids.count > js->cap) {
        js->cap = js->ids.count * 2 + 8;
        js->j = ids_grow(js->j, sizeof(joint), js->cap);
    }
    joint *jt = &js->j[js->ids.count - 1];
    memset(jt, 0, sizeof *jt);
    jt->type = d->type, jt->a = d->a, jt->b = d->b;
    const double *XA = w->bstate + BODY_DIM * ka;
    imp_mat3 RA = rot_of(XA);
    jt->la = m3_mul_tv(RA, v3_sub(d->anchor, v3_load(XA)));
    jt->ua = m3_mul_tv(RA, axis);
    if (kb >= 0) {
        const double *XB = w->bstate + BODY_DIM * kb;
        imp_mat3 RB = rot_of(XB);
        jt->lb = m3_mul_tv(RB, v3_sub(d->anchor, v3_load(XB)));
        jt->ub = m3_mul_tv(RB, axis);
    } else {
        jt->lb = d->anchor, jt->ub = axis;
    }
    return id;
}

bool imp_joint_valid(const imp_world *w, imp_id id)
{
    return w->joints && ids_lookup(&w->joints->ids, id) >= 0;
}

void imp_joint_destroy(imp_world *w, imp_id id)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    int d = ids_remove(&js->ids, id);
    if (d < 0) return;
    js->j[d] = js->j[js->ids.count];
}

int imp_world_joint_count(const imp_world *w) { return w->joints ? w->joints->ids.count : 0; }

/* a joint is live while both its bodies are; a destroyed body leaves its joints inert */
static bool joint_bodies(const imp_world *w, joint *jt, int n)
{
    jt->ia = ids_lookup(&w->body_ids, jt->a);
    jt->ib = imp_id_is_null(jt->b) ? n : ids_lookup(&w->body_ids, jt->b);
    return jt->ia >= 0 && jt->ib >= 0;
}

bool imp_joint_bodies_live(const imp_world *w, imp_id id)
{
    if (!imp_joint_valid(w, id)) return false;
    joint jt = w->joints->j[ids_lookup(&w->joints->ids, id)];
    return joint_bodies(w, &jt, w->body_ids.count);
}

/* world articulation points and axes of a joint now */
static void joint_frame(const imp_world *w, const joint *jt, int n, imp_vec3 *pa, imp_vec3 *pb, imp_vec3 *aa, imp_vec3 *ab)
{
    const double *XA = w->bstate + BODY_DIM * jt->ia;
    imp_mat3 RA = rot_of(XA);
    *pa = v3_add(v3_load(XA), m3_mul_v(RA, jt->la)), *aa = m3_mul_v(RA, jt->ua);
    if (jt->ib < n) {
        const double *XB = w->bstate + BODY_DIM * jt->ib;
        imp_mat3 RB = rot_of(XB);
        *pb = v3_add(v3_load(XB), m3_mul_v(RB, jt->lb)), *ab = m3_mul_v(RB, jt->ub);
    } else {
        *pb = jt->lb, *ab = jt->ub;
    }
}

int imp_joint_errors(const imp_world *w, imp_id id, double *gap, double *axis_error)
{
    if (!imp_joint_valid(w, id)) return 0;
    joint jt = w->joints->j[ids_lookup(&w->joints->ids, id)];
    if (!joint_bodies(w, &jt, w->body_ids.count)) return 0;
    imp_vec3 pa, pb, aa, ab;
    joint_frame(w, &jt, w->body_ids.count, &pa, &pb, &aa, &ab);
    *gap = v3_len(v3_sub(pa, pb));
    *axis_error = jt.type == IMP_JOINT_HINGE ? v3_len(v3_cross(aa, ab)) : 0;
    return 1;
}

int joints_count(const imp_world *w) { return w->joints ? w->joints->ids.count : 0; }

int joints_rows(const imp_world *w, int k, joint_row out[6])
{
    if (!w->joints || k < 0 || k >= w->joints->ids.count) return 0;
    joint jt = w->joints->j[k];
    const int n = w->body_ids.count;
    if (!joint_bodies(w, &jt, n)) return 0;
    imp_vec3 pa, pb, aa, ab;
    joint_frame(w, &jt, n, &pa, &pb, &aa, &ab);
    int m = 0;
    for (int c = 0; c < 3; c++) {
        joint_row *r = &out[m++];
        r->a = jt.a, r->b = jt.b, r->pa = pa, r->pb = pb, r->angular = false;
        r->dir = v3(c == 0, c == 1, c == 2);
    }
    if (jt.type == IMP_JOINT_HINGE) { /* the relative spin across the axis */
        imp_vec3 ref = fabs(aa.x) < 0.57 ? v3(1, 0, 0) : fabs(aa.y) < 0.57 ? v3(0, 1, 0) : v3(0, 0, 1);
        imp_vec3 t1 = v3_normalize(v3_cross(aa, ref)), t2 = v3_cross(aa, t1);
        for (int c = 0; c < 2; c++) {
            joint_row *r = &out[m++];
            r->a = jt.a, r->b = jt.b, r->pa = pa, r->pb = pb, r->angular = true, r->dir = c ? t2 : t1;
        }
    }
    return m;
}

imp_joint_type imp_joint_kind(const imp_world *w, imp_id id)
{
    return imp_joint_valid(w, id) ? w->joints->j[ids_lookup(&w->joints->ids, id)].type : IMP_JOINT_POINT;
}

/* ---- the step -------------------------------------------------------------------------------------- */

static imp_mat3 skew(imp_vec3 v)
{
    imp_mat3 m = {{{0, -v.z, v.y}, {v.z, 0, -v.x}, {-v.y, v.x, 0}}};
    return m;
}

/* exp of the rotation vector t as a unit quaternion: (cos |t|/2, sin(|t|/2) t/|t|), series near 0 */
static imp_quat quat_exp(imp_vec3 t)
{
    double a = v3_len(t);
    double s = a < 1e-4 ? 0.5 - a * a / 48 : sin(0.5 * a) / a;
    return quat(cos(0.5 * a), s * t.x, s * t.y, s * t.z);
}

/* q' = exp(h omega) q, normalized, in the hemisphere of q */
static imp_quat quat_advance(imp_quat q, imp_vec3 om, double h)
{
    imp_quat r = quat_normalize(quat_mul(quat_exp(v3_scale(om, h)), q));
    if (r.w * q.w + r.x * q.x + r.y * q.y + r.z * q.z < 0) r = quat(-r.w, -r.x, -r.y, -r.z);
    return r;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

int joints_prepare(imp_world *w, int n)
{
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return 0;
    if (n > js->body_cap) {
        js->body_cap = n * 3 / 2 + 16;
        js->jointed = ids_grow(js->jointed, 1, js->body_cap);
        js->sv = ids_grow(js->sv, sizeof(imp_vec3), js->body_cap);
        js->sw = ids_grow(js->sw, sizeof(imp_vec3), js->body_cap);
    }
    memset(js->jointed, 0, (size_t)n);
    if (js->ids.count > js->pair_cap) {
        js->pair_cap = js->ids.count * 3 / 2 + 16;
        js->pairs = ids_grow(js->pairs, sizeof(uint64_t), js->pair_cap);
    }
    js->npairs = 0;
    int live = 0;
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->j[k];
        if (!joint_bodies(w, jt, n)) continue;
        live++;
        if (jt->ib < n) {
            uint64_t lo = (uint64_t)(jt->ia < jt->ib ? jt->ia : jt->ib), hi = (uint64_t)(jt->ia < jt->ib ? jt->ib : jt->ia);
            js->pairs[js->npairs++] = lo << 32 | hi;
        }
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++) {
            if (ends[e] >= n) continue;
            body *b = &w->bodies[ends[e]];
            if (b->motion != IMP_DYNAMIC) continue;
            js->jointed[ends[e]] = 1;
            b->asleep = 0, b->sleep_time = 0; /* jointed bodies do not sleep (yet) */
        }
    }
    qsort(js->pairs, (size_t)js->npairs, sizeof(uint64_t), cmp_u64);
    return live;
}

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

/* the world offset now of a joint side's articulation point and its axis (the world side: the point) */
static void side_now(const imp_world *w, int i, int n, imp_vec3 l, imp_vec3 u, imp_vec3 *c, imp_vec3 *a, imp_vec3 *x)
{
    if (i >= n) {
        *x = v3(0, 0, 0), *c = l, *a = u;
        return;
    }
    const double *X = w->bstate + BODY_DIM * i;
    imp_mat3 R = rot_of(X);
    *x = v3_load(X), *c = m3_mul_v(R, l), *a = m3_mul_v(R, u);
}

void joints_post_stabilize(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_mat3 *Iinv, const double *im, int n)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    for (int sweep = 0; sweep < POST_SWEEPS; sweep++) {
        for (int k = 0; k < js->ids.count; k++) {
            joint *jt = &js->j[k];
            if (jt->ia < 0 || jt->ib < 0) continue;
            const int a = jt->ia, b = jt->ib;
            if (im[a] == 0 && im[b] == 0) continue;
            imp_vec3 ca, cb, aa, ab, xa, xb;
            side_now(w, a, n, jt->la, jt->ua, &ca, &aa, &xa);
            side_now(w, b, n, jt->lb, jt->ub, &cb, &ab, &xb);
            if (b >= n) cb = v3(0, 0, 0);
            imp_vec3 u = v3_sub(v3_add(v[a], v3_cross(om[a], ca)), v3_add(v[b], v3_cross(om[b], cb)));
            imp_mat3 K = m3_add(m3_diag(im[a] + im[b], im[a] + im[b], im[a] + im[b]),
                                m3_add(m3_scale(m3_mul(skew(ca), m3_mul(Iinv[a], skew(ca))), -1),
                                       m3_scale(m3_mul(skew(cb), m3_mul(Iinv[b], skew(cb))), -1)));
            if (!(fabs(m3_det(K)) > 1e-300)) continue;
            imp_vec3 j = v3_scale(m3_mul_v(m3_inverse(K), u), -1);
            v[a] = v3_mad(v[a], j, im[a]), om[a] = v3_add(om[a], m3_mul_v(Iinv[a], v3_cross(ca, j)));
            v[b] = v3_mad(v[b], j, -im[b]), om[b] = v3_sub(om[b], m3_mul_v(Iinv[b], v3_cross(cb, j)));
            if (jt->type != IMP_JOINT_HINGE) continue;
            /* the relative spin across the axis: tau = s1 t1 + s2 t2 with t_i . (dw + Isum tau) = 0 */
            imp_vec3 ax = aa;
            imp_vec3 ref = fabs(ax.x) < 0.57 ? v3(1, 0, 0) : fabs(ax.y) < 0.57 ? v3(0, 1, 0) : v3(0, 0, 1);
            imp_vec3 t1 = v3_normalize(v3_cross(ax, ref)), t2 = v3_cross(ax, t1);
            imp_mat3 Is = m3_add(Iinv[a], Iinv[b]);
            imp_vec3 dw = v3_sub(om[a], om[b]);
            imp_vec3 I1 = m3_mul_v(Is, t1), I2 = m3_mul_v(Is, t2);
            double k11 = v3_dot(t1, I1), k12 = v3_dot(t1, I2), k21 = v3_dot(t2, I1), k22 = v3_dot(t2, I2);
            double det = k11 * k22 - k12 * k21;
            if (!(fabs(det) > 1e-300)) continue;
            double r1 = -v3_dot(t1, dw), r2 = -v3_dot(t2, dw);
            double s1 = (k22 * r1 - k12 * r2) / det, s2 = (k11 * r2 - k21 * r1) / det;
            imp_vec3 tau = v3_add(v3_scale(t1, s1), v3_scale(t2, s2));
            om[a] = v3_add(om[a], m3_mul_v(Iinv[a], tau));
            om[b] = v3_sub(om[b], m3_mul_v(Iinv[b], tau));
        }
    }
}

/* S1's appendix derivative of the rotation: with R' = exp(theta) R (theta = h omega), a change dtheta of
 * theta turns R' by J_l(theta) dtheta, the left Jacobian of SO(3):
 *     J_l = 1 + (1 - cos t) / t^2 [theta]x + (t - sin t) / t^3 [theta]x^2,   t = |theta|
 * (series 1/2 - t^2/24 and 1/6 - t^2/120 as t -> 0), so d(R' c) = (J_l dtheta) x R' c. */
static imp_mat3 left_jac(imp_vec3 th)
{
    double t = v3_len(th), t2 = t * t;
    double c1 = t < 1e-4 ? 0.5 - t2 / 24 : (1 - cos(t)) / t2;
    double c2 = t < 1e-4 ? 1.0 / 6 - t2 / 120 : (t - sin(t)) / (t2 * t);
    imp_mat3 K = skew(th);
    return m3_add(m3_identity(), m3_add(m3_scale(K, c1), m3_scale(m3_mul(K, K), c2)));
}

/* the predicted world point and axis of one side: x + h v + R(h omega) c, R(h omega) a */
static void predict(const imp_world *w, int i, int n, imp_vec3 l, imp_vec3 u, imp_vec3 v, imp_vec3 om, double h,
                    imp_vec3 *p, imp_vec3 *c, imp_vec3 *a)
{
    if (i >= n) {
        *p = l, *c = v3(0, 0, 0), *a = u;
        return;
    }
    const double *X = w->bstate + BODY_DIM * i;
    imp_quat q = quat_advance(quat_normalize(quat(X[3], X[4], X[5], X[6])), om, h);
    imp_mat3 R = quat_to_m3(q);
    *c = m3_mul_v(R, l), *a = m3_mul_v(R, u);
    *p = v3_add(v3_add(v3_load(X), v3_scale(v, h)), *c);
}

/* one joint's Newton solve of the position equation to tol; returns the error after it */
static double solve_point(imp_world *w, const joint *jt, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                          const imp_mat3 *Iinv, const double *im, int n, double h, double tol)
{
    const int a = jt->ia, b = jt->ib;
    imp_vec3 pa, pb, ca, cb, aa, ab;
    imp_vec3 xa = a < n ? v3_load(w->bstate + BODY_DIM * a) : v3(0, 0, 0);
    imp_vec3 xb = b < n ? v3_load(w->bstate + BODY_DIM * b) : v3(0, 0, 0);
    double err = 0, first = -1;
    imp_vec3 last = v3(0, 0, 0), lra = last, lrb = last;
    for (int it = 0; it < NEWTON_ITERS; it++) {
        predict(w, a, n, jt->la, jt->ua, v3_add(v[a], vp[a]), v3_add(om[a], wp[a]), h, &pa, &ca, &aa);
        predict(w, b, n, jt->lb, jt->ub, v3_add(v[b], vp[b]), v3_add(om[b], wp[b]), h, &pb, &cb, &ab);
        imp_vec3 f = v3_sub(pa, pb);
        if (first >= 0 && v3_len(f) > err) { /* diverging: undo the last step and leave it to the global solve */
            v[a] = v3_mad(v[a], last, -im[a]), om[a] = v3_sub(om[a], m3_mul_v(Iinv[a], v3_cross(lra, last)));
            v[b] = v3_mad(v[b], last, im[b]), om[b] = v3_add(om[b], m3_mul_v(Iinv[b], v3_cross(lrb, last)));
            break;
        }
        err = v3_len(f);
        if (first < 0) first = err;
        if (err < tol) break;
        /* the impulse acts at the midpoint of the two articulation points now */
        imp_vec3 ma, mb, na, nb, ya, yb;
        side_now(w, a, n, jt->la, jt->ua, &ma, &na, &ya);
        side_now(w, b, n, jt->lb, jt->ub, &mb, &nb, &yb);
        imp_vec3 m = v3_scale(v3_add(v3_add(xa, ma), b < n ? v3_add(xb, mb) : mb), 0.5);
        imp_vec3 ra = v3_sub(m, xa), rb = v3_sub(m, xb);
        imp_mat3 La = left_jac(v3_scale(v3_add(om[a], wp[a]), h)), Lb = left_jac(v3_scale(v3_add(om[b], wp[b]), h));
        imp_mat3 J = m3_add(m3_diag(im[a] + im[b], im[a] + im[b], im[a] + im[b]),
                            m3_add(m3_scale(m3_mul(skew(ca), m3_mul(La, m3_mul(Iinv[a], skew(ra)))), -1),
                                   m3_scale(m3_mul(skew(cb), m3_mul(Lb, m3_mul(Iinv[b], skew(rb)))), -1)));
        J = m3_scale(J, h);
        if (!(fabs(m3_det(J)) > 1e-300)) break;
        imp_vec3 j = v3_scale(m3_mul_v(m3_inverse(J), f), -1);
        last = j, lra = ra, lrb = rb;
        v[a] = v3_mad(v[a], j, im[a]), om[a] = v3_add(om[a], m3_mul_v(Iinv[a], v3_cross(ra, j)));
        v[b] = v3_mad(v[b], j, -im[b]), om[b] = v3_sub(om[b], m3_mul_v(Iinv[b], v3_cross(rb, j)));
    }
    return first; /* the error this visit found (the sweeps end when no visit finds any) */
}

/* one hinge's Newton solve of the orientation equation (normal equations); returns the error after it */
static double solve_axis(imp_world *w, const joint *jt, imp_vec3 *om, const imp_vec3 *wp, const imp_mat3 *Iinv, int n, double h, double tol)
{
    const int a = jt->ia, b = jt->ib;
    double err = 0, first = -1;
    for (int it = 0; it < NEWTON_ITERS; it++) {
        imp_vec3 pa, pb, ca, cb, aa, ab;
        imp_vec3 zero = v3(0, 0, 0);
        predict(w, a, n, jt->la, jt->ua, zero, v3_add(om[a], wp[a]), h, &pa, &ca, &aa);
        predict(w, b, n, jt->lb, jt->ub, zero, v3_add(om[b], wp[b]), h, &pb, &cb, &ab);
        imp_vec3 e = v3_cross(aa, ab);
        err = v3_len(e);
        if (first < 0) first = err;
        if (err < tol) break;
        imp_mat3 La = left_jac(v3_scale(v3_add(om[a], wp[a]), h)), Lb = left_jac(v3_scale(v3_add(om[b], wp[b]), h));
        imp_mat3 J = m3_scale(m3_add(m3_mul(m3_mul(skew(ab), skew(aa)), m3_mul(La, Iinv[a])),
                                     m3_mul(m3_mul(skew(aa), skew(ab)), m3_mul(Lb, Iinv[b]))), h);
        imp_mat3 JT = m3_transpose(J), N = m3_mul(JT, J);
        double tr = N.m[0][0] + N.m[1][1] + N.m[2][2];
        if (!(tr > 1e-300)) break;
        N = m3_add(N, m3_diag(1e-12 * tr, 1e-12 * tr, 1e-12 * tr));
        imp_vec3 tau = v3_scale(m3_mul_v(m3_inverse(N), m3_mul_v(JT, e)), -1);
        om[a] = v3_add(om[a], m3_mul_v(Iinv[a], tau));
        om[b] = v3_sub(om[b], m3_mul_v(Iinv[b], tau));
    }
    return first;
}


/* ---- the global Newton finish ----------------------------------------------------------------------
 * S1's sweeps solve one joint at a time; along a chain of equal links that Gauss-Seidel converges
 * slowly (about x0.9 per sweep), so after the sweeps a Newton iteration on ALL joint equations at once
 * finishes the job: unknowns are each joint's linear impulse (3) and, for a hinge, its angular impulse
 * tau = s1 t1 + s2 t2 across the predicted axis (2); equations are each joint's predicted gap
 * p_a - p_b (3) and, for a hinge, t1.(a_a x a_b), t2.(a_a x a_b) (2). A column's unit impulse changes
 * body X (an end of joint l, sign sl = +1 for A, -1 for B) by
 *     dv_X = sl M_X^-1 d (linear only),  dtheta_X = J_l,X h I_X^-1 sl ([r_lX]x d | T_l s)
 * and a row of joint k with X as an end (sign sk) changes by
 *     gap:  sk (h M_X^-1 dv-part - [c'_kX]x dtheta_X)
 *     axis: T_k^T D_kX dtheta_X,  D_kA = [a_b]x [a_a]x,  D_kB = -[a_a]x [a_b]x   (as in solve_axis)
 * The dense system (rows = 3 per point joint, 5 per hinge) is solved by LU with partial pivoting. */
static int jrows(const joint *jt) { return jt->type == IMP_JOINT_HINGE ? 5 : 3; }

static void basis_of(imp_vec3 a, imp_vec3 *t1, imp_vec3 *t2)
{
    imp_vec3 ref = fabs(a.x) < 0.57 ? v3(1, 0, 0) : fabs(a.y) < 0.57 ? v3(0, 1, 0) : v3(0, 0, 1);
    *t1 = v3_normalize(v3_cross(a, ref)), *t2 = v3_cross(a, *t1);
}

/* LU with partial pivoting of the m x m matrix G (row major), solving G x = b in place of b */
static int lu_solve(double *G, double *b, int *piv, int m)
{
    for (int c = 0; c < m; c++) {
        int p = c;
        for (int r = c + 1; r < m; r++)
            if (fabs(G[(size_t)r * m + c]) > fabs(G[(size_t)p * m + c])) p = r;
        if (!(fabs(G[(size_t)p * m + c]) > 1e-300)) return 0;
        piv[c] = p;
        if (p != c) {
            for (int k = 0; k < m; k++) {
                double t = G[(size_t)c * m + k];
                G[(size_t)c * m + k] = G[(size_t)p * m + k], G[(size_t)p * m + k] = t;
            }
            double t = b[c];
            b[c] = b[p], b[p] = t;
        }
        double d = G[(size_t)c * m + c];
        for (int r = c + 1; r < m; r++) {
            double f = G[(size_t)r * m + c] / d;
            if (f == 0) continue;
            G[(size_t)r * m + c] = f;
            for (int k = c + 1; k < m; k++) G[(size_t)r * m + k] -= f * G[(size_t)c * m + k];
            b[r] -= f * b[c];
        }
    }
    for (int r = m - 1; r >= 0; r--) {
        double x = b[r];
        for (int k = r + 1; k < m; k++) x -= G[(size_t)r * m + k] * b[k];
        b[r] = x / G[(size_t)r * m + r];
    }
    return 1;
}

struct jpred {
    imp_vec3 ca, cb, aa, ab, ra, rb, t1, t2;
    imp_mat3 La, Lb; /* J_l(h omega) of the two sides */
};
typedef struct jpred jpred;

/* the residuals (into out, negated) and, with P, the predicted frames the Jacobian needs; returns the
 * largest error, and its squared 2-norm in *norm2 */
static double residual(imp_world *w, const imp_vec3 *v, const imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                       int n, double h, jpred *P, double *out, double *norm2)
{
    struct joint_set *js = w->joints;
    double worst = 0, sum = 0;
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->j[k];
        int o = js->row_off[k];
        if (o < 0) continue;
        jpred tmp, *q = P ? &P[k] : &tmp;
        imp_vec3 pa, pb, na, nb, ya, yb, ma, mb;
        predict(w, jt->ia, n, jt->la, jt->ua, v3_add(v[jt->ia], vp[jt->ia]), v3_add(om[jt->ia], wp[jt->ia]), h, &pa, &q->ca, &q->aa);
        predict(w, jt->ib, n, jt->lb, jt->ub, v3_add(v[jt->ib], vp[jt->ib]), v3_add(om[jt->ib], wp[jt->ib]), h, &pb, &q->cb, &q->ab);
        if (P) {
            q->La = left_jac(v3_scale(v3_add(om[jt->ia], wp[jt->ia]), h));
            q->Lb = left_jac(v3_scale(v3_add(om[jt->ib], wp[jt->ib]), h));
            side_now(w, jt->ia, n, jt->la, jt->ua, &ma, &na, &ya);
            side_now(w, jt->ib, n, jt->lb, jt->ub, &mb, &nb, &yb);
            imp_vec3 mid = v3_scale(v3_add(v3_add(ya, ma), jt->ib < n ? v3_add(yb, mb) : mb), 0.5);
            q->ra = v3_sub(mid, ya), q->rb = v3_sub(mid, yb);
        }
        imp_vec3 g = v3_sub(pa, pb);
        out[o] = -g.x, out[o + 1] = -g.y, out[o + 2] = -g.z;
        worst = fmax(worst, v3_len(g)), sum += v3_dot(g, g);
        if (jt->type == IMP_JOINT_HINGE) {
            basis_of(q->aa, &q->t1, &q->t2);
            imp_vec3 e = v3_cross(q->aa, q->ab);
            out[o + 3] = -v3_dot(q->t1, e), out[o + 4] = -v3_dot(q->t2, e);
            worst = fmax(worst, v3_len(e)), sum += v3_dot(e, e);
        }
    }
    *norm2 = sum;
    return worst;
}

/* velocities += alpha times the Newton step dx (impulses per joint, P's lever arms and bases) */
static void apply_step(const struct joint_set *js, imp_vec3 *v, imp_vec3 *om, const imp_mat3 *Iinv, const double *im,
                       const jpred *P, const double *dx, double alpha)
{
    for (int l = 0; l < js->ids.count; l++) {
        const joint *jl = &js->j[l];
        int ol = js->row_off[l];
        if (ol < 0) continue;
        const jpred *ql = &P[l];
        imp_vec3 dj = v3_scale(v3(dx[ol], dx[ol + 1], dx[ol + 2]), alpha);
        imp_vec3 tau = v3(0, 0, 0);
        if (jl->type == IMP_JOINT_HINGE) tau = v3_scale(v3_add(v3_scale(ql->t1, dx[ol + 3]), v3_scale(ql->t2, dx[ol + 4])), alpha);
        int a = jl->ia, b = jl->ib;
        v[a] = v3_mad(v[a], dj, im[a]), om[a] = v3_add(om[a], m3_mul_v(Iinv[a], v3_add(v3_cross(ql->ra, dj), tau)));
        v[b] = v3_mad(v[b], dj, -im[b]), om[b] = v3_sub(om[b], m3_mul_v(Iinv[b], v3_add(v3_cross(ql->rb, dj), tau)));
    }
}

static double global_newton(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                            const imp_mat3 *Iinv, const double *im, int n, double h, jpred *P)
{
    struct joint_set *js = w->joints;
    const int nj = js->ids.count;
    int m = 0;
    for (int k = 0; k < nj; k++) {
        const joint *jt = &js->j[k];
        js->row_off[k] = -1;
        if (jt->ia < 0 || jt->ib < 0 || (im[jt->ia] == 0 && im[jt->ib] == 0)) continue;
        js->row_off[k] = m, m += jrows(jt);
    }
    if (!m) return 0;
    if ((size_t)m * m > (size_t)js->g_cap) {
        js->g_cap = m * m + 64;
        js->G = ids_grow(js->G, sizeof(double), js->g_cap);
    }
    double *dx = js->rhs + 5 * js->r_cap, *trial = dx + 5 * js->r_cap; /* rhs holds 3 blocks */
    double worst = 0, norm2 = 0, start = -1;
    for (int i = 0; i < n; i++)
        if (js->jointed[i]) js->sv[i] = v[i], js->sw[i] = om[i];
    for (int it = 0; it < NEWTON_ITERS; it++) {
        worst = residual(w, v, om, vp, wp, n, h, P, js->rhs, &norm2);
        if (start < 0) start = norm2;
        if (worst < FINAL_TOL) break;
        memset(js->G, 0, sizeof(double) * (size_t)m * m);
        /* the Jacobian, block by block: rows of joint k, columns of joint l, through shared bodies */
        for (int k = 0; k < nj; k++) {
            const joint *jk = &js->j[k];
            int ok = js->row_off[k];
            if (ok < 0) continue;
            const jpred *qk = &P[k];
            for (int l = 0; l < nj; l++) {
                const joint *jl = &js->j[l];
                int ol = js->row_off[l];
                if (ol < 0) continue;
                const jpred *ql = &P[l];
                const int kx[2] = {jk->ia, jk->ib}, lx[2] = {jl->ia, jl->ib};
                for (int ek = 0; ek < 2; ek++)
                    for (int el = 0; el < 2; el++) {
                        int X = kx[ek];
                        if (X >= n || X != lx[el] || im[X] == 0) continue;
                        double sk = ek ? -1 : 1, sl = el ? -1 : 1;
                        imp_vec3 ck = ek ? qk->cb : qk->ca, rl = el ? ql->rb : ql->ra;
                        /* columns: 3 linear, then (hinge) 2 angular; per column the linear and angular
                         * impulse it puts on X */
                        int ncol = jrows(jl);
                        for (int c = 0; c < ncol; c++) {
                            imp_vec3 lin = v3(0, 0, 0), ang;
                            if (c < 3) {
                                imp_vec3 d = v3(c == 0, c == 1, c == 2);
                                lin = v3_scale(d, sl), ang = v3_scale(v3_cross(rl, d), sl);
                            } else {
                                ang = v3_scale(c == 3 ? ql->t1 : ql->t2, sl);
                            }
                            imp_vec3 dth = m3_mul_v(ek ? qk->Lb : qk->La, v3_scale(m3_mul_v(Iinv[X], ang), h));
                            imp_vec3 dp = v3_add(v3_scale(lin, h * im[X]), v3_cross(dth, ck));
                            double *col = js->G + (size_t)ok * m + ol + c;
                            col[0] += sk * dp.x, col[m] += sk * dp.y, col[2 * (size_t)m] += sk * dp.z;
                            if (jk->type == IMP_JOINT_HINGE) {
                                imp_vec3 de = ek ? v3_scale(v3_cross(qk->aa, v3_cross(dth, qk->ab)), 1)
                                                 : v3_cross(v3_cross(dth, qk->aa), qk->ab);
                                col[3 * (size_t)m] += v3_dot(qk->t1, de), col[4 * (size_t)m] += v3_dot(qk->t2, de);
                            }
                        }
                    }
            }
        }
        if (!lu_solve(js->G, js->rhs, js->piv, m)) break;
        memcpy(dx, js->rhs, sizeof(double) * (size_t)m);
        /* backtracking line search on |f|^2: near a straightened chain the system is nearly singular and a
         * full Newton step can overshoot; halve it until the residual drops (undoing by -alpha) */
        double alpha = 1, applied = 0;
        for (int ls = 0; ls < 12; ls++) {
            apply_step(js, v, om, Iinv, im, P, dx, alpha - applied);
            applied = alpha;
            double n2;
            residual(w, v, om, vp, wp, n, h, NULL, trial, &n2);
            if (n2 < (1 - 1e-4 * alpha) * norm2) break;
            alpha *= 0.5;
        }
    }
    if (!(norm2 <= start)) { /* no joint solution near (a whipping chain at a coarse step): keep the sweeps' */
        for (int i = 0; i < n; i++)
            if (js->jointed[i]) v[i] = js->sv[i], om[i] = js->sw[i];
    }
    return worst;
}

void joints_pre_stabilize(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                          const imp_mat3 *Iinv, const double *im, int n, double h)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    double tol = 1e-4; /* tightening over the sweeps (S1 section IV) */
    for (int sweep = 0; sweep < PRE_SWEEPS; sweep++) {
        double worst = 0;
        for (int kk = 0; kk < js->ids.count; kk++) {
            /* symmetric Gauss-Seidel: forward and backward sweeps alternate (a chain converges in far
             * fewer sweeps than always forward) */
            int k = sweep & 1 ? js->ids.count - 1 - kk : kk;
            joint *jt = &js->j[k];
            if (jt->ia < 0 || jt->ib < 0 || (im[jt->ia] == 0 && im[jt->ib] == 0)) continue;
            double e = solve_point(w, jt, v, om, vp, wp, Iinv, im, n, h, tol);
            if (jt->type == IMP_JOINT_HINGE) {
                double ea = solve_axis(w, jt, om, wp, Iinv, n, h, tol);
                solve_point(w, jt, v, om, vp, wp, Iinv, im, n, h, tol);
                e = fmax(e, ea);
            }
            worst = fmax(worst, e);
        }
        if (worst < FINAL_TOL && tol <= FINAL_TOL) return;
        tol = fmax(FINAL_TOL, tol * 0.1);
    }
    /* the global Newton finish (scratch grows with the joint count, kept) */
    const int nj = js->ids.count;
    if (nj > js->r_cap) {
        js->r_cap = nj * 3 / 2 + 16;
        js->rhs = ids_grow(js->rhs, 15 * sizeof(double), js->r_cap); /* rhs, step, trial residual */
        js->piv = ids_grow(js->piv, 5 * sizeof(int), js->r_cap);
        js->row_off = ids_grow(js->row_off, sizeof(int), js->r_cap);
        js->pred = ids_grow(js->pred, sizeof(jpred), js->r_cap);
    }
    global_newton(w, v, om, vp, wp, Iinv, im, n, h, js->pred);
}

void joints_positions(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                      imp_mat3 *Iinv, const double *im, int n, double h)
{
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        const double *X0 = w->bstate0 + BODY_DIM * i;
        double *X = w->bstate + BODY_DIM * i;
        v3_store(X, v3_add(v3_load(X0), v3_scale(v3_add(v[i], vp[i]), h)));
        imp_quat q = quat_advance(quat_normalize(quat(X0[3], X0[4], X0[5], X0[6])), v3_add(om[i], wp[i]), h);
        X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
        Iinv[i] = m3_rotate_tensor(quat_to_m3(q), w->bodies[i].Ibody_inv);
        const body *bd = &w->bodies[i];
        for (int k = 0; k < bd->nshapes; k++) shape_update(w, &w->shapes[w->shape_ids.slot_dense[bd->shapes[k]]]);
    }
    joints_post_stabilize(w, v, om, Iinv, im, n);
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        double *X = w->bstate + BODY_DIM * i;
        imp_mat3 R = rot_of(X);
        v3_store(X + 7, v3_scale(v[i], w->bodies[i].mass));
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(R, w->bodies[i].Ibody), om[i]));
    }
}

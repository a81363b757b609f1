/* joint_force.c: the force and torque each joint applied in the last step, and breakable joints.
 *
 * A joint acts through impulses: the multipliers lambda_r of its rows, applied to the bodies' velocities
 * by the stages of the impulse mode (post-stabilization, the rows in the contact sweeps, pre-
 * stabilization; joint_solve.c's jsolve_apply, which calls joint_impulse_add when the velocities are the
 * solver's own, not a prediction or a scratch copy), and for a body turning about a fixed ball joint the
 * momentum change of that turn (joint_position.c's pivot_turn). Summed over the step, sum_r lambda_r g_A,r
 * is the impulse J = (j, k) the joint gave body A (linear; angular about A's centre), and its force and
 * torque over the step are
 *     F = j / h,    tau = (k - (p_A - x_A) x j) / h      (the torque about A's articulation point p_A)
 * B got -F and the opposite torque about the same point. A body hanging at rest on a joint receives m g
 * from it; the split impulses, which move positions without momentum, are not forces and do not count.
 * A joint whose bodies sleep (or do not move) keeps the force and torque of its last step awake.
 * A joint with break_force (N) or break_torque (N m) > 0 whose |F| or |tau| exceeds it after a step is
 * destroyed then, and the step's broken-joint events list it with the force and torque that broke it. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "ids.h"
#include "joint_force.h"
#include "joint_internal.h"
#include "world_parts.h"

/* the joints broken by the last step */
struct joint_break_list {
    imp_joint_break *ev;
    int count, cap;
};
typedef struct joint_break_list joint_break_list;


void joint_impulse_add(struct joint_set *js, int p, const double *lam, double alpha)
{
    const row_block *R = &js->rows[p];
    joint *jt = &js->joint[js->nodes[p]];
    for (int r = 0; r < R->m; r++) {
        const double l = alpha * lam[r];
        for (int c = 0; c < 6; c++) jt->impulse[c] += l * R->gA[r][c];
    }
}

/* a body's centre now, or the origin for the world side */
static imp_vec3 centre(const imp_world *w, imp_id id)
{
    const int i = imp_id_is_null(id) ? -1 : ids_lookup(&w->bodies->ids, id);
    return i < 0 ? v3(0, 0, 0) : v3_load(w->bodies->state + BODY_DIM * i);
}

void joint_impulse_at(const imp_world *w, joint *jt, int i, imp_vec3 j, imp_vec3 at)
{
    if (jt->ia != i) j = v3_scale(j, -1); /* B's impulse: A's is the reaction */
    const imp_vec3 k = v3_cross(v3_sub(at, centre(w, jt->a)), j);
    jt->impulse[0] += j.x, jt->impulse[1] += j.y, jt->impulse[2] += j.z;
    jt->impulse[3] += k.x, jt->impulse[4] += k.y, jt->impulse[5] += k.z;
}

void joints_impulse_save(struct joint_set *js)
{
    for (int k = 0; k < js->ids.count; k++) memcpy(js->joint[k].impulse_saved, js->joint[k].impulse, sizeof js->joint[k].impulse);
}
void joints_impulse_restore(struct joint_set *js)
{
    for (int k = 0; k < js->ids.count; k++) memcpy(js->joint[k].impulse, js->joint[k].impulse_saved, sizeof js->joint[k].impulse);
}

void joints_forces_begin(imp_world *w)
{
    if (w->joints_broken) w->joints_broken->count = 0;
    struct joint_set *js = w->joints;
    if (!js) return;
    for (int k = 0; k < js->ids.count; k++) memset(js->joint[k].impulse, 0, sizeof js->joint[k].impulse);
}

static bool moving(const imp_world *w, int i)
{
    const body *b = &w->bodies->body[i];
    return b->motion != IMP_FIXED && !b->asleep;
}

void joints_forces_finish(imp_world *w, double dt)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->joint[k];
        const int ia = ids_lookup(&w->bodies->ids, jt->a);
        if (ia < 0) {
            jt->force = jt->torque = v3(0, 0, 0);
            continue;
        }
        /* an island asleep takes no stages: its joints hold the load they had when it fell asleep */
        const int ib = imp_id_is_null(jt->b) ? -1 : ids_lookup(&w->bodies->ids, jt->b);
        if (!moving(w, ia) && (ib < 0 || !moving(w, ib))) continue;
        const double *XA = w->bodies->state + BODY_DIM * ia;
        const imp_vec3 lever = quat_rotate(quat_normalize(quat(XA[3], XA[4], XA[5], XA[6])), jt->la);
        const imp_vec3 j = v3(jt->impulse[0], jt->impulse[1], jt->impulse[2]);
        const imp_vec3 kk = v3(jt->impulse[3], jt->impulse[4], jt->impulse[5]);
        jt->force = v3_scale(j, 1 / dt);
        jt->torque = v3_scale(v3_sub(kk, v3_cross(lever, j)), 1 / dt);
    }
    /* breaking: collected first (destroying moves the last joint into the hole) */
    for (int k = 0; k < js->ids.count;) {
        joint *jt = &js->joint[k];
        const bool by_force = jt->break_force > 0 && v3_len(jt->force) > jt->break_force;
        const bool by_torque = jt->break_torque > 0 && v3_len(jt->torque) > jt->break_torque;
        if (!by_force && !by_torque) {
            k++;
            continue;
        }
        if (!w->joints_broken) {
            w->joints_broken = calloc(1, sizeof(joint_break_list));
            if (!w->joints_broken) abort();
        }
        joint_break_list *b = w->joints_broken;
        if (b->count == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 16;
            b->ev = ids_grow(b->ev, sizeof(imp_joint_break), b->cap);
        }
        imp_joint_break *e = &b->ev[b->count++];
        e->joint = ids_of(&js->ids, k), e->a = jt->a, e->b = jt->b, e->type = jt->type;
        e->force = jt->force, e->torque = jt->torque;
        imp_joint_destroy(w, e->joint); /* the last joint moves into slot k: look at k again */
    }
}

/* Springs between bodies (IMP_JOINT_SPRING): f = -(k (d - rest) + c d') along the unit line u from B's
 * point to A's, d their distance. At the start of each step each spring gives its two bodies an impulse
 * at its points: the spring's force at the positions now times h (a kick; the step's own integration then
 * drifts the positions with the new velocities: symplectic Euler, whose energy stays bounded and whose
 * frequency is (2/h) asin(omega h / 2), omega (1 + (omega h)^2 / 24): 6e-4 fast at omega h = 0.12), and
 * the damping implicitly on the relative speed along u over the step: the speed after the kick d'_1 and
 * the damping's change make the step's mean speed d'_2 + a h / 2 (a: the relative acceleration along u of
 * gravity and the applied forces), and
 *     d'_2 = d'_1 - c h / m_eff (d'_2 + a h / 2),   1/m_eff = 1/m_A + 1/m_B + (r_A x u).I_A^-1 (r_A x u) + (B's),
 * stable for any c h; a body at rest on the spring under gravity has mean speed 0 and settles exactly at
 * rest + m g / k. The impulse counts as the joint's (joint.force). */
static void body_point(const imp_world *w, int i, imp_vec3 l, imp_vec3 *p, imp_vec3 *r, imp_vec3 *v, imp_mat3 *Iinv, double *im)
{
    const double *X = w->bodies->state + BODY_DIM * i;
    const body *b = &w->bodies->body[i];
    const imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
    *r = m3_mul_v(R, l); /* the point from the centre of mass (joint.c keeps l from it, in the body frame) */
    *p = v3_add(v3_load(X), *r);
    const bool moves = b->motion == IMP_DYNAMIC;
    *im = moves ? b->inv_mass : 0;
    *Iinv = moves ? m3_rotate_tensor(R, b->Ibody_inv) : (imp_mat3){{{0}}};
    const imp_vec3 vc = b->motion == IMP_KINEMATIC ? b->kin_v : v3_scale(v3_load(X + 7), b->inv_mass);
    const imp_vec3 om = b->motion == IMP_KINEMATIC ? b->kin_w : moves ? m3_mul_v(*Iinv, v3_load(X + 10)) : v3(0, 0, 0);
    *v = b->motion == IMP_FIXED ? v3(0, 0, 0) : v3_add(vc, v3_cross(om, *r));
}

/* a dynamic body's acceleration by gravity and its applied force (0 for the others) */
static imp_vec3 applied_acceleration(const imp_world *w, const body *b)
{
    if (b->motion != IMP_DYNAMIC) return v3(0, 0, 0);
    return v3_add(v3_scale(w->settings.gravity, b->gravity_scale), v3_scale(b->force, b->inv_mass));
}

void joints_springs_kick(imp_world *w, double h)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->joint[k];
        if (jt->type != IMP_JOINT_SPRING) continue;
        const int ia = ids_lookup(&w->bodies->ids, jt->a), ib = imp_id_is_null(jt->b) ? -1 : ids_lookup(&w->bodies->ids, jt->b);
        if (ia < 0 || (!imp_id_is_null(jt->b) && ib < 0)) continue;
        imp_vec3 pa, ra, va, pb = jt->lb, rb = v3(0, 0, 0), vb = v3(0, 0, 0);
        imp_mat3 Ia, Ib = (imp_mat3){{{0}}};
        double ima, imb = 0;
        body_point(w, ia, jt->la, &pa, &ra, &va, &Ia, &ima);
        if (ib >= 0) body_point(w, ib, jt->lb, &pb, &rb, &vb, &Ib, &imb);
        const imp_vec3 g = v3_sub(pa, pb);
        const double len = v3_len(g);
        if (!(len > 1e-12)) continue;
        const imp_vec3 u = v3_scale(g, 1 / len);
        const imp_vec3 ca = v3_cross(ra, u), cb = v3_cross(rb, u);
        const double inv_meff = ima + imb + v3_dot(ca, m3_mul_v(Ia, ca)) + v3_dot(cb, m3_mul_v(Ib, cb));
        if (!(inv_meff > 0)) continue;
        const body *A = &w->bodies->body[ia], *B = ib >= 0 ? &w->bodies->body[ib] : NULL;
        if ((A->motion != IMP_DYNAMIC || A->asleep) && (!B || B->motion != IMP_DYNAMIC || B->asleep) &&
            fabs(len - jt->rest) * jt->stiffness == 0)
            continue;
        const double vrel = v3_dot(u, v3_sub(va, vb));
        const double j_spring = -jt->stiffness * (len - jt->rest) * h;
        const double arel = v3_dot(u, v3_sub(applied_acceleration(w, A), B ? applied_acceleration(w, B) : v3(0, 0, 0)));
        const double ch = jt->damping * h * inv_meff;
        const double v1 = vrel + j_spring * inv_meff, v2 = (v1 - ch * arel * h / 2) / (1 + ch);
        const double j = j_spring + (v2 - v1) / inv_meff; /* on A along u; B gets -j */
        if (j == 0) continue;
        const imp_vec3 J = v3_scale(u, j);
        double *XA = w->bodies->state + BODY_DIM * ia;
        if (A->motion == IMP_DYNAMIC) {
            v3_store(XA + 7, v3_add(v3_load(XA + 7), J)), v3_store(XA + 10, v3_add(v3_load(XA + 10), v3_cross(ra, J)));
            w->bodies->body[ia].asleep = 0, w->bodies->body[ia].sleep_time = 0;
        }
        if (B && B->motion == IMP_DYNAMIC) {
            double *XB = w->bodies->state + BODY_DIM * ib;
            v3_store(XB + 7, v3_sub(v3_load(XB + 7), J)), v3_store(XB + 10, v3_sub(v3_load(XB + 10), v3_cross(rb, J)));
            w->bodies->body[ib].asleep = 0, w->bodies->body[ib].sleep_time = 0;
        }
        const imp_vec3 K = v3_cross(ra, J);
        jt->impulse[0] += J.x, jt->impulse[1] += J.y, jt->impulse[2] += J.z;
        jt->impulse[3] += K.x, jt->impulse[4] += K.y, jt->impulse[5] += K.z;
    }
}

const char *joints_exact_refusal(const imp_world *w)
{
    const struct joint_set *js = w->joints;
    for (int k = 0; js && k < js->ids.count; k++) {
        const joint *jt = &js->joint[k];
        if (jt->type == IMP_JOINT_DISTANCE)
            return "the exact mode (\"qp\") cannot take a distance or rope joint: its rows there are equalities of one LCP "
                   "and a rope's bound is an inequality it does not hold; use world.contact = \"impulse\"";
        if (jt->has_limits || jt->has_twist)
            return "the exact mode (\"qp\") cannot hold joint limits (a joint of this world has some): its rows there are "
                   "equalities of one LCP and a limit is an inequality; remove them or use world.contact = \"impulse\"";
        if (jt->has_motor)
            return "the exact mode (\"qp\") cannot drive joint motors (a joint of this world has one): its rows there are "
                   "equalities of one LCP and a motor is a bounded row; remove it or use world.contact = \"impulse\"";
    }
    return NULL;
}

void joints_breaks_free(imp_world *w)
{
    joint_break_list *b = w->joints_broken;
    if (!b) return;
    free(b->ev);
    free(b);
    w->joints_broken = NULL;
}

void joints_breaks_restore(imp_world *w, const imp_joint_break *ev, int count)
{
    joints_breaks_free(w);
    if (count <= 0) return;
    w->joints_broken = calloc(1, sizeof(joint_break_list));
    if (!w->joints_broken) abort();
    joint_break_list *b = w->joints_broken;
    b->cap = count;
    b->ev = ids_grow(NULL, sizeof(imp_joint_break), (size_t)count);
    memcpy(b->ev, ev, sizeof(imp_joint_break) * (size_t)count);
    b->count = count;
}

/* ---- the public API -------------------------------------------------------------------------------- */

static joint *find(const imp_world *w, imp_id id)
{
    if (!w->joints) return NULL;
    const int k = ids_lookup(&w->joints->ids, id);
    return k < 0 ? NULL : &w->joints->joint[k];
}

bool imp_joint_force(const imp_world *w, imp_id id, imp_vec3 *force, imp_vec3 *torque)
{
    const joint *jt = find(w, id);
    if (!jt) return false;
    *force = jt->force, *torque = jt->torque;
    return true;
}

bool imp_joint_set_break(imp_world *w, imp_id id, double force, double torque)
{
    joint *jt = find(w, id);
    if (!jt || !(force >= 0) || !(torque >= 0) || !isfinite(force) || !isfinite(torque)) return false;
    jt->break_force = force, jt->break_torque = torque;
    return true;
}

bool imp_joint_break_limits(const imp_world *w, imp_id id, double *force, double *torque)
{
    const joint *jt = find(w, id);
    if (!jt) return false;
    *force = jt->break_force, *torque = jt->break_torque;
    return true;
}

int imp_world_broken_joint_count(const imp_world *w)
{
    const joint_break_list *b = w->joints_broken;
    return b ? b->count : 0;
}

const imp_joint_break *imp_world_broken_joint(const imp_world *w, int i)
{
    const joint_break_list *b = w->joints_broken;
    return b && i >= 0 && i < b->count ? &b->ev[i] : NULL;
}

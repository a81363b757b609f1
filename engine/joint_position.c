/* joint_position.c: the joints at the position level: pre-stabilization (S1 section IV, eqs. 4-6) and
 * the position update of jointed bodies.
 *
 * Pre-stabilization applies impulses that make the PREDICTED joint state allowed: the positions the
 * position update will give with the velocities as they are (x' = x + h v, q' the body's turn with its
 * angular momentum held (joint.c, rotation.c), the split impulses' pseudo velocities included), so the joints never drift. With F the predicted residuals of
 * every row (joint.c's predicted rows) and C their derivative with respect to the velocities, Newton
 * solves (C W G^T) dlambda = -F with S1's impulse directions G fixed at the positions now. Limit rows
 * are part of the projection: a limit whose predicted coordinate is past [lo, hi] drives it to the bound,
 * and a limit once met at any prediction of the stage stays a row to its end (joint.pre_side); a limit
 * the Newton carried past joins after it converged and the Newton goes on (at most 3 rounds). A motor
 * that was not clamped in this step's velocity stages, with no limit row active, is a row too: its
 * predicted coordinate is the one now plus h speed, so the position update moves the joint at the
 * motor's speed exactly and the corrections of a loop do not change a motored crank's rate. In order:
 *   1. S1's sweep: each joint's own Newton step (its m x m block alone) in turn, kept only if it lowers
 *      |F| over all joints. It runs where the joints close a loop (through bodies or the world:
 *      joints_prepare finds them), where it keeps a net's closed loops stable; on open chains and trees
 *      it barely shortens the global Newton and costs a pass over every joint.
 *   2. The global Newton on every row at once by joint_solve.c (Levenberg-Marquardt damping
 *      K + mu diag K where a factorization fails) with a backtracking line search on |F|^2: never worse
 *      than its start. It converges in 2-4 iterations to 1e-9 (m, rad) in ordinary steps.
 *   3. Where it stalls, the fallback (pre_project): S1's directions are fixed at the positions now, and
 *      on a long taut chain whipping at a coarse step the predicted constraints can be out of their
 *      reach. Newton whose directions are the constraint normals at each iterate (Gauss-Newton, the
 *      smallest correction in the mass metric each iteration) is quadratic where a solution exists; and
 *      where a joint was already broken open, a continuation closes part of the gap now and the rest in
 *      the next steps. Its impulses are not a pair through one point, so a step it solves keeps linear
 *      momentum but not angular momentum exactly; S1's directions rebuilt at the prediction (one point per
 *      joint, momentum kept) stall on the same chains. Where no loop is closed, a step after a stalled one
 *      starts here (joints_pre_stabilize: a whipping chain stalls for many steps in a row).
 *
 * The position update (joints_positions) is exactly the prediction pre-stabilization converged on, then
 * post-stabilization with the motors. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "joint_internal.h"
#include "joint_position.h"
#include "joint_solve.h"
#include "joint_velocity.h"
#include "rotation.h"
#include "world_parts.h"

#define NEWTON_ITERS 16
#define FINAL_TOL 1e-9    /* m, and rad */
#define STALL_RATIO 0.1   /* a global Newton step that leaves more than this of the residual stalls */
#define SWEEP_TOL 1e-4    /* S1's sweep: a joint whose largest residual is below this takes no step */
#define RETRY_S1 8        /* no loop closed: after a step the fallback solved, every RETRY_S1-th step tries S1's Newton first */

/* the predicted residuals of every node at the velocities pred_v, pred_w; returns the largest, |F|^2 in *n2 */
static double pre_residuals(imp_world *w, const solver_bodies *sb, double *n2)
{
    struct joint_set *js = w->joints;
    double worst = 0, sum = 0;
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        joint_rows_predicted(w, &js->joint[js->nodes[p]], R, sb->n, js->pred_v, js->pred_w, sb->Iinv, sb->im, sb->h, false);
        if (js->keep_error > 0)
            for (int r = 0; r < R->m; r++) R->f[r] -= js->keep_error * R->error_now[r];
        for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r])), sum += R->f[r] * R->f[r];
    }
    *n2 = sum;
    return worst == worst ? worst : INFINITY;
}

/* pre_residuals for a line search's trial, which is often rejected (or ends the iteration): plain ball
 * joints leave their derivatives to pre_finish_derivs */
static double pre_residuals_trial(imp_world *w, const solver_bodies *sb, double *n2)
{
    w->joints->line_trial = true;
    double worst = pre_residuals(w, sb, n2);
    w->joints->line_trial = false;
    return worst;
}

/* the derivatives pre_residuals_trial left out, at the same prediction (the sides kept in the rows) */
static void pre_finish_derivs(struct joint_set *js, double h)
{
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        if (R->derivs_pending) joint_rows_point_derivs(R, h);
    }
}

/* rows of every node from scratch (impulse directions, active limits) with their residuals, as pre_residuals;
 * all false: only the joints with limits (whose limit rows may come or go with the prediction) */
static double pre_rows(imp_world *w, const solver_bodies *sb, double *n2, bool all)
{
    struct joint_set *js = w->joints;
    double worst = 0, sum = 0;
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        joint *jt = &js->joint[js->nodes[p]];
        joint_rows_predicted(w, jt, R, sb->n, js->pred_v, js->pred_w, sb->Iinv, sb->im, sb->h, all || jt->has_limits);
        for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r])), sum += R->f[r] * R->f[r];
    }
    *n2 = sum;
    return worst == worst ? worst : INFINITY;
}

/* one Newton step of joint p's rows alone (S1 section IV's per-joint iteration), with its m x m block
 * of K and the impulse directions of the stage's build (a joint with limits builds its own: its limit
 * rows may come or go); none when its largest residual is below tol or not finite */
static void sweep_joint(imp_world *w, solver_bodies *sb, int p, double tol)
{
    struct joint_set *js = w->joints;
    row_block *R = &js->rows[p];
    joint *jt = &js->joint[js->nodes[p]];
    joint_rows_predicted(w, jt, R, sb->n, js->pred_v, js->pred_w, sb->Iinv, sb->im, sb->h, jt->has_limits);
    double worst = 0, D[BLOCK_DOUBLES], lam[MAX_ROWS] = {0};
    for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r]));
    if (!(worst < INFINITY) || !(worst >= tol)) return;
    for (int r = 0; r < R->m; r++) {
        for (int c = 0; c < R->m; c++) D[MAX_ROWS * r + c] = dot6(R->cA[r], R->wA[c]) + dot6(R->cB[r], R->wB[c]);
        D[MAX_ROWS * r + r] += 1e-10 * fabs(D[MAX_ROWS * r + r]) + 1e-300;
    }
    if (!block_invert(D, R->m)) return;
    for (int r = 0; r < R->m; r++) {
        double s = 0;
        for (int c = 0; c < R->m; c++) s -= D[MAX_ROWS * r + c] * R->f[c];
        lam[r] = s;
    }
    jsolve_apply(js, p, lam, 1, js->pred_v, js->pred_w, sb->v, sb->w, sb->n);
}

/* S1's sweep: each joint's own Newton step in turn; kept only when it lowers |F|^2 over all joints (the
 * state before it is saved and restored). Returns the largest residual, |F|^2 in *n2 */
static double pre_sweep(imp_world *w, solver_bodies *sb, double *n2)
{
    struct joint_set *js = w->joints;
    imp_vec3 *v = sb->v, *om = sb->w;
    const int n = sb->n;
    double a2;
    for (int i = 0; i <= n; i++) js->saved_v[i] = js->pred_v[i], js->saved_w[i] = js->pred_w[i], js->scratch_v[i] = v[i], js->scratch_w[i] = om[i];
    joints_impulse_save(js); /* the joints' forces: taken back with the sweep (joint_force.c) */
    for (int p = 0; p < js->node_count; p++) sweep_joint(w, sb, p, SWEEP_TOL);
    double wa = pre_rows(w, sb, &a2, false);
    if (a2 <= *n2) {
        *n2 = a2;
        return wa;
    }
    joints_impulse_restore(js);
    for (int i = 0; i <= n; i++) js->pred_v[i] = js->saved_v[i], js->pred_w[i] = js->saved_w[i], v[i] = js->scratch_v[i], om[i] = js->scratch_w[i];
    js->epoch++;
    return pre_rows(w, sb, n2, false);
}

/* One round of the global Newton on every row at once: the sparse solve and a backtracking line search
 * (alpha = 1, 1/2, 1/4) on |F|^2. With S1's directions G fixed, the iteration stalls well above the
 * tolerance where the predicted constraints are out of their reach. On open chains and trees it hands
 * over to the fallback at the first sign: a step that lowers nothing (undone), a step the line search
 * had to shorten, or one that keeps more than STALL_RATIO of the largest residual (Newton near a
 * reachable solution cuts it by far more); the damped retries on a stalled whipping chain would cost as
 * much as the rest of the step. Where the joints close a loop it keeps its Levenberg-Marquardt retries
 * (mu raised on a rejected step, two failures end it) and hands over only then: a closed net handed
 * over early runs hotter and less stable. */
static void newton_round(imp_world *w, solver_bodies *sb, double *worst, double *n2, double *mu, int *fails)
{
    struct joint_set *js = w->joints;
    imp_vec3 *v = sb->v, *om = sb->w;
    const int n = sb->n;
    for (int it = 0; it < NEWTON_ITERS && *worst > FINAL_TOL && *fails < 2; it++) {
        pre_finish_derivs(js, sb->h);
        for (int p = 0; p < js->node_count; p++)
            for (int r = 0; r < js->rows[p].m; r++) js->rhs[MAX_ROWS * p + r] = -js->rows[p].f[r];
        jsolve_assemble(js, *mu);
        if (!jsolve_factor(js)) {
            *mu = *mu * 100 + 1e-6, (*fails)++;
            continue;
        }
        jsolve_solve(js);
        double alpha = 1, applied = 0, t2 = *n2, tw = *worst, last_w = *worst;
        bool ok = false;
        for (int ls = 0; ls < 3 && !ok; ls++, alpha *= 0.5) {
            for (int p = 0; p < js->node_count; p++) jsolve_apply(js, p, js->sol + MAX_ROWS * p, alpha - applied, js->pred_v, js->pred_w, v, om, n);
            applied = alpha;
            tw = pre_residuals_trial(w, sb, &t2);
            ok = t2 < (1 - 1e-4 * alpha) * *n2;
        }
        if (ok) {
            *n2 = t2, *worst = tw;
            if (js->loops) *mu = applied == 1 ? fmax(*mu * 0.1, 1e-9) : *mu * 10;
            else if (applied < 1 || tw > STALL_RATIO * last_w) return; /* not Newton's quadratic pace: pre_project */
        } else {
            for (int p = 0; p < js->node_count; p++) jsolve_apply(js, p, js->sol + MAX_ROWS * p, -applied, js->pred_v, js->pred_w, v, om, n);
            *worst = pre_residuals(w, sb, n2);
            if (!js->loops) return;
            *mu = *mu * 100 + 1e-6, (*fails)++; /* closed loops: damped retries before the fallback */
        }
    }
}

/* a limit the solve carried its coordinate past (not met at the first prediction): its row joins (the
 * impulse directions are those of now, unchanged). Returns whether one joined; the rows' residuals are
 * rebuilt (their largest into *worst, |F|^2 into *n2) where a joint has limits */
static bool limits_joined(imp_world *w, const solver_bodies *sb, double *worst, double *n2)
{
    struct joint_set *js = w->joints;
    bool limits = false;
    for (int p = 0; p < js->node_count && !limits; p++) limits = js->joint[js->nodes[p]].has_limits;
    if (!limits) return false;
    int lim0 = 0, lim1 = 0;
    for (int p = 0; p < js->node_count; p++)
        for (int r = 0; r < js->rows[p].m; r++) lim0 += js->rows[p].kind[r] == ROW_LIMIT;
    *worst = pre_rows(w, sb, n2, false);
    for (int p = 0; p < js->node_count; p++)
        for (int r = 0; r < js->rows[p].m; r++) lim1 += js->rows[p].kind[r] == ROW_LIMIT;
    return lim1 != lim0;
}

/* The fallback when S1's Newton stalls: Newton whose directions follow the iterate. At V_k the rows'
 * derivatives C (dF/dV) give G = C^T / h (rows_as_normals), and the smallest step in the mass metric
 * that zeroes the linearization,
 *     min 1/2 |dV|_M^2  subject to  F(V_k) + C dV = 0   =>   dV = W C^T mu,  (C W C^T) mu = -F(V_k),
 * is the same sparse solve. It converges quadratically where a solution exists (2-4 iterations to
 * 1e-9 m on a 50-link capsule chain at 1/60, where projecting V_0 with the derivatives of V_k creeps at a
 * ratio of ~0.5 an iteration); its limit is the mass-metric projection of V_0 to first order. A line
 * search on |F|^2 keeps every iterate no worse than the last, and a rejected step raises the
 * Levenberg-Marquardt damping. */
/* the constraint normals as directions, G = C^T / h (the impulse of a point row is then t at the
 * predicted articulation point, turned by J_l^T), with W G: then K = C W C^T / h is symmetric positive
 * semidefinite and every Newton step a descent direction of |F|^2 (Gauss-Newton: the smallest step in the
 * mass metric that zeroes the linearization) */
static void rows_as_normals(struct joint_set *js, const solver_bodies *sb)
{
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        for (int r = 0; r < R->m; r++)
            for (int k = 0; k < 6; k++) R->gA[r][k] = R->cA[r][k] / sb->h, R->gB[r][k] = R->cB[r][k] / sb->h;
        joint_rows_weights(R, sb->Iinv, sb->im);
        R->dir_valid = false, R->dir_version++;
    }
}

static double pre_project(imp_world *w, const solver_bodies *sb, double worst, double n2)
{
    struct joint_set *js = w->joints;
    const int n = sb->n;
    double mu = 1e-9;
    if (n2 < 0) worst = pre_residuals(w, sb, &n2); /* else the rows hold the residuals at V, with C */
    for (int it = 0; it < 2 * NEWTON_ITERS && worst > FINAL_TOL; it++) {
        pre_finish_derivs(js, sb->h);
        rows_as_normals(js, sb);
        for (int p = 0; p < js->node_count; p++)
            for (int r = 0; r < js->rows[p].m; r++) js->rhs[MAX_ROWS * p + r] = -js->rows[p].f[r];
        jsolve_assemble(js, mu);
        if (!jsolve_factor(js)) break;
        jsolve_solve(js);
        /* the step dV = W G dlambda into scratch_v, scratch_w */
        for (int i = 0; i <= n; i++) js->scratch_v[i] = js->scratch_w[i] = v3(0, 0, 0);
        for (int p = 0; p < js->node_count; p++) jsolve_apply(js, p, js->sol + MAX_ROWS * p, 1, js->scratch_v, js->scratch_w, NULL, NULL, n);
        double t2 = n2, tw = worst, at = 0;
        bool ok = false;
        for (int ls = 0; ls < 3 && !ok; ls++) {
            double alpha = ls == 0 ? 1 : ls == 1 ? 0.5 : 0.25;
            for (int i = 0; i <= n; i++) js->pred_v[i] = v3_mad(js->pred_v[i], js->scratch_v[i], alpha - at), js->pred_w[i] = v3_mad(js->pred_w[i], js->scratch_w[i], alpha - at);
            js->epoch++;
            at = alpha;
            tw = pre_residuals_trial(w, sb, &t2);
            ok = t2 < n2;
        }
        if (!ok) { /* back to V_k, and damp harder (Levenberg-Marquardt: a shorter step, closer to the gradient) */
            for (int i = 0; i <= n; i++) js->pred_v[i] = v3_mad(js->pred_v[i], js->scratch_v[i], -at), js->pred_w[i] = v3_mad(js->pred_w[i], js->scratch_w[i], -at);
            js->epoch++;
            worst = pre_residuals(w, sb, &n2);
            mu = mu * 10 + 1e-4;
            if (mu > 1e6) break;
            continue;
        }
        mu = at == 1 ? fmax(mu * 0.1, 1e-9) : mu;
        n2 = t2, worst = tw;
        /* the step reaches the velocities in pre_fallback: the joints' forces (joint_force.c) */
        for (int p = 0; p < js->node_count; p++) joint_impulse_add(js, p, js->sol + MAX_ROWS * p, at);
    }
    return worst;
}

/* the fallback (pre_project), and where a joint is still far (broken open by an earlier failure) a
 * continuation that aims at part of the way, so the next steps close it instead of one violent step
 * that cannot; the velocities of jointed bodies become the predicted ones less the split impulses' */
static void pre_fallback(imp_world *w, solver_bodies *sb, double worst, double n2)
{
    struct joint_set *js = w->joints;
    const int n = sb->n;
    double left = pre_project(w, sb, worst, n2);
    /* the errors now (the prediction with h = 0) are built in a scratch copy of the row (what a
     * residual build reads: the sides now, the rows and their targets), so the rows keep the residuals
     * and derivatives of the last iterate, where the continuation starts */
    for (int p = 0; p < js->node_count && left > 1e-6; p++) {
        row_block *R = &js->rows[p], T;
        T.m = R->m, T.limit_target = R->limit_target, T.motor_target = R->motor_target, T.sA = R->sA, T.sB = R->sB;
        memcpy(T.kind, R->kind, sizeof T.kind);
        joint_rows_predicted(w, &js->joint[js->nodes[p]], &T, n, js->pred_v, js->pred_w, sb->Iinv, sb->im, 0, false);
        memcpy(R->error_now, T.f, sizeof R->error_now);
        for (int r = 0; r < R->m; r++)
            if (R->kind[r] == ROW_MOTOR) R->error_now[r] = 0; /* a motor's target is a motion, not an error */
    }
    for (js->keep_error = 0.5; left > 1e-6 && js->keep_error < 0.9; js->keep_error = 1 - 0.5 * (1 - js->keep_error)) left = pre_project(w, sb, left, -1);
    js->keep_error = 0;
    for (int i = 0; i < n; i++)
        if (js->jointed[i] && sb->im[i] > 0) sb->v[i] = v3_sub(js->pred_v[i], sb->vp[i]), sb->w[i] = v3_sub(js->pred_w[i], sb->wp[i]);
}

/* Pre-stabilization (S1 section IV; the header): S1's sweep where the joints close a loop, the global
 * damped Newton, and the fallback where it stalls */
void joints_pre_stabilize(imp_world *w, solver_bodies *sb)
{
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    js->real_v = sb->v; /* impulses on these velocities are the joints' forces (joint_force.c) */
    jsolve_collect(js, n, sb->im);
    if (!js->node_count) return;
    for (int i = 0; i <= n; i++) js->pred_v[i] = v3_add(sb->v[i], sb->vp[i]), js->pred_w[i] = v3_add(sb->w[i], sb->wp[i]);
    js->epoch++, js->pred_cache_h = sb->h, js->keep_error = 0;
    for (int p = 0; p < js->node_count; p++) js->joint[js->nodes[p]].pre_side = 0;
    /* impulse directions and active limit rows (fixed through the global solve), with the residuals */
    double n2, worst = pre_rows(w, sb, &n2, true);
    if (js->loops && worst > FINAL_TOL) worst = pre_sweep(w, sb, &n2);
    double mu = 1e-9;
    int fails = 0;
    /* Where no loop is closed, a step after one that stalled starts in the fallback: a long taut chain
     * whipping at a coarse step stalls for many steps in a row (three in four after a stalled one), and
     * from the velocities as they are the fallback converges in about two iterations, where the global
     * Newton's first step, kept and handed over, leaves it three or four. Every RETRY_S1-th step of such
     * a run tries the global Newton again, and a step it solves ends the run. The run's length is kept
     * in the joints (fallback_run), so a restored snapshot steps as the original did. */
    int run = 0;
    for (int p = 0; p < js->node_count; p++) run = js->joint[js->nodes[p]].fallback_run > run ? js->joint[js->nodes[p]].fallback_run : run;
    const bool skip = !js->loops && run > 0 && run % RETRY_S1 != 0;
    for (int round = 0; round < 3 && !skip; round++) {
        newton_round(w, sb, &worst, &n2, &mu, &fails);
        if (fails >= 2 || !limits_joined(w, sb, &worst, &n2)) break;
    }
    const uint8_t next = worst > 1e-8 ? (uint8_t)(run % RETRY_S1 + 1) : 0;
    for (int p = 0; p < js->node_count; p++) js->joint[js->nodes[p]].fallback_run = next;
    if (worst > 1e-8) pre_fallback(w, sb, worst, n2);
    js->pre_stab_h = sb->h; /* pred_v, pred_w hold the predicted velocities of this step (joints_positions) */
}

/* A body held by one ball joint (no limit, no motor) at a point that does not move (the world's, or a
 * static body's) is a rigid body about a fixed point: Euler's equations hold about that point with the
 * inertia there, I_p = I + m (|l|^2 1 - l l^T) (l the joint's point from the centre of mass, body
 * frame). Its torque-free turn about the point (rotation.c with I_p) is the exact motion of the body
 * and the joint together; turned about its centre of mass and put back on the joint by impulses, a top
 * spinning fast nods as its axis circles its momentum about the centre (at |L| / I, 3.3 rad a step for
 * the spec's plate at 100 rad/s and dt 1/60) where the true motion circles at |L_p| / I_p. Its joint
 * impulses pass through the point and do not change L_p; the joint holds to round-off. */
static void find_pivots(imp_world *w, int n)
{
    struct joint_set *js = w->joints;
    for (int i = 0; i < n; i++) js->pivot[i] = -1;
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->joint[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        const int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++) {
            const int i = ends[e], o = ends[1 - e];
            if (i >= n) continue;
            const bool fixed_other = o >= n || w->bodies->body[o].motion == IMP_FIXED;
            const bool ball = jt->type == IMP_JOINT_POINT && !jt->has_limits && !jt->has_motor && !jt->has_twist;
            js->pivot[i] = js->pivot[i] == -1 && fixed_other && ball ? k : -2; /* -2: another joint, or not a ball */
        }
    }
}

/* body i's fixed point (world) and its offset l from the centre (body frame) */
static imp_vec3 pivot_point(const imp_world *w, const joint *jt, int i, int n, imp_vec3 *l)
{
    const bool a = jt->ia == i;
    *l = a ? jt->la : jt->lb;
    const int o = a ? jt->ib : jt->ia;
    const imp_vec3 lo = a ? jt->lb : jt->la;
    if (o >= n) return lo;
    const double *Xo = w->bodies->state + BODY_DIM * o;
    return v3_add(v3_load(Xo), m3_mul_v(quat_to_m3(quat_of(Xo)), lo));
}

/* the pivoted body i from its state X0 at the step's start, with the velocities vv, ww to move by and
 * v, om its velocities after the stages: x and q into X, the velocities of the turn's end into v, om */
static void pivot_turn(imp_world *w, int i, joint *jt, int n, const double *X0, imp_vec3 vv, imp_vec3 ww,
                       double h, double *X, imp_vec3 *v, imp_vec3 *om)
{
    const body *b = &w->bodies->body[i];
    imp_vec3 l;
    const imp_vec3 P = pivot_point(w, jt, i, n, &l);
    const imp_quat q0 = quat_normalize(quat(X0[3], X0[4], X0[5], X0[6]));
    const imp_mat3 R0 = quat_to_m3(q0);
    const imp_vec3 r0 = v3_scale(m3_mul_v(R0, l), -1); /* the centre from the joint's point */
    const double ll = v3_dot(l, l);
    const imp_mat3 Ip = m3_add(b->Ibody, m3_scale((imp_mat3){{{ll - l.x * l.x, -l.x * l.y, -l.x * l.z}, {-l.y * l.x, ll - l.y * l.y, -l.y * l.z},
                                                            {-l.z * l.x, -l.z * l.y, ll - l.z * l.z}}}, b->mass));
    const rot_inertia in = rot_principal(Ip);
    const imp_mat3 Ic0 = m3_rotate_tensor(R0, b->Ibody), Ip0_inv = m3_rotate_tensor(R0, m3_inverse(Ip));
    /* L_p = I omega + m r x v about the point: of the motion (split impulses' pseudo velocities in), of
     * the state at the start (the pieces), of the velocities */
    const imp_vec3 Lmove = v3_add(m3_mul_v(Ic0, ww), v3_scale(v3_cross(r0, vv), b->mass));
    const imp_vec3 Lstart = v3_add(v3_load(X0 + 10), v3_cross(r0, v3_load(X0 + 7)));
    const imp_vec3 L = v3_add(m3_mul_v(Ic0, *om), v3_scale(v3_cross(r0, *v), b->mass));
    imp_quat q;
    imp_mat3 unused;
    rot_flow(&in, q0, m3_mul_v(Ip0_inv, Lmove), h, rot_pieces(&in, q0, Lstart, h), &q, &unused);
    X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
    const imp_mat3 R = quat_to_m3(quat_normalize(q));
    const imp_vec3 r = v3_scale(m3_mul_v(R, l), -1);
    v3_store(X, v3_add(P, r));
    *om = m3_mul_v(m3_rotate_tensor(R, m3_inverse(Ip)), L);
    const imp_vec3 v_before = *v;
    *v = v3_cross(*om, r);
    /* the turn about the point changed the momentum by the joint's impulse there (joint_force.c) */
    joint_impulse_at(w, jt, i, v3_scale(v3_sub(*v, v_before), b->mass), P);
}

/* I(q) v = R Ibody R^T v for the rotation R of q, as three matrix-vector products (27 multiplications,
 * where forming the world tensor and applying it take 63) */
static inline imp_vec3 inertia_times(imp_mat3 R, const imp_mat3 *Ibody, imp_vec3 v)
{
    return m3_mul_v(R, m3_mul_v(*Ibody, m3_mul_tv(R, v)));
}

/* The position update of jointed bodies, exactly the prediction of pre-stabilization: x' = x + h v, q'
 * the body's turn with its angular momentum held (rotation.c), so omega' = I(q')^-1 I(q) omega (a body
 * about a fixed point: pivot_turn); then the second half of the forces' impulse where impulse.c's
 * velocity stage took the first (joints_mark_half_kicks), post-stabilization with the motors, the momenta from the velocities, and the
 * hinge angles unwrapped turn by turn */
void joints_positions(imp_world *w, solver_bodies *sb, const double *states0)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const imp_vec3 *vp = sb->vp, *wp = sb->wp;
    imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    find_pivots(w, n);
    /* the predicted velocities pre-stabilization converged on (v + v_p there, up to rounding) and, where
     * its last evaluation was at them, its predicted rotations: the positions are exactly the
     * prediction whose joint errors it made < 1e-9 */
    const bool pre = js->pre_stab_h == h && js->body_table_cap > n && !w->settings.planar; /* (planar: impulse.c projects v, v_p after) */
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        const double *X0 = states0 + BODY_DIM * i;
        double *X = w->bodies->state + BODY_DIM * i;
        const body *b = &w->bodies->body[i];
        const imp_vec3 vv = pre ? js->pred_v[i] : v3_add(v[i], vp[i]), ww = pre ? js->pred_w[i] : v3_add(om[i], wp[i]);
        imp_vec3 L_turn = v3(0, 0, 0); /* the angular momentum of a body turned about its centre */
        bool turned = false;
        if (js->pivot[i] >= 0 && !w->settings.planar) {
            pivot_turn(w, i, &js->joint[js->pivot[i]], n, X0, vv, ww, h, X, &v[i], &om[i]);
        } else {
            v3_store(X, v3_add(v3_load(X0), v3_scale(vv, h)));
            imp_quat q;
            const imp_quat q0 = quat_normalize(quat(X0[3], X0[4], X0[5], X0[6]));
            const bool seen = pre && !memcmp(&js->body_q_state[i], X0 + 3, sizeof(imp_quat)); /* body_q, body_R are q0's */
            imp_vec3 axis;
            if (seen && js->pred_epoch[i] == js->epoch && js->pred_version[i] == js->vel_version[i]) {
                q = js->pred_q[i];
            } else if (seen && js->axis_epoch[i] == js->epoch && js->axis_version[i] == js->vel_version[i] &&
                       rot_symmetry_axis(&b->principal, &axis)) { /* the flow completed from the turn its axis points saw */
                const imp_vec3 a0 = m3_mul_v(js->body_R[i], axis);
                q = rot_axial_finish(&b->principal, js->body_q[i], js->axis_e[i], a0, m3_mul_v(js->axis_R[i], a0), ww, h);
            } else {
                imp_mat3 unused;
                joint_predict_rotation(w, i, X0, q0, ww, h, &q, &unused);
            }
            X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
            /* the turn held the angular momentum: omega' = I(q')^-1 I(q) omega (I(q')^-1 below) */
            L_turn = inertia_times(seen ? js->body_R[i] : quat_to_m3(q0), &b->Ibody, om[i]), turned = true;
        }
        /* as impulse_step loads it next step (bit for bit: the kept post-stabilization factors), and as
         * joint_side_now would find it */
        const imp_quat qn = quat_normalize(quat(X[3], X[4], X[5], X[6]));
        const imp_mat3 R = quat_to_m3(qn);
        Iinv[i] = m3_rotate_tensor(R, b->Ibody_inv);
        if (turned) om[i] = m3_mul_v(Iinv[i], L_turn);
        if (js->half_kick[i]) { /* the second half of the forces' impulse, at the new positions */
            om[i] = v3_add(om[i], m3_mul_v(Iinv[i], v3_scale(b->torque, 0.5 * h)));
            v[i] = v3_add(v[i], v3_scale(v3_add(v3_scale(w->settings.gravity, b->gravity_scale), v3_scale(v3_sub(b->force, v3_scale(v[i], w->settings.drag)), b->inv_mass)), 0.5 * h));
        }
        if (js->body_table_cap > i) memcpy(&js->body_q_state[i], X + 3, sizeof(imp_quat)), js->body_q[i] = qn, js->body_R[i] = R;
    } /* (the shapes follow in the step's contact update, or as the body falls asleep: impulse.c) */
    joints_post_stabilize(w, sb, true); /* with the motors (what is left of max h) */
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        const imp_mat3 R = js->body_table_cap > i ? js->body_R[i] : quat_to_m3(quat_of(X));
        v3_store(X + 7, v3_scale(v[i], w->bodies->body[i].mass));
        v3_store(X + 10, inertia_times(R, &w->bodies->body[i].Ibody, om[i]));
    }
    /* the hinge angles, unwrapped turn by turn */
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->joint[k];
        if (jt->ia < 0 || jt->ib < 0 || !angular_free(jt->type)) continue;
        joint_side A, B;
        joint_side_now(w, jt->ia, n, jt->la, jt->fa, NULL, true, &A);
        joint_side_now(w, jt->ib, n, jt->lb, jt->fb, NULL, true, &B);
        jt->angle = joint_hinge_angle(A.F, B.F, jt->angle);
    }
}


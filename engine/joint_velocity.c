/* joint_velocity.c: the joints at the velocity level: post-stabilization (S1 section V), the joints'
 * rows inside the contact sweeps and shock propagation (section VI), and on the split impulses.
 *
 * Post-stabilization solves K lambda = target - u with K = G W G^T (symmetric: the velocity rows are
 * their own impulse directions, C = G; S0's collision matrix for a point joint), u the rows' relative
 * velocities (joint.c). It runs after collisions, after the velocity update and after the position
 * update (these two with the motors). Limit rows are one-sided (only velocity that moves further past
 * the limit is removed: lambda >= 0 at lo, <= 0 at hi) and motor rows boxed by what is left of max h in
 * this step (motor_used: the motor's impulses of all the stages of a step stay within |.| <= max h): a
 * row whose multiplier leaves its bounds is fixed at the bound and the rest solved again (an active set,
 * at most ACTIVE_PASSES solves). Each linear solve is checked (post_solve). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "joint_internal.h"
#include "joint_solve.h"
#include "joint_velocity.h"
#include "world_parts.h"

#define ACTIVE_PASSES 6  /* post-stabilization's solves at most (its active set) */

/* The factors of K reused. K = G W G^T depends on the rows' directions G and W G only, and these depend
 * on the positions alone: the post-stabilization after the position update and the next step's (after
 * the velocity update, when no motor row is active, or after collisions) see the same positions, so the
 * second solves with the first one's factors. The rows are compared exactly (G and W G of every row: a
 * few thousand numbers for 50 joints, against an assembly and factorization), so anything that moved a
 * body, changed a mass, a limit or the joints in between makes a fresh factorization; a row block whose
 * dir_version is the one recorded was not rebuilt since (its directions kept: joint.c's rows_directions)
 * and needs no comparison. keep_post_factors records the rows of the factors in diag, upper and lower;
 * jsolve_assemble overwrites them. */
static void keep_post_factors(struct joint_set *js)
{
    int need = 0;
    for (int p = 0; p < js->node_count; p++) need += 2 + 24 * js->rows[p].m;
    js->kept_rows = table_grow(js->kept_rows, sizeof(double), &js->kept_rows_cap, need);
    double *o = js->kept_rows;
    for (int p = 0; p < js->node_count; p++) {
        const row_block *R = &js->rows[p];
        *o++ = R->m, *o++ = R->dir_version;
        for (int r = 0; r < R->m; r++) {
            memcpy(o, R->gA[r], 6 * sizeof(double)), memcpy(o + 6, R->gB[r], 6 * sizeof(double));
            memcpy(o + 12, R->wA[r], 6 * sizeof(double)), memcpy(o + 18, R->wB[r], 6 * sizeof(double));
            o += 24;
        }
    }
    js->kept_valid = true, js->kept_gen = js->structure_gen;
}

/* do diag, upper and lower hold the factors of K for the rows as they are? */
static bool post_factors_kept(const struct joint_set *js)
{
    if (!js->kept_valid || js->kept_gen != js->structure_gen) return false;
    const double *o = js->kept_rows;
    for (int p = 0; p < js->node_count; p++) {
        const row_block *R = &js->rows[p];
        if (*o++ != R->m) return false;
        if (*o++ == R->dir_version) { /* not rebuilt since (row_block.dir_version): the same rows */
            o += 24 * R->m;
            continue;
        }
        for (int r = 0; r < R->m; r++) {
            if (memcmp(o, R->gA[r], 6 * sizeof(double)) || memcmp(o + 6, R->gB[r], 6 * sizeof(double)) ||
                memcmp(o + 12, R->wA[r], 6 * sizeof(double)) || memcmp(o + 18, R->wB[r], 6 * sizeof(double)))
                return false;
            o += 24;
        }
    }
    return true;
}

/* The linear solve of post-stabilization, K lambda = rhs (rows as built, fixed rows with C zeroed),
 * checked. K is singular where rows are redundant (closed loops: a planar four-bar has 20 rows on 18
 * degrees of freedom, a net or a tread attached to its gears many more), and rhs is consistent
 * (u = G V), so with a small diagonal shift eps diag K the solution is the least-squares one (and rows
 * that are nearly, not exactly, dependent, such as a sagging net's, are left a little unsatisfied
 * instead of taking huge multipliers). But block elimination of a nearly singular K loses digits at
 * every nearly singular pivot (its L blocks grow like 1/sqrt(eps)), and with several of them in a row
 * the computed lambda can be garbage whose impulses are not in the null space, with knots thrown out of
 * a velocity projection that can only remove kinetic energy. So the solve is checked where it is cheap:
 * the velocity change of the multipliers, dV = W G^T lambda, must give G dV = rhs on every free row to
 * 1e-3 of the largest |rhs| (+ 1e-9; a sound solve meets it to about 1e-6, a garbage one misses by tens
 * of percent). If not, the shift grows by 1000 (eps = 1e-9, 1e-6, 1e-3) and the solve is done again: a
 * softer projection rather than a violent one. Not checked where K is positive definite by construction
 * (post_definite). first: the active set's first pass, whose factors may be the kept ones (above) and
 * are kept. */
static bool post_solve(struct joint_set *js, int n, bool first)
{
    double big = 0;
    for (int p = 0; p < js->node_count; p++)
        for (int r = 0; r < js->rows[p].m; r++) big = fmax_num(big, fabs(js->rhs[MAX_ROWS * p + r]));
    memcpy(js->rhs_kept, js->rhs, sizeof(double) * MAX_ROWS * (size_t)js->node_count); /* solve overwrites rhs */
    bool kept = first && post_factors_kept(js);
    const bool definite = js->post_definite;
    for (double mu = kept ? js->kept_shift : 1e-9; mu < 1e-2; mu *= 1000, kept = false) {
        memcpy(js->rhs, js->rhs_kept, sizeof(double) * MAX_ROWS * (size_t)js->node_count);
        if (!kept) {
            jsolve_assemble(js, mu);
            if (!jsolve_factor(js)) return false;
            if (first) keep_post_factors(js), js->kept_shift = mu;
        }
        jsolve_solve(js);
        if (definite) break;
        for (int i = 0; i <= n; i++) js->scratch_v[i] = js->scratch_w[i] = v3(0, 0, 0);
        for (int p = 0; p < js->node_count; p++) jsolve_apply(js, p, js->sol + MAX_ROWS * p, 1, js->scratch_v, js->scratch_w, NULL, NULL, n);
        double worst = 0;
        for (int p = 0; p < js->node_count; p++) {
            const row_block *R = &js->rows[p];
            const joint *jt = &js->joint[js->nodes[p]];
            const imp_vec3 va = js->scratch_v[jt->ia], wa = js->scratch_w[jt->ia], vb = js->scratch_v[jt->ib], wb = js->scratch_w[jt->ib];
            const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
            for (int r = 0; r < R->m; r++)
                if (!R->fixed[r]) worst = fmax_num(worst, fabs(dot6(R->gA[r], xa) + dot6(R->gB[r], xb) - js->rhs_kept[MAX_ROWS * p + r]));
        }
        if (worst <= 1e-3 * big + 1e-9) break;
    }
    return true;
}

/* post_solve's check is left out where K cannot be nearly singular: ball joints (three linear rows
 * each) that close no loop, between bodies that move (1/m > 0) or do not move at all, have rows of
 * full rank (root each tree at the world or any body: each joint's child body takes its three rows
 * through 1/m times the identity, block-triangular), so K is positive definite */
static bool post_rows_definite(const imp_world *w, const struct joint_set *js, int n)
{
    if (js->loops) return false;
    for (int p = 0; p < js->node_count; p++) {
        const row_block *R = &js->rows[p];
        const joint_side *S[2] = {&R->sA, &R->sB};
        if (!(R->axis_rows && R->m == 3)) return false;
        for (int k = 0; k < 2; k++)
            if (!(S[k]->moves || S[k]->i >= n || w->bodies->body[S[k]->i].motion != IMP_DYNAMIC)) return false;
    }
    return true;
}

/* the right-hand sides of an active-set pass: rows fixed at a bound take no part (rhs 0, C zeroed) */
static void post_rhs(struct joint_set *js)
{
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        for (int r = 0; r < R->m; r++) {
            js->rhs[MAX_ROWS * p + r] = R->fixed[r] ? 0 : R->f[r];
            if (R->fixed[r]) memset(R->cA[r], 0, sizeof R->cA[r]), memset(R->cB[r], 0, sizeof R->cB[r]);
        }
    }
}

/* Multipliers out of bounds are fixed at the bound and applied; the rest is solved again. Limit rows
 * that pull (the joint leaves the limit) are released first, and motors clamped only in a pass that
 * released none: a motor driving a joint off its limit must not be clamped against the limit row it
 * conflicts with. Returns whether a row was fixed */
static bool post_clamp(struct joint_set *js, solver_bodies *sb)
{
    bool release = false, clamped = false;
    for (int p = 0; p < js->node_count && !release; p++)
        for (int r = 0; r < js->rows[p].m; r++) {
            const row_block *R = &js->rows[p];
            double l = js->sol[MAX_ROWS * p + r];
            release = release || (R->kind[r] == ROW_LIMIT && !R->fixed[r] && !(l >= R->lo[r] && l <= R->hi[r]));
        }
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        double lam[MAX_ROWS] = {0};
        for (int r = 0; r < R->m; r++) {
            double l = js->sol[MAX_ROWS * p + r];
            if (R->fixed[r] || (l >= R->lo[r] && l <= R->hi[r])) continue;
            if (release && R->kind[r] != ROW_LIMIT) continue;
            lam[r] = l < R->lo[r] ? R->lo[r] : R->hi[r];
            R->fixed[r] = true, clamped = true;
            if (R->kind[r] == ROW_MOTOR) joint_motor_used(&js->joint[js->nodes[p]], R, r, lam[r]), js->joint[js->nodes[p]].motor_sat = true;
        }
        jsolve_apply(js, p, lam, 1, sb->v, sb->w, NULL, NULL, sb->n);
    }
    return clamped;
}

/* the free rows' multipliers (within their bounds) applied, and the motors' impulses counted */
static void post_apply(struct joint_set *js, solver_bodies *sb)
{
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        double lam[MAX_ROWS] = {0};
        for (int r = 0; r < R->m; r++) {
            double l = js->sol[MAX_ROWS * p + r];
            if (!R->fixed[r]) lam[r] = l < R->lo[r] ? R->lo[r] : l > R->hi[r] ? R->hi[r] : l;
            if (R->kind[r] == ROW_MOTOR) joint_motor_used(&js->joint[js->nodes[p]], R, r, lam[r]);
        }
        jsolve_apply(js, p, lam, 1, sb->v, sb->w, NULL, NULL, sb->n);
    }
}

/* Velocity post-stabilization (S1 section V; the header). motors: the velocity stage, where motor rows
 * drive the free coordinate's rate with at most max h of impulse. */
void joints_post_stabilize(imp_world *w, solver_bodies *sb, bool motors)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    js->real_v = sb->v; /* impulses on these velocities are the joints' forces (joint_force.c) */
    jsolve_collect(js, n, im);
    if (!js->node_count) return;
    for (int p = 0; p < js->node_count; p++)
        joint_rows_velocity(w, &js->joint[js->nodes[p]], &js->rows[p], n, v, om, Iinv, im, h, true, motors);
    js->post_definite = post_rows_definite(w, js, n);
    for (int pass = 0; pass < ACTIVE_PASSES; pass++) {
        if (pass)
            for (int p = 0; p < js->node_count; p++) joint_rows_velocity(w, &js->joint[js->nodes[p]], &js->rows[p], n, v, om, Iinv, im, h, false, motors);
        post_rhs(js);
        if (!post_solve(js, n, pass == 0)) return;
        if (post_clamp(js, sb) && pass + 1 < ACTIVE_PASSES) continue;
        post_apply(js, sb);
        break;
    }
}

/* S1 section VI: the joints inside the contact stage. S1 processes each level's articulation constraints
 * after that level's contacts, so that a contact under a jointed body feels what hangs on it or holds
 * it. Here a joint takes part in the contact sweeps (and in shock propagation) as a block of velocity
 * rows, the rows of post-stabilization at the positions now: after the contacts of the levels below
 * and of its own (its level is its higher body's; the world and static bodies are level 0), each joint
 * in turn applies the multipliers dlambda that make its rows' relative velocities their targets,
 *     K dlambda = target - u,   K = G W G^T (the joint's own m x m block),
 * with the multipliers accumulated over the stage: a limit row is one-sided (its accumulated impulse
 * only pushes away from the bound) and a motor row boxed by what is left of max h this step. A row whose
 * accumulated multiplier would leave its bounds is held at the bound and the others solved again (an
 * active set on the block, at most one pass per bounded row). The block solve is the exact velocity
 * projection of the two bodies onto the joint's rows in the mass metric, so it only removes kinetic
 * energy and a sweep can never run away; the relative velocities it leaves (zero across the joint now)
 * are the first-order part of the pre-stabilization that follows shock propagation, which removes the
 * rest (the O(h^2 omega^2) of the bodies' curved paths and any error of the positions now) exactly.
 *
 * In shock propagation a joint whose bodies are at two levels holds the lower one fixed, as the contacts
 * there do, and only the upper one answers (its own part of K, G_X W_X G_X^T), as long as that takes
 * energy from the upper body; if it would give it energy (the upper body yanked along by a fast lower
 * one), both answer, as S1 does throughout ("we remove the infinite inertia aspect of the shock
 * propagation algorithm only when computing the impulses due to articulation"); a joint within one level
 * moves both. Both answering always would let a heavy body welded on a resting one push it into the
 * ground after its ground contact was final; the lower body held always would let a fast lower body
 * (a leg bouncing off a step) pump energy into the upper one. A joint to the world or a static body is
 * exact either way, so a body welded to the world is as fixed as the world for the contacts of the levels
 * above it. joints_contacts_begin builds every active joint's rows and K, K^-1 for the stage. */
void joints_contacts_begin(imp_world *w, const solver_bodies *sb)
{
    const imp_vec3 *v = sb->v, *om = sb->w;
    const imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    js->real_v = sb->v; /* impulses on these velocities are the joints' forces (joint_force.c) */
    jsolve_collect(js, n, im);
    if (js->node_count > js->level_cap) {
        js->level_cap = js->node_count * 3 / 2 + 16;
        js->level_K = ids_grow(js->level_K, BLOCK_DOUBLES * sizeof(double), js->level_cap), js->level_Kinv = ids_grow(js->level_Kinv, BLOCK_DOUBLES * sizeof(double), js->level_cap);
        js->level_acc = ids_grow(js->level_acc, MAX_ROWS * sizeof(double), js->level_cap);
    }
    for (int p = 0; p < js->node_count; p++) {
        row_block *R = &js->rows[p];
        joint_rows_velocity(w, &js->joint[js->nodes[p]], R, n, v, om, Iinv, im, h, true, true);
        double *K = js->level_K + BLOCK_DOUBLES * (size_t)p, *Ki = js->level_Kinv + BLOCK_DOUBLES * (size_t)p;
        for (int r = 0; r < R->m; r++)
            for (int c = 0; c < R->m; c++) K[MAX_ROWS * r + c] = dot6(R->gA[r], R->wA[c]) + dot6(R->gB[r], R->wB[c]);
        memcpy(Ki, K, BLOCK_DOUBLES * sizeof(double));
        for (int r = 0; r < R->m; r++) Ki[MAX_ROWS * r + r] += 1e-10 * fabs(Ki[MAX_ROWS * r + r]) + 1e-300;
        if (!block_invert(Ki, R->m)) R->m = 0, R->dir_valid = false, R->dir_version++; /* no moving side left in any row: nothing to do */
        memset(js->level_acc + MAX_ROWS * (size_t)p, 0, MAX_ROWS * sizeof(double));
    }
}

/* K and K^-1 of the side that answers alone (hold 1: B answers, 2: A): G_X W_X G_X^T; false when that
 * side cannot answer alone */
static bool held_block(const row_block *R, int hold, double *K1, double *K1i)
{
    const double(*g)[6] = hold == 1 ? (const double(*)[6])R->gB : (const double(*)[6])R->gA;
    const double(*wg)[6] = hold == 1 ? (const double(*)[6])R->wB : (const double(*)[6])R->wA;
    const int m = R->m;
    memset(K1, 0, BLOCK_DOUBLES * sizeof(double));
    for (int r = 0; r < m; r++)
        for (int c = 0; c < m; c++) K1[MAX_ROWS * r + c] = dot6(g[r], wg[c]);
    memcpy(K1i, K1, BLOCK_DOUBLES * sizeof(double));
    for (int r = 0; r < m; r++) K1i[MAX_ROWS * r + r] += 1e-10 * fabs(K1i[MAX_ROWS * r + r]) + 1e-300;
    return block_invert(K1i, m);
}

/* the bounded rows (limit, motor) of a block: a row whose accumulated multiplier acc + lam would leave
 * its bounds is held at the bound and the free rows solved again with the held ones' multipliers fixed,
 * K_ff lam_f = rhs_f - K_fh lam_h (at most two passes). False when the free rows' block is singular */
static bool level_bounds(const row_block *R, joint *jt, const double *K, const double *acc, const double *rhs, double *lam)
{
    const int m = R->m;
    bool held[MAX_ROWS] = {false};
    for (int pass = 0; pass < 2; pass++) {
        bool any = false;
        for (int r = 0; r < m; r++) {
            if (held[r] || R->kind[r] == ROW_EQ) continue;
            double t = acc[r] + lam[r];
            if (t >= R->lo[r] && t <= R->hi[r]) continue;
            held[r] = true, any = true;
            lam[r] = (t < R->lo[r] ? R->lo[r] : R->hi[r]) - acc[r];
            if (R->kind[r] == ROW_MOTOR) jt->motor_sat = true;
        }
        if (!any) break;
        int f[MAX_ROWS], nf = 0;
        double D[BLOCK_DOUBLES], b[MAX_ROWS];
        for (int r = 0; r < m; r++)
            if (!held[r]) f[nf++] = r;
        for (int i = 0; i < nf; i++) {
            b[i] = rhs[f[i]];
            for (int c = 0; c < m; c++)
                if (held[c]) b[i] -= K[MAX_ROWS * f[i] + c] * lam[c];
            for (int k = 0; k < nf; k++) D[MAX_ROWS * i + k] = K[MAX_ROWS * f[i] + f[k]];
            D[MAX_ROWS * i + i] += 1e-10 * fabs(D[MAX_ROWS * i + i]) + 1e-300;
        }
        if (nf && !block_invert(D, nf)) return false;
        for (int i = 0; i < nf; i++) {
            double s = 0;
            for (int k = 0; k < nf; k++) s += D[MAX_ROWS * i + k] * b[k];
            lam[f[i]] = s;
        }
    }
    return true;
}

/* The held solve may only take energy from the side that answers: with P = G_X^T lambda,
 * dKE_X = lambda . (G_X V_X) + 1/2 lambda . K_X lambda. True when that side would gain (yanked along by a
 * fast lower body: a ragdoll's torso by a leg bouncing off a step); then both bodies answer, as S1 does */
static bool held_gains_energy(const row_block *R, int hold, const double *K, const double *lam, const double *xa, const double *xb)
{
    const double(*g)[6] = hold == 1 ? (const double(*)[6])R->gB : (const double(*)[6])R->gA;
    const double *xx = hold == 1 ? xb : xa;
    double dke = 0;
    for (int r = 0; r < R->m; r++) {
        double kl = 0;
        for (int c = 0; c < R->m; c++) kl += K[MAX_ROWS * r + c] * lam[c];
        dke += lam[r] * (dot6(g[r], xx) + 0.5 * kl);
    }
    return dke > 0;
}

/* one joint's block of velocity rows (the comment above); hold 1 or 2: side A or B is held (shock
 * propagation: the lower of two levels), K is then the other side's part alone and only it answers */
static void level_solve(struct joint_set *js, int p, imp_vec3 *v, imp_vec3 *om, int n, int hold)
{
    row_block *R = &js->rows[p];
    joint *jt = &js->joint[js->nodes[p]];
    const int m = R->m;
    if (!m) return;
    const imp_vec3 va = v[jt->ia], wa = om[jt->ia], vb = v[jt->ib], wb = om[jt->ib]; /* index n: the world, at rest */
    const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
    double rhs[MAX_ROWS], lam[MAX_ROWS], *acc = js->level_acc + MAX_ROWS * (size_t)p;
    const double *K = js->level_K + BLOCK_DOUBLES * (size_t)p, *Ki = js->level_Kinv + BLOCK_DOUBLES * (size_t)p;
    double K1[BLOCK_DOUBLES], K1i[BLOCK_DOUBLES];
    if (hold) {
        if (!held_block(R, hold, K1, K1i)) { /* the moving side cannot answer alone: both do, as without hold */
            level_solve(js, p, v, om, n, 0);
            return;
        }
        K = K1, Ki = K1i;
    }
    for (int r = 0; r < m; r++) rhs[r] = (R->kind[r] == ROW_MOTOR ? R->motor_speed[r] : 0) - dot6(R->gA[r], xa) - dot6(R->gB[r], xb);
    const bool sat = jt->motor_sat;
    for (int r = 0; r < m; r++) {
        double s = 0;
        for (int c = 0; c < m; c++) s += Ki[MAX_ROWS * r + c] * rhs[c];
        lam[r] = s;
    }
    if (!level_bounds(R, jt, K, acc, rhs, lam)) return;
    for (int r = 0; r < m; r++)
        if (R->kind[r] != ROW_EQ) lam[r] = fmin(fmax(acc[r] + lam[r], R->lo[r]), R->hi[r]) - acc[r];
    if (hold && held_gains_energy(R, hold, K, lam, xa, xb)) {
        jt->motor_sat = sat;
        level_solve(js, p, v, om, n, 0);
        return;
    }
    for (int r = 0; r < m; r++) {
        acc[r] += lam[r];
        if (R->kind[r] == ROW_MOTOR) joint_motor_used(jt, R, r, lam[r]);
    }
    if (!hold) {
        jsolve_apply(js, p, lam, 1, v, om, NULL, NULL, n);
        return;
    }
    const int x = hold == 1 ? jt->ib : jt->ia; /* the side that answers */
    const double(*wg)[6] = hold == 1 ? (const double(*)[6])R->wB : (const double(*)[6])R->wA;
    if (x >= n) return;
    if (v == js->real_v) joint_impulse_add(js, p, lam, 1); /* the joint's force (joint_force.c) */
    for (int r = 0; r < m; r++) {
        v[x] = v3_add(v[x], v3(lam[r] * wg[r][0], lam[r] * wg[r][1], lam[r] * wg[r][2]));
        om[x] = v3_add(om[x], v3(lam[r] * wg[r][3], lam[r] * wg[r][4], lam[r] * wg[r][5]));
    }
}

/* The split impulses' pseudo velocities (impulse.c) with the joints: each joint's equality rows brought
 * to zero relative pseudo velocity on its own block, K_ee dlambda = -u_e (no accumulation: no bounds), so
 * the displacement that pushes a jointed body out of an overlap moves its partners with it; else
 * pre-stabilization takes most of that displacement back, and a jointed body pushed into the ground
 * leaves it only over seconds. Limit and motor rows stay out: they concern the real velocities. */
void joints_split(imp_world *w, solver_bodies *sb)
{
    imp_vec3 *vp = sb->vp, *wp = sb->wp;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    for (int p = 0; p < js->node_count; p++) {
        const row_block *R = &js->rows[p];
        const joint *jt = &js->joint[js->nodes[p]];
        int e[MAX_ROWS], me = 0;
        for (int r = 0; r < R->m; r++)
            if (R->kind[r] == ROW_EQ) e[me++] = r;
        if (!me) continue;
        const imp_vec3 va = vp[jt->ia], wa = wp[jt->ia], vb = vp[jt->ib], wb = wp[jt->ib];
        const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
        const double *K = js->level_K + BLOCK_DOUBLES * (size_t)p;
        double D[BLOCK_DOUBLES], rhs[MAX_ROWS], lam[MAX_ROWS] = {0};
        for (int i = 0; i < me; i++) {
            rhs[i] = -dot6(R->gA[e[i]], xa) - dot6(R->gB[e[i]], xb);
            for (int k = 0; k < me; k++) D[MAX_ROWS * i + k] = K[MAX_ROWS * e[i] + e[k]];
            D[MAX_ROWS * i + i] += 1e-10 * fabs(D[MAX_ROWS * i + i]) + 1e-300;
        }
        if (!block_invert(D, me)) continue;
        for (int i = 0; i < me; i++) {
            double s = 0;
            for (int k = 0; k < me; k++) s += D[MAX_ROWS * i + k] * rhs[k];
            lam[e[i]] = s;
        }
        jsolve_apply(js, p, lam, 1, vp, wp, NULL, NULL, n);
    }
}

/* the joints whose level (their higher body's) is in [lo, hi), each solved on its block (level_solve);
 * shock: a joint across two levels holds the lower body */
void joints_level(imp_world *w, solver_bodies *sb, int lo, int hi, const int *blevel, bool shock)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    js->real_v = sb->v; /* impulses on these velocities are the joints' forces (joint_force.c) */
    for (int p = 0; p < js->node_count; p++) {
        const joint *jt = &js->joint[js->nodes[p]];
        int la = jt->ia < n ? blevel[jt->ia] : 0, lb = jt->ib < n ? blevel[jt->ib] : 0;
        int l = la > lb ? la : lb;
        if (l >= lo && l < hi) level_solve(js, p, v, om, n, shock && la != lb ? (la < lb ? 1 : 2) : 0);
    }
}


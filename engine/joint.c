/* joint.c: articulated rigid bodies in the impulse contact mode, after Weinstein, Teran and Fedkiw
 * (S1). A joint joins body A and body B (or the static world) and keeps a frame in each (S1 section
 * III): an articulation point (la, lb: body frames; world frame when B is the world) and an orientation
 * (fa, fb: the joint frame's axes in the body; x is the joint axis). At creation the two frames
 * coincide; the joint state is A's frame relative to B's, and each type is a projection of that state
 * to the allowed set (S1's black-box joint models):
 *   point      origin common, rotation free        (+ limit: swing of the axis inside a cone)
 *   hinge      origin common, rotation about x     (+ limit: angle about x in [lo, hi])
 *   twist      as hinge (S1 Fig. 9: the axis through the two faces; default A's centre -> B's centre)
 *   rigid      origin common, rotation as created
 *   prismatic  rotation as created, origin on B's x line (+ limit: slide along x in [lo, hi])
 *   planar     origin in B's plane normal to x, rotation about x only (S1's fridge magnet)
 *
 * The step (impulse.c, S1 section VI) calls in:
 *   joints_prepare          which bodies are jointed, their sleeping islands, the pairs that do not touch
 *   joints_post_stabilize   velocities (S1 section V): after collisions, after the velocity update and
 *                           after the position update (these two with the motors)
 *   joints_contacts_begin, joints_level
 *                           the joints inside the contact sweeps and shock propagation, level by level,
 *                           as blocks of velocity rows (see the comment over joints_contacts_begin)
 *   joints_pre_stabilize    positions (S1 section IV, eqs. 4-6): impulses that make the PREDICTED joint
 *                           state (positions after the position update with the velocities as they are)
 *                           allowed, so the joints never drift
 *   joints_positions        the position update of jointed bodies, exactly the prediction:
 *                           x' = x + h v, q' = exp(h omega) q (omega held), then post-stabilization
 *
 * Rows. Every joint is a list of m <= 7 rows (the constrained directions of its type, plus a limit row
 * while the limit is met, plus a motor row). Row r has an impulse direction on each
 * side, the 6-vectors g_A = (d, r_A x d) and g_B = -(d, r_B x d) of a linear impulse along d at the
 * midpoint of the two articulation points now (S1: lever arms r = midpoint - x), or g = +-(0, d) of an
 * angular impulse. A multiplier lambda_r changes the velocities (v, omega) of side X by W_X g_X lambda_r,
 * W = diag(1/M, I^-1).
 *
 * Post-stabilization (velocities, S1 section V) solves K lambda = -(u - target), u_r = g_A.V_A + g_B.V_B
 * the relative velocity of row r, K = J W J^T (symmetric: the rows are their own impulse directions, S0's
 * collision matrix for a point joint). Limit rows are one-sided (only velocity that moves further past
 * the limit is removed: lambda >= 0 at lo, <= 0 at hi) and motor rows boxed by what is left of max h in
 * this step (motor_used: the motor's impulses of all the stages of a step stay within |.| <= max h): a row
 * whose multiplier leaves its bounds is fixed at the bound and the rest solved again (an active set).
 * Each linear solve is checked (post_solve).
 *
 * Pre-stabilization (positions, S1 section IV). The predicted articulation point of side X is
 *     p'_X = x_X + h v_X + c'_X,   c'_X = R(h omega_X) c_X,   c_X = R(q_X) l_X (its offset now)
 * and its predicted frame F'_X = exp(h omega_X) q_X f_X. A row's residual f_r(lambda) is the predicted
 * joint error in its direction; Newton on all rows: (dF/dlambda) dlambda = -F with dF/dlambda = C W G,
 * C the derivative of the residual with respect to each side's (v, omega). By S1's appendix, a change
 * d omega turns the predicted rotation by dtheta = h J_l(h omega) d omega, J_l the left Jacobian of SO(3)
 * (predict_rotation, below), and d(R c) = dtheta x c', so
 *     point row t.(p'_A - p'_B):   C_A = ( h t,  (h J_l,A)^T (c'_A x t) ),   C_B = -( h t, (h J_l,B)^T (c'_B x t) )
 * (a direction t' fixed in B, prismatic and planar, adds g.(dtheta_B x t') = dtheta_B.(t' x g), g the
 * predicted gap); an orientation row with de = rho_A.dtheta_A + rho_B.dtheta_B has C_X = (0, (h J_l,X)^T rho_X):
 *     hinge/twist/planar, e = t.(a'_A x a'_B) (S1 eq. 6, in the plane normal to the axis):
 *         rho_A = a'_A x (a'_B x t),   rho_B = a'_B x (t x a'_A)
 *     rigid/prismatic, e = 2 sgn(w) vec(q_e), q_e = F'_A conj(F'_B) = (w, v), one hemisphere (GUIDE trap 8):
 *         rho_A = sgn(w) (w e_i + v x e_i),   rho_B = -sgn(w) (w e_i - v x e_i)
 *     hinge angle theta = 2 atan2(x, w) of conj(F'_B) F'_A (unwrapped):  rho_A = b, rho_B = -b
 *         (b B's predicted axis: theta dot = b.(omega_A - omega_B))
 *     point swing phi = angle(a'_A, a'_B), n = a'_A x a'_B / |.|:        rho_A = -n, rho_B = n
 * A limit is part of the projection: when the predicted coordinate is past [lo, hi] its row drives it
 * to the bound; once met at any prediction of the stage the row stays to its end (pre_side), and a limit
 * the Newton carried past joins it after it converged and the Newton goes on (at most 3 rounds). A motor
 * that was not clamped in this step's velocity stages, with no limit row active, is a row too: the
 * predicted coordinate (hinge angle theta as above, rho_A = b, rho_B = -b; slide t.g' along B's axis) is
 * the one now plus h speed, so the position update moves the joint at the motor's speed exactly (without
 * it the corrections of a loop changed a motored crank's rate by up to 2 % in the position update). The
 * solve, in order:
 *   1. S1's sweeps: each joint's own Newton (its m x m block alone) in turn, the tolerance tightening
 *      from 1e-4 across sweeps; kept only if they lower |F| over all joints. One sweep runs when the
 *      joints close a loop (through bodies or the world; joints_prepare finds them), and not on open
 *      chains and trees (PRE_SWEEPS 0; 1 runs it always): measured, on the 50-link chain at 1/60 the
 *      sweep saved 0.08 global iterations a step and cost 8 % of the step, while without it the net
 *      scene's fastest body went from 7.4 to 11.5 m/s and blew up under a change of rounding.
 *   2. The global Newton on every row at once by the sparse solve below (Levenberg-Marquardt damping
 *      K + mu diag K only when a factorization fails) and a backtracking line search on |F|^2: never
 *      worse than its start. Converges in 2-4 iterations to 1e-9 (m, rad) in ordinary steps.
 *   3. When it stalls (S1's impulse directions G are fixed at time n, and on a long taut chain whipping
 *      at a coarse step the predicted constraints can be out of their reach: measured, a 50-link chain
 *      at dt 1/60), and it is handed over at the first sign (a rejected or shortened step, or one that
 *      keeps more than STALL_RATIO of the residual), the fallback (project, below): Newton whose
 *      directions are the constraint normals at each iterate (Gauss-Newton, the smallest correction in
 *      the mass metric each iteration), quadratic where a solution exists; and if a joint was already
 *      broken open, a continuation that closes part of the gap now and the rest in the next steps. Its
 *      impulses are not a pair through one point, so a step it solves does not keep angular momentum
 *      exactly (measured: a free 20-link chain whipped in 3D at 1/60, fallback in nearly every step,
 *      lost 15 % of its angular momentum over 600 steps; linear momentum is kept). S1's directions
 *      rebuilt at the prediction (one point per joint, momentum kept) were tried as the fallback: they
 *      stall too (that chain blew up at step 223, the articulated net at step 81).
 * The sparse solve. K has one block per joint (m x m) and a block K_kl = sum_X C_kX W_X G_lX for joints k,
 * l that share a moving body X. Block Gaussian elimination in a minimum-degree order of this joint graph
 * (Baraff 1996, "Linear-time dynamics using Lagrange multipliers": a chain or tree, leaves first, makes
 * no fill and costs O(joints)); a loop (four-bar, net) fills in only the cliques its eliminations make.
 * The order and fill are found once per joint topology (a greedy minimum-degree pass, O(joints^2), the
 * only allocation, when joints or their bodies change) and kept. Diagonal blocks are inverted densely
 * (Gauss-Jordan with partial pivoting); a tiny relative shift keeps redundant rows (a planar loop of
 * hinges) solvable in the least-squares sense.
 * Hubs. The k joints of one body are a clique of this graph, O(k^3) a solve (100 pendulums on one hub:
 * 18 ms a step). A body with HUB_MIN or more joints is therefore a node of its own (Baraff's body-and-joint
 * graph, for that body alone): its unknown is its velocity change u = W_X sum_k G_kX^T lambda_k, its row
 *     u - W_X sum_k G_kX^T lambda_k = 0        (an identity block, and -(W G)^T blocks to its joints),
 * and each of its joints reads C_kX u instead of blocks with the others. Eliminated in this order: the
 * joints with a moving side that is no hub (their blocks without the hub's part are invertible; the
 * spokes of a star are leaves), then the hubs, then the joints whose moving sides are all hubs (a hub's
 * joint to the world, or between two hubs), whose blocks the hubs' eliminations complete. The same
 * lambda as the dense blocks (measured: two joined hubs of 10 spokes each tumbling for 600 steps agree
 * with their dense solve to 7 digits); 100 pendulums on a hub 0.18 ms a step, 300 0.6 ms.
 *
 * Quaternions (GUIDE trap 8): exp(theta/2) uses sin(t/2)/t with its series near t = 0, J_l its series,
 * and a new q is kept in the hemisphere of the old one. No allocation per step otherwise: tables grow
 * and are kept. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "dense.h"
#include "ids.h"
#include "imp_math.h"
#include "joint.h"
#include "solver_bodies.h"
#include "world_parts.h"

#define MAXR 7            /* rows per joint: a hinge, twist or slider at its limit with a motor has 7 */
#define BS (MAXR * MAXR)  /* a block's storage (row stride MAXR) */
#ifndef PRE_SWEEPS
#define PRE_SWEEPS 0      /* S1's per-joint sweeps before the global solve (header, step 1) */
#endif
#ifndef SWEEP_ITERS
#define SWEEP_ITERS 1
#endif
#define NEWTON_ITERS 16
#define FINAL_TOL 1e-9    /* m, and rad */
#define LIMIT_SLOP 1e-7   /* a coordinate this close to its bound is at the limit (post-stabilization) */
#define LIMIT_REACH 0.25  /* rad or m: a limit far from the coordinate now is approached by this much a step */
#define ACTIVE_PASSES 6
#define STALL_RATIO 0.1   /* a global Newton step that leaves more than this of the residual stalls */
#define HUB_MIN 8         /* a body with this many joints is a node of the sparse solve (the header) */

typedef struct joint {
    imp_joint_type type;
    imp_id a, b;            /* b null: the static world                                  */
    imp_vec3 la, lb;        /* articulation point in A's frame, in B's (or the world's)  */
    imp_quat fa, fb;        /* the joint frame (x = axis) in A's frame, in B's            */
    bool has_limits, has_motor, woke;
    double lo, hi;          /* hinge/twist rad, prismatic m; point: hi = swing half angle */
    double speed, max;      /* motor                                                     */
    double angle;           /* hinge/twist: the unwrapped angle at the end of the last step */
    double motor_used;      /* the motor's impulse so far in this step (|.| <= max h over the step) */
    bool motor_sat;         /* the motor ran out of max h in this step's velocity stages          */
    int pre_side;           /* pre-stabilization: the limit met in this step (+1 lo, -1 hi, 0 none) */
    double pre_bound;       /* ... and its bound: a limit once met stays a row for the stage     */
    int ia, ib;             /* dense body indices of this step; the world is n           */
} joint;

static bool limits_ok(imp_joint_type t, double lo, double hi);
/* a motor: |speed| <= IMP_JOINT_MAX_COORD (rad/s or m/s), 0 <= max <= IMP_JOINT_MAX_FORCE */
static bool motor_ok(double speed, double max) { return fabs(speed) <= IMP_JOINT_MAX_COORD && max >= 0 && max <= IMP_JOINT_MAX_FORCE; }

/* a side of a joint: now (x, body rotation q, offset c, frame F) and predicted */
typedef struct jside {
    int i;                  /* dense body, n for the world */
    bool dyn;               /* moves (inverse mass > 0)    */
    imp_vec3 x, c, p;       /* centre, offset, articulation point (now)         */
    imp_quat F, q;          /* frame now (world; unset for a plain ball joint), body orientation now */
    imp_vec3 c1, p1;        /* predicted offset and point                       */
    imp_quat F1;            /* predicted frame (unset for a plain ball joint)   */
    imp_mat3 HL;            /* h J_l(h omega): d omega -> dtheta of the prediction */
} jside;

/* the rows of one active joint in one stage */
typedef struct jrows {
    int m;
    int kind[MAXR];                  /* ROW_* */
    double f[MAXR];                  /* residual (pre) or right-hand side -(u - target) (post) */
    double gA[MAXR][6], gB[MAXR][6]; /* impulse per unit multiplier on A, B: (linear, angular)   */
    double wA[MAXR][6], wB[MAXR][6]; /* W g: the velocity change per unit multiplier             */
    double cA[MAXR][6], cB[MAXR][6]; /* d row / d (v, omega) of A, B                             */
    double lo[MAXR], hi[MAXR];       /* post: multiplier bounds                                  */
    double lim_target;               /* pre: the bound a limit row drives its coordinate to      */
    double mot_target;               /* pre: the coordinate a motor row drives it to (now + h speed) */
    bool ang[MAXR];                  /* an angular row                                           */
    double e0[MAXR];                 /* pre: the row's error now (the prediction with h = 0)      */
    bool fixed[MAXR];                /* post: held at a bound by the active set                  */
    jside sA, sB;                    /* the two sides now (kept through a stage)                 */
    bool dpend;                      /* pre: C not yet built for f (a plain point's trial; deriv_all) */
    bool axes;                       /* rows 0-2 are linear along x, y, z (the cw_axes kernel)      */
} jrows;

enum { ROW_EQ, ROW_LIMIT, ROW_MOTOR };

struct joint_set {
    idtable ids;
    joint *j;
    int cap;
    uint8_t *jointed;
    int body_cap;
    uint64_t *pairs; /* sorted (lo << 32 | hi) dense body pairs joined this step: no contact between them */
    int npairs, pair_cap;
    int *uf;         /* body union-find of the joint islands (sleeping) */
    int *lf;         /* body union-find with everything that does not move as one node: closed loops */
    bool loops;      /* the joints close a loop (through bodies or the world): S1's sweeps run    */
    bool sound;      /* post: K is positive definite by construction (no check of the solve)      */
    /* the solver: active joints (nodes 0 .. nn-1; hub bodies are nodes nn .. nt-1), their rows, the
     * elimination structure */
    int *nodes, nn;
    jrows *rows;
    imp_vec3 *sv, *sw;                     /* saved velocities (best state of the Newton solve) */
    int *bstart, *bjoint;                  /* body -> incident nodes (CSR)                    */
    int *tends, tn;                        /* the moving ends the structure below was built for */
    int *order, *pos, *ustart, *unb;       /* elimination order, position; U(p) lists (CSR)  */
    int nh, nt, tcap;                      /* hub nodes (bodies, after the nn joints), all nodes, capacity */
    int *hubn, *msz;                       /* body -> its hub node (-1: none), node sizes (assemble) */
    int ucap;
    double *Dinv, *bU, *bL, *rhs, *sol;    /* blocks: per node BS; per U entry BS each; MAXR per node */
    int *adjn;                             /* fill cursors                                    */
    imp_vec3 *pv, *pw;                     /* predicted velocities v + v_p, omega + omega_p    */
    imp_vec3 *tv, *tw;                     /* the projection's iterate                          */
    double cache_h;                        /* the step of the cached predictions                */
    int bcap, ncap, scap;                  /* capacities: bodies, joint nodes, U entries (tcap: all nodes) */
    imp_mat3 *bR1;                         /* the predicted rotation as a matrix (with bq1)       */
    imp_quat *bq1; imp_mat3 *bHL;          /* per-body predictions, valid while the body's velocity is unchanged: */
    unsigned *bver, *bseen, *bepoch, epoch; /* bseen == bver and bepoch == epoch                                  */
    double pre_h;                          /* pre-stabilization ran this step with this h (pv, pw valid) */
    double keep;                           /* pre: the fraction of the error now left as the target (0: S1) */
    bool trial;                            /* pre: a line search's trial (eval_trial): plain points defer C */
    double *rhs0;                          /* post: the right-hand side kept for the check of the solve */
    /* post-stabilization's factors of K kept for the next post-stabilization while its rows are the same */
    double *ksnap; int ksnap_cap;          /* per node: m, then G and W g of its rows              */
    unsigned sgen, ksgen;                  /* structure generation now / of the kept factors      */
    bool kvalid;                           /* Dinv, bU, bL hold the factors of the kept rows      */
    double kmu;                            /* ... factored with this shift (post_solve)           */
    imp_quat *bqraw, *bqn; imp_mat3 *bR;   /* per body: state quaternion seen, normalized, as a matrix */
    double *vK, *vKi, *vacc; int vcap;     /* the contact stage's velocity rows: K, K^-1 per node, accumulated multipliers */
};

/* grow p to hold need elements of size elem when *cap is short (no allocation in a steady step) */
static void *cgrow(void *p, size_t elem, int *cap, int need)
{
    if (need <= *cap) return p;
    *cap = need * 3 / 2 + 16;
    return ids_grow(p, elem, *cap);
}

void joints_free(imp_world *w)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    ids_free(&js->ids);
    free(js->j), free(js->jointed), free(js->pairs), free(js->uf), free(js->lf), free(js->nodes), free(js->rows), free(js->sv), free(js->sw);
    free(js->bstart), free(js->bjoint), free(js->tends), free(js->order), free(js->pos), free(js->ustart), free(js->unb);
    free(js->Dinv), free(js->bU), free(js->bL), free(js->rhs), free(js->sol), free(js->adjn), free(js->pv), free(js->pw), free(js->tv), free(js->tw), free(js->bq1), free(js->bHL), free(js->bver), free(js->bseen), free(js->bepoch), free(js->ksnap), free(js->bqraw), free(js->bR1), free(js->bqn), free(js->bR), free(js->hubn), free(js->msz);
    free(js->vK), free(js->vKi), free(js->vacc), free(js->rhs0);
    free(js);
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

static imp_quat quat_of(const double *X) { return quat_normalize(quat(X[3], X[4], X[5], X[6])); }

/* a unit quaternion whose rotation takes x to the unit vector a */
static imp_quat frame_from_axis(imp_vec3 a)
{
    imp_vec3 t1, t2;
    v3_basis(a, &t1, &t2);
    imp_vec3 y = v3_scale(t1, -1), z = v3_scale(t2, -1);
    imp_mat3 m = {{{a.x, y.x, z.x}, {a.y, y.y, z.y}, {a.z, y.z, z.z}}};
    return quat_normalize(quat_from_m3(m));
}

static void wake(imp_world *w, imp_id id)
{
    int k = imp_id_is_null(id) ? -1 : ids_lookup(&w->bodies->ids, id);
    if (k >= 0 && w->bodies->body[k].motion == IMP_DYNAMIC) w->bodies->body[k].asleep = 0, w->bodies->body[k].sleep_time = 0;
}

static joint *jget(const imp_world *w, imp_id id)
{
    if (!w->joints) return NULL;
    int k = ids_lookup(&w->joints->ids, id);
    return k < 0 ? NULL : &w->joints->j[k];
}

imp_id imp_joint_create(imp_world *w, const imp_joint_def *d)
{
    imp_id none = {0, 0};
    int ka = ids_lookup(&w->bodies->ids, d->a);
    int kb = imp_id_is_null(d->b) ? -1 : ids_lookup(&w->bodies->ids, d->b);
    if (ka < 0 || (!imp_id_is_null(d->b) && kb < 0) || ka == kb) return none;
    if ((int)d->type < 0 || d->type > IMP_JOINT_PLANAR) return none;
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
    if (d->has_limits && !limits_ok(d->type, d->lo, d->hi)) return none;
    if (d->has_motor && !motor_ok(d->speed, d->max)) return none;
    axis = v3_normalize(axis);
    struct joint_set *js = jset(w);
    imp_id id = ids_alloc(&js->ids);
    if (js->ids.count > js->cap) {
        js->cap = js->ids.count * 2 + 8;
        js->j = ids_grow(js->j, sizeof(joint), js->cap);
    }
    joint *jt = &js->j[js->ids.count - 1];
    memset(jt, 0, sizeof *jt);
    jt->type = d->type, jt->a = d->a, jt->b = d->b;
    imp_quat F = frame_from_axis(axis);
    imp_quat qa = quat_of(XA);
    jt->la = quat_rotate(quat_conj(qa), v3_sub(d->anchor, v3_load(XA)));
    jt->fa = quat_normalize(quat_mul(quat_conj(qa), F));
    if (XB) {
        imp_quat qb = quat_of(XB);
        jt->lb = quat_rotate(quat_conj(qb), v3_sub(d->anchor, v3_load(XB)));
        jt->fb = quat_normalize(quat_mul(quat_conj(qb), F));
    } else {
        jt->lb = d->anchor, jt->fb = F;
    }
    jt->has_limits = d->has_limits, jt->lo = d->lo, jt->hi = d->hi;
    jt->has_motor = d->has_motor, jt->speed = d->speed, jt->max = d->max;
    wake(w, d->a), wake(w, d->b);
    return id;
}

bool imp_joint_valid(const imp_world *w, imp_id id) { return jget(w, id) != NULL; }

void imp_joint_destroy(imp_world *w, imp_id id)
{
    struct joint_set *js = w->joints;
    if (!js) return;
    joint *jt = jget(w, id);
    if (!jt) return;
    wake(w, jt->a), wake(w, jt->b); /* the partners feel the joint go */
    int d = ids_remove(&js->ids, id);
    if (d < 0) return;
    js->j[d] = js->j[js->ids.count];
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
    joint *p = jget(w, id);
    if (!p) return false;
    joint jt = *p;
    return joint_bodies(w, &jt, w->bodies->ids.count);
}

imp_joint_type imp_joint_kind(const imp_world *w, imp_id id)
{
    joint *p = jget(w, id);
    return p ? p->type : IMP_JOINT_POINT;
}

bool imp_joint_ends(const imp_world *w, imp_id id, imp_id *a, imp_id *b)
{
    joint *p = jget(w, id);
    if (!p) return false;
    *a = p->a, *b = p->b;
    return true;
}

/* ---- geometry ------------------------------------------------------------------------------------ */

/* S1's appendix derivative of the rotation: with R' = exp(theta) R (theta = h omega), a change dtheta of
 * theta turns R' by J_l(theta) dtheta, the left Jacobian of SO(3):
 *     J_l = 1 + (1 - cos t) / t^2 [theta]x + (t - sin t) / t^3 [theta]x^2,   t = |theta|
 * (series 1/2 - t^2/24 and 1/6 - t^2/120 as t -> 0, robust as |omega| -> 0), so d(R' c) = (J_l dtheta) x R' c.
 * predict_rotation returns the predicted rotation q1 = exp(h omega) q (in q's hemisphere) and
 * HL = h J_l(h omega) together: one sincos of the half angle serves both (sin t = 2 s c,
 * 1 - cos t = 2 s^2; exp(theta/2) = (c, s theta / t)). */
static void predict_rotation(imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL)
{
    imp_vec3 th = v3_scale(om, h);
    double t = v3_len(th), t2 = t * t, ex, c1, c2, cw;
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

static imp_vec3 qaxis(imp_quat F, int k) { return quat_rotate(F, v3(k == 0, k == 1, k == 2)); }

/* side X of a joint now (its frame F only with frame: a plain ball joint needs no axes) */
static void side_eval(const imp_world *w, int i, int n, imp_vec3 l, imp_quat f, const double *im, bool frame, jside *s)
{
    s->i = i;
    if (i >= n) {
        s->dyn = false, s->x = v3(0, 0, 0), s->c = s->c1 = s->p = s->p1 = l, s->F = s->F1 = f, s->q = quat_identity();
        s->HL = (imp_mat3){{{0}}};
        return;
    }
    s->dyn = im && im[i] > 0;
    const double *X = w->bodies->state + BODY_DIM * i;
    struct joint_set *js = w->joints;
    imp_mat3 Rq;
    if (js && js->bcap > i) { /* the body's normalized rotation, kept while its state quaternion is the same */
        if (memcmp(&js->bqraw[i], X + 3, sizeof(imp_quat))) {
            memcpy(&js->bqraw[i], X + 3, sizeof(imp_quat));
            js->bqn[i] = quat_of(X), js->bR[i] = quat_to_m3(js->bqn[i]);
        }
        s->q = js->bqn[i], Rq = js->bR[i];
    } else {
        s->q = quat_of(X), Rq = quat_to_m3(s->q);
    }
    s->x = v3_load(X), s->c = m3_mul_v(Rq, l), s->p = v3_add(s->x, s->c);
    if (frame) s->F = quat_mul(s->q, f);
}

/* the prediction of a side whose state now (x, q) is in s (its frame F1 only with frame) */
static void side_pred(const imp_world *w, imp_vec3 l, imp_quat f, const imp_vec3 *v, const imp_vec3 *om, double h, bool frame, jside *s)
{
    const int i = s->i;
    if (i >= w->bodies->ids.count) return; /* the world: set by side_eval */
    struct joint_set *js = w->joints;
    imp_quat q1;
    imp_mat3 R1;
    bool cache = js->bcap > i && h == js->cache_h && v == js->pv; /* pre-stabilization's predictions */
    if (cache && js->bepoch[i] == js->epoch && js->bseen[i] == js->bver[i]) { /* shared by the body's joints */
        q1 = js->bq1[i], s->HL = js->bHL[i], R1 = js->bR1[i];
    } else {
        predict_rotation(s->q, om[i], h, &q1, &s->HL);
        if (!s->dyn) s->HL = (imp_mat3){{{0}}};
        R1 = quat_to_m3(q1);
        if (cache) js->bq1[i] = q1, js->bHL[i] = s->HL, js->bR1[i] = R1, js->bseen[i] = js->bver[i], js->bepoch[i] = js->epoch;
    }
    s->c1 = m3_mul_v(R1, l), s->p1 = v3_add(v3_add(s->x, v3_scale(v[i], h)), s->c1);
    if (frame) s->F1 = quat_mul(q1, f);
}

/* the hinge angle of frame A relative to frame B about x, unwrapped to the turn nearest `near` */
static double rel_angle(imp_quat FA, imp_quat FB, double near)
{
    imp_quat r = quat_mul(quat_conj(FB), FA);
    double a = 2 * atan2(r.x, r.w);
    double k = floor((near - a) / (2 * M_PI) + 0.5);
    return a + 2 * M_PI * k;
}

/* the orientation error quaternion F_A conj(F_B) in the hemisphere w >= 0 */
static imp_quat qerr(imp_quat FA, imp_quat FB)
{
    imp_quat e = quat_mul(FA, quat_conj(FB));
    return e.w < 0 ? quat(-e.w, -e.x, -e.y, -e.z) : e;
}

static bool has_coordinate(imp_joint_type t) { return t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST || t == IMP_JOINT_PRISMATIC; }
static bool angular_free(imp_joint_type t) { return t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST; }

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
static double limit_coord(const joint *jt, imp_joint_type ty, imp_quat FA, imp_quat FB, imp_vec3 pA, imp_vec3 pB)
{
    if (angular_free(ty)) return rel_angle(FA, FB, jt->angle);
    if (ty == IMP_JOINT_PRISMATIC) return v3_dot(v3_sub(pA, pB), qaxis(FB, 0));
    imp_vec3 a1 = qaxis(FA, 0), b1 = qaxis(FB, 0);
    return atan2(v3_len(v3_cross(a1, b1)), v3_dot(a1, b1));
}

/* joint errors now (see impetus.h) */
static void errors_now(const imp_world *w, const joint *jt, int n, double *gap, double *ax)
{
    jside A, B;
    side_eval(w, jt->ia, n, jt->la, jt->fa, NULL, true, &A);
    side_eval(w, jt->ib, n, jt->lb, jt->fb, NULL, true, &B);
    imp_vec3 g = v3_sub(A.p, B.p), e = qaxis(B.F, 0);
    switch (jt->type) {
    case IMP_JOINT_PRISMATIC: *gap = v3_len(v3_sub(g, v3_scale(e, v3_dot(g, e)))); break;
    case IMP_JOINT_PLANAR: *gap = fabs(v3_dot(g, e)); break;
    default: *gap = v3_len(g);
    }
    if (jt->type == IMP_JOINT_RIGID || jt->type == IMP_JOINT_PRISMATIC) {
        imp_quat q = qerr(A.F, B.F);
        *ax = 2 * atan2(sqrt(q.x * q.x + q.y * q.y + q.z * q.z), q.w);
    } else if (jt->type == IMP_JOINT_POINT) {
        *ax = 0;
    } else {
        *ax = v3_len(v3_cross(qaxis(A.F, 0), e));
    }
}

int imp_joint_hub_count(const imp_world *w) { return w->joints && w->joints->ids.count ? w->joints->nh : 0; }

int imp_joint_errors(const imp_world *w, imp_id id, double *gap, double *axis_error)
{
    joint *p = jget(w, id);
    if (!p) return 0;
    joint jt = *p;
    if (!joint_bodies(w, &jt, w->bodies->ids.count)) return 0;
    errors_now(w, &jt, w->bodies->ids.count, gap, axis_error);
    return 1;
}

static imp_vec3 body_v(const imp_world *w, int i, int n)
{
    if (i >= n) return v3(0, 0, 0);
    return v3_scale(v3_load(w->bodies->state + BODY_DIM * i + 7), w->bodies->body[i].inv_mass);
}

static imp_vec3 body_w(const imp_world *w, int i, int n)
{
    if (i >= n) return v3(0, 0, 0);
    const double *X = w->bodies->state + BODY_DIM * i;
    return m3_mul_v(m3_rotate_tensor(quat_to_m3(quat_of(X)), w->bodies->body[i].Ibody_inv), v3_load(X + 10));
}

int imp_joint_coordinate(const imp_world *w, imp_id id, double *value, double *speed)
{
    joint *p = jget(w, id);
    if (!p || !has_coordinate(p->type)) return 0;
    joint jt = *p;
    const int n = w->bodies->ids.count;
    if (!joint_bodies(w, &jt, n)) return 0;
    jside A, B;
    side_eval(w, jt.ia, n, jt.la, jt.fa, NULL, true, &A);
    side_eval(w, jt.ib, n, jt.lb, jt.fb, NULL, true, &B);
    imp_vec3 e = qaxis(B.F, 0);
    imp_vec3 va = body_v(w, jt.ia, n), wa = body_w(w, jt.ia, n), vb = body_v(w, jt.ib, n), wb = body_w(w, jt.ib, n);
    if (angular_free(jt.type)) {
        *value = rel_angle(A.F, B.F, jt.angle);
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
    joint *p = jget(w, id);
    if (!p) return;
    if (on && !limits_ok(p->type, lo, hi)) return;
    p->has_limits = on, p->lo = lo, p->hi = hi;
    wake(w, p->a), wake(w, p->b);
}

bool imp_joint_limits(const imp_world *w, imp_id id, double *lo, double *hi)
{
    joint *p = jget(w, id);
    if (!p || !p->has_limits) return false;
    *lo = p->lo, *hi = p->hi;
    return true;
}

void imp_joint_set_motor(imp_world *w, imp_id id, bool on, double speed, double max)
{
    joint *p = jget(w, id);
    if (!p) return;
    if (on && !motor_ok(speed, max)) return;
    p->has_motor = on, p->speed = speed, p->max = max;
    wake(w, p->a), wake(w, p->b);
}

bool imp_joint_motor(const imp_world *w, imp_id id, double *speed, double *max)
{
    joint *p = jget(w, id);
    if (!p || !p->has_motor) return false;
    *speed = p->speed, *max = p->max;
    return true;
}

/* fmax(a, b) for a that is not NaN (a NaN b leaves a, as fmax does), inlined in the residual loops */
static inline double fmax_num(double a, double b) { return b > a ? b : a; }

/* ---- rows ----------------------------------------------------------------------------------------- */

/* the impulse directions of the rows (now): linear d at the midpoint, or angular d */
static void row_lin(jrows *R, int r, imp_vec3 d, imp_vec3 ra, imp_vec3 rb)
{
    imp_vec3 ta = v3_cross(ra, d), tb = v3_cross(rb, d);
    double *a = R->gA[r], *b = R->gB[r];
    a[0] = d.x, a[1] = d.y, a[2] = d.z, a[3] = ta.x, a[4] = ta.y, a[5] = ta.z;
    R->ang[r] = false;
    b[0] = -d.x, b[1] = -d.y, b[2] = -d.z, b[3] = -tb.x, b[4] = -tb.y, b[5] = -tb.z;
}

static void row_ang(jrows *R, int r, imp_vec3 d)
{
    double *a = R->gA[r], *b = R->gB[r];
    a[0] = a[1] = a[2] = 0, a[3] = d.x, a[4] = d.y, a[5] = d.z;
    R->ang[r] = true;
    b[0] = b[1] = b[2] = 0, b[3] = -d.x, b[4] = -d.y, b[5] = -d.z;
}

static void set6(double *o, imp_vec3 l, imp_vec3 a) { o[0] = l.x, o[1] = l.y, o[2] = l.z, o[3] = a.x, o[4] = a.y, o[5] = a.z; }

/* derivative of a predicted point row t.(p'_A - p'_B) (t fixed) into C; tb: t is B's, g the predicted gap */
static void deriv_point(jrows *R, int r, imp_vec3 t, const jside *A, const jside *B, bool tb, imp_vec3 g, double h)
{
    set6(R->cA[r], v3_scale(t, h), m3_mul_tv(A->HL, v3_cross(A->c1, t)));
    imp_vec3 angb = v3_scale(m3_mul_tv(B->HL, v3_cross(B->c1, t)), -1);
    if (tb) angb = v3_add(angb, m3_mul_tv(B->HL, v3_cross(t, g)));
    set6(R->cB[r], v3_scale(t, -h), angb);
}

static void deriv_ang(jrows *R, int r, imp_vec3 rho_a, imp_vec3 rho_b, const jside *A, const jside *B)
{
    set6(R->cA[r], v3(0, 0, 0), m3_mul_tv(A->HL, rho_a));
    set6(R->cB[r], v3(0, 0, 0), m3_mul_tv(B->HL, rho_b));
}

/* Build the rows of joint jt.
 *   pre:  residuals f and derivatives C at the prediction from (v, om); with `first` also the impulse
 *         directions G and which limit rows are active (kept through the Newton iteration)
 *   post: impulse directions G, bounds, and f = target - u at velocities (v, om); motor rows if `motor` */
static void rows_build(const imp_world *w, joint *jt, jrows *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                       const imp_mat3 *Iinv, const double *im, double h, bool pre, bool first, bool motor)
{
    jside *A = &R->sA, *B = &R->sB; /* the state now, kept in R for the later builds of the same stage */
    const imp_joint_type ty = jt->type;
    const bool frames = ty != IMP_JOINT_POINT || jt->has_limits; /* a plain ball joint needs no axes */
    if (first || !pre) {
        side_eval(w, jt->ia, n, jt->la, jt->fa, im, frames, A);
        side_eval(w, jt->ib, n, jt->lb, jt->fb, im, frames, B);
    }
    if (pre) side_pred(w, jt->la, jt->fa, v, om, h, frames, A), side_pred(w, jt->lb, jt->fb, v, om, h, frames, B);
    if (first) {
        /* impulse directions, now */
        imp_vec3 mid = v3_scale(v3_add(A->p, B->p), 0.5);
        imp_vec3 ra = v3_sub(mid, A->x), rb = v3_sub(mid, B->x);
        imp_vec3 aa = frames ? qaxis(A->F, 0) : v3(0, 0, 0), eb = frames ? qaxis(B->F, 0) : v3(0, 0, 0);
        int m = 0;
        if (ty == IMP_JOINT_PRISMATIC) {
            row_lin(R, m++, qaxis(B->F, 1), ra, rb), row_lin(R, m++, qaxis(B->F, 2), ra, rb);
        } else if (ty == IMP_JOINT_PLANAR) {
            row_lin(R, m++, eb, ra, rb);
        } else {
            for (int c = 0; c < 3; c++) row_lin(R, m++, v3(c == 0, c == 1, c == 2), ra, rb);
        }
        R->axes = ty != IMP_JOINT_PRISMATIC && ty != IMP_JOINT_PLANAR;
        if (ty == IMP_JOINT_HINGE || ty == IMP_JOINT_TWIST || ty == IMP_JOINT_PLANAR) {
            imp_vec3 t1, t2;
            v3_basis(aa, &t1, &t2);
            row_ang(R, m++, t1), row_ang(R, m++, t2);
        } else if (ty == IMP_JOINT_RIGID || ty == IMP_JOINT_PRISMATIC) {
            for (int c = 0; c < 3; c++) row_ang(R, m++, v3(c == 0, c == 1, c == 2));
        }
        for (int r = 0; r < m; r++) R->kind[r] = ROW_EQ, R->lo[r] = -INFINITY, R->hi[r] = INFINITY;
        /* the limit row: active in pre-stabilization when the prediction is past a bound, in
         * post-stabilization when the coordinate now is at a bound */
        if (jt->has_limits && (angular_free(ty) || ty == IMP_JOINT_PRISMATIC || ty == IMP_JOINT_POINT)) {
            double bound = 0, side = 0;
            const double x = pre ? limit_coord(jt, ty, A->F1, B->F1, A->p1, B->p1) : limit_coord(jt, ty, A->F, B->F, A->p, B->p);
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
            if (side != 0 && v3_len(dir) > 0) {
                if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, dir, ra, rb);
                else row_ang(R, m, dir);
                R->kind[m] = ROW_LIMIT;
                R->lo[m] = side > 0 ? 0 : -INFINITY, R->hi[m] = side > 0 ? INFINITY : 0;
                /* a bound far from the coordinate now (limits set away from the pose) is approached by at
                 * most LIMIT_REACH a step: exp(h omega) cannot turn more than pi in one step */
                const double now = pre ? limit_coord(jt, ty, A->F, B->F, A->p, B->p) : x;
                R->lim_target = fmin(fmax(bound, now - LIMIT_REACH), now + LIMIT_REACH);
                m++;
            }
        }
        /* the motor in pre-stabilization: while it has torque to spare (it was not clamped in the
         * velocity stages) and no limit row is active, the predicted coordinate is the one now plus
         * h speed, so the position update turns the joint at the motor's speed exactly, whatever the
         * curvature of the other joints' paths asks of the velocities */
        if (pre && jt->has_motor && !jt->motor_sat && has_coordinate(ty) && m < MAXR && (m == 0 || R->kind[m - 1] != ROW_LIMIT)) {
            if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, eb, ra, rb), R->mot_target = v3_dot(v3_sub(A->p, B->p), eb);
            else row_ang(R, m, eb), R->mot_target = rel_angle(A->F, B->F, jt->angle);
            R->mot_target += h * jt->speed;
            R->kind[m] = ROW_MOTOR, R->lo[m] = -INFINITY, R->hi[m] = INFINITY;
            m++;
        }
        if (!pre && motor && jt->has_motor && has_coordinate(ty) && m < MAXR) {
            if (ty == IMP_JOINT_PRISMATIC) row_lin(R, m, eb, ra, rb);
            else row_ang(R, m, eb);
            /* boxed by what is left of this step's max h (the motor acts in several stages) */
            R->kind[m] = ROW_MOTOR, R->lo[m] = fmin(-jt->max * h - jt->motor_used, 0), R->hi[m] = fmax(jt->max * h - jt->motor_used, 0);
            m++;
        }
        R->m = m;
        /* W g */
        for (int r = 0; r < m; r++) {
            const double *ga = R->gA[r], *gb = R->gB[r];
            imp_vec3 la = v3_scale(v3(ga[0], ga[1], ga[2]), A->dyn ? im[A->i] : 0), lb = v3_scale(v3(gb[0], gb[1], gb[2]), B->dyn ? im[B->i] : 0);
            imp_vec3 wa = A->dyn ? m3_mul_v(Iinv[A->i], v3(ga[3], ga[4], ga[5])) : v3(0, 0, 0);
            imp_vec3 wb = B->dyn ? m3_mul_v(Iinv[B->i], v3(gb[3], gb[4], gb[5])) : v3(0, 0, 0);
            set6(R->wA[r], la, wa), set6(R->wB[r], lb, wb);
            R->fixed[r] = false;
        }
    }
    if (!pre && !v) return; /* directions only (joints_rows) */
    if (!pre) {
        /* velocity rows: C = G, right-hand side target - u */
        imp_vec3 va = A->i < n ? v[A->i] : v3(0, 0, 0), wa = A->i < n ? om[A->i] : v3(0, 0, 0);
        imp_vec3 vb = B->i < n ? v[B->i] : v3(0, 0, 0), wb = B->i < n ? om[B->i] : v3(0, 0, 0);
        for (int r = 0; r < R->m; r++) {
            memcpy(R->cA[r], R->gA[r], sizeof R->cA[r]), memcpy(R->cB[r], R->gB[r], sizeof R->cB[r]);
            const double *a = R->gA[r], *b = R->gB[r];
            double u = a[0] * va.x + a[1] * va.y + a[2] * va.z + a[3] * wa.x + a[4] * wa.y + a[5] * wa.z +
                       b[0] * vb.x + b[1] * vb.y + b[2] * vb.z + b[3] * wb.x + b[4] * wb.y + b[5] * wb.z;
            R->f[r] = (R->kind[r] == ROW_MOTOR ? jt->speed : 0) - u;
        }
        return;
    }
    /* predicted residuals and their derivatives (the header's table) */
    R->dpend = false;
    imp_vec3 g = v3_sub(A->p1, B->p1);
    imp_vec3 a1 = frames ? qaxis(A->F1, 0) : v3(0, 0, 0), b1 = frames ? qaxis(B->F1, 0) : v3(0, 0, 0);
    int m = 0;
    if (ty == IMP_JOINT_PRISMATIC || ty == IMP_JOINT_PLANAR) {
        for (int k = ty == IMP_JOINT_PLANAR ? 0 : 1; k <= (ty == IMP_JOINT_PLANAR ? 0 : 2); k++) {
            imp_vec3 t = qaxis(B->F1, k);
            R->f[m] = v3_dot(g, t);
            deriv_point(R, m++, t, A, B, jt->ib < n, g, h);
        }
    } else {
        /* a plain ball joint in a line search's trial: the residuals only, its C when a step needs it
         * (deriv_all: the same numbers from the same sides) */
        const bool defer = ty == IMP_JOINT_POINT && R->m == 3 && w->joints && w->joints->trial;
        for (int c = 0; c < 3; c++) {
            imp_vec3 t = v3(c == 0, c == 1, c == 2);
            R->f[m] = v3_dot(g, t);
            if (defer) m++;
            else deriv_point(R, m++, t, A, B, false, g, h);
        }
        R->dpend = defer;
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
    if (m < R->m && R->kind[m] == ROW_LIMIT) { /* the residual past the bound kept from the first build */
        double target = R->lim_target;
        if (angular_free(ty)) {
            R->f[m] = rel_angle(A->F1, B->F1, jt->angle) - target;
            deriv_ang(R, m, b1, v3_scale(b1, -1), A, B);
        } else if (ty == IMP_JOINT_PRISMATIC) {
            R->f[m] = v3_dot(g, b1) - target;
            deriv_point(R, m, b1, A, B, jt->ib < n, g, h);
        } else {
            imp_vec3 cr = v3_cross(a1, b1);
            double s = v3_len(cr);
            R->f[m] = atan2(s, v3_dot(a1, b1)) - target;
            imp_vec3 nn = s > 1e-12 ? v3_scale(cr, 1 / s) : v3(0, 0, 0);
            deriv_ang(R, m, v3_scale(nn, -1), nn, A, B);
        }
        m++;
    }
    if (m < R->m && R->kind[m] == ROW_MOTOR) { /* the coordinate against now + h speed (as the limit row) */
        if (angular_free(ty)) {
            R->f[m] = rel_angle(A->F1, B->F1, R->mot_target) - R->mot_target;
            deriv_ang(R, m, b1, v3_scale(b1, -1), A, B);
        } else {
            R->f[m] = v3_dot(g, b1) - R->mot_target;
            deriv_point(R, m, b1, A, B, jt->ib < n, g, h);
        }
    }
}

/* ---- the sparse block solve (the header's last paragraph) ------------------------------------------ */


/* body -> incident nodes (CSR over the dynamic sides), and the elimination structure when the joint
 * graph changed: the hub bodies (HUB_MIN or more joints), a minimum-degree order (leaves first on a
 * tree; the joints with a moving side that is no hub, then the hubs, then the rest) and each node's later
 * neighbours U(p) */
static void solver_structure(struct joint_set *js, int n, const double *im)
{
    const int nn = js->nn;
    memset(js->bstart, 0, sizeof(int) * (size_t)(n + 2));
    /* the moving ends of every node, compared with those the structure was built for */
    bool same = js->order && js->tn == nn;
    for (int p = 0; p < nn; p++) {
        const joint *jt = &js->j[js->nodes[p]];
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++) {
            int x = ends[e] < n && im[ends[e]] > 0 ? ends[e] : -1;
            if (x >= 0) js->bstart[x + 1]++;
            same = same && js->tends[2 * p + e] == x;
            js->tends[2 * p + e] = x;
        }
    }
    js->tn = nn;
    if (!same) js->sgen++;
    for (int i = 0; i < n; i++) js->bstart[i + 1] += js->bstart[i];
    int *cur = js->adjn;
    for (int i = 0; i <= n; i++) cur[i] = js->bstart[i];
    for (int p = 0; p < nn; p++)
        for (int e = 0; e < 2; e++)
            if (js->tends[2 * p + e] >= 0) js->bjoint[cur[js->tends[2 * p + e]]++] = p;
    if (same) return;
    js->nh = 0;
    for (int i = 0; i < n; i++) {
        js->hubn[i] = -1;
        if (js->bstart[i + 1] - js->bstart[i] >= HUB_MIN) js->hubn[i] = nn + js->nh++;
    }
    const int nt = js->nt = nn + js->nh;
    /* symbolic elimination: adjacency lists of the node graph (allocated only here, on a change); rank:
     * 0 a joint with a moving side that is no hub, 1 a hub, 2 a joint whose moving sides are all hubs */
    int **adj = calloc((size_t)nt + 1, sizeof(int *));
    int *deg = calloc((size_t)nt + 1, sizeof(int)), *acap = calloc((size_t)nt + 1, sizeof(int));
    uint8_t *gone = calloc((size_t)nt + 1, 1), *rank = calloc((size_t)nt + 1, 1);
    if (!adj || !deg || !acap || !gone || !rank) abort();
    for (int p = 0; p < nt; p++) {
        rank[p] = p < nn ? 2 : 1;
        for (int e = 0; e < 2 && p < nn; e++) {
            const int x = js->tends[2 * p + e];
            if (x >= 0 && js->hubn[x] < 0) rank[p] = 0;
        }
    }
#define ADD_EDGE(P, Q)                                                                                  \
    do {                                                                                                \
        int p_ = (P), q_ = (Q), k_;                                                                     \
        for (k_ = 0; k_ < deg[p_] && adj[p_][k_] != q_; k_++) {}                                        \
        if (k_ == deg[p_]) {                                                                            \
            if (deg[p_] == acap[p_]) acap[p_] = acap[p_] * 2 + 4, adj[p_] = ids_grow(adj[p_], sizeof(int), acap[p_]); \
            adj[p_][deg[p_]++] = q_;                                                                    \
        }                                                                                               \
    } while (0)
    for (int i = 0; i < n; i++)
        for (int a = js->bstart[i]; a < js->bstart[i + 1]; a++) {
            if (js->hubn[i] >= 0) { /* a hub: an edge from each of its joints to its own node */
                ADD_EDGE(js->bjoint[a], js->hubn[i]);
                ADD_EDGE(js->hubn[i], js->bjoint[a]);
                continue;
            }
            for (int b = js->bstart[i]; b < js->bstart[i + 1]; b++)
                if (a != b) ADD_EDGE(js->bjoint[a], js->bjoint[b]);
        }
    int nu = 0;
    for (int k = 0; k < nt; k++) {
        int p = -1;
        for (int q = 0; q < nt; q++)
            if (!gone[q] && (p < 0 || rank[q] < rank[p] || (rank[q] == rank[p] && deg[q] < deg[p]))) p = q;
        gone[p] = 1, js->order[k] = p, js->pos[p] = k, js->ustart[k] = nu;
        js->unb = cgrow(js->unb, sizeof(int), &js->ucap, nu + deg[p] + 1);
        for (int a = 0; a < deg[p]; a++) js->unb[nu + a] = adj[p][a];
        /* the neighbours of p become a clique (fill), and forget p */
        for (int a = 0; a < deg[p]; a++) {
            int q = adj[p][a];
            for (int k2 = 0; k2 < deg[q]; k2++)
                if (adj[q][k2] == p) adj[q][k2] = adj[q][--deg[q]];
            for (int b = 0; b < deg[p]; b++)
                if (b != a) ADD_EDGE(q, adj[p][b]);
        }
        nu += deg[p];
        deg[p] = 0;
    }
#undef ADD_EDGE
    for (int q = 0; q < nt; q++) free(adj[q]);
    free(adj), free(deg), free(acap), free(gone), free(rank);
    js->ustart[nt] = nu;
    if (nu + 1 > js->scap) {
        js->scap = nu * 3 / 2 + 16;
        js->bU = ids_grow(js->bU, BS * sizeof(double), js->scap);
        js->bL = ids_grow(js->bL, BS * sizeof(double), js->scap);
    }
}

/* the active joints of a stage: live, a moving side, and (with rows) at least one row */
static void collect_nodes(imp_world *w, int n, const double *im)
{
    struct joint_set *js = w->joints;
    const int nj = js->ids.count;
    if (nj + 1 > js->ncap) {
        int c = js->ncap = nj * 3 / 2 + 16;
        js->nodes = ids_grow(js->nodes, sizeof(int), c), js->rows = ids_grow(js->rows, sizeof(jrows), c);
        js->bjoint = ids_grow(js->bjoint, sizeof(int), 2 * c);
        js->tends = ids_grow(js->tends, sizeof(int), 2 * c), js->tn = -1;
    }
    if (nj + n + 1 > js->tcap) { /* the solver's nodes: the joints and the hub bodies */
        int c = js->tcap = (nj + n) * 3 / 2 + 16;
        js->order = ids_grow(js->order, sizeof(int), c), js->msz = ids_grow(js->msz, sizeof(int), c);
        js->pos = ids_grow(js->pos, sizeof(int), c), js->ustart = ids_grow(js->ustart, sizeof(int), c + 1);
        js->Dinv = ids_grow(js->Dinv, BS * sizeof(double), c), js->rhs = ids_grow(js->rhs, MAXR * sizeof(double), c);
        js->rhs0 = ids_grow(js->rhs0, MAXR * sizeof(double), c);
        js->sol = ids_grow(js->sol, MAXR * sizeof(double), c);
    }
    if (n + 2 > js->bcap) {
        int c = js->bcap = n * 3 / 2 + 16;
        js->bstart = ids_grow(js->bstart, sizeof(int), c), js->adjn = ids_grow(js->adjn, sizeof(int), c);
        js->pv = ids_grow(js->pv, sizeof(imp_vec3), c), js->pw = ids_grow(js->pw, sizeof(imp_vec3), c);
        js->sv = ids_grow(js->sv, sizeof(imp_vec3), c), js->sw = ids_grow(js->sw, sizeof(imp_vec3), c);
        js->tv = ids_grow(js->tv, sizeof(imp_vec3), c), js->tw = ids_grow(js->tw, sizeof(imp_vec3), c);
        js->bq1 = ids_grow(js->bq1, sizeof(imp_quat), c), js->bHL = ids_grow(js->bHL, sizeof(imp_mat3), c);
        js->bver = ids_grow(js->bver, sizeof(unsigned), c), js->bseen = ids_grow(js->bseen, sizeof(unsigned), c);
        js->bepoch = ids_grow(js->bepoch, sizeof(unsigned), c);
        js->bqraw = ids_grow(js->bqraw, sizeof(imp_quat), c), js->bqn = ids_grow(js->bqn, sizeof(imp_quat), c);
        js->bR = ids_grow(js->bR, sizeof(imp_mat3), c), js->bR1 = ids_grow(js->bR1, sizeof(imp_mat3), c);
        js->hubn = ids_grow(js->hubn, sizeof(int), c);
        js->tn = -1; /* (hubn is set by the structure) */
        memset(js->bqraw, 0xff, sizeof(imp_quat) * (size_t)c); /* (a NaN pattern: never a live body's state) */
        for (int i = 0; i < c; i++) js->bqn[i] = quat_identity(), js->bR[i] = m3_identity();
        memset(js->bepoch, 0, sizeof(unsigned) * (size_t)c), js->epoch = 1;
        memset(js->bver, 0, sizeof(unsigned) * (size_t)c), memset(js->bseen, 0, sizeof(unsigned) * (size_t)c);
    }
    js->nn = 0;
    for (int k = 0; k < nj; k++) {
        joint *jt = &js->j[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        if (!((jt->ia < n && im[jt->ia] > 0) || (jt->ib < n && im[jt->ib] > 0))) continue;
        js->nodes[js->nn++] = k;
    }
    solver_structure(js, n, im);
}

static double *blk(struct joint_set *js, int p, int q)
{
    if (js->pos[p] < js->pos[q]) {
        for (int e = js->ustart[js->pos[p]]; e < js->ustart[js->pos[p] + 1]; e++)
            if (js->unb[e] == q) return js->bU + BS * (size_t)e;
    } else {
        for (int e = js->ustart[js->pos[q]]; e < js->ustart[js->pos[q] + 1]; e++)
            if (js->unb[e] == p) return js->bL + BS * (size_t)e;
    }
    return NULL; /* not reached: every edge is in the structure */
}

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* K += C W G of one side: K_rc += c_r . w_c for mr x mc rows */
static inline __attribute__((always_inline)) void cw_m(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6], int mr, int mc)
{
    for (int r = 0; r < mr; r++)
        for (int k = 0; k < mc; k++) K[MAXR * r + k] += dot6(c[r], wg[k]);
}

/* the 3 x 3 case (point joints) with W G transposed, so that a row's three sums run side by side (each
 * summed in dot6's order: the same numbers) */
static inline __attribute__((always_inline)) void cw_3(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    double t[6][3];
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 3; k++) t[j][k] = wg[k][j];
    for (int r = 0; r < 3; r++) {
        double s[3];
        for (int k = 0; k < 3; k++) s[k] = c[r][0] * t[0][k];
        for (int j = 1; j < 6; j++)
            for (int k = 0; k < 3; k++) s[k] += c[r][j] * t[j][k];
        for (int k = 0; k < 3; k++) K[MAXR * r + k] += s[k];
    }
}

/* two point joints' blocks (axes: both have the three rows along x, y, z first): the linear parts of c_r
 * (h e_r, or -h e_r, or zero) and of W g_k (1/m e_k) meet only where r = k, so a row's sum is that one
 * product and the three angular ones (dot6's order, whose other terms are exact zeros: the same numbers) */
static inline __attribute__((always_inline)) void cw_axes(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            double s = r == k ? c[r][r] * wg[k][k] : 0;
            K[MAXR * r + k] += s + c[r][3] * wg[k][3] + c[r][4] * wg[k][4] + c[r][5] * wg[k][5];
        }
}

static void cw(double *K, const double (*c)[6], const double (*wg)[6], int mr, int mc, bool axes)
{
    if (mr == 3 && mc == 3) { /* point joints (see the fixed-size kernels below) */
        if (axes) cw_axes(K, c, wg);
        else cw_3(K, c, wg);
    } else {
        cw_m(K, c, wg, mr, mc);
    }
}

static inline void zero_blk(double *A, int mr, int mc)
{
    if (mr == 3 && mc == 3) { /* point joints: nine stores, not three library calls */
        A[0] = A[1] = A[2] = 0, A[MAXR] = A[MAXR + 1] = A[MAXR + 2] = 0, A[2 * MAXR] = A[2 * MAXR + 1] = A[2 * MAXR + 2] = 0;
        return;
    }
    for (int r = 0; r < mr; r++) memset(A + MAXR * r, 0, sizeof(double) * (size_t)mc);
}

/* a joint's side on a hub body h (the header's last paragraph): its block row gets C_X (m x 6), the
 * hub's row -(W G_X)^T (6 x m), and hd the side's share of the joint's diagonal (for the shifts) */
static void hub_side(struct joint_set *js, int p, int h, const double (*c)[6], const double (*wg)[6], int m, double *hd)
{
    double *Kph = blk(js, p, h), *Khp = blk(js, h, p);
    for (int r = 0; r < m; r++) {
        for (int k = 0; k < 6; k++) Kph[MAXR * r + k] += c[r][k], Khp[MAXR * k + r] -= wg[r][k];
        hd[r] += dot6(c[r], wg[r]);
    }
}

/* K = C W G by blocks into the structure; the diagonal gets the Levenberg-Marquardt shift mu diag K
 * and a tiny one for redundant rows; fixed rows (C zeroed) get a unit diagonal. A hub body's joints meet
 * at its node instead of in blocks of their own: its unknown is its velocity change u = W sum G^T lambda
 * (the row: u - W sum G^T lambda = 0, an identity block), and its joints' rows read C u */
static void assemble(struct joint_set *js, int n, double mu)
{
    const int nn = js->nn, nt = js->nt;
    js->kvalid = false;
    for (int p = 0; p < nt; p++) js->msz[p] = p < nn ? js->rows[p].m : 6;
    /* zero the blocks' used parts (the rest of their MAXR x MAXR storage is never read) */
    for (int k = 0; k < nt; k++) {
        const int p = js->order[k], mp = js->msz[p];
        zero_blk(js->Dinv + BS * (size_t)p, mp, mp);
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            const int mq = js->msz[js->unb[e]];
            zero_blk(js->bU + BS * (size_t)e, mp, mq), zero_blk(js->bL + BS * (size_t)e, mq, mp);
        }
    }
    for (int p = 0; p < nn; p++) {
        const jrows *R = &js->rows[p];
        const joint *jt = &js->j[js->nodes[p]];
        double *D = js->Dinv + BS * (size_t)p, hd[MAXR] = {0};
        const int ha = R->sA.dyn ? js->hubn[jt->ia] : -1, hb = R->sB.dyn ? js->hubn[jt->ib] : -1;
        if (ha >= 0) hub_side(js, p, ha, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, hd);
        else if (R->sA.dyn) cw(D, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, R->m, R->axes);
        if (hb >= 0) hub_side(js, p, hb, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, hd);
        else if (R->sB.dyn) cw(D, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, R->m, R->axes);
        for (int r = 0; r < R->m; r++) {
            if (R->fixed[r]) D[MAXR * r + r] = 1;
            D[MAXR * r + r] += (mu + 1e-10) * fabs(D[MAXR * r + r] + hd[r]) + 1e-300;
        }
    }
    for (int p = nn; p < nt; p++)
        for (int r = 0; r < 6; r++) js->Dinv[BS * (size_t)p + MAXR * r + r] = 1;
    /* off-diagonal blocks through each shared moving body that is no hub */
    for (int i = 0; i < n; i++)
        for (int a = js->bstart[i]; a < js->bstart[i + 1] && js->hubn[i] < 0; a++)
            for (int b = js->bstart[i]; b < js->bstart[i + 1]; b++) {
                int p = js->bjoint[a], q = js->bjoint[b];
                if (p == q) continue;
                const jrows *Rp = &js->rows[p], *Rq = &js->rows[q];
                const joint *jp = &js->j[js->nodes[p]], *jq = &js->j[js->nodes[q]];
                const double(*cp)[6] = jp->ia == i ? (const double(*)[6])Rp->cA : (const double(*)[6])Rp->cB;
                const double(*wq)[6] = jq->ia == i ? (const double(*)[6])Rq->wA : (const double(*)[6])Rq->wB;
                cw(blk(js, p, q), cp, wq, Rp->m, Rq->m, Rp->axes && Rq->axes);
            }
}

/* Fixed-size kernels: each block routine below is written once for any m and inlined into a dispatcher
 * that calls it with the literal 3 when the blocks are 3 x 3 (point joints, the common case), so the
 * compiler unrolls the loops for that size; any other size takes the general loops. */

/* in-place inverse of the m x m block A (stride MAXR): dense.h */
static bool inv_block(double *A, int m) { return m == 3 ? dense_invert(A, 3, MAXR) : dense_invert(A, m, MAXR); }

/* C = A (ma x mk) B (mk x mb), all stride MAXR; sub: C -= instead */
static inline __attribute__((always_inline)) void mul_blk_m(double *restrict C, const double *restrict A, const double *restrict B, int ma, int mk, int mb, bool sub)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) {
            double s = 0;
            for (int k = 0; k < mk; k++) s += A[MAXR * r + k] * B[MAXR * k + c];
            if (sub) C[MAXR * r + c] -= s;
            else C[MAXR * r + c] = s;
        }
}

static void mul_blk(double *C, const double *A, const double *B, int ma, int mk, int mb, bool sub)
{
    if (ma == 3 && mk == 3 && mb == 3) {
        if (sub) mul_blk_m(C, A, B, 3, 3, 3, true);
        else mul_blk_m(C, A, B, 3, 3, 3, false);
    } else {
        mul_blk_m(C, A, B, ma, mk, mb, sub);
    }
}

/* block elimination in the structure's order: D_p^-1, L_qp = K_qp D_p^-1, K_q1q2 -= L_q1p K_pq2 */
static bool factor(struct joint_set *js)
{
    double T[BS] = {0};
    for (int k = 0; k < js->nt; k++) {
        int p = js->order[k], mp = js->msz[p];
        double *D = js->Dinv + BS * (size_t)p;
        if (!inv_block(D, mp)) return false;
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            double *L = js->bL + BS * (size_t)e;
            mul_blk(T, L, D, js->msz[q], mp, mp, false);
            memcpy(L, T, sizeof T);
        }
        for (int e1 = js->ustart[k]; e1 < js->ustart[k + 1]; e1++)
            for (int e2 = js->ustart[k]; e2 < js->ustart[k + 1]; e2++) {
                int q1 = js->unb[e1], q2 = js->unb[e2];
                double *K = q1 == q2 ? js->Dinv + BS * (size_t)q1 : blk(js, q1, q2);
                mul_blk(K, js->bL + BS * (size_t)e1, js->bU + BS * (size_t)e2, js->msz[q1], mp, js->msz[q2], true);
            }
    }
    return true;
}

/* solve K x = rhs with the factors (rhs is overwritten; x into sol) */
/* y -= A x (ma x mb block, stride MAXR) */
static inline __attribute__((always_inline)) void mv_sub_m(double *restrict y, const double *restrict A, const double *restrict x, int ma, int mb)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) y[r] -= A[MAXR * r + c] * x[c];
}

static void mv_sub(double *y, const double *A, const double *x, int ma, int mb)
{
    if (ma == 3 && mb == 3) mv_sub_m(y, A, x, 3, 3);
    else mv_sub_m(y, A, x, ma, mb);
}

static void solve(struct joint_set *js)
{
    for (int p = js->nn; p < js->nt; p++) memset(js->rhs + MAXR * (size_t)p, 0, 6 * sizeof(double)); /* hubs */
    for (int k = 0; k < js->nt; k++) {
        int p = js->order[k], mp = js->msz[p];
        const double *bp = js->rhs + MAXR * (size_t)p;
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            mv_sub(js->rhs + MAXR * (size_t)q, js->bL + BS * (size_t)e, bp, js->msz[q], mp);
        }
    }
    for (int k = js->nt - 1; k >= 0; k--) {
        int p = js->order[k], mp = js->msz[p];
        double t[MAXR];
        memcpy(t, js->rhs + MAXR * (size_t)p, sizeof t);
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            mv_sub(t, js->bU + BS * (size_t)e, js->sol + MAXR * (size_t)q, mp, js->msz[q]);
        }
        const double *D = js->Dinv + BS * (size_t)p;
        double *x = js->sol + MAXR * (size_t)p;
        for (int r = 0; r < mp; r++) x[r] = 0;
        mv_sub(x, D, t, mp, mp);
        for (int r = 0; r < mp; r++) x[r] = -x[r];
    }
}

/* velocities += alpha * sum_r lam_r W g_r of node p (lam: 6 per node); with v2 also into v2, om2 */
static void apply_node(struct joint_set *js, int p, const double *lam, double alpha, imp_vec3 *v, imp_vec3 *om, imp_vec3 *v2, imp_vec3 *om2, int n)
{
    const jrows *R = &js->rows[p];
    joint *jt = &js->j[js->nodes[p]];
    imp_vec3 dva = v3(0, 0, 0), dwa = dva, dvb = dva, dwb = dva;
    for (int r = 0; r < R->m; r++) {
        double l = alpha * lam[r];
        if (l == 0) continue;
        const double *a = R->wA[r], *b = R->wB[r];
        dva = v3_add(dva, v3(l * a[0], l * a[1], l * a[2])), dwa = v3_add(dwa, v3(l * a[3], l * a[4], l * a[5]));
        dvb = v3_add(dvb, v3(l * b[0], l * b[1], l * b[2])), dwb = v3_add(dwb, v3(l * b[3], l * b[4], l * b[5]));
    }
    if (v2 || v == js->pv) {
        if (jt->ia < n) js->bver[jt->ia]++;
        if (jt->ib < n) js->bver[jt->ib]++;
    }
    if (jt->ia < n) {
        v[jt->ia] = v3_add(v[jt->ia], dva), om[jt->ia] = v3_add(om[jt->ia], dwa);
        if (v2) v2[jt->ia] = v3_add(v2[jt->ia], dva), om2[jt->ia] = v3_add(om2[jt->ia], dwa);
    }
    if (jt->ib < n) {
        v[jt->ib] = v3_add(v[jt->ib], dvb), om[jt->ib] = v3_add(om[jt->ib], dwb);
        if (v2) v2[jt->ib] = v3_add(v2[jt->ib], dvb), om2[jt->ib] = v3_add(om2[jt->ib], dwb);
    }
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* ---- the stages -------------------------------------------------------------------------------------- */

int joints_prepare(imp_world *w, int n)
{
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return 0;
    if (n > js->body_cap) {
        js->body_cap = n * 3 / 2 + 16;
        js->jointed = ids_grow(js->jointed, 1, js->body_cap);
        js->uf = ids_grow(js->uf, sizeof(int), js->body_cap);
        js->lf = ids_grow(js->lf, sizeof(int), js->body_cap + 1);
    }
    memset(js->jointed, 0, (size_t)n);
    if (js->ids.count > js->pair_cap) {
        js->pair_cap = js->ids.count * 3 / 2 + 16;
        js->pairs = ids_grow(js->pairs, sizeof(uint64_t), js->pair_cap);
    }
    js->npairs = 0, js->pre_h = 0;
    for (int i = 0; i < n; i++) js->uf[i] = i;
    for (int i = 0; i <= n; i++) js->lf[i] = i;
    js->loops = false;
    int live = 0;
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->j[k];
        jt->motor_used = 0, jt->motor_sat = false; /* a new step */
        if (!joint_bodies(w, jt, n)) {
            if (!jt->woke) { /* a body of it was destroyed: the partner wakes, once */
                jt->woke = true;
                if (jt->ia >= 0 && jt->ia < n) w->bodies->body[jt->ia].asleep = 0, w->bodies->body[jt->ia].sleep_time = 0;
                if (jt->ib >= 0 && jt->ib < n) w->bodies->body[jt->ib].asleep = 0, w->bodies->body[jt->ib].sleep_time = 0;
            }
            continue;
        }
        live++;
        {
            uint64_t lo = (uint64_t)(jt->ia < jt->ib ? jt->ia : jt->ib), hi = (uint64_t)(jt->ia < jt->ib ? jt->ib : jt->ia);
            js->pairs[js->npairs++] = lo << 32 | hi; /* the world is n */
        }
        {
            int ra = jt->ia < n && w->bodies->body[jt->ia].motion == IMP_DYNAMIC ? jt->ia : n;
            int rb = jt->ib < n && w->bodies->body[jt->ib].motion == IMP_DYNAMIC ? jt->ib : n;
            while (js->lf[ra] != ra) ra = js->lf[ra] = js->lf[js->lf[ra]];
            while (js->lf[rb] != rb) rb = js->lf[rb] = js->lf[js->lf[rb]];
            if (ra == rb) js->loops = js->loops || ra != n; /* no dynamic end: an inert joint, no loop */
            else js->lf[ra] = rb;
        }
        if (jt->ib < n) {
            if (w->bodies->body[jt->ia].motion == IMP_DYNAMIC && w->bodies->body[jt->ib].motion == IMP_DYNAMIC) {
                int ra = jt->ia, rb = jt->ib;
                while (js->uf[ra] != ra) ra = js->uf[ra] = js->uf[js->uf[ra]];
                while (js->uf[rb] != rb) rb = js->uf[rb] = js->uf[js->uf[rb]];
                if (ra != rb) js->uf[ra] = rb;
            }
        }
    }
    /* a joint island sleeps and wakes as one: any awake member wakes the rest */
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->j[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++)
            if (ends[e] < n && w->bodies->body[ends[e]].motion == IMP_DYNAMIC && !w->bodies->body[ends[e]].asleep) {
                int r = ends[e];
                while (js->uf[r] != r) r = js->uf[r];
                js->jointed[r] = 2; /* the root marks an awake island */
            }
    }
    for (int i = 0; i < n; i++) {
        int r = i;
        while (js->uf[r] != r) r = js->uf[r];
        if (js->jointed[r] == 2 && w->bodies->body[i].asleep) w->bodies->body[i].asleep = 0, w->bodies->body[i].sleep_time = 0;
    }
    memset(js->jointed, 0, (size_t)n);
    for (int k = 0; k < js->ids.count; k++) {
        const joint *jt = &js->j[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++)
            if (ends[e] < n && w->bodies->body[ends[e]].motion == IMP_DYNAMIC && !w->bodies->body[ends[e]].asleep) js->jointed[ends[e]] = 1;
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

int joints_pairs(const imp_world *w, const uint64_t **pairs)
{
    if (!w->joints) return 0;
    *pairs = w->joints->pairs;
    return w->joints->npairs;
}

/* The factors of K reused. K = J W J^T depends on the rows' directions G and W G only, and these depend
 * on the positions alone: the post-stabilization after the position update and the next step's (after
 * the velocity update, when no motor row is active, or after collisions) see the same positions, so the
 * second solves with the first one's factors. The rows are compared exactly (G and W G of every row,
 * a few thousand numbers for 50 joints, against an assembly and factorization), so anything that moved
 * a body, changed a mass, a limit or the joints in between makes a fresh factorization. */
static void keep_post_factors(struct joint_set *js)
{
    int need = 0;
    for (int p = 0; p < js->nn; p++) need += 1 + 24 * js->rows[p].m;
    js->ksnap = cgrow(js->ksnap, sizeof(double), &js->ksnap_cap, need);
    double *o = js->ksnap;
    for (int p = 0; p < js->nn; p++) {
        const jrows *R = &js->rows[p];
        *o++ = R->m;
        for (int r = 0; r < R->m; r++) {
            memcpy(o, R->gA[r], 6 * sizeof(double)), memcpy(o + 6, R->gB[r], 6 * sizeof(double));
            memcpy(o + 12, R->wA[r], 6 * sizeof(double)), memcpy(o + 18, R->wB[r], 6 * sizeof(double));
            o += 24;
        }
    }
    js->kvalid = true, js->ksgen = js->sgen;
}

static bool post_factors_kept(const struct joint_set *js)
{
    if (!js->kvalid || js->ksgen != js->sgen) return false;
    const double *o = js->ksnap;
    for (int p = 0; p < js->nn; p++) {
        const jrows *R = &js->rows[p];
        if (*o++ != R->m) return false;
        for (int r = 0; r < R->m; r++) {
            if (memcmp(o, R->gA[r], 6 * sizeof(double)) || memcmp(o + 6, R->gB[r], 6 * sizeof(double)) ||
                memcmp(o + 12, R->wA[r], 6 * sizeof(double)) || memcmp(o + 18, R->wB[r], 6 * sizeof(double)))
                return false;
            o += 24;
        }
    }
    return true;
}

/* The linear solve of post-stabilization, K lambda = rhs (rows as built, fixed rows with C zeroed), checked.
 * K is singular where rows are redundant (closed loops: a planar four-bar has 20 rows on 18 degrees of
 * freedom, a net or a tread attached to its gears many more), and rhs is consistent (u = G V), so with a
 * small diagonal shift eps diag K the solution is the least-squares one (and rows that are nearly, not
 * exactly, dependent, such as a sagging net's, are left a little unsatisfied instead of taking huge
 * multipliers). But block elimination of a nearly singular K loses digits at every nearly singular pivot
 * (its L blocks grow like 1/sqrt(eps)), and with several of them in a row the computed lambda can be
 * garbage whose impulses are not in the null space: measured, the net of scenes/net.lua (197 rows on 180
 * degrees of freedom) with eps = 1e-10 once got multipliers of 5e7 from relative velocities of 0.16 m/s,
 * and its knots 9 m/s out of a velocity projection, which can only remove kinetic energy. So the solve is
 * checked where it is cheap: the velocity change of the multipliers, dV = W G^T lambda, must give
 * G dV = rhs on every free row to 1e-3 of the largest |rhs| (+ 1e-9); that failed solve missed by 20 %,
 * ordinary ones by 1e-6. If not, the shift grows by 1000 (eps = 1e-9, 1e-6, 1e-3) and the solve is done
 * again: a softer projection rather than a violent one (not where K is positive definite by
 * construction: js->sound, joints_post_stabilize). first: the active set's first pass, whose factors may
 * be the kept ones (above) and are kept. */
static bool post_solve(struct joint_set *js, int n, bool first)
{
    double big = 0;
    for (int p = 0; p < js->nn; p++)
        for (int r = 0; r < js->rows[p].m; r++) big = fmax_num(big, fabs(js->rhs[MAXR * p + r]));
    memcpy(js->rhs0, js->rhs, sizeof(double) * MAXR * (size_t)js->nn); /* solve overwrites rhs */
    bool kept = first && post_factors_kept(js);
    const bool sound = js->sound;
    for (double mu = kept ? js->kmu : 1e-9; mu < 1e-2; mu *= 1000, kept = false) {
        memcpy(js->rhs, js->rhs0, sizeof(double) * MAXR * (size_t)js->nn);
        if (!kept) {
            assemble(js, n, mu);
            if (!factor(js)) return false;
            if (first) keep_post_factors(js), js->kmu = mu;
        }
        solve(js);
        if (sound) break;
        for (int i = 0; i <= n; i++) js->tv[i] = js->tw[i] = v3(0, 0, 0);
        for (int p = 0; p < js->nn; p++) apply_node(js, p, js->sol + MAXR * p, 1, js->tv, js->tw, NULL, NULL, n);
        double worst = 0;
        for (int p = 0; p < js->nn; p++) {
            const jrows *R = &js->rows[p];
            const joint *jt = &js->j[js->nodes[p]];
            const imp_vec3 va = js->tv[jt->ia], wa = js->tw[jt->ia], vb = js->tv[jt->ib], wb = js->tw[jt->ib];
            const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
            for (int r = 0; r < R->m; r++)
                if (!R->fixed[r]) worst = fmax_num(worst, fabs(dot6(R->gA[r], xa) + dot6(R->gB[r], xb) - js->rhs0[MAXR * p + r]));
        }
        if (worst <= 1e-3 * big + 1e-9) break;
    }
    return true;
}

/* Velocity post-stabilization (S1 section V; the header's "Post-stabilization" paragraph). motors: the
 * velocity stage, where motor rows drive the free coordinate's rate with at most max h of impulse. */
void joints_post_stabilize(imp_world *w, solver_bodies *sb, bool motors)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    collect_nodes(w, n, im);
    if (!js->nn) return;
    for (int p = 0; p < js->nn; p++)
        rows_build(w, &js->j[js->nodes[p]], &js->rows[p], n, v, om, Iinv, im, h, false, true, motors);
    /* post_solve's check is left out where K cannot be nearly singular: ball joints (three linear rows
     * each) that close no loop, between bodies that move (1/m > 0) or do not move at all, have rows of
     * full rank (root each tree at the world or any body: each joint's child body takes its three rows
     * through 1/m times the identity, block-triangular), so K is positive definite */
    js->sound = !js->loops;
    for (int p = 0; p < js->nn && js->sound; p++) {
        const jrows *R = &js->rows[p];
        const jside *S[2] = {&R->sA, &R->sB};
        js->sound = R->axes && R->m == 3;
        for (int k = 0; k < 2; k++)
            js->sound = js->sound && (S[k]->dyn || S[k]->i >= n || w->bodies->body[S[k]->i].motion != IMP_DYNAMIC);
    }
    for (int pass = 0; pass < ACTIVE_PASSES; pass++) {
        for (int p = 0; p < js->nn; p++) {
            jrows *R = &js->rows[p];
            if (pass) rows_build(w, &js->j[js->nodes[p]], R, n, v, om, Iinv, im, h, false, false, motors);
            for (int r = 0; r < R->m; r++) {
                js->rhs[MAXR * p + r] = R->fixed[r] ? 0 : R->f[r];
                if (R->fixed[r]) memset(R->cA[r], 0, sizeof R->cA[r]), memset(R->cB[r], 0, sizeof R->cB[r]);
            }
        }
        if (!post_solve(js, n, pass == 0)) return;
        /* multipliers out of bounds are fixed at the bound and applied; the rest is solved again. Limit
         * rows that pull (the joint leaves the limit) are released first, and motors clamped only in a
         * pass that released none: a motor driving a joint off its limit must not be clamped against
         * the limit row it conflicts with */
        bool release = false, clamped = false;
        for (int p = 0; p < js->nn && !release; p++)
            for (int r = 0; r < js->rows[p].m; r++) {
                const jrows *R = &js->rows[p];
                double l = js->sol[MAXR * p + r];
                release = release || (R->kind[r] == ROW_LIMIT && !R->fixed[r] && !(l >= R->lo[r] && l <= R->hi[r]));
            }
        for (int p = 0; p < js->nn; p++) {
            jrows *R = &js->rows[p];
            double lam[MAXR] = {0};
            for (int r = 0; r < R->m; r++) {
                double l = js->sol[MAXR * p + r];
                if (R->fixed[r] || (l >= R->lo[r] && l <= R->hi[r])) continue;
                if (release && R->kind[r] != ROW_LIMIT) continue;
                lam[r] = l < R->lo[r] ? R->lo[r] : R->hi[r];
                R->fixed[r] = true, clamped = true;
                if (R->kind[r] == ROW_MOTOR) js->j[js->nodes[p]].motor_used += lam[r], js->j[js->nodes[p]].motor_sat = true;
            }
            apply_node(js, p, lam, 1, v, om, NULL, NULL, n);
        }
        if (clamped && pass + 1 < ACTIVE_PASSES) continue;
        for (int p = 0; p < js->nn; p++) {
            jrows *R = &js->rows[p];
            double lam[MAXR] = {0};
            for (int r = 0; r < R->m; r++) {
                double l = js->sol[MAXR * p + r];
                if (!R->fixed[r]) lam[r] = l < R->lo[r] ? R->lo[r] : l > R->hi[r] ? R->hi[r] : l;
                if (R->kind[r] == ROW_MOTOR) js->j[js->nodes[p]].motor_used += lam[r];
            }
            apply_node(js, p, lam, 1, v, om, NULL, NULL, n);
        }
        break;
    }
}

/* the predicted residuals of every node at the velocities pv, pw; returns the largest, |F|^2 in *n2 */
static double eval_all(imp_world *w, int n, const imp_mat3 *Iinv, const double *im, double h, double *n2)
{
    struct joint_set *js = w->joints;
    double worst = 0, sum = 0;
    for (int p = 0; p < js->nn; p++) {
        jrows *R = &js->rows[p];
        rows_build(w, &js->j[js->nodes[p]], R, n, js->pv, js->pw, Iinv, im, h, true, false, false);
        if (js->keep > 0)
            for (int r = 0; r < R->m; r++) R->f[r] -= js->keep * R->e0[r];
        for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r])), sum += R->f[r] * R->f[r];
    }
    *n2 = sum;
    return worst == worst ? worst : INFINITY;
}

/* eval_all for a line search's trial, which is often rejected (or ends the iteration): plain ball
 * joints leave their derivatives to deriv_all */
static double eval_trial(imp_world *w, int n, const imp_mat3 *Iinv, const double *im, double h, double *n2)
{
    w->joints->trial = true;
    double worst = eval_all(w, n, Iinv, im, h, n2);
    w->joints->trial = false;
    return worst;
}

/* the derivatives eval_trial left out, at the same prediction (the sides kept in the rows) */
static void deriv_all(struct joint_set *js, double h)
{
    for (int p = 0; p < js->nn; p++) {
        jrows *R = &js->rows[p];
        if (!R->dpend) continue;
        const jside *A = &R->sA, *B = &R->sB;
        imp_vec3 g = v3_sub(A->p1, B->p1);
        for (int c = 0; c < 3; c++) deriv_point(R, c, v3(c == 0, c == 1, c == 2), A, B, false, g, h);
        R->dpend = false;
    }
}

/* rows of every node from scratch (impulse directions, active limits) with their residuals, as eval_all;
 * all false: only the joints with limits (whose limit rows may come or go with the prediction) */
static double build_all(imp_world *w, int n, const imp_mat3 *Iinv, const double *im, double h, double *n2, bool all)
{
    struct joint_set *js = w->joints;
    double worst = 0, sum = 0;
    for (int p = 0; p < js->nn; p++) {
        jrows *R = &js->rows[p];
        joint *jt = &js->j[js->nodes[p]];
        rows_build(w, jt, R, n, js->pv, js->pw, Iinv, im, h, true, all || jt->has_limits, false);
        for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r])), sum += R->f[r] * R->f[r];
    }
    *n2 = sum;
    return worst == worst ? worst : INFINITY;
}

/* one joint's Newton solve alone (S1 section IV's per-joint iteration) to tol; fresh: build its impulse
 * directions now (else they are those of the stage's build, valid while no limit row can come or go) */
static void solve_one(imp_world *w, int p, int n, const imp_mat3 *Iinv, const double *im, double h, double tol, int iters,
                      imp_vec3 *pv, imp_vec3 *pw, imp_vec3 *v, imp_vec3 *om, bool fresh)
{
    struct joint_set *js = w->joints;
    jrows *R = &js->rows[p];
    joint *jt = &js->j[js->nodes[p]];
    rows_build(w, jt, R, n, pv, pw, Iinv, im, h, true, fresh || jt->has_limits, false);
    double last = INFINITY, lam[MAXR] = {0};
    for (int it = 0; it < iters; it++) {
        if (it) rows_build(w, jt, R, n, pv, pw, Iinv, im, h, true, false, false); /* the first build has them */
        double worst = 0, D[BS];
        for (int r = 0; r < R->m; r++) worst = fmax_num(worst, fabs(R->f[r]));
        if (!(worst < last)) { /* this joint's Newton does not converge from here: undo its last step */
            apply_node(js, p, lam, -1, pv, pw, v, om, n);
            return;
        }
        if (!(worst >= tol)) return;
        last = worst;
        for (int r = 0; r < R->m; r++) {
            for (int c = 0; c < R->m; c++) D[MAXR * r + c] = dot6(R->cA[r], R->wA[c]) + dot6(R->cB[r], R->wB[c]);
            D[MAXR * r + r] += 1e-10 * fabs(D[MAXR * r + r]) + 1e-300;
        }
        if (!inv_block(D, R->m)) return;
        for (int r = 0; r < R->m; r++) {
            double s = 0;
            for (int c = 0; c < R->m; c++) s -= D[MAXR * r + c] * R->f[c];
            lam[r] = s;
        }
        apply_node(js, p, lam, 1, pv, pw, v, om, n);
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
 * In shock propagation a joint whose bodies are at two levels holds the lower one fixed, as the contacts
 * there do, and only the upper one answers (its own part of K, G_X W_X G_X^T), as long as that takes
 * energy from the upper body; if it would give it energy (the upper body yanked along by a fast lower
 * one), both answer, as S1 does throughout ("we remove the infinite inertia aspect of the shock
 * propagation algorithm only when computing the impulses due to articulation"); a joint within one level
 * moves both. Measured: with both answering always, an 8000 kg box welded on a 1000 kg box resting on
 * the ground pushed the base 5.2 cm into the ground (the weld moved it after its ground contact was
 * final); with the lower body held always, 3.4 mm at worst, but the ragdoll scene's three dolls landing
 * on the top step gained 222 J for a few steps and sent a thigh to 10.8 m/s; with the energy rule the
 * base lands 7.9 mm deep at worst when the top's push rocks it and rests 1.4 mm deep (6.2 and 1.0 mm
 * with the joints on the split impulses, joints_split), the dolls gain nothing. A joint to the world or a static body is exact either way, so a body welded to the world is as
 * fixed as the world for the contacts of the levels above it. */
void joints_contacts_begin(imp_world *w, const solver_bodies *sb)
{
    const imp_vec3 *v = sb->v, *om = sb->w;
    const imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    collect_nodes(w, n, im);
    if (js->nn > js->vcap) {
        js->vcap = js->nn * 3 / 2 + 16;
        js->vK = ids_grow(js->vK, BS * sizeof(double), js->vcap), js->vKi = ids_grow(js->vKi, BS * sizeof(double), js->vcap);
        js->vacc = ids_grow(js->vacc, MAXR * sizeof(double), js->vcap);
    }
    for (int p = 0; p < js->nn; p++) {
        jrows *R = &js->rows[p];
        rows_build(w, &js->j[js->nodes[p]], R, n, v, om, Iinv, im, h, false, true, true);
        double *K = js->vK + BS * (size_t)p, *Ki = js->vKi + BS * (size_t)p;
        for (int r = 0; r < R->m; r++)
            for (int c = 0; c < R->m; c++) K[MAXR * r + c] = dot6(R->gA[r], R->wA[c]) + dot6(R->gB[r], R->wB[c]);
        memcpy(Ki, K, BS * sizeof(double));
        for (int r = 0; r < R->m; r++) Ki[MAXR * r + r] += 1e-10 * fabs(Ki[MAXR * r + r]) + 1e-300;
        if (!inv_block(Ki, R->m)) R->m = 0; /* no moving side left in any row: nothing to do */
        memset(js->vacc + MAXR * (size_t)p, 0, MAXR * sizeof(double));
    }
}

/* one joint's block of velocity rows (the comment above); hold 1 or 2: side A or B is held (shock
 * propagation: the lower of two levels), K is then the other side's part alone and only it answers */
static void vel_node(struct joint_set *js, int p, imp_vec3 *v, imp_vec3 *om, int n, int hold)
{
    jrows *R = &js->rows[p];
    joint *jt = &js->j[js->nodes[p]];
    const int m = R->m;
    if (!m) return;
    const imp_vec3 va = v[jt->ia], wa = om[jt->ia], vb = v[jt->ib], wb = om[jt->ib]; /* index n: the world, at rest */
    const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
    double rhs[MAXR], lam[MAXR], *acc = js->vacc + MAXR * (size_t)p;
    const double *K = js->vK + BS * (size_t)p, *Ki = js->vKi + BS * (size_t)p;
    double K1[BS] = {0}, K1i[BS] = {0};
    if (hold) { /* K of the moving side: G_X W_X G_X^T */
        const double(*g)[6] = hold == 1 ? (const double(*)[6])R->gB : (const double(*)[6])R->gA;
        const double(*wg)[6] = hold == 1 ? (const double(*)[6])R->wB : (const double(*)[6])R->wA;
        for (int r = 0; r < m; r++)
            for (int c = 0; c < m; c++) K1[MAXR * r + c] = dot6(g[r], wg[c]);
        memcpy(K1i, K1, sizeof K1);
        for (int r = 0; r < m; r++) K1i[MAXR * r + r] += 1e-10 * fabs(K1i[MAXR * r + r]) + 1e-300;
        if (!inv_block(K1i, m)) { /* the moving side cannot answer alone: both do, as without hold */
            vel_node(js, p, v, om, n, 0);
            return;
        }
        K = K1, Ki = K1i;
    }
    for (int r = 0; r < m; r++) rhs[r] = (R->kind[r] == ROW_MOTOR ? jt->speed : 0) - dot6(R->gA[r], xa) - dot6(R->gB[r], xb);
    bool held[MAXR] = {false}, sat = jt->motor_sat;
    for (int r = 0; r < m; r++) {
        double s = 0;
        for (int c = 0; c < m; c++) s += Ki[MAXR * r + c] * rhs[c];
        lam[r] = s;
    }
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
        /* the free rows again, with the held ones' multipliers fixed: K_ff lam_f = rhs_f - K_fh lam_h */
        int f[MAXR], nf = 0;
        double D[BS], b[MAXR];
        for (int r = 0; r < m; r++)
            if (!held[r]) f[nf++] = r;
        for (int i = 0; i < nf; i++) {
            b[i] = rhs[f[i]];
            for (int c = 0; c < m; c++)
                if (held[c]) b[i] -= K[MAXR * f[i] + c] * lam[c];
            for (int k = 0; k < nf; k++) D[MAXR * i + k] = K[MAXR * f[i] + f[k]];
            D[MAXR * i + i] += 1e-10 * fabs(D[MAXR * i + i]) + 1e-300;
        }
        if (nf && !inv_block(D, nf)) return;
        for (int i = 0; i < nf; i++) {
            double s = 0;
            for (int k = 0; k < nf; k++) s += D[MAXR * i + k] * b[k];
            lam[f[i]] = s;
        }
    }
    for (int r = 0; r < m; r++)
        if (R->kind[r] != ROW_EQ) lam[r] = fmin(fmax(acc[r] + lam[r], R->lo[r]), R->hi[r]) - acc[r];
    if (hold) {
        /* the held solve may only take energy from the side that answers: with P = G_X^T lambda,
         * dKE_X = lambda . (G_X V_X) + 1/2 lambda . K_X lambda. A side that would gain (yanked along by
         * a fast lower body: a ragdoll's torso by a leg bouncing off a step) is solved with both bodies
         * answering instead, as S1 does */
        const double(*g)[6] = hold == 1 ? (const double(*)[6])R->gB : (const double(*)[6])R->gA;
        const double *xx = hold == 1 ? xb : xa;
        double dke = 0;
        for (int r = 0; r < m; r++) {
            double kl = 0;
            for (int c = 0; c < m; c++) kl += K[MAXR * r + c] * lam[c];
            dke += lam[r] * (dot6(g[r], xx) + 0.5 * kl);
        }
        if (dke > 0) {
            jt->motor_sat = sat;
            vel_node(js, p, v, om, n, 0);
            return;
        }
    }
    for (int r = 0; r < m; r++) {
        acc[r] += lam[r];
        if (R->kind[r] == ROW_MOTOR) jt->motor_used += lam[r];
    }
    if (!hold) {
        apply_node(js, p, lam, 1, v, om, NULL, NULL, n);
        return;
    }
    const int x = hold == 1 ? jt->ib : jt->ia; /* the side that answers */
    const double(*wg)[6] = hold == 1 ? (const double(*)[6])R->wB : (const double(*)[6])R->wA;
    if (x >= n) return;
    for (int r = 0; r < m; r++) {
        v[x] = v3_add(v[x], v3(lam[r] * wg[r][0], lam[r] * wg[r][1], lam[r] * wg[r][2]));
        om[x] = v3_add(om[x], v3(lam[r] * wg[r][3], lam[r] * wg[r][4], lam[r] * wg[r][5]));
    }
}

/* The split impulses' pseudo velocities (impulse.c) with the joints: each joint's equality rows brought
 * to zero relative pseudo velocity on its own block, K_ee dlambda = -u_e (no accumulation: no bounds), so
 * the displacement that pushes a jointed body out of an overlap moves its partners with it. Without it,
 * pre-stabilization took most of such a displacement back (measured: a ragdoll that landed 6 cm deep in
 * the floor was still 2.8 cm deep 90 steps later and needed 5 s to get out; with it, 2.6 mm, the contact
 * slop, 90 steps later). Limit and motor rows stay out: they concern the real velocities. */
void joints_split(imp_world *w, solver_bodies *sb)
{
    imp_vec3 *vp = sb->vp, *wp = sb->wp;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    for (int p = 0; p < js->nn; p++) {
        const jrows *R = &js->rows[p];
        const joint *jt = &js->j[js->nodes[p]];
        int e[MAXR], me = 0;
        for (int r = 0; r < R->m; r++)
            if (R->kind[r] == ROW_EQ) e[me++] = r;
        if (!me) continue;
        const imp_vec3 va = vp[jt->ia], wa = wp[jt->ia], vb = vp[jt->ib], wb = wp[jt->ib];
        const double xa[6] = {va.x, va.y, va.z, wa.x, wa.y, wa.z}, xb[6] = {vb.x, vb.y, vb.z, wb.x, wb.y, wb.z};
        const double *K = js->vK + BS * (size_t)p;
        double D[BS], rhs[MAXR], lam[MAXR] = {0};
        for (int i = 0; i < me; i++) {
            rhs[i] = -dot6(R->gA[e[i]], xa) - dot6(R->gB[e[i]], xb);
            for (int k = 0; k < me; k++) D[MAXR * i + k] = K[MAXR * e[i] + e[k]];
            D[MAXR * i + i] += 1e-10 * fabs(D[MAXR * i + i]) + 1e-300;
        }
        if (!inv_block(D, me)) continue;
        for (int i = 0; i < me; i++) {
            double s = 0;
            for (int k = 0; k < me; k++) s += D[MAXR * i + k] * rhs[k];
            lam[e[i]] = s;
        }
        apply_node(js, p, lam, 1, vp, wp, NULL, NULL, n);
    }
}

void joints_level(imp_world *w, solver_bodies *sb, int lo, int hi, const int *blevel, bool shock)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    for (int p = 0; p < js->nn; p++) {
        const joint *jt = &js->j[js->nodes[p]];
        int la = jt->ia < n ? blevel[jt->ia] : 0, lb = jt->ib < n ? blevel[jt->ib] : 0;
        int l = la > lb ? la : lb;
        if (l >= lo && l < hi) vel_node(js, p, v, om, n, shock && la != lb ? (la < lb ? 1 : 2) : 0);
    }
}

/* The fallback when S1's Newton stalls (no solution near: with the impulse directions G fixed at time n
 * the predicted constraints need not be reachable, which happens on long taut chains at coarse steps):
 * Newton whose directions follow the iterate. At V_k the rows' derivatives C (dF/dV) give G = C^T / h
 * (rows_normals), and the smallest step in the mass metric that zeroes the linearization,
 *     min 1/2 |dV|_M^2  subject to  F(V_k) + C dV = 0   =>   dV = W C^T mu,  (C W C^T) mu = -F(V_k),
 * is the same sparse solve. This converges quadratically where a solution exists (measured, 50 capsule
 * links at 1/60: 2-4 iterations to 1e-9 m, where the Gauss-Newton projection of V_0 that was the
 * fallback before, rhs C (V_k - V_0) - F, crept at a ratio of ~0.5 an iteration and needed 10-20); its
 * limit is the mass-metric projection of V_0 to first order. A line search on |F|^2 keeps every iterate
 * no worse than the last, and a rejected step raises the Levenberg-Marquardt damping. */
/* the constraint normals as directions, G = C^T / h (the impulse of a point row is then t at the
 * predicted articulation point, turned by J_l^T), with W G: then K = C W C^T / h is symmetric positive
 * semidefinite and every Newton step a descent direction of |F|^2 (Gauss-Newton: the smallest step in the
 * mass metric that zeroes the linearization) */
static void rows_normals(struct joint_set *js, int n, const imp_mat3 *Iinv, const double *im, double h)
{
    for (int p = 0; p < js->nn; p++) {
        jrows *R = &js->rows[p];
        const joint *jt = &js->j[js->nodes[p]];
        const int a = jt->ia, b = jt->ib;
        bool da = a < n && im[a] > 0, db = b < n && im[b] > 0;
        for (int r = 0; r < R->m; r++) {
            for (int k = 0; k < 6; k++) R->gA[r][k] = R->cA[r][k] / h, R->gB[r][k] = R->cB[r][k] / h;
            const double *ga = R->gA[r], *gb = R->gB[r];
            imp_vec3 la = v3_scale(v3(ga[0], ga[1], ga[2]), da ? im[a] : 0), lb = v3_scale(v3(gb[0], gb[1], gb[2]), db ? im[b] : 0);
            imp_vec3 wa = da ? m3_mul_v(Iinv[a], v3(ga[3], ga[4], ga[5])) : v3(0, 0, 0);
            imp_vec3 wb = db ? m3_mul_v(Iinv[b], v3(gb[3], gb[4], gb[5])) : v3(0, 0, 0);
            set6(R->wA[r], la, wa), set6(R->wB[r], lb, wb);
        }
    }
}

static double project(imp_world *w, int n, const imp_mat3 *Iinv, const double *im, double h, double worst, double n2)
{
    struct joint_set *js = w->joints;
    double mu = 1e-9;
    if (n2 < 0) worst = eval_all(w, n, Iinv, im, h, &n2); /* else the rows hold the residuals at V, with C */
    for (int it = 0; it < 2 * NEWTON_ITERS && worst > FINAL_TOL; it++) {
        deriv_all(js, h);
        rows_normals(js, n, Iinv, im, h);
        for (int p = 0; p < js->nn; p++)
            for (int r = 0; r < js->rows[p].m; r++) js->rhs[MAXR * p + r] = -js->rows[p].f[r];
        assemble(js, n, mu);
        if (!factor(js)) break;
        solve(js);
        /* the step dV = W G dlambda into tv, tw */
        for (int i = 0; i <= n; i++) js->tv[i] = js->tw[i] = v3(0, 0, 0);
        for (int p = 0; p < js->nn; p++) apply_node(js, p, js->sol + MAXR * p, 1, js->tv, js->tw, NULL, NULL, n);
        double t2 = n2, tw = worst, at = 0;
        bool ok = false;
        for (int ls = 0; ls < 3 && !ok; ls++) {
            double alpha = ls == 0 ? 1 : ls == 1 ? 0.5 : 0.25;
            for (int i = 0; i <= n; i++) js->pv[i] = v3_mad(js->pv[i], js->tv[i], alpha - at), js->pw[i] = v3_mad(js->pw[i], js->tw[i], alpha - at);
            js->epoch++;
            at = alpha;
            tw = eval_trial(w, n, Iinv, im, h, &t2);
            ok = t2 < n2;
        }
        if (!ok) { /* back to V_k, and damp harder (Levenberg-Marquardt: a shorter step, closer to the gradient) */
            for (int i = 0; i <= n; i++) js->pv[i] = v3_mad(js->pv[i], js->tv[i], -at), js->pw[i] = v3_mad(js->pw[i], js->tw[i], -at);
            js->epoch++;
            worst = eval_all(w, n, Iinv, im, h, &n2);
            mu = mu * 10 + 1e-4;
            if (mu > 1e6) break;
            continue;
        }
        mu = at == 1 ? fmax(mu * 0.1, 1e-9) : mu;
        n2 = t2, worst = tw;
    }
    return worst;
}

/* Pre-stabilization (S1 section IV; the header's paragraph): S1's sweeps, then the global damped Newton */
void joints_pre_stabilize(imp_world *w, solver_bodies *sb)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const imp_vec3 *vp = sb->vp, *wp = sb->wp;
    const imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    collect_nodes(w, n, im);
    if (!js->nn) return;
    for (int i = 0; i <= n; i++) js->pv[i] = v3_add(v[i], vp[i]), js->pw[i] = v3_add(om[i], wp[i]);
    js->epoch++, js->cache_h = h, js->keep = 0;
    for (int p = 0; p < js->nn; p++) js->j[js->nodes[p]].pre_side = 0;
    /* impulse directions and active limit rows (fixed through the global solve), with the residuals */
    double n2, worst = build_all(w, n, Iinv, im, h, &n2, true);
    /* S1's sweeps: each joint's own Newton in turn, the tolerance tightening from sweep to sweep; kept
     * only when they lower |F| over all joints (the state before them is saved) */
    if ((PRE_SWEEPS || js->loops) && worst > FINAL_TOL) {
        double tol = 1e-4, a2;
        for (int i = 0; i <= n; i++) js->sv[i] = js->pv[i], js->sw[i] = js->pw[i], js->tv[i] = v[i], js->tw[i] = om[i];
        for (int sweep = 0; sweep < (PRE_SWEEPS > 1 ? PRE_SWEEPS : 1); sweep++, tol *= 0.01)
            for (int kk = 0; kk < js->nn; kk++) solve_one(w, sweep & 1 ? js->nn - 1 - kk : kk, n, Iinv, im, h, tol, SWEEP_ITERS, js->pv, js->pw, v, om, false);
        double wa = build_all(w, n, Iinv, im, h, &a2, false);
        if (a2 <= n2) {
            n2 = a2, worst = wa;
        } else {
            for (int i = 0; i <= n; i++) js->pv[i] = js->sv[i], js->pw[i] = js->sw[i], v[i] = js->tv[i], om[i] = js->tw[i];
            js->epoch++;
            worst = build_all(w, n, Iinv, im, h, &n2, false);
        }
    }
    /* the global Newton on every row at once: the sparse solve and a backtracking line search (alpha = 1,
     * 1/2, 1/4) on |F|^2. S1's directions G are fixed, and where the predicted constraints are out of
     * their reach the iteration stalls well above the tolerance: a step that lowers nothing is undone,
     * and that, a step the line search had to shorten, or one that cuts the largest residual by less than
     * STALL_RATIO (Newton near a reachable solution cuts it by far more) hands over to the fallback below
     * at once (waiting for the damped retries cost as much as the rest of the step on a whipping chain).
     * Where the joints close a loop the Newton keeps its Levenberg-Marquardt retries (mu raised on a
     * rejected step, two failures end it) and hands over only then: measured, the net scene handed over
     * early ran hotter (fastest body 11-17 m/s against 7.4) and blew up under a change of rounding. */
    double mu = 1e-9;
    int fails = 0;
    for (int round = 0; round < 3; round++) {
        for (int it = 0; it < NEWTON_ITERS && worst > FINAL_TOL && fails < 2; it++) {
            deriv_all(js, h);
            for (int p = 0; p < js->nn; p++)
                for (int r = 0; r < js->rows[p].m; r++) js->rhs[MAXR * p + r] = -js->rows[p].f[r];
            assemble(js, n, mu);
            if (!factor(js)) {
                mu = mu * 100 + 1e-6, fails++;
                continue;
            }
            solve(js);
            double alpha = 1, applied = 0, t2 = n2, tw = worst, last_w = worst;
            bool ok = false;
            for (int ls = 0; ls < 3 && !ok; ls++, alpha *= 0.5) {
                for (int p = 0; p < js->nn; p++) apply_node(js, p, js->sol + MAXR * p, alpha - applied, js->pv, js->pw, v, om, n);
                applied = alpha;
                tw = eval_trial(w, n, Iinv, im, h, &t2);
                ok = t2 < (1 - 1e-4 * alpha) * n2;
            }
            if (ok) {
                n2 = t2, worst = tw;
                if (js->loops) mu = applied == 1 ? fmax(mu * 0.1, 1e-9) : mu * 10;
                else if (applied < 1 || tw > STALL_RATIO * last_w) break; /* not Newton's quadratic pace: project */
            } else {
                for (int p = 0; p < js->nn; p++) apply_node(js, p, js->sol + MAXR * p, -applied, js->pv, js->pw, v, om, n);
                worst = eval_all(w, n, Iinv, im, h, &n2);
                if (!js->loops) break;
                mu = mu * 100 + 1e-6, fails++; /* closed loops: damped retries before the fallback */
            }
        }
        /* a limit the solve carried its coordinate past (not met at the first prediction): its row joins
         * (the impulse directions are those of now, unchanged) and the Newton goes on */
        bool limits = false;
        for (int p = 0; p < js->nn && !limits; p++) limits = js->j[js->nodes[p]].has_limits;
        if (!limits || fails >= 2) break;
        int lim0 = 0, lim1 = 0;
        for (int p = 0; p < js->nn; p++)
            for (int r = 0; r < js->rows[p].m; r++) lim0 += js->rows[p].kind[r] == ROW_LIMIT;
        worst = build_all(w, n, Iinv, im, h, &n2, false);
        for (int p = 0; p < js->nn; p++)
            for (int r = 0; r < js->rows[p].m; r++) lim1 += js->rows[p].kind[r] == ROW_LIMIT;
        if (lim1 == lim0) break;
    }
    if (worst > 1e-8) {
        double pw = project(w, n, Iinv, im, h, worst, n2);
        /* still far (a joint broken open by an earlier failure): aim at part of the way, as a
         * continuation, so the next steps close it instead of one violent step that cannot. The errors
         * now (the prediction with h = 0) are built in a scratch copy of the row (what a residual build
         * reads: the sides now, the rows and their targets), so the rows keep the residuals and
         * derivatives of the last iterate, where the continuation starts */
        for (int p = 0; p < js->nn && pw > 1e-6; p++) {
            jrows *R = &js->rows[p], T;
            T.m = R->m, T.lim_target = R->lim_target, T.mot_target = R->mot_target, T.sA = R->sA, T.sB = R->sB;
            memcpy(T.kind, R->kind, sizeof T.kind);
            rows_build(w, &js->j[js->nodes[p]], &T, n, js->pv, js->pw, Iinv, im, 0, true, false, false);
            memcpy(R->e0, T.f, sizeof R->e0);
            for (int r = 0; r < R->m; r++)
                if (R->kind[r] == ROW_MOTOR) R->e0[r] = 0; /* a motor's target is a motion, not an error */
        }
        for (js->keep = 0.5; pw > 1e-6 && js->keep < 0.9; js->keep = 1 - 0.5 * (1 - js->keep)) pw = project(w, n, Iinv, im, h, pw, -1);
        js->keep = 0;
        for (int i = 0; i < n; i++)
            if (js->jointed[i] && im[i] > 0) v[i] = v3_sub(js->pv[i], vp[i]), om[i] = v3_sub(js->pw[i], wp[i]);
    }
    js->pre_h = h; /* pv, pw hold the predicted velocities of this step (joints_positions) */
}

void joints_positions(imp_world *w, solver_bodies *sb, const double *states0)
{
    imp_vec3 *v = sb->v, *om = sb->w;
    const imp_vec3 *vp = sb->vp, *wp = sb->wp;
    imp_mat3 *Iinv = sb->Iinv;
    const double *im = sb->im, h = sb->h;
    const int n = sb->n;
    struct joint_set *js = w->joints;
    if (!js || !js->ids.count) return;
    /* the predicted velocities pre-stabilization converged on (v + v_p there, up to rounding) and, where
     * its last evaluation was at them, its predicted rotations: the positions are exactly the
     * prediction whose joint errors it made < 1e-9 */
    const bool pre = js->pre_h == h && js->bcap > n && !w->settings.planar; /* (planar: impulse.c projects v, v_p after) */
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        const double *X0 = states0 + BODY_DIM * i;
        double *X = w->bodies->state + BODY_DIM * i;
        const imp_vec3 vv = pre ? js->pv[i] : v3_add(v[i], vp[i]), ww = pre ? js->pw[i] : v3_add(om[i], wp[i]);
        v3_store(X, v3_add(v3_load(X0), v3_scale(vv, h)));
        imp_quat q;
        if (pre && js->bepoch[i] == js->epoch && js->bseen[i] == js->bver[i] && !memcmp(&js->bqraw[i], X0 + 3, sizeof(imp_quat))) {
            q = js->bq1[i];
        } else {
            imp_mat3 unused;
            predict_rotation(quat_normalize(quat(X0[3], X0[4], X0[5], X0[6])), ww, h, &q, &unused);
        }
        X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
        /* as impulse_step loads it next step (bit for bit: the kept post-stabilization factors), and as
         * side_eval would find it */
        const imp_quat qn = quat_normalize(q);
        const imp_mat3 R = quat_to_m3(qn);
        Iinv[i] = m3_rotate_tensor(R, w->bodies->body[i].Ibody_inv);
        if (js->bcap > i) memcpy(&js->bqraw[i], X + 3, sizeof(imp_quat)), js->bqn[i] = qn, js->bR[i] = R;
    } /* (the shapes follow in the step's contact update, or as the body falls asleep: impulse.c) */
    joints_post_stabilize(w, sb, true); /* with the motors (what is left of max h) */
    for (int i = 0; i < n; i++) {
        if (!js->jointed[i] || im[i] == 0) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        const imp_mat3 R = js->bcap > i ? js->bR[i] : quat_to_m3(quat_of(X));
        v3_store(X + 7, v3_scale(v[i], w->bodies->body[i].mass));
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(R, w->bodies->body[i].Ibody), om[i]));
    }
    /* the hinge angles, unwrapped turn by turn */
    for (int k = 0; k < js->ids.count; k++) {
        joint *jt = &js->j[k];
        if (jt->ia < 0 || jt->ib < 0 || !angular_free(jt->type)) continue;
        jside A, B;
        side_eval(w, jt->ia, n, jt->la, jt->fa, NULL, true, &A);
        side_eval(w, jt->ib, n, jt->lb, jt->fb, NULL, true, &B);
        jt->angle = rel_angle(A.F, B.F, jt->angle);
    }
}

int joints_rows(const imp_world *w, int k, joint_row out[6])
{
    if (!w->joints || k < 0 || k >= w->joints->ids.count) return 0;
    joint jt = w->joints->j[k];
    const int n = w->bodies->ids.count;
    if (!joint_bodies(w, &jt, n)) return 0;
    jt.has_limits = false;
    jrows R;
    rows_build(w, &jt, &R, n, NULL, NULL, NULL, NULL, 0, false, true, false);
    jside A, B;
    side_eval(w, jt.ia, n, jt.la, jt.fa, NULL, true, &A);
    side_eval(w, jt.ib, n, jt.lb, jt.fb, NULL, true, &B);
    for (int r = 0; r < R.m; r++) {
        const double *g = R.gA[r];
        bool ang = g[0] == 0 && g[1] == 0 && g[2] == 0;
        out[r].a = jt.a, out[r].b = jt.b, out[r].pa = A.p, out[r].pb = B.p, out[r].angular = ang;
        out[r].fa = jt.fa, out[r].fb = jt.fb;
        out[r].dir = ang ? v3(g[3], g[4], g[5]) : v3(g[0], g[1], g[2]);
    }
    return R.m;
}

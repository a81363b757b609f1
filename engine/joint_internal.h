/* joint_internal.h: what the joint files share: the joints, the rows of a joint in a stage, and the
 * set that holds both with the solver's tables (joint.c, joint_solve.c, joint_velocity.c, joint_position.c). */
#ifndef IMPETUS_JOINT_INTERNAL_H
#define IMPETUS_JOINT_INTERNAL_H

#include <stdint.h>

#include "ids.h"
#include "imp_math.h"
#include "impetus.h"
#include "solver_bodies.h"

#define MAXR 7            /* rows per joint: a hinge, twist or slider at its limit with a motor has 7 */
#define BS (MAXR * MAXR)  /* a block's storage (row stride MAXR) */

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
static inline void *cgrow(void *p, size_t elem, int *cap, int need)
{
    if (need <= *cap) return p;
    *cap = need * 3 / 2 + 16;
    return ids_grow(p, elem, *cap);
}

static inline imp_quat quat_of(const double *X) { return quat_normalize(quat(X[3], X[4], X[5], X[6])); }

static inline bool angular_free(imp_joint_type t) { return t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST; }

static inline void set6(double *o, imp_vec3 l, imp_vec3 a) { o[0] = l.x, o[1] = l.y, o[2] = l.z, o[3] = a.x, o[4] = a.y, o[5] = a.z; }

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* fmax(a, b) for a that is not NaN (a NaN b leaves a, as fmax does), inlined in the residual loops */
static inline double fmax_num(double a, double b) { return b > a ? b : a; }

/* W g of every row of R: the velocity change per unit multiplier (zero on a side that does not move) */
static inline void joint_rows_weights(jrows *R, const imp_mat3 *Iinv, const double *im)
{
    const jside *A = &R->sA, *B = &R->sB;
    for (int r = 0; r < R->m; r++) {
        const double *ga = R->gA[r], *gb = R->gB[r];
        imp_vec3 la = v3_scale(v3(ga[0], ga[1], ga[2]), A->dyn ? im[A->i] : 0), lb = v3_scale(v3(gb[0], gb[1], gb[2]), B->dyn ? im[B->i] : 0);
        imp_vec3 wa = A->dyn ? m3_mul_v(Iinv[A->i], v3(ga[3], ga[4], ga[5])) : v3(0, 0, 0);
        imp_vec3 wb = B->dyn ? m3_mul_v(Iinv[B->i], v3(gb[3], gb[4], gb[5])) : v3(0, 0, 0);
        set6(R->wA[r], la, wa), set6(R->wB[r], lb, wb);
    }
}

/* joint.c: the sides of a joint and its rows */
void joint_predict_rotation(imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL);
void joint_side_now(const imp_world *w, int i, int n, imp_vec3 l, imp_quat f, const double *im, bool frame, jside *s);
double joint_hinge_angle(imp_quat FA, imp_quat FB, double near);
void joint_rows_point_derivs(jrows *R, double h);
void joint_rows_velocity(const imp_world *w, joint *jt, jrows *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                         const imp_mat3 *Iinv, const double *im, double h, bool directions, bool motor);
void joint_rows_predicted(const imp_world *w, joint *jt, jrows *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                          const imp_mat3 *Iinv, const double *im, double h, bool directions);

#endif

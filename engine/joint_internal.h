/* joint_internal.h: what the joint files share: the joints, the rows of a joint in a stage, and the
 * set that holds both with the solver's tables (joint.c, joint_solve.c, joint_velocity.c, joint_position.c). */
#ifndef IMPETUS_JOINT_INTERNAL_H
#define IMPETUS_JOINT_INTERNAL_H

#include <stdint.h>

#include "ids.h"
#include "imp_math.h"
#include "impetus.h"
#include "solver_bodies.h"

#define MAX_ROWS 7                          /* rows per joint: a hinge, twist or slider at its limit with a motor has 7 */
#define BLOCK_DOUBLES (MAX_ROWS * MAX_ROWS)  /* a block's storage (row stride MAX_ROWS)                                   */
#define DIR_KEY 36                          /* what a plain ball joint's directions depend on (row_block.dir_key)           */

/* a joint: its type, its frame in each body (aligned at creation), its limits and motor, and what a step
 * learns of it */
typedef struct joint {
    imp_joint_type type;
    imp_id a, b;            /* b null: the static world                                              */
    imp_vec3 la, lb;        /* articulation point in A's frame, in B's (or the world's)              */
    imp_quat fa, fb;        /* the joint frame (x = axis) in A's frame, in B's                       */
    bool has_limits, has_motor;
    double lo, hi;          /* hinge/twist rad, prismatic m; point: hi = swing half angle             */
    double speed, max;      /* motor: target rate (rad/s or m/s), largest force or torque            */
    bool woke;              /* a body of it is gone and its partner was woken                        */
    int ia, ib;             /* dense body indices of this step; the world is n                       */
    uint8_t axis_sides;     /* ... and which of its points are on a symmetry axis (joint_axis_sides)  */
    uint8_t fallback_run;   /* joint_position.c: the steps in a row (1 .. RETRY_S1) whose pre-stabilization
                               took the fallback, the same in every joint of the stage (in the padding
                               before angle: a snapshot keeps it, and sizeof(joint) is unchanged)       */
    double angle;           /* hinge/twist: the unwrapped angle at the end of the last step          */
    double motor_used;      /* the motor's impulse so far in this step (|.| <= max h over the step)  */
    bool motor_sat;         /* the motor ran out of max h in this step's velocity stages             */
    int pre_side;           /* pre-stabilization: the limit met in this step (+1 lo, -1 hi, 0 none)  */
    double pre_bound;       /* ... and its bound: a limit once met stays a row for the stage         */
    /* joint_force.c: what it applied (the impulse on A this step: linear, and angular about A's centre,
     * N s; the force and torque of the last step), and where it breaks (0: never) */
    double stiffness, damping, rest; /* a spring's (joint_force.c)                                         */
    bool has_twist;         /* a point joint's twist limit: A's frame about its x axis relative to B's, */
    double twist_lo, twist_hi; /* the twist of their swing-twist split, stays in [lo, hi] (rad)         */
    int twist_pre_side;     /* ... met in this step's pre-stabilization (as pre_side)                   */
    double twist_pre_bound;
    imp_vec3 motor_velocity; /* a point joint's motor: the target omega_A - omega_B (world, rad/s)       */
    double motor_used_axis[3]; /* ... its impulse so far in this step about x, y, z (|.| <= max h each)  */
    double impulse[6], impulse_saved[6];
    imp_vec3 force, torque;
    double break_force, break_torque;
} joint;

/* a side of a joint: now (centre x, body rotation q, offset c, frame F) and predicted (c1, p1, F1) */
typedef struct joint_side {
    int i;                  /* dense body, n for the world                                           */
    bool moves;             /* inverse mass > 0                                                      */
    imp_vec3 x, c, p;       /* centre, offset, articulation point (now)                              */
    imp_quat F, q;          /* frame now (world; unset for a plain ball joint), body orientation now */
    imp_vec3 c1, p1;        /* predicted offset and articulation point                               */
    imp_quat F1;            /* predicted frame (unset for a plain ball joint)                        */
    imp_mat3 HL;            /* h J_l(h omega): d omega -> dtheta of the prediction                    */
} joint_side;

enum { ROW_EQ, ROW_LIMIT, ROW_MOTOR };

/* the rows of one active joint in one stage: its block of rows of K */
typedef struct row_block {
    int m;                                  /* rows                                                  */
    int kind[MAX_ROWS];                     /* ROW_*                                                 */
    double f[MAX_ROWS];                     /* residual (pre) or right-hand side target - u (post)   */
    double gA[MAX_ROWS][6], gB[MAX_ROWS][6]; /* impulse per unit multiplier on A, B: (linear, angular) */
    double wA[MAX_ROWS][6], wB[MAX_ROWS][6]; /* W g: the velocity change per unit multiplier          */
    double cA[MAX_ROWS][6], cB[MAX_ROWS][6]; /* C: d row / d (v, omega) of A, B                       */
    double lo[MAX_ROWS], hi[MAX_ROWS];      /* post: multiplier bounds                               */
    bool fixed[MAX_ROWS];                   /* post: held at a bound by the active set               */
    double limit_target;                    /* pre: the bound a limit row drives its coordinate to   */
    double motor_target;                    /* pre: the coordinate a motor row drives it to (now + h speed) */
    double error_now[MAX_ROWS];             /* pre: the row's error now (the prediction with h = 0)  */
    joint_side sA, sB;                      /* the two sides (kept through a stage)                  */
    bool derivs_pending;                    /* pre: C not yet built for f (a plain ball joint in a line
                                               search's trial: joint_rows_point_derivs)              */
    bool axis_rows;                         /* rows 0-2 are linear along x, y, z (block_add_cwg_axes) */
    int twist_row;                          /* a point joint's twist limit row (-1: none)             */
    double motor_speed[MAX_ROWS];           /* a motor row's target rate (the joint's speed, or a point
                                               joint's motor velocity along the row)                  */
    int motor_axis[MAX_ROWS];               /* a point joint's motor row: its axis (0..2), else -1    */
    double twist_target;                    /* pre: the bound it drives the twist to                  */
    bool dir_valid;                         /* a plain ball joint's directions (G, W G, the kinds and
                                               bounds) were built from dir_key and are untouched since */
    double dir_key[DIR_KEY];                /* ... the sides' bodies, centres, offsets, 1/m and I^-1  */
    unsigned dir_version;                   /* changes whenever m, G or W G may have changed          */
} row_block;

/* The joints of a world (w->joints) and the tables of their stages. Nodes of the sparse solve: the
 * active joints 0 .. node_count-1, then the hub bodies up to node_total-1. Per-body tables have
 * body_table_cap entries; every table grows and is kept (no allocation in a steady step). */
struct joint_set {
    /* joint.c: the store */
    idtable ids;
    joint *joint;
    int joint_cap;

    /* joint.c, joints_prepare: this step's topology */
    uint8_t *jointed;               /* per body: an awake dynamic body with a live joint             */
    int body_cap;
    uint64_t *pairs;                /* sorted (lo << 32 | hi) dense body pairs joined: no contact     */
    int npairs, pair_cap;
    int *island_parent;             /* union-find of the joint islands of dynamic bodies (sleeping)   */
    int *loop_parent;               /* union-find with all that does not move as one node (n)         */
    bool loops;                     /* the joints close a loop (through bodies or the world)          */
    int *pivot;                     /* joint_position.c: per body, the joint it turns about (-1: none) */
    uint8_t *half_kick;             /* per body: its forces' impulse in two halves (joints_mark_half_kicks) */

    /* joint.c: per body, the rotation of its state quaternion (joint_side_now) */
    imp_quat *body_q_state;         /* the state quaternion seen                                      */
    imp_quat *body_q;               /* ... normalized                                                 */
    imp_mat3 *body_R;               /* ... as a matrix                                                */

    /* joint.c, joint_side_predict: per body, the prediction of pre-stabilization, valid while
     * pred_version == vel_version (the body's predicted velocity unchanged) and pred_epoch == epoch */
    imp_quat *pred_q;               /* the turn of q over h                                           */
    imp_mat3 *pred_R, *pred_HL;     /* ... as a matrix; d(theta)/d(omega)                             */
    unsigned *vel_version, *pred_version, *pred_epoch, epoch;
    double pred_cache_h;            /* the step of the cached predictions                             */
    /* ... and of an axially symmetric body as its joints on the symmetry axis see it (rot_axial_turn),
     * valid while axis_version == vel_version and axis_epoch == epoch */
    imp_quat *axis_e;               /* the turn about L                                               */
    imp_mat3 *axis_R, *axis_HL;     /* ... as a matrix, and HL for the points on the axis             */
    unsigned *axis_version, *axis_epoch;

    /* joint_solve.c: the active joints, their rows and the elimination structure */
    int *nodes, node_count;         /* node -> joint                                                  */
    row_block *rows;                /* per node                                                       */
    int node_cap;
    int body_table_cap;             /* entries of every per-body table of the stages                  */
    int *body_node_start, *body_nodes; /* body -> the nodes it is a moving side of (CSR)              */
    int *fill_cursor;               /* per body: the CSR fill                                          */
    int *moving_ends, moving_ends_count; /* per node its two moving ends (-1: does not move), as the
                                       structure was built for them                                   */
    int hub_count, node_total, node_total_cap;
    int *hub_node, *node_size;      /* body -> its hub node (-1: none); rows of each node             */
    int *order, *order_pos;         /* elimination order and each node's place in it                  */
    int *upper_start, *upper_node;  /* U(p): the later neighbours of the k-th node eliminated (CSR)  */
    int upper_node_cap, upper_block_cap;
    double *diag;                   /* per node: K_pp, then its inverse (BLOCK_DOUBLES each)          */
    double *upper, *lower;          /* per U entry: K_pq, and L_qp = K_qp D_p^-1 (BLOCK_DOUBLES each)  */
    double *rhs, *sol;              /* per node MAX_ROWS: right-hand side (overwritten), solution     */
    bool blocks3;                   /* every node of the last assembly has 3 rows and none is a hub
                                       (jsolve_solve's fixed-size path)                              */
    unsigned structure_gen;         /* changes with the structure                                     */
    int *coupling, coupling_count, coupling_cap; /* the off-diagonal terms C_pX W_X G_qX^T of the joints p, q
                                       that share a moving body X that is no hub, four ints each: p, q,
                                       the sides of X (bit 0: p's B side, bit 1: q's), the block (an
                                       upper index, or -1 - a lower index)                          */

    /* joint_velocity.c */
    bool post_definite;             /* post: K is positive definite by construction (no check)        */
    double *rhs_kept;               /* post: the right-hand side kept for the check of the solve      */
    double *kept_rows; int kept_rows_cap; /* post: per node m, its dir_version, then G and W G of its rows, of the
                                       factors kept in diag, upper, lower                             */
    unsigned kept_gen;              /* ... the structure generation they were factored in             */
    bool kept_valid;                /* ... diag, upper, lower hold them                               */
    double kept_shift;              /* ... factored with this shift (post_solve)                      */
    double *level_K, *level_Kinv, *level_acc; /* the contact sweeps' rows: K and K^-1 per node, the
                                       multipliers accumulated over the stage                        */
    int level_cap;

    /* joint_position.c */
    imp_vec3 *pred_v, *pred_w;      /* predicted velocities v + v_p, omega + omega_p                  */
    imp_vec3 *saved_v, *saved_w;    /* the predicted velocities before S1's sweep                     */
    imp_vec3 *scratch_v, *scratch_w; /* a step dV (fallback, post_solve's check); the velocities
                                       before S1's sweep                                              */
    double pre_stab_h;              /* pre-stabilization ran this step with this h (pred_v valid)     */
    double keep_error;              /* the fraction of the error now left as the target (0: S1)       */
    bool line_trial;                /* a line search's trial: plain ball joints defer C               */

    /* joint_force.c: the bodies' velocities of the stages (the solver's v): impulses applied to them
     * are the joints' forces (set by each stage's entry; others apply to predictions and scratch) */
    const imp_vec3 *real_v;
};

/* a motor row's multiplier lam counted against its budget of max h in the step */
static inline void joint_motor_used(joint *jt, const row_block *R, int r, double lam)
{
    if (R->motor_axis[r] >= 0) jt->motor_used_axis[R->motor_axis[r]] += lam;
    else jt->motor_used += lam;
}

/* joint_force.c: node p's multipliers lam, times alpha, applied to the bodies' velocities: its joint's impulse */
void joint_impulse_add(struct joint_set *js, int p, const double *lam, double alpha);
/* the impulse j (world, linear) at world point at on body i of joint jt (A or B side; A takes it as is,
 * B's reaction goes to A as -j) */
void joint_impulse_at(const imp_world *w, joint *jt, int i, imp_vec3 j, imp_vec3 at);
/* every joint's impulse so far kept, and put back (a stage that undoes its velocity changes) */
void joints_impulse_save(struct joint_set *js);
void joints_impulse_restore(struct joint_set *js);

/* grow p to hold need elements of size elem when *cap is short (no allocation in a steady step) */
static inline void *table_grow(void *p, size_t elem, int *cap, int need)
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
static inline void joint_rows_weights(row_block *R, const imp_mat3 *Iinv, const double *im)
{
    const joint_side *A = &R->sA, *B = &R->sB;
    for (int r = 0; r < R->m; r++) {
        const double *ga = R->gA[r], *gb = R->gB[r];
        imp_vec3 la = v3_scale(v3(ga[0], ga[1], ga[2]), A->moves ? im[A->i] : 0), lb = v3_scale(v3(gb[0], gb[1], gb[2]), B->moves ? im[B->i] : 0);
        imp_vec3 wa = A->moves ? m3_mul_v(Iinv[A->i], v3(ga[3], ga[4], ga[5])) : v3(0, 0, 0);
        imp_vec3 wb = B->moves ? m3_mul_v(Iinv[B->i], v3(gb[3], gb[4], gb[5])) : v3(0, 0, 0);
        set6(R->wA[r], la, wa), set6(R->wB[r], lb, wb);
    }
}

/* joint.c: the sides of a joint and its rows */
void joint_predict_rotation(const imp_world *w, int i, const double *X0, imp_quat q, imp_vec3 om, double h, imp_quat *q1, imp_mat3 *HL);
void joint_side_now(const imp_world *w, int i, int n, imp_vec3 l, imp_quat f, const double *im, bool frame, joint_side *s);
double joint_hinge_angle(imp_quat FA, imp_quat FB, double near);
void joint_rows_point_derivs(row_block *R, double h);
void joint_rows_velocity(const imp_world *w, joint *jt, row_block *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                         const imp_mat3 *Iinv, const double *im, double h, bool directions, bool motor);
void joint_rows_predicted(const imp_world *w, joint *jt, row_block *R, int n, const imp_vec3 *v, const imp_vec3 *om,
                          const imp_mat3 *Iinv, const double *im, double h, bool directions);

#endif

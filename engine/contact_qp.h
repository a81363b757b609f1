/* contact_qp.h: the exact contact mode: contact forces by an LCP, time of impact, simultaneous impulses (contact_qp.c). */
#ifndef IMPETUS_CONTACT_QP_H
#define IMPETUS_CONTACT_QP_H

#include "imp_math.h"
#include "impetus.h"
#include "parallel.h"
#include "step.h"

/* contact_qp.c: world.contact = "qp" */
void qp_begin_step(imp_world *w, double h);            /* impulses, then the step's resting set     */
int qp_deriv(imp_world *w, const double *X, double *dX); /* adds the resting contact forces to dX   */
void qp_free(imp_world *w);
void qp_step(imp_step *s); /* integrate + collide, cut at impacts */

/* the exact mode's contacts, bodies and state (contact_qp.c): here so that snapshot.c saves what outlives
 * a step (settings, counters, ball joints, the friction warm start, the contact list) */
typedef struct qp_contact {
    /* what the step's passes over every contact read (the resting set's filter, the islands and parts,
     * the warm start, the time-of-impact record): its first 64 bytes, one cache line */
    int ka, kb;             /* dense body index of A and B for kinematics, -1: a fixed collider    */
    bool edge;
    bool face_a;            /* vertex/face on A's face: n turns with A                              */
    bool points;            /* the normal is the line between the two points: two curved sides, or
                             * a curved side on an edge or a vertex of B                           */
    bool eq;                /* a joint row: equality (w = 0, f free); ln a world direction, or B's  */
    bool in_b;              /* a joint row whose direction is fixed in B (ln in B's frame)          */
    bool angular;           /* a joint row on the relative angular velocity along n (no point)      */
    signed char ang_ref;    /* an angular row's position error: 0 none, 2 the free axis (lea in A's
                             * frame, leb in B's must stay parallel), 3 the relative rotation q0     */
    uint64_t key;           /* the manifold's pair (qp_pair_key; 0 for joint rows)                   */
    double d, dd;           /* separation and its rate d' (at the current state)                     */
    double force;           /* last solve: force magnitude (or impulse)                             */
    imp_id ida, idb;        /* body ids (null for colliders)                                        */
    imp_vec3 la, lb;        /* the contact point on A / on B: body frame (about the centre of mass), or world */
    imp_vec3 ln;            /* the normal: in its face owner's body frame (B's, or A's when face_a), or world */
    imp_vec3 lea, leb;      /* edge/edge: ea in A's frame, eb in B's (or world)                     */
    double rad_a, rad_b;    /* the radius of a curved side (sphere, capsule): its point is on the
                             * core, the centre or the axis, and the surface is rad from it; else 0 */
    imp_quat q0;            /* ang_ref 3: A's orientation relative to B's when held (joint.c's frames) */
    /* evaluated at the current state */
    imp_vec3 p, pb, n, ndot, ra, rb;  /* p: the contact point on A (force application), pb on B; r = p - x */
    imp_vec3 qa, qb;        /* the points whose motion gives d' and d'' (b), relative to each centre of
                             * mass: a core or a vertex, and the point of the other side's plane or core */
    double bvel;            /* the velocity products of d'' (b's part that no force changes)        */
    imp_vec3 tforce;        /* last solve: friction force (or impulse) on A                         */
    double accel;           /* last solve: d''                                                      */
} qp_contact;

typedef struct qp_body {
    imp_quat q;
    imp_vec3 x, v, w, a, alpha, L;
    imp_mat3 R, Iinv;
    double im;              /* 1/m, 0 unless dynamic                                                */
    bool dyn;
} qp_body;

struct qp_state {
    qp_contact *c; int count, cap;
    qp_body *b; int bcap;
    double *A; long Acap;   /* the dense LCP matrix of one island (up to dense_max rows)             */
    double *bv, *f, *wv; int acap; /* one island's vectors (any size)                               */
    double *ball; int ballcap; /* every contact's b in a derivative evaluation (with S4's terms)     */
    int dense_max;          /* islands up to this many rows: the pivoting LCP; larger: PGS         */
    imp_vec3 *dv, *dw; int dvcap; /* PGS: each body's velocity (or acceleration) change so far      */
    struct qp_arow *arow; int arowcap; /* the dense A's rows: bodies and torque arms (qp_amatrix)     */
    struct qp_pgs_row *prow; int prowcap; /* PGS: each row's Jacobian and diagonal, fixed over a solve */
    double *pbt; int pbtcap; /* PGS: b_t of an island                                               */
    long pgs;               /* islands solved by the fallback                                        */
    double *dx; int dxcap;  /* a body derivative for the queries                                    */
    imp_lcp_work lcp;
    imp_lcp_info info;
    double h;               /* the step being integrated (extra acceleration)                       */
    double restitution;
    double friction;        /* Coulomb coefficient mu of every QP contact (world.friction, default 0) */
    double *At, *An, *bt; int tcap; /* friction rows of one island: A_tt (2n x 2n), A_tn (2n x n), b_t */
    /* their nonzero entries (rows of contacts that share no body give exact zeros): per friction row
     * the columns of A_tt and of A_tn, per contact the friction rows of its A_tn column, ascending;
     * and the A_tn f + b_t part of each friction row's residual during a round of sweeps */
    int *tt_cols, *tt_count, *tn_cols, *tn_count, *nt_rows, *nt_count; double *t_base;
    double *g; imp_vec3 *t1, *t2; int gcap; /* friction forces and tangent basis, per contact      */
    double *gi;             /* the collision impulses' friction (kept apart from g's warm start)     */
    /* islands (contacts grouped by the dynamic bodies they connect), contacts sorted by island */
    qp_contact *c2; int c2cap; /* the sort's other buffer                                           */
    int *par, *cnt; int parcap; /* union-find parents and counting-sort counters, per body        */
    int *isl; int iscap, nisl;  /* island k is contacts [isl[k], isl[k+1])                         */
    int *isl_neq;           /* joint rows at the head of each island                                 */
    int cur_neq;            /* those of the island being solved                                      */
    /* splitting an island by its guessed clamped set (qp_split_solve): per row its part (-1: a bridge
     * between parts), the rows sorted by part and each part's first, the island's forces and w, and
     * a part's b, friction forces and tangents while it is solved (its contacts copied into c2) */
    int *srow, *sidx, *sstart; double *sf, *sw, *sbn, *sg; imp_vec3 *st1, *st2; int scap;
    int *sa, *sb, *sroot, *sbody; /* per row its dynamic bodies (-1: none); per part its root body; the
                                   * island's bodies once each                                       */
    int *sdirty;            /* per body (a part's root): joined since the part was last solved       */
    /* the step's parts (qp_parts): part p is contacts [pst[p], pend[p]) with pneq[p] joint rows first;
     * island k's parts are fp[k] .. fp[k + 1] - 1, its bridges [bst[k], isl[k + 1]) */
    int *pst, *pend, *pneq, *fp, *bst; int pcap; /* (and sa, sb: pcap each)                   */
    unsigned char *srowkind; /* per row (pcap): 1 a joint row, 2 its last force > 0 (qp_islands for qp_parts) */
    int *ppar; int pparcap; /* the parts' union-find, per body                                       */
    int *eend; int eendcap; /* per island: the end of the rows a derivative evaluation takes first
                             * (an island solved by parts: its bridges come with their check)      */
    int *pdone; imp_lcp_info *pinfo; /* per part: solved by a chunk (qp_parts_part), and its solve's info */
    struct qp_chunk {       /* a chunk's own scratch for its parts' dense solves                      */
        double *A, *f, *wv; struct qp_arow *arow; int cap;
        imp_lcp_work lcp;
    } chunk[PAR_CHUNKS];
    bool placed;            /* the contacts are placed at qp_advance's X0 (its copy in dx)           */
    bool parted;            /* the contacts are in the step's parts order (qp_islands with parts)   */
    struct qp_joint { imp_id a, b; imp_vec3 la, lb; bool live; } *joints; int nj, jcap;
    /* the resting set's points at the start of a (sub)step, sorted by pair (time of impact) */
    struct qp_start_point { uint64_t key; int ka, kb, idx; imp_vec3 la, lb; double pen, now; } *pd; int npd, pdcap;
    struct qp_gather_manifold { int start, count, ka, kb; } *gm; int gmcap; /* qp_gather: per manifold */
    struct qp_keyed { uint64_t key; int idx; } *ks, *ks2; int kscap; /* contacts by key (qp_sort_keyed) */
    /* the last gather's contact points with their last forces, sorted by pair: the first guess of the
     * next gather's points that match them (qp_warm_force) */
    struct qp_last_point { uint64_t key; int ka, idx; imp_vec3 la, lb; double force; } *last; int lastcap;
    bool warm;              /* g holds the last evaluation's friction forces of this contact set      */
    uint64_t sig;           /* the step's contact list, for the warm start across steps              */
    long solves;
    long impacts;           /* times of impact found (regula falsi)                                */
};

#endif

/* impulse.c: the impulse contact mode (world.contact = "impulse", the default).
 *
 * S1 (Weinstein, Teran, Fedkiw, L614-676) gives the step order, after Guendelman, Bridson and Fedkiw
 * 2003 ("Nonconvex rigid bodies with stacking"):
 *
 *   1. collisions    impulses with restitution on the approaching contacts, a few sweeps
 *   2. velocities    v += h (g + F/M), omega += h I^-1 tau, for the bodies that touch something
 *   3. contacts      and joints level by level in the contact graph: sequential impulses with
 *                    Coulomb friction, each manifold a patch (below), warm started, the joints as
 *                    blocks of velocity rows after each level's contacts (joint_velocity.c), then one
 *                    sweep of shock propagation (each level solved against the levels below as if
 *                    they were fixed; a joint between two levels holds its lower body while that takes
 *                    energy from the upper one, else both answer), then the joints' pre-stabilization
 *   4. positions     the world's ODE solver moves x and q with the new velocities (P and L held:
 *                    a rigid body's free rotation stays exact), plus the split-impulse correction;
 *                    jointed bodies turn with L held too (joint_position.c)
 *
 * impulse_step below calls one function per stage, in this order (without joints, stages 1 and 3 island
 * by island on both threads, a large island's sweeps in two halves: "the islands solved apart" below);
 * the contact graph (islands, levels, sleeping) is island.c's, the joints' rows are joint*.c's,
 * continuous collision is toi.c's. The contacts are those of the bodies as the step starts: the collide
 * stage runs after the positions moved, and bodies a script made, moved or destroyed since are collided
 * before the step (world.c).
 * Bodies that touch nothing are integrated by the ODE solver with their forces exactly as without
 * contact response.
 *
 * The impulse (S0 eqs. 8-18). At a contact point p with normal n (out of B towards A), r_a = p - x_a,
 * the relative normal velocity is vrel = n . ((v_a + w_a x r_a) - (v_b + w_b x r_b)). An impulse j n
 * on A and -j n on B changes it by j / m_eff, with
 *
 *     1 / m_eff = 1/M_a + 1/M_b + n . (I_a^-1 (r_a x n)) x r_a + n . (I_b^-1 (r_b x n)) x r_b
 *               = 1/M_a + 1/M_b + (r_a x n) . I_a^-1 (r_a x n) + (r_b x n) . I_b^-1 (r_b x n)
 *
 * so the impulse that makes the normal velocity -e vrel is j = -(1 + e) vrel m_eff. The same formula
 * with a tangent t in place of n gives the friction impulse that stops sliding along t.
 *
 * Sequential impulses (GUIDE trap 10): each sweep visits the points one by one and applies the change
 * of impulse that satisfies that point alone. The impulses are accumulated per point and the sum is
 * clamped, not the increment: normal j_n >= 0 (contacts push), friction |j_t| <= mu j_n (the Coulomb
 * cone, the disc of both tangents together). mu is the static coefficient at a point that is not
 * sliding at the start of the contact stage (slower than 1 cm/s) and the kinetic one otherwise.
 * Accumulated impulses converge to the simultaneous solution where one exists; warm starting applies
 * last step's accumulated impulses first (contact.c carries them with the point ids), so a resting
 * stack starts each step at the impulses that held it and the sweeps only correct the change.
 *
 * Shock propagation (Guendelman et al.): the contact graph's levels are the distance of each body from
 * the static world (static, kinematic and sleeping bodies are level 0). The sweeps visit the points in
 * level order; a final sweep treats, at each contact between different levels, the lower body as if its
 * mass were infinite, so a level can no longer push the levels under it into the ground: tall stacks
 * hold without many iterations.
 *
 * Position error (penetration) is removed by split impulses: a second set of "pseudo" velocities, solved
 * like the normal impulses toward n . dv_p = beta max(depth - slop, 0) / h, moves the bodies apart in
 * the position stage and is then forgotten, so correcting overlap never adds kinetic energy (Baumgarte
 * feedback on the real velocities would make stacks bounce).
 *
 * Materials, per shape, combined per pair: restitution e = max(e_a, e_b) (a rubber ball bounces on
 * anything); friction mu = sqrt(mu_a mu_b), static and kinetic each (ice on anything is slippery).
 * Approaches slower than world.restitution_threshold do not bounce, so resting contacts do not jitter.
 *
 * No allocation per step: the scratch arrays grow to the largest world seen and are kept. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "dense.h"
#include "ids.h"
#include "imp_math.h"
#include "impulse.h"
#include "island.h"
#include "joint.h"
#include "joint_position.h"
#include "joint_velocity.h"
#include "parallel.h"
#include "presolve.h"
#include "shape.h"
#include "solver_bodies.h"
#include "sparse_simd.h"
#include "step.h"
#include "toi.h"
#include "world_parts.h"

#define STICK_SPEED 0.01      /* m/s: a point slower than this at the start uses static friction   */
#define SLOP 0.002            /* m: penetration left alone (keeps resting contacts alive)          */
#define BETA 0.2              /* fraction of the penetration the split impulses remove per step    */
#define COLLISION_SWEEPS 10
#define SHOCK_PASSES 4        /* sweeps over each level's points in the shock propagation stage     */
#define MAX_LEVEL ISLAND_MAX_LEVEL
#define CONVERGED 1e-6        /* a sweep that changes the impulses by less than this fraction ends them */
#define SPLIT_MIN 128         /* manifolds: an island this large is solved in two halves at once     */
#define MAX_SPLIT 8           /* islands split in one step (the rest are solved whole)              */

/* one row of a contact point along a direction d: the lever arms crossed with d, their images under
 * the inverse inertias (the angular velocity a unit impulse along d gives), and the effective mass */
typedef struct contact_row {
    imp_vec3 ca, cb, ia, ib;  /* r_a x d, r_b x d, I_a^-1 (r_a x d), I_b^-1 (r_b x d)              */
    double k;                 /* m_eff = 1 / (1/M_a + 1/M_b + (r_a x d).I_a^-1 (r_a x d) + ...)   */
} contact_row;

/* a contact point: its row along n (the collisions and the split impulses read it per point; the
 * sweeps solve a manifold's points together, as a patch); the rows along t1, t2 are made where a
 * point collides (point_row) */
typedef struct contact_point {
    contact_row row;          /* along n                                                            */
    imp_vec3 n, t1, t2;
    double ima, imb;
    double jn, jp;            /* accumulated normal and split (pseudo) impulses; in the collision
                                 stage jp marks a point that collided                               */
    double gap;               /* max(-depth, 0) / h: the approach speed a near point may have      */
    double bias;              /* beta max(depth - slop, 0) / h: the split impulses' target speed  */
    int a, b;                 /* dense body index; the static world is index n (all zero)          */
} contact_point;

/* the rest of a contact point: what the stages other than the sweeps read */
typedef struct contact_point_info {
    imp_vec3 ra, rb;          /* lever arms from the centres of mass                               */
    int man, k;               /* manifold and point in it                                          */
    int level;                /* contact-graph level: the higher of the two bodies' levels         */
    int island;               /* its island (0 where the islands are not solved apart)             */
    double mu_s, mu_k, e, depth;
} contact_point_info;

/* A manifold's points solved together (see "the patch" below): the matrices of its normal rows and of
 * the three friction rows at its centroid, in slot 0 with both sides answering and in slot 1 with the
 * side shock propagation moves (built when it gets there) */
typedef struct contact_patch {
    int first, count;         /* its points: points[first .. first + count)                        */
    int a, b, level;          /* its bodies (dense; n: the world) and its contact-graph level      */
    int half;                 /* in a split island: its half (0, 1) or 2, between the halves       */
    imp_vec3 n, t1, t2;
    imp_vec3 ra, rb;          /* the centroid's lever arms                                          */
    double rho;               /* the twist's lever: 2/3 of the points' mean distance from the centroid */
    double mu;                /* this step's Coulomb coefficient (static or kinetic)                */
    double lambda[3];         /* accumulated friction: along t1, t2, and the twist about n          */
    double target[2];         /* pre-solve hook: the sliding speed along t1, t2 friction drives to (0) */
    imp_vec3 fa[3], fb[3];    /* the friction rows' angular parts on A and B: r x t1, r x t2, n     */
    imp_vec3 ia[3], ib[3];    /* their images under I_a^-1, I_b^-1                                   */
    int active;               /* the normal rows that pushed in the last solve (a bit set)         */
    double normal[2][16];     /* A of the normal rows (m x m, row stride 4)                         */
    double normal_inv[2][16]; /* (A + eps I)^-1                                                      */
    double eps[2];
    double sub_inv[2][16];    /* (A_SS + eps I)^-1 of the last set S other than every row: sub_set  */
    int sub_set[2];           /* ... (-1: none yet); sub_ok: it could be inverted                   */
    bool sub_ok[2];
    double friction_inv[2][9];/* K^-1 of the three friction rows                                    */
    double ca[3][4], cb[3][4];/* four points' r_a x n, r_b x n by component (lane i: point i), for the
                                 vector code of the resting solve (patch_rest4_avx)                   */
    double rows_t[3][4], rows_fa[3][4], rows_fb[3][4]; /* the friction rows by component (lane r: row r,
                                 lane 3 zero): t1, t2, 0; fa; fb, for patch_friction_avx              */
} contact_patch;

typedef struct impulse_state {
    solver_bodies sb;            /* the bodies' velocities, inverse masses and inertias; n + 1 each  */
    int body_cap, point_cap;
    uint8_t *held;               /* 1: the body takes the velocity stages (it touches something, is
                                    asleep or jointed, or the world is planar): its forces are applied
                                    there and its momenta held through the position update          */
    islands graph;               /* island.c                                                          */
    contact_point *points;       /* the contact points in level order                                */
    contact_point_info *info;    /* their other data, same order                                     */
    int np;                      /* points this step                                                 */
    contact_patch *patches;      /* the live manifolds' patches, in the same order                   */
    int npatch, patch_cap;
    int *level_count;            /* MAX_LEVEL + 2 counters of the level sort                         */
    int *man_ab, *live; int man_cap, nlive; /* per manifold: its two bodies; the manifolds that count */
    /* the islands (worlds without joints: solve_islands): each live manifold's island, the live
     * manifolds in the order their points are laid out, the first patch of each island (nisland + 1),
     * and the islands each parallel chunk solves (chunk_island[c] .. chunk_island[c + 1]) */
    int *man_island, *order, *order_tmp, *island_count, *island_of, *island_first;
    int *man_first;              /* per manifold in solve order: its first point (nlive + 1)         */
    int nisland;
    int chunk_island[PAR_CHUNKS + 1];
    /* the islands split in two halves (split_islands): each body's half (n + 1 of them, -1 unset), the
     * island's bodies while it is cut, each live manifold's half (0, 1; 2: between the halves), and per
     * split island its patches: the halves [first[0], first[1]), [first[1], first[2]) and the patches
     * between them [first[2], first[3]) */
    int *body_half, *half_bodies, *man_half;
    int nsplit;
    struct split_island { int island, first[4]; } split[MAX_SPLIT];
    int njoints;                 /* live joints this step                                            */
    const uint8_t *jointed;      /* per body: has a live joint (joint.c)                             */
    bool level_joints;           /* joints take part in the contact sweeps (there are both)          */
    imp_contact_hit *hits; int hit_count, hit_cap; /* collisions of the last step, one per pair       */
} impulse_state;

void impulse_free(imp_world *w)
{
    impulse_state *s = w->impulse;
    if (!s) return;
    solver_bodies *sb = &s->sb;
    free(sb->v), free(sb->w), free(sb->vp), free(sb->wp), free(sb->Iinv), free(sb->im);
    islands_free(&s->graph);
    free(s->held), free(s->points), free(s->info), free(s->patches), free(s->level_count), free(s->hits), free(s->man_ab), free(s->live);
    free(s->man_island), free(s->order), free(s->order_tmp), free(s->island_count), free(s->island_of), free(s->island_first);
    free(s->man_first), free(s->body_half), free(s->half_bodies), free(s->man_half);
    free(s);
    w->impulse = NULL;
}

static impulse_state *state_get(imp_world *w)
{
    if (!w->impulse) {
        w->impulse = calloc(1, sizeof(impulse_state));
        if (!w->impulse) abort();
        w->impulse->level_count = ids_grow(NULL, sizeof(int), MAX_LEVEL + 2);
    }
    return w->impulse;
}

static void reserve_bodies(impulse_state *s, int n)
{
    if (n + 1 <= s->body_cap) return;
    int c = (n + 1) * 3 / 2 + 16;
    solver_bodies *sb = &s->sb;
    sb->v = ids_grow(sb->v, sizeof(imp_vec3), c), sb->w = ids_grow(sb->w, sizeof(imp_vec3), c);
    sb->vp = ids_grow(sb->vp, sizeof(imp_vec3), c), sb->wp = ids_grow(sb->wp, sizeof(imp_vec3), c);
    sb->Iinv = ids_grow(sb->Iinv, sizeof(imp_mat3), c), sb->im = ids_grow(sb->im, sizeof(double), c);
    s->held = ids_grow(s->held, 1, c);
    s->island_of = ids_grow(s->island_of, sizeof(int), c);
    s->body_half = ids_grow(s->body_half, sizeof(int), c), s->half_bodies = ids_grow(s->half_bodies, sizeof(int), c);
    for (int i = s->body_cap; i < c; i++) s->island_of[i] = s->body_half[i] = -1;
    s->body_cap = c;
}

static void reserve_points(impulse_state *s, int n)
{
    if (n <= s->point_cap) return;
    int c = n * 3 / 2 + 64;
    s->points = ids_grow(s->points, sizeof(contact_point), c), s->info = ids_grow(s->info, sizeof(contact_point_info), c);
    s->point_cap = c;
}

static void reserve_manifolds(impulse_state *s, int nm)
{
    if (nm > s->patch_cap) {
        s->patch_cap = nm * 3 / 2 + 64;
        s->patches = ids_grow(s->patches, sizeof(contact_patch), s->patch_cap);
    }
    if (nm <= s->man_cap && s->man_cap) return; /* (made once even for none: man_first has nlive + 1) */
    s->man_cap = nm * 3 / 2 + 64;
    s->man_ab = ids_grow(s->man_ab, 2 * sizeof(int), s->man_cap);
    s->live = ids_grow(s->live, sizeof(int), s->man_cap);
    s->man_island = ids_grow(s->man_island, sizeof(int), s->man_cap);
    s->order = ids_grow(s->order, sizeof(int), s->man_cap), s->order_tmp = ids_grow(s->order_tmp, sizeof(int), s->man_cap);
    s->island_count = ids_grow(s->island_count, sizeof(int), s->man_cap + 1);
    s->island_first = ids_grow(s->island_first, sizeof(int), s->man_cap + 1);
    s->man_first = ids_grow(s->man_first, sizeof(int), s->man_cap + 1);
    s->man_half = ids_grow(s->man_half, sizeof(int), s->man_cap);
}

/* what a parallel chunk of the stages reads: the world and the solver's state */
typedef struct island_job {
    imp_world *w;
    impulse_state *s;
} island_job;

/* the dense body of a contact side, or n for the static world (colliders, static bodies) */
static int side_body(const imp_world *w, imp_contact_side sd, int n)
{
    if (imp_id_is_null(sd.body)) return n;
    int i = ids_lookup(&w->bodies->ids, sd.body);
    return i < 0 ? n : i;
}

static const shape *side_shape(const imp_world *w, imp_contact_side sd)
{
    if (imp_id_is_null(sd.body)) return NULL;
    int i = ids_lookup(&w->bodies->ids, sd.body);
    if (i < 0 || sd.shape < 0 || sd.shape >= w->bodies->body[i].nshapes) return NULL;
    return &w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[sd.shape]]];
}

/* velocity of row r (direction d): n . dv = d . (v_a - v_b) + (r_a x d) . w_a - (r_b x d) . w_b */
static inline double row_vel(const imp_vec3 *v, const imp_vec3 *w, const contact_point *c, const contact_row *r, imp_vec3 d)
{
    return v3_dot(d, v3_sub(v[c->a], v[c->b])) + v3_dot(r->ca, w[c->a]) - v3_dot(r->cb, w[c->b]);
}

/* impulse j along row r: v_a += j d / M_a, w_a += j I_a^-1 (r_a x d), and the opposite on B */
static inline void row_apply(imp_vec3 *v, imp_vec3 *w, const contact_point *c, const contact_row *r, imp_vec3 d, double j)
{
    const bool ma = c->ima > 0, mb = c->imb > 0; /* (a side that cannot move is not written) */
    if (ma) v[c->a] = v3_mad(v[c->a], d, j * c->ima), w[c->a] = v3_mad(w[c->a], r->ia, j);
    if (mb) v[c->b] = v3_mad(v[c->b], d, -j * c->imb), w[c->b] = v3_mad(w[c->b], r->ib, -j);
}

/* ---- the patch: a manifold's points solved together ------------------------------------------------ *
 * The points of one manifold (up to four corners of a face on a face) are solved as one block, in the
 * sweeps and in shock propagation. Point by point, Gauss-Seidel leaves their normal impulses anywhere
 * along the directions the corners share (four coplanar corners hold a body by three equations; the
 * fourth is redundant), and warm starting carries that choice from step to step: the weight in a tall
 * stack drifts onto one edge of an interface and the column above tips over it. Friction taken per
 * corner is eight rows for an interface's three tangential freedoms: the corners lock in opposing
 * friction that warm starting feeds, and its torques push the normal impulses to the edges.
 *
 * Normal impulses: the patch's m rows at once, w = A j + b >= 0, j >= 0, j . w = 0, A the rows'
 * J M^-1 J^T (S0's A restricted to the patch), b the normal velocities with the patch's own impulses
 * taken out, plus each point's allowed approach (its gap). A is singular for four coplanar corners; it
 * is solved in the proximal form (A + eps I) j = -b + eps j0, j0 the present impulses and eps =
 * PATCH_EPS times A's largest diagonal entry: the minimizer of the LCP's energy plus eps/2 |j - j0|^2.
 * Along A's null space (the redundant corner) j keeps j0, which a contact's first solve (j0 = 0) makes
 * the least-norm share, the weight as evenly over the corners as the torques allow; on A's range the
 * velocity error left is eps (j - j0), zero once the impulses settle (eps j would leave a load-sized
 * approach every step, and the stack would creep down to the slop).
 *
 * Friction: three rows at the patch's centroid c, the tangents t1, t2 (linear rows with lever arms
 * r = c - x) and the twist about n (angular), with the accumulated (lambda1, lambda2) held in the disc
 * mu N and the twist in [-mu N rho, mu N rho], N the patch's normal impulse and rho 2/3 of the points'
 * mean distance from c (uniform pressure over a disc of radius R resists twisting with 2/3 mu N R).
 * One 3 x 3 solve, lambda += -K^-1 u with u the rows' velocities and K = J M^-1 J^T, then the clamp. A
 * single point (rho = 0) has no twist to hold: its two tangents alone (the 3 x 3 step with its twist
 * clamped off stops where K^-1 u has no tangential part, not where u_t = 0: the point would slide while
 * its body turns about n).
 *
 * Shock propagation holds the lower body: the same solves with its inverse mass and inertia zero, with
 * the patch's matrices for that case built with the others (patches_part). */
#define PATCH_EPS 1e-6 /* the regularization of the normal rows' A, relative to its largest diagonal entry */
enum { BOTH, ONLY_A, ONLY_B }; /* which sides of a patch answer its impulses */

/* dense_invert_spd of an m x m block (row stride 4) with m <= 4 a constant, so its loops unroll */
static bool invert4(double *M, int m)
{
    switch (m) {
    case 1: return dense_invert_spd(M, 1, 4);
    case 2: return dense_invert_spd(M, 2, 4);
    case 3: return dense_invert_spd(M, 3, 4);
    default: return dense_invert_spd(M, 4, 4);
    }
}

/* K^-1 of the friction rows and A, (A + eps I)^-1 of the normal rows: in slot 0 with both sides
 * answering, and in slot 1 with the side `shock` alone (ONLY_A, ONLY_B; BOTH: no slot 1). Each
 * entry is the two sides' terms, (1/M_a + 1/M_b) d_r . d_c + (r_a x d_r) . I_a^-1 (r_a x d_c) + (the
 * same on B), so the side-alone slot takes its side's terms from the same products. */
static inline __attribute__((always_inline)) void patch_matrices_m(const solver_bodies *sb, const contact_point *P, contact_patch *p, int shock, const int m)
{
    const double ima = sb->im[p->a], imb = sb->im[p->b];
    const imp_vec3 lin[3] = {p->t1, p->t2, v3(0, 0, 0)};
    const int slots = shock == BOTH ? 1 : 2;
    double ta[9], tb[9], tl[9], na[16], nb[16];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c <= r; c++) { /* symmetric, as the normal rows' below */
            tl[3 * r + c] = tl[3 * c + r] = v3_dot(lin[r], lin[c]);
            ta[3 * r + c] = ta[3 * c + r] = v3_dot(p->fa[r], p->ia[c]);
            tb[3 * r + c] = tb[3 * c + r] = v3_dot(p->fb[r], p->ib[c]);
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j <= i; j++) { /* symmetric: (r_i x n) . I^-1 (r_j x n) */
            const contact_row *ri = &P[i].row, *rj = &P[j].row;
            na[4 * i + j] = na[4 * j + i] = v3_dot(ri->ca, rj->ia);
            nb[4 * i + j] = nb[4 * j + i] = v3_dot(ri->cb, rj->ib);
        }
    for (int slot = 0; slot < slots; slot++) {
        const bool ua = slot == 0 || shock == ONLY_A, ub = slot == 0 || shock == ONLY_B;
        const double im = (ua ? ima : 0) + (ub ? imb : 0);
        double *K = p->friction_inv[slot];
        for (int e = 0; e < 9; e++) {
            double k = im * tl[e];
            if (ua) k += ta[e];
            if (ub) k += tb[e];
            K[e] = k;
        }
        if (p->rho == 0) { /* one point: no twist to hold (its bound mu N rho is 0), the tangents alone */
            double T[4] = {K[0], K[1], K[3], K[4]};
            memset(K, 0, 9 * sizeof(double));
            if (dense_invert_spd(T, 2, 2)) K[0] = T[0], K[1] = T[1], K[3] = T[2], K[4] = T[3];
        } else if (!dense_invert_spd(K, 3, 3)) {
            memset(K, 0, 9 * sizeof(double)); /* neither side can answer */
        }
        double *A = p->normal[slot], *N = p->normal_inv[slot], big = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double a = im;
                if (ua) a += na[4 * i + j];
                if (ub) a += nb[4 * i + j];
                A[4 * i + j] = a;
                if (i == j && a > big) big = a;
            }
        p->eps[slot] = m > 1 ? PATCH_EPS * big : 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) N[4 * i + j] = A[4 * i + j] + (i == j ? p->eps[slot] : 0);
        if (!(big > 0) || !invert4(N, m)) memset(N, 0, 16 * sizeof(double));
        p->sub_set[slot] = -1;
    }
}

/* (a patch of four points, the common one, with m a constant: its loops unroll) */
static void patch_matrices(const solver_bodies *sb, const contact_point *P, contact_patch *p, int shock)
{
    if (p->count == 4) patch_matrices_m(sb, P, p, shock, 4);
    else patch_matrices_m(sb, P, p, shock, p->count);
}

/* the patch of the points [first, first + count): centroid, twist lever, friction rows */
static void patch_prepare(const solver_bodies *sb, const contact_point_info *info, contact_patch *p)
{
    const int m = p->count;
    imp_vec3 ra = v3(0, 0, 0), rb = v3(0, 0, 0);
    for (int i = 0; i < m; i++) ra = v3_add(ra, info[i].ra), rb = v3_add(rb, info[i].rb);
    p->ra = v3_scale(ra, 1.0 / m), p->rb = v3_scale(rb, 1.0 / m);
    double dist = 0;
    for (int i = 0; i < m; i++) dist += v3_len(v3_sub(info[i].ra, p->ra));
    p->rho = 2.0 / 3.0 * dist / m;
    const imp_vec3 ra_ = p->ra, rb_ = p->rb;
    p->fa[0] = v3_cross(ra_, p->t1), p->fa[1] = v3_cross(ra_, p->t2), p->fa[2] = p->n;
    p->fb[0] = v3_cross(rb_, p->t1), p->fb[1] = v3_cross(rb_, p->t2), p->fb[2] = p->n;
    for (int r = 0; r < 3; r++) p->ia[r] = m3_mul_v(sb->Iinv[p->a], p->fa[r]), p->ib[r] = m3_mul_v(sb->Iinv[p->b], p->fb[r]);
    const imp_vec3 lin[3] = {p->t1, p->t2, v3(0, 0, 0)};
    for (int r = 0; r < 4; r++) {
        const imp_vec3 t = r < 3 ? lin[r] : v3(0, 0, 0), fa = r < 3 ? p->fa[r] : t, fb = r < 3 ? p->fb[r] : t;
        p->rows_t[0][r] = t.x, p->rows_t[1][r] = t.y, p->rows_t[2][r] = t.z;
        p->rows_fa[0][r] = fa.x, p->rows_fa[1][r] = fa.y, p->rows_fa[2][r] = fa.z;
        p->rows_fb[0][r] = fb.x, p->rows_fb[1][r] = fb.y, p->rows_fb[2][r] = fb.z;
    }
    p->active = (1 << m) - 1;
}

/* the velocities of a patch's two bodies while a sweep solves it, and the inverse masses that answer */
typedef struct patch_bodies {
    imp_vec3 va, wa, vb, wb;
    double ima, imb;
    bool ma, mb;              /* which sides move (shock propagation holds the lower one)          */
} patch_bodies;

static patch_bodies patch_load(const solver_bodies *sb, const contact_patch *p, int who)
{
    /* (a side that cannot move, static, kinematic or asleep, is not written back: islands solved at the
     * same time may share it) */
    patch_bodies pb = {sb->v[p->a], sb->w[p->a], sb->v[p->b], sb->w[p->b], sb->im[p->a], sb->im[p->b],
                       who != ONLY_B && sb->im[p->a] > 0, who != ONLY_A && sb->im[p->b] > 0};
    return pb;
}

static void patch_store(solver_bodies *sb, const contact_patch *p, const patch_bodies *pb)
{
    if (pb->ma) sb->v[p->a] = pb->va, sb->w[p->a] = pb->wa;
    if (pb->mb) sb->v[p->b] = pb->vb, sb->w[p->b] = pb->wb;
}

/* apply the friction change d (t1, t2, twist) to the sides that answer */
static void patch_friction_apply(patch_bodies *pb, const contact_patch *p, const double d[3])
{
    const imp_vec3 lin = v3_add(v3_scale(p->t1, d[0]), v3_scale(p->t2, d[1]));
    if (pb->ma) {
        pb->va = v3_mad(pb->va, lin, pb->ima);
        pb->wa = v3_mad(v3_mad(v3_mad(pb->wa, p->ia[0], d[0]), p->ia[1], d[1]), p->ia[2], d[2]);
    }
    if (pb->mb) {
        pb->vb = v3_mad(pb->vb, lin, -pb->imb);
        pb->wb = v3_mad(v3_mad(v3_mad(pb->wb, p->ib[0], -d[0]), p->ib[1], -d[1]), p->ib[2], -d[2]);
    }
}

/* hold lambda in the friction cone of the patch's normal impulse N */
static void patch_friction_clamp(const contact_patch *p, double N, double lambda[3])
{
    double lim = p->mu * N, len2 = lambda[0] * lambda[0] + lambda[1] * lambda[1];
    if (len2 > lim * lim) {
        double f = lim / sqrt(len2);
        lambda[0] *= f, lambda[1] *= f;
    }
    double tw = lim * p->rho;
    lambda[2] = lambda[2] > tw ? tw : lambda[2] < -tw ? -tw : lambda[2];
}

#if SPARSE_HAVE_AVX
/* patch_friction as vector code: the rows' dot products with lane r row r, K^-1 u with lane r row r
 * (K^-1 is exactly symmetric, dense_invert_spd: its row c is its column c), the changes applied with
 * lanes x, y, z; each with the scalar code's operations in its order (the same bits) */
static SPARSE_AVX double patch_friction_avx(patch_bodies *pb, const contact_point *P, contact_patch *p, int slot)
{
    const imp_vec3 dv = v3_sub(pb->va, pb->vb);
    __m256d tv = _mm256_mul_pd(_mm256_loadu_pd(p->rows_t[0]), _mm256_set1_pd(dv.x));
    tv = _mm256_add_pd(tv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_t[1]), _mm256_set1_pd(dv.y)));
    tv = _mm256_add_pd(tv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_t[2]), _mm256_set1_pd(dv.z)));
    __m256d fv = _mm256_mul_pd(_mm256_loadu_pd(p->rows_fa[0]), _mm256_set1_pd(pb->wa.x));
    fv = _mm256_add_pd(fv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_fa[1]), _mm256_set1_pd(pb->wa.y)));
    fv = _mm256_add_pd(fv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_fa[2]), _mm256_set1_pd(pb->wa.z)));
    __m256d gv = _mm256_mul_pd(_mm256_loadu_pd(p->rows_fb[0]), _mm256_set1_pd(pb->wb.x));
    gv = _mm256_add_pd(gv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_fb[1]), _mm256_set1_pd(pb->wb.y)));
    gv = _mm256_add_pd(gv, _mm256_mul_pd(_mm256_loadu_pd(p->rows_fb[2]), _mm256_set1_pd(pb->wb.z)));
    double t[4], f[4], g[4];
    _mm256_storeu_pd(t, tv), _mm256_storeu_pd(f, fv), _mm256_storeu_pd(g, gv);
    /* (the twist row has no linear part and no target) */
    double u[3] = {t[0] + f[0] - g[0] - p->target[0], t[1] + f[1] - g[1] - p->target[1], f[2] - g[2]};
    const double *Ki = p->friction_inv[slot];
    __m256d ku = _mm256_mul_pd(sparse_load3(Ki), _mm256_broadcast_sd(u));
    ku = _mm256_add_pd(ku, _mm256_mul_pd(sparse_load3(Ki + 3), _mm256_broadcast_sd(u + 1)));
    ku = _mm256_add_pd(ku, _mm256_mul_pd(sparse_load3(Ki + 6), _mm256_broadcast_sd(u + 2)));
    double lambda[4], d[3], N = 0;
    _mm256_storeu_pd(lambda, _mm256_sub_pd(sparse_load3(p->lambda), ku));
    for (int i = 0; i < p->count; i++) N += P[i].jn;
    patch_friction_clamp(p, N, lambda);
    for (int r = 0; r < 3; r++) d[r] = lambda[r] - p->lambda[r], p->lambda[r] = lambda[r];
    const __m256d lin = _mm256_add_pd(_mm256_mul_pd(sparse_load3(&p->t1.x), _mm256_broadcast_sd(d)),
                                      _mm256_mul_pd(sparse_load3(&p->t2.x), _mm256_broadcast_sd(d + 1)));
    if (pb->ma) {
        sparse_store3(&pb->va.x, _mm256_add_pd(sparse_load3(&pb->va.x), _mm256_mul_pd(lin, _mm256_set1_pd(pb->ima))));
        __m256d w = sparse_load3(&pb->wa.x);
        for (int r = 0; r < 3; r++) w = _mm256_add_pd(w, _mm256_mul_pd(sparse_load3(&p->ia[r].x), _mm256_broadcast_sd(d + r)));
        sparse_store3(&pb->wa.x, w);
    }
    if (pb->mb) {
        sparse_store3(&pb->vb.x, _mm256_add_pd(sparse_load3(&pb->vb.x), _mm256_mul_pd(lin, _mm256_set1_pd(-pb->imb))));
        __m256d w = sparse_load3(&pb->wb.x);
        for (int r = 0; r < 3; r++) w = _mm256_add_pd(w, _mm256_mul_pd(sparse_load3(&p->ib[r].x), _mm256_set1_pd(-d[r])));
        sparse_store3(&pb->wb.x, w);
    }
    return fabs(d[0]) + fabs(d[1]) + fabs(d[2]);
}
#endif

static double patch_friction(patch_bodies *pb, const contact_point *P, contact_patch *p, int slot)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) return patch_friction_avx(pb, P, p, slot);
#endif
    const imp_vec3 dv = v3_sub(pb->va, pb->vb), wa = pb->wa, wb = pb->wb;
    /* (target: the pre-solve hook's tangent velocity, zero unless a script set one) */
    const double u[3] = {v3_dot(p->t1, dv) + v3_dot(p->fa[0], wa) - v3_dot(p->fb[0], wb) - p->target[0],
                         v3_dot(p->t2, dv) + v3_dot(p->fa[1], wa) - v3_dot(p->fb[1], wb) - p->target[1],
                         v3_dot(p->fa[2], wa) - v3_dot(p->fb[2], wb)};
    const double *Ki = p->friction_inv[slot];
    double N = 0, lambda[3], d[3];
    for (int i = 0; i < p->count; i++) N += P[i].jn;
    for (int r = 0; r < 3; r++) lambda[r] = p->lambda[r] - (Ki[3 * r] * u[0] + Ki[3 * r + 1] * u[1] + Ki[3 * r + 2] * u[2]);
    patch_friction_clamp(p, N, lambda);
    for (int r = 0; r < 3; r++) d[r] = lambda[r] - p->lambda[r], p->lambda[r] = lambda[r];
    patch_friction_apply(pb, p, d);
    return fabs(d[0]) + fabs(d[1]) + fabs(d[2]);
}

/* (A_SS + eps I)^-1 for the rows of S (a bit set), as a |S| x |S| matrix (row stride 4) over the rows
 * of S in order: kept for every row in normal_inv, for the last other set in sub_inv; NULL when the
 * rows cannot be solved (neither side answers) */
static const double *patch_inverse(contact_patch *p, int slot, int S)
{
    const int m = p->count;
    if (S == (1 << m) - 1) return p->normal_inv[slot];
    if (p->sub_set[slot] == S) return p->sub_ok[slot] ? p->sub_inv[slot] : NULL;
    int idx[4], k = 0;
    for (int i = 0; i < m; i++)
        if (S >> i & 1) idx[k++] = i;
    double *M = p->sub_inv[slot];
    for (int r = 0; r < k; r++)
        for (int c = 0; c < k; c++) M[4 * r + c] = p->normal[slot][4 * idx[r] + idx[c]] + (r == c ? p->eps[slot] : 0);
    p->sub_set[slot] = S;
    p->sub_ok[slot] = invert4(M, k);
    return p->sub_ok[slot] ? M : NULL;
}

#if SPARSE_HAVE_AVX
/* the end of patch_normals for four rows as vector code: the impulses max(x, 0) stored and their changes
 * applied, lanes x, y, z (the scalar code's operations in its order); returns how much they moved */
static SPARSE_AVX double patch_apply4_avx(patch_bodies *pb, contact_point *P, const contact_patch *p,
                                          const double x[4], const double j0[4])
{
    /* (max returns its second operand, +0, for -0 and NaN: x > 0 ? x : 0) */
    const __m256d xv = _mm256_max_pd(_mm256_loadu_pd(x), _mm256_setzero_pd()), dv = _mm256_sub_pd(xv, _mm256_loadu_pd(j0));
    double xs[4], d[4], sum = 0, change = 0;
    _mm256_storeu_pd(xs, xv), _mm256_storeu_pd(d, dv);
    __m256d dwa = _mm256_setzero_pd(), dwb = _mm256_setzero_pd();
    for (int i = 0; i < 4; i++) {
        change += fabs(d[i]), sum += d[i];
        const __m256d di = _mm256_broadcast_sd(d + i);
        dwa = _mm256_add_pd(dwa, _mm256_mul_pd(sparse_load3(&P[i].row.ia.x), di));
        dwb = _mm256_add_pd(dwb, _mm256_mul_pd(sparse_load3(&P[i].row.ib.x), di));
        P[i].jn = xs[i];
    }
    if (pb->ma) pb->va = v3_mad(pb->va, p->n, sum * pb->ima), sparse_store3(&pb->wa.x, _mm256_add_pd(sparse_load3(&pb->wa.x), dwa));
    if (pb->mb) pb->vb = v3_mad(pb->vb, p->n, -sum * pb->imb), sparse_store3(&pb->wb.x, _mm256_sub_pd(sparse_load3(&pb->wb.x), dwb));
    return change;
}

/* patch_normals' resting solve of four rows, x = j0 - (A + eps I)^-1 w and its impulses applied, as vector
 * code: lane i is point i, with the scalar code's operations in its order (the same bits; the inverse is
 * exactly symmetric, dense_invert_spd, so its row j is its column j). True when every x_i >= 0 and it is
 * done (the change of the impulses in *change); false with w and j0 filled for the active-set rounds. */
static SPARSE_AVX bool patch_rest4_avx(patch_bodies *pb, contact_point *P, const contact_patch *p, int slot,
                                       double w[4], double j0[4], double *change)
{
    const imp_vec3 wa = pb->wa, wb = pb->wb;
    const double vn = v3_dot(p->n, v3_sub(pb->va, pb->vb));
    __m256d ta = _mm256_mul_pd(_mm256_loadu_pd(p->ca[0]), _mm256_set1_pd(wa.x));
    ta = _mm256_add_pd(ta, _mm256_mul_pd(_mm256_loadu_pd(p->ca[1]), _mm256_set1_pd(wa.y)));
    ta = _mm256_add_pd(ta, _mm256_mul_pd(_mm256_loadu_pd(p->ca[2]), _mm256_set1_pd(wa.z)));
    __m256d tb = _mm256_mul_pd(_mm256_loadu_pd(p->cb[0]), _mm256_set1_pd(wb.x));
    tb = _mm256_add_pd(tb, _mm256_mul_pd(_mm256_loadu_pd(p->cb[1]), _mm256_set1_pd(wb.y)));
    tb = _mm256_add_pd(tb, _mm256_mul_pd(_mm256_loadu_pd(p->cb[2]), _mm256_set1_pd(wb.z)));
    const __m256d gap = _mm256_set_pd(P[3].gap, P[2].gap, P[1].gap, P[0].gap);
    const __m256d jv = _mm256_set_pd(P[3].jn, P[2].jn, P[1].jn, P[0].jn);
    const __m256d wv = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(_mm256_set1_pd(vn), ta), tb), gap);
    _mm256_storeu_pd(w, wv), _mm256_storeu_pd(j0, jv);
    const double *N = p->normal_inv[slot];
    __m256d x = jv;
    for (int j = 0; j < 4; j++) x = _mm256_sub_pd(x, _mm256_mul_pd(_mm256_loadu_pd(N + 4 * j), _mm256_broadcast_sd(w + j)));
    if (_mm256_movemask_pd(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_GE_OQ)) != 15) return false;
    double xs[4];
    _mm256_storeu_pd(xs, x);
    *change = patch_apply4_avx(pb, P, p, xs, j0);
    return true;
}
#endif

/* The patch's normal impulses: the LCP w = A x + b >= 0, x >= 0, x . w = 0 by an active set S of rows,
 * from the last solve's set (the same at rest), dropping the row of the most negative x or taking in
 * the row of the most negative w until neither is left (a few rounds for m <= 4). With w the rows'
 * velocities now (gaps in) and j0 the present impulses, b = w - A j0, and the proximal solve on S is
 *     x_S = j0_S - (A_SS + eps I)^-1 (w_S - A_S,notS j0_notS),   x_notS = 0
 * (at rest S is every row and its inverse is kept: x = j0 - (A + eps I)^-1 w) */
static double patch_normals(patch_bodies *pb, contact_point *P, contact_patch *p, int slot)
{
    const int m = p->count;
    const double *A = p->normal[slot];
    const imp_vec3 wa = pb->wa, wb = pb->wb;
    double w[4], j0[4], x[4];
    int S = p->active;
#if SPARSE_HAVE_AVX
    double rest_change;
    if (m == 4 && S == 15 && sparse_avx()) {
        if (patch_rest4_avx(pb, P, p, slot, w, j0, &rest_change)) return rest_change;
    } else
#endif
    {
        const double vn = v3_dot(p->n, v3_sub(pb->va, pb->vb));
        for (int i = 0; i < m; i++) {
            w[i] = vn + v3_dot(P[i].row.ca, wa) - v3_dot(P[i].row.cb, wb) + P[i].gap;
            j0[i] = P[i].jn;
        }
        if (S == (1 << m) - 1) { /* at rest, every row: x = j0 - (A + eps I)^-1 w, kept when none is < 0 */
            const double *N = p->normal_inv[slot];
            bool ok = true;
            for (int i = 0; i < m; i++) {
                double xi = j0[i];
                for (int j = 0; j < m; j++) xi -= N[4 * i + j] * w[j];
                x[i] = xi;
                ok = ok && xi >= 0;
            }
            if (ok) goto apply;
        }
    }
    for (int round = 0; round < 2 * m + 2; round++) {
        int idx[4], k = 0;
        _Pragma("GCC unroll 4")
        for (int i = 0; i < m; i++) x[i] = 0;
        _Pragma("GCC unroll 4")
        for (int i = 0; i < m; i++)
            if (S >> i & 1) idx[k++] = i;
        const double *N = k ? patch_inverse(p, slot, S) : NULL;
        if (N) {
            double r[4] = {0, 0, 0, 0};
            _Pragma("GCC unroll 4")
            for (int a = 0; a < k; a++) {
                const int i = idx[a];
                r[a] = w[i];
                _Pragma("GCC unroll 4")
                for (int j = 0; j < m; j++)
                    if (!(S >> j & 1)) r[a] -= A[4 * i + j] * j0[j];
            }
            _Pragma("GCC unroll 4")
            for (int a = 0; a < k; a++) {
                double xi = j0[idx[a]];
                _Pragma("GCC unroll 4")
                for (int c = 0; c < k; c++) xi -= N[4 * a + c] * r[c];
                x[idx[a]] = xi;
            }
        }
        int worst = -1;
        double most = 0;
        _Pragma("GCC unroll 4")
        for (int i = 0; i < m; i++)
            if ((S >> i & 1) && x[i] < most) most = x[i], worst = i;
        if (worst >= 0) {
            S &= ~(1 << worst);
            continue;
        }
        _Pragma("GCC unroll 4")
        for (int i = 0; i < m; i++) {
            if (S >> i & 1) continue;
            double wi = w[i];
            _Pragma("GCC unroll 4")
            for (int j = 0; j < m; j++) wi += A[4 * i + j] * (x[j] - j0[j]);
            if (wi < most) most = wi, worst = i;
        }
        if (worst < 0) break;
        S |= 1 << worst;
    }
    p->active = S;
apply:;
#if SPARSE_HAVE_AVX
    if (m == 4 && sparse_avx()) return patch_apply4_avx(pb, P, p, x, j0);
#endif
    double sum = 0, change = 0;
    imp_vec3 dwa = v3(0, 0, 0), dwb = v3(0, 0, 0);
    for (int i = 0; i < m; i++) {
        const double xi = x[i] > 0 ? x[i] : 0, d = xi - j0[i];
        change += fabs(d), sum += d;
        dwa = v3_mad(dwa, P[i].row.ia, d), dwb = v3_mad(dwb, P[i].row.ib, d);
        P[i].jn = xi;
    }
    if (pb->ma) pb->va = v3_mad(pb->va, p->n, sum * pb->ima), pb->wa = v3_add(wa, dwa);
    if (pb->mb) pb->vb = v3_mad(pb->vb, p->n, -sum * pb->imb), pb->wb = v3_sub(wb, dwb);
    return change;
}

/* one patch in a sweep: friction in the cone of the present normal impulses, then the normal impulses
 * that stop the approach; returns how much the impulses moved */
static double patch_solve(solver_bodies *sb, contact_point *points, contact_patch *p, int who)
{
    contact_point *P = points + p->first;
    const int slot = who != BOTH;
    patch_bodies pb = patch_load(sb, p, who);
    double change = patch_friction(&pb, P, p, slot);
    change += patch_normals(&pb, P, p, slot);
    patch_store(sb, p, &pb);
    return change;
}

static void project_planar(imp_vec3 *v, imp_vec3 *w) { v->z = 0, w->x = 0, w->y = 0; }

/* ---- the stages ------------------------------------------------------------------------------------ */

/* the bodies' velocities and world inverse inertias; a body that does not move in this step (static,
 * kinematic, asleep) has inverse mass 0; the static world is index n. A push wakes a sleeper. Each
 * body is its own: the bodies are loaded on both threads (load_part). */
static void load_part(void *ctx, int chunk)
{
    const island_job *job = ctx;
    imp_world *w = job->w;
    impulse_state *s = job->s;
    solver_bodies *sb = &s->sb;
    int lo, hi;
    par_range(sb->n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        body *b = &w->bodies->body[i];
        const double *X = w->bodies->state + BODY_DIM * i;
        s->held[i] = 0;
        if (b->motion == IMP_DYNAMIC && b->asleep && (v3_dot(b->force, b->force) > 0 || v3_dot(b->torque, b->torque) > 0))
            b->asleep = 0, b->sleep_time = 0;
        if (b->motion == IMP_DYNAMIC && !b->asleep) {
            imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
            sb->Iinv[i] = m3_rotate_tensor(R, b->Ibody_inv);
            sb->im[i] = b->inv_mass;
            sb->v[i] = v3_scale(v3_load(X + 7), b->inv_mass);
            sb->w[i] = m3_mul_v(sb->Iinv[i], v3_load(X + 10));
        } else {
            sb->Iinv[i] = (imp_mat3){{{0}}};
            sb->im[i] = 0;
            sb->v[i] = b->motion == IMP_KINEMATIC ? b->kin_v : v3(0, 0, 0);
            sb->w[i] = b->motion == IMP_KINEMATIC ? b->kin_w : v3(0, 0, 0);
        }
        sb->vp[i] = sb->wp[i] = v3(0, 0, 0);
    }
}

static void load_bodies(imp_world *w, impulse_state *s)
{
    solver_bodies *sb = &s->sb;
    const int n = sb->n;
    island_job job = {w, s};
    par_for(load_part, &job, PAR_CHUNKS);
    sb->Iinv[n] = (imp_mat3){{{0}}}, sb->im[n] = 0, sb->v[n] = sb->w[n] = sb->vp[n] = sb->wp[n] = v3(0, 0, 0);
}

/* each manifold's two bodies; a sleeper touched by an awake body that moves wakes (island.c), and
 * with it every sleeper that touches it, through the sleeping island: the passes repeat, alternately
 * forwards and backwards, until one wakes nobody (a gate's lintel asleep on a post that a ball woke
 * would otherwise hold the post as a wall) */
static void manifold_sides(imp_world *w, impulse_state *s)
{
    contact_set *col = w->contacts;
    const int n = s->sb.n, nm = col->manifold_count;
    reserve_manifolds(s, nm);
    bool woke = false;
    for (int m = 0; m < nm; m++) {
        imp_contact *ct = &col->manifolds[m].c;
        ct->impact = 0, ct->impact_speed = 0;
        int a = side_body(w, ct->a, n), b = side_body(w, ct->b, n);
        s->man_ab[2 * m] = a, s->man_ab[2 * m + 1] = b;
        if (a < n && b < n && w->bodies->body[a].asleep != w->bodies->body[b].asleep) /* one sleeps, one is awake */
            woke |= islands_wake_touched(w, a, b, &s->sb) | islands_wake_touched(w, b, a, &s->sb);
    }
    for (int pass = 1; woke; pass++) {
        woke = false;
        for (int k = 0; k < nm; k++) {
            const int m = pass & 1 ? nm - 1 - k : k, a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
            if (a < n && b < n && w->bodies->body[a].asleep != w->bodies->body[b].asleep)
                woke |= islands_wake_touched(w, a, b, &s->sb) | islands_wake_touched(w, b, a, &s->sb);
        }
    }
}

/* The contact graph (island.c): the manifolds where something can move (joined bodies do not touch)
 * and the joints are its edges; the islands, and the levels by breadth-first search. The bodies that
 * take the velocity stages are marked held. Returns false when nothing needs the stages (no live
 * manifold, sleeper, joint, nor a planar world): the ODE then moves every body. */
static bool contact_graph(imp_world *w, impulse_state *s)
{
    solver_bodies *sb = &s->sb;
    islands *g = &s->graph;
    const int n = sb->n, nm = w->contacts->manifold_count;
    islands_begin(g, sb);
    s->nlive = 0;
    for (int m = 0; m < nm; m++) {
        int a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        if (sb->im[a] == 0 && sb->im[b] == 0) continue;
        if (s->njoints && a < n && b < n && joints_connected(w, a, b)) continue;
        /* pre-solve hook (presolve.c): a contact the script disabled for this step */
        const imp_contact_mod *mod = presolve_mod(w, m);
        if (mod && !mod->enabled) continue;
        s->live[s->nlive++] = m;
        if (sb->im[a] > 0) s->held[a] = 1;
        if (sb->im[b] > 0) s->held[b] = 1;
        if (sb->im[a] > 0 && sb->im[b] > 0) islands_union(g, a, b);
        islands_count_edge(g, a, b);
    }
    if (!s->nlive) {
        bool any_asleep = false;
        for (int i = 0; i < n; i++) any_asleep = any_asleep || w->bodies->body[i].asleep;
        if (!any_asleep && !w->settings.planar && !s->njoints) return false;
    }
    if (s->njoints) joints_mark_half_kicks(w, s->held, n); /* held: the bodies a live manifold touches */
    /* sleepers are held too (their momenta are zero): otherwise the ODE solver would let them fall
     * g h^2 / 2 a step while other contacts in the world are live */
    for (int i = 0; i < n; i++) s->held[i] = s->held[i] || w->bodies->body[i].asleep;
    if (s->njoints)
        for (int i = 0; i < n; i++) s->held[i] = s->held[i] || (s->jointed[i] && sb->im[i] > 0);
    if (w->settings.planar) /* every awake body takes the velocity stage, where its velocities are projected */
        for (int i = 0; i < n; i++) s->held[i] = s->held[i] || sb->im[i] > 0;
    /* joints are edges of the contact graph too (S1 section VI: articulated bodies take their levels
     * from what they hang on and rest on) */
    const uint64_t *jpairs = NULL;
    int njp = s->njoints ? joints_pairs(w, &jpairs) : 0;
    for (int k = 0; k < njp; k++) {
        int a = (int)(jpairs[k] >> 32), b = (int)(jpairs[k] & 0xffffffffu);
        if (sb->im[a] > 0 || sb->im[b] > 0) islands_count_edge(g, a, b);
    }
    islands_edges_done(g, n);
    for (int l = 0; l < s->nlive; l++) {
        int m = s->live[l];
        islands_add_edge(g, s->man_ab[2 * m], s->man_ab[2 * m + 1]);
    }
    for (int k = 0; k < njp; k++) {
        int a = (int)(jpairs[k] >> 32), b = (int)(jpairs[k] & 0xffffffffu);
        if (sb->im[a] > 0 || sb->im[b] > 0) islands_add_edge(g, a, b);
    }
    islands_levels(g, n);
    return true;
}

/* friction (kinetic, static) and restitution of a contact side: its shape's, a collider's, or the
 * defaults for a side that is gone */
static inline void side_material(const imp_world *w, imp_contact_side sd, double *mu, double *mu_s, double *e)
{
    const shape *sh = side_shape(w, sd);
    *mu = 0.5, *mu_s = 0.5, *e = 0;
    if (sh) *mu = sh->friction, *mu_s = sh->static_friction >= 0 ? sh->static_friction : *mu, *e = sh->restitution;
    else if (!imp_id_is_null(sd.collider)) {
        int ci = ids_lookup(&w->colliders->ids, sd.collider);
        if (ci >= 0) *mu = *mu_s = w->colliders->collider[ci].def.friction, *e = w->colliders->collider[ci].def.restitution;
    }
}

/* The order the live manifolds are solved in: by level (a counting sort by the higher level of the two
 * bodies; stable, so manifold order within a level). Without joints, then by island (stable again):
 * each island's manifolds are consecutive and in level order, and the islands are numbered in the
 * order their first manifold comes, so the layout depends on the contacts alone. */
static void manifold_order(impulse_state *s, bool by_island)
{
    const int *level = s->graph.level;
    int *count = s->level_count, *order = by_island ? s->order_tmp : s->order;
    memset(count, 0, sizeof(int) * (MAX_LEVEL + 2));
    for (int l = 0; l < s->nlive; l++) {
        int m = s->live[l], la = level[s->man_ab[2 * m]], lb = level[s->man_ab[2 * m + 1]];
        count[(la > lb ? la : lb) + 1]++;
    }
    for (int l = 0; l <= MAX_LEVEL; l++) count[l + 1] += count[l];
    for (int l = 0; l < s->nlive; l++) {
        int m = s->live[l], la = level[s->man_ab[2 * m]], lb = level[s->man_ab[2 * m + 1]];
        order[count[la > lb ? la : lb]++] = l;
    }
    s->nisland = 0;
    if (!by_island) return;
    /* the island of each live manifold: the union-find root of its moving body (contact_graph joined
     * the two when both move), numbered as met */
    for (int l = 0; l < s->nlive; l++) {
        int m = s->live[l], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        int r = islands_find(&s->graph, s->sb.im[a] > 0 ? a : b);
        if (s->island_of[r] < 0) s->island_count[s->nisland] = 0, s->island_of[r] = s->nisland++;
        s->man_island[l] = s->island_of[r];
        s->island_count[s->man_island[l]]++;
    }
    for (int l = 0; l < s->nlive; l++) { /* (the map back to unset for the next step) */
        int m = s->live[l], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        s->island_of[islands_find(&s->graph, s->sb.im[a] > 0 ? a : b)] = -1;
    }
    int at = 0;
    for (int k = 0; k < s->nisland; k++) {
        int c = s->island_count[k];
        s->island_count[k] = at, at += c;
    }
    for (int o = 0; o < s->nlive; o++) {
        int l = s->order_tmp[o];
        s->order[s->island_count[s->man_island[l]]++] = l;
    }
}

/* A large island's sweeps run on both threads. The island's moving bodies are cut in two halves by a plane
 * across its widest horizontal extent (the world's axis of the largest extent among those not along
 * gravity) through the mean of their centres. A manifold whose moving bodies are in one half belongs to
 * that half, one that joins the halves lies between them. Each sweep then solves the two halves at
 * once (they share no moving body) and the patches between them after: Gauss-Seidel in the order
 * half 0, half 1, between, each in level order, whichever thread runs a half. The cut is taken where it
 * is cheap and balanced (at most a quarter of the manifolds between the halves, at least a quarter in
 * each); a column, whose bodies all sit on the cut, stays whole. The island's manifolds are laid out in
 * that order (stable: level order within each part). */
static void split_islands(const imp_world *w, impulse_state *s)
{
    const solver_bodies *sb = &s->sb;
    const imp_vec3 g = w->settings.gravity;
    const double ag[3] = {fabs(g.x), fabs(g.y), fabs(g.z)};
    const int down = ag[0] + ag[1] + ag[2] == 0 ? -1 : ag[1] >= ag[0] && ag[1] >= ag[2] ? 1 : ag[0] >= ag[2] ? 0 : 2;
    s->nsplit = 0;
    for (int l = 0; l < s->nlive; l++) s->man_half[l] = 0;
    for (int k = 0, lo = 0; k < s->nisland && s->nsplit < MAX_SPLIT; lo = s->island_count[k++]) {
        const int hi = s->island_count[k]; /* (manifold_order left each island's end there) */
        if (hi - lo < SPLIT_MIN) continue;
        int nb = 0;
        double lower[3] = {INFINITY, INFINITY, INFINITY}, upper[3] = {-INFINITY, -INFINITY, -INFINITY}, sum[3] = {0, 0, 0};
        for (int o = lo; o < hi; o++) {
            const int m = s->live[s->order[o]];
            for (int e = 0; e < 2; e++) {
                const int i = s->man_ab[2 * m + e];
                if (sb->im[i] == 0 || s->body_half[i] >= 0) continue;
                s->body_half[i] = 0, s->half_bodies[nb++] = i;
                const double *x = w->bodies->state + BODY_DIM * i;
                for (int d = 0; d < 3; d++) lower[d] = fmin(lower[d], x[d]), upper[d] = fmax(upper[d], x[d]), sum[d] += x[d];
            }
        }
        int axis = -1;
        for (int d = 0; d < 3; d++)
            if (d != down && (axis < 0 || upper[d] - lower[d] > upper[axis] - lower[axis])) axis = d;
        const double cut = sum[axis] / nb;
        for (int b = 0; b < nb; b++) {
            const int i = s->half_bodies[b];
            s->body_half[i] = w->bodies->state[BODY_DIM * i + axis] < cut ? 0 : 1;
        }
        int count[3] = {0, 0, 0};
        for (int o = lo; o < hi; o++) {
            const int l = s->order[o], m = s->live[l], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
            const int ha = sb->im[a] > 0 ? s->body_half[a] : -1, hb = sb->im[b] > 0 ? s->body_half[b] : -1;
            s->man_half[l] = ha < 0 ? hb : hb < 0 || ha == hb ? ha : 2;
            count[s->man_half[l]]++;
        }
        for (int b = 0; b < nb; b++) s->body_half[s->half_bodies[b]] = -1;
        const int total = hi - lo;
        if (4 * count[2] > total || 4 * count[0] < total || 4 * count[1] < total) {
            for (int o = lo; o < hi; o++) s->man_half[s->order[o]] = 0;
            continue;
        }
        int at = lo;
        for (int half = 0; half < 3; half++)
            for (int o = lo; o < hi; o++)
                if (s->man_half[s->order[o]] == half) s->order_tmp[at++] = s->order[o];
        memcpy(s->order + lo, s->order_tmp + lo, sizeof(int) * total);
        s->split[s->nsplit++].island = k;
    }
}

/* The live manifolds' points, laid out in manifold_order's order, with their materials, tangent basis,
 * gap and bias, and last step's impulses as the warm start. Each manifold's first point is counted
 * first, so the manifolds fill their points on both threads (points_part). */
static void points_part(void *ctx, int chunk)
{
    const island_job *job = ctx;
    const imp_world *w = job->w;
    impulse_state *s = job->s;
    const solver_bodies *sb = &s->sb;
    const int n = sb->n;
    const double h = sb->h;
    const contact_set *col = w->contacts;
    const int *level = s->graph.level;
    int lo, hi;
    par_range(s->nlive, chunk, &lo, &hi);
    for (int o = lo; o < hi; o++) {
        int m = s->live[s->order[o]], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        const imp_contact *ct = &col->manifolds[m].c;
        int key = level[a] > level[b] ? level[a] : level[b];
        double mu_a, ms_a, e_a, mu_b, ms_b, e_b;
        side_material(w, ct->a, &mu_a, &ms_a, &e_a);
        side_material(w, ct->b, &mu_b, &ms_b, &e_b);
        double mu_k = sqrt(mu_a * mu_b), mu_s = sqrt(ms_a * ms_b), e = fmax(e_a, e_b);
        /* pre-solve hook (presolve.c): the script's friction and restitution for this contact */
        const imp_contact_mod *mod = presolve_mod(w, m);
        if (mod) mu_k = mod->friction, mu_s = mod->static_friction, e = mod->restitution;
        imp_vec3 nn = ct->normal, t1, t2;
        v3_basis(nn, &t1, &t2);
        const int island = s->nisland ? s->man_island[s->order[o]] : 0;
        for (int k = 0; k < ct->count; k++) {
            const int idx = s->man_first[o] + k;
            contact_point *c = &s->points[idx];
            contact_point_info *cc = &s->info[idx];
            c->a = a, c->b = b, cc->man = m, cc->k = k, cc->level = key;
            cc->island = island;
            c->n = nn, c->t1 = t1, c->t2 = t2;
            /* the midpoint of the two surfaces */
            imp_vec3 p = v3_add(ct->points[k], v3_scale(nn, 0.5 * ct->depth[k]));
            cc->ra = a < n ? v3_sub(p, v3_load(w->bodies->state + BODY_DIM * a)) : p;
            cc->rb = b < n ? v3_sub(p, v3_load(w->bodies->state + BODY_DIM * b)) : p;
            cc->depth = ct->depth[k];
            c->gap = ct->depth[k] < 0 ? -ct->depth[k] / h : 0;
            c->bias = ct->depth[k] > SLOP ? BETA * (ct->depth[k] - SLOP) / h : 0;
            cc->mu_k = mu_k, cc->mu_s = mu_s, cc->e = e;
            c->jn = ct->normal_impulse[k];
            c->jp = 0;
        }
    }
}

static void build_points(imp_world *w, impulse_state *s)
{
    manifold_order(s, !s->njoints);
    split_islands(w, s);
    int np = 0;
    for (int o = 0; o < s->nlive; o++) s->man_first[o] = np, np += w->contacts->manifolds[s->live[s->order[o]]].c.count;
    s->man_first[s->nlive] = s->np = np;
    island_job job = {w, s};
    par_for(points_part, &job, PAR_CHUNKS);
}

/* a point's row along d: lever arms, angular responses, effective mass (the derivation above) */
static contact_row point_row(const solver_bodies *sb, const contact_point *c, const contact_point_info *cc, imp_vec3 d)
{
    contact_row R;
    R.ca = v3_cross(cc->ra, d), R.cb = v3_cross(cc->rb, d);
    R.ia = m3_mul_v(sb->Iinv[c->a], R.ca), R.ib = m3_mul_v(sb->Iinv[c->b], R.cb);
    double ka = c->ima + v3_dot(R.ca, R.ia), kb = c->imb + v3_dot(R.cb, R.ib);
    R.k = ka + kb > 0 ? 1 / (ka + kb) : 0;
    return R;
}

/* a point's inverse masses and normal row */
static void point_rows(impulse_state *s, int q)
{
    const solver_bodies *sb = &s->sb;
    contact_point *c = &s->points[q];
    c->ima = sb->im[c->a], c->imb = sb->im[c->b];
    c->row = point_row(sb, c, &s->info[q], c->n);
}

/* who answers a patch in shock propagation: the upper side alone between two levels, else both */
static int shock_side(const int *level, const contact_patch *p)
{
    const int la = level[p->a], lb = level[p->b];
    return la == lb || la == MAX_LEVEL || lb == MAX_LEVEL ? BOTH : la > lb ? ONLY_A : ONLY_B;
}

/* one chunk of the patches (and so of their points, which are consecutive): the points' rows, then
 * each patch's centroid and matrices, for the sweeps and, between two levels, for shock propagation,
 * and last step's friction as the warm start: the points' friction impulses summed along t1, t2, and
 * their twist about the centroid. Chunks write disjoint patches and points, and a patch's numbers are
 * the same whichever thread makes them. */
static void patches_part(void *ctx, int chunk)
{
    const island_job *job = ctx;
    impulse_state *s = job->s;
    int lo, hi;
    par_range(s->npatch, chunk, &lo, &hi);
    for (int k = lo; k < hi; k++) {
        contact_patch *p = &s->patches[k];
        for (int i = 0; i < p->count; i++) point_rows(s, p->first + i);
        if (p->count == 4)
            for (int i = 0; i < 4; i++) {
                const contact_row *r = &s->points[p->first + i].row;
                p->ca[0][i] = r->ca.x, p->ca[1][i] = r->ca.y, p->ca[2][i] = r->ca.z;
                p->cb[0][i] = r->cb.x, p->cb[1][i] = r->cb.y, p->cb[2][i] = r->cb.z;
            }
        patch_prepare(&s->sb, &s->info[p->first], p);
        patch_matrices(&s->sb, &s->points[p->first], p, shock_side(s->graph.level, p));
        const imp_contact *ct = &job->w->contacts->manifolds[s->info[p->first].man].c;
        /* pre-solve hook (presolve.c): a tangent velocity makes friction drive the sliding to it */
        const imp_contact_mod *mod = presolve_mod(job->w, s->info[p->first].man);
        p->target[0] = mod ? v3_dot(mod->tangent_velocity, p->t1) : 0;
        p->target[1] = mod ? v3_dot(mod->tangent_velocity, p->t2) : 0;
        p->lambda[0] = p->lambda[1] = p->lambda[2] = 0;
        for (int i = 0; i < p->count; i++) {
            const contact_point_info *info = &s->info[p->first + i];
            const imp_vec3 jt = ct->tangent_impulse[info->k];
            p->lambda[0] += v3_dot(jt, p->t1), p->lambda[1] += v3_dot(jt, p->t2);
            p->lambda[2] += v3_dot(p->n, v3_cross(v3_sub(info->ra, p->ra), jt));
        }
    }
}

/* the points of each live manifold as one patch (they are consecutive in level order), its rows,
 * matrices and warm start (patches_part, on both threads) */
static void build_patches(imp_world *w, impulse_state *s)
{
    s->npatch = 0;
    for (int o = 0; o < s->nlive; o++) {
        const int q = s->man_first[o], count = s->man_first[o + 1] - q;
        if (!count) continue; /* (a manifold without points makes no patch) */
        contact_patch *p = &s->patches[s->npatch++];
        const contact_point *P = &s->points[q];
        p->first = q, p->count = count;
        p->a = P->a, p->b = P->b, p->level = s->info[q].level, p->half = s->man_half[s->order[o]];
        p->n = P->n, p->t1 = P->t1, p->t2 = P->t2;
    }
    island_job job = {w, s};
    par_for(patches_part, &job, PAR_CHUNKS);
    /* each island's first patch, and the islands of each parallel chunk: about equal shares of points */
    for (int k = 0, isl = -1; k < s->npatch && s->nisland; k++)
        while (isl < s->info[s->patches[k].first].island) s->island_first[++isl] = k;
    if (s->nisland) s->island_first[s->nisland] = s->npatch;
    for (int j = 0; j < s->nsplit; j++) { /* the split islands' halves and the patches between them */
        int *f = s->split[j].first;
        const int k = s->split[j].island;
        f[0] = f[1] = s->island_first[k], f[3] = s->island_first[k + 1];
        while (f[1] < f[3] && s->patches[f[1]].half == 0) f[1]++;
        for (f[2] = f[1]; f[2] < f[3] && s->patches[f[2]].half == 1;) f[2]++;
    }
    for (int c = 0, k = 0; c <= PAR_CHUNKS; c++) {
        const long long share = (long long)s->np * c / PAR_CHUNKS;
        while (k < s->nisland && s->patches[s->island_first[k]].first < share) k++;
        s->chunk_island[c] = c == PAR_CHUNKS ? s->nisland : k;
    }
}

/* 1. Collisions (Guendelman et al.): sweeps over the patches; a point that approaches, n . dv < 0,
 * collides and its row is to leave at e times its approach speed: S0 eq. 8-18's
 * j = -(1 + e) vrel m_eff for a point alone. A manifold's points collide together, as the patch of
 * the contact stage: its normal rows' LCP with the targets n . dv' >= e vrel_i at the colliding points
 * (>= minus the allowed approach at the others), and friction at the centroid inside the Coulomb cone
 * of the collision's impulse, the impulse that stops the sliding (a ball hitting the floor at a slant
 * leaves with the spin and the tangential speed of Coulomb's impact law). Point by point, a box landing
 * flat takes its first corner's impulse as if that corner were alone: it tips, and its other corners'
 * friction pushes it sideways and turns it (a unit box dropped flat from 0.2 m slid 2.5 cm and spun at
 * 0.5 rad/s that way); together its corners share the impulse and it lands flat. Each sweep tests
 * again and each collision is a new impact (its impulses are not accumulated), so the impulse on one
 * ball of a row makes the next pair collide (propagation) and an elastic row passes its momentum on.
 * Approaches slower than the world's restitution threshold are left to the contact stage (no bounce at
 * rest), except at points that already collided in this step. A point still apart (negative depth:
 * shapes within SHAPE_TOUCH, a face's near corners) collides when this step's approach closes its gap.
 * The pairs that collided become the step's hit events; the joints are post-stabilized after them
 * (S1). */
static void collisions(imp_world *w, impulse_state *s, int k0, int k1)
{
    solver_bodies *sb = &s->sb;
    contact_set *col = w->contacts;
    const double rest = fmax(w->settings.restitution_threshold, 1e-9);
    for (int k = k0; k < k1; k++) /* jp: 1 where the point collided in this step */
        for (int i = 0; i < s->patches[k].count; i++) s->points[s->patches[k].first + i].jp = 0;
    for (int sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
        bool any = false;
        for (int k = k0; k < k1; k++) {
            contact_patch *p = &s->patches[k];
            contact_point *P = &s->points[p->first];
            const contact_point_info *info = &s->info[p->first];
            double vn[4], fast = 0;
            bool collides[4] = {false, false, false, false}, hit = false;
            for (int i = 0; i < p->count; i++) {
                vn[i] = row_vel(sb->v, sb->w, &P[i], &P[i].row, P[i].n);
                if (info[i].depth < 0 && -vn[i] * sb->h < -info[i].depth) continue; /* a gap this step's approach does not close */
                if (!(vn[i] < -rest || (P[i].jp > 0 && vn[i] < -1e-9))) continue;
                collides[i] = hit = true, fast = fmax(fast, -vn[i]);
            }
            if (!hit) continue;
            any = true;
            imp_contact *ct = &col->manifolds[info[0].man].c;
            if (fast > ct->impact_speed) ct->impact_speed = fast;
            patch_bodies pb = patch_load(sb, p, BOTH);
            /* the patch's solves read its points' impulses and allowed approaches and its friction and
             * coefficient: the collision's stand in for them (impulses from zero, a colliding point's
             * target n . dv' = -e vn as the allowed approach e vn < 0), the contact stage's are put back */
            double jn[4], gap[4], lambda[3] = {p->lambda[0], p->lambda[1], p->lambda[2]}, mu = p->mu, N = 0;
            for (int i = 0; i < p->count; i++) {
                jn[i] = P[i].jn, gap[i] = P[i].gap;
                P[i].jn = 0;
                if (collides[i]) P[i].gap = info[i].e * vn[i];
            }
            patch_normals(&pb, P, p, 0);
            for (int i = 0; i < p->count; i++) N += P[i].jn;
            ct->impact += N;
            /* friction: static where the centroid slides slower than STICK_SPEED after the normal impulse */
            const imp_vec3 dv = v3_sub(pb.va, pb.vb);
            const double u1 = v3_dot(p->t1, dv) + v3_dot(p->fa[0], pb.wa) - v3_dot(p->fb[0], pb.wb);
            const double u2 = v3_dot(p->t2, dv) + v3_dot(p->fa[1], pb.wa) - v3_dot(p->fb[1], pb.wb);
            p->mu = u1 * u1 + u2 * u2 < STICK_SPEED * STICK_SPEED ? info[0].mu_s : info[0].mu_k;
            p->lambda[0] = p->lambda[1] = p->lambda[2] = 0;
            patch_friction(&pb, P, p, 0);
            patch_store(sb, p, &pb);
            for (int i = 0; i < p->count; i++) {
                if (collides[i]) P[i].jp = 1;
                P[i].jn = jn[i], P[i].gap = gap[i];
            }
            p->lambda[0] = lambda[0], p->lambda[1] = lambda[1], p->lambda[2] = lambda[2], p->mu = mu;
        }
        if (!any) break;
    }
    for (int k = k0; k < k1; k++)
        for (int i = 0; i < s->patches[k].count; i++) s->points[s->patches[k].first + i].jp = 0;
}

/* the pairs that collided become the step's hit events; the joints are post-stabilized after them */
static void collisions_finish(imp_world *w, impulse_state *s)
{
    solver_bodies *sb = &s->sb;
    contact_set *col = w->contacts;
    for (int m = 0; m < col->manifold_count; m++) {
        const imp_contact *ct = &col->manifolds[m].c;
        if (!(ct->impact > 0)) continue;
        if (s->hit_count == s->hit_cap) {
            s->hit_cap = s->hit_cap ? 2 * s->hit_cap : 64;
            s->hits = ids_grow(s->hits, sizeof(imp_contact_hit), s->hit_cap);
        }
        imp_contact_hit *hit = &s->hits[s->hit_count++];
        hit->a = ct->a, hit->b = ct->b, hit->normal = ct->normal, hit->point = ct->points[0];
        hit->impulse = ct->impact, hit->speed = ct->impact_speed;
    }
    /* (no collisions: the velocities are those post-stabilized at the end of the last step) */
    if (s->njoints && s->hit_count) joints_post_stabilize(w, sb, false);
}

/* static or kinetic friction: is the patch's centroid sliding after the collisions, before gravity acts */
static void friction_part(void *ctx, int chunk)
{
    impulse_state *s = ((const island_job *)ctx)->s;
    const solver_bodies *sb = &s->sb;
    int lo, hi;
    par_range(s->npatch, chunk, &lo, &hi);
    for (int k = lo; k < hi; k++) {
        contact_patch *p = &s->patches[k];
        const imp_vec3 va = v3_add(sb->v[p->a], v3_cross(sb->w[p->a], p->ra));
        const imp_vec3 vb = v3_add(sb->v[p->b], v3_cross(sb->w[p->b], p->rb));
        const imp_vec3 u = v3_sub(va, vb);
        const double v1 = v3_dot(u, p->t1), v2 = v3_dot(u, p->t2);
        const contact_point_info *info = &s->info[p->first];
        p->mu = v1 * v1 + v2 * v2 < STICK_SPEED * STICK_SPEED ? info->mu_s : info->mu_k;
    }
}

static void friction_coefficients(imp_world *w, impulse_state *s)
{
    island_job job = {w, s};
    par_for(friction_part, &job, PAR_CHUNKS);
}

/* 2. Velocities: the forces of the held bodies (the others go through the ODE), their damping, then
 * the joints' post-stabilization with the motors (S1). A jointed body whose joint island touches
 * nothing takes half of its forces' impulse here and half after its position update
 * (joints_positions): with the joints' impulses before the turn that keeps L and the velocity
 * projection after it, the step is RATTLE's kick, drift, kick (second order: a conical pendulum's
 * rate, a top's precession and their energy hold at dt 1/60). An island that touches something takes
 * the whole impulse here, before its contacts, so that resting on them it ends the step at rest.
 * Each body is its own: both threads (velocities_part). */
static void velocities_part(void *ctx, int chunk)
{
    const island_job *job = ctx;
    const imp_world *w = job->w;
    impulse_state *s = job->s;
    solver_bodies *sb = &s->sb;
    const double h = sb->h;
    const imp_vec3 g = w->settings.gravity;
    int lo, hi;
    par_range(sb->n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (!s->held[i] || sb->im[i] == 0) continue;
        const body *b = &w->bodies->body[i];
        const double hk = s->njoints && joints_half_kick(w, i) ? 0.5 * h : h;
        /* (gravity scaled per body: body.gravity_scale, 1 unless a script set it) */
        sb->v[i] = v3_add(sb->v[i], v3_scale(v3_add(v3_scale(g, b->gravity_scale), v3_scale(v3_sub(b->force, v3_scale(sb->v[i], w->settings.drag)), b->inv_mass)), hk));
        sb->w[i] = v3_add(sb->w[i], m3_mul_v(sb->Iinv[i], v3_scale(b->torque, hk)));
        /* the body's damping dv/dt = -c v over the step, exactly: v exp(-c h), as body.c's bodies_damp
         * takes it for the bodies the ODE moves (stable for any c h) */
        if (b->lin_damp > 0) sb->v[i] = v3_scale(sb->v[i], exp(-b->lin_damp * h));
        if (b->ang_damp > 0) sb->w[i] = v3_scale(sb->w[i], exp(-b->ang_damp * h));
        if (w->settings.planar) project_planar(&sb->v[i], &sb->w[i]);
    }
}

static void velocities(imp_world *w, impulse_state *s)
{
    island_job job = {w, s};
    par_for(velocities_part, &job, PAR_CHUNKS);
    if (s->njoints) joints_post_stabilize(w, &s->sb, true);
}

/* the points [*q0, *q1) of the patches [lo, hi) */
static void patch_points(const impulse_state *s, int lo, int hi, int *q0, int *q1)
{
    *q0 = lo < hi ? s->patches[lo].first : 0;
    *q1 = lo < hi ? s->patches[hi - 1].first + s->patches[hi - 1].count : 0;
}

/* The stages 3a - 3d of one island: its patches are one range [r[0], r[1]), or, split (split_islands),
 * the halves [r[0], r[1]), [r[1], r[2]) and the patches between them [r[2], r[3]). A stage that visits
 * the patches in turn runs over both halves at once (on both threads: they share no moving body),
 * then over the patches between them; shock propagation does so level by level. */
typedef struct island_stage island_stage;
typedef void (*range_fn)(island_stage *st, int lo, int hi, int part);
struct island_stage {
    imp_world *w;
    impulse_state *s;
    const int *r;
    int parts;                /* 1: one range; 3: split                                             */
    const int *lo, *hi;       /* the parts [lo[g], hi[g]) island_run runs a stage over              */
    bool between_first;       /* the patches between the halves before them (else after)           */
    double change[3], size[3];/* a sweep's sums over each part                                      */
};

/* HALF_MIN: patches in each half below which a run stays on one thread (the same numbers: the halves
 * share no moving body) */
#define HALF_MIN 8

/* fn over the parts [lo[g], hi[g]) of the island, in the order above; halves runs fn on one half as a
 * parallel chunk (each stage its own, so par_for times each stage's jobs apart: parallel.c) */
static void island_run(island_stage *st, range_fn fn, par_fn halves, const int *lo, const int *hi)
{
    if (st->parts == 1) {
        fn(st, lo[0], hi[0], 0);
        return;
    }
    st->lo = lo, st->hi = hi;
    if (st->between_first) fn(st, lo[2], hi[2], 2);
    if (hi[0] - lo[0] >= HALF_MIN && hi[1] - lo[1] >= HALF_MIN) par_for(halves, st, 2);
    else fn(st, lo[0], hi[0], 0), fn(st, lo[1], hi[1], 1);
    if (!st->between_first) fn(st, lo[2], hi[2], 2);
}

/* a stage's chunk for island_run: the stage fn over half h */
#define HALVES(fn) \
    static void fn##_halves(void *ctx, int h) \
    { \
        island_stage *st = ctx; \
        fn(st, st->lo[h], st->hi[h], h); \
    }
/* fn over the whole island */
#define ISLAND_ALL(st, fn) island_run(st, fn, fn##_halves, (st)->r, (st)->r + 1)

/* 3a. Warm start: last step's impulses first, the friction clamped to this step's cone */
static void warm_start(island_stage *st, int lo, int hi, int part)
{
    (void)part;
    impulse_state *s = st->s;
    solver_bodies *sb = &s->sb;
    for (int k = lo; k < hi; k++) {
        contact_patch *p = &s->patches[k];
        contact_point *P = &s->points[p->first];
        double N = 0;
        for (int i = 0; i < p->count; i++) {
            row_apply(sb->v, sb->w, &P[i], &P[i].row, P[i].n, P[i].jn);
            N += P[i].jn;
        }
        patch_friction_clamp(p, N, p->lambda);
        patch_bodies pb = patch_load(sb, p, BOTH);
        patch_friction_apply(&pb, p, p->lambda);
        patch_store(sb, p, &pb);
    }
}

HALVES(warm_start)

/* 3b. The sweeps, in level order; one that moves the impulses by less than CONVERGED of their size ends
 * them. S1 section VI: the joints are velocity rows of the sweeps (joint_velocity.c, joints_contacts_begin),
 * each level's after that level's contacts: before the contacts of level k, the joints of the levels
 * below k not yet visited; after the last contact, the rest (those above it and those outside the
 * graph). (Joints make the world one range: the islands are solved apart only without them.) */
static void sweep(island_stage *st, int lo, int hi, int part)
{
    impulse_state *s = st->s;
    solver_bodies *sb = &s->sb;
    const int *level = s->graph.level;
    double change = 0, size = 0;
    int done = 0;
    for (int k = lo; k < hi; k++) {
        contact_patch *p = &s->patches[k];
        if (s->level_joints && (k == lo || p->level != s->patches[k - 1].level))
            joints_level(st->w, sb, done, p->level, level, false), done = p->level;
        change += patch_solve(sb, s->points, p, BOTH);
        for (int i = 0; i < p->count; i++) size += s->points[p->first + i].jn;
    }
    if (s->level_joints) joints_level(st->w, sb, done, MAX_LEVEL + 1, level, false);
    st->change[part] = change, st->size[part] = size;
}

/* A split island's patches between the halves go after the halves in one sweep and before them in the
 * next: in a fixed order one side of the cut would always answer the other's fresh impulses, a bias
 * the friction integrates (the middle column of a 20-high pyramid slides 1.8 cm in 1000 steps that way,
 * 3.3 mm alternating) */
HALVES(sweep)

static void contact_sweeps(island_stage *st)
{
    impulse_state *s = st->s;
    if (s->level_joints) joints_contacts_begin(st->w, &s->sb);
    for (int it = 0; it < st->w->settings.velocity_iterations; it++) {
        st->change[1] = st->change[2] = st->size[1] = st->size[2] = 0;
        st->between_first = it & 1;
        ISLAND_ALL(st, sweep);
        if (st->change[0] + st->change[1] + st->change[2] <= CONVERGED * (st->size[0] + st->size[1] + st->size[2])) break;
    }
}

/* 3c. Shock propagation: level by level, each level against the levels below held fixed; the joints
 * of the levels below a level's contacts first (joint_velocity.c's level_solve: the lower body held while that
 * takes energy from the upper one, else both answer as S1 asks; a joint to the world or a static body
 * then holds its body as fixed as the world for the levels above). A split island's parts are each in
 * level order: a level is its patches in every part. */
static void shock_solve(island_stage *st, int lo, int hi, int part)
{
    impulse_state *s = st->s;
    double change = 0, size = 0;
    for (int k = lo; k < hi; k++) {
        contact_patch *p = &s->patches[k];
        change += patch_solve(&s->sb, s->points, p, shock_side(s->graph.level, p));
        for (int i = 0; i < p->count; i++) size += s->points[p->first + i].jn;
    }
    st->change[part] = change, st->size[part] = size;
}

HALVES(shock_solve)

static void shock_propagation(island_stage *st)
{
    imp_world *w = st->w;
    impulse_state *s = st->s;
    solver_bodies *sb = &s->sb;
    const int *level = s->graph.level, *r = st->r;
    int at[3], end[3], jdone = 0;
    st->between_first = false;
    for (int g = 0; g < st->parts; g++) at[g] = r[g];
    for (;;) {
        int lv = MAX_LEVEL + 1;
        for (int g = 0; g < st->parts; g++)
            if (at[g] < r[g + 1] && s->patches[at[g]].level < lv) lv = s->patches[at[g]].level;
        if (lv > MAX_LEVEL) break;
        for (int g = 0; g < st->parts; g++)
            for (end[g] = at[g]; end[g] < r[g + 1] && s->patches[end[g]].level == lv;) end[g]++;
        if (s->level_joints) {
            for (int pass = 0; pass < SHOCK_PASSES; pass++) joints_level(w, sb, jdone, lv, level, true);
            jdone = lv;
        }
        for (int pass = 0; pass < SHOCK_PASSES; pass++) {
            st->change[1] = st->change[2] = st->size[1] = st->size[2] = 0;
            island_run(st, shock_solve, shock_solve_halves, at, end);
            if (st->change[0] + st->change[1] + st->change[2] <= CONVERGED * (st->size[0] + st->size[1] + st->size[2]))
                break; /* this level holds */
        }
        for (int g = 0; g < st->parts; g++) at[g] = end[g];
    }
    if (s->level_joints)
        for (int pass = 0; pass < SHOCK_PASSES; pass++) joints_level(w, sb, jdone, MAX_LEVEL + 1, level, true);
}

/* 3d. Split impulses: pseudo velocities that remove the penetration beyond the slop; the joints' rows
 * act on them too, so a jointed body pushed out of the ground takes its partners along instead of
 * making a displacement the pre-stabilization would take back */
static void split_sweep(island_stage *st, int lo, int hi, int part)
{
    (void)part;
    impulse_state *s = st->s;
    solver_bodies *sb = &s->sb;
    int q0, q1;
    patch_points(s, lo, hi, &q0, &q1);
    for (int q = q0; q < q1; q++) {
        contact_point *c = &s->points[q];
        double vn = row_vel(sb->vp, sb->wp, c, &c->row, c->n);
        double jp = c->jp + c->row.k * (c->bias - vn);
        jp = jp > 0 ? jp : 0;
        row_apply(sb->vp, sb->wp, c, &c->row, c->n, jp - c->jp);
        c->jp = jp;
    }
}

HALVES(split_sweep)

static void split_impulses(island_stage *st)
{
    impulse_state *s = st->s;
    int q0, q1;
    patch_points(s, st->r[0], st->r[st->parts], &q0, &q1);
    bool pushing = false;
    for (int q = q0; q < q1 && !pushing; q++) pushing = s->points[q].bias > 0;
    for (int it = 0; it < st->w->settings.position_iterations && pushing; it++) {
        ISLAND_ALL(st, split_sweep);
        if (s->level_joints) joints_split(st->w, &s->sb);
    }
}

/* The impulses of the sweeps go back to the manifolds: next step's warm start, and what scripts read.
 * They are stored before shock propagation, whose impulses answer a changed problem (the lower body of
 * each contact held fixed) and would seed the next step's sweeps with forces its bodies never felt. A
 * patch's friction goes to its points as equal shares of (lambda1 t1 + lambda2 t2) plus the tangential
 * impulses n x d_k lambda3 / sum |d|^2 (d_k a point's offset from the centroid) whose moment is the twist */
static void store_impulses(imp_world *w, impulse_state *s, int lo, int hi)
{
    for (int k = lo; k < hi; k++) {
        const contact_patch *p = &s->patches[k];
        const contact_point *P = &s->points[p->first];
        const contact_point_info *info = &s->info[p->first];
        imp_contact *ct = &w->contacts->manifolds[info->man].c;
        double d2 = 0;
        imp_vec3 d[4];
        for (int i = 0; i < p->count; i++) {
            d[i] = v3_sub(info[i].ra, p->ra);
            d[i] = v3_mad(d[i], p->n, -v3_dot(d[i], p->n));
            d2 += v3_dot(d[i], d[i]);
        }
        const imp_vec3 share = v3_scale(v3_add(v3_scale(p->t1, p->lambda[0]), v3_scale(p->t2, p->lambda[1])), 1.0 / p->count);
        for (int i = 0; i < p->count; i++) {
            imp_vec3 jt = share;
            if (d2 > 0) jt = v3_mad(jt, v3_cross(p->n, d[i]), p->lambda[2] / d2);
            ct->normal_impulse[info[i].k] = P[i].jn;
            ct->tangent_impulse[info[i].k] = jt;
        }
    }
}

/* 4. Positions. The velocities go back into the state (P = M v, L = I(t) omega); the ODE solver moves
 * x and q with P and L held for the held bodies (the others: with their forces); the split impulses'
 * displacement follows (x += h v_p, q += h/2 [0, w_p] q, omega kept); jointed bodies move as
 * pre-stabilization predicted (joint_position.c). The ODE pass is skipped when it would move nothing that is
 * kept: every body static, asleep (its momenta are zeroed here), or jointed. */
typedef struct positions_job {
    imp_world *w;
    impulse_state *s;
    bool ode;                 /* the ODE pass runs */
} positions_job;

/* the held bodies' velocities into their momenta, P = M v and L = I(t) omega (a sleeper's are zero) */
static void momenta_part(void *ctx, int chunk)
{
    const positions_job *job = ctx;
    imp_world *w = job->w;
    impulse_state *s = job->s;
    solver_bodies *sb = &s->sb;
    int lo, hi;
    par_range(sb->n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        if (b->asleep) {
            memset(X + 7, 0, 6 * sizeof(double));
            continue;
        }
        if (w->settings.planar) project_planar(&sb->v[i], &sb->w[i]), project_planar(&sb->vp[i], &sb->wp[i]);
        if (!s->held[i] && !w->settings.planar) continue;
        /* joints_positions writes a jointed body's whole state; only an ODE pass (whose adaptive error
         * estimate sees every body) reads it before */
        if (!job->ode && s->njoints && s->jointed[i] && sb->im[i] > 0) continue;
        imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
        v3_store(X + 7, v3_scale(sb->v[i], b->mass));
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(R, b->Ibody), sb->w[i]));
    }
}

/* the split impulses' displacement: x += h v_p, q += h/2 [0, w_p] q, with omega kept */
static void split_move_part(void *ctx, int chunk)
{
    const positions_job *job = ctx;
    imp_world *w = job->w;
    impulse_state *s = job->s;
    solver_bodies *sb = &s->sb;
    const double h = sb->h;
    int lo, hi;
    par_range(sb->n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (!s->held[i] || sb->im[i] == 0 || (s->njoints && s->jointed[i])) continue; /* jointed: joints_positions */
        double *X = w->bodies->state + BODY_DIM * i;
        v3_accum(X, v3_scale(sb->vp[i], h));
        imp_vec3 wp = sb->wp[i];
        imp_quat q = quat(X[3], X[4], X[5], X[6]);
        imp_quat dq = quat_mul(quat(0, wp.x, wp.y, wp.z), q);
        q = quat_normalize(quat(q.w + 0.5 * h * dq.w, q.x + 0.5 * h * dq.x, q.y + 0.5 * h * dq.y, q.z + 0.5 * h * dq.z));
        /* L = I(t) omega follows the turn so omega is kept */
        imp_mat3 R0 = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
        imp_vec3 om = m3_mul_v(m3_rotate_tensor(R0, w->bodies->body[i].Ibody_inv), v3_load(X + 10));
        X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(quat_to_m3(q), w->bodies->body[i].Ibody), om));
    }
}

static void positions(imp_world *w, impulse_state *s, const imp_step *st)
{
    solver_bodies *sb = &s->sb;
    const int n = sb->n;
    const double h = sb->h;
    bool ode = !s->njoints;
    for (int i = 0; i < n && !ode; i++) {
        const body *b = &w->bodies->body[i];
        ode = b->motion == IMP_KINEMATIC || (b->motion == IMP_DYNAMIC && !b->asleep && !(s->jointed[i] && sb->im[i] > 0));
    }
    positions_job job = {w, s, ode};
    par_for(momenta_part, &job, PAR_CHUNKS);
    body_ode held = {w, s->held, NULL};
    imp_ode_system sys = bodies_ode(&held);
    if (ode) imp_ode_advance(&sys, &w->body_solver, st->t, h), bodies_damp(w, h, s->held); /* (held: damped above) */
    par_for(split_move_part, &job, PAR_CHUNKS);
    /* jointed bodies: x' = x + h v, q' the turn that keeps L, exactly as pre-stabilization predicted, then
     * velocity post-stabilization after the position update (S1 section VI) */
    if (s->njoints) joints_positions(w, sb, st->bodies0);
}

/* islands that have rested long enough sleep; bodies joined by joints are one island with them (and
 * joint.c wakes them together) */
static void sleeping(imp_world *w, impulse_state *s)
{
    if (!w->settings.sleeping) return;
    if (s->njoints) {
        const uint64_t *pairs;
        int np_j = joints_pairs(w, &pairs);
        for (int k = 0; k < np_j; k++) {
            int a = (int)(pairs[k] >> 32), b = (int)(pairs[k] & 0xffffffffu);
            if (s->sb.im[a] == 0 || s->sb.im[b] == 0) continue;
            islands_union(&s->graph, a, b);
        }
    }
    islands_sleep(w, &s->graph, &s->sb, s->held);
}

/* ---- the islands solved apart ------------------------------------------------------------------------ *
 * Without joints, islands share no moving body (a static, kinematic or sleeping body that two touch is
 * read, never written), so each island's collisions and sweeps can run on their own: the same stages in
 * the same order over its points and patches, which manifold_order laid out consecutively and in level
 * order. Solving island after island gives what the stages over the whole world give, except that a
 * sweep loop ends by the island's own convergence test. The islands are cut into PAR_CHUNKS chunks of
 * about equal points and the chunks run on both threads: whichever thread solves an island, its numbers
 * are the same. An island too large for one thread's share is split in two halves (split_islands) and
 * solved after the others, its stages on both threads. */
static void collide_islands(void *ctx, int chunk)
{
    island_job *job = ctx;
    impulse_state *s = job->s;
    for (int i = s->chunk_island[chunk]; i < s->chunk_island[chunk + 1]; i++) {
        collisions(job->w, s, s->island_first[i], s->island_first[i + 1]);
    }
}

/* 3a - 3d for an island (or the whole world in level order): its patches r[0] .. r[parts] (island_stage) */
static void solve_contacts(imp_world *w, impulse_state *s, const int *r, int parts)
{
    island_stage st = {.w = w, .s = s, .r = r, .parts = parts};
    ISLAND_ALL(&st, warm_start);
    contact_sweeps(&st);
    store_impulses(w, s, r[0], r[parts]);
    shock_propagation(&st);
    split_impulses(&st);
}

/* the islands of one chunk, except the split ones (solved after, each on both threads) */
static void solve_islands(void *ctx, int chunk)
{
    island_job *job = ctx;
    impulse_state *s = job->s;
    for (int i = s->chunk_island[chunk]; i < s->chunk_island[chunk + 1]; i++) {
        bool split = false;
        for (int j = 0; j < s->nsplit; j++) split = split || s->split[j].island == i;
        if (!split) solve_contacts(job->w, s, &s->island_first[i], 1);
    }
}

/* S1's stages in order; false when nothing needs them (the caller moves the bodies by their ODE) */
static bool impulse_stages(imp_world *w, const imp_step *st)
{
    const int n = w->bodies->ids.count;
    if (w->impulse) w->impulse->hit_count = 0;
    if (!n || w->settings.contact_mode == IMP_CONTACT_NONE) return false;
    impulse_state *s = state_get(w);
    reserve_bodies(s, n);
    int np_max = 0;
    for (int m = 0; m < w->contacts->manifold_count; m++) np_max += w->contacts->manifolds[m].c.count;
    reserve_points(s, np_max);
    s->sb.n = n, s->sb.h = st->dt;
    s->njoints = joints_prepare(w, n); /* jointed bodies are awake and take every stage (S1) */
    s->jointed = joints_jointed(w);
    load_bodies(w, s);
    manifold_sides(w, s);
    if (!contact_graph(w, s)) return false;
    build_points(w, s);
    build_patches(w, s);
    s->level_joints = s->njoints && s->np;
    island_job job = {w, s};
    if (s->nisland) par_for(collide_islands, &job, PAR_CHUNKS);
    else collisions(w, s, 0, s->npatch);
    collisions_finish(w, s);
    friction_coefficients(w, s);
    velocities(w, s);
    if (s->nisland) {
        par_for(solve_islands, &job, PAR_CHUNKS);
        for (int j = 0; j < s->nsplit; j++) solve_contacts(w, s, s->split[j].first, 3);
    } else {
        const int all[2] = {0, s->npatch};
        solve_contacts(w, s, all, 1);
    }
    /* S1 section IV: pre-stabilization of every joint at once, after the contacts: impulses that make the
     * predicted joint frames (after the position update below, split impulses included) satisfy every
     * joint. It is also S1's final articulation-only sweep. */
    if (s->njoints) joints_pre_stabilize(w, &s->sb);
    positions(w, s, st);
    sleeping(w, s);
    return true;
}

void impulse_step(const imp_step *st)
{
    imp_world *w = st->w;
    if (!impulse_stages(w, st)) { /* nothing to answer: every body moves by its ODE */
        body_ode plain = {w, NULL, NULL};
        imp_ode_system sys = bodies_ode(&plain);
        imp_ode_advance(&sys, &w->body_solver, st->t, st->dt);
        bodies_damp(w, st->dt, NULL);
    }
    toi_bullets(w, st->bodies0);
}

/* the collisions of a restored snapshot's last step (snapshot.c), as the queries below answer them */
void impulse_restore_hits(imp_world *w, const imp_contact_hit *hits, int count)
{
    if (count <= 0) return;
    impulse_state *s = state_get(w);
    s->hits = ids_grow(s->hits, sizeof(imp_contact_hit), (size_t)count);
    s->hit_cap = count;
    memcpy(s->hits, hits, sizeof(imp_contact_hit) * (size_t)count);
    s->hit_count = count;
}

int imp_world_hit_count(const imp_world *w) { return w->impulse ? w->impulse->hit_count : 0; }
const imp_contact_hit *imp_world_hit(const imp_world *w, int i)
{
    if (!w->impulse || i < 0 || i >= w->impulse->hit_count) return NULL;
    return &w->impulse->hits[i];
}

/* impulse.c: the impulse contact mode (world.contact = "impulse", the default).
 *
 * S1 (Weinstein, Teran, Fedkiw, L614-676) gives the step order, after Guendelman, Bridson and Fedkiw
 * 2003 ("Nonconvex rigid bodies with stacking"):
 *
 *   1. collisions    impulses with restitution on the approaching contacts, a few sweeps
 *   2. velocities    v += h (g + F/M), omega += h I^-1 tau, for the bodies that touch something
 *   3. contacts      and joints level by level in the contact graph: sequential impulses with
 *                    Coulomb friction, warm started, the joints as blocks of velocity rows after each
 *                    level's contacts (joint.c), then one sweep of shock propagation (each level solved
 *                    against the levels below as if they were fixed; a joint between two levels holds
 *                    its lower body while that takes energy from the upper one, else both answer),
 *                    then the joints' pre-stabilization
 *   4. positions     the world's ODE solver moves x and q with the new velocities (P and L held:
 *                    a rigid body's free rotation stays exact), plus the split-impulse correction
 *
 * The contacts are last step's manifolds (contact.c runs after the positions moved, so they describe
 * the state at the start of this step). Bodies that touch nothing are integrated by the ODE solver
 * with their forces exactly as without contact response.
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
 * Approaches slower than REST_SPEED do not bounce, so resting contacts do not jitter.
 *
 * No allocation per step: the scratch arrays grow to the largest world seen and are kept. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "ids.h"
#include "imp_math.h"
#include "impulse.h"
#include "joint.h"
#include "query.h"
#include "shape.h"
#include "world_parts.h"

#define REST_SPEED 0.5        /* m/s: slower approaches get no restitution                          */
#define STICK_SPEED 0.01      /* m/s: a point slower than this at the start uses static friction   */
#define SLOP 0.002            /* m: penetration left alone (keeps resting contacts alive)          */
#define BETA 0.2              /* fraction of the penetration the split impulses remove per step    */
#define COLLISION_SWEEPS 10
#define SHOCK_PASSES 4     /* sweeps over each level's points in the shock propagation stage */
#define SLEEP_SPEED 0.05      /* m/s and rad/s                                                      */
#define SLEEP_TIME 0.5        /* s                                                                  */
#define MAX_LEVEL 1023
#define CONVERGED 1e-6       /* a sweep that changes the impulses by less than this fraction ends them */

/* one row of a contact point along a direction d: the lever arms crossed with d, their images under
 * the inverse inertias (the angular velocity a unit impulse along d gives), and the effective mass */
typedef struct crow {
    imp_vec3 ca, cb, ia, ib;  /* r_a x d, r_b x d, I_a^-1 (r_a x d), I_b^-1 (r_b x d)              */
    double k;                 /* m_eff = 1 / (1/M_a + 1/M_b + (r_a x d).I_a^-1 (r_a x d) + ...)   */
} crow;

/* a contact point as the sweeps see it (what every sweep reads is here, ~460 bytes; the rest is in
 * ccold at the same index, so the sweeps stream less memory) */
typedef struct cpoint {
    crow row[3];              /* along n, t1, t2                                                    */
    imp_vec3 n, t1, t2;
    double ima, imb;
    double jn, jt1, jt2, jp;  /* accumulated normal, friction and split (pseudo) impulses          */
    double mu;                /* the Coulomb coefficient of this step (static or kinetic)          */
    double gap;               /* max(-depth, 0) / h: the approach speed a near point may have      */
    double bias;              /* beta max(depth - slop, 0) / h: the split impulses' target speed  */
    int a, b;                 /* dense body index; the static world is index n (all zero)          */
} cpoint;

typedef struct ccold {
    double ka[3], kb[3];      /* m_eff with only A / only B moving (shock propagation), per row    */
    imp_vec3 ra, rb;
    int man, k;               /* manifold and point in it                                          */
    int key;                  /* contact-graph level: max of the two bodies' levels                */
    double mu_s, mu_k, e, depth;
} ccold;

typedef struct impulse_scratch {
    int body_cap, point_cap;
    imp_vec3 *v, *w, *vp, *wp;   /* n + 1 entries: the last one is the static world                  */
    imp_mat3 *Iinv;
    double *im;
    int *level, *uf, *adj_start, *adj, *queue, adj_cap;
    uint8_t *drift;
    cpoint *sorted;              /* the contact points in level order                               */
    ccold *cold;                 /* their other data, same order                                    */
    int *count;                  /* MAX_LEVEL + 2 counters of the level sort                        */
    imp_contact_hit *hits; int hit_count, hit_cap; /* collisions of the last step, one per pair        */
    int *man_ab, *man_order; int man_cap;          /* per manifold: its two bodies; the live ones       */
} impulse_scratch;

void impulse_free(imp_world *w)
{
    impulse_scratch *s = w->imp;
    if (!s) return;
    free(s->v), free(s->w), free(s->vp), free(s->wp), free(s->Iinv), free(s->im), free(s->level), free(s->uf);
    free(s->adj_start), free(s->adj), free(s->queue), free(s->drift), free(s->sorted), free(s->cold), free(s->count), free(s->hits), free(s->man_ab), free(s->man_order);
    free(s);
    w->imp = NULL;
}

static void scratch_bodies(impulse_scratch *s, int n)
{
    if (n + 1 <= s->body_cap) return;
    int c = (n + 1) * 3 / 2 + 16;
    s->v = ids_grow(s->v, sizeof(imp_vec3), c), s->w = ids_grow(s->w, sizeof(imp_vec3), c);
    s->vp = ids_grow(s->vp, sizeof(imp_vec3), c), s->wp = ids_grow(s->wp, sizeof(imp_vec3), c);
    s->Iinv = ids_grow(s->Iinv, sizeof(imp_mat3), c), s->im = ids_grow(s->im, sizeof(double), c);
    s->level = ids_grow(s->level, sizeof(int), c), s->uf = ids_grow(s->uf, sizeof(int), c);
    s->adj_start = ids_grow(s->adj_start, sizeof(int), c + 1), s->queue = ids_grow(s->queue, sizeof(int), c);
    s->drift = ids_grow(s->drift, 1, c);
    s->body_cap = c;
}

static void scratch_points(impulse_scratch *s, int n)
{
    if (n <= s->point_cap) return;
    int c = n * 3 / 2 + 64;
    s->sorted = ids_grow(s->sorted, sizeof(cpoint), c), s->cold = ids_grow(s->cold, sizeof(ccold), c);
    if (2 * c > s->adj_cap) s->adj_cap = 2 * c, s->adj = ids_grow(s->adj, sizeof(int), 2 * c);
    s->point_cap = c;
}

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

static int uf_find(int *uf, int i)
{
    while (uf[i] != i) uf[i] = uf[uf[i]], i = uf[i];
    return i;
}



/* velocity of row r (direction d): n . dv = d . (v_a - v_b) + (r_a x d) . w_a - (r_b x d) . w_b */
static inline double row_vel(const imp_vec3 *v, const imp_vec3 *w, const cpoint *c, const crow *r, imp_vec3 d)
{
    return v3_dot(d, v3_sub(v[c->a], v[c->b])) + v3_dot(r->ca, w[c->a]) - v3_dot(r->cb, w[c->b]);
}

/* impulse j along row r: v_a += j d / M_a, w_a += j I_a^-1 (r_a x d), and the opposite on B; ma, mb:
 * which sides move (shock propagation holds the lower one) */
static inline void row_apply(imp_vec3 *v, imp_vec3 *w, const cpoint *c, const crow *r, imp_vec3 d, double j, int ma, int mb)
{
    if (ma) v[c->a] = v3_mad(v[c->a], d, j * c->ima), w[c->a] = v3_mad(w[c->a], r->ia, j);
    if (mb) v[c->b] = v3_mad(v[c->b], d, -j * c->imb), w[c->b] = v3_mad(w[c->b], r->ib, -j);
}

static inline double row_k(const cpoint *c, const ccold *cc, int r, int ma, int mb)
{
    return ma && mb ? c->row[r].k : ma ? cc->ka[r] : cc->kb[r];
}

/* one point of a contact sweep: friction in the cone of the present normal impulse, then the normal
 * impulse that stops the approach. ma, mb: which sides answer (shock propagation: the upper one only).
 * The two bodies' velocities are held in locals for the three rows and stored once. */
static double solve_point(impulse_scratch *s, cpoint *c, const ccold *cc, int ma, int mb)
{
    const int a = c->a, b = c->b;
    imp_vec3 va = s->v[a], wa = s->w[a], vb = s->v[b], wb = s->w[b];
    const double sa = ma ? c->ima : 0, sb = mb ? c->imb : 0, fa = ma ? 1 : 0, fb = mb ? 1 : 0;
#define ROW_VEL(r, d) (v3_dot(d, v3_sub(va, vb)) + v3_dot(c->row[r].ca, wa) - v3_dot(c->row[r].cb, wb))
#define ROW_APPLY(r, d, j)                                                              \
    do {                                                                                \
        va = v3_mad(va, d, (j) * sa), wa = v3_mad(wa, c->row[r].ia, (j) * fa);          \
        vb = v3_mad(vb, d, -(j) * sb), wb = v3_mad(wb, c->row[r].ib, -(j) * fb);        \
    } while (0)
    /* friction: accumulated (jt1, jt2) clamped to the disc of radius mu jn */
    double o1 = c->jt1, o2 = c->jt2;
    double j1 = o1 - row_k(c, cc, 1, ma, mb) * ROW_VEL(1, c->t1);
    double j2 = o2 - row_k(c, cc, 2, ma, mb) * ROW_VEL(2, c->t2);
    double lim = c->mu * c->jn, len2 = j1 * j1 + j2 * j2;
    if (len2 > lim * lim) {
        double f = lim / sqrt(len2);
        j1 *= f, j2 *= f;
    }
    c->jt1 = j1, c->jt2 = j2;
    ROW_APPLY(1, c->t1, j1 - o1);
    ROW_APPLY(2, c->t2, j2 - o2);
    /* normal: accumulated jn >= 0, target n . dv = 0; a gap (depth < 0) may close in this step, no more */
    double jn = c->jn - row_k(c, cc, 0, ma, mb) * (ROW_VEL(0, c->n) + c->gap);
    if (jn < 0) jn = 0;
    double change = fabs(jn - c->jn) + fabs(j1 - o1) + fabs(j2 - o2);
    ROW_APPLY(0, c->n, jn - c->jn);
    c->jn = jn;
#undef ROW_VEL
#undef ROW_APPLY
    if (ma) s->v[a] = va, s->w[a] = wa;
    if (mb) s->v[b] = vb, s->w[b] = wb;
    return change; /* how much the impulses moved (the sweeps stop when nothing does) */
}

static void project_planar(imp_vec3 *v, imp_vec3 *w) { v->z = 0, w->x = 0, w->y = 0; }

int impulse_step(imp_world *w, double h)
{
    const int n = w->bodies->ids.count;
    contact_set *col = w->contacts;
    const int nm = col->manifold_count;
    if (w->imp) w->imp->hit_count = 0;
    if (!n || w->settings.contact_mode == IMP_CONTACT_NONE) return 0;
    if (!w->imp) {
        w->imp = calloc(1, sizeof(impulse_scratch));
        if (!w->imp) abort();
        w->imp->count = ids_grow(NULL, sizeof(int), MAX_LEVEL + 2);
    }
    impulse_scratch *s = w->imp;
    scratch_bodies(s, n);
    int np_max = 0;
    for (int m = 0; m < nm; m++) np_max += col->manifolds[m].c.count;
    scratch_points(s, np_max);
    const imp_vec3 g = w->settings.gravity;

    const int njoints = joints_prepare(w, n); /* jointed bodies are awake and take every stage (S1) */
    const uint8_t *jointed = joints_jointed(w);

    /* ---- load the bodies: velocities and world inverse inertia; the static world is index n ---- */
    for (int i = 0; i < n; i++) {
        body *b = &w->bodies->body[i];
        const double *X = w->bodies->state + BODY_DIM * i;
        s->drift[i] = 0;
        s->uf[i] = i;
        if (b->motion == IMP_DYNAMIC && b->asleep && (v3_dot(b->force, b->force) > 0 || v3_dot(b->torque, b->torque) > 0))
            b->asleep = 0, b->sleep_time = 0; /* a push wakes it */
        if (b->motion == IMP_DYNAMIC && !b->asleep) {
            imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
            s->Iinv[i] = m3_rotate_tensor(R, b->Ibody_inv);
            s->im[i] = b->inv_mass;
            s->v[i] = v3_scale(v3_load(X + 7), b->inv_mass);
            s->w[i] = m3_mul_v(s->Iinv[i], v3_load(X + 10));
            s->level[i] = -1;
        } else {
            s->Iinv[i] = (imp_mat3){{{0}}};
            s->im[i] = 0;
            s->v[i] = b->motion == IMP_KINEMATIC ? b->kin_v : v3(0, 0, 0);
            s->w[i] = b->motion == IMP_KINEMATIC ? b->kin_w : v3(0, 0, 0);
            s->level[i] = 0;
        }
        s->vp[i] = s->wp[i] = v3(0, 0, 0);
    }
    s->Iinv[n] = (imp_mat3){{{0}}}, s->im[n] = 0, s->v[n] = s->w[n] = s->vp[n] = s->wp[n] = v3(0, 0, 0), s->level[n] = 0;

    /* ---- the manifolds' two sides; wake sleeping bodies that are hit ---- */
    if (nm > s->man_cap) {
        s->man_cap = nm * 3 / 2 + 64;
        s->man_ab = ids_grow(s->man_ab, 2 * sizeof(int), s->man_cap);
        s->man_order = ids_grow(s->man_order, sizeof(int), s->man_cap);
    }
    for (int m = 0; m < nm; m++) {
        imp_contact *ct = &col->manifolds[m].c;
        ct->impact = 0, ct->impact_speed = 0;
        int a = side_body(w, ct->a, n), b = side_body(w, ct->b, n);
        s->man_ab[2 * m] = a, s->man_ab[2 * m + 1] = b;
        /* a sleeping body touched by an awake moving one (dynamic or kinematic) wakes */
        for (int side = 0; side < 2; side++) {
            int x = side ? b : a, y = side ? a : b;
            if (x < n && y < n && w->bodies->body[x].motion == IMP_DYNAMIC && w->bodies->body[x].asleep && !w->bodies->body[y].asleep &&
                (w->bodies->body[y].motion == IMP_KINEMATIC ? v3_len(s->v[y]) + v3_len(s->w[y]) > 0
                                                      : w->bodies->body[y].motion == IMP_DYNAMIC && w->bodies->body[y].sleep_time < SLEEP_TIME)) {
                body *bx = &w->bodies->body[x];
                const double *X = w->bodies->state + BODY_DIM * x;
                bx->asleep = 0, bx->sleep_time = 0;
                imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
                s->Iinv[x] = m3_rotate_tensor(R, bx->Ibody_inv), s->im[x] = bx->inv_mass, s->level[x] = -1;
            }
        }
    }

    /* ---- islands (union-find over dynamic pairs) and the contact graph's levels (BFS), over the
     * manifolds where something can move; the others drop out ---- */
    for (int i = 0; i <= n + 1; i++) s->adj_start[i] = 0;
    int live = 0;
    for (int m = 0; m < nm; m++) {
        int a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        if (s->im[a] == 0 && s->im[b] == 0) continue;
        if (njoints && a < n && b < n && joints_connected(w, a, b)) continue; /* joined bodies do not touch */
        s->man_order[live++] = m;
        if (s->im[a] > 0) s->drift[a] = 1;
        if (s->im[b] > 0) s->drift[b] = 1;
        if (s->im[a] > 0 && s->im[b] > 0) {
            int ra = uf_find(s->uf, a), rb = uf_find(s->uf, b);
            if (ra != rb) s->uf[ra] = rb;
        }
        s->adj_start[a + 1]++, s->adj_start[b + 1]++;
    }
    if (!live) {
        /* nothing to answer: the ODE integrates every awake body; sleeping ones stay */
        bool any_asleep = false;
        for (int i = 0; i < n; i++) any_asleep = any_asleep || w->bodies->body[i].asleep;
        if (!any_asleep && !w->settings.planar && !njoints) return 0;
    }
    /* sleeping bodies are held too (their momenta are zero): otherwise the ODE solver would let them fall
     * g h^2 / 2 a step while other contacts in the world are live */
    for (int i = 0; i < n; i++) s->drift[i] = s->drift[i] || w->bodies->body[i].asleep;
    if (njoints)
        for (int i = 0; i < n; i++) s->drift[i] = s->drift[i] || (jointed[i] && s->im[i] > 0);
    if (w->settings.planar) /* every awake body takes the velocity stage, where its velocities are projected */
        for (int i = 0; i < n; i++) s->drift[i] = s->drift[i] || s->im[i] > 0;
    /* joints are edges of the contact graph too (S1 section VI: articulated bodies take their levels
     * from what they hang on and rest on) */
    const uint64_t *jpairs = NULL;
    int njp = njoints ? joints_pairs(w, &jpairs) : 0;
    for (int k = 0; k < njp; k++) {
        int a = (int)(jpairs[k] >> 32), b = (int)(jpairs[k] & 0xffffffffu);
        if (s->im[a] == 0 && s->im[b] == 0) continue;
        s->adj_start[a + 1]++, s->adj_start[b + 1]++;
    }
    if (2 * (live + njp) > s->adj_cap) {
        s->adj_cap = 2 * (live + njp) * 3 / 2 + 64;
        s->adj = ids_grow(s->adj, sizeof(int), s->adj_cap);
    }
    for (int i = 0; i < n + 1; i++) s->adj_start[i + 1] += s->adj_start[i];
    for (int i = 0; i <= n; i++) s->queue[i] = s->adj_start[i]; /* fill cursors */
    for (int l = 0; l < live; l++) {
        int m = s->man_order[l], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        s->adj[s->queue[a]++] = b;
        s->adj[s->queue[b]++] = a;
    }
    for (int k = 0; k < njp; k++) {
        int a = (int)(jpairs[k] >> 32), b = (int)(jpairs[k] & 0xffffffffu);
        if (s->im[a] == 0 && s->im[b] == 0) continue;
        s->adj[s->queue[a]++] = b;
        s->adj[s->queue[b]++] = a;
    }
    /* BFS from everything that does not move (level 0) */
    int head = 0, tail = 0;
    for (int i = 0; i <= n; i++)
        if (s->level[i] == 0) s->queue[tail++] = i;
    while (head < tail) {
        int i = s->queue[head++];
        for (int e = s->adj_start[i]; e < s->adj_start[i + 1]; e++) {
            int j = s->adj[e];
            if (s->level[j] < 0) s->level[j] = s->level[i] + 1 > MAX_LEVEL ? MAX_LEVEL : s->level[i] + 1, s->queue[tail++] = j;
        }
    }
    for (int i = 0; i <= n; i++)
        if (s->level[i] < 0) s->level[i] = MAX_LEVEL; /* not connected to the ground: after all others */

    /* ---- the contact points, built straight into level order (a counting sort of the manifolds by
     * the higher level of their two bodies; stable, so manifold order within a level) ---- */
    memset(s->count, 0, sizeof(int) * (MAX_LEVEL + 2));
    for (int l = 0; l < live; l++) {
        int m = s->man_order[l], la = s->level[s->man_ab[2 * m]], lb = s->level[s->man_ab[2 * m + 1]];
        s->count[(la > lb ? la : lb) + 1] += col->manifolds[m].c.count;
    }
    for (int l = 0; l <= MAX_LEVEL; l++) s->count[l + 1] += s->count[l];
    cpoint *P = s->sorted;
    int np = 0;
    for (int l = 0; l < live; l++) {
        int m = s->man_order[l], a = s->man_ab[2 * m], b = s->man_ab[2 * m + 1];
        const imp_contact *ct = &col->manifolds[m].c;
        int key = s->level[a] > s->level[b] ? s->level[a] : s->level[b];
        const shape *sa = side_shape(w, ct->a), *sb = side_shape(w, ct->b);
        double mu_a = 0.5, mu_b = 0.5, ms_a = 0.5, ms_b = 0.5, e_a = 0, e_b = 0;
        if (sa) mu_a = sa->friction, ms_a = sa->static_friction >= 0 ? sa->static_friction : mu_a, e_a = sa->restitution;
        if (sb) mu_b = sb->friction, ms_b = sb->static_friction >= 0 ? sb->static_friction : mu_b, e_b = sb->restitution;
        if (!sa && !imp_id_is_null(ct->a.collider)) {
            int ci = ids_lookup(&w->colliders->ids, ct->a.collider);
            if (ci >= 0) mu_a = ms_a = w->colliders->collider[ci].def.friction, e_a = w->colliders->collider[ci].def.restitution;
        }
        if (!sb && !imp_id_is_null(ct->b.collider)) {
            int ci = ids_lookup(&w->colliders->ids, ct->b.collider);
            if (ci >= 0) mu_b = ms_b = w->colliders->collider[ci].def.friction, e_b = w->colliders->collider[ci].def.restitution;
        }
        /* a tangent basis: t1 perpendicular to n and to the axis n is least along */
        imp_vec3 nn = ct->normal;
        imp_vec3 ax = fabs(nn.x) < 0.57 ? v3(1, 0, 0) : fabs(nn.y) < 0.57 ? v3(0, 1, 0) : v3(0, 0, 1);
        imp_vec3 t1 = v3_normalize(v3_cross(nn, ax)), t2 = v3_cross(nn, t1);
        for (int k = 0; k < ct->count; k++) {
            int idx = s->count[key]++;
            cpoint *c = &P[idx];
            ccold *cc = &s->cold[idx];
            np++;
            c->a = a, c->b = b, cc->man = m, cc->k = k, cc->key = key;
            c->n = nn, c->t1 = t1, c->t2 = t2;
            /* the midpoint of the two surfaces */
            imp_vec3 p = v3_add(ct->points[k], v3_scale(nn, 0.5 * ct->depth[k]));
            cc->ra = a < n ? v3_sub(p, v3_load(w->bodies->state + BODY_DIM * a)) : p;
            cc->rb = b < n ? v3_sub(p, v3_load(w->bodies->state + BODY_DIM * b)) : p;
            cc->depth = ct->depth[k];
            c->gap = ct->depth[k] < 0 ? -ct->depth[k] / h : 0;
            c->bias = BETA * fmax(ct->depth[k] - SLOP, 0) / h;
            cc->mu_k = sqrt(mu_a * mu_b), cc->mu_s = sqrt(ms_a * ms_b), cc->e = fmax(e_a, e_b);
            c->jn = ct->normal_impulse[k];
            c->jp = 0;
            imp_vec3 jt = ct->tangent_impulse[k];
            c->jt1 = v3_dot(jt, t1), c->jt2 = v3_dot(jt, t2);
        }
    }

    /* the rows of every point: lever arms, angular responses, effective masses (the derivation above) */
    for (int q = 0; q < np; q++) {
        cpoint *c = &P[q];
        ccold *cc = &s->cold[q];
        c->ima = s->im[c->a], c->imb = s->im[c->b];
        const imp_vec3 dirs[3] = {c->n, c->t1, c->t2};
        for (int r = 0; r < 3; r++) {
            crow *R = &c->row[r];
            R->ca = v3_cross(cc->ra, dirs[r]), R->cb = v3_cross(cc->rb, dirs[r]);
            R->ia = m3_mul_v(s->Iinv[c->a], R->ca), R->ib = m3_mul_v(s->Iinv[c->b], R->cb);
            double ka = c->ima + v3_dot(R->ca, R->ia), kb = c->imb + v3_dot(R->cb, R->ib);
            R->k = ka + kb > 0 ? 1 / (ka + kb) : 0;
            cc->ka[r] = ka > 0 ? 1 / ka : 0;
            cc->kb[r] = kb > 0 ? 1 / kb : 0;
        }
    }

    /* ---- 1. collisions (Guendelman et al.): sweeps over the points; a point that approaches,
     * n . dv < 0, collides and gets the impulse of S0 eq. 8-18, j = -(1 + e) vrel m_eff, which turns
     * its approach into separation at e vrel. Each sweep tests again, so the impulse on one ball of a
     * row makes the next pair collide (propagation). Approaches slower than REST_SPEED are left to the
     * contact stage (no bounce at rest), except at points that already collided in this step. ---- */
    for (int q = 0; q < np; q++) P[q].jp = 0; /* 1: collided in this step */
    for (int sweep = 0; sweep < COLLISION_SWEEPS; sweep++) {
        bool any = false;
        for (int q = 0; q < np; q++) {
            cpoint *c = &P[q];
            const ccold *cc = &s->cold[q];
            if (cc->depth < 0) continue;
            double vn = row_vel(s->v, s->w, c, &c->row[0], c->n);
            if (!(vn < -REST_SPEED || (c->jp > 0 && vn < -1e-9))) continue;
            imp_contact *ct = &col->manifolds[cc->man].c;
            if (-vn > ct->impact_speed) ct->impact_speed = -vn;
            double dj = -(1 + cc->e) * vn * c->row[0].k;
            row_apply(s->v, s->w, c, &c->row[0], c->n, dj, 1, 1);
            ct->impact += dj;
            c->jp = 1;
            any = true;
        }
        if (!any) break;
    }
    for (int q = 0; q < np; q++) P[q].jp = 0;
    /* the pairs that collided become this step's hit events */
    for (int m = 0; m < nm; m++) {
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

    /* S1: velocity post-stabilization of the joints after the collisions (none: the velocities are
     * those post-stabilized at the end of the last step, and the next call follows) */
    if (njoints && s->hit_count) joints_post_stabilize(w, s->v, s->w, s->Iinv, s->im, n, h, false);

    /* static or kinetic: is the point sliding after the collisions, before gravity acts this step */
    for (int q = 0; q < np; q++) {
        cpoint *c = &P[q];
        double v1 = row_vel(s->v, s->w, c, &c->row[1], c->t1), v2 = row_vel(s->v, s->w, c, &c->row[2], c->t2);
        c->mu = v1 * v1 + v2 * v2 < STICK_SPEED * STICK_SPEED ? s->cold[q].mu_s : s->cold[q].mu_k;
    }

    /* ---- 2. velocities: the forces of the bodies in contact (the others go through the ODE) ---- */
    for (int i = 0; i < n; i++) {
        if (!s->drift[i] || s->im[i] == 0) continue;
        const body *b = &w->bodies->body[i];
        s->v[i] = v3_add(s->v[i], v3_scale(v3_add(g, v3_scale(v3_sub(b->force, v3_scale(s->v[i], w->settings.drag)), b->inv_mass)), h));
        s->w[i] = v3_add(s->w[i], m3_mul_v(s->Iinv[i], v3_scale(b->torque, h)));
        /* the body's damping, implicitly (stable for any c h): dv/dt = -c v over the step */
        if (b->lin_damp > 0) s->v[i] = v3_scale(s->v[i], 1 / (1 + b->lin_damp * h));
        if (b->ang_damp > 0) s->w[i] = v3_scale(s->w[i], 1 / (1 + b->ang_damp * h));
        if (w->settings.planar) project_planar(&s->v[i], &s->w[i]);
    }

    /* S1: and after the velocity update (with the joint motors) */
    if (njoints) joints_post_stabilize(w, s->v, s->w, s->Iinv, s->im, n, h, true);

    /* ---- 3. contacts: static or kinetic friction, warm start, sweeps in level order, shock ---- */
    for (int q = 0; q < np; q++) {
        cpoint *c = &P[q];
        double lim = c->mu * c->jn, len = sqrt(c->jt1 * c->jt1 + c->jt2 * c->jt2);
        if (len > lim) c->jt1 *= lim / len, c->jt2 *= lim / len;
        row_apply(s->v, s->w, c, &c->row[0], c->n, c->jn, 1, 1);
        row_apply(s->v, s->w, c, &c->row[1], c->t1, c->jt1, 1, 1);
        row_apply(s->v, s->w, c, &c->row[2], c->t2, c->jt2, 1, 1);
    }
    /* the sweeps; a sweep that moves the impulses by less than CONVERGED of their size ends them early.
     * S1 section VI: the joints are velocity rows of the sweeps (joint.c, joints_contacts_begin), each
     * level's after that level's contacts: before the contacts of level k, the joints of the levels
     * below k not yet visited; after the last contact, the rest (those above it and those outside the
     * graph) */
    bool level_joints = njoints && np;
    if (level_joints) joints_contacts_begin(w, s->v, s->w, s->Iinv, s->im, n, h);
    for (int it = 0; it < w->settings.velocity_iterations; it++) {
        double change = 0, size = 0;
        int done = 0;
        for (int q = 0; q < np; q++) {
            if (level_joints && (q == 0 || s->cold[q].key != s->cold[q - 1].key))
                joints_level(w, s->v, s->w, n, done, s->cold[q].key, s->level, false), done = s->cold[q].key;
            change += solve_point(s, &P[q], NULL, 1, 1), size += P[q].jn;
        }
        if (level_joints) joints_level(w, s->v, s->w, n, done, MAX_LEVEL + 1, s->level, false);
        if (change <= CONVERGED * size) break;
    }
    /* shock propagation: level by level, each level against the levels below held fixed; the joints of
     * the levels below a level's contacts first (joint.c's vel_node: the lower body held while that
     * takes energy from the upper one, else both answer as S1 asks; a joint to the world or a static body
     * then holds its body as fixed as the world for the levels above) */
    int jdone = 0;
    for (int lo = 0; lo < np;) {
        int hi = lo;
        while (hi < np && s->cold[hi].key == s->cold[lo].key) hi++;
        if (level_joints) {
            for (int pass = 0; pass < SHOCK_PASSES; pass++) joints_level(w, s->v, s->w, n, jdone, s->cold[lo].key, s->level, true);
            jdone = s->cold[lo].key;
        }
        for (int pass = 0; pass < SHOCK_PASSES; pass++) {
            double change = 0, size = 0;
            for (int q = lo; q < hi; q++) {
                cpoint *c = &P[q];
                int la = s->level[c->a], lb = s->level[c->b];
                if (la == lb || la == MAX_LEVEL || lb == MAX_LEVEL) change += solve_point(s, c, NULL, 1, 1);
                else change += solve_point(s, c, &s->cold[q], la > lb, lb > la);
                size += c->jn;
            }
            if (change <= CONVERGED * size) break; /* this level holds */
        }
        lo = hi;
    }
    if (level_joints)
        for (int pass = 0; pass < SHOCK_PASSES; pass++) joints_level(w, s->v, s->w, n, jdone, MAX_LEVEL + 1, s->level, true);
    /* (the global pre-stabilization below is S1's final articulation-only sweep) */

    /* split impulses: pseudo velocities that remove the penetration beyond the slop */
    bool pushing = false;
    for (int q = 0; q < np && !pushing; q++) pushing = P[q].bias > 0;
    for (int it = 0; it < w->settings.position_iterations && pushing; it++) {
        for (int q = 0; q < np; q++) {
            cpoint *c = &P[q];
            double vn = row_vel(s->vp, s->wp, c, &c->row[0], c->n);
            double jp = fmax(c->jp + c->row[0].k * (c->bias - vn), 0);
            row_apply(s->vp, s->wp, c, &c->row[0], c->n, jp - c->jp, 1, 1);
            c->jp = jp;
        }
        /* the joints' rows on the pseudo velocities too: a jointed body pushed out of the ground takes
         * its partners along, instead of a displacement pre-stabilization would take back */
        if (level_joints) joints_split(w, s->vp, s->wp, n);
    }

    /* S1 section IV: joint pre-stabilization of every joint at once, after the contacts (whose level
     * loop above gave each level's joints their velocity rows): impulses that make the predicted joint
     * frames (after the position update below, split impulses included) satisfy every joint */
    if (njoints) joints_pre_stabilize(w, s->v, s->w, s->vp, s->wp, s->Iinv, s->im, n, h);

    /* the impulses go back to the manifolds: warm start for next step, and what scripts read */
    for (int q = 0; q < np; q++) {
        cpoint *c = &P[q];
        imp_contact *ct = &col->manifolds[s->cold[q].man].c;
        ct->normal_impulse[s->cold[q].k] = c->jn;
        ct->tangent_impulse[s->cold[q].k] = v3_add(v3_scale(c->t1, c->jt1), v3_scale(c->t2, c->jt2));
    }

    /* the ODE pass below is skipped when it would move nothing that is kept: every body static, asleep
     * (its momenta are zeroed here), or jointed, whose position update joints_positions makes from the
     * start of the step; measured, the ODE pass was 4 % of a 50-link chain's step */
    bool ode = !njoints;
    for (int i = 0; i < n && !ode; i++) {
        const body *b = &w->bodies->body[i];
        ode = b->motion == IMP_KINEMATIC || (b->motion == IMP_DYNAMIC && !b->asleep && !(jointed[i] && s->im[i] > 0));
    }

    /* velocities back into the state: P = M v, L = I(t) omega */
    for (int i = 0; i < n; i++) {
        body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        if (b->asleep) {
            memset(X + 7, 0, 6 * sizeof(double));
            continue;
        }
        if (w->settings.planar) project_planar(&s->v[i], &s->w[i]), project_planar(&s->vp[i], &s->wp[i]);
        if (!s->drift[i] && !w->settings.planar) continue;
        /* joints_positions writes a jointed body's whole state; only an ODE pass (whose adaptive error
         * estimate sees every body) reads it before */
        if (!ode && njoints && jointed[i] && s->im[i] > 0) continue;
        imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
        v3_store(X + 7, v3_scale(s->v[i], b->mass));
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(R, b->Ibody), s->w[i]));
    }

    /* ---- 4. positions: the ODE solver with P and L held for the bodies in contact (when it runs: above) ---- */
    body_ode held = {w, s->drift, NULL};
    imp_ode_system sys = bodies_ode(&held);
    if (ode) imp_ode_advance(&sys, &w->body_solver, w->time, h), bodies_damp(w, h, s->drift); /* (drift: damped above) */
    for (int i = 0; i < n; i++) {
        if (!s->drift[i] || s->im[i] == 0 || (njoints && jointed[i])) continue; /* jointed: joints_positions */
        double *X = w->bodies->state + BODY_DIM * i;
        /* the split impulses' displacement: x += h v_p, q += h/2 [0, w_p] q */
        v3_accum(X, v3_scale(s->vp[i], h));
        imp_vec3 wp = s->wp[i];
        imp_quat q = quat(X[3], X[4], X[5], X[6]);
        imp_quat dq = quat_mul(quat(0, wp.x, wp.y, wp.z), q);
        q = quat_normalize(quat(q.w + 0.5 * h * dq.w, q.x + 0.5 * h * dq.x, q.y + 0.5 * h * dq.y, q.z + 0.5 * h * dq.z));
        /* L = I(t) omega follows the turn so omega is kept */
        imp_mat3 R0 = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
        imp_vec3 om = m3_mul_v(m3_rotate_tensor(R0, w->bodies->body[i].Ibody_inv), v3_load(X + 10));
        X[3] = q.w, X[4] = q.x, X[5] = q.y, X[6] = q.z;
        v3_store(X + 10, m3_mul_v(m3_rotate_tensor(quat_to_m3(q), w->bodies->body[i].Ibody), om));
    }

    /* jointed bodies: x' = x + h v, q' = exp(h omega) q exactly as pre-stabilization predicted, then
     * velocity post-stabilization after the position update (S1 section VI) */
    if (njoints) joints_positions(w, s->v, s->w, s->vp, s->wp, s->Iinv, s->im, n, h);

    /* ---- sleeping: an island whose bodies have all been slow for SLEEP_TIME sleeps ---- */
    if (w->settings.sleeping) {
        for (int i = 0; i < n; i++) {
            body *b = &w->bodies->body[i];
            if (b->motion != IMP_DYNAMIC || b->asleep) continue;
            const double *X = w->bodies->state + BODY_DIM * i;
            imp_vec3 v = v3_scale(v3_load(X + 7), b->inv_mass), om = m3_mul_v(s->Iinv[i], v3_load(X + 10));
            if (s->drift[i] && v3_len(v) < SLEEP_SPEED && v3_len(om) < SLEEP_SPEED) b->sleep_time += (float)h;
            else b->sleep_time = 0;
        }
        /* bodies joined by joints are one island: they sleep together (and joint.c wakes them together) */
        if (njoints) {
            const uint64_t *pairs;
            int np_j = joints_pairs(w, &pairs);
            for (int k = 0; k < np_j; k++) {
                int a = (int)(pairs[k] >> 32), b = (int)(pairs[k] & 0xffffffffu);
                if (s->im[a] == 0 || s->im[b] == 0) continue;
                int ra = uf_find(s->uf, a), rb = uf_find(s->uf, b);
                if (ra != rb) s->uf[ra] = rb;
            }
        }
        /* the island's least sleep time, kept at its root in s->level (reused) */
        for (int i = 0; i < n; i++) s->level[i] = 1 << 30;
        for (int i = 0; i < n; i++) {
            body *b = &w->bodies->body[i];
            if (b->motion != IMP_DYNAMIC || b->asleep) continue;
            int r = uf_find(s->uf, i);
            int ms = (int)(b->sleep_time * 1000);
            if (ms < s->level[r]) s->level[r] = ms;
        }
        for (int i = 0; i < n; i++) {
            body *b = &w->bodies->body[i];
            if (b->motion != IMP_DYNAMIC || b->asleep || !s->drift[i]) continue;
            if (s->level[uf_find(s->uf, i)] >= (int)(SLEEP_TIME * 1000)) {
                b->asleep = 1;
                memset(w->bodies->state + BODY_DIM * i + 7, 0, 6 * sizeof(double));
                /* the end of the step's contact update passes sleeping bodies by: their shapes follow
                 * this step's position update here */
                bodies_place_shapes(w, i);
            }
        }
    }
    return 1;
}

/* Continuous collision for bullets: a swept test of the centre against the static world. The centre
 * moved from x0 to x1 in the step; a ray from x0 to x1 + r d (r the body's inner radius, d the unit
 * direction) that hits a static shape means the body crossed or reached its surface: the centre is put
 * back at hit + r n, touching, and the next step's collision stage answers the impact (restitution). */
void impulse_bullets(imp_world *w, const double *X0)
{
    for (int i = 0; i < w->bodies->ids.count; i++) {
        body *b = &w->bodies->body[i];
        if (!b->bullet || b->motion != IMP_DYNAMIC || b->asleep) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        imp_vec3 x0 = v3_load(X0 + BODY_DIM * i), x1 = v3_load(X);
        imp_vec3 d = v3_sub(x1, x0);
        double len = v3_len(d);
        if (!(len > 0)) continue;
        double r = INFINITY;
        for (int k = 0; k < b->nshapes; k++) {
            const shape *sh = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
            double rk = sh->type == IMP_SHAPE_SPHERE || sh->type == IMP_SHAPE_CAPSULE ? sh->radius
                      : sh->type == IMP_SHAPE_BOX ? fmin(sh->half.x, fmin(sh->half.y, sh->half.z))
                      : 0.5 * cbrt(sh->volume);
            r = fmin(r, rk);
        }
        if (!(r < INFINITY) || len < 0.5 * r) continue; /* slow enough for the discrete contacts */
        imp_ray_hit hit;
        imp_vec3 u = v3_scale(d, 1 / len);
        if (!query_ray_static(w, x0, v3_add(x1, v3_scale(u, r)), &hit)) continue;
        if (v3_dot(hit.normal, u) >= 0) continue; /* leaving a surface */
        v3_store(X, v3_add(hit.point, v3_scale(hit.normal, r)));
        bodies_place_shapes(w, i);
    }
}

int imp_world_hit_count(const imp_world *w) { return w->imp ? w->imp->hit_count : 0; }
const imp_contact_hit *imp_world_hit(const imp_world *w, int i)
{
    if (!w->imp || i < 0 || i >= w->imp->hit_count) return NULL;
    return &w->imp->hits[i];
}

/* contact_qp.c: world.contact = "qp", exact contact forces and simultaneous collision impulses
 * (S0 sections 8-9 and appendix D; S2 sections 5 and 8; S4).
 *
 * SIGN CONVENTION (GUIDE.md trap 1): S0's. For contact i between bodies A and B, with unit normal n_i
 * pointing out of B towards A (trap 2) and separation d_i = n_i . (p_A - p_B),
 *
 *     d''  = A f + b,     f >= 0,   d'' >= 0,   f . d'' = 0
 *
 * f_i is the magnitude of the force +f_i n_i on A and -f_i n_i on B at the contact point; b is d''
 * with every contact force zero (external forces and velocity terms only).
 *
 * A (derived as J M^-1 J^T). A unit force at contact j acts on body X = A_j with sigma = +1 and on
 * X = B_j with sigma = -1: linear force sigma n_j and torque (p_j - x_X) x sigma n_j (S4's four-case
 * sign table; S0's compute_aij keeps the torque of the B side positive, trap 3, which is wrong). It
 * changes X's acceleration by  sigma n_j / m_X  and its angular acceleration by
 * sigma I_X^-1 (r_jX x n_j), so the acceleration of the point p_i of X changes by
 *     sigma [ n_j / m_X + (I_X^-1 (r_jX x n_j)) x r_iX ].
 * d_i'' takes n_i . (point acceleration on A_i - on B_i). With the rows J_iX = sigma_iX (n_i, r_iX x n_i):
 *     A_ij = sum over bodies X of both contacts  J_iX . M_X^-1 J_jX^T
 *          = sum sigma_iX sigma_jX [ n_i.n_j / m_X + (r_iX x n_i) . I_X^-1 (r_jX x n_j) ]
 * (using a . (u x r) = (r x a) . u), symmetric and positive semidefinite by construction.
 *
 * b (S0 appendix D, compute_b_vector, and S4). With F, tau the external force and torque, the point
 * acceleration of body X at r = p - x is  F/m + alpha x r + omega x (omega x r),  where
 * alpha = I^-1 (tau + L x omega) (from dL/dt = tau and L = I omega: I omega' = tau - omega x L).
 * Differentiating d = n . (p_A - p_B) twice, with the velocity terms kept as S0 keeps them:
 *     b_i = n . (a_A(p_A) - a_B(p_B)) + 2 ndot . (v_A(p_A) - v_B(p_B))
 * vertex/face: n is a face normal of B, fixed in B: ndot = omega_B x n; or, when the manifold says
 *              the face was A's (imp_contact.face_a: a vertex of B on a face of A), fixed in A:
 *              ndot = omega_A x n. (Taking B's rotation for A's face is harmless at rest, where
 *              v_A = v_B at the point, but not in a tumbling heap: the material points then
 *              separate along the wrong normal while the bodies interpenetrate.)
 * edge/edge:   n = ea x eb / |ea x eb|, ea turning with A, eb with B: with z = ea' x eb + ea x eb'
 *              (ea' = omega_A x ea, eb' = omega_B x eb), ndot = (z - (z.n) n) / |ea x eb|
 *              (S0's compute_ndot, which the text garbles: trap 4).
 *
 * Contact kinematics: curved surfaces. S0's b takes the contact point as a vertex fixed in its body. A
 * sphere or a capsule touches through a point that moves over its surface as it rolls: the material
 * point under the contact rises off the ground, and b taken at it reads a rolling ball as separating
 * (n . omega x (omega x r) = R |omega_t|^2 > 0), so the forces fall short and the ball sinks and
 * speeds up. A curved side is a core (a sphere's centre, a point of a capsule's axis: material points
 * of the body) swept by its radius R, so its surface is exactly R from the core along the normal. The
 * contact's d is measured from the core (qp_place; each side's point X is a material point, v and a
 * its rigid velocity and acceleration):
 *     on a face of B (n and the plane fixed in B; X_B the plane's point under X_A, h its height):
 *         d = h - R_A,  h = n . (X_A - X_B),  d' = n . (v_A(X_A) - v_B(X_B)),
 *         d'' = n . (a_A(X_A) - a_B(X_B)) + 2 ndot . (v_A(X_A) - v_B(X_B)) + nddot . (X_A - X_B),
 *         where nddot . (X_A - X_B) = h nddot . n = -h |ndot|^2 (n . n = 1 twice differentiated;
 *         nddot's alpha_B x n part is normal to n and goes into A's column through the lever arm);
 *         a vertex of B on a face of A the same with the roles swapped (R = 0);
 *     two cores, or a core on an edge or a vertex of B (no face normal there: the normal is the line
 *     through the two points):  L = X_A - X_B, l = |L|, n = L / l,  d = l - R_A - R_B,
 *         u = v_A(X_A) - v_B(X_B),  d' = n . u,  ndot = (u - (n . u) n) / l,
 *         d'' = n . (a_A(X_A) - a_B(X_B)) + ndot . u    (the last term |u_t|^2 / l);
 *     two edges: as S0 (no curved side).
 * The force acts at the contact point on A's surface, p = X_A - R_A n, with the lever arms r = p - x on
 * both sides; the columns of A then match d'' exactly, since (p - x_A) x n = (X_A - x_A) x n and
 * likewise for B (p - X_B is along n). At rest on flat ground d'' = n . a(centre): a rolling ball keeps
 * its speed and its height.
 *
 * Extra acceleration (S4). Integrating d'' = 0 leaves whatever normal velocity d' and separation d
 * a resting contact had, and they drift; S4 asks for the acceleration that cancels the normal
 * velocity over one step h, a = -d'/h. The solve enforces
 *     d'' + d'/h + (d + slop)/(4 h^2) >= 0
 * i.e. b_i += d'_i/h + (d_i + slop)/(4 h^2): a critically damped return to d = -slop, d' = 0 (roots of
 * s^2 + s/h + 1/(4h^2) are -1/(2h), well inside RK4's stability region). At rest (d = -slop,
 * d' = 0) the extra terms vanish and the forces are the exact ones; slop = IMP_QP_SLOP = 10 um keeps
 * resting faces touching in the narrow phase's eyes. The query functions (imp_qp_system,
 * imp_qp_solve) use the exact b without them.
 *
 * Classification (documented threshold IMP_QP_RESTING_SPEED): at the start of a step each contact
 * point has relative normal velocity d'. d' < -threshold: colliding; |d'| <= threshold: resting;
 * d' > threshold: separating (left out, unless it still penetrates: d < 0). Colliding and resting
 * contacts get simultaneous impulses (S2 section 8): with v+ = A j + v-,
 *     v+_i >= -e_i v-_i,   j >= 0,   j_i (v+_i + e_i v-_i) = 0
 * i.e. the LCP w = A j + (1 + e_i) v-_i (e_i = restitution for colliding, 0 for resting contacts and
 * for impacts slower than the bounce cutoff IMP_QP_BOUNCE_STEPS |g| h, so that resting contact cannot
 * chatter; the resting threshold is never above it).
 * With world.friction > 0 the impulses carry Coulomb friction, solved like the resting forces'
 * (qp_solve_friction: the normal LCP alternated with tangential impulses that stop the slip, within
 * mu j_n). After that the contacts with d' <= threshold form the resting set that every derivative
 * evaluation of the step solves for (GUIDE trap 9: after the external forces are in place).
 *
 * Joints (equality rows, w = 0 with f free): the QP mode's own ball joints (world:joint{a, b, point},
 * three rows along the world axes) and every joint.c joint's constrained directions (joints_rows):
 * linear rows, Jacobian (n, r x n) as a contact's, and angular rows, Jacobian (0, n); see qp_gather. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "contact_qp.h"
#include "ids.h"
#include "imp_math.h"
#include "joint.h"
#include "parallel.h"
#include "sparse_simd.h"
#include "step.h"
#include "world_parts.h"

#define IMP_QP_RESTING_SPEED 0.05 /* m/s: |d'| below this is resting contact (below the bounce cutoff too) */
/* m: resting contacts settle at this depth, not at d = 0 exactly, so that round-off (a tilt of
 * 1e-17 rad) cannot make the narrow phase drop a corner of a face contact for a step */
#define IMP_QP_SLOP 1e-5
/* the bounce cutoff, in steps of gravity: impacts slower than IMP_QP_BOUNCE_STEPS |g| h are inelastic
 * (e = 0). A contact that rests is re-established after at most a step of free fall, at g h, and must
 * not bounce forever (S4's chattering); a ball bouncing with e < 1 stops after finitely many impacts.
 * Faster ones keep their restitution: two e = 1 balls meeting at 0.3 m/s swap their velocities
 * (cutoff 0.25 m/s at 60 Hz under 9.81 m/s^2; none without gravity) */
#define IMP_QP_BOUNCE_STEPS 1.5

#define IMP_QP_SAME_POINT 0.01 /* m: manifold points this close on a body are one point (its corners are farther apart) */

#define IMP_QP_DENSE_MAX 256 /* rows: larger islands are solved by projected Gauss-Seidel (qp_pgs) */

/* fmax for the bookkeeping of sweeps and scales, inline (fmax is a library call without -ffast-math); like fmax it
 * keeps a when b is NaN */
static inline double qp_larger(double a, double b) { return b > a ? b : a; }

/* The per-contact chunk functions (the gather, placement and b, the bridges' w, A of a part, the resting
 * points' separations) are compiled twice: for the baseline x86-64 and for AVX, whose three-operand (VEX)
 * encoding of the same scalar operations saves the register copies that dominate this code. The same
 * IEEE operations in the same order and no FMA (the target is AVX alone): the same bits on both paths;
 * IMPETUS_SIMD=0 in the environment takes the baseline (sparse_avx). QP_INLINE: what the chunk
 * functions call, compiled into each copy. */
#define QP_INLINE static inline __attribute__((always_inline))
#if SPARSE_HAVE_AVX
#define QP_TWICE(name)                                                                  \
    static void name(void *ctx, int chunk) { name##_body(ctx, chunk); }                 \
    static SPARSE_AVX void name##_avx(void *ctx, int chunk) { name##_body(ctx, chunk); }
#define QP_PICK(name) (sparse_avx() ? name##_avx : name)
#else
#define QP_TWICE(name) static void name(void *ctx, int chunk) { name##_body(ctx, chunk); }
#define QP_PICK(name) name
#endif

static struct qp_state *qp_get(imp_world *w)
{
    if (!w->qp) {
        w->qp = calloc(1, sizeof *w->qp);
        if (!w->qp) abort();
        w->qp->h = 1.0 / 60;
        w->qp->dense_max = IMP_QP_DENSE_MAX;
    }
    return w->qp;
}

void qp_free(imp_world *w)
{
    if (!w->qp) return;
    free(w->qp->dx);
    free(w->qp->tt_cols), free(w->qp->tt_count), free(w->qp->tn_cols), free(w->qp->tn_count);
    free(w->qp->nt_rows), free(w->qp->nt_count), free(w->qp->t_base);
    free(w->qp->At), free(w->qp->An), free(w->qp->bt), free(w->qp->g), free(w->qp->gi), free(w->qp->t1), free(w->qp->t2);
    free(w->qp->c2), free(w->qp->par), free(w->qp->cnt), free(w->qp->isl), free(w->qp->isl_neq), free(w->qp->joints), free(w->qp->pd), free(w->qp->last), free(w->qp->arow), free(w->qp->ball), free(w->qp->gm), free(w->qp->ks), free(w->qp->ks2);
    free(w->qp->c), free(w->qp->b), free(w->qp->A), free(w->qp->bv), free(w->qp->f), free(w->qp->wv);
    free(w->qp->dv), free(w->qp->dw), free(w->qp->pbt), free(w->qp->prow);
    free(w->qp->srow), free(w->qp->sidx), free(w->qp->sstart), free(w->qp->sf), free(w->qp->sw), free(w->qp->sbn);
    free(w->qp->sg), free(w->qp->st1), free(w->qp->st2), free(w->qp->sa), free(w->qp->sb), free(w->qp->sroot);
    free(w->qp->sbody), free(w->qp->sdirty), free(w->qp->pst), free(w->qp->pend), free(w->qp->pneq), free(w->qp->fp);
    free(w->qp->bst), free(w->qp->eend), free(w->qp->ppar), free(w->qp->pdone), free(w->qp->pinfo), free(w->qp->srowkind);
    for (int c = 0; c < PAR_CHUNKS; c++) {
        struct qp_chunk *ch = &w->qp->chunk[c];
        free(ch->A), free(ch->f), free(ch->wv), free(ch->arow);
        imp_lcp_work_free(&ch->lcp);
    }
    imp_lcp_work_free(&w->qp->lcp);
    free(w->qp);
    w->qp = NULL;
}

void imp_world_set_restitution(imp_world *w, double e) { qp_get(w)->restitution = e; }
double imp_world_restitution(const imp_world *w) { return w->qp ? w->qp->restitution : 0; }
void imp_world_set_friction(imp_world *w, double mu) { qp_get(w)->friction = mu; }
double imp_world_friction(const imp_world *w) { return w->qp ? w->qp->friction : 0; }

static void qp_reserve(struct qp_state *q, int nc, int nb)
{
    if (nc > q->cap) {
        int cap = q->cap ? q->cap : 16;
        while (cap < nc) cap *= 2;
        q->c = ids_grow(q->c, sizeof(qp_contact), cap);
        q->c2 = ids_grow(q->c2, sizeof(qp_contact), cap);
        q->isl = ids_grow(q->isl, sizeof(int), cap + 1);
        q->isl_neq = ids_grow(q->isl_neq, sizeof(int), cap + 1);
        q->cap = cap;
    }
    if (nb > q->dxcap) {
        int cap = q->dxcap ? q->dxcap : 16;
        while (cap < nb) cap *= 2;
        free(q->dx);
        q->dx = ids_grow(NULL, BODY_DIM * sizeof(double), cap);
        q->dxcap = cap;
    }
    if (nb > q->bcap) {
        int cap = q->bcap ? q->bcap : 16;
        while (cap < nb) cap *= 2;
        q->b = ids_grow(q->b, sizeof(qp_body), cap);
        q->par = ids_grow(q->par, sizeof(int), cap + 1);
        q->cnt = ids_grow(q->cnt, sizeof(int), cap + 2);
        q->sdirty = ids_grow(q->sdirty, sizeof(int), cap);
        q->bcap = cap;
    }
}

/* the LCP's vectors for islands of up to n rows, and its matrix for up to min(n, dense_max) */
static void qp_reserve_system(struct qp_state *q, int n)
{
    if (n > q->acap) {
        int cap = q->acap ? q->acap : 16;
        while (cap < n) cap *= 2;
        free(q->bv), free(q->f), free(q->wv);
        q->bv = ids_grow(NULL, sizeof(double), cap);
        q->f = ids_grow(NULL, sizeof(double), cap);
        q->wv = ids_grow(NULL, sizeof(double), cap);
        q->acap = cap;
    }
    long m = n < q->dense_max ? n : q->dense_max;
    if (m * m > q->Acap) {
        free(q->A);
        q->A = ids_grow(NULL, sizeof(double), (size_t)(m * m));
        q->Acap = m * m;
    }
}

/* Islands. Contacts only couple through the dynamic bodies they share (A_ij = 0 otherwise), so the
 * LCP splits into independent problems, one per connected group: union-find over the bodies, then a
 * counting sort of the contacts by their group. An island of more than dense_max rows
 * (world.qp_dense_max, default IMP_QP_DENSE_MAX) is solved by the fallback, projected Gauss-Seidel
 * without A (qp_pgs below): valid forces, complementarity only to the sweeps' tolerance. The dense
 * solver needs n^2 doubles and O(n^3) time (8 ms for 400 rows). Within an island, the rows that carry
 * no force split it further (qp_parts, qp_split_solve below): a block of boxes side by side is one
 * island, solved column by column. */

static int qp_root(int *par, int i)
{
    while (par[i] != i) par[i] = par[par[i]], i = par[i];
    return i;
}

#define QP_PART_BITS 21 /* the parts' sort key holds body indices below 2^21 - 1 (qp_parts) */
static void qp_parts_reserve(struct qp_state *q, int n, int nb);
static void qp_parts(imp_world *w);
/* the dynamic body of a side, or -1 */
static inline int qp_dyn_body(const struct qp_state *q, int k) { return k >= 0 && q->b[k].dyn ? k : -1; }

static void qp_islands(imp_world *w, bool parts)
{
    struct qp_state *q = w->qp;
    const int nb = w->bodies->ids.count, n = q->count;
    q->nisl = 0;
    if (n == 0) return;
    /* split into parts: each row's dynamic bodies and what qp_parts asks of it, taken in this one pass
     * over the contacts */
    const bool split = parts && nb < (1 << QP_PART_BITS) - 1;
    if (split) qp_parts_reserve(q, n, nb);
    for (int i = 0; i < nb; i++) q->par[i] = i;
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        const int a = qp_dyn_body(q, c->ka), b = qp_dyn_body(q, c->kb);
        if (split) q->sa[i] = a, q->sb[i] = b, q->srowkind[i] = (unsigned char)(c->eq | (c->force > 0) << 1);
        if (a >= 0 && b >= 0) {
            int ra = qp_root(q->par, a), rb = qp_root(q->par, b);
            if (ra != rb) q->par[ra] = rb;
        }
    }
    q->parted = false;
    if (split) {
        qp_parts(w);
        return;
    }
    memset(q->cnt, 0, sizeof(int) * (size_t)(nb + 1));
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        int k = qp_root(q->par, (c->ka >= 0 && q->b[c->ka].dyn) ? c->ka : c->kb);
        q->cnt[k + 1]++;
    }
    for (int k = 0; k < nb; k++) q->cnt[k + 1] += q->cnt[k];
    q->nisl = 0;
    int biggest = 0;
    for (int k = 0; k < nb; k++) {
        int sz = q->cnt[k + 1] - q->cnt[k];
        if (sz) q->isl[q->nisl++] = q->cnt[k], biggest = sz > biggest ? sz : biggest;
    }
    q->isl[q->nisl] = n;
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        int k = qp_root(q->par, (c->ka >= 0 && q->b[c->ka].dyn) ? c->ka : c->kb);
        q->c2[q->cnt[k]++] = *c;
    }
    /* within each island the joint rows first (the LCP's equality rows lead) */
    for (int k = 0; k < q->nisl; k++) {
        int lo = q->isl[k], hi = q->isl[k + 1], o = lo;
        for (int i = lo; i < hi; i++)
            if (q->c2[i].eq) q->c[o++] = q->c2[i];
        q->isl_neq[k] = o - lo;
        for (int i = lo; i < hi; i++)
            if (!q->c2[i].eq) q->c[o++] = q->c2[i];
    }
    qp_reserve_system(q, biggest);
}

/* island k as the contact list [0, n): q->c (and the friction arrays) offset to its first contact;
 * qp_island_end puts them back */
static int qp_island_begin(struct qp_state *q, int k)
{
    int lo = q->isl[k], n = q->isl[k + 1] - lo;
    q->cur_neq = q->isl_neq[k];
    q->c += lo;
    if (q->g) q->g += 2 * lo, q->gi += 2 * lo, q->t1 += lo, q->t2 += lo;
    return n;
}

static void qp_island_end(struct qp_state *q, int k)
{
    int lo = q->isl[k];
    q->c -= lo;
    if (q->g) q->g -= 2 * lo, q->gi -= 2 * lo, q->t1 -= lo, q->t2 -= lo;
}

/* kinematics of every body at state X, and the accelerations its forces give: dX holds the body
 * derivative with the external forces (dP/dt = F, dL/dt = tau), or NULL for none. Each body on its
 * own, in chunks (qp_par_chunks: both threads for many bodies, the same numbers) */
typedef struct qp_bodies_job { imp_world *w; const double *X, *dX; } qp_bodies_job;

static void qp_bodies_part(void *ctx, int chunk)
{
    const qp_bodies_job *jb = ctx;
    imp_world *w = jb->w;
    struct qp_state *q = w->qp;
    const double *X = jb->X, *dX = jb->dX;
    int lo, hi;
    par_range(w->bodies->ids.count, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        const body *bd = &w->bodies->body[i];
        const double *s = X + BODY_DIM * i;
        qp_body *k = &q->b[i];
        imp_quat qq = quat_normalize(quat(s[3], s[4], s[5], s[6]));
        k->x = v3_load(s);
        k->q = qq;
        k->R = quat_to_m3(qq);
        k->dyn = bd->motion == IMP_DYNAMIC;
        k->a = k->alpha = v3(0, 0, 0);
        if (k->dyn) {
            k->im = bd->inv_mass;
            k->Iinv = m3_rotate_tensor(k->R, bd->Ibody_inv);
            k->L = v3_load(s + 10);
            k->v = v3_scale(v3_load(s + 7), k->im);
            k->w = m3_mul_v(k->Iinv, k->L);
            if (dX) {
                const double *d = dX + BODY_DIM * i;
                k->a = v3_scale(v3_load(d + 7), k->im);
                k->alpha = m3_mul_v(k->Iinv, v3_add(v3_load(d + 10), v3_cross(k->L, k->w)));
            }
        } else {
            k->im = 0;
            k->Iinv = (imp_mat3){{{0}}};
            k->L = v3(0, 0, 0);
            k->v = bd->motion == IMP_KINEMATIC ? bd->kin_v : v3(0, 0, 0);
            k->w = bd->motion == IMP_KINEMATIC ? bd->kin_w : v3(0, 0, 0);
        }
    }
}

static void qp_par_chunks(par_fn fn, void *ctx, int n);

static void qp_bodies(imp_world *w, const double *X, const double *dX)
{
    qp_bodies_job jb = {w, X, dX};
    /* a body costs about what a contact does several times over */
    qp_par_chunks(qp_bodies_part, &jb, 4 * w->bodies->ids.count);
}

QP_INLINE imp_vec3 point_vel(const qp_body *k, imp_vec3 r) { return v3_add(k->v, v3_cross(k->w, r)); }
QP_INLINE imp_vec3 point_acc(const qp_body *k, imp_vec3 r)
{
    return v3_add(k->a, v3_add(v3_cross(k->alpha, r), v3_cross(k->w, v3_cross(k->w, r))));
}

/* the static world (Colliders, and joints to the world) as a body: at rest in the world frame */
static const qp_body QP_FIXED = {{1, 0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},
                                 {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, {{{0}}}, 0, false};

/* place an equality row of a joint (see qp_gather): its points, direction, d, d' */
QP_INLINE void qp_place_row(qp_contact *c, const qp_body *A, const qp_body *B, imp_vec3 xa, imp_vec3 xb)
{
    c->p = xa, c->pb = xb;
    c->n = c->in_b ? m3_mul_v(B->R, c->ln) : c->ln;
    c->ndot = c->in_b ? v3_cross(B->w, c->n) : v3(0, 0, 0);
    c->ra = v3_sub(c->p, A->x);
    c->rb = v3_sub(c->p, B->x);
    if (c->angular) {
        /* the position error along n, rotation of A away from where the joint holds it relative to B
         * (theta, with d theta / dt = omega_A - omega_B to first order, so d' is dd below):
         * ang_ref 2 (hinge, twist, planar: one free axis), the axis a fixed in A and in B:
         *     a_A = a_B + theta x a_B  ->  a_B x a_A = theta - (theta . a_B) a_B,  d = n . (a_B x a_A)
         * (n is normal to the axis); ang_ref 3 (rigid, prismatic): q_A = exp(theta) q_B q0, so
         *     exp(theta) = q_A conj(q0) conj(q_B),  theta = 2 sgn(w) vec(.)  (one hemisphere) */
        if (c->ang_ref == 2) {
            imp_vec3 aa = m3_mul_v(A->R, c->lea), ab = m3_mul_v(B->R, c->leb);
            c->d = v3_dot(c->n, v3_cross(ab, aa));
        } else if (c->ang_ref == 3) {
            imp_quat e = quat_mul(quat_mul(A->q, quat_conj(c->q0)), quat_conj(B->q));
            double sg = e.w < 0 ? -2 : 2;
            c->d = v3_dot(c->n, v3(sg * e.x, sg * e.y, sg * e.z));
        } else {
            c->d = 0;
        }
        c->dd = v3_dot(c->n, v3_sub(A->w, B->w));
    } else if (c->in_b) { /* B's point coincident with A's: a prismatic joint's points slide apart */
        c->d = v3_dot(c->n, v3_sub(c->p, c->pb));
        c->dd = v3_dot(c->n, v3_sub(point_vel(A, c->ra), point_vel(B, c->rb)));
    } else {
        c->d = v3_dot(c->n, v3_sub(c->p, c->pb));
        c->dd = v3_dot(c->n, v3_sub(point_vel(A, c->ra), point_vel(B, v3_sub(c->pb, B->x))));
    }
}

/* place contact c at the current body kinematics: its points, normal, d, d', the lever arms of the force
 * and the velocity products of d'' (the header's "Contact kinematics") */
QP_INLINE void qp_place(const struct qp_state *q, qp_contact *c)
{
    const qp_body *A = c->ka >= 0 ? &q->b[c->ka] : &QP_FIXED, *B = c->kb >= 0 ? &q->b[c->kb] : &QP_FIXED;
    const imp_vec3 xa = v3_add(A->x, m3_mul_v(A->R, c->la)), xb = v3_add(B->x, m3_mul_v(B->R, c->lb));
    if (c->eq) {
        qp_place_row(c, A, B, xa, xb);
        return;
    }
    imp_vec3 u; /* the relative velocity of the two points that d measures */
    if (c->points) {
        imp_vec3 L = v3_sub(xa, xb);
        double l = v3_len(L);
        if (l > 1e-12) c->n = v3_scale(L, 1.0 / l); /* (cores through each other: the last normal) */
        u = v3_sub(point_vel(A, v3_sub(xa, A->x)), point_vel(B, v3_sub(xb, B->x)));
        c->ndot = l > 1e-12 ? v3_scale(v3_sub(u, v3_scale(c->n, v3_dot(c->n, u))), 1.0 / l) : v3(0, 0, 0);
        c->d = v3_dot(c->n, L) - c->rad_a - c->rad_b;
        c->bvel = v3_dot(c->ndot, u);
        c->p = v3_sub(xa, v3_scale(c->n, c->rad_a)), c->pb = v3_add(xb, v3_scale(c->n, c->rad_b));
        c->qa = v3_sub(xa, A->x), c->qb = v3_sub(xb, B->x);
    } else if (c->edge) {
        imp_vec3 ea = m3_mul_v(A->R, c->lea), eb = m3_mul_v(B->R, c->leb);
        imp_vec3 e = v3_cross(ea, eb);
        double l = v3_len(e);
        if (l > 1e-12) {
            c->n = v3_scale(e, 1.0 / l);
            imp_vec3 z = v3_add(v3_cross(v3_cross(A->w, ea), eb), v3_cross(ea, v3_cross(B->w, eb)));
            c->ndot = v3_scale(v3_sub(z, v3_scale(c->n, v3_dot(z, c->n))), 1.0 / l);
        } else { /* the edges turned parallel inside the step: keep the last normal */
            c->ndot = v3(0, 0, 0);
        }
        c->p = xa, c->pb = xb;
        c->qa = v3_sub(xa, A->x), c->qb = v3_sub(xb, B->x);
        u = v3_sub(point_vel(A, c->qa), point_vel(B, c->qb));
        c->d = v3_dot(c->n, v3_sub(xa, xb));
        c->bvel = 2 * v3_dot(c->ndot, u);
    } else {
        /* a face: its plane and normal turn with its owner F; the other side's point (a vertex or a
         * core) against the point of the plane under it */
        const qp_body *F = c->face_a ? A : B;
        c->n = m3_mul_v(F->R, c->ln);
        c->ndot = v3_cross(F->w, c->n);
        double h = v3_dot(c->n, v3_sub(xa, xb)); /* the point's height over the plane */
        if (c->face_a) c->p = v3_add(xb, v3_scale(c->n, h)), c->pb = xb;
        else c->p = v3_sub(xa, v3_scale(c->n, c->rad_a)), c->pb = v3_sub(xa, v3_scale(c->n, h));
        c->qa = v3_sub(c->face_a ? c->p : xa, A->x), c->qb = v3_sub(c->pb, B->x);
        u = v3_sub(point_vel(A, c->qa), point_vel(B, c->qb));
        c->d = h - c->rad_a - c->rad_b;
        c->bvel = 2 * v3_dot(c->ndot, u) - h * v3_dot(c->ndot, c->ndot);
    }
    c->ra = v3_sub(c->p, A->x);
    c->rb = v3_sub(c->p, B->x);
    c->dd = v3_dot(c->n, u);
}

/* d of contact c (not a joint row) at the current body kinematics: qp_place's d, computed alone */
QP_INLINE double qp_separation(const struct qp_state *q, const qp_contact *c)
{
    const qp_body *A = c->ka >= 0 ? &q->b[c->ka] : &QP_FIXED, *B = c->kb >= 0 ? &q->b[c->kb] : &QP_FIXED;
    const imp_vec3 xa = v3_add(A->x, m3_mul_v(A->R, c->la)), xb = v3_add(B->x, m3_mul_v(B->R, c->lb));
    imp_vec3 n = c->n;
    if (c->points) {
        imp_vec3 L = v3_sub(xa, xb);
        double l = v3_len(L);
        if (l > 1e-12) n = v3_scale(L, 1.0 / l);
        return v3_dot(n, L) - c->rad_a - c->rad_b;
    }
    if (c->edge) {
        imp_vec3 e = v3_cross(m3_mul_v(A->R, c->lea), m3_mul_v(B->R, c->leb));
        double l = v3_len(e);
        if (l > 1e-12) n = v3_scale(e, 1.0 / l);
        return v3_dot(n, v3_sub(xa, xb));
    }
    n = m3_mul_v((c->face_a ? A : B)->R, c->ln);
    return v3_dot(n, v3_sub(xa, xb)) - c->rad_a - c->rad_b;
}

/* the resting points' separations of qp_max_depth, chunk by chunk: each point on its own, so the
 * chunks may run on both threads (par_for) with the same numbers */
typedef struct qp_sep_job { struct qp_state *q; int n; } qp_sep_job;

QP_INLINE void qp_sep_part_body(void *ctx, int chunk)
{
    const qp_sep_job *jb = ctx;
    struct qp_state *q = jb->q;
    int lo, hi;
    par_range(jb->n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) q->pd[i].now = -qp_separation(q, &q->c[q->pd[i].idx]);
}
QP_TWICE(qp_sep_part)

#define QP_PAR_MIN 2048 /* contacts: fewer are done on the calling thread alone (the same chunks) */

static void qp_par_chunks(par_fn fn, void *ctx, int n)
{
    if (n >= QP_PAR_MIN) par_for(fn, ctx, PAR_CHUNKS);
    else
        for (int chunk = 0; chunk < PAR_CHUNKS; chunk++) fn(ctx, chunk);
}


/* copies, chunk by chunk (disjoint writes): what 0, the contacts into c2 in the order of ks (qp_parts);
 * what 1, a solve's forces and d'' into the contacts */
typedef struct qp_copy_job { struct qp_state *q; int n, what; } qp_copy_job;

static void qp_copy_part(void *ctx, int chunk)
{
    const qp_copy_job *jb = ctx;
    struct qp_state *q = jb->q;
    int lo, hi;
    par_range(jb->n, chunk, &lo, &hi);
    if (jb->what == 0)
        for (int j = lo; j < hi; j++) q->c2[j] = q->c[q->ks[j].idx];
    else
        for (int i = lo; i < hi; i++) q->c[i].force = q->f[i], q->c[i].accel = q->wv[i];
}

/* a row's Jacobian on one side (side 0: A, 1: B; the sign sigma is the caller's) for direction u:
 * a point row (contact, linear joint row) (u, r x u), an angular row (0, u) */
QP_INLINE void qp_jac(const qp_contact *c, imp_vec3 u, int side, imp_vec3 *lin, imp_vec3 *ang)
{
    if (c->angular) *lin = v3(0, 0, 0), *ang = u;
    else *lin = u, *ang = v3_cross(side ? c->rb : c->ra, u);
}

/* a manifold's pair as one number (bodies or colliders of both sides, in either order; shapes of one
 * body pair share it) */
static uint64_t qp_pair_key(const imp_contact *mc)
{
    uint32_t a = imp_id_is_null(mc->a.body) ? 0x80000000u | mc->a.collider.index : mc->a.body.index;
    uint32_t b = imp_id_is_null(mc->b.body) ? 0x80000000u | mc->b.collider.index : mc->b.body.index;
    return a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
}

/* m: a manifold point farther apart than this is not a contact. A face's corners lifted by a rock stay
 * in the resting set (S4's term lets a point above the face approach: d > 0 in (d + slop) / (4 h^2)),
 * so the set does not flap as a body rocks from edge to edge: with 0.1 mm a box lying on the floor
 * rocked between two edges for good, kicked each time the lifted one came back */
#define QP_SEPARATED 2e-3
/* m: a pair touches when its deepest point is this close. The narrow phase reports pairs up to
 * SHAPE_TOUCH apart, for the impulse mode's contacts that let a gap close; S2's contacts touch */
#define QP_TOUCH 1e-6

/* the shape of a contact side whose body has dense index i (ids_lookup of sd.body; NULL for a collider) */
static const shape *side_shape_at(const imp_world *w, imp_contact_side sd, int i)
{
    if (imp_id_is_null(sd.body)) return NULL;
    if (i < 0 || sd.shape < 0 || sd.shape >= w->bodies->body[i].nshapes) return NULL;
    return &w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[sd.shape]]];
}

/* the shape of a contact side (NULL for a collider) */
static const shape *side_shape(const imp_world *w, imp_contact_side sd)
{
    return side_shape_at(w, sd, imp_id_is_null(sd.body) ? -1 : ids_lookup(&w->bodies->ids, sd.body));
}

/* the radius of a curved side (a sphere's or a capsule's, its surface that far from its core), else 0;
 * i the dense index of its body (as side_shape_at) */
static double side_radius(const imp_world *w, imp_contact_side sd, int i)
{
    const shape *sh = side_shape_at(w, sd, i);
    if (sh) return sh->type == IMP_SHAPE_SPHERE || sh->type == IMP_SHAPE_CAPSULE ? sh->radius : 0;
    int ci = imp_id_is_null(sd.collider) ? -1 : ids_lookup(&w->colliders->ids, sd.collider);
    const imp_collider_def *cd = ci >= 0 ? &w->colliders->collider[ci].def : NULL;
    return cd && cd->shape == IMP_COLLIDER_SPHERE ? cd->radius : 0;
}

/* whether n (out of side B) is the outward normal of one of B's faces: a curved side then touches that
 * face, else it touches an edge or a vertex of B (a mesh is taken as faces) */
static bool side_face(const imp_world *w, imp_contact_side sd, imp_vec3 n)
{
    const double aligned = 1 - 1e-6;
    const shape *sh = side_shape(w, sd);
    imp_mat3 R = m3_identity();
    imp_shape_type type = IMP_SHAPE_PLANE;
    const hull *hl = NULL;
    if (sh) R = sh->wrot, type = sh->type, hl = sh->hull;
    else {
        int ci = imp_id_is_null(sd.collider) ? -1 : ids_lookup(&w->colliders->ids, sd.collider);
        if (ci < 0) return true;
        const imp_collider_def *cd = &w->colliders->collider[ci].def;
        if (cd->shape != IMP_COLLIDER_BOX) return true;
        R = cd->rotation, type = IMP_SHAPE_BOX;
    }
    if (type == IMP_SHAPE_BOX) {
        imp_vec3 l = m3_mul_tv(R, n);
        return fabs(l.x) > aligned || fabs(l.y) > aligned || fabs(l.z) > aligned;
    }
    if (type == IMP_SHAPE_HULL && hl) {
        imp_vec3 l = m3_mul_tv(R, n);
        for (int f = 0; f < hl->nf; f++)
            if (v3_dot(l, hl->face_n[f]) > aligned) return true;
        return false;
    }
    return true;
}

/* q->ks[0, n) sorted by key, ties in the order given (a stable LSD radix sort, a byte a pass; the bytes
 * that every key shares are skipped: a pair key is two body indices, most of its bytes zero) */
static void qp_sort_keyed(struct qp_state *q, int n)
{
    int count[8][256];
    memset(count, 0, sizeof count);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 8; d++) count[d][(q->ks[i].key >> (8 * d)) & 255]++;
    for (int d = 0; d < 8; d++) {
        const int shift = 8 * d;
        if (count[d][(q->ks[0].key >> shift) & 255] == n) continue; /* one value: the pass would keep the order */
        int pos = 0;
        for (int v = 0; v < 256; v++) {
            const int c = count[d][v];
            count[d][v] = pos, pos += c;
        }
        for (int i = 0; i < n; i++) q->ks2[count[d][(q->ks[i].key >> shift) & 255]++] = q->ks[i];
        struct qp_keyed *t = q->ks;
        q->ks = q->ks2, q->ks2 = t;
    }
}

/* room for n keyed contacts */
static void qp_keyed_reserve(struct qp_state *q, int n)
{
    if (n <= q->kscap) return;
    q->kscap = n + n / 2 + 16;
    free(q->ks), free(q->ks2);
    q->ks = ids_grow(NULL, sizeof *q->ks, (size_t)q->kscap);
    q->ks2 = ids_grow(NULL, sizeof *q->ks2, (size_t)q->kscap);
}

/* Warm start across steps. A resting contact's force changes little from one step to the next, and the
 * clamped set (the rows with f > 0) hardly ever: the last solve's forces, carried to the same material
 * points, make the next step's first solve a check of the guessed set (imp_lcp_solve_guess) rather than
 * a pivoting solve from f = 0. A point of the new gather is the last gather's when the two lie within
 * IMP_QP_SAME_POINT of each other in A's body frame or in B's (a vertex of A, wherever it slides on B,
 * or a vertex of B under A), the pair the same (its sides may come back swapped). Only the first guess
 * changes: the solve's answer is judged as it is from a cold start. */
/* record the current contact list's points and forces (before it is gathered again); returns how many */
static int qp_warm_record(struct qp_state *q)
{
    if (q->count > q->lastcap) {
        q->lastcap = q->count + q->count / 2 + 16;
        q->last = ids_grow(q->last, sizeof *q->last, (size_t)q->lastcap);
    }
    qp_keyed_reserve(q, q->count);
    int n = 0;
    for (int i = 0; i < q->count; i++) {
        const qp_contact *c = &q->c[i];
        if (c->eq || !(c->force > 0)) continue; /* unmatched points start at 0: only forces are worth carrying */
        q->ks[n++] = (struct qp_keyed){c->key, i};
    }
    if (n > 1) qp_sort_keyed(q, n);
    for (int k = 0; k < n; k++) {
        const qp_contact *c = &q->c[q->ks[k].idx];
        q->last[k] = (struct qp_last_point){c->key, c->ka, q->ks[k].idx, c->la, c->lb, c->force};
    }
    return n;
}

/* the recorded force of the point nearest contact c (within IMP_QP_SAME_POINT in A's or B's frame), or 0 */
/* the first recorded point of pair `key` (or where it would be) */
QP_INLINE int qp_warm_first(const struct qp_state *q, int nlast, uint64_t key)
{
    int lo = 0, hi = nlast;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (q->last[mid].key < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* (lo: qp_warm_first of c's pair, found once for a manifold's points) */
QP_INLINE double qp_warm_force(const struct qp_state *q, int nlast, int lo, const qp_contact *c)
{
    const double tol2 = IMP_QP_SAME_POINT * IMP_QP_SAME_POINT;
    double best = tol2, f = 0;
    for (int j = lo; j < nlast && q->last[j].key == c->key; j++) {
        const struct qp_last_point *p = &q->last[j];
        const bool same = p->ka == c->ka; /* else the pair came back with its sides swapped */
        const imp_vec3 pa = same ? p->la : p->lb, pb = same ? p->lb : p->la;
        const double da = v3_dot(v3_sub(c->la, pa), v3_sub(c->la, pa)), db = v3_dot(v3_sub(c->lb, pb), v3_sub(c->lb, pb));
        const double d = da < db ? da : db;
        if (d < best) best = d, f = p->force;
    }
    return f;
}

/* the points of manifolds [M chunk / PAR_CHUNKS, M (chunk + 1) / PAR_CHUNKS) as contacts at their
 * places (q->gm), placed at the current state: each contact from its manifold alone, so the chunks
 * may run on both threads (par_for) with the same numbers */
typedef struct qp_gather_job { imp_world *w; int nm, nlast; } qp_gather_job;

QP_INLINE void qp_gather_part_body(void *ctx, int chunk)
{
    const qp_gather_job *jb = ctx;
    imp_world *w = jb->w;
    struct qp_state *q = w->qp;
    int m0, m1;
    par_range(jb->nm, chunk, &m0, &m1);
    for (int m = m0; m < m1; m++) {
        if (q->gm[m].count == 0) continue;
        const imp_contact *mc = &w->contacts->manifolds[m].c;
        const int ka = q->gm[m].ka, kb = q->gm[m].kb;
        const double rad_a = side_radius(w, mc->a, ka), rad_b = side_radius(w, mc->b, kb);
        const uint64_t key = qp_pair_key(mc);
        const int warm_lo = jb->nlast ? qp_warm_first(q, jb->nlast, key) : 0;
        int at = q->gm[m].start;
        for (int k = 0; k < mc->count; k++) {
            if (mc->depth[k] < -QP_SEPARATED) continue;
            qp_contact *c = &q->c[at++];
            memset(c, 0, sizeof *c);
            c->ka = ka, c->kb = kb;
            c->ida = mc->a.body, c->idb = mc->b.body;
            c->key = key;
            /* the narrow phase's points are on the surfaces: a curved side's point goes to its core */
            imp_vec3 pa = mc->points[k], pb = v3_add(pa, v3_scale(mc->normal, mc->depth[k]));
            c->rad_a = rad_a, c->rad_b = rad_b;
            c->points = !mc->edge && !mc->face_a && rad_a > 0 && (rad_b > 0 || !side_face(w, mc->b, mc->normal));
            pa = v3_add(pa, v3_scale(mc->normal, rad_a)), pb = v3_sub(pb, v3_scale(mc->normal, rad_b));
            c->la = ka >= 0 ? m3_mul_tv(q->b[ka].R, v3_sub(pa, q->b[ka].x)) : pa;
            c->lb = kb >= 0 ? m3_mul_tv(q->b[kb].R, v3_sub(pb, q->b[kb].x)) : pb;
            c->n = mc->normal;
            c->face_a = mc->face_a; /* a Collider on side A has R = I and omega = 0 (qp_place's fixed body) */
            c->ln = c->face_a ? (ka >= 0 ? m3_mul_tv(q->b[ka].R, mc->normal) : mc->normal) : kb >= 0 ? m3_mul_tv(q->b[kb].R, mc->normal) : mc->normal;
            c->edge = mc->edge;
            if (mc->edge) {
                c->lea = ka >= 0 ? m3_mul_tv(q->b[ka].R, mc->ea) : mc->ea;
                c->leb = kb >= 0 ? m3_mul_tv(q->b[kb].R, mc->eb) : mc->eb;
            }
            if (jb->nlast) c->force = qp_warm_force(q, jb->nlast, warm_lo, c);
            qp_place(q, c);
        }
    }
}
QP_TWICE(qp_gather_part)

/* the contacts of the current manifolds, every touching point, at the current state */
/* which manifolds give contacts: per manifold of chunk `chunk` its bodies and how many of its points are
 * contacts (0: none), each manifold on its own (par_for, the same numbers) */
typedef struct qp_count_job { imp_world *w; int njt; } qp_count_job;

static void qp_count_part(void *ctx, int chunk)
{
    const qp_count_job *jb = ctx;
    imp_world *w = jb->w;
    struct qp_state *q = w->qp;
    int m0, m1;
    par_range(w->contacts->manifold_count, chunk, &m0, &m1);
    for (int m = m0; m < m1; m++) {
        const imp_contact *mc = &w->contacts->manifolds[m].c;
        int ka = imp_id_is_null(mc->a.body) ? -1 : ids_lookup(&w->bodies->ids, mc->a.body);
        int kb = imp_id_is_null(mc->b.body) ? -1 : ids_lookup(&w->bodies->ids, mc->b.body);
        q->gm[m].count = 0, q->gm[m].ka = ka, q->gm[m].kb = kb;
        bool dyn = (ka >= 0 && q->b[ka].dyn) || (kb >= 0 && q->b[kb].dyn);
        if (!dyn) continue;
        if (jb->njt && ka >= 0 && kb >= 0 && joints_connected(w, ka, kb)) continue; /* S1: joined bodies do not touch */
        double deepest = -INFINITY;
        for (int k = 0; k < mc->count; k++) deepest = qp_larger(deepest, mc->depth[k]);
        if (deepest < -QP_TOUCH) continue; /* a pair the narrow phase keeps in reach, not touching yet */
        /* the manifolds keep face corners up to a few mm above the face (negative depth); those
         * within QP_SEPARATED are contacts too */
        int np = 0;
        for (int k = 0; k < mc->count; k++) np += !(mc->depth[k] < -QP_SEPARATED);
        q->gm[m].count = np;
    }
}

static int qp_gather(imp_world *w)
{
    struct qp_state *q = qp_get(w);
    const int nlast = qp_warm_record(q);
    const int njt = joints_count(w);
    qp_reserve(q, 0, w->bodies->ids.count);
    qp_bodies(w, w->bodies->state, NULL);
    if (njt) joints_prepare(w, w->bodies->ids.count); /* which body pairs are joined (no contact between them) */
    q->count = 0;
    q->warm = false;
    /* which manifolds give contacts, and where their points go (in manifold order), then the points
     * filled and placed manifold by manifold in chunks (qp_gather_part) */
    const int nm = w->contacts->manifold_count;
    if (nm > q->gmcap) {
        q->gmcap = nm + nm / 2 + 16;
        free(q->gm);
        q->gm = ids_grow(NULL, sizeof *q->gm, (size_t)q->gmcap);
    }
    qp_count_job cj = {w, njt};
    qp_par_chunks(qp_count_part, &cj, 4 * nm);
    for (int m = 0; m < nm; m++) q->gm[m].start = q->count, q->count += q->gm[m].count;
    qp_reserve(q, q->count + 3 * q->nj + 6 * njt, w->bodies->ids.count);
    qp_gather_job gj = {w, nm, nlast};
    qp_par_chunks(QP_PICK(qp_gather_part), &gj, q->count);
    /* joints: three equality rows each, along the world axes: the anchor on A and the anchor on B
     * (or the world point) keep together, d = e_k . (p_A - p_B) = 0 with d'' = 0 */
    for (int k = 0; k < q->nj; k++) {
        const struct qp_joint *jt = &q->joints[k];
        if (!jt->live) continue;
        int ka = ids_lookup(&w->bodies->ids, jt->a);
        int kb = imp_id_is_null(jt->b) ? -1 : ids_lookup(&w->bodies->ids, jt->b);
        if (ka < 0 || (!imp_id_is_null(jt->b) && kb < 0)) continue; /* a body was destroyed */
        if (!q->b[ka].dyn && (kb < 0 || !q->b[kb].dyn)) continue;
        for (int axis = 0; axis < 3; axis++) {
            qp_contact *c = &q->c[q->count++];
            memset(c, 0, sizeof *c);
            c->ka = ka, c->kb = kb, c->ida = jt->a, c->idb = jt->b;
            c->la = jt->la, c->lb = jt->lb;
            c->ln = v3(axis == 0, axis == 1, axis == 2);
            c->eq = true;
            qp_place(q, c);
        }
    }
    /* the joints of world:joint{type = ...} (joint.c): each constrained direction an equality row.
     * A linear row keeps the articulation points together along dir (fixed in B, turning with it: a
     * prismatic joint's points slide apart along the free axis, the row's d'' is taken at B's point
     * coincident with A's, as for S0's vertex/face contact: b = n . (a_A - a_B) + 2 ndot . (v_A - v_B));
     * an angular row keeps n . (omega_A - omega_B) = 0, d/dt of it = n . (alpha_A - alpha_B) + ndot .
     * (omega_A - omega_B) is its b (ndot = omega_B x n), and its Jacobian is (0, +-n). */
    for (int k = 0; k < njt; k++) {
        joint_row rows[6];
        int m = joints_rows(w, k, rows);
        int nang = 0;
        for (int r = 0; r < m; r++) nang += rows[r].angular;
        for (int r = 0; r < m; r++) {
            const joint_row *jr = &rows[r];
            int ka = ids_lookup(&w->bodies->ids, jr->a);
            int kb = imp_id_is_null(jr->b) ? -1 : ids_lookup(&w->bodies->ids, jr->b);
            if (ka < 0 || (!imp_id_is_null(jr->b) && kb < 0)) continue;
            if (!q->b[ka].dyn && (kb < 0 || !q->b[kb].dyn)) continue;
            qp_contact *c = &q->c[q->count++];
            memset(c, 0, sizeof *c);
            c->ka = ka, c->kb = kb, c->ida = jr->a, c->idb = jr->b;
            c->la = m3_mul_tv(q->b[ka].R, v3_sub(jr->pa, q->b[ka].x));
            c->lb = kb >= 0 ? m3_mul_tv(q->b[kb].R, v3_sub(jr->pb, q->b[kb].x)) : jr->pb;
            c->ln = kb >= 0 ? m3_mul_tv(q->b[kb].R, jr->dir) : jr->dir;
            c->eq = c->in_b = true;
            c->angular = jr->angular;
            if (c->angular && (nang == 2 || nang == 3)) {
                /* the position error from joint.c's frames: the free axis x in each body (2 rows), or
                 * the relative orientation q0 = fb conj(fa) with which q_A fa = q_B fb (3 rows) */
                c->ang_ref = nang;
                c->lea = quat_rotate(jr->fa, v3(1, 0, 0)), c->leb = quat_rotate(jr->fb, v3(1, 0, 0));
                c->q0 = quat_mul(jr->fb, quat_conj(jr->fa));
            }
            qp_place(q, c);
        }
    }
    return q->count;
}

int imp_qp_joint(imp_world *w, imp_id a, imp_id b, imp_vec3 point)
{
    struct qp_state *q = qp_get(w);
    int ka = ids_lookup(&w->bodies->ids, a);
    int kb = imp_id_is_null(b) ? -1 : ids_lookup(&w->bodies->ids, b);
    if (ka < 0 || (!imp_id_is_null(b) && kb < 0)) return -1;
    if (q->nj == q->jcap) {
        q->jcap = q->jcap ? 2 * q->jcap : 8;
        q->joints = ids_grow(q->joints, sizeof *q->joints, q->jcap);
    }
    const double *XA = w->bodies->state + BODY_DIM * ka;
    imp_mat3 RA = quat_to_m3(quat_normalize(quat(XA[3], XA[4], XA[5], XA[6])));
    struct qp_joint *jt = &q->joints[q->nj];
    jt->a = a, jt->b = b, jt->live = true;
    jt->la = m3_mul_tv(RA, v3_sub(point, v3_load(XA)));
    if (kb >= 0) {
        const double *XB = w->bodies->state + BODY_DIM * kb;
        imp_mat3 RB = quat_to_m3(quat_normalize(quat(XB[3], XB[4], XB[5], XB[6])));
        jt->lb = m3_mul_tv(RB, v3_sub(point, v3_load(XB)));
    } else {
        jt->lb = point;
    }
    return q->nj++;
}

void imp_qp_joint_remove(imp_world *w, int k)
{
    if (w->qp && k >= 0 && k < w->qp->nj) w->qp->joints[k].live = false;
}

/* K(row i along ui, row j along uj) = sum over shared bodies X of sigma sigma' J_iX M_X^-1 J_jX^T (A's
 * kernel, also for the friction rows and the angular joint rows) */
QP_INLINE double qp_kernel(const struct qp_state *q, const qp_contact *ci, imp_vec3 ui, const qp_contact *cj, imp_vec3 uj)
{
    double s = 0;
    for (int si = 0; si < 2; si++) {
        int X = si ? ci->kb : ci->ka;
        if (X < 0 || !q->b[X].dyn) continue;
        imp_vec3 li, ai;
        qp_jac(ci, ui, si, &li, &ai);
        for (int sj = 0; sj < 2; sj++) {
            if ((sj ? cj->kb : cj->ka) != X) continue;
            imp_vec3 lj, aj;
            qp_jac(cj, uj, sj, &lj, &aj);
            const qp_body *k = &q->b[X];
            double sg = (si ? -1 : 1) * (sj ? -1 : 1);
            s += sg * (k->im * v3_dot(li, lj) + v3_dot(ai, m3_mul_v(k->Iinv, aj)));
        }
    }
    return s;
}

/* do contacts i and j share a dynamic body? (else their kernel is exactly 0) */
static inline bool qp_share(const struct qp_state *q, const qp_contact *ci, const qp_contact *cj)
{
    return (ci->ka >= 0 && q->b[ci->ka].dyn && (ci->ka == cj->ka || ci->ka == cj->kb)) ||
           (ci->kb >= 0 && q->b[ci->kb].dyn && (ci->kb == cj->ka || ci->kb == cj->kb));
}

/* A (n x n) over the contacts [0, n), from the placed contacts: A_ij = sum J_iX M_X^-1 J_jX^T. Each
 * row's sides first: its dynamic body X (-1: none), sigma, the torque arm t = r_X x n and I_X^-1 t;
 * then A_ij = sum over the bodies both rows move of sigma_i sigma_j (n_i . n_j / m_X + t_i . I_X^-1 t_j) */
typedef struct qp_arow { int X[2]; imp_vec3 t[2], it[2]; } qp_arow;

QP_INLINE void qp_amatrix_into(const struct qp_state *q, const qp_contact *cs, int n, double *A, qp_arow *rows)
{
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &cs[i];
        for (int side = 0; side < 2; side++) {
            const int X = side ? c->kb : c->ka;
            rows[i].X[side] = X >= 0 && q->b[X].dyn ? X : -1;
            if (rows[i].X[side] < 0 || c->angular) continue;
            rows[i].t[side] = v3_cross(side ? c->rb : c->ra, c->n);
            rows[i].it[side] = m3_mul_v(q->b[X].Iinv, rows[i].t[side]);
        }
    }
    for (int i = 0; i < n; i++) {
        const qp_contact *ci = &cs[i];
        const qp_arow *ri = &rows[i];
        for (int j = i; j < n; j++) {
            const qp_contact *cj = &cs[j];
            const qp_arow *rj = &rows[j];
            if (ci->angular || cj->angular) {
                A[(size_t)i * n + j] = A[(size_t)j * n + i] = qp_kernel(q, ci, ci->n, cj, cj->n);
                continue;
            }
            double s = 0;
            for (int si = 0; si < 2; si++) {
                const int X = ri->X[si];
                if (X < 0) continue;
                const double sgi = si ? -1 : 1;
                for (int sj = 0; sj < 2; sj++) {
                    if (rj->X[sj] != X) continue;
                    const double sgj = sj ? -1 : 1;
                    s += sgi * sgj * (q->b[X].im * v3_dot(ci->n, cj->n) + v3_dot(ri->t[si], rj->it[sj]));
                }
            }
            A[(size_t)i * n + j] = A[(size_t)j * n + i] = s;
        }
    }
}

static void qp_amatrix(struct qp_state *q, int n, double *A)
{
    if (n > q->arowcap) {
        q->arowcap = n + n / 2 + 16;
        free(q->arow);
        q->arow = ids_grow(NULL, sizeof(qp_arow), (size_t)q->arowcap);
    }
    qp_amatrix_into(q, q->c, n, A, q->arow);
}

/* b: d'' of each contact with no contact force (exact; the extra acceleration is added by the caller) */
QP_INLINE double qp_b_one(const struct qp_state *q, const qp_contact *c)
{
    const qp_body *A = c->ka >= 0 ? &q->b[c->ka] : &QP_FIXED, *B = c->kb >= 0 ? &q->b[c->kb] : &QP_FIXED;
    if (c->angular) /* d/dt (n . (omega_A - omega_B)) */
        return v3_dot(c->n, v3_sub(A->alpha, B->alpha)) + v3_dot(c->ndot, v3_sub(A->w, B->w));
    if (c->eq) { /* a joint's linear row (rows fixed in B: B's point coincident with A's) */
        imp_vec3 rbp = c->in_b ? c->rb : v3_sub(c->pb, B->x);
        imp_vec3 acc = v3_sub(point_acc(A, c->ra), point_acc(B, rbp));
        imp_vec3 vel = v3_sub(point_vel(A, c->ra), point_vel(B, rbp));
        return v3_dot(c->n, acc) + 2 * v3_dot(c->ndot, vel);
    }
    return v3_dot(c->n, v3_sub(point_acc(A, c->qa), point_acc(B, c->qb))) + c->bvel;
}

static void qp_bvector(const struct qp_state *q, int n, double *b)
{
    for (int i = 0; i < n; i++) b[i] = qp_b_one(q, &q->c[i]);
}

/* A derivative evaluation's per-contact work, contact by contact (each independent of the others, so
 * chunks of them may run on both threads, par_for, with the same numbers): place it at the bodies'
 * kinematics (unless it is placed there already) and take its b with S4's extra acceleration towards
 * d = -IMP_QP_SLOP (joints: 0) */
QP_INLINE double qp_eval_one(const struct qp_state *q, qp_contact *c, bool place)
{
    if (place) qp_place(q, c);
    const double h = q->h;
    double b = qp_b_one(q, c);
    b += c->dd / h + (c->d + (c->eq ? 0 : IMP_QP_SLOP)) / (4 * h * h);
    return b;
}

/* the evaluation's contacts into q->ball: every island's [isl[k], eend[k]) (eend NULL: every contact),
 * n of them in all, cut into chunks as one run */
typedef struct qp_eval_job { struct qp_state *q; int n; bool place; const int *eend; } qp_eval_job;

QP_INLINE void qp_eval_part_body(void *ctx, int chunk)
{
    const qp_eval_job *jb = ctx;
    struct qp_state *q = jb->q;
    int lo, hi;
    par_range(jb->n, chunk, &lo, &hi);
    if (!jb->eend) {
        for (int i = lo; i < hi; i++) q->ball[i] = qp_eval_one(q, &q->c[i], jb->place);
        return;
    }
    for (int k = 0, off = 0; k < q->nisl && off < hi; k++) {
        const int first = q->isl[k], len = jb->eend[k] - first;
        const int s = lo > off ? lo : off, e = hi < off + len ? hi : off + len;
        for (int j = s; j < e; j++) q->ball[first + j - off] = qp_eval_one(q, &q->c[first + j - off], jb->place);
        off += len;
    }
}
QP_TWICE(qp_eval_part)

/* add f_i n_i at p_i to A's force and torque, the opposite to B's, into the body derivative dX */
static void qp_apply(imp_world *w, int n, const double *f, double *dX)
{
    struct qp_state *q = w->qp;
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        if (f[i] == 0) continue;
        imp_vec3 lin, ang;
        if (c->ka >= 0 && q->b[c->ka].dyn) {
            qp_jac(c, c->n, 0, &lin, &ang);
            v3_accum(dX + BODY_DIM * c->ka + 7, v3_scale(lin, f[i]));
            v3_accum(dX + BODY_DIM * c->ka + 10, v3_scale(ang, f[i]));
        }
        if (c->kb >= 0 && q->b[c->kb].dyn) {
            qp_jac(c, c->n, 1, &lin, &ang);
            v3_accum(dX + BODY_DIM * c->kb + 7, v3_scale(lin, -f[i]));
            v3_accum(dX + BODY_DIM * c->kb + 10, v3_scale(ang, -f[i]));
        }
    }
}

/* the body derivative with external forces only, at the store's state, into scratch dX */
static void qp_external(imp_world *w, double *dX)
{
    imp_ode_system sys = imp_body_ode(w);
    sys.deriv(sys.ctx, w->time, w->bodies->state, dX);
}

/* a row of the sweeps (and of A_tt, A_tn) with what stays fixed over a solve (the bodies do not move): per
 * side its body (-1: none, or not dynamic), the Jacobian (lin, ang) as qp_jac gives it, I^-1 ang,
 * and the diagonal A_ii */
typedef struct qp_pgs_row {
    int X[2];
    imp_vec3 lin[2], ang[2], iang[2];
    double diag;
} qp_pgs_row;

/* a row's sides as qp_row_init gives them, without the diagonal */
static void qp_jrow_init(const struct qp_state *q, const qp_contact *c, imp_vec3 u, qp_pgs_row *r)
{
    for (int side = 0; side < 2; side++) {
        int X = side ? c->kb : c->ka;
        r->X[side] = X < 0 || !q->b[X].dyn ? -1 : X;
        qp_jac(c, u, side, &r->lin[side], &r->ang[side]);
        r->iang[side] = r->X[side] < 0 ? v3(0, 0, 0) : m3_mul_v(q->b[X].Iinv, r->ang[side]);
    }
}

/* qp_kernel of two rows from their sides (the same sum in the same order; 0 when they share no body) */
static double qp_jrow_kernel(const struct qp_state *q, const qp_pgs_row *a, const qp_pgs_row *b)
{
    double s = 0;
    for (int si = 0; si < 2; si++) {
        const int X = a->X[si];
        if (X < 0) continue;
        for (int sj = 0; sj < 2; sj++) {
            if (b->X[sj] != X) continue;
            const double sg = (si ? -1 : 1) * (sj ? -1 : 1);
            s += sg * (q->b[X].im * v3_dot(a->lin[si], b->lin[sj]) + v3_dot(a->ang[si], b->iang[sj]));
        }
    }
    return s;
}

/* ---- friction (a friction-cone approximation) ------------------------------------------------------ *
 * Each resting contact also carries a tangential force g = g1 t1 + g2 t2 (t1, t2 an orthonormal basis
 * of the contact plane), with Coulomb's cone |g| <= mu f. The rows couple through the same kernel as
 * A: for a row of direction u at contact i and one of direction u' at contact j,
 *     K = sum over shared bodies X of sigma sigma' [ u.u' / m_X + (r_iX x u) . I_X^-1 (r_jX x u') ]
 * The tangential relative acceleration is a_t = A_tt g + A_tn f + b_t, b_t as b with t for n (the
 * turning of the basis, tdot, is left out). Friction is asked to stop the sliding within the step:
 * a_t + v_t/h = 0 (S4's extra acceleration, tangentially), limited to the cone. The coupled problem
 * is not an LCP with a symmetric PSD matrix; it is solved by alternation, as a fixed point: the
 * normal LCP (pivoting, exact) with the friction forces as known external forces, then the
 * tangential forces by projected Gauss-Seidel sweeps, each 2-vector projected onto the disc of
 * radius mu f_i (the cone, not the box), QP_FRICTION_ROUNDS rounds of up to QP_FRICTION_SWEEPS sweeps
 * (they stop when a sweep no longer moves the forces; a round whose first sweep moves nothing ends
 * the rounds) and a final normal LCP, warm-started from the last evaluation's forces (the contact set is fixed over a step, and kept
 * across steps while unchanged). Sticking contacts get the force that holds them; sliding ones mu f
 * against the slip. Frictionless (mu = 0) skips all of it and stays exact. */
static void qp_friction_reserve(struct qp_state *q, int n)
{
    if (n <= q->tcap) return;
    int cap = q->tcap ? q->tcap : 16;
    while (cap < n) cap *= 2;
    free(q->At), free(q->An), free(q->bt);
    free(q->tt_cols), free(q->tt_count), free(q->tn_cols), free(q->tn_count), free(q->nt_rows), free(q->nt_count), free(q->t_base);
    q->tt_cols = ids_grow(NULL, sizeof(int), 4 * (size_t)cap * cap);
    q->tn_cols = ids_grow(NULL, sizeof(int), 2 * (size_t)cap * cap);
    q->nt_rows = ids_grow(NULL, sizeof(int), 2 * (size_t)cap * cap);
    q->tt_count = ids_grow(NULL, sizeof(int), 2 * (size_t)cap);
    q->tn_count = ids_grow(NULL, sizeof(int), 2 * (size_t)cap);
    q->nt_count = ids_grow(NULL, sizeof(int), (size_t)cap);
    q->t_base = ids_grow(NULL, sizeof(double), 2 * (size_t)cap);
    q->At = ids_grow(NULL, sizeof(double), 4 * (size_t)cap * cap);
    q->An = ids_grow(NULL, sizeof(double), 2 * (size_t)cap * cap);
    q->bt = ids_grow(NULL, sizeof(double), 3 * (size_t)cap); /* b_t (2 per contact), then the normal b */
    q->tcap = cap;
}

static void qp_friction_reserve_contacts(struct qp_state *q, int n)
{
    if (n <= q->gcap) return;
    int cap = q->gcap ? q->gcap : 16;
    while (cap < n) cap *= 2;
    free(q->gi), free(q->t1), free(q->t2);
    /* g keeps its values: they are the next evaluation's first guess when the step's contact set is
     * last step's (qp_begin_step decides that after this may have run) */
    q->g = ids_grow(q->g, sizeof(double), 2 * (size_t)cap);
    memset(q->g + 2 * (size_t)q->gcap, 0, sizeof(double) * 2 * (size_t)(cap - q->gcap));
    q->gi = ids_grow(NULL, sizeof(double), 2 * (size_t)cap);
    q->t1 = ids_grow(NULL, sizeof(imp_vec3), cap);
    q->t2 = ids_grow(NULL, sizeof(imp_vec3), cap);
    q->gcap = cap;
}

/* the tangent basis of each placed contact, and b_t: with impulse false the tangential relative
 * acceleration plus v_t / h (forces: stop the slip within the step), with impulse true the
 * tangential relative velocity v_t (collision impulses: the velocity change that stops it) */
static void qp_friction_rows(struct qp_state *q, int n, bool impulse, double *bt)
{
    const double h = q->h;
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        v3_basis(c->n, &q->t1[i], &q->t2[i]);
        const qp_body *A = c->ka >= 0 ? &q->b[c->ka] : &QP_FIXED, *B = c->kb >= 0 ? &q->b[c->kb] : &QP_FIXED;
        imp_vec3 rbp = v3_sub(c->pb, B->x);
        imp_vec3 vel = v3_sub(point_vel(A, c->ra), point_vel(B, rbp));
        imp_vec3 acc = impulse ? v3(0, 0, 0) : v3_sub(point_acc(A, c->ra), point_acc(B, rbp));
        double s = impulse ? 1 : 1 / h;
        bt[2 * i] = v3_dot(q->t1[i], acc) + s * v3_dot(q->t1[i], vel);
        bt[2 * i + 1] = v3_dot(q->t2[i], acc) + s * v3_dot(q->t2[i], vel);
    }
}

/* normal forces (or impulses) f, with w = A f + bn in wv, and friction g for the placed contacts,
 * q->bt filled by qp_friction_rows; g holds the first guess. Forces and impulses are the same
 * problem: at the velocity level b_n = (1 + e) v_n- and b_t = v_t-, and the rows' kernel is the same
 * J M^-1 J^T. */

#define QP_FRICTION_ROUNDS 3 /* normal LCP + tangential sweeps, then the final normal LCP */
#define QP_FRICTION_SWEEPS 20 /* at most, per round; fewer once a sweep changes no friction force by */
#define QP_FRICTION_TOL 1e-10 /* more than this fraction of the largest cone radius mu f_i */
static void qp_solve_friction(struct qp_state *q, int n, const double *bn, double *g, bool impulse)
{
    const double mu = q->friction;
    double *bw = q->bt + 2 * q->tcap; /* b of the normal LCP with the friction forces in */
    const int m = 2 * n;
    /* each contact's rows (normal, t1, t2) with their Jacobians and I^-1 ang: A_tt and A_tn entry by
     * entry as qp_kernel gives them (the same products in the same order), without the cross products
     * and the I^-1 products of every pair */
    if (3 * n > q->prowcap) {
        q->prowcap = 3 * n + 3 * n / 2 + 16;
        free(q->prow);
        q->prow = ids_grow(NULL, sizeof(qp_pgs_row), q->prowcap);
    }
    qp_pgs_row *jr = q->prow;
    for (int i = 0; i < n; i++) {
        qp_jrow_init(q, &q->c[i], q->c[i].n, &jr[3 * i]);
        qp_jrow_init(q, &q->c[i], q->t1[i], &jr[3 * i + 1]);
        qp_jrow_init(q, &q->c[i], q->t2[i], &jr[3 * i + 2]);
    }
    for (int r = 0; r < m; r++) {
        const qp_pgs_row *rr = &jr[3 * (r / 2) + 1 + (r & 1)];
        for (int k = r; k < m; k++)
            q->At[(size_t)r * m + k] = q->At[(size_t)k * m + r] = qp_jrow_kernel(q, rr, &jr[3 * (k / 2) + 1 + (k & 1)]);
        for (int j = 0; j < n; j++) q->An[(size_t)r * n + j] = qp_jrow_kernel(q, rr, &jr[3 * j]);
    }
    /* the nonzero pattern; sums over it add the same terms in the same order as over whole rows
     * (a zero entry adds an exact zero) */
    for (int r = 0; r < m; r++) {
        int *tt = q->tt_cols + (size_t)r * m, *tn = q->tn_cols + (size_t)r * n, ktt = 0, ktn = 0;
        for (int c = 0; c < m; c++) if (q->At[(size_t)r * m + c] != 0) tt[ktt++] = c;
        for (int j = 0; j < n; j++) if (q->An[(size_t)r * n + j] != 0) tn[ktn++] = j;
        q->tt_count[r] = ktt, q->tn_count[r] = ktn;
    }
    for (int i = 0; i < n; i++) {
        int *nt = q->nt_rows + (size_t)i * m, k = 0;
        for (int r = 0; r < m; r++) if (q->An[(size_t)r * n + i] != 0) nt[k++] = r;
        q->nt_count[i] = k;
    }
    for (int round = 0;; round++) {
        /* normal forces with the friction forces known: b_n + A_nt g (A_nt = A_tn^T) */
        for (int i = 0; i < n; i++) {
            double v = bn[i];
            const int *nt = q->nt_rows + (size_t)i * m;
            for (int k = 0; k < q->nt_count[i]; k++) v += q->An[(size_t)nt[k] * n + i] * g[nt[k]];
            bw[i] = v;
        }
        /* the clamped set guessed from the last round's forces (the first round of a force solve: the
         * last evaluation's, kept in each contact's force) */
        if (round == 0)
            for (int i = 0; i < n; i++) q->f[i] = impulse ? 0 : q->c[i].force;
        imp_lcp_solve_guess(n, q->cur_neq, q->A, bw, q->f, q->f, q->wv, &q->info, &q->lcp);
        /* the last word is the normal LCP's: d'' >= 0 holds exactly with the friction forces applied
         * (the friction may then exceed the cone by what the last normal solve took away) */
        if (round == QP_FRICTION_ROUNDS) break;
        /* tangential: projected Gauss-Seidel on A_tt g + A_tn f + b_t = 0, |g_i| <= mu f_i; f is
         * fixed over the sweeps, so b_t + A_tn f is summed once */
        for (int r = 0; r < m; r++) {
            double res = q->bt[r];
            const double *an = q->An + (size_t)r * n;
            const int *tn = q->tn_cols + (size_t)r * n;
            for (int k = 0; k < q->tn_count[r]; k++) res += an[tn[k]] * q->f[tn[k]];
            q->t_base[r] = res;
        }
        int sweep = 0;
        for (; sweep < QP_FRICTION_SWEEPS; sweep++) {
            double change = 0, big = 0; /* the largest change and the largest cone radius */
            for (int i = 0; i < n; i++) {
                const double old0 = g[2 * i], old1 = g[2 * i + 1];
                for (int k = 0; k < 2; k++) {
                    int r = 2 * i + k;
                    const double *at = q->At + (size_t)r * m;
                    const int *tt = q->tt_cols + (size_t)r * m;
                    double res = q->t_base[r], diag = at[r];
                    for (int e = 0; e < q->tt_count[r]; e++) res += at[tt[e]] * g[tt[e]];
                    if (diag > 0) g[r] -= res / diag;
                }
                double lim = q->c[i].eq ? 0 : mu * q->f[i], g0 = g[2 * i], g1 = g[2 * i + 1];
                /* |g| <= lim decided without the square root where the squares are clear of it by
                 * far more than their rounding (hypot is within an ulp of the true length) */
                double sq = g0 * g0 + g1 * g1, lim2 = lim * lim;
                if (!(sq < lim2 * (1 - 1e-12) && lim2 > 1e-290)) {
                    double gl = hypot(g0, g1);
                    if (gl > lim) {
                        double sc = gl > 0 ? lim / gl : 0;
                        g[2 * i] *= sc, g[2 * i + 1] *= sc;
                    }
                }
                change = qp_larger(change, qp_larger(fabs(g[2 * i] - old0), fabs(g[2 * i + 1] - old1)));
                big = qp_larger(big, lim);
            }
            if (change <= QP_FRICTION_TOL * big) break;
        }
        /* a first sweep that moved nothing: g is the fixed point for these normal forces, and the normal
         * LCP just solved with it stands (another round would solve the same problem) */
        if (sweep == 0) break;
    }
}

/* ---- the fallback for islands too big for a dense A: projected Gauss-Seidel ------------------------ *
 * The same problem, w = A f + b with f >= 0, w >= 0, f w = 0 (equality rows: w = 0, f free), and the
 * friction rows |g_i| <= mu f_i, solved row by row without forming A. Each body X keeps the change
 * its contact forces have made so far to its velocity (or acceleration): dv_X = sum sigma f u / m_X,
 * dw_X = sum sigma f I_X^-1 (r_X x u). A row's w is then its b plus J_i (dv, dw):
 *     w_i = b_i + sum over its two bodies sigma (u . dv_X + (r_X x u) . dw_X)
 * and its diagonal A_ii = sum 1/m_X + (r_X x u) . I_X^-1 (r_X x u) (the kernel of A, qp_kernel).
 * One Gauss-Seidel step sets w_i to zero, f_i -= w_i / A_ii, then projects (f_i >= 0; g_i onto the
 * disc of radius mu f_i) and pushes the change into dv, dw. Sweeps run until no force changes by more
 * than IMP_QP_PGS_TOL of the largest, at most IMP_QP_PGS_SWEEPS. Not exact like the pivoting solver:
 * the forces are valid (projected), complementarity holds to the sweeps' convergence. */
#define IMP_QP_PGS_SWEEPS 200
#define IMP_QP_PGS_TOL 1e-6


static void qp_row_init(const struct qp_state *q, const qp_contact *c, imp_vec3 u, qp_pgs_row *r)
{
    for (int side = 0; side < 2; side++) {
        int X = side ? c->kb : c->ka;
        r->X[side] = X < 0 || !q->b[X].dyn ? -1 : X;
        qp_jac(c, u, side, &r->lin[side], &r->ang[side]);
        r->iang[side] = r->X[side] < 0 ? v3(0, 0, 0) : m3_mul_v(q->b[X].Iinv, r->ang[side]);
    }
    r->diag = qp_kernel(q, c, u, c, u);
}

static double qp_row_w(const struct qp_state *q, const qp_pgs_row *r)
{
    double s = 0;
    for (int side = 0; side < 2; side++) {
        int X = r->X[side];
        if (X < 0) continue;
        double v = v3_dot(r->lin[side], q->dv[X]) + v3_dot(r->ang[side], q->dw[X]);
        s += side ? -v : v;
    }
    return s;
}

static void qp_row_push(struct qp_state *q, const qp_pgs_row *r, double df)
{
    for (int side = 0; side < 2; side++) {
        int X = r->X[side];
        if (X < 0) continue;
        double sdf = side ? -df : df;
        q->dv[X] = v3_add(q->dv[X], v3_scale(r->lin[side], sdf * q->b[X].im));
        q->dw[X] = v3_add(q->dw[X], v3_scale(r->iang[side], sdf));
    }
}


/* f (first guess in, solution out), w = A f + bn in wv; with g: the friction rows too, b_t in bt */
static void qp_pgs(struct qp_state *q, int nb, int n, const double *bn, double *f, double *wv, double *g, const double *bt)
{
    if (nb > q->dvcap) {
        q->dvcap = nb + nb / 2 + 16;
        q->dv = ids_grow(q->dv, sizeof(imp_vec3), q->dvcap);
        q->dw = ids_grow(q->dw, sizeof(imp_vec3), q->dvcap);
    }
    /* rows: contact i's normal row at 3 i, its friction rows at 3 i + 1, 3 i + 2 */
    const int per = g ? 3 : 1;
    if ((long)per * n > q->prowcap) {
        q->prowcap = per * n + per * n / 2 + 16;
        free(q->prow);
        q->prow = ids_grow(NULL, sizeof(qp_pgs_row), q->prowcap);
    }
    qp_pgs_row *rows = q->prow;
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        qp_row_init(q, c, c->n, &rows[per * i]);
        if (g) qp_row_init(q, c, q->t1[i], &rows[per * i + 1]), qp_row_init(q, c, q->t2[i], &rows[per * i + 2]);
    }
    /* only the island's bodies are touched: zero them, then push the first guess in */
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        if (c->ka >= 0) q->dv[c->ka] = q->dw[c->ka] = v3(0, 0, 0);
        if (c->kb >= 0) q->dv[c->kb] = q->dw[c->kb] = v3(0, 0, 0);
    }
    for (int i = 0; i < n; i++) {
        const qp_contact *c = &q->c[i];
        if (!c->eq && f[i] < 0) f[i] = 0;
        qp_row_push(q, &rows[per * i], f[i]);
        if (g) qp_row_push(q, &rows[per * i + 1], g[2 * i]), qp_row_push(q, &rows[per * i + 2], g[2 * i + 1]);
    }
    const double mu = q->friction;
    int sweep = 0;
    for (; sweep < IMP_QP_PGS_SWEEPS; sweep++) {
        double change = 0, big = 0;
        for (int i = 0; i < n; i++) {
            const qp_contact *c = &q->c[i];
            const qp_pgs_row *rn = &rows[per * i];
            double d = rn->diag;
            if (d > 0) {
                double fn = f[i] - (bn[i] + qp_row_w(q, rn)) / d;
                if (!c->eq && fn < 0) fn = 0;
                if (fn != f[i]) qp_row_push(q, rn, fn - f[i]);
                change = qp_larger(change, fabs(fn - f[i])), big = qp_larger(big, fabs(fn));
                f[i] = fn;
            }
            if (!g) continue;
            double old[2] = {g[2 * i], g[2 * i + 1]};
            for (int k = 0; k < 2; k++) {
                const qp_pgs_row *rt = &rows[per * i + 1 + k];
                double dt = rt->diag;
                if (!(dt > 0)) continue;
                double dg = -(bt[2 * i + k] + qp_row_w(q, rt)) / dt;
                g[2 * i + k] += dg;
                qp_row_push(q, rt, dg);
            }
            double lim = c->eq ? 0 : mu * f[i], gl = hypot(g[2 * i], g[2 * i + 1]);
            if (gl > lim) { /* onto the disc, and the bodies follow */
                double sc = gl > 0 ? lim / gl : 0, g0 = g[2 * i], g1 = g[2 * i + 1];
                g[2 * i] *= sc, g[2 * i + 1] *= sc;
                qp_row_push(q, &rows[per * i + 1], g[2 * i] - g0);
                qp_row_push(q, &rows[per * i + 2], g[2 * i + 1] - g1);
            }
            change = qp_larger(change, qp_larger(fabs(g[2 * i] - old[0]), fabs(g[2 * i + 1] - old[1])));
        }
        if (change <= IMP_QP_PGS_TOL * big) break;
    }
    int clamped = 0;
    for (int i = 0; i < n; i++) {
        wv[i] = bn[i] + qp_row_w(q, &rows[per * i]);
        clamped += f[i] != 0;
    }
    /* out of sweeps before the changes settled: reported like a pivoting solve that ran out */
    q->info = (imp_lcp_info){sweep < IMP_QP_PGS_SWEEPS ? IMP_LCP_OK : IMP_LCP_MAX_PIVOTS, sweep, clamped, false};
    q->pgs++;
}

/* one island's contacts [0, n) placed: normal forces (or impulses) into q->f, w into q->wv, and with
 * friction the tangential ones into g (first guess in). bn: the normal rows' b. impulse: velocity
 * level (b_t = v_t) rather than acceleration level (b_t = a_t + v_t / h). Dense pivoting LCP up to
 * dense_max rows, projected Gauss-Seidel above. Returns the LCP status. */
static int qp_island_solve(imp_world *w, int n, const double *bn, double *g, bool impulse)
{
    struct qp_state *q = w->qp;
    if (n > q->dense_max) {
        double *bt = NULL;
        if (g) {
            if (2 * n > q->pbtcap) {
                q->pbtcap = 2 * n + n + 16;
                free(q->pbt);
                q->pbt = ids_grow(NULL, sizeof(double), q->pbtcap);
            }
            bt = q->pbt;
            qp_friction_rows(q, n, impulse, bt);
        }
        for (int i = 0; i < n; i++) q->f[i] = impulse ? 0 : q->c[i].force; /* a step's evaluations: warm */
        qp_pgs(q, w->bodies->ids.count, n, bn, q->f, q->wv, g, bt);
        return q->info.status;
    }
    qp_amatrix(q, n, q->A);
    if (!g) {
        /* forces: the clamped set guessed from the last evaluation's (each contact's force) */
        for (int i = 0; i < n; i++) q->f[i] = impulse ? 0 : q->c[i].force;
        return imp_lcp_solve_guess(n, q->cur_neq, q->A, bn, q->f, q->f, q->wv, &q->info, &q->lcp);
    }
    qp_friction_reserve(q, n);
    qp_friction_rows(q, n, impulse, q->bt);
    qp_solve_friction(q, n, bn, g, impulse);
    return q->info.status;
}

/* ---- an island split by its guessed clamped set ------------------------------------------------------ *
 * Rows with f = 0 couple nothing: a row whose force is zero adds nothing to any body, so the LCP of an
 * island whose zero rows are known splits into the LCPs of the parts the other rows connect. A guess of
 * the clamped set (the last evaluation's forces f > 0, and the joint rows) gives the parts: union-find
 * over the bodies by the guessed rows; a row inside a part belongs to it, a row between two parts (a
 * bridge) is guessed f = 0. Each part is solved on its own (the pivoting LCP, or the fallback when it is
 * over dense_max rows), and the bridges are checked with the parts' forces in the bodies:
 *     w_i = b_i + J_i (dv, dw) >= -tol,   (dv, dw) the bodies' acceleration change from every force.
 * Every part then meets the conditions of its rows, and every bridge has f = 0 and w >= 0: together a
 * solution of the whole island's problem (for friction, a bridge's cone has radius mu 0 = 0). A bridge
 * with w < -tol joins its two parts and the parts are solved again, warm-started from the forces just
 * found, until no bridge is violated (at worst the whole island, as without the split). A block of
 * boxes standing side by side is one island through its side contacts, which carry no force: its
 * columns are solved one by one, each a small LCP, instead of one problem of thousands of rows. */
#define QP_SPLIT_TOL 1e-9 /* of the largest |b| of the island: a bridge's w below -tol is violated */

static void qp_split_reserve(struct qp_state *q, int n)
{
    if (n <= q->scap) return;
    int cap = q->scap ? q->scap : 16;
    while (cap < n) cap *= 2;
    free(q->srow), free(q->sidx), free(q->sstart), free(q->sf), free(q->sw), free(q->sbn), free(q->sg), free(q->st1), free(q->st2);
    q->srow = ids_grow(NULL, sizeof(int), (size_t)cap);
    q->sidx = ids_grow(NULL, sizeof(int), (size_t)cap);
    q->sstart = ids_grow(NULL, sizeof(int), (size_t)cap + 2);
    q->sf = ids_grow(NULL, sizeof(double), (size_t)cap);
    q->sw = ids_grow(NULL, sizeof(double), (size_t)cap);
    q->sbn = ids_grow(NULL, sizeof(double), (size_t)cap);
    q->sg = ids_grow(NULL, sizeof(double), 2 * (size_t)cap);
    q->st1 = ids_grow(NULL, sizeof(imp_vec3), (size_t)cap);
    q->st2 = ids_grow(NULL, sizeof(imp_vec3), (size_t)cap);
    q->sroot = ids_grow(q->sroot, sizeof(int), (size_t)cap);
    q->sbody = ids_grow(q->sbody, sizeof(int), 2 * (size_t)cap);
    q->scap = cap;
}

/* The islands split into the step's parts: the contacts sorted by island (q->par holds the islands'
 * union-find), within an island by the part of the guessed clamped rows (the warm start's f > 0, and
 * the joint rows), each part's joint rows first, and the bridges last; every evaluation of the step
 * starts from these parts, solved in place (qp_split_solve). One stable radix sort on the key (island's
 * root body, part's root body or the bridges' mark, not a joint row): islands in the order of their
 * roots, as qp_islands sorts them, and the order within a part the gather's. qp_islands has filled
 * each row's dynamic bodies (sa, sb) and kind (srowkind: 1 a joint row, 2 a force > 0), and splits
 * only bodies below 2^21 - 1, which the key can hold (else the islands are sorted unsplit). */
static void qp_parts_reserve(struct qp_state *q, int n, int nb)
{
    if (n > q->pcap) {
        const int cap = n + n / 2 + 16;
        q->sa = ids_grow(q->sa, sizeof(int), cap), q->sb = ids_grow(q->sb, sizeof(int), cap);
        q->pst = ids_grow(q->pst, sizeof(int), cap), q->pend = ids_grow(q->pend, sizeof(int), cap);
        q->pneq = ids_grow(q->pneq, sizeof(int), cap), q->pdone = ids_grow(q->pdone, sizeof(int), cap);
        q->srowkind = ids_grow(q->srowkind, 1, cap);
        q->pinfo = ids_grow(q->pinfo, sizeof(imp_lcp_info), cap);
        q->fp = ids_grow(q->fp, sizeof(int), (size_t)cap + 1), q->bst = ids_grow(q->bst, sizeof(int), (size_t)cap + 1);
        q->pcap = cap;
    }
    if (nb > q->pparcap) {
        q->pparcap = nb + nb / 2 + 16;
        q->ppar = ids_grow(q->ppar, sizeof(int), (size_t)q->pparcap);
    }
}

static void qp_parts(imp_world *w)
{
    struct qp_state *q = w->qp;
    const int nb = w->bodies->ids.count, n = q->count;
    for (int X = 0; X < nb; X++) q->ppar[X] = X;
    for (int i = 0; i < n; i++) {
        if (q->srowkind[i] && q->sa[i] >= 0 && q->sb[i] >= 0) {
            const int ra = qp_root(q->ppar, q->sa[i]), rb = qp_root(q->ppar, q->sb[i]);
            if (ra != rb) q->ppar[ra] = rb;
        }
    }
    qp_keyed_reserve(q, n);
    const uint64_t bridge = (1u << QP_PART_BITS) - 1;
    for (int i = 0; i < n; i++) {
        const int a = q->sa[i], b = q->sb[i];
        const uint64_t isl = (uint64_t)qp_root(q->par, a >= 0 ? a : b);
        const int ra = a >= 0 ? qp_root(q->ppar, a) : -1, rb = b >= 0 ? qp_root(q->ppar, b) : -1;
        const uint64_t pk = ra >= 0 && rb >= 0 && ra != rb ? bridge : (uint64_t)(ra >= 0 ? ra : rb);
        q->ks[i] = (struct qp_keyed){isl << (QP_PART_BITS + 1) | pk << 1 | !(q->srowkind[i] & 1), i};
    }
    qp_sort_keyed(q, n);
    qp_copy_job cj = {q, n, 0};
    qp_par_chunks(qp_copy_part, &cj, n);
    qp_contact *t = q->c;
    q->c = q->c2, q->c2 = t;
    /* the rows' bodies in the sorted order (pst and pend hold the unsorted ones for the while) */
    memcpy(q->pst, q->sa, sizeof(int) * (size_t)n), memcpy(q->pend, q->sb, sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++) q->sa[j] = q->pst[q->ks[j].idx], q->sb[j] = q->pend[q->ks[j].idx];
    /* islands, parts and bridges from the sorted keys */
    int np = 0, biggest = 0;
    q->nisl = 0;
    for (int i = 0; i < n;) {
        const uint64_t isl = q->ks[i].key >> (QP_PART_BITS + 1);
        const int k = q->nisl++;
        q->isl[k] = i, q->fp[k] = np, q->bst[k] = -1;
        uint64_t last = ~(uint64_t)0;
        for (; i < n && q->ks[i].key >> (QP_PART_BITS + 1) == isl; i++) {
            const uint64_t pk = (q->ks[i].key >> 1) & bridge;
            if (pk == bridge) {
                if (q->bst[k] < 0) q->bst[k] = i;
                continue;
            }
            if (pk != last) {
                if (np > q->fp[k]) q->pend[np - 1] = i;
                q->pst[np] = i, q->pneq[np] = 0, last = pk, np++;
            }
            q->pneq[np - 1] += !(q->ks[i].key & 1);
        }
        if (q->bst[k] < 0) q->bst[k] = i;
        if (np > q->fp[k]) q->pend[np - 1] = q->bst[k];
        /* the joint rows at the island's head (an island of one part: its own) */
        int h = q->isl[k];
        while (h < i && !(q->ks[h].key & 1)) h++;
        q->isl_neq[k] = h - q->isl[k];
        if (i - q->isl[k] > biggest) biggest = i - q->isl[k];
    }
    q->isl[q->nisl] = n;
    q->fp[q->nisl] = np;
    qp_reserve_system(q, biggest);
    q->parted = true;
}

/* join the parts of row i's bodies (both dynamic; sa, sb the island's); the joined part is to be solved again */
static void qp_split_union(struct qp_state *q, const int *sa, const int *sb, int i)
{
    const int a = sa[i], b = sb[i];
    if (a < 0 || b < 0) return;
    const int ra = qp_root(q->par, a), rb = qp_root(q->par, b);
    if (ra != rb) q->par[ra] = rb, q->sdirty[rb] = 1;
}

/* one part, rows [lo, lo + m) of the island, solved where it lies; its forces into sf, sw (and g, t1,
 * t2 in place) */
static int qp_part_solve(imp_world *w, int lo, int m, int meq, const double *bn, double *g, bool impulse)
{
    struct qp_state *q = w->qp;
    const int neq = q->cur_neq;
    q->c += lo, q->t1 += lo, q->t2 += lo, q->cur_neq = meq;
    const int st = qp_island_solve(w, m, bn + lo, g ? g + 2 * lo : NULL, impulse);
    q->c -= lo, q->t1 -= lo, q->t2 -= lo, q->cur_neq = neq;
    memcpy(q->sf + lo, q->f, sizeof(double) * (size_t)m);
    memcpy(q->sw + lo, q->wv, sizeof(double) * (size_t)m);
    return st;
}

/* The step's frictionless dense parts of island k solved chunk by chunk (parts fp[k] + P c / PAR_CHUNKS
 * onwards for chunk c), each with the chunk's own A, vectors and LCP workspace: a part's solve is the
 * same whichever thread runs it (qp_island_solve's for a part of at most dense_max rows without
 * friction). pdone marks the parts solved here; the others are left to the caller. */
typedef struct qp_parts_job { struct qp_state *q; int k, base; const double *bn; bool dense_ok; } qp_parts_job;

QP_INLINE void qp_parts_part_body(void *ctx, int chunk)
{
    const qp_parts_job *jb = ctx;
    struct qp_state *q = jb->q;
    const int p0 = q->fp[jb->k], np = q->fp[jb->k + 1] - p0;
    int lo_p, hi_p;
    par_range(np, chunk, &lo_p, &hi_p);
    lo_p += p0, hi_p += p0;
    struct qp_chunk *ch = &q->chunk[chunk];
    for (int p = lo_p; p < hi_p; p++) {
        const int lo = q->pst[p] - jb->base, m = q->pend[p] - q->pst[p];
        q->pdone[p] = jb->dense_ok && m <= q->dense_max;
        if (!q->pdone[p]) continue;
        if (m > ch->cap) {
            ch->cap = m + m / 2 + 16;
            free(ch->A), free(ch->f), free(ch->wv), free(ch->arow);
            ch->A = ids_grow(NULL, sizeof(double), (size_t)ch->cap * (size_t)ch->cap);
            ch->f = ids_grow(NULL, sizeof(double), (size_t)ch->cap);
            ch->wv = ids_grow(NULL, sizeof(double), (size_t)ch->cap);
            ch->arow = ids_grow(NULL, sizeof(qp_arow), (size_t)ch->cap);
        }
        const qp_contact *cs = q->c + lo;
        qp_amatrix_into(q, cs, m, ch->A, ch->arow);
        for (int i = 0; i < m; i++) ch->f[i] = cs[i].force;
        imp_lcp_solve_guess(m, q->pneq[p], ch->A, jb->bn + lo, ch->f, ch->f, ch->wv, &q->pinfo[p], &ch->lcp);
        memcpy(q->sf + lo, ch->f, sizeof(double) * (size_t)m);
        memcpy(q->sw + lo, ch->wv, sizeof(double) * (size_t)m);
    }
}
QP_TWICE(qp_parts_part)

/* the bridges' w (rows with srow < 0) from the bodies' acceleration changes in dv, dw, chunk by chunk
 * (each row on its own: par_for gives the same numbers). Deferred (defer: the rows [lo, n), every one a
 * bridge, not yet evaluated): each is placed (unless place is false: placed already) and takes its b
 * (qp_eval_one, into bn) first, its force 0 and d'' (w) go into the contact as the solve's result, and
 * the chunk's largest |b| into bmax[chunk] */
typedef struct qp_bridge_job {
    struct qp_state *q;
    int lo, n;
    const int *sa, *sb;
    double *bn;
    bool defer, place;
    double bmax[PAR_CHUNKS];
} qp_bridge_job;

QP_INLINE void qp_bridge_part_body(void *ctx, int chunk)
{
    qp_bridge_job *jb = ctx;
    struct qp_state *q = jb->q;
    int lo, hi;
    par_range(jb->n - jb->lo, chunk, &lo, &hi);
    lo += jb->lo, hi += jb->lo;
    double bmax = 0;
    for (int i = lo; i < hi; i++) {
        if (q->srow[i] >= 0) continue;
        qp_contact *c = &q->c[i];
        if (jb->defer) {
            jb->bn[i] = qp_eval_one(q, c, jb->place);
            bmax = qp_larger(bmax, fabs(jb->bn[i]));
        }
        double wi = jb->bn[i];
        for (int side = 0; side < 2; side++) {
            const int X = side ? jb->sb[i] : jb->sa[i];
            if (X < 0) continue;
            imp_vec3 lin, ang;
            qp_jac(c, c->n, side, &lin, &ang);
            const double v = v3_dot(lin, q->dv[X]) + v3_dot(ang, q->dw[X]);
            wi += side ? -v : v;
        }
        q->sw[i] = wi;
        if (jb->defer) q->sf[i] = 0, c->force = 0, c->accel = wi;
    }
    jb->bmax[chunk] = bmax;
}
QP_TWICE(qp_bridge_part)

/* The bridges' check: every bridge row (srow < 0) gets f = 0 (and no friction) and its w from the
 * forces of the parts in the bodies: each body's force F and torque T summed (dv, dw hold them), then
 * its acceleration change F / m, I^-1 T. A bridge with w < -tol joins its parts (qp_split_union).
 * True when none was violated. Deferred (dj->defer, frictionless): the rows [dj->lo, n) are the
 * bridges, evaluated in the pass that takes their w, and tol is QP_SPLIT_TOL of the largest |b|, bmax
 * of the other rows given and the bridges' own; *tol is set. */
static bool qp_bridges(struct qp_state *q, int n, const int *sa, const int *sb, const int *body, int nbody,
                       double *bn, double *g, double *tol, qp_bridge_job *dj)
{
    const qp_contact *c0 = q->c;
    imp_vec3 *t1 = q->t1, *t2 = q->t2;
    const int nforce = dj && dj->defer ? dj->lo : n; /* the rows that may carry force */
    for (int k = 0; k < nbody; k++) q->dv[body[k]] = q->dw[body[k]] = v3(0, 0, 0);
    for (int i = 0; i < nforce; i++) {
        const qp_contact *c = &c0[i];
        if (q->srow[i] < 0) {
            q->sf[i] = 0;
            if (g) g[2 * i] = g[2 * i + 1] = 0, v3_basis(c->n, &t1[i], &t2[i]);
            continue;
        }
        const double fi = q->sf[i], g0 = g ? g[2 * i] : 0, g1 = g ? g[2 * i + 1] : 0;
        if (fi == 0 && g0 == 0 && g1 == 0) continue;
        for (int side = 0; side < 2; side++) {
            const int X = side ? sb[i] : sa[i];
            if (X < 0) continue;
            const double sg = side ? -1 : 1;
            imp_vec3 lin, ang;
            qp_jac(c, c->n, side, &lin, &ang);
            imp_vec3 F = v3_scale(lin, sg * fi), T = v3_scale(ang, sg * fi);
            if (g0 != 0 || g1 != 0) {
                qp_jac(c, v3_add(v3_scale(t1[i], g0), v3_scale(t2[i], g1)), side, &lin, &ang);
                F = v3_add(F, v3_scale(lin, sg)), T = v3_add(T, v3_scale(ang, sg));
            }
            q->dv[X] = v3_add(q->dv[X], F), q->dw[X] = v3_add(q->dw[X], T);
        }
    }
    for (int k = 0; k < nbody; k++) {
        const int X = body[k];
        q->dv[X] = v3_scale(q->dv[X], q->b[X].im), q->dw[X] = m3_mul_v(q->b[X].Iinv, q->dw[X]);
    }
    qp_bridge_job own = {q, 0, n, sa, sb, bn, false, false, {0}};
    qp_bridge_job *jb = dj ? dj : &own;
    jb->q = q, jb->n = n, jb->sa = sa, jb->sb = sb, jb->bn = bn;
    qp_par_chunks(QP_PICK(qp_bridge_part), jb, n - jb->lo);
    if (jb->defer) {
        double bmax = *tol;
        for (int chunk = 0; chunk < PAR_CHUNKS; chunk++) bmax = qp_larger(bmax, jb->bmax[chunk]);
        *tol = QP_SPLIT_TOL * bmax;
    }
    bool violated = false;
    for (int i = jb->lo; i < n; i++)
        if (q->srow[i] < 0 && q->sw[i] < -*tol) qp_split_union(q, sa, sb, i), violated = true;
    return !violated;
}

/* whether island k is solved by parts: the step's parts, more than one or with bridges */
static bool qp_island_split(const struct qp_state *q, int k)
{
    return q->parted && !(q->fp[k + 1] - q->fp[k] == 1 && q->bst[k] == q->isl[k + 1]);
}

/* island k, [0, n) (placed), as qp_island_solve, by parts: forces into q->f, w into q->wv (rows [0,
 * *nresult); with defer the bridges' results may instead be in their contacts: see qp_bridges), friction into
 * g (first guess in: the contacts' forces). First the step's parts (qp_parts), each solved in place;
 * when a bridge is violated, the parts again by union-find, joined, the joined ones solved with their
 * rows copied to the front of c2, until no bridge is violated. */
static int qp_split_solve(imp_world *w, int k, int n, double *bn, double *g, bool impulse, bool defer, bool place,
                          int *nresult)
{
    struct qp_state *q = w->qp;
    *nresult = n;
    if (!qp_island_split(q, k)) return qp_island_solve(w, n, bn, g, impulse); /* one part: the island as it is */
    qp_contact *const c0 = q->c;
    imp_vec3 *const t1 = q->t1, *const t2 = q->t2;
    const int base = q->isl[k];
    const int *const sa = q->sa + base, *const sb = q->sb + base;
    int *const part = q->cnt; /* per root body: its part (-1: none yet) */
    qp_split_reserve(q, n);
    const int nb = w->bodies->ids.count;
    if (nb > q->dvcap) {
        q->dvcap = nb + nb / 2 + 16;
        q->dv = ids_grow(q->dv, sizeof(imp_vec3), q->dvcap);
        q->dw = ids_grow(q->dw, sizeof(imp_vec3), q->dvcap);
    }
    /* the island's bodies once each (sbody): marked -1, then listed at their first -1 (-3: listed) */
    int nbody = 0;
    for (int i = 0; i < n; i++) {
        if (sa[i] >= 0) part[sa[i]] = -1;
        if (sb[i] >= 0) part[sb[i]] = -1;
    }
    for (int i = 0; i < n; i++) {
        const int a = sa[i], b = sb[i];
        if (a >= 0 && part[a] == -1) part[a] = -3, q->sbody[nbody++] = a;
        if (b >= 0 && part[b] == -1) part[b] = -3, q->sbody[nbody++] = b;
    }
    for (int j = 0; j < nbody; j++) part[q->sbody[j]] = -1;
    /* the bridges' b, when deferred, comes with their w (qp_bridges); tol then too */
    const int nbridge0 = q->bst[k] - base;
    double bmax = 0;
    for (int i = 0; i < (defer ? nbridge0 : n); i++) bmax = qp_larger(bmax, fabs(bn[i]));
    double tol = defer ? bmax : QP_SPLIT_TOL * bmax;
    qp_bridge_job dj = {q, nbridge0, n, NULL, NULL, bn, true, place, {0}};
    int status = 0;
    /* the step's parts, in place: the frictionless dense ones in chunks on both threads, then the
     * others, and every part's status and info taken in part order (as one after the other) */
    qp_parts_job pj = {q, k, base, bn, g == NULL && !impulse};
    qp_par_chunks(QP_PICK(qp_parts_part), &pj, n);
    for (int p = q->fp[k]; p < q->fp[k + 1]; p++) {
        const int lo = q->pst[p] - base, m = q->pend[p] - q->pst[p];
        for (int i = lo; i < lo + m; i++) q->srow[i] = p - q->fp[k];
        int st;
        if (q->pdone[p]) st = q->pinfo[p].status, q->info = q->pinfo[p];
        else st = qp_part_solve(w, lo, m, q->pneq[p], bn, g, impulse);
        if (st) status = st;
    }
    for (int i = nbridge0; i < n; i++) q->srow[i] = -1;
    if (qp_bridges(q, n, sa, sb, q->sbody, nbody, bn, g, &tol, defer ? &dj : NULL)) {
        if (defer) *nresult = nbridge0; /* the bridges' results are in their contacts */
    } else {
        /* the parts by union-find: the step's parts, then the violated bridges joined (dirty) */
        for (int j = 0; j < nbody; j++) q->par[q->sbody[j]] = q->sbody[j], q->sdirty[q->sbody[j]] = 0;
        for (int i = 0; i < n; i++)
            if (q->srow[i] >= 0 && sa[i] >= 0 && sb[i] >= 0) {
                const int ra = qp_root(q->par, sa[i]), rb = qp_root(q->par, sb[i]);
                if (ra != rb) q->par[ra] = rb;
            }
        for (int i = 0; i < n; i++)
            if (q->srow[i] < 0 && q->sw[i] < -tol) qp_split_union(q, sa, sb, i);
        for (;;) {
            /* again, from the forces found */
            if (!impulse)
                for (int i = 0; i < n; i++) c0[i].force = q->sf[i];
            /* parts: each row's, by the root of its dynamic bodies (-1: a bridge); sroot: each part's root */
            int nparts = 0;
            for (int i = 0; i < n; i++) {
                const int a = sa[i], b = sb[i];
                const int ra = a >= 0 ? qp_root(q->par, a) : -1, rb = b >= 0 ? qp_root(q->par, b) : -1;
                if (ra >= 0 && rb >= 0 && ra != rb) { q->srow[i] = -1; continue; }
                const int r = ra >= 0 ? ra : rb;
                if (part[r] < 0) q->sroot[nparts] = r, part[r] = nparts++;
                q->srow[i] = part[r];
            }
            for (int j = 0; j < nparts; j++) part[q->sroot[j]] = -1; /* (part ids are per round) */
            /* rows by part, each part's joint rows first, then each part whose bodies were joined since
             * it was last solved, with its rows copied to the front of c2 */
            int *start = q->sstart;
            memset(start, 0, sizeof(int) * (size_t)(nparts + 2));
            for (int i = 0; i < n; i++)
                if (q->srow[i] >= 0) start[q->srow[i] + 2]++;
            for (int j = 0; j < nparts; j++) start[j + 2] += start[j + 1];
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < n; i++)
                    if (q->srow[i] >= 0 && c0[i].eq == (pass == 0)) q->sidx[start[q->srow[i] + 1]++] = i;
            for (int j = 0; j < nparts; j++) {
                if (!q->sdirty[q->sroot[j]]) continue; /* its rows' forces are last round's */
                q->sdirty[q->sroot[j]] = 0;
                const int lo = start[j], m = start[j + 1] - lo;
                const int *idx = q->sidx + lo;
                int meq = 0;
                for (int r = 0; r < m; r++) {
                    const int i = idx[r];
                    q->c2[r] = c0[i];
                    q->sbn[r] = bn[i];
                    meq += c0[i].eq;
                    if (g) q->sg[2 * r] = g[2 * i], q->sg[2 * r + 1] = g[2 * i + 1];
                }
                q->c = q->c2, q->t1 = q->st1, q->t2 = q->st2, q->cur_neq = meq;
                const int st = qp_island_solve(w, m, q->sbn, g ? q->sg : NULL, impulse);
                if (st) status = st;
                q->c = c0, q->t1 = t1, q->t2 = t2, q->cur_neq = q->isl_neq[k];
                for (int r = 0; r < m; r++) {
                    const int i = idx[r];
                    q->sf[i] = q->f[r], q->sw[i] = q->wv[r];
                    if (g) g[2 * i] = q->sg[2 * r], g[2 * i + 1] = q->sg[2 * r + 1], t1[i] = q->st1[r], t2[i] = q->st2[r];
                }
            }
            if (qp_bridges(q, n, sa, sb, q->sbody, nbody, bn, g, &tol, NULL)) break;
        }
    }
    memcpy(q->f, q->sf, sizeof(double) * (size_t)*nresult);
    memcpy(q->wv, q->sw, sizeof(double) * (size_t)*nresult);
    q->info.status = status;
    return status;
}

/* ---- inside every derivative evaluation ------------------------------------------------------------ */

/* dX holds the derivative with the external forces; add the resting contact forces of the step's
 * contact set at state X */
int qp_deriv(imp_world *w, const double *X, double *dX)
{
    struct qp_state *q = w->qp;
    if (!q || q->count == 0) return 0;
    qp_bodies(w, X, dX);
    /* the first evaluation of a step is at the state the contacts were placed at (qp_advance's X0):
     * placing them again would give the same numbers */
    const bool placed = q->placed && !memcmp(X, q->dx, sizeof(double) * BODY_DIM * (size_t)w->bodies->ids.count);
    q->placed = false;
    if (q->friction > 0) {
        qp_friction_reserve_contacts(q, q->count);
        if (!q->warm) memset(q->g, 0, sizeof(double) * 2 * (size_t)q->count); /* else: the last evaluation's */
        q->warm = true;
    }
    if (q->count > q->ballcap) {
        q->ballcap = q->count + q->count / 2 + 16;
        free(q->ball);
        q->ball = ids_grow(NULL, sizeof(double), (size_t)q->ballcap);
    }
    /* frictionless islands solved by parts: their bridges are evaluated with their check (qp_bridges),
     * after the parts' solves; every other contact now */
    const bool defer = q->friction == 0;
    int *eend = NULL, neval = q->count;
    if (defer) {
        if (q->nisl > q->eendcap) {
            q->eendcap = q->nisl + q->nisl / 2 + 16;
            free(q->eend);
            q->eend = ids_grow(NULL, sizeof(int), (size_t)q->eendcap);
        }
        eend = q->eend, neval = 0;
        for (int k = 0; k < q->nisl; k++) {
            eend[k] = qp_island_split(q, k) ? q->bst[k] : q->isl[k + 1];
            neval += eend[k] - q->isl[k];
        }
    }
    qp_eval_job jb = {q, neval, !placed, eend};
    qp_par_chunks(QP_PICK(qp_eval_part), &jb, neval);
    for (int k = 0; k < q->nisl; k++) {
        const int n = qp_island_begin(q, k);
        int nres;
        qp_split_solve(w, k, n, q->ball + q->isl[k], q->friction > 0 ? q->g : NULL, false, defer, !placed, &nres);
        if (q->friction > 0) {
            for (int i = 0; i < n; i++) {
                const qp_contact *c = &q->c[i];
                imp_vec3 G = v3_add(v3_scale(q->t1[i], q->g[2 * i]), v3_scale(q->t2[i], q->g[2 * i + 1]));
                q->c[i].tforce = G;
                if (c->ka >= 0 && q->b[c->ka].dyn) {
                    v3_accum(dX + BODY_DIM * c->ka + 7, G);
                    v3_accum(dX + BODY_DIM * c->ka + 10, v3_cross(c->ra, G));
                }
                if (c->kb >= 0 && q->b[c->kb].dyn) {
                    v3_accum(dX + BODY_DIM * c->kb + 7, v3_scale(G, -1));
                    v3_accum(dX + BODY_DIM * c->kb + 10, v3_cross(c->rb, v3_scale(G, -1)));
                }
            }
        }
        q->solves++;
        qp_copy_job cj = {q, nres, 1};
        qp_par_chunks(qp_copy_part, &cj, nres);
        qp_apply(w, nres, q->f, dX); /* (the others' forces are 0) */
        qp_island_end(q, k);
    }
    return 0;
}

/* ---- collisions: simultaneous impulses (S2 section 8) ---------------------------------------------- */

/* solve and apply the impulses over contacts [0, n) that are placed at the store's state; e_i is
 * `e` for contacts with d' < -bounce and 0 for the others. Returns the LCP status. */
static int qp_impulses(imp_world *w, double e, double bounce)
{
    struct qp_state *q = w->qp;
    int status = 0;
    if (q->friction > 0) qp_friction_reserve_contacts(q, q->count);
    qp_islands(w, false);
    for (int k = 0; k < q->nisl; k++) {
        const int n = qp_island_begin(q, k);
        for (int i = 0; i < n; i++) {
            double vm = q->c[i].dd;
            q->bv[i] = (1 + (vm < -bounce && !q->c[i].eq ? e : 0)) * vm; /* joints: v+ = 0 */
        }
        if (q->friction > 0) memset(q->gi, 0, sizeof(double) * 2 * (size_t)n);
        if (qp_island_solve(w, n, q->bv, q->friction > 0 ? q->gi : NULL, true)) status = q->info.status;
        for (int i = 0; i < n; i++) {
            qp_contact *c = &q->c[i];
            c->force = q->f[i];
            /* the normal row's impulse f (lin, ang) per side, and the friction impulse at the point */
            c->tforce = q->friction > 0 && !c->eq ? v3_add(v3_scale(q->t1[i], q->gi[2 * i]), v3_scale(q->t2[i], q->gi[2 * i + 1])) : v3(0, 0, 0);
            for (int side = 0; side < 2; side++) {
                int X = side ? c->kb : c->ka;
                if (X < 0 || !q->b[X].dyn) continue;
                imp_vec3 lin, ang;
                qp_jac(c, c->n, side, &lin, &ang);
                double sg = side ? -q->f[i] : q->f[i];
                imp_vec3 T = side ? v3_scale(c->tforce, -1) : c->tforce;
                double *s = w->bodies->state + BODY_DIM * X;
                v3_accum(s + 7, v3_add(v3_scale(lin, sg), T));
                v3_accum(s + 10, v3_add(v3_scale(ang, sg), v3_cross(side ? c->rb : c->ra, T)));
            }
        }
        qp_island_end(q, k);
    }
    /* the velocities after, for the caller */
    qp_bodies(w, w->bodies->state, NULL);
    for (int i = 0; i < q->count; i++) qp_place(q, &q->c[i]);
    q->info.status = status;
    return status;
}

/* leave out the separating contacts: d' > hi, unless they still penetrate (d < 0), where the
 * extra acceleration is what pushes them apart and must stay in the solve until d >= 0 */
static int qp_filter(struct qp_state *q, double hi, bool *colliding)
{
    int k = 0;
    bool any = false;
    for (int i = 0; i < q->count; i++)
        if (q->c[i].eq || q->c[i].dd <= hi || q->c[i].d < 0) {
            /* colliding: approaching faster than hi (joints drifting apart in velocity are projected back too) */
            any = any || (q->c[i].eq ? fabs(q->c[i].dd) > IMP_QP_RESTING_SPEED : q->c[i].dd < -hi);
            if (k != i) q->c[k] = q->c[i];
            k++;
        }
    if (colliding) *colliding = any;
    if (k != q->count) q->warm = false;
    q->count = k;
    return k;
}

/* the speeds below which an impact does not bounce, and below which a contact rests, at step h */
static double qp_bounce_speed(const imp_world *w, double h) { return IMP_QP_BOUNCE_STEPS * v3_len(w->settings.gravity) * h; }
static double qp_resting_speed(const imp_world *w, double h) { return fmin(IMP_QP_RESTING_SPEED, qp_bounce_speed(w, h)); }

/* start of a step in QP mode: gather the contacts, resolve the colliding ones with simultaneous
 * impulses, and keep the resting set for the derivative evaluations of the step */
void qp_begin_step(imp_world *w, double h)
{
    struct qp_state *q = qp_get(w);
    q->h = h;
    qp_gather(w);
    const double resting = qp_resting_speed(w, h);
    bool colliding;
    qp_filter(q, resting, &colliding); /* separating contacts are left out; any colliding among the rest? */
    if (colliding) {
        qp_impulses(w, q->restitution, qp_bounce_speed(w, h));
        qp_filter(q, resting, NULL); /* bounced contacts now separate */
        for (int i = 0; i < q->count; i++) q->c[i].force = 0; /* impulses are no first guess for forces */
    }
    qp_islands(w, true);
    /* friction warm start across steps: the same contacts in the same order (ids of both sides per
     * point, after the island sort) keep last step's friction forces as the first guess */
    uint64_t sig = 1469598103934665603ull ^ (uint64_t)q->count;
    for (int i = 0; i < q->count; i++) {
        sig = (sig ^ q->c[i].ida.index) * 1099511628211ull;
        sig = (sig ^ q->c[i].idb.index ^ ((uint64_t)q->c[i].eq << 40)) * 1099511628211ull;
    }
    q->warm = sig == q->sig && q->gcap >= q->count;
    q->sig = sig;
}

/* ---- queries --------------------------------------------------------------------------------------- */

int imp_qp_gather(imp_world *w) { return qp_gather(w); }

/* the gathered contacts' material points (fixed in A and in B) and normals placed again at the
 * current state, without a new collision pass: d(t) and d'(t) of the same points (specs
 * differentiate them in time to check b) */
void imp_qp_replace(imp_world *w)
{
    struct qp_state *q = qp_get(w);
    qp_reserve(q, q->count, w->bodies->ids.count);
    qp_bodies(w, w->bodies->state, NULL);
    for (int i = 0; i < q->count; i++) qp_place(q, &q->c[i]);
}
int imp_qp_count(const imp_world *w) { return w->qp ? w->qp->count : 0; }

void imp_qp_contact(const imp_world *w, int i, imp_qp_contact_info *out)
{
    const qp_contact *c = &w->qp->c[i];
    out->a = c->ida, out->b = c->idb;
    out->point = c->p, out->normal = c->n;
    out->separation = c->d, out->velocity = c->dd;
    out->force = c->force, out->acceleration = c->accel;
    out->friction = c->tforce;
    out->edge = c->edge;
    out->joint = c->eq;
}

/* A and the exact b at the store's state for the gathered contacts; A n x n row-major */
void imp_qp_system(imp_world *w, double *A, double *b)
{
    struct qp_state *q = qp_get(w);
    int n = q->count;
    qp_reserve(q, n, w->bodies->ids.count);
    double *dX = q->dx;
    qp_external(w, dX);
    qp_bodies(w, w->bodies->state, dX);
    for (int i = 0; i < n; i++) qp_place(q, &q->c[i]);
    qp_amatrix(q, n, A);
    qp_bvector(q, n, b);
}

/* d'' of the gathered contacts when contact forces f act (an independent path to A f + b: the
 * forces go into the bodies' F and tau, the bodies' accelerations follow, and d'' is measured) */
void imp_qp_accelerations(imp_world *w, const double *f, double *dd)
{
    struct qp_state *q = qp_get(w);
    int n = q->count;
    qp_reserve(q, n, w->bodies->ids.count);
    double *dX = q->dx;
    qp_external(w, dX);
    qp_bodies(w, w->bodies->state, NULL);
    for (int i = 0; i < n; i++) qp_place(q, &q->c[i]);
    qp_apply(w, n, f, dX);
    qp_bodies(w, w->bodies->state, dX);
    qp_bvector(q, n, dd); /* with the contact forces inside the bodies' accelerations */
}

/* the exact contact forces at the store's state for the gathered contacts; stores force and d'' */
int imp_qp_solve(imp_world *w, imp_lcp_info *info)
{
    struct qp_state *q = qp_get(w);
    int n = q->count;
    if (n == 0) { if (info) memset(info, 0, sizeof *info); return 0; }
    qp_reserve(q, n, w->bodies->ids.count);
    double *dX = q->dx;
    qp_external(w, dX);
    qp_bodies(w, w->bodies->state, dX);
    for (int i = 0; i < n; i++) qp_place(q, &q->c[i]);
    qp_islands(w, false);
    int st = 0;
    for (int k = 0; k < q->nisl; k++) {
        const int m = qp_island_begin(q, k);
        qp_bvector(q, m, q->bv);
        for (int i = 0; i < m; i++) q->c[i].force = 0;
        if (qp_island_solve(w, m, q->bv, NULL, false)) st = q->info.status;
        for (int i = 0; i < m; i++) q->c[i].force = q->f[i], q->c[i].accel = q->wv[i], q->c[i].tforce = v3(0, 0, 0);
        qp_island_end(q, k);
    }
    q->info.status = st;
    if (info) *info = q->info;
    return st;
}

/* simultaneous collision impulses over the gathered contacts that approach or rest (d' <= threshold),
 * restitution e; applied to the bodies. The gathered set keeps only those contacts. */
int imp_qp_collide(imp_world *w, double e, imp_lcp_info *info)
{
    struct qp_state *q = qp_get(w);
    qp_bodies(w, w->bodies->state, NULL);
    for (int i = 0; i < q->count; i++) qp_place(q, &q->c[i]);
    const double h = q->h; /* the last step's (0 before any: no cutoff) */
    qp_filter(q, qp_resting_speed(w, h), NULL);
    int st = q->count ? qp_impulses(w, e, qp_bounce_speed(w, h)) : 0;
    if (info) *info = q->info;
    return st;
}

/* ---- the step in QP mode, with time of impact (S2, S0 section 8) ----------------------------------- */

static bool qp_dynamic_pair(const imp_world *w, const imp_contact *mc)
{
    int ka = imp_id_is_null(mc->a.body) ? -1 : ids_lookup(&w->bodies->ids, mc->a.body);
    int kb = imp_id_is_null(mc->b.body) ? -1 : ids_lookup(&w->bodies->ids, mc->b.body);
    return (ka >= 0 && w->bodies->body[ka].motion == IMP_DYNAMIC) || (kb >= 0 && w->bodies->body[kb].motion == IMP_DYNAMIC);
}

static int qp_cmp_key(const void *x, const void *y)
{
    const struct qp_start_point *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Time of impact: which penetration is an impact. The resting set of a (sub)step is held by the LCP
 * (d'' >= 0 with the extra acceleration), so its points cannot be the step's impacts; any other point
 * found penetrating at a trial state is, whether its pair is new or already touched at the start (a
 * box rocking onto a further corner, an edge swinging onto a face). The manifolds are rebuilt at
 * every trial state and their point ids renumbered, so points are matched by position on the bodies:
 * a trial point is one of the resting set's when it lies within IMP_QP_SAME_POINT of a start point of
 * the same pair, in A's body frame (a corner of A, wherever it slides on B) or in B's (a corner of B
 * under A). A clipped point that slides in both frames (an edge crossing an edge, a rolling sphere's
 * point) is new, but it stays at its pair's start penetration: the depth that counts is the growth
 * over the deepest start penetration of the pair's resting points, max(0, -d), so sliding and rolling
 * contacts, and a deep pair being pushed out, cannot be taken for impacts. A matched point counts by
 * its depth beyond its resting point's own penetration now (the material points placed at the trial
 * state; zero once that point separated): the manifold may see a depth the LCP's material point does
 * not (a vertex slid off the face it rested on). */

/* remember the resting set's points in both body frames, sorted by pair (after qp_begin_step) */
static void qp_depths_record(imp_world *w)
{
    struct qp_state *q = w->qp;
    if (q->count > q->pdcap) {
        q->pdcap = q->count + q->count / 2 + 16;
        q->pd = ids_grow(q->pd, sizeof *q->pd, q->pdcap);
    }
    qp_keyed_reserve(q, q->count);
    int n = 0;
    for (int i = 0; i < q->count; i++)
        if (!q->c[i].eq) q->ks[n++] = (struct qp_keyed){q->c[i].key, i};
    if (n > 1) qp_sort_keyed(q, n);
    for (int k = 0; k < n; k++) {
        const int i = q->ks[k].idx;
        const qp_contact *c = &q->c[i];
        q->pd[k] = (struct qp_start_point){c->key, c->ka, c->kb, i, c->la, c->lb, fmax(0, -c->d), 0};
    }
    q->npd = n;
}

/* a point in body k's frame at the kinematics qp_bodies placed (k < 0: the world) */
static imp_vec3 qp_body_frame(const struct qp_state *q, int k, imp_vec3 p)
{
    if (k < 0) return p;
    return m3_mul_tv(q->b[k].R, v3_sub(p, q->b[k].x));
}

/* the largest penetration growth of a point not in the start's resting set over the manifolds of
 * chunk `chunk` (each manifold on its own: the chunks may run on both threads, par_for), into m[chunk] */
typedef struct qp_depth_job { imp_world *w; bool joined; double m[PAR_CHUNKS]; } qp_depth_job;

static void qp_depth_part(void *ctx, int chunk)
{
    qp_depth_job *jb = ctx;
    imp_world *w = jb->w;
    const struct qp_state *q = w->qp;
    const double tol2 = IMP_QP_SAME_POINT * IMP_QP_SAME_POINT;
    double m = 0;
    int k0, k1;
    par_range(w->contacts->manifold_count, chunk, &k0, &k1);
    for (int k = k0; k < k1; k++) {
        const imp_contact *mc = &w->contacts->manifolds[k].c;
        if (!qp_dynamic_pair(w, mc)) continue;
        if (jb->joined && !imp_id_is_null(mc->a.body) && !imp_id_is_null(mc->b.body) &&
            joints_connected(w, ids_lookup(&w->bodies->ids, mc->a.body), ids_lookup(&w->bodies->ids, mc->b.body)))
            continue; /* joined bodies do not touch */
        struct qp_start_point want = {.key = qp_pair_key(mc)};
        int lo = 0, hi = q->npd;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (qp_cmp_key(&q->pd[mid], &want) < 0) lo = mid + 1; else hi = mid;
        }
        int end = lo;
        double base = 0;
        while (end < q->npd && q->pd[end].key == want.key) base = qp_larger(base, q->pd[end++].pen);
        for (int i = 0; i < mc->count; i++) {
            if (mc->depth[i] <= m) continue; /* growth is at most the depth */
            bool old = false;
            double seen = 0; /* what the resting set holds of it (a separated resting point: nothing) */
            if (end > lo) {
                /* the start's A and B sides (the pair may come back with its sides swapped) */
                int ka = q->pd[lo].ka, kb = q->pd[lo].kb;
                int ta = imp_id_is_null(mc->a.body) ? -1 : ids_lookup(&w->bodies->ids, mc->a.body);
                imp_vec3 on_a = mc->points[i], on_b = v3_add(on_a, v3_scale(mc->normal, mc->depth[i]));
                if (ta != ka) { imp_vec3 t = on_a; on_a = on_b, on_b = t; }
                imp_vec3 pa = qp_body_frame(q, ka, on_a), pb = qp_body_frame(q, kb, on_b);
                for (int j = lo; j < end; j++)
                    if (v3_dot(v3_sub(pa, q->pd[j].la), v3_sub(pa, q->pd[j].la)) < tol2 ||
                        v3_dot(v3_sub(pb, q->pd[j].lb), v3_sub(pb, q->pd[j].lb)) < tol2)
                        old = true, seen = qp_larger(seen, q->pd[j].now);
            }
            m = qp_larger(m, mc->depth[i] - (old ? seen : base));
        }
    }
    jb->m[chunk] = m;
}

/* the largest penetration growth of a point not in the start's resting set (0 when none): the
 * chunks' largest, a maximum whatever the order */
static double qp_max_depth(imp_world *w)
{
    struct qp_state *q = w->qp;
    /* the resting points' own penetrations now (their material points placed at the trial state) */
    qp_bodies(w, w->bodies->state, NULL);
    qp_sep_job jb = {q, q->npd};
    qp_par_chunks(QP_PICK(qp_sep_part), &jb, q->npd);
    qp_depth_job dj = {w, joints_count(w) > 0, {0}}; /* joints_prepare ran in this step's gather */
    qp_par_chunks(qp_depth_part, &dj, w->contacts->manifold_count);
    double m = 0;
    for (int chunk = 0; chunk < PAR_CHUNKS; chunk++) m = qp_larger(m, dj.m[chunk]);
    return m;
}

/* (with no bodies the arrays may be NULL, which memcpy must not see even for 0 bytes) */
static void qp_save(imp_world *w, double *X)
{
    if (w->bodies->ids.count) memcpy(X, w->bodies->state, sizeof(double) * BODY_DIM * (size_t)w->bodies->ids.count);
}
static void qp_restore(imp_world *w, const double *X)
{
    if (w->bodies->ids.count) memcpy(w->bodies->state, X, sizeof(double) * BODY_DIM * (size_t)w->bodies->ids.count);
}

/* One step of length dt in QP mode:
 *
 *   loop (at most IMP_QP_MAX_IMPACTS times):
 *     impulses for colliding contacts, the resting set (qp_begin_step)
 *     integrate the remaining time with the contact forces in every evaluation
 *     collide; if the deepest new penetration exceeds the allowance, find the time of impact by
 *     regula falsi on the penetration depth (S2: g(t) = depth(t) - target, with the Illinois
 *     modification so that one end cannot stick), re-integrate to it, and go round again
 *
 * Depth is the new penetration: any point the (sub)step's resting set does not hold (qp_max_depth);
 * the allowance is IMP_QP_TOI_DEPTH. The impact is placed where that depth is between a quarter of
 * the allowance and the allowance: deep enough that the narrow phase reports the touching point (a
 * cut at a depth of 1e-6, where round-off in another pair's growth is the maximum, would resolve
 * nothing and repeat, Zeno-like), shallow enough to be a contact. Contacts are updated at every
 * trial state (begin/end events of the last update are the ones reported). */
#define IMP_QP_TOI_DEPTH 1e-3 /* m: penetration a step may end with before it is cut at the impact */
#define IMP_QP_MAX_IMPACTS 32
#define IMP_QP_TOI_ITERS 12

/* The bodies' ODE over span, in pieces in which no body turns more than QP_MAX_TURN rad. A body spinning
 * fast turns its contact and joint points around it within one step; the resting forces are solved at
 * every stage of the solver, and an explicit stage that turns a point 1.7 rad (100 rad/s at 1/60 s)
 * evaluates the constraints far from where the body goes: a pinned top at that spin gained energy
 * without bound. Pieces of at most 0.5 rad keep it to the accuracy of slow bodies; bodies that turn
 * slowly take the one piece. */
#define QP_MAX_TURN 0.5
static int qp_integrate(imp_world *w, imp_ode_system *sys, imp_ode_solver *solver, double t, double span)
{
    double spin = 0;
    for (int i = 0; i < w->bodies->ids.count; i++) {
        const body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC) continue;
        const double *X = w->bodies->state + BODY_DIM * i;
        imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
        spin = fmax(spin, v3_len(m3_mul_v(m3_rotate_tensor(R, b->Ibody_inv), v3_load(X + 10))));
    }
    int pieces = spin * span > QP_MAX_TURN ? (int)ceil(spin * span / QP_MAX_TURN) : 1;
    if (pieces > 64) pieces = 64;
    for (int k = 0; k < pieces; k++) {
        int rc = imp_ode_advance(sys, solver, t + span * k / pieces, span / pieces);
        if (rc) return rc;
    }
    return 0;
}

static int qp_advance(imp_world *w, imp_ode_solver *solver, double dt)
{
    struct qp_state *q = qp_get(w);
    const int nb = w->bodies->ids.count;
    if (nb > q->dxcap) qp_reserve(q, 0, nb);
    body_ode with_contacts = {w, NULL, qp_deriv};
    double t = w->time, left = dt;
    for (int impact = 0; impact <= IMP_QP_MAX_IMPACTS && left > 0; impact++) {
        qp_begin_step(w, dt); /* the extra acceleration acts over the world's step, not a sub-step:
                               * d/(4 h^2) with a sliver of a step would be needlessly stiff */
        qp_depths_record(w);  /* the resting set: every other penetration is an impact */
        double *X0 = q->dx; /* the state after the impulses */
        qp_save(w, X0);
        q->placed = true; /* the contacts are placed at X0 */
        imp_ode_system sys = bodies_ode(&with_contacts);
        int rc = qp_integrate(w, &sys, solver, t, left);
        if (rc) return rc;
        contacts_update(w);
        const double allow = IMP_QP_TOI_DEPTH; /* depths are growth over each pair's start depth */
        double g1 = qp_max_depth(w) - allow;
        if (!(g1 > 0) || impact == IMP_QP_MAX_IMPACTS) break;
        /* regula falsi on g(s) = depth(s) - target, target = allow - 3/8 IMP_QP_TOI_DEPTH, s in [0, left] */
        const double target = allow - 0.375 * IMP_QP_TOI_DEPTH;
        double lo = 0, glo = -target, hi = left, ghi = g1 + allow - target;
        double s = left;
        int side = 0;
        for (int it = 0; it < IMP_QP_TOI_ITERS; it++) {
            s = (ghi != glo) ? lo + (hi - lo) * (-glo) / (ghi - glo) : 0.5 * (lo + hi);
            if (!(s > lo && s < hi)) s = 0.5 * (lo + hi);
            qp_restore(w, X0); /* the resting set gathered at X0 stays */
            sys = bodies_ode(&with_contacts);
            if ((rc = qp_integrate(w, &sys, solver, t, s))) return rc;
            contacts_update(w);
            double ms = qp_max_depth(w), gs = ms - target;
            if (fabs(gs) <= 0.375 * IMP_QP_TOI_DEPTH) break; /* depth within [allow / 4, allow] */
            if (gs > 0) {
                hi = s, ghi = gs;
                if (side == 1) glo *= 0.5; /* Illinois */
                side = 1;
            } else {
                lo = s, glo = gs;
                if (side == -1) ghi *= 0.5;
                side = -1;
            }
        }
        q->impacts++;
        t += s;
        left -= s;
        if (left < 1e-9 * dt) break;
    }
    return 0;
}

long imp_qp_impacts(const imp_world *w) { return w->qp ? w->qp->impacts : 0; }
long imp_qp_solves(const imp_world *w) { return w->qp ? w->qp->solves : 0; }
long imp_qp_fallbacks(const imp_world *w) { return w->qp ? w->qp->pgs : 0; }
void imp_qp_set_dense_max(imp_world *w, int n) { qp_get(w)->dense_max = n < 0 ? 0 : n > IMP_QP_DENSE_LIMIT ? IMP_QP_DENSE_LIMIT : n; }
int imp_qp_dense_max(const imp_world *w) { return w->qp ? w->qp->dense_max : IMP_QP_DENSE_MAX; }

/* the bodies' stage of a step in the exact mode: integrate, cut at each time of impact, damp. Its time-
 * of-impact search collides at every trial state, the last of them the step's final state, so the
 * collide stage of the step is done here (s->collided) */
void qp_step(imp_step *s)
{
    qp_advance(s->w, &s->w->body_solver, s->dt);
    bodies_damp(s->w, s->dt, NULL);
    s->collided = true;
}

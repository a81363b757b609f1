/* particle_contact.c: particles against rigid bodies (both ways) and against each other, the stage after
 * the bodies' in imp_world_step.
 *
 * Order. The particle stage has integrated the particles (and met the static colliders); the bodies'
 * stage has moved the bodies. Here both ends of the step are known: each particle's path from x0 to
 * x1 and each body's poses at the start and at the end. A particle that meets a body gets an impulse
 * and the body the opposite one, into its momentum P and angular momentum L, which it carries into
 * the next step. Particles attached to bodies are put on their points first (particle_attach.c) and
 * are driven (infinite mass) here.
 *
 * Detection.
 *   particle - shape  every shape of every body (static, kinematic, dynamic; a compound shape by
 *                     shape): the particle's path seen from the shape, from x0 mapped by the shape's
 *                     pose at the start to x1 mapped by its pose at the end (particle_shape.c), so
 *                     neither a fast particle nor a fast body lets one pass through the other. The
 *                     candidates: the particles' swept boxes sorted by their lowest x, each shape's
 *                     swept box searched among them (a plane: every particle).
 *   particle - particle  with world.particle_collisions: a grid of cells as wide as the largest reach
 *                     (twice the largest radius and a margin) over the particles' end positions,
 *                     each pair found once, from the first of its two cells (its own cell and 13 of
 *                     the 26 around it); the cells numbered with the axis nearest gravity slowest,
 *                     so the pairs come out from the ground up. A pair is a contact when it ends
 *                     within its reach, or crossed on the way (their closest approach over the
 *                     step). Particles of one cloth or hair meet only when it opts in
 *                     (cloth.self_collision) and they lie more than twice their radii apart at rest.
 *   particle - collider  for the particles in a pair contact, so that one pushed by another stays out
 *                     of the ground and the walls (the particle stage met the colliders on its own).
 *
 * Response: speculative contacts, sequential impulses, then positions. Every contact has a normal n
 * and the gap g0 its two sides had at the start of the step (negative: overlapping). The particles in
 * contact move, as in symplectic Euler, from where the step started at their new velocity, x0 + h v,
 * so a contact holds through the step when n . d >= -g0 / h (d: the velocity of i relative to the
 * other side at the contact): the sides may close their gap and no more. A contact that touched (the
 * path met the shape, or g0 <= 0) stops the approach, n . d >= 0; one approaching faster than the
 * world's restitution threshold (and fast enough to close its gap in the step) bounces, n . d = -e vn.
 *
 * The impulse kernel (below, side_velocity / pair_velocity) is S0's, for a particle of mass m against a
 * body of mass M and inertia I (world, end of step) at the lever arm r from its centre of mass, or
 * against another particle (M = m_j, no lever). An impulse J on the particle and -J on the body at the
 * point changes the particle's velocity by J / m and the point's, u = V + omega x r, by
 * -J / M - (I^-1 (r x J)) x r, so their difference d = v - u by
 *
 *     K J,   K = (1/m + 1/M) 1 - [r]x I^-1 [r]x          ([r]x v = r x v)
 *
 * Along the normal, n . K n = 1/m + 1/M + (r x n) . I^-1 (r x n) = 1 / m_eff, and the impulse j n that
 * turns an approach n . d = vn < 0 into a separation -e vn is j = -(1 + e) vn m_eff (S0 eq. 8-18).
 * Friction: the impulse along the slip t = d_t / |d_t| that stops it, -|d_t| / (t . K t) (against a
 * particle or a collider K is a multiple of 1, the same along every tangent), with the accumulated
 * tangential impulse kept in the Coulomb disc |J_t| <= mu j. Materials combine as two bodies' do
 * (impulse.c): e = max(e_particle, e_other), mu = sqrt(mu_particle mu_other), the static coefficient
 * while the slip is slower than 1 cm/s. Against a collider its own restitution and friction act (as
 * in the particle stage).
 *
 * The sweeps visit the contacts with sides (bodies, colliders) lowest first, then the pairs from the
 * ground up, accumulating clamped impulses (j >= 0, the disc), so a pile converges to its simultaneous
 * solution from below; the last sweep is shock propagation (Guendelman et al., as impulse.c does it for
 * bodies): of a contact whose normal is within 60 degrees of the vertical the lower side stands still,
 * which settles a column in one pass. A resting pair starts from its last step's impulse (warm
 * starting); an impact's impulse is not carried over (warm_kept).
 *
 * Positions. A particle that touched a body on the way is put where the touch left it: at the touch
 * (mapped onto the body where it ended), moved on by the rest of the step at its new velocity relative
 * to the body. The others in contact go to x0 + h v. What the sweeps left open (an overlap older than
 * the step) is closed by moving the particles apart, n . x_i >= limit for a side, |x_i - x_j| >= r_i +
 * r_j for a pair (in proportion to their inverse masses; in the last sweep the lower one of a steep
 * pair stands still), the sides last. That changes no velocity: pushing overlapping particles apart adds
 * no kinetic energy, and a pair's push keeps the pair's centre of mass, so its potential energy in
 * uniform gravity too; what lifts (the ground's push, the shock sweep's) is held to the energy the
 * step's contacts took out (hold_projection), so a step's contacts never add energy.
 *
 * The impulses the bodies take sum, with the particles', to zero: momentum is conserved to round-off. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "cloth.h"
#include "collider.h"
#include "ids.h"
#include "imp_math.h"
#include "parallel.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_contact.h"
#include "particle_shape.h"
#include "particle_system.h"
#include "particles.h"
#include "shape.h"
#include "sparse_simd.h"
#include "world_parts.h"

#define VELOCITY_SWEEPS 1   /* sequential impulse sweeps over the contacts, before shock propagation  */
#define POSITION_SWEEPS 1   /* sweeps of the position constraints, before the shock sweep and the sides' */
#define STICK_SPEED 0.01    /* m/s: a slip slower than this takes the static coefficient (impulse.c's) */
#define NEAR_FRACTION 0.2   /* a contact about to close: the particle ends within (1 + this) r of a side,
                               a pair within (1 + this / 2) (r_i + r_j)                                */
#define STEEP 0.5           /* shock propagation: normals with n . up beyond this (60 degrees) stand    */
#define PARALLEL_PARTICLES 2000 /* from this many particles the two halves are solved side by side   */
#define PAIR_DATA 5         /* arrays of the pair grid: end position x, y, z, radius, path length     */
#define SEARCH_PAD 3        /* zeros after the last particle in each of them (search_runs_avx reads them) */
/* a pair approaching faster than this met in an impact (its impulse is not warm-started): twice what
 * gravity adds in a step, as the collider pass's resting speed (particle_collide.c) */
#define REST_SPEED(w, h) (2 * v3_len((w)->settings.gravity) * (h) + 1e-3)

/* the kernels of the pair loops, put into each loop (specialised there: friction or not, a touch or not) */
#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* the lesser and the greater of two numbers that are not NaN (the loops below check first) */
static inline double lesser(double a, double b) { return a < b ? a : b; }
static inline double greater(double a, double b) { return a > b ? a : b; }

/* the id of the particle at dense index i */
static inline imp_id particle_id(const idtable *ids, int i)
{
    const uint32_t s = ids->dense_slot[i];
    return (imp_id){s, ids->slot_gen[s]};
}

void imp_world_set_particle_collisions(imp_world *w, bool on) { w->settings.particle_collisions = on; }
bool imp_world_particle_collisions(const imp_world *w) { return w->settings.particle_collisions; }

static particle_coupling *coupling_get(imp_world *w)
{
    if (!w->coupling) {
        w->coupling = calloc(1, sizeof *w->coupling);
        if (!w->coupling) abort();
    }
    return w->coupling;
}

void particle_coupling_free(imp_world *w)
{
    particle_coupling *p = w->coupling;
    if (!p) return;
    for (int g = 0; g < 3; g++) free(p->group[g].side), free(p->group[g].spare);
    free(p->warm.start), free(p->warm.pair_slot), free(p->warm.pair_index), free(p->warm.lower), free(p->warm.higher), free(p->warm.impulse);
    free(p->side), free(p->order), free(p->tmp), free(p->key);
    free(p->im), free(p->driven), free(p->half), free(p->touched), free(p->boxed), free(p->first), free(p->owner), free(p->vertex);
    free(p->lo), free(p->hi), free(p->disp_gap), free(p->x_placed), free(p->energy);
    free(p->cell_start), free(p->grain), free(p->bucket_cell), free(p->cell_of), free(p->bucket_x), free(p->bucket_of);
    for (int c = 0; c < PC_SEARCH_CHUNKS; c++) {
        for (int g = 0; g < 3; g++) free(p->found[c].pair[g]);
        free(p->found[c].near);
    }
    free(p->bv), free(p->bw), free(p->bim), free(p->bI);
    free(p->pose), free(p->rest), free(p->meet_shapes);
    for (int c = 0; c < PAR_CHUNKS; c++)
        free(p->meet[c].row), free(p->meet[c].side), free(p->meet[c].group), free(p->meet[c].touched), free(p->meet[c].run);
    free(p);
    w->coupling = NULL;
}

static void reserve_particles(particle_coupling *p, int n)
{
    if (n + SEARCH_PAD <= p->particle_cap) return; /* (the search arrays' zeros after the last particle) */
    const int cap = n + n / 2 + 64;
    p->im = ids_grow(p->im, sizeof(double), cap);
    p->driven = ids_grow(p->driven, 1, cap);
    p->half = ids_grow(p->half, 1, cap);
    p->touched = ids_grow(p->touched, 1, cap);
    p->boxed = ids_grow(p->boxed, 1, cap);
    p->first = ids_grow(p->first, sizeof(int), cap);
    p->owner = ids_grow(p->owner, sizeof(int), cap);
    p->vertex = ids_grow(p->vertex, sizeof(int), cap);
    p->lo = ids_grow(p->lo, 3 * sizeof(double), cap);
    p->disp_gap = ids_grow(p->disp_gap, sizeof(double), cap);
    p->x_placed = ids_grow(p->x_placed, 3 * sizeof(double), cap);
    p->energy = ids_grow(p->energy, 2 * sizeof(double), cap);
    p->hi = ids_grow(p->hi, 3 * sizeof(double), cap);
    p->grain = ids_grow(p->grain, sizeof(pc_grain), cap);
    p->bucket_cell = ids_grow(p->bucket_cell, sizeof(int32_t[3]), cap);
    p->cell_of = ids_grow(p->cell_of, sizeof(int32_t[3]), cap);
    p->bucket_x = ids_grow(p->bucket_x, PAIR_DATA * sizeof(double), cap); /* PAIR_DATA arrays of cap, filled each step */
    p->bucket_of = ids_grow(p->bucket_of, sizeof(uint32_t), cap);
    p->particle_cap = cap;
}

/* the sorting scratch for n entries */
static void reserve_order(particle_coupling *p, int n)
{
    if (n <= p->order_cap) return;
    p->order_cap = n + n / 2 + 64;
    p->order = ids_grow(p->order, sizeof(int), p->order_cap);
    p->tmp = ids_grow(p->tmp, sizeof(int), p->order_cap);
    p->key = ids_grow(p->key, sizeof(uint32_t), p->order_cap);
}

static void reserve_bodies(particle_coupling *p, int nb)
{
    if (nb <= p->body_cap) return;
    const int cap = nb + nb / 2 + 16;
    p->bv = ids_grow(p->bv, sizeof(imp_vec3), cap);
    p->bw = ids_grow(p->bw, sizeof(imp_vec3), cap);
    p->bim = ids_grow(p->bim, sizeof(double), cap);
    p->bI = ids_grow(p->bI, sizeof(imp_mat3), cap);
    p->body_cap = cap;
}

/* a new side contact of particle i in group g: its row, and its pc_side (index *k) */
static pc_row *side_new(particle_coupling *p, int g, int i, int *k)
{
    if (p->side_count == p->side_cap) {
        p->side_cap = p->side_cap ? 2 * p->side_cap : 256;
        p->side = ids_grow(p->side, sizeof(pc_side), p->side_cap);
    }
    pc_group *G = &p->group[g];
    if (G->side_count == G->side_cap) {
        G->side_cap = G->side_cap ? 2 * G->side_cap : 256;
        G->side = ids_grow(G->side, sizeof(pc_row), G->side_cap);
        G->spare = ids_grow(G->spare, sizeof(pc_row), G->side_cap);
    }
    *k = p->side_count++;
    memset(&p->side[*k], 0, sizeof(pc_side));
    p->side[*k].body = -1, p->side[*k].s = 1;
    pc_row *r = &G->side[G->side_count++];
    memset(r, 0, sizeof *r);
    r->i = i, r->side = *k;
    return r;
}

/* the group of a contact between particles i and j (j = i for a side): one half, or the rows across */
static inline int group_of(const particle_coupling *p, int i, int j) { return p->half[i] == p->half[j] ? p->half[i] : 2; }

/* ---- sorting ------------------------------------------------------------------------------------------ */

/* a float's bits as an unsigned key in the float's order */
static uint32_t order_key(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

/* idx[0..n) sorted by key[idx[k]] (least significant byte first: four stable counting passes, their
 * counts made in one pass over the keys; a pass whose byte is the same in every key keeps the order
 * and is left out) */
static void radix_sort(const uint32_t *key, int *idx, int *tmp, int n)
{
    int count[4][256];
    memset(count, 0, sizeof count);
    for (int k = 0; k < n; k++) {
        const uint32_t u = key[idx[k]];
        count[0][u & 255]++, count[1][(u >> 8) & 255]++, count[2][(u >> 16) & 255]++, count[3][u >> 24]++;
    }
    for (int pass = 0; pass < 4; pass++) {
        const int shift = 8 * pass;
        int *c = count[pass];
        if (n == 0 || c[(key[idx[0]] >> shift) & 255] == n) continue;
        for (int b = 0, sum = 0; b < 256; b++) {
            const int m = c[b];
            c[b] = sum, sum += m;
        }
        for (int k = 0; k < n; k++) tmp[c[(key[idx[k]] >> shift) & 255]++] = idx[k];
        memcpy(idx, tmp, sizeof(int) * (size_t)n);
    }
}

/* ---- the sweeps ------------------------------------------------------------------------------------------- */

/* the velocity of a side at its contact (a collider, a static body: zero) */
static inline imp_vec3 side_velocity_at(const particle_coupling *p, const pc_side *s)
{
    if (s->body < 0) return v3(0, 0, 0);
    return v3_add(p->bv[s->body], v3_cross(p->bw[s->body], s->r));
}

/* d . K d for a unit direction d at a side: 1/m + 1/M + (r x d) . I^-1 (r x d) (derivation at the top) */
static inline double side_response(const particle_coupling *p, const pc_side *s, double wi, bool moves, imp_vec3 d)
{
    if (!moves) return wi;
    const imp_vec3 rd = v3_cross(s->r, d);
    return wi + p->bim[s->body] + v3_dot(rd, m3_mul_v(p->bI[s->body], rd));
}

/* the impulse J on i and -J on the side (when it moves) */
static inline void side_apply(particle_coupling *p, double *v, const pc_row *r, const pc_side *s, double wi, bool moves, imp_vec3 J)
{
    v3_accum(v + 3 * r->i, v3_scale(J, wi));
    if (!moves) return;
    p->bv[s->body] = v3_mad(p->bv[s->body], J, -p->bim[s->body]);
    p->bw[s->body] = v3_sub(p->bw[s->body], m3_mul_v(p->bI[s->body], v3_cross(s->r, J)));
}

/* the accumulated tangential impulse moved to stop the slip dt (kt = t . K t), kept in the Coulomb
 * disc |jt| <= lim; returns the change */
static inline imp_vec3 friction_step(pc_row *r, imp_vec3 dt, double kt, double lim)
{
    imp_vec3 jt = r->jt;
    if (kt > 0) jt = v3_mad(jt, dt, -1 / kt);
    const double len2 = v3_dot(jt, jt);
    if (len2 > lim * lim) jt = v3_scale(jt, lim / sqrt(len2));
    const imp_vec3 change = v3_sub(jt, r->jt);
    r->jt = jt;
    return change;
}

/* One visit of a side contact: the normal impulse that brings n . d to the target (accumulated,
 * >= 0), then the friction impulse that stops the slip. wi, moves: whether i and the side answer;
 * kn the effective mass along n with them. */
static void side_velocity(particle_coupling *p, double *v, pc_row *r, double wi, bool moves, double kn)
{
    const pc_side *s = &p->side[r->side];
    imp_vec3 d = v3_sub(v3_load(v + 3 * r->i), side_velocity_at(p, s));
    const double sum = r->jn + kn * (r->target - v3_dot(r->n, d)), jn = sum > 0 ? sum : 0, dj = jn - r->jn;
    r->jn = jn;
    if (dj != 0) side_apply(p, v, r, s, wi, moves, v3_scale(r->n, dj));
    if (r->mu <= 0) return;
    d = v3_sub(v3_load(v + 3 * r->i), side_velocity_at(p, s));
    const imp_vec3 dt = v3_mad(d, r->n, -v3_dot(r->n, d));
    const double slip2 = v3_dot(dt, dt);
    if (slip2 < 1e-28) return;
    const double kt = side_response(p, s, wi, moves, v3_scale(dt, 1 / sqrt(slip2)));
    side_apply(p, v, r, s, wi, moves, friction_step(r, dt, kt, r->mu * jn));
}

/* a pair's effective mass along its normal, 1 / (1/m_i + 1/m_j), in single precision (as a pair's
 * other coefficients) */
static inline double pair_kn(double wi, double wj) { return (float)(1 / (wi + wj)); }

/* One visit of a pair: the same with K = (wi + wj) 1; the normal aim lowered by ease (>= 0), friction
 * only when asked */
INLINE void pair_velocity(double *v, pc_pair *r, double wi, double wj, double kn, double ease, bool friction)
{
    double *vi = v + 3 * r->i, *vj = v + 3 * pair_j(r);
    const imp_vec3 n = v3(r->n[0], r->n[1], r->n[2]);
    imp_vec3 d = v3_sub(v3_load(vi), v3_load(vj));
    const double sum = r->jn + kn * (r->target - ease - v3_dot(n, d)), jn = sum > 0 ? sum : 0, dj = jn - r->jn;
    r->jn = jn;
    if (dj != 0) {
        v3_accum(vi, v3_scale(n, dj * wi));
        v3_accum(vj, v3_scale(n, -dj * wj));
        d = v3_mad(d, n, dj * (wi + wj));
    }
    if (r->mu <= 0 || !friction) return;
    const imp_vec3 dt = v3_mad(d, n, -v3_dot(n, d));
    if (v3_dot(dt, dt) < 1e-28) return;
    /* the tangential impulse that stops the slip, dt / (wi + wj) = kn dt, kept in the disc of radius mu jn */
    const imp_vec3 jt0 = v3(r->jt[0], r->jt[1], r->jt[2]);
    imp_vec3 jt = v3_mad(jt0, dt, -kn);
    const double lim = r->mu * jn, len2 = v3_dot(jt, jt);
    if (len2 > lim * lim) jt = v3_scale(jt, lim / sqrt(len2));
    r->jt[0] = (float)jt.x, r->jt[1] = (float)jt.y, r->jt[2] = (float)jt.z;
    const imp_vec3 J = v3_sub(v3(r->jt[0], r->jt[1], r->jt[2]), jt0);
    v3_accum(vi, v3_scale(J, wi));
    v3_accum(vj, v3_scale(J, -wj));
}

/* Shock propagation's inverse masses of a pair: of a steep pair (normal within 60 degrees of the
 * vertical) the lower particle stands still */
static inline void shock_weights(const particle_coupling *p, const pc_pair *r, imp_vec3 up, double *wi, double *wj)
{
    const double tilt = r->n[0] * up.x + r->n[1] * up.y + r->n[2] * up.z; /* > 0: i above j */
    *wi = p->im[r->i], *wj = p->im[pair_j(r)];
    if (tilt > STEEP) *wj = 0;
    else if (tilt < -STEEP) *wi = 0;
}

/* a place in a group's pairs (chunk c's list, its k-th) and the steps along them */
typedef struct pair_cursor {
    const pc_group *G;
    int c, k;
} pair_cursor;

/* to the t-th pair */
static inline void cursor_seek(pair_cursor *a, int t)
{
    a->c = 0;
    while (a->c < PC_SEARCH_CHUNKS - 1 && t >= a->G->seg_count[a->c]) t -= a->G->seg_count[a->c++];
    a->k = t;
}

/* the pair there (one must be left), and on to the next */
static inline pc_pair *cursor_next(pair_cursor *a)
{
    while (a->k >= a->G->seg_count[a->c]) a->c++, a->k = 0;
    return &a->G->seg[a->c][a->k++];
}

/* one sweep over the rows of group g (sides, then pairs); shock: the last one, in which the lower side
 * of a steep contact stands still (what a body does not answer there still reaches it at the end,
 * bodies_take: momentum stays conserved) */
static void sweep_velocities(particle_coupling *p, double *v, imp_vec3 up, int g, bool shock)
{
    const double *im = p->im;
    pc_group *G = &p->group[g];
    for (int t = 0; t < G->side_count; t++) {
        pc_row *r = &G->side[t];
        if (!shock) {
            side_velocity(p, v, r, im[r->i], r->moves, r->kn);
            continue;
        }
        const bool moves = r->moves && !(v3_dot(r->n, up) > STEEP);
        const double km = side_response(p, &p->side[r->side], im[r->i], moves, r->n);
        if (km > 0) side_velocity(p, v, r, im[r->i], moves, 1 / km);
    }
    if (!shock) {
        /* two runs of the rows side by side: the rows of one particle follow each other and wait on
         * each other's velocities; the second run, far off in the pile, fills the wait */
        const int half = (G->pair_count + 1) / 2;
        pair_cursor a = {G, 0, 0}, b = {G, 0, 0};
        cursor_seek(&b, half);
        for (int t = 0; t < half; t++) {
            pc_pair *r = cursor_next(&a);
            pair_velocity(v, r, im[r->i], im[pair_j(r)], pair_kn(im[r->i], im[pair_j(r)]), 0, true);
            if (t + half < G->pair_count) {
                r = cursor_next(&b);
                pair_velocity(v, r, im[r->i], im[pair_j(r)], pair_kn(im[r->i], im[pair_j(r)]), 0, true);
            }
        }
        return;
    }
    /* A lower particle that stands still here but moves (what the sweeps before left it) would carry
     * the upper one with it, energy from nowhere: along n the upper one is held at most to standing
     * still, n . v_upper >= target + min(n . v_lower, 0), and the friction of the sweeps before
     * stands (stopping the slip against a lower particle that moves sideways would drag the upper
     * one along). So the shock sweep only takes approach out of a column, never adds motion. */
    PC_FOR_PAIRS(G, r) {
        double wi, wj, ease = 0;
        shock_weights(p, r, up, &wi, &wj);
        if (wi + wj > 0 && wi * wj == 0) {
            const imp_vec3 n = v3(r->n[0], r->n[1], r->n[2]);
            ease = wj == 0 ? v3_dot(n, v3_load(v + 3 * pair_j(r))) : -v3_dot(n, v3_load(v + 3 * r->i));
            ease = ease > 0 ? ease : 0;
        }
        if (wi + wj > 0) pair_velocity(v, r, wi, wj, 1 / (wi + wj), ease, wi * wj > 0);
    }
}

/* ---- setting a contact up -------------------------------------------------------------------------------- */

/* The normal velocity a contact aims at and its Coulomb coefficient, from the relative velocity d
 * before the sweeps. touched (a touch on the way, or gap0 <= 0: overlapping at the start): an approach
 * faster than the restitution threshold turns into e times it, a slower one stops. Apart at the start
 * by gap0 > 0: the approach may close the gap within the step, n . d >= -gap0 / h, unless it is fast
 * enough to close it and bounces: then the bounce. */
INLINE void normal_target(const imp_world *w, imp_vec3 n, imp_vec3 d, bool touched, double gap0, double e, double mu_k,
                          double mu_s, double h, double *target, double *mu)
{
    const double vn = v3_dot(n, d);
    const double rt = w->settings.restitution_threshold, threshold = rt > 1e-9 ? rt : 1e-9; /* (NaN: 1e-9) */
    const bool bounce = vn < -threshold && e > 0;
    if (touched || gap0 <= 0) *target = bounce ? -e * vn : 0;
    else *target = bounce && vn * h < -gap0 ? -e * vn : -gap0 / h;
    const imp_vec3 dt = v3_mad(d, n, -vn);
    *mu = v3_dot(dt, dt) < STICK_SPEED * STICK_SPEED ? mu_s : mu_k;
}

/* the chunks on both threads from CHUNKED_PARTICLES particles on (fewer are not worth waking the worker
 * for), else one after another on this one: the same results either way */
#define CHUNKED_PARTICLES 512
static void run_chunks_of(par_fn fn, void *ctx, int particles, int chunks)
{
    if (particles >= CHUNKED_PARTICLES) par_for(fn, ctx, chunks);
    else for (int c = 0; c < chunks; c++) fn(ctx, c);
}

static void run_chunks(par_fn fn, void *ctx, int particles) { run_chunks_of(fn, ctx, particles, PAR_CHUNKS); }

/* ---- particles against bodies --------------------------------------------------------------------------- */

/* every body's velocities, inverse mass and inverse inertia (world, at the end of the step) */
static void bodies_load(imp_world *w, particle_coupling *p)
{
    const int nb = w->bodies->ids.count;
    reserve_bodies(p, nb);
    for (int b = 0; b < nb; b++) {
        const body *bd = &w->bodies->body[b];
        const double *X = w->bodies->state + BODY_DIM * b;
        if (bd->motion == IMP_DYNAMIC) {
            const imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
            p->bim[b] = bd->inv_mass;
            p->bI[b] = m3_rotate_tensor(R, bd->Ibody_inv);
            p->bv[b] = v3_scale(v3_load(X + 7), bd->inv_mass);
            p->bw[b] = m3_mul_v(p->bI[b], v3_load(X + 10));
        } else {
            p->bim[b] = 0;
            memset(&p->bI[b], 0, sizeof(imp_mat3));
            p->bv[b] = bd->motion == IMP_KINEMATIC ? bd->kin_v : v3(0, 0, 0);
            p->bw[b] = bd->motion == IMP_KINEMATIC ? bd->kin_w : v3(0, 0, 0);
        }
    }
}

typedef struct box_job {
    particle_coupling *p;
    const double *x0, *x1, *radius;
    int n;
    double widest[PAR_CHUNKS];
} box_job;

/* one chunk of the particles' swept boxes (p->boxed: whether it has a finite one) */
static void boxes_chunk(void *ctx, int chunk)
{
    box_job *k = ctx;
    particle_coupling *p = k->p;
    const double *x0 = k->x0, *x1 = k->x1;
    double widest = 0;
    int from, to;
    par_range(k->n, chunk, &from, &to);
    for (int i = from; i < to; i++) {
        p->boxed[i] = 0;
        if (!(p->im[i] > 0)) continue;
        const double grow = k->radius[i] * (1 + NEAR_FRACTION);
        for (int a = 0; a < 3; a++) {
            p->lo[3 * i + a] = lesser(x0[3 * i + a], x1[3 * i + a]) - grow;
            p->hi[3 * i + a] = greater(x0[3 * i + a], x1[3 * i + a]) + grow;
        }
        if (!(p->hi[3 * i] - p->lo[3 * i] <= 1e300)) continue; /* not finite: the NaN guard takes it */
        widest = greater(widest, p->hi[3 * i] - p->lo[3 * i]);
        p->key[i] = order_key(p->lo[3 * i]);
        p->boxed[i] = 1;
    }
    k->widest[chunk] = widest;
}

/* the particles that meet bodies (dynamic, not driven), sorted by the lowest x of their swept boxes
 * into order[]; returns how many, and the widest box's x extent. The boxes in chunks on both threads. */
static int sweep_boxes(imp_world *w, particle_coupling *p, const double *x0, double *widest)
{
    const int n = w->particles->ids.count;
    reserve_order(p, n);
    box_job job = {.p = p, .x0 = x0, .x1 = w->particles->x, .radius = w->particles->radius, .n = n};
    run_chunks(boxes_chunk, &job, n);
    *widest = 0;
    for (int c = 0; c < PAR_CHUNKS; c++) *widest = greater(*widest, job.widest[c]);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (p->boxed[i]) p->order[m++] = i;
    radix_sort(p->key, p->order, p->tmp, m);
    return m;
}

/* the first of the sorted particles whose box's lowest x is >= x */
static int lower_bound(const particle_coupling *p, int m, double x)
{
    int lo = 0, hi = m;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (p->lo[3 * p->order[mid]] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* a shape's pose from its body's state X: position and rotation, and its bounds */
static void shape_pose(const shape *sh, const double *X, imp_vec3 com, imp_vec3 *pos, imp_mat3 *R, imp_vec3 *lo, imp_vec3 *hi)
{
    shape tmp = *sh;
    shape_place(&tmp, X, com);
    *pos = tmp.wpos, *R = tmp.wrot, *lo = tmp.lo, *hi = tmp.hi;
}

typedef struct shape_ctx {
    const shape *sh;
    int body;
    imp_vec3 p0, p1;
    imp_mat3 R0, R1;
    imp_vec3 lo, hi; /* its swept box: the bounds at the start and at the end */
} shape_ctx;

/* particle i against one shape: its path in the shape's frame; a contact when it touches or ends near,
 * put into chunk c's rows */
static void meet_shape(imp_world *w, particle_coupling *p, pc_meet *c, const shape_ctx *s, int i, const double *x0, double h, imp_vec3 up)
{
    const double r = w->particles->radius[i];
    const imp_vec3 a = m3_mul_tv(s->R0, v3_sub(v3_load(x0 + 3 * i), s->p0));
    const imp_vec3 b = m3_mul_tv(s->R1, v3_sub(v3_load(w->particles->x + 3 * i), s->p1));
    pshape_hit hit;
    if (!pshape_sweep(s->sh, a, b, r, NEAR_FRACTION * r, &hit)) return;
    const imp_vec3 cl = v3_mad(a, v3_sub(b, a), hit.s);
    const bool moves = p->bim[s->body] > 0;
    if (c->count == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->row = ids_grow(c->row, sizeof(pc_row), c->cap);
        c->side = ids_grow(c->side, sizeof(pc_side), c->cap);
        c->group = ids_grow(c->group, 1, c->cap);
        c->touched = ids_grow(c->touched, 1, c->cap);
    }
    const int e = c->count++;
    pc_row *row = &c->row[e];
    pc_side *sd = &c->side[e];
    memset(row, 0, sizeof *row), memset(sd, 0, sizeof *sd);
    c->group[e] = moves ? 2 : p->half[i];
    c->touched[e] = hit.touched;
    row->i = i;
    row->n = m3_mul_v(s->R1, hit.n);
    row->moves = moves;
    sd->body = s->body;
    sd->s = 1;
    sd->at = v3_add(s->p1, m3_mul_v(s->R1, v3_mad(cl, hit.n, -hit.dist)));
    sd->r = v3_sub(sd->at, v3_load(w->bodies->state + BODY_DIM * s->body));
    sd->height = v3_dot(up, v3_load(w->particles->x + 3 * i));
    row->limit = v3_dot(row->n, sd->at) + r;
    if (hit.touched) sd->s = hit.s, sd->c = v3_add(s->p1, m3_mul_v(s->R1, cl));
    row->kn = 1 / side_response(p, sd, p->im[i], moves, row->n);
    const shape *sh = s->sh;
    const double mu_p = w->particles->friction[i];
    const double mu_s = sh->static_friction >= 0 ? sh->static_friction : sh->friction;
    const imp_vec3 d = v3_sub(v3_load(w->particles->v + 3 * i), side_velocity_at(p, sd));
    normal_target(w, row->n, d, hit.touched, hit.dist0 - r, fmax(w->particles->restitution[i], sh->restitution),
                  sqrt(mu_p * sh->friction), sqrt(mu_p * mu_s), h, &row->target, &row->mu);
}

typedef struct meet_job {
    imp_world *w;
    particle_coupling *p;
    const imp_step *st;
    const double *x0;
    imp_vec3 up;
    int m;         /* the particles in p->order */
    double widest; /* the widest of their boxes along x */
} meet_job;

/* One chunk of the particles sorted by their boxes' lowest x against every shape, the shapes in their
 * order: its rows, and where each shape's rows begin (run[q]) */
static void meet_chunk(void *ctx, int chunk)
{
    const meet_job *k = ctx;
    imp_world *w = k->w;
    particle_coupling *p = k->p;
    pc_meet *c = &p->meet[chunk];
    const int ns = w->shapes->ids.count;
    if (ns + 1 > c->run_cap) {
        c->run_cap = ns + ns / 2 + 16;
        c->run = ids_grow(c->run, sizeof(int), c->run_cap);
    }
    c->count = 0;
    int t0, t1;
    par_range(k->m, chunk, &t0, &t1);
    for (int q = 0; q < ns; q++) {
        c->run[q] = c->count;
        const shape_ctx *s = &p->meet_shapes[q];
        if (s->sh->type == IMP_SHAPE_PLANE) {
            for (int t = t0; t < t1; t++) meet_shape(w, p, c, s, p->order[t], k->x0, k->st->dt, k->up);
            continue;
        }
        const int from = lower_bound(p, k->m, s->lo.x - k->widest);
        for (int t = from > t0 ? from : t0; t < t1; t++) {
            const int i = p->order[t];
            const double *plo = p->lo + 3 * i, *phi = p->hi + 3 * i;
            if (plo[0] > s->hi.x) break;
            if (phi[0] < s->lo.x || plo[1] > s->hi.y || phi[1] < s->lo.y || plo[2] > s->hi.z || phi[2] < s->lo.z) continue;
            meet_shape(w, p, c, s, i, k->x0, k->st->dt, k->up);
        }
    }
    c->run[ns] = c->count;
}

/* Every shape against the particles whose swept boxes meet its own: the sorted particles in chunks on
 * both threads, then the chunks' rows joined shape by shape, chunk by chunk, which is the order of one
 * pass over the shapes and the sorted particles; each particle's first touch (p->first) is the
 * earliest along its path, the first found of equal ones. */
static void meet_bodies(imp_world *w, particle_coupling *p, const double *x0, const imp_step *st, imp_vec3 up)
{
    meet_job job = {.w = w, .p = p, .st = st, .x0 = x0, .up = up};
    job.m = sweep_boxes(w, p, x0, &job.widest);
    if (job.m == 0) return;
    bodies_load(w, p);
    const int ns = w->shapes->ids.count;
    if (ns > p->meet_shapes_cap) {
        p->meet_shapes_cap = ns + ns / 2 + 16;
        p->meet_shapes = ids_grow(p->meet_shapes, sizeof(shape_ctx), p->meet_shapes_cap);
    }
    for (int q = 0; q < ns; q++) {
        const shape *sh = &w->shapes->shape[q];
        const int b = bodies_dense(w, sh->body);
        const body *bd = &w->bodies->body[b];
        shape_ctx *s = &p->meet_shapes[q];
        s->sh = sh, s->body = b;
        imp_vec3 lo0, hi0, lo1, hi1;
        shape_pose(sh, st->bodies0 + BODY_DIM * b, bd->com, &s->p0, &s->R0, &lo0, &hi0);
        shape_pose(sh, w->bodies->state + BODY_DIM * b, bd->com, &s->p1, &s->R1, &lo1, &hi1);
        s->lo = v3(fmin(lo0.x, lo1.x), fmin(lo0.y, lo1.y), fmin(lo0.z, lo1.z));
        s->hi = v3(fmax(hi0.x, hi1.x), fmax(hi0.y, hi1.y), fmax(hi0.z, hi1.z));
    }
    run_chunks(meet_chunk, &job, job.m);
    for (int q = 0; q < ns; q++)
        for (int c = 0; c < PAR_CHUNKS; c++) {
            const pc_meet *mc = &p->meet[c];
            for (int e = mc->run[q]; e < mc->run[q + 1]; e++) {
                int k;
                pc_row *row = side_new(p, mc->group[e], mc->row[e].i, &k);
                *row = mc->row[e], row->side = k;
                p->side[k] = mc->side[e];
                const int i = row->i;
                if (mc->touched[e] && (p->first[i] < 0 || p->side[k].s < p->side[p->first[i]].s)) p->first[i] = k;
            }
        }
}

/* ---- resting on bodies (the implicit integrator's contacts) -------------------------------------------------- */

typedef struct pc_pose {
    imp_vec3 pos, lo, hi; /* the shape's centre and bounds (world) */
    imp_mat3 R;           /* its rotation                          */
    int body;             /* its body (dense)                      */
} pc_pose;

typedef struct rest_job {
    imp_world *w;
    particle_coupling *p;
    int m;                /* the particles in p->order */
    double widest, slop, vn_max;
} rest_job;

/* One chunk of the particles sorted by their boxes' lowest x: each one's nearest shape within slop
 * (p->first: the shape, p->disp_gap: its gap; the shapes in their order, so the same as one pass over
 * all of them), then the contacts of those that rest there, into p->rest from the chunk's first sorted
 * index on. A chunk reads and moves its own particles alone. */
static void rest_chunk(void *ctx, int chunk)
{
    const rest_job *k = ctx;
    imp_world *w = k->w;
    particle_coupling *p = k->p;
    double *x = w->particles->x;
    const double *rad = w->particles->radius;
    int t0, t1;
    par_range(k->m, chunk, &t0, &t1);
    for (int q = 0; q < w->shapes->ids.count; q++) {
        const shape *sh = &w->shapes->shape[q];
        if (sh->type == IMP_SHAPE_MESH) continue;
        const pc_pose *ps = &p->pose[q];
        const bool plane = sh->type == IMP_SHAPE_PLANE;
        int t = t0;
        if (!plane) {
            const int from = lower_bound(p, k->m, ps->lo.x - k->widest);
            t = from > t0 ? from : t0;
        }
        for (; t < t1; t++) {
            const int i = p->order[t];
            const double *plo = p->lo + 3 * i, *phi = p->hi + 3 * i;
            if (!plane) {
                if (plo[0] > ps->hi.x) break;
                if (phi[0] < ps->lo.x || plo[1] > ps->hi.y || phi[1] < ps->lo.y || plo[2] > ps->hi.z || phi[2] < ps->lo.z) continue;
            }
            imp_vec3 nl;
            const double d = pshape_distance(sh, m3_mul_tv(ps->R, v3_sub(v3_load(x + 3 * i), ps->pos)), &nl) - rad[i];
            if (d <= k->slop && (p->first[i] < 0 || d < p->disp_gap[i])) p->first[i] = q, p->disp_gap[i] = d;
        }
    }
    int made = 0;
    for (int t = t0; t < t1; t++) {
        const int i = p->order[t], q = p->first[i];
        if (q < 0) continue;
        const shape *sh = &w->shapes->shape[q];
        const pc_pose *ps = &p->pose[q];
        const int b = ps->body;
        const double r = rad[i];
        const imp_vec3 xi = v3_load(x + 3 * i);
        imp_vec3 nl;
        const double d = pshape_distance(sh, m3_mul_tv(ps->R, v3_sub(xi, ps->pos)), &nl) - r;
        const imp_vec3 N = m3_mul_v(ps->R, nl), at = v3_mad(xi, N, -(r + d));
        const double *X = w->bodies->state + BODY_DIM * b;
        const imp_vec3 ra = v3_sub(at, v3_load(X));
        const imp_vec3 u = v3_add(p->bv[b], v3_cross(p->bw[b], ra));
        const imp_vec3 vr = v3_sub(v3_load(w->particles->v + 3 * i), u);
        const double vn = v3_dot(N, vr);
        if (vn > k->vn_max || vn < -k->vn_max) continue;
        /* on the surface with no normal velocity: make the position exact, then it is a contact */
        v3_store(x + 3 * i, v3_mad(xi, N, -d));
        pcontact *pc = &p->rest[t0 + made++];
        memset(pc, 0, sizeof *pc);
        pc->particle = i, pc->collider = -1, pc->body = b, pc->shape = q;
        pc->vt0 = v3_mad(vr, N, -vn);
        pc->u = u;
        pc->normal = N;
        pc->at = m3_mul_tv(quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6]))), ra);
        pc->mu = sqrt(w->particles->friction[i] * sh->friction);
    }
    p->rest_start[chunk] = t0, p->rest_count[chunk] = made;
}

/* The implicit integrator holds a resting contact inside its solve (implicit.c, Baraff and Witkin's
 * filter): the particle's normal velocity relative to the surface is prescribed, and friction acts
 * there, so a cloth lies on a body as it lies on a collider, its stiff forces and the contact solved
 * together. Its impulse on the particle comes back (pcollide_set_impulse) and the body takes the
 * opposite before its own stage (particle_contacts_rest_give). A contact holds a particle (dynamic,
 * not attached) within slop of a convex shape (meshes: the stage after the bodies' alone) at the start
 * of the step whose normal speed relative to the surface is at most vn_max: one per particle, its
 * nearest shape, and none for a particle resting on a collider as well (the solve returns one
 * impulse per particle, which would not be the body's alone; pcollide_find_contacts drops those). A
 * particle in two contacts, a cloth pinched between two bodies, meets them in the stage after the
 * bodies'. */
static void pcontact_find_bodies(imp_world *w, double slop, double vn_max)
{
    const int n = w->particles->ids.count, ns = w->shapes->ids.count;
    if (n == 0 || ns == 0) return;
    particle_coupling *p = coupling_get(w);
    reserve_particles(p, n);
    const attach_set *as = w->attach;
    memset(p->driven, 0, (size_t)n);
    for (int k = 0; as && k < as->count; k++)
        if (as->a[k].dense >= 0) p->driven[as->a[k].dense] = 1;
    for (int i = 0; i < n; i++) {
        p->im[i] = w->particles->motion[i] == IMP_DYNAMIC && !p->driven[i] ? w->particles->inv_mass[i] : 0;
        p->first[i] = -1;
    }
    rest_job job = {.w = w, .p = p, .slop = slop, .vn_max = vn_max};
    job.m = sweep_boxes(w, p, w->particles->x, &job.widest);
    if (job.m == 0) return;
    bodies_load(w, p);
    if (ns > p->pose_cap) {
        p->pose_cap = ns + ns / 2 + 16;
        p->pose = ids_grow(p->pose, sizeof(pc_pose), p->pose_cap);
    }
    if (job.m > p->rest_cap) {
        p->rest_cap = job.m + job.m / 2 + 64;
        p->rest = ids_grow(p->rest, sizeof(pcontact), p->rest_cap);
    }
    for (int q = 0; q < ns; q++) {
        const shape *sh = &w->shapes->shape[q];
        pc_pose *ps = &p->pose[q];
        ps->body = bodies_dense(w, sh->body);
        shape_pose(sh, w->bodies->state + BODY_DIM * ps->body, w->bodies->body[ps->body].com, &ps->pos, &ps->R, &ps->lo, &ps->hi);
    }
    run_chunks(rest_chunk, &job, job.m);
    for (int c = 0; c < PAR_CHUNKS; c++)
        for (int e = 0; e < p->rest_count[c]; e++) pcollide_add_contact(w, &p->rest[p->rest_start[c] + e]);
}

void particle_contacts_rest(const imp_step *st)
{
    imp_world *w = st->w;
    pcollide_begin_contacts(w);
    if (w->settings.integrator == IMP_IMPLICIT) pcontact_find_bodies(w, PCOLLIDE_REST_SLOP, PCOLLIDE_REST_SPEED);
}

/* The bodies take the opposite of the resting contacts' impulses (the implicit integrator's, over the
 * step) before their own stage, at the contact points on the bodies as the step starts: the body's
 * stage then carries what the particles rest on it with, in the same step (a box under a cloth on the
 * floor: the floor's contact takes (m_box + m_cloth) g h), so a body at rest under a cloth starts the
 * next step at rest, and the surface velocity its resting particles follow is that of the body alone. */
void particle_contacts_rest_give(const imp_step *st)
{
    imp_world *w = st->w;
    for (int k = 0; k < w->pcontacts->count; k++) {
        const pcontact *pc = &w->pcontacts->contact[k];
        if (pc->collider >= 0 || w->bodies->body[pc->body].motion != IMP_DYNAMIC || !(v3_dot(pc->impulse, pc->impulse) > 0)) continue;
        const double *X = w->bodies->state + BODY_DIM * pc->body;
        const imp_vec3 at = v3_add(v3_load(X), m3_mul_v(quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6]))), pc->at));
        imp_body_apply_impulse(w, ids_of(&w->bodies->ids, pc->body), v3_scale(pc->impulse, -1), at);
    }
}

/* ---- particles against particles ------------------------------------------------------------------------- */

/* ---- warm starting ---------------------------------------------------------------------------------------- */

/* the pair's impulses of the last step, if it had one: its normal part (>= 0) and its tangential part
 * (in the Coulomb disc), about the pair's normal of this step */
static void warm_lookup(const particle_coupling *p, pc_pair *r, imp_vec3 n, imp_id a, imp_id b)
{
    const pc_warm *wm = &p->warm;
    const bool a_low = a.index < b.index;
    const imp_id lo = a_low ? a : b, hi = a_low ? b : a;
    if ((int)lo.index >= wm->slots) return;
    for (int e = wm->start[lo.index]; e < wm->start[lo.index + 1]; e++) {
        if (wm->higher[e].index != hi.index || wm->higher[e].generation != hi.generation || wm->lower[e].generation != lo.generation)
            continue;
        const float *J = wm->impulse + 3 * e;
        const imp_vec3 Ji = v3_scale(v3(J[0], J[1], J[2]), a_low ? 1 : -1);
        const double jn = v3_dot(n, Ji);
        if (!(jn > 0)) return;
        imp_vec3 jt = v3_mad(Ji, n, -jn);
        const double lim = r->mu * jn, len2 = v3_dot(jt, jt);
        if (len2 > lim * lim) jt = v3_scale(jt, lim / sqrt(len2));
        r->jn = jn;
        r->jt[0] = (float)jt.x, r->jt[1] = (float)jt.y, r->jt[2] = (float)jt.z;
        return;
    }
}

/* the pairs' warm starts applied before the sweeps: each one's impulse on i, the opposite on j */
static void warm_apply(particle_coupling *p, double *v, int g)
{
    const pc_group *G = &p->group[g];
    PC_FOR_PAIRS(G, r) {
        if (!(r->jn > 0)) continue;
        const imp_vec3 J = v3_add(v3_scale(v3(r->n[0], r->n[1], r->n[2]), r->jn), v3(r->jt[0], r->jt[1], r->jt[2]));
        v3_accum(v + 3 * r->i, v3_scale(J, p->im[r->i]));
        v3_accum(v + 3 * pair_j(r), v3_scale(J, -p->im[pair_j(r)]));
    }
}

/* A pair's impulse is kept for the next step when it pushed and the pair was resting, not an impact:
 * an impact's impulse took out the approach of this step, and pushed the pair apart again at the start
 * of the next it would have to be taken back by the sweeps, which one sweep does not do fully (the
 * energy it leaves is the pile's ringing after the first impacts) */
static inline bool warm_kept(const pc_pair *r) { return r->jn > 0 && !(r->jx & PC_IMPACT); }

/* this step's pair impulses kept for the next: an entry per resting pair that pushed, under its lower
 * slot, the entries of a slot in pair order (the groups' lists one after another). Built on both
 * threads: the kept pairs' lower slots found in chunks of the pairs (warm_slots), then the slots in two
 * halves, [0, split) and [split, slots), each counted and filled by one job (warm_count, warm_fill),
 * the second half's entries after the first's: the table one pass over the pairs makes.
 * warm_slots lists each list's kept pairs by half in the list's room of pair_slot and pair_index (the
 * lists one after another): the first half's from the room's beginning on, the second half's from its
 * end back, so each half's job visits its own pairs alone, in pair order. */
typedef struct warm_job {
    const idtable *ids;
    particle_coupling *p;
    int base[4];  /* where each group's pairs begin among all pairs, and their total */
    int at[3][PC_SEARCH_CHUNKS]; /* where each group's list from each chunk begins among all pairs */
    int kept[3][PC_SEARCH_CHUNKS][2]; /* the kept pairs of each list whose lower slot is in each half */
    int split;    /* the first slot of the second half */
    int count0;   /* the entries of the first half */
} warm_job;

/* the kept pairs of the lists chunk `chunk` of the search found: their lower slots and places in the
 * list, by half */
static void warm_slots(void *ctx, int chunk)
{
    warm_job *k = ctx;
    const particle_coupling *p = k->p;
    const uint32_t *dense_slot = k->ids->dense_slot, split = (uint32_t)k->split;
    for (int g = 0; g < 3; g++) {
        const pc_group *G = &p->group[g];
        const int len = G->seg_count[chunk];
        uint32_t *slot = p->warm.pair_slot + k->at[g][chunk], *index = p->warm.pair_index + k->at[g][chunk];
        int n0 = 0, n1 = 0;
        for (int t = 0; t < len; t++) {
            const pc_pair *r = &G->seg[chunk][t];
            if (!warm_kept(r)) continue;
            const uint32_t a = dense_slot[r->i], b = dense_slot[pair_j(r)], lower = a < b ? a : b;
            const int e = lower < split ? n0++ : len - ++n1;
            slot[e] = lower, index[e] = (uint32_t)t;
        }
        k->kept[g][chunk][0] = n0, k->kept[g][chunk][1] = n1;
    }
}

/* the place in pair_slot and pair_index of the first kept pair of half h in group g's list from chunk c,
 * and the step to the next (1: forwards, -1: back) */
static inline int warm_entry(const warm_job *k, int g, int c, int h, int *step)
{
    *step = h == 0 ? 1 : -1;
    return h == 0 ? k->at[g][c] : k->at[g][c] + k->p->group[g].seg_count[c] - 1;
}

/* the slots of half h */
static void warm_half(const warm_job *k, int h, int *s0, int *s1)
{
    *s0 = h == 0 ? 0 : k->split, *s1 = h == 0 ? k->split : k->p->warm.slots;
}

/* half h's entries counted per slot, start[s + 1] for its slots s, summed from its first slot on */
static void warm_count(void *ctx, int h)
{
    const warm_job *k = ctx;
    pc_warm *wm = &k->p->warm;
    int s0, s1;
    warm_half(k, h, &s0, &s1);
    int *start = wm->start;
    if (h == 0) start[0] = 0;
    if (s1 > s0) memset(start + s0 + 1, 0, sizeof(int) * (size_t)(s1 - s0));
    const uint32_t *slot = wm->pair_slot;
    for (int g = 0; g < 3; g++)
        for (int c = 0; c < PC_SEARCH_CHUNKS; c++) {
            const int n = k->kept[g][c][h];
            int step, at = warm_entry(k, g, c, h, &step);
            for (int e = 0; e < n; e++, at += step) start[slot[at] + 1]++;
        }
    for (int s = s0 + (h == 1); s < s1; s++) start[s + 1] += start[s];
}

/* half h's entries written (start[s]: the next place in slot s's run), then start[s] put back to where
 * slot s's run begins */
static void warm_fill(void *ctx, int h)
{
    const warm_job *k = ctx;
    const particle_coupling *p = k->p;
    const pc_warm *wm = &p->warm;
    int s0, s1;
    warm_half(k, h, &s0, &s1);
    int *start = wm->start;
    if (h == 1)
        for (int s = s0 + 1; s <= s1; s++) start[s] += k->count0;
    const uint32_t *slot = wm->pair_slot, *index = wm->pair_index, *dense_slot = k->ids->dense_slot, *gen = k->ids->slot_gen;
    imp_id *lower_id = wm->lower, *higher_id = wm->higher;
    float *impulse = wm->impulse;
    for (int g = 0; g < 3; g++)
        for (int c = 0; c < PC_SEARCH_CHUNKS; c++) {
            const int n = k->kept[g][c][h];
            if (n == 0) continue;
            const pc_pair *list = p->group[g].seg[c];
            int step, at = warm_entry(k, g, c, h, &step);
            for (int q = 0; q < n; q++, at += step) {
                const pc_pair *r = &list[index[at]];
                const uint32_t lower = slot[at];
                /* the pair's slots differ, and the lower one is `lower`; the impulse on the lower one's
                 * particle: the pair's impulse on i, negated when j holds the lower slot (a negation rounds
                 * to the negation of the rounding) */
                const uint32_t si = dense_slot[r->i], sj = dense_slot[pair_j(r)], higher = si == lower ? sj : si;
                const int e = start[lower]++;
                lower_id[e] = (imp_id){lower, gen[lower]}, higher_id[e] = (imp_id){higher, gen[higher]};
                const double jn = r->jn;
                const float J[3] = {(float)(r->n[0] * jn + r->jt[0]), (float)(r->n[1] * jn + r->jt[1]), (float)(r->n[2] * jn + r->jt[2])};
                float *out = impulse + 3 * e;
                if (si == lower) out[0] = J[0], out[1] = J[1], out[2] = J[2];
                else out[0] = -J[0], out[1] = -J[1], out[2] = -J[2];
            }
        }
    /* start[s] is now the end of slot s's run, the beginning of slot s + 1's */
    if (h == 0) {
        for (int s = s1 - 1; s > 0; s--) start[s] = start[s - 1];
        start[0] = 0;
    } else if (s1 > s0) {
        for (int s = s1; s > s0; s--) start[s] = start[s - 1];
        start[s0] = k->count0;
    }
}

/* the two halves' jobs on both threads when there are enough pairs to be worth it (the same results
 * either way) */
static void warm_halves(par_fn fn, warm_job *k)
{
    if (k->base[3] >= CHUNKED_PARTICLES) par_for(fn, k, 2);
    else fn(k, 0), fn(k, 1);
}

/* the table's room and k's places of the lists; then the kept pairs' lower slots (warm_slots, in
 * PC_SEARCH_CHUNKS chunks) and warm_keep */
static void warm_prepare(imp_world *w, particle_coupling *p, warm_job *job)
{
    pc_warm *wm = &p->warm;
    const idtable *ids = &w->particles->ids;
    if (ids->slots + 1 > wm->start_cap) {
        wm->start_cap = ids->slots + 1 + ids->slots / 2;
        wm->start = ids_grow(wm->start, sizeof(int), (size_t)wm->start_cap);
    }
    wm->slots = ids->slots;
    warm_job k = {.ids = ids, .p = p, .split = wm->slots / 2};
    for (int g = 0; g < 3; g++) k.base[g + 1] = k.base[g] + p->group[g].pair_count;
    for (int g = 0; g < 3; g++)
        for (int c = 0, at = k.base[g]; c < PC_SEARCH_CHUNKS; c++) k.at[g][c] = at, at += p->group[g].seg_count[c];
    if (k.base[3] > wm->pair_slot_cap) {
        wm->pair_slot_cap = k.base[3] + k.base[3] / 2;
        wm->pair_slot = ids_grow(wm->pair_slot, sizeof(uint32_t), (size_t)wm->pair_slot_cap);
        wm->pair_index = ids_grow(wm->pair_index, sizeof(uint32_t), (size_t)wm->pair_slot_cap);
    }
    *job = k;
}

/* the table from the pairs' final impulses (warm_prepare's k, after warm_slots) */
static void warm_keep(particle_coupling *p, warm_job *job)
{
    pc_warm *wm = &p->warm;
    warm_job k = *job;
    warm_halves(warm_count, &k);
    k.count0 = wm->start[k.split];
    const int count = k.count0 + (wm->slots > k.split ? wm->start[wm->slots] : 0);
    if (count > wm->cap) {
        wm->cap = count + count / 2;
        wm->lower = ids_grow(wm->lower, sizeof(imp_id), (size_t)wm->cap);
        wm->higher = ids_grow(wm->higher, sizeof(imp_id), (size_t)wm->cap);
        wm->impulse = ids_grow(wm->impulse, 3 * sizeof(float), (size_t)wm->cap);
    }
    warm_halves(warm_fill, &k);
    wm->count = count;
}

/* the pair of grains a, b (xa, xb: their search data), which end within reach of each other (d2: their
 * squared distance at the end) or may have crossed on the way: a contact with its normal and gap at
 * the start, when they are within reach or did cross (their closest approach over the step);
 * particles of one cloth or hair only if it self-collides and they lie more than twice their radii
 * apart at rest */
INLINE void meet_pair(const imp_world *w, const particle_coupling *p, pc_found *out, const pc_grain *a, const pc_grain *b,
                      imp_vec3 xa, imp_vec3 xb, double d2, double R, double h, double rest_speed)
{
    const double reach = R * (1 + NEAR_FRACTION / 2);
    const imp_vec3 d0 = v3_sub(v3_load(a->x0), v3_load(b->x0));
    if (d2 >= reach * reach) {
        const imp_vec3 move = v3_sub(v3_sub(xa, xb), d0);
        const double mm = v3_dot(move, move);
        if (!(mm > 0)) return;
        double s = -v3_dot(d0, move) / mm;
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        const imp_vec3 dc = v3_mad(d0, move, s);
        if (v3_dot(dc, dc) >= R * R) return;
    }
    if (a->owner != 0 && a->owner == b->owner && !cloth_self_pair(w, a->owner - 1, a->vertex, b->vertex, 2 * R)) return;
    const double l0 = v3_len(d0);
    imp_vec3 n = v3(0, 1, 0);
    if (l0 > 1e-9 * R) n = v3_scale(d0, 1 / l0);
    else if (d2 > 1e-18 * R * R) n = v3_scale(v3_sub(xa, xb), 1 / sqrt(d2));
    const int i = a->particle, j = b->particle;
    const int g = group_of(p, i, j);
    if (out->count[g] == out->cap[g]) {
        out->cap[g] = out->cap[g] ? 2 * out->cap[g] : 256;
        out->pair[g] = ids_grow(out->pair[g], sizeof(pc_pair), (size_t)out->cap[g]);
    }
    pc_pair *r = &out->pair[g][out->count[g]++];
    r->i = i, r->jx = (uint32_t)j;
    r->n[0] = (float)n.x, r->n[1] = (float)n.y, r->n[2] = (float)n.z;
    r->jn = 0, r->jt[0] = r->jt[1] = r->jt[2] = 0;
    const double mu = sqrt(a->mu * b->mu);
    const imp_vec3 d = v3_sub(v3_load(a->v), v3_load(b->v));
    double target, mu_c;
    normal_target(w, n, d, false, l0 - R, a->e > b->e ? a->e : b->e, mu, mu, h, &target, &mu_c);
    r->target = (float)target, r->mu = (float)mu_c;
    if (-v3_dot(n, d) > rest_speed) r->jx |= PC_IMPACT;
    warm_lookup(p, r, n, a->id, b->id);
}

/* the 13 neighbour cells after a cell (the third coordinate slowest), and the cell itself: each pair once */
static const int HALF_STENCIL[14][3] = {{0, 0, 0},   {1, 0, 0},  {-1, 1, 0}, {0, 1, 0},  {1, 1, 0},
                                        {-1, -1, 1}, {0, -1, 1}, {1, -1, 1}, {-1, 0, 1}, {0, 0, 1},
                                        {1, 0, 1},   {-1, 1, 1}, {0, 1, 1},  {1, 1, 1}};

/* HALF_STENCIL's rows: the first and last of its cells that lie in one row of the dense grid */
static const int DENSE_RUN[5][2] = {{0, 1}, {2, 4}, {5, 7}, {8, 10}, {11, 13}};

static inline uint32_t cell_hash(int32_t x, int32_t y, int32_t z, uint32_t mask)
{
    return ((uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u ^ (uint32_t)z * 83492791u) & mask;
}

/* The grid of the pair search: cells as wide as the largest reach, their coordinates along the axes
 * axis[0..2] (the one nearest gravity last). Over the particles' bounds when that takes at most four
 * cells a particle, else hashed into 2^k >= 2 m buckets (a key then holds several cells: the search
 * compares cells). The dense grid has a border of empty cells (one on both sides along the first
 * two axes, one above along the last), so every cell of a particle's stencil is in the table and
 * its key is the particle's key plus a fixed offset; a cell's key is its index, the last coordinate
 * slowest. */
typedef struct pair_grid {
    bool dense;
    int axis[3];
    int32_t n[3];        /* dense: cells along each axis, the border included */
    double lo[3], inv;   /* the grid's corner and 1 / cell width */
    uint32_t mask;       /* hashed */
    uint32_t size;       /* keys */
    int32_t offset[14];  /* dense: the key of HALF_STENCIL's cell s less the particle's */
} pair_grid;

static inline uint32_t grid_key(const pair_grid *g, int32_t a, int32_t b, int32_t c)
{
    if (g->dense) return (uint32_t)a + (uint32_t)g->n[0] * ((uint32_t)b + (uint32_t)g->n[1] * (uint32_t)c);
    return cell_hash(a, b, c, g->mask);
}

/* The search in PC_SEARCH_CHUNKS chunks of the particles in key order: each chunk's pairs go to its own
 * lists (pc_found), which are joined in chunk order, so the pairs and their order are those of one
 * pass over all particles, whichever thread ran which chunk. */
typedef struct pair_search {
    const imp_world *w;
    particle_coupling *p;
    const pair_grid *g;
    const double *x, *x0, *v;
    double h, rest_speed;
    int m;
    double *data[PAIR_DATA]; /* by place in key order: end position x, y, z, radius, path length */
    /* search_bounds, by chunk of the particles: how many take part, their greatest radius, their bounds;
     * then where the chunk's particles begin in p->order */
    int count[PAR_CHUNKS], at[PAR_CHUNKS];
    double rmax[PAR_CHUNKS], lo[PAR_CHUNKS][3], hi[PAR_CHUNKS][3];
} pair_search;

/* a particle that takes part in the pair search: not on a curve, a radius, a finite end position */
static inline bool search_takes(const imp_world *w, int i)
{
    const double *x = w->particles->x + 3 * i;
    return w->particles->motion[i] != IMP_CURVE && w->particles->radius[i] > 0 && v3_finite(v3_load(x));
}

static void search_bounds(void *ctx, int chunk)
{
    pair_search *k = ctx;
    const imp_world *w = k->w;
    const double *x = w->particles->x, *rad = w->particles->radius;
    double rmax = 0, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    int from, to, m = 0;
    par_range(w->particles->ids.count, chunk, &from, &to);
    for (int i = from; i < to; i++) {
        if (!search_takes(w, i)) continue;
        rmax = rad[i] > rmax ? rad[i] : rmax;
        for (int a = 0; a < 3; a++) lo[a] = lesser(lo[a], x[3 * i + a]), hi[a] = greater(hi[a], x[3 * i + a]);
        m++;
    }
    k->count[chunk] = m, k->rmax[chunk] = rmax;
    memcpy(k->lo[chunk], lo, sizeof lo), memcpy(k->hi[chunk], hi, sizeof hi);
}

/* the particles that take part, in p->order, with their grid cells and keys */
static void search_cells(void *ctx, int chunk)
{
    const pair_search *k = ctx;
    particle_coupling *p = k->p;
    const pair_grid *g = k->g;
    int from, to;
    par_range(k->w->particles->ids.count, chunk, &from, &to);
    const int32_t pad[3] = {g->dense, g->dense, 0};
    for (int i = from, t = k->at[chunk]; i < to; i++) {
        if (!search_takes(k->w, i)) continue;
        p->order[t] = i;
        for (int c = 0; c < 3; c++) /* >= 0 */
            p->cell_of[t][c] = (int32_t)lesser((k->x[3 * i + g->axis[c]] - g->lo[c]) * g->inv, 2e9) + pad[c];
        p->bucket_of[t] = grid_key(g, p->cell_of[t][0], p->cell_of[t][1], p->cell_of[t][2]);
        t++;
    }
}

/* the particles' search data copied in key order (q: their place in it) */
static void search_copy(void *ctx, int chunk)
{
    const pair_search *k = ctx;
    particle_coupling *p = k->p;
    const imp_world *w = k->w;
    const double *rad = w->particles->radius;
    int lo, hi;
    par_range(k->m, chunk, &lo, &hi);
    for (int q = lo; q < hi; q++) {
        const int t = p->tmp[q], i = p->order[t];
        pc_grain *gr = &p->grain[q];
        memcpy(p->bucket_cell[q], p->cell_of[t], sizeof(int32_t[3]));
        for (int c = 0; c < 3; c++) k->data[c][q] = k->x[3 * i + c];
        k->data[3][q] = rad[i];
        k->data[4][q] = v3_len(v3_sub(v3_load(k->x + 3 * i), v3_load(k->x0 + 3 * i)));
        memcpy(gr->x0, k->x0 + 3 * i, sizeof gr->x0);
        memcpy(gr->v, k->v + 3 * i, sizeof gr->v);
        gr->im = p->im[i], gr->mu = w->particles->friction[i], gr->e = w->particles->restitution[i];
        gr->particle = i, gr->owner = p->owner[i], gr->vertex = gr->owner ? p->vertex[i] : 0;
        gr->id = particle_id(&w->particles->ids, i);
    }
}

/* the candidate q of particle q0 (data: k->data), which passed the test of search_run: the rest of the
 * pair's checks, and the pair */
static inline void search_meet(const pair_search *k, pc_found *out, int q0, int q, const int32_t *cell, double R, double d2)
{
    const particle_coupling *p = k->p;
    const int32_t *cq = p->bucket_cell[q];
    if (!k->g->dense && (cq[0] != cell[0] || cq[1] != cell[1] || cq[2] != cell[2])) return;
    const pc_grain *gi = &p->grain[q0], *gq = &p->grain[q];
    if (!(gi->im > 0) && !(gq->im > 0)) return;
    const imp_vec3 xi = v3(k->data[0][q0], k->data[1][q0], k->data[2][q0]);
    const imp_vec3 xq = v3(k->data[0][q], k->data[1][q], k->data[2][q]);
    meet_pair(k->w, p, out, gi, gq, xi, xq, d2, R, k->h, k->rest_speed);
}

/* Particle q0 against the particles [from, to) of one run of cells (cell: the cell they must lie in,
 * hashed grids alone): a candidate goes on when the two end within reach of each other, |x_q - x_q0|
 * < (r_q0 + r_q)(1 + NEAR_FRACTION / 2), or their paths over the step are long enough to have met,
 * l_q0 + l_q >= r_q0 + r_q. */
static void search_run(const pair_search *k, pc_found *out, int q0, int from, int to, const int32_t *cell)
{
    const double *X = k->data[0], *Y = k->data[1], *Z = k->data[2], *rad = k->data[3], *len = k->data[4];
    const double grow = 1 + NEAR_FRACTION / 2;
    for (int q = from; q < to; q++) {
        const double R = rad[q0] + rad[q], ex = X[q] - X[q0], ey = Y[q] - Y[q0], ez = Z[q] - Z[q0];
        const double d2 = ex * ex + ey * ey + ez * ez, reach = R * grow;
        if (d2 >= reach * reach && len[q0] + len[q] < R) continue;
        search_meet(k, out, q0, q, cell, R, d2);
    }
}

#if SPARSE_HAVE_AVX
/* search_run four candidates at a time over the runs [from[s], to[s]) in turn (a dense grid's five rows
 * of the stencil, or one cell of a hashed grid), with search_run's operations in its order (AVX alone:
 * no product fused into a sum), so the same candidates go on in the same order. The comparisons are
 * the negations of search_run's (unordered: true), as a NaN there goes on too. */
static SPARSE_AVX void search_runs_avx(const pair_search *k, pc_found *out, int q0, const int *from, const int *to, int runs,
                                       const int32_t *cell)
{
    const double *X = k->data[0], *Y = k->data[1], *Z = k->data[2], *rad = k->data[3], *len = k->data[4];
    const __m256d xi = _mm256_set1_pd(X[q0]), yi = _mm256_set1_pd(Y[q0]), zi = _mm256_set1_pd(Z[q0]);
    const __m256d ri = _mm256_set1_pd(rad[q0]), li = _mm256_set1_pd(len[q0]), grow = _mm256_set1_pd(1 + NEAR_FRACTION / 2);
    for (int s = 0; s < runs; s++) {
        const int end = to[s];
        for (int q = from[s]; q < end; q += 4) {
            /* the lanes past the run are read (the arrays hold SEARCH_PAD zeros after the last particle) but not kept */
            const __m256d x = _mm256_loadu_pd(X + q), y = _mm256_loadu_pd(Y + q), z = _mm256_loadu_pd(Z + q);
            const __m256d r = _mm256_loadu_pd(rad + q), l = _mm256_loadu_pd(len + q);
            const __m256d R = _mm256_add_pd(ri, r);
            const __m256d ex = _mm256_sub_pd(x, xi), ey = _mm256_sub_pd(y, yi), ez = _mm256_sub_pd(z, zi);
            const __m256d d2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(ex, ex), _mm256_mul_pd(ey, ey)), _mm256_mul_pd(ez, ez));
            const __m256d reach = _mm256_mul_pd(R, grow);
            const __m256d keep = _mm256_or_pd(_mm256_cmp_pd(d2, _mm256_mul_pd(reach, reach), _CMP_NGE_UQ),
                                              _mm256_cmp_pd(_mm256_add_pd(li, l), R, _CMP_NLT_UQ));
            int bits = _mm256_movemask_pd(keep);
            if (end - q < 4) bits &= (1 << (end - q)) - 1;
            if (!bits) continue;
            double Rs[4], d2s[4]; /* search_run's R and d2: the same operations */
            _mm256_storeu_pd(Rs, R), _mm256_storeu_pd(d2s, d2);
            while (bits) {
                const int b = __builtin_ctz((unsigned)bits);
                bits &= bits - 1;
                search_meet(k, out, q0, q + b, cell, Rs[b], d2s[b]);
            }
        }
    }
}
#endif

/* each particle of the chunk against those after it in its cell and all in the 13 cells after its cell */
static void search_pairs(void *ctx, int chunk)
{
    const pair_search *k = ctx;
    particle_coupling *p = k->p;
    const pair_grid *g = k->g;
    const int *start = p->cell_start;
    pc_found *out = &p->found[chunk];
    out->count[0] = out->count[1] = out->count[2] = 0;
    const int lo = (int)((long long)k->m * chunk / PC_SEARCH_CHUNKS), hi = (int)((long long)k->m * (chunk + 1) / PC_SEARCH_CHUNKS);
#if SPARSE_HAVE_AVX
    const bool avx = sparse_avx();
#endif
    for (int q0 = lo; q0 < hi; q0++) {
        const int32_t *c = p->bucket_cell[q0];
        /* dense: the stencil's cells of one row (first coordinate a - 1 .. a + 1, or a .. a + 1 in the
         * particle's own row) have consecutive keys, so each row is one run of particles; hashed:
         * cell by cell */
        if (g->dense) {
            const uint32_t key0 = grid_key(g, c[0], c[1], c[2]);
            int from[5], to[5];
            for (int s = 0; s < 5; s++) {
                from[s] = s == 0 ? q0 + 1 : start[key0 + (uint32_t)g->offset[DENSE_RUN[s][0]]];
                to[s] = start[key0 + (uint32_t)g->offset[DENSE_RUN[s][1]] + 1];
            }
#if SPARSE_HAVE_AVX
            if (avx) {
                search_runs_avx(k, out, q0, from, to, 5, c);
                continue;
            }
#endif
            for (int s = 0; s < 5; s++) search_run(k, out, q0, from[s], to[s], c);
            continue;
        }
        for (int s = 0; s < 14; s++) {
            const int32_t cell[3] = {c[0] + HALF_STENCIL[s][0], c[1] + HALF_STENCIL[s][1], c[2] + HALF_STENCIL[s][2]};
            const uint32_t b = grid_key(g, cell[0], cell[1], cell[2]);
            const int from = s == 0 ? q0 + 1 : start[b], to = start[b + 1];
#if SPARSE_HAVE_AVX
            if (avx) {
                search_runs_avx(k, out, q0, &from, &to, 1, cell);
                continue;
            }
#endif
            search_run(k, out, q0, from, to, cell);
        }
    }
}

/* the pairs; search: its chunks' counts and bounds (search_bounds, run by split_halves' first pass) */
static void meet_pairs(imp_world *w, particle_coupling *p, const double *x0, double h, imp_vec3 up, pair_search *search)
{
    const int n = w->particles->ids.count;
    reserve_order(p, n);
    pair_grid g = {0};
    pair_search k = *search;
    k.p = p, k.g = &g, k.x = w->particles->x, k.x0 = x0, k.v = w->particles->v, k.h = h, k.rest_speed = REST_SPEED(w, h);
    /* the particles that take part, their greatest radius and their bounds: the chunks' in chunk order */
    double rmax = 0, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    int m = 0;
    for (int c = 0; c < PAR_CHUNKS; c++) {
        k.at[c] = m, m += k.count[c];
        rmax = k.rmax[c] > rmax ? k.rmax[c] : rmax;
        for (int a = 0; a < 3; a++) lo[a] = lesser(lo[a], k.lo[c][a]), hi[a] = greater(hi[a], k.hi[c][a]);
    }
    k.m = m;
    if (m < 2) return;
    if (w->cloth) cloth_owners(w, p->owner, p->vertex);
    else memset(p->owner, 0, sizeof(int) * (size_t)n);
    g.inv = 1 / (2 * rmax * (1 + NEAR_FRACTION / 2));
    const double ua[3] = {fabs(up.x), fabs(up.y), fabs(up.z)};
    g.axis[2] = ua[1] >= ua[0] && ua[1] >= ua[2] ? 1 : ua[0] >= ua[2] ? 0 : 2;
    g.axis[0] = g.axis[2] == 0 ? 1 : 0, g.axis[1] = g.axis[2] == 2 ? 1 : 2;
    double cells = 1;
    for (int d = 0; d < 3; d++) {
        const int a = g.axis[d];
        g.lo[d] = lo[a];
        g.n[d] = (int32_t)fmin(floor((hi[a] - lo[a]) * g.inv) + 1, 1e9);
        cells *= g.n[d];
    }
    g.dense = cells <= 4.0 * m;
    if (g.dense) {
        g.n[0] += 2, g.n[1] += 2, g.n[2] += 1; /* the border */
        g.size = (uint32_t)g.n[0] * (uint32_t)g.n[1] * (uint32_t)g.n[2];
        for (int s = 0; s < 14; s++)
            g.offset[s] = HALF_STENCIL[s][0] + g.n[0] * (HALF_STENCIL[s][1] + g.n[1] * HALF_STENCIL[s][2]);
    } else {
        for (g.size = 64; g.size < 2 * (uint32_t)m; g.size *= 2) {}
        g.mask = g.size - 1;
    }
    if ((int)g.size + 1 > p->table_cap) {
        p->table_cap = (int)g.size + 1;
        p->cell_start = ids_grow(p->cell_start, sizeof(int), (size_t)p->table_cap);
    }
    for (int c = 0; c < PAIR_DATA; c++) k.data[c] = p->bucket_x + (size_t)c * (size_t)p->particle_cap;
    /* the particles sorted by key (counting sort), their cells and data copied alongside */
    run_chunks(search_cells, &k, n);
    int *start = p->cell_start;
    memset(start, 0, sizeof(int) * (g.size + 1));
    for (int t = 0; t < m; t++) start[p->bucket_of[t] + 1]++;
    for (uint32_t b = 0; b < g.size; b++) start[b + 1] += start[b];
    for (int t = 0; t < m; t++) p->tmp[start[p->bucket_of[t]]++] = t;
    for (uint32_t b = g.size; b > 0; b--) start[b] = start[b - 1];
    start[0] = 0;
    run_chunks(search_copy, &k, m);
    for (int c = 0; c < PAIR_DATA; c++) memset(k.data[c] + m, 0, SEARCH_PAD * sizeof(double));
    run_chunks_of(search_pairs, &k, m, PC_SEARCH_CHUNKS);
    /* each group's pairs: the chunks' lists one after another */
    for (int gr = 0; gr < 3; gr++) {
        pc_group *G = &p->group[gr];
        G->pair_count = 0;
        for (int c = 0; c < PC_SEARCH_CHUNKS; c++) {
            G->seg[c] = p->found[c].pair[gr], G->seg_count[c] = p->found[c].count[gr];
            G->pair_count += G->seg_count[c];
        }
    }
}

/* p->touched: the particles in a pair of this step (groups 0 and 1 mark particles of different halves:
 * side by side) */
static void mark_group(void *ctx, int g)
{
    particle_coupling *p = ctx;
    const pc_group *G = &p->group[g];
    PC_FOR_PAIRS(G, r) p->touched[r->i] = p->touched[pair_j(r)] = 1;
}

static void mark_pairs(particle_coupling *p, int n)
{
    memset(p->touched, 0, (size_t)n);
    if (p->group[0].pair_count + p->group[1].pair_count >= CHUNKED_PARTICLES) par_for(mark_group, p, 2);
    else mark_group(p, 0), mark_group(p, 1);
    mark_group(p, 2);
}

typedef struct collider_scan {
    imp_world *w;
    particle_coupling *p;
    const pcollide_bound *bound;
} collider_scan;

/* the colliders within reach of the particles of one chunk that are in a pair (p->touched), as (particle,
 * collider) in the chunk's list */
static void scan_colliders(void *ctx, int chunk)
{
    const collider_scan *k = ctx;
    const imp_world *w = k->w;
    particle_coupling *p = k->p;
    pc_found *out = &p->found[chunk];
    const int nc = w->colliders->ids.count;
    int lo, hi;
    par_range(w->particles->ids.count, chunk, &lo, &hi);
    out->near_count = 0;
    for (int i = lo; i < hi; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        const double r = w->particles->radius[i];
        const imp_vec3 xe = v3_load(w->particles->x + 3 * i);
        if (!pcollide_planes_near(w->pcontacts, xe, (1 + NEAR_FRACTION) * r) && !pcollide_boxes_near(w->pcontacts, xe, (1 + NEAR_FRACTION) * r))
            continue;
        for (int ci = 0; ci < nc; ci++) {
            const imp_collider_def *cd = &w->colliders->collider[ci].def;
            imp_vec3 nrm;
            if (k->bound[ci].sensor) continue; /* sensors never push (sensor.c) */
            if (pcollide_beyond_bound(&k->bound[ci], cd, xe, (1 + NEAR_FRACTION) * r) ||
                pcollide_distance(cd, xe, &nrm) - r > NEAR_FRACTION * r)
                continue;
            if (out->near_count == out->near_cap) {
                out->near_cap = out->near_cap ? 2 * out->near_cap : 256;
                out->near = ids_grow(out->near, 2 * sizeof(int), (size_t)out->near_cap);
            }
            out->near[2 * out->near_count] = i, out->near[2 * out->near_count + 1] = ci;
            out->near_count++;
        }
    }
}

/* the colliders near the particles in a pair contact (p->touched): the ground and walls stay out of reach
 * of a push. The chunks find them on both threads; their rows are made in particle order. */
static void meet_colliders(imp_world *w, particle_coupling *p, const double *x0, double h, imp_vec3 up)
{
    const int nc = w->colliders->ids.count, n = w->particles->ids.count;
    if (nc == 0 || n <= 0) return;
    collider_scan k = {w, p, pcollide_bounds(w)};
    run_chunks(scan_colliders, &k, n);
    for (int c = 0; c < PAR_CHUNKS; c++)
        for (int e = 0; e < p->found[c].near_count; e++) {
            const int i = p->found[c].near[2 * e];
            const imp_collider_def *cd = &w->colliders->collider[p->found[c].near[2 * e + 1]].def;
            const double r = w->particles->radius[i];
            const imp_vec3 xs = v3_load(x0 + 3 * i), xe = v3_load(w->particles->x + 3 * i);
            imp_vec3 nrm;
            const double gap0 = pcollide_distance(cd, xs, &nrm) - r;
            int row_k;
            pc_row *row = side_new(p, p->half[i], i, &row_k);
            row->n = nrm, row->limit = v3_dot(nrm, xs) - gap0;
            row->kn = 1 / p->im[i];
            p->side[row_k].height = v3_dot(up, xe);
            normal_target(w, nrm, v3_load(w->particles->v + 3 * i), false, gap0, cd->restitution, cd->friction, cd->friction, h,
                          &row->target, &row->mu);
        }
}

/* each group's side rows lowest first along gravity (in the order found without gravity) */
static void sort_sides(particle_coupling *p, imp_vec3 up)
{
    if (!(v3_dot(up, up) > 0)) return;
    for (int g = 0; g < 3; g++) {
        pc_group *G = &p->group[g];
        const int ns = G->side_count;
        if (ns < 2) continue;
        reserve_order(p, ns);
        for (int k = 0; k < ns; k++) p->order[k] = k, p->key[k] = order_key(p->side[G->side[k].side].height);
        radix_sort(p->key, p->order, p->tmp, ns);
        for (int t = 0; t < ns; t++) G->spare[t] = G->side[p->order[t]];
        pc_row *swap = G->side;
        G->side = G->spare, G->spare = swap;
    }
}

/* ---- positions, and the bodies' share ----------------------------------------------------------------------- */

/* p->touched: the particles in a row of this step (those in a pair are marked already when pairs_marked) */
static void mark_touched(particle_coupling *p, int n, bool pairs_marked)
{
    if (!pairs_marked) mark_pairs(p, n);
    for (int g = 0; g < 3; g++) {
        const pc_group *G = &p->group[g];
        for (int t = 0; t < G->side_count; t++) p->touched[G->side[t].i] = 1;
    }
}

/* The stage's passes over the particles, in chunks of them on both threads (each particle's terms of
 * the energy sums kept apart and summed in particle order after: the same sums as one pass) */
typedef struct particle_pass {
    imp_world *w;
    particle_coupling *p;
    const double *x0; /* [x | v] at the start of the step (3 each) */
    double h;
    double s;         /* hold_projection: the fraction of the projection kept */
    warm_job *warm;   /* place_and_slot: the warm table's job (or NULL) */
} particle_pass;

/* New positions of the particles in contact (p->touched): one that touched a body on the way at the
 * touch (on the body as it ended), moved on by the rest of the step at its velocity relative to the
 * body; the others from the start of the step at their new velocities, x0 + h v. Each one's place is
 * kept in p->x_placed. */
static void place_particles(const particle_pass *k, int lo, int hi)
{
    particle_coupling *p = k->p;
    double *x = k->w->particles->x;
    const double *v = k->w->particles->v, *x0 = k->x0, h = k->h;
    for (int i = lo; i < hi; i++) {
        if (!p->touched[i]) continue;
        if (p->im[i] > 0 && p->first[i] >= 0) {
            const pc_side *s = &p->side[p->first[i]];
            const imp_vec3 u = v3_sub(v3_load(v + 3 * i), side_velocity_at(p, s));
            v3_store(x + 3 * i, v3_mad(s->c, u, (1 - s->s) * h));
        } else if (p->im[i] > 0) {
            v3_store(x + 3 * i, v3_mad(v3_load(x0 + 3 * i), v3_load(v + 3 * i), h));
        }
        memcpy(p->x_placed + 3 * i, x + 3 * i, 3 * sizeof(double));
    }
}

/* one of PC_SEARCH_CHUNKS chunks of the particles placed, and (the pairs' impulses are final after the
 * velocity sweeps) the warm table's slots of the pairs of the search's chunk of that number: one job */
static void place_and_slot(void *ctx, int chunk)
{
    const particle_pass *k = ctx;
    const int n = k->w->particles->ids.count;
    place_particles(k, (int)((long long)n * chunk / PC_SEARCH_CHUNKS), (int)((long long)n * (chunk + 1) / PC_SEARCH_CHUNKS));
    if (k->warm) warm_slots(k->warm, chunk);
}

static void project_sides(particle_coupling *p, double *x, int g)
{
    const pc_group *G = &p->group[g];
    for (int t = 0; t < G->side_count; t++) {
        const pc_row *r = &G->side[t];
        const double C = v3_dot(r->n, v3_load(x + 3 * r->i)) - r->limit;
        if (C < 0 && p->im[r->i] > 0) v3_accum(x + 3 * r->i, v3_scale(r->n, -C));
    }
}

/* one sweep of group g's pair constraints |x_i - x_j| >= r_i + r_j (along the line of centres as it
 * is, not the contact's normal: a pair sliding past each other is not pushed apart); shock: the lower
 * one of a steep pair stands still */
static void project_pairs(particle_coupling *p, double *x, const double *radius, int g, bool shock, imp_vec3 up)
{
    const pc_group *G = &p->group[g];
    PC_FOR_PAIRS(G, r) {
        const int i = r->i, j = pair_j(r);
        const imp_vec3 d = v3_sub(v3_load(x + 3 * i), v3_load(x + 3 * j));
        const double d2 = v3_dot(d, d), limit = (float)(radius[i] + radius[j]); /* (the search's, in single precision) */
        if (d2 >= limit * limit) continue;
        double wi = p->im[i], wj = p->im[j];
        if (shock) shock_weights(p, r, up, &wi, &wj);
        if (!(wi + wj > 0)) continue;
        const double len = sqrt(d2);
        const imp_vec3 n = len > 1e-9 * limit ? v3_scale(d, 1 / len) : v3(r->n[0], r->n[1], r->n[2]);
        const double lambda = (limit - len) / (wi + wj);
        v3_accum(x + 3 * i, v3_scale(n, lambda * wi));
        v3_accum(x + 3 * j, v3_scale(n, -lambda * wj));
    }
}

/* ---- the energy the projection may add ----------------------------------------------------------------------- */

/* A particle's kinetic and gravitational energy m (|v|^2 / 2 - g . x) */
static inline double particle_energy(double m, imp_vec3 g, imp_vec3 x, imp_vec3 v)
{
    return m * (0.5 * v3_dot(v, v) - v3_dot(g, x));
}

/* The energy of the particles in contact that answer (p->touched, im > 0) before this stage: at the start
 * of the step (X0: [x | v], 3 each) or after the particle stage, whichever is greater. energy_terms
 * puts each particle's two terms in p->energy, energy_before sums them. */
static void energy_terms(void *ctx, int chunk)
{
    const particle_pass *k = ctx;
    const particle_coupling *p = k->p;
    const imp_world *w = k->w;
    const int n = w->particles->ids.count;
    const imp_vec3 g = w->settings.gravity;
    const double *x = w->particles->x, *v = w->particles->v, *m = w->particles->mass, *X0 = k->x0;
    int lo, hi;
    par_range(n, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        p->energy[2 * i] = particle_energy(m[i], g, v3_load(X0 + 3 * i), v3_load(X0 + 3 * (n + i)));
        p->energy[2 * i + 1] = particle_energy(m[i], g, v3_load(x + 3 * i), v3_load(v + 3 * i));
    }
}

static double energy_before(const imp_world *w, const particle_coupling *p)
{
    const int n = w->particles->ids.count;
    double start = 0, now = 0;
    for (int i = 0; i < n; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        start += p->energy[2 * i], now += p->energy[2 * i + 1];
    }
    return start > now ? start : now;
}

/* The projection is no force: it moves particles and changes no velocity, and where it lifts them
 * (an overlap closed against the ground, the upper particle of a steep pair moved in the shock
 * sweep) it adds potential energy that nothing paid for. So it may raise the potential energy of the
 * particles in contact by at most what the step took out of them: budget = e_before + W - E_placed,
 * E_placed their energy where the velocities put them (p->x_placed), e_before their energy at the start
 * of the step, or after the particle stage if its forces raised it (energy_before), W the work the bodies
 * did on them through the contacts, sum J . u (J a side row's impulse on its particle, u the body
 * surface's velocity at the contact: a paddle that shoves the particles pays for their energy, and
 * what pushing them apart lifts them by on top of that). A projection that rises
 * by more is taken back along its path, x = x_placed + s (x - x_placed) with s = budget / rise (the
 * potential energy in uniform gravity is linear in x, so the rise is s times as much); what it leaves
 * open is closed in later steps, as their contacts pay for it. The sides' projection comes after,
 * whole: no particle is left in a body or a collider. */
static void hold_terms(void *ctx, int chunk)
{
    const particle_pass *k = ctx;
    const particle_coupling *p = k->p;
    const imp_world *w = k->w;
    const imp_vec3 g = w->settings.gravity;
    const double *x = w->particles->x, *xp = p->x_placed, *v = w->particles->v, *m = w->particles->mass;
    int lo, hi;
    par_range(w->particles->ids.count, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        const imp_vec3 a = v3_load(xp + 3 * i);
        p->energy[2 * i] = particle_energy(m[i], g, a, v3_load(v + 3 * i));
        p->energy[2 * i + 1] = m[i] * v3_dot(g, v3_sub(v3_load(x + 3 * i), a));
    }
}

static void hold_back(void *ctx, int chunk)
{
    const particle_pass *k = ctx;
    const particle_coupling *p = k->p;
    double *x = k->w->particles->x;
    const double *xp = p->x_placed;
    int lo, hi;
    par_range(k->w->particles->ids.count, chunk, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        const imp_vec3 a = v3_load(xp + 3 * i);
        v3_store(x + 3 * i, v3_mad(a, v3_sub(v3_load(x + 3 * i), a), k->s));
    }
}

static void hold_projection(particle_pass *k, double e_before)
{
    imp_world *w = k->w;
    const particle_coupling *p = k->p;
    const int n = w->particles->ids.count;
    double placed = 0, rise = 0, work = 0;
    run_chunks(hold_terms, k, n);
    for (int i = 0; i < n; i++) {
        if (!p->touched[i] || !(p->im[i] > 0)) continue;
        placed += p->energy[2 * i];
        rise -= p->energy[2 * i + 1];
    }
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < p->group[c].side_count; t++) {
            const pc_row *r = &p->group[c].side[t];
            const pc_side *sd = &p->side[r->side];
            if (sd->body >= 0) work += v3_dot(v3_mad(r->jt, r->n, r->jn), side_velocity_at(p, sd));
        }
    const double budget = e_before + work - placed;
    if (!(rise > budget)) return;
    k->s = budget > 0 ? budget / rise : 0;
    run_chunks(hold_back, k, n);
}

/* the bodies take the opposite of what the rows of moving bodies (all in group 2) gave the particles, at
 * the contact points */
static void bodies_take(imp_world *w, const particle_coupling *p)
{
    const pc_group *G = &p->group[2];
    for (int t = 0; t < G->side_count; t++) {
        const pc_row *r = &G->side[t];
        if (!r->moves) continue;
        const pc_side *s = &p->side[r->side];
        const imp_vec3 J = v3_mad(r->jt, r->n, r->jn);
        if (v3_dot(J, J) > 0) imp_body_apply_impulse(w, ids_of(&w->bodies->ids, s->body), v3_scale(J, -1), s->at);
    }
}

/* ---- the solve on two threads -------------------------------------------------------------------------------- */

/* The rows fall into three groups: 0, those whose particles all lie on one side of a vertical plane
 * (the median of the particles, along the wider horizontal axis), 1, those on the other side, and 2,
 * the rest: pairs across the plane and every row of a moving body (a body may touch both halves).
 * Groups 0 and 1 share no particle, so a sweep runs them at the same time (parallel.c), then group 2;
 * each group keeps its rows' order. Which rows go where depends on the particles alone, so the result
 * is the same on one thread or two. With fewer than PARALLEL_PARTICLES particles every row is in
 * group 2. */
typedef struct split_job {
    imp_world *w;
    particle_coupling *p;
    pair_search *search; /* the pair search's bounds, found in the same pass (search_bounds), or NULL */
    double lo[PAR_CHUNKS][3], hi[PAR_CHUNKS][3]; /* each chunk's bounds of the particles (finite coordinates) */
    int bins[PAR_CHUNKS][256];                   /* each chunk's histogram along the axis */
    int axis;
    double lower, upper, scale, split; /* the axis's bounds, bins per metre, the plane */
} split_job;

/* the particles' inverse masses in the solve and first touches unset, and the chunk's bounds */
static void split_bounds(void *ctx, int chunk)
{
    split_job *k = ctx;
    particle_coupling *p = k->p;
    const imp_world *w = k->w;
    const double *x = w->particles->x;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    int from, to;
    par_range(w->particles->ids.count, chunk, &from, &to);
    for (int i = from; i < to; i++) {
        p->im[i] = w->particles->motion[i] == IMP_DYNAMIC && !p->driven[i] ? w->particles->inv_mass[i] : 0;
        p->first[i] = -1;
        for (int a = 0; a < 3; a++)
            if (isfinite(x[3 * i + a])) lo[a] = lesser(lo[a], x[3 * i + a]), hi[a] = greater(hi[a], x[3 * i + a]);
    }
    memcpy(k->lo[chunk], lo, sizeof lo), memcpy(k->hi[chunk], hi, sizeof hi);
    if (k->search) search_bounds(k->search, chunk);
}

static void split_count(void *ctx, int chunk)
{
    split_job *k = ctx;
    const double *x = k->w->particles->x, lower = k->lower, upper = k->upper;
    const int axis = k->axis;
    int *bins = k->bins[chunk];
    memset(bins, 0, sizeof k->bins[chunk]);
    int from, to;
    par_range(k->w->particles->ids.count, chunk, &from, &to);
    for (int i = from; i < to; i++)
        if (x[3 * i + axis] >= lower && x[3 * i + axis] <= upper) bins[(int)((x[3 * i + axis] - lower) * k->scale)]++;
}

static void split_assign(void *ctx, int chunk)
{
    const split_job *k = ctx;
    const double *x = k->w->particles->x;
    int from, to;
    par_range(k->w->particles->ids.count, chunk, &from, &to);
    for (int i = from; i < to; i++) k->p->half[i] = x[3 * i + k->axis] < k->split ? 0 : 1; /* (NaN: 1) */
}

/* p->im and p->first set, and the halves split: in chunks of the particles on both threads (the bounds
 * are the lesser and greater of the chunks' in chunk order, the histogram their sum: those of one pass);
 * search (or NULL): the pair search's bounds found in the first pass too (they read the particles alone) */
static void split_halves(imp_world *w, particle_coupling *p, imp_vec3 up, pair_search *search)
{
    const int n = w->particles->ids.count;
    split_job job, *k = &job;
    k->w = w, k->p = p, k->search = search;
    run_chunks(split_bounds, k, n);
    if (n < PARALLEL_PARTICLES) {
        memset(p->half, 2, (size_t)n);
        return;
    }
    /* the horizontal axis the particles spread widest along, and their median on it (a histogram) */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int c = 0; c < PAR_CHUNKS; c++)
        for (int a = 0; a < 3; a++) lo[a] = lesser(lo[a], k->lo[c][a]), hi[a] = greater(hi[a], k->hi[c][a]);
    const double ua[3] = {fabs(up.x), fabs(up.y), fabs(up.z)};
    int axis = -1;
    for (int a = 0; a < 3; a++) {
        if (ua[a] > 0.9) continue;
        if (axis < 0 || hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
    }
    if (!(hi[axis] > lo[axis])) {
        memset(p->half, 2, (size_t)n);
        return;
    }
    k->axis = axis, k->lower = lo[axis], k->upper = hi[axis], k->scale = 255.999 / (hi[axis] - lo[axis]);
    run_chunks(split_count, k, n);
    int b = 0;
    for (int sum = 0; b < 255; b++) {
        for (int c = 0; c < PAR_CHUNKS; c++) sum += k->bins[c][b];
        if (sum >= n / 2) break;
    }
    k->split = lo[axis] + (b + 1) / k->scale;
    run_chunks(split_assign, k, n);
}

enum { SWEEP_WARM, SWEEP_VELOCITY, SWEEP_SHOCK, SWEEP_POSITION, SWEEP_POSITION_SHOCK, SWEEP_SIDES };

typedef struct sweep_job {
    particle_coupling *p;
    double *v, *x;
    const double *radius;
    imp_vec3 up;
    int kind;
} sweep_job;

static void sweep_group(void *ctx, int g)
{
    const sweep_job *k = ctx;
    switch (k->kind) {
    case SWEEP_WARM: warm_apply(k->p, k->v, g); break;
    case SWEEP_VELOCITY: sweep_velocities(k->p, k->v, k->up, g, false); break;
    case SWEEP_SHOCK: sweep_velocities(k->p, k->v, k->up, g, true); break;
    case SWEEP_POSITION:
        project_sides(k->p, k->x, g);
        project_pairs(k->p, k->x, k->radius, g, false, k->up);
        break;
    case SWEEP_POSITION_SHOCK:
        project_sides(k->p, k->x, g);
        project_pairs(k->p, k->x, k->radius, g, true, k->up);
        break;
    default: project_sides(k->p, k->x, g); break;
    }
}

/* one sweep of every row: the two halves side by side, then the rows across */
static void sweep(imp_world *w, particle_coupling *p, imp_vec3 up, int kind)
{
    sweep_job k = {p, w->particles->v, w->particles->x, w->particles->radius, up, kind};
    const pc_group *G = p->group;
    if (G[0].side_count + G[0].pair_count + G[1].side_count + G[1].pair_count > 0) par_for(sweep_group, &k, 2);
    sweep_group(&k, 2);
}

/* ---- the stage ------------------------------------------------------------------------------------------------ */

void particle_contacts_step(const imp_step *st)
{
    imp_world *w = st->w;
    const double t0 = step_clock_ms();
    const int n = w->particles->ids.count;
    const bool pairs = w->settings.particle_collisions;
    if (n == 0 || (!w->attach && !pairs && w->shapes->ids.count == 0)) return;
    particle_coupling *p = coupling_get(w);
    reserve_particles(p, n);
    memset(p->driven, 0, (size_t)n);
    attach_follow(w, st, p->driven);
    p->side_count = 0;
    int rows = 0;
    warm_job warm;
    for (int g = 0; g < 3; g++) {
        p->group[g].side_count = p->group[g].pair_count = 0;
        memset(p->group[g].seg_count, 0, sizeof p->group[g].seg_count);
    }
    if (pairs || w->shapes->ids.count > 0) {
        const double gl = v3_len(w->settings.gravity);
        const imp_vec3 up = gl > 0 ? v3_scale(w->settings.gravity, -1 / gl) : v3(0, 0, 0);
        const double *x0 = w->particle_system->state0; /* [x | v] at the start of the step */
        pair_search search = {.w = w};
        split_halves(w, p, up, pairs ? &search : NULL);
        if (w->shapes->ids.count > 0) meet_bodies(w, p, x0, st, up);
        if (pairs) {
            meet_pairs(w, p, x0, st->dt, up, &search);
            mark_pairs(p, n);
            meet_colliders(w, p, x0, st->dt, up);
        }
        for (int g = 0; g < 3; g++) rows += p->group[g].side_count + p->group[g].pair_count;
        if (pairs) warm_prepare(w, p, &warm);
        if (rows > 0) {
            sort_sides(p, up);
            mark_touched(p, n, pairs);
            particle_pass pass = {w, p, x0, st->dt, 1, pairs ? &warm : NULL};
            run_chunks(energy_terms, &pass, n);
            const double e_before = energy_before(w, p);
            sweep(w, p, up, SWEEP_WARM);
            for (int k = 0; k < VELOCITY_SWEEPS; k++) sweep(w, p, up, SWEEP_VELOCITY);
            sweep(w, p, up, SWEEP_SHOCK);
            run_chunks_of(place_and_slot, &pass, n, PC_SEARCH_CHUNKS);
            for (int k = 0; k < POSITION_SWEEPS; k++) sweep(w, p, up, SWEEP_POSITION);
            sweep(w, p, up, SWEEP_POSITION_SHOCK);
            hold_projection(&pass, e_before);
            sweep(w, p, up, SWEEP_SIDES);
        }
        bodies_take(w, p);
    }
    if (pairs) warm_keep(p, &warm); /* (no rows: no pairs, no slots to find) */
    else p->warm.slots = 0;
    st->profile->particle_contacts = rows;
    st->profile->collide += step_clock_ms() - t0;
}

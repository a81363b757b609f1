/* query_cast.c: shape casts. A convex shape (sphere, capsule, box, hull) at a fixed orientation is swept
 * along the segment from -> to; the answer is the first fraction t in 0..1 at which it touches a shape
 * of the world, the exact surfaces (no contact skin), with the point and the normal there.
 *
 * Conservative advancement (Mirtich 1996; Box2D's and Jolt's shape casts) on the exact distance: with
 * the shape at x(t) = from + t d, d = to - from, GJK (gjk.c) gives the distance dist(t) to a candidate
 * and the unit normal n from the candidate toward the shape. Under a translation the distance between
 * two convex sets is a convex function of t with slope -d.n, so its tangent line stays below it:
 *   dist(t + dt) >= dist(t) - (-d.n) dt  >  0   for every dt < dist(t) / (-d.n),
 * and the step t += dist / (-d.n) is Newton's step on dist(t) = 0 that never passes the first touch.
 * It stops when dist <= tol (the touch), when -d.n <= 0 (the sweep moves away: never touches), or past
 * the end of the segment (or past the best hit so far). On flat features it lands on the touch in one
 * step (a sphere onto a plane, a box onto a face); near a curved one it converges quadratically, and at
 * a tangential graze (a double root) it halves the gap in t every step.
 *   tol = 1e-10 of the smaller of the two shapes' sizes, and no less than 1e-14 of the coordinates'
 *         size (the distance's rounding): the fraction is within tol / |d.n| of the exact one.
 * A plane is analytic: the shape's support point against the normal reaches it at
 *   t = (n.s(-n) - offset) / (-n.d).
 * A mesh is its triangles, each a convex of three points, one-sided as the narrow phase is: a touch
 * whose normal is not on the triangle's front side is not a hit.
 * A shape the sweep starts in (dist <= 0 at t = 0) is hit at fraction 0 with the narrow phase's normal
 * and deepest point. Candidates are the shapes whose bounds (the broad phase's, skin included) the
 * sweep of the shape's bounds crosses: a slab test of the segment against the candidate's bounds grown
 * by the shape's. */
#include <math.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "gjk.h"
#include "narrowphase.h"
#include "query.h"
#include "shape.h"
#include "world_parts.h"

/* Newton steps per candidate: a graze halves the gap in t each step, so 64 reach 2^-64 of the segment */
#define CAST_MAX_ITERATIONS 64

/* what a touch found: its fraction, normal (out of the candidate), point (on the candidate), and
 * whether the sweep started in the candidate (normal and point then come from the narrow phase) */
typedef struct cast_touch {
    double t;
    imp_vec3 normal, point;
    bool start_overlap;
} cast_touch;

/* the swept shape placed at origin o: its geom (bounds too) */
static void cast_place(shape *s, imp_quat q, imp_vec3 o, geom *g)
{
    const imp_mat3 R = quat_to_m3(q);
    s->wrot = m3_mul(R, quat_to_m3(s->lq));
    s->wpos = v3_add(o, m3_mul_v(R, s->lpos));
    shape_geom(s, g);
    shape_geom_bounds(g);
}

/* a geom as GJK's core and radius (core: storage for a capsule's segment) */
static const double cast_origin[3] = {0, 0, 0};
static void cast_convex_of(const geom *g, gjk_convex *c, double core[6])
{
    memset(c, 0, sizeof *c);
    c->p = g->p, c->R = g->R;
    switch (g->type) {
    case IMP_SHAPE_SPHERE: c->v = cast_origin, c->nv = 1, c->radius = g->radius; break;
    case IMP_SHAPE_CAPSULE:
        core[0] = core[2] = core[3] = core[5] = 0;
        core[1] = -g->half_height, core[4] = g->half_height;
        c->v = core, c->nv = 2, c->radius = g->radius;
        break;
    case IMP_SHAPE_BOX: c->half = g->half; break;
    default: c->v = g->hull->v, c->nv = g->hull->nv; break;
    }
}

static double half_diagonal(imp_vec3 lo, imp_vec3 hi) { return 0.5 * v3_len(v3_sub(hi, lo)); }

/* whether the segment o + t d, t in [0, tmax], meets the box [lo, hi] */
static bool cast_slab(imp_vec3 lo, imp_vec3 hi, imp_vec3 o, imp_vec3 d, double tmax)
{
    double t0 = 0, t1 = tmax;
    const double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z}, l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    for (int a = 0; a < 3; a++) {
        if (dd[a] == 0) {
            if (oo[a] < l[a] || oo[a] > h[a]) return false;
            continue;
        }
        double ta = (l[a] - oo[a]) / dd[a], tb = (h[a] - oo[a]) / dd[a];
        if (ta > tb) {
            const double x = ta;
            ta = tb, tb = x;
        }
        t0 = fmax(t0, ta), t1 = fmin(t1, tb);
        if (t0 > t1) return false;
    }
    return true;
}

/* the first t in [0, limit] at which A (a0 moved by t d) touches B, by conservative advancement (top of
 * the file); size_a, size_b: their sizes, scale: the coordinates' */
static bool cast_advance(const gjk_convex *a0, imp_vec3 d, const gjk_convex *b, double size_a, double size_b, double scale,
                         double limit, cast_touch *out)
{
    const double tol = fmax(1e-10 * fmin(size_a, size_b), 1e-14 * scale);
    gjk_convex a = *a0;
    gjk_result r;
    double t = 0, approach = 0;
    int i = 0;
    for (;; i++) {
        a.p = v3_mad(a0->p, d, t);
        gjk_distance(&a, b, scale, &r);
        if (r.distance <= tol) break;
        approach = -v3_dot(d, r.normal);
        if (!(approach > 0)) return false;
        const double next = t + r.distance / approach;
        if (!(next <= limit)) return false;
        /* the step below the rounding of t, or the steps spent: a graze closer than 2^-64 of the segment */
        if (next == t || i == CAST_MAX_ITERATIONS) break;
        t = next;
    }
    out->t = t;
    out->start_overlap = i == 0 && r.distance <= 0;
    /* the narrow phase replaces these at a start overlap; they stand if it resolves none */
    out->normal = v3_dot(d, d) > 0 ? v3_normalize(v3_scale(d, -1)) : v3(0, 1, 0);
    out->point = r.point_b;
    if (out->start_overlap) return true;
    if (r.core_distance > 1e-6 * scale) {
        out->normal = r.normal, out->point = r.point_b;
        return true;
    }
    /* two polytopes at the touch: their cores meet and the normal is rounding; it is the one a hair
     * before the touch (the closest features do not change over the last hair), and the point is the
     * midpoint of the two closest points carried to the touch */
    if (i == 0) approach = fmax(-v3_dot(d, r.normal), 0);
    const double back = approach > 0 ? fmin(1e-6 * scale / approach, t) : 0;
    if (!(back > 0)) {
        out->start_overlap = true; /* touching at the start: the narrow phase's normal */
        return true;
    }
    a.p = v3_mad(a0->p, d, t - back);
    gjk_distance(&a, b, scale, &r);
    if (!(r.core_distance > 0)) {
        out->start_overlap = true; /* no normal to be had: the narrow phase's */
        return true;
    }
    out->normal = r.normal;
    out->point = v3_scale(v3_add(v3_mad(r.point_a, d, back), r.point_b), 0.5);
    return true;
}

/* the swept shape at from against a candidate it starts in: the narrow phase's normal (out of the
 * candidate) and deepest point (on the candidate); false when the narrow phase reports nothing */
static bool cast_start_normal(const geom *swept, const geom *other, cast_touch *out)
{
    imp_contact c;
    memset(&c, 0, sizeof c);
    const bool swapped = np_order(swept->type, other->type);
    const int n = swapped ? np_collide(other, swept, &c, NULL) : np_collide(swept, other, &c, NULL);
    if (n <= 0) return false;
    int deepest = 0;
    for (int i = 1; i < n; i++)
        if (c.depth[i] > c.depth[deepest]) deepest = i;
    /* the manifold's normal points out of B into A; its points are on A, B's at point + depth n */
    out->normal = swapped ? v3_scale(c.normal, -1) : c.normal;
    out->point = swapped ? c.points[deepest] : v3_mad(c.points[deepest], c.normal, c.depth[deepest]);
    return true;
}

/* the triangles of a mesh candidate: each one's first touch, one-sided, the first of all */
typedef struct cast_mesh {
    const geom *g, *swept0;
    const gjk_convex *a0;
    imp_vec3 from, d, grow_lo, grow_hi;
    double size_a, scale, limit;
    bool found;
    cast_touch touch;
} cast_mesh;

static void cast_mesh_triangle(void *ctx, int t)
{
    cast_mesh *k = ctx;
    const mesh *m = k->g->mesh;
    double v[9];
    imp_vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int j = 0; j < 3; j++) {
        const imp_vec3 p = v3_add(k->g->p, m3_mul_v(k->g->R, v3_load(m->v + 3 * m->tri[3 * t + j])));
        v3_store(v + 3 * j, p);
        lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
        hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
    }
    if (!cast_slab(v3_sub(lo, k->grow_hi), v3_sub(hi, k->grow_lo), k->from, k->d, k->limit)) return;
    const gjk_convex tri = {v3(0, 0, 0), m3_identity(), v, 3, v3(0, 0, 0), 0};
    cast_touch c;
    if (!cast_advance(k->a0, k->d, &tri, k->size_a, half_diagonal(lo, hi), k->scale + v3_len(hi), k->limit, &c)) return;
    const imp_vec3 front = m3_mul_v(k->g->R, m->n[t]);
    if (c.start_overlap) {
        /* the narrow phase of the whole mesh, which is one-sided too */
        if (!cast_start_normal(k->swept0, k->g, &c)) return;
    } else if (!(v3_dot(c.normal, front) > 0)) {
        return;
    }
    if (!k->found || c.t < k->touch.t) k->found = true, k->touch = c, k->limit = c.t;
}

int imp_world_cast(imp_world *w, const imp_shape_def *def, imp_vec3 from, imp_vec3 to, imp_quat q, const imp_query_filter *filter, imp_ray_hit *hit)
{
    if (def->type == IMP_SHAPE_MESH || def->type == IMP_SHAPE_PLANE) {
        world_error(w, "cast: the swept shape must be a sphere, capsule, box or hull");
        return -1;
    }
    const imp_query_filter f = filter ? *filter : imp_query_filter_default();
    shape s;
    memset(&s, 0, sizeof s);
    char err[200];
    if (!shape_build(&s, def, err, sizeof err)) {
        world_error(w, "%s", err);
        return -1;
    }
    q = quat_normalize(q);
    const imp_vec3 d = v3_sub(to, from);
    geom g0, g1;
    cast_place(&s, q, from, &g0);
    cast_place(&s, q, to, &g1);
    double core[6];
    gjk_convex a0;
    cast_convex_of(&g0, &a0, core);
    /* the shape's bounds about the path's point: a candidate's bounds grown by them hold every origin at
     * which the two bounds meet */
    const imp_vec3 grow_lo = v3_sub(g0.lo, from), grow_hi = v3_sub(g0.hi, from);
    const double size_a = half_diagonal(g0.lo, g0.hi);
    const double scale_a = v3_len(from) + v3_len(d) + size_a;
    double best = 1;
    bool found = false;
    const int ns = w->shapes->ids.count, nc = w->colliders->ids.count;
    for (int k = 0; k < ns + nc; k++) {
        if (!query_passes(w, k, &f)) continue;
        geom g;
        uint32_t key;
        if (k < ns) shape_geom(&w->shapes->shape[k], &g), key = w->shapes->ids.dense_slot[k];
        else shape_geom_from_collider(&w->colliders->collider[k - ns].def, &g), key = COLLIDER_KEY | w->colliders->ids.dense_slot[k - ns];
        cast_touch c;
        if (g.type == IMP_SHAPE_PLANE) {
            /* the support point against the normal meets the plane at a fraction linear in t */
            const imp_vec3 sp = v3_mad(gjk_support(&a0, v3_scale(g.normal, -1)), g.normal, -a0.radius);
            const double gap = v3_dot(g.normal, sp) - g.offset, approach = -v3_dot(g.normal, d);
            const double tol = 1e-10 * size_a;
            if (gap <= tol) {
                c.t = 0, c.start_overlap = false;
                c.normal = g.normal, c.point = v3_mad(sp, g.normal, -gap);
            } else {
                if (!(approach > 0) || !(gap / approach <= best)) continue;
                c.t = gap / approach, c.start_overlap = false;
                c.normal = g.normal, c.point = v3_mad(sp, d, c.t);
            }
        } else {
            if (!cast_slab(v3_sub(g.lo, grow_hi), v3_sub(g.hi, grow_lo), from, d, best)) continue;
            const double size_b = half_diagonal(g.lo, g.hi), scale = scale_a + v3_len(g.p) + size_b;
            if (g.type == IMP_SHAPE_MESH) {
                cast_mesh mk = {.g = &g, .swept0 = &g0, .a0 = &a0, .from = from, .d = d, .grow_lo = grow_lo, .grow_hi = grow_hi, .size_a = size_a, .scale = scale, .limit = best};
                /* the swept bounds in the mesh frame: the box around their world box turned by R^T */
                const imp_vec3 wlo = v3(fmin(g0.lo.x, g1.lo.x), fmin(g0.lo.y, g1.lo.y), fmin(g0.lo.z, g1.lo.z));
                const imp_vec3 whi = v3(fmax(g0.hi.x, g1.hi.x), fmax(g0.hi.y, g1.hi.y), fmax(g0.hi.z, g1.hi.z));
                const imp_vec3 wc = v3_scale(v3_add(wlo, whi), 0.5), we = v3_scale(v3_sub(whi, wlo), 0.5);
                const imp_vec3 lc = m3_mul_tv(g.R, v3_sub(wc, g.p));
                const imp_mat3 R = g.R;
                const imp_vec3 le = v3(fabs(R.m[0][0]) * we.x + fabs(R.m[1][0]) * we.y + fabs(R.m[2][0]) * we.z,
                                       fabs(R.m[0][1]) * we.x + fabs(R.m[1][1]) * we.y + fabs(R.m[2][1]) * we.z,
                                       fabs(R.m[0][2]) * we.x + fabs(R.m[1][2]) * we.y + fabs(R.m[2][2]) * we.z);
                mesh_query(g.mesh, v3_sub(lc, le), v3_add(lc, le), cast_mesh_triangle, &mk);
                if (!mk.found) continue;
                c = mk.touch;
            } else {
                double bcore[6];
                gjk_convex b;
                cast_convex_of(&g, &b, bcore);
                if (!cast_advance(&a0, d, &b, size_a, size_b, scale, best, &c)) continue;
                if (c.start_overlap) cast_start_normal(&g0, &g, &c);
            }
        }
        if (found && c.t >= best) continue;
        found = true, best = c.t;
        hit->side = bp_key_side(w, key);
        hit->fraction = c.t;
        hit->normal = c.normal;
        hit->point = c.point;
    }
    shape_free(&s);
    return found;
}

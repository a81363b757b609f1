/* particle_shape.c: a particle's path against one body shape, in the shape's own frame.
 *
 * The particle stage moves a particle's centre from a to b over a step; the bodies' stage moves the
 * shape. Seen from the shape (both ends mapped into its frame at their own times) the centre moves
 * on the straight path p(s) = a + s (b - a), s in [0, 1], against a shape that stands still, so a
 * fast particle cannot cross a thin shape between two steps, whichever of the two moved.
 *
 * Distance. Each convex shape has a signed distance d(p) to its surface (negative inside) with the
 * outward normal:
 *   sphere   |p| - R
 *   capsule  |p - (0, clamp(p_y, -h, h), 0)| - R          (the core on the y axis)
 *   box      outside: |p - clamp(p, -half, half)|; inside: minus the distance to the nearest face
 *   hull     max_f (n_f . p - d_f): exact inside and on the faces' fronts, a lower bound near an edge
 *            or a vertex (the hull grown by r is then bevelled by its face planes, not rounded)
 *   plane    n . p - offset
 * A mesh is its triangles, one-sided: a centre behind a triangle's plane by more than r never meets
 * it; otherwise the distance is that to the closest point of the triangle (its Voronoi regions:
 * a vertex, an edge, or the face), signed by the side of the plane.
 *
 * The first touch, d(p(s)) <= r, is found by conservative advancement: from s, the centre can move
 * d(p(s)) - r along the path without touching (d is at most the true distance), so
 * s <- s + (d - r) / |b - a|, until d - r is below a tolerance or s passes 1. On a plane the first
 * touch is the root of the linear d(s) = r. A path that touches nowhere but ends within r + near of
 * the surface is reported with s = 1 and touched = false: a contact about to close, which the
 * solver lets approach by its gap (particle_contact.c). */
#include <math.h>

#include "imp_math.h"
#include "particle_shape.h"

#define ADVANCE_STEPS 40 /* conservative advancement steps before a grazing path is let go */

/* the tolerance of a touch: a fraction of the radius, and never below 0.1 um */
static double touch_tolerance(double r) { return fmax(1e-7, 1e-3 * r); }

double pshape_distance(const shape *s, imp_vec3 p, imp_vec3 *n)
{
    switch (s->type) {
    case IMP_SHAPE_SPHERE: {
        double l = v3_len(p);
        *n = l > 1e-12 ? v3_scale(p, 1.0 / l) : v3(0, 1, 0);
        return l - s->radius;
    }
    case IMP_SHAPE_CAPSULE: {
        imp_vec3 d = v3(p.x, p.y - fmin(fmax(p.y, -s->half_height), s->half_height), p.z);
        double l = v3_len(d);
        *n = l > 1e-12 ? v3_scale(d, 1.0 / l) : v3(1, 0, 0);
        return l - s->radius;
    }
    case IMP_SHAPE_BOX: return v3_box_distance(p, s->half, n);
    case IMP_SHAPE_HULL: {
        const hull *hl = s->hull;
        double best = -INFINITY;
        *n = v3(0, 1, 0);
        for (int f = 0; f < hl->nf; f++) {
            double d = v3_dot(hl->face_n[f], p) - hl->face_d[f];
            if (d > best) best = d, *n = hl->face_n[f];
        }
        return best;
    }
    case IMP_SHAPE_PLANE:
        *n = s->normal;
        return v3_dot(s->normal, p) - s->offset;
    default:
        *n = v3(0, 1, 0);
        return INFINITY;
    }
}

/* ---- meshes ------------------------------------------------------------------------------------------ */

/* The point of triangle (a, b, c) closest to p, by the Voronoi regions of its features: with
 * e1 = b - a, e2 = c - a and p's barycentric coordinates (1 - v - w, v, w), p projects onto vertex a
 * when it lies behind both edges' planes at a (e1 . (p - a) <= 0, e2 . (p - a) <= 0), onto an edge
 * when it lies in that edge's slab and outside the triangle across it (the edge's barycentric
 * coordinate <= 0), and onto the face otherwise; the coordinates come from the dot products of the
 * edges with p minus each vertex. */
static imp_vec3 triangle_closest(imp_vec3 p, imp_vec3 a, imp_vec3 b, imp_vec3 c)
{
    const imp_vec3 e1 = v3_sub(b, a), e2 = v3_sub(c, a), pa = v3_sub(p, a);
    const double a1 = v3_dot(e1, pa), a2 = v3_dot(e2, pa);
    if (a1 <= 0 && a2 <= 0) return a;
    const imp_vec3 pb = v3_sub(p, b);
    const double b1 = v3_dot(e1, pb), b2 = v3_dot(e2, pb);
    if (b1 >= 0 && b2 <= b1) return b;
    const double wc = a1 * b2 - b1 * a2; /* c's barycentric weight times the triangle's area term */
    if (wc <= 0 && a1 >= 0 && b1 <= 0) return v3_mad(a, e1, a1 / (a1 - b1));
    const imp_vec3 pc = v3_sub(p, c);
    const double c1 = v3_dot(e1, pc), c2 = v3_dot(e2, pc);
    if (c2 >= 0 && c1 <= c2) return c;
    const double wb = c1 * a2 - a1 * c2;
    if (wb <= 0 && a2 >= 0 && c2 <= 0) return v3_mad(a, e2, a2 / (a2 - c2));
    const double wa = b1 * c2 - c1 * b2;
    if (wa <= 0 && b2 - b1 >= 0 && c1 - c2 >= 0) return v3_mad(b, v3_sub(c, b), (b2 - b1) / ((b2 - b1) + (c1 - c2)));
    const double inv = 1.0 / (wa + wb + wc);
    return v3_add(a, v3_add(v3_scale(e1, wb * inv), v3_scale(e2, wc * inv)));
}

/* signed distance from p to triangle t (one-sided: the sign of the side of its plane) and the normal */
static double triangle_distance(const mesh *m, int t, imp_vec3 p, imp_vec3 *n)
{
    const int *v = m->tri + 3 * t;
    const imp_vec3 a = v3_load(m->v + 3 * v[0]), b = v3_load(m->v + 3 * v[1]), c = v3_load(m->v + 3 * v[2]);
    const imp_vec3 d = v3_sub(p, triangle_closest(p, a, b, c));
    const double l = v3_len(d), side = v3_dot(m->n[t], v3_sub(p, a));
    if (side < 0 || l < 1e-12) {
        *n = m->n[t];
        return side < 0 ? -l : 0;
    }
    *n = v3_scale(d, 1.0 / l);
    return l;
}

typedef struct mesh_sweep {
    const mesh *m;
    imp_vec3 a, b;
    double r, near, len, tol;
    pshape_hit *best;
    bool any;
} mesh_sweep;

static void sweep_triangle(void *ctx, int t)
{
    mesh_sweep *k = ctx;
    const mesh *m = k->m;
    const imp_vec3 v0 = v3_load(m->v + 3 * m->tri[3 * t]);
    if (v3_dot(m->n[t], v3_sub(k->a, v0)) < -k->r) return; /* starts behind it: the triangle's back */
    const imp_vec3 ab = v3_sub(k->b, k->a);
    double s = 0, d0 = 0;
    for (int it = 0; it < ADVANCE_STEPS; it++) {
        imp_vec3 n;
        const double d = triangle_distance(m, t, v3_mad(k->a, ab, s), &n);
        if (it == 0) d0 = d;
        if (d - k->r <= k->tol) {
            if (!k->best->touched || s < k->best->s || (s == k->best->s && d < k->best->dist))
                *k->best = (pshape_hit){s, n, d, true, d0}, k->any = true;
            return;
        }
        if (k->len * (1 - s) < d - k->r) break; /* the rest of the path is shorter than the gap */
        s += (d - k->r) / k->len;
        if (s > 1) break;
    }
    if (k->best->touched) return;
    imp_vec3 n;
    const double d1 = triangle_distance(m, t, k->b, &n);
    if (d1 >= -k->r && d1 <= k->r + k->near && (!k->any || d1 < k->best->dist))
        *k->best = (pshape_hit){1, n, d1, d1 - k->r <= k->tol, d0}, k->any = true;
}

static bool mesh_path(const shape *s, imp_vec3 a, imp_vec3 b, double r, double near, pshape_hit *hit)
{
    const double grow = r + near;
    imp_vec3 lo = v3(fmin(a.x, b.x) - grow, fmin(a.y, b.y) - grow, fmin(a.z, b.z) - grow);
    imp_vec3 hi = v3(fmax(a.x, b.x) + grow, fmax(a.y, b.y) + grow, fmax(a.z, b.z) + grow);
    hit->touched = false;
    mesh_sweep k = {s->mesh, a, b, r, near, v3_len(v3_sub(b, a)), touch_tolerance(r), hit, false};
    mesh_query(s->mesh, lo, hi, sweep_triangle, &k);
    return k.any;
}

/* ---- every shape --------------------------------------------------------------------------------------- */

bool pshape_sweep(const shape *s, imp_vec3 a, imp_vec3 b, double r, double near, pshape_hit *hit)
{
    if (s->type == IMP_SHAPE_MESH) return mesh_path(s, a, b, r, near, hit);
    const double tol = touch_tolerance(r);
    imp_vec3 n;
    if (s->type == IMP_SHAPE_PLANE) {
        /* d(s) = d0 + s (d1 - d0) is linear: the root of d(s) = r */
        const double d0 = v3_dot(s->normal, a) - s->offset, d1 = v3_dot(s->normal, b) - s->offset;
        if (d0 - r <= tol) *hit = (pshape_hit){0, s->normal, d0, true, d0};
        else if (d1 - r <= tol) *hit = (pshape_hit){(d0 - r) / (d0 - d1), s->normal, r, true, d0};
        else if (d1 <= r + near) *hit = (pshape_hit){1, s->normal, d1, false, d0};
        else return false;
        return true;
    }
    const imp_vec3 ab = v3_sub(b, a);
    const double len = v3_len(ab);
    double sfrac = 0, d0 = 0;
    for (int it = 0; it < ADVANCE_STEPS; it++) {
        const double d = pshape_distance(s, v3_mad(a, ab, sfrac), &n);
        if (it == 0) d0 = d;
        if (d - r <= tol) {
            *hit = (pshape_hit){sfrac, n, d, true, d0};
            return true;
        }
        if (len * (1 - sfrac) < d - r) break; /* the rest of the path is shorter than the gap */
        sfrac += (d - r) / len;
        if (sfrac > 1) break;
    }
    /* no touch on the way (or a path grazing the surface too long to follow): how it ends */
    const double d1 = pshape_distance(s, b, &n);
    if (d1 > r + near) return false;
    *hit = (pshape_hit){1, n, d1, d1 - r <= tol, d0};
    return true;
}

/* gjk.c: the distance between two convex shapes, by the algorithm of Gilbert, Johnson and Keerthi (1988)
 * in the form of van den Bergen (1999, "A fast and robust GJK implementation for collision detection").
 *
 * The distance between convex A and B is the distance from the origin to their Minkowski difference
 * A - B = {a - b}, whose support point along d is s_A(d) - s_B(-d). GJK keeps a simplex W of up to four
 * points of A - B and v, the point of its hull closest to the origin:
 *   w = s_A(-v) - s_B(v), the point of A - B farthest against v;
 *   |v| is an upper bound of the distance and v.w / |v| a lower bound (the plane through w normal to v
 *   supports A - B), so |v|^2 - v.w <= tol stops it with the distance known to tol / |v|;
 *   else W + {w} is replaced by the smallest sub-simplex whose hull holds the point closest to the
 *   origin (the Voronoi regions of the vertices, edges and faces of a segment, triangle or
 *   tetrahedron), with that point's barycentric weights; a tetrahedron that holds the origin means
 *   the shapes overlap.
 * The same weights applied to the A and B halves of the simplex's points give the closest points.
 * Spheres and capsules are a point or a segment rounded by a radius: GJK runs on the cores, which stay
 * apart while the rounded shapes merely touch, and the radii are taken off along the normal. */
#include <math.h>
#include <string.h>

#include "gjk.h"

/* |v| shrinks by at least the rounding each step on a polytope, and the vertex count bounds the distinct
 * simplices; 128 steps is beyond anything a hull of the engine reaches */
#define GJK_MAX_ITERATIONS 128

typedef struct gjk_vertex {
    imp_vec3 w, a, b; /* w = a - b */
} gjk_vertex;

imp_vec3 gjk_support(const gjk_convex *c, imp_vec3 dir)
{
    const imp_vec3 l = m3_mul_tv(c->R, dir);
    imp_vec3 s;
    if (c->nv == 0) {
        s = v3(l.x >= 0 ? c->half.x : -c->half.x, l.y >= 0 ? c->half.y : -c->half.y, l.z >= 0 ? c->half.z : -c->half.z);
    } else {
        int best = 0;
        double most = v3_dot(v3_load(c->v), l);
        for (int i = 1; i < c->nv; i++) {
            const double d = v3_dot(v3_load(c->v + 3 * i), l);
            if (d > most) most = d, best = i;
        }
        s = v3_load(c->v + 3 * best);
    }
    return v3_add(c->p, m3_mul_v(c->R, s));
}

static double ratio(double num, double den) { return den > 0 ? num / den : 0; }

/* the weights of the point of segment w[i] w[j] closest to the origin: a + t (b - a), t clamped to 0..1 */
static void closest_on_segment(const imp_vec3 *w, int i, int j, double *lam)
{
    const imp_vec3 e = v3_sub(w[j], w[i]);
    const double t = fmin(fmax(ratio(-v3_dot(w[i], e), v3_dot(e, e)), 0), 1);
    lam[i] = 1 - t, lam[j] = t;
}

/* the weights of the point of triangle w[ia] w[ib] w[ic] closest to the origin. With a, b, c its
 * vertices and e1 = b - a, e2 = c - a, the origin's projections on the two edges seen from each vertex
 * (d1 .. d6) place it in one of the seven Voronoi regions; in the face region the weights are the
 * signed areas (va, vb, vc) of the sub-triangles the origin's projection cuts it into. */
static void closest_on_triangle(const imp_vec3 *w, int ia, int ib, int ic, double *lam)
{
    const imp_vec3 a = w[ia], b = w[ib], c = w[ic];
    const imp_vec3 e1 = v3_sub(b, a), e2 = v3_sub(c, a);
    const double d1 = -v3_dot(e1, a), d2 = -v3_dot(e2, a);
    if (d1 <= 0 && d2 <= 0) {
        lam[ia] = 1;
        return;
    }
    const double d3 = -v3_dot(e1, b), d4 = -v3_dot(e2, b);
    if (d3 >= 0 && d4 <= d3) {
        lam[ib] = 1;
        return;
    }
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        const double t = ratio(d1, d1 - d3);
        lam[ia] = 1 - t, lam[ib] = t;
        return;
    }
    const double d5 = -v3_dot(e1, c), d6 = -v3_dot(e2, c);
    if (d6 >= 0 && d5 <= d6) {
        lam[ic] = 1;
        return;
    }
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        const double t = ratio(d2, d2 - d6);
        lam[ia] = 1 - t, lam[ic] = t;
        return;
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        const double t = ratio(d4 - d3, (d4 - d3) + (d5 - d6));
        lam[ib] = 1 - t, lam[ic] = t;
        return;
    }
    const double sum = va + vb + vc;
    if (sum > 0) {
        lam[ia] = va / sum, lam[ib] = vb / sum, lam[ic] = vc / sum;
        return;
    }
    /* a triangle flat to rounding: the nearest of its edges */
    const int e[3][2] = {{ia, ib}, {ib, ic}, {ia, ic}};
    double best = INFINITY, l[4];
    for (int k = 0; k < 3; k++) {
        memset(l, 0, sizeof l);
        closest_on_segment(w, e[k][0], e[k][1], l);
        const imp_vec3 p = v3_add(v3_scale(w[e[k][0]], l[e[k][0]]), v3_scale(w[e[k][1]], l[e[k][1]]));
        if (v3_dot(p, p) < best) best = v3_dot(p, p), lam[ia] = l[ia], lam[ib] = l[ib], lam[ic] = l[ic];
    }
}

/* the weights of the point of tetrahedron w[0..3] closest to the origin: the nearest of the faces whose
 * plane separates the origin from the opposite vertex; false when no face does (the origin is inside) */
static bool closest_on_tetrahedron(const imp_vec3 *w, double *lam)
{
    static const int face[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
    double best = INFINITY;
    bool outside = false;
    for (int f = 0; f < 4; f++) {
        const imp_vec3 a = w[face[f][0]];
        const imp_vec3 n = v3_cross(v3_sub(w[face[f][1]], a), v3_sub(w[face[f][2]], a));
        const double side_origin = -v3_dot(n, a), side_opposite = v3_dot(n, v3_sub(w[face[f][3]], a));
        if (!(side_origin * side_opposite < 0 || side_opposite == 0)) continue;
        outside = true;
        double l[4] = {0, 0, 0, 0};
        closest_on_triangle(w, face[f][0], face[f][1], face[f][2], l);
        const imp_vec3 p = v3_add(v3_add(v3_scale(w[0], l[0]), v3_scale(w[1], l[1])), v3_add(v3_scale(w[2], l[2]), v3_scale(w[3], l[3])));
        if (v3_dot(p, p) < best) best = v3_dot(p, p), memcpy(lam, l, sizeof l);
    }
    return outside;
}

void gjk_distance(const gjk_convex *A, const gjk_convex *B, double scale, gjk_result *r)
{
    imp_vec3 dir = v3_sub(A->p, B->p);
    if (!(v3_dot(dir, dir) > 0)) dir = v3(1, 0, 0);
    gjk_vertex s[4];
    double lam[4] = {1, 0, 0, 0};
    int n = 1;
    s[0].a = gjk_support(A, v3_scale(dir, -1)), s[0].b = gjk_support(B, dir), s[0].w = v3_sub(s[0].a, s[0].b);
    imp_vec3 v = s[0].w;
    /* a support point is exact to the rounding of its coordinates, 1e-16 scale: the distance is known to
     * about 1e-15 scale, and cores closer than that touch */
    const double touch = 1e-15 * scale;
    bool overlap = false;
    int it = 0;
    for (; it < GJK_MAX_ITERATIONS; it++) {
        const double vv = v3_dot(v, v);
        if (vv <= touch * touch) {
            overlap = true;
            break;
        }
        gjk_vertex nw;
        nw.a = gjk_support(A, v3_scale(v, -1)), nw.b = gjk_support(B, v), nw.w = v3_sub(nw.a, nw.b);
        if (vv - v3_dot(v, nw.w) <= fmax(1e-14 * vv, touch * sqrt(vv))) break;
        bool known = false;
        for (int i = 0; i < n; i++) known |= s[i].w.x == nw.w.x && s[i].w.y == nw.w.y && s[i].w.z == nw.w.z;
        if (known) break;
        gjk_vertex next[4];
        memcpy(next, s, sizeof s);
        next[n] = nw;
        imp_vec3 w[4];
        for (int i = 0; i <= n; i++) w[i] = next[i].w;
        double l[4] = {0, 0, 0, 0};
        if (n == 1) closest_on_segment(w, 0, 1, l);
        else if (n == 2) closest_on_triangle(w, 0, 1, 2, l);
        else if (!closest_on_tetrahedron(w, l)) {
            overlap = true;
            break;
        }
        /* keep the vertices of the sub-simplex with weight */
        int m = 0;
        imp_vec3 vn = v3(0, 0, 0);
        double kept[4] = {0, 0, 0, 0};
        for (int i = 0; i <= n; i++)
            if (l[i] > 0) next[m] = next[i], kept[m] = l[i], vn = v3_mad(vn, next[i].w, l[i]), m++;
        if (m == 3) {
            /* inside a face: the origin's projection on its plane, whose direction is the face normal to
             * the rounding of the face (the weighted sum's is that of |w| / |v|, poor as |v| -> 0) */
            const imp_vec3 fn = v3_cross(v3_sub(next[1].w, next[0].w), v3_sub(next[2].w, next[0].w));
            const double nn = v3_dot(fn, fn);
            if (nn > 0) vn = v3_scale(fn, v3_dot(fn, next[0].w) / nn);
        }
        if (m == 0 || !(v3_dot(vn, vn) < vv)) break; /* no progress: v is as close as rounding allows */
        memcpy(s, next, sizeof s);
        memcpy(lam, kept, sizeof kept);
        n = m, v = vn;
    }
    imp_vec3 pa = v3(0, 0, 0), pb = v3(0, 0, 0);
    double sum = 0;
    for (int i = 0; i < n; i++) pa = v3_mad(pa, s[i].a, lam[i]), pb = v3_mad(pb, s[i].b, lam[i]), sum += lam[i];
    pa = v3_scale(pa, 1 / sum), pb = v3_scale(pb, 1 / sum);
    r->iterations = it;
    if (overlap) {
        r->core_distance = 0;
        r->distance = -(A->radius + B->radius);
        r->normal = v3(0, 0, 0);
        r->point_a = pa, r->point_b = pb;
        return;
    }
    const double d = v3_len(v);
    r->core_distance = d;
    r->distance = d - A->radius - B->radius;
    r->normal = v3_scale(v, 1 / d);
    r->point_a = v3_mad(pa, r->normal, -A->radius);
    r->point_b = v3_mad(pb, r->normal, B->radius);
}

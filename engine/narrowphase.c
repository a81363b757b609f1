/* narrowphase.c: contact manifolds between two placed shapes.
 *
 * Convention (GUIDE.md trap 2): the normal n points out of B towards A; every contact point lies on
 * A's surface, B's surface is at point + depth n, depth > 0 is penetration. Pairs are ordered by
 * shape type (sphere < capsule < box < hull < mesh < plane), so B is the "larger" kind: the plane or
 * the mesh is always B, and its normal points out of it.
 *
 * Shapes come in three kinds:
 *   cores:      a sphere is a point and a capsule a segment, both swept by a radius r;
 *   polytopes:  a box, a hull, a mesh triangle (two faces, n and -n), each with vertices, polygon
 *               faces (planes n . x = d), and edge directions;
 *   half-space: the plane.
 *
 * Core-core. The closest points of two segments (Ericson 5.1.9: minimise |P(s) - Q(t)|^2 over the
 * unit square, clamping s, then t, then s again); they touch when the distance is below rA + rB.
 * Two nearly parallel capsules get a point per overlapping end, so a capsule lying on another rests
 * on two points.
 *
 * Core-polytope. Clip the core segment to the polytope's half-spaces (Cyrus-Beck). If something is
 * left, the core is inside: the face the core's deepest end penetrates least gives the normal.
 * Otherwise the closest points are found feature by feature (each face's interior against the end
 * points, each face edge against the segment), and the core touches when their distance is below r.
 * A capsule lying flat on a face gets both ends as points.
 *
 * Polytope-polytope: the separating axis theorem, which is S0 7.1's separating plane search made
 * exhaustive. Two convex polytopes are disjoint iff they are separated along a face normal of
 * either or along the cross product of an edge direction of each (S0's vertex/face and edge/edge
 * contacts are exactly these two cases). Along each axis u (oriented from B to A) the separation is
 * min_A(u . x) - max_B(u . x); the largest separation over all axes is > 0 for disjoint bodies and
 * otherwise minus the penetration depth along the best axis. S0's coherence trick: the axis that
 * separated the pair last step is cached (the "witness") and tried first; bodies that stay apart
 * are rejected after one projection. Face axes are preferred over edge axes unless an edge axis is
 * clearly better (5% and 0.5 mm), which keeps resting contacts on faces.
 *   Face case: the reference face is the best axis' face; the incident face is the other body's
 *   face most anti-parallel to it. The incident polygon is clipped by the side planes of the
 *   reference face (Sutherland-Hodgman) and the points below the reference plane are kept, which
 *   gives a cube on a face its 4 corners and coincident faces their overlap polygon.
 *   Edge case (S0 edge/edge): the supporting edges of A and B along the axis; the point is the
 *   closest point of the two edge lines on A's edge, n = ea x eb oriented from B to A.
 *
 * Plane: every vertex (or sphere/capsule end) below the plane is a point, depth its distance.
 * Mesh: each triangle whose bounds meet A's is a polytope; contacts from the back of a triangle are
 * ignored (one-sided), and the normal is the deepest triangle's. A polytope overlapping a triangle
 * always takes the triangle's face as the reference (never an edge axis): inside a mesh the least
 * penetration is often sideways across an edge shared with the next triangle, which is no surface. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hull.h"
#include "imp_math.h"
#include "narrowphase.h"
#include "shape.h"
#include "sparse_simd.h"

#define NP_KEEP 0.005 /* m: near-touching points kept in a touching face manifold (face_points) */
#define NP_LEVEL 1e-4 /* m: a capsule's end this close above a plane it touches is on it too */
/* an edge axis is taken over the best face axis when its separation exceeds NP_EDGE_REL face + NP_EDGE_ABS */
#define NP_EDGE_REL 0.95
#define NP_EDGE_ABS 5e-4

/* a manifold while it is built: up to NP_MAX points, reduced to IMP_MANIFOLD_MAX at the end */
#define NP_MAX 16
typedef struct np_man {
    imp_vec3 normal;
    bool edge;            /* an edge/edge contact: ea, eb are its edges' unit directions */
    imp_vec3 ea, eb;
    bool face_a;          /* a face contact on A's face: -normal is A's face normal, turning with A */
    int count;
    imp_vec3 points[NP_MAX];
    double depth[NP_MAX];
} np_man;

/* ---- polytopes ---------------------------------------------------------------------------------------- */

typedef struct poly {
    int nv, nf, ne, ndir;
    const double *v;            /* local vertices */
    const double *vx, *vy, *vz; /* the same as three arrays (hulls), or NULL */
    const int *ff, *fc, *fv;    /* face first, count, vertex indices */
    const imp_vec3 *fn;
    const double *fd;
    const int *edges;
    const int *edge_faces;      /* 2 per edge, or NULL (mesh triangles) */
    const imp_vec3 *dirs;
    imp_vec3 p, center;         /* world placement, and a world point inside */
    imp_mat3 R;
    bool is_box;
    imp_vec3 half;
    double inradius;            /* a ball of this radius about center lies inside (0: none known; boxes:
                                 * poly_inradius) */
    const imp_vec3 *wv;         /* world vertices when precomputed (NULL: transform on demand) */
    const double *arc;          /* the edges' Gauss-map arcs in the local frame (hull.h), or NULL */
    const double *fnx, *fny, *fnz; /* fn as three arrays, or NULL */
    double arc_min;             /* with arc: the least |b x a| of the arcs */
} poly;

static const int BOX_FF[6] = {0, 4, 8, 12, 16, 20}, BOX_FC[6] = {4, 4, 4, 4, 4, 4};
/* vertex i has signs (bit0: x, bit1: y, bit2: z), 1 = +; faces +x -x +y -y +z -z, ccw from outside */
static const int BOX_FV[24] = {1, 3, 7, 5, 0, 4, 6, 2, 2, 6, 7, 3, 0, 1, 5, 4, 4, 5, 7, 6, 0, 2, 3, 1};
static const imp_vec3 BOX_FN[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
static const int BOX_EDGES[24] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7};
static const imp_vec3 BOX_DIRS[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
static const int BOX_EDGE_FACES[24] = {3, 5, 2, 5, 3, 4, 2, 4, 1, 5, 0, 5, 1, 4, 0, 4, 1, 3, 0, 3, 1, 2, 0, 2};

typedef struct box_data { double v[24]; double fd[6]; } box_data;

/* a box as a polytope; with bd NULL only its frame and half extents (enough for box-box) */
static void poly_box(const geom *g, box_data *bd, poly *P)
{
    P->p = g->p, P->R = g->R, P->center = g->p;
    P->is_box = true, P->half = g->half;
    P->inradius = -1; /* poly_inradius: the least half extent, found where it is needed */
    P->wv = NULL;
    P->arc = NULL, P->arc_min = 0;
    P->fnx = P->fny = P->fnz = NULL;
    P->nv = 8, P->nf = 6, P->ne = 12, P->ndir = 3;
    P->ff = BOX_FF, P->fc = BOX_FC, P->fv = BOX_FV, P->fn = BOX_FN, P->edges = BOX_EDGES, P->dirs = BOX_DIRS;
    P->edge_faces = BOX_EDGE_FACES;
    P->v = NULL, P->fd = NULL;
    P->vx = P->vy = P->vz = NULL;
    if (!bd) return;
    for (int i = 0; i < 8; i++) {
        bd->v[3 * i + 0] = (i & 1) ? g->half.x : -g->half.x;
        bd->v[3 * i + 1] = (i & 2) ? g->half.y : -g->half.y;
        bd->v[3 * i + 2] = (i & 4) ? g->half.z : -g->half.z;
    }
    bd->fd[0] = bd->fd[1] = g->half.x, bd->fd[2] = bd->fd[3] = g->half.y, bd->fd[4] = bd->fd[5] = g->half.z;
    P->v = bd->v, P->fd = bd->fd;
}

static void poly_hull(const geom *g, poly *P)
{
    const hull *h = g->hull;
    P->nv = h->nv, P->nf = h->nf, P->ne = h->ne, P->ndir = h->ndir;
    P->v = h->v, P->vx = h->vx, P->vy = h->vy, P->vz = h->vz;
    P->ff = h->face_first, P->fc = h->face_count, P->fv = h->face_verts, P->fn = h->face_n, P->fd = h->face_d;
    P->edges = h->edges, P->dirs = h->dirs, P->edge_faces = h->edge_faces;
    P->p = g->p, P->R = g->R, P->center = v3_add(g->p, m3_mul_v(g->R, h->centroid));
    P->is_box = false;
    P->inradius = h->inradius;
    P->wv = NULL;
    P->arc = h->arc, P->arc_min = h->arc_min;
    P->fnx = h->fnx, P->fny = h->fny, P->fnz = h->fnz;
}

typedef struct tri_data { double v[9]; imp_vec3 fn[2]; double fd[2]; imp_vec3 dirs[3]; } tri_data;
static const int TRI_FF[2] = {0, 3}, TRI_FC[2] = {3, 3}, TRI_FV[6] = {0, 1, 2, 2, 1, 0}, TRI_EDGES[6] = {0, 1, 1, 2, 2, 0};

static void poly_triangle(imp_vec3 a, imp_vec3 b, imp_vec3 c, imp_vec3 n, tri_data *td, poly *P)
{
    v3_store(td->v, a), v3_store(td->v + 3, b), v3_store(td->v + 6, c);
    td->fn[0] = n, td->fn[1] = v3_scale(n, -1);
    td->fd[0] = v3_dot(n, a), td->fd[1] = -td->fd[0];
    td->dirs[0] = v3_normalize(v3_sub(b, a)), td->dirs[1] = v3_normalize(v3_sub(c, b)), td->dirs[2] = v3_normalize(v3_sub(a, c));
    P->nv = 3, P->nf = 2, P->ne = 3, P->ndir = 3;
    P->v = td->v, P->vx = P->vy = P->vz = NULL, P->ff = TRI_FF, P->fc = TRI_FC, P->fv = TRI_FV, P->fn = td->fn, P->fd = td->fd;
    P->edges = TRI_EDGES, P->dirs = td->dirs, P->edge_faces = NULL;
    P->p = v3(0, 0, 0), P->R = m3_identity();
    P->center = v3_scale(v3_add(v3_add(a, b), c), 1.0 / 3.0);
    P->is_box = false;
    P->inradius = 0;
    P->wv = NULL;
    P->arc = NULL, P->arc_min = 0;
    P->fnx = P->fny = P->fnz = NULL;
}

/* the radius of a ball about P's centre inside P (a box's is its least half extent) */
static double poly_inradius(const poly *P)
{
    if (!P->is_box) return P->inradius;
    const double xy = P->half.x < P->half.y ? P->half.x : P->half.y;
    return P->half.z < xy ? P->half.z : xy;
}

/* a polytope's vertex i, the normal of its face f, and that face's offset d (n . x = d) given its
 * normal n, in the world frame */
static imp_vec3 poly_vertex(const poly *P, int i)
{
    return P->wv ? P->wv[i] : v3_add(P->p, m3_mul_v(P->R, v3_load(P->v + 3 * i)));
}
static imp_vec3 poly_normal(const poly *P, int f) { return m3_mul_v(P->R, P->fn[f]); }
static double poly_offset(const poly *P, int f, imp_vec3 n) { return P->fd[f] + v3_dot(n, P->p); }

#if SPARSE_HAVE_AVX
/* the least and largest of l . v over the vertices (structure of arrays), four lanes at a time: the
 * scalar loop's products and choices (_mm256_min_pd(d, m) is d < m ? d : m), the lanes combined at the end */
static SPARSE_AVX void project_avx(const poly *P, imp_vec3 l, double *mn_out, double *mx_out)
{
    const double *vx = P->vx, *vy = P->vy, *vz = P->vz;
    const __m256d lx = _mm256_set1_pd(l.x), ly = _mm256_set1_pd(l.y), lz = _mm256_set1_pd(l.z);
    __m256d vmn = _mm256_set1_pd(INFINITY), vmx = _mm256_set1_pd(-INFINITY);
    int i = 0;
    for (; i + 4 <= P->nv; i += 4) {
        const __m256d d = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(lx, _mm256_loadu_pd(vx + i)), _mm256_mul_pd(ly, _mm256_loadu_pd(vy + i))),
                                        _mm256_mul_pd(lz, _mm256_loadu_pd(vz + i)));
        vmn = _mm256_min_pd(d, vmn), vmx = _mm256_max_pd(d, vmx);
    }
    double lo4[4], hi4[4];
    _mm256_storeu_pd(lo4, vmn), _mm256_storeu_pd(hi4, vmx);
    double mn = lo4[0], mx = hi4[0];
    for (int k = 1; k < 4; k++) mn = lo4[k] < mn ? lo4[k] : mn, mx = hi4[k] > mx ? hi4[k] : mx;
    for (; i < P->nv; i++) {
        const double d = l.x * vx[i] + l.y * vy[i] + l.z * vz[i];
        mn = d < mn ? d : mn;
        mx = d > mx ? d : mx;
    }
    *mn_out = mn, *mx_out = mx;
}
#endif

/* the interval of the polytope projected on the world axis u */
static void project(const poly *P, imp_vec3 u, double *lo, double *hi)
{
    imp_vec3 l = m3_mul_tv(P->R, u);
    double c = v3_dot(u, P->p);
    if (P->is_box) {
        double r = fabs(l.x) * P->half.x + fabs(l.y) * P->half.y + fabs(l.z) * P->half.z;
        *lo = c - r, *hi = c + r;
        return;
    }
    double mn = INFINITY, mx = -INFINITY;
#if SPARSE_HAVE_AVX
    if (P->vx && sparse_avx()) {
        project_avx(P, l, &mn, &mx);
        *lo = c + mn, *hi = c + mx;
        return;
    }
#endif
    if (P->vx) {
        /* the same products as below, over contiguous arrays (two lanes at a time) */
        const double *vx = P->vx, *vy = P->vy, *vz = P->vz;
        int i = 0;
#ifdef __SSE2__
        /* _mm_min_pd(d, m) is d < m ? d : m lane by lane, the scalar loop's own choice */
        __m128d lx = _mm_set1_pd(l.x), ly = _mm_set1_pd(l.y), lz = _mm_set1_pd(l.z);
        __m128d vmn = _mm_set1_pd(INFINITY), vmx = _mm_set1_pd(-INFINITY);
        for (; i + 2 <= P->nv; i += 2) {
            __m128d d = _mm_add_pd(_mm_add_pd(_mm_mul_pd(lx, _mm_loadu_pd(vx + i)), _mm_mul_pd(ly, _mm_loadu_pd(vy + i))),
                                   _mm_mul_pd(lz, _mm_loadu_pd(vz + i)));
            vmn = _mm_min_pd(d, vmn), vmx = _mm_max_pd(d, vmx);
        }
        double lo2[2], hi2[2];
        _mm_storeu_pd(lo2, vmn), _mm_storeu_pd(hi2, vmx);
        mn = lo2[1] < lo2[0] ? lo2[1] : lo2[0], mx = hi2[1] > hi2[0] ? hi2[1] : hi2[0];
#endif
        for (; i < P->nv; i++) {
            double d = l.x * vx[i] + l.y * vy[i] + l.z * vz[i];
            mn = d < mn ? d : mn;
            mx = d > mx ? d : mx;
        }
        *lo = c + mn, *hi = c + mx;
        return;
    }
    for (int i = 0; i < P->nv; i++) {
        double d = l.x * P->v[3 * i] + l.y * P->v[3 * i + 1] + l.z * P->v[3 * i + 2];
        if (d < mn) mn = d; /* (not fmin/fmax: those are library calls without -ffast-math) */
        if (d > mx) mx = d;
    }
    *lo = c + mn, *hi = c + mx;
}

/* ---- small geometry -------------------------------------------------------------------------------------- */

/* closest points of segments p1q1 and p2q2 (Ericson, Real-Time Collision Detection 5.1.9) */
static double seg_seg(imp_vec3 p1, imp_vec3 q1, imp_vec3 p2, imp_vec3 q2, imp_vec3 *c1, imp_vec3 *c2)
{
    imp_vec3 d1 = v3_sub(q1, p1), d2 = v3_sub(q2, p2), r = v3_sub(p1, p2);
    double a = v3_dot(d1, d1), e = v3_dot(d2, d2), f = v3_dot(d2, r), s, t;
    const double eps = 1e-18;
    if (a <= eps && e <= eps) s = t = 0;
    else if (a <= eps) s = 0, t = fmin(fmax(f / e, 0), 1);
    else {
        double c = v3_dot(d1, r);
        if (e <= eps) t = 0, s = fmin(fmax(-c / a, 0), 1);
        else {
            double b = v3_dot(d1, d2), den = a * e - b * b;
            s = den > eps * a * e ? fmin(fmax((b * f - c * e) / den, 0), 1) : 0;
            t = (b * s + f) / e;
            if (t < 0) t = 0, s = fmin(fmax(-c / a, 0), 1);
            else if (t > 1) t = 1, s = fmin(fmax((b - c) / a, 0), 1);
        }
    }
    *c1 = v3_mad(p1, d1, s), *c2 = v3_mad(p2, d2, t);
    return v3_len(v3_sub(*c1, *c2));
}

/* is x (on or near the plane of face f) inside the face polygon? */
static bool in_face(const poly *P, int f, imp_vec3 n, imp_vec3 x)
{
    const int first = P->ff[f], cnt = P->fc[f];
    for (int k = 0; k < cnt; k++) {
        imp_vec3 a = poly_vertex(P, P->fv[first + k]), b = poly_vertex(P, P->fv[first + (k + 1) % cnt]);
        if (v3_dot(v3_cross(v3_sub(b, a), n), v3_sub(x, a)) > 1e-12) return false;
    }
    return true;
}

static void add_point(np_man *c, imp_vec3 p, double depth)
{
    for (int k = 0; k < c->count; k++) /* the same point twice (a vertex on two triangles): keep one */
        if (v3_len(v3_sub(c->points[k], p)) < 1e-9) {
            c->depth[k] = fmax(c->depth[k], depth);
            return;
        }
    if (c->count < NP_MAX) {
        c->points[c->count] = p, c->depth[c->count] = depth, c->count++;
        return;
    }
    int shallow = 0; /* full: replace the shallowest if this one is deeper */
    for (int k = 1; k < c->count; k++)
        if (c->depth[k] < c->depth[shallow]) shallow = k;
    if (depth > c->depth[shallow]) c->points[shallow] = p, c->depth[shallow] = depth;
}

/* An edge/edge contact records its edges' directions for the contact solvers (S0's compute_ndot
 * takes n = ea x eb / |ea x eb|). An edge has no direction of its own, so ea's sign is chosen to make
 * ea x eb point along n, from B to A (GUIDE.md trap 2: never a negated n). */
static void set_edges(np_man *c, imp_vec3 ea, imp_vec3 eb)
{
    ea = v3_normalize(ea), eb = v3_normalize(eb);
    if (v3_dot(v3_cross(ea, eb), c->normal) < 0) ea = v3_scale(ea, -1);
    c->edge = true, c->ea = ea, c->eb = eb;
}

/* Keep the 4 points that span the manifold best: the deepest, the one farthest from it, the one
 * making the largest triangle with those two, and the one adding the most area on the other side. */
static void reduce4(np_man *c)
{
    if (c->count <= IMP_MANIFOLD_MAX) return;
    int k[4] = {0, 0, -1, -1}; /* (k[1] stays k[0] when no distance compares: NaN points) */
    for (int i = 1; i < c->count; i++)
        if (c->depth[i] > c->depth[k[0]]) k[0] = i;
    double best = -1;
    for (int i = 0; i < c->count; i++) {
        double d = v3_len(v3_sub(c->points[i], c->points[k[0]]));
        if (d > best) best = d, k[1] = i;
    }
    imp_vec3 e = v3_sub(c->points[k[1]], c->points[k[0]]);
    double side = 0;
    best = -1;
    for (int i = 0; i < c->count; i++) {
        double a = v3_dot(v3_cross(e, v3_sub(c->points[i], c->points[k[0]])), c->normal);
        if (fabs(a) > best) best = fabs(a), k[2] = i, side = a;
    }
    best = 0;
    for (int i = 0; i < c->count; i++) {
        double a = v3_dot(v3_cross(e, v3_sub(c->points[i], c->points[k[0]])), c->normal);
        if (a * side < 0 && fabs(a) > best) best = fabs(a), k[3] = i;
    }
    imp_vec3 pts[4];
    double dep[4];
    int n = 0;
    for (int j = 0; j < 4; j++) {
        if (k[j] < 0) continue;
        bool dup = false;
        for (int m = 0; m < j; m++) dup = dup || k[m] == k[j];
        if (!dup) pts[n] = c->points[k[j]], dep[n] = c->depth[k[j]], n++;
    }
    for (int j = 0; j < n; j++) c->points[j] = pts[j], c->depth[j] = dep[j];
    c->count = n;
}

static void core_of(const geom *g, imp_vec3 *p0, imp_vec3 *p1)
{
    if (g->type == IMP_SHAPE_CAPSULE) {
        imp_vec3 a = v3_scale(m3_col(g->R, 1), g->half_height);
        *p0 = v3_sub(g->p, a), *p1 = v3_add(g->p, a);
    } else *p0 = *p1 = g->p;
}

/* ---- core - core ------------------------------------------------------------------------------------------- */

static int core_core(const geom *A, const geom *B, np_man *c)
{
    imp_vec3 a0, a1, b0, b1, pa, pb;
    core_of(A, &a0, &a1), core_of(B, &b0, &b1);
    const double r = A->radius + B->radius;
    double d = seg_seg(a0, a1, b0, b1, &pa, &pb);
    if (d > r + SHAPE_TOUCH) return 0;
    imp_vec3 n = d > 1e-12 ? v3_scale(v3_sub(pa, pb), 1.0 / d) : v3(0, 1, 0);
    c->normal = n;
    /* two nearly parallel capsules: a point per end that overlaps */
    imp_vec3 da = v3_sub(a1, a0), db = v3_sub(b1, b0);
    if (A->type == IMP_SHAPE_CAPSULE && B->type == IMP_SHAPE_CAPSULE && v3_len(da) > 0 && v3_len(db) > 0 &&
        fabs(v3_dot(v3_normalize(da), v3_normalize(db))) > 0.999) {
        imp_vec3 ends[4] = {a0, a1, b0, b1};
        for (int k = 0; k < 4; k++) {
            imp_vec3 qa, qb;
            double dk = k < 2 ? seg_seg(ends[k], ends[k], b0, b1, &qa, &qb) : seg_seg(a0, a1, ends[k], ends[k], &qa, &qb);
            if (dk <= r + SHAPE_TOUCH && (k < 2 ? 1 : v3_len(v3_sub(qa, a0)) > 1e-9 && v3_len(v3_sub(qa, a1)) > 1e-9))
                add_point(c, v3_mad(qa, n, -A->radius), r - dk);
        }
        if (c->count >= 2) return c->count;
        c->count = 0;
    }
    add_point(c, v3_mad(pa, n, -A->radius), r - d);
    return c->count;
}

/* ---- core - polytope ---------------------------------------------------------------------------------------- */

/* the edge of P parallel to dir (local) that is most extreme along u: lowest (sign -1) or highest */
static void support_edge(const poly *P, imp_vec3 dir, imp_vec3 u, double sign, imp_vec3 *e0, imp_vec3 *e1)
{
    double best = -INFINITY;
    for (int e = 0; e < P->ne; e++) {
        imp_vec3 a = v3_load(P->v + 3 * P->edges[2 * e]), b = v3_load(P->v + 3 * P->edges[2 * e + 1]);
        imp_vec3 d = v3_sub(b, a);
        double l = v3_len(d);
        if (l <= 0 || v3_len(v3_cross(v3_scale(d, 1.0 / l), dir)) > 1e-6) continue;
        imp_vec3 wa = poly_vertex(P, P->edges[2 * e]), wb = poly_vertex(P, P->edges[2 * e + 1]);
        double s = sign * (v3_dot(u, wa) + v3_dot(u, wb));
        if (s > best) best = s, *e0 = wa, *e1 = wb;
    }
}

/* Cyrus-Beck: the part [t0, t1] of the core segment p0 p1 inside all of B's half-spaces; false when
 * no part is */
static bool core_clip(const poly *B, imp_vec3 p0, imp_vec3 p1, double *t0, double *t1)
{
    bool inside = true;
    for (int f = 0; f < B->nf && inside; f++) {
        imp_vec3 n = poly_normal(B, f);
        double d = poly_offset(B, f, n), f0 = v3_dot(n, p0) - d, f1 = v3_dot(n, p1) - d;
        if (f0 > 0 && f1 > 0) inside = false;
        else if (f0 > 0) *t0 = fmax(*t0, f0 / (f0 - f1));
        else if (f1 > 0) *t1 = fmin(*t1, f0 / (f0 - f1));
        if (*t0 > *t1) inside = false;
    }
    return inside;
}

/* part [t0, t1] of the core p0 p1 is inside B: the part inside, c0 c1, decides (the rest of a long
 * capsule may stick out). The normal is the face it penetrates least, or an axis seg x edge when a
 * segment penetrates clearly less across an edge (as in the SAT); the points are the ends of the
 * part inside. */
static int core_inside_poly(const geom *A, const poly *B, imp_vec3 p0, imp_vec3 p1, double t0, double t1, np_man *c)
{
    const double r = A->radius;
    const bool seg = A->type == IMP_SHAPE_CAPSULE;
    imp_vec3 sd = v3_sub(p1, p0), c0 = v3_mad(p0, sd, t0), c1 = v3_mad(p0, sd, t1);
    double best = INFINITY;
    int bf = 0;
    for (int f = 0; f < B->nf; f++) {
        imp_vec3 n = poly_normal(B, f);
        double d = poly_offset(B, f, n), pen = r - fmin(v3_dot(n, c0) - d, v3_dot(n, c1) - d);
        if (pen < best) best = pen, bf = f;
    }
    if (seg && v3_len(sd) > 0) {
        imp_vec3 mid = v3_scale(v3_add(c0, c1), 0.5), bu = v3(0, 0, 0);
        double be = INFINITY;
        int bj = -1;
        for (int j = 0; j < B->ndir; j++) {
            imp_vec3 u = v3_cross(sd, m3_mul_v(B->R, B->dirs[j]));
            double l = v3_len(u);
            if (l < 1e-9 * v3_len(sd)) continue;
            u = v3_scale(u, 1.0 / l);
            if (v3_dot(u, v3_sub(mid, B->center)) < 0) u = v3_scale(u, -1);
            double blo, bhi;
            project(B, u, &blo, &bhi);
            double pen = bhi - (fmin(v3_dot(u, c0), v3_dot(u, c1)) - r);
            if (pen < be) be = pen, bj = j, bu = u;
        }
        if (bj >= 0 && be < 0.95 * best - 5e-4) {
            imp_vec3 b0 = B->center, b1 = B->center, qa, qb;
            support_edge(B, B->dirs[bj], bu, +1, &b0, &b1);
            seg_seg(c0, c1, b0, b1, &qa, &qb);
            c->normal = bu;
            set_edges(c, v3_sub(c1, c0), v3_sub(b1, b0));
            add_point(c, v3_mad(qa, bu, -r), be);
            return c->count;
        }
    }
    imp_vec3 n = poly_normal(B, bf);
    double d = poly_offset(B, bf, n);
    c->normal = n;
    for (int k = 0; k < (seg ? 2 : 1); k++) {
        imp_vec3 q = k ? c1 : c0;
        double dist = v3_dot(n, q) - d;
        if (dist < r) add_point(c, v3_mad(q, n, -r), r - dist);
    }
    return c->count;
}

/* the core p0 p1 is outside B: the closest features (each face's interior against the core's ends,
 * each face edge against the segment); a capsule lying on a face gets a point per end */
static int core_outside_poly(const geom *A, const poly *B, imp_vec3 p0, imp_vec3 p1, np_man *c)
{
    const double r = A->radius;
    const bool seg = A->type == IMP_SHAPE_CAPSULE;
    double best = INFINITY;
    imp_vec3 bc = p0, bp = p0;
    for (int f = 0; f < B->nf; f++) {
        imp_vec3 n = poly_normal(B, f);
        double d = poly_offset(B, f, n);
        for (int k = 0; k < (seg ? 2 : 1); k++) {
            imp_vec3 q = k ? p1 : p0;
            double dist = v3_dot(n, q) - d;
            if (dist < 0) continue;
            imp_vec3 proj = v3_mad(q, n, -dist);
            if (dist < best && in_face(B, f, n, proj)) best = dist, bc = q, bp = proj;
        }
        const int first = B->ff[f], cnt = B->fc[f];
        for (int k = 0; k < cnt; k++) {
            imp_vec3 a = poly_vertex(B, B->fv[first + k]), b = poly_vertex(B, B->fv[first + (k + 1) % cnt]), qc, qp;
            double dist = seg_seg(p0, p1, a, b, &qc, &qp);
            if (dist < best) best = dist, bc = qc, bp = qp;
        }
    }
    if (best > r + SHAPE_TOUCH) return 0;
    imp_vec3 n = best > 1e-12 ? v3_scale(v3_sub(bc, bp), 1.0 / best) : poly_normal(B, 0);
    if (seg) {
        int bf = -1;
        double align = 1 - 1e-3;
        for (int f = 0; f < B->nf; f++) {
            double a = v3_dot(poly_normal(B, f), n);
            if (a > align) align = a, bf = f;
        }
        if (bf >= 0) {
            imp_vec3 fn = poly_normal(B, bf);
            double d = poly_offset(B, bf, fn);
            for (int k = 0; k < 2; k++) {
                imp_vec3 q = k ? p1 : p0;
                double dist = v3_dot(fn, q) - d;
                if (dist <= r + SHAPE_TOUCH && dist >= 0 && in_face(B, bf, fn, v3_mad(q, fn, -dist))) add_point(c, v3_mad(q, fn, -r), r - dist);
            }
            if (c->count >= 2) {
                c->normal = fn;
                return c->count;
            }
            c->count = 0;
        }
    }
    c->normal = n;
    add_point(c, v3_mad(bc, n, -r), r - best);
    return c->count;
}

static int core_poly(const geom *A, const poly *B, np_man *c)
{
    imp_vec3 p0, p1;
    core_of(A, &p0, &p1);
    double t0 = 0, t1 = 1;
    if (core_clip(B, p0, p1, &t0, &t1)) return core_inside_poly(A, B, p0, p1, t0, t1, c);
    return core_outside_poly(A, B, p0, p1, c);
}

/* ---- polytope - polytope ------------------------------------------------------------------------------------ */

enum { AX_FACE_A = 0, AX_FACE_B = 1, AX_EDGE = 2, AX_EDGE_PAIR = 3 }; /* EDGE: directions i, j; EDGE_PAIR: edges i, j */
static int32_t witness_encode(int kind, int i, int j) { return kind | (i << 2) | (j << 17); }

/* separation along an axis given by its witness code; axis oriented from B to A */
/* the separation along the normal of edge i of A and edge j of B (Gregorius): n = ea x eb turned out
 * of A, dist = n . (q_b - q_a) for points of the two edges; the axis from B to A is -n */
static double edge_pair_sep(const poly *A, const poly *B, int i, int j, imp_vec3 *axis)
{
    imp_vec3 a0 = poly_vertex(A, A->edges[2 * i]), a1 = poly_vertex(A, A->edges[2 * i + 1]);
    imp_vec3 b0 = poly_vertex(B, B->edges[2 * j]), b1 = poly_vertex(B, B->edges[2 * j + 1]);
    imp_vec3 ea = v3_sub(a1, a0), eb = v3_sub(b1, b0), n = v3_cross(ea, eb);
    double l = v3_len(n);
    if (l < 1e-9 * v3_len(ea) * v3_len(eb)) return -INFINITY; /* parallel edges: the faces decide */
    n = v3_scale(n, 1.0 / l);
    if (v3_dot(n, v3_sub(a0, A->center)) < 0) n = v3_scale(n, -1);
    *axis = v3_scale(n, -1);
    return v3_dot(n, v3_sub(b0, a0));
}

static double axis_sep(const poly *A, const poly *B, int32_t code, imp_vec3 *axis)
{
    int kind = code & 3, i = (code >> 2) & 0x7fff, j = code >> 17;
    double alo, ahi, blo, bhi;
    if (kind == AX_EDGE_PAIR) return i < A->ne && j < B->ne ? edge_pair_sep(A, B, i, j, axis) : -INFINITY;
    if (kind == AX_FACE_A) {
        if (i >= A->nf) return -INFINITY;
        imp_vec3 n = poly_normal(A, i);
        project(B, n, &blo, &bhi);
        *axis = v3_scale(n, -1);
        return blo - poly_offset(A, i, n);
    }
    if (kind == AX_FACE_B) {
        if (i >= B->nf) return -INFINITY;
        imp_vec3 n = poly_normal(B, i);
        project(A, n, &alo, &ahi);
        *axis = n;
        return alo - poly_offset(B, i, n);
    }
    if (i >= A->ndir || j >= B->ndir) return -INFINITY;
    imp_vec3 u = v3_cross(m3_mul_v(A->R, A->dirs[i]), m3_mul_v(B->R, B->dirs[j]));
    double l = v3_len(u);
    if (l < 1e-6) return -INFINITY;
    u = v3_scale(u, 1.0 / l);
    if (v3_dot(u, v3_sub(A->center, B->center)) < 0) u = v3_scale(u, -1);
    project(A, u, &alo, &ahi), project(B, u, &blo, &bhi);
    *axis = u;
    return alo - bhi;
}


typedef struct sat_result {
    double face_a, face_b, edge;
    int fa, fb, ei, ej;
    bool edge_pairs;    /* ei, ej are edges (sat_gauss), not edge directions */
} sat_result;

/* The face axes of one side (A's faces against B, or B's against A): false as soon as one separates
 * (the witness then names the first in face order); else the deepest face and its separation.
 * A bound skips most projections. With O the other polytope and a ball of radius r about its centre
 * c inside it, the least of n . x over O is at most n . c - r, so a face's separation is at most
 *     ub_f = n_f . c - r - d_f,
 * computed in F's own frame (its local normals and offsets against c carried into that frame, one
 * rotation per side instead of one per face). The face with the largest ub_f is measured first; its
 * separation s0 is a lower bound of the side's deepest, so a face with ub_f < min(s0, SHAPE_TOUCH)
 * (with a margin above the rounding of either frame) is neither the deepest nor separating and is
 * not measured. The others are measured in face order as without the bound, so the result is the
 * same to the bit. */
enum { FACE_BOUND_MAX = 256 };

static double np_abs1(imp_vec3 a) { return fabs(a.x) + fabs(a.y) + fabs(a.z); }
/* the larger and the smaller of two numbers that are not NaN, inline (for bounds; fmax and fmin are
 * library calls) */
static double np_max(double a, double b) { return a > b ? a : b; }
static double np_min(double a, double b) { return a < b ? a : b; }

#if SPARSE_HAVE_AVX
/* the face bounds ub of sat_face_side for the faces [0, 4 k) of F, four at a time (the scalar loop's
 * operations); returns 4 k, where the scalar loop goes on */
static SPARSE_AVX int face_bounds_avx(const poly *F, imp_vec3 cl, double o_in, double scale, double *ub)
{
    const __m256d cx = _mm256_set1_pd(cl.x), cy = _mm256_set1_pd(cl.y), cz = _mm256_set1_pd(cl.z);
    const __m256d in = _mm256_set1_pd(o_in), tiny = _mm256_set1_pd(1e-9), sc = _mm256_set1_pd(scale);
    const __m256d rel = _mm256_set1_pd(1e-12), sign = _mm256_set1_pd(-0.0);
    int f = 0;
    for (; f + 4 <= F->nf; f += 4) {
        const __m256d d = _mm256_loadu_pd(F->fd + f);
        const __m256d nc = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(F->fnx + f), cx),
                                                       _mm256_mul_pd(_mm256_loadu_pd(F->fny + f), cy)),
                                         _mm256_mul_pd(_mm256_loadu_pd(F->fnz + f), cz));
        __m256d u = _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(_mm256_sub_pd(nc, in), d), tiny), sc);
        u = _mm256_add_pd(u, _mm256_mul_pd(rel, _mm256_andnot_pd(sign, d)));
        _mm256_storeu_pd(ub + f, u);
    }
    return f;
}
#endif

static bool sat_face_side(const poly *A, const poly *B, bool faces_of_b, int32_t *witness, double *deepest, int *deepest_f)
{
    const poly *F = faces_of_b ? B : A, *O = faces_of_b ? A : B;
    const int kind = faces_of_b ? AX_FACE_B : AX_FACE_A;
    const double o_in = poly_inradius(O);
    imp_vec3 axis;
    double ub[FACE_BOUND_MAX], s0 = 0, skip_below = -INFINITY;
    int f0 = -1;
    if (F->nf <= FACE_BOUND_MAX && o_in > 0) {
        const imp_vec3 cl = m3_mul_tv(F->R, v3_sub(O->center, F->p)); /* O's centre in F's frame */
        const double scale = 1e-12 * (np_abs1(O->center) + np_abs1(F->p) + np_abs1(cl));
        const imp_vec3 *fn = F->fn;
        const double *fd = F->fd;
        int f = 0;
#if SPARSE_HAVE_AVX
        if (F->fnx && sparse_avx()) f = face_bounds_avx(F, cl, o_in, scale, ub);
#endif
        for (; f < F->nf; f++) {
            const double nc = fn[f].x * cl.x + fn[f].y * cl.y + fn[f].z * cl.z;
            ub[f] = nc - o_in - fd[f] + 1e-9 + scale + 1e-12 * fabs(fd[f]); /* margin above rounding */
        }
        for (f = 0; f < F->nf; f++)
            if (f0 < 0 || ub[f] > ub[f0]) f0 = f;
        if (f0 >= 0) {
            s0 = axis_sep(A, B, witness_encode(kind, f0, 0), &axis);
            if (isfinite(s0)) skip_below = fmin(s0, SHAPE_TOUCH);
        }
    }
    for (int f = 0; f < F->nf; f++) {
        double s;
        if (f == f0) s = s0;
        else if (f0 >= 0 && ub[f] < skip_below) continue;
        else s = axis_sep(A, B, witness_encode(kind, f, 0), &axis);
        if (s > SHAPE_TOUCH) { if (witness) *witness = witness_encode(kind, f, 0); return false; }
        if (s > *deepest) *deepest = s, *deepest_f = f;
    }
    return true;
}

/* the cached witness, then the face normals of A and of B: false as soon as one separates (the
 * witness then names it); else the deepest face of each in r, edges not yet measured */
static bool sat_faces(const poly *A, const poly *B, int32_t *witness, sat_result *r, bool edge_pairs)
{
    imp_vec3 axis;
    if (witness && *witness >= 0 && axis_sep(A, B, *witness, &axis) > SHAPE_TOUCH) return false; /* still separated */
    r->face_a = r->face_b = r->edge = -INFINITY;
    r->fa = r->fb = r->ei = r->ej = 0;
    r->edge_pairs = edge_pairs;
    return sat_face_side(A, B, false, witness, &r->face_a, &r->fa) && sat_face_side(A, B, true, witness, &r->face_b, &r->fb);
}

/* the separating axis search over every face and edge-pair axis; false when an axis separates */
/* The separating axis search with Gauss-map pruning (Gregorius, GDC 2013). On the unit sphere each
 * face is a point (its normal) and each edge the arc between its two faces' normals; an edge pair
 * of A and B can only give a separating axis if A's arc and the arc of B's negated normals cross
 * (the two edges then form a face of the Minkowski difference). With arcs (a, b) and (c, d):
 *     c.(b x a) and d.(b x a) of opposite signs, a.(d x c) and b.(d x c) of opposite signs, and
 *     c.(b x a), b.(d x c) of one sign (the arcs lie in one hemisphere)
 * That leaves O(E) of the E_A E_B edge pairs, each tested with two points instead of projections.
 * The first test needs c.(b x a) for the two faces of each edge of B: per edge of A, the B normals'
 * products with b x a are computed once per face (a face borders several edges), each edge looks its
 * two up, and only the edges whose arc crosses the plane of A's arc (a few of them) get the second
 * and third tests. Faces are tested by projecting the other polytope's vertices. */
enum { GAUSS_MAX = 256, GAUSS_EDGES = 512 };

/* For the plane of one arc of A (its normal u = b x a): side[f] = n_f . u for B's negated normals n_f,
 * and the edges of B whose two faces lie strictly on either side (side[face0] side[face1] < 0), in
 * ascending order into crossing; returns their count. The vector path (AVX) forms side four faces at a
 * time with the scalar path's operations; the edges are picked by scalar loads either way (a gather
 * of the two sides per edge is slower than the loads on the processors measured). */
static int gauss_crossings_scalar(const double *nbx, const double *nby, const double *nbz, int nfb, const int *face0,
                                  const int *face1, int ne, imp_vec3 u, double *side, int *crossing)
{
    for (int f = 0; f < nfb; f++) side[f] = nbx[f] * u.x + nby[f] * u.y + nbz[f] * u.z;
    int nc = 0;
    for (int j = 0; j < ne; j++) {
        crossing[nc] = j;
        nc += side[face0[j]] * side[face1[j]] < 0;
    }
    return nc;
}

#if SPARSE_HAVE_AVX
static SPARSE_AVX int gauss_crossings_avx(const double *nbx, const double *nby, const double *nbz, int nfb,
                                           const int *face0, const int *face1, int ne, imp_vec3 u, double *side,
                                           int *crossing)
{
    const __m256d ux = _mm256_set1_pd(u.x), uy = _mm256_set1_pd(u.y), uz = _mm256_set1_pd(u.z);
    int f = 0;
    for (; f + 4 <= nfb; f += 4)
        _mm256_storeu_pd(side + f, _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(nbx + f), ux),
                                                                _mm256_mul_pd(_mm256_loadu_pd(nby + f), uy)),
                                                  _mm256_mul_pd(_mm256_loadu_pd(nbz + f), uz)));
    for (; f < nfb; f++) side[f] = nbx[f] * u.x + nby[f] * u.y + nbz[f] * u.z;
    int nc = 0;
    for (int j = 0; j < ne; j++) {
        crossing[nc] = j;
        nc += side[face0[j]] * side[face1[j]] < 0;
    }
    return nc;
}
#endif

static int gauss_crossings(const double *nbx, const double *nby, const double *nbz, int nfb, const int *face0,
                           const int *face1, int ne, imp_vec3 u, double *side, int *crossing)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) return gauss_crossings_avx(nbx, nby, nbz, nfb, face0, face1, ne, u, side, crossing);
#endif
    return gauss_crossings_scalar(nbx, nby, nbz, nfb, face0, face1, ne, u, side, crossing);
}

static bool sat_gauss(const poly *A, const poly *B, int32_t *witness, sat_result *r)
{
    imp_vec3 axis;
    if (!sat_faces(A, B, witness, r, true)) return false;
    /* world normals of A's faces; B's negated normals as structure of arrays (the per-face products
     * vectorize); for each edge of B its arc's two faces and the arc ends' cross product d x c */
    imp_vec3 na[GAUSS_MAX];
    double nbx[GAUSS_MAX], nby[GAUSS_MAX], nbz[GAUSS_MAX], side[GAUSS_MAX];
    double ex[GAUSS_EDGES], ey[GAUSS_EDGES], ez[GAUSS_EDGES];
    int crossing[GAUSS_EDGES], face0[GAUSS_EDGES], face1[GAUSS_EDGES];
    const int ne = B->ne, nfb = B->nf;
    const int *bf = B->edge_faces;
    for (int f = 0; f < A->nf; f++) na[f] = poly_normal(A, f);
    for (int f = 0; f < nfb; f++) {
        imp_vec3 n = v3_scale(poly_normal(B, f), -1);
        nbx[f] = n.x, nby[f] = n.y, nbz[f] = n.z;
    }
    for (int j = 0; j < ne; j++) {
        const int fc = bf[2 * j], fd = bf[2 * j + 1];
        face0[j] = fc, face1[j] = fd;
        imp_vec3 dxc = v3_cross(v3(nbx[fd], nby[fd], nbz[fd]), v3(nbx[fc], nby[fc], nbz[fc]));
        ex[j] = dxc.x, ey[j] = dxc.y, ez[j] = dxc.z;
    }
    /* Edge pairs that cannot matter. The pair (i, j) only counts when its separation s exceeds
     * min(SHAPE_TOUCH, NP_EDGE_REL face + NP_EDGE_ABS): below, it neither separates nor wins over the
     * faces (poly_poly). Its axis n is a point of A's arc (a, b), turned out of A, and on a crossing
     * edge b0 of B is B's support point against n, so with a ball of radius r about B's centre c
     * inside B and a0 on A's edge,  s = n . (b0 - a0) <= max over the arc of n . (c - a0) - r.
     * An edge of A whose bound is below that threshold (with a margin for rounding, larger for short
     * arcs, whose crossing points round more) is left out; the others run as they would, in order. */
    const double face = fmax(r->face_a, r->face_b);
    const double matter = fmin(SHAPE_TOUCH, NP_EDGE_REL * face + NP_EDGE_ABS);
    const double b_in = poly_inradius(B);
    const bool bounded = b_in > 0 && isfinite(face);
    double shortest_b = B->arc ? B->arc_min : INFINITY;
    for (int j = 0; j < ne && bounded && !B->arc; j++) shortest_b = np_min(shortest_b, sqrt(ex[j] * ex[j] + ey[j] * ey[j] + ez[j] * ez[j]));
    /* the bound is computed in A's frame (A's own normals and vertices, B's centre carried over once),
     * its margin widened by the rounding of that rotation */
    const imp_vec3 cb = m3_mul_tv(A->R, v3_sub(B->center, A->p));
    const double frame_margin = 1e-12 * (np_abs1(B->center) + np_abs1(A->p) + np_abs1(cb));
    const double inv_shortest = 1 / np_max(shortest_b, 1e-300);
    for (int i = 0; i < A->ne; i++) {
        if (bounded && A->arc) {
            /* the same bound from the arc's constants (hull.h): with e the arc's unit axis and wp = wv - e (e . wv)
             * the projection on its great circle, wp . a = wv . a and wp . b = wv . b (e is normal to both), so wp
             * lies between a and b when wv . b - (a . b) wv . a >= 0 and wv . a - (a . b) wv . b >= 0 (the two
             * triple products of the test below, by the Binet-Cauchy identity), and |wp|^2 = |wv|^2 - (e . wv)^2 */
            const double *arc = A->arc + 5 * i;
            const imp_vec3 a = A->fn[A->edge_faces[2 * i]], b = A->fn[A->edge_faces[2 * i + 1]];
            const imp_vec3 wv = v3_sub(cb, v3_load(A->v + 3 * A->edges[2 * i]));
            const double da = v3_dot(a, wv), db = v3_dot(b, wv), cab = arc[3];
            double top = np_max(da, db);
            if (arc[4] > 0 && db - cab * da >= 0 && da - cab * db >= 0) {
                const double de = arc[0] * wv.x + arc[1] * wv.y + arc[2] * wv.z, wp2 = v3_dot(wv, wv) - de * de;
                top = np_max(top, sqrt(np_max(wp2, 0)));
            }
            const double margin = 1e-9 + frame_margin + 1e-12 * (np_abs1(wv) + b_in) * (1 + arc[4] + inv_shortest);
            if (top - b_in + margin < matter) continue;
        } else if (bounded) {
            const imp_vec3 a = A->fn[A->edge_faces[2 * i]], b = A->fn[A->edge_faces[2 * i + 1]], bxa = v3_cross(b, a);
            const imp_vec3 wv = v3_sub(cb, v3_load(A->v + 3 * A->edges[2 * i]));
            const double len = v3_len(bxa), wl = v3_len(wv);
            double top = np_max(v3_dot(a, wv), v3_dot(b, wv)); /* the arc's ends */
            if (len > 0) { /* its inside: the great circle's highest point, when it lies between a and b */
                const imp_vec3 e = v3_scale(bxa, 1 / len), wp = v3_sub(wv, v3_scale(e, v3_dot(wv, e)));
                const imp_vec3 axb = v3_scale(bxa, -1);
                if (v3_dot(v3_cross(a, wp), axb) >= 0 && v3_dot(v3_cross(wp, b), axb) >= 0) top = np_max(top, v3_len(wp));
            }
            const double margin = 1e-9 + frame_margin + 1e-12 * (wl + b_in) * (1 + 1 / np_max(len, 1e-300) + inv_shortest);
            if (top - b_in + margin < matter) continue;
        }
        const imp_vec3 a = na[A->edge_faces[2 * i]], b = na[A->edge_faces[2 * i + 1]], bxa = v3_cross(b, a);
        const int nc = gauss_crossings(nbx, nby, nbz, nfb, face0, face1, ne, bxa, side, crossing);
        for (int k = 0; k < nc; k++) {
            const int j = crossing[k];
            const double cba = side[bf[2 * j]];
            const double adc = a.x * ex[j] + a.y * ey[j] + a.z * ez[j], bdc = b.x * ex[j] + b.y * ey[j] + b.z * ez[j];
            if (!((adc * bdc < 0) & (cba * bdc > 0))) continue;
            double s = edge_pair_sep(A, B, i, j, &axis);
            if (s > SHAPE_TOUCH) { if (witness) *witness = witness_encode(AX_EDGE_PAIR, i, j); return false; }
            if (s > r->edge) r->edge = s, r->ei = i, r->ej = j;
        }
    }
    if (witness) *witness = -1;
    return true;
}

static bool sat_generic(const poly *A, const poly *B, int32_t *witness, sat_result *r)
{
    imp_vec3 axis;
    if (!sat_faces(A, B, witness, r, false)) return false;
    for (int i = 0; i < A->ndir; i++)
        for (int j = 0; j < B->ndir; j++) {
            double s = axis_sep(A, B, witness_encode(AX_EDGE, i, j), &axis);
            if (s > SHAPE_TOUCH) { if (witness) *witness = witness_encode(AX_EDGE, i, j); return false; }
            if (s > r->edge) r->edge = s, r->ei = i, r->ej = j;
        }
    if (witness) *witness = -1;
    return true;
}

/* The same search for two boxes in closed form (Gottschalk's OBB test): with the relative rotation
 * C = R_A^T R_B and the centre offset T = R_A^T (p_B - p_A), the 15 axes cost a few flops each:
 *   face i of A:   |T_i| - a_i - sum_j b_j |C_ij|
 *   face j of B:   |(C^T T)_j| - b_j - sum_i a_i |C_ij|
 *   edges i x j:  (|T_(i+2) C_(i+1)j - T_(i+1) C_(i+2)j| - a_(i+1)|C_(i+2)j| - a_(i+2)|C_(i+1)j|
 *                   - b_(j+1)|C_i(j+2)| - b_(j+2)|C_i(j+1)|) / sqrt(1 - C_ij^2)
 * (the axes as in the generic search: face codes 2i / 2i+1 for the +/- side facing the other box) */
typedef struct bb_ctx { double C[3][3], AC[3][3], T[3], TB[3], a[3], b[3]; } bb_ctx;

static double bb_sep(const bb_ctx *k, int32_t code)
{
    int kind = code & 3, i = (code >> 2) & 0x7fff, j = code >> 17;
    if (kind == AX_FACE_A) {
        int ax = i / 2;
        double sign = (i & 1) ? -1 : 1;
        double rb = k->b[0] * k->AC[ax][0] + k->b[1] * k->AC[ax][1] + k->b[2] * k->AC[ax][2];
        return sign * k->T[ax] - k->a[ax] - rb;
    }
    if (kind == AX_FACE_B) {
        int ax = i / 2;
        double sign = (i & 1) ? -1 : 1; /* B's face +/- b_j: A lies beyond it when -/+ TB_j > 0 */
        double ra = k->a[0] * k->AC[0][ax] + k->a[1] * k->AC[1][ax] + k->a[2] * k->AC[2][ax];
        return -sign * k->TB[ax] - k->b[ax] - ra;
    }
    double l2 = 1 - k->C[i][j] * k->C[i][j];
    if (l2 < 1e-12) return -INFINITY;
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    double tl = k->T[i2] * k->C[i1][j] - k->T[i1] * k->C[i2][j];
    double ra = k->a[i1] * k->AC[i2][j] + k->a[i2] * k->AC[i1][j];
    double rb = k->b[j1] * k->AC[i][j2] + k->b[j2] * k->AC[i][j1];
    return (fabs(tl) - ra - rb) / sqrt(l2);
}

static bool sat_boxes(const poly *A, const poly *B, int32_t *witness, sat_result *r)
{
    bb_ctx k;
    imp_vec3 d = v3_sub(B->p, A->p);
    for (int i = 0; i < 3; i++) {
        imp_vec3 ai = m3_col(A->R, i);
        k.T[i] = v3_dot(ai, d);
        for (int j = 0; j < 3; j++) {
            k.C[i][j] = v3_dot(ai, m3_col(B->R, j));
            k.AC[i][j] = fabs(k.C[i][j]) + 1e-12;
        }
    }
    for (int j = 0; j < 3; j++) k.TB[j] = k.C[0][j] * k.T[0] + k.C[1][j] * k.T[1] + k.C[2][j] * k.T[2];
    k.a[0] = A->half.x, k.a[1] = A->half.y, k.a[2] = A->half.z;
    k.b[0] = B->half.x, k.b[1] = B->half.y, k.b[2] = B->half.z;
    if (witness && *witness >= 0 && bb_sep(&k, *witness) > SHAPE_TOUCH) return false;
    r->face_a = r->face_b = r->edge = -INFINITY;
    r->edge_pairs = false;
    r->fa = r->fb = r->ei = r->ej = 0;
    /* the same expressions as bb_sep, written out for the 15 axes in turn */
    for (int i = 0; i < 3; i++) {
        double s = fabs(k.T[i]) - k.a[i] - (k.b[0] * k.AC[i][0] + k.b[1] * k.AC[i][1] + k.b[2] * k.AC[i][2]);
        if (s > SHAPE_TOUCH) { if (witness) *witness = witness_encode(AX_FACE_A, 2 * i + (k.T[i] < 0), 0); return false; }
        if (s > r->face_a) r->face_a = s, r->fa = 2 * i + (k.T[i] < 0);
    }
    for (int j = 0; j < 3; j++) {
        double s = fabs(k.TB[j]) - k.b[j] - (k.a[0] * k.AC[0][j] + k.a[1] * k.AC[1][j] + k.a[2] * k.AC[2][j]);
        if (s > SHAPE_TOUCH) { if (witness) *witness = witness_encode(AX_FACE_B, 2 * j + (k.TB[j] > 0), 0); return false; }
        if (s > r->face_b) r->face_b = s, r->fb = 2 * j + (k.TB[j] > 0);
    }
    /* an edge axis is only used when it beats the faces by the margin of poly_poly (0.95, 0.5 mm);
     * its separation num / |L| is at most num (|L| <= 1), so most need no square root */
    const double edge_floor = 0.95 * fmax(r->face_a, r->face_b) + 5e-4;
    for (int i = 0; i < 3; i++) {
        const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; j++) {
            double l2 = 1 - k.C[i][j] * k.C[i][j];
            if (l2 < 1e-12) continue;
            const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            double tl = k.T[i2] * k.C[i1][j] - k.T[i1] * k.C[i2][j];
            double ra = k.a[i1] * k.AC[i2][j] + k.a[i2] * k.AC[i1][j], rb = k.b[j1] * k.AC[i][j2] + k.b[j2] * k.AC[i][j1];
            double num = fabs(tl) - ra - rb;
            if (num > 0 && num * num > SHAPE_TOUCH * SHAPE_TOUCH * l2) { /* num / |L| > SHAPE_TOUCH */
                if (witness) *witness = witness_encode(AX_EDGE, i, j);
                return false;
            }
            if (num <= edge_floor) continue;
            double s = num / sqrt(l2);
            if (s > r->edge) r->edge = s, r->ei = i, r->ej = j;
        }
    }
    if (witness) *witness = -1;
    return true;
}

/* keep the part of the polygon in[0..n) where s . x <= sd (one Sutherland-Hodgman pass) */
static int clip_polygon(const imp_vec3 *in, int n, imp_vec3 s, double sd, imp_vec3 *out, int max)
{
    int m = 0;
    for (int i = 0; i < n && m < max - 1; i++) {
        imp_vec3 p = in[i], q = in[(i + 1) % n];
        double dp = v3_dot(s, p) - sd, dq = v3_dot(s, q) - sd;
        if (dp <= 0) out[m++] = p;
        if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) out[m++] = v3_add(p, v3_scale(v3_sub(q, p), dp / (dp - dq)));
    }
    return m;
}

/* the points of the incident polygon poly[0..n) under the reference plane nr . x = dr */
static int face_points(const imp_vec3 *poly_pts, int n, imp_vec3 nr, double dr, bool ref_is_a, np_man *c)
{
    c->normal = ref_is_a ? v3_scale(nr, -1) : nr;
    c->face_a = ref_is_a;
    /* points up to NP_KEEP above the reference face join a manifold that touches: a box tilted by a
     * hair keeps its 4 corners (the contact solver lets such a gap close, and no more), so resting
     * stacks do not rock between 3-point manifolds */
    double dmin = INFINITY;
    for (int i = 0; i < n; i++) dmin = fmin(dmin, v3_dot(nr, poly_pts[i]) - dr);
    for (int i = 0; i < n; i++) {
        double dist = v3_dot(nr, poly_pts[i]) - dr;
        if (dist > SHAPE_TOUCH && !(dmin <= SHAPE_TOUCH && dist <= NP_KEEP)) continue;
        add_point(c, ref_is_a ? v3_mad(poly_pts[i], nr, -dist) : poly_pts[i], -dist);
    }
    return c->count;
}

/* The manifold of two boxes without generic polygons: the reference face's side planes are the
 * other two axes of its box at +- the half extents, the incident face is the face of the other box
 * whose axis is most parallel to the reference normal, and a supporting edge is the box centre
 * pushed by the half extents against the axis on the two other axes. */
static int box_box_manifold(const poly *A, const poly *B, const sat_result *r, np_man *c)
{
    const double rel = NP_EDGE_REL, abs_tol = NP_EDGE_ABS;
    const double ha[3] = {A->half.x, A->half.y, A->half.z}, hb[3] = {B->half.x, B->half.y, B->half.z};
    if (r->edge > rel * fmax(r->face_a, r->face_b) + abs_tol) {
        imp_vec3 u;
        double sep = axis_sep(A, B, witness_encode(AX_EDGE, r->ei, r->ej), &u);
        imp_vec3 ca = A->p, cb = B->p;
        for (int j = 0; j < 3; j++) {
            imp_vec3 aj = m3_col(A->R, j), bj = m3_col(B->R, j);
            if (j != r->ei) ca = v3_mad(ca, aj, v3_dot(u, aj) > 0 ? -ha[j] : ha[j]);
            if (j != r->ej) cb = v3_mad(cb, bj, v3_dot(u, bj) > 0 ? hb[j] : -hb[j]);
        }
        imp_vec3 ea = v3_scale(m3_col(A->R, r->ei), ha[r->ei]), eb = v3_scale(m3_col(B->R, r->ej), hb[r->ej]), pa, pb;
        seg_seg(v3_sub(ca, ea), v3_add(ca, ea), v3_sub(cb, eb), v3_add(cb, eb), &pa, &pb);
        c->normal = u;
        set_edges(c, ea, eb);
        add_point(c, pa, -sep);
        return c->count;
    }
    const poly *ref = B, *inc = A;
    int rf = r->fb;
    bool ref_is_a = false;
    if (r->face_a > rel * r->face_b + abs_tol) ref = A, inc = B, rf = r->fa, ref_is_a = true;
    const double *hr = ref_is_a ? ha : hb, *hi = ref_is_a ? hb : ha;
    const int k = rf / 2;
    imp_vec3 nr = v3_scale(m3_col(ref->R, k), (rf & 1) ? -1 : 1);
    double dr = v3_dot(nr, ref->p) + hr[k];
    int j = 0;
    double best = -1;
    for (int a = 0; a < 3; a++) {
        double d = fabs(v3_dot(nr, m3_col(inc->R, a)));
        if (d > best) best = d, j = a;
    }
    imp_vec3 fn = m3_col(inc->R, j);
    if (v3_dot(fn, nr) > 0) fn = v3_scale(fn, -1);
    imp_vec3 fc = v3_mad(inc->p, fn, hi[j]);
    int ia = (j + 1) % 3, ib = (j + 2) % 3;
    imp_vec3 ua = v3_scale(m3_col(inc->R, ia), hi[ia]), ub = v3_scale(m3_col(inc->R, ib), hi[ib]);
    enum { MAXP = 16 };
    imp_vec3 buf[2][MAXP] = {{v3_add(v3_add(fc, ua), ub), v3_add(v3_sub(fc, ua), ub), v3_sub(v3_sub(fc, ua), ub), v3_sub(v3_add(fc, ua), ub)}};
    int n = 4, cur = 0;
    for (int side = 1; side <= 2 && n > 0; side++) {
        int ax = (k + side) % 3;
        imp_vec3 u = m3_col(ref->R, ax);
        double off = v3_dot(u, ref->p);
        n = clip_polygon(buf[cur], n, u, off + hr[ax], buf[1 - cur], MAXP), cur = 1 - cur;
        n = clip_polygon(buf[cur], n, v3_scale(u, -1), -off + hr[ax], buf[1 - cur], MAXP), cur = 1 - cur;
    }
    return face_points(buf[cur], n, nr, dr, ref_is_a, c);
}

/* force_fb >= 0: after the overlap test, use B's face force_fb as the reference face whatever the
 * best axis was (mesh triangles: their front face, so a body lying across two triangles is not
 * pushed sideways over the edge between them) */
static int poly_poly(const poly *A, const poly *B, np_man *c, int32_t *witness, int force_fb)
{
    sat_result r;
    const bool gauss = A->edge_faces && B->edge_faces && A->nf <= GAUSS_MAX && B->nf <= GAUSS_MAX && A->ne <= GAUSS_EDGES &&
                       B->ne <= GAUSS_EDGES;
    bool overlap = A->is_box && B->is_box ? sat_boxes(A, B, witness, &r)
                   : gauss                ? sat_gauss(A, B, witness, &r)
                                          : sat_generic(A, B, witness, &r);
    if (!overlap) return 0;
    if (force_fb >= 0) r.edge = r.face_a = -INFINITY, r.fb = force_fb, r.face_b = 0;
    if (A->is_box && B->is_box) return box_box_manifold(A, B, &r, c);
    /* they overlap: the manifold needs world vertices many times, transform them once */
    enum { WV_MAX = 64 };
    imp_vec3 wa[WV_MAX], wb[WV_MAX];
    poly pa = *A, pb = *B;
    if (A->nv <= WV_MAX && !A->wv) {
        for (int i = 0; i < A->nv; i++) wa[i] = poly_vertex(A, i);
        pa.wv = wa;
    }
    if (B->nv <= WV_MAX && !B->wv) {
        for (int i = 0; i < B->nv; i++) wb[i] = poly_vertex(B, i);
        pb.wv = wb;
    }
    A = &pa, B = &pb;
    const double face_a = r.face_a, face_b = r.face_b, edge = r.edge;
    const int fa = r.fa, fb = r.fb, ei = r.ei, ej = r.ej;
    const double rel = NP_EDGE_REL, abs_tol = NP_EDGE_ABS;
    double face = fmax(face_a, face_b);
    if (edge > rel * face + abs_tol) {
        /* edge / edge */
        imp_vec3 u;
        double sep = axis_sep(A, B, witness_encode(r.edge_pairs ? AX_EDGE_PAIR : AX_EDGE, ei, ej), &u);
        imp_vec3 a0, a1, b0, b1, qa, qb; /* the edges, and their closest points */
        if (r.edge_pairs) {
            a0 = poly_vertex(A, A->edges[2 * ei]), a1 = poly_vertex(A, A->edges[2 * ei + 1]);
            b0 = poly_vertex(B, B->edges[2 * ej]), b1 = poly_vertex(B, B->edges[2 * ej + 1]);
        } else {
            a0 = a1 = A->center, b0 = b1 = B->center;
            support_edge(A, A->dirs[ei], u, -1, &a0, &a1);
            support_edge(B, B->dirs[ej], u, +1, &b0, &b1);
        }
        seg_seg(a0, a1, b0, b1, &qa, &qb);
        c->normal = u;
        set_edges(c, v3_sub(a1, a0), v3_sub(b1, b0));
        add_point(c, qa, -sep);
        return c->count;
    }
    /* face: the reference face is B's unless A's is clearly better */
    const poly *ref = B, *inc = A;
    int rf = fb;
    bool ref_is_a = false;
    if (face_a > rel * face_b + abs_tol) ref = A, inc = B, rf = fa, ref_is_a = true;
    imp_vec3 nr = poly_normal(ref, rf);
    double dr = poly_offset(ref, rf, nr);
    int inf = 0;
    double most = INFINITY;
    for (int f = 0; f < inc->nf; f++) {
        double d = v3_dot(poly_normal(inc, f), nr);
        if (d < most) most = d, inf = f;
    }
    /* clip the incident polygon against the reference face's side planes */
    enum { MAXP = 64 };
    imp_vec3 buf[2][MAXP];
    int n = 0;
    for (int k = 0; k < inc->fc[inf] && n < MAXP; k++) buf[0][n++] = poly_vertex(inc, inc->fv[inc->ff[inf] + k]);
    int cur = 0;
    const int rfirst = ref->ff[rf], rcnt = ref->fc[rf];
    for (int k = 0; k < rcnt && n > 0; k++) {
        imp_vec3 a = poly_vertex(ref, ref->fv[rfirst + k]), b = poly_vertex(ref, ref->fv[rfirst + (k + 1) % rcnt]);
        imp_vec3 s = v3_cross(v3_sub(b, a), nr);
        double sl = v3_len(s);
        if (sl <= 0) continue;
        s = v3_scale(s, 1.0 / sl);
        n = clip_polygon(buf[cur], n, s, v3_dot(s, a), buf[1 - cur], MAXP), cur = 1 - cur;
    }
    return face_points(buf[cur], n, nr, dr, ref_is_a, c);
}

/* ---- planes and meshes ----------------------------------------------------------------------------------------- */

static int vs_plane(const geom *A, const geom *B, np_man *c)
{
    const imp_vec3 n = B->normal;
    c->normal = n;
    switch (A->type) {
    case IMP_SHAPE_SPHERE:
    case IMP_SHAPE_CAPSULE: {
        imp_vec3 p0, p1;
        core_of(A, &p0, &p1);
        /* a capsule that touches keeps its other end up to NP_LEVEL above the plane: one lying flat is
         * held at both ends, not tipped over one of them by round-off */
        const int ends = A->type == IMP_SHAPE_CAPSULE ? 2 : 1;
        double dist[2];
        for (int k = 0; k < ends; k++) dist[k] = v3_dot(n, k ? p1 : p0) - B->offset;
        const double reach = A->radius + SHAPE_TOUCH;
        const bool touches = dist[0] <= reach || (ends == 2 && dist[1] <= reach);
        for (int k = 0; k < ends; k++)
            if (dist[k] <= reach || (touches && dist[k] <= A->radius + NP_LEVEL))
                add_point(c, v3_mad(k ? p1 : p0, n, -A->radius), A->radius - dist[k]);
        break;
    }
    case IMP_SHAPE_BOX:
    case IMP_SHAPE_HULL: {
        box_data bd;
        poly P;
        if (A->type == IMP_SHAPE_BOX) poly_box(A, &bd, &P);
        else poly_hull(A, &P);
        double lo, hi;
        project(&P, n, &lo, &hi);
        if (lo > B->offset + SHAPE_TOUCH) return 0;
        for (int i = 0; i < P.nv; i++) {
            imp_vec3 q = poly_vertex(&P, i);
            double dist = v3_dot(n, q) - B->offset;
            if (dist <= NP_KEEP) add_point(c, q, -dist); /* lo <= offset + SHAPE_TOUCH: it touches */
        }
        break;
    }
    default:
        break;
    }
    return c->count;
}

typedef struct mesh_ctx {
    const geom *A, *B;
    const poly *PA;
    np_man *c;
    double deepest;
} mesh_ctx;

static void mesh_triangle(void *ctx, int t)
{
    mesh_ctx *k = ctx;
    const geom *A = k->A, *B = k->B;
    const mesh *m = B->mesh;
    imp_vec3 v[3];
    for (int j = 0; j < 3; j++) v[j] = v3_add(B->p, m3_mul_v(B->R, v3_load(m->v + 3 * m->tri[3 * t + j])));
    imp_vec3 lo = v[0], hi = v[0];
    for (int j = 1; j < 3; j++) {
        lo = v3(fmin(lo.x, v[j].x), fmin(lo.y, v[j].y), fmin(lo.z, v[j].z));
        hi = v3(fmax(hi.x, v[j].x), fmax(hi.y, v[j].y), fmax(hi.z, v[j].z));
    }
    if (lo.x > A->hi.x || hi.x < A->lo.x || lo.y > A->hi.y || hi.y < A->lo.y || lo.z > A->hi.z || hi.z < A->lo.z) return;
    imp_vec3 tn = m3_mul_v(B->R, m->n[t]);
    tri_data td;
    poly T;
    poly_triangle(v[0], v[1], v[2], tn, &td, &T);
    np_man tc;
    tc.count = 0;
    int np = (A->type == IMP_SHAPE_SPHERE || A->type == IMP_SHAPE_CAPSULE) ? core_poly(A, &T, &tc) : poly_poly(k->PA, &T, &tc, NULL, 0);
    if (np == 0 || v3_dot(tc.normal, tn) <= 0) return; /* one-sided */
    double dmax = 0;
    for (int j = 0; j < np; j++) dmax = fmax(dmax, tc.depth[j]), add_point(k->c, tc.points[j], tc.depth[j]);
    if (dmax > k->deepest) k->deepest = dmax, k->c->normal = tc.normal;
}

static int vs_mesh(const geom *A, const geom *B, np_man *c)
{
    box_data bd;
    poly PA;
    if (A->type == IMP_SHAPE_BOX) poly_box(A, &bd, &PA);
    else if (A->type == IMP_SHAPE_HULL) poly_hull(A, &PA);
    mesh_ctx k = {A, B, &PA, c, -INFINITY};
    /* A's bounds in the mesh frame: the box around A's world box turned by R^T */
    imp_vec3 wc = v3_scale(v3_add(A->lo, A->hi), 0.5), we = v3_scale(v3_sub(A->hi, A->lo), 0.5);
    imp_vec3 lc = m3_mul_tv(B->R, v3_sub(wc, B->p));
    const imp_mat3 R = B->R;
    imp_vec3 le = v3(fabs(R.m[0][0]) * we.x + fabs(R.m[1][0]) * we.y + fabs(R.m[2][0]) * we.z,
                     fabs(R.m[0][1]) * we.x + fabs(R.m[1][1]) * we.y + fabs(R.m[2][1]) * we.z,
                     fabs(R.m[0][2]) * we.x + fabs(R.m[1][2]) * we.y + fabs(R.m[2][2]) * we.z);
    mesh_query(B->mesh, v3_sub(lc, le), v3_add(lc, le), mesh_triangle, &k);
    if (A->type == IMP_SHAPE_SPHERE || A->type == IMP_SHAPE_CAPSULE) {
        /* a sphere over several triangles touches the nearest once (the neighbours only repeat it
         * at their edges); a capsule keeps at most a second point, away from the first */
        int best = 0;
        for (int i = 1; i < c->count; i++)
            if (c->depth[i] > c->depth[best]) best = i;
        int second = -1;
        for (int i = 0; A->type == IMP_SHAPE_CAPSULE && i < c->count; i++)
            if (i != best && v3_len(v3_sub(c->points[i], c->points[best])) > A->radius && (second < 0 || c->depth[i] > c->depth[second]))
                second = i;
        if (c->count > 0) {
            imp_vec3 p0 = c->points[best];
            double d0 = c->depth[best];
            if (second >= 0) c->points[1] = c->points[second], c->depth[1] = c->depth[second];
            c->points[0] = p0, c->depth[0] = d0;
            c->count = second >= 0 ? 2 : 1;
        }
    }
    reduce4(c);
    return c->count;
}

/* ---- dispatch ----------------------------------------------------------------------------------------------- */

bool np_order(imp_shape_type a, imp_shape_type b) { return a > b; }

static int np_dispatch(const geom *A, const geom *B, np_man *c, int32_t *witness)
{
    c->count = 0;
    const imp_shape_type ta = A->type, tb = B->type;
    const bool core_a = ta <= IMP_SHAPE_CAPSULE, core_b = tb <= IMP_SHAPE_CAPSULE;
    const bool poly_a = ta == IMP_SHAPE_BOX || ta == IMP_SHAPE_HULL, poly_b = tb == IMP_SHAPE_BOX || tb == IMP_SHAPE_HULL;
    if (tb == IMP_SHAPE_PLANE) return ta == IMP_SHAPE_PLANE || ta == IMP_SHAPE_MESH ? 0 : vs_plane(A, B, c);
    if (tb == IMP_SHAPE_MESH) return ta == IMP_SHAPE_MESH ? 0 : vs_mesh(A, B, c);
    if (core_a && core_b) return core_core(A, B, c);
    box_data ba, bb;
    poly PA, PB;
    if (poly_b) {
        if (tb == IMP_SHAPE_BOX) poly_box(B, ta == IMP_SHAPE_BOX ? NULL : &bb, &PB);
        else poly_hull(B, &PB);
    }
    if (core_a && poly_b) return core_poly(A, &PB, c);
    if (poly_a && poly_b) {
        if (ta == IMP_SHAPE_BOX && tb == IMP_SHAPE_BOX) {
            poly_box(A, NULL, &PA), poly_box(B, NULL, &PB); /* closed forms: no vertex lists */
            return poly_poly(&PA, &PB, c, witness, -1);
        }
        if (ta == IMP_SHAPE_BOX) poly_box(A, &ba, &PA);
        else poly_hull(A, &PA);
        return poly_poly(&PA, &PB, c, witness, -1);
    }
    return 0;
}

/* the manifold of A and B into out (at most IMP_MANIFOLD_MAX points: the 4 that span it best) */
int np_collide(const geom *A, const geom *B, imp_contact *out, int32_t *witness)
{
    np_man m;
    m.edge = m.face_a = false;
    m.normal = v3(0, 1, 0);
    np_dispatch(A, B, &m, witness);
    /* a shape whose pose overflowed or went NaN in the step (before the NaN guard puts its body
     * back) gives non-finite points: they are no contact */
    if (!v3_finite(m.normal)) m.count = 0;
    int finite = 0;
    for (int i = 0; i < m.count; i++)
        if (v3_finite(m.points[i]) && isfinite(m.depth[i])) m.points[finite] = m.points[i], m.depth[finite++] = m.depth[i];
    m.count = finite;
    reduce4(&m);
    out->normal = m.normal;
    out->edge = m.edge && m.count == 1;
    out->face_a = m.face_a && !out->edge;
    out->ea = m.ea, out->eb = m.eb;
    out->count = m.count;
    for (int i = 0; i < m.count; i++) out->points[i] = m.points[i], out->depth[i] = m.depth[i];
    return m.count;
}

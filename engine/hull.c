/* hull.c: convex hulls from point clouds by quickhull (Barber, Dobkin, Huhdanpaa 1996).
 *
 *   1. Start from a tetrahedron of extreme points: the two farthest apart of the six axis extremes,
 *      the point farthest from their line, the point farthest from the plane of those three. Orient
 *      its four faces outward.
 *   2. Give every other point to one face it lies above (its "conflict list"); points above no face
 *      are inside and are dropped for good.
 *   3. Repeat while any point is left: take the point farthest above its face (the eye). The faces
 *      the eye sees (distance > eps) form a connected cap; its boundary, the horizon, is the set of
 *      directed edges of visible faces whose reverse edge belongs to no visible face. Delete the
 *      cap, join the eye to every horizon edge (a, b) as the new face (a, b, eye), which keeps the
 *      outward winding, and hand the deleted faces' points to the new faces they lie above.
 *   4. Merge coplanar neighbouring triangles into polygon faces (a box's hull has 6 faces, not 12),
 *      order each polygon counter-clockwise around its normal, and list the unique edges and edge
 *      directions the separating-axis tests need.
 * eps is relative to the cloud's size, so points within rounding of a face count as on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hull.h"
#include "ids.h"

typedef struct qh_face {
    int v[3];
    imp_vec3 n;
    double d;
    int alive;
} qh_face;

typedef struct qh {
    const double *p;
    int n;
    qh_face *f;
    int nf, capf;
    int *owner;     /* point -> face it is above, -1 when settled (inside, or a hull vertex) */
    double eps;
} qh;

static imp_vec3 qh_point(const qh *q, int i) { return v3_load(q->p + 3 * i); }

static int qh_add_face(qh *q, int a, int b, int c)
{
    if (q->nf == q->capf) {
        q->capf = q->capf ? 2 * q->capf : 64;
        q->f = ids_grow(q->f, sizeof(qh_face), q->capf);
    }
    qh_face *f = &q->f[q->nf];
    f->v[0] = a, f->v[1] = b, f->v[2] = c;
    imp_vec3 n = v3_cross(v3_sub(qh_point(q, b), qh_point(q, a)), v3_sub(qh_point(q, c), qh_point(q, a)));
    f->n = v3_normalize(n);
    f->d = v3_dot(f->n, qh_point(q, a));
    f->alive = 1;
    return q->nf++;
}

static double qh_dist(const qh *q, int f, int i) { return v3_dot(q->f[f].n, qh_point(q, i)) - q->f[f].d; }

/* assign point i to the first face among [from, to) it lies above */
static void qh_assign(qh *q, int i, int from, int to)
{
    q->owner[i] = -1;
    for (int f = from; f < to; f++)
        if (q->f[f].alive && qh_dist(q, f, i) > q->eps) {
            q->owner[i] = f;
            return;
        }
}

static int cmp_angle(const void *a, const void *b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

void hull_free(hull *h)
{
    if (!h) return;
    free(h->v), free(h->vx), free(h->face_first), free(h->face_count), free(h->face_verts), free(h->face_n), free(h->face_d);
    free(h->edges), free(h->edge_faces), free(h->dirs), free(h->tris), free(h->arc), free(h->fnx);
    free(h);
}

static int find_root(int *uf, int i)
{
    while (uf[i] != i) i = uf[i] = uf[uf[i]];
    return i;
}

/* 1. the initial tetrahedron, its faces outward, and 2. the conflict lists; false (and err) when the
 * cloud has no volume */
static bool qh_tetrahedron(qh *q, char *err, size_t errlen)
{
    const double *pts = q->p;
    const int n = q->n;
    int ext[6] = {0, 0, 0, 0, 0, 0};
    double scale = 0;
    for (int i = 0; i < n; i++) {
        double c[3] = {pts[3 * i], pts[3 * i + 1], pts[3 * i + 2]};
        for (int k = 0; k < 3; k++) {
            if (c[k] < pts[3 * ext[2 * k] + k]) ext[2 * k] = i;
            if (c[k] > pts[3 * ext[2 * k + 1] + k]) ext[2 * k + 1] = i;
            scale = fmax(scale, fabs(c[k]));
        }
    }
    q->eps = 1e-10 * fmax(scale, 1e-300) * 3;
    int i0 = 0, i1 = 0;
    double best = -1;
    for (int a = 0; a < 6; a++)
        for (int b = a + 1; b < 6; b++) {
            double d = v3_len(v3_sub(qh_point(q, ext[a]), qh_point(q, ext[b])));
            if (d > best) best = d, i0 = ext[a], i1 = ext[b];
        }
    imp_vec3 u = v3_normalize(v3_sub(qh_point(q, i1), qh_point(q, i0)));
    int i2 = -1;
    best = 0;
    for (int i = 0; i < n; i++) {
        imp_vec3 r = v3_sub(qh_point(q, i), qh_point(q, i0));
        double d = v3_len(v3_sub(r, v3_scale(u, v3_dot(r, u))));
        if (d > best) best = d, i2 = i;
    }
    if (i2 < 0 || best < 1e-9 * fmax(scale, 1e-300)) {
        snprintf(err, errlen, "the hull's points are all on one line");
        return false;
    }
    const imp_vec3 p0 = qh_point(q, i0);
    imp_vec3 pn = v3_normalize(v3_cross(v3_sub(qh_point(q, i1), p0), v3_sub(qh_point(q, i2), p0)));
    int i3 = -1;
    best = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(v3_dot(pn, v3_sub(qh_point(q, i), p0)));
        if (d > best) best = d, i3 = i;
    }
    if (i3 < 0 || best < 1e-9 * fmax(scale, 1e-300)) {
        snprintf(err, errlen, "the hull's points are all in one plane: it has no volume");
        return false;
    }
    if (v3_dot(pn, v3_sub(qh_point(q, i3), p0)) > 0) { int t = i1; i1 = i2; i2 = t; } /* i3 below (i0,i1,i2) */
    qh_add_face(q, i0, i1, i2);
    qh_add_face(q, i0, i3, i1);
    qh_add_face(q, i1, i3, i2);
    qh_add_face(q, i2, i3, i0);
    q->owner = ids_grow(NULL, sizeof(int), n);
    for (int i = 0; i < n; i++) qh_assign(q, i, 0, 4);
    q->owner[i0] = q->owner[i1] = q->owner[i2] = q->owner[i3] = -1;
    return true;
}

/* the horizon of the visible faces vis[0..nv): their directed edges (a, b) whose reverse (b, a)
 * belongs to no visible face, 2 ints each into *hor; returns the ints written */
static int qh_horizon(const qh *q, const int *vis, int nv, int **hor, int *caph)
{
    int nh = 0;
    for (int k = 0; k < nv; k++) {
        const qh_face *f = &q->f[vis[k]];
        for (int e = 0; e < 3; e++) {
            int a = f->v[e], b = f->v[(e + 1) % 3];
            bool shared = false;
            for (int m = 0; m < nv && !shared; m++) {
                const qh_face *g = &q->f[vis[m]];
                for (int e2 = 0; e2 < 3; e2++)
                    if (g->v[e2] == b && g->v[(e2 + 1) % 3] == a) { shared = true; break; }
            }
            if (shared) continue;
            if (nh + 2 > *caph) *caph = *caph ? 2 * *caph : 64, *hor = ids_grow(*hor, sizeof(int), *caph);
            (*hor)[nh++] = a, (*hor)[nh++] = b;
        }
    }
    return nh;
}

/* 3. add the farthest conflicting point, the eye, until none is left: its visible cap goes, the
 * eye joins every horizon edge, and the cap's points go to the new faces */
static void qh_expand(qh *q)
{
    const int n = q->n;
    int *vis = NULL, *hor = NULL, capv = 0, caph = 0;
    for (;;) {
        int eye = -1;
        double far = 0;
        for (int i = 0; i < n; i++) {
            if (q->owner[i] < 0) continue;
            double d = qh_dist(q, q->owner[i], i);
            if (d > far) far = d, eye = i;
        }
        if (eye < 0) break;
        int nv = 0;
        for (int f = 0; f < q->nf; f++) {
            if (!q->f[f].alive || qh_dist(q, f, eye) <= q->eps) continue;
            if (nv == capv) capv = capv ? 2 * capv : 64, vis = ids_grow(vis, sizeof(int), capv);
            vis[nv++] = f;
        }
        const int nh = qh_horizon(q, vis, nv, &hor, &caph);
        for (int k = 0; k < nv; k++) q->f[vis[k]].alive = 0;
        int first_new = q->nf;
        for (int k = 0; k < nh; k += 2) qh_add_face(q, hor[k], hor[k + 1], eye);
        q->owner[eye] = -1;
        for (int i = 0; i < n; i++) {
            if (q->owner[i] < 0 || q->f[q->owner[i]].alive) continue;
            qh_assign(q, i, first_new, q->nf);
        }
    }
    free(vis), free(hor);
}

/* 4a. the live triangles compacted to the front of q->f (their count), and a union-find over them
 * in which coplanar triangles sharing an edge are one set */
static int *qh_coplanar_sets(qh *q, int *count)
{
    int nt = 0;
    for (int f = 0; f < q->nf; f++)
        if (q->f[f].alive) q->f[nt++] = q->f[f];
    int *uf = ids_grow(NULL, sizeof(int), nt);
    for (int t = 0; t < nt; t++) uf[t] = t;
    for (int t = 0; t < nt; t++)
        for (int s = t + 1; s < nt; s++) {
            if (v3_dot(q->f[t].n, q->f[s].n) < 1 - 1e-9 || fabs(q->f[t].d - q->f[s].d) > 10 * q->eps) continue;
            int shared = 0;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) shared += q->f[t].v[a] == q->f[s].v[b];
            if (shared >= 2) uf[find_root(uf, t)] = find_root(uf, s);
        }
    *count = nt;
    return uf;
}

/* 4b. the hull's vertices, the cloud points some triangle uses, in order of first use; map: cloud
 * point -> hull vertex (-1: unused) */
static int *hull_vertices(hull *h, const qh *q, int nt)
{
    int *map = ids_grow(NULL, sizeof(int), q->n);
    for (int i = 0; i < q->n; i++) map[i] = -1;
    h->v = ids_grow(NULL, 3 * sizeof(double), q->n);
    for (int t = 0; t < nt; t++)
        for (int a = 0; a < 3; a++) {
            int i = q->f[t].v[a];
            if (map[i] < 0) map[i] = h->nv, v3_store(h->v + 3 * h->nv++, qh_point(q, i));
        }
    h->vx = ids_grow(NULL, 3 * sizeof(double), h->nv); /* one block: vy and vz follow vx */
    h->vy = h->vx + h->nv, h->vz = h->vy + h->nv;
    for (int i = 0; i < h->nv; i++) h->vx[i] = h->v[3 * i], h->vy[i] = h->v[3 * i + 1], h->vz[i] = h->v[3 * i + 2];
    imp_vec3 cen = v3(0, 0, 0);
    for (int i = 0; i < h->nv; i++) cen = v3_add(cen, v3_load(h->v + 3 * i));
    h->centroid = v3_scale(cen, 1.0 / h->nv);
    return map;
}

/* 4c. one polygon face per coplanar set: its normal (the sum of its triangles' area normals,
 * normalized), its vertices counter-clockwise about it (sorted by angle around their centroid),
 * fanned into triangles; returns the face vertices listed */
static int hull_faces(hull *h, const qh *q, int nt, int *uf, const int *map)
{
    h->face_first = ids_grow(NULL, sizeof(int), nt);
    h->face_count = ids_grow(NULL, sizeof(int), nt);
    h->face_n = ids_grow(NULL, sizeof(imp_vec3), nt);
    h->face_d = ids_grow(NULL, sizeof(double), nt);
    h->face_verts = ids_grow(NULL, sizeof(int), 3 * nt);
    h->tris = ids_grow(NULL, 3 * sizeof(int), 3 * nt);
    double *ang = ids_grow(NULL, 2 * sizeof(double), 3 * nt); /* (angle, vertex) pairs */
    int *mark = ids_grow(NULL, sizeof(int), h->nv);
    int fv = 0;
    for (int root = 0; root < nt; root++) {
        if (find_root(uf, root) != root) continue;
        imp_vec3 nsum = v3(0, 0, 0);
        for (int i = 0; i < h->nv; i++) mark[i] = 0;
        int cnt = 0;
        imp_vec3 c = v3(0, 0, 0);
        for (int t = 0; t < nt; t++) {
            if (find_root(uf, t) != root) continue;
            imp_vec3 a = qh_point(q, q->f[t].v[0]), b = qh_point(q, q->f[t].v[1]), cc = qh_point(q, q->f[t].v[2]);
            nsum = v3_add(nsum, v3_cross(v3_sub(b, a), v3_sub(cc, a)));
            for (int k = 0; k < 3; k++) {
                int vi = map[q->f[t].v[k]];
                if (!mark[vi]) mark[vi] = 1, ang[2 * cnt + 1] = vi, cnt++, c = v3_add(c, v3_load(h->v + 3 * vi));
            }
        }
        imp_vec3 fn = v3_normalize(nsum);
        c = v3_scale(c, 1.0 / cnt);
        imp_vec3 e1 = v3_normalize(v3_sub(v3_load(h->v + 3 * (int)ang[1]), c));
        imp_vec3 e2 = v3_cross(fn, e1);
        for (int k = 0; k < cnt; k++) {
            imp_vec3 r = v3_sub(v3_load(h->v + 3 * (int)ang[2 * k + 1]), c);
            ang[2 * k] = atan2(v3_dot(r, e2), v3_dot(r, e1));
        }
        qsort(ang, (size_t)cnt, 2 * sizeof(double), cmp_angle);
        int f = h->nf++;
        h->face_first[f] = fv;
        h->face_count[f] = cnt;
        h->face_n[f] = fn;
        h->face_d[f] = v3_dot(fn, c);
        for (int k = 0; k < cnt; k++) h->face_verts[fv + k] = (int)ang[2 * k + 1];
        for (int k = 1; k + 1 < cnt; k++) {
            int *tr = h->tris + 3 * h->ntri++;
            tr[0] = h->face_verts[fv], tr[1] = h->face_verts[fv + k], tr[2] = h->face_verts[fv + k + 1];
        }
        fv += cnt;
    }
    free(ang), free(mark);
    return fv;
}

/* 4d. the unique edges, the faces on their two sides, and the unique edge directions (fv: the face
 * vertices listed, a bound on the edges) */
static void hull_edges(hull *h, int fv)
{
    h->edges = ids_grow(NULL, 2 * sizeof(int), fv);
    h->edge_faces = ids_grow(NULL, 2 * sizeof(int), fv);
    h->dirs = ids_grow(NULL, sizeof(imp_vec3), fv);
    for (int f = 0; f < h->nf; f++)
        for (int k = 0; k < h->face_count[f]; k++) {
            int a = h->face_verts[h->face_first[f] + k], b = h->face_verts[h->face_first[f] + (k + 1) % h->face_count[f]];
            if (a > b) { int t = a; a = b; b = t; }
            int seen = -1;
            for (int e = 0; e < h->ne && seen < 0; e++)
                if (h->edges[2 * e] == a && h->edges[2 * e + 1] == b) seen = e;
            if (seen >= 0) {
                h->edge_faces[2 * seen + 1] = f; /* the face on its other side */
                continue;
            }
            h->edge_faces[2 * h->ne] = h->edge_faces[2 * h->ne + 1] = f;
            h->edges[2 * h->ne] = a, h->edges[2 * h->ne + 1] = b, h->ne++;
            imp_vec3 d = v3_normalize(v3_sub(v3_load(h->v + 3 * b), v3_load(h->v + 3 * a)));
            bool par = false;
            for (int e = 0; e < h->ndir && !par; e++) par = v3_len(v3_cross(d, h->dirs[e])) < 1e-9;
            if (!par) h->dirs[h->ndir++] = d;
        }
}

/* 4e. the face normals as three arrays, and the arcs of the edges on the Gauss map (hull.h) */
static void hull_arcs(hull *h)
{
    h->fnx = ids_grow(NULL, 3 * sizeof(double), h->nf > 0 ? (size_t)h->nf : 1);
    h->fny = h->fnx + h->nf, h->fnz = h->fny + h->nf;
    for (int f = 0; f < h->nf; f++) h->fnx[f] = h->face_n[f].x, h->fny[f] = h->face_n[f].y, h->fnz[f] = h->face_n[f].z;
    h->arc = ids_grow(NULL, 5 * sizeof(double), h->ne > 0 ? (size_t)h->ne : 1);
    h->arc_min = INFINITY;
    for (int e = 0; e < h->ne; e++) {
        const imp_vec3 a = h->face_n[h->edge_faces[2 * e]], b = h->face_n[h->edge_faces[2 * e + 1]], bxa = v3_cross(b, a);
        const double len = v3_len(bxa);
        double *arc = h->arc + 5 * e;
        v3_store(arc, len > 0 ? v3_scale(bxa, 1 / len) : v3(0, 0, 0));
        arc[3] = v3_dot(a, b), arc[4] = len > 0 ? 1 / len : 0;
        h->arc_min = fmin(h->arc_min, len);
    }
}

hull *hull_build(const double *pts, int n, char *err, size_t errlen)
{
    if (n < 4) {
        snprintf(err, errlen, "a hull needs at least 4 points (got %d)", n);
        return NULL;
    }
    qh q = {pts, n, NULL, 0, 0, NULL, 0};
    if (!qh_tetrahedron(&q, err, errlen)) return NULL;
    qh_expand(&q);
    free(q.owner);
    int nt;
    int *uf = qh_coplanar_sets(&q, &nt);
    hull *h = calloc(1, sizeof *h);
    if (!h) abort();
    int *map = hull_vertices(h, &q, nt);
    const int fv = hull_faces(h, &q, nt, uf, map);
    free(uf), free(map), free(q.f);
    hull_edges(h, fv);
    hull_arcs(h);
    /* the centroid's least distance to a face plane, less 1% and 1e-9 of the hull's size for faces
     * merged from triangles within rounding of one plane (a vertex may then lie just outside it) */
    double in = INFINITY, size = 0;
    for (int f = 0; f < h->nf; f++) in = fmin(in, h->face_d[f] - v3_dot(h->face_n[f], h->centroid));
    for (int i = 0; i < h->nv; i++) size = fmax(size, v3_len(v3_sub(v3_load(h->v + 3 * i), h->centroid)));
    h->inradius = fmax(0, 0.99 * in - 1e-9 * size);
    return h;
}

/* shape.c: the shapes bodies are made of: sphere, capsule, box, convex hull, plane, static mesh.
 *
 * A shape is placed relative to its body's origin (lpos, lq). Each step the collide stage places it
 * in the world, X_shape = x + R (lpos - com), R_shape = R R(lq), and bounds it with an axis-aligned
 * box: a sphere by its centre +- r, a capsule by its two end centres +- r, a box by its centre +-
 * |R| h (the absolute rotation applied to the half extents), a hull or mesh by transforming its
 * local bounds the same way, a plane by the whole space. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hull.h"
#include "ids.h"
#include "imp_math.h"
#include "shape.h"

imp_shape_def imp_shape_def_default(imp_shape_type type)
{
    imp_shape_def d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.orientation = quat_identity();
    d.radius = 0.5;
    d.half_height = 0.5;
    d.half = v3(0.5, 0.5, 0.5);
    d.normal = v3(0, 1, 0);
    d.density = 1000;
    d.friction = 0.5;
    d.static_friction = -1;
    d.restitution = 0;
    return d;
}

/* ---- the mesh's bounding volume hierarchy ------------------------------------------------------------
 * Built once, top down: a node holds the bounds of its triangles; it is split at the median of the
 * triangle centroids along the longest axis of their bounds, until 4 triangles or fewer remain.
 * A query descends only into nodes whose bounds meet the query box: O(log n + hits). */
#define MESH_LEAF 4

static imp_vec3 tri_vertex(const mesh *m, int t, int k) { return v3_load(m->v + 3 * m->tri[3 * t + k]); }
static double centroid_axis(const mesh *m, int t, int a)
{
    const double *p0 = m->v + 3 * m->tri[3 * t], *p1 = m->v + 3 * m->tri[3 * t + 1], *p2 = m->v + 3 * m->tri[3 * t + 2];
    return p0[a] + p1[a] + p2[a];
}

static int mesh_build_node(mesh *m, int first, int count)
{
    int id = m->nnodes++;
    mesh_node *nd = &m->nodes[id];
    imp_vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    imp_vec3 clo = lo, chi = hi;
    for (int i = first; i < first + count; i++) {
        for (int k = 0; k < 3; k++) {
            imp_vec3 p = tri_vertex(m, m->order[i], k);
            lo = v3(fmin(lo.x, p.x), fmin(lo.y, p.y), fmin(lo.z, p.z));
            hi = v3(fmax(hi.x, p.x), fmax(hi.y, p.y), fmax(hi.z, p.z));
        }
        imp_vec3 c = v3(centroid_axis(m, m->order[i], 0), centroid_axis(m, m->order[i], 1), centroid_axis(m, m->order[i], 2));
        clo = v3(fmin(clo.x, c.x), fmin(clo.y, c.y), fmin(clo.z, c.z));
        chi = v3(fmax(chi.x, c.x), fmax(chi.y, c.y), fmax(chi.z, c.z));
    }
    nd->lo = lo, nd->hi = hi;
    if (count <= MESH_LEAF) {
        nd->left = first, nd->count = count;
        return id;
    }
    imp_vec3 e = v3_sub(chi, clo);
    int axis = e.x >= e.y && e.x >= e.z ? 0 : e.y >= e.z ? 1 : 2;
    /* partial sort (quickselect) around the median along axis */
    int lo_i = first, hi_i = first + count - 1, mid = first + count / 2;
    while (lo_i < hi_i) {
        double pivot = centroid_axis(m, m->order[(lo_i + hi_i) / 2], axis);
        int i = lo_i, j = hi_i;
        while (i <= j) {
            while (centroid_axis(m, m->order[i], axis) < pivot) i++;
            while (centroid_axis(m, m->order[j], axis) > pivot) j--;
            if (i <= j) { int t = m->order[i]; m->order[i] = m->order[j]; m->order[j] = t; i++, j--; }
        }
        if (mid <= j) hi_i = j;
        else if (mid >= i) lo_i = i;
        else break;
    }
    int left = mesh_build_node(m, first, mid - first);
    int right = mesh_build_node(m, mid, first + count - mid);
    nd = &m->nodes[id]; /* (no reallocation: nodes were sized for the whole tree) */
    nd->left = left, nd->right = right, nd->count = 0;
    return id;
}

void mesh_query(const mesh *m, imp_vec3 lo, imp_vec3 hi, void (*fn)(void *ctx, int t), void *ctx)
{
    int stack[64], top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const mesh_node *nd = &m->nodes[stack[--top]];
        if (nd->lo.x > hi.x || nd->hi.x < lo.x || nd->lo.y > hi.y || nd->hi.y < lo.y || nd->lo.z > hi.z || nd->hi.z < lo.z) continue;
        if (nd->count > 0) {
            for (int i = nd->left; i < nd->left + nd->count; i++) fn(ctx, m->order[i]);
        } else if (top + 2 <= 64) {
            stack[top++] = nd->left;
            stack[top++] = nd->right;
        }
    }
}

static mesh *mesh_build(const imp_shape_def *def, char *err, size_t n)
{
    if (def->vertex_count < 3 || def->triangle_count < 1 || !def->vertices || !def->triangles) {
        snprintf(err, n, "a mesh needs at least 3 vertices and 1 triangle");
        return NULL;
    }
    for (int t = 0; t < 3 * def->triangle_count; t++)
        if (def->triangles[t] < 0 || def->triangles[t] >= def->vertex_count) {
            snprintf(err, n, "mesh triangle %d refers to vertex %lld, which does not exist", t / 3 + 1, (long long)def->triangles[t] + 1);
            return NULL;
        }
    mesh *m = calloc(1, sizeof *m);
    if (!m) abort();
    m->nv = def->vertex_count, m->nt = def->triangle_count;
    m->v = ids_grow(NULL, 3 * sizeof(double), m->nv);
    m->tri = ids_grow(NULL, 3 * sizeof(int), m->nt);
    m->n = ids_grow(NULL, sizeof(imp_vec3), m->nt);
    memcpy(m->v, def->vertices, 3 * sizeof(double) * (size_t)m->nv);
    memcpy(m->tri, def->triangles, 3 * sizeof(int) * (size_t)m->nt);
    m->lo = v3(INFINITY, INFINITY, INFINITY), m->hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < m->nv; i++) {
        imp_vec3 p = v3_load(m->v + 3 * i);
        m->lo = v3(fmin(m->lo.x, p.x), fmin(m->lo.y, p.y), fmin(m->lo.z, p.z));
        m->hi = v3(fmax(m->hi.x, p.x), fmax(m->hi.y, p.y), fmax(m->hi.z, p.z));
    }
    for (int t = 0; t < m->nt; t++) {
        imp_vec3 a = v3_load(m->v + 3 * m->tri[3 * t]), b = v3_load(m->v + 3 * m->tri[3 * t + 1]), c = v3_load(m->v + 3 * m->tri[3 * t + 2]);
        m->n[t] = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a)));
    }
    m->order = ids_grow(NULL, sizeof(int), m->nt);
    for (int t = 0; t < m->nt; t++) m->order[t] = t;
    m->nodes = ids_grow(NULL, sizeof(mesh_node), 2 * m->nt); /* a binary tree over nt leaves' triangles */
    mesh_build_node(m, 0, m->nt);
    return m;
}

bool shape_build(shape *s, const imp_shape_def *def, char *err, size_t errlen)
{
    s->type = def->type;
    s->lpos = def->position;
    s->lq = quat_normalize(def->orientation);
    s->radius = def->radius;
    s->half_height = def->half_height;
    s->half = def->half;
    s->normal = v3_normalize(def->normal);
    s->offset = def->offset;
    s->friction = def->friction >= 0 && isfinite(def->friction) ? def->friction : 0.5;
    s->static_friction = def->static_friction >= 0 && isfinite(def->static_friction) ? def->static_friction : -1; /* -1: as friction */
    s->restitution = def->restitution >= 0 && isfinite(def->restitution) ? def->restitution : 0;
    s->sensor = def->sensor, s->pre_solve = def->pre_solve;
    switch (def->type) {
    case IMP_SHAPE_SPHERE:
    case IMP_SHAPE_CAPSULE:
        if (!(def->radius > 0) || (def->type == IMP_SHAPE_CAPSULE && !(def->half_height >= 0))) {
            snprintf(err, errlen, "a %s needs radius > 0%s", def->type == IMP_SHAPE_SPHERE ? "sphere" : "capsule",
                            def->type == IMP_SHAPE_CAPSULE ? " and length >= 0" : "");
            return false;
        }
        break;
    case IMP_SHAPE_BOX:
        if (!(def->half.x > 0 && def->half.y > 0 && def->half.z > 0)) {
            snprintf(err, errlen, "a box needs positive half extents");
            return false;
        }
        break;
    case IMP_SHAPE_HULL:
        char why[160];
        s->hull = hull_build(def->points, def->point_count, why, sizeof why);
        if (!s->hull) {
            snprintf(err, errlen, "hull: %s", why);
            return false;
        }
        break;
    case IMP_SHAPE_MESH:
        s->mesh = mesh_build(def, err, errlen);
        if (!s->mesh) return false;
        break;
    case IMP_SHAPE_PLANE:
        if (v3_len(def->normal) < 1e-12) {
            snprintf(err, errlen, "a plane needs a nonzero normal");
            return false;
        }
        break;
    default:
        snprintf(err, errlen, "unknown shape type %d", (int)def->type);
        return false;
    }
    if (def->type == IMP_SHAPE_HULL) {
        if (!mass_of_hull(s->hull, &s->volume, &s->center, &s->inertia)) {
            snprintf(err, errlen, "hull: it has no volume");
            return false;
        }
        s->mass = s->volume * def->density;
        s->inertia = m3_scale(s->inertia, def->density);
    } else if (def->type != IMP_SHAPE_MESH && def->type != IMP_SHAPE_PLANE) {
        if (!(def->density > 0)) {
            snprintf(err, errlen, "a shape's density must be > 0");
            return false;
        }
        imp_shape_mass(def, &s->mass, &s->center, &s->inertia);
        s->volume = s->mass / def->density;
    }
    return true;
}

void shape_free(shape *s)
{
    hull_free(s->hull);
    if (s->mesh) free(s->mesh->v), free(s->mesh->tri), free(s->mesh->n), free(s->mesh->nodes), free(s->mesh->order), free(s->mesh);
    s->hull = NULL, s->mesh = NULL;
}

/* bounds of a local box [lo, hi] moved by (p, R): centre moved, extents through |R| */
static void bound_local_box(imp_vec3 lo, imp_vec3 hi, imp_vec3 p, imp_mat3 R, imp_vec3 *wlo, imp_vec3 *whi)
{
    imp_vec3 c = v3_scale(v3_add(lo, hi), 0.5), e = v3_scale(v3_sub(hi, lo), 0.5);
    imp_vec3 wc = v3_add(p, m3_mul_v(R, c));
    imp_vec3 we = v3(fabs(R.m[0][0]) * e.x + fabs(R.m[0][1]) * e.y + fabs(R.m[0][2]) * e.z,
                     fabs(R.m[1][0]) * e.x + fabs(R.m[1][1]) * e.y + fabs(R.m[1][2]) * e.z,
                     fabs(R.m[2][0]) * e.x + fabs(R.m[2][1]) * e.y + fabs(R.m[2][2]) * e.z);
    *wlo = v3_sub(wc, we), *whi = v3_add(wc, we);
}

void shape_geom_bounds(geom *g)
{
    const double big = 1e30;
    switch (g->type) {
    case IMP_SHAPE_SPHERE:
        g->lo = v3_sub(g->p, v3(g->radius, g->radius, g->radius));
        g->hi = v3_add(g->p, v3(g->radius, g->radius, g->radius));
        break;
    case IMP_SHAPE_CAPSULE: {
        imp_vec3 a = v3_scale(m3_col(g->R, 1), g->half_height);
        imp_vec3 e = v3(fabs(a.x) + g->radius, fabs(a.y) + g->radius, fabs(a.z) + g->radius);
        g->lo = v3_sub(g->p, e), g->hi = v3_add(g->p, e);
        break;
    }
    case IMP_SHAPE_BOX:
        bound_local_box(v3_scale(g->half, -1), g->half, g->p, g->R, &g->lo, &g->hi);
        break;
    case IMP_SHAPE_HULL: {
        imp_vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
        for (int i = 0; i < g->hull->nv; i++) {
            imp_vec3 q = v3_add(g->p, m3_mul_v(g->R, v3_load(g->hull->v + 3 * i)));
            lo = v3(fmin(lo.x, q.x), fmin(lo.y, q.y), fmin(lo.z, q.z));
            hi = v3(fmax(hi.x, q.x), fmax(hi.y, q.y), fmax(hi.z, q.z));
        }
        g->lo = lo, g->hi = hi;
        break;
    }
    case IMP_SHAPE_MESH:
        bound_local_box(g->mesh->lo, g->mesh->hi, g->p, g->R, &g->lo, &g->hi);
        break;
    default:
        g->lo = v3(-big, -big, -big), g->hi = v3(big, big, big);
        return;
    }
    const imp_vec3 touch = v3(SHAPE_TOUCH, SHAPE_TOUCH, SHAPE_TOUCH);
    g->lo = v3_sub(g->lo, touch), g->hi = v3_add(g->hi, touch);
}

/* the shape's world pose and bounds from its body's state X (x, q: body.c) and centre of mass com */
void shape_place(shape *s, const double *X, imp_vec3 com)
{
    imp_quat q = quat_normalize(quat(X[3], X[4], X[5], X[6]));
    imp_mat3 R = quat_to_m3(q);
    s->wpos = v3_add(v3_load(X), m3_mul_v(R, v3_sub(s->lpos, com)));
    s->wrot = m3_mul(R, quat_to_m3(s->lq));
    geom g;
    shape_geom(s, &g);
    shape_geom_bounds(&g);
    s->lo = g.lo, s->hi = g.hi;
}

void shape_geom(const shape *s, geom *g)
{
    g->type = s->type;
    g->p = s->wpos;
    g->R = s->wrot;
    g->radius = s->radius;
    g->half_height = s->half_height;
    g->half = s->half;
    g->hull = s->hull;
    g->mesh = s->mesh;
    g->lo = s->lo, g->hi = s->hi;
    if (s->type == IMP_SHAPE_PLANE) {
        /* n . x = offset in the shape frame -> world */
        g->normal = m3_mul_v(s->wrot, s->normal);
        g->offset = s->offset + v3_dot(g->normal, s->wpos);
    }
}

/* a particle collider seen as a static shape */
void shape_geom_from_collider(const imp_collider_def *c, geom *g)
{
    memset(g, 0, sizeof *g);
    g->p = c->position;
    g->R = m3_identity();
    switch (c->shape) {
    case IMP_COLLIDER_PLANE:
        g->type = IMP_SHAPE_PLANE;
        g->normal = v3_normalize(c->normal);
        g->offset = v3_dot(g->normal, c->position);
        break;
    case IMP_COLLIDER_SPHERE:
        g->type = IMP_SHAPE_SPHERE;
        g->radius = c->radius;
        break;
    default:
        g->type = IMP_SHAPE_BOX;
        g->half = c->half;
        g->R = c->rotation;
        break;
    }
    shape_geom_bounds(g);
}

/* the broad phase learns of added and removed shapes from this log (broadphase.c, bp_sync) */
void shapes_log(shape_store *st, imp_id id, bool removed, bool plane)
{
    if (st->change_count == st->change_cap) {
        st->change_cap = st->change_cap ? 2 * st->change_cap : 64;
        st->changes = ids_grow(st->changes, sizeof(shape_change), st->change_cap);
    }
    st->changes[st->change_count++] = (shape_change){id, removed, plane};
}

/* query.c: questions a script asks the world: raycasts, points, overlaps.
 *
 * Raycast of the segment x(t) = o + t d, t in [0, 1] (d = to - from), against each shape whose
 * bounds the segment crosses (slab test), keeping the smallest t:
 *   sphere   |o + t d - c|^2 = r^2: the smaller root of a t^2 + 2 b t + k = 0
 *   capsule  the infinite cylinder about the core (the components perpendicular to its axis u:
 *            |m + t e|^2 = r^2 with m = (o - p0) - ((o - p0).u) u, e = d - (d.u) u), kept where the hit's
 *            axial coordinate lies on the core, and the two end spheres
 *   box      slabs in the box frame: t_enter = max of the entering planes, t_exit = min of the exits
 *   hull     the same over its face planes (Cyrus-Beck); the normal is the last entered plane's
 *   plane    t = (offset - n.o) / (n.d), hit from the front only
 *   mesh     each triangle by Moller-Trumbore (barycentric coordinates by Cramer's rule)
 * A shape that contains the start point is not hit (the ray leaves it). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "hull.h"
#include "imp_math.h"
#include "narrowphase.h"
#include "query.h"
#include "shape.h"
#include "world_parts.h"

static bool slab(imp_vec3 lo, imp_vec3 hi, imp_vec3 o, imp_vec3 d, double tmax)
{
    double t0 = 0, t1 = tmax;
    const double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z}, l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    for (int a = 0; a < 3; a++) {
        if (fabs(dd[a]) < 1e-300) {
            if (oo[a] < l[a] || oo[a] > h[a]) return false;
            continue;
        }
        double inv = 1.0 / dd[a], ta = (l[a] - oo[a]) * inv, tb = (h[a] - oo[a]) * inv;
        if (ta > tb) { double t = ta; ta = tb; tb = t; }
        t0 = fmax(t0, ta), t1 = fmin(t1, tb);
        if (t0 > t1) return false;
    }
    return true;
}

static bool ray_sphere(imp_vec3 o, imp_vec3 d, imp_vec3 c, double r, double *t, imp_vec3 *n)
{
    imp_vec3 m = v3_sub(o, c);
    double a = v3_dot(d, d), b = v3_dot(m, d), k = v3_dot(m, m) - r * r;
    if (k <= 0 || a <= 0) return false; /* inside, or no direction */
    double disc = b * b - a * k;
    if (disc < 0 || b > 0) return false;
    double tt = (-b - sqrt(disc)) / a;
    if (tt < 0 || tt > 1) return false;
    *t = tt, *n = v3_normalize(v3_sub(v3_mad(o, d, tt), c));
    return true;
}

/* entering t and normal of the ray against convex planes (n_i . x <= d_i); false when missed or inside */
static bool ray_planes(imp_vec3 o, imp_vec3 d, const imp_vec3 *n, const double *off, int count, double *t, imp_vec3 *nout)
{
    double t0 = -INFINITY, t1 = 1;
    int enter = -1;
    for (int i = 0; i < count; i++) {
        double num = off[i] - v3_dot(n[i], o), den = v3_dot(n[i], d);
        if (fabs(den) < 1e-300) {
            if (num < 0) return false;
            continue;
        }
        double tt = num / den;
        if (den < 0) {
            if (tt > t0) t0 = tt, enter = i;
        } else t1 = fmin(t1, tt);
        if (t0 > t1) return false;
    }
    if (enter < 0 || t0 < 0 || t0 > 1) return false;
    *t = t0, *nout = n[enter];
    return true;
}

/* the infinite cylinder about the core, kept where the hit's axial coordinate lies on the core, and
 * the two end spheres (top of the file); false when missed or starting inside */
static bool ray_capsule(const geom *g, imp_vec3 o, imp_vec3 d, double *t, imp_vec3 *n)
{
    imp_vec3 u = m3_col(g->R, 1), p0 = v3_mad(g->p, u, -g->half_height);
    double best = INFINITY, tt;
    imp_vec3 nn;
    imp_vec3 m0 = v3_sub(o, p0);
    imp_vec3 m = v3_mad(m0, u, -v3_dot(m0, u)), e = v3_mad(d, u, -v3_dot(d, u));
    double a = v3_dot(e, e), b = v3_dot(m, e), k = v3_dot(m, m) - g->radius * g->radius;
    double axial0 = v3_dot(m0, u);
    if (k <= 0 && axial0 >= 0 && axial0 <= 2 * g->half_height) return false; /* starts inside */
    if (a > 1e-300 && b * b - a * k >= 0) {
        tt = (-b - sqrt(b * b - a * k)) / a;
        double axial = v3_dot(v3_sub(v3_mad(o, d, tt), p0), u);
        if (tt >= 0 && tt <= 1 && axial >= 0 && axial <= 2 * g->half_height) {
            best = tt;
            nn = v3_normalize(v3_add(m, v3_scale(e, tt)));
        }
    }
    for (int s = 0; s < 2; s++) {
        imp_vec3 c = v3_mad(p0, u, s * 2 * g->half_height), n2;
        if (ray_sphere(o, d, c, g->radius, &tt, &n2) && tt < best) best = tt, nn = n2;
    }
    if (!(best <= 1)) return false;
    *t = best, *n = nn;
    return true;
}

/* each triangle by Moller-Trumbore, the nearest hit's normal turned against the ray */
static bool ray_mesh(const geom *g, imp_vec3 o, imp_vec3 d, double *t, imp_vec3 *n)
{
    const mesh *m = g->mesh;
    double best = INFINITY;
    for (int i = 0; i < m->nt; i++) {
        imp_vec3 a = v3_add(g->p, m3_mul_v(g->R, v3_load(m->v + 3 * m->tri[3 * i])));
        imp_vec3 b = v3_add(g->p, m3_mul_v(g->R, v3_load(m->v + 3 * m->tri[3 * i + 1])));
        imp_vec3 c = v3_add(g->p, m3_mul_v(g->R, v3_load(m->v + 3 * m->tri[3 * i + 2])));
        imp_vec3 e1 = v3_sub(b, a), e2 = v3_sub(c, a), pv = v3_cross(d, e2);
        double det = v3_dot(e1, pv);
        if (fabs(det) < 1e-300) continue;
        double inv = 1.0 / det;
        imp_vec3 s = v3_sub(o, a);
        double u = v3_dot(s, pv) * inv;
        if (u < 0 || u > 1) continue;
        imp_vec3 qv = v3_cross(s, e1);
        double v = v3_dot(d, qv) * inv;
        if (v < 0 || u + v > 1) continue;
        double tt = v3_dot(e2, qv) * inv;
        if (tt < 0 || tt > 1 || tt >= best) continue;
        best = tt;
        imp_vec3 nn = v3_normalize(v3_cross(e1, e2));
        *n = v3_dot(nn, d) > 0 ? v3_scale(nn, -1) : nn;
    }
    if (!(best <= 1)) return false;
    *t = best;
    return true;
}

static bool ray_geom(const geom *g, imp_vec3 o, imp_vec3 d, double *t, imp_vec3 *n)
{
    switch (g->type) {
    case IMP_SHAPE_SPHERE: return ray_sphere(o, d, g->p, g->radius, t, n);
    case IMP_SHAPE_CAPSULE: return ray_capsule(g, o, d, t, n);
    case IMP_SHAPE_BOX: {
        imp_vec3 ns[6];
        double off[6];
        for (int a = 0; a < 3; a++) {
            imp_vec3 ax = m3_col(g->R, a);
            double h = a == 0 ? g->half.x : a == 1 ? g->half.y : g->half.z, c = v3_dot(ax, g->p);
            ns[2 * a] = ax, off[2 * a] = c + h;
            ns[2 * a + 1] = v3_scale(ax, -1), off[2 * a + 1] = -c + h;
        }
        return ray_planes(o, d, ns, off, 6, t, n);
    }
    case IMP_SHAPE_HULL: {
        /* in the hull's frame, against its own face planes */
        const hull *h = g->hull;
        imp_vec3 lo = m3_mul_tv(g->R, v3_sub(o, g->p)), ld = m3_mul_tv(g->R, d), ln;
        if (!ray_planes(lo, ld, h->face_n, h->face_d, h->nf, t, &ln)) return false;
        *n = m3_mul_v(g->R, ln);
        return true;
    }
    case IMP_SHAPE_PLANE: {
        double den = v3_dot(g->normal, d), num = g->offset - v3_dot(g->normal, o);
        if (den >= 0 || num > 0) return false;
        double tt = num / den;
        if (tt > 1) return false;
        *t = tt, *n = g->normal;
        return true;
    }
    case IMP_SHAPE_MESH: return ray_mesh(g, o, d, t, n);
    default: return false;
    }
}

imp_query_filter imp_query_filter_default(void) { return (imp_query_filter){0xffffffffu, 0xffffffffu, false}; }

/* whether dense shape k (k >= the shape count: collider k - ns) passes the filter: a body's shape when
 * (body.group & f.mask) and (f.group & body.mask), a collider as group 1 with every mask bit; sensors
 * only when asked for */
bool query_passes(const imp_world *w, int k, const imp_query_filter *f)
{
    const int ns = w->shapes->ids.count;
    if (k >= ns) return (f->mask & 1u) && (f->sensors || !w->colliders->collider[k - ns].def.sensor);
    const shape *sh = &w->shapes->shape[k];
    if (sh->sensor && !f->sensors) return false;
    const body *b = &w->bodies->body[bodies_dense(w, sh->body)];
    return (b->group & f->mask) && (f->group & b->mask);
}

/* the hits of the segment on the shapes that pass the filter: the closest into *hit (all == NULL), or
 * every shape's first hit into all[0 .. max) (returns how many there are); bullet >= 0: the shapes a
 * bullet (that dense body) may meet, its own and other bullets' left out */
static int raycast(const imp_world *w, imp_vec3 from, imp_vec3 to, const imp_query_filter *f, imp_ray_hit *hit, int bullet,
                   imp_ray_hit *all, int max)
{
    imp_vec3 d = v3_sub(to, from);
    double best = INFINITY;
    int found = 0;
    const int ns = w->shapes->ids.count, nc = w->colliders->ids.count;
    for (int k = 0; k < ns + nc; k++) {
        geom g;
        uint32_t key;
        if (k < ns && bullet >= 0) {
            const int bk = bodies_dense(w, w->shapes->shape[k].body);
            if (bk == bullet || (w->bodies->body[bk].bullet && w->bodies->body[bk].motion == IMP_DYNAMIC)) continue;
        }
        if (!query_passes(w, k, f)) continue; /* (sensors stop no bullet) */
        if (k < ns) {
            shape_geom(&w->shapes->shape[k], &g);
            key = w->shapes->ids.dense_slot[k];
        } else {
            shape_geom_from_collider(&w->colliders->collider[k - ns].def, &g);
            key = COLLIDER_KEY | w->colliders->ids.dense_slot[k - ns];
        }
        if (g.type != IMP_SHAPE_PLANE && !slab(g.lo, g.hi, from, d, all ? 1.0 : fmin(best, 1.0))) continue;
        double t;
        imp_vec3 n;
        if (!ray_geom(&g, from, d, &t, &n)) continue;
        imp_ray_hit h = {contacts_side(w, key), v3_mad(from, d, t), n, t};
        if (all) {
            if (found < max) all[found] = h;
            found++;
        } else if (t < best) {
            best = t, *hit = h, found = 1;
        }
    }
    return found;
}

static int hit_order(const void *a, const void *b)
{
    const double fa = ((const imp_ray_hit *)a)->fraction, fb = ((const imp_ray_hit *)b)->fraction;
    return fa < fb ? -1 : fa > fb;
}

bool imp_world_raycast(const imp_world *w, imp_vec3 from, imp_vec3 to, imp_ray_hit *hit)
{
    const imp_query_filter f = imp_query_filter_default();
    return raycast(w, from, to, &f, hit, -1, NULL, 0) > 0;
}
bool imp_world_raycast_filtered(const imp_world *w, imp_vec3 from, imp_vec3 to, const imp_query_filter *f, imp_ray_hit *hit)
{
    return raycast(w, from, to, f, hit, -1, NULL, 0) > 0;
}
int imp_world_raycast_all(const imp_world *w, imp_vec3 from, imp_vec3 to, const imp_query_filter *f, imp_ray_hit *out, int max)
{
    const int n = raycast(w, from, to, f, NULL, -1, out, max);
    qsort(out, (size_t)(n < max ? n : max), sizeof *out, hit_order);
    return n;
}
bool query_ray_bullet(const imp_world *w, int i, imp_vec3 from, imp_vec3 to, imp_ray_hit *hit)
{
    const body *b = &w->bodies->body[i];
    const imp_query_filter f = {b->group, b->mask, false}; /* what the bullet may touch (no sensors) */
    return raycast(w, from, to, &f, hit, i, NULL, 0) > 0;
}

static bool point_in(const geom *g, imp_vec3 p)
{
    imp_vec3 l = m3_mul_tv(g->R, v3_sub(p, g->p));
    switch (g->type) {
    case IMP_SHAPE_SPHERE: return v3_dot(l, l) <= g->radius * g->radius;
    case IMP_SHAPE_CAPSULE: {
        double y = fmin(fmax(l.y, -g->half_height), g->half_height);
        return l.x * l.x + (l.y - y) * (l.y - y) + l.z * l.z <= g->radius * g->radius;
    }
    case IMP_SHAPE_BOX: return fabs(l.x) <= g->half.x && fabs(l.y) <= g->half.y && fabs(l.z) <= g->half.z;
    case IMP_SHAPE_HULL:
        for (int f = 0; f < g->hull->nf; f++)
            if (v3_dot(g->hull->face_n[f], l) > g->hull->face_d[f]) return false;
        return true;
    case IMP_SHAPE_PLANE: return v3_dot(g->normal, p) <= g->offset;
    default: return false;
    }
}

int imp_world_query_point(const imp_world *w, imp_vec3 p, imp_contact_side *out, int max)
{
    int found = 0;
    const int ns = w->shapes->ids.count, nc = w->colliders->ids.count;
    for (int k = 0; k < ns + nc; k++) {
        geom g;
        uint32_t key;
        if (k < ns) shape_geom(&w->shapes->shape[k], &g), key = w->shapes->ids.dense_slot[k];
        else shape_geom_from_collider(&w->colliders->collider[k - ns].def, &g), key = COLLIDER_KEY | w->colliders->ids.dense_slot[k - ns];
        if (g.type != IMP_SHAPE_PLANE && (p.x < g.lo.x || p.x > g.hi.x || p.y < g.lo.y || p.y > g.hi.y || p.z < g.lo.z || p.z > g.hi.z)) continue;
        if (!point_in(&g, p)) continue;
        if (found < max) out[found] = contacts_side(w, key);
        found++;
    }
    return found;
}

int imp_world_overlap(imp_world *w, const imp_shape_def *def, imp_vec3 position, imp_quat orientation,
                      imp_contact_side *out, int max)
{
    if (def->type == IMP_SHAPE_MESH || def->type == IMP_SHAPE_PLANE) return 0;
    shape tmp;
    memset(&tmp, 0, sizeof tmp);
    char err[200];
    if (!shape_build(&tmp, def, err, sizeof err)) {
        world_error(w, "%s", err);
        return -1;
    }
    tmp.wrot = m3_mul(quat_to_m3(quat_normalize(orientation)), quat_to_m3(tmp.lq));
    tmp.wpos = v3_add(position, m3_mul_v(quat_to_m3(quat_normalize(orientation)), tmp.lpos));
    geom q;
    shape_geom(&tmp, &q);
    shape_geom_bounds(&q);
    int found = 0;
    const int ns = w->shapes->ids.count, nc = w->colliders->ids.count;
    for (int k = 0; k < ns + nc; k++) {
        geom g;
        uint32_t key;
        if (k < ns) shape_geom(&w->shapes->shape[k], &g), key = w->shapes->ids.dense_slot[k];
        else shape_geom_from_collider(&w->colliders->collider[k - ns].def, &g), key = COLLIDER_KEY | w->colliders->ids.dense_slot[k - ns];
        if (g.type != IMP_SHAPE_PLANE && (q.lo.x > g.hi.x || q.hi.x < g.lo.x || q.lo.y > g.hi.y || q.hi.y < g.lo.y ||
                                          q.lo.z > g.hi.z || q.hi.z < g.lo.z))
            continue;
        imp_contact c;
        memset(&c, 0, sizeof c);
        int n = np_order(q.type, g.type) ? np_collide(&g, &q, &c, NULL) : np_collide(&q, &g, &c, NULL);
        if (n <= 0) continue;
        if (found < max) out[found] = contacts_side(w, key);
        found++;
    }
    shape_free(&tmp);
    return found;
}

/* query_cast.c: shape casts. A convex shape (sphere, capsule, box, hull) at a fixed orientation is swept
 * along the segment from -> to; the answer is the first fraction t in 0..1 at which it touches a shape
 * of the world, the exact surfaces (no contact skin), with the point and the normal there.
 *
 * The touch test at t is the narrow phase's: the swept shape placed at from + t (to - from) against a
 * candidate, touching when the manifold has a point of depth >= 0 (np_collide reports pairs within
 * SHAPE_TOUCH at a negative depth; those do not touch). Along the segment the test is sampled at steps
 * of a quarter of the swept shape's inner radius (its radius, a box's smallest half extent, a hull's
 * radius of equal volume halved), so no shape is passed through that the swept shape would have to
 * overlap by that much to cross; the first sample that touches and the one before it bracket the time
 * of impact, which bisection narrows to 1e-14 of the segment (the depth is exact to rounding, so the
 * fraction is within 1e-12 or so of the closed form). Shapes whose bounds the swept bounds miss are not
 * tested. A shape that only grazes the sweep between two samples, by less than the step, can be missed. */
#include <math.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "narrowphase.h"
#include "query.h"
#include "shape.h"
#include "world_parts.h"

#define CAST_MAX_SAMPLES 1000000 /* a sweep longer than this many steps is refused (the world error)   */
#define CAST_BISECTIONS 48       /* 2^-48: 3.6e-15 of the segment                                       */

/* the swept shape placed at origin o: its geom (bounds too) */
static void cast_place(shape *s, imp_quat q, imp_vec3 o, geom *g)
{
    const imp_mat3 R = quat_to_m3(q);
    s->wrot = m3_mul(R, quat_to_m3(s->lq));
    s->wpos = v3_add(o, m3_mul_v(R, s->lpos));
    shape_geom(s, g);
    shape_geom_bounds(g);
}

/* whether the two geoms touch (deepest point depth >= 0); c gets the manifold with A = the swept shape
 * when it is the lower type, else the other */
static bool touching(const geom *swept, const geom *other, imp_contact *c, bool *swapped)
{
    memset(c, 0, sizeof *c);
    *swapped = np_order(swept->type, other->type);
    const int n = *swapped ? np_collide(other, swept, c, NULL) : np_collide(swept, other, c, NULL);
    for (int k = 0; k < n; k++)
        if (c->depth[k] >= 0) return true;
    return false;
}

static double inner_radius(const shape *s)
{
    switch (s->type) {
    case IMP_SHAPE_SPHERE:
    case IMP_SHAPE_CAPSULE: return s->radius;
    case IMP_SHAPE_BOX: return fmin(s->half.x, fmin(s->half.y, s->half.z));
    default: return 0.5 * cbrt(3 * s->volume / (4 * M_PI));
    }
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
    const double len = v3_len(d), step = 0.25 * inner_radius(&s);
    const double samples = ceil(len / step);
    if (!(samples <= CAST_MAX_SAMPLES)) {
        world_error(w, "cast: the segment is %g m, more than %d steps of a quarter of the shape's inner radius (%g m)", len, CAST_MAX_SAMPLES, step);
        shape_free(&s);
        return -1;
    }
    const int nsteps = samples < 1 ? 1 : (int)samples;
    /* the swept bounds: the union of the shape's bounds at the two ends */
    geom g0, g1;
    cast_place(&s, q, from, &g0);
    cast_place(&s, q, to, &g1);
    const imp_vec3 lo = v3(fmin(g0.lo.x, g1.lo.x), fmin(g0.lo.y, g1.lo.y), fmin(g0.lo.z, g1.lo.z));
    const imp_vec3 hi = v3(fmax(g0.hi.x, g1.hi.x), fmax(g0.hi.y, g1.hi.y), fmax(g0.hi.z, g1.hi.z));
    double best = INFINITY;
    const int ns = w->shapes->ids.count, nc = w->colliders->ids.count;
    for (int k = 0; k < ns + nc; k++) {
        if (!query_passes(w, k, &f)) continue;
        geom g;
        uint32_t key;
        if (k < ns) shape_geom(&w->shapes->shape[k], &g), key = w->shapes->ids.dense_slot[k];
        else shape_geom_from_collider(&w->colliders->collider[k - ns].def, &g), key = COLLIDER_KEY | w->colliders->ids.dense_slot[k - ns];
        if (g.type != IMP_SHAPE_PLANE && (lo.x > g.hi.x || hi.x < g.lo.x || lo.y > g.hi.y || hi.y < g.lo.y || lo.z > g.hi.z || hi.z < g.lo.z))
            continue;
        /* the first sample that touches, before the best so far */
        imp_contact c;
        bool swapped;
        geom gs;
        double t_in = -1, t_out = 0;
        for (int i = 0; i <= nsteps; i++) {
            const double t = (double)i / nsteps;
            if (t >= best) break;
            cast_place(&s, q, v3_mad(from, d, t), &gs);
            if (touching(&gs, &g, &c, &swapped)) {
                t_in = t;
                break;
            }
            t_out = t;
        }
        if (t_in < 0) continue;
        if (t_in > 0)
            for (int b = 0; b < CAST_BISECTIONS; b++) {
                const double mid = 0.5 * (t_out + t_in);
                if (mid <= t_out || mid >= t_in) break;
                cast_place(&s, q, v3_mad(from, d, mid), &gs);
                if (touching(&gs, &g, &c, &swapped)) t_in = mid;
                else t_out = mid;
            }
        if (t_in >= best) continue;
        cast_place(&s, q, v3_mad(from, d, t_in), &gs);
        touching(&gs, &g, &c, &swapped);
        /* the manifold's normal points out of B into A: out of the hit shape when it is B */
        int deepest = 0;
        for (int i = 1; i < c.count; i++)
            if (c.depth[i] > c.depth[deepest]) deepest = i;
        best = t_in;
        hit->side = contacts_side(w, key);
        hit->fraction = t_in;
        hit->normal = swapped ? v3_scale(c.normal, -1) : c.normal;
        /* the point on the hit shape's surface: A's point, or B's at point + depth n */
        hit->point = swapped ? c.points[deepest] : v3_mad(c.points[deepest], c.normal, c.depth[deepest]);
    }
    shape_free(&s);
    return best <= 1;
}

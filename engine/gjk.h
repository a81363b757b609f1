/* gjk.h: the distance between two convex shapes by GJK on their support functions (gjk.c). A kernel:
 * it knows points and directions, never a world or a shape store. */
#ifndef IMPETUS_GJK_H
#define IMPETUS_GJK_H

#include <stdbool.h>
#include "imp_math.h"

/* a convex shape as a core rounded by a radius: world = p + R local. The core is the convex hull of
 * nv local points (3 doubles each: one point for a sphere, two for a capsule's segment, a hull's or a
 * triangle's vertices), or the box [-half, half] when nv == 0. */
typedef struct gjk_convex {
    imp_vec3 p;
    imp_mat3 R;
    const double *v;
    int nv;
    imp_vec3 half;
    double radius;
} gjk_convex;

typedef struct gjk_result {
    double distance;      /* between the rounded shapes: core distance - both radii (< 0: overlapping)   */
    double core_distance; /* between the cores; 0 when they overlap                                       */
    imp_vec3 normal;      /* unit, from b toward a along the closest points; valid when core_distance > 0 */
    imp_vec3 point_a;     /* the closest points on the rounded surfaces (on the cores when they overlap)  */
    imp_vec3 point_b;
    int iterations;
} gjk_result;

/* the world point of c farthest along dir (its core's, without the radius) */
imp_vec3 gjk_support(const gjk_convex *c, imp_vec3 dir);
/* the distance between a and b; scale: the size of the coordinates involved (the rounding of a
 * support point), from which the stopping tolerances are taken */
void gjk_distance(const gjk_convex *a, const gjk_convex *b, double scale, gjk_result *r);

#endif

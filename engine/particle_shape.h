/* particle_shape.h: a particle's path against one body shape, in the shape's own frame (particle_shape.c). */
#ifndef IMPETUS_PARTICLE_SHAPE_H
#define IMPETUS_PARTICLE_SHAPE_H

#include "shape.h"

/* where the path of a particle's centre first comes within its radius of a shape */
typedef struct pshape_hit {
    double s;       /* fraction of the path, in [0, 1]                                          */
    imp_vec3 n;     /* outward unit normal there (shape frame)                                  */
    double dist;    /* signed distance of the centre from the surface there (< 0: inside)       */
    bool touched;   /* the centre came within the radius; false: it only ends within `near` of
                       the surface (a contact that may close in the next step: s = 1)           */
    double dist0;   /* the signed distance at the start of the path (from the same feature)     */
} pshape_hit;

/* particle_shape.c: the straight path a -> b of a centre (shape frame: the shape at the origin, its
 * own axes) against the shape grown by r; true when it touches, or ends within r + near of it */
bool pshape_sweep(const shape *s, imp_vec3 a, imp_vec3 b, double r, double near, pshape_hit *hit);
/* signed distance from the point p (shape frame) to the surface of a convex shape or plane, and the
 * outward normal; for a hull outside, the largest face-plane distance (a lower bound) */
double pshape_distance(const shape *s, imp_vec3 p, imp_vec3 *n);

#endif

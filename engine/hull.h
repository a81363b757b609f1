/* hull.h: convex hulls of point clouds (hull.c) and their mass properties (mass.c). */
#ifndef IMPETUS_HULL_H
#define IMPETUS_HULL_H

#include <stdbool.h>
#include <stddef.h>
#include "impetus.h"

/* a convex hull (hull.c): vertices, polygon faces (ccw seen from outside) with planes n . x = d,
 * the unique edges and their unique directions (for SAT), and the faces fanned into triangles */
typedef struct hull {
    int nv, nf, ne, ndir, ntri;
    double *v;            /* 3 per vertex                          */
    double *vx, *vy, *vz; /* the same coordinates as three arrays (projections run over them) */
    int *face_first, *face_count, *face_verts;
    imp_vec3 *face_n;
    double *face_d;
    int *edges;           /* 2 per edge                            */
    int *edge_faces;      /* 2 per edge: the faces on either side  */
    imp_vec3 *dirs;       /* unit edge directions, parallel ones once */
    int *tris;            /* 3 per triangle                        */
    imp_vec3 centroid;
    double inradius;      /* a ball of this radius about the centroid lies inside the hull (0: flat) */
    /* each edge's arc on the unit sphere, from a = face_n[edge_faces[2e]] to b = face_n[edge_faces[2e + 1]]
     * (the narrow phase's Gauss-map bounds): 5 per edge, the unit axis (b x a) / |b x a|, a . b and
     * 1 / |b x a| (0 for parallel normals); arc_min the least |b x a|. NULL (and 0) when not made. */
    double *arc;
    double arc_min;
    double *fnx, *fny, *fnz; /* face_n as three arrays (one block, fnx first), or NULL when not made */
} hull;

/* hull.c */
hull *hull_build(const double *points, int n, char *err, size_t errlen);
void hull_free(hull *h);
/* mass.c */
bool mass_of_hull(const hull *h, double *volume, imp_vec3 *center, imp_mat3 *inertia_unit_density);

#endif

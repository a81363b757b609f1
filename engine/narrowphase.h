/* narrowphase.h: contact manifolds between two placed shapes (narrowphase.c). */
#ifndef IMPETUS_NARROWPHASE_H
#define IMPETUS_NARROWPHASE_H

#include "shape.h"

/* narrowphase.c: contacts between two geoms; returns the number of points, writes c->normal etc.
 * witness: in/out cached separating axis for polytope pairs */
int np_collide(const geom *a, const geom *b, imp_contact *c, int32_t *witness);
bool np_order(imp_shape_type a, imp_shape_type b); /* true when (a, b) must be swapped */

#endif

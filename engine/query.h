/* query.h: questions a script asks the world: rays, points, overlaps (query.c). */
#ifndef IMPETUS_QUERY_H
#define IMPETUS_QUERY_H

#include "impetus.h"

/* query.c: the first hit of the segment on a shape bullet i (dense) may touch: its filter's, not its own,
 * not another bullet's, no sensor */
bool query_ray_bullet(const imp_world *w, int i, imp_vec3 from, imp_vec3 to, imp_ray_hit *hit);
/* whether dense shape k (k >= the shape count: collider k - count) passes the filter */
bool query_passes(const imp_world *w, int k, const imp_query_filter *f);

#endif

/* toi.c: continuous collision of bullets (bodies marked bullet) against the static world and the other
 * bodies, after the step, in both contact modes (impulse.c and world.c after the exact mode's step). */
#include <math.h>

#include "body.h"
#include "query.h"
#include "shape.h"
#include "toi.h"
#include "world_parts.h"

/* Continuous collision for bullets: a swept test of the centre against the world. The centre moved
 * from x0 to x1 in the step; a ray from x0 to x1 + r d (r the body's inner radius, d the unit direction)
 * that hits a shape means the body crossed or reached its surface: the centre is put back at hit + r n,
 * touching, and the next step's collision stage answers the impact (restitution, and the momentum a
 * dynamic body takes). The ray sees every shape the bullet may touch (its collision filter) except its
 * own and other bullets', static ones as they are and moving ones where the step left them: a 100 m/s
 * ball, 1.7 m a step at 60 Hz, meets a 5 cm plank that moved a few mm in that step. */
int toi_bullets(imp_world *w, const double *X0)
{
    int moved = 0;
    bool placed = false;
    for (int i = 0; i < w->bodies->ids.count; i++) {
        body *b = &w->bodies->body[i];
        if (!b->bullet || b->motion != IMP_DYNAMIC || b->asleep) continue;
        double *X = w->bodies->state + BODY_DIM * i;
        imp_vec3 x0 = v3_load(X0 + BODY_DIM * i), x1 = v3_load(X);
        imp_vec3 d = v3_sub(x1, x0);
        double len = v3_len(d);
        if (!(len > 0)) continue;
        double r = INFINITY;
        for (int k = 0; k < b->nshapes; k++) {
            const shape *sh = &w->shapes->shape[w->shapes->ids.slot_dense[b->shapes[k]]];
            double rk = sh->type == IMP_SHAPE_SPHERE || sh->type == IMP_SHAPE_CAPSULE ? sh->radius
                      : sh->type == IMP_SHAPE_BOX ? fmin(sh->half.x, fmin(sh->half.y, sh->half.z))
                      : 0.5 * cbrt(sh->volume);
            r = fmin(r, rk);
        }
        if (!(r < INFINITY) || len < 0.5 * r) continue; /* slow enough for the discrete contacts */
        if (!placed) { /* the moving bodies' shapes where the step left them (the collide stage places them later) */
            for (int k = 0; k < w->bodies->ids.count; k++)
                if (w->bodies->body[k].motion != IMP_FIXED && !w->bodies->body[k].asleep) bodies_place_shapes(w, k);
            placed = true;
        }
        imp_ray_hit hit;
        imp_vec3 u = v3_scale(d, 1 / len);
        if (!query_ray_bullet(w, i, x0, v3_add(x1, v3_scale(u, r)), &hit)) continue;
        if (v3_dot(hit.normal, u) >= 0) continue; /* leaving a surface */
        v3_store(X, v3_add(hit.point, v3_scale(hit.normal, r)));
        bodies_place_shapes(w, i);
        moved++;
    }
    return moved;
}

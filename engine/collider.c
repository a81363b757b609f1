/* collider.c: the static colliders: planes, spheres and boxes that particles (particle_collide.c)
 * and bodies (contact.c) meet, and that never move unless a script moves them. A store: its ids,
 * definitions and a count of edits that tells the particles' resting contacts when they are stale. */
#include <string.h>

#include "collider.h"
#include "ids.h"
#include "imp_math.h"
#include "shape.h"
#include "world_parts.h"

imp_collider_def imp_collider_def_default(void)
{
    imp_collider_def d;
    memset(&d, 0, sizeof d);
    d.shape = IMP_COLLIDER_PLANE;
    d.normal = v3(0, 1, 0);
    d.radius = 1.0;
    d.half = v3(0.5, 0.5, 0.5);
    d.rotation = m3_identity();
    d.restitution = 0.5;
    d.friction = 0.5;
    return d;
}

imp_id imp_collider_create(imp_world *w, const imp_collider_def *def)
{
    if (w->colliders->ids.count == w->colliders->cap) {
        w->colliders->cap = w->colliders->cap ? 2 * w->colliders->cap : 8;
        w->colliders->collider = ids_grow(w->colliders->collider, sizeof(collider), w->colliders->cap);
    }
    imp_id id = ids_alloc(&w->colliders->ids);
    collider *c = &w->colliders->collider[w->colliders->ids.count - 1];
    c->def = *def;
    if (def->shape == IMP_COLLIDER_PLANE) c->def.normal = v3_normalize(def->normal);
    w->colliders->edits++;
    return id;
}

void imp_collider_destroy(imp_world *w, imp_id id)
{
    int d = ids_remove(&w->colliders->ids, id);
    if (d >= 0) w->colliders->collider[d] = w->colliders->collider[w->colliders->ids.count];
    w->colliders->edits++;
}

void imp_collider_set(imp_world *w, imp_id id, const imp_collider_def *def)
{
    int d = ids_lookup(&w->colliders->ids, id);
    if (d < 0) return;
    w->colliders->collider[d].def = *def;
    if (def->shape == IMP_COLLIDER_PLANE) w->colliders->collider[d].def.normal = v3_normalize(def->normal);
}

imp_collider_def imp_collider_def_of(const imp_world *w, imp_id id)
{
    int d = ids_lookup(&w->colliders->ids, id);
    return d < 0 ? imp_collider_def_default() : w->colliders->collider[d].def;
}

bool imp_collider_valid(const imp_world *w, imp_id id) { return ids_lookup(&w->colliders->ids, id) >= 0; }
int imp_collider_count(const imp_world *w) { return w->colliders->ids.count; }
imp_collider_def imp_collider_get(const imp_world *w, int i) { return w->colliders->collider[i].def; }

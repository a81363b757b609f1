/* collider.h: the static colliders particles and bodies meet, and their store (collider.c). */
#ifndef IMPETUS_COLLIDER_H
#define IMPETUS_COLLIDER_H

#include "ids.h"

typedef struct collider {
    imp_collider_def def;
} collider;

/* the static colliders particles (and bodies) meet (particle_collide.c) */
typedef struct collider_store {
    idtable ids;
    collider *collider;
    int cap;
    uint64_t edits;       /* bumped when a collider comes or goes */
} collider_store;

#endif

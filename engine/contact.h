/* contact.h: the collide stage: pairs, manifolds and their begin/end events (contact.c). */
#ifndef IMPETUS_CONTACT_H
#define IMPETUS_CONTACT_H

#include "broadphase.h"
#include "shape.h"

/* a broad-phase pair and its persistent narrow-phase data; key = (lower << 32) | higher of its two
 * sides' keys (broadphase.h) */
typedef struct pair {
    uint64_t key;
    uint32_t a, b;        /* keys of the two sides, in narrow-phase order (a is A)      */
    int32_t witness;      /* cached separating axis (S0 7.1), -1 when none              */
    int32_t man;          /* its manifold when touching, else -1                        */
} pair;

/* a touching pair's manifold, kept apart from the pairs so that most pairs stay small */
typedef struct manifold {
    imp_contact c;
    imp_vec3 local[IMP_MANIFOLD_MAX]; /* the points in A's shape frame, to match them next step */
} manifold;

/* the contact set: the pairs and manifolds after the last collide stage, and its events (contact.c) */
typedef struct contact_set {
    pair *pairs; int pair_count, pair_cap;                 /* the broad phase's pairs, sorted by key  */
    manifold *manifolds; int manifold_count, manifold_cap; /* the touching ones                        */
    pair *next_pairs; int next_pair_count, next_pair_cap;  /* built by the next update, then swapped   */
    manifold *next_manifolds; int next_manifold_count, next_manifold_cap;
    imp_contact_side *begin, *end; int begin_count, end_count, begin_cap, end_cap; /* 2 sides per event */
    double *begin_speed, *end_impulse; int begin_val_cap, end_val_cap; /* what each event carried */
    int *cand_old; int cand_cap;        /* the narrow phase's scratch: per candidate its old pair, its points */
    uint32_t next_point_id;
    uint64_t body_edits, collider_edits; /* the stores' edits when the set was found (contacts_current) */
} contact_set;

/* contact.c */
void contacts_update(imp_world *w);
/* whether the set describes the bodies and colliders as they are: nothing came, went or was moved by a
 * script since it was found (the integration moves them, but the collide stage follows it) */
bool contacts_current(const imp_world *w);
/* a step's events accumulate over every collide of the step: cleared when the step begins */
void contacts_clear_events(imp_world *w);
void contacts_free(imp_world *w);
const geom *contacts_geom(const imp_world *w, uint32_t key, geom *tmp);

#endif

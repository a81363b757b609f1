/* broadphase.h: which shapes might touch: sweep and prune, sort and sweep, a hash grid (broadphase.c). */
#ifndef IMPETUS_BROADPHASE_H
#define IMPETUS_BROADPHASE_H

#include "shape.h"

/* a side's key: a shape's slot, or COLLIDER_KEY | slot for a collider */
#define COLLIDER_KEY 0x80000000u

struct bp_cand { uint64_t key; uint32_t a, b; }; /* a broad-phase candidate pair, or a grid entry */

/* the broad phase's part (broadphase.c) */
typedef struct broadphase {
    imp_broadphase kind;
    /* shape slots of the broad phase (everything but planes); the sort-and-sweep keeps them in
     * coherent order of their minimum on axis */
    uint32_t *order; int order_count, order_cap;
    int axis;
    /* incremental sweep and prune (S0 7.2.2): three sorted endpoint lists, id = slot << 1 | is_max,
     * and the set of overlapping pairs, updated at every exchange of the insertion sorts */
    struct sap_end { double v; uint32_t id; } *ends[3]; int ends_count, ends_cap;
    uint64_t *set; int set_count, set_cap;   /* open addressing, linear probing; 0 = empty      */
    int sap_built, sap_added;                 /* lists valid; shapes appended since they were built */
    uint8_t *dead; int dead_cap, dead_any;    /* slots removed since the last step               */
    void *boxes; int boxes_cap;   /* bounds in sweep order (broadphase.c) */
    /* grid scratch: (cell hash << 32 | box) entries, radix-sorted as candidates are */
    struct bp_cand *cells, *cells_tmp; int cell_cap;
    /* this step's candidates (sorted by key) */
    struct bp_cand *cand, *cand_tmp; int cand_count, cand_cap;
    int *radix;                   /* 2^16 counters of the radix sort */
} broadphase;

/* broadphase.c */
void bp_find_pairs(imp_world *w);
bool bp_can_collide(const imp_world *w, const shape *a, const shape *b);
void bp_free(imp_world *w);

/* the contact side (body and shape, or collider) of a key */
imp_contact_side bp_key_side(const imp_world *w, uint32_t key);

#endif

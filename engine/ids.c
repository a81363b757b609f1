/* ids.c: generation-counted handles over dense arrays (ids.h). */
#include <stdio.h>
#include <stdlib.h>

#include "ids.h"

#define NO_SLOT UINT32_MAX

void *ids_grow(void *p, size_t elem, size_t cap)
{
    if (cap == 0) cap = 1;
    void *q = cap > SIZE_MAX / elem ? NULL : realloc(p, elem * cap);
    if (!q) {
        fprintf(stderr, "impetus: out of memory\n");
        abort();
    }
    return q;
}

imp_id ids_alloc(idtable *t)
{
    if (t->slots == 0) t->free_head = (int)NO_SLOT;
    if (t->count == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->dense_slot = ids_grow(t->dense_slot, sizeof *t->dense_slot, t->cap);
    }
    uint32_t slot;
    if ((uint32_t)t->free_head != NO_SLOT) {
        slot = (uint32_t)t->free_head;
        t->free_head = (int)t->slot_dense[slot];
    } else {
        if (t->slots >= t->slot_cap) { /* doubling: n creations copy O(n) entries, not O(n^2) */
            t->slot_cap = t->slots >= 8 ? 2 * t->slots : 16;
            t->slot_dense = ids_grow(t->slot_dense, sizeof *t->slot_dense, t->slot_cap);
            t->slot_gen = ids_grow(t->slot_gen, sizeof *t->slot_gen, t->slot_cap);
        }
        slot = (uint32_t)t->slots++;
        t->slot_gen[slot] = 0;
    }
    t->slot_gen[slot] += 1; /* odd: live */
    t->slot_dense[slot] = (uint32_t)t->count;
    t->dense_slot[t->count++] = slot;
    imp_id id = {slot, t->slot_gen[slot]};
    return id;
}

int ids_lookup(const idtable *t, imp_id id)
{
    if (id.generation == 0 || id.index >= (uint32_t)t->slots) return -1;
    if (t->slot_gen[id.index] != id.generation || !(id.generation & 1u)) return -1;
    return (int)t->slot_dense[id.index];
}

int ids_remove(idtable *t, imp_id id)
{
    int d = ids_lookup(t, id);
    if (d < 0) return -1;
    int last = --t->count;
    uint32_t moved = t->dense_slot[last];
    t->dense_slot[d] = moved;
    t->slot_dense[moved] = (uint32_t)d;
    t->slot_gen[id.index] += 1; /* even: free */
    t->slot_dense[id.index] = (uint32_t)t->free_head;
    t->free_head = (int)id.index;
    return d;
}

imp_id ids_of(const idtable *t, int dense)
{
    uint32_t slot = t->dense_slot[dense];
    imp_id id = {slot, t->slot_gen[slot]};
    return id;
}

void ids_free(idtable *t)
{
    free(t->slot_dense);
    free(t->slot_gen);
    free(t->dense_slot);
    t->slot_dense = t->slot_gen = t->dense_slot = NULL;
    t->count = t->slots = t->cap = t->slot_cap = 0;
}

/* ids.h: id tables: stable ids with generations over dense arrays (ids.c). */
#ifndef IMPETUS_IDS_H
#define IMPETUS_IDS_H

#include <stddef.h>
#include <stdint.h>
#include "impetus.h"

/* Objects live in dense arrays (so loops are linear); a slot table maps a stable id to the current
 * dense index. Removing swaps the last element into the hole, as Box2D's arrays do. */
typedef struct idtable {
    uint32_t *slot_dense; /* slot -> dense index, or the next free slot when unused */
    uint32_t *slot_gen;   /* slot -> generation (odd: live, even: free)               */
    uint32_t *dense_slot; /* dense index -> slot                                      */
    int count, slots, cap, free_head;
    int slot_cap;         /* room in slot_dense and slot_gen (0 after a table is read whole: grown on use) */
} idtable;

imp_id ids_alloc(idtable *t);                    /* new dense entry at index t->count - 1    */
int ids_lookup(const idtable *t, imp_id id);     /* dense index, or -1 for a stale id         */
/* free id; returns the dense index that was emptied. The caller moves its data from index
 * t->count (the old last) into it, as ids_remove already moved the mapping. */
int ids_remove(idtable *t, imp_id id);
imp_id ids_of(const idtable *t, int dense);      /* the id of a dense entry                  */
void ids_free(idtable *t);
void *ids_grow(void *p, size_t elem, size_t cap); /* realloc or abort on out-of-memory         */

#endif

/* broadphase.c: which shapes might touch: bounding boxes, sweep and prune (S0 7.2), a hash grid.
 *
 * Sweep and prune. Two axis-aligned boxes overlap iff their intervals overlap on all three axes.
 * Sorting the boxes by their minimum on one axis, a sweep finds every overlap on that axis: box k
 * overlaps box j > k on it iff min_j <= max_k, so the sweep walks j = k+1, k+2, ... until
 * min_j > max_k and tests the other two axes for those j only. The work is O(n + overlaps on the
 * axis), so the axis is the one along which the box centres spread most (re-chosen only when another
 * axis spreads 1.5 times more, to keep the order coherent).
 * Coherence (S0 7.2): bodies move little from one step to the next, so the order of the last step
 * is almost sorted; insertion sort repairs it in O(n + swaps), where a full sort costs O(n log n).
 *
 * Where sweep and prune degrades (many boxes overlapping on every axis projection: a tall pile, or
 * a large world whose bodies spread in the plane of the sweep axis), the hash grid is the scalable
 * choice: every box is entered in the cells of a uniform grid it overlaps (cell = twice the mean box
 * size); boxes sharing a cell are tested, and a pair is reported only from the cell holding the
 * lower corner of the two boxes' intersection, so it is reported once. Boxes spanning more than 64
 * cells (meshes, huge bodies) are tested against everything instead.
 *
 * Planes (infinite) stay out of both structures: each is tested against every dynamic shape, as are
 * the particle colliders. Pairs are filtered: never two shapes of one body, never two bodies that
 * cannot move (static or kinematic), and only when (group_a & mask_b) && (group_b & mask_a). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GRID_MAX_CELLS 64

typedef struct bp_box {
    double lo[3], hi[3];
    uint32_t slot;
    uint8_t moving, dynamic;   /* not static; moved by forces */
} bp_box;

static bp_box *bp_scratch(collision_state *c, int n)
{
    if (n > c->boxes_cap) {
        c->boxes_cap = n + n / 2 + 64;
        c->boxes = ids_grow(c->boxes, sizeof(bp_box), c->boxes_cap);
    }
    return c->boxes;
}

void imp_world_set_broadphase(imp_world *w, imp_broadphase kind) { w->col.kind = kind; }
imp_broadphase imp_world_broadphase(const imp_world *w) { return w->col.kind; }

static shape *shape_at(imp_world *w, uint32_t slot) { return &w->shapes[w->shape_ids.slot_dense[slot]]; }

void bp_add(imp_world *w, uint32_t slot)
{
    collision_state *c = &w->col;
    if (shape_at(w, slot)->type == IMP_SHAPE_PLANE) return;
    if (c->order_count == c->order_cap) {
        c->order_cap = c->order_cap ? 2 * c->order_cap : 64;
        c->order = ids_grow(c->order, sizeof(uint32_t), c->order_cap);
    }
    c->order[c->order_count++] = slot;
}

void bp_remove(imp_world *w, uint32_t slot)
{
    collision_state *c = &w->col;
    for (int k = 0; k < c->order_count; k++)
        if (c->order[k] == slot) {
            memmove(c->order + k, c->order + k + 1, sizeof(uint32_t) * (size_t)(c->order_count - k - 1));
            c->order_count--;
            return;
        }
}

bool bp_can_collide(const imp_world *w, const shape *a, const shape *b)
{
    if (a->body == b->body) return false;
    const body *ba = &w->bodies[w->body_ids.slot_dense[a->body]], *bb = &w->bodies[w->body_ids.slot_dense[b->body]];
    if (ba->motion != IMP_DYNAMIC && bb->motion != IMP_DYNAMIC) return false;
    return (ba->group & bb->mask) && (bb->group & ba->mask);
}

static void push_pair(collision_state *c, uint32_t ka, uint32_t kb)
{
    if (c->cand_count == c->cand_cap) {
        c->cand_cap = c->cand_cap ? 2 * c->cand_cap : 256;
        c->cand = ids_grow(c->cand, sizeof *c->cand, c->cand_cap);
        c->cand_tmp = ids_grow(c->cand_tmp, sizeof *c->cand_tmp, c->cand_cap);
    }
    struct bp_cand *p = &c->cand[c->cand_count++];
    uint32_t lo = ka < kb ? ka : kb, hi = ka < kb ? kb : ka;
    p->key = ((uint64_t)lo << 32) | hi;
    p->a = ka, p->b = kb;
}

/* LSD radix sort of the candidates by key, 16 bits a pass; passes over digits that are the same for
 * every key are skipped (slot numbers are small, so usually only 2 of the 4 passes run). The same
 * routine sorts the grid's (cell hash, box) entries, as keys with a zero payload. */
static void radix_sort(collision_state *c, struct bp_cand *a, struct bp_cand *tmp, int n, struct bp_cand **sorted)
{
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (int i = 0; i < n; i++) all_or |= a[i].key, all_and &= a[i].key;
    if (!c->radix) c->radix = ids_grow(NULL, sizeof(int), 1 << 16);
    int *count = c->radix;
    for (int pass = 0; pass < 4; pass++) {
        const int shift = 16 * pass;
        if ((((all_or ^ all_and) >> shift) & 0xffff) == 0) continue; /* this digit never varies */
        memset(count, 0, sizeof(int) << 16);
        for (int i = 0; i < n; i++) count[(a[i].key >> shift) & 0xffff]++;
        int sum = 0;
        for (int d = 0; d < (1 << 16); d++) { int t = count[d]; count[d] = sum; sum += t; }
        for (int i = 0; i < n; i++) tmp[count[(a[i].key >> shift) & 0xffff]++] = a[i];
        struct bp_cand *t = a; a = tmp; tmp = t;
    }
    *sorted = a;
}

static void sort_candidates(collision_state *c)
{
    struct bp_cand *sorted;
    radix_sort(c, c->cand, c->cand_tmp, c->cand_count, &sorted);
    if (sorted != c->cand) c->cand_tmp = c->cand, c->cand = sorted;
}

static bool overlap(const bp_box *a, const bp_box *b)
{
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] && b->lo[1] <= a->hi[1] &&
           a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

static void test_pair(imp_world *w, const bp_box *a, const bp_box *b)
{
    if (!(a->moving || b->moving) || !overlap(a, b)) return;
    if (!bp_can_collide(w, shape_at(w, a->slot), shape_at(w, b->slot))) return;
    push_pair(&w->col, a->slot, b->slot);
}

static void load_box(imp_world *w, bp_box *b, uint32_t slot)
{
    const shape *s = shape_at(w, slot);
    b->lo[0] = s->lo.x, b->lo[1] = s->lo.y, b->lo[2] = s->lo.z;
    b->hi[0] = s->hi.x, b->hi[1] = s->hi.y, b->hi[2] = s->hi.z;
    b->slot = slot;
    uint8_t m = w->bodies[w->body_ids.slot_dense[s->body]].motion;
    b->moving = m != IMP_FIXED;
    b->dynamic = m == IMP_DYNAMIC;
}

static void sweep_and_prune(imp_world *w, bp_box *bx, int n)
{
    collision_state *c = &w->col;
    /* the axis of largest spread of the centres */
    double s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
    for (int k = 0; k < n; k++)
        for (int a = 0; a < 3; a++) {
            double m = 0.5 * (bx[k].lo[a] + bx[k].hi[a]);
            s1[a] += m, s2[a] += m * m;
        }
    double var[3];
    for (int a = 0; a < 3; a++) var[a] = n ? s2[a] / n - (s1[a] / n) * (s1[a] / n) : 0;
    int best = c->axis;
    for (int a = 0; a < 3; a++)
        if (var[a] > 1.5 * var[best]) best = a;
    c->axis = best;
    const int ax = best;
    /* insertion sort of the coherent order by the minimum on the axis (bx is in c->order's order) */
    for (int k = 1; k < n; k++) {
        bp_box t = bx[k];
        int j = k - 1;
        while (j >= 0 && bx[j].lo[ax] > t.lo[ax]) {
            bx[j + 1] = bx[j];
            j--;
        }
        bx[j + 1] = t;
    }
    for (int k = 0; k < n; k++) c->order[k] = bx[k].slot;
    /* sweep: the other two axes are tested inline, the filters only for boxes that overlap */
    const int o1 = (ax + 1) % 3, o2 = (ax + 2) % 3;
    for (int k = 0; k < n; k++) {
        const bp_box *a = &bx[k];
        const double hi = a->hi[ax], alo1 = a->lo[o1], ahi1 = a->hi[o1], alo2 = a->lo[o2], ahi2 = a->hi[o2];
        for (int j = k + 1; j < n && bx[j].lo[ax] <= hi; j++) {
            const bp_box *b = &bx[j];
            if (b->lo[o1] > ahi1 || alo1 > b->hi[o1] || b->lo[o2] > ahi2 || alo2 > b->hi[o2]) continue;
            if (!(a->moving || b->moving)) continue;
            if (bp_can_collide(w, shape_at(w, a->slot), shape_at(w, b->slot))) push_pair(c, a->slot, b->slot);
        }
    }
}

static uint32_t cell_hash(int64_t x, int64_t y, int64_t z)
{
    uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
    return (uint32_t)(h ^ (h >> 32));
}

static void hash_grid(imp_world *w, bp_box *bx, int n)
{
    collision_state *c = &w->col;
    double ext = 0;
    int counted = 0;
    for (int k = 0; k < n; k++) {
        double e = fmax(bx[k].hi[0] - bx[k].lo[0], fmax(bx[k].hi[1] - bx[k].lo[1], bx[k].hi[2] - bx[k].lo[2]));
        if (e < 1e6) ext += e, counted++;
    }
    const double h = counted ? 2 * ext / counted : 1, inv = 1.0 / (h > 0 ? h : 1);
    int m = 0, nlarge = 0;
    int *large = NULL;
    for (int k = 0; k < n; k++) {
        int64_t i0[3], i1[3];
        long cells = 1;
        for (int a = 0; a < 3; a++) {
            i0[a] = (int64_t)floor(fmax(bx[k].lo[a] * inv, -1e15));
            i1[a] = (int64_t)floor(fmin(bx[k].hi[a] * inv, 1e15));
            cells *= (long)fmin((double)(i1[a] - i0[a] + 1), 1e6);
        }
        if (cells > GRID_MAX_CELLS) {
            large = ids_grow(large, sizeof(int), nlarge + 1);
            large[nlarge++] = k;
            continue;
        }
        if (m + cells > c->cell_cap) {
            c->cell_cap = 2 * (m + (int)cells) + 1024;
            c->cells = ids_grow(c->cells, sizeof *c->cells, c->cell_cap);
            c->cells_tmp = ids_grow(c->cells_tmp, sizeof *c->cells_tmp, c->cell_cap);
        }
        for (int64_t x = i0[0]; x <= i1[0]; x++)
            for (int64_t y = i0[1]; y <= i1[1]; y++)
                for (int64_t z = i0[2]; z <= i1[2]; z++) c->cells[m++].key = ((uint64_t)cell_hash(x, y, z) << 32) | (uint32_t)k;
    }
    struct bp_cand *sorted = c->cells;
    if (m > 1) radix_sort(c, c->cells, c->cells_tmp, m, &sorted);
    if (sorted != c->cells) c->cells_tmp = c->cells, c->cells = sorted;
    for (int s = 0; s < m;) {
        int e = s;
        uint32_t hsh = (uint32_t)(c->cells[s].key >> 32);
        while (e < m && (uint32_t)(c->cells[e].key >> 32) == hsh) e++;
        for (int i = s; i < e; i++)
            for (int j = i + 1; j < e; j++) {
                const bp_box *a = &bx[(uint32_t)c->cells[i].key], *b = &bx[(uint32_t)c->cells[j].key];
                if (!overlap(a, b)) continue;
                /* report from the cell of the intersection's lower corner only */
                int64_t cx = (int64_t)floor(fmax(a->lo[0], b->lo[0]) * inv), cy = (int64_t)floor(fmax(a->lo[1], b->lo[1]) * inv),
                        cz = (int64_t)floor(fmax(a->lo[2], b->lo[2]) * inv);
                if (cell_hash(cx, cy, cz) != hsh) continue;
                test_pair(w, a, b);
            }
        s = e;
    }
    /* large boxes against every box; two large ones once (the later against the earlier only) */
    for (int i = 0; i < nlarge; i++) {
        for (int k = 0; k < n; k++) {
            bool earlier_large = false;
            for (int j = 0; j <= i && !earlier_large; j++) earlier_large = large[j] == k;
            if (!earlier_large) test_pair(w, &bx[large[i]], &bx[k]);
        }
    }
    free(large);
}

/* candidate pairs of this step into w->col.cand, sorted by key, without duplicates */
void bp_find_pairs(imp_world *w)
{
    collision_state *c = &w->col;
    c->cand_count = 0;
    const int n = c->order_count;
    bp_box *bx = bp_scratch(c, n + 1);
    for (int k = 0; k < n; k++) load_box(w, &bx[k], c->order[k]);
    if (c->kind == IMP_BROADPHASE_GRID) hash_grid(w, bx, n);
    else sweep_and_prune(w, bx, n);
    /* planes of static bodies against every movable shape */
    for (int s = 0; s < w->shape_ids.count; s++) {
        const shape *pl = &w->shapes[s];
        if (pl->type != IMP_SHAPE_PLANE) continue;
        geom g;
        shape_geom(pl, &g);
        uint32_t pslot = w->shape_ids.dense_slot[s];
        for (int k = 0; k < n; k++) {
            if (!bx[k].dynamic) continue;
            /* the box's lowest corner along n below the plane? */
            double lowest = 0;
            const double nn[3] = {g.normal.x, g.normal.y, g.normal.z};
            for (int a = 0; a < 3; a++) lowest += nn[a] * (nn[a] > 0 ? bx[k].lo[a] : bx[k].hi[a]);
            if (lowest > g.offset) continue;
            if (!bp_can_collide(w, pl, shape_at(w, bx[k].slot))) continue;
            push_pair(c, bx[k].slot, pslot);
        }
    }
    /* particle colliders (static obstacles) against every movable shape */
    for (int ci = 0; ci < w->collider_ids.count; ci++) {
        geom g;
        shape_geom_from_collider(&w->colliders[ci].def, &g);
        uint32_t key = COLLIDER_KEY | w->collider_ids.dense_slot[ci];
        bp_box cb = {{g.lo.x, g.lo.y, g.lo.z}, {g.hi.x, g.hi.y, g.hi.z}, 0, 0, 0};
        for (int k = 0; k < n; k++) {
            if (!bx[k].dynamic) continue; /* static colliders meet dynamic bodies only */
            if (g.type == IMP_SHAPE_PLANE) {
                double lowest = 0;
                const double nn[3] = {g.normal.x, g.normal.y, g.normal.z};
                for (int a = 0; a < 3; a++) lowest += nn[a] * (nn[a] > 0 ? bx[k].lo[a] : bx[k].hi[a]);
                if (lowest > g.offset) continue;
            } else if (!overlap(&cb, &bx[k])) continue;
            push_pair(c, bx[k].slot, key);
        }
    }
    sort_candidates(c);
    int m = 0;
    for (int k = 0; k < c->cand_count; k++)
        if (m == 0 || c->cand[m - 1].key != c->cand[k].key) c->cand[m++] = c->cand[k];
    c->cand_count = m;
}

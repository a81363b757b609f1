/* broadphase.c: which shapes might touch: bounding boxes, sweep and prune (S0 7.2), a hash grid.
 *
 * Incremental sweep and prune (S0 7.2.2, the default). Two axis-aligned boxes overlap iff their
 * intervals overlap on all three axes. Each axis keeps a list of all interval endpoints, sorted,
 * from one step to the next. Bodies move little per step (coherence), so the lists are almost in
 * order and an insertion sort repairs them in O(n + exchanges). Overlap status changes only at an
 * exchange: a minimum moving left past a maximum starts an overlap on that axis (the pair is added
 * to a set of overlapping pairs if the boxes overlap on all three axes), a maximum moving past a
 * minimum ends one (the pair leaves the set). The set is the broad phase's answer; new shapes are
 * appended to the lists and sorted into place the same way, and many new shapes at once rebuild the
 * lists with a full sort and one sweep.
 *
 * Sort and sweep ("sweep"): the boxes sorted by their minimum on one axis (the one along which the
 * centres spread most, re-chosen only when another spreads 1.5 times more), again by an insertion
 * sort of last step's order; box k overlaps box j > k on that axis iff min_j <= max_k, so a sweep
 * walks j = k+1, ... until min_j > max_k and tests the other two axes for those only. O(n + overlaps
 * on the axis): it degrades when many boxes overlap on every axis projection (a tall pile).
 *
 * Hash grid ("grid"): every box is entered in the cells of a uniform grid it overlaps (cell = twice
 * the mean box size); boxes sharing a cell are tested, and a pair is reported only from the cell
 * holding the lower corner of the two boxes' intersection, so it is reported once. Boxes spanning
 * more than 64 cells (meshes, huge bodies) are tested against everything instead. No state is kept,
 * so it suits many bodies appearing and disappearing and incoherent motion.
 *
 * Planes (infinite) stay out of all three: each is tested against every dynamic shape, as are the
 * particle colliders. Pairs are filtered: never two shapes of one body, never two bodies that cannot
 * move each other (static or kinematic), and only when (group_a & mask_b) && (group_b & mask_a). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "broadphase.h"
#include "collider.h"
#include "ids.h"
#include "shape.h"
#include "world_parts.h"

#define GRID_MAX_CELLS 64

typedef struct bp_box {
    double lo[3], hi[3];
    uint32_t slot;
    uint8_t moving, dynamic;   /* not static; moved by forces */
} bp_box;

static bp_box *bp_scratch(broadphase *c, int n)
{
    if (n > c->boxes_cap) {
        c->boxes_cap = n + n / 2 + 64;
        c->boxes = ids_grow(c->boxes, sizeof(bp_box), c->boxes_cap);
    }
    return c->boxes;
}

void imp_world_set_broadphase(imp_world *w, imp_broadphase kind)
{
    w->broadphase->kind = kind;
    w->broadphase->sap_built = 0; /* rebuilt from scratch when it is next used */
}
imp_broadphase imp_world_broadphase(const imp_world *w) { return w->broadphase->kind; }

static shape *shape_at(imp_world *w, uint32_t slot) { return &w->shapes->shape[w->shapes->ids.slot_dense[slot]]; }

static void ends_reserve(broadphase *c, int n)
{
    if (n <= c->ends_cap) return;
    c->ends_cap = n + n / 2 + 64;
    for (int a = 0; a < 3; a++) c->ends[a] = ids_grow(c->ends[a], sizeof(struct sap_end), c->ends_cap);
}

/* a shape joins: appended to the order and, once the lists exist, at their ends (the next insertion
 * sorts move it into place and report its overlaps on the way). live: the shape still exists (one
 * removed again before this sync leaves with the removal that follows in the log) */
static void bp_add(imp_world *w, uint32_t slot, bool live)
{
    broadphase *c = w->broadphase;
    if (c->order_count == c->order_cap) {
        c->order_cap = c->order_cap ? 2 * c->order_cap : 64;
        c->order = ids_grow(c->order, sizeof(uint32_t), c->order_cap);
    }
    c->order[c->order_count++] = slot;
    if (c->sap_built) {
        /* appended at the ends of the lists: the next insertion sorts move them into place and
         * report their overlaps on the way */
        ends_reserve(c, c->ends_count + 2);
        const shape *sh = live ? shape_at(w, slot) : NULL;
        const double lo[3] = {sh ? sh->lo.x : 0, sh ? sh->lo.y : 0, sh ? sh->lo.z : 0};
        const double hi[3] = {sh ? sh->hi.x : 0, sh ? sh->hi.y : 0, sh ? sh->hi.z : 0};
        for (int a = 0; a < 3; a++) {
            c->ends[a][c->ends_count] = (struct sap_end){lo[a], slot << 1};
            c->ends[a][c->ends_count + 1] = (struct sap_end){hi[a], slot << 1 | 1};
        }
        c->ends_count += 2;
        c->sap_added++;
    }
}

static void bp_remove(imp_world *w, uint32_t slot)
{
    broadphase *c = w->broadphase;
    for (int k = 0; k < c->order_count; k++)
        if (c->order[k] == slot) {
            memmove(c->order + k, c->order + k + 1, sizeof(uint32_t) * (size_t)(c->order_count - k - 1));
            c->order_count--;
            break;
        }
    if (c->sap_built) {
        int m = 0;
        for (int a = 0; a < 3; a++) {
            m = 0;
            for (int k = 0; k < c->ends_count; k++)
                if (c->ends[a][k].id >> 1 != slot) c->ends[a][m++] = c->ends[a][k];
        }
        c->ends_count = m;
        /* its pairs leave the overlap set at the start of the next step */
        if ((int)slot >= c->dead_cap) {
            int cap = c->dead_cap ? c->dead_cap : 64;
            while (cap <= (int)slot) cap *= 2;
            c->dead = ids_grow(c->dead, 1, cap);
            memset(c->dead + c->dead_cap, 0, (size_t)(cap - c->dead_cap));
            c->dead_cap = cap;
        }
        c->dead[slot] = 1;
        c->dead_any = 1;
    }
}

/* replay the shape store's log of added and removed shapes, in order */
static void bp_sync(imp_world *w)
{
    shape_store *st = w->shapes;
    for (int k = 0; k < st->change_count; k++) {
        const shape_change *ch = &st->changes[k];
        if (ch->removed) bp_remove(w, ch->id.index);
        else if (!ch->plane) bp_add(w, ch->id.index, ids_lookup(&st->ids, ch->id) >= 0);
    }
    st->change_count = 0;
}

bool bp_can_collide(const imp_world *w, const shape *a, const shape *b)
{
    if (a->body == b->body) return false;
    const body *ba = &w->bodies->body[w->bodies->ids.slot_dense[a->body]], *bb = &w->bodies->body[w->bodies->ids.slot_dense[b->body]];
    if (ba->motion != IMP_DYNAMIC && bb->motion != IMP_DYNAMIC) return false;
    return (ba->group & bb->mask) && (bb->group & ba->mask);
}

static void push_pair(broadphase *c, uint32_t ka, uint32_t kb)
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

/* LSD radix sort of the candidates by key; passes over digits that are the same for every key are
 * skipped (slot numbers are small, so usually only a few passes run). A pass costs O(n + 2^bits): 16-bit
 * digits for many keys, 8-bit digits for fewer than 4096, where clearing and summing 2^16 counters
 * would cost more than the keys (a 50-body scene spent a sixth of its step there). The same routine
 * sorts the grid's (cell hash, box) entries, as keys with a zero payload. */
static void radix_sort(broadphase *c, struct bp_cand *a, struct bp_cand *tmp, int n, struct bp_cand **sorted)
{
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (int i = 0; i < n; i++) all_or |= a[i].key, all_and &= a[i].key;
    if (!c->radix) c->radix = ids_grow(NULL, sizeof(int), 1 << 16);
    int *count = c->radix;
    const int bits = n < 4096 ? 8 : 16, digits = 1 << bits;
    const uint64_t mask = (uint64_t)digits - 1;
    for (int shift = 0; shift < 64; shift += bits) {
        if ((((all_or ^ all_and) >> shift) & mask) == 0) continue; /* this digit never varies */
        memset(count, 0, sizeof(int) * (size_t)digits);
        for (int i = 0; i < n; i++) count[(a[i].key >> shift) & mask]++;
        int sum = 0;
        for (int d = 0; d < digits; d++) { int t = count[d]; count[d] = sum; sum += t; }
        for (int i = 0; i < n; i++) tmp[count[(a[i].key >> shift) & mask]++] = a[i];
        struct bp_cand *t = a; a = tmp; tmp = t;
    }
    *sorted = a;
}

static void sort_candidates(broadphase *c)
{
    struct bp_cand *sorted;
    radix_sort(c, c->cand, c->cand_tmp, c->cand_count, &sorted);
    if (sorted != c->cand) c->cand_tmp = c->cand, c->cand = sorted;
}

void bp_free(imp_world *w)
{
    broadphase *c = w->broadphase;
    if (!c) return;
    free(c->cand), free(c->cand_tmp), free(c->radix), free(c->order), free(c->boxes), free(c->cells), free(c->cells_tmp);
    for (int a = 0; a < 3; a++) free(c->ends[a]);
    free(c->set), free(c->dead);
    free(c);
    w->broadphase = NULL;
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
    push_pair(w->broadphase, a->slot, b->slot);
}

static void load_box(imp_world *w, bp_box *b, uint32_t slot)
{
    const shape *s = shape_at(w, slot);
    b->lo[0] = s->lo.x, b->lo[1] = s->lo.y, b->lo[2] = s->lo.z;
    b->hi[0] = s->hi.x, b->hi[1] = s->hi.y, b->hi[2] = s->hi.z;
    b->slot = slot;
    uint8_t m = w->bodies->body[w->bodies->ids.slot_dense[s->body]].motion;
    b->moving = m != IMP_FIXED;
    b->dynamic = m == IMP_DYNAMIC;
}

/* ---- the set of overlapping pairs: open addressing with linear probing ----------------------------- */
static uint32_t set_hash(uint64_t k, int cap)
{
    k *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(k >> 32) & (uint32_t)(cap - 1);
}

static void set_insert(broadphase *c, uint64_t key);

static void set_grow(broadphase *c)
{
    uint64_t *old = c->set;
    int old_cap = c->set_cap;
    c->set_cap = old_cap ? 2 * old_cap : 1024;
    c->set = calloc((size_t)c->set_cap, sizeof(uint64_t));
    if (!c->set) abort();
    c->set_count = 0;
    for (int i = 0; i < old_cap; i++)
        if (old[i]) set_insert(c, old[i]);
    free(old);
}

static void set_insert(broadphase *c, uint64_t key)
{
    if (2 * (c->set_count + 1) > c->set_cap) set_grow(c);
    uint32_t i = set_hash(key, c->set_cap);
    while (c->set[i]) {
        if (c->set[i] == key) return;
        i = (i + 1) & (uint32_t)(c->set_cap - 1);
    }
    c->set[i] = key;
    c->set_count++;
}

/* removal with backward shift: later entries of the probe run move up into the hole */
static void set_remove(broadphase *c, uint64_t key)
{
    if (!c->set_cap) return;
    const uint32_t mask = (uint32_t)(c->set_cap - 1);
    uint32_t i = set_hash(key, c->set_cap);
    while (c->set[i] != key) {
        if (!c->set[i]) return;
        i = (i + 1) & mask;
    }
    uint32_t hole = i;
    for (uint32_t j = (i + 1) & mask; c->set[j]; j = (j + 1) & mask) {
        uint32_t home = set_hash(c->set[j], c->set_cap);
        /* can the entry at j move to the hole? only if its home is not in (hole, j] cyclically */
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (stays) continue;
        c->set[hole] = c->set[j];
        hole = j;
    }
    c->set[hole] = 0;
    c->set_count--;
}

static uint64_t pair_key(uint32_t a, uint32_t b) { return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a; }

static bool shapes_overlap(imp_world *w, uint32_t a, uint32_t b)
{
    const shape *p = shape_at(w, a), *q = shape_at(w, b);
    return p->lo.x <= q->hi.x && q->lo.x <= p->hi.x && p->lo.y <= q->hi.y && q->lo.y <= p->hi.y && p->lo.z <= q->hi.z &&
           q->lo.z <= p->hi.z;
}

/* ---- incremental sweep and prune (S0 7.2.2) ------------------------------------------------------------
 * Each axis keeps the sorted list of all interval endpoints. Every step the values are refreshed in
 * place and each list is put back in order by insertion sort; an endpoint moving left past another
 * is an exchange, and only exchanges change overlap status: a minimum passing a maximum (the two
 * intervals start to overlap on this axis: add the pair if the boxes overlap on all three axes), or a
 * maximum passing a minimum (they stop overlapping: remove the pair). Min passing min or max passing
 * max changes nothing. On equal values a minimum sorts first, so touching boxes overlap. The work is
 * O(n + exchanges); for coherent motion the exchanges are about the changes in overlap status. */
static bool end_after(struct sap_end a, struct sap_end b)
{
    return a.v > b.v || (a.v == b.v && (a.id & 1) && !(b.id & 1));
}

static int cmp_end(const void *x, const void *y)
{
    struct sap_end a = *(const struct sap_end *)x, b = *(const struct sap_end *)y;
    return end_after(a, b) ? 1 : end_after(b, a) ? -1 : 0;
}

static void sap_sort_axis(imp_world *w, struct sap_end *e, int n)
{
    broadphase *c = w->broadphase;
    for (int i = 1; i < n; i++) {
        struct sap_end t = e[i];
        int j = i - 1;
        while (j >= 0 && end_after(e[j], t)) {
            struct sap_end o = e[j];
            uint32_t s = t.id >> 1, q = o.id >> 1;
            if (!(t.id & 1) && (o.id & 1)) {
                if (s != q && shapes_overlap(w, s, q)) set_insert(c, pair_key(s, q));
            } else if ((t.id & 1) && !(o.id & 1) && s != q) {
                set_remove(c, pair_key(s, q));
            }
            e[j + 1] = o;
            j--;
        }
        e[j + 1] = t;
    }
}

/* from scratch: sort the lists, then one sort-and-sweep along x fills the overlap set */
static void sap_build(imp_world *w, const uint32_t *slots, int n)
{
    broadphase *c = w->broadphase;
    ends_reserve(c, 2 * n);
    for (int k = 0; k < n; k++) {
        const shape *sh = shape_at(w, slots[k]);
        const double lo[3] = {sh->lo.x, sh->lo.y, sh->lo.z}, hi[3] = {sh->hi.x, sh->hi.y, sh->hi.z};
        for (int a = 0; a < 3; a++) {
            c->ends[a][2 * k] = (struct sap_end){lo[a], slots[k] << 1};
            c->ends[a][2 * k + 1] = (struct sap_end){hi[a], slots[k] << 1 | 1};
        }
    }
    c->ends_count = 2 * n;
    for (int a = 0; a < 3; a++)
        if (c->ends_count > 1) qsort(c->ends[a], (size_t)c->ends_count, sizeof(struct sap_end), cmp_end);
    if (c->set) memset(c->set, 0, sizeof(uint64_t) * (size_t)c->set_cap);
    c->set_count = 0;
    /* sweep x: an active list of open intervals */
    int *active = ids_grow(NULL, sizeof(int), n + 1), na = 0;
    for (int k = 0; k < c->ends_count; k++) {
        struct sap_end e = c->ends[0][k];
        uint32_t s = e.id >> 1;
        if (e.id & 1) {
            for (int i = 0; i < na; i++)
                if ((uint32_t)active[i] == s) { active[i] = active[--na]; break; }
        } else {
            for (int i = 0; i < na; i++)
                if (shapes_overlap(w, s, (uint32_t)active[i])) set_insert(c, pair_key(s, (uint32_t)active[i]));
            active[na++] = (int)s;
        }
    }
    free(active);
    c->sap_built = 1;
    c->sap_added = 0;
    c->dead_any = 0;
    if (c->dead) memset(c->dead, 0, (size_t)c->dead_cap);
}

static void sap_incremental(imp_world *w, bp_box *bx, int n)
{
    broadphase *c = w->broadphase;
    (void)bx;
    if (!c->sap_built || c->sap_added > 64 + n / 4) {
        sap_build(w, c->order, n);
    } else {
        if (c->dead_any) {
            /* drop the pairs of removed shapes (before a reused slot makes new ones) */
            int m = 0;
            uint64_t *keep = ids_grow(NULL, sizeof(uint64_t), c->set_count + 1);
            for (int i = 0; i < c->set_cap; i++) {
                uint64_t k = c->set[i];
                if (!k) continue;
                uint32_t a = (uint32_t)(k >> 32), b = (uint32_t)k;
                if ((int)a < c->dead_cap && c->dead[a]) continue;
                if ((int)b < c->dead_cap && c->dead[b]) continue;
                keep[m++] = k;
            }
            if (c->set) memset(c->set, 0, sizeof(uint64_t) * (size_t)c->set_cap);
            c->set_count = 0;
            for (int i = 0; i < m; i++) set_insert(c, keep[i]);
            free(keep);
            memset(c->dead, 0, (size_t)c->dead_cap);
            c->dead_any = 0;
        }
        for (int a = 0; a < 3; a++) {
            struct sap_end *e = c->ends[a];
            for (int k = 0; k < c->ends_count; k++) {
                const shape *sh = shape_at(w, e[k].id >> 1);
                const imp_vec3 v = (e[k].id & 1) ? sh->hi : sh->lo;
                e[k].v = a == 0 ? v.x : a == 1 ? v.y : v.z;
            }
            sap_sort_axis(w, e, c->ends_count);
        }
        c->sap_added = 0;
    }
    /* the candidates: overlapping pairs that pass the filters */
    for (int i = 0; i < c->set_cap; i++) {
        uint64_t k = c->set[i];
        if (!k) continue;
        uint32_t a = (uint32_t)(k >> 32), b = (uint32_t)k;
        const shape *sa = shape_at(w, a), *sb = shape_at(w, b);
        if (bp_can_collide(w, sa, sb)) push_pair(c, a, b);
    }
}

static void sweep_and_prune(imp_world *w, bp_box *bx, int n)
{
    broadphase *c = w->broadphase;
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

/* the grid cell of coordinate x (in cells: x / h), clamped to +-GRID_MAX_INDEX so that far-away and
 * non-finite boxes get cells too: a lower bound that is NaN goes to the lowest cell and an upper one
 * to the highest (fmax and fmin pass over NaN), so such a box spans the grid and is tested as a large
 * one. Clamping is monotone, so two overlapping boxes still share the cell of their intersection's
 * lower corner. */
#define GRID_MAX_INDEX 1e15
static int64_t grid_cell_lo(double x) { return (int64_t)fmin(fmax(floor(x), -GRID_MAX_INDEX), GRID_MAX_INDEX); }
static int64_t grid_cell_hi(double x) { return (int64_t)fmax(fmin(floor(x), GRID_MAX_INDEX), -GRID_MAX_INDEX); }

static void hash_grid(imp_world *w, bp_box *bx, int n)
{
    broadphase *c = w->broadphase;
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
        double span = 1; /* cells the box covers (a double: the spans of far boxes overflow integers) */
        for (int a = 0; a < 3; a++) {
            i0[a] = grid_cell_lo(bx[k].lo[a] * inv);
            i1[a] = grid_cell_hi(bx[k].hi[a] * inv);
            span *= i1[a] >= i0[a] ? (double)(i1[a] - i0[a]) + 1 : 0;
        }
        if (span == 0) continue; /* an empty box (hi below lo) overlaps nothing */
        if (span > GRID_MAX_CELLS) {
            large = ids_grow(large, sizeof(int), nlarge + 1);
            large[nlarge++] = k;
            continue;
        }
        const int cells = (int)span;
        if (m + cells > c->cell_cap) {
            c->cell_cap = 2 * (m + cells) + 1024;
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
                int64_t cx = grid_cell_lo(fmax(a->lo[0], b->lo[0]) * inv), cy = grid_cell_lo(fmax(a->lo[1], b->lo[1]) * inv),
                        cz = grid_cell_lo(fmax(a->lo[2], b->lo[2]) * inv);
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

/* candidate pairs of this step into w->broadphase->cand, sorted by key, without duplicates */
void bp_find_pairs(imp_world *w)
{
    broadphase *c = w->broadphase;
    bp_sync(w);
    c->cand_count = 0;
    const int n = c->order_count;
    bp_box *bx = bp_scratch(c, n + 1);
    for (int k = 0; k < n; k++) load_box(w, &bx[k], c->order[k]);
    if (c->kind == IMP_BROADPHASE_GRID) hash_grid(w, bx, n);
    else if (c->kind == IMP_BROADPHASE_SWEEP) sweep_and_prune(w, bx, n);
    else sap_incremental(w, bx, n);
    /* planes of static bodies against every movable shape */
    for (int s = 0; s < w->shapes->ids.count; s++) {
        const shape *pl = &w->shapes->shape[s];
        if (pl->type != IMP_SHAPE_PLANE) continue;
        geom g;
        shape_geom(pl, &g);
        uint32_t pslot = w->shapes->ids.dense_slot[s];
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
    for (int ci = 0; ci < w->colliders->ids.count; ci++) {
        geom g;
        shape_geom_from_collider(&w->colliders->collider[ci].def, &g);
        uint32_t key = COLLIDER_KEY | w->colliders->ids.dense_slot[ci];
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

/* sensor.c: sensors. A sensor is a shape (sensor = true in its def) that detects the shapes overlapping
 * it and never pushes: the collide stage (contact.c) hands every broad-phase pair with a sensor side
 * here instead of making a contact manifold, so no solver sees it and the body passing through keeps
 * its momentum exactly. Two sensors do not detect each other.
 *
 * Overlap: the narrow phase's manifold of the two shapes with a point of positive depth (the exact
 * shapes interpenetrate; the contact skin SHAPE_TOUCH does not count), tested in the collide stage's
 * parallel narrow phase (sensor_test reads only), then listed in the broad phase's key order by its
 * serial pass (sensor_add); the merge walk of that list with the last one gives the
 * begin events (in the new list only) and the end events (in the old one only, which includes a shape
 * destroyed or a pair that left the broad phase). A pair whose two sides did not move (static, asleep)
 * keeps its state. Events accumulate over a step and are read after it, as the contact events. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "broadphase.h"
#include "collider.h"
#include "contact.h"
#include "ids.h"
#include "narrowphase.h"
#include "sensor.h"
#include "world_parts.h"

static sensor_set *set_get(imp_world *w)
{
    if (!w->sensors) {
        w->sensors = calloc(1, sizeof *w->sensors);
        if (!w->sensors) abort();
    }
    return w->sensors;
}

static void push(sensor_overlap **list, int *count, int *cap, sensor_overlap o)
{
    if (*count == *cap) {
        *cap = *cap ? 2 * *cap : 32;
        *list = ids_grow(*list, sizeof(sensor_overlap), *cap);
    }
    (*list)[(*count)++] = o;
}

bool sensor_key(const imp_world *w, uint32_t key)
{
    if (key & COLLIDER_KEY) return w->colliders->collider[w->colliders->ids.slot_dense[key & ~COLLIDER_KEY]].def.sensor;
    return w->shapes->shape[w->shapes->ids.slot_dense[key]].sensor;
}

/* the present overlap of the pair, or NULL (binary search: the list is in key order) */
static const sensor_overlap *find_now(const sensor_set *s, uint64_t key)
{
    int lo = 0, hi = s->now_count;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (s->now[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->now_count && s->now[lo].key == key ? &s->now[lo] : NULL;
}

int sensor_test(const imp_world *w, uint64_t pair_key, uint32_t ka, uint32_t kb, const geom *ga, const geom *gb, bool resting)
{
    if (sensor_key(w, ka) && sensor_key(w, kb)) return 0;
    if (resting) return w->sensors && find_now(w->sensors, pair_key); /* neither side moved: as it was */
    imp_contact c;
    memset(&c, 0, sizeof c);
    const int n = np_order(ga->type, gb->type) ? np_collide(gb, ga, &c, NULL) : np_collide(ga, gb, &c, NULL);
    for (int k = 0; k < n; k++)
        if (c.depth[k] > 0) return 1;
    return 0;
}

void sensor_add(imp_world *w, uint64_t pair_key, uint32_t ka, uint32_t kb)
{
    sensor_set *s = set_get(w);
    const bool sa = sensor_key(w, ka);
    sensor_overlap o = {pair_key, contacts_side(w, sa ? ka : kb), contacts_side(w, sa ? kb : ka)};
    push(&s->next, &s->next_count, &s->next_cap, o);
}

void sensors_finish(imp_world *w)
{
    sensor_set *s = w->sensors;
    if (!s) return;
    int i = 0, j = 0;
    while (i < s->next_count || j < s->now_count) {
        if (j >= s->now_count || (i < s->next_count && s->next[i].key < s->now[j].key))
            push(&s->begin, &s->begin_count, &s->begin_cap, s->next[i++]);
        else if (i >= s->next_count || s->now[j].key < s->next[i].key)
            push(&s->end, &s->end_count, &s->end_cap, s->now[j++]);
        else i++, j++;
    }
    sensor_overlap *t = s->now; s->now = s->next; s->next = t;
    int tc = s->now_cap; s->now_cap = s->next_cap; s->next_cap = tc;
    s->now_count = s->next_count;
    s->next_count = 0;
}

void sensors_clear_events(imp_world *w)
{
    if (w->sensors) w->sensors->begin_count = w->sensors->end_count = 0;
}

void sensors_free(imp_world *w)
{
    sensor_set *s = w->sensors;
    if (!s) return;
    free(s->now), free(s->next), free(s->begin), free(s->end);
    free(s);
    w->sensors = NULL;
}

/* ---- the public API -------------------------------------------------------------------------------- */

static const sensor_overlap *event(const imp_world *w, bool begin, int i)
{
    const sensor_set *s = w->sensors;
    if (!s || i < 0 || i >= (begin ? s->begin_count : s->end_count)) return NULL;
    return begin ? &s->begin[i] : &s->end[i];
}

int imp_world_sensor_begin_count(const imp_world *w) { return w->sensors ? w->sensors->begin_count : 0; }
int imp_world_sensor_end_count(const imp_world *w) { return w->sensors ? w->sensors->end_count : 0; }
bool imp_world_sensor_event(const imp_world *w, bool begin, int i, imp_contact_side *sensor, imp_contact_side *other)
{
    const sensor_overlap *o = event(w, begin, i);
    if (!o) return false;
    *sensor = o->sensor, *other = o->other;
    return true;
}

static bool same_id(imp_id a, imp_id b) { return a.index == b.index && a.generation == b.generation; }

int imp_world_overlaps(const imp_world *w, imp_contact_side sensor, imp_contact_side *out, int max)
{
    const sensor_set *s = w->sensors;
    int found = 0;
    for (int k = 0; s && k < s->now_count; k++) {
        const sensor_overlap *o = &s->now[k];
        if (!same_id(o->sensor.body, sensor.body) || !same_id(o->sensor.collider, sensor.collider) || o->sensor.shape != sensor.shape) continue;
        if (imp_id_is_null(o->other.body) ? !imp_collider_valid(w, o->other.collider) : !imp_body_valid(w, o->other.body)) continue;
        if (found < max) out[found] = o->other;
        found++;
    }
    return found;
}

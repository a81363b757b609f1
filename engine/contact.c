/* contact.c: the collide stage: place the shapes, broad phase, narrow phase, persistent contacts
 * and their begin/end events.
 *
 * Pairs are kept from step to step, sorted by key (the two sides' shape slots), so this step's pairs
 * and last step's are matched by one merge walk: a pair found again keeps its cached separating
 * axis (S0 7.1's witness), its age and its points' ids (a new point within 2 cm of an old one, both
 * measured in A's shape frame so that moving bodies keep them, takes its id and its impulses), so the
 * contact solver can warm start. A pair that touches now and did not is a begin event, one that
 * touched and does not (or whose shapes were destroyed, or that left the broad phase) an end event.
 * Events are collected during the step and read after it, as in Box2D v3. */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "broadphase.h"
#include "collider.h"
#include "contact.h"
#include "ids.h"
#include "imp_math.h"
#include "narrowphase.h"
#include "parallel.h"
#include "sensor.h"
#include "shape.h"
#include "world_parts.h"

#define POINT_MATCH 0.02 /* m: a point this close to last step's keeps its id */

static void grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return;
    int c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    *p = ids_grow(*p, elem, c);
    *cap = c;
}

const geom *contacts_geom(const imp_world *w, uint32_t key, geom *tmp)
{
    if (key & COLLIDER_KEY) {
        uint32_t slot = key & ~COLLIDER_KEY;
        shape_geom_from_collider(&w->colliders->collider[w->colliders->ids.slot_dense[slot]].def, tmp);
    } else shape_geom(&w->shapes->shape[w->shapes->ids.slot_dense[key]], tmp);
    return tmp;
}

static bool key_static(const imp_world *w, uint32_t key)
{
    if (key & COLLIDER_KEY) return true;
    const shape *sh = &w->shapes->shape[w->shapes->ids.slot_dense[key]];
    return w->bodies->body[bodies_dense(w, sh->body)].motion == IMP_FIXED;
}

/* a side that did not move in the step: a collider, a static body or a sleeping one (impulse.c) */
static bool key_resting(const imp_world *w, uint32_t key)
{
    if (key & COLLIDER_KEY) return true;
    const body *b = &w->bodies->body[bodies_dense(w, w->shapes->shape[w->shapes->ids.slot_dense[key]].body)];
    return b->motion == IMP_FIXED || b->asleep;
}

static void push_event(imp_contact_side **list, int *count, int *cap, imp_contact_side a, imp_contact_side b)
{
    grow((void **)list, cap, 2 * (*count + 1), sizeof(imp_contact_side));
    (*list)[2 * *count] = a, (*list)[2 * *count + 1] = b;
    (*count)++;
}

/* an end event carries the normal impulse of the pair's last solved step (contact + collision) */
static void end_event(contact_set *c, const manifold *om)
{
    double j = om->c.impact;
    for (int k = 0; k < om->c.count; k++) j += om->c.normal_impulse[k];
    grow((void **)&c->end_impulse, &c->end_val_cap, c->end_count + 1, sizeof(double));
    c->end_impulse[c->end_count] = j;
    push_event(&c->end, &c->end_count, &c->end_cap, om->c.a, om->c.b);
}

/* velocity of a contact side at world point p: v + omega x (p - x) */
static imp_vec3 side_point_velocity(const imp_world *w, imp_contact_side sd, imp_vec3 p)
{
    if (imp_id_is_null(sd.body)) return v3(0, 0, 0);
    int i = ids_lookup(&w->bodies->ids, sd.body);
    if (i < 0) return v3(0, 0, 0);
    imp_vec3 x = v3_load(w->bodies->state + BODY_DIM * i);
    return v3_add(imp_body_velocity(w, sd.body), v3_cross(imp_body_angular_velocity(w, sd.body), v3_sub(p, x)));
}

/* the approach speed of a new contact at its deepest point (>= 0): what its begin event carries */
static double contacts_approach_speed(const imp_world *w, const imp_contact *c)
{
    int k = 0;
    for (int i = 1; i < c->count; i++)
        if (c->depth[i] > c->depth[k]) k = i;
    if (c->count < 1) return 0;
    imp_vec3 p = c->points[k];
    double vn = v3_dot(c->normal, v3_sub(side_point_velocity(w, c->a, p), side_point_velocity(w, c->b, p)));
    return vn < 0 ? -vn : 0;
}

/* one chunk of the narrow phase: each candidate pair in A-B order, and its manifold in its own slot
 * of next_manifolds (the pair's old manifold copied when neither side moved); chunks write disjoint
 * pairs and slots, so the result does not depend on which thread ran them */
typedef struct collide_job {
    imp_world *w;
    const int *old;          /* per candidate: last step's pair with its key, or -1 */
    int *touching;           /* per candidate: its points (0: apart); -1: the old manifold kept; a sensor's
                                pair: TOUCH_SENSOR_IN or TOUCH_SENSOR_OUT (no manifold either way) */
} collide_job;
enum { TOUCH_SENSOR_OUT = -3, TOUCH_SENSOR_IN = -2 };

static void collide_part(void *ctx, int chunk)
{
    const collide_job *jb = ctx;
    imp_world *w = jb->w;
    contact_set *c = w->contacts;
    const int n = c->next_pair_count;
    int lo, hi;
    par_range(n, chunk, &lo, &hi);
    for (int k = lo; k < hi; k++) {
        pair *p = &c->next_pairs[k];
        const pair *old = jb->old[k] >= 0 ? &c->pairs[jb->old[k]] : NULL;
        const manifold *om = old && old->man >= 0 ? &c->manifolds[old->man] : NULL;
        geom ga, gb;
        contacts_geom(w, p->a, &ga), contacts_geom(w, p->b, &gb);
        /* A is the lower shape type; between equal types the one that moves is A (ground is B) */
        if (np_order(ga.type, gb.type) || (ga.type == gb.type && key_static(w, p->a) && !key_static(w, p->b))) {
            uint32_t t = p->a; p->a = p->b; p->b = t;
            geom tg = ga; ga = gb; gb = tg;
        }
        p->witness = old ? old->witness : -1;
        p->man = -1;
        if (sensor_key(w, p->a) || sensor_key(w, p->b)) { /* a sensor's pair: an overlap, never a manifold (sensor.c) */
            const int in = sensor_test(w, p->key, p->a, p->b, &ga, &gb, key_resting(w, p->a) && key_resting(w, p->b));
            jb->touching[k] = in > 0 ? TOUCH_SENSOR_IN : TOUCH_SENSOR_OUT;
            continue;
        }
        manifold *m = &c->next_manifolds[k];
        if (om && key_resting(w, p->a) && key_resting(w, p->b)) {
            /* neither side moved (static or asleep): last step's manifold still holds, impulses and all */
            *m = *om;
            m->c.age++;
            jb->touching[k] = -1;
            continue;
        }
        const int count = np_collide(&ga, &gb, &m->c, &p->witness);
        jb->touching[k] = count > 0 ? count : 0;
        if (count <= 0) continue;
        m->c.a = bp_key_side(w, p->a), m->c.b = bp_key_side(w, p->b);
        m->c.age = om ? om->c.age + 1 : 0;
        m->c.impact = om ? om->c.impact : 0;
        m->c.impact_speed = om ? om->c.impact_speed : 0;
        /* each point takes the id and the impulses of last step's point within POINT_MATCH of it in A's
         * frame (the solver's warm start follows the point); 0: a new point, numbered in candidate
         * order after the chunks */
        for (int i = 0; i < count; i++) {
            m->local[i] = m3_mul_tv(ga.R, v3_sub(m->c.points[i], ga.p));
            uint32_t id = 0;
            m->c.normal_impulse[i] = 0, m->c.tangent_impulse[i] = v3(0, 0, 0);
            for (int q = 0; om && q < om->c.count && !id; q++) {
                imp_vec3 d = v3_sub(om->local[q], m->local[i]);
                if (v3_dot(d, d) < POINT_MATCH * POINT_MATCH) {
                    id = om->c.point_id[q];
                    m->c.normal_impulse[i] = om->c.normal_impulse[q], m->c.tangent_impulse[i] = om->c.tangent_impulse[q];
                }
            }
            m->c.point_id[i] = id;
        }
    }
}

/* The collide stage: shapes placed, the broad phase's candidates matched to last step's pairs by key,
 * the narrow phase on both threads (with each point's id and warm start carried over from last step's
 * manifold), then in candidate order the touching pairs' manifolds packed, their new points numbered
 * and the events raised */
/* the shapes of bodies that may have moved placed at their bodies' states (each shape its own: both
 * threads) */
static void place_part(void *ctx, int chunk)
{
    imp_world *w = ctx;
    int lo, hi;
    par_range(w->shapes->ids.count, chunk, &lo, &hi);
    for (int s = lo; s < hi; s++) {
        shape *sh = &w->shapes->shape[s];
        const body *b = &w->bodies->body[bodies_dense(w, sh->body)];
        if ((b->motion != IMP_FIXED && !b->asleep) || sh->type == IMP_SHAPE_PLANE) bodies_place_shape(w, sh);
    }
}

void contacts_update(imp_world *w)
{
    contact_set *c = w->contacts;
    par_for(place_part, w, PAR_CHUNKS);
    bp_find_pairs(w);
    const broadphase *bp = w->broadphase;
    const int nc = bp->cand_count;
    grow((void **)&c->next_pairs, &c->next_pair_cap, nc, sizeof(pair));
    grow((void **)&c->next_manifolds, &c->next_manifold_cap, nc, sizeof(manifold));
    grow((void **)&c->cand_old, &c->cand_cap, 2 * nc, sizeof(int));
    int *old = c->cand_old, *touching = c->cand_old + nc;
    c->next_pair_count = nc;
    for (int k = 0, j = 0; k < nc; k++) {
        pair *p = &c->next_pairs[k];
        p->key = bp->cand[k].key, p->a = bp->cand[k].a, p->b = bp->cand[k].b;
        while (j < c->pair_count && c->pairs[j].key < p->key) j++;
        old[k] = j < c->pair_count && c->pairs[j].key == p->key ? j++ : -1;
    }
    collide_job jb = {w, old, touching};
    par_for(collide_part, &jb, PAR_CHUNKS);
    c->next_manifold_count = 0;
    int j = 0;
    for (int k = 0; k < nc; k++) {
        pair *p = &c->next_pairs[k];
        for (; j < c->pair_count && c->pairs[j].key < p->key; j++)
            if (c->pairs[j].man >= 0) end_event(c, &c->manifolds[c->pairs[j].man]);
        const manifold *om = old[k] >= 0 && c->pairs[old[k]].man >= 0 ? &c->manifolds[c->pairs[old[k]].man] : NULL;
        if (old[k] >= 0) j++;
        if (touching[k] <= TOUCH_SENSOR_IN) { /* a sensor's pair: its overlap, in key order (sensor.c) */
            if (touching[k] == TOUCH_SENSOR_IN) sensor_add(w, p->key, p->a, p->b);
            continue;
        }
        if (touching[k] == 0) {
            if (om) end_event(c, om);
            continue;
        }
        p->man = c->next_manifold_count++;
        manifold *m = &c->next_manifolds[p->man];
        if (p->man != k) *m = c->next_manifolds[k];
        if (touching[k] < 0) continue; /* kept whole */
        for (int i = 0; i < touching[k]; i++)
            if (!m->c.point_id[i]) m->c.point_id[i] = ++c->next_point_id;
        if (!om) {
            grow((void **)&c->begin_speed, &c->begin_val_cap, c->begin_count + 1, sizeof(double));
            c->begin_speed[c->begin_count] = contacts_approach_speed(w, &m->c);
            push_event(&c->begin, &c->begin_count, &c->begin_cap, m->c.a, m->c.b);
        }
    }
    for (; j < c->pair_count; j++)
        if (c->pairs[j].man >= 0) end_event(c, &c->manifolds[c->pairs[j].man]);
    sensors_finish(w);
    /* this step's pairs and manifolds become the persistent ones */
    pair *t = c->pairs; c->pairs = c->next_pairs; c->next_pairs = t;
    int tc = c->pair_cap; c->pair_cap = c->next_pair_cap; c->next_pair_cap = tc;
    c->pair_count = c->next_pair_count;
    c->next_pair_count = 0;
    manifold *tm = c->manifolds; c->manifolds = c->next_manifolds; c->next_manifolds = tm;
    tc = c->manifold_cap; c->manifold_cap = c->next_manifold_cap; c->next_manifold_cap = tc;
    c->manifold_count = c->next_manifold_count;
    c->next_manifold_count = 0;
    c->body_edits = w->bodies->edits, c->collider_edits = w->colliders->edits;
}

bool contacts_current(const imp_world *w)
{
    const contact_set *c = w->contacts;
    return c->body_edits == w->bodies->edits && c->collider_edits == w->colliders->edits;
}

void contacts_clear_events(imp_world *w)
{
    w->contacts->begin_count = w->contacts->end_count = 0;
    sensors_clear_events(w);
}

void imp_world_collide(imp_world *w)
{
    if (w->locked) return;
    contacts_clear_events(w);
    contacts_update(w);
}

void contacts_free(imp_world *w)
{
    contact_set *c = w->contacts;
    if (!c) return;
    free(c->next_pairs), free(c->pairs), free(c->next_manifolds), free(c->manifolds), free(c->begin), free(c->end), free(c->begin_speed), free(c->end_impulse), free(c->cand_old);
    free(c);
    w->contacts = NULL;
}

int imp_world_contact_count(const imp_world *w) { return w->contacts->manifold_count; }
const imp_contact *imp_world_contact(const imp_world *w, int i)
{
    if (i < 0 || i >= w->contacts->manifold_count) return NULL;
    return &w->contacts->manifolds[i].c;
}
int imp_world_begin_count(const imp_world *w) { return w->contacts->begin_count; }
int imp_world_end_count(const imp_world *w) { return w->contacts->end_count; }
void imp_world_begin_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    *a = w->contacts->begin[2 * i], *b = w->contacts->begin[2 * i + 1];
}
void imp_world_end_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    *a = w->contacts->end[2 * i], *b = w->contacts->end[2 * i + 1];
}
double imp_world_begin_speed(const imp_world *w, int i) { return i >= 0 && i < w->contacts->begin_count ? w->contacts->begin_speed[i] : 0; }
double imp_world_end_impulse(const imp_world *w, int i) { return i >= 0 && i < w->contacts->end_count ? w->contacts->end_impulse[i] : 0; }
int imp_world_pair_count(const imp_world *w) { return w->contacts->pair_count; }
/* the sides of a pair are filled in only for touching pairs during the step; the others are named
 * here from their keys, if their shapes still exist */
static imp_contact_side side_of_key(const imp_world *w, uint32_t key)
{
    imp_contact_side none;
    memset(&none, 0, sizeof none);
    const idtable *t = (key & COLLIDER_KEY) ? &w->colliders->ids : &w->shapes->ids;
    uint32_t slot = key & ~COLLIDER_KEY;
    if (slot >= (uint32_t)t->slots || !(t->slot_gen[slot] & 1u)) return none;
    return bp_key_side(w, key);
}

void imp_world_pair(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    const pair *p = &w->contacts->pairs[i];
    if (p->man >= 0) *a = w->contacts->manifolds[p->man].c.a, *b = w->contacts->manifolds[p->man].c.b;
    else *a = side_of_key(w, p->a), *b = side_of_key(w, p->b);
}

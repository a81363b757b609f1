/* contact.c: the collide stage: place the shapes, broad phase, narrow phase, persistent contacts
 * and their begin/end events.
 *
 * Pairs are kept from step to step, sorted by key (the two sides' shape slots), so this step's pairs
 * and last step's are matched by one merge walk: a pair found again keeps its cached separating
 * axis (S0 7.1's witness), its age and its points' ids (a new point within 2 cm of an old one, both
 * measured in A's shape frame so that moving bodies keep them, takes its id), so a later contact solver can warm start. A pair that touches now and did not is a begin
 * event, one that touched and does not (or whose shapes were destroyed, or that left the broad
 * phase) an end event. Events are collected during the step and read after it, as in Box2D v3. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define POINT_MATCH 0.02 /* m: a point this close to last step's keeps its id */

static void grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return;
    int c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    *p = ids_grow(*p, elem, c);
    *cap = c;
}

imp_contact_side contacts_side(const imp_world *w, uint32_t key)
{
    imp_contact_side s;
    memset(&s, 0, sizeof s);
    if (key & COLLIDER_KEY) {
        uint32_t slot = key & ~COLLIDER_KEY;
        s.collider = ids_of(&w->collider_ids, (int)w->collider_ids.slot_dense[slot]);
        s.shape = 0;
        return s;
    }
    const shape *sh = &w->shapes[w->shape_ids.slot_dense[key]];
    s.body = ids_of(&w->body_ids, bodies_dense(w, sh->body));
    s.shape = sh->index;
    return s;
}

const geom *contacts_geom(const imp_world *w, uint32_t key, geom *tmp)
{
    if (key & COLLIDER_KEY) {
        uint32_t slot = key & ~COLLIDER_KEY;
        shape_geom_from_collider(&w->colliders[w->collider_ids.slot_dense[slot]].def, tmp);
    } else shape_geom(&w->shapes[w->shape_ids.slot_dense[key]], tmp);
    return tmp;
}

static bool key_static(const imp_world *w, uint32_t key)
{
    if (key & COLLIDER_KEY) return true;
    const shape *sh = &w->shapes[w->shape_ids.slot_dense[key]];
    return w->bodies[bodies_dense(w, sh->body)].motion == IMP_FIXED;
}

/* a side that did not move in the step: a collider, a static body or a sleeping one (impulse.c) */
static bool key_resting(const imp_world *w, uint32_t key)
{
    if (key & COLLIDER_KEY) return true;
    const body *b = &w->bodies[bodies_dense(w, w->shapes[w->shape_ids.slot_dense[key]].body)];
    return b->motion == IMP_FIXED || b->asleep;
}

static void push_event(imp_contact_side **list, int *count, int *cap, imp_contact_side a, imp_contact_side b)
{
    grow((void **)list, cap, 2 * (*count + 1), sizeof(imp_contact_side));
    (*list)[2 * *count] = a, (*list)[2 * *count + 1] = b;
    (*count)++;
}

/* an end event carries the normal impulse of the pair's last solved step (contact + collision) */
static void end_event(collision_state *c, const manifold *om)
{
    double j = om->c.impact;
    for (int k = 0; k < om->c.count; k++) j += om->c.normal_impulse[k];
    grow((void **)&c->end_impulse, &c->end_val_cap, c->end_count + 1, sizeof(double));
    c->end_impulse[c->end_count] = j;
    push_event(&c->end, &c->end_count, &c->end_cap, om->c.a, om->c.b);
}

void contacts_update(imp_world *w)
{
    collision_state *c = &w->col;
    for (int s = 0; s < w->shape_ids.count; s++) {
        shape *sh = &w->shapes[s];
        const body *b = &w->bodies[bodies_dense(w, sh->body)];
        if ((b->motion != IMP_FIXED && !b->asleep) || sh->type == IMP_SHAPE_PLANE) shape_update(w, sh);
    }
    bp_find_pairs(w);
    grow((void **)&c->pairs, &c->pair_cap, c->cand_count, sizeof(pair));
    c->pair_count = c->cand_count;
    c->begin_count = c->end_count = c->man_count = 0;
    int j = 0;
    for (int k = 0; k < c->pair_count; k++) {
        pair *p = &c->pairs[k];
        p->key = c->cand[k].key, p->a = c->cand[k].a, p->b = c->cand[k].b;
        while (j < c->prev_count && c->prev[j].key < p->key) {
            if (c->prev[j].man >= 0) end_event(c, &c->prev_mans[c->prev[j].man]);
            j++;
        }
        const pair *old = (j < c->prev_count && c->prev[j].key == p->key) ? &c->prev[j++] : NULL;
        const manifold *om = old && old->man >= 0 ? &c->prev_mans[old->man] : NULL;
        geom ga, gb;
        contacts_geom(w, p->a, &ga), contacts_geom(w, p->b, &gb);
        /* A is the lower shape type; between equal types the one that moves is A (ground is B) */
        if (np_order(ga.type, gb.type) || (ga.type == gb.type && key_static(w, p->a) && !key_static(w, p->b))) {
            uint32_t t = p->a; p->a = p->b; p->b = t;
            geom tg = ga; ga = gb; gb = tg;
        }
        p->witness = old ? old->witness : -1;
        p->man = -1;
        if (c->man_count == c->man_cap) grow((void **)&c->mans, &c->man_cap, c->man_count + 1, sizeof(manifold));
        manifold *m = &c->mans[c->man_count];
        if (om && key_resting(w, p->a) && key_resting(w, p->b)) {
            /* neither side moved (static or asleep): last step's manifold still holds, impulses and all */
            *m = *om;
            m->c.age++;
            p->man = c->man_count++;
            continue;
        }
        int n = np_collide(&ga, &gb, &m->c, &p->witness);
        if (n > 0) {
            p->man = c->man_count++;
            m->c.a = contacts_side(w, p->a), m->c.b = contacts_side(w, p->b);
            m->c.age = om ? om->c.age + 1 : 0;
            m->c.impact = om ? om->c.impact : 0;
            m->c.impact_speed = om ? om->c.impact_speed : 0;
            for (int i = 0; i < n; i++) {
                m->local[i] = m3_mul_tv(ga.R, v3_sub(m->c.points[i], ga.p));
                uint32_t id = 0;
                m->c.normal_impulse[i] = 0, m->c.tangent_impulse[i] = v3(0, 0, 0);
                for (int q = 0; om && q < om->c.count && !id; q++) {
                    imp_vec3 d = v3_sub(om->local[q], m->local[i]);
                    if (v3_dot(d, d) < POINT_MATCH * POINT_MATCH) {
                        id = om->c.point_id[q]; /* the solver's impulses follow the point (warm start) */
                        m->c.normal_impulse[i] = om->c.normal_impulse[q], m->c.tangent_impulse[i] = om->c.tangent_impulse[q];
                    }
                }
                m->c.point_id[i] = id ? id : ++c->next_point_id;
            }
            if (!om) {
                grow((void **)&c->begin_speed, &c->begin_val_cap, c->begin_count + 1, sizeof(double));
                c->begin_speed[c->begin_count] = impulse_approach_speed(w, &m->c);
                push_event(&c->begin, &c->begin_count, &c->begin_cap, m->c.a, m->c.b);
            }
        } else if (om) end_event(c, om);
    }
    for (; j < c->prev_count; j++)
        if (c->prev[j].man >= 0) end_event(c, &c->prev_mans[c->prev[j].man]);
    /* this step's pairs and manifolds become the persistent ones */
    pair *t = c->prev; c->prev = c->pairs; c->pairs = t;
    int tc = c->prev_cap; c->prev_cap = c->pair_cap; c->pair_cap = tc;
    c->prev_count = c->pair_count;
    c->pair_count = 0;
    manifold *tm = c->prev_mans; c->prev_mans = c->mans; c->mans = tm;
    tc = c->prev_man_cap; c->prev_man_cap = c->man_cap; c->man_cap = tc;
    c->prev_man_count = c->man_count;
    c->man_count = 0;
}

void imp_world_collide(imp_world *w)
{
    if (w->locked) return;
    contacts_update(w);
}

void contacts_free(imp_world *w)
{
    collision_state *c = &w->col;
    free(c->cand), free(c->cand_tmp), free(c->radix), free(c->order), free(c->boxes), free(c->cells), free(c->cells_tmp), free(c->pairs), free(c->prev), free(c->mans), free(c->prev_mans), free(c->begin), free(c->end), free(c->begin_speed), free(c->end_impulse);
    for (int a = 0; a < 3; a++) free(c->ends[a]);
    free(c->set), free(c->dead);
    memset(c, 0, sizeof *c);
}

int imp_world_contact_count(const imp_world *w) { return w->col.prev_man_count; }
const imp_contact *imp_world_contact(const imp_world *w, int i)
{
    if (i < 0 || i >= w->col.prev_man_count) return NULL;
    return &w->col.prev_mans[i].c;
}
int imp_world_begin_count(const imp_world *w) { return w->col.begin_count; }
int imp_world_end_count(const imp_world *w) { return w->col.end_count; }
void imp_world_begin_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    *a = w->col.begin[2 * i], *b = w->col.begin[2 * i + 1];
}
void imp_world_end_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    *a = w->col.end[2 * i], *b = w->col.end[2 * i + 1];
}
double imp_world_begin_speed(const imp_world *w, int i) { return i >= 0 && i < w->col.begin_count ? w->col.begin_speed[i] : 0; }
double imp_world_end_impulse(const imp_world *w, int i) { return i >= 0 && i < w->col.end_count ? w->col.end_impulse[i] : 0; }
int imp_world_pair_count(const imp_world *w) { return w->col.prev_count; }
/* the sides of a pair are filled in only for touching pairs during the step; the others are named
 * here from their keys, if their shapes still exist */
static imp_contact_side side_of_key(const imp_world *w, uint32_t key)
{
    imp_contact_side none;
    memset(&none, 0, sizeof none);
    const idtable *t = (key & COLLIDER_KEY) ? &w->collider_ids : &w->shape_ids;
    uint32_t slot = key & ~COLLIDER_KEY;
    if (slot >= (uint32_t)t->slots || !(t->slot_gen[slot] & 1u)) return none;
    return contacts_side(w, key);
}

void imp_world_pair(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b)
{
    const pair *p = &w->col.prev[i];
    if (p->man >= 0) *a = w->col.prev_mans[p->man].c.a, *b = w->col.prev_mans[p->man].c.b;
    else *a = side_of_key(w, p->a), *b = side_of_key(w, p->b);
}

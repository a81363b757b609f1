/* snapshot.c: the whole state of a world in and out (rewind, replay, files), and the undo of a
 * failing step.
 *
 * A snapshot is one flat run of bytes, the same in memory and in a file: a section per part of the
 * world (world_parts.h), each written and read by its own pair of functions below, in the order of
 * the table `parts`. A part saves what a later step reads of it: its objects with their ids (the id
 * tables whole, free lists and generations included, so handles stay valid or stale exactly as they
 * were), and every value a step carries to the next (the contacts' points with their ids and
 * impulses, the solvers' warm starts and adaptive step sizes, sleep timers, the counters that say
 * what a cache was built for). What each step rebuilds from those (the broad phase's sorted lists,
 * the joints' and the solvers' tables, the preconditioners' patterns) is not saved: the specs that
 * restore a snapshot into a fresh world and step it bit for bit as the original are the proof.
 * Adding state to a part means adding it to that part's pair of functions (and bumping
 * IMP_SNAPSHOT_VERSION); a new part is a new row of `parts`.
 *
 * Restoring builds a new world from the bytes and swaps it into the world given, in place (its
 * address, which handles and callbacks know, stays), then destroys the old contents: every cache
 * starts empty, so a restore into the world that took the snapshot and one into a fresh world are
 * the same operation. A snapshot that cannot be restored leaves the world untouched.
 *
 * The bytes hold no pointers. Callbacks (force fields, "function" behaviours and constraints, curve
 * particles, the world's pre_solve) are kept beside them with the world they came from, retained through the world's
 * retain hook while the snapshot lives. Restored into that world, an object gets its callback back
 * (a field destroyed after the snapshot comes back with its function); restored into another world,
 * or loaded from a file, an object takes the callback of the object with the same id in the world it
 * is restored into, and a snapshot whose callbacks have no such counterpart is refused.
 *
 * A file is a header (magic, format version, the layout signature of the structures written whole,
 * the length and an FNV-1a checksum of the bytes) followed by the bytes; another version or layout,
 * or bytes that do not match their checksum, are refused before anything is read. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "broadphase.h"
#include "cloth.h"
#include "collider.h"
#include "contact.h"
#include "contact_qp.h"
#include "curve.h"
#include "forces.h"
#include "ids.h"
#include "implicit.h"
#include "impulse.h"
#include "joint_force.h"
#include "joint_internal.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_contact.h"
#include "particle_system.h"
#include "particles.h"
#include "presolve.h"
#include "rotation.h"
#include "sensor.h"
#include "shape.h"
#include "snapshot.h"
#include "tinkertoy.h"
#include "world_parts.h"

/* ---- bytes out ------------------------------------------------------------------------------------------ */

typedef struct writer {
    unsigned char *data;
    size_t len, cap;
} writer;

static void put(writer *o, const void *p, size_t n)
{
    if (!n) return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n) cap *= 2;
        o->data = ids_grow(o->data, 1, cap);
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

static void put_u32(writer *o, uint32_t v) { put(o, &v, sizeof v); }
static void put_i64(writer *o, int64_t v) { put(o, &v, sizeof v); }
static void put_u64(writer *o, uint64_t v) { put(o, &v, sizeof v); }
static void put_f64(writer *o, double v) { put(o, &v, sizeof v); }

/* a count, then count elements */
static void put_array(writer *o, const void *p, size_t elem, int count)
{
    put_u32(o, (uint32_t)count);
    if (count > 0) put(o, p, elem * (size_t)count);
}

/* an id table whole: its slots' generations and free list make handles valid or stale as they were */
static void put_ids(writer *o, const idtable *t)
{
    put_u32(o, (uint32_t)t->slots), put_u32(o, (uint32_t)t->count), put_u32(o, (uint32_t)t->free_head);
    if (t->slots) put(o, t->slot_dense, sizeof(uint32_t) * (size_t)t->slots), put(o, t->slot_gen, sizeof(uint32_t) * (size_t)t->slots);
    if (t->count) put(o, t->dense_slot, sizeof(uint32_t) * (size_t)t->count);
}

/* a section: its tag and length, so a reader can tell where each part's bytes end */
static size_t section_begin(writer *o, const char *tag)
{
    put(o, tag, 4);
    size_t at = o->len;
    put_u64(o, 0);
    return at;
}

static void section_end(writer *o, size_t at)
{
    uint64_t n = o->len - at - sizeof(uint64_t);
    memcpy(o->data + at, &n, sizeof n);
}

/* ---- bytes in ------------------------------------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *data;
    size_t len, pos;
    bool failed;
} reader;

static bool get(reader *in, void *p, size_t n)
{
    if (in->failed || n > in->len - in->pos) {
        in->failed = true;
        if (n) memset(p, 0, n);
        return false;
    }
    if (n) memcpy(p, in->data + in->pos, n);
    in->pos += n;
    return true;
}

static uint32_t get_u32(reader *in) { uint32_t v; get(in, &v, sizeof v); return v; }
static int64_t get_i64(reader *in) { int64_t v; get(in, &v, sizeof v); return v; }
static uint64_t get_u64(reader *in) { uint64_t v; get(in, &v, sizeof v); return v; }
static double get_f64(reader *in) { double v; get(in, &v, sizeof v); return v; }

/* a count, then count elements of elem bytes, into new memory (NULL when there are none); *count
 * receives the count */
static void *get_array(reader *in, size_t elem, int *count)
{
    uint32_t n = get_u32(in);
    *count = 0;
    if (in->failed || n > (in->len - in->pos) / elem || n > (uint32_t)INT32_MAX) {
        in->failed = true;
        return NULL;
    }
    if (n == 0) return NULL;
    void *p = ids_grow(NULL, elem, n);
    get(in, p, elem * n);
    *count = (int)n;
    return p;
}

/* an id table as put_ids wrote it, into an empty one; its dense capacity is its count */
static void get_ids(reader *in, idtable *t)
{
    uint32_t slots = get_u32(in), count = get_u32(in), free_head = get_u32(in);
    if (in->failed || count > slots || slots > (in->len - in->pos) / 8) {
        in->failed = true;
        return;
    }
    memset(t, 0, sizeof *t);
    if (slots) {
        t->slot_dense = ids_grow(NULL, sizeof(uint32_t), slots), t->slot_gen = ids_grow(NULL, sizeof(uint32_t), slots);
        get(in, t->slot_dense, sizeof(uint32_t) * slots), get(in, t->slot_gen, sizeof(uint32_t) * slots);
    }
    if (count) {
        t->dense_slot = ids_grow(NULL, sizeof(uint32_t), count);
        get(in, t->dense_slot, sizeof(uint32_t) * count);
        for (uint32_t i = 0; i < count && !in->failed; i++)
            if (t->dense_slot[i] >= slots || t->slot_dense[t->dense_slot[i]] != i) in->failed = true;
    }
    t->slots = (int)slots, t->count = t->cap = (int)count, t->free_head = (int)free_head;
}

static bool section_open(reader *in, const char *tag, reader *sub)
{
    char got[4];
    get(in, got, 4);
    uint64_t n = get_u64(in);
    if (in->failed || memcmp(got, tag, 4) || n > in->len - in->pos) {
        in->failed = true;
        return false;
    }
    *sub = (reader){in->data + in->pos, (size_t)n, 0, false};
    in->pos += n;
    return true;
}

/* ---- callbacks ------------------------------------------------------------------------------------------ */

enum { CB_FIELD, CB_BEHAVIOR, CB_CONSTRAINT, CB_CURVE, CB_PRESOLVE };
static const char *const CB_NAMES[] = {"force field", "\"function\" behaviour", "\"function\" constraint", "curve particle",
                                       "pre_solve callback"};

/* a script's callback of one object, as its def holds it */
typedef struct callback {
    void (*fn)(void);
    void *user;
    void (*release)(void *user);
} callback;

/* an object with a callback: which kind, its id (a curve particle: its particle's) */
typedef struct callback_key {
    uint32_t kind;
    imp_id id;
} callback_key;

struct imp_snapshot {
    unsigned char *data;            /* the sections                                                   */
    size_t len;
    double time;
    long steps;
    uint64_t world_serial;          /* the world it was taken from; 0: loaded from a file            */
    callback_key *keys;             /* its objects with callbacks, in the order the sections meet them */
    callback *callbacks;            /* their callbacks (none for a loaded file)                       */
    int callback_count;
    bool owned;                     /* the callbacks were retained (the world had a retain hook)     */
};

/* the objects with callbacks, in the order the sections meet them: behaviours, fields (FORC), curve
 * particles (CURV), constraints (TINK), the world's pre_solve callback (PRES, its id null) */
static int callbacks_of(const imp_world *w, callback_key *keys, callback *cbs)
{
    int n = 0;
    const force_store *f = w->forces;
    for (int k = 0; k < f->behavior_ids.count; k++) {
        const imp_behavior_def *d = &f->behaviors[k].def;
        if (d->kind != IMP_BEHAVE_CALLBACK) continue;
        if (keys) keys[n] = (callback_key){CB_BEHAVIOR, ids_of(&f->behavior_ids, k)};
        if (cbs) cbs[n] = (callback){(void (*)(void))d->fn, d->user, d->release};
        n++;
    }
    for (int k = 0; k < f->field_ids.count; k++, n++) {
        if (keys) keys[n] = (callback_key){CB_FIELD, ids_of(&f->field_ids, k)};
        if (cbs) cbs[n] = (callback){(void (*)(void))f->fields[k].def.fn, f->fields[k].def.user, f->fields[k].def.release};
    }
    for (int k = 0; w->curves && k < w->curves->count; k++, n++) {
        const curve *cv = &w->curves->curve[k];
        if (keys) keys[n] = (callback_key){CB_CURVE, ids_of(&w->particles->ids, particles_slot_dense(w, cv->slot))};
        if (cbs) cbs[n] = (callback){(void (*)(void))cv->def.fn, cv->def.user, cv->def.release};
    }
    for (int k = 0; w->tinker && k < w->tinker->ids.count; k++) {
        const imp_constraint_def *d = &w->tinker->constraint[k].def;
        if (d->kind != IMP_CONSTRAINT_CALLBACK) continue;
        if (keys) keys[n] = (callback_key){CB_CONSTRAINT, ids_of(&w->tinker->ids, k)};
        if (cbs) cbs[n] = (callback){(void (*)(void))d->fn, d->user, d->release};
        n++;
    }
    if (w->presolve && w->presolve->fn) {
        if (keys) keys[n] = (callback_key){CB_PRESOLVE, {0, 0}};
        if (cbs) cbs[n] = (callback){(void (*)(void))w->presolve->fn, w->presolve->user, w->presolve->release};
        n++;
    }
    return n;
}

/* the callback of `key` among a world's objects with callbacks (keys, cbs: n of them), or false */
static bool callback_find(const callback_key *keys, const callback *cbs, int n, callback_key key, callback *out)
{
    for (int k = 0; k < n; k++)
        if (keys[k].kind == key.kind && keys[k].id.index == key.id.index && keys[k].id.generation == key.id.generation) {
            *out = cbs[k];
            return true;
        }
    return false;
}

/* what a load needs besides the bytes: the callbacks, resolved before anything is built, taken in
 * order as the sections meet their objects, each held for the object that takes it (the world's retain
 * hook: destroying the world, restored or not, lets go of exactly those) */
typedef struct load_ctx {
    const callback *callbacks;
    int count, next;
    void (*retain)(void *user);
} load_ctx;

static callback next_callback(load_ctx *ctx, reader *in)
{
    if (ctx->next >= ctx->count) {
        in->failed = true;
        return (callback){NULL, NULL, NULL};
    }
    callback cb = ctx->callbacks[ctx->next++];
    if (ctx->retain) ctx->retain(cb.user);
    return cb;
}

/* ---- the parts ------------------------------------------------------------------------------------------ */

/* the world's own: settings and clock. The last step's profile is a measurement of the machine that
 * ran it, not state: two snapshots of the same state are the same bytes, and a restored world's
 * profile is empty until it steps */
static void world_save(writer *o, const imp_world *w)
{
    put(o, &w->settings, sizeof w->settings);
    put_f64(o, w->time), put_i64(o, w->steps);
}

static void world_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    get(in, &w->settings, sizeof w->settings);
    w->time = get_f64(in), w->steps = (long)get_i64(in);
    memset(&w->profile, 0, sizeof w->profile);
}

/* an ODE solver's settings, adaptive step size and counters (its scratch is not state) */
static void solver_save(writer *o, const imp_ode_solver *s)
{
    put_u32(o, (uint32_t)s->method), put_u32(o, (uint32_t)s->base);
    put_f64(o, s->tolerance), put_f64(o, s->h), put_f64(o, s->h_min), put_f64(o, s->max_growth);
    put_i64(o, s->steps), put_i64(o, s->rejected), put_i64(o, s->evaluations);
}

static void solver_load(reader *in, imp_ode_solver *s)
{
    s->method = (imp_method)get_u32(in), s->base = (imp_method)get_u32(in);
    s->tolerance = get_f64(in), s->h = get_f64(in), s->h_min = get_f64(in), s->max_growth = get_f64(in);
    s->steps = (long)get_i64(in), s->rejected = (long)get_i64(in), s->evaluations = (long)get_i64(in);
    if ((unsigned)s->method >= IMP_METHOD_COUNT || (unsigned)s->base >= IMP_METHOD_COUNT) in->failed = true;
}

static void solvers_save(writer *o, const imp_world *w)
{
    solver_save(o, &w->particle_system->solver);
    solver_save(o, &w->body_solver);
}

static void solvers_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    solver_load(in, &w->particle_system->solver);
    solver_load(in, &w->body_solver);
}

/* particles: the store, dense */
static void particles_save(writer *o, const imp_world *w)
{
    const particle_store *p = w->particles;
    const int n = p->ids.count;
    put_ids(o, &p->ids);
    put(o, p->x, 3 * sizeof(double) * (size_t)n), put(o, p->v, 3 * sizeof(double) * (size_t)n);
    put(o, p->mass, sizeof(double) * (size_t)n), put(o, p->inv_mass, sizeof(double) * (size_t)n);
    put(o, p->radius, sizeof(double) * (size_t)n), put(o, p->motion, (size_t)n), put(o, p->color, 4 * sizeof(float) * (size_t)n);
    put(o, p->restitution, sizeof(double) * (size_t)n), put(o, p->friction, sizeof(double) * (size_t)n);
    put_u64(o, p->topology), put_u64(o, p->edits);
}

static void particles_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    particle_store *p = w->particles;
    idtable ids;
    get_ids(in, &ids);
    const size_t n = (size_t)ids.count;
    const size_t per = 11 * sizeof(double) + 1 + 4 * sizeof(float); /* what follows, per particle */
    if (in->failed || n > (in->len - in->pos) / per) {
        ids_free(&ids);
        in->failed = true;
        return;
    }
    p->ids = ids;
    p->cap = ids.count;
    if (n) {
        p->x = ids_grow(NULL, 3 * sizeof(double), n), p->v = ids_grow(NULL, 3 * sizeof(double), n);
        p->mass = ids_grow(NULL, sizeof(double), n), p->inv_mass = ids_grow(NULL, sizeof(double), n);
        p->radius = ids_grow(NULL, sizeof(double), n), p->motion = ids_grow(NULL, 1, n), p->color = ids_grow(NULL, 4 * sizeof(float), n);
        p->restitution = ids_grow(NULL, sizeof(double), n), p->friction = ids_grow(NULL, sizeof(double), n);
    }
    get(in, p->x, 3 * sizeof(double) * n), get(in, p->v, 3 * sizeof(double) * n);
    get(in, p->mass, sizeof(double) * n), get(in, p->inv_mass, sizeof(double) * n);
    get(in, p->radius, sizeof(double) * n), get(in, p->motion, n), get(in, p->color, 4 * sizeof(float) * n);
    get(in, p->restitution, sizeof(double) * n), get(in, p->friction, sizeof(double) * n);
    p->topology = get_u64(in), p->edits = get_u64(in);
}

/* force objects: springs; behaviours and fields with their callbacks kept apart */
static void forces_save(writer *o, const imp_world *w)
{
    const force_store *f = w->forces;
    put_ids(o, &f->spring_ids);
    put(o, f->springs, sizeof(spring) * (size_t)f->spring_ids.count);
    put_ids(o, &f->behavior_ids);
    for (int k = 0; k < f->behavior_ids.count; k++) {
        behavior b = f->behaviors[k];
        b.def.fn = NULL, b.def.user = NULL, b.def.release = NULL;
        put(o, &b, sizeof b);
    }
    put_ids(o, &f->field_ids);
}

static void forces_load(reader *in, imp_world *w, load_ctx *ctx)
{
    force_store *f = w->forces;
    get_ids(in, &f->spring_ids);
    const int ns = f->spring_ids.count;
    f->spring_cap = ns;
    f->springs = ns ? ids_grow(NULL, sizeof(spring), (size_t)ns) : NULL;
    get(in, f->springs, sizeof(spring) * (size_t)ns);
    get_ids(in, &f->behavior_ids);
    const int nb = f->behavior_ids.count;
    f->behavior_cap = nb;
    f->behaviors = nb ? ids_grow(NULL, sizeof(behavior), (size_t)nb) : NULL;
    for (int k = 0; k < nb; k++) {
        get(in, &f->behaviors[k], sizeof(behavior));
        if (f->behaviors[k].def.kind == IMP_BEHAVE_CALLBACK) {
            callback cb = next_callback(ctx, in);
            f->behaviors[k].def.fn = (imp_behavior_fn)cb.fn, f->behaviors[k].def.user = cb.user, f->behaviors[k].def.release = cb.release;
        }
    }
    get_ids(in, &f->field_ids);
    const int nf = f->field_ids.count;
    f->field_cap = nf;
    f->fields = nf ? ids_grow(NULL, sizeof(field), (size_t)nf) : NULL;
    for (int k = 0; k < nf; k++) {
        callback cb = next_callback(ctx, in);
        f->fields[k].def = (imp_field_def){(imp_field_fn)cb.fn, cb.user, cb.release};
    }
}

/* static colliders of particles (and bodies) */
static void colliders_save(writer *o, const imp_world *w)
{
    const collider_store *c = w->colliders;
    put_ids(o, &c->ids);
    put(o, c->collider, sizeof(collider) * (size_t)c->ids.count);
    put_u64(o, c->edits);
}

static void colliders_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    collider_store *c = w->colliders;
    get_ids(in, &c->ids);
    const int n = c->ids.count;
    c->cap = n;
    c->collider = n ? ids_grow(NULL, sizeof(collider), (size_t)n) : NULL;
    get(in, c->collider, sizeof(collider) * (size_t)n);
    c->edits = get_u64(in);
}

/* the particles' resting contacts (found at the start of the last step) and impacts */
static void pcontacts_save(writer *o, const imp_world *w)
{
    const particle_contacts *c = w->pcontacts;
    put_array(o, c->contact, sizeof(pcontact), c->count);
    put_u64(o, c->particle_edits), put_u64(o, c->collider_edits);
    put_array(o, c->hit, sizeof(phit), c->hit_count);
}

static void pcontacts_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    particle_contacts *c = w->pcontacts;
    c->contact = get_array(in, sizeof(pcontact), &c->count);
    c->cap = c->count;
    c->particle_edits = get_u64(in), c->collider_edits = get_u64(in);
    c->hit = get_array(in, sizeof(phit), &c->hit_count);
    c->hit_cap = c->hit_count;
}

/* cloth and hair: each object with its elements (in their order: the forces sum in it) */
/* A cloth's dense particle indices (refreshed before every use) and its elements' blocks in the
 * implicit integrator's matrix with their parallel groups (bound whenever that pattern is built, and by
 * implicit_load after this) are caches of the step, not state: written as -1 and 0, so the bytes of a
 * snapshot depend on the state alone. */
#define PUT_UNBOUND(o, type, items, count)                                            \
    for (int e_ = 0; e_ < (count); e_++) {                                           \
        type item_ = (items)[e_];                                                    \
        for (size_t b_ = 0; b_ < sizeof item_.block / sizeof item_.block[0]; b_++)   \
            item_.block[b_] = -1;                                                    \
        put(o, &item_, sizeof item_);                                                \
    }

static void cloth_save(writer *o, const imp_world *w)
{
    const cloth_store *cs = w->cloth;
    put_u32(o, cs != NULL);
    if (!cs) return;
    put_ids(o, &cs->ids);
    for (int k = 0; k < cs->ids.count; k++) {
        cobj b = cs->obj[k];
        b.slot = NULL, b.dense = NULL, b.tri = NULL, b.bend = NULL, b.seg = NULL, b.joint = NULL, b.draw = NULL, b.rest = NULL;
        memset(b.tri_g, 0, sizeof b.tri_g), memset(b.bend_g, 0, sizeof b.bend_g);
        memset(b.seg_g, 0, sizeof b.seg_g), memset(b.joint_g, 0, sizeof b.joint_g);
        put(o, &b, sizeof b);
        const cobj *c = &cs->obj[k];
        put(o, c->slot, sizeof(uint32_t) * (size_t)c->nv);
        for (int v = 0; v < c->nv; v++) put(o, &(int){-1}, sizeof(int));
        PUT_UNBOUND(o, ctri, c->tri, c->ntri)
        PUT_UNBOUND(o, cbend, c->bend, c->nbend)
        PUT_UNBOUND(o, cseg, c->seg, c->nseg)
        PUT_UNBOUND(o, cjoint, c->joint, c->njoint)
        put_u32(o, c->draw != NULL);
        if (c->draw) put(o, c->draw, 3 * sizeof(int) * (size_t)c->ntri);
        put_u32(o, c->rest != NULL);
        if (c->rest) put(o, c->rest, sizeof(imp_vec3) * (size_t)c->nv);
    }
}

static void *get_block(reader *in, size_t elem, int count)
{
    if (count < 0 || (size_t)count > (in->len - in->pos) / (elem ? elem : 1)) {
        in->failed = true;
        return NULL;
    }
    void *p = ids_grow(NULL, elem, count > 0 ? (size_t)count : 1);
    get(in, p, elem * (size_t)count);
    return p;
}

static void cloth_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    cloth_store *cs = calloc(1, sizeof *cs);
    if (!cs) abort();
    idtable ids;
    get_ids(in, &ids);
    const int n = in->failed ? 0 : ids.count;
    cs->obj = n ? calloc((size_t)n, sizeof(cobj)) : NULL;
    int done = 0;
    for (; done < n && !in->failed; done++) {
        cobj *c = &cs->obj[done];
        get(in, c, sizeof *c);
        c->slot = get_block(in, sizeof(uint32_t), c->nv), c->dense = get_block(in, sizeof(int), c->nv);
        c->tri = get_block(in, sizeof(ctri), c->ntri), c->bend = get_block(in, sizeof(cbend), c->nbend);
        c->seg = get_block(in, sizeof(cseg), c->nseg), c->joint = get_block(in, sizeof(cjoint), c->njoint);
        c->draw = get_u32(in) ? get_block(in, 3 * sizeof(int), c->ntri) : NULL;
        c->rest = get_u32(in) ? get_block(in, sizeof(imp_vec3), c->nv) : NULL;
    }
    if (in->failed) { /* keep what was read consistent: the objects read, none after */
        for (int k = done; k < n; k++) memset(&cs->obj[k], 0, sizeof(cobj));
        ids.count = 0;
    }
    cs->ids = ids;
    cs->cap = n;
    w->cloth = cs;
}

/* particles on curves; their callbacks kept apart */
static void curves_save(writer *o, const imp_world *w)
{
    const curve_set *cs = w->curves;
    put_u32(o, cs != NULL);
    if (!cs) return;
    put_u32(o, (uint32_t)cs->count);
    for (int k = 0; k < cs->count; k++) {
        curve c = cs->curve[k];
        c.def.fn = NULL, c.def.user = NULL, c.def.release = NULL;
        put(o, &c, sizeof c);
    }
}

static void curves_load(reader *in, imp_world *w, load_ctx *ctx)
{
    if (!get_u32(in)) return;
    curve_set *cs = calloc(1, sizeof *cs);
    if (!cs) abort();
    w->curves = cs;
    uint32_t n = get_u32(in);
    if (in->failed || n > (in->len - in->pos) / sizeof(curve)) {
        in->failed = true;
        return;
    }
    cs->curve = n ? ids_grow(NULL, sizeof(curve), n) : NULL;
    cs->cap = (int)n;
    for (uint32_t k = 0; k < n; k++) {
        if (!get(in, &cs->curve[k], sizeof(curve))) break;
        callback cb = next_callback(ctx, in);
        cs->curve[k].def.fn = (imp_curve_fn)cb.fn, cs->curve[k].def.user = cb.user, cs->curve[k].def.release = cb.release;
        cs->count = (int)k + 1;
    }
}

/* constraints: the store, the solver's settings and statistics, and its warm start (the multipliers in
 * their rows, whether the last solve converged, the contact rows' step) and J, which the constraint
 * forces are read from. The preconditioner's pattern is rebuilt. */
static void tinker_save(writer *o, const imp_world *w)
{
    const tinker *t = w->tinker;
    put_u32(o, t != NULL);
    if (!t) return;
    put_ids(o, &t->ids);
    for (int k = 0; k < t->ids.count; k++) {
        constraint c = t->constraint[k];
        c.def.fn = NULL, c.def.user = NULL, c.def.release = NULL;
        put(o, &c, sizeof c);
    }
    put_u32(o, (uint32_t)t->rows), put_u32(o, (uint32_t)t->j_entries);
    imp_constraint_stats stats = t->stats;
    stats.ms = 0; /* (a measurement of the machine, as the profile: not state) */
    put(o, &t->set, sizeof t->set), put(o, &stats, sizeof stats), put_i64(o, t->stats_step);
    /* the multipliers by row while they hold those of the present rows; otherwise the next solve gathers
     * them from the constraints and zeroes the contact rows', so what the array holds is not state */
    const int m = t->rows_valid ? tinker_lambda_count(t) : 0;
    put_array(o, t->lambda, sizeof(double), m);
    put_u32(o, t->warm_ok), put_u32(o, t->rows_valid), put_u32(o, (uint32_t)t->ncontact), put_i64(o, t->contact_step);
    put_u32(o, t->j_valid);
    if (t->j_valid) put_u32(o, (uint32_t)t->J.rows), put_array(o, t->J.e, sizeof(jentry), t->J.count);
}

static void tinker_load(reader *in, imp_world *w, load_ctx *ctx)
{
    if (!get_u32(in)) return;
    tinker *t = calloc(1, sizeof *t);
    if (!t) abort();
    w->tinker = t;
    t->pattern_dirty = true;
    idtable ids;
    get_ids(in, &ids);
    const int n = in->failed ? 0 : ids.count;
    t->constraint = n ? ids_grow(NULL, sizeof(constraint), (size_t)n) : NULL;
    t->constraint_cap = n;
    for (int k = 0; k < n; k++) {
        constraint *c = &t->constraint[k];
        if (!get(in, c, sizeof *c)) break;
        if (c->def.kind == IMP_CONSTRAINT_CALLBACK) {
            callback cb = next_callback(ctx, in);
            c->def.fn = (imp_constraint_fn)cb.fn, c->def.user = cb.user, c->def.release = cb.release;
        }
    }
    if (in->failed) ids.count = 0;
    t->ids = ids;
    t->rows = (int)get_u32(in), t->j_entries = (int)get_u32(in);
    get(in, &t->set, sizeof t->set), get(in, &t->stats, sizeof t->stats);
    t->stats_step = (long)get_i64(in);
    int m = 0;
    t->lambda = get_array(in, sizeof(double), &m); /* row_cap 0: the first solve grows every row array, lambda kept */
    t->lambda_loaded = m;
    t->warm_ok = get_u32(in), t->rows_valid = get_u32(in), t->ncontact = (int)get_u32(in), t->contact_step = (long)get_i64(in);
    t->j_valid = get_u32(in);
    if (t->j_valid) {
        t->J.rows = (int)get_u32(in);
        t->J.e = get_array(in, sizeof(jentry), &t->J.count); /* cap 0: the next assembly grows J and Jdot together */
    }
    if (in->failed) t->rows = 0, t->rows_valid = t->j_valid = false;
}

/* the implicit integrator: its settings, and when its pattern is the particles' as they are, the warm
 * start dv and the multigrid hierarchy (made from the values of the step that built the pattern, so a
 * restored run must keep it, not make its own from the values at hand) */
static void implicit_save(writer *o, const imp_world *w)
{
    const implicit_state *st = w->implicit;
    put_u32(o, st != NULL);
    if (!st) return;
    put(o, &st->set, sizeof st->set);
    const bool current = implicit_current(w);
    put_u32(o, current);
    if (!current) return;
    put(o, st->dv, 3 * sizeof(double) * (size_t)st->n);
    put_u32(o, (uint32_t)st->mg.levels);
    for (int l = 0; l + 1 < st->mg.levels; l++) put_array(o, st->mg.lev[l].agg, sizeof(int), st->mg.lev[l].A.n);
}

static void implicit_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    imp_implicit_settings set;
    get(in, &set, sizeof set);
    imp_world_set_implicit(w, &set);
    if (!get_u32(in) || in->failed) return;
    implicit_rebuild(w);
    implicit_state *st = w->implicit;
    get(in, st->dv, 3 * sizeof(double) * (size_t)st->n);
    uint32_t levels = get_u32(in);
    if (levels > AMG_MAX_LEVELS) {
        in->failed = true;
        return;
    }
    int *agg[AMG_MAX_LEVELS] = {0};
    int expect = st->A.n;
    for (uint32_t l = 0; l + 1 < levels; l++) {
        int count = 0;
        agg[l] = get_array(in, sizeof(int), &count);
        int next = 0;
        for (int i = 0; i < count && !in->failed; i++) {
            if (agg[l][i] < 0 || agg[l][i] >= count) in->failed = true;
            else if (agg[l][i] >= next) next = agg[l][i] + 1;
        }
        if (count != expect) in->failed = true;
        expect = next;
    }
    if (!in->failed) amg_adopt(&st->mg, &st->A, (int)levels, (const int *const *)agg);
    for (uint32_t l = 0; l < AMG_MAX_LEVELS; l++) free(agg[l]);
}

/* rigid bodies: the store (sleep timers, accumulated forces, kinematic velocities with the rest),
 * each body's shape slots, the states */
static void bodies_save(writer *o, const imp_world *w)
{
    const body_store *b = w->bodies;
    const int n = b->ids.count;
    put_ids(o, &b->ids);
    for (int k = 0; k < n; k++) {
        body c = b->body[k];
        c.shapes = NULL;
        /* the principal frame is rot_principal(Ibody), made again on load: written as zeros (its
         * padding holds whatever the stack held) */
        memset(&c.principal, 0, sizeof c.principal);
        put(o, &c, sizeof c);
        put(o, b->body[k].shapes, sizeof(uint32_t) * (size_t)b->body[k].nshapes);
    }
    put(o, b->state, BODY_DIM * sizeof(double) * (size_t)n);
    put_u64(o, b->edits);
}

static void bodies_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    body_store *b = w->bodies;
    idtable ids;
    get_ids(in, &ids);
    const int n = in->failed ? 0 : ids.count;
    body *bodies = n ? calloc((size_t)n, sizeof(body)) : NULL;
    int done = 0;
    for (; done < n && !in->failed; done++) {
        get(in, &bodies[done], sizeof(body));
        bodies[done].shapes = get_block(in, sizeof(uint32_t), bodies[done].nshapes);
        bodies[done].principal = rot_principal(bodies[done].Ibody);
    }
    double *state = n ? ids_grow(NULL, BODY_DIM * sizeof(double), (size_t)n) : NULL;
    get(in, state, BODY_DIM * sizeof(double) * (size_t)n);
    uint64_t edits = get_u64(in);
    if (in->failed) { /* nothing half made: the bodies stay empty */
        for (int k = 0; k < done; k++) free(bodies[k].shapes);
        free(bodies), free(state), ids_free(&ids);
        return;
    }
    b->ids = ids, b->body = bodies, b->state = state, b->cap = n, b->edits = edits;
}

/* a convex hull's arrays (immutable once built) */
static void hull_save(writer *o, const hull *h)
{
    int nfv = 0;
    for (int f = 0; f < h->nf; f++) if (h->face_first[f] + h->face_count[f] > nfv) nfv = h->face_first[f] + h->face_count[f];
    put_u32(o, (uint32_t)h->nv), put_u32(o, (uint32_t)h->nf), put_u32(o, (uint32_t)h->ne), put_u32(o, (uint32_t)h->ndir);
    put_u32(o, (uint32_t)h->ntri), put_u32(o, (uint32_t)nfv);
    put(o, h->v, 3 * sizeof(double) * (size_t)h->nv);
    put(o, h->face_first, sizeof(int) * (size_t)h->nf), put(o, h->face_count, sizeof(int) * (size_t)h->nf);
    put(o, h->face_verts, sizeof(int) * (size_t)nfv);
    put(o, h->face_n, sizeof(imp_vec3) * (size_t)h->nf), put(o, h->face_d, sizeof(double) * (size_t)h->nf);
    put(o, h->edges, 2 * sizeof(int) * (size_t)h->ne), put(o, h->edge_faces, 2 * sizeof(int) * (size_t)h->ne);
    put(o, h->dirs, sizeof(imp_vec3) * (size_t)h->ndir), put(o, h->tris, 3 * sizeof(int) * (size_t)h->ntri);
    put(o, &h->centroid, sizeof h->centroid);
}

static hull *hull_load(reader *in)
{
    hull *h = calloc(1, sizeof *h);
    if (!h) abort();
    h->nv = (int)get_u32(in), h->nf = (int)get_u32(in), h->ne = (int)get_u32(in), h->ndir = (int)get_u32(in);
    h->ntri = (int)get_u32(in);
    int nfv = (int)get_u32(in);
    h->v = get_block(in, 3 * sizeof(double), h->nv);
    h->face_first = get_block(in, sizeof(int), h->nf), h->face_count = get_block(in, sizeof(int), h->nf);
    h->face_verts = get_block(in, sizeof(int), nfv);
    h->face_n = get_block(in, sizeof(imp_vec3), h->nf), h->face_d = get_block(in, sizeof(double), h->nf);
    h->edges = get_block(in, 2 * sizeof(int), h->ne), h->edge_faces = get_block(in, 2 * sizeof(int), h->ne);
    h->dirs = get_block(in, sizeof(imp_vec3), h->ndir), h->tris = get_block(in, 3 * sizeof(int), h->ntri);
    get(in, &h->centroid, sizeof h->centroid);
    return h;
}

/* a static mesh with its bounding volume hierarchy (immutable once built) */
static void mesh_save(writer *o, const mesh *m)
{
    put_u32(o, (uint32_t)m->nv), put_u32(o, (uint32_t)m->nt), put_u32(o, (uint32_t)m->nnodes);
    put(o, m->v, 3 * sizeof(double) * (size_t)m->nv), put(o, m->tri, 3 * sizeof(int) * (size_t)m->nt);
    put(o, m->n, sizeof(imp_vec3) * (size_t)m->nt), put(o, &m->lo, sizeof m->lo), put(o, &m->hi, sizeof m->hi);
    put(o, m->nodes, sizeof(mesh_node) * (size_t)m->nnodes), put(o, m->order, sizeof(int) * (size_t)m->nt);
}

static mesh *mesh_load(reader *in)
{
    mesh *m = calloc(1, sizeof *m);
    if (!m) abort();
    m->nv = (int)get_u32(in), m->nt = (int)get_u32(in), m->nnodes = (int)get_u32(in);
    m->v = get_block(in, 3 * sizeof(double), m->nv), m->tri = get_block(in, 3 * sizeof(int), m->nt);
    m->n = get_block(in, sizeof(imp_vec3), m->nt);
    get(in, &m->lo, sizeof m->lo), get(in, &m->hi, sizeof m->hi);
    m->nodes = get_block(in, sizeof(mesh_node), m->nnodes), m->order = get_block(in, sizeof(int), m->nt);
    return m;
}

/* the shapes: each placed in the world as the last step left it, hulls and meshes with them, and the
 * log of shapes the broad phase has not seen yet */
static void shapes_save(writer *o, const imp_world *w)
{
    const shape_store *s = w->shapes;
    put_ids(o, &s->ids);
    for (int k = 0; k < s->ids.count; k++) {
        shape c = s->shape[k];
        c.hull = NULL, c.mesh = NULL;
        put(o, &c, sizeof c);
        if (s->shape[k].hull) hull_save(o, s->shape[k].hull);
        if (s->shape[k].mesh) mesh_save(o, s->shape[k].mesh);
    }
    put_array(o, s->changes, sizeof(shape_change), s->change_count);
}

static void shapes_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    shape_store *s = w->shapes;
    idtable ids;
    get_ids(in, &ids);
    const int n = in->failed ? 0 : ids.count;
    s->shape = n ? calloc((size_t)n, sizeof(shape)) : NULL;
    s->cap = n;
    for (int k = 0; k < n && !in->failed; k++) {
        shape *c = &s->shape[k];
        get(in, c, sizeof *c);
        c->hull = c->type == IMP_SHAPE_HULL ? hull_load(in) : NULL;
        c->mesh = c->type == IMP_SHAPE_MESH ? mesh_load(in) : NULL;
    }
    s->changes = get_array(in, sizeof(shape_change), &s->change_count);
    s->change_cap = s->change_count;
    if (in->failed) ids.count = 0;
    s->ids = ids;
}

/* the broad phase: its kind, the shapes it holds in their order and its axis; its sorted lists and
 * overlap set are rebuilt by its next update, and give the same pairs (they are sorted by key) */
static void broadphase_save(writer *o, const imp_world *w)
{
    const broadphase *bp = w->broadphase;
    put_u32(o, (uint32_t)bp->kind), put_u32(o, (uint32_t)bp->axis);
    put_array(o, bp->order, sizeof(uint32_t), bp->order_count);
}

static void broadphase_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    broadphase *bp = w->broadphase;
    bp->kind = (imp_broadphase)get_u32(in), bp->axis = (int)get_u32(in);
    bp->order = get_array(in, sizeof(uint32_t), &bp->order_count);
    bp->order_cap = bp->order_count;
    if ((unsigned)bp->kind > IMP_BROADPHASE_SWEEP || (unsigned)bp->axis > 2) in->failed = true;
}

/* the contact set: pairs (witness axes), touching manifolds with their points' ids and impulses (the
 * warm start), the last step's begin and end events, and the counters that date it */
static void contacts_save(writer *o, const imp_world *w)
{
    const contact_set *c = w->contacts;
    put_array(o, c->pairs, sizeof(pair), c->pair_count);
    put_array(o, c->manifolds, sizeof(manifold), c->manifold_count);
    put_array(o, c->begin, 2 * sizeof(imp_contact_side), c->begin_count);
    put(o, c->begin_speed, sizeof(double) * (size_t)c->begin_count);
    put_array(o, c->end, 2 * sizeof(imp_contact_side), c->end_count);
    put(o, c->end_impulse, sizeof(double) * (size_t)c->end_count);
    put_u32(o, c->next_point_id), put_u64(o, c->body_edits), put_u64(o, c->collider_edits);
}

static void contacts_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    contact_set *c = w->contacts;
    c->pairs = get_array(in, sizeof(pair), &c->pair_count);
    c->pair_cap = c->pair_count;
    c->manifolds = get_array(in, sizeof(manifold), &c->manifold_count);
    c->manifold_cap = c->manifold_count;
    c->begin = get_array(in, 2 * sizeof(imp_contact_side), &c->begin_count);
    c->begin_cap = 2 * c->begin_count, c->begin_val_cap = c->begin_count;
    c->begin_speed = get_block(in, sizeof(double), c->begin_count);
    c->end = get_array(in, 2 * sizeof(imp_contact_side), &c->end_count);
    c->end_cap = 2 * c->end_count, c->end_val_cap = c->end_count;
    c->end_impulse = get_block(in, sizeof(double), c->end_count);
    c->next_point_id = get_u32(in), c->body_edits = get_u64(in), c->collider_edits = get_u64(in);
    for (int k = 0; k < c->pair_count && !in->failed; k++)
        if (c->pairs[k].man >= c->manifold_count) in->failed = true;
}

/* joints: the store (each joint's frames, limits, motor and unwrapped angle); the solver's tables are
 * rebuilt by the next step */
static void joints_save(writer *o, const imp_world *w)
{
    const struct joint_set *js = w->joints;
    put_u32(o, js != NULL);
    if (!js) return;
    put_ids(o, &js->ids);
    put(o, js->joint, sizeof(joint) * (size_t)js->ids.count);
}

static void joints_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    struct joint_set *js = calloc(1, sizeof *js);
    if (!js) abort();
    w->joints = js;
    idtable ids;
    get_ids(in, &ids);
    const int n = in->failed ? 0 : ids.count;
    js->joint = n ? ids_grow(NULL, sizeof(joint), (size_t)n) : NULL;
    js->joint_cap = n;
    get(in, js->joint, sizeof(joint) * (size_t)n);
    if (in->failed) ids.count = 0;
    js->ids = ids;
}

/* the impulse mode: the collisions of the last step (what the queries report) */
static void impulse_save(writer *o, const imp_world *w)
{
    const int n = imp_world_hit_count(w);
    put_u32(o, (uint32_t)n);
    for (int k = 0; k < n; k++) put(o, imp_world_hit(w, k), sizeof(imp_contact_hit));
}

static void impulse_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    int n = 0;
    imp_contact_hit *hits = get_array(in, sizeof(imp_contact_hit), &n);
    if (!in->failed) impulse_restore_hits(w, hits, n);
    free(hits);
}

/* the exact mode: settings and counters, its ball joints, the friction warm start (the last contact
 * set's signature and forces) and that set (what its queries read) */
static void qp_save(writer *o, const imp_world *w)
{
    const struct qp_state *q = w->qp;
    put_u32(o, q != NULL);
    if (!q) return;
    put_f64(o, q->h), put_f64(o, q->restitution), put_f64(o, q->friction), put_u32(o, (uint32_t)q->dense_max);
    put_i64(o, q->solves), put_i64(o, q->impacts), put_i64(o, q->pgs);
    put(o, &q->info, sizeof q->info);
    put_array(o, q->c, sizeof(qp_contact), q->count);
    put_array(o, q->joints, sizeof *q->joints, q->nj);
    put_array(o, q->g, 2 * sizeof(double), q->g ? q->gcap : 0);
    put_u32(o, q->warm), put_u64(o, q->sig);
}

static void qp_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    struct qp_state *q = calloc(1, sizeof *q);
    if (!q) abort();
    w->qp = q;
    q->h = get_f64(in), q->restitution = get_f64(in), q->friction = get_f64(in), q->dense_max = (int)get_u32(in);
    q->solves = (long)get_i64(in), q->impacts = (long)get_i64(in), q->pgs = (long)get_i64(in);
    get(in, &q->info, sizeof q->info);
    /* the contact list is the queries' until the next gather; the sort's buffer and the islands with it */
    q->c = get_array(in, sizeof(qp_contact), &q->count);
    q->cap = q->count;
    if (q->cap) {
        q->c2 = ids_grow(NULL, sizeof(qp_contact), (size_t)q->cap);
        q->isl = ids_grow(NULL, sizeof(int), (size_t)q->cap + 1), q->isl_neq = ids_grow(NULL, sizeof(int), (size_t)q->cap + 1);
    }
    q->joints = get_array(in, sizeof *q->joints, &q->nj);
    q->jcap = q->nj;
    int gcap = 0;
    q->g = get_array(in, 2 * sizeof(double), &gcap);
    if (gcap) { /* the friction arrays share g's capacity */
        q->gcap = gcap;
        q->gi = ids_grow(NULL, 2 * sizeof(double), (size_t)gcap);
        q->t1 = ids_grow(NULL, sizeof(imp_vec3), (size_t)gcap), q->t2 = ids_grow(NULL, sizeof(imp_vec3), (size_t)gcap);
    }
    q->warm = get_u32(in), q->sig = get_u64(in);
}

/* sensors: the overlaps after the last collide stage (what world:overlaps reports, and what the next
 * stage's begin and end events are measured against) and the last step's events */
static void sensors_save(writer *o, const imp_world *w)
{
    const sensor_set *s = w->sensors;
    put_u32(o, s != NULL);
    if (!s) return;
    put_array(o, s->now, sizeof(sensor_overlap), s->now_count);
    put_array(o, s->begin, sizeof(sensor_overlap), s->begin_count);
    put_array(o, s->end, sizeof(sensor_overlap), s->end_count);
}

static void sensors_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    sensor_set *s = calloc(1, sizeof *s);
    if (!s) abort();
    w->sensors = s;
    s->now = get_array(in, sizeof(sensor_overlap), &s->now_count), s->now_cap = s->now_count;
    s->begin = get_array(in, sizeof(sensor_overlap), &s->begin_count), s->begin_cap = s->begin_count;
    s->end = get_array(in, sizeof(sensor_overlap), &s->end_count), s->end_cap = s->end_count;
}

/* the pre_solve callback (kept apart; its modifications are the step's own and dated by it) */
static void presolve_save(writer *o, const imp_world *w)
{
    put_u32(o, w->presolve && w->presolve->fn);
}

static void presolve_load(reader *in, imp_world *w, load_ctx *ctx)
{
    if (!get_u32(in)) return;
    callback cb = next_callback(ctx, in);
    if (!in->failed) imp_world_set_pre_solve(w, (imp_pre_solve_fn)cb.fn, cb.user, cb.release);
}

/* the joints the last step broke (what world:broken_joints reports) */
static void breaks_save(writer *o, const imp_world *w)
{
    const int n = imp_world_broken_joint_count(w);
    put_u32(o, (uint32_t)n);
    for (int k = 0; k < n; k++) put(o, imp_world_broken_joint(w, k), sizeof(imp_joint_break));
}

static void breaks_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    int n = 0;
    imp_joint_break *ev = get_array(in, sizeof(imp_joint_break), &n);
    if (!in->failed) joints_breaks_restore(w, ev, n);
    free(ev);
}

/* particles attached to body points: each with its support (the point's acceleration the next step
 * starts from) and last impulse, in their order (the exchanges sum in it) */
static void attach_save(writer *o, const imp_world *w)
{
    const attach_set *s = w->attach;
    put_u32(o, s != NULL);
    if (!s) return;
    put_array(o, s->a, sizeof(attachment), s->count);
}

static void attach_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    attach_set *s = calloc(1, sizeof *s);
    if (!s) abort();
    w->attach = s;
    s->a = get_array(in, sizeof(attachment), &s->count);
    s->cap = s->count;
}

/* particles against bodies and each other: the pairs' impulses of the last step, which the next
 * step's sweeps start from (the rest of the stage is its scratch) */
static void coupling_save(writer *o, const imp_world *w)
{
    const particle_coupling *p = w->coupling;
    put_u32(o, p != NULL);
    if (!p) return;
    const pc_warm *wm = &p->warm;
    put_u32(o, (uint32_t)wm->slots);
    if (wm->slots > 0) put(o, wm->start, sizeof(int) * (size_t)(wm->slots + 1));
    put_array(o, wm->lower, sizeof(imp_id), wm->count);
    put(o, wm->higher, sizeof(imp_id) * (size_t)wm->count), put(o, wm->impulse, 3 * sizeof(float) * (size_t)wm->count);
}

static void coupling_load(reader *in, imp_world *w, load_ctx *ctx)
{
    (void)ctx;
    if (!get_u32(in)) return;
    particle_coupling *p = calloc(1, sizeof *p);
    if (!p) abort();
    w->coupling = p;
    pc_warm *wm = &p->warm;
    const int slots = (int)get_u32(in);
    if (in->failed || slots < 0) {
        in->failed = true;
        return;
    }
    if (slots > 0) wm->start = get_block(in, sizeof(int), slots + 1), wm->start_cap = slots + 1;
    if (in->failed) return;
    wm->slots = slots;
    wm->lower = get_array(in, sizeof(imp_id), &wm->count);
    wm->cap = wm->count;
    wm->higher = get_block(in, sizeof(imp_id), wm->count), wm->impulse = get_block(in, 3 * sizeof(float), wm->count);
    if (in->failed) {
        wm->slots = wm->count = 0;
        return;
    }
    for (int k = 0; k <= slots && slots > 0; k++) /* the entries' ranges, ascending within the entries */
        if (wm->start[k] < (k ? wm->start[k - 1] : 0) || wm->start[k] > wm->count) in->failed = true;
    if (in->failed) wm->slots = wm->count = 0;
}

/* the parts, in the order they are written and read: stores before what refers to them (the implicit
 * integrator's pattern is made from the particles, force objects and cloth; shapes before bodies, so
 * a body store never refers to shapes that are not there) */
typedef struct snapshot_part {
    const char *tag;
    void (*save)(writer *o, const imp_world *w);
    void (*load)(reader *in, imp_world *w, load_ctx *ctx);
} snapshot_part;

static const snapshot_part parts[] = {
    {"WRLD", world_save, world_load},
    {"SOLV", solvers_save, solvers_load},
    {"PART", particles_save, particles_load},
    {"FORC", forces_save, forces_load},
    {"COLL", colliders_save, colliders_load},
    {"PCON", pcontacts_save, pcontacts_load},
    {"CLTH", cloth_save, cloth_load},
    {"CURV", curves_save, curves_load},
    {"TINK", tinker_save, tinker_load},
    {"IMPL", implicit_save, implicit_load},
    {"SHAP", shapes_save, shapes_load},
    {"BODY", bodies_save, bodies_load},
    {"BRPH", broadphase_save, broadphase_load},
    {"CONT", contacts_save, contacts_load},
    {"JOIN", joints_save, joints_load},
    {"IMPU", impulse_save, impulse_load},
    {"QPST", qp_save, qp_load},
    {"SENS", sensors_save, sensors_load},
    {"BRKN", breaks_save, breaks_load},
    {"ATCH", attach_save, attach_load},
    {"PCWM", coupling_save, coupling_load},
    {"PRES", presolve_save, presolve_load},
};
#define PART_COUNT ((int)(sizeof parts / sizeof parts[0]))

/* ---- snapshots ------------------------------------------------------------------------------------------ */

/* what the structures written whole look like in this build: a file written by a build whose
 * layout differs is refused (a change that keeps every size must bump IMP_SNAPSHOT_VERSION) */
static uint32_t layout_signature(void)
{
    const size_t sizes[] = {
        sizeof(world_settings), sizeof(spring), sizeof(behavior), sizeof(collider),
        sizeof(pcontact), sizeof(phit), sizeof(cobj), sizeof(ctri), sizeof(cbend), sizeof(cseg), sizeof(cjoint),
        sizeof(curve), sizeof(constraint), sizeof(imp_constraint_settings), sizeof(imp_constraint_stats),
        sizeof(jentry), sizeof(imp_implicit_settings), sizeof(body), sizeof(shape), sizeof(mesh_node),
        sizeof(shape_change), sizeof(pair), sizeof(manifold), sizeof(imp_contact_side), sizeof(joint),
        sizeof(imp_contact_hit), sizeof(qp_contact), sizeof(struct qp_joint), sizeof(imp_lcp_info),
        sizeof(callback_key), sizeof(sensor_overlap), sizeof(imp_joint_break), sizeof(attachment), BODY_DIM, IMP_MANIFOLD_MAX, IMP_BEHAVE_MAX, IMP_CONSTRAINT_MAX, PAR_CHUNKS,
    };
    uint32_t h = 2166136261u;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t v = sizes[k];
        for (int b = 0; b < 8; b++) h = (h ^ (uint8_t)(v >> (8 * b))) * 16777619u;
    }
    return h;
}

/* FNV-1a, 64 bits: the file's checksum */
static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

imp_snapshot *imp_snapshot_take(imp_world *w)
{
    if (w->locked) {
        world_error(w, "snapshot: the world is stepping (take snapshots between steps)");
        return NULL;
    }
    imp_snapshot *s = calloc(1, sizeof *s);
    if (!s) abort();
    const int n = callbacks_of(w, NULL, NULL);
    if (n) {
        s->keys = ids_grow(NULL, sizeof(callback_key), (size_t)n);
        s->callbacks = ids_grow(NULL, sizeof(callback), (size_t)n);
        callbacks_of(w, s->keys, s->callbacks);
    }
    s->callback_count = n;
    writer o = {0};
    size_t at = section_begin(&o, "CBKS");
    put_array(&o, s->keys, sizeof(callback_key), n);
    section_end(&o, at);
    for (int k = 0; k < PART_COUNT; k++) {
        at = section_begin(&o, parts[k].tag);
        parts[k].save(&o, w);
        section_end(&o, at);
    }
    s->data = o.data, s->len = o.len;
    s->time = w->time, s->steps = w->steps;
    s->world_serial = w->serial;
    s->owned = w->retain != NULL;
    if (s->owned)
        for (int k = 0; k < n; k++) w->retain(s->callbacks[k].user);
    return s;
}

void imp_snapshot_free(imp_snapshot *s)
{
    if (!s) return;
    if (s->owned)
        for (int k = 0; k < s->callback_count; k++)
            if (s->callbacks[k].release) s->callbacks[k].release(s->callbacks[k].user);
    free(s->keys), free(s->callbacks), free(s->data);
    free(s);
}

size_t imp_snapshot_bytes(const imp_snapshot *s)
{
    return sizeof *s + s->len + (size_t)s->callback_count * (sizeof(callback_key) + sizeof(callback));
}
double imp_snapshot_time(const imp_snapshot *s) { return s->time; }
long imp_snapshot_step_count(const imp_snapshot *s) { return s->steps; }

void imp_world_set_callback_retain(imp_world *w, void (*retain)(void *user)) { w->retain = retain; }

/* the callbacks a restore gives the snapshot's objects: its own when it was taken from this world,
 * else those of the objects with the same ids here; NULL (and the world error) when one has none */
static callback *restore_callbacks(imp_world *w, const imp_snapshot *s, reader *in, int *count)
{
    reader sub;
    int n = 0;
    callback_key *keys = NULL;
    if (section_open(in, "CBKS", &sub)) keys = get_array(&sub, sizeof(callback_key), &n);
    *count = n;
    if (in->failed || sub.failed) {
        free(keys);
        world_error(w, "restore: the snapshot is corrupt (its list of callbacks)");
        return NULL;
    }
    callback *cbs = ids_grow(NULL, sizeof(callback), n > 0 ? (size_t)n : 1);
    const bool own = s->callbacks && s->world_serial == w->serial && s->callback_count == n;
    /* the world's own objects with callbacks, for a snapshot from elsewhere */
    const int nw = own ? 0 : callbacks_of(w, NULL, NULL);
    callback_key *wkeys = nw ? ids_grow(NULL, sizeof(callback_key), (size_t)nw) : NULL;
    callback *wcbs = nw ? ids_grow(NULL, sizeof(callback), (size_t)nw) : NULL;
    if (nw) callbacks_of(w, wkeys, wcbs);
    for (int k = 0; k < n; k++) {
        if (own) {
            cbs[k] = s->callbacks[k];
        } else if (keys[k].kind > CB_PRESOLVE || !callback_find(wkeys, wcbs, nw, keys[k], &cbs[k])) {
            world_error(w, "restore: the snapshot's %s #%u (a script function) has no counterpart in this world: a "
                           "snapshot restored into another world, or loaded from a file, takes its functions from the "
                           "objects with the same ids (make them first, as the scene's setup does)",
                        keys[k].kind <= CB_PRESOLVE ? CB_NAMES[keys[k].kind] : "callback", (unsigned)keys[k].id.index);
            free(keys), free(cbs), free(wkeys), free(wcbs);
            return NULL;
        }
        if (cbs[k].release && !w->retain) {
            world_error(w, "restore: the world has no callback retain hook (imp_world_set_callback_retain), so it "
                           "cannot share the snapshot's %s #%u", CB_NAMES[keys[k].kind], (unsigned)keys[k].id.index);
            free(keys), free(cbs), free(wkeys), free(wcbs);
            return NULL;
        }
    }
    free(keys), free(wkeys), free(wcbs);
    return cbs;
}

/* w takes tmp's contents and tmp w's; w keeps what makes it itself (its serial, its retain hook, the
 * undo buffer of its steps) and both keep their bodies' back pointers */
static void world_swap(imp_world *w, imp_world *tmp)
{
    imp_world old = *w;
    *w = *tmp;
    *tmp = old;
    w->serial = old.serial, w->retain = old.retain, w->undo = old.undo;
    tmp->serial = 0, tmp->undo = NULL;
    w->bodies->plain.w = w, tmp->bodies->plain.w = tmp;
    w->locked = false, w->error[0] = 0;
}

imp_status imp_snapshot_restore(imp_world *w, const imp_snapshot *s)
{
    if (w->locked) {
        world_error(w, "restore: the world is stepping (restore between steps)");
        return IMP_ERR_LOCKED;
    }
    reader in = {s->data, s->len, 0, false};
    int n = 0;
    callback *cbs = restore_callbacks(w, s, &in, &n);
    if (!cbs) return IMP_ERR_ARG;
    imp_world *tmp = imp_world_create(NULL);
    if (!tmp) abort();
    tmp->retain = w->retain;
    load_ctx ctx = {cbs, n, 0, w->retain}; /* the new world holds its callbacks as the old one did */
    const char *bad = NULL;
    for (int k = 0; k < PART_COUNT && !bad; k++) {
        reader sub;
        if (!section_open(&in, parts[k].tag, &sub)) bad = parts[k].tag;
        else {
            parts[k].load(&sub, tmp, &ctx);
            if (sub.failed || sub.pos != sub.len) bad = parts[k].tag;
        }
    }
    if (!bad && (ctx.next != n || in.pos != in.len)) bad = "CBKS";
    free(cbs);
    if (bad) {
        imp_world_destroy(tmp); /* (lets go of the callbacks its objects took) */
        world_error(w, "restore: the snapshot is corrupt (section %s); the world is unchanged", bad);
        return IMP_ERR_ARG;
    }
    world_swap(w, tmp);
    imp_world_destroy(tmp); /* the old contents, their callbacks released */
    return IMP_OK;
}

/* ---- files ---------------------------------------------------------------------------------------------- */

#define FILE_MAGIC "IMPSNAP"

typedef struct file_header {
    char magic[8];
    uint32_t version, layout;
    double time;
    int64_t steps;
    uint64_t length, checksum;
} file_header;

static void set_error(char *err, size_t errlen, const char *fmt, const char *path, const char *detail)
{
    if (err && errlen) snprintf(err, errlen, fmt, path, detail ? detail : "");
}

void *imp_snapshot_encode(const imp_snapshot *s, size_t *length)
{
    file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FILE_MAGIC, sizeof FILE_MAGIC);
    h.version = IMP_SNAPSHOT_VERSION, h.layout = layout_signature();
    h.time = s->time, h.steps = s->steps;
    h.length = s->len, h.checksum = checksum(s->data, s->len);
    unsigned char *out = malloc(sizeof h + s->len);
    if (!out) abort();
    memcpy(out, &h, sizeof h);
    if (s->len) memcpy(out + sizeof h, s->data, s->len);
    *length = sizeof h + s->len;
    return out;
}

/* why the bytes are not a snapshot this build reads, or "" */
static void decode_check(const unsigned char *bytes, size_t length, file_header *h, char *detail, size_t n)
{
    detail[0] = 0;
    if (length < sizeof *h || memcmp(bytes, FILE_MAGIC, sizeof FILE_MAGIC)) {
        snprintf(detail, n, "not an impetus snapshot");
        return;
    }
    memcpy(h, bytes, sizeof *h);
    if (h->version != IMP_SNAPSHOT_VERSION)
        snprintf(detail, n, "written in snapshot format version %u; this build reads version %u", (unsigned)h->version,
                 (unsigned)IMP_SNAPSHOT_VERSION);
    else if (h->layout != layout_signature())
        snprintf(detail, n, "written by a build whose state layout differs (%08x; this build %08x)", (unsigned)h->layout,
                 (unsigned)layout_signature());
    else if (length - sizeof *h != h->length)
        snprintf(detail, n, "corrupt: %llu bytes of state where the header says %llu",
                 (unsigned long long)(length - sizeof *h), (unsigned long long)h->length);
    else if (checksum(bytes + sizeof *h, (size_t)h->length) != h->checksum)
        snprintf(detail, n, "corrupt: its checksum does not match");
}

imp_snapshot *imp_snapshot_decode(const void *bytes, size_t length, char *err, size_t errlen)
{
    file_header h;
    char detail[200];
    decode_check(bytes, length, &h, detail, sizeof detail);
    if (detail[0]) {
        if (err && errlen) snprintf(err, errlen, "%s", detail);
        return NULL;
    }
    imp_snapshot *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->len = (size_t)h.length;
    s->data = malloc(s->len ? s->len : 1);
    if (!s->data) abort();
    if (s->len) memcpy(s->data, (const unsigned char *)bytes + sizeof h, s->len);
    s->time = h.time, s->steps = (long)h.steps;
    return s;
}

bool imp_snapshot_save(const imp_snapshot *s, const char *path, char *err, size_t errlen)
{
    size_t n;
    void *bytes = imp_snapshot_encode(s, &n);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(bytes, n, 1, f) == 1;
    if (f) ok = fclose(f) == 0 && ok;
    if (!ok) set_error(err, errlen, "cannot write %s: %s", path, strerror(errno));
    free(bytes);
    return ok;
}

imp_snapshot *imp_snapshot_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_error(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char *bytes = NULL;
    size_t n = 0, cap = 0, got;
    do { /* the whole file */
        if (n == cap) cap = cap ? 2 * cap : 1 << 16, bytes = ids_grow(bytes, 1, cap);
        got = fread(bytes + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    const bool failed = ferror(f);
    fclose(f);
    char detail[256] = "cannot read it";
    imp_snapshot *s = failed ? NULL : imp_snapshot_decode(bytes, n, detail, sizeof detail);
    free(bytes);
    if (!s) set_error(err, errlen, "%s: %s", path, detail);
    return s;
}

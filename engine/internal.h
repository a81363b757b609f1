/* internal.h: the world's layout, shared by the engine's stage files. Not part of the public API. */
#ifndef IMPETUS_INTERNAL_H
#define IMPETUS_INTERNAL_H

#include "impetus.h"

/* ---- id tables (ids.c) ------------------------------------------------------------------------------
 * Objects live in dense arrays (so loops are linear); a slot table maps a stable id to the current
 * dense index. Removing swaps the last element into the hole, as Box2D's arrays do. */
typedef struct idtable {
    uint32_t *slot_dense; /* slot -> dense index, or the next free slot when unused */
    uint32_t *slot_gen;   /* slot -> generation (odd: live, even: free)               */
    uint32_t *dense_slot; /* dense index -> slot                                      */
    int count, slots, cap, free_head;
} idtable;

imp_id ids_alloc(idtable *t);                    /* new dense entry at index t->count - 1    */
int ids_lookup(const idtable *t, imp_id id);     /* dense index, or -1 for a stale id         */
/* free id; returns the dense index that was emptied. The caller moves its data from index
 * t->count (the old last) into it, as ids_remove already moved the mapping. */
int ids_remove(idtable *t, imp_id id);
imp_id ids_of(const idtable *t, int dense);      /* the id of a dense entry                  */
void ids_free(idtable *t);
void *ids_grow(void *p, size_t elem, int cap);   /* realloc or abort on out-of-memory         */

/* ---- particles ------------------------------------------------------------------------------------ */
typedef struct particle_store {
    idtable ids;
    int cap;
    double *x, *v;      /* 3 per particle: committed state                     */
    double *mass, *inv_mass, *radius;
    uint8_t *motion;    /* imp_motion                                          */
    float *color;       /* 4 per particle                                      */
} particle_store;

typedef struct spring {
    uint32_t a, b;      /* particle slots; b == UINT32_MAX: anchored           */
    imp_vec3 anchor;
    double ks, kd, rest;
} spring;

typedef struct behavior {
    imp_behavior_def def;
    uint32_t slots[IMP_BEHAVE_MAX];
} behavior;

typedef struct field {
    imp_field_def def;
} field;

typedef struct collider {
    imp_collider_def def;
} collider;

/* the particles the ODE solver is stepping: [first, first + count) of the dense arrays, and the
 * resting contacts among them, [contact_lo, contact_hi) */
typedef struct particle_range {
    imp_world *w;
    int first, count;
    int contact_lo, contact_hi;
} particle_range;

/* resting contact of one particle with one collider, found at the start of a step */
typedef struct pcontact {
    int particle;  /* dense index */
    int collider;  /* dense index */
    imp_vec3 vt0;  /* tangential velocity at the start of the step */
} pcontact;

struct imp_world {
    imp_world_def def;
    double time;
    long steps;
    bool locked;
    char error[512];
    imp_profile profile;

    particle_store p;
    idtable spring_ids;   spring *springs;     int spring_cap;
    idtable behave_ids;   behavior *behaviors; int behave_cap;
    idtable field_ids;    field *fields;       int field_cap;
    idtable collider_ids; collider *colliders; int collider_cap;

    pcontact *contacts; int contact_count, contact_cap;

    imp_ode_solver solver;
    particle_range range;
    double *state0, *force; /* scratch reused every step */
    int scratch_cap;

    /* implicit integration, cloth and hair (implicit.c, cloth.c) */
    uint64_t topology;                  /* bumped when particles or force objects come or go */
    struct implicit_state *implicit;    /* owned by implicit.c, created on first use          */
    struct cloth_store *cloth;          /* owned by cloth.c, created by the first cloth/hair  */
};

/* particles.c */
int particles_slot_dense(const imp_world *w, uint32_t slot);
imp_ode_system particles_ode(imp_world *w, int first, int count);
/* forces.c: all forces on the particles of range r at state (x, v) and time t into f; the arrays
 * are indexed from the range's first particle. Springs and behaviours need the whole store. */
int forces_accumulate(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f);
bool forces_separable(const imp_world *w); /* true when every force acts on one particle alone */
void forces_particle_removed(imp_world *w, uint32_t slot);
double forces_spring_energy(const imp_world *w);
/* particle_collide.c */
void pcollide_find_contacts(imp_world *w);
void pcollide_contact_forces(imp_world *w, const particle_range *r, const double *x, double *f);
void pcollide_resolve(imp_world *w, const double *x0, const double *v0, double h);
void pcollide_friction_clamp(imp_world *w);
imp_vec3 pcollide_contact_normal(const imp_world *w, int k);

void world_set_error(imp_world *w, const char *fmt, ...);

/* forces.c: the per-particle forces alone (gravity and drag: written, not added; fields: added) */
void forces_local(imp_world *w, const particle_range *r, const double *v, double *f);
int forces_fields(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f);

/* implicit.c: the world's implicit step (called by imp_world_step in place of imp_ode_advance),
 * backward Euler for a generic ODE system (called by imp_ode_step), cleanup */
int implicit_step(imp_world *w, double t, double h, imp_profile *prof);
int implicit_ode_step(const imp_ode_system *sys, imp_ode_solver *s, double *x, double t, double h);
void implicit_free(imp_world *w);

/* cloth.c: forces of cloth and hair for the explicit integrators, their elastic energy, the
 * particle-removal hook, cleanup */
void cloth_forces(imp_world *w, const double *x, const double *v, double *f);
double cloth_energy(const imp_world *w);
void cloth_particle_removed(imp_world *w, uint32_t slot);
int cloth_object_count(const imp_world *w);
void cloth_free(imp_world *w);

#endif

/* forces.h: force objects for particles: springs, behaviours, fields (forces.c). */
#ifndef IMPETUS_FORCES_H
#define IMPETUS_FORCES_H

#include "particles.h"
#include "sparse.h"

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

/* the force objects (forces.c) */
#define BEHAVIOR_BLOCKS (IMP_BEHAVE_MAX * IMP_BEHAVE_MAX)

typedef struct force_store {
    idtable spring_ids;   spring *springs;     int spring_cap;
    idtable behavior_ids; behavior *behaviors; int behavior_cap;
    idtable field_ids;    field *fields;       int field_cap;
    /* their blocks in the implicit integrator's matrix (forces_bind_blocks) */
    int *spring_blk;      /* 4 per spring: (a,a) (a,b) (b,a) (b,b); 1 when anchored */
    int *behavior_blk;    /* BEHAVIOR_BLOCKS per behaviour                          */
    int spring_blk_cap, behavior_blk_cap;
} force_store;

/* forces.c: all forces on the particles of range r at state (x, v) and time t into f; the arrays
 * are indexed from the range's first particle. Springs and behaviours need the whole store. */
int forces_accumulate(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f);
bool forces_coupled(const imp_world *w); /* springs, behaviours, cloth or hair: forces that act on several particles */
void forces_particle_removed(imp_world *w, uint32_t slot);
double forces_spring_energy(const imp_world *w);
/* forces.c: the per-particle forces alone (gravity and drag: written, not added; fields: added) */
void forces_local(imp_world *w, const particle_range *r, const double *v, double *f);
int forces_fields(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f);

struct asm_ctx;
/* forces.c, for the implicit integrator: the springs' and behaviours' pairs, blocks and assembly */
void forces_pairs(imp_world *w, int **pairs, int *count, int *cap);
void forces_bind_blocks(imp_world *w, const bsr3 *A, const int *diag);
int forces_assemble(imp_world *w, struct asm_ctx *a, bool bound);

#endif

/* implicit.h: the implicit integrator of particles, cloth and hair (implicit.c). */
#ifndef IMPETUS_IMPLICIT_H
#define IMPETUS_IMPLICIT_H

#include "amg.h"
#include "cg.h"
#include "impetus.h"
#include "parallel.h"
#include "sparse.h"

/* implicit.c: the world's implicit step (particles_step calls it in place of imp_ode_advance), cleanup */
int implicit_step(imp_world *w, double t, double h, imp_profile *prof);
void implicit_free(imp_world *w);
void implicit_rebuild(imp_world *w); /* the pattern now (made on first use); snapshot.c restores after it */
bool implicit_current(const imp_world *w); /* the pattern was built for the particles as they are */

/* the implicit integrator's state (implicit.c): here so that snapshot.c saves what outlives a step (the
 * settings, the warm start dv, the multigrid hierarchy) */
typedef struct implicit_state {
    imp_implicit_settings set;
    bool built;
    uint64_t topology;
    int n, cap;          /* particles the pattern was built for; capacity of the per-particle arrays */
    bsr3 A;
    int *diag;           /* block index of (i, i)                                                  */
    int *tpos;           /* block index of the transpose of each block                             */
    int tpos_cap;
    /* blocks the filter changed in place, and their old values (9 each): one log per parallel chunk
     * of the filtered particles (each block is changed by one filtered particle only) */
    struct implicit_undo {
        int *at;
        double *val;
        int count, cap;
    } undo[PAR_CHUNKS];
    int *pairs, pair_cap;
    /* per-particle vectors, 3 doubles each */
    double *f, *bK, *b, *y, *z, *dv, *tmp;
    double *inv_m2;      /* 1 / m^2 per particle, for the stopping test                            */
    uint8_t *near;       /* per particle: its row has a block in a column where z is nonzero       */
    bool mg_current;     /* the multigrid's level-0 column-major copy holds the matrix as filtered now */
    int split[PAR_CHUNKS + 1]; /* row ranges of the parallel chunks (about equal blocks each)     */
    /* the filter */
    uint8_t *filter_kind;    /* 0 free; 1 all directions prescribed; 2, 3: one or two normals       */
    double *filter_normal;   /* 6 per particle: up to two orthonormal prescribed directions         */
    int *filtered, nfiltered; /* the particles with filter_kind != 0                               */
    int *filtered_rows;      /* the same in increasing order, those of parallel chunk c at          */
    int filtered_chunk[PAR_CHUNKS + 1]; /* filtered_rows[filtered_chunk[c] .. filtered_chunk[c + 1]) */
    uint8_t *contact_kind;   /* per resting contact: CONTACT_OFF, _SLIDE (normal held), _STICK (all) */
    double *contact_impulse; /* per resting contact: normal impulse (N s)                           */
    int contact_cap;
    cg_work cg;
    amg mg;
} implicit_state;

#endif

/* presolve.h: the pre-solve stage, contact modification by a callback before the solver (presolve.c). */
#ifndef IMPETUS_PRESOLVE_H
#define IMPETUS_PRESOLVE_H

#include "impetus.h"

/* the callback, and this step's modifications, one per manifold of the contact set (the solver reads
 * them through presolve_mod while they describe the present manifolds) */
typedef struct presolve_set {
    imp_pre_solve_fn fn;
    void *user;
    void (*release)(void *user);
    imp_contact_mod *mods; int mod_cap;
    uint8_t *called;          /* per manifold: 1 when the callback saw it (its mod holds)     */
    int count;                /* manifolds the mods describe                                   */
    long step;                /* the world's step count when they were made                    */
} presolve_set;

/* presolve.c */
/* calls the callback on every manifold with a side whose shape asked for it; nonzero when it failed
 * (the world error holds why; nothing was changed) */
int presolve_run(imp_world *w);
void presolve_free(imp_world *w);
/* this step's modification of manifold m, or NULL when it has none (no callback, not its shapes) */
const imp_contact_mod *presolve_mod(const imp_world *w, int m);

#endif

/* tinkertoy.h: constrained particle dynamics with Lagrange multipliers (tinkertoy.c). */
#ifndef IMPETUS_TINKERTOY_H
#define IMPETUS_TINKERTOY_H

#include "cg.h"
#include "ic0.h"
#include "ids.h"
#include "imp_math.h"
#include "impetus.h"
#include "sparse.h"

/* tinkertoy.c: constrained dynamics. Active while there are constraints or curve particles (the
 * parametric constraints of curve.c): the whole store is then one ODE, and particles_deriv adds the
 * constraint forces after the applied and contact forces, before a = f/m. */
bool tinker_active(const imp_world *w);
int tinker_constraint_forces(imp_world *w, const double *x, const double *v, double *f);
/* after the collision pass: velocities of constrained particles touching colliders projected so the
 * constraints' Cdot = 0 and no contact pulls (impulses). Returns nonzero when a callback failed */
int tinker_after_collide(imp_world *w);
void tinker_particle_removed(imp_world *w, uint32_t slot);
void tinker_free(imp_world *w);

/* the constraints and the solver's state (tinkertoy.c): here so that snapshot.c saves what outlives a step
 * (the store, the multipliers' warm start, J) */
typedef struct constraint {
    imp_constraint_def def;
    uint32_t slots[IMP_CONSTRAINT_MAX];
    int n, rows;
    double lambda[3];   /* the last solve                                                          */
    imp_vec3 e1, e2;    /* LINE: unit vectors across the line                                      */
    int row, j_first, j_count; /* where its rows and J blocks were in the last assembly           */
} constraint;

typedef struct tinker {
    idtable ids;
    constraint *constraint; /* dense by id                                                         */
    int constraint_cap, rows;
    imp_constraint_settings set;
    imp_constraint_stats stats;
    long stats_step;

    /* assembled in every derivative evaluation */
    jmat J, Jdot;
    int row_cap, n_cap;
    int lambda_loaded;        /* snapshot.c: entries of lambda a restore gave it (row_cap is 0 until the next solve) */
    double *C, *Cdot, *rhs, *lambda, *diag, *precond, *jdq, *mu;
    uint8_t *dead, *dead_base; /* rows left out of the solve (dead_base: before the active set)    */
    int ndead;
    double *winv;           /* n: 1/m of dynamic particles, 0 otherwise                            */
    uint8_t *touched;       /* n: the particle is in some constraint                               */
    struct touch { int p; imp_vec3 n; } *touch; /* tinker_after_collide's contacts                 */
    int touch_cap;
    int ncontact;           /* resting-contact rows after the constraint rows (see contact_rows)   */
    long contact_step;      /* the step those rows were made for                                   */
    long pattern_step;      /* the step and contact rows the IC pattern was built for              */
    int pattern_ncontact;
    int *curve_of;          /* n: curve index of a curve particle, -1 otherwise                    */
    double *afree, *jt_y;   /* 3n: W Q (plus curve terms); J^T y (scaled by W in the projection)   */
    double *curve_du;       /* per curve particle: the coordinate change of a W product (W g = t du) */
    int curve_du_cap;
    cg_work cg;
    bool warm_ok;           /* the last solve converged: start the next one from its lambda        */
    bool rows_valid;        /* lambda[] holds the multipliers in the rows of the present set       */
    double reg;             /* > 0 while solving the regularized fallback (A + reg D) lambda = b   */
    bool j_valid;           /* J still matches the constraint set (for imp_constraint_force)       */

    /* the preconditioner: IC(0) of A = J W J^T, and the pairs of J blocks (same particle) that sum
     * into each of its entries. The pattern is rebuilt when the set changes. */
    ic0 ic;
    bool pattern_dirty;
    int *pair, *pair_rows, *pair_entry; /* per pair: J entries a, b (2); their rows (2); entry of A */
    int npairs, pair_cap;
    int *bucket_start, *bucket, bucket_n_cap, bucket_e_cap; /* preconditioner_pattern's scratch   */
    int j_entries;          /* J blocks one assembly writes (fixed per constraint set)             */
} tinker;

/* the multipliers of the rows there are, as far as the array holds them: constraints made since the
 * last solve have rows beyond it until the next (its length: row_cap, or what a restore gave it) */
static inline int tinker_lambda_count(const tinker *t)
{
    if (!t->lambda) return 0;
    const int len = t->row_cap > 0 ? t->row_cap : t->lambda_loaded;
    return t->rows + t->ncontact < len ? t->rows + t->ncontact : len;
}

#endif

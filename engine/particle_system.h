/* particle_system.h: the particle system as a stage of the step (particle_system.c). */
#ifndef IMPETUS_PARTICLE_SYSTEM_H
#define IMPETUS_PARTICLE_SYSTEM_H

#include "parallel.h"
#include "particles.h"
#include "step.h"

/* particle_system.c: the particle stage's persistent part */
typedef struct particle_system {
    imp_ode_solver solver;          /* the world's ODE solver for the particles (its adaptive h carries over) */
    imp_ode_solver chunk_solver[PAR_CHUNKS]; /* a separable system's blocks on both threads: each chunk's scratch */
    double *state0; int state0_cap; /* [x | v | u | u'] at the start of the step (resting particles placed) */
    struct particle_snap { int particle; double x[3], v[3]; } *snapped; /* what the attachments and resting contacts replaced */
    int snapped_count, snapped_cap;
    double *force; int force_cap;   /* the force accumulator of one derivative evaluation, 3 per particle   */
    double *now_X, *now_dX; int now_cap; /* imp_world_solve_constraints's state and derivative             */
} particle_system;
particle_system *particle_system_create(imp_method method, double tolerance);
void particle_system_free(particle_system *ps);
imp_ode_system particles_ode(imp_world *w, int first, int count, particle_range *r);
void particles_step_begin(const imp_step *st); /* before particle_contacts_rest: the state at the start */
int particles_step(const imp_step *st);
int particles_nan_guard(imp_world *w);
void particles_undo(imp_world *w); /* a callback failed: the particles as the script left them */

#endif

/* curve.h: particles bound to curves (curve.c), S3's parametric constraints (section 5). */
#ifndef IMPETUS_CURVE_H
#define IMPETUS_CURVE_H

#include "imp_math.h"
#include "impetus.h"

/* one particle on a curve x(u): its coordinate u and rate u' are state, the particle is placed from
 * them */
typedef struct curve {
    imp_curve_def def;
    uint32_t slot;          /* the particle                                                        */
    double u, udot;         /* committed                                                           */
    imp_vec3 xu, xuu;       /* x_u and x_uu at the last placement                                  */
    double ud, inv_tt;      /* u' there, and 1 / (x_u . x_u) (0 where the curve is degenerate)     */
} curve;

/* curve.c: the curve particles of a world (NULL until the first) */
typedef struct curve_set {
    curve *curve;
    int count, cap;
    double *placed; int placed_cap; /* [x | v] of the store with the curve particles placed (curves_place) */
} curve_set;

/* The ODE. While there are curve particles the whole store is one ODE whose state is
 * [x | v | u | udot] (particle_system.c): curves_place puts the curve particles on their curves
 * before the forces, curves_deriv gives their u' and u'' after them. */
int curves_count(const imp_world *w);
int curves_state_dim(const imp_world *w);            /* 2 per curve particle                      */
void curves_get_state(const imp_world *w, double *U);
void curves_set_state(imp_world *w, const double *U);
/* x, v: the state's positions and velocities with the curve particles put at x(u), x_u udot */
int curves_place(imp_world *w, const double *X, int n, const double **x, const double **v);
void curves_deriv(imp_world *w, int n, const double *U, const double *f, double *dX);
/* after the ODE step: curve particles exactly on their curves; u put back where non-finite (U0: the
 * saved [u | udot]). Returns nonzero when a callback failed */
int curves_after_integrate(imp_world *w, const double *U0);
void curves_particle_removed(imp_world *w, uint32_t slot);
void curves_free(imp_world *w);

/* For the constraint solver (tinkertoy.c). A curve particle accelerates only along its tangent
 * t = x_u, so its block of W = M^-1 is t t^T / (m t.t): g1 . W g2, and W g = t du with du the
 * coordinate change below. */
static inline double curve_w_dot(const curve *cv, imp_vec3 g1, imp_vec3 g2, double inv_m)
{
    return v3_dot(cv->xu, g1) * v3_dot(cv->xu, g2) * cv->inv_tt * inv_m;
}
static inline double curve_w_coordinate(const curve *cv, imp_vec3 g, double inv_m)
{
    return v3_dot(cv->xu, g) * cv->inv_tt * inv_m;
}
/* the acceleration of curve particle cv (dense index p) under the forces f without constraint
 * forces: t u''_free + x_uu u'^2, u''_free from Lagrange's equation (top of curve.c) */
imp_vec3 curve_free_acceleration(const imp_world *w, const curve *cv, int p, const double *f);
/* 1 / (x_u . x_u) of every curve particle from its tangent at the committed u */
void curves_committed_tangents(imp_world *w);
/* u += du, the particle put at x(u) with velocity x_u u'; nonzero when the curve's callback failed */
int curve_move(imp_world *w, curve *cv, double du);
/* u' += dudot, the particle's velocity x_u u' */
void curve_push(imp_world *w, curve *cv, double dudot);

#endif

/* impetus.h: the public C API of the impetus dynamics engine.
 *
 * Everything a C program (or the Lua bindings, or the renderer) may call. Objects are named by ids
 * with a generation counter, so a handle to a destroyed object is detected instead of reused.
 * Objects are created from def structs; every def has a *_def_default() giving sane defaults.
 * SI units (metres, kilograms, seconds, radians), y up, doubles throughout. */
#ifndef IMPETUS_H
#define IMPETUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imp_math.h"

/* ---- ids and status ----------------------------------------------------------------------------- */

/* A handle: slot index plus generation. generation 0 is never handed out, so {0,0} is "no object". */
typedef struct imp_id { uint32_t index, generation; } imp_id;
static inline bool imp_id_is_null(imp_id id) { return id.generation == 0; }

typedef enum imp_status {
    IMP_OK = 0,
    IMP_ERR_CALLBACK, /* a user callback (force field, behaviour) reported an error: the step was undone */
    IMP_ERR_NAN,      /* a non-finite value appeared: the offending objects were reset, see the message  */
    IMP_ERR_LOCKED,   /* the world was changed from inside its own step                                  */
    IMP_ERR_ARG,      /* an argument was out of range                                                    */
    IMP_ERR_STEP      /* the adaptive integrator gave up (IMP_ODE_SUBSTEPS), see the message             */
} imp_status;

/* ---- the range of inputs ---------------------------------------------------------------------------
 * What a script gives the engine lies in this range; the bindings refuse a value beyond it with an
 * error that names the field (README, "Limits"). Positions lie within IMP_MAX_COORD of the origin:
 * there a double resolves 1.2e-10 m, four orders finer than the contact tolerance (SHAPE_TOUCH,
 * 1 um). Sizes (radii, half extents, a hull's points, a mesh's vertices about the body) lie in
 * IMP_MIN_SIZE .. IMP_MAX_SIZE, speeds up to IMP_MAX_SPEED and angular speeds up to IMP_MAX_SPIN. The
 * simulation itself may carry a body beyond them (a body that falls for ten minutes); the collision
 * stages stay correct there, only less precise. */
#define IMP_MAX_COORD 1e6 /* m   */
#define IMP_MIN_SIZE 1e-4 /* m   */
#define IMP_MAX_SIZE 1e6  /* m   */
#define IMP_MAX_SPEED 1e6 /* m/s */
#define IMP_MAX_SPIN 1e6  /* rad/s */
/* the NaN guard (a step's last stage) treats a particle or body beyond these as blown up, as if it had
 * gone non-finite: a thousand times the input limits, far past any motion the solvers follow, where
 * products of the state would soon overflow (a quaternion of norm 1e178 normalizes to zero) */
#define IMP_GUARD_COORD (1e3 * IMP_MAX_COORD) /* m     */
#define IMP_GUARD_SPEED (1e3 * IMP_MAX_SPEED) /* m/s   */
#define IMP_GUARD_SPIN (1e3 * IMP_MAX_SPIN)   /* rad/s */

/* ---- ODE solvers (engine/ode.c) ------------------------------------------------------------------ */

/* IMP_IMPLICIT is linearized backward Euler (engine/implicit.c): for a world, the second-order
 * form with analytic force Jacobians and a filtered CG solve; for a generic system, a
 * finite-difference Jacobian and a dense solve (small systems only). */
typedef enum imp_method { IMP_EULER, IMP_MIDPOINT, IMP_RK4, IMP_ADAPTIVE, IMP_IMPLICIT, IMP_METHOD_COUNT } imp_method;

/* imp_ode_step / imp_ode_advance return this when IMP_IMPLICIT meets a singular matrix */
#define IMP_ODE_SINGULAR (-1)
/* imp_ode_advance returns this when IMP_ADAPTIVE would need more than max_substeps attempts to reach
 * the end of the span (the tolerance is out of reach: a stiff system, or a span far beyond its time
 * scales); the state is left as it was */
#define IMP_ODE_SUBSTEPS (-2)
#define IMP_ODE_MAX_SUBSTEPS 100 /* the default max_substeps: 1,200 evaluations with RK4 doubled */

/* S3's solver interface: the solver sees a black box with a dimension, a state it can read and
 * install, and a derivative. deriv evaluates dx/dt = f(x, t) at the state x it is given (which is
 * "set the state, then evaluate" without the copy); it returns 0, or nonzero to abort the step. */
typedef struct imp_ode_system {
    int dim;
    void *ctx;
    void (*get_state)(void *ctx, double *x);
    void (*set_state)(void *ctx, const double *x);
    int (*deriv)(void *ctx, double t, const double *x, double *dxdt);
} imp_ode_system;

/* A solver: the method, its settings, and scratch space reused from step to step. */
typedef struct imp_ode_solver {
    imp_method method;
    imp_method base;     /* IMP_ADAPTIVE: the method whose steps are doubled (default RK4)           */
    double tolerance;    /* IMP_ADAPTIVE: largest accepted error per step (max norm), default 1e-6   */
    double h;            /* IMP_ADAPTIVE: the step size it will try next (0: start from the full step) */
    double h_min;        /* IMP_ADAPTIVE: never step smaller than this (default 1e-9)                */
    double max_growth;   /* IMP_ADAPTIVE: largest factor h may grow by per step (default 5)          */
    long max_substeps;   /* IMP_ADAPTIVE: attempts (accepted or not) an advance may take; it gives up
                          * with IMP_ODE_SUBSTEPS (default IMP_ODE_MAX_SUBSTEPS)                     */
    long steps, rejected, evaluations; /* counters since creation                                    */
    long gave_up;        /* IMP_ADAPTIVE: advances that ended with IMP_ODE_SUBSTEPS, since creation  */
    double *work;        /* scratch, owned                                                           */
    int work_dim;        /* doubles in work                                                          */
} imp_ode_solver;

void imp_ode_solver_init(imp_ode_solver *s, imp_method method);
void imp_ode_solver_free(imp_ode_solver *s);
/* advance the system from time t by h (get_state, step(s), set_state); returns the deriv error, or 0 */
int imp_ode_advance(const imp_ode_system *sys, imp_ode_solver *s, double t, double h);
/* one step of a fixed-step method on x in place: x(t) -> x(t + h) */
int imp_ode_step(const imp_ode_system *sys, imp_ode_solver *s, imp_method m, double *x, double t, double h);
/* the step-size factor S3 derives: (tol / err)^(1 / (order + 1)) for a method of the given order */
double imp_ode_adapt_factor(double err, double tol, int order);
int imp_ode_order(imp_method m);          /* 1, 2, 4; implicit: 1; adaptive: 0 */
const char *imp_method_name(imp_method m);  /* "euler", "midpoint", "rk4", "adaptive", "implicit" */
int imp_method_from_name(const char *name); /* -1 when unknown */

/* ---- world (engine/world.c) --------------------------------------------------------------------- */

typedef struct imp_world imp_world;

typedef struct imp_world_def {
    imp_vec3 gravity;      /* default (0, -9.81, 0)                         */
    double drag;           /* global viscous drag k_d: f = -k_d v, default 0 */
    imp_method integrator; /* default IMP_RK4                                */
    double tolerance;      /* adaptive integrator tolerance, default 1e-6   */
} imp_world_def;

/* milliseconds spent in each stage of the last step */
typedef struct imp_profile {
    double forces, integrate, collide, total;
    int evaluations; /* derivative evaluations in the last step */
    double bodies, contacts; /* rigid bodies: integrate; broad + narrow phase + contacts           */
    int pairs, manifolds;    /* broad-phase pairs and touching manifolds of the last step          */
    int cg_iterations;   /* IMP_IMPLICIT: conjugate gradient iterations of the last step      */
    double cg_residual;  /* IMP_IMPLICIT: its final relative residual, max_i |r_i|/m_i over max_i |S b|_i/m_i */
    int particle_contacts; /* contacts of particles with bodies, with each other, and (in pairs) with colliders */
} imp_profile;

imp_world_def imp_world_def_default(void);
imp_world *imp_world_create(const imp_world_def *def);
void imp_world_destroy(imp_world *w);
/* advance by dt; on error the world is left as it was before the call and imp_world_error says why */
imp_status imp_world_step(imp_world *w, double dt);
const char *imp_world_error(const imp_world *w);
bool imp_world_locked(const imp_world *w);  /* true while a step runs (callbacks must not edit)  */
double imp_world_time(const imp_world *w);
long imp_world_step_count(const imp_world *w);
imp_profile imp_world_profile(const imp_world *w);
imp_vec3 imp_world_gravity(const imp_world *w);
void imp_world_set_gravity(imp_world *w, imp_vec3 g);
double imp_world_drag(const imp_world *w);
void imp_world_set_drag(imp_world *w, double kd);
imp_method imp_world_integrator(const imp_world *w);
void imp_world_set_integrator(imp_world *w, imp_method m);
double imp_world_tolerance(const imp_world *w);
void imp_world_set_tolerance(imp_world *w, double tol);
/* kinetic energy, and potential energy: gravity (zero at the origin) plus springs */
double imp_world_kinetic_energy(const imp_world *w);
double imp_world_potential_energy(const imp_world *w);
/* linear momentum (sum of m v and of the bodies' P) and angular momentum about the origin (sum of
 * x x m v, and of x x P + L for the bodies), kg m/s and kg m^2/s */
void imp_world_momentum(const imp_world *w, imp_vec3 *linear, imp_vec3 *angular);

/* ---- particles (engine/particles.c) --------------------------------------------------------------- */

typedef enum imp_motion {
    IMP_DYNAMIC,   /* moved by forces                                                   */
    IMP_FIXED,     /* never moves: an anchor                                             */
    IMP_KINEMATIC, /* moved by the script: follows its velocity, unaffected by forces   */
    IMP_CURVE      /* bound to a curve x(u), moved through its coordinate u (curve.c) */
} imp_motion;

typedef struct imp_particle_def {
    imp_vec3 position, velocity;
    double mass;        /* kg, > 0; default 1                               */
    double radius;      /* collision and drawing radius, default 0.05 m     */
    imp_motion motion;  /* default IMP_DYNAMIC                               */
    float color[4];     /* drawing colour, default orange                    */
    double restitution; /* against bodies and other particles, in [0, 1], default 0 (combined
                         * with the other side's as two bodies' are: the larger one)          */
    double friction;    /* Coulomb coefficient against bodies and other particles, >= 0,
                         * default 0.5 (combined as two bodies' are: sqrt(mu_a mu_b))       */
} imp_particle_def;

imp_particle_def imp_particle_def_default(void);
imp_id imp_particle_create(imp_world *w, const imp_particle_def *def);
/* destroys the particle and every spring, behaviour and field entry attached to it */
void imp_particle_destroy(imp_world *w, imp_id id);
bool imp_particle_valid(const imp_world *w, imp_id id);
imp_vec3 imp_particle_position(const imp_world *w, imp_id id);
imp_vec3 imp_particle_velocity(const imp_world *w, imp_id id);
void imp_particle_set_position(imp_world *w, imp_id id, imp_vec3 p);
void imp_particle_set_velocity(imp_world *w, imp_id id, imp_vec3 v);
double imp_particle_mass(const imp_world *w, imp_id id);
void imp_particle_set_mass(imp_world *w, imp_id id, double m);
double imp_particle_radius(const imp_world *w, imp_id id);
void imp_particle_set_radius(imp_world *w, imp_id id, double r);
imp_motion imp_particle_motion(const imp_world *w, imp_id id);
void imp_particle_set_motion(imp_world *w, imp_id id, imp_motion m);
void imp_particle_color(const imp_world *w, imp_id id, float rgba[4]);
void imp_particle_set_color(imp_world *w, imp_id id, const float rgba[4]);
double imp_particle_restitution(const imp_world *w, imp_id id);
double imp_particle_friction(const imp_world *w, imp_id id);
/* false (and nothing changes) unless restitution is in [0, 1] / friction a finite number >= 0 */
bool imp_particle_set_restitution(imp_world *w, imp_id id, double e);
bool imp_particle_set_friction(imp_world *w, imp_id id, double mu);
/* kinematic particles: aim at target so that it is reached at the end of the next step of length dt */
void imp_particle_move_to(imp_world *w, imp_id id, imp_vec3 target, double dt);

/* bulk read access for drawing: dense arrays of imp_particle_count() entries, valid until the next
 * create/destroy. positions and velocities hold 3 doubles per particle, colors 4 floats. */
int imp_particle_count(const imp_world *w);
imp_id imp_particle_id(const imp_world *w, int i); /* id of the i-th particle in the dense arrays */
const double *imp_particle_positions(const imp_world *w);
const double *imp_particle_velocities(const imp_world *w);
const double *imp_particle_radii(const imp_world *w);
const float *imp_particle_colors(const imp_world *w);

/* ---- particles meeting bodies and each other (engine/particle_contact.c, engine/particle_attach.c) ---- */

/* Particles collide with every body's shapes always, both ways (the body takes the opposite impulse);
 * with each other only when this is on (default off) */
void imp_world_set_particle_collisions(imp_world *w, bool on);
bool imp_world_particle_collisions(const imp_world *w);
/* pins particle p to the point `at` (world, now) of body b: the particle moves with that point, and
 * the body carries it (its weight and what pulls on it); replaces an earlier attachment of p. A fixed
 * or kinematic particle holds nothing while it is so. IMP_ERR_ARG for stale ids, a curve particle or a
 * non-finite point, IMP_ERR_LOCKED during a step (imp_world_error says why). */
imp_status imp_particle_attach(imp_world *w, imp_id p, imp_id b, imp_vec3 at);
void imp_particle_detach(imp_world *w, imp_id p);
/* p's body, its point (world, now) and the impulse p gave the body in the last step; false: none */
bool imp_particle_attachment(const imp_world *w, imp_id p, imp_id *b, imp_vec3 *at, imp_vec3 *impulse);

/* ---- forces (engine/forces.c) --------------------------------------------------------------------- */

/* A damped spring (S3 eq. 1) between two particles, or between a particle and a world point
 * (b null: the anchor), which is how the mouse spring is built. */
typedef struct imp_spring_def {
    imp_id a, b;
    imp_vec3 anchor;  /* used when b is null                    */
    double ks, kd;    /* stiffness N/m (default 100), damping N s/m (default 1) */
    double rest;      /* rest length; negative: the current distance (default)  */
} imp_spring_def;

imp_spring_def imp_spring_def_default(void);
imp_id imp_spring_create(imp_world *w, const imp_spring_def *def);
void imp_spring_destroy(imp_world *w, imp_id id);
bool imp_spring_valid(const imp_world *w, imp_id id);
imp_spring_def imp_spring_get(const imp_world *w, imp_id id);
void imp_spring_set(imp_world *w, imp_id id, const imp_spring_def *def); /* a and b are kept */
int imp_spring_count(const imp_world *w);
/* endpoints of spring i (0 <= i < count) for drawing */
void imp_spring_endpoints(const imp_world *w, int i, imp_vec3 *a, imp_vec3 *b);

/* A force from an energy function (S3 eq. 2): a behaviour function C(x_1..x_n) with gradients
 * dC/dx_i gives f_i = (-ks C - kd Cdot) dC/dx_i. Built-in kinds, or a callback for any other C. */
typedef enum imp_behavior_kind {
    IMP_BEHAVE_DISTANCE,  /* C = |x1 - x2| - rest                   (2 particles)              */
    IMP_BEHAVE_COINCIDE,  /* C = x1 - x2, three rows                (2 particles)              */
    IMP_BEHAVE_ANCHOR,    /* C = x1 - point, three rows             (1 particle)               */
    IMP_BEHAVE_PLANE,     /* C = n . x1 - offset                    (1 particle)               */
    IMP_BEHAVE_CALLBACK   /* C and its gradients from fn           (1..8 particles)            */
} imp_behavior_kind;

#define IMP_BEHAVE_MAX 8
/* callback: given positions x[3n], write C and grad[3n] (dC/dx_i); return nonzero on error */
typedef int (*imp_behavior_fn)(void *user, int n, const double *x, double *C, double *grad);

typedef struct imp_behavior_def {
    imp_behavior_kind kind;
    int n;
    imp_id particles[IMP_BEHAVE_MAX];
    double ks, kd;
    double rest;         /* DISTANCE                                */
    imp_vec3 point;      /* ANCHOR                                  */
    imp_vec3 normal;     /* PLANE (unit)                            */
    double offset;       /* PLANE                                   */
    imp_behavior_fn fn;  /* CALLBACK                                */
    void *user;
    void (*release)(void *user); /* called when the behaviour is destroyed (may be NULL) */
} imp_behavior_def;

imp_behavior_def imp_behavior_def_default(void);
imp_id imp_behavior_create(imp_world *w, const imp_behavior_def *def);
void imp_behavior_destroy(imp_world *w, imp_id id);
bool imp_behavior_valid(const imp_world *w, imp_id id);

/* A force field: a callback giving the force on each particle from its position and velocity and
 * the time. It is called inside every derivative evaluation while the world is locked. */
typedef int (*imp_field_fn)(void *user, const double x[3], const double v[3], double t, double f[3]);

typedef struct imp_field_def {
    imp_field_fn fn;
    void *user;
    void (*release)(void *user); /* called when the field is destroyed (may be NULL) */
} imp_field_def;

imp_id imp_field_create(imp_world *w, const imp_field_def *def);
void imp_field_destroy(imp_world *w, imp_id id);
bool imp_field_valid(const imp_world *w, imp_id id);

/* ---- static colliders for particles (engine/particle_collide.c) ------------------------------------ */

typedef enum imp_collider_shape { IMP_COLLIDER_PLANE, IMP_COLLIDER_SPHERE, IMP_COLLIDER_BOX } imp_collider_shape;

typedef struct imp_collider_def {
    imp_collider_shape shape;
    imp_vec3 position;     /* plane: a point on it; sphere, box: the centre     */
    imp_vec3 normal;       /* plane: unit normal pointing to the free side      */
    double radius;         /* sphere                                            */
    imp_vec3 half;         /* box: half extents                                 */
    imp_mat3 rotation;     /* box: orientation (rows: world = R * local)        */
    double restitution;    /* default 0.5                                       */
    double friction;       /* Coulomb coefficient, default 0.5                  */
    bool sensor;           /* detects bodies' shapes overlapping it, pushes nothing (sensor.c) */
    bool pre_solve;        /* its contacts with bodies go to the pre-solve callback */
} imp_collider_def;

imp_collider_def imp_collider_def_default(void);
imp_id imp_collider_create(imp_world *w, const imp_collider_def *def);
void imp_collider_destroy(imp_world *w, imp_id id);
bool imp_collider_valid(const imp_world *w, imp_id id);
void imp_collider_set(imp_world *w, imp_id id, const imp_collider_def *def); /* move or retune */
imp_collider_def imp_collider_def_of(const imp_world *w, imp_id id);
int imp_collider_count(const imp_world *w);
imp_collider_def imp_collider_get(const imp_world *w, int i); /* i-th collider, for drawing */
/* number of particles in resting contact after the last step */
int imp_contact_count(const imp_world *w);

/* ---- constrained dynamics: tinkertoys (engine/tinkertoy.c) ------------------------------------------ */

/* Constraints on particles held by Lagrange multipliers (S3 "Constrained dynamics", eq. 11): each
 * constraint is one or more scalar rows C(x) = 0; inside every derivative evaluation the engine
 * solves J W J^T lambda = -Jdot qdot - J W Q - ks C - kd Cdot and adds the constraint force
 * J^T lambda to the applied forces, so it works with every integrator. */
typedef enum imp_constraint_kind {
    IMP_CONSTRAINT_PIN,      /* x = point                                    3 rows, 1 particle      */
    IMP_CONSTRAINT_ROD,      /* |xa - xb| = length                           1 row,  2 particles     */
    IMP_CONSTRAINT_WIRE,     /* on the circle (center, radius, normal)       2 rows, 1 particle      */
    IMP_CONSTRAINT_PLANE,    /* normal . (x - point) = 0                     1 row,  1 particle      */
    IMP_CONSTRAINT_LINE,     /* on the line point + s direction              2 rows, 1 particle      */
    IMP_CONSTRAINT_CALLBACK  /* C(x_1..x_n) = 0 from a callback              1 row,  1..8 particles  */
} imp_constraint_kind;

#define IMP_CONSTRAINT_MAX 8
/* callback: given positions x[3n], write C and, when it can, the gradients grad[3n] (dC/dx_i) and set
 * *have_grad = 1; otherwise the engine differentiates C numerically. Return nonzero on error. */
typedef int (*imp_constraint_fn)(void *user, int n, const double *x, double *C, double *grad, int *have_grad);

typedef struct imp_constraint_def {
    imp_constraint_kind kind;
    int n;                                  /* CALLBACK: number of particles                       */
    imp_id particles[IMP_CONSTRAINT_MAX];
    imp_vec3 point;     /* PIN: the fixed point; PLANE, LINE: a point on it                        */
    imp_vec3 normal;    /* PLANE: unit normal; WIRE: the circle's axis (default (0, 0, 1))         */
    imp_vec3 direction; /* LINE: direction (any length)                                            */
    imp_vec3 center;    /* WIRE                                                                    */
    double radius;      /* WIRE, > 0                                                               */
    double length;      /* ROD, > 0; negative: the current distance (default)                      */
    float color[4];     /* drawing colour                                                          */
    imp_constraint_fn fn;        /* CALLBACK                                                        */
    void *user;
    void (*release)(void *user); /* called when the constraint is destroyed (may be NULL)          */
} imp_constraint_def;

imp_constraint_def imp_constraint_def_default(void);
/* a null id when a particle is stale or a parameter is out of range */
imp_id imp_constraint_create(imp_world *w, const imp_constraint_def *def);
void imp_constraint_destroy(imp_world *w, imp_id id);
bool imp_constraint_valid(const imp_world *w, imp_id id);
imp_constraint_def imp_constraint_get(const imp_world *w, imp_id id);
void imp_constraint_set(imp_world *w, imp_id id, const imp_constraint_def *def); /* point, length, color */
int imp_constraint_rows(const imp_world *w, imp_id id);
/* the Lagrange multipliers of the last solve (rows values) and the constraint force J_i^T lambda
 * they put on the constraint's i-th particle */
int imp_constraint_lambda(const imp_world *w, imp_id id, double lambda[3]);
imp_vec3 imp_constraint_force(const imp_world *w, imp_id id, int i);
/* C at the committed state (rows values); returns the row count, or -1 when a callback failed */
int imp_constraint_value(imp_world *w, imp_id id, double C[3]);
int imp_constraint_count(const imp_world *w);
imp_id imp_constraint_id(const imp_world *w, int i); /* the i-th constraint, for drawing */
/* largest |C| over all rows at the committed state (0 without constraints, -1 when a callback failed) */
double imp_world_constraint_error(imp_world *w);
/* solve for the constraint forces at the committed state without stepping (fills lambda and force) */
imp_status imp_world_solve_constraints(imp_world *w);

typedef enum imp_preconditioner { IMP_PRECOND_NONE, IMP_PRECOND_JACOBI, IMP_PRECOND_IC0 } imp_preconditioner;

typedef struct imp_constraint_settings {
    double ks, kd;          /* feedback: the solve asks for Cddot = -ks C - kd Cdot (default 100, 20)    */
    double tolerance;       /* CG stops when |r| <= tolerance |b| (default 1e-9)                          */
    int max_iterations;     /* CG iterations per solve; 0: automatic (2 rows + 10)                        */
    imp_preconditioner preconditioner; /* default IMP_PRECOND_IC0: incomplete Cholesky of J W J^T         */
} imp_constraint_settings;

imp_constraint_settings imp_world_constraint_settings(const imp_world *w);
void imp_world_set_constraint_settings(imp_world *w, const imp_constraint_settings *s);

/* what the constraint solves of the last step cost */
typedef struct imp_constraint_stats {
    int rows;               /* scalar constraint rows                                                     */
    int solves;             /* CG solves (one per derivative evaluation)                                  */
    int iterations;         /* CG iterations, summed over the solves                                      */
    int max_iterations;     /* the most any one solve took                                                */
    double residual;        /* the largest relative residual |r| / |b| a solve stopped at                 */
    double max_error;       /* the largest |C| the solves saw (at the integrator's stage states)          */
    double ms;              /* time spent assembling and solving                                          */
} imp_constraint_stats;

imp_constraint_stats imp_world_constraint_stats(const imp_world *w);

/* Parametric constraints (S3 section 5): a particle bound to a curve x(u) is simulated in the coordinate
 * u (Lagrangian dynamics). The callback gives x(u) and, when it can, x_u and x_uu (set bits 1 and 2 of
 * *have); the engine differentiates numerically otherwise. Return nonzero on error. */
typedef int (*imp_curve_fn)(void *user, double u, double x[3], double xu[3], double xuu[3], int *have);

typedef struct imp_curve_def {
    imp_curve_fn fn;
    void *user;
    void (*release)(void *user);
    double u, udot;            /* initial coordinate and its rate                                   */
    double u_min, u_max;       /* range drawn by the renderer (u_min == u_max: the curve is not drawn) */
    imp_particle_def particle; /* mass, radius, colour (position and velocity come from the curve)  */
} imp_curve_def;

imp_curve_def imp_curve_def_default(void);
/* creates a particle on the curve (motion IMP_CURVE) and returns its id; null when fn fails */
imp_id imp_curve_particle_create(imp_world *w, const imp_curve_def *def);
bool imp_particle_on_curve(const imp_world *w, imp_id particle);
double imp_curve_particle_u(const imp_world *w, imp_id particle);
double imp_curve_particle_udot(const imp_world *w, imp_id particle);
/* move a curve particle to u with rate udot (puts it on the curve; IMP_ERR_CALLBACK when fn fails) */
imp_status imp_curve_particle_set(imp_world *w, imp_id particle, double u, double udot);
/* samples of the curve of a curve particle for drawing: n points over [u_min, u_max] into xyz[3n];
 * returns how many were written (0: no range, or fn failed) */
int imp_curve_particle_sample(imp_world *w, imp_id particle, int n, double *xyz);
int imp_curve_particle_count(const imp_world *w);
imp_id imp_curve_particle_id(const imp_world *w, int i);
/* ---- rigid bodies (engine/body.c, mass.c) ----------------------------------------------------------
 * S3 "Rigid body dynamics": state X = (x, q, P, L) per body, x the centre of mass, q a unit
 * quaternion, P = M v, L = I(t) omega with I(t) = R I_body R^T. A body is made of shapes, all placed
 * relative to the body's origin; the origin and the centre of mass differ for compounds. */

typedef enum imp_shape_type {
    IMP_SHAPE_SPHERE, IMP_SHAPE_CAPSULE, IMP_SHAPE_BOX, IMP_SHAPE_HULL, IMP_SHAPE_MESH, IMP_SHAPE_PLANE,
    IMP_SHAPE_TYPE_COUNT
} imp_shape_type;

typedef struct imp_shape_def {
    imp_shape_type type;
    imp_vec3 position;       /* offset from the body origin, body frame                          */
    imp_quat orientation;    /* relative to the body frame                                       */
    double radius;           /* sphere, capsule                                                  */
    double half_height;      /* capsule: half the length of its core segment, along local y       */
    imp_vec3 half;           /* box: half extents                                                */
    const double *points;    /* hull: point cloud (3 per point); the engine builds the hull       */
    int point_count;
    const double *vertices;  /* mesh: 3 per vertex                                               */
    int vertex_count;
    const int *triangles;    /* mesh: 3 vertex indices per triangle (counter-clockwise = front)   */
    int triangle_count;
    imp_vec3 normal;         /* plane: n . p = offset in the body frame                          */
    double offset;
    double density;          /* kg/m^3, default 1000                                             */
    /* contact material (impulse.c): Coulomb coefficients while sliding (friction, default 0.5) and
     * while sticking (static_friction; < 0, the default, means equal to friction); restitution, 0..1 */
    double friction, static_friction, restitution;
    /* a sensor detects the shapes that overlap it (sensor.c: begin and end events, imp_world_overlaps)
     * and never pushes: its pairs make no contact manifold. pre_solve: the world's pre-solve callback
     * sees the contacts of this shape before the solver (imp_world_set_pre_solve) */
    bool sensor, pre_solve;
} imp_shape_def;

typedef struct imp_body_def {
    imp_vec3 position;       /* the body origin                                                  */
    imp_quat orientation;
    imp_vec3 velocity, angular_velocity;  /* of the centre of mass, world frame                    */
    imp_motion motion;       /* IMP_DYNAMIC (default), IMP_FIXED (static), IMP_KINEMATIC           */
    double mass;             /* > 0: scales the shapes' densities to give this mass; 0: densities  */
    uint32_t group, mask;    /* body a and b may touch when (a.group & b.mask) && (b.group & a.mask) */
    float color[4];
    const imp_shape_def *shapes;
    int shape_count;
    bool bullet;             /* continuous collision against the other bodies and colliders (toi.c) */
    double linear_damping, angular_damping; /* 1/s, >= 0 (default 0): P, L decay as exp(-c t)          */
    double gravity_scale;    /* the body feels gravity_scale g (default 1; |.| <= IMP_MAX_GRAVITY_SCALE) */
} imp_body_def;
#define IMP_MAX_GRAVITY_SCALE 1e6

imp_shape_def imp_shape_def_default(imp_shape_type type);
imp_body_def imp_body_def_default(void);
/* returns a null id and sets the world error when the def is unusable (no shapes, bad hull, ...) */
imp_id imp_body_create(imp_world *w, const imp_body_def *def);
void imp_body_destroy(imp_world *w, imp_id id);
bool imp_body_valid(const imp_world *w, imp_id id);
int imp_body_count(const imp_world *w);
imp_id imp_body_id(const imp_world *w, int i);

imp_vec3 imp_body_position(const imp_world *w, imp_id id);        /* the body origin             */
imp_vec3 imp_body_center_of_mass(const imp_world *w, imp_id id);  /* x                           */
imp_quat imp_body_orientation(const imp_world *w, imp_id id);
imp_vec3 imp_body_velocity(const imp_world *w, imp_id id);        /* of the centre of mass       */
imp_vec3 imp_body_angular_velocity(const imp_world *w, imp_id id);
imp_vec3 imp_body_momentum(const imp_world *w, imp_id id);        /* P                           */
imp_vec3 imp_body_angular_momentum(const imp_world *w, imp_id id);/* L                           */
double imp_body_mass(const imp_world *w, imp_id id);              /* 0 for static bodies         */
imp_mat3 imp_body_inertia(const imp_world *w, imp_id id);         /* world frame, about x        */
imp_mat3 imp_body_inertia_body(const imp_world *w, imp_id id);    /* body frame, about x         */
imp_vec3 imp_body_force(const imp_world *w, imp_id id);           /* accumulated for the next step */
imp_vec3 imp_body_torque(const imp_world *w, imp_id id);
imp_motion imp_body_motion(const imp_world *w, imp_id id);
double imp_body_kinetic_energy(const imp_world *w, imp_id id);
void imp_body_set_position(imp_world *w, imp_id id, imp_vec3 origin);
void imp_body_set_orientation(imp_world *w, imp_id id, imp_quat q);
void imp_body_set_velocity(imp_world *w, imp_id id, imp_vec3 v);
void imp_body_set_angular_velocity(imp_world *w, imp_id id, imp_vec3 omega);
void imp_body_set_motion(imp_world *w, imp_id id, imp_motion m);  /* static <-> dynamic needs mass */
/* scale the body's mass (m > 0) and with it its inertia; momenta follow so v and omega stay */
void imp_body_set_mass(imp_world *w, imp_id id, double m);
/* force accumulators, cleared after each step (S3 5.2-5.5): f at world point at adds (at - x) x f */
void imp_body_apply_force(imp_world *w, imp_id id, imp_vec3 f, imp_vec3 at);
void imp_body_apply_central_force(imp_world *w, imp_id id, imp_vec3 f);
void imp_body_apply_torque(imp_world *w, imp_id id, imp_vec3 tau);
/* an impulse changes the momenta at once: P += j, L += (at - x) x j */
void imp_body_apply_impulse(imp_world *w, imp_id id, imp_vec3 j, imp_vec3 at);
uint32_t imp_body_group(const imp_world *w, imp_id id);
uint32_t imp_body_mask(const imp_world *w, imp_id id);
void imp_body_set_filter(imp_world *w, imp_id id, uint32_t group, uint32_t mask);
void imp_body_color(const imp_world *w, imp_id id, float rgba[4]);
void imp_body_set_color(imp_world *w, imp_id id, const float rgba[4]);
/* bounding box of all the body's shapes (planes: huge) */
void imp_body_aabb(const imp_world *w, imp_id id, imp_vec3 *lo, imp_vec3 *hi);

/* the body store as an ODE system: state [x(3) q(4) P(3) L(3)] per body, 13 doubles, in dense order.
 * Any solver can integrate it; set_state renormalizes every q in the store (GUIDE.md trap 8). */
imp_ode_system imp_body_ode(imp_world *w);
/* after writing body states by hand through imp_body_ode's set_state: re-place every shape */
void imp_body_refresh_all(imp_world *w);

/* ---- shapes of bodies (engine/shape.c, hull.c) ------------------------------------------------------ */

/* the shapes of a body, for drawing and queries. A shape is named by its body and its index. */
int imp_body_shape_count(const imp_world *w, imp_id body);
typedef struct imp_shape_info {
    imp_shape_type type;
    imp_vec3 position;        /* world frame */
    imp_mat3 rotation;        /* world frame */
    double radius, half_height, offset;
    imp_vec3 half, normal;
    int vertex_count, face_count, triangle_count;
    const double *vertices;   /* hull, mesh: local (shape frame) vertices, 3 per vertex               */
    const int *triangles;     /* hull (its faces fanned), mesh: 3 indices per triangle                */
    double mass, volume;
    imp_vec3 center;          /* centre of mass in the shape frame                                    */
    imp_mat3 inertia;         /* about that centre, shape frame                                      */
} imp_shape_info;
imp_shape_info imp_body_shape(const imp_world *w, imp_id body, int index);

/* mass properties of a shape def at density 1 scaled by def->density (mass.c): mass, centre of mass
 * in the shape frame and inertia about it. Returns false for a def that has no volume. */
bool imp_shape_mass(const imp_shape_def *def, double *mass, imp_vec3 *center, imp_mat3 *inertia);

/* ---- contact response (engine/impulse.c) --------------------------------------------------------------
 * How bodies answer their contacts. IMPULSE (default): S1's step order, after Guendelman, Bridson and
 * Fedkiw 2003: collisions with restitution, integrate velocities, contacts level by level in the
 * contact graph with shock propagation, integrate positions. QP: exact contact forces by the resting-
 * contact LCP in every derivative evaluation, simultaneous collision impulses, the step cut at each time
 * of impact (engine/contact_qp.c). NONE: contacts are detected and reported, bodies pass through each
 * other (collision-detection benchmarks, sensors). */
typedef enum imp_contact_mode { IMP_CONTACT_IMPULSE, IMP_CONTACT_QP, IMP_CONTACT_NONE } imp_contact_mode;
void imp_world_set_contact_mode(imp_world *w, imp_contact_mode m);
imp_contact_mode imp_world_contact_mode(const imp_world *w);
/* planar mode: bodies move in the x-y plane and turn about z only (velocities projected each step) */
void imp_world_set_planar(imp_world *w, bool planar);
bool imp_world_planar(const imp_world *w);
/* the impulse mode's restitution threshold, m/s: approaches slower than this do not bounce, so resting
 * contacts do not jitter (default 0.5; 0: every approach bounces). false, and no change, when negative or
 * not finite. (The exact mode bounces down to |g| h, below which a contact rests.) */
bool imp_world_set_restitution_threshold(imp_world *w, double speed);
double imp_world_restitution_threshold(const imp_world *w);
/* solver settings: velocity iterations (default 10), position (split-impulse) iterations (default 4) */
void imp_world_set_iterations(imp_world *w, int velocity, int position);
void imp_world_iterations(const imp_world *w, int *velocity, int *position);
/* sleeping: an island of touching bodies all slower than 5 cm/s and 0.05 rad/s for 0.5 s sleeps */
void imp_world_set_sleeping(imp_world *w, bool on);
bool imp_world_sleeping(const imp_world *w);
bool imp_body_asleep(const imp_world *w, imp_id id);
void imp_body_wake(imp_world *w, imp_id id);
bool imp_body_bullet(const imp_world *w, imp_id id);
void imp_body_set_bullet(imp_world *w, imp_id id, bool on);
/* damping (1/s) of a dynamic body: its momenta are multiplied by exp(-c h) after each step's integration
 * (exactly exp(-c t) without other forces, stable for any c h); where the impulse mode updates the
 * velocities (bodies in contact or jointed) by v / (1 + c h) in that update instead. Values outside
 * 0 .. IMP_MAX_DAMPING (or not finite) are refused with the world error and leave it unchanged; static
 * and kinematic bodies keep theirs for when they become dynamic. */
#define IMP_MAX_DAMPING 1e6
void imp_body_damping(const imp_world *w, imp_id id, double *linear, double *angular);
bool imp_body_set_damping(imp_world *w, imp_id id, double linear, double angular);
/* the factor on the world's gravity for this body (1: as every body; 0: floats; -1: falls up); false, and
 * no change, beyond +-IMP_MAX_GRAVITY_SCALE or not finite */
double imp_body_gravity_scale(const imp_world *w, imp_id id);
bool imp_body_set_gravity_scale(imp_world *w, imp_id id, double scale);
/* shape materials: friction (kinetic), static friction, restitution of shape `index` of a body */
void imp_body_shape_material(const imp_world *w, imp_id id, int index, double *friction, double *static_friction, double *restitution);
void imp_body_set_material(imp_world *w, imp_id id, int index, double friction, double static_friction, double restitution);
/* whether shape `index` of a body is a sensor, and whether its contacts go to the pre-solve callback */
bool imp_body_shape_sensor(const imp_world *w, imp_id id, int index);
bool imp_body_shape_pre_solve(const imp_world *w, imp_id id, int index);

/* ---- collision detection (engine/broadphase.c, narrowphase.c, contact.c) ------------------------------ */

/* SAP: incremental sweep and prune on three axes (S0 7.2.2, default); GRID: a hash grid;
 * SWEEP: sort and sweep along one axis each step (coherent insertion sort, no pair set) */
typedef enum imp_broadphase { IMP_BROADPHASE_SAP, IMP_BROADPHASE_GRID, IMP_BROADPHASE_SWEEP } imp_broadphase;
void imp_world_set_broadphase(imp_world *w, imp_broadphase kind);
imp_broadphase imp_world_broadphase(const imp_world *w);

/* one shape of a contact: a body's shape, or a static particle collider (body null) */
typedef struct imp_contact_side { imp_id body; int shape; imp_id collider; } imp_contact_side;

#define IMP_MANIFOLD_MAX 4
/* a contact manifold between two shapes. normal points out of B towards A (GUIDE.md trap 2); each
 * point lies on A's surface, B's surface is at point + depth * normal. depth > 0 is penetration. */
typedef struct imp_contact {
    imp_contact_side a, b;
    imp_vec3 normal;
    int count;
    imp_vec3 points[IMP_MANIFOLD_MAX];
    double depth[IMP_MANIFOLD_MAX];
    uint32_t point_id[IMP_MANIFOLD_MAX]; /* stable across steps while the point persists            */
    int age;                             /* steps this pair has been touching                      */
    bool edge;                           /* edge/edge (one point): ea on A, eb on B, unit, with     */
    imp_vec3 ea, eb;                     /* normal = ea x eb / |ea x eb| (S0's edge/edge convention) */
    bool face_a;                         /* not edge/edge: the normal is A's face normal (reversed), it
                                          * turns with A; otherwise B's (face, plane, triangle, core)  */
    /* impulses the contact solver applied at each point in the last step (N s, +n on A), carried
     * from step to step with the point ids (warm starting); impact: the collision-phase part */
    double normal_impulse[IMP_MANIFOLD_MAX];
    imp_vec3 tangent_impulse[IMP_MANIFOLD_MAX];
    double impact;                       /* sum of the collision (restitution) impulses, N s        */
    double impact_speed;                 /* approach speed that collision met, m/s                  */
} imp_contact;

/* touching pairs after the last step; the pointer stays valid until the next step or collide */
int imp_world_contact_count(const imp_world *w);
const imp_contact *imp_world_contact(const imp_world *w, int i);
/* events of the last step: pairs that started or stopped touching */
int imp_world_begin_count(const imp_world *w);
int imp_world_end_count(const imp_world *w);
void imp_world_begin_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b);
void imp_world_end_event(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b);
/* what the events carried (impulse.c): a begin event's approach speed at its deepest point (m/s, >= 0),
 * an end event's normal impulse in the pair's last solved step (N s) */
double imp_world_begin_speed(const imp_world *w, int i);
double imp_world_end_impulse(const imp_world *w, int i);
/* collisions the impulse mode resolved in the last step (restitution stage): one per pair */
typedef struct imp_contact_hit {
    imp_contact_side a, b;
    imp_vec3 point, normal;   /* a point of the pair and its normal (from B to A)                  */
    double impulse;           /* total normal collision impulse on A, N s                           */
    double speed;             /* the fastest approach speed it met, m/s                            */
} imp_contact_hit;
int imp_world_hit_count(const imp_world *w);
const imp_contact_hit *imp_world_hit(const imp_world *w, int i);
/* broad-phase pairs of the last step (after filtering), as body/shape sides */
int imp_world_pair_count(const imp_world *w);
void imp_world_pair(const imp_world *w, int i, imp_contact_side *a, imp_contact_side *b);
/* run the collision stages now, without stepping (after moving bodies by hand) */
void imp_world_collide(imp_world *w);

/* contact modification (engine/presolve.c): a callback that sees, at the start of each step (after the
 * narrow phase, before the solver, serially), every contact of a shape or collider made with pre_solve =
 * true, and may change what the impulse mode does with it in this step: mod starts as the pair's own
 * values. tangent_velocity: the velocity a's surface is to slide at relative to b's (world frame; its
 * part along the normal is ignored): friction drives the pair towards it (a conveyor belt). Nonzero from
 * the callback is a failure: the step is not taken and the world is as it was (IMP_ERR_CALLBACK). The
 * exact mode ("qp") refuses a world with a callback (its step cuts at each time of impact and collides
 * again, so a step has no one set of contacts to modify). */
typedef struct imp_contact_mod {
    bool enabled;                   /* false: the contact does nothing in this step          */
    double friction, static_friction, restitution;
    imp_vec3 tangent_velocity;      /* m/s                                                   */
} imp_contact_mod;
typedef int (*imp_pre_solve_fn)(void *user, imp_world *w, const imp_contact *c, imp_contact_mod *mod);
/* sets the callback (NULL: none); release(user), when given, is called when it is replaced or the world goes */
void imp_world_set_pre_solve(imp_world *w, imp_pre_solve_fn fn, void *user, void (*release)(void *user));
void *imp_world_pre_solve_user(const imp_world *w); /* the callback's user pointer, NULL when none */

/* sensors (engine/sensor.c): shapes made with sensor = true detect what overlaps them and never push.
 * The last step's events: overlaps that began and ended (begin = true / false), i-th of each, as the
 * sensor's side and the other shape's; false when i is out of range */
int imp_world_sensor_begin_count(const imp_world *w);
int imp_world_sensor_end_count(const imp_world *w);
bool imp_world_sensor_event(const imp_world *w, bool begin, int i, imp_contact_side *sensor, imp_contact_side *other);
/* the shapes that overlap a sensor (a body's shape, or a collider) after the last collide stage: returns
 * how many, writes at most max of them */
int imp_world_overlaps(const imp_world *w, imp_contact_side sensor, imp_contact_side *out, int max);

/* ---- queries (engine/query.c) ------------------------------------------------------------------------ */
typedef struct imp_ray_hit {
    imp_contact_side side;
    imp_vec3 point, normal;
    double fraction;          /* of the segment from -> to */
} imp_ray_hit;
/* which shapes a query sees: a body's shape when (body.group & mask) and (group & body.mask), a collider
 * when mask has bit 1; sensors only with sensors = true. Default: every bit of both, no sensors */
typedef struct imp_query_filter { uint32_t group, mask; bool sensors; } imp_query_filter;
imp_query_filter imp_query_filter_default(void);
/* closest hit on the segment from -> to (sensors left out); false when nothing is hit */
bool imp_world_raycast(const imp_world *w, imp_vec3 from, imp_vec3 to, imp_ray_hit *hit);
bool imp_world_raycast_filtered(const imp_world *w, imp_vec3 from, imp_vec3 to, const imp_query_filter *f, imp_ray_hit *hit);
/* every shape the segment hits (each shape's first hit), sorted by fraction: returns how many, writes at
 * most max of them (the first max in the order of the shapes, then sorted, when there are more) */
int imp_world_raycast_all(const imp_world *w, imp_vec3 from, imp_vec3 to, const imp_query_filter *f, imp_ray_hit *out, int max);
/* shape cast (query_cast.c): the shape of def (sphere, capsule, box, hull) at orientation q, its origin
 * swept from -> to: the first shape (passing the filter; NULL: the default) the exact shapes touch, with
 * fraction in 0..1 along the segment (0: overlapping at from), the deepest touching point, and the normal
 * out of the hit shape. false when nothing is touched; -1 (and the world error) for a bad def */
int imp_world_cast(imp_world *w, const imp_shape_def *def, imp_vec3 from, imp_vec3 to, imp_quat q, const imp_query_filter *f, imp_ray_hit *hit);
/* shapes that contain the point; returns how many, writes at most max of them */
int imp_world_query_point(const imp_world *w, imp_vec3 p, imp_contact_side *out, int max);
/* shapes that overlap a shape def placed at (position, orientation) */
int imp_world_overlap(imp_world *w, const imp_shape_def *def, imp_vec3 position, imp_quat orientation,
                      imp_contact_side *out, int max);

/* ---- implicit integration (engine/implicit.c) ------------------------------------------------------
 * world integrator IMP_IMPLICIT: one linearized backward Euler step in second-order form (S3 4-5,
 * in M-form as Baraff and Witkin 1998):
 *     (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0),   dx = h (v0 + dv)
 * solved by a filtered preconditioned conjugate gradient; fixed and kinematic particles and the
 * normal direction of resting contacts are filtered out of the solve. */
typedef struct imp_implicit_settings {
    double cg_tolerance;   /* stop when every particle's velocity error |r_i| / m_i is below tol
                            * times max(largest |S b|_i / m_i, h max(|g|, 1 m/s^2)); default 1e-2 */
    int cg_max_iterations; /* default 200                                                        */
    bool full_jacobian;    /* false (default): the system matrix keeps the positive semidefinite
                            * part of each stiffness (Gauss-Newton for angles, compressed springs
                            * lose their transverse term); true: the full symmetric stiffness      */
} imp_implicit_settings;

imp_implicit_settings imp_implicit_settings_default(void);
imp_implicit_settings imp_world_implicit(const imp_world *w);
void imp_world_set_implicit(imp_world *w, const imp_implicit_settings *s);

/* Debugging aid: compares the analytic force Jacobians of every force object (springs, drag,
 * built-in behaviours, cloth, hair) with central differences of the forces at the current state
 * (positions and velocities). The analytic df/dx here is complete: with the damping forces'
 * x-derivatives, which the integrator's matrix leaves out (as Baraff and Witkin do, they are not
 * symmetric). Results are the largest entry errors divided by the largest analytic entry. Returns IMP_ERR_ARG when the
 * world has force fields or "function" behaviours (no analytic Jacobian) or more than 400 particles. */
typedef struct imp_jacobian_report {
    double dfdx_error, dfdv_error;  /* relative errors */
    double dfdx_max, dfdv_max;      /* largest analytic entries (N/m, N s/m) */
    double matrix_error;            /* the implicit step's system matrix, right side and forces (fast
                                     * fused kernels) against the same from the checked kernels    */
} imp_jacobian_report;
imp_status imp_world_jacobian_check(imp_world *w, double eps, imp_jacobian_report *out);

/* ---- cloth and hair (engine/cloth.c) ----------------------------------------------------------------
 * Cloth: a triangle mesh of particles with per-triangle stretch and shear energies and a bend energy
 * across every interior edge (S3 slides "Cloth and fur energy functions"; condition functions as in
 * Baraff and Witkin 1998). With (u, v) the rest coordinates of the warp and weft and
 * [w_u w_v] = [x1 - x0, x2 - x0] [u1 - u0, u2 - u0; v1 - v0, v2 - v0]^-1 (the affine map T):
 *     stretch  E = k_s A (S_u^2 + S_v^2) / 2,   S_u = |w_u| / b_u - 1   (b_u: rest length, 1 for a flat rest)
 *     shear    E = k_sh A (theta - theta_0)^2 / 2,   theta = acos(w_u^ . w_v^)   (theta_0: rest angle)
 *     bend     E = k_b A_e kappa^2 / 2,   kappa = (phi - phi_0) / l_perp   (phi: dihedral angle)
 * Each energy term C has damping force -k_d dC/dx Cdot with k_d = damping * k.
 * Hair: a chain of particles with stretch springs k_i = K / l_i and angular springs
 * E = k_i theta_i^2 / 2 with k_i = B / l_i at each joint, so the behaviour does not depend on the
 * number of segments (S3). */
typedef struct imp_cloth_def {
    int vertex_count, triangle_count;
    const imp_vec3 *positions;   /* rest and initial positions                                    */
    const double *uv;            /* optional 2 per vertex: warp/weft rest coordinates (m); NULL:
                                  * each triangle is flattened in its own plane                   */
    const int *triangles;        /* 3 vertex indices (0-based) per triangle                       */
    const bool *pinned;          /* optional per vertex: a fixed particle                          */
    const double *masses;        /* optional per-vertex masses; NULL: mass spread by area          */
    double mass;                 /* total mass when masses is NULL, default 0.5 kg                 */
    double stretch, shear, bend; /* N/m, N/m, N m (J); defaults 2000, 50, 2e-4                     */
    double damping;              /* s: k_d = damping * k for every term, default 0.01              */
    double radius;               /* collision radius of the particles, default 0.01 m              */
    double restitution, friction; /* its particles' material against bodies and particles (0, 0.5) */
    bool self_collision;         /* its particles collide with each other (world.particle_collisions on)
                                  * where they lie more than twice their radii apart at rest      */
    int rows, cols;              /* informational: a grid's size (0 for a mesh)                    */
    float color[4], back_color[4];
} imp_cloth_def;

typedef struct imp_hair_def {
    int point_count;             /* particles along the strand, root first, >= 2                  */
    const imp_vec3 *points;      /* rest and initial positions                                    */
    double mass;                 /* total mass, default 0.01 kg                                    */
    double stretch;              /* K (N): segment springs k_i = K / l_i, default 50               */
    double bend;                 /* B (N m^2): joints k_i = B / l_i, default 1e-4                   */
    double damping;              /* s: k_d = damping * k, default 0.01                              */
    double radius;               /* collision radius, default 0.005 m                              */
    double restitution, friction; /* its particles' material against bodies and particles (0, 0.5) */
    imp_motion root;             /* the root particle: IMP_FIXED (default), IMP_KINEMATIC, IMP_DYNAMIC */
    imp_id body;                 /* not null: the root (and the anchor) are held by this body where
                                  * they start (imp_particle_attach), and root is IMP_DYNAMIC   */
    bool clamped;                /* a hidden anchor behind the root holds the root's direction
                                  * (moves with the root: same motion), default true                */
    float color[4];
} imp_hair_def;

imp_cloth_def imp_cloth_def_default(void);
imp_hair_def imp_hair_def_default(void);
imp_id imp_cloth_create(imp_world *w, const imp_cloth_def *def); /* null id on bad input       */
imp_id imp_hair_create(imp_world *w, const imp_hair_def *def);
/* destroys the object and its particles; destroying one of its particles instead leaves a hole */
void imp_cloth_destroy(imp_world *w, imp_id id);
bool imp_cloth_valid(const imp_world *w, imp_id id);
bool imp_cloth_is_hair(const imp_world *w, imp_id id);
/* vertex k's particle (null id once destroyed); k in [0, vertex count); hair: k = 0 is the root */
imp_id imp_cloth_particle(const imp_world *w, imp_id id, int k);
int imp_cloth_vertex_count(const imp_world *w, imp_id id);
/* the hidden anchor particle of a clamped hair (null id otherwise) */
imp_id imp_hair_anchor(const imp_world *w, imp_id id);
/* a clamped hair's root direction at rest (unit) */
imp_vec3 imp_hair_root_direction(const imp_world *w, imp_id id);
void imp_cloth_params(const imp_world *w, imp_id id, double *stretch, double *shear, double *bend, double *damping);
void imp_cloth_set_params(imp_world *w, imp_id id, double stretch, double shear, double bend, double damping);
void imp_cloth_set_color(imp_world *w, imp_id id, const float rgba[4], const float back_rgba[4]);
bool imp_cloth_self_collision(const imp_world *w, imp_id id);
void imp_cloth_set_self_collision(imp_world *w, imp_id id, bool on); /* cloth only: hair never */
double imp_cloth_energy(const imp_world *w, imp_id id); /* elastic energy, J */

/* Drawing: the cloth and hair objects as index lists over the dense particle arrays. */
typedef struct imp_mesh_view {
    bool hair;                   /* true: a polyline through the vertices, no triangles            */
    int vertex_count, triangle_count;
    const int *vertex_particle;  /* dense particle index per vertex, -1 once destroyed            */
    const int *triangles;        /* 3 vertex indices per triangle                                  */
    float color[4], back_color[4];
} imp_mesh_view;
int imp_cloth_count(const imp_world *w); /* cloth and hair objects */
/* object i (0 <= i < count); the arrays are valid until the world changes */
imp_mesh_view imp_cloth_mesh(imp_world *w, int i);

/* ---- contact forces by complementarity (engine/lcp.c, engine/contact_qp.c) ------------------------ */

/* the LCP w = A f + b, f >= 0, w >= 0, f.w = 0 (rows neq..n-1), w = 0 with f free (rows 0..neq-1);
 * A (n x n row-major) symmetric positive semidefinite. Pivoting (Dantzig, Baraff 1994). Never fails
 * with NaN: on an infeasible row it leaves that row out and says so in the status. */
typedef enum imp_lcp_status { IMP_LCP_OK = 0, IMP_LCP_INFEASIBLE = 1, IMP_LCP_MAX_PIVOTS = 2 } imp_lcp_status;
typedef struct imp_lcp_info { int status, pivots, clamped; bool regularized; } imp_lcp_info;
typedef struct imp_lcp_work { double *mem; int *set; int cap; } imp_lcp_work; /* zero-initialise; reused */
int imp_lcp_solve(int n, int neq, const double *A, const double *b, double *f, double *w,
                  imp_lcp_info *info, imp_lcp_work *ws);
int imp_lcp_solve_guess(int n, int neq, const double *A, const double *b, const double *guess, double *f, double *w,
                        imp_lcp_info *info, imp_lcp_work *ws); /* from a guessed clamped set (guess_i > 0) */
void imp_lcp_work_free(imp_lcp_work *ws);

/* world.contact = IMP_CONTACT_QP (the contact mode enum is declared with the impulse mode above):
 * the exact contact forces of S0/S2 (an LCP in every derivative evaluation, simultaneous collision
 * impulses) */
void imp_world_set_restitution(imp_world *w, double e); /* QP mode's coefficient of restitution (default 0) */
double imp_world_restitution(const imp_world *w);
void imp_world_set_friction(imp_world *w, double mu); /* QP mode's Coulomb coefficient (default 0: frictionless, exact) */
double imp_world_friction(const imp_world *w);

/* the QP mode's contacts, for scripts and specs. imp_qp_gather collects every point of the current
 * manifolds that touches a dynamic body and places it at the current state; the others work on that
 * set: A and the exact b of d'' = A f + b (A: n x n row-major), d'' for given forces f (through the
 * bodies' accelerations: an independent check of A and b), the exact forces (LCP), and the
 * simultaneous collision impulses (S2 section 8), applied to the bodies. */
typedef struct imp_qp_contact_info {
    imp_id a, b;              /* bodies (null: a collider)                                     */
    imp_vec3 point, normal;   /* point on A; normal out of B towards A                         */
    double separation, velocity; /* d and d'                                                   */
    double force, acceleration;  /* the last solve: force (or impulse) magnitude, and d''      */
    imp_vec3 friction;        /* the last solve's friction force (or impulse) on A, tangential  */
    bool edge;
    bool joint;               /* a joint's equality row (normal = a world axis, force signed)  */
} imp_qp_contact_info;
int imp_qp_gather(imp_world *w);
int imp_qp_count(const imp_world *w);
void imp_qp_replace(imp_world *w); /* the gathered contacts' material points placed at the current state */
void imp_qp_contact(const imp_world *w, int i, imp_qp_contact_info *out);
void imp_qp_system(imp_world *w, double *A, double *b);
void imp_qp_accelerations(imp_world *w, const double *f, double *dd);
int imp_qp_solve(imp_world *w, imp_lcp_info *info);
int imp_qp_collide(imp_world *w, double e, imp_lcp_info *info);
/* a ball joint of the QP mode: the point (world, now) stays common to bodies a and b (b null: the
 * world); three equality rows of the LCP (S2: holonomic constraints). Returns its index, or -1 */
int imp_qp_joint(imp_world *w, imp_id a, imp_id b, imp_vec3 point);
void imp_qp_joint_remove(imp_world *w, int k);

/* joints of the impulse mode (joint.c, S1). Each joint keeps a frame in A and one in B (b null: the
 * static world): origin the articulation point (anchor, world, now), x axis the joint axis (world,
 * now); both frames coincide at creation. Types (what the joint allows of A's frame relative to B's):
 *   point      origin common, any rotation          hinge, twist  origin common, rotation about the axis
 *   rigid      origin common, rotation as created   prismatic     rotation as created, slide along the axis
 *   planar     origin in B's plane (normal = axis), rotation about the normal
 * Limits: hinge/twist angle [lo, hi] (rad from the creation pose), prismatic slide [lo, hi] (m), point
 * swing cone (hi = half angle, rad, about the axis). Motors (hinge/twist/prismatic): a target relative
 * speed (rad/s, m/s) reached with at most `max` torque (N m) or force (N). Create returns the null id
 * for stale bodies, a == b, non-finite input or a zero axis where one is needed. */
typedef enum imp_joint_type {
    IMP_JOINT_POINT, IMP_JOINT_HINGE, IMP_JOINT_TWIST, IMP_JOINT_RIGID, IMP_JOINT_PRISMATIC, IMP_JOINT_PLANAR,
    IMP_JOINT_DISTANCE, /* the distance of A's point (anchor) and B's (anchor_b) stays in [lo, hi]: lo == hi a rigid
                           rod, lo = 0 a rope; one row, an inequality at a bound (impulse mode; joint.c)       */
    IMP_JOINT_SPRING    /* a spring-damper between the two points: f = -(stiffness (d - rest) + damping d') along
                           the line, no rows (joint_force.c kicks the bodies at each step's start)            */
} imp_joint_type;
typedef struct imp_joint_def {
    imp_joint_type type;
    imp_id a, b;
    imp_vec3 anchor, axis;
    bool has_axis;               /* false: the default axis (twist: A's centre to B's; point: anchor to A's centre) */
    bool has_limits; double lo, hi;  /* (distance: the range of the distance, 0 <= lo <= hi, always used) */
    bool has_motor; double speed, max;
    imp_vec3 anchor_b;           /* distance, spring: B's point (world, now)                              */
    double stiffness, damping, rest; /* spring: N/m (> 0), N s/m (>= 0), m (>= 0)                          */
} imp_joint_def;
/* bounds of a joint's numbers: anchor |x| (m), limits and motor speeds (rad, m, rad/s, m/s), motor max
 * torque or force (N m, N); outside them imp_joint_create returns the null id and the setters do nothing */
#define IMP_JOINT_MAX_COORD 1e6
#define IMP_JOINT_MAX_FORCE 1e12 /* (wrap_joint.c's messages quote both numbers) */
imp_id imp_joint_create(imp_world *w, const imp_joint_def *d);
void imp_joint_destroy(imp_world *w, imp_id id);
bool imp_joint_valid(const imp_world *w, imp_id id);
bool imp_joint_bodies_live(const imp_world *w, imp_id id); /* false once a body of it was destroyed */
imp_joint_type imp_joint_kind(const imp_world *w, imp_id id);
bool imp_joint_ends(const imp_world *w, imp_id id, imp_id *a, imp_id *b); /* its bodies (b null: the world) */
/* gap: distance of the two articulation points now in the constrained directions (m); axis_error: the
 * orientation error in the constrained directions (rad-like: |a_a x a_b| of a hinge, the rotation angle
 * of a rigid or prismatic joint, 0 for a point joint) */
int imp_joint_errors(const imp_world *w, imp_id id, double *gap, double *axis_error);
/* bodies with 8 or more joints that the last step's joint solve took as nodes of their own (hubs) */
int imp_joint_hub_count(const imp_world *w);
/* the free coordinate now: hinge/twist angle (rad since creation, unwrapped), prismatic slide (m since
 * creation); and its rate. Returns 0 for the other types */
int imp_joint_coordinate(const imp_world *w, imp_id id, double *value, double *speed);
void imp_joint_set_limits(imp_world *w, imp_id id, bool on, double lo, double hi);
bool imp_joint_limits(const imp_world *w, imp_id id, double *lo, double *hi);
/* a point joint's twist limit: A's frame's turn about its axis relative to B's (the twist of their swing-
 * twist split, rad) stays in [lo, hi], -pi <= lo <= hi <= pi; false for another type or a bad range */
bool imp_joint_set_twist_limits(imp_world *w, imp_id id, bool on, double lo, double hi);
bool imp_joint_twist_limits(const imp_world *w, imp_id id, double *lo, double *hi);
/* a point joint's motor: drives omega_A - omega_B (world frame, rad/s) to velocity with at most max torque
 * (N m) about each world axis; false for another type or values out of range (|velocity| <= 1e6, max <= 1e12) */
bool imp_joint_set_ball_motor(imp_world *w, imp_id id, bool on, imp_vec3 velocity, double max);
bool imp_joint_ball_motor(const imp_world *w, imp_id id, imp_vec3 *velocity, double *max);
void imp_joint_set_motor(imp_world *w, imp_id id, bool on, double speed, double max);
bool imp_joint_motor(const imp_world *w, imp_id id, double *speed, double *max);
int imp_world_joint_count(const imp_world *w);
/* what the joint applied in the last step (joint_force.c), impulse mode: the force on body a (N, world
 * frame) and the torque on it about its articulation point (N m); b got the opposite. false: no joint */
bool imp_joint_force(const imp_world *w, imp_id id, imp_vec3 *force, imp_vec3 *torque);
/* breaking: after a step whose |force| exceeds force (N) or |torque| exceeds torque (N m), the joint is
 * destroyed and reported (0: never). false, and no change, for a negative or non-finite value */
bool imp_joint_set_break(imp_world *w, imp_id id, double force, double torque);
bool imp_joint_break_limits(const imp_world *w, imp_id id, double *force, double *torque);
typedef struct imp_joint_break {
    imp_id joint, a, b;           /* the joint (destroyed now) and its bodies (b null: the world)      */
    imp_joint_type type;
    imp_vec3 force, torque;       /* what it applied in the step that broke it                         */
} imp_joint_break;
int imp_world_broken_joint_count(const imp_world *w);           /* joints the last step broke */
const imp_joint_break *imp_world_broken_joint(const imp_world *w, int i);
long imp_qp_impacts(const imp_world *w); /* times of impact found by the QP mode's steps so far */
long imp_qp_solves(const imp_world *w);  /* resting-contact LCPs solved so far (one per derivative evaluation) */
long imp_qp_fallbacks(const imp_world *w); /* projected Gauss-Seidel solves (islands over dense_max rows) */
/* islands of up to n contact rows get the dense pivoting LCP, larger ones the PGS fallback (default 256) */
#define IMP_QP_DENSE_LIMIT 4096 /* the largest dense_max: its matrix and the friction blocks are O(rows^2) doubles */
void imp_qp_set_dense_max(imp_world *w, int n); /* clamped to [0, IMP_QP_DENSE_LIMIT] */
int imp_qp_dense_max(const imp_world *w);

/* ---- snapshots (engine/snapshot.c) -------------------------------------------------------------------
 * The whole state of a world: every object with its id table (handles stay valid or stale exactly as
 * they were), settings, time and step count, the contacts with their points' ids and warm-start
 * impulses, sleep timers, the solvers' warm starts and adaptive step sizes. Restoring a snapshot and
 * stepping N times gives, bit for bit, what the world gave in the N steps after it was taken (in either
 * contact mode, with every integrator), whether restored into that world or a fresh one. A snapshot
 * holds no pointers: the callbacks of fields, "function" behaviours and constraints and curve particles
 * are kept beside it and belong to the world it was taken from. Restored into another world, or loaded
 * from a file, each such object takes the callback of the object with the same id in the world it is
 * restored into; a snapshot with a callback that has no such counterpart is refused. */
typedef struct imp_snapshot imp_snapshot;
#define IMP_SNAPSHOT_VERSION 2 /* the file format this build writes and reads */
/* NULL (and the world error) while the world steps */
imp_snapshot *imp_snapshot_take(imp_world *w);
/* the world as the snapshot was taken; otherwise an error status, the world error says why, and the world
 * is unchanged */
imp_status imp_snapshot_restore(imp_world *w, const imp_snapshot *s);
void imp_snapshot_free(imp_snapshot *s);
size_t imp_snapshot_bytes(const imp_snapshot *s);   /* memory it holds                              */
double imp_snapshot_time(const imp_snapshot *s);    /* the world's time and step count when taken   */
long imp_snapshot_step_count(const imp_snapshot *s);
/* files: a header (format version, the build's state layout, a checksum of the state) and the state.
 * Loading refuses another version or layout and a corrupt file, with the reason in err */
bool imp_snapshot_save(const imp_snapshot *s, const char *path, char *err, size_t errlen);
imp_snapshot *imp_snapshot_load(const char *path, char *err, size_t errlen);
/* the same in memory: the file's bytes (malloc'd, *length of them), and a snapshot from such bytes */
void *imp_snapshot_encode(const imp_snapshot *s, size_t *length);
imp_snapshot *imp_snapshot_decode(const void *bytes, size_t length, char *err, size_t errlen);
/* a snapshot holds each callback it keeps by calling retain(user), and lets go by the callback's own
 * release; a world with callbacks that have a release function and no retain hook cannot take back a
 * snapshot's callbacks (restore refuses) */
void imp_world_set_callback_retain(imp_world *w, void (*retain)(void *user));

#endif

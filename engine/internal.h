/* internal.h: the world's layout, shared by the engine's stage files. Not part of the public API. */
#ifndef IMPETUS_INTERNAL_H
#define IMPETUS_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

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
void *ids_grow(void *p, size_t elem, size_t cap); /* realloc or abort on out-of-memory         */

/* ---- particles ------------------------------------------------------------------------------------ */
typedef struct particle_store {
    idtable ids;
    int cap;
    double *x, *v;      /* 3 per particle: committed state                     */
    double *mass, *inv_mass, *radius;
    uint8_t *motion;    /* imp_motion                                          */
    float *color;       /* 4 per particle                                      */
    uint64_t topology;  /* bumped when particles or force objects come or go  */
    uint64_t edits;     /* bumped when a particle is removed or moved by a script: resting contacts
                           found before are stale (particle_collide.c)                               */
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

/* the force objects (forces.c) */
typedef struct force_store {
    idtable spring_ids;   spring *springs;     int spring_cap;
    idtable behavior_ids; behavior *behaviors; int behavior_cap;
    idtable field_ids;    field *fields;       int field_cap;
} force_store;

/* the static colliders particles (and bodies) meet (particle_collide.c) */
typedef struct collider_store {
    idtable ids;
    collider *collider;
    int cap;
    uint64_t edits;       /* bumped when a collider comes or goes */
} collider_store;

/* the particles the ODE solver is stepping: [first, first + count) of the dense arrays, and the
 * resting contacts among them, [contact_lo, contact_hi) */
typedef struct particle_range {
    imp_world *w;
    int first, count;
    int contact_lo, contact_hi;
    int extra; /* state entries after [x | v]: the curve particles' [u | udot] (whole store only) */
} particle_range;

/* resting contact of one particle with one collider, found at the start of a step */
typedef struct pcontact {
    int particle;  /* dense index */
    int collider;  /* dense index */
    imp_vec3 vt0;  /* tangential velocity at the start of the step */
} pcontact;

/* an impact of the last collision pass: the particle (dense) and the surface normal it hit */
typedef struct phit {
    int particle;
    imp_vec3 normal;
} phit;

/* the particles' resting contacts of this step and the impacts of its collision pass (particle_collide.c) */
typedef struct particle_contacts {
    pcontact *contact; int count, cap;
    uint64_t particle_edits, collider_edits; /* the stores' edits when they were found */
    phit *hit; int hit_count, hit_cap;
} particle_contacts;

/* ---- rigid bodies, shapes, collision (body.c, shape.c, hull.c, broadphase.c, narrowphase.c, contact.c) */

/* a convex hull (hull.c): vertices, polygon faces (ccw seen from outside) with planes n . x = d,
 * the unique edges and their unique directions (for SAT), and the faces fanned into triangles */
typedef struct hull {
    int nv, nf, ne, ndir, ntri;
    double *v;            /* 3 per vertex                          */
    int *face_first, *face_count, *face_verts;
    imp_vec3 *face_n;
    double *face_d;
    int *edges;           /* 2 per edge                            */
    int *edge_faces;      /* 2 per edge: the faces on either side  */
    imp_vec3 *dirs;       /* unit edge directions, parallel ones once */
    int *tris;            /* 3 per triangle                        */
    imp_vec3 centroid;
} hull;

/* a static triangle mesh (shape.c), with a bounding volume hierarchy over its triangles */
typedef struct mesh_node {
    imp_vec3 lo, hi;      /* local bounds of the triangles below   */
    int left, right;      /* inner: the children; leaf: order[left .. left + count) */
    int count;            /* triangles of a leaf, 0 for an inner node */
} mesh_node;

typedef struct mesh {
    int nv, nt, nnodes;
    double *v;
    int *tri;
    imp_vec3 *n;          /* unit normal per triangle              */
    imp_vec3 lo, hi;      /* local bounds                          */
    mesh_node *nodes;     /* nodes[0] is the root                  */
    int *order;           /* triangle indices in leaf order        */
} mesh;

/* triangles of m whose bounds meet the local box [lo, hi]: calls fn(ctx, t) for each */
void mesh_query(const mesh *m, imp_vec3 lo, imp_vec3 hi, void (*fn)(void *ctx, int t), void *ctx);

typedef struct shape {
    imp_shape_type type;
    uint32_t body;        /* slot of its body                      */
    int index;            /* its index in the body                 */
    imp_vec3 lpos;        /* pose relative to the body origin      */
    imp_quat lq;
    double radius, half_height, offset;
    imp_vec3 half, normal;
    hull *hull;
    mesh *mesh;
    double mass, volume;
    double friction, static_friction, restitution; /* contact material (impulse.c); static < 0: as friction */
    imp_vec3 center;      /* centre of mass, shape frame           */
    imp_mat3 inertia;     /* about it, shape frame                 */
    /* world placement: written by the collide stage (shape_update) */
    imp_vec3 wpos;
    imp_mat3 wrot;
    imp_vec3 lo, hi;
} shape;

typedef struct body {
    double mass, inv_mass;
    imp_mat3 Ibody, Ibody_inv;  /* about the centre of mass, body frame                 */
    imp_vec3 com;               /* centre of mass relative to the origin, body frame   */
    imp_vec3 force, torque;     /* accumulators, cleared after each step               */
    imp_vec3 kin_v, kin_w;      /* kinematic bodies: the velocities the script set     */
    uint8_t motion;             /* imp_motion                                          */
    uint8_t bullet, asleep;     /* continuous collision; sleeping (impulse.c)          */
    double lin_damp, ang_damp;  /* 1/s: dP/dt -= c P, dL/dt -= c L (imp_body_damping)   */
    float sleep_time;           /* seconds it has been slow enough to sleep            */
    uint32_t group, mask;
    float color[4];
    uint32_t *shapes;           /* shape slots                                         */
    int nshapes;
} body;

#define BODY_DIM 13 /* x(3) q(4) P(3) L(3) */

/* The bodies as an ODE system (body.c: bodies_ode). held, when set, marks the bodies whose forces the
 * impulse mode already applied in its velocity stage (their momenta are held through the position
 * update); contact_forces, when set, adds the exact contact mode's resting contact forces to each
 * derivative (contact_qp.c). */
typedef struct body_ode {
    imp_world *w;
    const uint8_t *held;
    int (*contact_forces)(imp_world *w, const double *X, double *dX);
} body_ode;

/* the body store: bodies dense by id, and their state vectors side by side (body.c) */
typedef struct body_store {
    idtable ids;
    body *body;
    double *state;        /* BODY_DIM per body: what the ODE solvers step */
    int cap;
    body_ode plain;       /* the system with the applied forces alone (imp_body_ode) */
} body_store;

/* the shape store: every body's shapes, dense by id (shape.c) */
/* a shape added or removed since the broad phase last looked (it replays them in order: bp_sync) */
typedef struct shape_change {
    imp_id id;
    uint8_t removed, plane;
} shape_change;

typedef struct shape_store {
    idtable ids;
    shape *shape;
    int cap;
    shape_change *changes; int change_count, change_cap;
} shape_store;

/* world-space geometry the narrow phase works on: a body shape placed, or a particle collider */
typedef struct geom {
    imp_shape_type type;
    imp_vec3 p;
    imp_mat3 R;
    double radius, half_height, offset;
    imp_vec3 half, normal;
    const hull *hull;
    const mesh *mesh;
    imp_vec3 lo, hi;
} geom;

/* a broad-phase pair and its persistent narrow-phase data; key = (lower << 32) | higher, where a
 * collider's key is COLLIDER_KEY | slot */
#define COLLIDER_KEY 0x80000000u
typedef struct pair {
    uint64_t key;
    uint32_t a, b;        /* keys of the two sides, in narrow-phase order (a is A)      */
    int32_t witness;      /* cached separating axis (S0 7.1), -1 when none              */
    int32_t man;          /* its manifold when touching, else -1                        */
} pair;

/* a touching pair's manifold, kept apart from the pairs so that most pairs stay small */
typedef struct manifold {
    imp_contact c;
    imp_vec3 local[IMP_MANIFOLD_MAX]; /* the points in A's shape frame, to match them next step */
} manifold;

struct bp_cand { uint64_t key; uint32_t a, b; }; /* a broad-phase candidate pair, or a grid entry */

/* the broad phase's part (broadphase.c) */
typedef struct broadphase {
    imp_broadphase kind;
    /* shape slots of the broad phase (everything but planes); the sort-and-sweep keeps them in
     * coherent order of their minimum on axis */
    uint32_t *order; int order_count, order_cap;
    int axis;
    /* incremental sweep and prune (S0 7.2.2): three sorted endpoint lists, id = slot << 1 | is_max,
     * and the set of overlapping pairs, updated at every exchange of the insertion sorts */
    struct sap_end { double v; uint32_t id; } *ends[3]; int ends_count, ends_cap;
    uint64_t *set; int set_count, set_cap;   /* open addressing, linear probing; 0 = empty      */
    int sap_built, sap_added;                 /* lists valid; shapes appended since they were built */
    uint8_t *dead; int dead_cap, dead_any;    /* slots removed since the last step               */
    void *boxes; int boxes_cap;   /* bounds in sweep order (broadphase.c) */
    /* grid scratch: (cell hash << 32 | box) entries, radix-sorted as candidates are */
    struct bp_cand *cells, *cells_tmp; int cell_cap;
    /* this step's candidates (sorted by key) */
    struct bp_cand *cand, *cand_tmp; int cand_count, cand_cap;
    int *radix;                   /* 2^16 counters of the radix sort */
} broadphase;

/* the contact set: the pairs and manifolds after the last collide stage, and its events (contact.c) */
typedef struct contact_set {
    pair *pairs; int pair_count, pair_cap;                 /* the broad phase's pairs, sorted by key  */
    manifold *manifolds; int manifold_count, manifold_cap; /* the touching ones                        */
    pair *next_pairs; int next_pair_count, next_pair_cap;  /* built by the next update, then swapped   */
    manifold *next_manifolds; int next_manifold_count, next_manifold_cap;
    imp_contact_side *begin, *end; int begin_count, end_count, begin_cap, end_cap; /* 2 sides per event */
    double *begin_speed, *end_impulse; int begin_val_cap, end_val_cap; /* what each event carried */
    uint32_t next_point_id;
} contact_set;

/* body.c */
int bodies_dense(const imp_world *w, uint32_t slot);
void bodies_clear_accumulators(imp_world *w);
void bodies_damp(imp_world *w, double h, const uint8_t *skip); /* P, L *= exp(-c h) (body.c) */
int bodies_nan_guard(imp_world *w, const double *x0);
double bodies_kinetic_energy(const imp_world *w);
double bodies_potential_energy(const imp_world *w);
imp_ode_system bodies_ode(body_ode *o);
void bodies_place_shapes(imp_world *w, int i);  /* body i's shapes placed from its state */
void bodies_place_shape(imp_world *w, shape *s);
/* shape.c */
void shape_place(shape *s, const double *X, imp_vec3 com); /* world pose and bounds from its body's state */
void shapes_log(shape_store *st, imp_id id, bool removed, bool plane);
void shape_geom(const shape *s, geom *g);
void shape_geom_from_collider(const imp_collider_def *c, geom *g);
void shape_geom_bounds(geom *g);
void shape_free(shape *s);
bool shape_build(shape *s, const imp_shape_def *def, char *err, size_t errlen);
/* hull.c */
hull *hull_build(const double *points, int n, char *err, size_t errlen);
void hull_free(hull *h);
/* mass.c */
bool mass_of_hull(const hull *h, double *volume, imp_vec3 *center, imp_mat3 *inertia_unit_density);
/* broadphase.c */
void bp_find_pairs(imp_world *w);
bool bp_can_collide(const imp_world *w, const shape *a, const shape *b);
/* narrowphase.c: contacts between two geoms; returns the number of points, writes c->normal etc.
 * witness: in/out cached separating axis for polytope pairs */
int np_collide(const geom *a, const geom *b, imp_contact *c, int32_t *witness);
bool np_order(imp_shape_type a, imp_shape_type b); /* true when (a, b) must be swapped */
/* impulse.c: the impulse contact mode (S1's step order); returns nonzero when it did the step */
int impulse_step(imp_world *w, double dt);
void impulse_bullets(imp_world *w, const double *X0); /* continuous collision of bullets after the step */
/* query.c: the first hit of the segment on a static shape or collider */
bool query_ray_static(const imp_world *w, imp_vec3 from, imp_vec3 to, imp_ray_hit *hit);
void impulse_free(imp_world *w);
/* contact.c */
void contacts_update(imp_world *w);
void contacts_free(imp_world *w);
void bp_free(imp_world *w);
imp_contact_side contacts_side(const imp_world *w, uint32_t key);
const geom *contacts_geom(const imp_world *w, uint32_t key, geom *tmp);

/* what the script chose: world.c and the bindings write it, every stage reads it */
typedef struct world_settings {
    imp_vec3 gravity;                 /* m/s^2 */
    double drag;                      /* the world's viscous drag k_d: f = -k_d v */
    imp_method integrator;
    double tolerance;                 /* the adaptive integrator's */
    imp_contact_mode contact_mode;    /* the rigid bodies' contact response */
    bool planar;                      /* bodies move in the x-y plane and turn about z */
    bool sleeping;                    /* resting islands may sleep */
    int velocity_iterations, position_iterations; /* the impulse mode's sweeps */
} world_settings;

struct imp_world {
    world_settings settings;
    double time;
    long steps;
    bool locked;
    char error[512];
    imp_profile profile;

    particle_store *particles;
    force_store *forces;
    collider_store *colliders;
    particle_contacts *pcontacts;

    struct tinker *tinker; /* constraints and curve particles (tinkertoy.c); NULL until the first one */

    /* rigid bodies and collision (body.c ... contact.c) */
    body_store *bodies;
    shape_store *shapes;
    imp_ode_solver body_solver;
    double *bstate0; int bstate0_cap;
    broadphase *broadphase;
    contact_set *contacts;
    /* contact response (impulse.c) */
    struct impulse_scratch *imp;
    struct joint_set *joints; /* joint.c: the impulse mode's joints */
    struct qp_state *qp;            /* QP mode's contacts and scratch (contact_qp.c); NULL until used */

    struct particle_system *particle_system; /* the particle stage's solver and scratch (particle_system.c) */

    /* implicit integration, cloth and hair (implicit.c, cloth.c) */
    struct implicit_state *implicit;    /* owned by implicit.c, created on first use          */
    struct cloth_store *cloth;          /* owned by cloth.c, created by the first cloth/hair  */
};

/* particles.c */
int particles_slot_dense(const imp_world *w, uint32_t slot);
void particles_remove(imp_world *w, imp_id id);

/* particle_system.c: the particle stage's persistent part */
typedef struct particle_system {
    imp_ode_solver solver;          /* the world's ODE solver for the particles (its adaptive h carries over) */
    double *state0; int state0_cap; /* [x | v | u | u'] at the start of the step                            */
    double *force; int force_cap;   /* the force accumulator of one derivative evaluation, 3 per particle   */
    double *now_X, *now_dX; int now_cap; /* imp_world_solve_constraints's state and derivative             */
} particle_system;
struct imp_step;
particle_system *particle_system_create(imp_method method, double tolerance);
void particle_system_free(particle_system *ps);
imp_ode_system particles_ode(imp_world *w, int first, int count, particle_range *r);
int particles_step(const struct imp_step *st);
int particles_nan_guard(imp_world *w);
/* forces.c: all forces on the particles of range r at state (x, v) and time t into f; the arrays
 * are indexed from the range's first particle. Springs and behaviours need the whole store. */
int forces_accumulate(imp_world *w, double t, const particle_range *r, const double *x, const double *v, double *f);
bool forces_coupled(const imp_world *w); /* springs, behaviours, cloth or hair: forces that act on several particles */
void forces_particle_removed(imp_world *w, uint32_t slot);
double forces_spring_energy(const imp_world *w);
/* particle_collide.c */
void pcollide_find_contacts(imp_world *w);
void pcollide_drop_stale(imp_world *w);
void pcollide_contact_forces(imp_world *w, const particle_range *r, const double *x, double *f);
void pcollide_resolve(imp_world *w, const double *x0, const double *v0, double h);
void pcollide_friction_clamp(imp_world *w);
int pcollide_contact_row(const imp_world *w, int k, const double *x, imp_vec3 *normal, double *gap);
int pcollide_touching(const imp_world *w, int i, imp_vec3 *normals, int max);


/* contact_qp.c: world.contact = "qp" */
void qp_begin_step(imp_world *w, double h);            /* impulses, then the step's resting set     */
int qp_deriv(imp_world *w, const double *X, double *dX); /* adds the resting contact forces to dX   */
void qp_free(imp_world *w);
int qp_step(imp_world *w, imp_ode_solver *solver, double dt); /* integrate + collide, cut at impacts */

/* tinkertoy.c: constrained dynamics. When tinker_active, the whole store is one ODE whose state is
 * [x | v | u | udot]; particles_deriv places the curve particles on their curves, adds the
 * constraint forces after the applied and contact forces, and gives the curve particles' u''. */
bool tinker_active(const imp_world *w);
int tinker_state_dim(const imp_world *w);            /* 2 per curve particle                      */
void tinker_get_state(const imp_world *w, double *U);
void tinker_set_state(imp_world *w, const double *U);
/* x, v: the state's positions and velocities with the curve particles put at x(u), x_u udot */
int tinker_curves_place(imp_world *w, const double *X, int n, const double **x, const double **v);
int tinker_constraint_forces(imp_world *w, const double *x, const double *v, double *f);
void tinker_curves_deriv(imp_world *w, int n, const double *U, const double *f, double *dX);
/* after the ODE step: curve particles exactly on their curves; u put back where non-finite (U0: the
 * saved [u | udot]). Returns nonzero when a callback failed */
int tinker_after_integrate(imp_world *w, const double *U0);
/* after the collision pass: velocities of constrained particles touching colliders projected so the
 * constraints' Cdot = 0 and no contact pulls (impulses). Returns nonzero when a callback failed */
int tinker_after_collide(imp_world *w);
void tinker_particle_removed(imp_world *w, uint32_t slot);
void tinker_free(imp_world *w);

imp_vec3 pcollide_contact_normal(const imp_world *w, int k);

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
uint32_t *cloth_remove(imp_world *w, imp_id id, int *count);
int cloth_object_count(const imp_world *w);
void cloth_free(imp_world *w);

/* joint.c: the impulse mode's joints (S1); called from impulse.c's step */
void joints_free(imp_world *w);
int joints_prepare(imp_world *w, int n);
const uint8_t *joints_jointed(const imp_world *w);
bool joints_connected(const imp_world *w, int a, int b);
void joints_post_stabilize(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_mat3 *Iinv, const double *im, int n, double h,
                           bool motors);
int joints_pairs(const imp_world *w, const uint64_t **pairs); /* dense body pairs joined (sorted lo << 32 | hi; the world is n) */
/* S1 section VI: joints processed level by level with the contacts (blevel: contact-graph level per
 * dense body; `outside` or more: not in the graph) */
void joints_contacts_begin(imp_world *w, const imp_vec3 *v, const imp_vec3 *om, const imp_mat3 *Iinv, const double *im, int n,
                           double h);
void joints_level(imp_world *w, imp_vec3 *v, imp_vec3 *om, int n, int lo, int hi, const int *blevel, bool shock);
void joints_split(imp_world *w, imp_vec3 *vp, imp_vec3 *wp, int n);
void joints_pre_stabilize(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                          const imp_mat3 *Iinv, const double *im, int n, double h);
void joints_positions(imp_world *w, imp_vec3 *v, imp_vec3 *om, const imp_vec3 *vp, const imp_vec3 *wp,
                      imp_mat3 *Iinv, const double *im, int n, double h);
/* the constrained directions of joint k (dense index 0..count-1) now, in world coordinates, for the QP
 * mode's equality rows: returns the number of rows written (<= 6; 0 for a joint whose body is gone). A
 * row is linear (relative velocity of the two articulation points pa, pb along dir) or angular
 * (relative angular velocity along dir); b is the null id for the static world (pb then a world point) */
typedef struct joint_row {
    imp_id a, b;
    imp_vec3 pa, pb;   /* the articulation points now (world)                                     */
    imp_vec3 dir;      /* the row's direction now (world)                                         */
    bool angular;
    imp_quat fa, fb;   /* the joint frame (x = axis) in A's body frame, in B's (the world's): aligned at
                          creation, so they give the rows' position errors (the frames agree when held) */
} joint_row;
int joints_rows(const imp_world *w, int k, joint_row out[6]);
int joints_count(const imp_world *w);

/* the message imp_world_error returns: why the last call failed, or what the last step reported */
static inline void world_error(imp_world *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
}

#endif

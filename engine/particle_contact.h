/* particle_contact.h: particles against bodies and against each other, after the bodies' stage (particle_contact.c). */
#ifndef IMPETUS_PARTICLE_CONTACT_H
#define IMPETUS_PARTICLE_CONTACT_H

#include "parallel.h"
#include "particles.h"
#include "step.h"

/* a contact of particle i with a side (a body's shape or a collider) as the sweeps see it; the rest of
 * it is in its pc_side */
typedef struct pc_row {
    int i;                 /* the particle (dense)                                                  */
    int side;              /* its pc_side                                                            */
    int moves;             /* the side is a dynamic body, which answers impulses                    */
    imp_vec3 n;            /* unit normal, out of the side towards i                                */
    double kn;             /* effective mass along n                                                 */
    double target;         /* the normal velocity aimed at                                           */
    double mu;             /* Coulomb coefficient                                                    */
    double limit;          /* positions: n . x_i >= limit                                           */
    double jn;             /* accumulated impulses on i: normal, tangential                          */
    imp_vec3 jt;
} pc_row;

/* a pair as the sweeps see it: kept small (48 bytes; single precision but for the accumulated normal
 * impulse), as a pile has several per particle. Its effective mass 1 / (1/m_i + 1/m_j) and its limit
 * r_i + r_j are made from the particles where they are needed (particle_contact.c: pair_kn, project_pairs). */
typedef struct pc_pair {
    int i;                 /* particle i (dense)                                                     */
    uint32_t jx;           /* particle j (dense, pair_j), and PC_IMPACT: met approaching faster than a
                              resting pair (not warm-started next step)                             */
    float n[3];            /* unit normal, out of j towards i                                       */
    float target, mu;      /* normal velocity aimed at, Coulomb coefficient                          */
    float jt[3];           /* accumulated impulses on i: tangential, then normal                     */
    double jn;
} pc_pair;
#define PC_IMPACT 0x80000000u
static inline int pair_j(const pc_pair *r) { return (int)(r->jx & ~PC_IMPACT); }

/* what a side contact holds besides its row */
typedef struct pc_side {
    int body;              /* the body (dense), or -1: a collider                                    */
    imp_vec3 r, at;        /* the contact point's lever arm from the body's centre of mass, the point */
    imp_vec3 c;            /* a touch on the way: i's centre at the touch, on the body as it ended  */
    double s;              /* the fraction of the step at the touch (1: none)                       */
    double height;         /* i's height along -gravity: the solving order                           */
} pc_side;

/* a particle as the pair search reads it, copied in grid order so that neighbours lie near each other */
typedef struct pc_grain {
    double x0[3], v[3];    /* position at the start of the step, velocity                          */
    double im, mu, e;      /* inverse mass in the solve, friction, restitution                      */
    int particle;          /* dense index                                                            */
    int owner, vertex;     /* cloth or hair object + 1 (0: none), and its vertex                     */
    imp_id id;
} pc_grain;

/* The pair search cuts the particles into this many chunks (more than PAR_CHUNKS: its particles' work
 * varies along the pile, and small chunks let both threads finish it together) */
#define PC_SEARCH_CHUNKS 32

/* The rows of one group (particle_contact.c, "the solve on two threads"): its side rows, sorted
 * lowest first, and its pairs: the lists the chunks of the pair search found (pc_found), one after
 * another in chunk order, where the chunks wrote them */
typedef struct pc_group {
    pc_row *side, *spare; int side_count, side_cap;
    pc_pair *seg[PC_SEARCH_CHUNKS]; int seg_count[PC_SEARCH_CHUNKS];
    int pair_count;        /* in all the lists */
} pc_group;

/* the pairs of group G in their order: r runs over chunk c_'s list, then c_ + 1's */
#define PC_FOR_PAIRS(G, r)                                                                                             \
    for (int c_ = 0; c_ < PC_SEARCH_CHUNKS; c_++)                                                                      \
        for (pc_pair *r = (G)->seg[c_], *end_ = r + (G)->seg_count[c_]; r < end_; r++)

/* The pairs' impulses of the last step, from which the next step's sweeps start (warm starting): the
 * one part of the stage that carries from step to step (a snapshot keeps it; without it the next step
 * starts from zero impulses and converges less far). An entry per resting pair that pushed (not an
 * impact, pc_pair.impact), under the lower particle slot of the two: the higher one's id and the
 * impulse on the lower one. */
typedef struct pc_warm {
    int *start;            /* by particle slot s: its entries [start[s], start[s + 1])            */
    int slots;             /* slots the table covers                                               */
    imp_id *lower, *higher;
    float *impulse;        /* 3 per entry, N s                                                     */
    int count, cap, start_cap;
    uint32_t *pair_slot, *pair_index; /* warm_keep's scratch, room for each of the groups' lists one after
                              another: the lower slots of its kept pairs and their places in it (warm_slots) */
    int pair_slot_cap;
} pc_warm;

/* the pairs one chunk of the grid search found (particle_contact.c, meet_pairs), by group, and the
 * colliders near its particles (meet_colliders); the chunks' lists one after another in chunk order
 * are a group's pairs (pc_group), in the order one thread finds them */
typedef struct pc_found {
    pc_pair *pair[3]; int count[3], cap[3];
    int *near; int near_count, near_cap; /* meet_colliders: (particle, collider) within reach, 2 each */
} pc_found;

/* meet_bodies: one chunk's side contacts (row, side, group, whether the path touched), and where each
 * shape's rows begin among them (run[q], run[shapes] = count) */
typedef struct pc_meet {
    pc_row *row; struct pc_side *side; uint8_t *group, *touched; int count, cap;
    int *run; int run_cap;
} pc_meet;

/* the stage's scratch, kept for its capacity, and the warm start */
typedef struct particle_coupling {
    pc_warm warm;
    pc_group group[3];
    pc_side *side; int side_count, side_cap;
    int *order, *tmp; uint32_t *key; int order_cap;
    /* per particle (dense) */
    double *im;                       /* inverse mass in the solve: 0 for driven, fixed, kinematic */
    uint8_t *driven;                  /* held on a body point (particle_attach.c)                */
    uint8_t *half;                    /* which half of the split it lies in (0, 1)               */
    uint8_t *touched;                 /* in a contact of this step                                */
    uint8_t *boxed;                   /* sweep_boxes: it has a swept box (a finite one, and it moves) */
    int *first;                       /* its earliest touch of a body (a pc_side), or -1          */
    int *owner, *vertex;              /* cloth or hair object + 1 (0: none), and its vertex        */
    double *lo, *hi;                  /* swept bounds, 3 each                                      */
    double *disp_gap;                 /* pcontact_find_bodies: the gap to the nearest shape        */
    double *x_placed;                 /* 3 each: where the velocities put it, before the projection */
    double *energy;                   /* 2 each: its terms of an energy sum (energy_before, hold_projection) */
    int particle_cap;
    /* the pair grid: the particles by cell key, with their cells and data alongside */
    int *cell_start; int32_t (*bucket_cell)[3], (*cell_of)[3];
    double *bucket_x;                 /* PAIR_DATA arrays of particle_cap: x, y, z at the end, radius, path length */
    pc_grain *grain;
    uint32_t *bucket_of; int table_cap;
    pc_found found[PC_SEARCH_CHUNKS]; /* the pair search's lists; the first PAR_CHUNKS also scan_colliders' */
    /* per body (dense): velocities in the solve, inverse mass and world inverse inertia at the end */
    imp_vec3 *bv, *bw;
    double *bim;
    imp_mat3 *bI;
    int body_cap;
    /* pcontact_find_bodies: each shape's pose at the start of the step, and the resting contacts its
     * chunks made (chunk c's from rest_start[c] on), joined in chunk order */
    struct pc_pose *pose; int pose_cap;
    struct pcontact *rest; int rest_cap;
    int rest_start[PAR_CHUNKS], rest_count[PAR_CHUNKS];
    pc_meet meet[PAR_CHUNKS];
    struct shape_ctx *meet_shapes; int meet_shapes_cap; /* meet_bodies: each shape's poses and swept box */
} particle_coupling;

/* particle_contact.c: the stage (world.c), after the bodies' */
void particle_contacts_step(const imp_step *st);
void particle_coupling_free(imp_world *w);
/* particle_contact.c, before the particle stage (world.c): the step's resting contacts begun, and under
 * the implicit integrator the particles resting on body shapes put exactly onto them and added as
 * resting contacts (particle_collide.h) */
void particle_contacts_rest(const imp_step *st);
/* particle_contact.c, after the particle stage and before the bodies' (world.c): the bodies take the
 * resting contacts' impulses */
void particle_contacts_rest_give(const imp_step *st);

#endif

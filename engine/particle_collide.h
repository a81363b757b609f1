/* particle_collide.h: particles against the static colliders: resting contacts and collisions (particle_collide.c). */
#ifndef IMPETUS_PARTICLE_COLLIDE_H
#define IMPETUS_PARTICLE_COLLIDE_H

#include "imp_math.h"
#include "parallel.h"
#include "particles.h"

/* resting contact of one particle with one collider, or (under the implicit integrator) with one body
 * shape, found at the start of a step */
typedef struct pcontact {
    int particle;  /* dense index */
    int collider;  /* dense index, or -1: a body's shape */
    int body, shape; /* a body contact: the body and the shape (dense)                              */
    imp_vec3 vt0;  /* tangential velocity at the start of the step, relative to the surface */
    imp_vec3 u;    /* the surface's velocity at the contact (a collider's: zero)               */
    imp_vec3 at;   /* a body contact: the contact point in the body's frame, from its centre of mass */
    imp_vec3 normal; /* a body contact: the shape's outward normal there (world)                  */
    double mu;     /* Coulomb coefficient                                                       */
    imp_vec3 impulse; /* the contact's impulse on the particle in the step (the implicit integrator) */
} pcontact;

/* an impact of the last collision pass: the particle (dense) and the surface normal it hit */
typedef struct phit {
    int particle;
    imp_vec3 normal;
} phit;

/* A collider's bound for the passes' quick cull (pcollide_bounds): a plane's point and unit normal, else
 * the box along the world axes around the collider (centre c, half extents e; a box's e = |R| half) */
typedef struct pcollide_bound {
    bool plane, sensor;    /* a plane (n: its normal); a sensor (never pushes)                     */
    imp_vec3 c, n, e;      /* the box around the collider: centre, half extents along the world axes */
} pcollide_bound;

/* the particles' resting contacts of this step and the impacts of its collision pass (particle_collide.c) */
typedef struct particle_contacts {
    pcontact *contact; int count, cap;
    uint64_t particle_edits, collider_edits; /* the stores' edits when they were found */
    phit *hit; int hit_count, hit_cap;
    pcollide_bound *bound; int bound_cap; /* the colliders' bounds (pcollide_bounds)            */
    /* the pushing colliders' bounds again (not the sensors'), the planes' and the others' apart: the
     * passes' test whether any collider is near a particle at all (pcollide_planes_near, pcollide_boxes_near) */
    pcollide_bound *near_plane; int near_planes, near_boxes, near_cap;
    struct pcollide_near_box {
        double c[3], e[3];                /* pcollide_bound's c and e                                    */
        int axis[3];                      /* the axes by extent, least first: the likeliest to be beyond */
    } *near_box;
    /* what each chunk of the particles found on its thread (par_for), joined in chunk order: the
     * lists one pass in particle order makes */
    struct {
        pcontact *contact; int count, cap;
        phit *hit; int hit_count, hit_cap;
    } chunk[PAR_CHUNKS];
} particle_contacts;

/* particle_collide.c */
/* a step's resting contacts: pcollide_begin_contacts empties the list, the bodies' contacts come next
 * (particle_contact.c, pcollide_add_contact; the implicit integrator's alone), then the colliders'
 * (pcollide_find_contacts, in the particle stage), and the list ends in particle order. A particle
 * rests when it is within PCOLLIDE_REST_SLOP of a surface, its normal speed relative to it at most
 * PCOLLIDE_REST_SPEED. */
#define PCOLLIDE_REST_SLOP 1e-4  /* m  */
#define PCOLLIDE_REST_SPEED 1e-3 /* m/s */
void pcollide_begin_contacts(imp_world *w);
void pcollide_find_contacts(imp_world *w);
void pcollide_drop_stale(imp_world *w);
void pcollide_free(particle_contacts *pcs);
void pcollide_contact_forces(imp_world *w, const particle_range *r, const double *x, double *f);
/* the force fi on resting contact k's particle at position x with the contact's part applied (the pushing
 * part cancelled, friction): pcollide_contact_forces' step for one contact */
imp_vec3 pcollide_contact_force(const imp_world *w, int k, imp_vec3 x, imp_vec3 fi);
void pcollide_resolve(imp_world *w, const double *x0, const double *v0, double h);
void pcollide_friction_clamp(imp_world *w);
int pcollide_contact_row(const imp_world *w, int k, const double *x, imp_vec3 *normal, double *gap);
int pcollide_touching(const imp_world *w, int i, imp_vec3 *normals, int max);
imp_vec3 pcollide_contact_normal(const imp_world *w, int k);
double pcollide_distance(const imp_collider_def *c, imp_vec3 x, imp_vec3 *n);
/* true when x is surely farther than reach from the collider's surface, outside it (a cheap bound:
 * false does not mean near) */
bool pcollide_beyond(const imp_collider_def *c, imp_vec3 x, double reach);
/* every collider's bound (w->pcontacts->bound, one per collider, dense) */
const pcollide_bound *pcollide_bounds(imp_world *w);
/* pcollide_beyond, with collider c's bound b tried first: a point farther than reach from the box around a
 * collider is farther from the collider (a plane's test is pcollide_beyond's own) */
static inline bool pcollide_beyond_bound(const pcollide_bound *b, const imp_collider_def *c, imp_vec3 x, double reach)
{
    const imp_vec3 d = v3_sub(x, b->c);
    if (b->plane) return v3_dot(b->n, d) > reach;
    if (fabs(d.x) - b->e.x > reach || fabs(d.y) - b->e.y > reach || fabs(d.z) - b->e.z > reach) return true;
    return pcollide_beyond(c, x, reach);
}
/* some pushing plane whose pcollide_beyond_bound(x, reach) is false */
static inline bool pcollide_planes_near(const particle_contacts *pcs, imp_vec3 x, double reach)
{
    for (int t = 0; t < pcs->near_planes; t++)
        if (!(v3_dot(pcs->near_plane[t].n, v3_sub(x, pcs->near_plane[t].c)) > reach)) return true;
    return false;
}
/* some pushing collider other than a plane whose box is within reach of x (pcollide_beyond_bound's first
 * test false: then only it can be within reach) */
static inline bool pcollide_boxes_near(const particle_contacts *pcs, imp_vec3 x, double reach)
{
    const double p[3] = {x.x, x.y, x.z};
    for (int t = 0; t < pcs->near_boxes; t++) {
        const struct pcollide_near_box *b = &pcs->near_box[t];
        const int a0 = b->axis[0], a1 = b->axis[1], a2 = b->axis[2];
        if (!(fabs(p[a0] - b->c[a0]) - b->e[a0] > reach || fabs(p[a1] - b->c[a1]) - b->e[a1] > reach ||
              fabs(p[a2] - b->c[a2]) - b->e[a2] > reach))
            return true;
    }
    return false;
}
/* resting contact k: its Coulomb coefficient; the particle's velocity v (a state's, dense) relative
 * to the surface; its impulse on the particle in the step, set and added to by the implicit
 * integrator (particle_contact.c hands the opposite to a body) */
double pcollide_contact_friction(const imp_world *w, int k);
imp_vec3 pcollide_contact_relative(const imp_world *w, int k, const double *v);
void pcollide_set_impulse(imp_world *w, int k, imp_vec3 j);
void pcollide_add_impulse(imp_world *w, int k, imp_vec3 j);
void pcollide_add_contact(imp_world *w, const pcontact *pc);

#endif

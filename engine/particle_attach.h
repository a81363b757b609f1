/* particle_attach.h: particles pinned to points of bodies (particle_attach.c). */
#ifndef IMPETUS_PARTICLE_ATTACH_H
#define IMPETUS_PARTICLE_ATTACH_H

#include "particles.h"
#include "step.h"

/* one particle held at one point of a body. What carries from step to step (a snapshot keeps it):
 * particle, body, local, support, impulse; the rest is the step's. */
typedef struct attachment {
    imp_id particle, body;
    imp_vec3 local;    /* the point, body frame, from the body's centre of mass                  */
    imp_vec3 support;  /* m/s^2: the point's acceleration over the last step from everything but
                          its attachments (gravity, the body's forces, contacts, joints); g at first */
    imp_vec3 impulse;  /* N s: what the particle gave the body in the last step                 */
    /* during a step (attach_begin .. attach_follow) */
    int dense, body_dense;     /* -1: inert this step                                             */
    double share;              /* kg of the body the particle carries through the integration   */
    imp_vec3 force;            /* N: share (support - g), added to the particle's forces         */
    imp_vec3 applied;          /* N: the force the exchange put on the body for this step        */
    imp_vec3 u0;               /* m/s: the point's velocity at the start of the step            */
    imp_vec3 at0;              /* the point at the start of the step (world)                    */
    double mass0;              /* the particle's mass and motion, put back after the integration */
    uint8_t motion0;
} attachment;

/* the attachments (particle_attach.c) */
typedef struct attach_set {
    attachment *a;
    int count, cap;
    bool integrating;          /* between attach_begin and attach_exchange: the shares are on    */
    /* per body (dense), scratch of a step: its dynamic attachments, and their impulses' sum and moment */
    int *body_count;
    imp_vec3 *body_j, *body_l;
    int body_cap;
} attach_set;

/* particle_attach.c: the particle stage's part, before and after the integration (particle_system.c);
 * on a failed callback attach_abort puts the particles' masses and motions back instead */
void attach_begin(imp_world *w, const imp_step *st);
void attach_exchange(imp_world *w, const imp_step *st, const double *v0);
void attach_abort(imp_world *w);
/* after the bodies' stage (particle_contact.c): each particle onto its point, the body's support
 * measured for the next step; marks driven[dense] = 1 for the particles it placed */
void attach_follow(imp_world *w, const imp_step *st, uint8_t *driven);
/* the forces the attached particles get on top of their own during the integration (forces.c) */
void attach_forces(const imp_world *w, int first, int count, double *f);
void attach_particle_removed(imp_world *w, imp_id particle);
void attach_free(imp_world *w);

#endif

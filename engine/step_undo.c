/* step_undo.c: the undo of a failing step, kept at the start of every step (step_undo.h). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "cloth.h"
#include "contact.h"
#include "curve.h"
#include "implicit.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_contact.h"
#include "particle_system.h"
#include "sensor.h"
#include "step_undo.h"
#include "tinkertoy.h"
#include "world_parts.h"

/* ---- the undo of a failing step ------------------------------------------------------------------------- */

typedef struct step_undo {
    imp_ode_solver solver;                  /* the particle solver's scalars (its work array is not) */
    pcontact *contact; int count, contact_cap;
    uint64_t particle_edits, collider_edits;
    phit *hit; int hit_count, hit_cap;
    curve *curves; int curve_count, curve_cap;
    /* the constraint solver */
    double *clambda; int clambda_cap;       /* 3 per constraint                                    */
    int *crow; int crow_cap;                /* row, j_first, j_count per constraint (the assembly's) */
    double *lambda; int lambda_count, lambda_cap;
    jentry *J; int j_count, j_cap, j_rows;
    bool warm_ok, rows_valid, j_valid;
    int ncontact;
    long contact_step, stats_step;
    imp_constraint_stats stats;
    int begin_count, end_count;             /* the last step's contact events (cleared as a step starts) */
    int sensor_begin_count, sensor_end_count; /* ... and sensor events                              */
    /* the attachments (attach_begin drops dead ones and sets each one's step values), and the forces
     * on the bodies, which the attachments' exchange adds to */
    attachment *attach; int attach_count, attach_cap;
    imp_vec3 *body_force; int body_count, body_force_cap; /* force, torque per body (dense)           */
    /* the implicit integrator: whether its state existed and its pattern was built for the particles as
     * they are. A state or pattern the failed step made is dropped (the next step makes the same); the
     * warm start dv of a pattern that was current is as it was, since the scripts (forces and
     * behaviours) run before the solve. Building the pattern sorts the cloths' elements into its
     * parallel groups (cloth_bind_blocks), so a step that will build it keeps them in their order. */
    bool implicit_existed, implicit_current;
    bool coupling_existed;                  /* the particle-body stage's state (its warm starts) existed */
    unsigned char *cloth_elems; size_t cloth_len, cloth_cap;
} step_undo;

/* the cloths' element arrays, their parallel groups and draw lists, one after the other: into the
 * buffer (keep) or back from it */
static size_t cloth_elements(cloth_store *cs, unsigned char *buf, bool keep)
{
    size_t at = 0;
#define MOVE(ptr, bytes)                                                             \
    do {                                                                             \
        size_t n_ = (bytes);                                                         \
        if (n_ && buf) {                                                             \
            if (keep) memcpy(buf + at, (ptr), n_);                                   \
            else memcpy((ptr), buf + at, n_);                                        \
        }                                                                            \
        at += n_;                                                                    \
    } while (0)
    for (int k = 0; cs && k < cs->ids.count; k++) {
        cobj *o = &cs->obj[k];
        MOVE(o->tri, sizeof(ctri) * (size_t)o->ntri);
        MOVE(o->bend, sizeof(cbend) * (size_t)o->nbend);
        MOVE(o->seg, sizeof(cseg) * (size_t)o->nseg);
        MOVE(o->joint, sizeof(cjoint) * (size_t)o->njoint);
        MOVE(o->tri_g, sizeof o->tri_g);
        MOVE(o->bend_g, sizeof o->bend_g);
        MOVE(o->seg_g, sizeof o->seg_g);
        MOVE(o->joint_g, sizeof o->joint_g);
        if (o->draw) MOVE(o->draw, 3 * sizeof(int) * (size_t)o->ntri);
    }
#undef MOVE
    return at;
}

/* dst holds count elements of elem bytes from src, growing *cap */
static void *keep_copy(void *dst, int *cap, const void *src, size_t elem, int count)
{
    if (count > *cap) {
        *cap = count + count / 2 + 16;
        dst = ids_grow(dst, elem, (size_t)*cap);
    }
    if (count > 0) memcpy(dst, src, elem * (size_t)count);
    return dst;
}

void step_undo_keep(imp_world *w)
{
    if (!w->undo) {
        w->undo = calloc(1, sizeof(step_undo));
        if (!w->undo) abort();
    }
    step_undo *u = w->undo;
    u->solver = w->particle_system->solver;
    u->begin_count = w->contacts->begin_count, u->end_count = w->contacts->end_count;
    u->sensor_begin_count = w->sensors ? w->sensors->begin_count : 0, u->sensor_end_count = w->sensors ? w->sensors->end_count : 0;
    u->attach_count = w->attach ? w->attach->count : 0;
    u->body_count = 0;
    if (u->attach_count) {
        u->attach = keep_copy(u->attach, &u->attach_cap, w->attach->a, sizeof(attachment), u->attach_count);
        const body_store *B = w->bodies;
        u->body_count = B->ids.count;
        if (2 * u->body_count > u->body_force_cap) {
            u->body_force_cap = 2 * u->body_count + 16;
            u->body_force = ids_grow(u->body_force, sizeof(imp_vec3), (size_t)u->body_force_cap);
        }
        for (int k = 0; k < u->body_count; k++) u->body_force[2 * k] = B->body[k].force, u->body_force[2 * k + 1] = B->body[k].torque;
    }
    u->implicit_existed = w->implicit != NULL, u->implicit_current = implicit_current(w);
    u->coupling_existed = w->coupling != NULL;
    u->cloth_len = 0;
    if (w->settings.integrator == IMP_IMPLICIT && !u->implicit_current && w->cloth) {
        const size_t len = cloth_elements(w->cloth, NULL, true);
        if (len > u->cloth_cap) u->cloth_cap = len, u->cloth_elems = ids_grow(u->cloth_elems, 1, len);
        u->cloth_len = cloth_elements(w->cloth, u->cloth_elems, true);
    }
    const particle_contacts *pc = w->pcontacts;
    u->contact = keep_copy(u->contact, &u->contact_cap, pc->contact, sizeof(pcontact), pc->count);
    u->count = pc->count, u->particle_edits = pc->particle_edits, u->collider_edits = pc->collider_edits;
    u->hit = keep_copy(u->hit, &u->hit_cap, pc->hit, sizeof(phit), pc->hit_count);
    u->hit_count = pc->hit_count;
    u->curve_count = w->curves ? w->curves->count : 0;
    if (u->curve_count) u->curves = keep_copy(u->curves, &u->curve_cap, w->curves->curve, sizeof(curve), u->curve_count);
    const tinker *t = w->tinker;
    if (!t) return;
    const int nc = t->ids.count;
    if (3 * nc > u->clambda_cap) u->clambda_cap = 3 * nc + 16, u->clambda = ids_grow(u->clambda, sizeof(double), (size_t)u->clambda_cap);
    if (3 * nc > u->crow_cap) u->crow_cap = 3 * nc + 16, u->crow = ids_grow(u->crow, sizeof(int), (size_t)u->crow_cap);
    for (int k = 0; k < nc; k++) {
        const constraint *c = &t->constraint[k];
        memcpy(u->clambda + 3 * k, c->lambda, 3 * sizeof(double));
        u->crow[3 * k] = c->row, u->crow[3 * k + 1] = c->j_first, u->crow[3 * k + 2] = c->j_count;
    }
    u->lambda_count = tinker_lambda_count(t);
    if (u->lambda_count) u->lambda = keep_copy(u->lambda, &u->lambda_cap, t->lambda, sizeof(double), u->lambda_count);
    u->j_valid = t->j_valid, u->j_count = t->j_valid ? t->J.count : 0, u->j_rows = t->J.rows;
    if (u->j_count) u->J = keep_copy(u->J, &u->j_cap, t->J.e, sizeof(jentry), u->j_count);
    u->warm_ok = t->warm_ok, u->rows_valid = t->rows_valid, u->ncontact = t->ncontact;
    u->contact_step = t->contact_step, u->stats_step = t->stats_step, u->stats = t->stats;
}

void step_undo_put_back(imp_world *w)
{
    step_undo *u = w->undo;
    if (!u) return;
    imp_ode_solver *s = &w->particle_system->solver;
    double *work = s->work;
    int work_dim = s->work_dim;
    *s = u->solver;
    s->work = work, s->work_dim = work_dim;
    w->contacts->begin_count = u->begin_count, w->contacts->end_count = u->end_count;
    if (w->sensors) w->sensors->begin_count = u->sensor_begin_count, w->sensors->end_count = u->sensor_end_count;
    if (u->attach_count) {
        attach_set *as = w->attach;
        as->a = keep_copy(as->a, &as->cap, u->attach, sizeof(attachment), u->attach_count);
        as->count = u->attach_count, as->integrating = false;
        body_store *B = w->bodies;
        for (int k = 0; k < u->body_count; k++) B->body[k].force = u->body_force[2 * k], B->body[k].torque = u->body_force[2 * k + 1];
    }
    if (w->implicit && !u->implicit_existed) implicit_free(w);
    else if (w->implicit && !u->implicit_current) w->implicit->built = false;
    if (u->cloth_len) cloth_elements(w->cloth, u->cloth_elems, false);
    /* (the resting contacts made the particle-body stage's state; its warm starts change after the
     * particle stage, which a failing callback does not pass) */
    if (w->coupling && !u->coupling_existed) particle_coupling_free(w);
    particle_contacts *pc = w->pcontacts;
    pc->contact = keep_copy(pc->contact, &pc->cap, u->contact, sizeof(pcontact), u->count);
    pc->count = u->count, pc->particle_edits = u->particle_edits, pc->collider_edits = u->collider_edits;
    pc->hit = keep_copy(pc->hit, &pc->hit_cap, u->hit, sizeof(phit), u->hit_count);
    pc->hit_count = u->hit_count;
    if (u->curve_count) memcpy(w->curves->curve, u->curves, sizeof(curve) * (size_t)u->curve_count);
    tinker *t = w->tinker;
    if (!t) return;
    for (int k = 0; k < t->ids.count; k++) {
        constraint *c = &t->constraint[k];
        memcpy(c->lambda, u->clambda + 3 * k, 3 * sizeof(double));
        c->row = u->crow[3 * k], c->j_first = u->crow[3 * k + 1], c->j_count = u->crow[3 * k + 2];
    }
    if (u->lambda_count) memcpy(t->lambda, u->lambda, sizeof(double) * (size_t)u->lambda_count);
    if (u->j_valid) {
        if (u->j_count) memcpy(t->J.e, u->J, sizeof(jentry) * (size_t)u->j_count);
        t->J.count = u->j_count, t->J.rows = u->j_rows;
    }
    t->j_valid = u->j_valid, t->warm_ok = u->warm_ok, t->rows_valid = u->rows_valid, t->ncontact = u->ncontact;
    t->contact_step = u->contact_step, t->stats_step = u->stats_step, t->stats = u->stats;
    t->pattern_dirty = true; /* the failed step may have made another; the next solve makes it again */
}

void step_undo_free(imp_world *w)
{
    step_undo *u = w->undo;
    if (!u) return;
    free(u->contact), free(u->hit), free(u->curves), free(u->clambda), free(u->crow), free(u->lambda), free(u->J);
    free(u->attach), free(u->body_force), free(u->cloth_elems);
    free(u);
    w->undo = NULL;
}

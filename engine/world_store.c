/* world_store.c: a world's making and unmaking: every part allocated with its defaults, and every part
 * freed (the step itself is world.c's; snapshot.c builds worlds here to restore into). */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "cloth.h"
#include "collider.h"
#include "contact.h"
#include "contact_qp.h"
#include "curve.h"
#include "forces.h"
#include "implicit.h"
#include "impulse.h"
#include "joint.h"
#include "joint_force.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_contact.h"
#include "particle_system.h"
#include "presolve.h"
#include "sensor.h"
#include "step_undo.h"
#include "tinkertoy.h"
#include "world_parts.h"

imp_world_def imp_world_def_default(void)
{
    imp_world_def d;
    memset(&d, 0, sizeof d);
    d.gravity = v3(0, -9.81, 0);
    d.drag = 0;
    d.integrator = IMP_RK4;
    d.tolerance = 1e-6;
    return d;
}

imp_world *imp_world_create(const imp_world_def *def)
{
    static _Atomic uint64_t serials;
    imp_world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->serial = ++serials;
    w->particles = calloc(1, sizeof *w->particles);
    w->bodies = calloc(1, sizeof *w->bodies);
    w->shapes = calloc(1, sizeof *w->shapes);
    w->forces = calloc(1, sizeof *w->forces);
    w->colliders = calloc(1, sizeof *w->colliders);
    w->pcontacts = calloc(1, sizeof *w->pcontacts);
    w->broadphase = calloc(1, sizeof *w->broadphase);
    w->contacts = calloc(1, sizeof *w->contacts);
    if (!w->particles || !w->bodies || !w->shapes || !w->forces || !w->colliders || !w->pcontacts || !w->broadphase || !w->contacts)
        abort();
    w->bodies->plain.w = w;
    const imp_world_def d = def ? *def : imp_world_def_default();
    w->settings.gravity = d.gravity, w->settings.drag = d.drag;
    w->settings.integrator = d.integrator, w->settings.tolerance = d.tolerance;
    w->particle_system = particle_system_create(w->settings.integrator, w->settings.tolerance);
    imp_ode_solver_init(&w->body_solver, w->settings.integrator);
    w->settings.contact_mode = IMP_CONTACT_IMPULSE;
    w->settings.velocity_iterations = 10, w->settings.position_iterations = 4;
    w->settings.restitution_threshold = 0.5;
    w->settings.sleeping = true;
    return w;
}

void imp_world_destroy(imp_world *w)
{
    if (!w) return;
    while (w->forces->field_ids.count) imp_field_destroy(w, ids_of(&w->forces->field_ids, w->forces->field_ids.count - 1));
    while (w->forces->behavior_ids.count) imp_behavior_destroy(w, ids_of(&w->forces->behavior_ids, w->forces->behavior_ids.count - 1));
    tinker_free(w);
    curves_free(w);
    particle_store *p = w->particles;
    free(p->x), free(p->v), free(p->mass), free(p->inv_mass), free(p->radius), free(p->motion), free(p->color);
    free(p->restitution), free(p->friction);
    ids_free(&p->ids);
    free(p);
    ids_free(&w->forces->spring_ids), free(w->forces->springs);
    ids_free(&w->forces->behavior_ids), free(w->forces->behaviors);
    ids_free(&w->forces->field_ids), free(w->forces->fields);
    ids_free(&w->colliders->ids), free(w->colliders->collider);
    pcollide_free(w->pcontacts);
    free(w->forces), free(w->colliders), free(w->pcontacts);
    particle_system_free(w->particle_system);
    while (w->bodies->ids.count) imp_body_destroy(w, ids_of(&w->bodies->ids, w->bodies->ids.count - 1));
    ids_free(&w->bodies->ids), ids_free(&w->shapes->ids);
    free(w->bodies->body), free(w->bodies->state), free(w->shapes->shape), free(w->shapes->changes), free(w->bstate0);
    free(w->bodies), free(w->shapes);
    imp_ode_solver_free(&w->body_solver);
    contacts_free(w);
    attach_free(w);
    particle_coupling_free(w);
    sensors_free(w);
    presolve_free(w);
    bp_free(w);
    impulse_free(w);
    joints_free(w);
    joints_breaks_free(w);
    implicit_free(w);
    cloth_free(w);
    qp_free(w);
    step_undo_free(w);
    free(w);
}

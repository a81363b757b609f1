/* presolve.c: the pre-solve stage. A script's callback sees the contacts of the shapes that asked for
 * it (pre_solve = true on a body's shape or a collider) after the narrow phase and before the solver,
 * serially, and may disable a contact for this step (a one-way platform) or set its friction,
 * restitution and tangent velocity (ice, a bouncy pad, a conveyor belt). World.c runs it at the start of
 * the step, before anything moves, on the contacts the step starts from; a failing callback aborts the
 * step with the world as it was. The impulse mode's contact preparation reads the modifications
 * (impulse.c: contact_graph, build_points, build_patches); worlds without a callback pay nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "collider.h"
#include "contact.h"
#include "ids.h"
#include "presolve.h"
#include "shape.h"
#include "world_parts.h"

void imp_world_set_pre_solve(imp_world *w, imp_pre_solve_fn fn, void *user, void (*release)(void *user))
{
    if (!w->presolve) {
        if (!fn) {
            if (release) release(user);
            return;
        }
        w->presolve = calloc(1, sizeof *w->presolve);
        if (!w->presolve) abort();
    }
    presolve_set *p = w->presolve;
    if (p->release) p->release(p->user);
    p->fn = fn, p->user = user, p->release = release;
    p->count = 0;
}

void *imp_world_pre_solve_user(const imp_world *w) { return w->presolve && w->presolve->fn ? w->presolve->user : NULL; }

void presolve_free(imp_world *w)
{
    presolve_set *p = w->presolve;
    if (!p) return;
    if (p->release) p->release(p->user);
    free(p->mods), free(p->called);
    free(p);
    w->presolve = NULL;
}

/* whether a contact side's shape (or collider) asked for the callback */
static bool side_asks(const imp_world *w, imp_contact_side s)
{
    if (imp_id_is_null(s.body)) {
        const int c = ids_lookup(&w->colliders->ids, s.collider);
        return c >= 0 && w->colliders->collider[c].def.pre_solve;
    }
    const int i = ids_lookup(&w->bodies->ids, s.body);
    if (i < 0 || s.shape < 0 || s.shape >= w->bodies->body[i].nshapes) return false;
    return w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[s.shape]]].pre_solve;
}

/* the pair's material as the impulse mode combines it (impulse.c): friction sqrt(mu_a mu_b), static and
 * kinetic each, restitution max(e_a, e_b); a collider has one friction for both */
static void side_material(const imp_world *w, imp_contact_side s, double *mu, double *mu_s, double *e)
{
    *mu = *mu_s = 0.5, *e = 0;
    if (imp_id_is_null(s.body)) {
        const int c = ids_lookup(&w->colliders->ids, s.collider);
        if (c >= 0) *mu = *mu_s = w->colliders->collider[c].def.friction, *e = w->colliders->collider[c].def.restitution;
        return;
    }
    const int i = ids_lookup(&w->bodies->ids, s.body);
    if (i < 0 || s.shape < 0 || s.shape >= w->bodies->body[i].nshapes) return;
    const shape *sh = &w->shapes->shape[w->shapes->ids.slot_dense[w->bodies->body[i].shapes[s.shape]]];
    *mu = sh->friction, *mu_s = sh->static_friction >= 0 ? sh->static_friction : sh->friction, *e = sh->restitution;
}

int presolve_run(imp_world *w)
{
    presolve_set *p = w->presolve;
    if (!p || !p->fn) return 0;
    const contact_set *c = w->contacts;
    const int n = c->manifold_count;
    if (n > p->mod_cap) {
        p->mod_cap = n + n / 2 + 16;
        p->mods = ids_grow(p->mods, sizeof(imp_contact_mod), p->mod_cap);
        p->called = ids_grow(p->called, 1, p->mod_cap);
    }
    p->count = 0;
    for (int m = 0; m < n; m++) {
        const imp_contact *ct = &c->manifolds[m].c;
        p->called[m] = 0;
        if (!side_asks(w, ct->a) && !side_asks(w, ct->b)) continue;
        double mu_a, ms_a, e_a, mu_b, ms_b, e_b;
        side_material(w, ct->a, &mu_a, &ms_a, &e_a);
        side_material(w, ct->b, &mu_b, &ms_b, &e_b);
        imp_contact_mod *mod = &p->mods[m];
        mod->enabled = true, mod->friction = sqrt(mu_a * mu_b), mod->static_friction = sqrt(ms_a * ms_b);
        mod->restitution = fmax(e_a, e_b);
        mod->tangent_velocity = v3(0, 0, 0);
        if (p->fn(p->user, w, ct, mod)) return 1;
        p->called[m] = 1;
    }
    p->count = n, p->step = w->steps;
    return 0;
}

const imp_contact_mod *presolve_mod(const imp_world *w, int m)
{
    const presolve_set *p = w->presolve;
    if (!p || !p->fn || p->step != w->steps || m >= p->count || !p->called[m]) return NULL;
    return &p->mods[m];
}

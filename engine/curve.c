/* curve.c: particles bound to curves, S3's parametric constraints (section 5, "Lagrangian dynamics").
 *
 * A curve particle has a generalized coordinate u; its position is x(u), its velocity x_u u'. Its
 * motion is Lagrange's equation (S3 eq. 13 with J = x_u, 3x1):
 *
 *     m (x_u . x_u) u'' = x_u . f - m (x_u . x_uu) u'^2
 *
 * f being all forces on it, constraint forces included. u and u' join the particles' ODE state
 * after [x | v] (particle_system.c); every integrator steps them; after each step the particle is
 * put exactly at x(u) with velocity x_u u'. The curve comes from a callback, its derivatives by
 * central differences when the callback does not give them.
 *
 * A curve particle can only accelerate along its tangent t = x_u, so to the constraint solver
 * (tinkertoy.c) its block of W = M^-1 is t t^T / (m t.t) and its free acceleration includes the
 * curvature term (curve_free_acceleration): rods can hang from a bead on a wire (S3 5.1's hybrid
 * models). */
#include <stdlib.h>
#include <string.h>

#include "curve.h"
#include "ids.h"
#include "particles.h"
#include "world_parts.h"

#define H_CURVE 1e-4 /* step in u for a curve's x_u and x_uu */

static curve_set *curve_set_get(imp_world *w)
{
    if (!w->curves) {
        w->curves = calloc(1, sizeof(curve_set));
        if (!w->curves) abort();
    }
    return w->curves;
}

int curves_count(const imp_world *w) { return w->curves ? w->curves->count : 0; }
int curves_state_dim(const imp_world *w) { return 2 * curves_count(w); }

/* x(u), x_u, x_uu: the callback's, or central differences of x with step H_CURVE (1 + |u|) */
static int curve_eval(const curve *cv, double u, imp_vec3 *x, imp_vec3 *xu, imp_vec3 *xuu)
{
    double p[3], pu[3] = {0, 0, 0}, puu[3] = {0, 0, 0};
    int have = 0;
    if (cv->def.fn(cv->def.user, u, p, pu, puu, &have)) return 1;
    *x = v3_load(p);
    if ((have & 3) != 3) {
        const double h = H_CURVE * (1 + fabs(u));
        double a[3], b[3], da[3], dda[3];
        int hv = 0;
        if (cv->def.fn(cv->def.user, u + h, a, da, dda, &hv)) return 1;
        if (cv->def.fn(cv->def.user, u - h, b, da, dda, &hv)) return 1;
        for (int k = 0; k < 3; k++) {
            if (!(have & 1)) pu[k] = (a[k] - b[k]) / (2 * h);
            if (!(have & 2)) puu[k] = (a[k] - 2 * p[k] + b[k]) / (h * h);
        }
    }
    *xu = v3_load(pu);
    *xuu = v3_load(puu);
    return 0;
}

/* 1 / (t . t), 0 where the tangent vanishes or is not finite */
static double inverse_tangent_square(imp_vec3 t)
{
    const double tt = v3_dot(t, t);
    return tt > 1e-300 && isfinite(tt) ? 1 / tt : 0;
}

/* put a curve particle at x(u) with velocity x_u u' */
static int curve_place_committed(imp_world *w, curve *cv)
{
    imp_vec3 x, xu, xuu;
    if (curve_eval(cv, cv->u, &x, &xu, &xuu)) return 1;
    const int p = particles_slot_dense(w, cv->slot);
    cv->xu = xu, cv->xuu = xuu; /* the tangent at the committed u (the constraints' projection) */
    v3_store(w->particles->x + 3 * p, x);
    v3_store(w->particles->v + 3 * p, v3_scale(xu, cv->udot));
    return 0;
}

static curve *curve_of_particle(const imp_world *w, imp_id id)
{
    if (!w->curves || ids_lookup(&w->particles->ids, id) < 0) return NULL;
    for (int k = 0; k < w->curves->count; k++)
        if (w->curves->curve[k].slot == id.index) return &w->curves->curve[k];
    return NULL;
}

/* ---- the public API ------------------------------------------------------------------------------------ */

imp_curve_def imp_curve_def_default(void)
{
    imp_curve_def d;
    memset(&d, 0, sizeof d);
    d.particle = imp_particle_def_default();
    d.particle.color[0] = 0.35f, d.particle.color[1] = 0.8f, d.particle.color[2] = 1.0f;
    return d;
}

imp_id imp_curve_particle_create(imp_world *w, const imp_curve_def *def)
{
    const imp_id none = {0, 0};
    if (!def->fn || !isfinite(def->u) || !isfinite(def->udot)) return none;
    curve cv;
    memset(&cv, 0, sizeof cv);
    cv.def = *def;
    cv.u = def->u;
    cv.udot = def->udot;
    imp_vec3 x, xu, xuu;
    bool was_locked = w->locked;
    w->locked = true; /* the curve function may read the world, not change it */
    int rc = curve_eval(&cv, cv.u, &x, &xu, &xuu);
    w->locked = was_locked;
    if (rc || !v3_finite(x) || !v3_finite(xu)) return none;
    imp_particle_def pd = def->particle;
    pd.position = x;
    pd.velocity = v3_scale(xu, cv.udot);
    pd.motion = IMP_CURVE;
    imp_id id = imp_particle_create(w, &pd);
    cv.slot = id.index;
    curve_set *cs = curve_set_get(w);
    if (cs->count == cs->cap) {
        cs->cap = cs->cap ? 2 * cs->cap : 8;
        cs->curve = ids_grow(cs->curve, sizeof(curve), cs->cap);
    }
    cs->curve[cs->count++] = cv;
    return id;
}

bool imp_particle_on_curve(const imp_world *w, imp_id particle) { return curve_of_particle(w, particle) != NULL; }

double imp_curve_particle_u(const imp_world *w, imp_id particle)
{
    const curve *cv = curve_of_particle(w, particle);
    return cv ? cv->u : 0;
}

double imp_curve_particle_udot(const imp_world *w, imp_id particle)
{
    const curve *cv = curve_of_particle(w, particle);
    return cv ? cv->udot : 0;
}

imp_status imp_curve_particle_set(imp_world *w, imp_id particle, double u, double udot)
{
    curve *cv = curve_of_particle(w, particle);
    if (!cv || !isfinite(u) || !isfinite(udot)) return IMP_ERR_ARG;
    const double u0 = cv->u, ud0 = cv->udot;
    cv->u = u, cv->udot = udot;
    bool was_locked = w->locked;
    w->locked = true;
    int rc = curve_place_committed(w, cv);
    w->locked = was_locked;
    if (rc) {
        cv->u = u0, cv->udot = ud0;
        return IMP_ERR_CALLBACK;
    }
    return IMP_OK;
}

int imp_curve_particle_sample(imp_world *w, imp_id particle, int n, double *xyz)
{
    const curve *cv = curve_of_particle(w, particle);
    if (!cv || n < 2 || !(cv->def.u_max != cv->def.u_min)) return 0;
    const imp_curve_def def = cv->def;
    bool was_locked = w->locked;
    w->locked = true;
    int done = n;
    for (int i = 0; i < n && done; i++) {
        const double u = def.u_min + (def.u_max - def.u_min) * i / (n - 1);
        double xu[3], xuu[3];
        int have = 0;
        if (def.fn(def.user, u, xyz + 3 * i, xu, xuu, &have)) done = 0;
    }
    w->locked = was_locked;
    return done;
}

int imp_curve_particle_count(const imp_world *w) { return curves_count(w); }

imp_id imp_curve_particle_id(const imp_world *w, int i)
{
    return ids_of(&w->particles->ids, particles_slot_dense(w, w->curves->curve[i].slot));
}

/* ---- the ODE ------------------------------------------------------------------------------------------- */

void curves_get_state(const imp_world *w, double *U)
{
    const int nc = curves_count(w);
    for (int k = 0; k < nc; k++) U[k] = w->curves->curve[k].u, U[nc + k] = w->curves->curve[k].udot;
}

void curves_set_state(imp_world *w, const double *U)
{
    const int nc = curves_count(w);
    for (int k = 0; k < nc; k++) w->curves->curve[k].u = U[k], w->curves->curve[k].udot = U[nc + k];
}

int curves_place(imp_world *w, const double *X, int n, const double **x, const double **v)
{
    curve_set *cs = w->curves;
    const int nc = cs->count;
    if (6 * n > cs->placed_cap) {
        cs->placed_cap = 6 * n + 64;
        cs->placed = ids_grow(cs->placed, sizeof(double), cs->placed_cap);
    }
    memcpy(cs->placed, X, sizeof(double) * 6 * (size_t)n);
    const double *U = X + 6 * n;
    for (int k = 0; k < nc; k++) {
        curve *cv = &cs->curve[k];
        const int p = particles_slot_dense(w, cv->slot);
        imp_vec3 pos, xu, xuu;
        if (!isfinite(U[k]) || !isfinite(U[nc + k])) {
            /* u ran away inside the step: let the NaN through to the guard rather than ask the
             * script's curve about an infinite u */
            pos = xu = xuu = v3(NAN, NAN, NAN);
        } else if (curve_eval(cv, U[k], &pos, &xu, &xuu)) {
            return IMP_ERR_CALLBACK;
        }
        cv->xu = xu, cv->xuu = xuu, cv->ud = U[nc + k];
        cv->inv_tt = inverse_tangent_square(xu);
        v3_store(cs->placed + 3 * p, pos);
        v3_store(cs->placed + 3 * n + 3 * p, v3_scale(xu, cv->ud));
    }
    *x = cs->placed;
    *v = cs->placed + 3 * n;
    return 0;
}

/* u' and u'' (Lagrange's equation, top of the file), and the particle's dx = x_u u',
 * dv = x_u u'' + x_uu u'^2; f holds every force on it, constraint forces included */
void curves_deriv(imp_world *w, int n, const double *U, const double *f, double *dX)
{
    const curve_set *cs = w->curves;
    const int nc = cs->count;
    for (int k = 0; k < nc; k++) {
        const curve *cv = &cs->curve[k];
        const int p = particles_slot_dense(w, cv->slot);
        const double m = w->particles->mass[p], ud = U[nc + k];
        const double udd = (v3_dot(cv->xu, v3_load(f + 3 * p)) - m * v3_dot(cv->xu, cv->xuu) * ud * ud) * cv->inv_tt / m;
        dX[6 * n + k] = ud;
        dX[6 * n + nc + k] = udd;
        v3_store(dX + 3 * p, v3_scale(cv->xu, ud));
        v3_store(dX + 3 * n + 3 * p, v3_add(v3_scale(cv->xu, udd), v3_scale(cv->xuu, ud * ud)));
    }
}

int curves_after_integrate(imp_world *w, const double *U0)
{
    for (int k = 0; k < curves_count(w); k++) {
        curve *cv = &w->curves->curve[k];
        if (!isfinite(cv->u) || !isfinite(cv->udot)) {
            /* put u back and stop it; the particle is left non-finite so the NaN guard
             * (particles_nan_guard) puts it back where it was, at x(u0), at rest, and reports it */
            cv->u = U0[k], cv->udot = 0;
            v3_store(w->particles->x + 3 * particles_slot_dense(w, cv->slot), v3(NAN, NAN, NAN));
            continue;
        }
        if (curve_place_committed(w, cv)) return IMP_ERR_CALLBACK;
    }
    return 0;
}

/* ---- for the constraint solver ---------------------------------------------------------------------------- */

imp_vec3 curve_free_acceleration(const imp_world *w, const curve *cv, int p, const double *f)
{
    const double m_p = w->particles->mass[p], ud2 = cv->ud * cv->ud;
    const double udd = (v3_dot(cv->xu, v3_load(f + 3 * p)) - m_p * v3_dot(cv->xu, cv->xuu) * ud2) * cv->inv_tt / m_p;
    return v3_add(v3_scale(cv->xu, udd), v3_scale(cv->xuu, ud2));
}

void curves_committed_tangents(imp_world *w)
{
    for (int k = 0; k < curves_count(w); k++) {
        curve *cv = &w->curves->curve[k];
        cv->inv_tt = inverse_tangent_square(cv->xu);
    }
}

int curve_move(imp_world *w, curve *cv, double du)
{
    cv->u += du;
    return curve_place_committed(w, cv);
}

void curve_push(imp_world *w, curve *cv, double dudot)
{
    cv->udot += dudot;
    v3_store(w->particles->v + 3 * particles_slot_dense(w, cv->slot), v3_scale(cv->xu, cv->udot));
}

/* ---- removal and cleanup ---------------------------------------------------------------------------------- */

void curves_particle_removed(imp_world *w, uint32_t slot)
{
    curve_set *cs = w->curves;
    for (int k = 0; cs && k < cs->count; k++)
        if (cs->curve[k].slot == slot) {
            imp_curve_def gone = cs->curve[k].def;
            cs->curve[k] = cs->curve[--cs->count];
            if (gone.release) gone.release(gone.user);
            break;
        }
}

void curves_free(imp_world *w)
{
    curve_set *cs = w->curves;
    if (!cs) return;
    while (cs->count) {
        imp_curve_def gone = cs->curve[--cs->count].def;
        if (gone.release) gone.release(gone.user);
    }
    free(cs->curve), free(cs->placed);
    free(cs);
    w->curves = NULL;
}

/* tinkertoy.c: constrained particle dynamics with Lagrange multipliers (S3 "Constrained dynamics",
 * Witkin: sections 1-4 and the slides), with the curve particles of curve.c (section 5) in W.
 *
 * Implicit constraints. Every constraint is one or more scalar rows C_i(q) = 0 over the positions
 * q = [x_1 .. x_n] of the particles it names. With J = dC/dq (block-sparse, one 1x3 block per
 * row-particle pair), W = M^-1 and Q the applied forces (including resting contact forces), the
 * constraint force Q^ = J^T lambda does no work on legal velocities (virtual work) and makes the
 * acceleration legal, Cddot = Jdot qdot + J W (Q + Q^) = -ks C - kd Cdot, which is S3 eq. 11:
 *
 *     J W J^T lambda = -Jdot qdot - J W Q - ks C - kd Cdot
 *
 * solved once per derivative evaluation by conjugate gradient on the matrix-free product
 * lambda -> J (W (J^T lambda)), warm-started from the last lambda; Q^ = J^T lambda is then added to
 * the particles' force accumulators before a = f/m (particle_system.c), so every integrator sees it.
 * Cdot = J qdot, since no constraint depends on time. Jdot qdot uses the Jdot blocks
 * (Jdot = dJ/dt = d Cdot / dq). The ks, kd feedback absorbs drift (S3 2.2 and 3).
 *
 * W. Dynamic particles: (1/m) I. Fixed and kinematic particles: 0 (they do not answer forces), but
 * their velocities are in qdot, so a rod to a kinematic particle sees it move (Jdot qdot, Cdot).
 * A particle on a curve (curve.c) can only accelerate along its tangent t = x_u: its block is
 * t t^T / (m t.t), and its free acceleration includes the curvature term, so rods can hang from
 * a bead on a wire (S3 5.1's hybrid models).
 *
 * The rows of a constraint, with r = x - center etc.:
 *
 *   pin     C = x - p                       J = I (3 rows)          Jdot = 0
 *   rod     C = |d| - L, d = xa - xb, n = d/|d|
 *                                           J = n on a, -n on b      Jdot = (w - n (n.w)) / |d| on a,
 *                                                                    minus on b, w = va - vb
 *           (the slides' form. (d.d - L^2)/(2L) has the same zero and first derivatives there, but
 *            its gradient d/L shrinks as a rod is crushed, so a rod squashed by collisions loses its
 *            grip; with |d| - L the gradient is a unit vector at any length, and lambda is the
 *            rod's force in newtons. At d = 0 exactly the row is dropped (no direction).)
 *   wire    C0 = n . r                      J = n                    Jdot = 0
 *           C1 = (r.r - R^2) / (2R)         J = r/R                  Jdot = v/R
 *           (the circle is the plane through the centre cut by the sphere of radius R: S3's bead
 *            C = (x.x - 1)/2 with a plane row to hold it in 3D)
 *   plane   C = n . (x - p)                 J = n                    Jdot = 0
 *   line    C = e_k . (x - p), k = 1, 2     J = e_k                  Jdot = 0   (e_1, e_2 across the line)
 *   script  C(x_1..x_n) from a callback; J from its gradients or central differences,
 *           Jdot = d/ds J(q + s qdot) at s = 0 by a central difference along qdot.
 *
 * Solving. J W J^T is symmetric positive semidefinite. Rows whose particles cannot move (all W
 * blocks zero) are filtered out of CG (lambda = 0). Redundant rows make it singular: CG still
 * converges on the consistent system it then is; inconsistent ones (two rods of different length
 * between the same particles) stop at the iteration cap or when d.q <= 0, and such a solve is not
 * used as the next warm start, so lambda cannot grow from solve to solve. The preconditioner is the
 * incomplete Cholesky factorization L D L^T ~ J W J^T of ic0.c, on the pattern of the assembled
 * matrix: exact for a chain (tridiagonal), so a chain of 1000 rods takes one or two iterations
 * where Jacobi (or none) takes hundreds; "jacobi" and "none" are the other choices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "collider.h"
#include "curve.h"
#include "ic0.h"
#include "ids.h"
#include "imp_math.h"
#include "particle_collide.h"
#include "particles.h"
#include "sparse.h"
#include "step.h"
#include "tinkertoy.h"
#include "world_parts.h"

#define H_GRAD 1e-6   /* relative step of central differences for a script constraint's gradient     */
#define H_JDOT 1e-4   /* relative step along qdot (and of the gradients there) for its Jdot          */
#define SOLVE_FAILED 1e-3     /* a solve that ends with |r| > this |b| was ill-posed: regularize      */
#define SOLVE_REGULARIZE 1e-2 /* eps of the regularized fallback (A + eps diag(A)) lambda = b         */

/* the dense index of a particle slot (particles_slot_dense, inlined: it runs per block per evaluation) */
#define DENSE(w, slot) ((int)(w)->particles->ids.slot_dense[slot])

static inline double maxd(double a, double b) { return a > b ? a : b; }

/* J gains the block g at (row, particle p); the capacity is reserved once per assembly (t->j_entries) */
static inline void jpush(jmat *J, int row, int p, imp_vec3 g)
{
    jentry *e = &J->e[J->count++];
    e->row = row, e->particle = p;
    e->g[0] = g.x, e->g[1] = g.y, e->g[2] = g.z;
}

/* feedback Cddot = -ks C - kd Cdot: critically damped at omega = 10/s, so a violation decays in
 * about half a second while h omega = 1/6 at 60 Hz stays far inside every explicit method's
 * stability region. Larger gains do not simply hold C closer: they also fight the O(h^2)
 * excursions of the Runge-Kutta stages off the constraint, which costs energy accuracy. */
static imp_constraint_settings settings_default(void)
{
    imp_constraint_settings s = {100, 20, 1e-9, 0, IMP_PRECOND_IC0};
    return s;
}

static tinker *tinker_get(imp_world *w)
{
    if (!w->tinker) {
        tinker *t = calloc(1, sizeof *t);
        if (!t) abort();
        t->set = settings_default();
        t->stats_step = -1;
        t->pattern_dirty = true;
        w->tinker = t;
    }
    return w->tinker;
}

bool tinker_active(const imp_world *w) { return (w->tinker && w->tinker->ids.count > 0) || curves_count(w) > 0; }

/* the multipliers live in t->lambda by row while the set is unchanged; before the set changes they
 * go back to their constraints (rows move), and the next solve gathers them again */
static void lambda_to_constraints(tinker *t)
{
    if (!t->rows_valid) return;
    for (int k = 0; k < t->ids.count; k++) {
        constraint *c = &t->constraint[k];
        for (int j = 0; j < c->rows; j++) c->lambda[j] = t->lambda[c->row + j];
    }
    t->rows_valid = false;
}

static void structure_changed(tinker *t)
{
    t->pattern_dirty = true;
    t->j_valid = false;
    t->rows_valid = false;
}

static const double *lambda_of(const tinker *t, const constraint *c)
{
    return t->rows_valid ? t->lambda + c->row : c->lambda;
}

/* ---- constraints: create, destroy, read ---------------------------------------------------------- */

imp_constraint_def imp_constraint_def_default(void)
{
    imp_constraint_def d;
    memset(&d, 0, sizeof d);
    d.kind = IMP_CONSTRAINT_ROD;
    d.normal = v3(0, 0, 1);
    d.direction = v3(1, 0, 0);
    d.radius = -1;
    d.length = -1;
    d.color[0] = 0.85f, d.color[1] = 0.88f, d.color[2] = 0.92f, d.color[3] = 1.0f;
    return d;
}

static int kind_arity(imp_constraint_kind k) { return k == IMP_CONSTRAINT_ROD ? 2 : 1; }

static int kind_rows(imp_constraint_kind k)
{
    switch (k) {
    case IMP_CONSTRAINT_PIN: return 3;
    case IMP_CONSTRAINT_WIRE:
    case IMP_CONSTRAINT_LINE: return 2;
    default: return 1;
    }
}

/* the kind's own geometry, defaults taken from where the particles are: a rod's length, a wire's
 * unit normal and radius, a plane's unit normal, a line's unit direction and the unit vectors e1, e2
 * across it; false when it is degenerate */
static bool constraint_geometry(const imp_world *w, constraint *c, const imp_constraint_def *def, const int *dense)
{
    imp_vec3 x0 = v3_load(w->particles->x + 3 * dense[0]);
    switch (def->kind) {
    case IMP_CONSTRAINT_ROD:
        if (c->def.length < 0) c->def.length = v3_len(v3_sub(x0, v3_load(w->particles->x + 3 * dense[1])));
        if (!(c->def.length > 0) || !isfinite(c->def.length)) return false;
        break;
    case IMP_CONSTRAINT_WIRE: {
        c->def.normal = v3_normalize(def->normal);
        if (v3_len(c->def.normal) == 0) return false;
        if (c->def.radius < 0) {
            imp_vec3 r = v3_sub(x0, def->center);
            c->def.radius = v3_len(v3_mad(r, c->def.normal, -v3_dot(r, c->def.normal)));
        }
        if (!(c->def.radius > 0) || !isfinite(c->def.radius)) return false;
        break;
    }
    case IMP_CONSTRAINT_PLANE:
        c->def.normal = v3_normalize(def->normal);
        if (v3_len(c->def.normal) == 0) return false;
        break;
    case IMP_CONSTRAINT_LINE: {
        imp_vec3 d = v3_normalize(def->direction);
        if (v3_len(d) == 0) return false;
        c->def.direction = d;
        /* e1: the unit axis least aligned with d, made orthogonal to it; e2 = d x e1 */
        imp_vec3 a = fabs(d.x) <= fabs(d.y) && fabs(d.x) <= fabs(d.z) ? v3(1, 0, 0)
                     : fabs(d.y) <= fabs(d.z)                         ? v3(0, 1, 0)
                                                                      : v3(0, 0, 1);
        c->e1 = v3_normalize(v3_mad(a, d, -v3_dot(a, d)));
        c->e2 = v3_cross(d, c->e1);
        break;
    }
    default: break;
    }
    return true;
}

imp_id imp_constraint_create(imp_world *w, const imp_constraint_def *def)
{
    const imp_id none = {0, 0};
    if ((unsigned)def->kind > IMP_CONSTRAINT_CALLBACK) return none;
    int n = def->kind == IMP_CONSTRAINT_CALLBACK ? def->n : kind_arity(def->kind);
    if (n < 1 || n > IMP_CONSTRAINT_MAX || (def->kind == IMP_CONSTRAINT_CALLBACK && !def->fn)) return none;
    int dense[IMP_CONSTRAINT_MAX];
    for (int i = 0; i < n; i++) {
        dense[i] = ids_lookup(&w->particles->ids, def->particles[i]);
        if (dense[i] < 0) return none;
        for (int j = 0; j < i; j++)
            if (def->particles[j].index == def->particles[i].index) return none; /* one block per particle */
    }
    constraint c;
    memset(&c, 0, sizeof c);
    c.def = *def;
    c.def.n = n;
    c.n = n;
    c.rows = kind_rows(def->kind);
    for (int i = 0; i < n; i++) c.slots[i] = def->particles[i].index;
    if (!constraint_geometry(w, &c, def, dense)) return none;
    tinker *t = tinker_get(w);
    lambda_to_constraints(t);
    if (t->ids.count == t->constraint_cap) {
        t->constraint_cap = t->constraint_cap ? 2 * t->constraint_cap : 16;
        t->constraint = ids_grow(t->constraint, sizeof(constraint), t->constraint_cap);
    }
    imp_id id = ids_alloc(&t->ids);
    t->constraint[t->ids.count - 1] = c;
    t->rows += c.rows;
    t->j_entries += def->kind == IMP_CONSTRAINT_CALLBACK ? n : c.rows * n;
    structure_changed(t);
    return id;
}

void imp_constraint_destroy(imp_world *w, imp_id id)
{
    tinker *t = w->tinker;
    if (!t) return;
    int d = ids_lookup(&t->ids, id);
    if (d < 0) return;
    lambda_to_constraints(t);
    const constraint *c = &t->constraint[d];
    imp_constraint_def gone = c->def;
    t->rows -= c->rows;
    t->j_entries -= gone.kind == IMP_CONSTRAINT_CALLBACK ? c->n : c->rows * c->n;
    ids_remove(&t->ids, id);
    t->constraint[d] = t->constraint[t->ids.count];
    structure_changed(t);
    if (gone.release) gone.release(gone.user);
}

static constraint *constraint_of(const imp_world *w, imp_id id)
{
    if (!w->tinker) return NULL;
    int d = ids_lookup(&w->tinker->ids, id);
    return d < 0 ? NULL : &w->tinker->constraint[d];
}

bool imp_constraint_valid(const imp_world *w, imp_id id) { return constraint_of(w, id) != NULL; }

imp_constraint_def imp_constraint_get(const imp_world *w, imp_id id)
{
    const constraint *c = constraint_of(w, id);
    if (!c) return imp_constraint_def_default();
    imp_constraint_def d = c->def;
    /* the particles as they are now (ids carry the current generation) */
    for (int i = 0; i < c->n; i++) d.particles[i] = ids_of(&w->particles->ids, particles_slot_dense(w, c->slots[i]));
    return d;
}

void imp_constraint_set(imp_world *w, imp_id id, const imp_constraint_def *def)
{
    constraint *c = constraint_of(w, id);
    if (!c) return;
    if (c->def.kind == IMP_CONSTRAINT_PIN && v3_finite(def->point)) c->def.point = def->point;
    if (c->def.kind == IMP_CONSTRAINT_ROD && def->length > 0 && isfinite(def->length)) c->def.length = def->length;
    memcpy(c->def.color, def->color, sizeof c->def.color);
}

int imp_constraint_rows(const imp_world *w, imp_id id)
{
    const constraint *c = constraint_of(w, id);
    return c ? c->rows : 0;
}

int imp_constraint_lambda(const imp_world *w, imp_id id, double lambda[3])
{
    const constraint *c = constraint_of(w, id);
    if (!c) return 0;
    const double *l = lambda_of(w->tinker, c);
    for (int k = 0; k < c->rows; k++) lambda[k] = l[k];
    return c->rows;
}

imp_vec3 imp_constraint_force(const imp_world *w, imp_id id, int i)
{
    const constraint *c = constraint_of(w, id);
    imp_vec3 f = v3(0, 0, 0);
    if (!c || i < 0 || i >= c->n || !w->tinker->j_valid) return f;
    const int p = particles_slot_dense(w, c->slots[i]);
    const jmat *J = &w->tinker->J;
    const double *l = lambda_of(w->tinker, c);
    for (int e = c->j_first; e < c->j_first + c->j_count; e++)
        if (J->e[e].particle == p) f = v3_mad(f, v3_load(J->e[e].g), l[J->e[e].row - c->row]);
    return f;
}

int imp_constraint_count(const imp_world *w) { return w->tinker ? w->tinker->ids.count : 0; }
imp_id imp_constraint_id(const imp_world *w, int i) { return ids_of(&w->tinker->ids, i); }

/* ---- the rows of one constraint --------------------------------------------------------------------- */

static void gather(const imp_world *w, const constraint *c, const double *src, double *out)
{
    for (int i = 0; i < c->n; i++) memcpy(out + 3 * i, src + 3 * particles_slot_dense(w, c->slots[i]), 3 * sizeof(double));
}

/* C of a script constraint and its gradient g[3n] at xs: the callback's own, or central differences
 * with relative step h (2 x 3n more calls) */
static int script_grad(const constraint *c, const double *xs, double *C, double *g, double h)
{
    const int n3 = 3 * c->n;
    int have = 0;
    if (c->def.fn(c->def.user, c->n, xs, C, g, &have)) return 1;
    if (have) return 0;
    double xp[3 * IMP_CONSTRAINT_MAX], dummy[3 * IMP_CONSTRAINT_MAX];
    memcpy(xp, xs, sizeof(double) * (size_t)n3);
    for (int j = 0; j < n3; j++) {
        const double step = h * (1 + fabs(xs[j]));
        double cp, cm;
        int hv = 0;
        xp[j] = xs[j] + step;
        if (c->def.fn(c->def.user, c->n, xp, &cp, dummy, &hv)) return 1;
        xp[j] = xs[j] - step;
        if (c->def.fn(c->def.user, c->n, xp, &cm, dummy, &hv)) return 1;
        xp[j] = xs[j];
        g[j] = (cp - cm) / (2 * step);
    }
    return 0;
}

/* C only, at the committed or given positions (no derivatives); returns rows, or -1 on error */
static int constraint_value(const imp_world *w, const constraint *c, const double *x, double *C)
{
    const int p = particles_slot_dense(w, c->slots[0]);
    const imp_vec3 x0 = v3_load(x + 3 * p);
    const imp_constraint_def *d = &c->def;
    switch (d->kind) {
    case IMP_CONSTRAINT_PIN: {
        imp_vec3 e = v3_sub(x0, d->point);
        C[0] = e.x, C[1] = e.y, C[2] = e.z;
        break;
    }
    case IMP_CONSTRAINT_ROD:
        C[0] = v3_len(v3_sub(x0, v3_load(x + 3 * particles_slot_dense(w, c->slots[1])))) - d->length;
        break;
    case IMP_CONSTRAINT_WIRE: {
        imp_vec3 r = v3_sub(x0, d->center);
        C[0] = v3_dot(d->normal, r);
        C[1] = (v3_dot(r, r) - d->radius * d->radius) / (2 * d->radius);
        break;
    }
    case IMP_CONSTRAINT_PLANE: C[0] = v3_dot(d->normal, v3_sub(x0, d->point)); break;
    case IMP_CONSTRAINT_LINE:
        C[0] = v3_dot(c->e1, v3_sub(x0, d->point));
        C[1] = v3_dot(c->e2, v3_sub(x0, d->point));
        break;
    case IMP_CONSTRAINT_CALLBACK: {
        double xs[3 * IMP_CONSTRAINT_MAX], g[3 * IMP_CONSTRAINT_MAX];
        int have = 0;
        gather(w, c, x, xs);
        if (d->fn(d->user, c->n, xs, C, g, &have)) return -1;
        break;
    }
    }
    return c->rows;
}

/* a script constraint's row at (x, v): C into t->C[row], its J blocks (the callback's gradient, or
 * central differences) and its Jdot blocks (a central difference of J along qdot); nonzero when the
 * callback failed */
static int script_row(imp_world *w, tinker *t, const constraint *c, int row, const double *x, const double *v)
{
    const int n3 = 3 * c->n;
    double xs[3 * IMP_CONSTRAINT_MAX] = {0}, vs[3 * IMP_CONSTRAINT_MAX] = {0}, g[3 * IMP_CONSTRAINT_MAX];
    double gp[3 * IMP_CONSTRAINT_MAX], gm[3 * IMP_CONSTRAINT_MAX], xp[3 * IMP_CONSTRAINT_MAX];
    gather(w, c, x, xs);
    gather(w, c, v, vs);
    if (script_grad(c, xs, t->C + row, g, H_GRAD)) return 1;
    /* Jdot = d/ds J(q + s qdot) at s = 0: (J(q + e qdot) - J(q - e qdot)) / 2e, with e qdot a
     * step of H_JDOT relative to the positions' size */
    double vmax = 0, xmax = 0, unused;
    for (int j = 0; j < n3; j++) vmax = fmax(vmax, fabs(vs[j])), xmax = fmax(xmax, fabs(xs[j]));
    bool moving = vmax > 0 && isfinite(vmax);
    if (moving) {
        const double e = H_JDOT * (1 + xmax) / vmax;
        for (int j = 0; j < n3; j++) xp[j] = xs[j] + e * vs[j];
        if (script_grad(c, xp, &unused, gp, H_JDOT)) return 1;
        for (int j = 0; j < n3; j++) xp[j] = xs[j] - e * vs[j];
        if (script_grad(c, xp, &unused, gm, H_JDOT)) return 1;
        for (int j = 0; j < n3; j++) gp[j] = (gp[j] - gm[j]) / (2 * e);
    }
    for (int i = 0; i < c->n; i++) {
        const int q = DENSE(w, c->slots[i]);
        jpush(&t->J, row, q, v3_load(g + 3 * i));
        if (moving) jpush(&t->Jdot, row, q, v3_load(gp + 3 * i));
    }
    return 0;
}

/* one constraint's rows at (x, v) from `row` on: C into t->C, its J blocks into t->J, its nonzero
 * Jdot blocks into t->Jdot (the formulas are in the comment at the top). A constraint always adds
 * the same J blocks, zero ones included, so J's pattern only changes with the constraint set. */
static int constraint_eval(imp_world *w, tinker *t, constraint *c, int row, const double *x, const double *v)
{
    const imp_constraint_def *d = &c->def;
    const int p = DENSE(w, c->slots[0]);
    const imp_vec3 x0 = v3_load(x + 3 * p);
    double *C = t->C + row;
    c->row = row;
    c->j_first = t->J.count;
    switch (d->kind) {
    case IMP_CONSTRAINT_PIN: {
        imp_vec3 e = v3_sub(x0, d->point);
        C[0] = e.x, C[1] = e.y, C[2] = e.z;
        jpush(&t->J, row, p, v3(1, 0, 0));
        jpush(&t->J, row + 1, p, v3(0, 1, 0));
        jpush(&t->J, row + 2, p, v3(0, 0, 1));
        break;
    }
    case IMP_CONSTRAINT_ROD: {
        const int q = DENSE(w, c->slots[1]);
        imp_vec3 dd = v3_sub(x0, v3_load(x + 3 * q)), dv = v3_sub(v3_load(v + 3 * p), v3_load(v + 3 * q));
        const double len = v3_len(dd);
        C[0] = len - d->length;
        imp_vec3 n = v3(0, 0, 0), ndot = v3(0, 0, 0);
        if (len > 1e-12 * d->length) {
            n = v3_scale(dd, 1 / len);
            ndot = v3_scale(v3_mad(dv, n, -v3_dot(n, dv)), 1 / len);
        }
        jpush(&t->J, row, p, n);
        jpush(&t->J, row, q, v3_scale(n, -1));
        jpush(&t->Jdot, row, p, ndot);
        jpush(&t->Jdot, row, q, v3_scale(ndot, -1));
        break;
    }
    case IMP_CONSTRAINT_WIRE: {
        const double R = d->radius;
        imp_vec3 r = v3_sub(x0, d->center);
        C[0] = v3_dot(d->normal, r);
        C[1] = (v3_dot(r, r) - R * R) / (2 * R);
        jpush(&t->J, row, p, d->normal);
        jpush(&t->J, row + 1, p, v3_scale(r, 1 / R));
        jpush(&t->Jdot, row + 1, p, v3_scale(v3_load(v + 3 * p), 1 / R));
        break;
    }
    case IMP_CONSTRAINT_PLANE:
        C[0] = v3_dot(d->normal, v3_sub(x0, d->point));
        jpush(&t->J, row, p, d->normal);
        break;
    case IMP_CONSTRAINT_LINE:
        C[0] = v3_dot(c->e1, v3_sub(x0, d->point));
        C[1] = v3_dot(c->e2, v3_sub(x0, d->point));
        jpush(&t->J, row, p, c->e1);
        jpush(&t->J, row + 1, p, c->e2);
        break;
    case IMP_CONSTRAINT_CALLBACK:
        if (script_row(w, t, c, row, x, v)) return 1;
        break;
    }
    c->j_count = t->J.count - c->j_first;
    return 0;
}

/* ---- W and the matrix-free product -------------------------------------------------------------------- */

/* g1 . W_p g2 for the W block of dense particle p */
static inline double w_dot(const imp_world *w, const tinker *t, int p, const double *g1, const double *g2)
{
    if (t->winv[p] > 0) return t->winv[p] * (g1[0] * g2[0] + g1[1] * g2[1] + g1[2] * g2[2]);
    if (!curves_count(w) || t->curve_of[p] < 0) return 0;
    return curve_w_dot(&w->curves->curve[t->curve_of[p]], v3_load(g1), v3_load(g2), w->particles->inv_mass[p]);
}

/* y = J W J^T x: J^T x into jt_y, scaled by W (curve particles: projected on their tangent), then J */
static void tinker_mul(void *ctx, const double *x, double *y)
{
    imp_world *w = ctx;
    tinker *t = w->tinker;
    const int n = w->particles->ids.count;
    const int nc = curves_count(w);
    double *u = t->jt_y;
    jmat_mul_t(&t->J, x, u, n);
    for (int k = 0; k < nc; k++) {
        const curve *cv = &w->curves->curve[k];
        const int p = DENSE(w, cv->slot);
        t->curve_du[k] = curve_w_coordinate(cv, v3_load(u + 3 * p), w->particles->inv_mass[p]);
    }
    for (int i = 0; i < n; i++) {
        const double s = t->winv[i];
        u[3 * i] *= s, u[3 * i + 1] *= s, u[3 * i + 2] *= s;
    }
    for (int k = 0; k < nc; k++) {
        const curve *cv = &w->curves->curve[k];
        v3_store(u + 3 * DENSE(w, cv->slot), v3_scale(cv->xu, t->curve_du[k]));
    }
    jmat_mul(&t->J, u, y);
    if (t->reg > 0)
        for (int i = 0; i < t->J.rows; i++) y[i] += t->reg * t->diag[i] * x[i];
}

/* rows that no particle can answer are left out of the solve: lambda = 0 there */
static void tinker_filter(void *ctx, double *x)
{
    const tinker *t = ((imp_world *)ctx)->tinker;
    if (!t->ndead) return;
    for (int i = 0; i < t->J.rows; i++)
        if (t->dead[i]) x[i] = 0;
}

/* ---- the preconditioner: IC(0) of J W J^T (ic0.c) ----------------------------------------------------
 * A = J W J^T has an entry (i, k) when rows i and k name a common particle p:
 * A_ik = sum_p J_ip . W_p J_kp. Its pattern is found once per constraint set: each pair (a, b) of J
 * blocks on one particle, row(a) >= row(b), sums into the entry (row(a), row(b)) of A's lower
 * triangle, and ic0_pattern tells which. Every evaluation refills the values pair by pair and
 * factors them. */

static void preconditioner_pattern(imp_world *w, tinker *t)
{
    const jmat *J = &t->J;
    const int n = w->particles->ids.count, m = J->rows, ne = J->count;
    /* bucket the J blocks by particle (counting sort; the buffers only grow, as this runs every step
     * while constrained particles touch colliders) */
    if (n + 1 > t->bucket_n_cap) {
        t->bucket_n_cap = 2 * (n + 1);
        t->bucket_start = ids_grow(t->bucket_start, sizeof(int), t->bucket_n_cap);
    }
    if (ne > t->bucket_e_cap) {
        t->bucket_e_cap = 2 * ne;
        t->bucket = ids_grow(t->bucket, sizeof(int), t->bucket_e_cap);
    }
    int *start = t->bucket_start, *order = t->bucket;
    memset(start, 0, sizeof(int) * (size_t)(n + 1));
    for (int e = 0; e < ne; e++) start[J->e[e].particle + 1]++;
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    for (int e = 0; e < ne; e++) order[start[J->e[e].particle]++] = e; /* start[i] ends at start[i + 1] */
    for (int i = n; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
    /* every pair (a, b) of blocks on one particle with row(a) >= row(b) */
    int np = 0;
    for (int i = 0; i < n; i++) {
        int k = start[i + 1] - start[i];
        np += k * (k + 1) / 2;
    }
    if (np > t->pair_cap) {
        t->pair = ids_grow(t->pair, 2 * sizeof(int), np);
        t->pair_rows = ids_grow(t->pair_rows, 2 * sizeof(int), np);
        t->pair_entry = ids_grow(t->pair_entry, sizeof(int), np);
        t->pair_cap = np;
    }
    np = 0;
    for (int i = 0; i < n; i++)
        for (int s = start[i]; s < start[i + 1]; s++)
            for (int r = start[i]; r <= s; r++) {
                int a = order[s], b = order[r];
                if (J->e[a].row < J->e[b].row) { int tmp = a; a = b; b = tmp; }
                t->pair[2 * np] = a, t->pair[2 * np + 1] = b;
                t->pair_rows[2 * np] = J->e[a].row, t->pair_rows[2 * np + 1] = J->e[b].row;
                np++;
            }
    t->npairs = np;
    ic0_pattern(&t->ic, m, t->pair_rows, np, t->pair_entry);
    t->pattern_dirty = false;
}

/* the values of J W J^T in the pattern, and their factors */
static void preconditioner_factor(imp_world *w, tinker *t)
{
    const jmat *J = &t->J;
    memset(t->ic.a, 0, sizeof(double) * (size_t)t->ic.nnz);
    for (int k = 0; k < t->npairs; k++) {
        const jentry *a = &J->e[t->pair[2 * k]], *b = &J->e[t->pair[2 * k + 1]];
        t->ic.a[t->pair_entry[k]] += w_dot(w, t, a->particle, a->g, b->g);
    }
    ic0_factor(&t->ic);
}

static void preconditioner_apply(void *ctx, const double *r, double *s)
{
    ic0_apply(&((const imp_world *)ctx)->tinker->ic, r, s);
}

/* ---- eq. 11, once per derivative evaluation ---------------------------------------------------------- */

/* scratch for rows (the constraints' and up to `extra` contact rows) and particles */
static void reserve(imp_world *w, tinker *t, int extra)
{
    const int n = w->particles->ids.count, m = t->rows + extra;
    if (m > t->row_cap) {
        int cap = t->row_cap ? t->row_cap : 64;
        while (cap < m) cap *= 2;
        double **arrays[] = {&t->C, &t->Cdot, &t->rhs, &t->lambda, &t->diag, &t->precond, &t->jdq, &t->mu};
        for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) *arrays[k] = ids_grow(*arrays[k], sizeof(double), cap);
        t->dead = ids_grow(t->dead, 1, cap);
        t->dead_base = ids_grow(t->dead_base, 1, cap);
        t->row_cap = cap;
    }
    if (n > t->n_cap) {
        int cap = t->n_cap ? t->n_cap : 64;
        while (cap < n) cap *= 2;
        t->winv = ids_grow(t->winv, sizeof(double), cap);
        t->touched = ids_grow(t->touched, 1, cap);
        t->curve_of = ids_grow(t->curve_of, sizeof(int), cap);
        t->afree = ids_grow(t->afree, 3 * sizeof(double), cap);
        t->jt_y = ids_grow(t->jt_y, 3 * sizeof(double), cap);
        t->n_cap = cap;
    }
    if (curves_count(w) > t->curve_du_cap) {
        t->curve_du_cap = 2 * curves_count(w);
        t->curve_du = ids_grow(t->curve_du, sizeof(double), t->curve_du_cap);
    }
}

/* J and Jdot of every constraint's rows (0..mc) at (x, v), with room for jcap entries (the callers add
 * contact rows after them); nonzero when a script constraint failed */
static int constraints_jacobians(imp_world *w, tinker *t, int jcap, int mc, const double *x, const double *v)
{
    if (t->J.cap < jcap) {
        t->J.cap = t->Jdot.cap = jcap;
        t->J.e = ids_grow(t->J.e, sizeof(jentry), jcap);
        t->Jdot.e = ids_grow(t->Jdot.e, sizeof(jentry), jcap);
    }
    jmat_clear(&t->J, mc);
    jmat_clear(&t->Jdot, mc);
    t->j_valid = false;
    for (int k = 0, row = 0; k < t->ids.count; row += t->constraint[k].rows, k++)
        if (constraint_eval(w, t, &t->constraint[k], row, x, v)) return 1;
    t->j_valid = true;
    return 0;
}

/* Resting contact of constrained particles. particle_collide.c cancels the pushing part of the
 * applied force at a resting contact, but the constraint forces come after it and could push the
 * particle into the surface (a chain on the floor, pulled by its rods), which the collision pass
 * would then undo particle by particle, breaking the rods. So each resting contact of a particle in
 * some constraint is one more row here: C = the gap, J = N, with a multiplier that may only push
 * (lambda >= 0): rows whose lambda comes out negative are dropped and the system solved again
 * (an active set, a few rounds). Friction stays with particle_collide.c. Rows after m. */
static int contact_rows(imp_world *w, tinker *t, int m, const double *x)
{
    const int n = w->particles->ids.count;
    if (w->pcontacts->count == 0) return 0;
    memset(t->touched, 0, (size_t)n);
    for (int e = 0; e < t->J.count; e++) t->touched[t->J.e[e].particle] = 1;
    int rows = 0;
    for (int k = 0; k < w->pcontacts->count; k++) {
        imp_vec3 N;
        double gap;
        const int p = pcollide_contact_row(w, k, x, &N, &gap);
        if (!t->touched[p] || !(t->winv[p] > 0)) continue;
        t->C[m + rows] = gap;
        jpush(&t->J, m + rows, p, N);
        rows++;
    }
    return rows;
}

/* W, and the free accelerations a = W Q. A curve particle's is the one its own equation gives
 * (curve.c): t u''_free + x_uu u'^2 with u''_free = (t.f - m (t.x_uu) u'^2) / (m t.t) */
static void free_accelerations(imp_world *w, tinker *t, const double *f)
{
    const int n = w->particles->ids.count, nc = curves_count(w);
    const uint8_t *motion = w->particles->motion;
    for (int i = 0; i < n; i++) {
        const double s = motion[i] == IMP_DYNAMIC ? w->particles->inv_mass[i] : 0.0;
        t->winv[i] = s;
        t->afree[3 * i] = f[3 * i] * s, t->afree[3 * i + 1] = f[3 * i + 1] * s, t->afree[3 * i + 2] = f[3 * i + 2] * s;
    }
    if (nc) {
        for (int i = 0; i < n; i++) t->curve_of[i] = -1;
        for (int k = 0; k < nc; k++) {
            const curve *cv = &w->curves->curve[k];
            const int p = DENSE(w, cv->slot);
            t->curve_of[p] = k;
            v3_store(t->afree + 3 * p, curve_free_acceleration(w, cv, p, f));
        }
    }
}

/* the right-hand side of eq. 11 for rows [0, m), -Jdot qdot - J W Q - ks C - kd Cdot with
 * Cdot = J qdot: one pass over J gives Cdot, J W Q and the diagonal of J W J^T (Jacobi, and which
 * rows nobody can answer). Returns the largest |C| of the constraints' rows [0, mc). */
static double equation_rhs(imp_world *w, tinker *t, const double *v, int mc, int m)
{
    memset(t->Cdot, 0, sizeof(double) * (size_t)m);
    memset(t->rhs, 0, sizeof(double) * (size_t)m);
    memset(t->diag, 0, sizeof(double) * (size_t)m);
    for (int e = 0; e < t->J.count; e++) {
        const jentry *je = &t->J.e[e];
        const double *g = je->g, *vp = v + 3 * je->particle, *ap = t->afree + 3 * je->particle;
        t->Cdot[je->row] += g[0] * vp[0] + g[1] * vp[1] + g[2] * vp[2];
        t->rhs[je->row] += g[0] * ap[0] + g[1] * ap[1] + g[2] * ap[2];
        t->diag[je->row] += w_dot(w, t, je->particle, g, g);
    }
    jmat_mul(&t->Jdot, v, t->jdq);
    const double ks = t->set.ks, kd = t->set.kd;
    double dmax = 0, cmax = 0;
    for (int r = 0; r < m; r++) {
        t->rhs[r] = -t->jdq[r] - t->rhs[r] - ks * t->C[r] - kd * t->Cdot[r];
        dmax = maxd(dmax, t->diag[r]);
        if (r < mc) cmax = maxd(cmax, fabs(t->C[r]));
    }
    t->ndead = 0;
    for (int r = 0; r < m; r++) {
        t->dead[r] = !(t->diag[r] > 1e-12 * dmax) || !isfinite(t->diag[r]);
        t->precond[r] = t->dead[r] ? 0 : 1 / t->diag[r];
        t->ndead += t->dead[r];
    }
    return cmax;
}

/* the warm start: the last lambda when that solve converged, in place while the set is the same,
 * gathered from the constraints after it changed */
static void warm_start(tinker *t, int mc, int m)
{
    if (!t->rows_valid)
        for (int k = 0; k < t->ids.count; k++) {
            const constraint *c = &t->constraint[k];
            for (int j = 0; j < c->rows; j++) t->lambda[c->row + j] = c->lambda[j];
        }
    if (!t->warm_ok) memset(t->lambda, 0, sizeof(double) * (size_t)mc);
    for (int r = 0; r < m; r++)
        if (!isfinite(t->lambda[r])) t->lambda[r] = 0;
}

/* the CG problem J W J^T over m rows, matrix-free, without its preconditioner */
static void solve_problem(imp_world *w, const tinker *t, int m, cg_problem *prob)
{
    memset(prob, 0, sizeof *prob);
    prob->n = m;
    prob->ctx = w;
    prob->mul = tinker_mul;
    prob->filter = tinker_filter;
    prob->tol = t->set.tolerance;
    prob->max_iter = t->set.max_iterations > 0 ? t->set.max_iterations : 2 * m + 10;
}

/* contacts may only push: the rows of [mc, m) whose multiplier pulls are dropped (x = 0 there) and
 * the system solved again, a few rounds (an active set). Returns the CG iterations; *res is the
 * last solve's result. */
static int push_only(tinker *t, const cg_problem *prob, double *x, const double *rhs, int mc, int m, cg_result *res)
{
    int iterations = 0;
    for (int round = 0; round < 4 && m > mc; round++) {
        int dropped = 0;
        for (int r = mc; r < m; r++)
            if (!t->dead[r] && x[r] < 0) t->dead[r] = 1, x[r] = 0, t->ndead++, dropped++;
        if (!dropped) break;
        *res = cg_solve(prob, x, rhs, &t->cg);
        iterations += res->iterations;
    }
    return iterations;
}

/* eq. 11 for lambda: CG from the warm start, the contact rows [mc, m) made to push (an active set:
 * the rows that pull are dropped and the system solved again), and the regularized fallback when
 * the system proves ill-posed. Returns the CG iterations; *residual: the real system's. */
static int solve_multipliers(imp_world *w, tinker *t, int mc, int m, int ncontact, double *residual)
{
    cg_problem prob;
    solve_problem(w, t, m, &prob);
    if (t->set.preconditioner == IMP_PRECOND_IC0) {
        /* contact rows come and go from step to step: their pattern with them */
        if (ncontact != t->pattern_ncontact || (ncontact && t->pattern_step != w->steps)) t->pattern_dirty = true;
        if (t->pattern_dirty) {
            preconditioner_pattern(w, t);
            t->pattern_ncontact = ncontact;
            t->pattern_step = w->steps;
        }
        preconditioner_factor(w, t);
        prob.precond_apply = preconditioner_apply;
    } else if (t->set.preconditioner == IMP_PRECOND_JACOBI) {
        prob.precond = t->precond;
    }
    cg_result res = cg_solve(&prob, t->lambda, t->rhs, &t->cg);
    int iterations = res.iterations;
    iterations += push_only(t, &prob, t->lambda, t->rhs, mc, m, &res);
    *residual = res.residual; /* of the real system: the profile shows an ill-posed one */
    if (!(res.residual < SOLVE_FAILED)) {
        /* Ill-posed: contradictory constraints (two rods of different lengths on the same pair) ask
         * for accelerations no force gives, and CG heads for infinity along a (near) null direction
         * of J W J^T. Solve (A + eps D) lambda = b, D = diag(A): a bounded least-squares
         * compromise in which the constraints give a little. Consistent systems never come here. */
        t->reg = SOLVE_REGULARIZE;
        for (int r = 0; r < m; r++) t->precond[r] = t->dead[r] ? 0 : 1 / (t->diag[r] * (1 + t->reg));
        memset(t->lambda, 0, sizeof(double) * (size_t)m);
        prob.precond = t->precond;
        prob.precond_apply = NULL;
        res = cg_solve(&prob, t->lambda, t->rhs, &t->cg);
        res.converged = 0; /* not a solution of the real system: do not warm-start from it */
        iterations += res.iterations;
        t->reg = 0;
    }
    bool finite = true;
    for (int r = 0; r < m && finite; r++) finite = isfinite(t->lambda[r]);
    if (!finite) memset(t->lambda, 0, sizeof(double) * (size_t)m);
    t->warm_ok = res.converged && finite;
    t->rows_valid = true;
    return iterations;
}

/* the statistics of this step's solves (imp_world_constraint_stats), from zero at a new step */
static imp_constraint_stats *step_stats(imp_world *w, tinker *t)
{
    if (t->stats_step != w->steps) {
        memset(&t->stats, 0, sizeof t->stats);
        t->stats_step = w->steps;
    }
    return &t->stats;
}

/* f += J^T lambda, lambda from S3 eq. 11 at (x, v) with applied forces f (whole store) */
int tinker_constraint_forces(imp_world *w, const double *x, const double *v, double *f)
{
    tinker *t = w->tinker;
    if (!t || t->rows <= 0) return 0;
    const int n = w->particles->ids.count, mc = t->rows;
    const double t0 = step_clock_ms();
    imp_constraint_stats *st = step_stats(w, t);
    reserve(w, t, w->pcontacts->count);
    free_accelerations(w, t, f);

    /* assemble C, J, Jdot: each constraint its own rows, then the resting contacts' rows */
    if (constraints_jacobians(w, t, t->j_entries + w->pcontacts->count, mc, x, v)) return IMP_ERR_CALLBACK;
    const int ncontact = contact_rows(w, t, mc, x), m = mc + ncontact;
    t->J.rows = t->Jdot.rows = m;
    if (ncontact != t->ncontact || t->contact_step != w->steps) {
        /* new contact rows: their multipliers start from zero */
        memset(t->lambda + mc, 0, sizeof(double) * (size_t)ncontact);
        t->ncontact = ncontact;
        t->contact_step = w->steps;
    }
    const double cmax = equation_rhs(w, t, v, mc, m);
    warm_start(t, mc, m);
    double residual;
    const int iterations = solve_multipliers(w, t, mc, m, ncontact, &residual);

    /* Q^ = J^T lambda into the force accumulators */
    jmat_mul_t(&t->J, t->lambda, t->jt_y, n);
    for (int i = 0; i < 3 * n; i++) f[i] += t->jt_y[i];

    st->rows = m;
    st->solves++;
    st->iterations += iterations;
    if (iterations > st->max_iterations) st->max_iterations = iterations;
    if (residual > st->residual || !isfinite(residual)) st->residual = residual;
    if (cmax > st->max_error || !isfinite(cmax)) st->max_error = cmax;
    st->ms += step_clock_ms() - t0;
    return 0;
}

/* A J W J^T solve for mu with rows >= mc unilateral (mu >= 0: an active set, a few rounds), rows
 * that nobody can answer left out. Returns the CG iterations; *ok is false when it failed. */
static int solve_unilateral(tinker *t, const cg_problem *prob, double *mu, const double *rhs, int mc, int m, bool *ok)
{
    t->ndead = 0;
    for (int r = 0; r < m; r++) t->dead[r] = t->dead_base[r], t->ndead += t->dead[r];
    memset(mu, 0, sizeof(double) * (size_t)m);
    cg_result res = cg_solve(prob, mu, rhs, &t->cg);
    int iterations = res.iterations;
    iterations += push_only(t, prob, mu, rhs, mc, m, &res);
    bool finite = true;
    for (int r = 0; r < m && finite; r++) finite = isfinite(mu[r]);
    *ok = finite && res.residual < SOLVE_FAILED;
    return iterations;
}

/* dq = W J^T mu into jt_y (curve particles: along their tangent, their du into curve_du) */
static void apply_impulse(imp_world *w, tinker *t, const double *mu)
{
    const int n = w->particles->ids.count;
    jmat_mul_t(&t->J, mu, t->jt_y, n);
    for (int k = 0; k < curves_count(w); k++) {
        const curve *cv = &w->curves->curve[k];
        const int p = DENSE(w, cv->slot);
        t->curve_du[k] = curve_w_coordinate(cv, v3_load(t->jt_y + 3 * p), w->particles->inv_mass[p]);
    }
    for (int i = 0; i < 3 * n; i++) t->jt_y[i] *= t->winv[i / 3];
}

/* the projection's matrix at the committed state: the constraints' rows and one row per touch
 * (t->touch[0..nt)), the diagonal, the rows nobody can answer, the preconditioner */
static int projection_assemble(imp_world *w, tinker *t, int nt, cg_problem *prob)
{
    const int mc = t->rows, m = mc + nt;
    if (constraints_jacobians(w, t, t->j_entries + nt, mc, w->particles->x, w->particles->v)) return IMP_ERR_CALLBACK;
    for (int k = 0; k < nt; k++) jpush(&t->J, mc + k, t->touch[k].p, t->touch[k].n);
    t->J.rows = m;
    memset(t->diag, 0, sizeof(double) * (size_t)m);
    for (int e = 0; e < t->J.count; e++) {
        const jentry *je = &t->J.e[e];
        t->diag[je->row] += w_dot(w, t, je->particle, je->g, je->g);
    }
    double dmax = 0;
    for (int r = 0; r < m; r++) dmax = maxd(dmax, t->diag[r]);
    for (int r = 0; r < m; r++) {
        t->dead_base[r] = !(t->diag[r] > 1e-12 * dmax) || !isfinite(t->diag[r]);
        t->precond[r] = t->dead_base[r] ? 0 : 1 / t->diag[r];
    }
    solve_problem(w, t, m, prob);
    if (t->set.preconditioner == IMP_PRECOND_IC0) {
        preconditioner_pattern(w, t);
        t->pattern_dirty = true; /* the next evaluation has other rows */
        preconditioner_factor(w, t);
        prob->precond_apply = preconditioner_apply;
    } else if (t->set.preconditioner == IMP_PRECOND_JACOBI) {
        prob->precond = t->precond;
    }
    return 0;
}

/* the contacts of constrained particles into t->touch: the surfaces each touches now, and those it
 * hit in this pass (maybe bounced off already); returns their count */
static int collect_touches(imp_world *w, tinker *t)
{
    enum { MAX_TOUCH = 4 };
    const int n = w->particles->ids.count;
    reserve(w, t, 0);
    memset(t->touched, 0, (size_t)n);
    for (int k = 0; k < t->ids.count; k++) {
        const constraint *c = &t->constraint[k];
        for (int i = 0; i < c->n; i++) t->touched[DENSE(w, c->slots[i])] = 1;
    }
    int nt = 0;
    for (int i = 0, k = 0; i < n + w->pcontacts->hit_count; i++, k = 0) {
        imp_vec3 N[MAX_TOUCH];
        int p = i;
        if (i < n) { /* touching now */
            if (!t->touched[p] || w->particles->motion[p] != IMP_DYNAMIC) continue;
            k = pcollide_touching(w, p, N, MAX_TOUCH);
        } else { /* hit in this pass, maybe bounced off already */
            p = w->pcontacts->hit[i - n].particle;
            if (!t->touched[p]) continue;
            N[0] = w->pcontacts->hit[i - n].normal, k = 1;
        }
        if (nt + k > t->touch_cap) {
            t->touch_cap = 2 * (nt + k) + 16;
            t->touch = ids_grow(t->touch, sizeof *t->touch, t->touch_cap);
        }
        for (int j = 0; j < k; j++) t->touch[nt].p = p, t->touch[nt++].n = N[j];
    }
    return nt;
}

/* W at the committed state: 1/m of dynamic particles, the curve particles' tangents */
static void committed_weights(imp_world *w, tinker *t)
{
    const int n = w->particles->ids.count;
    for (int i = 0; i < n; i++) t->winv[i] = w->particles->motion[i] == IMP_DYNAMIC ? w->particles->inv_mass[i] : 0.0;
    for (int i = 0; i < n; i++) t->curve_of[i] = -1;
    curves_committed_tangents(w);
    for (int k = 0; k < curves_count(w); k++) t->curve_of[DENSE(w, w->curves->curve[k].slot)] = k;
}

/* After the collision pass (particles_step). Collisions are resolved particle by particle, so an impact
 * stops one end of a rod and not the other, and moves that end alone: the rod is crushed or
 * stretched, step after step (a chain piling onto the floor would fold through itself).
 * When a constrained particle touches a collider or hit one in this pass, the whole system is
 * projected back onto its constraints, once at position level and once at velocity level (S1's
 * post-stabilization, with eq. 11's matrix):
 *
 *     J W J^T mu = -C,                   x += W J^T mu     (one linearized step: C ~ 0)
 *     J W J^T mu = -J v - (ks / kd) C,   v += W J^T mu     (Cdot = the feedback's own decay rate)
 *
 * The velocity target is the rate at which the feedback of eq. 11 (once its damping dominates)
 * takes a violation back, so the projection does not cancel that correction. Each surface a
 * constrained particle touches or hit adds a row N that may only push (mu >= 0, active set) and
 * asks N . dx >= 0 and N . v >= max(0, N . v now): the projection neither pushes a particle into
 * a surface nor takes away its bounce. Curve particles move along their tangent (u, u'). */
int tinker_after_collide(imp_world *w)
{
    tinker *t = w->tinker;
    if (!t || t->rows <= 0 || w->colliders->ids.count == 0) return 0;
    const int n = w->particles->ids.count, mc = t->rows;
    const int nt = collect_touches(w, t);
    if (nt == 0) return 0;

    const double t0 = step_clock_ms();
    reserve(w, t, nt);
    committed_weights(w, t);
    double *x = w->particles->x, *v = w->particles->v;
    const int m = mc + nt;
    cg_problem prob = {0};
    bool ok = false;
    int iterations = 0, solves = 1;
    /* positions: -C for the constraints, 0 for the contacts (N . dx >= 0), re-linearized (Newton)
     * while C is not yet ~0: one step leaves a second-order error ~ dC^2 / L */
    for (int newton = 0; newton < 3; newton++) {
        if (projection_assemble(w, t, nt, &prob)) return IMP_ERR_CALLBACK;
        double cmax = 0;
        for (int r = 0; r < mc; r++) cmax = maxd(cmax, fabs(t->C[r]));
        if (newton > 0 && cmax < 1e-9) break;
        for (int r = 0; r < m; r++) t->rhs[r] = r < mc ? -t->C[r] : 0;
        iterations += solve_unilateral(t, &prob, t->mu, t->rhs, mc, m, &ok);
        solves++;
        if (!ok) break;
        apply_impulse(w, t, t->mu);
        for (int i = 0; i < 3 * n; i++) x[i] += t->jt_y[i];
        for (int k = 0; k < curves_count(w); k++)
            if (t->curve_du[k] != 0 && curve_move(w, &w->curves->curve[k], t->curve_du[k])) return IMP_ERR_CALLBACK;
    }

    /* velocities: -J v - (ks / kd) C for the constraints (C is ~0 now, unless the position pass
     * failed), max(0, -N . v) for the contacts */
    const double rate = ok ? 0 : t->set.kd > 0 ? t->set.ks / t->set.kd : 0;
    jmat_mul(&t->J, v, t->rhs);
    for (int r = 0; r < m; r++) t->rhs[r] = r < mc ? -t->rhs[r] - rate * t->C[r] : (t->rhs[r] < 0 ? -t->rhs[r] : 0);
    iterations += solve_unilateral(t, &prob, t->mu, t->rhs, mc, m, &ok);
    if (ok) {
        apply_impulse(w, t, t->mu);
        for (int i = 0; i < 3 * n; i++) v[i] += t->jt_y[i];
        for (int k = 0; k < curves_count(w); k++) curve_push(w, &w->curves->curve[k], t->curve_du[k]);
    }

    t->J.rows = mc; /* imp_constraint_force reads the constraints' own blocks */
    imp_constraint_stats *st = step_stats(w, t);
    st->solves += solves;
    st->iterations += iterations;
    if (iterations > st->max_iterations) st->max_iterations = iterations;
    st->ms += step_clock_ms() - t0;
    return 0;
}

/* ---- removal and cleanup -------------------------------------------------------------------------------- */

void tinker_particle_removed(imp_world *w, uint32_t slot)
{
    tinker *t = w->tinker;
    if (!t) return;
    lambda_to_constraints(t);
    for (int k = t->ids.count - 1; k >= 0; k--) {
        const constraint *c = &t->constraint[k];
        for (int i = 0; i < c->n; i++)
            if (c->slots[i] == slot) {
                imp_constraint_destroy(w, ids_of(&t->ids, k));
                break;
            }
    }
    structure_changed(t); /* dense indices move */
}

void tinker_free(imp_world *w)
{
    tinker *t = w->tinker;
    if (!t) return;
    while (t->ids.count) imp_constraint_destroy(w, ids_of(&t->ids, t->ids.count - 1));
    ids_free(&t->ids);
    free(t->constraint);
    jmat_free(&t->J), jmat_free(&t->Jdot);
    free(t->C), free(t->Cdot), free(t->rhs), free(t->lambda), free(t->diag), free(t->precond), free(t->jdq), free(t->mu);
    free(t->dead), free(t->dead_base);
    free(t->winv), free(t->touched), free(t->touch), free(t->curve_of), free(t->afree), free(t->jt_y), free(t->curve_du);
    cg_work_free(&t->cg);
    ic0_free(&t->ic);
    free(t->pair), free(t->pair_rows), free(t->pair_entry), free(t->bucket_start), free(t->bucket);
    free(t);
    w->tinker = NULL;
}

/* ---- world-level settings and queries --------------------------------------------------------------------- */

imp_constraint_settings imp_world_constraint_settings(const imp_world *w)
{
    return w->tinker ? w->tinker->set : settings_default();
}

void imp_world_set_constraint_settings(imp_world *w, const imp_constraint_settings *s)
{
    tinker *t = tinker_get(w);
    if (s->ks >= 0 && isfinite(s->ks)) t->set.ks = s->ks;
    if (s->kd >= 0 && isfinite(s->kd)) t->set.kd = s->kd;
    if (s->tolerance > 0 && isfinite(s->tolerance)) t->set.tolerance = s->tolerance;
    if (s->max_iterations >= 0) t->set.max_iterations = s->max_iterations;
    if ((unsigned)s->preconditioner <= IMP_PRECOND_IC0) t->set.preconditioner = s->preconditioner;
}

imp_constraint_stats imp_world_constraint_stats(const imp_world *w)
{
    imp_constraint_stats none = {0};
    if (!w->tinker || w->tinker->stats_step != w->steps - 1) return none;
    return w->tinker->stats;
}

int imp_constraint_value(imp_world *w, imp_id id, double C[3])
{
    const constraint *c = constraint_of(w, id);
    if (!c) return 0;
    bool was_locked = w->locked;
    w->locked = true; /* a script constraint may read the world, not change it */
    int rows = constraint_value(w, c, w->particles->x, C);
    w->locked = was_locked;
    return rows;
}

double imp_world_constraint_error(imp_world *w)
{
    tinker *t = w->tinker;
    if (!t) return 0;
    double worst = 0, C[3];
    bool was_locked = w->locked;
    w->locked = true;
    for (int k = 0; k < t->ids.count; k++) {
        int rows = constraint_value(w, &t->constraint[k], w->particles->x, C);
        if (rows < 0) {
            w->locked = was_locked;
            return -1;
        }
        for (int r = 0; r < rows; r++) worst = fmax(worst, fabs(C[r]));
    }
    w->locked = was_locked;
    return worst;
}


/* ode.c: the ODE solver interface of S3 ("Differential equation basics") and its integrators.
 *
 * A system is a black box f(x, t) of dimension dim (impetus.h: imp_ode_system). The explicit
 * methods are all Runge-Kutta methods, so they are one routine driven by Butcher tableaus held as
 * data:
 *
 *     k_i = f(x0 + h * sum_{j<i} a_ij k_j,  t0 + c_i h)        i = 1..s
 *     x1  = x0 + h * sum_i b_i k_i
 *
 *   Euler     s = 1: b = (1)                                  local error O(h^2), global O(h)
 *   midpoint  s = 2: a21 = 1/2, b = (0, 1)                    local O(h^3), global O(h^2)
 *             (x1 = x0 + h f(x0 + h/2 f(x0), t0 + h/2): the midpoint is x0 + dx/2, not (x0+dx)/2,
 *              which is the slip in S3's figure, GUIDE.md trap 5)
 *   RK4       s = 4: a21 = a32 = 1/2, a43 = 1, b = (1/6, 1/3, 1/3, 1/6)   local O(h^5), global O(h^4)
 *
 * The adaptive integrator is S3's step doubling: from x0 take one step of size h (x_a) and two of
 * size h/2 (x_b). Both carry a local error ~ C h^(p+1) for a method of order p, so
 * e = |x_a - x_b|_inf estimates it, and the step that would just meet the tolerance is
 *
 *     h_new = h * (tol / e)^(1 / (p + 1))          (Euler, p = 1: tol 1e-4, e 1e-8 -> 100 h)
 *
 * A step with e > tol is rejected and retried with h_new; an accepted one keeps x_b, the more
 * accurate of the two. h_new is multiplied by a safety factor 0.9 and its growth is capped.
 *
 * Two limits make every advance finish. h never goes below h_min (a step at h_min is accepted
 * whatever its error, and the next one starts from h_min again), and an advance takes at most
 * max_substeps attempts, accepted or rejected: a span of 1e308 s, or a spring of 1e30 N/m at a
 * tolerance its time scale cannot meet, would otherwise take more steps than there is time for.
 * It gives up as soon as the attempts it has left, at the step size the tolerance asks for, would
 * not reach the end of the span (a stiff cloth is known hopeless after a few attempts, not after
 * all of them). Giving up returns IMP_ODE_SUBSTEPS and leaves the state where it was at the start.
 *
 * IMP_IMPLICIT is linearized backward Euler (below, for a generic system; a world steps its particles
 * with implicit.c instead). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "ids.h"

typedef struct rk_tableau {
    int stages, order;
    double a[4][4], b[4], c[4];
} rk_tableau;

static const rk_tableau TABLEAU[3] = {
    [IMP_EULER] = {1, 1, {{0}}, {1}, {0}},
    [IMP_MIDPOINT] = {2, 2, {{0}, {0.5}}, {0, 1}, {0, 0.5}},
    [IMP_RK4] = {4, 4, {{0}, {0.5}, {0, 0.5}, {0, 0, 1}}, {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, {0, 0.5, 0.5, 1}},
};

static const char *const METHOD_NAMES[IMP_METHOD_COUNT] = {"euler", "midpoint", "rk4", "adaptive", "implicit"};

const char *imp_method_name(imp_method m) { return (unsigned)m < IMP_METHOD_COUNT ? METHOD_NAMES[m] : "?"; }

int imp_method_from_name(const char *name)
{
    for (int i = 0; i < IMP_METHOD_COUNT; i++)
        if (strcmp(name, METHOD_NAMES[i]) == 0) return i;
    return -1;
}

int imp_ode_order(imp_method m) { return m < IMP_ADAPTIVE ? TABLEAU[m].order : m == IMP_IMPLICIT ? 1 : 0; }

double imp_ode_adapt_factor(double err, double tol, int order)
{
    if (err <= 0) return INFINITY;
    return pow(tol / err, 1.0 / (order + 1));
}

void imp_ode_solver_init(imp_ode_solver *s, imp_method method)
{
    memset(s, 0, sizeof *s);
    s->method = method;
    s->base = IMP_RK4;
    s->tolerance = 1e-6;
    s->h_min = 1e-9;
    s->max_growth = 5.0;
    s->max_substeps = IMP_ODE_MAX_SUBSTEPS;
}

void imp_ode_solver_free(imp_ode_solver *s)
{
    free(s->work);
    s->work = NULL;
    s->work_dim = 0;
}

/* scratch layout: k[4][dim] | xs | x0 | xa | xb, then for backward Euler 4 vectors and a dim x dim
 * matrix (reserved whenever the solver may take an implicit step, so x0 never moves under it) */
static double *solver_reserve(imp_ode_solver *s, int dim, bool implicit)
{
    size_t need = 8 * (size_t)dim;
    if (implicit) need += (size_t)dim * (size_t)dim + 4 * (size_t)dim;
    if ((size_t)s->work_dim < need) {
        free(s->work);
        s->work = ids_grow(NULL, sizeof(double), (int)need);
        s->work_dim = (int)need;
    }
    return s->work;
}

static double *solver_work(imp_ode_solver *s, int dim)
{
    return solver_reserve(s, dim, s->method == IMP_IMPLICIT || s->base == IMP_IMPLICIT);
}

/* ---- backward Euler for a generic system (impetus.ode) ------------------------------------------------
 * The first-order form of S3 eq. 3-2 with the time term of eq. 4-6 (GUIDE.md trap 6: it carries h):
 *
 *     (I - h df/dx) dX = h (f(X0, t0) + h df/dt),        X1 = X0 + dX
 *
 * df/dx and df/dt by central differences (steps 6e-6 max(1, |x_j|), about eps^(1/3): exact up to
 * rounding for a linear f), and the dense solver of dense.h. For
 * x' = -k x this gives x / (1 + h k) for any h; as h grows without bound, X1 -> X0 - J^-1 f(X0),
 * the origin for a linear field. 2 dim + 3 evaluations per step: for small systems. */
static int backward_euler_step(const imp_ode_system *sys, imp_ode_solver *s, double *x, double t, double h)
{
    const int n = sys->dim;
    /* solver_reserve 8 n + n^2 + 4 n doubles: [0, 8n) belongs to the other methods */
    double *f0 = s->work + 8 * (size_t)n, *fp = f0 + n, *fm = fp + n, *rhs = fm + n, *M = rhs + n;
    double *xs = s->work + 4 * (size_t)n; /* the explicit methods' stage buffer, free here */
    int rc = sys->deriv(sys->ctx, t, x, f0);
    s->evaluations++;
    if (rc) return rc;
    memcpy(xs, x, sizeof(double) * (size_t)n);
    for (int j = 0; j < n; j++) {
        double step = 6e-6 * fmax(1.0, fabs(x[j]));
        xs[j] = x[j] + step;
        if ((rc = sys->deriv(sys->ctx, t, xs, fp))) return rc;
        xs[j] = x[j] - step;
        if ((rc = sys->deriv(sys->ctx, t, xs, fm))) return rc;
        xs[j] = x[j];
        s->evaluations += 2;
        for (int i = 0; i < n; i++) M[(size_t)i * n + j] = -h * (fp[i] - fm[i]) / (2 * step) + (i == j);
    }
    double dt = 6e-6 * fmax(1.0, fabs(t));
    if ((rc = sys->deriv(sys->ctx, t + dt, x, fp))) return rc;
    if ((rc = sys->deriv(sys->ctx, t - dt, x, fm))) return rc;
    s->evaluations += 2;
    for (int i = 0; i < n; i++) rhs[i] = h * (f0[i] + h * (fp[i] - fm[i]) / (2 * dt));
    /* dX = M^-1 rhs (dense.h) */
    if (!dense_invert(M, n, n)) return IMP_ODE_SINGULAR;
    for (int i = 0; i < n; i++) {
        double acc = 0;
        for (int k = 0; k < n; k++) acc += M[(size_t)i * n + k] * rhs[k];
        x[i] += acc;
    }
    s->steps++;
    return 0;
}

int imp_ode_step(const imp_ode_system *sys, imp_ode_solver *s, imp_method m, double *x, double t, double h)
{
    if (m == IMP_IMPLICIT) {
        solver_reserve(s, sys->dim, true); /* no move when x lives in s->work: advance reserved it */
        return backward_euler_step(sys, s, x, t, h);
    }
    const rk_tableau *tb = &TABLEAU[m < IMP_ADAPTIVE ? m : IMP_RK4];
    const int n = sys->dim, stages = tb->stages;
    double *w = solver_work(s, n);
    double *k[4] = {w, w + n, w + 2 * n, w + 3 * n};
    double *xs = w + 4 * n;
    for (int i = 0; i < stages; i++) {
        const double *xi = x;
        if (i > 0) {
            /* xs = x + h * sum_j a_ij k_j: the first non-zero weight writes, later ones add */
            bool first = true;
            for (int j = 0; j < i; j++) {
                const double a = h * tb->a[i][j], *kj = k[j];
                if (a == 0) continue;
                if (first) for (int e = 0; e < n; e++) xs[e] = x[e] + a * kj[e];
                else for (int e = 0; e < n; e++) xs[e] += a * kj[e];
                first = false;
            }
            if (first) memcpy(xs, x, sizeof(double) * (size_t)n);
            xi = xs;
        }
        int err = sys->deriv(sys->ctx, t + tb->c[i] * h, xi, k[i]);
        s->evaluations++;
        if (err) return err;
    }
    /* x += h * sum_i b_i k_i in one pass */
    if (stages == 4) {
        const double b0 = h * tb->b[0], b1 = h * tb->b[1], b2 = h * tb->b[2], b3 = h * tb->b[3];
        for (int e = 0; e < n; e++) x[e] += b0 * k[0][e] + b1 * k[1][e] + b2 * k[2][e] + b3 * k[3][e];
    } else {
        for (int i = 0; i < stages; i++) {
            const double b = h * tb->b[i], *ki = k[i];
            if (b == 0) continue;
            for (int e = 0; e < n; e++) x[e] += b * ki[e];
        }
    }
    s->steps++;
    return 0;
}

/* One adaptive attempt from x (time t, size h): x_a = one step, x_b = two half steps. Writes x_b
 * into xb and returns the error estimate through *err. */
static int adaptive_try(const imp_ode_system *sys, imp_ode_solver *s, const double *x, double t, double h,
                        double *xa, double *xb, double *err)
{
    const int n = sys->dim;
    memcpy(xa, x, sizeof(double) * (size_t)n);
    memcpy(xb, x, sizeof(double) * (size_t)n);
    int rc = imp_ode_step(sys, s, s->base, xa, t, h);
    if (!rc) rc = imp_ode_step(sys, s, s->base, xb, t, 0.5 * h);
    if (!rc) rc = imp_ode_step(sys, s, s->base, xb, t + 0.5 * h, 0.5 * h);
    if (rc) return rc;
    double e = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs(xa[i] - xb[i]);
        if (d > e || isnan(d)) e = d;
    }
    *err = e;
    return 0;
}

/* Advance x from t to t + span with adaptive substeps; s->h carries over between calls. */
static int adaptive_advance(const imp_ode_system *sys, imp_ode_solver *s, double *x, double t, double span)
{
    const int n = sys->dim;
    double *w = solver_work(s, n);
    double *xa = w + 6 * n, *xb = w + 7 * n;
    const int p = imp_ode_order(s->base);
    double done = 0;
    if (!(s->h > 0)) s->h = span;
    for (long attempt = 0; done < span; attempt++) {
        if (attempt >= s->max_substeps) {
            s->gave_up++;
            return IMP_ODE_SUBSTEPS;
        }
        double h = fmin(s->h, span - done);
        bool last = h >= span - done;
        double err;
        int rc = adaptive_try(sys, s, x, t + done, h, xa, xb, &err);
        if (rc) return rc;
        double factor = err > 0 ? 0.9 * imp_ode_adapt_factor(err, s->tolerance, p) : s->max_growth;
        if (isnan(err)) factor = 0.1;
        if (err <= s->tolerance || h <= s->h_min) {
            memcpy(x, xb, sizeof(double) * (size_t)n);
            done = last ? span : done + h;
            /* a step shortened only to land on the end of the span says nothing about the next h */
            if (!(last && h < s->h)) s->h = fmax(h * fmin(factor, s->max_growth), s->h_min);
        } else {
            s->rejected++;
            s->h = fmax(h * fmax(factor, 0.1), s->h_min);
        }
        /* the attempts left would not reach the end at the step size the tolerance asks for */
        if (done < span && (double)(s->max_substeps - attempt - 1) * s->h < span - done) {
            s->gave_up++;
            return IMP_ODE_SUBSTEPS;
        }
    }
    return 0;
}

int imp_ode_advance(const imp_ode_system *sys, imp_ode_solver *s, double t, double h)
{
    const int n = sys->dim;
    if (n == 0) return 0;
    double *w = solver_work(s, n);
    double *x = w + 5 * n;
    sys->get_state(sys->ctx, x);
    int rc = s->method == IMP_ADAPTIVE ? adaptive_advance(sys, s, x, t, h) : imp_ode_step(sys, s, s->method, x, t, h);
    if (rc) return rc;
    sys->set_state(sys->ctx, x);
    return 0;
}

/* cg.c: preconditioned conjugate gradient with a filter (see cg.h).
 *
 * For A symmetric positive definite on the subspace the filter S keeps, CG minimises
 * x^T A x / 2 - b^T x over growing Krylov spaces (Hestenes and Stiefel 1952; the preconditioned form
 * as in Shewchuk's "Painless conjugate gradient", B3, with Baraff and Witkin's filter, 1998 5.3):
 *
 *     r = S(b - A x),  d = S(P^-1 r),  delta = r . d
 *     repeat:  q = S(A d),  alpha = delta / (d . q)
 *              x += alpha d,  r -= alpha q,  s = P^-1 r
 *              delta' = r . s,  d = S(s + (delta' / delta) d),  delta = delta'
 *     until |r| <= max(tol |S b|, abs_tol)     (Euclidean, or the problem's own norm)
 *
 * With S = I and P = I this is plain CG. The filter is how fixed particles (and constrained
 * directions) are handled without huge masses: their components never enter the search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "ids.h"

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void apply_filter(const cg_problem *p, double *x)
{
    if (p->filter) p->filter(p->ctx, x);
}

static void precondition(const cg_problem *p, const double *r, double *s)
{
    if (p->precond_apply)
        p->precond_apply(p->ctx, r, s);
    else if (p->precond)
        for (int i = 0; i < p->n; i++) s[i] = p->precond[i] * r[i];
    else
        memcpy(s, r, sizeof(double) * (size_t)p->n);
}

void cg_work_free(cg_work *w)
{
    free(w->r), free(w->d), free(w->q), free(w->s);
    memset(w, 0, sizeof *w);
}

cg_result cg_solve(const cg_problem *p, double *x, const double *b, cg_work *w)
{
    const int n = p->n;
    cg_result res = {0, 0, 1};
    if (n == 0) return res;
    if (w->cap < n) {
        cg_work_free(w);
        w->r = ids_grow(NULL, sizeof(double), n);
        w->d = ids_grow(NULL, sizeof(double), n);
        w->q = ids_grow(NULL, sizeof(double), n);
        w->s = ids_grow(NULL, sizeof(double), n);
        w->cap = n;
    }
    double *r = w->r, *d = w->d, *q = w->q, *s = w->s;
    const double tol = p->tol > 0 ? p->tol : 1e-8;
    const int max_iter = p->max_iter > 0 ? p->max_iter : 2 * n + 10;

    memcpy(s, b, sizeof(double) * (size_t)n);
    apply_filter(p, s);
    double bnorm = p->norm ? p->norm(p->ctx, s) : sqrt(dot(s, s, n));
    apply_filter(p, x);
    p->mul(p->ctx, x, q);
    if (p->warm_check) {
        double phi = 0;
        for (int i = 0; i < n; i++) phi += x[i] * (0.5 * q[i] - b[i]);
        if (!(phi < 0)) {
            memset(x, 0, sizeof(double) * (size_t)n);
            memset(q, 0, sizeof(double) * (size_t)n);
        }
    }
    for (int i = 0; i < n; i++) r[i] = b[i] - q[i];
    apply_filter(p, r);
    if (bnorm == 0) bnorm = 1;
    const double stop = fmax(tol * bnorm, p->abs_tol);
    double rnorm = p->norm ? p->norm(p->ctx, r) : sqrt(dot(r, r, n)), delta = 0;
    double curv_max = 0; /* the largest Rayleigh quotient d.Ad / d.d seen */
    int it = 0;
    if (rnorm > stop) { /* (a warm start may already be the answer) */
        if (p->prepare) p->prepare(p->ctx);
        precondition(p, r, d);
        apply_filter(p, d);
        delta = dot(r, d, n);
    }
    while (rnorm > stop && it < max_iter) {
        p->mul(p->ctx, d, q);
        apply_filter(p, q);
        double dq = dot(d, q, n), curv = dq / dot(d, d, n);
        if (curv > curv_max) curv_max = curv;
        /* A is singular along d (or not positive): stop with what we have. "Singular" is relative:
         * a curvature 1e-13 of the largest seen is roundoff in a null direction, and stepping there
         * (an inconsistent semidefinite system, e.g. contradictory constraints) would explode x */
        if (!(dq > 0) || !(curv > 1e-13 * curv_max)) break;
        double alpha = delta / dq;
        for (int i = 0; i < n; i++) x[i] += alpha * d[i], r[i] -= alpha * q[i];
        rnorm = p->norm ? p->norm(p->ctx, r) : sqrt(dot(r, r, n));
        it++;
        if (rnorm <= stop || it >= max_iter) break; /* the next direction would go unused */
        precondition(p, r, s);
        double delta_new = dot(r, s, n);
        double beta = delta_new / delta;
        for (int i = 0; i < n; i++) d[i] = s[i] + beta * d[i];
        apply_filter(p, d);
        delta = delta_new;
    }
    res.iterations = it;
    res.residual = rnorm / bnorm;
    res.converged = rnorm <= stop;
    return res;
}

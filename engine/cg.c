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
 * When the preconditioner also gives A s (cg_problem.precond_product) and S s = s, the product of
 * the next direction follows without a matrix product: d' = S(s + beta d) = s + beta d, so
 * S A d' = S (A s + beta q) with q = S A d (S is a projection and S d = d), the form a symmetric
 * Gauss-Seidel sweep's sums give almost for free (Eisenstat's trick, here from the multigrid's last
 * sweep). The recurrence holds in exact arithmetic; its rounding is that of any CG residual update.
 *
 * With S = I and P = I this is plain CG. The filter is how fixed particles (and constrained
 * directions) are handled without huge masses: their components never enter the search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "ids.h"
#include "parallel.h"

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* the chunked form's dot product over [lo, hi): four interleaved partial sums, so that the additions
 * are four independent chains (a single chain waits on each addition's latency) */
static double dot4(const double *a, const double *b, int lo, int hi)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = lo;
    for (; i + 4 <= hi; i += 4) s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1], s2 += a[i + 2] * b[i + 2], s3 += a[i + 3] * b[i + 3];
    for (; i < hi; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* the vector work of one iteration in the chunked form (cg_problem.chunks) */
enum { VEC_CURVATURE, VEC_STEP, VEC_DELTA, VEC_DIRECTION };

typedef struct vec_job {
    const cg_problem *p;
    int op;
    double *x, *r, *d, *q, *s, *as; /* as: A s, or NULL */
    double alpha, beta;
    double part[PAR_CHUNKS][2]; /* each chunk's partial results */
} vec_job;

static double chunk_norm(const cg_problem *p, const double *v, int lo, int hi)
{
    return p->norm_part ? p->norm_part(p->ctx, v, lo, hi) : dot4(v, v, lo, hi);
}

static void vec_part(void *ctx, int c)
{
    vec_job *jb = ctx;
    const int lo = jb->p->chunks[c], hi = jb->p->chunks[c + 1];
    double *x = jb->x, *r = jb->r, *d = jb->d, *s = jb->s;
    const double *q = jb->q;
    switch (jb->op) {
    case VEC_CURVATURE: /* (S q) and d . q, d . d */
        if (jb->p->filter && jb->p->filter_part) jb->p->filter_part(jb->p->ctx, jb->q, c);
        jb->part[c][0] = dot4(d, q, lo, hi), jb->part[c][1] = dot4(d, d, lo, hi);
        break;
    case VEC_STEP: /* x += alpha d, r -= alpha q, and the chunk's norm of r */
        for (int i = lo; i < hi; i++) x[i] += jb->alpha * d[i], r[i] -= jb->alpha * q[i];
        jb->part[c][0] = chunk_norm(jb->p, r, lo, hi);
        break;
    case VEC_DELTA: /* r . s */
        jb->part[c][0] = dot4(r, s, lo, hi);
        break;
    default: /* d = s + beta d (and S d); with A s, q = A s + beta q, and the next curvature's work (the
              * chunk's own entries of d and q are all it reads) */
        for (int i = lo; i < hi; i++) d[i] = s[i] + jb->beta * d[i];
        if (jb->p->filter && jb->p->filter_part) jb->p->filter_part(jb->p->ctx, d, c);
        if (jb->as) {
            double *qm = jb->q;
            for (int i = lo; i < hi; i++) qm[i] = jb->as[i] + jb->beta * qm[i];
            if (jb->p->filter && jb->p->filter_part) jb->p->filter_part(jb->p->ctx, qm, c);
            jb->part[c][0] = dot4(d, qm, lo, hi), jb->part[c][1] = dot4(d, d, lo, hi);
        }
    }
}

/* sums (dot products) or the largest value (norm_part's norms) of the chunks' partial results */
static double chunk_sum(const vec_job *jb, int slot)
{
    double t = 0;
    for (int c = 0; c < PAR_CHUNKS; c++) t += jb->part[c][slot];
    return t;
}

static double chunk_norm_of(const vec_job *jb)
{
    if (!jb->p->norm_part) return sqrt(chunk_sum(jb, 0));
    double t = 0;
    for (int c = 0; c < PAR_CHUNKS; c++)
        if (jb->part[c][0] > t) t = jb->part[c][0];
    return t;
}

/* a . b in the chunked form, the chunks on both threads */
static double dot_chunked(const cg_problem *p, double *a, double *b)
{
    vec_job jb = {.p = p, .op = VEC_DELTA, .r = a, .s = b};
    par_for(vec_part, &jb, PAR_CHUNKS);
    return chunk_sum(&jb, 0);
}

/* the norm of the stopping test of a whole vector */
static double vec_norm(const cg_problem *p, const double *v)
{
    if (!p->chunks) return p->norm ? p->norm(p->ctx, v) : sqrt(dot(v, v, p->n));
    vec_job jb = {.p = p};
    for (int c = 0; c < PAR_CHUNKS; c++) jb.part[c][0] = chunk_norm(p, v, p->chunks[c], p->chunks[c + 1]);
    return chunk_norm_of(&jb);
}

static void apply_filter(const cg_problem *p, double *x)
{
    if (p->filter) p->filter(p->ctx, x);
}

/* s = P^-1 r; returns whether as = A s came with it (precond_product, chunked form only) */
static bool precondition(const cg_problem *p, const double *r, double *s, double *as)
{
    if (p->precond_product && p->chunks) return p->precond_product(p->ctx, r, s, as) != 0;
    if (p->precond_apply)
        p->precond_apply(p->ctx, r, s);
    else if (p->precond)
        for (int i = 0; i < p->n; i++) s[i] = p->precond[i] * r[i];
    else
        memcpy(s, r, sizeof(double) * (size_t)p->n);
    return false;
}

void cg_work_free(cg_work *w)
{
    free(w->r), free(w->d), free(w->q), free(w->s), free(w->as);
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
        w->as = ids_grow(NULL, sizeof(double), n);
        w->cap = n;
    }
    double *r = w->r, *d = w->d, *q = w->q, *s = w->s;
    const double tol = p->tol > 0 ? p->tol : 1e-8;
    const int max_iter = p->max_iter > 0 ? p->max_iter : 2 * n + 10;

    memcpy(s, b, sizeof(double) * (size_t)n);
    apply_filter(p, s);
    double bnorm = vec_norm(p, s);
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
    double rnorm = vec_norm(p, r), delta = 0;
    double curv_max = 0; /* the largest Rayleigh quotient d.Ad / d.d seen */
    int it = 0;
    bool have_q = false; /* q = A d already (from the preconditioner's A s), S q to come */
    bool have_curv = false; /* S q, d . q and d . d made too (the direction's job, chunked form) */
    if (rnorm > stop) { /* (a warm start may already be the answer) */
        if (p->prepare) p->prepare(p->ctx);
        have_q = precondition(p, r, d, q);
        apply_filter(p, d);
        delta = p->chunks ? dot_chunked(p, r, d) : dot(r, d, n);
    }
    vec_job jb = {.p = p, .x = x, .r = r, .d = d, .q = q, .s = s};
    const bool chunk_filter = p->chunks && p->filter_part; /* (S q and S d inside the chunks' jobs) */
    while (rnorm > stop && it < max_iter) {
        if (!have_q) p->mul(p->ctx, d, q);
        if (!chunk_filter) apply_filter(p, q);
        double dq, dd;
        if (p->chunks) {
            if (!have_curv) {
                jb.op = VEC_CURVATURE;
                par_for(vec_part, &jb, PAR_CHUNKS);
            }
            dq = chunk_sum(&jb, 0), dd = chunk_sum(&jb, 1);
        } else {
            dq = dot(d, q, n), dd = dot(d, d, n);
        }
        double curv = dq / dd;
        if (curv > curv_max) curv_max = curv;
        /* A is singular along d (or not positive): stop with what we have. "Singular" is relative:
         * a curvature 1e-13 of the largest seen is roundoff in a null direction, and stepping there
         * (an inconsistent semidefinite system, e.g. contradictory constraints) would explode x */
        if (!(dq > 0) || !(curv > 1e-13 * curv_max)) break;
        double alpha = delta / dq;
        if (p->chunks) {
            jb.op = VEC_STEP, jb.alpha = alpha;
            par_for(vec_part, &jb, PAR_CHUNKS);
            rnorm = chunk_norm_of(&jb);
        } else {
            for (int i = 0; i < n; i++) x[i] += alpha * d[i], r[i] -= alpha * q[i];
            rnorm = p->norm ? p->norm(p->ctx, r) : sqrt(dot(r, r, n));
        }
        it++;
        if (rnorm <= stop || it >= max_iter) break; /* the next direction would go unused */
        have_q = precondition(p, r, s, w->as);
        double delta_new = p->chunks ? dot_chunked(p, r, s) : dot(r, s, n);
        double beta = delta_new / delta;
        if (p->chunks) {
            jb.op = VEC_DIRECTION, jb.beta = beta, jb.as = have_q && (chunk_filter || !p->filter) ? w->as : NULL;
            par_for(vec_part, &jb, PAR_CHUNKS);
            have_q = have_curv = jb.as != NULL;
        } else {
            for (int i = 0; i < n; i++) d[i] = s[i] + beta * d[i];
        }
        if (!chunk_filter) apply_filter(p, d);
        delta = delta_new;
    }
    res.iterations = it;
    res.residual = rnorm / bnorm;
    res.converged = rnorm <= stop;
    return res;
}

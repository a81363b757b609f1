/* lcp.c: a pivoting solver for the linear complementarity problem of contact (Dantzig's method in
 * the form of Baraff, "Fast contact force computation for nonpenetrating rigid bodies", 1994).
 *
 * Problem (sign convention used throughout impetus, S0's): given A (n x n, symmetric positive
 * semidefinite) and b, find f with
 *
 *     w = A f + b,    f >= 0,   w >= 0,   f_i w_i = 0          (rows neq .. n-1)
 *     w_i = 0, f_i free                                        (rows 0 .. neq-1: equality rows)
 *
 * Method. Two index sets: C (clamped, w_i = 0, f_i may change) and NC (f_i = 0, w_i >= 0). Rows
 * not yet visited are in neither. Start at f = 0, w = b. Each row d with w_d < 0 is driven to zero
 * in turn: increase f_d along the direction df with df_d = 1, df_NC = 0 and df_C chosen so the
 * clamped rows keep w_C = 0:
 *
 *     A_CC df_C = -A_Cd,        dw = A df
 *
 * Take the largest step s that keeps every invariant (f_C >= 0, w_NC >= 0, w_d <= 0); the row that
 * blocks moves set (C -> NC when its f reaches 0, NC -> C when its w reaches 0), or, when w_d
 * reaches 0, d joins C and the next row is taken. Baraff proves w_d rises monotonically and that
 * the loop ends for PSD A. Equality rows are driven first, in both directions, and never leave C.
 *
 * Degenerate (redundant) contacts: for PSD A, A_Cd lies in the range of A_CC (any column block of
 * a PSD matrix [[A_CC, a], [a^T, alpha]] has a in range(A_CC)), so A_CC df_C = -A_Cd is consistent
 * even when A_CC is singular. A_CC is kept as an LDL^T factor built one row at a time; a pivot that
 * vanishes (relative to the row's diagonal) is recorded as zero, and the solve sets that component
 * to 0: a valid solution of the consistent system. So four coplanar contacts under a box give one
 * of the many valid force sets, never a failure or a NaN. When nothing bounds the step (the problem
 * is infeasible along d), the row is left out (status IMP_LCP_INFEASIBLE) and the others go on.
 *
 * Warm start (imp_lcp_solve_guess): the loop may start from any clamped set C with f_C >= 0 and
 * w_C = 0 (every other row f = 0, unvisited) instead of C empty; lcp_warm makes such a set of a guess
 * (the last solve's clamped rows), so a problem that changed little since the last solve costs one
 * factorization and the few pivots of the rows that changed.
 *
 * Cost: adding a row to the factor is O(m^2) (m = |C|), removing one is a rank-one update,
 * O((m - r)^2) for position r (lcp_remove); each pivot also costs O(n m) for dw. Storage comes from a workspace that grows and is reused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"

enum { SET_NONE = 0, SET_C = 1, SET_NC = 2, SET_OUT = 3 };

static void lcp_reserve(imp_lcp_work *ws, int n)
{
    if (n <= ws->cap) return;
    int cap = ws->cap ? ws->cap : 16;
    while (cap < n) cap *= 2;
    free(ws->mem);
    free(ws->set);
    /* L (cap x cap), D, cidx-as-double-free: df, dw, z, rhs */
    ws->mem = ids_grow(NULL, sizeof(double), (size_t)cap * cap + 6 * (size_t)cap);
    ws->set = ids_grow(NULL, sizeof(int), 3 * (size_t)cap);
    ws->cap = cap;
}

void imp_lcp_work_free(imp_lcp_work *ws)
{
    free(ws->mem), free(ws->set);
    memset(ws, 0, sizeof *ws);
}

typedef struct lcp {
    int n, neq, m;          /* m = |C|                                   */
    const double *A;
    double *L, *D;          /* L: m x m rows of length n (row stride n)  */
    int *set, *cidx, *cpos; /* set per row; C members in factor order; cpos: row -> position in C */
    double tol;             /* pivot threshold (relative)                */
    double reg;             /* diagonal added to A (0, or the retry's regularization) */
} lcp;

#define AIJ(s, i, j) ((s)->A[(size_t)(i) * (size_t)(s)->n + (size_t)(j)])

/* append row j to the factor of A_CC: L z = A_Cj (forward), l = D^-1 z, pivot = A_jj - z . l */
static void lcp_append(lcp *s, int j, double *z)
{
    const int m = s->m;
    double *lrow = s->L + (size_t)m * s->n;
    double piv = AIJ(s, j, j) + s->reg;
    for (int k = 0; k < m; k++) {
        const double *lk = s->L + (size_t)k * s->n;
        double v = AIJ(s, s->cidx[k], j);
        for (int p = 0; p < k; p++) v -= lk[p] * z[p];
        z[k] = v;
    }
    for (int k = 0; k < m; k++) {
        lrow[k] = s->D[k] != 0 ? z[k] / s->D[k] : 0;
        piv -= z[k] * lrow[k];
    }
    double scale = fabs(AIJ(s, j, j));
    s->D[m] = piv > s->tol * (scale > 0 ? scale : 1) ? piv : 0;
    s->cidx[m] = j;
    s->cpos[j] = m;
    s->set[j] = SET_C;
    s->m = m + 1;
}

/* Remove the row that left C from the factor, by a rank-one update rather than a rebuild.
 * Derivation: split the factor at the leaving position r,
 *     A_CC = [L11 0 0; l1^T 1 0; L31 l3 L33] diag(D1, d_r, D3) [...]^T
 * Deleting row and column r of A_CC leaves the blocks 11, 13, 33; the rows before r keep their L
 * rows (L D L^T of a leading block does not depend on what follows), and the trailing block must
 * satisfy  L33' D3' L33'^T = L33 D3 L33^T + d_r l3 l3^T : a rank-one update of an LDL^T factor
 * (Gill, Golub, Murray and Saunders 1974, method C1). With alpha = d_r, z = l3, for each trailing row
 * j in order:  p = z_j,  d_j' = d_j + alpha p^2,  beta = alpha p / d_j',  alpha = alpha d_j / d_j',
 * and for the rows i below it  z_i -= p L_ij,  L_ij += beta z_i. O((m - r)^2), plus O((m - r) r) to close
 * up the storage, instead of the rebuild's O((m - r) m^2). Zero pivots (dependent rows, L column zero): d_j' = alpha p^2 is the row's
 * true pivot once r is gone; below the factor's threshold it stays zero (the tiny alpha p^2 dropped,
 * as lcp_append would judge it). Then the storage closes up: rows after r move up one, and their
 * entries after column r move left one. */
static void lcp_remove(lcp *s, int r)
{
    const int m = s->m;
    const size_t st = (size_t)s->n;
    double alpha = s->D[r];
    /* z = l3, kept in the column r entries of the trailing rows as they are updated */
    for (int j = r + 1; j < m && alpha != 0; j++) {
        double *lj = s->L + (size_t)j * st;
        const double p = lj[r], dj = s->D[j];
        if (p == 0) continue; /* alpha and this row unchanged */
        const double dn = dj + alpha * p * p;
        const int cj = s->cidx[j];
        const double scale = fabs(AIJ(s, cj, cj));
        if (dj == 0 && !(dn > s->tol * (scale > 0 ? scale : 1))) continue; /* stays a zero pivot */
        const double beta = alpha * p / dn;
        alpha = alpha * dj / dn;
        s->D[j] = dn;
        for (int i = j + 1; i < m; i++) {
            double *li = s->L + (size_t)i * st;
            li[r] -= p * li[j];
            li[j] += beta * li[r];
        }
    }
    for (int j = r + 1; j < m; j++) {
        const double *from = s->L + (size_t)j * st;
        double *to = s->L + (size_t)(j - 1) * st;
        for (int p = 0; p < r; p++) to[p] = from[p];
        for (int p = r + 1; p < j; p++) to[p - 1] = from[p];
        s->D[j - 1] = s->D[j];
        s->cidx[j - 1] = s->cidx[j];
        s->cpos[s->cidx[j - 1]] = j - 1;
    }
    s->m = m - 1;
}

/* the row that left C (set to NC) taken out of the factor */
static void lcp_refactor(lcp *s)
{
    int r = 0;
    while (r < s->m && s->set[s->cidx[r]] == SET_C) r++;
    if (r < s->m) lcp_remove(s, r);
}

/* x = A_CC^+ r for the consistent system (zero pivots give zero components); r, x length m */
static void lcp_solve_cc(const lcp *s, const double *r, double *x)
{
    const int m = s->m;
    for (int k = 0; k < m; k++) {
        const double *lk = s->L + (size_t)k * s->n;
        double v = r[k];
        for (int p = 0; p < k; p++) v -= lk[p] * x[p];
        x[k] = v;
    }
    for (int k = 0; k < m; k++) x[k] = s->D[k] != 0 ? x[k] / s->D[k] : 0;
    /* L^T x = z, by columns of L^T (= rows of L, contiguous): once x_k is final, take it out of
     * the rows above */
    for (int k = m - 1; k >= 0; k--) {
        if (s->D[k] == 0) x[k] = 0;
        const double *lk = s->L + (size_t)k * s->n, xk = x[k];
        for (int p = 0; p < k; p++) x[p] -= lk[p] * xk;
    }
}

/* w = A f + b over the nonzero columns of f (A symmetric: column j is row j, contiguous) */
static void lcp_residual(const lcp *s, const double *b, const double *f, double *w)
{
    const int n = s->n;
    for (int i = 0; i < n; i++) w[i] = b[i];
    for (int j = 0; j < n; j++) {
        if (f[j] == 0) continue;
        const double *Aj = s->A + (size_t)j * n, fj = f[j];
        for (int i = 0; i < n; i++) w[i] += Aj[i] * fj;
    }
}

/* The warm start: the guessed clamped set (the rows marked SET_C in s->set, the factor still empty)
 * made a valid starting point of the pivoting loop. C = the marked rows in ascending order, f_C =
 * -A_CC^+ b_C; a row whose force comes out negative leaves C (f = 0, not yet visited) and the rest is
 * solved again, until f_C >= 0. A dependent row of C whose equation the pseudo-solve cannot meet
 * (w_i != 0: b_C outside the range of a singular A_CC) leaves C too. What remains satisfies the
 * loop's invariant (f_C >= 0, w_C = 0, every other row f = 0 and unvisited), and the loop then drives
 * only the rows the guess got wrong. Returns 1 when the guessed set is the solution as it stands
 * (every row's w within tol of its bound, the forces within imp_lcp_solve's bound: no pivot needed),
 * 0 when the loop must go on, -1 when an equality row cannot be met (the caller starts cold). */
static int lcp_warm(lcp *s, const double *b, double *f, double *w, double *z, double *r, double *x,
                    double bmax, double amax, double amin)
{
    const int n = s->n, neq = s->neq;
    for (int i = 0; i < n; i++)
        if (s->set[i] == SET_C) lcp_append(s, i, z);
    for (int round = 0;; round++) {
        for (int k = 0; k < s->m; k++) r[k] = -b[s->cidx[k]];
        lcp_solve_cc(s, r, x);
        bool dropped = false;
        for (int k = s->m - 1; k >= 0; k--) { /* last first: the positions before k stay */
            const int i = s->cidx[k];
            if (i < neq ? isfinite(x[k]) : x[k] >= 0) continue;
            if (i < neq) return -1;
            s->set[i] = SET_NONE;
            lcp_remove(s, k);
            dropped = true;
        }
        if (dropped) continue;
        for (int i = 0; i < n; i++) f[i] = 0;
        double fm = 0;
        for (int k = 0; k < s->m; k++) f[s->cidx[k]] = x[k], fm = fmax(fm, fabs(x[k]));
        lcp_residual(s, b, f, w);
        const double tol = 1e-10 * (bmax + amax * fm);
        if (round == 0 && s->reg == 0 && fm <= 1e6 * n * (bmax > 0 ? bmax : 1) / amin) {
            bool solved = true;
            for (int i = 0; i < n && solved; i++) solved = s->set[i] == SET_C ? fabs(w[i]) <= tol : w[i] >= -tol;
            if (solved) return 1;
        }
        for (int k = s->m - 1; k >= 0; k--) {
            const int i = s->cidx[k];
            if (fabs(w[i]) <= tol) continue;
            if (i < neq) return -1;
            s->set[i] = SET_NONE;
            lcp_remove(s, k);
            dropped = true;
        }
        if (!dropped) break;
    }
    for (int k = 0; k < s->m; k++) w[s->cidx[k]] = 0;
    return 0;
}

static int lcp_run(int n, int neq, const double *A, const double *b, const double *guess, double *f, double *w,
                   imp_lcp_info *info, imp_lcp_work *ws, double reg)
{
    memset(info, 0, sizeof *info);
    lcp s = {n, neq, 0, A, ws->mem, ws->mem + (size_t)ws->cap * ws->cap, ws->set, ws->set + ws->cap,
             ws->set + 2 * ws->cap, 1e-10, reg};
    double *df = s.D + ws->cap, *dw = df + ws->cap, *z = dw + ws->cap, *r = z + ws->cap, *x = r + ws->cap;
    double bmax = 0, amax = 0, amin = INFINITY;
    for (int i = 0; i < n; i++) {
        /* (guess may be f: read before f is written) */
        s.set[i] = guess && (i < neq || guess[i] > 0) ? SET_C : SET_NONE;
        f[i] = 0, w[i] = b[i];
        bmax = fmax(bmax, fabs(b[i]));
        const double a = fabs(AIJ(&s, i, i));
        amax = fmax(amax, a);
        if (a > 0) amin = fmin(amin, a);
    }
    /* a row counts as satisfied when w_d >= -eps; eps is relative to the data */
    const double eps = 1e-13 * bmax;
    const double dtiny = 1e-14 * (amax > 0 ? amax : 1);
    const int max_pivots = 20 * n + 100;
    int pivots = 0;
    if (guess) {
        const int warm = amax > 0 ? lcp_warm(&s, b, f, w, z, r, x, bmax, amax, amin) : -1;
        if (warm == 1) {
            info->clamped = s.m;
            return IMP_LCP_OK; /* f and w = A f + b as lcp_warm left them */
        }
        if (warm < 0) { /* cold: no row clamped */
            s.m = 0;
            for (int i = 0; i < n; i++) f[i] = 0, w[i] = b[i], s.set[i] = SET_NONE;
        }
    }

    /* pass 0: the equality rows; then sweep the rows until none has w_d < 0 (rows not yet in C or NC
     * are unprotected: a row passed over with w_d >= 0 may go negative while others are driven) */
    for (int pass = 0, again = 1; pass < 2 || again; pass++) {
        again = 0;
        for (int d = 0; d < n; d++) {
            bool eq = d < neq;
            if ((pass == 0) != eq || s.set[d] != SET_NONE) continue;
            if (!eq && w[d] >= -eps) continue;
            /* drive w_d to 0 */
            for (;;) {
                if ((eq && fabs(w[d]) <= eps) || (!eq && w[d] >= -eps)) {
                    /* w_d reached 0 together with another row's bound (a tie): d joins C */
                    w[d] = 0;
                    lcp_append(&s, d, z);
                    break;
                }
                double dir = (eq && w[d] > 0) ? -1.0 : 1.0; /* equality rows may pull */
                for (int k = 0; k < s.m; k++) r[k] = -dir * AIJ(&s, s.cidx[k], d);
                lcp_solve_cc(&s, r, x);
                for (int i = 0; i < n; i++) df[i] = 0;
                for (int k = 0; k < s.m; k++) df[s.cidx[k]] = x[k];
                df[d] = dir;
                /* dw = A df over the nonzero columns (C and d); A is symmetric, so column j is row j:
                 * dw = sum_j df_j A_j., contiguous rows (axpy) */
                {
                    const double *Ad = A + (size_t)d * n;
                    for (int i = 0; i < n; i++) dw[i] = dir * Ad[i] + reg * df[i];
                    /* four rows of A per pass over dw: a quarter of dw's loads and stores */
                    int k = 0, cols[4], nc = 0;
                    double xs[4];
                    for (;;) {
                        nc = 0;
                        for (; k < s.m && nc < 4; k++)
                            if (x[k] != 0) cols[nc] = s.cidx[k], xs[nc++] = x[k];
                        if (nc == 0) break;
                        if (nc == 4) {
                            const double *A0 = A + (size_t)cols[0] * n, *A1 = A + (size_t)cols[1] * n;
                            const double *A2 = A + (size_t)cols[2] * n, *A3 = A + (size_t)cols[3] * n;
                            const double x0 = xs[0], x1 = xs[1], x2 = xs[2], x3 = xs[3];
                            for (int i = 0; i < n; i++) dw[i] += A0[i] * x0 + A1[i] * x1 + A2[i] * x2 + A3[i] * x3;
                        } else {
                            for (int c = 0; c < nc; c++) {
                                const double *Aj = A + (size_t)cols[c] * n, xk = xs[c];
                                for (int i = 0; i < n; i++) dw[i] += Aj[i] * xk;
                            }
                        }
                    }
                }
                /* largest admissible step */
                double step = INFINITY;
                int block = -1;
                /* dw_d = dir * (Schur complement of A_CC in A_{C+d}); when it vanishes (d depends on
                 * C, the factor's own test) d cannot block: the step moves along a null direction */
                double schur_tol = s.tol * fmax(fabs(AIJ(&s, d, d)) + reg, dtiny);
                if (dw[d] * w[d] < 0 && fabs(dw[d]) > schur_tol) step = -w[d] / dw[d], block = d;
                for (int k = 0; k < s.m; k++) {
                    int i = s.cidx[k];
                    if (i < neq || df[i] >= -1e-15) continue;
                    double si = fmax(0, -f[i] / df[i]);
                    if (si < step) step = si, block = i;
                }
                for (int i = neq; i < n; i++) {
                    if (s.set[i] != SET_NC || dw[i] >= -dtiny) continue;
                    double si = fmax(0, -w[i] / dw[i]);
                    if (si < step) step = si, block = i;
                }
                if (block < 0 || ++pivots > max_pivots) {
                    /* infeasible along d (or out of pivots): leave d out, keep the rest valid */
                    info->status = block < 0 ? IMP_LCP_INFEASIBLE : IMP_LCP_MAX_PIVOTS;
                    s.set[d] = SET_OUT;
                    break;
                }
                for (int i = 0; i < n; i++) {
                    if (df[i] != 0) f[i] += step * df[i];
                    w[i] += step * dw[i];
                }
                if (block == d) {
                    w[d] = 0;
                    lcp_append(&s, d, z);
                    if (pass > 0) again = 1;
                    break;
                }
                if (s.set[block] == SET_C) {
                    f[block] = 0;
                    s.set[block] = SET_NC;
                    lcp_refactor(&s);
                } else {
                    w[block] = 0;
                    lcp_append(&s, block, z);
                }
            }
            if (pivots > max_pivots) break;
        }
    }
    /* tidy: clamp round-off, and give w exactly as A f + b */
    for (int i = neq; i < n; i++)
        if (f[i] < 0 || !isfinite(f[i])) f[i] = 0;
    for (int i = 0; i < neq; i++)
        if (!isfinite(f[i])) f[i] = 0;
    for (int i = 0; i < n; i++) {
        const double *Ai = A + (size_t)i * n;
        double v = b[i];
        for (int j = 0; j < n; j++) v += Ai[j] * f[j];
        w[i] = v;
    }
    /* a row left out for want of a direction may still end satisfied (round-off): judge the result */
    if (info->status == IMP_LCP_INFEASIBLE) {
        double worst = 0;
        for (int i = neq; i < n; i++) worst = fmax(worst, -w[i]);
        for (int i = 0; i < neq; i++) worst = fmax(worst, fabs(w[i]));
        if (worst <= 1e-10 * (bmax + amax)) info->status = IMP_LCP_OK;
    }
    info->pivots = pivots;
    info->clamped = s.m;
    return info->status;
}

/* Exact first (reg = 0). Near-singular A (redundant contacts turned by round-off, a box on a box
 * tilted by 1e-13 rad) is ill-conditioned rather than singular, and its exact solution may hold
 * internal forces of 1e14 that cancel: "valid" and useless. Such a result (a row left infeasible,
 * or a force beyond 1e6 n |b|max / (smallest diagonal)) is solved again as A + eps I, positive
 * definite, where Dantzig's method always succeeds and the forces stay bounded as eps -> 0 (the
 * regularized solution tends to the least-norm one); w is then off by at most eps f
 * (eps = 1e-12, 1e-9, 1e-6 of the largest diagonal, in turn). */
static int lcp_solve(int n, int neq, const double *A, const double *b, const double *guess, double *f, double *w,
                     imp_lcp_info *info, imp_lcp_work *ws)
{
    imp_lcp_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    if (n <= 0) return 0;
    if (neq < 0) neq = 0;
    if (neq > n) neq = n;
    lcp_reserve(ws, n);
    double amax = 0, amin = INFINITY, bmax = 0;
    for (int i = 0; i < n; i++) {
        double a = fabs(A[(size_t)i * n + i]);
        amax = fmax(amax, a);
        if (a > 0) amin = fmin(amin, a);
        bmax = fmax(bmax, fabs(b[i]));
    }
    if (amax == 0) amax = amin = 1;
    const double fbound = 1e6 * n * (bmax > 0 ? bmax : 1) / amin;
    static const double regs[] = {0, 1e-12, 1e-9, 1e-6};
    int pivots = 0;
    bool done = false;
    for (int k = 0; k < 4 && !done; k++) {
        lcp_run(n, neq, A, b, k == 0 ? guess : NULL, f, w, info, ws, regs[k] * amax);
        pivots += info->pivots;
        double fm = 0, viol = 0; /* w is A f + b of the true A here (lcp_run's tidy) */
        for (int i = 0; i < n; i++) fm = fmax(fm, fabs(f[i]));
        for (int i = 0; i < n; i++) viol = fmax(viol, i < neq ? fabs(w[i]) : -w[i]);
        info->regularized = k > 0;
        done = info->status == IMP_LCP_OK && fm <= fbound && viol <= 1e-6 * (bmax > 0 ? bmax : 1);
    }
    if (!done) { /* truly infeasible: the exact attempt, with its status */
        lcp_run(n, neq, A, b, NULL, f, w, info, ws, 0);
        pivots += info->pivots;
    }
    info->pivots = pivots;
    return info->status;
}

int imp_lcp_solve(int n, int neq, const double *A, const double *b, double *f, double *w,
                  imp_lcp_info *info, imp_lcp_work *ws)
{
    return lcp_solve(n, neq, A, b, NULL, f, w, info, ws);
}

/* imp_lcp_solve from a guess of which rows are clamped (guess_i > 0; guess may be the same array as
 * f): the pivoting starts from the guessed set (lcp_warm), so a right guess costs one factorization and
 * no pivot, and a nearly right one only the pivots of the rows it got wrong */
int imp_lcp_solve_guess(int n, int neq, const double *A, const double *b, const double *guess, double *f, double *w,
                        imp_lcp_info *info, imp_lcp_work *ws)
{
    return lcp_solve(n, neq, A, b, guess, f, w, info, ws);
}

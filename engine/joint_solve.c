/* joint_solve.c: the sparse block solve of the joints' rows (joint.c's header, "The sparse solve"). */
#include <stdlib.h>
#include <string.h>

#include "joint_internal.h"
#include "joint_solve.h"

#define HUB_MIN 8         /* a body with this many joints is a node of the sparse solve (the header) */

/* the moving ends of every node (tends, -1 for a side that does not move) and body -> incident nodes
 * (CSR: bstart, bjoint); returns whether the ends are those the elimination structure was built for */
static bool node_ends(struct joint_set *js, int n, const double *im)
{
    const int nn = js->nn;
    memset(js->bstart, 0, sizeof(int) * (size_t)(n + 2));
    bool same = js->order && js->tn == nn;
    for (int p = 0; p < nn; p++) {
        const joint *jt = &js->j[js->nodes[p]];
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++) {
            int x = ends[e] < n && im[ends[e]] > 0 ? ends[e] : -1;
            if (x >= 0) js->bstart[x + 1]++;
            same = same && js->tends[2 * p + e] == x;
            js->tends[2 * p + e] = x;
        }
    }
    js->tn = nn;
    for (int i = 0; i < n; i++) js->bstart[i + 1] += js->bstart[i];
    int *cur = js->adjn;
    for (int i = 0; i <= n; i++) cur[i] = js->bstart[i];
    for (int p = 0; p < nn; p++)
        for (int e = 0; e < 2; e++)
            if (js->tends[2 * p + e] >= 0) js->bjoint[cur[js->tends[2 * p + e]]++] = p;
    return same;
}

/* the node graph of the symbolic elimination: adjacency lists (allocated only when the structure
 * changes) */
typedef struct node_graph {
    int **adj, *deg, *acap;
} node_graph;

static void graph_add_edge(node_graph *g, int p, int q)
{
    int k;
    for (k = 0; k < g->deg[p] && g->adj[p][k] != q; k++) {}
    if (k < g->deg[p]) return;
    if (g->deg[p] == g->acap[p]) g->acap[p] = g->acap[p] * 2 + 4, g->adj[p] = ids_grow(g->adj[p], sizeof(int), g->acap[p]);
    g->adj[p][g->deg[p]++] = q;
}

/* the edges: two joints that share a moving body that is no hub, and each joint of a hub to the hub */
static void graph_edges(const struct joint_set *js, int n, node_graph *g)
{
    for (int i = 0; i < n; i++)
        for (int a = js->bstart[i]; a < js->bstart[i + 1]; a++) {
            if (js->hubn[i] >= 0) {
                graph_add_edge(g, js->bjoint[a], js->hubn[i]);
                graph_add_edge(g, js->hubn[i], js->bjoint[a]);
                continue;
            }
            for (int b = js->bstart[i]; b < js->bstart[i + 1]; b++)
                if (a != b) graph_add_edge(g, js->bjoint[a], js->bjoint[b]);
        }
}

/* The elimination structure: the hub bodies (HUB_MIN or more joints) become nodes nn .. nt-1; a greedy
 * minimum-degree order within ranks (0 a joint with a moving side that is no hub, 1 a hub, 2 a joint
 * whose moving sides are all hubs: leaves first on a tree), and each node's later neighbours U(p), the
 * fill of its elimination included */
static void elimination_order(struct joint_set *js, int n)
{
    const int nn = js->nn;
    js->nh = 0;
    for (int i = 0; i < n; i++) {
        js->hubn[i] = -1;
        if (js->bstart[i + 1] - js->bstart[i] >= HUB_MIN) js->hubn[i] = nn + js->nh++;
    }
    const int nt = js->nt = nn + js->nh;
    node_graph g = {calloc((size_t)nt + 1, sizeof(int *)), calloc((size_t)nt + 1, sizeof(int)), calloc((size_t)nt + 1, sizeof(int))};
    uint8_t *gone = calloc((size_t)nt + 1, 1), *rank = calloc((size_t)nt + 1, 1);
    if (!g.adj || !g.deg || !g.acap || !gone || !rank) abort();
    for (int p = 0; p < nt; p++) {
        rank[p] = p < nn ? 2 : 1;
        for (int e = 0; e < 2 && p < nn; e++) {
            const int x = js->tends[2 * p + e];
            if (x >= 0 && js->hubn[x] < 0) rank[p] = 0;
        }
    }
    graph_edges(js, n, &g);
    int nu = 0;
    for (int k = 0; k < nt; k++) {
        int p = -1;
        for (int q = 0; q < nt; q++)
            if (!gone[q] && (p < 0 || rank[q] < rank[p] || (rank[q] == rank[p] && g.deg[q] < g.deg[p]))) p = q;
        gone[p] = 1, js->order[k] = p, js->pos[p] = k, js->ustart[k] = nu;
        js->unb = cgrow(js->unb, sizeof(int), &js->ucap, nu + g.deg[p] + 1);
        for (int a = 0; a < g.deg[p]; a++) js->unb[nu + a] = g.adj[p][a];
        /* the neighbours of p become a clique (fill), and forget p */
        for (int a = 0; a < g.deg[p]; a++) {
            int q = g.adj[p][a];
            for (int k2 = 0; k2 < g.deg[q]; k2++)
                if (g.adj[q][k2] == p) g.adj[q][k2] = g.adj[q][--g.deg[q]];
            for (int b = 0; b < g.deg[p]; b++)
                if (b != a) graph_add_edge(&g, q, g.adj[p][b]);
        }
        nu += g.deg[p];
        g.deg[p] = 0;
    }
    for (int q = 0; q < nt; q++) free(g.adj[q]);
    free(g.adj), free(g.deg), free(g.acap), free(gone), free(rank);
    js->ustart[nt] = nu;
}

/* body -> incident nodes, and the elimination structure when the joint graph changed (a new structure
 * generation: post-stabilization's kept factors are stale) */
static void solver_structure(struct joint_set *js, int n, const double *im)
{
    if (node_ends(js, n, im)) return;
    js->sgen++;
    elimination_order(js, n);
    const int nu = js->ustart[js->nt];
    if (nu + 1 > js->scap) {
        js->scap = nu * 3 / 2 + 16;
        js->bU = ids_grow(js->bU, BS * sizeof(double), js->scap);
        js->bL = ids_grow(js->bL, BS * sizeof(double), js->scap);
    }
}

/* the tables of the stages grown to nj joints and n bodies (no allocation in a steady step) */
static void grow_tables(struct joint_set *js, int nj, int n)
{
    if (nj + 1 > js->ncap) {
        int c = js->ncap = nj * 3 / 2 + 16;
        js->nodes = ids_grow(js->nodes, sizeof(int), c), js->rows = ids_grow(js->rows, sizeof(jrows), c);
        js->bjoint = ids_grow(js->bjoint, sizeof(int), 2 * c);
        js->tends = ids_grow(js->tends, sizeof(int), 2 * c), js->tn = -1;
    }
    if (nj + n + 1 > js->tcap) { /* the solver's nodes: the joints and the hub bodies */
        int c = js->tcap = (nj + n) * 3 / 2 + 16;
        js->order = ids_grow(js->order, sizeof(int), c), js->msz = ids_grow(js->msz, sizeof(int), c);
        js->pos = ids_grow(js->pos, sizeof(int), c), js->ustart = ids_grow(js->ustart, sizeof(int), c + 1);
        js->Dinv = ids_grow(js->Dinv, BS * sizeof(double), c), js->rhs = ids_grow(js->rhs, MAXR * sizeof(double), c);
        js->rhs0 = ids_grow(js->rhs0, MAXR * sizeof(double), c);
        js->sol = ids_grow(js->sol, MAXR * sizeof(double), c);
    }
    if (n + 2 > js->bcap) {
        int c = js->bcap = n * 3 / 2 + 16;
        js->bstart = ids_grow(js->bstart, sizeof(int), c), js->adjn = ids_grow(js->adjn, sizeof(int), c);
        js->pv = ids_grow(js->pv, sizeof(imp_vec3), c), js->pw = ids_grow(js->pw, sizeof(imp_vec3), c);
        js->sv = ids_grow(js->sv, sizeof(imp_vec3), c), js->sw = ids_grow(js->sw, sizeof(imp_vec3), c);
        js->tv = ids_grow(js->tv, sizeof(imp_vec3), c), js->tw = ids_grow(js->tw, sizeof(imp_vec3), c);
        js->bq1 = ids_grow(js->bq1, sizeof(imp_quat), c), js->bHL = ids_grow(js->bHL, sizeof(imp_mat3), c);
        js->bver = ids_grow(js->bver, sizeof(unsigned), c), js->bseen = ids_grow(js->bseen, sizeof(unsigned), c);
        js->bepoch = ids_grow(js->bepoch, sizeof(unsigned), c);
        js->bqraw = ids_grow(js->bqraw, sizeof(imp_quat), c), js->bqn = ids_grow(js->bqn, sizeof(imp_quat), c);
        js->bR = ids_grow(js->bR, sizeof(imp_mat3), c), js->bR1 = ids_grow(js->bR1, sizeof(imp_mat3), c);
        js->hubn = ids_grow(js->hubn, sizeof(int), c);
        js->tn = -1; /* (hubn is set by the structure) */
        memset(js->bqraw, 0xff, sizeof(imp_quat) * (size_t)c); /* (a NaN pattern: never a live body's state) */
        for (int i = 0; i < c; i++) js->bqn[i] = quat_identity(), js->bR[i] = m3_identity();
        memset(js->bepoch, 0, sizeof(unsigned) * (size_t)c), js->epoch = 1;
        memset(js->bver, 0, sizeof(unsigned) * (size_t)c), memset(js->bseen, 0, sizeof(unsigned) * (size_t)c);
    }
}

/* the active joints of a stage: live, and a moving side */
void jsolve_collect(struct joint_set *js, int n, const double *im)
{
    const int nj = js->ids.count;
    grow_tables(js, nj, n);
    js->nn = 0;
    for (int k = 0; k < nj; k++) {
        joint *jt = &js->j[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        if (!((jt->ia < n && im[jt->ia] > 0) || (jt->ib < n && im[jt->ib] > 0))) continue;
        js->nodes[js->nn++] = k;
    }
    solver_structure(js, n, im);
}

static double *blk(struct joint_set *js, int p, int q)
{
    if (js->pos[p] < js->pos[q]) {
        for (int e = js->ustart[js->pos[p]]; e < js->ustart[js->pos[p] + 1]; e++)
            if (js->unb[e] == q) return js->bU + BS * (size_t)e;
    } else {
        for (int e = js->ustart[js->pos[q]]; e < js->ustart[js->pos[q] + 1]; e++)
            if (js->unb[e] == p) return js->bL + BS * (size_t)e;
    }
    return NULL; /* not reached: every edge is in the structure */
}


/* K += C W G of one side: K_rc += c_r . w_c for mr x mc rows */
static inline __attribute__((always_inline)) void cw_m(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6], int mr, int mc)
{
    for (int r = 0; r < mr; r++)
        for (int k = 0; k < mc; k++) K[MAXR * r + k] += dot6(c[r], wg[k]);
}

/* the 3 x 3 case (point joints) with W G transposed, so that a row's three sums run side by side (each
 * summed in dot6's order: the same numbers) */
static inline __attribute__((always_inline)) void cw_3(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    double t[6][3];
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 3; k++) t[j][k] = wg[k][j];
    for (int r = 0; r < 3; r++) {
        double s[3];
        for (int k = 0; k < 3; k++) s[k] = c[r][0] * t[0][k];
        for (int j = 1; j < 6; j++)
            for (int k = 0; k < 3; k++) s[k] += c[r][j] * t[j][k];
        for (int k = 0; k < 3; k++) K[MAXR * r + k] += s[k];
    }
}

/* two point joints' blocks (axes: both have the three rows along x, y, z first): the linear parts of c_r
 * (h e_r, or -h e_r, or zero) and of W g_k (1/m e_k) meet only where r = k, so a row's sum is that one
 * product and the three angular ones (dot6's order, whose other terms are exact zeros: the same numbers) */
static inline __attribute__((always_inline)) void cw_axes(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            double s = r == k ? c[r][r] * wg[k][k] : 0;
            K[MAXR * r + k] += s + c[r][3] * wg[k][3] + c[r][4] * wg[k][4] + c[r][5] * wg[k][5];
        }
}

static void cw(double *K, const double (*c)[6], const double (*wg)[6], int mr, int mc, bool axes)
{
    if (mr == 3 && mc == 3) { /* point joints (see the fixed-size kernels below) */
        if (axes) cw_axes(K, c, wg);
        else cw_3(K, c, wg);
    } else {
        cw_m(K, c, wg, mr, mc);
    }
}

static inline void zero_blk(double *A, int mr, int mc)
{
    if (mr == 3 && mc == 3) { /* point joints: nine stores, not three library calls */
        A[0] = A[1] = A[2] = 0, A[MAXR] = A[MAXR + 1] = A[MAXR + 2] = 0, A[2 * MAXR] = A[2 * MAXR + 1] = A[2 * MAXR + 2] = 0;
        return;
    }
    for (int r = 0; r < mr; r++) memset(A + MAXR * r, 0, sizeof(double) * (size_t)mc);
}

/* a joint's side on a hub body h (the header's last paragraph): its block row gets C_X (m x 6), the
 * hub's row -(W G_X)^T (6 x m), and hd the side's share of the joint's diagonal (for the shifts) */
static void hub_side(struct joint_set *js, int p, int h, const double (*c)[6], const double (*wg)[6], int m, double *hd)
{
    double *Kph = blk(js, p, h), *Khp = blk(js, h, p);
    for (int r = 0; r < m; r++) {
        for (int k = 0; k < 6; k++) Kph[MAXR * r + k] += c[r][k], Khp[MAXR * k + r] -= wg[r][k];
        hd[r] += dot6(c[r], wg[r]);
    }
}

/* K = C W G by blocks into the structure; the diagonal gets the Levenberg-Marquardt shift mu diag K
 * and a tiny one for redundant rows; fixed rows (C zeroed) get a unit diagonal. A hub body's joints meet
 * at its node instead of in blocks of their own: its unknown is its velocity change u = W sum G^T lambda
 * (the row: u - W sum G^T lambda = 0, an identity block), and its joints' rows read C u */
void jsolve_assemble(struct joint_set *js, int n, double mu)
{
    const int nn = js->nn, nt = js->nt;
    js->kvalid = false;
    for (int p = 0; p < nt; p++) js->msz[p] = p < nn ? js->rows[p].m : 6;
    /* zero the blocks' used parts (the rest of their MAXR x MAXR storage is never read) */
    for (int k = 0; k < nt; k++) {
        const int p = js->order[k], mp = js->msz[p];
        zero_blk(js->Dinv + BS * (size_t)p, mp, mp);
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            const int mq = js->msz[js->unb[e]];
            zero_blk(js->bU + BS * (size_t)e, mp, mq), zero_blk(js->bL + BS * (size_t)e, mq, mp);
        }
    }
    for (int p = 0; p < nn; p++) {
        const jrows *R = &js->rows[p];
        const joint *jt = &js->j[js->nodes[p]];
        double *D = js->Dinv + BS * (size_t)p, hd[MAXR] = {0};
        const int ha = R->sA.dyn ? js->hubn[jt->ia] : -1, hb = R->sB.dyn ? js->hubn[jt->ib] : -1;
        if (ha >= 0) hub_side(js, p, ha, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, hd);
        else if (R->sA.dyn) cw(D, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, R->m, R->axes);
        if (hb >= 0) hub_side(js, p, hb, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, hd);
        else if (R->sB.dyn) cw(D, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, R->m, R->axes);
        for (int r = 0; r < R->m; r++) {
            if (R->fixed[r]) D[MAXR * r + r] = 1;
            D[MAXR * r + r] += (mu + 1e-10) * fabs(D[MAXR * r + r] + hd[r]) + 1e-300;
        }
    }
    for (int p = nn; p < nt; p++)
        for (int r = 0; r < 6; r++) js->Dinv[BS * (size_t)p + MAXR * r + r] = 1;
    /* off-diagonal blocks through each shared moving body that is no hub */
    for (int i = 0; i < n; i++)
        for (int a = js->bstart[i]; a < js->bstart[i + 1] && js->hubn[i] < 0; a++)
            for (int b = js->bstart[i]; b < js->bstart[i + 1]; b++) {
                int p = js->bjoint[a], q = js->bjoint[b];
                if (p == q) continue;
                const jrows *Rp = &js->rows[p], *Rq = &js->rows[q];
                const joint *jp = &js->j[js->nodes[p]], *jq = &js->j[js->nodes[q]];
                const double(*cp)[6] = jp->ia == i ? (const double(*)[6])Rp->cA : (const double(*)[6])Rp->cB;
                const double(*wq)[6] = jq->ia == i ? (const double(*)[6])Rq->wA : (const double(*)[6])Rq->wB;
                cw(blk(js, p, q), cp, wq, Rp->m, Rq->m, Rp->axes && Rq->axes);
            }
}

/* Fixed-size kernels: each block routine below is written once for any m and inlined into a dispatcher
 * that calls it with the literal 3 when the blocks are 3 x 3 (point joints, the common case), so the
 * compiler unrolls the loops for that size; any other size takes the general loops. */


/* C = A (ma x mk) B (mk x mb), all stride MAXR; sub: C -= instead */
static inline __attribute__((always_inline)) void mul_blk_m(double *restrict C, const double *restrict A, const double *restrict B, int ma, int mk, int mb, bool sub)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) {
            double s = 0;
            for (int k = 0; k < mk; k++) s += A[MAXR * r + k] * B[MAXR * k + c];
            if (sub) C[MAXR * r + c] -= s;
            else C[MAXR * r + c] = s;
        }
}

static void mul_blk(double *C, const double *A, const double *B, int ma, int mk, int mb, bool sub)
{
    if (ma == 3 && mk == 3 && mb == 3) {
        if (sub) mul_blk_m(C, A, B, 3, 3, 3, true);
        else mul_blk_m(C, A, B, 3, 3, 3, false);
    } else {
        mul_blk_m(C, A, B, ma, mk, mb, sub);
    }
}

/* block elimination in the structure's order: D_p^-1, L_qp = K_qp D_p^-1, K_q1q2 -= L_q1p K_pq2 */
bool jsolve_factor(struct joint_set *js)
{
    double T[BS] = {0};
    for (int k = 0; k < js->nt; k++) {
        int p = js->order[k], mp = js->msz[p];
        double *D = js->Dinv + BS * (size_t)p;
        if (!block_invert(D, mp)) return false;
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            double *L = js->bL + BS * (size_t)e;
            mul_blk(T, L, D, js->msz[q], mp, mp, false);
            memcpy(L, T, sizeof T);
        }
        for (int e1 = js->ustart[k]; e1 < js->ustart[k + 1]; e1++)
            for (int e2 = js->ustart[k]; e2 < js->ustart[k + 1]; e2++) {
                int q1 = js->unb[e1], q2 = js->unb[e2];
                double *K = q1 == q2 ? js->Dinv + BS * (size_t)q1 : blk(js, q1, q2);
                mul_blk(K, js->bL + BS * (size_t)e1, js->bU + BS * (size_t)e2, js->msz[q1], mp, js->msz[q2], true);
            }
    }
    return true;
}

/* solve K x = rhs with the factors (rhs is overwritten; x into sol) */
/* y -= A x (ma x mb block, stride MAXR) */
static inline __attribute__((always_inline)) void mv_sub_m(double *restrict y, const double *restrict A, const double *restrict x, int ma, int mb)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) y[r] -= A[MAXR * r + c] * x[c];
}

static void mv_sub(double *y, const double *A, const double *x, int ma, int mb)
{
    if (ma == 3 && mb == 3) mv_sub_m(y, A, x, 3, 3);
    else mv_sub_m(y, A, x, ma, mb);
}

void jsolve_solve(struct joint_set *js)
{
    for (int p = js->nn; p < js->nt; p++) memset(js->rhs + MAXR * (size_t)p, 0, 6 * sizeof(double)); /* hubs */
    for (int k = 0; k < js->nt; k++) {
        int p = js->order[k], mp = js->msz[p];
        const double *bp = js->rhs + MAXR * (size_t)p;
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            mv_sub(js->rhs + MAXR * (size_t)q, js->bL + BS * (size_t)e, bp, js->msz[q], mp);
        }
    }
    for (int k = js->nt - 1; k >= 0; k--) {
        int p = js->order[k], mp = js->msz[p];
        double t[MAXR];
        memcpy(t, js->rhs + MAXR * (size_t)p, sizeof t);
        for (int e = js->ustart[k]; e < js->ustart[k + 1]; e++) {
            int q = js->unb[e];
            mv_sub(t, js->bU + BS * (size_t)e, js->sol + MAXR * (size_t)q, mp, js->msz[q]);
        }
        const double *D = js->Dinv + BS * (size_t)p;
        double *x = js->sol + MAXR * (size_t)p;
        for (int r = 0; r < mp; r++) x[r] = 0;
        mv_sub(x, D, t, mp, mp);
        for (int r = 0; r < mp; r++) x[r] = -x[r];
    }
}

/* velocities += alpha * sum_r lam_r W g_r of node p (lam: 6 per node); with v2 also into v2, om2 */
void jsolve_apply(struct joint_set *js, int p, const double *lam, double alpha, imp_vec3 *v, imp_vec3 *om, imp_vec3 *v2, imp_vec3 *om2, int n)
{
    const jrows *R = &js->rows[p];
    joint *jt = &js->j[js->nodes[p]];
    imp_vec3 dva = v3(0, 0, 0), dwa = dva, dvb = dva, dwb = dva;
    for (int r = 0; r < R->m; r++) {
        double l = alpha * lam[r];
        if (l == 0) continue;
        const double *a = R->wA[r], *b = R->wB[r];
        dva = v3_add(dva, v3(l * a[0], l * a[1], l * a[2])), dwa = v3_add(dwa, v3(l * a[3], l * a[4], l * a[5]));
        dvb = v3_add(dvb, v3(l * b[0], l * b[1], l * b[2])), dwb = v3_add(dwb, v3(l * b[3], l * b[4], l * b[5]));
    }
    if (v2 || v == js->pv) {
        if (jt->ia < n) js->bver[jt->ia]++;
        if (jt->ib < n) js->bver[jt->ib]++;
    }
    if (jt->ia < n) {
        v[jt->ia] = v3_add(v[jt->ia], dva), om[jt->ia] = v3_add(om[jt->ia], dwa);
        if (v2) v2[jt->ia] = v3_add(v2[jt->ia], dva), om2[jt->ia] = v3_add(om2[jt->ia], dwa);
    }
    if (jt->ib < n) {
        v[jt->ib] = v3_add(v[jt->ib], dvb), om[jt->ib] = v3_add(om[jt->ib], dwb);
        if (v2) v2[jt->ib] = v3_add(v2[jt->ib], dvb), om2[jt->ib] = v3_add(om2[jt->ib], dwb);
    }
}

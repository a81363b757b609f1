/* joint_solve.c: the sparse block solve of the joints' rows, K x = rhs with K = C W G^T (C = G for
 * velocity rows), after Baraff 1996 ("Linear-time dynamics using Lagrange multipliers").
 *
 * K has one block per active joint (m x m) and a block K_kl = sum_X C_kX W_X G_lX^T for joints k, l that
 * share a moving body X. Block Gaussian elimination in a minimum-degree order of this joint graph: a
 * chain or tree, leaves first, makes no fill and costs O(joints); a loop (four-bar, net) fills in only
 * the cliques its eliminations make. The order and fill are found once per joint topology (a greedy
 * minimum-degree pass, O(joints^2), the only allocation, when joints or their moving bodies change) and
 * kept. Diagonal blocks are inverted densely (dense.h); a tiny relative shift keeps redundant rows (a
 * planar loop of hinges) solvable in the least-squares sense.
 *
 * Hubs. The k joints of one body are a clique of the joint graph, O(k^3) a solve. A body with HUB_MIN or
 * more joints is therefore a node of its own (Baraff's body-and-joint graph, for that body alone): its
 * unknown is its velocity change u = W_X sum_k G_kX^T lambda_k, its row
 *     u - W_X sum_k G_kX^T lambda_k = 0        (an identity block, and -(W G)^T blocks to its joints),
 * and each of its joints reads C_kX u instead of blocks with the others, so the cost is linear in k.
 * Eliminated in this order: the joints with a moving side that is no hub (their blocks without the hub's
 * part are invertible; the spokes of a star are leaves), then the hubs, then the joints whose moving
 * sides are all hubs (a hub's joint to the world, or between two hubs), whose blocks the hubs'
 * eliminations complete. The multipliers are those of the dense blocks, up to rounding. */
#include <stdlib.h>
#include <string.h>

#include "joint_internal.h"
#include "joint_solve.h"
#include "sparse_simd.h"

#define HUB_MIN 8 /* a body with this many joints is a node of the sparse solve (the header) */

/* the moving ends of every node (moving_ends, -1 for a side that does not move) and body -> incident nodes
 * (CSR: bstart, bjoint); returns whether the ends are those the elimination structure was built for */
static bool collect_moving_ends(struct joint_set *js, int n, const double *im)
{
    const int nn = js->node_count;
    memset(js->body_node_start, 0, sizeof(int) * (size_t)(n + 2));
    bool same = js->order && js->moving_ends_count == nn;
    for (int p = 0; p < nn; p++) {
        const joint *jt = &js->joint[js->nodes[p]];
        int ends[2] = {jt->ia, jt->ib};
        for (int e = 0; e < 2; e++) {
            int x = ends[e] < n && im[ends[e]] > 0 ? ends[e] : -1;
            if (x >= 0) js->body_node_start[x + 1]++;
            same = same && js->moving_ends[2 * p + e] == x;
            js->moving_ends[2 * p + e] = x;
        }
    }
    js->moving_ends_count = nn;
    for (int i = 0; i < n; i++) js->body_node_start[i + 1] += js->body_node_start[i];
    int *cur = js->fill_cursor;
    for (int i = 0; i <= n; i++) cur[i] = js->body_node_start[i];
    for (int p = 0; p < nn; p++)
        for (int e = 0; e < 2; e++)
            if (js->moving_ends[2 * p + e] >= 0) js->body_nodes[cur[js->moving_ends[2 * p + e]]++] = p;
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
        for (int a = js->body_node_start[i]; a < js->body_node_start[i + 1]; a++) {
            if (js->hub_node[i] >= 0) {
                graph_add_edge(g, js->body_nodes[a], js->hub_node[i]);
                graph_add_edge(g, js->hub_node[i], js->body_nodes[a]);
                continue;
            }
            for (int b = js->body_node_start[i]; b < js->body_node_start[i + 1]; b++)
                if (a != b) graph_add_edge(g, js->body_nodes[a], js->body_nodes[b]);
        }
}

/* The elimination structure: the hub bodies (HUB_MIN or more joints) become nodes nn .. nt-1; a greedy
 * minimum-degree order within ranks (0 a joint with a moving side that is no hub, 1 a hub, 2 a joint
 * whose moving sides are all hubs: leaves first on a tree), and each node's later neighbours U(p), the
 * fill of its elimination included */
static void elimination_order(struct joint_set *js, int n)
{
    const int nn = js->node_count;
    js->hub_count = 0;
    for (int i = 0; i < n; i++) {
        js->hub_node[i] = -1;
        if (js->body_node_start[i + 1] - js->body_node_start[i] >= HUB_MIN) js->hub_node[i] = nn + js->hub_count++;
    }
    const int nt = js->node_total = nn + js->hub_count;
    node_graph g = {calloc((size_t)nt + 1, sizeof(int *)), calloc((size_t)nt + 1, sizeof(int)), calloc((size_t)nt + 1, sizeof(int))};
    uint8_t *gone = calloc((size_t)nt + 1, 1), *rank = calloc((size_t)nt + 1, 1);
    if (!g.adj || !g.deg || !g.acap || !gone || !rank) abort();
    for (int p = 0; p < nt; p++) {
        rank[p] = p < nn ? 2 : 1;
        for (int e = 0; e < 2 && p < nn; e++) {
            const int x = js->moving_ends[2 * p + e];
            if (x >= 0 && js->hub_node[x] < 0) rank[p] = 0;
        }
    }
    graph_edges(js, n, &g);
    int nu = 0;
    for (int k = 0; k < nt; k++) {
        int p = -1;
        for (int q = 0; q < nt; q++)
            if (!gone[q] && (p < 0 || rank[q] < rank[p] || (rank[q] == rank[p] && g.deg[q] < g.deg[p]))) p = q;
        gone[p] = 1, js->order[k] = p, js->order_pos[p] = k, js->upper_start[k] = nu;
        js->upper_node = table_grow(js->upper_node, sizeof(int), &js->upper_node_cap, nu + g.deg[p] + 1);
        for (int a = 0; a < g.deg[p]; a++) js->upper_node[nu + a] = g.adj[p][a];
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
    js->upper_start[nt] = nu;
}

/* the index of the stored block K_pq of two neighbouring nodes: e >= 0 for U's entry e when p is
 * eliminated first, -1 - e for L's entry e otherwise */
static int offdiag_index(const struct joint_set *js, int p, int q)
{
    const bool up = js->order_pos[p] < js->order_pos[q];
    const int k = up ? js->order_pos[p] : js->order_pos[q], other = up ? q : p;
    for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++)
        if (js->upper_node[e] == other) return up ? e : -1 - e;
    return 0; /* not reached: every edge is in the structure */
}

/* the stored block K_pq of two neighbouring nodes: in U when p is eliminated first, else in L */
static double *offdiag_block(struct joint_set *js, int p, int q)
{
    const int e = offdiag_index(js, p, q);
    return e >= 0 ? js->upper + BLOCK_DOUBLES * (size_t)e : js->lower + BLOCK_DOUBLES * (size_t)(-1 - e);
}

/* the couplings of joints through a shared moving body that is no hub, in the order of the bodies and
 * their CSR (the order in which the assembly adds them), found with the structure */
static void coupling_list(struct joint_set *js, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        if (js->hub_node[i] >= 0) continue;
        for (int a = js->body_node_start[i]; a < js->body_node_start[i + 1]; a++)
            for (int b = js->body_node_start[i]; b < js->body_node_start[i + 1]; b++) {
                const int p = js->body_nodes[a], q = js->body_nodes[b];
                if (p == q) continue;
                js->coupling = table_grow(js->coupling, 4 * sizeof(int), &js->coupling_cap, c + 1);
                int *o = js->coupling + 4 * c++;
                o[0] = p, o[1] = q, o[2] = (js->moving_ends[2 * p] != i) | (js->moving_ends[2 * q] != i) << 1, o[3] = offdiag_index(js, p, q);
            }
    }
    js->coupling_count = c;
}

/* body -> incident nodes, and the elimination structure when the joint graph changed (a new structure
 * generation: post-stabilization's kept factors are stale) */
static void solver_structure(struct joint_set *js, int n, const double *im)
{
    if (collect_moving_ends(js, n, im)) return;
    js->structure_gen++;
    elimination_order(js, n);
    const int nu = js->upper_start[js->node_total];
    if (nu + 1 > js->upper_block_cap) {
        js->upper_block_cap = nu * 3 / 2 + 16;
        js->upper = ids_grow(js->upper, BLOCK_DOUBLES * sizeof(double), js->upper_block_cap);
        js->lower = ids_grow(js->lower, BLOCK_DOUBLES * sizeof(double), js->upper_block_cap);
    }
    coupling_list(js, n);
}

/* the tables of the stages grown to nj joints and n bodies (no allocation in a steady step) */
static void grow_tables(struct joint_set *js, int nj, int n)
{
    if (nj + 1 > js->node_cap) {
        const int old = js->node_cap;
        int c = js->node_cap = nj * 3 / 2 + 16;
        js->nodes = ids_grow(js->nodes, sizeof(int), c), js->rows = ids_grow(js->rows, sizeof(row_block), c);
        for (int p = old; p < c; p++) js->rows[p].dir_valid = false, js->rows[p].dir_version = 0;
        js->body_nodes = ids_grow(js->body_nodes, sizeof(int), 2 * c);
        js->moving_ends = ids_grow(js->moving_ends, sizeof(int), 2 * c), js->moving_ends_count = -1;
    }
    if (nj + n + 1 > js->node_total_cap) { /* the solver's nodes: the joints and the hub bodies */
        int c = js->node_total_cap = (nj + n) * 3 / 2 + 16;
        js->order = ids_grow(js->order, sizeof(int), c), js->node_size = ids_grow(js->node_size, sizeof(int), c);
        js->order_pos = ids_grow(js->order_pos, sizeof(int), c), js->upper_start = ids_grow(js->upper_start, sizeof(int), c + 1);
        js->diag = ids_grow(js->diag, BLOCK_DOUBLES * sizeof(double), c), js->rhs = ids_grow(js->rhs, MAX_ROWS * sizeof(double), c);
        js->rhs_kept = ids_grow(js->rhs_kept, MAX_ROWS * sizeof(double), c);
        js->sol = ids_grow(js->sol, MAX_ROWS * sizeof(double), c);
    }
    if (n + 2 > js->body_table_cap) {
        int c = js->body_table_cap = n * 3 / 2 + 16;
        js->body_node_start = ids_grow(js->body_node_start, sizeof(int), c), js->fill_cursor = ids_grow(js->fill_cursor, sizeof(int), c);
        js->pred_v = ids_grow(js->pred_v, sizeof(imp_vec3), c), js->pred_w = ids_grow(js->pred_w, sizeof(imp_vec3), c);
        js->saved_v = ids_grow(js->saved_v, sizeof(imp_vec3), c), js->saved_w = ids_grow(js->saved_w, sizeof(imp_vec3), c);
        js->scratch_v = ids_grow(js->scratch_v, sizeof(imp_vec3), c), js->scratch_w = ids_grow(js->scratch_w, sizeof(imp_vec3), c);
        js->pred_q = ids_grow(js->pred_q, sizeof(imp_quat), c), js->pred_HL = ids_grow(js->pred_HL, sizeof(imp_mat3), c);
        js->vel_version = ids_grow(js->vel_version, sizeof(unsigned), c), js->pred_version = ids_grow(js->pred_version, sizeof(unsigned), c);
        js->pred_epoch = ids_grow(js->pred_epoch, sizeof(unsigned), c);
        js->axis_e = ids_grow(js->axis_e, sizeof(imp_quat), c), js->axis_R = ids_grow(js->axis_R, sizeof(imp_mat3), c), js->axis_HL = ids_grow(js->axis_HL, sizeof(imp_mat3), c);
        js->axis_version = ids_grow(js->axis_version, sizeof(unsigned), c), js->axis_epoch = ids_grow(js->axis_epoch, sizeof(unsigned), c);
        js->body_q_state = ids_grow(js->body_q_state, sizeof(imp_quat), c), js->body_q = ids_grow(js->body_q, sizeof(imp_quat), c);
        js->body_R = ids_grow(js->body_R, sizeof(imp_mat3), c), js->pred_R = ids_grow(js->pred_R, sizeof(imp_mat3), c);
        js->hub_node = ids_grow(js->hub_node, sizeof(int), c);
        js->moving_ends_count = -1; /* (hub_node is set by the structure) */
        memset(js->body_q_state, 0xff, sizeof(imp_quat) * (size_t)c); /* (a NaN pattern: never a live body's state) */
        for (int i = 0; i < c; i++) js->body_q[i] = quat_identity(), js->body_R[i] = m3_identity();
        memset(js->pred_epoch, 0, sizeof(unsigned) * (size_t)c), js->epoch = 1;
        memset(js->axis_epoch, 0, sizeof(unsigned) * (size_t)c), memset(js->axis_version, 0, sizeof(unsigned) * (size_t)c);
        memset(js->vel_version, 0, sizeof(unsigned) * (size_t)c), memset(js->pred_version, 0, sizeof(unsigned) * (size_t)c);
    }
}

/* the active joints of a stage: live, and a moving side */
void jsolve_collect(struct joint_set *js, int n, const double *im)
{
    const int nj = js->ids.count;
    grow_tables(js, nj, n);
    js->node_count = 0;
    for (int k = 0; k < nj; k++) {
        joint *jt = &js->joint[k];
        if (jt->ia < 0 || jt->ib < 0) continue;
        if (!((jt->ia < n && im[jt->ia] > 0) || (jt->ib < n && im[jt->ib] > 0))) continue;
        js->nodes[js->node_count++] = k;
    }
    solver_structure(js, n, im);
}

/* Fixed-size kernels: each block routine is written once for any m and inlined into a dispatcher that
 * calls it with the literal 3 when the blocks are 3 x 3 (point joints, the common case), so the compiler
 * unrolls the loops for that size; any other size takes the general loops. */

/* K += C W G^T of one side: K_rc += c_r . (W g)_c for mr x mc rows */
static inline __attribute__((always_inline)) void block_add_cwg_any(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6], int mr, int mc)
{
    for (int r = 0; r < mr; r++)
        for (int k = 0; k < mc; k++) K[MAX_ROWS * r + k] += dot6(c[r], wg[k]);
}

/* the 3 x 3 case (point joints) with W G transposed, so that a row's three sums run side by side (each
 * summed in dot6's order: the same numbers) */
static inline __attribute__((always_inline)) void block_add_cwg_3(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    double t[6][3];
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 3; k++) t[j][k] = wg[k][j];
    for (int r = 0; r < 3; r++) {
        double s[3];
        for (int k = 0; k < 3; k++) s[k] = c[r][0] * t[0][k];
        for (int j = 1; j < 6; j++)
            for (int k = 0; k < 3; k++) s[k] += c[r][j] * t[j][k];
        for (int k = 0; k < 3; k++) K[MAX_ROWS * r + k] += s[k];
    }
}

/* two point joints' blocks (axes: both have the three rows along x, y, z first): the linear parts of c_r
 * (h e_r, or -h e_r, or zero) and of W g_k (1/m e_k) meet only where r = k, so a row's sum is that one
 * product and the three angular ones (dot6's order, whose other terms are exact zeros: the same numbers) */
static inline __attribute__((always_inline)) void block_add_cwg_axes(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            double s = r == k ? c[r][r] * wg[k][k] : 0;
            K[MAX_ROWS * r + k] += s + c[r][3] * wg[k][3] + c[r][4] * wg[k][4] + c[r][5] * wg[k][5];
        }
}

#if SPARSE_HAVE_AVX
/* block_add_cwg_axes with the three columns k in the lanes of one vector (lane 3 zero, never stored):
 * each lane sums (s + c_r3 w_k3) + c_r4 w_k4 + c_r5 w_k5 in the scalar kernel's order, s the linear
 * product in lane r and +0 elsewhere (as the scalar s = 0), so the bits are the scalar ones */
static SPARSE_AVX void block_add_cwg_axes_avx(double *restrict K, const double (*restrict c)[6], const double (*restrict wg)[6])
{
    const __m256d t3 = _mm256_set_pd(0, wg[2][3], wg[1][3], wg[0][3]), t4 = _mm256_set_pd(0, wg[2][4], wg[1][4], wg[0][4]);
    const __m256d t5 = _mm256_set_pd(0, wg[2][5], wg[1][5], wg[0][5]), lin = _mm256_set_pd(0, wg[2][2], wg[1][1], wg[0][0]);
    for (int r = 0; r < 3; r++) {
        const __m256d lane = _mm256_castsi256_pd(_mm256_set_epi64x(0, -(r == 2), -(r == 1), -(r == 0)));
        __m256d s = _mm256_and_pd(_mm256_mul_pd(_mm256_broadcast_sd(&c[r][r]), lin), lane);
        s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_broadcast_sd(&c[r][3]), t3));
        s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_broadcast_sd(&c[r][4]), t4));
        s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_broadcast_sd(&c[r][5]), t5));
        sparse_store3(K + MAX_ROWS * r, _mm256_add_pd(sparse_load3(K + MAX_ROWS * r), s));
    }
}
#endif

/* avx: sparse_avx(), asked once an assembly */
static inline __attribute__((always_inline)) void block_add_cwg(double *K, const double (*c)[6], const double (*wg)[6], int mr, int mc, bool axes, bool avx)
{
    (void)avx;
    if (mr == 3 && mc == 3) { /* point joints: the fixed-size kernels */
#if SPARSE_HAVE_AVX
        if (axes && avx) {
            block_add_cwg_axes_avx(K, c, wg);
            return;
        }
#endif
        if (axes) block_add_cwg_axes(K, c, wg);
        else block_add_cwg_3(K, c, wg);
    } else {
        block_add_cwg_any(K, c, wg, mr, mc);
    }
}

static inline void block_zero(double *A, int mr, int mc)
{
    if (mr == 3 && mc == 3) { /* point joints: nine stores, not three library calls */
        A[0] = A[1] = A[2] = 0, A[MAX_ROWS] = A[MAX_ROWS + 1] = A[MAX_ROWS + 2] = 0, A[2 * MAX_ROWS] = A[2 * MAX_ROWS + 1] = A[2 * MAX_ROWS + 2] = 0;
        return;
    }
    for (int r = 0; r < mr; r++) memset(A + MAX_ROWS * r, 0, sizeof(double) * (size_t)mc);
}

/* a joint's side on a hub body h (the header's "Hubs"): its block row gets C_X (m x 6), the
 * hub's row -(W G_X)^T (6 x m), and hd the side's share of the joint's diagonal (for the shifts) */
static void assemble_hub_side(struct joint_set *js, int p, int h, const double (*c)[6], const double (*wg)[6], int m, double *hd)
{
    double *Kph = offdiag_block(js, p, h), *Khp = offdiag_block(js, h, p);
    for (int r = 0; r < m; r++) {
        for (int k = 0; k < 6; k++) Kph[MAX_ROWS * r + k] += c[r][k], Khp[MAX_ROWS * k + r] -= wg[r][k];
        hd[r] += dot6(c[r], wg[r]);
    }
}

/* K = C W G^T by blocks into the structure; the diagonal gets the Levenberg-Marquardt shift mu diag K
 * and a tiny one for redundant rows; fixed rows (C zeroed) get a unit diagonal. A hub body's joints meet
 * at its node instead of in blocks of their own: its unknown is its velocity change u = W sum G^T lambda
 * (the row: u - W sum G^T lambda = 0, an identity block), and its joints' rows read C u */
void jsolve_assemble(struct joint_set *js, double mu)
{
    const int nn = js->node_count, nt = js->node_total;
#if SPARSE_HAVE_AVX
    const bool avx = sparse_avx();
#else
    const bool avx = false;
#endif
    js->kept_valid = false;
    js->blocks3 = nt == nn;
    for (int p = 0; p < nt; p++) js->node_size[p] = p < nn ? js->rows[p].m : 6, js->blocks3 = js->blocks3 && js->node_size[p] == 3;
    /* zero the blocks' used parts (the rest of their MAX_ROWS x MAX_ROWS storage is never read) */
    for (int k = 0; k < nt; k++) {
        const int p = js->order[k], mp = js->node_size[p];
        block_zero(js->diag + BLOCK_DOUBLES * (size_t)p, mp, mp);
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++) {
            const int mq = js->node_size[js->upper_node[e]];
            block_zero(js->upper + BLOCK_DOUBLES * (size_t)e, mp, mq), block_zero(js->lower + BLOCK_DOUBLES * (size_t)e, mq, mp);
        }
    }
    for (int p = 0; p < nn; p++) {
        const row_block *R = &js->rows[p];
        const joint *jt = &js->joint[js->nodes[p]];
        double *D = js->diag + BLOCK_DOUBLES * (size_t)p, hd[MAX_ROWS] = {0};
        const int ha = R->sA.moves ? js->hub_node[jt->ia] : -1, hb = R->sB.moves ? js->hub_node[jt->ib] : -1;
        if (ha >= 0) assemble_hub_side(js, p, ha, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, hd);
        else if (R->sA.moves) block_add_cwg(D, (const double(*)[6])R->cA, (const double(*)[6])R->wA, R->m, R->m, R->axis_rows, avx);
        if (hb >= 0) assemble_hub_side(js, p, hb, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, hd);
        else if (R->sB.moves) block_add_cwg(D, (const double(*)[6])R->cB, (const double(*)[6])R->wB, R->m, R->m, R->axis_rows, avx);
        for (int r = 0; r < R->m; r++) {
            if (R->fixed[r]) D[MAX_ROWS * r + r] = 1;
            D[MAX_ROWS * r + r] += (mu + 1e-10) * fabs(D[MAX_ROWS * r + r] + hd[r]) + 1e-300;
        }
    }
    for (int p = nn; p < nt; p++)
        for (int r = 0; r < 6; r++) js->diag[BLOCK_DOUBLES * (size_t)p + MAX_ROWS * r + r] = 1;
    /* off-diagonal blocks through each shared moving body that is no hub (coupling_list) */
    for (int c = 0; c < js->coupling_count; c++) {
        const int *o = js->coupling + 4 * c;
        const row_block *Rp = &js->rows[o[0]], *Rq = &js->rows[o[1]];
        const double(*cp)[6] = o[2] & 1 ? (const double(*)[6])Rp->cB : (const double(*)[6])Rp->cA;
        const double(*wq)[6] = o[2] & 2 ? (const double(*)[6])Rq->wB : (const double(*)[6])Rq->wA;
        double *K = o[3] >= 0 ? js->upper + BLOCK_DOUBLES * (size_t)o[3] : js->lower + BLOCK_DOUBLES * (size_t)(-1 - o[3]);
        block_add_cwg(K, cp, wq, Rp->m, Rq->m, Rp->axis_rows && Rq->axis_rows, avx);
    }
}

/* C = A (ma x mk) B (mk x mb), all stride MAX_ROWS; sub: C -= instead */
static inline __attribute__((always_inline)) void block_mul_any(double *restrict C, const double *restrict A, const double *restrict B, int ma, int mk, int mb, bool sub)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) {
            double s = 0;
            for (int k = 0; k < mk; k++) s += A[MAX_ROWS * r + k] * B[MAX_ROWS * k + c];
            if (sub) C[MAX_ROWS * r + c] -= s;
            else C[MAX_ROWS * r + c] = s;
        }
}

#if SPARSE_HAVE_AVX
/* block_mul_any for 3 x 3 blocks with a row of C in the lanes of one vector (lane 3 never stored): lane
 * c sums (0 + A_r0 B_0c) + A_r1 B_1c + A_r2 B_2c in the scalar loop's order, so the bits are the
 * scalar ones */
static SPARSE_AVX void block_mul3_avx(double *restrict C, const double *restrict A, const double *restrict B, bool sub)
{
    const __m256d b0 = sparse_load3(B), b1 = sparse_load3(B + MAX_ROWS), b2 = sparse_load3(B + 2 * MAX_ROWS);
    for (int r = 0; r < 3; r++) {
        const double *a = A + MAX_ROWS * r;
        __m256d s = _mm256_add_pd(_mm256_setzero_pd(), _mm256_mul_pd(_mm256_broadcast_sd(a), b0));
        s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_broadcast_sd(a + 1), b1));
        s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_broadcast_sd(a + 2), b2));
        sparse_store3(C + MAX_ROWS * r, sub ? _mm256_sub_pd(sparse_load3(C + MAX_ROWS * r), s) : s);
    }
}
#endif

/* avx: sparse_avx(), asked once a factorization */
static void block_mul(double *C, const double *A, const double *B, int ma, int mk, int mb, bool sub, bool avx)
{
    (void)avx;
    if (ma == 3 && mk == 3 && mb == 3) {
#if SPARSE_HAVE_AVX
        if (avx) {
            block_mul3_avx(C, A, B, sub);
            return;
        }
#endif
        if (sub) block_mul_any(C, A, B, 3, 3, 3, true);
        else block_mul_any(C, A, B, 3, 3, 3, false);
    } else {
        block_mul_any(C, A, B, ma, mk, mb, sub);
    }
}

/* A = B, the used ma x mb part (the rest of a block's storage is never read) */
static inline void block_copy(double *restrict A, const double *restrict B, int ma, int mb)
{
    if (ma == 3 && mb == 3) {
        for (int r = 0; r < 3; r++) A[MAX_ROWS * r] = B[MAX_ROWS * r], A[MAX_ROWS * r + 1] = B[MAX_ROWS * r + 1], A[MAX_ROWS * r + 2] = B[MAX_ROWS * r + 2];
        return;
    }
    for (int r = 0; r < ma; r++) memcpy(A + MAX_ROWS * r, B + MAX_ROWS * r, sizeof(double) * (size_t)mb);
}

/* the inverse of a 3 x 3 pivot block (stride MAX_ROWS) as its adjugate over its determinant, about a
 * quarter of Gauss-Jordan's work. For a block far from singular its error is of the order of
 * elimination's (eps times the condition number); where |det| is below 1e-9 of the Hadamard bound (the
 * product of the rows' lengths, which |det| never exceeds: the block is nearly singular, a redundant row
 * of a loop) Gauss-Jordan with partial pivoting inverts it. */
static bool block_invert3(double *A)
{
    double *r0 = A, *r1 = A + MAX_ROWS, *r2 = A + 2 * MAX_ROWS;
    const double c00 = r1[1] * r2[2] - r1[2] * r2[1], c01 = r1[2] * r2[0] - r1[0] * r2[2], c02 = r1[0] * r2[1] - r1[1] * r2[0];
    const double det = r0[0] * c00 + r0[1] * c01 + r0[2] * c02;
    const double hadamard = sqrt((r0[0] * r0[0] + r0[1] * r0[1] + r0[2] * r0[2]) * (r1[0] * r1[0] + r1[1] * r1[1] + r1[2] * r1[2]) *
                                 (r2[0] * r2[0] + r2[1] * r2[1] + r2[2] * r2[2]));
    if (!(fabs(det) > 1e-9 * hadamard) || !(hadamard < INFINITY)) return dense_invert(A, 3, MAX_ROWS);
    const double d = 1 / det;
    const double i01 = (r0[2] * r2[1] - r0[1] * r2[2]) * d, i02 = (r0[1] * r1[2] - r0[2] * r1[1]) * d;
    const double i11 = (r0[0] * r2[2] - r0[2] * r2[0]) * d, i12 = (r0[2] * r1[0] - r0[0] * r1[2]) * d;
    const double i21 = (r0[1] * r2[0] - r0[0] * r2[1]) * d, i22 = (r0[0] * r1[1] - r0[1] * r1[0]) * d;
    r0[0] = c00 * d, r0[1] = i01, r0[2] = i02;
    r1[0] = c01 * d, r1[1] = i11, r1[2] = i12;
    r2[0] = c02 * d, r2[1] = i21, r2[2] = i22;
    return true;
}

/* block elimination in the structure's order: D_p^-1, L_qp = K_qp D_p^-1, K_q1q2 -= L_q1p K_pq2 */
bool jsolve_factor(struct joint_set *js)
{
    double T[BLOCK_DOUBLES] = {0};
#if SPARSE_HAVE_AVX
    const bool avx = sparse_avx();
#else
    const bool avx = false;
#endif
    for (int k = 0; k < js->node_total; k++) {
        int p = js->order[k], mp = js->node_size[p];
        double *D = js->diag + BLOCK_DOUBLES * (size_t)p;
        if (!(mp == 3 ? block_invert3(D) : block_invert(D, mp))) return false;
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++) {
            int q = js->upper_node[e];
            double *L = js->lower + BLOCK_DOUBLES * (size_t)e;
            const int mq = js->node_size[q];
            block_mul(T, L, D, mq, mp, mp, false, avx);
            block_copy(L, T, mq, mp);
        }
        for (int e1 = js->upper_start[k]; e1 < js->upper_start[k + 1]; e1++)
            for (int e2 = js->upper_start[k]; e2 < js->upper_start[k + 1]; e2++) {
                int q1 = js->upper_node[e1], q2 = js->upper_node[e2];
                double *K = q1 == q2 ? js->diag + BLOCK_DOUBLES * (size_t)q1 : offdiag_block(js, q1, q2);
                block_mul(K, js->lower + BLOCK_DOUBLES * (size_t)e1, js->upper + BLOCK_DOUBLES * (size_t)e2, js->node_size[q1], mp, js->node_size[q2], true, avx);
            }
    }
    return true;
}

/* y -= A x (ma x mb block, stride MAX_ROWS) */
static inline __attribute__((always_inline)) void block_mv_sub_any(double *restrict y, const double *restrict A, const double *restrict x, int ma, int mb)
{
    for (int r = 0; r < ma; r++)
        for (int c = 0; c < mb; c++) y[r] -= A[MAX_ROWS * r + c] * x[c];
}

static inline __attribute__((always_inline)) void block_mv_sub(double *y, const double *A, const double *x, int ma, int mb)
{
    if (ma == 3 && mb == 3) block_mv_sub_any(y, A, x, 3, 3);
    else block_mv_sub_any(y, A, x, ma, mb);
}

/* jsolve_solve where every node has 3 rows (blocks3): the same operations in the same order, with the
 * block sizes known */
static void solve_blocks3(struct joint_set *js)
{
    const int nt = js->node_total;
    double *rhs = js->rhs, *sol = js->sol;
    for (int k = 0; k < nt; k++) {
        const double *b = rhs + MAX_ROWS * (size_t)js->order[k];
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++)
            block_mv_sub_any(rhs + MAX_ROWS * (size_t)js->upper_node[e], js->lower + BLOCK_DOUBLES * (size_t)e, b, 3, 3);
    }
    for (int k = nt - 1; k >= 0; k--) {
        const int p = js->order[k];
        double t[3] = {rhs[MAX_ROWS * (size_t)p], rhs[MAX_ROWS * (size_t)p + 1], rhs[MAX_ROWS * (size_t)p + 2]};
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++)
            block_mv_sub_any(t, js->upper + BLOCK_DOUBLES * (size_t)e, sol + MAX_ROWS * (size_t)js->upper_node[e], 3, 3);
        const double *D = js->diag + BLOCK_DOUBLES * (size_t)p;
        double x[3] = {0, 0, 0}, *out = sol + MAX_ROWS * (size_t)p;
        block_mv_sub_any(x, D, t, 3, 3);
        out[0] = -x[0], out[1] = -x[1], out[2] = -x[2];
    }
}

/* solve K x = rhs with the factors: forward through L, then back through D^-1 and U (rhs is
 * overwritten; x into sol; the hubs' right-hand sides are zero) */
void jsolve_solve(struct joint_set *js)
{
    if (js->blocks3) {
        solve_blocks3(js);
        return;
    }
    for (int p = js->node_count; p < js->node_total; p++) memset(js->rhs + MAX_ROWS * (size_t)p, 0, 6 * sizeof(double)); /* hubs */
    for (int k = 0; k < js->node_total; k++) {
        int p = js->order[k], mp = js->node_size[p];
        const double *bp = js->rhs + MAX_ROWS * (size_t)p;
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++) {
            int q = js->upper_node[e];
            block_mv_sub(js->rhs + MAX_ROWS * (size_t)q, js->lower + BLOCK_DOUBLES * (size_t)e, bp, js->node_size[q], mp);
        }
    }
    for (int k = js->node_total - 1; k >= 0; k--) {
        int p = js->order[k], mp = js->node_size[p];
        double t[MAX_ROWS];
        memcpy(t, js->rhs + MAX_ROWS * (size_t)p, sizeof t);
        for (int e = js->upper_start[k]; e < js->upper_start[k + 1]; e++) {
            int q = js->upper_node[e];
            block_mv_sub(t, js->upper + BLOCK_DOUBLES * (size_t)e, js->sol + MAX_ROWS * (size_t)q, mp, js->node_size[q]);
        }
        const double *D = js->diag + BLOCK_DOUBLES * (size_t)p;
        double *x = js->sol + MAX_ROWS * (size_t)p;
        for (int r = 0; r < mp; r++) x[r] = 0;
        block_mv_sub(x, D, t, mp, mp);
        for (int r = 0; r < mp; r++) x[r] = -x[r];
    }
}

/* velocities += alpha * sum_r lam_r W g_r of node p (lam: its rows' multipliers); with v2 also into v2,
 * om2. A change of the predicted velocities (pred_v, or v2) invalidates its bodies' predictions */
void jsolve_apply(struct joint_set *js, int p, const double *lam, double alpha, imp_vec3 *v, imp_vec3 *om, imp_vec3 *v2, imp_vec3 *om2, int n)
{
    const row_block *R = &js->rows[p];
    joint *jt = &js->joint[js->nodes[p]];
    imp_vec3 dva = v3(0, 0, 0), dwa = dva, dvb = dva, dwb = dva;
    if (R->m == 3 && R->axis_rows) {
        /* three rows along x, y, z: row r's linear W g is 1/m e_r (or zero), so the linear sums are one
         * product each (0 + l_r w_rr: the sums' value, the exact zeros of the other rows left out) */
        double l[3];
        for (int r = 0; r < 3; r++) {
            l[r] = alpha * lam[r];
            if (l[r] == 0) continue;
            const double *a = R->wA[r], *b = R->wB[r];
            dwa = v3_add(dwa, v3(l[r] * a[3], l[r] * a[4], l[r] * a[5])), dwb = v3_add(dwb, v3(l[r] * b[3], l[r] * b[4], l[r] * b[5]));
        }
        dva = v3(0.0 + l[0] * R->wA[0][0], 0.0 + l[1] * R->wA[1][1], 0.0 + l[2] * R->wA[2][2]);
        dvb = v3(0.0 + l[0] * R->wB[0][0], 0.0 + l[1] * R->wB[1][1], 0.0 + l[2] * R->wB[2][2]);
    } else {
        for (int r = 0; r < R->m; r++) {
            double l = alpha * lam[r];
            if (l == 0) continue;
            const double *a = R->wA[r], *b = R->wB[r];
            dva = v3_add(dva, v3(l * a[0], l * a[1], l * a[2])), dwa = v3_add(dwa, v3(l * a[3], l * a[4], l * a[5]));
            dvb = v3_add(dvb, v3(l * b[0], l * b[1], l * b[2])), dwb = v3_add(dwb, v3(l * b[3], l * b[4], l * b[5]));
        }
    }
    if (v == js->real_v || v2 == js->real_v) joint_impulse_add(js, p, lam, alpha); /* the joint's force (joint_force.c) */
    if (v2 || v == js->pred_v) {
        if (jt->ia < n) js->vel_version[jt->ia]++;
        if (jt->ib < n) js->vel_version[jt->ib]++;
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

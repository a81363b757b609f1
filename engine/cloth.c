/* cloth.c: cloth and hair, the energy functions of S3's slides "Cloth and fur energy functions"
 * (Kass), written as Baraff and Witkin's condition functions ("Large steps in cloth simulation",
 * 1998) so that the implicit integrator gets their Jacobians (implicit.h: E = k C^2 / 2,
 * f = -(k C + kd Cdot) dC/dx).
 *
 * Cloth is a triangle mesh of particles. Each triangle has rest coordinates (u, v) for its
 * vertices (warp and weft: a grid's own axes, or the triangle flattened in its plane), and the
 * affine map T from (u, v) to the deformed triangle (S3 "Triangle energy"):
 *
 *     [w_u w_v] = [x1 - x0, x2 - x0] [u1 - u0, u2 - u0; v1 - v0, v2 - v0]^-1
 *     so w_u = sum_i au_i x_i, w_v = sum_i av_i x_i with constant au, av (sums 0).
 *
 *   stretch  C_u = |w_u| / b_u - 1, C_v likewise, each with k = k_stretch A  (S3: S_u = |T(u)| - 1,
 *            E = k (S_u^2 + S_v^2) A / 2; b_u the rest |w_u|, 1 for a flat rest shape)
 *            dC_u/dx_i = au_i w^_u / b_u,  d2C_u/dx_i dx_j = au_i au_j (I - w^_u w^_u^T) / (b_u |w_u|)
 *   shear    C = theta - theta_0, theta = acos(w^_u . w^_v), k = k_shear A. The rest angle is pi/2
 *            for a flat rest: the deviation, not the angle, is the energy (GUIDE.md trap 11), and the
 *            vectors are normalized before acos. With c = p^ . q^ (p = w_u, q = w_v):
 *            dc/dp = (q^ - c p^) / |p|, dc/dq = (p^ - c q^) / |q|,
 *            d2c/dp2  = (3c p^p^T - c I - p^q^T - q^p^T) / |p|^2,
 *            d2c/dpdq = (I - p^p^T - q^q^T + c p^q^T) / (|p||q|),
 *            dtheta = -dc / sin(theta), d2theta = -d2c / sin(theta) - c / sin^3(theta) dc dc^T
 *   bend     for every edge shared by triangles (x0, x1, x2) and (x1, x0, x3), the dihedral angle
 *            phi between their normals, C = phi - phi_0 (the rest angle: curved rest shapes keep
 *            their shape), E = k_b A_e kappa^2 / 2 with kappa = C / l_perp (S3 "Triangle bend
 *            energy"): A_e = (A1 + A2) / 3 is the edge's share of area, l_perp = (h1 + h2) / 3 the
 *            distance between the triangles' centroids across the edge (h_i: heights over it).
 *            With e = x1 - x0, a = x2 - x0, b = x3 - x0, the normals n1 = e x a, n2 = b x e give
 *            n1 . n2 = P = (e.a)(e.b) - (e.e)(a.b) and n1 x n2 = -e det(e, a, b), so
 *                phi = atan2(-|e| D, P),    D = det(e, a, b) = e . (a x b)
 *            polynomials and one square root: its gradient and Hessian follow by the chain rule
 *            (dD/de = a x b, dD/da = b x e, dD/db = e x a; the Hessian blocks of D are the skew
 *            matrices of a, b, e; those of P are written out in bend_eval).
 *
 * Hair (S3 "Hair model") is a chain of particles: linear springs for stretch and angular springs
 * for bending, E = sum_i k_i theta_i^2 / 2, theta_i the angle between consecutive segments. The
 * constants scale as S3's discretization slides ask, k_i = K / l_i for a segment of rest length l_i
 * and k_i = B / lbar_i at a joint (lbar: the mean of its two segments), so that the energy of a
 * given shape, and with it the behaviour, does not depend on the number of segments. The angle is
 * computed from u = t^_2 - t^_1 (unit tangents), q = |u|^2 = 4 sin^2(theta/2):
 *
 *     E = k Phi(q) / 2,  Phi(q) = theta^2 = (2 asin(sqrt(q) / 2))^2,
 *     Phi'(q) = theta / sin(theta) (-> 1),  Phi''(q) = (sin(theta) - theta cos(theta)) / (2 sin^3(theta)) (-> 1/6)
 *
 * which stays smooth through the straight rest shape where theta itself is not differentiable.
 * The joint's damping acts on the rate of u: f = -kd J_u^T J_u v. A clamped hair has a hidden
 * anchor particle one segment behind its root, moving with the root, so the root's joint holds the
 * strand's direction (hair stands out of a head instead of hanging from a point); that joint owns
 * half a segment (lbar = l_0 / 2), which makes a clamped cantilever converge at second order to
 * the Euler-Bernoulli deflection w L^4 / (8 B). */
#include <stdlib.h>
#include <string.h>

#include "assemble.h"
#include "cloth.h"
#include "ids.h"
#include "imp_math.h"
#include "parallel.h"
#include "particles.h"
#include "sparse.h"
#include "sparse_simd.h"
#include "world_parts.h"

#define NONE UINT32_MAX

/* ---- the shear angle ------------------------------------------------------------------------------------ */

/* the shear angle theta = acos(c) between the unit warps ph, qh (lengths lp, lq), c clamped and
 * s = sin(theta) kept >= 1e-9, with dtheta = d1 dc, dc/dw_u = Gp = (qh - c ph)/lp, dc/dw_v = Gq =
 * (ph - c qh)/lq, and d2 = d2theta/dc2 */
typedef struct shear_angle {
    double theta, c, s, d1, d2;
    imp_vec3 Gp, Gq;
} shear_angle;

static shear_angle shear_of(imp_vec3 ph, imp_vec3 qh, double lp, double lq)
{
    shear_angle a;
    double c = v3_dot(ph, qh);
    a.c = c = c > 1 ? 1 : c < -1 ? -1 : c;
    double s = sqrt(1 - c * c);
    a.s = s = s < 1e-9 ? 1e-9 : s;
    a.theta = acos(c), a.d1 = -1 / s, a.d2 = -c / (s * s * s);
    a.Gp = v3_scale(v3_mad(qh, ph, -c), 1 / lp), a.Gq = v3_scale(v3_mad(ph, qh, -c), 1 / lq);
    return a;
}

/* k d2theta over (w_u, w_v) = k (d1 d2c + d2 dc dc^T), added to its 3 x 3 blocks Huu, Huv, Hvv */
static void shear_hessian(const shear_angle *a, imp_vec3 ph, imp_vec3 qh, double lp, double lq, double k, double *Huu,
                          double *Huv, double *Hvv)
{
    const double d1 = a->d1, d2 = a->d2, c = a->c;
    b3_add_outer(Huu, ph, ph, k * d1 * 3 * c / (lp * lp)), b3_add_outer(Huu, ph, qh, -k * d1 / (lp * lp));
    b3_add_outer(Huu, qh, ph, -k * d1 / (lp * lp)), b3_add_diag(Huu, -k * d1 * c / (lp * lp));
    b3_add_outer(Huu, a->Gp, a->Gp, k * d2);
    b3_add_outer(Hvv, qh, qh, k * d1 * 3 * c / (lq * lq)), b3_add_outer(Hvv, ph, qh, -k * d1 / (lq * lq));
    b3_add_outer(Hvv, qh, ph, -k * d1 / (lq * lq)), b3_add_diag(Hvv, -k * d1 * c / (lq * lq));
    b3_add_outer(Hvv, a->Gq, a->Gq, k * d2);
    b3_add_diag(Huv, k * d1 / (lp * lq)), b3_add_outer(Huv, ph, ph, -k * d1 / (lp * lq));
    b3_add_outer(Huv, qh, qh, -k * d1 / (lp * lq)), b3_add_outer(Huv, ph, qh, k * d1 * c / (lp * lq));
    b3_add_outer(Huv, a->Gp, a->Gq, k * d2);
}

static double wrap_angle(double a)
{
    while (a > M_PI) a -= 2 * M_PI;
    while (a <= -M_PI) a += 2 * M_PI;
    return a;
}

/* ---- the store ------------------------------------------------------------------------------------------ */

static cloth_store *store(imp_world *w)
{
    if (!w->cloth) {
        w->cloth = calloc(1, sizeof(cloth_store));
        if (!w->cloth) abort();
    }
    return w->cloth;
}

int cloth_object_count(const imp_world *w) { return w->cloth ? w->cloth->ids.count : 0; }

static void obj_free(cobj *o)
{
    free(o->slot), free(o->dense), free(o->tri), free(o->bend), free(o->seg), free(o->joint), free(o->draw), free(o->rest);
    memset(o, 0, sizeof *o);
}

void cloth_free(imp_world *w)
{
    cloth_store *cs = w->cloth;
    if (!cs) return;
    for (int i = 0; i < cs->ids.count; i++) obj_free(&cs->obj[i]);
    ids_free(&cs->ids);
    free(cs->obj);
    free(cs);
    w->cloth = NULL;
}

static void refresh_dense(const imp_world *w, cobj *o)
{
    for (int k = 0; k < o->nv; k++) o->dense[k] = o->slot[k] == NONE ? -1 : particles_slot_dense(w, o->slot[k]);
}

static void rebuild_draw(cobj *o)
{
    for (int t = 0; t < o->ntri; t++) memcpy(o->draw + 3 * t, o->tri[t].v, 3 * sizeof(int));
}

/* ---- triangle stretch and shear ------------------------------------------------------------------------ */

static void tri_eval(asm_ctx *a, const cobj *o, const ctri *t)
{
    const int idx[3] = {o->dense[t->v[0]], o->dense[t->v[1]], o->dense[t->v[2]]};
    imp_vec3 x[3], p = v3(0, 0, 0), q = v3(0, 0, 0);
    for (int i = 0; i < 3; i++) {
        x[i] = v3_load(a->x + 3 * idx[i]);
        p = v3_mad(p, x[i], t->au[i]);
        q = v3_mad(q, x[i], t->av[i]);
    }
    const double lp = v3_len(p), lq = v3_len(q);
    if (lp < 1e-12 || lq < 1e-12) return; /* collapsed triangle: no direction to push along */
    const imp_vec3 ph = v3_scale(p, 1 / lp), qh = v3_scale(q, 1 / lq);
    double g[9], H[81];

    /* stretch along u and along v: C = |w| / b - 1 */
    const double ks = o->stretch * t->area, kds = o->damping * ks;
    for (int dir = 0; dir < 2 && ks > 0; dir++) {
        const double *al = dir ? t->av : t->au, b = dir ? t->bv : t->bu, len = dir ? lq : lp;
        const imp_vec3 h = dir ? qh : ph;
        double C = len / b - 1;
        for (int i = 0; i < 3; i++) v3_store(g + 3 * i, v3_scale(h, al[i] / b));
        bool wantH = asm_wants_hessian(a, C, true);
        if (wantH) {
            double P[9] = {0};
            b3_add_diag(P, 1 / (b * len));
            b3_add_outer(P, h, h, -1 / (b * len));
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++) H[(3 * i + r) * 9 + 3 * j + c] = al[i] * al[j] * P[3 * r + c];
        }
        asm_condition(a, 3, idx, t->block, C, g, wantH ? H : NULL, true, ks, kds);
    }

    /* shear: the deviation of the angle between w_u and w_v from its rest value */
    const double ksh = o->shear * t->area;
    if (ksh > 0) {
        const shear_angle sa = shear_of(ph, qh, lp, lq);
        const double C = sa.theta - t->theta0;
        for (int i = 0; i < 3; i++) v3_store(g + 3 * i, v3_scale(v3_add(v3_scale(sa.Gp, t->au[i]), v3_scale(sa.Gq, t->av[i])), sa.d1));
        bool wantH = asm_wants_hessian(a, C, false);
        if (wantH) {
            double Hpp[9] = {0}, Hpq[9] = {0}, Hqq[9] = {0}, Hqp[9];
            shear_hessian(&sa, ph, qh, lp, lq, 1, Hpp, Hpq, Hqq);
            b3_transpose(Hpq, Hqp);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    const double uu = t->au[i] * t->au[j], uv = t->au[i] * t->av[j], vu = t->av[i] * t->au[j],
                                 vv = t->av[i] * t->av[j];
                    for (int r = 0; r < 3; r++)
                        for (int cc = 0; cc < 3; cc++) {
                            int e = 3 * r + cc;
                            H[(3 * i + r) * 9 + 3 * j + cc] = uu * Hpp[e] + uv * Hpq[e] + vu * Hqp[e] + vv * Hqq[e];
                        }
                }
        }
        asm_condition(a, 3, idx, t->block, C, g, wantH ? H : NULL, false, ksh, o->damping * ksh);
    }
}

#if SPARSE_HAVE_AVX
/* A's nine blocks of a triangle += B (9 blocks of 9, row-major by (i, j)), four entries at a time */
static SPARSE_AVX void tri_scatter_avx(double *A, const int *block, const double *B)
{
    for (int ij = 0; ij < 9; ij++) {
        double *dst = A + 9 * (size_t)block[ij];
        const double *src = B + 9 * ij;
        _mm256_storeu_pd(dst, _mm256_add_pd(_mm256_loadu_pd(dst), _mm256_loadu_pd(src)));
        _mm256_storeu_pd(dst + 4, _mm256_add_pd(_mm256_loadu_pd(dst + 4), _mm256_loadu_pd(src + 4)));
        dst[8] += src[8];
    }
}
#endif

/* m += s u u^T on the upper triangle of a symmetric block (entries 0 1 2 4 5 8; sym_mirror fills the
 * rest), each entry (s u_r) u_c as b3_add_outer forms it */
static inline __attribute__((always_inline)) void sym_add_outer(double *m, imp_vec3 u, double s)
{
    const double a0 = s * u.x, a1 = s * u.y, a2 = s * u.z;
    m[0] += a0 * u.x, m[1] += a0 * u.y, m[2] += a0 * u.z;
    m[4] += a1 * u.y, m[5] += a1 * u.z, m[8] += a2 * u.z;
}

static inline __attribute__((always_inline)) void sym_mirror(double *m) { m[3] = m[1], m[6] = m[2], m[7] = m[5]; }

/* The same three terms for the system matrix, fused. Every gradient of a triangle term has the form
 * dC/dx_i = au_i U + av_i V (stretch u: U = w^_u / b_u, V = 0; stretch v: U = 0, V = w^_v / b_v;
 * shear: U = dtheta/dw_u, V = dtheta/dw_v), and so has every Hessian block:
 *     block (i, j) = au_i au_j M_UU + au_i av_j M_UV + av_i au_j M_VU + av_i av_j M_VV
 * with M_VU = M_UV^T. A term of stiffness k and damping kd adds h kd g g^T + h^2 k (g g^T + C H) to A
 * (A = M - h D - h^2 K, D = -kd g g^T, K = -k (g g^T + C H)), so its Gauss-Newton part goes into M_UU,
 * M_UV, M_VV once with the coefficient h kd + h^2 k, and a stretched stretch term's k C H, H =
 * (I - w^ w^T) / (b |w|), with h^2. The M_UU and M_VV of a Gauss-Newton or stretch term are symmetric,
 * so only their upper triangles are formed; then block (j, i) = block (i, j)^T, and since au_0 =
 * -(au_1 + au_2) (likewise av) the blocks of vertex 0 are sums of the others: blocks (1, 1), (1, 2)
 * and (2, 2) are formed, the other six follow. The right side's h^2 K v needs no matrix: the
 * Gauss-Newton part of K v is -k g (g . v) = -k g Cdot per term, and
 *     (K v)_i = -(au_i KU + av_i KV),  KU = sum k U Cdot + sum k C H_U w_u',  KV likewise,
 * Cdot = U . w_u' + V . w_v' (w' = dw/dt). In "full" mode the shear's k C d2theta joins (not
 * symmetric in its rounding: all of its entries formed). */
static inline __attribute__((always_inline)) void tri_matrix_body(asm_ctx *a, const cobj *o, const ctri *t, bool avx)
{
    const int idx[3] = {o->dense[t->v[0]], o->dense[t->v[1]], o->dense[t->v[2]]};
    imp_vec3 p = v3(0, 0, 0), q = v3(0, 0, 0), wu_dot = v3(0, 0, 0), wv_dot = v3(0, 0, 0);
    for (int i = 0; i < 3; i++) {
        imp_vec3 x = v3_load(a->x + 3 * idx[i]), v = v3_load(a->v + 3 * idx[i]);
        p = v3_mad(p, x, t->au[i]), q = v3_mad(q, x, t->av[i]);
        wu_dot = v3_mad(wu_dot, v, t->au[i]), wv_dot = v3_mad(wv_dot, v, t->av[i]);
    }
    const double lp = v3_len(p), lq = v3_len(q);
    if (lp < 1e-12 || lq < 1e-12) return;
    const imp_vec3 ph = v3_scale(p, 1 / lp), qh = v3_scale(q, 1 / lq);
    const double h = a->h, h2 = a->h2;
    /* M_UU, M_UV, M_VV of A's blocks; FU, FV of the forces; KU, KV of K v */
    double M[3][9] = {{0}};
    imp_vec3 FU = v3(0, 0, 0), FV = v3(0, 0, 0), KU = v3(0, 0, 0), KV = v3(0, 0, 0);
    const double ks = o->stretch * t->area, kds = o->damping * ks;
    if (ks > 0) {
        const double gn = h * kds + h2 * ks;
        for (int dir = 0; dir < 2; dir++) {
            const double b = dir ? t->bv : t->bu, len = dir ? lq : lp;
            const imp_vec3 hh = dir ? qh : ph, G = v3_scale(hh, 1 / b), rate = dir ? wv_dot : wu_dot;
            const double C = len / b - 1, Cdot = v3_dot(G, rate), s = ks * C + kds * Cdot;
            double *Mk = M[dir ? 2 : 0];
            imp_vec3 Kk = v3_scale(G, ks * Cdot);
            sym_add_outer(Mk, G, gn);
            if (C > 0 || a->full) { /* k C (I - h h^T) / (b |w|): positive semidefinite when stretched */
                const double c = ks * C / (b * len);
                Mk[0] += h2 * c, Mk[4] += h2 * c, Mk[8] += h2 * c;
                sym_add_outer(Mk, hh, -h2 * c);
                Kk = v3_add(Kk, v3_scale(v3_mad(rate, hh, -v3_dot(hh, rate)), c));
            }
            if (dir) FV = v3_mad(FV, G, -s), KV = v3_add(KV, Kk);
            else FU = v3_mad(FU, G, -s), KU = v3_add(KU, Kk);
        }
    }
    const double ksh = o->shear * t->area, kdsh = o->damping * ksh;
    double Hf[3][9]; /* "full": the shear's k C d2theta */
    if (a->full) memset(Hf, 0, sizeof Hf);
    if (ksh > 0) {
        const shear_angle sa = shear_of(ph, qh, lp, lq);
        const double C = sa.theta - t->theta0, c = sa.c, d1 = sa.d1, gn = h * kdsh + h2 * ksh;
        imp_vec3 U = v3_scale(v3_mad(qh, ph, -c), d1 / lp), V = v3_scale(v3_mad(ph, qh, -c), d1 / lq);
        const double Cdot = v3_dot(U, wu_dot) + v3_dot(V, wv_dot), sf = ksh * C + kdsh * Cdot;
        FU = v3_mad(FU, U, -sf), FV = v3_mad(FV, V, -sf);
        KU = v3_mad(KU, U, ksh * Cdot), KV = v3_mad(KV, V, ksh * Cdot);
        sym_add_outer(M[0], U, gn), b3_add_outer(M[1], U, V, gn), sym_add_outer(M[2], V, gn);
        if (a->full) {
            shear_hessian(&sa, ph, qh, lp, lq, ksh * C, Hf[0], Hf[1], Hf[2]);
            KU = v3_add(KU, v3_add(b3_mul_v(Hf[0], wu_dot), b3_mul_v(Hf[1], wv_dot)));
            KV = v3_add(KV, v3_add(b3_mul_tv(Hf[1], wu_dot), b3_mul_v(Hf[2], wv_dot)));
        }
    }
    sym_mirror(M[0]), sym_mirror(M[2]);
    if (a->full)
        for (int k = 0; k < 3; k++)
            for (int e = 0; e < 9; e++) M[k][e] += h2 * Hf[k][e];
    /* forces; b += h^2 K v = -h^2 (au_i KU + av_i KV) */
    for (int i = 0; i < 3; i++) {
        v3_accum(a->f + 3 * idx[i], v3_add(v3_scale(FU, t->au[i]), v3_scale(FV, t->av[i])));
        v3_accum(a->bK + 3 * idx[i], v3_scale(v3_add(v3_scale(KU, t->au[i]), v3_scale(KV, t->av[i])), -h2));
    }
    /* blocks (1, 1), (1, 2), (2, 2); then (2, 1) and those of vertex 0 */
    double B[3][3][9];
    for (int i = 1; i < 3; i++)
        for (int j = i; j < 3; j++) {
            const double uu = t->au[i] * t->au[j], uv = t->au[i] * t->av[j], vu = t->av[i] * t->au[j],
                         vv = t->av[i] * t->av[j];
            for (int r = 0; r < 3; r++)
                for (int cc = 0; cc < 3; cc++)
                    B[i][j][3 * r + cc] = uu * M[0][3 * r + cc] + uv * M[1][3 * r + cc] + vu * M[1][3 * cc + r] +
                                          vv * M[2][3 * r + cc];
        }
    b3_transpose(B[1][2], B[2][1]);
    for (int e = 0; e < 9; e++) {
        B[0][1][e] = -(B[1][1][e] + B[2][1][e]);
        B[0][2][e] = -(B[1][2][e] + B[2][2][e]);
    }
    b3_transpose(B[0][1], B[1][0]);
    b3_transpose(B[0][2], B[2][0]);
    for (int e = 0; e < 9; e++) B[0][0][e] = -(B[1][0][e] + B[2][0][e]);
#if SPARSE_HAVE_AVX
    if (avx) {
        tri_scatter_avx(a->A, t->block, &B[0][0][0]);
        return;
    }
#else
    (void)avx;
#endif
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double *dst = a->A + 9 * (size_t)t->block[3 * i + j];
            for (int e = 0; e < 9; e++) dst[e] += B[i][j][e];
        }
}

/* tri_matrix_body for the triangles [lo, hi): compiled twice, for AVX (where the compiler's vector
 * code does each entry's operations in the scalar code's order: no fused multiply-add, no
 * reassociation) and for the scalar path */
#if SPARSE_HAVE_AVX
static SPARSE_AVX void tri_eval_matrix_avx(asm_ctx *a, const cobj *o, int lo, int hi)
{
    for (int t = lo; t < hi; t++) tri_matrix_body(a, o, &o->tri[t], true);
}
#endif

static void tri_eval_matrix(asm_ctx *a, const cobj *o, int lo, int hi)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        tri_eval_matrix_avx(a, o, lo, hi);
        return;
    }
#endif
    for (int t = lo; t < hi; t++) tri_matrix_body(a, o, &o->tri[t], false);
}

static double tri_energy(const imp_world *w, const cobj *o, const ctri *t)
{
    imp_vec3 p = v3(0, 0, 0), q = v3(0, 0, 0);
    for (int i = 0; i < 3; i++) {
        imp_vec3 x = v3_load(w->particles->x + 3 * particles_slot_dense(w, o->slot[t->v[i]]));
        p = v3_mad(p, x, t->au[i]);
        q = v3_mad(q, x, t->av[i]);
    }
    double lp = v3_len(p), lq = v3_len(q), su = lp / t->bu - 1, sv = lq / t->bv - 1, e = 0;
    e += 0.5 * o->stretch * t->area * (su * su + sv * sv);
    if (lp > 1e-12 && lq > 1e-12) {
        double c = v3_dot(p, q) / (lp * lq), th = acos(c > 1 ? 1 : c < -1 ? -1 : c) - t->theta0;
        e += 0.5 * o->shear * t->area * th * th;
    }
    return e;
}

/* ---- bend across an edge -------------------------------------------------------------------------------- */

/* the dihedral angle phi = atan2(-|e| D, P) (see the top of the file); gz its gradient over
 * z = (e, a, b); returns false for a degenerate hinge */
static inline __attribute__((always_inline)) bool dihedral(imp_vec3 e, imp_vec3 a, imp_vec3 b, double *phi, double *gz,
                                                           double *Hz)
{
    const double r = v3_len(e);
    if (r < 1e-12) return false;
    const imp_vec3 axb = v3_cross(a, b), bxe = v3_cross(b, e), exa = v3_cross(e, a);
    const double D = v3_dot(e, axb), ea = v3_dot(e, a), eb = v3_dot(e, b), ee = v3_dot(e, e), ab = v3_dot(a, b);
    const double P = ea * eb - ee * ab, Y = -r * D, rho = P * P + Y * Y;
    if (!(rho > 1e-300)) return false;
    *phi = atan2(Y, P);
    const imp_vec3 er = v3_scale(e, 1 / r);
    /* dY = -D dr - r dD,  dP */
    imp_vec3 gY[3] = {v3_sub(v3_scale(er, -D), v3_scale(axb, r)), v3_scale(bxe, -r), v3_scale(exa, -r)};
    imp_vec3 gP[3] = {v3_sub(v3_add(v3_scale(a, eb), v3_scale(b, ea)), v3_scale(e, 2 * ab)),
                      v3_sub(v3_scale(e, eb), v3_scale(b, ee)), v3_sub(v3_scale(e, ea), v3_scale(a, ee))};
    const double tY = P / rho, tP = -Y / rho;
    for (int k = 0; k < 3; k++) v3_store(gz + 3 * k, v3_add(v3_scale(gY[k], tY), v3_scale(gP[k], tP)));
    if (!Hz) return true;

    /* Hessian over z, block by block (kk' in {e, a, b}), 9 x 9 row-major */
    double HY[3][3][9], HP[3][3][9];
    memset(HY, 0, sizeof HY);
    memset(HP, 0, sizeof HP);
    /* H_Y = -(dr dD^T + dD dr^T) - D H_r - r H_D; dr = (e^, 0, 0), H_r = (I - e^e^T) / r on (e, e) */
    imp_vec3 gD[3] = {axb, bxe, exa};
    for (int k = 0; k < 3; k++) {
        b3_add_outer(HY[0][k], er, gD[k], -1);
        b3_add_outer(HY[k][0], gD[k], er, -1);
    }
    b3_add_diag(HY[0][0], -D / r);
    b3_add_outer(HY[0][0], er, er, D / r);
    /* H_D: (e,a) = -[b]x, (e,b) = [a]x, (a,e) = [b]x, (a,b) = -[e]x, (b,e) = -[a]x, (b,a) = [e]x */
    b3_add_skew(HY[0][1], b, r);
    b3_add_skew(HY[0][2], a, -r);
    b3_add_skew(HY[1][0], b, -r);
    b3_add_skew(HY[1][2], e, r);
    b3_add_skew(HY[2][0], a, r);
    b3_add_skew(HY[2][1], e, -r);
    /* H_P: (e,e) = a b^T + b a^T - 2 (a.b) I; (e,a) = (e.b) I + b e^T - 2 e b^T;
     *      (e,b) = (e.a) I + a e^T - 2 e a^T; (a,b) = e e^T - (e.e) I; (a,a) = (b,b) = 0 */
    b3_add_outer(HP[0][0], a, b, 1), b3_add_outer(HP[0][0], b, a, 1), b3_add_diag(HP[0][0], -2 * ab);
    b3_add_diag(HP[0][1], eb), b3_add_outer(HP[0][1], b, e, 1), b3_add_outer(HP[0][1], e, b, -2);
    b3_add_diag(HP[0][2], ea), b3_add_outer(HP[0][2], a, e, 1), b3_add_outer(HP[0][2], e, a, -2);
    b3_add_outer(HP[1][2], e, e, 1), b3_add_diag(HP[1][2], -ee);
    b3_transpose(HP[0][1], HP[1][0]);
    b3_transpose(HP[0][2], HP[2][0]);
    b3_transpose(HP[1][2], HP[2][1]);
    /* phi = atan2(Y, P): d2phi = tY H_Y + tP H_P + tYY dY dY^T + tPP dP dP^T + tYP (dY dP^T + dP dY^T) */
    const double r2 = rho * rho, tYY = -2 * P * Y / r2, tPP = 2 * P * Y / r2, tYP = (Y * Y - P * P) / r2;
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) {
            double B[9];
            for (int e2 = 0; e2 < 9; e2++) B[e2] = tY * HY[k][l][e2] + tP * HP[k][l][e2];
            b3_add_outer(B, gY[k], gY[l], tYY);
            b3_add_outer(B, gP[k], gP[l], tPP);
            b3_add_outer(B, gY[k], gP[l], tYP);
            b3_add_outer(B, gP[k], gY[l], tYP);
            for (int rr = 0; rr < 3; rr++)
                for (int c = 0; c < 3; c++) Hz[(3 * k + rr) * 9 + 3 * l + c] = B[3 * rr + c];
        }
    return true;
}

/* The bend term into the system matrix without its Hessian (the default definite mode, where an angle
 * condition keeps only the Gauss-Newton part): asm_condition's operations for m = 4 and H = NULL in its
 * order, with alpha g_i formed once per vertex instead of once per block ((alpha g_i[r]) g_j[c] is
 * b3_add_outer's product) and the 16 blocks added as vector code where AVX is there (sparse_simd.h):
 * the same bits as asm_condition, but for the sign of a zero in the right side (asm_condition adds its
 * Hessian term, here 0, which turns a -0 into +0). */
#if SPARSE_HAVE_AVX
static SPARSE_AVX void bend_blocks_avx(double *A, const int *block, const double *sg, const double *g)
{
    /* a block's entries 0..3 are (s0 g0, s0 g1, s0 g2, s1 g0), 4..7 (s1 g1, s1 g2, s2 g0, s2 g1), 8 s2 g2 */
    __m256d sa[4], sb[4], ga[4], gb[4];
    for (int i = 0; i < 4; i++) {
        const double *s = sg + 3 * i, *q = g + 3 * i;
        sa[i] = _mm256_set_pd(s[1], s[0], s[0], s[0]), sb[i] = _mm256_set_pd(s[2], s[2], s[1], s[1]);
        ga[i] = _mm256_set_pd(q[0], q[2], q[1], q[0]), gb[i] = _mm256_set_pd(q[1], q[0], q[2], q[1]);
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double *B = A + 9 * (size_t)block[4 * i + j];
            _mm256_storeu_pd(B, _mm256_add_pd(_mm256_loadu_pd(B), _mm256_mul_pd(sa[i], ga[j])));
            _mm256_storeu_pd(B + 4, _mm256_add_pd(_mm256_loadu_pd(B + 4), _mm256_mul_pd(sb[i], gb[j])));
            B[8] += sg[3 * i + 2] * g[3 * j + 2];
        }
}
#endif

static inline __attribute__((always_inline)) void bend_condition(asm_ctx *a, const int *idx, const int *block, double C,
                                                                  const double *g, double k, double kd, bool avx)
{
    double Cdot = 0;
    for (int i = 0; i < 4; i++) {
        const double *vi = a->v + 3 * idx[i];
        Cdot += g[3 * i] * vi[0] + g[3 * i + 1] * vi[1] + g[3 * i + 2] * vi[2];
    }
    const double s = -(k * C + kd * Cdot);
    for (int i = 0; i < 4; i++) {
        double *fi = a->f + 3 * idx[i];
        fi[0] += s * g[3 * i], fi[1] += s * g[3 * i + 1], fi[2] += s * g[3 * i + 2];
    }
    /* A -= h D + h^2 K with D = -kd g g^T, K = -k g g^T */
    const double alpha = a->h * kd + a->h2 * k;
    double sg[12];
    for (int e = 0; e < 12; e++) sg[e] = alpha * g[e];
#if SPARSE_HAVE_AVX
    if (avx) bend_blocks_avx(a->A, block, sg, g);
    else
#else
    (void)avx;
#endif
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double *B = a->A + 9 * (size_t)block[4 * i + j];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) B[3 * r + c] += sg[3 * i + r] * g[3 * j + c];
            }
    /* h^2 K v0 = -h^2 k g Cdot */
    const double c1 = -a->h2 * k * Cdot;
    for (int i = 0; i < 4; i++) {
        double *bi = a->bK + 3 * idx[i];
        for (int r = 0; r < 3; r++) bi[r] += c1 * g[3 * i + r];
    }
}

static inline __attribute__((always_inline)) void bend_body(asm_ctx *a, const cobj *o, const cbend *bd, bool avx)
{
    const int idx[4] = {o->dense[bd->v[0]], o->dense[bd->v[1]], o->dense[bd->v[2]], o->dense[bd->v[3]]};
    imp_vec3 x0 = v3_load(a->x + 3 * idx[0]);
    imp_vec3 e = v3_sub(v3_load(a->x + 3 * idx[1]), x0), ea = v3_sub(v3_load(a->x + 3 * idx[2]), x0),
             eb = v3_sub(v3_load(a->x + 3 * idx[3]), x0);
    double phi, gz[9], Hz[81], g[12], H[144];
    const double k = o->bendk * bd->coef;
    /* the Hessian only when it is wanted (C is known only after the angle; asking with C = 0 is
     * enough: an angle condition wants it in full or check mode, whatever C is) */
    bool wantH = asm_wants_hessian(a, 0, false);
    if (!dihedral(e, ea, eb, &phi, gz, wantH ? Hz : NULL)) return;
    const double C = wrap_angle(phi - bd->phi0);
    /* z = (x1 - x0, x2 - x0, x3 - x0): x_k (k = 1..3) takes block k - 1, x0 minus their sum */
    for (int c = 0; c < 3; c++) {
        g[3 + c] = gz[c], g[6 + c] = gz[3 + c], g[9 + c] = gz[6 + c];
        g[c] = -(gz[c] + gz[3 + c] + gz[6 + c]);
    }
    if (wantH) {
        static const double coef[4][3] = {{-1, -1, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) {
                        double s = 0;
                        for (int kk = 0; kk < 3; kk++)
                            for (int ll = 0; ll < 3; ll++)
                                if (coef[i][kk] != 0 && coef[j][ll] != 0)
                                    s += coef[i][kk] * coef[j][ll] * Hz[(3 * kk + r) * 9 + 3 * ll + c];
                        H[(3 * i + r) * 12 + 3 * j + c] = s;
                    }
    }
    if (a->A && !a->Kd && !wantH) bend_condition(a, idx, bd->block, C, g, k, o->damping * k, avx);
    else asm_condition(a, 4, idx, bd->block, C, g, wantH ? H : NULL, false, k, o->damping * k);
}

/* bend_body for the edges [lo, hi), compiled twice as tri_eval_matrix is */
#if SPARSE_HAVE_AVX
static SPARSE_AVX void bend_eval_avx(asm_ctx *a, const cobj *o, int lo, int hi)
{
    for (int e = lo; e < hi; e++) bend_body(a, o, &o->bend[e], true);
}
#endif

static void bend_eval(asm_ctx *a, const cobj *o, int lo, int hi)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        bend_eval_avx(a, o, lo, hi);
        return;
    }
#endif
    for (int e = lo; e < hi; e++) bend_body(a, o, &o->bend[e], false);
}

static double bend_energy(const imp_world *w, const cobj *o, const cbend *bd)
{
    imp_vec3 x[4];
    for (int i = 0; i < 4; i++) x[i] = v3_load(w->particles->x + 3 * particles_slot_dense(w, o->slot[bd->v[i]]));
    double phi, gz[9];
    if (!dihedral(v3_sub(x[1], x[0]), v3_sub(x[2], x[0]), v3_sub(x[3], x[0]), &phi, gz, NULL)) return 0;
    double C = wrap_angle(phi - bd->phi0);
    return 0.5 * o->bendk * bd->coef * C * C;
}

/* ---- hair: segments and joints ---------------------------------------------------------------------------- */

static void seg_eval(asm_ctx *a, const cobj *o, const cseg *s)
{
    const int idx[2] = {o->dense[s->v[0]], o->dense[s->v[1]]};
    const double *xa = a->x + 3 * idx[0], *xb = a->x + 3 * idx[1];
    if (v3_len(v3_sub(v3_load(xa), v3_load(xb))) < 1e-12) return;
    double C, g[6], H[36];
    bool hasH = asm_length_condition(xa, xb, s->rest, 2, &C, g, H, a);
    const double k = o->stretch / s->rest;
    asm_condition(a, 2, idx, s->block, C, g, hasH ? H : NULL, true, k, o->damping * k);
}

/* R(w) = d(P w)/da for fixed w, P = (I - a^a^T) / |a|:  -[(a^.w) P + a^ (P w)^T + (P w) a^^T] / |a| */
static void proj_deriv(const double *P, imp_vec3 ah, double la, imp_vec3 wv, double *R)
{
    imp_vec3 Pw = b3_mul_v(P, wv);
    double aw = v3_dot(ah, wv);
    for (int e = 0; e < 9; e++) R[e] = -aw * P[e] / la;
    b3_add_outer(R, ah, Pw, -1 / la);
    b3_add_outer(R, Pw, ah, -1 / la);
}

/* z-space (a, b) 6x6 blocks -> x-space (x0, x1, x2) 9x9, a = x1 - x0, b = x2 - x1 */
static void joint_to_x(double Z[2][2][9], double *X)
{
    static const double c[3][2] = {{-1, 0}, {1, -1}, {0, 1}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int e = 0; e < 9; e++) {
                double s = 0;
                for (int p = 0; p < 2; p++)
                    for (int q = 0; q < 2; q++) s += c[i][p] * c[j][q] * Z[p][q][e];
                X[(3 * i + e / 3) * 9 + 3 * j + e % 3] = s;
            }
}

/* Phi'(q) and Phi''(q) of Phi = theta^2 (series below theta = 1e-3: 1 + theta^2/6, 1/6 + theta^2/15) */
static void joint_phi(double q, double *theta, double *d1, double *d2)
{
    double sh = sqrt(q) / 2;
    double th = 2 * asin(sh > 1 ? 1 : sh), s = sin(th), c = cos(th);
    *theta = th;
    if (th < 1e-3) {
        *d1 = 1 + th * th / 6;
        *d2 = 1.0 / 6 + th * th / 15;
    } else {
        if (s < 1e-9) s = 1e-9; /* folded back on itself */
        *d1 = th / s;
        *d2 = (s - th * c) / (2 * s * s * s);
    }
}

static void joint_eval(asm_ctx *a, const cobj *o, const cjoint *jt)
{
    const int idx[3] = {o->dense[jt->v[0]], o->dense[jt->v[1]], o->dense[jt->v[2]]};
    imp_vec3 x0 = v3_load(a->x + 3 * idx[0]), x1 = v3_load(a->x + 3 * idx[1]), x2 = v3_load(a->x + 3 * idx[2]);
    imp_vec3 av = v3_sub(x1, x0), bv = v3_sub(x2, x1);
    double la = v3_len(av), lb = v3_len(bv);
    if (la < 1e-12 || lb < 1e-12) return;
    imp_vec3 ah = v3_scale(av, 1 / la), bh = v3_scale(bv, 1 / lb), u = v3_sub(bh, ah);
    double Pa[9] = {0}, Pb[9] = {0};
    b3_add_diag(Pa, 1 / la), b3_add_outer(Pa, ah, ah, -1 / la);
    b3_add_diag(Pb, 1 / lb), b3_add_outer(Pb, bh, bh, -1 / lb);
    double theta, d1, d2;
    joint_phi(v3_dot(u, u), &theta, &d1, &d2);
    const double k = o->bendk / jt->lbar, kd = o->damping * k;
    imp_vec3 v0 = v3_load(a->v + 3 * idx[0]), v1 = v3_load(a->v + 3 * idx[1]), v2 = v3_load(a->v + 3 * idx[2]);
    imp_vec3 ad = v3_sub(v1, v0), bd = v3_sub(v2, v1);
    imp_vec3 Pau = b3_mul_v(Pa, u), Pbu = b3_mul_v(Pb, u);
    imp_vec3 ud = v3_sub(b3_mul_v(Pb, bd), b3_mul_v(Pa, ad)); /* du/dt = J_u v */

    /* forces on a and b (z-space), elastic -dE/dz and damping -kd J^T du/dt; then on x0 x1 x2 */
    imp_vec3 Fa = v3_add(v3_scale(Pau, k * d1), b3_mul_v(Pa, v3_scale(ud, kd)));
    imp_vec3 Fb = v3_sub(v3_scale(Pbu, -k * d1), b3_mul_v(Pb, v3_scale(ud, kd)));
    double fl[9];
    v3_store(fl, v3_scale(Fa, -1));
    v3_store(fl + 3, v3_sub(Fa, Fb));
    v3_store(fl + 6, Fb);

    /* J^T J over (a, b) */
    double JJ[2][2][9];
    b3_mul(Pa, Pa, JJ[0][0]);
    b3_mul(Pa, Pb, JJ[0][1]);
    b3_mul(Pb, Pa, JJ[1][0]);
    b3_mul(Pb, Pb, JJ[1][1]);
    for (int e = 0; e < 9; e++) JJ[0][1][e] = -JJ[0][1][e], JJ[1][0][e] = -JJ[1][0][e];
    imp_vec3 gz[2] = {v3_scale(Pau, -1), Pbu}; /* J^T u */

    /* stiffness the system matrix uses: -k (2 Phi'' gz gz^T + Phi' J^T J) [+ full: -k Phi' sum u_k d2u_k] */
    double Ks_z[2][2][9], D_z[2][2][9], Ks[81], Dl[81], Kx[81];
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++) {
            for (int e = 0; e < 9; e++) {
                Ks_z[p][q][e] = -k * d1 * JJ[p][q][e];
                D_z[p][q][e] = -kd * JJ[p][q][e];
            }
            b3_add_outer(Ks_z[p][q], gz[p], gz[q], -2 * k * d2);
        }
    double Ra_u[9], Rb_u[9];
    bool exact = a->Kd != NULL;
    if (a->full || exact) {
        /* sum_k u_k d2u_k = blockdiag(-R_a(u), R_b(u)) for u = b^ - a^ */
        proj_deriv(Pa, ah, la, u, Ra_u);
        proj_deriv(Pb, bh, lb, u, Rb_u);
    }
    double Kfull_z[2][2][9];
    memcpy(Kfull_z, Ks_z, sizeof Kfull_z);
    if (a->full || exact)
        for (int e = 0; e < 9; e++) {
            Kfull_z[0][0][e] += k * d1 * Ra_u[e];
            Kfull_z[1][1][e] -= k * d1 * Rb_u[e];
        }
    joint_to_x(a->full ? Kfull_z : Ks_z, Ks);
    joint_to_x(D_z, Dl);
    if (exact) {
        /* the damping force's x-derivative (check only): with R(w) = d(P w)/da,
         * dFa/da = kd [R_a(ud) - P_a R_a(ad)], dFa/db = kd P_a R_b(bd),
         * dFb/da = kd P_b R_a(ad),            dFb/db = -kd [R_b(ud) + P_b R_b(bd)] */
        double Ra_ud[9], Rb_ud[9], Ra_ad[9], Rb_bd[9], tmp[9];
        proj_deriv(Pa, ah, la, ud, Ra_ud);
        proj_deriv(Pb, bh, lb, ud, Rb_ud);
        proj_deriv(Pa, ah, la, ad, Ra_ad);
        proj_deriv(Pb, bh, lb, bd, Rb_bd);
        b3_mul(Pa, Ra_ad, tmp);
        for (int e = 0; e < 9; e++) Kfull_z[0][0][e] += kd * (Ra_ud[e] - tmp[e]);
        b3_mul(Pa, Rb_bd, tmp);
        for (int e = 0; e < 9; e++) Kfull_z[0][1][e] += kd * tmp[e];
        b3_mul(Pb, Ra_ad, tmp);
        for (int e = 0; e < 9; e++) Kfull_z[1][0][e] += kd * tmp[e];
        b3_mul(Pb, Rb_bd, tmp);
        for (int e = 0; e < 9; e++) Kfull_z[1][1][e] -= kd * (Rb_ud[e] + tmp[e]);
        joint_to_x(Kfull_z, Kx);
    }
    asm_local(a, 3, idx, jt->block, fl, Ks, exact ? Kx : Ks, Dl);
}

static double joint_energy(const imp_world *w, const cobj *o, const cjoint *jt)
{
    imp_vec3 x[3];
    for (int i = 0; i < 3; i++) x[i] = v3_load(w->particles->x + 3 * particles_slot_dense(w, o->slot[jt->v[i]]));
    imp_vec3 u = v3_sub(v3_normalize(v3_sub(x[2], x[1])), v3_normalize(v3_sub(x[1], x[0])));
    double th, d1, d2;
    joint_phi(v3_dot(u, u), &th, &d1, &d2);
    return 0.5 * o->bendk / jt->lbar * th * th;
}

/* ---- hooks for the integrators ---------------------------------------------------------------------------- */

/* the element range [*lo, *hi) of group g (-1: all) in an array of count elements grouped by gb */
static void group_range(const int *gb, int count, int g, int *lo, int *hi)
{
    *lo = g <= 0 ? 0 : gb[g - 1];
    *hi = g < 0 ? count : gb[g];
}

void cloth_assemble(imp_world *w, asm_ctx *a, int group)
{
    cloth_store *cs = w->cloth;
    if (!cs) return;
    for (int k = 0; k < cs->ids.count; k++) {
        cobj *o = &cs->obj[k];
        if (group < 0) refresh_dense(w, o); /* else cloth_bind_blocks did, and the groups run in parallel */
        int lo, hi;
        group_range(o->tri_g, o->ntri, group, &lo, &hi);
        if (a->A && !a->Kd && !a->generic)
            tri_eval_matrix(a, o, lo, hi);
        else
            for (int t = lo; t < hi; t++) tri_eval(a, o, &o->tri[t]);
        group_range(o->bend_g, o->nbend, group, &lo, &hi);
        if (o->bendk > 0) bend_eval(a, o, lo, hi);
        group_range(o->seg_g, o->nseg, group, &lo, &hi);
        for (int s = lo; s < hi; s++) seg_eval(a, o, &o->seg[s]);
        group_range(o->joint_g, o->njoint, group, &lo, &hi);
        if (o->bendk > 0)
            for (int j = lo; j < hi; j++) joint_eval(a, o, &o->joint[j]);
    }
}

void cloth_forces(imp_world *w, const double *x, const double *v, double *f)
{
    asm_ctx a = {.x = x, .v = v, .f = f};
    cloth_assemble(w, &a, -1);
}

double cloth_energy(const imp_world *w)
{
    const cloth_store *cs = w->cloth;
    double e = 0;
    for (int k = 0; cs && k < cs->ids.count; k++) e += imp_cloth_energy(w, ids_of(&cs->ids, k));
    return e;
}

void cloth_pairs(imp_world *w, int **pairs, int *count, int *cap)
{
    cloth_store *cs = w->cloth;
    for (int k = 0; cs && k < cs->ids.count; k++) {
        cobj *o = &cs->obj[k];
        refresh_dense(w, o);
        const int *d = o->dense;
        for (int t = 0; t < o->ntri; t++)
            for (int i = 0; i < 3; i++) bsr3_pair(pairs, count, cap, d[o->tri[t].v[i]], d[o->tri[t].v[(i + 1) % 3]]);
        for (int e = 0; e < o->nbend; e++) /* the edge and both triangles are there: the cross pair */
            bsr3_pair(pairs, count, cap, d[o->bend[e].v[2]], d[o->bend[e].v[3]]);
        for (int s = 0; s < o->nseg; s++) bsr3_pair(pairs, count, cap, d[o->seg[s].v[0]], d[o->seg[s].v[1]]);
        for (int j = 0; j < o->njoint; j++) {
            const int *v = o->joint[j].v;
            bsr3_pair(pairs, count, cap, d[v[0]], d[v[1]]);
            bsr3_pair(pairs, count, cap, d[v[1]], d[v[2]]);
            bsr3_pair(pairs, count, cap, d[v[0]], d[v[2]]);
        }
    }
}

/* the bsr3 blocks of an element of m vertices: block[i * m + j] for the pair (v[i], v[j]) */
static void element_blocks(const bsr3 *A, const int *d, const int *v, int m, int *block)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) block[i * m + j] = bsr3_find(A, d[v[i]], d[v[j]]);
}

static int chunk_of(int d, const int *split)
{
    int c = 0;
    while (c < PAR_CHUNKS - 1 && d >= split[c + 1]) c++;
    return c;
}

/* which group an element of m vertices belongs to (cloth.h); split_crossing: the crossing elements
 * go to the groups of their lowest rows' chunks */
static int group_of(const int *dense, const int *v, int m, const int *split, bool split_crossing)
{
    int c = chunk_of(dense[v[0]], split), low = dense[v[0]];
    bool crossing = false;
    for (int i = 1; i < m; i++) {
        if (dense[v[i]] < split[c] || dense[v[i]] >= split[c + 1]) crossing = true;
        if (dense[v[i]] < low) low = dense[v[i]];
    }
    if (!crossing) return c;
    return split_crossing ? PAR_CHUNKS + chunk_of(low, split) : CLOTH_GROUPS - 1;
}

/* owner[p]: the crossing group that touched particle p (dense), -1 none; false when a particle is
 * in crossing elements of two groups */
static bool crossing_claim(const int *dense, const int *v, int m, const int *split, int *owner)
{
    int g = group_of(dense, v, m, split, true);
    if (g < PAR_CHUNKS) return true;
    for (int i = 0; i < m; i++) {
        int *o = &owner[dense[v[i]]];
        if (*o >= 0 && *o != g) return false;
        *o = g;
    }
    return true;
}

/* whether the object's crossing elements may go to the groups of their chunks (cloth.h) */
static bool crossing_splits(const cobj *o, const int *split, int n)
{
    int *owner = ids_grow(NULL, sizeof(int), n > 0 ? n : 1);
    for (int p = 0; p < n; p++) owner[p] = -1;
    bool ok = true;
    for (int t = 0; ok && t < o->ntri; t++) ok = crossing_claim(o->dense, o->tri[t].v, 3, split, owner);
    for (int e = 0; ok && e < o->nbend; e++) ok = crossing_claim(o->dense, o->bend[e].v, 4, split, owner);
    for (int q = 0; ok && q < o->nseg; q++) ok = crossing_claim(o->dense, o->seg[q].v, 2, split, owner);
    for (int j = 0; ok && j < o->njoint; j++) ok = crossing_claim(o->dense, o->joint[j].v, 3, split, owner);
    free(owner);
    return ok;
}

/* stable sort of an element array by group, with the group ends into gb */
#define GROUP_SORT(type, arr, count, m, gb)                                              \
    do {                                                                                 \
        type *tmp_ = ids_grow(NULL, sizeof(type), (count) > 0 ? (count) : 1);            \
        int out_ = 0;                                                                    \
        for (int g_ = 0; g_ < CLOTH_GROUPS; g_++) {                                      \
            for (int e_ = 0; e_ < (count); e_++)                                         \
                if (group_of(o->dense, (arr)[e_].v, (m), split, splits) == g_) tmp_[out_++] = (arr)[e_]; \
            (gb)[g_] = out_;                                                             \
        }                                                                                \
        if (count) memcpy((arr), tmp_, sizeof(type) * (size_t)(count));                  \
        free(tmp_);                                                                      \
    } while (0)

void cloth_bind_blocks(imp_world *w, const bsr3 *A, const int *split)
{
    cloth_store *cs = w->cloth;
    for (int k = 0; cs && k < cs->ids.count; k++) {
        cobj *o = &cs->obj[k];
        refresh_dense(w, o);
        const bool splits = crossing_splits(o, split, w->particles->ids.count);
        GROUP_SORT(ctri, o->tri, o->ntri, 3, o->tri_g);
        GROUP_SORT(cbend, o->bend, o->nbend, 4, o->bend_g);
        GROUP_SORT(cseg, o->seg, o->nseg, 2, o->seg_g);
        GROUP_SORT(cjoint, o->joint, o->njoint, 3, o->joint_g);
        rebuild_draw(o);
        for (int t = 0; t < o->ntri; t++) element_blocks(A, o->dense, o->tri[t].v, 3, o->tri[t].block);
        for (int e = 0; e < o->nbend; e++) element_blocks(A, o->dense, o->bend[e].v, 4, o->bend[e].block);
        for (int s = 0; s < o->nseg; s++) element_blocks(A, o->dense, o->seg[s].v, 2, o->seg[s].block);
        for (int j = 0; j < o->njoint; j++) element_blocks(A, o->dense, o->joint[j].v, 3, o->joint[j].block);
    }
}

/* a particle is going away: its vertex is gone, and every element that used it (a hole) */
void cloth_particle_removed(imp_world *w, uint32_t slot)
{
    cloth_store *cs = w->cloth;
    for (int k = 0; cs && k < cs->ids.count; k++) {
        cobj *o = &cs->obj[k];
        int vk = -1;
        for (int i = 0; i < o->nv && vk < 0; i++)
            if (o->slot[i] == slot) vk = i;
        if (vk < 0) continue;
        o->slot[vk] = NONE;
#define DROP(arr, cnt, m)                                                           \
    do {                                                                            \
        int out_ = 0;                                                               \
        for (int e_ = 0; e_ < o->cnt; e_++) {                                       \
            bool uses_ = false;                                                     \
            for (int i_ = 0; i_ < (m); i_++) uses_ = uses_ || o->arr[e_].v[i_] == vk; \
            if (!uses_) o->arr[out_++] = o->arr[e_];                                \
        }                                                                           \
        o->cnt = out_;                                                              \
    } while (0)
        DROP(tri, ntri, 3);
        DROP(bend, nbend, 4);
        DROP(seg, nseg, 2);
        DROP(joint, njoint, 3);
#undef DROP
        rebuild_draw(o);
        w->particles->topology++;
    }
}

/* ---- creation --------------------------------------------------------------------------------------------- */

imp_cloth_def imp_cloth_def_default(void)
{
    imp_cloth_def d;
    memset(&d, 0, sizeof d);
    d.mass = 0.5;
    d.stretch = 2000;
    d.shear = 50;
    d.bend = 2e-4;
    d.damping = 0.01;
    d.radius = 0.01;
    d.friction = 0.5;
    const float c[4] = {0.78f, 0.22f, 0.20f, 1}, b[4] = {0.85f, 0.75f, 0.55f, 1};
    memcpy(d.color, c, sizeof c);
    memcpy(d.back_color, b, sizeof b);
    return d;
}

imp_hair_def imp_hair_def_default(void)
{
    imp_hair_def d;
    memset(&d, 0, sizeof d);
    d.mass = 0.01;
    d.stretch = 50;
    d.bend = 1e-4;
    d.damping = 0.01;
    d.radius = 0.005;
    d.friction = 0.5;
    d.root = IMP_FIXED;
    d.clamped = true;
    const float c[4] = {0.35f, 0.22f, 0.12f, 1};
    memcpy(d.color, c, sizeof c);
    return d;
}

static cobj *obj_new(imp_world *w, imp_id *id, int nv)
{
    cloth_store *cs = store(w);
    if (cs->ids.count == cs->cap) {
        cs->cap = cs->cap ? 2 * cs->cap : 8;
        cs->obj = ids_grow(cs->obj, sizeof(cobj), cs->cap);
    }
    *id = ids_alloc(&cs->ids);
    cobj *o = &cs->obj[cs->ids.count - 1];
    memset(o, 0, sizeof *o);
    o->nv = nv;
    o->slot = ids_grow(NULL, sizeof(uint32_t), nv);
    o->dense = ids_grow(NULL, sizeof(int), nv);
    w->particles->topology++;
    return o;
}

static int cmp_edge(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
    return 0;
}

static bool finite3(imp_vec3 a) { return v3_finite(a) != 0; }

/* the rest geometry of triangle v (S3 "Triangle energy"): the coefficients au, av of w_u, w_v, the
 * area, the rest lengths of w_u and w_v and the rest shear angle; false for a degenerate one */
static bool rest_triangle(const imp_cloth_def *def, const int *v, ctri *T)
{
    imp_vec3 x0 = def->positions[v[0]], e1 = v3_sub(def->positions[v[1]], x0), e2 = v3_sub(def->positions[v[2]], x0);
    imp_vec3 nrm = v3_cross(e1, e2);
    double A = 0.5 * v3_len(nrm);
    if (!(A > 1e-14)) return false;
    double u[3], vv[3];
    if (def->uv) {
        for (int i = 0; i < 3; i++) u[i] = def->uv[2 * v[i]], vv[i] = def->uv[2 * v[i] + 1];
    } else { /* flattened in its own plane */
        imp_vec3 uh = v3_normalize(e1), vh = v3_normalize(v3_cross(nrm, e1));
        u[0] = 0, vv[0] = 0, u[1] = v3_len(e1), vv[1] = 0, u[2] = v3_dot(e2, uh), vv[2] = v3_dot(e2, vh);
    }
    double du1 = u[1] - u[0], du2 = u[2] - u[0], dv1 = vv[1] - vv[0], dv2 = vv[2] - vv[0];
    double det = du1 * dv2 - du2 * dv1;
    if (!(fabs(det) > 1e-14)) return false;
    /* [a b; c d] = [du1 du2; dv1 dv2]^-1; w_u = a e1 + c e2, w_v = b e1 + d e2 */
    double ia = dv2 / det, ib = -du2 / det, ic = -dv1 / det, id = du1 / det;
    memcpy(T->v, v, sizeof T->v);
    T->au[0] = -(ia + ic), T->au[1] = ia, T->au[2] = ic;
    T->av[0] = -(ib + id), T->av[1] = ib, T->av[2] = id;
    T->area = A;
    imp_vec3 wu = v3_add(v3_scale(e1, ia), v3_scale(e2, ic)), wv = v3_add(v3_scale(e1, ib), v3_scale(e2, id));
    T->bu = v3_len(wu), T->bv = v3_len(wv);
    if (!(T->bu > 1e-12 && T->bv > 1e-12)) return false;
    double c = v3_dot(wu, wv) / (T->bu * T->bv);
    T->theta0 = acos(c > 1 ? 1 : c < -1 ? -1 : c);
    return true;
}

/* the bend elements: every interior edge, found by sorting the half-edges by (low, high) vertex so
 * that a shared edge's two halves are neighbours (of a non-manifold edge, the first two), with its
 * rest dihedral angle and A_e / l_perp^2 (top of the file); returns them, their count in *count */
static cbend *bend_edges(const imp_cloth_def *def, const ctri *tri, int nt, int *count)
{
    int (*he)[4] = malloc(sizeof(int[4]) * 3 * (size_t)nt); /* lo, hi, triangle, corner of the edge start */
    if (!he) abort();
    for (int t = 0; t < nt; t++)
        for (int i = 0; i < 3; i++) {
            int a = tri[t].v[i], b = tri[t].v[(i + 1) % 3];
            he[3 * t + i][0] = a < b ? a : b, he[3 * t + i][1] = a < b ? b : a;
            he[3 * t + i][2] = t, he[3 * t + i][3] = i;
        }
    qsort(he, 3 * (size_t)nt, sizeof he[0], cmp_edge);
    cbend *bend = malloc(sizeof(cbend) * 3 * (size_t)nt);
    if (!bend) abort();
    int nb = 0;
    for (int k = 0; k + 1 < 3 * nt; k++) {
        if (he[k][0] != he[k + 1][0] || he[k][1] != he[k + 1][1]) continue;
        if (k > 0 && he[k - 1][0] == he[k][0] && he[k - 1][1] == he[k][1]) continue; /* non-manifold: first two */
        const ctri *t1 = &tri[he[k][2]], *t2 = &tri[he[k + 1][2]];
        int i1 = he[k][3];
        cbend *B = &bend[nb];
        B->v[0] = t1->v[i1], B->v[1] = t1->v[(i1 + 1) % 3], B->v[2] = t1->v[(i1 + 2) % 3];
        B->v[3] = -1;
        for (int i = 0; i < 3; i++)
            if (t2->v[i] != B->v[0] && t2->v[i] != B->v[1]) B->v[3] = t2->v[i];
        if (B->v[3] < 0 || B->v[3] == B->v[2]) continue;
        imp_vec3 x0 = def->positions[B->v[0]];
        imp_vec3 e = v3_sub(def->positions[B->v[1]], x0);
        double gz[9], le = v3_len(e);
        if (!dihedral(e, v3_sub(def->positions[B->v[2]], x0), v3_sub(def->positions[B->v[3]], x0), &B->phi0, gz, NULL))
            continue;
        double A1 = t1->area, A2 = t2->area, lperp = (2 * A1 / le + 2 * A2 / le) / 3;
        B->coef = (A1 + A2) / 3 / (lperp * lperp);
        nb++;
    }
    free(he);
    *count = nb;
    return bend;
}

imp_id imp_cloth_create(imp_world *w, const imp_cloth_def *def)
{
    const imp_id none = {0, 0};
    const int nv = def->vertex_count, nt = def->triangle_count;
    if (nv < 3 || nt < 1 || !def->positions || !def->triangles) return none;
    if (!(def->stretch >= 0 && def->shear >= 0 && def->bend >= 0 && def->damping >= 0 && def->radius >= 0))
        return none;
    if (!(def->restitution >= 0 && def->restitution <= 1 && def->friction >= 0 && isfinite(def->friction))) return none;
    for (int i = 0; i < nv; i++)
        if (!finite3(def->positions[i])) return none;
    /* rest geometry of every triangle; refuse bad indices and degenerate triangles */
    double *area = calloc((size_t)nv, sizeof(double)), total = 0;
    ctri *tri = calloc((size_t)nt, sizeof(ctri));
    if (!area || !tri) abort();
    for (int t = 0; t < nt; t++) {
        const int *v = def->triangles + 3 * t;
        bool ok = true;
        for (int i = 0; i < 3; i++) ok = ok && v[i] >= 0 && v[i] < nv;
        ok = ok && v[0] != v[1] && v[1] != v[2] && v[0] != v[2];
        if (!ok || !rest_triangle(def, v, &tri[t])) {
            free(area);
            free(tri);
            return none;
        }
        for (int i = 0; i < 3; i++) area[v[i]] += tri[t].area / 3;
        total += tri[t].area;
    }
    int nb;
    cbend *bend = bend_edges(def, tri, nt, &nb);

    /* particles: mass by area (a third of each triangle to each corner) unless given */
    imp_id id;
    cobj *o = obj_new(w, &id, nv);
    o->tri = tri, o->ntri = nt;
    o->bend = bend, o->nbend = nb;
    o->draw = ids_grow(NULL, 3 * sizeof(int), nt);
    rebuild_draw(o);
    o->stretch = def->stretch, o->shear = def->shear, o->bendk = def->bend, o->damping = def->damping;
    o->rows = def->rows, o->cols = def->cols;
    o->self_collision = def->self_collision;
    o->rest = ids_grow(NULL, sizeof(imp_vec3), nv);
    memcpy(o->rest, def->positions, sizeof(imp_vec3) * (size_t)nv);
    memcpy(o->color, def->color, sizeof o->color);
    memcpy(o->back, def->back_color, sizeof o->back);
    for (int i = 0; i < nv; i++) {
        imp_particle_def pd = imp_particle_def_default();
        pd.position = def->positions[i];
        pd.restitution = def->restitution, pd.friction = def->friction;
        double m = def->masses ? def->masses[i] : area[i] > 0 ? def->mass * area[i] / total : def->mass / nv;
        pd.mass = m > 0 && isfinite(m) ? m : 1e-6;
        pd.radius = def->radius;
        pd.motion = def->pinned && def->pinned[i] ? IMP_FIXED : IMP_DYNAMIC;
        memcpy(pd.color, def->color, sizeof pd.color);
        o = &w->cloth->obj[ids_lookup(&w->cloth->ids, id)]; /* (particle creation does not move it) */
        o->slot[i] = imp_particle_create(w, &pd).index;
    }
    free(area);
    return id;
}

imp_id imp_hair_create(imp_world *w, const imp_hair_def *def)
{
    const imp_id none = {0, 0};
    const int np = def->point_count;
    if (np < 2 || !def->points) return none;
    if (!(def->mass > 0 && def->stretch >= 0 && def->bend >= 0 && def->damping >= 0 && def->radius >= 0)) return none;
    if (!(def->restitution >= 0 && def->restitution <= 1 && def->friction >= 0 && isfinite(def->friction))) return none;
    double total = 0;
    for (int i = 0; i < np; i++) {
        if (!finite3(def->points[i])) return none;
        if (i > 0) {
            double l = v3_len(v3_sub(def->points[i], def->points[i - 1]));
            if (!(l > 1e-9)) return none;
            total += l;
        }
    }
    const bool held = !imp_id_is_null(def->body);
    if (held && !imp_body_valid(w, def->body)) return none;
    const bool clamped = def->clamped && (def->root != IMP_DYNAMIC || held);
    const int base = clamped ? 1 : 0, nv = np + base;
    imp_id id;
    cobj *o = obj_new(w, &id, nv);
    o->hair = true, o->clamped = clamped, o->vbase = base;
    o->stretch = def->stretch, o->bendk = def->bend, o->damping = def->damping;
    memcpy(o->color, def->color, sizeof o->color);
    memcpy(o->back, def->color, sizeof o->back);
    o->seg = ids_grow(NULL, sizeof(cseg), np - 1);
    o->joint = ids_grow(NULL, sizeof(cjoint), np);
    double *len = ids_grow(NULL, sizeof(double), np);
    for (int i = 0; i + 1 < np; i++) {
        len[i] = v3_len(v3_sub(def->points[i + 1], def->points[i]));
        cseg *s = &o->seg[o->nseg++];
        s->v[0] = base + i, s->v[1] = base + i + 1, s->rest = len[i];
    }
    for (int i = 1; i + 1 < np; i++) {
        cjoint *j = &o->joint[o->njoint++];
        j->v[0] = base + i - 1, j->v[1] = base + i, j->v[2] = base + i + 1;
        j->lbar = 0.5 * (len[i - 1] + len[i]);
    }
    o->root_dir = v3_normalize(v3_sub(def->points[1], def->points[0]));
    if (clamped) {
        cjoint *j = &o->joint[o->njoint++];
        j->v[0] = 0, j->v[1] = 1, j->v[2] = 2;
        /* the clamp: the first chord's direction is the tangent half a segment out, theta_0 ~
         * kappa(0) l_0 / 2, and the root owns half a segment: k = B / (l_0 / 2) */
        j->lbar = 0.5 * len[0];
    }
    for (int k = 0; k < nv; k++) {
        imp_particle_def pd = imp_particle_def_default();
        int i = k - base; /* point index; -1: the anchor */
        pd.position = i >= 0 ? def->points[i] : v3_mad(def->points[0], o->root_dir, -len[0]);
        double share = i < 0 ? len[0] / 2 : ((i > 0 ? len[i - 1] : 0) + (i + 1 < np ? len[i] : 0)) / 2;
        pd.mass = def->mass * share / total;
        pd.radius = def->radius;
        pd.restitution = def->restitution, pd.friction = def->friction;
        pd.motion = i <= 0 && !held ? def->root : IMP_DYNAMIC;
        memcpy(pd.color, def->color, sizeof pd.color);
        o = &w->cloth->obj[ids_lookup(&w->cloth->ids, id)];
        imp_id p = imp_particle_create(w, &pd);
        o->slot[k] = p.index;
        if (held && i <= 0) imp_particle_attach(w, p, def->body, pd.position); /* the root, the anchor */
    }
    free(len);
    return id;
}

/* ---- handles ---------------------------------------------------------------------------------------------- */

static cobj *obj_of(const imp_world *w, imp_id id)
{
    if (!w->cloth) return NULL;
    int d = ids_lookup(&w->cloth->ids, id);
    return d < 0 ? NULL : &w->cloth->obj[d];
}

bool imp_cloth_valid(const imp_world *w, imp_id id) { return obj_of(w, id) != NULL; }

bool imp_cloth_self_collision(const imp_world *w, imp_id id)
{
    const cobj *o = obj_of(w, id);
    return o && o->self_collision;
}

void imp_cloth_set_self_collision(imp_world *w, imp_id id, bool on)
{
    cobj *o = obj_of(w, id);
    if (o && !o->hair) o->self_collision = on;
}

/* which object (+1, 0: none) and which of its vertices each particle (dense) is (particle_contact.c) */
void cloth_owners(const imp_world *w, int *owner, int *vertex)
{
    memset(owner, 0, sizeof(int) * (size_t)w->particles->ids.count);
    for (int k = 0; w->cloth && k < w->cloth->ids.count; k++) {
        const cobj *o = &w->cloth->obj[k];
        for (int v = 0; v < o->nv; v++) {
            if (o->slot[v] == NONE) continue;
            const int d = particles_slot_dense(w, o->slot[v]);
            owner[d] = k + 1, vertex[d] = v;
        }
    }
}

/* two particles of object k (dense in the store), vertices a and b: whether they may collide: it
 * self-collides and they lie more than `apart` from each other at rest */
bool cloth_self_pair(const imp_world *w, int k, int a, int b, double apart)
{
    const cobj *o = &w->cloth->obj[k];
    if (!o->self_collision || !o->rest) return false;
    const imp_vec3 d = v3_sub(o->rest[a], o->rest[b]);
    return v3_dot(d, d) > apart * apart;
}
bool imp_cloth_is_hair(const imp_world *w, imp_id id)
{
    const cobj *o = obj_of(w, id);
    return o && o->hair;
}

/* take cloth or hair id out of the store; returns the slots of its particles (NONE where one is gone
 * already) in a buffer the caller frees, and their count, for the caller to destroy them
 * (imp_cloth_destroy, particle_system.c); NULL when there is no such object */
uint32_t *cloth_remove(imp_world *w, imp_id id, int *count)
{
    cloth_store *cs = w->cloth;
    int d = cs ? ids_lookup(&cs->ids, id) : -1;
    if (d < 0) return NULL;
    cobj gone = cs->obj[d];
    ids_remove(&cs->ids, id);
    cs->obj[d] = cs->obj[cs->ids.count];
    w->particles->topology++;
    uint32_t *slots = ids_grow(NULL, sizeof(uint32_t), gone.nv > 0 ? gone.nv : 1);
    memcpy(slots, gone.slot, sizeof(uint32_t) * (size_t)gone.nv);
    *count = gone.nv;
    obj_free(&gone);
    return slots;
}

imp_id imp_cloth_particle(const imp_world *w, imp_id id, int k)
{
    const imp_id none = {0, 0};
    const cobj *o = obj_of(w, id);
    if (!o || k < 0 || k + o->vbase >= o->nv) return none;
    uint32_t s = o->slot[k + o->vbase];
    return s == NONE ? none : ids_of(&w->particles->ids, particles_slot_dense(w, s));
}

int imp_cloth_vertex_count(const imp_world *w, imp_id id)
{
    const cobj *o = obj_of(w, id);
    return o ? o->nv - o->vbase : 0;
}

imp_id imp_hair_anchor(const imp_world *w, imp_id id)
{
    const imp_id none = {0, 0};
    const cobj *o = obj_of(w, id);
    if (!o || !o->clamped || o->slot[0] == NONE) return none;
    return ids_of(&w->particles->ids, particles_slot_dense(w, o->slot[0]));
}

imp_vec3 imp_hair_root_direction(const imp_world *w, imp_id id)
{
    const cobj *o = obj_of(w, id);
    return o ? o->root_dir : v3(0, 0, 0);
}

void imp_cloth_params(const imp_world *w, imp_id id, double *stretch, double *shear, double *bend, double *damping)
{
    const cobj *o = obj_of(w, id);
    if (!o) return;
    *stretch = o->stretch, *shear = o->shear, *bend = o->bendk, *damping = o->damping;
}

void imp_cloth_set_params(imp_world *w, imp_id id, double stretch, double shear, double bend, double damping)
{
    cobj *o = obj_of(w, id);
    if (!o) return;
    if (stretch >= 0) o->stretch = stretch;
    if (shear >= 0) o->shear = shear;
    if (bend >= 0) o->bendk = bend;
    if (damping >= 0) o->damping = damping;
}

void imp_cloth_set_color(imp_world *w, imp_id id, const float rgba[4], const float back_rgba[4])
{
    cobj *o = obj_of(w, id);
    if (!o) return;
    if (rgba) memcpy(o->color, rgba, sizeof o->color);
    if (back_rgba) memcpy(o->back, back_rgba, sizeof o->back);
}

double imp_cloth_energy(const imp_world *w, imp_id id)
{
    const cobj *o = obj_of(w, id);
    if (!o) return 0;
    double e = 0;
    for (int t = 0; t < o->ntri; t++) e += tri_energy(w, o, &o->tri[t]);
    for (int b = 0; b < o->nbend; b++) e += bend_energy(w, o, &o->bend[b]);
    for (int s = 0; s < o->nseg; s++) {
        const cseg *sg = &o->seg[s];
        imp_vec3 a = v3_load(w->particles->x + 3 * particles_slot_dense(w, o->slot[sg->v[0]]));
        imp_vec3 b = v3_load(w->particles->x + 3 * particles_slot_dense(w, o->slot[sg->v[1]]));
        double d = v3_len(v3_sub(a, b)) - sg->rest;
        e += 0.5 * o->stretch / sg->rest * d * d;
    }
    for (int j = 0; j < o->njoint; j++) e += joint_energy(w, o, &o->joint[j]);
    return e;
}

int imp_cloth_count(const imp_world *w) { return cloth_object_count(w); }

imp_mesh_view imp_cloth_mesh(imp_world *w, int i)
{
    imp_mesh_view v;
    memset(&v, 0, sizeof v);
    if (!w->cloth || i < 0 || i >= w->cloth->ids.count) return v;
    cobj *o = &w->cloth->obj[i];
    refresh_dense(w, o);
    v.hair = o->hair;
    v.vertex_count = o->nv - o->vbase;
    v.vertex_particle = o->dense + o->vbase;
    v.triangle_count = o->hair ? 0 : o->ntri;
    v.triangles = o->draw;
    memcpy(v.color, o->color, sizeof v.color);
    memcpy(v.back_color, o->back, sizeof v.back_color);
    return v;
}

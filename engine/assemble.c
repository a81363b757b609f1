/* assemble.c: the element kernels of the implicit integrator's assembly (see assemble.h for the
 * terms and which of them keep the system matrix definite): one damped condition, one general
 * element, and the length condition with its Hessian. */
#include <math.h>
#include <string.h>

#include "assemble.h"

void asm_condition(asm_ctx *a, int m, const int *idx, const int *blk, double C, const double *g, const double *H,
                   bool convex, double k, double kd)
{
    const int n = 3 * m;
    double Cdot = 0, vl[12];
    for (int i = 0; i < m; i++) {
        const double *vi = a->v + 3 * idx[i];
        vl[3 * i] = vi[0], vl[3 * i + 1] = vi[1], vl[3 * i + 2] = vi[2];
        Cdot += g[3 * i] * vi[0] + g[3 * i + 1] * vi[1] + g[3 * i + 2] * vi[2];
    }
    const double s = -(k * C + kd * Cdot);
    for (int i = 0; i < m; i++) {
        double *fi = a->f + 3 * idx[i];
        fi[0] += s * g[3 * i], fi[1] += s * g[3 * i + 1], fi[2] += s * g[3 * i + 2];
    }
    double Hv[12] = {0};
    if (H && (a->A || a->Kd))
        for (int p = 0; p < n; p++) {
            double acc = 0;
            for (int q = 0; q < n; q++) acc += H[p * n + q] * vl[q];
            Hv[p] = acc;
        }
    if (a->A) {
        /* A -= h D + h^2 K with D = -kd g g^T, K = -k (g g^T + [C H]) */
        const bool useH = H && (a->full || (convex && C > 0));
        const double alpha = a->h * kd + a->h2 * k, beta = useH ? a->h2 * k * C : 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double *B = a->A + 9 * (size_t)blk[i * m + j];
                const double *gi = g + 3 * i, *gj = g + 3 * j;
                for (int r = 0; r < 3; r++) {
                    B[3 * r + 0] += alpha * gi[r] * gj[0];
                    B[3 * r + 1] += alpha * gi[r] * gj[1];
                    B[3 * r + 2] += alpha * gi[r] * gj[2];
                }
                if (useH)
                    for (int r = 0; r < 3; r++) {
                        const double *Hr = H + (3 * i + r) * n + 3 * j;
                        B[3 * r + 0] += beta * Hr[0];
                        B[3 * r + 1] += beta * Hr[1];
                        B[3 * r + 2] += beta * Hr[2];
                    }
            }
        /* h^2 K v0 = -h^2 k (g Cdot + [C H v0]) */
        const double c1 = -a->h2 * k * Cdot, c2 = useH ? -a->h2 * k * C : 0;
        for (int i = 0; i < m; i++) {
            double *bi = a->bK + 3 * idx[i];
            for (int r = 0; r < 3; r++) bi[r] += c1 * g[3 * i + r] + c2 * Hv[3 * i + r];
        }
    }
    if (a->Kd) {
        for (int p = 0; p < n; p++) {
            size_t row = (size_t)(3 * idx[p / 3] + p % 3) * (size_t)a->n3;
            for (int q = 0; q < n; q++) {
                size_t at = row + (size_t)(3 * idx[q / 3] + q % 3);
                double Hpq = H ? H[p * n + q] : 0;
                a->Kd[at] += -k * (g[p] * g[q] + C * Hpq) - kd * (Cdot * Hpq + g[p] * Hv[q]);
                a->Dd[at] += -kd * g[p] * g[q];
            }
        }
    }
}

void asm_local(asm_ctx *a, int m, const int *idx, const int *blk, const double *fl, const double *Ks,
               const double *Kx, const double *Dl)
{
    const int n = 3 * m;
    for (int i = 0; i < m; i++)
        for (int r = 0; r < 3; r++) a->f[3 * idx[i] + r] += fl[3 * i + r];
    if (a->A) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                double *B = a->A + 9 * (size_t)blk[i * m + j];
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) {
                        int at = (3 * i + r) * n + 3 * j + c;
                        B[3 * r + c] -= a->h * Dl[at] + a->h2 * Ks[at];
                    }
            }
        for (int p = 0; p < n; p++) {
            double acc = 0;
            for (int q = 0; q < n; q++) acc += Ks[p * n + q] * a->v[3 * idx[q / 3] + q % 3];
            a->bK[3 * idx[p / 3] + p % 3] += a->h2 * acc;
        }
    }
    if (a->Kd)
        for (int p = 0; p < n; p++) {
            size_t row = (size_t)(3 * idx[p / 3] + p % 3) * (size_t)a->n3;
            for (int q = 0; q < n; q++) {
                size_t at = row + (size_t)(3 * idx[q / 3] + q % 3);
                a->Kd[at] += Kx[p * n + q];
                a->Dd[at] += Dl[p * n + q];
            }
        }
}

/* ---- springs and behaviours as condition terms ------------------------------------------------------
 * The damped spring of S3 eq. 1 is the energy term of C = |x_a - x_b| - r (GUIDE.md: it reproduces
 * eq. 1 exactly): with u = l / |l| and P = (I - u u^T) / |l|,
 *     dC/dx_a = u = -dC/dx_b,      d2C/dx_a2 = P = d2C/dx_b2 = -d2C/dx_a dx_b
 * so K_aa = -k_s (u u^T + (1 - r/|l|)(I - u u^T)), the familiar spring Jacobian. */

bool asm_length_condition(const double *xa, const double *xb, double rest, int m, double *C, double *g, double *H,
                             const asm_ctx *a)
{
    imp_vec3 l = v3_sub(v3_load(xa), v3_load(xb));
    double len = v3_len(l);
    if (len < 1e-12) return false; /* direction undefined: no force (as forces.c) */
    imp_vec3 u = v3_scale(l, 1.0 / len);
    double uu[3] = {u.x, u.y, u.z};
    *C = len - rest;
    for (int r = 0; r < 3; r++) {
        g[r] = uu[r];
        if (m == 2) g[3 + r] = -uu[r];
    }
    if (!asm_wants_hessian(a, *C, true)) return false;
    const int n = 3 * m;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double P = ((r == c) - uu[r] * uu[c]) / len;
            H[r * n + c] = P;
            if (m == 2) {
                H[r * n + 3 + c] = -P;
                H[(3 + r) * n + c] = -P;
                H[(3 + r) * n + 3 + c] = P;
            }
        }
    return true;
}

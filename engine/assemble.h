/* assemble.h: how force elements hand their forces and Jacobians to the implicit integrator
 * (implicit.c): the assembly context and the element kernels (assemble.c) that forces.c and cloth.c use.
 *
 * A force element acts on m <= 4 particles. It adds its force f into a->f and, when a->A is set,
 * its part of the system matrix and right-hand side of the second-order backward Euler step
 * (S3 eq. 4-5 in M-form, Baraff and Witkin 1998 eq. 15):
 *
 *     A = M - h D - h^2 K,      D = df/dv,  K = df/dx      (Jacobians of forces, not accelerations:
 *     b = h f0 + h^2 K v0                                    GUIDE.md trap 6)
 *
 * Most elements are energy terms E = k C^2 / 2 of a scalar condition C(x) with gradient g = dC/dx
 * and Hessian H, damped along g (S3 eq. 2, Baraff and Witkin 4.2):
 *
 *     f = -(k C + kd Cdot) g,           Cdot = g . v
 *     K = -k (g g^T + C H)  [- kd (Cdot H + g (H v)^T), the damping's x-derivative]
 *     D = -kd g g^T
 *
 * The system matrix needs to be symmetric positive definite for CG. Like Baraff and Witkin it
 * drops the damping's x-derivative (not symmetric). In the default ("definite") mode it also keeps
 * C H only where that part is positive semidefinite: for length-like conditions (H >= 0) when
 * C > 0, so a compressed spring loses its transverse stiffness (which would make A indefinite);
 * for angle conditions never (a Gauss-Newton matrix). With full_jacobian the symmetric C H is kept
 * everywhere. In check mode (a->Kd) the complete analytic Jacobians go into dense matrices. */
#ifndef IMPETUS_ASSEMBLE_H
#define IMPETUS_ASSEMBLE_H

#include "impetus.h"
#include "parallel.h"
#include "sparse.h"

typedef struct asm_ctx {
    const double *x, *v; /* the state of the whole store (dense arrays, 3 per particle)              */
    double *f;           /* force accumulator (3n)                                                  */
    double *A;           /* bsr3 values of the system matrix, or NULL: forces only                  */
    double *bK;          /* h^2 K v0 accumulator (3n), with A                                       */
    double h, h2;
    bool full;           /* keep C H everywhere                                                     */
    /* check mode: complete analytic Jacobians into dense 3n x 3n row-major matrices (or NULL) */
    double *Kd, *Dd;
    int n3;
    bool generic;        /* cloth triangles through the generic condition path, not the fused one */
} asm_ctx;

/* whether the element should compute the Hessian H of a condition with value C (convex: H is
 * positive semidefinite, as for a length) */
static inline bool asm_wants_hessian(const asm_ctx *a, double C, bool convex)
{
    if (a->Kd) return true;
    if (!a->A) return false;
    return a->full || (convex && C > 0);
}

/* one damped condition term over m particles (dense indices idx); blk[i * m + j] is the bsr3 block
 * of (idx[i], idx[j]); H (3m x 3m row-major) may be NULL */
void asm_condition(asm_ctx *a, int m, const int *idx, const int *blk, double C, const double *g, const double *H,
                   bool convex, double k, double kd);

/* C = |xa - xb| - rest with its gradient g over (a, b) (or over a alone: m = 1, b a fixed point)
 * and, when the context wants it, its Hessian H; returns whether H was written. |xa - xb| > 0. */
bool asm_length_condition(const double *xa, const double *xb, double rest, int m, double *C, double *g, double *H,
                          const asm_ctx *a);

/* a general element: its force fl (3m), the stiffness Ks used by the system matrix, the complete
 * stiffness Kx (check mode only, may equal Ks) and the damping Jacobian Dl, all 3m x 3m row-major */
void asm_local(asm_ctx *a, int m, const int *idx, const int *blk, const double *fl, const double *Ks,
               const double *Kx, const double *Dl);

#endif

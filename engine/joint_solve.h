/* joint_solve.h: the sparse block solve of K = C W G^T over the active joints (joint_solve.c). */
#ifndef IMPETUS_JOINT_SOLVE_H
#define IMPETUS_JOINT_SOLVE_H

#include "dense.h"
#include "joint_internal.h"

/* in-place inverse of the m x m block A (stride MAX_ROWS): dense.h */
static inline bool block_invert(double *A, int m) { return m == 3 ? dense_invert(A, 3, MAX_ROWS) : dense_invert(A, m, MAX_ROWS); }

/* the active joints of a stage (nodes) and the elimination structure, rebuilt when the joint graph changed */
void jsolve_collect(struct joint_set *js, int n, const double *im);
/* K = C W G^T of the nodes' rows into the blocks, the diagonal shifted by mu diag K (Levenberg-Marquardt) */
void jsolve_assemble(struct joint_set *js, double mu);
/* block elimination; false when a diagonal block is singular */
bool jsolve_factor(struct joint_set *js);
/* K sol = rhs with the factors (rhs overwritten) */
void jsolve_solve(struct joint_set *js);
/* the velocity change of node p's multipliers lam, times alpha, added to (v, om) and to (v2, om2) if given */
void jsolve_apply(struct joint_set *js, int p, const double *lam, double alpha, imp_vec3 *v, imp_vec3 *om, imp_vec3 *v2, imp_vec3 *om2, int n);

#endif

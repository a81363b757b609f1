/* sparse_simd.h: the 3x3 block products of the column-major copies (sparse.h, bsr3_cm_fill) as
 * 256-bit vector code, for sparse.c and amg.c. Internal to the engine.
 *
 * A block's columns c0, c1, c2 (3 doubles each, contiguous) are loaded four lanes wide; lane r of
 *     (c0 x_0 + c1 x_1) + c2 x_2
 * is row r of B x with b3_mul_v's operations in b3_mul_v's order, and lane 3 (the next column's
 * first entry times x) is never stored. Functions that use these helpers carry SPARSE_AVX and run
 * only when sparse_avx() says the processor and the system support AVX; the target is AVX alone
 * (no FMA), so no product is fused into an addition and the bits are those of the scalar code
 * (IMPETUS_SIMD=0 in the environment runs the scalar code, for the spec that compares the two). */
#ifndef IMPETUS_SPARSE_SIMD_H
#define IMPETUS_SPARSE_SIMD_H

#include <stdbool.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SPARSE_HAVE_AVX 1
#include <immintrin.h>
#define SPARSE_AVX __attribute__((target("avx")))

bool sparse_avx(void); /* sparse.c: AVX is there, and IMPETUS_SIMD=0 does not ask for the scalar path */

/* B x for the column-major block c and the 3-vector at x */
static inline SPARSE_AVX __m256d sparse_cm_mul(const double *c, const double *x)
{
    __m256d p = _mm256_mul_pd(_mm256_loadu_pd(c), _mm256_broadcast_sd(x));
    p = _mm256_add_pd(p, _mm256_mul_pd(_mm256_loadu_pd(c + 3), _mm256_broadcast_sd(x + 1)));
    return _mm256_add_pd(p, _mm256_mul_pd(_mm256_loadu_pd(c + 6), _mm256_broadcast_sd(x + 2)));
}

/* a 3-vector in and out of the low three lanes (lane 3 reads as 0 and is not written) */
static inline SPARSE_AVX __m256d sparse_load3(const double *v)
{
    return _mm256_maskload_pd(v, _mm256_set_epi64x(0, -1, -1, -1));
}
static inline SPARSE_AVX void sparse_store3(double *v, __m256d a)
{
    _mm_storeu_pd(v, _mm256_castpd256_pd128(a));
    _mm_store_sd(v + 2, _mm256_extractf128_pd(a, 1));
}
#else
#define SPARSE_HAVE_AVX 0
#endif

/* the scalar path of sparse_cm_mul: y = B x with the block c column-major */
static inline void sparse_cm_mul_scalar(const double *c, const double *x, double *y)
{
    y[0] = c[0] * x[0] + c[3] * x[1] + c[6] * x[2];
    y[1] = c[1] * x[0] + c[4] * x[1] + c[7] * x[2];
    y[2] = c[2] * x[0] + c[5] * x[1] + c[8] * x[2];
}

#endif

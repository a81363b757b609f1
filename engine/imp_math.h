/* imp_math.h: small vector types passed by value, double precision. y is up; SI units. */
#ifndef IMPETUS_MATH_H
#define IMPETUS_MATH_H

#include <math.h>

typedef struct imp_vec3 { double x, y, z; } imp_vec3;

static inline imp_vec3 v3(double x, double y, double z) { imp_vec3 r = {x, y, z}; return r; }
static inline imp_vec3 v3_add(imp_vec3 a, imp_vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline imp_vec3 v3_sub(imp_vec3 a, imp_vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline imp_vec3 v3_scale(imp_vec3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline imp_vec3 v3_mad(imp_vec3 a, imp_vec3 b, double s) { return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s); }
static inline double v3_dot(imp_vec3 a, imp_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline imp_vec3 v3_cross(imp_vec3 a, imp_vec3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double v3_len(imp_vec3 a) { return sqrt(v3_dot(a, a)); }
static inline imp_vec3 v3_normalize(imp_vec3 a)
{
    double l = v3_len(a);
    return l > 0 ? v3_scale(a, 1.0 / l) : v3(0, 0, 0);
}
static inline int v3_finite(imp_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

/* load / store a vec3 from a flat array of doubles (structure-of-arrays state vectors) */
static inline imp_vec3 v3_load(const double *p) { return v3(p[0], p[1], p[2]); }
static inline void v3_store(double *p, imp_vec3 a) { p[0] = a.x; p[1] = a.y; p[2] = a.z; }
static inline void v3_accum(double *p, imp_vec3 a) { p[0] += a.x; p[1] += a.y; p[2] += a.z; }

/* 3x3 matrix, row-major: m[row][col] */
typedef struct imp_mat3 { double m[3][3]; } imp_mat3;

static inline imp_mat3 m3_identity(void)
{
    imp_mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    return r;
}
static inline imp_vec3 m3_mul_v(imp_mat3 a, imp_vec3 v)
{
    return v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
              a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
              a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}
static inline imp_vec3 m3_mul_tv(imp_mat3 a, imp_vec3 v) /* transpose(a) * v */
{
    return v3(a.m[0][0] * v.x + a.m[1][0] * v.y + a.m[2][0] * v.z,
              a.m[0][1] * v.x + a.m[1][1] * v.y + a.m[2][1] * v.z,
              a.m[0][2] * v.x + a.m[1][2] * v.y + a.m[2][2] * v.z);
}

#endif

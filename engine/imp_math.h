/* imp_math.h: small vector types passed by value, double precision. y is up; SI units. */
#ifndef IMPETUS_MATH_H
#define IMPETUS_MATH_H

#include <math.h>
#include <stdbool.h>

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

/* the tangent basis: an orthonormal basis (t1, t2) of the plane normal to the unit vector n,
 * right-handed with it (t1 x t2 = n). t1 is perpendicular to n and to the first coordinate axis a along
 * which n's component is below 0.57 (one always is, since 0.57 > 1/sqrt(3)), so |n x a| >= 0.82 */
static inline void v3_basis(imp_vec3 n, imp_vec3 *t1, imp_vec3 *t2)
{
    imp_vec3 a = fabs(n.x) < 0.57 ? v3(1, 0, 0) : fabs(n.y) < 0.57 ? v3(0, 1, 0) : v3(0, 0, 1);
    *t1 = v3_normalize(v3_cross(n, a));
    *t2 = v3_cross(n, *t1);
}

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

static inline imp_mat3 m3_mul(imp_mat3 a, imp_mat3 b)
{
    imp_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}
static inline imp_mat3 m3_transpose(imp_mat3 a)
{
    imp_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r.m[i][j] = a.m[j][i];
    return r;
}
static inline imp_mat3 m3_add(imp_mat3 a, imp_mat3 b)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] += b.m[i][j];
    return a;
}
static inline imp_mat3 m3_scale(imp_mat3 a, double s)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a.m[i][j] *= s;
    return a;
}
static inline imp_mat3 m3_diag(double a, double b, double c)
{
    imp_mat3 r = {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
    return r;
}
static inline imp_vec3 m3_col(imp_mat3 a, int j) { return v3(a.m[0][j], a.m[1][j], a.m[2][j]); }
/* R A R^T: a body-frame tensor seen in the world frame (S3: I(t) = R(t) I_body R(t)^T) */
static inline imp_mat3 m3_rotate_tensor(imp_mat3 r, imp_mat3 a) { return m3_mul(m3_mul(r, a), m3_transpose(r)); }
static inline double m3_det(imp_mat3 a)
{
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
/* inverse by the adjugate; a singular matrix gives the zero matrix (an immovable axis) */
static inline imp_mat3 m3_inverse(imp_mat3 a)
{
    double d = m3_det(a);
    imp_mat3 r = {{{0}}};
    if (fabs(d) < 1e-300) return r;
    double s = 1.0 / d;
    r.m[0][0] = (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) * s;
    r.m[0][1] = (a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2]) * s;
    r.m[0][2] = (a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1]) * s;
    r.m[1][0] = (a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2]) * s;
    r.m[1][1] = (a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0]) * s;
    r.m[1][2] = (a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2]) * s;
    r.m[2][0] = (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]) * s;
    r.m[2][1] = (a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1]) * s;
    r.m[2][2] = (a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0]) * s;
    return r;
}

/* ---- quaternions (S3 "Quaternions vs. rotation matrices") ----------------------------------------
 * q = [s, v] = w + x i + y j + z k; a unit quaternion rotates by angle theta about the unit axis u as
 * q = [cos(theta/2), sin(theta/2) u]. Products compose rotations: q1 q2 rotates by q2, then q1:
 *     [s1, v1][s2, v2] = [s1 s2 - v1.v2,  s1 v2 + s2 v1 + v1 x v2]
 * q and -q are the same rotation. The rotation matrix of a unit q:
 *     R = | 1-2y^2-2z^2   2xy-2wz      2xz+2wy   |
 *         | 2xy+2wz       1-2x^2-2z^2  2yz-2wx   |
 *         | 2xz-2wy       2yz+2wx      1-2x^2-2y^2 | */
typedef struct imp_quat { double w, x, y, z; } imp_quat;

static inline imp_quat quat(double w, double x, double y, double z) { imp_quat q = {w, x, y, z}; return q; }
static inline imp_quat quat_identity(void) { return quat(1, 0, 0, 0); }
static inline imp_quat quat_mul(imp_quat a, imp_quat b)
{
    return quat(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                a.w * b.x + b.w * a.x + a.y * b.z - a.z * b.y,
                a.w * b.y + b.w * a.y + a.z * b.x - a.x * b.z,
                a.w * b.z + b.w * a.z + a.x * b.y - a.y * b.x);
}
static inline imp_quat quat_conj(imp_quat q) { return quat(q.w, -q.x, -q.y, -q.z); }
static inline double quat_len(imp_quat q) { return sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z); }
static inline imp_quat quat_normalize(imp_quat q)
{
    double l = quat_len(q);
    return l > 0 ? quat(q.w / l, q.x / l, q.y / l, q.z / l) : quat_identity();
}
static inline imp_quat quat_from_axis_angle(imp_vec3 axis, double angle)
{
    imp_vec3 u = v3_normalize(axis);
    double s = sin(0.5 * angle);
    return quat(cos(0.5 * angle), u.x * s, u.y * s, u.z * s);
}
static inline imp_mat3 quat_to_m3(imp_quat q)
{
    double w = q.w, x = q.x, y = q.y, z = q.z;
    imp_mat3 r = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                   {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                   {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    return r;
}
/* S3's matrix-to-quaternion: from the trace when it is positive, else from the largest diagonal
 * entry, so the square root never takes a small or negative argument */
static inline imp_quat quat_from_m3(imp_mat3 m)
{
    double tr = m.m[0][0] + m.m[1][1] + m.m[2][2];
    imp_quat q;
    if (tr >= 0) {
        double s = sqrt(tr + 1.0);
        q.w = 0.5 * s;
        s = 0.5 / s;
        q.x = (m.m[2][1] - m.m[1][2]) * s;
        q.y = (m.m[0][2] - m.m[2][0]) * s;
        q.z = (m.m[1][0] - m.m[0][1]) * s;
    } else {
        int i = 0;
        if (m.m[1][1] > m.m[0][0]) i = 1;
        if (m.m[2][2] > m.m[i][i]) i = 2;
        int j = (i + 1) % 3, k = (j + 1) % 3;
        double s = sqrt(m.m[i][i] - m.m[j][j] - m.m[k][k] + 1.0);
        double v[3];
        v[i] = 0.5 * s;
        s = 0.5 / s;
        v[j] = (m.m[i][j] + m.m[j][i]) * s;
        v[k] = (m.m[k][i] + m.m[i][k]) * s;
        q.w = (m.m[k][j] - m.m[j][k]) * s;
        q.x = v[0], q.y = v[1], q.z = v[2];
    }
    return q;
}
static inline imp_vec3 quat_rotate(imp_quat q, imp_vec3 v) { return m3_mul_v(quat_to_m3(q), v); }

/* ---- 3x3 blocks: row-major double[9], b[3 * row + col] ------------------------------------------------
 * The layout of the block-sparse matrices (sparse.h) and of the force elements' Jacobians, operated
 * on in place where imp_mat3 would copy. */
static inline void b3_add_outer(double *b, imp_vec3 u, imp_vec3 v, double s) /* b += s u v^T */
{
    const double U[3] = {u.x, u.y, u.z}, V[3] = {v.x, v.y, v.z};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) b[3 * r + c] += s * U[r] * V[c];
}
static inline void b3_add_diag(double *b, double s) { b[0] += s, b[4] += s, b[8] += s; } /* b += s I */
static inline void b3_add_skew(double *b, imp_vec3 u, double s) /* b += s [u]x, with [u]x v = u x v */
{
    b[1] += -s * u.z, b[2] += s * u.y;
    b[3] += s * u.z, b[5] += -s * u.x;
    b[6] += -s * u.y, b[7] += s * u.x;
}
static inline void b3_mul(const double *a, const double *b, double *out) /* out = a b (out apart from a, b) */
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c];
}
static inline void b3_transpose(const double *b, double *out)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out[3 * r + c] = b[3 * c + r];
}
static inline imp_vec3 b3_mul_v(const double *b, imp_vec3 v) /* b v */
{
    return v3(b[0] * v.x + b[1] * v.y + b[2] * v.z, b[3] * v.x + b[4] * v.y + b[5] * v.z,
              b[6] * v.x + b[7] * v.y + b[8] * v.z);
}
static inline imp_vec3 b3_mul_tv(const double *b, imp_vec3 v) /* b^T v */
{
    return v3(b[0] * v.x + b[3] * v.y + b[6] * v.z, b[1] * v.x + b[4] * v.y + b[7] * v.z,
              b[2] * v.x + b[5] * v.y + b[8] * v.z);
}

/* signed distance from p to the box of half extents h centred at the origin along the axes, and the
 * outward normal n there: outside, to the nearest surface point (the clamp of p); inside, minus the
 * depth to the nearest face, n that face's normal (the clamp without libm's calls: a NaN coordinate
 * clamps to -h, as fmax would) */
static inline double v3_box_distance(imp_vec3 p, imp_vec3 h, imp_vec3 *n)
{
    const double pc[3] = {p.x, p.y, p.z}, hh[3] = {h.x, h.y, h.z};
    double q[3];
    bool inside = true;
    for (int k = 0; k < 3; k++) {
        q[k] = pc[k] > -hh[k] ? pc[k] : -hh[k];
        q[k] = q[k] < hh[k] ? q[k] : hh[k];
        if (q[k] != pc[k]) inside = false;
    }
    if (!inside) {
        const imp_vec3 d = v3(pc[0] - q[0], pc[1] - q[1], pc[2] - q[2]);
        const double l = v3_len(d);
        *n = v3_scale(d, 1.0 / l);
        return l;
    }
    int best = 0;
    double depth = hh[0] - fabs(pc[0]);
    for (int k = 1; k < 3; k++)
        if (hh[k] - fabs(pc[k]) < depth) depth = hh[k] - fabs(pc[k]), best = k;
    double e[3] = {0, 0, 0};
    e[best] = pc[best] >= 0 ? 1 : -1;
    *n = v3(e[0], e[1], e[2]);
    return -depth;
}

#endif

/* render_math.h: the float vector and matrix helpers of the renderer (the GPU works in floats; the
 * engine's imp_math.h is in doubles). 4x4 matrices are column-major, like GL. */
#ifndef IMPETUS_RENDER_MATH_H
#define IMPETUS_RENDER_MATH_H

#include <math.h>
#include <string.h>

/* dot product of two 3-vectors */
static inline float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = a x b (out may not alias a or b) */
static inline void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* scale v to unit length in place; returns its former length */
static inline float normalize3(float v[3])
{
    float len = sqrtf(dot3(v, v));
    if (len > 0.0f) {
        v[0] /= len;
        v[1] /= len;
        v[2] /= len;
    }
    return len;
}

/* out = a * b for column-major 4x4 matrices (out may not alias a or b) */
static inline void mat4_mul(const float a[16], const float b[16], float out[16])
{
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + row] * b[col * 4 + k];
            out[col * 4 + row] = s;
        }
}

/* a view matrix from an orthonormal camera basis (right, up, forward) and the eye position */
static inline void mat4_view(const float right[3], const float up[3], const float fwd[3],
                             const float eye[3], float m[16])
{
    m[0] = right[0]; m[4] = right[1]; m[8]  = right[2]; m[12] = -dot3(right, eye);
    m[1] = up[0];    m[5] = up[1];    m[9]  = up[2];    m[13] = -dot3(up, eye);
    m[2] = -fwd[0];  m[6] = -fwd[1];  m[10] = -fwd[2];  m[14] = dot3(fwd, eye);
    m[3] = 0.0f;     m[7] = 0.0f;     m[11] = 0.0f;     m[15] = 1.0f;
}

/* a perspective projection (GL conventions, depth -1..1) */
static inline void mat4_perspective(float fovy, float aspect, float zn, float zf, float m[16])
{
    float f = 1.0f / tanf(fovy * 0.5f);
    memset(m, 0, 16 * sizeof(float));
    m[0] = f / aspect;
    m[5] = f;
    m[10] = (zf + zn) / (zn - zf);
    m[11] = -1.0f;
    m[14] = 2.0f * zf * zn / (zn - zf);
}

/* an orthographic projection of the box [l,r] x [b,t] x [-n,-f] in view space */
static inline void mat4_ortho(float l, float r, float b, float t, float n, float f, float m[16])
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = 2.0f / (r - l);
    m[5] = 2.0f / (t - b);
    m[10] = -2.0f / (f - n);
    m[12] = -(r + l) / (r - l);
    m[13] = -(t + b) / (t - b);
    m[14] = -(f + n) / (f - n);
    m[15] = 1.0f;
}

#endif

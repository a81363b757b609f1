/* render_view.c: the camera of the renderer. The host sets a perspective or an orthographic camera
 * (rnd_camera_3d, rnd_camera_2d) and the frame its drawable size (rnd_begin_frame); the view basis
 * and matrices follow from both, for drawing (render_frame.c hands the view down) and for turning
 * points into pixels and pixels into picking rays. Matrices are column-major, like GL. */
#include <math.h>
#include <string.h>

#include "render.h"
#include "render_math.h"
#include "render_view.h"

/* until the host sets its own: a perspective camera looking at the origin, and a 800 x 600 frame */
static RenderView V = {
    .cam = { .eye = { 6, 4, 8 }, .target = { 0, 0, 0 }, .up = { 0, 1, 0 },
             .fovy = 0.9f, .znear = 0.05f, .zfar = 500.0f },
    .width = 800,
    .height = 600,
};

/* store a perspective camera; matrices are built when the frame size is known */
void rnd_camera_3d(const float eye[3], const float target[3], const float up[3],
                   float fovy, float znear, float zfar)
{
    V.cam.ortho = 0;
    memcpy(V.cam.eye, eye, sizeof V.cam.eye);
    memcpy(V.cam.target, target, sizeof V.cam.target);
    memcpy(V.cam.up, up, sizeof V.cam.up);
    V.cam.fovy = fovy;
    V.cam.znear = znear;
    V.cam.zfar = zfar;
}

/* store an orthographic camera looking at the x-y plane from +z */
void rnd_camera_2d(float cx, float cy, float half_height)
{
    V.cam.ortho = 1;
    V.cam.cx = cx;
    V.cam.cy = cy;
    V.cam.half_height = half_height > 0.0f ? half_height : 1.0f;
}

void rndi_view_resize(int width, int height)
{
    V.width = width > 0 ? width : 1;
    V.height = height > 0 ? height : 1;
}

const RenderView *rndi_view(void)
{
    return &V;
}

/* turn a view-space direction into world space with the camera basis */
void rndi_view_to_world(const RenderView *v, const float dir[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = v->right[i] * dir[0] + v->up[i] * dir[1] - v->fwd[i] * dir[2];
    normalize3(out);
}

/* the orthographic camera looks down -z at (cx, cy) from depth_half above the plane z = 0 */
static void update_ortho(void)
{
    float hh = V.cam.half_height, hw = hh * V.aspect;
    V.depth_half = 1000.0f * hh;                   /* everything within +-1000 h of z = 0 is seen */
    const float right[3] = { 1, 0, 0 }, up[3] = { 0, 1, 0 }, fwd[3] = { 0, 0, -1 };
    memcpy(V.right, right, sizeof right);
    memcpy(V.up, up, sizeof up);
    memcpy(V.fwd, fwd, sizeof fwd);
    V.eye[0] = V.cam.cx;
    V.eye[1] = V.cam.cy;
    V.eye[2] = V.depth_half;
    mat4_view(V.right, V.up, V.fwd, V.eye, V.view);
    mat4_ortho(-hw, hw, -hh, hh, 0.0f, 2.0f * V.depth_half, V.proj);
}

/* the perspective camera: a right-handed basis from the eye towards the target and the up hint */
static void update_perspective(void)
{
    float fwd[3] = { V.cam.target[0] - V.cam.eye[0], V.cam.target[1] - V.cam.eye[1],
                     V.cam.target[2] - V.cam.eye[2] };
    if (normalize3(fwd) == 0.0f) {
        fwd[0] = 0.0f; fwd[1] = 0.0f; fwd[2] = -1.0f;
    }
    float right[3], up[3];
    cross3(fwd, V.cam.up, right);
    if (normalize3(right) < 1e-6f) {               /* up parallel to the view: pick another      */
        const float alt[3] = { fabsf(fwd[0]) < 0.9f ? 1.0f : 0.0f, 0.0f,
                               fabsf(fwd[0]) < 0.9f ? 0.0f : 1.0f };
        cross3(fwd, alt, right);
        normalize3(right);
    }
    cross3(right, fwd, up);
    memcpy(V.right, right, sizeof right);
    memcpy(V.up, up, sizeof up);
    memcpy(V.fwd, fwd, sizeof fwd);
    memcpy(V.eye, V.cam.eye, sizeof V.eye);
    V.tan_half_fovy = tanf(V.cam.fovy * 0.5f);
    mat4_view(V.right, V.up, V.fwd, V.eye, V.view);
    mat4_perspective(V.cam.fovy, V.aspect, V.cam.znear, V.cam.zfar, V.proj);
}

/* derive the camera basis and the view/projection matrices from the stored camera parameters and
 * the current frame size */
const RenderView *rndi_view_update(void)
{
    V.aspect = (V.width > 0 && V.height > 0) ? (float)V.width / (float)V.height : 1.0f;
    if (V.cam.ortho)
        update_ortho();
    else
        update_perspective();
    mat4_mul(V.proj, V.view, V.viewproj);
    return &V;
}

/* world point -> window pixel (origin top-left); 0 when the point is behind the camera */
int rnd_project(const float world[3], float *px, float *py)
{
    const RenderView *v = rndi_view_update();
    const float *m = v->viewproj;
    float clip[4];
    for (int row = 0; row < 4; row++)
        clip[row] = m[row] * world[0] + m[4 + row] * world[1] + m[8 + row] * world[2] + m[12 + row];
    if (clip[3] <= 1e-12f)
        return 0;
    float nx = clip[0] / clip[3], ny = clip[1] / clip[3];
    if (px)
        *px = (nx * 0.5f + 0.5f) * (float)v->width;
    if (py)
        *py = (0.5f - ny * 0.5f) * (float)v->height;
    return 1;
}

/* window pixel -> picking ray: from the eye (3D) or from the front of the view volume (2D) */
void rnd_unproject(float px, float py, float origin[3], float dir[3])
{
    const RenderView *v = rndi_view_update();
    float nx = 2.0f * px / (float)v->width - 1.0f;
    float ny = 1.0f - 2.0f * py / (float)v->height;
    if (v->cam.ortho) {
        origin[0] = v->cam.cx + nx * v->cam.half_height * v->aspect;
        origin[1] = v->cam.cy + ny * v->cam.half_height;
        origin[2] = v->depth_half;
        dir[0] = 0.0f; dir[1] = 0.0f; dir[2] = -1.0f;
    } else {
        const float d[3] = { nx * v->tan_half_fovy * v->aspect, ny * v->tan_half_fovy, -1.0f };
        memcpy(origin, v->eye, 3 * sizeof(float));
        rndi_view_to_world(v, d, dir);
    }
}

/* render_view.h: the view of a frame: the camera the host set, the drawable size, and what follows
 * from them (the camera basis, the view and projection matrices). It sits at the bottom of the
 * renderer beside render_gl.h: render_frame.c updates it once a frame and hands it to every drawing
 * file, which reads it and never asks the file above. Not part of the public API. */
#ifndef IMPETUS_RENDER_VIEW_H
#define IMPETUS_RENDER_VIEW_H

/* the camera as set by the host; matrices are derived from it and the frame size */
typedef struct {
    int ortho;                                     /* 1 after rnd_camera_2d                       */
    float eye[3], target[3], up[3], fovy, znear, zfar;
    float cx, cy, half_height;
} CameraParams;

typedef struct {
    CameraParams cam;
    int width, height;                             /* the drawable in pixels (rnd_begin_frame)    */
    /* derived by rndi_view_update() */
    float view[16], proj[16], viewproj[16];        /* column-major                                */
    float right[3], up[3], fwd[3], eye[3];         /* camera basis and position in world space    */
    float aspect, tan_half_fovy, depth_half;       /* depth_half: 2D eye height above z = 0       */
} RenderView;

/* the drawable size of the frame that begins (at least 1 x 1 pixel) */
void rndi_view_resize(int width, int height);
/* derive the basis and matrices from the camera and the size; returns the view */
const RenderView *rndi_view_update(void);
/* the view as of the last update (its size as of the last resize) */
const RenderView *rndi_view(void);
/* a view-space direction turned into world space with the camera basis, unit length */
void rndi_view_to_world(const RenderView *v, const float dir[3], float out[3]);

#endif

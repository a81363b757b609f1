/* render.h: the drawing layer of the impetus host (SDL2 window + OpenGL 3.3 core via libepoxy).
 *
 * The renderer knows nothing about the physics: callers hand it plain float arrays. Everything is
 * batched during a frame and drawn at rnd_end_frame() in this order: grid, lit solids (spheres,
 * boxes), lines, then the 2D overlay (rects and text) in call order. Coordinates are SI with y up.
 * All functions need a current GL 3.3 core context, made by the host before rnd_init().
 *
 * One header for the whole renderer; each group below is implemented by one file: lifetime, frame
 * and output by render_frame.c, the camera by render_view.c, the 3D batches and meshes by
 * render_3d.c, the overlay, flat world drawing and images by render_2d.c, text by text.c, and
 * rnd_error by render_gl.c (the error slot every file writes). */
#ifndef IMPETUS_RENDER_H
#define IMPETUS_RENDER_H

/* --- lifetime --------------------------------------------------------------------------------- */
int  rnd_init(void);                 /* compile shaders, build meshes, bake the font; 0 on success   */
const char *rnd_error(void);         /* message for the last failure of rnd_init / rnd_screenshot    */
void rnd_shutdown(void);
int  rnd_generation(void);           /* the open renderer's number (counts rnd_init), 0 when closed  */

/* --- frame ------------------------------------------------------------------------------------ */
void rnd_begin_frame(int width, int height, const float clear_rgb[3]); /* drawable size in pixels */
void rnd_end_frame(void);            /* draws every batch; the host swaps buffers afterwards        */

/* --- camera ------------------------------------------------------------------------------------ */
/* perspective camera looking from eye at target; fovy in radians */
void rnd_camera_3d(const float eye[3], const float target[3], const float up[3],
                   float fovy, float znear, float zfar);
/* orthographic camera on the x-y plane: centre (cx, cy), half_height metres visible above and below */
void rnd_camera_2d(float cx, float cy, float half_height);
/* world point -> window pixel (origin top-left); returns 0 when the point is behind the camera */
int  rnd_project(const float world[3], float *px, float *py);
/* window pixel -> ray origin and unit direction in world space (for picking) */
void rnd_unproject(float px, float py, float origin[3], float dir[3]);

/* --- 3D batches ---------------------------------------------------------------------------------- */
void rnd_grid(float half_extent, float spacing, float height); /* lines on the plane y = height (3D), the z = 0 plane across the whole view in 2D mode */
/* n lit spheres: xyzr = n*(x, y, z, radius), rgba = n*(r, g, b, a) (NULL: a default colour) */
void rnd_spheres(int n, const float *xyzr, const float *rgba);
/* n lit boxes: xform = n*12 floats (3x3 rotation column-major, then translation), half = n*3 half extents */
void rnd_boxes(int n, const float *xform, const float *half, const float *rgba);
void rnd_line(const float a[3], const float b[3], const float rgba[4]);
void rnd_line_xray(const float a[3], const float b[3], const float rgba[4]); /* drawn over the solids (debug views) */
/* ntri lit triangles in world space (hulls, meshes): pos and nrm hold 9 floats per triangle */
void rnd_triangles(int ntri, const float *pos, const float *nrm, const float rgba[4]);
/* a lit capsule: xform as for rnd_boxes (its core segment runs along the local y axis) */
void rnd_capsule(const float xform[12], float radius, float half_height, const float rgba[4]);

/* an infinite plane (the solid is behind the normal): a large lit quad in 3D, the solid half-plane in 2D */
void rnd_plane(const float point[3], const float normal[3], const float rgba[4]);
/* shadows of the key light on or off (on by default; drawn in 3D only) */
void rnd_shadows(int on);

/* --- 2D overlay (window pixels, origin top-left; drawn last, in call order) --------------------- */
void  rnd_rect(float x, float y, float w, float h, const float rgba[4]);
void  rnd_overlay_triangles(int ntri, const float *xy, const float rgba[4]);  /* xy: 6 floats each    */
/* an image: corners of its top-left, top-right, bottom-right, bottom-left (8 floats), tinted */
void  rnd_overlay_image(int image, const float corners[8], const float rgba[4]);
void  rnd_text(float x, float y, const char *utf8, const float rgba[4]); /* y = top of the line     */
float rnd_text_width(const char *utf8);
float rnd_line_height(void);
/* the same at a size in pixels (ascent - descent), baked on first use */
void  rnd_text_sized(float x, float y, const char *utf8, float pixels, const float rgba[4]);
float rnd_text_width_sized(const char *utf8, float pixels);
float rnd_line_height_sized(float pixels);
int   rnd_text_available(void);   /* 1 when a font was baked; text calls draw nothing otherwise     */

/* --- flat world drawing (unlit; layer 0 after the solids, 1 behind everything) ------------------ */
void  rnd_flat_triangles(int layer, int ntri, const float *xyz, const float rgba[4]); /* 9 floats each */
/* an image in the world: corners xyz of its top-left, top-right, bottom-right, bottom-left */
void  rnd_flat_image(int layer, int image, const float corners[12], const float rgba[4]);
void  rnd_wide_line(const float a[3], const float b[3], float width_pixels, const float rgba[4]);

/* --- images ---------------------------------------------------------------------------------------- */
int   rnd_image_create(int w, int h, const unsigned char *rgba); /* a texture id > 0, or 0 (rnd_error) */
void  rnd_image_destroy(int image);

/* --- meshes ------------------------------------------------------------------------------------ */
/* a lit, two-sided, smooth-shaded triangle mesh (cloth): nverts vertices with positions xyz and
 * unit normals (3 floats each), ntris triangles (3 vertex indices each); rgba colours the side the
 * normals point to, back_rgba the other side (NULL: the same). Drawn with the lit solids. */
void rnd_mesh(int nverts, const float *xyz, const float *normals, int ntris, const unsigned *indices,
              const float rgba[4], const float back_rgba[4]);

/* --- output -------------------------------------------------------------------------------------- */
/* read the current back buffer (after rnd_end_frame, before the swap) and write it as a PNG */
int  rnd_screenshot(const char *path, int width, int height);

#endif

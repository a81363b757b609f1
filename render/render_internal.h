/* render_internal.h: what the renderer's files (render.c, render_gl.c, render_2d.c, shadow.c, text.c)
 * share. Not part of the public API. */
#ifndef IMPETUS_RENDER_INTERNAL_H
#define IMPETUS_RENDER_INTERNAL_H

#include <stddef.h>
#include <epoxy/gl.h>

/* --- render_gl.c --------------------------------------------------------------------------------- */
/* a growable array of floats; len and cap count floats */
typedef struct {
    float *data;
    size_t len, cap;
} FloatArray;

/* a GL buffer that is refilled every frame; cap counts bytes */
typedef struct {
    GLuint id;
    size_t cap;
} StreamBuffer;

/* reserve n more floats at the end of a; returns where to write them, NULL when out of memory */
float *rndi_farray_push(FloatArray *a, size_t n);
void rndi_farray_free(FloatArray *a);
/* copy bytes into a streamed buffer (grown by doubling, else orphaned); leaves it bound to GL_ARRAY_BUFFER */
void rndi_stream_upload(StreamBuffer *b, const void *data, size_t bytes);
/* compile and link a vertex + fragment program; 0 (and an rnd_error message) on failure */
GLuint rndi_link_program(const char *vs_src, const char *fs_src, const char *name);
/* a VAO over one streamed buffer of interleaved float attributes with the given sizes */
GLuint rndi_build_stream_vao(StreamBuffer *buf, const int *sizes, int nattr);
void rndi_delete_buffer(GLuint *id);  /* each: delete if it exists, and zero the name */
void rndi_delete_vao(GLuint *id);
void rndi_delete_program(GLuint *id);

/* --- render.c ------------------------------------------------------------------------------------ */
/* record a message for rnd_error() (printf-style) */
void rndi_set_error(const char *fmt, ...);
/* the current view: viewproj (column-major), frame size, 1 for the 2D camera */
const float *rndi_viewproj(void);
int rndi_width(void);
int rndi_height(void);
int rndi_ortho(void);

/* --- render_2d.c: the overlay, flat world shapes, wide lines, images ------------------------------- */
int  rndi_2d_init(void);
void rndi_2d_shutdown(void);
void rndi_2d_begin_frame(void);
void rndi_2d_draw_back(void);     /* after the clear: the world's back layer                         */
void rndi_2d_draw_world(void);    /* after the solids: flat world shapes, images and wide lines       */
void rndi_2d_draw_overlay(void);  /* last: the screen overlay in call order                           */
/* append one overlay quad in window pixels: kind 0 solid colour, 1 font coverage (texture's red
 * channel), 2 image (texture's RGBA times the colour) */
enum { RNDI_SOLID = 0, RNDI_FONT = 1, RNDI_IMAGE = 2 };
void rndi_overlay_quad(GLuint texture, int kind, float x0, float y0, float x1, float y1,
                       float u0, float v0, float u1, float v1, const float rgba[4]);

/* --- text.c -------------------------------------------------------------------------------------- */
/* load the font and bake the default size; never fails for a missing font (text is then disabled) */
int    rndi_text_init(void);
void   rndi_text_shutdown(void);
int    rndi_text_ok(void);            /* 1 when a font was found                                    */

#endif

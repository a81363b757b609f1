/* render_internal.h: what render.c and text.c share. Not part of the public API. */
#ifndef IMPETUS_RENDER_INTERNAL_H
#define IMPETUS_RENDER_INTERNAL_H

#include <stddef.h>
#include <epoxy/gl.h>

/* --- render.c ------------------------------------------------------------------------------------ */
/* append one overlay quad in window pixels; u0 < 0 means "solid colour, no texture" */
void rndi_overlay_quad(float x0, float y0, float x1, float y1,
                       float u0, float v0, float u1, float v1, const float rgba[4]);
/* record a message for rnd_error() (printf-style) */
void rndi_set_error(const char *fmt, ...);

/* --- text.c -------------------------------------------------------------------------------------- */
/* bake the font into a GL texture; never fails for a missing font (text is then disabled) */
int    rndi_text_init(void);
void   rndi_text_shutdown(void);
GLuint rndi_text_texture(void);       /* the R8 atlas (a 1x1 texel when no font was found)          */
int    rndi_text_ok(void);            /* 1 when a font was baked                                    */

#endif

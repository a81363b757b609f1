/* render_2d.h: the flat drawing of the renderer (render_2d.c): the screen overlay, flat world shapes,
 * wide lines and images. render_frame.c drives it and hands it the view; text.c adds glyph quads to
 * its overlay; its rnd_* calls are in render.h. Not part of the public API. */
#ifndef IMPETUS_RENDER_2D_H
#define IMPETUS_RENDER_2D_H

#include <epoxy/gl.h>

#include "render_view.h"

int  rndi_2d_init(void);
void rndi_2d_shutdown(void);
void rndi_2d_begin_frame(void);
void rndi_2d_draw_back(const RenderView *v);    /* after the clear: the world's back layer           */
void rndi_2d_draw_world(const RenderView *v);   /* after the solids: flat world shapes, images, wide lines */
void rndi_2d_draw_overlay(const RenderView *v); /* last: the screen overlay in call order              */

/* append one overlay quad in window pixels: kind 0 solid colour, 1 font coverage (texture's red
 * channel), 2 image (texture's RGBA times the colour) */
enum { RNDI_SOLID = 0, RNDI_FONT = 1, RNDI_IMAGE = 2 };
void rndi_overlay_quad(GLuint texture, int kind, float x0, float y0, float x1, float y1,
                       float u0, float v0, float u1, float v1, const float rgba[4]);

#endif

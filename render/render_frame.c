/* render_frame.c: the renderer's lifetime and its frame. rnd_init builds every part, rnd_begin_frame
 * empties their batches, rnd_end_frame updates the view once and hands it to each pass in order: the
 * world's back layer (render_2d.c), the lit world (render_3d.c), the flat world drawing, then the
 * screen overlay (render_2d.c, text.c). rnd_screenshot reads the frame back.
 *
 * The renderer's files depend one way, each on files below it only:
 *
 *   render_frame.c                    lifetime, the passes of a frame in order, screenshots
 *   render_3d.c        text.c         the lit world | fonts as glyph quads of the overlay
 *                      render_2d.c    the overlay, flat world shapes, wide lines, images
 *   render_view.c                     camera + drawable size -> basis, matrices, project/unproject
 *   render_gl.c        render_math.h  GL plumbing and the error slot | float vectors and matrices
 *
 * render.h, the public API, declares what each of them offers the host (gfx_lua.c, gfx_draw.c,
 * gfx_bodies.c); none of them calls the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "render.h"
#include "render_2d.h"
#include "render_3d.h"
#include "render_gl.h"
#include "render_view.h"
#include "text.h"

static struct {
    int ready;
    int generation;                  /* counts the renderers opened (rnd_generation)                */
} F;

/* ================================================================================================
 * lifetime
 * ================================================================================================ */

/* compile shaders, build meshes and buffers, bake the font; 0 on success */
int rnd_init(void)
{
    if (F.ready)
        return 0;
    rndi_clear_error();
    if (epoxy_gl_version() < 33) {
        rndi_set_error("rnd_init: OpenGL 3.3 is required, the context offers %d.%d",
                       epoxy_gl_version() / 10, epoxy_gl_version() % 10);
        return 1;
    }
    rndi_text_init();                /* never fails: a missing font only disables text             */
    if (rndi_3d_init() != 0 || rndi_2d_init() != 0) {
        rnd_shutdown();
        return 1;
    }
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        rndi_set_error("rnd_init: GL error 0x%04x while creating resources", (unsigned)err);
        rnd_shutdown();
        return 1;
    }
    F.ready = 1;
    F.generation++;
    return 0;
}

/* free every GL object and every batch array; safe to call more than once */
void rnd_shutdown(void)
{
    rndi_3d_shutdown();
    rndi_text_shutdown();
    rndi_2d_shutdown();
    F.ready = 0;
}

/* the open renderer's number: images made under another one are gone with its GL context */
int rnd_generation(void)
{
    return F.ready ? F.generation : 0;
}

/* ================================================================================================
 * frame
 * ================================================================================================ */

/* start a frame: remember the drawable size, empty the batches, set the viewport, clear colour and
 * depth */
void rnd_begin_frame(int width, int height, const float clear_rgb[3])
{
    rndi_view_resize(width, height);
    rndi_3d_begin_frame();
    rndi_2d_begin_frame();
    const RenderView *v = rndi_view();
    glViewport(0, 0, v->width, v->height);
    if (clear_rgb)
        glClearColor(clear_rgb[0], clear_rgb[1], clear_rgb[2], 1.0f);
    else
        glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glDepthMask(GL_TRUE);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

/* draw every queued batch: the shadow map first (when shadows are on), then the back layer, the lit
 * world, the flat world drawing and the overlay */
void rnd_end_frame(void)
{
    if (!F.ready)
        return;
    const RenderView *v = rndi_view_update();
    rndi_3d_prepare(v);
    glViewport(0, 0, v->width, v->height);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_TRUE);

    rndi_2d_draw_back(v);            /* the world's back layer (backgrounds), under everything     */
    rndi_3d_draw(v);                 /* grid, planes, lit solids, meshes, lines                    */
    rndi_2d_draw_world(v);           /* flat world shapes, images and wide lines                   */
    rndi_2d_draw_overlay(v);         /* the screen overlay, in call order, over everything         */

    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glUseProgram(0);
}

/* ================================================================================================
 * output
 * ================================================================================================ */

/* read the back buffer and write it as an upright, opaque RGBA PNG; 0 on success */
int rnd_screenshot(const char *path, int width, int height)
{
    if (!path || width <= 0 || height <= 0) {
        rndi_set_error("rnd_screenshot: bad arguments (path %s, %dx%d)", path ? path : "NULL", width, height);
        return 1;
    }
    size_t row = (size_t)width * 4;
    unsigned char *pixels = malloc(row * (size_t)height);
    unsigned char *flipped = malloc(row * (size_t)height);
    if (!pixels || !flipped) {
        free(pixels);
        free(flipped);
        rndi_set_error("rnd_screenshot: out of memory for %dx%d pixels", width, height);
        return 1;
    }
    while (glGetError() != GL_NO_ERROR)
        ;                            /* drop stale errors so the check below is ours              */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        free(pixels);
        free(flipped);
        rndi_set_error("rnd_screenshot: glReadPixels failed (GL error 0x%04x)", (unsigned)err);
        return 1;
    }
    /* GL rows go bottom-up, PNG rows top-down; force alpha opaque */
    for (int y = 0; y < height; y++) {
        unsigned char *dst = flipped + (size_t)y * row;
        memcpy(dst, pixels + (size_t)(height - 1 - y) * row, row);
        for (size_t x = 3; x < row; x += 4)
            dst[x] = 255;
    }
    int ok = stbi_write_png(path, width, height, 4, flipped, (int)row);
    free(pixels);
    free(flipped);
    if (!ok) {
        rndi_set_error("rnd_screenshot: could not write %s", path);
        return 1;
    }
    return 0;
}

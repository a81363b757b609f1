/* render_2d.c: flat drawing for games, batched per frame like the rest of the renderer.
 *
 *   the screen overlay   triangles in window pixels (origin top-left), solid, font glyphs or images,
 *                        drawn last, in call order
 *   the flat world       unlit triangles in world space (shapes, images), in two layers: "back" is drawn
 *                        right after the clear without writing depth (backgrounds: the solids cover it),
 *                        "world" after the solids: depth-tested in 3D, over the solids in call order
 *                        with the 2D camera (as a 2D game paints sprites over its bodies)
 *   wide lines           world segments a given number of pixels wide: each is a quad spread across
 *                        the segment's direction on the screen by the vertex shader (GL 3.3 core draws
 *                        no lines wider than 1 px); in 2D, over the solids like the flat world
 *   images               RGBA textures (rnd_image_create), linear filtering with mipmaps
 *
 * Every vertex carries a kind: 0 solid colour, 1 font (coverage in the texture's red channel), 2 image
 * (texture RGBA times the colour); a draw command is a run of vertices sharing one texture. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#include "render.h"
#include "render_internal.h"

#define OV_VFLOATS   9               /* x y, u v, r g b a, kind                                     */
#define FLAT_VFLOATS 10              /* x y z, u v, r g b a, kind                                   */
#define WIDE_VFLOATS 12              /* x y z, other end x y z, side, width, r g b a                */

typedef struct {
    GLuint texture;                  /* 0: no texture                                               */
    size_t first, count;             /* vertices                                                    */
} DrawCmd;

typedef struct {
    DrawCmd *cmd;
    size_t n, cap;
} CmdList;

/* a batch: vertices plus the runs that share a texture */
typedef struct {
    FloatArray verts;
    CmdList cmds;
    int vfloats;
} Batch;

static const char *overlay_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec2 a_pos;\n"
    "layout(location = 1) in vec2 a_uv;\n"
    "layout(location = 2) in vec4 a_color;\n"
    "layout(location = 3) in float a_kind;\n"
    "uniform vec2 u_screen;\n"
    "out vec2 v_uv;\n"
    "out vec4 v_color;\n"
    "flat out int v_kind;\n"
    "void main() {\n"
    "    v_uv = a_uv;\n"
    "    v_color = a_color;\n"
    "    v_kind = int(a_kind + 0.5);\n"
    "    gl_Position = vec4(2.0 * a_pos.x / u_screen.x - 1.0, 1.0 - 2.0 * a_pos.y / u_screen.y, 0.0, 1.0);\n"
    "}\n";

static const char *flat_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec2 a_uv;\n"
    "layout(location = 2) in vec4 a_color;\n"
    "layout(location = 3) in float a_kind;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec2 v_uv;\n"
    "out vec4 v_color;\n"
    "flat out int v_kind;\n"
    "void main() {\n"
    "    v_uv = a_uv;\n"
    "    v_color = a_color;\n"
    "    v_kind = int(a_kind + 0.5);\n"
    "    gl_Position = u_viewproj * vec4(a_pos, 1.0);\n"
    "}\n";

/* shared by the overlay and the flat world: fully transparent fragments write no depth */
static const char *flat_fs =
    "#version 330 core\n"
    "in vec2 v_uv;\n"
    "in vec4 v_color;\n"
    "flat in int v_kind;\n"
    "uniform sampler2D u_texture;\n"
    "out vec4 o_color;\n"
    "void main() {\n"
    "    vec4 c = v_color;\n"
    "    if (v_kind == 1) c.a *= texture(u_texture, v_uv).r;\n"
    "    else if (v_kind == 2) c *= texture(u_texture, v_uv);\n"
    "    if (c.a < 0.004) discard;\n"
    "    o_color = c;\n"
    "}\n";

/* a wide segment: this end and the other in clip space (each moved onto the near plane when behind
 * the eye), the segment's direction in pixels, and this corner pushed half the width across it and
 * half the width past the end (square caps, so polylines close their joints) */
static const char *wide_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_other;\n"
    "layout(location = 2) in float a_side;\n"
    "layout(location = 3) in float a_width;\n"
    "layout(location = 4) in vec4 a_color;\n"
    "uniform mat4 u_viewproj;\n"
    "uniform vec2 u_viewport;\n"
    "out vec4 v_color;\n"
    "void main() {\n"
    "    vec4 a = u_viewproj * vec4(a_pos, 1.0);\n"
    "    vec4 b = u_viewproj * vec4(a_other, 1.0);\n"
    "    const float near_w = 1e-3;\n"
    "    if (a.w < near_w && b.w > near_w) a = mix(a, b, (near_w - a.w) / (b.w - a.w));\n"
    "    if (b.w < near_w && a.w > near_w) b = mix(b, a, (near_w - b.w) / (a.w - b.w));\n"
    "    vec2 half_vp = 0.5 * u_viewport;\n"
    "    vec2 d = b.xy / b.w * half_vp - a.xy / a.w * half_vp;\n"
    "    float l = length(d);\n"
    "    d = l > 1e-6 ? d / l : vec2(1.0, 0.0);\n"
    "    vec2 n = vec2(-d.y, d.x);\n"
    "    vec2 offset = (n * a_side - d) * 0.5 * a_width;\n"
    "    a.xy += offset / half_vp * a.w;\n"
    "    v_color = a_color;\n"
    "    gl_Position = a;\n"
    "}\n";

static const char *wide_fs =
    "#version 330 core\n"
    "in vec4 v_color;\n"
    "out vec4 o_color;\n"
    "void main() { o_color = v_color; }\n";

static struct {
    GLuint prog_overlay, prog_flat, prog_wide;
    GLint u_overlay_screen, u_overlay_texture, u_flat_viewproj, u_flat_texture, u_wide_viewproj, u_wide_viewport;
    GLuint vao_overlay, vao_back, vao_flat, vao_wide;
    StreamBuffer buf_overlay, buf_back, buf_flat, buf_wide;
    Batch overlay, back, flat;
    FloatArray wide;
} D;

static const float white[4] = { 1, 1, 1, 1 };

/* ---- batches ------------------------------------------------------------------------------------- */

/* reserve nverts vertices drawn with `texture`; extends the last run when it has the same texture */
static float *batch_push(Batch *b, GLuint texture, size_t nverts)
{
    size_t first = b->verts.len / (size_t)b->vfloats;
    float *out = rndi_farray_push(&b->verts, nverts * (size_t)b->vfloats);
    if (!out)
        return NULL;
    CmdList *c = &b->cmds;
    if (c->n > 0 && c->cmd[c->n - 1].texture == texture) {
        c->cmd[c->n - 1].count += nverts;
        return out;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        DrawCmd *p = realloc(c->cmd, cap * sizeof *p);
        if (!p) {
            b->verts.len -= nverts * (size_t)b->vfloats;
            return NULL;
        }
        c->cmd = p;
        c->cap = cap;
    }
    c->cmd[c->n++] = (DrawCmd){ texture, first, nverts };
    return out;
}

static void batch_clear(Batch *b)
{
    b->verts.len = 0;
    b->cmds.n = 0;
}

static void batch_free(Batch *b)
{
    rndi_farray_free(&b->verts);
    free(b->cmds.cmd);
    memset(&b->cmds, 0, sizeof b->cmds);
}

/* draw a batch's runs, binding each run's texture to unit 0 */
static void batch_draw(Batch *b, StreamBuffer *buf, GLuint vao)
{
    if (!b->verts.len)
        return;
    glBindVertexArray(vao);
    rndi_stream_upload(buf, b->verts.data, b->verts.len * sizeof(float));
    glActiveTexture(GL_TEXTURE0);
    for (size_t i = 0; i < b->cmds.n; i++) {
        const DrawCmd *c = &b->cmds.cmd[i];
        glBindTexture(GL_TEXTURE_2D, c->texture);
        glDrawArrays(GL_TRIANGLES, (GLint)c->first, (GLsizei)c->count);
    }
    glBindTexture(GL_TEXTURE_2D, 0);
}

/* ---- lifetime ------------------------------------------------------------------------------------ */

int rndi_2d_init(void)
{
    D.prog_overlay = rndi_link_program(overlay_vs, flat_fs, "overlay");
    D.prog_flat = D.prog_overlay ? rndi_link_program(flat_vs, flat_fs, "flat") : 0;
    D.prog_wide = D.prog_flat ? rndi_link_program(wide_vs, wide_fs, "wide lines") : 0;
    if (!D.prog_wide)
        return 1;
    D.u_overlay_screen = glGetUniformLocation(D.prog_overlay, "u_screen");
    D.u_overlay_texture = glGetUniformLocation(D.prog_overlay, "u_texture");
    D.u_flat_viewproj = glGetUniformLocation(D.prog_flat, "u_viewproj");
    D.u_flat_texture = glGetUniformLocation(D.prog_flat, "u_texture");
    D.u_wide_viewproj = glGetUniformLocation(D.prog_wide, "u_viewproj");
    D.u_wide_viewport = glGetUniformLocation(D.prog_wide, "u_viewport");
    static const int overlay_attrs[4] = { 2, 2, 4, 1 }, flat_attrs[4] = { 3, 2, 4, 1 }, wide_attrs[5] = { 3, 3, 1, 1, 4 };
    D.vao_overlay = rndi_build_stream_vao(&D.buf_overlay, overlay_attrs, 4);
    D.vao_back = rndi_build_stream_vao(&D.buf_back, flat_attrs, 4);
    D.vao_flat = rndi_build_stream_vao(&D.buf_flat, flat_attrs, 4);
    D.vao_wide = rndi_build_stream_vao(&D.buf_wide, wide_attrs, 5);
    D.overlay.vfloats = OV_VFLOATS;
    D.back.vfloats = D.flat.vfloats = FLAT_VFLOATS;
    return 0;
}

void rndi_2d_shutdown(void)
{
    rndi_delete_program(&D.prog_overlay);
    rndi_delete_program(&D.prog_flat);
    rndi_delete_program(&D.prog_wide);
    rndi_delete_vao(&D.vao_overlay);
    rndi_delete_vao(&D.vao_back);
    rndi_delete_vao(&D.vao_flat);
    rndi_delete_vao(&D.vao_wide);
    rndi_delete_buffer(&D.buf_overlay.id);
    rndi_delete_buffer(&D.buf_back.id);
    rndi_delete_buffer(&D.buf_flat.id);
    rndi_delete_buffer(&D.buf_wide.id);
    D.buf_overlay.cap = D.buf_back.cap = D.buf_flat.cap = D.buf_wide.cap = 0;
    batch_free(&D.overlay);
    batch_free(&D.back);
    batch_free(&D.flat);
    rndi_farray_free(&D.wide);
}

void rndi_2d_begin_frame(void)
{
    batch_clear(&D.overlay);
    batch_clear(&D.back);
    batch_clear(&D.flat);
    D.wide.len = 0;
}

/* ---- drawing ------------------------------------------------------------------------------------- */

static void set_flat_program(void)
{
    glUseProgram(D.prog_flat);
    glUniformMatrix4fv(D.u_flat_viewproj, 1, GL_FALSE, rndi_viewproj());
    glUniform1i(D.u_flat_texture, 0);
}

void rndi_2d_draw_back(void)
{
    if (!D.back.verts.len)
        return;
    glDisable(GL_CULL_FACE);
    glDisable(GL_DEPTH_TEST);
    set_flat_program();
    batch_draw(&D.back, &D.buf_back, D.vao_back);
    glEnable(GL_DEPTH_TEST);
}

void rndi_2d_draw_world(void)
{
    if (!D.flat.verts.len && !D.wide.len)
        return;
    glDisable(GL_CULL_FACE);
    if (rndi_ortho())
        glDisable(GL_DEPTH_TEST);    /* 2D: painted over the bodies in call order                  */
    if (D.flat.verts.len) {
        set_flat_program();
        batch_draw(&D.flat, &D.buf_flat, D.vao_flat);
    }
    if (D.wide.len) {
        glUseProgram(D.prog_wide);
        glUniformMatrix4fv(D.u_wide_viewproj, 1, GL_FALSE, rndi_viewproj());
        glUniform2f(D.u_wide_viewport, (float)rndi_width(), (float)rndi_height());
        glBindVertexArray(D.vao_wide);
        rndi_stream_upload(&D.buf_wide, D.wide.data, D.wide.len * sizeof(float));
        glDrawArrays(GL_TRIANGLES, 0, (GLsizei)(D.wide.len / WIDE_VFLOATS));
    }
    glEnable(GL_DEPTH_TEST);
}

void rndi_2d_draw_overlay(void)
{
    if (!D.overlay.verts.len)
        return;
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glDisable(GL_CULL_FACE);
    glUseProgram(D.prog_overlay);
    glUniform2f(D.u_overlay_screen, (float)rndi_width(), (float)rndi_height());
    glUniform1i(D.u_overlay_texture, 0);
    batch_draw(&D.overlay, &D.buf_overlay, D.vao_overlay);
    glDepthMask(GL_TRUE);
    glEnable(GL_DEPTH_TEST);
}

/* ---- the overlay ----------------------------------------------------------------------------------- */

static void put_ov(float *o, float x, float y, float u, float v, const float c[4], int kind)
{
    o[0] = x, o[1] = y, o[2] = u, o[3] = v;
    memcpy(o + 4, c, 4 * sizeof(float));
    o[8] = (float)kind;
}

void rndi_overlay_quad(GLuint texture, int kind, float x0, float y0, float x1, float y1,
                       float u0, float v0, float u1, float v1, const float rgba[4])
{
    float *o = batch_push(&D.overlay, texture, 6);
    if (!o)
        return;
    const float c[6][4] = { { x0, y0, u0, v0 }, { x0, y1, u0, v1 }, { x1, y1, u1, v1 },
                            { x0, y0, u0, v0 }, { x1, y1, u1, v1 }, { x1, y0, u1, v0 } };
    for (int k = 0; k < 6; k++)
        put_ov(o + k * OV_VFLOATS, c[k][0], c[k][1], c[k][2], c[k][3], rgba, kind);
}

/* a filled axis-aligned rectangle in window pixels */
void rnd_rect(float x, float y, float w, float h, const float rgba[4])
{
    static const float dim[4] = { 0, 0, 0, 0.6f };
    if (!(w > 0.0f) || !(h > 0.0f))
        return;
    rndi_overlay_quad(0, RNDI_SOLID, x, y, x + w, y + h, 0, 0, 0, 0, rgba ? rgba : dim);
}

/* ntri solid triangles in window pixels: xy holds 6 floats per triangle */
void rnd_overlay_triangles(int ntri, const float *xy, const float rgba[4])
{
    if (ntri <= 0 || !xy)
        return;
    float *o = batch_push(&D.overlay, 0, 3 * (size_t)ntri);
    if (!o)
        return;
    for (int v = 0; v < 3 * ntri; v++)
        put_ov(o + (size_t)v * OV_VFLOATS, xy[2 * v], xy[2 * v + 1], 0, 0, rgba ? rgba : white, RNDI_SOLID);
}

/* an image on the screen: corners xy (4 x 2 floats, in order: the image's top-left, top-right,
 * bottom-right, bottom-left), tinted by rgba */
void rnd_overlay_image(int image, const float corners[8], const float rgba[4])
{
    if (image <= 0)
        return;
    float *o = batch_push(&D.overlay, (GLuint)image, 6);
    if (!o)
        return;
    static const float uv[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 0, 1 } };
    static const int order[6] = { 0, 1, 2, 0, 2, 3 };
    for (int k = 0; k < 6; k++) {
        int i = order[k];
        put_ov(o + k * OV_VFLOATS, corners[2 * i], corners[2 * i + 1], uv[i][0], uv[i][1], rgba ? rgba : white, RNDI_IMAGE);
    }
}

/* ---- the flat world ---------------------------------------------------------------------------------- */

static void put_flat(float *o, const float p[3], float u, float v, const float c[4], int kind)
{
    memcpy(o, p, 3 * sizeof(float));
    o[3] = u, o[4] = v;
    memcpy(o + 5, c, 4 * sizeof(float));
    o[9] = (float)kind;
}

/* ntri unlit triangles in world space (xyz: 9 floats per triangle); layer 0 world, 1 back */
void rnd_flat_triangles(int layer, int ntri, const float *xyz, const float rgba[4])
{
    if (ntri <= 0 || !xyz)
        return;
    float *o = batch_push(layer ? &D.back : &D.flat, 0, 3 * (size_t)ntri);
    if (!o)
        return;
    for (int v = 0; v < 3 * ntri; v++)
        put_flat(o + (size_t)v * FLAT_VFLOATS, xyz + 3 * (size_t)v, 0, 0, rgba ? rgba : white, RNDI_SOLID);
}

/* an image in the world: corners xyz (4 x 3 floats: the image's top-left, top-right, bottom-right,
 * bottom-left), tinted by rgba; layer 0 world, 1 back */
void rnd_flat_image(int layer, int image, const float corners[12], const float rgba[4])
{
    if (image <= 0)
        return;
    float *o = batch_push(layer ? &D.back : &D.flat, (GLuint)image, 6);
    if (!o)
        return;
    static const float uv[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 0, 1 } };
    static const int order[6] = { 0, 1, 2, 0, 2, 3 };
    for (int k = 0; k < 6; k++) {
        int i = order[k];
        put_flat(o + k * FLAT_VFLOATS, corners + 3 * i, uv[i][0], uv[i][1], rgba ? rgba : white, RNDI_IMAGE);
    }
}

/* a world segment `width` pixels wide */
void rnd_wide_line(const float a[3], const float b[3], float width, const float rgba[4])
{
    if (!(width > 0.0f))
        return;
    float *o = rndi_farray_push(&D.wide, 6 * WIDE_VFLOATS);
    if (!o)
        return;
    if (!rgba)
        rgba = white;
    /* corners (end, side): the b end's side is negated because its direction points back to a */
    const float *ends[6] = { a, a, b, a, b, b }, *others[6] = { b, b, a, b, a, a };
    static const float sides[6] = { 1, -1, -1, 1, -1, 1 };
    for (int k = 0; k < 6; k++, o += WIDE_VFLOATS) {
        memcpy(o, ends[k], 3 * sizeof(float));
        memcpy(o + 3, others[k], 3 * sizeof(float));
        o[6] = sides[k];
        o[7] = width;
        memcpy(o + 8, rgba, 4 * sizeof(float));
    }
}

/* ---- images ------------------------------------------------------------------------------------------ */

/* a texture from w x h RGBA pixels (rows top-down); its id (> 0), or 0 on failure */
int rnd_image_create(int w, int h, const unsigned char *rgba)
{
    if (w <= 0 || h <= 0 || !rgba)
        return 0;
    GLint max_size = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    if (w > max_size || h > max_size) {
        rndi_set_error("rnd_image_create: %dx%d is larger than the GPU's largest texture (%d)", w, h, (int)max_size);
        return 0;
    }
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glGenerateMipmap(GL_TEXTURE_2D);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return (int)tex;
}

void rnd_image_destroy(int image)
{
    if (image > 0) {
        GLuint tex = (GLuint)image;
        glDeleteTextures(1, &tex);
    }
}

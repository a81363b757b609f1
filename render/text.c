/* text.c: bakes a monospace TrueType font into a single-channel GL texture with stb_truetype and
 * turns strings into overlay quads (drawn by render.c together with rnd_rect, in call order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

#include "render.h"
#include "render_internal.h"

#define FONT_PIXELS  16.0f           /* ascent - descent in pixels                                 */
#define FIRST_CHAR   32              /* ' '                                                        */
#define NUM_CHARS    95              /* ' ' .. '~'                                                 */
#define ATLAS_W      512
#define ATLAS_H      256
#define LEADING      2.0f            /* extra pixels between lines so they don't touch             */

static const char *font_paths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
};

static struct {
    int ok;                          /* a font was baked                                           */
    GLuint texture;
    stbtt_bakedchar chars[NUM_CHARS];
    float ascent;                    /* baseline offset below the top of a line, pixels            */
    float line_height;               /* distance between two baselines, pixels                     */
} text;

/* read a whole file into a malloc'ed buffer; NULL when it cannot be read */
static unsigned char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *data = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > 0 && fseek(f, 0, SEEK_SET) == 0) {
            data = malloc((size_t)size);
            if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
                free(data);
                data = NULL;
            }
        }
    }
    fclose(f);
    return data;
}

/* bake one font file into bitmap; returns 1 on success and fills the metrics */
static int bake_font(const unsigned char *ttf, unsigned char *bitmap)
{
    stbtt_fontinfo info;
    if (!stbtt_InitFont(&info, ttf, stbtt_GetFontOffsetForIndex(ttf, 0)))
        return 0;
    if (stbtt_BakeFontBitmap(ttf, 0, FONT_PIXELS, bitmap, ATLAS_W, ATLAS_H,
                             FIRST_CHAR, NUM_CHARS, text.chars) <= 0)
        return 0;                    /* <= 0: not every glyph fitted                               */
    int ascent, descent, gap;
    stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
    float scale = stbtt_ScaleForPixelHeight(&info, FONT_PIXELS);
    text.ascent = roundf((float)ascent * scale);
    text.line_height = ceilf((float)(ascent - descent + gap) * scale) + LEADING;
    return 1;
}

/* create the R8 texture from a w x h single-channel bitmap */
static GLuint make_texture(const unsigned char *pixels, int w, int h)
{
    GLuint tex;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, w, h, 0, GL_RED, GL_UNSIGNED_BYTE, pixels);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

/* try the font files in order; a missing font only disables text (recorded for rnd_error) */
int rndi_text_init(void)
{
    memset(&text, 0, sizeof text);
    text.line_height = ceilf(FONT_PIXELS * 1.2f);

    unsigned char *bitmap = calloc((size_t)ATLAS_W * ATLAS_H, 1);
    if (bitmap) {
        for (size_t i = 0; i < sizeof font_paths / sizeof font_paths[0] && !text.ok; i++) {
            unsigned char *ttf = read_file(font_paths[i]);
            if (ttf) {
                text.ok = bake_font(ttf, bitmap);
                free(ttf);
            }
        }
    }
    if (text.ok) {
        text.texture = make_texture(bitmap, ATLAS_W, ATLAS_H);
    } else {
        unsigned char blank = 0;
        text.texture = make_texture(&blank, 1, 1);
        rndi_set_error("rnd_init: no usable font found (tried %s); text is disabled", font_paths[0]);
    }
    free(bitmap);
    return 0;
}

/* free the atlas texture */
void rndi_text_shutdown(void)
{
    if (text.texture)
        glDeleteTextures(1, &text.texture);
    memset(&text, 0, sizeof text);
}

/* the atlas texture, for the overlay shader */
GLuint rndi_text_texture(void)
{
    return text.texture;
}

/* 1 when text can be drawn */
int rndi_text_ok(void)
{
    return text.ok;
}

/* public: whether a font was found (text calls draw nothing otherwise) */
int rnd_text_available(void)
{
    return text.ok;
}

/* read one character from a UTF-8 string: returns the glyph index to draw ('?' for anything outside
 * ASCII 32..126, '\n' passed through) and advances *s past the whole code point */
static int next_char(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    int c = *p++;
    if (c >= 0x80) {                 /* multi-byte sequence: skip its continuation bytes           */
        while ((*p & 0xC0) == 0x80)
            p++;
        c = '?';
    } else if (c == '\t') {
        c = ' ';
    } else if (c != '\n' && (c < FIRST_CHAR || c >= FIRST_CHAR + NUM_CHARS)) {
        c = '?';
    }
    *s = (const char *)p;
    return c;
}

/* queue a string at (x, y) = top-left of its first line; '\n' starts a new line at the same x */
void rnd_text(float x, float y, const char *utf8, const float rgba[4])
{
    static const float white[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
    if (!text.ok || !utf8)
        return;
    if (!rgba)
        rgba = white;
    float pen_x = x, baseline = y + text.ascent;
    const char *s = utf8;
    while (*s) {
        int c = next_char(&s);
        if (c == '\n') {
            pen_x = x;
            baseline += text.line_height;
            continue;
        }
        stbtt_aligned_quad q;
        stbtt_GetBakedQuad(text.chars, ATLAS_W, ATLAS_H, c - FIRST_CHAR, &pen_x, &baseline, &q, 1);
        if (q.x1 > q.x0 && q.y1 > q.y0)      /* spaces have no quad                               */
            rndi_overlay_quad(q.x0, q.y0, q.x1, q.y1, q.s0, q.t0, q.s1, q.t1, rgba);
    }
}

/* width in pixels of the widest line of a string */
float rnd_text_width(const char *utf8)
{
    if (!text.ok || !utf8)
        return 0.0f;
    float width = 0.0f, line = 0.0f;
    const char *s = utf8;
    while (*s) {
        int c = next_char(&s);
        if (c == '\n') {
            line = 0.0f;
            continue;
        }
        line += text.chars[c - FIRST_CHAR].xadvance;
        if (line > width)
            width = line;
    }
    return width;
}

/* distance in pixels between the tops of two consecutive text lines */
float rnd_line_height(void)
{
    return text.line_height;
}

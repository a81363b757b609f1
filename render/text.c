/* text.c: text for the overlay through stb_truetype. The font file is read once; each pixel size a
 * script asks for is baked into its own single-channel atlas on first use (a few sizes are kept, the
 * least recently used is dropped), and strings become glyph quads of the overlay (render_2d.c), drawn
 * in call order with rects and shapes. Size 16 is the HUD's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

#include "render.h"
#include "render_internal.h"

#define DEFAULT_PIXELS 16             /* ascent - descent in pixels of the default size              */
#define MIN_PIXELS   6
#define MAX_PIXELS   160
#define FIRST_CHAR   32              /* ' '                                                        */
#define NUM_CHARS    95              /* ' ' .. '~'                                                 */
#define SIZES        8               /* atlases kept at once                                       */
#define LEADING      2.0f            /* extra pixels between lines so they don't touch             */

static const char *font_paths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
};

typedef struct {
    int pixels;                      /* 0: an empty slot                                           */
    GLuint texture;
    int atlas_w, atlas_h;
    stbtt_bakedchar chars[NUM_CHARS];
    float ascent;                    /* baseline offset below the top of a line, pixels            */
    float line_height;               /* distance between two baselines, pixels                     */
    unsigned long used;              /* the frame count when last used                             */
} FontSize;

static struct {
    int ok;                          /* a font file was read                                       */
    unsigned char *ttf;
    stbtt_fontinfo info;
    FontSize sizes[SIZES];
    unsigned long clock;
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

/* bake the font at `pixels` into slot f: an atlas wide enough for every glyph (grown until they
 * fit); returns 1 on success */
static int bake(FontSize *f, int pixels)
{
    int w = 256, h = 128;
    while (w * h < pixels * pixels * NUM_CHARS)
        w < 4 * h ? (w *= 2) : (h *= 2);
    for (int tries = 0; tries < 4; tries++, h *= 2) {
        unsigned char *bitmap = calloc((size_t)w * (size_t)h, 1);
        if (!bitmap)
            return 0;
        int fit = stbtt_BakeFontBitmap(text.ttf, stbtt_GetFontOffsetForIndex(text.ttf, 0), (float)pixels, bitmap,
                                       w, h, FIRST_CHAR, NUM_CHARS, f->chars);
        if (fit > 0) {
            f->texture = make_texture(bitmap, w, h);
            free(bitmap);
            int ascent, descent, gap;
            stbtt_GetFontVMetrics(&text.info, &ascent, &descent, &gap);
            float scale = stbtt_ScaleForPixelHeight(&text.info, (float)pixels);
            f->ascent = roundf((float)ascent * scale);
            f->line_height = ceilf((float)(ascent - descent + gap) * scale) + LEADING * (float)pixels / DEFAULT_PIXELS;
            f->atlas_w = w, f->atlas_h = h;
            f->pixels = pixels;
            return 1;
        }
        free(bitmap);                /* <= 0: not every glyph fitted: a taller atlas               */
    }
    return 0;
}

/* the baked size nearest to `pixels` (clamped to MIN..MAX), baking it when new; NULL without a font */
static FontSize *font_size(float pixels)
{
    if (!text.ok)
        return NULL;
    int px = (int)lroundf(pixels);
    if (!(pixels == pixels))
        px = DEFAULT_PIXELS;
    px = px < MIN_PIXELS ? MIN_PIXELS : px > MAX_PIXELS ? MAX_PIXELS : px;
    text.clock++;
    for (int i = 0; i < SIZES; i++)
        if (text.sizes[i].pixels == px) {
            text.sizes[i].used = text.clock;
            return &text.sizes[i];
        }
    /* an empty slot, else the least recently used size other than the default (the HUD's) */
    FontSize *victim = NULL;
    for (int i = 0; i < SIZES && !victim; i++)
        if (text.sizes[i].pixels == 0)
            victim = &text.sizes[i];
    if (!victim)
        for (int i = 0; i < SIZES; i++) {
            FontSize *f = &text.sizes[i];
            if (f->pixels != DEFAULT_PIXELS && (!victim || f->used < victim->used))
                victim = f;
        }
    if (victim->texture)
        glDeleteTextures(1, &victim->texture);
    memset(victim, 0, sizeof *victim);
    if (!bake(victim, px))
        return NULL;
    victim->used = text.clock;
    return victim;
}

/* read the first font file that loads; a missing font only disables text (recorded for rnd_error) */
int rndi_text_init(void)
{
    memset(&text, 0, sizeof text);
    for (size_t i = 0; i < sizeof font_paths / sizeof font_paths[0] && !text.ok; i++) {
        text.ttf = read_file(font_paths[i]);
        if (text.ttf && stbtt_InitFont(&text.info, text.ttf, stbtt_GetFontOffsetForIndex(text.ttf, 0))) {
            text.ok = 1;
        } else {
            free(text.ttf);
            text.ttf = NULL;
        }
    }
    if (!text.ok || !font_size(DEFAULT_PIXELS)) {
        text.ok = 0;
        rndi_set_error("rnd_init: no usable font found (tried %s); text is disabled", font_paths[0]);
    }
    return 0;
}

/* free the atlases and the font */
void rndi_text_shutdown(void)
{
    for (int i = 0; i < SIZES; i++)
        if (text.sizes[i].texture)
            glDeleteTextures(1, &text.sizes[i].texture);
    free(text.ttf);
    memset(&text, 0, sizeof text);
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

/* queue a string at `pixels` size with (x, y) the top-left of its first line; '\n' starts a new line */
void rnd_text_sized(float x, float y, const char *utf8, float pixels, const float rgba[4])
{
    static const float white[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
    FontSize *f = font_size(pixels);
    if (!f || !utf8)
        return;
    if (!rgba)
        rgba = white;
    float pen_x = x, baseline = y + f->ascent;
    const char *s = utf8;
    while (*s) {
        int c = next_char(&s);
        if (c == '\n') {
            pen_x = x;
            baseline += f->line_height;
            continue;
        }
        stbtt_aligned_quad q;
        stbtt_GetBakedQuad(f->chars, f->atlas_w, f->atlas_h, c - FIRST_CHAR, &pen_x, &baseline, &q, 1);
        if (q.x1 > q.x0 && q.y1 > q.y0)      /* spaces have no quad                               */
            rndi_overlay_quad(f->texture, RNDI_FONT, q.x0, q.y0, q.x1, q.y1, q.s0, q.t0, q.s1, q.t1, rgba);
    }
}

/* width in pixels of the widest line of a string at `pixels` size */
float rnd_text_width_sized(const char *utf8, float pixels)
{
    FontSize *f = font_size(pixels);
    if (!f || !utf8)
        return 0.0f;
    float width = 0.0f, line = 0.0f;
    const char *s = utf8;
    while (*s) {
        int c = next_char(&s);
        if (c == '\n') {
            line = 0.0f;
            continue;
        }
        line += f->chars[c - FIRST_CHAR].xadvance;
        if (line > width)
            width = line;
    }
    return width;
}

/* distance in pixels between the tops of two consecutive lines at `pixels` size */
float rnd_line_height_sized(float pixels)
{
    FontSize *f = font_size(pixels);
    return f ? f->line_height : ceilf(pixels * 1.2f);
}

void rnd_text(float x, float y, const char *utf8, const float rgba[4]) { rnd_text_sized(x, y, utf8, DEFAULT_PIXELS, rgba); }
float rnd_text_width(const char *utf8) { return rnd_text_width_sized(utf8, DEFAULT_PIXELS); }
float rnd_line_height(void) { return rnd_line_height_sized(DEFAULT_PIXELS); }

/* gfx_draw.c: the drawing calls of "impetus.gfx" for games, in screen space and in world space.
 *
 * A position given as numbers is in window pixels (origin top-left); given as a table {x, y[, z]} it is
 * in the world (metres). The last argument is an options table (a colour table {r, g, b[, a]} is taken
 * as {color = ...}):
 *
 *   gfx.circle(x, y, r, opts)          gfx.circle(center, r, opts)       opts.normal: the circle's plane
 *   gfx.rectangle(x, y, w, h, opts)    gfx.rectangle(center, w, h, opts) screen: (x, y) is the top-left;
 *                                      world: centred; opts.angle turns it about its centre (radians)
 *   gfx.polygon({x1, y1, x2, y2, ...}, opts)   gfx.polygon({p1, p2, ...}, opts)   (concave is fine)
 *   gfx.line(x1, y1, x2, y2, opts)     gfx.line(a, b, opts)
 *   gfx.polyline({x1, y1, ...}, opts)  gfx.polyline({p1, p2, ...}, opts)  opts.closed
 *   gfx.text(x, y, s, opts)            gfx.text(point, s, opts)          opts.size (px), align ("left",
 *                                      "center", "right"), valign ("top", "middle", "bottom"), width
 *                                      (align within x .. x + width); at a world point: centred on it
 *   gfx.text_width(s [, size])         gfx.line_height([size])
 *   gfx.image(path) -> Image           a PNG as a texture (cached by path and modification time);
 *                                      image.width, image.height in pixels
 *   gfx.draw(image, x, y, opts)        screen: opts.angle, scale (number or {sx, sy}), origin = {ox, oy}
 *                                      (image pixels placed at x, y; default the top-left), color (tint)
 *   gfx.draw(image, point, opts)       world, centred on point in the plane z = const: opts.size (metres,
 *                                      a number is the width, the height keeps the aspect; default 1),
 *                                      angle, color, layer
 *   gfx.image_quad(image, {c1, c2, c3, c4}, opts)  world corners (top-left, top-right, bottom-right,
 *                                      bottom-left): sprites on bodies (draw.lua)
 *
 * Shape options: color (the fill, default white), fill (default true), outline (a colour: also draw the
 * outline), width (outline and line width in pixels, default 1), layer ("world" or "back": world
 * shapes behind everything else), segments (circles). World shapes are unlit; with the 2D camera
 * they are painted over the bodies in call order, with the 3D camera they are depth-tested. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb_image.h>
#include <stb_image_write.h>

#include "../engine/lua/impetus_lua.h"
#include "gfx_draw.h"
#include "render.h"

#define IMAGE_TYPE "impetus.gfx.Image"
#define MAX_POINTS 4096

typedef struct {
    int id;                          /* rnd_image texture; 0 once freed                             */
    int width, height;
    int generation;                  /* renderer the texture belongs to (rnd_generation)            */
} Image;

typedef struct {
    float color[4], outline[4];
    int fill, has_outline, layer, segments;
    float width, angle, size;        /* size: text pixels                                           */
    float normal[3];
    int align, valign;               /* -1 left/top, 0 center/middle, 1 right/bottom; 2: not given  */
    float box_width;
    int closed;
} Opts;

/* ---- argument helpers -------------------------------------------------------------------------------- */

static void check_open(lua_State *L, const char *fn)
{
    if (!rnd_generation()) luaL_error(L, "gfx.%s: no window is open (call gfx.open first)", fn);
}

static float checkfinite(lua_State *L, int idx, const char *fn, const char *what)
{
    int ok;
    lua_Number v = lua_tonumberx(L, idx, &ok);
    if (!ok || !isfinite(v)) luaL_error(L, "gfx.%s: argument '%s' must be a finite number", fn, what);
    return (float)v;
}

/* the table at idx holds only entries 1..n, and the names x, y, z when `named`: a stray entry
 * ({1, 0, 0, 1, 5}, {0, 1, bogus = 2}) is an error naming it, never silently dropped */
static void check_components(lua_State *L, int idx, const char *fn, const char *what, const char *shape, lua_Integer n, int named)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int is_integer;
        lua_Integer k = lua_tointegerx(L, -1, &is_integer);
        if (lua_type(L, -1) == LUA_TNUMBER && is_integer && k >= 1 && k <= n) continue;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *name = lua_tostring(L, -1);
            if (named && (!strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z"))) continue;
            luaL_error(L, "gfx.%s: %s must be %s: unknown field '%s'", fn, what, shape, name);
        }
        luaL_error(L, "gfx.%s: %s must be %s: unexpected entry [%s]", fn, what, shape, luaL_tolstring(L, -1, NULL));
    }
}

/* a pair {a, b} of finite numbers at idx (sizes, scales, origins) */
static void read_pair(lua_State *L, int idx, const char *fn, const char *what, float out[2])
{
    idx = lua_absindex(L, idx);
    check_components(L, idx, fn, what, "a pair {a, b}", 2, 0);
    for (int k = 0; k < 2; k++) {
        lua_rawgeti(L, idx, k + 1);
        int ok;
        lua_Number v = lua_tonumberx(L, -1, &ok);
        if (!ok || !isfinite(v)) luaL_error(L, "gfx.%s: %s must be a pair {a, b} of finite numbers", fn, what);
        out[k] = (float)v;
        lua_pop(L, 1);
    }
}

/* a colour {r, g, b[, a]} at idx */
static void read_color(lua_State *L, int idx, const char *fn, const char *what, float c[4])
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "gfx.%s: %s must be a colour {r, g, b[, a]}", fn, what);
    check_components(L, idx, fn, what, "a colour {r, g, b[, a]}", 4, 0);
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, idx, k + 1);
        int ok;
        lua_Number v = lua_tonumberx(L, -1, &ok);
        if (!ok && !(k == 3 && lua_isnil(L, -1)))
            luaL_error(L, "gfx.%s: %s must be a colour {r, g, b[, a]} of numbers in 0..1", fn, what);
        c[k] = ok ? (float)v : 1.0f;
        lua_pop(L, 1);
    }
}

/* a point {x, y[, z]} or {x = .., y = .., z = ..} at idx (z defaults to 0) */
static void read_point(lua_State *L, int idx, const char *fn, const char *what, float p[3])
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "gfx.%s: %s must be a point {x, y[, z]}", fn, what);
    check_components(L, idx, fn, what, "a point {x, y[, z]}", 3, 1);
    static const char *names[3] = { "x", "y", "z" };
    for (int k = 0; k < 3; k++) {
        if (lua_rawgeti(L, idx, k + 1) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, idx, names[k]);
        }
        int ok;
        lua_Number v = lua_tonumberx(L, -1, &ok);
        if (!ok && k == 2 && lua_isnil(L, -1)) v = 0, ok = 1;
        if (!ok || !isfinite(v)) luaL_error(L, "gfx.%s: %s must be a point {x, y[, z]} of finite numbers", fn, what);
        p[k] = (float)v;
        lua_pop(L, 1);
    }
}

static int is_color_table(lua_State *L, int idx)
{
    int t = lua_rawgeti(L, idx, 1);
    lua_pop(L, 1);
    return t == LUA_TNUMBER;
}

/* the options table at idx (or a bare colour); `allowed` lists the keys this function takes */
static void read_opts(lua_State *L, int idx, const char *fn, const char *allowed, Opts *o)
{
    memset(o, 0, sizeof *o);
    o->color[0] = o->color[1] = o->color[2] = o->color[3] = 1.0f;
    o->fill = 1;
    o->width = 1.0f;
    o->size = 16.0f;
    o->normal[2] = 1.0f;
    o->align = o->valign = 2;
    if (lua_isnoneornil(L, idx)) return;
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "gfx.%s: the last argument must be an options table or a colour", fn);
    if (is_color_table(L, idx)) {
        read_color(L, idx, fn, "argument 'color'", o->color);
        return;
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        /* allowed is a space-separated list: match whole words */
        const char *hit = k ? strstr(allowed, k) : NULL;
        size_t n = k ? strlen(k) : 0;
        while (hit && !((hit == allowed || hit[-1] == ' ') && (hit[n] == ' ' || hit[n] == 0))) hit = strstr(hit + 1, k);
        if (!hit) luaL_error(L, "gfx.%s: unknown option '%s' (known: %s)", fn, k ? k : "?", allowed);
        int t = lua_getfield(L, idx, k);
        if (!strcmp(k, "color")) read_color(L, -1, fn, "option 'color'", o->color);
        else if (!strcmp(k, "outline")) read_color(L, -1, fn, "option 'outline'", o->outline), o->has_outline = 1;
        else if (!strcmp(k, "fill") || !strcmp(k, "closed")) {
            if (t != LUA_TBOOLEAN) luaL_error(L, "gfx.%s: option '%s' must be true or false", fn, k);
            *(!strcmp(k, "fill") ? &o->fill : &o->closed) = lua_toboolean(L, -1);
        } else if (!strcmp(k, "size") && lua_istable(L, -1)) {
            /* {w, h}: read by the caller (gfx.draw) */
        } else if (!strcmp(k, "width") || !strcmp(k, "angle") || !strcmp(k, "size") || !strcmp(k, "segments")) {
            float v = checkfinite(L, -1, fn, k);
            if (!strcmp(k, "angle")) o->angle = v;
            else if (v <= 0) luaL_error(L, "gfx.%s: option '%s' must be > 0", fn, k);
            else if (!strcmp(k, "width")) o->width = v > 1000 ? 1000 : v;
            else if (!strcmp(k, "size")) o->size = v;
            else o->segments = v > 1024 ? 1024 : (int)v;
        } else if (!strcmp(k, "normal")) {
            read_point(L, -1, fn, "option 'normal'", o->normal);
            float l = sqrtf(o->normal[0] * o->normal[0] + o->normal[1] * o->normal[1] + o->normal[2] * o->normal[2]);
            if (!(l > 1e-12f)) luaL_error(L, "gfx.%s: option 'normal' must not be zero", fn);
            for (int i = 0; i < 3; i++) o->normal[i] /= l;
        } else if (!strcmp(k, "layer")) {
            const char *s = lua_tostring(L, -1);
            if (!s || (strcmp(s, "world") && strcmp(s, "back")))
                luaL_error(L, "gfx.%s: option 'layer' must be \"world\" or \"back\"", fn);
            o->layer = !strcmp(s, "back");
        } else if (!strcmp(k, "align") || !strcmp(k, "valign")) {
            const char *s = lua_tostring(L, -1);
            int v = 3;
            if (s && (!strcmp(s, "left") || !strcmp(s, "top"))) v = -1;
            if (s && (!strcmp(s, "center") || !strcmp(s, "middle"))) v = 0;
            if (s && (!strcmp(s, "right") || !strcmp(s, "bottom"))) v = 1;
            if (v == 3 || (k[0] == 'a' && s && (!strcmp(s, "top") || !strcmp(s, "bottom") || !strcmp(s, "middle"))) ||
                (k[0] == 'v' && s && (!strcmp(s, "left") || !strcmp(s, "right") || !strcmp(s, "center"))))
                luaL_error(L, "gfx.%s: option '%s' must be %s", fn, k,
                           k[0] == 'a' ? "\"left\", \"center\" or \"right\"" : "\"top\", \"middle\" or \"bottom\"");
            *(k[0] == 'a' ? &o->align : &o->valign) = v;
        }
        lua_pop(L, 1);
    }
}

/* ---- screen shapes ------------------------------------------------------------------------------------- */

/* a screen segment `w` pixels wide as two triangles, with square caps */
static void screen_segment(float ax, float ay, float bx, float by, float w, const float c[4])
{
    float dx = bx - ax, dy = by - ay, l = sqrtf(dx * dx + dy * dy);
    if (l > 1e-6f) dx /= l, dy /= l;
    else dx = 1, dy = 0;
    float h = 0.5f * w, nx = -dy * h, ny = dx * h, ex = dx * h, ey = dy * h;
    float q[8] = { ax - ex + nx, ay - ey + ny, ax - ex - nx, ay - ey - ny, bx + ex - nx, by + ey - ny, bx + ex + nx, by + ey + ny };
    float t[12] = { q[0], q[1], q[2], q[3], q[4], q[5], q[0], q[1], q[4], q[5], q[6], q[7] };
    rnd_overlay_triangles(2, t, c);
}

static void screen_polyline(const float *xy, int n, int closed, float w, const float c[4])
{
    for (int i = 0; i + 1 < n; i++) screen_segment(xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3], w, c);
    if (closed && n > 2) screen_segment(xy[2 * n - 2], xy[2 * n - 1], xy[0], xy[1], w, c);
}

/* ear clipping of a simple polygon given in 2D (u, v); calls emit(i, j, k) for each triangle.
 * Orientation is found from the signed area; an ear is a convex corner with no other vertex inside. */
typedef void (*tri_fn)(void *ctx, int a, int b, int c);

static float cross2(const float *p, int a, int b, int c)
{
    return (p[2 * b] - p[2 * a]) * (p[2 * c + 1] - p[2 * a + 1]) - (p[2 * b + 1] - p[2 * a + 1]) * (p[2 * c] - p[2 * a]);
}

static void triangulate(const float *uv, int n, tri_fn emit, void *ctx)
{
    if (n < 3) return;
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) return;
    double area = 0;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        area += (double)uv[2 * i] * uv[2 * j + 1] - (double)uv[2 * j] * uv[2 * i + 1];
    }
    float sign = area >= 0 ? 1.0f : -1.0f;
    for (int i = 0; i < n; i++) idx[i] = i;
    int m = n, guard = 0;
    while (m > 3 && guard < 2 * m) {
        int found = 0;
        for (int i = 0; i < m && !found; i++) {
            int a = idx[(i + m - 1) % m], b = idx[i], c = idx[(i + 1) % m];
            if (sign * cross2(uv, a, b, c) <= 0) continue; /* reflex or degenerate corner             */
            int inside = 0;
            for (int k = 0; k < m && !inside; k++) {
                int p = idx[k];
                if (p == a || p == b || p == c) continue;
                inside = sign * cross2(uv, a, b, p) >= 0 && sign * cross2(uv, b, c, p) >= 0 && sign * cross2(uv, c, a, p) >= 0;
            }
            if (inside) continue;
            emit(ctx, a, b, c);
            memmove(idx + i, idx + i + 1, (size_t)(m - i - 1) * sizeof *idx);
            m--;
            found = 1;
        }
        guard = found ? 0 : guard + 1;
        if (!found) { /* a self-intersecting polygon: cut the first corner anyway */
            emit(ctx, idx[m - 1], idx[0], idx[1]);
            memmove(idx, idx + 1, (size_t)(m - 1) * sizeof *idx);
            m--;
        }
    }
    if (m == 3) emit(ctx, idx[0], idx[1], idx[2]);
    free(idx);
}

typedef struct {
    const float *pts;                /* 2 (screen) or 3 (world) floats per point                   */
    int dim, layer;
    const float *color;
} FillCtx;

static void emit_fill(void *ctx, int a, int b, int c)
{
    FillCtx *f = ctx;
    if (f->dim == 2) {
        float t[6] = { f->pts[2 * a], f->pts[2 * a + 1], f->pts[2 * b], f->pts[2 * b + 1], f->pts[2 * c], f->pts[2 * c + 1] };
        rnd_overlay_triangles(1, t, f->color);
    } else {
        float t[9];
        memcpy(t, f->pts + 3 * a, 3 * sizeof(float));
        memcpy(t + 3, f->pts + 3 * b, 3 * sizeof(float));
        memcpy(t + 6, f->pts + 3 * c, 3 * sizeof(float));
        rnd_flat_triangles(f->layer, 1, t, f->color);
    }
}

/* fill and/or outline a closed screen outline of n points */
static void screen_shape(const float *xy, int n, const Opts *o)
{
    if (o->fill) {
        FillCtx f = { xy, 2, 0, o->color };
        triangulate(xy, n, emit_fill, &f);
    }
    if (!o->fill || o->has_outline) screen_polyline(xy, n, 1, o->width, o->has_outline ? o->outline : o->color);
}

/* ---- world shapes ---------------------------------------------------------------------------------------- */

/* two unit vectors across the unit normal n */
static void plane_basis(const float n[3], float e1[3], float e2[3])
{
    float h[3] = { fabsf(n[0]) < 0.9f ? 1.0f : 0.0f, fabsf(n[0]) < 0.9f ? 0.0f : 1.0f, 0.0f };
    float d = h[0] * n[0] + h[1] * n[1] + h[2] * n[2];
    for (int i = 0; i < 3; i++) e1[i] = h[i] - d * n[i];
    float l = sqrtf(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    for (int i = 0; i < 3; i++) e1[i] /= l;
    e2[0] = n[1] * e1[2] - n[2] * e1[1];
    e2[1] = n[2] * e1[0] - n[0] * e1[2];
    e2[2] = n[0] * e1[1] - n[1] * e1[0];
}

/* the in-plane axes of a world shape: for the default normal +z, x and y (so angle 0 is unrotated in
 * the 2D view); turned by angle about the normal */
static void shape_axes(const Opts *o, float ax[3], float ay[3])
{
    float e1[3], e2[3];
    if (o->normal[0] == 0 && o->normal[1] == 0 && o->normal[2] > 0) {
        e1[0] = 1, e1[1] = 0, e1[2] = 0, e2[0] = 0, e2[1] = 1, e2[2] = 0;
    } else {
        plane_basis(o->normal, e1, e2);
    }
    float c = cosf(o->angle), s = sinf(o->angle);
    for (int i = 0; i < 3; i++) {
        ax[i] = c * e1[i] + s * e2[i];
        ay[i] = -s * e1[i] + c * e2[i];
    }
}

static void world_polyline(const float *p, int n, int closed, const Opts *o, const float c[4])
{
    for (int i = 0; i + 1 < n; i++) rnd_wide_line(p + 3 * i, p + 3 * i + 3, o->width, c);
    if (closed && n > 2) rnd_wide_line(p + 3 * (n - 1), p, o->width, c);
}

/* fill and/or outline a closed planar world outline of n points */
static void world_shape(const float *p, int n, const Opts *o)
{
    if (o->fill && n >= 3) {
        /* Newell's normal, then 2D coordinates in the polygon's plane for the triangulation */
        float nn[3] = { 0, 0, 0 };
        for (int i = 0; i < n; i++) {
            const float *a = p + 3 * i, *b = p + 3 * ((i + 1) % n);
            nn[0] += (a[1] - b[1]) * (a[2] + b[2]);
            nn[1] += (a[2] - b[2]) * (a[0] + b[0]);
            nn[2] += (a[0] - b[0]) * (a[1] + b[1]);
        }
        float l = sqrtf(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        if (l > 0) {
            for (int i = 0; i < 3; i++) nn[i] /= l;
            float e1[3], e2[3];
            plane_basis(nn, e1, e2);
            float *uv = malloc(2 * (size_t)n * sizeof(float));
            if (uv) {
                for (int i = 0; i < n; i++) {
                    const float *a = p + 3 * i;
                    uv[2 * i] = a[0] * e1[0] + a[1] * e1[1] + a[2] * e1[2];
                    uv[2 * i + 1] = a[0] * e2[0] + a[1] * e2[1] + a[2] * e2[2];
                }
                FillCtx f = { p, 3, o->layer, o->color };
                triangulate(uv, n, emit_fill, &f);
                free(uv);
            }
        }
    }
    if (!o->fill || o->has_outline) world_polyline(p, n, 1, o, o->has_outline ? o->outline : o->color);
}

/* ---- the Lua functions -------------------------------------------------------------------------------------- */

static const char *SHAPE_OPTS = "color fill outline width layer angle normal segments";

static int gfx_circle(lua_State *L)
{
    check_open(L, "circle");
    Opts o;
    if (lua_istable(L, 1)) {
        float c[3];
        impl_check_arg_count(L, "gfx.circle(center, r [, opts])");
        read_point(L, 1, "circle", "argument 'center'", c);
        float r = checkfinite(L, 2, "circle", "radius");
        read_opts(L, 3, "circle", SHAPE_OPTS, &o);
        int n = o.segments ? o.segments : 64;
        if (n < 3) n = 3;
        float *p = malloc(3 * (size_t)n * sizeof(float)), ax[3], ay[3];
        if (!p) return luaL_error(L, "gfx.circle: out of memory");
        shape_axes(&o, ax, ay);
        for (int k = 0; k < n; k++) {
            float t = 6.2831853f * (float)k / (float)n, cs = cosf(t) * r, sn = sinf(t) * r;
            for (int i = 0; i < 3; i++) p[3 * k + i] = c[i] + cs * ax[i] + sn * ay[i];
        }
        world_shape(p, n, &o);
        free(p);
        return 0;
    }
    impl_check_arg_count(L, "gfx.circle(x, y, r [, opts])");
    float x = checkfinite(L, 1, "circle", "x"), y = checkfinite(L, 2, "circle", "y"), r = checkfinite(L, 3, "circle", "radius");
    read_opts(L, 4, "circle", SHAPE_OPTS, &o);
    float rp = fabsf(r);
    int n = o.segments ? o.segments : (int)ceilf(6.2831853f * rp / 4.0f);
    n = n < 12 ? 12 : n > 256 ? 256 : n;
    float *xy = malloc(2 * (size_t)n * sizeof(float));
    if (!xy) return luaL_error(L, "gfx.circle: out of memory");
    for (int k = 0; k < n; k++) {
        float t = 6.2831853f * (float)k / (float)n;
        xy[2 * k] = x + rp * cosf(t), xy[2 * k + 1] = y + rp * sinf(t);
    }
    screen_shape(xy, n, &o);
    free(xy);
    return 0;
}

static int gfx_rectangle(lua_State *L)
{
    check_open(L, "rectangle");
    Opts o;
    if (lua_istable(L, 1)) {
        float c[3], p[12], ax[3], ay[3];
        impl_check_arg_count(L, "gfx.rectangle(center, w, h [, opts])");
        read_point(L, 1, "rectangle", "argument 'center'", c);
        float hw = 0.5f * checkfinite(L, 2, "rectangle", "width"), hh = 0.5f * checkfinite(L, 3, "rectangle", "height");
        read_opts(L, 4, "rectangle", SHAPE_OPTS, &o);
        shape_axes(&o, ax, ay);
        static const float sx[4] = { -1, 1, 1, -1 }, sy[4] = { -1, -1, 1, 1 };
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 3; i++) p[3 * k + i] = c[i] + sx[k] * hw * ax[i] + sy[k] * hh * ay[i];
        world_shape(p, 4, &o);
        return 0;
    }
    impl_check_arg_count(L, "gfx.rectangle(x, y, w, h [, opts])");
    float x = checkfinite(L, 1, "rectangle", "x"), y = checkfinite(L, 2, "rectangle", "y");
    float w = checkfinite(L, 3, "rectangle", "width"), h = checkfinite(L, 4, "rectangle", "height");
    read_opts(L, 5, "rectangle", SHAPE_OPTS, &o);
    /* turned about its centre; screen y points down, so a positive angle turns clockwise on screen */
    float cx = x + 0.5f * w, cy = y + 0.5f * h, c = cosf(o.angle), s = sinf(o.angle), xy[8];
    static const float sx[4] = { -1, 1, 1, -1 }, sy[4] = { -1, -1, 1, 1 };
    for (int k = 0; k < 4; k++) {
        float u = sx[k] * 0.5f * w, v = sy[k] * 0.5f * h;
        xy[2 * k] = cx + c * u - s * v, xy[2 * k + 1] = cy + s * u + c * v;
    }
    screen_shape(xy, 4, &o);
    return 0;
}

/* the points of argument idx: flat numbers (screen, dim 2) or a list of points (world, dim 3);
 * returns a malloc'ed array and sets *n and *dim */
static float *read_points(lua_State *L, int idx, const char *fn, int *n, int *dim)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len == 0) luaL_error(L, "gfx.%s: argument 'points' is empty", fn);
    check_components(L, lua_absindex(L, idx), fn, "argument 'points'", "a list", len, 0);
    int world = lua_rawgeti(L, idx, 1) == LUA_TTABLE;
    lua_pop(L, 1);
    if (!world && len % 2) luaL_error(L, "gfx.%s: argument 'points' must hold x, y pairs (got %d numbers)", fn, (int)len);
    int count = world ? (int)len : (int)(len / 2);
    if (count > MAX_POINTS) luaL_error(L, "gfx.%s: at most %d points", fn, MAX_POINTS);
    *dim = world ? 3 : 2;
    float *p = lua_newuserdatauv(L, (size_t)count * (size_t)*dim * sizeof(float), 0); /* freed by the GC */
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, idx, i);
        if (world) {
            read_point(L, -1, fn, "each point", p + 3 * (i - 1));
        } else {
            int ok;
            lua_Number v = lua_tonumberx(L, -1, &ok);
            if (!ok || !isfinite(v)) luaL_error(L, "gfx.%s: argument 'points' must be numbers x1, y1, x2, y2, ... or a list of points", fn);
            p[i - 1] = (float)v;
        }
        lua_pop(L, 1);
    }
    *n = count;
    return p;
}

static int gfx_polygon(lua_State *L)
{
    check_open(L, "polygon");
    impl_check_arg_count(L, "gfx.polygon(points [, opts])");
    int n, dim;
    float *p = read_points(L, 1, "polygon", &n, &dim);
    Opts o;
    read_opts(L, 2, "polygon", "color fill outline width layer", &o);
    if (n < 3) return luaL_error(L, "gfx.polygon: needs at least 3 points");
    if (dim == 2) screen_shape(p, n, &o);
    else world_shape(p, n, &o);
    return 0;
}

static int gfx_polyline(lua_State *L)
{
    check_open(L, "polyline");
    impl_check_arg_count(L, "gfx.polyline(points [, opts])");
    int n, dim;
    float *p = read_points(L, 1, "polyline", &n, &dim);
    Opts o;
    read_opts(L, 2, "polyline", "color width closed", &o);
    if (dim == 2) screen_polyline(p, n, o.closed, o.width, o.color);
    else world_polyline(p, n, o.closed, &o, o.color);
    return 0;
}

static int gfx_line(lua_State *L)
{
    check_open(L, "line");
    Opts o;
    if (lua_istable(L, 1)) {
        float a[3], b[3];
        impl_check_arg_count(L, "gfx.line(a, b [, opts])");
        read_point(L, 1, "line", "argument 'a'", a);
        read_point(L, 2, "line", "argument 'b'", b);
        read_opts(L, 3, "line", "color width", &o);
        /* 1 px lines keep the plain GL line path (depth-tested with the solids in both cameras) */
        if (o.width <= 1.0f) rnd_line(a, b, o.color);
        else rnd_wide_line(a, b, o.width, o.color);
        return 0;
    }
    impl_check_arg_count(L, "gfx.line(x1, y1, x2, y2 [, opts])");
    float x1 = checkfinite(L, 1, "line", "x1"), y1 = checkfinite(L, 2, "line", "y1");
    float x2 = checkfinite(L, 3, "line", "x2"), y2 = checkfinite(L, 4, "line", "y2");
    read_opts(L, 5, "line", "color width", &o);
    screen_segment(x1, y1, x2, y2, o.width, o.color);
    return 0;
}

/* ---- text ------------------------------------------------------------------------------------------------- */

/* draw s aligned at (x, y): align/valign -1, 0, 1 (2: left/top); within box_width when given */
static void aligned_text(float x, float y, const char *s, const Opts *o)
{
    float w = rnd_text_width_sized(s, o->size), lh = rnd_line_height_sized(o->size);
    int lines = 1;
    for (const char *c = s; *c; c++) lines += *c == '\n';
    float h = lh * (float)lines;
    int align = o->align == 2 ? -1 : o->align, valign = o->valign == 2 ? -1 : o->valign;
    if (o->box_width > 0) {
        /* every line aligned on its own within x .. x + box */
        const char *start = s;
        float ty = y - (valign == 0 ? 0.5f * h : valign == 1 ? h : 0);
        char line[1024];
        for (;;) {
            const char *end = strchr(start, '\n');
            size_t len = end ? (size_t)(end - start) : strlen(start);
            if (len >= sizeof line) len = sizeof line - 1;
            memcpy(line, start, len);
            line[len] = 0;
            float lw = rnd_text_width_sized(line, o->size);
            float tx = x + (align == 0 ? 0.5f * (o->box_width - lw) : align == 1 ? o->box_width - lw : 0);
            rnd_text_sized(tx, ty, line, o->size, o->color);
            if (!end) break;
            start = end + 1;
            ty += lh;
        }
        return;
    }
    float tx = x - (align == 0 ? 0.5f * w : align == 1 ? w : 0);
    float ty = y - (valign == 0 ? 0.5f * h : valign == 1 ? h : 0);
    rnd_text_sized(tx, ty, s, o->size, o->color);
}

static int gfx_text(lua_State *L)
{
    check_open(L, "text");
    Opts o;
    if (lua_istable(L, 1)) {
        float p[3], x, y;
        impl_check_arg_count(L, "gfx.text(point, s [, opts])");
        read_point(L, 1, "text", "argument 'point'", p);
        const char *s = luaL_checkstring(L, 2);
        read_opts(L, 3, "text", "color size align valign", &o);
        if (o.align == 2) o.align = 0;
        if (o.valign == 2) o.valign = 0;
        if (rnd_project(p, &x, &y)) aligned_text(x, y, s, &o);
        return 0;
    }
    impl_check_arg_count(L, "gfx.text(x, y, s [, opts])");
    float x = checkfinite(L, 1, "text", "x"), y = checkfinite(L, 2, "text", "y");
    const char *s = luaL_checkstring(L, 3);
    read_opts(L, 4, "text", "color size align valign width", &o);
    /* width: the box the lines are aligned in, x .. x + width */
    if (lua_istable(L, 4) && lua_getfield(L, 4, "width") != LUA_TNIL) o.box_width = o.width;
    aligned_text(x, y, s, &o);
    return 0;
}

static float opt_size(lua_State *L, int idx, const char *fn)
{
    if (lua_isnoneornil(L, idx)) return 16.0f;
    float v = checkfinite(L, idx, fn, "size");
    if (v <= 0) luaL_error(L, "gfx.%s: argument 'size' must be > 0", fn);
    return v;
}

static int gfx_text_width(lua_State *L)
{
    impl_check_arg_count(L, "gfx.text_width(s [, size])");
    const char *s = luaL_checkstring(L, 1);
    float size = opt_size(L, 2, "text_width");
    lua_pushnumber(L, rnd_generation() ? rnd_text_width_sized(s, size) : 0);
    return 1;
}

static int gfx_line_height(lua_State *L)
{
    impl_check_arg_count(L, "gfx.line_height([size])");
    float size = opt_size(L, 1, "line_height");
    lua_pushnumber(L, rnd_generation() ? rnd_line_height_sized(size) : ceilf(size * 1.2f));
    return 1;
}

/* ---- images ------------------------------------------------------------------------------------------------- */

static Image *check_image(lua_State *L, int idx, const char *fn)
{
    Image *im = luaL_testudata(L, idx, IMAGE_TYPE);
    if (!im) luaL_error(L, "gfx.%s: argument %d must be an Image (from gfx.image)", fn, idx);
    if (!im->id || im->generation != rnd_generation())
        luaL_error(L, "gfx.%s: the image belongs to a closed window (load it again with gfx.image)", fn);
    return im;
}

static int image_gc(lua_State *L)
{
    Image *im = luaL_checkudata(L, 1, IMAGE_TYPE);
    if (im->id && im->generation == rnd_generation()) rnd_image_destroy(im->id);
    im->id = 0;
    return 0;
}

static int image_index(lua_State *L)
{
    Image *im = luaL_checkudata(L, 1, IMAGE_TYPE);
    const char *k = luaL_checkstring(L, 2);
    if (!strcmp(k, "width")) lua_pushinteger(L, im->width);
    else if (!strcmp(k, "height")) lua_pushinteger(L, im->height);
    else return luaL_error(L, "Image has no field '%s' (it has width and height)", k);
    return 1;
}

static int image_tostring(lua_State *L)
{
    Image *im = luaL_checkudata(L, 1, IMAGE_TYPE);
    lua_pushfstring(L, "Image %dx%d", im->width, im->height);
    return 1;
}

/* gfx.image(path): cached in the registry by path and modification time */
static int gfx_image(lua_State *L)
{
    check_open(L, "image");
    impl_check_arg_count(L, "gfx.image(path)");
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0) return luaL_error(L, "gfx.image: cannot open %s", path);
    lua_getfield(L, LUA_REGISTRYINDEX, IMAGE_TYPE ".cache");
    int cache = lua_gettop(L);
    lua_pushfstring(L, "%s|%I|%I", path, (lua_Integer)st.st_mtime, (lua_Integer)st.st_size);
    int key = lua_gettop(L);
    if (lua_rawget(L, cache) == LUA_TUSERDATA) {
        Image *im = lua_touserdata(L, -1);
        if (im->id && im->generation == rnd_generation()) return 1;
    }
    lua_pop(L, 1);
    int w, h, n;
    unsigned char *px = stbi_load(path, &w, &h, &n, 4);
    if (!px) return luaL_error(L, "gfx.image: cannot read %s: %s", path, stbi_failure_reason());
    int id = rnd_image_create(w, h, px);
    stbi_image_free(px);
    if (!id) return luaL_error(L, "gfx.image: %s: %s", path, rnd_error());
    Image *im = lua_newuserdatauv(L, sizeof *im, 0);
    *im = (Image){ id, w, h, rnd_generation() };
    luaL_setmetatable(L, IMAGE_TYPE);
    lua_pushvalue(L, key);
    lua_pushvalue(L, -2);
    lua_rawset(L, cache);
    return 1;
}

static int gfx_draw(lua_State *L)
{
    check_open(L, "draw");
    Image *im = check_image(L, 1, "draw");
    Opts o;
    if (lua_istable(L, 2)) {
        float p[3], ax[3], ay[3], corners[12];
        impl_check_arg_count(L, "gfx.draw(image, point [, opts])");
        read_point(L, 2, "draw", "argument 'point'", p);
        read_opts(L, 3, "draw", "color angle size layer", &o);
        /* size: width in metres (height from the aspect), or {w, h} */
        float w = 1.0f, h = (float)im->height / (float)im->width;
        lua_getfield(L, 3, "size");
        if (lua_istable(L, -1)) {
            float wh[2];
            read_pair(L, -1, "draw", "option 'size'", wh);
            w = wh[0], h = wh[1];
        } else if (!lua_isnil(L, -1)) {
            w = o.size, h = o.size * (float)im->height / (float)im->width;
        }
        lua_pop(L, 1);
        o.normal[0] = 0, o.normal[1] = 0, o.normal[2] = 1;
        shape_axes(&o, ax, ay);
        /* the image's top edge is along +y in the world */
        static const float sx[4] = { -1, 1, 1, -1 }, sy[4] = { 1, 1, -1, -1 };
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 3; i++) corners[3 * k + i] = p[i] + sx[k] * 0.5f * w * ax[i] + sy[k] * 0.5f * h * ay[i];
        rnd_flat_image(o.layer, im->id, corners, o.color);
        return 0;
    }
    impl_check_arg_count(L, "gfx.draw(image, x, y [, opts])");
    float x = checkfinite(L, 2, "draw", "x"), y = checkfinite(L, 3, "draw", "y");
    read_opts(L, 4, "draw", "color angle scale origin", &o);
    float sx = 1, sy = 1, ox = 0, oy = 0;
    if (lua_istable(L, 4)) {
        lua_getfield(L, 4, "scale");
        if (lua_istable(L, -1)) {
            float s2[2];
            read_pair(L, -1, "draw", "option 'scale'", s2);
            sx = s2[0], sy = s2[1];
        } else if (!lua_isnil(L, -1)) {
            sx = sy = checkfinite(L, -1, "draw", "scale");
        }
        lua_getfield(L, 4, "origin");
        if (lua_istable(L, -1)) {
            float o2[2];
            read_pair(L, -1, "draw", "option 'origin'", o2);
            ox = o2[0], oy = o2[1];
        } else if (!lua_isnil(L, -1)) {
            luaL_error(L, "gfx.draw: option 'origin' must be {ox, oy} in image pixels");
        }
        lua_pop(L, 2);
    }
    float c = cosf(o.angle), s = sinf(o.angle), corners[8];
    const float u[4] = { -ox, (float)im->width - ox, (float)im->width - ox, -ox };
    const float v[4] = { -oy, -oy, (float)im->height - oy, (float)im->height - oy };
    for (int k = 0; k < 4; k++) {
        float px = u[k] * sx, py = v[k] * sy;
        corners[2 * k] = x + c * px - s * py, corners[2 * k + 1] = y + s * px + c * py;
    }
    rnd_overlay_image(im->id, corners, o.color);
    return 0;
}

static int gfx_image_quad(lua_State *L)
{
    check_open(L, "image_quad");
    impl_check_arg_count(L, "gfx.image_quad(image, corners [, opts])");
    Image *im = check_image(L, 1, "image_quad");
    luaL_checktype(L, 2, LUA_TTABLE);
    check_components(L, 2, "image_quad", "argument 'corners'", "a list of 4 corners", 4, 0);
    float corners[12];
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, 2, k + 1);
        read_point(L, -1, "image_quad", "each corner", corners + 3 * k);
        lua_pop(L, 1);
    }
    Opts o;
    read_opts(L, 3, "image_quad", "color layer", &o);
    rnd_flat_image(o.layer, im->id, corners, o.color);
    return 0;
}

/* gfx.write_png(path, width, height, rgba): write RGBA bytes (rows top-down) as a PNG; works without
 * a window (tools and specs make their images with it) */
static int gfx_write_png(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer w = luaL_checkinteger(L, 2), h = luaL_checkinteger(L, 3);
    size_t n;
    const char *px = luaL_checklstring(L, 4, &n);
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return luaL_error(L, "gfx.write_png: width and height must be in 1..16384");
    if (n != (size_t)(w * h * 4)) return luaL_error(L, "gfx.write_png: rgba must hold width * height * 4 = %I bytes (got %I)", w * h * 4, (lua_Integer)n);
    if (!stbi_write_png(path, (int)w, (int)h, 4, px, (int)w * 4)) return luaL_error(L, "gfx.write_png: cannot write %s", path);
    return 0;
}

void gfx_draw_register(lua_State *L)
{
    if (luaL_newmetatable(L, IMAGE_TYPE)) {
        static const luaL_Reg meta[] = {{"__gc", image_gc}, {"__index", image_index}, {"__tostring", image_tostring}, {NULL, NULL}};
        luaL_setfuncs(L, meta, 0);
    }
    lua_pop(L, 1);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, IMAGE_TYPE ".cache");
    static const luaL_Reg fns[] = {
        {"circle", gfx_circle}, {"rectangle", gfx_rectangle}, {"polygon", gfx_polygon}, {"polyline", gfx_polyline},
        {"line", gfx_line},     {"text", gfx_text},           {"text_width", gfx_text_width},
        {"line_height", gfx_line_height}, {"image", gfx_image}, {"draw", gfx_draw}, {"image_quad", gfx_image_quad},
        {"write_png", gfx_write_png}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}

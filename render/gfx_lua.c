/* gfx_lua.c: the "impetus.gfx" module of the host: the SDL2 window, input events and the drawing
 * calls of render.h, for scripts/impetus/run.lua and for scenes' draw(world, gfx) callbacks.
 *
 *   gfx.open{title, width, height, offscreen}  -> true | nil, message      gfx.close()
 *   gfx.poll() -> list of events               gfx.size() -> w, h         gfx.time() -> seconds
 *   gfx.begin_frame(rgb)  gfx.end_frame()  gfx.present()  gfx.screenshot(path)
 *   gfx.camera3d(eye, target, fovy)  gfx.camera2d(cx, cy, half_height)
 *   gfx.project(p) -> x, y | nil     gfx.unproject(x, y) -> origin, dir
 *   gfx.grid(extent, spacing, height)  gfx.sphere(c, r, rgba)  gfx.box(c, half, rgba)  gfx.shadows(on)
 *   gfx.world(world)  draws particles, springs, constraints, curves, colliders, rigid bodies,
 *                     cloth (shaded meshes) and hair (lines)
 *   gfx.debug{contacts, aabbs, centers, velocities}  debug views of gfx.world (gfx_bodies.c)
 *   gfx.rect(x, y, w, h, rgba)
 *   lines, shapes, text and images for games: gfx_draw.c
 */
#include <SDL.h>
#include <ctype.h>
#include <math.h>
#include <epoxy/gl.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/lua/impetus_lua.h"
#include "render.h"
#include "gfx_bodies.h"
#include "gfx_draw.h"

static SDL_Window *window;
static SDL_GLContext context;
static float *scratch; /* per-frame instance data for gfx.world */
static size_t scratch_cap;
static struct {           /* cloth meshes and hair for gfx.world */
    float *xyz, *nrm;
    unsigned *tri;
    unsigned char *owned; /* per particle: drawn by a cloth or hair, not as a sphere */
    size_t vcap, tcap, pcap;
} cm;

static float *scratch_floats(size_t n)
{
    if (n > scratch_cap) {
        float *p = realloc(scratch, n * sizeof(float));
        if (!p) return NULL;
        scratch = p;
        scratch_cap = n;
    }
    return scratch;
}

static void check_open(lua_State *L, const char *fn)
{
    if (!rnd_generation()) luaL_error(L, "gfx.%s: no window is open (call gfx.open first)", fn);
}

static float *opt_color(lua_State *L, int idx, const char *what, float rgba[4], float r, float g, float b, float a)
{
    rgba[0] = r, rgba[1] = g, rgba[2] = b, rgba[3] = a;
    if (!lua_isnoneornil(L, idx)) impl_tocolor(L, idx, what, rgba);
    return rgba;
}

static void tofloat3(imp_vec3 v, float out[3]) { out[0] = (float)v.x, out[1] = (float)v.y, out[2] = (float)v.z; }

/* ---- window ---------------------------------------------------------------------------------------- */

static int gfx_open(lua_State *L)
{
    if (window) return luaL_error(L, "gfx.open: a window is already open");
    const char *title = "impetus";
    int w = 1280, h = 720, offscreen = 0;
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_getfield(L, 1, "title");
        if (lua_isstring(L, -1)) title = lua_tostring(L, -1);
        w = (int)impl_field_number(L, 1, "gfx.open", "width", w);
        h = (int)impl_field_number(L, 1, "gfx.open", "height", h);
        offscreen = impl_field_bool(L, 1, "gfx.open", "offscreen", 0);
    }
    if (offscreen) SDL_SetHint(SDL_HINT_VIDEODRIVER, "offscreen");
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1"); /* render/main.c handles SIGTERM and SIGINT */
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot start SDL video: %s", SDL_GetError());
        return 2;
    }
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    window = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h, flags);
    if (window) context = SDL_GL_CreateContext(window);
    if (!window || !context) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot open an OpenGL 3.3 window: %s", SDL_GetError());
        if (window) SDL_DestroyWindow(window);
        window = NULL;
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
        return 2;
    }
    SDL_GL_SetSwapInterval(offscreen ? 0 : 1);
    if (rnd_init() != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "renderer: %s", rnd_error());
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_pushstring(L, SDL_GetCurrentVideoDriver());
    lua_pushstring(L, (const char *)glGetString(GL_RENDERER));
    return 3;
}

static int gfx_close(lua_State *L)
{
    (void)L;
    if (rnd_generation()) rnd_shutdown();
    if (context) SDL_GL_DeleteContext(context);
    if (window) SDL_DestroyWindow(window);
    context = NULL;
    window = NULL;
    free(scratch);
    scratch = NULL;
    scratch_cap = 0;
    free(cm.xyz), free(cm.nrm), free(cm.tri), free(cm.owned);
    memset(&cm, 0, sizeof cm);
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
    return 0;
}

static int gfx_size(lua_State *L)
{
    impl_check_arg_count(L, "gfx.size()");
    int w = 0, h = 0;
    if (window) SDL_GL_GetDrawableSize(window, &w, &h);
    lua_pushinteger(L, w);
    lua_pushinteger(L, h);
    return 2;
}

static int gfx_time(lua_State *L)
{
    lua_pushnumber(L, (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency());
    return 1;
}

static int gfx_delay(lua_State *L)
{
    SDL_Delay((Uint32)luaL_checkinteger(L, 1));
    return 0;
}

static int gfx_set_title(lua_State *L)
{
    if (window) SDL_SetWindowTitle(window, luaL_checkstring(L, 1));
    return 0;
}

/* key names as scripts see them: SDL's names, lower case, spaces as underscores ("space", "f1") */
static void push_key(lua_State *L, SDL_Keycode k)
{
    char buf[64];
    const char *n = SDL_GetKeyName(k);
    size_t i = 0;
    for (; n[i] && i < sizeof buf - 1; i++) buf[i] = n[i] == ' ' ? '_' : (char)tolower((unsigned char)n[i]);
    buf[i] = 0;
    lua_pushstring(L, buf);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) { lua_pushinteger(L, v), lua_setfield(L, -2, k); }

/* SDL numbers buttons left 1, middle 2, right 3; scripts see LOVE's left 1, right 2, middle 3 */
static int love_button(int sdl_button)
{
    if (sdl_button == SDL_BUTTON_MIDDLE) return 3;
    if (sdl_button == SDL_BUTTON_RIGHT) return 2;
    return sdl_button;
}

static int gfx_poll(lua_State *L)
{
    lua_newtable(L);
    int n = 0;
    SDL_Event e;
    float scale = 1.0f;
    if (window) {
        int ww, wh, dw, dh;
        SDL_GetWindowSize(window, &ww, &wh);
        SDL_GL_GetDrawableSize(window, &dw, &dh);
        if (ww > 0) scale = (float)dw / (float)ww;
    }
    while (SDL_PollEvent(&e)) {
        lua_newtable(L);
        switch (e.type) {
        case SDL_QUIT:
            lua_pushliteral(L, "quit");
            lua_setfield(L, -2, "type");
            break;
        case SDL_KEYDOWN:
        case SDL_KEYUP:
            lua_pushstring(L, e.type == SDL_KEYDOWN ? "keydown" : "keyup");
            lua_setfield(L, -2, "type");
            push_key(L, e.key.keysym.sym);
            lua_setfield(L, -2, "key");
            lua_pushboolean(L, e.key.repeat), lua_setfield(L, -2, "isrepeat");
            lua_pushboolean(L, (e.key.keysym.mod & KMOD_CTRL) != 0), lua_setfield(L, -2, "ctrl");
            lua_pushboolean(L, (e.key.keysym.mod & KMOD_SHIFT) != 0), lua_setfield(L, -2, "shift");
            break;
        case SDL_MOUSEBUTTONDOWN:
        case SDL_MOUSEBUTTONUP:
            lua_pushstring(L, e.type == SDL_MOUSEBUTTONDOWN ? "mousedown" : "mouseup");
            lua_setfield(L, -2, "type");
            set_int(L, "x", (lua_Integer)(e.button.x * scale));
            set_int(L, "y", (lua_Integer)(e.button.y * scale));
            set_int(L, "button", love_button(e.button.button));
            lua_pushboolean(L, (SDL_GetModState() & KMOD_CTRL) != 0), lua_setfield(L, -2, "ctrl");
            lua_pushboolean(L, (SDL_GetModState() & KMOD_SHIFT) != 0), lua_setfield(L, -2, "shift");
            break;
        case SDL_MOUSEMOTION:
            lua_pushliteral(L, "mousemove");
            lua_setfield(L, -2, "type");
            set_int(L, "x", (lua_Integer)(e.motion.x * scale));
            set_int(L, "y", (lua_Integer)(e.motion.y * scale));
            set_int(L, "dx", (lua_Integer)(e.motion.xrel * scale));
            set_int(L, "dy", (lua_Integer)(e.motion.yrel * scale));
            set_int(L, "buttons", e.motion.state);
            break;
        case SDL_MOUSEWHEEL:
            lua_pushliteral(L, "wheel");
            lua_setfield(L, -2, "type");
            set_int(L, "dx", e.wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e.wheel.x : e.wheel.x);
            set_int(L, "dy", e.wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e.wheel.y : e.wheel.y);
            break;
        case SDL_WINDOWEVENT:
            /* focus lost: keys released elsewhere never report, so the input state forgets them */
            lua_pushstring(L, e.window.event == SDL_WINDOWEVENT_FOCUS_LOST ? "focuslost" : "window");
            lua_setfield(L, -2, "type");
            break;
        default:
            lua_pop(L, 1);
            continue;
        }
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* ---- frame and camera ------------------------------------------------------------------------------ */

static int gfx_begin_frame(lua_State *L)
{
    check_open(L, "begin_frame");
    float c[4];
    opt_color(L, 1, "gfx.begin_frame: argument 'color'", c, 0.12f, 0.13f, 0.15f, 1);
    int w, h;
    SDL_GL_GetDrawableSize(window, &w, &h);
    rnd_begin_frame(w, h, c);
    return 0;
}

static int gfx_end_frame(lua_State *L)
{
    check_open(L, "end_frame");
    rnd_end_frame();
    return 0;
}

static int gfx_present(lua_State *L)
{
    check_open(L, "present");
    SDL_GL_SwapWindow(window);
    return 0;
}

static int gfx_screenshot(lua_State *L)
{
    check_open(L, "screenshot");
    int w, h;
    SDL_GL_GetDrawableSize(window, &w, &h);
    if (rnd_screenshot(luaL_checkstring(L, 1), w, h) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, rnd_error());
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int gfx_camera3d(lua_State *L)
{
    check_open(L, "camera3d");
    float eye[3], target[3], up[3] = {0, 1, 0};
    tofloat3(impl_tovec3(L, 1, "gfx.camera3d: argument 'eye'"), eye);
    tofloat3(impl_tovec3(L, 2, "gfx.camera3d: argument 'target'"), target);
    float fovy = (float)luaL_optnumber(L, 3, 0.9);
    rnd_camera_3d(eye, target, up, fovy, 0.05f, 500.0f);
    return 0;
}

static int gfx_camera2d(lua_State *L)
{
    check_open(L, "camera2d");
    rnd_camera_2d((float)luaL_checknumber(L, 1), (float)luaL_checknumber(L, 2), (float)luaL_checknumber(L, 3));
    return 0;
}

static int gfx_project(lua_State *L)
{
    check_open(L, "project");
    impl_check_arg_count(L, "gfx.project(p)");
    float p[3], x, y;
    tofloat3(impl_tovec3(L, 1, "gfx.project: argument 'point'"), p);
    if (!rnd_project(p, &x, &y)) return 0;
    lua_pushnumber(L, x);
    lua_pushnumber(L, y);
    return 2;
}

static int gfx_unproject(lua_State *L)
{
    check_open(L, "unproject");
    impl_check_arg_count(L, "gfx.unproject(x, y)");
    float o[3], d[3];
    rnd_unproject((float)luaL_checknumber(L, 1), (float)luaL_checknumber(L, 2), o, d);
    impl_pushvec3(L, v3(o[0], o[1], o[2]));
    impl_pushvec3(L, v3(d[0], d[1], d[2]));
    return 2;
}

/* ---- 3D drawing -------------------------------------------------------------------------------------- */

static int gfx_grid(lua_State *L)
{
    check_open(L, "grid");
    impl_check_arg_count(L, "gfx.grid([extent, spacing, height])");
    rnd_grid((float)luaL_optnumber(L, 1, 10), (float)luaL_optnumber(L, 2, 1), (float)luaL_optnumber(L, 3, 0));
    return 0;
}

static int gfx_sphere(lua_State *L)
{
    check_open(L, "sphere");
    impl_check_arg_count(L, "gfx.sphere(center, r [, color])");
    float s[4], c[4];
    tofloat3(impl_tovec3(L, 1, "gfx.sphere: argument 'center'"), s);
    s[3] = (float)luaL_checknumber(L, 2);
    rnd_spheres(1, s, opt_color(L, 3, "gfx.sphere: argument 'color'", c, 0.95f, 0.55f, 0.15f, 1));
    return 0;
}

static int gfx_box(lua_State *L)
{
    check_open(L, "box");
    impl_check_arg_count(L, "gfx.box(center, half [, color])");
    float xf[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, half[3], c[4];
    tofloat3(impl_tovec3(L, 1, "gfx.box: argument 'center'"), xf + 9);
    tofloat3(impl_tovec3(L, 2, "gfx.box: argument 'half'"), half);
    rnd_boxes(1, xf, half, opt_color(L, 3, "gfx.box: argument 'color'", c, 0.6f, 0.6f, 0.65f, 1));
    return 0;
}

/* tinkertoys (engine/tinkertoy.c): rods as lines, circular wires as polylines, a line constraint as a
 * long segment, a pin as a small cross; the curves of curve particles (when they have a range) */
static void draw_constraints(imp_world *w)
{
    enum { SEGMENTS = 64, CURVE_SAMPLES = 129 };
    for (int i = 0; i < imp_constraint_count(w); i++) {
        imp_constraint_def d = imp_constraint_get(w, imp_constraint_id(w, i));
        float a[3], b[3];
        switch (d.kind) {
        case IMP_CONSTRAINT_ROD:
            tofloat3(imp_particle_position(w, d.particles[0]), a);
            tofloat3(imp_particle_position(w, d.particles[1]), b);
            rnd_line(a, b, d.color);
            break;
        case IMP_CONSTRAINT_WIRE: {
            /* the circle center + R (cos t e1 + sin t e2), e1 and e2 across the normal */
            imp_vec3 n = d.normal, h = fabs(n.x) < 0.9 ? v3(1, 0, 0) : v3(0, 1, 0);
            imp_vec3 e1 = v3_normalize(v3_sub(h, v3_scale(n, v3_dot(h, n)))), e2 = v3_cross(n, e1);
            for (int k = 0; k < SEGMENTS; k++) {
                double t0 = 2 * M_PI * k / SEGMENTS, t1 = 2 * M_PI * (k + 1) / SEGMENTS;
                tofloat3(v3_add(d.center, v3_add(v3_scale(e1, d.radius * cos(t0)), v3_scale(e2, d.radius * sin(t0)))), a);
                tofloat3(v3_add(d.center, v3_add(v3_scale(e1, d.radius * cos(t1)), v3_scale(e2, d.radius * sin(t1)))), b);
                rnd_line(a, b, d.color);
            }
            break;
        }
        case IMP_CONSTRAINT_LINE:
            tofloat3(v3_mad(d.point, d.direction, -20), a);
            tofloat3(v3_mad(d.point, d.direction, 20), b);
            rnd_line(a, b, d.color);
            break;
        case IMP_CONSTRAINT_PIN:
            for (int k = 0; k < 3; k++) {
                double e[3] = {0, 0, 0};
                e[k] = 0.06;
                tofloat3(v3_sub(d.point, v3_load(e)), a);
                tofloat3(v3_add(d.point, v3_load(e)), b);
                rnd_line(a, b, d.color);
            }
            break;
        default: break; /* planes and script constraints have no shape to draw */
        }
    }
    for (int i = 0; i < imp_curve_particle_count(w); i++) {
        imp_id id = imp_curve_particle_id(w, i);
        double xyz[3 * CURVE_SAMPLES];
        int n = imp_curve_particle_sample(w, id, CURVE_SAMPLES, xyz);
        float c[4];
        imp_particle_color(w, id, c);
        c[3] = 0.8f;
        for (int k = 0; k + 1 < n; k++) {
            float a[3], b[3];
            tofloat3(v3_load(xyz + 3 * k), a);
            tofloat3(v3_load(xyz + 3 * k + 3), b);
            rnd_line(a, b, c);
        }
    }
}

/* ---- cloth and hair ----------------------------------------------------------------------------------- */


static bool cloth_reserve(size_t nv, size_t nt, size_t np)
{
    if (nv > cm.vcap) {
        float *a = realloc(cm.xyz, 3 * nv * sizeof(float)), *b = a ? realloc(cm.nrm, 3 * nv * sizeof(float)) : NULL;
        if (a) cm.xyz = a;
        if (b) cm.nrm = b;
        if (!a || !b) return false;
        cm.vcap = nv;
    }
    if (nt > cm.tcap) {
        unsigned *t = realloc(cm.tri, 3 * nt * sizeof(unsigned));
        if (!t) return false;
        cm.tri = t, cm.tcap = nt;
    }
    if (np > cm.pcap) {
        unsigned char *o = realloc(cm.owned, np);
        if (!o) return false;
        cm.owned = o, cm.pcap = np;
    }
    return true;
}

/* Cloth as a smooth-shaded two-sided mesh: vertex normals are the sums of the (area-weighted,
 * unnormalized) normals of the triangles around each vertex; hair as a polyline. Marks their
 * particles in cm.owned. Returns false when out of memory. */
static bool draw_cloth(imp_world *w)
{
    const int np = imp_particle_count(w);
    if (!cloth_reserve(0, 0, (size_t)np + 1)) return false;
    memset(cm.owned, 0, (size_t)np + 1);
    const double *x = imp_particle_positions(w);
    for (int c = 0; c < imp_cloth_count(w); c++) {
        imp_mesh_view m = imp_cloth_mesh(w, c);
        if (!cloth_reserve((size_t)m.vertex_count, (size_t)m.triangle_count, 0)) return false;
        for (int k = 0; k < m.vertex_count; k++) {
            int p = m.vertex_particle[k];
            if (p >= 0) {
                cm.owned[p] = 1;
                for (int e = 0; e < 3; e++) cm.xyz[3 * k + e] = (float)x[3 * p + e];
            } else {
                cm.xyz[3 * k] = cm.xyz[3 * k + 1] = cm.xyz[3 * k + 2] = 0;
            }
        }
        if (m.hair) {
            for (int k = 0; k + 1 < m.vertex_count; k++)
                if (m.vertex_particle[k] >= 0 && m.vertex_particle[k + 1] >= 0)
                    rnd_line(cm.xyz + 3 * k, cm.xyz + 3 * (k + 1), m.color);
            continue;
        }
        memset(cm.nrm, 0, 3 * sizeof(float) * (size_t)m.vertex_count);
        int nt = 0;
        for (int t = 0; t < m.triangle_count; t++) {
            const int *v = m.triangles + 3 * t;
            if (m.vertex_particle[v[0]] < 0 || m.vertex_particle[v[1]] < 0 || m.vertex_particle[v[2]] < 0) continue;
            const float *a = cm.xyz + 3 * v[0], *b = cm.xyz + 3 * v[1], *d = cm.xyz + 3 * v[2];
            float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
            float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
            for (int i = 0; i < 3; i++)
                for (int e = 0; e < 3; e++) cm.nrm[3 * v[i] + e] += n[e];
            for (int i = 0; i < 3; i++) cm.tri[3 * nt + i] = (unsigned)v[i];
            nt++;
        }
        for (int k = 0; k < m.vertex_count; k++) {
            float *n = cm.nrm + 3 * k, l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            if (l > 0) n[0] /= l, n[1] /= l, n[2] /= l;
            else n[1] = 1;
        }
        rnd_mesh(m.vertex_count, cm.xyz, cm.nrm, nt, cm.tri, m.color, m.back_color);
    }
    return true;
}

/* draw a whole world: colliders, springs as lines, cloth and hair, particles as instanced spheres */
static int gfx_world(lua_State *L)
{
    check_open(L, "world");
    imp_world *w = impl_check_world(L, 1);
    const float surface[4] = {0.55f, 0.58f, 0.62f, 1}, ground[4] = {0.36f, 0.38f, 0.41f, 1};
    for (int i = 0; i < imp_collider_count(w); i++) {
        imp_collider_def c = imp_collider_get(w, i);
        if (c.shape == IMP_COLLIDER_SPHERE) {
            float s[4];
            tofloat3(c.position, s);
            s[3] = (float)c.radius;
            rnd_spheres(1, s, surface);
        } else if (c.shape == IMP_COLLIDER_BOX) {
            float xf[12], half[3];
            for (int col = 0; col < 3; col++)
                for (int row = 0; row < 3; row++) xf[3 * col + row] = (float)c.rotation.m[row][col];
            tofloat3(c.position, xf + 9);
            tofloat3(c.half, half);
            rnd_boxes(1, xf, half, surface);
        }
        else if (c.shape == IMP_COLLIDER_PLANE) {
            float point[3], normal[3];
            tofloat3(c.position, point), tofloat3(c.normal, normal);
            rnd_plane(point, normal, ground);
        }
    }
    const float spring_color[4] = {0.75f, 0.85f, 1.0f, 0.9f};
    for (int i = 0; i < imp_spring_count(w); i++) {
        imp_vec3 a, b;
        float fa[3], fb[3];
        imp_spring_endpoints(w, i, &a, &b);
        tofloat3(a, fa), tofloat3(b, fb);
        rnd_line(fa, fb, spring_color);
    }
    draw_constraints(w);
    if (!draw_cloth(w)) return luaL_error(L, "gfx.world: out of memory");
    int n = imp_particle_count(w);
    if (n > 0) {
        float *xyzr = scratch_floats((size_t)n * 8);
        if (!xyzr) return luaL_error(L, "gfx.world: out of memory");
        float *rgba = xyzr + 4 * (size_t)n;
        const double *x = imp_particle_positions(w), *r = imp_particle_radii(w);
        const float *col = imp_particle_colors(w);
        int shown = 0;
        for (int i = 0; i < n; i++) {
            if (cm.owned[i]) continue; /* drawn as part of a cloth or hair */
            xyzr[4 * shown + 0] = (float)x[3 * i + 0];
            xyzr[4 * shown + 1] = (float)x[3 * i + 1];
            xyzr[4 * shown + 2] = (float)x[3 * i + 2];
            xyzr[4 * shown + 3] = (float)(r[i] > 0 ? r[i] : 0.02);
            memcpy(rgba + 4 * shown, col + 4 * i, 4 * sizeof(float));
            shown++;
        }
        rnd_spheres(shown, xyzr, rgba);
    }
    gfx_draw_bodies(w);
    return 0;
}

/* ---- overlay -------------------------------------------------------------------------------------------- */

/* gfx.shadows(on): shadows from the key light in this frame (3D camera only) */
static int gfx_shadows(lua_State *L)
{
    check_open(L, "shadows");
    rnd_shadows(lua_toboolean(L, 1));
    return 0;
}

static int gfx_rect(lua_State *L)
{
    check_open(L, "rect");
    impl_check_arg_count(L, "gfx.rect(x, y, w, h [, color])");
    float c[4];
    rnd_rect((float)luaL_checknumber(L, 1), (float)luaL_checknumber(L, 2), (float)luaL_checknumber(L, 3),
             (float)luaL_checknumber(L, 4), opt_color(L, 5, "gfx.rect: argument 'color'", c, 0, 0, 0, 0.6f));
    return 0;
}

int luaopen_impetus_gfx(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"open", gfx_open},         {"close", gfx_close},       {"size", gfx_size},
        {"time", gfx_time},         {"delay", gfx_delay},       {"set_title", gfx_set_title},
        {"poll", gfx_poll},         {"begin_frame", gfx_begin_frame}, {"end_frame", gfx_end_frame},
        {"present", gfx_present},   {"screenshot", gfx_screenshot},   {"camera3d", gfx_camera3d},
        {"camera2d", gfx_camera2d}, {"project", gfx_project},   {"unproject", gfx_unproject},
        {"grid", gfx_grid},         {"sphere", gfx_sphere},     {"box", gfx_box},
        {"world", gfx_world},       {"rect", gfx_rect},         {"shadows", gfx_shadows},
        {NULL, NULL}};
    luaL_newlib(L, fns);
    gfx_bodies_register(L); /* gfx.debug (gfx_bodies.c) */
    gfx_draw_register(L);   /* shapes, text, images (gfx_draw.c) */
    return 1;
}

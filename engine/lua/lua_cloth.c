/* lua_cloth.c: world:cloth{...}, world:hair{...}, the Cloth and Hair types, and the implicit
 * integrator's settings on the World:
 *
 *   world.cg_tolerance, world.cg_max_iterations, world.jacobian ("definite" | "full")
 *   world:jacobian_check([eps]) -> {dfdx = rel. error, dfdv = rel. error, dfdx_max, dfdv_max, matrix}
 *
 * A grid cloth is built here (vertices, (u, v) along the grid, alternating diagonals) and handed to
 * imp_cloth_create like any mesh. Temporary arrays are userdata, so an error midway leaks nothing. */
#include <string.h>

#include "imp_lua.h"

static void *scratch(lua_State *L, size_t bytes) { return lua_newuserdatauv(L, bytes ? bytes : 1, 0); }

static double positive(lua_State *L, double v, const char *fn, const char *key, bool allow_zero)
{
    if (allow_zero ? !(v >= 0) : !(v > 0))
        luaL_error(L, "%s: field '%s' must be %s (got %f)", fn, key, allow_zero ? ">= 0" : "> 0", v);
    return v;
}

static int field_int(lua_State *L, int idx, const char *fn, const char *key, int def, int lo, int hi)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (v != floor(v) || v < lo || v > hi) luaL_error(L, "%s: field '%s' must be an integer in %d..%d (got %f)", fn, key, lo, hi, v);
    return (int)v;
}

/* the def fields shared by grids and meshes */
static void cloth_common(lua_State *L, const char *fn, imp_cloth_def *def)
{
    def->mass = positive(L, impl_field_number(L, 2, fn, "mass", def->mass), fn, "mass", false);
    def->stretch = positive(L, impl_field_number(L, 2, fn, "stretch", def->stretch), fn, "stretch", true);
    def->shear = positive(L, impl_field_number(L, 2, fn, "shear", def->shear), fn, "shear", true);
    def->bend = positive(L, impl_field_number(L, 2, fn, "bend", def->bend), fn, "bend", true);
    def->damping = positive(L, impl_field_number(L, 2, fn, "damping", def->damping), fn, "damping", true);
    def->radius = positive(L, impl_field_number(L, 2, fn, "radius", def->radius), fn, "radius", true);
    impl_field_color(L, 2, fn, "color", def->color);
    memcpy(def->back_color, def->color, sizeof def->back_color);
    for (int k = 0; k < 3; k++) def->back_color[k] = 0.55f + 0.35f * def->color[k]; /* a paler lining */
    impl_field_color(L, 2, fn, "back_color", def->back_color);
}

static imp_vec3 unit(lua_State *L, imp_vec3 v, const char *fn, const char *key)
{
    double l = v3_len(v);
    if (!(l > 1e-12)) luaL_error(L, "%s: field '%s' must not be zero", fn, key);
    return v3_scale(v, 1 / l);
}

/* world:cloth{rows, cols, size | width, height, position, normal | axes, pin, ...} */
static void cloth_grid(lua_State *L, const char *fn, imp_cloth_def *def)
{
    int rows = field_int(L, 2, fn, "rows", 16, 2, 512), cols = field_int(L, 2, fn, "cols", 16, 2, 512);
    double width = 1, height = 1;
    if (lua_getfield(L, 2, "size") != LUA_TNIL) {
        if (lua_isnumber(L, -1)) {
            width = height = lua_tonumber(L, -1);
        } else {
            imp_vec3 s = impl_tovec3(L, -1, "world:cloth: field 'size' (a number or {width, height})");
            width = s.x, height = s.y;
        }
    }
    lua_pop(L, 1);
    width = impl_field_number(L, 2, fn, "width", width);
    height = impl_field_number(L, 2, fn, "height", height);
    positive(L, width, fn, "width", false);
    positive(L, height, fn, "height", false);
    imp_vec3 centre = impl_field_vec3(L, 2, fn, "position", v3(0, 2, 0));
    imp_vec3 u = v3(1, 0, 0), v = v3(0, 0, -1);
    lua_getfield(L, 2, "axes");
    bool has_axes = !lua_isnil(L, -1);
    if (has_axes) {
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 2) luaL_error(L, "%s: field 'axes' must be {u, v}: two vectors", fn);
        lua_rawgeti(L, -1, 1);
        u = unit(L, impl_tovec3(L, -1, "world:cloth: axes[1]"), fn, "axes[1]");
        lua_rawgeti(L, -2, 2);
        v = impl_tovec3(L, -1, "world:cloth: axes[2]");
        lua_pop(L, 2);
        v = v3_mad(v, u, -v3_dot(u, v)); /* made perpendicular to u */
        v = unit(L, v, fn, "axes[2] (parallel to axes[1])");
    }
    lua_pop(L, 1);
    if (!has_axes) {
        imp_vec3 n = unit(L, impl_field_vec3(L, 2, fn, "normal", v3(0, 1, 0)), fn, "normal");
        u = v3_mad(v3(1, 0, 0), n, -n.x);
        if (v3_len(u) < 1e-6) u = v3_mad(v3(0, 0, 1), n, -n.z);
        u = v3_normalize(u);
        v = v3_cross(n, u);
    }
    const int nv = rows * cols, nt = 2 * (rows - 1) * (cols - 1);
    imp_vec3 *pos = scratch(L, sizeof(imp_vec3) * (size_t)nv);
    double *uv = scratch(L, 2 * sizeof(double) * (size_t)nv);
    int *tris = scratch(L, 3 * sizeof(int) * (size_t)nt);
    bool *pinned = scratch(L, sizeof(bool) * (size_t)nv);
    memset(pinned, 0, sizeof(bool) * (size_t)nv);
    /* vertex (i, j): row i from the +v edge ("top"), column j from the -u edge ("left") */
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double su = width * ((double)j / (cols - 1) - 0.5), sv = height * (0.5 - (double)i / (rows - 1));
            pos[i * cols + j] = v3_add(centre, v3_add(v3_scale(u, su), v3_scale(v, sv)));
            uv[2 * (i * cols + j)] = su, uv[2 * (i * cols + j) + 1] = sv;
        }
    int t = 0;
    for (int i = 0; i + 1 < rows; i++)
        for (int j = 0; j + 1 < cols; j++) {
            int a = i * cols + j, b = a + 1, c = a + cols, d = c + 1;
            /* counter-clockwise seen from +normal (u x v); alternating diagonals keep it symmetric */
            int q[6];
            if ((i + j) % 2 == 0) {
                int qq[6] = {a, c, d, a, d, b};
                memcpy(q, qq, sizeof q);
            } else {
                int qq[6] = {a, c, b, b, c, d};
                memcpy(q, qq, sizeof q);
            }
            memcpy(tris + 3 * t, q, sizeof q);
            t += 2;
        }
    if (lua_getfield(L, 2, "pin") == LUA_TSTRING) {
        const char *p = lua_tostring(L, -1);
        if (!strcmp(p, "top")) {
            for (int j = 0; j < cols; j++) pinned[j] = true;
        } else if (!strcmp(p, "top_corners")) {
            pinned[0] = pinned[cols - 1] = true;
        } else if (!strcmp(p, "corners")) {
            pinned[0] = pinned[cols - 1] = pinned[nv - cols] = pinned[nv - 1] = true;
        } else if (!strcmp(p, "left")) {
            for (int i = 0; i < rows; i++) pinned[i * cols] = true;
        } else if (strcmp(p, "none")) {
            luaL_error(L, "%s: field 'pin' must be \"top\", \"top_corners\", \"corners\", \"left\", \"none\" or a list "
                          "of {row, col} (got \"%s\")", fn, p);
        }
    } else if (lua_istable(L, -1)) {
        int n = (int)lua_rawlen(L, -1);
        for (int k = 1; k <= n; k++) {
            lua_rawgeti(L, -1, k);
            int ok = lua_istable(L, -1), i = 0, j = 0;
            if (ok) {
                lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
                i = (int)lua_tointegerx(L, -2, &ok);
                int ok2;
                j = (int)lua_tointegerx(L, -1, &ok2);
                ok = ok && ok2;
                lua_pop(L, 2);
            }
            if (!ok || i < 1 || i > rows || j < 1 || j > cols)
                luaL_error(L, "%s: pin[%d] must be {row, col} with 1 <= row <= %d, 1 <= col <= %d", fn, k, rows, cols);
            pinned[(i - 1) * cols + (j - 1)] = true;
            lua_pop(L, 1);
        }
    } else if (!lua_isnil(L, -1)) {
        luaL_error(L, "%s: field 'pin' must be a string or a list of {row, col} (got %s)", fn, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    def->vertex_count = nv, def->triangle_count = nt;
    def->positions = pos, def->uv = uv, def->triangles = tris, def->pinned = pinned;
    def->rows = rows, def->cols = cols;
}

/* world:cloth{vertices = {...}, triangles = {{1, 2, 3}, ...}, uv, pin = {vertex numbers}, ...} */
static void cloth_mesh(lua_State *L, const char *fn, imp_cloth_def *def)
{
    lua_getfield(L, 2, "vertices");
    if (!lua_istable(L, -1)) luaL_error(L, "%s: field 'vertices' must be a list of vectors", fn);
    int nv = (int)lua_rawlen(L, -1);
    if (nv < 3) luaL_error(L, "%s: field 'vertices' needs at least 3 vertices (got %d)", fn, nv);
    imp_vec3 *pos = scratch(L, sizeof(imp_vec3) * (size_t)nv);
    for (int k = 0; k < nv; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s: vertices[%d]", fn, k + 1);
        lua_rawgeti(L, -2, k + 1);
        pos[k] = impl_tovec3(L, -1, what);
        lua_pop(L, 1);
    }
    lua_getfield(L, 2, "triangles");
    if (!lua_istable(L, -1)) luaL_error(L, "%s: field 'triangles' must be a list of {i, j, k} vertex numbers", fn);
    int nt = (int)lua_rawlen(L, -1);
    if (nt < 1) luaL_error(L, "%s: field 'triangles' is empty", fn);
    int *tris = scratch(L, 3 * sizeof(int) * (size_t)nt);
    for (int t = 0; t < nt; t++) {
        lua_rawgeti(L, -2, t + 1);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 3) luaL_error(L, "%s: triangles[%d] must be {i, j, k}", fn, t + 1);
        for (int c = 0; c < 3; c++) {
            lua_rawgeti(L, -1, c + 1);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok || v < 1 || v > nv)
                luaL_error(L, "%s: triangles[%d][%d] must be a vertex number in 1..%d", fn, t + 1, c + 1, nv);
            tris[3 * t + c] = (int)v - 1;
            lua_pop(L, 1);
        }
        if (tris[3 * t] == tris[3 * t + 1] || tris[3 * t + 1] == tris[3 * t + 2] || tris[3 * t] == tris[3 * t + 2])
            luaL_error(L, "%s: triangles[%d] repeats a vertex", fn, t + 1);
        lua_pop(L, 1);
    }
    double *uv = NULL;
    if (lua_getfield(L, 2, "uv") != LUA_TNIL) {
        if (!lua_istable(L, -1) || (int)lua_rawlen(L, -1) != nv)
            luaL_error(L, "%s: field 'uv' must be a list of %d {u, v} pairs, one per vertex", fn, nv);
        uv = scratch(L, 2 * sizeof(double) * (size_t)nv);
        for (int k = 0; k < nv; k++) {
            char what[64];
            snprintf(what, sizeof what, "%s: uv[%d]", fn, k + 1);
            lua_rawgeti(L, -2, k + 1);
            imp_vec3 q = impl_tovec3(L, -1, what);
            uv[2 * k] = q.x, uv[2 * k + 1] = q.y;
            lua_pop(L, 1);
        }
        /* the uv scratch stays on the stack (alive) until world:cloth returns */
    }
    bool *pinned = scratch(L, sizeof(bool) * (size_t)nv);
    memset(pinned, 0, sizeof(bool) * (size_t)nv);
    if (lua_getfield(L, 2, "pin") != LUA_TNIL) {
        if (!lua_istable(L, -1)) luaL_error(L, "%s: field 'pin' of a mesh must be a list of vertex numbers", fn);
        int n = (int)lua_rawlen(L, -1);
        for (int k = 1; k <= n; k++) {
            lua_rawgeti(L, -1, k);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok || v < 1 || v > nv) luaL_error(L, "%s: pin[%d] must be a vertex number in 1..%d", fn, k, nv);
            pinned[v - 1] = true;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    def->vertex_count = nv, def->triangle_count = nt;
    def->positions = pos, def->uv = uv, def->triangles = tris, def->pinned = pinned;
}

static int world_cloth(lua_State *L)
{
    const char *fn = "world:cloth";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"rows", "cols", "size", "width", "height", "position", "axes", "normal",
                                       "vertices", "triangles", "uv", "mass", "stretch", "shear", "bend", "damping",
                                       "pin", "color", "back_color", "radius", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_cloth_def def = imp_cloth_def_default();
    cloth_common(L, fn, &def);
    int top = lua_gettop(L);
    lua_getfield(L, 2, "vertices");
    bool mesh = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (mesh) {
        static const char *const grid_only[] = {"rows", "cols", "size", "width", "height", "position", "axes", "normal", NULL};
        for (const char *const *k = grid_only; *k; k++) {
            lua_getfield(L, 2, *k);
            if (!lua_isnil(L, -1)) luaL_error(L, "%s: field '%s' is for grids; a mesh cloth takes vertices and triangles", fn, *k);
            lua_pop(L, 1);
        }
        cloth_mesh(L, fn, &def);
    } else {
        lua_getfield(L, 2, "triangles");
        if (!lua_isnil(L, -1)) luaL_error(L, "%s: field 'triangles' needs 'vertices'", fn);
        lua_pop(L, 1);
        cloth_grid(L, fn, &def);
    }
    imp_id id = imp_cloth_create(lw->w, &def);
    if (imp_id_is_null(id))
        return luaL_error(L, "%s: a triangle has no area (or its (u, v) map is degenerate)", fn);
    lua_settop(L, top);
    impl_pushhandle(L, 1, IMPL_CLOTH, id);
    return 1;
}

/* world:hair{root, direction, length, segments | points, mass, stretch, bend, damping, radius,
 *            root_motion = "fixed" | "kinematic" | "free", clamped, color} */
static int world_hair(lua_State *L)
{
    const char *fn = "world:hair";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"root", "direction", "length", "segments", "points", "mass", "stretch", "bend",
                                       "damping", "radius", "root_motion", "clamped", "color", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_hair_def def = imp_hair_def_default();
    def.mass = positive(L, impl_field_number(L, 2, fn, "mass", def.mass), fn, "mass", false);
    def.stretch = positive(L, impl_field_number(L, 2, fn, "stretch", def.stretch), fn, "stretch", true);
    def.bend = positive(L, impl_field_number(L, 2, fn, "bend", def.bend), fn, "bend", true);
    def.damping = positive(L, impl_field_number(L, 2, fn, "damping", def.damping), fn, "damping", true);
    def.radius = positive(L, impl_field_number(L, 2, fn, "radius", def.radius), fn, "radius", true);
    def.clamped = impl_field_bool(L, 2, fn, "clamped", def.clamped);
    impl_field_color(L, 2, fn, "color", def.color);
    if (lua_getfield(L, 2, "root_motion") != LUA_TNIL) {
        const char *m = lua_tostring(L, -1);
        if (m && !strcmp(m, "fixed")) def.root = IMP_FIXED;
        else if (m && !strcmp(m, "kinematic")) def.root = IMP_KINEMATIC;
        else if (m && !strcmp(m, "free")) def.root = IMP_DYNAMIC;
        else return luaL_error(L, "%s: field 'root_motion' must be \"fixed\", \"kinematic\" or \"free\"", fn);
    }
    lua_pop(L, 1);
    imp_vec3 *pts;
    int np;
    if (lua_getfield(L, 2, "points") != LUA_TNIL) {
        static const char *const line_only[] = {"root", "direction", "length", "segments", NULL};
        for (const char *const *k = line_only; *k; k++) {
            lua_getfield(L, 2, *k);
            if (!lua_isnil(L, -1)) return luaL_error(L, "%s: give either 'points' or '%s', not both", fn, *k);
            lua_pop(L, 1);
        }
        if (!lua_istable(L, -1)) return luaL_error(L, "%s: field 'points' must be a list of vectors", fn);
        np = (int)lua_rawlen(L, -1);
        if (np < 2) return luaL_error(L, "%s: field 'points' needs at least 2 points", fn);
        pts = scratch(L, sizeof(imp_vec3) * (size_t)np);
        for (int k = 0; k < np; k++) {
            char what[64];
            snprintf(what, sizeof what, "%s: points[%d]", fn, k + 1);
            lua_rawgeti(L, -2, k + 1);
            pts[k] = impl_tovec3(L, -1, what);
            lua_pop(L, 1);
            if (k > 0 && !(v3_len(v3_sub(pts[k], pts[k - 1])) > 1e-9))
                return luaL_error(L, "%s: points[%d] coincides with points[%d]", fn, k + 1, k);
        }
    } else {
        imp_vec3 root = impl_field_vec3(L, 2, fn, "root", v3(0, 2, 0));
        imp_vec3 dir = unit(L, impl_field_vec3(L, 2, fn, "direction", v3(0, -1, 0)), fn, "direction");
        double len = positive(L, impl_field_number(L, 2, fn, "length", 0.3), fn, "length", false);
        int seg = field_int(L, 2, fn, "segments", 10, 1, 10000);
        np = seg + 1;
        pts = scratch(L, sizeof(imp_vec3) * (size_t)np);
        for (int k = 0; k < np; k++) pts[k] = v3_mad(root, dir, len * k / seg);
    }
    def.point_count = np;
    def.points = pts;
    imp_id id = imp_hair_create(lw->w, &def);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: could not build the strand", fn);
    impl_pushhandle(L, 1, IMPL_HAIR, id);
    return 1;
}

/* ---- Cloth and Hair handles ----------------------------------------------------------------------------- */

static lhandle *check_obj(lua_State *L, int idx)
{
    lhandle *h = luaL_testudata(L, idx, IMPL_CLOTH);
    if (!h) h = luaL_testudata(L, idx, IMPL_HAIR);
    if (!h) luaL_typeerror(L, idx, "Cloth or Hair");
    if (!imp_cloth_valid(h->lw->w, h->id)) {
        luaL_error(L, "stale %s handle: that object was destroyed", imp_cloth_is_hair(h->lw->w, h->id) ? "Hair" : "Cloth");
    }
    return h;
}

static void push_particle(lua_State *L, int handle_idx, imp_id p)
{
    if (imp_id_is_null(p)) {
        lua_pushboolean(L, 0);
        return;
    }
    lua_getiuservalue(L, handle_idx, 1);
    impl_pushhandle(L, -1, IMPL_PARTICLE, p);
    lua_remove(L, -2);
}

/* cloth:particle(row, col) on a grid, cloth:particle(k) on a mesh, hair:particle(k) (1 = root):
 * the Particle, or nil once it was destroyed */
static int o_particle(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    imp_world *w = h->lw->w;
    int n = imp_cloth_vertex_count(w, h->id), k;
    bool grid = luaL_testudata(L, 1, IMPL_CLOTH) && !lua_isnoneornil(L, 3);
    if (grid) {
        lua_getiuservalue(L, 1, 2); /* {rows, cols} kept at creation */
        lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
        int rows = (int)lua_tointeger(L, -2), cols = (int)lua_tointeger(L, -1);
        lua_pop(L, 3);
        if (rows == 0) return luaL_error(L, "cloth:particle(row, col) is for grids; a mesh cloth takes one vertex number");
        lua_Integer i = luaL_checkinteger(L, 2), j = luaL_checkinteger(L, 3);
        if (i < 1 || i > rows) return luaL_argerror(L, 2, lua_pushfstring(L, "row must be in 1..%d", rows));
        if (j < 1 || j > cols) return luaL_argerror(L, 3, lua_pushfstring(L, "col must be in 1..%d", cols));
        k = (int)((i - 1) * cols + (j - 1));
    } else {
        lua_Integer i = luaL_checkinteger(L, 2);
        if (i < 1 || i > n) return luaL_argerror(L, 2, lua_pushfstring(L, "vertex must be in 1..%d", n));
        k = (int)i - 1;
    }
    imp_id p = imp_cloth_particle(w, h->id, k);
    if (imp_id_is_null(p)) lua_pushnil(L);
    else push_particle(L, 1, p);
    return 1;
}

/* the particles in vertex order (grid: row by row); a destroyed one is false */
static int o_particles(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    int n = imp_cloth_vertex_count(h->lw->w, h->id);
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        push_particle(L, 1, imp_cloth_particle(h->lw->w, h->id, k));
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

static int o_destroy(lua_State *L)
{
    lhandle *h = luaL_testudata(L, 1, IMPL_CLOTH);
    if (!h) h = luaL_checkudata(L, 1, IMPL_HAIR);
    if (imp_cloth_valid(h->lw->w, h->id)) imp_cloth_destroy(impl_handle_unlocked(L, h, "destroy")->w, h->id);
    return 0;
}

static int o_valid(lua_State *L)
{
    lhandle *h = luaL_testudata(L, 1, IMPL_CLOTH);
    if (!h) h = luaL_checkudata(L, 1, IMPL_HAIR);
    lua_pushboolean(L, imp_cloth_valid(h->lw->w, h->id));
    return 1;
}

static int o_energy(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    lua_pushnumber(L, imp_cloth_energy(h->lw->w, h->id));
    return 1;
}

/* hair:move_root(position [, direction], dt): a kinematic root (and its anchor) reach the pose at
 * the end of the next step of length dt */
static int hair_move_root(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    imp_world *w = impl_handle_unlocked(L, h, "hair:move_root")->w;
    imp_vec3 target = impl_tovec3(L, 2, "hair:move_root: argument 'position'");
    int dt_idx = lua_gettop(L) >= 4 ? 4 : 3;
    double dt = luaL_checknumber(L, dt_idx);
    if (!(dt > 0)) return luaL_argerror(L, dt_idx, "dt must be > 0");
    imp_id root = imp_cloth_particle(w, h->id, 0), anchor = imp_hair_anchor(w, h->id);
    if (imp_id_is_null(root) || imp_particle_motion(w, root) != IMP_KINEMATIC)
        return luaL_error(L, "hair:move_root: the root must be kinematic (world:hair{root_motion = \"kinematic\"})");
    imp_particle_move_to(w, root, target, dt);
    if (!imp_id_is_null(anchor)) {
        imp_vec3 xr = imp_particle_position(w, root), xa = imp_particle_position(w, anchor);
        imp_vec3 d = v3_sub(xr, xa);
        double l = v3_len(d);
        if (dt_idx == 4) {
            imp_vec3 nd = impl_tovec3(L, 3, "hair:move_root: argument 'direction'");
            if (!(v3_len(nd) > 1e-12)) return luaL_argerror(L, 3, "direction must not be zero");
            d = v3_normalize(nd);
        } else {
            d = v3_scale(d, 1 / l);
        }
        imp_particle_move_to(w, anchor, v3_mad(target, d, -l), dt);
    }
    return 0;
}

static int param_get(lua_State *L, int which)
{
    lhandle *h = check_obj(L, 1);
    double p[4] = {0, 0, 0, 0};
    imp_cloth_params(h->lw->w, h->id, &p[0], &p[1], &p[2], &p[3]);
    lua_pushnumber(L, p[which]);
    return 1;
}

static int param_set(lua_State *L, int which, const char *name)
{
    lhandle *h = check_obj(L, 1);
    const char *kind = luaL_testudata(L, 1, IMPL_HAIR) ? "hair" : "cloth";
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "%s.%s must be a number >= 0 (got %f)", kind, name, v);
    double p[4] = {-1, -1, -1, -1};
    p[which] = v;
    imp_cloth_set_params(impl_handle_unlocked(L, h, name)->w, h->id, p[0], p[1], p[2], p[3]);
    return 0;
}

static int g_stretch(lua_State *L) { return param_get(L, 0); }
static int g_shear(lua_State *L) { return param_get(L, 1); }
static int g_bend(lua_State *L) { return param_get(L, 2); }
static int g_damping(lua_State *L) { return param_get(L, 3); }
static int s_stretch(lua_State *L) { return param_set(L, 0, "stretch"); }
static int s_shear(lua_State *L) { return param_set(L, 1, "shear"); }
static int s_bend(lua_State *L) { return param_set(L, 2, "bend"); }
static int s_damping(lua_State *L) { return param_set(L, 3, "damping"); }
static int g_vertex_count(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    lua_pushinteger(L, imp_cloth_vertex_count(h->lw->w, h->id));
    return 1;
}
static int grid_dim(lua_State *L, int which)
{
    check_obj(L, 1);
    lua_getiuservalue(L, 1, 2);
    lua_rawgeti(L, -1, which);
    return 1;
}
static int g_rows(lua_State *L) { return grid_dim(L, 1); }
static int g_cols(lua_State *L) { return grid_dim(L, 2); }
static int g_anchor(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    imp_id a = imp_hair_anchor(h->lw->w, h->id);
    if (imp_id_is_null(a)) lua_pushnil(L);
    else push_particle(L, 1, a);
    return 1;
}
static int s_color(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    float c[4];
    impl_tocolor(L, 2, luaL_testudata(L, 1, IMPL_HAIR) ? "hair.color" : "cloth.color", c);
    imp_cloth_set_color(h->lw->w, h->id, c, imp_cloth_is_hair(h->lw->w, h->id) ? c : NULL);
    return 0;
}
static int s_back_color(lua_State *L)
{
    lhandle *h = check_obj(L, 1);
    float c[4];
    impl_tocolor(L, 2, "cloth.back_color", c);
    imp_cloth_set_color(h->lw->w, h->id, NULL, c);
    return 0;
}

static int o_tostring(lua_State *L)
{
    lhandle *h = luaL_testudata(L, 1, IMPL_CLOTH);
    const char *kind = h ? "Cloth" : "Hair";
    if (!h) h = luaL_checkudata(L, 1, IMPL_HAIR);
    if (!imp_cloth_valid(h->lw->w, h->id)) lua_pushfstring(L, "%s (destroyed)", kind);
    else lua_pushfstring(L, "%s #%d (%d particles)", kind, (int)h->id.index, imp_cloth_vertex_count(h->lw->w, h->id));
    return 1;
}

/* ---- implicit settings on the World ------------------------------------------------------------------------ */

static int wg_cg_tolerance(lua_State *L) { lua_pushnumber(L, imp_world_implicit(impl_checkworld(L, 1)->w).cg_tolerance); return 1; }
static int wg_cg_max(lua_State *L) { lua_pushinteger(L, imp_world_implicit(impl_checkworld(L, 1)->w).cg_max_iterations); return 1; }
static int wg_jacobian(lua_State *L)
{
    lua_pushstring(L, imp_world_implicit(impl_checkworld(L, 1)->w).full_jacobian ? "full" : "definite");
    return 1;
}
static int ws_cg_tolerance(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.cg_tolerance");
    double t = luaL_checknumber(L, 2);
    if (!(t > 0) || !(t < 1)) return luaL_error(L, "world.cg_tolerance must be in (0, 1) (got %f)", t);
    imp_implicit_settings s = imp_world_implicit(lw->w);
    s.cg_tolerance = t;
    imp_world_set_implicit(lw->w, &s);
    return 0;
}
static int ws_cg_max(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.cg_max_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 1000000) return luaL_error(L, "world.cg_max_iterations must be in 1..1000000");
    imp_implicit_settings s = imp_world_implicit(lw->w);
    s.cg_max_iterations = (int)n;
    imp_world_set_implicit(lw->w, &s);
    return 0;
}
static int ws_jacobian(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.jacobian");
    const char *m = luaL_checkstring(L, 2);
    if (strcmp(m, "definite") && strcmp(m, "full"))
        return luaL_error(L, "world.jacobian must be \"definite\" or \"full\" (got \"%s\")", m);
    imp_implicit_settings s = imp_world_implicit(lw->w);
    s.full_jacobian = !strcmp(m, "full");
    imp_world_set_implicit(lw->w, &s);
    return 0;
}

/* world:jacobian_check([eps]) */
static int world_jacobian_check(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world:jacobian_check");
    double eps = luaL_optnumber(L, 2, 1e-6);
    if (!(eps > 0) || !(eps < 1)) return luaL_argerror(L, 2, "eps must be in (0, 1)");
    imp_jacobian_report r;
    if (imp_world_jacobian_check(lw->w, eps, &r) != IMP_OK) return luaL_error(L, "world:%s", imp_world_error(lw->w));
    lua_createtable(L, 0, 4);
    lua_pushnumber(L, r.dfdx_error), lua_setfield(L, -2, "dfdx");
    lua_pushnumber(L, r.dfdv_error), lua_setfield(L, -2, "dfdv");
    lua_pushnumber(L, r.dfdx_max), lua_setfield(L, -2, "dfdx_max");
    lua_pushnumber(L, r.dfdv_max), lua_setfield(L, -2, "dfdv_max");
    lua_pushnumber(L, r.matrix_error), lua_setfield(L, -2, "matrix");
    return 1;
}

/* cloth handles keep {rows, cols} in their second user value (0, 0 for a mesh) */
static void remember_grid(lua_State *L, imp_world *w, imp_id id, int rows, int cols)
{
    (void)w, (void)id;
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, rows), lua_rawseti(L, -2, 1);
    lua_pushinteger(L, cols), lua_rawseti(L, -2, 2);
    lua_setiuservalue(L, -2, 2);
}

static int world_cloth_entry(lua_State *L)
{
    world_cloth(L);
    lua_getfield(L, 2, "vertices");
    bool mesh = !lua_isnil(L, -1);
    lua_pop(L, 1);
    int rows = 0, cols = 0;
    if (!mesh) {
        rows = (int)impl_field_number(L, 2, "world:cloth", "rows", 16);
        cols = (int)impl_field_number(L, 2, "world:cloth", "cols", 16);
    }
    lhandle *h = lua_touserdata(L, -1);
    remember_grid(L, h->lw->w, h->id, rows, cols);
    return 1;
}

static int world_hair_entry(lua_State *L)
{
    world_hair(L);
    lhandle *h = lua_touserdata(L, -1);
    remember_grid(L, h->lw->w, h->id, 0, 0);
    return 1;
}

void impl_open_cloth(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", o_tostring}, {NULL, NULL}};
    static const luaL_Reg cloth_methods[] = {{"particle", o_particle}, {"particles", o_particles}, {"destroy", o_destroy},
                                             {"valid", o_valid},       {"energy", o_energy},       {NULL, NULL}};
    static const luaL_Reg cloth_get[] = {{"stretch", g_stretch}, {"shear", g_shear}, {"bend", g_bend},
                                         {"damping", g_damping}, {"vertex_count", g_vertex_count},
                                         {"rows", g_rows},       {"cols", g_cols},   {NULL, NULL}};
    static const luaL_Reg cloth_set[] = {{"stretch", s_stretch}, {"shear", s_shear},           {"bend", s_bend},
                                         {"damping", s_damping}, {"color", s_color}, {"back_color", s_back_color},
                                         {NULL, NULL}};
    impl_register_type(L, IMPL_CLOTH, meta, cloth_methods);
    impl_set_accessors(L, IMPL_CLOTH, cloth_get, cloth_set);
    static const luaL_Reg hair_methods[] = {{"particle", o_particle}, {"particles", o_particles}, {"destroy", o_destroy},
                                            {"valid", o_valid},       {"energy", o_energy},       {"move_root", hair_move_root},
                                            {NULL, NULL}};
    static const luaL_Reg hair_get[] = {{"stretch", g_stretch},          {"bend", g_bend},     {"damping", g_damping},
                                        {"vertex_count", g_vertex_count}, {"anchor", g_anchor}, {NULL, NULL}};
    static const luaL_Reg hair_set[] = {{"stretch", s_stretch}, {"bend", s_bend}, {"damping", s_damping},
                                        {"color", s_color},     {NULL, NULL}};
    impl_register_type(L, IMPL_HAIR, meta, hair_methods);
    impl_set_accessors(L, IMPL_HAIR, hair_get, hair_set);

    static const luaL_Reg world_fns[] = {{"cloth", world_cloth_entry}, {"hair", world_hair_entry},
                                         {"jacobian_check", world_jacobian_check}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
    /* the implicit integrator's settings join the World's properties */
    static const luaL_Reg wget[] = {{"cg_tolerance", wg_cg_tolerance}, {"cg_max_iterations", wg_cg_max},
                                    {"jacobian", wg_jacobian}, {NULL, NULL}};
    static const luaL_Reg wset[] = {{"cg_tolerance", ws_cg_tolerance}, {"cg_max_iterations", ws_cg_max},
                                    {"jacobian", ws_jacobian}, {NULL, NULL}};
    luaL_getmetatable(L, IMPL_WORLD);
    lua_getfield(L, -1, "getters");
    luaL_setfuncs(L, wget, 0);
    lua_pop(L, 1);
    lua_getfield(L, -1, "setters");
    luaL_setfuncs(L, wset, 0);
    lua_pop(L, 2);
}

/* wrap_cloth.c: the Cloth type: a triangle mesh of particles with Baraff and Witkin's stretch, shear
 * and bend conditions (engine/cloth.c, S6), stepped by the implicit integrator. world:cloth{...}
 * builds a grid (vertices, (u, v) along the grid, alternating diagonals) or takes a mesh, and hands it
 * to imp_cloth_create. Temporary arrays are userdata, so an error midway leaks nothing.
 *
 *   world:cloth{rows, cols, size | width, height, position, normal | axes, pin, ...}  a grid
 *   world:cloth{vertices, triangles, uv, pin, ...}                                      a mesh
 *   cloth:particle(row, col) (grid) or cloth:particle(k) (mesh), cloth:particles(), cloth:energy(),
 *   cloth:destroy(), cloth:valid()
 *   cloth.stretch, shear, bend, damping, self_collision (settable), color, back_color (set only),
 *   vertex_count, rows, cols
 * (the implicit integrator's settings are the World's cg_tolerance, cg_max_iterations, jacobian) */
#include <string.h>

#include "imp_lua.h"

enum { PIN_TOP, PIN_TOP_CORNERS, PIN_CORNERS, PIN_LEFT, PIN_NONE };
static const char *const PIN_NAMES[] = {"top", "top_corners", "corners", "left", "none", NULL}; /* the order above */

static handle_userdata *check_cloth(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_CLOTH, imp_cloth_valid); }

/* ---- world:cloth{...} ----------------------------------------------------------------------------------- */

/* the def fields shared by grids and meshes */
static void cloth_common(lua_State *L, const char *fn, imp_cloth_def *def)
{
    def->mass = impl_field_positive(L, 2, fn, "mass", def->mass, false);
    def->stretch = impl_field_positive(L, 2, fn, "stretch", def->stretch, true);
    def->shear = impl_field_positive(L, 2, fn, "shear", def->shear, true);
    def->bend = impl_field_positive(L, 2, fn, "bend", def->bend, true);
    def->damping = impl_field_positive(L, 2, fn, "damping", def->damping, true);
    def->radius = impl_field_positive(L, 2, fn, "radius", def->radius, true);
    def->restitution = impl_field_number(L, 2, fn, "restitution", def->restitution);
    def->friction = impl_field_number(L, 2, fn, "friction", def->friction);
    if (!(def->restitution >= 0 && def->restitution <= 1)) luaL_error(L, "%s: field 'restitution' must be in [0, 1] (got %f)", fn, def->restitution);
    if (!(def->friction >= 0 && def->friction <= 1e6)) luaL_error(L, "%s: field 'friction' must be a number in 0 .. 1000000 (got %f)", fn, def->friction);
    def->self_collision = impl_field_bool(L, 2, fn, "self_collision", def->self_collision);
    impl_field_size(L, 2, fn, "radius", def->radius, true);
    impl_field_color(L, 2, fn, "color", def->color);
    memcpy(def->back_color, def->color, sizeof def->back_color);
    for (int k = 0; k < 3; k++) def->back_color[k] = 0.55f + 0.35f * def->color[k]; /* a paler lining */
    impl_field_color(L, 2, fn, "back_color", def->back_color);
}

/* world:cloth{rows, cols, size | width, height, position, normal | axes, pin, ...} */
static void cloth_grid(lua_State *L, const char *fn, imp_cloth_def *def)
{
    int rows = impl_field_integer(L, 2, fn, "rows", 16, 2, 512), cols = impl_field_integer(L, 2, fn, "cols", 16, 2, 512);
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
    if (!(width > 0)) luaL_error(L, "%s: field 'width' must be > 0 (got %f)", fn, width);
    if (!(height > 0)) luaL_error(L, "%s: field 'height' must be > 0 (got %f)", fn, height);
    const bool named = impl_has_field(L, 2, "width") || impl_has_field(L, 2, "height");
    impl_limit_size(L, width, named ? "world:cloth: field 'width'" : "world:cloth: field 'size'", false);
    impl_limit_size(L, height, named ? "world:cloth: field 'height'" : "world:cloth: field 'size'", false);
    imp_vec3 centre = impl_field_position(L, 2, fn, "position", v3(0, 2, 0));
    imp_vec3 u = v3(1, 0, 0), v = v3(0, 0, -1);
    lua_getfield(L, 2, "axes");
    bool has_axes = !lua_isnil(L, -1);
    if (has_axes) {
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 2) luaL_error(L, "%s: field 'axes' must be {u, v}: two vectors", fn);
        impl_check_list(L, -1, "world:cloth: field 'axes'", 2);
        lua_rawgeti(L, -1, 1);
        u = impl_unit_vector(L, impl_tovec3(L, -1, "world:cloth: axes[1]"), fn, "axes[1]");
        lua_rawgeti(L, -2, 2);
        v = impl_tovec3(L, -1, "world:cloth: axes[2]");
        lua_pop(L, 2);
        v = v3_mad(v, u, -v3_dot(u, v)); /* made perpendicular to u */
        v = impl_unit_vector(L, v, fn, "axes[2] (parallel to axes[1])");
    }
    lua_pop(L, 1);
    if (!has_axes) {
        imp_vec3 n = impl_unit_vector(L, impl_field_vec3(L, 2, fn, "normal", v3(0, 1, 0)), fn, "normal");
        u = v3_mad(v3(1, 0, 0), n, -n.x);
        if (v3_len(u) < 1e-6) u = v3_mad(v3(0, 0, 1), n, -n.z);
        u = v3_normalize(u);
        v = v3_cross(n, u);
    }
    const int nv = rows * cols, nt = 2 * (rows - 1) * (cols - 1);
    imp_vec3 *pos = impl_scratch(L, sizeof(imp_vec3) * (size_t)nv);
    double *uv = impl_scratch(L, 2 * sizeof(double) * (size_t)nv);
    int *tris = impl_scratch(L, 3 * sizeof(int) * (size_t)nt);
    bool *pinned = impl_scratch(L, sizeof(bool) * (size_t)nv);
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
        switch (impl_check_option(L, -1, "world:cloth: field 'pin'", PIN_NAMES)) {
        case PIN_TOP:
            for (int j = 0; j < cols; j++) pinned[j] = true;
            break;
        case PIN_TOP_CORNERS: pinned[0] = pinned[cols - 1] = true; break;
        case PIN_CORNERS: pinned[0] = pinned[cols - 1] = pinned[nv - cols] = pinned[nv - 1] = true; break;
        case PIN_LEFT:
            for (int i = 0; i < rows; i++) pinned[i * cols] = true;
            break;
        default: break; /* PIN_NONE */
        }
    } else if (lua_istable(L, -1)) {
        int n = (int)lua_rawlen(L, -1);
        impl_check_list(L, -1, "world:cloth: field 'pin'", n);
        for (int k = 1; k <= n; k++) {
            lua_rawgeti(L, -1, k);
            int ok = lua_istable(L, -1);
            lua_Integer i = 0, j = 0;
            if (ok) {
                char what[64];
                snprintf(what, sizeof what, "%s: pin[%d]", fn, k);
                impl_check_list(L, -1, what, 2);
                lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
                i = lua_tointegerx(L, -2, &ok);
                int ok2;
                j = lua_tointegerx(L, -1, &ok2);
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
    impl_check_list(L, -1, "world:cloth: field 'vertices'", nv);
    imp_vec3 *pos = impl_scratch(L, sizeof(imp_vec3) * (size_t)nv);
    for (int k = 0; k < nv; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s: vertices[%d]", fn, k + 1);
        lua_rawgeti(L, -2, k + 1);
        pos[k] = impl_topoint(L, -1, what);
        lua_pop(L, 1);
    }
    lua_getfield(L, 2, "triangles");
    if (!lua_istable(L, -1)) luaL_error(L, "%s: field 'triangles' must be a list of {i, j, k} vertex numbers", fn);
    int nt = (int)lua_rawlen(L, -1);
    if (nt < 1) luaL_error(L, "%s: field 'triangles' is empty", fn);
    impl_check_list(L, -1, "world:cloth: field 'triangles'", nt);
    int *tris = impl_scratch(L, 3 * sizeof(int) * (size_t)nt);
    for (int t = 0; t < nt; t++) {
        lua_rawgeti(L, -2, t + 1);
        if (!lua_istable(L, -1) || lua_rawlen(L, -1) != 3) luaL_error(L, "%s: triangles[%d] must be {i, j, k}", fn, t + 1);
        char what[64];
        snprintf(what, sizeof what, "%s: triangles[%d]", fn, t + 1);
        impl_check_list(L, -1, what, 3);
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
        impl_check_list(L, -1, "world:cloth: field 'uv'", nv);
        uv = impl_scratch(L, 2 * sizeof(double) * (size_t)nv);
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
    bool *pinned = impl_scratch(L, sizeof(bool) * (size_t)nv);
    memset(pinned, 0, sizeof(bool) * (size_t)nv);
    if (lua_getfield(L, 2, "pin") != LUA_TNIL) {
        if (!lua_istable(L, -1)) luaL_error(L, "%s: field 'pin' of a mesh must be a list of vertex numbers", fn);
        int n = (int)lua_rawlen(L, -1);
        impl_check_list(L, -1, "world:cloth: field 'pin'", n);
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

int impl_world_cloth(lua_State *L)
{
    impl_check_arg_count(L, "world:cloth(def)");
    const char *fn = "world:cloth";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"rows", "cols", "size", "width", "height", "position", "axes", "normal",
                                       "vertices", "triangles", "uv", "mass", "stretch", "shear", "bend", "damping",
                                       "pin", "color", "back_color", "radius", "restitution", "friction", "self_collision", NULL};
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
        static const char *const mesh_only[] = {"triangles", "uv", NULL};
        for (const char *const *k = mesh_only; *k; k++)
            if (impl_has_field(L, 2, *k)) luaL_error(L, "%s: field '%s' needs 'vertices' (a mesh cloth)", fn, *k);
        cloth_grid(L, fn, &def);
    }
    imp_id id = imp_cloth_create(world->w, &def);
    if (imp_id_is_null(id))
        return luaL_error(L, "%s: a triangle has no area (or its (u, v) map is degenerate)", fn);
    lua_settop(L, top);
    impl_push_handle(L, 1, IMPL_CLOTH, id);
    /* the handle keeps {rows, cols} in its second user value (0, 0 for a mesh): cloth:particle(row, col) */
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, def.rows), lua_rawseti(L, -2, 1);
    lua_pushinteger(L, def.cols), lua_rawseti(L, -2, 2);
    lua_setiuservalue(L, -2, 2);
    return 1;
}


/* ---- methods ---------------------------------------------------------------------------------------------- */

/* the Particle of vertex k of the cloth or hair at handle_idx, or false once it was destroyed */
void impl_push_cloth_particle(lua_State *L, int handle_idx, imp_id cloth, int k)
{
    handle_userdata *h = lua_touserdata(L, handle_idx);
    imp_id p = imp_cloth_particle(h->world->w, cloth, k);
    if (imp_id_is_null(p)) lua_pushboolean(L, 0);
    else impl_push_sibling(L, handle_idx, IMPL_PARTICLE, p);
}

/* cloth:particle(row, col) on a grid, cloth:particle(k) on a mesh: the Particle, or nil once it was destroyed */
static int cloth_particle(lua_State *L)
{
    impl_check_arg_count(L, "cloth:particle(row [, col])");
    handle_userdata *h = check_cloth(L, 1);
    imp_world *w = h->world->w;
    int n = imp_cloth_vertex_count(w, h->id), k;
    if (!lua_isnoneornil(L, 3)) {
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
    if (imp_id_is_null(imp_cloth_particle(w, h->id, k))) lua_pushnil(L);
    else impl_push_cloth_particle(L, 1, h->id, k);
    return 1;
}

/* the particles in vertex order (grid: row by row); a destroyed one is false */
static int cloth_particles(lua_State *L)
{
    impl_check_arg_count(L, "cloth:particles()");
    handle_userdata *h = check_cloth(L, 1);
    int n = imp_cloth_vertex_count(h->world->w, h->id);
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        impl_push_cloth_particle(L, 1, h->id, k);
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

static int cloth_destroy(lua_State *L)
{
    impl_check_arg_count(L, "cloth:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CLOTH);
    if (impl_handle_valid(h, imp_cloth_valid)) imp_cloth_destroy(impl_handle_unlocked(L, h, "destroy")->w, h->id);
    return 0;
}

static int cloth_valid(lua_State *L)
{
    impl_check_arg_count(L, "cloth:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CLOTH);
    lua_pushboolean(L, impl_handle_valid(h, imp_cloth_valid));
    return 1;
}

static int cloth_energy(lua_State *L)
{
    impl_check_arg_count(L, "cloth:energy()");
    handle_userdata *h = check_cloth(L, 1);
    lua_pushnumber(L, imp_cloth_energy(h->world->w, h->id));
    return 1;
}

static int cloth_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CLOTH);
    if (!impl_handle_valid(h, imp_cloth_valid)) lua_pushliteral(L, "Cloth (destroyed)");
    else lua_pushfstring(L, "Cloth #%d (%d particles)", (int)h->id.index, imp_cloth_vertex_count(h->world->w, h->id));
    return 1;
}

/* ---- properties --------------------------------------------------------------------------------------------- */

/* the stiffness parameters of a cloth or hair: 0 stretch, 1 shear, 2 bend, 3 damping */
int impl_cloth_get_parameter(lua_State *L, handle_userdata *h, int which)
{
    double p[4] = {0, 0, 0, 0};
    imp_cloth_params(h->world->w, h->id, &p[0], &p[1], &p[2], &p[3]);
    lua_pushnumber(L, p[which]);
    return 1;
}

/* sets one of them to the number >= 0 at index 2; kind names the type in the error ("cloth", "hair") */
int impl_cloth_set_parameter(lua_State *L, handle_userdata *h, int which, const char *kind, const char *name)
{
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "%s.%s must be a number >= 0 (got %f)", kind, name, v);
    double p[4] = {-1, -1, -1, -1};
    p[which] = v;
    imp_cloth_set_params(impl_handle_unlocked(L, h, name)->w, h->id, p[0], p[1], p[2], p[3]);
    return 0;
}

static int cloth_get_stretch(lua_State *L) { return impl_cloth_get_parameter(L, check_cloth(L, 1), 0); }
static int cloth_get_shear(lua_State *L) { return impl_cloth_get_parameter(L, check_cloth(L, 1), 1); }
static int cloth_get_bend(lua_State *L) { return impl_cloth_get_parameter(L, check_cloth(L, 1), 2); }
static int cloth_get_damping(lua_State *L) { return impl_cloth_get_parameter(L, check_cloth(L, 1), 3); }
static int cloth_set_stretch(lua_State *L) { return impl_cloth_set_parameter(L, check_cloth(L, 1), 0, "cloth", "stretch"); }
static int cloth_set_shear(lua_State *L) { return impl_cloth_set_parameter(L, check_cloth(L, 1), 1, "cloth", "shear"); }
static int cloth_set_bend(lua_State *L) { return impl_cloth_set_parameter(L, check_cloth(L, 1), 2, "cloth", "bend"); }
static int cloth_set_damping(lua_State *L) { return impl_cloth_set_parameter(L, check_cloth(L, 1), 3, "cloth", "damping"); }
static int cloth_get_self_collision(lua_State *L)
{
    handle_userdata *h = check_cloth(L, 1);
    lua_pushboolean(L, imp_cloth_self_collision(h->world->w, h->id));
    return 1;
}
static int cloth_set_self_collision(lua_State *L)
{
    handle_userdata *h = check_cloth(L, 1);
    if (!lua_isboolean(L, 2)) return luaL_error(L, "cloth.self_collision must be true or false (got %s)", luaL_typename(L, 2));
    imp_cloth_set_self_collision(impl_handle_unlocked(L, h, "cloth.self_collision")->w, h->id, lua_toboolean(L, 2));
    return 0;
}
static int cloth_get_vertex_count(lua_State *L)
{
    handle_userdata *h = check_cloth(L, 1);
    lua_pushinteger(L, imp_cloth_vertex_count(h->world->w, h->id));
    return 1;
}
static int grid_size(lua_State *L, int which)
{
    check_cloth(L, 1);
    lua_getiuservalue(L, 1, 2);
    lua_rawgeti(L, -1, which);
    return 1;
}
static int cloth_get_rows(lua_State *L) { return grid_size(L, 1); }
static int cloth_get_cols(lua_State *L) { return grid_size(L, 2); }
static int cloth_set_color(lua_State *L)
{
    handle_userdata *h = check_cloth(L, 1);
    float c[4];
    impl_tocolor(L, 2, "cloth.color", c);
    imp_cloth_set_color(h->world->w, h->id, c, NULL);
    return 0;
}
static int cloth_set_back_color(lua_State *L)
{
    handle_userdata *h = check_cloth(L, 1);
    float c[4];
    impl_tocolor(L, 2, "cloth.back_color", c);
    imp_cloth_set_color(h->world->w, h->id, NULL, c);
    return 0;
}

void impl_open_cloth(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", cloth_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"particle", cloth_particle}, {"particles", cloth_particles}, {"destroy", cloth_destroy},
                                       {"valid", cloth_valid},       {"energy", cloth_energy},       {NULL, NULL}};
    static const luaL_Reg getters[] = {{"stretch", cloth_get_stretch}, {"shear", cloth_get_shear}, {"bend", cloth_get_bend},
                                       {"damping", cloth_get_damping}, {"vertex_count", cloth_get_vertex_count},
                                       {"rows", cloth_get_rows},       {"cols", cloth_get_cols},
                                       {"self_collision", cloth_get_self_collision}, {NULL, NULL}};
    static const luaL_Reg setters[] = {{"stretch", cloth_set_stretch}, {"shear", cloth_set_shear}, {"bend", cloth_set_bend},
                                       {"damping", cloth_set_damping}, {"color", cloth_set_color}, {"back_color", cloth_set_back_color},
                                       {"self_collision", cloth_set_self_collision}, {NULL, NULL}};
    static const impl_type type = {IMPL_CLOTH, "cloth", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

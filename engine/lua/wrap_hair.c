/* wrap_hair.c: the Hair type: a strand of particles with stretch and bend springs (a discrete elastic
 * rod without twist, engine/cloth.c), stepped by the implicit integrator like cloth.
 *
 *   world:hair{root, direction, length, segments | points, mass, stretch, bend, damping, radius,
 *              root_motion = "fixed" | "kinematic" | "free", clamped, body, restitution, friction, color}
 *   (body: a Body that holds the root and the anchor, engine/particle_attach.c)
 *   hair:particle(k) (1 = the root), hair:particles(), hair:energy(), hair:move_root(position
 *   [, direction], dt), hair:destroy(), hair:valid()
 *   hair.stretch, bend, damping (settable), color (set only), vertex_count, anchor (the particle that
 *   clamps the root's direction, or nil) */
#include <stdio.h>

#include "imp_lua.h"

static const char *const ROOT_MOTION_NAMES[] = {"fixed", "kinematic", "free", NULL};
static const imp_motion ROOT_MOTIONS[] = {IMP_FIXED, IMP_KINEMATIC, IMP_DYNAMIC}; /* of ROOT_MOTION_NAMES */

static handle_userdata *check_hair(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_HAIR, imp_cloth_valid); }

/* ---- world:hair{...} ---------------------------------------------------------------------------------- */

/* world:hair{root, direction, length, segments | points, mass, stretch, bend, damping, radius,
 *            root_motion = "fixed" | "kinematic" | "free", clamped, body, restitution, friction, color} */
int impl_world_hair(lua_State *L)
{
    impl_check_arg_count(L, "world:hair(def)");
    const char *fn = "world:hair";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"root", "direction", "length", "segments", "points", "mass", "stretch", "bend",
                                       "damping", "radius", "root_motion", "clamped", "color", "body", "restitution",
                                       "friction", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_hair_def def = imp_hair_def_default();
    def.mass = impl_field_positive(L, 2, fn, "mass", def.mass, false);
    def.stretch = impl_field_positive(L, 2, fn, "stretch", def.stretch, true);
    def.bend = impl_field_positive(L, 2, fn, "bend", def.bend, true);
    def.damping = impl_field_positive(L, 2, fn, "damping", def.damping, true);
    def.radius = impl_field_positive(L, 2, fn, "radius", def.radius, true);
    impl_field_size(L, 2, fn, "radius", def.radius, true);
    def.clamped = impl_field_bool(L, 2, fn, "clamped", def.clamped);
    impl_field_color(L, 2, fn, "color", def.color);
    def.restitution = impl_field_number(L, 2, fn, "restitution", def.restitution);
    def.friction = impl_field_number(L, 2, fn, "friction", def.friction);
    if (!(def.restitution >= 0 && def.restitution <= 1)) return luaL_error(L, "%s: field 'restitution' must be in [0, 1] (got %f)", fn, def.restitution);
    if (!(def.friction >= 0 && def.friction <= 1e6)) return luaL_error(L, "%s: field 'friction' must be a number in 0 .. 1000000 (got %f)", fn, def.friction);
    if (lua_getfield(L, 2, "root_motion") != LUA_TNIL) def.root = ROOT_MOTIONS[impl_check_option(L, -1, "world:hair: field 'root_motion'", ROOT_MOTION_NAMES)];
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "body") != LUA_TNIL) {
        if (impl_has_field(L, 2, "root_motion")) return luaL_error(L, "%s: give either 'body' (the body holds the root) or 'root_motion', not both", fn);
        if (!lua_isuserdata(L, -1)) return luaL_error(L, "%s: field 'body' must be a Body (got %s)", fn, luaL_typename(L, -1));
        handle_userdata *b = impl_check_body(L, lua_gettop(L));
        if (b->world != world) return luaL_error(L, "%s: field 'body' belongs to another world", fn);
        def.body = b->id;
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
        impl_check_list(L, -1, "world:hair: field 'points'", np);
        pts = impl_scratch(L, sizeof(imp_vec3) * (size_t)np);
        for (int k = 0; k < np; k++) {
            char what[64];
            snprintf(what, sizeof what, "%s: points[%d]", fn, k + 1);
            lua_rawgeti(L, -2, k + 1);
            pts[k] = impl_topoint(L, -1, what);
            lua_pop(L, 1);
            if (k > 0 && !(v3_len(v3_sub(pts[k], pts[k - 1])) > 1e-9))
                return luaL_error(L, "%s: points[%d] coincides with points[%d]", fn, k + 1, k);
        }
    } else {
        imp_vec3 root = impl_field_position(L, 2, fn, "root", v3(0, 2, 0));
        imp_vec3 dir = impl_unit_vector(L, impl_field_vec3(L, 2, fn, "direction", v3(0, -1, 0)), fn, "direction");
        double len = impl_field_positive(L, 2, fn, "length", 0.3, false);
        impl_field_size(L, 2, fn, "length", len, false);
        int seg = impl_field_integer(L, 2, fn, "segments", 10, 1, 10000);
        np = seg + 1;
        pts = impl_scratch(L, sizeof(imp_vec3) * (size_t)np);
        for (int k = 0; k < np; k++) pts[k] = v3_mad(root, dir, len * k / seg);
    }
    def.point_count = np;
    def.points = pts;
    imp_id id = imp_hair_create(world->w, &def);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: could not build the strand", fn);
    impl_push_handle(L, 1, IMPL_HAIR, id);
    return 1;
}

/* ---- methods ---------------------------------------------------------------------------------------------- */

/* hair:move_root(position [, direction], dt): a kinematic root (and its anchor) reach the pose at
 * the end of the next step of length dt */
static int hair_move_root(lua_State *L)
{
    impl_check_arg_count(L, "hair:move_root(position [, direction], dt)");
    handle_userdata *h = check_hair(L, 1);
    imp_world *w = impl_handle_unlocked(L, h, "hair:move_root")->w;
    imp_vec3 target = impl_topoint(L, 2, "hair:move_root: argument 'position'");
    int dt_idx = lua_gettop(L) >= 4 ? 4 : 3;
    double dt = luaL_checknumber(L, dt_idx);
    if (!(dt > 0)) return luaL_argerror(L, dt_idx, "dt must be > 0");
    imp_id root = imp_cloth_particle(w, h->id, 0), anchor = imp_hair_anchor(w, h->id);
    if (imp_id_is_null(root) || imp_particle_motion(w, root) != IMP_KINEMATIC)
        return luaL_error(L, "hair:move_root: the root must be kinematic (world:hair{root_motion = \"kinematic\"})");
    imp_vec3 nd = v3(0, 0, 0);
    if (dt_idx == 4) { /* read (and refuse) every argument before anything moves */
        nd = impl_tovec3(L, 3, "hair:move_root: argument 'direction'");
        if (!(v3_len(nd) > 1e-12)) return luaL_argerror(L, 3, "direction must not be zero");
    }
    impl_limit_speed(L, v3_scale(v3_sub(target, imp_particle_position(w, root)), 1.0 / dt),
                     "hair:move_root: the velocity (position - root) / dt");
    imp_particle_move_to(w, root, target, dt);
    if (!imp_id_is_null(anchor)) {
        imp_vec3 xr = imp_particle_position(w, root), xa = imp_particle_position(w, anchor);
        imp_vec3 d = v3_sub(xr, xa);
        double l = v3_len(d);
        d = dt_idx == 4 ? v3_normalize(nd) : v3_scale(d, 1 / l);
        imp_particle_move_to(w, anchor, v3_mad(target, d, -l), dt);
    }
    return 0;
}


/* hair:particle(k) (1 = root): the Particle, or nil once it was destroyed */
static int hair_particle(lua_State *L)
{
    impl_check_arg_count(L, "hair:particle(k)");
    handle_userdata *h = check_hair(L, 1);
    int n = imp_cloth_vertex_count(h->world->w, h->id);
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 1 || i > n) return luaL_argerror(L, 2, lua_pushfstring(L, "vertex must be in 1..%d", n));
    if (imp_id_is_null(imp_cloth_particle(h->world->w, h->id, (int)i - 1))) lua_pushnil(L);
    else impl_push_cloth_particle(L, 1, h->id, (int)i - 1);
    return 1;
}

/* the particles from the root; a destroyed one is false */
static int hair_particles(lua_State *L)
{
    impl_check_arg_count(L, "hair:particles()");
    handle_userdata *h = check_hair(L, 1);
    int n = imp_cloth_vertex_count(h->world->w, h->id);
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        impl_push_cloth_particle(L, 1, h->id, k);
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

static int hair_destroy(lua_State *L)
{
    impl_check_arg_count(L, "hair:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_HAIR);
    if (impl_handle_valid(h, imp_cloth_valid)) imp_cloth_destroy(impl_handle_unlocked(L, h, "destroy")->w, h->id);
    return 0;
}

static int hair_valid(lua_State *L)
{
    impl_check_arg_count(L, "hair:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_HAIR);
    lua_pushboolean(L, impl_handle_valid(h, imp_cloth_valid));
    return 1;
}

static int hair_energy(lua_State *L)
{
    impl_check_arg_count(L, "hair:energy()");
    handle_userdata *h = check_hair(L, 1);
    lua_pushnumber(L, imp_cloth_energy(h->world->w, h->id));
    return 1;
}

static int hair_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_HAIR);
    if (!impl_handle_valid(h, imp_cloth_valid)) lua_pushliteral(L, "Hair (destroyed)");
    else lua_pushfstring(L, "Hair #%d (%d particles)", (int)h->id.index, imp_cloth_vertex_count(h->world->w, h->id));
    return 1;
}

static int hair_get_stretch(lua_State *L) { return impl_cloth_get_parameter(L, check_hair(L, 1), 0); }
static int hair_get_bend(lua_State *L) { return impl_cloth_get_parameter(L, check_hair(L, 1), 2); }
static int hair_get_damping(lua_State *L) { return impl_cloth_get_parameter(L, check_hair(L, 1), 3); }
static int hair_set_stretch(lua_State *L) { return impl_cloth_set_parameter(L, check_hair(L, 1), 0, "hair", "stretch"); }
static int hair_set_bend(lua_State *L) { return impl_cloth_set_parameter(L, check_hair(L, 1), 2, "hair", "bend"); }
static int hair_set_damping(lua_State *L) { return impl_cloth_set_parameter(L, check_hair(L, 1), 3, "hair", "damping"); }
static int hair_get_vertex_count(lua_State *L)
{
    handle_userdata *h = check_hair(L, 1);
    lua_pushinteger(L, imp_cloth_vertex_count(h->world->w, h->id));
    return 1;
}
static int hair_get_anchor(lua_State *L)
{
    handle_userdata *h = check_hair(L, 1);
    imp_id a = imp_hair_anchor(h->world->w, h->id);
    if (imp_id_is_null(a)) lua_pushnil(L);
    else impl_push_sibling(L, 1, IMPL_PARTICLE, a);
    return 1;
}
static int hair_set_color(lua_State *L)
{
    handle_userdata *h = check_hair(L, 1);
    float c[4];
    impl_tocolor(L, 2, "hair.color", c);
    imp_cloth_set_color(h->world->w, h->id, c, c);
    return 0;
}

void impl_open_hair(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", hair_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"particle", hair_particle}, {"particles", hair_particles}, {"destroy", hair_destroy},
                                       {"valid", hair_valid},       {"energy", hair_energy},       {"move_root", hair_move_root},
                                       {NULL, NULL}};
    static const luaL_Reg getters[] = {{"stretch", hair_get_stretch},          {"bend", hair_get_bend},     {"damping", hair_get_damping},
                                       {"vertex_count", hair_get_vertex_count}, {"anchor", hair_get_anchor}, {NULL, NULL}};
    static const luaL_Reg setters[] = {{"stretch", hair_set_stretch}, {"bend", hair_set_bend}, {"damping", hair_set_damping},
                                       {"color", hair_set_color},     {NULL, NULL}};
    static const impl_type type = {IMPL_HAIR, "hair", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

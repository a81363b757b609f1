/* wrap_particle.c: the Particle type; world:particle{...}, world:curve_particle{...} (a particle
 * held on a curve x(u) by a script's function, engine/tinkertoy.c) and world:particles().
 *
 *   particle.position, velocity, mass, radius, fixed, kinematic, color, restitution, friction (settable),
 *   id, data, attached (the Body it is pinned to, or nil)
 *   particle.u, udot (curve particles: settable; nil otherwise), on_curve
 *   particle:destroy(), particle:valid(), particle:move_to(target, dt) (kinematic particles)
 *   particle:attach(body [, point]), particle:detach(), particle:attachment() -> {body, point, impulse} | nil
 *   (engine/particle_attach.c) */
#include "imp_lua.h"

handle_userdata *impl_check_particle(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_PARTICLE, imp_particle_valid); }

/* ---- constructors --------------------------------------------------------------------------------------- */

static imp_motion motion_from_def(lua_State *L, int idx, const char *fn)
{
    int fixed = impl_field_bool(L, idx, fn, "fixed", 0), kin = impl_field_bool(L, idx, fn, "kinematic", 0);
    if (fixed && kin) luaL_error(L, "%s: a particle cannot be both fixed and kinematic", fn);
    return fixed ? IMP_FIXED : kin ? IMP_KINEMATIC : IMP_DYNAMIC;
}

/* the material fields of a def table at idx: restitution in [0, 1], friction in 0 .. 1e6 (a body's range) */
static void material_from_def(lua_State *L, int idx, const char *fn, double *restitution, double *friction)
{
    *restitution = impl_field_number(L, idx, fn, "restitution", *restitution);
    *friction = impl_field_number(L, idx, fn, "friction", *friction);
    if (!(*restitution >= 0 && *restitution <= 1)) luaL_error(L, "%s: field 'restitution' must be in [0, 1] (got %f)", fn, *restitution);
    if (!(*friction >= 0 && *friction <= 1e6)) luaL_error(L, "%s: field 'friction' must be a number in 0 .. 1000000 (got %f)", fn, *friction);
}

/* world:particle{position, velocity, mass, radius, fixed, kinematic, color, restitution, friction} */
int impl_world_particle(lua_State *L)
{
    impl_check_arg_count(L, "world:particle([def])");
    const char *fn = "world:particle";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_particle_def def = imp_particle_def_default();
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const keys[] = {"position", "velocity", "mass", "radius", "fixed", "kinematic", "color",
                                           "restitution", "friction", NULL};
        impl_check_keys(L, 2, fn, keys);
        material_from_def(L, 2, fn, &def.restitution, &def.friction);
        def.position = impl_field_position(L, 2, fn, "position", def.position);
        def.velocity = impl_field_velocity(L, 2, fn, "velocity", def.velocity);
        def.mass = impl_field_number(L, 2, fn, "mass", def.mass);
        def.radius = impl_field_number(L, 2, fn, "radius", def.radius);
        def.motion = motion_from_def(L, 2, fn);
        impl_field_color(L, 2, fn, "color", def.color);
        if (!(def.mass > 0)) return luaL_error(L, "%s: field 'mass' must be > 0 (got %f)", fn, def.mass);
        if (!(def.radius >= 0)) return luaL_error(L, "%s: field 'radius' must be >= 0 (got %f)", fn, def.radius);
        impl_field_size(L, 2, fn, "radius", def.radius, true);
    }
    impl_push_handle(L, 1, IMPL_PARTICLE, imp_particle_create(world->w, &def));
    return 1;
}

/* curve(u) returns x [, x_u [, x_uu]] */
static int curve_call(void *user, double u, double x[3], double xu[3], double xuu[3], int *have)
{
    script_callback *cb = user;
    lua_State *L = cb->world->L;
    if (!lua_checkstack(L, 6)) return 1;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    lua_pushnumber(L, u);
    if (lua_pcall(L, 1, 3, base)) {
        impl_callback_failed(cb->world, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int ok = impl_result_vec3(L, base + 1, x);
    *have = 0;
    if (ok && !lua_isnil(L, base + 2)) ok = impl_result_vec3(L, base + 2, xu), *have |= 1;
    if (ok && !lua_isnil(L, base + 3)) ok = impl_result_vec3(L, base + 3, xuu), *have |= 2;
    if (!ok) {
        lua_pushfstring(L, "curve function must return a finite point {x, y, z} (and optionally x_u, x_uu) for u = %f", u);
        impl_callback_failed(cb->world, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* world:curve_particle{curve = function(u) return x [, x_u, x_uu] end, u, udot, range, mass, radius, color} */
int impl_world_curve_particle(lua_State *L)
{
    impl_check_arg_count(L, "world:curve_particle(def)");
    const char *fn = "world:curve_particle";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    static const char *const keys[] = {"curve", "u", "udot", "range", "mass", "radius", "color", NULL};
    impl_options(L, 2, fn, keys, true);
    imp_curve_def def = imp_curve_def_default();
    def.u = impl_field_number(L, 2, fn, "u", 0);
    def.udot = impl_field_number(L, 2, fn, "udot", 0);
    def.particle.mass = impl_field_number(L, 2, fn, "mass", def.particle.mass);
    def.particle.radius = impl_field_number(L, 2, fn, "radius", def.particle.radius);
    impl_field_color(L, 2, fn, "color", def.particle.color);
    if (!(def.particle.mass > 0)) return luaL_error(L, "%s: field 'mass' must be > 0 (got %f)", fn, def.particle.mass);
    if (!(def.particle.radius >= 0)) return luaL_error(L, "%s: field 'radius' must be >= 0 (got %f)", fn, def.particle.radius);
    impl_field_size(L, 2, fn, "radius", def.particle.radius, true);
    if (lua_getfield(L, 2, "range") != LUA_TNIL) {
        int ok1 = 0, ok2 = 0;
        if (lua_istable(L, -1)) {
            impl_check_list(L, -1, "world:curve_particle: field 'range'", 2);
            lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
            def.u_min = lua_tonumberx(L, -2, &ok1), def.u_max = lua_tonumberx(L, -1, &ok2);
            lua_pop(L, 2);
        }
        if (!ok1 || !ok2 || !isfinite(def.u_min) || !isfinite(def.u_max))
            return luaL_error(L, "%s: field 'range' must be {u_min, u_max}", fn);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "curve") != LUA_TFUNCTION) return luaL_error(L, "%s: field 'curve' must be a function curve(u) returning a point {x, y, z}", fn);
    script_callback *cb = impl_callback_new(L, world, -1);
    lua_pop(L, 1);
    def.fn = curve_call;
    def.user = cb;
    def.release = impl_callback_release;
    impl_call_state saved = impl_call_begin(world, L);
    imp_id id = imp_curve_particle_create(world->w, &def);
    if (imp_id_is_null(id)) impl_callback_release(cb);
    impl_call_end(world, L, saved, imp_id_is_null(id), fn, "the curve gave no finite point and tangent at u");
    impl_push_handle(L, 1, IMPL_PARTICLE, id);
    return 1;
}

/* world:particles() -> every particle, in the engine's order */
int impl_world_particles(lua_State *L)
{
    impl_check_arg_count(L, "world:particles()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    int n = imp_particle_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_push_handle(L, 1, IMPL_PARTICLE, imp_particle_id(world->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* ---- methods ------------------------------------------------------------------------------------------------ */

static int particle_destroy(lua_State *L)
{
    impl_check_arg_count(L, "particle:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    if (!impl_handle_valid(h, imp_particle_valid)) return 0; /* destroying twice is harmless */
    imp_particle_destroy(impl_handle_unlocked(L, h, "particle:destroy")->w, h->id);
    return 0;
}

static int particle_valid(lua_State *L)
{
    impl_check_arg_count(L, "particle:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    lua_pushboolean(L, impl_handle_valid(h, imp_particle_valid));
    return 1;
}

/* particle:move_to(target, dt): a kinematic particle will reach target at the end of the next step */
static int particle_move_to(lua_State *L)
{
    impl_check_arg_count(L, "particle:move_to(target, dt)");
    handle_userdata *h = impl_check_particle(L, 1);
    imp_vec3 target = impl_topoint(L, 2, "particle:move_to: argument 'target'");
    double dt = luaL_checknumber(L, 3);
    if (!(dt > 0)) return luaL_argerror(L, 3, "dt must be > 0");
    if (imp_particle_motion(h->world->w, h->id) != IMP_KINEMATIC)
        return luaL_error(L, "particle:move_to: the particle must be kinematic (set particle.kinematic = true)");
    impl_limit_speed(L, v3_scale(v3_sub(target, imp_particle_position(h->world->w, h->id)), 1.0 / dt),
                     "particle:move_to: the velocity (target - position) / dt");
    imp_particle_move_to(impl_handle_unlocked(L, h, "particle:move_to")->w, h->id, target, dt);
    return 0;
}

/* particle:attach(body [, point]): the particle is held at the point (world, now; default: where the
 * particle is) of the body and moves with it; the body carries it (particle_attach.c) */
static int particle_attach(lua_State *L)
{
    impl_check_arg_count(L, "particle:attach(body [, point])");
    handle_userdata *h = impl_check_particle(L, 1);
    handle_userdata *b = impl_check_body(L, 2);
    if (b->world != h->world) return luaL_argerror(L, 2, "the body belongs to another world");
    imp_world *w = impl_handle_unlocked(L, h, "particle:attach")->w;
    if (imp_particle_motion(w, h->id) == IMP_CURVE) return luaL_error(L, "particle:attach: a curve particle moves along its curve; it cannot be attached");
    imp_vec3 at = lua_isnoneornil(L, 3) ? imp_particle_position(w, h->id) : impl_topoint(L, 3, "particle:attach: argument 'point'");
    if (imp_particle_attach(w, h->id, b->id, at) != IMP_OK) return luaL_error(L, "particle:%s", imp_world_error(w));
    return 0;
}

static int particle_detach(lua_State *L)
{
    impl_check_arg_count(L, "particle:detach()");
    handle_userdata *h = impl_check_particle(L, 1);
    imp_particle_detach(impl_handle_unlocked(L, h, "particle:detach")->w, h->id);
    return 0;
}

/* particle:attachment() -> {body, point (world, now), impulse (on the body in the last step)} or nil */
static int particle_attachment(lua_State *L)
{
    impl_check_arg_count(L, "particle:attachment()");
    handle_userdata *h = impl_check_particle(L, 1);
    imp_id body;
    imp_vec3 at, impulse;
    if (!imp_particle_attachment(h->world->w, h->id, &body, &at, &impulse)) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 3);
    impl_push_sibling(L, 1, IMPL_BODY, body);
    lua_setfield(L, -2, "body");
    impl_pushvec3(L, at), lua_setfield(L, -2, "point");
    impl_pushvec3(L, impulse), lua_setfield(L, -2, "impulse");
    return 1;
}

static int particle_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    if (!impl_handle_valid(h, imp_particle_valid)) {
        lua_pushliteral(L, "Particle (destroyed)");
        return 1;
    }
    imp_vec3 x = imp_particle_position(h->world->w, h->id);
    lua_pushfstring(L, "Particle #%d at (%f, %f, %f)", (int)h->id.index, x.x, x.y, x.z);
    return 1;
}

/* ---- properties --------------------------------------------------------------------------------------------- */

static int particle_get_position(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); impl_pushvec3(L, imp_particle_position(h->world->w, h->id)); return 1; }
static int particle_get_velocity(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); impl_pushvec3(L, imp_particle_velocity(h->world->w, h->id)); return 1; }
static int particle_get_mass(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushnumber(L, imp_particle_mass(h->world->w, h->id)); return 1; }
static int particle_get_radius(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushnumber(L, imp_particle_radius(h->world->w, h->id)); return 1; }
static int particle_get_fixed(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushboolean(L, imp_particle_motion(h->world->w, h->id) == IMP_FIXED); return 1; }
static int particle_get_kinematic(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushboolean(L, imp_particle_motion(h->world->w, h->id) == IMP_KINEMATIC); return 1; }
static int particle_get_id(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushinteger(L, h->id.index); return 1; }
static int particle_get_restitution(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushnumber(L, imp_particle_restitution(h->world->w, h->id)); return 1; }
static int particle_get_friction(lua_State *L) { handle_userdata *h = impl_check_particle(L, 1); lua_pushnumber(L, imp_particle_friction(h->world->w, h->id)); return 1; }
static int particle_get_attached(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    imp_id body;
    imp_vec3 at, impulse;
    if (imp_particle_attachment(h->world->w, h->id, &body, &at, &impulse)) impl_push_sibling(L, 1, IMPL_BODY, body);
    else lua_pushnil(L);
    return 1;
}
static int particle_get_color(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    float c[4];
    imp_particle_color(h->world->w, h->id, c);
    impl_pushcolor(L, c);
    return 1;
}
/* particle.data: a table of the script's own, kept by the world */
static int particle_get_data(lua_State *L)
{
    luaL_checkudata(L, 1, IMPL_PARTICLE);
    return impl_push_data(L, 1);
}
static int particle_get_u(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    if (imp_particle_on_curve(h->world->w, h->id)) lua_pushnumber(L, imp_curve_particle_u(h->world->w, h->id));
    else lua_pushnil(L);
    return 1;
}
static int particle_get_udot(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    if (imp_particle_on_curve(h->world->w, h->id)) lua_pushnumber(L, imp_curve_particle_udot(h->world->w, h->id));
    else lua_pushnil(L);
    return 1;
}
static int particle_get_on_curve(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    lua_pushboolean(L, imp_particle_on_curve(h->world->w, h->id));
    return 1;
}

/* a curve particle's position and velocity follow its coordinate u */
static handle_userdata *check_not_on_curve(lua_State *L, const char *what)
{
    handle_userdata *h = impl_check_particle(L, 1);
    if (imp_particle_motion(h->world->w, h->id) == IMP_CURVE)
        luaL_error(L, "%s: this particle moves along its curve; set particle.u and particle.udot instead", what);
    return h;
}

static int particle_set_position(lua_State *L)
{
    handle_userdata *h = check_not_on_curve(L, "particle.position");
    imp_particle_set_position(impl_handle_unlocked(L, h, "particle.position")->w, h->id, impl_topoint(L, 2, "particle.position"));
    return 0;
}
static int particle_set_velocity(lua_State *L)
{
    handle_userdata *h = check_not_on_curve(L, "particle.velocity");
    imp_particle_set_velocity(impl_handle_unlocked(L, h, "particle.velocity")->w, h->id, impl_tovelocity(L, 2, "particle.velocity"));
    return 0;
}
static int particle_set_mass(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    double m = luaL_checknumber(L, 2);
    if (!(m > 0) || !isfinite(m)) return luaL_error(L, "particle.mass must be > 0 (got %f)", m);
    imp_particle_set_mass(impl_handle_unlocked(L, h, "particle.mass")->w, h->id, m);
    return 0;
}
static int particle_set_radius(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    double r = luaL_checknumber(L, 2);
    if (!(r >= 0) || !isfinite(r)) return luaL_error(L, "particle.radius must be >= 0 (got %f)", r);
    impl_limit_size(L, r, "particle.radius", true);
    imp_particle_set_radius(impl_handle_unlocked(L, h, "particle.radius")->w, h->id, r);
    return 0;
}
static int particle_set_restitution(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    int ok;
    double e = lua_tonumberx(L, 2, &ok);
    if (!ok || !(e >= 0 && e <= 1)) return luaL_error(L, "particle.restitution must be a number in [0, 1] (got %s)", luaL_tolstring(L, 2, NULL));
    imp_particle_set_restitution(impl_handle_unlocked(L, h, "particle.restitution")->w, h->id, e);
    return 0;
}
static int particle_set_friction(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    int ok;
    double mu = lua_tonumberx(L, 2, &ok);
    if (!ok || !(mu >= 0 && mu <= 1e6)) return luaL_error(L, "particle.friction must be a number in 0 .. 1000000 (got %s)", luaL_tolstring(L, 2, NULL));
    imp_particle_set_friction(impl_handle_unlocked(L, h, "particle.friction")->w, h->id, mu);
    return 0;
}
static int particle_set_fixed(lua_State *L)
{
    handle_userdata *h = check_not_on_curve(L, "particle.fixed");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_particle_set_motion(impl_handle_unlocked(L, h, "particle.fixed")->w, h->id, lua_toboolean(L, 2) ? IMP_FIXED : IMP_DYNAMIC);
    return 0;
}
static int particle_set_kinematic(lua_State *L)
{
    handle_userdata *h = check_not_on_curve(L, "particle.kinematic");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_particle_set_motion(impl_handle_unlocked(L, h, "particle.kinematic")->w, h->id, lua_toboolean(L, 2) ? IMP_KINEMATIC : IMP_DYNAMIC);
    return 0;
}
static int particle_set_color(lua_State *L)
{
    handle_userdata *h = impl_check_particle(L, 1);
    float c[4];
    impl_tocolor(L, 2, "particle.color", c);
    imp_particle_set_color(h->world->w, h->id, c);
    return 0;
}

/* particle.u = u / particle.udot = udot: moves a curve particle along its curve (calls the curve) */
static int set_curve_coordinate(lua_State *L, bool is_u)
{
    const char *what = is_u ? "particle.u" : "particle.udot";
    handle_userdata *h = impl_check_particle(L, 1);
    if (!imp_particle_on_curve(h->world->w, h->id))
        return luaL_error(L, "%s: this particle is not on a curve (make one with world:curve_particle)", what);
    int ok;
    double v = lua_tonumberx(L, 2, &ok);
    if (!ok || !isfinite(v)) return luaL_error(L, "%s must be a finite number (got %s)", what, luaL_typename(L, 2));
    if (imp_world_locked(h->world->w)) return luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    double u = imp_curve_particle_u(h->world->w, h->id), udot = imp_curve_particle_udot(h->world->w, h->id);
    impl_call_state saved = impl_call_begin(h->world, L);
    imp_status st = imp_curve_particle_set(h->world->w, h->id, is_u ? v : u, is_u ? udot : v);
    impl_call_end(h->world, L, saved, st != IMP_OK, what, "the curve function failed");
    return 0;
}
static int particle_set_u(lua_State *L) { return set_curve_coordinate(L, true); }
static int particle_set_udot(lua_State *L) { return set_curve_coordinate(L, false); }

void impl_open_particle(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", particle_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", particle_destroy}, {"valid", particle_valid}, {"move_to", particle_move_to},
                                       {"attach", particle_attach},   {"detach", particle_detach}, {"attachment", particle_attachment},
                                       {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"position", particle_get_position}, {"velocity", particle_get_velocity}, {"mass", particle_get_mass},
        {"radius", particle_get_radius},     {"fixed", particle_get_fixed},       {"kinematic", particle_get_kinematic},
        {"color", particle_get_color},       {"id", particle_get_id},             {"data", particle_get_data},
        {"u", particle_get_u},               {"udot", particle_get_udot},         {"on_curve", particle_get_on_curve},
        {"restitution", particle_get_restitution}, {"friction", particle_get_friction}, {"attached", particle_get_attached},
        {NULL, NULL}};
    static const luaL_Reg setters[] = {
        {"position", particle_set_position}, {"velocity", particle_set_velocity}, {"mass", particle_set_mass},
        {"radius", particle_set_radius},     {"fixed", particle_set_fixed},       {"kinematic", particle_set_kinematic},
        {"color", particle_set_color},       {"u", particle_set_u},               {"udot", particle_set_udot},
        {"restitution", particle_set_restitution}, {"friction", particle_set_friction},
        {NULL, NULL}};
    static const impl_type type = {IMPL_PARTICLE, "particle", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

/* lua_particle.c: world:particle{...} and the Particle type. */
#include "imp_lua.h"

#define P(L) impl_checkhandle(L, 1, IMPL_PARTICLE, imp_particle_valid)

static imp_motion motion_from_def(lua_State *L, int idx, const char *fn)
{
    int fixed = impl_field_bool(L, idx, fn, "fixed", 0), kin = impl_field_bool(L, idx, fn, "kinematic", 0);
    if (fixed && kin) luaL_error(L, "%s: a particle cannot be both fixed and kinematic", fn);
    return fixed ? IMP_FIXED : kin ? IMP_KINEMATIC : IMP_DYNAMIC;
}

/* world:particle{position, velocity, mass, radius, fixed, kinematic, color} */
static int world_particle(lua_State *L)
{
    const char *fn = "world:particle";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_particle_def def = imp_particle_def_default();
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const keys[] = {"position", "velocity", "mass", "radius", "fixed", "kinematic", "color", NULL};
        impl_check_keys(L, 2, fn, keys);
        def.position = impl_field_vec3(L, 2, fn, "position", def.position);
        def.velocity = impl_field_vec3(L, 2, fn, "velocity", def.velocity);
        def.mass = impl_field_number(L, 2, fn, "mass", def.mass);
        def.radius = impl_field_number(L, 2, fn, "radius", def.radius);
        def.motion = motion_from_def(L, 2, fn);
        impl_field_color(L, 2, fn, "color", def.color);
        if (!(def.mass > 0)) return luaL_error(L, "%s: field 'mass' must be > 0 (got %f)", fn, def.mass);
        if (!(def.radius >= 0)) return luaL_error(L, "%s: field 'radius' must be >= 0 (got %f)", fn, def.radius);
    }
    impl_pushhandle(L, 1, IMPL_PARTICLE, imp_particle_create(lw->w, &def));
    return 1;
}

static int p_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    if (!imp_particle_valid(h->lw->w, h->id)) return 0; /* destroying twice is harmless */
    imp_particle_destroy(impl_handle_unlocked(L, h, "particle:destroy")->w, h->id);
    return 0;
}

static int p_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    lua_pushboolean(L, imp_particle_valid(h->lw->w, h->id));
    return 1;
}

/* particle:move_to(target, dt): a kinematic particle will reach target at the end of the next step */
static int p_move_to(lua_State *L)
{
    lhandle *h = P(L);
    imp_vec3 target = impl_tovec3(L, 2, "particle:move_to: argument 'target'");
    double dt = luaL_checknumber(L, 3);
    if (!(dt > 0)) return luaL_argerror(L, 3, "dt must be > 0");
    if (imp_particle_motion(h->lw->w, h->id) != IMP_KINEMATIC)
        return luaL_error(L, "particle:move_to: the particle must be kinematic (set particle.kinematic = true)");
    imp_particle_move_to(impl_handle_unlocked(L, h, "particle:move_to")->w, h->id, target, dt);
    return 0;
}

static int p_tostring(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_PARTICLE);
    if (!imp_particle_valid(h->lw->w, h->id)) {
        lua_pushliteral(L, "Particle (destroyed)");
        return 1;
    }
    imp_vec3 x = imp_particle_position(h->lw->w, h->id);
    lua_pushfstring(L, "Particle #%d at (%f, %f, %f)", (int)h->id.index, x.x, x.y, x.z);
    return 1;
}

static int g_position(lua_State *L) { lhandle *h = P(L); impl_pushvec3(L, imp_particle_position(h->lw->w, h->id)); return 1; }
static int g_velocity(lua_State *L) { lhandle *h = P(L); impl_pushvec3(L, imp_particle_velocity(h->lw->w, h->id)); return 1; }
static int g_mass(lua_State *L) { lhandle *h = P(L); lua_pushnumber(L, imp_particle_mass(h->lw->w, h->id)); return 1; }
static int g_radius(lua_State *L) { lhandle *h = P(L); lua_pushnumber(L, imp_particle_radius(h->lw->w, h->id)); return 1; }
static int g_fixed(lua_State *L) { lhandle *h = P(L); lua_pushboolean(L, imp_particle_motion(h->lw->w, h->id) == IMP_FIXED); return 1; }
static int g_kinematic(lua_State *L) { lhandle *h = P(L); lua_pushboolean(L, imp_particle_motion(h->lw->w, h->id) == IMP_KINEMATIC); return 1; }
static int g_color(lua_State *L)
{
    lhandle *h = P(L);
    float c[4];
    imp_particle_color(h->lw->w, h->id, c);
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) lua_pushnumber(L, c[k]), lua_rawseti(L, -2, k + 1);
    return 1;
}
static int g_id(lua_State *L) { lhandle *h = P(L); lua_pushinteger(L, h->id.index); return 1; }
/* particle.data: a table of the script's own, kept by the world */
static int g_data(lua_State *L)
{
    luaL_checkudata(L, 1, IMPL_PARTICLE);
    return impl_push_data(L, 1);
}

/* a curve particle's position and velocity follow its coordinate u (lua_constraint.c) */
static lhandle *not_on_curve(lua_State *L, const char *what)
{
    lhandle *h = P(L);
    if (imp_particle_motion(h->lw->w, h->id) == IMP_CURVE)
        luaL_error(L, "%s: this particle moves along its curve; set particle.u and particle.udot instead", what);
    return h;
}

static int s_position(lua_State *L)
{
    lhandle *h = not_on_curve(L, "particle.position");
    imp_particle_set_position(impl_handle_unlocked(L, h, "particle.position")->w, h->id, impl_tovec3(L, 2, "particle.position"));
    return 0;
}
static int s_velocity(lua_State *L)
{
    lhandle *h = not_on_curve(L, "particle.velocity");
    imp_particle_set_velocity(impl_handle_unlocked(L, h, "particle.velocity")->w, h->id, impl_tovec3(L, 2, "particle.velocity"));
    return 0;
}
static int s_mass(lua_State *L)
{
    lhandle *h = P(L);
    double m = luaL_checknumber(L, 2);
    if (!(m > 0) || !isfinite(m)) return luaL_error(L, "particle.mass must be > 0 (got %f)", m);
    imp_particle_set_mass(impl_handle_unlocked(L, h, "particle.mass")->w, h->id, m);
    return 0;
}
static int s_radius(lua_State *L)
{
    lhandle *h = P(L);
    double r = luaL_checknumber(L, 2);
    if (!(r >= 0) || !isfinite(r)) return luaL_error(L, "particle.radius must be >= 0 (got %f)", r);
    imp_particle_set_radius(impl_handle_unlocked(L, h, "particle.radius")->w, h->id, r);
    return 0;
}
static int s_fixed(lua_State *L)
{
    lhandle *h = not_on_curve(L, "particle.fixed");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_particle_set_motion(impl_handle_unlocked(L, h, "particle.fixed")->w, h->id, lua_toboolean(L, 2) ? IMP_FIXED : IMP_DYNAMIC);
    return 0;
}
static int s_kinematic(lua_State *L)
{
    lhandle *h = not_on_curve(L, "particle.kinematic");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_particle_set_motion(impl_handle_unlocked(L, h, "particle.kinematic")->w, h->id, lua_toboolean(L, 2) ? IMP_KINEMATIC : IMP_DYNAMIC);
    return 0;
}
static int s_color(lua_State *L)
{
    lhandle *h = P(L);
    float c[4];
    impl_tocolor(L, 2, "particle.color", c);
    imp_particle_set_color(h->lw->w, h->id, c);
    return 0;
}

void impl_open_particle(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", p_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", p_destroy}, {"valid", p_valid}, {"move_to", p_move_to}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"position", g_position}, {"velocity", g_velocity}, {"mass", g_mass},
                                       {"radius", g_radius},     {"fixed", g_fixed},       {"kinematic", g_kinematic},
                                       {"color", g_color},       {"id", g_id},             {"data", g_data},
                                       {NULL, NULL}};
    static const luaL_Reg setters[] = {{"position", s_position}, {"velocity", s_velocity}, {"mass", s_mass},
                                       {"radius", s_radius},     {"fixed", s_fixed},       {"kinematic", s_kinematic},
                                       {"color", s_color},       {NULL, NULL}};
    impl_register_type(L, IMPL_PARTICLE, meta, methods);
    impl_set_accessors(L, IMPL_PARTICLE, getters, setters);
    static const luaL_Reg world_fns[] = {{"particle", world_particle}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
}

/* wrap_presolve.c: world.pre_solve, the script's contact modification before the solver
 * (engine/presolve.c). The function is called as fn(world, contact) inside world:step, before anything
 * moves, for every contact of a shape or collider made with pre_solve = true; contact is
 *   {a, b, shape_a, shape_b, normal, points = {{point, depth}, ...},
 *    enabled = true, friction, static_friction, restitution, tangent_velocity = {0, 0, 0}}
 * and what the function leaves in enabled, friction, static_friction, restitution and tangent_velocity
 * is what the solver uses for that contact in this step (friction changed alone sets static_friction
 * too). An error in it, a bad value or an unknown field aborts the step: world:step raises, the world as
 * it was. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "imp_lua.h"

static const char WORLDS_KEY = 'w'; /* registry[&WORLDS_KEY]: world_userdata* -> World, weak values */

static void push_world(lua_State *L, world_userdata *world)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &WORLDS_KEY);
    lua_rawgetp(L, -1, world);
    lua_remove(L, -2);
}

static int fail(world_userdata *world, lua_State *L, int base, const char *msg)
{
    lua_pushstring(L, msg);
    impl_callback_failed(world, L);
    lua_settop(L, base - 1);
    return 1;
}

static const char *const CONTACT_KEYS[] = {"a", "b", "shape_a", "shape_b", "normal", "points", "enabled", "friction",
                                           "static_friction", "restitution", "tangent_velocity", NULL};

/* a number field of the contact table in lo .. hi, or the message why not */
static bool number_field(lua_State *L, int t, const char *key, double lo, double hi, double *out, char *msg, size_t n)
{
    lua_getfield(L, t, key);
    int ok = 0;
    const double v = lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || !(v >= lo && v <= hi)) {
        snprintf(msg, n, "pre_solve: field '%s' of the contact must be a number in %g .. %g", key, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static int presolve_call(void *user, imp_world *w, const imp_contact *c, imp_contact_mod *mod)
{
    (void)w;
    script_callback *cb = user;
    world_userdata *world = cb->world;
    lua_State *L = world->L;
    lua_pushcfunction(L, impl_traceback);
    const int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    push_world(L, world);
    const int world_idx = lua_gettop(L);
    lua_createtable(L, 0, 12);
    const int t = lua_gettop(L);
    impl_push_side_into(L, world_idx, t, "a", "shape_a", c->a);
    impl_push_side_into(L, world_idx, t, "b", "shape_b", c->b);
    impl_pushvec3(L, c->normal), lua_setfield(L, t, "normal");
    lua_createtable(L, c->count, 0);
    for (int k = 0; k < c->count; k++) {
        lua_createtable(L, 0, 2);
        impl_pushvec3(L, c->points[k]), lua_setfield(L, -2, "point");
        lua_pushnumber(L, c->depth[k]), lua_setfield(L, -2, "depth");
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, t, "points");
    lua_pushboolean(L, mod->enabled), lua_setfield(L, t, "enabled");
    lua_pushnumber(L, mod->friction), lua_setfield(L, t, "friction");
    lua_pushnumber(L, mod->static_friction), lua_setfield(L, t, "static_friction");
    lua_pushnumber(L, mod->restitution), lua_setfield(L, t, "restitution");
    impl_pushvec3(L, mod->tangent_velocity), lua_setfield(L, t, "tangent_velocity");
    lua_pushvalue(L, t);
    lua_rotate(L, base + 1, 1); /* a copy of the contact under the call: base | contact, fn, world, contact */
    if (lua_pcall(L, 2, 0, base)) {
        impl_callback_failed(world, L);
        lua_settop(L, base - 1);
        return 1;
    }
    const int tt = base + 1;
    char msg[160];
    lua_pushnil(L);
    while (lua_next(L, tt)) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int k = 0; CONTACT_KEYS[k] && !known; k++) known = strcmp(CONTACT_KEYS[k], lua_tostring(L, -1)) == 0;
        if (!known) {
            lua_pushfstring(L, "pre_solve: unknown field '%s' of the contact (known: enabled, friction, static_friction, restitution, "
                               "tangent_velocity)", luaL_tolstring(L, -1, NULL));
            impl_callback_failed(world, L);
            lua_settop(L, base - 1);
            return 1;
        }
    }
    lua_getfield(L, tt, "enabled");
    if (!lua_isboolean(L, -1)) return fail(world, L, base, "pre_solve: field 'enabled' of the contact must be true or false");
    mod->enabled = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const double friction0 = mod->friction, static0 = mod->static_friction;
    double friction, static_friction, restitution;
    if (!number_field(L, tt, "friction", 0, 1e6, &friction, msg, sizeof msg) ||
        !number_field(L, tt, "static_friction", 0, 1e6, &static_friction, msg, sizeof msg) ||
        !number_field(L, tt, "restitution", 0, 1, &restitution, msg, sizeof msg))
        return fail(world, L, base, msg);
    mod->friction = friction, mod->restitution = restitution;
    mod->static_friction = friction != friction0 && static_friction == static0 ? friction : static_friction;
    lua_getfield(L, tt, "tangent_velocity");
    double tv[3];
    if (!impl_result_vec3(L, -1, tv) || !(sqrt(tv[0] * tv[0] + tv[1] * tv[1] + tv[2] * tv[2]) <= IMP_MAX_SPEED))
        return fail(world, L, base, "pre_solve: field 'tangent_velocity' of the contact must be a finite vector {x, y, z} of at most 1e6 m/s");
    mod->tangent_velocity = v3(tv[0], tv[1], tv[2]);
    lua_settop(L, base - 1);
    return 0;
}

/* world.pre_solve = fn(world, contact) | nil */
int impl_world_set_pre_solve(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.pre_solve");
    if (lua_isnil(L, 2)) {
        imp_world_set_pre_solve(world->w, NULL, NULL, NULL);
        return 0;
    }
    if (!lua_isfunction(L, 2)) return luaL_error(L, "world.pre_solve must be a function(world, contact) or nil (got %s)", luaL_typename(L, 2));
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &WORLDS_KEY) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "v");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &WORLDS_KEY);
    }
    lua_pushvalue(L, 1);
    lua_rawsetp(L, -2, world);
    lua_pop(L, 1);
    script_callback *cb = impl_callback_new(L, world, 2);
    imp_world_set_pre_solve(world->w, presolve_call, cb, impl_callback_release);
    return 0;
}

/* world.pre_solve: the function, or nil */
int impl_world_get_pre_solve(lua_State *L)
{
    imp_world *w = impl_check_world(L, 1);
    script_callback *cb = imp_world_pre_solve_user(w);
    if (cb) lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    else lua_pushnil(L);
    return 1;
}

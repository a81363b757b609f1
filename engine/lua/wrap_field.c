/* wrap_field.c: the Field type and world:field(fn): a force field given by a script's function,
 * fn(x, y, z, vx, vy, vz, t) -> fx, fy, fz, applied to every dynamic particle.
 *
 *   field:destroy(), field:valid() */
#include "imp_lua.h"

/* fn(x, y, z, vx, vy, vz, t) -> fx, fy, fz (nothing: no force) */
static int field_call(void *user, const double x[3], const double v[3], double t, double f[3])
{
    script_callback *cb = user;
    lua_State *L = cb->world->L;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    lua_pushnumber(L, x[0]), lua_pushnumber(L, x[1]), lua_pushnumber(L, x[2]);
    lua_pushnumber(L, v[0]), lua_pushnumber(L, v[1]), lua_pushnumber(L, v[2]);
    lua_pushnumber(L, t);
    if (lua_pcall(L, 7, 3, base)) {
        impl_callback_failed(cb->world, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        int ok = 1;
        f[k] = lua_isnil(L, base + 1 + k) ? 0 : lua_tonumberx(L, base + 1 + k, &ok);
        if (!ok || !isfinite(f[k])) bad = 1;
    }
    if (bad) {
        lua_pushstring(L, "force field must return three finite numbers fx, fy, fz");
        impl_callback_failed(cb->world, L);
    }
    lua_settop(L, base - 1);
    return bad;
}

/* world:field(fn): fn(x, y, z, vx, vy, vz, t) returns the force fx, fy, fz on each dynamic particle */
int impl_world_field(lua_State *L)
{
    impl_check_arg_count(L, "world:field(fn)");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:field");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    imp_field_def def = {field_call, impl_callback_new(L, world, 2), impl_callback_release};
    impl_push_handle(L, 1, IMPL_FIELD, imp_field_create(world->w, &def));
    return 1;
}

static int field_destroy(lua_State *L)
{
    impl_check_arg_count(L, "field:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_FIELD);
    if (impl_handle_valid(h, imp_field_valid)) imp_field_destroy(impl_handle_unlocked(L, h, "field:destroy")->w, h->id);
    return 0;
}
static int field_valid(lua_State *L)
{
    impl_check_arg_count(L, "field:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_FIELD);
    lua_pushboolean(L, impl_handle_valid(h, imp_field_valid));
    return 1;
}

void impl_open_field(lua_State *L)
{
    static const luaL_Reg methods[] = {{"destroy", field_destroy}, {"valid", field_valid}, {NULL, NULL}};
    static const impl_type type = {IMPL_FIELD, "field", NULL, methods, NULL, NULL};
    impl_register_type(L, &type);
}

/* lua_util.c: argument checking and small conversions shared by the binding files. */
#include <stdio.h>
#include <string.h>

#include "imp_lua.h"

imp_vec3 impl_tovec3(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        luaL_error(L, "%s must be a vector {x, y, z} (got %s)", what, luaL_typename(L, idx));
    double c[3];
    static const char *const names[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; k++) {
        if (lua_rawgeti(L, idx, k + 1) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, idx, names[k]);
        }
        int ok;
        c[k] = lua_tonumberx(L, -1, &ok);
        if (!ok) {
            /* a 2D vector {x, y} is allowed: z = 0 */
            if (k == 2 && lua_isnil(L, -1)) c[k] = 0, ok = 1;
            else luaL_error(L, "%s must be a vector {x, y, z}: component %d is %s", what, k + 1, luaL_typename(L, -1));
        }
        if (!isfinite(c[k])) luaL_error(L, "%s must be finite (component %d is %f)", what, k + 1, c[k]);
        lua_pop(L, 1);
    }
    return v3(c[0], c[1], c[2]);
}

void impl_pushvec3(lua_State *L, imp_vec3 v)
{
    lua_createtable(L, 3, 0);
    lua_pushnumber(L, v.x), lua_rawseti(L, -2, 1);
    lua_pushnumber(L, v.y), lua_rawseti(L, -2, 2);
    lua_pushnumber(L, v.z), lua_rawseti(L, -2, 3);
}

double impl_field_number(lua_State *L, int idx, const char *fn, const char *key, double def)
{
    double r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        int ok;
        r = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s: field '%s' must be a number (got %s)", fn, key, luaL_typename(L, -1));
        if (!isfinite(r)) luaL_error(L, "%s: field '%s' must be finite", fn, key);
    }
    lua_pop(L, 1);
    return r;
}

imp_vec3 impl_field_vec3(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def)
{
    imp_vec3 r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        char what[96];
        snprintf(what, sizeof what, "%s: field '%s'", fn, key);
        r = impl_tovec3(L, -1, what);
    }
    lua_pop(L, 1);
    return r;
}

int impl_field_bool(lua_State *L, int idx, const char *fn, const char *key, int def)
{
    int r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        if (!lua_isboolean(L, -1)) luaL_error(L, "%s: field '%s' must be a boolean (got %s)", fn, key, luaL_typename(L, -1));
        r = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return r;
}

void impl_tocolor(lua_State *L, int idx, const char *what, float rgba[4])
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a colour {r, g, b[, a]} (got %s)", what, luaL_typename(L, idx));
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, idx, k + 1);
        int ok;
        double c = lua_tonumberx(L, -1, &ok);
        if (!ok && !(k == 3 && lua_isnil(L, -1)))
            luaL_error(L, "%s must be a colour {r, g, b[, a]} with numbers in 0..1", what);
        rgba[k] = ok ? (float)c : 1.0f;
        lua_pop(L, 1);
    }
}

void impl_field_color(lua_State *L, int idx, const char *fn, const char *key, float rgba[4])
{
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        char what[96];
        snprintf(what, sizeof what, "%s: field '%s'", fn, key);
        impl_tocolor(L, -1, what, rgba);
    }
    lua_pop(L, 1);
}

void impl_check_keys(lua_State *L, int idx, const char *fn, const char *const *allowed)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: the definition table takes named fields only", fn);
        const char *k = lua_tostring(L, -1);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, k) == 0;
        if (!ok) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (const char *const *a = allowed; *a; a++) {
                luaL_addstring(&b, *a);
                if (a[1]) luaL_addstring(&b, ", ");
            }
            luaL_pushresult(&b);
            luaL_error(L, "%s: unknown field '%s' (known: %s)", fn, k, lua_tostring(L, -1));
        }
    }
}

int impl_traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* metatable layout: __index/__newindex = impl_index/impl_newindex, and upvalue-free lookup tables
 * "methods", "getters", "setters" stored in the metatable itself */
void impl_register_type(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
{
    luaL_newmetatable(L, name);
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, impl_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, impl_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pop(L, 1);
}

void impl_set_accessors(lua_State *L, const char *name, const luaL_Reg *getters, const luaL_Reg *setters)
{
    luaL_getmetatable(L, name);
    lua_newtable(L);
    if (getters) luaL_setfuncs(L, getters, 0);
    lua_setfield(L, -2, "getters");
    lua_newtable(L);
    if (setters) luaL_setfuncs(L, setters, 0);
    lua_setfield(L, -2, "setters");
    lua_pop(L, 1);
}

/* short type name for messages: "impetus.Particle" -> "Particle" */
static const char *short_name(lua_State *L, int mt)
{
    lua_getfield(L, mt, "__name");
    const char *n = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (!n) return "object";
    const char *dot = strrchr(n, '.');
    return dot ? dot + 1 : n;
}

int impl_index(lua_State *L)
{
    lua_getmetatable(L, 1);
    int mt = lua_gettop(L);
    if (lua_getfield(L, mt, "methods") == LUA_TTABLE) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) != LUA_TNIL) return 1;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, mt, "getters") == LUA_TTABLE) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) == LUA_TFUNCTION) {
            lua_pushvalue(L, 1);
            lua_call(L, 1, 1);
            return 1;
        }
    }
    return luaL_error(L, "%s has no field or method '%s'", short_name(L, mt), luaL_tolstring(L, 2, NULL));
}

int impl_newindex(lua_State *L)
{
    lua_getmetatable(L, 1);
    int mt = lua_gettop(L);
    if (lua_getfield(L, mt, "setters") == LUA_TTABLE) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) == LUA_TFUNCTION) {
            lua_pushvalue(L, 1);
            lua_pushvalue(L, 3);
            lua_call(L, 2, 0);
            return 0;
        }
    }
    lua_pushvalue(L, 2);
    const char *key = luaL_tolstring(L, -1, NULL);
    lua_getfield(L, mt, "getters");
    bool readonly = lua_istable(L, -1) && lua_getfield(L, -1, key) == LUA_TFUNCTION;
    return luaL_error(L, readonly ? "%s.%s is read-only" : "%s has no settable field '%s'", short_name(L, mt), key);
}

/* wrap_handles.c: the machinery every type shares: the World's checker, handles (one userdata per object, found again
 * through the world's cache), the scripts' data tables, script callbacks the engine calls, and the
 * metatables (methods, getters, setters). */
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

/* ---- the World's checker --------------------------------------------------------------------------------------- */

world_userdata *impl_check_world_userdata(lua_State *L, int idx)
{
    world_userdata *world = luaL_checkudata(L, idx, IMPL_WORLD);
    if (!world->w) luaL_error(L, "stale World: this world was destroyed");
    return world;
}

imp_world *impl_check_world(lua_State *L, int idx) { return impl_check_world_userdata(L, idx)->w; }

world_userdata *impl_check_world_unlocked(lua_State *L, int idx, const char *what)
{
    world_userdata *world = impl_check_world_userdata(L, idx);
    if (imp_world_locked(world->w))
        luaL_error(L, "%s: the world is locked while it steps (a force field or behaviour may read it, "
                      "not change it; make changes in update)", what);
    return world;
}

/* ---- handles -------------------------------------------------------------------------------------- */

/* the key of an object in its world's handle cache and data tables: "impetus.Body:3:1" */
static void push_object_key(lua_State *L, const char *type, imp_id id)
{
    lua_pushfstring(L, "%s:%d:%d", type, (int)id.index, (int)id.generation);
}

handle_userdata *impl_push_handle(lua_State *L, int world_idx, const char *type, imp_id id)
{
    world_idx = lua_absindex(L, world_idx);
    world_userdata *world = lua_touserdata(L, world_idx);
    lua_getiuservalue(L, world_idx, 1); /* cache */
    push_object_key(L, type, id);
    if (lua_rawget(L, -2) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return lua_touserdata(L, -1);
    }
    lua_pop(L, 1);
    handle_userdata *h = lua_newuserdatauv(L, sizeof *h, 2);
    h->id = id;
    h->world = world;
    lua_pushvalue(L, world_idx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, type);
    push_object_key(L, type, id);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_remove(L, -2);
    return h;
}

handle_userdata *impl_push_sibling(lua_State *L, int handle_idx, const char *type, imp_id id)
{
    lua_getiuservalue(L, handle_idx, 1); /* the world */
    handle_userdata *h = impl_push_handle(L, -1, type, id);
    lua_remove(L, -2);
    return h;
}

bool impl_handle_valid(const handle_userdata *h, bool (*valid)(const imp_world *, imp_id))
{
    return h->world->w && valid(h->world->w, h->id);
}

/* "Body" of "impetus.Body" */
static const char *type_short_name(const char *type)
{
    const char *dot = strrchr(type, '.');
    return dot ? dot + 1 : type;
}

handle_userdata *impl_check_handle(lua_State *L, int idx, const char *type, bool (*valid)(const imp_world *, imp_id))
{
    handle_userdata *h = luaL_checkudata(L, idx, type);
    if (!h->world->w) luaL_error(L, "stale %s handle: its world was destroyed", type_short_name(type));
    if (!valid(h->world->w, h->id)) luaL_error(L, "stale %s handle: that object was destroyed", type_short_name(type));
    return h;
}

world_userdata *impl_handle_unlocked(lua_State *L, handle_userdata *h, const char *what)
{
    if (imp_world_locked(h->world->w)) luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    return h->world;
}

/* the table kept in the world's user value `which` for the object of the handle at idx, made on first
 * use; keyed like the handle cache, so it survives the handle being collected and found again */
static int push_object_table(lua_State *L, int idx, int which)
{
    idx = lua_absindex(L, idx);
    handle_userdata *h = lua_touserdata(L, idx);
    const char *type = "?";
    if (lua_getmetatable(L, idx)) {
        lua_getfield(L, -1, "__name");
        type = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
        lua_pop(L, 2);
    }
    if (!h->world->w) luaL_error(L, "stale %s handle: its world was destroyed", type_short_name(type));
    lua_getiuservalue(L, idx, 1);           /* the world */
    lua_getiuservalue(L, -1, which);        /* its tables of objects */
    push_object_key(L, type, h->id);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        push_object_key(L, type, h->id);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    lua_replace(L, -3);
    lua_pop(L, 1);
    return 1;
}

/* handle.data: a table of the script's own for the object at idx */
int impl_push_data(lua_State *L, int idx) { return push_object_table(L, idx, 2); }

/* the bindings' own values for the object at idx, for what the engine keeps no field of */
int impl_push_object_extras(lua_State *L, int idx) { return push_object_table(L, idx, 3); }

/* ---- callbacks -------------------------------------------------------------------------------------- */

script_callback *impl_callback_new(lua_State *L, world_userdata *world, int fn_idx)
{
    script_callback *cb = malloc(sizeof *cb);
    if (!cb) luaL_error(L, "out of memory");
    cb->world = world;
    cb->refs = 1;
    lua_pushvalue(L, fn_idx);
    cb->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return cb;
}

void impl_callback_retain(void *user) { ((script_callback *)user)->refs++; }

void impl_callback_release(void *user)
{
    script_callback *cb = user;
    if (--cb->refs > 0) return;
    if (cb->world->L) luaL_unref(cb->world->L, LUA_REGISTRYINDEX, cb->fn_ref);
    free(cb);
}

int impl_callback_failed(world_userdata *world, lua_State *L)
{
    if (world->error_ref == LUA_NOREF) {
        lua_pushvalue(L, -1);
        world->error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    return 1;
}

int impl_traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    luaL_traceback(L, L, msg, 1);
    return 1;
}

impl_call_state impl_call_begin(world_userdata *world, lua_State *L)
{
    impl_call_state saved = {world->L, world->error_ref};
    world->L = L;
    world->error_ref = LUA_NOREF;
    return saved;
}

/* restore; when failed, raise "fn: <the script's error>" (or fallback when there was none) */
void impl_call_end(world_userdata *world, lua_State *L, impl_call_state saved, bool failed, const char *fn, const char *fallback)
{
    int ref = world->error_ref;
    world->L = saved.outer;
    world->error_ref = saved.error_ref;
    if (ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        if (failed) luaL_error(L, "%s: %s", fn, lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
        lua_pop(L, 1);
    }
    if (failed) luaL_error(L, "%s: %s", fn, fallback);
}

/* ---- types ------------------------------------------------------------------------------------------------ */

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

/* __index: a method, else a property through its getter */
static int type_index(lua_State *L)
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

/* __newindex: a property through its setter */
static int type_newindex(lua_State *L)
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

/* handle.kind: the first upvalue, whatever the state of the object (a handler can tell a destroyed
 * Body from a Collider) */
static int type_kind(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
}

/* the metatable holds __index/__newindex and the lookup tables "methods", "getters", "setters";
 * every type answers `kind` */
void impl_register_type(lua_State *L, const impl_type *type)
{
    luaL_newmetatable(L, type->name);
    if (type->meta) luaL_setfuncs(L, type->meta, 0);
    lua_pushcfunction(L, type_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, type_newindex);
    lua_setfield(L, -2, "__newindex");
    const luaL_Reg *tables[3] = {type->methods, type->getters, type->setters};
    static const char *const table_names[3] = {"methods", "getters", "setters"};
    for (int k = 0; k < 3; k++) {
        lua_newtable(L);
        if (tables[k]) luaL_setfuncs(L, tables[k], 0);
        lua_setfield(L, -2, table_names[k]);
    }
    lua_getfield(L, -1, "getters");
    lua_pushstring(L, type->kind);
    lua_pushcclosure(L, type_kind, 1);
    lua_setfield(L, -2, "kind");
    lua_pop(L, 2);
}

/* wrap_snapshot.c: the Snapshot type, a world's whole state (engine/snapshot.c).
 *
 *   world:snapshot()                 a Snapshot of the world now (not while it steps)
 *   world:restore(s)                 the world as s was taken (its handles valid or stale as then)
 *   s:save(path)                     a file: format version, checksum, the state
 *   s:encode(), impetus.decode_snapshot(bytes)   the same bytes in a string (a recording holds one)
 *   impetus.load_snapshot(path)      a Snapshot from a file; another format version or a corrupt file
 *                                    is refused with an error that says which
 *   s.bytes, s.time, s.steps         memory it holds; the world's time and step count when taken
 *   s:release()                      frees it now (a history that keeps many frees them as it goes)
 *
 * A Snapshot's user values: 1, the World it was taken from (its script functions live there: fields,
 * "function" behaviours and constraints, curves); 2 and 3, copies of that World's tables of its
 * objects (handle.data, the bindings' own values such as a collider's colour), one level deep. A
 * restore puts those tables back in place, so a handle's data table stays the same table and holds
 * what it held. A Snapshot loaded from a file has neither: restored into a world, its objects take the
 * functions of the objects with the same ids there, and the world's tables are left as they are. */
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

#define IMPL_SNAPSHOT "impetus.Snapshot"

typedef struct snapshot_userdata {
    imp_snapshot *s; /* NULL once released */
} snapshot_userdata;

static snapshot_userdata *check_snapshot(lua_State *L, int idx, const char *fn)
{
    snapshot_userdata *u = luaL_checkudata(L, idx, IMPL_SNAPSHOT);
    if (!u->s) luaL_error(L, "%s: this snapshot was released", fn);
    return u;
}

/* a copy of the table at idx whose values that are tables are copied too (their values shared) */
static void copy_two_levels(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pushvalue(L, -2);
        if (lua_type(L, -2) == LUA_TTABLE) {
            lua_newtable(L);
            lua_pushnil(L);
            while (lua_next(L, -4)) {
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, -4);
            }
        } else {
            lua_pushvalue(L, -2);
        }
        lua_rawset(L, -5);
        lua_pop(L, 1);
    }
}

/* the table at dst made to hold what the table at src holds (keys not in src removed) */
static void refill(lua_State *L, int dst, int src)
{
    dst = lua_absindex(L, dst), src = lua_absindex(L, src);
    lua_pushnil(L);
    while (lua_next(L, dst)) { /* clearing fields during a traversal is allowed */
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, dst);
    }
    lua_pushnil(L);
    while (lua_next(L, src)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, dst);
    }
}

/* the world's table of its objects' tables (now) made to hold the snapshot's copy (saved): a table that
 * exists in both is refilled in place, so a script's reference to handle.data stays good */
static void restore_object_tables(lua_State *L, int now, int saved)
{
    lua_pushnil(L); /* objects the snapshot did not have lose their tables */
    while (lua_next(L, now)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, saved) == LUA_TNIL) {
            lua_pushvalue(L, -2);
            lua_pushnil(L);
            lua_rawset(L, now);
        }
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    while (lua_next(L, saved)) {
        if (lua_type(L, -1) != LUA_TTABLE) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, -2);
        if (lua_rawget(L, now) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -3);
            lua_pushvalue(L, -2);
            lua_rawset(L, now);
        }
        refill(L, -1, -2);
        lua_pop(L, 2);
    }
}

/* world:snapshot() */
int impl_world_snapshot(lua_State *L)
{
    impl_check_arg_count(L, "world:snapshot()");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:snapshot");
    snapshot_userdata *u = lua_newuserdatauv(L, sizeof *u, 3);
    u->s = NULL;
    luaL_setmetatable(L, IMPL_SNAPSHOT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    for (int which = 2; which <= 3; which++) {
        lua_getiuservalue(L, 1, which);
        copy_two_levels(L, -1);
        lua_setiuservalue(L, -3, which);
        lua_pop(L, 1);
    }
    u->s = imp_snapshot_take(world->w);
    if (!u->s) return luaL_error(L, "world:snapshot: %s", imp_world_error(world->w));
    return 1;
}

/* world:restore(s) */
int impl_world_restore(lua_State *L)
{
    impl_check_arg_count(L, "world:restore(snapshot)");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:restore");
    snapshot_userdata *u = check_snapshot(L, 2, "world:restore");
    if (imp_snapshot_restore(world->w, u->s) != IMP_OK) return luaL_error(L, "world:%s", imp_world_error(world->w));
    for (int which = 2; which <= 3; which++) {
        if (lua_getiuservalue(L, 2, which) == LUA_TTABLE) {
            lua_getiuservalue(L, 1, which);
            restore_object_tables(L, lua_gettop(L), lua_gettop(L) - 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* s:save(path) */
static int snapshot_save(lua_State *L)
{
    impl_check_arg_count(L, "snapshot:save(path)");
    snapshot_userdata *u = check_snapshot(L, 1, "snapshot:save");
    const char *path = luaL_checkstring(L, 2);
    char err[512];
    if (!imp_snapshot_save(u->s, path, err, sizeof err)) return luaL_error(L, "snapshot:save: %s", err);
    return 0;
}

/* impetus.load_snapshot(path) */
static int load_snapshot(lua_State *L)
{
    impl_check_arg_count(L, "impetus.load_snapshot(path)");
    const char *path = luaL_checkstring(L, 1);
    char err[512];
    imp_snapshot *s = imp_snapshot_load(path, err, sizeof err);
    if (!s) return luaL_error(L, "impetus.load_snapshot: %s", err);
    snapshot_userdata *u = lua_newuserdatauv(L, sizeof *u, 3);
    u->s = s;
    luaL_setmetatable(L, IMPL_SNAPSHOT);
    return 1;
}

/* s:encode() -> the file's bytes as a string */
static int snapshot_encode(lua_State *L)
{
    impl_check_arg_count(L, "snapshot:encode()");
    snapshot_userdata *u = check_snapshot(L, 1, "snapshot:encode");
    size_t n;
    char *bytes = imp_snapshot_encode(u->s, &n);
    lua_pushlstring(L, bytes, n);
    free(bytes);
    return 1;
}

/* impetus.decode_snapshot(bytes) */
static int decode_snapshot(lua_State *L)
{
    impl_check_arg_count(L, "impetus.decode_snapshot(bytes)");
    size_t n;
    const char *bytes = luaL_checklstring(L, 1, &n);
    char err[512];
    imp_snapshot *s = imp_snapshot_decode(bytes, n, err, sizeof err);
    if (!s) return luaL_error(L, "impetus.decode_snapshot: %s", err);
    snapshot_userdata *u = lua_newuserdatauv(L, sizeof *u, 3);
    u->s = s;
    luaL_setmetatable(L, IMPL_SNAPSHOT);
    return 1;
}

static int snapshot_release(lua_State *L)
{
    impl_check_arg_count(L, "snapshot:release()");
    snapshot_userdata *u = luaL_checkudata(L, 1, IMPL_SNAPSHOT);
    imp_snapshot_free(u->s);
    u->s = NULL;
    for (int which = 1; which <= 3; which++) {
        lua_pushnil(L);
        lua_setiuservalue(L, 1, which);
    }
    return 0;
}

static int snapshot_gc(lua_State *L)
{
    snapshot_userdata *u = luaL_checkudata(L, 1, IMPL_SNAPSHOT);
    imp_snapshot_free(u->s);
    u->s = NULL;
    return 0;
}

static int snapshot_tostring(lua_State *L)
{
    snapshot_userdata *u = luaL_checkudata(L, 1, IMPL_SNAPSHOT);
    if (!u->s) lua_pushliteral(L, "Snapshot (released)");
    else lua_pushfstring(L, "Snapshot (t = %f s, step %d, %d bytes)", imp_snapshot_time(u->s), (int)imp_snapshot_step_count(u->s),
                         (int)imp_snapshot_bytes(u->s));
    return 1;
}

static int snapshot_get_bytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)imp_snapshot_bytes(check_snapshot(L, 1, "snapshot.bytes")->s));
    return 1;
}
static int snapshot_get_time(lua_State *L)
{
    lua_pushnumber(L, imp_snapshot_time(check_snapshot(L, 1, "snapshot.time")->s));
    return 1;
}
static int snapshot_get_steps(lua_State *L)
{
    lua_pushinteger(L, imp_snapshot_step_count(check_snapshot(L, 1, "snapshot.steps")->s));
    return 1;
}

/* world:momentum() -> {px, py, pz}, {Lx, Ly, Lz} (about the origin) */
int impl_world_momentum(lua_State *L)
{
    impl_check_arg_count(L, "world:momentum()");
    imp_vec3 P, Lm;
    imp_world_momentum(impl_check_world(L, 1), &P, &Lm);
    impl_pushvec3(L, P);
    impl_pushvec3(L, Lm);
    return 2;
}

/* registers the Snapshot type; leaves impetus.load_snapshot and impetus.decode_snapshot on the stack */
int impl_open_snapshot(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", snapshot_gc}, {"__tostring", snapshot_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"save", snapshot_save}, {"encode", snapshot_encode}, {"release", snapshot_release}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"bytes", snapshot_get_bytes}, {"time", snapshot_get_time}, {"steps", snapshot_get_steps}, {NULL, NULL}};
    static const impl_type type = {IMPL_SNAPSHOT, "snapshot", meta, methods, getters, NULL};
    impl_register_type(L, &type);
    lua_pushcfunction(L, load_snapshot);
    lua_pushcfunction(L, decode_snapshot);
    return 2;
}

/* wrap_core.c: luaopen_impetus_core, the module specs and the host require as "impetus.core".
 *
 *   core.world{...}        a new World (wrap_world.c; the other types are made by its methods)
 *   core.ode               the ODE solvers (wrap_ode.c)
 *   core.lcp               the pivoting LCP solver (wrap_lcp.c)
 *   core.quat              quaternions as {w, x, y, z} (wrap_quat.c)
 *   core.load_snapshot(p)  a Snapshot from a file (wrap_snapshot.c; world:snapshot() makes one)
 *   core.mtime(path)       modification time of a file in seconds (with fractions), or nil
 *   core.clock()           a monotonic clock in seconds, for wall-time measurements
 *   core.image_load(path)  width, height, RGBA pixel bytes as a string (stb_image), or nil, message
 */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <time.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO_WARNINGS
#include <stb_image.h>

#include "imp_lua.h"

static int core_mtime(lua_State *L)
{
    impl_check_arg_count(L, "core.mtime(path)");
    struct stat st;
    if (stat(luaL_checkstring(L, 1), &st) != 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9);
    lua_pushinteger(L, (lua_Integer)st.st_size);
    return 2;
}

static int core_clock(lua_State *L)
{
    impl_check_arg_count(L, "core.clock()");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + ts.tv_nsec * 1e-9);
    return 1;
}

static int core_image_load(lua_State *L)
{
    impl_check_arg_count(L, "core.image_load(path)");
    int w, h, n;
    unsigned char *px = stbi_load(luaL_checkstring(L, 1), &w, &h, &n, 4);
    if (!px) {
        lua_pushnil(L);
        lua_pushstring(L, stbi_failure_reason());
        return 2;
    }
    lua_pushinteger(L, w);
    lua_pushinteger(L, h);
    lua_pushlstring(L, (const char *)px, (size_t)w * (size_t)h * 4);
    stbi_image_free(px);
    return 3;
}

int luaopen_impetus_core(lua_State *L)
{
    static const luaL_Reg fns[] = {{"mtime", core_mtime}, {"clock", core_clock}, {"image_load", core_image_load}, {NULL, NULL}};
    luaL_newlib(L, fns);
    impl_open_world(L);
    lua_setfield(L, -2, "world");
    impl_open_particle(L);
    impl_open_spring(L);
    impl_open_behavior(L);
    impl_open_field(L);
    impl_open_collider(L);
    impl_open_body(L);
    impl_open_constraint(L);
    impl_open_joint(L);
    impl_open_cloth(L);
    impl_open_hair(L);
    impl_open_quat(L);
    lua_setfield(L, -2, "quat");
    impl_open_ode(L);
    lua_setfield(L, -2, "ode");
    impl_open_lcp(L);
    lua_setfield(L, -2, "lcp");
    impl_open_snapshot(L);
    lua_setfield(L, -3, "decode_snapshot");
    lua_setfield(L, -2, "load_snapshot");
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
    return 1;
}

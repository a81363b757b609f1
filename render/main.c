/* main.c: the impetus host program. It embeds Lua 5.4, makes "impetus.core" (the engine bindings)
 * and "impetus.gfx" (the window and renderer) requirable, and hands the command line to the frame
 * loop written in Lua: scripts/impetus/run.lua. Everything else, argument parsing included, lives
 * there, so the loop stays scriptable and reloadable. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int luaopen_impetus_core(lua_State *L);
int luaopen_impetus_gfx(lua_State *L);

/* the checkout the binary was built in: build/<config>/bin/impetus -> three levels up */
static const char *default_root(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) return ".";
    buf[n] = 0;
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(buf, '/');
        if (!slash) return ".";
        *slash = 0;
    }
    char probe[4096 + 64];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/scripts/impetus/run.lua", buf);
    return stat(probe, &st) == 0 ? buf : ".";
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
    return 1;
}

int main(int argc, char **argv)
{
    static char exe_root[4096];
    const char *root = getenv("IMPETUS_ROOT");
    if (!root || !*root) root = default_root(exe_root, sizeof exe_root);

    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "impetus: cannot create a Lua state\n");
        return 1;
    }
    luaL_openlibs(L);
    luaL_requiref(L, "impetus.core", luaopen_impetus_core, 0);
    luaL_requiref(L, "impetus.gfx", luaopen_impetus_gfx, 0);
    lua_pop(L, 2);

    /* package.path: the engine's scripts first */
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s/scripts/?.lua;%s/scripts/?/init.lua;", root, root);
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);

    /* arg table as lua.c makes it, and IMPETUS_ROOT for the scripts */
    lua_createtable(L, argc, 1);
    for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]), lua_rawseti(L, -2, i);
    lua_setglobal(L, "arg");

    lua_pushcfunction(L, traceback);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "impetus.run");
    int rc = lua_pcall(L, 1, 1, -3);
    if (rc == LUA_OK) {
        lua_getfield(L, -1, "main");
        lua_getglobal(L, "arg");
        lua_pushstring(L, root);
        rc = lua_pcall(L, 2, 1, -5);
    }
    int status = 0;
    if (rc != LUA_OK) {
        fprintf(stderr, "impetus: %s\n", lua_tostring(L, -1));
        status = 1;
    } else if (lua_isinteger(L, -1)) {
        status = (int)lua_tointeger(L, -1);
    }
    lua_close(L);
    return status;
}

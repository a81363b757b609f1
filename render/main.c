/* main.c: the impetus host program. It embeds Lua 5.4, makes "impetus.core" (the engine bindings)
 * and "impetus.gfx" (the window and renderer) requirable, and hands the command line to the frame
 * loop written in Lua: scripts/impetus/run.lua. Everything else, argument parsing included, lives
 * there, so the loop stays scriptable and reloadable. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int luaopen_impetus_core(lua_State *L);
int luaopen_impetus_gfx(lua_State *L);
int luaopen_impetus_audio(lua_State *L);

/* SIGTERM / SIGINT: the first sets this flag, which the frame loop and the script watchdog
 * (scripts/impetus/guard.lua) poll through impetus.host.interrupted(), so the host quits cleanly even
 * while a script loops; the handler resets itself (SA_RESETHAND), so a second signal ends the process
 * at once, as when something loops in C. */
static volatile sig_atomic_t interrupted_by;

static void on_signal(int sig) { interrupted_by = sig; }

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

/* impetus.host.interrupted() -> the signal number, or false */
static int host_interrupted(lua_State *L)
{
    if (interrupted_by) lua_pushinteger(L, interrupted_by);
    else lua_pushboolean(L, 0);
    return 1;
}

static int luaopen_impetus_host(lua_State *L)
{
    static const luaL_Reg fns[] = {{"interrupted", host_interrupted}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}

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
    luaL_requiref(L, "impetus.host", luaopen_impetus_host, 0);
    lua_pop(L, 3);
    /* impetus.audio opens no device until audio.open(): required on demand by sound.lua */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_impetus_audio);
    lua_setfield(L, -2, "impetus.audio");
    lua_pop(L, 1);
    install_signal_handlers();

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

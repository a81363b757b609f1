/* impetus_lua.h: the public entry of the Lua bindings, for a host program that embeds Lua and adds
 * modules of its own beside impetus.core (render/ does). Everything else in engine/lua/ is private
 * to the bindings (imp_lua.h).
 *
 * The argument readers below raise Lua errors in the bindings' style, naming the function and the
 * argument or field ("gfx.open: field 'width' must be a number (got string)"), so a host's own
 * functions report bad input the way impetus.core does. */
#ifndef IMPETUS_LUA_H
#define IMPETUS_LUA_H

#include <lauxlib.h>
#include <lua.h>

#include "../impetus.h"

/* ---- the module ------------------------------------------------------------------------------------- */
int luaopen_impetus_core(lua_State *L); /* luaL_requiref(L, "impetus.core", luaopen_impetus_core, 0) */

/* ---- the engine objects behind a script's values ------------------------------------------------------ */
imp_world *impl_check_world(lua_State *L, int idx);                  /* a World that was not destroyed */
imp_id impl_check_body_id(lua_State *L, int idx, imp_world **world); /* a live Body: its id and world  */

/* ---- argument readers ------------------------------------------------------------------------------- */
/* a vector {x, y, z} or {x = , y = , z = } ({x, y}: z = 0), finite; errors name `what` */
imp_vec3 impl_tovec3(lua_State *L, int idx, const char *what);
void impl_pushvec3(lua_State *L, imp_vec3 v);
/* a colour {r, g, b [, a]} (a defaults to 1); errors name `what` */
void impl_tocolor(lua_State *L, int idx, const char *what, float rgba[4]);
/* the field `key` of the definition table at idx, or def when it is nil; errors say "fn: field 'key' ..." */
double impl_field_number(lua_State *L, int idx, const char *fn, const char *key, double def);
int impl_field_bool(lua_State *L, int idx, const char *fn, const char *key, int def);
imp_vec3 impl_field_vec3(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def);
void impl_field_color(lua_State *L, int idx, const char *fn, const char *key, float rgba[4]); /* unchanged when nil */
/* refuses any key of the table at idx that is not in the NULL-terminated list `allowed` */
void impl_check_keys(lua_State *L, int idx, const char *fn, const char *const *allowed);
/* the string at idx as an index into the NULL-terminated list `names`, as luaL_checkoption reads it;
 * the error lists the valid names: `what` must be "a", "b" or "c" (got "d") */
int impl_check_option(lua_State *L, int idx, const char *what, const char *const *names);
/* refuses arguments beyond those the signature names ("world:raycast(from, to)"; a method's self is
 * counted, trailing nils are allowed): "world:raycast(from, to): unexpected argument #3 (table)" */
void impl_check_arg_count(lua_State *L, const char *signature);

#endif

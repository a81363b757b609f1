/* imp_lua.h: shared pieces of the Lua bindings (luaopen_impetus_core). Only engine/lua/ and the
 * host include this. Conventions, as in Lua's own libraries and LOVE: a checker per type that
 * refuses stale handles, a method table plus __index/__newindex for properties, and user mistakes
 * raised as Lua errors that name the function and the argument. */
#ifndef IMPETUS_LUA_H
#define IMPETUS_LUA_H

#include <lauxlib.h>
#include <lua.h>

#include "../impetus.h"

#define IMPL_WORLD "impetus.World"
#define IMPL_PARTICLE "impetus.Particle"
#define IMPL_SPRING "impetus.Spring"
#define IMPL_BEHAVIOR "impetus.Behavior"
#define IMPL_FIELD "impetus.Field"
#define IMPL_COLLIDER "impetus.Collider"
#define IMPL_CONSTRAINT "impetus.Constraint"
#define IMPL_BODY "impetus.Body"
#define IMPL_CLOTH "impetus.Cloth"
#define IMPL_HAIR "impetus.Hair"

/* the world userdata */
typedef struct lworld {
    imp_world *w;
    lua_State *L;      /* the thread running the current step (callbacks run on it)     */
    int error_ref;     /* registry ref of the first callback error of this step, or LUA_NOREF */
} lworld;

/* a handle to an object of a world; its uservalue 1 is the world userdata (keeps it alive) */
typedef struct lhandle {
    imp_id id;
    lworld *lw;
} lhandle;

/* a Lua function kept for a callback (fields, behaviours) */
typedef struct lcallback {
    lworld *lw;
    int fn_ref;
} lcallback;

/* lua_util.c */
imp_vec3 impl_tovec3(lua_State *L, int idx, const char *what); /* {x,y,z} or {x=,y=,z=}; errors name `what` */
void impl_pushvec3(lua_State *L, imp_vec3 v);
/* def-table readers: the value at key of the table at idx, or def when nil; errors say "fn: field 'key' ..." */
double impl_field_number(lua_State *L, int idx, const char *fn, const char *key, double def);
imp_vec3 impl_field_vec3(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def);
int impl_field_bool(lua_State *L, int idx, const char *fn, const char *key, int def);
void impl_field_color(lua_State *L, int idx, const char *fn, const char *key, float rgba[4]);
/* raise an error for any key of the table at idx not in the NULL-terminated list */
void impl_check_keys(lua_State *L, int idx, const char *fn, const char *const *allowed);
void impl_tocolor(lua_State *L, int idx, const char *what, float rgba[4]);
int impl_traceback(lua_State *L); /* message handler for lua_pcall: appends a traceback */
void impl_register_type(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);
void impl_set_accessors(lua_State *L, const char *name, const luaL_Reg *getters, const luaL_Reg *setters);
/* __index / __newindex through per-type getter and setter tables stored in the metatable */
int impl_index(lua_State *L);
int impl_newindex(lua_State *L);

/* lua_world.c */
lworld *impl_checkworld(lua_State *L, int idx);
lworld *impl_checkunlocked(lua_State *L, int idx, const char *what); /* refuses changes during a step */
int impl_open_world(lua_State *L);
void impl_add_world_methods(lua_State *L, const luaL_Reg *fns); /* world:particle etc. from other files */
/* handles */
lhandle *impl_pushhandle(lua_State *L, int world_idx, const char *type, imp_id id);
lhandle *impl_checkhandle(lua_State *L, int idx, const char *type, bool (*valid)(const imp_world *, imp_id));
lcallback *impl_callback_new(lua_State *L, lworld *lw, int fn_idx); /* keeps the function at fn_idx */
int impl_push_data(lua_State *L, int idx); /* handle.data of the handle at idx, kept by its world */
void impl_callback_release(void *user); /* frees an lcallback and its registry ref */
lworld *impl_handle_unlocked(lua_State *L, lhandle *h, const char *what); /* refuses changes during a step */
int impl_callback_failed(lworld *lw, lua_State *L); /* keeps the error on top of L; returns 1 */

/* per-type openers */
void impl_open_particle(lua_State *L);
void impl_open_forces(lua_State *L);
void impl_open_collider(lua_State *L);
void impl_open_constraint(lua_State *L); /* lua_constraint.c: after the world and particle types */
void impl_open_cloth(lua_State *L); /* lua_cloth.c: cloth, hair, implicit settings */
int impl_open_ode(lua_State *L);
/* rigid bodies (lua_body.c) and collision queries (lua_query.c) */
void impl_open_body(lua_State *L);
void impl_open_query(lua_State *L);
void impl_open_impulse(lua_State *L);
/* friction, static_friction, restitution fields of a definition table into a shape def (lua_impulse.c) */
void impl_read_material(lua_State *L, int idx, const char *fn, imp_shape_def *s);
int impl_open_quat(lua_State *L);
int impl_open_lcp(lua_State *L);   /* lua_lcp.c: impetus.lcp */
void impl_open_joint(lua_State *L); /* lua_joint.c: the impulse mode's Joint type */
int impl_world_joint_impulse(lua_State *L); /* world:joint{type = ...} */
void impl_open_qp(lua_State *L);   /* lua_qp.c: world.contact and the exact-contact queries */
imp_quat impl_toquat(lua_State *L, int idx, const char *what); /* {w, x, y, z}, normalized */
void impl_pushquat(lua_State *L, imp_quat q);
/* world:sphere{...} / world:box{...} without static = true: dynamic rigid bodies */
int impl_world_body_sphere(lua_State *L);
int impl_world_body_box(lua_State *L);

#endif

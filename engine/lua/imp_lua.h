/* imp_lua.h: what the binding files of impetus.core share; private to engine/lua/ (a host includes
 * impetus_lua.h). One file per Lua type, as LOVE's wrap_<Type> files: the type's checker, methods,
 * properties and metatable live in wrap_<type>.c, and the constructor that makes it (world:body{...})
 * lives there too; wrap_world.c lists every World method in one table. Conventions, as in Lua's own
 * libraries: a checker per type refuses stale handles, a method table plus __index/__newindex serve
 * the properties, and user mistakes are Lua errors that name the function and the argument. */
#ifndef IMP_LUA_H
#define IMP_LUA_H

#include "impetus_lua.h"

/* metatable names of the types */
#define IMPL_WORLD "impetus.World"
#define IMPL_PARTICLE "impetus.Particle"
#define IMPL_SPRING "impetus.Spring"
#define IMPL_BEHAVIOR "impetus.Behavior"
#define IMPL_FIELD "impetus.Field"
#define IMPL_COLLIDER "impetus.Collider"
#define IMPL_BODY "impetus.Body"
#define IMPL_CONSTRAINT "impetus.Constraint"
#define IMPL_JOINT "impetus.Joint"
#define IMPL_CLOTH "impetus.Cloth"
#define IMPL_HAIR "impetus.Hair"

/* a World userdata. Its user values: 1, the handle cache (weak values); 2, the scripts' data tables
 * of its objects (handle.data); 3, the bindings' own values of its objects (impl_push_object_extras) */
typedef struct world_userdata {
    imp_world *w;      /* NULL once the world is destroyed                                     */
    lua_State *L;      /* the thread running the current step (callbacks run on it)            */
    int error_ref;     /* registry ref of the first callback error of this step, or LUA_NOREF */
    struct world_census *census; /* counts the worlds whose C memory is held (wrap_world.c)    */
} world_userdata;

/* a handle to an object of a world; its user value 1 is the World userdata (keeps it alive) */
typedef struct handle_userdata {
    imp_id id;
    world_userdata *world;
} handle_userdata;

/* a script function kept for the engine to call (force fields, behaviours, constraints, curves); held by
 * its object and by every snapshot that keeps it (refs), freed with the last */
typedef struct script_callback {
    world_userdata *world;
    int fn_ref;
    int refs;
} script_callback;

/* ---- wrap_args.c: reading and pushing values ------------------------------------------------------------ */
/* a vector a script function returned, at idx, into out[3]: 0 when it is not a finite {x, y, z} (or {x, y}) */
int impl_result_vec3(lua_State *L, int idx, double out[3]);
imp_quat impl_toquat(lua_State *L, int idx, const char *what); /* {w, x, y, z}, normalized */
void impl_pushquat(lua_State *L, imp_quat q);
void impl_pushmat3(lua_State *L, imp_mat3 m); /* three rows {x, y, z} */
void impl_pushcolor(lua_State *L, const float rgba[4]);
bool impl_has_field(lua_State *L, int idx, const char *key);
/* a number field > 0 (or >= 0 with allow_zero), an integer field in lo..hi, or def when nil */
double impl_field_positive(lua_State *L, int idx, const char *fn, const char *key, double def, bool allow_zero);
int impl_field_integer(lua_State *L, int idx, const char *fn, const char *key, int def, int lo, int hi);
imp_vec3 impl_unit_vector(lua_State *L, imp_vec3 v, const char *fn, const char *key); /* v / |v|; "field 'key' must not be zero" */
/* the range of inputs (impetus.h): a position within IMP_MAX_COORD of the origin, a speed up to
 * IMP_MAX_SPEED, an angular speed up to IMP_MAX_SPIN, a size in IMP_MIN_SIZE .. IMP_MAX_SIZE (or 0 with
 * allow_zero); errors name `what` ("world:box: field 'position'") and the range */
imp_vec3 impl_limit_position(lua_State *L, imp_vec3 p, const char *what);
imp_vec3 impl_limit_speed(lua_State *L, imp_vec3 v, const char *what);
imp_vec3 impl_limit_spin(lua_State *L, imp_vec3 w, const char *what);
double impl_limit_size(lua_State *L, double s, const char *what, bool allow_zero);
/* the same, read from the value at idx or from field `key` of the table at idx (def when nil) */
imp_vec3 impl_topoint(lua_State *L, int idx, const char *what);
imp_vec3 impl_tovelocity(lua_State *L, int idx, const char *what);
imp_vec3 impl_field_position(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def);
imp_vec3 impl_field_velocity(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def);
imp_vec3 impl_field_spin(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def);
double impl_field_size(lua_State *L, int idx, const char *fn, const char *key, double def, bool allow_zero);
void *impl_scratch(lua_State *L, size_t bytes); /* a buffer the collector frees, left on the stack (safe across errors) */
/* refuses any key of the table at idx but the list positions 1 .. length ("what: unknown field 'x'") */
void impl_check_list(lua_State *L, int idx, const char *what, lua_Integer length);
/* the options table at idx (may be absent when `required` is false; then false); unknown keys are errors */
bool impl_options(lua_State *L, int idx, const char *fn, const char *const *keys, bool required);

/* ---- wrap_handles.c: handles, callbacks and types ------------------------------------------------------- */
/* the handle of object id of the World at world_idx: the same userdata each time it is asked for */
handle_userdata *impl_push_handle(lua_State *L, int world_idx, const char *type, imp_id id);
/* a handle of the same world as the handle at handle_idx */
handle_userdata *impl_push_sibling(lua_State *L, int handle_idx, const char *type, imp_id id);
/* whether the handle's object (and its world) still exist */
bool impl_handle_valid(const handle_userdata *h, bool (*valid)(const imp_world *, imp_id));
/* the handle at idx, of the given type, whose object still exists ("stale Body handle ...") */
handle_userdata *impl_check_handle(lua_State *L, int idx, const char *type, bool (*valid)(const imp_world *, imp_id));
world_userdata *impl_handle_unlocked(lua_State *L, handle_userdata *h, const char *what); /* refuses changes during a step */
int impl_push_data(lua_State *L, int idx); /* handle.data of the handle at idx, kept by its world */
int impl_push_object_extras(lua_State *L, int idx); /* the bindings' own values of its object (a collider's colour) */
script_callback *impl_callback_new(lua_State *L, world_userdata *world, int fn_idx); /* keeps the function at fn_idx */
void impl_callback_release(void *user); /* lets go of a script_callback: the last frees it and its registry ref */
void impl_callback_retain(void *user);  /* one more holder (a snapshot: imp_world_set_callback_retain) */
int impl_callback_failed(world_userdata *world, lua_State *L); /* keeps the error on top of L; returns 1 */
int impl_traceback(lua_State *L); /* message handler for lua_pcall: appends a traceback */
/* script functions called outside world:step (creating a curve particle, reading a constraint's
 * value, solving) run on the calling thread; call_end raises "fn: <the script's error>" when failed */
typedef struct impl_call_state {
    lua_State *outer;
    int error_ref;
} impl_call_state;
impl_call_state impl_call_begin(world_userdata *world, lua_State *L);
void impl_call_end(world_userdata *world, lua_State *L, impl_call_state saved, bool failed, const char *fn, const char *fallback);
/* a type's metatable: methods, and properties read and written through getters and setters */
typedef struct impl_type {
    const char *name;         /* the metatable's name: IMPL_BODY, ...                        */
    const char *kind;         /* what handle.kind answers: "body", ...                       */
    const luaL_Reg *meta;     /* metamethods besides __index and __newindex (NULL: none)     */
    const luaL_Reg *methods;  /* body:apply_force(...)                                        */
    const luaL_Reg *getters;  /* body.position (NULL: none)                                   */
    const luaL_Reg *setters;  /* body.position = v (NULL: none)                               */
} impl_type;
void impl_register_type(lua_State *L, const impl_type *type);

/* ---- checkers of the types used by other types' files ---------------------------------------------------- */
world_userdata *impl_check_world_userdata(lua_State *L, int idx);                  /* wrap_world.c */
world_userdata *impl_check_world_unlocked(lua_State *L, int idx, const char *what); /* refuses changes during a step */
handle_userdata *impl_check_particle(lua_State *L, int idx);                      /* wrap_particle.c */
handle_userdata *impl_check_body(lua_State *L, int idx);                          /* wrap_body.c */

/* wrap_ode.c: an integrator name ("euler", "midpoint", "rk4", "adaptive", "implicit") */
imp_method impl_check_method(lua_State *L, int idx, const char *what);
/* wrap_cloth.c: what Hair shares with Cloth (one engine object): vertex k's Particle (false once
 * destroyed), and the stiffness parameters 0 stretch, 1 shear, 2 bend, 3 damping */
void impl_push_cloth_particle(lua_State *L, int handle_idx, imp_id cloth, int k);
int impl_cloth_get_parameter(lua_State *L, handle_userdata *h, int which);
int impl_cloth_set_parameter(lua_State *L, handle_userdata *h, int which, const char *kind, const char *name);
/* wrap_lcp.c: an LCP solve's info table {status, pivots, clamped, regularized} */
void impl_push_lcp_info(lua_State *L, const imp_lcp_info *info);

/* ---- the types: each file registers its metatable ------------------------------------------------------- */
int impl_open_world(lua_State *L); /* leaves the constructor impetus.world{...} on the stack */
void impl_open_particle(lua_State *L);
void impl_open_spring(lua_State *L);
void impl_open_behavior(lua_State *L);
void impl_open_field(lua_State *L);
void impl_open_collider(lua_State *L);
void impl_open_body(lua_State *L);
void impl_open_constraint(lua_State *L);
void impl_open_joint(lua_State *L);
void impl_open_cloth(lua_State *L);
void impl_open_hair(lua_State *L);
/* the module tables: each leaves its table on the stack */
int impl_open_ode(lua_State *L);
int impl_open_lcp(lua_State *L);
int impl_open_quat(lua_State *L);
int impl_open_snapshot(lua_State *L); /* registers Snapshot; leaves impetus.load_snapshot, impetus.decode_snapshot */

/* ---- World methods whose bodies live with the type they make or read (listed in wrap_world.c) ---------- */
/* wrap_particle.c */
int impl_world_particle(lua_State *L);
int impl_world_curve_particle(lua_State *L);
int impl_world_particles(lua_State *L);
/* wrap_spring.c, wrap_behavior.c, wrap_field.c */
int impl_world_spring(lua_State *L);
int impl_world_behavior(lua_State *L);
int impl_world_field(lua_State *L);
/* wrap_collider.c: world:plane, and world:sphere / world:box with static = true */
int impl_world_plane(lua_State *L);
int impl_world_collider_sphere(lua_State *L);
int impl_world_collider_box(lua_State *L);
/* wrap_body.c: world:sphere / world:box without static = true, and the other rigid bodies */
int impl_world_body_sphere(lua_State *L);
int impl_world_body_box(lua_State *L);
int impl_world_capsule(lua_State *L);
int impl_world_hull(lua_State *L);
int impl_world_mesh(lua_State *L);
int impl_world_body(lua_State *L);
int impl_world_bodies(lua_State *L);
int impl_world_body_state(lua_State *L);
int impl_world_set_body_state(lua_State *L);
/* wrap_constraint.c */
int impl_world_rod(lua_State *L);
int impl_world_pin(lua_State *L);
int impl_world_wire(lua_State *L);
int impl_world_on_plane(lua_State *L);
int impl_world_on_line(lua_State *L);
int impl_world_constraint(lua_State *L);
int impl_world_constraints(lua_State *L);
int impl_world_constraint_error(lua_State *L);
int impl_world_solve_constraints(lua_State *L);
/* wrap_joint.c */
int impl_world_joint(lua_State *L);
int impl_world_remove_joint(lua_State *L);
/* wrap_cloth.c, wrap_hair.c */
int impl_world_cloth(lua_State *L);
int impl_world_hair(lua_State *L);
/* wrap_snapshot.c: the whole state, and the momenta the live plots read */
int impl_world_snapshot(lua_State *L);
int impl_world_restore(lua_State *L);
int impl_world_momentum(lua_State *L);
/* wrap_world_contacts.c: contact results, queries and the exact contact mode's contact system */
int impl_world_contacts(lua_State *L);
int impl_world_contact_events(lua_State *L);
int impl_world_pairs(lua_State *L);
int impl_world_raycast(lua_State *L);
int impl_world_query_point(lua_State *L);
int impl_world_overlap(lua_State *L);
int impl_world_overlaps(lua_State *L);
int impl_world_cast(lua_State *L);
int impl_world_broken_joints(lua_State *L); /* wrap_joint.c */
/* one side of a contact into the table at `table`: bkey = the Body and skey = its shape index (1-based), or
 * bkey = the Collider */
void impl_push_side_into(lua_State *L, int world_idx, int table, const char *bkey, const char *skey, imp_contact_side s);
int impl_world_set_pre_solve(lua_State *L); /* wrap_presolve.c */
int impl_world_get_pre_solve(lua_State *L);
int impl_world_collide(lua_State *L);
int impl_world_contact_system(lua_State *L);
int impl_world_contact_accelerations(lua_State *L);
int impl_world_contact_separations(lua_State *L);
int impl_world_solve_contacts(lua_State *L);
int impl_world_resolve_collisions(lua_State *L);
int impl_world_contact_stats(lua_State *L);

#endif

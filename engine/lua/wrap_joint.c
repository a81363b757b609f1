/* wrap_joint.c: the Joint type: joints between rigid bodies (engine/joint.c, S1).
 *
 *   world:joint{type = "point" | "hinge" | "twist" | "rigid" | "prismatic" | "planar", a = body,
 *               b = body or nil (the world), anchor = {x, y, z} (world point now),
 *               axis = {x, y, z} (world direction now: hinge/twist/prismatic axis, planar normal, point
 *               swing-cone axis), limits = {lo, hi} (hinge/twist rad, prismatic m) or {swing = rad} (point),
 *               motor = {speed = s, max = m} (hinge/twist/prismatic)} -> Joint
 *   joint:destroy(), joint:valid()
 *   joint.type, joint.a, joint.b, joint.gap, joint.axis_error, joint.angle, joint.position, joint.speed,
 *   joint.limits (get/set, nil removes), joint.motor (get/set, nil removes), joint.force, joint.torque
 *   (what it applied to a in the last step), joint.break_force, joint.break_torque (get/set; also def fields)
 *   world:broken_joints() -> the joints the last step broke {joint, a, b, type, force, torque}
 *
 * In world.contact = "qp" a typed joint is taken by the QP mode's LCP as equality rows (contact_qp.c);
 * limits and motors are refused there.
 *
 *   world:joint{a, b, point, fixed} without `type`: a ball joint of the QP mode alone (three equality
 *   rows; fixed = true: a weld), which returns an index; world:remove_joint(index [, fixed]) */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "imp_lua.h"

static const char *const TYPE_NAMES[] = {"point", "hinge", "twist", "rigid", "prismatic", "planar", "distance", "spring", NULL}; /* imp_joint_type's order */
/* what world:joint's field 'type' takes: the types, and "rope" (a distance joint in 0 .. length) */
static const char *const TYPE_OPTIONS[] = {"point", "hinge", "twist", "rigid", "prismatic", "planar", "distance", "spring", "rope", NULL};
enum { TYPE_ROPE = 8 };

static bool limited_type(imp_joint_type t) { return t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST || t == IMP_JOINT_PRISMATIC; }

/* a point joint's limits: {swing = angle (0 < swing <= pi), twist = {lo, hi} (-pi <= lo <= hi <= pi)},
 * either or both */
typedef struct point_limits {
    bool swing, twist;
    double swing_angle, twist_lo, twist_hi;
} point_limits;
static point_limits read_point_limits(lua_State *L, int idx, const char *fn)
{
    char what[64];
    snprintf(what, sizeof what, "%s: field 'limits'", fn);
    point_limits pl = {false, false, 0, 0, 0};
    if (!lua_istable(L, idx)) luaL_error(L, "%s of a point joint must be {swing = angle, twist = {lo, hi}} (either or both)", what);
    static const char *const keys[] = {"swing", "twist", NULL};
    impl_check_keys(L, idx, what, keys);
    if (lua_getfield(L, idx, "swing") != LUA_TNIL) {
        int ok;
        pl.swing_angle = lua_tonumberx(L, -1, &ok);
        if (!ok || !(pl.swing_angle > 0) || !(pl.swing_angle <= M_PI)) luaL_error(L, "%s: field 'swing' must be an angle with 0 < swing <= pi", what);
        pl.swing = true;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "twist") != LUA_TNIL) {
        char twhat[80];
        snprintf(twhat, sizeof twhat, "%s: field 'twist'", what);
        if (!lua_istable(L, -1)) luaL_error(L, "%s must be {lo, hi} with -pi <= lo <= hi <= pi", twhat);
        impl_check_list(L, lua_gettop(L), twhat, 2);
        lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
        int ok1, ok2;
        pl.twist_lo = lua_tonumberx(L, -2, &ok1), pl.twist_hi = lua_tonumberx(L, -1, &ok2);
        lua_pop(L, 2);
        if (!ok1 || !ok2 || !(pl.twist_lo >= -M_PI && pl.twist_hi <= M_PI && pl.twist_lo <= pl.twist_hi))
            luaL_error(L, "%s must be {lo, hi} with -pi <= lo <= hi <= pi", twhat);
        pl.twist = true;
    }
    lua_pop(L, 1);
    if (!pl.swing && !pl.twist) luaL_error(L, "%s of a point joint must be {swing = angle, twist = {lo, hi}} (either or both)", what);
    return pl;
}

/* limits at idx: {lo, hi} (hinge/twist/prismatic); fn names the field */
static void read_limits(lua_State *L, int idx, imp_joint_type t, const char *fn, double *lo, double *hi)
{
    char what[64];
    snprintf(what, sizeof what, "%s: field 'limits'", fn);
    if (!limited_type(t)) luaL_error(L, "%s: field 'limits' is for hinge, twist, prismatic and point joints", fn);
    if (!lua_istable(L, idx)) luaL_error(L, "%s: field 'limits' must be {lo, hi} with lo <= hi", fn);
    impl_check_list(L, idx, what, 2);
    lua_rawgeti(L, idx, 1), lua_rawgeti(L, idx, 2);
    int ok1, ok2;
    *lo = lua_tonumberx(L, -2, &ok1), *hi = lua_tonumberx(L, -1, &ok2);
    lua_pop(L, 2);
    if (!ok1 || !ok2 || !(fabs(*lo) <= IMP_JOINT_MAX_COORD && fabs(*hi) <= IMP_JOINT_MAX_COORD) || !(*lo <= *hi))
        luaL_error(L, "%s: field 'limits' must be {lo, hi} with lo <= hi, both within +-1e6", fn);
}

/* a point joint's motor at idx: {velocity = {x, y, z} (rad/s, world), max = N m} */
static void read_ball_motor(lua_State *L, int idx, const char *fn, imp_vec3 *velocity, double *max)
{
    char what[64];
    snprintf(what, sizeof what, "%s: field 'motor'", fn);
    if (!lua_istable(L, idx)) luaL_error(L, "%s of a point joint must be {velocity = {x, y, z}, max = m}", what);
    static const char *const keys[] = {"velocity", "max", NULL};
    impl_check_keys(L, idx, what, keys);
    char vwhat[112];
    snprintf(vwhat, sizeof vwhat, "%s: field 'velocity'", what);
    if (lua_getfield(L, idx, "velocity") == LUA_TNIL) luaL_error(L, "%s of a point joint needs field 'velocity' {x, y, z} (rad/s)", what);
    *velocity = impl_tovec3(L, lua_gettop(L), vwhat);
    lua_pop(L, 1);
    lua_getfield(L, idx, "max");
    int ok;
    *max = lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!(v3_len(*velocity) <= IMP_JOINT_MAX_COORD) || !ok || !(*max >= 0 && *max <= IMP_JOINT_MAX_FORCE))
        luaL_error(L, "%s of a point joint must be {velocity = {x, y, z}, max = m} with |velocity| <= 1e6 and 0 <= max <= 1e12", what);
}

static void read_motor(lua_State *L, int idx, imp_joint_type t, const char *fn, double *speed, double *max)
{
    if (!limited_type(t)) luaL_error(L, "%s: field 'motor' is for hinge, twist, prismatic and point joints", fn);
    if (!lua_istable(L, idx)) luaL_error(L, "%s: field 'motor' must be {speed = s, max = m} with max >= 0", fn);
    static const char *const keys[] = {"speed", "max", NULL};
    char what[64];
    snprintf(what, sizeof what, "%s: field 'motor'", fn);
    impl_check_keys(L, idx, what, keys);
    lua_getfield(L, idx, "speed"), lua_getfield(L, idx, "max");
    int ok1, ok2;
    *speed = lua_tonumberx(L, -2, &ok1), *max = lua_tonumberx(L, -1, &ok2);
    lua_pop(L, 2);
    if (!ok1 || !ok2 || !(fabs(*speed) <= IMP_JOINT_MAX_COORD) || !(*max >= 0 && *max <= IMP_JOINT_MAX_FORCE))
        luaL_error(L, "%s: field 'motor' must be {speed = s, max = m} with |s| <= 1e6 and max >= 0, <= 1e12", fn);
}

/* the Body in field `key` of a world:joint{} table, on top of the stack: a live body of this world */
static imp_id joint_body(lua_State *L, world_userdata *world, const char *key)
{
    handle_userdata *h = impl_check_body(L, lua_gettop(L));
    if (h->world != world) luaL_error(L, "world:joint: field '%s' is a body of another world", key);
    return h->id;
}

/* what the exact mode cannot do with joints, said once for every message */
static const char *const QP_NO_LIMITS = "the exact mode (\"qp\") cannot hold joint limits: its joints are equality rows of one LCP "
                                        "with the contacts, and a limit is an inequality (a row that only pushes at its bound); use "
                                        "world.contact = \"impulse\"";
static const char *const QP_NO_MOTORS = "the exact mode (\"qp\") cannot drive joint motors: its joints are equality rows of one LCP, "
                                        "and a motor is a bounded row (at most max of torque or force); use world.contact = \"impulse\"";

/* break_force (N) or break_torque (N m) of a def table or a setter's value at idx (key: NULL, a setter) */
static const char *const QP_NO_FORCE = "the exact mode (\"qp\") does not measure joint forces (its joints are equality rows of one "
                                       "LCP, solved together with the contacts); use world.contact = \"impulse\"";
static double check_break(lua_State *L, int idx, const char *what, bool qp)
{
    if (qp) luaL_error(L, "%s: %s", what, QP_NO_FORCE);
    int ok = 0;
    const double v = lua_tonumberx(L, idx, &ok);
    if (!ok || !(v >= 0) || !(v <= IMP_JOINT_MAX_FORCE)) luaL_error(L, "%s must be a number in 0 .. 1e12 (0: unbreakable)", what);
    return v;
}
static double read_break(lua_State *L, int idx, const char *key, bool qp)
{
    char what[64];
    snprintf(what, sizeof what, "world:joint: field '%s'", key);
    double v = 0;
    if (lua_getfield(L, idx, key) != LUA_TNIL) v = check_break(L, lua_gettop(L), what, qp);
    lua_pop(L, 1);
    return v;
}

static double read_break(lua_State *L, int idx, const char *key, bool qp);

/* a number field >= 0 and <= hi (def when nil) */
static double field_range(lua_State *L, const char *fn, const char *key, double def, double lo, double hi)
{
    const double v = impl_field_number(L, 2, fn, key, def);
    if (!(v >= lo && v <= hi)) luaL_error(L, "%s: field '%s' must be a number in %f .. %f (got %f)", fn, key, lo, hi, v);
    return v;
}

/* world:joint{type = "distance" | "rope" | "spring", a, b, anchor, anchor_b, ...}: two points, one on each
 * body (b nil: anchor_b is a point of the world) */
static int create_two_point_joint(lua_State *L, world_userdata *world, int option)
{
    const char *fn = "world:joint";
    imp_world *w = world->w;
    static const char *const distance_keys[] = {"type", "a", "b", "anchor", "anchor_b", "length", "min_length", "max_length", "break_force", "break_torque", NULL};
    static const char *const rope_keys[] = {"type", "a", "b", "anchor", "anchor_b", "length", "break_force", "break_torque", NULL};
    static const char *const spring_keys[] = {"type", "a", "b", "anchor", "anchor_b", "stiffness", "damping", "rest_length", "break_force", "break_torque", NULL};
    char what[64];
    snprintf(what, sizeof what, "world:joint (a %s joint)", TYPE_OPTIONS[option]);
    impl_check_keys(L, 2, what, option == IMP_JOINT_SPRING ? spring_keys : option == TYPE_ROPE ? rope_keys : distance_keys);
    const bool qp = imp_world_contact_mode(w) == IMP_CONTACT_QP;
    if (qp && option != IMP_JOINT_SPRING)
        return luaL_error(L, "%s: the exact mode (\"qp\") cannot take a %s joint: its rows there are equalities of one LCP and a rope's "
                             "bound is an inequality; use world.contact = \"impulse\"", fn, TYPE_OPTIONS[option]);
    imp_joint_def d;
    memset(&d, 0, sizeof d);
    d.type = option == IMP_JOINT_SPRING ? IMP_JOINT_SPRING : IMP_JOINT_DISTANCE;
    lua_getfield(L, 2, "a");
    if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'a' (a body) is required", fn);
    d.a = joint_body(L, world, "a");
    lua_getfield(L, 2, "b");
    if (!lua_isnil(L, -1)) {
        if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'b' must be a body or nil (the world)", fn);
        d.b = joint_body(L, world, "b");
        if (d.a.index == d.b.index && d.a.generation == d.b.generation)
            return luaL_error(L, "%s: fields 'a' and 'b' must be two different bodies", fn);
    }
    for (int e = 0; e < 2; e++) {
        const char *key = e ? "anchor_b" : "anchor";
        if (lua_getfield(L, 2, key) == LUA_TNIL) return luaL_error(L, "%s: field '%s' (a world point {x, y, z} on %s) is required", fn, key, e ? "b" : "a");
        snprintf(what, sizeof what, "world:joint: field '%s'", key);
        const imp_vec3 p = impl_topoint(L, lua_gettop(L), what);
        if (e) d.anchor_b = p;
        else d.anchor = p;
        lua_pop(L, 1);
    }
    const double now = v3_len(v3_sub(d.anchor, d.anchor_b));
    if (option == IMP_JOINT_SPRING) {
        if (!impl_has_field(L, 2, "stiffness")) return luaL_error(L, "%s: a spring joint needs field 'stiffness' (N/m, > 0)", fn);
        d.stiffness = field_range(L, fn, "stiffness", 0, 0, IMP_JOINT_MAX_FORCE);
        if (!(d.stiffness > 0)) return luaL_error(L, "%s: field 'stiffness' must be > 0 (N/m)", fn);
        d.damping = field_range(L, fn, "damping", 0, 0, IMP_JOINT_MAX_FORCE);
        d.rest = field_range(L, fn, "rest_length", now, 0, IMP_JOINT_MAX_COORD);
    } else {
        const double length = field_range(L, fn, "length", now, 0, IMP_JOINT_MAX_COORD);
        d.lo = option == TYPE_ROPE ? 0 : field_range(L, fn, "min_length", length, 0, IMP_JOINT_MAX_COORD);
        d.hi = option == TYPE_ROPE ? length : field_range(L, fn, "max_length", length, 0, IMP_JOINT_MAX_COORD);
        if (impl_has_field(L, 2, "min_length") && !impl_has_field(L, 2, "max_length") && !impl_has_field(L, 2, "length")) d.hi = fmax(d.lo, now);
        if (impl_has_field(L, 2, "max_length") && !impl_has_field(L, 2, "min_length") && !impl_has_field(L, 2, "length")) d.lo = fmin(d.hi, now);
        if (!(d.lo <= d.hi)) return luaL_error(L, "%s: field 'min_length' (%f) must not exceed 'max_length' (%f)", fn, d.lo, d.hi);
    }
    const double break_force = read_break(L, 2, "break_force", qp), break_torque = read_break(L, 2, "break_torque", qp);
    imp_id id = imp_joint_create(w, &d);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: could not create the joint (stale body?)", fn);
    imp_joint_set_break(w, id, break_force, break_torque);
    impl_push_handle(L, 1, IMPL_JOINT, id);
    return 1;
}

/* world:joint{type = ...}: a Joint */
static int create_typed_joint(lua_State *L)
{
    const char *fn = "world:joint";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_world *w = world->w;
    lua_getfield(L, 2, "type");
    const int option = impl_check_option(L, -1, "world:joint: field 'type'", TYPE_OPTIONS);
    lua_pop(L, 1);
    if (option >= IMP_JOINT_DISTANCE) return create_two_point_joint(L, world, option);
    static const char *const keys[] = {"type", "a", "b", "anchor", "axis", "limits", "motor", "break_force", "break_torque", NULL};
    impl_check_keys(L, 2, fn, keys);
    /* world.contact = "qp" takes the joint's constrained directions as equality rows of its LCP
     * (contact_qp.c); limits and motors are the impulse mode's alone */
    const bool qp = imp_world_contact_mode(w) == IMP_CONTACT_QP;
    imp_joint_def d;
    memset(&d, 0, sizeof d);
    const int k = option;
    d.type = (imp_joint_type)k;
    lua_getfield(L, 2, "a");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'a' (a body) is required", fn);
    if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'a' must be a body", fn);
    d.a = joint_body(L, world, "a");
    lua_getfield(L, 2, "b");
    if (!lua_isnil(L, -1)) {
        if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'b' must be a body or nil (the world)", fn);
        d.b = joint_body(L, world, "b");
        if (d.a.index == d.b.index && d.a.generation == d.b.generation)
            return luaL_error(L, "%s: fields 'a' and 'b' must be two different bodies", fn);
    }
    lua_getfield(L, 2, "anchor");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'anchor' (a world point {x, y, z}) is required", fn);
    d.anchor = impl_tovec3(L, lua_gettop(L), "world:joint: field 'anchor'");
    if (!(v3_len(d.anchor) <= IMP_JOINT_MAX_COORD)) return luaL_error(L, "%s: field 'anchor' must be a point within 1e6 m of the origin", fn);
    lua_getfield(L, 2, "axis");
    bool needs_axis = d.type == IMP_JOINT_HINGE || d.type == IMP_JOINT_PRISMATIC || d.type == IMP_JOINT_PLANAR;
    if (!lua_isnil(L, -1)) {
        if (d.type == IMP_JOINT_RIGID) return luaL_error(L, "%s: field 'axis' is not used by a rigid joint", fn);
        d.axis = impl_tovec3(L, lua_gettop(L), "world:joint: field 'axis'");
        if (!(v3_len(d.axis) > 1e-9) || !isfinite(v3_len(d.axis))) return luaL_error(L, "%s: field 'axis' must be a finite non-zero vector", fn);
        d.has_axis = true;
    } else if (needs_axis) {
        return luaL_error(L, "%s: a %s joint needs field 'axis' (a world direction {x, y, z})", fn, TYPE_NAMES[k]);
    }
    lua_getfield(L, 2, "limits");
    if (qp && !lua_isnil(L, -1)) return luaL_error(L, "%s: field 'limits': %s", fn, QP_NO_LIMITS);
    point_limits pl = {false, false, 0, 0, 0};
    if (!lua_isnil(L, -1) && d.type == IMP_JOINT_POINT) {
        pl = read_point_limits(L, lua_gettop(L), fn);
        d.has_limits = pl.swing, d.lo = 0, d.hi = pl.swing_angle;
    } else if (!lua_isnil(L, -1)) read_limits(L, lua_gettop(L), d.type, fn, &d.lo, &d.hi), d.has_limits = true;
    lua_getfield(L, 2, "motor");
    if (qp && !lua_isnil(L, -1)) return luaL_error(L, "%s: field 'motor': %s", fn, QP_NO_MOTORS);
    imp_vec3 ball_velocity = v3(0, 0, 0);
    double ball_max = 0;
    const bool ball_motor = !lua_isnil(L, -1) && d.type == IMP_JOINT_POINT;
    if (ball_motor) read_ball_motor(L, lua_gettop(L), fn, &ball_velocity, &ball_max);
    else if (!lua_isnil(L, -1)) read_motor(L, lua_gettop(L), d.type, fn, &d.speed, &d.max), d.has_motor = true;
    const double break_force = read_break(L, 2, "break_force", qp), break_torque = read_break(L, 2, "break_torque", qp);
    imp_id id = imp_joint_create(w, &d);
    if (imp_id_is_null(id)) {
        if (d.type == IMP_JOINT_TWIST && !d.has_axis)
            return luaL_error(L, "%s: a twist joint without field 'axis' takes the line between the two centres, and they coincide", fn);
        return luaL_error(L, "%s: could not create the joint (stale body?)", fn);
    }
    imp_joint_set_break(w, id, break_force, break_torque);
    if (pl.twist) imp_joint_set_twist_limits(w, id, true, pl.twist_lo, pl.twist_hi);
    if (ball_motor) imp_joint_set_ball_motor(w, id, true, ball_velocity, ball_max);
    impl_push_handle(L, 1, IMPL_JOINT, id);
    return 1;
}

/* world:joint{a = body, b = body (optional: the world), point = {x, y, z}} -> index */
/* world:broken_joints() -> {{joint, a, b, type, force, torque}, ...} of the last step (joint is stale now) */
int impl_world_broken_joints(lua_State *L)
{
    impl_check_arg_count(L, "world:broken_joints()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    const int n = imp_world_broken_joint_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const imp_joint_break *e = imp_world_broken_joint(world->w, i);
        lua_createtable(L, 0, 6);
        impl_push_handle(L, 1, IMPL_JOINT, e->joint), lua_setfield(L, -2, "joint");
        if (imp_body_valid(world->w, e->a)) impl_push_handle(L, 1, IMPL_BODY, e->a), lua_setfield(L, -2, "a");
        if (!imp_id_is_null(e->b) && imp_body_valid(world->w, e->b)) impl_push_handle(L, 1, IMPL_BODY, e->b), lua_setfield(L, -2, "b");
        lua_pushstring(L, TYPE_NAMES[e->type]), lua_setfield(L, -2, "type");
        impl_pushvec3(L, e->force), lua_setfield(L, -2, "force");
        impl_pushvec3(L, e->torque), lua_setfield(L, -2, "torque");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

int impl_world_joint(lua_State *L)
{
    impl_check_arg_count(L, "world:joint(def)");
    const char *fn = "world:joint";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_world *w = world->w;
    luaL_checktype(L, 2, LUA_TTABLE);
    if (lua_getfield(L, 2, "type") != LUA_TNIL) return create_typed_joint(L);
    lua_pop(L, 1);
    static const char *const keys[] = {"a", "b", "point", "fixed", NULL};
    impl_check_keys(L, 2, fn, keys);
    lua_getfield(L, 2, "a");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'a' (a body) is required", fn);
    imp_id a = joint_body(L, world, "a");
    imp_id b = {0, 0};
    lua_getfield(L, 2, "b");
    if (!lua_isnil(L, -1)) b = joint_body(L, world, "b");
    if (imp_id_is_null(a)) return luaL_error(L, "%s: field 'a' must be a body", fn);
    if (!imp_id_is_null(b) && a.index == b.index) return luaL_error(L, "%s: fields 'a' and 'b' must be two bodies", fn);
    lua_getfield(L, 2, "point");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'point' is required", fn);
    imp_vec3 p = impl_tovec3(L, lua_gettop(L), "world:joint: field 'point'");
    bool fixed = impl_field_bool(L, 2, fn, "fixed", 0);
    int k = imp_qp_joint(w, a, b, p);
    if (k < 0) return luaL_error(L, "%s: stale body handle", fn);
    if (fixed) { /* a weld: three ball joints at non-collinear points (9 rows of rank 6: the solver
                  * takes the redundancy like any degenerate contact set) */
        imp_qp_joint(w, a, b, (imp_vec3){p.x + 1, p.y, p.z});
        imp_qp_joint(w, a, b, (imp_vec3){p.x, p.y + 1, p.z});
    }
    lua_pushinteger(L, k + 1);
    return 1;
}

int impl_world_remove_joint(lua_State *L)
{
    impl_check_arg_count(L, "world:remove_joint(index [, fixed])");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:remove_joint")->w;
    lua_Integer index = luaL_checkinteger(L, 2);
    if (index < 1 || index > INT_MAX - 2) return 0; /* no such joint: as for an index past the last one */
    int k = (int)index - 1;
    imp_qp_joint_remove(w, k);
    if (lua_toboolean(L, 3)) imp_qp_joint_remove(w, k + 1), imp_qp_joint_remove(w, k + 2); /* a fixed joint's */
    return 0;
}

static handle_userdata *check_joint(lua_State *L, int idx)
{
    handle_userdata *h = luaL_checkudata(L, idx, IMPL_JOINT);
    if (!impl_handle_valid(h, imp_joint_valid)) luaL_error(L, "joint: this joint was destroyed");
    return h;
}

static int joint_destroy(lua_State *L)
{
    impl_check_arg_count(L, "joint:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_JOINT);
    if (!impl_handle_valid(h, imp_joint_valid)) return 0;
    if (imp_world_locked(h->world->w)) return luaL_error(L, "joint:destroy: the world is locked while it steps; change it in update");
    imp_joint_destroy(h->world->w, h->id);
    return 0;
}

static int joint_valid(lua_State *L)
{
    impl_check_arg_count(L, "joint:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_JOINT);
    lua_pushboolean(L, impl_handle_valid(h, imp_joint_valid) && imp_joint_bodies_live(h->world->w, h->id));
    return 1;
}

static int joint_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_JOINT);
    if (!impl_handle_valid(h, imp_joint_valid)) lua_pushliteral(L, "Joint (destroyed)");
    else lua_pushfstring(L, "Joint #%d (%s)", (int)h->id.index, TYPE_NAMES[imp_joint_kind(h->world->w, h->id)]);
    return 1;
}

static int joint_get_type(lua_State *L) { handle_userdata *h = check_joint(L, 1); lua_pushstring(L, TYPE_NAMES[imp_joint_kind(h->world->w, h->id)]); return 1; }
static int get_errors(lua_State *L, int which)
{
    handle_userdata *h = check_joint(L, 1);
    double gap = 0, ax = 0;
    if (!imp_joint_errors(h->world->w, h->id, &gap, &ax)) return luaL_error(L, "joint: a body of this joint was destroyed");
    lua_pushnumber(L, which ? ax : gap);
    return 1;
}
static int joint_get_gap(lua_State *L) { return get_errors(L, 0); }
static int joint_get_axis_error(lua_State *L) { return get_errors(L, 1); }

/* the free coordinate: angle (hinge/twist), position (prismatic); speed of either; nil for other types */
static int get_coordinate(lua_State *L, int which)
{
    handle_userdata *h = check_joint(L, 1);
    imp_joint_type t = imp_joint_kind(h->world->w, h->id);
    double x = 0, s = 0;
    bool angular = t == IMP_JOINT_HINGE || t == IMP_JOINT_TWIST;
    if ((which == 0 && !angular) || (which == 1 && t != IMP_JOINT_PRISMATIC) || !imp_joint_coordinate(h->world->w, h->id, &x, &s)) {
        if (!imp_joint_bodies_live(h->world->w, h->id)) return luaL_error(L, "joint: a body of this joint was destroyed");
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, which == 2 ? s : x);
    return 1;
}
static int joint_get_angle(lua_State *L) { return get_coordinate(L, 0); }
static int joint_get_position(lua_State *L) { return get_coordinate(L, 1); }
static int joint_get_speed(lua_State *L) { return get_coordinate(L, 2); }

static int push_end_body(lua_State *L, bool a)
{
    handle_userdata *h = check_joint(L, 1);
    imp_id ia, ib;
    imp_joint_ends(h->world->w, h->id, &ia, &ib);
    imp_id id = a ? ia : ib;
    if (imp_id_is_null(id) || !imp_body_valid(h->world->w, id)) return lua_pushnil(L), 1;
    impl_push_sibling(L, 1, IMPL_BODY, id);
    return 1;
}
static int joint_get_a(lua_State *L) { return push_end_body(L, true); }
static int joint_get_b(lua_State *L) { return push_end_body(L, false); }

static int joint_get_limits(lua_State *L)
{
    handle_userdata *h = check_joint(L, 1);
    double lo, hi, tlo, thi;
    if (imp_joint_kind(h->world->w, h->id) == IMP_JOINT_POINT) {
        const bool swing = imp_joint_limits(h->world->w, h->id, &lo, &hi), twist = imp_joint_twist_limits(h->world->w, h->id, &tlo, &thi);
        if (!swing && !twist) return lua_pushnil(L), 1;
        lua_createtable(L, 0, 2);
        if (swing) lua_pushnumber(L, hi), lua_setfield(L, -2, "swing");
        if (twist) {
            lua_createtable(L, 2, 0);
            lua_pushnumber(L, tlo), lua_rawseti(L, -2, 1);
            lua_pushnumber(L, thi), lua_rawseti(L, -2, 2);
            lua_setfield(L, -2, "twist");
        }
        return 1;
    }
    if (!imp_joint_limits(h->world->w, h->id, &lo, &hi)) return lua_pushnil(L), 1;
    lua_createtable(L, 2, 1);
    {
        lua_pushnumber(L, lo), lua_rawseti(L, -2, 1);
        lua_pushnumber(L, hi), lua_rawseti(L, -2, 2);
    }
    return 1;
}

static int joint_set_limits(lua_State *L)
{
    handle_userdata *h = check_joint(L, 1);
    imp_world *w = impl_handle_unlocked(L, h, "joint.limits")->w;
    if (lua_isnil(L, 2)) return imp_joint_set_limits(w, h->id, false, 0, 0), imp_joint_set_twist_limits(w, h->id, false, 0, 0), 0;
    if (imp_world_contact_mode(w) == IMP_CONTACT_QP)
        return luaL_error(L, "joint.limits: %s", QP_NO_LIMITS);
    if (imp_joint_kind(w, h->id) == IMP_JOINT_POINT) {
        const point_limits pl = read_point_limits(L, 2, "joint.limits");
        imp_joint_set_limits(w, h->id, pl.swing, 0, pl.swing_angle);
        imp_joint_set_twist_limits(w, h->id, pl.twist, pl.twist_lo, pl.twist_hi);
        return 0;
    }
    double lo, hi;
    read_limits(L, 2, imp_joint_kind(w, h->id), "joint.limits", &lo, &hi);
    imp_joint_set_limits(w, h->id, true, lo, hi);
    return 0;
}

/* joint.force, joint.torque: what it applied to body a in the last step (N; N m about its point) */
static int get_force(lua_State *L, bool torque)
{
    handle_userdata *h = check_joint(L, 1);
    if (imp_world_contact_mode(h->world->w) == IMP_CONTACT_QP) return luaL_error(L, "joint.%s: %s", torque ? "torque" : "force", QP_NO_FORCE);
    imp_vec3 f, t;
    imp_joint_force(h->world->w, h->id, &f, &t);
    impl_pushvec3(L, torque ? t : f);
    return 1;
}
static int joint_get_force(lua_State *L) { return get_force(L, false); }
static int joint_get_torque(lua_State *L) { return get_force(L, true); }
static int get_break(lua_State *L, bool torque)
{
    handle_userdata *h = check_joint(L, 1);
    double f, t;
    imp_joint_break_limits(h->world->w, h->id, &f, &t);
    lua_pushnumber(L, torque ? t : f);
    return 1;
}
static int joint_get_break_force(lua_State *L) { return get_break(L, false); }
static int joint_get_break_torque(lua_State *L) { return get_break(L, true); }
static int set_break(lua_State *L, bool torque)
{
    handle_userdata *h = check_joint(L, 1);
    const char *what = torque ? "joint.break_torque" : "joint.break_force";
    imp_world *w = impl_handle_unlocked(L, h, what)->w;
    const double v = check_break(L, 2, what, imp_world_contact_mode(w) == IMP_CONTACT_QP);
    double f, t;
    imp_joint_break_limits(w, h->id, &f, &t);
    imp_joint_set_break(w, h->id, torque ? f : v, torque ? v : t);
    return 0;
}
static int joint_set_break_force(lua_State *L) { return set_break(L, false); }
static int joint_set_break_torque(lua_State *L) { return set_break(L, true); }

static int joint_get_motor(lua_State *L)
{
    handle_userdata *h = check_joint(L, 1);
    double s, m;
    imp_vec3 vel;
    if (imp_joint_kind(h->world->w, h->id) == IMP_JOINT_POINT) {
        if (!imp_joint_ball_motor(h->world->w, h->id, &vel, &m)) return lua_pushnil(L), 1;
        lua_createtable(L, 0, 2);
        impl_pushvec3(L, vel), lua_setfield(L, -2, "velocity");
        lua_pushnumber(L, m), lua_setfield(L, -2, "max");
        return 1;
    }
    if (!imp_joint_motor(h->world->w, h->id, &s, &m)) return lua_pushnil(L), 1;
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, s), lua_setfield(L, -2, "speed");
    lua_pushnumber(L, m), lua_setfield(L, -2, "max");
    return 1;
}

static int joint_set_motor(lua_State *L)
{
    handle_userdata *h = check_joint(L, 1);
    imp_world *w = impl_handle_unlocked(L, h, "joint.motor")->w;
    if (lua_isnil(L, 2)) return imp_joint_set_motor(w, h->id, false, 0, 0), 0;
    if (imp_world_contact_mode(w) == IMP_CONTACT_QP)
        return luaL_error(L, "joint.motor: %s", QP_NO_MOTORS);
    double s, m;
    if (imp_joint_kind(w, h->id) == IMP_JOINT_POINT) {
        imp_vec3 vel;
        read_ball_motor(L, 2, "joint.motor", &vel, &m);
        imp_joint_set_ball_motor(w, h->id, true, vel, m);
        return 0;
    }
    read_motor(L, 2, imp_joint_kind(w, h->id), "joint.motor", &s, &m);
    imp_joint_set_motor(w, h->id, true, s, m);
    return 0;
}

void impl_open_joint(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", joint_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", joint_destroy}, {"valid", joint_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"type", joint_get_type}, {"gap", joint_get_gap}, {"axis_error", joint_get_axis_error}, {"angle", joint_get_angle},
                                       {"position", joint_get_position}, {"speed", joint_get_speed}, {"limits", joint_get_limits}, {"motor", joint_get_motor},
                                       {"a", joint_get_a}, {"b", joint_get_b}, {"force", joint_get_force}, {"torque", joint_get_torque},
                                       {"break_force", joint_get_break_force}, {"break_torque", joint_get_break_torque}, {NULL, NULL}};
    static const luaL_Reg setters[] = {{"limits", joint_set_limits}, {"motor", joint_set_motor}, {"break_force", joint_set_break_force},
                                       {"break_torque", joint_set_break_torque}, {NULL, NULL}};
    static const impl_type type = {IMPL_JOINT, "joint", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

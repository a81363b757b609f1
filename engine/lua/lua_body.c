/* lua_body.c: rigid bodies: world:sphere/box/capsule/hull/mesh/body{...}, the Body type, and
 * impetus.quat (quaternions as {w, x, y, z}). */
#include <string.h>

#include "imp_lua.h"

#define B(L) impl_checkhandle(L, 1, IMPL_BODY, imp_body_valid)

/* ---- reading definitions ------------------------------------------------------------------------------ */

imp_quat impl_toquat(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a quaternion {w, x, y, z} (got %s)", what, luaL_typename(L, idx));
    double c[4];
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, idx, k + 1);
        int ok;
        c[k] = lua_tonumberx(L, -1, &ok);
        if (!ok || !isfinite(c[k])) luaL_error(L, "%s must be a quaternion {w, x, y, z}: component %d is not a finite number", what, k + 1);
        lua_pop(L, 1);
    }
    imp_quat q = quat(c[0], c[1], c[2], c[3]);
    if (quat_len(q) < 1e-12) luaL_error(L, "%s must not be the zero quaternion", what);
    return quat_normalize(q);
}

void impl_pushquat(lua_State *L, imp_quat q)
{
    lua_createtable(L, 4, 0);
    lua_pushnumber(L, q.w), lua_rawseti(L, -2, 1);
    lua_pushnumber(L, q.x), lua_rawseti(L, -2, 2);
    lua_pushnumber(L, q.y), lua_rawseti(L, -2, 3);
    lua_pushnumber(L, q.z), lua_rawseti(L, -2, 4);
}

static void push_mat3(lua_State *L, imp_mat3 m)
{
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        impl_pushvec3(L, v3(m.m[i][0], m.m[i][1], m.m[i][2]));
        lua_rawseti(L, -2, i + 1);
    }
}

static imp_mat3 to_mat3(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    imp_mat3 m;
    for (int i = 0; i < 3; i++) {
        lua_rawgeti(L, idx, i + 1);
        imp_vec3 r = impl_tovec3(L, -1, what);
        m.m[i][0] = r.x, m.m[i][1] = r.y, m.m[i][2] = r.z;
        lua_pop(L, 1);
    }
    return m;
}

/* orientation = {w,x,y,z}, or axis + angle */
static imp_quat field_orientation(lua_State *L, int idx, const char *fn)
{
    imp_quat q = quat_identity();
    char what[96];
    if (lua_getfield(L, idx, "orientation") != LUA_TNIL) {
        snprintf(what, sizeof what, "%s: field 'orientation'", fn);
        q = impl_toquat(L, -1, what);
    }
    lua_pop(L, 1);
    lua_getfield(L, idx, "angle");
    bool has_angle = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_angle) {
        imp_vec3 axis = impl_field_vec3(L, idx, fn, "axis", v3(0, 0, 1));
        if (v3_len(axis) < 1e-12) luaL_error(L, "%s: field 'axis' must not be zero", fn);
        q = quat_mul(quat_from_axis_angle(axis, impl_field_number(L, idx, fn, "angle", 0)), q);
    }
    return q;
}

static double positive(lua_State *L, int idx, const char *fn, const char *key, double def)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (!(v > 0)) luaL_error(L, "%s: field '%s' must be > 0 (got %f)", fn, key, v);
    return v;
}

/* read a list of points {{x,y,z}, ...} into a GC-managed buffer left on the stack */
static double *read_points(lua_State *L, int idx, const char *fn, const char *key, int *count)
{
    char what[96];
    if (lua_getfield(L, idx, key) != LUA_TTABLE) luaL_error(L, "%s: field '%s' must be a list of points {{x, y, z}, ...}", fn, key);
    int n = (int)lua_rawlen(L, -1);
    if (n > 1000000) luaL_error(L, "%s: field '%s' has too many points", fn, key);
    double *p = lua_newuserdatauv(L, sizeof(double) * 3 * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        snprintf(what, sizeof what, "%s: %s[%d]", fn, key, i + 1);
        v3_store(p + 3 * i, impl_tovec3(L, -1, what));
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    *count = n;
    return p;
}

static int *read_triangles(lua_State *L, int idx, const char *fn, int *count)
{
    if (lua_getfield(L, idx, "triangles") != LUA_TTABLE) luaL_error(L, "%s: field 'triangles' must be a list {{i, j, k}, ...}", fn);
    int n = (int)lua_rawlen(L, -1);
    int *t = lua_newuserdatauv(L, sizeof(int) * 3 * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        if (lua_rawgeti(L, -2, i + 1) != LUA_TTABLE) luaL_error(L, "%s: triangles[%d] must be {i, j, k}", fn, i + 1);
        for (int k = 0; k < 3; k++) {
            lua_rawgeti(L, -1, k + 1);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok) luaL_error(L, "%s: triangles[%d] must hold three vertex numbers", fn, i + 1);
            t[3 * i + k] = (int)(v - 1); /* 1-based in Lua */
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    *count = n;
    return t;
}

static const char *const SHAPE_NAMES[IMP_SHAPE_TYPE_COUNT] = {"sphere", "capsule", "box", "hull", "mesh", "plane"};

/* the shape part of a def table: type-specific fields; buffers are left on the Lua stack */
static void read_shape(lua_State *L, int idx, const char *fn, imp_shape_def *s, bool local_pose)
{
    switch (s->type) {
    case IMP_SHAPE_SPHERE: s->radius = positive(L, idx, fn, "radius", 0.5); break;
    case IMP_SHAPE_CAPSULE:
        s->radius = positive(L, idx, fn, "radius", 0.25);
        s->half_height = 0.5 * impl_field_number(L, idx, fn, "length", 1.0);
        if (!(s->half_height >= 0)) luaL_error(L, "%s: field 'length' must be >= 0", fn);
        break;
    case IMP_SHAPE_BOX:
        s->half = v3_scale(impl_field_vec3(L, idx, fn, "size", v3(1, 1, 1)), 0.5);
        s->half = impl_field_vec3(L, idx, fn, "half", s->half);
        if (!(s->half.x > 0 && s->half.y > 0 && s->half.z > 0)) luaL_error(L, "%s: the box's size must be positive", fn);
        break;
    case IMP_SHAPE_HULL: s->points = read_points(L, idx, fn, "points", &s->point_count); break;
    case IMP_SHAPE_MESH:
        s->vertices = read_points(L, idx, fn, "vertices", &s->vertex_count);
        s->triangles = read_triangles(L, idx, fn, &s->triangle_count);
        break;
    case IMP_SHAPE_PLANE:
        s->normal = impl_field_vec3(L, idx, fn, "normal", v3(0, 1, 0));
        if (v3_len(s->normal) < 1e-12) luaL_error(L, "%s: field 'normal' must not be zero", fn);
        s->normal = v3_normalize(s->normal);
        s->offset = v3_dot(s->normal, impl_field_vec3(L, idx, fn, "point", v3(0, 0, 0)));
        break;
    default: break;
    }
    s->density = positive(L, idx, fn, "density", s->density);
    impl_read_material(L, idx, fn, s);
    if (local_pose) {
        s->position = impl_field_vec3(L, idx, fn, "position", v3(0, 0, 0));
        s->orientation = field_orientation(L, idx, fn);
    }
}

static void read_body(lua_State *L, int idx, const char *fn, imp_body_def *d)
{
    d->position = impl_field_vec3(L, idx, fn, "position", d->position);
    d->orientation = field_orientation(L, idx, fn);
    d->velocity = impl_field_vec3(L, idx, fn, "velocity", d->velocity);
    d->angular_velocity = impl_field_vec3(L, idx, fn, "angular_velocity", d->angular_velocity);
    int st = impl_field_bool(L, idx, fn, "static", 0), kin = impl_field_bool(L, idx, fn, "kinematic", 0);
    if (st && kin) luaL_error(L, "%s: a body cannot be both static and kinematic", fn);
    d->motion = st ? IMP_FIXED : kin ? IMP_KINEMATIC : IMP_DYNAMIC;
    d->mass = impl_field_number(L, idx, fn, "mass", 0);
    if (d->mass < 0) luaL_error(L, "%s: field 'mass' must be > 0", fn);
    double g = impl_field_number(L, idx, fn, "group", 1), m = impl_field_number(L, idx, fn, "mask", 4294967295.0);
    if (g < 0 || g > 4294967295.0 || m < 0 || m > 4294967295.0 || g != floor(g) || m != floor(m))
        luaL_error(L, "%s: fields 'group' and 'mask' must be integers in 0 .. 2^32-1 (bit sets)", fn);
    d->group = (uint32_t)g, d->mask = (uint32_t)m;
    impl_field_color(L, idx, fn, "color", d->color);
    d->bullet = impl_field_bool(L, idx, fn, "bullet", 0);
    d->linear_damping = impl_field_number(L, idx, fn, "linear_damping", 0);
    d->angular_damping = impl_field_number(L, idx, fn, "angular_damping", 0);
    if (!(d->linear_damping >= 0 && d->linear_damping <= IMP_MAX_DAMPING))
        luaL_error(L, "%s: field 'linear_damping' must be a number in 0 .. 1e6 (1/s)", fn);
    if (!(d->angular_damping >= 0 && d->angular_damping <= IMP_MAX_DAMPING))
        luaL_error(L, "%s: field 'angular_damping' must be a number in 0 .. 1e6 (1/s)", fn);
}

static int create(lua_State *L, lworld *lw, const char *fn, imp_body_def *d)
{
    imp_id id = imp_body_create(lw->w, d);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: %s", fn, imp_world_error(lw->w));
    impl_pushhandle(L, 1, IMPL_BODY, id);
    return 1;
}

#define BODY_KEYS "position", "orientation", "axis", "angle", "velocity", "angular_velocity", "static", "kinematic", \
                  "mass", "density", "color", "group", "mask", "friction", "static_friction", "restitution", "bullet", \
                  "linear_damping", "angular_damping"

static int make_single(lua_State *L, const char *fn, imp_shape_type type, const char *const *keys)
{
    lworld *lw = impl_checkunlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    impl_check_keys(L, 2, fn, keys);
    imp_body_def d = imp_body_def_default();
    imp_shape_def s = imp_shape_def_default(type);
    read_body(L, 2, fn, &d);
    read_shape(L, 2, fn, &s, false);
    if (type == IMP_SHAPE_MESH) d.motion = IMP_FIXED;
    d.shapes = &s, d.shape_count = 1;
    return create(L, lw, fn, &d);
}

int impl_world_body_sphere(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "radius", NULL};
    return make_single(L, "world:sphere", IMP_SHAPE_SPHERE, keys);
}
int impl_world_body_box(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "size", "half", NULL};
    return make_single(L, "world:box", IMP_SHAPE_BOX, keys);
}
static int world_capsule(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "radius", "length", NULL};
    return make_single(L, "world:capsule", IMP_SHAPE_CAPSULE, keys);
}
static int world_hull(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "points", NULL};
    return make_single(L, "world:hull", IMP_SHAPE_HULL, keys);
}
static int world_mesh(lua_State *L)
{
    static const char *const keys[] = {"position", "orientation", "axis", "angle", "static", "color", "group", "mask",
                                       "vertices", "triangles", "friction", "static_friction", "restitution", NULL};
    return make_single(L, "world:mesh", IMP_SHAPE_MESH, keys);
}

/* world:body{shapes = {{type = "box", size, position, orientation, density}, ...}, ...body fields} */
static int world_body(lua_State *L)
{
    const char *fn = "world:body";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {BODY_KEYS, "shapes", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_body_def d = imp_body_def_default();
    read_body(L, 2, fn, &d);
    if (lua_getfield(L, 2, "shapes") != LUA_TTABLE) return luaL_error(L, "%s: field 'shapes' must be a list of shape tables", fn);
    int shapes_idx = lua_gettop(L);
    int n = (int)lua_rawlen(L, shapes_idx);
    if (n < 1 || n > 4096) return luaL_error(L, "%s: field 'shapes' must list 1 to 4096 shapes", fn);
    imp_shape_def *defs = lua_newuserdatauv(L, sizeof(imp_shape_def) * (size_t)n, 0);
    double density = impl_field_number(L, 2, fn, "density", 1000);
    imp_shape_def material = imp_shape_def_default(IMP_SHAPE_BOX);
    impl_read_material(L, 2, fn, &material); /* the body's material is every shape's default */
    for (int i = 0; i < n; i++) {
        char sfn[64];
        snprintf(sfn, sizeof sfn, "world:body: shapes[%d]", i + 1);
        if (lua_rawgeti(L, shapes_idx, i + 1) != LUA_TTABLE) return luaL_error(L, "%s must be a table", sfn);
        int si = lua_gettop(L);
        static const char *const skeys[] = {"type", "position", "orientation", "axis", "angle", "density", "radius", "length",
                                            "size", "half", "points", "vertices", "triangles", "normal", "point",
                                            "friction", "static_friction", "restitution", NULL};
        impl_check_keys(L, si, sfn, skeys);
        lua_getfield(L, si, "type");
        const char *t = lua_tostring(L, -1);
        int type = -1;
        for (int k = 0; t && k < IMP_SHAPE_TYPE_COUNT; k++)
            if (!strcmp(t, SHAPE_NAMES[k])) type = k;
        if (type < 0) return luaL_error(L, "%s: field 'type' must be \"sphere\", \"capsule\", \"box\", \"hull\", \"mesh\" or \"plane\"", sfn);
        lua_pop(L, 1);
        defs[i] = imp_shape_def_default((imp_shape_type)type);
        defs[i].density = density;
        defs[i].friction = material.friction, defs[i].static_friction = material.static_friction;
        defs[i].restitution = material.restitution;
        read_shape(L, si, sfn, &defs[i], true); /* leaves its buffers on the stack, under the table */
        lua_pushvalue(L, si);
        lua_remove(L, si);
        lua_pop(L, 1);
    }
    d.shapes = defs, d.shape_count = n;
    return create(L, lw, fn, &d);
}

/* ---- the Body type --------------------------------------------------------------------------------------- */

static int b_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_BODY);
    if (!imp_body_valid(h->lw->w, h->id)) return 0;
    imp_body_destroy(impl_handle_unlocked(L, h, "body:destroy")->w, h->id);
    return 0;
}
static int b_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_BODY);
    lua_pushboolean(L, imp_body_valid(h->lw->w, h->id));
    return 1;
}
static int b_apply_force(lua_State *L)
{
    lhandle *h = B(L);
    imp_vec3 f = impl_tovec3(L, 2, "body:apply_force: argument 'force'");
    impl_handle_unlocked(L, h, "body:apply_force");
    if (lua_isnoneornil(L, 3)) imp_body_apply_central_force(h->lw->w, h->id, f);
    else imp_body_apply_force(h->lw->w, h->id, f, impl_tovec3(L, 3, "body:apply_force: argument 'at'"));
    return 0;
}
static int b_apply_torque(lua_State *L)
{
    lhandle *h = B(L);
    imp_body_apply_torque(impl_handle_unlocked(L, h, "body:apply_torque")->w, h->id, impl_tovec3(L, 2, "body:apply_torque: argument 'torque'"));
    return 0;
}
static int b_apply_impulse(lua_State *L)
{
    lhandle *h = B(L);
    imp_vec3 j = impl_tovec3(L, 2, "body:apply_impulse: argument 'impulse'");
    imp_vec3 at = lua_isnoneornil(L, 3) ? imp_body_center_of_mass(h->lw->w, h->id) : impl_tovec3(L, 3, "body:apply_impulse: argument 'at'");
    imp_body_apply_impulse(impl_handle_unlocked(L, h, "body:apply_impulse")->w, h->id, j, at);
    return 0;
}
/* body:move_to(target, dt): a kinematic body's origin reaches target at the end of the next step
 * (its velocity is set to (target - origin) / dt; its angular velocity is kept) */
static int b_move_to(lua_State *L)
{
    lhandle *h = B(L);
    imp_vec3 target = impl_tovec3(L, 2, "body:move_to: argument 'target'");
    double dt = luaL_checknumber(L, 3);
    if (!(dt > 0) || !isfinite(dt)) return luaL_argerror(L, 3, "dt must be > 0");
    imp_world *w = impl_handle_unlocked(L, h, "body:move_to")->w;
    if (imp_body_motion(w, h->id) != IMP_KINEMATIC)
        return luaL_error(L, "body:move_to: the body must be kinematic (set body.kinematic = true)");
    imp_body_set_velocity(w, h->id, v3_scale(v3_sub(target, imp_body_position(w, h->id)), 1.0 / dt));
    return 0;
}

static int b_aabb(lua_State *L)
{
    lhandle *h = B(L);
    imp_vec3 lo, hi;
    imp_body_aabb(h->lw->w, h->id, &lo, &hi);
    impl_pushvec3(L, lo), impl_pushvec3(L, hi);
    return 2;
}
static int b_kinetic_energy(lua_State *L)
{
    lhandle *h = B(L);
    lua_pushnumber(L, imp_body_kinetic_energy(h->lw->w, h->id));
    return 1;
}
/* body:shapes() -> list of {type, position, rotation, radius, length, half, normal, mass, volume, center, inertia, vertices, faces} */
static int b_shapes(lua_State *L)
{
    lhandle *h = B(L);
    int n = imp_body_shape_count(h->lw->w, h->id);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_shape_info s = imp_body_shape(h->lw->w, h->id, i);
        lua_createtable(L, 0, 12);
        lua_pushstring(L, SHAPE_NAMES[s.type]), lua_setfield(L, -2, "type");
        impl_pushvec3(L, s.position), lua_setfield(L, -2, "position");
        push_mat3(L, s.rotation), lua_setfield(L, -2, "rotation");
        if (s.type == IMP_SHAPE_SPHERE || s.type == IMP_SHAPE_CAPSULE) lua_pushnumber(L, s.radius), lua_setfield(L, -2, "radius");
        if (s.type == IMP_SHAPE_CAPSULE) lua_pushnumber(L, 2 * s.half_height), lua_setfield(L, -2, "length");
        if (s.type == IMP_SHAPE_BOX) impl_pushvec3(L, s.half), lua_setfield(L, -2, "half");
        if (s.type == IMP_SHAPE_PLANE) impl_pushvec3(L, s.normal), lua_setfield(L, -2, "normal");
        lua_pushnumber(L, s.mass), lua_setfield(L, -2, "mass");
        lua_pushnumber(L, s.volume), lua_setfield(L, -2, "volume");
        impl_pushvec3(L, s.center), lua_setfield(L, -2, "center");
        push_mat3(L, s.inertia), lua_setfield(L, -2, "inertia");
        if (s.vertex_count) lua_pushinteger(L, s.vertex_count), lua_setfield(L, -2, "vertex_count");
        if (s.type == IMP_SHAPE_HULL) lua_pushinteger(L, s.face_count), lua_setfield(L, -2, "face_count");
        if (s.triangle_count) lua_pushinteger(L, s.triangle_count), lua_setfield(L, -2, "triangle_count");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}
static int b_tostring(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_BODY);
    if (!imp_body_valid(h->lw->w, h->id)) {
        lua_pushliteral(L, "Body (destroyed)");
        return 1;
    }
    imp_vec3 x = imp_body_position(h->lw->w, h->id);
    lua_pushfstring(L, "Body #%d at (%f, %f, %f)", (int)h->id.index, x.x, x.y, x.z);
    return 1;
}

#define VEC_GETTER(name, fn) \
    static int g_##name(lua_State *L) { lhandle *h = B(L); impl_pushvec3(L, fn(h->lw->w, h->id)); return 1; }
VEC_GETTER(position, imp_body_position)
VEC_GETTER(center_of_mass, imp_body_center_of_mass)
VEC_GETTER(velocity, imp_body_velocity)
VEC_GETTER(angular_velocity, imp_body_angular_velocity)
VEC_GETTER(momentum, imp_body_momentum)
VEC_GETTER(angular_momentum, imp_body_angular_momentum)
VEC_GETTER(force, imp_body_force)
VEC_GETTER(torque, imp_body_torque)
static int g_orientation(lua_State *L) { lhandle *h = B(L); impl_pushquat(L, imp_body_orientation(h->lw->w, h->id)); return 1; }
static int g_rotation(lua_State *L) { lhandle *h = B(L); push_mat3(L, quat_to_m3(imp_body_orientation(h->lw->w, h->id))); return 1; }
static int g_inertia(lua_State *L) { lhandle *h = B(L); push_mat3(L, imp_body_inertia(h->lw->w, h->id)); return 1; }
static int g_inertia_body(lua_State *L) { lhandle *h = B(L); push_mat3(L, imp_body_inertia_body(h->lw->w, h->id)); return 1; }
static int g_mass(lua_State *L) { lhandle *h = B(L); lua_pushnumber(L, imp_body_mass(h->lw->w, h->id)); return 1; }
static int g_static(lua_State *L) { lhandle *h = B(L); lua_pushboolean(L, imp_body_motion(h->lw->w, h->id) == IMP_FIXED); return 1; }
static int g_kinematic(lua_State *L) { lhandle *h = B(L); lua_pushboolean(L, imp_body_motion(h->lw->w, h->id) == IMP_KINEMATIC); return 1; }
static int g_group(lua_State *L) { lhandle *h = B(L); lua_pushinteger(L, imp_body_group(h->lw->w, h->id)); return 1; }
static int g_mask(lua_State *L) { lhandle *h = B(L); lua_pushinteger(L, imp_body_mask(h->lw->w, h->id)); return 1; }
static int g_id(lua_State *L) { lhandle *h = B(L); lua_pushinteger(L, h->id.index); return 1; }
static int g_shape_count(lua_State *L) { lhandle *h = B(L); lua_pushinteger(L, imp_body_shape_count(h->lw->w, h->id)); return 1; }
static int g_color(lua_State *L)
{
    lhandle *h = B(L);
    float c[4];
    imp_body_color(h->lw->w, h->id, c);
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) lua_pushnumber(L, c[k]), lua_rawseti(L, -2, k + 1);
    return 1;
}
static int g_data(lua_State *L)
{
    luaL_checkudata(L, 1, IMPL_BODY);
    return impl_push_data(L, 1);
}

static int s_position(lua_State *L) { lhandle *h = B(L); imp_body_set_position(impl_handle_unlocked(L, h, "body.position")->w, h->id, impl_tovec3(L, 2, "body.position")); return 0; }
static int s_orientation(lua_State *L) { lhandle *h = B(L); imp_body_set_orientation(impl_handle_unlocked(L, h, "body.orientation")->w, h->id, impl_toquat(L, 2, "body.orientation")); return 0; }
static int s_velocity(lua_State *L) { lhandle *h = B(L); imp_body_set_velocity(impl_handle_unlocked(L, h, "body.velocity")->w, h->id, impl_tovec3(L, 2, "body.velocity")); return 0; }
static int s_angular_velocity(lua_State *L) { lhandle *h = B(L); imp_body_set_angular_velocity(impl_handle_unlocked(L, h, "body.angular_velocity")->w, h->id, impl_tovec3(L, 2, "body.angular_velocity")); return 0; }
static int set_motion(lua_State *L, const char *what, imp_motion on)
{
    lhandle *h = B(L);
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world *w = impl_handle_unlocked(L, h, what)->w;
    imp_motion m = lua_toboolean(L, 2) ? on : IMP_DYNAMIC;
    imp_body_set_motion(w, h->id, m);
    if (imp_body_motion(w, h->id) != m) return luaL_error(L, "%s: a body with planes or meshes must stay static", what);
    return 0;
}
static int s_mass(lua_State *L)
{
    lhandle *h = B(L);
    double m = luaL_checknumber(L, 2);
    imp_world *w = impl_handle_unlocked(L, h, "body.mass")->w;
    if (!(m > 0) || !isfinite(m)) return luaL_error(L, "body.mass must be a positive number (got %f)", m);
    if (imp_body_motion(w, h->id) == IMP_FIXED) return luaL_error(L, "body.mass: a static body has no mass to set");
    imp_body_set_mass(w, h->id, m);
    return 0;
}
static int s_static(lua_State *L) { return set_motion(L, "body.static", IMP_FIXED); }
static int s_kinematic(lua_State *L) { return set_motion(L, "body.kinematic", IMP_KINEMATIC); }
static uint32_t check_bits(lua_State *L, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, 2);
    if (v < 0 || v > 0xffffffffLL) luaL_error(L, "%s must be an integer in 0 .. 2^32-1", what);
    return (uint32_t)v;
}
static int s_group(lua_State *L) { lhandle *h = B(L); imp_body_set_filter(h->lw->w, h->id, check_bits(L, "body.group"), imp_body_mask(h->lw->w, h->id)); return 0; }
static int s_mask(lua_State *L) { lhandle *h = B(L); imp_body_set_filter(h->lw->w, h->id, imp_body_group(h->lw->w, h->id), check_bits(L, "body.mask")); return 0; }
static int s_color(lua_State *L)
{
    lhandle *h = B(L);
    float c[4];
    impl_tocolor(L, 2, "body.color", c);
    imp_body_set_color(h->lw->w, h->id, c);
    return 0;
}

/* ---- world:bodies() --------------------------------------------------------------------------------------- */
static int world_bodies(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    int n = imp_body_count(lw->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_pushhandle(L, 1, IMPL_BODY, imp_body_id(lw->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:body_state() -> the flat state {x(3) q(4) P(3) L(3), ...} of every body, in world:bodies() order */
static int world_body_state(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    imp_ode_system sys = imp_body_ode(lw->w);
    double *x = lua_newuserdatauv(L, sizeof(double) * (size_t)(sys.dim > 0 ? sys.dim : 1), 0);
    if (sys.dim) sys.get_state(sys.ctx, x);
    lua_createtable(L, sys.dim, 0);
    for (int i = 0; i < sys.dim; i++) lua_pushnumber(L, x[i]), lua_rawseti(L, -2, i + 1);
    return 1;
}

/* world:set_body_state(list): installs it as the ODE solvers do (q renormalized in the state) */
static int world_set_body_state(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world:set_body_state");
    luaL_checktype(L, 2, LUA_TTABLE);
    imp_ode_system sys = imp_body_ode(lw->w);
    if ((int)lua_rawlen(L, 2) != sys.dim)
        return luaL_error(L, "world:set_body_state: argument 'state' must hold %d numbers (13 per body), got %d", sys.dim, (int)lua_rawlen(L, 2));
    double *x = lua_newuserdatauv(L, sizeof(double) * (size_t)(sys.dim > 0 ? sys.dim : 1), 0);
    for (int i = 0; i < sys.dim; i++) {
        lua_rawgeti(L, 2, i + 1);
        int ok;
        x[i] = lua_tonumberx(L, -1, &ok);
        if (!ok || !isfinite(x[i])) return luaL_error(L, "world:set_body_state: state[%d] must be a finite number", i + 1);
        lua_pop(L, 1);
    }
    for (int b = 0; b < sys.dim / 13; b++) {
        const double *q = x + 13 * b + 3;
        if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] < 1e-24)
            return luaL_error(L, "world:set_body_state: body %d has a zero quaternion", b + 1);
    }
    if (sys.dim) sys.set_state(sys.ctx, x);
    imp_body_refresh_all(lw->w);
    return 0;
}

/* ---- impetus.quat ------------------------------------------------------------------------------------------- */
static int q_from_axis_angle(lua_State *L)
{
    imp_vec3 axis = impl_tovec3(L, 1, "quat.from_axis_angle: argument 'axis'");
    if (v3_len(axis) < 1e-12) return luaL_error(L, "quat.from_axis_angle: argument 'axis' must not be zero");
    impl_pushquat(L, quat_from_axis_angle(axis, luaL_checknumber(L, 2)));
    return 1;
}
static int q_to_matrix(lua_State *L) { push_mat3(L, quat_to_m3(impl_toquat(L, 1, "quat.to_matrix: argument 'q'"))); return 1; }
static int q_from_matrix(lua_State *L) { impl_pushquat(L, quat_normalize(quat_from_m3(to_mat3(L, 1, "quat.from_matrix: argument 'm'")))); return 1; }
static int q_mul(lua_State *L) { impl_pushquat(L, quat_mul(impl_toquat(L, 1, "quat.mul: argument 'a'"), impl_toquat(L, 2, "quat.mul: argument 'b'"))); return 1; }
static int q_rotate(lua_State *L) { impl_pushvec3(L, quat_rotate(impl_toquat(L, 1, "quat.rotate: argument 'q'"), impl_tovec3(L, 2, "quat.rotate: argument 'v'"))); return 1; }
static int q_normalize(lua_State *L) { impl_pushquat(L, impl_toquat(L, 1, "quat.normalize: argument 'q'")); return 1; }
static int q_conjugate(lua_State *L) { impl_pushquat(L, quat_conj(impl_toquat(L, 1, "quat.conjugate: argument 'q'"))); return 1; }

int impl_open_quat(lua_State *L)
{
    static const luaL_Reg fns[] = {{"from_axis_angle", q_from_axis_angle}, {"to_matrix", q_to_matrix}, {"from_matrix", q_from_matrix},
                                   {"mul", q_mul}, {"rotate", q_rotate}, {"normalize", q_normalize}, {"conjugate", q_conjugate},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}

void impl_open_body(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", b_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", b_destroy}, {"valid", b_valid}, {"apply_force", b_apply_force},
                                       {"apply_torque", b_apply_torque}, {"apply_impulse", b_apply_impulse}, {"aabb", b_aabb}, {"move_to", b_move_to},
                                       {"kinetic_energy", b_kinetic_energy}, {"shapes", b_shapes}, {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"position", g_position}, {"center_of_mass", g_center_of_mass}, {"orientation", g_orientation}, {"rotation", g_rotation},
        {"velocity", g_velocity}, {"angular_velocity", g_angular_velocity}, {"momentum", g_momentum},
        {"angular_momentum", g_angular_momentum}, {"force", g_force}, {"torque", g_torque}, {"inertia", g_inertia},
        {"inertia_body", g_inertia_body}, {"mass", g_mass}, {"static", g_static}, {"kinematic", g_kinematic},
        {"group", g_group}, {"mask", g_mask}, {"id", g_id}, {"shape_count", g_shape_count}, {"color", g_color},
        {"data", g_data}, {NULL, NULL}};
    static const luaL_Reg setters[] = {
        {"position", s_position}, {"orientation", s_orientation}, {"velocity", s_velocity},
        {"angular_velocity", s_angular_velocity}, {"mass", s_mass}, {"static", s_static}, {"kinematic", s_kinematic}, {"group", s_group},
        {"mask", s_mask}, {"color", s_color}, {NULL, NULL}};
    impl_register_type(L, IMPL_BODY, meta, methods);
    impl_set_accessors(L, IMPL_BODY, getters, setters);
    static const luaL_Reg world_fns[] = {{"capsule", world_capsule}, {"hull", world_hull}, {"mesh", world_mesh},
                                         {"body", world_body}, {"bodies", world_bodies}, {"body_state", world_body_state},
                                         {"set_body_state", world_set_body_state}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
}

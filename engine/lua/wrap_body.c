/* wrap_body.c: the Body type: rigid bodies of one or more shapes (engine/body.c, shape.c), moved by
 * the impulse contact mode (S1) or the exact one (S2). world:sphere/box (without static = true:
 * wrap_world.c sends those here), world:capsule/hull/mesh/body{...}, world:bodies(), and the flat
 * body state world:body_state() / world:set_body_state(x).
 *
 *   body.position, orientation, velocity, angular_velocity, mass, static, kinematic, group, mask,
 *   color, friction, static_friction, restitution, bullet, linear_damping, angular_damping, gravity_scale (settable);
 *   center_of_mass, rotation, momentum, angular_momentum, force, torque, inertia, inertia_body, id,
 *   shape_count, asleep, data
 *   body:destroy(), valid(), apply_force(f [, at]), apply_torque(t), apply_impulse(j [, at]),
 *   move_to(target, dt), aabb(), kinetic_energy(), shapes(), wake() */
#include <stdio.h>

#include "imp_lua.h"

handle_userdata *impl_check_body(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_BODY, imp_body_valid); }

imp_id impl_check_body_id(lua_State *L, int idx, imp_world **world)
{
    handle_userdata *h = impl_check_body(L, idx);
    if (world) *world = h->world->w;
    return h->id;
}

/* ---- reading definitions ------------------------------------------------------------------------------ */

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

/* read a list of points {{x,y,z}, ...} into a GC-managed buffer left on the stack */
static double *read_points(lua_State *L, int idx, const char *fn, const char *key, int *count)
{
    char what[96];
    if (lua_getfield(L, idx, key) != LUA_TTABLE) luaL_error(L, "%s: field '%s' must be a list of points {{x, y, z}, ...}", fn, key);
    int n = (int)lua_rawlen(L, -1);
    if (n > 1000000) luaL_error(L, "%s: field '%s' has too many points", fn, key);
    snprintf(what, sizeof what, "%s: field '%s'", fn, key);
    impl_check_list(L, -1, what, n);
    double *p = lua_newuserdatauv(L, sizeof(double) * 3 * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        snprintf(what, sizeof what, "%s: %s[%d]", fn, key, i + 1);
        v3_store(p + 3 * i, impl_topoint(L, -1, what));
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    *count = n;
    return p;
}

/* triangles {{i, j, k}, ...} of vertex numbers 1 .. vertex_count, 0-based in the buffer left on the stack */
static int *read_triangles(lua_State *L, int idx, const char *fn, int vertex_count, int *count)
{
    if (lua_getfield(L, idx, "triangles") != LUA_TTABLE) luaL_error(L, "%s: field 'triangles' must be a list {{i, j, k}, ...}", fn);
    int n = (int)lua_rawlen(L, -1);
    char what[96];
    snprintf(what, sizeof what, "%s: field 'triangles'", fn);
    impl_check_list(L, -1, what, n);
    int *t = lua_newuserdatauv(L, sizeof(int) * 3 * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        if (lua_rawgeti(L, -2, i + 1) != LUA_TTABLE) luaL_error(L, "%s: triangles[%d] must be {i, j, k}", fn, i + 1);
        snprintf(what, sizeof what, "%s: triangles[%d]", fn, i + 1);
        impl_check_list(L, -1, what, 3);
        for (int k = 0; k < 3; k++) {
            lua_rawgeti(L, -1, k + 1);
            int ok;
            lua_Integer v = lua_tointegerx(L, -1, &ok);
            if (!ok) luaL_error(L, "%s: triangles[%d] must hold three vertex numbers", fn, i + 1);
            if (v < 1 || v > vertex_count) /* before the cast to int: 2^32 + 1 is not vertex 1 */
                luaL_error(L, "%s: mesh triangle %d refers to vertex %I (field 'triangles' numbers the vertices 1..%d)", fn, i + 1, v, vertex_count);
            t[3 * i + k] = (int)(v - 1); /* 1-based in Lua */
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    *count = n;
    return t;
}

/* friction, static_friction, restitution of a definition table into a shape def */
static double material_field(lua_State *L, int idx, const char *fn, const char *key, double def, double hi)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (v == def) return v;
    if (!(v >= 0 && v <= hi)) luaL_error(L, "%s: field '%s' must be a number in 0 .. %d (got %f)", fn, key, (int)hi, v);
    return v;
}

static void read_material(lua_State *L, int idx, const char *fn, imp_shape_def *s)
{
    s->friction = material_field(L, idx, fn, "friction", s->friction, 1e6);
    s->static_friction = material_field(L, idx, fn, "static_friction", s->static_friction, 1e6);
    s->restitution = material_field(L, idx, fn, "restitution", s->restitution, 1);
}

static const char *const SHAPE_NAMES[] = {"sphere", "capsule", "box", "hull", "mesh", "plane", NULL}; /* imp_shape_type's order */

/* the fields of a shape table of world:body{shapes = {...}}, by type (SHAPE_NAMES' order) */
#define SHAPE_COMMON_KEYS "type", "position", "orientation", "axis", "angle", "density", "friction", "static_friction", "restitution", \
                          "sensor", "pre_solve"
static const char *const SHAPE_KEYS[][16] = {
    {SHAPE_COMMON_KEYS, "radius", NULL},            {SHAPE_COMMON_KEYS, "radius", "length", NULL},
    {SHAPE_COMMON_KEYS, "size", "half", NULL},       {SHAPE_COMMON_KEYS, "points", NULL},
    {SHAPE_COMMON_KEYS, "vertices", "triangles", NULL}, {SHAPE_COMMON_KEYS, "normal", "point", NULL}};

/* a size field in the range of inputs (impetus.h) */
static double size_field(lua_State *L, const char *fn, const char *key, double v, bool allow_zero)
{
    char what[96];
    snprintf(what, sizeof what, "%s: field '%s'", fn, key);
    return impl_limit_size(L, v, what, allow_zero);
}

/* the shape part of a def table: type-specific fields; buffers are left on the Lua stack */
static void read_shape(lua_State *L, int idx, const char *fn, imp_shape_def *s, bool local_pose)
{
    switch (s->type) {
    case IMP_SHAPE_SPHERE: s->radius = size_field(L, fn, "radius", impl_field_positive(L, idx, fn, "radius", 0.5, false), false); break;
    case IMP_SHAPE_CAPSULE:
        s->radius = size_field(L, fn, "radius", impl_field_positive(L, idx, fn, "radius", 0.25, false), false);
        s->half_height = 0.5 * impl_field_number(L, idx, fn, "length", 1.0);
        if (!(s->half_height >= 0)) luaL_error(L, "%s: field 'length' must be >= 0", fn);
        size_field(L, fn, "length", 2 * s->half_height, true);
        break;
    case IMP_SHAPE_BOX: {
        const bool half = impl_has_field(L, idx, "half");
        s->half = v3_scale(impl_field_vec3(L, idx, fn, "size", v3(1, 1, 1)), 0.5);
        s->half = impl_field_vec3(L, idx, fn, "half", s->half);
        if (!(s->half.x > 0 && s->half.y > 0 && s->half.z > 0)) luaL_error(L, "%s: the box's size must be positive", fn);
        const double scale = half ? 1 : 2; /* name the field the script gave, in its own numbers */
        size_field(L, fn, half ? "half" : "size", scale * fmin(s->half.x, fmin(s->half.y, s->half.z)), false);
        size_field(L, fn, half ? "half" : "size", scale * fmax(s->half.x, fmax(s->half.y, s->half.z)), false);
        break;
    }
    case IMP_SHAPE_HULL: {
        s->points = read_points(L, idx, fn, "points", &s->point_count);
        /* the hull's extent, the largest side of its points' bounding box, is a size too */
        double extent = 0;
        for (int a = 0; a < 3; a++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int i = 0; i < s->point_count; i++) lo = fmin(lo, s->points[3 * i + a]), hi = fmax(hi, s->points[3 * i + a]);
            if (s->point_count) extent = fmax(extent, hi - lo);
        }
        char what[96];
        snprintf(what, sizeof what, "%s: the extent of field 'points'", fn);
        if (s->point_count >= 4) impl_limit_size(L, extent, what, false); /* (fewer: hull_build says so) */
        break;
    }
    case IMP_SHAPE_MESH:
        s->vertices = read_points(L, idx, fn, "vertices", &s->vertex_count);
        s->triangles = read_triangles(L, idx, fn, s->vertex_count, &s->triangle_count);
        break;
    case IMP_SHAPE_PLANE:
        s->normal = impl_field_vec3(L, idx, fn, "normal", v3(0, 1, 0));
        if (v3_len(s->normal) < 1e-12) luaL_error(L, "%s: field 'normal' must not be zero", fn);
        s->normal = v3_normalize(s->normal);
        s->offset = v3_dot(s->normal, impl_field_position(L, idx, fn, "point", v3(0, 0, 0)));
        break;
    default: break;
    }
    s->density = impl_field_positive(L, idx, fn, "density", s->density, false);
    read_material(L, idx, fn, s);
    s->sensor = impl_field_bool(L, idx, fn, "sensor", s->sensor);
    s->pre_solve = impl_field_bool(L, idx, fn, "pre_solve", s->pre_solve);
    if (local_pose) {
        s->position = impl_field_position(L, idx, fn, "position", v3(0, 0, 0));
        s->orientation = field_orientation(L, idx, fn);
    }
}

static void read_body(lua_State *L, int idx, const char *fn, imp_body_def *d)
{
    d->position = impl_field_position(L, idx, fn, "position", d->position);
    d->orientation = field_orientation(L, idx, fn);
    d->velocity = impl_field_velocity(L, idx, fn, "velocity", d->velocity);
    d->angular_velocity = impl_field_spin(L, idx, fn, "angular_velocity", d->angular_velocity);
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
    d->gravity_scale = impl_field_number(L, idx, fn, "gravity_scale", 1);
    if (!(fabs(d->gravity_scale) <= IMP_MAX_GRAVITY_SCALE)) luaL_error(L, "%s: field 'gravity_scale' must be a number in -1e6 .. 1e6", fn);
}

/* ---- constructors ------------------------------------------------------------------------------------------ */

static int create_body(lua_State *L, world_userdata *world, const char *fn, imp_body_def *d)
{
    imp_id id = imp_body_create(world->w, d);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: %s", fn, imp_world_error(world->w));
    impl_push_handle(L, 1, IMPL_BODY, id);
    return 1;
}

#define BODY_KEYS "position", "orientation", "axis", "angle", "velocity", "angular_velocity", "static", "kinematic", \
                  "mass", "density", "color", "group", "mask", "friction", "static_friction", "restitution", "bullet", \
                  "linear_damping", "angular_damping", "sensor", "pre_solve", "gravity_scale"

/* a body of one shape of the given type: world:sphere{...}, world:box{...}, ... */
static int create_single_shape_body(lua_State *L, const char *fn, imp_shape_type type, const char *const *keys)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    impl_check_keys(L, 2, fn, keys);
    imp_body_def d = imp_body_def_default();
    imp_shape_def s = imp_shape_def_default(type);
    read_body(L, 2, fn, &d);
    read_shape(L, 2, fn, &s, false);
    if (type == IMP_SHAPE_MESH) d.motion = IMP_FIXED;
    d.shapes = &s, d.shape_count = 1;
    return create_body(L, world, fn, &d);
}

int impl_world_body_sphere(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "radius", NULL};
    return create_single_shape_body(L, "world:sphere", IMP_SHAPE_SPHERE, keys);
}
int impl_world_body_box(lua_State *L)
{
    static const char *const keys[] = {BODY_KEYS, "size", "half", NULL};
    return create_single_shape_body(L, "world:box", IMP_SHAPE_BOX, keys);
}
int impl_world_capsule(lua_State *L)
{
    impl_check_arg_count(L, "world:capsule(def)");
    static const char *const keys[] = {BODY_KEYS, "radius", "length", NULL};
    return create_single_shape_body(L, "world:capsule", IMP_SHAPE_CAPSULE, keys);
}
int impl_world_hull(lua_State *L)
{
    impl_check_arg_count(L, "world:hull(def)");
    static const char *const keys[] = {BODY_KEYS, "points", NULL};
    return create_single_shape_body(L, "world:hull", IMP_SHAPE_HULL, keys);
}
int impl_world_mesh(lua_State *L)
{
    impl_check_arg_count(L, "world:mesh(def)");
    static const char *const keys[] = {"position", "orientation", "axis", "angle", "static", "color", "group", "mask",
                                       "vertices", "triangles", "friction", "static_friction", "restitution", "sensor", "pre_solve", NULL};
    return create_single_shape_body(L, "world:mesh", IMP_SHAPE_MESH, keys);
}

/* world:body{shapes = {{type = "box", size, position, orientation, density}, ...}, ...body fields} */
int impl_world_body(lua_State *L)
{
    impl_check_arg_count(L, "world:body(def)");
    const char *fn = "world:body";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {BODY_KEYS, "shapes", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_body_def d = imp_body_def_default();
    read_body(L, 2, fn, &d);
    if (lua_getfield(L, 2, "shapes") != LUA_TTABLE) return luaL_error(L, "%s: field 'shapes' must be a list of shape tables", fn);
    int shapes_idx = lua_gettop(L);
    int n = (int)lua_rawlen(L, shapes_idx);
    if (n < 1 || n > 4096) return luaL_error(L, "%s: field 'shapes' must list 1 to 4096 shapes", fn);
    impl_check_list(L, shapes_idx, "world:body: field 'shapes'", n);
    imp_shape_def *defs = lua_newuserdatauv(L, sizeof(imp_shape_def) * (size_t)n, 0);
    double density = impl_field_number(L, 2, fn, "density", 1000);
    imp_shape_def material = imp_shape_def_default(IMP_SHAPE_BOX);
    read_material(L, 2, fn, &material); /* the body's material is every shape's default */
    material.sensor = impl_field_bool(L, 2, fn, "sensor", 0), material.pre_solve = impl_field_bool(L, 2, fn, "pre_solve", 0);
    for (int i = 0; i < n; i++) {
        char shape_fn[64];
        snprintf(shape_fn, sizeof shape_fn, "world:body: shapes[%d]", i + 1);
        if (lua_rawgeti(L, shapes_idx, i + 1) != LUA_TTABLE) return luaL_error(L, "%s must be a table", shape_fn);
        int shape_idx = lua_gettop(L);
        static const char *const shape_keys[] = {"type", "position", "orientation", "axis", "angle", "density", "radius", "length",
                                                 "size", "half", "points", "vertices", "triangles", "normal", "point",
                                                 "friction", "static_friction", "restitution", "sensor", "pre_solve", NULL};
        impl_check_keys(L, shape_idx, shape_fn, shape_keys);
        char what[96];
        snprintf(what, sizeof what, "%s: field 'type'", shape_fn);
        lua_getfield(L, shape_idx, "type");
        imp_shape_type type = (imp_shape_type)impl_check_option(L, -1, what, SHAPE_NAMES);
        lua_pop(L, 1);
        snprintf(what, sizeof what, "%s (a %s)", shape_fn, SHAPE_NAMES[type]);
        impl_check_keys(L, shape_idx, what, SHAPE_KEYS[type]);
        defs[i] = imp_shape_def_default(type);
        defs[i].density = density;
        defs[i].friction = material.friction, defs[i].static_friction = material.static_friction;
        defs[i].restitution = material.restitution;
        defs[i].sensor = material.sensor, defs[i].pre_solve = material.pre_solve;
        read_shape(L, shape_idx, shape_fn, &defs[i], true); /* leaves its buffers on the stack, under the table */
        lua_pushvalue(L, shape_idx);
        lua_remove(L, shape_idx);
        lua_pop(L, 1);
    }
    d.shapes = defs, d.shape_count = n;
    return create_body(L, world, fn, &d);
}

/* world:bodies() -> every body, in the engine's order */
int impl_world_bodies(lua_State *L)
{
    impl_check_arg_count(L, "world:bodies()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    int n = imp_body_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_push_handle(L, 1, IMPL_BODY, imp_body_id(world->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:body_state() -> the flat state {x(3) q(4) P(3) L(3), ...} of every body, in world:bodies() order */
int impl_world_body_state(lua_State *L)
{
    impl_check_arg_count(L, "world:body_state()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_ode_system sys = imp_body_ode(world->w);
    double *x = lua_newuserdatauv(L, sizeof(double) * (size_t)(sys.dim > 0 ? sys.dim : 1), 0);
    if (sys.dim) sys.get_state(sys.ctx, x);
    lua_createtable(L, sys.dim, 0);
    for (int i = 0; i < sys.dim; i++) lua_pushnumber(L, x[i]), lua_rawseti(L, -2, i + 1);
    return 1;
}

/* world:set_body_state(list): installs it as the ODE solvers do (q renormalized in the state) */
int impl_world_set_body_state(lua_State *L)
{
    impl_check_arg_count(L, "world:set_body_state(state)");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:set_body_state");
    luaL_checktype(L, 2, LUA_TTABLE);
    imp_ode_system sys = imp_body_ode(world->w);
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
        char what[96];
        snprintf(what, sizeof what, "world:set_body_state: body %d's position (state[%d..%d])", b + 1, 13 * b + 1, 13 * b + 3);
        impl_limit_position(L, v3_load(x + 13 * b), what);
    }
    if (sys.dim) sys.set_state(sys.ctx, x);
    imp_body_refresh_all(world->w);
    return 0;
}

/* ---- methods ------------------------------------------------------------------------------------------------- */

static int body_destroy(lua_State *L)
{
    impl_check_arg_count(L, "body:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_BODY);
    if (!impl_handle_valid(h, imp_body_valid)) return 0;
    imp_body_destroy(impl_handle_unlocked(L, h, "body:destroy")->w, h->id);
    return 0;
}
static int body_valid(lua_State *L)
{
    impl_check_arg_count(L, "body:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_BODY);
    lua_pushboolean(L, impl_handle_valid(h, imp_body_valid));
    return 1;
}
static int body_apply_force(lua_State *L)
{
    impl_check_arg_count(L, "body:apply_force(force [, at])");
    handle_userdata *h = impl_check_body(L, 1);
    imp_vec3 f = impl_tovec3(L, 2, "body:apply_force: argument 'force'");
    impl_handle_unlocked(L, h, "body:apply_force");
    if (lua_isnoneornil(L, 3)) imp_body_apply_central_force(h->world->w, h->id, f);
    else imp_body_apply_force(h->world->w, h->id, f, impl_tovec3(L, 3, "body:apply_force: argument 'at'"));
    return 0;
}
static int body_apply_torque(lua_State *L)
{
    impl_check_arg_count(L, "body:apply_torque(torque)");
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_apply_torque(impl_handle_unlocked(L, h, "body:apply_torque")->w, h->id, impl_tovec3(L, 2, "body:apply_torque: argument 'torque'"));
    return 0;
}
static int body_apply_impulse(lua_State *L)
{
    impl_check_arg_count(L, "body:apply_impulse(impulse [, at])");
    handle_userdata *h = impl_check_body(L, 1);
    imp_vec3 j = impl_tovec3(L, 2, "body:apply_impulse: argument 'impulse'");
    imp_vec3 at = lua_isnoneornil(L, 3) ? imp_body_center_of_mass(h->world->w, h->id) : impl_tovec3(L, 3, "body:apply_impulse: argument 'at'");
    imp_body_apply_impulse(impl_handle_unlocked(L, h, "body:apply_impulse")->w, h->id, j, at);
    return 0;
}
/* body:move_to(target, dt): a kinematic body's origin reaches target at the end of the next step
 * (its velocity is set to (target - origin) / dt; its angular velocity is kept) */
static int body_move_to(lua_State *L)
{
    impl_check_arg_count(L, "body:move_to(target, dt)");
    handle_userdata *h = impl_check_body(L, 1);
    imp_vec3 target = impl_topoint(L, 2, "body:move_to: argument 'target'");
    double dt = luaL_checknumber(L, 3);
    if (!(dt > 0) || !isfinite(dt)) return luaL_argerror(L, 3, "dt must be > 0");
    imp_world *w = impl_handle_unlocked(L, h, "body:move_to")->w;
    if (imp_body_motion(w, h->id) != IMP_KINEMATIC)
        return luaL_error(L, "body:move_to: the body must be kinematic (set body.kinematic = true)");
    imp_vec3 v = v3_scale(v3_sub(target, imp_body_position(w, h->id)), 1.0 / dt);
    imp_body_set_velocity(w, h->id, impl_limit_speed(L, v, "body:move_to: the velocity (target - position) / dt"));
    return 0;
}
static int body_aabb(lua_State *L)
{
    impl_check_arg_count(L, "body:aabb()");
    handle_userdata *h = impl_check_body(L, 1);
    imp_vec3 lo, hi;
    imp_body_aabb(h->world->w, h->id, &lo, &hi);
    impl_pushvec3(L, lo), impl_pushvec3(L, hi);
    return 2;
}
static int body_kinetic_energy(lua_State *L)
{
    impl_check_arg_count(L, "body:kinetic_energy()");
    handle_userdata *h = impl_check_body(L, 1);
    lua_pushnumber(L, imp_body_kinetic_energy(h->world->w, h->id));
    return 1;
}
/* body:shapes() -> list of {type, position, rotation, radius, length, half, normal, mass, volume, center, inertia, vertices, faces} */
static int body_shapes(lua_State *L)
{
    impl_check_arg_count(L, "body:shapes()");
    handle_userdata *h = impl_check_body(L, 1);
    int n = imp_body_shape_count(h->world->w, h->id);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_shape_info s = imp_body_shape(h->world->w, h->id, i);
        lua_createtable(L, 0, 12);
        lua_pushstring(L, SHAPE_NAMES[s.type]), lua_setfield(L, -2, "type");
        impl_pushvec3(L, s.position), lua_setfield(L, -2, "position");
        impl_pushmat3(L, s.rotation), lua_setfield(L, -2, "rotation");
        if (s.type == IMP_SHAPE_SPHERE || s.type == IMP_SHAPE_CAPSULE) lua_pushnumber(L, s.radius), lua_setfield(L, -2, "radius");
        if (s.type == IMP_SHAPE_CAPSULE) lua_pushnumber(L, 2 * s.half_height), lua_setfield(L, -2, "length");
        if (s.type == IMP_SHAPE_BOX) impl_pushvec3(L, s.half), lua_setfield(L, -2, "half");
        if (s.type == IMP_SHAPE_PLANE) impl_pushvec3(L, s.normal), lua_setfield(L, -2, "normal");
        lua_pushnumber(L, s.mass), lua_setfield(L, -2, "mass");
        lua_pushnumber(L, s.volume), lua_setfield(L, -2, "volume");
        impl_pushvec3(L, s.center), lua_setfield(L, -2, "center");
        impl_pushmat3(L, s.inertia), lua_setfield(L, -2, "inertia");
        if (s.vertex_count) lua_pushinteger(L, s.vertex_count), lua_setfield(L, -2, "vertex_count");
        if (s.type == IMP_SHAPE_HULL) lua_pushinteger(L, s.face_count), lua_setfield(L, -2, "face_count");
        if (s.triangle_count) lua_pushinteger(L, s.triangle_count), lua_setfield(L, -2, "triangle_count");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}
static int body_wake(lua_State *L)
{
    impl_check_arg_count(L, "body:wake()");
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_wake(h->world->w, h->id);
    return 0;
}
static int body_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_BODY);
    if (!impl_handle_valid(h, imp_body_valid)) {
        lua_pushliteral(L, "Body (destroyed)");
        return 1;
    }
    imp_vec3 x = imp_body_position(h->world->w, h->id);
    lua_pushfstring(L, "Body #%d at (%f, %f, %f)", (int)h->id.index, x.x, x.y, x.z);
    return 1;
}

/* ---- properties ---------------------------------------------------------------------------------------------- */

#define BODY_VEC3_GETTER(name, engine_fn)                                                 \
    static int body_get_##name(lua_State *L)                                              \
    {                                                                                     \
        handle_userdata *h = impl_check_body(L, 1);                                       \
        impl_pushvec3(L, engine_fn(h->world->w, h->id));                                  \
        return 1;                                                                         \
    }
BODY_VEC3_GETTER(position, imp_body_position)
BODY_VEC3_GETTER(center_of_mass, imp_body_center_of_mass)
BODY_VEC3_GETTER(velocity, imp_body_velocity)
BODY_VEC3_GETTER(angular_velocity, imp_body_angular_velocity)
BODY_VEC3_GETTER(momentum, imp_body_momentum)
BODY_VEC3_GETTER(angular_momentum, imp_body_angular_momentum)
BODY_VEC3_GETTER(force, imp_body_force)
BODY_VEC3_GETTER(torque, imp_body_torque)
static int body_get_orientation(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); impl_pushquat(L, imp_body_orientation(h->world->w, h->id)); return 1; }
static int body_get_rotation(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); impl_pushmat3(L, quat_to_m3(imp_body_orientation(h->world->w, h->id))); return 1; }
static int body_get_inertia(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); impl_pushmat3(L, imp_body_inertia(h->world->w, h->id)); return 1; }
static int body_get_inertia_body(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); impl_pushmat3(L, imp_body_inertia_body(h->world->w, h->id)); return 1; }
static int body_get_mass(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushnumber(L, imp_body_mass(h->world->w, h->id)); return 1; }
static int body_get_static(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushboolean(L, imp_body_motion(h->world->w, h->id) == IMP_FIXED); return 1; }
static int body_get_kinematic(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushboolean(L, imp_body_motion(h->world->w, h->id) == IMP_KINEMATIC); return 1; }
static int body_get_group(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushinteger(L, imp_body_group(h->world->w, h->id)); return 1; }
static int body_get_mask(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushinteger(L, imp_body_mask(h->world->w, h->id)); return 1; }
static int body_get_id(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushinteger(L, h->id.index); return 1; }
static int body_get_shape_count(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushinteger(L, imp_body_shape_count(h->world->w, h->id)); return 1; }
static int body_get_bullet(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushboolean(L, imp_body_bullet(h->world->w, h->id)); return 1; }
static int body_get_asleep(lua_State *L) { handle_userdata *h = impl_check_body(L, 1); lua_pushboolean(L, imp_body_asleep(h->world->w, h->id)); return 1; }
static int body_get_color(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    float c[4];
    imp_body_color(h->world->w, h->id, c);
    impl_pushcolor(L, c);
    return 1;
}
static int body_get_data(lua_State *L)
{
    luaL_checkudata(L, 1, IMPL_BODY);
    return impl_push_data(L, 1);
}
/* the material of the first shape: 0 friction, 1 static_friction, 2 restitution */
static int get_material(lua_State *L, int which)
{
    handle_userdata *h = impl_check_body(L, 1);
    double m[3] = {0, 0, 0};
    imp_body_shape_material(h->world->w, h->id, 0, &m[0], &m[1], &m[2]);
    lua_pushnumber(L, m[which]);
    return 1;
}
static int body_get_friction(lua_State *L) { return get_material(L, 0); }
static int body_get_static_friction(lua_State *L) { return get_material(L, 1); }
static int body_get_restitution(lua_State *L) { return get_material(L, 2); }
/* 0 linear_damping, 1 angular_damping */
static int get_damping(lua_State *L, int which)
{
    handle_userdata *h = impl_check_body(L, 1);
    double d[2];
    imp_body_damping(h->world->w, h->id, &d[0], &d[1]);
    lua_pushnumber(L, d[which]);
    return 1;
}
static int body_get_linear_damping(lua_State *L) { return get_damping(L, 0); }
static int body_get_angular_damping(lua_State *L) { return get_damping(L, 1); }

static int body_set_position(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_position(impl_handle_unlocked(L, h, "body.position")->w, h->id, impl_topoint(L, 2, "body.position"));
    return 0;
}
static int body_set_orientation(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_orientation(impl_handle_unlocked(L, h, "body.orientation")->w, h->id, impl_toquat(L, 2, "body.orientation"));
    return 0;
}
static int body_set_velocity(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_velocity(impl_handle_unlocked(L, h, "body.velocity")->w, h->id, impl_tovelocity(L, 2, "body.velocity"));
    return 0;
}
static int body_set_angular_velocity(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_angular_velocity(impl_handle_unlocked(L, h, "body.angular_velocity")->w, h->id, impl_limit_spin(L, impl_tovec3(L, 2, "body.angular_velocity"), "body.angular_velocity"));
    return 0;
}
static int set_motion(lua_State *L, const char *what, imp_motion on)
{
    handle_userdata *h = impl_check_body(L, 1);
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world *w = impl_handle_unlocked(L, h, what)->w;
    imp_motion m = lua_toboolean(L, 2) ? on : IMP_DYNAMIC;
    imp_body_set_motion(w, h->id, m);
    if (imp_body_motion(w, h->id) != m) return luaL_error(L, "%s: a body with planes or meshes must stay static", what);
    return 0;
}
static int body_set_static(lua_State *L) { return set_motion(L, "body.static", IMP_FIXED); }
static int body_set_kinematic(lua_State *L) { return set_motion(L, "body.kinematic", IMP_KINEMATIC); }
static int body_set_mass(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    double m = luaL_checknumber(L, 2);
    imp_world *w = impl_handle_unlocked(L, h, "body.mass")->w;
    if (!(m > 0) || !isfinite(m)) return luaL_error(L, "body.mass must be a positive number (got %f)", m);
    if (imp_body_motion(w, h->id) == IMP_FIXED) return luaL_error(L, "body.mass: a static body has no mass to set");
    imp_body_set_mass(w, h->id, m);
    return 0;
}
/* a collision filter: group and mask are bit sets */
static uint32_t check_bits(lua_State *L, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, 2);
    if (v < 0 || v > 0xffffffffLL) luaL_error(L, "%s must be an integer in 0 .. 2^32-1", what);
    return (uint32_t)v;
}
static int body_set_group(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_filter(h->world->w, h->id, check_bits(L, "body.group"), imp_body_mask(h->world->w, h->id));
    return 0;
}
static int body_set_mask(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_body_set_filter(h->world->w, h->id, imp_body_group(h->world->w, h->id), check_bits(L, "body.mask"));
    return 0;
}
static int body_set_color(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    float c[4];
    impl_tocolor(L, 2, "body.color", c);
    imp_body_set_color(h->world->w, h->id, c);
    return 0;
}
/* sets one material coefficient on every shape (-1: keep) */
static int set_material(lua_State *L, int which, const char *what, double hi)
{
    handle_userdata *h = impl_check_body(L, 1);
    if (imp_world_locked(h->world->w)) return luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0 && v <= hi)) return luaL_error(L, "%s must be a number in 0 .. %d (got %f)", what, (int)hi, v);
    double m[3] = {-1, -1, -1};
    m[which] = v;
    imp_body_set_material(h->world->w, h->id, -1, m[0], m[1], m[2]);
    return 0;
}
static int body_set_friction(lua_State *L) { return set_material(L, 0, "body.friction", 1e6); }
static int body_set_static_friction(lua_State *L) { return set_material(L, 1, "body.static_friction", 1e6); }
static int body_set_restitution(lua_State *L) { return set_material(L, 2, "body.restitution", 1); }
static int body_set_bullet(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_body_set_bullet(h->world->w, h->id, lua_toboolean(L, 2));
    return 0;
}
static int body_set_gravity_scale(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    imp_world *w = impl_handle_unlocked(L, h, "body.gravity_scale")->w;
    int ok = 0;
    const double s = lua_tonumberx(L, 2, &ok);
    if (!ok || !imp_body_set_gravity_scale(w, h->id, s)) return luaL_error(L, "body.gravity_scale must be a number in -1e6 .. 1e6");
    return 0;
}
static int body_get_gravity_scale(lua_State *L)
{
    handle_userdata *h = impl_check_body(L, 1);
    lua_pushnumber(L, imp_body_gravity_scale(h->world->w, h->id));
    return 1;
}
static int set_damping(lua_State *L, int which, const char *what)
{
    handle_userdata *h = impl_check_body(L, 1);
    double v = luaL_checknumber(L, 2), d[2];
    if (!(v >= 0 && v <= IMP_MAX_DAMPING)) return luaL_error(L, "%s must be a number in 0 .. 1e6 (1/s) (got %f)", what, v);
    imp_body_damping(h->world->w, h->id, &d[0], &d[1]);
    d[which] = v;
    imp_body_set_damping(h->world->w, h->id, d[0], d[1]);
    return 0;
}
static int body_set_linear_damping(lua_State *L) { return set_damping(L, 0, "body.linear_damping"); }
static int body_set_angular_damping(lua_State *L) { return set_damping(L, 1, "body.angular_damping"); }

void impl_open_body(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", body_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {
        {"destroy", body_destroy},           {"valid", body_valid},         {"apply_force", body_apply_force},
        {"apply_torque", body_apply_torque}, {"apply_impulse", body_apply_impulse}, {"aabb", body_aabb},
        {"move_to", body_move_to},           {"kinetic_energy", body_kinetic_energy}, {"shapes", body_shapes},
        {"wake", body_wake},                 {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"position", body_get_position},
        {"center_of_mass", body_get_center_of_mass},
        {"orientation", body_get_orientation},
        {"rotation", body_get_rotation},
        {"velocity", body_get_velocity},
        {"angular_velocity", body_get_angular_velocity},
        {"momentum", body_get_momentum},
        {"angular_momentum", body_get_angular_momentum},
        {"force", body_get_force},
        {"torque", body_get_torque},
        {"inertia", body_get_inertia},
        {"inertia_body", body_get_inertia_body},
        {"mass", body_get_mass},
        {"static", body_get_static},
        {"kinematic", body_get_kinematic},
        {"group", body_get_group},
        {"mask", body_get_mask},
        {"id", body_get_id},
        {"shape_count", body_get_shape_count},
        {"color", body_get_color},
        {"data", body_get_data},
        {"friction", body_get_friction},
        {"static_friction", body_get_static_friction},
        {"restitution", body_get_restitution},
        {"bullet", body_get_bullet},
        {"gravity_scale", body_get_gravity_scale},
        {"asleep", body_get_asleep},
        {"linear_damping", body_get_linear_damping},
        {"angular_damping", body_get_angular_damping},
        {NULL, NULL}};
    static const luaL_Reg setters[] = {
        {"position", body_set_position},
        {"orientation", body_set_orientation},
        {"velocity", body_set_velocity},
        {"angular_velocity", body_set_angular_velocity},
        {"mass", body_set_mass},
        {"static", body_set_static},
        {"kinematic", body_set_kinematic},
        {"group", body_set_group},
        {"mask", body_set_mask},
        {"color", body_set_color},
        {"friction", body_set_friction},
        {"static_friction", body_set_static_friction},
        {"restitution", body_set_restitution},
        {"bullet", body_set_bullet},
        {"gravity_scale", body_set_gravity_scale},
        {"linear_damping", body_set_linear_damping},
        {"angular_damping", body_set_angular_damping},
        {NULL, NULL}};
    static const impl_type type = {IMPL_BODY, "body", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

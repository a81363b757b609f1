/* wrap_collider.c: the Collider type: static shapes particles bounce off and bodies touch
 * (engine/particle_collide.c): world:plane{...}, world:sphere{static = true, ...} and
 * world:box{static = true, ...} (wrap_world.c sends the last two here).
 *
 *   collider.position, restitution, friction, color (settable), normal, radius, half, shape
 *   collider:destroy(), collider:valid()
 * A Collider also answers what a static Body answers, so a contact handler may treat the other side
 * alike: velocity and angular_velocity {0, 0, 0}, mass 0, static true, kinematic false, orientation
 * and rotation (a box's; the identity otherwise), center_of_mass (its position), static_friction
 * (its one friction coefficient), asleep and bullet false, id, data; apply_force, apply_torque and
 * apply_impulse check their arguments and move nothing, kinetic_energy() is 0, wake() does nothing.
 * The engine keeps no colour for a collider: the bindings keep it (impl_push_object_extras). */
#include "imp_lua.h"

static const char *const SHAPE_NAMES[] = {"plane", "sphere", "box"}; /* imp_collider_shape's order */

/* the colour a collider has until a script sets one: the greys render/ draws planes and the other
 * colliders with */
static const float GROUND_COLOR[4] = {0.36f, 0.38f, 0.41f, 1}, SURFACE_COLOR[4] = {0.55f, 0.58f, 0.62f, 1};
static const float *default_color(imp_collider_shape shape) { return shape == IMP_COLLIDER_PLANE ? GROUND_COLOR : SURFACE_COLOR; }

static handle_userdata *check_collider(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_COLLIDER, imp_collider_valid); }

/* the colour kept for the collider of the handle at idx (the extras' field "color", 4 numbers) */
static void store_color(lua_State *L, int idx, const float rgba[4])
{
    idx = lua_absindex(L, idx);
    impl_push_object_extras(L, idx);
    impl_pushcolor(L, rgba);
    lua_setfield(L, -2, "color");
    lua_pop(L, 1);
}

/* a new collider's handle, with the colour of the def table at 2 (when there is one) */
static int push_collider(lua_State *L, world_userdata *world, const imp_collider_def *d, const char *fn)
{
    float color[4];
    for (int k = 0; k < 4; k++) color[k] = default_color(d->shape)[k];
    if (lua_istable(L, 2)) impl_field_color(L, 2, fn, "color", color);
    impl_push_handle(L, 1, IMPL_COLLIDER, imp_collider_create(world->w, d));
    store_color(L, -1, color);
    return 1;
}

/* ---- constructors --------------------------------------------------------------------------------------- */

/* rotation by angle (radians) about a unit axis (Rodrigues) */
static imp_mat3 axis_angle(imp_vec3 axis, double angle)
{
    imp_vec3 k = v3_normalize(axis);
    double c = cos(angle), s = sin(angle), t = 1 - c;
    imp_mat3 r = {{{t * k.x * k.x + c, t * k.x * k.y - s * k.z, t * k.x * k.z + s * k.y},
                   {t * k.x * k.y + s * k.z, t * k.y * k.y + c, t * k.y * k.z - s * k.x},
                   {t * k.x * k.z - s * k.y, t * k.y * k.z + s * k.x, t * k.z * k.z + c}}};
    return r;
}

static void read_surface(lua_State *L, const char *fn, imp_collider_def *d)
{
    d->restitution = impl_field_number(L, 2, fn, "restitution", d->restitution);
    d->friction = impl_field_number(L, 2, fn, "friction", d->friction);
    if (d->restitution < 0 || d->restitution > 1) luaL_error(L, "%s: field 'restitution' must be in [0, 1]", fn);
    if (d->friction < 0) luaL_error(L, "%s: field 'friction' must be >= 0", fn);
    d->sensor = impl_field_bool(L, 2, fn, "sensor", d->sensor);
    d->pre_solve = impl_field_bool(L, 2, fn, "pre_solve", d->pre_solve);
}

/* world:plane{point = {0,0,0}, normal = {0,1,0}, restitution, friction, color} */
int impl_world_plane(lua_State *L)
{
    impl_check_arg_count(L, "world:plane([def])");
    const char *fn = "world:plane";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_collider_def d = imp_collider_def_default();
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const keys[] = {"point", "normal", "restitution", "friction", "color", "sensor", "pre_solve", NULL};
        impl_check_keys(L, 2, fn, keys);
        d.position = impl_field_position(L, 2, fn, "point", d.position);
        d.normal = impl_field_vec3(L, 2, fn, "normal", d.normal);
        if (v3_len(d.normal) < 1e-12) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
        read_surface(L, fn, &d);
    }
    return push_collider(L, world, &d, fn);
}

/* world:sphere{static = true, position, radius, restitution, friction, color} */
int impl_world_collider_sphere(lua_State *L)
{
    const char *fn = "world:sphere";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    static const char *const keys[] = {"static", "position", "radius", "restitution", "friction", "color", "sensor", "pre_solve", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_collider_def d = imp_collider_def_default();
    d.shape = IMP_COLLIDER_SPHERE;
    d.position = impl_field_position(L, 2, fn, "position", d.position);
    d.radius = impl_field_number(L, 2, fn, "radius", d.radius);
    if (!(d.radius > 0)) return luaL_error(L, "%s: field 'radius' must be > 0", fn);
    impl_field_size(L, 2, fn, "radius", d.radius, false);
    read_surface(L, fn, &d);
    return push_collider(L, world, &d, fn);
}

/* world:box{static = true, position, size = {w,h,d} | half = {..}, axis, angle, restitution, friction, color} */
int impl_world_collider_box(lua_State *L)
{
    const char *fn = "world:box";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    static const char *const keys[] = {"static", "position", "size", "half", "axis", "angle", "restitution", "friction", "color", "sensor", "pre_solve", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_collider_def d = imp_collider_def_default();
    d.shape = IMP_COLLIDER_BOX;
    d.position = impl_field_position(L, 2, fn, "position", d.position);
    const bool half = impl_has_field(L, 2, "half");
    d.half = v3_scale(impl_field_vec3(L, 2, fn, "size", v3_scale(d.half, 2)), 0.5);
    d.half = impl_field_vec3(L, 2, fn, "half", d.half);
    if (!(d.half.x > 0 && d.half.y > 0 && d.half.z > 0)) return luaL_error(L, "%s: the box's size must be positive", fn);
    const double scale = half ? 1 : 2; /* name the field the script gave, in its own numbers */
    impl_limit_size(L, scale * fmin(d.half.x, fmin(d.half.y, d.half.z)), half ? "world:box: field 'half'" : "world:box: field 'size'", false);
    impl_limit_size(L, scale * fmax(d.half.x, fmax(d.half.y, d.half.z)), half ? "world:box: field 'half'" : "world:box: field 'size'", false);
    imp_vec3 axis = impl_field_vec3(L, 2, fn, "axis", v3(0, 0, 1));
    double angle = impl_field_number(L, 2, fn, "angle", 0);
    if (v3_len(axis) < 1e-12) return luaL_error(L, "%s: field 'axis' must not be zero", fn);
    d.rotation = axis_angle(axis, angle);
    read_surface(L, fn, &d);
    return push_collider(L, world, &d, fn);
}

/* ---- methods ------------------------------------------------------------------------------------------------ */

static int collider_destroy(lua_State *L)
{
    impl_check_arg_count(L, "collider:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_COLLIDER);
    if (!impl_handle_valid(h, imp_collider_valid)) return 0;
    if (imp_world_locked(h->world->w)) return luaL_error(L, "collider:destroy: the world is locked while it steps");
    imp_collider_destroy(h->world->w, h->id);
    return 0;
}
static int collider_valid(lua_State *L)
{
    impl_check_arg_count(L, "collider:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_COLLIDER);
    lua_pushboolean(L, impl_handle_valid(h, imp_collider_valid));
    return 1;
}

/* the forces and impulses a static Body would take: checked like a Body's, and they move nothing */
static int collider_apply_force(lua_State *L)
{
    impl_check_arg_count(L, "collider:apply_force(force [, at])");
    check_collider(L, 1);
    impl_tovec3(L, 2, "collider:apply_force: argument 'force'");
    if (!lua_isnoneornil(L, 3)) impl_tovec3(L, 3, "collider:apply_force: argument 'at'");
    return 0;
}
static int collider_apply_torque(lua_State *L)
{
    impl_check_arg_count(L, "collider:apply_torque(torque)");
    check_collider(L, 1);
    impl_tovec3(L, 2, "collider:apply_torque: argument 'torque'");
    return 0;
}
static int collider_apply_impulse(lua_State *L)
{
    impl_check_arg_count(L, "collider:apply_impulse(impulse [, at])");
    check_collider(L, 1);
    impl_tovec3(L, 2, "collider:apply_impulse: argument 'impulse'");
    if (!lua_isnoneornil(L, 3)) impl_tovec3(L, 3, "collider:apply_impulse: argument 'at'");
    return 0;
}
static int collider_kinetic_energy(lua_State *L)
{
    impl_check_arg_count(L, "collider:kinetic_energy()");
    check_collider(L, 1);
    lua_pushnumber(L, 0);
    return 1;
}
static int collider_wake(lua_State *L)
{
    impl_check_arg_count(L, "collider:wake()");
    check_collider(L, 1);
    return 0;
}

/* ---- properties --------------------------------------------------------------------------------------------- */

static imp_collider_def collider_def(lua_State *L)
{
    handle_userdata *h = check_collider(L, 1);
    return imp_collider_def_of(h->world->w, h->id);
}
static int collider_get_position(lua_State *L) { impl_pushvec3(L, collider_def(L).position); return 1; }
static int collider_get_normal(lua_State *L) { impl_pushvec3(L, collider_def(L).normal); return 1; }
static int collider_get_radius(lua_State *L) { lua_pushnumber(L, collider_def(L).radius); return 1; }
static int collider_get_half(lua_State *L) { impl_pushvec3(L, collider_def(L).half); return 1; }
static int collider_get_restitution(lua_State *L) { lua_pushnumber(L, collider_def(L).restitution); return 1; }
static int collider_get_friction(lua_State *L) { lua_pushnumber(L, collider_def(L).friction); return 1; }
static int collider_get_shape(lua_State *L) { lua_pushstring(L, SHAPE_NAMES[collider_def(L).shape]); return 1; }
static int collider_get_orientation(lua_State *L) { impl_pushquat(L, quat_normalize(quat_from_m3(collider_def(L).rotation))); return 1; }
static int collider_get_rotation(lua_State *L) { impl_pushmat3(L, collider_def(L).rotation); return 1; }
static int collider_get_static_friction(lua_State *L) { lua_pushnumber(L, collider_def(L).friction); return 1; }
static int collider_get_zero_vector(lua_State *L)
{
    check_collider(L, 1);
    impl_pushvec3(L, v3(0, 0, 0));
    return 1;
}
static int collider_get_zero(lua_State *L)
{
    check_collider(L, 1);
    lua_pushnumber(L, 0);
    return 1;
}
static int collider_get_true(lua_State *L)
{
    check_collider(L, 1);
    lua_pushboolean(L, 1);
    return 1;
}
static int collider_get_false(lua_State *L)
{
    check_collider(L, 1);
    lua_pushboolean(L, 0);
    return 1;
}
static int collider_get_id(lua_State *L) { lua_pushinteger(L, check_collider(L, 1)->id.index); return 1; }
static int collider_get_data(lua_State *L)
{
    luaL_checkudata(L, 1, IMPL_COLLIDER);
    return impl_push_data(L, 1);
}
static int collider_get_color(lua_State *L)
{
    handle_userdata *h = check_collider(L, 1);
    impl_push_object_extras(L, 1);
    float c[4];
    for (int k = 0; k < 4; k++) c[k] = default_color(imp_collider_def_of(h->world->w, h->id).shape)[k];
    if (lua_getfield(L, -1, "color") == LUA_TTABLE) impl_tocolor(L, -1, "collider.color", c);
    impl_pushcolor(L, c); /* a copy: changing it changes nothing */
    return 1;
}

/* the collider's def, for a setter of `key` that may not run during a step */
static imp_collider_def collider_def_unlocked(lua_State *L, const char *key, handle_userdata **h)
{
    *h = check_collider(L, 1);
    if (imp_world_locked((*h)->world->w)) luaL_error(L, "collider.%s: the world is locked while it steps", key);
    return imp_collider_def_of((*h)->world->w, (*h)->id);
}
static int collider_set_position(lua_State *L)
{
    handle_userdata *h;
    imp_collider_def d = collider_def_unlocked(L, "position", &h);
    d.position = impl_topoint(L, 2, "collider.position");
    imp_collider_set(h->world->w, h->id, &d);
    return 0;
}
static int collider_set_restitution(lua_State *L)
{
    handle_userdata *h;
    imp_collider_def d = collider_def_unlocked(L, "restitution", &h);
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0 && v <= 1)) return luaL_error(L, "collider.restitution must be in [0, 1]");
    d.restitution = v;
    imp_collider_set(h->world->w, h->id, &d);
    return 0;
}
static int collider_set_color(lua_State *L)
{
    check_collider(L, 1);
    float c[4];
    impl_tocolor(L, 2, "collider.color", c);
    store_color(L, 1, c);
    return 0;
}
static int collider_set_friction(lua_State *L)
{
    handle_userdata *h;
    imp_collider_def d = collider_def_unlocked(L, "friction", &h);
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "collider.friction must be >= 0");
    d.friction = v;
    imp_collider_set(h->world->w, h->id, &d);
    return 0;
}

void impl_open_collider(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"destroy", collider_destroy},           {"valid", collider_valid},
        {"apply_force", collider_apply_force},   {"apply_torque", collider_apply_torque},
        {"apply_impulse", collider_apply_impulse}, {"kinetic_energy", collider_kinetic_energy},
        {"wake", collider_wake},                 {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"position", collider_get_position},
        {"normal", collider_get_normal},
        {"radius", collider_get_radius},
        {"half", collider_get_half},
        {"restitution", collider_get_restitution},
        {"friction", collider_get_friction},
        {"shape", collider_get_shape},
        {"color", collider_get_color},
        {"id", collider_get_id},
        {"data", collider_get_data},
        /* what a static Body answers */
        {"velocity", collider_get_zero_vector},
        {"angular_velocity", collider_get_zero_vector},
        {"momentum", collider_get_zero_vector},
        {"angular_momentum", collider_get_zero_vector},
        {"mass", collider_get_zero},
        {"static", collider_get_true},
        {"kinematic", collider_get_false},
        {"asleep", collider_get_false},
        {"bullet", collider_get_false},
        {"center_of_mass", collider_get_position},
        {"orientation", collider_get_orientation},
        {"rotation", collider_get_rotation},
        {"static_friction", collider_get_static_friction},
        {NULL, NULL}};
    static const luaL_Reg setters[] = {{"position", collider_set_position}, {"restitution", collider_set_restitution},
                                       {"friction", collider_set_friction}, {"color", collider_set_color}, {NULL, NULL}};
    static const impl_type type = {IMPL_COLLIDER, "collider", NULL, methods, getters, setters};
    impl_register_type(L, &type);
}

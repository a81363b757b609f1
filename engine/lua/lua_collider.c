/* lua_collider.c: static colliders for particles: world:plane, world:sphere{static = true},
 * world:box{static = true}, and the Collider type. */
#include <string.h>

#include "imp_lua.h"

#define C(L) impl_checkhandle(L, 1, IMPL_COLLIDER, imp_collider_valid)

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
}

/* static = true: a Collider (particles bounce off it, bodies touch it); otherwise a rigid Body */
static bool is_static(lua_State *L, const char *fn)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    return impl_field_bool(L, 2, fn, "static", 0);
}

/* world:plane{point = {0,0,0}, normal = {0,1,0}, restitution, friction} */
static int world_plane(lua_State *L)
{
    const char *fn = "world:plane";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_collider_def d = imp_collider_def_default();
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const keys[] = {"point", "normal", "restitution", "friction", NULL};
        impl_check_keys(L, 2, fn, keys);
        d.position = impl_field_vec3(L, 2, fn, "point", d.position);
        d.normal = impl_field_vec3(L, 2, fn, "normal", d.normal);
        if (v3_len(d.normal) < 1e-12) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
        read_surface(L, fn, &d);
    }
    impl_pushhandle(L, 1, IMPL_COLLIDER, imp_collider_create(lw->w, &d));
    return 1;
}

/* world:sphere{static = true, position, radius, restitution, friction} */
static int world_sphere(lua_State *L)
{
    const char *fn = "world:sphere";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    if (!is_static(L, fn)) return impl_world_body_sphere(L);
    static const char *const keys[] = {"static", "position", "radius", "restitution", "friction", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_collider_def d = imp_collider_def_default();
    d.shape = IMP_COLLIDER_SPHERE;
    d.position = impl_field_vec3(L, 2, fn, "position", d.position);
    d.radius = impl_field_number(L, 2, fn, "radius", d.radius);
    if (!(d.radius > 0)) return luaL_error(L, "%s: field 'radius' must be > 0", fn);
    read_surface(L, fn, &d);
    impl_pushhandle(L, 1, IMPL_COLLIDER, imp_collider_create(lw->w, &d));
    return 1;
}

/* world:box{static = true, position, size = {w,h,d} | half = {..}, axis, angle, restitution, friction} */
static int world_box(lua_State *L)
{
    const char *fn = "world:box";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    if (!is_static(L, fn)) return impl_world_body_box(L);
    static const char *const keys[] = {"static", "position", "size", "half", "axis", "angle", "restitution", "friction", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_collider_def d = imp_collider_def_default();
    d.shape = IMP_COLLIDER_BOX;
    d.position = impl_field_vec3(L, 2, fn, "position", d.position);
    d.half = v3_scale(impl_field_vec3(L, 2, fn, "size", v3_scale(d.half, 2)), 0.5);
    d.half = impl_field_vec3(L, 2, fn, "half", d.half);
    if (!(d.half.x > 0 && d.half.y > 0 && d.half.z > 0)) return luaL_error(L, "%s: the box's size must be positive", fn);
    imp_vec3 axis = impl_field_vec3(L, 2, fn, "axis", v3(0, 0, 1));
    double angle = impl_field_number(L, 2, fn, "angle", 0);
    if (v3_len(axis) < 1e-12) return luaL_error(L, "%s: field 'axis' must not be zero", fn);
    d.rotation = axis_angle(axis, angle);
    read_surface(L, fn, &d);
    impl_pushhandle(L, 1, IMPL_COLLIDER, imp_collider_create(lw->w, &d));
    return 1;
}

static int c_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_COLLIDER);
    if (!imp_collider_valid(h->lw->w, h->id)) return 0;
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "collider:destroy: the world is locked while it steps");
    imp_collider_destroy(h->lw->w, h->id);
    return 0;
}
static int c_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_COLLIDER);
    lua_pushboolean(L, imp_collider_valid(h->lw->w, h->id));
    return 1;
}

static int c_get(lua_State *L, const char *key)
{
    lhandle *h = C(L);
    imp_collider_def d = imp_collider_def_of(h->lw->w, h->id);
    static const char *const shapes[] = {"plane", "sphere", "box"};
    if (!strcmp(key, "position")) impl_pushvec3(L, d.position);
    else if (!strcmp(key, "normal")) impl_pushvec3(L, d.normal);
    else if (!strcmp(key, "radius")) lua_pushnumber(L, d.radius);
    else if (!strcmp(key, "half")) impl_pushvec3(L, d.half);
    else if (!strcmp(key, "restitution")) lua_pushnumber(L, d.restitution);
    else if (!strcmp(key, "friction")) lua_pushnumber(L, d.friction);
    else lua_pushstring(L, shapes[d.shape]);
    return 1;
}
static int g_position(lua_State *L) { return c_get(L, "position"); }
static int g_normal(lua_State *L) { return c_get(L, "normal"); }
static int g_radius(lua_State *L) { return c_get(L, "radius"); }
static int g_half(lua_State *L) { return c_get(L, "half"); }
static int g_restitution(lua_State *L) { return c_get(L, "restitution"); }
static int g_friction(lua_State *L) { return c_get(L, "friction"); }
static int g_shape(lua_State *L) { return c_get(L, "shape"); }

static int c_set(lua_State *L, const char *key)
{
    lhandle *h = C(L);
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "collider.%s: the world is locked while it steps", key);
    imp_collider_def d = imp_collider_def_of(h->lw->w, h->id);
    if (!strcmp(key, "position")) {
        d.position = impl_tovec3(L, 2, "collider.position");
    } else {
        double v = luaL_checknumber(L, 2);
        if (!strcmp(key, "restitution")) {
            if (!(v >= 0 && v <= 1)) return luaL_error(L, "collider.restitution must be in [0, 1]");
            d.restitution = v;
        } else {
            if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "collider.friction must be >= 0");
            d.friction = v;
        }
    }
    imp_collider_set(h->lw->w, h->id, &d);
    return 0;
}
static int s_position(lua_State *L) { return c_set(L, "position"); }
static int s_restitution(lua_State *L) { return c_set(L, "restitution"); }
static int s_friction(lua_State *L) { return c_set(L, "friction"); }

void impl_open_collider(lua_State *L)
{
    static const luaL_Reg none[] = {{NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", c_destroy}, {"valid", c_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"position", g_position}, {"normal", g_normal},           {"radius", g_radius},
                                       {"half", g_half},         {"restitution", g_restitution}, {"friction", g_friction},
                                       {"shape", g_shape},       {NULL, NULL}};
    static const luaL_Reg setters[] = {{"position", s_position}, {"restitution", s_restitution}, {"friction", s_friction}, {NULL, NULL}};
    impl_register_type(L, IMPL_COLLIDER, none, methods);
    impl_set_accessors(L, IMPL_COLLIDER, getters, setters);
    static const luaL_Reg world_fns[] = {{"plane", world_plane}, {"sphere", world_sphere}, {"box", world_box}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
}

/* wrap_spring.c: the Spring type and world:spring(a, b, {ks, kd, rest}): a damped spring between two
 * particles, or from a particle to a fixed point (S3's Hooke's law with damping).
 *
 *   spring.ks, kd, rest, anchor (settable), a, b (Particles; b is nil for a spring to a point)
 *   spring:destroy(), spring:valid() */
#include "imp_lua.h"

static handle_userdata *check_spring(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_SPRING, imp_spring_valid); }

/* world:spring(a, b, {ks, kd, rest}): b is a Particle or a fixed point {x, y, z} */
int impl_world_spring(lua_State *L)
{
    impl_check_arg_count(L, "world:spring(a, b [, options])");
    const char *fn = "world:spring";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_spring_def def = imp_spring_def_default();
    handle_userdata *a = impl_check_particle(L, 2);
    if (a->world != world) return luaL_argerror(L, 2, "particle 'a' belongs to another world");
    def.a = a->id;
    if (lua_isuserdata(L, 3)) {
        handle_userdata *b = impl_check_particle(L, 3);
        if (b->world != world) return luaL_argerror(L, 3, "particle 'b' belongs to another world");
        if (b->id.index == a->id.index) return luaL_argerror(L, 3, "a spring needs two different particles");
        def.b = b->id;
    } else {
        def.anchor = impl_topoint(L, 3, "world:spring: argument 'b' (a particle or a point)");
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        static const char *const keys[] = {"ks", "kd", "rest", NULL};
        impl_check_keys(L, 4, fn, keys);
        def.ks = impl_field_number(L, 4, fn, "ks", def.ks);
        def.kd = impl_field_number(L, 4, fn, "kd", def.kd);
        def.rest = impl_field_number(L, 4, fn, "rest", def.rest);
        bool rest_given = impl_has_field(L, 4, "rest");
        if (def.ks < 0 || def.kd < 0) return luaL_error(L, "%s: ks and kd must be >= 0", fn);
        if (rest_given && def.rest < 0) return luaL_error(L, "%s: field 'rest' must be >= 0", fn);
    }
    impl_push_handle(L, 1, IMPL_SPRING, imp_spring_create(world->w, &def));
    return 1;
}

static int spring_destroy(lua_State *L)
{
    impl_check_arg_count(L, "spring:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_SPRING);
    if (impl_handle_valid(h, imp_spring_valid)) imp_spring_destroy(impl_handle_unlocked(L, h, "spring:destroy")->w, h->id);
    return 0;
}
static int spring_valid(lua_State *L)
{
    impl_check_arg_count(L, "spring:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_SPRING);
    lua_pushboolean(L, impl_handle_valid(h, imp_spring_valid));
    return 1;
}

static imp_spring_def spring_def(lua_State *L)
{
    handle_userdata *h = check_spring(L, 1);
    return imp_spring_get(h->world->w, h->id);
}
static int spring_get_ks(lua_State *L) { lua_pushnumber(L, spring_def(L).ks); return 1; }
static int spring_get_kd(lua_State *L) { lua_pushnumber(L, spring_def(L).kd); return 1; }
static int spring_get_rest(lua_State *L) { lua_pushnumber(L, spring_def(L).rest); return 1; }
static int spring_get_anchor(lua_State *L) { impl_pushvec3(L, spring_def(L).anchor); return 1; }
static int spring_get_a(lua_State *L)
{
    impl_push_sibling(L, 1, IMPL_PARTICLE, spring_def(L).a);
    return 1;
}
static int spring_get_b(lua_State *L)
{
    imp_spring_def d = spring_def(L);
    if (imp_id_is_null(d.b)) lua_pushnil(L);
    else impl_push_sibling(L, 1, IMPL_PARTICLE, d.b);
    return 1;
}

/* spring.ks / kd / rest = v: a number >= 0 */
static int set_coefficient(lua_State *L, const char *key, double *field_of(imp_spring_def *))
{
    handle_userdata *h = check_spring(L, 1);
    imp_spring_def d = imp_spring_get(h->world->w, h->id);
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "spring.%s must be a number >= 0 (got %f)", key, v);
    *field_of(&d) = v;
    imp_spring_set(impl_handle_unlocked(L, h, "spring")->w, h->id, &d);
    return 0;
}
static double *ks_of(imp_spring_def *d) { return &d->ks; }
static double *kd_of(imp_spring_def *d) { return &d->kd; }
static double *rest_of(imp_spring_def *d) { return &d->rest; }
static int spring_set_ks(lua_State *L) { return set_coefficient(L, "ks", ks_of); }
static int spring_set_kd(lua_State *L) { return set_coefficient(L, "kd", kd_of); }
static int spring_set_rest(lua_State *L) { return set_coefficient(L, "rest", rest_of); }
static int spring_set_anchor(lua_State *L)
{
    handle_userdata *h = check_spring(L, 1);
    imp_spring_def d = imp_spring_get(h->world->w, h->id);
    d.anchor = impl_topoint(L, 2, "spring.anchor");
    imp_spring_set(impl_handle_unlocked(L, h, "spring")->w, h->id, &d);
    return 0;
}

void impl_open_spring(lua_State *L)
{
    static const luaL_Reg methods[] = {{"destroy", spring_destroy}, {"valid", spring_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"ks", spring_get_ks},         {"kd", spring_get_kd}, {"rest", spring_get_rest},
                                       {"anchor", spring_get_anchor}, {"a", spring_get_a},   {"b", spring_get_b},
                                       {NULL, NULL}};
    static const luaL_Reg setters[] = {{"ks", spring_set_ks}, {"kd", spring_set_kd}, {"rest", spring_set_rest},
                                       {"anchor", spring_set_anchor}, {NULL, NULL}};
    static const impl_type type = {IMPL_SPRING, "spring", NULL, methods, getters, setters};
    impl_register_type(L, &type);
}

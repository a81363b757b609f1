/* lua_force.c: world:spring, world:behavior, world:field and their handle types. */
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

/* ---- springs --------------------------------------------------------------------------------------- */

/* world:spring(a, b, {ks, kd, rest}): b is a Particle or a fixed point {x, y, z} */
static int world_spring(lua_State *L)
{
    const char *fn = "world:spring";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_spring_def def = imp_spring_def_default();
    lhandle *a = impl_checkhandle(L, 2, IMPL_PARTICLE, imp_particle_valid);
    if (a->lw != lw) return luaL_argerror(L, 2, "particle 'a' belongs to another world");
    def.a = a->id;
    if (lua_isuserdata(L, 3)) {
        lhandle *b = impl_checkhandle(L, 3, IMPL_PARTICLE, imp_particle_valid);
        if (b->lw != lw) return luaL_argerror(L, 3, "particle 'b' belongs to another world");
        if (b->id.index == a->id.index) return luaL_argerror(L, 3, "a spring needs two different particles");
        def.b = b->id;
    } else {
        def.anchor = impl_tovec3(L, 3, "world:spring: argument 'b' (a particle or a point)");
    }
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        static const char *const keys[] = {"ks", "kd", "rest", NULL};
        impl_check_keys(L, 4, fn, keys);
        def.ks = impl_field_number(L, 4, fn, "ks", def.ks);
        def.kd = impl_field_number(L, 4, fn, "kd", def.kd);
        def.rest = impl_field_number(L, 4, fn, "rest", def.rest);
        lua_getfield(L, 4, "rest");
        bool rest_given = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (def.ks < 0 || def.kd < 0) return luaL_error(L, "%s: ks and kd must be >= 0", fn);
        if (rest_given && def.rest < 0) return luaL_error(L, "%s: field 'rest' must be >= 0", fn);
    }
    impl_pushhandle(L, 1, IMPL_SPRING, imp_spring_create(lw->w, &def));
    return 1;
}

#define S(L) impl_checkhandle(L, 1, IMPL_SPRING, imp_spring_valid)

static int sp_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_SPRING);
    if (imp_spring_valid(h->lw->w, h->id)) imp_spring_destroy(impl_handle_unlocked(L, h, "spring:destroy")->w, h->id);
    return 0;
}
static int sp_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_SPRING);
    lua_pushboolean(L, imp_spring_valid(h->lw->w, h->id));
    return 1;
}
static int sp_get(lua_State *L, const char *key)
{
    lhandle *h = S(L);
    imp_spring_def d = imp_spring_get(h->lw->w, h->id);
    if (!strcmp(key, "ks")) lua_pushnumber(L, d.ks);
    else if (!strcmp(key, "kd")) lua_pushnumber(L, d.kd);
    else if (!strcmp(key, "rest")) lua_pushnumber(L, d.rest);
    else if (!strcmp(key, "anchor")) impl_pushvec3(L, d.anchor);
    else if (!strcmp(key, "a")) { lua_getiuservalue(L, 1, 1); impl_pushhandle(L, -1, IMPL_PARTICLE, d.a); }
    else if (imp_id_is_null(d.b)) lua_pushnil(L);
    else { lua_getiuservalue(L, 1, 1); impl_pushhandle(L, -1, IMPL_PARTICLE, d.b); }
    return 1;
}
static int g_ks(lua_State *L) { return sp_get(L, "ks"); }
static int g_kd(lua_State *L) { return sp_get(L, "kd"); }
static int g_rest(lua_State *L) { return sp_get(L, "rest"); }
static int g_anchor(lua_State *L) { return sp_get(L, "anchor"); }
static int g_a(lua_State *L) { return sp_get(L, "a"); }
static int g_b(lua_State *L) { return sp_get(L, "b"); }

static int sp_set(lua_State *L, const char *key)
{
    lhandle *h = S(L);
    imp_spring_def d = imp_spring_get(h->lw->w, h->id);
    if (!strcmp(key, "anchor")) {
        d.anchor = impl_tovec3(L, 2, "spring.anchor");
    } else {
        double v = luaL_checknumber(L, 2);
        if (!(v >= 0) || !isfinite(v)) return luaL_error(L, "spring.%s must be a number >= 0 (got %f)", key, v);
        if (!strcmp(key, "ks")) d.ks = v;
        else if (!strcmp(key, "kd")) d.kd = v;
        else d.rest = v;
    }
    imp_spring_set(impl_handle_unlocked(L, h, "spring")->w, h->id, &d);
    return 0;
}
static int s_ks(lua_State *L) { return sp_set(L, "ks"); }
static int s_kd(lua_State *L) { return sp_set(L, "kd"); }
static int s_rest(lua_State *L) { return sp_set(L, "rest"); }
static int s_anchor(lua_State *L) { return sp_set(L, "anchor"); }

/* ---- behaviours (energy-function forces, S3 eq. 2) ------------------------------------------------- */

/* Lua behaviour: fn(x1, ..., xn) returns C, g1, ..., gn (gradients dC/dx_i as vectors) */
static int behavior_call(void *user, int n, const double *x, double *C, double *grad)
{
    lcallback *cb = user;
    lua_State *L = cb->lw->L;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    for (int i = 0; i < n; i++) impl_pushvec3(L, v3_load(x + 3 * i));
    if (lua_pcall(L, n, n + 1, base)) {
        impl_callback_failed(cb->lw, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int ok;
    *C = lua_tonumberx(L, base + 1, &ok);
    for (int i = 0; ok && i < n; i++) {
        if (!lua_istable(L, base + 2 + i)) { ok = 0; break; }
        for (int k = 0; k < 3; k++) {
            lua_rawgeti(L, base + 2 + i, k + 1);
            grad[3 * i + k] = lua_tonumberx(L, -1, &ok);
            lua_pop(L, 1);
            if (!ok) break;
        }
    }
    if (!ok) {
        lua_pushfstring(L, "behaviour function must return C and %d gradient vectors {x, y, z}", n);
        impl_callback_failed(cb->lw, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* world:behavior{kind, particles, ks, kd, rest, point, normal, offset, fn} */
static int world_behavior(lua_State *L)
{
    const char *fn = "world:behavior";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"kind", "particles", "ks", "kd", "rest", "point", "normal", "offset", "fn", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_behavior_def def = imp_behavior_def_default();
    static const char *const kinds[] = {"distance", "coincide", "anchor", "plane", "function", NULL};
    lua_getfield(L, 2, "kind");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'kind' is required (distance, coincide, anchor, plane, function)", fn);
    const char *ks = luaL_tolstring(L, -1, NULL);
    int kind = -1;
    for (int i = 0; kinds[i]; i++)
        if (!strcmp(ks, kinds[i])) kind = i;
    if (kind < 0) return luaL_error(L, "%s: field 'kind' must be distance, coincide, anchor, plane or function (got '%s')", fn, ks);
    lua_pop(L, 2);
    def.kind = (imp_behavior_kind)kind;
    if (lua_getfield(L, 2, "particles") != LUA_TTABLE) return luaL_error(L, "%s: field 'particles' must be a list of particles", fn);
    int n = (int)luaL_len(L, -1);
    int need = def.kind == IMP_BEHAVE_ANCHOR || def.kind == IMP_BEHAVE_PLANE ? 1 : def.kind == IMP_BEHAVE_CALLBACK ? n : 2;
    if (n != need || n < 1 || n > IMP_BEHAVE_MAX)
        return luaL_error(L, "%s: kind '%s' takes %d particle(s) (got %d)", fn, kinds[kind],
                          def.kind == IMP_BEHAVE_CALLBACK ? IMP_BEHAVE_MAX : need, n);
    def.n = n;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        lhandle *p = luaL_testudata(L, -1, IMPL_PARTICLE);
        if (!p || !imp_particle_valid(lw->w, p->id) || p->lw != lw)
            return luaL_error(L, "%s: particles[%d] is not a live particle of this world", fn, i + 1);
        def.particles[i] = p->id;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    def.ks = impl_field_number(L, 2, fn, "ks", def.ks);
    def.kd = impl_field_number(L, 2, fn, "kd", def.kd);
    def.rest = impl_field_number(L, 2, fn, "rest", 0);
    def.point = impl_field_vec3(L, 2, fn, "point", v3(0, 0, 0));
    def.normal = v3_normalize(impl_field_vec3(L, 2, fn, "normal", def.normal));
    def.offset = impl_field_number(L, 2, fn, "offset", 0);
    if (def.kind == IMP_BEHAVE_ANCHOR) {
        lua_getfield(L, 2, "point");
        if (lua_isnil(L, -1)) def.point = imp_particle_position(lw->w, def.particles[0]);
        lua_pop(L, 1);
    }
    if (def.kind == IMP_BEHAVE_CALLBACK) {
        if (lua_getfield(L, 2, "fn") != LUA_TFUNCTION) return luaL_error(L, "%s: kind 'function' needs field 'fn', a function", fn);
        lcallback *cb = impl_callback_new(L, lw, -1);
        lua_pop(L, 1);
        def.fn = behavior_call;
        def.user = cb;
        def.release = impl_callback_release;
    }
    impl_pushhandle(L, 1, IMPL_BEHAVIOR, imp_behavior_create(lw->w, &def));
    return 1;
}

static int bh_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_BEHAVIOR);
    if (imp_behavior_valid(h->lw->w, h->id)) imp_behavior_destroy(impl_handle_unlocked(L, h, "behavior:destroy")->w, h->id);
    return 0;
}
static int bh_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_BEHAVIOR);
    lua_pushboolean(L, imp_behavior_valid(h->lw->w, h->id));
    return 1;
}

/* ---- fields ------------------------------------------------------------------------------------------- */

/* fn(x, y, z, vx, vy, vz, t) -> fx, fy, fz (nothing: no force) */
static int field_call(void *user, const double x[3], const double v[3], double t, double f[3])
{
    lcallback *cb = user;
    lua_State *L = cb->lw->L;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    lua_pushnumber(L, x[0]), lua_pushnumber(L, x[1]), lua_pushnumber(L, x[2]);
    lua_pushnumber(L, v[0]), lua_pushnumber(L, v[1]), lua_pushnumber(L, v[2]);
    lua_pushnumber(L, t);
    if (lua_pcall(L, 7, 3, base)) {
        impl_callback_failed(cb->lw, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        int ok = 1;
        f[k] = lua_isnil(L, base + 1 + k) ? 0 : lua_tonumberx(L, base + 1 + k, &ok);
        if (!ok || !isfinite(f[k])) bad = 1;
    }
    if (bad) {
        lua_pushstring(L, "force field must return three finite numbers fx, fy, fz");
        impl_callback_failed(cb->lw, L);
    }
    lua_settop(L, base - 1);
    return bad;
}

/* world:field(fn): fn(x, y, z, vx, vy, vz, t) returns the force fx, fy, fz on each dynamic particle */
static int world_field(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world:field");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    imp_field_def def = {field_call, impl_callback_new(L, lw, 2), impl_callback_release};
    impl_pushhandle(L, 1, IMPL_FIELD, imp_field_create(lw->w, &def));
    return 1;
}

static int fl_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_FIELD);
    if (imp_field_valid(h->lw->w, h->id)) imp_field_destroy(impl_handle_unlocked(L, h, "field:destroy")->w, h->id);
    return 0;
}
static int fl_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_FIELD);
    lua_pushboolean(L, imp_field_valid(h->lw->w, h->id));
    return 1;
}

void impl_open_forces(lua_State *L)
{
    static const luaL_Reg none[] = {{NULL, NULL}};
    static const luaL_Reg sp_methods[] = {{"destroy", sp_destroy}, {"valid", sp_valid}, {NULL, NULL}};
    static const luaL_Reg sp_get_[] = {{"ks", g_ks}, {"kd", g_kd}, {"rest", g_rest}, {"anchor", g_anchor}, {"a", g_a}, {"b", g_b}, {NULL, NULL}};
    static const luaL_Reg sp_set_[] = {{"ks", s_ks}, {"kd", s_kd}, {"rest", s_rest}, {"anchor", s_anchor}, {NULL, NULL}};
    impl_register_type(L, IMPL_SPRING, none, sp_methods);
    impl_set_accessors(L, IMPL_SPRING, sp_get_, sp_set_);
    static const luaL_Reg bh_methods[] = {{"destroy", bh_destroy}, {"valid", bh_valid}, {NULL, NULL}};
    impl_register_type(L, IMPL_BEHAVIOR, none, bh_methods);
    impl_set_accessors(L, IMPL_BEHAVIOR, NULL, NULL);
    static const luaL_Reg fl_methods[] = {{"destroy", fl_destroy}, {"valid", fl_valid}, {NULL, NULL}};
    impl_register_type(L, IMPL_FIELD, none, fl_methods);
    impl_set_accessors(L, IMPL_FIELD, NULL, NULL);
    static const luaL_Reg world_fns[] = {{"spring", world_spring}, {"behavior", world_behavior}, {"field", world_field}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
}

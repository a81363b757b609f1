/* wrap_behavior.c: the Behavior type and world:behavior{...}: a force derived from an energy
 * function C of some particles, f_i = -(ks C + kd Cdot) dC/dx_i (S3, eq. 2). The built-in kinds, or
 * a script's function returning C and the gradients.
 *
 *   behavior:destroy(), behavior:valid() */
#include <stdio.h>

#include "imp_lua.h"

static const char *const KIND_NAMES[] = {"distance", "coincide", "anchor", "plane", "function", NULL}; /* imp_behavior_kind's order */

/* a script behaviour: fn(x1, ..., xn) returns C, g1, ..., gn (gradients dC/dx_i as vectors) */
static int behavior_call(void *user, int n, const double *x, double *C, double *grad)
{
    script_callback *cb = user;
    lua_State *L = cb->world->L;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    for (int i = 0; i < n; i++) impl_pushvec3(L, v3_load(x + 3 * i));
    if (lua_pcall(L, n, n + 1, base)) {
        impl_callback_failed(cb->world, L);
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
        impl_callback_failed(cb->world, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* world:behavior{kind, particles, ks, kd, rest, point, normal, offset, fn} */
int impl_world_behavior(lua_State *L)
{
    impl_check_arg_count(L, "world:behavior(def)");
    const char *fn = "world:behavior";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"kind", "particles", "ks", "kd", "rest", "point", "normal", "offset", "fn", NULL};
    impl_check_keys(L, 2, fn, keys);
    imp_behavior_def def = imp_behavior_def_default();
    if (lua_getfield(L, 2, "kind") == LUA_TNIL) return luaL_error(L, "%s: field 'kind' is required (distance, coincide, anchor, plane, function)", fn);
    int kind = impl_check_option(L, -1, "world:behavior: field 'kind'", KIND_NAMES);
    lua_pop(L, 1);
    def.kind = (imp_behavior_kind)kind;
    /* the fields each kind reads (in KIND_NAMES' order) */
    static const char *const kind_keys[][7] = {{"kind", "particles", "ks", "kd", "rest", NULL},
                                               {"kind", "particles", "ks", "kd", NULL},
                                               {"kind", "particles", "ks", "kd", "point", NULL},
                                               {"kind", "particles", "ks", "kd", "normal", "offset", NULL},
                                               {"kind", "particles", "ks", "kd", "fn", NULL}};
    char kind_fn[64];
    snprintf(kind_fn, sizeof kind_fn, "%s (kind '%s')", fn, KIND_NAMES[kind]);
    impl_check_keys(L, 2, kind_fn, kind_keys[kind]);
    if (lua_getfield(L, 2, "particles") != LUA_TTABLE) return luaL_error(L, "%s: field 'particles' must be a list of particles", fn);
    int n = (int)luaL_len(L, -1);
    impl_check_list(L, -1, "world:behavior: field 'particles'", n);
    int need = def.kind == IMP_BEHAVE_ANCHOR || def.kind == IMP_BEHAVE_PLANE ? 1 : def.kind == IMP_BEHAVE_CALLBACK ? n : 2;
    if (n != need || n < 1 || n > IMP_BEHAVE_MAX)
        return luaL_error(L, "%s: kind '%s' takes %d particle(s) (got %d)", fn, KIND_NAMES[kind],
                          def.kind == IMP_BEHAVE_CALLBACK ? IMP_BEHAVE_MAX : need, n);
    def.n = n;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        handle_userdata *p = luaL_testudata(L, -1, IMPL_PARTICLE);
        if (!p || !imp_particle_valid(world->w, p->id) || p->world != world)
            return luaL_error(L, "%s: particles[%d] is not a live particle of this world", fn, i + 1);
        def.particles[i] = p->id;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    def.ks = impl_field_number(L, 2, fn, "ks", def.ks);
    def.kd = impl_field_number(L, 2, fn, "kd", def.kd);
    def.rest = impl_field_number(L, 2, fn, "rest", 0);
    def.point = impl_field_position(L, 2, fn, "point", v3(0, 0, 0));
    def.normal = v3_normalize(impl_field_vec3(L, 2, fn, "normal", def.normal));
    def.offset = impl_field_number(L, 2, fn, "offset", 0);
    if (def.kind == IMP_BEHAVE_ANCHOR && !impl_has_field(L, 2, "point")) def.point = imp_particle_position(world->w, def.particles[0]);
    if (def.kind == IMP_BEHAVE_CALLBACK) {
        if (lua_getfield(L, 2, "fn") != LUA_TFUNCTION) return luaL_error(L, "%s: kind 'function' needs field 'fn', a function", fn);
        script_callback *cb = impl_callback_new(L, world, -1);
        lua_pop(L, 1);
        def.fn = behavior_call;
        def.user = cb;
        def.release = impl_callback_release;
    }
    impl_push_handle(L, 1, IMPL_BEHAVIOR, imp_behavior_create(world->w, &def));
    return 1;
}

static int behavior_destroy(lua_State *L)
{
    impl_check_arg_count(L, "behavior:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_BEHAVIOR);
    if (impl_handle_valid(h, imp_behavior_valid)) imp_behavior_destroy(impl_handle_unlocked(L, h, "behavior:destroy")->w, h->id);
    return 0;
}
static int behavior_valid(lua_State *L)
{
    impl_check_arg_count(L, "behavior:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_BEHAVIOR);
    lua_pushboolean(L, impl_handle_valid(h, imp_behavior_valid));
    return 1;
}

void impl_open_behavior(lua_State *L)
{
    static const luaL_Reg methods[] = {{"destroy", behavior_destroy}, {"valid", behavior_valid}, {NULL, NULL}};
    static const impl_type type = {IMPL_BEHAVIOR, "behavior", NULL, methods, NULL, NULL};
    impl_register_type(L, &type);
}

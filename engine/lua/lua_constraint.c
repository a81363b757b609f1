/* lua_constraint.c: tinkertoy constraints (engine/tinkertoy.c) for scripts.
 *
 *   world:rod(a, b [, {length, color}])              world:pin(p [, point])
 *   world:wire(p, {center, radius, normal, color})   world:on_plane(p, {point, normal, color})
 *   world:on_line(p, {point, direction, color})      world:constraint{particles, C, color}
 *   world:curve_particle{curve, u, udot, range, mass, radius, color}  -> a Particle
 *   world:constraints()  world:constraint_error()  world:solve_constraints()
 *   world.constraint_ks / constraint_kd / constraint_tolerance / constraint_max_iterations /
 *   constraint_preconditioner (settable), world.constraint_count
 *   Constraint: kind, particles, rows, lambda, value, force, forces, length, point, center, radius,
 *   normal, direction, color, :destroy(), :valid()
 *   Particle (added here): u, udot (curve particles), on_curve */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

static const char *const KIND_NAMES[] = {"pin", "rod", "wire", "plane", "line", "function", NULL};
static const char *const PRECOND_NAMES[] = {"none", "jacobi", "ic", NULL};

/* ---- calling scripts from outside a step ------------------------------------------------------------
 * Creating a curve particle, setting u, reading a constraint's value and solving call the script's
 * functions outside world:step: they run on the calling thread, and their error is raised here. */
typedef struct call_state {
    lua_State *outer;
    int error_ref;
} call_state;

static call_state call_begin(lworld *lw, lua_State *L)
{
    call_state s = {lw->L, lw->error_ref};
    lw->L = L;
    lw->error_ref = LUA_NOREF;
    return s;
}

/* restore; when failed, raise "fn: <the script's error>" (or fallback when there was none) */
static void call_end(lworld *lw, lua_State *L, call_state s, bool failed, const char *fn, const char *fallback)
{
    int ref = lw->error_ref;
    lw->L = s.outer;
    lw->error_ref = s.error_ref;
    if (ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        if (failed) luaL_error(L, "%s: %s", fn, lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
        lua_pop(L, 1);
    }
    if (failed) luaL_error(L, "%s: %s", fn, fallback);
}

/* read a vector result at idx into out[3]; 0 when it is not a finite {x, y, z} */
static int result_vec3(lua_State *L, int idx, double out[3])
{
    if (!lua_istable(L, idx)) return 0;
    for (int k = 0; k < 3; k++) {
        int ok;
        lua_rawgeti(L, idx, k + 1);
        out[k] = lua_tonumberx(L, -1, &ok);
        if (!ok && k == 2 && lua_isnil(L, -1)) out[k] = 0, ok = 1; /* {x, y}: z = 0 */
        lua_pop(L, 1);
        if (!ok || !isfinite(out[k])) return 0;
    }
    return 1;
}

/* C(x1, ..., xn) returns C, or C and the n gradients dC/dx_i */
static int constraint_call(void *user, int n, const double *x, double *C, double *grad, int *have)
{
    lcallback *cb = user;
    lua_State *L = cb->lw->L;
    if (!lua_checkstack(L, n + 4)) return 1;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    for (int i = 0; i < n; i++) impl_pushvec3(L, v3_load(x + 3 * i));
    if (lua_pcall(L, n, LUA_MULTRET, base)) {
        impl_callback_failed(cb->lw, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int nres = lua_gettop(L) - base, ok;
    *C = lua_tonumberx(L, base + 1, &ok);
    ok = ok && isfinite(*C);
    *have = 0;
    if (ok && nres > 1) {
        for (int i = 0; ok && i < n; i++) ok = result_vec3(L, base + 2 + i, grad + 3 * i);
        *have = ok;
    }
    if (!ok) {
        lua_pushfstring(L, "constraint function C must return a finite number C, or C and %d gradient vectors {x, y, z}", n);
        impl_callback_failed(cb->lw, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* curve(u) returns x [, x_u [, x_uu]] */
static int curve_call(void *user, double u, double x[3], double xu[3], double xuu[3], int *have)
{
    lcallback *cb = user;
    lua_State *L = cb->lw->L;
    if (!lua_checkstack(L, 6)) return 1;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    lua_pushnumber(L, u);
    if (lua_pcall(L, 1, 3, base)) {
        impl_callback_failed(cb->lw, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int ok = result_vec3(L, base + 1, x);
    *have = 0;
    if (ok && !lua_isnil(L, base + 2)) ok = result_vec3(L, base + 2, xu), *have |= 1;
    if (ok && !lua_isnil(L, base + 3)) ok = result_vec3(L, base + 3, xuu), *have |= 2;
    if (!ok) {
        lua_pushfstring(L, "curve function must return a finite point {x, y, z} (and optionally x_u, x_uu) for u = %f", u);
        impl_callback_failed(cb->lw, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* ---- constructors --------------------------------------------------------------------------------------- */

static imp_id check_particle(lua_State *L, int idx, lworld *lw, const char *fn, const char *name)
{
    lhandle *p = luaL_testudata(L, idx, IMPL_PARTICLE);
    if (!p) luaL_error(L, "%s: argument '%s' must be a Particle (got %s)", fn, name, luaL_typename(L, idx));
    if (!imp_particle_valid(p->lw->w, p->id)) luaL_error(L, "%s: stale Particle handle for '%s': that object was destroyed", fn, name);
    if (p->lw != lw) luaL_error(L, "%s: particle '%s' belongs to another world", fn, name);
    return p->id;
}

/* the options table at idx (may be absent when `required` is false); unknown keys are errors */
static bool opts(lua_State *L, int idx, const char *fn, const char *const *keys, bool required)
{
    if (lua_isnoneornil(L, idx)) {
        if (required) luaL_error(L, "%s: argument %d must be a table of options", fn, idx - 1);
        return false;
    }
    if (!lua_istable(L, idx)) luaL_error(L, "%s: argument %d must be a table of options (got %s)", fn, idx - 1, luaL_typename(L, idx));
    impl_check_keys(L, idx, fn, keys);
    return true;
}

static bool has_field(lua_State *L, int idx, const char *key)
{
    bool has = lua_getfield(L, idx, key) != LUA_TNIL;
    lua_pop(L, 1);
    return has;
}

static int push_constraint(lua_State *L, lworld *lw, const imp_constraint_def *def, const char *fn)
{
    imp_id id = imp_constraint_create(lw->w, def);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: the constraint could not be made (degenerate geometry?)", fn);
    impl_pushhandle(L, 1, IMPL_CONSTRAINT, id);
    return 1;
}

/* world:rod(a, b [, {length, color}]): |xa - xb| = length (default: the current distance) */
static int world_rod(lua_State *L)
{
    const char *fn = "world:rod";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_ROD;
    def.particles[0] = check_particle(L, 2, lw, fn, "a");
    def.particles[1] = check_particle(L, 3, lw, fn, "b");
    if (def.particles[0].index == def.particles[1].index) return luaL_error(L, "%s: a rod needs two different particles", fn);
    static const char *const keys[] = {"length", "color", NULL};
    if (opts(L, 4, fn, keys, false)) {
        def.length = impl_field_number(L, 4, fn, "length", -1);
        if (has_field(L, 4, "length") && !(def.length > 0)) return luaL_error(L, "%s: field 'length' must be > 0 (got %f)", fn, def.length);
        impl_field_color(L, 4, fn, "color", def.color);
    }
    if (def.length < 0) {
        imp_vec3 d = v3_sub(imp_particle_position(lw->w, def.particles[0]), imp_particle_position(lw->w, def.particles[1]));
        if (!(v3_len(d) > 0)) return luaL_error(L, "%s: the particles are at the same place: give {length = ...}", fn);
    }
    return push_constraint(L, lw, &def, fn);
}

/* world:pin(p [, point]): x = point (default: where p is now) */
static int world_pin(lua_State *L)
{
    const char *fn = "world:pin";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_PIN;
    def.particles[0] = check_particle(L, 2, lw, fn, "p");
    def.point = lua_isnoneornil(L, 3) ? imp_particle_position(lw->w, def.particles[0])
                                      : impl_tovec3(L, 3, "world:pin: argument 'point'");
    return push_constraint(L, lw, &def, fn);
}

/* world:wire(p, {center = {0,0,0}, radius, normal = {0,0,1}, color}): a bead on a circular wire */
static int world_wire(lua_State *L)
{
    const char *fn = "world:wire";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_WIRE;
    def.particles[0] = check_particle(L, 2, lw, fn, "p");
    static const char *const keys[] = {"center", "radius", "normal", "color", NULL};
    if (opts(L, 3, fn, keys, false)) {
        def.center = impl_field_vec3(L, 3, fn, "center", def.center);
        def.normal = impl_field_vec3(L, 3, fn, "normal", def.normal);
        def.radius = impl_field_number(L, 3, fn, "radius", -1);
        if (has_field(L, 3, "radius") && !(def.radius > 0)) return luaL_error(L, "%s: field 'radius' must be > 0 (got %f)", fn, def.radius);
        impl_field_color(L, 3, fn, "color", def.color);
    }
    if (!(v3_len(def.normal) > 0)) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
    if (def.radius < 0) {
        imp_vec3 n = v3_normalize(def.normal), r = v3_sub(imp_particle_position(lw->w, def.particles[0]), def.center);
        if (!(v3_len(v3_mad(r, n, -v3_dot(r, n))) > 0)) return luaL_error(L, "%s: the particle is on the wire's axis: give {radius = ...}", fn);
    }
    return push_constraint(L, lw, &def, fn);
}

/* world:on_plane(p, {normal, point, color}): n . (x - point) = 0, point defaults to where p is */
static int world_on_plane(lua_State *L)
{
    const char *fn = "world:on_plane";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_PLANE;
    def.particles[0] = check_particle(L, 2, lw, fn, "p");
    static const char *const keys[] = {"point", "normal", "color", NULL};
    opts(L, 3, fn, keys, true);
    if (!has_field(L, 3, "normal")) return luaL_error(L, "%s: field 'normal' is required", fn);
    def.normal = impl_field_vec3(L, 3, fn, "normal", def.normal);
    def.point = impl_field_vec3(L, 3, fn, "point", imp_particle_position(lw->w, def.particles[0]));
    impl_field_color(L, 3, fn, "color", def.color);
    if (!(v3_len(def.normal) > 0)) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
    return push_constraint(L, lw, &def, fn);
}

/* world:on_line(p, {direction, point, color}): x on the line point + s direction */
static int world_on_line(lua_State *L)
{
    const char *fn = "world:on_line";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_LINE;
    def.particles[0] = check_particle(L, 2, lw, fn, "p");
    static const char *const keys[] = {"point", "direction", "color", NULL};
    opts(L, 3, fn, keys, true);
    if (!has_field(L, 3, "direction")) return luaL_error(L, "%s: field 'direction' is required", fn);
    def.direction = impl_field_vec3(L, 3, fn, "direction", def.direction);
    def.point = impl_field_vec3(L, 3, fn, "point", imp_particle_position(lw->w, def.particles[0]));
    impl_field_color(L, 3, fn, "color", def.color);
    if (!(v3_len(def.direction) > 0)) return luaL_error(L, "%s: field 'direction' must not be zero", fn);
    return push_constraint(L, lw, &def, fn);
}

/* world:constraint{particles = {p1, ..}, C = function(x1, ..) return C [, g1, ..] end, color} */
static int world_constraint(lua_State *L)
{
    const char *fn = "world:constraint";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    static const char *const keys[] = {"particles", "C", "color", NULL};
    opts(L, 2, fn, keys, true);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_CALLBACK;
    if (lua_getfield(L, 2, "particles") != LUA_TTABLE) return luaL_error(L, "%s: field 'particles' must be a list of particles", fn);
    int n = (int)luaL_len(L, -1);
    if (n < 1 || n > IMP_CONSTRAINT_MAX) return luaL_error(L, "%s: field 'particles' takes 1 to %d particles (got %d)", fn, IMP_CONSTRAINT_MAX, n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        lhandle *p = luaL_testudata(L, -1, IMPL_PARTICLE);
        if (!p || !imp_particle_valid(lw->w, p->id) || p->lw != lw)
            return luaL_error(L, "%s: particles[%d] is not a live particle of this world", fn, i + 1);
        for (int j = 0; j < i; j++)
            if (def.particles[j].index == p->id.index) return luaL_error(L, "%s: particles[%d] is listed twice", fn, i + 1);
        def.particles[i] = p->id;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    def.n = n;
    impl_field_color(L, 2, fn, "color", def.color);
    if (lua_getfield(L, 2, "C") != LUA_TFUNCTION) return luaL_error(L, "%s: field 'C' must be a function C(x1, ...) returning C [, gradients]", fn);
    lcallback *cb = impl_callback_new(L, lw, -1);
    lua_pop(L, 1);
    def.fn = constraint_call;
    def.user = cb;
    def.release = impl_callback_release;
    imp_id id = imp_constraint_create(lw->w, &def);
    if (imp_id_is_null(id)) {
        impl_callback_release(cb);
        return luaL_error(L, "%s: the constraint could not be made", fn);
    }
    impl_pushhandle(L, 1, IMPL_CONSTRAINT, id);
    return 1;
}

/* world:curve_particle{curve = function(u) return x [, x_u, x_uu] end, u, udot, range, mass, radius, color} */
static int world_curve_particle(lua_State *L)
{
    const char *fn = "world:curve_particle";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    static const char *const keys[] = {"curve", "u", "udot", "range", "mass", "radius", "color", NULL};
    opts(L, 2, fn, keys, true);
    imp_curve_def def = imp_curve_def_default();
    def.u = impl_field_number(L, 2, fn, "u", 0);
    def.udot = impl_field_number(L, 2, fn, "udot", 0);
    def.particle.mass = impl_field_number(L, 2, fn, "mass", def.particle.mass);
    def.particle.radius = impl_field_number(L, 2, fn, "radius", def.particle.radius);
    impl_field_color(L, 2, fn, "color", def.particle.color);
    if (!(def.particle.mass > 0)) return luaL_error(L, "%s: field 'mass' must be > 0 (got %f)", fn, def.particle.mass);
    if (!(def.particle.radius >= 0)) return luaL_error(L, "%s: field 'radius' must be >= 0 (got %f)", fn, def.particle.radius);
    if (lua_getfield(L, 2, "range") != LUA_TNIL) {
        int ok1 = 0, ok2 = 0;
        if (lua_istable(L, -1)) {
            lua_rawgeti(L, -1, 1), lua_rawgeti(L, -2, 2);
            def.u_min = lua_tonumberx(L, -2, &ok1), def.u_max = lua_tonumberx(L, -1, &ok2);
            lua_pop(L, 2);
        }
        if (!ok1 || !ok2 || !isfinite(def.u_min) || !isfinite(def.u_max))
            return luaL_error(L, "%s: field 'range' must be {u_min, u_max}", fn);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "curve") != LUA_TFUNCTION) return luaL_error(L, "%s: field 'curve' must be a function curve(u) returning a point {x, y, z}", fn);
    lcallback *cb = impl_callback_new(L, lw, -1);
    lua_pop(L, 1);
    def.fn = curve_call;
    def.user = cb;
    def.release = impl_callback_release;
    call_state cs = call_begin(lw, L);
    imp_id id = imp_curve_particle_create(lw->w, &def);
    if (imp_id_is_null(id)) impl_callback_release(cb);
    call_end(lw, L, cs, imp_id_is_null(id), fn, "the curve gave no finite point and tangent at u");
    impl_pushhandle(L, 1, IMPL_PARTICLE, id);
    return 1;
}

static int world_constraints(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    int n = imp_constraint_count(lw->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_pushhandle(L, 1, IMPL_CONSTRAINT, imp_constraint_id(lw->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:constraint_error(): the largest |C| over all rows, now */
static int world_constraint_error(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    call_state cs = call_begin(lw, L);
    double e = imp_world_constraint_error(lw->w);
    call_end(lw, L, cs, e < 0, "world:constraint_error", "a constraint function failed");
    lua_pushnumber(L, e);
    return 1;
}

/* world:solve_constraints(): lambda and the constraint forces at the present state, without stepping */
static int world_solve_constraints(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world:solve_constraints");
    call_state cs = call_begin(lw, L);
    imp_status st = imp_world_solve_constraints(lw->w);
    call_end(lw, L, cs, st != IMP_OK, "world:solve_constraints", imp_world_error(lw->w));
    return 0;
}

/* ---- world settings ---------------------------------------------------------------------------------------- */

static int get_ks(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_checkworld(L, 1)->w).ks); return 1; }
static int get_kd(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_checkworld(L, 1)->w).kd); return 1; }
static int get_tol(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_checkworld(L, 1)->w).tolerance); return 1; }
static int get_maxit(lua_State *L) { lua_pushinteger(L, imp_world_constraint_settings(impl_checkworld(L, 1)->w).max_iterations); return 1; }
static int get_precond(lua_State *L)
{
    lua_pushstring(L, PRECOND_NAMES[imp_world_constraint_settings(impl_checkworld(L, 1)->w).preconditioner]);
    return 1;
}
static int get_count(lua_State *L) { lua_pushinteger(L, imp_constraint_count(impl_checkworld(L, 1)->w)); return 1; }

static int set_setting(lua_State *L, const char *key)
{
    char what[64];
    snprintf(what, sizeof what, "world.%s", key);
    lworld *lw = impl_checkunlocked(L, 1, what);
    imp_constraint_settings s = imp_world_constraint_settings(lw->w);
    if (!strcmp(key, "constraint_preconditioner")) {
        const char *name = lua_tostring(L, 2);
        int k = -1;
        for (int i = 0; name && PRECOND_NAMES[i]; i++)
            if (!strcmp(name, PRECOND_NAMES[i])) k = i;
        if (k < 0) return luaL_error(L, "%s must be \"ic\", \"jacobi\" or \"none\" (got %s)", what, name ? name : luaL_typename(L, 2));
        s.preconditioner = (imp_preconditioner)k;
    } else {
        int ok;
        double v = lua_tonumberx(L, 2, &ok);
        if (!ok || !isfinite(v)) return luaL_error(L, "%s must be a number (got %s)", what, luaL_typename(L, 2));
        if (!strcmp(key, "constraint_ks") || !strcmp(key, "constraint_kd")) {
            if (v < 0) return luaL_error(L, "%s must be >= 0 (got %f)", what, v);
            *(!strcmp(key, "constraint_ks") ? &s.ks : &s.kd) = v;
        } else if (!strcmp(key, "constraint_tolerance")) {
            if (!(v > 0)) return luaL_error(L, "%s must be > 0 (got %f)", what, v);
            s.tolerance = v;
        } else {
            if (v < 0 || v != (int)v) return luaL_error(L, "%s must be a whole number >= 0 (0: automatic)", what);
            s.max_iterations = (int)v;
        }
    }
    imp_world_set_constraint_settings(lw->w, &s);
    return 0;
}
static int set_ks(lua_State *L) { return set_setting(L, "constraint_ks"); }
static int set_kd(lua_State *L) { return set_setting(L, "constraint_kd"); }
static int set_tol(lua_State *L) { return set_setting(L, "constraint_tolerance"); }
static int set_maxit(lua_State *L) { return set_setting(L, "constraint_max_iterations"); }
static int set_precond(lua_State *L) { return set_setting(L, "constraint_preconditioner"); }

/* ---- the Constraint type ----------------------------------------------------------------------------------- */

#define K(L) impl_checkhandle(L, 1, IMPL_CONSTRAINT, imp_constraint_valid)

/* a number for one-row constraints, a list for the others */
static void push_rows(lua_State *L, const double *v, int rows)
{
    if (rows == 1) {
        lua_pushnumber(L, v[0]);
        return;
    }
    lua_createtable(L, rows, 0);
    for (int k = 0; k < rows; k++) lua_pushnumber(L, v[k]), lua_rawseti(L, -2, k + 1);
}

static int c_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    if (!imp_constraint_valid(h->lw->w, h->id)) return 0;
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "constraint:destroy: the world is locked while it steps; change it in update");
    imp_constraint_destroy(h->lw->w, h->id);
    return 0;
}

static int c_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    lua_pushboolean(L, imp_constraint_valid(h->lw->w, h->id));
    return 1;
}

static int c_tostring(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    if (!imp_constraint_valid(h->lw->w, h->id)) lua_pushliteral(L, "Constraint (destroyed)");
    else lua_pushfstring(L, "Constraint #%d (%s)", (int)h->id.index, KIND_NAMES[imp_constraint_get(h->lw->w, h->id).kind]);
    return 1;
}

static int g_kind(lua_State *L) { lhandle *h = K(L); lua_pushstring(L, KIND_NAMES[imp_constraint_get(h->lw->w, h->id).kind]); return 1; }
static int g_rows(lua_State *L) { lhandle *h = K(L); lua_pushinteger(L, imp_constraint_rows(h->lw->w, h->id)); return 1; }

static int g_particles(lua_State *L)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    lua_getiuservalue(L, 1, 1);
    lua_createtable(L, d.n, 0);
    for (int i = 0; i < d.n; i++) {
        impl_pushhandle(L, -2, IMPL_PARTICLE, d.particles[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int g_lambda(lua_State *L)
{
    lhandle *h = K(L);
    double l[3];
    push_rows(L, l, imp_constraint_lambda(h->lw->w, h->id, l));
    return 1;
}

static int g_value(lua_State *L)
{
    lhandle *h = K(L);
    double C[3];
    call_state cs = call_begin(h->lw, L);
    int rows = imp_constraint_value(h->lw->w, h->id, C);
    call_end(h->lw, L, cs, rows < 0, "constraint.value", "the constraint function failed");
    push_rows(L, C, rows);
    return 1;
}

static int g_force(lua_State *L) { lhandle *h = K(L); impl_pushvec3(L, imp_constraint_force(h->lw->w, h->id, 0)); return 1; }

static int g_forces(lua_State *L)
{
    lhandle *h = K(L);
    int n = imp_constraint_get(h->lw->w, h->id).n;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) impl_pushvec3(L, imp_constraint_force(h->lw->w, h->id, i)), lua_rawseti(L, -2, i + 1);
    return 1;
}

/* kind-specific parameters: nil for the kinds that have none */
static int g_param(lua_State *L, const char *key)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    imp_constraint_kind k = d.kind;
    if (!strcmp(key, "length") && k == IMP_CONSTRAINT_ROD) lua_pushnumber(L, d.length);
    else if (!strcmp(key, "radius") && k == IMP_CONSTRAINT_WIRE) lua_pushnumber(L, d.radius);
    else if (!strcmp(key, "center") && k == IMP_CONSTRAINT_WIRE) impl_pushvec3(L, d.center);
    else if (!strcmp(key, "normal") && (k == IMP_CONSTRAINT_WIRE || k == IMP_CONSTRAINT_PLANE)) impl_pushvec3(L, d.normal);
    else if (!strcmp(key, "direction") && k == IMP_CONSTRAINT_LINE) impl_pushvec3(L, d.direction);
    else if (!strcmp(key, "point") && (k == IMP_CONSTRAINT_PIN || k == IMP_CONSTRAINT_PLANE || k == IMP_CONSTRAINT_LINE)) impl_pushvec3(L, d.point);
    else lua_pushnil(L);
    return 1;
}
static int g_length(lua_State *L) { return g_param(L, "length"); }
static int g_radius(lua_State *L) { return g_param(L, "radius"); }
static int g_center(lua_State *L) { return g_param(L, "center"); }
static int g_normal(lua_State *L) { return g_param(L, "normal"); }
static int g_direction(lua_State *L) { return g_param(L, "direction"); }
static int g_point(lua_State *L) { return g_param(L, "point"); }

static int g_color(lua_State *L)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) lua_pushnumber(L, d.color[k]), lua_rawseti(L, -2, k + 1);
    return 1;
}

static int s_length(lua_State *L)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    if (d.kind != IMP_CONSTRAINT_ROD) return luaL_error(L, "constraint.length: only a rod has a length");
    double len = luaL_checknumber(L, 2);
    if (!(len > 0) || !isfinite(len)) return luaL_error(L, "constraint.length must be > 0 (got %f)", len);
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "constraint.length: the world is locked while it steps; change it in update");
    d.length = len;
    imp_constraint_set(h->lw->w, h->id, &d);
    return 0;
}

static int s_point(lua_State *L)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    if (d.kind != IMP_CONSTRAINT_PIN) return luaL_error(L, "constraint.point: only a pin's point can be moved");
    d.point = impl_tovec3(L, 2, "constraint.point");
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "constraint.point: the world is locked while it steps; change it in update");
    imp_constraint_set(h->lw->w, h->id, &d);
    return 0;
}

static int s_color(lua_State *L)
{
    lhandle *h = K(L);
    imp_constraint_def d = imp_constraint_get(h->lw->w, h->id);
    impl_tocolor(L, 2, "constraint.color", d.color);
    imp_constraint_set(h->lw->w, h->id, &d);
    return 0;
}

/* ---- curve particles: fields added to Particle ------------------------------------------------------------- */

static lhandle *curve_particle(lua_State *L, const char *what)
{
    lhandle *h = impl_checkhandle(L, 1, IMPL_PARTICLE, imp_particle_valid);
    if (!imp_particle_on_curve(h->lw->w, h->id)) luaL_error(L, "%s: this particle is not on a curve (make one with world:curve_particle)", what);
    return h;
}

static int p_get_u(lua_State *L)
{
    lhandle *h = impl_checkhandle(L, 1, IMPL_PARTICLE, imp_particle_valid);
    if (imp_particle_on_curve(h->lw->w, h->id)) lua_pushnumber(L, imp_curve_particle_u(h->lw->w, h->id));
    else lua_pushnil(L);
    return 1;
}

static int p_get_udot(lua_State *L)
{
    lhandle *h = impl_checkhandle(L, 1, IMPL_PARTICLE, imp_particle_valid);
    if (imp_particle_on_curve(h->lw->w, h->id)) lua_pushnumber(L, imp_curve_particle_udot(h->lw->w, h->id));
    else lua_pushnil(L);
    return 1;
}

static int p_get_on_curve(lua_State *L)
{
    lhandle *h = impl_checkhandle(L, 1, IMPL_PARTICLE, imp_particle_valid);
    lua_pushboolean(L, imp_particle_on_curve(h->lw->w, h->id));
    return 1;
}

static int p_set_curve(lua_State *L, bool is_u)
{
    const char *what = is_u ? "particle.u" : "particle.udot";
    lhandle *h = curve_particle(L, what);
    int ok;
    double v = lua_tonumberx(L, 2, &ok);
    if (!ok || !isfinite(v)) return luaL_error(L, "%s must be a finite number (got %s)", what, luaL_typename(L, 2));
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    double u = imp_curve_particle_u(h->lw->w, h->id), ud = imp_curve_particle_udot(h->lw->w, h->id);
    call_state cs = call_begin(h->lw, L);
    imp_status st = imp_curve_particle_set(h->lw->w, h->id, is_u ? v : u, is_u ? ud : v);
    call_end(h->lw, L, cs, st != IMP_OK, what, "the curve function failed");
    return 0;
}
static int p_set_u(lua_State *L) { return p_set_curve(L, true); }
static int p_set_udot(lua_State *L) { return p_set_curve(L, false); }

/* add getters and setters to a type registered elsewhere */
static void add_accessors(lua_State *L, const char *type, const luaL_Reg *getters, const luaL_Reg *setters)
{
    luaL_getmetatable(L, type);
    lua_getfield(L, -1, "getters");
    luaL_setfuncs(L, getters, 0);
    lua_pop(L, 1);
    lua_getfield(L, -1, "setters");
    luaL_setfuncs(L, setters, 0);
    lua_pop(L, 2);
}

void impl_open_constraint(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", c_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", c_destroy}, {"valid", c_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"kind", g_kind},     {"rows", g_rows},     {"particles", g_particles}, {"lambda", g_lambda},
        {"value", g_value},   {"force", g_force},   {"forces", g_forces},       {"length", g_length},
        {"radius", g_radius}, {"center", g_center}, {"normal", g_normal},       {"direction", g_direction},
        {"point", g_point},   {"color", g_color},   {NULL, NULL}};
    static const luaL_Reg setters[] = {{"length", s_length}, {"point", s_point}, {"color", s_color}, {NULL, NULL}};
    impl_register_type(L, IMPL_CONSTRAINT, meta, methods);
    impl_set_accessors(L, IMPL_CONSTRAINT, getters, setters);

    static const luaL_Reg world_fns[] = {
        {"rod", world_rod},
        {"pin", world_pin},
        {"wire", world_wire},
        {"on_plane", world_on_plane},
        {"on_line", world_on_line},
        {"constraint", world_constraint},
        {"curve_particle", world_curve_particle},
        {"constraints", world_constraints},
        {"constraint_error", world_constraint_error},
        {"solve_constraints", world_solve_constraints},
        {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
    static const luaL_Reg world_get[] = {
        {"constraint_ks", get_ks}, {"constraint_kd", get_kd}, {"constraint_tolerance", get_tol},
        {"constraint_max_iterations", get_maxit}, {"constraint_preconditioner", get_precond},
        {"constraint_count", get_count}, {NULL, NULL}};
    static const luaL_Reg world_set[] = {
        {"constraint_ks", set_ks}, {"constraint_kd", set_kd}, {"constraint_tolerance", set_tol},
        {"constraint_max_iterations", set_maxit}, {"constraint_preconditioner", set_precond}, {NULL, NULL}};
    add_accessors(L, IMPL_WORLD, world_get, world_set);
    static const luaL_Reg particle_get[] = {{"u", p_get_u}, {"udot", p_get_udot}, {"on_curve", p_get_on_curve}, {NULL, NULL}};
    static const luaL_Reg particle_set[] = {{"u", p_set_u}, {"udot", p_set_udot}, {NULL, NULL}};
    add_accessors(L, IMPL_PARTICLE, particle_get, particle_set);
}

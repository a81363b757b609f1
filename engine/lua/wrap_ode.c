/* wrap_ode.c: impetus.ode, the engine's ODE solvers on any state a script defines.
 *
 *   impetus.ode.step(f, x, t, h [, method])          -> x(t + h)
 *   impetus.ode.solve(f, x0, t0, t1 [, opts])        -> x(t1), info
 *   impetus.ode.adapt_factor(err, tol, order)        -> (tol / err)^(1 / (order + 1))
 *   impetus.ode.order(method)                        -> 1, 2, 4 (implicit: 1)
 *
 * method "implicit" is linearized backward Euler with a finite-difference Jacobian and a dense
 * solve (implicit.c): for small stiff systems.
 *
 * f(x, t) takes the state as a list of numbers and returns dx/dt as a list of the same length.
 * An error inside f stops the solve and is raised with f's traceback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

typedef struct lode {
    lua_State *L;
    int fn, handler; /* stack indices of f and of the traceback handler */
    int dim;
    double *x;       /* the state the solver reads and installs */
} lode;

static void lode_get(void *ctx, double *x) { lode *o = ctx; memcpy(x, o->x, sizeof(double) * (size_t)o->dim); }
static void lode_set(void *ctx, const double *x) { lode *o = ctx; memcpy(o->x, x, sizeof(double) * (size_t)o->dim); }

static void push_state(lua_State *L, const double *x, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) lua_pushnumber(L, x[i]), lua_rawseti(L, -2, i + 1);
}

/* calls f(x, t); on failure leaves the error message on the stack and returns 1 */
static int lode_deriv(void *ctx, double t, const double *x, double *dxdt)
{
    lode *o = ctx;
    lua_State *L = o->L;
    lua_pushvalue(L, o->fn);
    push_state(L, x, o->dim);
    lua_pushnumber(L, t);
    if (lua_pcall(L, 2, 1, o->handler)) return 1;
    if (!lua_istable(L, -1) || (int)lua_rawlen(L, -1) != o->dim) {
        lua_pushfstring(L, "impetus.ode: f(x, t) must return a list of %d numbers (got %s)", o->dim, luaL_typename(L, -1));
        return 1;
    }
    for (int i = 0; i < o->dim; i++) {
        lua_rawgeti(L, -1, i + 1);
        int ok;
        dxdt[i] = lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) {
            lua_pushfstring(L, "impetus.ode: f(x, t)[%d] is not a number", i + 1);
            return 1;
        }
    }
    lua_pop(L, 1);
    return 0;
}

/* reads the list at idx into a new state buffer owned by a userdata left on the stack */
static double *check_state(lua_State *L, int idx, const char *what, int *dim)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)lua_rawlen(L, idx);
    if (n < 1) luaL_error(L, "%s must be a non-empty list of numbers", what);
    double *x = lua_newuserdatauv(L, sizeof(double) * (size_t)n, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int ok;
        x[i] = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s[%d] must be a number (got %s)", what, i + 1, luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    *dim = n;
    return x;
}

/* the method names in imp_method's order, as imp_method_name gives them */
static const char *const *method_names(void)
{
    static const char *names[IMP_METHOD_COUNT + 1];
    if (!names[0])
        for (int k = 0; k < IMP_METHOD_COUNT; k++) names[k] = imp_method_name((imp_method)k);
    return names;
}

/* an integrator name: "euler", "midpoint", "rk4", "adaptive" or "implicit" (also world.integrator's) */
imp_method impl_check_method(lua_State *L, int idx, const char *what)
{
    return (imp_method)impl_check_option(L, idx, what, method_names());
}

/* runs solver work, then frees it and raises the callback's error if there was one */
static void finish(lua_State *L, imp_ode_solver *s, int rc)
{
    imp_ode_solver_free(s);
    if (rc == IMP_ODE_SINGULAR)
        luaL_error(L, "impetus.ode: backward Euler met a singular or non-finite matrix I - h df/dx (does f return finite numbers? is h too large for f?)");
    if (rc == IMP_ODE_SUBSTEPS)
        luaL_error(L, "impetus.ode.solve: the adaptive method would need more than max_steps (%d) steps to reach t1: the "
                      "tolerance is out of reach (a stiff f? try a larger tol, base = \"implicit\", or a larger max_steps)", (int)s->max_substeps);
    if (rc) {
        const char *msg = lua_tostring(L, -1);
        luaL_error(L, "impetus.ode: f failed:\n%s", msg ? msg : "(error object is not a string)");
    }
}

static int ode_step(lua_State *L)
{
    impl_check_arg_count(L, "impetus.ode.step(f, x, t, h [, method])");
    luaL_checktype(L, 1, LUA_TFUNCTION);
    double t = luaL_checknumber(L, 3), h = luaL_checknumber(L, 4);
    imp_method m = lua_isnoneornil(L, 5) ? IMP_RK4 : impl_check_method(L, 5, "impetus.ode.step: argument 'method'");
    if (m == IMP_ADAPTIVE) return luaL_argerror(L, 5, "step takes a fixed-step method; use solve for adaptive");
    lode o = {L, 1, 0, 0, NULL};
    o.x = check_state(L, 2, "impetus.ode.step: argument 'x'", &o.dim);
    lua_pushcfunction(L, impl_traceback);
    o.handler = lua_gettop(L);
    imp_ode_system sys = {o.dim, &o, lode_get, lode_set, lode_deriv};
    imp_ode_solver s;
    imp_ode_solver_init(&s, m);
    finish(L, &s, imp_ode_step(&sys, &s, m, o.x, t, h));
    push_state(L, o.x, o.dim);
    return 1;
}

/* opts: method ("rk4"), h ((t1 - t0) / 100), tol (1e-6), base ("rk4"), max_growth (5), h_min (1e-9),
 * max_steps (SOLVE_MAX_STEPS: the fixed-step methods' (t1 - t0) / h, the adaptive one's attempts) */
enum { SOLVE_MAX_STEPS = 100000 };
static int ode_solve(lua_State *L)
{
    impl_check_arg_count(L, "impetus.ode.solve(f, x0, t0, t1 [, options])");
    const char *fn = "impetus.ode.solve";
    luaL_checktype(L, 1, LUA_TFUNCTION);
    double t0 = luaL_checknumber(L, 3), t1 = luaL_checknumber(L, 4);
    if (!isfinite(t0) || !isfinite(t1)) return luaL_error(L, "%s: t0 and t1 must be finite", fn);
    if (!(t1 >= t0)) return luaL_error(L, "%s: t1 must be >= t0", fn);
    imp_ode_solver s;
    imp_ode_solver_init(&s, IMP_RK4);
    s.max_substeps = SOLVE_MAX_STEPS;
    double h = (t1 - t0) / 100;
    if (!lua_isnoneornil(L, 5)) {
        luaL_checktype(L, 5, LUA_TTABLE);
        static const char *const keys[] = {"method", "h", "tol", "base", "max_growth", "h_min", "max_steps", NULL};
        impl_check_keys(L, 5, fn, keys);
        if (lua_getfield(L, 5, "method") != LUA_TNIL) s.method = impl_check_method(L, -1, "impetus.ode.solve: field 'method'");
        if (lua_getfield(L, 5, "base") != LUA_TNIL) s.base = impl_check_method(L, -1, "impetus.ode.solve: field 'base'");
        lua_pop(L, 2);
        if (s.base == IMP_ADAPTIVE) return luaL_error(L, "%s: field 'base' must be a fixed-step method", fn);
        h = impl_field_number(L, 5, fn, "h", h);
        s.tolerance = impl_field_number(L, 5, fn, "tol", s.tolerance);
        s.max_growth = impl_field_number(L, 5, fn, "max_growth", s.max_growth);
        s.h_min = impl_field_number(L, 5, fn, "h_min", s.h_min);
        s.max_substeps = impl_field_integer(L, 5, fn, "max_steps", SOLVE_MAX_STEPS, 1, 1000000000);
        if (!(h > 0)) return luaL_error(L, "%s: field 'h' must be > 0", fn);
        if (!(s.h_min >= 0)) return luaL_error(L, "%s: field 'h_min' must be >= 0", fn);
        if (!(s.tolerance > 0)) return luaL_error(L, "%s: field 'tol' must be > 0", fn);
        if (!(s.max_growth >= 1)) return luaL_error(L, "%s: field 'max_growth' must be >= 1", fn);
    }
    lode o = {L, 1, 0, 0, NULL};
    o.x = check_state(L, 2, "impetus.ode.solve: argument 'x0'", &o.dim);
    lua_pushcfunction(L, impl_traceback);
    o.handler = lua_gettop(L);
    imp_ode_system sys = {o.dim, &o, lode_get, lode_set, lode_deriv};
    int rc = 0;
    if (s.method == IMP_ADAPTIVE) {
        s.h = h;
        rc = imp_ode_advance(&sys, &s, t0, t1 - t0);
    } else {
        const double steps = ceil((t1 - t0) / h - 1e-9);
        if (steps > (double)s.max_substeps) {
            char count[32];
            snprintf(count, sizeof count, "%.4g", steps);
            return luaL_error(L, "%s: (t1 - t0) / h is %s steps, more than max_steps (%d)", fn, count, (int)s.max_substeps);
        }
        const long n = (long)steps;
        for (long i = 0; i < n && !rc; i++) {
            double t = t0 + i * h;
            rc = imp_ode_step(&sys, &s, s.method, o.x, t, fmin(h, t1 - t));
        }
    }
    imp_ode_solver info = s;
    finish(L, &s, rc);
    push_state(L, o.x, o.dim);
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, info.steps), lua_setfield(L, -2, "steps");
    lua_pushinteger(L, info.evaluations), lua_setfield(L, -2, "evaluations");
    lua_pushinteger(L, info.rejected), lua_setfield(L, -2, "rejected");
    lua_pushnumber(L, s.method == IMP_ADAPTIVE ? info.h : h), lua_setfield(L, -2, "h");
    return 2;
}

static int ode_adapt_factor(lua_State *L)
{
    impl_check_arg_count(L, "impetus.ode.adapt_factor(err, tol, order)");
    double err = luaL_checknumber(L, 1), tol = luaL_checknumber(L, 2);
    lua_Integer order = luaL_checkinteger(L, 3);
    if (!(tol > 0)) return luaL_argerror(L, 2, "tol must be > 0");
    if (order < 1 || order > 1000) return luaL_argerror(L, 3, "order must be an integer in 1..1000");
    lua_pushnumber(L, imp_ode_adapt_factor(err, tol, (int)order));
    return 1;
}

static int ode_order(lua_State *L)
{
    impl_check_arg_count(L, "impetus.ode.order(method)");
    imp_method m = impl_check_method(L, 1, "impetus.ode.order: argument 'method'");
    lua_pushinteger(L, imp_ode_order(m));
    return 1;
}

int impl_open_ode(lua_State *L)
{
    static const luaL_Reg fns[] = {{"step", ode_step}, {"solve", ode_solve}, {"adapt_factor", ode_adapt_factor},
                                   {"order", ode_order}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}

/* wrap_lcp.c: impetus.lcp, the pivoting LCP solver (engine/lcp.c) for scripts and specs.
 *
 *   lcp.solve(A, b [, neq [, guess]]) -> f, w, info
 *       A: n rows of n numbers (symmetric positive semidefinite), b: n numbers; the first neq rows
 *       are equality rows (w = 0, f free). f and w are lists with w = A f + b, f >= 0, w >= 0,
 *       f_i w_i = 0; info = {status = "ok" | "infeasible" | "max_pivots", pivots, clamped, regularized}.
 *       guess: n numbers, the rows guessed clamped are those > 0 (imp_lcp_solve_guess: that set's
 *       solution with no pivot when it is one, else the pivoting solve). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "imp_lua.h"

/* info = {status = "ok" | "infeasible" | "max_pivots", pivots, clamped, regularized} (also the exact
 * contact mode's, wrap_world_contacts.c) */
void impl_push_lcp_info(lua_State *L, const imp_lcp_info *info)
{
    static const char *const names[] = {"ok", "infeasible", "max_pivots"};
    lua_createtable(L, 0, 3);
    lua_pushstring(L, names[info->status]), lua_setfield(L, -2, "status");
    lua_pushinteger(L, info->pivots), lua_setfield(L, -2, "pivots");
    lua_pushinteger(L, info->clamped), lua_setfield(L, -2, "clamped");
    lua_pushboolean(L, info->regularized), lua_setfield(L, -2, "regularized");
}

static double lcp_number(lua_State *L, int t, int i, const char *what, int row)
{
    lua_rawgeti(L, t, i);
    int ok;
    double v = lua_tonumberx(L, -1, &ok);
    if (!ok || !isfinite(v)) {
        if (row) luaL_error(L, "impetus.lcp.solve: %s row %d entry %d must be a finite number", what, row, i);
        luaL_error(L, "impetus.lcp.solve: %s entry %d must be a finite number", what, i);
    }
    lua_pop(L, 1);
    return v;
}

static int lcp_solve(lua_State *L)
{
    impl_check_arg_count(L, "impetus.lcp.solve(A, b [, neq [, guess]])");
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
    if ((lua_Integer)lua_rawlen(L, 1) != n) return luaL_error(L, "impetus.lcp.solve: argument 'A' must have as many rows as 'b' has entries (%d vs %d)", (int)lua_rawlen(L, 1), (int)n);
    if (n > 4096) return luaL_error(L, "impetus.lcp.solve: at most 4096 rows (got %d)", (int)n);
    lua_Integer neq = luaL_optinteger(L, 3, 0);
    if (neq < 0 || neq > n) return luaL_error(L, "impetus.lcp.solve: argument 'neq' must be in 0..%d", (int)n);
    const bool has_guess = !lua_isnoneornil(L, 4);
    if (has_guess) {
        luaL_checktype(L, 4, LUA_TTABLE);
        if ((lua_Integer)lua_rawlen(L, 4) != n)
            return luaL_error(L, "impetus.lcp.solve: argument 'guess' must have as many entries as 'b' (%d vs %d)", (int)lua_rawlen(L, 4), (int)n);
    }
    lua_settop(L, 4); /* the work buffer goes above the arguments */
    size_t nn = (size_t)n;
    double *A = lua_newuserdatauv(L, sizeof(double) * (nn * nn + 4 * nn + 1), 0); /* freed by the GC, even on error */
    double *b = A + nn * nn, *f = b + nn, *w = f + nn, *guess = NULL;
    if (has_guess) {
        guess = w + nn;
        for (lua_Integer i = 1; i <= n; i++) guess[i - 1] = lcp_number(L, 4, (int)i, "argument 'guess'", 0);
    }
    for (lua_Integer i = 1; i <= n; i++) {
        b[i - 1] = lcp_number(L, 2, (int)i, "argument 'b'", 0);
        lua_rawgeti(L, 1, i);
        if (!lua_istable(L, -1) || (lua_Integer)lua_rawlen(L, -1) != n)
            return luaL_error(L, "impetus.lcp.solve: argument 'A' row %d must be a list of %d numbers", (int)i, (int)n);
        int t = lua_gettop(L);
        for (lua_Integer j = 1; j <= n; j++) A[(i - 1) * n + (j - 1)] = lcp_number(L, t, (int)j, "argument 'A'", (int)i);
        lua_pop(L, 1);
    }
    imp_lcp_work ws = {0};
    imp_lcp_info info;
    if (guess) imp_lcp_solve_guess((int)n, (int)neq, A, b, guess, f, w, &info, &ws);
    else imp_lcp_solve((int)n, (int)neq, A, b, f, w, &info, &ws);
    imp_lcp_work_free(&ws);
    lua_createtable(L, (int)n, 0);
    for (int i = 0; i < n; i++) lua_pushnumber(L, f[i]), lua_rawseti(L, -2, i + 1);
    lua_createtable(L, (int)n, 0);
    for (int i = 0; i < n; i++) lua_pushnumber(L, w[i]), lua_rawseti(L, -2, i + 1);
    impl_push_lcp_info(L, &info);
    return 3;
}

int impl_open_lcp(lua_State *L)
{
    static const luaL_Reg fns[] = {{"solve", lcp_solve}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}

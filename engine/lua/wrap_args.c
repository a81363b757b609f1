/* wrap_args.c: reading the values scripts pass (vectors, quaternions, matrices, colours, fields of
 * definition tables, string options) and pushing values back, with errors that name the function
 * and the argument or field. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "imp_lua.h"

/* ---- vectors, quaternions, matrices, colours ---------------------------------------------------------- */

/* the table at idx holds only entries 1..n, and the names x, y, z when `named` (a vector): anything
 * else, {0, 1, 0, 5} or {0, 1, 0, bogus = 5}, is a mistake the reader would otherwise drop unseen */
static void check_components(lua_State *L, int idx, const char *what, const char *shape, lua_Integer n, bool named)
{
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int is_integer;
        lua_Integer k = lua_tointegerx(L, -1, &is_integer);
        if (lua_type(L, -1) == LUA_TNUMBER && is_integer && k >= 1 && k <= n) continue;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *name = lua_tostring(L, -1);
            if (named && (!strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z"))) continue;
            luaL_error(L, "%s must be %s: unknown field '%s'", what, shape, name);
        }
        luaL_error(L, "%s must be %s: unexpected entry [%s]", what, shape, luaL_tolstring(L, -1, NULL));
    }
}

imp_vec3 impl_tovec3(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx))
        luaL_error(L, "%s must be a vector {x, y, z} (got %s)", what, luaL_typename(L, idx));
    check_components(L, idx, what, "a vector {x, y, z}", 3, true);
    double c[3];
    static const char *const names[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; k++) {
        if (lua_rawgeti(L, idx, k + 1) == LUA_TNIL) {
            lua_pop(L, 1);
            lua_getfield(L, idx, names[k]);
        }
        int ok;
        c[k] = lua_tonumberx(L, -1, &ok);
        if (!ok) {
            /* a 2D vector {x, y} is allowed: z = 0 */
            if (k == 2 && lua_isnil(L, -1)) c[k] = 0, ok = 1;
            else luaL_error(L, "%s must be a vector {x, y, z}: component %d is %s", what, k + 1, luaL_typename(L, -1));
        }
        if (!isfinite(c[k])) luaL_error(L, "%s must be finite (component %d is %f)", what, k + 1, c[k]);
        lua_pop(L, 1);
    }
    return v3(c[0], c[1], c[2]);
}

int impl_result_vec3(lua_State *L, int idx, double out[3])
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

void impl_pushvec3(lua_State *L, imp_vec3 v)
{
    lua_createtable(L, 3, 0);
    lua_pushnumber(L, v.x), lua_rawseti(L, -2, 1);
    lua_pushnumber(L, v.y), lua_rawseti(L, -2, 2);
    lua_pushnumber(L, v.z), lua_rawseti(L, -2, 3);
}

imp_quat impl_toquat(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a quaternion {w, x, y, z} (got %s)", what, luaL_typename(L, idx));
    check_components(L, idx, what, "a quaternion {w, x, y, z}", 4, false);
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

void impl_pushmat3(lua_State *L, imp_mat3 m)
{
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        impl_pushvec3(L, v3(m.m[i][0], m.m[i][1], m.m[i][2]));
        lua_rawseti(L, -2, i + 1);
    }
}

void impl_tocolor(lua_State *L, int idx, const char *what, float rgba[4])
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a colour {r, g, b[, a]} (got %s)", what, luaL_typename(L, idx));
    check_components(L, idx, what, "a colour {r, g, b[, a]}", 4, false);
    for (int k = 0; k < 4; k++) {
        lua_rawgeti(L, idx, k + 1);
        int ok;
        double c = lua_tonumberx(L, -1, &ok);
        if (!ok && !(k == 3 && lua_isnil(L, -1)))
            luaL_error(L, "%s must be a colour {r, g, b[, a]} with numbers in 0..1", what);
        rgba[k] = ok ? (float)c : 1.0f;
        lua_pop(L, 1);
    }
}

void impl_pushcolor(lua_State *L, const float rgba[4])
{
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) lua_pushnumber(L, rgba[k]), lua_rawseti(L, -2, k + 1);
}

/* ---- fields of definition tables ------------------------------------------------------------------------ */

double impl_field_number(lua_State *L, int idx, const char *fn, const char *key, double def)
{
    double r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        int ok;
        r = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s: field '%s' must be a number (got %s)", fn, key, luaL_typename(L, -1));
        if (!isfinite(r)) luaL_error(L, "%s: field '%s' must be finite", fn, key);
    }
    lua_pop(L, 1);
    return r;
}

imp_vec3 impl_field_vec3(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def)
{
    imp_vec3 r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        char what[96];
        snprintf(what, sizeof what, "%s: field '%s'", fn, key);
        r = impl_tovec3(L, -1, what);
    }
    lua_pop(L, 1);
    return r;
}

int impl_field_bool(lua_State *L, int idx, const char *fn, const char *key, int def)
{
    int r = def;
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        if (!lua_isboolean(L, -1)) luaL_error(L, "%s: field '%s' must be a boolean (got %s)", fn, key, luaL_typename(L, -1));
        r = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return r;
}

void impl_field_color(lua_State *L, int idx, const char *fn, const char *key, float rgba[4])
{
    lua_getfield(L, idx, key);
    if (!lua_isnil(L, -1)) {
        char what[96];
        snprintf(what, sizeof what, "%s: field '%s'", fn, key);
        impl_tocolor(L, -1, what, rgba);
    }
    lua_pop(L, 1);
}

double impl_field_positive(lua_State *L, int idx, const char *fn, const char *key, double def, bool allow_zero)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (allow_zero ? !(v >= 0) : !(v > 0))
        luaL_error(L, "%s: field '%s' must be %s (got %f)", fn, key, allow_zero ? ">= 0" : "> 0", v);
    return v;
}

int impl_field_integer(lua_State *L, int idx, const char *fn, const char *key, int def, int lo, int hi)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (v != floor(v) || v < lo || v > hi) luaL_error(L, "%s: field '%s' must be an integer in %d..%d (got %f)", fn, key, lo, hi, v);
    return (int)v;
}

imp_vec3 impl_unit_vector(lua_State *L, imp_vec3 v, const char *fn, const char *key)
{
    double l = v3_len(v);
    if (!(l > 1e-12)) luaL_error(L, "%s: field '%s' must not be zero", fn, key);
    return v3_scale(v, 1 / l);
}

/* ---- the range of inputs (impetus.h) ------------------------------------------------------------------ */

/* luaL_error with C's number formats (%g), which lua_pushfstring lacks */
static void range_error(lua_State *L, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    luaL_error(L, "%s", msg);
}

imp_vec3 impl_limit_position(lua_State *L, imp_vec3 p, const char *what)
{
    if (!(v3_len(p) <= IMP_MAX_COORD))
        range_error(L, "%s must lie within %g m of the origin (got {%g, %g, %g})", what, IMP_MAX_COORD, p.x, p.y, p.z);
    return p;
}

imp_vec3 impl_limit_speed(lua_State *L, imp_vec3 v, const char *what)
{
    if (!(v3_len(v) <= IMP_MAX_SPEED)) range_error(L, "%s must be a speed of at most %g m/s (got %g m/s)", what, IMP_MAX_SPEED, v3_len(v));
    return v;
}

imp_vec3 impl_limit_spin(lua_State *L, imp_vec3 w, const char *what)
{
    if (!(v3_len(w) <= IMP_MAX_SPIN)) range_error(L, "%s must be an angular speed of at most %g rad/s (got %g rad/s)", what, IMP_MAX_SPIN, v3_len(w));
    return w;
}

double impl_limit_size(lua_State *L, double s, const char *what, bool allow_zero)
{
    if (!((s >= IMP_MIN_SIZE || (allow_zero && s == 0)) && s <= IMP_MAX_SIZE))
        range_error(L, "%s must be %sin %g .. %g m (got %g)", what, allow_zero ? "0 or " : "", IMP_MIN_SIZE, IMP_MAX_SIZE, s);
    return s;
}

imp_vec3 impl_topoint(lua_State *L, int idx, const char *what) { return impl_limit_position(L, impl_tovec3(L, idx, what), what); }
imp_vec3 impl_tovelocity(lua_State *L, int idx, const char *what) { return impl_limit_speed(L, impl_tovec3(L, idx, what), what); }

/* the field's vector and the name errors give it ("fn: field 'key'"); has = false (and def) when nil */
static imp_vec3 field_vec3_named(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def, char *what, size_t n, bool *has)
{
    snprintf(what, n, "%s: field '%s'", fn, key);
    *has = impl_has_field(L, idx, key);
    return impl_field_vec3(L, idx, fn, key, def);
}

imp_vec3 impl_field_position(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def)
{
    char what[96];
    bool has;
    imp_vec3 v = field_vec3_named(L, idx, fn, key, def, what, sizeof what, &has);
    return has ? impl_limit_position(L, v, what) : v;
}

imp_vec3 impl_field_velocity(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def)
{
    char what[96];
    bool has;
    imp_vec3 v = field_vec3_named(L, idx, fn, key, def, what, sizeof what, &has);
    return has ? impl_limit_speed(L, v, what) : v;
}

imp_vec3 impl_field_spin(lua_State *L, int idx, const char *fn, const char *key, imp_vec3 def)
{
    char what[96];
    bool has;
    imp_vec3 v = field_vec3_named(L, idx, fn, key, def, what, sizeof what, &has);
    return has ? impl_limit_spin(L, v, what) : v;
}

double impl_field_size(lua_State *L, int idx, const char *fn, const char *key, double def, bool allow_zero)
{
    if (!impl_has_field(L, idx, key)) return def;
    char what[96];
    snprintf(what, sizeof what, "%s: field '%s'", fn, key);
    return impl_limit_size(L, impl_field_number(L, idx, fn, key, def), what, allow_zero);
}

void *impl_scratch(lua_State *L, size_t bytes) { return lua_newuserdatauv(L, bytes ? bytes : 1, 0); }

bool impl_has_field(lua_State *L, int idx, const char *key)
{
    bool has = lua_getfield(L, idx, key) != LUA_TNIL;
    lua_pop(L, 1);
    return has;
}

/* the names of a NULL-terminated list as `"a", "b" or "c"`, pushed */
static void push_name_list(lua_State *L, const char *const *names, const char *quote, const char *last_sep)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *const *n = names; *n; n++) {
        if (n != names) luaL_addstring(&b, n[1] ? ", " : last_sep);
        luaL_addstring(&b, quote);
        luaL_addstring(&b, *n);
        luaL_addstring(&b, quote);
    }
    luaL_pushresult(&b);
}

void impl_check_keys(lua_State *L, int idx, const char *fn, const char *const *allowed)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: the definition table takes named fields only", fn);
        const char *k = lua_tostring(L, -1);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, k) == 0;
        if (!ok) {
            push_name_list(L, allowed, "", ", ");
            luaL_error(L, "%s: unknown field '%s' (known: %s)", fn, k, lua_tostring(L, -1));
        }
    }
}

void impl_check_list(lua_State *L, int idx, const char *what, lua_Integer length)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int is_integer;
        lua_Integer k = lua_tointegerx(L, -1, &is_integer);
        if (lua_type(L, -1) == LUA_TNUMBER && is_integer && k >= 1 && k <= length) continue;
        if (lua_type(L, -1) == LUA_TSTRING) luaL_error(L, "%s: unknown field '%s' (a list of %d entries)", what, lua_tostring(L, -1), (int)length);
        luaL_error(L, "%s: unexpected entry [%s] (a list of %d entries)", what, luaL_tolstring(L, -1, NULL), (int)length);
    }
}

bool impl_options(lua_State *L, int idx, const char *fn, const char *const *keys, bool required)
{
    if (lua_isnoneornil(L, idx)) {
        if (required) luaL_error(L, "%s: argument %d must be a table of options", fn, idx - 1);
        return false;
    }
    if (!lua_istable(L, idx)) luaL_error(L, "%s: argument %d must be a table of options (got %s)", fn, idx - 1, luaL_typename(L, idx));
    impl_check_keys(L, idx, fn, keys);
    return true;
}

/* ---- string options --------------------------------------------------------------------------------------- */

int impl_check_option(lua_State *L, int idx, const char *what, const char *const *names)
{
    idx = lua_absindex(L, idx);
    const char *name = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    for (int k = 0; name && names[k]; k++)
        if (strcmp(names[k], name) == 0) return k;
    push_name_list(L, names, "\"", " or ");
    if (name) return luaL_error(L, "%s must be %s (got \"%s\")", what, lua_tostring(L, -1), name);
    return luaL_error(L, "%s must be the string %s (got %s)", what, lua_tostring(L, -1), luaL_typename(L, idx));
}

/* ---- argument counts ---------------------------------------------------------------------------------------- */

/* the arguments a signature names: "world:raycast(from, to)" 2 (3 with self), "hair:move_root(position
 * [, direction], dt)" 3 (4 with self), "body:wake()" 0 (1 with self) */
static int signature_arg_count(const char *signature)
{
    const char *open = strchr(signature, '('), *colon = strchr(signature, ':');
    int count = colon && (!open || colon < open) ? 1 : 0; /* a method's self */
    if (!open) return count;
    bool any = false;
    for (const char *c = open + 1; *c && *c != ')'; c++) {
        if (*c == ',') count++;
        else if (*c != ' ' && *c != '[' && *c != ']') any = true;
    }
    return any ? count + 1 : count;
}

void impl_check_arg_count(lua_State *L, const char *signature)
{
    int count = signature_arg_count(signature), top = lua_gettop(L);
    for (int idx = count + 1; idx <= top; idx++)
        if (!lua_isnil(L, idx)) {
            const char *colon = strchr(signature, ':'), *open = strchr(signature, '(');
            int written = colon && (!open || colon < open) ? idx - 1 : idx; /* as the call is written: self is not counted */
            luaL_error(L, "%s: unexpected argument #%d (%s)", signature, written, luaL_typename(L, idx));
        }
}

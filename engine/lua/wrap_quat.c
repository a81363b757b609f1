/* wrap_quat.c: impetus.quat, unit quaternions as {w, x, y, z} (the orientations bodies report).
 *
 *   quat.from_axis_angle(axis, angle)  quat.to_matrix(q)  quat.from_matrix(m)  quat.mul(a, b)
 *   quat.rotate(q, v)  quat.normalize(q)  quat.conjugate(q) */
#include "imp_lua.h"

/* a rotation matrix as three rows {x, y, z} */
static imp_mat3 tomat3(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    imp_mat3 m;
    for (int i = 0; i < 3; i++) {
        lua_rawgeti(L, idx, i + 1);
        imp_vec3 r = impl_tovec3(L, -1, what);
        m.m[i][0] = r.x, m.m[i][1] = r.y, m.m[i][2] = r.z;
        lua_pop(L, 1);
    }
    return m;
}

static int quatlib_from_axis_angle(lua_State *L)
{
    impl_check_arg_count(L, "quat.from_axis_angle(axis, angle)");
    imp_vec3 axis = impl_tovec3(L, 1, "quat.from_axis_angle: argument 'axis'");
    if (v3_len(axis) < 1e-12) return luaL_error(L, "quat.from_axis_angle: argument 'axis' must not be zero");
    impl_pushquat(L, quat_from_axis_angle(axis, luaL_checknumber(L, 2)));
    return 1;
}
static int quatlib_to_matrix(lua_State *L)
{
    impl_check_arg_count(L, "quat.to_matrix(q)");
    impl_pushmat3(L, quat_to_m3(impl_toquat(L, 1, "quat.to_matrix: argument 'q'")));
    return 1;
}
static int quatlib_from_matrix(lua_State *L)
{
    impl_check_arg_count(L, "quat.from_matrix(m)");
    impl_pushquat(L, quat_normalize(quat_from_m3(tomat3(L, 1, "quat.from_matrix: argument 'm'"))));
    return 1;
}
static int quatlib_mul(lua_State *L)
{
    impl_check_arg_count(L, "quat.mul(a, b)");
    impl_pushquat(L, quat_mul(impl_toquat(L, 1, "quat.mul: argument 'a'"), impl_toquat(L, 2, "quat.mul: argument 'b'")));
    return 1;
}
static int quatlib_rotate(lua_State *L)
{
    impl_check_arg_count(L, "quat.rotate(q, v)");
    impl_pushvec3(L, quat_rotate(impl_toquat(L, 1, "quat.rotate: argument 'q'"), impl_tovec3(L, 2, "quat.rotate: argument 'v'")));
    return 1;
}
static int quatlib_normalize(lua_State *L)
{
    impl_check_arg_count(L, "quat.normalize(q)");
    impl_pushquat(L, impl_toquat(L, 1, "quat.normalize: argument 'q'"));
    return 1;
}
static int quatlib_conjugate(lua_State *L)
{
    impl_check_arg_count(L, "quat.conjugate(q)");
    impl_pushquat(L, quat_conj(impl_toquat(L, 1, "quat.conjugate: argument 'q'")));
    return 1;
}

int impl_open_quat(lua_State *L)
{
    static const luaL_Reg fns[] = {{"from_axis_angle", quatlib_from_axis_angle}, {"to_matrix", quatlib_to_matrix},
                                   {"from_matrix", quatlib_from_matrix},         {"mul", quatlib_mul},
                                   {"rotate", quatlib_rotate},                   {"normalize", quatlib_normalize},
                                   {"conjugate", quatlib_conjugate},             {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}

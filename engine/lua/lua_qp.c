/* lua_qp.c: the exact contact mode (engine/contact_qp.c) for scripts and specs.
 *
 *   world.contact                 "impulse" (default) or "qp"
 *   world.restitution             the QP mode's coefficient of restitution (default 0)
 *   world.friction                the QP mode's Coulomb coefficient (default 0: frictionless)
 *   world:contact_system()        A (rows), b, contacts: d'' = A f + b for every contact point now
 *   world:contact_accelerations(f) d'' of those contacts when forces f act (through the bodies)
 *   world:solve_contacts()        contacts with their exact forces and d'', info
 *   world:resolve_collisions([e]) simultaneous collision impulses (S2 section 8), applied; contacts, info
 *   world:contact_separations()   d, d' of the contacts of the last contact_system/solve, their material
 *                                 points placed at the current state (no new collision pass)
 *   world:joint{a, b, point}      a ball joint of the QP mode (three equality rows); returns its index
 *                                 (world:joint{type = ...} is the impulse mode's Joint: lua_joint.c)
 *   world:remove_joint(index)
 *   world.qp_dense_max            islands of up to this many rows: the dense pivoting LCP; above: PGS
 *   world:contact_stats()         {impacts (times of impact found), solves (resting LCPs), fallbacks (PGS islands)}
 * A contact is {a, b (bodies, nil for a collider), point, normal, separation, velocity, force,
 * acceleration, friction, edge, joint}; info is {status, pivots, clamped, regularized}. */
#include <math.h>
#include <string.h>

#include "imp_lua.h"

static void push_contacts(lua_State *L, imp_world *w, const char *force_key)
{
    int n = imp_qp_count(w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_qp_contact_info c;
        imp_qp_contact(w, i, &c);
        lua_createtable(L, 0, 10);
        if (!imp_id_is_null(c.a)) impl_pushhandle(L, 1, IMPL_BODY, c.a), lua_setfield(L, -2, "a");
        if (!imp_id_is_null(c.b)) impl_pushhandle(L, 1, IMPL_BODY, c.b), lua_setfield(L, -2, "b");
        impl_pushvec3(L, c.point), lua_setfield(L, -2, "point");
        impl_pushvec3(L, c.normal), lua_setfield(L, -2, "normal");
        lua_pushnumber(L, c.separation), lua_setfield(L, -2, "separation");
        lua_pushnumber(L, c.velocity), lua_setfield(L, -2, "velocity");
        if (force_key) {
            lua_pushnumber(L, c.force), lua_setfield(L, -2, force_key);
            lua_pushnumber(L, c.acceleration), lua_setfield(L, -2, "acceleration");
            impl_pushvec3(L, c.friction), lua_setfield(L, -2, "friction");
        }
        lua_pushboolean(L, c.edge), lua_setfield(L, -2, "edge");
        if (c.joint) lua_pushboolean(L, 1), lua_setfield(L, -2, "joint");
        lua_rawseti(L, -2, i + 1);
    }
}

static void push_info(lua_State *L, const imp_lcp_info *info)
{
    static const char *const names[] = {"ok", "infeasible", "max_pivots"};
    lua_createtable(L, 0, 3);
    lua_pushstring(L, names[info->status]), lua_setfield(L, -2, "status");
    lua_pushinteger(L, info->pivots), lua_setfield(L, -2, "pivots");
    lua_pushinteger(L, info->clamped), lua_setfield(L, -2, "clamped");
    lua_pushboolean(L, info->regularized), lua_setfield(L, -2, "regularized");
}

static int world_contact_system(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:contact_system")->w;
    int n = imp_qp_gather(w);
    double *A = lua_newuserdatauv(L, sizeof(double) * ((size_t)n * n + n + 1), 0);
    double *b = A + (size_t)n * n;
    imp_qp_system(w, A, b);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, n, 0);
        for (int j = 0; j < n; j++) lua_pushnumber(L, A[(size_t)i * n + j]), lua_rawseti(L, -2, j + 1);
        lua_rawseti(L, -2, i + 1);
    }
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) lua_pushnumber(L, b[i]), lua_rawseti(L, -2, i + 1);
    push_contacts(L, w, NULL);
    return 3;
}

static int world_contact_accelerations(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:contact_accelerations")->w;
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = imp_qp_gather(w);
    if ((int)lua_rawlen(L, 2) != n)
        return luaL_error(L, "world:contact_accelerations: argument 'f' must have one force per contact (%d, got %d)", n, (int)lua_rawlen(L, 2));
    double *f = lua_newuserdatauv(L, sizeof(double) * (2 * (size_t)n + 1), 0), *dd = f + n;
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 2, i + 1);
        int ok;
        f[i] = lua_tonumberx(L, -1, &ok);
        if (!ok || !isfinite(f[i])) return luaL_error(L, "world:contact_accelerations: argument 'f' entry %d must be a finite number", i + 1);
        lua_pop(L, 1);
    }
    imp_qp_accelerations(w, f, dd);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) lua_pushnumber(L, dd[i]), lua_rawseti(L, -2, i + 1);
    return 1;
}

static int world_contact_separations(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:contact_separations")->w;
    imp_qp_replace(w);
    int n = imp_qp_count(w);
    lua_createtable(L, n, 0);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_qp_contact_info c;
        imp_qp_contact(w, i, &c);
        lua_pushnumber(L, c.separation), lua_rawseti(L, -3, i + 1);
        lua_pushnumber(L, c.velocity), lua_rawseti(L, -2, i + 1);
    }
    return 2;
}

static int world_solve_contacts(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:solve_contacts")->w;
    imp_qp_gather(w);
    imp_lcp_info info;
    imp_qp_solve(w, &info);
    push_contacts(L, w, "force");
    push_info(L, &info);
    return 2;
}

static int world_resolve_collisions(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:resolve_collisions")->w;
    double e = luaL_optnumber(L, 2, imp_world_restitution(w));
    if (!(e >= 0 && e <= 1)) return luaL_error(L, "world:resolve_collisions: argument 'e' must be in [0, 1] (got %g)", e);
    imp_qp_gather(w);
    imp_lcp_info info;
    imp_qp_collide(w, e, &info);
    push_contacts(L, w, "impulse");
    push_info(L, &info);
    return 2;
}

static int world_contact_stats(lua_State *L)
{
    imp_world *w = impl_checkworld(L, 1)->w;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, imp_qp_impacts(w)), lua_setfield(L, -2, "impacts");
    lua_pushinteger(L, imp_qp_solves(w)), lua_setfield(L, -2, "solves");
    lua_pushinteger(L, imp_qp_fallbacks(w)), lua_setfield(L, -2, "fallbacks");
    return 1;
}

/* world:joint{a = body, b = body (optional: the world), point = {x, y, z}} -> index */
static int world_joint(lua_State *L)
{
    const char *fn = "world:joint";
    imp_world *w = impl_checkunlocked(L, 1, fn)->w;
    luaL_checktype(L, 2, LUA_TTABLE);
    if (lua_getfield(L, 2, "type") != LUA_TNIL) return impl_world_joint_impulse(L); /* lua_joint.c */
    lua_pop(L, 1);
    static const char *const keys[] = {"a", "b", "point", "fixed", NULL};
    impl_check_keys(L, 2, fn, keys);
    lua_getfield(L, 2, "a");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'a' (a body) is required", fn);
    imp_id a = impl_checkhandle(L, lua_gettop(L), IMPL_BODY, imp_body_valid)->id;
    imp_id b = {0, 0};
    lua_getfield(L, 2, "b");
    if (!lua_isnil(L, -1)) b = impl_checkhandle(L, lua_gettop(L), IMPL_BODY, imp_body_valid)->id;
    if (imp_id_is_null(a)) return luaL_error(L, "%s: field 'a' must be a body", fn);
    if (!imp_id_is_null(b) && a.index == b.index) return luaL_error(L, "%s: fields 'a' and 'b' must be two bodies", fn);
    lua_getfield(L, 2, "point");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'point' is required", fn);
    imp_vec3 p = impl_tovec3(L, lua_gettop(L), "world:joint: field 'point'");
    bool fixed = impl_field_bool(L, 2, fn, "fixed", 0);
    int k = imp_qp_joint(w, a, b, p);
    if (k < 0) return luaL_error(L, "%s: stale body handle", fn);
    if (fixed) { /* a weld: three ball joints at non-collinear points (9 rows of rank 6: the solver
                  * takes the redundancy like any degenerate contact set) */
        imp_qp_joint(w, a, b, (imp_vec3){p.x + 1, p.y, p.z});
        imp_qp_joint(w, a, b, (imp_vec3){p.x, p.y + 1, p.z});
    }
    lua_pushinteger(L, k + 1);
    return 1;
}

static int world_remove_joint(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world:remove_joint")->w;
    int k = (int)luaL_checkinteger(L, 2) - 1;
    imp_qp_joint_remove(w, k);
    if (lua_toboolean(L, 3)) imp_qp_joint_remove(w, k + 1), imp_qp_joint_remove(w, k + 2); /* a fixed joint's */
    return 0;
}

static int get_restitution(lua_State *L) { lua_pushnumber(L, imp_world_restitution(impl_checkworld(L, 1)->w)); return 1; }
static int set_restitution(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world.restitution")->w;
    int ok;
    double e = lua_tonumberx(L, 2, &ok);
    if (!ok || !(e >= 0 && e <= 1)) return luaL_error(L, "world.restitution: must be a number in [0, 1]");
    imp_world_set_restitution(w, e);
    return 0;
}

static int get_friction(lua_State *L) { lua_pushnumber(L, imp_world_friction(impl_checkworld(L, 1)->w)); return 1; }
static int set_friction(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world.friction")->w;
    int ok;
    double mu = lua_tonumberx(L, 2, &ok);
    if (!ok || !(mu >= 0 && mu <= 100)) return luaL_error(L, "world.friction: must be a number in [0, 100]");
    imp_world_set_friction(w, mu);
    return 0;
}

static int get_dense_max(lua_State *L) { lua_pushinteger(L, imp_qp_dense_max(impl_checkworld(L, 1)->w)); return 1; }
static int set_dense_max(lua_State *L)
{
    imp_world *w = impl_checkunlocked(L, 1, "world.qp_dense_max")->w;
    int ok;
    lua_Integer n = lua_tointegerx(L, 2, &ok);
    if (!ok || n < 0 || n > IMP_QP_DENSE_LIMIT) return luaL_error(L, "world.qp_dense_max: must be an integer in [0, %d]", IMP_QP_DENSE_LIMIT);
    imp_qp_set_dense_max(w, (int)n);
    return 0;
}

static void add_accessor(lua_State *L, const char *table, const char *key, lua_CFunction fn)
{
    luaL_getmetatable(L, IMPL_WORLD);
    lua_getfield(L, -1, table);
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, key);
    lua_pop(L, 2);
}

void impl_open_qp(lua_State *L)
{
    static const luaL_Reg world_fns[] = {
        {"contact_system", world_contact_system}, {"contact_accelerations", world_contact_accelerations},
        {"solve_contacts", world_solve_contacts}, {"resolve_collisions", world_resolve_collisions},
        {"contact_stats", world_contact_stats}, {"contact_separations", world_contact_separations},
        {"joint", world_joint}, {"remove_joint", world_remove_joint}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
    /* world.contact itself is lua_impulse.c's */
    add_accessor(L, "getters", "restitution", get_restitution);
    add_accessor(L, "setters", "restitution", set_restitution);
    add_accessor(L, "getters", "friction", get_friction);
    add_accessor(L, "setters", "friction", set_friction);
    add_accessor(L, "getters", "qp_dense_max", get_dense_max);
    add_accessor(L, "setters", "qp_dense_max", set_dense_max);
}

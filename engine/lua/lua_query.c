/* lua_query.c: collision results and queries: world:contacts(), world:contact_events(),
 * world:pairs(), world:raycast(), world:query_point(), world:overlap(), world.broadphase. */
#include <string.h>

#include "imp_lua.h"

imp_quat impl_toquat(lua_State *L, int idx, const char *what); /* lua_body.c */

/* one side of a contact: a Body (and its shape index, 1-based), or a Collider */
static void push_side_into(lua_State *L, int world_idx, int table, const char *bkey, const char *skey, imp_contact_side s)
{
    table = lua_absindex(L, table);
    if (!imp_id_is_null(s.body)) {
        impl_pushhandle(L, world_idx, IMPL_BODY, s.body);
        lua_setfield(L, table, bkey);
        lua_pushinteger(L, s.shape + 1);
        lua_setfield(L, table, skey);
    } else {
        impl_pushhandle(L, world_idx, IMPL_COLLIDER, s.collider);
        lua_setfield(L, table, bkey);
    }
}

/* world:contacts() -> list of {a, b, shape_a, shape_b, normal, points = {{point, depth, id}...}, age} */
static int world_contacts(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    int n = imp_world_contact_count(lw->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const imp_contact *c = imp_world_contact(lw->w, i);
        lua_createtable(L, 0, 8);
        push_side_into(L, 1, -1, "a", "shape_a", c->a);
        push_side_into(L, 1, -1, "b", "shape_b", c->b);
        impl_pushvec3(L, c->normal), lua_setfield(L, -2, "normal");
        lua_pushinteger(L, c->age), lua_setfield(L, -2, "age");
        lua_pushnumber(L, c->impact), lua_setfield(L, -2, "impact");
        lua_pushnumber(L, c->impact_speed), lua_setfield(L, -2, "impact_speed");
        if (c->edge) {
            lua_createtable(L, 0, 2);
            impl_pushvec3(L, c->ea), lua_setfield(L, -2, "a");
            impl_pushvec3(L, c->eb), lua_setfield(L, -2, "b");
            lua_setfield(L, -2, "edges");
        }
        lua_createtable(L, c->count, 0);
        for (int k = 0; k < c->count; k++) {
            lua_createtable(L, 0, 3);
            impl_pushvec3(L, c->points[k]), lua_setfield(L, -2, "point");
            lua_pushnumber(L, c->depth[k]), lua_setfield(L, -2, "depth");
            lua_pushinteger(L, c->point_id[k]), lua_setfield(L, -2, "id");
            lua_pushnumber(L, c->normal_impulse[k]), lua_setfield(L, -2, "impulse");
            impl_pushvec3(L, c->tangent_impulse[k]), lua_setfield(L, -2, "friction");
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "points");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static void push_events(lua_State *L, int n, void (*get)(const imp_world *, int, imp_contact_side *, imp_contact_side *), imp_world *w,
                        double (*value)(const imp_world *, int), const char *key)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_contact_side a, b;
        get(w, i, &a, &b);
        lua_createtable(L, 0, 5);
        push_side_into(L, 1, -1, "a", "shape_a", a);
        push_side_into(L, 1, -1, "b", "shape_b", b);
        lua_pushnumber(L, value(w, i)), lua_setfield(L, -2, key);
        lua_rawseti(L, -2, i + 1);
    }
}

/* world:contact_events() -> {begin = {{a, b, shape_a, shape_b, speed}...}, ["end"] = {... impulse}, hit = {{a, b, ..., point, normal, impulse, speed}}} of the last step */
static int world_contact_events(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    lua_createtable(L, 0, 2);
    push_events(L, imp_world_begin_count(lw->w), imp_world_begin_event, lw->w, imp_world_begin_speed, "speed");
    lua_setfield(L, -2, "begin");
    push_events(L, imp_world_end_count(lw->w), imp_world_end_event, lw->w, imp_world_end_impulse, "impulse");
    lua_setfield(L, -2, "end");
    int nh = imp_world_hit_count(lw->w);
    lua_createtable(L, nh, 0);
    for (int i = 0; i < nh; i++) {
        const imp_contact_hit *h = imp_world_hit(lw->w, i);
        lua_createtable(L, 0, 8);
        push_side_into(L, 1, -1, "a", "shape_a", h->a);
        push_side_into(L, 1, -1, "b", "shape_b", h->b);
        impl_pushvec3(L, h->point), lua_setfield(L, -2, "point");
        impl_pushvec3(L, h->normal), lua_setfield(L, -2, "normal");
        lua_pushnumber(L, h->impulse), lua_setfield(L, -2, "impulse");
        lua_pushnumber(L, h->speed), lua_setfield(L, -2, "speed");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "hit");
    return 1;
}

/* world:pairs() -> the broad-phase pairs of the last step, {a, b, shape_a, shape_b} */
static int world_pairs(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    int n = imp_world_pair_count(lw->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_contact_side a, b;
        imp_world_pair(lw->w, i, &a, &b);
        lua_createtable(L, 0, 4);
        push_side_into(L, 1, -1, "a", "shape_a", a);
        push_side_into(L, 1, -1, "b", "shape_b", b);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:raycast(from, to) -> {body | collider, shape, point, normal, fraction} or nil */
static int world_raycast(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    imp_vec3 from = impl_tovec3(L, 2, "world:raycast: argument 'from'"), to = impl_tovec3(L, 3, "world:raycast: argument 'to'");
    imp_ray_hit hit;
    if (!imp_world_raycast(lw->w, from, to, &hit)) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 5);
    push_side_into(L, 1, -1, imp_id_is_null(hit.side.body) ? "collider" : "body", "shape", hit.side);
    impl_pushvec3(L, hit.point), lua_setfield(L, -2, "point");
    impl_pushvec3(L, hit.normal), lua_setfield(L, -2, "normal");
    lua_pushnumber(L, hit.fraction), lua_setfield(L, -2, "fraction");
    return 1;
}

static int push_sides(lua_State *L, const imp_contact_side *s, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        push_side_into(L, 1, -1, imp_id_is_null(s[i].body) ? "collider" : "body", "shape", s[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:query_point(p) -> list of {body, shape} (or {collider}) containing p */
static int world_query_point(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    imp_vec3 p = impl_tovec3(L, 2, "world:query_point: argument 'point'");
    int n = imp_world_query_point(lw->w, p, NULL, 0);
    imp_contact_side *s = lua_newuserdatauv(L, sizeof *s * (size_t)(n > 0 ? n : 1), 0);
    n = imp_world_query_point(lw->w, p, s, n);
    return push_sides(L, s, n);
}

/* world:overlap({type = "box", size = ...}, position [, orientation]) -> list of {body, shape} */
static int world_overlap(lua_State *L)
{
    const char *fn = "world:overlap";
    lworld *lw = impl_checkworld(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"type", "radius", "length", "size", "half", "points", NULL};
    impl_check_keys(L, 2, fn, keys);
    lua_getfield(L, 2, "type");
    const char *t = lua_tostring(L, -1);
    static const char *const names[] = {"sphere", "capsule", "box", "hull"};
    int type = -1;
    for (int k = 0; t && k < 4; k++)
        if (!strcmp(t, names[k])) type = k;
    if (type < 0) return luaL_error(L, "%s: field 'type' must be \"sphere\", \"capsule\", \"box\" or \"hull\"", fn);
    lua_pop(L, 1);
    imp_shape_def d = imp_shape_def_default((imp_shape_type)type);
    if (type == IMP_SHAPE_SPHERE || type == IMP_SHAPE_CAPSULE) d.radius = impl_field_number(L, 2, fn, "radius", d.radius);
    if (type == IMP_SHAPE_CAPSULE) d.half_height = 0.5 * impl_field_number(L, 2, fn, "length", 1);
    if (type == IMP_SHAPE_BOX) {
        d.half = v3_scale(impl_field_vec3(L, 2, fn, "size", v3(1, 1, 1)), 0.5);
        d.half = impl_field_vec3(L, 2, fn, "half", d.half);
    }
    if (type == IMP_SHAPE_HULL) {
        if (lua_getfield(L, 2, "points") != LUA_TTABLE) return luaL_error(L, "%s: field 'points' must be a list of points", fn);
        int n = (int)lua_rawlen(L, -1);
        double *p = lua_newuserdatauv(L, sizeof(double) * 3 * (size_t)(n > 0 ? n : 1), 0);
        for (int i = 0; i < n; i++) {
            lua_rawgeti(L, -2, i + 1);
            v3_store(p + 3 * i, impl_tovec3(L, -1, "world:overlap: points[i]"));
            lua_pop(L, 1);
        }
        d.points = p, d.point_count = n;
    }
    imp_vec3 pos = impl_tovec3(L, 3, "world:overlap: argument 'position'");
    imp_quat q = lua_isnoneornil(L, 4) ? quat_identity() : impl_toquat(L, 4, "world:overlap: argument 'orientation'");
    int n = imp_world_overlap(lw->w, &d, pos, q, NULL, 0);
    if (n < 0) return luaL_error(L, "%s: %s", fn, imp_world_error(lw->w));
    imp_contact_side *s = lua_newuserdatauv(L, sizeof *s * (size_t)(n > 0 ? n : 1), 0);
    n = imp_world_overlap(lw->w, &d, pos, q, s, n);
    return push_sides(L, s, n);
}

/* world:collide(): run broad and narrow phase now (after moving bodies by hand) */
static int world_collide(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world:collide");
    imp_world_collide(lw->w);
    return 0;
}

static const char *const BROADPHASES[] = {"sap", "grid", "sweep"};

static int get_broadphase(lua_State *L)
{
    lua_pushstring(L, BROADPHASES[imp_world_broadphase(impl_checkworld(L, 1)->w)]);
    return 1;
}
static int set_broadphase(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.broadphase");
    const char *s = luaL_checkstring(L, 2);
    for (int k = 0; k < 3; k++)
        if (!strcmp(s, BROADPHASES[k])) {
            imp_world_set_broadphase(lw->w, (imp_broadphase)k);
            return 0;
        }
    return luaL_error(L, "world.broadphase must be \"sap\", \"grid\" or \"sweep\" (got \"%s\")", s);
    return 0;
}
static int get_body_count(lua_State *L) { lua_pushinteger(L, imp_body_count(impl_checkworld(L, 1)->w)); return 1; }
static int get_manifold_count(lua_State *L) { lua_pushinteger(L, imp_world_contact_count(impl_checkworld(L, 1)->w)); return 1; }

static void add_accessors(lua_State *L, const char *which, const luaL_Reg *fns)
{
    luaL_getmetatable(L, IMPL_WORLD);
    lua_getfield(L, -1, which);
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 2);
}

void impl_open_query(lua_State *L)
{
    static const luaL_Reg world_fns[] = {{"contacts", world_contacts}, {"contact_events", world_contact_events},
                                         {"pairs", world_pairs}, {"raycast", world_raycast}, {"query_point", world_query_point},
                                         {"overlap", world_overlap}, {"collide", world_collide}, {NULL, NULL}};
    impl_add_world_methods(L, world_fns);
    static const luaL_Reg getters[] = {{"broadphase", get_broadphase}, {"body_count", get_body_count},
                                       {"manifold_count", get_manifold_count}, {NULL, NULL}};
    static const luaL_Reg setters[] = {{"broadphase", set_broadphase}, {NULL, NULL}};
    add_accessors(L, "getters", getters);
    add_accessors(L, "setters", setters);
}

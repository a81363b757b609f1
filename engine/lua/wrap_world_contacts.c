/* wrap_world_contacts.c: the World's contact results and collision queries, and the exact contact
 * mode's contact system (listed among the World's methods in wrap_world.c).
 *
 *   world:collide()                 run broad and narrow phase now (after moving bodies by hand)
 *   world:contacts()                the touching manifolds: {a, b, shape_a, shape_b, normal, points, age, ...}
 *   world:contact_events()          {begin, end, hit} of the last step
 *   world:pairs()                   the broad phase's pairs of the last step
 *   world:raycast(from, to)         the first hit {body | collider, shape, point, normal, fraction} or nil
 *   world:query_point(p)            the shapes containing p
 *   world:overlap(shape, position [, orientation])  the shapes overlapping a sphere, capsule, box or hull
 *   world:overlaps(sensor [, shape]) the shapes inside a sensor (a Body's sensor shape or a sensor Collider)
 * The exact contact mode (engine/contact_qp.c, S2):
 *   world:contact_system()          A (rows), b, contacts: d'' = A f + b for every contact point now
 *   world:contact_accelerations(f)  d'' of those contacts when forces f act (through the bodies)
 *   world:solve_contacts()          contacts with their exact forces and d'', info
 *   world:resolve_collisions([e])   simultaneous collision impulses (S2 section 8), applied; contacts, info
 *   world:contact_separations()     d, d' of the contacts of the last contact_system/solve, their material
 *                                   points placed at the current state (no new collision pass)
 *   world:contact_stats()           {impacts (times of impact found), solves (resting LCPs), fallbacks (PGS islands)}
 * A contact side is a Body (with its shape index, 1-based) or a Collider. An exact-mode contact is
 * {a, b (bodies, nil for a collider), point, normal, separation, velocity, force, acceleration,
 * friction, edge, joint}; info is {status, pivots, clamped, regularized}. */
#include <stdio.h>
#include <string.h>

#include "imp_lua.h"

static int push_sides(lua_State *L, const imp_contact_side *s, int n);

/* one side of a contact: a Body (and its shape index, 1-based), or a Collider */
void impl_push_side_into(lua_State *L, int world_idx, int table, const char *bkey, const char *skey, imp_contact_side s)
{
    table = lua_absindex(L, table);
    if (!imp_id_is_null(s.body)) {
        impl_push_handle(L, world_idx, IMPL_BODY, s.body);
        lua_setfield(L, table, bkey);
        lua_pushinteger(L, s.shape + 1);
        lua_setfield(L, table, skey);
    } else {
        impl_push_handle(L, world_idx, IMPL_COLLIDER, s.collider);
        lua_setfield(L, table, bkey);
    }
}

/* world:contacts() -> list of {a, b, shape_a, shape_b, normal, points = {{point, depth, id}...}, age} */
int impl_world_contacts(lua_State *L)
{
    impl_check_arg_count(L, "world:contacts()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    int n = imp_world_contact_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const imp_contact *c = imp_world_contact(world->w, i);
        lua_createtable(L, 0, 8);
        impl_push_side_into(L, 1, -1, "a", "shape_a", c->a);
        impl_push_side_into(L, 1, -1, "b", "shape_b", c->b);
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
        impl_push_side_into(L, 1, -1, "a", "shape_a", a);
        impl_push_side_into(L, 1, -1, "b", "shape_b", b);
        lua_pushnumber(L, value(w, i)), lua_setfield(L, -2, key);
        lua_rawseti(L, -2, i + 1);
    }
}

/* world:contact_events() -> {begin = {{a, b, shape_a, shape_b, speed}...}, ["end"] = {... impulse}, hit = {{a, b, ..., point, normal, impulse, speed}}} of the last step */
int impl_world_contact_events(lua_State *L)
{
    impl_check_arg_count(L, "world:contact_events()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    lua_createtable(L, 0, 2);
    push_events(L, imp_world_begin_count(world->w), imp_world_begin_event, world->w, imp_world_begin_speed, "speed");
    lua_setfield(L, -2, "begin");
    push_events(L, imp_world_end_count(world->w), imp_world_end_event, world->w, imp_world_end_impulse, "impulse");
    lua_setfield(L, -2, "end");
    int nh = imp_world_hit_count(world->w);
    lua_createtable(L, nh, 0);
    for (int i = 0; i < nh; i++) {
        const imp_contact_hit *h = imp_world_hit(world->w, i);
        lua_createtable(L, 0, 8);
        impl_push_side_into(L, 1, -1, "a", "shape_a", h->a);
        impl_push_side_into(L, 1, -1, "b", "shape_b", h->b);
        impl_pushvec3(L, h->point), lua_setfield(L, -2, "point");
        impl_pushvec3(L, h->normal), lua_setfield(L, -2, "normal");
        lua_pushnumber(L, h->impulse), lua_setfield(L, -2, "impulse");
        lua_pushnumber(L, h->speed), lua_setfield(L, -2, "speed");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "hit");
    for (int begin = 1; begin >= 0; begin--) { /* sensor_begin, sensor_end: {sensor, shape, other, other_shape} */
        const int n = begin ? imp_world_sensor_begin_count(world->w) : imp_world_sensor_end_count(world->w);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            imp_contact_side sensor, other;
            imp_world_sensor_event(world->w, begin, i, &sensor, &other);
            lua_createtable(L, 0, 4);
            impl_push_side_into(L, 1, -1, "sensor", "shape", sensor);
            impl_push_side_into(L, 1, -1, "other", "other_shape", other);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, begin ? "sensor_begin" : "sensor_end");
    }
    return 1;
}

/* world:overlaps(sensor [, shape]) -> the shapes inside a sensor after the last step, as a list of
 * {body, shape} (or {collider}); sensor is a Collider or a Body (its shape index 1-based, default 1) */
int impl_world_overlaps(lua_State *L)
{
    impl_check_arg_count(L, "world:overlaps(sensor [, shape])");
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_contact_side side;
    memset(&side, 0, sizeof side);
    handle_userdata *h = luaL_testudata(L, 2, IMPL_COLLIDER);
    if (h) {
        h = impl_check_handle(L, 2, IMPL_COLLIDER, imp_collider_valid);
        if (!imp_collider_def_of(world->w, h->id).sensor) return luaL_error(L, "world:overlaps: the collider is not a sensor (make it with sensor = true)");
        side.collider = h->id;
    } else {
        if (!luaL_testudata(L, 2, IMPL_BODY)) return luaL_error(L, "world:overlaps: argument 'sensor' must be a Body or a Collider");
        h = impl_check_body(L, 2);
        const int count = imp_body_shape_count(world->w, h->id);
        const lua_Integer index = luaL_optinteger(L, 3, 1);
        if (index < 1 || index > count) return luaL_error(L, "world:overlaps: argument 'shape' must be a shape index in 1 .. %d (got %d)", count, (int)index);
        if (!imp_body_shape_sensor(world->w, h->id, (int)index - 1))
            return luaL_error(L, "world:overlaps: shape %d of the body is not a sensor (make it with sensor = true)", (int)index);
        side.body = h->id, side.shape = (int)index - 1;
    }
    int n = imp_world_overlaps(world->w, side, NULL, 0);
    imp_contact_side *sides = lua_newuserdatauv(L, sizeof *sides * (size_t)(n > 0 ? n : 1), 0);
    n = imp_world_overlaps(world->w, side, sides, n);
    return push_sides(L, sides, n);
}

/* world:pairs() -> the broad-phase pairs of the last step, {a, b, shape_a, shape_b} */
int impl_world_pairs(lua_State *L)
{
    impl_check_arg_count(L, "world:pairs()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    int n = imp_world_pair_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_contact_side a, b;
        imp_world_pair(world->w, i, &a, &b);
        lua_createtable(L, 0, 4);
        impl_push_side_into(L, 1, -1, "a", "shape_a", a);
        impl_push_side_into(L, 1, -1, "b", "shape_b", b);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* a query's filter table {group, mask, sensors[, all]} at idx (absent: the default); *all when allowed */
static imp_query_filter read_filter(lua_State *L, int idx, const char *fn, bool *all)
{
    imp_query_filter f = imp_query_filter_default();
    if (all) *all = false;
    if (lua_isnoneornil(L, idx)) return f;
    static const char *const keys[] = {"group", "mask", "sensors", "all", NULL};
    static const char *const keys_no_all[] = {"group", "mask", "sensors", NULL};
    char what[64];
    snprintf(what, sizeof what, "%s: the filter", fn);
    if (!lua_istable(L, idx)) luaL_error(L, "%s must be a table {group, mask, sensors%s}", what, all ? ", all" : "");
    impl_check_keys(L, idx, what, all ? keys : keys_no_all);
    const double g = impl_field_number(L, idx, what, "group", 4294967295.0), m = impl_field_number(L, idx, what, "mask", 4294967295.0);
    if (!(g >= 0 && g <= 4294967295.0 && g == floor(g))) luaL_error(L, "%s: field 'group' must be an integer in 0 .. 2^32-1 (a bit set)", what);
    if (!(m >= 0 && m <= 4294967295.0 && m == floor(m))) luaL_error(L, "%s: field 'mask' must be an integer in 0 .. 2^32-1 (a bit set)", what);
    f.group = (uint32_t)g, f.mask = (uint32_t)m;
    f.sensors = impl_field_bool(L, idx, what, "sensors", 0);
    if (all) *all = impl_field_bool(L, idx, what, "all", 0);
    return f;
}

static void push_hit(lua_State *L, const imp_ray_hit *hit)
{
    lua_createtable(L, 0, 5);
    impl_push_side_into(L, 1, -1, imp_id_is_null(hit->side.body) ? "collider" : "body", "shape", hit->side);
    impl_pushvec3(L, hit->point), lua_setfield(L, -2, "point");
    impl_pushvec3(L, hit->normal), lua_setfield(L, -2, "normal");
    lua_pushnumber(L, hit->fraction), lua_setfield(L, -2, "fraction");
}

/* world:raycast(from, to [, {all, group, mask, sensors}]) -> {body | collider, shape, point, normal,
 * fraction} or nil; with all = true the list of every shape hit, sorted by fraction */
int impl_world_raycast(lua_State *L)
{
    impl_check_arg_count(L, "world:raycast(from, to [, filter])");
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_vec3 from = impl_tovec3(L, 2, "world:raycast: argument 'from'"), to = impl_tovec3(L, 3, "world:raycast: argument 'to'");
    bool all;
    const imp_query_filter f = read_filter(L, 4, "world:raycast", &all);
    if (all) {
        int max = imp_collider_count(world->w);
        for (int i = 0; i < imp_body_count(world->w); i++) max += imp_body_shape_count(world->w, imp_body_id(world->w, i));
        imp_ray_hit *hits = lua_newuserdatauv(L, sizeof *hits * (size_t)(max > 0 ? max : 1), 0);
        const int n = imp_world_raycast_all(world->w, from, to, &f, hits, max);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n && i < max; i++) push_hit(L, &hits[i]), lua_rawseti(L, -2, i + 1);
        return 1;
    }
    imp_ray_hit hit;
    if (!imp_world_raycast_filtered(world->w, from, to, &f, &hit)) {
        lua_pushnil(L);
        return 1;
    }
    push_hit(L, &hit);
    return 1;
}

static int push_sides(lua_State *L, const imp_contact_side *s, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        impl_push_side_into(L, 1, -1, imp_id_is_null(s[i].body) ? "collider" : "body", "shape", s[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:query_point(p) -> list of {body, shape} (or {collider}) containing p */
int impl_world_query_point(lua_State *L)
{
    impl_check_arg_count(L, "world:query_point(point)");
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_vec3 p = impl_tovec3(L, 2, "world:query_point: argument 'point'");
    int n = imp_world_query_point(world->w, p, NULL, 0);
    imp_contact_side *s = lua_newuserdatauv(L, sizeof *s * (size_t)(n > 0 ? n : 1), 0);
    n = imp_world_query_point(world->w, p, s, n);
    return push_sides(L, s, n);
}

/* a query's shape table {type = "sphere" | "capsule" | "box" | "hull", radius, length, size, half, points}
 * at idx 2 (buffers left on the stack) */
static imp_shape_def read_query_shape(lua_State *L, const char *fn);

/* world:overlap({type = "box", size = ...}, position [, orientation]) -> list of {body, shape} */
int impl_world_overlap(lua_State *L)
{
    impl_check_arg_count(L, "world:overlap(shape, position [, orientation])");
    const char *fn = "world:overlap";
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_shape_def d = read_query_shape(L, fn);
    imp_vec3 pos = impl_tovec3(L, 3, "world:overlap: argument 'position'");
    imp_quat q = lua_isnoneornil(L, 4) ? quat_identity() : impl_toquat(L, 4, "world:overlap: argument 'orientation'");
    int n = imp_world_overlap(world->w, &d, pos, q, NULL, 0);
    if (n < 0) return luaL_error(L, "%s: %s", fn, imp_world_error(world->w));
    imp_contact_side *s = lua_newuserdatauv(L, sizeof *s * (size_t)(n > 0 ? n : 1), 0);
    n = imp_world_overlap(world->w, &d, pos, q, s, n);
    return push_sides(L, s, n);
}

/* world:cast(shape, from, to [, orientation [, filter]]) -> the first hit {body | collider, shape, point,
 * normal, fraction} of the shape swept from -> to, or nil */
int impl_world_cast(lua_State *L)
{
    impl_check_arg_count(L, "world:cast(shape, from, to [, orientation [, filter]])");
    const char *fn = "world:cast";
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_shape_def d = read_query_shape(L, fn);
    const imp_vec3 from = impl_topoint(L, 3, "world:cast: argument 'from'"), to = impl_topoint(L, 4, "world:cast: argument 'to'");
    const imp_quat q = lua_isnoneornil(L, 5) ? quat_identity() : impl_toquat(L, 5, "world:cast: argument 'orientation'");
    const imp_query_filter f = read_filter(L, 6, fn, NULL);
    imp_ray_hit hit;
    const int r = imp_world_cast(world->w, &d, from, to, q, &f, &hit);
    if (r < 0) return luaL_error(L, "%s: %s", fn, imp_world_error(world->w));
    if (!r) return lua_pushnil(L), 1;
    push_hit(L, &hit);
    return 1;
}

static imp_shape_def read_query_shape(lua_State *L, const char *fn)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const keys[] = {"type", "radius", "length", "size", "half", "points", NULL};
    impl_check_keys(L, 2, fn, keys);
    static const char *const shape_names[] = {"sphere", "capsule", "box", "hull", NULL}; /* imp_shape_type's first four */
    lua_getfield(L, 2, "type");
    char type_what[64];
    snprintf(type_what, sizeof type_what, "%s: field 'type'", fn);
    int type = impl_check_option(L, -1, type_what, shape_names);
    lua_pop(L, 1);
    static const char *const type_keys[][4] = {{"type", "radius", NULL}, {"type", "radius", "length", NULL},
                                               {"type", "size", "half", NULL}, {"type", "points", NULL}};
    char what[64];
    snprintf(what, sizeof what, "%s (a %s)", fn, shape_names[type]);
    impl_check_keys(L, 2, what, type_keys[type]);
    imp_shape_def d = imp_shape_def_default((imp_shape_type)type);
    if (type == IMP_SHAPE_SPHERE || type == IMP_SHAPE_CAPSULE) d.radius = impl_field_number(L, 2, fn, "radius", d.radius);
    if (type == IMP_SHAPE_CAPSULE) d.half_height = 0.5 * impl_field_number(L, 2, fn, "length", 1);
    if (type == IMP_SHAPE_BOX) {
        d.half = v3_scale(impl_field_vec3(L, 2, fn, "size", v3(1, 1, 1)), 0.5);
        d.half = impl_field_vec3(L, 2, fn, "half", d.half);
    }
    if (type == IMP_SHAPE_HULL) {
        if (lua_getfield(L, 2, "points") != LUA_TTABLE) luaL_error(L, "%s: field 'points' must be a list of points", fn);
        int n = (int)lua_rawlen(L, -1);
        snprintf(what, sizeof what, "%s: field 'points'", fn);
        impl_check_list(L, -1, what, n);
        double *p = lua_newuserdatauv(L, sizeof(double) * 3 * (size_t)(n > 0 ? n : 1), 0);
        for (int i = 0; i < n; i++) {
            lua_rawgeti(L, -2, i + 1);
            snprintf(what, sizeof what, "%s: points[%d]", fn, i + 1);
            v3_store(p + 3 * i, impl_tovec3(L, -1, what));
            lua_pop(L, 1);
        }
        d.points = p, d.point_count = n;
        lua_remove(L, -2); /* the points table; the buffer stays */
    }
    return d;
}

/* world:collide(): run broad and narrow phase now (after moving bodies by hand) */
int impl_world_collide(lua_State *L)
{
    impl_check_arg_count(L, "world:collide()");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:collide");
    imp_world_collide(world->w);
    return 0;
}

/* ---- the exact contact mode (S2): the contact system d'' = A f + b and its solution ------------------------ */

static void push_contacts(lua_State *L, imp_world *w, const char *force_key)
{
    int n = imp_qp_count(w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        imp_qp_contact_info c;
        imp_qp_contact(w, i, &c);
        lua_createtable(L, 0, 10);
        if (!imp_id_is_null(c.a)) impl_push_handle(L, 1, IMPL_BODY, c.a), lua_setfield(L, -2, "a");
        if (!imp_id_is_null(c.b)) impl_push_handle(L, 1, IMPL_BODY, c.b), lua_setfield(L, -2, "b");
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

int impl_world_contact_system(lua_State *L)
{
    impl_check_arg_count(L, "world:contact_system()");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:contact_system")->w;
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

int impl_world_contact_accelerations(lua_State *L)
{
    impl_check_arg_count(L, "world:contact_accelerations(f)");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:contact_accelerations")->w;
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

int impl_world_contact_separations(lua_State *L)
{
    impl_check_arg_count(L, "world:contact_separations()");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:contact_separations")->w;
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

int impl_world_solve_contacts(lua_State *L)
{
    impl_check_arg_count(L, "world:solve_contacts()");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:solve_contacts")->w;
    imp_qp_gather(w);
    imp_lcp_info info;
    imp_qp_solve(w, &info);
    push_contacts(L, w, "force");
    impl_push_lcp_info(L, &info);
    return 2;
}

int impl_world_resolve_collisions(lua_State *L)
{
    impl_check_arg_count(L, "world:resolve_collisions([e])");
    imp_world *w = impl_check_world_unlocked(L, 1, "world:resolve_collisions")->w;
    double e = luaL_optnumber(L, 2, imp_world_restitution(w));
    if (!(e >= 0 && e <= 1)) return luaL_error(L, "world:resolve_collisions: argument 'e' must be in [0, 1] (got %g)", e);
    imp_qp_gather(w);
    imp_lcp_info info;
    imp_qp_collide(w, e, &info);
    push_contacts(L, w, "impulse");
    impl_push_lcp_info(L, &info);
    return 2;
}

int impl_world_contact_stats(lua_State *L)
{
    impl_check_arg_count(L, "world:contact_stats()");
    imp_world *w = impl_check_world_userdata(L, 1)->w;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, imp_qp_impacts(w)), lua_setfield(L, -2, "impacts");
    lua_pushinteger(L, imp_qp_solves(w)), lua_setfield(L, -2, "solves");
    lua_pushinteger(L, imp_qp_fallbacks(w)), lua_setfield(L, -2, "fallbacks");
    return 1;
}


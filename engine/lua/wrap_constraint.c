/* wrap_constraint.c: the Constraint type: tinkertoy constraints on particles (engine/tinkertoy.c,
 * S5): the constraint force keeps C(x) = 0 through Lagrange multipliers.
 *
 *   world:rod(a, b [, {length, color}])              world:pin(p [, point])
 *   world:wire(p, {center, radius, normal, color})   world:on_plane(p, {point, normal, color})
 *   world:on_line(p, {point, direction, color})      world:constraint{particles, C, color}
 *   world:constraints()  world:constraint_error()  world:solve_constraints()
 *   constraint.type ("pin", "rod", "wire", "plane", "line", "function"), particles, rows, lambda,
 *   value, force, forces, color (settable), and per type: length (rod, settable), point (pin:
 *   settable; plane, line), center, radius (wire), normal (wire, plane), direction (line);
 *   constraint:destroy(), constraint:valid()
 * (curve particles, world:curve_particle, are Particles: wrap_particle.c; the solver's settings are
 * the World's constraint_* properties: wrap_world.c) */
#include "imp_lua.h"

static const char *const TYPE_NAMES[] = {"pin", "rod", "wire", "plane", "line", "function", NULL}; /* imp_constraint_kind's order */

static handle_userdata *check_constraint(lua_State *L, int idx) { return impl_check_handle(L, idx, IMPL_CONSTRAINT, imp_constraint_valid); }

/* C(x1, ..., xn) returns C, or C and the n gradients dC/dx_i */
static int constraint_call(void *user, int n, const double *x, double *C, double *grad, int *have)
{
    script_callback *cb = user;
    lua_State *L = cb->world->L;
    if (!lua_checkstack(L, n + 4)) return 1;
    lua_pushcfunction(L, impl_traceback);
    int base = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cb->fn_ref);
    for (int i = 0; i < n; i++) impl_pushvec3(L, v3_load(x + 3 * i));
    if (lua_pcall(L, n, LUA_MULTRET, base)) {
        impl_callback_failed(cb->world, L);
        lua_settop(L, base - 1);
        return 1;
    }
    int nres = lua_gettop(L) - base, ok;
    *C = lua_tonumberx(L, base + 1, &ok);
    ok = ok && isfinite(*C);
    *have = 0;
    if (ok && nres > 1) {
        for (int i = 0; ok && i < n; i++) ok = impl_result_vec3(L, base + 2 + i, grad + 3 * i);
        *have = ok;
    }
    if (!ok) {
        lua_pushfstring(L, "constraint function C must return a finite number C, or C and %d gradient vectors {x, y, z}", n);
        impl_callback_failed(cb->world, L);
    }
    lua_settop(L, base - 1);
    return !ok;
}

/* ---- constructors --------------------------------------------------------------------------------------- */

static imp_id particle_argument(lua_State *L, int idx, world_userdata *world, const char *fn, const char *name)
{
    handle_userdata *p = luaL_testudata(L, idx, IMPL_PARTICLE);
    if (!p) luaL_error(L, "%s: argument '%s' must be a Particle (got %s)", fn, name, luaL_typename(L, idx));
    if (!impl_handle_valid(p, imp_particle_valid)) luaL_error(L, "%s: stale Particle handle for '%s': that object was destroyed", fn, name);
    if (p->world != world) luaL_error(L, "%s: particle '%s' belongs to another world", fn, name);
    return p->id;
}

static int push_constraint(lua_State *L, world_userdata *world, const imp_constraint_def *def, const char *fn)
{
    imp_id id = imp_constraint_create(world->w, def);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: the constraint could not be made (degenerate geometry?)", fn);
    impl_push_handle(L, 1, IMPL_CONSTRAINT, id);
    return 1;
}

/* world:rod(a, b [, {length, color}]): |xa - xb| = length (default: the current distance) */
int impl_world_rod(lua_State *L)
{
    impl_check_arg_count(L, "world:rod(a, b [, options])");
    const char *fn = "world:rod";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_ROD;
    def.particles[0] = particle_argument(L, 2, world, fn, "a");
    def.particles[1] = particle_argument(L, 3, world, fn, "b");
    if (def.particles[0].index == def.particles[1].index) return luaL_error(L, "%s: a rod needs two different particles", fn);
    static const char *const keys[] = {"length", "color", NULL};
    if (impl_options(L, 4, fn, keys, false)) {
        def.length = impl_field_number(L, 4, fn, "length", -1);
        if (impl_has_field(L, 4, "length") && !(def.length > 0)) return luaL_error(L, "%s: field 'length' must be > 0 (got %f)", fn, def.length);
        if (impl_has_field(L, 4, "length")) impl_field_size(L, 4, fn, "length", def.length, false);
        impl_field_color(L, 4, fn, "color", def.color);
    }
    if (def.length < 0) {
        imp_vec3 d = v3_sub(imp_particle_position(world->w, def.particles[0]), imp_particle_position(world->w, def.particles[1]));
        if (!(v3_len(d) > 0)) return luaL_error(L, "%s: the particles are at the same place: give {length = ...}", fn);
    }
    return push_constraint(L, world, &def, fn);
}

/* world:pin(p [, point]): x = point (default: where p is now) */
int impl_world_pin(lua_State *L)
{
    impl_check_arg_count(L, "world:pin(p [, point])");
    const char *fn = "world:pin";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_PIN;
    def.particles[0] = particle_argument(L, 2, world, fn, "p");
    def.point = lua_isnoneornil(L, 3) ? imp_particle_position(world->w, def.particles[0])
                                      : impl_topoint(L, 3, "world:pin: argument 'point'");
    return push_constraint(L, world, &def, fn);
}

/* world:wire(p, {center = {0,0,0}, radius, normal = {0,0,1}, color}): a bead on a circular wire */
int impl_world_wire(lua_State *L)
{
    impl_check_arg_count(L, "world:wire(p [, options])");
    const char *fn = "world:wire";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_WIRE;
    def.particles[0] = particle_argument(L, 2, world, fn, "p");
    static const char *const keys[] = {"center", "radius", "normal", "color", NULL};
    if (impl_options(L, 3, fn, keys, false)) {
        def.center = impl_field_position(L, 3, fn, "center", def.center);
        def.normal = impl_field_vec3(L, 3, fn, "normal", def.normal);
        def.radius = impl_field_number(L, 3, fn, "radius", -1);
        if (impl_has_field(L, 3, "radius") && !(def.radius > 0)) return luaL_error(L, "%s: field 'radius' must be > 0 (got %f)", fn, def.radius);
        impl_field_size(L, 3, fn, "radius", def.radius, false);
        impl_field_color(L, 3, fn, "color", def.color);
    }
    if (!(v3_len(def.normal) > 0)) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
    if (def.radius < 0) {
        imp_vec3 n = v3_normalize(def.normal), r = v3_sub(imp_particle_position(world->w, def.particles[0]), def.center);
        if (!(v3_len(v3_mad(r, n, -v3_dot(r, n))) > 0)) return luaL_error(L, "%s: the particle is on the wire's axis: give {radius = ...}", fn);
    }
    return push_constraint(L, world, &def, fn);
}

/* world:on_plane(p, {normal, point, color}): n . (x - point) = 0, point defaults to where p is */
int impl_world_on_plane(lua_State *L)
{
    impl_check_arg_count(L, "world:on_plane(p, options)");
    const char *fn = "world:on_plane";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_PLANE;
    def.particles[0] = particle_argument(L, 2, world, fn, "p");
    static const char *const keys[] = {"point", "normal", "color", NULL};
    impl_options(L, 3, fn, keys, true);
    if (!impl_has_field(L, 3, "normal")) return luaL_error(L, "%s: field 'normal' is required", fn);
    def.normal = impl_field_vec3(L, 3, fn, "normal", def.normal);
    def.point = impl_field_position(L, 3, fn, "point", imp_particle_position(world->w, def.particles[0]));
    impl_field_color(L, 3, fn, "color", def.color);
    if (!(v3_len(def.normal) > 0)) return luaL_error(L, "%s: field 'normal' must not be zero", fn);
    return push_constraint(L, world, &def, fn);
}

/* world:on_line(p, {direction, point, color}): x on the line point + s direction */
int impl_world_on_line(lua_State *L)
{
    impl_check_arg_count(L, "world:on_line(p, options)");
    const char *fn = "world:on_line";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_LINE;
    def.particles[0] = particle_argument(L, 2, world, fn, "p");
    static const char *const keys[] = {"point", "direction", "color", NULL};
    impl_options(L, 3, fn, keys, true);
    if (!impl_has_field(L, 3, "direction")) return luaL_error(L, "%s: field 'direction' is required", fn);
    def.direction = impl_field_vec3(L, 3, fn, "direction", def.direction);
    def.point = impl_field_position(L, 3, fn, "point", imp_particle_position(world->w, def.particles[0]));
    impl_field_color(L, 3, fn, "color", def.color);
    if (!(v3_len(def.direction) > 0)) return luaL_error(L, "%s: field 'direction' must not be zero", fn);
    return push_constraint(L, world, &def, fn);
}

/* world:constraint{particles = {p1, ..}, C = function(x1, ..) return C [, g1, ..] end, color} */
int impl_world_constraint(lua_State *L)
{
    impl_check_arg_count(L, "world:constraint(def)");
    const char *fn = "world:constraint";
    world_userdata *world = impl_check_world_unlocked(L, 1, fn);
    static const char *const keys[] = {"particles", "C", "color", NULL};
    impl_options(L, 2, fn, keys, true);
    imp_constraint_def def = imp_constraint_def_default();
    def.kind = IMP_CONSTRAINT_CALLBACK;
    if (lua_getfield(L, 2, "particles") != LUA_TTABLE) return luaL_error(L, "%s: field 'particles' must be a list of particles", fn);
    int n = (int)luaL_len(L, -1);
    if (n < 1 || n > IMP_CONSTRAINT_MAX) return luaL_error(L, "%s: field 'particles' takes 1 to %d particles (got %d)", fn, IMP_CONSTRAINT_MAX, n);
    impl_check_list(L, -1, "world:constraint: field 'particles'", n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -1, i + 1);
        handle_userdata *p = luaL_testudata(L, -1, IMPL_PARTICLE);
        if (!p || !imp_particle_valid(world->w, p->id) || p->world != world)
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
    script_callback *cb = impl_callback_new(L, world, -1);
    lua_pop(L, 1);
    def.fn = constraint_call;
    def.user = cb;
    def.release = impl_callback_release;
    imp_id id = imp_constraint_create(world->w, &def);
    if (imp_id_is_null(id)) {
        impl_callback_release(cb);
        return luaL_error(L, "%s: the constraint could not be made", fn);
    }
    impl_push_handle(L, 1, IMPL_CONSTRAINT, id);
    return 1;
}

int impl_world_constraints(lua_State *L)
{
    impl_check_arg_count(L, "world:constraints()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    int n = imp_constraint_count(world->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_push_handle(L, 1, IMPL_CONSTRAINT, imp_constraint_id(world->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* world:constraint_error(): the largest |C| over all rows, now */
int impl_world_constraint_error(lua_State *L)
{
    impl_check_arg_count(L, "world:constraint_error()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    impl_call_state saved = impl_call_begin(world, L);
    double e = imp_world_constraint_error(world->w);
    impl_call_end(world, L, saved, e < 0, "world:constraint_error", "a constraint function failed");
    lua_pushnumber(L, e);
    return 1;
}

/* world:solve_constraints(): lambda and the constraint forces at the present state, without stepping */
int impl_world_solve_constraints(lua_State *L)
{
    impl_check_arg_count(L, "world:solve_constraints()");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:solve_constraints");
    impl_call_state saved = impl_call_begin(world, L);
    imp_status st = imp_world_solve_constraints(world->w);
    impl_call_end(world, L, saved, st != IMP_OK, "world:solve_constraints", imp_world_error(world->w));
    return 0;
}

/* ---- methods ----------------------------------------------------------------------------------------------- */

static int constraint_destroy(lua_State *L)
{
    impl_check_arg_count(L, "constraint:destroy()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    if (!impl_handle_valid(h, imp_constraint_valid)) return 0;
    if (imp_world_locked(h->world->w)) return luaL_error(L, "constraint:destroy: the world is locked while it steps; change it in update");
    imp_constraint_destroy(h->world->w, h->id);
    return 0;
}

static int constraint_valid(lua_State *L)
{
    impl_check_arg_count(L, "constraint:valid()");
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    lua_pushboolean(L, impl_handle_valid(h, imp_constraint_valid));
    return 1;
}

static int constraint_tostring(lua_State *L)
{
    handle_userdata *h = luaL_checkudata(L, 1, IMPL_CONSTRAINT);
    if (!impl_handle_valid(h, imp_constraint_valid)) lua_pushliteral(L, "Constraint (destroyed)");
    else lua_pushfstring(L, "Constraint #%d (%s)", (int)h->id.index, TYPE_NAMES[imp_constraint_get(h->world->w, h->id).kind]);
    return 1;
}

/* ---- properties -------------------------------------------------------------------------------------------- */

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

static imp_constraint_def constraint_def(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    return imp_constraint_get(h->world->w, h->id);
}

static int constraint_get_type(lua_State *L) { lua_pushstring(L, TYPE_NAMES[constraint_def(L).kind]); return 1; }
static int constraint_get_rows(lua_State *L) { handle_userdata *h = check_constraint(L, 1); lua_pushinteger(L, imp_constraint_rows(h->world->w, h->id)); return 1; }
static int constraint_get_color(lua_State *L) { impl_pushcolor(L, constraint_def(L).color); return 1; }

static int constraint_get_particles(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    lua_createtable(L, d.n, 0);
    for (int i = 0; i < d.n; i++) {
        impl_push_sibling(L, 1, IMPL_PARTICLE, d.particles[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int constraint_get_lambda(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    double lambda[3];
    push_rows(L, lambda, imp_constraint_lambda(h->world->w, h->id, lambda));
    return 1;
}

/* C now (calls the script's function for world:constraint) */
static int constraint_get_value(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    double C[3];
    impl_call_state saved = impl_call_begin(h->world, L);
    int rows = imp_constraint_value(h->world->w, h->id, C);
    impl_call_end(h->world, L, saved, rows < 0, "constraint.value", "the constraint function failed");
    push_rows(L, C, rows);
    return 1;
}

static int constraint_get_force(lua_State *L) { handle_userdata *h = check_constraint(L, 1); impl_pushvec3(L, imp_constraint_force(h->world->w, h->id, 0)); return 1; }

static int constraint_get_forces(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    int n = imp_constraint_get(h->world->w, h->id).n;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) impl_pushvec3(L, imp_constraint_force(h->world->w, h->id, i)), lua_rawseti(L, -2, i + 1);
    return 1;
}

/* the type-specific parameters: nil for the types that have none */
static int constraint_get_length(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_ROD) lua_pushnumber(L, d.length);
    else lua_pushnil(L);
    return 1;
}
static int constraint_get_radius(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_WIRE) lua_pushnumber(L, d.radius);
    else lua_pushnil(L);
    return 1;
}
static int constraint_get_center(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_WIRE) impl_pushvec3(L, d.center);
    else lua_pushnil(L);
    return 1;
}
static int constraint_get_normal(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_WIRE || d.kind == IMP_CONSTRAINT_PLANE) impl_pushvec3(L, d.normal);
    else lua_pushnil(L);
    return 1;
}
static int constraint_get_direction(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_LINE) impl_pushvec3(L, d.direction);
    else lua_pushnil(L);
    return 1;
}
static int constraint_get_point(lua_State *L)
{
    imp_constraint_def d = constraint_def(L);
    if (d.kind == IMP_CONSTRAINT_PIN || d.kind == IMP_CONSTRAINT_PLANE || d.kind == IMP_CONSTRAINT_LINE) impl_pushvec3(L, d.point);
    else lua_pushnil(L);
    return 1;
}

static int constraint_set_length(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    imp_constraint_def d = imp_constraint_get(h->world->w, h->id);
    if (d.kind != IMP_CONSTRAINT_ROD) return luaL_error(L, "constraint.length: only a rod has a length");
    double len = luaL_checknumber(L, 2);
    if (!(len > 0) || !isfinite(len)) return luaL_error(L, "constraint.length must be > 0 (got %f)", len);
    if (imp_world_locked(h->world->w)) return luaL_error(L, "constraint.length: the world is locked while it steps; change it in update");
    d.length = len;
    imp_constraint_set(h->world->w, h->id, &d);
    return 0;
}

static int constraint_set_point(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    imp_constraint_def d = imp_constraint_get(h->world->w, h->id);
    if (d.kind != IMP_CONSTRAINT_PIN) return luaL_error(L, "constraint.point: only a pin's point can be moved");
    d.point = impl_topoint(L, 2, "constraint.point");
    if (imp_world_locked(h->world->w)) return luaL_error(L, "constraint.point: the world is locked while it steps; change it in update");
    imp_constraint_set(h->world->w, h->id, &d);
    return 0;
}

static int constraint_set_color(lua_State *L)
{
    handle_userdata *h = check_constraint(L, 1);
    imp_constraint_def d = imp_constraint_get(h->world->w, h->id);
    impl_tocolor(L, 2, "constraint.color", d.color);
    imp_constraint_set(h->world->w, h->id, &d);
    return 0;
}

void impl_open_constraint(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", constraint_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", constraint_destroy}, {"valid", constraint_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"type", constraint_get_type},     {"rows", constraint_get_rows},     {"particles", constraint_get_particles},
        {"lambda", constraint_get_lambda}, {"value", constraint_get_value},   {"force", constraint_get_force},
        {"forces", constraint_get_forces}, {"length", constraint_get_length}, {"radius", constraint_get_radius},
        {"center", constraint_get_center}, {"normal", constraint_get_normal}, {"direction", constraint_get_direction},
        {"point", constraint_get_point},   {"color", constraint_get_color},   {NULL, NULL}};
    static const luaL_Reg setters[] = {{"length", constraint_set_length}, {"point", constraint_set_point},
                                       {"color", constraint_set_color}, {NULL, NULL}};
    static const impl_type type = {IMPL_CONSTRAINT, "constraint", meta, methods, getters, setters};
    impl_register_type(L, &type);
}

/* lua_world.c: the World type (impetus.world{...}) and the handle machinery shared by all types.
 *
 * A world userdata owns its imp_world. Its uservalue is a cache of handles (weak values), so the
 * same object always comes back as the same userdata: handles compare equal and can key tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

/* ---- handles -------------------------------------------------------------------------------------- */

lhandle *impl_pushhandle(lua_State *L, int world_idx, const char *type, imp_id id)
{
    world_idx = lua_absindex(L, world_idx);
    lworld *lw = lua_touserdata(L, world_idx);
    lua_getiuservalue(L, world_idx, 1); /* cache */
    lua_pushfstring(L, "%s:%d:%d", type, (int)id.index, (int)id.generation);
    if (lua_rawget(L, -2) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return lua_touserdata(L, -1);
    }
    lua_pop(L, 1);
    lhandle *h = lua_newuserdatauv(L, sizeof *h, 2);
    h->id = id;
    h->lw = lw;
    lua_pushvalue(L, world_idx);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, type);
    lua_pushfstring(L, "%s:%d:%d", type, (int)id.index, (int)id.generation);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_remove(L, -2);
    return h;
}

lhandle *impl_checkhandle(lua_State *L, int idx, const char *type, bool (*valid)(const imp_world *, imp_id))
{
    lhandle *h = luaL_checkudata(L, idx, type);
    if (!valid(h->lw->w, h->id)) {
        const char *dot = strrchr(type, '.');
        luaL_error(L, "stale %s handle: that object was destroyed", dot ? dot + 1 : type);
    }
    return h;
}

/* handle.data: a table of the script's own for the object at idx. It lives in the world (keyed like
 * the handle cache), not in the handle, so it survives the handle being collected and found again. */
int impl_push_data(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lhandle *h = lua_touserdata(L, idx);
    const char *type = "?";
    if (lua_getmetatable(L, idx)) {
        lua_getfield(L, -1, "__name");
        type = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
        lua_pop(L, 2);
    }
    lua_getiuservalue(L, idx, 1);           /* the world */
    lua_getiuservalue(L, -1, 2);            /* its data tables */
    lua_pushfstring(L, "%s:%d:%d", type, (int)h->id.index, (int)h->id.generation);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushfstring(L, "%s:%d:%d", type, (int)h->id.index, (int)h->id.generation);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    lua_replace(L, -3);
    lua_pop(L, 1);
    return 1;
}

/* ---- callbacks -------------------------------------------------------------------------------------- */

lcallback *impl_callback_new(lua_State *L, lworld *lw, int fn_idx)
{
    lcallback *cb = malloc(sizeof *cb);
    if (!cb) luaL_error(L, "out of memory");
    cb->lw = lw;
    lua_pushvalue(L, fn_idx);
    cb->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return cb;
}

void impl_callback_release(void *user)
{
    lcallback *cb = user;
    if (cb->lw->L) luaL_unref(cb->lw->L, LUA_REGISTRYINDEX, cb->fn_ref);
    free(cb);
}

int impl_callback_failed(lworld *lw, lua_State *L)
{
    if (lw->error_ref == LUA_NOREF) {
        lua_pushvalue(L, -1);
        lw->error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    return 1;
}

/* ---- the world ---------------------------------------------------------------------------------------- */

lworld *impl_checkworld(lua_State *L, int idx)
{
    lworld *lw = luaL_checkudata(L, idx, IMPL_WORLD);
    if (!lw->w) luaL_error(L, "this world was destroyed");
    return lw;
}

lworld *impl_handle_unlocked(lua_State *L, lhandle *h, const char *what)
{
    if (imp_world_locked(h->lw->w)) luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    return h->lw;
}

lworld *impl_checkunlocked(lua_State *L, int idx, const char *what)
{
    lworld *lw = impl_checkworld(L, idx);
    if (imp_world_locked(lw->w))
        luaL_error(L, "%s: the world is locked while it steps (a force field or behaviour may read it, "
                      "not change it; make changes in update)", what);
    return lw;
}

static imp_method check_method(lua_State *L, int idx, const char *what)
{
    const char *name = luaL_checkstring(L, idx);
    int m = imp_method_from_name(name);
    if (m < 0) luaL_error(L, "%s must be \"euler\", \"midpoint\", \"rk4\", \"adaptive\" or \"implicit\" (got \"%s\")", what, name);
    return (imp_method)m;
}

static int world_new(lua_State *L)
{
    imp_world_def def = imp_world_def_default();
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        static const char *const keys[] = {"gravity", "drag", "integrator", "tolerance", NULL};
        impl_check_keys(L, 1, "impetus.world", keys);
        def.gravity = impl_field_vec3(L, 1, "impetus.world", "gravity", def.gravity);
        def.drag = impl_field_number(L, 1, "impetus.world", "drag", def.drag);
        def.tolerance = impl_field_number(L, 1, "impetus.world", "tolerance", def.tolerance);
        if (lua_getfield(L, 1, "integrator") != LUA_TNIL) def.integrator = check_method(L, -1, "impetus.world: field 'integrator'");
        lua_pop(L, 1);
        if (def.drag < 0) luaL_error(L, "impetus.world: field 'drag' must be >= 0");
        if (!(def.tolerance > 0)) luaL_error(L, "impetus.world: field 'tolerance' must be > 0");
    }
    lworld *lw = lua_newuserdatauv(L, sizeof *lw, 2);
    lw->w = NULL;
    lw->L = NULL;
    lw->error_ref = LUA_NOREF;
    luaL_setmetatable(L, IMPL_WORLD);
    lua_newtable(L); /* handle cache, weak values */
    lua_newtable(L);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setiuservalue(L, -2, 1);
    lua_newtable(L); /* the scripts' data tables of objects (handle.data), strong */
    lua_setiuservalue(L, -2, 2);
    lw->w = imp_world_create(&def);
    if (!lw->w) return luaL_error(L, "impetus.world: out of memory");
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lw->L = lua_tothread(L, -1);
    lua_pop(L, 1);
    return 1;
}

static int world_gc(lua_State *L)
{
    lworld *lw = luaL_checkudata(L, 1, IMPL_WORLD);
    if (lw->w) {
        imp_world_destroy(lw->w);
        lw->w = NULL;
    }
    return 0;
}

static int world_tostring(lua_State *L)
{
    lworld *lw = luaL_checkudata(L, 1, IMPL_WORLD);
    if (!lw->w) lua_pushliteral(L, "World (destroyed)");
    else lua_pushfstring(L, "World (t = %f s, %d particles)", imp_world_time(lw->w), imp_particle_count(lw->w));
    return 1;
}

/* world:step(dt) -> true | false, message (NaN guard). A callback error is raised, world intact. */
static int world_step(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    double dt = luaL_checknumber(L, 2);
    if (!(dt > 0) || !isfinite(dt)) return luaL_argerror(L, 2, "dt must be a positive number of seconds");
    if (imp_world_locked(lw->w)) return luaL_error(L, "world:step: called from inside this world's own step");
    lua_State *outer = lw->L;
    lw->L = L;
    lw->error_ref = LUA_NOREF;
    imp_status st = imp_world_step(lw->w, dt);
    lw->L = outer;
    if (st == IMP_ERR_CALLBACK) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, lw->error_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, lw->error_ref);
        lw->error_ref = LUA_NOREF;
        const char *msg = lua_tostring(L, -1);
        return luaL_error(L, "world:step: a script callback failed; the step was undone and the world is "
                             "as it was before it:\n%s", msg ? msg : "(error object is not a string)");
    }
    if (st == IMP_ERR_ARG || st == IMP_ERR_LOCKED) return luaL_error(L, "world:%s", imp_world_error(lw->w));
    if (st != IMP_OK) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, imp_world_error(lw->w));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int world_particles(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    int n = imp_particle_count(lw->w);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        impl_pushhandle(L, 1, IMPL_PARTICLE, imp_particle_id(lw->w, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int world_profile(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    imp_profile p = imp_world_profile(lw->w);
    lua_createtable(L, 0, 5);
    lua_pushnumber(L, p.total), lua_setfield(L, -2, "total");
    lua_pushnumber(L, p.integrate), lua_setfield(L, -2, "integrate");
    lua_pushnumber(L, p.forces), lua_setfield(L, -2, "forces"); /* "implicit": forces and matrix */
    lua_pushnumber(L, p.collide), lua_setfield(L, -2, "collide");
    lua_pushinteger(L, p.evaluations), lua_setfield(L, -2, "evaluations");
    /* CG: the constraint solves (tinkertoy.c) and the implicit integrator's solve (implicit.c) */
    imp_constraint_stats cs = imp_world_constraint_stats(lw->w);
    lua_pushnumber(L, cs.ms), lua_setfield(L, -2, "constraints");
    lua_pushinteger(L, cs.solves), lua_setfield(L, -2, "cg_solves");
    lua_pushinteger(L, cs.iterations + p.cg_iterations), lua_setfield(L, -2, "cg_iterations");
    lua_pushinteger(L, cs.max_iterations), lua_setfield(L, -2, "cg_max_iterations");
    lua_pushnumber(L, cs.residual > p.cg_residual ? cs.residual : p.cg_residual), lua_setfield(L, -2, "cg_residual");
    lua_pushnumber(L, cs.max_error), lua_setfield(L, -2, "constraint_error");
    lua_pushnumber(L, p.bodies), lua_setfield(L, -2, "bodies");
    lua_pushnumber(L, p.contacts), lua_setfield(L, -2, "contacts");
    lua_pushinteger(L, p.pairs), lua_setfield(L, -2, "pairs");
    lua_pushinteger(L, p.manifolds), lua_setfield(L, -2, "manifolds");
    return 1;
}

static int world_kinetic(lua_State *L) { lua_pushnumber(L, imp_world_kinetic_energy(impl_checkworld(L, 1)->w)); return 1; }
static int world_potential(lua_State *L) { lua_pushnumber(L, imp_world_potential_energy(impl_checkworld(L, 1)->w)); return 1; }
static int world_energy(lua_State *L)
{
    imp_world *w = impl_checkworld(L, 1)->w;
    lua_pushnumber(L, imp_world_kinetic_energy(w) + imp_world_potential_energy(w));
    return 1;
}

/* properties */
static int get_gravity(lua_State *L) { impl_pushvec3(L, imp_world_gravity(impl_checkworld(L, 1)->w)); return 1; }
static int get_drag(lua_State *L) { lua_pushnumber(L, imp_world_drag(impl_checkworld(L, 1)->w)); return 1; }
static int get_integrator(lua_State *L) { lua_pushstring(L, imp_method_name(imp_world_integrator(impl_checkworld(L, 1)->w))); return 1; }
static int get_tolerance(lua_State *L) { lua_pushnumber(L, imp_world_tolerance(impl_checkworld(L, 1)->w)); return 1; }
static int get_time(lua_State *L) { lua_pushnumber(L, imp_world_time(impl_checkworld(L, 1)->w)); return 1; }
static int get_steps(lua_State *L) { lua_pushinteger(L, imp_world_step_count(impl_checkworld(L, 1)->w)); return 1; }
static int get_locked(lua_State *L) { lua_pushboolean(L, imp_world_locked(impl_checkworld(L, 1)->w)); return 1; }
static int get_particle_count(lua_State *L) { lua_pushinteger(L, imp_particle_count(impl_checkworld(L, 1)->w)); return 1; }
static int get_spring_count(lua_State *L) { lua_pushinteger(L, imp_spring_count(impl_checkworld(L, 1)->w)); return 1; }
static int get_contact_count(lua_State *L) { lua_pushinteger(L, imp_contact_count(impl_checkworld(L, 1)->w)); return 1; }

static int set_gravity(lua_State *L) { imp_world_set_gravity(impl_checkunlocked(L, 1, "world.gravity")->w, impl_tovec3(L, 2, "world.gravity")); return 0; }
static int set_drag(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.drag");
    double kd = luaL_checknumber(L, 2);
    if (!(kd >= 0)) return luaL_error(L, "world.drag must be >= 0 (got %f)", kd);
    imp_world_set_drag(lw->w, kd);
    return 0;
}
static int set_integrator(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.integrator");
    imp_world_set_integrator(lw->w, check_method(L, 2, "world.integrator"));
    return 0;
}
static int set_tolerance(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.tolerance");
    double tol = luaL_checknumber(L, 2);
    if (!(tol > 0)) return luaL_error(L, "world.tolerance must be > 0 (got %f)", tol);
    imp_world_set_tolerance(lw->w, tol);
    return 0;
}

int impl_open_world(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", world_gc}, {"__tostring", world_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {
        {"step", world_step},           {"particles", world_particles},     {"profile", world_profile},
        {"kinetic_energy", world_kinetic}, {"potential_energy", world_potential}, {"energy", world_energy},
        {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"gravity", get_gravity}, {"drag", get_drag}, {"integrator", get_integrator}, {"tolerance", get_tolerance},
        {"time", get_time}, {"steps", get_steps}, {"locked", get_locked}, {"particle_count", get_particle_count},
        {"spring_count", get_spring_count}, {"contact_count", get_contact_count}, {NULL, NULL}};
    static const luaL_Reg setters[] = {
        {"gravity", set_gravity}, {"drag", set_drag}, {"integrator", set_integrator}, {"tolerance", set_tolerance},
        {NULL, NULL}};
    impl_register_type(L, IMPL_WORLD, meta, methods);
    impl_set_accessors(L, IMPL_WORLD, getters, setters);
    lua_pushcfunction(L, world_new);
    return 1;
}

/* other binding files add their constructors (world:particle, world:spring, ...) here */
void impl_add_world_methods(lua_State *L, const luaL_Reg *fns)
{
    luaL_getmetatable(L, IMPL_WORLD);
    lua_getfield(L, -1, "methods");
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 2);
}

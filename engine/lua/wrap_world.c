/* wrap_world.c: the World type (impetus.world{...}): creating and stepping it, its properties (the
 * integrator's, the contact modes', the constraint solver's and the implicit integrator's settings)
 * and the one table of every World method. A method that makes or reads objects of another type
 * (world:body{...}, world:rod(a, b), world:raycast(...)) has its body in that type's file
 * (or in wrap_world_contacts.c for the contact results and queries) and is listed here; the World's
 * checker, which every type's file uses, is in wrap_handles.c.
 *
 * A World userdata owns its imp_world. Its first user value is a cache of handles (weak values), so
 * the same object always comes back as the same userdata: handles compare equal and can key tables. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp_lua.h"

/* ---- creation, collection, stepping ---------------------------------------------------------------------- */

/* Lua's collector sees a World as a small userdata and not the megabytes of C memory its imp_world may
 * hold, so worlds a script drops pile up until Lua's own garbage triggers a cycle. The census counts
 * the worlds holding C memory (made, neither destroyed nor collected); before a world is made, a full
 * collection runs when that count reached the threshold, which then becomes twice the worlds that
 * survived it (at least WORLDS_BEFORE_COLLECTION): the collector's own pause, applied to worlds. A
 * script that drops a world every restart holds at most that many at once; world:destroy() frees
 * one at once. */
typedef struct world_census {
    int alive;     /* worlds holding C memory */
    int threshold; /* a full collection runs before a world is made when alive reaches it */
} world_census;

enum { WORLDS_BEFORE_COLLECTION = 4 };

/* frees the world's C memory; its handles become stale */
static void release_world(world_userdata *world)
{
    imp_world_destroy(world->w);
    world->w = NULL;
    world->census->alive--;
}

static int world_new(lua_State *L)
{
    impl_check_arg_count(L, "impetus.world([def])");
    world_census *census = lua_touserdata(L, lua_upvalueindex(1));
    imp_world_def def = imp_world_def_default();
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        static const char *const keys[] = {"gravity", "drag", "integrator", "tolerance", NULL};
        impl_check_keys(L, 1, "impetus.world", keys);
        def.gravity = impl_field_vec3(L, 1, "impetus.world", "gravity", def.gravity);
        def.drag = impl_field_number(L, 1, "impetus.world", "drag", def.drag);
        def.tolerance = impl_field_number(L, 1, "impetus.world", "tolerance", def.tolerance);
        if (lua_getfield(L, 1, "integrator") != LUA_TNIL) def.integrator = impl_check_method(L, -1, "impetus.world: field 'integrator'");
        lua_pop(L, 1);
        if (def.drag < 0) luaL_error(L, "impetus.world: field 'drag' must be >= 0");
        if (!(def.tolerance > 0)) luaL_error(L, "impetus.world: field 'tolerance' must be > 0");
    }
    world_userdata *world = lua_newuserdatauv(L, sizeof *world, 3);
    world->w = NULL;
    world->L = NULL;
    world->error_ref = LUA_NOREF;
    luaL_setmetatable(L, IMPL_WORLD);
    lua_newtable(L); /* handle cache, weak values */
    lua_newtable(L);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setiuservalue(L, -2, 1);
    lua_newtable(L); /* the scripts' data tables of objects (handle.data), strong */
    lua_setiuservalue(L, -2, 2);
    lua_newtable(L); /* the bindings' own values of objects */
    lua_setiuservalue(L, -2, 3);
    world->census = census;
    if (census->alive >= census->threshold) {
        lua_gc(L, LUA_GCCOLLECT);
        census->threshold = census->alive * 2 > WORLDS_BEFORE_COLLECTION ? census->alive * 2 : WORLDS_BEFORE_COLLECTION;
    }
    world->w = imp_world_create(&def);
    if (!world->w) return luaL_error(L, "impetus.world: out of memory");
    imp_world_set_callback_retain(world->w, impl_callback_retain); /* snapshots hold script functions */
    census->alive++;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    world->L = lua_tothread(L, -1);
    lua_pop(L, 1);
    return 1;
}

static int world_gc(lua_State *L)
{
    world_userdata *world = luaL_checkudata(L, 1, IMPL_WORLD);
    if (world->w) release_world(world);
    return 0;
}

/* world:destroy(): frees the world now, not when the collector finds it; its handles become stale */
static int world_destroy(lua_State *L)
{
    impl_check_arg_count(L, "world:destroy()");
    world_userdata *world = luaL_checkudata(L, 1, IMPL_WORLD);
    if (!world->w) return 0; /* destroying twice is harmless */
    if (imp_world_locked(world->w)) return luaL_error(L, "world:destroy: the world is locked while it steps; destroy it after world:step");
    release_world(world);
    for (int which = 2; which <= 3; which++) { /* the data tables may hold a script's large values */
        lua_newtable(L);
        lua_setiuservalue(L, 1, which);
    }
    return 0;
}

static int world_valid(lua_State *L)
{
    impl_check_arg_count(L, "world:valid()");
    world_userdata *world = luaL_checkudata(L, 1, IMPL_WORLD);
    lua_pushboolean(L, world->w != NULL);
    return 1;
}

static int world_tostring(lua_State *L)
{
    world_userdata *world = luaL_checkudata(L, 1, IMPL_WORLD);
    if (!world->w) lua_pushliteral(L, "World (destroyed)");
    else lua_pushfstring(L, "World (t = %f s, %d particles)", imp_world_time(world->w), imp_particle_count(world->w));
    return 1;
}

/* world:step(dt) -> true | false, message (NaN guard). A callback error is raised, world intact. */
static int world_step(lua_State *L)
{
    impl_check_arg_count(L, "world:step(dt)");
    world_userdata *world = impl_check_world_userdata(L, 1);
    double dt = luaL_checknumber(L, 2);
    if (!(dt > 0) || !isfinite(dt)) return luaL_argerror(L, 2, "dt must be a positive number of seconds");
    if (imp_world_locked(world->w)) return luaL_error(L, "world:step: called from inside this world's own step");
    lua_State *outer = world->L;
    world->L = L;
    world->error_ref = LUA_NOREF;
    imp_status st = imp_world_step(world->w, dt);
    world->L = outer;
    if (st == IMP_ERR_CALLBACK) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, world->error_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, world->error_ref);
        world->error_ref = LUA_NOREF;
        const char *msg = lua_tostring(L, -1);
        return luaL_error(L, "world:step: a script callback failed; the step was undone and the world is "
                             "as it was before it:\n%s", msg ? msg : "(error object is not a string)");
    }
    if (st == IMP_ERR_ARG || st == IMP_ERR_LOCKED) return luaL_error(L, "world:%s", imp_world_error(world->w));
    if (st != IMP_OK) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, imp_world_error(world->w));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- measurements ------------------------------------------------------------------------------------------ */

static int world_profile(lua_State *L)
{
    impl_check_arg_count(L, "world:profile()");
    world_userdata *world = impl_check_world_userdata(L, 1);
    imp_profile p = imp_world_profile(world->w);
    lua_createtable(L, 0, 5);
    lua_pushnumber(L, p.total), lua_setfield(L, -2, "total");
    lua_pushnumber(L, p.integrate), lua_setfield(L, -2, "integrate");
    lua_pushnumber(L, p.forces), lua_setfield(L, -2, "forces"); /* "implicit": forces and matrix */
    lua_pushnumber(L, p.collide), lua_setfield(L, -2, "collide");
    lua_pushinteger(L, p.evaluations), lua_setfield(L, -2, "evaluations");
    /* CG: the constraint solves (tinkertoy.c) and the implicit integrator's solve (implicit.c) */
    imp_constraint_stats cs = imp_world_constraint_stats(world->w);
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
    lua_pushinteger(L, p.particle_contacts), lua_setfield(L, -2, "particle_contacts");
    return 1;
}

static int world_kinetic_energy(lua_State *L)
{
    impl_check_arg_count(L, "world:kinetic_energy()");
    lua_pushnumber(L, imp_world_kinetic_energy(impl_check_world(L, 1)));
    return 1;
}
static int world_potential_energy(lua_State *L)
{
    impl_check_arg_count(L, "world:potential_energy()");
    lua_pushnumber(L, imp_world_potential_energy(impl_check_world(L, 1)));
    return 1;
}
static int world_energy(lua_State *L)
{
    impl_check_arg_count(L, "world:energy()");
    imp_world *w = impl_check_world(L, 1);
    lua_pushnumber(L, imp_world_kinetic_energy(w) + imp_world_potential_energy(w));
    return 1;
}

/* world:jacobian_check([eps]) -> {dfdx = rel. error, dfdv = rel. error, dfdx_max, dfdv_max, matrix} */
static int world_jacobian_check(lua_State *L)
{
    impl_check_arg_count(L, "world:jacobian_check([eps])");
    world_userdata *world = impl_check_world_unlocked(L, 1, "world:jacobian_check");
    double eps = luaL_optnumber(L, 2, 1e-6);
    if (!(eps > 0) || !(eps < 1)) return luaL_argerror(L, 2, "eps must be in (0, 1)");
    imp_jacobian_report r;
    if (imp_world_jacobian_check(world->w, eps, &r) != IMP_OK) return luaL_error(L, "world:%s", imp_world_error(world->w));
    lua_createtable(L, 0, 4);
    lua_pushnumber(L, r.dfdx_error), lua_setfield(L, -2, "dfdx");
    lua_pushnumber(L, r.dfdv_error), lua_setfield(L, -2, "dfdv");
    lua_pushnumber(L, r.dfdx_max), lua_setfield(L, -2, "dfdx_max");
    lua_pushnumber(L, r.dfdv_max), lua_setfield(L, -2, "dfdv_max");
    lua_pushnumber(L, r.matrix_error), lua_setfield(L, -2, "matrix");
    return 1;
}

/* world:sphere{...} and world:box{...}: a Collider with static = true (particles bounce off it,
 * bodies touch it), a rigid Body otherwise */
static bool def_is_static(lua_State *L, const char *fn)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    return impl_field_bool(L, 2, fn, "static", 0);
}
static int world_sphere(lua_State *L)
{
    impl_check_arg_count(L, "world:sphere(def)");
    impl_check_world_unlocked(L, 1, "world:sphere");
    return def_is_static(L, "world:sphere") ? impl_world_collider_sphere(L) : impl_world_body_sphere(L);
}
static int world_box(lua_State *L)
{
    impl_check_arg_count(L, "world:box(def)");
    impl_check_world_unlocked(L, 1, "world:box");
    return def_is_static(L, "world:box") ? impl_world_collider_box(L) : impl_world_body_box(L);
}

/* ---- properties: the world and its integrator ------------------------------------------------------------- */

static int world_get_gravity(lua_State *L) { impl_pushvec3(L, imp_world_gravity(impl_check_world(L, 1))); return 1; }
static int world_get_drag(lua_State *L) { lua_pushnumber(L, imp_world_drag(impl_check_world(L, 1))); return 1; }
static int world_get_integrator(lua_State *L) { lua_pushstring(L, imp_method_name(imp_world_integrator(impl_check_world(L, 1)))); return 1; }
static int world_get_tolerance(lua_State *L) { lua_pushnumber(L, imp_world_tolerance(impl_check_world(L, 1))); return 1; }
static int world_get_time(lua_State *L) { lua_pushnumber(L, imp_world_time(impl_check_world(L, 1))); return 1; }
static int world_get_steps(lua_State *L) { lua_pushinteger(L, imp_world_step_count(impl_check_world(L, 1))); return 1; }
static int world_get_locked(lua_State *L) { lua_pushboolean(L, imp_world_locked(impl_check_world(L, 1))); return 1; }
static int world_get_particle_count(lua_State *L) { lua_pushinteger(L, imp_particle_count(impl_check_world(L, 1))); return 1; }
static int world_get_spring_count(lua_State *L) { lua_pushinteger(L, imp_spring_count(impl_check_world(L, 1))); return 1; }
static int world_get_contact_count(lua_State *L) { lua_pushinteger(L, imp_contact_count(impl_check_world(L, 1))); return 1; }
static int world_get_body_count(lua_State *L) { lua_pushinteger(L, imp_body_count(impl_check_world(L, 1))); return 1; }
static int world_get_manifold_count(lua_State *L) { lua_pushinteger(L, imp_world_contact_count(impl_check_world(L, 1))); return 1; }
static int world_get_constraint_count(lua_State *L) { lua_pushinteger(L, imp_constraint_count(impl_check_world(L, 1))); return 1; }
static int world_get_joint_hubs(lua_State *L) { lua_pushinteger(L, imp_joint_hub_count(impl_check_world(L, 1))); return 1; }

static int world_set_gravity(lua_State *L)
{
    imp_world_set_gravity(impl_check_world_unlocked(L, 1, "world.gravity")->w, impl_tovec3(L, 2, "world.gravity"));
    return 0;
}
static int world_set_drag(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.drag");
    double kd = luaL_checknumber(L, 2);
    if (!(kd >= 0)) return luaL_error(L, "world.drag must be >= 0 (got %f)", kd);
    imp_world_set_drag(world->w, kd);
    return 0;
}
static int world_set_integrator(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.integrator");
    imp_world_set_integrator(world->w, impl_check_method(L, 2, "world.integrator"));
    return 0;
}
static int world_set_tolerance(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.tolerance");
    double tol = luaL_checknumber(L, 2);
    if (!(tol > 0)) return luaL_error(L, "world.tolerance must be > 0 (got %f)", tol);
    imp_world_set_tolerance(world->w, tol);
    return 0;
}

/* ---- properties: the contact modes (impulse: S1; qp: S2) and the broad phase ------------------------------ */

static const char *const CONTACT_MODE_NAMES[] = {"impulse", "qp", "none", NULL}; /* imp_contact_mode's order */
static const char *const BROADPHASE_NAMES[] = {"sap", "grid", "sweep", NULL};    /* imp_broadphase's order */

static int world_get_contact(lua_State *L) { lua_pushstring(L, CONTACT_MODE_NAMES[imp_world_contact_mode(impl_check_world(L, 1))]); return 1; }
static int world_set_contact(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.contact");
    imp_world_set_contact_mode(world->w, (imp_contact_mode)impl_check_option(L, 2, "world.contact", CONTACT_MODE_NAMES));
    return 0;
}
static int world_get_broadphase(lua_State *L) { lua_pushstring(L, BROADPHASE_NAMES[imp_world_broadphase(impl_check_world(L, 1))]); return 1; }
static int world_set_broadphase(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.broadphase");
    imp_world_set_broadphase(world->w, (imp_broadphase)impl_check_option(L, 2, "world.broadphase", BROADPHASE_NAMES));
    return 0;
}
static int world_get_planar(lua_State *L) { lua_pushboolean(L, imp_world_planar(impl_check_world(L, 1))); return 1; }
/* particles collide with each other (engine/particle_contact.c) */
static int world_get_particle_collisions(lua_State *L) { lua_pushboolean(L, imp_world_particle_collisions(impl_check_world(L, 1))); return 1; }
static int world_set_particle_collisions(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.particle_collisions");
    if (!lua_isboolean(L, 2)) return luaL_error(L, "world.particle_collisions must be true or false (got %s)", luaL_typename(L, 2));
    imp_world_set_particle_collisions(world->w, lua_toboolean(L, 2));
    return 0;
}
static int world_set_planar(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.planar");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world_set_planar(world->w, lua_toboolean(L, 2));
    return 0;
}
static int world_get_sleeping(lua_State *L) { lua_pushboolean(L, imp_world_sleeping(impl_check_world(L, 1))); return 1; }
static int world_set_sleeping(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.sleeping");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world_set_sleeping(world->w, lua_toboolean(L, 2));
    return 0;
}
static int world_get_velocity_iterations(lua_State *L)
{
    int velocity, position;
    imp_world_iterations(impl_check_world(L, 1), &velocity, &position);
    lua_pushinteger(L, velocity);
    return 1;
}
static int world_get_position_iterations(lua_State *L)
{
    int velocity, position;
    imp_world_iterations(impl_check_world(L, 1), &velocity, &position);
    lua_pushinteger(L, position);
    return 1;
}
static int world_set_velocity_iterations(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.velocity_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 1000) return luaL_error(L, "world.velocity_iterations must be in 1 .. 1000 (got %d)", (int)n);
    imp_world_set_iterations(world->w, (int)n, -1);
    return 0;
}
static int world_set_position_iterations(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.position_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 0 || n > 1000) return luaL_error(L, "world.position_iterations must be in 0 .. 1000 (got %d)", (int)n);
    imp_world_set_iterations(world->w, 0, (int)n);
    return 0;
}
/* the exact contact mode's restitution and Coulomb coefficient, and its dense LCP's size limit */
static int world_get_restitution(lua_State *L) { lua_pushnumber(L, imp_world_restitution(impl_check_world(L, 1))); return 1; }
static int world_set_restitution(lua_State *L)
{
    imp_world *w = impl_check_world_unlocked(L, 1, "world.restitution")->w;
    int ok;
    double e = lua_tonumberx(L, 2, &ok);
    if (!ok || !(e >= 0 && e <= 1)) return luaL_error(L, "world.restitution: must be a number in [0, 1]");
    imp_world_set_restitution(w, e);
    return 0;
}
static int world_get_restitution_threshold(lua_State *L) { lua_pushnumber(L, imp_world_restitution_threshold(impl_check_world(L, 1))); return 1; }
static int world_set_restitution_threshold(lua_State *L)
{
    imp_world *w = impl_check_world_unlocked(L, 1, "world.restitution_threshold")->w;
    int ok;
    double v = lua_tonumberx(L, 2, &ok);
    if (!ok || !(v >= 0 && v <= 1e6)) return luaL_error(L, "world.restitution_threshold: must be a number in [0, 1e6] (m/s)");
    imp_world_set_restitution_threshold(w, v);
    return 0;
}
static int world_get_friction(lua_State *L) { lua_pushnumber(L, imp_world_friction(impl_check_world(L, 1))); return 1; }
static int world_set_friction(lua_State *L)
{
    imp_world *w = impl_check_world_unlocked(L, 1, "world.friction")->w;
    int ok;
    double mu = lua_tonumberx(L, 2, &ok);
    if (!ok || !(mu >= 0 && mu <= 100)) return luaL_error(L, "world.friction: must be a number in [0, 100]");
    imp_world_set_friction(w, mu);
    return 0;
}
static int world_get_qp_dense_max(lua_State *L) { lua_pushinteger(L, imp_qp_dense_max(impl_check_world(L, 1))); return 1; }
static int world_set_qp_dense_max(lua_State *L)
{
    imp_world *w = impl_check_world_unlocked(L, 1, "world.qp_dense_max")->w;
    int ok;
    lua_Integer n = lua_tointegerx(L, 2, &ok);
    if (!ok || n < 0 || n > IMP_QP_DENSE_LIMIT) return luaL_error(L, "world.qp_dense_max: must be an integer in [0, %d]", IMP_QP_DENSE_LIMIT);
    imp_qp_set_dense_max(w, (int)n);
    return 0;
}

/* ---- properties: the constraint solver (tinkertoys) -------------------------------------------------------- */

/* listed with the default first; CONSTRAINT_PRECONDITIONERS[k] is the preconditioner of name k */
static const char *const PRECONDITIONER_NAMES[] = {"ic", "jacobi", "none", NULL};
static const imp_preconditioner CONSTRAINT_PRECONDITIONERS[] = {IMP_PRECOND_IC0, IMP_PRECOND_JACOBI, IMP_PRECOND_NONE};

static int world_get_constraint_ks(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_check_world(L, 1)).ks); return 1; }
static int world_get_constraint_kd(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_check_world(L, 1)).kd); return 1; }
static int world_get_constraint_tolerance(lua_State *L) { lua_pushnumber(L, imp_world_constraint_settings(impl_check_world(L, 1)).tolerance); return 1; }
static int world_get_constraint_max_iterations(lua_State *L) { lua_pushinteger(L, imp_world_constraint_settings(impl_check_world(L, 1)).max_iterations); return 1; }
static int world_get_constraint_preconditioner(lua_State *L)
{
    imp_preconditioner p = imp_world_constraint_settings(impl_check_world(L, 1)).preconditioner;
    for (int k = 0; PRECONDITIONER_NAMES[k]; k++)
        if (CONSTRAINT_PRECONDITIONERS[k] == p) lua_pushstring(L, PRECONDITIONER_NAMES[k]);
    return 1;
}

/* the new value of a numeric constraint setting: a finite number, read after the world is checked */
static double constraint_setting(lua_State *L, const char *what, imp_constraint_settings *s)
{
    *s = imp_world_constraint_settings(impl_check_world_unlocked(L, 1, what)->w);
    int ok;
    double v = lua_tonumberx(L, 2, &ok);
    if (!ok || !isfinite(v)) luaL_error(L, "%s must be a number (got %s)", what, luaL_typename(L, 2));
    return v;
}
static int world_set_constraint_ks(lua_State *L)
{
    imp_constraint_settings s;
    double v = constraint_setting(L, "world.constraint_ks", &s);
    if (v < 0) return luaL_error(L, "world.constraint_ks must be >= 0 (got %f)", v);
    s.ks = v;
    imp_world_set_constraint_settings(impl_check_world(L, 1), &s);
    return 0;
}
static int world_set_constraint_kd(lua_State *L)
{
    imp_constraint_settings s;
    double v = constraint_setting(L, "world.constraint_kd", &s);
    if (v < 0) return luaL_error(L, "world.constraint_kd must be >= 0 (got %f)", v);
    s.kd = v;
    imp_world_set_constraint_settings(impl_check_world(L, 1), &s);
    return 0;
}
static int world_set_constraint_tolerance(lua_State *L)
{
    imp_constraint_settings s;
    double v = constraint_setting(L, "world.constraint_tolerance", &s);
    if (!(v > 0)) return luaL_error(L, "world.constraint_tolerance must be > 0 (got %f)", v);
    s.tolerance = v;
    imp_world_set_constraint_settings(impl_check_world(L, 1), &s);
    return 0;
}
static int world_set_constraint_max_iterations(lua_State *L)
{
    imp_constraint_settings s;
    double v = constraint_setting(L, "world.constraint_max_iterations", &s);
    if (!(v >= 0 && v <= INT_MAX) || v != floor(v)) return luaL_error(L, "world.constraint_max_iterations must be a whole number >= 0 (0: automatic)");
    s.max_iterations = (int)v;
    imp_world_set_constraint_settings(impl_check_world(L, 1), &s);
    return 0;
}
static int world_set_constraint_preconditioner(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.constraint_preconditioner");
    imp_constraint_settings s = imp_world_constraint_settings(world->w);
    s.preconditioner = CONSTRAINT_PRECONDITIONERS[impl_check_option(L, 2, "world.constraint_preconditioner", PRECONDITIONER_NAMES)];
    imp_world_set_constraint_settings(world->w, &s);
    return 0;
}

/* ---- properties: the implicit integrator (cloth and hair) ------------------------------------------------------- */

static const char *const JACOBIAN_NAMES[] = {"definite", "full", NULL}; /* full_jacobian = false, true */

static int world_get_cg_tolerance(lua_State *L) { lua_pushnumber(L, imp_world_implicit(impl_check_world(L, 1)).cg_tolerance); return 1; }
static int world_get_cg_max_iterations(lua_State *L) { lua_pushinteger(L, imp_world_implicit(impl_check_world(L, 1)).cg_max_iterations); return 1; }
static int world_get_jacobian(lua_State *L) { lua_pushstring(L, JACOBIAN_NAMES[imp_world_implicit(impl_check_world(L, 1)).full_jacobian]); return 1; }
static int world_set_cg_tolerance(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.cg_tolerance");
    double t = luaL_checknumber(L, 2);
    if (!(t > 0) || !(t < 1)) return luaL_error(L, "world.cg_tolerance must be in (0, 1) (got %f)", t);
    imp_implicit_settings s = imp_world_implicit(world->w);
    s.cg_tolerance = t;
    imp_world_set_implicit(world->w, &s);
    return 0;
}
static int world_set_cg_max_iterations(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.cg_max_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 1000000) return luaL_error(L, "world.cg_max_iterations must be in 1..1000000");
    imp_implicit_settings s = imp_world_implicit(world->w);
    s.cg_max_iterations = (int)n;
    imp_world_set_implicit(world->w, &s);
    return 0;
}
static int world_set_jacobian(lua_State *L)
{
    world_userdata *world = impl_check_world_unlocked(L, 1, "world.jacobian");
    imp_implicit_settings s = imp_world_implicit(world->w);
    s.full_jacobian = impl_check_option(L, 2, "world.jacobian", JACOBIAN_NAMES) == 1;
    imp_world_set_implicit(world->w, &s);
    return 0;
}

/* ---- the type ----------------------------------------------------------------------------------------------- */

int impl_open_world(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", world_gc}, {"__tostring", world_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {
        /* stepping and measuring */
        {"step", world_step},
        {"destroy", world_destroy},
        {"valid", world_valid},
        {"profile", world_profile},
        {"kinetic_energy", world_kinetic_energy},
        {"potential_energy", world_potential_energy},
        {"energy", world_energy},
        {"momentum", impl_world_momentum},
        {"snapshot", impl_world_snapshot},
        {"restore", impl_world_restore},
        {"jacobian_check", world_jacobian_check},
        /* particles and the forces between them (wrap_particle.c, wrap_spring.c, wrap_behavior.c, wrap_field.c) */
        {"particle", impl_world_particle},
        {"curve_particle", impl_world_curve_particle},
        {"particles", impl_world_particles},
        {"spring", impl_world_spring},
        {"behavior", impl_world_behavior},
        {"field", impl_world_field},
        /* static colliders, or rigid bodies (wrap_collider.c, wrap_body.c) */
        {"plane", impl_world_plane},
        {"sphere", world_sphere},
        {"box", world_box},
        {"capsule", impl_world_capsule},
        {"hull", impl_world_hull},
        {"mesh", impl_world_mesh},
        {"body", impl_world_body},
        {"bodies", impl_world_bodies},
        {"body_state", impl_world_body_state},
        {"set_body_state", impl_world_set_body_state},
        /* tinkertoy constraints (wrap_constraint.c) */
        {"rod", impl_world_rod},
        {"pin", impl_world_pin},
        {"wire", impl_world_wire},
        {"on_plane", impl_world_on_plane},
        {"on_line", impl_world_on_line},
        {"constraint", impl_world_constraint},
        {"constraints", impl_world_constraints},
        {"constraint_error", impl_world_constraint_error},
        {"solve_constraints", impl_world_solve_constraints},
        /* joints between bodies (wrap_joint.c) */
        {"joint", impl_world_joint},
        {"remove_joint", impl_world_remove_joint},
        /* cloth and hair (wrap_cloth.c, wrap_hair.c) */
        {"cloth", impl_world_cloth},
        {"hair", impl_world_hair},
        /* contacts and queries (wrap_world_contacts.c) */
        {"collide", impl_world_collide},
        {"contacts", impl_world_contacts},
        {"contact_events", impl_world_contact_events},
        {"pairs", impl_world_pairs},
        {"raycast", impl_world_raycast},
        {"query_point", impl_world_query_point},
        {"overlap", impl_world_overlap},
        {"overlaps", impl_world_overlaps},
        {"cast", impl_world_cast},
        {"broken_joints", impl_world_broken_joints},
        /* the exact contact mode's contact system (wrap_world_contacts.c) */
        {"contact_system", impl_world_contact_system},
        {"contact_accelerations", impl_world_contact_accelerations},
        {"contact_separations", impl_world_contact_separations},
        {"solve_contacts", impl_world_solve_contacts},
        {"resolve_collisions", impl_world_resolve_collisions},
        {"contact_stats", impl_world_contact_stats},
        {NULL, NULL}};
    static const luaL_Reg getters[] = {
        {"gravity", world_get_gravity},
        {"drag", world_get_drag},
        {"integrator", world_get_integrator},
        {"tolerance", world_get_tolerance},
        {"time", world_get_time},
        {"steps", world_get_steps},
        {"locked", world_get_locked},
        {"particle_count", world_get_particle_count},
        {"spring_count", world_get_spring_count},
        {"contact_count", world_get_contact_count},
        {"body_count", world_get_body_count},
        {"manifold_count", world_get_manifold_count},
        {"constraint_count", world_get_constraint_count},
        {"joint_hubs", world_get_joint_hubs},
        {"contact", world_get_contact},
        {"broadphase", world_get_broadphase},
        {"planar", world_get_planar},
        {"particle_collisions", world_get_particle_collisions},
        {"sleeping", world_get_sleeping},
        {"velocity_iterations", world_get_velocity_iterations},
        {"position_iterations", world_get_position_iterations},
        {"restitution", world_get_restitution},
        {"restitution_threshold", world_get_restitution_threshold},
        {"pre_solve", impl_world_get_pre_solve},
        {"friction", world_get_friction},
        {"qp_dense_max", world_get_qp_dense_max},
        {"constraint_ks", world_get_constraint_ks},
        {"constraint_kd", world_get_constraint_kd},
        {"constraint_tolerance", world_get_constraint_tolerance},
        {"constraint_max_iterations", world_get_constraint_max_iterations},
        {"constraint_preconditioner", world_get_constraint_preconditioner},
        {"cg_tolerance", world_get_cg_tolerance},
        {"cg_max_iterations", world_get_cg_max_iterations},
        {"jacobian", world_get_jacobian},
        {NULL, NULL}};
    static const luaL_Reg setters[] = {
        {"gravity", world_set_gravity},
        {"drag", world_set_drag},
        {"integrator", world_set_integrator},
        {"tolerance", world_set_tolerance},
        {"contact", world_set_contact},
        {"broadphase", world_set_broadphase},
        {"planar", world_set_planar},
        {"particle_collisions", world_set_particle_collisions},
        {"sleeping", world_set_sleeping},
        {"velocity_iterations", world_set_velocity_iterations},
        {"position_iterations", world_set_position_iterations},
        {"restitution", world_set_restitution},
        {"restitution_threshold", world_set_restitution_threshold},
        {"pre_solve", impl_world_set_pre_solve},
        {"friction", world_set_friction},
        {"qp_dense_max", world_set_qp_dense_max},
        {"constraint_ks", world_set_constraint_ks},
        {"constraint_kd", world_set_constraint_kd},
        {"constraint_tolerance", world_set_constraint_tolerance},
        {"constraint_max_iterations", world_set_constraint_max_iterations},
        {"constraint_preconditioner", world_set_constraint_preconditioner},
        {"cg_tolerance", world_set_cg_tolerance},
        {"cg_max_iterations", world_set_cg_max_iterations},
        {"jacobian", world_set_jacobian},
        {NULL, NULL}};
    static const impl_type type = {IMPL_WORLD, "world", meta, methods, getters, setters};
    impl_register_type(L, &type);
    world_census *census = lua_newuserdatauv(L, sizeof *census, 0);
    census->alive = 0;
    census->threshold = WORLDS_BEFORE_COLLECTION;
    lua_pushvalue(L, -1);
    luaL_ref(L, LUA_REGISTRYINDEX); /* lives as long as the state: every World points to it */
    lua_pushcclosure(L, world_new, 1);
    return 1;
}

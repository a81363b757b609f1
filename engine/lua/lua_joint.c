/* lua_joint.c: the impulse mode's joints (engine/joint.c, S1) for scripts.
 *
 *   world:joint{type = "point" | "hinge", a = body, b = body or nil (the world),
 *               anchor = {x, y, z} (world point now), axis = {x, y, z} (hinge: world axis now)} -> Joint
 *   joint:destroy(), joint:valid()
 *   joint.type, joint.a, joint.b, joint.gap (m: distance of the two articulation points now),
 *   joint.axis_error (hinge: |a_a x a_b|, the sine of the angle between the two bodies' axes)
 *
 * world:joint without `type` is the QP mode's {a, b, point, fixed} (lua_qp.c), which returns an index. */
#include <string.h>

#include "imp_lua.h"

#define IMPL_JOINT "impetus.Joint"

static const char *const TYPE_NAMES[] = {"point", "hinge", NULL};

int impl_world_joint_impulse(lua_State *L)
{
    const char *fn = "world:joint";
    lworld *lw = impl_checkunlocked(L, 1, fn);
    imp_world *w = lw->w;
    static const char *const keys[] = {"type", "a", "b", "anchor", "axis", NULL};
    impl_check_keys(L, 2, fn, keys);
    if (imp_world_contact_mode(w) == IMP_CONTACT_QP)
        return luaL_error(L, "%s: joints with a 'type' belong to the impulse mode; in world.contact = \"qp\" use world:joint{a, b, point}", fn);
    imp_joint_def d;
    memset(&d, 0, sizeof d);
    lua_getfield(L, 2, "type");
    if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "%s: field 'type' must be \"point\" or \"hinge\"", fn);
    const char *t = lua_tostring(L, -1);
    int k = 0;
    while (TYPE_NAMES[k] && strcmp(TYPE_NAMES[k], t)) k++;
    if (!TYPE_NAMES[k])
        return luaL_error(L, "%s: field 'type' must be \"point\" or \"hinge\" (got \"%s\"; rigid, prismatic and the others are not built yet)", fn, t);
    d.type = (imp_joint_type)k;
    lua_getfield(L, 2, "a");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'a' (a body) is required", fn);
    if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'a' must be a body", fn);
    d.a = impl_checkhandle(L, lua_gettop(L), IMPL_BODY, imp_body_valid)->id;
    lua_getfield(L, 2, "b");
    if (!lua_isnil(L, -1)) {
        if (!luaL_testudata(L, -1, IMPL_BODY)) return luaL_error(L, "%s: field 'b' must be a body or nil (the world)", fn);
        d.b = impl_checkhandle(L, lua_gettop(L), IMPL_BODY, imp_body_valid)->id;
        if (d.a.index == d.b.index && d.a.generation == d.b.generation)
            return luaL_error(L, "%s: fields 'a' and 'b' must be two different bodies", fn);
    }
    lua_getfield(L, 2, "anchor");
    if (lua_isnil(L, -1)) return luaL_error(L, "%s: field 'anchor' (a world point {x, y, z}) is required", fn);
    d.anchor = impl_tovec3(L, lua_gettop(L), "world:joint: field 'anchor'");
    if (!v3_finite(d.anchor)) return luaL_error(L, "%s: field 'anchor' must be finite", fn);
    lua_getfield(L, 2, "axis");
    if (d.type == IMP_JOINT_HINGE) {
        if (lua_isnil(L, -1)) return luaL_error(L, "%s: a hinge needs field 'axis' (a world direction {x, y, z})", fn);
        d.axis = impl_tovec3(L, lua_gettop(L), "world:joint: field 'axis'");
        if (!v3_finite(d.axis) || !(v3_len(d.axis) > 1e-9)) return luaL_error(L, "%s: field 'axis' must be a finite non-zero vector", fn);
    } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "%s: field 'axis' is for hinges only", fn);
    }
    imp_id id = imp_joint_create(w, &d);
    if (imp_id_is_null(id)) return luaL_error(L, "%s: could not create the joint (stale body?)", fn);
    impl_pushhandle(L, 1, IMPL_JOINT, id);
    return 1;
}

static lhandle *J(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_JOINT);
    if (!imp_joint_valid(h->lw->w, h->id)) luaL_error(L, "joint: this joint was destroyed");
    return h;
}

static int j_destroy(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_JOINT);
    if (!imp_joint_valid(h->lw->w, h->id)) return 0;
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "joint:destroy: the world is locked while it steps; change it in update");
    imp_joint_destroy(h->lw->w, h->id);
    return 0;
}

static int j_valid(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_JOINT);
    lua_pushboolean(L, imp_joint_valid(h->lw->w, h->id) && imp_joint_bodies_live(h->lw->w, h->id));
    return 1;
}

static int j_tostring(lua_State *L)
{
    lhandle *h = luaL_checkudata(L, 1, IMPL_JOINT);
    if (!imp_joint_valid(h->lw->w, h->id)) lua_pushliteral(L, "Joint (destroyed)");
    else lua_pushfstring(L, "Joint #%d (%s)", (int)h->id.index, TYPE_NAMES[imp_joint_kind(h->lw->w, h->id)]);
    return 1;
}

static int g_type(lua_State *L) { lhandle *h = J(L); lua_pushstring(L, TYPE_NAMES[imp_joint_kind(h->lw->w, h->id)]); return 1; }
static int g_errors(lua_State *L, int which)
{
    lhandle *h = J(L);
    double gap = 0, ax = 0;
    if (!imp_joint_errors(h->lw->w, h->id, &gap, &ax)) return luaL_error(L, "joint: a body of this joint was destroyed");
    lua_pushnumber(L, which ? ax : gap);
    return 1;
}
static int g_gap(lua_State *L) { return g_errors(L, 0); }
static int g_axis_error(lua_State *L) { return g_errors(L, 1); }

void impl_open_joint(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__tostring", j_tostring}, {NULL, NULL}};
    static const luaL_Reg methods[] = {{"destroy", j_destroy}, {"valid", j_valid}, {NULL, NULL}};
    static const luaL_Reg getters[] = {{"type", g_type}, {"gap", g_gap}, {"axis_error", g_axis_error}, {NULL, NULL}};
    impl_register_type(L, IMPL_JOINT, meta, methods);
    impl_set_accessors(L, IMPL_JOINT, getters, NULL);
}

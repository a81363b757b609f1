/* lua_impulse.c: the impulse contact mode's settings (world.contact, world.planar, ...), body
 * materials (friction, static_friction, restitution), bullets and sleeping. */
#include <string.h>

#include "imp_lua.h"

#define B(L) impl_checkhandle(L, 1, IMPL_BODY, imp_body_valid)

static double material_field(lua_State *L, int idx, const char *fn, const char *key, double def, double hi)
{
    double v = impl_field_number(L, idx, fn, key, def);
    if (v == def) return v;
    if (!(v >= 0 && v <= hi)) luaL_error(L, "%s: field '%s' must be a number in 0 .. %d (got %f)", fn, key, (int)hi, v);
    return v;
}

void impl_read_material(lua_State *L, int idx, const char *fn, imp_shape_def *s)
{
    s->friction = material_field(L, idx, fn, "friction", s->friction, 1e6);
    s->static_friction = material_field(L, idx, fn, "static_friction", s->static_friction, 1e6);
    s->restitution = material_field(L, idx, fn, "restitution", s->restitution, 1);
}

/* ---- world ---- */
static int get_contact(lua_State *L)
{
    imp_contact_mode m = imp_world_contact_mode(impl_checkworld(L, 1)->w);
    lua_pushstring(L, m == IMP_CONTACT_QP ? "qp" : m == IMP_CONTACT_NONE ? "none" : "impulse");
    return 1;
}
static int set_contact(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.contact");
    const char *s = luaL_checkstring(L, 2);
    if (!strcmp(s, "impulse")) imp_world_set_contact_mode(lw->w, IMP_CONTACT_IMPULSE);
    else if (!strcmp(s, "none")) imp_world_set_contact_mode(lw->w, IMP_CONTACT_NONE);
    else if (!strcmp(s, "qp")) imp_world_set_contact_mode(lw->w, IMP_CONTACT_QP);
    else return luaL_error(L, "world.contact must be \"impulse\", \"qp\" or \"none\" (got \"%s\")", s);
    return 0;
}
static int get_planar(lua_State *L) { lua_pushboolean(L, imp_world_planar(impl_checkworld(L, 1)->w)); return 1; }
static int set_planar(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.planar");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world_set_planar(lw->w, lua_toboolean(L, 2));
    return 0;
}
static int get_sleeping(lua_State *L) { lua_pushboolean(L, imp_world_sleeping(impl_checkworld(L, 1)->w)); return 1; }
static int set_sleeping(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.sleeping");
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_world_set_sleeping(lw->w, lua_toboolean(L, 2));
    return 0;
}
static int get_viter(lua_State *L) { int v, p; imp_world_iterations(impl_checkworld(L, 1)->w, &v, &p); lua_pushinteger(L, v); return 1; }
static int get_piter(lua_State *L) { int v, p; imp_world_iterations(impl_checkworld(L, 1)->w, &v, &p); lua_pushinteger(L, p); return 1; }
static int set_viter(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.velocity_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1 || n > 1000) return luaL_error(L, "world.velocity_iterations must be in 1 .. 1000 (got %d)", (int)n);
    imp_world_set_iterations(lw->w, (int)n, -1);
    return 0;
}
static int set_piter(lua_State *L)
{
    lworld *lw = impl_checkunlocked(L, 1, "world.position_iterations");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 0 || n > 1000) return luaL_error(L, "world.position_iterations must be in 0 .. 1000 (got %d)", (int)n);
    imp_world_set_iterations(lw->w, 0, (int)n);
    return 0;
}

/* ---- body ---- */
static int g_material(lua_State *L, int which)
{
    lhandle *h = B(L);
    double m[3] = {0, 0, 0};
    imp_body_shape_material(h->lw->w, h->id, 0, &m[0], &m[1], &m[2]);
    lua_pushnumber(L, m[which]);
    return 1;
}
static int s_material(lua_State *L, int which, const char *what, double hi)
{
    lhandle *h = B(L);
    if (imp_world_locked(h->lw->w)) return luaL_error(L, "%s: the world is locked while it steps; change it in update", what);
    double v = luaL_checknumber(L, 2);
    if (!(v >= 0 && v <= hi)) return luaL_error(L, "%s must be a number in 0 .. %d (got %f)", what, (int)hi, v);
    double m[3] = {-1, -1, -1};
    m[which] = v;
    imp_body_set_material(h->lw->w, h->id, -1, m[0], m[1], m[2]);
    return 0;
}
static int g_friction(lua_State *L) { return g_material(L, 0); }
static int g_static_friction(lua_State *L) { return g_material(L, 1); }
static int g_restitution(lua_State *L) { return g_material(L, 2); }
static int s_friction(lua_State *L) { return s_material(L, 0, "body.friction", 1e6); }
static int s_static_friction(lua_State *L) { return s_material(L, 1, "body.static_friction", 1e6); }
static int s_restitution(lua_State *L) { return s_material(L, 2, "body.restitution", 1); }
static int g_bullet(lua_State *L) { lhandle *h = B(L); lua_pushboolean(L, imp_body_bullet(h->lw->w, h->id)); return 1; }
static int s_bullet(lua_State *L)
{
    lhandle *h = B(L);
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    imp_body_set_bullet(h->lw->w, h->id, lua_toboolean(L, 2));
    return 0;
}
static int g_damping(lua_State *L, int which)
{
    lhandle *h = B(L);
    double d[2];
    imp_body_damping(h->lw->w, h->id, &d[0], &d[1]);
    lua_pushnumber(L, d[which]);
    return 1;
}
static int s_damping(lua_State *L, int which, const char *what)
{
    lhandle *h = B(L);
    double v = luaL_checknumber(L, 2), d[2];
    if (!(v >= 0 && v <= IMP_MAX_DAMPING)) return luaL_error(L, "%s must be a number in 0 .. 1e6 (1/s) (got %f)", what, v);
    imp_body_damping(h->lw->w, h->id, &d[0], &d[1]);
    d[which] = v;
    imp_body_set_damping(h->lw->w, h->id, d[0], d[1]);
    return 0;
}
static int g_linear_damping(lua_State *L) { return g_damping(L, 0); }
static int g_angular_damping(lua_State *L) { return g_damping(L, 1); }
static int s_linear_damping(lua_State *L) { return s_damping(L, 0, "body.linear_damping"); }
static int s_angular_damping(lua_State *L) { return s_damping(L, 1, "body.angular_damping"); }
static int get_joint_hubs(lua_State *L)
{
    lworld *lw = impl_checkworld(L, 1);
    lua_pushinteger(L, imp_joint_hub_count(lw->w));
    return 1;
}
static int g_asleep(lua_State *L) { lhandle *h = B(L); lua_pushboolean(L, imp_body_asleep(h->lw->w, h->id)); return 1; }
static int b_wake(lua_State *L) { lhandle *h = B(L); imp_body_wake(h->lw->w, h->id); return 0; }

static void add_to(lua_State *L, const char *type, const char *which, const luaL_Reg *fns)
{
    luaL_getmetatable(L, type);
    lua_getfield(L, -1, which);
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 2);
}

void impl_open_impulse(lua_State *L)
{
    static const luaL_Reg wg[] = {{"contact", get_contact}, {"planar", get_planar}, {"sleeping", get_sleeping}, {"joint_hubs", get_joint_hubs},
                                  {"velocity_iterations", get_viter}, {"position_iterations", get_piter}, {NULL, NULL}};
    static const luaL_Reg ws[] = {{"contact", set_contact}, {"planar", set_planar}, {"sleeping", set_sleeping},
                                  {"velocity_iterations", set_viter}, {"position_iterations", set_piter}, {NULL, NULL}};
    add_to(L, IMPL_WORLD, "getters", wg);
    add_to(L, IMPL_WORLD, "setters", ws);
    static const luaL_Reg bg[] = {{"friction", g_friction}, {"static_friction", g_static_friction}, {"restitution", g_restitution},
                                  {"bullet", g_bullet}, {"asleep", g_asleep}, {"linear_damping", g_linear_damping},
                                  {"angular_damping", g_angular_damping}, {NULL, NULL}};
    static const luaL_Reg bs[] = {{"friction", s_friction}, {"static_friction", s_static_friction}, {"restitution", s_restitution},
                                  {"bullet", s_bullet}, {"linear_damping", s_linear_damping},
                                  {"angular_damping", s_angular_damping}, {NULL, NULL}};
    static const luaL_Reg bm[] = {{"wake", b_wake}, {NULL, NULL}};
    add_to(L, IMPL_BODY, "getters", bg);
    add_to(L, IMPL_BODY, "setters", bs);
    add_to(L, IMPL_BODY, "methods", bm);
}

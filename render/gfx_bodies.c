/* gfx_bodies.c: drawing rigid bodies and collision debug views through impetus.h only.
 *
 *   gfx_draw_bodies(world)   every body shape lit: spheres and boxes instanced, capsules as two
 *                            spheres and a cylinder, hulls and meshes as triangles with face normals,
 *                            planes as ground (rnd_plane); a body whose colour has alpha 0 is hidden
 *   gfx.debug{contacts, aabbs, centers, velocities}   toggles (returns the current settings)
 *   drawn over the bodies: contacts: points (yellow crosses) and normals (red, 0.25 m); aabbs: body bounds (green); centers: a
 *   cross at each centre of mass; velocities: v (cyan, 0.25 s worth) and omega (magenta). */
#include <stdlib.h>
#include <string.h>

#include "../engine/lua/imp_lua.h"
#include "render.h"

static struct { int contacts, aabbs, centers, velocities; } dbg;

typedef struct fbuf { float *p; size_t n, cap; } fbuf;
static fbuf sph, sph_col, box_xf, box_half, box_col, tri_pos, tri_nrm;

static float *fb_push(fbuf *b, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n) cap *= 2;
        float *p = realloc(b->p, cap * sizeof(float));
        if (!p) return NULL;
        b->p = p, b->cap = cap;
    }
    float *r = b->p + b->n;
    b->n += n;
    return r;
}

static void f3(float *o, imp_vec3 v) { o[0] = (float)v.x, o[1] = (float)v.y, o[2] = (float)v.z; }

static void xform_of(const imp_shape_info *s, float xf[12])
{
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++) xf[3 * col + row] = (float)s->rotation.m[row][col];
    f3(xf + 9, s->position);
}

/* triangles of a hull or mesh, flat-shaded with each triangle's normal */
static void draw_triangles(const imp_shape_info *s, const float rgba[4])
{
    tri_pos.n = tri_nrm.n = 0;
    for (int t = 0; t < s->triangle_count; t++) {
        imp_vec3 v[3];
        for (int k = 0; k < 3; k++)
            v[k] = v3_add(s->position, m3_mul_v(s->rotation, v3_load(s->vertices + 3 * s->triangles[3 * t + k])));
        imp_vec3 n = v3_normalize(v3_cross(v3_sub(v[1], v[0]), v3_sub(v[2], v[0])));
        float *p = fb_push(&tri_pos, 9), *q = fb_push(&tri_nrm, 9);
        if (!p || !q) return;
        for (int k = 0; k < 3; k++) f3(p + 3 * k, v[k]), f3(q + 3 * k, n);
    }
    rnd_triangles(s->triangle_count, tri_pos.p, tri_nrm.p, rgba);
}

/* debug lines are drawn over the bodies, so contacts inside them stay visible */
static void line3(imp_vec3 a, imp_vec3 b, const float c[4])
{
    float fa[3], fb[3];
    f3(fa, a), f3(fb, b);
    rnd_line_xray(fa, fb, c);
}

static void draw_debug(imp_world *w)
{
    static const float yellow[4] = {1, 0.9f, 0.2f, 1}, red[4] = {1, 0.25f, 0.2f, 1}, green[4] = {0.3f, 1, 0.4f, 0.8f},
                       white[4] = {1, 1, 1, 1}, cyan[4] = {0.3f, 0.9f, 1, 1}, magenta[4] = {1, 0.4f, 1, 1};
    if (dbg.contacts) {
        for (int i = 0; i < imp_world_contact_count(w); i++) {
            const imp_contact *c = imp_world_contact(w, i);
            for (int k = 0; k < c->count; k++) {
                imp_vec3 p = c->points[k];
                const double r = 0.04;
                line3(v3(p.x - r, p.y, p.z), v3(p.x + r, p.y, p.z), yellow);
                line3(v3(p.x, p.y - r, p.z), v3(p.x, p.y + r, p.z), yellow);
                line3(v3(p.x, p.y, p.z - r), v3(p.x, p.y, p.z + r), yellow);
                line3(p, v3_mad(p, c->normal, 0.25), red);
            }
        }
    }
    for (int i = 0; i < imp_body_count(w); i++) {
        imp_id id = imp_body_id(w, i);
        if (dbg.aabbs) {
            imp_vec3 lo, hi;
            imp_body_aabb(w, id, &lo, &hi);
            if (hi.x - lo.x < 1e6) {
                for (int e = 0; e < 12; e++) {
                    int axis = e / 4, a = (axis + 1) % 3, b = (axis + 2) % 3;
                    double p0[3] = {lo.x, lo.y, lo.z}, p1[3];
                    const double L[3] = {lo.x, lo.y, lo.z}, H[3] = {hi.x, hi.y, hi.z};
                    p0[a] = (e & 1) ? H[a] : L[a], p0[b] = (e & 2) ? H[b] : L[b];
                    memcpy(p1, p0, sizeof p1);
                    p0[axis] = L[axis], p1[axis] = H[axis];
                    line3(v3(p0[0], p0[1], p0[2]), v3(p1[0], p1[1], p1[2]), green);
                }
            }
        }
        imp_vec3 x = imp_body_center_of_mass(w, id);
        if (dbg.centers && imp_body_motion(w, id) != IMP_FIXED) {
            const double r = 0.08;
            line3(v3(x.x - r, x.y, x.z), v3(x.x + r, x.y, x.z), white);
            line3(v3(x.x, x.y - r, x.z), v3(x.x, x.y + r, x.z), white);
            line3(v3(x.x, x.y, x.z - r), v3(x.x, x.y, x.z + r), white);
        }
        if (dbg.velocities && imp_body_motion(w, id) != IMP_FIXED) {
            line3(x, v3_mad(x, imp_body_velocity(w, id), 0.25), cyan);
            line3(x, v3_mad(x, imp_body_angular_velocity(w, id), 0.1), magenta);
        }
    }
}

void gfx_draw_bodies(imp_world *w)
{
    sph.n = sph_col.n = box_xf.n = box_half.n = box_col.n = 0;
    for (int i = 0; i < imp_body_count(w); i++) {
        imp_id id = imp_body_id(w, i);
        float color[4];
        imp_body_color(w, id, color);
        if (color[3] <= 0.0f) continue; /* alpha 0: hidden (a sprite may stand for it) */
        if (imp_body_motion(w, id) == IMP_FIXED) color[0] *= 0.7f, color[1] *= 0.7f, color[2] *= 0.7f;
        for (int k = 0; k < imp_body_shape_count(w, id); k++) {
            imp_shape_info s = imp_body_shape(w, id, k);
            float xf[12];
            xform_of(&s, xf);
            switch (s.type) {
            case IMP_SHAPE_SPHERE: {
                float *p = fb_push(&sph, 4), *c = fb_push(&sph_col, 4);
                if (!p || !c) break;
                f3(p, s.position), p[3] = (float)s.radius;
                memcpy(c, color, sizeof color);
                break;
            }
            case IMP_SHAPE_BOX: {
                float *p = fb_push(&box_xf, 12), *h = fb_push(&box_half, 3), *c = fb_push(&box_col, 4);
                if (!p || !h || !c) break;
                memcpy(p, xf, sizeof xf), f3(h, s.half), memcpy(c, color, sizeof color);
                break;
            }
            case IMP_SHAPE_CAPSULE: rnd_capsule(xf, (float)s.radius, (float)s.half_height, color); break;
            case IMP_SHAPE_HULL:
            case IMP_SHAPE_MESH: draw_triangles(&s, color); break;
            case IMP_SHAPE_PLANE: {
                float point[3], normal[3];
                f3(point, s.position), f3(normal, s.normal);
                rnd_plane(point, normal, color);
                break;
            }
            default: break;
            }
        }
    }
    rnd_spheres((int)(sph.n / 4), sph.p, sph_col.p);
    rnd_boxes((int)(box_half.n / 3), box_xf.p, box_half.p, box_col.p);
    draw_debug(w);
}

/* gfx.debug{contacts = bool, aabbs = bool, centers = bool, velocities = bool} -> current settings */
static int gfx_debug(lua_State *L)
{
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        static const char *const keys[] = {"contacts", "aabbs", "centers", "velocities", NULL};
        impl_check_keys(L, 1, "gfx.debug", keys);
        dbg.contacts = impl_field_bool(L, 1, "gfx.debug", "contacts", dbg.contacts);
        dbg.aabbs = impl_field_bool(L, 1, "gfx.debug", "aabbs", dbg.aabbs);
        dbg.centers = impl_field_bool(L, 1, "gfx.debug", "centers", dbg.centers);
        dbg.velocities = impl_field_bool(L, 1, "gfx.debug", "velocities", dbg.velocities);
    }
    lua_createtable(L, 0, 4);
    lua_pushboolean(L, dbg.contacts), lua_setfield(L, -2, "contacts");
    lua_pushboolean(L, dbg.aabbs), lua_setfield(L, -2, "aabbs");
    lua_pushboolean(L, dbg.centers), lua_setfield(L, -2, "centers");
    lua_pushboolean(L, dbg.velocities), lua_setfield(L, -2, "velocities");
    return 1;
}

/* adds gfx.debug to the gfx table on top of the stack */
void gfx_bodies_register(lua_State *L)
{
    lua_pushcfunction(L, gfx_debug);
    lua_setfield(L, -2, "debug");
}

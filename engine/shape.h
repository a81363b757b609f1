/* shape.h: the shapes bodies are made of, placed in the world, and their store (shape.c). */
#ifndef IMPETUS_SHAPE_H
#define IMPETUS_SHAPE_H

#include "hull.h"
#include "ids.h"

/* a static triangle mesh (shape.c), with a bounding volume hierarchy over its triangles */
typedef struct mesh_node {
    imp_vec3 lo, hi;      /* local bounds of the triangles below   */
    int left, right;      /* inner: the children; leaf: order[left .. left + count) */
    int count;            /* triangles of a leaf, 0 for an inner node */
} mesh_node;

typedef struct mesh {
    int nv, nt, nnodes;
    double *v;
    int *tri;
    imp_vec3 *n;          /* unit normal per triangle              */
    imp_vec3 lo, hi;      /* local bounds                          */
    mesh_node *nodes;     /* nodes[0] is the root                  */
    int *order;           /* triangle indices in leaf order        */
} mesh;

/* triangles of m whose bounds meet the local box [lo, hi]: calls fn(ctx, t) for each */
void mesh_query(const mesh *m, imp_vec3 lo, imp_vec3 hi, void (*fn)(void *ctx, int t), void *ctx);

typedef struct shape {
    imp_shape_type type;
    uint32_t body;        /* slot of its body                      */
    int index;            /* its index in the body                 */
    imp_vec3 lpos;        /* pose relative to the body origin      */
    imp_quat lq;
    double radius, half_height, offset;
    imp_vec3 half, normal;
    hull *hull;
    mesh *mesh;
    double mass, volume;
    double friction, static_friction, restitution; /* contact material (impulse.c); static < 0: as friction */
    bool sensor, pre_solve; /* detects overlaps, never pushes (sensor.c); its contacts go to pre_solve   */
    imp_vec3 center;      /* centre of mass, shape frame           */
    imp_mat3 inertia;     /* about it, shape frame                 */
    /* world placement: written by the collide stage (shape_update) */
    imp_vec3 wpos;
    imp_mat3 wrot;
    imp_vec3 lo, hi;
} shape;

/* the shape store: every body's shapes, dense by id (shape.c) */
/* a shape added or removed since the broad phase last looked (it replays them in order: bp_sync) */
typedef struct shape_change {
    imp_id id;
    uint8_t removed, plane;
} shape_change;

typedef struct shape_store {
    idtable ids;
    shape *shape;
    int cap;
    shape_change *changes; int change_count, change_cap;
} shape_store;

/* m: shapes this close count as touching. Bounds grow by it and the narrow phase reports such a pair
 * (its points at a negative depth, which the impulse mode lets close and no more; the exact mode takes
 * pairs that touch), so bodies built exactly touching at rounded coordinates (0.1 + 0.2 is not 0.3)
 * touch, and a resting contact lifted by the solver's micrometres stays a contact: a box of the
 * 210-box pyramid lifted 2 um lost its supports for a step and fell onto them */
#define SHAPE_TOUCH 1e-4

/* world-space geometry the narrow phase works on: a body shape placed, or a particle collider */
typedef struct geom {
    imp_shape_type type;
    imp_vec3 p;
    imp_mat3 R;
    double radius, half_height, offset;
    imp_vec3 half, normal;
    const hull *hull;
    const mesh *mesh;
    imp_vec3 lo, hi;
} geom;

/* shape.c */
void shape_place(shape *s, const double *X, imp_vec3 com); /* world pose and bounds from its body's state */
void shapes_log(shape_store *st, imp_id id, bool removed, bool plane);
void shape_geom(const shape *s, geom *g);
void shape_geom_from_collider(const imp_collider_def *c, geom *g);
void shape_geom_bounds(geom *g);
void shape_free(shape *s);
bool shape_build(shape *s, const imp_shape_def *def, char *err, size_t errlen);

#endif

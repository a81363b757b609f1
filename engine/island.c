/* island.c: the contact graph of the impulse mode: islands, levels and sleeping (S1 section VI, after
 * Guendelman, Bridson and Fedkiw 2003).
 *
 * The graph's nodes are the bodies and the static world (index n); its edges are the touching pairs
 * where something can move and the joints. Islands are its connected components over the bodies that
 * move (union-find with path halving); they sleep and wake as one. A body's level is its distance in
 * the graph from anything that does not move (static and kinematic bodies, sleepers, the world: level
 * 0), found by breadth-first search; shock propagation solves the levels bottom up (impulse.c). A body
 * with no path to the ground gets ISLAND_MAX_LEVEL, after all others.
 *
 * Sleeping: a body whose speed and angular speed stay below SLEEP_SPEED, and that the split impulses
 * push out of an overlap slower than SLEEP_PUSH, accumulates sleep time; when every body of its island
 * has done so for SLEEP_TIME, the island sleeps (momenta zeroed: it stops moving until something wakes
 * it). A sleeper keeps its overlaps, so a stack must first be pushed out to within the slop: a column of
 * ten boxes landing on each other at up to 6.5 m/s comes to rest in a third of a second with 12 mm
 * of overlap at each interface, which the split impulses take about six seconds to remove. (A push of
 * SLEEP_PUSH is what 0.04 mm of overlap beyond the slop gives at dt 1/60: beta 0.2 of it a step.) */
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "ids.h"
#include "island.h"
#include "world_parts.h"

#define SLEEP_SPEED 0.05 /* m/s and rad/s */
#define SLEEP_TIME 0.5   /* s             */
#define SLEEP_PUSH 5e-4  /* m/s and rad/s: the split impulses' pseudo velocities */

void islands_free(islands *g)
{
    free(g->level), free(g->root), free(g->adj_start), free(g->adj), free(g->queue);
    memset(g, 0, sizeof *g);
}

void islands_begin(islands *g, const solver_bodies *sb)
{
    const int n = sb->n;
    if (n + 2 > g->cap) {
        int c = (n + 2) * 3 / 2 + 16;
        g->level = ids_grow(g->level, sizeof(int), c), g->root = ids_grow(g->root, sizeof(int), c);
        g->adj_start = ids_grow(g->adj_start, sizeof(int), c + 1), g->queue = ids_grow(g->queue, sizeof(int), c);
        g->cap = c;
    }
    for (int i = 0; i <= n; i++) g->root[i] = i, g->level[i] = sb->im[i] > 0 ? -1 : 0;
    for (int i = 0; i <= n + 1; i++) g->adj_start[i] = 0;
    g->edges = 0;
}

/* offsets from the counts; the queue holds each node's fill cursor until the search */
void islands_edges_done(islands *g, int n)
{
    if (2 * g->edges > g->edge_cap) {
        g->edge_cap = 2 * g->edges * 3 / 2 + 64;
        g->adj = ids_grow(g->adj, sizeof(int), g->edge_cap);
    }
    for (int i = 0; i < n + 1; i++) g->adj_start[i + 1] += g->adj_start[i];
    for (int i = 0; i <= n; i++) g->queue[i] = g->adj_start[i];
}

void islands_levels(islands *g, int n)
{
    int head = 0, tail = 0;
    for (int i = 0; i <= n; i++)
        if (g->level[i] == 0) g->queue[tail++] = i;
    while (head < tail) {
        int i = g->queue[head++];
        for (int e = g->adj_start[i]; e < g->adj_start[i + 1]; e++) {
            int j = g->adj[e];
            if (g->level[j] < 0)
                g->level[j] = g->level[i] + 1 > ISLAND_MAX_LEVEL ? ISLAND_MAX_LEVEL : g->level[i] + 1, g->queue[tail++] = j;
        }
    }
    for (int i = 0; i <= n; i++)
        if (g->level[i] < 0) g->level[i] = ISLAND_MAX_LEVEL; /* not connected to the ground: after all others */
}

bool islands_wake_touched(imp_world *w, int x, int y, const solver_bodies *sb)
{
    const int n = sb->n;
    if (x >= n || y >= n) return false;
    body *bx = &w->bodies->body[x];
    const body *by = &w->bodies->body[y];
    if (bx->motion != IMP_DYNAMIC || !bx->asleep || by->asleep) return false;
    if (!(by->motion == IMP_KINEMATIC ? v3_len(sb->v[y]) + v3_len(sb->w[y]) > 0
                                      : by->motion == IMP_DYNAMIC && by->sleep_time < SLEEP_TIME))
        return false;
    const double *X = w->bodies->state + BODY_DIM * x;
    bx->asleep = 0, bx->sleep_time = 0;
    imp_mat3 R = quat_to_m3(quat_normalize(quat(X[3], X[4], X[5], X[6])));
    sb->Iinv[x] = m3_rotate_tensor(R, bx->Ibody_inv), sb->im[x] = bx->inv_mass;
    return true;
}

void islands_sleep(imp_world *w, islands *g, const solver_bodies *sb, const uint8_t *held)
{
    const int n = sb->n;
    for (int i = 0; i < n; i++) {
        body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC || b->asleep) continue;
        const double *X = w->bodies->state + BODY_DIM * i;
        imp_vec3 v = v3_scale(v3_load(X + 7), b->inv_mass), om = m3_mul_v(sb->Iinv[i], v3_load(X + 10));
        const bool resting = v3_len(v) < SLEEP_SPEED && v3_len(om) < SLEEP_SPEED && v3_len(sb->vp[i]) < SLEEP_PUSH &&
                             v3_len(sb->wp[i]) < SLEEP_PUSH;
        if (held[i] && resting) b->sleep_time += (float)sb->h;
        else b->sleep_time = 0;
    }
    /* the island's least sleep time (ms), kept at its root in level (the levels are used up) */
    for (int i = 0; i < n; i++) g->level[i] = 1 << 30;
    for (int i = 0; i < n; i++) {
        const body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC || b->asleep) continue;
        int r = islands_find(g, i);
        int ms = (int)(b->sleep_time * 1000);
        if (ms < g->level[r]) g->level[r] = ms;
    }
    for (int i = 0; i < n; i++) {
        body *b = &w->bodies->body[i];
        if (b->motion != IMP_DYNAMIC || b->asleep || !held[i]) continue;
        if (g->level[islands_find(g, i)] >= (int)(SLEEP_TIME * 1000)) {
            b->asleep = 1;
            memset(w->bodies->state + BODY_DIM * i + 7, 0, 6 * sizeof(double));
            /* the collide stage at the end of the step passes sleepers by: their shapes follow this
             * step's position update here */
            bodies_place_shapes(w, i);
        }
    }
}

/* island.h: the contact graph of the impulse mode (island.c): islands of bodies that touch or are
 * jointed, their levels (distance from the ground, for shock propagation), and sleeping. */
#ifndef IMPETUS_ISLAND_H
#define IMPETUS_ISLAND_H

#include "solver_bodies.h"

#define ISLAND_MAX_LEVEL 1023 /* levels are clamped here; a body not connected to the ground gets it */

typedef struct islands {
    int cap, edge_cap;
    int *level;          /* per body (n + 1): contact-graph level, 0 for what does not move          */
    int *root;           /* union-find parent: the islands of bodies that touch or are jointed       */
    int *adj_start;      /* n + 2 offsets into adj                                                   */
    int *adj, *queue;    /* the graph's neighbours (each edge twice); the search's queue             */
    int edges;           /* edges added since islands_begin                                          */
} islands;

void islands_free(islands *g);
/* n bodies: every body its own island, adjacency counters cleared; levels: 0 where im == 0 (does not
 * move), unknown elsewhere */
void islands_begin(islands *g, const solver_bodies *sb);
/* the island of body i: its root, halving the path on the way */
static inline int islands_find(islands *g, int i)
{
    int *uf = g->root;
    while (uf[i] != i) uf[i] = uf[uf[i]], i = uf[i];
    return i;
}

static inline void islands_union(islands *g, int a, int b)
{
    int ra = islands_find(g, a), rb = islands_find(g, b);
    if (ra != rb) g->root[ra] = rb;
}

/* the graph's edges: count them all (islands_count_edge), then islands_edges_done, then add them */
static inline void islands_count_edge(islands *g, int a, int b)
{
    g->adj_start[a + 1]++, g->adj_start[b + 1]++;
    g->edges++;
}
void islands_edges_done(islands *g, int n);
/* after islands_edges_done, the queue holds each node's fill cursor */
static inline void islands_add_edge(islands *g, int a, int b)
{
    g->adj[g->queue[a]++] = b;
    g->adj[g->queue[b]++] = a;
}
/* levels by breadth-first search from everything at level 0 */
void islands_levels(islands *g, int n);

struct imp_world;
/* a sleeping body touched by an awake moving one (dynamic or kinematic) wakes; true when it did */
bool islands_wake_touched(struct imp_world *w, int sleeper, int other, const solver_bodies *sb);
/* an island whose bodies have all been slower than the sleep speed for the sleep time falls asleep
 * (its momenta zeroed, its shapes placed); held: the bodies in the velocity stages this step */
void islands_sleep(struct imp_world *w, islands *g, const solver_bodies *sb, const uint8_t *held);

#endif

/* cloth.h: cloth and hair: the energies of Baraff and Witkin and of Kass (cloth.c). */
#ifndef IMPETUS_CLOTH_H
#define IMPETUS_CLOTH_H

#include "ids.h"
#include "parallel.h"
#include "particles.h"
#include "sparse.h"

/* cloth.c: forces of cloth and hair for the explicit integrators, their elastic energy, the
 * particle-removal hook, cleanup */
void cloth_forces(imp_world *w, const double *x, const double *v, double *f);
double cloth_energy(const imp_world *w);
void cloth_particle_removed(imp_world *w, uint32_t slot);
uint32_t *cloth_remove(imp_world *w, imp_id id, int *count);
int cloth_object_count(const imp_world *w);
/* the object (+1; 0: none) and vertex of each particle (dense); whether two of object k's vertices may
 * collide (particle_contact.c) */
void cloth_owners(const imp_world *w, int *owner, int *vertex);
bool cloth_self_pair(const imp_world *w, int k, int a, int b, double apart);
void cloth_free(imp_world *w);

struct asm_ctx;
/* cloth.c, for the implicit integrator: the coupled pairs of cloth and hair elements (2 ints each, dense indices) appended to
 * *pairs (grown with ids_grow; *count pairs so far, *cap capacity); then, once the matrix is
 * built, the block indices of every element; then the assembly */
void cloth_pairs(imp_world *w, int **pairs, int *count, int *cap);
/* also sorts each object's elements into groups: group c < PAR_CHUNKS holds the elements whose
 * particles all lie in rows [split[c], split[c + 1]); the others (they cross a chunk boundary) go to
 * group PAR_CHUNKS + c, c the chunk of their lowest row, when no particle of the object is in
 * crossing elements of two such groups, else all to group CLOTH_GROUPS - 1.
 * cloth_assemble(w, a, g) does group g, or all for g = -1. Groups c < PAR_CHUNKS may run at the
 * same time (they write disjoint rows), then groups PAR_CHUNKS + c (disjoint rows too, and each
 * row takes its crossing elements' terms in the order the single group had), then the last. */
#define CLOTH_GROUPS (2 * PAR_CHUNKS + 1)
void cloth_bind_blocks(imp_world *w, const bsr3 *A, const int *split);
void cloth_assemble(imp_world *w, struct asm_ctx *a, int group);

/* cloth and hair objects and their elements (cloth.c): here so that snapshot.c saves them */
typedef struct ctri {
    int v[3];
    double au[3], av[3]; /* w_u = sum au_i x_i, w_v = sum av_i x_i                       */
    double area, bu, bv, theta0;
    int block[9];        /* bsr3 block of vertex pair (i, j) at 3 i + j (cloth_bind_blocks)  */
} ctri;

typedef struct cbend {
    int v[4];            /* x0 x1: the edge (x0 -> x1 in the first triangle's winding); x2, x3 */
    double phi0, coef;   /* rest dihedral angle; A_e / l_perp^2                              */
    int block[16];
} cbend;

typedef struct cseg {
    int v[2];
    double rest;
    int block[4];
} cseg;

typedef struct cjoint {
    int v[3];
    double lbar;
    int block[9];
} cjoint;

typedef struct cobj {
    bool hair, clamped;
    int nv, vbase;       /* vertices; first visible one (1 for a clamped hair: 0 is its anchor) */
    uint32_t *slot;      /* particle slot per vertex, NONE once destroyed                      */
    int *dense;          /* dense particle index per vertex (refreshed before use), -1: none   */
    ctri *tri;
    cbend *bend;
    cseg *seg;
    cjoint *joint;
    int ntri, nbend, nseg, njoint;
    int tri_g[CLOTH_GROUPS], bend_g[CLOTH_GROUPS], seg_g[CLOTH_GROUPS], joint_g[CLOTH_GROUPS]; /* group ends */
    int *draw;           /* 3 vertex indices per triangle, for drawing                         */
    double stretch, shear, bendk, damping;
    int rows, cols;
    imp_vec3 root_dir;
    float color[4], back[4];
    bool self_collision;   /* its particles meet each other (particle_contact.c)                  */
    imp_vec3 *rest;        /* rest position per vertex: which of its particles are near neighbours */
} cobj;

typedef struct cloth_store {
    idtable ids;
    cobj *obj;
    int cap;
} cloth_store;

#endif

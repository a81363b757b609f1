/* cloth.h: cloth and hair: the energies of Baraff and Witkin and of Kass (cloth.c). */
#ifndef IMPETUS_CLOTH_H
#define IMPETUS_CLOTH_H

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
 * particles all lie in rows [split[c], split[c + 1]); group PAR_CHUNKS the others.
 * cloth_assemble(w, a, g) does group g, or all for g = -1; groups c < PAR_CHUNKS may run at the
 * same time (they write disjoint rows). */
void cloth_bind_blocks(imp_world *w, const bsr3 *A, const int *split);
void cloth_assemble(imp_world *w, struct asm_ctx *a, int group);

#endif

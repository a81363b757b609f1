/* render_3d.h: the lit world (render_3d.c): spheres, boxes, triangles, cloth meshes, planes, the grid,
 * lines and the shadow map of the key light. render_frame.c drives it; its rnd_* batch calls are in
 * render.h. Not part of the public API. */
#ifndef IMPETUS_RENDER_3D_H
#define IMPETUS_RENDER_3D_H

#include "render_view.h"

int  rndi_3d_init(void);          /* programs, meshes, buffers, the shadow map; 0 on success        */
void rndi_3d_shutdown(void);      /* safe to call more than once                                    */
void rndi_3d_begin_frame(void);   /* empty the batches                                              */
void rndi_3d_prepare(const RenderView *v); /* before drawing: lights, shadow map, the planes' quads */
void rndi_3d_draw(const RenderView *v);    /* after the back layer: grid, planes, solids, lines     */

#endif

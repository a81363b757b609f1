/* gfx_bodies.h: rigid bodies and the collision debug views of "impetus.gfx" (gfx_bodies.c), drawn
 * through impetus.h only. gfx_lua.c calls them from gfx.world and adds gfx.debug to the module. */
#ifndef IMPETUS_GFX_BODIES_H
#define IMPETUS_GFX_BODIES_H

#include <lua.h>

#include "../engine/impetus.h"

/* queue every body's shapes (lit) and, when switched on by gfx.debug, the debug views */
void gfx_draw_bodies(imp_world *w);
/* add gfx.debug to the table on top of the stack */
void gfx_bodies_register(lua_State *L);

#endif

/* gfx_draw.h: the game drawing calls of "impetus.gfx" (gfx_draw.c): shapes, lines, text and images
 * in screen and world space, and the Image type. gfx_lua.c adds them to the module's table. */
#ifndef IMPETUS_GFX_DRAW_H
#define IMPETUS_GFX_DRAW_H

#include <lua.h>

/* add circle, rectangle, polygon, polyline, line, text, text_width, line_height, image, draw,
 * image_quad and write_png to the table on top of the stack, and register the Image metatable */
void gfx_draw_register(lua_State *L);

#endif

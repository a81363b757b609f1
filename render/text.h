/* text.h: the font of the renderer (text.c): strings become glyph quads of the overlay. render_frame.c
 * starts and ends it; its rnd_text* calls are in render.h. Not part of the public API. */
#ifndef IMPETUS_TEXT_H
#define IMPETUS_TEXT_H

/* load the font and bake the default size; never fails for a missing font (text is then disabled) */
int  rndi_text_init(void);
void rndi_text_shutdown(void);

#endif

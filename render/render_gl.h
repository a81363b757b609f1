/* render_gl.h: the bottom of the renderer: the GL plumbing every drawing file shares (growable float
 * arrays, buffers refilled every frame, shader programs, vertex arrays) and the error slot behind
 * rnd_error(). It calls no other file of the renderer. Not part of the public API. */
#ifndef IMPETUS_RENDER_GL_H
#define IMPETUS_RENDER_GL_H

#include <stddef.h>
#include <epoxy/gl.h>

/* a growable array of floats; len and cap count floats */
typedef struct {
    float *data;
    size_t len, cap;
} FloatArray;

/* a GL buffer that is refilled every frame; cap counts bytes */
typedef struct {
    GLuint id;
    size_t cap;
} StreamBuffer;

/* reserve n more floats at the end of a; returns where to write them, NULL when out of memory */
float *rndi_farray_push(FloatArray *a, size_t n);
void rndi_farray_free(FloatArray *a);
/* copy bytes into a streamed buffer (grown by doubling, else orphaned); leaves it bound to GL_ARRAY_BUFFER */
void rndi_stream_upload(StreamBuffer *b, const void *data, size_t bytes);
/* compile and link a vertex + fragment program; 0 (and an rnd_error message) on failure */
GLuint rndi_link_program(const char *vs_src, const char *fs_src, const char *name);
/* a VAO over one streamed buffer of interleaved float attributes with the given sizes */
GLuint rndi_build_stream_vao(StreamBuffer *buf, const int *sizes, int nattr);
void rndi_delete_buffer(GLuint *id);  /* each: delete if it exists, and zero the name */
void rndi_delete_vao(GLuint *id);
void rndi_delete_program(GLuint *id);

/* the error slot: the last failure of any file of the renderer, read by rnd_error() */
void rndi_set_error(const char *fmt, ...);   /* printf-style */
void rndi_clear_error(void);

#endif

/* render_gl.c: the GL plumbing the renderer's files share: growable float arrays, streamed buffers
 * refilled every frame, shader programs, vertex arrays over interleaved float attributes. */
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#include "render_internal.h"

/* reserve n more floats at the end of a; returns where to write them, NULL when out of memory */
float *rndi_farray_push(FloatArray *a, size_t n)
{
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 1024;
        while (cap < a->len + n)
            cap *= 2;
        float *data = realloc(a->data, cap * sizeof(float));
        if (!data)
            return NULL;
        a->data = data;
        a->cap = cap;
    }
    float *p = a->data + a->len;
    a->len += n;
    return p;
}

/* release an array's memory */
void rndi_farray_free(FloatArray *a)
{
    free(a->data);
    a->data = NULL;
    a->len = a->cap = 0;
}

/* copy bytes into a streamed buffer: grow it (doubling) when too small, else orphan its storage so
 * the driver never waits for the previous frame's draw; leaves the buffer bound to GL_ARRAY_BUFFER */
void rndi_stream_upload(StreamBuffer *b, const void *data, size_t bytes)
{
    glBindBuffer(GL_ARRAY_BUFFER, b->id);
    if (bytes > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < bytes)
            cap *= 2;
        b->cap = cap;
    }
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)b->cap, NULL, GL_STREAM_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, data);
}

/* compile one shader stage; 0 (and an rnd_error message) on failure */
static GLuint compile_shader(GLenum type, const char *src, const char *name)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[768] = "";
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        rndi_set_error("rnd_init: %s %s shader failed to compile: %s", name,
                       type == GL_VERTEX_SHADER ? "vertex" : "fragment", log);
        glDeleteShader(sh);
        return 0;
    }
    return sh;
}

/* compile and link a vertex + fragment program; 0 (and an rnd_error message) on failure */
GLuint rndi_link_program(const char *vs_src, const char *fs_src, const char *name)
{
    GLuint vs = compile_shader(GL_VERTEX_SHADER, vs_src, name);
    if (!vs)
        return 0;
    GLuint fs = compile_shader(GL_FRAGMENT_SHADER, fs_src, name);
    if (!fs) {
        glDeleteShader(vs);
        return 0;
    }
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    glDeleteShader(vs);              /* flagged; freed with the program                            */
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[768] = "";
        glGetProgramInfoLog(prog, sizeof log, NULL, log);
        rndi_set_error("rnd_init: %s program failed to link: %s", name, log);
        glDeleteProgram(prog);
        return 0;
    }
    return prog;
}

/* a VAO over one streamed buffer of interleaved float attributes with the given sizes */
GLuint rndi_build_stream_vao(StreamBuffer *buf, const int *sizes, int nattr)
{
    GLuint vao;
    int stride = 0;
    for (int i = 0; i < nattr; i++)
        stride += sizes[i];
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glGenBuffers(1, &buf->id);
    glBindBuffer(GL_ARRAY_BUFFER, buf->id);
    size_t offset = 0;
    for (int i = 0; i < nattr; i++) {
        glEnableVertexAttribArray((GLuint)i);
        glVertexAttribPointer((GLuint)i, sizes[i], GL_FLOAT, GL_FALSE, stride * (GLsizei)sizeof(float),
                              (void *)(offset * sizeof(float)));
        offset += (size_t)sizes[i];
    }
    glBindVertexArray(0);
    return vao;
}

/* delete a GL buffer if it exists */
void rndi_delete_buffer(GLuint *id)
{
    if (*id)
        glDeleteBuffers(1, id);
    *id = 0;
}

/* delete a GL vertex array if it exists */
void rndi_delete_vao(GLuint *id)
{
    if (*id)
        glDeleteVertexArrays(1, id);
    *id = 0;
}

/* delete a GL program if it exists */
void rndi_delete_program(GLuint *id)
{
    if (*id)
        glDeleteProgram(*id);
    *id = 0;
}


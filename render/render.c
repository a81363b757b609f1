/* render.c: the OpenGL 3.3 core renderer of the impetus host.
 *
 * Every rnd_* call during a frame only appends to a growable float array owned by this file;
 * rnd_end_frame() uploads each array into a streamed buffer (orphaned with glBufferData, then filled
 * with glBufferSubData) and draws it with one call: the back layer of flat world drawing, grid,
 * instanced spheres, instanced boxes, triangles, meshes, lines, the flat world drawing, then the
 * screen overlay (render_2d.c). Matrices are column-major, like GL. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "render.h"
#include "render_internal.h"

/* ================================================================================================
 * small helpers: vectors, matrices, growable arrays, streamed buffers
 * ================================================================================================ */

/* floats per batched element */
#define SPHERE_FLOATS   8            /* x y z r, r g b a                                            */
#define BOX_FLOATS      19           /* 3 rotation columns, translation, half extents, r g b a      */
#define LINE_VFLOATS    7            /* x y z, r g b a (per vertex)                                 */
#define GRID_FLOATS     3            /* half_extent, spacing, height (per rnd_grid request)          */
#define TRI_VFLOATS     10           /* x y z, nx ny nz, r g b a (per vertex of rnd_triangles)  */

#define MAX_GRID_LINES  1000         /* per side of the origin and per direction                    */

static const float default_solid[4] = { 1.00f, 0.55f, 0.15f, 1.0f }; /* a pleasant orange       */
static const float default_line[4]  = { 0.90f, 0.90f, 0.90f, 1.0f };

/* dot product of two 3-vectors */
static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* out = a x b (out may not alias a or b) */
static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* scale v to unit length in place; returns its former length */
static float normalize3(float v[3])
{
    float len = sqrtf(dot3(v, v));
    if (len > 0.0f) {
        v[0] /= len;
        v[1] /= len;
        v[2] /= len;
    }
    return len;
}

/* out = a * b for column-major 4x4 matrices (out may not alias a or b) */
static void mat4_mul(const float a[16], const float b[16], float out[16])
{
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + row] * b[col * 4 + k];
            out[col * 4 + row] = s;
        }
}

/* a view matrix from an orthonormal camera basis (right, up, forward) and the eye position */
static void mat4_view(const float right[3], const float up[3], const float fwd[3],
                      const float eye[3], float m[16])
{
    m[0] = right[0]; m[4] = right[1]; m[8]  = right[2]; m[12] = -dot3(right, eye);
    m[1] = up[0];    m[5] = up[1];    m[9]  = up[2];    m[13] = -dot3(up, eye);
    m[2] = -fwd[0];  m[6] = -fwd[1];  m[10] = -fwd[2];  m[14] = dot3(fwd, eye);
    m[3] = 0.0f;     m[7] = 0.0f;     m[11] = 0.0f;     m[15] = 1.0f;
}

/* a perspective projection (GL conventions, depth -1..1) */
static void mat4_perspective(float fovy, float aspect, float zn, float zf, float m[16])
{
    float f = 1.0f / tanf(fovy * 0.5f);
    memset(m, 0, 16 * sizeof(float));
    m[0] = f / aspect;
    m[5] = f;
    m[10] = (zf + zn) / (zn - zf);
    m[11] = -1.0f;
    m[14] = 2.0f * zf * zn / (zn - zf);
}

/* an orthographic projection of the box [l,r] x [b,t] x [-n,-f] in view space */
static void mat4_ortho(float l, float r, float b, float t, float n, float f, float m[16])
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = 2.0f / (r - l);
    m[5] = 2.0f / (t - b);
    m[10] = -2.0f / (f - n);
    m[12] = -(r + l) / (r - l);
    m[13] = -(t + b) / (t - b);
    m[14] = -(f + n) / (f - n);
    m[15] = 1.0f;
}

/* ================================================================================================
 * module state
 * ================================================================================================ */

/* the camera as set by the host; matrices are derived from it and the frame size */
typedef struct {
    int ortho;                                     /* 1 after rnd_camera_2d                       */
    float eye[3], target[3], up[3], fovy, znear, zfar;
    float cx, cy, half_height;
} CameraParams;

/* uniform locations of the lit programs */
typedef struct {
    GLint viewproj, key_dir, fill_dir, eye, view_dir, ortho;
    GLint shadows, light_viewproj, shadow_map, shadow_texel;
} LitUniforms;

#define SHADOW_SIZE 2048             /* texels per side of the shadow map                           */
#define PLANE_FLOATS 7               /* point xyz, unit normal xyz, (colour follows: 4)             */

static struct {
    int ready;
    char error[1024];
    int width, height;

    CameraParams cam;
    /* derived by update_camera() */
    float view[16], proj[16], viewproj[16];
    float right[3], up[3], fwd[3], eye[3];         /* camera basis and position in world space    */
    float aspect, tan_half_fovy, depth_half;       /* depth_half: 2D eye height above z = 0       */
    float key_dir[3], fill_dir[3];                 /* world-space directions towards the lights   */

    GLuint prog_sphere, prog_box, prog_line, prog_tri;
    LitUniforms u_sphere, u_box, u_tri;
    GLint u_line_viewproj;

    GLuint sphere_vao, sphere_vbo, sphere_ebo;
    int sphere_first[4], sphere_count[4];          /* index range of each icosphere level 0..3   */
    StreamBuffer sphere_inst;
    GLuint box_vao, box_vbo, box_ebo;
    StreamBuffer box_inst;
    GLuint line_vao;
    StreamBuffer line_buf;
    GLuint tri_vao;                                /* lit triangles: hulls, meshes, capsule sides */
    StreamBuffer tri_buf;
    FloatArray tris;
    FloatArray xlines;                             /* lines drawn over everything (debug views)  */

    FloatArray spheres, boxes, grids, lines;
    FloatArray scratch;                            /* grid vertices followed by the lines        */

    /* planes (rnd_plane): drawn as a large lit quad in 3D, as the solid half-plane in 2D */
    FloatArray planes;                             /* point, normal, rgba per plane              */
    FloatArray ground;                             /* their triangles, TRI_VFLOATS per vertex    */

    /* shadows of the key light (3D only): a depth map rendered from the light */
    int shadows_wanted, shadows_on;
    GLuint shadow_fbo, shadow_tex;
    GLuint prog_depth_sphere, prog_depth_box, prog_depth_tri, prog_depth_mesh;
    GLint u_depth_sphere, u_depth_box, u_depth_tri, u_depth_mesh;
    float light_viewproj[16], shadow_texel;
} R;

/* record a message for rnd_error() */
void rndi_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.error, sizeof R.error, fmt, ap);
    va_end(ap);
}

/* the message of the last failure (empty when none) */
const char *rnd_error(void)
{
    return R.error;
}

/* ================================================================================================
 * shaders
 * ================================================================================================ */

/* instanced sphere: a unit-sphere vertex is also its own normal */
static const char *sphere_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 2) in vec4 a_sphere;   // centre xyz, radius\n"
    "layout(location = 3) in vec4 a_color;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec3 v_normal;\n"
    "out vec3 v_world;\n"
    "out vec4 v_color;\n"
    "void main() {\n"
    "    vec3 world = a_sphere.xyz + a_sphere.w * a_pos;\n"
    "    v_normal = a_pos;\n"
    "    v_world = world;\n"
    "    v_color = a_color;\n"
    "    gl_Position = u_viewproj * vec4(world, 1.0);\n"
    "}\n";

/* instanced box: unit cube (-1..1) scaled by the half extents, rotated, translated */
static const char *box_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_normal;\n"
    "layout(location = 2) in vec3 a_col0;\n"
    "layout(location = 3) in vec3 a_col1;\n"
    "layout(location = 4) in vec3 a_col2;\n"
    "layout(location = 5) in vec3 a_trans;\n"
    "layout(location = 6) in vec3 a_half;\n"
    "layout(location = 7) in vec4 a_color;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec3 v_normal;\n"
    "out vec3 v_world;\n"
    "out vec4 v_color;\n"
    "out vec3 v_local;   // metres from the centre, box frame\n"
    "out vec3 v_half;\n"
    "void main() {\n"
    "    mat3 rot = mat3(a_col0, a_col1, a_col2);\n"
    "    vec3 world = a_trans + rot * (a_half * a_pos);\n"
    "    v_local = a_half * a_pos;\n"
    "    v_half = a_half;\n"
    "    v_normal = rot * a_normal;\n"
    "    v_world = world;\n"
    "    v_color = a_color;\n"
    "    gl_Position = u_viewproj * vec4(world, 1.0);\n"
    "}\n";

/* world-space lit triangles (hulls, meshes, capsule sides), already transformed on the CPU */
static const char *tri_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_normal;\n"
    "layout(location = 2) in vec4 a_color;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec3 v_normal;\n"
    "out vec3 v_world;\n"
    "out vec4 v_color;\n"
    "void main() {\n"
    "    v_normal = a_normal;\n"
    "    v_world = a_pos;\n"
    "    v_color = a_color;\n"
    "    gl_Position = u_viewproj * vec4(a_pos, 1.0);\n"
    "}\n";

/* shadows from the key light (a shadow map rendered from the light, see shadow_pass): the receiver is
 * pushed out along its normal by a texel and a half against acne, and four bilinear comparisons
 * (hardware PCF) soften the edge; points outside the map are lit */
#define SHADOW_GLSL \
    "uniform int u_shadows;\n" \
    "uniform mat4 u_light_viewproj;\n" \
    "uniform sampler2DShadow u_shadow_map;\n" \
    "uniform float u_shadow_texel;   // world size of one texel of the map\n" \
    "float shadow_visibility(vec3 p, vec3 n) {\n" \
    "    if (u_shadows == 0) return 1.0;\n" \
    "    vec4 c = u_light_viewproj * vec4(p + n * (1.5 * u_shadow_texel), 1.0);\n" \
    "    vec3 s = c.xyz / c.w * 0.5 + 0.5;\n" \
    "    if (s.x <= 0.0 || s.x >= 1.0 || s.y <= 0.0 || s.y >= 1.0 || s.z >= 1.0) return 1.0;\n" \
    "    float t = 1.0 / float(textureSize(u_shadow_map, 0).x);\n" \
    "    float v = 0.0;\n" \
    "    for (int i = -1; i <= 1; i += 2)\n" \
    "        for (int j = -1; j <= 1; j += 2)\n" \
    "            v += texture(u_shadow_map, vec3(s.xy + vec2(i, j) * 0.75 * t, s.z - 0.0004));\n" \
    "    return 0.25 * v;\n" \
    "}\n"

/* shared lighting: warm key light (shadowed) + cool fill + sky/ground ambient, Lambert + a little
 * Blinn. Boxes (BOX_OUTLINE) darken a line about 1.5 px wide along their edges, so a stack of boxes of
 * one colour reads as separate boxes: on a face one local coordinate sits at its half extent, and the
 * distance to the nearest edge is the second smallest of half - |local|. Spheres (SPHERE_RIM) darken
 * their silhouette the same way, so touching balls of one colour stay apart. */
#define LIT_GLSL \
    "in vec3 v_normal;\n" \
    "in vec3 v_world;\n" \
    "in vec4 v_color;\n" \
    "uniform vec3 u_key_dir;    // towards the key light, world space\n" \
    "uniform vec3 u_fill_dir;   // towards the fill light\n" \
    "uniform vec3 u_eye;        // camera position (perspective)\n" \
    "uniform vec3 u_view_dir;   // towards the camera (orthographic)\n" \
    "uniform int u_ortho;\n" \
    "out vec4 o_color;\n" \
    SHADOW_GLSL \
    "vec3 lit(vec3 base, vec3 n, vec3 v) {\n" \
    "    float key = max(dot(n, u_key_dir), 0.0) * shadow_visibility(v_world, n);\n" \
    "    float fill = max(dot(n, u_fill_dir), 0.0);\n" \
    "    vec3 ambient = mix(vec3(0.14, 0.13, 0.12), vec3(0.28, 0.30, 0.34), 0.5 + 0.5 * n.y);\n" \
    "    vec3 h = normalize(u_key_dir + v);\n" \
    "    float spec = key > 0.0 ? key * pow(max(dot(n, h), 0.0), 40.0) : 0.0;\n" \
    "    vec3 light = ambient + key * vec3(0.80, 0.77, 0.72) + fill * vec3(0.22, 0.25, 0.30);\n" \
    "    return base * light + 0.30 * spec * vec3(1.0, 0.98, 0.95);\n" \
    "}\n" \
    "void main() {\n" \
    "    vec3 n = normalize(v_normal);\n" \
    "    vec3 v = (u_ortho != 0) ? u_view_dir : normalize(u_eye - v_world);\n" \
    "    vec3 base = v_color.rgb;\n" \
    "#ifdef BOX_OUTLINE\n" \
    "    vec3 d = v_half - abs(v_local);\n" \
    "    float edge = max(min(d.x, d.y), min(max(d.x, d.y), d.z));\n" \
    "    float px = fwidth(edge);\n" \
    "    base *= mix(0.55, 1.0, smoothstep(0.75, 1.75, edge / max(px, 1e-9)));\n" \
    "#endif\n" \
    "#ifdef SPHERE_RIM\n" \
    "    float ndv = dot(n, v);\n" \
    "    base *= mix(0.6, 1.0, smoothstep(0.75, 1.75, ndv / max(fwidth(ndv), 1e-9)));\n" \
    "#endif\n" \
    "    o_color = vec4(lit(base, n, v), v_color.a);\n" \
    "}\n"

static const char *lit_fs = "#version 330 core\n" LIT_GLSL;
static const char *box_fs = "#version 330 core\n#define BOX_OUTLINE\nin vec3 v_local;\nin vec3 v_half;\n" LIT_GLSL;
static const char *sphere_fs = "#version 330 core\n#define SPHERE_RIM\n" LIT_GLSL;

/* the shadow pass writes depth only */
static const char *depth_fs = "#version 330 core\nvoid main() {}\n";

/* coloured lines (and the grid) */
static const char *line_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec4 a_color;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec4 v_color;\n"
    "void main() {\n"
    "    v_color = a_color;\n"
    "    gl_Position = u_viewproj * vec4(a_pos, 1.0);\n"
    "}\n";

static const char *line_fs =
    "#version 330 core\n"
    "in vec4 v_color;\n"
    "out vec4 o_color;\n"
    "void main() { o_color = v_color; }\n";

/* look up the uniforms of a lit program */
static LitUniforms lit_uniforms(GLuint prog)
{
    LitUniforms u;
    u.viewproj = glGetUniformLocation(prog, "u_viewproj");
    u.key_dir  = glGetUniformLocation(prog, "u_key_dir");
    u.fill_dir = glGetUniformLocation(prog, "u_fill_dir");
    u.eye      = glGetUniformLocation(prog, "u_eye");
    u.view_dir = glGetUniformLocation(prog, "u_view_dir");
    u.ortho    = glGetUniformLocation(prog, "u_ortho");
    u.shadows  = glGetUniformLocation(prog, "u_shadows");
    u.light_viewproj = glGetUniformLocation(prog, "u_light_viewproj");
    u.shadow_map = glGetUniformLocation(prog, "u_shadow_map");
    u.shadow_texel = glGetUniformLocation(prog, "u_shadow_texel");
    return u;
}

/* ================================================================================================
 * meshes
 * ================================================================================================ */

#define ICO_LEVELS     4             /* levels 0..3: 20, 80, 320, 1280 triangles                    */
#define ICO_MAX_VERTS  642           /* vertices of level 3                                         */
#define ICO_MAX_EDGES  480           /* edges of level 2 (split to make level 3)                    */

/* scratch space for building the icosphere */
typedef struct {
    float verts[ICO_MAX_VERTS * 3];
    int nverts;
    GLushort edge_a[ICO_MAX_EDGES], edge_b[ICO_MAX_EDGES], edge_mid[ICO_MAX_EDGES];
    int nedges;
} IcoBuilder;

/* add a vertex (pushed out onto the unit sphere); returns its index */
static GLushort ico_add_vertex(IcoBuilder *ib, float x, float y, float z)
{
    float v[3] = { x, y, z };
    normalize3(v);
    memcpy(&ib->verts[ib->nverts * 3], v, sizeof v);
    return (GLushort)ib->nverts++;
}

/* the vertex halfway along edge a-b, created once and shared by both triangles of the edge */
static GLushort ico_midpoint(IcoBuilder *ib, GLushort a, GLushort b)
{
    GLushort lo = a < b ? a : b, hi = a < b ? b : a;
    for (int i = 0; i < ib->nedges; i++)
        if (ib->edge_a[i] == lo && ib->edge_b[i] == hi)
            return ib->edge_mid[i];
    const float *pa = &ib->verts[a * 3], *pb = &ib->verts[b * 3];
    GLushort mid = ico_add_vertex(ib, pa[0] + pb[0], pa[1] + pb[1], pa[2] + pb[2]);
    ib->edge_a[ib->nedges] = lo;
    ib->edge_b[ib->nedges] = hi;
    ib->edge_mid[ib->nedges] = mid;
    ib->nedges++;
    return mid;
}

/* build icosphere levels 0..3 sharing one vertex list (each subdivision only appends vertices), put
 * the vertices and the four index lists, one after the other, into the sphere VAO */
static void build_sphere_mesh(void)
{
    static IcoBuilder ib;            /* ~10 KB: keep it off the stack                              */
    static GLushort indices[(20 + 80 + 320 + 1280) * 3];
    static const int faces[20][3] = {
        { 0, 11, 5 }, { 0, 5, 1 }, { 0, 1, 7 }, { 0, 7, 10 }, { 0, 10, 11 },
        { 1, 5, 9 }, { 5, 11, 4 }, { 11, 10, 2 }, { 10, 7, 6 }, { 7, 1, 8 },
        { 3, 9, 4 }, { 3, 4, 2 }, { 3, 2, 6 }, { 3, 6, 8 }, { 3, 8, 9 },
        { 4, 9, 5 }, { 2, 4, 11 }, { 6, 2, 10 }, { 8, 6, 7 }, { 9, 8, 1 },
    };
    const float t = (1.0f + sqrtf(5.0f)) * 0.5f;
    const float corners[12][3] = {
        { -1, t, 0 }, { 1, t, 0 }, { -1, -t, 0 }, { 1, -t, 0 },
        { 0, -1, t }, { 0, 1, t }, { 0, -1, -t }, { 0, 1, -t },
        { t, 0, -1 }, { t, 0, 1 }, { -t, 0, -1 }, { -t, 0, 1 },
    };

    memset(&ib, 0, sizeof ib);
    for (int i = 0; i < 12; i++)
        ico_add_vertex(&ib, corners[i][0], corners[i][1], corners[i][2]);

    /* level 0, each triangle made counter-clockwise seen from outside */
    GLushort *level = indices;
    for (int f = 0; f < 20; f++) {
        GLushort a = (GLushort)faces[f][0], b = (GLushort)faces[f][1], c = (GLushort)faces[f][2];
        const float *pa = &ib.verts[a * 3], *pb = &ib.verts[b * 3], *pc = &ib.verts[c * 3];
        float ab[3] = { pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2] };
        float ac[3] = { pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2] };
        float n[3];
        cross3(ab, ac, n);
        if (dot3(n, pa) < 0.0f) {    /* inward-facing: swap two corners                            */
            GLushort tmp = b;
            b = c;
            c = tmp;
        }
        level[f * 3 + 0] = a;
        level[f * 3 + 1] = b;
        level[f * 3 + 2] = c;
    }
    R.sphere_first[0] = 0;
    R.sphere_count[0] = 60;

    /* each further level splits every triangle of the previous one into four */
    for (int L = 1; L < ICO_LEVELS; L++) {
        const GLushort *prev = indices + R.sphere_first[L - 1];
        int ntri = R.sphere_count[L - 1] / 3;
        GLushort *out = indices + R.sphere_first[L - 1] + R.sphere_count[L - 1];
        ib.nedges = 0;
        for (int f = 0; f < ntri; f++) {
            GLushort a = prev[f * 3], b = prev[f * 3 + 1], c = prev[f * 3 + 2];
            GLushort ab = ico_midpoint(&ib, a, b);
            GLushort bc = ico_midpoint(&ib, b, c);
            GLushort ca = ico_midpoint(&ib, c, a);
            GLushort tris[12] = { a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca };
            memcpy(out + f * 12, tris, sizeof tris);
        }
        R.sphere_first[L] = (int)(out - indices);
        R.sphere_count[L] = ntri * 12;
    }

    glGenVertexArrays(1, &R.sphere_vao);
    glBindVertexArray(R.sphere_vao);
    glGenBuffers(1, &R.sphere_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, R.sphere_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(ib.nverts * 3 * sizeof(float)), ib.verts, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (void *)0);
    glGenBuffers(1, &R.sphere_ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, R.sphere_ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof indices, indices, GL_STATIC_DRAW);

    /* per instance: centre + radius, colour */
    glGenBuffers(1, &R.sphere_inst.id);
    glBindBuffer(GL_ARRAY_BUFFER, R.sphere_inst.id);
    const GLsizei stride = SPHERE_FLOATS * sizeof(float);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 4, GL_FLOAT, GL_FALSE, stride, (void *)0);
    glVertexAttribDivisor(2, 1);
    glEnableVertexAttribArray(3);
    glVertexAttribPointer(3, 4, GL_FLOAT, GL_FALSE, stride, (void *)(4 * sizeof(float)));
    glVertexAttribDivisor(3, 1);
    glBindVertexArray(0);
}

/* build the unit cube (-1..1) with 4 vertices per face so every face has its own flat normal */
static void build_box_mesh(void)
{
    float verts[24 * 6];             /* position, normal                                           */
    GLushort indices[36];
    for (int face = 0; face < 6; face++) {
        int axis = face / 2;
        float sign = (face % 2) ? -1.0f : 1.0f;
        float n[3] = { 0, 0, 0 }, u[3] = { 0, 0, 0 }, v[3];
        n[axis] = sign;
        u[(axis + 1) % 3] = 1.0f;
        cross3(n, u, v);             /* u x v = n, so corners in u,v order are counter-clockwise   */
        static const float su[4] = { -1, 1, 1, -1 }, sv[4] = { -1, -1, 1, 1 };
        for (int k = 0; k < 4; k++) {
            float *out = &verts[(face * 4 + k) * 6];
            for (int i = 0; i < 3; i++) {
                out[i] = n[i] + su[k] * u[i] + sv[k] * v[i];
                out[3 + i] = n[i];
            }
        }
        GLushort base = (GLushort)(face * 4);
        GLushort quad[6] = { base, (GLushort)(base + 1), (GLushort)(base + 2),
                             base, (GLushort)(base + 2), (GLushort)(base + 3) };
        memcpy(&indices[face * 6], quad, sizeof quad);
    }

    glGenVertexArrays(1, &R.box_vao);
    glBindVertexArray(R.box_vao);
    glGenBuffers(1, &R.box_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, R.box_vbo);
    glBufferData(GL_ARRAY_BUFFER, sizeof verts, verts, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (void *)(3 * sizeof(float)));
    glGenBuffers(1, &R.box_ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, R.box_ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof indices, indices, GL_STATIC_DRAW);

    /* per instance: rotation columns (2,3,4), translation (5), half extents (6), colour (7) */
    glGenBuffers(1, &R.box_inst.id);
    glBindBuffer(GL_ARRAY_BUFFER, R.box_inst.id);
    const GLsizei stride = BOX_FLOATS * sizeof(float);
    const int sizes[6] = { 3, 3, 3, 3, 3, 4 };
    size_t offset = 0;
    for (int i = 0; i < 6; i++) {
        GLuint loc = (GLuint)(2 + i);
        glEnableVertexAttribArray(loc);
        glVertexAttribPointer(loc, sizes[i], GL_FLOAT, GL_FALSE, stride, (void *)(offset * sizeof(float)));
        glVertexAttribDivisor(loc, 1);
        offset += (size_t)sizes[i];
    }
    glBindVertexArray(0);
}

/* ================================================================================================
 * lifetime
 * ================================================================================================ */

/* the mesh batch (rnd_mesh, cloth), defined at the end of this file */
static int mesh_init(void);
static void mesh_shutdown(void);
static void mesh_begin_frame(void);
static void mesh_draw(void);
static int mesh_init_depth(void);
static void mesh_draw_depth(void);
static void mesh_shutdown_depth(void);
static void mesh_grow_bounds(float lo[3], float hi[3]);

/* the shadow map: a depth texture compared in the lit shaders (sampler2DShadow), and its framebuffer;
 * 0 on success (a GL without depth framebuffers draws no shadows rather than failing) */
static int shadow_init(void)
{
    R.prog_depth_sphere = rndi_link_program(sphere_vs, depth_fs, "sphere depth");
    R.prog_depth_box = R.prog_depth_sphere ? rndi_link_program(box_vs, depth_fs, "box depth") : 0;
    R.prog_depth_tri = R.prog_depth_box ? rndi_link_program(tri_vs, depth_fs, "triangle depth") : 0;
    if (!R.prog_depth_tri || mesh_init_depth() != 0)
        return 1;
    R.u_depth_sphere = glGetUniformLocation(R.prog_depth_sphere, "u_viewproj");
    R.u_depth_box = glGetUniformLocation(R.prog_depth_box, "u_viewproj");
    R.u_depth_tri = glGetUniformLocation(R.prog_depth_tri, "u_viewproj");
    glGenTextures(1, &R.shadow_tex);
    glBindTexture(GL_TEXTURE_2D, R.shadow_tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, SHADOW_SIZE, SHADOW_SIZE, 0, GL_DEPTH_COMPONENT, GL_FLOAT, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_MODE, GL_COMPARE_REF_TO_TEXTURE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_COMPARE_FUNC, GL_LEQUAL);
    glBindTexture(GL_TEXTURE_2D, 0);
    glGenFramebuffers(1, &R.shadow_fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, R.shadow_fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, R.shadow_tex, 0);
    glDrawBuffer(GL_NONE);
    glReadBuffer(GL_NONE);
    int complete = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return complete ? 0 : 1;
}

static void shadow_shutdown(void)
{
    rndi_delete_program(&R.prog_depth_sphere);
    rndi_delete_program(&R.prog_depth_box);
    rndi_delete_program(&R.prog_depth_tri);
    mesh_shutdown_depth();
    if (R.shadow_fbo)
        glDeleteFramebuffers(1, &R.shadow_fbo);
    if (R.shadow_tex)
        glDeleteTextures(1, &R.shadow_tex);
    R.shadow_fbo = R.shadow_tex = 0;
}

/* compile shaders, build meshes and buffers, bake the font; 0 on success */
int rnd_init(void)
{
    if (R.ready)
        return 0;
    R.error[0] = '\0';
    if (epoxy_gl_version() < 33) {
        rndi_set_error("rnd_init: OpenGL 3.3 is required, the context offers %d.%d",
                       epoxy_gl_version() / 10, epoxy_gl_version() % 10);
        return 1;
    }

    R.prog_sphere = rndi_link_program(sphere_vs, sphere_fs, "sphere");
    R.prog_box = R.prog_sphere ? rndi_link_program(box_vs, box_fs, "box") : 0;
    R.prog_line = R.prog_box ? rndi_link_program(line_vs, line_fs, "line") : 0;
    R.prog_tri = R.prog_line ? rndi_link_program(tri_vs, lit_fs, "triangles") : 0;
    if (!R.prog_tri) {
        rnd_shutdown();
        return 1;
    }
    R.u_sphere = lit_uniforms(R.prog_sphere);
    R.u_box = lit_uniforms(R.prog_box);
    R.u_tri = lit_uniforms(R.prog_tri);
    R.u_line_viewproj = glGetUniformLocation(R.prog_line, "u_viewproj");

    build_sphere_mesh();
    build_box_mesh();
    static const int line_attrs[2] = { 3, 4 };
    R.line_vao = rndi_build_stream_vao(&R.line_buf, line_attrs, 2);
    static const int tri_attrs[3] = { 3, 3, 4 };
    R.tri_vao = rndi_build_stream_vao(&R.tri_buf, tri_attrs, 3);

    rndi_text_init();                /* never fails: a missing font only disables text             */
    if (mesh_init() != 0 || rndi_2d_init() != 0) {
        rnd_shutdown();
        return 1;
    }
    if (shadow_init() != 0)
        shadow_shutdown();           /* no shadows, everything else works                          */
    R.shadows_wanted = 1;

    /* a default camera until the host sets one */
    if (R.cam.fovy <= 0.0f && !R.cam.ortho) {
        const float eye[3] = { 6, 4, 8 }, target[3] = { 0, 0, 0 }, up[3] = { 0, 1, 0 };
        rnd_camera_3d(eye, target, up, 0.9f, 0.05f, 500.0f);
    }
    if (R.width <= 0 || R.height <= 0) {
        R.width = 800;
        R.height = 600;
    }

    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        rndi_set_error("rnd_init: GL error 0x%04x while creating resources", (unsigned)err);
        rnd_shutdown();
        return 1;
    }
    R.ready = 1;
    return 0;
}

/* free every GL object and every batch array; safe to call more than once */
void rnd_shutdown(void)
{
    shadow_shutdown();
    rndi_farray_free(&R.planes);
    rndi_farray_free(&R.ground);
    rndi_delete_program(&R.prog_sphere);
    rndi_delete_program(&R.prog_box);
    rndi_delete_program(&R.prog_line);
    rndi_delete_program(&R.prog_tri);
    rndi_delete_vao(&R.tri_vao);
    rndi_delete_buffer(&R.tri_buf.id);
    rndi_farray_free(&R.tris);
    rndi_farray_free(&R.xlines);
    rndi_delete_vao(&R.sphere_vao);
    rndi_delete_vao(&R.box_vao);
    rndi_delete_vao(&R.line_vao);
    rndi_delete_buffer(&R.sphere_vbo);
    rndi_delete_buffer(&R.sphere_ebo);
    rndi_delete_buffer(&R.sphere_inst.id);
    rndi_delete_buffer(&R.box_vbo);
    rndi_delete_buffer(&R.box_ebo);
    rndi_delete_buffer(&R.box_inst.id);
    rndi_delete_buffer(&R.line_buf.id);
    R.sphere_inst.cap = R.box_inst.cap = R.line_buf.cap = 0;
    rndi_text_shutdown();
    mesh_shutdown();
    rndi_2d_shutdown();
    rndi_farray_free(&R.spheres);
    rndi_farray_free(&R.boxes);
    rndi_farray_free(&R.grids);
    rndi_farray_free(&R.lines);
    rndi_farray_free(&R.scratch);
    R.ready = 0;
}

/* ================================================================================================
 * camera
 * ================================================================================================ */

/* store a perspective camera; matrices are built when the frame size is known */
void rnd_camera_3d(const float eye[3], const float target[3], const float up[3],
                   float fovy, float znear, float zfar)
{
    R.cam.ortho = 0;
    memcpy(R.cam.eye, eye, sizeof R.cam.eye);
    memcpy(R.cam.target, target, sizeof R.cam.target);
    memcpy(R.cam.up, up, sizeof R.cam.up);
    R.cam.fovy = fovy;
    R.cam.znear = znear;
    R.cam.zfar = zfar;
}

/* store an orthographic camera looking at the x-y plane from +z */
void rnd_camera_2d(float cx, float cy, float half_height)
{
    R.cam.ortho = 1;
    R.cam.cx = cx;
    R.cam.cy = cy;
    R.cam.half_height = half_height > 0.0f ? half_height : 1.0f;
}

/* turn a view-space direction into world space with the camera basis */
static void view_to_world(const float v[3], float out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = R.right[i] * v[0] + R.up[i] * v[1] - R.fwd[i] * v[2];
    normalize3(out);
}

/* derive the camera basis, view/projection matrices and light directions from the stored camera
 * parameters and the current frame size */
static void update_camera(void)
{
    R.aspect = (R.width > 0 && R.height > 0) ? (float)R.width / (float)R.height : 1.0f;
    if (R.cam.ortho) {
        float hh = R.cam.half_height, hw = hh * R.aspect;
        R.depth_half = 1000.0f * hh;               /* everything within +-1000 h of z = 0 is seen */
        const float right[3] = { 1, 0, 0 }, up[3] = { 0, 1, 0 }, fwd[3] = { 0, 0, -1 };
        memcpy(R.right, right, sizeof right);
        memcpy(R.up, up, sizeof up);
        memcpy(R.fwd, fwd, sizeof fwd);
        R.eye[0] = R.cam.cx;
        R.eye[1] = R.cam.cy;
        R.eye[2] = R.depth_half;
        mat4_view(R.right, R.up, R.fwd, R.eye, R.view);
        mat4_ortho(-hw, hw, -hh, hh, 0.0f, 2.0f * R.depth_half, R.proj);
    } else {
        float fwd[3] = { R.cam.target[0] - R.cam.eye[0], R.cam.target[1] - R.cam.eye[1],
                         R.cam.target[2] - R.cam.eye[2] };
        if (normalize3(fwd) == 0.0f) {
            fwd[0] = 0.0f; fwd[1] = 0.0f; fwd[2] = -1.0f;
        }
        float right[3], up[3];
        cross3(fwd, R.cam.up, right);
        if (normalize3(right) < 1e-6f) {           /* up parallel to the view: pick another      */
            const float alt[3] = { fabsf(fwd[0]) < 0.9f ? 1.0f : 0.0f, 0.0f,
                                   fabsf(fwd[0]) < 0.9f ? 0.0f : 1.0f };
            cross3(fwd, alt, right);
            normalize3(right);
        }
        cross3(right, fwd, up);
        memcpy(R.right, right, sizeof right);
        memcpy(R.up, up, sizeof up);
        memcpy(R.fwd, fwd, sizeof fwd);
        memcpy(R.eye, R.cam.eye, sizeof R.eye);
        R.tan_half_fovy = tanf(R.cam.fovy * 0.5f);
        mat4_view(R.right, R.up, R.fwd, R.eye, R.view);
        mat4_perspective(R.cam.fovy, R.aspect, R.cam.znear, R.cam.zfar, R.proj);
    }
    mat4_mul(R.proj, R.view, R.viewproj);

    /* the fill light is fixed relative to the camera (from the right), so every view looks lit. The
     * key light is the sun of the shadows: fixed in the world in 3D (high, from the left and the +z
     * side most cameras look from); in 2D it comes from upper left behind the viewer */
    const float key_view[3] = { -0.45f, 0.70f, 0.55f }, fill_view[3] = { 0.70f, -0.15f, 0.45f };
    if (R.cam.ortho) {
        view_to_world(key_view, R.key_dir);
    } else {
        R.key_dir[0] = -0.35f, R.key_dir[1] = 1.0f, R.key_dir[2] = 0.45f;
        normalize3(R.key_dir);
    }
    view_to_world(fill_view, R.fill_dir);
}

/* the view for the other files of the renderer (valid after update_camera) */
const float *rndi_viewproj(void) { return R.viewproj; }
int rndi_width(void) { return R.width; }
int rndi_height(void) { return R.height; }
int rndi_ortho(void) { return R.cam.ortho; }

/* world point -> window pixel (origin top-left); 0 when the point is behind the camera */
int rnd_project(const float world[3], float *px, float *py)
{
    update_camera();
    const float *m = R.viewproj;
    float clip[4];
    for (int row = 0; row < 4; row++)
        clip[row] = m[row] * world[0] + m[4 + row] * world[1] + m[8 + row] * world[2] + m[12 + row];
    if (clip[3] <= 1e-12f)
        return 0;
    float nx = clip[0] / clip[3], ny = clip[1] / clip[3];
    if (px)
        *px = (nx * 0.5f + 0.5f) * (float)R.width;
    if (py)
        *py = (0.5f - ny * 0.5f) * (float)R.height;
    return 1;
}

/* window pixel -> picking ray: from the eye (3D) or from the front of the view volume (2D) */
void rnd_unproject(float px, float py, float origin[3], float dir[3])
{
    update_camera();
    float nx = 2.0f * px / (float)R.width - 1.0f;
    float ny = 1.0f - 2.0f * py / (float)R.height;
    if (R.cam.ortho) {
        origin[0] = R.cam.cx + nx * R.cam.half_height * R.aspect;
        origin[1] = R.cam.cy + ny * R.cam.half_height;
        origin[2] = R.depth_half;
        dir[0] = 0.0f; dir[1] = 0.0f; dir[2] = -1.0f;
    } else {
        const float v[3] = { nx * R.tan_half_fovy * R.aspect, ny * R.tan_half_fovy, -1.0f };
        memcpy(origin, R.eye, 3 * sizeof(float));
        view_to_world(v, dir);
    }
}

/* ================================================================================================
 * batching
 * ================================================================================================ */

/* start a frame: remember the drawable size, set the viewport, clear colour and depth, empty the
 * batches */
void rnd_begin_frame(int width, int height, const float clear_rgb[3])
{
    R.width = width > 0 ? width : 1;
    R.height = height > 0 ? height : 1;
    R.spheres.len = R.boxes.len = R.grids.len = R.lines.len = R.tris.len = R.xlines.len = R.planes.len = 0;
    mesh_begin_frame();
    rndi_2d_begin_frame();
    glViewport(0, 0, R.width, R.height);
    if (clear_rgb)
        glClearColor(clear_rgb[0], clear_rgb[1], clear_rgb[2], 1.0f);
    else
        glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glDepthMask(GL_TRUE);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

/* queue n spheres (x, y, z, radius) with optional per-sphere rgba */
void rnd_spheres(int n, const float *xyzr, const float *rgba)
{
    if (n <= 0 || !xyzr)
        return;
    float *out = rndi_farray_push(&R.spheres, (size_t)n * SPHERE_FLOATS);
    if (!out)
        return;
    for (int i = 0; i < n; i++, out += SPHERE_FLOATS) {
        memcpy(out, xyzr + (size_t)i * 4, 4 * sizeof(float));
        memcpy(out + 4, rgba ? rgba + (size_t)i * 4 : default_solid, 4 * sizeof(float));
    }
}

/* queue n boxes: rotation (column-major 3x3) + translation, half extents, optional rgba */
void rnd_boxes(int n, const float *xform, const float *half, const float *rgba)
{
    if (n <= 0 || !xform || !half)
        return;
    float *out = rndi_farray_push(&R.boxes, (size_t)n * BOX_FLOATS);
    if (!out)
        return;
    for (int i = 0; i < n; i++, out += BOX_FLOATS) {
        memcpy(out, xform + (size_t)i * 12, 12 * sizeof(float));
        memcpy(out + 12, half + (size_t)i * 3, 3 * sizeof(float));
        memcpy(out + 15, rgba ? rgba + (size_t)i * 4 : default_solid, 4 * sizeof(float));
    }
}

/* queue ntri lit triangles in world space: pos and nrm hold 9 floats per triangle (3 vertices) */
void rnd_triangles(int ntri, const float *pos, const float *nrm, const float rgba[4])
{
    if (ntri <= 0 || !pos || !nrm)
        return;
    if (!rgba)
        rgba = default_solid;
    float *out = rndi_farray_push(&R.tris, (size_t)ntri * 3 * TRI_VFLOATS);
    if (!out)
        return;
    for (int v = 0; v < 3 * ntri; v++, out += TRI_VFLOATS) {
        memcpy(out, pos + (size_t)v * 3, 3 * sizeof(float));
        memcpy(out + 3, nrm + (size_t)v * 3, 3 * sizeof(float));
        memcpy(out + 6, rgba, 4 * sizeof(float));
    }
}

/* queue a capsule: two spheres and a cylinder of 24 sides along the local y axis of xform */
void rnd_capsule(const float xform[12], float radius, float half_height, const float rgba[4])
{
    enum { SIDES = 24 };
    const float *ax = xform, *ay = xform + 3, *az = xform + 6, *c = xform + 9;
    float ends[8];
    for (int i = 0; i < 3; i++) {
        ends[i] = c[i] - half_height * ay[i];
        ends[4 + i] = c[i] + half_height * ay[i];
    }
    ends[3] = ends[7] = radius;
    float colors[8];
    for (int k = 0; k < 8; k++)
        colors[k] = (rgba ? rgba : default_solid)[k % 4];
    rnd_spheres(2, ends, colors);
    float pos[SIDES * 18], nrm[SIDES * 18];
    for (int s = 0; s < SIDES; s++) {
        float a0 = 6.2831853f * s / SIDES, a1 = 6.2831853f * (s + 1) / SIDES;
        float n0[3], n1[3];
        for (int i = 0; i < 3; i++) {
            n0[i] = cosf(a0) * ax[i] + sinf(a0) * az[i];
            n1[i] = cosf(a1) * ax[i] + sinf(a1) * az[i];
        }
        /* the side quad (bottom0, bottom1, top1, top0) as two triangles; triangles are drawn
         * without culling, so their winding does not matter */
        const float *order_n[6] = { n0, n1, n1, n0, n1, n0 };
        const int order_t[6] = { 0, 0, 1, 0, 1, 1 };
        for (int v = 0; v < 6; v++) {
            float *p = pos + (s * 6 + v) * 3, *n = nrm + (s * 6 + v) * 3;
            for (int i = 0; i < 3; i++) {
                n[i] = order_n[v][i];
                p[i] = ends[order_t[v] ? 4 + i : i] + radius * order_n[v][i];
            }
        }
    }
    rnd_triangles(SIDES * 2, pos, nrm, rgba);
}

/* append one segment (two vertices: position, colour) to a line batch */
static void push_line(FloatArray *batch, const float a[3], const float b[3], const float rgba[4])
{
    if (!a || !b)
        return;
    if (!rgba)
        rgba = default_line;
    float *out = rndi_farray_push(batch, 2 * LINE_VFLOATS);
    if (!out)
        return;
    memcpy(out, a, 3 * sizeof(float));
    memcpy(out + 3, rgba, 4 * sizeof(float));
    memcpy(out + 7, b, 3 * sizeof(float));
    memcpy(out + 10, rgba, 4 * sizeof(float));
}

/* queue one line segment drawn over the solids, not hidden by them (debug views) */
void rnd_line_xray(const float a[3], const float b[3], const float rgba[4]) { push_line(&R.xlines, a, b, rgba); }

/* queue one line segment */
void rnd_line(const float a[3], const float b[3], const float rgba[4]) { push_line(&R.lines, a, b, rgba); }

/* queue a ground grid; its lines are generated at rnd_end_frame, once the camera mode is known */
void rnd_grid(float half_extent, float spacing, float height)
{
    if (!(half_extent > 0.0f) || !(spacing > 0.0f))
        return;
    float *out = rndi_farray_push(&R.grids, GRID_FLOATS);
    if (!out)
        return;
    out[0] = half_extent;
    out[1] = spacing;
    out[2] = height;
}


/* ================================================================================================
 * drawing
 * ================================================================================================ */

/* append one coloured line-vertex pair to the scratch array */
static void push_segment(float ax, float ay, float az, float bx, float by, float bz, const float c[4])
{
    float *out = rndi_farray_push(&R.scratch, 2 * LINE_VFLOATS);
    if (!out)
        return;
    const float v[14] = { ax, ay, az, c[0], c[1], c[2], c[3], bx, by, bz, c[0], c[1], c[2], c[3] };
    memcpy(out, v, sizeof v);
}

/* turn one grid request into line vertices in the scratch array: the ground plane y = height in
 * 3D, the z = 0 plane in 2D; every 5th line brighter, the axes coloured */
static void emit_grid(float half_extent, float spacing, float height)
{
    static const float minor[4]  = { 0.50f, 0.50f, 0.50f, 0.30f };
    static const float major[4]  = { 0.62f, 0.62f, 0.62f, 0.60f };
    static const float axis_x[4] = { 0.90f, 0.32f, 0.30f, 0.95f };
    static const float axis_y[4] = { 0.35f, 0.80f, 0.35f, 0.95f };   /* 2D: the y axis            */
    static const float axis_z[4] = { 0.30f, 0.50f, 0.95f, 0.95f };   /* 3D: the z axis            */

    long count = (long)floorf(half_extent / spacing);
    if (count > MAX_GRID_LINES)
        count = MAX_GRID_LINES;
    float L = (float)count * spacing;
    for (long i = -count; i <= count; i++) {
        float s = (float)i * spacing;
        const float *c1 = i == 0 ? axis_x : (i % 5 == 0 ? major : minor);  /* along x           */
        const float *c2 = i == 0 ? (R.cam.ortho ? axis_y : axis_z) : (i % 5 == 0 ? major : minor);
        if (R.cam.ortho) {
            push_segment(-L, s, 0.0f, L, s, 0.0f, c1);
            push_segment(s, -L, 0.0f, s, L, 0.0f, c2);
        } else {
            push_segment(-L, height, s, L, height, s, c1);
            push_segment(s, height, -L, s, height, L, c2);
        }
    }
}

/* set the camera and light uniforms of a lit program */
static void set_lit_uniforms(const LitUniforms *u)
{
    glUniformMatrix4fv(u->viewproj, 1, GL_FALSE, R.viewproj);
    glUniform3fv(u->key_dir, 1, R.key_dir);
    glUniform3fv(u->fill_dir, 1, R.fill_dir);
    glUniform3fv(u->eye, 1, R.eye);
    const float to_camera[3] = { -R.fwd[0], -R.fwd[1], -R.fwd[2] };
    glUniform3fv(u->view_dir, 1, to_camera);
    glUniform1i(u->ortho, R.cam.ortho);
    glUniform1i(u->shadows, R.shadows_on);
    glUniformMatrix4fv(u->light_viewproj, 1, GL_FALSE, R.light_viewproj);
    glUniform1i(u->shadow_map, 1);
    glUniform1f(u->shadow_texel, R.shadow_texel);
}

/* pick the icosphere level from how many spheres are drawn: fine for a few, coarse for crowds
 * whose spheres cover only a few pixels each */
static int sphere_level(size_t count)
{
    if (count <= 5000)
        return 3;                    /* 1280 triangles                                            */
    if (count <= 40000)
        return 2;                    /* 320 triangles                                             */
    return 1;                        /* 80 triangles                                              */
}

/* ---- planes ------------------------------------------------------------------------------------- */

/* queue an infinite plane through point with unit normal (the solid side is behind the normal) */
void rnd_plane(const float point[3], const float normal[3], const float rgba[4])
{
    float *out = rndi_farray_push(&R.planes, PLANE_FLOATS + 4);
    if (!out)
        return;
    memcpy(out, point, 3 * sizeof(float));
    memcpy(out + 3, normal, 3 * sizeof(float));
    normalize3(out + 3);
    memcpy(out + 6, rgba ? rgba : default_solid, 4 * sizeof(float));
}

static void push_ground_quad(const float c[4][3], const float n[3], const float rgba[4])
{
    float *out = rndi_farray_push(&R.ground, 6 * TRI_VFLOATS);
    if (!out)
        return;
    static const int order[6] = { 0, 1, 2, 0, 2, 3 };
    for (int k = 0; k < 6; k++, out += TRI_VFLOATS) {
        memcpy(out, c[order[k]], 3 * sizeof(float));
        memcpy(out + 3, n, 3 * sizeof(float));
        memcpy(out + 6, rgba, 4 * sizeof(float));
    }
}

/* the planes as quads: in 3D a square 800 m wide in the plane, centred under the camera target; in
 * 2D the cross-section with the view plane z = 0, the solid half below the plane's line, facing the
 * camera */
static void emit_planes(void)
{
    R.ground.len = 0;
    for (size_t i = 0; i < R.planes.len; i += PLANE_FLOATS + 4) {
        const float *p = R.planes.data + i, *n = p + 3, *rgba = p + 6;
        float c[4][3];
        if (R.cam.ortho) {
            float l = sqrtf(n[0] * n[0] + n[1] * n[1]);
            if (l < 1e-6f)
                continue;            /* a plane facing the camera has no edge in the view          */
            float nx = n[0] / l, ny = n[1] / l, tx = -ny, ty = nx;
            /* the point of the plane's line nearest the view centre, and a span past the view */
            float s = (R.cam.cx - p[0]) * tx + (R.cam.cy - p[1]) * ty;
            float ox = p[0] + tx * s, oy = p[1] + ty * s;
            float span = 4.0f * R.cam.half_height * (R.aspect > 1.0f ? R.aspect : 1.0f) + 1.0f;
            const float corner[4][2] = { { -1, 0 }, { 1, 0 }, { 1, -1 }, { -1, -1 } };
            for (int k = 0; k < 4; k++) {
                c[k][0] = ox + corner[k][0] * span * tx + corner[k][1] * span * nx;
                c[k][1] = oy + corner[k][0] * span * ty + corner[k][1] * span * ny;
                c[k][2] = 0.0f;
            }
            const float facing[3] = { 0, 0, 1 };
            push_ground_quad(c, facing, rgba);
        } else {
            float e1[3], e2[3];
            const float h[3] = { fabsf(n[0]) < 0.9f ? 1.0f : 0.0f, fabsf(n[0]) < 0.9f ? 0.0f : 1.0f, 0.0f };
            cross3(n, h, e1);
            normalize3(e1);
            cross3(n, e1, e2);
            float rel[3] = { R.cam.target[0] - p[0], R.cam.target[1] - p[1], R.cam.target[2] - p[2] };
            float d = dot3(rel, n), half = 400.0f;
            float o[3] = { R.cam.target[0] - d * n[0], R.cam.target[1] - d * n[1], R.cam.target[2] - d * n[2] };
            const float corner[4][2] = { { -1, -1 }, { 1, -1 }, { 1, 1 }, { -1, 1 } };
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < 3; j++)
                    c[k][j] = o[j] + half * (corner[k][0] * e1[j] + corner[k][1] * e2[j]);
            push_ground_quad(c, n, rgba);
        }
    }
}

/* ---- shadows ------------------------------------------------------------------------------------ */

void rnd_shadows(int on)
{
    R.shadows_wanted = on != 0;
}

static void grow_bounds(float lo[3], float hi[3], const float c[3], const float r[3])
{
    for (int i = 0; i < 3; i++) {
        if (c[i] - r[i] < lo[i]) lo[i] = c[i] - r[i];
        if (c[i] + r[i] > hi[i]) hi[i] = c[i] + r[i];
    }
}

/* render the casters' depth as seen from the key light into the shadow map. The light's orthographic
 * view is fitted to the bounds of the casters (spheres, boxes, triangles, meshes; planes only
 * receive), clipped to a region around the camera target so a large world keeps sharp shadows near
 * where the camera looks. */
static void shadow_pass(void)
{
    R.shadows_on = 0;
    if (!R.shadows_wanted || R.cam.ortho || !R.shadow_fbo)
        return;
    float lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    for (size_t i = 0; i < R.spheres.len; i += SPHERE_FLOATS) {
        const float *q = R.spheres.data + i, r[3] = { q[3], q[3], q[3] };
        grow_bounds(lo, hi, q, r);
    }
    for (size_t i = 0; i < R.boxes.len; i += BOX_FLOATS) {
        const float *b = R.boxes.data + i, *half = b + 12;
        float r[3];
        for (int k = 0; k < 3; k++)
            r[k] = fabsf(b[k]) * half[0] + fabsf(b[3 + k]) * half[1] + fabsf(b[6 + k]) * half[2];
        grow_bounds(lo, hi, b + 9, r);
    }
    const float zero[3] = { 0, 0, 0 };
    for (size_t i = 0; i < R.tris.len; i += TRI_VFLOATS)
        grow_bounds(lo, hi, R.tris.data + i, zero);
    mesh_grow_bounds(lo, hi);
    float reach = 4.0f * sqrtf((R.cam.eye[0] - R.cam.target[0]) * (R.cam.eye[0] - R.cam.target[0]) +
                               (R.cam.eye[1] - R.cam.target[1]) * (R.cam.eye[1] - R.cam.target[1]) +
                               (R.cam.eye[2] - R.cam.target[2]) * (R.cam.eye[2] - R.cam.target[2])) + 10.0f;
    float c[3], r = 0;
    for (int i = 0; i < 3; i++) {
        if (lo[i] < R.cam.target[i] - reach) lo[i] = R.cam.target[i] - reach;
        if (hi[i] > R.cam.target[i] + reach) hi[i] = R.cam.target[i] + reach;
        if (!(lo[i] <= hi[i]))
            return;                  /* nothing (finite) near the camera casts a shadow             */
        c[i] = 0.5f * (lo[i] + hi[i]);
        r += 0.25f * (hi[i] - lo[i]) * (hi[i] - lo[i]);
    }
    r = sqrtf(r) + 0.01f;
    /* the light looks along -key_dir at the centre from 2r away: the casters lie 1r..3r deep */
    float fwd[3] = { -R.key_dir[0], -R.key_dir[1], -R.key_dir[2] }, right[3], up[3];
    const float alt[3] = { 0, 0, 1 };
    cross3(fwd, alt, right);
    normalize3(right);
    cross3(right, fwd, up);
    float eye[3] = { c[0] + 2 * r * R.key_dir[0], c[1] + 2 * r * R.key_dir[1], c[2] + 2 * r * R.key_dir[2] };
    float view[16], proj[16];
    mat4_view(right, up, fwd, eye, view);
    mat4_ortho(-r, r, -r, r, 0.01f * r, 6.0f * r, proj);
    mat4_mul(proj, view, R.light_viewproj);
    R.shadow_texel = 2.0f * r / SHADOW_SIZE;

    glBindFramebuffer(GL_FRAMEBUFFER, R.shadow_fbo);
    glViewport(0, 0, SHADOW_SIZE, SHADOW_SIZE);
    glDepthMask(GL_TRUE);
    glClear(GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(2.0f, 4.0f);
    size_t nspheres = R.spheres.len / SPHERE_FLOATS;
    if (nspheres) {
        glUseProgram(R.prog_depth_sphere);
        glUniformMatrix4fv(R.u_depth_sphere, 1, GL_FALSE, R.light_viewproj);
        glBindVertexArray(R.sphere_vao);
        rndi_stream_upload(&R.sphere_inst, R.spheres.data, R.spheres.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, R.sphere_count[2], GL_UNSIGNED_SHORT,
                                (void *)(R.sphere_first[2] * sizeof(GLushort)), (GLsizei)nspheres);
    }
    size_t nboxes = R.boxes.len / BOX_FLOATS;
    if (nboxes) {
        glUseProgram(R.prog_depth_box);
        glUniformMatrix4fv(R.u_depth_box, 1, GL_FALSE, R.light_viewproj);
        glBindVertexArray(R.box_vao);
        rndi_stream_upload(&R.box_inst, R.boxes.data, R.boxes.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, 36, GL_UNSIGNED_SHORT, (void *)0, (GLsizei)nboxes);
    }
    if (R.tris.len) {
        glUseProgram(R.prog_depth_tri);
        glUniformMatrix4fv(R.u_depth_tri, 1, GL_FALSE, R.light_viewproj);
        glBindVertexArray(R.tri_vao);
        rndi_stream_upload(&R.tri_buf, R.tris.data, R.tris.len * sizeof(float));
        glDrawArrays(GL_TRIANGLES, 0, (GLsizei)(R.tris.len / TRI_VFLOATS));
    }
    mesh_draw_depth();
    glDisable(GL_POLYGON_OFFSET_FILL);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, R.width, R.height);
    R.shadows_on = 1;
}

/* draw every queued batch: back layer, grid, planes, spheres, boxes, triangles, meshes, lines, flat
 * world drawing, overlay; the shadow map first when shadows are on */
void rnd_end_frame(void)
{
    if (!R.ready)
        return;
    update_camera();
    shadow_pass();
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, R.shadow_tex);
    glActiveTexture(GL_TEXTURE0);
    emit_planes();
    glViewport(0, 0, R.width, R.height);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_TRUE);

    rndi_2d_draw_back();             /* the world's back layer (backgrounds), under everything     */

    /* grid and lines share one upload: grid vertices first, then the lines */
    R.scratch.len = 0;
    for (size_t g = 0; g < R.grids.len; g += GRID_FLOATS)
        emit_grid(R.grids.data[g], R.grids.data[g + 1], R.grids.data[g + 2]);
    GLsizei grid_verts = (GLsizei)(R.scratch.len / LINE_VFLOATS);
    float *lines = R.lines.len ? rndi_farray_push(&R.scratch, R.lines.len) : NULL;
    if (lines)
        memcpy(lines, R.lines.data, R.lines.len * sizeof(float));
    GLsizei line_verts = (GLsizei)(R.scratch.len / LINE_VFLOATS) - grid_verts;
    float *xl = R.xlines.len ? rndi_farray_push(&R.scratch, R.xlines.len) : NULL;
    if (xl)
        memcpy(xl, R.xlines.data, R.xlines.len * sizeof(float));
    GLsizei xline_verts = (GLsizei)(R.scratch.len / LINE_VFLOATS) - grid_verts - line_verts;

    if (R.scratch.len) {
        rndi_stream_upload(&R.line_buf, R.scratch.data, R.scratch.len * sizeof(float));
        glUseProgram(R.prog_line);
        glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, R.viewproj);
        glBindVertexArray(R.line_vao);
        glDisable(GL_CULL_FACE);
        if (grid_verts)
            glDrawArrays(GL_LINES, 0, grid_verts);
    }

    /* planes: pushed back in depth, so grid lines on them stay visible */
    if (R.ground.len) {
        glDisable(GL_CULL_FACE);
        glEnable(GL_POLYGON_OFFSET_FILL);
        glPolygonOffset(1.0f, 2.0f);
        glUseProgram(R.prog_tri);
        set_lit_uniforms(&R.u_tri);
        glBindVertexArray(R.tri_vao);
        rndi_stream_upload(&R.tri_buf, R.ground.data, R.ground.len * sizeof(float));
        glDrawArrays(GL_TRIANGLES, 0, (GLsizei)(R.ground.len / TRI_VFLOATS));
        glDisable(GL_POLYGON_OFFSET_FILL);
    }

    /* lit solids */
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    glFrontFace(GL_CCW);
    size_t nspheres = R.spheres.len / SPHERE_FLOATS;
    if (nspheres) {
        int level = sphere_level(nspheres);
        glUseProgram(R.prog_sphere);
        set_lit_uniforms(&R.u_sphere);
        glBindVertexArray(R.sphere_vao);
        rndi_stream_upload(&R.sphere_inst, R.spheres.data, R.spheres.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, R.sphere_count[level], GL_UNSIGNED_SHORT,
                                (void *)(R.sphere_first[level] * sizeof(GLushort)), (GLsizei)nspheres);
    }
    size_t nboxes = R.boxes.len / BOX_FLOATS;
    if (nboxes) {
        glUseProgram(R.prog_box);
        set_lit_uniforms(&R.u_box);
        glBindVertexArray(R.box_vao);
        rndi_stream_upload(&R.box_inst, R.boxes.data, R.boxes.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, 36, GL_UNSIGNED_SHORT, (void *)0, (GLsizei)nboxes);
    }
    glDisable(GL_CULL_FACE);
    size_t ntri_verts = R.tris.len / TRI_VFLOATS;
    if (ntri_verts) {
        glUseProgram(R.prog_tri);
        set_lit_uniforms(&R.u_tri);
        glBindVertexArray(R.tri_vao);
        rndi_stream_upload(&R.tri_buf, R.tris.data, R.tris.len * sizeof(float));
        glDrawArrays(GL_TRIANGLES, 0, (GLsizei)ntri_verts);
    }
    mesh_draw();                     /* two-sided: no culling                                     */

    /* lines (already uploaded after the grid) */
    if (line_verts) {
        glUseProgram(R.prog_line);
        glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, R.viewproj);
        glBindVertexArray(R.line_vao);
        glDrawArrays(GL_LINES, grid_verts, line_verts);
    }
    if (xline_verts) {
        glUseProgram(R.prog_line);
        glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, R.viewproj);
        glBindVertexArray(R.line_vao);
        glDisable(GL_DEPTH_TEST);
        glDrawArrays(GL_LINES, grid_verts + line_verts, xline_verts);
        glEnable(GL_DEPTH_TEST);
    }

    rndi_2d_draw_world();            /* flat world shapes, images and wide lines                   */
    rndi_2d_draw_overlay();          /* the screen overlay, in call order, over everything         */

    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glUseProgram(0);
}

/* ================================================================================================
 * output
 * ================================================================================================ */

/* read the back buffer and write it as an upright, opaque RGBA PNG; 0 on success */
int rnd_screenshot(const char *path, int width, int height)
{
    if (!path || width <= 0 || height <= 0) {
        rndi_set_error("rnd_screenshot: bad arguments (path %s, %dx%d)", path ? path : "NULL", width, height);
        return 1;
    }
    size_t row = (size_t)width * 4;
    unsigned char *pixels = malloc(row * (size_t)height);
    unsigned char *flipped = malloc(row * (size_t)height);
    if (!pixels || !flipped) {
        free(pixels);
        free(flipped);
        rndi_set_error("rnd_screenshot: out of memory for %dx%d pixels", width, height);
        return 1;
    }
    while (glGetError() != GL_NO_ERROR)
        ;                            /* drop stale errors so the check below is ours              */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        free(pixels);
        free(flipped);
        rndi_set_error("rnd_screenshot: glReadPixels failed (GL error 0x%04x)", (unsigned)err);
        return 1;
    }
    /* GL rows go bottom-up, PNG rows top-down; force alpha opaque */
    for (int y = 0; y < height; y++) {
        unsigned char *dst = flipped + (size_t)y * row;
        memcpy(dst, pixels + (size_t)(height - 1 - y) * row, row);
        for (size_t x = 3; x < row; x += 4)
            dst[x] = 255;
    }
    int ok = stbi_write_png(path, width, height, 4, flipped, (int)row);
    free(pixels);
    free(flipped);
    if (!ok) {
        rndi_set_error("rnd_screenshot: could not write %s", path);
        return 1;
    }
    return 0;
}

/* ================================================================================================
 * meshes: lit, two-sided, smooth-shaded triangles (cloth)
 * ================================================================================================ */

#define MESH_VFLOATS 14              /* x y z, nx ny nz, front r g b a, back r g b a                */

/* the normal is interpolated per fragment and turned to face the viewer on back faces, which take
 * the back colour: a sheet shows its lining from behind, lit like its front */
static const char *mesh_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_normal;\n"
    "layout(location = 2) in vec4 a_color;\n"
    "layout(location = 3) in vec4 a_back;\n"
    "uniform mat4 u_viewproj;\n"
    "out vec3 v_normal;\n"
    "out vec3 v_world;\n"
    "out vec4 v_color;\n"
    "out vec4 v_back;\n"
    "void main() {\n"
    "    v_normal = a_normal;\n"
    "    v_world = a_pos;\n"
    "    v_color = a_color;\n"
    "    v_back = a_back;\n"
    "    gl_Position = u_viewproj * vec4(a_pos, 1.0);\n"
    "}\n";

static const char *mesh_fs =
    "#version 330 core\n"
    SHADOW_GLSL
    "in vec3 v_normal;\n"
    "in vec3 v_world;\n"
    "in vec4 v_color;\n"
    "in vec4 v_back;\n"
    "uniform vec3 u_key_dir;\n"
    "uniform vec3 u_fill_dir;\n"
    "uniform vec3 u_eye;\n"
    "uniform vec3 u_view_dir;\n"
    "uniform int u_ortho;\n"
    "out vec4 o_color;\n"
    "void main() {\n"
    "    vec3 n = normalize(v_normal);\n"
    "    vec4 base = v_color;\n"
    "    if (!gl_FrontFacing) { n = -n; base = v_back; }\n"
    "    vec3 v = (u_ortho != 0) ? u_view_dir : normalize(u_eye - v_world);\n"
    "    float key = max(dot(n, u_key_dir), 0.0) * shadow_visibility(v_world, n);\n"
    "    float fill = max(dot(n, u_fill_dir), 0.0);\n"
    "    float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0);\n"
    "    vec3 ambient = mix(vec3(0.10, 0.09, 0.08), vec3(0.24, 0.26, 0.30), 0.5 + 0.5 * n.y);\n"
    "    vec3 h = normalize(u_key_dir + v);\n"
    "    float spec = key > 0.0 ? pow(max(dot(n, h), 0.0), 24.0) : 0.0;\n"
    "    vec3 light = ambient + key * vec3(0.80, 0.77, 0.72) + fill * vec3(0.22, 0.25, 0.30) + 0.15 * rim;\n"
    "    o_color = vec4(base.rgb * light + 0.12 * spec * vec3(1.0, 0.98, 0.95), base.a);\n"
    "}\n";

static struct {
    GLuint prog, vao, vbo, ebo;
    LitUniforms u;
    FloatArray verts;
    unsigned *idx;
    size_t nidx, idx_cap, ebo_cap;
    StreamBuffer vbuf;
} M;

static int mesh_init(void)
{
    M.prog = rndi_link_program(mesh_vs, mesh_fs, "mesh");
    if (!M.prog)
        return 1;
    M.u = lit_uniforms(M.prog);
    static const int attrs[4] = { 3, 3, 4, 4 };
    M.vao = rndi_build_stream_vao(&M.vbuf, attrs, 4);
    glBindVertexArray(M.vao);
    glGenBuffers(1, &M.ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, M.ebo);
    glBindVertexArray(0);
    M.ebo_cap = 0;
    return 0;
}

static void mesh_shutdown(void)
{
    rndi_delete_program(&M.prog);
    rndi_delete_vao(&M.vao);
    rndi_delete_buffer(&M.vbuf.id);
    rndi_delete_buffer(&M.ebo);
    M.vbuf.cap = M.ebo_cap = 0;
    rndi_farray_free(&M.verts);
    free(M.idx);
    M.idx = NULL;
    M.nidx = M.idx_cap = 0;
}

static void mesh_begin_frame(void)
{
    M.verts.len = 0;
    M.nidx = 0;
}

/* queue a mesh: its vertices go after those already queued, its indices are offset to match */
void rnd_mesh(int nverts, const float *xyz, const float *normals, int ntris, const unsigned *indices,
              const float rgba[4], const float back_rgba[4])
{
    if (nverts <= 0 || ntris <= 0 || !xyz || !normals || !indices)
        return;
    if (!rgba)
        rgba = default_solid;
    if (!back_rgba)
        back_rgba = rgba;
    size_t base = M.verts.len / MESH_VFLOATS;
    if (M.nidx + 3 * (size_t)ntris > M.idx_cap) {
        size_t cap = M.idx_cap ? M.idx_cap : 4096;
        while (cap < M.nidx + 3 * (size_t)ntris)
            cap *= 2;
        unsigned *p = realloc(M.idx, cap * sizeof(unsigned));
        if (!p)
            return;
        M.idx = p;
        M.idx_cap = cap;
    }
    float *out = rndi_farray_push(&M.verts, (size_t)nverts * MESH_VFLOATS);
    if (!out)
        return;
    for (int i = 0; i < nverts; i++, out += MESH_VFLOATS) {
        memcpy(out, xyz + 3 * (size_t)i, 3 * sizeof(float));
        memcpy(out + 3, normals + 3 * (size_t)i, 3 * sizeof(float));
        memcpy(out + 6, rgba, 4 * sizeof(float));
        memcpy(out + 10, back_rgba, 4 * sizeof(float));
    }
    for (int k = 0; k < 3 * ntris; k++) {
        unsigned v = indices[k];
        M.idx[M.nidx++] = v < (unsigned)nverts ? (unsigned)base + v : (unsigned)base; /* a bad index: a sliver */
    }
}

/* draw the queued meshes (called by rnd_end_frame after the lit solids, culling off) */
static void mesh_draw(void)
{
    if (!M.nidx || !M.prog)
        return;
    glUseProgram(M.prog);
    set_lit_uniforms(&M.u);
    glBindVertexArray(M.vao);
    rndi_stream_upload(&M.vbuf, M.verts.data, M.verts.len * sizeof(float));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, M.ebo);
    size_t bytes = M.nidx * sizeof(unsigned);
    if (bytes > M.ebo_cap) {
        size_t cap = M.ebo_cap ? M.ebo_cap : 16384;
        while (cap < bytes)
            cap *= 2;
        M.ebo_cap = cap;
    }
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)M.ebo_cap, NULL, GL_STREAM_DRAW);
    glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, M.idx);
    glDrawElements(GL_TRIANGLES, (GLsizei)M.nidx, GL_UNSIGNED_INT, (void *)0);
    glBindVertexArray(0);
}

/* the shadow pass's program for meshes (cloth casts shadows too) */
static GLuint mesh_depth_prog;
static GLint mesh_depth_viewproj;

static int mesh_init_depth(void)
{
    mesh_depth_prog = rndi_link_program(mesh_vs, depth_fs, "mesh depth");
    mesh_depth_viewproj = glGetUniformLocation(mesh_depth_prog, "u_viewproj");
    return mesh_depth_prog ? 0 : 1;
}

static void mesh_shutdown_depth(void)
{
    rndi_delete_program(&mesh_depth_prog);
}

static void mesh_grow_bounds(float lo[3], float hi[3])
{
    for (size_t i = 0; i < M.verts.len; i += MESH_VFLOATS)
        for (int k = 0; k < 3; k++) {
            float v = M.verts.data[i + k];
            if (v < lo[k]) lo[k] = v;
            if (v > hi[k]) hi[k] = v;
        }
}

/* the queued meshes into the shadow map (the uploads are repeated by mesh_draw) */
static void mesh_draw_depth(void)
{
    if (!M.nidx || !mesh_depth_prog)
        return;
    glUseProgram(mesh_depth_prog);
    glUniformMatrix4fv(mesh_depth_viewproj, 1, GL_FALSE, R.light_viewproj);
    glBindVertexArray(M.vao);
    rndi_stream_upload(&M.vbuf, M.verts.data, M.verts.len * sizeof(float));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, M.ebo);
    size_t bytes = M.nidx * sizeof(unsigned);
    if (bytes > M.ebo_cap) {
        size_t cap = M.ebo_cap ? M.ebo_cap : 16384;
        while (cap < bytes)
            cap *= 2;
        M.ebo_cap = cap;
    }
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)M.ebo_cap, NULL, GL_STREAM_DRAW);
    glBufferSubData(GL_ELEMENT_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, M.idx);
    glDrawElements(GL_TRIANGLES, (GLsizei)M.nidx, GL_UNSIGNED_INT, (void *)0);
    glBindVertexArray(0);
}

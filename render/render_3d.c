/* render_3d.c: the lit world of the renderer: instanced spheres and boxes, lit triangles (hulls,
 * meshes, capsule sides), two-sided cloth meshes, infinite planes, the ground grid, coloured lines,
 * and the shadow map of the key light.
 *
 * Every rnd_* call during a frame only appends to a growable float array owned by this file;
 * rndi_3d_draw() uploads each array into a streamed buffer (orphaned with glBufferData, then filled
 * with glBufferSubData) and draws it with one call: grid, planes, spheres, boxes, triangles, meshes,
 * lines. render_frame.c places these passes among the flat ones of render_2d.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <epoxy/gl.h>

#include "render.h"
#include "render_3d.h"
#include "render_gl.h"
#include "render_math.h"

/* ================================================================================================
 * batch layouts and module state
 * ================================================================================================ */

/* floats per batched element */
#define SPHERE_FLOATS   8            /* x y z r, r g b a                                            */
#define BOX_FLOATS      19           /* 3 rotation columns, translation, half extents, r g b a      */
#define LINE_VFLOATS    7            /* x y z, r g b a (per vertex)                                 */
#define GRID_FLOATS     3            /* half_extent, spacing, height (per rnd_grid request)          */
#define TRI_VFLOATS     10           /* x y z, nx ny nz, r g b a (per vertex of rnd_triangles)  */

#define MAX_GRID_LINES  1000         /* per side of the origin and per direction                    */
#define GRID_MIN_PIXELS 6.0          /* closest 2D grid lines on the screen, pixels                  */

static const float default_solid[4] = { 1.00f, 0.55f, 0.15f, 1.0f }; /* a pleasant orange       */
static const float default_line[4]  = { 0.90f, 0.90f, 0.90f, 1.0f };

/* uniform locations of the lit programs */
typedef struct {
    GLint viewproj, key_dir, fill_dir, eye, view_dir, ortho;
    GLint shadows, light_viewproj, shadow_map, shadow_texel;
} LitUniforms;

#define SHADOW_SIZE 2048             /* texels per side of the shadow map                           */
#define PLANE_FLOATS 7               /* point xyz, unit normal xyz, (colour follows: 4)             */

static struct {
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
    GLuint prog_depth_sphere, prog_depth_box, prog_depth_tri;
    GLint u_depth_sphere, u_depth_box, u_depth_tri;
    float light_viewproj[16], shadow_texel;
} R;

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
#define ICO_INDICES    ((20 + 80 + 320 + 1280) * 3) /* the index lists of all levels together       */

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

/* level 0: the twelve corners of the icosahedron (golden-ratio rectangles) and its twenty faces,
 * each made counter-clockwise seen from outside; its index range goes to sphere_first/count[0] */
static void ico_base(IcoBuilder *ib, GLushort *indices)
{
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

    for (int i = 0; i < 12; i++)
        ico_add_vertex(ib, corners[i][0], corners[i][1], corners[i][2]);
    for (int f = 0; f < 20; f++) {
        GLushort a = (GLushort)faces[f][0], b = (GLushort)faces[f][1], c = (GLushort)faces[f][2];
        const float *pa = &ib->verts[a * 3], *pb = &ib->verts[b * 3], *pc = &ib->verts[c * 3];
        float ab[3] = { pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2] };
        float ac[3] = { pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2] };
        float n[3];
        cross3(ab, ac, n);
        if (dot3(n, pa) < 0.0f) {    /* inward-facing: swap two corners                            */
            GLushort tmp = b;
            b = c;
            c = tmp;
        }
        indices[f * 3 + 0] = a;
        indices[f * 3 + 1] = b;
        indices[f * 3 + 2] = c;
    }
    R.sphere_first[0] = 0;
    R.sphere_count[0] = 60;
}

/* levels 1..3: each splits every triangle of the previous level into four at the edges' midpoints
 * (pushed out onto the sphere); the index lists follow one another in `indices` */
static void ico_subdivide(IcoBuilder *ib, GLushort *indices)
{
    for (int L = 1; L < ICO_LEVELS; L++) {
        const GLushort *prev = indices + R.sphere_first[L - 1];
        int ntri = R.sphere_count[L - 1] / 3;
        GLushort *out = indices + R.sphere_first[L - 1] + R.sphere_count[L - 1];
        ib->nedges = 0;
        for (int f = 0; f < ntri; f++) {
            GLushort a = prev[f * 3], b = prev[f * 3 + 1], c = prev[f * 3 + 2];
            GLushort ab = ico_midpoint(ib, a, b);
            GLushort bc = ico_midpoint(ib, b, c);
            GLushort ca = ico_midpoint(ib, c, a);
            GLushort tris[12] = { a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca };
            memcpy(out + f * 12, tris, sizeof tris);
        }
        R.sphere_first[L] = (int)(out - indices);
        R.sphere_count[L] = ntri * 12;
    }
}

/* the sphere VAO: the unit-sphere vertices (position = normal), the index lists of every level, and
 * the per-instance attributes (centre + radius, colour) read from the streamed instance buffer */
static void upload_sphere_mesh(const IcoBuilder *ib, const GLushort *indices)
{
    glGenVertexArrays(1, &R.sphere_vao);
    glBindVertexArray(R.sphere_vao);
    glGenBuffers(1, &R.sphere_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, R.sphere_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(ib->nverts * 3 * sizeof(float)), ib->verts, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (void *)0);
    glGenBuffers(1, &R.sphere_ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, R.sphere_ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, ICO_INDICES * sizeof(GLushort), indices, GL_STATIC_DRAW);

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

/* build icosphere levels 0..3 sharing one vertex list (each subdivision only appends vertices), put
 * the vertices and the four index lists, one after the other, into the sphere VAO */
static void build_sphere_mesh(void)
{
    static IcoBuilder ib;            /* ~10 KB: keep it off the stack                              */
    static GLushort indices[ICO_INDICES];
    memset(&ib, 0, sizeof ib);
    ico_base(&ib, indices);
    ico_subdivide(&ib, indices);
    upload_sphere_mesh(&ib, indices);
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
static void mesh_draw(const RenderView *v);
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

/* compile the lit programs, build the sphere and box meshes, the streamed buffers, the mesh batch
 * and the shadow map; 0 on success (without a shadow map the rest still works) */
int rndi_3d_init(void)
{
    R.prog_sphere = rndi_link_program(sphere_vs, sphere_fs, "sphere");
    R.prog_box = R.prog_sphere ? rndi_link_program(box_vs, box_fs, "box") : 0;
    R.prog_line = R.prog_box ? rndi_link_program(line_vs, line_fs, "line") : 0;
    R.prog_tri = R.prog_line ? rndi_link_program(tri_vs, lit_fs, "triangles") : 0;
    if (!R.prog_tri)
        return 1;
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
    if (mesh_init() != 0)
        return 1;
    if (shadow_init() != 0)
        shadow_shutdown();           /* no shadows, everything else works                          */
    R.shadows_wanted = 1;
    return 0;
}

/* free every GL object and every batch array of the lit world; safe to call more than once */
void rndi_3d_shutdown(void)
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
    mesh_shutdown();
    rndi_farray_free(&R.spheres);
    rndi_farray_free(&R.boxes);
    rndi_farray_free(&R.grids);
    rndi_farray_free(&R.lines);
    rndi_farray_free(&R.scratch);
}

/* ================================================================================================
 * batching
 * ================================================================================================ */

/* empty the batches for a new frame */
void rndi_3d_begin_frame(void)
{
    R.spheres.len = R.boxes.len = R.grids.len = R.lines.len = R.tris.len = R.xlines.len = R.planes.len = 0;
    mesh_begin_frame();
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

/* the grid of the 2D camera covers the whole view wherever it looks (a game that follows a body far
 * from the origin keeps its grid): lines at multiples of `spacing` across the visible rectangle, the
 * spacing multiplied by 5 while lines would fall closer than GRID_MIN_PIXELS or a direction would need
 * more than 2 MAX_GRID_LINES lines (a view zoomed far out shows every 5th, 25th, ... line); every 5th
 * line of the base spacing brighter, the axes coloured */
static void emit_grid_2d(const RenderView *v, float spacing, const float minor[4], const float major[4],
                         const float axis_x[4], const float axis_y[4])
{
    float hh = v->cam.half_height, hw = hh * v->aspect;
    float lo[2] = { v->cam.cx - hw, v->cam.cy - hh }, hi[2] = { v->cam.cx + hw, v->cam.cy + hh };
    double step = spacing;
    long stride = 1;                                  /* step / spacing                              */
    double px_per_m = (double)v->height / (2.0 * hh);
    while (step * px_per_m < GRID_MIN_PIXELS || (hi[0] - lo[0]) / step > 2.0 * MAX_GRID_LINES ||
           (hi[1] - lo[1]) / step > 2.0 * MAX_GRID_LINES)
        step *= 5.0, stride *= 5;
    for (int d = 0; d < 2; d++) {                     /* d = 0: lines along x (at y = s); 1: along y  */
        long first = (long)floor(lo[1 - d] / step), last = (long)ceil(hi[1 - d] / step);
        for (long i = first; i <= last; i++) {
            float s = (float)((double)i * step);
            long k = i * stride;                      /* the line's index in the base spacing       */
            const float *c = k == 0 ? (d == 0 ? axis_x : axis_y) : (k % 5 == 0 ? major : minor);
            if (d == 0) push_segment(lo[0], s, 0.0f, hi[0], s, 0.0f, c);
            else push_segment(s, lo[1], 0.0f, s, hi[1], 0.0f, c);
        }
    }
}

/* turn one grid request into line vertices in the scratch array: the ground plane y = height in
 * 3D (half_extent on each side of the origin), the z = 0 plane across the whole view in 2D; every
 * 5th line brighter, the axes coloured */
static void emit_grid(const RenderView *v, float half_extent, float spacing, float height)
{
    static const float minor[4]  = { 0.50f, 0.50f, 0.50f, 0.30f };
    static const float major[4]  = { 0.62f, 0.62f, 0.62f, 0.60f };
    static const float axis_x[4] = { 0.90f, 0.32f, 0.30f, 0.95f };
    static const float axis_y[4] = { 0.35f, 0.80f, 0.35f, 0.95f };   /* 2D: the y axis            */
    static const float axis_z[4] = { 0.30f, 0.50f, 0.95f, 0.95f };   /* 3D: the z axis            */

    if (v->cam.ortho) {
        emit_grid_2d(v, spacing, minor, major, axis_x, axis_y);
        return;
    }
    long count = (long)floorf(half_extent / spacing);
    if (count > MAX_GRID_LINES)
        count = MAX_GRID_LINES;
    float L = (float)count * spacing;
    for (long i = -count; i <= count; i++) {
        float s = (float)i * spacing;
        const float *c1 = i == 0 ? axis_x : (i % 5 == 0 ? major : minor);  /* along x           */
        const float *c2 = i == 0 ? axis_z : (i % 5 == 0 ? major : minor);
        push_segment(-L, height, s, L, height, s, c1);
        push_segment(s, height, -L, s, height, L, c2);
    }
}

/* set the camera and light uniforms of a lit program */
static void set_lit_uniforms(const LitUniforms *u, const RenderView *v)
{
    glUniformMatrix4fv(u->viewproj, 1, GL_FALSE, v->viewproj);
    glUniform3fv(u->key_dir, 1, R.key_dir);
    glUniform3fv(u->fill_dir, 1, R.fill_dir);
    glUniform3fv(u->eye, 1, v->eye);
    const float to_camera[3] = { -v->fwd[0], -v->fwd[1], -v->fwd[2] };
    glUniform3fv(u->view_dir, 1, to_camera);
    glUniform1i(u->ortho, v->cam.ortho);
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
static void emit_planes(const RenderView *v)
{
    const CameraParams *cam = &v->cam;
    R.ground.len = 0;
    for (size_t i = 0; i < R.planes.len; i += PLANE_FLOATS + 4) {
        const float *p = R.planes.data + i, *n = p + 3, *rgba = p + 6;
        float c[4][3];
        if (cam->ortho) {
            float l = sqrtf(n[0] * n[0] + n[1] * n[1]);
            if (l < 1e-6f)
                continue;            /* a plane facing the camera has no edge in the view          */
            float nx = n[0] / l, ny = n[1] / l, tx = -ny, ty = nx;
            /* the point of the plane's line nearest the view centre, and a span past the view */
            float s = (cam->cx - p[0]) * tx + (cam->cy - p[1]) * ty;
            float ox = p[0] + tx * s, oy = p[1] + ty * s;
            float span = 4.0f * cam->half_height * (v->aspect > 1.0f ? v->aspect : 1.0f) + 1.0f;
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
            float rel[3] = { cam->target[0] - p[0], cam->target[1] - p[1], cam->target[2] - p[2] };
            float d = dot3(rel, n), half = 400.0f;
            float o[3] = { cam->target[0] - d * n[0], cam->target[1] - d * n[1], cam->target[2] - d * n[2] };
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

/* the sphere (centre c, radius *r) around every caster (spheres, boxes, triangles, meshes; planes
 * only receive), its box first clipped to a region around the camera target so a large world keeps
 * sharp shadows near where the camera looks; 0 when nothing (finite) there casts a shadow */
static int caster_bounds(const CameraParams *cam, float c[3], float *r)
{
    float lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    for (size_t i = 0; i < R.spheres.len; i += SPHERE_FLOATS) {
        const float *q = R.spheres.data + i, radius[3] = { q[3], q[3], q[3] };
        grow_bounds(lo, hi, q, radius);
    }
    for (size_t i = 0; i < R.boxes.len; i += BOX_FLOATS) {
        const float *b = R.boxes.data + i, *half = b + 12;
        float extent[3];
        for (int k = 0; k < 3; k++)
            extent[k] = fabsf(b[k]) * half[0] + fabsf(b[3 + k]) * half[1] + fabsf(b[6 + k]) * half[2];
        grow_bounds(lo, hi, b + 9, extent);
    }
    const float zero[3] = { 0, 0, 0 };
    for (size_t i = 0; i < R.tris.len; i += TRI_VFLOATS)
        grow_bounds(lo, hi, R.tris.data + i, zero);
    mesh_grow_bounds(lo, hi);
    float reach = 4.0f * sqrtf((cam->eye[0] - cam->target[0]) * (cam->eye[0] - cam->target[0]) +
                               (cam->eye[1] - cam->target[1]) * (cam->eye[1] - cam->target[1]) +
                               (cam->eye[2] - cam->target[2]) * (cam->eye[2] - cam->target[2])) + 10.0f;
    float r2 = 0;
    for (int i = 0; i < 3; i++) {
        if (lo[i] < cam->target[i] - reach) lo[i] = cam->target[i] - reach;
        if (hi[i] > cam->target[i] + reach) hi[i] = cam->target[i] + reach;
        if (!(lo[i] <= hi[i]))
            return 0;
        c[i] = 0.5f * (lo[i] + hi[i]);
        r2 += 0.25f * (hi[i] - lo[i]) * (hi[i] - lo[i]);
    }
    *r = sqrtf(r2) + 0.01f;
    return 1;
}

/* the light's orthographic view of the sphere (c, r): it looks along -key_dir at the centre from 2r
 * away, so the casters lie 1r..3r deep; sets light_viewproj and the world size of a map texel */
static void fit_light_view(const float c[3], float r)
{
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
}

/* the casters' depth seen through light_viewproj into the bound shadow framebuffer (spheres at
 * icosphere level 2, 320 triangles, however many there are) */
static void draw_casters_depth(void)
{
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
}

/* render the casters' depth as seen from the key light into the shadow map (3D camera only); the lit
 * shaders compare against it when shadows_on */
static void shadow_pass(const RenderView *v)
{
    R.shadows_on = 0;
    float c[3], r;
    if (!R.shadows_wanted || v->cam.ortho || !R.shadow_fbo || !caster_bounds(&v->cam, c, &r))
        return;
    fit_light_view(c, r);
    glBindFramebuffer(GL_FRAMEBUFFER, R.shadow_fbo);
    glViewport(0, 0, SHADOW_SIZE, SHADOW_SIZE);
    glDepthMask(GL_TRUE);
    glClear(GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(2.0f, 4.0f);
    draw_casters_depth();
    glDisable(GL_POLYGON_OFFSET_FILL);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, v->width, v->height);
    R.shadows_on = 1;
}

/* the light directions for this view: the fill light is fixed relative to the camera (from the
 * right), so every view looks lit. The key light is the sun of the shadows: fixed in the world in 3D
 * (high, from the left and the +z side most cameras look from); in 2D it comes from upper left behind
 * the viewer */
static void update_lights(const RenderView *v)
{
    const float key_view[3] = { -0.45f, 0.70f, 0.55f }, fill_view[3] = { 0.70f, -0.15f, 0.45f };
    if (v->cam.ortho) {
        rndi_view_to_world(v, key_view, R.key_dir);
    } else {
        R.key_dir[0] = -0.35f, R.key_dir[1] = 1.0f, R.key_dir[2] = 0.45f;
        normalize3(R.key_dir);
    }
    rndi_view_to_world(v, fill_view, R.fill_dir);
}

/* before anything is drawn: the lights, the shadow map (when shadows are on) bound to texture unit
 * 1, and the planes' quads for this view */
void rndi_3d_prepare(const RenderView *v)
{
    update_lights(v);
    shadow_pass(v);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, R.shadow_tex);
    glActiveTexture(GL_TEXTURE0);
    emit_planes(v);
}

/* vertex counts of the one line upload: grid vertices first, then the lines, then the x-ray lines */
typedef struct {
    GLsizei grid, lines, xlines;
} LineCounts;

/* gather the grid's vertices (made for this view) and the queued lines into the scratch array */
static LineCounts gather_lines(const RenderView *v)
{
    LineCounts n;
    R.scratch.len = 0;
    for (size_t g = 0; g < R.grids.len; g += GRID_FLOATS)
        emit_grid(v, R.grids.data[g], R.grids.data[g + 1], R.grids.data[g + 2]);
    n.grid = (GLsizei)(R.scratch.len / LINE_VFLOATS);
    float *lines = R.lines.len ? rndi_farray_push(&R.scratch, R.lines.len) : NULL;
    if (lines)
        memcpy(lines, R.lines.data, R.lines.len * sizeof(float));
    n.lines = (GLsizei)(R.scratch.len / LINE_VFLOATS) - n.grid;
    float *xl = R.xlines.len ? rndi_farray_push(&R.scratch, R.xlines.len) : NULL;
    if (xl)
        memcpy(xl, R.xlines.data, R.xlines.len * sizeof(float));
    n.xlines = (GLsizei)(R.scratch.len / LINE_VFLOATS) - n.grid - n.lines;
    return n;
}

/* upload the gathered lines once and draw the grid, before any solid */
static void draw_grid(const RenderView *v, const LineCounts *n)
{
    if (!R.scratch.len)
        return;
    rndi_stream_upload(&R.line_buf, R.scratch.data, R.scratch.len * sizeof(float));
    glUseProgram(R.prog_line);
    glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, v->viewproj);
    glBindVertexArray(R.line_vao);
    glDisable(GL_CULL_FACE);
    if (n->grid)
        glDrawArrays(GL_LINES, 0, n->grid);
}

/* planes: pushed back in depth, so grid lines on them stay visible */
static void draw_planes(const RenderView *v)
{
    if (!R.ground.len)
        return;
    glDisable(GL_CULL_FACE);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.0f, 2.0f);
    glUseProgram(R.prog_tri);
    set_lit_uniforms(&R.u_tri, v);
    glBindVertexArray(R.tri_vao);
    rndi_stream_upload(&R.tri_buf, R.ground.data, R.ground.len * sizeof(float));
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)(R.ground.len / TRI_VFLOATS));
    glDisable(GL_POLYGON_OFFSET_FILL);
}

/* the lit solids: spheres and boxes (back faces culled), then triangles and meshes (two-sided) */
static void draw_solids(const RenderView *v)
{
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    glFrontFace(GL_CCW);
    size_t nspheres = R.spheres.len / SPHERE_FLOATS;
    if (nspheres) {
        int level = sphere_level(nspheres);
        glUseProgram(R.prog_sphere);
        set_lit_uniforms(&R.u_sphere, v);
        glBindVertexArray(R.sphere_vao);
        rndi_stream_upload(&R.sphere_inst, R.spheres.data, R.spheres.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, R.sphere_count[level], GL_UNSIGNED_SHORT,
                                (void *)(R.sphere_first[level] * sizeof(GLushort)), (GLsizei)nspheres);
    }
    size_t nboxes = R.boxes.len / BOX_FLOATS;
    if (nboxes) {
        glUseProgram(R.prog_box);
        set_lit_uniforms(&R.u_box, v);
        glBindVertexArray(R.box_vao);
        rndi_stream_upload(&R.box_inst, R.boxes.data, R.boxes.len * sizeof(float));
        glDrawElementsInstanced(GL_TRIANGLES, 36, GL_UNSIGNED_SHORT, (void *)0, (GLsizei)nboxes);
    }
    glDisable(GL_CULL_FACE);
    size_t ntri_verts = R.tris.len / TRI_VFLOATS;
    if (ntri_verts) {
        glUseProgram(R.prog_tri);
        set_lit_uniforms(&R.u_tri, v);
        glBindVertexArray(R.tri_vao);
        rndi_stream_upload(&R.tri_buf, R.tris.data, R.tris.len * sizeof(float));
        glDrawArrays(GL_TRIANGLES, 0, (GLsizei)ntri_verts);
    }
    mesh_draw(v);
}

/* the lines (uploaded with the grid): depth-tested, then the x-ray lines over everything */
static void draw_lines(const RenderView *v, const LineCounts *n)
{
    if (n->lines) {
        glUseProgram(R.prog_line);
        glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, v->viewproj);
        glBindVertexArray(R.line_vao);
        glDrawArrays(GL_LINES, n->grid, n->lines);
    }
    if (n->xlines) {
        glUseProgram(R.prog_line);
        glUniformMatrix4fv(R.u_line_viewproj, 1, GL_FALSE, v->viewproj);
        glBindVertexArray(R.line_vao);
        glDisable(GL_DEPTH_TEST);
        glDrawArrays(GL_LINES, n->grid + n->lines, n->xlines);
        glEnable(GL_DEPTH_TEST);
    }
}

/* draw every queued batch of the lit world: grid, planes, spheres, boxes, triangles, meshes, lines */
void rndi_3d_draw(const RenderView *v)
{
    LineCounts n = gather_lines(v);
    draw_grid(v, &n);
    draw_planes(v);
    draw_solids(v);
    draw_lines(v, &n);
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

/* draw the queued meshes (after the lit solids, culling off) */
static void mesh_draw(const RenderView *v)
{
    if (!M.nidx || !M.prog)
        return;
    glUseProgram(M.prog);
    set_lit_uniforms(&M.u, v);
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

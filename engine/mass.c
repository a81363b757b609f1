/* mass.c: mass properties of shapes: mass, centre of mass and inertia tensor about it.
 *
 * Closed forms for the primitives (density rho, inertia about the centre, shape frame):
 *   sphere radius r:          M = 4/3 pi r^3 rho,  I = 2/5 M r^2 1
 *   box half extents a,b,c:   M = 8abc rho,  I = M/3 diag(b^2+c^2, a^2+c^2, a^2+b^2)
 *                             (S3's block, M/12 diag(y0^2+z0^2, ...) with full sides x0 = 2a ...)
 *   capsule radius r, core half length h along y: a cylinder (M_c = 2h pi r^2 rho) and two
 *   hemispheres (M_s = 4/3 pi r^3 rho together).
 *       I_yy = M_c r^2 / 2 + 2/5 M_s r^2
 *       I_xx = I_zz = M_c (r^2/4 + h^2/3) + M_s (2/5 r^2 + h^2 + 3/4 h r)
 *   (a hemisphere about its flat face's centre has 2/5 m r^2, like the sphere; its centroid is 3r/8
 *   from that face: shift to the centroid and back out to the capsule centre at h + 3r/8, which
 *   leaves m (2/5 r^2 + h^2 + 3/4 h r) for each half.)
 *
 * Polyhedra (convex hulls): the volume integrals of 1, x, and x x^T over the solid, turned into
 * surface integrals by the divergence theorem (Mirtich 1996 does the same face by face with
 * projections). With every face fanned into triangles (a, b, c) oriented outward, the solid is the
 * signed sum of the tetrahedra (0, a, b, c), and each tetrahedron's integrals are exact:
 *     V_t = det[a b c] / 6
 *     int_t x dV = V_t (a + b + c) / 4
 *     int_t x x^T dV = det[a b c] / 120 * ( S S^T + a a^T + b b^T + c c^T ),   S = a + b + c
 * (the last from the canonical tetrahedron's second moments 1/60 on the diagonal, 1/120 off it,
 * mapped linearly by A = [a b c]). Summing gives V, the centroid c = int x / V and the covariance
 * C = int x x^T - V c c^T about it; the inertia of unit density is I = tr(C) 1 - C. */
#include <string.h>

#include "hull.h"

bool mass_of_hull(const hull *h, double *volume, imp_vec3 *center, imp_mat3 *inertia)
{
    double V = 0;
    imp_vec3 m1 = v3(0, 0, 0);
    double C[3][3] = {{0}};
    /* tetrahedra from an interior point keep the terms small and well conditioned */
    const imp_vec3 o = h->centroid;
    for (int t = 0; t < h->ntri; t++) {
        imp_vec3 a = v3_sub(v3_load(h->v + 3 * h->tris[3 * t]), o);
        imp_vec3 b = v3_sub(v3_load(h->v + 3 * h->tris[3 * t + 1]), o);
        imp_vec3 c = v3_sub(v3_load(h->v + 3 * h->tris[3 * t + 2]), o);
        double det = v3_dot(a, v3_cross(b, c));
        V += det / 6.0;
        imp_vec3 S = v3_add(v3_add(a, b), c);
        m1 = v3_mad(m1, S, det / 24.0);
        double s[3] = {S.x, S.y, S.z}, pa[3] = {a.x, a.y, a.z}, pb[3] = {b.x, b.y, b.z}, pc[3] = {c.x, c.y, c.z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                C[i][j] += det / 120.0 * (s[i] * s[j] + pa[i] * pa[j] + pb[i] * pb[j] + pc[i] * pc[j]);
    }
    if (!(V > 0)) return false;
    imp_vec3 c = v3_scale(m1, 1.0 / V); /* relative to o */
    double cc[3] = {c.x, c.y, c.z};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) C[i][j] -= V * cc[i] * cc[j];
    double tr = C[0][0] + C[1][1] + C[2][2];
    imp_mat3 I;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I.m[i][j] = (i == j ? tr : 0) - C[i][j];
    *volume = V;
    *center = v3_add(o, c);
    *inertia = I;
    return true;
}

bool imp_shape_mass(const imp_shape_def *def, double *mass, imp_vec3 *center, imp_mat3 *inertia)
{
    const double rho = def->density, pi = 3.14159265358979323846;
    *center = v3(0, 0, 0);
    *mass = 0;
    *inertia = (imp_mat3){{{0}}};
    switch (def->type) {
    case IMP_SHAPE_SPHERE: {
        double r = def->radius, m = 4.0 / 3.0 * pi * r * r * r * rho;
        *mass = m;
        *inertia = m3_diag(0.4 * m * r * r, 0.4 * m * r * r, 0.4 * m * r * r);
        return m > 0;
    }
    case IMP_SHAPE_BOX: {
        imp_vec3 e = def->half;
        double m = 8 * e.x * e.y * e.z * rho;
        *mass = m;
        *inertia = m3_diag(m / 3 * (e.y * e.y + e.z * e.z), m / 3 * (e.x * e.x + e.z * e.z), m / 3 * (e.x * e.x + e.y * e.y));
        return m > 0;
    }
    case IMP_SHAPE_CAPSULE: {
        double r = def->radius, h = def->half_height;
        double mc = 2 * h * pi * r * r * rho, ms = 4.0 / 3.0 * pi * r * r * r * rho;
        double iyy = mc * r * r / 2 + 0.4 * ms * r * r;
        double ixx = mc * (r * r / 4 + h * h / 3) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
        *mass = mc + ms;
        *inertia = m3_diag(ixx, iyy, ixx);
        return *mass > 0;
    }
    case IMP_SHAPE_HULL: {
        char err[128];
        hull *h = hull_build(def->points, def->point_count, err, sizeof err);
        if (!h) return false;
        double V;
        bool ok = mass_of_hull(h, &V, center, inertia);
        hull_free(h);
        if (!ok) return false;
        *mass = V * rho;
        *inertia = m3_scale(*inertia, rho);
        return true;
    }
    default:
        return false; /* planes and meshes: static, no mass */
    }
}

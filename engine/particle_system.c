/* particle_system.c: the particle system of S3 ("Particle system dynamics") as a stage of the step,
 * and the operations that cross its parts.
 *
 * The ODE. Particles are dense in the store (particles.c), so the state of a contiguous range of them
 * is two memcpys:
 *
 *     X = [ x_1 .. x_n | v_1 .. v_n ]       dX/dt = [ v_1 .. v_n | f_1/m_1 .. f_n/m_n ]
 *
 * followed, when the range is the whole store, by the curve particles' [u | u'] (curve.c). Fixed
 * particles have dX/dt = 0. Kinematic (script-controlled) particles move with their velocity and
 * ignore forces; their velocity is what the script set, so velocity-dependent forces (damped springs)
 * see them, as S3 asks of controlled particles. One evaluation: the forces at (x, v), never at the
 * committed state (forces.c), the pushing part cancelled at resting contacts (particle_collide.c),
 * the constraint forces added after the applied ones and before a = f/m (S3 "Constrained dynamics"
 * 4.1, tinkertoy.c), then a = f/m.
 *
 * The range is the whole store or, when every force is local to one particle (no springs,
 * behaviours, cloth or constraints), blocks of PARTICLE_BLOCK particles that fit in cache. For such a
 * separable system the two are the same ODE; the blocks keep the solver's stages out of main memory.
 * Without force fields (a field may call a script) the blocks run on both threads in PAR_CHUNKS fixed
 * runs of blocks, each with its own solver scratch and its own rows of the force accumulator: a
 * block's result is the same whichever thread steps it.
 *
 * The stage (particles_step): attached particles onto their body points, carrying their bodies'
 * shares (particle_attach.c) -> the colliders' resting contacts (after the bodies' that world.c had
 * particle_contact.c find for the implicit integrator) -> integrate (the world's ODE solver, or one
 * backward Euler step of implicit.c) -> what the attached particles gave their bodies -> curve
 * particles exactly onto their curves -> collisions with the colliders inside the step -> constrained
 * particles that touched or hit projected back onto their constraints. (Particles meet bodies and each
 * other after the bodies' stage: particle_contact.c.) The state at the start (as the integrator and
 * the collision sweep see it: attached particles on their points, resting particles exactly on their
 * surfaces) is kept, with the values the attachments and the resting contacts replaced, so that a
 * failing callback's undo (particles_undo, with snapshot.c's undo of the stage's other state) puts
 * back the state as the script left it.
 *
 * Destroying a particle or a cloth reaches every part that holds particles: cloth, force objects,
 * constraints and curves let go of it before the store removes it. */
#include <stdlib.h>
#include <string.h>

#include "cloth.h"
#include "curve.h"
#include "forces.h"
#include "ids.h"
#include "imp_math.h"
#include "implicit.h"
#include "particle_attach.h"
#include "particle_collide.h"
#include "particle_system.h"
#include "particles.h"
#include "sparse_simd.h"
#include "step.h"
#include "tinkertoy.h"
#include "world_parts.h"

#define PARTICLE_BLOCK 512 /* particles per block when the system is separable: ~150 KB of stages */
#define PARALLEL_BLOCKS 4   /* from this many blocks they run on both threads                       */

particle_system *particle_system_create(imp_method method, double tolerance)
{
    particle_system *ps = calloc(1, sizeof *ps);
    if (!ps) abort();
    imp_ode_solver_init(&ps->solver, method);
    ps->solver.tolerance = tolerance;
    for (int c = 0; c < PAR_CHUNKS; c++) imp_ode_solver_init(&ps->chunk_solver[c], method);
    return ps;
}

void particle_system_free(particle_system *ps)
{
    if (!ps) return;
    imp_ode_solver_free(&ps->solver);
    for (int c = 0; c < PAR_CHUNKS; c++) imp_ode_solver_free(&ps->chunk_solver[c]);
    free(ps->state0), free(ps->force), free(ps->now_X), free(ps->now_dX), free(ps->snapped);
    free(ps);
}

static void force_reserve(particle_system *ps, int n)
{
    if (n <= ps->force_cap && ps->force) return;
    int cap = ps->force_cap ? ps->force_cap : 64;
    while (cap < n) cap *= 2;
    free(ps->force);
    ps->force = ids_grow(NULL, 3 * sizeof(double), cap);
    ps->force_cap = cap;
}

/* constraints and curve particles (tinkertoy.c, curve.c) couple particles as springs and cloth do */
static bool particles_separable(const imp_world *w) { return !forces_coupled(w) && !tinker_active(w); }

/* ---- the ODE ------------------------------------------------------------------------------------------ */

static void particles_get_state(void *ctx, double *X)
{
    const particle_range *r = ctx;
    const imp_world *w = r->w;
    size_t n3 = 3 * (size_t)r->count;
    if (r->extra) curves_get_state(w, X + 2 * n3);
    if (n3 == 0) return;
    memcpy(X, w->particles->x + 3 * (size_t)r->first, n3 * sizeof(double));
    memcpy(X + n3, w->particles->v + 3 * (size_t)r->first, n3 * sizeof(double));
}

static void particles_set_state(void *ctx, const double *X)
{
    const particle_range *r = ctx;
    imp_world *w = r->w;
    size_t n3 = 3 * (size_t)r->count;
    if (r->extra) curves_set_state(w, X + 2 * n3);
    if (n3 == 0) return;
    memcpy(w->particles->x + 3 * (size_t)r->first, X, n3 * sizeof(double));
    memcpy(w->particles->v + 3 * (size_t)r->first, X + n3, n3 * sizeof(double));
}

/* dX/dt at state X: accumulate forces, cancel the pushing part at resting contacts, add the
 * constraint forces (S3 "Constrained dynamics" 4.1: after the applied forces, before a = f/m),
 * then a = f/m */
static int particles_deriv(void *ctx, double t, const double *X, double *dX)
{
    const particle_range *r = ctx;
    imp_world *w = r->w;
    const int n = r->count;
    const double *x = X, *v = X + 3 * n;
    double *dx = dX, *dv = dX + 3 * n, *f = w->particle_system->force + 3 * (size_t)r->first; /* a block's own rows */
    int rc = r->extra ? curves_place(w, X, n, &x, &v) : 0;
    if (rc) return rc;
    rc = forces_accumulate(w, t, r, x, v, f);
    if (rc) return rc;
    if (r->contact_hi > r->contact_lo) pcollide_contact_forces(w, r, x, f);
    if (r->first == 0 && r->count == w->particles->ids.count && tinker_active(w) && (rc = tinker_constraint_forces(w, x, v, f)))
        return rc;
    const uint8_t *motion = w->particles->motion + r->first;
    const double *inv_m = w->particles->inv_mass + r->first;
    memcpy(dx, v, 3 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        double s = motion[i] == IMP_DYNAMIC ? inv_m[i] : 0.0;
        dv[3 * i + 0] = f[3 * i + 0] * s;
        dv[3 * i + 1] = f[3 * i + 1] * s;
        dv[3 * i + 2] = f[3 * i + 2] * s;
        if (motion[i] == IMP_FIXED) dx[3 * i] = dx[3 * i + 1] = dx[3 * i + 2] = 0;
    }
    if (r->extra) curves_deriv(w, n, X + 6 * n, f, dX);
    return 0;
}

/* first resting contact whose particle is >= i (contacts are found in particle order) */
static int contact_lower_bound(const imp_world *w, int i)
{
    int lo = 0, hi = w->pcontacts->count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (w->pcontacts->contact[mid].particle < i) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* the ODE of particles [first, first + count); r (the caller's) is its context */
imp_ode_system particles_ode(imp_world *w, int first, int count, particle_range *r)
{
    r->w = w;
    r->first = first;
    r->count = count;
    r->contact_lo = contact_lower_bound(w, first);
    r->contact_hi = contact_lower_bound(w, first + count);
    r->extra = first == 0 && count == w->particles->ids.count ? curves_state_dim(w) : 0;
    imp_ode_system sys = {6 * count + r->extra, r, particles_get_state, particles_set_state, particles_deriv};
    return sys;
}

/* ---- the stage ---------------------------------------------------------------------------------------- */

/* the state at the start of the step, [x | v | u | u'], for the undo of a failing callback, the
 * collision pass's sweep and the NaN guard */
static double *state0_reserve(particle_system *ps, int dim)
{
    if (dim > ps->state0_cap || !ps->state0) {
        int cap = ps->state0_cap ? ps->state0_cap : 64;
        while (cap < dim) cap *= 2;
        free(ps->state0);
        ps->state0 = ids_grow(NULL, sizeof(double), cap);
        ps->state0_cap = cap;
    }
    return ps->state0;
}

/* particle i was moved at the start of the step (onto its attachment's point, or onto a surface by a
 * resting contact) after X0 was taken: X0 gets the new values (the integrator and the sweep start
 * from them), and the journal keeps what they replaced */
static void particles_journal(particle_system *ps, const particle_store *P, double *X0, int n, int i)
{
    if (ps->snapped_count == ps->snapped_cap) {
        ps->snapped_cap = ps->snapped_cap ? 2 * ps->snapped_cap : 64;
        ps->snapped = ids_grow(ps->snapped, sizeof *ps->snapped, (size_t)ps->snapped_cap);
    }
    struct particle_snap *j = &ps->snapped[ps->snapped_count++];
    j->particle = i;
    memcpy(j->x, X0 + 3 * i, sizeof j->x), memcpy(j->v, X0 + 3 * (n + i), sizeof j->v);
    memcpy(X0 + 3 * i, P->x + 3 * i, sizeof j->x), memcpy(X0 + 3 * (n + i), P->v + 3 * i, sizeof j->v);
}

/* the attached particles just put on their body points (attach_begin) */
static void particles_attached(imp_world *w, double *X0, int n)
{
    const attach_set *s = w->attach;
    for (int k = 0; s && k < s->count; k++)
        if (s->a[k].dense >= 0) particles_journal(w->particle_system, w->particles, X0, n, s->a[k].dense);
}

/* the resting contacts just found put their particles exactly on the surface (pcollide_find_contacts).
 * Contacts are in particle order, a particle's together. */
static void particles_snapped(imp_world *w, double *X0, int n)
{
    const particle_contacts *pc = w->pcontacts;
    for (int k = 0; k < pc->count; k++) {
        const int i = pc->contact[k].particle;
        if (k > 0 && pc->contact[k - 1].particle == i) continue;
        particles_journal(w->particle_system, w->particles, X0, n, i);
    }
}

/* a callback failed: the particles' state as the script left it before the step (the state at the
 * start, and the values the attachments and the resting contacts replaced, latest first: a particle
 * may be in the journal twice) */
void particles_undo(imp_world *w)
{
    particle_system *ps = w->particle_system;
    const int n = w->particles->ids.count;
    particle_range range;
    imp_ode_system all = particles_ode(w, 0, n, &range);
    all.set_state(all.ctx, ps->state0);
    for (int k = ps->snapped_count - 1; k >= 0; k--) {
        const struct particle_snap *j = &ps->snapped[k];
        memcpy(w->particles->x + 3 * j->particle, j->x, sizeof j->x), memcpy(w->particles->v + 3 * j->particle, j->v, sizeof j->v);
    }
}

/* the passes over the whole state below (its copy at the start of the step, the NaN guard) run in
 * chunks of the particles, on both threads from STATE_CHUNKED particles on (a smaller state is not worth
 * waking the worker for); the same results either way */
#define STATE_CHUNKED 4096
typedef struct state_copy {
    imp_world *w;
    double *X0;
    int bad[PAR_CHUNKS], first[PAR_CHUNKS]; /* particles_nan_guard: each chunk's count and first */
} state_copy;

static void state0_chunk(void *ctx, int chunk)
{
    const state_copy *k = ctx;
    const int n = k->w->particles->ids.count;
    int lo, hi;
    par_range(n, chunk, &lo, &hi);
    if (hi <= lo) return;
    memcpy(k->X0 + 3 * lo, k->w->particles->x + 3 * lo, 3 * sizeof(double) * (size_t)(hi - lo));
    memcpy(k->X0 + 3 * (n + lo), k->w->particles->v + 3 * lo, 3 * sizeof(double) * (size_t)(hi - lo));
}

static void run_state_chunks(par_fn fn, state_copy *k)
{
    if (k->w->particles->ids.count >= STATE_CHUNKED) par_for(fn, k, PAR_CHUNKS);
    else for (int c = 0; c < PAR_CHUNKS; c++) fn(k, c);
}

/* the particles' state at the start of the step, before anything moves them (the resting contacts
 * with bodies under the implicit integrator, particle_contact.c, are found between this and
 * particles_step) */
void particles_step_begin(const imp_step *st)
{
    imp_world *w = st->w;
    particle_system *ps = w->particle_system;
    const int n = w->particles->ids.count;
    state_copy k = {w, state0_reserve(ps, 6 * n + curves_state_dim(w)), {0}, {0}};
    run_state_chunks(state0_chunk, &k);
    if (curves_state_dim(w) > 0) curves_get_state(w, k.X0 + 6 * n);
    ps->snapped_count = 0;
}

/* ---- RK4 particle by particle --------------------------------------------------------------------------- */

/* A separable system without force fields or attachments under RK4: each particle is its own ODE of
 * six unknowns, stepped here in batches of RK4_BATCH whose stages stay in L1, one pass over the store,
 * with the operations of imp_ode_step's RK4 (ode.c) on particles_deriv's: the same bits as stepping the
 * blocks through the solver, without its copies of the state. The force on a particle is forces_local's,
 * m g - kd v, with its resting contacts' part (pcollide_contact_force, its contacts in their order). */
static bool rk4_fused(const imp_world *w)
{
    const attach_set *as = w->attach;
    return w->settings.integrator == IMP_RK4 && !(as && as->integrating && as->count > 0);
}

#define RK4_BATCH 32 /* particles stepped together: their stages fit in L1 */

/* a batch's dX/dt at (xp, vp), n3 entries each: kx, kv. mg: m g per entry, s: 1/m (0: not dynamic),
 * fixed: the batch has fixed particles; its resting contacts [k0, k1) */
static inline __attribute__((always_inline)) void rk4_rate(const imp_world *w, int first, int n3, int k0, int k1, bool fixed,
                                                           double kd, const double *restrict mg, const double *restrict s,
                                                           const double *restrict xp, const double *restrict vp,
                                                           double *restrict kx, double *restrict kv)
{
    for (int e = 0; e < n3; e++) kv[e] = mg[e] - kd * vp[e];
    for (int k = k0; k < k1; k++) {
        const int i = w->pcontacts->contact[k].particle - first;
        v3_store(kv + 3 * i, pcollide_contact_force(w, k, v3_load(xp + 3 * i), v3_load(kv + 3 * i)));
    }
    for (int e = 0; e < n3; e++) kv[e] *= s[e], kx[e] = vp[e];
    if (fixed)
        for (int e = 0; e < n3; e++)
            if (w->particles->motion[first + e / 3] == IMP_FIXED) kx[e] = 0;
}

/* one batch's RK4 step of h (x, v: its n3 entries in the store; its resting contacts [k0, k1)) */
static inline __attribute__((always_inline)) void rk4_batch(const imp_world *w, int lo, int n3, int k0, int k1, bool fixed, double h,
                                                            const double *restrict mg, const double *restrict s, double *restrict x,
                                                            double *restrict v)
{
    /* imp_ode_step's weights: a21 = a32 = 1/2, a43 = 1, b = (1/6, 1/3, 1/3, 1/6), each times h */
    const double a[3] = {h * 0.5, h * 0.5, h * 1.0};
    const double b0 = h * (1.0 / 6), b1 = h * (1.0 / 3), b2 = h * (1.0 / 3), b3 = h * (1.0 / 6);
    const double kd = w->settings.drag;
    double kx[4][3 * RK4_BATCH], kv[4][3 * RK4_BATCH], xs[3 * RK4_BATCH], vs[3 * RK4_BATCH];
    rk4_rate(w, lo, n3, k0, k1, fixed, kd, mg, s, x, v, kx[0], kv[0]);
    for (int st = 1; st < 4; st++) {
        const double as = a[st - 1];
        const double *px = kx[st - 1], *pv = kv[st - 1];
        for (int e = 0; e < n3; e++) xs[e] = x[e] + as * px[e], vs[e] = v[e] + as * pv[e];
        rk4_rate(w, lo, n3, k0, k1, fixed, kd, mg, s, xs, vs, kx[st], kv[st]);
    }
    for (int e = 0; e < n3; e++) {
        x[e] += b0 * kx[0][e] + b1 * kx[1][e] + b2 * kx[2][e] + b3 * kx[3][e];
        v[e] += b0 * kv[0][e] + b1 * kv[1][e] + b2 * kv[2][e] + b3 * kv[3][e];
    }
}

/* particles [first, first + count) one RK4 step of h; k: the first resting contact whose particle is >= first */
static inline __attribute__((always_inline)) void rk4_run(imp_world *w, int first, int count, int k, double h)
{
    const imp_vec3 g = w->settings.gravity;
    const particle_contacts *pcs = w->pcontacts;
    const double *mass = w->particles->mass, *inv_mass = w->particles->inv_mass;
    const uint8_t *motion = w->particles->motion;
    double mg[3 * RK4_BATCH], s[3 * RK4_BATCH];
    for (int lo = first; lo < first + count; lo += RK4_BATCH) {
        const int n = first + count - lo < RK4_BATCH ? first + count - lo : RK4_BATCH;
        bool fixed = false;
        for (int i = 0; i < n; i++) {
            const double m = mass[lo + i], inv = motion[lo + i] == IMP_DYNAMIC ? inv_mass[lo + i] : 0.0;
            mg[3 * i] = m * g.x, mg[3 * i + 1] = m * g.y, mg[3 * i + 2] = m * g.z;
            s[3 * i] = s[3 * i + 1] = s[3 * i + 2] = inv;
            fixed |= motion[lo + i] == IMP_FIXED;
        }
        while (k < pcs->count && pcs->contact[k].particle < lo) k++;
        int k1 = k;
        while (k1 < pcs->count && pcs->contact[k1].particle < lo + n) k1++;
        double *x = w->particles->x + 3 * lo, *v = w->particles->v + 3 * lo;
        if (n == RK4_BATCH) rk4_batch(w, lo, 3 * RK4_BATCH, k, k1, fixed, h, mg, s, x, v); /* (a known length: no loop tails) */
        else rk4_batch(w, lo, 3 * n, k, k1, fixed, h, mg, s, x, v);
        k = k1;
    }
}

/* rk4_run in 256-bit vectors where the processor has them (AVX alone, no product fused into a sum: the
 * same bits; IMPETUS_SIMD=0 runs the scalar code, sparse_simd.h) */
#if SPARSE_HAVE_AVX
static SPARSE_AVX void rk4_run_avx(imp_world *w, int first, int count, int k, double h) { rk4_run(w, first, count, k, h); }
#endif
static void rk4_particles(imp_world *w, int first, int count, int k, double h)
{
#if SPARSE_HAVE_AVX
    if (sparse_avx()) {
        rk4_run_avx(w, first, count, k, h);
        return;
    }
#endif
    rk4_run(w, first, count, k, h);
}

/* a separable system's blocks on both threads (integrate_blocks): chunk c steps blocks
 * [c blocks / PAR_CHUNKS, (c + 1) blocks / PAR_CHUNKS) with its own solver, its result in rc[c] */
typedef struct block_job {
    imp_world *w;
    double t, dt;
    int blocks;
    bool fused; /* RK4 particle by particle (rk4_particles) */
    int rc[PAR_CHUNKS];
} block_job;

static void integrate_chunk(void *ctx, int c)
{
    block_job *job = ctx;
    imp_world *w = job->w;
    particle_system *ps = w->particle_system;
    imp_ode_solver *s = &ps->chunk_solver[c];
    const int n = w->particles->ids.count;
    s->method = ps->solver.method, s->tolerance = ps->solver.tolerance;
    job->rc[c] = 0;
    const int lo = job->blocks * c / PAR_CHUNKS, hi = job->blocks * (c + 1) / PAR_CHUNKS;
    if (job->fused) { /* the solver's counts as if it had stepped the blocks */
        const int first = lo * PARTICLE_BLOCK, last = hi * PARTICLE_BLOCK < n ? hi * PARTICLE_BLOCK : n;
        if (last > first) rk4_particles(w, first, last - first, contact_lower_bound(w, first), job->dt);
        s->evaluations += 4L * (hi - lo), s->steps += hi - lo;
        return;
    }
    for (int b = lo; b < hi && !job->rc[c]; b++) {
        const int first = b * PARTICLE_BLOCK;
        particle_range range;
        imp_ode_system sys = particles_ode(w, first, n - first < PARTICLE_BLOCK ? n - first : PARTICLE_BLOCK, &range);
        job->rc[c] = imp_ode_advance(&sys, s, job->t, job->dt);
    }
}

/* every block of a separable system without force fields, on both threads; the first failure in block
 * order (none is expected: no script runs), the blocks, and the force evaluations of one block */
static int integrate_blocks(imp_world *w, double t, double dt, int *blocks, int *evaluations)
{
    particle_system *ps = w->particle_system;
    const int n = w->particles->ids.count;
    block_job job = {w, t, dt, (n + PARTICLE_BLOCK - 1) / PARTICLE_BLOCK, rk4_fused(w), {0}};
    long evals = 0, steps = 0;
    for (int c = 0; c < PAR_CHUNKS; c++) evals -= ps->chunk_solver[c].evaluations, steps -= ps->chunk_solver[c].steps;
    par_for(integrate_chunk, &job, PAR_CHUNKS);
    for (int c = 0; c < PAR_CHUNKS; c++) evals += ps->chunk_solver[c].evaluations, steps += ps->chunk_solver[c].steps;
    *blocks = job.blocks;
    *evaluations = (int)(evals / job.blocks);
    ps->solver.evaluations += evals, ps->solver.steps += steps; /* counted as one after another would be */
    for (int c = 0; c < PAR_CHUNKS; c++)
        if (job.rc[c]) return job.rc[c];
    return 0;
}

/* resting contacts -> integrate -> curves -> collisions -> constraint projection; nonzero when a
 * callback failed (the caller undoes the stage: particles_undo) */
int particles_step(const imp_step *st)
{
    imp_world *w = st->w;
    const double dt = st->dt;
    imp_profile *prof = st->profile;
    particle_system *ps = w->particle_system;
    const int n = w->particles->ids.count;
    double *X0 = ps->state0;
    force_reserve(ps, n);
    double t0 = step_clock_ms();
    particle_range range;
    imp_ode_system all;
    attach_begin(w, st); /* attached particles onto their points, carrying their bodies' shares */
    particles_attached(w, X0, n);
    pcollide_find_contacts(w);
    particles_snapped(w, X0, n);
    ps->solver.method = w->settings.integrator;
    ps->solver.tolerance = w->settings.tolerance;
    long evals = ps->solver.evaluations;
    int rc = 0, blocks = 0;
    if (w->settings.integrator == IMP_IMPLICIT) {
        rc = implicit_step(w, st->t, dt, prof); /* contacts filtered, friction inside */
        if (n > 0) ps->solver.evaluations++;    /* its one force evaluation */
        blocks = 1;
    } else if (particles_separable(w) && w->settings.integrator != IMP_ADAPTIVE &&
               n >= PARALLEL_BLOCKS * PARTICLE_BLOCK && w->forces->field_ids.count == 0) {
        /* every particle is its own ODE and no script is called: the blocks on both threads */
        rc = integrate_blocks(w, st->t, dt, &blocks, &prof->evaluations);
        evals = -1;
    } else if (particles_separable(w) && w->settings.integrator != IMP_ADAPTIVE) {
        /* every particle is its own ODE: step cache-sized blocks */
        for (int first = 0; first < n && !rc; first += PARTICLE_BLOCK, blocks++) {
            imp_ode_system sys = particles_ode(w, first, n - first < PARTICLE_BLOCK ? n - first : PARTICLE_BLOCK, &range);
            rc = imp_ode_advance(&sys, &ps->solver, st->t, dt);
        }
    } else {
        all = particles_ode(w, 0, n, &range);
        rc = imp_ode_advance(&all, &ps->solver, st->t, dt);
        blocks = 1;
    }
    if (evals >= 0) prof->evaluations = (int)((ps->solver.evaluations - evals) / (blocks > 0 ? blocks : 1));
    if (!rc) rc = curves_after_integrate(w, X0 + 6 * n);
    prof->integrate = step_clock_ms() - t0;
    if (rc) {
        attach_abort(w); /* the masses and motions the attachments changed (the caller undoes the rest) */
        return rc;
    }
    attach_exchange(w, st, X0 + 3 * n); /* what the attached particles gave their bodies */
    t0 = step_clock_ms();
    pcollide_resolve(w, X0, X0 + 3 * n, dt);
    if (w->settings.integrator != IMP_IMPLICIT) pcollide_friction_clamp(w);
    if (tinker_active(w) && tinker_after_collide(w)) { /* a constraint callback failed */
        attach_abort(w);
        return IMP_ERR_CALLBACK;
    }
    prof->collide = step_clock_ms() - t0;
    return 0;
}

/* the particles of one chunk past the guard (non-finite, too far or too fast): put back where the step
 * began, at rest */
static void guard_chunk(void *ctx, int chunk)
{
    state_copy *k = ctx;
    const imp_world *w = k->w;
    const double *x0 = w->particle_system->state0;
    int lo, hi;
    par_range(w->particles->ids.count, chunk, &lo, &hi);
    k->bad[chunk] = 0, k->first[chunk] = -1;
    for (int i = lo; i < hi; i++) {
        const double *x = w->particles->x + 3 * i, *v = w->particles->v + 3 * i;
        /* (a NaN or an infinity fails these comparisons: they test finiteness too) */
        if ((fabs(x[0]) <= IMP_GUARD_COORD) & (fabs(x[1]) <= IMP_GUARD_COORD) & (fabs(x[2]) <= IMP_GUARD_COORD) &&
            v3_len(v3_load(v)) <= IMP_GUARD_SPEED)
            continue;
        if (k->first[chunk] < 0) k->first[chunk] = i;
        k->bad[chunk]++;
        memcpy(w->particles->x + 3 * i, x0 + 3 * i, 3 * sizeof(double));
        memset(w->particles->v + 3 * i, 0, 3 * sizeof(double));
    }
}

/* put back non-finite particles from the state at the start of the step; returns how many */
int particles_nan_guard(imp_world *w)
{
    state_copy k = {w, NULL, {0}, {0}};
    run_state_chunks(guard_chunk, &k);
    int bad = 0, first = -1;
    for (int c = 0; c < PAR_CHUNKS; c++) {
        if (first < 0) first = k.first[c];
        bad += k.bad[c];
    }
    if (bad)
        world_error(w, "NaN guard: %d particle(s) went non-finite (or past %g m, %g m/s) at t = %.4f s (first: particle #%u); "
                       "they were put back and stopped", bad, IMP_GUARD_COORD, IMP_GUARD_SPEED, w->time, ids_of(&w->particles->ids, first).index);
    return bad;
}

/* ---- destroying what crosses the parts --------------------------------------------------------------- */

void imp_particle_destroy(imp_world *w, imp_id id)
{
    if (ids_lookup(&w->particles->ids, id) < 0) return;
    attach_particle_removed(w, id);
    cloth_particle_removed(w, id.index);
    forces_particle_removed(w, id.index);
    tinker_particle_removed(w, id.index);
    curves_particle_removed(w, id.index);
    particles_remove(w, id);
}

void imp_cloth_destroy(imp_world *w, imp_id id)
{
    int count = 0;
    uint32_t *slots = cloth_remove(w, id, &count);
    if (!slots) return;
    for (int k = 0; k < count; k++)
        if (slots[k] != UINT32_MAX) imp_particle_destroy(w, ids_of(&w->particles->ids, particles_slot_dense(w, slots[k])));
    free(slots);
}

/* the multipliers and constraint forces at the present state, without stepping: one derivative
 * evaluation of the whole system */
imp_status imp_world_solve_constraints(imp_world *w)
{
    if (w->locked) {
        world_error(w, "solve_constraints called from inside the world's own step");
        return IMP_ERR_LOCKED;
    }
    if (!tinker_active(w)) return IMP_OK;
    particle_system *ps = w->particle_system;
    const int n = w->particles->ids.count;
    pcollide_drop_stale(w);
    particle_range range;
    imp_ode_system sys = particles_ode(w, 0, n, &range);
    if (sys.dim > ps->now_cap) {
        ps->now_cap = sys.dim;
        ps->now_X = ids_grow(ps->now_X, sizeof(double), sys.dim);
        ps->now_dX = ids_grow(ps->now_dX, sizeof(double), sys.dim);
    }
    force_reserve(ps, n + 1);
    sys.get_state(sys.ctx, ps->now_X);
    w->locked = true;
    w->error[0] = 0;
    int rc = sys.deriv(sys.ctx, w->time, ps->now_X, ps->now_dX);
    w->locked = false;
    if (rc) {
        if (!w->error[0]) world_error(w, "a callback failed while solving the constraints");
        return IMP_ERR_CALLBACK;
    }
    return IMP_OK;
}

/* parallel.c: the parallel-for of parallel.h.
 *
 * One worker thread for the process, started on first use. A job is published by bumping its
 * generation in the high half of a 64-bit claim word whose low half counts the chunks handed
 * out; both threads claim chunks with compare-and-swap on that word, so a claim can only succeed
 * for the current job, and the caller does not start the next job before every chunk of this one
 * is finished. The worker spins for a while after each job (the integrator runs about a hundred
 * jobs per step, microseconds apart) and then sleeps on a condition variable, so an idle world
 * costs no CPU. The generation only changes under the mutex, and the worker checks it under the
 * mutex before it sleeps: no wake-up is lost. When the library is unloaded (Lua closes its C
 * modules at exit) a destructor stops and joins the worker, which must not be left running in
 * code that is about to be unmapped.
 *
 * On a busy machine the worker may get little CPU, and a spinning worker that shares a core with
 * the caller only slows it down. So par_for keeps a running average of the share of chunks the
 * worker ran; when it stays under a fifth, the next SERIAL_RUN jobs run on the caller alone
 * (the worker falls asleep), then the worker is tried again. Waits yield the CPU after a while.
 *
 * A job too small to pay for the hand-over (publishing it, the worker's claims and the caller's wait
 * cost a few microseconds, more than the whole of a stage over 50 bodies) runs on the caller alone.
 * par_for times every job of a kernel (fn) as its whole time on one thread (a run on both counts
 * twice its time); after SMALL_RUNS jobs in a row below PAR_MIN_NS the kernel's jobs run serially
 * until one of them takes longer. One kernel that is called with large and small jobs in turn (the
 * levels of a multigrid) stays shared. Which thread runs a chunk never changes a result (the chunks
 * are fixed), so this is a choice of speed only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "parallel.h"

#define SPIN_ROUNDS 20000  /* polls before the worker sleeps: about a millisecond           */
#define SERIAL_RUN 500     /* jobs run serially after the worker was found not to help      */
#define PAR_MIN_NS 12000   /* a job whose one-thread time is below this runs serially       */
#define SMALL_RUNS 4       /* ... after this many in a row                                  */
#define COST_SLOTS 64      /* kernels whose runs are counted (a hash of fn; a clash only
                              costs a misjudged run)                                        */

static struct {
    pthread_once_t once;
    bool ok, quit, sleeping;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic unsigned long long claim; /* generation << 32 | next chunk                        */
    atomic_int finished;              /* chunks of the current job that are done              */
    atomic_int busy;                  /* a par_for is running (a nested one runs serially)    */
    atomic_int by_worker;             /* chunks of the current job the worker ran             */
    double share;                     /* running average of the worker's share of the chunks  */
    int serial_left;                  /* jobs still to run serially                           */
    par_fn fn;
    void *ctx;
    int n;
    struct { par_fn fn; int small; } cost[COST_SLOTS]; /* per kernel: its jobs in a row below PAR_MIN_NS */
} P = {.once = PTHREAD_ONCE_INIT};

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cost_slot(par_fn fn) { return (int)(((unsigned long long)(uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull >> 58); }

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static unsigned long long generation(void) { return atomic_load_explicit(&P.claim, memory_order_acquire) >> 32; }

/* poll n: a pause instruction at first, then give the core away */
static inline void backoff(int n)
{
    if (n < 64) cpu_relax();
    else sched_yield();
}

/* claim and run chunks of job gen until none is left */
static void run_chunks(unsigned long long gen, bool worker)
{
    for (;;) {
        unsigned long long c = atomic_load_explicit(&P.claim, memory_order_acquire);
        if ((c >> 32) != gen || (int)(c & 0xffffffffu) >= P.n) return;
        if (!atomic_compare_exchange_weak_explicit(&P.claim, &c, c + 1, memory_order_acq_rel, memory_order_acquire))
            continue;
        /* the job cannot change before this chunk is counted finished */
        P.fn(P.ctx, (int)(c & 0xffffffffu));
        if (worker) atomic_fetch_add_explicit(&P.by_worker, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&P.finished, 1, memory_order_release);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned long long seen = 0;
    for (;;) {
        unsigned long long g = generation();
        for (int spin = 0; g == seen && spin < SPIN_ROUNDS; spin++) {
            backoff(spin);
            g = generation();
        }
        if (g == seen) {
            pthread_mutex_lock(&P.mu);
            while ((g = generation()) == seen && !P.quit) {
                P.sleeping = true;
                pthread_cond_wait(&P.cv, &P.mu);
            }
            P.sleeping = false;
            pthread_mutex_unlock(&P.mu);
        }
        seen = g;
        if (P.quit) break;
        run_chunks(g, true);
    }
    return NULL;
}

static void start(void)
{
    const char *env = getenv("IMPETUS_THREADS");
    if (env && atoi(env) == 1) return;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.cv, NULL);
    atomic_init(&P.claim, 0);
    atomic_init(&P.finished, 0);
    atomic_init(&P.busy, 0);
    atomic_init(&P.by_worker, 0);
    P.share = 0.5;
    P.ok = pthread_create(&P.thread, NULL, worker, NULL) == 0;
}

#if defined(__GNUC__)
__attribute__((destructor))
#endif
static void stop(void)
{
    if (!P.ok) return;
    pthread_mutex_lock(&P.mu);
    P.quit = true;
    atomic_fetch_add_explicit(&P.claim, 1ull << 32, memory_order_release);
    if (P.sleeping) pthread_cond_signal(&P.cv);
    pthread_mutex_unlock(&P.mu);
    pthread_join(P.thread, NULL);
    P.ok = false;
}

int par_threads(void)
{
    pthread_once(&P.once, start);
    return P.ok ? 2 : 1;
}

void par_for(par_fn fn, void *ctx, int n)
{
    pthread_once(&P.once, start);
    int expected = 0;
    if (!P.ok || n <= 1 || !atomic_compare_exchange_strong(&P.busy, &expected, 1)) {
        for (int i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    if (P.serial_left > 0) {
        P.serial_left--;
        if (P.serial_left == 0) P.share = 0.5; /* try the worker again */
        atomic_store(&P.busy, 0);
        for (int i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    const int slot = cost_slot(fn);
    const long long t0 = now_ns();
    if (P.cost[slot].fn != fn) P.cost[slot].fn = fn, P.cost[slot].small = 0;
    if (P.cost[slot].small >= SMALL_RUNS) { /* too small to share (the header) */
        for (int i = 0; i < n; i++) fn(ctx, i);
        if (now_ns() - t0 >= PAR_MIN_NS) P.cost[slot].small = 0;
        atomic_store(&P.busy, 0);
        return;
    }
    pthread_mutex_lock(&P.mu);
    P.fn = fn, P.ctx = ctx, P.n = n;
    atomic_store_explicit(&P.finished, 0, memory_order_relaxed);
    atomic_store_explicit(&P.by_worker, 0, memory_order_relaxed);
    unsigned long long gen = generation() + 1;
    atomic_store_explicit(&P.claim, gen << 32, memory_order_release);
    if (P.sleeping) pthread_cond_signal(&P.cv);
    pthread_mutex_unlock(&P.mu);
    run_chunks(gen, false);
    for (int spin = 0; atomic_load_explicit(&P.finished, memory_order_acquire) < n; spin++) backoff(spin);
    P.cost[slot].small = 2 * (now_ns() - t0) < PAR_MIN_NS ? P.cost[slot].small + 1 : 0;
    P.share = 0.9 * P.share + 0.1 * (double)atomic_load_explicit(&P.by_worker, memory_order_relaxed) / n;
    if (P.share < 0.2) P.serial_left = SERIAL_RUN;
    atomic_store(&P.busy, 0);
}

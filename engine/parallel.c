/* parallel.c: the two-way fork-join of parallel.h.
 *
 * One worker thread for the process, started on first use. A job is handed over by bumping a
 * sequence number; the worker spins on it for a while after each job (the integrator forks about
 * a hundred times per step, microseconds apart) and then sleeps on a condition variable until the
 * next one, so an idle world costs no CPU. The sequence number only changes under the mutex, and
 * the worker checks it under the mutex before it sleeps: no wake-up is lost. When the library is
 * unloaded (Lua closes its C modules at exit) a destructor stops and joins the worker, which must
 * not be left running in code that is about to be unmapped. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parallel.h"

#define SPIN_ROUNDS 200000 /* ~ a few hundred microseconds of pause instructions */

static struct {
    pthread_once_t once;
    bool ok;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint seq, done;
    atomic_int busy;       /* a par_run is in progress (a second caller runs serially) */
    bool sleeping, quit;
    par_fn fn;
    void *ctx;
} P = {.once = PTHREAD_ONCE_INIT};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned seen = 0;
    for (;;) {
        unsigned s = atomic_load_explicit(&P.seq, memory_order_acquire);
        for (int spin = 0; s == seen && spin < SPIN_ROUNDS; spin++) {
            cpu_relax();
            s = atomic_load_explicit(&P.seq, memory_order_acquire);
        }
        if (s == seen) {
            pthread_mutex_lock(&P.mu);
            while ((s = atomic_load_explicit(&P.seq, memory_order_acquire)) == seen) {
                P.sleeping = true;
                pthread_cond_wait(&P.cv, &P.mu);
            }
            P.sleeping = false;
            pthread_mutex_unlock(&P.mu);
        }
        seen = s;
        if (P.quit) break;
        P.fn(P.ctx, 1);
        atomic_store_explicit(&P.done, seen, memory_order_release);
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
    atomic_init(&P.seq, 0);
    atomic_init(&P.done, 0);
    atomic_init(&P.busy, 0);
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
    atomic_fetch_add_explicit(&P.seq, 1, memory_order_release);
    if (P.sleeping) pthread_cond_signal(&P.cv);
    pthread_mutex_unlock(&P.mu);
    pthread_join(P.thread, NULL);
    P.ok = false;
}

int par_parts(void)
{
    pthread_once(&P.once, start);
    return P.ok ? 2 : 1;
}

void par_run(par_fn fn, void *ctx)
{
    pthread_once(&P.once, start);
    int expected = 0;
    if (!P.ok || !atomic_compare_exchange_strong(&P.busy, &expected, 1)) {
        fn(ctx, 0);
        fn(ctx, 1);
        return;
    }
    pthread_mutex_lock(&P.mu);
    P.fn = fn;
    P.ctx = ctx;
    unsigned s = atomic_load_explicit(&P.seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&P.seq, s, memory_order_release);
    if (P.sleeping) pthread_cond_signal(&P.cv);
    pthread_mutex_unlock(&P.mu);
    fn(ctx, 0);
    while (atomic_load_explicit(&P.done, memory_order_acquire) != s) cpu_relax();
    atomic_store(&P.busy, 0);
}

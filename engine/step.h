/* step.h: the context every stage of imp_world_step receives. world.c makes one per step; a stage
 * reads the world and the step's length from it and writes its times into the profile. Nothing of a
 * step is left in the world for another stage to pick up: what one stage hands to the next goes
 * through here or through the stage's own part of the world. */
#ifndef IMPETUS_STEP_H
#define IMPETUS_STEP_H

#include <time.h>

#include "impetus.h"

typedef struct imp_step {
    imp_world *w;
    double t;                /* the world's time at the start of the step, s                      */
    double dt, inv_dt;       /* the step's length, s, and 1 / dt                                  */
    imp_profile *profile;    /* this step's stage times (ms) and counts                           */
    double *bodies0;         /* the bodies' states at the start (BODY_DIM each): the bullets'
                                sweep, the joints' position update and the NaN guard              */
    bool collided;           /* the bodies' stage collided at the step's final state itself (the
                                exact mode's time-of-impact search): the collide stage is done    */
} imp_step;

/* a monotonic clock for the stage times, ms */
static inline double step_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

#endif

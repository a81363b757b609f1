/* sensor.h: sensors, shapes that detect what overlaps them and never push (sensor.c). */
#ifndef IMPETUS_SENSOR_H
#define IMPETUS_SENSOR_H

#include "shape.h"

/* a sensor and a shape that overlaps it, named by the broad-phase pair's key */
typedef struct sensor_overlap {
    uint64_t key;
    imp_contact_side sensor, other;
} sensor_overlap;

/* the overlaps after the last collide stage (sorted by key) and the events of the step */
typedef struct sensor_set {
    sensor_overlap *now, *next; int now_count, next_count, now_cap, next_cap;
    sensor_overlap *begin, *end; int begin_count, end_count, begin_cap, end_cap;
} sensor_set;

/* sensor.c, called by the collide stage (contact.c) */
/* whether the side of key is a sensor shape */
bool sensor_key(const imp_world *w, uint32_t key);
/* a pair with a sensor side: whether its shapes overlap (as they did when neither side moved; two sensors
 * never do). Reads only: the collide stage calls it on both threads */
int sensor_test(const imp_world *w, uint64_t pair_key, uint32_t ka, uint32_t kb, const geom *ga, const geom *gb, bool resting);
/* an overlapping pair, added in key order (the collide stage's serial pass) */
void sensor_add(imp_world *w, uint64_t pair_key, uint32_t ka, uint32_t kb);
/* after the pairs: the overlaps that began and ended, and the new set becomes the present one */
void sensors_finish(imp_world *w);
void sensors_clear_events(imp_world *w);
void sensors_free(imp_world *w);

#endif

/* snapshot.h: the world's state in and out (snapshot.c). The whole state is the public imp_snapshot
 * (impetus.h); the undo of a failing step is step_undo.c's. */
#ifndef IMPETUS_SNAPSHOT_H
#define IMPETUS_SNAPSHOT_H

#include "impetus.h"

#endif

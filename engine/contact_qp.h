/* contact_qp.h: the exact contact mode: contact forces by an LCP, time of impact, simultaneous impulses (contact_qp.c). */
#ifndef IMPETUS_CONTACT_QP_H
#define IMPETUS_CONTACT_QP_H

#include "step.h"

/* contact_qp.c: world.contact = "qp" */
void qp_begin_step(imp_world *w, double h);            /* impulses, then the step's resting set     */
int qp_deriv(imp_world *w, const double *X, double *dX); /* adds the resting contact forces to dX   */
void qp_free(imp_world *w);
void qp_step(imp_step *s); /* integrate + collide, cut at impacts */

#endif

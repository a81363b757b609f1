/* contact_qp.c: world.contact = "qp", exact contact forces (S0 sections 8-9 and appendix D, S2, S4). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void imp_world_set_contact_mode(imp_world *w, imp_contact_mode m) { w->contact_mode = m; }
imp_contact_mode imp_world_contact_mode(const imp_world *w) { return w->contact_mode; }

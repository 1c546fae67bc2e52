/* SPDX-License-Identifier: Apache-2.0
 * The SPEC language shared by the command line (--ab/--ba/--both) and the control socket
 * (`set`): comma-separated key=value pairs, e.g. "rate_mbit=20,delay_ms=10,delay_cv=0.1".
 * Errors name the key, the value and what is allowed. */
#ifndef LINKEM_SPEC_H
#define LINKEM_SPEC_H

#include <stddef.h>

#include "link.h"

#define SPEC_KEYS                                                                                  \
	"rate_mbit, burst_bytes, trace, queue_pkts, queue_bytes, delay_ms, jitter_ms, delay_cv, "  \
	"dist, reorder, loss, loss_at, ge"

/* Applies the keys of `spec` on top of *cfg (which keeps its other values). On error
 * returns -1, leaves *cfg unchanged and writes a message to err. */
int spec_apply(struct link_config *cfg, const char *spec, char *err, size_t errlen);

/* Splits `list` (written to) at every comma into at most `max` items. Returns their number,
 * or -1 with a message in err for an empty item (",,", a stray leading or trailing comma),
 * too many items, or a key given twice ("loss=0.1,loss=0.2": the last would win unseen). */
int spec_split(char *list, char **items, int max, char *err, size_t errlen);

/* A copy holding its own trace reference. */
void link_config_copy(struct link_config *dst, const struct link_config *src);

const char *dist_name(enum delay_dist d);
const char *loss_at_name(enum loss_point p);

#endif /* LINKEM_SPEC_H */

/* SPDX-License-Identifier: Apache-2.0
 * Bandwidth traces in Mahimahi's format: one line per delivery opportunity of 1500 bytes,
 * holding the opportunity's time in ms since the start; several lines may repeat a time.
 * The trace loops with a period equal to its last timestamp. */
#ifndef LINKEM_TRACE_H
#define LINKEM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_OPPORTUNITY_BYTES 1500

struct trace {
	uint64_t *ms; /* non-decreasing */
	size_t n;
	uint64_t period_ms;
	unsigned refs; /* shared by the directions and configurations that use it */
	char path[];
};

/* Loads `path`; on error returns NULL with a message in err. */
struct trace *trace_load(const char *path, char *err, size_t errlen);
struct trace *trace_get(struct trace *t);
void trace_put(struct trace *t);
double trace_mean_mbit(const struct trace *t);

#endif /* LINKEM_TRACE_H */

/* SPDX-License-Identifier: Apache-2.0
 * Log-linear histogram of microsecond values: exact below 1024 us, 0.2% buckets above
 * (1024 linear buckets, then 512 sub-buckets per power of two, as HdrHistogram does).
 * Cheap to record into on the forwarding path, percentiles on demand. */
#ifndef LINKEM_HIST_H
#define LINKEM_HIST_H

#include <stdint.h>

#define HIST_LINEAR 1024
#define HIST_SUB 512
#define HIST_SHIFTS 40
#define HIST_BUCKETS (HIST_LINEAR + HIST_SHIFTS * HIST_SUB)

struct hist {
	uint64_t count;
	double sum;
	uint64_t max;
	uint32_t bucket[HIST_BUCKETS];
};

void hist_reset(struct hist *h);
void hist_record(struct hist *h, uint64_t value);
uint64_t hist_percentile(const struct hist *h, double q); /* q in [0, 1]; 0 when empty */
double hist_mean(const struct hist *h);

#endif /* LINKEM_HIST_H */

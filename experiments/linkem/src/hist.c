/* SPDX-License-Identifier: Apache-2.0 */
#include "hist.h"

#include <string.h>

void hist_reset(struct hist *h) { memset(h, 0, sizeof(*h)); }

static unsigned bucket_of(uint64_t v)
{
	if (v < HIST_LINEAR)
		return (unsigned)v;
	unsigned shift = 63 - (unsigned)__builtin_clzll(v) - 9; /* v >> shift in [512, 1024) */
	if (shift > HIST_SHIFTS)
		return HIST_BUCKETS - 1;
	return HIST_LINEAR + (shift - 1) * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB);
}

/* Midpoint of a bucket: the value reported for it. */
static uint64_t value_of(unsigned idx)
{
	if (idx < HIST_LINEAR)
		return idx;
	unsigned shift = (idx - HIST_LINEAR) / HIST_SUB + 1;
	uint64_t low = (uint64_t)((idx - HIST_LINEAR) % HIST_SUB + HIST_SUB) << shift;
	return low + ((1ULL << shift) >> 1);
}

void hist_record(struct hist *h, uint64_t value)
{
	h->bucket[bucket_of(value)]++;
	h->count++;
	h->sum += (double)value;
	if (value > h->max)
		h->max = value;
}

uint64_t hist_percentile(const struct hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.5);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t v = value_of(i);
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

double hist_mean(const struct hist *h) { return h->count ? h->sum / (double)h->count : 0.0; }

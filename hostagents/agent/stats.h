/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent counters and the JSON-lines stats writer. All counters are cumulative since
 * start; the reordering core keeps its own (struct pdcp_rx_stats) and is read at write time.
 */
#ifndef AGENT_STATS_H
#define AGENT_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>

#include "pdcp_frame.h"
#include "pdcp_rx.h"

/* Upper edges (exclusive, microseconds) of the delay histogram buckets; one more bucket
 * counts everything at or above the last edge. */
#define DELAY_HIST_EDGES_US                                                                        \
	1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000,     \
		3000, 5000, 7000, 10000, 15000, 20000, 30000, 50000, 70000, 100000, 150000,        \
		200000, 300000, 500000, 700000, 1000000
#define DELAY_HIST_BUCKETS 37

struct agent_stats {
	uint64_t rx_leg[2];
	uint64_t rx_host;
	uint64_t passthrough; /* non-PDCP frames from the legs sent to the host port */
	uint64_t uplink;      /* frames from the host port sent on the uplink leg */
	uint64_t malformed;
	uint64_t malformed_reason[PDCP_FRAME_KIND_COUNT];
	uint64_t tx_dropped_host; /* the host port refused them */
	uint64_t tx_dropped_uplink;
	uint64_t delay_hist[DELAY_HIST_BUCKETS]; /* per delivered PDCP PDU */
} __rte_cache_aligned;

void stats_record_delay_ns(struct agent_stats *s, uint64_t delay_ns);

/* One JSON object on one line, flushed; -1 (errno set) when it could not be written (a full
 * disk, a closed pipe). `queued_host` is the length of the agent's host queue now. */
int stats_write(FILE *out, uint64_t ts_ms, const struct agent_stats *s, const struct pdcp_rx *core,
		unsigned int queued_host, bool final);

#endif /* AGENT_STATS_H */

/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent stats: the delay histogram and the JSON-lines writer.
 */
#include <inttypes.h>
#include <stdio.h>

#include "stats.h"

static const uint64_t delay_edges_us[DELAY_HIST_BUCKETS - 1] = {DELAY_HIST_EDGES_US};

void stats_record_delay_ns(struct agent_stats *s, uint64_t delay_ns)
{
	unsigned int lo = 0, hi = DELAY_HIST_BUCKETS - 1;

	/* first bucket whose upper edge is above the delay */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (delay_ns < delay_edges_us[mid] * 1000)
			hi = mid;
		else
			lo = mid + 1;
	}
	s->delay_hist[lo]++;
}

int stats_write(FILE *out, uint64_t ts_ms, const struct agent_stats *s, const struct pdcp_rx *core,
		unsigned int queued_host, bool final)
{
	const struct pdcp_rx_stats *c = pdcp_rx_get_stats(core);
	unsigned int i;

	fprintf(out,
		"{\"ts_ms\": %" PRIu64 ", \"rx_leg_a\": %" PRIu64 ", \"rx_leg_b\": %" PRIu64
		", \"rx_host\": %" PRIu64 ", \"delivered_in_order\": %" PRIu64
		", \"delivered_reordered\": %" PRIu64 ", \"duplicates\": %" PRIu64
		", \"out_of_window\": %" PRIu64 ", \"malformed\": %" PRIu64
		", \"malformed_reasons\": {",
		ts_ms, s->rx_leg[0], s->rx_leg[1], s->rx_host, c->delivered_in_order,
		c->delivered_reordered, c->duplicates, c->out_of_window, s->malformed);
	for (i = PDCP_FRAME_FIRST_MALFORMED; i < PDCP_FRAME_KIND_COUNT; i++)
		fprintf(out, "%s\"%s\": %" PRIu64, i == PDCP_FRAME_FIRST_MALFORMED ? "" : ", ",
			pdcp_frame_kind_name(i), s->malformed_reason[i]);
	fprintf(out,
		"}, \"passthrough\": %" PRIu64 ", \"uplink\": %" PRIu64
		", \"t_reordering_expiries\": %" PRIu64 ", \"skipped\": %" PRIu64
		", \"flushed\": %" PRIu64 ", \"buffered\": %" PRIu32 ", \"queued_host\": %u"
		", \"rx_deliv\": %" PRIu64 ", \"rx_next\": %" PRIu64
		", \"tx_dropped_host\": %" PRIu64 ", \"tx_dropped_uplink\": %" PRIu64
		", \"delay_us_hist\": {\"edges_us\": [",
		s->passthrough, s->uplink, c->t_reordering_expiries, c->skipped, c->flushed,
		pdcp_rx_buffered(core), queued_host, pdcp_rx_deliv(core), pdcp_rx_next(core),
		s->tx_dropped_host, s->tx_dropped_uplink);
	for (i = 0; i < DELAY_HIST_BUCKETS - 1; i++)
		fprintf(out, "%s%" PRIu64, i ? ", " : "", delay_edges_us[i]);
	fprintf(out, "], \"counts\": [");
	for (i = 0; i < DELAY_HIST_BUCKETS; i++)
		fprintf(out, "%s%" PRIu64, i ? ", " : "", s->delay_hist[i]);
	fprintf(out, "]}%s}\n", final ? ", \"final\": true" : "");
	return fflush(out) != 0 || ferror(out) ? -1 : 0;
}

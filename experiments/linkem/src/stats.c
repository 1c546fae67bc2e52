/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's JSON stats: one line per direction and interval to the --stats file, and the
 * control socket's `stats` reply.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkem.h"
#include "spec.h"
#include "trace.h"

/* ---- stats ---------------------------------------------------------------------------- */

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		size_t room = sb->cap - sb->len;
		va_start(ap, fmt);
		int n = vsnprintf(sb->p + sb->len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			sb->len += (size_t)n;
			return;
		}
		sb->cap = sb->cap * 2 + (size_t)n;
		sb->p = realloc(sb->p, sb->cap);
		if (!sb->p)
			die("out of memory");
	}
}

static void sb_json_string(struct strbuf *sb, const char *s)
{
	sb_printf(sb, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_printf(sb, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			sb_printf(sb, "\\u%04x", *s);
		else
			sb_printf(sb, "%c", *s);
	}
	sb_printf(sb, "\"");
}

static void sb_config(struct strbuf *sb, const struct link_config *c)
{
	sb_printf(sb, "{\"rate_mbit\":%.6g,\"burst_bytes\":%llu,\"trace\":",
		  c->trace ? trace_mean_mbit(c->trace) : c->rate_bps / 1e6,
		  (unsigned long long)c->burst_bytes);
	if (c->trace)
		sb_json_string(sb, c->trace->path);
	else
		sb_printf(sb, "null");
	sb_printf(
		sb,
		",\"queue_pkts\":%llu,\"queue_bytes\":%llu,\"delay_ms\":%.6g,\"delay_sd_ms\":%.6g,"
		"\"dist\":\"%s\",\"reorder\":%d,\"loss\":%.6g,\"loss_at\":\"%s\",\"ge\":",
		(unsigned long long)c->queue_pkts, (unsigned long long)c->queue_bytes,
		c->delay_ns / 1e6, link_delay_sd_ns(c) / 1e6, dist_name(c->dist), c->reorder,
		c->loss, loss_at_name(c->loss_at));
	if (c->ge)
		sb_printf(sb, "[%.6g,%.6g,%.6g,%.6g]}", c->ge_p, c->ge_r, c->ge_1h, c->ge_1k);
	else
		sb_printf(sb, "null}");
}

/* The body of one direction's record (without braces), consuming the window. */
void sb_direction(struct strbuf *sb, struct direction *d, struct window *w)
{
	const struct link *l = &d->link;
	const struct link_counters *c = &l->c;

	collect_ring_drops(d);
	sb_printf(sb,
		  "\"frames\":%llu,\"bytes\":%llu,\"rx_frames\":%llu,\"rx_bytes\":%llu,"
		  "\"queue_pkts\":%u,\"queue_bytes\":%llu,\"in_flight\":%u,"
		  "\"drops\":{\"queue\":%llu,\"loss\":%llu,\"ge\":%llu,\"nobuf\":%llu,\"oversize\":"
		  "%llu,"
		  "\"tx\":%llu,\"rx\":%llu},",
		  (unsigned long long)c->tx_frames, (unsigned long long)c->tx_bytes,
		  (unsigned long long)c->rx_frames, (unsigned long long)c->rx_bytes,
		  link_queue_len(l), (unsigned long long)link_queue_bytes(l),
		  link_delay_line_len(l), (unsigned long long)c->drop_queue,
		  (unsigned long long)c->drop_loss, (unsigned long long)c->drop_ge,
		  (unsigned long long)c->drop_nobuf, (unsigned long long)d->drop_oversize,
		  (unsigned long long)d->drop_tx, (unsigned long long)d->drop_rx);
	sb_printf(sb,
		  "\"delay_us\":{\"n\":%llu,\"mean\":%.1f,\"p50\":%llu,\"p99\":%llu,\"max\":%llu},"
		  "\"late_us\":{\"n\":%llu,\"p50\":%llu,\"p99\":%llu,\"max\":%llu},"
		  "\"early_us\":{\"n\":%llu,\"p50\":%llu,\"p99\":%llu,\"max\":%llu},",
		  (unsigned long long)w->delay.count, hist_mean(&w->delay),
		  (unsigned long long)hist_percentile(&w->delay, 0.5),
		  (unsigned long long)hist_percentile(&w->delay, 0.99),
		  (unsigned long long)w->delay.max, (unsigned long long)w->late.count,
		  (unsigned long long)hist_percentile(&w->late, 0.5),
		  (unsigned long long)hist_percentile(&w->late, 0.99),
		  (unsigned long long)w->late.max, (unsigned long long)w->early.count,
		  (unsigned long long)hist_percentile(&w->early, 0.5),
		  (unsigned long long)hist_percentile(&w->early, 0.99),
		  (unsigned long long)w->early.max);
	sb_printf(sb, "\"rate_mbit\":%.6g,\"departure_slack_us\":%llu,\"io\":\"%s\",\"config\":",
		  l->cfg.trace ? trace_mean_mbit(l->cfg.trace) : l->cfg.rate_bps / 1e6,
		  (unsigned long long)(d->slack_ns / 1000), d->in->xsk ? "afxdp" : "afpacket");
	sb_config(sb, &l->cfg);
	hist_reset(&w->delay);
	hist_reset(&w->late);
	hist_reset(&w->early);
}

void write_stats(struct linkem *e, uint64_t now, int final)
{
	struct strbuf sb = {0};

	if (!e->stats)
		return;
	for (int i = 0; i < NDIR; i++) {
		sb.len = 0;
		sb_printf(&sb, "{\"ts_ms\":%.3f,\"dir\":\"%s\",\"interval_ms\":%.3f,", now / 1e6,
			  DIR_NAMES[i], (now - e->last_stats_ns) / 1e6);
		sb_direction(&sb, &e->dir[i], &e->dir[i].file_win);
		if (i == AB && e->fb_on)
			sb_printf(&sb, ",\"feedback\":{\"sent\":%llu,\"errors\":%llu}",
				  (unsigned long long)e->fb_sent,
				  (unsigned long long)e->fb_send_errors);
		sb_printf(&sb, "%s}\n", final ? ",\"final\":true" : "");
		fwrite(sb.p, 1, sb.len, e->stats);
	}
	fflush(e->stats);
	free(sb.p);
	e->last_stats_ns = now;
}

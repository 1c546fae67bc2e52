/* SPDX-License-Identifier: Apache-2.0 */
#include "feedback.h"
#include "spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Busy time below this share of a period gives no rate sample (the previous one stays):
 * a few frames on an otherwise idle link say little about what it can drain. */
#define FB_MIN_BUSY_SHARE 4 /* 1/4 of a period */

int fb_config_parse(struct fb_config *cfg, const char *spec, char *err, size_t errlen)
{
	struct fb_config c = *cfg;
	char *copy = strdup(spec), *items[8];
	int n;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = spec_split(copy, items, 8, err, errlen);
	if (n < 0)
		goto fail;
	for (int i = 0; i < n; i++) {
		char *kv = items[i], *eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, errlen, "'%s': expected KEY=VALUE with KEY one of %s", kv,
				 FB_SPEC_KEYS);
			goto fail;
		}
		*eq = '\0';
		const char *val = eq + 1;
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 10);
		if (errno || end == val || *end || *val < '0' || *val > '9') { /* not " 5", "+5" */
			snprintf(err, errlen, "%s=%s: expected a non-negative integer", kv, val);
			goto fail;
		}
		if (!strcmp(kv, "leg")) {
			if (v > 255) {
				snprintf(err, errlen, "leg=%lu: expected 0..255", v);
				goto fail;
			}
			c.leg = (uint8_t)v;
		} else if (!strcmp(kv, "period_ms")) {
			if (v < 1 || v > 10000) {
				snprintf(err, errlen, "period_ms=%lu: expected 1..10000", v);
				goto fail;
			}
			c.period_ns = v * 1000000ULL;
		} else if (!strcmp(kv, "target_ms")) {
			if (v > 10000) {
				snprintf(err, errlen, "target_ms=%lu: expected 0..10000", v);
				goto fail;
			}
			c.target_ns = v * 1000000ULL;
		} else if (!strcmp(kv, "sn_bits")) {
			if (v != 18 && v != 12) {
				snprintf(err, errlen, "sn_bits=%lu: expected 18 or 12", v);
				goto fail;
			}
			c.sn_bits = (unsigned)v;
		} else {
			snprintf(err, errlen, "unknown key '%s' (keys: %s)", kv, FB_SPEC_KEYS);
			goto fail;
		}
	}
	free(copy);
	*cfg = c;
	return 0;
fail:
	free(copy);
	return -1;
}

void fb_init(struct fb *f, const struct fb_config *cfg, uint64_t now_ns)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	f->period_start_ns = now_ns;
	f->next_report_ns = now_ns + cfg->period_ns;
	f->enabled = true;
}

bool fb_pdu(const uint8_t *p, uint32_t len, unsigned sn_bits, uint32_t *ue, uint32_t *sn)
{
	uint32_t hdr = sn_bits == 12 ? 2 : 3;
	uint32_t ip = 14 + hdr + 2;

	if (len < ip + 20 || p[12] != (FB_ETHERTYPE >> 8) || p[13] != (FB_ETHERTYPE & 0xff))
		return false;
	if (!(p[14] & 0x80)) /* D/C = 0: a control PDU (such as another leg's report) */
		return false;
	if (p[14 + hdr] != 0x08 || p[14 + hdr + 1] != 0x00 || (p[ip] >> 4) != 4)
		return false;
	if (sn_bits == 12)
		*sn = ((uint32_t)(p[14] & 0x0f) << 8) | p[15];
	else
		*sn = ((uint32_t)(p[14] & 0x03) << 16) | ((uint32_t)p[15] << 8) | p[16];
	*ue = ((uint32_t)p[ip + 16] << 24) | ((uint32_t)p[ip + 17] << 16) |
	      ((uint32_t)p[ip + 18] << 8) | p[ip + 19];
	return true;
}

static struct fb_ue *ue_of(struct fb *f, const uint8_t *frame, uint32_t len, uint32_t *sn,
			   bool create)
{
	uint32_t addr;

	if (!fb_pdu(frame, len, f->cfg.sn_bits, &addr, sn))
		return NULL;
	for (unsigned i = 0; i < f->nue; i++)
		if (f->ue[i].addr == addr)
			return &f->ue[i];
	if (!create || f->nue == FB_MAX_UES)
		return NULL;
	struct fb_ue *u = &f->ue[f->nue++];
	memset(u, 0, sizeof(*u));
	u->addr = addr;
	if (f->nue == 1) /* the first PDU tells where the splitter is */
		memcpy(f->dst_mac, frame + 6, 6);
	return u;
}

void fb_accepted(struct fb *f, const uint8_t *frame, uint32_t len)
{
	uint32_t sn;
	struct fb_ue *u = ue_of(f, frame, len, &sn, true);

	if (u)
		u->held_bytes += len;
}

void fb_sent(struct fb *f, const uint8_t *frame, uint32_t len)
{
	uint32_t sn;
	struct fb_ue *u = ue_of(f, frame, len, &sn, false);

	if (u)
		u->period_sent += len;
}

void fb_delivered(struct fb *f, const uint8_t *frame, uint32_t len)
{
	uint32_t sn;
	struct fb_ue *u = ue_of(f, frame, len, &sn, false);

	if (!u)
		return;
	u->held_bytes -= u->held_bytes < len ? u->held_bytes : len;
	u->period_bytes += len;
	u->last_sn = sn;
	u->delivered_any = true;
}

void fb_lost(struct fb *f, const uint8_t *frame, uint32_t len, bool accepted)
{
	uint32_t sn, mask = (1u << f->cfg.sn_bits) - 1;
	struct fb_ue *u = ue_of(f, frame, len, &sn, true);

	if (!u)
		return;
	if (accepted) {
		u->held_bytes -= u->held_bytes < len ? u->held_bytes : len;
		u->period_link_lost++;
	}
	u->period_lost++;
	/* Consecutive SNs (modulo the SN space) extend the last range; the first
	 * FB_MAX_RANGES ranges are reported, the count covers them all. */
	if (u->nranges && u->ranges[u->nranges - 1][1] == ((sn - 1) & mask))
		u->ranges[u->nranges - 1][1] = sn;
	else if (u->nranges < FB_MAX_RANGES) {
		u->ranges[u->nranges][0] = sn;
		u->ranges[u->nranges][1] = sn;
		u->nranges++;
	}
}

void fb_link_busy(struct fb *f, uint64_t busy_ns) { f->busy_ns += busy_ns; }

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

unsigned fb_report(struct fb *f, uint64_t now_ns, uint64_t link_delay_ns,
		   uint8_t frames[][FB_FRAME_MAX], uint32_t lens[])
{
	uint64_t period = now_ns > f->period_start_ns ? now_ns - f->period_start_ns : 1;
	unsigned n = 0;

	for (unsigned i = 0; i < f->nue; i++) {
		struct fb_ue *u = &f->ue[i];
		/* Drain rate: bytes the link sent (and did not lose) per second it spent sending,
		 * so an idle leg keeps its rate instead of reporting the little it was given, and
		 * a leg that loses everything drains at 0. The busy time is the link's schedule's
		 * (each frame from its arrival or the previous frame's end): timed by linkem's own
		 * wake-ups, a lightly loaded leg looked up to 40 % faster than its rate, its
		 * frames' start counted from a wake-up after their arrival. */
		u->acc_busy_ns += f->busy_ns;
		u->acc_sent += u->period_sent;
		if (!u->acc_sent && u->period_link_lost) {
			u->rate_Bps =
				0; /* the link served this user and lost it all: even briefly */
			u->rate_known = true;
			u->acc_busy_ns = 0;
		} else if (u->acc_sent && u->acc_busy_ns * FB_MIN_BUSY_SHARE >= period) {
			double r = (double)u->acc_sent * 1e9 / (double)u->acc_busy_ns;
			u->rate_Bps = r > 4e9 ? 4000000000u : (uint32_t)r;
			u->rate_known = true;
			u->acc_busy_ns = 0;
			u->acc_sent = 0;
		}
		double want =
			(double)u->rate_Bps * (double)(f->cfg.target_ns + link_delay_ns) / 1e9;
		uint32_t desired = !u->rate_known ? FB_INITIAL_DESIRED_BYTES
				   : want > 4e9	  ? 4000000000u
						  : (uint32_t)want;
		uint32_t held =
			u->held_bytes > 0xffffffffULL ? 0xffffffffu : (uint32_t)u->held_bytes;

		if (f->enabled) {
			uint8_t *p = frames[n];
			memcpy(p, f->dst_mac, 6);
			const uint8_t src[6] = {0x02, 0xdd, 0xd5, 0x00, 0x00, f->cfg.leg};
			memcpy(p + 6, src, 6);
			p[12] = FB_ETHERTYPE >> 8;
			p[13] = FB_ETHERTYPE & 0xff;
			p[14] = (uint8_t)(FB_PDU_TYPE << 4); /* D/C = 0 | PDU type | R R R R */
			p[15] = FB_VERSION;
			p[16] = f->cfg.leg;
			p[17] = (uint8_t)u->nranges;
			uint8_t *q = put32(p + 18, f->seq);
			q = put32(q, u->addr);
			q = put32(q, desired);
			q = put32(q, u->rate_Bps);
			q = put32(q, held);
			q = put32(q, u->delivered_any ? u->last_sn : 0);
			q = put32(q, u->period_bytes > 0xffffffffULL ? 0xffffffffu
								     : (uint32_t)u->period_bytes);
			q = put32(q, u->period_lost);
			for (unsigned r = 0; r < u->nranges; r++) {
				q = put32(q, u->ranges[r][0]);
				q = put32(q, u->ranges[r][1]);
			}
			lens[n++] = (uint32_t)(q - p);
		}
		u->period_bytes = 0;
		u->period_sent = 0;
		u->period_lost = 0;
		u->period_link_lost = 0;
		u->nranges = 0;
	}
	if (n)
		f->seq++;
	f->busy_ns = 0;
	f->period_start_ns = now_ns;
	while (f->next_report_ns <= now_ns)
		f->next_report_ns += f->cfg.period_ns;
	return n;
}

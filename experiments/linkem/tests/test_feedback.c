/* SPDX-License-Identifier: Apache-2.0
 * Unit tests of the leg feedback reports (feedback.c): frames in, report bytes out, with
 * an injected clock.  The report layout checked here is p4src/README.md, "Leg feedback
 * frames".  Run: make linkem-unit, or build/linkem/test_feedback */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "feedback.h"

#define MS 1000000ULL
#define UE1 0x0a000002u /* 10.0.0.2 */
#define UE2 0x0a000005u

static const uint8_t SPLITTER_MAC[6] = {0x02, 0, 0, 0, 0, 0x10};

/* A downlink DC frame as the splitter sends it: Ethernet(0x88B5) | PDCP | 0x0800 | IPv4. */
static uint32_t pdu(uint8_t *p, uint32_t len, unsigned sn_bits, uint32_t sn, uint32_t ue)
{
	uint32_t h = sn_bits == 12 ? 2 : 3;

	memset(p, 0, len);
	memset(p, 0xaa, 6);
	memcpy(p + 6, SPLITTER_MAC, 6);
	p[12] = 0x88;
	p[13] = 0xb5;
	if (sn_bits == 12) {
		p[14] = 0x80 | ((sn >> 8) & 0x0f);
		p[15] = sn & 0xff;
	} else {
		p[14] = 0x80 | ((sn >> 16) & 0x03);
		p[15] = (sn >> 8) & 0xff;
		p[16] = sn & 0xff;
	}
	p[14 + h] = 0x08;
	uint8_t *ip = p + 14 + h + 2;
	ip[0] = 0x45;
	ip[16] = ue >> 24;
	ip[17] = (ue >> 16) & 0xff;
	ip[18] = (ue >> 8) & 0xff;
	ip[19] = ue & 0xff;
	return len;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* Field offsets in the frame (Ethernet header included). */
enum {
	F_SEQ = 18,
	F_UE = 22,
	F_DBS = 26,
	F_RATE = 30,
	F_HELD = 34,
	F_SN = 38,
	F_BYTES = 42,
	F_LOST = 46,
	F_RANGES = 50
};

static struct fb_config config(void)
{
	struct fb_config c = {.leg = 1, .period_ns = 10 * MS, .target_ns = 20 * MS, .sn_bits = 18};
	return c;
}

static void test_report_fields(void)
{
	struct fb f;
	struct fb_config c = config();
	uint8_t frame[1600], out[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];

	fb_init(&f, &c, 0);
	/* Ten 1000-byte PDUs, SN 100..109, accepted at t=0; the link is busy 8 ms sending all
	 * ten (10000 bytes); six of them (100..105) are delivered by the end of the period (the
	 * others are still in the delay line). */
	for (uint32_t sn = 100; sn < 110; sn++)
		fb_accepted(&f, frame, pdu(frame, 1000, 18, sn, UE1));
	for (uint32_t sn = 100; sn < 110; sn++)
		fb_sent(&f, frame, pdu(frame, 1000, 18, sn, UE1));
	fb_link_busy(&f, 8 * MS);
	for (uint32_t sn = 100; sn < 106; sn++)
		fb_delivered(&f, frame, pdu(frame, 1000, 18, sn, UE1));

	unsigned n = fb_report(&f, 10 * MS, 10 * MS, out, lens);
	CHECK(n == 1, "one user, one report: %u", n);
	const uint8_t *p = out[0];
	CHECK(lens[0] == 14 + FB_FIXED_BYTES, "no lost ranges: %u bytes", lens[0]);
	CHECK(!memcmp(p, SPLITTER_MAC, 6), "sent back to the splitter's MAC");
	CHECK(p[12] == 0x88 && p[13] == 0xb5, "ethertype 0x88B5");
	CHECK(p[14] == 0x70, "D/C=0, PDU type 7, R=0: %#x", p[14]);
	CHECK(p[15] == FB_VERSION && p[16] == 1 && p[17] == 0, "version, leg 1, no ranges");
	CHECK(get32(p + F_SEQ) == 0, "first report: seq 0");
	CHECK(get32(p + F_UE) == UE1, "user 10.0.0.2: %#x", get32(p + F_UE));
	/* 10000 B / 8 ms = 1250000 B/s; desired = rate x (target 20 ms + delay 10 ms) = 37500 B */
	CHECK(get32(p + F_RATE) == 1250000, "drain rate over busy time: %u", get32(p + F_RATE));
	CHECK(get32(p + F_DBS) == 37500, "desired buffer: %u", get32(p + F_DBS));
	CHECK(get32(p + F_HELD) == 4000, "four PDUs still held: %u", get32(p + F_HELD));
	CHECK(get32(p + F_SN) == 105, "highest delivered SN: %u", get32(p + F_SN));
	CHECK(get32(p + F_BYTES) == 6000, "delivered bytes: %u", get32(p + F_BYTES));
	CHECK(get32(p + F_LOST) == 0, "nothing lost");

	/* Next period: idle link (no rate sample: the estimate stays), seq advances. */
	n = fb_report(&f, 20 * MS, 10 * MS, out, lens);
	CHECK(n == 1 && get32(out[0] + F_SEQ) == 1, "second report: seq 1");
	CHECK(get32(out[0] + F_RATE) == 1250000, "idle period keeps the rate: %u",
	      get32(out[0] + F_RATE));
	CHECK(get32(out[0] + F_BYTES) == 0, "period counters restart");
}

static void test_lost_ranges(void)
{
	struct fb f;
	struct fb_config c = config();
	uint8_t frame[1600], out[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];

	fb_init(&f, &c, 0);
	/* SN 262142, 262143, 0, 1 lost on the link (one range across the 18-bit wrap), 5 lost
	 * at the queue (never accepted), then 7, 9, 11, 13 (ranges 4 and 5 are over the limit:
	 * counted, not listed). */
	uint32_t on_link[] = {262142, 262143, 0, 1};
	for (unsigned i = 0; i < 4; i++) {
		fb_accepted(&f, frame, pdu(frame, 500, 18, on_link[i], UE1));
		fb_lost(&f, frame, 500, true);
	}
	fb_lost(&f, frame, pdu(frame, 500, 18, 5, UE1), false);
	for (uint32_t sn = 7; sn <= 13; sn += 2)
		fb_lost(&f, frame, pdu(frame, 500, 18, sn, UE1), false);

	unsigned n = fb_report(&f, 10 * MS, 0, out, lens);
	const uint8_t *p = out[0];
	CHECK(n == 1, "one report");
	CHECK(p[17] == FB_MAX_RANGES, "ranges listed: %u", p[17]);
	CHECK(lens[0] == 14 + FB_FIXED_BYTES + 8 * FB_MAX_RANGES, "length with ranges: %u",
	      lens[0]);
	CHECK(get32(p + F_LOST) == 9, "every lost SN counted: %u", get32(p + F_LOST));
	CHECK(get32(p + F_RANGES) == 262142 && get32(p + F_RANGES + 4) == 1,
	      "range across the wrap: [%u, %u]", get32(p + F_RANGES), get32(p + F_RANGES + 4));
	CHECK(get32(p + F_RANGES + 8) == 5 && get32(p + F_RANGES + 12) == 5, "single SN range");
	CHECK(get32(p + F_RANGES + 16) == 7 && get32(p + F_RANGES + 28) == 9, "then 7 and 9");
	CHECK(get32(p + F_HELD) == 0, "lost frames are no longer held: %u", get32(p + F_HELD));
}

static void test_outage_reports_zero_rate(void)
{
	struct fb f;
	struct fb_config c = config();
	uint8_t frame[1600], out[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];

	fb_init(&f, &c, 0);
	fb_accepted(&f, frame, pdu(frame, 1000, 18, 1, UE1));
	fb_sent(&f, frame, pdu(frame, 1000, 18, 1, UE1));
	fb_link_busy(&f, 10 * MS);
	fb_delivered(&f, frame, 1000);
	fb_report(&f, 10 * MS, 0, out, lens); /* rate 1000 B / 10 ms */
	CHECK(get32(out[0] + F_RATE) == 100000, "rate before the outage: %u",
	      get32(out[0] + F_RATE));
	/* loss=1: the link stays busy, everything is lost, nothing delivered. */
	for (uint32_t sn = 2; sn < 12; sn++) {
		fb_accepted(&f, frame, pdu(frame, 1000, 18, sn, UE1));
		fb_lost(&f, frame, 1000, true);
	}
	fb_link_busy(&f, 10 * MS);
	fb_report(&f, 20 * MS, 0, out, lens);
	CHECK(get32(out[0] + F_RATE) == 0 && get32(out[0] + F_DBS) == 0,
	      "a busy leg that delivers nothing drains at 0 and wants nothing: rate %u, desired %u",
	      get32(out[0] + F_RATE), get32(out[0] + F_DBS));
	CHECK(get32(out[0] + F_LOST) == 10 && get32(out[0] + F_SN) == 1, "lost 10, last SN 1");

	/* A slow leg busy for a moment only (too short for a rate sample) that loses the one
	 * frame it served: 0 all the same, or a dead leg would go on asking for data. */
	fb_init(&f, &c, 0);
	fb_accepted(&f, frame, pdu(frame, 1000, 18, 1, UE1));
	fb_sent(&f, frame, 1000);
	fb_link_busy(&f, 10 * MS);
	fb_report(&f, 10 * MS, 0, out, lens);
	CHECK(get32(out[0] + F_RATE) == 100000, "rate sampled: %u", get32(out[0] + F_RATE));
	fb_accepted(&f, frame, pdu(frame, 1000, 18, 2, UE1));
	fb_lost(&f, frame, 1000, true);
	fb_link_busy(&f, 1 * MS);
	fb_report(&f, 20 * MS, 0, out, lens);
	CHECK(get32(out[0] + F_RATE) == 0 && get32(out[0] + F_DBS) == 0,
	      "1 ms busy, all lost: rate %u, desired %u", get32(out[0] + F_RATE),
	      get32(out[0] + F_DBS));
}

static void test_slow_leg_frame_longer_than_a_period(void)
{
	struct fb f;
	struct fb_config c = config();
	uint8_t frame[1600], out[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];

	/* 1 Mbit/s: a 1500-byte frame takes 12 ms, longer than the 10 ms period. The first
	 * period ends before the frame does: no sample (not a rate of 0); the second ends it,
	 * and the link's schedule gives its whole 12 ms: 1500 B / 12 ms = 125000 B/s. */
	fb_init(&f, &c, 0);
	fb_accepted(&f, frame, pdu(frame, 1500, 18, 1, UE1));
	fb_report(&f, 10 * MS, 0, out, lens);
	CHECK(get32(out[0] + F_RATE) == 0 && get32(out[0] + F_DBS) == FB_INITIAL_DESIRED_BYTES,
	      "no frame sent yet: no sample, initial desired buffer (%u)", get32(out[0] + F_DBS));
	fb_sent(&f, frame, 1500);
	fb_link_busy(&f, 12 * MS);
	fb_report(&f, 20 * MS, 0, out, lens);
	CHECK(get32(out[0] + F_RATE) == 125000, "a frame longer than a period: %u",
	      get32(out[0] + F_RATE));
}

static void test_users_and_silence(void)
{
	struct fb f;
	struct fb_config c = config();
	uint8_t frame[1600], out[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];

	c.sn_bits = 12;
	fb_init(&f, &c, 0);
	CHECK(fb_report(&f, 10 * MS, 0, out, lens) == 0, "no user seen: no report");
	fb_accepted(&f, frame, pdu(frame, 300, 12, 4095, UE1));
	fb_accepted(&f, frame, pdu(frame, 300, 12, 7, UE2));
	fb_delivered(&f, frame, pdu(frame, 300, 12, 4095, UE1));
	/* Not a PDU: plain IPv4, and a control PDU (another leg's report). */
	uint8_t ip[64] = {[12] = 0x08, [14] = 0x45};
	fb_accepted(&f, ip, sizeof(ip));
	pdu(frame, 300, 12, 9, UE1);
	frame[14] &= 0x7f;
	fb_accepted(&f, frame, 300);

	unsigned n = fb_report(&f, 20 * MS, 0, out, lens);
	CHECK(n == 2, "one report per user: %u", n);
	CHECK(get32(out[0] + F_UE) == UE1 && get32(out[1] + F_UE) == UE2, "in order of appearance");
	CHECK(get32(out[0] + F_SN) == 4095, "12-bit SN: %u", get32(out[0] + F_SN));
	CHECK(get32(out[1] + F_HELD) == 300 && get32(out[0] + F_HELD) == 0, "held per user");
	CHECK(get32(out[0] + F_RATE) == 0 && get32(out[0] + F_DBS) == FB_INITIAL_DESIRED_BYTES,
	      "no rate sample yet: rate 0, the initial desired buffer %u", get32(out[0] + F_DBS));
	CHECK(get32(out[0] + F_SEQ) == 0 && get32(out[1] + F_SEQ) == 0, "one seq per period");

	f.enabled = false; /* `feedback off` */
	CHECK(fb_report(&f, 30 * MS, 0, out, lens) == 0, "silenced: no report");
	f.enabled = true;
	n = fb_report(&f, 40 * MS, 0, out, lens);
	CHECK(n == 2 && get32(out[0] + F_SEQ) == 1, "back: seq continues at 1");
	CHECK(f.next_report_ns == 50 * MS, "next report one period later: %llu",
	      (unsigned long long)f.next_report_ns);
}

static void test_config_errors(void)
{
	struct fb_config c = config();
	char err[256];

	CHECK(fb_config_parse(&c, "leg=2,period_ms=5,target_ms=0,sn_bits=12", err, sizeof(err)) ==
		      0,
	      "valid: %s", err);
	CHECK(c.leg == 2 && c.period_ns == 5 * MS && c.target_ns == 0 && c.sn_bits == 12,
	      "applied");
	CHECK(fb_config_parse(&c, "leg=256", err, sizeof(err)) == -1 && strstr(err, "0..255"),
	      "leg range: %s", err);
	CHECK(fb_config_parse(&c, "period_ms=0", err, sizeof(err)) == -1 && strstr(err, "1..10000"),
	      "period range: %s", err);
	CHECK(fb_config_parse(&c, "sn_bits=16", err, sizeof(err)) == -1 && strstr(err, "18 or 12"),
	      "sn_bits: %s", err);
	CHECK(fb_config_parse(&c, "rate=1", err, sizeof(err)) == -1 &&
		      strstr(err, "leg, period_ms"),
	      "unknown key lists the keys: %s", err);
	CHECK(fb_config_parse(&c, "leg=1,leg=3", err, sizeof(err)) == -1 &&
		      strstr(err, "leg given twice"),
	      "a repeated key is refused: %s", err);
	CHECK(fb_config_parse(&c, "leg=1,", err, sizeof(err)) == -1 &&
		      strstr(err, "empty item between commas"),
	      "a stray comma is refused: %s", err);
	CHECK(fb_config_parse(&c, "leg=+1", err, sizeof(err)) == -1 &&
		      strstr(err, "leg=+1: expected a non-negative integer"),
	      "a sign is refused (strtoul took it): %s", err);
	CHECK(fb_config_parse(&c, "period_ms= 5", err, sizeof(err)) == -1 &&
		      strstr(err, "expected a non-negative integer"),
	      "a space before the number is refused (strtoul skipped it): %s", err);
	CHECK(c.leg == 2, "errors leave the config unchanged");
}

int main(void)
{
	test_report_fields();
	test_lost_ranges();
	test_outage_reports_zero_rate();
	test_slow_leg_frame_longer_than_a_period();
	test_users_and_silence();
	test_config_errors();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

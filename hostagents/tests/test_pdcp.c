/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the TS 38.323 reordering core and the frame parser; no NIC, no DPDK.
 * Each step's comment draws the state after it: `RX_DELIV = 4, stored = {5, 7}`.
 * The last line of output is `N passed, N failed` (CI reads it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pdcp_frame.h"
#include "pdcp_rx.h"

#define MS 1000u /* now_us units per millisecond */
#define T_REORD (200 * MS)
#define MAX_DELIVERIES 64

/* ---- a receiver whose deliveries are recorded ------------------------------------- */

struct delivery {
	uint64_t count;
	uintptr_t pdu;
	enum pdcp_rx_delivery how;
};

struct recorder {
	struct delivery log[MAX_DELIVERIES];
	unsigned int n;
	uint64_t total;
	uint64_t next_expected; /* for streams: deliveries must be strictly increasing */
	bool order_broken;
};

static struct recorder rec;

static void record(void *ctx, void *pdu, uint64_t count, enum pdcp_rx_delivery how)
{
	struct recorder *r = ctx;

	if (r->n < MAX_DELIVERIES)
		r->log[r->n++] = (struct delivery){count, (uintptr_t)pdu, how};
	if (r->total > 0 && count < r->next_expected)
		r->order_broken = true;
	r->next_expected = count + 1;
	r->total++;
}

static struct pdcp_rx *make_rx(unsigned int sn_bits, uint64_t t_reordering_us)
{
	struct pdcp_rx_config cfg = {
		.sn_bits = sn_bits,
		.t_reordering_us = t_reordering_us,
		.deliver = record,
		.ctx = &rec,
	};
	memset(&rec, 0, sizeof(rec));
	return pdcp_rx_create(&cfg);
}

/* The PDU handle of SN s is s + 1000 so tests can tell the handle from the COUNT. */
static enum pdcp_rx_result rx_sn(struct pdcp_rx *rx, uint32_t sn, uint64_t now_us)
{
	return pdcp_rx_receive(rx, sn, (void *)(uintptr_t)(sn + 1000), now_us);
}

/* True if the deliveries logged from index `from` are exactly `counts`. */
static bool delivered_exactly(unsigned int from, const uint64_t *counts, unsigned int n)
{
	if (rec.n - from != n)
		return false;
	for (unsigned int i = 0; i < n; i++)
		if (rec.log[from + i].count != counts[i])
			return false;
	return true;
}
#define DELIVERED(from, ...)                                                                       \
	delivered_exactly((from), (const uint64_t[]){__VA_ARGS__},                                 \
			  sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* ---- reordering core ---------------------------------------------------------------- */

static void test_in_order(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	/* SN 0..9 in order: each is RX_DELIV on arrival and leaves at once. */
	for (uint32_t sn = 0; sn < 10; sn++) {
		CHECK_EQ(rx_sn(rx, sn, sn * MS), PDCP_RX_ACCEPTED);
		/* RX_DELIV = RX_NEXT = sn + 1, stored = {} */
		CHECK_EQ(pdcp_rx_deliv(rx), sn + 1);
		CHECK_EQ(pdcp_rx_next(rx), sn + 1);
		CHECK(!pdcp_rx_timer_running(rx));
	}
	CHECK_EQ(rec.n, 10);
	for (unsigned int i = 0; i < 10; i++) {
		CHECK_EQ(rec.log[i].count, i);
		CHECK_EQ(rec.log[i].pdu, i + 1000);
		CHECK_EQ(rec.log[i].how, PDCP_RX_IN_ORDER);
	}
	CHECK_EQ(pdcp_rx_get_stats(rx)->delivered_in_order, 10);
	CHECK_EQ(pdcp_rx_get_stats(rx)->delivered_reordered, 0);
	CHECK_EQ(pdcp_rx_buffered(rx), 0);
	pdcp_rx_free(rx);
}

static void test_reorder_within_timer(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 0, 0);
	/* RX_DELIV = 1, RX_NEXT = 1, stored = {} */
	rx_sn(rx, 2, 1 * MS);
	/* RX_DELIV = 1, RX_NEXT = 3, stored = {2}; timer started: RX_REORD = 3 */
	CHECK(pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_reord(rx), 3);
	CHECK_EQ(pdcp_rx_timer_deadline_us(rx), 1 * MS + T_REORD);
	rx_sn(rx, 3, 2 * MS);
	/* RX_DELIV = 1, RX_NEXT = 4, stored = {2, 3}; RX_REORD stays 3 */
	CHECK_EQ(pdcp_rx_reord(rx), 3);
	CHECK_EQ(pdcp_rx_buffered(rx), 2);
	CHECK(DELIVERED(0, 0));
	rx_sn(rx, 1, 3 * MS);
	/* 1 fills the gap: 1 (in order), 2, 3 (reordered) leave.
	 * RX_DELIV = 4 >= RX_REORD = 3: timer stopped; RX_DELIV = RX_NEXT: not restarted. */
	CHECK(DELIVERED(1, 1, 2, 3));
	CHECK_EQ(rec.log[1].how, PDCP_RX_IN_ORDER);
	CHECK_EQ(rec.log[2].how, PDCP_RX_REORDERED);
	CHECK_EQ(rec.log[3].how, PDCP_RX_REORDERED);
	CHECK_EQ(pdcp_rx_deliv(rx), 4);
	CHECK(!pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_buffered(rx), 0);
	/* Nothing more happens when the old deadline passes. */
	CHECK(!pdcp_rx_poll(rx, 10 * T_REORD));
	CHECK_EQ(pdcp_rx_get_stats(rx)->t_reordering_expiries, 0);
	CHECK_EQ(pdcp_rx_get_stats(rx)->delivered_in_order, 2);
	CHECK_EQ(pdcp_rx_get_stats(rx)->delivered_reordered, 2);
	pdcp_rx_free(rx);
}

/* Known bug of open implementations: RX_REORD updated (or the timer restarted) on every
 * out-of-order PDU. The spec sets RX_REORD only when the timer starts. */
static void test_rx_reord_set_only_when_timer_starts(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 0, 0);
	rx_sn(rx, 2, 0);
	/* RX_DELIV = 1, RX_NEXT = 3, stored = {2}; RX_REORD = 3, deadline 200 ms */
	rx_sn(rx, 5, 50 * MS);
	/* RX_DELIV = 1, RX_NEXT = 6, stored = {2, 5}; timer running: RX_REORD stays 3 and
	 * the deadline stays 200 ms */
	CHECK_EQ(pdcp_rx_reord(rx), 3);
	CHECK_EQ(pdcp_rx_timer_deadline_us(rx), T_REORD);
	rx_sn(rx, 1, 60 * MS);
	/* 1, 2 leave; RX_DELIV = 3 >= RX_REORD = 3: timer stopped, and since RX_DELIV = 3 <
	 * RX_NEXT = 6, restarted at 60 ms with RX_REORD = 6. stored = {5} */
	CHECK(DELIVERED(1, 1, 2));
	CHECK_EQ(pdcp_rx_deliv(rx), 3);
	CHECK(pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_reord(rx), 6);
	CHECK_EQ(pdcp_rx_timer_deadline_us(rx), 60 * MS + T_REORD);
	/* The first deadline (200 ms) is gone: nothing fires there. */
	CHECK(!pdcp_rx_poll(rx, T_REORD));
	CHECK(DELIVERED(1, 1, 2));
	/* A PDU that fills part of the gap but leaves RX_DELIV < RX_REORD keeps the timer. */
	rx_sn(rx, 3, 100 * MS);
	/* RX_DELIV = 4, RX_NEXT = 6, stored = {5}; RX_REORD = 6, deadline 260 ms */
	CHECK_EQ(pdcp_rx_deliv(rx), 4);
	CHECK_EQ(pdcp_rx_reord(rx), 6);
	CHECK_EQ(pdcp_rx_timer_deadline_us(rx), 60 * MS + T_REORD);
	pdcp_rx_free(rx);
}

/* Known bug of open implementations: after expiry RX_DELIV set to RX_REORD (or left
 * behind). The spec moves it to the first undelivered COUNT at or after RX_REORD. */
static void test_expiry_with_gap(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 0, 0);
	rx_sn(rx, 2, 10 * MS);
	/* RX_DELIV = 1, stored = {2}; RX_REORD = 3, deadline 210 ms */
	rx_sn(rx, 3, 20 * MS);
	rx_sn(rx, 5, 30 * MS);
	/* RX_DELIV = 1, RX_NEXT = 6, stored = {2, 3, 5}; RX_REORD = 3 */
	CHECK(!pdcp_rx_poll(rx, 210 * MS - 1));
	CHECK(pdcp_rx_poll(rx, 210 * MS));
	/* Expiry: stored < RX_REORD = 3 -> {2}; consecutive from 3 -> {3}; 1 is given up.
	 * RX_DELIV = 4 (first undelivered >= RX_REORD, not RX_REORD itself), stored = {5};
	 * RX_DELIV < RX_NEXT: RX_REORD = 6, timer restarted at the expiry, deadline 410 ms */
	CHECK(DELIVERED(1, 2, 3));
	CHECK_EQ(rec.log[1].how, PDCP_RX_ON_EXPIRY);
	CHECK_EQ(pdcp_rx_deliv(rx), 4);
	CHECK_EQ(pdcp_rx_reord(rx), 6);
	CHECK(pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_timer_deadline_us(rx), 410 * MS);
	CHECK_EQ(pdcp_rx_get_stats(rx)->skipped, 1);
	/* The PDU given up on arrives late: discarded, RCVD_COUNT = 1 < RX_DELIV = 4. */
	CHECK_EQ(rx_sn(rx, 1, 300 * MS), PDCP_RX_OUT_OF_WINDOW);
	CHECK(pdcp_rx_poll(rx, 410 * MS));
	/* Expiry: stored < 6 -> {5}; 4 given up. RX_DELIV = 6 = RX_NEXT: timer stays off. */
	CHECK(DELIVERED(1, 2, 3, 5));
	CHECK_EQ(pdcp_rx_deliv(rx), 6);
	CHECK(!pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_buffered(rx), 0);
	CHECK_EQ(pdcp_rx_get_stats(rx)->skipped, 2);
	CHECK_EQ(pdcp_rx_get_stats(rx)->t_reordering_expiries, 2);
	CHECK_EQ(pdcp_rx_get_stats(rx)->out_of_window, 1);
	pdcp_rx_free(rx);
}

/* Expiry delivers the consecutive run from RX_REORD, and a late poll serves a chain of
 * expiries, each timed from the previous deadline. */
static void test_expiry_consecutive_run_and_late_poll(void)
{
	struct pdcp_rx *rx = make_rx(12, T_REORD);

	rx_sn(rx, 1, 0);
	/* RX_DELIV = 0, RX_NEXT = 2, stored = {1}; RX_REORD = 2, deadline 200 ms */
	rx_sn(rx, 2, 1 * MS);
	rx_sn(rx, 3, 2 * MS);
	rx_sn(rx, 6, 3 * MS);
	/* RX_DELIV = 0, RX_NEXT = 7, stored = {1, 2, 3, 6}; RX_REORD = 2 */
	CHECK(pdcp_rx_poll(rx, 1000 * MS));
	/* 200 ms: {1} (< 2), then 2, 3 (consecutive from 2): RX_DELIV = 4, RX_REORD = 7,
	 * restarted at 200 ms. 400 ms: {6}: RX_DELIV = 7 = RX_NEXT. Both in one poll. */
	CHECK(DELIVERED(0, 1, 2, 3, 6));
	CHECK_EQ(pdcp_rx_deliv(rx), 7);
	CHECK_EQ(pdcp_rx_get_stats(rx)->t_reordering_expiries, 2);
	CHECK(!pdcp_rx_timer_running(rx));
	pdcp_rx_free(rx);
}

/* An expiry due before a PDU arrives is served before that PDU is processed. */
static void test_expiry_due_before_arrival(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 1, 0);
	/* RX_DELIV = 0, stored = {1}; deadline 200 ms */
	CHECK_EQ(rx_sn(rx, 0, 250 * MS), PDCP_RX_OUT_OF_WINDOW);
	/* The timer expired at 200 ms: 1 left, RX_DELIV = 2; then 0 came too late. */
	CHECK(DELIVERED(0, 1));
	CHECK_EQ(pdcp_rx_deliv(rx), 2);
	pdcp_rx_free(rx);
}

static void test_duplicates(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 0, 0);
	/* RX_DELIV = 1, stored = {} */
	CHECK_EQ(rx_sn(rx, 0, 1), PDCP_RX_DUPLICATE); /* already delivered */
	rx_sn(rx, 2, 2);
	/* RX_DELIV = 1, stored = {2} */
	CHECK_EQ(rx_sn(rx, 2, 3), PDCP_RX_DUPLICATE); /* waiting in the buffer */
	CHECK_EQ(pdcp_rx_buffered(rx), 1);
	rx_sn(rx, 1, 4);
	/* RX_DELIV = 3, stored = {} */
	CHECK(DELIVERED(0, 0, 1, 2));
	CHECK_EQ(rec.log[2].pdu, 1002); /* the first copy, not the duplicate */
	CHECK_EQ(pdcp_rx_get_stats(rx)->duplicates, 2);
	CHECK_EQ(pdcp_rx_get_stats(rx)->out_of_window, 0);
	pdcp_rx_free(rx);
}

/* Duplication mode: every PDU comes on both legs, leg B a few PDUs behind leg A. */
static void test_duplication_mode_stream(void)
{
	struct pdcp_rx *rx = make_rx(12, T_REORD);
	const uint32_t n = 10000, lag = 3;

	for (uint32_t i = 0; i < n + lag; i++) {
		if (i < n)
			CHECK_EQ(rx_sn(rx, i & 0xFFF, i), PDCP_RX_ACCEPTED); /* leg A */
		if (i >= lag)
			CHECK_EQ(rx_sn(rx, (i - lag) & 0xFFF, i), PDCP_RX_DUPLICATE); /* leg B */
	}
	/* Every COUNT delivered once, in order, none waited; RX_DELIV = n */
	CHECK_EQ(rec.total, n);
	CHECK(!rec.order_broken);
	CHECK_EQ(pdcp_rx_get_stats(rx)->delivered_in_order, n);
	CHECK_EQ(pdcp_rx_get_stats(rx)->duplicates, n);
	CHECK_EQ(pdcp_rx_deliv(rx), n);
	pdcp_rx_free(rx);
}

static void test_burst_loss(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	for (uint32_t sn = 0; sn < 10; sn++)
		rx_sn(rx, sn, 0);
	/* SN 10..59 lost */
	for (uint32_t sn = 60; sn < 70; sn++)
		rx_sn(rx, sn, 5 * MS);
	/* RX_DELIV = 10, RX_NEXT = 70, stored = {60..69}; RX_REORD = 61, deadline 205 ms */
	CHECK_EQ(pdcp_rx_buffered(rx), 10);
	CHECK_EQ(pdcp_rx_reord(rx), 61);
	CHECK(pdcp_rx_poll(rx, 205 * MS));
	/* stored < 61 -> {60}; consecutive from 61 -> {61..69}; RX_DELIV = 70 = RX_NEXT */
	CHECK_EQ(rec.total, 20);
	CHECK(!rec.order_broken);
	CHECK_EQ(pdcp_rx_deliv(rx), 70);
	CHECK_EQ(pdcp_rx_get_stats(rx)->skipped, 50);
	CHECK(!pdcp_rx_timer_running(rx));
	pdcp_rx_free(rx);
}

static void test_out_of_window(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);
	const uint32_t w = pdcp_rx_window_size(rx); /* 2^17 */

	CHECK_EQ(w, 1u << 17);
	rx_sn(rx, 0, 0);
	/* RX_DELIV = 1: SN(RX_DELIV) + Window_Size = w + 1 is the first SN read as HFN - 1,
	 * which is below COUNT 0 here: out of window. */
	CHECK_EQ(rx_sn(rx, w + 1, 1), PDCP_RX_OUT_OF_WINDOW);
	CHECK_EQ(rx_sn(rx, (1u << 18) - 1, 2), PDCP_RX_OUT_OF_WINDOW);
	/* SN w is still inside: COUNT w, the far edge of the window. */
	CHECK_EQ(rx_sn(rx, w, 3), PDCP_RX_ACCEPTED);
	/* RX_DELIV = 1, RX_NEXT = w + 1, stored = {w} */
	CHECK_EQ(pdcp_rx_next(rx), w + 1);
	CHECK(pdcp_rx_is_stored(rx, w));
	CHECK_EQ(pdcp_rx_get_stats(rx)->out_of_window, 2);
	pdcp_rx_free(rx);

	/* Near an HFN boundary: RX_DELIV = 2^12 - 2 (HFN 0). */
	rx = make_rx(12, 0);
	for (uint32_t sn = 0; sn < 4094; sn++)
		rx_sn(rx, sn, 0);
	CHECK_EQ(pdcp_rx_deliv(rx), 4094);
	/* SN 1 < SN(RX_DELIV) - 2048: HFN + 1, COUNT 4097, accepted (t = 0 gives up 4094..4096). */
	CHECK_EQ(rx_sn(rx, 1, 1), PDCP_RX_ACCEPTED);
	CHECK_EQ(pdcp_rx_deliv(rx), 4098);
	CHECK_EQ(rec.total, 4095);
	CHECK_EQ(rec.next_expected, 4098);
	/* SN 4094 now reads as HFN 0 (COUNT 4094 < RX_DELIV): a late PDU, discarded. */
	CHECK_EQ(rx_sn(rx, 4094, 2), PDCP_RX_OUT_OF_WINDOW);
	pdcp_rx_free(rx);

	/* The lower edge: RCVD_SN = SN(RX_DELIV) - Window_Size is not "<", so it keeps
	 * HFN(RX_DELIV). 12-bit, t = 0; SN 5 lost, 0..2052 otherwise delivered. */
	rx = make_rx(12, 0);
	for (uint32_t sn = 0; sn < 2053; sn++)
		if (sn != 5)
			rx_sn(rx, sn, 0);
	/* RX_DELIV = 2053 (SN 2053, HFN 0), stored = {} */
	CHECK_EQ(pdcp_rx_deliv(rx), 2053);
	CHECK_EQ(rx_sn(rx, 5, 1), PDCP_RX_OUT_OF_WINDOW); /* COUNT 5 */
	CHECK_EQ(rx_sn(rx, 4, 1), PDCP_RX_ACCEPTED);	  /* COUNT 4096 + 4 = RX_DELIV + 2047 */
	CHECK_EQ(rec.next_expected, 4101);
	pdcp_rx_free(rx);
}

/* Many HFN cycles with reordering (pairs swapped), duplicates and losses that the timer
 * resolves. Deliveries must be strictly increasing COUNTs; all but the losses arrive. */
static void wrap_around(unsigned int sn_bits, unsigned int cycles)
{
	struct pdcp_rx *rx = make_rx(sn_bits, T_REORD);
	const uint32_t sn_mask = (1u << sn_bits) - 1;
	const uint64_t n = (uint64_t)cycles << sn_bits;
	uint64_t now = 0, lost = 0;

	for (uint64_t c = 0; c < n; c += 2) {
		now += 10;
		if (c % 9973 == 0) {
			/* Lose c; c + 1 waits for the timer. */
			lost++;
			CHECK_EQ(pdcp_rx_receive(rx, (c + 1) & sn_mask, (void *)1, now),
				 PDCP_RX_ACCEPTED);
			now += T_REORD;
			CHECK(pdcp_rx_poll(rx, now));
			continue;
		}
		/* c + 1 before c, then a duplicate of c */
		CHECK_EQ(pdcp_rx_receive(rx, (c + 1) & sn_mask, (void *)1, now), PDCP_RX_ACCEPTED);
		CHECK_EQ(pdcp_rx_receive(rx, c & sn_mask, (void *)1, now), PDCP_RX_ACCEPTED);
		CHECK_EQ(pdcp_rx_receive(rx, c & sn_mask, (void *)1, now), PDCP_RX_DUPLICATE);
	}
	CHECK(!rec.order_broken);
	CHECK_EQ(rec.total, n - lost);
	CHECK_EQ(rec.next_expected, n);
	CHECK_EQ(pdcp_rx_deliv(rx), n); /* COUNT = cycles:0, i.e. HFN = cycles */
	CHECK_EQ(pdcp_rx_next(rx), n);
	CHECK_EQ(pdcp_rx_buffered(rx), 0);
	CHECK_EQ(pdcp_rx_get_stats(rx)->skipped, lost);
	pdcp_rx_free(rx);
}

static void test_wrap_around_12bit(void) { wrap_around(12, 300); }
static void test_wrap_around_18bit(void) { wrap_around(18, 12); }

static void test_t_reordering_zero(void)
{
	struct pdcp_rx *rx = make_rx(18, 0);

	rx_sn(rx, 0, 0);
	rx_sn(rx, 2, 0);
	/* The timer starts and expires at once: 2 leaves, 1 is given up.
	 * RX_DELIV = 3, RX_NEXT = 3, stored = {} */
	CHECK(DELIVERED(0, 0, 2));
	CHECK_EQ(rec.log[1].how, PDCP_RX_ON_EXPIRY);
	CHECK_EQ(pdcp_rx_deliv(rx), 3);
	CHECK(!pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_buffered(rx), 0);
	CHECK_EQ(rx_sn(rx, 1, 1), PDCP_RX_OUT_OF_WINDOW);
	rx_sn(rx, 3, 2);
	CHECK(DELIVERED(0, 0, 2, 3));
	CHECK_EQ(pdcp_rx_get_stats(rx)->t_reordering_expiries, 1);
	pdcp_rx_free(rx);
}

static void test_flush(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	rx_sn(rx, 0, 0);
	rx_sn(rx, 2, 0);
	rx_sn(rx, 5, 0);
	/* RX_DELIV = 1, RX_NEXT = 6, stored = {2, 5} */
	CHECK_EQ(pdcp_rx_flush(rx), 2);
	/* RX_DELIV = RX_NEXT = 6, stored = {}, timer off; 1, 3, 4 given up */
	CHECK(DELIVERED(0, 0, 2, 5));
	CHECK_EQ(rec.log[2].how, PDCP_RX_ON_FLUSH);
	CHECK_EQ(pdcp_rx_deliv(rx), 6);
	CHECK(!pdcp_rx_timer_running(rx));
	CHECK_EQ(pdcp_rx_get_stats(rx)->skipped, 3);
	CHECK_EQ(pdcp_rx_get_stats(rx)->flushed, 2);
	CHECK(!pdcp_rx_poll(rx, 10 * T_REORD));
	pdcp_rx_free(rx);
}

/* A receiver that starts after the sender: SN 200000 is HFN -1 from RX_DELIV = 0, but in
 * the window once RX_DELIV starts there. */
static void test_initial_count(void)
{
	struct pdcp_rx *rx = make_rx(18, T_REORD);

	CHECK_EQ(rx_sn(rx, 200000, 0), PDCP_RX_OUT_OF_WINDOW); /* spec start: RX_DELIV = 0 */
	CHECK_EQ(pdcp_rx_set_initial_count(rx, 200000), -1);   /* too late: a PDU came */
	pdcp_rx_free(rx);

	rx = make_rx(18, T_REORD);
	CHECK_EQ(pdcp_rx_set_initial_count(rx, 200000), 0);
	/* RX_DELIV = RX_NEXT = 200000, stored = {} */
	CHECK_EQ(rx_sn(rx, 200000, 0), PDCP_RX_ACCEPTED);
	CHECK_EQ(rx_sn(rx, 200001, 0), PDCP_RX_ACCEPTED);
	CHECK(DELIVERED(0, 200000, 200001));
	/* SN 5 after the wrap: SN 5 < SN(RX_DELIV) - Window_Size, so HFN 1: COUNT 262149 */
	CHECK_EQ(rx_sn(rx, 5, 0), PDCP_RX_ACCEPTED);
	CHECK(pdcp_rx_is_stored(rx, (1u << 18) + 5));
	pdcp_rx_free(rx);
}

static void test_create_rejects_bad_config(void)
{
	struct pdcp_rx_config cfg = {.sn_bits = 16, .deliver = record};

	errno = 0;
	CHECK(pdcp_rx_create(&cfg) == NULL);
	CHECK_EQ(errno, EINVAL);
	cfg.sn_bits = 12;
	cfg.deliver = NULL;
	CHECK(pdcp_rx_create(&cfg) == NULL);
}

/* ---- frame parser ------------------------------------------------------------------- */

/* dst 02:00:00:00:00:02, src 02:00:00:00:00:01, then the given ethertype and bytes */
static size_t frame(uint8_t *buf, uint16_t ethertype, const uint8_t *rest, size_t n)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};

	memcpy(buf, macs, 12);
	buf[12] = ethertype >> 8;
	buf[13] = ethertype & 0xFF;
	memcpy(buf + 14, rest, n);
	return 14 + n;
}

static void test_frame_data_18bit(void)
{
	/* D/C = 1, R = 0b11111 (ignored by a receiver), SN = 0x2ABCD; inner IPv4 */
	const uint8_t rest[] = {0xFE, 0xAB, 0xCD, 0x08, 0x00, 0x45, 0x00, 0x11};
	uint8_t buf[64];
	size_t len = frame(buf, PDCP_ETHERTYPE, rest, sizeof(rest));
	struct pdcp_frame_info info;

	CHECK_EQ(pdcp_frame_parse(buf, len, 18, &info), PDCP_FRAME_DATA);
	CHECK_EQ(info.sn, 0x2ABCD);
	CHECK_EQ(info.inner_type, 0x0800);
	CHECK_EQ(info.strip_len, 5);
	pdcp_frame_strip(buf, &info);
	/* MACs kept, ethertype restored, L3 bytes unchanged */
	const uint8_t want[] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0x00, 0x11};
	CHECK_EQ(len - info.strip_len, sizeof(want));
	CHECK(memcmp(buf + info.strip_len, want, sizeof(want)) == 0);
}

static void test_frame_data_12bit(void)
{
	/* D/C = 1, R = 0b111, SN = 0xABC; inner IPv6 */
	const uint8_t rest[] = {0xFA, 0xBC, 0x86, 0xDD, 0x60};
	uint8_t buf[64];
	size_t len = frame(buf, PDCP_ETHERTYPE, rest, sizeof(rest));
	struct pdcp_frame_info info;

	CHECK_EQ(pdcp_frame_parse(buf, len, 12, &info), PDCP_FRAME_DATA);
	CHECK_EQ(info.sn, 0xABC);
	CHECK_EQ(info.inner_type, 0x86DD);
	CHECK_EQ(info.strip_len, 4);
	pdcp_frame_strip(buf, &info);
	CHECK_EQ(buf[info.strip_len + 12], 0x86);
	CHECK_EQ(buf[info.strip_len + 14], 0x60);
	CHECK_EQ(buf[info.strip_len + 11], 1);
}

static void test_frame_passthrough(void)
{
	const uint8_t arp[28] = {0};
	uint8_t buf[64];
	struct pdcp_frame_info info;

	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, 0x0806, arp, sizeof(arp)), 18, &info),
		 PDCP_FRAME_PASSTHROUGH);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, 0x0800, arp, sizeof(arp)), 18, &info),
		 PDCP_FRAME_PASSTHROUGH);
	CHECK_EQ(pdcp_frame_parse(buf, 13, 18, &info), PDCP_FRAME_PASSTHROUGH);
}

static void test_frame_malformed_reasons(void)
{
	uint8_t buf[64];
	struct pdcp_frame_info info;
	const uint8_t truncated[] = {0x80, 0x00, 0x01, 0x08}; /* no room for inner type */
	const uint8_t control[] = {0x00, 0x00, 0x01, 0x08, 0x00, 0x45};
	const uint8_t length_type[] = {0x80, 0x00, 0x01, 0x00, 0x40, 0x45};
	const uint8_t nested[] = {0x80, 0x00, 0x01, 0x88, 0xB5, 0x45};
	const uint8_t empty[] = {0x80, 0x00, 0x01, 0x08, 0x00};

	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, truncated, 4), 18, &info),
		 PDCP_FRAME_TRUNCATED);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, truncated, 0), 18, &info),
		 PDCP_FRAME_TRUNCATED);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, truncated, 3), 12, &info),
		 PDCP_FRAME_TRUNCATED);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, control, 6), 18, &info),
		 PDCP_FRAME_CONTROL_PDU);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, length_type, 6), 18, &info),
		 PDCP_FRAME_BAD_INNER_TYPE);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, nested, 6), 18, &info),
		 PDCP_FRAME_BAD_INNER_TYPE);
	CHECK_EQ(pdcp_frame_parse(buf, frame(buf, PDCP_ETHERTYPE, empty, 5), 18, &info),
		 PDCP_FRAME_EMPTY_SDU);
	/* every malformed kind has its own stats key */
	CHECK(strcmp(pdcp_frame_kind_name(PDCP_FRAME_TRUNCATED), "truncated") == 0);
	CHECK(strcmp(pdcp_frame_kind_name(PDCP_FRAME_CONTROL_PDU), "control_pdu") == 0);
	CHECK(strcmp(pdcp_frame_kind_name(PDCP_FRAME_BAD_INNER_TYPE), "bad_inner_ethertype") == 0);
	CHECK(strcmp(pdcp_frame_kind_name(PDCP_FRAME_EMPTY_SDU), "empty_sdu") == 0);
}

/* ---- runner ------------------------------------------------------------------------- */

static const struct check_test tests[] = {
	TEST(test_in_order),
	TEST(test_reorder_within_timer),
	TEST(test_rx_reord_set_only_when_timer_starts),
	TEST(test_expiry_with_gap),
	TEST(test_expiry_consecutive_run_and_late_poll),
	TEST(test_expiry_due_before_arrival),
	TEST(test_duplicates),
	TEST(test_duplication_mode_stream),
	TEST(test_burst_loss),
	TEST(test_out_of_window),
	TEST(test_wrap_around_12bit),
	TEST(test_wrap_around_18bit),
	TEST(test_t_reordering_zero),
	TEST(test_flush),
	TEST(test_initial_count),
	TEST(test_create_rejects_bad_config),
	TEST(test_frame_data_18bit),
	TEST(test_frame_data_12bit),
	TEST(test_frame_passthrough),
	TEST(test_frame_malformed_reasons),
};

int main(void) { return check_run(tests, sizeof(tests) / sizeof(tests[0])); }

/* SPDX-License-Identifier: Apache-2.0
 *
 * 3GPP TS 38.323 section 5.2.2 receive operation. Comments quote the steps they implement.
 *
 * COUNT is kept in 64 bits (HFN not truncated): the 32-bit COUNT of the spec would wrap
 * after 2^32 PDUs, where a real bearer is re-keyed; an emulator may run longer.
 *
 * The ring has 2 * Window_Size slots indexed by COUNT mod 2 * Window_Size. Every COUNT a
 * received PDU can map to lies in [RX_DELIV - Window_Size, RX_DELIV + Window_Size), so a
 * slot names one COUNT unambiguously: the upper half holds the PDUs waiting for delivery,
 * the lower half remembers what was delivered, which tells a late duplicate (duplication
 * mode: the second copy arrives after the first was delivered) from a PDU that came too late.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pdcp_rx.h"

#define SLOT_STORED (UINT64_C(1) << 63) /* set in slot.tag while the PDU waits in the ring */

struct pdcp_rx_slot {
	uint64_t tag; /* COUNT + 1 of the last PDU accepted into this slot (0 = none) | STORED */
	void *pdu;
};

struct pdcp_rx {
	/* configuration */
	unsigned int sn_bits;
	uint32_t sn_mask;
	uint32_t window;    /* Window_Size = 2^(sn_bits - 1) */
	uint32_t ring_mask; /* 2 * Window_Size - 1 */
	uint64_t t_reordering_us;
	pdcp_rx_deliver_fn deliver;
	void *ctx;

	/* state variables of 38.323 section 7.1 */
	uint64_t rx_next;
	uint64_t rx_deliv;
	uint64_t rx_reord;
	bool timer_running;
	uint64_t timer_deadline_us;

	uint32_t buffered;
	struct pdcp_rx_stats stats;
	struct pdcp_rx_slot ring[];
};

static inline struct pdcp_rx_slot *slot_of(struct pdcp_rx *rx, uint64_t count)
{
	return &rx->ring[count & rx->ring_mask];
}

static inline bool stored(const struct pdcp_rx *rx, uint64_t count)
{
	return rx->ring[count & rx->ring_mask].tag == ((count + 1) | SLOT_STORED);
}

/* Hand the stored PDU with this COUNT to the upper layer; the slot keeps its COUNT. */
static void deliver_one(struct pdcp_rx *rx, uint64_t count, enum pdcp_rx_delivery how)
{
	struct pdcp_rx_slot *s = slot_of(rx, count);
	void *pdu = s->pdu;

	s->tag &= ~SLOT_STORED;
	s->pdu = NULL;
	rx->buffered--;
	if (how == PDCP_RX_IN_ORDER)
		rx->stats.delivered_in_order++;
	else
		rx->stats.delivered_reordered++;
	rx->deliver(rx->ctx, pdu, count, how);
}

/* Deliver the stored PDUs with consecutive COUNTs from `count`; return the first COUNT
 * not delivered. */
static uint64_t deliver_consecutive(struct pdcp_rx *rx, uint64_t count,
				    enum pdcp_rx_delivery first_how, enum pdcp_rx_delivery rest_how)
{
	enum pdcp_rx_delivery how = first_how;

	while (stored(rx, count)) {
		deliver_one(rx, count, how);
		how = rest_how;
		count++;
	}
	return count;
}

static void timer_start(struct pdcp_rx *rx, uint64_t at_us)
{
	rx->timer_running = true;
	rx->timer_deadline_us = at_us + rx->t_reordering_us;
}

/* 5.2.2.3 Actions when t-Reordering expires (at `at_us`, the moment it was due). */
static void t_reordering_expire(struct pdcp_rx *rx, uint64_t at_us)
{
	uint64_t count;

	rx->timer_running = false;
	rx->stats.t_reordering_expiries++;

	/* "deliver to upper layers in ascending order of the associated COUNT value:
	 *  - all stored PDCP SDU(s) with associated COUNT value(s) < RX_REORD;" */
	for (count = rx->rx_deliv; count < rx->rx_reord; count++) {
		if (stored(rx, count))
			deliver_one(rx, count, PDCP_RX_ON_EXPIRY);
		else
			rx->stats.skipped++;
	}
	/* " - all stored PDCP SDU(s) with consecutively associated COUNT value(s) starting
	 *    from RX_REORD;"
	 * "update RX_DELIV to the COUNT value of the first PDCP SDU which has not been
	 *  delivered to upper layers, with COUNT value >= RX_REORD;" */
	rx->rx_deliv = deliver_consecutive(rx, rx->rx_reord, PDCP_RX_ON_EXPIRY, PDCP_RX_ON_EXPIRY);

	/* "if RX_DELIV < RX_NEXT: update RX_REORD to RX_NEXT; start t-Reordering." */
	if (rx->rx_deliv < rx->rx_next) {
		rx->rx_reord = rx->rx_next;
		timer_start(rx, at_us);
	}
}

bool pdcp_rx_poll(struct pdcp_rx *rx, uint64_t now_us)
{
	bool fired = false;

	/* A restarted timer may itself be due already (a late poll, or t-Reordering = 0);
	 * each restart is timed from the moment the previous expiry was due. */
	while (rx->timer_running && rx->timer_deadline_us <= now_us) {
		t_reordering_expire(rx, rx->timer_deadline_us);
		fired = true;
	}
	return fired;
}

enum pdcp_rx_result pdcp_rx_receive(struct pdcp_rx *rx, uint32_t sn, void *pdu, uint64_t now_us)
{
	const int64_t window = rx->window;
	const int64_t deliv_sn = (int64_t)(rx->rx_deliv & rx->sn_mask);
	int64_t rcvd_hfn = (int64_t)(rx->rx_deliv >> rx->sn_bits);
	uint64_t rcvd_count;
	struct pdcp_rx_slot *s;

	pdcp_rx_poll(rx, now_us);
	rx->stats.received++;
	sn &= rx->sn_mask;

	/* 5.2.2.2 "determine the COUNT value of the received PDCP Data PDU":
	 * "if RCVD_SN < SN(RX_DELIV) - Window_Size: RCVD_HFN = HFN(RX_DELIV) + 1;
	 *  else if RCVD_SN >= SN(RX_DELIV) + Window_Size: RCVD_HFN = HFN(RX_DELIV) - 1;
	 *  else: RCVD_HFN = HFN(RX_DELIV);" */
	if ((int64_t)sn < deliv_sn - window)
		rcvd_hfn++;
	else if ((int64_t)sn >= deliv_sn + window)
		rcvd_hfn--;
	if (rcvd_hfn < 0) {
		/* Below COUNT 0: older than anything this entity can have delivered. */
		rx->stats.out_of_window++;
		return PDCP_RX_OUT_OF_WINDOW;
	}
	rcvd_count = ((uint64_t)rcvd_hfn << rx->sn_bits) | sn;

	/* "if RCVD_COUNT < RX_DELIV; or if the PDCP Data PDU with COUNT = RCVD_COUNT has
	 *  been received before: discard the PDCP Data PDU;" */
	s = slot_of(rx, rcvd_count);
	if ((s->tag & ~SLOT_STORED) == rcvd_count + 1) {
		rx->stats.duplicates++;
		return PDCP_RX_DUPLICATE;
	}
	if (rcvd_count < rx->rx_deliv) {
		rx->stats.out_of_window++;
		return PDCP_RX_OUT_OF_WINDOW;
	}

	/* "store the resulting PDCP SDU in the reception buffer;" */
	s->tag = (rcvd_count + 1) | SLOT_STORED;
	s->pdu = pdu;
	rx->buffered++;

	/* "if RCVD_COUNT >= RX_NEXT: update RX_NEXT to RCVD_COUNT + 1." */
	if (rcvd_count >= rx->rx_next)
		rx->rx_next = rcvd_count + 1;

	/* "if RCVD_COUNT = RX_DELIV: deliver to upper layers in ascending order of the
	 *  associated COUNT value all stored PDCP SDU(s) with consecutively associated COUNT
	 *  value(s) starting from COUNT = RX_DELIV; update RX_DELIV to the COUNT value of the
	 *  first PDCP SDU which has not been delivered to upper layers, with COUNT value >
	 *  current RX_DELIV;" */
	if (rcvd_count == rx->rx_deliv)
		rx->rx_deliv =
			deliver_consecutive(rx, rx->rx_deliv, PDCP_RX_IN_ORDER, PDCP_RX_REORDERED);

	/* "if t-Reordering is running, and if RX_DELIV >= RX_REORD: stop and reset
	 *  t-Reordering." */
	if (rx->timer_running && rx->rx_deliv >= rx->rx_reord)
		rx->timer_running = false;

	/* "if t-Reordering is not running (includes the case when t-Reordering is stopped
	 *  due to actions above), and RX_DELIV < RX_NEXT: update RX_REORD to RX_NEXT; start
	 *  t-Reordering." RX_REORD changes here only, never on other PDUs. */
	if (!rx->timer_running && rx->rx_deliv < rx->rx_next) {
		rx->rx_reord = rx->rx_next;
		timer_start(rx, now_us);
		if (rx->t_reordering_us == 0)
			pdcp_rx_poll(rx, now_us); /* a zero timer expires as it starts */
	}
	return PDCP_RX_ACCEPTED;
}

uint64_t pdcp_rx_flush(struct pdcp_rx *rx)
{
	uint64_t before = rx->stats.delivered_reordered;
	uint64_t count;

	for (count = rx->rx_deliv; count < rx->rx_next && rx->buffered > 0; count++) {
		if (stored(rx, count))
			deliver_one(rx, count, PDCP_RX_ON_FLUSH);
		else
			rx->stats.skipped++;
	}
	if (count < rx->rx_next)
		rx->stats.skipped += rx->rx_next - count;
	rx->rx_deliv = rx->rx_next;
	rx->timer_running = false;
	rx->stats.flushed += rx->stats.delivered_reordered - before;
	return rx->stats.delivered_reordered - before;
}

struct pdcp_rx *pdcp_rx_create(const struct pdcp_rx_config *cfg)
{
	struct pdcp_rx *rx;
	uint32_t window, slots;

	if (cfg == NULL || (cfg->sn_bits != 12 && cfg->sn_bits != 18) || cfg->deliver == NULL) {
		errno = EINVAL;
		return NULL;
	}
	window = UINT32_C(1) << (cfg->sn_bits - 1);
	slots = 2 * window;
	rx = calloc(1, sizeof(*rx) + (size_t)slots * sizeof(struct pdcp_rx_slot));
	if (rx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rx->sn_bits = cfg->sn_bits;
	rx->sn_mask = (UINT32_C(1) << cfg->sn_bits) - 1;
	rx->window = window;
	rx->ring_mask = slots - 1;
	rx->t_reordering_us = cfg->t_reordering_us;
	rx->deliver = cfg->deliver;
	rx->ctx = cfg->ctx;
	/* 7.1: RX_NEXT and RX_DELIV start at 0; RX_REORD has no value until the timer runs. */
	return rx;
}

int pdcp_rx_set_initial_count(struct pdcp_rx *rx, uint64_t count)
{
	if (rx->stats.received != 0)
		return -1;
	rx->rx_deliv = count;
	rx->rx_next = count;
	return 0;
}

void pdcp_rx_free(struct pdcp_rx *rx) { free(rx); }

uint64_t pdcp_rx_deliv(const struct pdcp_rx *rx) { return rx->rx_deliv; }
uint64_t pdcp_rx_next(const struct pdcp_rx *rx) { return rx->rx_next; }
uint64_t pdcp_rx_reord(const struct pdcp_rx *rx) { return rx->rx_reord; }
bool pdcp_rx_timer_running(const struct pdcp_rx *rx) { return rx->timer_running; }
uint64_t pdcp_rx_timer_deadline_us(const struct pdcp_rx *rx) { return rx->timer_deadline_us; }
uint32_t pdcp_rx_buffered(const struct pdcp_rx *rx) { return rx->buffered; }
bool pdcp_rx_is_stored(const struct pdcp_rx *rx, uint64_t count) { return stored(rx, count); }
uint32_t pdcp_rx_window_size(const struct pdcp_rx *rx) { return rx->window; }
const struct pdcp_rx_stats *pdcp_rx_get_stats(const struct pdcp_rx *rx) { return &rx->stats; }

/* SPDX-License-Identifier: Apache-2.0
 *
 * PDCP receive operation of 3GPP TS 38.323 section 5.2.2 (reordering, duplicate and
 * out-of-window discard, t-Reordering), without any DPDK dependency.
 *
 * The caller owns the clock (every call takes now_us) and the frame buffers (a PDU is an
 * opaque pointer, handed back through the delivery callback, never copied). Memory is fixed
 * at creation: a ring of 2 * Window_Size slots indexed by COUNT, no allocation per PDU.
 */
#ifndef PDCP_RX_H
#define PDCP_RX_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PDCP_RX_T_REORDERING_US_DEFAULT 200000u /* 200 ms */

/* How a PDU reached the upper layer. */
enum pdcp_rx_delivery {
	PDCP_RX_IN_ORDER,  /* delivered on its own arrival (it was RX_DELIV)   */
	PDCP_RX_REORDERED, /* waited in the buffer for a gap to fill           */
	PDCP_RX_ON_EXPIRY, /* released by t-Reordering expiry past a gap       */
	PDCP_RX_ON_FLUSH,  /* released by pdcp_rx_flush() (shutdown)           */
};

/* Outcome of pdcp_rx_receive(). On any discard the PDU is NOT delivered: the caller
 * keeps ownership and frees it. */
enum pdcp_rx_result {
	PDCP_RX_ACCEPTED,      /* stored and/or delivered: ownership passed to the core */
	PDCP_RX_DUPLICATE,     /* this COUNT was received before                       */
	PDCP_RX_OUT_OF_WINDOW, /* RCVD_COUNT < RX_DELIV and not a known duplicate      */
};

typedef void (*pdcp_rx_deliver_fn)(void *ctx, void *pdu, uint64_t count, enum pdcp_rx_delivery how);

struct pdcp_rx_config {
	unsigned int sn_bits;	  /* 12 or 18 */
	uint64_t t_reordering_us; /* 0: the timer expires as soon as it starts */
	pdcp_rx_deliver_fn deliver;
	void *ctx;
};

struct pdcp_rx_stats {
	uint64_t received; /* PDUs given to pdcp_rx_receive() */
	uint64_t delivered_in_order;
	uint64_t delivered_reordered; /* REORDERED + ON_EXPIRY + ON_FLUSH */
	uint64_t duplicates;
	uint64_t out_of_window;
	uint64_t t_reordering_expiries;
	uint64_t skipped; /* COUNTs given up on by an expiry or a flush (lost) */
	uint64_t flushed; /* delivered by pdcp_rx_flush() */
};

struct pdcp_rx;

/* Returns NULL with errno = EINVAL (bad sn_bits or no callback) or ENOMEM. */
struct pdcp_rx *pdcp_rx_create(const struct pdcp_rx_config *cfg);
void pdcp_rx_free(struct pdcp_rx *rx);

/* 5.2.2.2: a PDCP Data PDU with sequence number `sn` arrived at `now_us`. A timer expiry due
 * at or before now_us is served first (it happened before this arrival). */
enum pdcp_rx_result pdcp_rx_receive(struct pdcp_rx *rx, uint32_t sn, void *pdu, uint64_t now_us);

/* 5.2.2.3: serve t-Reordering if it has expired by now_us. Returns true if it fired.
 * Call it from the poll loop so expiries are served when no PDU arrives. */
bool pdcp_rx_poll(struct pdcp_rx *rx, uint64_t now_us);

/* Deliver every stored PDU in COUNT order (gaps skipped), stop the timer, and move
 * RX_DELIV to RX_NEXT. For shutdown. Returns how many were delivered. */
uint64_t pdcp_rx_flush(struct pdcp_rx *rx);

/* Start RX_DELIV and RX_NEXT at `count` instead of 0 (38.323 section 7.1). For an emulator
 * whose receiver starts after the sender: without it, a first SN at or beyond Window_Size
 * reads as HFN -1 and is discarded until the SN wraps. Only before the first PDU: returns -1
 * (and changes nothing) once a PDU was received. */
int pdcp_rx_set_initial_count(struct pdcp_rx *rx, uint64_t count);

/* State, for stats and tests. */
uint64_t pdcp_rx_deliv(const struct pdcp_rx *rx); /* RX_DELIV */
uint64_t pdcp_rx_next(const struct pdcp_rx *rx);  /* RX_NEXT  */
uint64_t pdcp_rx_reord(const struct pdcp_rx *rx); /* RX_REORD */
bool pdcp_rx_timer_running(const struct pdcp_rx *rx);
uint64_t pdcp_rx_timer_deadline_us(const struct pdcp_rx *rx);
uint32_t pdcp_rx_buffered(const struct pdcp_rx *rx);
bool pdcp_rx_is_stored(const struct pdcp_rx *rx, uint64_t count);
uint32_t pdcp_rx_window_size(const struct pdcp_rx *rx);
const struct pdcp_rx_stats *pdcp_rx_get_stats(const struct pdcp_rx *rx);

#ifdef __cplusplus
}
#endif

#endif /* PDCP_RX_H */

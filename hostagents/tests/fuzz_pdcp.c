/* SPDX-License-Identifier: Apache-2.0
 *
 * libFuzzer target: the frame parser and the receive path together, as the agent drives
 * them. Input: one config byte (SN length, t-Reordering, optional initial SN in two more
 * bytes), then records of [time step (2 bytes, 10 us units)]
 * [frame length (1 byte)][frame bytes]. Every accepted PDU is a heap copy that the
 * delivery callback frees, so ASan reports a PDU delivered twice or never (leak).
 * Invariants checked: COUNTs delivered strictly increasing, buffered <= Window_Size,
 * RX_DELIV <= RX_NEXT, nothing stored after a flush.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pdcp_frame.h"
#include "pdcp_rx.h"

struct fuzz_ctx {
	uint64_t delivered;
	uint64_t next_count;
};

static void deliver(void *ctx, void *pdu, uint64_t count, enum pdcp_rx_delivery how)
{
	struct fuzz_ctx *f = ctx;

	(void)how;
	if (f->delivered > 0 && count < f->next_count)
		abort(); /* out of order */
	f->next_count = count + 1;
	f->delivered++;
	free(pdu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_ctx f = {0};
	struct pdcp_rx_config cfg = {.deliver = deliver, .ctx = &f};
	struct pdcp_rx *rx;
	uint64_t now = 0;

	if (size < 1)
		return 0;
	cfg.sn_bits = (data[0] & 1) ? 12 : 18;
	static const uint64_t timers_us[4] = {0, 50, 1000, 200000};
	cfg.t_reordering_us = timers_us[(data[0] >> 1) & 3];
	data++;
	size--;

	rx = pdcp_rx_create(&cfg);
	if (rx == NULL)
		abort();
	/* config bit 3: start the window at an SN taken from the next two bytes */
	if ((data[-1] & 8) && size >= 2) {
		if (pdcp_rx_set_initial_count(rx, ((uint32_t)data[0] << 8 | data[1]) &
							  ((1u << cfg.sn_bits) - 1)) != 0)
			abort();
		data += 2;
		size -= 2;
	}
	while (size >= 3) {
		size_t len = data[2];
		struct pdcp_frame_info info;
		uint8_t *copy;

		now += (uint64_t)((data[0] << 8) | data[1]) * 10;
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		copy = malloc(len ? len : 1);
		if (copy == NULL)
			abort();
		memcpy(copy, data, len);
		data += len;
		size -= len;

		if (pdcp_frame_parse(copy, len, cfg.sn_bits, &info) == PDCP_FRAME_DATA) {
			if (info.strip_len + 14u > len || info.sn >= (1u << cfg.sn_bits))
				abort();
			pdcp_frame_strip(copy, &info);
			if (pdcp_rx_receive(rx, info.sn, copy, now) != PDCP_RX_ACCEPTED)
				free(copy);
		} else {
			free(copy);
		}
		pdcp_rx_poll(rx, now);
		if (pdcp_rx_buffered(rx) > pdcp_rx_window_size(rx) ||
		    pdcp_rx_deliv(rx) > pdcp_rx_next(rx))
			abort();
	}
	pdcp_rx_flush(rx);
	if (pdcp_rx_buffered(rx) != 0)
		abort();
	pdcp_rx_free(rx);
	return 0;
}

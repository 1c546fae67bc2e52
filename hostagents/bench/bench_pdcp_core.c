/* SPDX-License-Identifier: Apache-2.0
 *
 * Microbenchmark of the reordering core alone: PDUs per second through pdcp_rx_receive()
 * and delivery, for arrival patterns a DC client sees. Prints a table.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pdcp_rx.h"

#define BENCH_PDUS 20000000u

static uint64_t delivered;

static void count_delivery(void *ctx, void *pdu, uint64_t count, enum pdcp_rx_delivery how)
{
	(void)ctx;
	(void)pdu;
	(void)count;
	(void)how;
	delivered++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The n-th arrival's COUNT for each pattern. */
static uint64_t in_order(uint64_t i) { return i; }
static uint64_t pairs_swapped(uint64_t i) { return i ^ 1; }
/* DC split in batches of 16 per leg, leg B one batch behind leg A: batches arrive as
 * 0, 2, 1, 4, 3, 6, 5, ... (even batches on A, odd on B). */
static uint64_t two_legs(uint64_t i)
{
	uint64_t slot = i / 16, batch;

	batch = slot == 0 ? 0 : (slot % 2 ? slot + 1 : slot - 1);
	return batch * 16 + i % 16;
}

static void run(const char *name, unsigned int sn_bits, uint64_t (*pattern)(uint64_t))
{
	struct pdcp_rx *rx = pdcp_rx_create(&(struct pdcp_rx_config){
		.sn_bits = sn_bits, .t_reordering_us = 200000, .deliver = count_delivery});
	const uint32_t mask = (1u << sn_bits) - 1;
	double t0, dt;

	if (rx == NULL) {
		perror("pdcp_rx_create");
		return;
	}
	delivered = 0;
	t0 = now_s();
	for (uint64_t i = 0; i < BENCH_PDUS; i++)
		pdcp_rx_receive(rx, (uint32_t)(pattern(i) & mask), (void *)1, i / 1000);
	dt = now_s() - t0;
	printf("| %-34s | %6u | %10.1f | %7.1f | %10llu |\n", name, sn_bits, BENCH_PDUS / dt / 1e6,
	       dt * 1e9 / BENCH_PDUS, (unsigned long long)delivered);
	pdcp_rx_free(rx);
}

int main(void)
{
	printf("reordering core microbenchmark (%u PDUs per row, t-Reordering 200 ms)\n",
	       BENCH_PDUS);
	printf("| %-34s | %6s | %10s | %7s | %10s |\n", "arrival pattern", "SN", "Mpdu/s", "ns/pdu",
	       "delivered");
	printf("|------------------------------------|--------|------------|---------|------------|"
	       "\n");
	run("in order", 18, in_order);
	run("in order", 12, in_order);
	run("pairs swapped", 18, pairs_swapped);
	run("two legs, batches of 16, B late", 18, two_legs);
	run("two legs, batches of 16, B late", 12, two_legs);
	return 0;
}

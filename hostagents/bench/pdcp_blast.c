/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-blast: send PDCP-framed IPv4/UDP frames (DESIGN.md section 3) on an interface as
 * fast as possible, or paced, with AF_PACKET and sendmmsg (clib/pktio). For the pdcp-agent
 * benchmark.
 *
 *   pdcp-blast IFACE COUNT [PPS] [SN_BITS] [FIRST_COUNT]
 *
 * PPS 0 = unpaced. Prints one JSON line: {"sent": N, "seconds": S, "pps": R}.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "pktio.h"

#define BATCH 64
#define FRAME_LEN 128 /* Ethernet + PDCP + IPv4 + UDP + payload */

static double now_s(void) { return (double)pktio_clock_ns(CLOCK_MONOTONIC) / 1e9; }

static unsigned long parse_ul(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || s[0] == '-') {
		fprintf(stderr, "pdcp-blast: %s '%s' is not a non-negative integer\n", what, s);
		exit(2);
	}
	return v;
}

static void build_frame(uint8_t *f, uint64_t count, unsigned int sn_bits)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0x0c, 0x01, 0x02, 0, 0, 0, 0x0a, 0x01};
	uint32_t sn = (uint32_t)(count & ((1u << sn_bits) - 1));
	unsigned int h = 14;

	memset(f, 0, FRAME_LEN);
	memcpy(f, macs, 12);
	f[12] = 0x88;
	f[13] = 0xB5;
	if (sn_bits == 18) {
		f[h++] = 0x80 | (sn >> 16);
		f[h++] = (sn >> 8) & 0xFF;
	} else {
		f[h++] = 0x80 | (sn >> 8);
	}
	f[h++] = sn & 0xFF;
	f[h++] = 0x08; /* inner ethertype IPv4 */
	f[h++] = 0x00;
	/* IPv4 header (checksum left 0: nothing on the path checks it) + UDP */
	f[h] = 0x45;
	f[h + 2] = (FRAME_LEN - h) >> 8;
	f[h + 3] = (FRAME_LEN - h) & 0xFF;
	f[h + 8] = 64;
	f[h + 9] = 17;
	memcpy(f + h + 12, (uint8_t[]){10, 9, 0, 1, 10, 9, 0, 2}, 8);
	f[h + 20] = 0x9c;
	f[h + 22] = 0x13;
	f[h + 23] = 0x88;
	f[h + 24] = (FRAME_LEN - h - 20) >> 8;
	f[h + 25] = (FRAME_LEN - h - 20) & 0xFF;
	memcpy(f + h + 28, &count, sizeof(count));
}

int main(int argc, char **argv)
{
	static uint8_t frames[BATCH][FRAME_LEN];
	static struct pktio_batch b;
	unsigned long total, pps = 0, sn_bits = 18, first = 0, sent = 0;
	double t0, dt;
	int fd;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: pdcp-blast IFACE COUNT [PPS] [SN_BITS] [FIRST_COUNT]\n");
		return 2;
	}
	total = parse_ul(argv[2], "COUNT");
	if (argc > 3)
		pps = parse_ul(argv[3], "PPS");
	if (argc > 4)
		sn_bits = parse_ul(argv[4], "SN_BITS");
	if (argc > 5)
		first = parse_ul(argv[5], "FIRST_COUNT");
	if (sn_bits != 12 && sn_bits != 18) {
		fprintf(stderr, "pdcp-blast: SN_BITS must be 12 or 18\n");
		return 2;
	}
	/* Protocol 0, socket and binding: send only, no receive queue to fill. */
	fd = pktio_socket(0, 0);
	int bound = fd < 0 ? fd : pktio_bind(fd, argv[1], 0);
	if (bound == -ENODEV) {
		fprintf(stderr, "pdcp-blast: no interface '%s'\n", argv[1]);
		return 1;
	}
	if (bound < 0) {
		fprintf(stderr, "pdcp-blast: AF_PACKET socket: %s\n", strerror(-bound));
		return 1;
	}
	for (int i = 0; i < BATCH; i++)
		pktio_batch_set(&b, i, frames[i], FRAME_LEN);
	t0 = now_s();
	while (sent < total) {
		unsigned int n = total - sent < BATCH ? (unsigned int)(total - sent) : BATCH;
		int r;

		for (unsigned int i = 0; i < n; i++)
			build_frame(frames[i], first + sent + i, (unsigned int)sn_bits);
		r = pktio_batch_send(fd, &b, 0, n, 0);
		if (r < 0) {
			if (r == -ENOBUFS || r == -EAGAIN)
				continue;
			fprintf(stderr, "pdcp-blast: sendmmsg: %s\n", strerror(-r));
			return 1;
		}
		sent += (unsigned long)r;
		if (pps) /* pace: never ahead of the schedule */
			while (now_s() - t0 < (double)sent / (double)pps)
				;
	}
	dt = now_s() - t0;
	printf("{\"sent\": %lu, \"seconds\": %.6f, \"pps\": %.0f}\n", sent, dt, sent / dt);
	return 0;
}

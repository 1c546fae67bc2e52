/* SPDX-License-Identifier: Apache-2.0
 *
 * rawfwd: forwards every frame between two interfaces and does nothing else, the machine's
 * own limit for an AF_PACKET hop (`make bench-testbed` chains three of them where the
 * testbed has the switch, a link emulator and the agent).
 *
 *   rawfwd IF_A IF_B       frames from IF_A leave on IF_B and back; SIGTERM/SIGINT end it
 *                          and print {"frames": N, "wakeups": W} on stdout
 *
 * One thread: a burst of ready ring frames per interface is sent out of the other one in one
 * sendmmsg straight from the receive ring (no copy in user space), then released; with every
 * ring empty the thread blocks in poll(), so an idle forwarder costs nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "pktio.h"

#define FRAME_SIZE 4096u /* holds a 1600-byte leg frame with the ring's headers */
#define BLOCK_SIZE (1u << 20)
#define BLOCK_NR 8u
#define BURST 64u

struct side {
	int fd;
	struct pktio_ring ring;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig) { stop = sig; }

static void die(const char *what, const char *ifname, int err)
{
	fprintf(stderr, "rawfwd: %s %s: %s\n", what, ifname, strerror(-err));
	exit(1);
}

static void open_side(struct side *s, const char *ifname)
{
	int one = 1, err;

	s->fd = pktio_socket(0);
	if (s->fd < 0)
		die("socket for", ifname, s->fd);
	setsockopt(s->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
	setsockopt(s->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
	err = pktio_ring_setup(s->fd, &s->ring, FRAME_SIZE, BLOCK_SIZE, BLOCK_NR);
	if (err < 0)
		die("receive ring on", ifname, err);
	err = pktio_bind(s->fd, ifname, ETH_P_ALL);
	if (err < 0)
		die("bind to", ifname, err);
}

/* One burst from `in` out of `out`; the frames forwarded (dropped ones count too). */
static unsigned forward(struct side *in, struct side *out)
{
	static struct pktio_batch b;
	struct tpacket2_hdr *hs[BURST];
	unsigned n = pktio_ring_burst(&in->ring, hs, BURST), sent = 0;

	for (unsigned i = 0; i < n; i++)
		pktio_batch_set(&b, i, (void *)pktio_ring_frame(hs[i]), hs[i]->tp_snaplen);
	while (sent < n) {
		int r = pktio_batch_send(out->fd, &b, sent, n - sent, 0);
		if (r == -EINTR)
			continue;
		sent += r > 0 ? (unsigned)r : 1; /* a refused frame is dropped, as a wire would */
	}
	pktio_ring_release_burst(&in->ring, hs, n);
	return n;
}

int main(int argc, char **argv)
{
	struct side s[2];
	unsigned long long frames = 0, wakeups = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: rawfwd IF_A IF_B\n");
		return 2;
	}
	open_side(&s[0], argv[1]);
	open_side(&s[1], argv[2]);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("rawfwd: forwarding %s <-> %s\n", argv[1], argv[2]);
	fflush(stdout);
	int fds[2] = {s[0].fd, s[1].fd};
	while (!stop) {
		unsigned n = forward(&s[0], &s[1]) + forward(&s[1], &s[0]);
		frames += n;
		if (n == 0) {
			wakeups++;
			pktio_wait_readable(fds, 2, 200);
		}
	}
	printf("{\"frames\": %llu, \"wakeups\": %llu}\n", frames, wakeups);
	return 0;
}

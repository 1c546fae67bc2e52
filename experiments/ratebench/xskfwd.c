/* SPDX-License-Identifier: Apache-2.0
 *
 * xskfwd: rawfwd's twin on AF_XDP. Forwards every frame between two interfaces and does
 * nothing else, so the raw-limit bench (experiments/ratebench/iopaths.py) can set the
 * kernel's AF_XDP path against its AF_PACKET one through the same veths.
 *
 *   xskfwd IF_A IF_B       frames from IF_A leave on IF_B and back; SIGTERM/SIGINT end it
 *                          and print {"frames": N, "wakeups": W, "dropped": D} on stdout
 *
 * One AF_XDP socket per interface (queue 0), both on one UMEM, so a received frame is sent
 * from where the kernel wrote it: its descriptor moves from one socket's RX ring to the
 * other's TX ring, and the frame returns to its receiving side's fill ring once sent. XDP
 * runs in the driver (veth's native mode, required); libxdp loads its default program that
 * redirects queue 0 to the socket. The kernel picks zero-copy if the driver offers it and
 * copies otherwise (veth: copy); the start line names both modes. With every RX ring empty
 * the thread blocks in poll(), as rawfwd does, so an idle forwarder costs nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "pktio.h"
#include "pktio_xsk.h"

#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE	   /* 4096: a 1600-byte leg frame and headroom */
#define RING_SIZE XSK_RING_PROD__DEFAULT_NUM_DESCS /* 2048 */
#define NUM_FRAMES (2 * RING_SIZE)		   /* each side's fill ring holds half */
#define BURST 32u /* the kernel's copy-mode transmit sends at most 32 frames per kick */
#define KICK_TRIES 8

struct side {
	const char *ifname;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx, comp;
	struct xsk_ring_prod tx, fill;
	int unsent; /* the last kick left frames in the TX ring */
};

static volatile sig_atomic_t stop;
static unsigned long long dropped;

static void on_signal(int sig) { stop = sig; }

static void die(const char *what, const char *ifname, int err)
{
	fprintf(stderr, "xskfwd: %s %s: %s\n", what, ifname, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Hand `n` frames back to `s`'s fill ring (its own frames: it has room for all of them). */
static void refill(struct side *s, const __u64 *addrs, unsigned n)
{
	__u32 idx;

	if (n == 0)
		return;
	while (xsk_ring_prod__reserve(&s->fill, n, &idx) != n)
		; /* cannot happen: a side never owns more frames than its fill ring holds */
	for (unsigned i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = addrs[i] & ~(__u64)(FRAME_SIZE - 1);
	xsk_ring_prod__submit(&s->fill, n);
}

/* Frames `out` has sent (its completion ring) go back to `in`, the side they came from. */
static void reclaim(struct side *out, struct side *in)
{
	__u64 addrs[RING_SIZE];
	__u32 idx, n = xsk_ring_cons__peek(&out->comp, RING_SIZE, &idx);

	for (__u32 i = 0; i < n; i++)
		addrs[i] = *xsk_ring_cons__comp_addr(&out->comp, idx + i);
	xsk_ring_cons__release(&out->comp, n);
	refill(in, addrs, n);
}

/* Copy mode sends in the sendto() call, at most BURST frames each (-EAGAIN: more left). A
 * frame the wire refuses stays in the TX ring: `unsent` has the loop kick again later. */
static void kick(struct side *out)
{
	int fd = xsk_socket__fd(out->xsk);

	out->unsent = 0;
	for (int i = 0; i < KICK_TRIES; i++) {
		if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return;
		if (errno != EAGAIN && errno != EBUSY && errno != EINTR)
			break; /* ENOBUFS, ENXIO: the wire is busy or down */
	}
	out->unsent = 1;
}

/* One burst from `in`'s RX ring into `out`'s TX ring; the frames taken (dropped ones too). */
static unsigned forward(struct side *in, struct side *out)
{
	__u32 rx_idx, tx_idx, n = xsk_ring_cons__peek(&in->rx, BURST, &rx_idx);

	if (n == 0)
		return 0;
	reclaim(out, in);
	if (xsk_ring_prod__reserve(&out->tx, n, &tx_idx) == n) {
		for (__u32 i = 0; i < n; i++)
			*xsk_ring_prod__tx_desc(&out->tx, tx_idx + i) =
				*xsk_ring_cons__rx_desc(&in->rx, rx_idx + i);
		xsk_ring_prod__submit(&out->tx, n);
	} else { /* TX ring full: these frames are dropped, as a full queue would */
		__u64 addrs[BURST];
		for (__u32 i = 0; i < n; i++)
			addrs[i] = xsk_ring_cons__rx_desc(&in->rx, rx_idx + i)->addr;
		refill(in, addrs, n);
		dropped += n;
	}
	xsk_ring_cons__release(&in->rx, n);
	kick(out);
	return n;
}

static void open_side(struct side *s, struct xsk_umem *umem, int first)
{
	struct xsk_socket_config cfg = {
		.rx_size = RING_SIZE,
		.tx_size = RING_SIZE,
		.xdp_flags = XDP_FLAGS_DRV_MODE, /* XDP in the driver, never the generic hook */
	};
	int err;

	if (first) /* the UMEM's own fill and completion rings */
		err = xsk_socket__create(&s->xsk, s->ifname, 0, umem, &s->rx, &s->tx, &cfg);
	else
		err = xsk_socket__create_shared(&s->xsk, s->ifname, 0, umem, &s->rx, &s->tx,
						&s->fill, &s->comp, &cfg);
	if (err == -EOPNOTSUPP) {
		fprintf(stderr, "xskfwd: %s: no XDP in its driver (veth has it)\n", s->ifname);
		exit(1);
	}
	if (err)
		die("AF_XDP socket on", s->ifname, err);
}

int main(int argc, char **argv)
{
	struct side s[2] = {0};
	struct xsk_umem *umem;
	unsigned long long frames = 0, wakeups = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: xskfwd IF_A IF_B\n");
		return 2;
	}
	s[0].ifname = argv[1], s[1].ifname = argv[2];
	for (int k = 0; k < 2; k++) {
		if (strlen(s[k].ifname) >= IFNAMSIZ || !if_nametoindex(s[k].ifname)) {
			fprintf(stderr, "xskfwd: %s: no such interface here\n", s[k].ifname);
			return 1;
		}
	}
	pktio_xsk_quiet();
	size_t umem_len = (size_t)NUM_FRAMES * FRAME_SIZE;
	void *area =
		mmap(NULL, umem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		die("memory for", "the UMEM", errno);
	int err = xsk_umem__create(&umem, area, umem_len, &s[0].fill, &s[0].comp, NULL);
	if (err)
		die("UMEM for", s[0].ifname, err);
	open_side(&s[0], umem, 1);
	open_side(&s[1], umem, 0);
	__u64 addrs[RING_SIZE];
	for (int k = 0; k < 2; k++) { /* side k owns frames [k * RING_SIZE, (k + 1) * RING_SIZE) */
		for (unsigned i = 0; i < RING_SIZE; i++)
			addrs[i] = (__u64)(k * RING_SIZE + i) * FRAME_SIZE;
		refill(&s[k], addrs, RING_SIZE);
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("xskfwd: forwarding %s <-> %s (XDP in the driver, %s mode)\n", argv[1], argv[2],
	       pktio_xsk_fd_mode(xsk_socket__fd(s[0].xsk)));
	fflush(stdout);
	int fds[2] = {xsk_socket__fd(s[0].xsk), xsk_socket__fd(s[1].xsk)};
	while (!stop) {
		unsigned n = forward(&s[0], &s[1]) + forward(&s[1], &s[0]);
		frames += n;
		if (n == 0) {
			for (int k = 0; k < 2; k++) {
				if (s[k].unsent)
					kick(&s[k]);
			}
			wakeups++;
			pktio_wait_readable(fds, 2, 200);
		}
	}
	printf("{\"frames\": %llu, \"wakeups\": %llu, \"dropped\": %llu}\n", frames, wakeups,
	       dropped);
	xsk_socket__delete(s[1].xsk);
	xsk_socket__delete(s[0].xsk);
	xsk_umem__delete(umem);
	return 0;
}

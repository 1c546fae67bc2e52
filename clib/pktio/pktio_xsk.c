/* SPDX-License-Identifier: Apache-2.0
 *
 * pktio_xsk: an AF_XDP socket per interface (see pktio_xsk.h).
 *
 * The UMEM's first half belongs to the kernel's receive side (its fill ring holds each frame
 * not yet written), the second half to sending (a stack of free frames; the completion ring
 * returns each one the kernel has sent). A side never owns more frames than its ring holds,
 * so handing frames back can always reserve room.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "pktio_xsk.h"

/* 4096 frames each way, as linkem's AF_PACKET ring and the agent's leg rings in the testbed:
 * about 50 ms of 1,500-byte frames at 1 Gbit/s while the reader is descheduled */
#define RING_SIZE 4096
#define NUM_FRAMES (2 * RING_SIZE)
#define KICK_TRIES 64 /* sendto calls per flush: copy mode sends 32 frames per call */

struct pktio_xsk {
	struct xsk_socket *xsk;
	struct xsk_umem *umem;
	uint8_t *area;
	struct xsk_ring_cons rx, comp;
	struct xsk_ring_prod tx, fill;
	uint32_t taken, taken_idx; /* the last burst: its RX ring entries */
	uint32_t nfree;		   /* free transmit frames, on free[] */
	uint32_t queued;	   /* reserved in the TX ring, not yet submitted */
	uint32_t queued_idx;
	uint32_t unsent; /* submitted, not yet sent when the last kick gave up */
	uint64_t free[RING_SIZE];
};

static int quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static int quiet_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

void pktio_xsk_quiet(void)
{
	libxdp_set_print(quiet_xdp);
	libbpf_set_print(quiet_bpf);
}

int pktio_xsk_open(struct pktio_xsk **out, const char *ifname)
{
	struct xsk_socket_config cfg = {
		.rx_size = RING_SIZE,
		.tx_size = RING_SIZE,
		.xdp_flags = XDP_FLAGS_DRV_MODE, /* XDP in the driver, never the generic hook */
	};
	size_t len = (size_t)NUM_FRAMES * PKTIO_XSK_FRAME_BYTES;
	struct pktio_xsk *x;
	uint32_t idx;
	int err;

	if (strlen(ifname) >= IFNAMSIZ || !if_nametoindex(ifname))
		return -ENODEV;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		err = -errno;
		free(x);
		return err;
	}
	pktio_xsk_quiet();
	const struct xsk_umem_config umem_cfg = {
		.fill_size = RING_SIZE,
		.comp_size = RING_SIZE,
		.frame_size = PKTIO_XSK_FRAME_BYTES,
	};
	err = xsk_umem__create(&x->umem, x->area, len, &x->fill, &x->comp, &umem_cfg);
	if (!err)
		err = xsk_socket__create(&x->xsk, ifname, 0, x->umem, &x->rx, &x->tx, &cfg);
	if (err) {
		if (x->umem)
			xsk_umem__delete(x->umem);
		munmap(x->area, len);
		free(x);
		return err < 0 ? err : -err;
	}
	/* frames [0, RING_SIZE) wait in the fill ring; [RING_SIZE, NUM_FRAMES) are for sending */
	if (xsk_ring_prod__reserve(&x->fill, RING_SIZE, &idx) == RING_SIZE) {
		for (uint32_t i = 0; i < RING_SIZE; i++)
			*xsk_ring_prod__fill_addr(&x->fill, idx + i) =
				(uint64_t)i * PKTIO_XSK_FRAME_BYTES;
		xsk_ring_prod__submit(&x->fill, RING_SIZE);
	}
	for (uint32_t i = 0; i < RING_SIZE; i++)
		x->free[x->nfree++] = (uint64_t)(RING_SIZE + i) * PKTIO_XSK_FRAME_BYTES;
	*out = x;
	return 0;
}

int pktio_xsk_fd(const struct pktio_xsk *x) { return xsk_socket__fd(x->xsk); }

const char *pktio_xsk_fd_mode(int fd)
{
	struct xdp_options opts = {0};
	socklen_t len = sizeof(opts);

	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		return "unknown";
	return opts.flags & XDP_OPTIONS_ZEROCOPY ? "zero-copy" : "copy";
}

const char *pktio_xsk_mode(const struct pktio_xsk *x)
{
	return pktio_xsk_fd_mode(xsk_socket__fd(x->xsk));
}

unsigned pktio_xsk_burst(struct pktio_xsk *x, struct pktio_xsk_frame *f, unsigned max)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&x->rx, max, &idx);

	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
		f[i].data = xsk_umem__get_data(x->area, d->addr);
		f[i].len = d->len;
	}
	x->taken = n, x->taken_idx = idx;
	return n;
}

void pktio_xsk_release(struct pktio_xsk *x)
{
	uint32_t idx, n = x->taken;

	if (n == 0)
		return;
	/* cannot fall short: the receive side owns RING_SIZE frames, the fill ring's size */
	while (xsk_ring_prod__reserve(&x->fill, n, &idx) != n)
		;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = xsk_ring_cons__rx_desc(&x->rx, x->taken_idx + i)->addr;
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) =
			addr & ~(uint64_t)(PKTIO_XSK_FRAME_BYTES - 1);
	}
	xsk_ring_prod__submit(&x->fill, n);
	xsk_ring_cons__release(&x->rx, n);
	x->taken = 0;
}

uint64_t pktio_xsk_rx_drops(const struct pktio_xsk *x)
{
	struct xdp_statistics st = {0};
	socklen_t len = sizeof(st);

	if (getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_STATISTICS, &st, &len))
		return 0;
	return st.rx_dropped + st.rx_ring_full + st.rx_fill_ring_empty_descs;
}

/* Frames the kernel has sent go back on the free stack. */
static void reclaim(struct pktio_xsk *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->comp, RING_SIZE, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free[x->nfree++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	xsk_ring_cons__release(&x->comp, n);
}

int pktio_xsk_queue(struct pktio_xsk *x, const void *frame, uint32_t len)
{
	uint32_t idx;

	if (len > PKTIO_XSK_MAX_FRAME)
		return -EMSGSIZE;
	if (x->nfree == 0)
		reclaim(x);
	if (x->nfree == 0 || xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1)
		return -EAGAIN;
	if (x->queued == 0)
		x->queued_idx = idx;
	uint64_t addr = x->free[--x->nfree];
	memcpy(xsk_umem__get_data(x->area, addr), frame, len);
	*xsk_ring_prod__tx_desc(&x->tx, idx) = (struct xdp_desc){.addr = addr, .len = len};
	x->queued++;
	return 0;
}

int pktio_xsk_flush(struct pktio_xsk *x)
{
	int fd = xsk_socket__fd(x->xsk);

	if (x->queued) {
		xsk_ring_prod__submit(&x->tx, x->queued);
		x->unsent += x->queued;
		x->queued = 0;
	}
	if (x->unsent == 0)
		return 0;
	for (int i = 0; i < KICK_TRIES; i++) {
		if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
			x->unsent = 0; /* the kernel sent every frame of the TX ring */
			reclaim(x);
			return 0;
		}
		if (errno != EAGAIN && errno != EINTR)
			break; /* EBUSY, ENOBUFS: the interface's queue is full; ENETDOWN, ENXIO */
	}
	int err = -errno;
	reclaim(x);
	if (err != -EAGAIN && err != -EBUSY && err != -ENOBUFS)
		x->unsent = 0; /* down or gone: no point retrying until more frames come */
	return err == -EAGAIN ? -EBUSY : err;
}

unsigned pktio_xsk_unsent(const struct pktio_xsk *x) { return x->unsent; }

void pktio_xsk_close(struct pktio_xsk *x)
{
	if (!x)
		return;
	xsk_socket__delete(x->xsk);
	xsk_umem__delete(x->umem);
	munmap(x->area, (size_t)NUM_FRAMES * PKTIO_XSK_FRAME_BYTES);
	free(x);
}

const char *pktio_xsk_strerror(int err, const char *ifname, char *buf, unsigned size)
{
	const char *why = "";

	switch (-err) {
	case ENODEV:
		why = ": no such interface in this network namespace (see `ip link`)";
		break;
	case EOPNOTSUPP:
		why = ": its driver has no XDP (veth has)";
		break;
	case ERANGE:
		why = ": the driver refused XDP (veth: its peer's MTU leaves no room for XDP's "
		      "headroom; keep MTUs at most 3,500)";
		break;
	case EPERM:
		why = " (AF_XDP needs root: CAP_NET_ADMIN and CAP_BPF)";
		break;
	}
	snprintf(buf, size, "AF_XDP socket on %s: %s%s", ifname, strerror(err < 0 ? -err : err),
		 why);
	return buf;
}

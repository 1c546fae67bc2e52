/* SPDX-License-Identifier: Apache-2.0
 *
 * pktio: the AF_PACKET pieces every C part of the project needs, written once. p4sim's native
 * engine (p4sim/native/io.c) and linkem receive through a TPACKET_V2 ring; they and the frame
 * generator (clib/pktgen) open and bind their sockets and send batches of frames with
 * sendmmsg through it. Functions return 0 (or a count, or a descriptor) on success and
 * -errno on failure; what to say about a failure is the caller's.
 *
 * Built once as build/clib/libpktio.a (clib/part.mk); p4sim compiles pktio.c with its
 * generated C at run time (p4sim/native/build.py).
 */
#ifndef PKTIO_H
#define PKTIO_H

#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/if_packet.h>

#define PKTIO_BATCH_MAX 256 /* frames per sendmmsg call */

/* ---- time ------------------------------------------------------------------------------ */

/* `clock` (CLOCK_MONOTONIC, CLOCK_REALTIME) in nanoseconds. */
uint64_t pktio_clock_ns(clockid_t clock);

/* Sleep until CLOCK_MONOTONIC reads `mono_ns` (restarted after signals). */
void pktio_sleep_until_ns(uint64_t mono_ns);

/* ---- sockets --------------------------------------------------------------------------- */

/* A raw AF_PACKET socket that receives nothing until pktio_bind names its interface and
 * protocol: opened for ETH_P_ALL it would queue every interface's frames until the bind.
 * `type_flags` are OR-ed into SOCK_RAW (SOCK_NONBLOCK, SOCK_CLOEXEC). Descriptor or -errno. */
int pktio_socket(int type_flags);

/* Bind `fd` to interface `ifname` for `protocol` (host order: ETH_P_ALL to receive, 0 to send
 * only); its ifindex, or -ENODEV when there is no such interface here, or bind's -errno. */
int pktio_bind(int fd, const char *ifname, uint16_t protocol);

/* ---- sending --------------------------------------------------------------------------- */

/* Up to PKTIO_BATCH_MAX frames for one sendmmsg call: set each frame with pktio_batch_set,
 * send frames [first, first + n) with pktio_batch_send. */
struct pktio_batch {
	struct mmsghdr msgs[PKTIO_BATCH_MAX];
	struct iovec iov[PKTIO_BATCH_MAX];
};

void pktio_batch_set(struct pktio_batch *b, unsigned i, void *frame, uint32_t len);

/* sendmmsg of n frames from `first` on with `flags` (MSG_DONTWAIT); frames sent, or -errno
 * (-ENOBUFS, -EAGAIN: the interface's queue is full; -EINTR: try again). */
int pktio_batch_send(int fd, struct pktio_batch *b, unsigned first, unsigned n, int flags);

/* ---- the receive ring ------------------------------------------------------------------ */

/* A TPACKET_V2 receive ring: the kernel copies each frame into the next slot in its receive
 * softirq and hands it over by its status word; the reader needs no system call per frame.
 * (TPACKET_V3 would hand over whole blocks, holding a lone frame back until a timeout.) */
struct pktio_ring {
	uint8_t *map;
	size_t map_len;
	uint32_t frame_size, frame_nr, cur;
};

/* Turn `fd` into a TPACKET_V2 ring of `block_nr` blocks of `block_size` bytes, each cut into
 * slots of `frame_size` bytes (a power of two, at most block_size), and map it. 0 or -errno. */
int pktio_ring_setup(int fd, struct pktio_ring *r, uint32_t frame_size, uint32_t block_size,
		     uint32_t block_nr);

/* The next frame the kernel has handed over, or NULL; give it back with pktio_ring_release.
 * The frame's bytes start at pktio_ring_frame(h); h->tp_snaplen of its h->tp_len were copied. */
static inline struct tpacket2_hdr *pktio_ring_next(struct pktio_ring *r)
{
	struct tpacket2_hdr *h = (void *)(r->map + (size_t)r->cur * r->frame_size);
	return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER ? h : NULL;
}

static inline const uint8_t *pktio_ring_frame(const struct tpacket2_hdr *h)
{
	return (const uint8_t *)h + h->tp_mac;
}

/* The link-layer address of the frame (sll_pkttype: PACKET_OUTGOING for our own frames). */
static inline const struct sockaddr_ll *pktio_ring_addr(const struct tpacket2_hdr *h)
{
	return (const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof *h));
}

/* Hand frame `h` (the one pktio_ring_next returned) back to the kernel; move to the next. */
static inline void pktio_ring_release(struct pktio_ring *r, struct tpacket2_hdr *h)
{
	__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	r->cur = (r->cur + 1) % r->frame_nr;
}

void pktio_ring_unmap(struct pktio_ring *r);

/* ---- ring bursts (one wakeup, one sendmmsg per batch) ---------------------------------- */

/* Up to `max` consecutive frames the kernel has handed over, from the reader's position on,
 * into hs[] (not yet released: their bytes can be sent straight from the ring); the count. */
unsigned pktio_ring_burst(struct pktio_ring *r, struct tpacket2_hdr **hs, unsigned max);

/* Hand the `n` frames of the last pktio_ring_burst back to the kernel, in order. */
void pktio_ring_release_burst(struct pktio_ring *r, struct tpacket2_hdr **hs, unsigned n);

/* Wait until one of `n` descriptors is readable, for at most `timeout_ms` (-1: no limit):
 * the blocking wait of a reader whose rings are empty. 1 readable, 0 timeout, -errno. */
int pktio_wait_readable(const int *fds, unsigned n, int timeout_ms);

#endif /* PKTIO_H */

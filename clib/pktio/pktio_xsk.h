/* SPDX-License-Identifier: Apache-2.0
 *
 * pktio_xsk: the AF_XDP side of pktio, for a part that reads and writes an interface through
 * an AF_XDP socket instead of a packet socket (linkem --io afxdp, p4sim's native switch
 * --io afxdp). One socket on queue 0 of the interface, with a UMEM of its own: received
 * frames are read where the kernel wrote them and handed back with pktio_xsk_release; sent
 * frames are copied into the UMEM's transmit half. XDP runs in the driver (veth's native
 * mode: the generic hook would add a copy, not save one); libxdp loads its default program,
 * which redirects queue 0 to the socket. On veth the kernel binds in copy mode.
 *
 * Same conventions as pktio.h: 0 (or a count) on success, -errno on failure, and what to say
 * about a failure is the caller's (pktio_xsk_strerror adds what the errno means here).
 * Built into build/clib/libpktio.a; a part that uses it links libxdp and libbpf as well
 * (PKTIO_XSK_LIBS in clib/pktio/part.mk).
 */
#ifndef PKTIO_XSK_H
#define PKTIO_XSK_H

#include <stdint.h>

struct pktio_xsk; /* opaque: the socket, its UMEM and rings */

#define PKTIO_XSK_FRAME_BYTES 4096 /* a UMEM frame; 8,192 of them (32 MiB, pinned) per socket */
/* The largest frame a UMEM frame carries: the kernel writes a received frame after XDP's
 * 256 bytes of headroom (XDP_PACKET_HEADROOM). veth itself refuses XDP below that, when its
 * peer's MTU leaves no room for the headroom in a page (-ERANGE at open). */
#define PKTIO_XSK_MAX_FRAME (PKTIO_XSK_FRAME_BYTES - 256)

/* Open an AF_XDP socket on queue 0 of `ifname` (in this network namespace) and attach
 * libxdp's redirect program to it in the driver. `*out` or -errno: -ENODEV no such
 * interface, -EOPNOTSUPP no XDP in its driver, -ERANGE its peer's MTU leaves no room for
 * XDP (veth), -EPERM not root (CAP_NET_ADMIN, CAP_BPF). Quiet: this turns libbpf's and
 * libxdp's narration off for the process (pktio_xsk never prints). */
int pktio_xsk_open(struct pktio_xsk **out, const char *ifname);

/* The socket's descriptor: poll() says POLLIN while its RX ring holds a frame. */
int pktio_xsk_fd(const struct pktio_xsk *x);

/* "copy" or "zero-copy": how the kernel bound the socket. pktio_xsk_fd_mode: the same for
 * any AF_XDP socket's descriptor (one its caller made with libxdp itself). */
const char *pktio_xsk_mode(const struct pktio_xsk *x);
const char *pktio_xsk_fd_mode(int fd);

/* Turn libbpf's and libxdp's narration off for the process (loading in a namespace without
 * bpffs tells a story of fallbacks on every socket); failures still come back as codes. */
void pktio_xsk_quiet(void);

/* ---- receiving ------------------------------------------------------------------------- */

struct pktio_xsk_frame {
	const uint8_t *data; /* in the UMEM: valid until pktio_xsk_release */
	uint32_t len;
};

/* Up to `max` received frames, in order, into f[]; the count. Hand them back with
 * pktio_xsk_release before the next burst. */
unsigned pktio_xsk_burst(struct pktio_xsk *x, struct pktio_xsk_frame *f, unsigned max);

/* Give the frames of the last burst back to the kernel (its fill ring). */
void pktio_xsk_release(struct pktio_xsk *x);

/* Frames the kernel could not deliver to the socket (its RX ring or fill ring was empty or
 * full: XDP_STATISTICS' rx_dropped + rx_ring_full + rx_fill_ring_empty_descs), since open. */
uint64_t pktio_xsk_rx_drops(const struct pktio_xsk *x);

/* ---- sending --------------------------------------------------------------------------- */

/* Copy `len` bytes of `frame` into a free transmit frame and queue it (sent at the next
 * pktio_xsk_flush). 0; -EAGAIN when every transmit frame is in flight (the interface is not
 * keeping up: flush, or count the frame lost); -EMSGSIZE above PKTIO_XSK_MAX_FRAME. */
int pktio_xsk_queue(struct pktio_xsk *x, const void *frame, uint32_t len);

/* Hand the queued frames to the kernel and have it send them (copy mode sends in the
 * sendto call, a few dozen frames per call: this calls it until they are out or the
 * interface pushes back). 0, or -errno (-ENOBUFS, -EBUSY: the interface's queue is full,
 * the rest go at the next flush; -ENETDOWN, -ENXIO: the interface is down or gone). */
int pktio_xsk_flush(struct pktio_xsk *x);

/* Nonzero while frames handed to the kernel may not all be sent because the interface pushed
 * back at the last flush (its queue was full): flush again soon. An interface that is down
 * or gone leaves its frames in the TX ring until the next flush with new frames. */
unsigned pktio_xsk_unsent(const struct pktio_xsk *x);

/* Detach and free; the interface's XDP program goes with its last socket. */
void pktio_xsk_close(struct pktio_xsk *x);

/* A message for pktio_xsk_open's -errno on `ifname` (no trailing newline), in `buf`. */
const char *pktio_xsk_strerror(int err, const char *ifname, char *buf, unsigned size);

#endif /* PKTIO_XSK_H */

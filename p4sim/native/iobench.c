/* SPDX-License-Identifier: Apache-2.0
 *
 * The native switch's data path in memory, for `python -m p4sim.iobench`: io.c's loop as the
 * switch runs it (receive ring, pipeline, transmit batches) with the kernel's side played
 * here, so it needs no socket, interface or traffic. Frames are written into port 0's
 * TPACKET_V2 ring as the kernel's receive would write them, and each sendmmsg batch is copied
 * out as the kernel's send would copy it; neither is counted. What is counted is the CPU time
 * io.c and the pipeline spend per frame in user space. io.c is the one found first on the
 * include path: this checkout's or another's (the benchmark's before/after).
 */
#define pktio_socket bench_socket
#define pktio_bind bench_bind
#define pktio_ring_setup bench_ring_setup
#define pktio_ring_unmap bench_ring_unmap
#define pktio_batch_send bench_batch_send
#include "io.c"

#include <fcntl.h>
#include <time.h>

#define BENCH_PORTS 3 /* the splitter's core side (0) and its two legs */

static uint8_t kernel_skb[1 << 16];	  /* where the stand-in for the kernel's send copies to */
static uint64_t kernel_ns;		  /* CPU time of the kernel's stand-ins, not counted */
static uint64_t send_copy_ns;		  /* ... of which the send's copies */
static uint64_t sent_digest[BENCH_PORTS]; /* what each port sent, in order: see digest() */
static uint32_t send_limit; /* longer frames are refused (EMSGSIZE), as by an interface's MTU */
static int port_fd[BENCH_PORTS];

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_socket(int type_flags)
{
	(void)type_flags;
	return open("/dev/null", O_WRONLY | O_CLOEXEC); /* a descriptor to close; no I/O on it */
}

int bench_bind(int fd, const char *ifname, uint16_t protocol)
{
	(void)fd, (void)ifname, (void)protocol;
	return 1;
}

int bench_ring_setup(int fd, struct pktio_ring *r, uint32_t frame_size, uint32_t block_size,
		     uint32_t block_nr)
{
	(void)fd;
	r->map_len = (size_t)block_size * block_nr;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -ENOMEM;
	}
	r->frame_size = frame_size;
	r->frame_nr = (block_size / frame_size) * block_nr;
	r->cur = 0;
	return 0;
}

void bench_ring_unmap(struct pktio_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/* FNV-1a over the frame's length and its bytes, 8 at a time (little-endian, the last word
 * zero-padded): the test compares it with the same digest of the pipeline's own outputs. */
static uint64_t digest(uint64_t h, const uint8_t *f, size_t n)
{
	const uint64_t prime = 0x100000001b3ULL;
	h = (h ^ n) * prime;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		memcpy(&w, f + i, n - i < 8 ? n - i : 8);
		h = (h ^ w) * prime;
	}
	return h;
}

int bench_batch_send(int fd, struct pktio_batch *b, unsigned first, unsigned n, int flags)
{
	(void)flags;
	uint64_t t0 = thread_ns();
	int port = 0;
	while (port < BENCH_PORTS - 1 && port_fd[port] != fd)
		port++;
	for (unsigned i = first; i < first + n; i++) {
		if (b->msgs[i].msg_hdr.msg_iov->iov_len > send_limit) {
			n = i -
			    first; /* sendmmsg: the count before the refused frame, or its error */
			if (!n) {
				kernel_ns += thread_ns() - t0;
				return -EMSGSIZE;
			}
			break;
		}
	}
	for (unsigned i = first; i < first + n; i++) {
		const struct iovec *v = b->msgs[i].msg_hdr.msg_iov;
		memcpy(kernel_skb, v->iov_base,
		       v->iov_len < sizeof kernel_skb ? v->iov_len : sizeof kernel_skb);
	}
	uint64_t t1 = thread_ns();
	for (unsigned i = first; i < first + n; i++) {
		const struct iovec *v = b->msgs[i].msg_hdr.msg_iov;
		sent_digest[port] = digest(sent_digest[port], v->iov_base, v->iov_len);
	}
	send_copy_ns += t1 - t0;
	kernel_ns += thread_ns() - t0;
	return (int)n;
}

/* The kernel writes a received frame on whichever CPU runs the sender's softirq: out of this
 * core's caches, as the switch finds it in the ring. */
static void evict(const void *p, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	for (size_t i = 0; i < n; i += 64)
		__builtin_ia32_clflush((const uint8_t *)p + i);
	__builtin_ia32_clflush((const uint8_t *)p + n - 1);
	__builtin_ia32_mfence();
#else
	(void)p, (void)n; /* elsewhere the frame stays cached: the figures are a lower bound */
#endif
}

/* Frames handed to the benchmark: `n` frames of `len[i]` bytes one after the other in
 * `bytes`, received in turn, over and over. */
struct frames {
	const uint8_t *bytes;
	const uint32_t *len;
	uint32_t n, next;
	size_t at;
};

/* The kernel's receive: up to `max` of the frames into the ring's free slots from `*at` on,
 * laid out as TPACKET_V2 lays them out for a SOCK_RAW socket; a frame longer than a slot
 * holds is cut to it (tp_snaplen < tp_len), as the kernel cuts it. The count written. */
static unsigned deliver(struct pktio_ring *r, uint32_t *at, struct frames *fs, unsigned max,
			int cold)
{
	const uint32_t mac = TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - ETH_HLEN;
	unsigned n = 0;
	while (n < max) {
		struct tpacket2_hdr *h = (void *)(r->map + (size_t)*at * r->frame_size);
		if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_KERNEL)
			break;
		uint32_t len = fs->len[fs->next];
		const uint8_t *frame = fs->bytes + fs->at;
		fs->at += len;
		if (++fs->next == fs->n)
			fs->next = 0, fs->at = 0;
		uint32_t snap = len < r->frame_size - mac ? len : r->frame_size - mac;
		h->tp_len = len;
		h->tp_snaplen = snap;
		h->tp_mac = (uint16_t)mac;
		((struct sockaddr_ll *)((uint8_t *)h + TPACKET_ALIGN(sizeof *h)))->sll_pkttype =
			PACKET_HOST;
		memcpy((uint8_t *)h + mac, frame, snap);
		if (cold)
			evict(h, mac + snap);
		__atomic_store_n(&h->tp_status, TP_STATUS_USER, __ATOMIC_RELEASE);
		*at = (*at + 1) % r->frame_nr;
		n++;
	}
	return n;
}

/* Run `frames` frames into port 0 (the `nkinds` frames of `bytes`, `lens` in turn) through
 * io.c's loop and the pipeline `process` (the program's entry point io.c takes); frames out
 * longer than `limit` bytes are refused. `cold`: frames reach the ring out of this core's
 * caches (else they stay cached: the lower bound). out: frames received, sent, dropped on
 * sending; user-space nanoseconds (thread CPU time, the kernel's stand-ins taken out);
 * nanoseconds of the stand-in's copies out of the transmit batches (what the kernel's send
 * would copy, from wherever io.c keeps the frames); then frames, bytes and the digest of the
 * frames sent on ports 1 and 2 (the digest is the stand-in's work too, not counted).
 * 0, or -errno. */
int p4nio_bench(void *process, void *lock, void *unlock, void *dev, const uint8_t *bytes,
		const uint32_t *lens, uint32_t nkinds, uint64_t frames, int cold, uint32_t limit,
		uint64_t *out)
{
	struct frames fs = {bytes, lens, nkinds, 0, 0};
	send_limit = limit;
	struct io *io = p4nio_new();
	for (uint32_t port = 0; port < BENCH_PORTS; port++) {
		char name[16];
		snprintf(name, sizeof name, "bench%u", port);
		int err = p4nio_add_port(io, port, name, 1500, NULL);
		if (err < 0) {
			p4nio_close(io);
			return err;
		}
	}
	for (int i = 0; i < BENCH_PORTS; i++)
		port_fd[i] = io->p[i].fd, sent_digest[i] = 0xcbf29ce484222325ULL;
	p4nio_set_pipeline(io, process, lock, unlock, dev, -1);
	uint32_t at = 0;
	uint64_t delivered = 0, busy_ns = 0;
	kernel_ns = send_copy_ns = 0;
	while (delivered < frames) {
		uint64_t want = frames - delivered < RX_BURST ? frames - delivered : RX_BURST;
		delivered += deliver(&io->p[0].ring, &at, &fs, (unsigned)want, cold);
		uint64_t t0 = thread_ns();
		rx_round(io);
		busy_ns += thread_ns() - t0;
	}
	out[0] = io->rx, out[1] = io->tx, out[2] = io->tx_dropped;
	out[3] = busy_ns - kernel_ns, out[4] = send_copy_ns;
	for (int i = 1; i < BENCH_PORTS; i++) {
		uint64_t *o = out + 5 + 3 * (i - 1);
		o[0] = io->p[i].tx_packets, o[1] = io->p[i].tx_bytes, o[2] = sent_digest[i];
	}
	p4nio_close(io);
	return 0;
}

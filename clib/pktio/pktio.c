/* SPDX-License-Identifier: Apache-2.0
 *
 * pktio: AF_PACKET sockets, sendmmsg batches and TPACKET_V2 receive rings (see pktio.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/if_ether.h>

#include "pktio.h"

uint64_t pktio_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void pktio_sleep_until_ns(uint64_t mono_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(mono_ns / 1000000000ULL),
			      .tv_nsec = (long)(mono_ns % 1000000000ULL)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int pktio_socket(int type_flags)
{
	int fd = socket(AF_PACKET, SOCK_RAW | type_flags, 0);
	return fd < 0 ? -errno : fd;
}

int pktio_bind(int fd, const char *ifname, uint16_t protocol)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(protocol),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	if (!sll.sll_ifindex)
		return -ENODEV;
	if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0)
		return -errno;
	return sll.sll_ifindex;
}

void pktio_batch_set(struct pktio_batch *b, unsigned i, void *frame, uint32_t len)
{
	b->iov[i].iov_base = frame;
	b->iov[i].iov_len = len;
	memset(&b->msgs[i], 0, sizeof b->msgs[i]);
	b->msgs[i].msg_hdr.msg_iov = &b->iov[i];
	b->msgs[i].msg_hdr.msg_iovlen = 1;
}

int pktio_batch_send(int fd, struct pktio_batch *b, unsigned first, unsigned n, int flags)
{
	int sent = sendmmsg(fd, b->msgs + first, n, flags);
	return sent < 0 ? -errno : sent;
}

int pktio_ring_setup(int fd, struct pktio_ring *r, uint32_t frame_size, uint32_t block_size,
		     uint32_t block_nr)
{
	int version = TPACKET_V2;
	struct tpacket_req req = {
		.tp_block_size = block_size,
		.tp_block_nr = block_nr,
		.tp_frame_size = frame_size,
		.tp_frame_nr = (block_size / frame_size) * block_nr,
	};
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0)
		return -errno;
	r->map_len = (size_t)block_size * block_nr;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -errno;
	}
	r->frame_size = frame_size;
	r->frame_nr = req.tp_frame_nr;
	r->cur = 0;
	return 0;
}

void pktio_ring_unmap(struct pktio_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

unsigned pktio_ring_burst(struct pktio_ring *r, struct tpacket2_hdr **hs, unsigned max)
{
	uint32_t cur = r->cur;
	unsigned n = 0;

	while (n < max) {
		struct tpacket2_hdr *h = (void *)(r->map + (size_t)cur * r->frame_size);
		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			break;
		hs[n++] = h;
		cur = (cur + 1) % r->frame_nr;
	}
	return n;
}

void pktio_ring_release_burst(struct pktio_ring *r, struct tpacket2_hdr **hs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pktio_ring_release(r, hs[i]);
}

int pktio_wait_readable(const int *fds, unsigned n, int timeout_ms)
{
	struct pollfd pfd[PKTIO_BATCH_MAX];

	if (n > PKTIO_BATCH_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	int r = poll(pfd, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r > 0;
}

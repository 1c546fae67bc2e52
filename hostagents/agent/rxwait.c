/* SPDX-License-Identifier: Apache-2.0
 *
 * Blocking waits for the agent's DPDK ports (see rxwait.h).
 *
 * DPDK 22.11's af_packet PMD offers no Rx interrupt, but its queue is a packet socket with
 * an mmap ring, which poll() reports readable while the ring holds a frame the PMD has not
 * taken: the socket is the one of our descriptors whose address is that interface.
 *
 * Its af_xdp PMD offers none either (drivers/net/af_xdp/rte_eth_af_xdp.c has no
 * rx_queue_intr_enable); its queue is an AF_XDP socket, which poll() reports readable while
 * its RX ring holds a descriptor (the kernel's xsk_poll). Nothing names that socket's
 * interface to its owner: AF_XDP has no getsockname, and the socket diagnostics that would
 * (xdp_diag) are not in this kernel (CONFIG_XDP_SOCKETS_DIAG is not set; the dump answers
 * ENOENT). The PMD opens the socket in rte_eth_rx_queue_setup, so the AF_XDP descriptor
 * that appears during that call is the port's (rxwait_rx_queue_setup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#include "rxwait.h"

#define FD_SET_WORDS 64 /* descriptors below 4096 are tracked */

/* Each port's AF_XDP descriptor + 1 (0: none), noted by rxwait_rx_queue_setup. */
static int xdp_fd_plus_1[RTE_MAX_ETHPORTS];

static bool is_driver(const struct rte_eth_dev_info *info, const char *name)
{
	return info->driver_name != NULL && strcmp(info->driver_name, name) == 0;
}

void rxwait_configure(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	if (is_driver(info, "net_tap"))
		conf->intr_conf.rxq = 1;
}

/* The first of our descriptors `is_it` accepts, or -1. */
static int own_descriptor(bool (*is_it)(int fd, const void *key), const void *key)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (d == NULL)
		return -1;
	while (found < 0 && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		if (is_it(fd, key))
			found = fd;
	}
	closedir(d);
	return found;
}

static bool is_socket_of_domain(int fd, int want)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == want;
}

/* A packet socket bound to interface *(const unsigned int *)ifindex. */
static bool is_packet_socket_of(int fd, const void *ifindex)
{
	struct sockaddr_ll sll;
	socklen_t sll_len = sizeof(sll);

	return is_socket_of_domain(fd, AF_PACKET) &&
	       getsockname(fd, (struct sockaddr *)&sll, &sll_len) == 0 &&
	       (unsigned int)sll.sll_ifindex == *(const unsigned int *)ifindex;
}

static bool in_fd_set(const uint64_t *set, int fd)
{
	return fd < 64 * FD_SET_WORDS && (set[fd / 64] >> (fd % 64) & 1);
}

/* An AF_XDP socket outside the set of descriptors `known`. */
static bool is_new_xdp_socket(int fd, const void *known)
{
	return !in_fd_set(known, fd) && is_socket_of_domain(fd, AF_XDP);
}

/* Our AF_XDP descriptors (below 4096), as a bit set. */
static void xdp_sockets(uint64_t set[FD_SET_WORDS])
{
	memset(set, 0, FD_SET_WORDS * sizeof(set[0]));
	for (int fd; (fd = own_descriptor(is_new_xdp_socket, set)) >= 0 && fd < 64 * FD_SET_WORDS;)
		set[fd / 64] |= 1ull << (fd % 64);
}

int rxwait_rx_queue_setup(uint16_t port, uint16_t nb_rxd, unsigned int socket_id,
			  struct rte_mempool *pool)
{
	uint64_t before[FD_SET_WORDS];

	xdp_sockets(before);
	int ret = rte_eth_rx_queue_setup(port, 0, nb_rxd, socket_id, NULL, pool);
	int fd = ret == 0 ? own_descriptor(is_new_xdp_socket, before) : -1;

	if (port < RTE_MAX_ETHPORTS)
		xdp_fd_plus_1[port] = fd + 1;
	return ret;
}

int rxwait_port_fd(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return -1;
	if (is_driver(&info, "net_af_packet"))
		return info.if_index != 0 ? own_descriptor(is_packet_socket_of, &info.if_index)
					  : -1;
	if (is_driver(&info, "net_af_xdp"))
		return port < RTE_MAX_ETHPORTS ? xdp_fd_plus_1[port] - 1 : -1;
	if (is_driver(&info, "net_tap"))
		return rte_eth_dev_rx_intr_ctl_q_get_fd(port, 0);
	return -1;
}

unsigned int rxwait(const int *fds, unsigned int n, uint64_t timeout_ns)
{
	struct pollfd pfd[8];
	struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
			      .tv_nsec = (long)(timeout_ns % 1000000000u)};

	if (n > sizeof(pfd) / sizeof(pfd[0]))
		n = sizeof(pfd) / sizeof(pfd[0]);
	for (unsigned int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	unsigned int ready = 0;

	if (ppoll(pfd, n, &ts, NULL) > 0) /* else timed out or a signal: the loop looks again */
		for (unsigned int i = 0; i < n; i++)
			if (pfd[i].revents != 0)
				ready |= 1u << i;
	return ready;
}

void rxwait_print_xdp_statistics(FILE *out, uint16_t port)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	int fd = port < RTE_MAX_ETHPORTS ? xdp_fd_plus_1[port] - 1 : -1;

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) {
		fprintf(out, "pdcp-agent: port %u AF_XDP statistics: unreadable: %s\n", port,
			strerror(errno));
		return;
	}
	fprintf(out,
		"pdcp-agent: port %u AF_XDP statistics: rx_dropped %llu, rx_ring_full %llu, "
		"rx_fill_ring_empty_descs %llu, rx_invalid_descs %llu, tx_ring_empty_descs %llu, "
		"tx_invalid_descs %llu\n",
		port, (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_ring_full,
		(unsigned long long)st.rx_fill_ring_empty_descs,
		(unsigned long long)st.rx_invalid_descs, (unsigned long long)st.tx_ring_empty_descs,
		(unsigned long long)st.tx_invalid_descs);
}

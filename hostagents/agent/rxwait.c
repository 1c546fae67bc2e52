/* SPDX-License-Identifier: Apache-2.0
 *
 * Blocking waits for the agent's DPDK ports (see rxwait.h).
 *
 * DPDK 22.11's af_packet PMD offers no Rx interrupt, but its queue is a packet socket with
 * an mmap ring, which poll() reports readable while the ring holds a frame the PMD has not
 * taken: the socket is the one of our descriptors whose address is that interface.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rxwait.h"

static bool is_driver(const struct rte_eth_dev_info *info, const char *name)
{
	return info->driver_name != NULL && strcmp(info->driver_name, name) == 0;
}

void rxwait_configure(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	if (is_driver(info, "net_tap"))
		conf->intr_conf.rxq = 1;
}

/* Our packet socket bound to interface `ifindex`, or -1. */
static int packet_socket_of(unsigned int ifindex)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (d == NULL)
		return -1;
	while (found < 0 && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name), domain = 0;
		socklen_t len = sizeof(domain);
		struct sockaddr_ll sll;
		socklen_t sll_len = sizeof(sll);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
		    domain != AF_PACKET)
			continue;
		if (getsockname(fd, (struct sockaddr *)&sll, &sll_len) == 0 &&
		    (unsigned int)sll.sll_ifindex == ifindex)
			found = fd;
	}
	closedir(d);
	return found;
}

int rxwait_port_fd(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return -1;
	if (is_driver(&info, "net_af_packet"))
		return info.if_index != 0 ? packet_socket_of(info.if_index) : -1;
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

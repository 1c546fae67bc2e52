/* SPDX-License-Identifier: Apache-2.0
 *
 * Blocking waits for the agent's DPDK ports: a descriptor per port that turns readable when
 * its receive queue holds a frame, so an agent with nothing to do sleeps in one ppoll()
 * until a frame or its next timer, instead of waking every idle sleep to look.
 */
#ifndef AGENT_RXWAIT_H
#define AGENT_RXWAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>

/* Before rte_eth_dev_configure: ask for what rxwait_port_fd needs (net_tap's Rx queue
 * interrupt descriptor); other drivers' configuration stays as it is. */
void rxwait_configure(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf);

/* rte_eth_rx_queue_setup of `port`'s queue 0 (its return value), noting the AF_XDP socket
 * net_af_xdp opens in it: the descriptor rxwait_port_fd gives for that port. */
int rxwait_rx_queue_setup(uint16_t port, uint16_t nb_rxd, unsigned int socket_id,
			  struct rte_mempool *pool);

/* After rte_eth_dev_start: the descriptor of port's Rx queue 0, or -1 when its driver offers
 * none (net_af_packet: its packet socket, found by interface index; net_tap: the queue's
 * interrupt descriptor; net_af_xdp: the AF_XDP socket rxwait_rx_queue_setup saw it open; net_pcap, net_null: none). */
int rxwait_port_fd(uint16_t port);

/* Wait until one of `fds` (n <= 8 of them, all >= 0) is readable or `timeout_ns` passed;
 * bit i of the result is set if fds[i] is readable (0: timeout or a signal). */
unsigned int rxwait(const int *fds, unsigned int n, uint64_t timeout_ns);

/* Writes the kernel's counters of `port`'s AF_XDP socket (XDP_STATISTICS: frames it dropped
 * for a full RX ring, an empty fill ring, ...) as one line to `out`; nothing for a port of
 * another driver. A stall shows which ring ran dry (experiments/docs/measurements.md). */
void rxwait_print_xdp_statistics(FILE *out, uint16_t port);

#endif /* AGENT_RXWAIT_H */

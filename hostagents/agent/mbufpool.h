/* SPDX-License-Identifier: Apache-2.0
 *
 * The agent's one mbuf pool, laid out so that DPDK's net_af_xdp can use all of it.
 */
#ifndef PDCP_AGENT_MBUFPOOL_H
#define PDCP_AGENT_MBUFPOOL_H

#include <stdbool.h>

#include <rte_mempool.h>

/* A pktmbuf pool of n mbufs (priv_size bytes of private area, data_room bytes of data room),
 * its objects packed back to back: the agent does no DMA, so they need not stay inside one
 * page. NULL with rte_errno set if EAL memory does not hold it. */
struct rte_mempool *mbuf_pool_create(const char *name, unsigned int n, unsigned int cache_size,
				     uint16_t priv_size, uint16_t data_room);

/* net_af_xdp (DPDK 22.11, zero-copy build) registers as its UMEM only the first
 * populated_size x object-size bytes of the pool's first memory chunk; the kernel silently
 * drops a fill-ring address beyond that and refuses such a TX descriptor, so each mbuf
 * there that reaches a ring is lost for good, and a leg whose fill ring they drain never
 * receives again (issue 25). Takes every such mbuf out of use for the agent's lifetime and
 * returns how many it took (0 for a packed pool in one chunk). */
unsigned int mbuf_pool_hold_outside_umem(struct rte_mempool *pool);

#endif

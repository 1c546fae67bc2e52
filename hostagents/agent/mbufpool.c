/* SPDX-License-Identifier: Apache-2.0 */
#include "mbufpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

struct rte_mempool *mbuf_pool_create(const char *name, unsigned int n, unsigned int cache_size,
				     uint16_t priv_size, uint16_t data_room)
{
	struct rte_pktmbuf_pool_private pool_priv = {
		.mbuf_data_room_size = data_room,
		.mbuf_priv_size = priv_size,
	};
	/* rte_pktmbuf_pool_create with one flag more: without RTE_MEMPOOL_F_NO_IOVA_CONTIG,
	 * EAL without hugepages keeps each object inside a 4 KiB page, one 2.5 KiB mbuf per
	 * page, and 39 % of a 32,767-mbuf pool lands past what net_af_xdp registers. */
	struct rte_mempool *pool = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + priv_size + data_room, cache_size,
		sizeof(pool_priv), rte_socket_id(), RTE_MEMPOOL_F_NO_IOVA_CONTIG);

	if (pool == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(pool, rte_mbuf_best_mempool_ops(), NULL) != 0)
		goto fail;
	rte_pktmbuf_pool_init(pool, &pool_priv);
	if (rte_mempool_populate_default(pool) < 0)
		goto fail;
	rte_mempool_obj_iter(pool, rte_pktmbuf_init, NULL);
	return pool;
fail:
	rte_mempool_free(pool);
	return NULL;
}

/* The UMEM net_af_xdp makes of a pool (drivers/net/af_xdp/rte_eth_af_xdp.c,
 * xdp_umem_configure and get_base_addr, DPDK 22.11): from the page below the first memory
 * chunk, populated_size object sizes long. */
struct umem_window {
	uintptr_t base;
	uint64_t size;
	uint32_t header_size;
	uint32_t obj_size;
};

static struct umem_window umem_window_of(const struct rte_mempool *pool)
{
	const struct rte_mempool_memhdr *first = STAILQ_FIRST(&pool->mem_list);
	uintptr_t start = (uintptr_t)first->addr;
	uintptr_t base = start & ~((uintptr_t)getpagesize() - 1);
	uint32_t obj_size = rte_mempool_calc_obj_size(pool->elt_size, pool->flags, NULL);

	return (struct umem_window){
		.base = base,
		.size = (uint64_t)pool->populated_size * obj_size + (start - base),
		.header_size = pool->header_size,
		.obj_size = obj_size,
	};
}

/* The kernel's test for a fill-ring address in an unaligned UMEM (xp_check_unaligned):
 * the whole chunk from the address on must lie inside. */
static bool inside(const struct umem_window *w, const struct rte_mbuf *m)
{
	uintptr_t at = (uintptr_t)m - w->header_size;

	return at >= w->base && at - w->base + w->obj_size <= w->size;
}

unsigned int mbuf_pool_hold_outside_umem(struct rte_mempool *pool)
{
	struct umem_window w = umem_window_of(pool);
	unsigned int n = rte_mempool_avail_count(pool), held = 0;
	struct rte_mbuf **all = calloc(n, sizeof(*all));

	if (all == NULL)
		return 0;
	/* Take the whole pool, keep the ones outside, give the rest back. */
	unsigned int taken = 0;
	while (taken < n && (all[taken] = rte_pktmbuf_alloc(pool)) != NULL)
		taken++;
	for (unsigned int i = 0; i < taken; i++) {
		if (inside(&w, all[i]))
			rte_pktmbuf_free(all[i]);
		else
			held++; /* never freed: the agent's exit releases EAL memory */
	}
	free(all);
	return held;
}

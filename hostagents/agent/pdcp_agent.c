/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent: the PDCP receive side of a Dual Connectivity client.
 *
 *   leg A port --+                                       +--> host port (client stack)
 *                +--> parse --> TS 38.323 reordering --+
 *   leg B port --+       \--> non-PDCP frames as they are --^
 *   host port ----------------------------------------------> uplink leg (A or B)
 *
 * One lcore does everything: the work per packet is small, and the testbed machines
 * have two cores to share with the switch, the link emulators and the endpoints. So it
 * polls only while frames keep coming: when a round finds nothing to do (and --spin-us
 * has passed since the last frame) it blocks until a port has a frame or a timer is due.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "mbufpool.h"
#include "options.h"
#include "pdcp_frame.h"
#include "pdcp_rx.h"
#include "rxwait.h"
#include "stats.h"
#include "statsfile.h"

#define RX_DESC 1024
#define TX_DESC 1024
/* net_af_xdp's RX ring is nb_rx_desc long: 4096 frames, as the testbed gives net_af_packet's
 * legs (framecnt): a linkem sends the frames it finds due back to back. */
#define AF_XDP_RX_DESC 4096
#define BURST_SIZE 32
#define RX_BURSTS_PER_ROUND 16 /* up to 512 frames per leg per poll round */
/* PDUs waiting for a gap hold their mbufs, so the pool bounds the reordering buffer in
 * practice (18-bit SN allows 131072 waiting PDUs, about 300 MB of mbufs). The pool is as
 * large as EAL memory allows, from NUM_MBUFS down to MIN_MBUFS; `-m 256` gives 65535. */
#define NUM_MBUFS 65535
#define MIN_MBUFS 4095
#define MBUF_CACHE_SIZE 256
/* Frames for the host port wait in a FIFO that holds every mbuf of the pool, so enqueue
 * never fails; each poll round sends at most HOST_TX_PER_ROUND of them. A t-Reordering
 * expiry that releases thousands of PDUs then does not stop the legs from being polled
 * (their kernel rings would overflow meanwhile). */
#define HOST_TXQ_SIZE 65536
#define HOST_TX_BURST 64
#define HOST_TX_PER_ROUND 256
#define TX_RETRIES 64 /* tx_burst attempts before frames count as dropped */
/* A blocking agent reads the host port (a system call on net_tap, usually finding nothing:
 * most traffic is downlink) when its wait reported a frame there, while it keeps giving
 * full bursts, and at least this often otherwise: an uplink frame (a TCP ACK) arriving
 * while downlink traffic keeps the agent from waiting waits at most this long. */
#define HOST_RX_MAX_GAP_NS 50000u
#define HOST_WAIT_BIT (1u << 2) /* the host port's bit in rxwait's result (wait_fds[2]) */

/* Per-mbuf private area: when the frame entered the agent. */
struct mbuf_priv {
	uint64_t rx_ns;
	uint64_t is_pdu; /* went through the reordering core: its delay is recorded */
};

struct agent {
	struct agent_options opt;
	struct pdcp_rx *core;
	struct rte_mempool *pool;
	unsigned int pool_held; /* mbufs outside net_af_xdp's UMEM, never used (mbufpool.h) */
	FILE *stats_out;
	bool stats_failed; /* a line could not be written: the agent stops, exit status 1 */
	struct rte_ring *host_txq;
	bool initial_sn_pending; /* --initial-sn auto: take the first PDU's SN */
	uint16_t started[3];
	unsigned int n_started;
	int wait_fds[3]; /* Rx descriptors (rxwait.h) of leg A, leg B and the host port */
	bool can_block;	 /* every port has one */
	struct agent_stats stats;
};

static volatile sig_atomic_t quit_signal;

static void on_signal(int sig) { quit_signal = sig; }

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct mbuf_priv *priv_of(struct rte_mbuf *m) { return rte_mbuf_to_priv(m); }

/* Send as many as the port takes within TX_RETRIES attempts; free and count the rest. */
static unsigned int tx_all(uint16_t port, struct rte_mbuf **pkts, unsigned int n, uint64_t *dropped)
{
	unsigned int sent = 0;

	for (int attempt = 0; sent < n && attempt < TX_RETRIES; attempt++)
		sent += rte_eth_tx_burst(port, 0, pkts + sent, (uint16_t)(n - sent));
	if (sent < n) {
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		*dropped += n - sent;
	}
	return sent;
}

/* Send up to `max` frames of the host queue; returns how many left the queue. */
static unsigned int host_tx_drain(struct agent *ag, unsigned int max)
{
	struct rte_mbuf *pkts[HOST_TX_BURST];
	uint64_t delays[HOST_TX_BURST];
	unsigned int done = 0;

	while (done < max) {
		unsigned int n, sent, i;
		uint64_t t;

		n = rte_ring_sc_dequeue_burst(ag->host_txq, (void **)pkts,
					      RTE_MIN((unsigned int)HOST_TX_BURST, max - done),
					      NULL);
		if (n == 0)
			break;
		/* Read the timestamps before the port takes (and may free) the mbufs. */
		t = now_ns();
		for (i = 0; i < n; i++) {
			struct mbuf_priv *p = priv_of(pkts[i]);

			delays[i] = p->is_pdu ? t - p->rx_ns : UINT64_MAX;
			if (ag->opt.rewrite_dst_mac)
				memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *), ag->opt.host_dst_mac,
				       RTE_ETHER_ADDR_LEN);
		}
		sent = tx_all(ag->opt.host_port, pkts, n, &ag->stats.tx_dropped_host);
		for (i = 0; i < sent; i++)
			if (delays[i] != UINT64_MAX)
				stats_record_delay_ns(&ag->stats, delays[i]);
		done += n;
	}
	return done;
}

static inline void host_tx_enqueue(struct agent *ag, struct rte_mbuf *m)
{
	if (unlikely(rte_ring_sp_enqueue(ag->host_txq, m) != 0)) {
		rte_pktmbuf_free(m); /* cannot happen: the queue holds the whole pool */
		ag->stats.tx_dropped_host++;
	}
}

/* Delivery callback of the reordering core: the PDU is an mbuf already stripped. */
static void deliver_to_host(void *ctx, void *pdu, uint64_t count, enum pdcp_rx_delivery how)
{
	RTE_SET_USED(count);
	RTE_SET_USED(how);
	host_tx_enqueue(ctx, pdu);
}

static void handle_leg_frame(struct agent *ag, struct rte_mbuf *m, uint64_t rx_ns)
{
	struct pdcp_frame_info info;
	enum pdcp_frame_kind kind;
	struct mbuf_priv *p = priv_of(m);

	p->rx_ns = rx_ns;
	p->is_pdu = 0;
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) < 0) {
		ag->stats.malformed++;
		ag->stats.malformed_reason[PDCP_FRAME_TRUNCATED]++;
		rte_pktmbuf_free(m);
		return;
	}
	kind = pdcp_frame_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
				ag->opt.sn_bits, &info);
	if (kind == PDCP_FRAME_PASSTHROUGH) {
		ag->stats.passthrough++;
		host_tx_enqueue(ag, m);
		return;
	}
	if (kind != PDCP_FRAME_DATA) {
		ag->stats.malformed++;
		ag->stats.malformed_reason[kind]++;
		rte_pktmbuf_free(m);
		return;
	}
	pdcp_frame_strip(rte_pktmbuf_mtod(m, uint8_t *), &info);
	rte_pktmbuf_adj(m, info.strip_len);
	p->is_pdu = 1;
	if (unlikely(ag->initial_sn_pending)) {
		pdcp_rx_set_initial_count(ag->core, info.sn);
		ag->initial_sn_pending = false;
	}
	if (pdcp_rx_receive(ag->core, info.sn, m, rx_ns / 1000) != PDCP_RX_ACCEPTED)
		rte_pktmbuf_free(m); /* duplicate or out of window: counted by the core */
}

/* A stats line that cannot be written stops the agent: a run would go on without the
 * measurements it is for, and nobody would know until the analysis. */
static void write_stats(struct agent *ag, bool final)
{
	if (ag->stats_failed || stats_write(ag->stats_out, now_ns() / 1000000, &ag->stats, ag->core,
					    rte_ring_count(ag->host_txq), final) == 0)
		return;
	fprintf(stderr, "pdcp-agent: error: cannot write stats to %s: %s; stopping\n",
		ag->opt.stats_path ? ag->opt.stats_path : "stdout", strerror(errno));
	ag->stats_failed = true;
	quit_signal = SIGTERM;
}

/* Where the mbufs and the kernel's rings stood when the agent was told to stop, before the
 * shutdown flush changes them: after a stall (issue 25) this says whether the pool ran dry
 * (mbufs held in the PMD's rings) or which AF_XDP ring the kernel found full or empty. */
static void print_stop_state(const struct agent *ag)
{
	fprintf(stderr,
		"pdcp-agent: at stop: mbuf pool %u of %u free, %u buffered for reordering, %u "
		"queued for the host, %u held unused (outside net_af_xdp's UMEM)\n",
		rte_mempool_avail_count(ag->pool), ag->pool->size, pdcp_rx_buffered(ag->core),
		rte_ring_count(ag->host_txq), ag->pool_held);
	for (unsigned int i = 0; i < ag->n_started; i++)
		rxwait_print_xdp_statistics(stderr, ag->started[i]);
}

/* How long a blocking wait may last at time t: until the next stats line or t-Reordering
 * expiry, at most a second. */
static uint64_t wait_budget_ns(const struct agent *ag, uint64_t t, uint64_t next_stats_ns)
{
	uint64_t until = t + 1000000000u;

	if (ag->opt.stats_interval_ms != 0 && next_stats_ns < until)
		until = next_stats_ns;
	if (pdcp_rx_timer_running(ag->core)) {
		uint64_t expiry_ns = pdcp_rx_timer_deadline_us(ag->core) * 1000;

		if (expiry_ns < until)
			until = expiry_ns;
	}
	return until > t ? until - t : 0;
}

/* The ports' Rx descriptors in rxwait_port_fd's sense; false if one has none (then the
 * agent sleeps --idle-sleep-us between empty rounds, as it did before it could block). */
static bool wait_descriptors(const struct agent *ag, int fds[3])
{
	const uint16_t ports[3] = {ag->opt.leg_port[0], ag->opt.leg_port[1], ag->opt.host_port};
	bool all = true;

	for (int i = 0; i < 3; i++) {
		fds[i] = rxwait_port_fd(ports[i]);
		all = all && fds[i] >= 0;
	}
	return all;
}

/* Role of the (only) lcore: poll both legs and the host port, serve t-Reordering, write
 * stats; between frames, spin for --spin-us, then block (or sleep, for ports without a
 * descriptor). Returns when a SIGINT or SIGTERM arrives. */
static void lcore_rx_reorder_tx(struct agent *ag)
{
	const uint16_t uplink_port = ag->opt.leg_port[ag->opt.uplink_leg];
	const uint64_t interval_ns = ag->opt.stats_interval_ms * 1000000;
	const struct timespec idle = {
		.tv_sec = (time_t)(ag->opt.idle_sleep_us / 1000000),
		.tv_nsec = (long)(ag->opt.idle_sleep_us % 1000000) * 1000,
	};
	/* Deep idle (sleeping agents only): after a silence longer than any gap of a running
	 * flow (and with no PDU waiting for t-Reordering), poll every DEEP_IDLE_SLEEP_US
	 * instead of every idle sleep. Traffic at 1,000 pps or a ping every 50 ms never
	 * reaches it, so their added delay is unchanged. */
	const struct timespec deep_idle = {.tv_nsec = (long)DEEP_IDLE_SLEEP_US * 1000};
	const uint64_t deep_after_ns = ag->opt.deep_idle_ms * 1000000;
	const uint64_t spin_ns = ag->opt.spin_us * 1000;
	uint64_t last_active_ns = now_ns(), last_work_ns = now_ns();
	uint64_t next_stats_ns = now_ns() + interval_ns;
	struct rte_mbuf *pkts[BURST_SIZE];
	const bool can_block = ag->can_block;
	const bool waits = can_block && ag->opt.idle_sleep_us != 0; /* between frames */
	bool host_ready = true;	   /* the host port may have a frame: read it */
	uint64_t host_read_ns = 0; /* when it was last read */

	/* The default 50 us timer slack would double a 50 us idle sleep, and the delay of a
	 * PDU that arrives during it. */
	if (ag->opt.idle_sleep_us != 0)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

	while (!quit_signal) {
		uint64_t t = now_ns();
		unsigned int seen = 0, from_legs = 0;
		const uint64_t passthrough_before = ag->stats.passthrough;

		/* Legs first and deeper than the host queue is drained: their kernel rings
		 * overflow if a round of transmissions outlasts them. */
		for (int leg = 0; leg < 2; leg++) {
			for (int burst = 0; burst < RX_BURSTS_PER_ROUND; burst++) {
				uint16_t n = rte_eth_rx_burst(ag->opt.leg_port[leg], 0, pkts,
							      BURST_SIZE);

				ag->stats.rx_leg[leg] += n;
				seen += n;
				from_legs += n;
				for (uint16_t i = 0; i < n; i++)
					handle_leg_frame(ag, pkts[i], t);
				if (n < BURST_SIZE)
					break;
			}
		}
		/* Expiries are served even when nothing arrives. */
		pdcp_rx_poll(ag->core, t / 1000);
		seen += host_tx_drain(ag, HOST_TX_PER_ROUND);

		uint16_t n = 0;
		if (!waits || host_ready || t - host_read_ns >= HOST_RX_MAX_GAP_NS) {
			n = rte_eth_rx_burst(ag->opt.host_port, 0, pkts, BURST_SIZE);
			host_ready = n == BURST_SIZE;
			host_read_ns = t;
		}
		if (n > 0) {
			ag->stats.rx_host += n;
			ag->stats.uplink +=
				tx_all(uplink_port, pkts, n, &ag->stats.tx_dropped_uplink);
			seen += n;
		}

		if (interval_ns != 0 && t >= next_stats_ns) {
			write_stats(ag, false);
			next_stats_ns += interval_ns;
			if (next_stats_ns <= t)
				next_stats_ns = t + interval_ns;
		}
		/* Traffic is what keeps the agent out of deep idle: PDUs, frames from the client, a
		 * PDU waiting for t-Reordering or frames queued for the host. Stray non-PDCP frames
		 * on the legs (IPv6 neighbour discovery of the bridges, every few seconds) are not:
		 * each would cost 200 ms of shallow idle. */
		bool traffic = from_legs > ag->stats.passthrough - passthrough_before || n != 0 ||
			       pdcp_rx_buffered(ag->core) != 0 || rte_ring_count(ag->host_txq) != 0;
		if (traffic)
			last_active_ns = t;
		if (seen != 0 || ag->opt.idle_sleep_us == 0)
			last_work_ns = t;
		else if (can_block && t - last_work_ns >= spin_ns)
			host_ready =
				(rxwait(ag->wait_fds, 3, wait_budget_ns(ag, t, next_stats_ns)) &
				 HOST_WAIT_BIT) != 0;
		else if (!can_block) {
			bool deep = deep_after_ns != 0 && t - last_active_ns >= deep_after_ns;
			nanosleep(deep ? &deep_idle : &idle, NULL);
		}
	}
}

/* The driver behind `port` (net_af_packet, net_af_xdp, net_tap, ...): the ready line says
 * which I/O path each port took. */
static const char *port_driver(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL)
		return "?";
	return info.driver_name;
}

static bool is_af_xdp(uint16_t port)
{
	return rte_eth_dev_is_valid_port(port) && strcmp(port_driver(port), "net_af_xdp") == 0;
}

static int port_init(struct agent *ag, uint16_t port, const char *role, bool promiscuous)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = RX_DESC, nb_txd = TX_DESC;
	int ret;

	if (!rte_eth_dev_is_valid_port(port)) {
		fprintf(stderr,
			"pdcp-agent: error: %s port %u does not exist: the --vdev options "
			"created %u port(s), numbered from 0 in their order\n",
			role, port, rte_eth_dev_count_avail());
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	memset(&info, 0, sizeof(info));
	ret = rte_eth_dev_info_get(port, &info);
	if (ret == 0) {
		rxwait_configure(&info, &conf);
		ret = rte_eth_dev_configure(port, 1, 1, &conf);
	}
	if (ret == 0 && is_af_xdp(port))
		nb_rxd = AF_XDP_RX_DESC;
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (ret == 0)
		ret = rxwait_rx_queue_setup(port, nb_rxd, rte_eth_dev_socket_id(port), ag->pool);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, nb_txd, rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0)
		ag->started[ag->n_started++] = port;
	if (ret != 0) {
		static const char XDP_HINT[] =
			"; AF_XDP needs an XDP program in the interface's driver: the kernel's "
			"reason for refusing it is in the libbpf/libxdp lines above";
		const char *driver = info.driver_name ? info.driver_name : "?";
		char ifname[IF_NAMESIZE];

		if (info.if_index == 0 || if_indextoname(info.if_index, ifname) == NULL)
			strcpy(ifname, "?");
		fprintf(stderr, "pdcp-agent: error: cannot set up %s port %u (%s on %s): %s%s\n",
			role, port, driver, ifname, rte_strerror(-ret),
			strcmp(driver, "net_af_xdp") == 0 ? XDP_HINT : "");
		return -1;
	}
	/* Leg frames carry whatever MAC the switch wrote: take them all. The host port stays
	 * as it is (a tap in promiscuous mode would make the client's kernel see every frame
	 * as its own to sniff, without changing which it accepts). */
	if (promiscuous) {
		ret = rte_eth_promiscuous_enable(port);
		if (ret != 0 && ret != -ENOTSUP)
			fprintf(stderr,
				"pdcp-agent: warning: promiscuous mode on %s port %u: "
				"%s\n",
				role, port, rte_strerror(-ret));
	}
	return 0;
}

/* EAL leaves its runtime directory (/var/run/dpdk/PREFIX) behind; remove it. */
static void remove_runtime_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	rmdir(dir);
}

/* Ports are numbered in --vdev order; a vdev that failed to probe (a missing interface)
 * only warns in EAL and would silently renumber the ports after it. */
static unsigned int count_vdev_args(int argc, char **argv)
{
	unsigned int n = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--vdev") == 0 || strncmp(argv[i], "--vdev=", 7) == 0)
			n++;
	return n;
}

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static struct agent ag;
	char runtime_dir[4096];
	int app_argc, eal_argc, ret;
	char **app_argv;
	int sep;

	/* Help and option errors come before EAL init: no root, no runtime dir needed. */
	if (wants_help(argc, argv)) {
		agent_usage(argv[0], stdout);
		return 0;
	}
	for (sep = 1; sep < argc && strcmp(argv[sep], "--") != 0; sep++)
		;
	app_argc = sep < argc ? argc - sep : 1;
	app_argv = sep < argc ? argv + sep : argv; /* argv[sep] = "--" stands for argv[0] */
	if (sep < argc)
		app_argv[0] = argv[0];
	ret = agent_parse_options(app_argc, app_argv, &ag.opt, stderr);
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	if (sep < argc)
		argv[sep] = "--";

	/* A stop request during start-up is served once the ports are up: the loop sees it
	 * at once and the shutdown path cleans up as usual. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* A stats fifo or pipe whose reader left: the write fails with EPIPE and the agent
	 * stops as for any stats line it cannot write, its ports closed, instead of dying. */
	signal(SIGPIPE, SIG_IGN);

	/* EAL logs to stdout by default, where the stats may go. */
	rte_openlog_stream(stderr);
	eal_argc = sep;
	ret = rte_eal_init(eal_argc, argv);
	if (ret < 0) {
		fprintf(stderr,
			"pdcp-agent: error: EAL initialisation failed: %s (check the EAL "
			"options, and that every --vdev iface= interface exists)\n",
			rte_strerror(rte_errno));
		return 1;
	}
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	if (rte_eth_dev_count_avail() < count_vdev_args(eal_argc, argv)) {
		fprintf(stderr,
			"pdcp-agent: error: only %u of the %u --vdev devices came up (see the "
			"EAL messages above; usually an iface= interface that does not exist)\n",
			rte_eth_dev_count_avail(), count_vdev_args(eal_argc, argv));
		ret = 1;
		goto out_ports;
	}

	ag.stats_out = stdout;
	if (ag.opt.stats_path != NULL) {
		char err[512];

		ag.stats_out = stats_file_open(ag.opt.stats_path, err, sizeof(err));
		if (ag.stats_out == NULL) {
			fprintf(stderr, "pdcp-agent: error: %s\n", err);
			ret = 1;
			goto out_ports;
		}
	}
	ag.core = pdcp_rx_create(&(struct pdcp_rx_config){
		.sn_bits = ag.opt.sn_bits,
		.t_reordering_us = ag.opt.t_reordering_us,
		.deliver = deliver_to_host,
		.ctx = &ag,
	});
	for (unsigned int n = NUM_MBUFS; ag.pool == NULL && n >= MIN_MBUFS; n = n / 2) {
		ag.pool = mbuf_pool_create("pdcp_agent_pool", n, MBUF_CACHE_SIZE,
					   RTE_ALIGN(sizeof(struct mbuf_priv), RTE_MBUF_PRIV_ALIGN),
					   RTE_MBUF_DEFAULT_BUF_SIZE);
		if (ag.pool != NULL && n < NUM_MBUFS)
			fprintf(stderr,
				"pdcp-agent: warning: only %u mbufs fit in EAL memory; "
				"fewer PDUs can wait for a gap (give EAL more with -m)\n",
				n);
	}
	ag.host_txq = rte_ring_create("host_txq", HOST_TXQ_SIZE, rte_socket_id(),
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ag.core == NULL || ag.pool == NULL || ag.host_txq == NULL) {
		fprintf(stderr, "pdcp-agent: error: out of memory for the reordering buffer or the "
				"mbuf pool (give EAL more with -m)\n");
		ret = 1;
		goto out_ports;
	}
	if (is_af_xdp(ag.opt.leg_port[0]) || is_af_xdp(ag.opt.leg_port[1]) ||
	    is_af_xdp(ag.opt.host_port)) {
		/* before the ports take their first mbufs into their fill rings */
		ag.pool_held = mbuf_pool_hold_outside_umem(ag.pool);
		if (ag.pool_held > 0)
			fprintf(stderr,
				"pdcp-agent: warning: %u of %u mbufs lie outside the UMEM that "
				"net_af_xdp registers for the pool; they are held unused\n",
				ag.pool_held, ag.pool->size);
	}
	pdcp_rx_set_initial_count(ag.core, ag.opt.initial_sn);
	ag.initial_sn_pending = ag.opt.initial_sn_auto;
	if (port_init(&ag, ag.opt.leg_port[0], "leg A", true) < 0 ||
	    port_init(&ag, ag.opt.leg_port[1], "leg B", true) < 0 ||
	    port_init(&ag, ag.opt.host_port, "host", false) < 0) {
		ret = 1;
		goto out_ports;
	}

	ag.can_block = wait_descriptors(&ag, ag.wait_fds);
	fprintf(stderr, "pdcp-agent: between frames: %s\n",
		ag.opt.idle_sleep_us == 0 ? "busy poll"
		: ag.can_block		  ? "blocking wait on the ports"
					  : "idle sleeps (a port has no Rx descriptor)");
	fprintf(stderr,
		"pdcp-agent: legs on ports %u (A, %s) and %u (B, %s), host port %u (%s), uplink "
		"on leg %c, %u-bit SN, t-Reordering %" PRIu64 " us\n",
		ag.opt.leg_port[0], port_driver(ag.opt.leg_port[0]), ag.opt.leg_port[1],
		port_driver(ag.opt.leg_port[1]), ag.opt.host_port, port_driver(ag.opt.host_port),
		ag.opt.uplink_leg ? 'B' : 'A', ag.opt.sn_bits, ag.opt.t_reordering_us);

	lcore_rx_reorder_tx(&ag);
	print_stop_state(&ag);

	/* Shutdown: everything still buffered goes to the host, in COUNT order. */
	pdcp_rx_flush(ag.core);
	while (host_tx_drain(&ag, UINT32_MAX) > 0)
		;
	write_stats(&ag, true);
	ret = ag.stats_failed ? 1 : 0;

out_ports: /* closing a port also removes what its vdev created (a tap interface) */
	for (unsigned int i = 0; i < ag.n_started; i++)
		rte_eth_dev_stop(ag.started[i]);
	for (uint16_t port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (rte_eth_dev_is_valid_port(port))
			rte_eth_dev_close(port);
	if (ag.stats_out != NULL && ag.stats_out != stdout)
		fclose(ag.stats_out);
	pdcp_rx_free(ag.core);
	rte_ring_free(ag.host_txq);
	rte_eal_cleanup();
	remove_runtime_dir(runtime_dir); /* ours: EAL init succeeded, so we are the primary */
	return ret;
}

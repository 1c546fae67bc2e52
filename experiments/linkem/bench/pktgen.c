/* SPDX-License-Identifier: Apache-2.0
 * pktgen: a small AF_PACKET frame generator and sink for linkem's tests and benchmark.
 *
 *   pktgen tx -i IF [--size 1000] [--count N] [--pps N | --mbit R] [--duration S] [--batch 64]
 *             [--vlan ID]
 *   pktgen rx -i IF [--duration S] [--idle-ms 500] [--count N]
 *
 * tx sends Ethernet frames of ethertype 0x88B5 (IEEE local experimental) carrying a magic,
 * a sequence number and the CLOCK_REALTIME send time, paced per frame (--pps/--mbit) or
 * as fast as sendmmsg goes.  rx counts those frames (others are ignored) and prints one JSON
 * line: frames, bytes, first/last arrival, the mean rate between them, one-way delay
 * percentiles (kernel receive timestamp minus send time, us), sequence gaps and inversions,
 * and how many arrived with a VLAN tag (the kernel reports it out of band) and the last TCI. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pktio.h"

#define ETHERTYPE_BENCH 0x88B5
#define MAGIC 0x6c696e6b656d3031ULL /* "linkem01" */
#define MAX_FRAME 2048
#define MAX_BATCH 256
#define MAX_SAMPLES 4000000

struct payload {
	uint64_t magic;
	uint64_t seq;
	uint64_t sent_ns; /* CLOCK_REALTIME, comparable with the receiver's SO_TIMESTAMPNS */
} __attribute__((packed));

static void die(const char *msg)
{
	fprintf(stderr, "pktgen: %s: %s\n", msg, strerror(errno));
	exit(2);
}

static int open_socket(const char *ifname, int *ifindex)
{
	int fd = pktio_socket(ETH_P_ALL, 0);
	int one = 1;

	if (fd < 0) {
		errno = -fd;
		die("AF_PACKET socket");
	}
	*ifindex = pktio_bind(fd, ifname, ETH_P_ALL);
	if (*ifindex == -ENODEV) {
		fprintf(stderr, "pktgen: no interface '%s'\n", ifname);
		exit(2);
	}
	if (*ifindex < 0) {
		errno = -*ifindex;
		die("bind");
	}
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	return fd;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int do_tx(const char *ifname, unsigned size, uint64_t count, double pps, double duration,
		 unsigned batch, int vlan)
{
	unsigned off = vlan >= 0 ? 18 : 14; /* where the ethertype 0x88B5 payload starts */

	if (size < off + sizeof(struct payload)) {
		fprintf(stderr, "pktgen: --size must be at least %zu with --vlan\n",
			off + sizeof(struct payload));
		return 2;
	}
	int ifindex, fd = open_socket(ifname, &ifindex);
	static uint8_t frames[MAX_BATCH][MAX_FRAME];
	static struct pktio_batch b;
	int sndbuf = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	for (unsigned i = 0; i < batch; i++) {
		memset(frames[i], 0, size);
		memset(frames[i], 0xff, 6);			      /* broadcast */
		memcpy(frames[i] + 6, "\x02\x00\x00\x00\x00\x01", 6); /* local MAC */
		if (vlan >= 0) { /* 802.1Q tag: TPID 0x8100, TCI = VLAN id */
			frames[i][12] = 0x81;
			frames[i][13] = 0x00;
			frames[i][14] = (uint8_t)(vlan >> 8);
			frames[i][15] = (uint8_t)vlan;
		}
		frames[i][off - 2] = ETHERTYPE_BENCH >> 8;
		frames[i][off - 1] = ETHERTYPE_BENCH & 0xff;
		pktio_batch_set(&b, i, frames[i], size);
	}
	uint64_t start = pktio_clock_ns(CLOCK_MONOTONIC), sent = 0, errors = 0;
	uint64_t end = duration > 0 ? start + (uint64_t)(duration * 1e9) : UINT64_MAX;
	while ((count == 0 || sent < count)) {
		unsigned n = batch;
		if (pps > 0) {
			/* Send every frame due by now in one call: late wake-ups give a short burst,
			 * not a lower rate. */
			uint64_t now = pktio_clock_ns(CLOCK_MONOTONIC);
			uint64_t due_total = (uint64_t)((double)(now - start) * pps / 1e9) + 1;
			if (now >= end)
				break;
			if (due_total <= sent) {
				pktio_sleep_until_ns(start + (uint64_t)((double)sent * 1e9 / pps));
				continue;
			}
			if (due_total - sent < n)
				n = (unsigned)(due_total - sent);
		} else if (pktio_clock_ns(CLOCK_MONOTONIC) >= end) {
			break;
		}
		if (count && count - sent < n)
			n = (unsigned)(count - sent);
		uint64_t now = pktio_clock_ns(CLOCK_REALTIME);
		for (unsigned i = 0; i < n; i++) {
			struct payload p = {MAGIC, sent + i, now};
			memcpy(frames[i] + off, &p, sizeof(p));
		}
		int r = pktio_batch_send(fd, &b, 0, n, 0);
		if (r < 0) {
			errno = -r;
			if (errno != ENOBUFS && errno != EAGAIN)
				die("sendmmsg");
			errors++;
			continue;
		}
		sent += (uint64_t)r;
	}
	double secs = (double)(pktio_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	printf("{\"sent\":%llu,\"seconds\":%.6f,\"pps\":%.0f,\"errors\":%llu}\n",
	       (unsigned long long)sent, secs, secs > 0 ? (double)sent / secs : 0,
	       (unsigned long long)errors);
	return 0;
}

static int do_rx(const char *ifname, double duration, unsigned idle_ms, uint64_t count)
{
	int ifindex, fd = open_socket(ifname, &ifindex);
	int one = 1, rcvbuf = 32 << 20;
	uint64_t *owd = malloc(MAX_SAMPLES * sizeof(uint64_t));
	uint64_t frames = 0, bytes = 0, first = 0, last = 0, gaps = 0, inversions = 0;
	uint64_t next_seq = 0, nowd = 0, vlan_frames = 0;
	unsigned vlan_tci = 0;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 50000};

	if (!owd)
		die("malloc");
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)); /* VLAN tags */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	uint64_t start = pktio_clock_ns(CLOCK_MONOTONIC);
	uint64_t end = duration > 0 ? start + (uint64_t)(duration * 1e9) : UINT64_MAX;
	uint64_t last_mono = 0;
	printf("{\"ready\":true}\n");
	fflush(stdout);

	for (;;) {
		uint64_t now = pktio_clock_ns(CLOCK_MONOTONIC);
		if (now >= end || (count && frames >= count))
			break;
		if (frames && idle_ms && now - last_mono > idle_ms * 1000000ULL)
			break;
		uint8_t buf[MAX_FRAME];
		char ctrl[256];
		struct sockaddr_ll from;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr mh = {.msg_name = &from,
				    .msg_namelen = sizeof(from),
				    .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctrl,
				    .msg_controllen = sizeof(ctrl)};
		ssize_t r = recvmsg(fd, &mh, 0);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recvmsg");
		}
		if (from.sll_pkttype == PACKET_OUTGOING ||
		    r < 14 + (ssize_t)sizeof(struct payload) || buf[12] != ETHERTYPE_BENCH >> 8 ||
		    buf[13] != (ETHERTYPE_BENCH & 0xff))
			continue;
		struct payload p;
		memcpy(&p, buf + 14, sizeof(p));
		if (p.magic != MAGIC)
			continue;
		uint64_t rx_ns = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
				struct tpacket_auxdata aux;
				memcpy(&aux, CMSG_DATA(c), sizeof(aux));
				if (aux.tp_status & TP_STATUS_VLAN_VALID) {
					vlan_frames++;
					vlan_tci = aux.tp_vlan_tci;
				}
			}
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;
				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				rx_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
			}
		}
		if (!rx_ns)
			rx_ns = pktio_clock_ns(CLOCK_REALTIME);
		last_mono = pktio_clock_ns(CLOCK_MONOTONIC);
		if (!frames)
			first = rx_ns;
		last = rx_ns;
		frames++;
		bytes += (uint64_t)r;
		if (p.seq < next_seq)
			inversions++;
		else {
			gaps += p.seq - next_seq;
			next_seq = p.seq + 1;
		}
		if (nowd < MAX_SAMPLES && rx_ns > p.sent_ns)
			owd[nowd++] = (rx_ns - p.sent_ns) / 1000;
	}
	qsort(owd, nowd, sizeof(uint64_t), cmp_u64);
	double span = (double)(last - first) / 1e9;
	double mean = 0;
	for (uint64_t i = 0; i < nowd; i++)
		mean += (double)owd[i];
	mean = nowd ? mean / (double)nowd : 0;
	/* Rate between first and last arrival: (frames - 1) frames' worth of spacing. */
	double rate =
		frames > 1 && span > 0 ? (double)(bytes - bytes / frames) * 8 / span / 1e6 : 0;
	printf("{\"frames\":%llu,\"bytes\":%llu,\"span_s\":%.6f,\"rate_mbit\":%.4f,\"fps\":%.0f,"
	       "\"gaps\":%llu,\"inversions\":%llu,\"owd_us\":{\"mean\":%.1f,\"p50\":%llu,\"p99\":%"
	       "llu,"
	       "\"max\":%llu},\"vlan_frames\":%llu,\"vlan_tci\":%u}\n",
	       (unsigned long long)frames, (unsigned long long)bytes, span, rate,
	       frames > 1 && span > 0 ? (double)(frames - 1) / span : 0, (unsigned long long)gaps,
	       (unsigned long long)inversions, mean, (unsigned long long)(nowd ? owd[nowd / 2] : 0),
	       (unsigned long long)(nowd ? owd[(nowd * 99) / 100] : 0),
	       (unsigned long long)(nowd ? owd[nowd - 1] : 0), (unsigned long long)vlan_frames,
	       vlan_tci);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option OPTS[] = {
		{"size", required_argument, NULL, 's'},
		{"count", required_argument, NULL, 'n'},
		{"pps", required_argument, NULL, 'p'},
		{"mbit", required_argument, NULL, 'm'},
		{"duration", required_argument, NULL, 'd'},
		{"batch", required_argument, NULL, 'b'},
		{"idle-ms", required_argument, NULL, 'w'},
		{"vlan", required_argument, NULL, 'v'},
		{0},
	};
	const char *ifname = NULL;
	unsigned size = 1000, batch = 64, idle_ms = 500;
	int vlan = -1;
	uint64_t count = 0;
	double pps = 0, mbit = 0, duration = 0;
	int opt;

	if (argc < 2 || (strcmp(argv[1], "tx") && strcmp(argv[1], "rx"))) {
		fprintf(stderr, "usage: pktgen tx|rx -i IF [options] (see the source header)\n");
		return 2;
	}
	optind = 2;
	while ((opt = getopt_long(argc, argv, "i:", OPTS, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 's':
			size = (unsigned)atoi(optarg);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			pps = atof(optarg);
			break;
		case 'm':
			mbit = atof(optarg);
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'b':
			batch = (unsigned)atoi(optarg);
			break;
		case 'w':
			idle_ms = (unsigned)atoi(optarg);
			break;
		case 'v':
			vlan = atoi(optarg) & 0xfff;
			break;
		default:
			return 2;
		}
	}
	if (!ifname || size < 14 + sizeof(struct payload) || size > MAX_FRAME || batch < 1 ||
	    batch > MAX_BATCH) {
		fprintf(stderr, "pktgen: need -i IF, --size in [%zu, %d], --batch in [1, %d]\n",
			14 + sizeof(struct payload), MAX_FRAME, MAX_BATCH);
		return 2;
	}
	if (mbit > 0)
		pps = mbit * 1e6 / 8 / size;
	if (!strcmp(argv[1], "tx"))
		return do_tx(ifname, size, count, pps, duration, batch, vlan);
	return do_rx(ifname, duration, idle_ms, count);
}

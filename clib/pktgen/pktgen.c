/* SPDX-License-Identifier: Apache-2.0
 *
 * pktgen: the project's AF_PACKET frame generator and sink (clib/pktio's sockets and sendmmsg
 * batches), for linkem's tests and benchmark, the pdcp-agent benchmark and p4sim's switch
 * benchmark.
 *
 *   pktgen tx -i IF [--size 1000] [--count N] [--pps N | --mbit R] [--duration-s S]
 *             [--batch 64] [--vlan ID | --pdcp SN_BITS [--first N]]
 *   pktgen rx -i IF [--duration-s S] [--idle-ms 500] [--count N]
 *
 * tx sends, paced per frame (--pps/--mbit) or as fast as sendmmsg goes (neither, or 0):
 * - by default, Ethernet frames of ethertype 0x88B5 (IEEE local experimental) carrying a
 *   magic, a sequence number and the CLOCK_REALTIME send time (what rx counts);
 * - with --pdcp 18|12, PDCP data PDUs of a DC leg (DESIGN.md section 3): an IPv4/UDP packet
 *   behind a PDCP header whose SN is the frame's count (from --first) modulo 2^SN_BITS, the
 *   count also in the UDP payload.
 * It prints one JSON line: sent, seconds, pps, errors (full queues retried).
 * rx counts tx's default frames (others are ignored) and prints one JSON line: frames, bytes,
 * first/last arrival, the mean rate between them, one-way delay percentiles (kernel receive
 * timestamp minus send time, us), sequence gaps and inversions, and how many arrived with a
 * VLAN tag (the kernel reports it out of band) and the last TCI.
 *
 * Through a switch under test (p4sim's bench): frame HEX sent on IF, received on the RX
 * interfaces, its last 16 bytes overwritten with a sequence number and a CLOCK_MONOTONIC
 * send time (the switch only changes headers); each mode first waits for 300 ms of silence
 * (frames of an earlier test still queued in the switch):
 *   pktgen rate    -i IF --rx RX[,RX] --frame HEX --duration-s S --window N --copies N
 *                  closed loop, at most N frames in flight (a switch that duplicates returns
 *                  --copies frames per frame); JSON: sent, received, elapsed_s, best_second
 *   pktgen flood   -i IF --rx RX[,RX] --frame HEX --duration-s S
 *                  open loop, as fast as sendmmsg goes; the same JSON
 *   pktgen latency -i IF --rx RX[,RX] --frame HEX --pps P --count N
 *                  paced probes, one-way delay each; JSON: sent, received, p50_us, p99_us;
 *                  after the last, waits until every probe is back or none came back for 5 s
 *   pktgen latency -i IF --rx RX[,RX] --pdcp SN_BITS --size N [--first N] --pps P --count N
 *                  the same through a PDCP receiver (pdcp-agent): each probe is tx's PDCP
 *                  PDU of --size bytes, numbered from --first on like tx's (a receiver drops
 *                  a repeated SN as a duplicate: a second run continues the count); the
 *                  receiver strips the PDCP header and leaves the last 16 bytes as they are */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
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
	fprintf(stderr, "pktgen: error: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void usage_error(const char *msg, const char *value)
{
	fprintf(stderr, "pktgen: error: %s%s%s\n", msg, value ? ": " : "", value ? value : "");
	exit(2);
}

/* A whole number in [min, max], or exit 2 naming the option and the allowed range. */
static uint64_t parse_u64(const char *text, const char *option, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max) {
		fprintf(stderr,
			"pktgen: error: %s '%s': expected a whole number from %llu to %llu\n",
			option, text, (unsigned long long)min, (unsigned long long)max);
		exit(2);
	}
	return v;
}

/* A non-negative finite number, or exit 2. */
static double parse_nonneg(const char *text, const char *option)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || *end || !(v >= 0) || v > 1e12) {
		fprintf(stderr, "pktgen: error: %s '%s': expected a number >= 0\n", option, text);
		exit(2);
	}
	return v;
}

static int open_socket(const char *ifname, int *ifindex)
{
	int fd = pktio_socket(0);
	int one = 1;

	if (fd < 0) {
		errno = -fd;
		die("AF_PACKET socket");
	}
	*ifindex = pktio_bind(fd, ifname, ETH_P_ALL);
	if (*ifindex == -ENODEV) {
		fprintf(stderr, "pktgen: error: no interface '%s'\n", ifname);
		exit(1);
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

struct tx_options {
	unsigned size, batch;
	uint64_t count, first;
	double pps, duration;
	int vlan;	  /* -1: untagged */
	unsigned sn_bits; /* 0: bench frames; 18 or 12: PDCP data PDUs */
};

/* The bench frame's headers: broadcast, a local MAC, [802.1Q tag,] ethertype 0x88B5. Returns
 * where its payload (struct payload) starts. */
static unsigned bench_headers(uint8_t *f, int vlan)
{
	unsigned off = vlan >= 0 ? 18 : 14;
	memset(f, 0xff, 6);			      /* broadcast */
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6); /* local MAC */
	if (vlan >= 0) {			      /* 802.1Q tag: TPID 0x8100, TCI = VLAN id */
		f[12] = 0x81;
		f[13] = 0x00;
		f[14] = (uint8_t)(vlan >> 8);
		f[15] = (uint8_t)vlan;
	}
	f[off - 2] = ETHERTYPE_BENCH >> 8;
	f[off - 1] = ETHERTYPE_BENCH & 0xff;
	return off;
}

/* A PDCP data PDU of a DC leg (DESIGN.md section 3) without its SN: client and sender MACs,
 * ethertype 0x88B5, the PDCP header (D/C = 1), inner ethertype IPv4, an IPv4/UDP packet
 * 10.9.0.1:40000 -> 10.9.0.2:5000 filling the frame (IP checksum 0: nothing on the path
 * checks it). Returns where the PDCP header starts. */
static unsigned pdcp_headers(uint8_t *f, unsigned size, unsigned sn_bits)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0x0c, 0x01, 0x02, 0, 0, 0, 0x0a, 0x01};
	unsigned h = 14 + (sn_bits == 18 ? 3 : 2) + 2; /* IPv4 header */

	memcpy(f, macs, 12);
	f[12] = 0x88;
	f[13] = 0xB5;
	f[14] = 0x80;
	f[h - 2] = 0x08; /* inner ethertype IPv4 */
	f[h - 1] = 0x00;
	f[h] = 0x45;
	f[h + 2] = (uint8_t)((size - h) >> 8);
	f[h + 3] = (uint8_t)(size - h);
	f[h + 8] = 64;
	f[h + 9] = 17;
	memcpy(f + h + 12, (uint8_t[]){10, 9, 0, 1, 10, 9, 0, 2}, 8);
	f[h + 20] = 0x9c; /* UDP 40000 -> 5000 */
	f[h + 22] = 0x13;
	f[h + 23] = 0x88;
	f[h + 24] = (uint8_t)((size - h - 20) >> 8);
	f[h + 25] = (uint8_t)(size - h - 20);
	return 14;
}

/* Frame number `count`'s SN and count into a PDU made by pdcp_headers. */
static void pdcp_number(uint8_t *f, uint64_t count, unsigned sn_bits)
{
	uint32_t sn = (uint32_t)(count & ((1u << sn_bits) - 1));
	unsigned h = 14;

	if (sn_bits == 18) {
		f[h++] = (uint8_t)(0x80 | (sn >> 16));
		f[h++] = (uint8_t)(sn >> 8);
	} else {
		f[h++] = (uint8_t)(0x80 | (sn >> 8));
	}
	f[h] = (uint8_t)sn;
	memcpy(f + h + 3 + 28, &count, sizeof(count)); /* UDP payload */
}

static unsigned min_size(const struct tx_options *o)
{
	if (o->sn_bits)
		return 14 + 3 + 2 + 28 + 8; /* Ethernet, PDCP, inner ethertype, IPv4, UDP, count */
	return (o->vlan >= 0 ? 18 : 14) + sizeof(struct payload);
}

static int do_tx(const char *ifname, const struct tx_options *o)
{
	unsigned size = o->size, batch = o->batch, sn_bits = o->sn_bits, off = 0;
	uint64_t count = o->count;
	double pps = o->pps;

	if (size < min_size(o)) {
		fprintf(stderr,
			"pktgen: error: --size %u is too small for these frames (at least %u)\n",
			size, min_size(o));
		return 2;
	}
	int ifindex, fd = open_socket(ifname, &ifindex);
	static uint8_t frames[MAX_BATCH][MAX_FRAME];
	static struct pktio_batch b;
	int sndbuf = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	for (unsigned i = 0; i < batch; i++) {
		memset(frames[i], 0, size);
		off = sn_bits ? pdcp_headers(frames[i], size, sn_bits)
			      : bench_headers(frames[i], o->vlan);
		pktio_batch_set(&b, i, frames[i], size);
	}
	uint64_t start = pktio_clock_ns(CLOCK_MONOTONIC), sent = 0, errors = 0;
	uint64_t end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : UINT64_MAX;
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
			if (sn_bits) {
				pdcp_number(frames[i], o->first + sent + i, sn_bits);
				continue;
			}
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

/* ---- loops through a switch under test -------------------------------------------------- */

#define LOOP_BATCH 32
#define MAX_RX 4
#define MAX_PROBES 2000000 /* 10 s at 200,000 probes/s */
/* Probes still missing after the last was sent: how long none may come back before they
 * count as lost (a part under test that a busy machine holds up gets them through late) */
#define LATENCY_QUIET_NS 5000000000ull

struct loop_options {
	char *rx_list;
	const char *frame_hex;
	unsigned window, copies;
};

static int loop_socket(const char *ifname, int rx)
{
	uint16_t protocol = rx ? ETH_P_ALL : 0;
	int fd = pktio_socket(0), one = 1, big = 1 << 23;

	if (fd < 0) {
		errno = -fd;
		die("AF_PACKET socket");
	}
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, rx ? SO_RCVBUF : SO_SNDBUF, &big, sizeof big);
	if (!rx)
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
	int ifindex = pktio_bind(fd, ifname, protocol);
	if (ifindex < 0) {
		fprintf(stderr, "pktgen: error: %s: %s\n", ifname,
			ifindex == -ENODEV ? "no such interface" : strerror(-ifindex));
		exit(1);
	}
	return fd;
}

static int nrx;
static int rxfd[MAX_RX];
static uint8_t rxbuf[LOOP_BATCH][MAX_FRAME];
static unsigned flen;

/* Receive what is there on every RX socket; calls fn (if any) for each frame. */
static unsigned drain(void (*fn)(const uint8_t *, unsigned))
{
	struct mmsghdr m[LOOP_BATCH];
	struct iovec iov[LOOP_BATCH];
	unsigned total = 0;

	for (int r = 0; r < nrx; r++) {
		for (;;) {
			for (int i = 0; i < LOOP_BATCH; i++) {
				iov[i].iov_base = rxbuf[i], iov[i].iov_len = sizeof rxbuf[i];
				memset(&m[i], 0, sizeof m[i]);
				m[i].msg_hdr.msg_iov = &iov[i], m[i].msg_hdr.msg_iovlen = 1;
			}
			int n = recvmmsg(rxfd[r], m, LOOP_BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				break;
			for (int i = 0; fn && i < n; i++)
				fn(rxbuf[i], m[i].msg_len);
			total += (unsigned)n;
			if (n < LOOP_BATCH)
				break;
		}
	}
	return total;
}

/* Block until an RX socket has a frame, or `ms` pass. */
static void wait_readable(int ms)
{
	struct pollfd p[MAX_RX];

	for (int r = 0; r < nrx; r++)
		p[r] = (struct pollfd){.fd = rxfd[r], .events = POLLIN};
	poll(p, (nfds_t)nrx, ms);
}

static void stamp(uint8_t *f, uint64_t seq, uint64_t t)
{
	memcpy(f + flen - 16, &seq, 8);
	memcpy(f + flen - 8, &t, 8);
}

static unsigned send_frames(int fd, uint8_t (*bufs)[MAX_FRAME], unsigned n)
{
	static struct pktio_batch b;
	for (unsigned i = 0; i < n; i++)
		pktio_batch_set(&b, i, bufs[i], flen);
	int r = pktio_batch_send(fd, &b, 0, n, MSG_DONTWAIT);
	return r > 0 ? (unsigned)r : 0;
}

static uint64_t probe_seen[MAX_PROBES / 64 + 1];
static double probe_us[MAX_PROBES];
static unsigned nprobes;

static void on_probe(const uint8_t *f, unsigned n)
{
	uint64_t seq, t;

	if (n < 16)
		return;
	memcpy(&seq, f + n - 16, 8);
	memcpy(&t, f + n - 8, 8);
	/* t == 0: a late frame of a rate test; a seen seq: a second copy (duplication) */
	if (t == 0 || seq >= MAX_PROBES || (probe_seen[seq / 64] >> (seq % 64) & 1))
		return;
	probe_seen[seq / 64] |= 1ull << (seq % 64);
	probe_us[nprobes++] = (double)(pktio_clock_ns(CLOCK_MONOTONIC) - t) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void wait_for_silence(void)
{
	for (uint64_t quiet = pktio_clock_ns(CLOCK_MONOTONIC), give_up = quiet + 5000000000ull;
	     pktio_clock_ns(CLOCK_MONOTONIC) < give_up;) {
		if (drain(NULL))
			quiet = pktio_clock_ns(CLOCK_MONOTONIC);
		else if (pktio_clock_ns(CLOCK_MONOTONIC) - quiet > 300000000ull)
			break;
	}
}

static int do_latency(int tx, uint8_t (*bufs)[MAX_FRAME], double pps, uint64_t count,
		      const struct tx_options *o)
{
	uint64_t gap = (uint64_t)(1e9 / pps), next = pktio_clock_ns(CLOCK_MONOTONIC);

	if (count > MAX_PROBES)
		count = MAX_PROBES;
	for (uint64_t seq = 0; seq < count; seq++) {
		while (pktio_clock_ns(CLOCK_MONOTONIC) < next)
			drain(on_probe);
		if (o->sn_bits)
			pdcp_number(bufs[0], o->first + seq, o->sn_bits);
		stamp(bufs[0], seq, pktio_clock_ns(CLOCK_MONOTONIC) | 1);
		send_frames(tx, bufs, 1);
		next += gap;
	}
	/* The last probes' way back, polled at once as the others were for 200 ms; then, while
	 * some are missing, waited for without spinning */
	for (uint64_t end = pktio_clock_ns(CLOCK_MONOTONIC) + 200000000ull;
	     nprobes < count && pktio_clock_ns(CLOCK_MONOTONIC) < end;)
		drain(on_probe);
	for (uint64_t quiet = pktio_clock_ns(CLOCK_MONOTONIC);
	     nprobes < count && pktio_clock_ns(CLOCK_MONOTONIC) - quiet < LATENCY_QUIET_NS;) {
		unsigned before = nprobes;
		wait_readable(100);
		drain(on_probe);
		if (nprobes > before)
			quiet = pktio_clock_ns(CLOCK_MONOTONIC);
	}
	qsort(probe_us, nprobes, sizeof *probe_us, cmp_double);
	double p50 = nprobes ? probe_us[nprobes / 2] : -1,
	       p99 = nprobes ? probe_us[(unsigned)(nprobes * 0.99)] : -1;
	printf("{\"sent\": %llu, \"received\": %u, \"p50_us\": %.1f, \"p99_us\": %.1f}\n",
	       (unsigned long long)count, nprobes, p50, p99);
	return 0;
}

/* rate (window > 0) or flood (window 0: no limit, copies 1). */
static int do_rate(int tx, uint8_t (*bufs)[MAX_FRAME], double seconds, unsigned window,
		   unsigned copies)
{
	int flood = window == 0;
	uint64_t start = pktio_clock_ns(CLOCK_MONOTONIC), end = start + (uint64_t)(seconds * 1e9);
	uint64_t seq = 0, sent = 0, received = 0, in_flight = 0, last_rx = start, best = 0;
	uint64_t sec_start = start, sec_count = 0;

	while (pktio_clock_ns(CLOCK_MONOTONIC) < end) {
		uint64_t room = flood ? LOOP_BATCH : in_flight < window ? window - in_flight : 0;
		if (room > LOOP_BATCH)
			room = LOOP_BATCH;
		if (room) {
			for (unsigned i = 0; i < room; i++)
				stamp(bufs[i], seq++, 0);
			unsigned n = send_frames(tx, bufs, (unsigned)room);
			sent += n;
			in_flight += n;
		}
		unsigned got = drain(NULL);
		uint64_t now = pktio_clock_ns(CLOCK_MONOTONIC);
		if (got)
			last_rx = now;
		received += got;
		sec_count += got;
		if (now - sec_start >= 1000000000ull) {
			if (sec_count > best)
				best = sec_count;
			sec_start = now, sec_count = 0;
		}
		uint64_t done = got / copies;
		in_flight = in_flight > done ? in_flight - done : 0;
		if (!flood && in_flight && now - last_rx > 20000000ull)
			in_flight = 0; /* lost: refill */
	}
	double elapsed = (double)(pktio_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	printf("{\"sent\": %llu, \"received\": %llu, \"elapsed_s\": %.3f, \"best_second\": %llu}\n",
	       (unsigned long long)sent, (unsigned long long)received, elapsed,
	       (unsigned long long)best);
	return 0;
}

static int do_loop(const char *mode, const char *ifname, const struct tx_options *o,
		   const struct loop_options *l)
{
	static uint8_t bufs[LOOP_BATCH][MAX_FRAME];
	const char *hex = l->frame_hex;
	int latency = !strcmp(mode, "latency"), flood = !strcmp(mode, "flood");

	if (latency && o->sn_bits && !hex) {
		if (o->size < min_size(o) + 16)
			usage_error("latency --pdcp needs --size of at least 71 bytes", NULL);
		flen = o->size;
		pdcp_headers(bufs[0], flen, o->sn_bits);
	} else if (!l->rx_list || !hex || o->sn_bits) {
		usage_error("rate, flood and latency need --rx RX[,RX] and --frame HEX (latency: "
			    "or --pdcp SN_BITS --size N)",
			    NULL);
	}
	if (!l->rx_list)
		usage_error("rate, flood and latency need --rx RX[,RX]", NULL);
	if (latency && (!(o->pps > 0) || !o->count))
		usage_error("latency needs --pps P and --count N, both above 0", NULL);
	if (!latency && !(o->duration > 0))
		usage_error("rate and flood need --duration-s S above 0", NULL);
	if (!latency && !flood && (!l->window || !l->copies))
		usage_error("rate needs --window N and --copies N, both above 0", NULL);
	if (hex) {
		flen = (unsigned)(strlen(hex) / 2);
		if (strlen(hex) % 2 || flen < 32 || flen > MAX_FRAME ||
		    strspn(hex, "0123456789abcdefABCDEF") != strlen(hex))
			usage_error("--frame: expected 32 to 2048 bytes in hex", NULL);
		for (unsigned i = 0; i < flen; i++)
			sscanf(hex + 2 * i, "%2hhx", &bufs[0][i]);
	}
	for (int i = 1; i < LOOP_BATCH; i++)
		memcpy(bufs[i], bufs[0], flen);
	int tx = loop_socket(ifname, 0);
	for (char *rx = strtok(l->rx_list, ","); rx; rx = strtok(NULL, ",")) {
		if (nrx == MAX_RX)
			usage_error("--rx: at most 4 interfaces", NULL);
		rxfd[nrx++] = loop_socket(rx, 1);
	}
	wait_for_silence();
	if (latency)
		return do_latency(tx, bufs, o->pps, o->count, o);
	if (flood)
		return do_rate(tx, bufs, o->duration, 0, 1);
	return do_rate(tx, bufs, o->duration, l->window, l->copies);
}

int main(int argc, char **argv)
{
	static const struct option OPTS[] = {
		{"size", required_argument, NULL, 's'},
		{"count", required_argument, NULL, 'n'},
		{"pps", required_argument, NULL, 'p'},
		{"mbit", required_argument, NULL, 'm'},
		{"duration-s", required_argument, NULL, 'd'},
		{"duration", required_argument, NULL, 'D'}, /* old name, one release */
		{"batch", required_argument, NULL, 'b'},
		{"idle-ms", required_argument, NULL, 'w'},
		{"vlan", required_argument, NULL, 'v'},
		{"pdcp", required_argument, NULL, 'P'},
		{"first", required_argument, NULL, 'f'},
		{"rx", required_argument, NULL, 'R'},
		{"frame", required_argument, NULL, 'F'},
		{"window", required_argument, NULL, 'W'},
		{"copies", required_argument, NULL, 'K'},
		{0},
	};
	const char *ifname = NULL;
	struct tx_options o = {.size = 1000, .batch = 64, .vlan = -1};
	struct loop_options l = {0};
	const char *mode = argc > 1 ? argv[1] : "";
	const char *const MODES[] = {"tx", "rx", "rate", "flood", "latency"};
	unsigned m = 0;
	unsigned idle_ms = 500;
	double mbit = 0;
	int opt;

	while (m < sizeof MODES / sizeof *MODES && strcmp(mode, MODES[m]))
		m++;
	if (m == sizeof MODES / sizeof *MODES) {
		fprintf(stderr,
			"pktgen: error: expected tx, rx, rate, flood or latency, then -i IF "
			"[options] (see clib/pktgen/pktgen.c's header)\n");
		return 2;
	}
	optind = 2;
	while ((opt = getopt_long(argc, argv, "i:", OPTS, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 's':
			o.size = (unsigned)parse_u64(optarg, "--size", 1, MAX_FRAME);
			break;
		case 'n':
			o.count = parse_u64(optarg, "--count", 0, UINT64_MAX);
			break;
		case 'p':
			o.pps = parse_nonneg(optarg, "--pps");
			break;
		case 'm':
			mbit = parse_nonneg(optarg, "--mbit");
			break;
		case 'D':
			fprintf(stderr,
				"pktgen: warning: --duration is deprecated; use --duration-s\n");
			/* fall through */
		case 'd':
			o.duration = parse_nonneg(optarg, "--duration-s");
			break;
		case 'b':
			o.batch = (unsigned)parse_u64(optarg, "--batch", 1, MAX_BATCH);
			break;
		case 'w':
			idle_ms = (unsigned)parse_u64(optarg, "--idle-ms", 0, 3600000);
			break;
		case 'v':
			o.vlan = (int)parse_u64(optarg, "--vlan", 0, 4095);
			break;
		case 'P':
			o.sn_bits = (unsigned)parse_u64(optarg, "--pdcp", 12, 18);
			if (o.sn_bits != 12 && o.sn_bits != 18)
				usage_error("--pdcp takes the SN length, 12 or 18", optarg);
			break;
		case 'f':
			o.first = parse_u64(optarg, "--first", 0, UINT64_MAX);
			break;
		case 'R':
			l.rx_list = optarg;
			break;
		case 'F':
			l.frame_hex = optarg;
			break;
		case 'W':
			l.window = (unsigned)parse_u64(optarg, "--window", 1, 1u << 20);
			break;
		case 'K':
			l.copies = (unsigned)parse_u64(optarg, "--copies", 1, 64);
			break;
		default: /* getopt named the option */
			return 2;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument", argv[optind]);
	if (!ifname)
		usage_error("-i IF is required", NULL);
	if (o.sn_bits && o.vlan >= 0)
		usage_error("--pdcp frames carry no VLAN tag: give --pdcp or --vlan", NULL);
	if (mbit > 0)
		o.pps = mbit * 1e6 / 8 / o.size;
	if (!strcmp(mode, "tx"))
		return do_tx(ifname, &o);
	if (!strcmp(mode, "rx"))
		return do_rx(ifname, o.duration, idle_ms, o.count);
	return do_loop(mode, ifname, &o, &l);
}

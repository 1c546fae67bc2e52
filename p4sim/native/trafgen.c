/* SPDX-License-Identifier: Apache-2.0
 *
 * trafgen: the traffic side of `python -m p4sim.bench` (built on first use, cached), fast
 * enough to load a switch at several hundred thousand frames per second from one core.
 *
 *   trafgen rate    TX RX[,RX] HEXFRAME SECONDS WINDOW COPIES   closed loop, <= WINDOW in flight
 *   trafgen flood   TX RX[,RX] HEXFRAME SECONDS                 open loop, as fast as sendmmsg goes
 *   trafgen latency TX RX[,RX] HEXFRAME PPS COUNT               paced; one-way delay per frame
 *   trafgen fwd     IN OUT SECONDS                              the raw veth + AF_PACKET ceiling:
 *                   io.c's TPACKET ring and sendmmsg, forwarding IN -> OUT untouched
 *
 * Sockets and sendmmsg batches are clib/pktio's (included through io.c).
 *
 * Frames carry a sequence number and the CLOCK_MONOTONIC send time in their last 16 bytes
 * (the switch under test only changes headers). One JSON line on stdout.
 */
#include "io.c"

#include <stdio.h>
#include <time.h>

#define BATCH 32
#define MAXRX 4
#define MAXLAT 200000

static int open_if(const char *ifname, int rx)
{
	uint16_t protocol = rx ? ETH_P_ALL : 0;
	int fd = pktio_socket(protocol, 0);
	if (fd < 0) {
		fprintf(stderr, "trafgen: socket: %s\n", strerror(-fd));
		exit(2);
	}
	int one = 1, big = 1 << 23;
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, rx ? SO_RCVBUF : SO_SNDBUF, &big, sizeof big);
	if (!rx)
		setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
	if (pktio_bind(fd, ifname, protocol) < 0) {
		fprintf(stderr, "trafgen: %s: cannot bind\n", ifname);
		exit(2);
	}
	return fd;
}

static int nrx;
static int rxfd[MAXRX];
static uint8_t rxbuf[BATCH][2048];

/* Receive what is there on every RX socket; calls fn for each frame. */
static unsigned drain(void (*fn)(const uint8_t *, unsigned))
{
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	unsigned total = 0;
	for (int r = 0; r < nrx; r++) {
		for (;;) {
			for (int i = 0; i < BATCH; i++) {
				iov[i].iov_base = rxbuf[i], iov[i].iov_len = sizeof rxbuf[i];
				memset(&m[i], 0, sizeof m[i]);
				m[i].msg_hdr.msg_iov = &iov[i], m[i].msg_hdr.msg_iovlen = 1;
			}
			int n = recvmmsg(rxfd[r], m, BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				break;
			for (int i = 0; i < n; i++)
				if (fn)
					fn(rxbuf[i], m[i].msg_len);
			total += n;
			if (n < BATCH)
				break;
		}
	}
	return total;
}

static uint8_t frame[2048];
static unsigned flen;

static void stamp(uint8_t *f, uint64_t seq, uint64_t t)
{
	memcpy(f + flen - 16, &seq, 8);
	memcpy(f + flen - 8, &t, 8);
}

static unsigned send_batch(int fd, uint8_t (*bufs)[2048], unsigned n)
{
	static struct pktio_batch b;
	for (unsigned i = 0; i < n; i++)
		pktio_batch_set(&b, i, bufs[i], flen);
	int r = pktio_batch_send(fd, &b, 0, n, MSG_DONTWAIT);
	return r > 0 ? (unsigned)r : 0;
}

static uint64_t lat_seen[MAXLAT / 64 + 1];
static double lat[MAXLAT];
static unsigned nlat;

static void on_latency(const uint8_t *f, unsigned n)
{
	if (n < 16)
		return;
	uint64_t seq, t;
	memcpy(&seq, f + n - 16, 8);
	memcpy(&t, f + n - 8, 8);
	/* t == 0: a frame of the rate tests, late; a seen seq: a second copy (duplication) */
	if (t == 0 || seq >= MAXLAT || (lat_seen[seq / 64] >> (seq % 64) & 1))
		return;
	lat_seen[seq / 64] |= 1ull << (seq % 64);
	lat[nlat++] = (pktio_clock_ns(CLOCK_MONOTONIC) - t) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void open_rx(char *list)
{
	for (char *s = strtok(list, ","); s && nrx < MAXRX; s = strtok(NULL, ","))
		rxfd[nrx++] = open_if(s, 1);
}

static void parse_frame(const char *hex)
{
	flen = strlen(hex) / 2;
	if (flen < 32 || flen > sizeof frame) {
		fprintf(stderr, "trafgen: frame size\n");
		exit(2);
	}
	for (unsigned i = 0; i < flen; i++)
		sscanf(hex + 2 * i, "%2hhx", &frame[i]);
}

/* ------------------------------------------------------------------ the raw ceiling */
static size_t forward_to_1(void *dev, uint32_t port, const uint8_t *f, size_t n, uint8_t **out)
{
	static uint8_t buf[70000];
	(void)dev, (void)port;
	uint32_t p = 1, len = (uint32_t)n;
	memcpy(buf, &p, 4);
	memcpy(buf + 4, &len, 4);
	memcpy(buf + 8, f, n);
	*out = buf;
	return n + 8;
}

static void *stopper(void *arg)
{
	struct io *io = arg;
	sleep(io->stop ? 0 : (unsigned)(uintptr_t)io->dev);
	p4nio_stop(io);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: see the comment at the top of trafgen.c\n");
		return 2;
	}
	const char *mode = argv[1];
	if (!strcmp(mode, "fwd")) {
		struct io *io = p4nio_new();
		if (p4nio_add_port(io, 0, argv[2], 1500, NULL) ||
		    p4nio_add_port(io, 1, argv[3], 1500, NULL)) {
			fprintf(stderr, "trafgen: cannot open %s/%s\n", argv[2], argv[3]);
			return 2;
		}
		p4nio_set_pipeline(io, forward_to_1, NULL, NULL, (void *)(uintptr_t)atoi(argv[4]),
				   -1);
		pthread_t t;
		pthread_create(&t, NULL, stopper, io);
		p4nio_run(io);
		printf("{\"rx\": %llu, \"tx\": %llu}\n", (unsigned long long)io->rx,
		       (unsigned long long)io->tx);
		return 0;
	}
	int tx = open_if(argv[2], 0);
	open_rx(argv[3]);
	parse_frame(argv[4]);
	static uint8_t bufs[BATCH][2048];
	for (int i = 0; i < BATCH; i++)
		memcpy(bufs[i], frame, flen);
	uint64_t seq = 0;
	/* Frames of an earlier test still queued in the switch: wait for 300 ms of silence. */
	for (uint64_t quiet = pktio_clock_ns(CLOCK_MONOTONIC), give_up = quiet + 5000000000ull;
	     pktio_clock_ns(CLOCK_MONOTONIC) < give_up;) {
		if (drain(NULL))
			quiet = pktio_clock_ns(CLOCK_MONOTONIC);
		else if (pktio_clock_ns(CLOCK_MONOTONIC) - quiet > 300000000ull)
			break;
	}
	if (!strcmp(mode, "latency")) {
		double pps = atof(argv[5]);
		unsigned count = (unsigned)atoi(argv[6]);
		if (count > MAXLAT)
			count = MAXLAT;
		uint64_t gap = (uint64_t)(1e9 / pps), next = pktio_clock_ns(CLOCK_MONOTONIC);
		for (unsigned i = 0; i < count; i++) {
			while (pktio_clock_ns(CLOCK_MONOTONIC) < next)
				drain(on_latency);
			stamp(bufs[0], seq++, pktio_clock_ns(CLOCK_MONOTONIC) | 1);
			send_batch(tx, bufs, 1);
			next += gap;
		}
		uint64_t end = pktio_clock_ns(CLOCK_MONOTONIC) + 200000000ull;
		while (pktio_clock_ns(CLOCK_MONOTONIC) < end)
			drain(on_latency);
		qsort(lat, nlat, sizeof *lat, cmp_double);
		double p50 = nlat ? lat[nlat / 2] : -1,
		       p99 = nlat ? lat[(unsigned)(nlat * 0.99)] : -1;
		printf("{\"sent\": %u, \"received\": %u, \"p50_us\": %.1f, \"p99_us\": %.1f}\n",
		       count, nlat, p50, p99);
		return 0;
	}
	double seconds = atof(argv[5]);
	int flood = !strcmp(mode, "flood");
	unsigned window = flood ? ~0u : (unsigned)atoi(argv[6]);
	unsigned copies = flood ? 1 : (unsigned)atoi(argv[7]);
	uint64_t start = pktio_clock_ns(CLOCK_MONOTONIC), end = start + (uint64_t)(seconds * 1e9),
		 sent = 0, received = 0;
	uint64_t in_flight = 0, last_rx = start, best = 0, sec_start = start, sec_count = 0;
	while (pktio_clock_ns(CLOCK_MONOTONIC) < end) {
		unsigned room = in_flight < window ? (unsigned)(window - in_flight) : 0;
		if (room > BATCH)
			room = BATCH;
		if (room) {
			for (unsigned i = 0; i < room; i++)
				stamp(bufs[i], seq++, 0);
			unsigned n = send_batch(tx, bufs, room);
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
		uint64_t done = got / (copies ? copies : 1);
		in_flight = in_flight > done ? in_flight - done : 0;
		if (!flood && in_flight && now - last_rx > 20000000ull)
			in_flight = 0; /* lost: refill */
	}
	double el = (pktio_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	printf("{\"sent\": %llu, \"received\": %llu, \"elapsed_s\": %.3f, \"best_second\": %llu}\n",
	       (unsigned long long)sent, (unsigned long long)received, el,
	       (unsigned long long)best);
	return 0;
}

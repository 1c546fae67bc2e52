/* SPDX-License-Identifier: Apache-2.0
 * linkem: a user-space link emulator bridging two interfaces at layer 2.
 *
 * Frames received on IF_A go through the "ab" link (link.c) and leave on IF_B; frames
 * received on IF_B go through "ba" and leave on IF_A.  One thread: an epoll loop over the
 * two AF_PACKET sockets (frames in through a TPACKET_V2 receive ring, out through sendmmsg),
 * a timerfd armed for the next departure, a signalfd and the control socket.  Timing is CLOCK_MONOTONIC; the last --busy-poll-us before a departure
 * are spent polling instead of sleeping, so idle costs nothing and a busy link is precise. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "feedback.h"
#include "hist.h"
#include "link.h"
#include "spec.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define SLOT_BYTES 2048         /* one frame buffer: MTU up to SLOT_BYTES - 18 */
#define FRAMES_PER_DIRECTION 65536 /* frames held at once (queue + delay line) */
#define BATCH 64                /* frames per recvmmsg / sendmmsg */
#define RX_FRAMES_PER_WAKE 1024 /* bound the receive work between departures */
#define RING_FRAME_BYTES 4096   /* one frame per page: header + up to SLOT_BYTES of frame */
#define RING_FRAMES 4096        /* 16 MiB receive ring per interface */
#define MAX_CLIENTS 8
#define CLIENT_BUF 4096
#define DEFAULT_BUSY_POLL_US 20
#define DEFAULT_STATS_INTERVAL_MS 100

enum { AB, BA, NDIR };
static const char *const DIR_NAMES[NDIR] = { "ab", "ba" };

/* Delay figures over a window of frames (a stats interval, or between `stats` commands). */
struct window {
	struct hist delay; /* departure - arrival, us: what the link applied */
	struct hist late;  /* departure - due time, us: linkem's own timing error */
};

struct direction {
	const char *name;
	struct link link;
	int in_fd, out_fd; /* receive on in_fd, send on out_fd */
	uint8_t *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t *slot_len; /* frame length per slot, for the feedback's loss accounting */
	uint8_t *ring; /* receive ring of in_fd */
	uint32_t ring_idx;
	uint64_t drop_oversize, drop_tx, drop_rx;
	struct window file_win, ctl_win;
	struct fb *fb; /* leg feedback on this direction's PDUs (--feedback), or NULL */
};

struct client {
	int fd;
	size_t len;
	char buf[CLIENT_BUF];
};

struct linkem {
	const char *ifname[NDIR]; /* IF_A, IF_B */
	int sock[NDIR];
	struct direction dir[NDIR];
	int epfd, timerfd, sigfd, ctl_fd;
	const char *ctl_path;
	struct client clients[MAX_CLIENTS];
	FILE *stats;
	uint64_t stats_interval_ns, next_stats_ns, last_stats_ns;
	uint64_t busy_ns;
	uint64_t timer_armed_ns;
	int quit, exit_code;
	struct fb fb;  /* --feedback: reports on "ab" PDUs, sent out of IF_A */
	bool fb_on;
	uint64_t fb_sent, fb_send_errors;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("linkem: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- frame buffers -------------------------------------------------------------------- */

static void release_slot(void *ctx, uint32_t handle)
{
	struct direction *d = ctx;

	d->free_slots[d->nfree++] = handle;
}

/* The link sent a frame (serialized, not lost): the feedback's drain. */
static void frame_sent(void *ctx, uint32_t handle, uint32_t len)
{
	struct direction *d = ctx;

	if (d->fb)
		fb_sent(d->fb, d->slots + (size_t)handle * SLOT_BYTES, len);
}

/* The link lost an accepted frame (loss or Gilbert-Elliott): feedback reports its SN. */
static void release_lost(void *ctx, uint32_t handle)
{
	struct direction *d = ctx;

	if (d->fb) {
		uint8_t *slot = d->slots + (size_t)handle * SLOT_BYTES;
		fb_lost(d->fb, slot, d->slot_len[handle], true);
	}
	release_slot(ctx, handle);
}

/* Frames the kernel dropped because the ring was full (the counter resets on read). */
static void collect_ring_drops(struct direction *d)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(d->in_fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		d->drop_rx += st.tp_drops;
}

static void direction_alloc(struct direction *d)
{
	size_t bytes = (size_t)FRAMES_PER_DIRECTION * SLOT_BYTES;

	/* Pages are touched only when a frame lands there: a short queue stays small. */
	d->slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0);
	d->free_slots = malloc(FRAMES_PER_DIRECTION * sizeof(uint32_t));
	d->slot_len = calloc(FRAMES_PER_DIRECTION, sizeof(uint32_t));
	if (d->slots == MAP_FAILED || !d->free_slots || !d->slot_len)
		die("out of memory for %d frame buffers", FRAMES_PER_DIRECTION);
	/* Lowest slots on top of the stack: reuse keeps the working set small. */
	for (uint32_t i = 0; i < FRAMES_PER_DIRECTION; i++)
		d->free_slots[i] = FRAMES_PER_DIRECTION - 1 - i;
	d->nfree = FRAMES_PER_DIRECTION;
}

/* ---- interfaces ------------------------------------------------------------------------ */

static int ethtool_get(int fd, const char *ifname, uint32_t cmd)
{
	struct ethtool_value ev = { .cmd = cmd };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (char *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return 0; /* not supported: cannot be on */
	return ev.data != 0;
}

/* AF_PACKET readers need real checksums and no GSO/GRO super-frames: refuse to start
 * otherwise, with the command that fixes it. */
static void check_interface(const char *ifname)
{
	static const struct { uint32_t cmd; const char *name; } OFFLOADS[] = {
		{ ETHTOOL_GTXCSUM, "tx-checksumming" },
		{ ETHTOOL_GTSO, "tso" },
		{ ETHTOOL_GGSO, "gso" },
		{ ETHTOOL_GGRO, "gro" },
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	char on[128] = "";

	if (fd < 0)
		die("socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		die("no interface '%s' in this network namespace (see `ip link`)", ifname);
	if (!(ifr.ifr_flags & IFF_UP))
		die("interface '%s' is down; fix: ip link set %s up", ifname, ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > SLOT_BYTES - 18)
		die("interface '%s' has MTU %d; linkem carries frames of MTU up to %d", ifname,
		    ifr.ifr_mtu, SLOT_BYTES - 18);
	for (unsigned i = 0; i < sizeof(OFFLOADS) / sizeof(OFFLOADS[0]); i++)
		if (ethtool_get(fd, ifname, OFFLOADS[i].cmd)) {
			strcat(on, " ");
			strcat(on, OFFLOADS[i].name);
		}
	close(fd);
	if (on[0])
		die("offloads on '%s':%s. AF_PACKET would see partial checksums and GSO/GRO "
		    "super-frames (TCP breaks silently). Fix, on this interface and on its veth "
		    "peer: ethtool -K %s tx off tso off gso off gro off",
		    ifname, on, ifname);
}

static int open_packet_socket(const char *ifname, uint8_t **ring)
{
	unsigned ifindex = if_nametoindex(ifname);
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, bufsize = 8 << 20;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)ifindex,
	};
	struct packet_mreq mr = { .mr_ifindex = (int)ifindex, .mr_type = PACKET_MR_PROMISC };

	if (fd < 0)
		die("AF_PACKET socket: %s (linkem needs root or CAP_NET_RAW)", strerror(errno));
	if (!ifindex)
		die("no interface '%s' in this network namespace (see `ip link`)", ifname);
	/* Our own transmissions on this interface are not input. */
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0)
		die("PACKET_IGNORE_OUTGOING on %s: %s (needs Linux >= 4.20)", ifname, strerror(errno));
	/* linkem is the qdisc: skip the kernel's. */
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	int version = TPACKET_V2;
	struct tpacket_req req = {
		.tp_block_size = RING_FRAME_BYTES,
		.tp_block_nr = RING_FRAMES,
		.tp_frame_size = RING_FRAME_BYTES,
		.tp_frame_nr = RING_FRAMES,
	};
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		die("receive ring on %s: %s", ifname, strerror(errno));
	*ring = mmap(NULL, (size_t)RING_FRAMES * RING_FRAME_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	if (*ring == MAP_FAILED)
		die("mmap receive ring of %s: %s", ifname, strerror(errno));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die("bind AF_PACKET to %s: %s", ifname, strerror(errno));
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		die("promiscuous mode on %s: %s", ifname, strerror(errno));
	return fd;
}

/* ---- stats ---------------------------------------------------------------------------- */

struct strbuf {
	char *p;
	size_t len, cap;
};

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		size_t room = sb->cap - sb->len;
		va_start(ap, fmt);
		int n = vsnprintf(sb->p + sb->len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			sb->len += (size_t)n;
			return;
		}
		sb->cap = sb->cap * 2 + (size_t)n;
		sb->p = realloc(sb->p, sb->cap);
		if (!sb->p)
			die("out of memory");
	}
}

static void sb_json_string(struct strbuf *sb, const char *s)
{
	sb_printf(sb, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_printf(sb, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			sb_printf(sb, "\\u%04x", *s);
		else
			sb_printf(sb, "%c", *s);
	}
	sb_printf(sb, "\"");
}

static void sb_config(struct strbuf *sb, const struct link_config *c)
{
	sb_printf(sb, "{\"rate_mbit\":%.6g,\"burst_bytes\":%llu,\"trace\":",
		  c->trace ? trace_mean_mbit(c->trace) : c->rate_bps / 1e6,
		  (unsigned long long)c->burst_bytes);
	if (c->trace)
		sb_json_string(sb, c->trace->path);
	else
		sb_printf(sb, "null");
	sb_printf(sb,
		  ",\"queue_pkts\":%llu,\"queue_bytes\":%llu,\"delay_ms\":%.6g,\"delay_sd_ms\":%.6g,"
		  "\"dist\":\"%s\",\"reorder\":%d,\"loss\":%.6g,\"ge\":",
		  (unsigned long long)c->queue_pkts, (unsigned long long)c->queue_bytes,
		  c->delay_ns / 1e6, link_delay_sd_ns(c) / 1e6, dist_name(c->dist), c->reorder, c->loss);
	if (c->ge)
		sb_printf(sb, "[%.6g,%.6g,%.6g,%.6g]}", c->ge_p, c->ge_r, c->ge_1h, c->ge_1k);
	else
		sb_printf(sb, "null}");
}

/* The body of one direction's record (without braces), consuming the window. */
static void sb_direction(struct strbuf *sb, struct direction *d, struct window *w)
{
	const struct link *l = &d->link;
	const struct link_counters *c = &l->c;

	collect_ring_drops(d);
	sb_printf(sb,
		  "\"frames\":%llu,\"bytes\":%llu,\"rx_frames\":%llu,\"rx_bytes\":%llu,"
		  "\"queue_pkts\":%u,\"queue_bytes\":%llu,\"in_flight\":%u,"
		  "\"drops\":{\"queue\":%llu,\"loss\":%llu,\"ge\":%llu,\"nobuf\":%llu,\"oversize\":%llu,"
		  "\"tx\":%llu,\"rx\":%llu},",
		  (unsigned long long)c->tx_frames, (unsigned long long)c->tx_bytes,
		  (unsigned long long)c->rx_frames, (unsigned long long)c->rx_bytes, link_queue_len(l),
		  (unsigned long long)link_queue_bytes(l), link_delay_line_len(l),
		  (unsigned long long)c->drop_queue, (unsigned long long)c->drop_loss,
		  (unsigned long long)c->drop_ge, (unsigned long long)c->drop_nobuf,
		  (unsigned long long)d->drop_oversize, (unsigned long long)d->drop_tx,
		  (unsigned long long)d->drop_rx);
	sb_printf(sb,
		  "\"delay_us\":{\"n\":%llu,\"mean\":%.1f,\"p50\":%llu,\"p99\":%llu,\"max\":%llu},"
		  "\"late_us\":{\"p50\":%llu,\"p99\":%llu,\"max\":%llu},",
		  (unsigned long long)w->delay.count, hist_mean(&w->delay),
		  (unsigned long long)hist_percentile(&w->delay, 0.5),
		  (unsigned long long)hist_percentile(&w->delay, 0.99),
		  (unsigned long long)w->delay.max, (unsigned long long)hist_percentile(&w->late, 0.5),
		  (unsigned long long)hist_percentile(&w->late, 0.99), (unsigned long long)w->late.max);
	sb_printf(sb, "\"rate_mbit\":%.6g,\"config\":",
		  l->cfg.trace ? trace_mean_mbit(l->cfg.trace) : l->cfg.rate_bps / 1e6);
	sb_config(sb, &l->cfg);
	hist_reset(&w->delay);
	hist_reset(&w->late);
}

static void write_stats(struct linkem *e, uint64_t now, int final)
{
	struct strbuf sb = { 0 };

	if (!e->stats)
		return;
	for (int i = 0; i < NDIR; i++) {
		sb.len = 0;
		sb_printf(&sb, "{\"ts_ms\":%.3f,\"dir\":\"%s\",\"interval_ms\":%.3f,", now / 1e6,
			  DIR_NAMES[i], (now - e->last_stats_ns) / 1e6);
		sb_direction(&sb, &e->dir[i], &e->dir[i].file_win);
		if (i == AB && e->fb_on)
			sb_printf(&sb, ",\"feedback\":{\"sent\":%llu,\"errors\":%llu}",
				  (unsigned long long)e->fb_sent, (unsigned long long)e->fb_send_errors);
		sb_printf(&sb, "%s}\n", final ? ",\"final\":true" : "");
		fwrite(sb.p, 1, sb.len, e->stats);
	}
	fflush(e->stats);
	free(sb.p);
	e->last_stats_ns = now;
}

/* ---- forwarding ----------------------------------------------------------------------- */

/* Frames arrive in a TPACKET_V2 ring: the kernel copies each one there in its receive
 * softirq (on the sender's CPU for a veth) and linkem reads them without a system call. */
static void receive(struct direction *d)
{
	uint64_t t = now_ns();
	uint64_t real_minus_mono = realtime_ns() - t;

	for (unsigned n = 0; n < RX_FRAMES_PER_WAKE; n++) {
		struct tpacket2_hdr *h =
			(struct tpacket2_hdr *)(d->ring + (size_t)d->ring_idx * RING_FRAME_BYTES);
		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			return;
		const uint8_t *frame = (const uint8_t *)h + h->tp_mac;
		uint32_t captured = h->tp_snaplen;
		/* The kernel hands a VLAN tag out of band: put it back where it was on the wire. */
		bool vlan = (h->tp_status & TP_STATUS_VLAN_VALID) && captured >= 12;
		uint32_t len = h->tp_len + (vlan ? 4 : 0);
		uint64_t real = (uint64_t)h->tp_sec * 1000000000ULL + h->tp_nsec;
		uint64_t arrival = real - real_minus_mono;
		/* Guard against a stepped wall clock: never in the future, at most 1 s old. */
		if (arrival > t || t - arrival > 1000000000ULL)
			arrival = t;

		if (len > SLOT_BYTES || captured < h->tp_len || d->nfree == 0) {
			/* Not forwarded: counted here (link_enqueue counts the others). */
			d->link.c.rx_frames++;
			d->link.c.rx_bytes += len;
			if (d->nfree == 0)
				d->link.c.drop_nobuf++;
			else
				d->drop_oversize++;
		} else {
			uint32_t handle = d->free_slots[--d->nfree];
			uint8_t *slot = d->slots + (size_t)handle * SLOT_BYTES;
			if (vlan) {
				uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid
											     : ETH_P_8021Q;
				uint16_t tag[2] = { htons(tpid), htons(h->tp_vlan_tci) };
				memcpy(slot, frame, 12);
				memcpy(slot + 12, tag, 4);
				memcpy(slot + 16, frame + 12, captured - 12);
			} else {
				memcpy(slot, frame, captured);
			}
			d->slot_len[handle] = len;
			if (link_enqueue(&d->link, arrival, handle, len) != LINK_ACCEPTED) {
				if (d->fb)
					fb_lost(d->fb, slot, len, false);
				release_slot(d, handle);
			} else if (d->fb) {
				fb_accepted(d->fb, slot, len);
			}
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		d->ring_idx = (d->ring_idx + 1) % RING_FRAMES;
	}
}

static void transmit(struct direction *d, uint64_t now)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct link_departure dep[BATCH];

	link_advance(&d->link, now);
	for (;;) {
		unsigned n = 0;
		while (n < BATCH && link_dequeue(&d->link, now, &dep[n]))
			n++;
		if (n == 0)
			return;
		for (unsigned i = 0; i < n; i++) {
			iov[i].iov_base = d->slots + (size_t)dep[i].f.handle * SLOT_BYTES;
			iov[i].iov_len = dep[i].f.len;
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		unsigned sent = 0;
		while (sent < n) {
			int r = sendmmsg(d->out_fd, msgs + sent, n - sent, 0);
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				/* The peer's backlog is full (or the interface went away): the frame is
				 * lost after the emulated link, and counted as such. */
				d->drop_tx++;
				sent++;
				continue;
			}
			sent += (unsigned)r;
		}
		uint64_t t = now_ns();
		for (unsigned i = 0; i < n; i++) {
			uint64_t delay = t - dep[i].f.arrival_ns;
			uint64_t late = t > dep[i].due_ns ? t - dep[i].due_ns : 0;
			hist_record(&d->file_win.delay, delay / 1000);
			hist_record(&d->ctl_win.delay, delay / 1000);
			hist_record(&d->file_win.late, late / 1000);
			hist_record(&d->ctl_win.late, late / 1000);
			if (d->fb)
				fb_delivered(d->fb, iov[i].iov_base, dep[i].f.len);
			release_slot(d, dep[i].f.handle);
		}
	}
}

/* ---- control socket ------------------------------------------------------------------- */

static void reply(struct client *c, const char *text, size_t len)
{
	/* Replies are short; a client that does not read them is dropped. */
	while (len) {
		ssize_t r = write(c->fd, text, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		text += r;
		len -= (size_t)r;
	}
}

static void replyf(struct client *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	reply(c, buf, (size_t)n);
}

static void command_set(struct linkem *e, struct client *c, char *args)
{
	char *which = strtok_r(args, " \t", &args);
	char *spec = args ? args + strspn(args, " \t") : NULL;
	int first, last;
	struct link_config cfg[NDIR];
	char err[512];

	if (!which || (strcmp(which, "ab") && strcmp(which, "ba") && strcmp(which, "both"))) {
		replyf(c, "error: set needs a direction: set ab|ba|both KEY=VAL[,KEY=VAL...]");
		return;
	}
	if (!spec || !*spec) {
		replyf(c, "error: set %s needs KEY=VAL[,KEY=VAL...] with keys " SPEC_KEYS, which);
		return;
	}
	first = strcmp(which, "ba") ? AB : BA;
	last = strcmp(which, "ab") ? BA : AB;
	/* Validate for every direction before changing any. */
	for (int i = first; i <= last; i++) {
		link_config_copy(&cfg[i], &e->dir[i].link.cfg);
		if (spec_apply(&cfg[i], spec, err, sizeof(err))) {
			for (int j = first; j <= i; j++)
				trace_put(cfg[j].trace);
			replyf(c, "error: %s", err);
			return;
		}
	}
	uint64_t now = now_ns();
	for (int i = first; i <= last; i++)
		link_reconfigure(&e->dir[i].link, &cfg[i], now);
	replyf(c, "ok");
}

static void command_stats(struct linkem *e, struct client *c)
{
	struct strbuf sb = { 0 };

	sb_printf(&sb, "{\"ts_ms\":%.3f", now_ns() / 1e6);
	for (int i = 0; i < NDIR; i++) {
		sb_printf(&sb, ",\"%s\":{", DIR_NAMES[i]);
		sb_direction(&sb, &e->dir[i], &e->dir[i].ctl_win);
		sb_printf(&sb, "}");
	}
	sb_printf(&sb, "}\n");
	reply(c, sb.p, sb.len);
	free(sb.p);
}

static void command(struct linkem *e, struct client *c, char *line)
{
	char *args;
	char *verb;

	line[strcspn(line, "\r")] = '\0';
	verb = strtok_r(line, " \t", &args);
	if (!verb)
		return;
	if (!strcmp(verb, "set")) {
		command_set(e, c, args);
	} else if (!strcmp(verb, "stats")) {
		command_stats(e, c);
	} else if (!strcmp(verb, "feedback")) {
		char *arg = strtok_r(NULL, " \t", &args);
		if (!e->fb_on) {
			replyf(c, "error: feedback: linkem was started without --feedback");
		} else if (arg && (!strcmp(arg, "on") || !strcmp(arg, "off"))) {
			e->fb.enabled = !strcmp(arg, "on");
			replyf(c, "ok");
		} else {
			replyf(c, "error: feedback needs on or off");
		}
	} else if (!strcmp(verb, "quit")) {
		replyf(c, "ok");
		e->quit = 1;
	} else {
		replyf(c, "error: unknown command '%s': allowed are set ab|ba|both KEY=VAL[,KEY=VAL...], "
			  "stats, feedback on|off, quit", verb);
	}
}

static void client_close(struct linkem *e, struct client *c)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

static void client_read(struct linkem *e, struct client *c)
{
	for (;;) {
		ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			client_close(e, c);
			return;
		}
		c->len += (size_t)r;
		c->buf[c->len] = '\0';
		char *nl;
		while (c->fd >= 0 && (nl = memchr(c->buf, '\n', c->len))) {
			*nl = '\0';
			command(e, c, c->buf);
			size_t used = (size_t)(nl - c->buf) + 1;
			memmove(c->buf, nl + 1, c->len - used);
			c->len -= used;
			c->buf[c->len] = '\0';
		}
		if (c->len == sizeof(c->buf) - 1) {
			replyf(c, "error: command longer than %d bytes", CLIENT_BUF - 1);
			client_close(e, c);
			return;
		}
	}
}

static void client_accept(struct linkem *e)
{
	int fd = accept4(e->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (e->clients[i].fd < 0) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 100 + (uint64_t)i };
			e->clients[i].fd = fd;
			e->clients[i].len = 0;
			epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
			return;
		}
	const char *busy = "error: too many control clients\n";
	if (write(fd, busy, strlen(busy)) < 0) {
		/* nothing more to tell it */
	}
	close(fd);
}

static int open_control(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct stat st;

	if (strlen(path) >= sizeof(sun.sun_path))
		die("--control path longer than %zu bytes: %s", sizeof(sun.sun_path) - 1, path);
	if (fd < 0)
		die("control socket: %s", strerror(errno));
	/* A socket left by a previous run (and only a socket) is replaced. */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	strcpy(sun.sun_path, path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 4) < 0)
		die("control socket %s: %s", path, strerror(errno));
	return fd;
}

/* ---- main loop ------------------------------------------------------------------------ */

enum { EV_SOCK = 0, EV_TIMER = 10, EV_SIGNAL = 11, EV_CONTROL = 12 };

static void epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void arm_timer(struct linkem *e, uint64_t at_ns)
{
	struct itimerspec its = { 0 };

	if (at_ns == e->timer_armed_ns)
		return;
	its.it_value.tv_sec = (time_t)(at_ns / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at_ns % 1000000000ULL);
	timerfd_settime(e->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
	e->timer_armed_ns = at_ns;
}

/* An interface went down (frames resume when it is up again) or away (nothing more will
 * come: stop, with the final stats). Reading SO_ERROR clears the condition. */
static void socket_error(struct linkem *e, int i)
{
	int err = 0;
	socklen_t len = sizeof(err);

	getsockopt(e->sock[i], SOL_SOCKET, SO_ERROR, &err, &len);
	if (!if_nametoindex(e->ifname[i])) {
		fprintf(stderr, "linkem: interface '%s' disappeared; stopping\n", e->ifname[i]);
		e->quit = 1;
		e->exit_code = 1;
	} else if (err) {
		fprintf(stderr, "linkem: interface '%s': %s\n", e->ifname[i], strerror(err));
	}
}

/* One report per user, out of IF_A (towards the splitter) without going through the "ba"
 * link: like the DDDS, it travels on the base stations' backhaul, not over the radio. */
static void send_feedback(struct linkem *e, uint64_t now)
{
	static uint8_t frames[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];
	unsigned n = fb_report(&e->fb, now, (uint64_t)e->dir[AB].link.cfg.delay_ns, frames, lens);

	for (unsigned i = 0; i < n; i++) {
		if (send(e->sock[AB], frames[i], lens[i], MSG_DONTWAIT) < 0)
			e->fb_send_errors++;
		else
			e->fb_sent++;
	}
}

static void run(struct linkem *e)
{
	struct epoll_event evs[16];

	while (!e->quit) {
		uint64_t now = now_ns();
		for (int i = 0; i < NDIR; i++)
			transmit(&e->dir[i], now);
		if (e->fb_on) {
			fb_queue_busy(&e->fb, now, link_queue_len(&e->dir[AB].link) > 0);
			if (now >= e->fb.next_report_ns)
				send_feedback(e, now);
		}
		if (e->stats && now >= e->next_stats_ns) {
			write_stats(e, now, 0);
			while (e->next_stats_ns <= now)
				e->next_stats_ns += e->stats_interval_ns;
		}

		uint64_t next = e->stats ? e->next_stats_ns : LINK_NEVER;
		if (e->fb_on && e->fb.next_report_ns < next)
			next = e->fb.next_report_ns;
		for (int i = 0; i < NDIR; i++) {
			uint64_t t = link_next_event(&e->dir[i].link);
			if (t < next)
				next = t;
		}
		now = now_ns();
		int timeout = -1;
		if (next <= now + e->busy_ns) {
			timeout = 0; /* busy-poll the last microseconds */
		} else if (next != LINK_NEVER) {
			arm_timer(e, next - e->busy_ns);
		}
		int n = epoll_wait(e->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag < NDIR) {
				if (evs[i].events & (EPOLLERR | EPOLLHUP))
					socket_error(e, (int)tag);
				receive(&e->dir[tag]);
				if (e->fb_on && tag == AB)
					fb_queue_busy(&e->fb, now_ns(), link_queue_len(&e->dir[AB].link) > 0);
			} else if (tag == EV_TIMER) {
				uint64_t expirations;
				if (read(e->timerfd, &expirations, sizeof(expirations)) < 0) {
					/* EAGAIN: already consumed */
				}
				e->timer_armed_ns = 0;
			} else if (tag == EV_SIGNAL) {
				struct signalfd_siginfo si;
				if (read(e->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					e->quit = 1;
			} else if (tag == EV_CONTROL) {
				client_accept(e);
			} else if (tag >= 100 && tag < 100 + MAX_CLIENTS) {
				client_read(e, &e->clients[tag - 100]);
			}
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkem -i IF_A -i IF_B [--ab SPEC] [--ba SPEC] [--both SPEC] [--seed N]\n"
		"              [--stats FILE] [--stats-interval-ms %d] [--control PATH]\n"
		"              [--busy-poll-us %d (0 with --rt-priority)] [--cpu N] [--rt-priority 1-99]\n"
		"              [--feedback leg=N[,period_ms=%d][,target_ms=%d][,sn_bits=18|12]]\n"
		"  Bridges IF_A and IF_B; \"ab\" = frames received on IF_A leave on IF_B, \"ba\" the reverse.\n"
		"  SPEC = comma-separated key=value, keys:\n"
		"    rate_mbit=20 (0 = unlimited)   burst_bytes=N (token bucket depth, default 0)\n"
		"    trace=FILE (Mahimahi format, loops; replaces rate_mbit)\n"
		"    queue_pkts=N | queue_bytes=N (drop-tail, default queue_pkts=%d)\n"
		"    delay_ms=10  jitter_ms=1 | delay_cv=0.1\n"
		"    dist=const|normal|uniform|pareto|paretonormal (default normal)\n"
		"    reorder=0|1 (default 0: frames keep their order, delay is a lower bound)\n"
		"    loss=0.01 (Bernoulli)  ge=p[,r[,1-h[,1-k]]] (Gilbert-Elliott as netem's gemodel)\n"
		"  control socket commands (one per line; reply \"ok\", \"error: ...\" or JSON):\n"
		"    set ab|ba|both KEY=VAL[,KEY=VAL...]   stats   feedback on|off   quit\n"
		"  --feedback: every period, one leg feedback report per user of the \"ab\" PDCP PDUs,\n"
		"    sent out of IF_A (format: p4src/README.md, \"Leg feedback frames\")\n",
		DEFAULT_STATS_INTERVAL_MS, DEFAULT_BUSY_POLL_US, FB_DEFAULT_PERIOD_MS, FB_DEFAULT_TARGET_MS,
		LINK_DEFAULT_QUEUE_PKTS);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		die("%s %s: expected an integer in [0, %lu]", opt, s, max);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option OPTS[] = {
		{ "ab", required_argument, NULL, 'A' },
		{ "ba", required_argument, NULL, 'B' },
		{ "both", required_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 's' },
		{ "stats", required_argument, NULL, 'S' },
		{ "stats-interval-ms", required_argument, NULL, 'I' },
		{ "control", required_argument, NULL, 'c' },
		{ "busy-poll-us", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'u' },
		{ "rt-priority", required_argument, NULL, 'r' },
		{ "feedback", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct linkem e = { .epfd = -1, .ctl_fd = -1 };
	struct link_config cfg[NDIR];
	const char *stats_path = NULL;
	unsigned long seed = 1, interval_ms = DEFAULT_STATS_INTERVAL_MS;
	long busy_us = -1; /* default: DEFAULT_BUSY_POLL_US, or 0 under --rt-priority */
	long cpu = -1, rt_priority = 0;
	int nif = 0, opt;
	char err[512];
	struct fb_config fb_cfg = { .leg = 0,
				    .period_ns = FB_DEFAULT_PERIOD_MS * 1000000ULL,
				    .target_ns = FB_DEFAULT_TARGET_MS * 1000000ULL,
				    .sn_bits = 18 };

	link_config_default(&cfg[AB]);
	link_config_default(&cfg[BA]);
	/* Specs apply in command-line order, so "--both X --ab Y" refines one direction. */
	while ((opt = getopt_long(argc, argv, "i:h", OPTS, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (nif == NDIR)
				die("-i given more than twice: linkem bridges exactly two interfaces");
			e.ifname[nif++] = optarg;
			break;
		case 'A':
		case 'B':
		case 'C':
			for (int i = AB; i < NDIR; i++) {
				if ((opt == 'A' && i != AB) || (opt == 'B' && i != BA))
					continue;
				if (spec_apply(&cfg[i], optarg, err, sizeof(err)))
					die("--%s %s: %s", opt == 'A' ? "ab" : opt == 'B' ? "ba" : "both",
					    optarg, err);
			}
			break;
		case 's':
			seed = parse_num("--seed", optarg, ~0UL);
			break;
		case 'S':
			stats_path = optarg;
			break;
		case 'I':
			interval_ms = parse_num("--stats-interval-ms", optarg, 3600000);
			if (!interval_ms)
				die("--stats-interval-ms must be at least 1");
			break;
		case 'c':
			e.ctl_path = optarg;
			break;
		case 'p':
			busy_us = (long)parse_num("--busy-poll-us", optarg, 10000);
			break;
		case 'u':
			cpu = (long)parse_num("--cpu", optarg, CPU_SETSIZE - 1);
			break;
		case 'r':
			rt_priority = (long)parse_num("--rt-priority", optarg, 99);
			break;
		case 'f':
			if (fb_config_parse(&fb_cfg, optarg, err, sizeof(err)))
				die("--feedback %s: %s", optarg, err);
			e.fb_on = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (nif != NDIR)
		die("need two interfaces: linkem -i IF_A -i IF_B [options] (see --help)");
	for (int i = 0; i < NDIR; i++) {
		/* ifr_name would silently cut a longer name: another interface could match it. */
		size_t len = strlen(e.ifname[i]);

		if (len == 0 || len >= IFNAMSIZ)
			die("-i '%.40s%s': name too long or empty (a Linux interface name is 1 to %d "
			    "bytes)", e.ifname[i], len > 40 ? "..." : "", IFNAMSIZ - 1);
	}
	if (!strcmp(e.ifname[0], e.ifname[1]))
		die("-i %s given twice: the two interfaces must differ", e.ifname[0]);

	for (int i = 0; i < NDIR; i++)
		check_interface(e.ifname[i]);
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			die("--cpu %ld: %s", cpu, strerror(errno));
	}
	if (rt_priority > 0) {
		/* Opt-in: departures preempt ordinary tasks on a crowded machine. linkem's work is
		 * bounded by its links' rates, and the kernel's RT throttling still applies. */
		struct sched_param sp = { .sched_priority = (int)rt_priority };
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			/* e.g. a container without CAP_SYS_NICE: still a working link, less precise. */
			fprintf(stderr, "linkem: --rt-priority %ld: %s; running as an ordinary task\n",
				rt_priority, strerror(errno));
			rt_priority = 0;
		}
	}
	/* Timers fire when asked, not up to 50 us later (the default slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	if (stats_path) {
		e.stats = fopen(stats_path, "w");
		if (!e.stats)
			die("--stats %s: %s", stats_path, strerror(errno));
	}
	e.epfd = epoll_create1(EPOLL_CLOEXEC);
	e.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e.epfd < 0 || e.timerfd < 0)
		die("epoll/timerfd: %s", strerror(errno));
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	e.sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < MAX_CLIENTS; i++)
		e.clients[i].fd = -1;

	for (int i = 0; i < NDIR; i++)
		e.sock[i] = open_packet_socket(e.ifname[i], &e.dir[i].ring);
	uint64_t now = now_ns();
	for (int i = 0; i < NDIR; i++) {
		struct direction *d = &e.dir[i];
		d->name = DIR_NAMES[i];
		d->in_fd = e.sock[i];      /* ab: in on IF_A ... */
		d->out_fd = e.sock[1 - i]; /* ... out on IF_B */
		direction_alloc(d);
		if (link_init(&d->link, &cfg[i], seed * 2 + (uint64_t)i, FRAMES_PER_DIRECTION, now))
			die("out of memory");
		d->link.release = release_lost;
		d->link.sent = frame_sent;
		d->link.release_ctx = d;
		epoll_add(e.epfd, d->in_fd, (uint64_t)i);
	}
	if (e.fb_on) {
		fb_init(&e.fb, &fb_cfg, now);
		e.dir[AB].fb = &e.fb;
	}
	epoll_add(e.epfd, e.timerfd, EV_TIMER);
	epoll_add(e.epfd, e.sigfd, EV_SIGNAL);
	if (e.ctl_path) {
		e.ctl_fd = open_control(e.ctl_path);
		epoll_add(e.epfd, e.ctl_fd, EV_CONTROL);
	}
	e.stats_interval_ns = interval_ms * 1000000ULL;
	e.next_stats_ns = now + e.stats_interval_ns;
	e.last_stats_ns = now;
	/* A real-time task that spins would be throttled by the kernel (and starve others): under
	 * --rt-priority linkem sleeps until each departure unless told otherwise. */
	if (busy_us < 0)
		busy_us = rt_priority > 0 ? 0 : DEFAULT_BUSY_POLL_US;
	e.busy_ns = (uint64_t)busy_us * 1000ULL;

	run(&e);

	write_stats(&e, now_ns(), 1);
	if (e.stats)
		fclose(e.stats);
	if (e.ctl_path)
		unlink(e.ctl_path);
	for (int i = 0; i < NDIR; i++) {
		e.dir[i].fb = NULL; /* frames still held at exit are not losses */
		link_free(&e.dir[i].link);
	}
	return e.exit_code;
}

/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's frames: the interfaces it checks and opens (receive rings from clib/pktio, or
 * AF_XDP sockets from its pktio_xsk), its frame buffers, and receiving into and transmitting
 * out of each direction's link.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linkem.h"

/* ---- frame buffers -------------------------------------------------------------------- */

static void release_slot(void *ctx, uint32_t handle)
{
	struct direction *d = ctx;

	d->free_slots[d->nfree++] = handle;
}

/* The link sent a frame (serialized, not lost): the feedback's drain. */
void frame_sent(void *ctx, uint32_t handle, uint32_t len)
{
	struct direction *d = ctx;

	if (d->fb)
		fb_sent(d->fb, d->slots + (size_t)handle * SLOT_BYTES, len);
}

/* The link lost an accepted frame (loss or Gilbert-Elliott): feedback reports its SN. */
void release_lost(void *ctx, uint32_t handle)
{
	struct direction *d = ctx;

	if (d->fb) {
		uint8_t *slot = d->slots + (size_t)handle * SLOT_BYTES;
		fb_lost(d->fb, slot, d->slot_len[handle], true);
	}
	release_slot(ctx, handle);
}

/* Frames the kernel dropped because the ring was full (AF_PACKET's counter resets on read;
 * AF_XDP's counts from the start). */
void collect_ring_drops(struct direction *d)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (d->in->xsk) {
		uint64_t drops = pktio_xsk_rx_drops(d->in->xsk);

		d->drop_rx += drops - d->in->xsk_drops_seen;
		d->in->xsk_drops_seen = drops;
	} else if (getsockopt(d->in->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) {
		d->drop_rx += st.tp_drops;
	}
}

void direction_alloc(struct direction *d)
{
	size_t bytes = (size_t)FRAMES_PER_DIRECTION * SLOT_BYTES;

	/* Pages are touched only when a frame lands there: a short queue stays small. */
	d->slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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
	struct ethtool_value ev = {.cmd = cmd};
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (char *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return 0; /* not supported: cannot be on */
	return ev.data != 0;
}

/* AF_PACKET and AF_XDP readers need real checksums and no GSO/GRO super-frames: refuse to
 * start otherwise, with the command that fixes it. */
void check_interface(const char *ifname)
{
	static const struct {
		uint32_t cmd;
		const char *name;
	} OFFLOADS[] = {
		{ETHTOOL_GTXCSUM, "tx-checksumming"},
		{ETHTOOL_GTSO, "tso"},
		{ETHTOOL_GGSO, "gso"},
		{ETHTOOL_GGRO, "gro"},
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	char on[128] = "";

	if (fd < 0)
		die("socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		die_usage("no interface '%s' in this network namespace (see `ip link`)", ifname);
	if (!(ifr.ifr_flags & IFF_UP))
		die_usage("interface '%s' is down; fix: ip link set %s up", ifname, ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > SLOT_BYTES - 18)
		die_usage("interface '%s' has MTU %d; linkem carries frames of MTU up to %d",
			  ifname, ifr.ifr_mtu, SLOT_BYTES - 18);
	for (unsigned i = 0; i < sizeof(OFFLOADS) / sizeof(OFFLOADS[0]); i++)
		if (ethtool_get(fd, ifname, OFFLOADS[i].cmd)) {
			strcat(on, " ");
			strcat(on, OFFLOADS[i].name);
		}
	close(fd);
	if (on[0])
		die_usage("offloads on '%s':%s. AF_PACKET would see partial checksums and GSO/GRO "
			  "super-frames (TCP breaks silently). Fix, on this interface and on its "
			  "veth "
			  "peer: ethtool -K %s tx off tso off gso off gro off",
			  ifname, on, ifname);
}

static int open_packet_socket(const char *ifname, struct pktio_ring *ring, int *ifindex_out)
{
	/* Protocol 0 until bound: nothing is received before the ring is there. */
	int fd = pktio_socket(SOCK_NONBLOCK | SOCK_CLOEXEC);
	int one = 1, bufsize = 8 << 20, err;

	if (fd < 0)
		die("AF_PACKET socket: %s (linkem needs root or CAP_NET_RAW)", strerror(-fd));
	if (!if_nametoindex(ifname))
		die_usage("no interface '%s' in this network namespace (see `ip link`)", ifname);
	/* Our own transmissions on this interface are not input. */
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0)
		die("PACKET_IGNORE_OUTGOING on %s: %s (needs Linux >= 4.20)", ifname,
		    strerror(errno));
	/* linkem is the qdisc: skip the kernel's. */
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	/* One frame per block (RING_FRAME_BYTES, a page): no frame straddles two. */
	err = pktio_ring_setup(fd, ring, RING_FRAME_BYTES, RING_FRAME_BYTES, RING_FRAMES);
	if (err < 0)
		die("receive ring on %s: %s", ifname, strerror(-err));
	int ifindex = pktio_bind(fd, ifname, ETH_P_ALL);
	if (ifindex < 0)
		die("bind AF_PACKET to %s: %s", ifname, strerror(-ifindex));
	struct packet_mreq mr = {.mr_ifindex = ifindex, .mr_type = PACKET_MR_PROMISC};
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		die("promiscuous mode on %s: %s", ifname, strerror(errno));
	*ifindex_out = ifindex;
	return fd;
}

void open_port(struct port *p, const char *ifname, bool xdp, int *ifindex)
{
	char msg[256];

	if (!xdp) {
		p->fd = open_packet_socket(ifname, &p->ring, ifindex);
		return;
	}
	int err = pktio_xsk_open(&p->xsk, ifname);
	if (err == -ENODEV || err == -ERANGE || err == -EOPNOTSUPP)
		die_usage("--io afxdp: %s", pktio_xsk_strerror(err, ifname, msg, sizeof(msg)));
	if (err)
		die("--io afxdp: %s", pktio_xsk_strerror(err, ifname, msg, sizeof(msg)));
	p->fd = pktio_xsk_fd(p->xsk);
	*ifindex = (int)if_nametoindex(ifname);
}

/* One frame out of `p` now, outside any link (the feedback reports): 0 or -errno. */
int send_one(struct port *p, const uint8_t *frame, uint32_t len)
{
	if (!p->xsk)
		return send(p->fd, frame, len, MSG_DONTWAIT) < 0 ? -errno : 0;
	int err = pktio_xsk_queue(p->xsk, frame, len);
	return err ? err : pktio_xsk_flush(p->xsk);
}

/* Deleting an interface that is up first takes it down (the AF_PACKET socket reports
 * ENETDOWN while the interface is still listed) and only then unregisters it, which the
 * socket no longer reports. rtnetlink's link notifications come after each step, so they
 * are what tells linkem that an interface is gone. Open it before the packet sockets: a
 * deletion after this cannot go unnoticed. */
int open_link_watch(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("rtnetlink socket: %s", strerror(errno));
	return fd;
}

/* Reads every pending notification: they only say "look again" (interface_gone asks by
 * index), so an overflow (ENOBUFS: some were lost) needs nothing more. */
void drain_link_watch(int fd)
{
	char buf[8192];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0 && !(n < 0 && (errno == ENOBUFS || errno == EINTR)))
			return;
	}
}

/* By index, not by name: an interface made again under the same name is another one. */
bool interface_gone(int ifindex)
{
	char name[IF_NAMESIZE];

	return !if_indextoname((unsigned)ifindex, name) && errno == ENXIO;
}

/* ---- forwarding ----------------------------------------------------------------------- */

/* One received frame of `len` bytes (its first `captured` of them at `frame`; a VLAN tag the
 * kernel handed out of band in `vlan`, else NULL) into the link, or counted as dropped. */
static void accept_frame(struct direction *d, const uint8_t *frame, uint32_t captured, uint32_t len,
			 const uint16_t *vlan, uint64_t arrival)
{
	if (len > SLOT_BYTES || captured < len - (vlan ? 4 : 0) || d->nfree == 0) {
		/* Not forwarded: counted here (link_enqueue counts the others). */
		d->link.c.rx_frames++;
		d->link.c.rx_bytes += len;
		if (d->nfree == 0)
			d->link.c.drop_nobuf++;
		else
			d->drop_oversize++;
		return;
	}
	uint32_t handle = d->free_slots[--d->nfree];
	uint8_t *slot = d->slots + (size_t)handle * SLOT_BYTES;
	if (vlan) { /* put the tag back where it was on the wire */
		memcpy(slot, frame, 12);
		memcpy(slot + 12, vlan, 4);
		memcpy(slot + 16, frame + 12, captured - 12);
	} else {
		memcpy(slot, frame, captured);
	}
	d->slot_len[handle] = len;
	enum link_verdict v = link_enqueue(&d->link, arrival, handle, len);
	if (v == LINK_DROP_LOSS && d->fb)
		fb_accepted(d->fb, slot, len); /* lost on the link, not by the queue */
	if (v != LINK_ACCEPTED) {
		if (d->fb)
			fb_lost(d->fb, slot, len, v == LINK_DROP_LOSS);
		release_slot(d, handle);
	} else if (d->fb) {
		fb_accepted(d->fb, slot, len);
	}
}

/* --io afxdp: frames wait in the AF_XDP socket's RX ring, in the UMEM where the kernel
 * wrote them (in its receive softirq, on the sender's CPU for a veth). The socket gives no
 * arrival time: a frame arrived by `t`, the wake-up that reads it. */
static bool receive_xsk(struct direction *d, uint64_t t)
{
	struct pktio_xsk_frame f[BATCH];
	unsigned total = 0, n;

	do {
		n = pktio_xsk_burst(d->in->xsk, f, BATCH);
		for (unsigned i = 0; i < n; i++)
			accept_frame(d, f[i].data, f[i].len, f[i].len, NULL, t);
		pktio_xsk_release(d->in->xsk);
		total += n;
	} while (n == BATCH && total < RX_FRAMES_PER_WAKE);
	return n < BATCH;
}

/* Frames arrive in a TPACKET_V2 ring: the kernel copies each one there in its receive
 * softirq (on the sender's CPU for a veth) and linkem reads them, as many as are there,
 * without a system call. `t`: the monotonic time of this wake-up. False when frames were
 * left in the ring (RX_FRAMES_PER_WAKE read). */
bool receive(struct direction *d, uint64_t t)
{
	if (d->in->xsk)
		return receive_xsk(d, t);
	struct pktio_ring *ring = &d->in->ring;
	struct tpacket2_hdr *h = pktio_ring_next(ring);

	if (!h)
		return true;
	uint64_t real_minus_mono = realtime_ns() - now_ns();
	for (unsigned n = 0; n < RX_FRAMES_PER_WAKE; n++, h = pktio_ring_next(ring)) {
		if (!h)
			return true;
		/* The kernel hands a VLAN tag out of band: accept_frame puts it back. */
		bool vlan = (h->tp_status & TP_STATUS_VLAN_VALID) && h->tp_snaplen >= 12;
		uint16_t tpid =
			(h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid : ETH_P_8021Q;
		uint16_t tag[2] = {htons(tpid), htons(h->tp_vlan_tci)};
		uint64_t real = (uint64_t)h->tp_sec * 1000000000ULL + h->tp_nsec;
		uint64_t arrival = real - real_minus_mono;
		/* Guard against a stepped wall clock: never in the future, at most 1 s old. */
		if (arrival > t || t - arrival > 1000000000ULL)
			arrival = t;
		accept_frame(d, pktio_ring_frame(h), h->tp_snaplen, h->tp_len + (vlan ? 4 : 0),
			     vlan ? tag : NULL, arrival);
		pktio_ring_release(ring, h);
	}
	return h == NULL;
}

/* Send frames [0, n) of `b` out of `p`: the frames the interface refused are lost after the
 * emulated link, counted in drop_tx. */
static void send_batch(struct direction *d, struct pktio_batch *b, unsigned n)
{
	struct port *p = d->out;
	unsigned sent = 0;

	if (p->xsk) {
		for (unsigned i = 0; i < n; i++) {
			int r = pktio_xsk_queue(p->xsk, b->iov[i].iov_base, b->iov[i].iov_len);
			if (r == -EAGAIN) { /* every transmit frame in flight: push them out */
				pktio_xsk_flush(p->xsk);
				r = pktio_xsk_queue(p->xsk, b->iov[i].iov_base, b->iov[i].iov_len);
			}
			if (r)
				d->drop_tx++;
		}
		pktio_xsk_flush(p->xsk); /* what it leaves goes with the next batch */
		return;
	}
	while (sent < n) {
		int r = pktio_batch_send(p->fd, b, sent, n - sent, 0);
		if (r <= 0) {
			if (r == -EINTR)
				continue;
			/* The peer's backlog is full (or the interface went away): the frame is
			 * lost after the emulated link, and counted as such. */
			d->drop_tx++;
			sent++;
			continue;
		}
		sent += (unsigned)r;
	}
}

void transmit(struct direction *d, uint64_t now)
{
	static struct pktio_batch b;
	struct link_departure dep[BATCH];

	if (d->out->xsk && pktio_xsk_unsent(d->out->xsk))
		pktio_xsk_flush(d->out->xsk); /* the interface pushed back last time */

	for (;;) {
		unsigned n = link_depart(&d->link, now, d->slack_ns, dep, BATCH);
		if (n == 0)
			return;
		for (unsigned i = 0; i < n; i++)
			pktio_batch_set(&b, i, d->slots + (size_t)dep[i].f.handle * SLOT_BYTES,
					dep[i].f.len);
		send_batch(d, &b, n);
		uint64_t t = now_ns();
		for (unsigned i = 0; i < n; i++) {
			uint64_t delay = t - dep[i].f.arrival_ns;
			hist_record(&d->file_win.delay, delay / 1000);
			hist_record(&d->ctl_win.delay, delay / 1000);
			/* The signed timing error, in two halves: a frame sent within the slack
			 * before its due time is early, not "0 late". */
			bool early = t < dep[i].due_ns;
			uint64_t error = early ? dep[i].due_ns - t : t - dep[i].due_ns;
			hist_record(early ? &d->file_win.early : &d->file_win.late, error / 1000);
			hist_record(early ? &d->ctl_win.early : &d->ctl_win.late, error / 1000);
			if (d->fb)
				fb_delivered(d->fb, b.iov[i].iov_base, dep[i].f.len);
			release_slot(d, dep[i].f.handle);
		}
	}
}

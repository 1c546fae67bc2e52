/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's frames: the interfaces it checks and opens (receive rings from clib/pktio), its
 * frame buffers, and receiving into and transmitting out of each direction's link.
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

/* Frames the kernel dropped because the ring was full (the counter resets on read). */
void collect_ring_drops(struct direction *d)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(d->in_fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		d->drop_rx += st.tp_drops;
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

/* AF_PACKET readers need real checksums and no GSO/GRO super-frames: refuse to start
 * otherwise, with the command that fixes it. */
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

int open_packet_socket(const char *ifname, struct pktio_ring *ring, int *ifindex_out)
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

/* Frames arrive in a TPACKET_V2 ring: the kernel copies each one there in its receive
 * softirq (on the sender's CPU for a veth) and linkem reads them, as many as are there,
 * without a system call. `t`: the monotonic time of this wake-up. False when frames were
 * left in the ring (RX_FRAMES_PER_WAKE read). */
bool receive(struct direction *d, uint64_t t)
{
	struct tpacket2_hdr *h = pktio_ring_next(&d->ring);

	if (!h)
		return true;
	uint64_t real_minus_mono = realtime_ns() - now_ns();
	for (unsigned n = 0; n < RX_FRAMES_PER_WAKE; n++, h = pktio_ring_next(&d->ring)) {
		if (!h)
			return true;
		const uint8_t *frame = pktio_ring_frame(h);
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
				uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID)
							? h->tp_vlan_tpid
							: ETH_P_8021Q;
				uint16_t tag[2] = {htons(tpid), htons(h->tp_vlan_tci)};
				memcpy(slot, frame, 12);
				memcpy(slot + 12, tag, 4);
				memcpy(slot + 16, frame + 12, captured - 12);
			} else {
				memcpy(slot, frame, captured);
			}
			d->slot_len[handle] = len;
			enum link_verdict v = link_enqueue(&d->link, arrival, handle, len);
			if (v == LINK_DROP_LOSS && d->fb)
				fb_accepted(d->fb, slot,
					    len); /* lost on the link, not by the queue */
			if (v != LINK_ACCEPTED) {
				if (d->fb)
					fb_lost(d->fb, slot, len, v == LINK_DROP_LOSS);
				release_slot(d, handle);
			} else if (d->fb) {
				fb_accepted(d->fb, slot, len);
			}
		}
		pktio_ring_release(&d->ring, h);
	}
	return h == NULL;
}

void transmit(struct direction *d, uint64_t now)
{
	static struct pktio_batch b;
	struct link_departure dep[BATCH];

	for (;;) {
		unsigned n = link_depart(&d->link, now, d->slack_ns, dep, BATCH);
		if (n == 0)
			return;
		for (unsigned i = 0; i < n; i++)
			pktio_batch_set(&b, i, d->slots + (size_t)dep[i].f.handle * SLOT_BYTES,
					dep[i].f.len);
		unsigned sent = 0;
		while (sent < n) {
			int r = pktio_batch_send(d->out_fd, &b, sent, n - sent, 0);
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

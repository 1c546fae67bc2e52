/* SPDX-License-Identifier: Apache-2.0
 *
 * Packet I/O of the native engine: one AF_PACKET socket per interface with a TPACKET_V2
 * receive ring (per-frame hand-over, so a lone frame is seen at once; TPACKET_V3 would hold
 * it until its block times out) and batched sendmmsg() transmission, run by one thread.
 * Every frame goes through the committed pipeline's p4n_process_into() in C under the device
 * lock, one lock hold per batch; the pipeline appends its outputs to one buffer per batch
 * (outbuf.h) and the transmit batches point into it, so a frame is copied once in user space,
 * from the receive ring into that buffer as it is deparsed. Frames for the CPU port, and
 * every frame while the pipeline is not native (or none is committed), are queued for the
 * Python side (up-calls). pcap files, when asked for, are written here (BMv2's
 * <port>-in.pcap / <port>-out.pcap).
 *
 * A port added with p4nio_add_port_xdp reads and writes its interface through an AF_XDP
 * socket instead (clib/pktio's pktio_xsk: XDP in the driver, copy mode on veth): frames are
 * processed where the kernel wrote them in the UMEM, and transmitted frames are copied from
 * the batch buffer into it.
 *
 * Built on its own (libp4nio), independent of any program; the AF_PACKET sockets, the
 * ring and sendmmsg batches, and the AF_XDP sockets, are clib/pktio's (compiled in by
 * p4sim/native/build.py).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "outbuf.h"
#include "pktio.h"
#include "pktio_xsk.h"

#define MAX_PORTS 64
#define TX_BATCH 64
#define RX_BURST 64
#define BLOCK_SIZE (1u << 20)
#define BLOCK_NR 4
#define UPQ_CAP 4096
#define UPCALL_IDLE_WAIT_MS 1000 /* an up-call wait while no frame passes */

typedef void (*process_fn)(void *dev, uint32_t port, const uint8_t *frame, size_t len,
			   struct p4n_out *out);
typedef void (*lock_fn)(void *dev);

struct txslot { /* a frame of io->batch */
	size_t off;
	uint32_t len;
};

struct port {
	int fd; /* the packet socket, or the AF_XDP socket's descriptor (epoll waits on it) */
	uint32_t id;
	struct pktio_ring ring;
	struct pktio_xsk *xsk; /* p4nio_add_port_xdp's, else NULL */
	struct txslot tx[TX_BATCH];
	uint32_t ntx;
	FILE *pcap_in, *pcap_out;
	/* what the switch reports per port (Switch.stats): frames received from the interface and
	 * handed to it by the pipeline (before a full transmit queue may drop them: tx_dropped) */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
};

struct upcall {
	uint32_t kind, port, len;
	uint8_t *data;
};

struct io {
	int nports;
	struct port p[MAX_PORTS];
	int wake_fd;
	volatile int stop;
	pthread_mutex_t mu; /* the pipeline below, and transmission */
	process_fn process;
	lock_fn lock, unlock;
	void *dev;
	int64_t cpu_port;
	struct p4n_out batch; /* the frames of this lock hold, sent from here (under mu) */
	pthread_mutex_t qmu;
	pthread_cond_t qcv;
	struct upcall q[UPQ_CAP];
	uint32_t qhead, qlen;
	uint64_t upcall_rx_seen; /* io->rx when p4nio_upcall last looked (under qmu) */
	int idle_waiter;	 /* p4nio_upcall waits for the next frame (under qmu) */
	uint64_t rx, tx, tx_dropped, up_dropped, truncated;
	uint64_t up_nomem; /* frames for Python dropped: no memory for their copy (under qmu) */
};

/* ------------------------------------------------------------------ pcap */
static FILE *pcap_open(const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	uint32_t gh[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
	fwrite(gh, 4, 6, f);
	fflush(f);
	return f;
}

static void pcap_write(FILE *f, const uint8_t *d, uint32_t n)
{
	if (!f)
		return;
	struct timeval tv;
	gettimeofday(&tv, NULL);
	uint32_t rh[4] = {(uint32_t)tv.tv_sec, (uint32_t)tv.tv_usec, n, n};
	fwrite(rh, 4, 4, f);
	fwrite(d, 1, n, f);
	fflush(f);
}

static void open_pcaps(struct port *p, const char *pcap_dir)
{
	if (pcap_dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%u-in.pcap", pcap_dir, p->id);
		p->pcap_in = pcap_open(path);
		snprintf(path, sizeof path, "%s/%u-out.pcap", pcap_dir, p->id);
		p->pcap_out = pcap_open(path);
	}
}

/* ------------------------------------------------------------------ setup */
struct io *p4nio_new(void)
{
	struct io *io = calloc(1, sizeof *io);
	if (!io)
		return NULL; /* the loader says so (ports.py) */
	io->wake_fd = eventfd(0, EFD_NONBLOCK);
	io->cpu_port = -1;
	pthread_mutex_init(&io->mu, NULL);
	pthread_mutex_init(&io->qmu, NULL);
	pthread_cond_init(&io->qcv, NULL);
	return io;
}

/* Attach interface `ifname` as `port`; 0 or -errno. pcap_dir may be NULL. */
int p4nio_add_port(struct io *io, uint32_t port, const char *ifname, uint32_t mtu,
		   const char *pcap_dir)
{
	if (io->nports >= MAX_PORTS)
		return -ENOSPC;
	struct port *p = &io->p[io->nports];
	memset(p, 0, sizeof *p);
	p->id = port;
	/* pktio_socket takes in nothing until the bind: other interfaces' frames would be this
	 * port's input. */
	int fd = pktio_socket(0), one = 1, err;
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
	uint32_t need = mtu + 14 + 4 + TPACKET2_HDRLEN + sizeof(struct sockaddr_ll) + 64;
	uint32_t frame_size = 2048;
	while (frame_size < need)
		frame_size <<= 1;
	uint32_t block = frame_size > BLOCK_SIZE ? frame_size : BLOCK_SIZE;
	err = pktio_ring_setup(fd, &p->ring, frame_size, block, BLOCK_NR);
	if (err == 0) {
		err = pktio_bind(fd, ifname, ETH_P_ALL);
		if (err < 0)
			pktio_ring_unmap(&p->ring);
	}
	if (err < 0) {
		close(fd);
		return err;
	}
	p->fd = fd;
	open_pcaps(p, pcap_dir);
	io->nports++;
	return 0;
}

/* Attach interface `ifname` as `port` through an AF_XDP socket; 0 or pktio_xsk_open's
 * -errno (pktio_xsk_strerror says what it means). */
int p4nio_add_port_xdp(struct io *io, uint32_t port, const char *ifname, const char *pcap_dir)
{
	if (io->nports >= MAX_PORTS)
		return -ENOSPC;
	struct port *p = &io->p[io->nports];
	memset(p, 0, sizeof *p);
	p->id = port;
	int err = pktio_xsk_open(&p->xsk, ifname);
	if (err < 0)
		return err;
	p->fd = pktio_xsk_fd(p->xsk);
	open_pcaps(p, pcap_dir);
	io->nports++;
	return 0;
}

void p4nio_set_pipeline(struct io *io, process_fn process, lock_fn lock, lock_fn unlock, void *dev,
			int64_t cpu_port)
{
	pthread_mutex_lock(&io->mu);
	io->process = process, io->lock = lock, io->unlock = unlock, io->dev = dev;
	io->cpu_port = cpu_port;
	pthread_mutex_unlock(&io->mu);
}

/* ------------------------------------------------------------------ up-calls to Python */
static void upcall(struct io *io, uint32_t kind, uint32_t port, const uint8_t *d, uint32_t n)
{
	pthread_mutex_lock(&io->qmu);
	uint8_t *copy = io->qlen < UPQ_CAP ? malloc(n ? n : 1) : NULL;
	if (io->qlen >= UPQ_CAP) {
		io->up_dropped++;
	} else if (!copy) { /* the frame is dropped and counted; the data path goes on */
		io->up_nomem++;
	} else {
		struct upcall *u = &io->q[(io->qhead + io->qlen++) % UPQ_CAP];
		u->kind = kind, u->port = port, u->len = n;
		u->data = copy;
		memcpy(u->data, d, n);
		pthread_cond_signal(&io->qcv);
	}
	pthread_mutex_unlock(&io->qmu);
}

/* Wait up to timeout_ms for an up-call; copies it into buf (cap bytes). Returns the frame
 * length, -1 on timeout, -2 when stopped. kind: 0 = a received frame for the Python
 * pipeline, 1 = a frame the pipeline sent to the CPU port. While no frame has passed since
 * the last call, the wait lasts up to UPCALL_IDLE_WAIT_MS and ends with the next frame:
 * the caller's periodic work (the pipeline's digests) has nothing new without frames, and
 * an idle switch then wakes once a second instead of every timeout_ms. */
int64_t p4nio_upcall(struct io *io, uint8_t *buf, uint32_t cap, uint32_t *kind, uint32_t *port,
		     int timeout_ms)
{
	pthread_mutex_lock(&io->qmu);
	uint64_t rx = __atomic_load_n(&io->rx, __ATOMIC_RELAXED);
	int idle = rx == io->upcall_rx_seen;
	io->upcall_rx_seen = rx;
	if (!io->qlen && !io->stop) {
		struct timespec ts;
		long wait_ms =
			idle && timeout_ms < UPCALL_IDLE_WAIT_MS ? UPCALL_IDLE_WAIT_MS : timeout_ms;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += wait_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		io->idle_waiter = idle;
		pthread_cond_timedwait(&io->qcv, &io->qmu, &ts);
		io->idle_waiter = 0;
	}
	int64_t r = io->stop ? -2 : -1;
	if (io->qlen) {
		struct upcall *u = &io->q[io->qhead];
		io->qhead = (io->qhead + 1) % UPQ_CAP;
		io->qlen--;
		uint32_t n = u->len < cap ? u->len : cap;
		memcpy(buf, u->data, n);
		free(u->data);
		*kind = u->kind, *port = u->port;
		r = n;
	}
	pthread_mutex_unlock(&io->qmu);
	return r;
}

/* ------------------------------------------------------------------ transmit */
static struct port *port_by_id(struct io *io, uint32_t id)
{
	for (int i = 0; i < io->nports; i++)
		if (io->p[i].id == id)
			return &io->p[i];
	return NULL;
}

/* Send the port's queued frames. A full queue drops the rest of the batch, as a switch port
 * would; a frame longer than the interface takes (EMSGSIZE) is lost alone. */
static void flush_tx_xsk(struct io *io, struct port *p)
{
	for (uint32_t i = 0; i < p->ntx; i++) {
		const uint8_t *f = io->batch.buf + p->tx[i].off;
		int r = pktio_xsk_queue(p->xsk, f, p->tx[i].len);
		if (r == -EAGAIN) { /* every transmit frame in flight: push them out first */
			pktio_xsk_flush(p->xsk);
			r = pktio_xsk_queue(p->xsk, f, p->tx[i].len);
		}
		if (r == 0)
			io->tx++;
		else
			io->tx_dropped++;
	}
	pktio_xsk_flush(p->xsk); /* what the interface pushes back goes at the next flush */
	p->ntx = 0;
}

static void flush_tx(struct io *io, struct port *p)
{
	struct pktio_batch b;
	uint32_t done = 0;
	if (p->xsk) {
		flush_tx_xsk(io, p);
		return;
	}
	for (uint32_t i = 0; i < p->ntx; i++)
		pktio_batch_set(&b, i, io->batch.buf + p->tx[i].off, p->tx[i].len);
	while (done < p->ntx) {
		int r = pktio_batch_send(p->fd, &b, done, p->ntx - done, MSG_DONTWAIT);
		if (r == -EINTR)
			continue;
		if (r == -EMSGSIZE) {
			io->tx_dropped++;
			done++;
			continue;
		}
		if (r <= 0) { /* the queue is full (EAGAIN, ENOBUFS), or the interface is gone */
			io->tx_dropped += p->ntx - done;
			break;
		}
		io->tx += r;
		done += r;
	}
	p->ntx = 0;
}

/* Queue the frame of io->batch at `off` (its record's frame bytes) for port `port`. */
static void transmit(struct io *io, uint32_t port, size_t off, uint32_t n)
{
	struct port *p = port_by_id(io, port);
	if (!p)
		return; /* no interface attached: dropped (as the Python ports do) */
	p->tx_packets++, p->tx_bytes += n;
	pcap_write(p->pcap_out, io->batch.buf + off, n);
	if (p->ntx == TX_BATCH)
		flush_tx(io, p);
	p->tx[p->ntx++] = (struct txslot){off, n};
}

/* Python's transmissions (PacketOut results, interpreter pipelines): counted here too. */
void p4nio_send(struct io *io, uint32_t port, const uint8_t *d, uint32_t n)
{
	pthread_mutex_lock(&io->mu);
	struct port *p = port_by_id(io, port);
	uint8_t *f = p ? p4n_out_append(&io->batch, port, n) : NULL;
	if (f) {
		memcpy(f, d, n);
		transmit(io, port, f - io->batch.buf, n);
		flush_tx(io, p);
	}
	io->batch.len = 0; /* the I/O thread leaves it empty between lock holds */
	pthread_mutex_unlock(&io->mu);
}

static void flush_all(struct io *io)
{
	for (int i = 0; i < io->nports; i++) {
		struct port *p = &io->p[i];
		if (p->ntx || (p->xsk && pktio_xsk_unsent(p->xsk)))
			flush_tx(io, p);
	}
}

/* ------------------------------------------------------------------ the data path */
static void handle(struct io *io, struct port *p, const uint8_t *d, uint32_t n)
{
	uint32_t port = p->id;
	io->rx++;
	p->rx_packets++, p->rx_bytes += n;
	if (!io->process) {
		upcall(io, 0, port, d, n);
		return;
	}
	size_t off = io->batch.len;
	io->process(io->dev, port, d, n, &io->batch);
	while (off < io->batch.len) {
		uint32_t oport, olen;
		size_t next = p4n_out_read(&io->batch, off, &oport, &olen);
		size_t frame = off + P4N_OUT_HDR;
		if ((int64_t)oport == io->cpu_port)
			upcall(io, 1, oport, io->batch.buf + frame, olen);
		else if (oport != 511)
			transmit(io, oport, frame, olen);
		off = next;
	}
}

/* Up to RX_BURST frames from an AF_XDP port, processed in place; 1 if there was one. */
static int rx_burst_xsk(struct io *io, struct port *p)
{
	struct pktio_xsk_frame f[RX_BURST];
	unsigned n = pktio_xsk_burst(p->xsk, f, RX_BURST);
	for (unsigned k = 0; k < n; k++) {
		pcap_write(p->pcap_in, f[k].data, f[k].len);
		handle(io, p, f[k].data, f[k].len);
	}
	pktio_xsk_release(p->xsk);
	return n > 0;
}

/* Receive up to RX_BURST frames from each port per lock hold; 1 if any frame was seen. */
static int rx_round(struct io *io)
{
	int any = 0;
	pthread_mutex_lock(&io->mu);
	if (io->lock)
		io->lock(io->dev);
	for (int i = 0; i < io->nports; i++) {
		struct port *p = &io->p[i];
		if (p->xsk) {
			any |= rx_burst_xsk(io, p);
			continue;
		}
		for (int k = 0; k < RX_BURST; k++) {
			struct tpacket2_hdr *h = pktio_ring_next(&p->ring);
			if (!h)
				break;
			if (pktio_ring_addr(h)->sll_pkttype != PACKET_OUTGOING) {
				const uint8_t *d = pktio_ring_frame(h);
				pcap_write(p->pcap_in, d, h->tp_snaplen);
				if (h->tp_snaplen < h->tp_len)
					io->truncated++;
				else
					handle(io, p, d, h->tp_snaplen);
			}
			pktio_ring_release(&p->ring, h);
			any = 1;
		}
	}
	if (io->unlock)
		io->unlock(io->dev);
	flush_all(io);
	io->batch.len = 0;
	pthread_mutex_unlock(&io->mu);
	if (any) { /* the first frame after a silence ends an idle up-call wait */
		pthread_mutex_lock(&io->qmu);
		if (io->idle_waiter)
			pthread_cond_signal(&io->qcv);
		pthread_mutex_unlock(&io->qmu);
	}
	return any;
}

/* An interface that went down leaves an error on its packet socket (ENETDOWN) that stays,
 * and wakes every epoll_wait, until it is read: read it, or the loop spins on a core. Frames
 * resume by themselves when the interface is up again. */
static void clear_port_errors(struct io *io, const struct epoll_event *ready, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t port = ready[i].data.u32;
		if (!(ready[i].events & EPOLLERR) || port >= (uint32_t)io->nports)
			continue;
		int err = 0;
		socklen_t len = sizeof(err);
		getsockopt(io->p[port].fd, SOL_SOCKET, SO_ERROR, &err, &len);
	}
}

/* How long the loop may block: 1 s, or 1 ms while an AF_XDP port holds frames its interface
 * pushed back (flush_all sends them again on the next round). */
static int idle_wait_ms(struct io *io)
{
	for (int i = 0; i < io->nports; i++)
		if (io->p[i].xsk && pktio_xsk_unsent(io->p[i].xsk))
			return 1;
	return 1000;
}

/* The I/O loop; returns when p4nio_stop() is called. Between bursts it blocks in
 * epoll_wait on every port and the stop eventfd, registered once (poll() would set up
 * and tear down one wait per descriptor on each wake-up). */
void p4nio_run(struct io *io)
{
	struct epoll_event ev, ready[MAX_PORTS + 1];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i <= io->nports && ep >= 0; i++) {
		/* a port's index, or nports for the stop eventfd */
		ev = (struct epoll_event){.events = EPOLLIN, .data.u32 = (uint32_t)i};
		if (epoll_ctl(ep, EPOLL_CTL_ADD, i < io->nports ? io->p[i].fd : io->wake_fd, &ev) <
		    0) {
			close(ep);
			ep = -1;
		}
	}
	while (!io->stop) {
		if (rx_round(io))
			continue;
		if (ep >= 0)
			clear_port_errors(io, ready,
					  epoll_wait(ep, ready, MAX_PORTS + 1, idle_wait_ms(io)));
		else
			usleep(100); /* no epoll (out of descriptors): look again soon */
	}
	if (ep >= 0)
		close(ep);
}

void p4nio_stop(struct io *io)
{
	io->stop = 1;
	uint64_t one = 1;
	if (write(io->wake_fd, &one, sizeof one) < 0) { /* the flag alone ends the loop */
	}
	pthread_mutex_lock(&io->qmu);
	pthread_cond_broadcast(&io->qcv);
	pthread_mutex_unlock(&io->qmu);
}

void p4nio_stats(struct io *io, uint64_t *out)
{
	out[0] = io->rx, out[1] = io->tx, out[2] = io->tx_dropped, out[3] = io->up_dropped;
	out[4] = io->truncated, out[5] = io->up_nomem;
}

/* Port i's counters (i < p4nio_nports): id, rx packets, rx bytes, tx packets, tx bytes. */
int p4nio_nports(struct io *io) { return io->nports; }

void p4nio_port_stats(struct io *io, int i, uint64_t *out)
{
	pthread_mutex_lock(&io->mu); /* the I/O thread counts under it */
	struct port *p = &io->p[i];
	out[0] = p->id, out[1] = p->rx_packets, out[2] = p->rx_bytes;
	out[3] = p->tx_packets, out[4] = p->tx_bytes;
	pthread_mutex_unlock(&io->mu);
}

void p4nio_close(struct io *io)
{
	for (int i = 0; i < io->nports; i++) {
		struct port *p = &io->p[i];
		if (p->xsk) {
			pktio_xsk_close(p->xsk); /* its descriptor too */
		} else {
			pktio_ring_unmap(&p->ring);
			close(p->fd);
		}
		if (p->pcap_in)
			fclose(p->pcap_in);
		if (p->pcap_out)
			fclose(p->pcap_out);
	}
	for (uint32_t i = 0; i < io->qlen; i++) /* up-calls nobody took */
		free(io->q[(io->qhead + i) % UPQ_CAP].data);
	free(io->batch.buf);
	close(io->wake_fd);
	free(io);
}

/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's program (not its link core, link.h): the state shared by its parts.
 *   options.c  the command line
 *   io.c       interfaces, their AF_PACKET rings or AF_XDP sockets (clib/pktio), frame
 *              buffers, receive and transmit
 *   stats.c    the JSON stats (the --stats file and the control socket's `stats`)
 *   control.c  the control socket
 *   main.c     setup and the event loop
 */
#ifndef LINKEM_H
#define LINKEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "feedback.h"
#include "hist.h"
#include "link.h"
#include "pktio.h"
#include "pktio_xsk.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define SLOT_BYTES 2048		   /* one frame buffer: MTU up to SLOT_BYTES - 18 */
#define FRAMES_PER_DIRECTION 65536 /* frames held at once (queue + delay line) */
#define BATCH 64		   /* frames per recvmmsg / sendmmsg */
#define RX_FRAMES_PER_WAKE 1024	   /* bound the receive work between departures */
#define RING_FRAME_BYTES 4096	   /* one frame per page: header + up to SLOT_BYTES of frame */
#define RING_FRAMES 4096	   /* 16 MiB receive ring per interface */
#define MAX_CLIENTS 8
#define CLIENT_BUF 4096
#define DEFAULT_BUSY_POLL_US 0
#define DEFAULT_DEPARTURE_SLACK_US 0
#define MAX_DEPARTURE_SLACK_US 1000  /* 10 x linkem's p99 timing goal (docs/benchmark.md) */
#define RX_HOLDOFF_MAX_NS 1000000ULL /* longest pause of the arrival wake-ups (1 ms) */
#define DEFAULT_STATS_INTERVAL_MS 100
#define XSK_RETRY_NS 100000ULL /* --io afxdp: frames the interface pushed back go again after */

enum { AB, BA, NDIR };
static const char *const DIR_NAMES[NDIR] = {"ab", "ba"};

/* Delay figures over a window of frames (a stats interval, or between `stats` commands). */
struct window {
	struct hist delay; /* departure - arrival, us: what the link applied */
	struct hist late;  /* departure - due time, us, of the frames that left at or after it */
	struct hist early; /* due time - departure, us, of the frames that left before it (slack) */
};

/* An interface as linkem opened it: a packet socket with its receive ring, or (--io afxdp)
 * an AF_XDP socket. */
struct port {
	int fd; /* what epoll waits on */
	struct pktio_ring ring;
	struct pktio_xsk *xsk;	 /* --io afxdp, else NULL */
	uint64_t xsk_drops_seen; /* the socket's rx drops already counted in drop_rx */
};

struct direction {
	const char *name;
	struct link link;
	struct port *in, *out; /* receive from `in`, send out of `out` */
	uint8_t *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t *slot_len; /* frame length per slot, for the feedback's loss accounting */
	/* Arrival wake-ups (main.c, arrival_wakeup): the last one, and when paused, when they
	 * resume (LINK_NEVER: not paused). The ring is read at every wake-up. */
	uint64_t rx_wake_ns, rx_rearm_ns;
	bool rx_more;	   /* the last receive left frames in the ring */
	uint64_t slack_ns; /* --departure-slack-us: frames due this soon leave with the batch */
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
	struct port port[NDIR];
	int ifindex[NDIR];
	struct direction dir[NDIR];
	int epfd, timerfd, sigfd, ctl_fd, link_watch_fd;
	const char *ctl_path;
	struct client clients[MAX_CLIENTS];
	FILE *stats;
	uint64_t stats_interval_ns, next_stats_ns, last_stats_ns;
	uint64_t busy_ns;
	uint64_t timer_armed_ns;
	int quit, exit_code;
	struct fb fb; /* --feedback: reports on "ab" PDUs, sent out of IF_A */
	bool fb_on;
	uint64_t fb_busy_seen_ns; /* the "ab" link's busy_ns already given to the feedback */
	uint64_t fb_sent, fb_send_errors;
};

/* options.c: what the command line asks for */
struct options {
	const char *ifname[NDIR]; /* IF_A, IF_B */
	struct link_config cfg[NDIR];
	const char *stats_path, *ctl_path;
	unsigned long seed, interval_ms;
	long busy_us;  /* poll the last busy_us before a departure */
	long slack_us; /* send frames due within slack_us with the current batch (early) */
	long cpu, rt_priority;
	bool xdp; /* --io afxdp */
	bool fb_on;
	struct fb_config fb;
};

void options_parse(struct options *o, int argc, char **argv);

/* main.c */
/* One line `linkem: error: ...`, then exit: die for a failure (a system call, memory: 1),
 * die_usage for bad input (an option, an interface or a file named on the command line: 2). */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void die_usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static inline uint64_t now_ns(void) { return pktio_clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t realtime_ns(void) { return pktio_clock_ns(CLOCK_REALTIME); }

/* io.c */
void check_interface(const char *ifname);
void open_port(struct port *p, const char *ifname, bool xdp, int *ifindex);
int send_one(struct port *p, const uint8_t *frame, uint32_t len);
int open_link_watch(void);
void drain_link_watch(int fd);
bool interface_gone(int ifindex);
void direction_alloc(struct direction *d);
void frame_sent(void *ctx, uint32_t handle, uint32_t len);
void release_lost(void *ctx, uint32_t handle);
void collect_ring_drops(struct direction *d);
bool receive(struct direction *d, uint64_t now);
void transmit(struct direction *d, uint64_t now);

/* stats.c */
struct strbuf {
	char *p;
	size_t len, cap;
};

void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_direction(struct strbuf *sb, struct direction *d, struct window *w);
void write_stats(struct linkem *e, uint64_t now, int final);

/* control.c */
int open_control(const char *path);
void client_accept(struct linkem *e);
void client_read(struct linkem *e, struct client *c);

#endif /* LINKEM_H */

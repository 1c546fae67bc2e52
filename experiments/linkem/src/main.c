/* SPDX-License-Identifier: Apache-2.0
 * linkem: a user-space link emulator bridging two interfaces at layer 2.
 *
 * Frames received on IF_A go through the "ab" link (link.c) and leave on IF_B; frames
 * received on IF_B go through "ba" and leave on IF_A.  One thread: an epoll loop over the
 * two AF_PACKET sockets (frames in through a TPACKET_V2 receive ring, out through sendmmsg;
 * or, with --io afxdp, two AF_XDP sockets),
 * a timerfd armed for the next departure, a signalfd and the control socket.  Timing is CLOCK_MONOTONIC.
 * linkem sleeps until the next departure (idle costs nothing); --busy-poll-us N polls the last
 * N us before one instead, at the cost of CPU the other processes may need;
 * --departure-slack-us N sends the frames due within N us with each departure batch (fewer
 * wake-ups at high frame rates, each frame at most N us early). */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "linkem.h"

static __attribute__((noreturn)) void vdie(int status, const char *fmt, va_list ap)
{
	fputs("linkem: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(1, fmt, ap);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(2, fmt, ap);
}

/* ---- main loop ------------------------------------------------------------------------ */

enum { EV_SOCK = 0, EV_TIMER = 10, EV_SIGNAL = 11, EV_CONTROL = 12, EV_LINKS = 13 };

static void epoll_add(int epfd, int fd, uint64_t tag, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = tag};

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

/* Arrival wake-ups of a receive socket on (EPOLLIN) or paused (no events). */
static void rx_wakeups(struct linkem *e, int dir, bool on)
{
	struct epoll_event ev = {.events = on ? EPOLLIN : 0, .data.u64 = (uint64_t)dir};

	if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, e->dir[dir].in->fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void arm_timer(struct linkem *e, uint64_t at_ns)
{
	struct itimerspec its = {0};

	if (at_ns == e->timer_armed_ns)
		return;
	its.it_value.tv_sec = (time_t)(at_ns / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at_ns % 1000000000ULL);
	timerfd_settime(e->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
	e->timer_armed_ns = at_ns;
}

/* An interface gone (nothing more will come): stop, with the final stats. */
static void check_interfaces(struct linkem *e)
{
	for (int i = 0; i < NDIR && !e->quit; i++) {
		if (interface_gone(e->ifindex[i])) {
			fprintf(stderr, "linkem: error: interface '%s' disappeared; stopping\n",
				e->ifname[i]);
			e->quit = 1;
			e->exit_code = 1;
		}
	}
}

/* An interface went down (frames resume when it is up again) or away (the link watch
 * tells). Reading SO_ERROR clears the condition. */
static void socket_error(struct linkem *e, int i)
{
	int err = 0;
	socklen_t len = sizeof(err);

	getsockopt(e->port[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
	check_interfaces(e);
	if (err && !e->quit)
		fprintf(stderr, "linkem: error: interface '%s': %s\n", e->ifname[i], strerror(err));
}

/* One report per user, out of IF_A (towards the splitter) without going through the "ba"
 * link: like the DDDS, it travels on the base stations' backhaul, not over the radio. */
static void send_feedback(struct linkem *e, uint64_t now)
{
	static uint8_t frames[FB_MAX_UES][FB_FRAME_MAX];
	uint32_t lens[FB_MAX_UES];
	uint64_t busy = e->dir[AB].link.c.busy_ns;

	fb_link_busy(&e->fb, busy - e->fb_busy_seen_ns);
	e->fb_busy_seen_ns = busy;
	unsigned n = fb_report(&e->fb, now, (uint64_t)e->dir[AB].link.cfg.delay_ns, frames, lens);

	for (unsigned i = 0; i < n; i++) {
		if (send_one(&e->port[AB], frames[i], lens[i]) < 0)
			e->fb_send_errors++;
		else
			e->fb_sent++;
	}
}

/* The feedback counts the "ab" direction's drain as it happens: that direction wakes at
 * every end of serialization and every arrival. */
static bool watched(const struct linkem *e, int dir) { return e->fb_on && dir == AB; }

/* When the loop must next run: a departure, an arrival socket to re-arm, a stats line or a
 * feedback report. Ends of serialization need no wake-up (link_next_departure). */
static uint64_t next_wakeup(const struct linkem *e)
{
	uint64_t next = e->stats ? e->next_stats_ns : LINK_NEVER;

	if (e->fb_on && e->fb.next_report_ns < next)
		next = e->fb.next_report_ns;
	for (int i = 0; i < NDIR; i++) {
		const struct direction *d = &e->dir[i];
		uint64_t t =
			watched(e, i) ? link_next_event(&d->link) : link_next_departure(&d->link);
		if (d->rx_rearm_ns < t)
			t = d->rx_rearm_ns;
		if (d->rx_more)
			t = 0;
		if (t < next)
			next = t;
		/* AF_XDP frames the interface pushed back wait in the TX ring: look again soon */
		if (d->out->xsk && pktio_xsk_unsent(d->out->xsk) && now_ns() + XSK_RETRY_NS < next)
			next = now_ns() + XSK_RETRY_NS;
	}
	return next;
}

/* An arrival wake-up. When they come faster than a quarter of the pause (frames arrive
 * steadily), the socket's wake-ups pause for half the link's least delay (at most
 * RX_HOLDOFF_MAX_NS) while every wake-up reads the ring. A frame that arrives meanwhile
 * cannot be due before it is read, and every frame that arrived before a wake-up is enqueued
 * (with its kernel timestamp) before the link advances to it: the link sees the same
 * arrivals in the same order at the same times. Sparse frames keep one wake-up each. */
static void arrival_wakeup(struct linkem *e, int dir, uint64_t now)
{
	struct direction *d = &e->dir[dir];
	uint64_t pause = watched(e, dir) ? 0 : link_min_delay_ns(&d->link.cfg) / 2;

	if (pause > RX_HOLDOFF_MAX_NS)
		pause = RX_HOLDOFF_MAX_NS;
	if (pause && now - d->rx_wake_ns < pause / 4) {
		rx_wakeups(e, dir, false);
		d->rx_rearm_ns = now + pause;
	}
	d->rx_wake_ns = now;
}

/* Reads every ring (cheap when empty: no system call) and resumes the paused arrival
 * wake-ups that are due; a ring with frames left wakes at once through epoll's level check. */
static void receive_all(struct linkem *e, uint64_t now)
{
	for (int i = 0; i < NDIR; i++) {
		struct direction *d = &e->dir[i];
		d->rx_more = !receive(d, now);
		if (d->rx_rearm_ns <= now) {
			rx_wakeups(e, i, true);
			d->rx_rearm_ns = LINK_NEVER;
		}
	}
}

/* Everything due by `now`: departures (one sendmmsg per direction), feedback, stats. */
static void due_work(struct linkem *e, uint64_t now)
{
	for (int i = 0; i < NDIR; i++)
		transmit(&e->dir[i], now);
	if (e->fb_on && now >= e->fb.next_report_ns)
		send_feedback(e, now);
	if (e->stats && now >= e->next_stats_ns) {
		write_stats(e, now, 0);
		while (e->next_stats_ns <= now)
			e->next_stats_ns += e->stats_interval_ns;
	}
}

/* One clock read per wake-up serves the receive, the departures and the next deadline. The
 * timerfd stays armed while the earliest deadline does not change (arrivals re-arm nothing:
 * their frames cannot leave before the delay line's last); it is edge-triggered, so a
 * wake-up needs no read() to clear it. */
static void run(struct linkem *e)
{
	struct epoll_event evs[16];
	uint64_t now = now_ns();

	while (!e->quit) {
		due_work(e, now);
		uint64_t next = next_wakeup(e);
		int timeout = -1;
		if (next <= now + e->busy_ns)
			timeout = 0; /* busy-poll the last microseconds */
		else if (next != LINK_NEVER)
			arm_timer(e, next - e->busy_ns);
		int n = epoll_wait(e->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		now = now_ns();
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag >= NDIR)
				continue;
			if (evs[i].events & (EPOLLERR | EPOLLHUP))
				socket_error(e, (int)tag);
			arrival_wakeup(e, (int)tag, now);
		}
		/* Arrivals first: a `set` below applies after every frame that came before it. */
		receive_all(e, now);
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag < NDIR) {
				continue;
			} else if (tag == EV_TIMER) {
				if (now >= e->timer_armed_ns)
					e->timer_armed_ns = 0; /* fired (not a stale edge) */
			} else if (tag == EV_SIGNAL) {
				struct signalfd_siginfo si;
				if (read(e->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					e->quit = 1;
			} else if (tag == EV_CONTROL) {
				client_accept(e);
			} else if (tag == EV_LINKS) {
				drain_link_watch(e->link_watch_fd);
				check_interfaces(e);
			} else if (tag >= 100 && tag < 100 + MAX_CLIENTS) {
				client_read(e, &e->clients[tag - 100]);
				/* A `set` may shorten the delay: end the arrival pauses now. */
				for (int d = 0; d < NDIR; d++)
					if (e->dir[d].rx_rearm_ns != LINK_NEVER)
						e->dir[d].rx_rearm_ns = now;
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct linkem e = {.epfd = -1, .ctl_fd = -1};

	options_parse(&o, argc, argv);
	e.ifname[0] = o.ifname[0];
	e.ifname[1] = o.ifname[1];
	e.ctl_path = o.ctl_path;
	e.fb_on = o.fb_on;
	long busy_us = o.busy_us, rt_priority = o.rt_priority;
	for (int i = 0; i < NDIR; i++)
		check_interface(e.ifname[i]);
	if (o.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			die_usage("--cpu %ld: %s", o.cpu, strerror(errno));
	}
	if (rt_priority > 0) {
		/* Opt-in: departures preempt ordinary tasks on a crowded machine. linkem's work is
		 * bounded by its links' rates, and the kernel's RT throttling still applies. */
		struct sched_param sp = {.sched_priority = (int)rt_priority};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			/* e.g. a container without CAP_SYS_NICE: still a working link, less precise. */
			fprintf(stderr,
				"linkem: warning: --rt-priority %ld: %s; running as an ordinary "
				"task\n",
				rt_priority, strerror(errno));
			rt_priority = 0;
		}
	}
	/* Timers fire when asked, not up to 50 us later (the default slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	if (o.stats_path) {
		e.stats = fopen(o.stats_path, "w");
		if (!e.stats)
			die_usage("--stats %s: %s", o.stats_path, strerror(errno));
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

	e.link_watch_fd = open_link_watch();
	for (int i = 0; i < NDIR; i++)
		open_port(&e.port[i], e.ifname[i], o.xdp, &e.ifindex[i]);
	uint64_t now = now_ns();
	for (int i = 0; i < NDIR; i++) {
		struct direction *d = &e.dir[i];
		d->name = DIR_NAMES[i];
		d->in = &e.port[i];	 /* ab: in on IF_A ... */
		d->out = &e.port[1 - i]; /* ... out on IF_B */
		direction_alloc(d);
		if (link_init(&d->link, &o.cfg[i], o.seed * 2 + (uint64_t)i, FRAMES_PER_DIRECTION,
			      now))
			die("out of memory");
		d->link.release = release_lost;
		d->link.sent = frame_sent;
		d->link.release_ctx = d;
		d->rx_rearm_ns = LINK_NEVER;
		d->slack_ns = (uint64_t)o.slack_us * 1000ULL;
		epoll_add(e.epfd, d->in->fd, (uint64_t)i, EPOLLIN);
	}
	if (e.fb_on) {
		fb_init(&e.fb, &o.fb, now);
		e.dir[AB].fb = &e.fb;
	}
	epoll_add(e.epfd, e.timerfd, EV_TIMER, EPOLLIN | EPOLLET);
	epoll_add(e.epfd, e.sigfd, EV_SIGNAL, EPOLLIN);
	epoll_add(e.epfd, e.link_watch_fd, EV_LINKS, EPOLLIN);
	if (e.ctl_path) {
		e.ctl_fd = open_control(e.ctl_path);
		epoll_add(e.epfd, e.ctl_fd, EV_CONTROL, EPOLLIN);
	}
	e.stats_interval_ns = o.interval_ms * 1000000ULL;
	e.next_stats_ns = now + e.stats_interval_ns;
	e.last_stats_ns = now;
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
		pktio_xsk_close(e.port[i].xsk); /* detaches the XDP program */
	}
	return e.exit_code;
}

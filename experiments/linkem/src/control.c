/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's control socket: a Unix stream socket taking one command per line (set, stats,
 * feedback, quit) from up to MAX_CLIENTS clients.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "linkem.h"
#include "spec.h"

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
	struct strbuf sb = {0};

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
		replyf(c,
		       "error: unknown command '%s': allowed are set ab|ba|both "
		       "KEY=VAL[,KEY=VAL...], "
		       "stats, feedback on|off, quit",
		       verb);
	}
}

static void client_close(struct linkem *e, struct client *c)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

void client_read(struct linkem *e, struct client *c)
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

void client_accept(struct linkem *e)
{
	int fd = accept4(e->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (e->clients[i].fd < 0) {
			struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 100 + (uint64_t)i};
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

int open_control(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct stat st;

	if (strlen(path) >= sizeof(sun.sun_path))
		die_usage("--control path longer than %zu bytes: %s", sizeof(sun.sun_path) - 1,
			  path);
	if (fd < 0)
		die("control socket: %s", strerror(errno));
	/* A socket left by a previous run (and only a socket) is replaced. */
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	strcpy(sun.sun_path, path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) /* the path: no such dir, ... */
		die_usage("--control %s: %s", path, strerror(errno));
	if (listen(fd, 4) < 0)
		die("control socket %s: %s", path, strerror(errno));
	return fd;
}

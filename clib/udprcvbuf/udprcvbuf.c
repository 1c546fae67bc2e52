/* SPDX-License-Identifier: Apache-2.0
 *
 * udprcvbuf: an LD_PRELOAD library that gives every UDP socket of a program we cannot rebuild
 * (Debian's ngtcp2 gtlsclient/gtlsserver) a receive buffer of our choice.
 *
 *   LD_PRELOAD=build/clib/libudprcvbuf.so DC_UDP_RCVBUF=BYTES [DC_UDP_RCVBUF_REPORT=FILE] prog
 *
 * socket() is wrapped: an AF_INET or AF_INET6 SOCK_DGRAM socket gets SO_RCVBUFFORCE = BYTES
 * (root goes past net.core.rmem_max, which is not per network namespace; as a fallback
 * SO_RCVBUF, capped by rmem_max). Nothing else changes. With DC_UDP_RCVBUF_REPORT set, each
 * such socket appends one line to FILE: the buffer the kernel set, as SO_RCVBUF reads it back
 * (twice what was asked: the kernel counts its bookkeeping). DC_UDP_RCVBUF unset: the library
 * does nothing; not a whole number in [MIN_BYTES, MAX_BYTES]: one line on stderr, and nothing
 * else is done. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#define ENV_SIZE "DC_UDP_RCVBUF"
#define ENV_REPORT "DC_UDP_RCVBUF_REPORT"
#define MIN_BYTES 1024L
#define MAX_BYTES (1024L * 1024 * 1024) /* SO_RCVBUF takes an int; the kernel doubles it */

typedef int (*socket_fn)(int, int, int);

/* The size asked for in the environment: > 0, 0 when unset, -1 (said once) when invalid. */
static long wanted_bytes(void)
{
	static int warned;
	const char *text = getenv(ENV_SIZE);
	char *end;
	long bytes;

	if (text == NULL || *text == '\0')
		return 0;
	errno = 0;
	bytes = strtol(text, &end, 10);
	if (errno || *end != '\0' || bytes < MIN_BYTES || bytes > MAX_BYTES) {
		if (!warned)
			fprintf(stderr,
				"udprcvbuf: %s=%s is not a whole number of bytes in [%ld, %ld]; "
				"receive buffers left as they are\n",
				ENV_SIZE, text, MIN_BYTES, MAX_BYTES);
		warned = 1;
		return -1;
	}
	return bytes;
}

/* One line per socket, the kernel's SO_RCVBUF (for the flow's result). */
static void report(int fd)
{
	const char *path = getenv(ENV_REPORT);
	int got;
	socklen_t len = sizeof(got);
	FILE *f;

	if (path == NULL || *path == '\0' || getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len))
		return;
	f = fopen(path, "a");
	if (f == NULL)
		return;
	fprintf(f, "%d\n", got);
	fclose(f);
}

int socket(int domain, int type, int protocol)
{
	static socket_fn real_socket;
	int fd, bytes, saved_errno;
	long wanted;

	if (real_socket == NULL)
		real_socket = (socket_fn)dlsym(RTLD_NEXT, "socket");
	if (real_socket == NULL) {
		errno = ENOSYS;
		return -1;
	}
	fd = real_socket(domain, type, protocol);
	/* type may carry SOCK_NONBLOCK / SOCK_CLOEXEC */
	if (fd < 0 || (domain != AF_INET && domain != AF_INET6) ||
	    (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_DGRAM)
		return fd;
	wanted = wanted_bytes();
	if (wanted <= 0)
		return fd;
	saved_errno = errno; /* the caller sees socket()'s errno, not ours */
	bytes = (int)wanted;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)); /* not root */
	report(fd);
	errno = saved_errno;
	return fd;
}

/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent's --stats file: opened with O_NONBLOCK, so that a fifo without a reader fails
 * with ENXIO (open(2), fifo(7)) instead of blocking the agent before its first packet.
 */
#include "statsfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

FILE *stats_file_open(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK changes nothing for a regular file; it is cleared again once open. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
	FILE *f = NULL;
	int flags;

	if (fd < 0) {
		if (errno == ENXIO)
			snprintf(err, errlen,
				 "--stats %s: a fifo that nobody reads (start its reader first, "
				 "e.g. `cat %s &`, or give a regular file)",
				 path, path);
		else
			snprintf(err, errlen, "--stats %s: %s", path, strerror(errno));
		return NULL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
	    (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "--stats %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

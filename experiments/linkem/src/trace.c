/* SPDX-License-Identifier: Apache-2.0 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A day of a 1 Gbit/s link in Mahimahi lines is ~1 GB; the traces here are a few MB. */
#define TRACE_MAX_BYTES (256 << 20)
#define TRACE_LINE_MAX 127 /* characters of a line: a timestamp, spaces, a comment */
#define TRACE_LINE_MAX_TEXT "127"

enum { LINE_EOF = -1, LINE_TOO_LONG = -2, LINE_NUL = -3 };

/* The next line of f into buf (its '\n' left out, NUL-terminated): its length, LINE_EOF at
 * the end of the file, or, the rest of the line skipped, LINE_TOO_LONG past
 * TRACE_LINE_MAX characters or LINE_NUL when it holds a NUL byte (fgets would cut the line
 * there and read the rest as the next line, or as nothing). */
static int read_line(FILE *f, char buf[TRACE_LINE_MAX + 1])
{
	int c, n = 0, bad = 0;

	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (c == '\0')
			bad = LINE_NUL;
		else if (n == TRACE_LINE_MAX && !bad)
			bad = LINE_TOO_LONG;
		else if (n < TRACE_LINE_MAX)
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (c == EOF && n == 0 && !bad)
		return LINE_EOF;
	return bad ? bad : n;
}

struct trace *trace_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct stat st;

	if (!f) {
		snprintf(err, errlen, "trace=%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	/* A directory reads as nothing, a device or fifo may never end (/dev/zero). */
	if (fstat(fileno(f), &st))
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "trace=%s: %s (expected a Mahimahi trace file)", path,
			 S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
		fclose(f);
		return NULL;
	}
	if (st.st_size > TRACE_MAX_BYTES) {
		snprintf(err, errlen, "trace=%s: larger than the %d MiB a trace may have", path,
			 TRACE_MAX_BYTES >> 20);
		fclose(f);
		return NULL;
	}
	size_t len = strlen(path);
	struct trace *t = calloc(1, sizeof(*t) + len + 1);
	size_t cap = 0;
	char line[TRACE_LINE_MAX + 1];
	unsigned lineno = 0;
	int got;

	if (!t)
		goto oom;
	memcpy(t->path, path, len + 1);
	t->refs = 1;
	while ((got = read_line(f, line)) != LINE_EOF) {
		lineno++;
		if (got == LINE_TOO_LONG && line[strspn(line, " \t")] == '#')
			continue; /* a comment may be long */
		if (got == LINE_TOO_LONG || got == LINE_NUL) {
			snprintf(err, errlen,
				 "trace=%s:%u: %s (expected one timestamp in ms per line)", path,
				 lineno,
				 got == LINE_NUL ? "holds a NUL byte"
						 : "longer than " TRACE_LINE_MAX_TEXT
						   " characters");
			goto fail;
		}
		char *end;
		char *p = line;
		if (lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3))
			p += 3; /* a UTF-8 byte order mark, as some editors save */
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0' || *p == '#')
			continue;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (errno || end == p || *end != '\0' || *p == '-') {
			snprintf(err, errlen,
				 "trace=%s:%u: expected a timestamp in ms (a non-negative integer)",
				 path, lineno);
			goto fail;
		}
		if (t->n && v < t->ms[t->n - 1]) {
			snprintf(err, errlen,
				 "trace=%s:%u: timestamps must not decrease (%llu after %llu)",
				 path, lineno, v, (unsigned long long)t->ms[t->n - 1]);
			goto fail;
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 1024;
			uint64_t *ms = realloc(t->ms, cap * sizeof(*ms));
			if (!ms)
				goto oom;
			t->ms = ms;
		}
		t->ms[t->n++] = v;
	}
	fclose(f);
	if (t->n == 0 || t->ms[t->n - 1] == 0) {
		snprintf(err, errlen,
			 "trace=%s: needs at least one opportunity and a last timestamp > 0 ms",
			 path);
		trace_put(t);
		return NULL;
	}
	t->period_ms = t->ms[t->n - 1];
	return t;
oom:
	snprintf(err, errlen, "trace=%s: out of memory", path);
fail:
	fclose(f);
	if (t) {
		free(t->ms);
		free(t);
	}
	return NULL;
}

struct trace *trace_get(struct trace *t)
{
	if (t)
		t->refs++;
	return t;
}

void trace_put(struct trace *t)
{
	if (t && --t->refs == 0) {
		free(t->ms);
		free(t);
	}
}

double trace_mean_mbit(const struct trace *t)
{
	return (double)t->n * TRACE_OPPORTUNITY_BYTES * 8.0 / ((double)t->period_ms * 1e3);
}

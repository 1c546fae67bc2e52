/* SPDX-License-Identifier: Apache-2.0 */
#include "spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RATE_MBIT 100000.0 /* 100 Gbit/s */
#define MAX_DELAY_MS 60000.0   /* one minute */

static const char *const DIST_NAMES[] = {
	[DIST_CONST] = "const",
	[DIST_NORMAL] = "normal",
	[DIST_UNIFORM] = "uniform",
	[DIST_PARETO] = "pareto",
	[DIST_PARETONORMAL] = "paretonormal",
};

const char *dist_name(enum delay_dist d) { return DIST_NAMES[d]; }

const char *loss_at_name(enum loss_point p)
{
	return p == LOSS_AT_ENQUEUE ? "enqueue" : "departure";
}

void link_config_copy(struct link_config *dst, const struct link_config *src)
{
	*dst = *src;
	trace_get(dst->trace);
}

/* A decimal number (20, 0.5, .5, 1e-3, -1): strtod alone also takes spaces before it, hex
 * ("0x14" is 20), "inf" and "nan". */
static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s) || *s == 'e' || *s == 'E')
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_count(const char *s, unsigned long long hi, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v > hi)
		return -1;
	*out = v;
	return 0;
}

enum {
	SEEN_RATE = 1 << 0,
	SEEN_TRACE = 1 << 1,
	SEEN_QPKTS = 1 << 2,
	SEEN_QBYTES = 1 << 3,
	SEEN_JITTER = 1 << 4,
	SEEN_CV = 1 << 5,
};

/* ge=p[,r[,1-h[,1-k]]]: the values after p arrive as separate comma tokens. */
static int parse_ge(struct link_config *c, char **vals, int nvals, char *err, size_t errlen)
{
	double v[4];

	if (nvals == 1 && (!strcmp(vals[0], "off") || !strcmp(vals[0], "0"))) {
		c->ge = false;
		return 0;
	}
	if (nvals > 4)
		goto bad;
	for (int i = 0; i < nvals; i++)
		if (parse_double(vals[i], 0, 1, &v[i]))
			goto bad;
	c->ge = true;
	c->ge_p = v[0];
	c->ge_r = nvals > 1 ? v[1] : 1 - v[0]; /* netem's defaults */
	c->ge_1h = nvals > 2 ? v[2] : 1;
	c->ge_1k = nvals > 3 ? v[3] : 0;
	return 0;
bad:
	snprintf(err, errlen,
		 "ge: expected ge=p[,r[,1-h[,1-k]]] with probabilities in [0, 1] (netem's gemodel: "
		 "p good->bad, r bad->good, 1-h loss in bad, 1-k loss in good), or ge=off");
	return -1;
}

static int apply_one(struct link_config *c, const char *key, char **vals, int nvals, unsigned *seen,
		     char *err, size_t errlen)
{
	const char *val = vals[0];
	unsigned long long n;
	double d;

	if (!strcmp(key, "ge"))
		return parse_ge(c, vals, nvals, err, errlen);
	if (nvals != 1) {
		snprintf(err, errlen, "%s=%s: stray value '%s' (only ge takes several values)", key,
			 val, vals[1]);
		return -1;
	}
	if (!strcmp(key, "rate_mbit")) {
		if (parse_double(val, 0, MAX_RATE_MBIT, &d))
			goto range;
		c->rate_bps = d * 1e6;
		trace_put(c->trace);
		c->trace = NULL;
		*seen |= SEEN_RATE;
	} else if (!strcmp(key, "burst_bytes")) {
		if (parse_count(val, 1ULL << 32, &n))
			goto range;
		c->burst_bytes = n;
	} else if (!strcmp(key, "trace")) {
		struct trace *t = trace_load(val, err, errlen);
		if (!t)
			return -1;
		trace_put(c->trace);
		c->trace = t;
		*seen |= SEEN_TRACE;
	} else if (!strcmp(key, "queue_pkts")) {
		if (parse_count(val, 1ULL << 24, &n))
			goto range;
		c->queue_pkts = n;
		*seen |= SEEN_QPKTS;
	} else if (!strcmp(key, "queue_bytes")) {
		if (parse_count(val, 1ULL << 34, &n))
			goto range;
		c->queue_bytes = n;
		*seen |= SEEN_QBYTES;
	} else if (!strcmp(key, "delay_ms")) {
		if (parse_double(val, 0, MAX_DELAY_MS, &d))
			goto range;
		c->delay_ns = d * 1e6;
	} else if (!strcmp(key, "jitter_ms")) {
		if (parse_double(val, 0, MAX_DELAY_MS, &d))
			goto range;
		c->jitter_ns = d * 1e6;
		c->delay_cv = -1;
		*seen |= SEEN_JITTER;
	} else if (!strcmp(key, "delay_cv")) {
		if (parse_double(val, 0, 10, &d))
			goto range;
		c->delay_cv = d;
		c->jitter_ns = 0;
		*seen |= SEEN_CV;
	} else if (!strcmp(key, "dist")) {
		unsigned i;
		for (i = 0; i < sizeof(DIST_NAMES) / sizeof(DIST_NAMES[0]); i++)
			if (!strcmp(val, DIST_NAMES[i]))
				break;
		if (i == sizeof(DIST_NAMES) / sizeof(DIST_NAMES[0]))
			goto range;
		c->dist = (enum delay_dist)i;
	} else if (!strcmp(key, "reorder")) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			goto range;
		c->reorder = val[0] == '1';
	} else if (!strcmp(key, "loss")) {
		if (parse_double(val, 0, 1, &d))
			goto range;
		c->loss = d;
	} else if (!strcmp(key, "loss_at")) {
		if (!strcmp(val, "departure"))
			c->loss_at = LOSS_AT_DEPARTURE;
		else if (!strcmp(val, "enqueue"))
			c->loss_at = LOSS_AT_ENQUEUE;
		else
			goto range;
	} else {
		snprintf(err, errlen, "unknown key '%s': allowed keys are " SPEC_KEYS, key);
		return -1;
	}
	return 0;

range:;
	static const struct {
		const char *key, *allowed;
	} ALLOWED[] = {
		{"rate_mbit", "a number of Mbit/s in [0, 100000] (0 = unlimited)"},
		{"burst_bytes", "a byte count in [0, 2^32]"},
		{"queue_pkts", "a packet count in [0, 2^24] (0 = no limit by count)"},
		{"queue_bytes", "a byte count in [0, 2^34] (0 = no limit by bytes)"},
		{"delay_ms", "a number of ms in [0, 60000]"},
		{"jitter_ms", "a number of ms in [0, 60000]"},
		{"delay_cv", "a coefficient of variation in [0, 10] (sd / mean delay)"},
		{"dist", "one of const, normal, uniform, pareto, paretonormal"},
		{"reorder", "0 (keep order, delay is a lower bound) or 1 (jitter may reorder)"},
		{"loss", "a probability in [0, 1] (0.05 = 5%)"},
		{"loss_at", "departure (after serialization: a lost frame uses link time; the "
			    "default) or enqueue (on arrival, as netem)"},
	};
	for (unsigned i = 0; i < sizeof(ALLOWED) / sizeof(ALLOWED[0]); i++)
		if (!strcmp(key, ALLOWED[i].key))
			snprintf(err, errlen, "%s=%s: expected %s", key, val, ALLOWED[i].allowed);
	return -1;
}

int spec_split(char *list, char **items, int max, char *err, size_t errlen)
{
	int n = 0;

	for (char *rest = list, *item; (item = strsep(&rest, ",")) != NULL;) {
		if (*item == '\0') {
			snprintf(err, errlen,
				 "empty item between commas (a stray ','): expected "
				 "key=value[,key=value...]");
			return -1;
		}
		if (n == max) {
			snprintf(err, errlen, "too many comma-separated items (at most %d)", max);
			return -1;
		}
		size_t klen = strcspn(item, "=");
		for (int k = 0; k < n && item[klen] == '='; k++)
			if (!strncmp(items[k], item, klen) && items[k][klen] == '=') {
				snprintf(err, errlen,
					 "%.*s given twice: give each key once (the last would win "
					 "silently)",
					 (int)klen, item);
				return -1;
			}
		items[n++] = item;
	}
	return n;
}

int spec_apply(struct link_config *cfg, const char *spec, char *err, size_t errlen)
{
	struct link_config c;
	char *copy = strdup(spec);
	char *tokens[64];
	int ntok = 0;
	unsigned seen = 0;
	int rc = -1;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	link_config_copy(&c, cfg);
	if (*spec == '\0') {
		snprintf(err, errlen,
			 "empty SPEC: expected key=value[,key=value...] with keys " SPEC_KEYS);
		goto out;
	}
	ntok = spec_split(copy, tokens, 64, err, errlen);
	if (ntok < 0)
		goto out;
	for (int i = 0; i < ntok;) {
		char *eq = strchr(tokens[i], '=');
		if (!eq || eq == tokens[i]) {
			snprintf(err, errlen, "'%s' is not key=value (keys: " SPEC_KEYS ")",
				 tokens[i]);
			goto out;
		}
		*eq = '\0';
		char *vals[5] = {eq + 1};
		int nvals = 1, j = i + 1;
		while (j < ntok && !strchr(tokens[j], '=') && nvals < 5)
			vals[nvals++] = tokens[j++];
		if (apply_one(&c, tokens[i], vals, nvals, &seen, err, errlen))
			goto out;
		i = j;
	}
	if ((seen & SEEN_RATE) && (seen & SEEN_TRACE)) {
		snprintf(err, errlen,
			 "rate_mbit and trace exclude each other (a trace sets the rate)");
		goto out;
	}
	if ((seen & SEEN_JITTER) && (seen & SEEN_CV)) {
		snprintf(err, errlen,
			 "jitter_ms and delay_cv exclude each other (both set the spread)");
		goto out;
	}
	/* One queue limit replaces the other unless both are given together. */
	if ((seen & SEEN_QPKTS) && !(seen & SEEN_QBYTES))
		c.queue_bytes = 0;
	if ((seen & SEEN_QBYTES) && !(seen & SEEN_QPKTS))
		c.queue_pkts = 0;
	trace_put(cfg->trace);
	*cfg = c;
	c.trace = NULL;
	rc = 0;
out:
	trace_put(c.trace);
	free(copy);
	return rc;
}

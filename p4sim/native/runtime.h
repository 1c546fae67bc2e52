/* SPDX-License-Identifier: Apache-2.0
 *
 * p4sim native engine: the program-independent half of the C runtime.
 *
 * Bit strings of up to 64 bits are uint64_t (int<W>: int64_t, sign-extended), 65..128 bits
 * unsigned __int128. Tables, registers, counters, meters, the PRE and digests live in one
 * `struct dev` per device; the generated program (see codegen.py) includes this file and the
 * v1model pipeline (pipeline.c) after its own types. The control plane (Python, ctypes)
 * reaches the state through the p4n_* functions at the end, under dev->lock.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outbuf.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define MASK(w) ((w) >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << (w)) - 1))
#define MASK128(w) ((w) >= 128 ? ~(u128)0 : (((u128)1 << (w)) - 1))

static inline int64_t sext(uint64_t x, unsigned w)
{
	return w >= 64 ? (int64_t)x : (int64_t)(x << (64 - w)) >> (64 - w);
}

static inline s128 sext128(u128 x, unsigned w)
{
	return w >= 128 ? (s128)x : (s128)(x << (128 - w)) >> (128 - w);
}

/* Python's floor division and modulo (the interpreter's semantics for int<W>). */
static inline int64_t sdiv_floor(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static inline int64_t smod_floor(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	int64_t r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

/* w bits at bit offset off (MSB first) of p; w <= 64. */
static inline uint64_t getbits(const uint8_t *p, unsigned off, unsigned w)
{
	p += off >> 3;
	off &= 7;
	unsigned nb = (off + w + 7) >> 3;
	u128 acc = 0;
	for (unsigned i = 0; i < nb; i++)
		acc = (acc << 8) | p[i];
	return (uint64_t)(acc >> (nb * 8 - off - w)) & MASK(w);
}

/* OR the low w bits of v into p at bit offset off (the target bits must be zero). */
static inline void putbits(uint8_t *p, unsigned off, unsigned w, uint64_t v)
{
	p += off >> 3;
	off &= 7;
	unsigned nb = (off + w + 7) >> 3;
	u128 acc = (u128)(v & MASK(w)) << (nb * 8 - off - w);
	for (unsigned i = nb; i-- > 0;) {
		p[i] |= (uint8_t)acc;
		acc >>= 8;
	}
}

static inline u128 getbits128(const uint8_t *p, unsigned off, unsigned w)
{
	return ((u128)getbits(p, off, w - 64) << 64) | getbits(p, off + w - 64, 64);
}

static inline void putbits128(uint8_t *p, unsigned off, unsigned w, u128 v)
{
	putbits(p, off, w - 64, (uint64_t)(v >> 64));
	putbits(p, off + w - 64, 64, (uint64_t)v);
}

/* ------------------------------------------------------------------ hash algorithms */
static uint16_t crc16_arc(const uint8_t *d, size_t n)
{
	uint16_t c = 0;
	for (size_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xA001 : c >> 1;
	}
	return c;
}

static uint32_t crc32_eth(const uint8_t *d, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
	}
	return ~c;
}

static uint16_t csum16(const uint8_t *d, size_t n)
{
	uint64_t s = 0;
	size_t i = 0;
	for (; i + 1 < n; i += 2)
		s += (uint32_t)(d[i] << 8 | d[i + 1]);
	if (i < n)
		s += (uint32_t)d[i] << 8;
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)~s;
}

static uint16_t xor16(const uint8_t *d, size_t n)
{
	uint16_t r = 0;
	size_t i = 0;
	for (; i + 1 < n; i += 2)
		r ^= (uint16_t)(d[i] << 8 | d[i + 1]);
	if (i < n)
		r ^= (uint16_t)(d[i] << 8);
	return r;
}

static uint64_t identity_hash(const uint8_t *d, size_t n)
{
	uint64_t r = 0;
	for (size_t i = 0; i < n && i < 8; i++)
		r = (r << 8) | d[i];
	return r;
}

enum { ALGO_CRC16, ALGO_CRC32, ALGO_CSUM16, ALGO_XOR16, ALGO_IDENTITY };

static uint64_t run_hash(int algo, const uint8_t *d, size_t n)
{
	switch (algo) {
	case ALGO_CRC16:
		return crc16_arc(d, n);
	case ALGO_CRC32:
		return crc32_eth(d, n);
	case ALGO_CSUM16:
		return csum16(d, n);
	case ALGO_XOR16:
		return xor16(d, n);
	default:
		return identity_hash(d, n);
	}
}

/* ------------------------------------------------------------------ tables */
/* One entry (a record slot); its match checks and action data are set by the control
 * plane. Records that share the values of the exact keys form a bucket, ordered as the
 * interpreter's table orders them (highest rank first). */
struct check {
	uint16_t word; /* index into the key words */
	uint8_t is_range;
	uint64_t a, b; /* value, mask / low, high */
};

struct meter_cell {
	int configured;
	double cir, cburst, pir, pburst;
	double tc, tp, last;
};

struct rec {
	int32_t action;
	uint16_t nchecks;
	struct check *checks;
	uint64_t *args;
	uint64_t packets, bytes;
	struct meter_cell meter;
};

/* Routing tables (one LPM key of up to 64 bits, the others exact): per bucket, one hash
 * of value -> slot per prefix length, longest first, so a lookup costs one probe per
 * distinct prefix length instead of a scan of the entries. */
struct lpm_level {
	uint64_t mask;
	uint32_t cap;
	int32_t *slots; /* -1: empty */
	uint64_t *vals;
};

struct bucket {
	struct bucket *next;
	uint32_t n;
	int32_t *slots;
	uint32_t nlevels;
	struct lpm_level *levels;
	uint64_t key[]; /* the exact words */
};

/* A group of an action selector, as one table sees it: its members' actions and arguments
 * in BMv2 member-handle order (a member of weight w fills w slots). A record of a table
 * implemented by a selector whose action is -2 - g names group g. */
struct sel_group {
	uint32_t n;
	int32_t *actions;
	uint64_t *args; /* n * nargs words */
};

struct table {
	uint32_t nwords, nexact, nargs, size, nbuckets;
	int32_t lpm_word;	     /* the LPM key's word in a routing table, else -1 */
	const uint16_t *exact_words; /* positions of the exact words in the key */
	struct bucket **heads;
	struct rec *recs; /* `size` slots */
	int32_t default_action;
	uint64_t *default_args;
	uint32_t ngroups; /* action selectors: the groups entries name */
	struct sel_group *groups;
};

static uint64_t hash_words(const uint64_t *w, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull;
	for (uint32_t i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return h;
}

static struct bucket **bucket_ref(struct table *t, const uint64_t *exact)
{
	struct bucket **b = &t->heads[hash_words(exact, t->nexact) & (t->nbuckets - 1)];
	while (*b && memcmp((*b)->key, exact, t->nexact * 8))
		b = &(*b)->next;
	return b;
}

static inline int rec_matches(const struct rec *r, const uint64_t *key)
{
	for (uint32_t i = 0; i < r->nchecks; i++) {
		const struct check *c = &r->checks[i];
		uint64_t x = key[c->word];
		if (c->is_range ? (x < c->a || x > c->b) : ((x & c->b) != c->a))
			return 0;
	}
	return 1;
}

/* The slot of the winning entry for these key words, or -1. */
static inline int32_t table_lookup(struct table *t, const uint64_t *key)
{
	uint64_t exact[t->nexact ? t->nexact : 1];
	for (uint32_t i = 0; i < t->nexact; i++)
		exact[i] = key[t->exact_words[i]];
	struct bucket *b = *bucket_ref(t, exact);
	if (!b)
		return -1;
	if (b->levels) {
		uint64_t x = key[t->lpm_word];
		for (uint32_t l = 0; l < b->nlevels; l++) {
			const struct lpm_level *lv = &b->levels[l];
			uint64_t v = x & lv->mask;
			for (uint32_t h = hash_words(&v, 1) & (lv->cap - 1);;
			     h = (h + 1) & (lv->cap - 1)) {
				if (lv->slots[h] < 0)
					break;
				if (lv->vals[h] == v)
					return lv->slots[h];
			}
		}
		return -1;
	}
	for (uint32_t i = 0; i < b->n; i++)
		if (rec_matches(&t->recs[b->slots[i]], key))
			return b->slots[i];
	return -1;
}

/* ------------------------------------------------------------------ registers, counters */
struct reg {
	uint32_t size;
	uint64_t mask;
	uint64_t *v;
};

struct ctr {
	uint32_t size;
	uint64_t *packets, *bytes;
};

struct mtr {
	uint32_t size;
	struct meter_cell *cells;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* RFC 2698 two-rate three-color marker, as the interpreter's Meter (0 green, 1 yellow, 2 red). */
static int meter_mark(struct meter_cell *m, double size)
{
	if (!m->configured)
		return 0;
	double now = now_s();
	double dt = now - m->last;
	m->last = now;
	m->tc = m->tc + m->cir * dt < m->cburst ? m->tc + m->cir * dt : m->cburst;
	m->tp = m->tp + m->pir * dt < m->pburst ? m->tp + m->pir * dt : m->pburst;
	if (m->tp < size)
		return 2;
	if (m->tc < size) {
		m->tp -= size;
		return 1;
	}
	m->tc -= size;
	m->tp -= size;
	return 0;
}

static void meter_config(struct meter_cell *m, int on, double cir, double cb, double pir, double pb)
{
	memset(m, 0, sizeof *m);
	if (!on)
		return;
	m->configured = 1;
	m->cir = cir, m->cburst = cb, m->pir = pir, m->pburst = pb;
	m->tc = cb, m->tp = pb, m->last = now_s();
}

/* ------------------------------------------------------------------ PRE and digests */
struct replica {
	uint32_t port, rid;
};

struct group {
	uint32_t n;
	struct replica *r;
	uint32_t trunc; /* clone sessions: packet_length_bytes (0 = whole frame) */
	int present;
};

#define MAX_GROUPS 65536
#define DIGEST_RING 4096
#define DIGEST_MAX_FIELDS 32

struct digest_rec {
	uint32_t type, receiver, n;
	uint64_t v[DIGEST_MAX_FIELDS];
};

/* ------------------------------------------------------------------ the device */
struct dev {
	pthread_mutex_t lock;
	struct table *tables;
	struct reg *regs;
	struct ctr *ctrs;
	struct mtr *mtrs;
	struct group *mcast;	/* MAX_GROUPS, by group id */
	struct group *sessions; /* MAX_GROUPS, by session id */
	struct digest_rec *digests;
	uint32_t ndigests;
	uint64_t digests_lost;
	double start;
	uint64_t aborts; /* packets dropped: a run-time error (stack bounds, assert), no memory */
	struct p4n_out *out;	/* where the running p4n_process_into() appends its outputs */
	struct p4n_out own_out; /* p4n_process()'s: the outputs of its last call */
	uint8_t *scratch;	/* checksum/hash buffers with payload */
	size_t scratch_cap;
	uint8_t *hdr_buf; /* the deparser's output, the headers, until they are sent */
	size_t hdr_cap;
};

/* A buffer of at least `n` bytes, or NULL (out of memory: the caller aborts the packet; the
 * buffer it had stays the device's). */
static uint8_t *scratch(struct dev *d, size_t n)
{
	if (n > d->scratch_cap) {
		uint8_t *grown = realloc(d->scratch, n);
		if (!grown)
			return NULL;
		d->scratch = grown, d->scratch_cap = n;
	}
	return d->scratch;
}

/* Room for `n` more deparsed bytes after the first `len` of the header buffer, or NULL (out
 * of memory). It grows: what a deparser emits is not bounded by its header types (two
 * instances of one type, a stack assigned to another, an emit in a loop). */
static uint8_t *header_room(struct dev *d, size_t len, size_t n)
{
	if (len + n > d->hdr_cap) {
		size_t cap = 2 * (len + n) > 256 ? 2 * (len + n) : 256;
		uint8_t *grown = realloc(d->hdr_buf, cap);
		if (!grown)
			return NULL;
		d->hdr_buf = grown, d->hdr_cap = cap;
	}
	return d->hdr_buf + len;
}

static void emit_output(struct dev *d, uint32_t port, const uint8_t *a, size_t na, const uint8_t *b,
			size_t nb, size_t trunc)
{
	size_t n = na + nb;
	if (trunc && trunc < n)
		n = trunc;
	uint8_t *f = p4n_out_append(d->out, port, (uint32_t)n);
	if (!f)
		return; /* out of memory: the frame is lost, the switch goes on */
	size_t ca = na < n ? na : n;
	memcpy(f, a, ca);
	if (n > ca)
		memcpy(f + ca, b, n - ca);
}

static void add_digest(struct dev *d, uint32_t type, uint32_t receiver, const uint64_t *v,
		       uint32_t n)
{
	if (d->ndigests >= DIGEST_RING) {
		d->digests_lost++;
		return;
	}
	struct digest_rec *r = &d->digests[d->ndigests++];
	r->type = type, r->receiver = receiver, r->n = n;
	memcpy(r->v, v, n * 8);
}

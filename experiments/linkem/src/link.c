/* SPDX-License-Identifier: Apache-2.0 */
#include "link.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void link_config_default(struct link_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->queue_pkts = LINK_DEFAULT_QUEUE_PKTS;
	cfg->delay_cv = -1;
	cfg->dist = DIST_NORMAL;
	cfg->ge_r = 1; /* netem's gemodel defaults: r = 1 - p is set by the parser, 1-h = 1 */
	cfg->ge_1h = 1;
}

static void release(struct link *l, uint32_t handle)
{
	if (l->release)
		l->release(l->release_ctx, handle);
}

static void trace_reset(struct link *l, uint64_t now_ns)
{
	l->trace_base_ns = now_ns;
	l->trace_cycle = 0;
	l->trace_idx = 0;
	l->trace_last_ns = 0;
	l->trace_credit = 0;
}

int link_init(struct link *l, const struct link_config *cfg, uint64_t seed, uint32_t capacity,
	      uint64_t now_ns)
{
	memset(l, 0, sizeof(*l));
	l->q = calloc(capacity, sizeof(*l->q));
	l->heap = calloc(capacity, sizeof(*l->heap));
	if (!l->q || !l->heap) {
		free(l->q);
		free(l->heap);
		return -1;
	}
	l->q_cap = capacity;
	l->cfg = *cfg;
	rng_seed(&l->loss_rng, seed * 3 + 1);
	rng_seed(&l->ge_rng, seed * 3 + 2);
	rng_seed(&l->delay_rng, seed * 3 + 3);
	l->head_done_ns = LINK_NEVER;
	l->link_free_ns = now_ns;
	l->credit_ns = now_ns;
	l->credit_bytes = (double)cfg->burst_bytes;
	l->floor_ns = now_ns;
	trace_reset(l, now_ns);
	return 0;
}

void link_free(struct link *l)
{
	for (uint32_t i = 0; i < l->q_len; i++)
		release(l, l->q[(l->q_head + i) % l->q_cap].handle);
	for (uint32_t i = 0; i < l->heap_len; i++)
		release(l, l->heap[i].f.handle);
	trace_put(l->cfg.trace);
	free(l->q);
	free(l->heap);
	memset(l, 0, sizeof(*l));
}

/* ---- rate stage ------------------------------------------------------------------- */

static double bytes_per_ns(const struct link_config *cfg) { return cfg->rate_bps / 8e9; }

/* Token bucket credit at time t (negative: bytes of the current frame still to send). */
static double credit_at(const struct link *l, uint64_t t)
{
	double elapsed = t > l->credit_ns ? (double)(t - l->credit_ns) : 0;
	double c = l->credit_bytes + elapsed * bytes_per_ns(&l->cfg);
	double depth = (double)l->cfg.burst_bytes;

	return c > depth ? depth : c;
}

static uint64_t trace_opportunity_ns(const struct link *l)
{
	const struct trace *t = l->cfg.trace;

	return l->trace_base_ns +
	       (l->trace_cycle * t->period_ms + t->ms[l->trace_idx]) * 1000000ULL;
}

/* Moves the trace cursor to the first opportunity at or after t (never backwards). */
static void trace_seek(struct link *l, uint64_t t)
{
	const struct trace *tr = l->cfg.trace;

	if (trace_opportunity_ns(l) >= t)
		return;
	uint64_t rel = t - l->trace_base_ns;
	uint64_t period_ns = tr->period_ms * 1000000ULL;
	uint64_t offset = rel % period_ns;
	size_t lo = 0, hi = tr->n;

	l->trace_cycle = rel / period_ns;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tr->ms[mid] * 1000000ULL < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	l->trace_idx = lo;
	if (lo == tr->n) {
		l->trace_idx = 0;
		l->trace_cycle++;
	}
}

/* Mahimahi's delivery: each opportunity carries 1500 bytes; a frame may use several (its
 * bytes accumulate), several frames may share one; credit left when nothing waits is lost. */
static uint64_t trace_schedule(struct link *l, uint64_t ready, uint32_t len)
{
	if (ready > l->trace_last_ns)
		l->trace_credit = 0;
	if (l->trace_credit >= len) {
		l->trace_credit -= len;
		return l->trace_last_ns;
	}
	trace_seek(l, ready);
	for (;;) {
		uint64_t o = trace_opportunity_ns(l);
		if (++l->trace_idx == l->cfg.trace->n) {
			l->trace_idx = 0;
			l->trace_cycle++;
		}
		l->trace_credit += TRACE_OPPORTUNITY_BYTES;
		l->trace_last_ns = o;
		if (l->trace_credit >= len) {
			l->trace_credit -= len;
			return o;
		}
	}
}

static void schedule_head(struct link *l)
{
	const struct link_frame *f = &l->q[l->q_head];
	uint64_t ready = f->arrival_ns > l->link_free_ns ? f->arrival_ns : l->link_free_ns;

	l->head_ready_ns = ready;

	if (l->cfg.trace) {
		l->head_done_ns = trace_schedule(l, ready, f->len);
	} else if (l->cfg.rate_bps <= 0) {
		l->head_done_ns = ready;
	} else {
		double c = credit_at(l, ready) - f->len;
		l->credit_bytes = c;
		l->credit_ns = ready;
		l->head_done_ns =
			c >= 0 ? ready : ready + (uint64_t)ceil(-c / bytes_per_ns(&l->cfg));
	}
}

/* ---- loss ------------------------------------------------------------------------- */

/* netem's Gilbert-Elliott step: the state moves first, the loss draw uses the old state's
 * probability (1-k in good, 1-h in bad). */
static bool ge_lost(struct link *l)
{
	const struct link_config *c = &l->cfg;
	bool was_bad = l->ge_bad;

	if (!was_bad) {
		if (rng_uniform(&l->ge_rng) < c->ge_p)
			l->ge_bad = true;
		return rng_uniform(&l->ge_rng) < c->ge_1k;
	}
	if (rng_uniform(&l->ge_rng) < c->ge_r)
		l->ge_bad = false;
	return rng_uniform(&l->ge_rng) < c->ge_1h;
}

/* Draws whether this frame is lost (Gilbert-Elliott, then Bernoulli) and counts it. */
static bool lost(struct link *l)
{
	if (l->cfg.ge && ge_lost(l)) {
		l->c.drop_ge++;
		return true;
	}
	if (rng_bernoulli(&l->loss_rng, l->cfg.loss)) {
		l->c.drop_loss++;
		return true;
	}
	return false;
}

/* ---- delay line --------------------------------------------------------------------- */

static bool before(const struct link_departure *a, const struct link_departure *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void heap_push(struct link *l, const struct link_departure *d)
{
	uint32_t i = l->heap_len++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!before(d, &l->heap[parent]))
			break;
		l->heap[i] = l->heap[parent];
		i = parent;
	}
	l->heap[i] = *d;
}

static void heap_pop(struct link *l)
{
	struct link_departure last = l->heap[--l->heap_len];
	uint32_t i = 0, n = l->heap_len;

	for (;;) {
		uint32_t child = 2 * i + 1;
		if (child >= n)
			break;
		if (child + 1 < n && before(&l->heap[child + 1], &l->heap[child]))
			child++;
		if (!before(&l->heap[child], &last))
			break;
		l->heap[i] = l->heap[child];
		i = child;
	}
	if (n)
		l->heap[i] = last;
}

double link_delay_sd_ns(const struct link_config *cfg)
{
	if (cfg->delay_cv >= 0)
		return cfg->delay_cv * cfg->delay_ns;
	return cfg->dist == DIST_UNIFORM ? cfg->jitter_ns / sqrt(3.0) : cfg->jitter_ns;
}

static uint64_t sample_delay(struct link *l)
{
	const struct link_config *c = &l->cfg;
	double sd = link_delay_sd_ns(c);
	double z;

	if (sd <= 0 || c->dist == DIST_CONST)
		return (uint64_t)c->delay_ns;
	switch (c->dist) {
	case DIST_UNIFORM:
		z = rng_uniform_std(&l->delay_rng);
		break;
	case DIST_PARETO:
		z = rng_pareto_std(&l->delay_rng);
		break;
	case DIST_PARETONORMAL:
		z = rng_paretonormal_std(&l->delay_rng);
		break;
	default:
		z = rng_normal(&l->delay_rng);
		break;
	}
	double d = c->delay_ns + sd * z;
	return d > 0 ? (uint64_t)d : 0; /* a negative draw means no delay, as in netem */
}

/* ---- the pipeline ------------------------------------------------------------------- */

void link_advance(struct link *l, uint64_t now_ns)
{
	while (l->q_len) {
		if (l->head_done_ns == LINK_NEVER)
			schedule_head(l);
		if (l->head_done_ns > now_ns)
			break;
		struct link_frame f = l->q[l->q_head];
		l->q_head = (l->q_head + 1) % l->q_cap;
		l->q_len--;
		l->q_bytes -= f.len;
		l->link_free_ns = l->head_done_ns;
		if (l->head_done_ns > l->head_ready_ns)
			l->c.busy_ns += l->head_done_ns - l->head_ready_ns;
		l->head_done_ns = LINK_NEVER;

		if (l->cfg.loss_at == LOSS_AT_DEPARTURE && lost(l)) {
			release(l, f.handle);
			continue;
		}
		struct link_departure d = {
			.due_ns = l->link_free_ns + sample_delay(l),
			.seq = l->seq++,
			.sent_ns = l->link_free_ns,
			.f = f,
		};
		if (!l->cfg.reorder && d.due_ns < l->last_due_ns)
			d.due_ns = l->last_due_ns; /* delay is a lower bound; order is kept */
		if (d.due_ns > l->last_due_ns)
			l->last_due_ns = d.due_ns;
		heap_push(l, &d);
		if (l->sent)
			l->sent(l->release_ctx, f.handle, f.len);
	}
}

enum link_verdict link_enqueue(struct link *l, uint64_t now_ns, uint32_t handle, uint32_t len)
{
	const struct link_config *c = &l->cfg;

	if (now_ns < l->floor_ns)
		now_ns = l->floor_ns;
	link_advance(l, now_ns);
	l->c.rx_frames++;
	l->c.rx_bytes += len;
	if (c->loss_at == LOSS_AT_ENQUEUE && lost(l))
		return LINK_DROP_LOSS; /* as netem: before the queue limit, taking no space */
	if ((c->queue_pkts && l->q_len + 1 > c->queue_pkts) ||
	    (c->queue_bytes && l->q_bytes + len > c->queue_bytes) || l->q_len == l->q_cap ||
	    l->q_len + l->heap_len == l->q_cap) {
		l->c.drop_queue++;
		return LINK_DROP_QUEUE;
	}
	l->q[(l->q_head + l->q_len) % l->q_cap] = (struct link_frame){handle, len, now_ns};
	l->q_len++;
	l->q_bytes += len;
	link_advance(l, now_ns); /* an idle unlimited or bursting link sends it at once */
	return LINK_ACCEPTED;
}

bool link_dequeue(struct link *l, uint64_t now_ns, struct link_departure *out)
{
	if (!l->heap_len || l->heap[0].due_ns > now_ns)
		return false;
	*out = l->heap[0];
	heap_pop(l);
	l->c.tx_frames++;
	l->c.tx_bytes += out->f.len;
	return true;
}

unsigned link_depart(struct link *l, uint64_t now_ns, uint64_t slack_ns, struct link_departure *out,
		     unsigned max)
{
	unsigned n = 0;

	link_advance(l, now_ns);
	while (n < max && link_dequeue(l, now_ns + slack_ns, &out[n]))
		n++;
	return n;
}

uint64_t link_next_event(const struct link *l)
{
	uint64_t next = l->heap_len ? l->heap[0].due_ns : LINK_NEVER;

	if (l->q_len && l->head_done_ns < next)
		next = l->head_done_ns;
	return next;
}

uint64_t link_min_delay_ns(const struct link_config *c)
{
	return link_delay_sd_ns(c) <= 0 || c->dist == DIST_CONST ? (uint64_t)c->delay_ns : 0;
}

uint64_t link_next_departure(const struct link *l)
{
	uint64_t next = l->heap_len ? l->heap[0].due_ns : LINK_NEVER;

	if (l->q_len && l->head_done_ns != LINK_NEVER) {
		uint64_t earliest = l->head_done_ns + link_min_delay_ns(&l->cfg);
		if (!l->cfg.reorder && earliest < l->last_due_ns)
			earliest = l->last_due_ns; /* it will not overtake the delay line */
		if (earliest < next)
			next = earliest;
	}
	return next;
}

void link_reconfigure(struct link *l, const struct link_config *cfg, uint64_t now_ns)
{
	bool was_rate = !l->cfg.trace && l->cfg.rate_bps > 0;
	bool is_rate = !cfg->trace && cfg->rate_bps > 0;
	bool trace_changed = cfg->trace != l->cfg.trace;

	link_advance(l, now_ns);
	l->floor_ns = now_ns;
	bool in_serialization = l->q_len && l->head_done_ns != LINK_NEVER;
	double credit = was_rate ? credit_at(l, now_ns) : 0;
	trace_put(l->cfg.trace); /* the new config brings its own reference */
	l->cfg = *cfg;
	if (trace_changed)
		trace_reset(l, now_ns);

	if (is_rate) {
		double depth = (double)cfg->burst_bytes;
		l->credit_bytes = credit > depth ? depth : credit;
		l->credit_ns = now_ns;
	}
	if (!in_serialization)
		return;
	if (was_rate && is_rate) {
		/* The frame on the wire sends its remaining bytes at the new rate. */
		double owed = l->credit_bytes < 0 ? -l->credit_bytes : 0;
		l->head_done_ns = now_ns + (uint64_t)ceil(owed / bytes_per_ns(cfg));
	} else {
		/* Different kind of limiter: the frame starts over under the new one. */
		l->head_done_ns = LINK_NEVER;
		l->link_free_ns = now_ns;
		if (is_rate)
			l->credit_bytes = 0;
	}
}

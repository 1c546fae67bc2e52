/* SPDX-License-Identifier: Apache-2.0
 * Unit tests of linkem's scheduling core (link.c) and SPEC parser, driven by an injected
 * clock: every time below is chosen by the test, nothing sleeps.
 * Run: make linkem-unit, or build/linkem/test_link   (last line: "N passed, N failed") */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hist.h"
#include "link.h"
#include "spec.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL
#define MAXF 200000

static unsigned released;
static void count_release(void *ctx, uint32_t handle)
{
	(void)ctx;
	(void)handle;
	released++;
}

static struct link_departure out[MAXF];

static void make_link(struct link *l, const char *spec, uint64_t now)
{
	struct link_config cfg;
	char err[512];

	link_config_default(&cfg);
	if (spec && spec_apply(&cfg, spec, err, sizeof(err))) {
		printf("bad spec in test: %s: %s\n", spec, err);
		exit(1);
	}
	if (link_init(l, &cfg, 42, MAXF, now)) {
		printf("link_init failed\n");
		exit(1);
	}
	l->release = count_release;
	released = 0;
}

/* Runs the clock event by event up to `until` and collects departures in order. */
static int drain(struct link *l, uint64_t until)
{
	int n = 0;

	for (;;) {
		uint64_t t = link_next_event(l);
		if (t > until)
			break;
		link_advance(l, t);
		while (n < MAXF && link_dequeue(l, t, &out[n]))
			n++;
	}
	return n;
}

/* ---- queue --------------------------------------------------------------------------- */

static void test_queue_pkts_drops_the_next_of_a_burst(void)
{
	struct link l;
	int accepted = 0;

	/* 1 Mbit/s: the burst arrives far faster than it drains. */
	make_link(&l, "rate_mbit=1,queue_pkts=10", 0);
	for (uint32_t i = 0; i < 11; i++)
		accepted += link_enqueue(&l, 1 * US, i, 1000) == LINK_ACCEPTED;
	CHECK(accepted == 10, "accepted %d of 11 with queue_pkts=10", accepted);
	CHECK(l.c.drop_queue == 1, "drop_queue %llu", (unsigned long long)l.c.drop_queue);
	/* Queue = {0..9}, frame 0 on the wire until 8 ms; then there is room for one more. */
	CHECK(link_enqueue(&l, 7 * MS, 11, 1000) == LINK_DROP_QUEUE, "still full at 7 ms");
	CHECK(link_enqueue(&l, 8 * MS + 1 * US, 12, 1000) == LINK_ACCEPTED, "room at 8 ms");
	CHECK(drain(&l, 10 * SEC) == 11, "all accepted frames leave");
	link_free(&l);
}

static void test_queue_bytes_limit(void)
{
	struct link l;

	make_link(&l, "rate_mbit=1,queue_bytes=3000", 0);
	CHECK(l.cfg.queue_pkts == 0, "queue_bytes alone replaces the default packet limit");
	CHECK(link_enqueue(&l, 0, 0, 1000) == LINK_ACCEPTED, "1000 of 3000");
	CHECK(link_enqueue(&l, 0, 1, 1500) == LINK_ACCEPTED, "2500 of 3000");
	CHECK(link_enqueue(&l, 0, 2, 600) == LINK_DROP_QUEUE, "3100 > 3000 dropped");
	CHECK(link_enqueue(&l, 0, 3, 500) == LINK_ACCEPTED, "3000 of 3000 fits exactly");
	CHECK(link_queue_bytes(&l) == 3000, "queue bytes %llu",
	      (unsigned long long)link_queue_bytes(&l));
	link_free(&l);
}

/* ---- rate ----------------------------------------------------------------------------- */

static void test_serialization_delay(void)
{
	struct link l;

	/* 8 Mbit/s = 1 byte/us: a 1000-byte frame takes 1 ms on the wire. */
	make_link(&l, "rate_mbit=8", 0);
	for (uint32_t i = 0; i < 3; i++)
		link_enqueue(&l, 0, i, 1000);
	int n = drain(&l, SEC);
	CHECK(n == 3, "3 departures, got %d", n);
	for (int i = 0; i < n; i++)
		CHECK(out[i].due_ns == (uint64_t)(i + 1) * MS,
		      "frame %d due %llu ns, expected %d ms", i, (unsigned long long)out[i].due_ns,
		      i + 1);
	/* An idle link: a lone frame still takes its serialization time. */
	link_enqueue(&l, 10 * MS, 3, 500);
	CHECK(drain(&l, SEC) == 1 && out[0].due_ns == 10 * MS + 500 * US, "lone frame due %llu",
	      (unsigned long long)out[0].due_ns);
	link_free(&l);
}

static void test_token_bucket_burst(void)
{
	struct link l;

	make_link(&l, "rate_mbit=8,burst_bytes=3000", 0);
	/* After 1 s idle the bucket is full (3000 bytes): three frames leave at once. */
	for (uint32_t i = 0; i < 5; i++)
		link_enqueue(&l, SEC, i, 1000);
	int n = drain(&l, 2 * SEC);
	uint64_t expect[5] = {SEC, SEC, SEC, SEC + 1 * MS, SEC + 2 * MS};
	CHECK(n == 5, "5 departures, got %d", n);
	for (int i = 0; i < n && i < 5; i++)
		CHECK(out[i].due_ns == expect[i], "frame %d due %llu, expected %llu", i,
		      (unsigned long long)out[i].due_ns, (unsigned long long)expect[i]);
	/* The bucket refills at the rate: 1.5 ms later 1500 bytes of credit. */
	link_enqueue(&l, SEC + 2 * MS + 1500 * US, 5, 1000);
	link_enqueue(&l, SEC + 2 * MS + 1500 * US, 6, 1000);
	n = drain(&l, 2 * SEC);
	CHECK(n == 2 && out[0].due_ns == SEC + 3500 * US && out[1].due_ns == SEC + 4000 * US,
	      "refill: due %llu, %llu", (unsigned long long)out[0].due_ns,
	      (unsigned long long)out[1].due_ns);
	link_free(&l);
}

static void test_saturated_rate(void)
{
	struct link l;

	/* 10000 frames of 1500 B offered at once through an unlimited queue at 20 Mbit/s:
	 * the last leaves after exactly 10000 * 1500 * 8 / 20e6 = 6 s. */
	make_link(&l, "rate_mbit=20,queue_pkts=0", 0);
	for (uint32_t i = 0; i < 10000; i++)
		link_enqueue(&l, 0, i, 1500);
	int n = drain(&l, 100 * SEC);
	CHECK(n == 10000, "all frames leave: %d", n);
	CHECK(llabs((long long)out[n - 1].due_ns - (long long)(6 * SEC)) < 10 * US,
	      "last frame at %llu ns, expected 6 s", (unsigned long long)out[n - 1].due_ns);
	link_free(&l);
}

/* ---- trace ---------------------------------------------------------------------------- */

static const char *write_trace(const char *content)
{
	static char path[64];
	strcpy(path, "/tmp/linkem-test-trace-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content)) {
		printf("cannot write trace\n");
		exit(1);
	}
	close(fd);
	return path;
}

static void test_trace_replay_and_loop(void)
{
	struct link l;
	char spec[128];
	const char *path = write_trace("5\n10\n");

	/* Opportunities at 5 and 10 ms, then 15 and 20 ms, ... (period 10 ms). */
	snprintf(spec, sizeof(spec), "trace=%s", path);
	make_link(&l, spec, 0);
	for (uint32_t i = 0; i < 4; i++)
		link_enqueue(&l, 0, i, 1500);
	int n = drain(&l, SEC);
	CHECK(n == 4, "4 departures, got %d", n);
	for (int i = 0; i < n; i++)
		CHECK(out[i].due_ns == (uint64_t)(i + 1) * 5 * MS, "frame %d due %llu", i,
		      (unsigned long long)out[i].due_ns);
	/* Two 750-byte frames share one opportunity; idle opportunities are not banked. */
	link_enqueue(&l, 31 * MS, 4, 750);
	link_enqueue(&l, 31 * MS, 5, 750);
	link_enqueue(&l, 31 * MS, 6, 750);
	n = drain(&l, SEC);
	CHECK(n == 3 && out[0].due_ns == 35 * MS && out[1].due_ns == 35 * MS &&
		      out[2].due_ns == 40 * MS,
	      "shared opportunity: %d frames, due %llu %llu %llu", n,
	      (unsigned long long)out[0].due_ns, (unsigned long long)out[1].due_ns,
	      (unsigned long long)out[2].due_ns);
	/* A 3000-byte frame needs two opportunities. */
	link_enqueue(&l, 41 * MS, 7, 3000);
	n = drain(&l, SEC);
	CHECK(n == 1 && out[0].due_ns == 50 * MS, "jumbo frame due %llu",
	      (unsigned long long)out[0].due_ns);
	link_free(&l);
	unlink(path);
}

static void test_trace_mean_rate(void)
{
	struct link l;
	char spec[128];
	char content[4096] = "";

	/* 12 Mbit/s = 1000 opportunities/s: one per ms, here with uneven spacing. */
	for (int ms = 1; ms <= 100; ms++) {
		char line[16];
		snprintf(line, sizeof(line), "%d\n", ms % 10 == 0 ? ms : ms - ms % 2);
		strcat(content, line);
	}
	const char *path = write_trace(content);
	snprintf(spec, sizeof(spec), "trace=%s,queue_pkts=0", path);
	make_link(&l, spec, 0);
	CHECK(fabs(trace_mean_mbit(l.cfg.trace) - 12.0) < 1e-9, "trace mean %.3f Mbit/s",
	      trace_mean_mbit(l.cfg.trace));
	for (uint32_t i = 0; i < 20000; i++)
		link_enqueue(&l, 0, i, 1500);
	int n = drain(&l, 100 * SEC);
	double mbit = 20000.0 * 1500 * 8 / ((double)out[n - 1].due_ns / 1e3);
	CHECK(n == 20000 && fabs(mbit - 12.0) < 0.01, "replayed %d frames at %.4f Mbit/s", n, mbit);
	link_free(&l);
	unlink(path);
}

/* ---- delay and order ------------------------------------------------------------------ */

static void test_order_kept_unless_reorder(void)
{
	struct link l;

	for (int reorder = 0; reorder <= 1; reorder++) {
		char spec[128];
		snprintf(spec, sizeof(spec), "delay_ms=10,jitter_ms=3,reorder=%d,queue_pkts=0",
			 reorder);
		make_link(&l, spec, 0);
		for (uint32_t i = 0; i < 5000; i++)
			link_enqueue(&l, i * 100 * US, i, 100);
		int n = drain(&l, 100 * SEC);
		int inversions = 0;
		for (int i = 1; i < n; i++)
			inversions += out[i].f.handle < out[i - 1].f.handle;
		int lower_bound_ok = 1;
		for (int i = 0; i < n; i++)
			if (!reorder && out[i].due_ns < out[i].sent_ns)
				lower_bound_ok = 0;
		CHECK(n == 5000, "all frames leave (reorder=%d)", reorder);
		if (reorder)
			CHECK(inversions > 100, "jitter of 3 ms on 100 us spacing reorders: %d",
			      inversions);
		else
			CHECK(inversions == 0 && lower_bound_ok, "order kept: %d inversions",
			      inversions);
		link_free(&l);
	}
}

static void check_distribution(const char *spec, double mean_ms, double sd_ms, double tol)
{
	struct link l;
	const int N = 100000;

	make_link(&l, spec, 0);
	for (int i = 0; i < N; i++)
		link_enqueue(&l, (uint64_t)i * 10 * US, (uint32_t)i, 100);
	int n = drain(&l, 1000 * SEC);
	double sum = 0, sq = 0;
	for (int i = 0; i < n; i++) {
		double d = (double)(out[i].due_ns - out[i].sent_ns) / 1e6;
		sum += d;
		sq += d * d;
	}
	double mean = sum / n, sd = sqrt(sq / n - mean * mean);
	CHECK(n == N, "%s: all frames", spec);
	CHECK(fabs(mean - mean_ms) <= tol * mean_ms, "%s: mean %.4f ms, expected %.4f", spec, mean,
	      mean_ms);
	CHECK(fabs(sd - sd_ms) <= tol * (sd_ms > 0 ? sd_ms : 1), "%s: sd %.4f ms, expected %.4f",
	      spec, sd, sd_ms);
	link_free(&l);
}

static void test_delay_distributions(void)
{
	/* reorder=1 so that the samples are the drawn delays, not order-preserving bounds. */
	check_distribution("delay_ms=10,dist=const,reorder=1,queue_pkts=0", 10, 0, 1e-9);
	check_distribution("delay_ms=10,delay_cv=0.1,reorder=1,queue_pkts=0", 10, 1, 0.02);
	check_distribution("delay_ms=20,jitter_ms=2,dist=normal,reorder=1,queue_pkts=0", 20, 2,
			   0.02);
	/* uniform: jitter is the half-width, as in netem: sd = 3 / sqrt(3). */
	check_distribution("delay_ms=10,jitter_ms=3,dist=uniform,reorder=1,queue_pkts=0", 10,
			   3 / sqrt(3), 0.02);
	check_distribution("delay_ms=10,jitter_ms=1,dist=pareto,reorder=1,queue_pkts=0", 10, 1,
			   0.05);
	check_distribution("delay_ms=10,jitter_ms=1,dist=paretonormal,reorder=1,queue_pkts=0", 10,
			   1, 0.05);
}

static void test_seed_reproducible(void)
{
	struct link a, b;
	struct link_config cfg;
	char err[256];
	int same = 1;

	link_config_default(&cfg);
	spec_apply(&cfg, "delay_ms=10,jitter_ms=2,loss=0.1,reorder=1", err, sizeof(err));
	link_init(&a, &cfg, 7, 1000, 0);
	link_config_copy(&cfg, &cfg);
	link_init(&b, &cfg, 7, 1000, 0);
	for (uint32_t i = 0; i < 500; i++) {
		link_enqueue(&a, i * US, i, 100);
		link_enqueue(&b, i * US, i, 100);
	}
	link_advance(&a, 2 * SEC);
	link_advance(&b, 2 * SEC);
	struct link_departure da, db;
	while (link_dequeue(&a, 2 * SEC, &da)) {
		if (!link_dequeue(&b, 2 * SEC, &db) || da.due_ns != db.due_ns ||
		    da.f.handle != db.f.handle)
			same = 0;
	}
	CHECK(same && a.c.drop_loss == b.c.drop_loss && a.c.drop_loss > 0,
	      "same seed, same delays and losses");
	link_free(&a);
	link_free(&b);
}

/* ---- loss ----------------------------------------------------------------------------- */

static void test_bernoulli_loss(void)
{
	struct link l;
	const int N = 200000;

	make_link(&l, "loss=0.05,queue_pkts=0", 0);
	for (int i = 0; i < N; i++)
		link_enqueue(&l, (uint64_t)i * US, (uint32_t)i, 100);
	int n = drain(&l, 1000 * SEC);
	double rate = (double)l.c.drop_loss / N;
	CHECK(fabs(rate - 0.05) < 0.003, "loss rate %.4f, expected 0.05", rate);
	CHECK(n + (int)l.c.drop_loss == N && released == l.c.drop_loss,
	      "every frame delivered or released: %d + %llu", n, (unsigned long long)l.c.drop_loss);
	link_free(&l);
}

/* A saturated 10 Mbit/s link (1000-byte frames offered at twice its rate into a 100-frame
 * queue for 20 s) at 5 % loss: dropped on arrival, lost frames take no link time and the
 * link delivers 1/0.95 = 5.3 % more frames per second than when they are dropped after
 * their serialization. Loss counts: 5 % of the frames drawn, within 4 binomial sd. */
static void test_loss_at_enqueue_spends_no_link_time(void)
{
	const uint32_t N = 50000;	       /* 20 s at 2500 frames/s */
	const double SERIALIZED = 20 * 1250.0; /* frames the link can carry in 20 s */
	uint32_t delivered[2], drawn[2], lost[2];
	const char *SPECS[2] = {"rate_mbit=10,queue_pkts=100,loss=0.05",
				"rate_mbit=10,queue_pkts=100,loss=0.05,loss_at=enqueue"};

	for (int k = 0; k < 2; k++) {
		struct link l;
		make_link(&l, SPECS[k], 0);
		for (uint32_t i = 0; i < N; i++) {
			link_enqueue(&l, (uint64_t)i * 400 * US, i, 1000);
			link_advance(&l, (uint64_t)i * 400 * US);
			while (link_dequeue(&l, (uint64_t)i * 400 * US, &out[0]))
				; /* departures while the offer lasts: a rate over 20 s */
		}
		delivered[k] = (uint32_t)l.c.tx_frames;
		lost[k] = (uint32_t)l.c.drop_loss;
		/* departure: a draw per frame serialized; enqueue: per frame offered */
		drawn[k] = k ? N : (uint32_t)(l.c.tx_frames + l.c.drop_loss);
		link_free(&l);
	}
	double gain = (double)delivered[1] / delivered[0];
	CHECK(gain > 1.04 && gain < 1.066,
	      "enqueue/departure delivered %u/%u = %.4f, expected 1.053", delivered[1],
	      delivered[0], gain);
	CHECK(fabs(delivered[1] - SERIALIZED) < 0.01 * SERIALIZED,
	      "enqueue-loss delivers the whole rate: %u of %.0f", delivered[1], SERIALIZED);
	for (int k = 0; k < 2; k++) {
		double mean = 0.05 * drawn[k], sd = sqrt(drawn[k] * 0.05 * 0.95);
		CHECK(fabs(lost[k] - mean) < 4 * sd,
		      "%s: %u lost of %u drawn, expected %.0f +- %.0f", SPECS[k], lost[k], drawn[k],
		      mean, 4 * sd);
	}
}

static uint64_t sent_bytes;
static void count_sent(void *ctx, uint32_t handle, uint32_t len)
{
	(void)ctx;
	(void)handle;
	sent_bytes += len;
}

/* The `sent` hook sees every frame whose serialization ended and that the link kept, at
 * the end of its serialization (before the propagation delay): what the feedback's drain
 * rate counts. */
static void test_sent_hook(void)
{
	struct link l;

	make_link(&l, "rate_mbit=8,delay_ms=10,loss=0,queue_pkts=0", 0);
	l.sent = count_sent;
	sent_bytes = 0;
	for (uint32_t i = 0; i < 10; i++)
		link_enqueue(&l, 0, i, 1000); /* 1 ms each at 8 Mbit/s */
	link_advance(&l, 5 * MS + 1);
	CHECK(sent_bytes == 5000, "5 frames serialized by 5 ms: %llu",
	      (unsigned long long)sent_bytes);
	CHECK(link_delay_line_len(&l) == 5, "and still in the delay line");
	link_free(&l);

	make_link(&l, "rate_mbit=8,delay_ms=10,loss=1,queue_pkts=0", 0);
	l.sent = count_sent;
	sent_bytes = 0;
	for (uint32_t i = 0; i < 10; i++)
		link_enqueue(&l, 0, i, 1000);
	link_advance(&l, 20 * MS);
	CHECK(sent_bytes == 0 && l.c.drop_loss == 10, "loss=1: nothing sent, all lost");
	link_free(&l);
}

/* The link's busy time is its own schedule: a frame's start is its arrival (or the previous
 * frame's end), whenever linkem gets round to it. The feedback's drain rate divides by it:
 * counted from linkem's wake-ups, a lightly loaded 2.5 Mbit/s leg reported 30 % more than
 * its rate (experiments/docs/baselines/findings.md, loop-ratio-20). */
static void test_busy_time_is_the_schedule(void)
{
	struct link l;

	/* 8 Mbit/s = 1 byte/us. A lone 1000-byte frame that arrived at 0 and is only seen at
	 * 0.4 ms (a late wake-up; its arrival is the kernel's timestamp) ends at 1 ms: 1 ms busy,
	 * not 0.6 ms. */
	make_link(&l, "rate_mbit=8", 0);
	link_enqueue(&l, 0, 0, 1000);
	link_advance(&l, 400 * US);
	CHECK(l.c.busy_ns == 0, "nothing has left the queue yet: %llu",
	      (unsigned long long)l.c.busy_ns);
	link_advance(&l, 3 * MS); /* a late wake-up after its end */
	CHECK(l.c.busy_ns == 1 * MS, "one frame: 1 ms busy, got %llu ns",
	      (unsigned long long)l.c.busy_ns);
	/* Back to back: 3 frames from 10 ms take 3 ms; idle gaps never count. */
	for (uint32_t i = 1; i <= 3; i++)
		link_enqueue(&l, 10 * MS, i, 1000);
	drain(&l, SEC);
	CHECK(l.c.busy_ns == 4 * MS, "4 frames: 4 ms busy, got %llu ns",
	      (unsigned long long)l.c.busy_ns);
	link_free(&l);

	/* Lost at departure: the link spent the time all the same. */
	make_link(&l, "rate_mbit=8,loss=1", 0);
	link_enqueue(&l, 0, 0, 500);
	link_advance(&l, 2 * MS);
	CHECK(l.c.drop_loss == 1 && l.c.busy_ns == 500 * US, "lost frame busy %llu ns",
	      (unsigned long long)l.c.busy_ns);
	link_free(&l);
}

/* Offers n frames, 1 us apart, draining as it goes; marks the delivered ones. */
static void offer_and_collect(struct link *l, int n, char *delivered)
{
	for (int i = 0; i < n; i++) {
		link_enqueue(l, (uint64_t)i * US, (uint32_t)i, 100);
		if (i % 10000 == 9999 || i == n - 1) {
			int got = drain(l, (uint64_t)i * US);
			for (int j = 0; j < got; j++)
				delivered[out[j].f.handle] = 1;
		}
	}
}

static void test_gilbert_elliott_loss(void)
{
	struct link l;
	const int N = 400000;
	char *delivered = calloc(N, 1);

	/* p = 0.01, r = 0.3, 1-h = 1, 1-k = 0: bad state 1/31 of the time, bursts of 1/r. */
	make_link(&l, "ge=0.01,0.3,1,0,queue_pkts=0", 0);
	CHECK(l.cfg.ge && l.cfg.ge_p == 0.01 && l.cfg.ge_r == 0.3 && l.cfg.ge_1h == 1 &&
		      l.cfg.ge_1k == 0,
	      "ge parsed in netem's order p, r, 1-h, 1-k");
	offer_and_collect(&l, N, delivered);
	int bursts = 0, lost = 0;
	for (int i = 0; i < N; i++) {
		lost += !delivered[i];
		bursts += !delivered[i] && (i == 0 || delivered[i - 1]);
	}
	double rate = (double)l.c.drop_ge / N;
	double mean_burst = bursts ? (double)lost / bursts : 0;
	CHECK(lost == (int)l.c.drop_ge && l.c.drop_queue == 0, "every loss is a GE loss");
	CHECK(fabs(rate - 0.01 / 0.31) < 0.004, "GE loss rate %.4f, expected %.4f", rate,
	      0.01 / 0.31);
	CHECK(fabs(mean_burst - 1 / 0.3) < 0.3, "mean burst %.3f, expected %.3f", mean_burst,
	      1 / 0.3);
	link_free(&l);

	/* ge=p alone is netem's Bernoulli special case: r = 1-p, 1-h = 1, 1-k = 0. */
	make_link(&l, "ge=0.02,queue_pkts=0", 0);
	memset(delivered, 0, N);
	offer_and_collect(&l, N, delivered);
	rate = (double)l.c.drop_ge / N;
	CHECK(fabs(rate - 0.02) < 0.002, "ge=p loss rate %.4f, expected 0.02", rate);
	link_free(&l);
	free(delivered);
}

/* ---- live reconfiguration --------------------------------------------------------------- */

static void reconfigure(struct link *l, const char *spec, uint64_t now)
{
	struct link_config cfg;
	char err[256];

	link_config_copy(&cfg, &l->cfg);
	if (spec_apply(&cfg, spec, err, sizeof(err))) {
		printf("bad spec in test: %s\n", err);
		exit(1);
	}
	link_reconfigure(l, &cfg, now);
}

static void test_live_reconfiguration(void)
{
	struct link l;

	/* 1000 bytes at 1 byte/us; at 500 us the rate doubles: 500 bytes left take 250 us. */
	make_link(&l, "rate_mbit=8", 0);
	link_enqueue(&l, 0, 0, 1000);
	link_enqueue(&l, 0, 1, 1000);
	reconfigure(&l, "rate_mbit=16", 500 * US);
	int n = drain(&l, SEC);
	CHECK(n == 2 && out[0].due_ns == 750 * US && out[1].due_ns == 1250 * US,
	      "rate change mid-frame: due %llu, %llu", (unsigned long long)out[0].due_ns,
	      (unsigned long long)out[1].due_ns);

	/* A leg going down (loss=1) loses everything not yet sent, at once; frames already
	 * on their way (in the delay line) still arrive. */
	reconfigure(&l, "rate_mbit=8,delay_ms=10", 2 * MS);
	link_enqueue(&l, 2 * MS, 2, 1000); /* sent at 3 ms, due 13 ms */
	link_enqueue(&l, 2 * MS, 3, 1000); /* on the wire at 3.5 ms */
	reconfigure(&l, "loss=1", 3500 * US);
	for (uint32_t i = 4; i < 10; i++)
		link_enqueue(&l, 4 * MS, i, 1000);
	n = drain(&l, 20 * MS);
	CHECK(n == 1 && out[0].f.handle == 2 && out[0].due_ns == 13 * MS,
	      "only the frame in flight arrives: %d", n);
	CHECK(l.c.drop_loss == 7, "7 frames lost after loss=1: %llu",
	      (unsigned long long)l.c.drop_loss);
	/* Back up: frames flow again with the new delay. */
	reconfigure(&l, "loss=0,delay_ms=5", 50 * MS);
	link_enqueue(&l, 50 * MS, 10, 1000);
	n = drain(&l, SEC);
	CHECK(n == 1 && out[0].due_ns == 56 * MS, "leg back up: due %llu",
	      (unsigned long long)out[0].due_ns);

	/* From a rate to a trace and back. */
	const char *path = write_trace("2\n4\n");
	char spec[128];
	snprintf(spec, sizeof(spec), "trace=%s", path);
	reconfigure(&l, spec, 100 * MS);
	reconfigure(&l, "delay_ms=0", 100 * MS);
	link_enqueue(&l, 100 * MS, 11, 1500);
	n = drain(&l, SEC);
	CHECK(n == 1 && out[0].due_ns == 102 * MS, "trace starts at the change: due %llu",
	      (unsigned long long)out[0].due_ns);
	reconfigure(&l, "rate_mbit=12", 200 * MS);
	CHECK(l.cfg.trace == NULL && l.cfg.rate_bps == 12e6, "rate_mbit replaces the trace");
	link_free(&l);
	unlink(path);
}

/* ---- SPEC parsing ------------------------------------------------------------------------ */

static void expect_spec_error(const char *spec, const char *needle)
{
	struct link_config cfg;
	char err[512] = "";

	link_config_default(&cfg);
	int rc = spec_apply(&cfg, spec, err, sizeof(err));
	CHECK(rc == -1 && strstr(err, needle), "spec '%s' -> '%s' (wanted '%s')", spec, err,
	      needle);
	CHECK(cfg.rate_bps == 0 && cfg.queue_pkts == LINK_DEFAULT_QUEUE_PKTS,
	      "a rejected spec leaves the config unchanged");
}

static void test_spec_errors(void)
{
	expect_spec_error("rate=20", "unknown key 'rate': allowed keys are rate_mbit");
	expect_spec_error("rate_mbit=fast", "rate_mbit=fast: expected a number of Mbit/s");
	expect_spec_error("rate_mbit=20,loss=5", "loss=5: expected a probability in [0, 1]");
	expect_spec_error("rate_mbit=-1", "rate_mbit=-1");
	/* strtod alone read hex, spaces, inf and nan */
	expect_spec_error("rate_mbit=0x14", "rate_mbit=0x14: expected a number of Mbit/s");
	expect_spec_error("rate_mbit= 20", "rate_mbit= 20: expected a number of Mbit/s");
	expect_spec_error("delay_ms=inf", "delay_ms=inf: expected");
	expect_spec_error("loss=e1", "loss=e1: expected");
	expect_spec_error("dist=gauss", "one of const, normal, uniform, pareto, paretonormal");
	expect_spec_error("reorder=yes", "reorder=yes: expected 0");
	expect_spec_error("loss_at=queue",
			  "loss_at=queue: expected departure (after serialization");
	expect_spec_error("queue_pkts=1.5", "queue_pkts=1.5: expected a packet count");
	expect_spec_error("delay_ms=10,jitter_ms=1,delay_cv=0.1", "exclude each other");
	expect_spec_error("ge=0.1,2", "ge: expected ge=p[,r[,1-h[,1-k]]]");
	expect_spec_error("ge=0.1,0.2,0.3,0.4,0.5", "ge: expected");
	expect_spec_error("loss=0.1,0.2", "stray value '0.2'");
	expect_spec_error("trace=/nonexistent/trace", "trace=/nonexistent/trace: cannot open");
	expect_spec_error("", "empty SPEC");
	expect_spec_error("delay_ms", "'delay_ms' is not key=value");
	expect_spec_error("rate_mbit=20,rate_mbit=30", "rate_mbit given twice: give each key once");
	expect_spec_error("loss=0.1,delay_ms=5,loss=0.2", "loss given twice");
	expect_spec_error("rate_mbit=20,", "empty item between commas");
	expect_spec_error(",rate_mbit=20", "empty item between commas");
	expect_spec_error("ge=0.1,,0.2", "empty item between commas");
	expect_spec_error("trace=/dev/zero", "trace=/dev/zero: is not a regular file");
	expect_spec_error("trace=/tmp", "trace=/tmp: is a directory");
	{
		char spec[64] = "trace=/tmp/linkem-test-huge-XXXXXX";
		int fd = mkstemp(spec + strlen("trace="));

		CHECK(fd >= 0 && ftruncate(fd, 10LL << 30) == 0, "a sparse 10 GB trace");
		expect_spec_error(spec, "larger than the 256 MiB a trace may have");
		close(fd);
		unlink(spec + strlen("trace="));
	}

	const char *path = write_trace("1\n3\n2\n");
	char spec[128];
	snprintf(spec, sizeof(spec), "trace=%s", path);
	expect_spec_error(spec, "timestamps must not decrease");
	unlink(path);

	struct link_config cfg;
	char err[512];
	link_config_default(&cfg);
	int rc = spec_apply(&cfg, "rate_mbit=20,delay_ms=10,delay_cv=0.1,queue_pkts=50,loss=0.01",
			    err, sizeof(err));
	CHECK(rc == 0 && cfg.rate_bps == 20e6 && cfg.delay_ns == 10e6 && cfg.delay_cv == 0.1 &&
		      cfg.queue_pkts == 50 && cfg.loss == 0.01,
	      "a full spec parses");
	CHECK(fabs(link_delay_sd_ns(&cfg) - 1e6) < 1e-6, "cv 0.1 of 10 ms is 1 ms");
	rc = spec_apply(&cfg, "delay_ms=20", err, sizeof(err));
	CHECK(rc == 0 && fabs(link_delay_sd_ns(&cfg) - 2e6) < 1e-6, "cv follows the mean delay");
	rc = spec_apply(&cfg, "queue_bytes=30000", err, sizeof(err));
	CHECK(rc == 0 && cfg.queue_pkts == 0 && cfg.queue_bytes == 30000,
	      "queue_bytes replaces queue_pkts");
	rc = spec_apply(&cfg, "ge=off", err, sizeof(err));
	CHECK(rc == 0 && !cfg.ge, "ge=off");
}

static void test_hist_percentiles(void)
{
	static struct hist h;

	hist_reset(&h);
	for (uint64_t v = 1; v <= 100000; v++)
		hist_record(&h, v);
	uint64_t p50 = hist_percentile(&h, 0.5), p99 = hist_percentile(&h, 0.99);
	CHECK(llabs((long long)p50 - 50000) <= 100, "p50 %llu", (unsigned long long)p50);
	CHECK(llabs((long long)p99 - 99000) <= 200, "p99 %llu", (unsigned long long)p99);
	CHECK(fabs(hist_mean(&h) - 50000.5) < 1e-6 && h.max == 100000, "mean and max exact");
	hist_reset(&h);
	hist_record(&h, 7);
	CHECK(hist_percentile(&h, 0.99) == 7, "exact below 1024 us");
}

/* ---- wake-ups ------------------------------------------------------------------------ */

/* Feeds `n` frames arriving every `gap_ns` and runs the clock from wake-up to wake-up, at
 * link_next_departure (lazy) or at every event, ends of serialization included (eager); each
 * wake-up sends the frames due within `slack_ns` (linkem's --departure-slack-us). With
 * `outage`, a live `set loss=1` at outage[0] and `set loss=0` at outage[1], each applied as
 * linkem applies a control command: at its own wake-up, before the next deadline is chosen.
 * Writes each departure's handle, time (the wake-up's) and, if `due`, due time; returns the
 * wake-ups. */
static unsigned simulate_slack(const char *spec, int lazy, uint64_t slack_ns,
			       const uint64_t *outage, uint32_t n, uint64_t gap_ns,
			       uint32_t *handle, uint64_t *left, uint64_t *due, uint32_t *departed)
{
	struct link l;
	uint32_t next_frame = 0;
	unsigned wakeups = 0, changes = 0;
	struct link_departure d;

	make_link(&l, spec, 0);
	*departed = 0;
	for (;;) {
		uint64_t arrival = next_frame < n ? (uint64_t)next_frame * gap_ns : LINK_NEVER;
		uint64_t change = outage && changes < 2 ? outage[changes] : LINK_NEVER;
		uint64_t wake = lazy ? link_next_departure(&l) : link_next_event(&l);
		if (arrival == LINK_NEVER && wake == LINK_NEVER && change == LINK_NEVER)
			break;
		if (arrival <= wake && arrival <= change) {
			link_enqueue(&l, arrival, next_frame, 1000);
			next_frame++;
			continue;
		}
		if (change <= wake) {
			reconfigure(&l, changes++ ? "loss=0" : "loss=1", change);
			continue;
		}
		wakeups++;
		while (link_depart(&l, wake, slack_ns, &d, 1)) {
			if (due)
				due[*departed] = d.due_ns;
			handle[*departed] = d.f.handle;
			left[(*departed)++] = wake;
		}
	}
	link_free(&l);
	return wakeups;
}

static unsigned simulate(const char *spec, int lazy, uint32_t n, uint64_t gap_ns, uint32_t *handle,
			 uint64_t *left, uint32_t *departed)
{
	return simulate_slack(spec, lazy, 0, NULL, n, gap_ns, handle, left, NULL, departed);
}

static void test_lazy_wakeups_keep_every_departure(void)
{
	static const char *SPECS[] = {
		"rate_mbit=8,delay_ms=10,dist=const",
		"rate_mbit=8,delay_ms=10,jitter_ms=2",
		"rate_mbit=8,delay_ms=10,jitter_ms=2,reorder=1",
		"rate_mbit=8,delay_ms=1,delay_cv=0.5,dist=pareto,reorder=1,loss=0.1",
		"rate_mbit=4,delay_ms=5,dist=const,queue_pkts=20",
		"delay_ms=3,jitter_ms=1",
	};
	static uint32_t h_lazy[2000], h_eager[2000];
	static uint64_t at_lazy[2000], at_eager[2000];

	for (unsigned s = 0; s < sizeof(SPECS) / sizeof(SPECS[0]); s++) {
		uint32_t n_lazy, n_eager;
		/* 1000-byte frames every 800 us: 10 Mbit/s offered, 8 and 4 Mbit/s links queue. */
		unsigned w_lazy = simulate(SPECS[s], 1, 2000, 800 * US, h_lazy, at_lazy, &n_lazy);
		unsigned w_eager =
			simulate(SPECS[s], 0, 2000, 800 * US, h_eager, at_eager, &n_eager);
		int same = n_lazy == n_eager;
		for (uint32_t i = 0; same && i < n_lazy; i++)
			same = h_lazy[i] == h_eager[i] && at_lazy[i] == at_eager[i];
		CHECK(n_lazy > 0 && same,
		      "%s: %u departures lazily, %u eagerly, not the same frames at the same times",
		      SPECS[s], n_lazy, n_eager);
		CHECK(w_lazy <= w_eager, "%s: %u lazy wake-ups > %u eager", SPECS[s], w_lazy,
		      w_eager);
		if (strstr(SPECS[s], "const"))
			CHECK(w_lazy == n_lazy,
			      "%s: %u wake-ups for %u departures at distinct times", SPECS[s],
			      w_lazy, n_lazy);
	}
}

/* A leg down and back up through the control socket (the mptcp-outage study's events) leaves
 * no frame without its wake-up: waking only at link_next_departure, every frame that is not
 * lost leaves exactly at its due time, the same frames at the same times as waking at every
 * event; nothing leaves once the delay line has drained, and the stream resumes after. */
static void test_lazy_wakeups_across_an_outage(void)
{
	static const struct {
		const char *spec;
		uint64_t quiet_ns; /* from when nothing leaves until the leg is back */
	} CASES[] = {
		/* loss at departure: the delay line drains within its 10 ms (+ jitter) */
		{"rate_mbit=8,delay_ms=10,delay_cv=0.1", 430 * MS},
		{"rate_mbit=8,delay_ms=10,dist=const", 412 * MS},
		{"rate_mbit=8,delay_ms=10,delay_cv=0.1,queue_pkts=50", 430 * MS},
		/* loss at enqueue: the 100 frames queued by 400 ms still leave, 1 ms apart */
		{"rate_mbit=8,delay_ms=10,delay_cv=0.1,loss_at=enqueue", 530 * MS},
		{"delay_ms=10,delay_cv=0.1", 430 * MS}, /* the study's uplink: no rate */
	};
	/* Between arrivals (every 800 us) and after an end of serialization (every 1 ms once
	 * the queue builds): the change alone moves the link up to its time. */
	static const uint64_t OUTAGE[2] = {401 * MS + 300 * US, 701 * MS + 300 * US};
	static uint32_t h_lazy[2000], h_eager[2000];
	static uint64_t at_lazy[2000], at_eager[2000], due[2000];

	for (unsigned c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const char *spec = CASES[c].spec;
		uint32_t n_lazy, n_eager, on_time = 0, in_outage = 0, after = 0;
		/* 1000-byte frames every 800 us for 1.6 s: 10 Mbit/s offered. */
		simulate_slack(spec, 1, 0, OUTAGE, 2000, 800 * US, h_lazy, at_lazy, due, &n_lazy);
		simulate_slack(spec, 0, 0, OUTAGE, 2000, 800 * US, h_eager, at_eager, NULL,
			       &n_eager);
		int same = n_lazy == n_eager;
		for (uint32_t i = 0; i < n_lazy; i++) {
			same &= h_lazy[i] == h_eager[i] && at_lazy[i] == at_eager[i];
			on_time += at_lazy[i] == due[i];
			in_outage += at_lazy[i] >= CASES[c].quiet_ns && at_lazy[i] < OUTAGE[1];
			after += at_lazy[i] >= OUTAGE[1];
		}
		CHECK(same && on_time == n_lazy,
		      "%s: %u of %u frames left at their due time (lazy), lazy and eager %s", spec,
		      on_time, n_lazy, same ? "agree" : "differ");
		CHECK(in_outage == 0 && after > 500,
		      "%s: %u frames left during the outage, %u after it", spec, in_outage, after);
	}
}

/* ---- departure slack ------------------------------------------------------------------ */

static void test_departure_slack_batches(void)
{
	static const uint64_t ARRIVALS_US[] = {0, 20, 40, 60, 100};
	struct link l;
	struct link_departure d[8];

	make_link(&l, "delay_ms=10,dist=const", 0);
	for (uint32_t i = 0; i < 5; i++)
		link_enqueue(&l, ARRIVALS_US[i] * US, i, 1000);
	CHECK(link_depart(&l, 10 * MS, 0, d, 8) == 1 && d[0].f.handle == 0,
	      "slack 0: only the frame due now leaves");
	unsigned n = link_depart(&l, 10 * MS, 50 * US, d, 8);
	CHECK(n == 2 && d[0].f.handle == 1 && d[1].f.handle == 2,
	      "slack 50 us at 10 ms: the frames due at 10.020 and 10.040 ms leave, in order (%u)",
	      n);
	CHECK(link_next_departure(&l) == 10 * MS + 60 * US,
	      "the next wake-up is the first frame beyond the slack: %llu",
	      (unsigned long long)link_next_departure(&l));
	n = link_depart(&l, 10 * MS + 60 * US, 40 * US, d, 1);
	CHECK(n == 1 && d[0].f.handle == 3, "at most `max` frames per call");
	n = link_depart(&l, 10 * MS + 60 * US, 40 * US, d, 8);
	CHECK(n == 1 && d[0].f.handle == 4 && d[0].due_ns == 10 * MS + 100 * US,
	      "the frame due exactly at the slack's end leaves, its due time unchanged");
	CHECK(l.c.tx_frames == 5 && link_delay_line_len(&l) == 0, "every frame counted once");
	link_free(&l);
}

/* Over a long stream a slack changes when frames leave (up to the slack early), not the
 * model: the same frames in the same order with the same due times, hence the same rate and
 * delay accounting, in a fraction of the wake-ups at NR rates and the same ones at 20 Mbit/s. */
static void test_departure_slack_keeps_the_schedule(void)
{
	static const struct {
		const char *spec;
		uint64_t gap_ns;  /* between arrivals of 1000-byte frames */
		double min_ratio; /* wake-ups without slack / with 50 us; 0: not checked */
	} CASES[] = {
		/* 500 Mbit/s, 16 us per frame, offered every 18 us: 3 frames per 50 us */
		{"rate_mbit=500,delay_ms=10,dist=const", 18 * US, 2.9},
		{"rate_mbit=500,delay_ms=10,delay_cv=0.1", 18 * US, 0},
		{"rate_mbit=500,delay_ms=10,jitter_ms=1,reorder=1", 18 * US, 0},
		/* a queue builds: 450 Mbit/s offered on 400 */
		{"rate_mbit=400,delay_ms=10,dist=const,queue_pkts=100", 18 * US, 2.9},
		/* the paper's 20 Mbit/s: 400 us per frame, nothing within 50 us of another */
		{"rate_mbit=20,delay_ms=10,dist=const", 450 * US, 1.0},
	};
	enum { N = 20000 };
	static uint32_t h0[N], h1[N];
	static uint64_t left0[N], left1[N], due0[N], due1[N];

	for (unsigned c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const char *spec = CASES[c].spec;
		uint32_t n0, n1;
		unsigned w0 =
			simulate_slack(spec, 1, 0, NULL, N, CASES[c].gap_ns, h0, left0, due0, &n0);
		unsigned w1 = simulate_slack(spec, 1, 50 * US, NULL, N, CASES[c].gap_ns, h1, left1,
					     due1, &n1);
		int same = n0 == n1 && n0 > N / 2;
		int within = 1, exact0 = 1;
		double early_sum = 0;
		for (uint32_t i = 0; same && i < n0; i++) {
			same = h0[i] == h1[i] && due0[i] == due1[i];
			within &= left1[i] <= due1[i] && left1[i] + 50 * US >= due1[i];
			exact0 &= left0[i] == due0[i];
			early_sum += (double)(due1[i] - left1[i]);
		}
		CHECK(same, "%s: slack 50 us changed the frames, their order or due times (%u, %u)",
		      spec, n0, n1);
		CHECK(within && exact0,
		      "%s: frames leave at their due time without slack, up to 50 us early with it",
		      spec);
		if (CASES[c].min_ratio >= 1.0)
			CHECK(w0 >= CASES[c].min_ratio * w1,
			      "%s: %u wake-ups without slack, %u with 50 us (expected %.1f x "
			      "fewer)",
			      spec, w0, w1, CASES[c].min_ratio);
		if (CASES[c].min_ratio == 1.0)
			CHECK(w0 == w1 && early_sum == 0,
			      "%s: departures further apart than the slack: nothing changes", spec);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	test_queue_pkts_drops_the_next_of_a_burst();
	test_queue_bytes_limit();
	test_serialization_delay();
	test_token_bucket_burst();
	test_saturated_rate();
	test_trace_replay_and_loop();
	test_trace_mean_rate();
	test_order_kept_unless_reorder();
	test_delay_distributions();
	test_seed_reproducible();
	test_bernoulli_loss();
	test_loss_at_enqueue_spends_no_link_time();
	test_sent_hook();
	test_busy_time_is_the_schedule();
	test_gilbert_elliott_loss();
	test_live_reconfiguration();
	test_spec_errors();
	test_hist_percentiles();
	test_lazy_wakeups_keep_every_departure();
	test_lazy_wakeups_across_an_outage();
	test_departure_slack_batches();
	test_departure_slack_keeps_the_schedule();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

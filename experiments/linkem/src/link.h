/* SPDX-License-Identifier: Apache-2.0
 * The scheduling core of one direction of an emulated link, free of I/O and of clocks:
 * every call takes the current time in ns, so tests drive it with an injected clock.
 *
 *   arrival -> [drop-tail queue] -> [rate limiter: token bucket or trace] -> loss
 *           -> [propagation delay line] -> departure
 *
 * A frame occupies the queue until its serialization ends (the frame being sent still
 * holds its buffer, as on a NIC).  Loss is applied on the link, after the queue: a frame
 * lost there has used its share of the rate, and `loss=1` takes a leg down at once for
 * everything not yet sent; with loss_at=enqueue it is applied on arrival instead, as netem.  Frames are opaque handles with a length; the caller owns
 * the bytes and gets dropped handles back through `release`. */
#ifndef LINKEM_LINK_H
#define LINKEM_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "rng.h"
#include "trace.h"

#define LINK_NEVER UINT64_MAX
#define LINK_DEFAULT_QUEUE_PKTS 1000 /* netem's default limit */

enum delay_dist { DIST_CONST, DIST_NORMAL, DIST_UNIFORM, DIST_PARETO, DIST_PARETONORMAL };

/* Where a frame chosen for loss is dropped: when its serialization ends (it used its share of
 * the rate; linkem's default), or on arrival, before the queue (netem's: it never takes
 * queue space or link time). */
enum loss_point { LOSS_AT_DEPARTURE, LOSS_AT_ENQUEUE };

struct link_config {
	double rate_bps;      /* bits/s; 0 = unlimited */
	uint64_t burst_bytes; /* token bucket depth; 0 = pure serialization */
	struct trace *trace;  /* replaces rate_bps when set (the config holds a reference) */
	uint64_t queue_pkts;  /* 0 = no limit by count */
	uint64_t queue_bytes; /* 0 = no limit by bytes */
	double delay_ns;      /* mean propagation delay */
	double jitter_ns;     /* netem's jitter: sd, or half-width for dist=uniform */
	double delay_cv;      /* < 0: unset; else sd = delay_cv * delay_ns */
	enum delay_dist dist;
	bool reorder;		 /* false: departures keep arrival order */
	double loss;		 /* Bernoulli loss probability */
	enum loss_point loss_at; /* where loss and Gilbert-Elliott loss drop a frame */
	bool ge;		 /* Gilbert-Elliott loss, netem's gemodel semantics */
	double ge_p, ge_r, ge_1h, ge_1k;
};

enum link_verdict { LINK_ACCEPTED, LINK_DROP_QUEUE, LINK_DROP_LOSS };

struct link_frame {
	uint32_t handle;
	uint32_t len;
	uint64_t arrival_ns;
};

/* A frame in the delay line. */
struct link_departure {
	uint64_t due_ns;  /* when it must leave */
	uint64_t seq;	  /* tie-break: equal due times leave in arrival order */
	uint64_t sent_ns; /* end of serialization */
	struct link_frame f;
};

struct link_counters {
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t drop_queue, drop_loss, drop_ge, drop_nobuf;
	/* Time the link spent sending the frames that left the queue (sent or lost at
	 * departure), from each frame's start (its arrival or the previous frame's end) to its
	 * end of serialization: the busy time of the link's own schedule, whenever linkem
	 * happens to run. */
	uint64_t busy_ns;
};

struct link {
	struct link_config cfg;
	struct rng loss_rng, ge_rng,
		delay_rng; /* separate streams: one knob does not shift another's draws */
	bool ge_bad;

	/* Queue: ring of frames waiting for or in serialization. */
	struct link_frame *q;
	uint32_t q_cap, q_head, q_len;
	uint64_t q_bytes;

	/* Rate stage: the head frame's end of serialization, once scheduled. */
	uint64_t head_done_ns;
	uint64_t head_ready_ns; /* when the head frame could start: its share of busy_ns */
	uint64_t link_free_ns;	/* end of the previous frame's serialization */
	double credit_bytes;	/* token bucket (negative while a frame is being sent) */
	uint64_t credit_ns;

	/* Trace replay: the next unused opportunity is (trace_cycle, trace_idx). */
	uint64_t trace_base_ns, trace_cycle;
	uint64_t trace_idx;
	uint64_t trace_last_ns; /* time of the last opportunity used */
	double trace_credit;	/* bytes left of it (usable only at that instant) */

	/* Delay line: a min-heap on (due_ns, seq). */
	struct link_departure *heap;
	uint32_t heap_len;
	uint64_t last_due_ns, seq;

	uint64_t floor_ns; /* arrivals are never placed before the last (re)configuration */

	struct link_counters c;
	void (*release)(void *ctx, uint32_t handle);
	/* Optional: a frame's serialization ended and the link did not lose it (called with
	 * release_ctx). The leg feedback's drain rate counts these. */
	void (*sent)(void *ctx, uint32_t handle, uint32_t len);
	void *release_ctx;
};

void link_config_default(struct link_config *cfg);
/* Holds the config's trace reference from now on. capacity = most frames held at once. */
int link_init(struct link *l, const struct link_config *cfg, uint64_t seed, uint32_t capacity,
	      uint64_t now_ns);
void link_free(struct link *l);
/* Applies at `now_ns`; frames already queued keep their place, the one in serialization
 * finishes its remaining bytes at the new rate. Takes over cfg's trace reference. */
void link_reconfigure(struct link *l, const struct link_config *cfg, uint64_t now_ns);

/* A frame arrives (now_ns may be its kernel receive time, a little in the past). On
 * LINK_DROP_QUEUE and LINK_DROP_LOSS (loss_at=enqueue) the caller still owns the handle. */
enum link_verdict link_enqueue(struct link *l, uint64_t now_ns, uint32_t handle, uint32_t len);
/* Moves every frame whose serialization has ended by now into the delay line. */
void link_advance(struct link *l, uint64_t now_ns);
/* Pops the next frame due by now (call link_advance first); false when none. */
bool link_dequeue(struct link *l, uint64_t now_ns, struct link_departure *out);
/* One departure wake-up at `now_ns`: moves the frames whose serialization has ended into the
 * delay line, then pops in order up to `max` frames due by now_ns + slack_ns into `out` and
 * returns how many. A slack lets one wake-up send the frames due within it: they leave up to
 * slack_ns early, never late, and their due times (the model's rate and delay) are unchanged.
 * slack_ns = 0: exactly the frames due by now. */
unsigned link_depart(struct link *l, uint64_t now_ns, uint64_t slack_ns, struct link_departure *out,
		     unsigned max);
/* Earliest time at which something happens (a serialization ends or a frame is due). */
uint64_t link_next_event(const struct link *l);
/* Earliest time at which a frame may have to leave: the delay line's first due time, or the
 * soonest the frame being serialized can be due (its end of serialization plus the least
 * delay it can draw, and with reorder=0 not before the delay line's last frame). Nothing
 * needs the end of a serialization itself: link_advance at any later time moves the frame
 * with its exact times. Needs the head scheduled (link_advance or link_enqueue first). */
uint64_t link_next_departure(const struct link *l);
/* The least propagation delay a frame can draw: the whole delay when it is constant, else 0.
 * No frame leaves sooner than this after its arrival. */
uint64_t link_min_delay_ns(const struct link_config *cfg);
/* The configured standard deviation of the delay, in ns. */
double link_delay_sd_ns(const struct link_config *cfg);

static inline uint32_t link_queue_len(const struct link *l) { return l->q_len; }
static inline uint64_t link_queue_bytes(const struct link *l) { return l->q_bytes; }
static inline uint32_t link_delay_line_len(const struct link *l) { return l->heap_len; }

#endif /* LINKEM_LINK_H */

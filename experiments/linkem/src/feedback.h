/* SPDX-License-Identifier: Apache-2.0
 * Leg feedback: what the emulated base station behind one leg tells the splitter, in the
 * spirit of the Downlink Data Delivery Status of 3GPP TS 38.425 (desired buffer size, drain
 * rate, highest delivered PDCP SN, lost SN ranges).  Free of I/O and clocks like link.c:
 * linkem calls it when a PDCP data PDU is accepted, delivered or dropped, tells it how long
 * the link was busy sending, and sends the report frames it builds every period.
 * Frame format: p4src/README.md, "Leg feedback frames". */
#ifndef LINKEM_FEEDBACK_H
#define LINKEM_FEEDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FB_ETHERTYPE 0x88B5 /* the PDCP ethertype; D/C = 0 marks a control PDU */
#define FB_PDU_TYPE 7	    /* a PDU type TS 38.323 reserves: ours, not 3GPP's */
#define FB_VERSION 1
#define FB_MAX_UES 16	  /* users tracked per leg (by IPv4 destination) */
#define FB_MAX_RANGES 4	  /* lost SN ranges carried per report */
#define FB_FIXED_BYTES 36 /* report bytes after the Ethernet header, ranges excluded */
#define FB_FRAME_MAX (14 + FB_FIXED_BYTES + 8 * FB_MAX_RANGES)
#define FB_DEFAULT_PERIOD_MS 10
#define FB_DEFAULT_TARGET_MS 20
#define FB_SPEC_KEYS "leg, period_ms, target_ms, sn_bits"
/* Desired buffer before the first rate sample: like TCP's initial window, enough data for the
 * leg to measure its rate (a desired buffer of 0 would mean "send me nothing"). */
#define FB_INITIAL_DESIRED_BYTES (10 * 1500)

struct fb_config {
	uint8_t leg;	    /* leg id carried in every report */
	uint64_t period_ns; /* one report per user per period */
	uint64_t target_ns; /* target queueing delay: desired buffer = rate x (target + delay) */
	unsigned sn_bits;   /* 18 or 12: the splitter's PDCP SN length */
};

struct fb_ue {
	uint32_t addr;	     /* IPv4, host order */
	uint64_t held_bytes; /* accepted, neither delivered nor lost yet */
	uint32_t last_sn;    /* SN of the last delivered PDU (FIFO: the highest) */
	bool delivered_any;
	uint64_t period_bytes;	   /* delivered this period */
	uint64_t period_sent;	   /* serialized (and not lost) this period: the drain */
	uint32_t period_lost;	   /* SNs lost this period */
	uint32_t period_link_lost; /* of them, lost on the link (accepted, then lost) */
	uint32_t ranges[FB_MAX_RANGES][2];
	unsigned nranges;
	uint32_t rate_Bps;		/* last drain-rate estimate, bytes/s */
	bool rate_known;		/* a sample was taken (else the rate field says 0) */
	uint64_t acc_busy_ns, acc_sent; /* carried over periods until a frame was sent: on a
					 * slow leg one frame may take longer than a period */
};

struct fb {
	struct fb_config cfg;
	struct fb_ue ue[FB_MAX_UES];
	unsigned nue;
	uint32_t seq; /* report sequence number, per leg */
	uint64_t period_start_ns, next_report_ns;
	uint64_t busy_ns;   /* the link's busy time this period (fb_link_busy) */
	uint8_t dst_mac[6]; /* the splitter side: source MAC of the data frames */
	bool enabled;	    /* `feedback off` silences the reports (a failing leg) */
};

/* Parses "leg=1,period_ms=10,target_ms=20,sn_bits=18" on top of the defaults. */
int fb_config_parse(struct fb_config *cfg, const char *spec, char *err, size_t errlen);
void fb_init(struct fb *f, const struct fb_config *cfg, uint64_t now_ns);

/* A PDCP data PDU carrying IPv4: its user (IPv4 destination) and SN; false for anything else. */
bool fb_pdu(const uint8_t *frame, uint32_t len, unsigned sn_bits, uint32_t *ue, uint32_t *sn);

/* The life of a frame on the monitored direction (frames that are not PDUs are ignored):
 * accepted into the queue, sent (its serialization ended and the link kept it), delivered
 * (it left the delay line), or lost (accepted: on the link; not accepted: queue full). */
void fb_accepted(struct fb *f, const uint8_t *frame, uint32_t len);
void fb_sent(struct fb *f, const uint8_t *frame, uint32_t len);
void fb_delivered(struct fb *f, const uint8_t *frame, uint32_t len);
void fb_lost(struct fb *f, const uint8_t *frame, uint32_t len, bool accepted);
/* The link spent busy_ns more sending frames (struct link_counters' busy_ns): the drain
 * rate's denominator. */
void fb_link_busy(struct fb *f, uint64_t busy_ns);

/* Builds one report frame per known user into frames[i] (lens[i] bytes) and starts the
 * next period; link_delay_ns is the leg's propagation delay.  Returns the number built. */
unsigned fb_report(struct fb *f, uint64_t now_ns, uint64_t link_delay_ns,
		   uint8_t frames[][FB_FRAME_MAX], uint32_t lens[]);

#endif /* LINKEM_FEEDBACK_H */

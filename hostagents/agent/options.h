/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent application options (the ones after EAL's `--`).
 */
#ifndef AGENT_OPTIONS_H
#define AGENT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DEFAULT_LEG_A_PORT 0
#define DEFAULT_LEG_B_PORT 1
#define DEFAULT_HOST_PORT 2
#define DEFAULT_SN_BITS 18
#define DEFAULT_T_REORDERING_US 200000u
#define DEFAULT_STATS_INTERVAL_MS 100u
#define DEFAULT_IDLE_SLEEP_US 50u
#define DEFAULT_DEEP_IDLE_MS 200u /* longer than any gap of a running flow or ping probe */
#define DEEP_IDLE_SLEEP_US 1000u
#define DEFAULT_SPIN_US 0u
#define MAX_T_REORDERING_US 60000000u /* 60 s; 38.323 tops out at 3 s */
#define MAX_PORT_ID 1023u

struct agent_options {
	uint16_t leg_port[2]; /* [0] = leg A, [1] = leg B */
	uint16_t host_port;
	unsigned int sn_bits;
	uint64_t t_reordering_us;
	unsigned int uplink_leg;    /* 0 = a, 1 = b */
	const char *stats_path;	    /* NULL: stdout */
	uint64_t stats_interval_ms; /* 0: only the final line */
	uint64_t idle_sleep_us;	    /* 0: busy poll */
	uint64_t deep_idle_ms;	    /* silence before idle sleeps grow; 0: never */
	uint64_t spin_us;	    /* keep polling this long after the last frame */
	bool initial_sn_auto;	    /* RX_DELIV starts at the first PDU's SN */
	uint32_t initial_sn;	    /* otherwise RX_DELIV starts here (spec: 0) */
	bool rewrite_dst_mac;
	uint8_t host_dst_mac[6];
};

/* Parse app options (argv[0] is the program name). Returns 0 on success, 1 if --help was
 * printed, -1 after printing an error naming the option and the allowed values to err. */
int agent_parse_options(int argc, char **argv, struct agent_options *opt, FILE *err);

void agent_usage(const char *prog, FILE *out);

#endif /* AGENT_OPTIONS_H */

/* SPDX-License-Identifier: Apache-2.0
 *
 * pdcp-agent application options: parsed after EAL's, every value checked, every error
 * names the option and what it accepts.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
	OPT_LEG_A = 256,
	OPT_LEG_B,
	OPT_HOST,
	OPT_SN_BITS,
	OPT_T_REORDERING_US,
	OPT_UPLINK_LEG,
	OPT_STATS,
	OPT_STATS_INTERVAL_MS,
	OPT_IDLE_SLEEP_US,
	OPT_HOST_DST_MAC,
	OPT_INITIAL_SN,
	OPT_DEEP_IDLE_MS,
	OPT_SPIN_US,
	OPT_HELP,
};

static const struct option long_options[] = {
	{"leg-a", required_argument, NULL, OPT_LEG_A},
	{"leg-b", required_argument, NULL, OPT_LEG_B},
	{"host", required_argument, NULL, OPT_HOST},
	{"sn-bits", required_argument, NULL, OPT_SN_BITS},
	{"t-reordering-us", required_argument, NULL, OPT_T_REORDERING_US},
	{"uplink-leg", required_argument, NULL, OPT_UPLINK_LEG},
	{"stats", required_argument, NULL, OPT_STATS},
	{"stats-interval-ms", required_argument, NULL, OPT_STATS_INTERVAL_MS},
	{"idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP_US},
	{"deep-idle-ms", required_argument, NULL, OPT_DEEP_IDLE_MS},
	{"spin-us", required_argument, NULL, OPT_SPIN_US},
	{"host-dst-mac", required_argument, NULL, OPT_HOST_DST_MAC},
	{"initial-sn", required_argument, NULL, OPT_INITIAL_SN},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

void agent_usage(const char *prog, FILE *out)
{
	fprintf(out,
		"Usage: %s [EAL options] -- [app options]\n"
		"\n"
		"PDCP receive agent of a Dual Connectivity client: reorders the PDCP PDUs of two\n"
		"legs (3GPP TS 38.323 section 5.2.2), strips the PDCP header and hands the "
		"packets\n"
		"in order to the host port; frames from the host port go out on the uplink leg.\n"
		"\n"
		"EAL (typical): -l 0 --no-huge -m 256 --no-pci --file-prefix NAME\n"
		"  --vdev net_af_packet0,iface=LEG_A_IF --vdev net_af_packet1,iface=LEG_B_IF\n"
		"  --vdev net_tap0,iface=HOST_IF   (or net_af_packet2,iface=VETH_TO_CLIENT)\n"
		"  or, on AF_XDP: --vdev net_af_xdp0,iface=LEG_A_IF,start_queue=0,queue_count=1,\n"
		"                 busy_budget=0 (likewise leg B)\n"
		"\n"
		"App options:\n"
		"  --leg-a PORT             DPDK port of leg A (default %d)\n"
		"  --leg-b PORT             DPDK port of leg B (default %d)\n"
		"  --host PORT              DPDK port towards the client stack (default %d)\n"
		"  --sn-bits 12|18          PDCP SN length (default %d)\n"
		"  --t-reordering-us N      t-Reordering in microseconds, 0 to %u; 0 = deliver at\n"
		"                           once, giving up gaps (default %u)\n"
		"  --uplink-leg a|b         leg for frames from the host port (default a)\n"
		"  --stats FILE             JSON-lines stats file (default: stdout)\n"
		"  --stats-interval-ms N    stats period; 0 = only the final line (default %u)\n"
		"  --idle-sleep-us N        0 = busy poll; otherwise, when a poll round finds no\n"
		"                           packet, block until a port has one (net_af_packet,\n"
		"                           net_af_xdp, net_tap) or sleep N us if a port cannot\n"
		"                           be waited on\n"
		"                           (default %u)\n"
		"  --deep-idle-ms N         sleeping agents: after N ms without a frame and with "
		"no\n"
		"                           PDU waiting, idle sleeps last %u us; 0 = never\n"
		"                           (default %u)\n"
		"  --spin-us N              keep polling N us after the last frame before waiting\n"
		"                           (default %u)\n"
		"  --host-dst-mac MAC       rewrite the destination MAC of frames sent to the "
		"host\n"
		"                           port (default: keep it as received)\n"
		"  --initial-sn N|auto      RX_DELIV and RX_NEXT start at SN N (HFN 0), or at the\n"
		"                           first PDU's SN with auto, for an agent started after\n"
		"                           the switch (default 0, as in TS 38.323)\n"
		"  --help                   this text\n",
		prog, DEFAULT_LEG_A_PORT, DEFAULT_LEG_B_PORT, DEFAULT_HOST_PORT, DEFAULT_SN_BITS,
		MAX_T_REORDERING_US, DEFAULT_T_REORDERING_US, DEFAULT_STATS_INTERVAL_MS,
		DEFAULT_IDLE_SLEEP_US, DEEP_IDLE_SLEEP_US, DEFAULT_DEEP_IDLE_MS, DEFAULT_SPIN_US);
}

/* A decimal integer in [0, max], nothing else. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* aa:bb:cc:dd:ee:ff, two hex digits a byte: checked by hand, as sscanf's %2x also takes a
 * sign or a space ("-1:00:00:00:00:01" was ff:00:00:00:00:01). */
static int parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return -1;
	for (int i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)strtoul((char[3]){s[3 * i], s[3 * i + 1], '\0'}, NULL, 16);
	return 0;
}

int agent_parse_options(int argc, char **argv, struct agent_options *opt, FILE *err)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	uint64_t v;
	int c;

	*opt = (struct agent_options){
		.leg_port = {DEFAULT_LEG_A_PORT, DEFAULT_LEG_B_PORT},
		.host_port = DEFAULT_HOST_PORT,
		.sn_bits = DEFAULT_SN_BITS,
		.t_reordering_us = DEFAULT_T_REORDERING_US,
		.stats_interval_ms = DEFAULT_STATS_INTERVAL_MS,
		.idle_sleep_us = DEFAULT_IDLE_SLEEP_US,
		.deep_idle_ms = DEFAULT_DEEP_IDLE_MS,
		.spin_us = DEFAULT_SPIN_US,
	};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		const char *arg = optarg;

		switch (c) {
		case OPT_LEG_A:
		case OPT_LEG_B:
		case OPT_HOST:
			if (parse_uint(arg, MAX_PORT_ID, &v) < 0) {
				fprintf(err,
					"%s: error: %s '%s' is not a port: use a DPDK port number "
					"from 0 to %u, in the order of the --vdev options\n",
					prog,
					c == OPT_HOST	 ? "--host"
					: c == OPT_LEG_A ? "--leg-a"
							 : "--leg-b",
					arg, MAX_PORT_ID);
				return -1;
			}
			if (c == OPT_HOST)
				opt->host_port = (uint16_t)v;
			else
				opt->leg_port[c - OPT_LEG_A] = (uint16_t)v;
			break;
		case OPT_SN_BITS:
			if (parse_uint(arg, 18, &v) < 0 || (v != 12 && v != 18)) {
				fprintf(err,
					"%s: error: --sn-bits '%s' is not allowed: use 12 or 18\n",
					prog, arg);
				return -1;
			}
			opt->sn_bits = (unsigned int)v;
			break;
		case OPT_T_REORDERING_US:
			if (parse_uint(arg, MAX_T_REORDERING_US, &opt->t_reordering_us) < 0) {
				fprintf(err,
					"%s: error: --t-reordering-us '%s' is not allowed: use an "
					"integer from 0 to %u\n",
					prog, arg, MAX_T_REORDERING_US);
				return -1;
			}
			break;
		case OPT_UPLINK_LEG:
			if (strcmp(arg, "a") != 0 && strcmp(arg, "b") != 0) {
				fprintf(err,
					"%s: error: --uplink-leg '%s' is not allowed: use a or b\n",
					prog, arg);
				return -1;
			}
			opt->uplink_leg = arg[0] == 'b';
			break;
		case OPT_STATS:
			if (arg[0] == '\0') {
				fprintf(err, "%s: error: --stats needs a file name\n", prog);
				return -1;
			}
			opt->stats_path = arg;
			break;
		case OPT_STATS_INTERVAL_MS:
		case OPT_IDLE_SLEEP_US:
		case OPT_DEEP_IDLE_MS:
		case OPT_SPIN_US:
			if (parse_uint(arg, 3600u * 1000 * 1000, &v) < 0) {
				fprintf(err,
					"%s: error: %s '%s' is not allowed: use an integer from 0 "
					"to "
					"3600000000\n",
					prog,
					c == OPT_IDLE_SLEEP_US	? "--idle-sleep-us"
					: c == OPT_DEEP_IDLE_MS ? "--deep-idle-ms"
					: c == OPT_SPIN_US	? "--spin-us"
								: "--stats-interval-ms",
					arg);
				return -1;
			}
			if (c == OPT_IDLE_SLEEP_US)
				opt->idle_sleep_us = v;
			else if (c == OPT_DEEP_IDLE_MS)
				opt->deep_idle_ms = v;
			else if (c == OPT_SPIN_US)
				opt->spin_us = v;
			else
				opt->stats_interval_ms = v;
			break;
		case OPT_HOST_DST_MAC:
			if (parse_mac(arg, opt->host_dst_mac) < 0) {
				fprintf(err,
					"%s: error: --host-dst-mac '%s' is not a MAC address: use "
					"the "
					"form 02:00:00:00:00:01\n",
					prog, arg);
				return -1;
			}
			opt->rewrite_dst_mac = true;
			break;
		case OPT_INITIAL_SN:
			if (strcmp(arg, "auto") == 0) {
				opt->initial_sn_auto = true;
			} else if (parse_uint(arg, (1u << 18) - 1, &v) == 0) {
				opt->initial_sn_auto = false;
				opt->initial_sn = (uint32_t)v;
			} else {
				fprintf(err,
					"%s: error: --initial-sn '%s' is not allowed: use auto or "
					"an SN "
					"from 0 to 2^sn-bits - 1\n",
					prog, arg);
				return -1;
			}
			break;
		case OPT_HELP:
			agent_usage(prog, stdout);
			return 1;
		case ':':
		default:
			if (optopt >= OPT_LEG_A)
				fprintf(err, "%s: error: option %s needs a value (see --help)\n",
					prog, argv[optind - 1]);
			else
				fprintf(err, "%s: error: unknown option '%s' (see --help)\n", prog,
					argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(err, "%s: error: unexpected argument '%s' (see --help)\n", prog,
			argv[optind]);
		return -1;
	}
	if (opt->initial_sn >> opt->sn_bits) {
		fprintf(err,
			"%s: error: --initial-sn %u is not allowed with --sn-bits %u: use auto or "
			"an "
			"SN from 0 to %u\n",
			prog, opt->initial_sn, opt->sn_bits, (1u << opt->sn_bits) - 1);
		return -1;
	}
	if (opt->leg_port[0] == opt->leg_port[1] || opt->leg_port[0] == opt->host_port ||
	    opt->leg_port[1] == opt->host_port) {
		fprintf(err,
			"%s: error: --leg-a %u, --leg-b %u and --host %u must be three different "
			"ports\n",
			prog, opt->leg_port[0], opt->leg_port[1], opt->host_port);
		return -1;
	}
	return 0;
}

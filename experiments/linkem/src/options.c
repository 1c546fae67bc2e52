/* SPDX-License-Identifier: Apache-2.0
 *
 * linkem's command line (linkem --help): the interfaces, each direction's link spec, and how
 * linkem runs (stats, control socket, CPU, real-time priority, leg feedback).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "linkem.h"
#include "spec.h"
#include "trace.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkem -i IF_A -i IF_B [--ab SPEC] [--ba SPEC] [--both SPEC] [--seed N]\n"
		"              [--stats FILE] [--stats-interval-ms %d] [--control PATH]\n"
		"              [--busy-poll-us %d] [--departure-slack-us %d] [--cpu N]\n"
		"              [--rt-priority 1-99] [--io afpacket|afxdp]\n"
		"              [--feedback leg=N[,period_ms=%d][,target_ms=%d][,sn_bits=18|12]]\n"
		"       linkem --check-trace FILE   (reads a trace as a link would, prints its "
		"mean rate)\n"
		"  Bridges IF_A and IF_B; \"ab\" = frames received on IF_A leave on IF_B, \"ba\" "
		"the reverse.\n"
		"  SPEC = comma-separated key=value, keys:\n"
		"    rate_mbit=20 (0 = unlimited)   burst_bytes=N (token bucket depth, default 0)\n"
		"    trace=FILE (Mahimahi format, loops; replaces rate_mbit)\n"
		"    queue_pkts=N | queue_bytes=N (drop-tail, default queue_pkts=%d)\n"
		"    delay_ms=10  jitter_ms=1 | delay_cv=0.1\n"
		"    dist=const|normal|uniform|pareto|paretonormal (default normal)\n"
		"    reorder=0|1 (default 0: frames keep their order, delay is a lower bound)\n"
		"    loss=0.01 (Bernoulli)  ge=p[,r[,1-h[,1-k]]] (Gilbert-Elliott as netem's "
		"gemodel)\n"
		"    loss_at=departure|enqueue (default departure: a lost frame uses link time; "
		"enqueue: dropped on arrival, as netem)\n"
		"  control socket commands (one per line; reply \"ok\", \"error: ...\" or JSON):\n"
		"    set ab|ba|both KEY=VAL[,KEY=VAL...]   stats   feedback on|off   quit\n"
		"  --feedback: every period, one leg feedback report per user of the \"ab\" PDCP "
		"PDUs,\n"
		"    sent out of IF_A (format: p4src/README.md, \"Leg feedback frames\")\n"
		"  --departure-slack-us N: a wake-up also sends the frames due in the next N us\n"
		"    (up to N us early; 0 to %d; default 0: each frame at its due time)\n"
		"  --io afpacket|afxdp: read and write IF_A and IF_B through AF_PACKET (a\n"
		"    TPACKET_V2 ring, sendmmsg; the default) or AF_XDP (a socket on queue 0,\n"
		"    XDP in the driver: veth has it; arrival time = the wake-up that reads it)\n",
		DEFAULT_STATS_INTERVAL_MS, DEFAULT_BUSY_POLL_US, DEFAULT_DEPARTURE_SLACK_US,
		FB_DEFAULT_PERIOD_MS, FB_DEFAULT_TARGET_MS, LINK_DEFAULT_QUEUE_PKTS,
		MAX_DEPARTURE_SLACK_US);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	/* a digit first: strtoul also skips spaces and takes a sign (" 5", "+5", " -5") */
	if (errno || end == s || *end || *s < '0' || *s > '9' || v > max)
		die_usage("%s %s: expected an integer in [0, %lu]", opt, s, max);
	return v;
}

/* --check-trace FILE: the trace parser of every link, for a harness that checks a study's
 * traces before it starts (one parser, so a file passes here exactly when a link takes it).
 * Prints "mean_mbit=M opportunities=N period_ms=P" and exits 0, or one error line naming the
 * file and line and exits 2. */
static __attribute__((noreturn)) void check_trace(const char *path)
{
	char err[512];
	struct trace *t = trace_load(path, err, sizeof(err));

	if (!t)
		die_usage("%s", err);
	printf("mean_mbit=%.10g opportunities=%zu period_ms=%llu\n", trace_mean_mbit(t), t->n,
	       (unsigned long long)t->period_ms);
	trace_put(t);
	exit(0);
}

/* Fill `o` from the command line; exits with usage (0 for --help, 2 for a bad option) or
 * with a one-line error naming the option. */
void options_parse(struct options *o, int argc, char **argv)
{
	static const struct option OPTS[] = {
		{"ab", required_argument, NULL, 'A'},
		{"ba", required_argument, NULL, 'B'},
		{"both", required_argument, NULL, 'C'},
		{"seed", required_argument, NULL, 's'},
		{"stats", required_argument, NULL, 'S'},
		{"stats-interval-ms", required_argument, NULL, 'I'},
		{"control", required_argument, NULL, 'c'},
		{"busy-poll-us", required_argument, NULL, 'p'},
		{"departure-slack-us", required_argument, NULL, 'd'},
		{"cpu", required_argument, NULL, 'u'},
		{"rt-priority", required_argument, NULL, 'r'},
		{"feedback", required_argument, NULL, 'f'},
		{"check-trace", required_argument, NULL, 'T'},
		{"io", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int nif = 0, opt;
	char err[512];

	*o = (struct options){
		.seed = 1,
		.interval_ms = DEFAULT_STATS_INTERVAL_MS,
		.busy_us = DEFAULT_BUSY_POLL_US,
		.slack_us = DEFAULT_DEPARTURE_SLACK_US,
		.cpu = -1,
		.fb = {.leg = 0,
		       .period_ns = FB_DEFAULT_PERIOD_MS * 1000000ULL,
		       .target_ns = FB_DEFAULT_TARGET_MS * 1000000ULL,
		       .sn_bits = 18},
	};
	link_config_default(&o->cfg[AB]);
	link_config_default(&o->cfg[BA]);
	/* Specs apply in command-line order, so "--both X --ab Y" refines one direction. */
	while ((opt = getopt_long(argc, argv, "i:h", OPTS, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (nif == NDIR)
				die_usage("-i given more than twice: linkem bridges exactly two "
					  "interfaces");
			o->ifname[nif++] = optarg;
			break;
		case 'A':
		case 'B':
		case 'C':
			for (int i = AB; i < NDIR; i++) {
				if ((opt == 'A' && i != AB) || (opt == 'B' && i != BA))
					continue;
				if (spec_apply(&o->cfg[i], optarg, err, sizeof(err)))
					die_usage("--%s %s: %s",
						  opt == 'A'   ? "ab"
						  : opt == 'B' ? "ba"
							       : "both",
						  optarg, err);
			}
			break;
		case 's':
			o->seed = parse_num("--seed", optarg, ~0UL);
			break;
		case 'S':
			o->stats_path = optarg;
			break;
		case 'I':
			o->interval_ms = parse_num("--stats-interval-ms", optarg, 3600000);
			if (!o->interval_ms)
				die_usage("--stats-interval-ms must be at least 1");
			break;
		case 'c':
			o->ctl_path = optarg;
			break;
		case 'p':
			o->busy_us = (long)parse_num("--busy-poll-us", optarg, 10000);
			break;
		case 'd':
			o->slack_us = (long)parse_num("--departure-slack-us", optarg,
						      MAX_DEPARTURE_SLACK_US);
			break;
		case 'u':
			o->cpu = (long)parse_num("--cpu", optarg, CPU_SETSIZE - 1);
			break;
		case 'r':
			o->rt_priority = (long)parse_num("--rt-priority", optarg, 99);
			break;
		case 'f':
			if (fb_config_parse(&o->fb, optarg, err, sizeof(err)))
				die_usage("--feedback %s: %s", optarg, err);
			o->fb_on = true;
			break;
		case 'o':
			if (strcmp(optarg, "afpacket") && strcmp(optarg, "afxdp"))
				die_usage("--io %s: expected afpacket or afxdp", optarg);
			o->xdp = !strcmp(optarg, "afxdp");
			break;
		case 'T':
			check_trace(optarg);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s' (see --help)", argv[optind]);
	if (nif != NDIR)
		die_usage("need two interfaces: linkem -i IF_A -i IF_B [options] (see --help)");
	for (int i = 0; i < NDIR; i++) {
		/* ifr_name would silently cut a longer name: another interface could match it. */
		size_t len = strlen(o->ifname[i]);

		if (len == 0 || len >= IFNAMSIZ)
			die_usage("-i '%.40s%s': name too long or empty (a Linux interface name is "
				  "1 to "
				  "%d "
				  "bytes)",
				  o->ifname[i], len > 40 ? "..." : "", IFNAMSIZ - 1);
	}
	if (!strcmp(o->ifname[0], o->ifname[1]))
		die_usage("-i %s given twice: the two interfaces must differ", o->ifname[0]);
}

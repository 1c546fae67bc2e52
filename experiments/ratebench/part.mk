# experiments/ratebench: the testbed at 5G NR rates (issue 25).
#   make bench-testbed   sweeps the leg rates (2 x 20 ... 2 x 1000 Mbit/s) with TCP and ngtcp2
#                        (CUBIC, DC 1:1, batch 100) through the real chain, and the raw
#                        AF_PACKET limit of this machine; prints the table, writes
#                        results/bench-testbed/{bench.csv,bench.json,bench.png}. As root.
#                        BENCH_TESTBED_ARGS: e.g. --rates 20,100 --duration-s 6 --pin split
#                        --ngtcp2-rcvbuf default,large (ngtcp2 with both client buffers)
#                        --io afpacket,afxdp (every point on both I/O paths, side by side)
#   make ratebench-build build/ratebench/rawfwd, the do-nothing forwarder of the raw limit, and
#                        build/ratebench/xskfwd, its AF_XDP twin (libxdp)
#   make bench-iopaths   AF_XDP against AF_PACKET: CPU per frame per hop of the two forwarders
#                        through the same veth hops at 20, 80 kpps and the maximum, 3 runs.
#                        As root. BENCH_IOPATHS_ARGS: e.g. --hops 1 --duration-s 5
.PHONY: bench-testbed ratebench-build
BUILD_TARGETS += ratebench-build
BENCH_TARGETS += bench-testbed

RATEBENCH_DIR := $(ROOT)/experiments/ratebench
RATEBENCH_OUT := $(BUILD)/ratebench

ratebench-build: $(RATEBENCH_OUT)/rawfwd $(RATEBENCH_OUT)/xskfwd

$(RATEBENCH_OUT)/rawfwd: $(RATEBENCH_DIR)/rawfwd.c $(PKTIO_DEPS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 $(PKTIO_CFLAGS) -o $@ $< $(PKTIO_LIB)

$(RATEBENCH_OUT)/xskfwd: $(RATEBENCH_DIR)/xskfwd.c $(PKTIO_DEPS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 $(PKTIO_CFLAGS) -o $@ $< $(PKTIO_LIB) \
		$(PKTIO_XSK_LIBS)

bench-testbed: build
	$(PY) -m experiments.ratebench --out results/bench-testbed $(BENCH_TESTBED_ARGS)

# make bench-components: CPU per frame, wakeups/s and delay of the native switch, a linkem and
# pdcp-agent alone between veths at 20, 80 and 160 kpps, and their idle CPU. As root.
# BENCH_COMPONENTS_ARGS: e.g. --baseline ../main (another tree, side by side) --parts agent
# --io afpacket,afxdp (each part on both I/O paths)
.PHONY: bench-components
BENCH_TARGETS += bench-components

bench-components: hostagents-build linkem-build pktgen-build
	$(PY) -m experiments.ratebench.components $(BENCH_COMPONENTS_ARGS)

.PHONY: bench-iopaths
BENCH_TARGETS += bench-iopaths

bench-iopaths: ratebench-build pktgen-build
	$(PY) -m experiments.ratebench.iopaths $(BENCH_IOPATHS_ARGS)

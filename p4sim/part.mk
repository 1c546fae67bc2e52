# p4sim: the embedded P4_16 v1model target (front end, engine, P4Runtime server).
.PHONY: p4sim-test p4sim-conformance p4sim-bench p4sim-bench-io p4rt-shell-venv p4sim-native-samples
TEST_TARGETS  += p4sim-test p4sim-rejects p4sim-conformance
BENCH_TARGETS += p4sim-bench p4sim-bench-io

# p4runtime-shell in a venv of its own, for the interop test (test_runtime_interop.py)
p4rt-shell-venv:
	@bash tools/setup_p4runtime_shell.sh

# The CPU-bound tests (front end, engines, P4Info, STF, fuzzers, Tofino compiles: no shared
# port, file or namespace) run on both cores; those that start BMv2, bind a port found free
# beforehand, or use veths and namespaces run alone after them, as timing tests must (a new
# test file of that kind goes in P4SIM_SERIAL_TESTS).
P4SIM_SERIAL_TESTS := $(addprefix p4sim/tests/,test_conformance_runner.py \
    test_lang_priorities.py test_runtime_action_profiles.py test_runtime_bad_input.py \
    test_runtime_cli.py test_runtime_interop.py test_runtime_port_in_use.py test_runtime_veth.py \
    test_rtdiff.py)
p4sim-test: p4rt-shell-venv p4sim-fuzz-native
	$(PY) -m pytest -q -n 2 p4sim/tests $(P4SIM_SERIAL_TESTS:%=--ignore=%)
	$(PY) -m pytest -q $(P4SIM_SERIAL_TESTS)

# libFuzzer on the native engine's generated C, ASan+UBSan (p4sim/native/fuzz.py): arbitrary
# frames and ingress ports into the splitter's three profiles and the p4c samples that once
# crashed (their inputs kept in p4sim/tests/fuzz_native_seeds), P4SIM_FUZZ_SECONDS each;
# P4SIM_FUZZ_SEED=N explores elsewhere. A crash fails with the input's path (build/p4sim-fuzz);
# a long run of every target: python -m p4sim.native.fuzz --targets all --seconds-each 300.
.PHONY: p4sim-fuzz-native
P4SIM_FUZZ_SECONDS ?= 10
P4SIM_FUZZ_SEED ?= 1
p4sim-fuzz-native:
	$(PY) -m p4sim.native.fuzz --seconds-each $(P4SIM_FUZZ_SECONDS) --seed $(P4SIM_FUZZ_SEED)

p4sim-bench: pktgen-build
	$(PY) -m p4sim.bench

# The native switch's data path in memory (no root, no traffic: safe beside timed runs): its
# user-space CPU per frame; IOBENCH_BASELINE=REV measures that git revision's C runtime too,
# side by side (p4sim/iobench.py).
IOBENCH_BASELINE ?=
p4sim-bench-io:
	$(PY) -m p4sim.iobench $(if $(IOBENCH_BASELINE),--baseline $(IOBENCH_BASELINE))

# every p4c v1model STF sample through both engines (make test takes every 6th)
p4sim-native-samples:
	P4SIM_NATIVE_SAMPLES=all $(PY) -m pytest -q -s p4sim/tests/test_native_equivalence.py -k samples

# Rejection conformance: p4c's error corpus, p4c run on each program, p4sim must reject what
# p4c rejects with file:line:col (p4sim/rejects.py; known gaps in p4sim/README.md).
P4TOOLS_BIN ?= /opt/p4tools/bin
.PHONY: p4sim-rejects
p4sim-rejects:
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) -m p4sim.rejects

# Differential conformance: every v1model program of p4c's STF samples on BMv2 and on
# p4sim (python -m p4sim.conformance), ours in p4sim/tests/conformance, and those of
# p4sim/tests/stf that pin down BMv2's choices (P4SIM_OWN_STF); needs p4c and BMv2 (the
# p4tools bundle or p4lang's packages) and p4c's test programs. SKIP_BMV2=1 leaves it out,
# saying so.
P4TOOLS_PREFIX ?= /opt/p4tools
P4C_SAMPLES    ?= $(P4TOOLS_PREFIX)/p4c-testdata/p4_16_samples
P4SIM_OWN_STF  ?= $(addprefix p4sim/tests/stf/,priorities.p4 hashpack.p4 meters.p4 parser.p4 \
                  tables.p4 externs.p4)
ifeq ($(SKIP_BMV2),1)
p4sim-conformance:
	@echo "*** p4sim-conformance: NOT RUN (SKIP_BMV2=1): p4sim was not compared with BMv2 ***" >&2
else
p4sim-conformance:
	PATH="$(if $(wildcard $(P4TOOLS_PREFIX)/bin),$(P4TOOLS_PREFIX)/bin:)$$PATH" \
	    $(PY) -m p4sim.conformance -j 2 $(P4C_SAMPLES) p4sim/tests/conformance $(P4SIM_OWN_STF)
	PATH="$(if $(wildcard $(P4TOOLS_PREFIX)/bin),$(P4TOOLS_PREFIX)/bin:)$$PATH" \
	    $(PY) -m p4sim.conformance.pktdiff -j 2 --seed 1 $(P4SIM_PKTDIFF_SUBSET)
	PATH="$(if $(wildcard $(P4TOOLS_PREFIX)/bin),$(P4TOOLS_PREFIX)/bin:)$$PATH" \
	    $(PY) -m p4sim.conformance.progdiff -j 2 --seed 1 --programs $(P4SIM_PROGDIFF_PROGRAMS) \
	    --failures build/progdiff-failures
	PATH="$(if $(wildcard $(P4TOOLS_PREFIX)/bin),$(P4TOOLS_PREFIX)/bin:)$$PATH" P4C_SAMPLES=$(P4C_SAMPLES) \
	    $(PY) -m p4sim.conformance.rtdiff --seed 1 --requests $(P4SIM_RTDIFF_REQUESTS) \
	    --cases build/rtdiff-cases
endif

# P4Runtime differential (p4sim/conformance/rtdiff.py): request sequences generated from the
# P4Info of seven programs (the stream's PacketOut/PacketIn and digests among them) to
# simple_switch_grpc and p4sim, every answer compared. make test runs 800 requests of seed 1
# (about 13 s on a loaded 2-core machine); a long run is
# `python -m p4sim.conformance.rtdiff --seed S --requests 20000` (docs/conformance.md).
P4SIM_RTDIFF_REQUESTS ?= 800

# Program differential (p4sim/conformance/progdiff.py): generated v1model programs on BMv2
# and p4sim. make test runs the first 20 of seed 1 (under a minute); a long run is
# `python -m p4sim.conformance.progdiff --seed S --programs 300` (docs/conformance.md).
P4SIM_PROGDIFF_PROGRAMS ?= 20

# Packet differential (p4sim/conformance/pktdiff.py): every v1model sample p4c-bm2-ss
# compiles, with generated packets and table entries, on BMv2 and p4sim, every port
# compared (5 to 10 minutes with 2 jobs: not in make test). make test runs the subset
# below from p4sim-conformance: programs whose differences p4sim fixed, and parsers and
# tables the generator must reach.
P4SIM_PKTDIFF_SUBSET ?= $(addprefix $(P4C_SAMPLES)/,basic_routing-bmv2.p4 issue1352-bmv2.p4 \
    issue1937-2-bmv2.p4 issue2303.p4 test-parserinvalidargument-error-bmv2.p4 \
    parser-unroll-test9.p4 flowlet_switching-bmv2.p4 checksum1-bmv2.p4)
.PHONY: p4sim-pktdiff
p4sim-pktdiff:
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) -m p4sim.conformance.pktdiff -j 2 --seed 1 $(P4C_SAMPLES)

# Language coverage: p4c's v1model samples that p4c-bm2-ss compiles, does p4sim accept them?
# Refusals grouped by the construct p4sim names (p4sim/coverage.py; minutes: not in make test).
.PHONY: p4sim-coverage
p4sim-coverage:
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) -m p4sim.coverage --samples $(P4C_SAMPLES)

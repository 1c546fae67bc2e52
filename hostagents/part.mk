# hostagents: pdcp-agent (DPDK) and its DPDK-free TS 38.323 reordering core.
#   make hostagents-build   build/hostagents/pdcp-agent (+ test, fuzz and bench tools)
#   make hostagents-test    unit tests (ASan+UBSan), ~20 s libFuzzer run, integration test
#   make hostagents-bench   core microbenchmark, agent packets/s and added delay on veth
.PHONY: hostagents-build hostagents-test hostagents-bench
BUILD_TARGETS += hostagents-build
TEST_TARGETS  += hostagents-test
BENCH_TARGETS += hostagents-bench

HA_SRC   := $(ROOT)/hostagents
HA_BUILD := $(BUILD)/hostagents
HA_CC    ?= gcc
HA_CLANG ?= clang
HA_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I$(HA_SRC)/pdcp
HA_SAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
HA_CORE   := $(HA_SRC)/pdcp/pdcp_rx.c $(HA_SRC)/pdcp/pdcp_frame.c
HA_CORE_H := $(HA_SRC)/pdcp/pdcp_rx.h $(HA_SRC)/pdcp/pdcp_frame.h
HA_AGENT  := $(wildcard $(HA_SRC)/agent/*.c)
HA_AGENT_H := $(wildcard $(HA_SRC)/agent/*.h)
HA_FUZZ_SECONDS ?= 20
# A fixed seed: a run that finds a crash starts the same way when rerun (the input that
# crashed is also kept, crash-* in build/hostagents). HA_FUZZ_SEED=N explores elsewhere.
HA_FUZZ_SEED ?= 1

hostagents-build: $(HA_BUILD)/pdcp-agent $(HA_BUILD)/test_pdcp $(HA_BUILD)/test_statsfile \
                  $(HA_BUILD)/fuzz_pdcp $(HA_BUILD)/bench_pdcp_core

$(HA_BUILD)/pdcp-agent: $(HA_AGENT) $(HA_AGENT_H) $(HA_CORE) $(HA_CORE_H)
	@mkdir -p $(@D)
	$(HA_CC) $(HA_CFLAGS) $$(pkg-config --cflags libdpdk) -o $@ $(HA_AGENT) $(HA_CORE) \
		$$(pkg-config --libs libdpdk) -lm

$(HA_BUILD)/test_pdcp: $(HA_SRC)/tests/test_pdcp.c $(HA_SRC)/tests/check.h $(HA_CORE) $(HA_CORE_H)
	@mkdir -p $(@D)
	$(HA_CC) $(HA_CFLAGS) $(HA_SAN) -o $@ $(HA_SRC)/tests/test_pdcp.c $(HA_CORE)

# --stats opening (fifos without a reader); DPDK-free like the core
$(HA_BUILD)/test_statsfile: $(HA_SRC)/tests/test_statsfile.c $(HA_SRC)/tests/check.h \
                            $(HA_SRC)/agent/statsfile.c $(HA_SRC)/agent/statsfile.h
	@mkdir -p $(@D)
	$(HA_CC) $(HA_CFLAGS) $(HA_SAN) -I$(HA_SRC)/agent -o $@ $(HA_SRC)/tests/test_statsfile.c \
		$(HA_SRC)/agent/statsfile.c

$(HA_BUILD)/fuzz_pdcp: $(HA_SRC)/tests/fuzz_pdcp.c $(HA_CORE) $(HA_CORE_H)
	@mkdir -p $(@D)
	$(HA_CLANG) $(HA_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined -o $@ \
		$(HA_SRC)/tests/fuzz_pdcp.c $(HA_CORE)

$(HA_BUILD)/bench_pdcp_core: $(HA_SRC)/bench/bench_pdcp_core.c $(HA_CORE) $(HA_CORE_H)
	@mkdir -p $(@D)
	$(HA_CC) $(HA_CFLAGS) -o $@ $(HA_SRC)/bench/bench_pdcp_core.c $(HA_CORE)

hostagents-test: hostagents-build
	@# libFuzzer reads a non-number as 0: no time limit (the run would never end), seed 0 random
	@case "$(HA_FUZZ_SECONDS)" in ''|*[!0-9]*|0) echo "HA_FUZZ_SECONDS=$(HA_FUZZ_SECONDS):" \
		"allowed a whole number of seconds, at least 1" >&2; exit 2;; esac
	@case "$(HA_FUZZ_SEED)" in ''|*[!0-9]*|0) echo "HA_FUZZ_SEED=$(HA_FUZZ_SEED):" \
		"allowed a whole number from 1 (0 would pick a random seed)" >&2; exit 2;; esac
	$(HA_BUILD)/test_pdcp
	$(HA_BUILD)/test_statsfile
	@rm -rf $(HA_BUILD)/fuzz-corpus && mkdir -p $(HA_BUILD)/fuzz-corpus
	@echo "fuzz_pdcp: $(HA_FUZZ_SECONDS) s of libFuzzer, seed $(HA_FUZZ_SEED) (log: $(HA_BUILD)/fuzz.log)"
	@if $(HA_BUILD)/fuzz_pdcp -seed=$(HA_FUZZ_SEED) -max_total_time=$(HA_FUZZ_SECONDS) \
		-print_final_stats=1 -artifact_prefix=$(HA_BUILD)/ $(HA_BUILD)/fuzz-corpus \
		$(HA_SRC)/tests/fuzz_seeds > $(HA_BUILD)/fuzz.log 2>&1; \
	then grep -E '^(Done|stat::new_units)' $(HA_BUILD)/fuzz.log; \
	else tail -40 $(HA_BUILD)/fuzz.log; echo "fuzz_pdcp FAILED with seed $(HA_FUZZ_SEED): crash" \
		"input in $(HA_BUILD)/crash-* (rerun: HA_FUZZ_SEED=$(HA_FUZZ_SEED) make hostagents-test)"; exit 1; fi
	$(PY) -m pytest -q $(HA_SRC)/tests/test_agent_integration.py

# HOSTAGENTS_BENCH_ARGS: e.g. --io afpacket,afxdp (the veth rows on both leg I/O paths)
# --rates-pps 10000 --unpaced-frames 0 (a short, light run)
hostagents-bench: hostagents-build pktgen-build
	$(HA_BUILD)/bench_pdcp_core
	$(PY) $(HA_SRC)/bench/bench_agent.py --build $(HA_BUILD) --pktgen $(PKTGEN) \
		$(HOSTAGENTS_BENCH_ARGS)

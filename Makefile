# Every entry point of the project. Each part keeps its own targets in a `part.mk`
# fragment (included below) and adds itself to BUILD_TARGETS / TEST_TARGETS / BENCH_TARGETS.
# `make help` lists the targets a user needs; each part.mk's header describes the rest.
#
# The real p4c and BMv2: `make setup P4TOOLS_BUNDLE=DIR` installs the p4tools bundle into
# P4TOOLS_PREFIX (default /opt/p4tools, put first on PATH here when it exists); otherwise
# p4c and BMv2 on PATH (p4lang's packages) are used. `make test` runs the BMv2 suites and
# fails when the tools are missing, unless SKIP_BMV2=1 (then it says loudly what was not run).
# Go (for our quic-go endpoint): make setup links a new-enough Go into .venv/bin (tools/setup_go.sh).

SHELL := /bin/bash
ROOT  := $(abspath .)
VENV  := $(ROOT)/.venv
PY    := $(VENV)/bin/python
BUILD := $(ROOT)/build
P4TOOLS_PREFIX ?= /opt/p4tools
export PATH := $(VENV)/bin:$(if $(wildcard $(P4TOOLS_PREFIX)/bin),$(P4TOOLS_PREFIX)/bin:)$(PATH)
export P4TOOLS_PREFIX SKIP_BMV2

BUILD_TARGETS :=
TEST_TARGETS  :=
BENCH_TARGETS :=

.PHONY: all help setup build test bench demo lint format clean
all: build

# One line per target a user needs (`make help`); the parts' own targets: their part.mk.
help:
	@echo 'make setup               Debian packages, .venv, p4runtime bindings, Go (idempotent; root)'
	@echo 'make build               .venv, the P4 programs (build/p4/), pdcp-agent, linkem, quic-go and tquic'
	@echo 'make demo                a short DC study on p4sim: table and figures in results/demo/ (root)'
	@echo 'make test                every test suite, one after another (long; root; SKIP_BMV2=1 without BMv2)'
	@echo 'make p4sim-test          the embedded target'"'"'s tests (front end, engines, P4Runtime server)'
	@echo 'make controlplane-test   the controller'"'"'s and dcctl'"'"'s tests'
	@echo 'make ptf                 the PTF suite alone (TARGET=p4sim|bmv2, PROGRAM=v1model|tna, PTF_TESTS=...)'
	@echo 'make hostagents-test     pdcp-agent: C unit tests, a short fuzz run, the integration test'
	@echo 'make linkem-test         linkem: C unit tests, then integration tests on veths'
	@echo 'make experiments-test    dcexp: unit tests, flows on a veth, one smoke study through the chain'
	@echo 'make splitter-diff       the splitter on p4sim and on BMv2, frame for frame'
	@echo 'make p4sim-conformance   p4c'"'"'s STF samples on BMv2 and on p4sim, output compared'
	@echo 'make p4sim-rejects       p4c'"'"'s error programs through p4sim: each refused, file:line:col'
	@echo 'make paper-quick         every study of the paper, small and short (results/paper-quick/)'
	@echo 'make paper               the same with the paper'"'"'s 10 repetitions (days; resumable)'
	@echo 'make bench               benchmarks of p4sim, the controller, pdcp-agent, linkem and the testbed'
	@echo 'make p4                  compile the splitter'"'"'s profiles with p4sim (build/p4/)'
	@echo 'make p4c-bmv2            compile them with the real p4c-bm2-ss --Werror (build/p4/)'
	@echo 'make p4c-tofino          the TNA splitter through the real Tofino compiler (build/tofino/)'
	@echo 'make p4sim-coverage      which of p4c'"'"'s v1model samples p4sim accepts (minutes)'
	@echo 'make lint                ruff + black, clang-format, gofmt and go vet (make format fixes most)'
	@echo 'make clean               remove build/'

setup:
	@bash tools/setup.sh

-include clib/pktio/part.mk
-include clib/pktgen/part.mk
-include clib/udprcvbuf/part.mk
-include p4sim/part.mk
-include p4src/part.mk
-include controlplane/part.mk
-include ptf-tests/part.mk
-include hostagents/part.mk
-include experiments/linkem/part.mk
-include experiments/part.mk
-include experiments/ratebench/part.mk

build: setup $(BUILD_TARGETS)

# Suites run one after another (their namespaces and timing must not overlap);
# make stops at the first failing one. The last line gives each suite's seconds: CI has
# a budget (docs/setup.md, "What `make test` runs").
test: build
	@set -e; all=$$(date +%s); times=""; \
	for t in $(TEST_TARGETS); do \
	  echo "=== make $$t"; start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$t; \
	  times="$$times $$t $$(( $$(date +%s) - start ))"; \
	done; \
	echo "=== make test passed in $$(( $$(date +%s) - all )) s; seconds per suite:$$times"
	@if [ "$(SKIP_BMV2)" = 1 ]; then echo "*** make test: BMv2 and the real p4c NOT TESTED (SKIP_BMV2=1) ***" >&2; fi

bench: build
	@set -e; for t in $(BENCH_TARGETS); do echo "=== make $$t"; $(MAKE) --no-print-directory $$t; done

demo: build
	$(VENV)/bin/dcexp run experiments/scenarios/demo.yaml --out results/demo
	$(VENV)/bin/dcexp report results/demo

# Every Python folder, and all C with the one .clang-format (clang-format from `make setup`).
PY_SOURCES := conftest.py dccommon p4sim controlplane experiments ptf-tests tools p4src hostagents
C_SOURCES   = $(shell find clib hostagents experiments/linkem experiments/ratebench p4sim/native -name '*.[ch]')
CLANG_FORMAT ?= clang-format

lint: setup
	$(VENV)/bin/ruff check $(PY_SOURCES)
	$(VENV)/bin/black --check $(PY_SOURCES)
	$(CLANG_FORMAT) --style=file --dry-run --Werror $(C_SOURCES)
	@test -z "$$(gofmt -l experiments/flows/quicgo_endpoint)" || { gofmt -l experiments/flows/quicgo_endpoint; echo "gofmt: format the files above" >&2; exit 1; }
	cd experiments/flows/quicgo_endpoint && GOFLAGS="-mod=mod -buildvcs=false" go vet .

format: setup
	$(VENV)/bin/black $(PY_SOURCES)
	$(VENV)/bin/ruff check --fix $(PY_SOURCES)
	$(CLANG_FORMAT) --style=file -i $(C_SOURCES)

clean:
	rm -rf build

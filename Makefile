# Every entry point of the project. Each part keeps its own targets in a `part.mk`
# fragment (included below) and adds itself to BUILD_TARGETS / TEST_TARGETS / BENCH_TARGETS.
#
#   make setup   install Debian packages, .venv, p4runtime bindings (idempotent)
#   make demo    the main job: a short DC experiment on the embedded target
#   make paper   reproduce Hasselquist et al. (make paper-quick: about 30 minutes)
#   make test    every test suite (what CI runs)
#   make bench   benchmarks, printed as figures
#   make ptf     the PTF suite alone (TARGET=p4sim | bmv2)
#   make lint / make format
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

.PHONY: all setup build test bench demo lint format clean
all: build

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
# make stops at the first failing one.
test: build
	@set -e; for t in $(TEST_TARGETS); do echo "=== make $$t"; $(MAKE) --no-print-directory $$t; done
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

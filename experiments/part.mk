# experiments: the DC testbed (dcexp: scenarios, flows, measurement, analysis, plots).
#   make experiments-test   unit tests (scenarios, JFI/SFA, report), flows on a plain veth,
#                           and one smoke experiment through the real chain
#                           (p4sim -> linkem A/B -> pdcp-agent), as root
#   make demo               (top-level) dcexp run experiments/scenarios/demo.yaml + report
#   make paper              every study of Hasselquist et al. (experiments/paper/), 10
#                           repetitions, then the reproduction report; resumable
#   make paper-quick        the same with each study's quick settings (about 30 min, 2 cores)
#                           PAPER_ARGS adds dcexp campaign options (e.g. --reps 3)
#   make aioquic-limit      where aioquic's client becomes CPU-bound: flow count x leg rate
#                           grid through the testbed, 10 s per point (about 5 min; root, on an
#                           idle machine); table and figure in results/aioquic-limit/
#   make quicgo             build/quicgo/dcexp-quicgo, our quic-go server and client (flow kind
#                           quicgo), from experiments/flows/quicgo_endpoint/ (quic-go
#                           pinned in go.mod; modules in Go's module cache, GOPATH default)
#   make tquic              build/tquic/bin/tquic_{client,server} (flow kind mpquic): the crate
#                           registry's tquic_tools, pinned, built once (BoringSSL: minutes)
.PHONY: experiments-test experiments-unit paper paper-quick aioquic-limit quicgo tquic
TEST_TARGETS += experiments-test
BUILD_TARGETS += quicgo tquic

QUICGO_SRC := $(ROOT)/experiments/flows/quicgo_endpoint
quicgo: $(BUILD)/quicgo/dcexp-quicgo
$(BUILD)/quicgo/dcexp-quicgo: $(QUICGO_SRC)/main.go $(QUICGO_SRC)/go.mod $(QUICGO_SRC)/go.sum
	@mkdir -p $(@D)
	cd $(QUICGO_SRC) && GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath -o $@ .

# cargo on PATH, else rustup's default place; --locked: the crate's own Cargo.lock, no drift
TQUIC_VERSION := 1.6.0
CARGO ?= $(shell command -v cargo 2>/dev/null || echo $(HOME)/.cargo/bin/cargo)
# Compiled crates kept outside the checkout, so another clone on this machine (CI's) rebuilds in seconds
TQUIC_CARGO_TARGET ?= $(HOME)/.cache/dc-splitter/tquic-target
tquic: $(BUILD)/tquic/.stamp-$(TQUIC_VERSION)
$(BUILD)/tquic/.stamp-$(TQUIC_VERSION):
	@mkdir -p $(@D)
	nice -n 19 $(CARGO) install tquic_tools --version $(TQUIC_VERSION) --locked --root $(@D) \
	    --target-dir $(TQUIC_CARGO_TARGET)
	touch $@

paper: build
	$(VENV)/bin/dcexp campaign experiments/paper/ --full --out results/paper $(PAPER_ARGS)
	$(VENV)/bin/dcexp report --paper results/paper

paper-quick: build
	$(VENV)/bin/dcexp campaign experiments/paper/ --quick --out results/paper-quick $(PAPER_ARGS)
	$(VENV)/bin/dcexp report --paper results/paper-quick

aioquic-limit: build
	$(PY) -m experiments.bench.aioquic_limit run --out results/aioquic-limit $(LIMIT_ARGS)

experiments-unit:
	$(PY) -m pytest -q experiments/tests/test_exp_scenario.py experiments/tests/test_exp_analysis.py

experiments-test: p4c-bmv2
	$(PY) -m pytest -q $(sort $(wildcard experiments/tests/test_exp_*.py))

# p4src: the PDCP splitter P4 program. `make p4` compiles both SN profiles with p4sim
# (P4Info + p4sim device config), the -D DC_ADAPTIVE profile (leg feedback, credit split)
# and both SN profiles of the TNA splitter; `make p4c-bmv2` compiles the v1model ones with
# the real p4c for BMv2.
.PHONY: p4 p4-sn18 p4-sn12 p4-adaptive p4-tna p4c-bmv2
BUILD_TARGETS += p4

P4_SRC      := $(ROOT)/p4src/dc_splitter.p4
P4_INCLUDES := $(wildcard $(ROOT)/p4src/include/*.p4)
P4_OUT      := $(BUILD)/p4
P4_PROFILES := dc_splitter dc_splitter_sn12 dc_splitter_adaptive
# -D flags of each compile-time profile
P4_DEFINES_dc_splitter      :=
P4_DEFINES_dc_splitter_sn12 := -D PDCP_SN_12=1
P4_DEFINES_dc_splitter_adaptive := -D DC_ADAPTIVE=1

p4: p4-sn18 p4-sn12 p4-adaptive p4-tna
p4-sn18: $(P4_OUT)/dc_splitter.p4sim.json        # default profile: 18-bit SNs
p4-sn12: $(P4_OUT)/dc_splitter_sn12.p4sim.json   # -D PDCP_SN_12: 12-bit SNs
p4-adaptive: $(P4_OUT)/dc_splitter_adaptive.p4sim.json  # -D DC_ADAPTIVE: feedback + credit

$(P4_OUT)/%.p4sim.json: $(P4_SRC) $(P4_INCLUDES)
	@mkdir -p $(P4_OUT)
	$(VENV)/bin/p4sim compile $(P4_SRC) $(P4_DEFINES_$*) \
	    --p4runtime-files $(P4_OUT)/$*.p4info.txtpb -o $@

# The TNA splitter on p4sim (make ptf PROGRAM=tna): no adaptive profile (v1model only).
P4_TNA_SRC      := $(ROOT)/p4src/dc_splitter_tna.p4
P4_TNA_PROFILES := dc_splitter_tna dc_splitter_tna_sn12
P4_DEFINES_dc_splitter_tna      :=
P4_DEFINES_dc_splitter_tna_sn12 := -D PDCP_SN_12=1
P4_TNA_CONFIGS  := $(P4_TNA_PROFILES:%=$(P4_OUT)/%.p4sim.json)
p4-tna: $(P4_TNA_CONFIGS)

$(P4_TNA_CONFIGS): $(P4_OUT)/%.p4sim.json: $(P4_TNA_SRC) $(P4_INCLUDES) $(wildcard $(ROOT)/p4src/include/tna/*.p4)
	@mkdir -p $(P4_OUT)
	$(VENV)/bin/p4sim compile $(P4_TNA_SRC) $(P4_DEFINES_$*) \
	    --p4runtime-files $(P4_OUT)/$*.p4info.txtpb -o $@

# The real compiler for BMv2 simple_switch_grpc, warnings as errors (make setup installs it
# from the p4tools bundle, or p4lang's package provides it). Part of `make test`.
P4C_BM2_SS ?= p4c-bm2-ss
P4C_FLAGS  := --arch v1model --std p4-16 --Werror
TEST_TARGETS += p4c-bmv2
P4C_JSON   := $(P4_PROFILES:%=$(P4_OUT)/%.json)
ifeq ($(SKIP_BMV2),1)
p4c-bmv2:
	@echo "*** p4c-bmv2: NOT RUN (SKIP_BMV2=1): the splitter was not compiled with the real p4c ***" >&2
else
p4c-bmv2: $(P4C_JSON)
endif

# BMv2 JSON and P4Info of each profile (dc_splitter.json + dc_splitter.bmv2.p4info.txtpb, ...)
$(P4C_JSON): $(P4_OUT)/%.json: $(P4_SRC) $(P4_INCLUDES)
	@command -v $(P4C_BM2_SS) >/dev/null 2>&1 || { \
	    echo "p4c-bmv2: '$(P4C_BM2_SS)' is not on PATH: install the p4tools bundle" \
	         "(make setup P4TOOLS_BUNDLE=path/to/p4tools) or p4lang's p4c package" \
	         "(https://github.com/p4lang/p4c), or set P4C_BM2_SS=/path/to/p4c-bm2-ss;" \
	         "SKIP_BMV2=1 runs make test without BMv2" >&2; \
	    exit 1; }
	@mkdir -p $(P4_OUT)
	$(P4C_BM2_SS) $(P4C_FLAGS) $(P4_DEFINES_$*) \
	    --p4runtime-files $(P4_OUT)/$*.bmv2.p4info.txtpb -o $@ $(P4_SRC)

# p4sim against BMv2 on the splitter: seeded random frames and live reconfigurations through
# the controller, outputs compared per port (p4src/tests/splitter_diff.py; root, p4c + BMv2).
.PHONY: splitter-diff
TEST_TARGETS += splitter-diff
P4TOOLS_BIN ?= /opt/p4tools/bin
splitter-diff:
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) p4src/tests/splitter_diff.py

# The TNA splitter with the real Tofino back end: every profile for tofino/tna and
# tofino2/t2na, a resource summary in build/tofino/resources.json, then the checks of
# p4src/tests/test_tofino.py (stage budget, same control surface as the v1model P4Info).
.PHONY: p4c-tofino
TEST_TARGETS += p4c-tofino
TOFINO_OUT := $(BUILD)/tofino
ifeq ($(SKIP_BMV2),1)
p4c-tofino:
	@echo "*** p4c-tofino: NOT RUN (SKIP_BMV2=1): the splitter was not compiled for Tofino ***" >&2
else
p4c-tofino: $(P4_OUT)/dc_splitter.json $(P4_OUT)/dc_splitter_sn12.json
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) tools/tofino_build.py --out $(TOFINO_OUT)
	$(PY) -m pytest -q p4src/tests/test_tofino.py
endif

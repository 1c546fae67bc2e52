# p4src: the PDCP splitter P4 program. `make p4` compiles both SN profiles with p4sim
# (P4Info + p4sim device config) and the -D DC_ADAPTIVE profile (leg feedback, credit split);
# `make p4c-bmv2` runs the real p4c for BMv2 when installed.
.PHONY: p4 p4-sn18 p4-sn12 p4-adaptive p4c-bmv2
BUILD_TARGETS += p4

P4_SRC      := $(ROOT)/p4src/dc_splitter.p4
P4_INCLUDES := $(wildcard $(ROOT)/p4src/include/*.p4)
P4_OUT      := $(BUILD)/p4
P4_PROFILES := dc_splitter dc_splitter_sn12 dc_splitter_adaptive
# -D flags of each compile-time profile
P4_DEFINES_dc_splitter      :=
P4_DEFINES_dc_splitter_sn12 := -D PDCP_SN_12=1
P4_DEFINES_dc_splitter_adaptive := -D DC_ADAPTIVE=1

p4: p4-sn18 p4-sn12 p4-adaptive
p4-sn18: $(P4_OUT)/dc_splitter.p4sim.json        # default profile: 18-bit SNs
p4-sn12: $(P4_OUT)/dc_splitter_sn12.p4sim.json   # -D PDCP_SN_12: 12-bit SNs
p4-adaptive: $(P4_OUT)/dc_splitter_adaptive.p4sim.json  # -D DC_ADAPTIVE: feedback + credit

$(P4_OUT)/%.p4sim.json: $(P4_SRC) $(P4_INCLUDES)
	@mkdir -p $(P4_OUT)
	$(VENV)/bin/p4sim compile $(P4_SRC) $(P4_DEFINES_$*) \
	    --p4runtime-files $(P4_OUT)/$*.p4info.txtpb -o $@

# The real compiler for BMv2 simple_switch_grpc (not available from any registry here).
P4C_BM2_SS ?= p4c-bm2-ss
p4c-bmv2:
	@command -v $(P4C_BM2_SS) >/dev/null 2>&1 || { \
	    echo "p4c-bmv2: '$(P4C_BM2_SS)' is not installed (p4c is not packaged for this machine;" \
	         "install p4c from https://github.com/p4lang/p4c or set P4C_BM2_SS=/path/to/p4c-bm2-ss)" >&2; \
	    exit 1; }
	@mkdir -p $(P4_OUT)
	set -e; for p in $(P4_PROFILES); do \
	    case $$p in dc_splitter_sn12) defs="-D PDCP_SN_12=1";; \
	        dc_splitter_adaptive) defs="-D DC_ADAPTIVE=1";; *) defs="";; esac; \
	    $(P4C_BM2_SS) --arch v1model --std p4-16 $$defs \
	        --p4runtime-files $(P4_OUT)/$$p.bmv2.p4info.txtpb -o $(P4_OUT)/$$p.json $(P4_SRC); \
	done

# p4sim against BMv2 on the splitter: seeded random frames and live reconfigurations through
# the controller, outputs compared per port (p4src/tests/splitter_diff.py; root, p4c + BMv2).
.PHONY: splitter-diff
TEST_TARGETS += splitter-diff
P4TOOLS_BIN ?= /opt/p4tools/bin
splitter-diff:
	PATH="$(P4TOOLS_BIN):$$PATH" $(PY) p4src/tests/splitter_diff.py

# ptf-tests: the data-plane suite (PTF + scapy) against a P4Runtime target in a namespace.
#   make ptf                       p4sim (default), the whole suite
#   make ptf PTF_TESTS="dc_split reconfig.DupToggleKeepsSnTest"
#   make ptf TARGET=bmv2           simple_switch_grpc + p4c output (make p4c-bmv2)
#   make ptf PROGRAM=tna           the TNA splitter (p4src/dc_splitter_tna.p4) on p4sim
# `make test` runs the whole suite on both targets (ptf, then ptf-bmv2) and, with `ptf-tna`,
# against the TNA splitter on p4sim.
.PHONY: ptf ptf-bmv2 ptf-tna
TARGET ?= p4sim
PROGRAM ?= v1model
TEST_TARGETS += ptf ptf-bmv2 ptf-tna

# A bad value is named before the pipeline it would pick is compiled (minutes for BMv2's).
ifneq ($(filter ptf,$(MAKECMDGOALS)),)
ifneq ($(filter-out p4sim bmv2,$(TARGET))$(words $(TARGET)),1)
$(error TARGET=$(TARGET): allowed p4sim or bmv2)
endif
ifneq ($(filter-out v1model tna,$(PROGRAM))$(words $(PROGRAM)),1)
$(error PROGRAM=$(PROGRAM): allowed v1model or tna)
endif
endif

ptf: $(if $(filter p4sim,$(TARGET)),$(if $(filter tna,$(PROGRAM)),p4-tna,p4),p4c-bmv2)
	$(PY) ptf-tests/run_ptf.py --target $(TARGET) --program $(PROGRAM) \
	    $(if $(PTF_TESTS),--tests $(PTF_TESTS))

ptf-tna:
	@$(MAKE) --no-print-directory ptf TARGET=p4sim PROGRAM=tna

ifeq ($(SKIP_BMV2),1)
ptf-bmv2:
	@echo "*** ptf-bmv2: NOT RUN (SKIP_BMV2=1): the PTF suite did not run on BMv2 ***" >&2
else
ptf-bmv2:
	@$(MAKE) --no-print-directory ptf TARGET=bmv2
endif

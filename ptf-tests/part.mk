# ptf-tests: the data-plane suite (PTF + scapy) against a P4Runtime target in a namespace.
#   make ptf                       p4sim (default), the whole suite
#   make ptf PTF_TESTS="dc_split reconfig.DupToggleKeepsSnTest"
#   make ptf TARGET=bmv2           simple_switch_grpc + p4c output (make p4c-bmv2)
# `make test` runs the whole suite on both targets (ptf, then ptf-bmv2).
.PHONY: ptf ptf-bmv2
TARGET ?= p4sim
TEST_TARGETS += ptf ptf-bmv2

ptf: $(if $(filter p4sim,$(TARGET)),p4,p4c-bmv2)
	$(PY) ptf-tests/run_ptf.py --target $(TARGET) $(if $(PTF_TESTS),--tests $(PTF_TESTS))

ifeq ($(SKIP_BMV2),1)
ptf-bmv2:
	@echo "*** ptf-bmv2: NOT RUN (SKIP_BMV2=1): the PTF suite did not run on BMv2 ***" >&2
else
ptf-bmv2:
	@$(MAKE) --no-print-directory ptf TARGET=bmv2
endif

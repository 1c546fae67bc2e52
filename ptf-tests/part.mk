# ptf-tests: the data-plane suite (PTF + scapy) against a P4Runtime target in a namespace.
#   make ptf                       p4sim (default), the whole suite
#   make ptf PTF_TESTS="dc_split reconfig.DupToggleKeepsSnTest"
#   make ptf TARGET=bmv2           simple_switch_grpc + p4c output (make p4c-bmv2)
.PHONY: ptf
TARGET ?= p4sim
TEST_TARGETS += ptf

ptf: $(if $(filter p4sim,$(TARGET)),p4)
	$(PY) ptf-tests/run_ptf.py --target $(TARGET) $(if $(PTF_TESTS),--tests $(PTF_TESTS))

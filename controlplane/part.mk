# controlplane: P4Runtime controller library and the dcctl CLI.
.PHONY: controlplane-test controlplane-bench
TEST_TARGETS  += controlplane-test
BENCH_TARGETS += controlplane-bench

# As p4sim-test: the unit tests (in-process fake servers on port 0) on both cores, then alone
# those that start switches on veths or free ports, or drive a live control loop in time.
CONTROLPLANE_SERIAL_TESTS := $(addprefix controlplane/tests/,test_controlplane_adaptive.py \
    test_controlplane_bad_input.py test_controlplane_e2e.py test_controlplane_ports.py)
controlplane-test:
	$(PY) -m pytest -q -n 2 controlplane/tests $(CONTROLPLANE_SERIAL_TESTS:%=--ignore=%)
	$(PY) -m pytest -q $(CONTROLPLANE_SERIAL_TESTS)

# Reconfiguration latency and dc_splitter packets/s per mode on p4sim (in-process ports).
controlplane-bench:
	$(PY) -m controlplane.bench

# controlplane: P4Runtime controller library and the dcctl CLI.
.PHONY: controlplane-test controlplane-bench
TEST_TARGETS  += controlplane-test
BENCH_TARGETS += controlplane-bench

controlplane-test:
	$(PY) -m pytest -q controlplane/tests

# Reconfiguration latency and dc_splitter packets/s per mode on p4sim (in-process ports).
controlplane-bench:
	$(PY) -m controlplane.bench

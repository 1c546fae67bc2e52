# p4sim: the embedded P4_16 v1model target (front end, engine, P4Runtime server).
.PHONY: p4sim-test p4sim-bench
TEST_TARGETS  += p4sim-test
BENCH_TARGETS += p4sim-bench

p4sim-test:
	$(PY) -m pytest -q p4sim/tests

p4sim-bench:
	$(PY) -m p4sim.bench

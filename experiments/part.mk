# experiments: the DC testbed (dcexp: scenarios, flows, measurement, analysis, plots).
#   make experiments-test   unit tests (scenarios, JFI/SFA, report), flows on a plain veth,
#                           and one smoke experiment through the real chain
#                           (p4sim -> linkem A/B -> pdcp-agent), as root
#   make demo               (top-level) dcexp run experiments/scenarios/demo.yaml + report
.PHONY: experiments-test experiments-unit
TEST_TARGETS += experiments-test

experiments-unit:
	$(PY) -m pytest -q experiments/tests/test_exp_scenario.py experiments/tests/test_exp_analysis.py

experiments-test:
	$(PY) -m pytest -q $(sort $(wildcard experiments/tests/test_exp_*.py))

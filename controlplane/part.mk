# controlplane: P4Runtime controller library and the dcctl CLI.
.PHONY: controlplane-test
TEST_TARGETS += controlplane-test

controlplane-test:
	$(PY) -m pytest -q controlplane/tests

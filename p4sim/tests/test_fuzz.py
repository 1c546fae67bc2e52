"""The two fuzzers of issue 10 in `make test`: seeded, bounded in time, run as the user would
run them (`python -m p4sim.fuzz`), their counts printed (pytest -s shows them; on a failure
the offending inputs are in the assertion message).

- P4 mutation fuzzer: every mutant of p4src/, the conformance programs and p4c's v1model
  samples compiles or ends in a `file:line:col: error:` with a real position, never a
  traceback, a MemoryError or a hang (20 s per mutant).
- P4Runtime request fuzzer against a running `p4sim`: no UNKNOWN/INTERNAL from p4sim's own
  code, trailers under 8 KiB, the server alive, forwarding and bounded in memory afterwards.

Run: .venv/bin/pytest -q -s p4sim/tests/test_fuzz.py
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SECONDS = {"p4": 30, "p4runtime": 30}


@pytest.mark.parametrize("target", ["p4", "p4runtime"])
def test_fuzzer_finds_nothing(target):
    proc = subprocess.run(
        [sys.executable, "-m", "p4sim.fuzz", target, "--duration-s", str(SECONDS[target])]
        + ["--seed", "1"],
        capture_output=True,
        text=True,
        timeout=SECONDS[target] + 240,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert " 0 mutants" not in proc.stdout and " 0 inputs" not in proc.stdout

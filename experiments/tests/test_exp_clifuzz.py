"""The CLI/config fuzzer in `make test`: seeded, bounded in time, run as the user would run it
(`python -m experiments.clifuzz`), its seed, input count and outcomes printed (pytest -s shows
them; on a failure the offending inputs are in the assertion message). Every bad value for
every option of dcctl, dcexp and p4sim, and every broken config file, must end in acceptance
or one clean error line, never a traceback; broken configs and bad user names and addresses
must be refused.

Run: .venv/bin/pytest -q -s experiments/tests/test_exp_clifuzz.py
"""

from __future__ import annotations

import re
import subprocess
import sys

SECONDS = 20


def test_cli_fuzzer_finds_nothing():
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.clifuzz", "--duration-s", str(SECONDS), "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    tried = int(re.search(r"\): (\d+) inputs", proc.stdout)[1])
    assert tried >= 1000, proc.stdout  # a fuzzer that tries almost nothing finds nothing
    assert "clean error" in proc.stdout and "accepted" in proc.stdout

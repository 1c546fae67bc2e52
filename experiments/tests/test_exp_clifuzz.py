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

import pytest

SECONDS = 20
# A fuzzer that tries almost nothing finds nothing. A floor on the inputs, not only a time
# budget: 20 s gave 1,385 to 2,027 inputs on the loaded 2-core machine at nice 19, close
# enough to a bare 1,000 that a slower or busier machine would fail by chance.
MIN_INPUTS = 1000


def test_cli_fuzzer_finds_nothing():
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.clifuzz", "--duration-s", str(SECONDS), "--seed", "1"]
        + ["--min-inputs", str(MIN_INPUTS)],
        capture_output=True,
        text=True,
        timeout=SECONDS + 600,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    tried = int(re.search(r"\): (\d+) inputs", proc.stdout)[1])
    assert tried >= MIN_INPUTS, proc.stdout
    assert "clean error" in proc.stdout and "accepted" in proc.stdout


def test_the_look_alike_rule_fails_a_number_read_by_pythons_int():
    """The rule the fuzzer adds for look-alikes can fail: a slot typed with int() takes
    '١٢' (Arabic-Indic), '1_000' and ' 5 ' as 12, 1000 and 5; the project's int_range refuses
    them, and a text slot may take any of them."""
    import argparse
    import random

    from dccommon.cliargs import int_range
    from experiments.clifuzz import ascii_twin, lookalike, numeric_slot_took_lookalike

    parser = argparse.ArgumentParser()
    options = {
        "--plain": parser.add_argument("--plain", type=int),
        "--checked": parser.add_argument("--checked", type=int_range(0, 99, "n")),
        "--text": parser.add_argument("--text"),
    }
    leaf = ((), [], options)
    for value in ("١٢", "1_000", " 5 ", "１２\u200b"):
        assert numeric_slot_took_lookalike(leaf, "look-alike for --plain", ["--plain", value])
        assert not numeric_slot_took_lookalike(leaf, "look-alike for --text", ["--text", value])
        with pytest.raises(argparse.ArgumentTypeError):
            options["--checked"].type(value)
    assert numeric_slot_took_lookalike(leaf, "look-alike for --plain=", ["--plain=٣"])
    assert ascii_twin("𝟏٢\u22123_4\u00a0") == "12-34"
    rnd = random.Random(1)
    for _ in range(200):  # every look-alike stands for its word, and differs from it
        word = rnd.choice(["12", "0.5", "-1", "10.0.0.2"])
        twin = lookalike(word, rnd)
        assert twin != word and ascii_twin(twin) == word

"""dccommon.pktgen, the one place that knows clib/pktgen's path and turns keyword options
into its command line (linkem's tests and benchmarks, ratebench and p4sim's bench use it).

    .venv/bin/python -m pytest -q experiments/tests/test_exp_pktgen_argv.py
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from dccommon.pktgen import PKTGEN, pktgen_argv

ROOT = Path(__file__).resolve().parents[2]


def test_keywords_become_pktgen_options_it_takes():
    argv = pktgen_argv("rx", "veth0", idle_ms=500, duration_s=2.5)
    assert argv == [str(PKTGEN), "rx", "-i", "veth0", "--idle-ms=500", "--duration-s=2.5"]
    options = re.findall(
        r'\{"([a-z-]+)", (?:required|no)_argument', (ROOT / "clib/pktgen/pktgen.c").read_text()
    )
    assert {"idle-ms", "duration-s", "size", "pps", "mbit", "count"} <= set(options)


def test_the_path_is_where_make_builds_pktgen_and_it_names_a_bad_option():
    assert PKTGEN == ROOT / "build" / "clib" / "pktgen"
    assert PKTGEN.exists(), "run make pktgen-build (make build builds it)"
    argv = pktgen_argv("tx", "lo", frobnicate=1)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 2 and "frobnicate" in out.stderr

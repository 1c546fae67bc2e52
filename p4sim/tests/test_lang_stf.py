"""Conformance: every program + .stf pair in p4sim/tests/stf/ (expected outputs derived from
the P4_16 spec and BMv2's v1model by hand or with scapy, never by running p4sim).

Run: .venv/bin/pytest p4sim/tests/test_lang_stf.py
"""

from pathlib import Path

import pytest

from p4sim.stf import run_stf

STF_DIR = Path(__file__).parent / "stf"
REPO = Path(__file__).resolve().parents[2]
# Tests of programs that live elsewhere in the repository.
EXTERNAL = {"dc_splitter": REPO / "p4src" / "dc_splitter.p4"}


def cases():
    for stf in sorted(STF_DIR.glob("*.stf")):
        program = EXTERNAL.get(stf.stem, stf.with_suffix(".p4"))
        yield pytest.param(program, stf, id=stf.stem)


@pytest.mark.parametrize("program, stf", list(cases()))
def test_stf(program: Path, stf: Path):
    result = run_stf(program, stf)
    assert result.ok, "\n".join(result.failures)
    assert result.packets > 0

"""TNA conformance: our own programs in p4sim/tests/tna_programs/, one per block or extern,
each with an STF test whose expectations come from the TNA documentation (the comments of
tofino1_*.p4) and from independent computations (CRC catalogue check values, RFC 1071),
never from p4sim's output.

Every program must be accepted by the real Tofino compiler (so p4sim is never tested on a
program the real toolchain rejects; compiles cached in build/p4sim-tofino), and its STF
must pass on p4sim.

Run: .venv/bin/pytest -q p4sim/tests/test_tna_conformance.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.stf import run_stf
from p4sim.tests.tofino_compiler import compile_tna

PROGRAMS_DIR = Path(__file__).parent / "tna_programs"
PROGRAMS = sorted(PROGRAMS_DIR.glob("*.p4"))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_the_tofino_compiler_accepts_the_program(program):
    compiled = compile_tna(program, "tofino")
    assert compiled.accepted, f"the Tofino compiler rejects {program.name}:\n{compiled.log}"


def test_every_program_has_its_stf():
    assert PROGRAMS, f"no programs in {PROGRAMS_DIR}"
    for program in PROGRAMS:
        assert program.with_suffix(".stf").is_file(), f"{program.name} has no .stf"


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_stf_passes_on_p4sim(program):
    result = run_stf(program, program.with_suffix(".stf"))
    assert result.ok, "\n".join(result.failures)
    assert result.packets > 0

"""TNA conformance: our own programs in p4sim/tests/tna_programs/, one per block or extern,
each with an STF test whose expectations come from the TNA documentation (the comments of
tofino1_*.p4) and from independent computations (CRC catalogue check values, RFC 1071),
never from p4sim's output.

Each program includes t2na.p4 when __TARGET_TOFINO__ is 2, tna.p4 otherwise. Every program
must be accepted by the real compiler for Tofino 1 and 2 (so p4sim is never tested on a
program the real toolchain rejects; compiles cached in build/p4sim-tofino), and its STF
must pass on p4sim for both (T2NA_GAPS: the programs p4sim cannot compile for T2NA yet, with
the construct it lacks).

Run: .venv/bin/pytest -q p4sim/tests/test_tna_conformance.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.stf import run_stf
from p4sim.tests.tofino_compiler import compile_tna

PROGRAMS_DIR = Path(__file__).parent / "tna_programs"
PROGRAMS = sorted(PROGRAMS_DIR.glob("*.p4"))
CHIPS = {"tofino": "1", "tofino2": "2"}  # chip -> __TARGET_TOFINO__
# Programs p4sim cannot compile for T2NA yet (none: T2NA's Counter(size, type, @optional
# bool true_egress_accounting) compiles since @optional constructor arguments may be left out).
T2NA_GAPS: set[str] = set()


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_the_tofino_compiler_accepts_the_program(program, chip):
    compiled = compile_tna(program, chip)
    assert compiled.accepted, f"the {chip} compiler rejects {program.name}:\n{compiled.log}"


def test_every_program_has_its_stf():
    assert PROGRAMS, f"no programs in {PROGRAMS_DIR}"
    for program in PROGRAMS:
        assert program.with_suffix(".stf").is_file(), f"{program.name} has no .stf"


@pytest.mark.parametrize(
    "program, chip",
    [(p, c) for p in PROGRAMS for c in CHIPS if c == "tofino" or p.stem not in T2NA_GAPS],
    ids=lambda x: getattr(x, "stem", x),
)
def test_stf_passes_on_p4sim(program, chip):
    defines = {"__TARGET_TOFINO__": CHIPS[chip]}
    result = run_stf(program, program.with_suffix(".stf"), defines=defines)
    assert result.ok, "\n".join(result.failures)
    assert result.packets > 0

"""TNA conformance: our own programs in p4sim/tests/tna_programs/, one per block or extern,
each with an STF test whose expectations come from the TNA documentation (the comments of
tofino1_*.p4) and from independent computations (CRC catalogue check values, RFC 1071),
never from p4sim's output.

Every program must be accepted by the real Tofino compiler (so p4sim is never tested on a
program the real toolchain rejects; compiles cached in build/p4sim-tofino), and its STF
must pass on p4sim. A program p4sim cannot compile yet is listed in WAITING with the error
p4sim gives: its test checks that error, and fails once p4sim takes the program, so that it
moves to the programs that run.

Run: .venv/bin/pytest -q p4sim/tests/test_tna_conformance.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim.errors import P4Error
from p4sim.frontend import compile_file
from p4sim.stf import run_stf
from p4sim.tests.tofino_compiler import compile_tna

PROGRAMS_DIR = Path(__file__).parent / "tna_programs"
PROGRAMS = sorted(PROGRAMS_DIR.glob("*.p4"))

# program -> the end of the error p4sim gives for it today (the construct it lacks)
WAITING = {
    "register_action": "an instance initializer implementing abstract methods is not "
    "supported by p4sim",
    "hash_custom": "constructor argument 'poly' must be a compile-time constant",
}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_the_tofino_compiler_accepts_the_program(program):
    compiled = compile_tna(program, "tofino")
    assert compiled.accepted, f"the Tofino compiler rejects {program.name}:\n{compiled.log}"


def test_every_program_has_its_stf():
    assert PROGRAMS, f"no programs in {PROGRAMS_DIR}"
    for program in PROGRAMS:
        assert program.with_suffix(".stf").is_file(), f"{program.name} has no .stf"


@pytest.mark.parametrize(
    "program", [p for p in PROGRAMS if p.stem not in WAITING], ids=lambda p: p.stem
)
def test_stf_passes_on_p4sim(program):
    result = run_stf(program, program.with_suffix(".stf"))
    assert result.ok, "\n".join(result.failures)
    assert result.packets > 0


@pytest.mark.parametrize("name", sorted(WAITING))
def test_a_waiting_program_is_still_refused_for_its_construct(name):
    with pytest.raises(P4Error) as err:
        compile_file(PROGRAMS_DIR / f"{name}.p4")
    assert str(err.value).endswith(WAITING[name]), (
        f"p4sim's error for {name}.p4 changed (take it off WAITING if p4sim now runs it): "
        f"{err.value}"
    )

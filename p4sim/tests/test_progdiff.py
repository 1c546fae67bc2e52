"""The program generator of the program differential (p4sim.conformance.progen): the same
seed gives the same program, and its programs compile with the real p4c-bm2-ss and with
p4sim. The run against BMv2 is `make p4sim-conformance` (a bounded one) and
`python -m p4sim.conformance.progdiff` (docs/conformance.md).

Run: .venv/bin/pytest -q p4sim/tests/test_progdiff.py
"""

from __future__ import annotations

import random
from pathlib import Path

from p4sim.conformance import bmv2
from p4sim.conformance.pktdiff import _script
from p4sim.conformance.progdiff import make_frames, write_failure
from p4sim.conformance.progen import eval_int, generate
from p4sim.frontend import compile_file, compile_source
from p4sim.stf import StfRunner

PROGRAMS = 4


def test_same_seed_same_program_and_seeds_differ():
    assert generate(7, 3) == generate(7, 3)
    assert generate(7, 3) != generate(7, 4)
    assert generate(7, 3) != generate(8, 3)


def test_programs_compile_with_p4c_and_p4sim(tmp_path: Path):
    rejected = []
    for i in range(PROGRAMS):
        p4 = tmp_path / f"gen_{i}.p4"
        p4.write_text(generate(11, i))
        compiled = bmv2.compile_p4c(p4, tmp_path / f"p4c{i}")
        if not compiled.ok:
            rejected.append(f"{p4.name}: {compiled.message[-300:]}")
            continue
        compile_file(p4, ())  # raises P4Error on a refusal
    assert not rejected, "\n".join(rejected)


def test_programs_cover_the_corners():
    text = "".join(generate(5, i) for i in range(6))
    for construct in (
        "|+|",
        "|-|",
        "++",
        "int<",
        "&&&",
        " .. ",
        "lookahead",
        "hdr.st.next",
        "push_front",
        "const entries",
        "action_run",
        "HashAlgorithm.",
        "update_checksum",
        "nested.apply",
        "inout",
        "varbit",
    ):
        assert construct in text, construct


def test_frames_take_the_parser_branches_and_failures_replay(tmp_path: Path):
    program = compile_source(generate(3, 1), "gen.p4")
    frames = make_frames(program, random.Random(1))
    assert len(frames) >= 3
    runner = StfRunner(program)
    script = _script([], frames)
    for cmd in script.commands:
        runner.command(cmd)
    # a failure's STF expects the frames it was given: p4sim passes its own outputs
    write_failure(tmp_path / "f", "gen", generate(3, 1), script, runner.received)
    replay = StfRunner(compile_file(tmp_path / "f" / "gen.p4", ()))
    assert replay.run_text((tmp_path / "f" / "gen.stf").read_text()).ok


def test_folded_int_constants_as_p4_folds_them():
    assert eval_int("(7 % 3)") == 1
    assert eval_int("(-5 + 2)") == -3
    assert eval_int("(9 / 2)") == 4
    assert eval_int("(1 << 70)") == 1 << 70
    assert eval_int("(5 & 0)") == 0

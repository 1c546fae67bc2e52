"""Running one STF test through both engines and comparing them packet by packet.

Used by `p4sim/tests/test_native_equivalence.py` and `python -m p4sim.native.equivalence
PROGRAM.p4 TEST.stf`: the interpreter and the native engine each run the whole test on a
fresh device of the same compiled program; every `packet` command's outputs (port and bytes,
in order), the digests and the test's own verdict must be identical.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dccommon.cliargs import input_dir
from p4sim.frontend import compile_file
from p4sim.native import EngineProgram
from p4sim.stf import StfRunner


@dataclass
class EngineRun:
    engine: str  # the engine that ran ("interp" after a fallback)
    fallback_reason: str | None
    outputs: list = field(default_factory=list)  # per packet: [(port, frame), ...]
    digests: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    error: str | None = None


class _RecordingRunner(StfRunner):
    def cmd_packet(self, cmd) -> None:
        super().cmd_packet(cmd)
        self.record.outputs.append(list(self.last_outputs))
        digests = getattr(self.device, "digests", None)
        if digests:
            self.record.digests.append(list(digests))
            digests.clear()


def run_engine(program, stf_text: str, engine: str, filename: str) -> EngineRun:
    runner = _RecordingRunner.__new__(_RecordingRunner)
    prog = EngineProgram(program, engine)
    StfRunner.__init__(runner, prog)
    dev = runner.device
    runner.record = EngineRun(
        getattr(dev, "engine", "interp"), getattr(dev, "fallback_reason", None)
    )
    try:
        result = runner.run_text(stf_text, filename)
        runner.record.failures = list(result.failures)
    except Exception as exc:  # noqa: BLE001 - the same error on both engines is agreement
        runner.record.error = f"{type(exc).__name__}: {exc}"
    return runner.record


@dataclass
class Comparison:
    native: bool  # the native engine ran it (no fallback)
    fallback_reason: str | None
    differences: list[str]
    packets: int
    interp_passes: bool = True  # the test's own expectations, per engine
    native_passes: bool = True


def compare(p4_path, stf_path, include_dirs=(), defines=None, program=None) -> Comparison:
    if program is None:
        program = compile_file(p4_path, include_dirs, defines or {})
    text = Path(stf_path).read_text()
    a = run_engine(program, text, "interp", str(stf_path))
    b = run_engine(program, text, "native", str(stf_path))
    diffs = []
    for i, (x, y) in enumerate(zip(a.outputs, b.outputs)):
        if x != y:
            diffs.append(f"packet #{i + 1}: interp {_show(x)} native {_show(y)}")
    if len(a.outputs) != len(b.outputs):
        diffs.append(f"interp ran {len(a.outputs)} packets, native {len(b.outputs)}")
    if a.digests != b.digests:
        diffs.append(f"digests differ: interp {a.digests[:3]} native {b.digests[:3]}")
    if a.failures != b.failures:
        diffs.append(f"verdicts differ: interp {a.failures[:3]} native {b.failures[:3]}")
    if a.error != b.error:
        diffs.append(f"errors differ: interp {a.error} native {b.error}")
    return Comparison(
        b.engine == "native",
        b.fallback_reason,
        diffs,
        len(a.outputs),
        interp_passes=not a.failures and a.error is None,
        native_passes=not b.failures and b.error is None,
    )


def _show(outputs) -> str:
    return "[" + ", ".join(f"{p}:{f.hex()}" for p, f in outputs) + "]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m p4sim.native.equivalence", description=__doc__.splitlines()[0]
    )
    ap.add_argument("program")
    ap.add_argument("stf")
    ap.add_argument("-I", dest="include", action="append", default=[], type=input_dir)
    args = ap.parse_args(argv)
    c = compare(args.program, args.stf, args.include)
    print(f"native: {c.native}" + (f" (fell back: {c.fallback_reason})" if not c.native else ""))
    for d in c.differences:
        print(d)
    print(f"{c.packets} packets, {len(c.differences)} difference(s)")
    return 1 if c.differences else 0


if __name__ == "__main__":
    sys.exit(main())

"""Program differential: generated v1model programs on BMv2 and p4sim.

    python -m p4sim.conformance.progdiff [--seed S] [--programs N] [--first I] [-j 2]
                                         [--engine interp|native] [--keep DIR]
                                         [--failures DIR] [--json] [-v]

Program number I of seed S (`p4sim.conformance.progen.generate(S, I)`: random headers, a
parser over them, controls of random statements over the corners a generator finds) is
compiled by p4c-bm2-ss (a program it rejects is counted and dropped) and by p4sim; frames
crafted from the program's parser (`packets.ParserExplorer`: every `select` label a frame
can take, from random frames) plus cut and random ones run as an STF on both targets
through the packet differential's runner (`pktdiff.compare`: `bmv2.run_stf` on pcap files,
`p4sim.stf.StfRunner`), every port compared byte for byte. Verdicts as pktdiff's: `same`,
`explained` (BMv2's concurrency or its reuse of packet state, `pktdiff.explanation`),
`DIFFER`, `CRASH`; p4c's and p4sim's refusals counted. A DIFFER or CRASH program is written
to --failures (default ./progdiff-failures) as NAME.p4 and NAME.stf, the STF expecting
BMv2's frames, so `python -m p4sim.conformance FILE.p4` reproduces it. Exit status 1 on
DIFFER or CRASH.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dccommon.cliargs import MAX_UINT64, ArgumentParser, int_range
from p4sim.conformance import bmv2
from p4sim.conformance.differential import _construct, _crash
from p4sim.conformance.packets import ParserExplorer, random_bytes, truncated
from p4sim.conformance.parallel import run_parallel
from p4sim.conformance.pktdiff import (
    FAILING,
    P4simInternalError,
    _script,
    compare,
    explanation,
    split_nomatch,
)
from p4sim.conformance.progen import generate
from p4sim.conformance.stf import StfError
from p4sim.tool import (
    add_json_option,
    add_program_run_options,
    add_seed_option,
    report_stream,
    write_json,
)

RANDOM_FRAMES = 8  # random frames the parser search starts from
MAX_FRAMES = 14  # a program's frames: the fresh-switch explanation starts BMv2 per frame


@dataclass
class GenResult:
    name: str
    status: str = (
        ""  # same | explained | DIFFER | CRASH | p4c-rejects | not-supported | rejects | error
    )
    detail: str = ""
    packets: int = 0
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0


def make_frames(program, rng: random.Random) -> list[bytes]:
    """Frames that take every parser branch a frame can take, then a cut and a random one."""
    explorer = ParserExplorer(program, rng)
    for _ in range(RANDOM_FRAMES):
        explorer.add(rng.randbytes(rng.randint(8, 96)))
    explorer.explore(2.0, MAX_FRAMES)
    frames = [f for f, _ in explorer.pool][: MAX_FRAMES - 2]
    return frames + [truncated(rng), random_bytes(rng)]


def write_failure(folder: Path, name: str, text: str, script, bmv2_out) -> None:
    """NAME.p4 and NAME.stf (the script's packets, expecting BMv2's frames), for
    `python -m p4sim.conformance`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.p4").write_text(text)
    lines = [c.text for c in script.commands if c.name == "packet"]
    for port, out in sorted(bmv2_out.items()):
        lines += [f"expect {port} {f.hex()}$" for f in out]
    (folder / f"{name}.stf").write_text("\n".join(lines) + "\n")


def diff_one(seed: int, index: int, engine: str, keep: Path | None, failures: Path) -> GenResult:
    start = time.monotonic()
    result = GenResult(f"gen_{seed}_{index}")
    try:
        with tempfile.TemporaryDirectory(prefix="progdiff-") as tmp:
            work = keep / result.name if keep else Path(tmp)
            _diff_one(seed, index, engine, work, failures, result)
    finally:
        result.seconds = time.monotonic() - start
    return result


def _diff_one(seed, index, engine, work: Path, failures: Path, result: GenResult) -> None:
    from p4sim.errors import P4Error
    from p4sim.frontend import compile_file

    text = generate(seed, index)
    work.mkdir(parents=True, exist_ok=True)
    p4 = work / f"{result.name}.p4"
    p4.write_text(text)
    compiled = bmv2.compile_p4c(p4, work / "p4c")
    if not compiled.ok:
        result.status = "p4c-rejects"
        result.detail = next((ln for ln in compiled.message.splitlines() if "error" in ln), "")
        return
    try:
        program = compile_file(p4, ())
    except P4Error as e:
        result.status = "not-supported" if "not supported by p4sim" in str(e) else "rejects"
        result.detail = _construct(str(e))
        return
    except Exception as e:  # noqa: BLE001 - a p4sim bug is reported; the others run on
        result.status, result.detail = "CRASH", _crash(e)
        return
    if engine == "native":
        from p4sim.native import EngineProgram

        program = EngineProgram(program, "native")
    frames = make_frames(program, random.Random(f"frames:{seed}:{index}"))
    frames, _ = split_nomatch(program, frames)
    result.packets = len(frames)
    script = _script([], frames)
    try:
        result.differences = compare(compiled.json_path, program, script, work / "run")
        if result.differences:
            result.detail = explanation(
                p4.name, text, compiled.json_path, program, [], frames, work
            )
        result.status = (
            "same" if not result.differences else ("explained" if result.detail else "DIFFER")
        )
    except (bmv2.Bmv2Error, StfError, OSError) as e:
        result.status, result.detail = "error", str(e).splitlines()[0][:200]
    except P4simInternalError as e:
        result.status, result.detail = "CRASH", str(e)[:300]
    except Exception as e:  # noqa: BLE001 - a p4sim bug, reported as such
        result.status, result.detail = "CRASH", _crash(e)
    if result.status in FAILING:
        out = bmv2.run_stf(compiled.json_path, script, work / "expected")
        write_failure(failures, result.name, text, script, out)


def run_all(seed, indices, engine, jobs, keep, failures):
    work = [(seed, i, engine, keep, failures) for i in indices]
    return run_parallel(diff_one, work, jobs)


def print_report(results, verbose: bool, out) -> list[GenResult]:
    done = []
    print(f"{'program':<16}  {'result':<13}  packets  seconds", file=out)
    for n, r in enumerate(results, 1):
        done.append(r)
        print(f"{r.name:<16}  {r.status:<13}  {r.packets:7d}  {r.seconds:7.1f}  [{n}]", file=out)
        if (
            r.status in FAILING
            or r.status in ("error", "explained", "p4c-rejects", "rejects")
            or verbose
        ):
            for line in ([r.detail] if r.detail else []) + r.differences[:4]:
                print(f"    {line[:300]}", file=out)
        out.flush()
    return done


PROG = "python -m p4sim.conformance.progdiff"


def main(argv=None) -> int:
    ap = ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    add_seed_option(ap, "the programs")
    ap.add_argument(
        "--programs",
        type=int_range(1, 1_000_000, "programs"),
        default=20,
        help="programs to run (default: 20)",
    )
    ap.add_argument(
        "--first",
        type=int_range(0, MAX_UINT64, "first"),
        default=0,
        help="number of the first (default: 0)",
    )
    ap.add_argument(
        "--engine",
        choices=("interp", "native"),
        default="interp",
        help="p4sim's engine (default: interp)",
    )
    add_program_run_options(ap, "every program and BMv2's files")
    ap.add_argument(
        "--failures",
        type=Path,
        default=Path("progdiff-failures"),
        help="where a DIFFER or CRASH program and its STF go (default: ./progdiff-failures)",
    )
    add_json_option(ap, "every result")
    args = ap.parse_args(argv)
    start = time.monotonic()
    out = report_stream(args.json)
    indices = range(args.first, args.first + args.programs)
    results = print_report(
        run_all(args.seed, indices, args.engine, args.jobs, args.keep, args.failures),
        args.verbose,
        out,
    )
    counts = Counter(r.status for r in results)
    print(f"\nseed {args.seed}: {len(results)} programs generated", file=out)
    for status, n in counts.most_common():
        print(f"  {n:4d}  {status}", file=out)
    print(f"time: {time.monotonic() - start:.0f} s with {args.jobs} job(s)", file=out)
    write_json(PROG, [asdict(r) for r in results], args.json)
    failing = [r.name for r in results if r.status in FAILING]
    if failing:
        print(
            f"FAIL: p4sim differs from BMv2 or crashes: {', '.join(failing)} "
            f"(programs and STFs in {args.failures})",
            file=out,
        )
    return 1 if failing else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    from p4sim.tool import run

    sys.exit(run(PROG, main))

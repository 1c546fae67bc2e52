"""Run p4c's STF tests on BMv2 and on p4sim and compare what each port sent.

    python -m p4sim.conformance [PATH ...] [-j 2] [--goal 98] [--json] [-v]

PATH is a directory (every `X.p4` with an `X.stf` beside it whose source includes
`v1model.p4`) or .p4 files (their .stf beside them); the default is p4c's samples in the
p4tools install. For each program, p4c-bm2-ss runs once: its BMv2 JSON drives
simple_switch (`p4sim.conformance.bmv2`) and its P4Info is compared with the one p4sim
generates. The STF runs on p4sim through `p4sim.stf.StfRunner`. Verdicts follow p4c's
bmv2stf.py (`p4sim.conformance.stf`); on top of them, p4sim's frames must equal BMv2's byte
for byte, per port, in order.

Exit status 1 when a program that passes on BMv2 gives different frames on p4sim, when
p4sim's P4Info differs from p4c's, when p4sim fails on a program for a reason other than a
construct it reports as not supported, or when fewer than --goal percent of the
BMv2-passing programs pass on p4sim.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dccommon.cliargs import ArgumentParser, float_range
from p4sim.conformance import bmv2
from p4sim.conformance.parallel import run_parallel, silence_logging
from p4sim.conformance.stf import StfError, check_outputs, diff_outputs, read_script
from p4sim.tool import (
    JSON_TO_STDOUT,
    ToolError,
    add_json_option,
    add_program_run_options,
    report_stream,
    write_json,
)

DEFAULT_SAMPLES = Path("/opt/p4tools/p4c-testdata/p4_16_samples")
DEFAULT_GOAL = 98.0


@dataclass
class ProgramResult:
    name: str
    bmv2: str = ""  # pass | fail | p4c-rejects | error
    bmv2_detail: str = ""
    p4sim: str = ""  # pass | fail | not-supported | rejects | error
    p4sim_detail: str = ""
    differences: list[str] = field(default_factory=list)  # frames, p4sim vs BMv2
    p4info: list[str] | None = None  # P4Info differences; None when not compared
    seconds: float = 0.0

    @property
    def same_output(self) -> bool:
        return self.p4sim in ("pass", "fail") and not self.differences

    @property
    def counts(self) -> bool:
        """In the pass-rate denominator: BMv2 passes the test."""
        return self.bmv2 == "pass"

    @property
    def both_pass(self) -> bool:
        return self.bmv2 == "pass" and self.p4sim == "pass" and self.same_output

    @property
    def reason(self) -> str:
        """Why a BMv2-passing program does not pass on p4sim, for the summary."""
        if self.p4sim == "not-supported":
            return "not supported: " + _construct(self.p4sim_detail)
        if self.p4sim in ("pass", "fail") and self.differences:
            return "WRONG OUTPUT (bug)"
        if self.p4sim == "rejects":
            return "REJECTS A VALID PROGRAM (bug): " + _construct(self.p4sim_detail)
        return f"P4SIM {self.p4sim.upper()} (bug)"


def _construct(message: str) -> str:
    """The error's message without its position and program names, for grouping."""
    first = message.splitlines()[0] if message else ""
    first = re.sub(r"^.*?: error: ", "", first)
    return re.sub(r"'[^']*'", "'...'", first)


def find_programs(paths: list[Path]) -> list[Path]:
    programs = []
    for path in paths:
        if path.is_dir():
            for p4 in sorted(path.glob("*.p4")):
                if p4.with_suffix(".stf").exists() and _is_v1model(p4):
                    programs.append(p4)
        else:
            programs.append(path)
    return programs


def programs_to_run(paths: list[Path], find, what: str) -> list[Path]:
    """The programs a differential run takes from its arguments (p4c's samples by default),
    once BMv2's tools are found: `find` picks them from files and directories; none is an
    error naming `what` was looked for."""
    try:
        for name in ("p4c-bm2-ss", "simple_switch", "simple_switch_CLI"):
            bmv2.tool(name)
    except bmv2.Bmv2Error as e:
        raise ToolError(str(e), exit_code=2) from None
    paths = paths or [DEFAULT_SAMPLES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ToolError(f"no such file or directory: {', '.join(missing)}", exit_code=2)
    programs = find(paths)
    if not programs:
        raise ToolError(f"no {what} found", exit_code=2)
    return programs


def _is_v1model(p4: Path) -> bool:
    return (
        re.search(r"#\s*include\s*[<\"]v1model\.p4[>\"]", p4.read_text(errors="replace"))
        is not None
    )


def _p4sim_run(p4: Path, script, stf_path: Path, result: ProgramResult):
    """The program, p4sim's frames per STF port (None when it cannot run the program) and
    the failures of the script's checks other than frames."""
    from p4sim.errors import P4Error
    from p4sim.frontend import compile_file
    from p4sim.stf import StfRunner

    try:
        program = compile_file(p4, (str(p4.parent),))
    except P4Error as e:
        text = str(e)
        result.p4sim = "not-supported" if "not supported by p4sim" in text else "rejects"
        result.p4sim_detail = text.splitlines()[0]
        return None, None, []
    except Exception as e:  # noqa: BLE001 - a p4sim bug is reported; the other programs run on
        result.p4sim, result.p4sim_detail = "crash", _crash(e)
        return None, None, []
    try:
        runner = StfRunner(program)
        for cmd in script.commands:
            runner.command(cmd)
    except StfError as e:
        result.p4sim, result.p4sim_detail = "error", f"STF: {e}"
        return program, None, []
    except Exception as e:  # noqa: BLE001 - a p4sim bug, reported as such
        result.p4sim, result.p4sim_detail = "crash", _crash(e)
        return program, None, []
    outputs = {port: runner.received.get(port, []) for port in script.ports}
    return program, outputs, runner.result.failures  # its state checks' and expect_drop's


def _crash(e: Exception) -> str:
    where = traceback.extract_tb(e.__traceback__)[-1]
    return f"{type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})"


def _p4info_differences(program, p4c_p4info: Path) -> list[str]:
    from p4sim import p4info
    from p4sim.p4info_compare import differences, read_text

    try:
        ours = p4info.generate(program.model)
    except Exception as e:  # noqa: BLE001 - a p4sim bug, reported as such
        return [f"p4sim cannot generate a P4Info: {_crash(e)}"]
    return differences(ours, read_text(p4c_p4info))


def run_program(p4: Path, keep_dir: Path | None = None) -> ProgramResult:
    start = time.monotonic()
    result = ProgramResult(p4.name)
    stf_path = p4.with_suffix(".stf")
    with tempfile.TemporaryDirectory(prefix="p4conf-") as tmp:
        work = keep_dir / p4.stem if keep_dir else Path(tmp)
        try:
            script = read_script(stf_path)
        except (StfError, OSError) as e:
            result.bmv2 = result.p4sim = "error"
            result.bmv2_detail = str(e)
            return result
        compiled = bmv2.compile_p4c(p4, work / "p4c")
        bmv2_out = None
        if not compiled.ok:
            result.bmv2, result.bmv2_detail = "p4c-rejects", _first_error(compiled.message)
        else:
            checks: list[str] = []
            try:
                bmv2_out = bmv2.run_stf(compiled.json_path, script, work / "bmv2", checks)
            except (bmv2.Bmv2Error, OSError) as e:
                result.bmv2, result.bmv2_detail = "error", str(e)
            else:
                failures = check_outputs(script, bmv2_out) + checks
                result.bmv2 = "fail" if failures else "pass"
                result.bmv2_detail = "; ".join(failures)
        program, p4sim_out, checks = _p4sim_run(p4, script, stf_path, result)
        if p4sim_out is not None:
            failures = check_outputs(script, p4sim_out) + checks
            result.p4sim = "fail" if failures else "pass"
            result.p4sim_detail = "; ".join(failures)
            if bmv2_out is not None:
                result.differences = diff_outputs(script.ports, bmv2_out, p4sim_out)
        if program is not None and compiled.ok:
            result.p4info = _p4info_differences(program, compiled.p4info_path)
    result.seconds = time.monotonic() - start
    return result


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error" in line.lower():
            return line.strip()
    return stderr.splitlines()[0] if stderr else "p4c-bm2-ss failed"


def run_all(programs: list[Path], jobs: int, keep_dir: Path | None = None):
    """The results, in the programs' order, as they come."""
    work = [(p, keep_dir) for p in programs]
    return run_parallel(run_program, work, jobs, initializer=silence_logging)


@dataclass
class Summary:
    compared: int
    bmv2_pass: int
    both_pass: int
    reasons: Counter
    wrong_output: list[str]
    p4info_differs: list[str]
    p4info_compared: int
    p4sim_bugs: list[str]

    @property
    def rate(self) -> float:
        return 100.0 * self.both_pass / self.bmv2_pass if self.bmv2_pass else 100.0


def summarize(results: list[ProgramResult]) -> Summary:
    passing = [r for r in results if r.counts]
    reasons = Counter(r.reason for r in passing if not r.both_pass)
    return Summary(
        compared=len(results),
        bmv2_pass=len(passing),
        both_pass=sum(r.both_pass for r in passing),
        reasons=reasons,
        wrong_output=[r.name for r in results if r.bmv2 == "pass" and r.differences],
        p4info_differs=[r.name for r in results if r.p4info],
        p4info_compared=sum(r.p4info is not None for r in results),
        p4sim_bugs=[
            r.name for r in passing if not r.both_pass and not r.reason.startswith("not supported")
        ],
    )


def print_report(results, width: int, verbose: bool, out=sys.stdout) -> list[ProgramResult]:
    """One line per program as its result comes (details under the ones that matter)."""
    done = []
    print(f"{'program':<{width}}  {'BMv2':<11}  {'p4sim':<13}  {'frames':<7}  P4Info", file=out)
    for r in results:
        done.append(r)
        frames = (
            "-"
            if r.p4sim not in ("pass", "fail") or r.bmv2 not in ("pass", "fail")
            else ("same" if not r.differences else "DIFFER")
        )
        info = "-" if r.p4info is None else ("same" if not r.p4info else "DIFFER")
        print(f"{r.name:<{width}}  {r.bmv2:<11}  {r.p4sim:<13}  {frames:<7}  {info}", file=out)
        show = verbose or frames == "DIFFER" or info == "DIFFER" or (r.counts and not r.both_pass)
        if show:
            for line in (
                ([f"BMv2: {r.bmv2_detail}"] if r.bmv2_detail else [])
                + ([f"p4sim: {r.p4sim_detail}"] if r.p4sim_detail else [])
                + r.differences[:4]
                + [f"P4Info: {d}" for d in (r.p4info or [])[:6]]
            ):
                print(f"    {line}", file=out)
        out.flush()
    return done


def print_summary(results: list[ProgramResult], out=sys.stdout) -> Summary:
    summary = summarize(results)
    print(file=out)
    print(f"programs compared:        {summary.compared}", file=out)
    print(f"pass on BMv2:             {summary.bmv2_pass}", file=out)
    print(
        f"pass on both (identical): {summary.both_pass} "
        f"({summary.rate:.1f} % of the BMv2-passing programs)",
        file=out,
    )
    print("p4sim-only differences by reason:", file=out)
    for reason, n in summary.reasons.most_common():
        print(f"  {n:3d}  {reason}", file=out)
    if not summary.reasons:
        print("    0  (none)", file=out)
    print(
        f"P4Info equal to p4c's:    {summary.p4info_compared - len(summary.p4info_differs)} "
        f"of {summary.p4info_compared} programs p4sim accepts, ignoring entity order",
        file=out,
    )
    return summary


def verdict(summary: Summary, goal: float) -> list[str]:
    problems = []
    if summary.wrong_output:
        problems.append("p4sim's frames differ from BMv2's: " + ", ".join(summary.wrong_output))
    if summary.p4sim_bugs:
        problems.append(
            "p4sim fails without a 'not supported' error: " + ", ".join(summary.p4sim_bugs)
        )
    if summary.p4info_differs:
        problems.append("p4sim's P4Info differs from p4c's: " + ", ".join(summary.p4info_differs))
    if summary.rate < goal:
        problems.append(f"pass rate {summary.rate:.1f} % is below the goal of {goal:g} %")
    return problems


PROG = "python -m p4sim.conformance"


def main(argv=None) -> int:
    ap = ArgumentParser(
        prog=PROG,
        description="Run p4c's STF tests on BMv2 and p4sim and compare the frames per port.",
    )
    ap.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=f"directories of .p4/.stf pairs or .p4 files (default: {DEFAULT_SAMPLES})",
    )
    ap.add_argument(
        "--goal",
        type=float_range(0, 100, "goal"),
        default=DEFAULT_GOAL,
        help=f"lowest pass rate on p4sim, in %% of the BMv2-passing programs (default: {DEFAULT_GOAL:g})",
    )
    add_json_option(ap, "every result")
    add_program_run_options(ap, "p4c's outputs and BMv2's files")
    args = ap.parse_args(argv)
    if args.json not in (None, JSON_TO_STDOUT) and (
        Path(args.json).is_dir() or args.json.endswith(".p4")
    ):  # `--json DIR`: a flag followed by a path, not the deprecated `--json FILE`
        args.paths.insert(0, Path(args.json))
        args.json = JSON_TO_STDOUT
    programs = programs_to_run(args.paths, find_programs, "v1model .p4 program with an .stf")
    start = time.monotonic()
    width = max(len(p.name) for p in programs)
    out = report_stream(args.json)
    results = print_report(run_all(programs, args.jobs, args.keep), width, args.verbose, out)
    summary = print_summary(results, out)
    print(f"time: {time.monotonic() - start:.0f} s with {args.jobs} job(s)", file=out)
    write_json(PROG, [asdict(r) for r in results], args.json)
    problems = verdict(summary, args.goal)
    for p in problems:
        print(f"FAIL: {p}", file=out)
    return 1 if problems else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())

"""Rejection conformance: every program of p4c's error corpus that p4c rejects, p4sim must
reject too, with a `file:line:col: error:` message (no traceback, no hang, no acceptance).

    python -m p4sim.rejects [--testdata DIR] [--no-p4c] [-v]

The corpus is p4c's `testdata/p4_16_errors` (judged by `p4test`) and `p4_16_bmv_errors`
(judged by `p4c-bm2-ss`, the v1model back end), and our own `p4sim/tests/p4c_verdicts/`
(judged by `p4c-bm2-ss`): each of ours says on its first line what p4c does with it
(`// p4c-bm2-ss: rejects` or `// p4c-bm2-ss: accepts`), p4c must still do so, and p4sim must
do the same (ours hold the cases p4c decides after dropping dead code, where accepting
matters as much as rejecting). Programs that include anything but core.p4
and v1model.p4 are out of scope (p4sim knows only these two architectures' files) and are
counted as such. p4c runs on every program at test time, so the tally proves that p4c
rejects what p4sim is asked to reject. Programs p4sim is known to accept although p4c
rejects them are listed, with the check p4sim lacks, in p4sim/README.md ("Known gaps in
rejection"); any other acceptance, a traceback, a hang or an error without a position fails.
Exit status 0 when nothing unexpected happened, 1 otherwise, 2 when the tools are missing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from p4sim.errors import CompileTimeout, P4Error, time_limit
from p4sim.tool import ToolError
from p4sim.tool import run as run_tool

# Each corpus directory with the p4c executable that judges it.
CORPORA = (("p4_16_errors", "p4test"), ("p4_16_bmv_errors", "p4c-bm2-ss"))
OUR_CORPUS = Path(__file__).resolve().parent / "tests" / "p4c_verdicts"
OUR_VERDICT = re.compile(r"^// p4c-bm2-ss: (rejects|accepts)\b")
KNOWN_INCLUDES = {"core.p4", "v1model.p4"}
P4SIM_TIMEOUT_S = 10
P4C_TIMEOUT_S = 60
README = Path(__file__).resolve().parent / "README.md"
GAPS_HEADING = "### Known gaps in rejection"

# p4sim's verdicts, in the order the tally prints them; the first one is the only good one.
REJECTS = "rejects with position"
UNSUPPORTED = "rejects as not supported"
MAIN_ONLY = "rejects only for lacking a V1Switch main"
VERDICTS = (
    REJECTS,
    UNSUPPORTED,
    MAIN_ONLY,
    "rejects without position",
    "crashes",
    "hangs",
    "accepts",
)
# p4sim is a v1model target: a program without `V1Switch(...) main` is refused after every
# other check passed. p4c's front end (p4test) needs no main, so such a refusal says the
# program's own error went unnoticed: it counts as an acceptance.
MAIN_MESSAGES = ("no package instantiation named 'main'", "main must be a V1Switch package")
GAP_VERDICTS = ("accepts", MAIN_ONLY)


@dataclass
class Case:
    path: Path
    tool: str
    out_of_scope: str | None = None
    expected_rejects: bool | None = None  # ours: what p4c does with it, by its first line
    p4c_rejects: bool | None = None
    p4c_message: str = ""
    verdict: str = ""
    message: str = ""


def default_testdata() -> Path | None:
    """p4c's testdata beside the p4c executables on PATH (`PREFIX/bin` -> `PREFIX/p4c-testdata`),
    else /opt/p4tools/p4c-testdata."""
    candidates = []
    p4test = shutil.which("p4test")
    if p4test:
        candidates.append(Path(p4test).resolve().parent.parent / "p4c-testdata")
    candidates.append(Path("/opt/p4tools/p4c-testdata"))
    return next((c for c in candidates if c.is_dir()), None)


def includes_out_of_scope(path: Path, seen: set[Path] | None = None) -> str | None:
    """The first include of something other than core.p4/v1model.p4 (followed through quoted
    includes of other corpus files), or None."""
    seen = seen if seen is not None else set()
    seen.add(path)
    text = path.read_text(errors="replace")
    for m in re.finditer(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', text, re.MULTILINE):
        name = m.group(2)
        if os.path.basename(name) in KNOWN_INCLUDES:
            continue
        target = (path.parent / name).resolve()
        if m.group(1) == '"' and target.is_file():
            if target not in seen:
                reason = includes_out_of_scope(target, seen)
                if reason:
                    return reason
            continue
        return f"includes {name}"
    return None


def collect(testdata: Path) -> list[Case]:
    cases = []
    for directory, tool in CORPORA:
        for path in sorted((testdata / directory).glob("*.p4")):
            cases.append(Case(path, tool, includes_out_of_scope(path)))
    return cases + our_cases()


def our_cases(corpus: Path = OUR_CORPUS) -> list[Case]:
    """Our programs with the verdict of p4c-bm2-ss each states on its first line."""
    cases = []
    for path in sorted(corpus.glob("*.p4")):
        first = path.read_text().split("\n", 1)[0]
        m = OUR_VERDICT.match(first)
        if m is None:
            raise ToolError(
                f"{path}: the first line must be '// p4c-bm2-ss: rejects' or "
                f"'// p4c-bm2-ss: accepts', not {first!r}"
            )
        cases.append(Case(path, "p4c-bm2-ss", expected_rejects=m.group(1) == "rejects"))
    return cases


def judge_p4c(case: Case, workdir: str) -> None:
    """Run p4c on the program; a non-zero exit with an `error` in its output is a rejection.
    A p4c crash ("Compiler Bug") is not: p4sim is held only to p4c's real verdicts."""
    out = os.path.join(workdir, case.path.stem + ".json")
    argv = [case.tool, str(case.path)]
    if case.tool == "p4c-bm2-ss":
        argv += ["-o", out]
    try:
        # the exit status is the verdict, read below
        run = subprocess.run(
            argv, capture_output=True, text=True, timeout=P4C_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        case.p4c_rejects, case.p4c_message = None, "p4c timed out"
        return
    text = run.stdout + run.stderr
    errors = [ln for ln in text.splitlines() if re.search(r"\berror\b", ln)]
    first = errors[0] if errors else text.strip()[:200]
    if run.returncode != 0 and "Compiler Bug" in text:
        case.p4c_rejects, case.p4c_message = None, "p4c crashed: " + first
    else:
        case.p4c_rejects, case.p4c_message = run.returncode != 0, first


def judge_p4sim(case: Case):
    """Compile with p4sim's front end in this process, bounded in time; the compiled
    program when p4sim accepts it, else None."""
    from p4sim.frontend import compile_file

    program = None
    try:
        with time_limit(P4SIM_TIMEOUT_S):
            program = compile_file(case.path)
        case.verdict = "accepts"
    except CompileTimeout:
        case.verdict, case.message = "hangs", f"no answer within {P4SIM_TIMEOUT_S} s"
    except P4Error as e:
        case.message = str(e).splitlines()[0]
        if not (e.line > 0 and e.file not in ("", "<input>")):
            case.verdict = "rejects without position"
        elif e.message.startswith(MAIN_MESSAGES):
            case.verdict = MAIN_ONLY
        elif e.message.endswith("is not supported by p4sim"):
            case.verdict = UNSUPPORTED
        else:
            case.verdict = REJECTS
    except Exception:  # noqa: BLE001 -- a traceback is the finding being recorded
        case.verdict = "crashes"
        case.message = traceback.format_exc().strip().splitlines()[-1]
    return program


def known_gaps(readme: Path = README) -> dict[str, str]:
    """The README's list of programs p4sim accepts although p4c rejects them:
    `| program.p4 | check p4sim lacks |` rows under GAPS_HEADING."""
    gaps: dict[str, str] = {}
    section = False
    for line in readme.read_text().splitlines():
        if line.startswith("#"):
            section = line.strip() == GAPS_HEADING
            continue
        m = re.match(r"\|\s*`?([\w./-]+\.p4)`?\s*\|\s*(.+?)\s*\|\s*$", line)
        if section and m:
            gaps[m.group(1)] = m.group(2)
    return gaps


def run(testdata: Path, use_p4c: bool = True, verbose: bool = False) -> int:
    cases = collect(testdata)
    in_scope = [c for c in cases if not c.out_of_scope]
    if use_p4c:
        missing = sorted({c.tool for c in in_scope if not shutil.which(c.tool)})
        if missing:
            raise ToolError(f"{', '.join(missing)} not found on PATH", exit_code=2)
        with (
            tempfile.TemporaryDirectory() as workdir,
            ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool,
        ):
            futures = [pool.submit(judge_p4c, c, workdir) for c in in_scope]
            for c in in_scope:  # p4sim in this thread while p4c runs in the others
                judge_p4sim(c)
            for f in futures:
                f.result()
    else:
        for c in in_scope:
            judge_p4sim(c)
            # trust the corpus: p4c's error tests, and what ours say of themselves
            c.p4c_rejects = True if c.expected_rejects is None else c.expected_rejects
    return report(cases, known_gaps(), verbose)


def our_failures(ours: list[Case]) -> list[str]:
    """Our programs where p4c no longer gives the verdict the program states, or where
    p4sim does not give it too (an acceptance where p4c accepts, a positioned error where
    it rejects)."""
    failures = []
    for c in ours:
        name = f"{c.path.parent.name}/{c.path.name}"
        stated = "rejects" if c.expected_rejects else "accepts"
        if c.p4c_rejects is None:
            failures.append(f"{name}: {c.p4c_message}")
        elif c.p4c_rejects != c.expected_rejects:
            failures.append(
                f"{name}: states 'p4c-bm2-ss: {stated}' but p4c does not: {c.p4c_message}"
            )
        elif c.expected_rejects and c.verdict != REJECTS:
            failures.append(f"{name}: p4c rejects, p4sim {c.verdict}: {c.message or '-'}")
        elif not c.expected_rejects and c.verdict != "accepts":
            failures.append(f"{name}: p4c accepts, p4sim {c.verdict}: {c.message}")
    return failures


def report(cases: list[Case], gaps: dict[str, str], verbose: bool) -> int:
    ours = [c for c in cases if c.expected_rejects is not None]
    cases = [c for c in cases if c.expected_rejects is None]
    out_of_scope = [c for c in cases if c.out_of_scope]
    judged = [c for c in cases if not c.out_of_scope and c.p4c_rejects]
    p4c_accepts = [c for c in cases if not c.out_of_scope and c.p4c_rejects is False]
    p4c_broken = [c for c in cases if not c.out_of_scope and c.p4c_rejects is None]
    tally = Counter(c.verdict for c in judged)
    print(
        f"p4c error corpus: {len(cases)} programs; {len(out_of_scope)} out of scope "
        f"(include other than core.p4/v1model.p4); {len(p4c_accepts)} p4c accepts; "
        f"{len(p4c_broken)} p4c crashes or times out; {len(judged)} p4c rejects"
    )
    counts = ", ".join(f"{tally[v]} {v}" for v in VERDICTS)
    print(f"p4sim on the {len(judged)} p4c rejects: {counts}")
    failures = []
    for c in judged:
        name = c.path.name
        if c.verdict in (REJECTS, UNSUPPORTED):
            if name in gaps:
                failures.append(f"{name}: listed as a known gap but now rejected: {c.message}")
            elif verbose:
                print(f"  ok {c.path.parent.name}/{name}: {c.message}")
            continue
        if c.verdict in GAP_VERDICTS and name in gaps:
            print(f"  known gap {name}: {gaps[name]}")
            continue
        failures.append(
            f"{c.path.parent.name}/{name}: p4sim {c.verdict}: {c.message or '-'}"
            f"   [p4c: {c.p4c_message}]"
        )
    stale = sorted(set(gaps) - {c.path.name for c in judged})
    failures += [f"{name}: listed as a known gap but p4c does not reject it" for name in stale]
    ours_failed = our_failures(ours)
    print(
        f"ours ({OUR_CORPUS.name}/): {len(ours)} programs, "
        f"{sum(1 for c in ours if c.expected_rejects)} p4c-bm2-ss rejects; "
        f"{len(ours) - len(ours_failed)} with p4sim's verdict the same as p4c's"
    )
    if verbose:
        for c in ours:
            print(f"  {c.path.name}: p4sim {c.verdict}: {c.message or '-'}")
    failures += ours_failed
    for line in failures:
        print("FAIL " + line)
    print(f"{len(failures)} unexpected; {len(gaps)} known gaps listed in p4sim/README.md")
    return 1 if failures else 0


PROG = "python -m p4sim.rejects"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument(
        "--testdata",
        type=Path,
        default=None,
        help="p4c's testdata directory (default: beside p4test on PATH, "
        "else /opt/p4tools/p4c-testdata)",
    )
    p.add_argument(
        "--no-p4c",
        action="store_true",
        help="do not run p4c; take every program of the corpus as rejected",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print p4sim's error per program")
    args = p.parse_args(argv)
    testdata = args.testdata or default_testdata()
    if testdata is None or not (testdata / CORPORA[0][0]).is_dir():
        raise ToolError("p4c's testdata not found (give --testdata DIR)", exit_code=2)
    return run(testdata, use_p4c=not args.no_p4c, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(run_tool(PROG, main))

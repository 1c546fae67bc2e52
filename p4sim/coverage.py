"""Language coverage: which v1model programs of p4c's samples that BMv2's compiler accepts
does p4sim accept too, and what does it refuse in the others.

    python -m p4sim.coverage [--samples DIR] [--json] [-v]

Every `*.p4` of p4c's `testdata/p4_16_samples` (default: the p4tools install) that includes
`v1model.p4` goes through `p4c-bm2-ss` (on PATH) and through p4sim's front end
(`p4sim compile`). The programs p4c-bm2-ss accepts and p4sim refuses are grouped by what
p4sim's error names: the construct of a "... is not supported by p4sim" error, or the
message of any other refusal (a p4sim bug, or a check p4sim makes and p4c does not). For
the programs both accept, p4sim's P4Info is compared with p4c's as the conformance runner
compares them (`p4sim.p4info_compare`).
`--json` prints every program's verdicts to stdout (the table then goes to stderr).
Exit status 0 when the table was made, 2 when p4c-bm2-ss or the samples are missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from dccommon.cliargs import ArgumentParser
from p4sim import p4info
from p4sim.conformance.differential import (
    DEFAULT_SAMPLES,
    _is_v1model,
)
from p4sim.p4info_compare import differences, read_text
from p4sim.rejects import P4C_TIMEOUT_S, Case, judge_p4sim
from p4sim.tool import JOBS, ToolError, add_json_option, report_stream, run, write_json

UNSUPPORTED_SUFFIX = " is not supported by p4sim"


@dataclass
class Program:
    name: str
    p4c_accepts: bool | None = None  # None: p4c crashed or timed out
    p4c_message: str = ""
    p4sim: str = ""  # a p4sim.rejects verdict
    p4sim_message: str = ""
    p4info: list[str] | None = None  # differences from p4c's P4Info; None: not compared

    @property
    def group(self) -> str:
        """What p4sim's refusal names, without positions and program-specific names."""
        message = re.sub(r"'[^']*'", "'...'", re.sub(r"^.*?: error: ", "", self.p4sim_message))
        if message.endswith(UNSUPPORTED_SUFFIX):
            return "not supported: " + message[: -len(UNSUPPORTED_SUFFIX)]
        return f"{self.p4sim}: {message}"


def run_p4c(p4: Path, workdir: str) -> tuple[bool | None, str]:
    """p4c-bm2-ss's verdict: True (compiles), False (an error), None (crash or timeout)."""
    out = os.path.join(workdir, p4.stem)
    argv = ["p4c-bm2-ss", str(p4), "-o", out + ".json", "--p4runtime-files", out + ".p4info.txt"]
    try:
        # the exit status is the verdict, read below
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=P4C_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return None, "p4c timed out"
    text = done.stdout + done.stderr
    errors = [ln for ln in text.splitlines() if re.search(r"\berror\b", ln)]
    first = errors[0] if errors else text.strip()[:200]
    if done.returncode == 0:
        return True, ""
    return (None if "Compiler Bug" in text else False), first


def run_p4sim(p4: Path):
    """p4sim's verdict, its message and, when it accepts, its P4Info."""
    case = Case(p4, "p4sim")
    program = judge_p4sim(case)
    return case.verdict, case.message, p4info.generate(program.model) if program else None


def p4info_differences(ours, p4c_p4info: Path) -> list[str]:
    return differences(ours, read_text(p4c_p4info))


def measure(samples: Path, jobs: int) -> list[Program]:
    paths = [p for p in sorted(samples.glob("*.p4")) if _is_v1model(p)]
    programs = [Program(p.stem) for p in paths]
    infos = []
    with tempfile.TemporaryDirectory() as workdir, ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(run_p4c, p, workdir) for p in paths]
        for path, program in zip(paths, programs):  # p4sim here while p4c runs in the pool
            program.p4sim, program.p4sim_message, info = run_p4sim(path)
            infos.append(info)
        for future, program, info in zip(futures, programs, infos):
            program.p4c_accepts, program.p4c_message = future.result()
            if program.p4c_accepts and info is not None:
                theirs = Path(workdir, program.name + ".p4info.txt")
                program.p4info = p4info_differences(info, theirs)
    return programs


def report(programs: list[Program], verbose: bool, out=sys.stdout) -> None:
    accepted = [p for p in programs if p.p4c_accepts]
    both = [p for p in accepted if p.p4sim == "accepts"]
    refused = [p for p in accepted if p.p4sim != "accepts"]
    groups: dict[str, list[str]] = defaultdict(list)
    for p in refused:
        groups[p.group].append(p.name)
    print("| p4sim refuses, naming | programs | examples |", file=out)
    print("|---|---|---|", file=out)
    for group, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = names if verbose else names[:3]
        more = "" if len(shown) == len(names) else ", ..."
        print(f"| {group} | {len(names)} | {', '.join(shown)}{more} |", file=out)
    differ = [p for p in both if p.p4info]
    for p in differ:
        print(f"P4Info differs from p4c's: {p.name}: {p.p4info[0][:160]}", file=out)
    p4c_refuses = [p for p in programs if p.p4c_accepts is False]
    p4c_broken = [p for p in programs if p.p4c_accepts is None]
    p4sim_only = [p for p in p4c_refuses if p.p4sim == "accepts"]
    print(
        f"v1model samples: {len(programs)}; p4c-bm2-ss accepts {len(accepted)}, rejects "
        f"{len(p4c_refuses)}, crashes or times out on {len(p4c_broken)}",
        file=out,
    )
    rate = 100.0 * len(both) / len(accepted) if accepted else 0.0
    unsupported = sum(1 for p in refused if p.p4sim_message.endswith(UNSUPPORTED_SUFFIX))
    print(
        f"p4sim accepts {len(both)} of the {len(accepted)} ({rate:.1f} %); refuses "
        f"{unsupported} as not supported, {len(refused) - unsupported} otherwise; P4Info "
        f"equal to p4c's for {len(both) - len(differ)} of the {len(both)} it accepts",
        file=out,
    )
    print(
        f"p4sim accepts {len(p4sim_only)} of the {len(p4c_refuses)} p4c-bm2-ss rejects"
        + (": " + ", ".join(p.name for p in p4sim_only) if verbose and p4sim_only else ""),
        file=out,
    )


PROG = "python -m p4sim.coverage"


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument(
        "--samples",
        type=Path,
        default=DEFAULT_SAMPLES,
        help=f"p4c's p4_16_samples directory (default: {DEFAULT_SAMPLES})",
    )
    ap.add_argument(
        "-j", "--jobs", type=JOBS, default=os.cpu_count() or 1, help="p4c-bm2-ss runs at once"
    )
    add_json_option(ap, "every program's verdicts")
    ap.add_argument("-v", "--verbose", action="store_true", help="name every program of a group")
    args = ap.parse_args(argv)
    if not shutil.which("p4c-bm2-ss"):
        raise ToolError("p4c-bm2-ss not found on PATH", exit_code=2)
    if not args.samples.is_dir():
        raise ToolError(f"no samples directory {args.samples}", exit_code=2)
    start = time.monotonic()
    programs = measure(args.samples, args.jobs)
    out = report_stream(args.json)
    report(programs, args.verbose, out)
    print(f"({time.monotonic() - start:.0f} s)", file=out)
    write_json(PROG, [asdict(p) for p in programs], args.json)
    return 0


if __name__ == "__main__":
    sys.exit(run(PROG, main))

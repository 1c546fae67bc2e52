"""Packet differential: every v1model sample on BMv2 and p4sim with packets nobody wrote.

    python -m p4sim.conformance.pktdiff [PATH ...] [--seed 1] [--budget-s 5] [--packets 64]
                                        [--no-entries] [-j 2] [--json] [--keep DIR] [-v]

PATH is a directory (every `*.p4` including `v1model.p4`, with or without an STF) or .p4
files; the default is p4c's samples in the p4tools install. For each program p4c-bm2-ss
compiles and p4sim accepts, packets are made (`p4sim.conformance.packets`: the STF's own,
protocol stacks with random fields, truncated frames, random bytes, and frames crafted from
the program's parser so that each `select` branch is taken) and sent on input ports 0, 1, 2
and 300 as an STF of `packet` lines run by the conformance runner on both targets
(`bmv2.run_stf`, `p4sim.stf.StfRunner`). The frames are compared byte for byte, in order,
on every port: ports 0-15, 64, 128, 255, 300 and 510 through BMv2's pcap files, any other
port by the frames BMv2's log says it transmitted there. The tables are empty first (default
actions); then, unless --no-entries, each table that takes direct entries of exact, lpm,
ternary or range keys gets up to two entries whose keys p4sim's trace saw in those packets
(so they match), with a random action and arguments, and the packets run again.

Seeded (each program's packets from `--seed` and its name), bounded in time per program
(`--budget-s` for the parser search). Left out of the comparison, saying so: packets whose
parse ends in `error.NoMatch` on p4sim (BMv2 departs from the spec there:
docs/conformance.md). At most MAX_FRAMES frames a program. A difference counts as
explained when the program is in KNOWN, reads time, queue depths or random numbers, or
when it goes away with BMv2 taking one frame at a time or with a new switch for every
frame (BMv2's concurrency and its reuse of packet state). Exit status 1 on an unexplained
difference or a p4sim crash (also one p4sim's device caught and logged).
"""

from __future__ import annotations

import logging
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dccommon.cliargs import ArgumentParser, float_range, int_range
from p4sim.conformance import bmv2
from p4sim.conformance.differential import (
    DEFAULT_SAMPLES,
    _construct,
    _crash,
    _is_v1model,
    programs_to_run,
)
from p4sim.conformance.packets import (
    ParserExplorer,
    Tracer,
    protocol_stack,
    random_bytes,
    truncated,
)
from p4sim.conformance.parallel import run_parallel
from p4sim.conformance.stf import Script, StfError, diff_outputs, parse_script, read_script
from p4sim.model import ControlPlaneError
from p4sim.tool import (
    add_json_option,
    add_program_run_options,
    add_seed_option,
    report_stream,
    write_json,
)

INPUT_PORTS = (0, 1, 2, 300)  # port 0 and a high one among them
WATCHED_PORTS = tuple(range(16)) + (64, 128, 255, 300, 510)
# What makes BMv2's frames depend on time or chance: differences there are explained.
NONDETERMINISTIC = re.compile(
    r"\brandom\s*[<(]|_global_timestamp|enq_timestamp|deq_timedelta|enq_qdepth|deq_qdepth"
    r"|HashAlgorithm\.random"
)
ENTRY_KINDS = ("exact", "lpm", "ternary", "range")
# Differences traced to BMv2 or p4c, not p4sim (docs/conformance.md, "Packet differential").
KNOWN = {
    "issue4739.p4": "p4c unrolls a for loop whose body changes the loop variable as if it "
    "did not (p4c PR 4783); p4sim follows the spec",
    "loop-3-clause-tricky2.p4": "p4c unrolls a for loop whose variable wraps around with "
    "too few iterations (p4c issue 4965); p4sim follows the spec",
}
MAX_STF_PACKETS = 16
# simple_switch's egress queue holds 64 frames a port and drops the next one when its
# ingress thread runs ahead of egress (as it does on a loaded machine): fewer in all.
MAX_FRAMES = 60


@dataclass
class PktResult:
    name: str
    status: str = (
        ""  # same | DIFFER | explained | p4c-rejects | not-supported | rejects | error | CRASH
    )
    detail: str = ""
    packets: int = 0
    nomatch_left_out: int = 0
    entries: int = 0  # table entries in the second round
    labels: int = 0  # non-default labels of the parser's selects
    labels_taken: int = 0  # of them, taken by some packet
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0


# -- packets ------------------------------------------------------------------------------


def make_packets(program, p4: Path, rng: random.Random, budget_s: float, most: int):
    """(packets, explorer): the STF's own first, then stacks, the parser's branches, cut
    frames and random bytes, at most MAX_FRAMES (stacks give way); the explorer has seen
    them all (branches, table keys)."""
    explorer = ParserExplorer(program, rng)
    own: list[bytes] = []
    stf = p4.with_suffix(".stf")
    if stf.exists():
        try:
            own = [c.data for c in read_script(stf).commands if c.name == "packet"]
        except StfError:
            pass
    own = own[:MAX_STF_PACKETS]
    stacks = [protocol_stack(rng) for _ in range(most // 3)]
    for f in own + stacks:
        explorer.add(f)
    rest = explorer.explore(budget_s, most // 3)
    rest += [truncated(rng) for _ in range(most // 8)]
    rest += [random_bytes(rng) for _ in range(most // 12)]
    rest = rest[: MAX_FRAMES - len(own)]
    return own + stacks[: max(0, MAX_FRAMES - len(own) - len(rest))] + rest, explorer


def split_nomatch(program, frames: list[bytes]) -> tuple[list[bytes], int]:
    """The frames whose parse on p4sim does not end in error.NoMatch, and how many did."""
    tracer = Tracer(program)
    kept = [f for f in frames if tracer.walk(0, f).error != "NoMatch"]
    return kept, len(frames) - len(kept)


# -- table entries ------------------------------------------------------------------------


def entry_lines(program, keys_seen: dict[str, list[list[int]]], rng: random.Random) -> list[str]:
    """Up to two `add` lines per table, with keys p4sim looked up for the packets."""
    actions = {a.name: a for a in program.model.actions}
    lines = []
    for table in program.model.tables:
        usable = [a for a in table.actions if a.scope != "DEFAULT_ONLY" and a.name in actions]
        # a hit on NoAction looks like a miss: another action shows the entry matched
        usable = [a for a in usable if a.name != "NoAction"] or usable
        seen = keys_seen.get(table.name, [])
        if (
            not usable
            or not seen
            or not table.keys
            or table.implementation
            or table.const_entries is not None
            or any(k.match_kind not in ENTRY_KINDS or k.is_error for k in table.keys)
            or not all(re.fullmatch(r"[\w.$\[\]]+", k.name) for k in table.keys)
        ):
            continue
        for n, values in enumerate(seen[:2]):
            keys = " ".join(_key_text(k, v, rng) for k, v in zip(table.keys, values))
            action = actions[rng.choice(usable).name]
            args = ", ".join(f"{p.name}:{_arg(p, rng)}" for p in action.params)
            priority = f" {10 + n}" if table.needs_priority else ""
            lines.append(f"add {table.name}{priority} {keys} {action.name}({args})")
    return lines


def _key_text(key, value: int, rng: random.Random) -> str:
    width = key.bitwidth
    if key.match_kind == "lpm":
        prefix = rng.randint(0, width)
        mask = ((1 << prefix) - 1) << (width - prefix)
        return f"{key.name}:{value & mask}/{prefix}"
    if key.match_kind == "ternary":
        mask = rng.choice(((1 << width) - 1, rng.getrandbits(width)))
        return f"{key.name}:{hex(value & mask)}&&&{hex(mask)}"
    if key.match_kind == "range":
        return f"{key.name}:{max(0, value - 1)}..{value}"
    return f"{key.name}:{value}"


def _arg(param, rng: random.Random) -> int:
    if param.bitwidth == 9:  # a port, most likely: one that is watched
        return rng.choice(WATCHED_PORTS[:8])
    return rng.getrandbits(param.bitwidth) if param.bitwidth else 0


# -- one program on both targets -----------------------------------------------------------


class P4simInternalError(Exception):
    """p4sim's device caught an exception of its own while running a frame."""


class _Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        self.messages.append(f"{record.getMessage()}: {exc!r}" if exc else record.getMessage())


def run_p4sim(program, script: Script) -> dict[int, list[bytes]]:
    """p4sim's frames on every port; P4simInternalError when the device hit a bug of its
    own (it logs it and drops the frame, which would otherwise read as a difference)."""
    from p4sim.stf import StfRunner

    errors = _Errors()
    logger = logging.getLogger("p4sim")
    logger.addHandler(errors)
    try:
        runner = StfRunner(program)
        for cmd in script.commands:
            runner.command(cmd)
    finally:
        logger.removeHandler(errors)
    if errors.messages:
        raise P4simInternalError(errors.messages[0])
    return runner.received


def compare(json_path: Path, program, script: Script, workdir: Path) -> list[str]:
    """Where BMv2's and p4sim's frames differ, on every port (see the module doc)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "test.stf").write_text("\n".join(c.text for c in script.commands) + "\n")
    bmv2_out = bmv2.run_stf(json_path, script, workdir)
    ours = run_p4sim(program, script)
    diffs = diff_outputs(list(WATCHED_PORTS), bmv2_out, ours)
    others = bmv2.transmitted(workdir)
    for port in sorted(set(ours) | set(others)):
        if port not in WATCHED_PORTS and others.get(port, 0) != len(ours.get(port, [])):
            diffs.append(
                f"port {port} (unwatched): BMv2 sent {others.get(port, 0)} frame(s), "
                f"p4sim {len(ours.get(port, []))}"
            )
    return diffs


def diff_program(
    p4: Path, seed: int, budget_s: float, most: int, entries: bool, keep: Path | None = None
) -> PktResult:
    start = time.monotonic()
    result = PktResult(p4.name)
    try:
        _diff_program(p4, seed, budget_s, most, entries, keep, result)
    finally:
        result.seconds = time.monotonic() - start
    return result


def _diff_program(p4, seed, budget_s, most, entries, keep, result) -> None:
    from p4sim.errors import P4Error
    from p4sim.frontend import compile_file

    rng = random.Random(f"{seed}:{p4.name}")
    with tempfile.TemporaryDirectory(prefix="pktdiff-") as tmp:
        work = keep / p4.stem if keep else Path(tmp)
        compiled = bmv2.compile_p4c(p4, work / "p4c")
        if not compiled.ok:
            result.status = "p4c-rejects"
            return
        try:
            program = compile_file(p4, (str(p4.parent),))
        except P4Error as e:
            text = str(e)
            result.status = "not-supported" if "not supported by p4sim" in text else "rejects"
            result.detail = _construct(text)
            return
        except Exception as e:  # noqa: BLE001 - a p4sim bug is reported; the others run on
            result.status, result.detail = "CRASH", _crash(e)
            return
        try:
            _run_rounds(p4, program, compiled.json_path, work, rng, result, budget_s, most, entries)
        except (bmv2.Bmv2Error, StfError, OSError) as e:
            result.status, result.detail = "error", str(e).splitlines()[0][:200]
        except P4simInternalError as e:
            result.status, result.detail = "CRASH", str(e)[:300]
        except Exception as e:  # noqa: BLE001 - a p4sim bug, reported as such
            result.status, result.detail = "CRASH", _crash(e)


def _run_rounds(p4, program, json_path, work, rng, result, budget_s, most, entries) -> None:
    frames, explorer = make_packets(program, p4, rng, budget_s, most)
    frames, result.nomatch_left_out = split_nomatch(program, frames)
    result.packets = len(frames)
    result.labels = len(explorer.cases)
    result.labels_taken = sum((c.state, c.target) in explorer.covered for c in explorer.cases)
    adds: list[str] = []
    result.differences = compare(json_path, program, _script([], frames), work / "empty")
    if entries and not result.differences:
        adds = entry_lines(program, explorer.keys, rng)
    if adds:
        try:
            diffs = compare(json_path, program, _script(adds, frames), work / "entries")
        except (bmv2.Bmv2Error, StfError, ControlPlaneError) as e:  # names the STF cannot carry
            result.detail = f"entries not compared: {str(e).splitlines()[0][:160]}"
            adds = []
        else:
            result.entries = len(adds)
            result.differences = [f"with entries: {d}" for d in diffs]
    if not result.differences:
        result.status = "same"
        return
    result.detail = explanation(
        p4.name, p4.read_text(errors="replace"), json_path, program, adds, frames, work
    )
    result.status = "explained" if result.detail else "DIFFER"


def explanation(name, text, json_path, program, adds, frames, work) -> str:
    """Why BMv2's and p4sim's frames differ when it is not p4sim's fault, or "": the
    program is in KNOWN, reads time or chance, or the difference goes away with BMv2 taking
    one frame at a time or with a new switch for every frame."""
    if name in KNOWN:
        return KNOWN[name]
    if NONDETERMINISTIC.search(text):
        return "the program reads time, queue depths or random numbers"
    if not compare(json_path, program, _script(adds, frames, serial=True), work / "serial"):
        return (
            "identical when BMv2 takes one packet at a time: with several in flight its "
            "threads decide (ingress of a packet before egress of the one before, or header "
            "fields another packet left)"
        )
    if all(
        not compare(json_path, program, _script(adds, [frame]), work / f"fresh{i}")
        for i, frame in enumerate(frames)
    ):
        return (
            "identical with a new switch for every packet: BMv2 read header fields an "
            "earlier packet left (it reuses packet state without zeroing header fields)"
        )
    return ""


def _script(adds: list[str], frames: list[bytes], serial: bool = False) -> Script:
    """The entries, then the frames on the input ports in turn; `serial`: all on port 0,
    each taken by BMv2 before the next is sent (bmv2.run_stf's `wait`)."""
    lines = adds + [f"expect {port}" for port in WATCHED_PORTS]  # any frames: compared
    for i, frame in enumerate(frames):
        port = 0 if serial else INPUT_PORTS[i % len(INPUT_PORTS)]
        lines.append(f"packet {port} {frame.hex()}")
        if serial:
            lines.append("wait")
    return parse_script("\n".join(lines))


# -- the run ------------------------------------------------------------------------------


def find_samples(paths: list[Path]) -> list[Path]:
    programs = []
    for path in paths:
        if path.is_dir():
            programs += [p for p in sorted(path.glob("*.p4")) if _is_v1model(p)]
        else:
            programs.append(path)
    return programs


def run_all(programs, seed, budget_s, most, entries, jobs, keep):
    work = [(p, seed, budget_s, most, entries, keep) for p in programs]
    return run_parallel(diff_program, work, jobs)


FAILING = ("DIFFER", "CRASH")


def print_report(results, width: int, verbose: bool, out) -> list[PktResult]:
    done = []
    print(f"{'program':<{width}}  {'result':<13}  packets  entries  seconds", file=out)
    for n, r in enumerate(results, 1):
        done.append(r)
        print(
            f"{r.name:<{width}}  {r.status:<13}  {r.packets:7d}  {r.entries:7d}  {r.seconds:7.1f}"
            f"  [{n}]",
            file=out,
        )
        if r.status in FAILING or r.status in ("error", "explained") or verbose:
            for line in ([r.detail] if r.detail else []) + r.differences[:4]:
                print(f"    {line[:300]}", file=out)
        out.flush()
    return done


def print_summary(results: list[PktResult], out) -> None:
    counts = Counter(r.status for r in results)
    compared = [r for r in results if r.packets]
    print(file=out)
    print(f"programs tried:    {len(results)}", file=out)
    for status, n in counts.most_common():
        print(f"  {n:4d}  {status}", file=out)
    if compared:
        packets = sum(r.packets for r in compared)
        print(
            f"packets per compared program: {packets / len(compared):.1f} on average "
            f"({packets} in all), NoMatch packets left out: "
            f"{sum(r.nomatch_left_out for r in compared)}; with entries: "
            f"{sum(1 for r in compared if r.entries)} programs",
            file=out,
        )
        print(
            f"parser select labels taken: {sum(r.labels_taken for r in compared)} of "
            f"{sum(r.labels for r in compared)}",
            file=out,
        )
    refusals = Counter(r.detail for r in results if r.status == "not-supported")
    for construct, n in refusals.most_common(8):
        print(f"  not supported, {n:3d} program(s): {construct}", file=out)


PROG = "python -m p4sim.conformance.pktdiff"


def main(argv=None) -> int:
    ap = ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=f"directories of v1model programs or .p4 files (default: {DEFAULT_SAMPLES})",
    )
    add_seed_option(ap, "every program's packets")
    ap.add_argument(
        "--budget-s",
        type=float_range(0, 3600, "budget"),
        default=5.0,
        help="seconds of parser-guided search per program (default: 5)",
    )
    ap.add_argument(
        "--packets",
        type=int_range(1, 100_000, "packets"),
        default=64,
        help=f"generated packets per program, besides the STF's (default: 64; at most {MAX_FRAMES} in all)",
    )
    ap.add_argument("--no-entries", action="store_true", help="only the round with empty tables")
    add_program_run_options(ap, "p4c's outputs and BMv2's files")
    add_json_option(ap, "every result")
    args = ap.parse_args(argv)
    programs = programs_to_run(args.paths, find_samples, "v1model .p4 program")
    start = time.monotonic()
    out = report_stream(args.json)
    width = max(len(p.name) for p in programs)
    results = print_report(
        run_all(
            programs,
            args.seed,
            args.budget_s,
            args.packets,
            not args.no_entries,
            args.jobs,
            args.keep,
        ),
        width,
        args.verbose,
        out,
    )
    print_summary(results, out)
    print(f"time: {time.monotonic() - start:.0f} s with {args.jobs} job(s)", file=out)
    write_json(PROG, [asdict(r) for r in results], args.json)
    failing = [r.name for r in results if r.status in FAILING]
    if failing:
        print(f"FAIL: p4sim differs from BMv2 or crashes: {', '.join(failing)}", file=out)
    return 1 if failing else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    from p4sim.tool import run

    sys.exit(run(PROG, main))

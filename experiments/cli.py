"""dcexp: run DC experiments, report on them, clean up after dead runs.

dcexp run SCENARIO.yaml [--reps N] [--quick|--paper] [--scale K]
          [--target p4sim|bmv2|remote:FILE.yaml]
          [--engine native|interp] [--link linkem|netem] [--io afpacket|afxdp] [--out DIR]
          [--executor local|ray [--address auto|HOST:PORT|ray://HOST:PORT]]
dcexp campaign DIR [--quick|--paper|--full] [--reps N] [--out OUT] [--engine native|interp] [--executor ..]
dcexp report DIR [--paper]
dcexp validate SCENARIO.yaml... [--quick|--paper] [--scale K]
dcexp clean
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from dccommon.cliargs import (
    ArgumentParser,
    HelpFormatter,
    InputFileError,
    float_range,
    input_dir,
    int_range,
    log_to_stderr,
    make_output_dir,
    printable,
    shown,
)
from experiments.analysis import RunFileError
from experiments.run import cpu
from experiments.run.scale import MAX_SCALE
from experiments.run.scenario import MAX_DURATION_S, MAX_REPETITIONS, ScenarioError, load
from hostagents.agent_cmd import IO_PATHS

PROG = "dcexp"
log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Dual Connectivity testbed: run scenarios, analyse and plot their results.",
        formatter_class=HelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    _add_testbed_options(_add_run_parser(sub))
    _add_testbed_options(_add_campaign_parser(sub))
    _add_report_parser(sub)
    _add_validate_parser(sub)
    sub.add_parser("clean", help="remove namespaces and DPDK dirs of dead dcexp runs")
    return p


def _add_run_parser(sub) -> argparse.ArgumentParser:
    run = sub.add_parser(
        "run",
        help="run a scenario (resumes an interrupted one in --out)",
        formatter_class=HelpFormatter,
    )
    run.add_argument("scenario", type=Path, help="scenario YAML file")
    run.add_argument(
        "--reps",
        type=int_range(1, MAX_REPETITIONS, "repetitions"),
        metavar="N",
        help=f"repetitions per point, 1..{MAX_REPETITIONS} (overrides the file)",
    )
    run.add_argument(
        "--quick",
        action="store_true",
        help="apply the scenario's `quick:` overrides (smaller downloads, fewer points)",
    )
    run.add_argument(
        "--paper",
        action="store_true",
        help="apply the scenario's `paper:` overrides (the paper's sizes, stacks and points)",
    )
    _add_scale_option(run)
    run.add_argument(
        "--out", type=Path, metavar="DIR", help="output directory (default results/<name>)"
    )
    run.add_argument(
        "--timeout-s",
        type=float_range(1, MAX_DURATION_S, "timeout"),
        metavar="S",
        help=f"per-run limit in seconds, 1..{MAX_DURATION_S} (default from the flows)",
    )
    run.add_argument(
        "--variant",
        action="append",
        metavar="LABEL",
        help="run only this protocol/CC variant (e.g. ngtcp2-cubic); repeatable",
    )
    run.add_argument(
        "--point",
        action="append",
        metavar="VALUE",
        help="run only this sweep point, as the scenario's sweep.values write it (e.g. 5:1, "
        "0.01); repeatable",
    )
    _add_dry_run_option(run)
    return run


def _add_dry_run_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n",
        "--dry-run",
        action="store_true",
        help="list the runs this command would start (those not yet saved in --out) with "
        "a rough duration, and start none",
    )


def _add_scale_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scale",
        type=float_range(0, MAX_SCALE, "--scale", low_open=True),
        default=1.0,
        metavar="K",
        help="run at proportionally scaled rates, after the profile: every leg rate / K, "
        "every one-way delay, t-Reordering, flow duration and event time x K (the same BDP "
        "and queues in packets); 1: as written (experiments/docs/scenarios.md)",
    )


def _add_campaign_parser(sub) -> argparse.ArgumentParser:
    camp = sub.add_parser(
        "campaign",
        help="run every scenario file of a directory (experiments/paper/: the paper's studies)",
        formatter_class=HelpFormatter,
    )
    camp.add_argument("dir", type=input_dir, help="directory of scenario files, run in name order")
    size = camp.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="each file's `quick:` overrides")
    size.add_argument(
        "--paper", action="store_true", help="each file's `paper:` overrides (the paper's sizes)"
    )
    size.add_argument(
        "--full", action="store_true", help="the files as written (the default; 10 repetitions)"
    )
    camp.add_argument(
        "--reps",
        type=int_range(1, MAX_REPETITIONS, "repetitions"),
        metavar="N",
        help=f"repetitions per point, 1..{MAX_REPETITIONS} (overrides the files)",
    )
    camp.add_argument(
        "--out", type=Path, metavar="DIR", help="output directory (default results/<dir name>)"
    )
    _add_dry_run_option(camp)
    return camp


def _add_testbed_options(parser: argparse.ArgumentParser) -> None:
    """The testbed's options, the same for one study and for a campaign of them."""
    parser.add_argument(
        "--target",
        type=_target,
        default="p4sim",  # argparse passes a string default through _target
        metavar="p4sim|bmv2|remote:FILE.yaml",
        help="the switch: p4sim or bmv2, started per run, or remote:FILE.yaml, a "
        "P4Runtime switch that runs on its own",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: one run after another on this host; ray: each run a Ray task on a "
        "worker offering the resource dc_testbed (one run per host at a time)",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="with --executor ray: the cluster, as ray.init takes it: auto (this host is "
        "a node of it; the default), HEAD:PORT, or ray://HEAD:10001 (Ray Client)",
    )
    parser.add_argument(
        "--engine",
        choices=("native", "interp"),
        default=None,
        help="p4sim's engine (--target p4sim): the splitter compiled to C, or the interpreter "
        "(default: native for the v1model splitter, interp for the TNA one, which the native "
        "engine would run on the interpreter anyway, more slowly)",
    )
    parser.add_argument(
        "--link",
        choices=("linkem", "netem"),
        default="linkem",
        help="link emulator on the legs",
    )
    parser.add_argument(
        "--io",
        choices=IO_PATHS,
        default="afpacket",
        help="how the testbed's own parts read and write their veths: afpacket (TPACKET "
        "rings) or afxdp (AF_XDP sockets, XDP in veth's driver): p4sim's native switch, "
        "linkem and the pdcp-agent's legs (the interpreter, BMv2 and netem stay on "
        "AF_PACKET)",
    )
    parser.add_argument(
        "--pin",
        choices=cpu.PIN_LAYOUTS,
        default="split",
        help="CPU pinning: split = network (switch, legs, agent) on CPU 0, flow endpoints "
        "on the others; switch = the switch alone on CPU 0; chain = the chain cut in two "
        "(servers, switch, leg A on CPU 0; leg B, agent, clients on the others); none = "
        "the scheduler decides",
    )


def _add_report_parser(sub) -> None:
    rep = sub.add_parser("report", help="analyse saved runs: figures, summary.md, table")
    rep.add_argument(
        "dir",
        type=input_dir,
        help="a dcexp run's --out directory; a folder of them: their headline table across "
        "transports (DIR/headline.md); a campaign's with --paper",
    )
    rep.add_argument(
        "--envelope-point",
        metavar="VALUE",
        help="the swept value whose performance envelopes are drawn against TCP "
        "(default: the first swept value)",
    )
    rep.add_argument(
        "--paper",
        action="store_true",
        help="DIR is a campaign of experiments/paper/: write DIR/reproduction.md (+ PDF), "
        "every study beside what Hasselquist et al. report",
    )


def _add_validate_parser(sub) -> None:
    val = sub.add_parser("validate", help="check scenario files without running anything")
    val.add_argument("scenarios", type=Path, nargs="+", help="scenario YAML files")
    val.add_argument("--quick", action="store_true", help="check with the `quick:` overrides")
    val.add_argument("--paper", action="store_true", help="check with the `paper:` overrides")
    _add_scale_option(val)


def _target(value: str):
    from experiments.run.parts import TestbedError
    from experiments.run.switches import parse_target

    try:
        return parse_target(value)
    except TestbedError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _options(args, **extra):
    from experiments.run.runner import RunOptions

    target, switch = args.target
    return RunOptions(
        target=target,
        engine=args.engine,
        link_kind=args.link,
        io=args.io,
        pin=args.pin,
        switch=switch,
        **extra,
    )


def _executor(args):
    """LocalExecutor, or a RayExecutor (raises ExecutorError when Ray cannot be used)."""
    if args.executor == "local":
        if args.address:
            raise _UsageError("--address is for --executor ray")
        from experiments.run.runner import LocalExecutor

        return LocalExecutor()
    from experiments.run.rayexec import RayExecutor

    return RayExecutor(args.address or "auto")


class _UsageError(Exception):
    """Bad input or a bad combination of options: exit 2 with the message."""


class _Failure(Exception):
    """The command could not do its job: exit 1 with the message."""


def _only_points(runs: list, wanted: list[str]) -> list:
    """The runs at the sweep points named on the command line (`--point`): a number matches
    by value (0.01 and 1e-2 alike), anything else by its text."""

    def same(point, text: str) -> bool:
        if isinstance(point, (int, float)) and not isinstance(point, bool):
            try:
                return float(text) == point
            except ValueError:
                return False
        return str(point) == text

    points = list(dict.fromkeys(r.point for r in runs))
    if points == [None]:
        raise _UsageError("--point: this scenario has no sweep (no sweep.values to pick from)")
    unknown = [t for t in wanted if not any(same(p, t) for p in points)]
    if unknown:
        raise _UsageError(
            f"--point {', '.join(shown(t) for t in unknown)}: not a sweep value of this "
            f"scenario; its values: {', '.join(str(p) for p in points)}"
        )
    return [r for r in runs if any(same(r.point, t) for t in wanted)]


def cmd_run(args) -> int:
    from experiments.run.runner import Interrupted, run_scenario
    from experiments.run.testbed import TestbedError

    scenario = load(
        args.scenario, quick=args.quick, reps=args.reps, paper=args.paper, scale=args.scale
    )
    if args.variant:
        labels = list(dict.fromkeys(r.variant for r in scenario.runs))
        unknown = [v for v in args.variant if v not in labels]
        if unknown:
            raise _UsageError(
                f"--variant {', '.join(shown(v) for v in unknown)}: not in this scenario; its "
                f"variants: {', '.join(labels)}"
            )
        scenario.runs = [r for r in scenario.runs if r.variant in args.variant]
    if args.point:
        scenario.runs = _only_points(scenario.runs, args.point)
    out = args.out or Path("results") / scenario.name
    if args.dry_run:
        return _list_pending([(scenario, out)])
    executor = _executor(args)  # before --out is made: Ray may be missing
    _make_out(out, "scenario")
    log.info("%s: %d runs -> %s", scenario.name, len(scenario.runs), out)
    try:
        summary = run_scenario(
            scenario, out, _options(args, timeout_s=args.timeout_s), executor=executor
        )
    except TestbedError as exc:
        raise _Failure(str(exc)) from None
    except Interrupted:
        return 130
    finally:
        executor.close()
        if (out / "runs").is_dir():  # a study refused by its checks leaves nothing
            _record_study_command(out, args)
    log.info(
        "%d ok, %d failed, %d already saved; results in %s",
        summary["ok"],
        summary["failed"],
        summary["skipped"],
        out,
    )
    return 0 if summary["failed"] == 0 else 1


def _list_pending(studies: list) -> int:
    """`dcexp run|campaign --dry-run`: the runs a resume of each (scenario, its out
    directory) would start, one per line (STUDY/RUN for a campaign), and on stderr their
    number and rough total (the progress bar's estimate); nothing is made or started."""
    from experiments.run.progress import format_duration
    from experiments.run.runner import expected_s, pending_runs

    total_todo = total_runs = 0
    total_s = 0.0
    for scenario, out in studies:
        todo = pending_runs(scenario, out)
        for run in todo:
            print(f"{scenario.name}/{run.run_id}" if len(studies) > 1 else run.run_id)
        seconds = sum(expected_s(r) for r in todo)
        print(
            f"{scenario.name}: {len(todo)} of {len(scenario.runs)} runs to start -> {out} "
            f"(about {format_duration(seconds)})",
            file=sys.stderr,
        )
        total_todo += len(todo)
        total_runs += len(scenario.runs)
        total_s += seconds
    print(
        f"{total_todo} of {total_runs} runs to start, about {format_duration(total_s)}; "
        "--dry-run started none",
        file=sys.stderr,
    )
    return 0


def _record_study_command(out: Path, args) -> None:
    """OUT/study.json: the `dcexp run` commands that filled OUT (a resumed study may have
    more than one) and the profile, so a report says how each study was made."""
    record_file = out / "study.json"
    try:
        record = json.loads(record_file.read_text())
    except (OSError, ValueError):
        record = {}
    command = " ".join(["dcexp"] + sys.argv[1:])
    commands = record.get("commands", [])
    record["commands"] = commands + [command] * (command not in commands)
    record["profile"] = "quick" if args.quick else "paper" if args.paper else "full"
    record_file.write_text(json.dumps(record, indent=1))


def _make_out(out: Path, what: str) -> None:
    """--out made before the first run, or a _UsageError naming why it cannot be."""
    try:
        make_output_dir(out)
    except InputFileError as exc:
        hint = ""
        if exc.reason == "exists and is not a directory":
            hint = f"; give a new directory or one that holds an earlier run of this {what}"
            hint += " (to resume it)"
        raise _UsageError(f"--out {exc}{hint}") from None


def cmd_campaign(args) -> int:
    from experiments.run.campaign import load_campaign, run_campaign
    from experiments.run.runner import Interrupted
    from experiments.run.testbed import TestbedError

    if not args.dir.is_dir():
        raise _UsageError(f"{printable(args.dir)} is not a directory of scenario files")
    studies = load_campaign(args.dir, quick=args.quick, reps=args.reps, paper=args.paper)
    out = args.out or Path("results") / args.dir.resolve().name
    if args.dry_run:
        return _list_pending([(study, out / study.name) for study in studies])
    _make_out(out, "campaign")
    meta = {
        "command": " ".join(["dcexp"] + sys.argv[1:]),
        "quick": args.quick,
        "profile": "quick" if args.quick else "paper" if args.paper else "full",
        "pin": args.pin,
        "executor": args.executor,
    }
    executor = _executor(args)
    try:
        summary = run_campaign(studies, out, _options(args), meta=meta, executor=executor)
    except TestbedError as exc:
        raise _Failure(str(exc)) from None
    except Interrupted:
        return 130
    finally:
        executor.close()
    not_run = summary["studies_failed"]
    log.info(
        "campaign: %d ok, %d failed, %d already saved%s; results in %s; next: dcexp report "
        "--paper %s",
        summary["ok"],
        summary["failed"],
        summary["skipped"],
        f"; studies not run: {', '.join(not_run)}" if not_run else "",
        out,
        out,
    )
    return 0 if summary["failed"] == 0 and not not_run else 1


def cmd_report(args) -> int:
    try:
        return _report(args)
    except RunFileError as exc:
        raise _Failure(str(exc)) from None


def _report(args) -> int:
    if args.paper:
        from experiments.analysis.paperdata import has_results
        from experiments.analysis.reproduction import write_reproduction

        if not args.dir.is_dir() or not has_results(args.dir):
            raise _Failure(
                f"{printable(args.dir)} holds no studies (expected "
                f"{printable(args.dir)}/<study>/runs/, from dcexp campaign, or "
                "<study>/scenario.yaml beside a runs.csv)"
            )
        path = write_reproduction(args.dir)
        print(f"reproduction report: {path}")
        return 0
    if not (args.dir / "runs").is_dir():
        if args.dir.is_dir() and any((d / "runs").is_dir() for d in args.dir.iterdir()):
            from experiments.analysis import headline  # a folder of studies: their headline

            text, path = headline.write(args.dir)
            print(text + f"\nheadline: {path}")
            return 0
        raise _Failure(
            f"{printable(args.dir)} holds no runs (expected "
            f"{printable(args.dir)}/runs/*/manifest.json, or study folders each with runs/)"
        )
    from experiments.analysis.report import report  # pandas and matplotlib: seconds to import

    try:
        text, figures = report(args.dir, envelope_point=args.envelope_point)
    except RunFileError:
        raise
    except ValueError as exc:  # a point the study did not sweep
        raise _UsageError(str(exc)) from None
    print(text)
    print("figures:")
    for path in figures:
        print(f"  {path}")
    return 0


def cmd_validate(args) -> int:
    from experiments.flows import MB, run_payload_bytes

    for path in args.scenarios:
        sc = load(path, quick=args.quick, paper=args.paper, scale=args.scale)
        payload = max(run_payload_bytes(r.config["flows"]) for r in sc.runs)
        print(f"{path}: ok ({len(sc.runs)} runs, {payload / MB:,.0f} MB of payload files per run)")
    return 0


def cmd_clean(_args) -> int:
    """Namespaces named dx#### whose owner (recorded in /run/dcexp/<prefix>.pid) is gone."""
    from experiments.run.testbed import RUN_DIR, remove_leftovers

    if os.geteuid() != 0:
        raise _Failure("clean needs root")
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=True)
    names = [n["name"] for n in json.loads(out.stdout or "[]")]
    prefixes = {n[:6] for n in names if len(n) > 6 and n.startswith("dx") and n[2:6].isdigit()}
    prefixes |= {p.name[:6] for p in RUN_DIR.glob("dx*.pid")} if RUN_DIR.exists() else set()
    removed = 0
    for prefix in sorted(prefixes):
        if _owner_alive(RUN_DIR / f"{prefix}.pid"):
            print(f"keeping {prefix}*: its run is alive")
            continue
        for line in remove_leftovers(prefix, names):
            print(line)
            removed += line.startswith("removed namespace")
    print(f"dcexp clean: {removed} namespaces removed")
    return 0


def _owner_alive(pidfile: Path) -> bool:
    """Whether the dcexp that wrote `pidfile` still runs. A zombie (killed, not yet reaped
    by its parent) answers kill(pid, 0) but will never tear its run down: it is dead."""
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat[stat.rindex(")") + 2 :].split()[0]  # after "pid (comm) "; comm may hold ") "
    return state not in ("Z", "X")  # zombie, dead


COMMANDS = {
    "run": cmd_run,
    "campaign": cmd_campaign,
    "report": cmd_report,
    "validate": cmd_validate,
    "clean": cmd_clean,
}


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    log_to_stderr(PROG, "experiments")
    try:
        return COMMANDS[args.cmd](args)
    except (ScenarioError, _UsageError) as exc:
        return _error(exc, 2)
    except _Failure as exc:
        return _error(exc, 1)
    except KeyboardInterrupt:  # Ctrl-C outside a run (the runner tears its run down itself)
        return 130
    except BrokenPipeError:
        # The reader left (`dcexp validate ... | head`): stop quietly, as other Unix tools do.
        # Point stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        from experiments.run.rayexec import ExecutorError  # Ray itself is imported only on use

        if not isinstance(exc, ExecutorError):
            raise
        return _error(exc, 2)


def _error(exc: Exception, code: int) -> int:
    """The command's one error line, `dcexp: error: message`, and its exit code."""
    print(f"{PROG}: error: {exc}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())

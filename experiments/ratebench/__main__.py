"""`make bench-testbed`: python -m experiments.ratebench [--rates 20,100] [--duration-s 12]."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from dccommon.cliargs import (
    ArgumentParser,
    InputFileError,
    float_range,
    input_file,
    int_range,
    make_output_dir,
    number_list,
    once_each,
    parse_int,
    printable,
    short_path,
)
from experiments.ratebench import idle, rawpath, report, sweep
from experiments.run.cpu import PIN_LAYOUTS
from experiments.run.links import AUTO_SLACK
from experiments.run.parts import TestbedError
from experiments.run.scenario import MAX_T_REORDERING_MS, from_dict
from hostagents.agent_cmd import IO_PATHS

IDLE_S = 5.0
MAX_SLACK_US = 1000  # linkem's --departure-slack-us range
MAX_REPS = 20


def _choice_list(allowed: tuple, cast):
    def parse(text: str) -> list:
        try:
            values = [cast(v) for v in text.split(",") if v]
        except ValueError:
            values = []
        if not values or any(v not in allowed for v in values):
            raise argparse.ArgumentTypeError(
                f"{text!r}: give a comma-separated subset of {','.join(map(str, allowed))}"
            )
        return once_each(text, values)

    return parse


def _slack_list(text: str) -> list[int | str]:
    try:
        values = [v if v == AUTO_SLACK else parse_int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or any(v != AUTO_SLACK and not 0 <= v <= MAX_SLACK_US for v in values):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give comma-separated integers 0 to {MAX_SLACK_US} (µs) or {AUTO_SLACK}"
        )
    return once_each(text, values)


def _t_reordering_list(text: str) -> list[float]:
    try:
        values = number_list(text)
    except ValueError:
        values = []
    if not values or any(not 0 <= v <= MAX_T_REORDERING_MS for v in values):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give comma-separated numbers 0 to {MAX_T_REORDERING_MS} (ms)"
        )
    return once_each(text, values)


def _sweep_dir(out: Path, slack: int | str, io: str, t_reordering_ms: float) -> Path:
    """Where one sweep's runs go: OUT for the defaults, OUT/slack-Nus, OUT/io-afxdp,
    OUT/treord-Nms below."""
    where = out if slack == AUTO_SLACK else out / f"slack-{slack}us"
    where = where if io == sweep.DEFAULT_IO else where / f"io-{io}"
    return (
        where
        if t_reordering_ms == sweep.T_REORDERING_MS
        else where / f"treord-{t_reordering_ms:g}ms"
    )


def replot(csv_path: Path) -> int:
    """--replot: the figure of a saved sweep, drawn by today's plot from its bench.csv."""
    try:
        points = report.read_csv(csv_path)
    except (KeyError, ValueError, UnicodeDecodeError, csv.Error) as exc:
        print(
            f"bench-testbed: --replot {short_path(csv_path)}: not a bench.csv "
            f"({type(exc).__name__}: {printable(exc)}); its columns are "
            f"{','.join(report.CSV_COLUMNS)}",
            file=sys.stderr,
        )
        return 1
    if not points:
        print(f"bench-testbed: --replot {short_path(csv_path)}: no points in it", file=sys.stderr)
        return 1
    png = csv_path.with_suffix(".png")
    report.plot(points, None, png)
    print(f"wrote {png}")
    return 0


def raw_floors(points, raw: rawpath.RawLimit, duration_s: float, out: Path) -> list:
    """The do-nothing hop paced to each frame rate the CPU goal's forwarders saw (the switch
    and the agent every frame, each linkem about half): the floor their cost is read against."""
    group = report.goal_group(points)
    if group is None:
        return []
    rates: list[float] = []  # one floor for rates within a quarter of each other
    for r in sorted(report.forwarder_frame_rates(group).values()):
        if not rates or r > rates[-1] * 1.25:
            rates.append(r)
    return [
        rawpath.at_frame_rate(r, raw, duration_s, out / f"raw-{r / 1e3:.0f}kfps") for r in rates
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m experiments.ratebench",
        description="The DC testbed at 5G NR leg rates: goodput and CPU per component, "
        "and the machine's raw AF_PACKET limit",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Path("results/bench-testbed"))
    parser.add_argument(
        "--rates",
        type=_choice_list(sweep.RATES_MBIT, parse_int),
        default=list(sweep.RATES_MBIT),
        help="leg rates in Mbit/s (each point is 2 legs of this rate)",
    )
    parser.add_argument(
        "--stacks", type=_choice_list(sweep.STACKS, str), default=list(sweep.STACKS)
    )
    parser.add_argument(
        "--ngtcp2-rcvbuf",
        type=_choice_list(sweep.NGTCP2_RCVBUFS, str),
        default=["default"],
        help="ngtcp2 client's UDP receive buffer: the kernel's default and/or large "
        "(the flow key udp_rcvbuf; default,large gives both side by side)",
    )
    parser.add_argument(
        "--departure-slack-us",
        type=_slack_list,
        default=[AUTO_SLACK],
        help="the legs' linkem --departure-slack-us, µs or auto (dcexp's: 50 above 242 "
        "Mbit/s, else 0); several (auto,0) run the sweep once per slack, side by side in one "
        "table (auto's runs in OUT, a number's in OUT/slack-Nus)",
    )
    parser.add_argument(
        "--io",
        type=_choice_list(IO_PATHS, str),
        default=[sweep.DEFAULT_IO],
        help="how the parts read and write their veths (dcexp run --io); afpacket,afxdp runs "
        "the sweep once per path, side by side in one table (afpacket's runs in OUT, "
        "afxdp's in OUT/io-afxdp)",
    )
    parser.add_argument(
        "--t-reordering-ms",
        type=_t_reordering_list,
        default=[sweep.T_REORDERING_MS],
        help="the agent's t-Reordering in ms (the paper's LTE value by default); several "
        "(200,50) run the sweep once per value, side by side in one table (a value other "
        "than the default's runs in OUT/treord-Nms)",
    )
    parser.add_argument(
        "--duration-s",
        type=float_range(1, 600, "duration"),
        default=12.0,
        help="download per point",
    )
    parser.add_argument(
        "--reps",
        type=int_range(1, MAX_REPS, "repetitions"),
        default=1,
        help="downloads per point and stack; the table and the goals give their mean, spread and n",
    )
    parser.add_argument(
        "--pin",
        choices=PIN_LAYOUTS,
        default="chain",
        help="CPU placement of the testbed's processes (experiments/run/cpu.py)",
    )
    parser.add_argument(
        "--no-raw",
        action="store_true",
        help="skip the raw AF_PACKET limit and the do-nothing floors at the parts' frame rates",
    )
    parser.add_argument(
        "--no-idle", action="store_true", help="skip the idle testbed's CPU (5 s, no traffic)"
    )
    parser.add_argument(
        "--replot",
        type=input_file,
        metavar="CSV",
        help="draw the figure of a saved bench.csv again (its PNG beside it, same name) "
        "and run nothing",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the points an interrupted sweep saved in --out (default: run all afresh)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.replot is not None:
        return replot(args.replot)
    try:
        out = make_output_dir(args.out).resolve()
    except InputFileError as exc:
        parser.error(f"--out {exc}")
    try:
        points = [
            point
            for slack in args.departure_slack_us
            for io in args.io
            for t_reordering_ms in args.t_reordering_ms
            for point in sweep.run_sweep(
                _sweep_dir(out, slack, io, t_reordering_ms),
                args.rates,
                args.stacks,
                args.duration_s,
                args.pin,
                args.resume,
                args.ngtcp2_rcvbuf,
                departure_slack_us=slack,
                io=io,
                reps=args.reps,
                t_reordering_ms=t_reordering_ms,
            )
        ]
        raw = None if args.no_raw else rawpath.measure(args.duration_s, out / "raw")
        floors = [] if raw is None else raw_floors(points, raw, args.duration_s, out)
        config = from_dict(sweep.scenario_doc(args.rates, args.stacks, args.duration_s)).runs[0]
        silent = None if args.no_idle else idle.measure(config.config, IDLE_S, out / "idle")
    except TestbedError as exc:
        print(f"bench-testbed: {exc}", file=sys.stderr)
        return 1
    print(report.table(points, raw, silent, floors))
    for path in report.write_files(out, points, raw, silent, floors):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

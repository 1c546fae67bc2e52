"""Where aioquic's client becomes CPU-bound on this host: a grid of flow counts x leg rates.

    sudo .venv/bin/python -m experiments.bench.aioquic_limit run [--flows 1,2,3]
        [--rates 5,10,20,30] [--duration-s 10] [--loop asyncio|uvloop]
        [--pin split|switch|none] [--out DIR]
    .venv/bin/python -m experiments.bench.aioquic_limit report DIR

`run` runs one short study through the real testbed (p4sim, linkem, the agent): N aioquic
NewReno downloads with the enlarged UDP buffer on the DC client over two legs of R Mbit/s
each (delay 10 ms cv 10 %, batch 100, split 1:1, as the paper's default), for every N and R
of the grid, each point once, the endpoints on the event loop --loop (default asyncio, the
default out results/aioquic-limit; uvloop: results/aioquic-limit-uvloop); it resumes like any
study. `report` (run by `run` at the end)
writes DIR/aioquic-limit.md and a figure: per point the rate offered (2R), the goodput of all
flows, its share of the offer, the CPU the clients and servers used (in CPUs: 1.00 = one
core) and which processes were short of CPU (experiments/run/cpu.py), and per flow count the
highest offer the flows still used at 90 % without a CPU-bound process. Run it on an idle
machine: under load it measures the load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from dccommon.cliargs import (
    ArgumentParser,
    InputFileError,
    float_range,
    make_output_dir,
    number_list_arg,
    parse_float,
    parse_int,
    printable,
)
from experiments.analysis import metrics
from experiments.flows.aioquic_flow import LOOPS
from experiments.run.limits import cpu_affected, cpu_bound_processes

USED = 0.9  # a point "keeps up" when the flows get this share of the offer


def scenario_doc(
    flows: list[int], rates: list[float], duration_s: float, loop: str = "asyncio"
) -> dict:
    """One study: every (flow count, leg rate) pair a sweep point, on one event loop."""
    grid = [(n, r) for n in flows for r in rates]
    variant = {"kind": "aioquic", "cc": "newreno", "udp_rcvbuf": "large"}
    if loop != "asyncio":  # the default: the grid's runs as before the key existed
        variant["loop"] = loop
    return {
        "name": "aioquic-limit",
        "description": "aioquic's CPU limit: N aioquic NewReno downloads (enlarged UDP buffer) "
        "on the DC client over two legs of R Mbit/s each; point NxR.",
        "links": {
            "both": {"rate_mbit": rates[0], "delay_ms": 10, "delay_cv": 0.1, "queue_pkts": 1000},
            "a_uplink": {"delay_ms": 0, "delay_cv": 0},
            "b_uplink": {"delay_ms": 0, "delay_cv": 0},
        },
        "dc": {"batch": 100, "ratio": "1:1"},
        "flows": [{"client": "dc", "duration_s": duration_s, "count": flows[0]}],
        "variants": [variant],
        "repetitions": 1,
        "sweep": {
            "param": "flows_x_rate",
            "values": [f"{n}x{r:g}" for n, r in grid],
            "set": {
                "flows.0.count": [n for n, _ in grid],
                "links.a.rate_mbit": [r for _, r in grid],
                "links.b.rate_mbit": [r for _, r in grid],
            },
        },
    }


def _cpu(m: dict, role: str) -> float:
    """CPUs the flows' `role` processes used, summed over the flows."""
    return sum(
        st["mean_busy"] for name, st in (m.get("process_cpu") or {}).items() if name.endswith(role)
    )


def limit_table(out: Path) -> pd.DataFrame:
    """One row per grid point of a finished (or partly finished) run."""
    rows = []
    for m in metrics.load_manifests(out):
        if m["status"] != "ok":
            continue
        links, flows = m["config"]["links"], list(m["flows"].values())
        offered = links["a"]["rate_mbit"] + links["b"]["rate_mbit"]
        goodput = sum(f.get("goodput_mbit") or 0.0 for f in flows)
        short = cpu_bound_processes(m)
        rows.append(
            {
                "flows": len(flows),
                "loop": m["config"]["flows"][0].get("loop") or "asyncio",
                "offered_mbit": offered,
                "per_flow_mbit": offered / len(flows),
                "goodput_mbit": goodput,
                "used": goodput / offered,
                "client_cpu": _cpu(m, "/client"),
                "server_cpu": _cpu(m, "/server"),
                "short_of_cpu": " ".join(short) or "-",
                # a flow process CPU-bound, or every core busy (no process named)
                "cpu_bound": any(p.endswith(("/client", "/server")) for p in short)
                or (cpu_affected(m) and not short),
            }
        )
    table = pd.DataFrame(rows)
    return table.sort_values(["flows", "offered_mbit"]).reset_index(drop=True) if rows else table


def limits(table: pd.DataFrame) -> dict[int, float | None]:
    """Per flow count: the highest offer (Mbit/s) still used at USED without a CPU-bound
    flow process; None when even the lowest offer was not."""
    out = {}
    for n, g in table.groupby("flows"):
        ok = g[(g.used >= USED) & ~g.cpu_bound]
        out[int(n)] = float(ok.offered_mbit.max()) if len(ok) else None
    return out


def report(out: Path) -> Path:
    table = limit_table(out)
    if table.empty:
        raise SystemExit(f"aioquic_limit: {printable(out)} holds no finished runs")
    loops = " and ".join(sorted(set(table.loop)))
    lines = [
        f"# Where aioquic's client becomes CPU-bound (event loop: {loops})",
        "",
        (
            f"From {len(table)} runs in {out} (one per point; under load the figures measure the "
            "load too). CPU in CPUs (1.00 = one core) used by all clients and all servers of the "
            "point; short of CPU: the processes the run's CPU verdict names (at 95 % of a core, "
            "waiting for one 25 % of the time, or wanting a CPU 95 % of a 100 ms sample in a quarter "
            "of the samples)."
        ),
        "",
        (
            "| flows | offered (Mbit/s) | per flow | goodput | share used | clients' CPU | "
            "servers' CPU | short of CPU |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r.flows} | {r.offered_mbit:g} | {r.per_flow_mbit:.3g} | {r.goodput_mbit:.1f} "
            f"| {r.used:.0%} | {r.client_cpu:.2f} | {r.server_cpu:.2f} | {r.short_of_cpu} |"
        )
    lines += ["", f"Highest offer used at {USED:.0%} or more with no flow process short of CPU:"]
    lines += [""] + [
        f"- {n} flow(s): " + (f"{v:g} Mbit/s ({v / n:.3g} per flow)" if v else "none of the grid")
        for n, v in limits(table).items()
    ]
    figure = _figure(table, out)
    lines += ["", f"![goodput share against the offer]({figure.name})", ""]
    path = out / "aioquic-limit.md"
    path.write_text("\n".join(lines))
    return path


def _figure(table: pd.DataFrame, out: Path) -> Path:
    from experiments.analysis import plots

    fig, ax = plots.plt.subplots(figsize=(6.4, 4.0))
    for n, g in table.groupby("flows"):
        ax.plot(g.offered_mbit, g.used * 100, marker="o", label=f"{n} flow(s)")
        bound = g[g.cpu_bound]
        ax.scatter(bound.offered_mbit, bound.used * 100, marker="x", color="red", zorder=5)
    ax.axhline(USED * 100, color="grey", linestyle=":", label=f"{USED:.0%} of the offer")
    ax.scatter([], [], marker="x", color="red", label="a client or server short of CPU")
    ax.set_xlabel("rate offered to the DC client, both legs (Mbit/s)")
    ax.set_ylabel("goodput of all flows / offer (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    plots._legend_outside(ax)
    loops = " and ".join(sorted(set(table.loop)))
    ax.set_title(f"aioquic NewReno (enlarged buffer, {loops}) on this host", fontsize=9)
    return plots._save(fig, out, "aioquic-limit")[0]


def _axis(lo: float, hi: float, what: str, parse):
    """A grid axis: comma-separated numbers, each once, in increasing order."""
    values = number_list_arg(lo, hi, what, parse)
    return lambda text: sorted(values(text))


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run the grid (root), then report")
    run.add_argument("--flows", type=_axis(1, 16, "--flows", parse_int), default=[1, 2, 3])
    run.add_argument(
        "--rates",
        type=_axis(0.5, 1000, "--rates (Mbit/s per leg)", parse_float),
        default=[5.0, 10.0, 20.0, 30.0],
    )
    run.add_argument(
        "--duration-s",
        type=float_range(1, 600, "duration"),
        default=10.0,
        help="length of each run",
    )
    run.add_argument("--loop", choices=LOOPS, default="asyncio", help="the endpoints' event loop")
    run.add_argument("--pin", choices=("split", "switch", "none"), default="split")
    run.add_argument(
        "--out", type=Path, help="default results/aioquic-limit (-uvloop with --loop uvloop)"
    )
    rep = sub.add_parser("report", help="the table and figure of a run")
    rep.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "run":
        from experiments.run.runner import RunOptions, run_scenario
        from experiments.run.scenario import from_dict

        if not 1 <= args.duration_s <= 600:
            p.error(f"--duration-s: from 1 to 600 s, got {args.duration_s:g}")
        scenario = from_dict(scenario_doc(args.flows, args.rates, args.duration_s, args.loop))
        suffix = "" if args.loop == "asyncio" else f"-{args.loop}"
        path = args.out or Path(f"results/aioquic-limit{suffix}")
        try:
            make_output_dir(path)
        except InputFileError as exc:
            p.error(f"--out: {exc}")
        summary = run_scenario(scenario, path, RunOptions(pin=args.pin))
        print(f"aioquic_limit: {summary['ok']} ok, {summary['failed']} failed", file=sys.stderr)
    else:
        path = args.dir
    print(f"aioquic_limit: {report(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

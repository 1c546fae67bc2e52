"""The sweep's table (printed), its CSV and JSON, and its figure."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict
from pathlib import Path
from statistics import mean, stdev

from experiments.ratebench.rawpath import RawLimit
from experiments.ratebench.sweep import (
    COMPONENTS,
    T_REORDERING_MS,
    Point,
    repetitions,
    saturation_points,
    treord_suffix,
)


def table(
    points: list[Point],
    raw: RawLimit | None,
    idle: dict | None = None,
    floors: list[RawLimit] = (),
) -> str:
    """Offered vs achieved goodput and each component's CPU (share of a core, µs per frame),
    one line per stack and leg rate; then where each component saturates and the raw limit."""
    width = max([7] + [len(p.stack) for p in points])  # 'ngtcp2-rcvbuf-large'
    head = f"{'stack':{width}} {'legs':>10} {'offered':>8} {'goodput':>8} {'share':>6} "
    head += " ".join(f"{c:>13}" for c in COMPONENTS) + f" {'cores':>6} {'load':>5}  verdict"
    lines = [
        "CPU per component: share of one core / µs per frame (frames of both legs, both ways)",
        head,
    ]
    groups = repetitions(points)
    for p in (p for group in groups.values() for p in group):
        cells = []
        for c in COMPONENTS:
            share = p.core_share.get(c)
            cells.append(
                f"{share:5.0%}/{p.us_per_frame[c]:5.1f}µs" if share is not None else f"{'-':>13}"
            )
        gp_share = p.goodput_mbit / p.offered_mbit if p.offered_mbit else 0.0
        repeated = len(groups[(p.stack, p.leg_mbit)]) > 1
        legs = f"2x{p.leg_mbit:g}" + (f" #{p.rep + 1}" if repeated else "")
        lines.append(
            f"{p.stack:{width}} {legs:>10} {p.offered_mbit:8.0f} {p.goodput_mbit:8.1f} "
            f"{gp_share:6.0%} "
            + " ".join(cells)
            + f" {p.cores_busy:6.0%} {p.loadavg:5.1f}  "
            + (p.limit if p.status == "ok" else f"FAILED ({p.status})")
        )
        lines += [f"{'':{width + 10}}- {c}" for c in p.candidates]
    buffers = {p.stack: p.udp_rcvbuf_bytes for p in points if p.udp_rcvbuf_bytes}
    for stack, size in sorted(buffers.items()):
        lines.append(
            f"{stack}: the client's UDP receive buffer was {size} bytes (as the kernel set it)"
        )
    repeated = {key: group for key, group in groups.items() if len(group) > 1}
    if repeated:
        lines.append("")
        lines.append("Goodput over the repetitions of each point:")
    for (stack, leg), group in repeated.items():
        goodputs = [p.goodput_mbit for p in group]
        lines.append(
            f"  {stack} 2x{leg:g}: mean {mean(goodputs):.1f} Mbit/s "
            f"({mean(goodputs) / group[0].offered_mbit:.0%} of capacity), sd {stdev(goodputs):.1f}, "
            f"{min(goodputs):.1f} to {max(goodputs):.1f} (n = {len(group)})"
        )
    lines.append("")
    lines.append("Saturation (lowest leg rate, Mbit/s, at which each component was CPU-bound):")
    for stack, per in saturation_points(points).items():
        where = ", ".join(f"{c} {'never' if r is None else f'2x{r:g}'}" for c, r in per.items())
        lines.append(f"  {stack}: {where}")
    if raw is not None:
        lines.append(
            f"Raw limit (TCP through 3 do-nothing AF_PACKET forwarders on veths): "
            f"{raw.goodput_mbit:.0f} Mbit/s, {raw.frames_per_s / 1e3:.0f} kframes/s per hop, "
            "per hop "
            + ", ".join(
                f"{s:.0%} of a core / {u:.2f} µs per frame"
                for s, u in zip(raw.hop_core_share, raw.hop_us_per_frame)
            )
        )
    lines.append("Goals (issue 25):")
    lines += [f"  {g}" for g in goals(points, idle, floors)]
    return "\n".join(lines)


GOAL_RATE_FPS = 80_000  # "CPU per forwarded packet ... under 2 us at 80 kpps"
GOAL_US_PER_FRAME = 2.0
FORWARDERS = ("switch", "link_a", "link_b", "agent")  # the goal's parts: every frame passes them


def goal_group(points: list[Point]) -> list[Point] | None:
    """The repetitions of the point whose frame rate is nearest the CPU goal's 80 kframes/s."""
    return min(
        repetitions(points).values(),
        key=lambda g: abs(mean(p.frames_per_s for p in g) - GOAL_RATE_FPS),
        default=None,
    )


def forwarder_frame_rates(group: list[Point]) -> dict[str, float]:
    """Frames per second each forwarder handled at a point (the switch and the agent every
    frame, a linkem its own leg's), from its CPU share and CPU per frame: the rates at which
    the do-nothing hop's floor is taken."""
    return {
        c: mean(p.core_share[c] / p.us_per_frame[c] * 1e6 for p in group)
        for c in FORWARDERS
        if all(p.us_per_frame.get(c) for p in group)
    }


def _floor_lines(group: list[Point], costs: dict[str, float], floors: list[RawLimit]) -> list[str]:
    """Beside the CPU goal: what a do-nothing AF_PACKET hop (rawfwd, same veths, same kernel
    path) cost per frame at the frame rate each forwarder saw, and each forwarder's own work
    above it. Where the floor alone is above the goal, no forwarder can meet it here."""
    if not floors:
        return []
    rates = forwarder_frame_rates(group)
    lines, own = [], []
    for floor in sorted(floors, key=lambda f: -f.frames_per_s):
        seen_by = [
            c
            for c, r in rates.items()
            if min(floors, key=lambda f: abs(f.frames_per_s - r)) is floor
        ]
        if not seen_by:
            continue
        hop = mean(floor.hop_us_per_frame)
        lines.append(
            f"  a do-nothing AF_PACKET hop at {floor.frames_per_s / 1e3:.0f} kframes/s (as "
            f"{' and '.join(seen_by)} saw): {min(floor.hop_us_per_frame):.2f} to "
            f"{max(floor.hop_us_per_frame):.2f} us per frame"
            + (" (above the goal on its own)" if hop >= GOAL_US_PER_FRAME else "")
        )
        own += [f"{c} {costs[c] - hop:+.1f} us" for c in seen_by if c in costs]
    if own:
        lines.append("  each part's own work above that hop: " + ", ".join(own))
    return lines


def share_against(share: float, goal: float) -> str:
    """A share of capacity in whole percent, with one decimal where whole percent would show
    a missed goal as reached (79.5 % against 80 %: "80% (not met)" read as a contradiction)."""
    if share < goal and round(share * 100) >= round(goal * 100):
        return f"{share:.1%}"
    return f"{share:.0%}"


def goals(
    points: list[Point], idle: dict[str, float] | None, floors: list[RawLimit] = ()
) -> list[str]:
    """Issue 25's goals, each with the figure measured and met / not met (absent: not run); a
    point run more than once is judged by its mean, every run's figure given beside it.
    `floors`: do-nothing hops paced to the forwarders' frame rates (rawpath.at_frame_rate)."""
    out = []
    groups = repetitions(points)

    def shares(stack: str, leg: float) -> list[float]:
        return [
            p.goodput_mbit / p.offered_mbit for p in groups.get((stack, leg), []) if p.offered_mbit
        ]

    for what, base, leg, goal in (
        ("TCP CUBIC at 2x500", "tcp", 500, 0.9),
        ("ngtcp2 at 2x500", "ngtcp2", 500, 0.8),
        ("ngtcp2 with a large UDP receive buffer at 2x500", "ngtcp2-rcvbuf-large", 500, 0.8),
        ("stretch: TCP CUBIC at 2x1000", "tcp", 1000, 0.9),
    ):
        # the paper's t-Reordering first, then each other value the sweep ran
        for ms in sorted(
            {p.t_reordering_ms for p in points}, key=lambda v: (v != T_REORDERING_MS, -v)
        ):
            stack = base + treord_suffix(ms)
            label = what if ms == T_REORDERING_MS else f"{what}, t-Reordering {ms:g} ms"
            got = shares(stack, leg)
            if not got:
                continue
            verdict = "met" if mean(got) >= goal else "not met"
            runs = (
                f" mean of n = {len(got)} ({', '.join(f'{g:.0%}' for g in got)})"
                if len(got) > 1
                else ""
            )
            shown = share_against(mean(got), goal)
            out.append(f"{label} >= {goal:.0%} of capacity: {shown}{runs} ({verdict})")
    group = goal_group(points)
    if group is not None:
        near = group[0]
        costs = {
            c: mean(p.us_per_frame[c] for p in group)
            for c in FORWARDERS
            if all(c in p.us_per_frame for p in group)
        }
        verdict = "met" if costs and max(costs.values()) < GOAL_US_PER_FRAME else "not met"
        out.append(
            f"CPU per frame < 2 us in the switch, each linkem and the agent (nearest point to "
            f"80 kframes/s: {near.stack} 2x{near.leg_mbit:g}, "
            f"{mean(p.frames_per_s for p in group) / 1e3:.0f} kframes/s"
            + (f", mean of n = {len(group)}" if len(group) > 1 else "")
            + "): "
            + ", ".join(f"{c} {u:.1f} us" for c, u in costs.items())
            + f" ({verdict})"
        )
        out += _floor_lines(group, costs, floors)
    if idle is not None:
        total = sum(idle.values())
        parts = ", ".join(f"{name} {v:.1%}" for name, v in sorted(idle.items()))
        verdict = "met" if total < 0.05 else "not met"
        out.append(f"idle testbed < 5 % of a core: {total:.1%} ({parts}) ({verdict})")
    return out


CSV_NUMBERS = (
    "leg_mbit",
    "rep",
    "offered_mbit",
    "goodput_mbit",
    "core_share",
    "us_per_frame",
    "wait_share",
)
CSV_COLUMNS = (
    "stack",
    "leg_mbit",
    "rep",
    "offered_mbit",
    "goodput_mbit",
    "component",
    "core_share",
    "us_per_frame",
    "wait_share",
    "cpu_bound",
    "limit",
)


def write_files(
    out: Path,
    points: list[Point],
    raw: RawLimit | None,
    idle: dict | None = None,
    floors: list[RawLimit] = (),
) -> list[Path]:
    """bench.csv (one row per point and component), bench.json (everything), bench.png."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path, png_path = out / "bench.csv", out / "bench.json", out / "bench.png"
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for p in points:
            for c in COMPONENTS:
                if c in p.core_share:
                    w.writerow(
                        [
                            p.stack,
                            p.leg_mbit,
                            p.rep,
                            p.offered_mbit,
                            round(p.goodput_mbit, 2),
                            c,
                            round(p.core_share[c], 4),
                            round(p.us_per_frame[c], 3),
                            round(p.wait_share[c], 4),
                            c in p.limited,
                            p.limit,
                        ]
                    )
    doc = {
        "points": [asdict(p) for p in points],
        "saturation_leg_mbit": saturation_points(points),
        "raw_limit": asdict(raw) if raw is not None else None,
        "raw_floors": [asdict(f) for f in floors],
        "idle_core_share": idle,
        "goals": goals(points, idle, floors),
    }
    json_path.write_text(json.dumps(doc, indent=1))
    plot(points, raw, png_path)
    return [csv_path, json_path, png_path]


STACK_LINESTYLES = ("-", "--", ":", "-.")
STACK_MARKERS = ("o", "s", "^", "D")


def plot(points: list[Point], raw: RawLimit | None, path: Path) -> None:
    """Left: goodput against offered load per stack. Right: CPU per frame, one colour per
    component and one line style per stack, so two short legends say which line is which."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    stacks = sorted({p.stack for p in points})
    offered = sorted({p.offered_mbit for p in points})
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    component_colour = {c: colours[i % len(colours)] for i, c in enumerate(COMPONENTS)}
    left.plot(offered, offered, color="grey", linestyle=":", label="offered (both legs)")
    groups = repetitions(points)
    for i, stack in enumerate(stacks):
        style = STACK_LINESTYLES[i % len(STACK_LINESTYLES)]
        marker = STACK_MARKERS[i % len(STACK_MARKERS)]
        runs = sorted(
            (group for (s, _leg), group in groups.items() if s == stack),
            key=lambda g: g[0].offered_mbit,
        )
        offered_at = [g[0].offered_mbit for g in runs]
        goodputs = [[p.goodput_mbit for p in g] for g in runs]
        middle = [mean(g) for g in goodputs]
        n = sorted({len(g) for g in goodputs})
        n_text = str(n[0]) if len(n) == 1 else f"{n[0]}-{n[-1]}"
        left.errorbar(
            offered_at,
            middle,
            yerr=[
                [m - min(g) for m, g in zip(middle, goodputs)],
                [max(g) - m for m, g in zip(middle, goodputs)],
            ],
            marker=marker,
            linestyle=style,
            color="black",  # colour is the component's on the right: stacks differ by line
            capsize=3,
            label=stack + (f" (mean, bars min to max, n = {n_text})" if n[-1] > 1 else ""),
        )
        for c in COMPONENTS:
            got = [
                (g[0].offered_mbit, mean(p.us_per_frame[c] for p in g))
                for g in runs
                if all(c in p.us_per_frame for p in g)
            ]
            if got:
                right.plot(
                    *zip(*got), color=component_colour[c], linestyle=style, marker=marker, ms=4
                )
    if raw is not None:
        left.axhline(
            raw.goodput_mbit, color="black", linestyle="--", label="raw AF_PACKET limit (3 hops)"
        )
    right.axhline(GOAL_US_PER_FRAME, color="black", linewidth=0.8, linestyle=(0, (6, 3)))
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(offered, [f"{v:g}" for v in offered])
        ax.minorticks_off()
        ax.set_xlabel("offered load: capacity of both legs (Mbit/s)")
        ax.grid(True, alpha=0.3)
    left.set_ylabel("goodput of the DC download (Mbit/s)")
    left.set_title("Goodput against offered load")
    right.set_ylabel("CPU per frame (µs)")
    right.set_title("CPU per frame by component (mean over repetitions)")
    right.set_ylim(bottom=0)
    left.legend(fontsize="small")
    by_component = [Line2D([], [], color=component_colour[c], label=c) for c in COMPONENTS]
    by_component.append(
        Line2D(
            [],
            [],
            color="black",
            linewidth=0.8,
            linestyle=(0, (6, 3)),
            label=f"goal {GOAL_US_PER_FRAME:g} µs: switch, links, agent",
        )
    )
    by_stack = [
        Line2D(
            [],
            [],
            color="dimgrey",
            linestyle=STACK_LINESTYLES[i % len(STACK_LINESTYLES)],
            marker=STACK_MARKERS[i % len(STACK_MARKERS)],
            label=stack,
        )
        for i, stack in enumerate(stacks)
    ]
    # two legends beside the axes: a second legend() call replaces the first unless the
    # first is kept as an artist of its own
    for handles, title, corner, y in (
        (by_component, "component (colour)", "upper left", 1),
        (by_stack, "stack (line)", "lower left", 0),
    ):
        kept = right.get_legend()
        if kept is not None:
            right.add_artist(kept)
        right.legend(
            handles=handles,
            title=title,
            fontsize="x-small",
            title_fontsize="x-small",
            loc=corner,
            bbox_to_anchor=(1.01, y),
        )
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the legends outside the axes too
    plt.close(fig)


def read_csv(path: Path) -> list[Point]:
    """The points of a saved bench.csv (one row per point and component), enough to draw
    the figure again: `--replot`. ValueError names the first thing that is not a bench.csv's."""
    points: dict[tuple[str, float, int], Point] = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
        if len(missing) == len(CSV_COLUMNS):
            raise ValueError("its header has none of the columns")
        if missing:
            raise ValueError(f"its header lacks {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            if None in row.values():
                raise ValueError(f"line {line} has fewer values than columns")
            number = {c: float(row[c]) for c in CSV_NUMBERS}
            for c, v in number.items():
                least = "> 0" if c == "offered_mbit" else ">= 0"  # offered is the log axis
                if not math.isfinite(v) or v < 0 or (least == "> 0" and v == 0):
                    raise ValueError(f"line {line}: {c} is {row[c]} (expected a number {least})")
            key = (row["stack"], number["leg_mbit"], int(number["rep"]))
            point = points.setdefault(
                key,
                Point(
                    stack=key[0],
                    leg_mbit=key[1],
                    offered_mbit=number["offered_mbit"],
                    goodput_mbit=number["goodput_mbit"],
                    frames=0.0,
                    rep=key[2],
                    limit=row["limit"],
                ),
            )
            component = row["component"]
            point.core_share[component] = number["core_share"]
            point.us_per_frame[component] = number["us_per_frame"]
            point.wait_share[component] = number["wait_share"]
            if row["cpu_bound"] == "True":
                point.limited.append(component)
    return list(points.values())

"""The reproduction's figures, drawn from the per-run table (paperdata), so a committed
campaign's runs.csv redraws them: every point a mean with its 95 % CI and the exact n,
numeric sweeps on a numeric axis in order (log, or symlog with 0, when they span decades),
legends that name stack, CC and UDP buffer, labelled reference lines."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.analysis import findings, plots
from experiments.analysis.plots import plt

CI_NOTE = "error bars: 95 % CI of the mean (t distribution), clipped to the quantity's range"


def stack_name(variant: str) -> str:
    """'aioquic-newreno-rcvbuf-large' -> 'aioquic NewReno, enlarged UDP buffer'."""
    parts = variant.split("-")
    kind = {"tcp": "TCP (iperf3)"}.get(parts[0], parts[0])
    cc = {"newreno": "NewReno", "cubic": "CUBIC", "bbr": "BBR"}.get(
        parts[1] if len(parts) > 1 else "", ""
    )
    if parts[0] == "tcp":
        buffer = "autotuned buffer"
    elif "rcvbuf" in parts:
        buffer = "enlarged UDP buffer"
    else:
        buffer = "default UDP buffer"
    loop = ", uvloop" if "uvloop" in parts else ""
    return f"{kind} {cc}, {buffer}{loop}".replace("  ", " ")


# one colour per stack in every figure
STACKS = (
    "aioquic-newreno",
    "aioquic-newreno-rcvbuf-large",
    "aioquic-cubic-rcvbuf-large",
    "ngtcp2-newreno",
    "ngtcp2-cubic",
    "tcp-newreno",
    "tcp-cubic",
)


def colour(variant: str) -> str:
    return (
        f"C{STACKS.index(variant)}" if variant in STACKS else f"C{7 + sum(map(ord, variant)) % 3}"
    )


def _n_text(ns: list[int]) -> str:
    ns = sorted(set(ns))
    return f"n={ns[0]}" if len(ns) == 1 else "n=" + ",".join(map(str, ns))


def vs_param(
    table: pd.DataFrame,
    param: str,
    out_dir: Path,
    name: str,
    title: str,
    ylabel: str,
    refs: list[tuple] = (),
    hlines: list[tuple] = (),
    extra: dict[str, pd.DataFrame] | None = None,
    quantity: str = "goodput",
) -> list[Path]:
    """Mean with its CI per variant against the swept value. `refs`: (point, value, label)
    markers (the paper's values); `hlines`: (y, label) lines or (low, high, label) bands;
    `extra`: more tables (e.g. another study's) drawn dashed, named by the key. A Jain's
    index CI is drawn clipped to the index's range, 1/3 to 1 (StudyData.table's low, high)."""
    if table.empty:
        return []
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    series = {"": table, **(extra or {})}
    points = list(dict.fromkeys(p for t in series.values() for p in t.point))
    points, numeric = plots.sweep_axis(ax, points)
    for n, (prefix, t) in enumerate(series.items()):
        for variant, g in t.groupby("variant", sort=False):
            g = g.assign(rank=g.point.map(points.index)).sort_values("rank")
            below = (g["mean"] - g["low"]).fillna(0)  # no bar for a single run
            above = (g["high"] - g["mean"]).fillna(0)
            why = findings.counterpart(variant, quantity)
            ax.errorbar(
                [plots.x_of(points, numeric, p) for p in g.point],
                g["mean"],
                yerr=[below, above],
                marker="o" if not n else "s",
                linestyle="-" if not n else "--",
                capsize=3,
                color=colour(variant),
                label=f"{prefix}{stack_name(variant)} ({_n_text(list(g.n))})"
                + ("; ours, no counterpart" if why else ""),
            )
    for point, val, label in refs:
        if point in points:
            ax.scatter([plots.x_of(points, numeric, point)], [val], marker="*", s=120, color="black",
                       zorder=6, label=label)  # fmt: skip
    for ref in hlines:
        if len(ref) == 3:
            ax.axhspan(ref[0], ref[1], color="grey", alpha=0.2, label=ref[2])
        else:
            ax.axhline(ref[0], color="grey", linestyle=":", linewidth=1, label=ref[1])
    ax.set_xlabel(plots.axis_label(param))
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    plots._legend_outside(ax)
    ax.set_title(f"{title}\n({CI_NOTE}; n = runs per point)", fontsize=9)
    return plots._save(fig, out_dir, name)


def clients_vs_param(
    flows: pd.DataFrame, order: list, param: str, out_dir: Path, title: str
) -> list[Path]:
    """Each client's whole-run goodput (DC solid, SC-A dashed, SC-B dotted) with its CI."""
    from experiments.analysis.stats import NON_NEGATIVE, estimate

    f = flows[(flows.status == "ok") & (flows.kind != "ping")]
    if f.empty:
        return []
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    points = [p for p in order if p in set(f.point)] or list(dict.fromkeys(f.point))
    points, numeric = plots.sweep_axis(ax, points)
    for variant, gv in f.groupby("variant", sort=False):
        for client, style in plots.CLIENT_STYLES.items():
            gc = gv[gv.client == client]
            if gc.empty:
                continue
            ests = {p: estimate(gc[gc.point == p].goodput_mbit, NON_NEGATIVE) for p in points}
            ests = {p: e for p, e in ests.items() if e.n}
            ax.errorbar(
                [plots.x_of(points, numeric, p) for p in ests],
                [e.mean for e in ests.values()],
                yerr=[
                    [0 if pd.isna(e.half) else e.mean - e.low for e in ests.values()],
                    [0 if pd.isna(e.half) else e.high - e.mean for e in ests.values()],
                ],
                linestyle=style,
                marker="o",
                capsize=3,
                color=colour(variant),
                label=f"{stack_name(variant)}, {client.upper()} "
                f"({_n_text([e.n for e in ests.values()])})"
                + ("; ours, no counterpart" if findings.counterpart(variant, "jfi") else ""),
            )
    ax.set_xlabel(plots.axis_label(param))
    ax.set_ylabel("whole-run goodput per client (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    plots._legend_outside(ax)
    ax.set_title(f"{title}\n({CI_NOTE})", fontsize=9)
    return plots._save(fig, out_dir, "clients_vs_param")

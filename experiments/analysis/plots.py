"""Figures of the paper's kinds (matplotlib, Agg), each written as PNG and PDF.

- throughput vs the swept parameter, one line per protocol/CC variant, error bars = sd
- per-flow goodput bars with Jain's index annotated (fairness runs)
- link utilization over time for two settings of the swept parameter (e.g. two batch sizes)
- throughput over time of every flow (fairness runs)
- goodput vs combined link throughput (duplication)
- performance envelopes of every variant against TCP (QUICbench)
- SFA of the non-TCP flow per variant and swept value as a colour map (Corbel et al.)
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.analysis import metrics

FIGSIZE = (6.4, 4.0)
ERRORBAR_NOTE = "error bars: sd over the runs"

# Swept parameters in words, with units (the x axis a reader sees)
PARAM_LABELS = {
    "dc.batch": "batch size (packets)",
    "dc.ratio": "split of each batch (packets on leg A : leg B)",
    "bandwidth_ratio": "leg bandwidth ratio A:B (mean of the legs 20 Mbit/s)",
    "delay_ratio": "leg delay ratio A:B",
    "delay_a_b_ms": "mean one-way delay of leg A / leg B (ms)",
    "links.both.loss": "loss rate on each leg (share of packets)",
    "links.a.loss": "loss rate on leg A (share of packets)",
    "dc_mode": "DC mode (split or duplication)",
    "pair": "QUIC stacks compared, and the path they share",
    "t_reordering_ms": "t-Reordering (ms)",
    "path": "path of the client's traffic",
    "traces_a_b": "traces on leg A / leg B",
}


def axis_label(param: str) -> str:
    return PARAM_LABELS.get(param, param)


def _legend_outside(ax) -> None:
    """Legend to the right of the axes, never over the data; none when nothing is labelled
    (e.g. a handover panel without a flow of its kind)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def sweep_axis(ax, points: list) -> tuple[list, bool]:
    """The swept values in order on the x axis, each with its own tick: numeric sweeps at
    their values (log when all are positive and span two decades, symlog when one is 0 and
    the others span one), other sweeps as categories in the given order. Returns the points
    in axis order and whether the axis is numeric."""
    numeric = _numeric(points)
    if not numeric:
        ax.set_xticks(range(len(points)), [str(p) for p in points])
        return points, False
    points = sorted(points)
    positive = [p for p in points if p > 0]
    spans = len(positive) > 1 and positive[-1] / positive[0] >= 10
    if spans and positive[0] == points[0] and positive[-1] / positive[0] >= 100:
        ax.set_xscale("log")
    elif spans and points[0] == 0:
        ax.set_xscale("symlog", linthresh=positive[0], linscale=0.5)
    ax.set_xticks(points, [f"{p:g}" for p in points])
    ax.minorticks_off()
    at = ax.xaxis.get_transform().transform(np.asarray(points, dtype=float))
    if len(points) > 2 and np.diff(at).min() < 0.08 * (at[-1] - at[0]):  # labels would touch
        ax.tick_params(axis="x", labelrotation=45)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    return points, True


def x_of(points: list, numeric: bool, p):
    """Where point p sits on a sweep_axis."""
    return p if numeric else points.index(p)


def _save(fig, out_dir: Path, name: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_dir / f"{name}.{ext}"
        # no creation date in a PDF: the same data draws the same file (committed reports)
        meta = {"CreationDate": None} if ext == "pdf" else None
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight", metadata=meta)
        paths.append(path)
    plt.close(fig)
    return paths


def _numeric(points) -> bool:
    return all(isinstance(p, (int, float)) for p in points)


def _mark_events(ax, m: dict) -> None:
    """Vertical lines at the run's live changes (scenario `events`)."""
    for ev in m.get("events_applied") or []:
        what = ", ".join(f"{k}={v}" for k, v in (ev.get("set") or ev.get("dc") or {}).items())
        where = f"leg {ev['link']}: " if "link" in ev else "dc: "
        ax.axvline(ev["applied_at_s"], color="grey", linestyle=":", linewidth=1)
        ax.text(
            ev["applied_at_s"],
            ax.get_ylim()[1] * 0.98,
            " " + where + what,
            rotation=90,
            va="top",
            ha="left",
            fontsize=6,
            color="dimgrey",
        )


def _run_title(m: dict) -> str:
    point = m["run_id"].split("__")[0] if m.get("point") is not None else ""
    return f"{point} ({m['variant']})" if point else m["variant"]


def throughput_vs_param(
    summary: pd.DataFrame,
    param: str,
    out_dir: Path,
    client: str = "dc",
    capacity: dict | None = None,
    title: str | None = None,
    name: str = "throughput_vs_param",
) -> list[Path]:
    """Goodput per variant against the swept value; `capacity` (point -> Mbit/s the client's
    legs offer) is drawn as a reference."""
    data = summary[summary.client == client]
    if data.empty:
        return []
    fig, ax = plt.subplots(figsize=FIGSIZE)
    points, numeric = sweep_axis(ax, list(dict.fromkeys(data.point)))
    saturated_labelled = False  # one legend entry for the marker, whichever variant has it
    for variant, g in data.groupby("variant", sort=False):
        g = g.sort_values("point", key=lambda col: col.map(points.index))
        xs = [x_of(points, numeric, p) for p in g.point]
        ax.errorbar(
            xs,
            g.goodput_mbit_mean,
            yerr=g.goodput_mbit_sd.fillna(0),
            marker="o",
            capsize=3,
            label=variant,
        )
        sat = g[g.cpu_saturated_runs > 0]
        if not sat.empty:
            sx = [x_of(points, numeric, p) for p in sat.point]
            ax.scatter(
                sx,
                sat.goodput_mbit_mean,
                marker="x",
                color="red",
                zorder=5,
                label=None if saturated_labelled else "CPU-affected runs",
            )
            saturated_labelled = True
    if capacity:
        cx = [p if numeric else points.index(p) for p in points if p in capacity]
        cy = [capacity[p] for p in points if p in capacity]
        ax.plot(cx, cy, color="grey", linestyle="--", linewidth=1, label="capacity of the legs")
    ax.set_xlabel(axis_label(param))
    ax.set_ylabel(f"goodput of the {client.upper()} client (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    ax.set_title(
        (title or f"Goodput vs {axis_label(param)}")
        + f"\n({ERRORBAR_NOTE}, {runs_per_point(data.runs)})",
        fontsize=9,
    )
    return _save(fig, out_dir, name)


def runs_per_point(runs: pd.Series) -> str:
    """The exact number of runs behind each point: "n = 5", or "n = 3 to 5 per point"."""
    ns = sorted({int(n) for n in runs.dropna()})
    if not ns:
        return "no runs"
    return f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]} per point"


def throughput_bars(summary: pd.DataFrame, out_dir: Path, client: str = "dc") -> list[Path]:
    """Without a sweep: one bar per protocol/CC variant (mean goodput, sd as error bar)."""
    data = summary[summary.client == client]
    if data.empty:
        return []
    fig, ax = plt.subplots(figsize=(max(4.8, 1.2 * len(data)), 4.0))
    xs = range(len(data))
    ax.bar(
        xs,
        data.goodput_mbit_mean,
        yerr=data.goodput_mbit_sd.fillna(0),
        capsize=4,
        color=[f"C{i}" for i in xs],
    )
    for x, (_, row) in zip(xs, data.iterrows()):
        mark = " *" if row.cpu_saturated_runs else ""
        ax.text(
            x,
            row.goodput_mbit_mean / 2,
            f"{row.goodput_mbit_mean:.1f}{mark}",
            ha="center",
            color="white",
            fontsize=9,
        )
    ax.set_xticks(list(xs), list(data.variant), fontsize=8)
    ax.set_ylabel(f"goodput of the {client.upper()} client (Mbit/s)")
    ax.grid(axis="y", alpha=0.3)
    title = "Goodput per protocol/CC"
    if data.cpu_saturated_runs.any():
        title += " (* some runs CPU-affected)"
    ax.set_title(title, fontsize=10)
    return _save(fig, out_dir, "throughput_bars")


def fairness_bars(fair: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Mean goodput per flow (client; client and stack when a run mixes stacks, as a
    pairwise study does) per variant, JFI annotated."""
    if fair.empty:
        return []
    groups = fair.groupby(["point", "variant"], sort=False)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.6 * groups.ngroups), 4.0))
    x = 0.0
    ticks, labels = [], []
    for (point, variant), g in groups:
        by = ["client", "kind"] if g.kind.nunique() > 1 else ["client"]
        per_flow = g.groupby(by, sort=False).goodput_mbit.agg(["mean", "std"])
        jfi = g.groupby("rep").jfi.first().mean()
        xs = [x + i * 0.8 for i in range(len(per_flow))]
        ax.bar(
            xs,
            per_flow["mean"],
            yerr=per_flow["std"].fillna(0),
            width=0.7,
            capsize=3,
            color=[f"C{i}" for i in range(len(per_flow))],
        )
        for xi, flow in zip(xs, per_flow.index):
            name = " ".join(flow) if isinstance(flow, tuple) else flow
            ax.text(xi, 0.3, name, ha="center", va="bottom", fontsize=7, rotation=90, color="white")
        ax.text(
            sum(xs) / len(xs),
            per_flow["mean"].max() * 1.08,
            f"JFI {jfi:.3f} (whole run)",
            ha="center",
            fontsize=8,
        )
        ticks.append(sum(xs) / len(xs))
        labels.append(f"{variant}" + (f"\n{point}" if point != "-" else ""))
        x = xs[-1] + 1.6
    ax.set_xticks(ticks, labels, fontsize=8)
    ax.set_ylabel("mean goodput while competing (Mbit/s)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Per-flow goodput and Jain's fairness index")
    return _save(fig, out_dir, "fairness_bars")


def link_utilization(
    out: Path, manifests: list[dict], out_dir: Path, variants: list[str] = ()
) -> list[Path]:
    """Per-leg throughput over time for the smallest and largest swept value (rep 0) of the
    scenario's first variant."""
    cands = [m for m in manifests if m["rep"] == 0 and m["status"] == "ok"]
    if not cands:
        return []
    present = [v for v in variants if any(m["variant"] == v for m in cands)]
    variant = present[0] if present else cands[0]["variant"]
    cands = [m for m in cands if m["variant"] == variant]
    pts = [m for m in cands if isinstance(m.get("point"), (int, float))]
    chosen = (
        [min(pts, key=lambda m: m["point"]), max(pts, key=lambda m: m["point"])]
        if len(pts) >= 2
        else cands[:2]
    )
    fig, axes = plt.subplots(
        len(chosen), 1, figsize=(6.4, 2.4 * len(chosen)), sharex=True, squeeze=False
    )
    drawn, peak = False, 0.0
    for ax, m in zip(axes[:, 0], chosen):
        samples = metrics.load_samples(Path(out, "runs", m["run_id"]))
        legs = metrics.link_series(samples)
        for leg in legs.columns:
            rate = m["config"]["links"][leg].get("rate_mbit")
            series = legs[leg].dropna()  # the legs' stats lines come at their own times
            util = series / rate * 100 if rate else series
            ax.plot(util.index, util, label=f"leg {leg.upper()}")
            peak = max(peak, float(util.max()) if rate and len(util) else 0.0)
            drawn = True
        ax.set_ylabel("utilization (%)" if m["config"]["links"]["a"].get("rate_mbit") else "Mbit/s")
        ax.set_title(_run_title(m), fontsize=9)
        ax.grid(alpha=0.3)
        _mark_events(ax, m)
        _legend_outside(ax)
    axes[-1, 0].set_xlabel("time (s)")
    if not drawn:
        plt.close(fig)
        return []
    if peak > 100.5:
        fig.text(
            0.01,
            -0.02,
            f"Utilization = frame bytes per linkem stats interval (100 ms) / leg rate; peaks up to "
            f"{peak:.0f}% are intervals that closed late, not a leg above its rate.",
            fontsize=7,
        )
    return _save(fig, out_dir, "link_utilization")


def _plot_goodput(ax, out: Path, m: dict) -> bool:
    """Every flow's goodput over time in run `m`, a 500 ms moving average for legibility;
    False when the run has no goodput samples."""
    series = metrics.flow_goodput_series(metrics.load_samples(Path(out, "runs", m["run_id"])))
    if series.empty:
        return False
    smooth = series.rolling(5, min_periods=1).mean()
    for fid in smooth.columns:
        ax.plot(smooth.index, smooth[fid], label=fid, linewidth=1)
    return True


def throughput_over_time(out: Path, manifests: list[dict], out_dir: Path) -> list[Path]:
    """Goodput of every flow over time for a representative run: the median by DC goodput
    among the fairness runs (all runs when there are none)."""
    fair = [m for m in manifests if len(m.get("flows", {})) > 1 and m["status"] == "ok"]
    m = median_run(fair or manifests)
    if m is None:
        return []
    fig, ax = plt.subplots(figsize=FIGSIZE)
    if not _plot_goodput(ax, out, m):
        plt.close(fig)
        return []
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s, 500 ms average)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    ax.set_title(
        f"Goodput over time: {_run_title(m)}, rep {m['rep']} (the median run by DC goodput)",
        fontsize=9,
    )
    _mark_events(ax, m)
    return _save(fig, out_dir, "throughput_over_time")


def timeline_per_variant(
    out: Path, manifests: list[dict], out_dir: Path, variants: list[str]
) -> list[Path]:
    """For a study with live events (a leg outage, a split change): one panel per variant,
    each the goodput over time of that variant's median run, on shared axes, so what each
    transport does at the same event reads side by side."""
    runs = [m for m in manifests if m["status"] == "ok" and m.get("events_applied")]
    by_variant = {v: median_run([m for m in runs if m["variant"] == v]) for v in variants}
    by_variant = {v: m for v, m in by_variant.items() if m is not None}
    if len(by_variant) < 2:
        return []
    fig, axes = plt.subplots(
        len(by_variant), 1, figsize=(6.4, 1.0 + 1.5 * len(by_variant)), sharex=True, sharey=True
    )
    for ax, (variant, m) in zip(axes, by_variant.items()):
        _plot_goodput(ax, out, m)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"{variant}, rep {m['rep']} (median run)", fontsize=8, loc="left")
    for ax, m in zip(axes, by_variant.values()):
        _mark_events(ax, m)  # after the shared y range is final: the labels sit at its top
    axes[-1].set_xlabel("time (s)")
    fig.supylabel("goodput (Mbit/s, 500 ms average)", fontsize=9)
    fig.tight_layout()
    return _save(fig, out_dir, "timeline_per_variant")


def duplication(dup: pd.DataFrame, param: str, out_dir: Path) -> list[Path]:
    """Goodput of the DC client and both legs' throughput B against the swept value (in
    order, numeric where it is), error bars = sd over the runs; under loss also the paper's
    relation X = B (1 + p) / 2."""
    if dup.empty:
        return []
    g = dup.groupby(["point", "variant"], sort=False)[["goodput_mbit", "links_mbit"]]
    g = g.agg(["mean", "std", "count"]).reset_index()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    points, numeric = sweep_axis(ax, list(dict.fromkeys(g.point)))
    for n, (variant, gv) in enumerate(g.groupby("variant", sort=False)):
        gv = gv.assign(rank=gv.point.map(points.index)).sort_values("rank")
        xs = [x_of(points, numeric, p) for p in gv.point]
        runs = f"n={int(gv['goodput_mbit']['count'].min())}"
        for col, marker, style, what in (
            ("goodput_mbit", "o", "-", "goodput"),
            ("links_mbit", "s", "--", "both legs together (B)"),
        ):
            ax.errorbar(
                xs,
                gv[col]["mean"],
                yerr=gv[col]["std"].fillna(0),
                marker=marker,
                linestyle=style,
                capsize=3,
                color=f"C{n}",
                label=f"{variant} {what} ({runs})",
            )
        if param.endswith(".loss") and numeric:
            # the paper's relation under independent loss p: X = B (1 + p) / 2
            predicted = gv["links_mbit"]["mean"] * (1 + gv.point.astype(float)) / 2
            ax.plot(xs, predicted, linestyle=":", color=f"C{n}", label=f"{variant} B(1+p)/2")
    ax.set_xlabel(axis_label(param))
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    ax.set_title(
        f"Duplication: goodput of the DC client vs both legs' throughput\n({ERRORBAR_NOTE})",
        fontsize=9,
    )
    return _save(fig, out_dir, "duplication")


def envelopes(clouds: dict, reference: str, point, out_dir: Path) -> list[Path]:
    """One panel per variant: its (delay, throughput) points every 10 RTTs and its envelope
    (hull of the 95 % closest to the mean) over the reference's (TCP's), as QUICbench draws."""
    from experiments.analysis import envelope as env

    others = [v for v in clouds if v != reference] or [reference]
    fig, axes = plt.subplots(
        1, len(others), figsize=(3.2 * len(others), 3.2), sharex=True, sharey=True, squeeze=False
    )
    for ax, variant in zip(axes[0], others, strict=True):
        for name, color in ((reference, "grey"), (variant, "tab:blue")):
            pts = clouds[name]
            ax.scatter(pts[:, 1], pts[:, 0], s=4, color=color, alpha=0.35, linewidths=0)
            hull = env.envelope(pts)
            if len(hull) >= 3:
                ring = list(hull) + [hull[0]]
                ax.plot([p[1] for p in ring], [p[0] for p in ring], color=color, label=name)
        ax.set_title(variant, fontsize=9)
        ax.set_xlabel("delay (smoothed RTT, ms)")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("throughput per 10 RTTs (Mbit/s)")
    if point is not None:
        fig.suptitle(f"performance envelopes at {point}", fontsize=9)
    return _save(fig, out_dir, "envelopes")


def sfa_map(fair: pd.DataFrame, param: str, out_dir: Path) -> list[Path]:
    """Corbel et al.'s figure: the SFA of the flow competing with TCP, one row per variant
    (test), one column per swept value, mean over repetitions; red = it takes more than its
    share, blue = TCP does. Nothing unless TCP competes with another kind of flow."""
    if fair.empty or "kind" not in fair or not (fair.kind == "tcp").any():
        return []
    other = fair[fair.kind != "tcp"]
    if other.empty:
        return []
    grid = other.pivot_table(
        index="variant", columns="point", values="sfa", aggfunc="mean", sort=False
    )
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * grid.shape[1], 1.0 + 0.45 * grid.shape[0]))
    im = ax.imshow(grid.to_numpy(dtype=float), cmap="RdBu_r", vmin=-0.5, vmax=0.5, aspect="auto")
    for (i, j), v in np.ndenumerate(grid.to_numpy(dtype=float)):
        ax.text(j, i, "-" if np.isnan(v) else f"{v:+.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [f"{i + 1}: {v}" for i, v in enumerate(grid.index)])
    ax.set_xlabel(axis_label(param))
    ax.set_ylabel("test (variant)")
    fig.colorbar(im, ax=ax, label="SFA of the non-TCP flow")
    return _save(fig, out_dir, "sfa_map")


# ---------------------------------------------------------------- the paper's figure kinds
CLIENT_STYLES = {"dc": "-", "sc-a": "--", "sc-b": ":"}


def median_run(manifests: list[dict], client: str = "dc") -> dict | None:
    """The run whose `client` goodput is the median of the given runs (the lower middle one
    for an even count): a representative run, not the first in sort order."""
    scored = [
        (r["goodput_mbit"], m)
        for m in manifests
        if m["status"] == "ok"
        for r in m["flows"].values()
        if r["client"] == client and r.get("goodput_mbit") is not None
    ]
    if not scored:
        return None
    scored.sort(key=lambda x: x[0])
    return scored[(len(scored) - 1) // 2][1]


def utilization_examples(
    out: Path, runs: list[tuple[str, dict]], out_dir: Path, title: str, name: str
) -> list[Path]:
    """Per-leg utilization over time for given (caption, run) pairs, one panel each: the
    legs' delivered frame bytes per 100 ms (linkem's own stats) over the leg's rate. Frame
    bytes include the Ethernet and PDCP headers the rate limiter counts, so a full leg shows
    about 100%."""
    runs = [(cap, m) for cap, m in runs if m is not None]
    if not runs:
        return []
    fig, axes = plt.subplots(
        len(runs),
        1,
        figsize=(7.4, 1.2 + 2.1 * len(runs)),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    peak = 0.0
    for ax, (caption, m) in zip(axes[:, 0], runs):
        legs = metrics.link_series(metrics.load_samples(Path(out, "runs", m["run_id"])))
        for leg in legs.columns:
            rate = m["config"]["links"][leg].get("rate_mbit")
            series = legs[leg].dropna()
            if not rate:
                continue
            util = series / rate * 100
            peak = max(peak, float(util.max()) if len(util) else 0.0)
            ax.plot(util.index, util, label=f"leg {leg.upper()} ({rate:g} Mbit/s)")
        ax.set_ylabel("utilization (%)")
        ax.axhline(100, color="grey", linewidth=0.8)
        ax.set_title(f"{caption}: run {m['run_id']}", fontsize=8)
        ax.grid(alpha=0.3)
        _legend_outside(ax)
    axes[-1, 0].set_xlabel("time since the download started (s)")
    for ax in axes[:, 0]:
        ax.set_ylim(0, max(110, peak * 1.05))
    note = (
        f"; peaks up to {peak:.0f}%: a 100 ms stats interval of linkem that closed late"
        if peak > 100.5
        else ""
    )
    fig.suptitle(f"{title}\nmedian run by goodput at each setting{note}", fontsize=9)
    return _save(fig, out_dir, name)


def goodput_time_series(out: Path, m: dict | None, out_dir: Path, title: str, name: str):
    """Every flow's goodput over time (500 ms average) for one (representative) run."""
    if m is None:
        return []
    series = metrics.flow_goodput_series(metrics.load_samples(Path(out, "runs", m["run_id"])))
    if series.empty:
        return []
    smooth = series.rolling(5, min_periods=1).mean()
    fig, ax = plt.subplots(figsize=(7.4, 3.6))
    for fid in smooth.columns:
        client = m["flows"][fid]["client"] if fid in m["flows"] else fid
        ax.plot(
            smooth.index,
            smooth[fid],
            linestyle=CLIENT_STYLES.get(client, "-"),
            linewidth=1,
            label=client.upper(),
        )
    # the whole run: to the end of its longest flow, even when the last slots are empty
    flows = m.get("config", {}).get("flows", [])
    end = max([(f.get("start_s") or 0) + (f.get("duration_s") or 0) for f in flows] or [0])
    ax.set_xlim(0, max(end, float(smooth.index.max())))
    ax.set_xlabel("time since the run started (s)")
    ax.set_ylabel("goodput (Mbit/s, 500 ms average)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    ax.set_title(f"{title}\nmedian run by DC goodput: {m['run_id']}", fontsize=8)
    return _save(fig, out_dir, name)


def overhead_bars(
    table: pd.DataFrame, out_dir: Path, name: str = "overhead", stack_label=str
) -> list[Path]:
    """Per path (SC baseline, DC on one leg, DC 1:1) and protocol: goodput, idle RTT (ping)
    and RTT under load (the sender's smoothed RTT), each in its own panel and scale;
    `stack_label` names a variant in the legend."""
    if table.empty:
        return []
    panels = (
        ("goodput", "goodput (Mbit/s)"),
        ("rtt_idle", "RTT idle, ping (ms)"),
        ("rtt_load", "RTT under load (ms),\nthe sender's smoothed RTT"),
    )
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
    order = ["sc", "dc-1leg", "dc-1:1"]
    paths = sorted(dict.fromkeys(table.path), key=lambda p: order.index(p) if p in order else 9)
    variants = list(dict.fromkeys(table.variant))
    width = 0.8 / max(1, len(variants))
    for ax, (col, label) in zip(axes, panels):
        for n, variant in enumerate(variants):
            g = table[table.variant == variant].set_index("path").reindex(paths)
            xs = [i + n * width for i in range(len(paths))]
            ax.bar(
                xs,
                g[f"{col}_mean"],
                width,
                yerr=g[f"{col}_sd"].fillna(0),
                capsize=3,
                color=f"C{n}",
                label=stack_label(variant),
            )
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(paths))], paths)
        ax.set_xlabel("path of the client's traffic")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    _legend_outside(axes[-1])
    fig.suptitle(f"Overhead of the DC machinery ({ERRORBAR_NOTE})", fontsize=9)
    return _save(fig, out_dir, name)

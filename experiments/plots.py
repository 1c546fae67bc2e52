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

from experiments import analysis

FIGSIZE = (6.4, 4.0)


def _save(fig, out_dir: Path, name: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_dir / f"{name}.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight")
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
    summary: pd.DataFrame, param: str, out_dir: Path, client: str = "dc"
) -> list[Path]:
    data = summary[summary.client == client]
    if data.empty:
        return []
    fig, ax = plt.subplots(figsize=FIGSIZE)
    points = list(dict.fromkeys(data.point))
    numeric = _numeric(points)
    saturated_labelled = False  # one legend entry for the marker, whichever variant has it
    for variant, g in data.groupby("variant", sort=False):
        xs = g.point if numeric else [points.index(p) for p in g.point]
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
            sx = sat.point if numeric else [points.index(p) for p in sat.point]
            ax.scatter(
                sx,
                sat.goodput_mbit_mean,
                marker="x",
                color="red",
                zorder=5,
                label=None if saturated_labelled else "CPU saturated",
            )
            saturated_labelled = True
    if numeric and len(points) > 2 and max(points) / max(min(points), 1e-9) >= 100:
        ax.set_xscale("log")
    if not numeric:
        ax.set_xticks(range(len(points)), [str(p) for p in points])
    ax.set_xlabel(param)
    ax.set_ylabel(f"goodput of the {client.upper()} client (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Throughput vs {param}")
    return _save(fig, out_dir, "throughput_vs_param")


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
        title += " (* some runs CPU-saturated)"
    ax.set_title(title, fontsize=10)
    return _save(fig, out_dir, "throughput_bars")


def fairness_bars(fair: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Mean goodput per flow (client) per variant, JFI annotated."""
    if fair.empty:
        return []
    groups = fair.groupby(["point", "variant"], sort=False)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.6 * groups.ngroups), 4.0))
    x = 0.0
    ticks, labels = [], []
    for (point, variant), g in groups:
        per_flow = g.groupby("client", sort=False).goodput_mbit.agg(["mean", "std"])
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
        for xi, client in zip(xs, per_flow.index):
            ax.text(
                xi, 0.3, client, ha="center", va="bottom", fontsize=7, rotation=90, color="white"
            )
        ax.text(
            sum(xs) / len(xs),
            per_flow["mean"].max() * 1.08,
            f"JFI {jfi:.3f}",
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
    drawn = False
    for ax, m in zip(axes[:, 0], chosen):
        samples = analysis.load_samples(Path(out, "runs", m["run_id"]))
        legs = analysis.link_series(samples)
        for leg in legs.columns:
            rate = m["config"]["links"][leg].get("rate_mbit")
            series = legs[leg].dropna()  # the legs' stats lines come at their own times
            util = series / rate * 100 if rate else series
            ax.plot(util.index, util, label=f"leg {leg.upper()}")
            drawn = True
        ax.set_ylabel("utilization (%)" if m["config"]["links"]["a"].get("rate_mbit") else "Mbit/s")
        ax.set_title(_run_title(m), fontsize=9)
        ax.grid(alpha=0.3)
        _mark_events(ax, m)
        ax.legend(fontsize=8, loc="lower right")
    axes[-1, 0].set_xlabel("time (s)")
    if not drawn:
        plt.close(fig)
        return []
    return _save(fig, out_dir, "link_utilization")


def throughput_over_time(out: Path, manifests: list[dict], out_dir: Path) -> list[Path]:
    """Goodput of every flow over time for the first repetition of the first fairness run."""
    m = next(
        (m for m in manifests if len(m.get("flows", {})) > 1 and m["status"] == "ok"), None
    ) or next((m for m in manifests if m["status"] == "ok"), None)
    if m is None:
        return []
    series = analysis.flow_goodput_series(analysis.load_samples(Path(out, "runs", m["run_id"])))
    if series.empty:
        return []
    smooth = series.rolling(5, min_periods=1).mean()  # 500 ms moving average for legibility
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for fid in smooth.columns:
        ax.plot(smooth.index, smooth[fid], label=fid, linewidth=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s, 500 ms average)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Throughput over time: {_run_title(m)}, rep {m['rep']}", fontsize=9)
    _mark_events(ax, m)
    return _save(fig, out_dir, "throughput_over_time")


def duplication(dup: pd.DataFrame, param: str, out_dir: Path) -> list[Path]:
    if dup.empty:
        return []
    g = dup.groupby(["point", "variant"], sort=False)[["goodput_mbit", "links_mbit"]].mean()
    g = g.reset_index()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    points = list(dict.fromkeys(g.point))
    xs = range(len(points))
    for n, (variant, gv) in enumerate(g.groupby("variant", sort=False)):
        idx = [points.index(p) for p in gv.point]
        ax.plot(idx, gv.goodput_mbit, marker="o", color=f"C{n}", label=f"{variant} goodput")
        ax.plot(
            idx,
            gv.links_mbit,
            marker="s",
            linestyle="--",
            color=f"C{n}",
            label=f"{variant} both legs together",
        )
    ax.set_xticks(list(xs), [str(p) for p in points])
    ax.set_xlabel(param)
    ax.set_ylabel("Mbit/s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Goodput vs combined link throughput")
    return _save(fig, out_dir, "duplication")


def envelopes(clouds: dict, reference: str, point, out_dir: Path) -> list[Path]:
    """One panel per variant: its (delay, throughput) points every 10 RTTs and its envelope
    (hull of the 95 % closest to the mean) over the reference's (TCP's), as QUICbench draws."""
    from experiments import envelope as env

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
    ax.set_xlabel(param)
    ax.set_ylabel("test (variant)")
    fig.colorbar(im, ax=ax, label="SFA of the non-TCP flow")
    return _save(fig, out_dir, "sfa_map")

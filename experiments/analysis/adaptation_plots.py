"""Figures of the split-loop studies (metrics: experiments/analysis/loop_metrics.py):

- goodput per bandwidth ratio and split method (loop_ratio), the oracle as reference;
- leg A's share of the DC frames over time, one line per method (outage, step-down, traces).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from experiments.analysis import loop_metrics, metrics
from experiments.analysis.plots import FIGSIZE, _save


def goodput_by_ratio(table: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Bars: mean goodput per ratio (x) and method (bars), error bars = sd over reps."""
    t = table.copy()
    t[["ratio_bw", "method"]] = t.point.str.split("/", expand=True)
    g = t.groupby(["ratio_bw", "method"]).goodput_mbit.agg(["mean", "std"]).unstack()
    order = [m for m in ("static", "oracle", "capacity", "delay", "dataplane") if m in g["mean"]]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    g["mean"][order].plot.bar(ax=ax, yerr=g["std"][order].fillna(0), rot=0, width=0.8)
    ax.set_xlabel("bandwidth ratio A:B")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend(title="split", fontsize="small")
    return _save(fig, out_dir, "goodput_by_ratio")


def leg_share_over_time(out: Path, out_dir: Path, window: int = 50) -> list[Path]:
    """Leg A's share of the DC frames (rolling over `window` linkem intervals: 0.5 s, longer
    than a batch of 100 packets at these rates), first rep of
    each method; shaded: the first outage, if any."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    seen = set()
    outage = None
    for m in metrics.load_manifests(out):
        if m.get("status") != "ok" or m.get("point") in seen:
            continue
        seen.add(m.get("point"))
        f = loop_metrics.leg_frames(metrics.load_samples(out / "runs" / m["run_id"]))
        r = f.rolling(window, min_periods=1).sum()
        share = r.a / (r.a + r.b)
        ax.plot(share.index, share.values, label=str(m.get("point")), lw=1)
        outage = outage or loop_metrics.outage(m)
    for ev in (
        (metrics.load_manifests(out)[0].get("events_applied") or [])[:2] if not outage else []
    ):
        ax.axvline(ev["applied_at_s"], color="grey", ls=":")
    if outage:
        _, start, end = outage
        ax.axvspan(start, end or start, color="grey", alpha=0.2, label="leg B down")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("leg A share of DC frames")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return _save(fig, out_dir, "leg_share_over_time")

"""Does the CPU verdict matter? Goodput of CPU-flagged runs against the clean runs of the same
study, sweep point and variant (experiments/docs/measurements.md, "Does the CPU verdict
matter?").

A campaign moves a flagged run's folder aside into `<study>/cpu-affected-roundN/` and reruns
it at the same point into `<study>/runs/`; every study folder under a results tree then holds
a natural experiment: the same configuration run with and without CPU trouble. This module
reads the manifests only (and each run's samples.csv for two latency counters):

- `pairs`: every flagged run (limits.cpu_affected) beside the mean of the clean runs of its
  cell (study, point, variant): goodput difference flagged minus clean, in Mbit/s and in %
  of the clean mean, and the same for the flow's mean RTT, the agent's t-Reordering expiries
  and linkem's release lateness;
- `noise`: the spread of identical clean runs, pooled per study (sd of clean goodput around
  its cell's mean, in %): a flagged run moved "beyond noise" when it lies more than
  NOISE_SIGMAS of those sd from its clean mean;
- `effect_table`: the differences' mean with its 95 % CI and n, overall, per reason (wait
  share bin, a process at a full core, every core busy, the sampler's demand rule) and per
  process kind that tripped the verdict;
- `wait_table` and `scatter`: over every run, flagged or not, goodput's deviation from its
  cell's clean median against the largest wait share of each process kind;
- `link_late_table`: the verdict's link-lateness rule (limits.link_verdict: more than 5 % of
  a leg's frames in windows late beyond its tolerance) re-applied per study, beside the
  older rule (worst window above linkem's 0.1 ms goal) that named every run; and how
  goodput moves with the worst window's lateness within cells.

`python -m experiments.analysis.cpu_effect RESULTS [--out DIR]` prints the tables (Markdown)
and draws DIR/cpu_effect.{png,pdf}.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from dccommon.cliargs import ArgumentParser, input_dir
from experiments.analysis import metrics
from experiments.analysis.metrics import _point_label
from experiments.analysis.report import _table
from experiments.analysis.stats import NON_NEGATIVE, estimate, t975
from experiments.run.limits import (
    CORES_FULL,
    LINK_LATE_DELAY_SHARE,
    LINK_LATE_GOAL_MS,
    LINK_LATE_SHARE,
    PROCESS_FULL,
    WAIT_SHARE,
    cpu_affected,
    cpu_verdict,
    link_lateness,
)

KINDS = ("agent", "switch", "linkem", "client", "server", "control")
WAIT_BINS = (
    (0.25, 0.30, "wait 25-30 %"),
    (0.30, 0.40, "wait 30-40 %"),
    (0.40, math.inf, "wait > 40 %"),
)
ALL_RUNS_BINS = ((0.0, 0.10), (0.10, 0.25), (0.25, 0.40), (0.40, math.inf))
SLOPE_KINDS = ("agent", "switch", "endpoints")
ENDPOINTS = ("client", "server")  # the flow's own programs; the rest is the emulated network
FULL_CORE = "a process at >= 95 % of a core"
CORES_BUSY = "every core >= 95 % busy"
DEMAND_ONLY = "sampler's demand rule only"
NOISE_SIGMAS = 2.0  # a flagged run beyond this many clean sd from its clean mean has moved
LATENCY = {  # column -> what it is, for the tables
    "rtt_ms": "flow RTT, mean (ms)",
    "rtt_p5_ms": "flow RTT, 5th percentile (ms)",
    "reorder_expiries": "agent t-Reordering expiries (count)",
    "late_p99_ms": "linkem release lateness p99, worst 100 ms window (ms)",
    "late_p99_median_ms": "linkem release lateness p99, median 100 ms window (ms)",
}


LATE = ("late_p99_ms", "late_p99_median_ms", "late_share")


def process_kind(name: str) -> str:
    """A process of the manifest's process_cpu ('link_a', 'f0-dc/client') -> its kind."""
    if name.startswith("link_"):
        return "linkem"
    role = name.rsplit("/", 1)[-1]
    if role in ("client", "server"):
        return role
    return name if name in KINDS else "other"


# ---------------------------------------------------------------- loading
def _latency(run_dir: Path, dc_flows: list[str], config: dict) -> dict[str, float]:
    """From samples.csv: the 5th percentile of the DC flows' RTT samples (the floor that
    processing delay raises, where the mean mostly shows the queue), the agent's t-Reordering
    expiries over the run, and linkem's lateness from the run's start: its worst window's
    late_us p99 (both legs, both directions), its median window, and the verdict's share of
    frames late beyond their tolerance (limits.link_lateness, the larger leg's; NaN where no
    direction forwarded enough frames to be judged) against `config`, the run's own; NaN
    where the run has none."""
    path = run_dir / "samples.csv"
    if not path.exists():
        return {"rtt_p5_ms": math.nan, "reorder_expiries": math.nan, "link_late": False,
                **dict.fromkeys(LATE, math.nan)}  # fmt: skip
    s = metrics.load_samples(run_dir)  # the one reader: a torn last line is dropped, named
    rtt = s.value[(s.source == "flow") & s.id.isin(dc_flows) & (s.metric == "rtt_ms")]
    expiries = s.value[(s.source == "agent") & (s.metric == "t_reordering_expiries")]
    link = s[(s.source == "link") & s.metric.isin(["late_us.p99", "frames"])]
    late = link.value[(link.metric == "late_us.p99") & (link.t_s >= 0)]
    legs = link_lateness(list(link.itertuples(index=False)), config).values()
    shares = [leg["share"] for leg in legs if leg["share"] is not None]
    return {
        "rtt_p5_ms": float(rtt.quantile(0.05)) if len(rtt) else math.nan,
        "reorder_expiries": (
            float(expiries.iloc[-1] - expiries.iloc[0]) if len(expiries) else math.nan
        ),
        "late_p99_ms": max((leg["worst_ms"] for leg in legs), default=math.nan),
        "late_p99_median_ms": float(late.median()) / 1e3 if len(late) else math.nan,
        "late_share": max(shares, default=math.nan),
        "link_late": max(shares, default=0.0) > LINK_LATE_SHARE,
    }


def run_row(m: dict, study: str, place: str) -> dict:
    """One manifest -> its cell, goodput (the DC client's flows), CPU flag and the numbers
    behind the verdict: per process kind the largest mean wait and busiest-thread share."""
    dc = [r for r in m.get("flows", {}).values() if r.get("client") == "dc"]
    goodputs = [r["goodput_mbit"] for r in dc if r.get("goodput_mbit") is not None]
    rtts = [r["rtt_ms_mean"] for r in dc if r.get("rtt_ms_mean") is not None]
    row = {
        "study": study,
        "place": place,
        "run_id": m["run_id"],
        "point": str(_point_label(m.get("point"))),
        "variant": m["variant"],
        # today's rule on every run: runs saved before the wait rule carry its numbers too
        "flagged": cpu_affected(m) or bool(cpu_verdict(m)),
        "flagged_when_run": cpu_affected(m),
        "goodput_mbit": sum(goodputs) if goodputs else math.nan,
        "rtt_ms": float(np.mean(rtts)) if rtts else math.nan,
        "cores_min_busy": min((m.get("mean_busy") or {}).values(), default=math.nan),
        "demand_flag": bool(m.get("saturated_processes")) or bool(m.get("cpu_saturated")),
        "demand_kinds": sorted({process_kind(n) for n in m.get("saturated_processes") or []}),
    }
    for kind in KINDS:
        row[f"wait_{kind}"] = row[f"run_{kind}"] = math.nan
    for name, s in (m.get("process_cpu") or {}).items():
        kind = process_kind(name)
        if kind not in KINDS:
            continue
        row[f"wait_{kind}"] = np.nanmax([row[f"wait_{kind}"], s.get("mean_wait", 0.0)])
        row[f"run_{kind}"] = np.nanmax([row[f"run_{kind}"], s.get("mean_run_max", 0.0)])
    return row


def load(root: Path) -> pd.DataFrame:
    """Every finished run under `root`: each folder holding runs/ is a study; its runs/ and
    cpu-affected-round*/ folders are read (failed runs and runs without goodput left out)."""
    rows = []
    for runs in sorted(Path(root).glob("**/runs")):
        study = str(runs.parent.relative_to(root))
        for place in [runs, *sorted(runs.parent.glob("cpu-affected-round*"))]:
            for path in sorted(place.glob("*/manifest.json")):
                m = json.loads(path.read_text())
                if m.get("status") != "ok":
                    continue
                dc = [f for f, r in m.get("flows", {}).items() if r.get("client") == "dc"]
                config = m.get("config") or {"links": {}}  # without one: linkem's goal
                rows.append({**run_row(m, study, place.name), **_latency(path.parent, dc, config)})
    df = pd.DataFrame(rows)
    if df.empty:
        raise ValueError(f"no finished run under {root} (expected <study>/runs/*/manifest.json)")
    return df[df.goodput_mbit.notna()].reset_index(drop=True)


# ---------------------------------------------------------------- why a run was flagged
def reasons(row) -> list[str]:
    """The verdict's reasons for one run, from its numbers: the wait bin of its largest wait
    share, a process at a full core, every core busy; the demand rule when nothing else."""
    out = []
    wait = np.nanmax([row[f"wait_{k}"] for k in KINDS] + [0.0])
    out += [label for lo, hi, label in WAIT_BINS if lo <= wait < hi]
    if np.nanmax([row[f"run_{k}"] for k in KINDS] + [0.0]) >= PROCESS_FULL:
        out.append(FULL_CORE)
    if row["cores_min_busy"] >= CORES_FULL:
        out.append(CORES_BUSY)
    if not out and row["demand_flag"]:
        out.append(DEMAND_ONLY)
    return out


def culprits(row) -> list[str]:
    """The process kinds that tripped the verdict in one run."""
    return [
        k
        for k in KINDS
        if row[f"wait_{k}"] >= WAIT_SHARE
        or row[f"run_{k}"] >= PROCESS_FULL
        or k in row["demand_kinds"]
    ]


# ---------------------------------------------------------------- pairing and noise
CELL = ["study", "point", "variant"]


def noise(df: pd.DataFrame) -> pd.DataFrame:
    """Per study: the pooled sd of clean goodput around its cell's clean mean (% of that
    mean), with the clean runs and cells it rests on (cells with >= 2 clean runs)."""
    clean = df[~df.flagged].copy()
    clean["rel"] = clean.goodput_mbit / clean.groupby(CELL).goodput_mbit.transform("mean") - 1
    clean["rtt_dev"] = clean.rtt_ms - clean.groupby(CELL).rtt_ms.transform("mean")
    clean["k"] = clean.groupby(CELL).goodput_mbit.transform("size")
    clean = clean[clean.k >= 2]
    rows = []
    for study, g in clean.groupby("study"):
        dof = len(g) - g.groupby(CELL).ngroups
        sd = math.sqrt((g.rel**2).sum() / dof) * 100 if dof > 0 else math.nan
        rtt_sd = math.sqrt((g.rtt_dev**2).sum() / dof) if dof > 0 else math.nan
        rows.append(
            {"study": study, "clean_sd_pct": sd, "clean_rtt_sd_ms": rtt_sd,
             "clean_runs": len(g), "cells": g.groupby(CELL).ngroups}
        )  # fmt: skip
    return pd.DataFrame(rows).set_index("study")


def pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Each flagged run with a clean run in its cell: differences to the cell's clean mean
    (goodput in Mbit/s and %, latency columns), its z against the study's clean noise, its
    reasons and culprit kinds."""
    clean = df[~df.flagged].groupby(CELL)
    means = clean[["goodput_mbit", *LATENCY]].mean().add_prefix("clean_")
    means["clean_n"] = clean.size()
    out = df[df.flagged].join(means, on=CELL, how="inner")
    out["diff_mbit"] = out.goodput_mbit - out.clean_goodput_mbit
    out["diff_pct"] = 100 * out.diff_mbit / out.clean_goodput_mbit
    for col in LATENCY:
        out[f"diff_{col}"] = out[col] - out[f"clean_{col}"]
    sd = out.study.map(noise(df).clean_sd_pct)
    out["z"] = out.diff_pct / sd
    out["reasons"] = [reasons(r) for _, r in out.iterrows()]
    out["culprits"] = [culprits(r) for _, r in out.iterrows()]
    return out.reset_index(drop=True)


def _summary(g: pd.DataFrame) -> dict:
    mbit, pct = estimate(g.diff_mbit), estimate(g.diff_pct)
    beyond = int((g.z.abs() > NOISE_SIGMAS).sum())
    return {
        "n": len(g),
        "goodput diff (Mbit/s)": mbit.text(2),
        "goodput diff (%)": pct.text(2),
        f"beyond {NOISE_SIGMAS:g} sd of clean noise": f"{beyond} of {int(g.z.notna().sum())}",
        **{f"diff {what}": estimate(g[f"diff_{col}"]).text(2) for col, what in LATENCY.items()},
    }


def effect_table(p: pd.DataFrame) -> pd.DataFrame:
    """Flagged minus clean, overall, per reason and per culprit kind (a run counts in every
    reason and kind it has: the rows overlap)."""
    rows = {"all flagged runs": _summary(p)}
    labels = [b[2] for b in WAIT_BINS] + [FULL_CORE, CORES_BUSY, DEMAND_ONLY]
    for label in labels:
        g = p[p.reasons.map(lambda r, x=label: x in r)]
        if len(g):
            rows[f"reason: {label}"] = _summary(g)
    for kind in KINDS:
        g = p[p.culprits.map(lambda c, x=kind: x in c)]
        if len(g):
            rows[f"process: {kind}"] = _summary(g)
    endpoint = p.culprits.map(lambda c: bool(set(c) & set(ENDPOINTS)))
    for label, g in (
        (
            "only network parts tripped (agent, switch, linkem, control)",
            p[~endpoint & p.culprits.map(bool)],
        ),
        ("an endpoint tripped (client or server)", p[endpoint]),
    ):
        if len(g):
            rows[label] = _summary(g)
    for study, g in p.groupby("study"):
        rows[f"study: {study}"] = _summary(g)
    return pd.DataFrame.from_dict(rows, orient="index")


def unpaired_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Cells where every run was flagged (>= 2 runs): no clean reference, but the flagged
    runs' own spread against the wait share of the kind that waited most."""
    rows = []
    for cell, g in df.groupby(CELL):
        if len(g) < 2 or not g.flagged.all():
            continue
        waits = {k: g[f"wait_{k}"] for k in KINDS if g[f"wait_{k}"].notna().any()}
        top = max(waits, key=lambda k: waits[k].mean())
        est = estimate(g.goodput_mbit, NON_NEGATIVE)
        rows.append(
            {"cell": " / ".join(cell), "runs": len(g), "goodput (Mbit/s)": est.text(3),
             "sd (%)": 100 * est.sd / est.mean, "most waiting": top,
             "its wait (%)": f"{100 * waits[top].min():.0f}-{100 * waits[top].max():.0f}"}
        )  # fmt: skip
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- every run
def deviations(df: pd.DataFrame) -> pd.DataFrame:
    """Every run with goodput's deviation (%) from its cell's clean median (the reference a
    report would quote); in a cell without a clean run, from the median of its own runs
    (`has_clean` false: that shows the spread, not a bias; a lone run is left out)."""
    clean = df[~df.flagged].groupby(CELL).goodput_mbit.median().rename("clean_median")
    own = df.groupby(CELL).goodput_mbit.median().rename("own_median")
    out = df.join(clean, on=CELL).join(own, on=CELL)
    out["has_clean"] = out.clean_median.notna()
    out = out[out.has_clean | (out.groupby(CELL).goodput_mbit.transform("size") > 1)]
    out["dev_pct"] = 100 * (out.goodput_mbit / out.clean_median.fillna(out.own_median) - 1)
    return out


def wait_table(dev: pd.DataFrame) -> pd.DataFrame:
    """Mean deviation from the clean median [95 % CI] (n) per process kind and bin of its
    largest wait share, over every run of the cells with a clean run."""
    dev = dev[dev.has_clean]
    rows = {}
    for kind in KINDS:
        w = dev[f"wait_{kind}"]
        if w.notna().any():
            rows[kind] = {
                f"wait {lo:.0%}-{hi:.0%}" if hi < 1 else f"wait >= {lo:.0%}": estimate(
                    dev.dev_pct[(w >= lo) & (w < hi)]
                ).text(2)
                for lo, hi in ALL_RUNS_BINS
            }
    return pd.DataFrame.from_dict(rows, orient="index")


def within_cell_slopes(df: pd.DataFrame, min_runs: int = 3) -> pd.DataFrame:
    """Over every run of the cells with >= min_runs runs, flagged or not: how each outcome
    moves with the wait share of the agent, the switch and the endpoints (the larger of the
    client's and the server's), each holding the other two (least squares on deviations from
    the cell means, one intercept per cell). Slope per 10 points of wait [95 % CI]; goodput
    in % of the cell mean, the others in their units."""
    d = df[df.groupby(CELL).goodput_mbit.transform("size") >= min_runs].copy()
    d["wait_endpoints"] = d[["wait_client", "wait_server"]].max(axis=1)
    cells = [d[c] for c in CELL]
    x = pd.DataFrame({k: 100 * d[f"wait_{k}"].fillna(0.0) for k in SLOPE_KINDS})
    x = x - x.groupby(cells).transform("mean")
    rows = {}
    for col, what in {"goodput_mbit": "goodput (% of the cell mean)", **LATENCY}.items():
        y = d[col]
        y = 100 * (y / y.groupby(cells).transform("mean") - 1) if col == "goodput_mbit" else y
        y = y - y.groupby(cells).transform("mean")
        ok = y.notna().to_numpy()
        varied = [k for k in SLOPE_KINDS if x[k].to_numpy()[ok].any()]  # else no slope to fit
        a, b = x[varied].to_numpy()[ok], y.to_numpy()[ok]
        n_cells = d[ok].groupby(CELL).ngroups
        dof = len(b) - len(varied) - n_cells
        if dof < 2 or not varied:
            continue
        beta = np.linalg.lstsq(a, b, rcond=None)[0]
        se = np.sqrt(np.diag(((b - a @ beta) ** 2).sum() / dof * np.linalg.inv(a.T @ a)))
        row = dict.fromkeys(SLOPE_KINDS, "no variation")
        for k, m, h in zip(varied, 10 * beta, 10 * t975(dof) * se):
            row[k] = f"{m:+.3g} [{m - h:+.3g}, {m + h:+.3g}]"
        rows[what] = {**row, "runs": len(b), "cells": n_cells}
    return pd.DataFrame.from_dict(rows, orient="index")


def scatter(dev: pd.DataFrame, sd_pct: float, out_dir: Path) -> list[Path]:
    """Goodput deviation against each kind's largest wait share, one panel per kind; the
    verdict's threshold and the clean runs' +-NOISE_SIGMAS sd band drawn."""
    kinds = [k for k in KINDS if dev[f"wait_{k}"].notna().any()]
    cols = 3
    fig, axes = plt.subplots(
        math.ceil(len(kinds) / cols), cols, figsize=(11, 3.3 * math.ceil(len(kinds) / cols)),
        sharey=True, squeeze=False,
    )  # fmt: skip
    studies = sorted(dev.study.unique())
    colors = {st: plt.cm.tab20(i % 20) for i, st in enumerate(studies)}  # > 10 studies
    kinds_of_run = {  # marker -> which runs, for the legend
        "o": ("clean", ~dev.flagged),
        "x": ("flagged, vs the clean median of its cell", dev.flagged & dev.has_clean),
        "+": ("flagged, in a cell without a clean run: vs its own median", ~dev.has_clean),
    }
    for ax, kind in zip(axes.flat, kinds):
        for study in studies:
            for marker, (_, which) in kinds_of_run.items():
                g = dev[(dev.study == study) & which]
                ax.scatter(100 * g[f"wait_{kind}"], g.dev_pct, s=14, marker=marker,
                           color=colors[study], alpha=0.75)  # fmt: skip
        ax.axvline(100 * WAIT_SHARE, color="red", ls="--", lw=1)
        ax.axhspan(-NOISE_SIGMAS * sd_pct, NOISE_SIGMAS * sd_pct, color="grey", alpha=0.15)
        ax.set_title(kind + (" (the larger of its two processes)" if kind == "linkem" else ""))
        ax.set_xlabel(f"time the {kind} waited for a core (% of the run)")
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("goodput vs its point's median (%)")
    for ax in list(axes.flat)[len(kinds) :]:
        ax.axis("off")
    handles = [Line2D([], [], ls="", marker="s", color=colors[st], label=st) for st in studies]
    handles += [Line2D([], [], ls="", marker=m, color="k", label=what) for m, (what, _) in kinds_of_run.items()]  # fmt: skip
    handles += [
        Line2D([], [], color="red", ls="--", label=f"verdict threshold ({WAIT_SHARE:.0%} wait)"),
        Patch(color="grey", alpha=0.15, label=f"clean runs' ±{NOISE_SIGMAS:g} sd ({sd_pct:.1f} %)"),
    ]
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_dir / f"cpu_effect.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight",
                    metadata={"CreationDate": None} if ext == "pdf" else None)  # fmt: skip
        paths.append(path)
    plt.close(fig)
    return paths


# ---------------------------------------------------------------- entry point
def link_late_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per study (and all): runs, CPU-flagged, clean; the runs the verdict's link rule names
    (more than LINK_LATE_SHARE of a leg's frames in windows beyond its tolerance), how many of
    them are CPU-flagged, the median run's late share (its larger leg's); then the older rule
    (worst window's p99 above linkem's goal) and the median worst window."""
    rows = {}
    for study, g in [*df.groupby("study"), ("all", df)]:
        late = g[g.link_late]
        rows[study] = {
            "runs": len(g),
            "CPU-flagged": int(g.flagged.sum()),
            "clean": int((~g.flagged).sum()),
            "link late": len(late),
            "link late, CPU-flagged": int(late.flagged.sum()),
            "late share, median (%)": 100 * g.late_share.median(),
            f"old rule: worst window > {LINK_LATE_GOAL_MS} ms": int(
                (g.late_p99_ms > LINK_LATE_GOAL_MS).sum()
            ),
            "worst window, median (ms)": g.late_p99_ms.median(),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def late_goodput_slope(df: pd.DataFrame, min_runs: int = 3) -> str:
    """Goodput (% of its cell's mean) per 10 ms of worst-window lateness, within the cells
    of >= min_runs runs (deviations from the cell means), with its 95 % CI."""
    d = df[df.late_p99_ms.notna()]
    d = d[d.groupby(CELL).goodput_mbit.transform("size") >= min_runs]
    cells = [d[c] for c in CELL]
    x = d.late_p99_ms - d.late_p99_ms.groupby(cells).transform("mean")
    y = 100 * (d.goodput_mbit / d.goodput_mbit.groupby(cells).transform("mean") - 1)
    dof = len(d) - d.groupby(CELL).ngroups - 1
    if dof < 2 or not (x**2).sum():
        return "too few runs with lateness to fit"
    beta = float((x * y).sum() / (x**2).sum())
    se = math.sqrt(((y - beta * x) ** 2).sum() / dof / (x**2).sum())
    half = t975(dof) * se
    return (
        f"{10 * beta:+.3g} % [{10 * (beta - half):+.3g}, {10 * (beta + half):+.3g}] per 10 ms "
        f"({len(d)} runs, {d.groupby(CELL).ngroups} cells)"
    )


def pooled_sd(df: pd.DataFrame) -> float:
    """The clean runs' pooled relative sd (%) over every study."""
    n = noise(df)
    dof = n.clean_runs - n.cells
    return float(math.sqrt((n.clean_sd_pct**2 * dof).sum() / dof.sum()))


def report(root: Path, out_dir: Path) -> str:
    df = load(root)
    p = pairs(df)
    dev = deviations(df)
    sd = pooled_sd(df)
    scatter(dev, sd, out_dir)
    unpaired = int(df.flagged.sum()) - len(p)
    lines = [
        (
            f"Runs: {len(df)} ({int(df.flagged.sum())} flagged, {int((~df.flagged).sum())} "
            f"clean) in {df.study.nunique()} studies; {len(p)} flagged runs paired with clean "
            f"runs of their cell, {unpaired} without a clean run in their cell."
        ),
        "",
        "Noise of identical clean runs (pooled sd around each cell's clean mean):",
        "",
        _table(noise(df).reset_index()),
        f"\nAll studies pooled: {sd:.2f} %.",
        "",
        "Flagged minus the clean mean of the same cell (mean [95 % CI] (n)):",
        "",
        _table(effect_table(p).rename_axis("flagged runs").reset_index()),
        "",
        "Cells where every run was flagged (no clean reference): the flagged runs' spread:",
        "",
        _table(unpaired_cells(df)),
        "",
        (
            "Every run of the cells with >= 3 runs, within its cell: change per 10 points of "
            "wait share (slope [95 % CI]), each kind holding the others:"
        ),
        "",
        _table(within_cell_slopes(df).rename_axis("outcome").reset_index()),
        "",
        (
            "Every run: goodput's deviation from its cell's clean median (%) by the largest "
            "wait share of each process kind:"
        ),
        "",
        _table(wait_table(dev).rename_axis("process kind").reset_index()),
        "",
        (
            "Link emulation late, re-applied to every run. The verdict's rule: more than "
            f"{LINK_LATE_SHARE:.0%} of the frames of a leg's direction passed in stats "
            "windows whose late_us p99 exceeded the direction's tolerance (the larger of "
            f"linkem's {LINK_LATE_GOAL_MS} ms goal and {LINK_LATE_DELAY_SHARE:.0%} of its "
            "delay: a downlink's one-way delay, an uplink's leg round trip). The old rule, "
            "for comparison: the worst window's p99 above the goal."
        ),
        "",
        _table(link_late_table(df).rename_axis("study").reset_index()),
        "",
        f"Goodput against the worst window's lateness within cells: {late_goodput_slope(df)}.",
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m experiments.analysis.cpu_effect",
        description="Goodput of CPU-flagged runs against clean runs of the same cell.",
    )
    parser.add_argument("results", type=input_dir, help="a results tree (folders <study>/runs/)")
    parser.add_argument("--out", type=Path, default=Path("."), help="where cpu_effect.png goes")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        print(report(args.results, args.out))
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

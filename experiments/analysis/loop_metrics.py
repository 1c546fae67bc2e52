"""Metrics of the split loops (controller and data plane): where the traffic went, how fast
it left a dead leg, and the decisions the controller took. From a run's samples (linkem's
per-interval counters; with feedback on, one interval per report period) and its manifest.
Figures: experiments/adaptation_plots.py; the report command: experiments/adaptation.py.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.analysis import metrics

LEFT_SHARE = 0.10  # a leg carrying at most this share of the DC frames has been left
LEFT_WINDOW = 10  # ... over this many linkem intervals (10 report periods: 100 ms)
LEFT_FRAMES = 5  # ... and at most this many frames in such a window (a probe's few)


def leg_frames(samples: pd.DataFrame) -> pd.DataFrame:
    """Frames the switch sent into each leg per linkem interval (linkem's counters are
    cumulative: differences of consecutive lines): columns a, b, index t_s (the end of
    each interval)."""
    rx = samples[
        (samples.source == "link")
        & samples.id.isin(["a/ab", "b/ab"])
        & (samples.metric == "rx_frames")
    ]
    table = rx.pivot_table(index="t_s", columns="id", values="value", aggfunc="last")
    table = table.rename(columns={"a/ab": "a", "b/ab": "b"}).sort_index()
    table = table.reindex(columns=["a", "b"]).ffill().fillna(0)
    return table.diff().clip(lower=0).fillna(0)


def leg_a_share(samples: pd.DataFrame, t_from: float = 0.0, t_to: float = float("inf")) -> float:
    """Leg A's share of the DC frames the switch sent in [t_from, t_to)."""
    f = leg_frames(samples)
    f = f[(f.index >= t_from) & (f.index < t_to)]
    total = f.a.sum() + f.b.sum()
    return float(f.a.sum() / total) if total else float("nan")


def outage(manifest: dict) -> tuple[str, float, float | None] | None:
    """(leg, start, end) of the first leg outage (set loss: 1) applied in the run."""
    events = manifest.get("events_applied") or []
    for i, ev in enumerate(events):
        if ev.get("set", {}).get("loss") == 1 and ev.get("link") in ("a", "b"):
            end = next(
                (
                    e["applied_at_s"]
                    for e in events[i + 1 :]
                    if e.get("link") == ev["link"] and e.get("set", {}).get("loss") == 0
                ),
                None,
            )
            return ev["link"], ev["applied_at_s"], end
    return None


def left_after_s(samples: pd.DataFrame, leg: str, t_event: float, t_end: float) -> float | None:
    """How long `leg` kept carrying traffic after t_event: from t_event to the end of the
    last window of LEFT_WINDOW intervals before t_end in which it carried more than
    LEFT_SHARE of the DC frames and more than LEFT_FRAMES frames (0: never after t_event;
    None: no traffic at all). Windows and a frame floor, so that a 2 % probe share, or a
    window that happens to fall inside one leg's part of a batch, does not count."""
    f = leg_frames(samples)
    f = f[(f.index > t_event) & (f.index <= t_end)]
    if (f.a + f.b).sum() == 0:
        return None
    w = f.rolling(LEFT_WINDOW, min_periods=1).sum()
    heavy = w[(w[leg] > LEFT_SHARE * (w.a + w.b)) & (w[leg] > LEFT_FRAMES)]
    return float(heavy.index[-1] - t_event) if not heavy.empty else 0.0


def first_decision_s(samples: pd.DataFrame, t_event: float) -> float | None:
    d = samples[(samples.source == "control") & (samples.metric == "share_a")]
    d = d[d.t_s > t_event]
    return float(d.t_s.min() - t_event) if not d.empty else None


def _last(samples: pd.DataFrame, source: str, ids, metric: str) -> pd.Series:
    """The last value of a cumulative counter per id (NaN for an id without it)."""
    rows = samples[(samples.source == source) & samples.id.isin(ids) & (samples.metric == metric)]
    return rows.sort_values("t_s").groupby("id").value.last().reindex(ids)


def where_goodput_goes(samples: pd.DataFrame, t_from: float = 1.0) -> dict:
    """What keeps a split's goodput below the legs' capacity (findings.md, loop-ratio-20):
    each leg's use of its rate from t_from to the flow's last sample (bytes sent / configured
    rate x time: below 1, the leg idled), frames the legs' queues dropped, frames the receiver gave up on
    (t-Reordering expired before they came: late to TCP, a loss all the same) and its
    expiries, and the controller's decisions (split changes). NaN where a run has no such
    samples."""
    legs = ["a/ab", "b/ab"]
    row = {}
    flow = samples[(samples.source == "flow") & (samples.metric == "bytes")]
    t_to = flow.t_s.max() if not flow.empty else float("inf")  # the legs idle after the flow
    link = samples[(samples.source == "link") & samples.id.isin(legs)]
    for leg, name in zip(legs, ("a", "b"), strict=True):
        sent = link[(link.id == leg) & (link.metric == "bytes")]
        sent = sent[(sent.t_s >= t_from) & (sent.t_s <= t_to)]
        rate = link[(link.id == leg) & (link.metric == "config.rate_mbit")].value
        span = sent.t_s.max() - sent.t_s.min() if len(sent) > 1 else 0.0
        row[f"use_{name}"] = (
            float((sent.value.max() - sent.value.min()) * 8 / (rate.iloc[-1] * 1e6 * span))
            if span > 0 and not rate.empty and rate.iloc[-1] > 0
            else float("nan")
        )
    row["queue_drops"] = float(_last(samples, "link", legs, "drops.queue").sum(min_count=1))
    agent = ["dc"]
    row["late_frames"] = float(_last(samples, "agent", agent, "out_of_window").iloc[0])
    row["expiries"] = float(_last(samples, "agent", agent, "t_reordering_expiries").iloc[0])
    decisions = samples[(samples.source == "control") & (samples.metric == "share_a")]
    row["decisions"] = len(decisions)
    return row


def loop_table(out: Path) -> pd.DataFrame:
    """One row per run: point, variant, goodput, leg A's share, outage figures."""
    rows = []
    for m in metrics.load_manifests(out):
        if m.get("status") != "ok":
            continue
        samples = metrics.load_samples(Path(out) / "runs" / m["run_id"])
        cfg = m["config"]
        flow = next(iter(m["flows"].values()))
        row = {
            "point": m.get("point"),
            "variant": m.get("variant"),
            "policy": cfg.get("control", {}).get("policy", "none"),
            "credit": cfg["dc"].get("credit", False),
            "ratio": ":".join(str(x) for x in cfg["dc"]["ratio"]),
            "goodput_mbit": flow.get("goodput_mbit"),
            "leg_a_share": leg_a_share(samples, 1.0),
            "cpu_saturated": metrics.cpu_affected(m),  # the one CPU flag; the column's old name
            **where_goodput_goes(samples, 1.0),
        }
        events = m.get("events_applied") or []
        if events:  # where the traffic went once the first change had a second to act
            row["leg_a_share_after_1st_event"] = leg_a_share(
                samples, events[0]["applied_at_s"] + 1.0
            )
        out_ev = outage(m)
        if out_ev:
            leg, start, end = out_ev
            row["left_dead_leg_s"] = left_after_s(samples, leg, start, end or start + 3)
            row["first_decision_s"] = first_decision_s(samples, start)
            g = metrics.flow_goodput_series(samples)
            window = g[(g.index >= start) & (g.index < (end or start + 3))]
            row["goodput_outage_mbit"] = (
                float(window.iloc[:, 0].mean()) if not window.empty else None
            )
        rows.append(row)
    return pd.DataFrame(rows)


# The closed loop's goal (issue 26, from the closed-loop issue): against the oracle, the best
# static split for the true leg rates, at least 95 % of its goodput and leg A's share within
# 0.05 of its share.
GOAL_GOODPUT = 0.95
GOAL_SHARE = 0.05
METHODS = ("oracle", "static", "capacity", "delay", "dataplane")  # the studies' row order
# A closed-loop study sweeps the split method (experiments/scenarios/loop_*.yaml): each point
# is a method, or a scenario and its method ("4:1/oracle").
LOOP_SWEEPS = ("loop", "ratio_loop")


def split_method(doc: dict, point) -> str | None:
    """The split method a run of a closed-loop study used (its point's last part); None for
    a run of any other study (its scenario.yaml `doc` sweeps something else)."""
    if (doc.get("sweep") or {}).get("param") not in LOOP_SWEEPS or point is None:
        return None
    return str(point).rpartition("/")[2]


def against_oracle(table: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and method, for a study with an `oracle` point (a `ratio/method` sweep:
    one scenario per ratio; a `method` sweep: the study is one scenario): mean goodput, as a
    share of the oracle's; leg A's share (after the first event + 1 s where the runs had
    events, e.g. a rate step) and its distance from the oracle's; runs and CPU-affected runs;
    and whether the goal holds (every method but the oracle). Empty without an oracle."""
    t = table.copy()
    parts = t.point.astype(str).str.rpartition("/")
    t["scenario"], t["method"] = parts[0].replace("", "-"), parts[2]
    t["share"] = t["leg_a_share"]
    if "leg_a_share_after_1st_event" in t:
        t["share"] = t["leg_a_share_after_1st_event"].fillna(t["leg_a_share"])
    t["cpu"] = t["cpu_saturated"].eq(True)
    g = t.groupby(["scenario", "method"], sort=False).agg(
        n=("goodput_mbit", "size"),
        cpu=("cpu", "sum"),
        goodput=("goodput_mbit", "mean"),
        share=("share", "mean"),
    )
    rows = []
    for scenario, grp in g.groupby(level="scenario", sort=False):
        grp = grp.droplevel("scenario")
        if "oracle" not in grp.index:
            continue
        oracle = grp.loc["oracle"]
        order = [m for m in METHODS if m in grp.index] + [m for m in grp.index if m not in METHODS]
        for method, r in grp.loc[order].iterrows():
            of_oracle = r.goodput / oracle.goodput
            distance = abs(r.share - oracle.share)
            met = of_oracle >= GOAL_GOODPUT and distance <= GOAL_SHARE
            rows.append(
                {
                    "scenario": scenario,
                    "method": method,
                    "runs": int(r.n),
                    "cpu-affected": int(r.cpu),
                    "goodput Mbit/s": r.goodput,
                    "% of oracle": 100 * of_oracle,
                    "leg A share": r.share,
                    "share off oracle's": distance,
                    f"goal >= {GOAL_GOODPUT:.0%}, <= {GOAL_SHARE}": (
                        "-" if method == "oracle" else "pass" if met else "fail"
                    ),
                }
            )
    return pd.DataFrame(rows)

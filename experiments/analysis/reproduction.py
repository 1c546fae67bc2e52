"""`dcexp report --paper DIR`: the reproduction report of a campaign of experiments/paper/.

For every study of Hasselquist et al. (PAPER.md's Table 3, plus its Table 2): our figure of
the paper's kind, what the paper reports (in our words), what we measured (mean, sd, n) and a
verdict, agree / partly / disagree, from a stated rule on the direction and rough size of
the effect the paper reports. Each verdict is computed twice: on all runs, and on the runs
in which no process of ours was short of CPU (experiments/run/cpu.py), so a reader sees whether
the machine, not the protocol, drove a conclusion. Writes DIR/reproduction.md, DIR/figures/
and DIR/reproduction.pdf.
"""

from __future__ import annotations

import json
import platform
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from dccommon.cliargs import load_yaml
from experiments.analysis import metrics, plots
from experiments.analysis.report import _in_order, _table
from experiments.run.scenario import variant_label

LEG_MBIT = 20.0  # the paper's leg rate


# ---------------------------------------------------------------- one study's data
@dataclass
class StudyData:
    name: str
    doc: dict
    manifests: list[dict]
    tput: pd.DataFrame  # one row per transport flow of a run (metrics.load_runs)
    fair: pd.DataFrame  # one row per flow of a fairness run (metrics.fairness_summary)
    order: list = field(default_factory=list)  # swept values in the scenario's order

    @property
    def param(self) -> str:
        return (self.doc.get("sweep") or {}).get("param", "run")

    def unaffected(self) -> StudyData:
        """The same study restricted to runs in which no process was short of CPU."""
        ok = {m["run_id"] for m in self.manifests if not m.get("cpu_saturated")}
        return StudyData(
            self.name,
            self.doc,
            [m for m in self.manifests if m["run_id"] in ok],
            self.tput[self.tput.run_id.isin(ok)] if not self.tput.empty else self.tput,
            self.fair[self.fair.run_id.isin(ok)] if not self.fair.empty else self.fair,
            self.order,
        )

    # goodput of the DC client per (variant, point): mean, sd, n
    def goodput(self) -> pd.DataFrame:
        t = self.tput
        if t.empty:
            return pd.DataFrame()
        t = t[(t.status == "ok") & (t.client == "dc") & (t.get("kind") != "ping")]
        if t.empty:
            return pd.DataFrame()
        g = t.groupby(["variant", "point"], sort=False).goodput_mbit.agg(["mean", "std", "count"])
        return g.reset_index()

    def jfi(self) -> pd.DataFrame:
        if self.fair.empty:
            return pd.DataFrame()
        if self.fair.empty:
            return pd.DataFrame()
        per_run = self.fair.groupby(["variant", "point", "run_id"], sort=False).jfi.first()
        g = per_run.reset_index().groupby(["variant", "point"], sort=False).jfi
        return g.agg(["mean", "std", "count"]).reset_index()

    def series(self, table: pd.DataFrame) -> dict[str, list[tuple]]:
        """variant -> [(point, mean)] in the sweep's order."""
        out = {}
        if table.empty:
            return out
        rank = {p: i for i, p in enumerate(self.order)}
        for variant, g in table.groupby("variant", sort=False):
            rows = sorted(zip(g.point, g["mean"]), key=lambda r: rank.get(r[0], len(rank)))
            out[variant] = rows
        return out


def load_study(directory: Path) -> StudyData:
    doc = load_yaml(directory / "scenario.yaml")
    order = [metrics._point_label(v) for v in (doc.get("sweep") or {}).get("values", [])]
    manifests = metrics.load_manifests(directory)
    flows = metrics.load_runs(directory) if manifests else pd.DataFrame()
    fair = metrics.fairness_summary(directory) if doc.get("figure") == "fairness" else None
    if fair is not None and not fair.empty:
        sat = {m["run_id"]: m.get("cpu_saturated", False) for m in manifests}
        fair["cpu_saturated"] = fair.run_id.map(sat)
    return StudyData(
        doc["name"], doc, manifests, flows, fair if fair is not None else pd.DataFrame(), order
    )


# ---------------------------------------------------------------- verdict rules
def _verdict(per_variant: dict[str, bool]) -> str:
    if not per_variant:
        return "not measured"
    hits = sum(per_variant.values())
    return "agree" if hits == len(per_variant) else "partly" if hits else "disagree"


def _pct(a: float, b: float) -> str:
    return f"{(b / a - 1) * 100:+.0f}%" if a else "n/a"


def _ends(rows: list[tuple]) -> tuple | None:
    return (rows[0], rows[-1]) if len(rows) >= 2 else None


def check_drop(study: StudyData, table: pd.DataFrame, min_drop: float, what: str):
    """The value falls by at least `min_drop` (relative) from the first to the last point."""
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        ends = _ends(rows)
        if ends is None:
            continue
        (p0, v0), (p1, v1) = ends
        verdicts[variant] = v1 < v0 * (1 - min_drop)
        notes.append(f"{variant}: {v0:.3g} at {p0} → {v1:.3g} at {p1} ({_pct(v0, v1)})")
    rule = f"{what} falls by more than {min_drop:.0%} from the first to the last point"
    return _verdict(verdicts), rule, notes


def check_flat(study: StudyData, table: pd.DataFrame, tolerance: float, what: str):
    """The value changes by at most `tolerance` (relative) from the first to the last point."""
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        ends = _ends(rows)
        if ends is None:
            continue
        (p0, v0), (p1, v1) = ends
        verdicts[variant] = abs(v1 / v0 - 1) <= tolerance if v0 else False
        notes.append(f"{variant}: {v0:.3g} at {p0} → {v1:.3g} at {p1} ({_pct(v0, v1)})")
    rule = f"{what} changes by at most {tolerance:.0%} from the first to the last point"
    return _verdict(verdicts), rule, notes


def check_batch(study: StudyData, table: pd.DataFrame, what: str):
    """Mid-range batches (50-200) beat large ones (500 and up) by more than 5%."""
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        mid = [v for p, v in rows if isinstance(p, (int, float)) and 50 <= p <= 200]
        large = [v for p, v in rows if isinstance(p, (int, float)) and p >= 500]
        if not mid or not large:
            continue
        verdicts[variant] = max(large) < max(mid) * 0.95
        notes.append(f"{variant}: best mid batch {max(mid):.3g}, best large {max(large):.3g}")
    rule = f"{what} at batch sizes of 500 and more is more than 5% below the best of 50-200"
    return _verdict(verdicts), rule, notes


def check_batch_fairness(study: StudyData, table: pd.DataFrame, what: str):
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        small = [v for p, v in rows if isinstance(p, (int, float)) and p <= 50]
        large = [v for p, v in rows if isinstance(p, (int, float)) and p >= 150]
        if not small or not large:
            continue
        verdicts[variant] = min(small) >= 0.95 and min(large) < min(small) - 0.02
        notes.append(f"{variant}: JFI {min(small):.3f} at small batches, {min(large):.3f} at ≥150")
    rule = "Jain's index ≥ 0.95 at batches ≤ 50 and lower by more than 0.02 at ≥ 150"
    return _verdict(verdicts), rule, notes


def check_dup(study: StudyData, table: pd.DataFrame, what: str):
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        ends = _ends(rows)
        if ends is None:
            continue
        (p0, v0), (p1, v1) = ends
        capped = v0 <= LEG_MBIT * 1.1
        steady = v1 >= v0 * 0.8
        verdicts[variant] = capped and steady
        notes.append(
            f"{variant}: {v0:.3g} Mbit/s at loss {p0} (one leg: {LEG_MBIT:g}), {v1:.3g} at {p1}"
            f" ({_pct(v0, v1)})"
        )
    rule = "goodput ≤ 1.1 × one leg's rate without loss, and at least 80% of that at the most loss"
    return _verdict(verdicts), rule, notes


def check_dup_fairness(study: StudyData, table: pd.DataFrame, what: str):
    verdicts, notes = {}, []
    for variant, rows in study.series(table).items():
        if not rows:
            continue
        verdicts[variant] = max(v for _p, v in rows) <= 0.8
        notes.append(f"{variant}: JFI " + ", ".join(f"{v:.3f} at {p}" for p, v in rows))
    rule = "Jain's index stays at or below 0.8 at every loss rate (the paper: 0.39-0.48)"
    return _verdict(verdicts), rule, notes


def check_default(study: StudyData, table: pd.DataFrame, what: str):
    means = {v: rows[0][1] for v, rows in study.series(table).items() if rows}
    verdicts, notes = {}, []
    small, large = means.get("aioquic-newreno"), means.get("aioquic-newreno-rcvbuf-large")
    if small is not None and large is not None:
        verdicts["aioquic buffer"] = small < large
        notes.append(f"aioquic NewReno: default buffer {small:.3g}, enlarged {large:.3g} Mbit/s")
    tcp = [means[v] for v in ("tcp-newreno", "tcp-cubic") if v in means]
    if large is not None and tcp:
        verdicts["QUIC like TCP"] = abs(large / (sum(tcp) / len(tcp)) - 1) <= 0.15
        notes.append(f"aioquic enlarged {large:.3g} vs TCP {sum(tcp) / len(tcp):.3g} Mbit/s")
    ng = [means[v] for v in ("ngtcp2-newreno", "ngtcp2-cubic") if v in means]
    if large is not None and ng:
        verdicts["ngtcp2 greedier"] = sum(ng) / len(ng) >= large
        notes.append(f"ngtcp2 {sum(ng) / len(ng):.3g} vs aioquic enlarged {large:.3g} Mbit/s")
    rule = (
        "aioquic gets less with the default UDP buffer than with the enlarged one; with the "
        "enlarged one within 15% of TCP; ngtcp2 at least as much as aioquic"
    )
    return _verdict(verdicts), rule, notes


# ---------------------------------------------------------------- the studies
@dataclass
class Study:
    name: str  # scenario name in experiments/paper/
    title: str
    figure: str  # the paper's figure(s)
    paper: str  # what the paper reports, in our words (PAPER.md)
    measure: str  # goodput | jfi
    check: object  # (study, table, what) -> (verdict, rule, notes)
    paper_numbers: str = ""


def _drop(min_drop):
    return lambda s, t, w: check_drop(s, t, min_drop, w)


def _flat(tol):
    return lambda s, t, w: check_flat(s, t, tol, w)


STUDIES = [
    Study(
        "paper-default",
        "Default point, every stack",
        "§ receive buffer, Table 3 defaults",
        "With the default UDP receive buffer aioquic gets less than with an enlarged one; with "
        "the enlarged buffer QUIC performs like TCP; ngtcp2 is greedier than aioquic.",
        "goodput",
        check_default,
    ),
    Study(
        "batch-size",
        "Throughput vs batch size",
        "Fig. 4(a), 4(b), 4(c); Figs. 12-19 for ngtcp2",
        "Best in the mid range (about 100-150); from about 500 packets one leg idles while "
        "the other carries the batch and throughput drops; very small batches cost a little.",
        "goodput",
        check_batch,
    ),
    Study(
        "batch-size-fairness",
        "Fairness vs batch size",
        "Fig. 5(a), time series 5(b)",
        "Small batches give Jain ≈ 1.00; from about 150 packets the SC clients take the legs "
        "during the DC client's off periods and fairness falls; the unfairness lasts ~30 s.",
        "jfi",
        check_batch_fairness,
    ),
    Study(
        "batch-split",
        "Throughput vs batch split",
        "Fig. 7(a), utilization at 9:1 Fig. 6",
        "Throughput peaks at 50/50 on equal legs and falls off convexly as the split skews; "
        "the less loaded leg never fills.",
        "goodput",
        _drop(0.10),
    ),
    Study(
        "batch-split-fairness",
        "Fairness vs batch split",
        "Fig. 8(a)",
        "A 50/50 split on symmetric legs gives Jain ≈ 1.00; a skewed split lowers it.",
        "jfi",
        _drop(0.02),
    ),
    Study(
        "bw-ratio-split-1-1",
        "Bandwidth ratio, split 1:1",
        "Fig. 7(b)",
        "With a 1:1 split, throughput falls as the legs become unequal.",
        "goodput",
        _drop(0.10),
    ),
    Study(
        "bw-ratio-split-1-1-fairness",
        "Fairness, bandwidth ratio, split 1:1",
        "Fig. 8(b)",
        "Only equal legs reach Jain 1.00; at 5:1 with a 50/50 split Jain is 0.59.",
        "jfi",
        _drop(0.05),
        "Jain 0.59 at 5:1",
    ),
    Study(
        "bw-ratio-matching",
        "Bandwidth ratio, matching split",
        "Fig. 7(c)",
        "With a split matching the bandwidths throughput stays high (small effect for TCP "
        "and for QUIC with the enlarged buffer).",
        "goodput",
        _flat(0.15),
    ),
    Study(
        "bw-ratio-matching-fairness",
        "Fairness, bandwidth ratio, matching split",
        "Fig. 8(c)",
        "At 5:1 with the matching split Jain is 0.70 (better than 0.59 with "
        "50/50); only equal legs reach 1.00.",
        "jfi",
        _drop(0.05),
        "Jain 0.70 at 5:1",
    ),
    Study(
        "delay-ratio-low",
        "Low delay ratio (sum 20 ms)",
        "Fig. 9(a)",
        "The delay ratio barely matters when the delays are small.",
        "goodput",
        _flat(0.05),
    ),
    Study(
        "delay-ratio-low-fairness",
        "Fairness, low delay ratio",
        "Fig. 10(a)",
        "Jain 0.9996 at 1:1 and 0.9986 at 5:1: hardly any change.",
        "jfi",
        _flat(0.02),
        "Jain 0.9996 → 0.9986",
    ),
    Study(
        "delay-ratio-high",
        "High delay ratio (sum 200 ms)",
        "Fig. 9(b)",
        "Throughput falls with the delay ratio; ngtcp2 gets clearly less than aioquic here "
        "(pacing differences).",
        "goodput",
        _drop(0.05),
    ),
    Study(
        "delay-ratio-high-fairness",
        "Fairness, high delay ratio",
        "Fig. 10(b)",
        "Fairness falls with the ratio: Jain 0.9903 at 1:1, 0.8758 at 5:1.",
        "jfi",
        _drop(0.02),
        "Jain 0.9903 → 0.8758",
    ),
    Study("loss", "Loss", "Fig. 9(c)", "Loss lowers throughput.", "goodput", _drop(0.10)),
    Study(
        "loss-fairness",
        "Fairness under loss",
        "Fig. 10(c)",
        "Loss hardly changes fairness.",
        "jfi",
        _flat(0.05),
    ),
    Study(
        "dup-loss",
        "Duplication with loss",
        "Fig. 11(a)",
        "Duplication caps the DC connection at one leg's capacity (about 20 Mbit/s instead "
        "of 40) but keeps it steady as loss grows; goodput X and the legs' combined "
        "throughput B relate as X = B(1+p)/2.",
        "goodput",
        check_dup,
    ),
    Study(
        "dup-loss-fairness",
        "Fairness with duplication",
        "Fig. 11(b)",
        "Fairness suffers badly (Jain 0.39-0.48 over 0-5% loss): the DC connection loses far "
        "fewer packets than the SC ones.",
        "jfi",
        check_dup_fairness,
        "Jain 0.39-0.48",
    ),
    Study(
        "trace",
        "Trace-driven legs",
        "Figs. 20-22",
        "The trace-driven runs show the same trends as the fixed-rate ones (here: large "
        "batches cost throughput).",
        "goodput",
        check_batch,
    ),
]


# ---------------------------------------------------------------- the report
DEVIATIONS = [
    "Where we differ from the paper's setup (PAPER.md), whatever the campaign's size:",
    "",
    (
        "- Testbed: network namespaces on one host, a P4 switch (p4sim, Python) numbering and "
        "splitting, linkem per leg and a DPDK agent reordering, instead of two hosts with 10 GbE "
        "links and two NFQUEUE proxies. Delay and rate are emulated the same way (normal delay "
        "mean 10 ms cv 10% and 20 Mbit/s on each downlink, no delay on the uplinks)."
    ),
    (
        "- Sweep points the paper does not list (batch 2-5000 apart from 50, 100-150 and 500; "
        "loss 0-5% in the loss study) are ours."
    ),
    "- Fairness runs download for 180 s instead of 1 GB of which the first 3 minutes count.",
    (
        "- The enlarged UDP receive buffer is implemented for aioquic only (8 MiB, "
        "SO_RCVBUFFORCE); ngtcp2 keeps the system default."
    ),
    "- aioquic CUBIC exists now (the paper had NewReno only); it is an extra line.",
    (
        "- Trace study: a synthetic LTE-like trace with the paper trace's mean (4.5 Mbit/s) on "
        "both legs, swept over the batch size only, 25 MB downloads."
    ),
    (
        "- `--quick` shrinks every study: 10 MB downloads (3 MB over the trace), 15 s fairness "
        "runs, 2-3 swept values, 2-3 protocol lines, one repetition (the overhead study 3)."
    ),
    "",
]


def _pm(mean, sd, digits: int = 2) -> str:
    """'mean ± sd'; the sd is left out when there is one run."""
    if mean is None or pd.isna(mean):
        return "-"
    return f"{mean:.{digits}f}" + ("" if sd is None or pd.isna(sd) else f" ± {sd:.{digits}f}")


def _fmt_cell(mean, sd, n, digits=3) -> str:
    if pd.isna(mean):
        return "-"
    sd_txt = "" if pd.isna(sd) else f" ± {sd:.{digits}g}"
    return f"{mean:.{digits}g}{sd_txt} (n={int(n)})"


def _measured_table(table: pd.DataFrame, study: StudyData, unit: str) -> str:
    if table.empty:
        return "(no runs)"
    rank = {p: i for i, p in enumerate(study.order)}
    points = sorted(dict.fromkeys(table.point), key=lambda p: rank.get(p, len(rank)))
    variants = list(dict.fromkeys(table.variant))
    rows = []
    for variant in variants:
        row = {"variant": variant}
        for p in points:
            hit = table[(table.variant == variant) & (table.point == p)]
            row[str(p)] = _fmt_cell(*hit.iloc[0][["mean", "std", "count"]]) if len(hit) else "-"
        rows.append(row)
    df = pd.DataFrame(rows)
    return f"{unit}, mean ± sd (n runs) per {plots.axis_label(study.param)}:\n\n" + _table(df)


def _capacity(study: StudyData) -> dict:
    """Swept value -> Mbit/s the DC client's legs offer (one leg when duplicating)."""
    out = {}
    for m in study.manifests:
        links, dc = m["config"]["links"], m["config"]["dc"]
        rates = [links[leg].get("rate_mbit") for leg in ("a", "b")]
        if None in rates:
            continue
        cap = rates[0] if dc.get("mode") == "sc" else min(rates) if dc["dup"] else sum(rates)
        out[metrics._point_label(m.get("point"))] = cap
    return out


def _figures(study: StudyData, spec: Study, directory: Path, fig_dir: Path) -> list[Path]:
    out = fig_dir / study.name
    title = f"{spec.title} ({spec.figure} of the paper)"
    figs: list[Path] = []
    variants = [variant_label(v) for v in study.doc.get("variants") or []]
    if spec.measure == "jfi":
        fair = _in_order(study.fair, study.order, variants)
        figs += plots.fairness_vs_param(fair, study.param, out, title)
        batch = [m for m in study.manifests if m["config"]["dc"]["batch"] >= 150]
        pick = plots.median_run(batch if study.param == "dc.batch" and batch else study.manifests)
        figs += plots.goodput_time_series(
            directory, pick, out, f"Goodput over time, {spec.title.lower()}", "time_series"
        )
        return figs
    summary = (
        _in_order(metrics.throughput_summary(study.tput), study.order, variants)
        if not study.tput.empty
        else pd.DataFrame()
    )
    if not summary.empty:
        if study.doc.get("sweep"):
            figs += plots.throughput_vs_param(
                summary, study.param, out, capacity=_capacity(study), title=title
            )
        else:
            figs += plots.throughput_bars(summary, out)
    examples = {
        "batch-size": [50, 500],
        "batch-split": ["90:10"],
    }.get(study.name)
    if examples:
        runs = []
        for point in examples:
            at = [m for m in study.manifests if metrics._point_label(m.get("point")) == point]
            runs.append((f"{plots.axis_label(study.param)} {point}", plots.median_run(at)))
        figs += plots.utilization_examples(
            directory, runs, out, f"Utilization of the legs, {spec.title.lower()}", "utilization"
        )
    if study.name == "dup-loss":
        dup = metrics.duplication_summary(directory)
        figs += plots.duplication(dup, study.param, out)
    return figs


def _exclusion_effect(verdict: str, clean_verdict: str) -> str:
    if clean_verdict == "not measured":
        return (
            "; too few runs were free of CPU shortage to judge without them, so this "
            "conclusion cannot be separated from the machine."
        )
    if clean_verdict == verdict:
        return "; the conclusion does not change."
    return "; excluding them changes the conclusion."


def _cpu_lines(study: StudyData) -> tuple[int, dict]:
    affected = [m for m in study.manifests if m.get("cpu_saturated")]
    procs: dict[str, int] = {}
    for m in affected:
        for name in m.get("saturated_processes") or ["a core (no process data)"]:
            role = name.split("/")[-1] if "/" in name else name
            key = f"flow {role}" if "/" in name else role
            procs[key] = procs.get(key, 0) + 1
    return len(affected), procs


def overhead_table(directory: Path) -> pd.DataFrame:
    """Per path and protocol: goodput, loaded RTT (the sender's smoothed RTT) and idle RTT
    (ping before the download), mean and sd over the runs."""
    rows = []
    for m in metrics.load_manifests(directory):
        if m["status"] != "ok":
            continue
        ping = [r for r in m["flows"].values() if r["kind"] == "ping"]
        data = [r for r in m["flows"].values() if r["kind"] != "ping"]
        if not data:
            continue
        rows.append(
            {
                "path": str(m["point"]),
                "variant": m["variant"],
                "goodput": data[0].get("goodput_mbit"),
                "rtt_load": data[0].get("rtt_ms_mean"),
                "rtt_idle": ping[0].get("rtt_ms_median") if ping else None,
                "cpu_saturated": m.get("cpu_saturated", False),
            }
        )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    order = {"sc": 0, "dc-1leg": 1, "dc-1:1": 2}
    df = df.sort_values("path", key=lambda col: col.map(lambda p: order.get(p, 9)), kind="stable")
    g = df.groupby(["path", "variant"], sort=False)
    return g.agg(
        goodput_mean=("goodput", "mean"),
        goodput_sd=("goodput", "std"),
        rtt_load_mean=("rtt_load", "mean"),
        rtt_load_sd=("rtt_load", "std"),
        rtt_idle_mean=("rtt_idle", "mean"),
        rtt_idle_sd=("rtt_idle", "std"),
        n=("goodput", "count"),
        cpu_affected=("cpu_saturated", "sum"),
    ).reset_index()


RTT_HOW = {
    "ngtcp2": "ngtcp2's smoothed RTT (server qlog)",
    "tcp": "the kernel's smoothed RTT (TCP_INFO of the sender, via iperf3)",
    "aioquic": "aioquic's smoothed RTT (client)",
    "quicgo": "quic-go's smoothed RTT (server qlog)",
}


def overhead_section(directory: Path, fig_dir: Path) -> tuple[list[str], list[Path]]:
    table = overhead_table(directory)
    if table.empty:
        return ["(the overhead study has no runs)"], []
    lines = [
        "| | paper, without proxies | paper, with proxies | cost (paper) |",
        "|---|---|---|---|",
        "| RTT (ms) | 56.01 (sd 0.62) | 58.07 (sd 0.85) | +2.06 ms |",
        "| throughput (Mbit/s) | 18.28 (sd 0.17) | 17.00 (sd 0.30) | -7.0% |",
        "",
        (
            "Ours (target: under 1% and 0.2 ms). `sc` = the switch forwards the client unnumbered "
            "on leg A, no agent; `dc-1leg` = numbered by the switch, all packets on leg A, "
            'reordered and stripped by the agent (the paper\'s "with proxies"); `dc-1:1` = the '
            "full DC default over both legs (40 Mbit/s offered, so its goodput is not a cost)."
        ),
        "",
        (
            "| protocol | path | goodput (Mbit/s) | RTT under load (ms) | RTT idle, ping (ms) | n "
            "| CPU-affected |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r.variant} | {r.path} | {_pm(r.goodput_mean, r.goodput_sd)} | "
            f"{_pm(r.rtt_load_mean, r.rtt_load_sd)} | {_pm(r.rtt_idle_mean, r.rtt_idle_sd)} | "
            f"{int(r.n)} | {int(r.cpu_affected)} |"
        )
    lines += [
        "",
        "| protocol | goodput cost | RTT cost under load | RTT cost idle | meets target |",
        "|---|---|---|---|---|",
    ]
    for variant, g in table.groupby("variant", sort=False):
        base = g[g.path == "sc"]
        dc = g[g.path == "dc-1leg"]
        if base.empty or dc.empty:
            continue
        b, d = base.iloc[0], dc.iloc[0]
        cost_t = (d.goodput_mean / b.goodput_mean - 1) * 100
        cost_l = d.rtt_load_mean - b.rtt_load_mean
        cost_i = d.rtt_idle_mean - b.rtt_idle_mean
        meets = "yes" if cost_t > -1 and cost_i < 0.2 else "no"
        lines.append(
            f"| {variant} | {cost_t:+.2f}% | {cost_l:+.2f} ms | {cost_i:+.3f} ms | {meets} |"
        )
    kinds = sorted({v.split("-")[0] for v in table.variant})
    lines += [
        "",
        "How RTT is measured: idle = median of iputils ping every 50 ms for 4 s from the "
        "client to the server before the download, through the whole path; "
        "under load = the sender's smoothed RTT averaged over the download: "
        + "; ".join(f"{k}: {RTT_HOW[k]}" for k in kinds if k in RTT_HOW)
        + ". Under load the RTT is mostly queueing (the leg's 1000 packets, and in front of "
        "a switch short of CPU its socket buffers), so its noise hides a sub-millisecond cost; "
        "the idle RTT isolates the machinery. The paper's 56 ms on "
        "a 10 ms path is an RTT under load.",
    ]
    figs = plots.overhead_bars(table, fig_dir / "overhead")
    return lines, figs


def _rel(path: Path, base: Path) -> str:
    return str(path.relative_to(base))


def write_reproduction(directory: Path) -> Path:
    """reproduction.md (and its PDF and runs.csv) of a campaign of the paper's studies: a
    verdict per study on all runs and on the CPU-unaffected ones, with figures."""
    directory = Path(directory)
    fig_dir = directory / "figures"
    campaign = {}
    if (directory / "campaign.json").exists():
        campaign = json.loads((directory / "campaign.json").read_text())
    studies = {d.name: d for d in sorted(directory.iterdir()) if (d / "scenario.yaml").exists()}
    loaded = {}
    for d in studies.values():
        s = load_study(d)
        loaded[s.name] = (s, d)
    md = _preamble(directory, campaign, loaded) + DEVIATIONS
    summary_rows, sections, figures = [], [], []
    for spec in STUDIES:
        if spec.name not in loaded:
            summary_rows.append(f"| {spec.title} | {spec.figure} | not run | - | 0 | - |")
            continue
        study, d = loaded[spec.name]
        row, lines, figs = _study_section(spec, study, d, directory, fig_dir)
        summary_rows.append(row)
        sections += lines
        figures += figs
    md += [
        "## Summary",
        "",
        (
            "| study | paper | verdict, all runs | verdict, CPU-unaffected runs | runs | "
            "CPU-affected |"
        ),
        "|---|---|---|---|---|---|",
        *summary_rows,
        "",
    ]
    if "overhead" in {s.name for s, _ in loaded.values()}:
        study, d = loaded["overhead"]
        lines, figs = overhead_section(d, fig_dir)
        figures += figs
        md += ["## Overhead of the DC machinery (the paper's Table 2)", "", *lines, ""]
        md += [f"![{p.stem}]({_rel(p, directory)})" for p in figs if p.suffix == ".png"] + [""]
    md += sections
    md += cpu_findings(loaded)
    write_runs_csv(loaded, directory / "runs.csv")
    text = "\n".join(md)
    path = directory / "reproduction.md"
    path.write_text(text)
    write_pdf(text, figures, directory / "reproduction.pdf")
    return path


def _preamble(directory: Path, campaign: dict, loaded: dict) -> list[str]:
    """The title, how the report was made (commits, host, target), the CPU-affected rule and
    the machine's load."""
    first = next((s.manifests[0] for s, _ in loaded.values() if s.manifests), {})
    commits: dict[str, int] = {}
    for s, _ in loaded.values():
        for m in s.manifests:
            key = str(m.get("git_commit", "?"))[:12] + (" (dirty)" if m.get("git_dirty") else "")
            commits[key] = commits.get(key, 0) + 1
    md = [
        (
            '# Reproducing Hasselquist et al., "QUIC Throughput and Fairness over Dual '
            'Connectivity" (MASCOTS 2020) with dc-splitter'
        ),
        "",
        (
            f"Made by `{campaign.get('command', 'dcexp campaign experiments/paper/')}` (runs "
            "per commit: "
            + ", ".join(f"`{c}` {n}" for c, n in commits.items())
            + f"), then `dcexp report --paper {directory}`. Host {first.get('host', {}).get('hostname', '?')} "
            f"({first.get('host', {}).get('cpus', '?')} CPUs, {platform.machine()}), target "
            f"{first.get('target', '?')}, links {first.get('link', '?')}, CPU pinning "
            f"{first.get('pin', 'none')}; started {campaign.get('started', '?')}, finished "
            f"{campaign.get('finished', 'not yet (resumable)')}."
        ),
        "",
        (
            "A run is *CPU-affected* when one of its processes (switch, a leg's emulator, the "
            "agent, a flow's server or client) wanted a CPU for at least 95% of a 100 ms sample in "
            "at least 25% of the samples (running or waiting to run: /proc/<pid>/task/*/schedstat). "
            "Every verdict is given on all runs and on the unaffected runs only."
        ),
        "",
    ]
    loads = sorted(
        m["loadavg_start"][0]
        for s, _ in loaded.values()
        for m in s.manifests
        if "loadavg_start" in m
    )
    if loads:
        md += [
            (
                f"Machine load (1-minute load average at the start of each run, {len(loads)} runs): "
                f"median {loads[len(loads) // 2]:.1f}, from {loads[0]:.1f} to {loads[-1]:.1f}, on "
                f"{first.get('host', {}).get('cpus', '?')} CPUs shared with other people's work."
            ),
            "",
        ]
    return md


def _study_section(spec, study, d: Path, directory: Path, fig_dir: Path):
    """One study's summary row, its section (paper, measurements, verdicts, CPU) and figures."""
    table = study.jfi() if spec.measure == "jfi" else study.goodput()
    what = "Jain's index" if spec.measure == "jfi" else "goodput of the DC client"
    verdict, rule, notes = spec.check(study, table, what)
    clean = study.unaffected()
    clean_table = clean.jfi() if spec.measure == "jfi" else clean.goodput()
    cverdict, _, cnotes = spec.check(clean, clean_table, what)
    n_aff, procs = _cpu_lines(study)
    figs = _figures(study, spec, d, fig_dir)
    row = (
        f"| [{spec.title}](#{spec.name}) | {spec.figure} | **{verdict}** | {cverdict} | "
        f"{len(study.manifests)} | {n_aff} |"
    )
    unit = "Jain's index" if spec.measure == "jfi" else "goodput of the DC client (Mbit/s)"
    sections = [
        f'## {spec.title} <a id="{spec.name}"></a>',
        "",
        f"Paper: {spec.figure}. Our scenario `{d.name}/scenario.yaml`: "
        + " ".join(str(study.doc.get("description", "")).split()),
        "",
    ]
    sections += [f"![{p.stem}]({_rel(p, directory)})" for p in figs if p.suffix == ".png"]
    sections += [
        "",
        f"**The paper reports:** {spec.paper}"
        + (f" ({spec.paper_numbers})" if spec.paper_numbers else ""),
        "",
        "**We measured:** " + _measured_table(table, study, unit),
        "",
        f"**Verdict: {verdict}.** Rule: {rule}. "
        + ("; ".join(notes) + "." if notes else "Too few swept values to apply it."),
        "",
        f"CPU: {n_aff} of {len(study.manifests)} runs CPU-affected"
        + (" (" + ", ".join(f"{k} in {v}" for k, v in sorted(procs.items())) + ")" if procs else "")
        + f". On the unaffected runs only: **{cverdict}**"
        + (f" ({'; '.join(cnotes)})" if cnotes else " (none left to judge)")
        + _exclusion_effect(verdict, cverdict),
        "",
    ]
    return row, sections, figs


def write_runs_csv(loaded: dict, path: Path) -> None:
    """One row per flow of every run: the numbers behind the report, small enough to keep
    next to it when the run directories (samples, logs) are not kept."""
    rows = []
    for study, _ in loaded.values():
        jfi = {}
        if not study.fair.empty:
            jfi = study.fair.groupby("run_id").jfi.first().to_dict()
        for m in study.manifests:
            for fid, r in m["flows"].items():
                rows.append(
                    {
                        "study": study.name,
                        "run_id": m["run_id"],
                        "point": m.get("point"),
                        "variant": m["variant"],
                        "rep": m["rep"],
                        "status": m["status"],
                        "flow": fid,
                        "client": r["client"],
                        "kind": r["kind"],
                        "goodput_mbit": r.get("goodput_mbit"),
                        "rtt_ms_mean": r.get("rtt_ms_mean"),
                        "rtt_ms_median_ping": r.get("rtt_ms_median"),
                        "jfi": jfi.get(m["run_id"]),
                        "cpu_saturated": m.get("cpu_saturated"),
                        "saturated_processes": " ".join(m.get("saturated_processes") or []),
                        "loadavg_start": (m.get("loadavg_start") or [None])[0],
                        "git_commit": str(m.get("git_commit", ""))[:12],
                    }
                )
    pd.DataFrame(rows).to_csv(path, index=False, float_format="%.4g")


def cpu_findings(loaded: dict) -> list[str]:
    total, procs, busy = 0, {}, {}
    for study, _ in loaded.values():
        for m in study.manifests:
            total += 1
            for name in m.get("saturated_processes") or []:
                key = "flow " + name.split("/")[-1] if "/" in name else name
                procs[key] = procs.get(key, 0) + 1
            for name, st in (m.get("process_cpu") or {}).items():
                key = "flow " + name.split("/")[-1] if "/" in name else name
                busy.setdefault(key, []).append((st["mean_busy"], st["mean_wait"]))
    lines = ["## CPU use of the testbed's processes (all runs)", ""]
    lines += [
        "| process | runs saturated | mean CPU used | mean CPU waited for |",
        "|---|---|---|---|",
    ]
    for key in sorted(busy):
        vals = busy[key]
        lines.append(
            f"| {key} | {procs.get(key, 0)} of {total} | "
            f"{sum(b for b, _ in vals) / len(vals):.2f} | {sum(w for _, w in vals) / len(vals):.2f} |"
        )
    lines += [
        "",
        (
            "CPU used and waited for are in CPUs (1.00 = one core for the whole run), averaged "
            'over the run including its idle start; "waited for" is time runnable but not '
            "running, i.e. what other processes (ours or other people's) took from it."
        ),
        "",
    ]
    return lines


def write_pdf(text: str, figures: list[Path], path: Path) -> None:
    """The report as a PDF: the text in pages of wrapped lines, then every figure a page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    lines = []
    for para in text.splitlines():
        if para.startswith("!["):
            continue
        lines += textwrap.wrap(para, 110) or [""]
    per_page = 70
    with PdfPages(path) as pdf:
        for start in range(0, len(lines), per_page):
            fig = plt.figure(figsize=(8.27, 11.69))
            fig.text(
                0.05,
                0.97,
                "\n".join(lines[start : start + per_page]),
                va="top",
                family="monospace",
                fontsize=6.5,
            )
            pdf.savefig(fig)
            plt.close(fig)
        for png in [p for p in figures if p.suffix == ".png"]:
            fig = plt.figure(figsize=(8.27, 11.69))
            ax = fig.add_axes([0.05, 0.3, 0.9, 0.65])
            ax.imshow(mpimg.imread(png))
            ax.axis("off")
            fig.text(0.05, 0.25, str(png.parent.name) + "/" + png.name, fontsize=8)
            pdf.savefig(fig)
            plt.close(fig)

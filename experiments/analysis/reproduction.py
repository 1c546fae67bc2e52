"""`dcexp report --paper DIR`: the reproduction report of a campaign of experiments/paper/.

For every finding of Hasselquist et al. the paper's words, the quantity compared, our value
with its 95 % CI and n, and a verdict by a rule the noise supports (findings.py); Jain's
index as the paper defines it (whole-run throughputs of the three flows, averaged over runs)
with the slot-filtered index as a secondary column; the deviations from the paper's testbed
(deviations.py); per study our figures (paper_plots.py). Every verdict is computed twice: on
all runs, and on the runs in which no process of ours was short of CPU
(experiments/run/cpu.py). Works from the run directories or, without them, from the
campaign's runs.csv (paperdata.py). Writes DIR/reproduction.md, DIR/figures/,
DIR/reproduction.pdf and (from run directories) DIR/runs.csv.
"""

from __future__ import annotations

import json
import platform
import re
import textwrap
from pathlib import Path

import pandas as pd

from experiments.analysis import deviations, findings, headline, paper_plots, plots
from experiments.analysis.paperdata import StudyData, load_campaign, write_runs_csv
from experiments.analysis.report import _table
from experiments.run.scenario import variant_label

# study -> (title, the paper's figure)
STUDIES = {
    "paper-default": ("Default point, every stack", "§ receive buffer, Table 3 defaults"),
    "batch-size": ("Throughput vs batch size", "Fig. 4(a), 4(b), 4(c); Figs. 12-19"),
    "batch-size-fairness": ("Fairness vs batch size", "Fig. 5(a), time series 5(b)"),
    "batch-split": ("Throughput vs batch split", "Fig. 7(a), utilization at 9:1 Fig. 6"),
    "batch-split-fairness": ("Fairness vs batch split", "Fig. 8(a)"),
    "bw-ratio-split-1-1": ("Bandwidth ratio, split 1:1", "Fig. 7(b)"),
    "bw-ratio-split-1-1-fairness": ("Fairness, bandwidth ratio, split 1:1", "Fig. 8(b)"),
    "bw-ratio-matching": ("Bandwidth ratio, matching split", "Fig. 7(c)"),
    "bw-ratio-matching-fairness": ("Fairness, bandwidth ratio, matching split", "Fig. 8(c)"),
    "delay-ratio-low": ("Low delay ratio (sum 20 ms)", "Fig. 9(a)"),
    "delay-ratio-low-fairness": ("Fairness, low delay ratio", "Fig. 10(a)"),
    "delay-ratio-high": ("High delay ratio (sum 200 ms)", "Fig. 9(b)"),
    "delay-ratio-high-fairness": ("Fairness, high delay ratio", "Fig. 10(b)"),
    "loss": ("Loss", "Fig. 9(c)"),
    "loss-fairness": ("Fairness under loss", "Fig. 10(c)"),
    "dup-loss": ("Duplication with loss", "Fig. 11(a)"),
    "dup-loss-fairness": ("Fairness with duplication", "Fig. 11(b)"),
    "trace": ("Trace-driven legs", "Figs. 20-22"),
}
JFI_WHOLE = (
    "Jain's index as the paper defines it: over the three clients' throughputs of the whole "
    "run (bytes over the run's length), one index per run, averaged over the runs"
)
JFI_SLOTS = (
    "slot-filtered index (secondary): over the clients' mean goodputs in the 100 ms slots in "
    "which all three receive data, which leaves out starts and stalls"
)
LEG_MBIT = 20.0


# ---------------------------------------------------------------- verdicts
def judge(studies: dict[str, StudyData]) -> dict[str, list[findings.Row]]:
    """Every finding's rows (one per stack) on these studies; 'not run' without its study."""
    values = {name: s.values() for name, s in studies.items()}
    out = {}
    for f in findings.FINDINGS:
        if f.study not in studies:
            out[f.key] = [findings.Row("-", "-", "not run", f"study {f.study} not in the data")]
        else:
            out[f.key] = f.judge(values[f.study], values)
            paper_stack = any(findings.is_paper_stack(r.variant) for r in out[f.key])
            if f.quantity == "jfi" and not paper_stack:
                why = "the paper's stack for every fairness figure is not in this study"
                out[f.key].append(findings.Row(findings.PAPER_STACK, "-", "not run", why))
    return out


def _judged(rows: list[findings.Row]) -> list[str]:
    return [r.variant for r in rows if r.verdict in ("agree", "partly", "disagree")]


def judged_stacks(rows: list[findings.Row]) -> str:
    """The stacks a finding's verdict rests on."""
    return ", ".join(_judged(rows)) or "none"


def _n_per_point(study: StudyData | None, rows: list[findings.Row]) -> str:
    """Runs per point of the stacks the verdict rests on (a difference row: both stacks);
    of every stack in the study when it rests on none."""
    if study is None:
        return "-"
    counts = study.per_run().groupby(["variant", "point"]).size()
    stacks = counts.index.get_level_values("variant")
    judged = {stack for row in _judged(rows) for stack in row.split(findings.MINUS)}
    if judged & set(stacks):
        counts = counts[stacks.isin(judged)]
    return (
        "-"
        if counts.empty
        else f"{counts.min()}" + (f"-{counts.max()}" if counts.max() != counts.min() else "")
    )


def verdict_table(studies: dict, rows: dict, clean_rows: dict) -> list[str]:
    lines = [
        (
            "| finding (the paper's words) | source | figure | verdict, all runs | verdict, "
            "CPU-unaffected runs | stacks judged | n per point |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for f in findings.FINDINGS:
        lines.append(
            f"| [“{f.quote}”](#{f.study}) | {f.source} | {f.figure} | "
            f"**{findings.combine(rows[f.key])}** | {findings.combine(clean_rows[f.key])} | "
            f"{judged_stacks(rows[f.key])} | {_n_per_point(studies.get(f.study), rows[f.key])} |"
        )
    counts = {v: 0 for v in findings.VERDICTS}
    for f in findings.FINDINGS:
        counts[findings.combine(rows[f.key])] += 1
    apart: dict[tuple, int] = {}  # (stack, why) -> findings where it has no counterpart
    for f in findings.FINDINGS:
        for r in rows[f.key]:
            if r.verdict == "no counterpart":
                apart[(r.variant, r.note)] = apart.get((r.variant, r.note), 0) + 1
    lines += [
        "",
        "Verdicts over the findings: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + ". Stacks reported but not judged (no counterpart): "
        + (
            "; ".join(f"{v} in {n} findings ({why})" for (v, why), n in sorted(apart.items()))
            or "none"
        )
        + ". Rules (findings.py): a difference counts when Welch's 95 % CI of it excludes "
        "0 (partly: not significant either way; disagree: significant against the paper); "
        'a value the paper states agrees when it lies in our 95 % CI; "no change" agrees when the CI of the change lies '
        "within the stated tolerance. A finding's verdict combines the stacks the paper ran "
        "for that figure (all agree: agree; all disagree: disagree; else partly); stacks it "
        "did not run (TCP in fairness, aioquic CUBIC) are shown as no counterpart. CIs are "
        "Student's t intervals, clipped where they cross a quantity's range (goodput 0 and "
        'up, Jain\'s index 1/3 to 1) and then marked "CI clipped at" the bound; the figures '
        "draw them clipped too.",
        "",
    ]
    return lines


def finding_details(study: StudyData, rows: dict) -> list[str]:
    lines = []
    for f in [f for f in findings.FINDINGS if f.study == study.name]:
        lines += [
            f"**Finding `{f.key}`:** “{f.quote}” ({f.source}, {f.figure}). Quantity: "
            + ("whole-run Jain's index" if f.quantity == "jfi" else "DC client's goodput (Mbit/s)")
            + f". Rule: {f.rule}. **Verdict: {findings.combine(rows[f.key])}.**",
            "",
            "| stack | ours: mean [95 % CI] (n runs) | verdict | note |",
            "|---|---|---|---|",
            *[f"| {r.variant} | {r.ours} | {r.verdict} | {r.note} |" for r in rows[f.key]],
            "",
        ]
    return lines


# ---------------------------------------------------------------- per study
def measured_table(study: StudyData, column: str = "value") -> str:
    """variant x point: 'mean [CI] (n=..)'."""
    table = study.table(column)
    if table.empty:
        return "(no runs)"
    points = [p for p in study.order if p in set(table.point)] or list(dict.fromkeys(table.point))
    rows = []
    for variant, g in table.groupby("variant", sort=False):
        row = {"stack": paper_plots.stack_name(variant)}
        for p in points:
            hit = g[g.point == p]
            row[str(p)] = (
                hit.iloc[0].estimate.text() if len(hit) else "-"  # a point this stack missed
            )
        rows.append(row)
    return _table(pd.DataFrame(rows))


def _capacity(study: StudyData) -> dict:
    """Swept value -> Mbit/s the DC client's legs offer (one leg when duplicating), from the
    scenario as it ran."""
    from experiments.run.scenario import ScenarioError, expand

    out = {}
    try:
        runs = expand(study.doc)
    except ScenarioError:  # a trace leg whose file is not here: no fixed capacity anyway
        return out
    for run in runs:
        links, dc = run.config["links"], run.config["dc"]
        rates = [links[leg].get("rate_mbit") for leg in ("a", "b")]
        if None in rates:
            continue
        cap = rates[0] if dc.get("mode") == "sc" else min(rates) if dc["dup"] else sum(rates)
        out[plots.metrics._point_label(run.point)] = cap
    return out


# the paper's values drawn on its figures: study -> ([(point, value, label)], [hlines])
PAPER_MARKS = {
    "bw-ratio-split-1-1-fairness": ([("5:1", 0.59, "paper (aioquic NewReno): 0.59")], []),
    "bw-ratio-matching-fairness": ([("5:1", 0.70, "paper (aioquic NewReno): 0.70")], []),
    "delay-ratio-low-fairness": (
        [("1:1", 0.9996, "paper (aioquic NewReno)"), ("5:1", 0.9986, None)],
        [],
    ),
    "delay-ratio-high-fairness": (
        [("1:1", 0.9903, "paper (aioquic NewReno)"), ("5:1", 0.8758, None)],
        [],
    ),
    "dup-loss-fairness": ([], [(0.39, 0.48, "paper (aioquic NewReno): 0.39-0.48")]),
}


def study_figures(study: StudyData, studies: dict, fig_dir: Path) -> tuple[list[Path], list[str]]:
    """The study's figures and notes on those that need the run directories."""
    title, figure = STUDIES.get(study.name, (study.name, ""))
    out = fig_dir / study.name
    head = f"{title} ({figure} of the paper)"
    figs: list[Path] = []
    notes = []
    if study.measure == "jfi":
        refs, bands = PAPER_MARKS.get(study.name, ([], []))
        figs += paper_plots.vs_param(
            study.table(), study.param, out, "fairness_vs_param",
            f"{head}\nJain's index over whole-run throughputs (the paper's definition)",
            "Jain's index over DC, SC-A, SC-B (whole run)",
            refs=[r if r[2] else (r[0], r[1], "_") for r in refs],
            hlines=[(1 / 3, "1/3: one client takes everything"), *bands],
            quantity="jfi",
        )  # fmt: skip
        figs += paper_plots.clients_vs_param(study.flows, study.order, study.param, out, head)
    elif study.doc.get("sweep"):
        cap = _capacity(study)
        extra = None
        if study.name == "dup-loss" and "loss" in studies:
            extra = {"split, loss study: ": studies["loss"].table()}
        figs += paper_plots.vs_param(
            study.table(), study.param, out, "throughput_vs_param", head,
            "goodput of the DC client (Mbit/s)",
            hlines=[(c, f"capacity of the legs: {c:g} Mbit/s") for c in sorted(set(cap.values()))],
            extra=extra,
        )  # fmt: skip
    else:
        figs += paper_plots.vs_param(
            study.table(), study.param, out, "throughput_bars", head,
            "goodput of the DC client (Mbit/s)", hlines=[(2 * LEG_MBIT, "both legs: 40 Mbit/s")],
        )  # fmt: skip
    drawn, why = sample_figures(study, out, title)
    figs += drawn
    notes += why
    return figs, notes


def sample_figures(study: StudyData, out: Path, title: str) -> tuple[list[Path], list[str]]:
    """Time series and utilization examples: from the run directories; without them the
    figures drawn when the campaign ran are kept (listed) when present."""
    names = []
    if study.measure == "jfi":
        names.append("time_series")
    examples = {"batch-size": [50, 500], "batch-split": ["90:10"]}.get(study.name)
    if examples:
        names.append("utilization")
    if not study.has_samples:
        kept = [out / f"{n}.png" for n in names if (out / f"{n}.png").exists()]
        note = (
            [
                "Time series and utilization figures need the run directories (samples), "
                "which are not kept with runs.csv: "
                + (
                    "the ones drawn when the campaign was reported are shown."
                    if kept
                    else "not drawn."
                )
            ]
            if names
            else []
        )
        return kept, note
    figs: list[Path] = []
    if study.measure == "jfi":
        batch = [m for m in study.manifests if m["config"]["dc"]["batch"] >= 150]
        pick = plots.median_run(batch if study.param == "dc.batch" and batch else study.manifests)
        figs += plots.goodput_time_series(
            study.directory, pick, out, f"Goodput over the whole run, {title.lower()}",
            "time_series",
        )  # fmt: skip
    if examples:
        runs = []
        for point in examples:
            at = [m for m in study.manifests if plots.metrics._point_label(m.get("point")) == point]
            runs.append((f"{plots.axis_label(study.param)} {point}", plots.median_run(at)))
        figs += plots.utilization_examples(
            study.directory, runs, out, f"Utilization of the legs, {title.lower()}", "utilization"
        )
    return figs, []


def study_section(study, studies, rows, clean_rows, directory: Path, fig_dir: Path):
    title, figure = STUDIES.get(study.name, (study.name, ""))
    figs, notes = study_figures(study, studies, fig_dir)
    n_runs = study.runs().shape[0]
    n_aff = int(study.runs().cpu_saturated.sum())
    lines = [
        f'## {title} <a id="{study.name}"></a>',
        "",
        f"Paper: {figure}. Our scenario `{study.name}/scenario.yaml`: "
        + " ".join(str(study.doc.get("description", "")).split()),
        "",
        as_run(study),
        "",
        *[f"Run as `{command}`." for command in study.commands],
        *[""] * bool(study.commands),
        *[f"![{p.stem}]({p.relative_to(directory)})" for p in figs if p.suffix == ".png"],
        "",
        *notes,
        "",
    ]
    if study.measure == "jfi":
        lines += [
            (
                f"**We measured** ({JFI_WHOLE}), mean [95 % CI] (n runs) per "
                f"{plots.axis_label(study.param)}:"
            ),
            "",
            measured_table(study),
            "",
            f"For comparison, the {JFI_SLOTS}:",
            "",
            measured_table(study, "jfi_slots"),
            "",
        ]
    else:
        lines += [
            (
                "**We measured:** goodput of the DC client (Mbit/s), mean [95 % CI] (n runs) per "
                f"{plots.axis_label(study.param)}:"
            ),
            "",
            measured_table(study),
            "",
        ]
    lines += finding_details(study, rows)
    procs = {}
    for names in study.flows.drop_duplicates("run_id").saturated_processes.dropna():
        for name in str(names).split():
            key = "flow " + name.split("/")[-1] if "/" in name else name
            procs[key] = procs.get(key, 0) + 1
    verdicts = [
        (f.key, findings.combine(rows[f.key]), findings.combine(clean_rows[f.key]))
        for f in findings.FINDINGS
        if f.study == study.name
    ]
    changed = [f"{key} ({a} → {b})" for key, a, b in verdicts if a != b]
    lines += [
        f"CPU: {n_aff} of {n_runs} runs CPU-affected"
        + (" (" + ", ".join(f"{k} in {v}" for k, v in sorted(procs.items())) + ")" if procs else "")
        + (
            f"; without them the verdict changes for: {', '.join(changed)}."
            if changed
            else "; without them no verdict changes."
        ),
        "",
    ]
    return lines + rcvbuf_drops_lines(study), figs


def rcvbuf_drops_lines(study: StudyData) -> list[str]:
    """The DC client's socket-buffer drops per stack and point, for the runs that counted
    them, when any run dropped: losses the link emulation did not make (docs/testbed.md)."""
    runs = study.flows.drop_duplicates("run_id")
    counts = pd.to_numeric(runs.dc_client_rcvbuf_drops, errors="coerce")
    counted = runs.assign(drops=counts)[counts.notna()]
    if not (counted.drops > 0).any():
        return []
    rank = {p: i for i, p in enumerate(study.order)}
    parts = []
    for variant, g in counted.groupby("variant", sort=False):
        points = sorted(g.groupby("point", sort=False), key=lambda kv: rank.get(kv[0], len(rank)))
        per_point = "; ".join(
            f"{headline.point_text(p)}: {d.drops.mean():.0f} ("
            + (f"{d.drops.min():.0f} to {d.drops.max():.0f}, " if d.drops.nunique() > 1 else "")
            + f"n={len(d)})"
            for p, d in points
        )
        parts.append(f"{variant}: {per_point}")
    missing = len(runs) - len(counted)
    return [
        "Datagrams the DC client's socket dropped for a full receive buffer (Udp "
        "RcvbufErrors), mean (range, n runs) per stack and point: "
        + " | ".join(parts)
        + (
            f". Not counted in {missing} runs saved before the counter was read."
            if missing
            else "."
        ),
        "",
    ]


def as_run(study: StudyData) -> str:
    """What the study's runs were, whatever its description says (a profile shrinks them)."""
    doc = study.doc
    flows = [f for f in doc.get("flows") or [] if f.get("kind") != "ping"]
    sizes = sorted({f"{f['size_mb']:g} MB" for f in flows if f.get("size_mb")})
    lengths = sorted({f"{f['duration_s']:g} s" for f in flows if f.get("duration_s")})
    what = ", ".join(
        [f"downloads of {' / '.join(sizes)}"] * bool(sizes)
        + [f"runs of {' / '.join(lengths)}"] * bool(lengths)
    )
    # The stacks with runs in the data, in the file's order (`dcexp run --variant` runs a
    # subset of the file's variants).
    ran = set(study.flows["variant"]) if "variant" in study.flows else set()
    stacks = ", ".join(
        label for label in map(variant_label, doc.get("variants") or []) if label in ran
    )
    # the sweep's points that ran (a profile or --point may run a subset)
    present = set(study.runs().point)
    order = [p for p in study.order if p in present] or study.order
    points = f" at each of {', '.join(str(p) for p in order)}" if order else ""
    return f"As run: {what}; {_repetitions(study)} repetitions{points}; stacks {stacks}."


def _repetitions(study: StudyData) -> str:
    """Runs per point and stack as the data holds them: the scenario file records only the
    first pass's --reps when later passes (more repetitions, another stack) joined it."""
    runs = study.runs()
    if runs.empty:
        return str(study.doc.get("repetitions", 1))
    per_cell = runs.groupby(["point", "variant"]).run_id.nunique()
    low, high = int(per_cell.min()), int(per_cell.max())
    return str(low) if low == high else f"{low} to {high}"


def overhead_table(study: StudyData) -> pd.DataFrame:
    """Per path and protocol: goodput, loaded RTT (the sender's smoothed RTT) and idle RTT
    (ping before the download), mean and sd over the runs."""
    f = study.flows[study.flows.status == "ok"]
    rows = []
    for run_id, g in f.groupby("run_id", sort=False):
        ping = g[g.kind == "ping"]
        data = g[g.kind != "ping"]
        if data.empty:
            continue
        rows.append(
            {
                "path": str(data.iloc[0].point),
                "variant": data.iloc[0].variant,
                "goodput": data.iloc[0].goodput_mbit,
                "rtt_load": data.iloc[0].rtt_ms_mean,
                "rtt_idle": ping.iloc[0].rtt_ms_median_ping if len(ping) else None,
                "cpu_saturated": bool(data.iloc[0].cpu_saturated),
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


def _pm(mean, sd, digits: int = 2) -> str:
    """'mean ± sd'; the sd is left out when there is one run."""
    if mean is None or pd.isna(mean):
        return "-"
    return f"{mean:.{digits}f}" + ("" if sd is None or pd.isna(sd) else f" ± {sd:.{digits}f}")


RTT_HOW = {
    "ngtcp2": "ngtcp2's smoothed RTT (server qlog)",
    "tcp": "the kernel's smoothed RTT (TCP_INFO of the sender, via iperf3)",
    "aioquic": "aioquic's smoothed RTT (client)",
    "quicgo": "quic-go's smoothed RTT (server qlog)",
}


def overhead_section(study: StudyData, fig_dir: Path) -> tuple[list[str], list[Path]]:
    table = overhead_table(study)
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
    figs = plots.overhead_bars(table, fig_dir / "overhead", stack_label=paper_plots.stack_name)
    return lines, figs


# ---------------------------------------------------------------- the report
def write_reproduction(directory: Path) -> Path:
    """reproduction.md (and its PDF) of a campaign of the paper's studies: the verdict table,
    the deviations, the overhead table and a section per study, on all runs and on the
    CPU-unaffected ones, with figures; runs.csv rewritten from what was loaded."""
    directory = Path(directory)
    fig_dir = directory / "figures"
    campaign = {}
    if (directory / "campaign.json").exists():
        campaign = json.loads((directory / "campaign.json").read_text())
    studies = load_campaign(directory)
    clean = {name: s.unaffected() for name, s in studies.items()}
    rows, clean_rows = judge(studies), judge(clean)
    md = _preamble(directory, campaign, studies)
    md += ["## Verdicts", "", *verdict_table(studies, rows, clean_rows)]
    md += deviations.section(studies, list(_profiles(campaign, studies)))
    figures: list[Path] = []
    if "overhead" in studies:
        lines, figs = overhead_section(studies["overhead"], fig_dir)
        figures += figs
        md += ["## Overhead of the DC machinery (the paper's Table 2)", "", *lines, ""]
        md += [f"![{p.stem}]({p.relative_to(directory)})" for p in figs if p.suffix == ".png"]
        md += [""]
    for name in STUDIES:
        if name not in studies:
            md += [f"## {STUDIES[name][0]}", "", "Not run in this campaign.", ""]
            continue
        lines, figs = study_section(studies[name], studies, rows, clean_rows, directory, fig_dir)
        md += lines
        figures += figs
    md += cpu_findings(studies)
    write_runs_csv(studies, directory / "runs.csv")
    text = "\n".join(md)
    path = directory / "reproduction.md"
    path.write_text(text)
    write_pdf(text, figures, directory / "reproduction.pdf")
    return path


def _pinning(studies: dict) -> str:
    """The CPU placement the runs used: one word, or per placement the studies that ran so."""
    pins: dict[str, list[str]] = {}
    for name, study in studies.items():
        if study.manifests:
            pins.setdefault(study.manifests[0].get("pin", "none"), []).append(name)
    if len(pins) <= 1:
        return next(iter(pins), "none")
    return "; ".join(f"{pin} ({', '.join(names)})" for pin, names in pins.items())


def _preamble(directory: Path, campaign: dict, studies: dict) -> list[str]:
    """The title, how the report was made (commits, host, target), the campaign's profile,
    the CPU-affected rule and the machine's load."""
    runs = pd.concat([s.flows.drop_duplicates("run_id") for s in studies.values()])
    commits = runs.git_commit.fillna("?").astype(str).value_counts(sort=False)
    first = next((s.manifests[0] for s in studies.values() if s.manifests), {})
    host = first.get("host", {})
    affected = int(runs.cpu_saturated.sum())
    md = [
        (
            '# Reproducing Hasselquist et al., "QUIC Throughput and Fairness over Dual '
            'Connectivity" (MASCOTS 2020) with dc-splitter'
        ),
        "",
        (
            f"Made by {_made_by(campaign, studies)}, then `dcexp report --paper {directory}` "
            "(runs per commit: "
            + ", ".join(f"`{c}` {n}" for c, n in commits.items())
            + ")"
            + (
                f" on host {host.get('hostname', '?')} ({host.get('cpus', '?')} CPUs, "
                f"{platform.machine()}), target {first.get('target', '?')}, links "
                f"{first.get('link', '?')}, CPU pinning {_pinning(studies)}"
                if first
                else " from the campaign's runs.csv (the run directories are not kept)"
            )
            + f"; profile {_profile_text(_profiles(campaign, studies))}"
            + (
                f"; started {campaign.get('started', '?')}, finished "
                f"{campaign.get('finished', 'not yet (resumable)')}."
                if campaign
                else "."
            )
        ),
        "",
        (
            "A run is *CPU-affected* when one of its processes (switch, a leg's emulator, the "
            "agent, a flow's server or client) wanted a CPU for at least 95% of a 100 ms sample in "
            "at least 25% of the samples (running or waiting to run: /proc/<pid>/task/*/schedstat), "
            'or, for runs saved since the run verdict (docs/testbed.md, "What limited a run"), '
            "when a thread waited for a core 25 % of the time, ran at 95 % of one, or every core "
            "was 95 % busy. A flow's sender is not judged after its last write, in runs saved "
            "since that rule (iperf3 3.12 then polls its socket at a full core until the "
            "receiver has everything: docs/output-files.md, CPU guard). "
            f"{affected} of {len(runs)} runs were; every verdict is given on all "
            "runs and on the unaffected runs only."
        ),
        "",
        f"Fairness: {JFI_WHOLE}. Each fairness study also shows the {JFI_SLOTS}.",
        "",
    ]
    loads = sorted(runs.loadavg_start.dropna().astype(float))
    if loads:
        md += [
            (
                f"Machine load (1-minute load average at the start of each run, {len(loads)} runs): "
                f"median {loads[len(loads) // 2]:.1f}, from {loads[0]:.1f} to {loads[-1]:.1f}."
            ),
            "",
        ]
    return md


def _made_by(campaign: dict, studies: dict) -> str:
    """The command that made the runs: the campaign's, or one `dcexp run` per study."""
    if campaign.get("command"):
        return f"`{campaign['command']}`"
    if any(s.commands for s in studies.values()):
        return "one `dcexp run` per study (each in its section)"
    return "`dcexp` runs whose commands were not recorded"


def _profiles(campaign: dict, studies: dict) -> dict[str, list[str]]:
    """The size profile of the runs and the studies run with it: the campaign's, or each
    study's own from its study.json."""
    if campaign.get("profile") or campaign.get("quick"):
        return {str(campaign.get("profile") or "quick"): list(studies)}
    profiles: dict[str, list[str]] = {}
    for name, study in studies.items():
        profile = study.study_record.get("profile", "as the files are written")
        profiles.setdefault(profile, []).append(name)
    return profiles or {"as the files are written": []}


def _profile_text(profiles: dict[str, list[str]]) -> str:
    if len(profiles) == 1:
        return next(iter(profiles))
    return "; ".join(f"{profile} ({', '.join(names)})" for profile, names in profiles.items())


def cpu_findings(studies: dict) -> list[str]:
    manifests = [m for s in studies.values() for m in s.manifests]
    if not manifests:
        return [
            "## CPU use of the testbed's processes",
            "",
            (
                "Per-process CPU use is in the run directories' manifests, not kept with runs.csv; "
                "runs.csv has each run's CPU verdict and the processes that were short of CPU."
            ),
            "",
        ]
    total, procs, busy = len(manifests), {}, {}
    for m in manifests:
        for name in m.get("saturated_processes") or []:
            key = "flow " + name.split("/")[-1] if "/" in name else name
            procs[key] = procs.get(key, 0) + 1
        for name, st in (m.get("process_cpu") or {}).items():
            key = "flow " + name.split("/")[-1] if "/" in name else name
            busy.setdefault(key, []).append((st["mean_busy"], st["mean_wait"]))
    with_dirs = [name for name, s in studies.items() if s.manifests]
    every_run = sum(s.runs().shape[0] for s in studies.values())
    scope = (
        "all runs"
        if total == every_run
        else f"the {total} runs whose directories are here: {', '.join(with_dirs)}"
    )
    lines = [f"## CPU use of the testbed's processes ({scope})", ""]
    if total < every_run:
        lines += [
            (
                "Per-process CPU use is in the run directories' manifests, which runs.csv does "
                "not keep; runs.csv has every run's CPU verdict and the processes that were short "
                "of CPU."
            ),
            "",
        ]
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


def _pdf_text(markdown: str) -> list[str]:
    """The report's lines for a page of monospace text: a table row, too wide to wrap
    legibly, becomes its first cell and then one indented 'column: value' line per cell."""
    out, header = [], None
    for line in markdown.splitlines():
        if line.startswith("!["):
            continue
        line = re.sub(r"\[([^]]*)\]\(#[^)]*\)", r"\1", line).replace("**", "")  # links, bold
        if not line.startswith("|"):
            out.append(line)
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not all(set(c) <= set("-: ") for c in cells):
            out.append("* " + cells[0])
            out += [f"    {h}: {c}" for h, c in zip(header[1:], cells[1:]) if c]
    return out


def write_pdf(text: str, figures: list[Path], path: Path) -> None:
    """The report as a PDF: the text in pages of wrapped lines, then every figure a page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    lines = []
    for para in _pdf_text(text):
        lines += textwrap.wrap(para, 110, subsequent_indent="      " if para[:1] == " " else "")
        lines += [] if para.strip() else [""]
    per_page = 70
    with PdfPages(path, metadata={"CreationDate": None}) as pdf:
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

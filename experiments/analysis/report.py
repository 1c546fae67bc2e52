"""`dcexp report DIR`: the summary table, figures (PNG + PDF) and DIR/summary.md."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from experiments.analysis import envelope, handover, headline, metrics, plots
from experiments.run.scenario import variant_label


def _table(df: pd.DataFrame, floatfmt: str = "{:.2f}") -> str:
    """A markdown table without extra dependencies (pandas' to_markdown needs tabulate)."""
    if df.empty:
        return "(no data)"
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        cells = []
        for i, c in enumerate(cols):
            v = row[c]
            if isinstance(v, float):
                # the first column is the swept value: shown as given (0.001 is not 0.00)
                cells.append("-" if pd.isna(v) else f"{v:g}" if i == 0 else floatfmt.format(v))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _in_order(df: pd.DataFrame, order: list, variants: list) -> pd.DataFrame:
    """Rows in the scenario's sweep and variant order (run directories sort as strings)."""
    if df.empty or "point" not in df:
        return df
    rank = {p: i for i, p in enumerate(order)}
    vrank = {v: i for i, v in enumerate(variants)}
    return df.sort_values(
        ["point", "variant"],
        kind="stable",
        key=lambda col: col.map(
            lambda v: (rank if col.name == "point" else vrank).get(v, len(rank) + len(vrank))
        ),
    ).reset_index(drop=True)


def _envelope_heading(doc: dict, point) -> str:
    sweep = doc.get("sweep")
    at = (
        f" at {sweep['param']} = {point if point is not None else sweep['values'][0]}"
        if sweep
        else ""
    )
    return (
        f"## Performance envelopes against TCP{at} (QUICbench: conformance = share of the "
        "variant's envelope points inside TCP's envelope; deviation = distance of the means, "
        "relative to TCP's)"
    )


def _envelope_point(doc: dict, point):
    """The swept value of the envelopes: the one asked for, else the first."""
    values = (doc.get("sweep") or {}).get("values") or [None]
    if point is None:
        return values[0]
    if str(point) not in {str(v) for v in values}:
        raise ValueError(
            f"--envelope-point {point!r} is not a swept value of this study "
            f"(allowed: {', '.join(str(v) for v in values)})"
        )
    return point


def _envelopes(out: Path, doc: dict, variants: list, point, fig_dir: Path):
    """QUICbench's envelopes of every variant against TCP at one swept value: (table, figures).
    Nothing when the study has no TCP variant to compare against."""
    reference = envelope.reference_variant(variants)
    if reference is None or len(variants) < 2:
        return pd.DataFrame(), []
    point = _envelope_point(doc, point)
    clouds = envelope.variant_clouds(out, point)
    if reference not in clouds:
        return pd.DataFrame(), []
    rank = {v: i for i, v in enumerate(variants)}
    clouds = dict(sorted(clouds.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    table = envelope.envelope_table(clouds, reference)
    return table, plots.envelopes(clouds, reference, point, fig_dir)


def _schedulers(flows: pd.DataFrame) -> list[str]:
    """Which multipath scheduler each MPTCP and MPQUIC variant ran (the kernel may offer only
    MPTCP's `default`), so that no table is read as a scheduler it did not run."""
    if "scheduler" not in flows or flows.scheduler.dropna().empty:
        return []
    ran = flows.dropna(subset=["scheduler"]).groupby(["variant", "kind"], sort=False)
    lines = [f"- {v} ({k}): {', '.join(sorted(set(g.scheduler)))}" for (v, k), g in ran]
    return ["Multipath schedulers that ran:", "", *lines, ""]


def report(out: Path, envelope_point=None) -> tuple[str, list[Path]]:
    """summary.md and figures/ of a study's saved runs; returns what to print (the goodput
    table, fairness and envelopes when present) and the figures drawn."""
    out = Path(out)
    doc = metrics.load_saved_scenario(out)
    param = (doc.get("sweep") or {}).get("param", "run")
    _envelope_point(doc, envelope_point)  # a bad point fails before any figure is drawn
    fig_dir = out / "figures"
    manifests = metrics.load_manifests(out)
    flows = metrics.load_runs(out)
    order = [metrics._point_label(v) for v in (doc.get("sweep") or {}).get("values", [])]
    variants = [variant_label(v) for v in doc.get("variants") or []]
    summary = _in_order(metrics.throughput_summary(flows), order, variants)
    fair = _in_order(metrics.fairness_summary(out), order, variants)
    dup = _in_order(metrics.duplication_summary(out), order, variants)
    reord = _in_order(metrics.reordering_summary(out), order, variants)
    hand_runs = handover.handover_table(out)
    hand = _in_order(handover.summary(hand_runs), order, variants)
    head = headline.table(headline.study_runs(out, hand_runs, metrics.fairness_summary(out)))

    figures = _draw_figures(out, doc, param, manifests, summary, fair, dup, variants, fig_dir)
    env, env_figures = _envelopes(out, doc, variants, envelope_point, fig_dir)
    figures += env_figures

    failed = [m for m in manifests if m["status"] != "ok"]
    saturated = [m["run_id"] for m in manifests if metrics.cpu_affected(m)]
    table = summary.rename(columns={"point": param}) if not summary.empty else summary
    f = _fairness_table(fair, param)
    parts = _provenance_lines(doc, out, manifests, failed, saturated)
    parts += _table_sections(table, f, dup, reord, param, _schedulers(flows))
    parts += _handover_section(hand, param)
    parts += ["## Headline across transports (issue 26)", "", _table(head), "", headline.NOTE, ""]
    if not env.empty:
        parts += [_envelope_heading(doc, envelope_point), "", _table(env, "{:.3f}"), ""]
    if failed:
        parts += (
            ["## Failed runs", ""]
            + [f"- {m['run_id']}: {'; '.join(m['errors'])}" for m in failed]
            + [""]
        )
    if saturated:
        parts += ["## CPU-affected runs", ""] + [f"- {r}" for r in saturated] + [""]
    parts += (
        ["## Figures", ""]
        + [f"![{p.stem}](figures/{p.name})" for p in figures if p.suffix == ".png"]
        + [""]
    )
    text = "\n".join(parts)
    (out / "summary.md").write_text(text)
    # What is printed: the goodput table (plus fairness when present).
    printed = [
        (
            f"{doc.get('name', out.name)}: {len(manifests)} runs ({len(failed)} failed, "
            f"{len(saturated)} CPU-affected)"
        ),
        "",
        _table(table),
    ]
    if f is not None:
        printed += ["", _table(f, "{:.3f}")]
    if not env.empty:
        printed += ["", _envelope_heading(doc, envelope_point), "", _table(env, "{:.3f}")]
    printed += ["", f"summary: {out / 'summary.md'}"]
    return "\n".join(printed), figures


def _draw_figures(out, doc, param, manifests, summary, fair, dup, variants, fig_dir) -> list:
    """The study's figures but the envelopes: goodput, fairness, SFA, legs, time series."""
    figures: list[Path] = []
    if doc.get("sweep"):
        figures += plots.throughput_vs_param(summary, param, fig_dir)
    elif len(fair) == 0:
        figures += plots.throughput_bars(summary, fig_dir)
    figures += plots.fairness_bars(fair, fig_dir)
    figures += plots.sfa_map(fair, param, fig_dir)
    figures += plots.link_utilization(out, manifests, fig_dir, variants)
    figures += plots.throughput_over_time(out, manifests, fig_dir)
    if doc.get("events"):
        figures += plots.timeline_per_variant(out, manifests, fig_dir, variants)
    if not dup.empty and dup.dup.any():
        figures += plots.duplication(dup, param, fig_dir)
    return figures


def _provenance_lines(doc, out: Path, manifests, failed, saturated) -> list[str]:
    """The summary's title, description, commit and tools, and the run counts."""
    scaled = f" (rates / {doc['scale']:g})" if doc.get("scale", 1) != 1 else ""
    parts = [f"# {doc.get('name', out.name)}{scaled}", "", doc.get("description", "").strip(), ""]
    if manifests:
        m0 = manifests[0]
        parts += [
            f"Commit {m0.get('git_commit', '?')[:12]}"
            f"{' (dirty tree)' if m0.get('git_dirty') else ''}, target {m0['target']}, "
            f"links {m0['link']}, host {m0['host']['hostname']} "
            f"({m0['host']['cpus']} CPUs); tools: "
            + ", ".join(f"{k} {v}" for k, v in m0["tools"].items()),
            "",
        ]
    parts += [
        (
            f"{len(manifests)} runs, {len(failed)} failed, {len(saturated)} CPU-affected (a "
            "process of ours short of a core, or every core busy: these measure the machine as "
            "much as the protocol)."
        ),
        "",
    ]
    return parts


def _handover_section(hand: pd.DataFrame, param: str) -> list[str]:
    """Recovery time and bytes stalled per variant through the study's leg event."""
    if hand.empty:
        return []
    return [
        "## Handover: recovery after the leg event (mean [95 % CI] (n))",
        "",
        _table(hand.rename(columns={"point": param})),
        "",
        (
            f"recovery s: from the end of the event (the outage's end, the stepdown's step) to "
            f"the start of the first {handover.SUSTAIN_S:g} s whose mean goodput reaches "
            f"{handover.RECOVERED_SHARE:.0%} of the capacity that remains (remaining Mbit/s: "
            "the legs the client uses, from the link schedule as run), over the runs that "
            f"recovered; '{handover.NOT_RECOVERED}': not within the run. stalled MB: what that "
            "capacity would have carried from the start of the event to the recovery (to the "
            "flow's end without one) minus what the flow delivered (docs/analysis.md)."
        ),
        "",
    ]


def _fairness_table(fair, param: str):
    """Mean goodput, JFI and SFA per point, variant, client and kind; None without fairness."""
    if fair.empty:
        return None
    return (
        fair.groupby(["point", "variant", "client", "kind"], sort=False, dropna=False)
        .agg(
            goodput_mbit=("goodput_mbit", "mean"),
            jfi_whole_run=("jfi", "mean"),
            jfi_slots=("jfi_slots", "mean"),
            sfa=("sfa", "mean"),
        )
        .reset_index()
        .rename(columns={"point": param})
    )


def _table_sections(table, fair_table, dup, reord, param: str, schedulers: list[str]) -> list[str]:
    """The summary's goodput (with the multipath schedulers that ran), fairness, duplication
    and reordering sections."""
    parts = [
        "## Goodput (mean and sd over repetitions)",
        "",
        _table(table),
        "",
        (
            "rtt_ms_mean: the sender's smoothed RTT averaged over the flow, as each stack measures "
            "it: ngtcp2's and quic-go's qlog (server), the kernel's TCP_INFO (iperf3's sender), "
            "aioquic's client; "
            "ping probes: iputils ping from the client. runs: repetitions that ended ok; "
            "cpu_saturated_runs: of those, the CPU-affected runs (a process of ours short of a "
            "core, or every core busy; the column keeps its older name)."
        ),
        "",
        *schedulers,
    ]
    if fair_table is not None:
        parts += [
            "## Fairness (JFI over competing flows; SFA per flow, Corbel et al.)",
            "",
            _table(fair_table, "{:.3f}"),
            "",
            (
                "jfi_whole_run: Jain's index over the flows' whole-run goodputs (the paper's), "
                "mean over runs; jfi_slots: over the mean goodputs in the 100 ms slots in which "
                "every flow received data; goodput_mbit: the flow's mean over those slots."
            ),
            "",
        ]
    if not dup.empty and dup.dup.any():
        d = (
            dup.groupby(["point", "variant"], sort=False)[["goodput_mbit", "links_mbit"]]
            .mean()
            .reset_index()
            .rename(columns={"point": param})
        )
        parts += ["## Duplication: goodput vs both legs together", "", _table(d), ""]
    if not reord.empty:
        r = (
            reord.groupby(["point", "variant"], sort=False)
            .mean(numeric_only=True)
            .reset_index()
            .drop(columns=["rep"], errors="ignore")
            .rename(columns={"point": param})
        )
        parts += [
            "## Reordering at the DC client (pdcp-agent, mean per run)",
            "",
            _table(r, "{:.0f}"),
            "",
        ]
    return parts

"""`dcexp report DIR`: the summary table, figures (PNG + PDF) and DIR/summary.md."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from experiments import analysis, plots
from experiments.scenario import variant_label


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


def report(out: Path) -> tuple[str, list[Path]]:
    out = Path(out)
    doc = (
        yaml.safe_load((out / "scenario.yaml").read_text())
        if (out / "scenario.yaml").exists()
        else {}
    )
    param = (doc.get("sweep") or {}).get("param", "run")
    fig_dir = out / "figures"
    manifests = analysis.load_manifests(out)
    flows = analysis.load_runs(out)
    order = [analysis._point_label(v) for v in (doc.get("sweep") or {}).get("values", [])]
    variants = [variant_label(v) for v in doc.get("variants") or []]
    summary = _in_order(analysis.throughput_summary(flows), order, variants)
    fair = _in_order(analysis.fairness_summary(out), order, variants)
    dup = _in_order(analysis.duplication_summary(out), order, variants)
    reord = _in_order(analysis.reordering_summary(out), order, variants)

    figures: list[Path] = []
    if doc.get("sweep"):
        figures += plots.throughput_vs_param(summary, param, fig_dir)
    elif len(fair) == 0:
        figures += plots.throughput_bars(summary, fig_dir)
    figures += plots.fairness_bars(fair, fig_dir)
    figures += plots.link_utilization(out, manifests, fig_dir, variants)
    figures += plots.throughput_over_time(out, manifests, fig_dir)
    if not dup.empty and dup.dup.any():
        figures += plots.duplication(dup, param, fig_dir)

    failed = [m for m in manifests if m["status"] != "ok"]
    saturated = [m["run_id"] for m in manifests if m.get("cpu_saturated")]
    parts = [f"# {doc.get('name', out.name)}", "", doc.get("description", "").strip(), ""]
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
            f"{len(manifests)} runs, {len(failed)} failed, {len(saturated)} with a saturated "
            "CPU core (these measure the machine as much as the protocol)."
        ),
        "",
    ]
    table = summary.rename(columns={"point": param}) if not summary.empty else summary
    parts += ["## Goodput (mean and sd over repetitions)", "", _table(table), ""]
    if not fair.empty:
        f = (
            fair.groupby(["point", "variant", "client"], sort=False)
            .agg(goodput_mbit=("goodput_mbit", "mean"), jfi=("jfi", "mean"), sfa=("sfa", "mean"))
            .reset_index()
            .rename(columns={"point": param})
        )
        parts += [
            "## Fairness (JFI over competing flows; SFA per flow, Corbel et al.)",
            "",
            _table(f, "{:.3f}"),
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
    if failed:
        parts += (
            ["## Failed runs", ""]
            + [f"- {m['run_id']}: {'; '.join(m['errors'])}" for m in failed]
            + [""]
        )
    if saturated:
        parts += ["## Runs with a saturated CPU core", ""] + [f"- {r}" for r in saturated] + [""]
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
            f"{len(saturated)} CPU-saturated)"
        ),
        "",
        _table(table),
    ]
    if not fair.empty:
        printed += ["", _table(f, "{:.3f}")]
    printed += ["", f"summary: {out / 'summary.md'}"]
    return "\n".join(printed), figures

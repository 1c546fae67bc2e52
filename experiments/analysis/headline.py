"""The headline table across transports (issue 26): for QUIC and TCP over DC, MPTCP, MPQUIC
per scheduler and single-path QUIC, one cell per question, each from the runs that ask it:

- goodput: the runs on clean legs (no leg event, no loss, the flow alone) at their study's
  first swept value (the reference point: symmetric legs, a 1:1 ratio; in a closed-loop
  study every split method at that point's legs);
- stability under loss: the coefficient of variation (sd / mean) of the flow's 100 ms
  goodput, from its first byte to its last full slot, in the runs with loss on a leg;
- recovery at handover: experiments/analysis/handover.py's recovery time, in the runs with
  a leg event;
- JFI: Jain's index over the run's flows' whole-run goodputs (metrics.fairness_summary), in
  the runs where the flow competes with others.

A run counts for the transport of its DC client's flow (the DC or multipath flow; DC's
duplication and controller policy are part of the name). The closed-loop studies'
runs (loop_*.yaml: the oracle, a static split, the controller's policies, the credit split)
vary the split, not the transport: each split method has its own row after the transports. Each cell is mean [95 % CI] (n),
with how many of those runs were CPU-affected;
"not run" where no run asked. `dcexp report STUDY` puts it in STUDY/summary.md; `dcexp
report PARENT` (a folder of studies) writes PARENT/headline.md over all of them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.analysis import handover, loop_metrics, metrics, stats

# The transports in its order; a row per variant found (e.g. each QUIC stack over
# DC) follows its family's place, a family without a run keeps one "not run" row.
FAMILIES = (
    "QUIC over DC",
    "TCP over DC",
    "MPTCP",
    "MPQUIC minrtt",
    "MPQUIC roundrobin",
    "MPQUIC redundant",
    "single-path QUIC",
)
NOT_RUN = "not run"
CLOSED_LOOP = "closed-loop study: "  # rows of a split method, after the transports
COLUMNS = ("goodput Mbit/s", "goodput CV under loss", "recovery s at handover", "JFI whole run")


def transport(flow_id: str, result: dict, config: dict) -> str:
    """The transport a flow ran, in the table's words (its family first)."""
    specs = config.get("flows") or []
    index = int(flow_id[1:].split("-")[0].split(".")[0])  # f<i>[.<j>]-<client>
    spec = specs[index] if index < len(specs) else {}
    kind = result.get("kind") or spec.get("kind")
    if kind == "mpquic":
        scheduler = result.get("scheduler") or spec.get("scheduler")
        return "single-path QUIC (tquic)" if scheduler == "single-path" else f"MPQUIC {scheduler}"
    if kind == "mptcp":
        backup = " (leg B backup)" if spec.get("mptcp_leg_b") == "backup" else ""
        scheduler = result.get("scheduler") or spec.get("scheduler") or "default"
        return f"MPTCP{backup}" + (f", {scheduler} scheduler" if scheduler != "default" else "")
    dc = config["dc"]
    over = "SC" if dc.get("mode") == "sc" else "DC"
    name = f"TCP over {over}" if kind == "tcp" else f"QUIC over {over} ({kind})"
    policy = (config.get("control") or {}).get("policy", "none")
    return (
        name
        + (", duplicated" if dc.get("dup") else "")
        + (f", {policy}" if policy != "none" else "")
    )


def goodput_cv(series: pd.Series) -> float:
    """sd / mean of a flow's 100 ms goodput from its first byte to its last full slot."""
    active = series[series.to_numpy().nonzero()[0][0] :] if series.any() else series
    active = active.iloc[:-1]  # the last slot ends with the flow: partial
    return (
        float(active.std(ddof=1) / active.mean()) if len(active) > 1 and active.mean() else np.nan
    )


def study_runs(study: Path, hand: pd.DataFrame | None = None, fair=None) -> pd.DataFrame:
    """One row per ok run of a study: transport, the question it asks (goodput, loss,
    handover, fairness) and its value (for handover: recovery_s and recovered). `hand` and
    `fair`: the study's handover and fairness tables when already computed."""
    doc = metrics.load_saved_scenario(study)
    values = (doc.get("sweep") or {}).get("values") or [None]
    reference = metrics._point_label(values[0])
    hand = handover.handover_table(study) if hand is None else hand
    fair = metrics.fairness_summary(study) if fair is None else fair
    rows = []
    for m in metrics.load_manifests(study):
        if m["status"] != "ok":
            continue
        flows = {f: r for f, r in m["flows"].items() if r.get("kind") != "ping"}
        main = next((f for f, r in flows.items() if r.get("client") == "dc"), None)
        if main is None:
            continue
        row = {"study": study.name, "run_id": m["run_id"], "cpu": metrics.cpu_affected(m)}
        row["transport"] = transport(main, flows[main], m["config"])
        method = loop_metrics.split_method(doc, m.get("point"))
        if method:  # e.g. "closed-loop study: oracle split (TCP over DC)"
            row["transport"] = f"{CLOSED_LOOP}{method} split ({row['transport'].split(',')[0]})"
        mine = hand[(hand.run_id == m["run_id"]) & (hand.flow == main)] if len(hand) else hand
        lossy = any((m["config"]["links"][leg].get("loss") or 0) > 0 for leg in ("a", "b"))
        if handover.leg_event(m) is not None:
            if mine.empty:
                continue  # the flow ended before the event did
            row |= {"question": "handover", **mine.iloc[0][["recovery_s", "recovered"]].to_dict()}
        elif len(flows) > 1:
            jfi = fair[fair.run_id == m["run_id"]].jfi if len(fair) else []
            row |= {"question": "fairness", "value": jfi.iloc[0] if len(jfi) else np.nan}
        elif lossy:
            samples = metrics.load_samples(study / "runs" / m["run_id"])
            series = metrics.flow_goodput_series(samples).get(main, pd.Series(dtype=float))
            row |= {"question": "loss", "value": goodput_cv(series)}
        elif _on_reference_legs(m.get("point"), reference, method):
            row |= {"question": "goodput", "value": flows[main].get("goodput_mbit")}
        else:
            continue
        rows.append(row)
    return pd.DataFrame(rows)


def _on_reference_legs(point, reference, method: str | None) -> bool:
    """A run at its study's first swept value; in a closed-loop study, every method at the
    first value's legs ("1:1/oracle" beside "1:1/static")."""
    label = metrics._point_label(point)
    if method is None:
        return label == reference
    return str(label).rpartition("/")[0] == str(reference).rpartition("/")[0]


def _family_rank(name: str) -> int:
    """FAMILIES' place; the closed-loop rows after every transport, in METHODS' order."""
    if name.startswith(CLOSED_LOOP):
        method = name.removeprefix(CLOSED_LOOP).split(" ", 1)[0]
        methods = loop_metrics.METHODS
        return len(FAMILIES) + 1 + (methods.index(method) if method in methods else len(methods))
    return next((i for i, f in enumerate(FAMILIES) if name.startswith(f)), len(FAMILIES))


def _cpu_note(runs: pd.DataFrame) -> str:
    """How many of a cell's runs were CPU-affected (limits.cpu_affected), when any."""
    n = int(runs.cpu.sum())
    return f", {n} CPU-affected" if n else ""


def table(runs: pd.DataFrame) -> pd.DataFrame:
    """The headline: a row per transport (FAMILIES' order), a cell per question."""
    names = set(runs.transport) if len(runs) else set()
    names |= {f for f in FAMILIES if not any(n.startswith(f) for n in names)}
    rows = []
    for name in sorted(names, key=lambda n: (_family_rank(n), n)):
        mine = runs[runs.transport == name] if len(runs) else runs
        cells = {}
        for column, question in zip(COLUMNS, ("goodput", "loss", "handover", "fairness")):
            asked = mine[mine.question == question] if len(mine) else mine
            if asked.empty:
                cells[column] = NOT_RUN
            else:
                cells[column] = (
                    handover.recovery_text(asked)
                    if question == "handover"
                    else stats.estimate(asked.value).text()
                ) + _cpu_note(asked)
        rows.append({"transport": name, **cells})
    return pd.DataFrame(rows)


NOTE = (
    "goodput: runs on clean legs (no leg event, no loss, the flow alone) at the study's first "
    "swept value; CV under loss: sd / mean of the 100 ms goodput in the runs with loss on a "
    "leg; recovery at handover: time to 90 % of the remaining capacity held for 1 s, over the "
    "runs that recovered (docs/analysis.md); JFI: over the run's flows' whole-run goodputs. "
    "Each: mean [95 % CI] (n runs), with how many of them were CPU-affected; a run counts "
    "for its DC client's flow's transport. Closed-loop study rows: the runs of a study that "
    "sweeps the split method (loop_*.yaml), one row per method, not counted as their "
    "transport (they vary the split); their comparison is the study's against-oracle table."
)


def studies(parent: Path) -> list[Path]:
    """The study folders (each with runs/) directly under `parent`."""
    return sorted(d for d in Path(parent).iterdir() if (d / "runs").is_dir())


def write(parent: Path) -> tuple[str, Path]:
    """PARENT/headline.md over every study folder under it; returns (markdown, its path)."""
    from experiments.analysis.report import _table  # the project's markdown table

    found = studies(parent)
    runs = pd.concat([study_runs(s) for s in found], ignore_index=True)
    text = "\n".join(
        [
            f"# Headline across transports: {Path(parent).name}",
            "",
            "Studies: " + ", ".join(s.name for s in found),
            "",
            _table(table(runs)),
            "",
            NOTE,
            "",
        ]
    )
    path = Path(parent) / "headline.md"
    path.write_text(text)
    return text, path

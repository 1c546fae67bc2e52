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
report PARENT` (a folder of studies) writes PARENT/headline.md over all of them. Its run
records (RECORD_COLUMNS) also feed issue 26's headline (experiments/analysis/multipath.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments.analysis import RunFileError, handover, loop_metrics, metrics, stats

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


# One row per ok run with a DC client's flow: what every headline reads (this table and
# experiments/analysis/multipath.py's), saved as STUDY/runs.csv where the run directories
# are not kept (save_records). point: the swept value as text ("-" without a sweep); loss:
# the larger of the legs' loss as configured; leg_event: a leg change applied
# (handover.leg_event); recovery_s, recovered, bytes_stalled: handover.recovery of the flow
# (empty when it ended before the event did); jfi: Jain's index over the run's flows'
# whole-run goodputs and competitors their clients and stacks, in runs with other flows;
# goodput_cv: goodput_cv of the flow, in runs with loss.
RECORD_COLUMNS = (
    "study",
    "run_id",
    "point",
    "variant",
    "rep",
    "cpu",
    "transport",
    "method",
    "goodput_mbit",
    "loss",
    "leg_event",
    "recovery_s",
    "recovered",
    "bytes_stalled",
    "jfi",
    "competitors",
    "goodput_cv",
)


def point_text(point) -> str:
    """A swept value as runs.csv keeps it: 0.05 and "20/5" as written, "-" without a sweep."""
    label = metrics._point_label(point)
    return f"{label:g}" if isinstance(label, float) else str(label)


def competitors(flows: dict, main: str) -> str:
    """The other flows of a run by client and stack ("sc-a tquic, sc-b tquic"); tquic's
    single-path flows by its name, since `mpquic` there is no multipath."""

    def stack(r: dict) -> str:
        return "tquic" if r.get("scheduler") == "single-path" else str(r.get("kind"))

    return ", ".join(f"{r.get('client')} {stack(r)}" for f, r in flows.items() if f != main)


def run_records(study: Path, hand: pd.DataFrame | None = None, fair=None) -> pd.DataFrame:
    """RECORD_COLUMNS of a study's saved runs. `hand` and `fair`: the study's handover and
    fairness tables when already computed."""
    doc = metrics.load_saved_scenario(study)
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
        row = {
            "study": doc.get("name", Path(study).name),
            "run_id": m["run_id"],
            "point": point_text(m.get("point")),
            "variant": m["variant"],
            "rep": m["rep"],
            "cpu": metrics.cpu_affected(m),
            "transport": transport(main, flows[main], m["config"]),
            "method": loop_metrics.split_method(doc, m.get("point")),
            "goodput_mbit": flows[main].get("goodput_mbit"),
            "loss": max(m["config"]["links"][leg].get("loss") or 0 for leg in ("a", "b")),
            "leg_event": handover.leg_event(m) is not None,
        }
        if row["method"]:  # e.g. "closed-loop study: oracle split (TCP over DC)"
            row["transport"] = (
                f"{CLOSED_LOOP}{row['method']} split ({row['transport'].split(',')[0]})"
            )
        mine = hand[(hand.run_id == m["run_id"]) & (hand.flow == main)] if len(hand) else hand
        if row["leg_event"] and not mine.empty:
            row |= mine.iloc[0][["recovery_s", "recovered", "bytes_stalled"]].to_dict()
        if len(flows) > 1:
            jfi = fair[fair.run_id == m["run_id"]].jfi if len(fair) else []
            row |= {"jfi": jfi.iloc[0] if len(jfi) else np.nan}
            row |= {"competitors": competitors(flows, main)}
        if row["loss"] > 0:
            samples = metrics.load_samples(study / "runs" / m["run_id"])
            series = metrics.flow_goodput_series(samples).get(main, pd.Series(dtype=float))
            row["goodput_cv"] = goodput_cv(series)
        rows.append(row)
    return pd.DataFrame(rows, columns=RECORD_COLUMNS)


RUNS_CSV = "runs.csv"


def save_records(records: pd.DataFrame, path: Path) -> None:
    """A study's records as STUDY/runs.csv: what its headlines need without its runs."""
    records.to_csv(path, index=False)  # floats as repr: the same means again


def load_records(study: Path) -> pd.DataFrame:
    """A study's records: from its run directories (runs/), else from its runs.csv;
    RunFileError naming the folder when it has neither."""
    study = Path(study)
    if (study / "runs").is_dir():
        return run_records(study)
    path = study / RUNS_CSV
    if not path.exists():
        raise RunFileError(
            f"{study}: no runs/ and no {RUNS_CSV} (a study folder holds the run directories "
            f"of dcexp run, or the {RUNS_CSV} that python -m experiments.analysis.multipath "
            "--save-runs writes)"
        )
    table = metrics.read_table(
        path,
        RECORD_COLUMNS,
        f"a study's {RUNS_CSV} of run records (expected CSV with the columns "
        f"{', '.join(RECORD_COLUMNS)}); write it again with python -m "
        "experiments.analysis.multipath --save-runs",
        written_live=False,
        dtype={"point": str, "transport": str, "competitors": str, "method": str},
        keep_default_na=False,
        na_values=[""],
    )
    for column in ("cpu", "leg_event"):
        table[column] = table[column].map(_true)
    table["recovered"] = table.recovered.map(lambda v: np.nan if pd.isna(v) else _true(v))
    return table


def _true(value) -> bool:
    return str(value).strip().lower() == "true"


def study_runs(study: Path, hand: pd.DataFrame | None = None, fair=None) -> pd.DataFrame:
    """One row per ok run of a study: transport, the question it asks (goodput, loss,
    handover, fairness) and its value (for handover: recovery_s and recovered). `hand` and
    `fair`: the study's handover and fairness tables when already computed."""
    doc = metrics.load_saved_scenario(study)
    values = (doc.get("sweep") or {}).get("values") or [None]
    return questions(run_records(study, hand, fair), point_text(values[0]))


def questions(records: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Each record with the question its run asks and its value; a run that asks none (a
    clean run away from the `reference` point, a flow that ended before its leg event) is
    left out."""
    rows = []
    for r in records.to_dict("records"):
        if r["leg_event"]:
            if pd.isna(r["recovered"]):
                continue  # the flow ended before the event did
            recovered = bool(r["recovered"])
            asked = {"question": "handover", "recovery_s": r["recovery_s"], "recovered": recovered}
        elif isinstance(r["competitors"], str) and r["competitors"]:
            asked = {"question": "fairness", "value": r["jfi"]}
        elif r["loss"] > 0:
            asked = {"question": "loss", "value": r["goodput_cv"]}
        elif _on_reference_legs(r["point"], reference, r["method"]):
            asked = {"question": "goodput", "value": r["goodput_mbit"]}
        else:
            continue
        rows.append({k: r[k] for k in ("study", "run_id", "cpu", "transport")} | asked)
    return pd.DataFrame(rows)


def _on_reference_legs(point: str, reference: str, method) -> bool:
    """A run at its study's first swept value (both as point_text); in a closed-loop study,
    every method at the first value's legs ("1:1/oracle" beside "1:1/static")."""
    if not isinstance(method, str) or not method:
        return point == reference
    return point.rpartition("/")[0] == reference.rpartition("/")[0]


def _family_rank(name: str) -> int:
    """FAMILIES' place; the closed-loop rows after every transport, in METHODS' order."""
    if name.startswith(CLOSED_LOOP):
        method = name.removeprefix(CLOSED_LOOP).split(" ", 1)[0]
        methods = loop_metrics.METHODS
        return len(FAMILIES) + 1 + (methods.index(method) if method in methods else len(methods))
    return next((i for i, f in enumerate(FAMILIES) if name.startswith(f)), len(FAMILIES))


def row_names(found) -> list[str]:
    """The transports `found` and a row for each of the issue's families without one, in
    FAMILIES' order (a family's variants by name)."""
    names = set(found)
    names |= {f for f in FAMILIES if not any(n.startswith(f) for n in names)}
    return sorted(names, key=lambda n: (_family_rank(n), n))


def cpu_note(runs: pd.DataFrame) -> str:
    """How many of a cell's runs were CPU-affected (limits.cpu_affected), when any."""
    n = int(runs.cpu.sum())
    return f", {n} CPU-affected" if n else ""


# the range of each question's value: goodput (Mbit/s), its CV over loss rates, Jain's index
QUESTION_BOUNDS = {"goodput": stats.NON_NEGATIVE, "loss": stats.NON_NEGATIVE, "fairness": stats.JAIN_OF_3}  # fmt: skip


def table(runs: pd.DataFrame) -> pd.DataFrame:
    """The headline: a row per transport (FAMILIES' order), a cell per question."""
    rows = []
    for name in row_names(runs.transport if len(runs) else []):
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
                    else stats.estimate(asked.value, QUESTION_BOUNDS[question]).text()
                ) + cpu_note(asked)
        rows.append({"transport": name, **cells})
    return pd.DataFrame(rows)


NOTE = (
    "goodput: runs on clean legs (no leg event, no loss, the flow alone) at the study's first "
    "swept value; CV under loss: sd / mean of the 100 ms goodput in the runs with loss on a "
    "leg; recovery at handover: time to 90 % of the remaining capacity held for 1 s, over the "
    "runs that recovered (docs/analysis.md); JFI: over the run's flows' whole-run goodputs. "
    "Each: mean [95 % CI] (n runs), with how many of them were CPU-affected (a CI crossing "
    "the value's range, 0 or Jain's 1/3 and 1, is clipped there and says so); a run counts "
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

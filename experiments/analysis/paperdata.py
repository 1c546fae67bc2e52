"""The numbers behind the reproduction report: one row per flow of every run of a campaign.

A campaign directory holds `<study>/scenario.yaml` per study and either the run directories
(`<study>/runs/*/manifest.json`, samples, logs: what `dcexp campaign` writes) or only the
campaign's `runs.csv` (what is committed under experiments/docs/reproduction/). Both load to
the same table, so `dcexp report --paper` re-analyses a committed campaign without its runs;
only the figures drawn from samples (time series, leg utilization) need the run directories.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from experiments.analysis import RunFileError, metrics
from experiments.analysis.stats import BOUNDS, estimate
from experiments.run import limits

# runs.csv: one row per flow of a run. jfi_slots is Jain's index of the run over the flows'
# mean goodputs in the 100 ms slots in which all receive data (older files call it jfi).
RUNS_COLUMNS = (
    "study",
    "run_id",
    "point",
    "variant",
    "rep",
    "status",
    "flow",
    "client",
    "kind",
    "goodput_mbit",
    "rtt_ms_mean",
    "rtt_ms_median_ping",
    "jfi_slots",
    "cpu_saturated",
    "saturated_processes",
    "loadavg_start",
    "git_commit",
    "dc_client_rcvbuf_drops",
)


@dataclass
class StudyData:
    name: str
    doc: dict  # the scenario as it ran
    flows: pd.DataFrame  # RUNS_COLUMNS rows of this study, `point` as in the scenario
    manifests: list[dict]  # empty when loaded from runs.csv
    directory: Path
    study_record: dict = field(default_factory=dict)  # study.json of `dcexp run`, if any

    @property
    def commands(self) -> list[str]:
        """The `dcexp run` commands that made the study (none recorded: a campaign's)."""
        return list(self.study_record.get("commands", []))

    @property
    def param(self) -> str:
        return (self.doc.get("sweep") or {}).get("param", "run")

    @property
    def order(self) -> list:
        return [metrics._point_label(v) for v in (self.doc.get("sweep") or {}).get("values", [])]

    @property
    def measure(self) -> str:
        return "jfi" if self.doc.get("figure") == "fairness" else "goodput"

    @property
    def has_samples(self) -> bool:
        return bool(self.manifests)

    def runs(self) -> pd.DataFrame:
        """One row per run: point, variant, rep, status, CPU verdict."""
        cols = ["run_id", "point", "variant", "rep", "status", "cpu_saturated"]
        return self.flows.drop_duplicates("run_id")[cols]

    def unaffected(self) -> StudyData:
        """The same study restricted to runs in which no process was short of CPU."""
        ok = self.flows[~self.flows.cpu_saturated.astype(bool)]
        keep = set(ok.run_id)
        manifests = [m for m in self.manifests if m["run_id"] in keep]
        return StudyData(self.name, self.doc, ok, manifests, self.directory, self.study_record)

    def per_run(self) -> pd.DataFrame:
        """One row per ok run: `value` = the DC client's goodput (throughput studies) or
        Jain's index over the whole-run goodputs of its transport flows (fairness studies,
        the paper's definition), `jfi_slots` the slot-filtered index."""
        f = self.flows[(self.flows.status == "ok") & (self.flows.kind != "ping")]
        rows = []
        for run_id, g in f.groupby("run_id", sort=False):
            first = g.iloc[0]
            if self.measure == "jfi":
                value = metrics.jain(g.goodput_mbit.fillna(0))
            else:
                dc = g[g.client == "dc"].goodput_mbit
                value = float(dc.iloc[0]) if len(dc) else math.nan
            rows.append(
                {
                    "run_id": run_id,
                    "point": first.point,
                    "variant": first.variant,
                    "value": value,
                    "jfi_slots": first.get("jfi_slots"),
                }
            )
        return pd.DataFrame(rows, columns=["run_id", "point", "variant", "value", "jfi_slots"])

    def values(self, column: str = "value") -> dict[str, dict[object, list[float]]]:
        """variant -> point -> per-run values, points in the sweep's order."""
        per_run = self.per_run()
        rank = {p: i for i, p in enumerate(self.order)}
        out: dict[str, dict] = {}
        for (variant, point), g in per_run.groupby(["variant", "point"], sort=False):
            vals = [float(v) for v in g[column] if v is not None and not pd.isna(v)]
            if vals:
                out.setdefault(variant, {})[point] = vals
        return {
            v: dict(sorted(p.items(), key=lambda kv: rank.get(kv[0], len(rank))))
            for v, p in out.items()
        }

    def table(self, column: str = "value") -> pd.DataFrame:
        """Per variant and point: the stats.Estimate of the column (`estimate`), its mean,
        CI ends clipped to the quantity's range (low, high) and n."""
        bounds = BOUNDS["jfi" if column == "jfi_slots" else self.measure]
        rows = []
        for v, points in self.values(column).items():
            for p, vals in points.items():
                e = estimate(vals, bounds)
                rows.append({"variant": v, "point": p, "estimate": e, "mean": e.mean,
                             "low": e.low, "high": e.high, "n": e.n})  # fmt: skip
        return pd.DataFrame(
            rows, columns=["variant", "point", "estimate", "mean", "low", "high", "n"]
        )


def rcvbuf_drops(manifest: dict) -> int | None:
    """UDP datagrams the DC client's namespace dropped for a full socket receive buffer
    (Udp RcvbufErrors) during the run; None for runs saved before the counters were read."""
    counters = manifest.get("net_counters_delta")
    if counters is None:
        return None
    return int(counters.get("client", {}).get(limits.NET_COUNTERS[("Udp", "RcvbufErrors")], 0))


def flow_rows(name: str, manifests: list[dict], slot_jfi: dict) -> list[dict]:
    """RUNS_COLUMNS rows of a study's saved runs."""
    rows = []
    for m in manifests:
        for fid, r in m["flows"].items():
            rows.append(
                {
                    "study": name,
                    "run_id": m["run_id"],
                    "point": metrics._point_label(m.get("point")),
                    "variant": m["variant"],
                    "rep": m["rep"],
                    "status": m["status"],
                    "flow": fid,
                    "client": r["client"],
                    "kind": r["kind"],
                    "goodput_mbit": r.get("goodput_mbit"),
                    "rtt_ms_mean": r.get("rtt_ms_mean"),
                    "rtt_ms_median_ping": r.get("rtt_ms_median"),
                    "jfi_slots": slot_jfi.get(m["run_id"]),
                    "cpu_saturated": metrics.cpu_affected(m),
                    "saturated_processes": " ".join(m.get("saturated_processes") or []),
                    "loadavg_start": (m.get("loadavg_start") or [None])[0],
                    "git_commit": str(m.get("git_commit", ""))[:12],
                    "dc_client_rcvbuf_drops": rcvbuf_drops(m),
                }
            )
    return rows


# runs.csv keeps each measured number to this many significant digits
SAVED_FORMAT = "%.4g"
MEASURED_COLUMNS = (
    "goodput_mbit",
    "rtt_ms_mean",
    "rtt_ms_median_ping",
    "jfi_slots",
    "loadavg_start",
)


def as_saved(flows: pd.DataFrame) -> pd.DataFrame:
    """The measured numbers of runs read from their directories, rounded as runs.csv keeps
    them: a report made from the run directories and one made later from the runs.csv it
    wrote (once the run directories are gone) say and draw the same."""
    for column in MEASURED_COLUMNS:
        values = pd.to_numeric(flows[column], errors="coerce")
        flows[column] = values.map(lambda v: v if pd.isna(v) else float(SAVED_FORMAT % v))
    return flows


def _points_from_csv(column: pd.Series, order: list) -> pd.Series:
    """runs.csv's points (text) back to the scenario's values (10, 0.05, '1:1', '-')."""
    by_text = {str(p): p for p in order}

    def convert(text):
        if pd.isna(text) or text == "-":
            return "-"
        if text in by_text:
            return by_text[text]
        try:
            number = float(text)
        except ValueError:
            return text
        return next((p for p in order if isinstance(p, (int, float)) and p == number), number)

    return column.map(convert)


def load_study(directory: Path, csv_rows: pd.DataFrame | None = None) -> StudyData:
    """A study from its run directories and the campaign's runs.csv rows of runs that have no
    directory (an earlier pass kept only in runs.csv, a later one, e.g. another stack, still
    in its directories)."""
    doc = metrics.load_saved_scenario(directory)
    manifests = metrics.load_manifests(directory)
    order = [metrics._point_label(v) for v in (doc.get("sweep") or {}).get("values", [])]
    in_dirs = {m["run_id"] for m in manifests}
    rows = pd.DataFrame(columns=RUNS_COLUMNS) if csv_rows is None else csv_rows
    flows = rows[(rows.study == doc["name"]) & ~rows.run_id.isin(in_dirs)].copy()
    if "jfi_slots" not in flows and "jfi" in flows:
        flows["jfi_slots"] = flows.pop("jfi")
    flows = flows.reindex(columns=list(RUNS_COLUMNS))  # a column an older file lacks: empty
    flows["point"] = _points_from_csv(flows.point, order)
    flows["cpu_saturated"] = flows.cpu_saturated.map(lambda v: str(v).strip().lower() == "true")
    if manifests:
        slot = {}
        if doc.get("figure") == "fairness":
            fair = metrics.fairness_summary(directory)
            if not fair.empty:
                slot = fair.groupby("run_id").jfi_slots.first().to_dict()
        from_dirs = as_saved(
            pd.DataFrame(flow_rows(doc["name"], manifests, slot), columns=RUNS_COLUMNS)
        )
        flows = pd.concat([flows, from_dirs]) if not flows.empty else from_dirs
    record = {}
    if (directory / "study.json").exists():
        record = json.loads((directory / "study.json").read_text())
    return StudyData(doc["name"], doc, flows.reset_index(drop=True), manifests, directory, record)


def load_campaign(directory: Path) -> dict[str, StudyData]:
    """Every study of a campaign directory, by name."""
    directory = Path(directory)
    csv_path = directory / "runs.csv"
    csv_rows = _read_runs_csv(csv_path) if csv_path.exists() else None
    studies = {}
    for d in sorted(directory.iterdir()):
        if (d / "scenario.yaml").exists():
            s = load_study(d, csv_rows)
            if not s.flows.empty:
                studies[s.name] = s
    if not studies:
        raise RunFileError(
            f"{directory}: none of its studies has a run (in <study>/runs/ or in runs.csv "
            "under the study's name)"
        )
    return studies


def _read_runs_csv(path: Path) -> pd.DataFrame:
    """A campaign's runs.csv; RunFileError naming it when it is not such a table."""
    needed = ("study", "run_id", "variant", "status")
    return metrics.read_table(
        path,
        needed,
        (
            f"a campaign's runs.csv (expected CSV with at least the columns "
            f"{', '.join(needed)}, as `dcexp report --paper` writes it)"
        ),
        written_live=False,
        dtype={"point": str},
    )


def has_results(directory: Path) -> bool:
    """A campaign directory with run directories or a runs.csv next to its studies."""
    directory = Path(directory)
    studies = [d for d in directory.glob("*/scenario.yaml")]
    return bool(studies) and (any(directory.glob("*/runs")) or (directory / "runs.csv").exists())


def write_runs_csv(studies: dict[str, StudyData], path: Path) -> None:
    """One row per flow of every run: the numbers behind the report, small enough to keep
    next to it when the run directories (samples, logs) are not kept."""
    frames = [s.flows[list(RUNS_COLUMNS)] for s in studies.values() if not s.flows.empty]
    table = pd.concat(frames) if frames else pd.DataFrame(columns=RUNS_COLUMNS)
    # as the scenario wrote them (a sweep of 0, 0.02, 0.05 reads back as floats); empty
    # for a study without a sweep
    table["point"] = table.point.map(
        lambda p: f"{p:g}" if isinstance(p, float) else None if p == "-" else p
    )
    # a count, written whole (the float format would round 12345 to 1.234e+04)
    table["dc_client_rcvbuf_drops"] = pd.to_numeric(table.dc_client_rcvbuf_drops).astype("Int64")
    table.to_csv(path, index=False, float_format=SAVED_FORMAT)

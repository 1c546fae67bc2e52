"""Analysis of saved runs (pandas): per-run results, means and deviations over repetitions,
fairness (Jain's index, Session Fairness Assessment), link utilization, duplication
efficiency, reordering statistics. Reads only what the runner wrote; never runs anything.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from dccommon.cliargs import InputFileError, printable, read_bounded
from experiments.analysis import RunFileError
from experiments.run.limits import cpu_affected  # the one CPU flag of a run

log = logging.getLogger(__name__)
SLOT_S = 0.1  # fairness time slots and goodput series: 100 ms


# ---------------------------------------------------------------- fairness metrics
def jain(values) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 = equal shares, 1/n = one takes all.
    R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (x.size * (x**2).sum()))


def session_fairness(slots: pd.DataFrame) -> pd.Series:
    """Session Fairness Assessment per session.

    After R. Corbel, S. Tuffin, A. Gravey, X. Marjou, A. Braud, "Assessing the Impact of QUIC
    on Network Fairness", Journal of Communications 14(10):908-914, 2019 (the metric the DC
    study of Hasselquist et al. uses). `slots` has one row per time slot (100 ms) and one
    column per session (throughput in the slot). Per slot s:
        J_s    = 1 - Jain(x_s)                  unfairness of the slot, 0 = perfectly fair
        D_i,s  = +1 if x_i,s > mean(x_s), -1 if below, 0 if equal   (dominance of session i)
    and F_i = mean over slots of D_i,s * J_s, in [-(1-1/n), 1-1/n]: positive when session i
    tends to take more than its share, negative when it is dominated, 0 when fair.
    Only slots in which every session is active count (the sessions actually compete).
    """
    x = slots.to_numpy(dtype=float)
    active = (x > 0).all(axis=1)
    x = x[active]
    if x.shape[0] == 0:
        return pd.Series(np.nan, index=slots.columns)
    n = x.shape[1]
    unfair = 1 - (x.sum(axis=1) ** 2) / (n * (x**2).sum(axis=1))
    dominance = np.sign(x - x.mean(axis=1, keepdims=True))
    return pd.Series((dominance * unfair[:, None]).mean(axis=0), index=slots.columns)


# ---------------------------------------------------------------- loading
MANIFEST_KEYS = ("run_id", "variant", "rep", "status")
MAX_MANIFEST_BYTES = 16 * 2**20  # a manifest is a few kB
SAMPLE_COLUMNS = ("t_s", "source", "id", "metric", "value")
_REDO = "remove that run's directory and rerun the study with the same --out (it redoes it)"


def read_manifest(path: Path) -> dict:
    """A run's manifest.json, checked: a mapping with MANIFEST_KEYS whose run_id is its
    directory's name (the analysis opens runs/<run_id>/, never a path a file names)."""
    try:  # bounded: a fifo made read_text wait for ever
        data = read_bounded(path, MAX_MANIFEST_BYTES, "a run manifest")
    except InputFileError as exc:
        raise RunFileError(f"{exc}: not a run manifest; {_REDO}") from None
    try:
        m = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFileError(f"{path}: not a run manifest ({exc}); {_REDO}") from None
    if not isinstance(m, dict) or any(k not in m for k in MANIFEST_KEYS):
        raise RunFileError(
            f"{path}: not a run manifest (expected a JSON object with keys "
            f"{', '.join(MANIFEST_KEYS)}); {_REDO}"
        )
    if m["run_id"] != Path(path).parent.name or not isinstance(m.get("flows", {}), dict):
        raise RunFileError(
            f"{path}: run_id must be its directory's name and flows a mapping; {_REDO}"
        )
    return m


def load_runs(out: Path) -> pd.DataFrame:
    """One row per flow of every saved run: run metadata + flow results."""
    rows = []
    for m in load_manifests(out):
        for fid, res in m.get("flows", {}).items():
            rows.append(
                {
                    "run_id": m["run_id"],
                    "point": _point_label(m.get("point")),
                    "variant": m["variant"],
                    "rep": m["rep"],
                    "status": m["status"],
                    "cpu_saturated": cpu_affected(m),
                    "flow": fid,
                    **res,
                }
            )
    df = pd.DataFrame(rows)
    for col in FLOW_COLUMNS:  # duration runs have no completion time, failed runs no goodput
        if col not in df:
            df[col] = np.nan
    return df


FLOW_COLUMNS = (
    "client",
    "goodput_mbit",
    "completion_s",
    "rtt_ms_mean",
    "bytes",
    "intact",
    "complete",
)


def load_manifests(out: Path) -> list[dict]:
    return [read_manifest(p) for p in sorted(Path(out, "runs").glob("*/manifest.json"))]


# A samples.csv of an hour-long run is ~50 MB; a table read whole must fit in memory.
MAX_TABLE_BYTES = 256 * 2**20


def read_table(path: Path, columns, what: str, *, written_live: bool, **read_csv) -> pd.DataFrame:
    """A CSV file that must hold `columns`; RunFileError naming the file when it cannot be
    read as such a table (its content is never echoed). `what` ends the message: what the
    file should be, the columns expected and what to do.

    `written_live` says who wrote the file. True: a run, line by line as it goes
    (samples.csv), so a last line without an end of line is one cut short (the writer
    stopped mid-line): it is dropped with a warning naming it, as one row fewer costs a run a
    100 ms sample and a torn number read as data would be a silently wrong result. False: a
    file written whole, by a tool or by hand (runs.csv): its last line is a complete row
    whether or not an end of line follows (editors often leave it out)."""
    path = Path(path)
    torn_line = None
    try:
        data = read_bounded(path, MAX_TABLE_BYTES, "a results table")
    except InputFileError as exc:  # a directory, a fifo (read_bytes waited for ever), huge
        raise RunFileError(f"{exc}: not {what}") from None
    try:
        if written_live and data and not data.endswith(b"\n"):
            torn_line = data.count(b"\n") + 1
            data = data[: data.rfind(b"\n") + 1]
        table = pd.read_csv(io.BytesIO(data), **read_csv)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError):
        table = None
    if table is None or any(c not in table.columns for c in columns):
        raise RunFileError(f"{path}: not {what}")
    if torn_line is not None and path not in _warned_torn:  # once: a report reads it often
        _warned_torn.add(path)
        log.warning(
            "warning: %s:%d: last line cut short (no end of line: the writer stopped "
            "mid-line); dropped it and read the %d lines before it",
            printable(path),
            torn_line,
            torn_line - 1,
        )
    return table


_warned_torn: set[Path] = set()


def load_samples(run_dir: Path) -> pd.DataFrame:
    """A run's samples.csv with its SAMPLE_COLUMNS; RunFileError naming the file when it is
    missing or is not such a table."""
    path = Path(run_dir) / "samples.csv"
    if not path.exists() and not path.is_symlink():  # a symlink loop is not "missing"
        raise RunFileError(f"{path}: missing; {_REDO}")
    return read_table(
        path,
        SAMPLE_COLUMNS,
        f"a samples table (expected CSV with the columns {', '.join(SAMPLE_COLUMNS)}); {_REDO}",
        written_live=True,
    )


def load_saved_scenario(study: Path) -> dict:
    """The scenario.yaml a study saved beside its runs ({} when there is none)."""
    from dccommon.cliargs import load_yaml

    path = Path(study) / "scenario.yaml"
    if not path.exists():
        return {}
    doc = load_yaml(path)
    if not isinstance(doc, dict):
        raise RunFileError(
            f"{path}: not a saved scenario (expected a mapping); copy the study's scenario "
            "file there"
        )
    return doc


def _point_label(point) -> str | float:
    if point is None:
        return "-"
    if isinstance(point, (int, float)) and not isinstance(point, bool):
        return point
    return str(point)


# ---------------------------------------------------------------- per-run series
def flow_goodput_series(samples: pd.DataFrame, slot_s: float = SLOT_S) -> pd.DataFrame:
    """Cumulative received bytes per flow -> goodput (Mbit/s) per slot; columns = flows."""
    b = samples[(samples.source == "flow") & (samples.metric == "bytes")]
    if b.empty:
        return pd.DataFrame()
    series = {}
    for fid, g in b.groupby("id"):
        g = g.sort_values("t_s")
        slot = (g.t_s // slot_s).astype(int)
        last = g.groupby(slot).value.max()
        full = last.reindex(range(last.index.max() + 1)).ffill().fillna(0)
        series[fid] = full.diff().fillna(full.iloc[0]).clip(lower=0) * 8 / slot_s / 1e6
    df = pd.DataFrame(series).fillna(0)
    df.index = df.index * slot_s
    df.index.name = "t_s"
    return df


def link_series(samples: pd.DataFrame, direction: str = "ab") -> pd.DataFrame:
    """Per-leg throughput (Mbit/s) from linkem's per-interval stats, columns 'a', 'b'.

    linkem reports cumulative counters per direction; the series is their difference over
    time (robust to whichever interval linkem used)."""
    s = samples[(samples.source == "link") & samples.id.str.endswith("/" + direction)]
    out = {}
    for ident, g in s.groupby("id"):
        leg = ident.split("/")[0]
        g = g[g.metric.isin(["bytes", "tx_bytes", "fwd_bytes", "bytes_forwarded"])]
        if g.empty:
            continue
        g = g.sort_values("t_s").drop_duplicates("t_s", keep="last")
        rate = g.value.diff() * 8 / g.t_s.diff() / 1e6
        out[leg] = pd.Series(rate.to_numpy(), index=g.t_s.to_numpy())
    return pd.DataFrame(out)


def leg_totals(samples: pd.DataFrame) -> dict:
    """Packets and bytes per leg from the switch's final counters and from linkem."""
    totals = {}
    sw = samples[samples.source == "switch"]
    if not sw.empty:
        last = sw.sort_values("t_s").groupby(["id", "metric"]).value.last()
        totals["switch"] = {f"{i}/{m}": v for (i, m), v in last.items()}
    ln = samples[samples.source == "link"]
    if not ln.empty:
        last = ln.sort_values("t_s").groupby(["id", "metric"]).value.last()
        totals["link"] = {f"{i}/{m}": v for (i, m), v in last.items()}
    return totals


def agent_final(samples: pd.DataFrame) -> dict:
    a = samples[samples.source == "agent"]
    if a.empty:
        return {}
    return a.sort_values("t_s").groupby("metric").value.last().to_dict()


# ---------------------------------------------------------------- study summaries
def throughput_summary(flows: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd of goodput over repetitions per (point, variant, client)."""
    if flows.empty:
        return flows
    ok = flows[(flows.status == "ok") & (flows.get("kind", "") != "ping")]
    g = ok.groupby(["point", "variant", "client"], sort=False).agg(
        goodput_mbit_mean=("goodput_mbit", "mean"),
        goodput_mbit_sd=("goodput_mbit", "std"),
        completion_s_mean=("completion_s", "mean"),
        rtt_ms_mean=("rtt_ms_mean", "mean"),
        runs=("run_id", "nunique"),
        cpu_saturated_runs=("cpu_saturated", "sum"),
    )
    return g.reset_index()


def run_fairness(run_dir: Path) -> dict:
    """For one run: JFI over the flows' mean goodputs in the 100 ms slots in which every flow
    receives data (the slot-filtered index; the paper's is over whole-run throughputs, see
    fairness_summary) and SFA per flow."""
    samples = load_samples(run_dir)
    series = flow_goodput_series(samples)
    if series.empty or series.shape[1] < 2:
        return {}
    active = series[(series > 0).all(axis=1)]
    means = active.mean() if not active.empty else series.mean()
    return {
        "jfi": jain(means.to_numpy()),
        "sfa": session_fairness(series).to_dict(),
        "mean_goodput_mbit": means.to_dict(),
    }


def fairness_summary(out: Path) -> pd.DataFrame:
    """One row per flow of every fairness run. `jfi` is Jain's index as Hasselquist et al.
    define it, over the flows' whole-run goodputs (bytes over the run's duration);
    `jfi_slots` only over the slots in which every flow received data, which leaves out the
    starts and stalls; `goodput_mbit` is the flow's mean over those slots."""
    rows = []
    for m in load_manifests(out):
        transports = [r for r in m.get("flows", {}).values() if r.get("kind") != "ping"]
        if len(transports) < 2 or m["status"] != "ok":
            continue
        fair = run_fairness(Path(out, "runs", m["run_id"]))
        if not fair:
            continue
        whole = jain(r.get("goodput_mbit") or 0.0 for r in transports)
        for fid, sfa in fair["sfa"].items():
            rows.append(
                {
                    "run_id": m["run_id"],
                    "point": _point_label(m.get("point")),
                    "variant": m["variant"],
                    "rep": m["rep"],
                    "flow": fid,
                    "client": m["flows"][fid]["client"],
                    "kind": m["flows"][fid].get("kind"),
                    "jfi": whole,  # the paper's: whole-run throughputs
                    "jfi_slots": fair["jfi"],  # only the slots in which all flows receive
                    "sfa": sfa,
                    "goodput_mbit": fair["mean_goodput_mbit"][fid],
                }
            )
    return pd.DataFrame(rows)


def duplication_summary(out: Path) -> pd.DataFrame:
    """Goodput of the DC flow vs the combined bytes both legs carried (duplication costs)."""
    rows = []
    for m in load_manifests(out):
        dc = [r for r in m["flows"].values() if r["client"] == "dc"]
        if not dc or m["status"] != "ok":
            continue
        span = dc[0].get("completion_s") or dc[0].get("duration_s")
        link = leg_totals(load_samples(Path(out, "runs", m["run_id"]))).get("link", {})
        if not span or "a/ab/bytes" not in link:
            continue
        # Frame bytes both legs delivered downlink over the DC flow's lifetime (Ethernet and
        # PDCP headers included; one DC flow per run, as in the paper's duplication study).
        rows.append(
            {
                "run_id": m["run_id"],
                "point": _point_label(m.get("point")),
                "variant": m["variant"],
                "dup": m["config"]["dc"]["dup"],
                "goodput_mbit": dc[0].get("goodput_mbit"),
                "links_mbit": (link["a/ab/bytes"] + link["b/ab/bytes"]) * 8 / span / 1e6,
            }
        )
    return pd.DataFrame(rows)


def reordering_summary(out: Path) -> pd.DataFrame:
    rows = []
    keys = (
        "delivered_in_order",
        "delivered_reordered",
        "duplicates",
        "out_of_window",
        "t_reordering_expiries",
        "rx_leg_a",
        "rx_leg_b",
    )
    for m in load_manifests(out):
        final = agent_final(load_samples(Path(out, "runs", m["run_id"])))
        if final:
            rows.append(
                {
                    "run_id": m["run_id"],
                    "point": _point_label(m.get("point")),
                    "variant": m["variant"],
                    **{k: final.get(k) for k in keys},
                }
            )
    return pd.DataFrame(rows)

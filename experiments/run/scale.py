"""A study at proportionally scaled rates (`dcexp run --scale K`): rates / K, delays x K.

Where a stack cannot keep up with the paper's rates on this host (aioquic's client is
CPU-bound near 2 x 20 Mbit/s, experiments/docs/aioquic-cpu.md), a study can run at rates
divided by K with every one-way delay multiplied by K. What the transport sees in packets
stays the same: the bandwidth-delay product (rate x RTT), the queues (queue_pkts,
queue_bytes, queue_bdp, burst_bytes unchanged), the ratios of rates and of delays, the delay
cv, the loss probabilities, the splitter's batches and split. Times that the study defines in
RTTs are scaled alike: t-Reordering (a hole then costs the same RTTs and the same packets),
the flows' durations and start times, the events' times and the run timeout (the same number
of RTTs per run, so the same number of congestion-control cycles). Downloads by size keep
their size (the same packets). Constants inside the stacks (TCP's 200 ms minimum RTO, QUIC's
initial RTT and max_ack_delay) do not scale: experiments/docs/scenarios.md, "Scaled rates".

Refused where the scaling has no meaning: trace-driven legs (a recorded rate schedule),
legs without a rate, the split loops (feedback, control, dc.credit: their periods and
targets are absolute).
"""

from __future__ import annotations

import copy
import re
from typing import Any

MAX_SCALE = 100.0

RATE_KEYS = ("rate_mbit",)  # divided by K
TIME_LINK_KEYS = ("delay_ms", "jitter_ms")  # multiplied by K
TIME_FLOW_KEYS = ("duration_s", "start_s")  # multiplied by K
DOWNLINKS = ("a", "b", "both")  # the legs whose rate the transport shares (uplinks: ACKs)

LINK_PATH = re.compile(r"^links\.(\w+)\.(\w+)$")
FLOW_PATH = re.compile(r"^flows\.(?:\d+\.)?(\w+)$")


class ScaleError(ValueError):
    """The study cannot run scaled; the message names the key and why."""


def _times(value: float | None, k: float) -> float | None:
    """value x k, rounded to 9 significant digits (no 30.000000000000004 in a manifest)."""
    return None if value is None else float(f"{value * k:.9g}")


def scale_value(path: str, value: Any, k: float) -> Any:
    """One value of a scenario at its dotted path (links.a.rate_mbit, flows.0.start_s,
    t_reordering_ms, events, ...) at scale k."""
    if path.startswith(("feedback", "control")) or path == "dc.credit" and value:
        raise ScaleError(
            f"{path}: --scale cannot scale the split loops (feedback, control, dc.credit): "
            "their periods and targets are absolute times"
        )
    link = LINK_PATH.match(path)
    if link and link.group(2) == "trace":
        raise ScaleError(
            f"{path}: a trace-driven leg plays a recorded rate schedule; --scale divides "
            "constant leg rates only (drop --scale or the trace)"
        )
    if link and link.group(2) in RATE_KEYS:
        return _times(value, 1 / k)
    if link and link.group(2) in TIME_LINK_KEYS:
        return _times(value, k)
    flow = FLOW_PATH.match(path)
    if flow and flow.group(1) in TIME_FLOW_KEYS:
        return _times(value, k)
    if path in ("t_reordering_ms", "timeout_s"):
        return _times(value, k)
    if path == "events":
        return [_scale_event(f"events[{i}]", ev, k) for i, ev in enumerate(value or [])]
    return value


def _scale_link(where: str, spec: dict | None, k: float) -> dict | None:
    if spec is None:
        return None
    return {key: scale_value(f"{where}.{key}", v, k) for key, v in spec.items()}


def _scale_event(where: str, ev: dict, k: float) -> dict:
    if "feedback" in ev:
        scale_value("feedback", ev["feedback"], k)  # refused: the loops do not scale
    out = {**ev, "at_s": _times(ev["at_s"], k)}
    if "set" in ev:
        out["set"] = _scale_link(f"links.{ev.get('link', 'a')}", ev["set"], k)
    return out


def scale_doc(doc: dict, k: float) -> dict:
    """A validated scenario document (profiles applied) at scale k; k = 1 returns it as it
    is. The result records `scale: k`, which the runner writes into every manifest."""
    if not 0 < k <= MAX_SCALE:
        raise ScaleError(f"--scale {k:g}: must be a number above 0 up to {MAX_SCALE:g}")
    if k == 1:
        return doc
    doc = copy.deepcopy(doc)
    if (
        doc.get("feedback") is not None
        or (doc.get("control") or {}).get("policy", "none") != "none"
    ):
        scale_value("feedback" if doc.get("feedback") is not None else "control", None, k)
    scale_value("dc.credit", (doc.get("dc") or {}).get("credit"), k)
    for leg in DOWNLINKS:
        spec = doc["links"].get(leg)
        if spec is not None and "trace" in spec:
            scale_value(f"links.{leg}.trace", spec["trace"], k)
    for leg in ("a", "b"):
        rate = {**(doc["links"].get("both") or {}), **(doc["links"].get(leg) or {})}.get(
            "rate_mbit"
        )
        if not rate and not _swept(doc, f"links.{leg}.rate_mbit", "links.both.rate_mbit"):
            raise ScaleError(
                f"links.{leg}: no rate_mbit (unlimited); --scale divides the legs' rates and "
                "cannot lower an unlimited one"
            )
    doc["links"] = {leg: _scale_link(f"links.{leg}", s, k) for leg, s in doc["links"].items()}
    doc["flows"] = [
        {key: scale_value(f"flows.{key}", v, k) for key, v in f.items()} for f in doc["flows"]
    ]
    doc["variants"] = doc.get("variants") and [
        {key: scale_value(_variant_path(key), v, k) for key, v in var.items()}
        for var in doc["variants"]
    ]
    for key in ("t_reordering_ms", "timeout_s", "events"):
        doc[key] = scale_value(key, doc.get(key), k)
    if doc.get("sweep"):
        doc["sweep"] = _scale_sweep(doc["sweep"], k)
    doc["scale"] = k
    return doc


def _variant_path(key: str) -> str:
    """A variant's key as a scenario path: a plain flow key applies to every flow."""
    return key if key.startswith("flows.") else f"flows.{key}"


def _swept(doc: dict, *paths: str) -> bool:
    """Whether the sweep sets any of these paths."""
    sweep = doc.get("sweep") or {}
    return any(p in (sweep.get("set") or {sweep.get("param"): None}) for p in paths)


def _scale_sweep(sweep: dict, k: float) -> dict:
    """The swept values at scale k; the points keep their names (the x axis of the study at
    scale 1, so the two scales line up in a comparison)."""
    sets = sweep.get("set") or {sweep["param"]: sweep["values"]}
    scaled = {}
    for path, values in sets.items():
        # a sweep over "links.both.delay_ms" sets a and b alike: the same rule
        scaled[path] = [scale_value(path, v, k) for v in values]
    return {**sweep, "set": scaled}

"""Handover metrics: how each flow lives through a leg event (an outage: loss 1 on a leg for a
while; a stepdown: a leg's rate cut), from the run's 100 ms goodput series and the link
schedule as run (the manifest's links and its applied events; no constant from a scenario).

The event lasts from the first leg change applied to the last (the outage's end; a
stepdown's single step). The remaining capacity is the downlink capacity the flow's client
reaches after the last change: both legs for the DC client (the better leg when it
duplicates, leg A when it runs as SC), its leg for an SC client; a leg at rate r and loss p
carries r (1 - p).

- recovery_s: from the end of the event to the start of the first SUSTAIN_S (1 s) of the
  goodput series whose mean is at least RECOVERED_SHARE (90 %) of the remaining capacity.
  A flow that recovers and later drops again counts its first recovery; a burst above the
  threshold shorter than the sustain window is not a recovery. NaN with recovered = False:
  not recovered within the run (the flow ended or the run stopped first).
- bytes_stalled: from the start of the event to the recovery (the end of the flow if it
  never recovered), the bytes the capacity available to the flow at each moment would have
  carried (leg B alone during an outage of A, both legs after it) minus the bytes the flow
  delivered. The capacity is the legs' nominal rate, headers included, so a flow at its
  steady ~94 % of the rate stalls ~6 % of it as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.analysis import metrics, stats

RECOVERED_SHARE = 0.9  # of the remaining capacity
SUSTAIN_S = 1.0  # the goodput's mean over this long must reach it
NOT_RECOVERED = "not recovered"  # how a table shows a flow that never recovered


@dataclass(frozen=True)
class LegEvent:
    """The leg changes of one run as the flow's client sees them: the capacity (Mbit/s) from
    each time on, as (time, capacity) steps, the first starting at -inf."""

    start_s: float
    end_s: float
    steps: tuple[tuple[float, float], ...]

    @property
    def remaining_mbit(self) -> float:
        return self.steps[-1][1]

    def capacity_bytes(self, t_from: float, t_to: float) -> float:
        """Bytes the capacity carries over [t_from, t_to)."""
        total = 0.0
        bounds = [t for t, _ in self.steps[1:]] + [math.inf]
        for (t, mbit), t_next in zip(self.steps, bounds):
            lo, hi = max(t, t_from), min(t_next, t_to)
            if hi > lo:
                total += mbit * 1e6 / 8 * (hi - lo)
        return total


def _legs(client: str, dc: dict) -> list[str]:
    """The legs a client receives on: its own for an SC client, both for the DC client but
    when it runs as SC (leg A)."""
    return {"sc-a": ["a"], "sc-b": ["b"]}.get(
        client, ["a"] if dc.get("mode") == "sc" else ["a", "b"]
    )


def _client_capacity(links: dict, dc: dict, client: str) -> float | None:
    """Downlink Mbit/s the client's legs carry (None: a leg without a rate limit); the better
    leg for a duplicating DC client (a copy on each)."""
    legs = _legs(client, dc)
    if any(links[leg].get("rate_mbit") is None for leg in legs):
        return None
    carried = [links[leg]["rate_mbit"] * (1 - (links[leg].get("loss") or 0)) for leg in legs]
    return max(carried) if dc.get("dup") and client == "dc" else sum(carried)


def leg_event(manifest: dict, client: str = "dc") -> LegEvent | None:
    """The run's leg event as `client` sees it; None without a downlink rate or loss change
    applied, or with a leg that has no rate limit."""
    config = manifest["config"]
    links = {leg: dict(config["links"][leg]) for leg in ("a", "b")}
    capacity = _client_capacity(links, config["dc"], client)
    if capacity is None:
        return None
    steps = [(-math.inf, capacity)]
    for ev in manifest.get("events_applied") or []:
        changes = {k: v for k, v in (ev.get("set") or {}).items() if k in ("rate_mbit", "loss")}
        if not changes or ev.get("direction", "down") == "up" or "link" not in ev:
            continue
        for leg in ("a", "b") if ev["link"] == "both" else (ev["link"],):
            links[leg].update(changes)
        if ev["link"] == "both" or ev["link"] in _legs(client, config["dc"]):
            steps.append((ev["applied_at_s"], _client_capacity(links, config["dc"], client)))
    if len(steps) == 1:
        return None
    return LegEvent(start_s=steps[1][0], end_s=steps[-1][0], steps=tuple(steps))


def recovery(goodput: pd.Series, event: LegEvent, slot_s: float = metrics.SLOT_S) -> dict:
    """recovery_s, recovered and bytes_stalled of one flow (module docstring) from its goodput
    series (Mbit/s per slot, indexed by the slot's start); {} when the flow ended before the
    event ended (it did not live through it)."""
    if goodput.empty or goodput.index[-1] + slot_s <= event.end_s:
        return {}
    threshold = RECOVERED_SHARE * event.remaining_mbit
    width = round(SUSTAIN_S / slot_s)
    after = goodput[goodput.index >= event.end_s - 1e-9]
    means = after.rolling(width).mean().shift(-(width - 1))  # mean of the next `width` slots
    reached = means[means >= threshold]
    recovered = not reached.empty
    until = float(reached.index[0]) if recovered else float(goodput.index[-1] + slot_s)
    first = math.floor(event.start_s / slot_s + 1e-9) * slot_s  # the slot the event starts in
    window = goodput[(goodput.index >= first - 1e-9) & (goodput.index < until - 1e-9)]
    carried = float(window.sum()) * 1e6 / 8 * slot_s
    return {
        "recovery_s": max(until - event.end_s, 0.0) if recovered else np.nan,
        "recovered": recovered,
        "bytes_stalled": event.capacity_bytes(first, until) - carried,
        "remaining_mbit": event.remaining_mbit,
    }


def handover_table(out: Path) -> pd.DataFrame:
    """One row per flow of every ok run with a leg event: point, variant, rep, flow, client,
    kind, event start and end, remaining capacity, recovery_s, recovered, bytes_stalled."""
    rows = []
    for m in metrics.load_manifests(out):
        if m["status"] != "ok" or not m.get("events_applied"):
            continue
        series = None
        for fid, res in m["flows"].items():
            event = leg_event(m, res.get("client", "dc"))
            if event is None or res.get("kind") == "ping":
                continue
            if series is None:
                series = metrics.flow_goodput_series(
                    metrics.load_samples(Path(out, "runs", m["run_id"]))
                )
            if fid not in series:
                continue
            got = recovery(series[fid], event)
            if got:
                rows.append(
                    {
                        "run_id": m["run_id"],
                        "point": metrics._point_label(m.get("point")),
                        "variant": m["variant"],
                        "rep": m["rep"],
                        "flow": fid,
                        "client": res.get("client"),
                        "kind": res.get("kind"),
                        "event_s": event.start_s,
                        "event_end_s": event.end_s,
                        **got,
                    }
                )
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per point, variant and client: runs, how many recovered, recovery_s over those that
    did and bytes stalled (MB) over all, each as mean [95 % CI] (n)."""
    if table.empty:
        return table
    rows = []
    for (point, variant, client), g in table.groupby(["point", "variant", "client"], sort=False):
        rows.append(
            {
                "point": point,
                "variant": variant,
                "client": client,
                "remaining Mbit/s": g.remaining_mbit.iloc[0],
                "recovered": f"{int(g.recovered.sum())} of {len(g)}",
                "recovery s": recovery_text(g),
                "stalled MB": stats.estimate(g.bytes_stalled / 1e6, stats.NON_NEGATIVE).text(),
            }
        )
    return pd.DataFrame(rows)


def recovery_text(runs: pd.DataFrame) -> str:
    """'1.4 [1.1, 1.7] (n=3)' over the runs that recovered, with how many did not; 'not
    recovered (n=3)' when none did."""
    done = runs[runs.recovered]
    if done.empty:
        return f"{NOT_RECOVERED} (n={len(runs)})"
    missing = len(runs) - len(done)
    return stats.estimate(done.recovery_s, stats.NON_NEGATIVE).text() + (
        f", {missing} {NOT_RECOVERED}" if missing else ""
    )

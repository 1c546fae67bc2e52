"""The split-ratio family: static, capacity, delay."""

from __future__ import annotations

from controlplane.pdcp import Report
from controlplane.policies import Decision, Policy


class StaticPolicy(Policy):
    """Never changes the split (the baseline; the daemon still logs every report)."""

    name = "static"


class CapacityPolicy(Policy):
    """Leg A's share follows rate_a / (rate_a + rate_b), the legs' drain rates smoothed by
    an EWMA, with hysteresis: the oracle's matching split, learnt from the reports. Nothing
    changes before both legs have drained something (their first rates)."""

    name = "capacity"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rate: dict[str, float] = {}

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        a = self.tuning.alpha
        old = self.rate.get(leg)
        if old is None and not report.drain_rate:
            return None  # a leg that has not drained anything yet has no rate to learn
        self.rate[leg] = report.drain_rate if old is None else a * report.drain_rate + (1 - a) * old
        if len(self.rate) < 2 or self.rate["a"] + self.rate["b"] <= 0:
            return None
        target = self.rate["a"] / (self.rate["a"] + self.rate["b"])
        return self.propose(
            target, now, f"drain rates {self.rate['a']:.0f}:{self.rate['b']:.0f} B/s"
        )


class DelayPolicy(Policy):
    """Equalises the legs' delivery delays d = held bytes / drain rate (EWMA-smoothed like
    the rates): each evaluation moves leg A's share by gain x (d_b - d_a) / (d_a + d_b +
    DELAY_FLOOR_S), so the leg that would deliver later gets less. The floor keeps two
    nearly empty legs (a few ms each, mostly noise) from swinging the split. A leg that
    drains nothing counts as infinitely late."""

    name = "delay"
    DELAY_FLOOR_S = 0.05

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delay: dict[str, float] = {}

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        d = report.queue_delay_s
        d = float("inf") if d is None else d
        old = self.delay.get(leg)
        if old is None or float("inf") in (old, d):
            self.delay[leg] = d
        else:
            self.delay[leg] = self.tuning.alpha * d + (1 - self.tuning.alpha) * old
        if len(self.delay) < 2 or leg != "b":  # one evaluation per pair of reports
            return None
        da, db = self.delay["a"], self.delay["b"]
        if da == db:
            return None
        if float("inf") in (da, db):
            error = -1.0 if da > db else 1.0
        else:
            error = (db - da) / (da + db + self.DELAY_FLOOR_S)
        target = self.share + self.tuning.gain * error
        return self.propose(target, now, f"delays {da * 1e3:.1f}:{db * 1e3:.1f} ms")

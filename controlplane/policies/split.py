"""The split-ratio family: static, capacity, delay."""

from __future__ import annotations

from controlplane.pdcp import Report
from controlplane.policies import Decision, Policy


class StaticPolicy(Policy):
    """Never changes the split (the baseline; the daemon still logs every report)."""

    name = "static"


class CapacityPolicy(Policy):
    """Leg A's share follows rate_a / (rate_a + rate_b), the legs' drain rates smoothed by
    an EWMA, with hysteresis: the oracle's matching split, learnt from the reports. Until
    both legs have drained something (their first rates) the split stays, except that a
    leg holding traffic it has not yet drained, while the other leg has a rate, gets only
    the probe share (`waiting_leg`); the first rate-based decision follows at once."""

    name = "capacity"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rate: dict[str, float] = {}
        self.held: dict[str, int] = {}

    def learn_rate(self, leg: str, report: Report) -> None:
        self.held[leg] = report.held_bytes
        a = self.tuning.alpha
        old = self.rate.get(leg)
        if old is None and not report.drain_rate:
            return  # a leg that has not drained anything yet has no rate to learn
        self.rate[leg] = report.drain_rate if old is None else a * report.drain_rate + (1 - a) * old

    def waiting_leg(self, now: float) -> Decision | None:
        """Before both rates: a leg that holds traffic but has drained none of it yet, while
        the other leg drains, gets only the probe share until its first rate. A report
        carries a rate once the leg spent a quarter of a report period sending, so a slow
        leg's first report often has none; TCP's slow start meanwhile fills it at the
        sender's rate: at 8:1 from a 50:50 start leg B held 44 kB (141 ms at 2.5 Mbit/s)
        when its first rate came, 11 ms after its first frame, and t-Reordering (100 ms)
        expired on it (experiments/docs/baselines/findings.md, loop-ratio-20). Unpaced, so
        the first rate-based decision is not held back by it."""
        for leg, other in (("a", "b"), ("b", "a")):
            if leg not in self.rate and self.held.get(leg, 0) > 0 and other in self.rate:
                held = self.held[leg]
                target = 0.0 if leg == "a" else 1.0  # clamped to the probe share
                reason = f"leg {leg.upper()} holds {held} B, drained none yet"
                return self.propose(target, now, reason, paced=False)
        return None

    def rate_share(self) -> float | None:
        """Leg A's share of the legs' summed drain rates; None before both have one."""
        if len(self.rate) < 2 or self.rate["a"] + self.rate["b"] <= 0:
            return None
        return self.rate["a"] / (self.rate["a"] + self.rate["b"])

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        self.learn_rate(leg, report)
        target = self.rate_share()
        if target is None:
            return self.waiting_leg(now)
        return self.propose(
            target, now, f"drain rates {self.rate['a']:.0f}:{self.rate['b']:.0f} B/s"
        )


class DelayPolicy(CapacityPolicy):
    """Equalises the legs' delivery delays d = held bytes / drain rate (both EWMA-smoothed):
    leg A's share is the capacity policy's c = rate_a / (rate_a + rate_b), at which the legs'
    delays grow alike, leaning away from the leg that would deliver later by gain x c(1 - c)
    x (d_b - d_a) / (d_a + d_b + DELAY_FLOOR_S). The lean is proportional, not summed over
    evaluations: a summed one overshot, because a queue answers a split change only after
    what the legs already hold has drained, and swung leg A's share between 0.67 and 0.97 at
    4:1 (loop-ratio-20, experiments/docs/baselines/findings.md). The floor keeps two nearly
    empty legs (a few ms each, mostly noise) from swinging the split. A leg that drains
    nothing (after it drained something) counts as infinitely late and gets only the probe
    share; before both legs have drained something, the capacity policy's rule."""

    name = "delay"
    DELAY_FLOOR_S = 0.05

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delay: dict[str, float] = {}

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        self.learn_rate(leg, report)
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
        if len(self.rate) < 2:
            return self.waiting_leg(now)  # as the capacity policy
        if float("inf") in (da, db):
            if da == db:
                return None
            target = 0.0 if da > db else 1.0  # clamped to the probe share
        else:
            c = self.rate_share()
            if c is None:
                return None
            lean = (db - da) / (da + db + self.DELAY_FLOOR_S)
            target = c + self.tuning.gain * c * (1 - c) * lean
        return self.propose(target, now, f"delays {da * 1e3:.1f}:{db * 1e3:.1f} ms")

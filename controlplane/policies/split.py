"""The split-ratio family: static, capacity, delay."""

from __future__ import annotations

from controlplane.pdcp import Report
from controlplane.policies import Decision, Policy


class StaticPolicy(Policy):
    """Never changes the split (the baseline; the daemon still logs every report)."""

    name = "static"


def other_leg(leg: str) -> str:
    return "b" if leg == "a" else "a"


class CapacityPolicy(Policy):
    """Leg A's share follows rate_a / (rate_a + rate_b), the legs' drain rates smoothed by
    an EWMA, with hysteresis: the oracle's matching split, learnt from the reports. The
    start comes first (`start_step`): a leg without a rate while the other has one, or more
    than BEHIND_S later than the other leg once both have rates, gets only the probe share
    until it has a rate and has drained what the initial split put there; then the rates'
    share."""

    name = "capacity"
    # At the start, a leg this much later than the other (held bytes / drain rate) drains
    # before it gets its share; below it, the split's own batch runs and noise.
    BEHIND_S = 0.05

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rate: dict[str, float] = {}
        self.held: dict[str, int] = {}  # legs that have reported, what they hold
        self.rated_reports = {"a": 0, "b": 0}  # reports since each leg's rate is known
        self.starting = True  # until start_step hands over to the policy's own rule
        self.draining: str | None = None  # the leg start_step lets drain

    def learn_rate(self, leg: str, report: Report) -> None:
        self.held[leg] = report.held_bytes
        a = self.tuning.alpha
        old = self.rate.get(leg)
        if old is None and not report.drain_rate:
            return  # a leg that has not drained anything yet has no rate to learn
        self.rate[leg] = report.drain_rate if old is None else a * report.drain_rate + (1 - a) * old
        self.rated_reports[leg] += 1

    def waiting_leg(self, now: float) -> Decision | None:
        """Before both rates: a leg without a rate yet, while the other leg drains, gets
        only the probe share until its first rate: a leg not yet measured is taken for the
        slow one. A report carries a rate once the leg spent a quarter of a report period
        sending, so a slow leg's first report often has none, and with a 100-packet batch
        at 50:50 its first frames come as one 50-frame run: at 8:1, waiting for leg B's
        first report (41 to 58 ms after the flow's first data) let TCP's slow start put 20
        to 44 kB (64 to 141 ms at 2.5 Mbit/s) on it, and t-Reordering (100 ms) expired
        (experiments/docs/baselines/findings.md, "The start at 8:1"). Leg A's first rate
        comes before that run starts. A leg counts as rate-less once it has reported
        without a rate, or once the other leg has reported a rate twice (a linkem reports a
        user only from its first frame on): not merely because the other leg's report of
        the same period came first. Unpaced, so the first rate-based decision is not held
        back by it; a leg at the probe share still drains and so gets its rate."""
        for leg, other in (("a", "b"), ("b", "a")):
            heard = leg in self.held or self.rated_reports[other] >= 2
            if leg not in self.rate and other in self.rate and heard:
                held = self.held.get(leg, 0)
                target = 0.0 if leg == "a" else 1.0  # clamped to the probe share
                reason = (
                    f"leg {leg.upper()} holds {held} B, drained none yet"
                    if held
                    else f"leg {leg.upper()} has no rate yet"
                )
                return self.propose(target, now, reason, paced=False)
        return None

    def start_step(self, now: float) -> Decision | None:
        """The start, before the policy's own rule (which takes over once `starting` is
        False). The initial split is a guess: from 50:50 at 8:1, TCP's slow start had put
        20 to 44 kB (64 to 141 ms) on the 2.5 Mbit/s leg B by its first rate, and at the
        rates' share leg B kept that lag, its 11-frame batch runs on top: frames more than
        t-Reordering (100 ms) behind were lost (findings.md, loop-ratio-20). So a leg more
        than BEHIND_S later than the other gets only the probe share until its delay is
        down to the other's (unpaced: the policy's first decision follows at once)."""
        if len(self.rate) < 2:
            return self.waiting_leg(now)
        delay = {
            leg: self.held.get(leg, 0) / rate if rate else float("inf")  # alpha 1: rate 0
            for leg, rate in self.rate.items()
        }
        late = "a" if delay["a"] > delay["b"] else "b"
        if self.draining is None and delay[late] - delay[other_leg(late)] > self.BEHIND_S:
            self.draining = late
        if self.draining is None or delay[self.draining] <= delay[other_leg(self.draining)]:
            self.starting = False
            return None
        leg = self.draining
        reason = (
            f"start: leg {leg.upper()} {delay[leg] * 1e3:.0f} ms behind "
            f"{delay[other_leg(leg)] * 1e3:.0f} ms, drains first"
        )
        return self.propose(0.0 if leg == "a" else 1.0, now, reason, paced=False)

    def rate_share(self) -> float | None:
        """Leg A's share of the legs' summed drain rates; None before both have one."""
        if len(self.rate) < 2 or self.rate["a"] + self.rate["b"] <= 0:
            return None
        return self.rate["a"] / (self.rate["a"] + self.rate["b"])

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        self.learn_rate(leg, report)
        if self.starting:
            decision = self.start_step(now)
            if self.starting:
                return decision
        target = self.rate_share()
        if target is None:
            return None
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
    share. The start is the capacity policy's (`start_step`)."""

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
        if self.starting:  # as the capacity policy, on every report: leg B may not report yet
            decision = self.start_step(now)
            if self.starting:
                return decision
        if len(self.delay) < 2 or leg != "b":  # one evaluation per pair of reports
            return None
        da, db = self.delay["a"], self.delay["b"]
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

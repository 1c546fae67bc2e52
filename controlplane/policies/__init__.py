"""Split policies of the controller's feedback loop (`dcctl control --policy P`).

A policy is a pure state machine over leg feedback reports: `on_report(leg, report, now)`
and `on_tick(now)` return a `Decision` (leg A's share of the user's packets, duplication
on/off, the reason) when the split should change, else None. No I/O and no clock of its
own, so tests drive it with report sequences. One module per family:

- `split`: static, capacity (share proportional to the legs' drain rates), delay (equalise
  the time each leg needs to deliver what it holds);
- `failover`: a leg silent or losing everything loses its traffic until it recovers.
"""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.pdcp import Report

LEGS = ("a", "b")


@dataclass(frozen=True)
class Decision:
    share_a: float  # leg A's share of the packets, 0..1
    dup: bool = False
    reason: str = ""


@dataclass
class Tuning:
    """Knobs shared by the policies (`dcctl control --help` shows the defaults)."""

    alpha: float = 0.2  # EWMA weight of a new report
    # smallest share change worth a MODIFY: one packet of a 100-packet batch. At 8:1 leg B
    # carries 0.11 of the packets; 0.05 of hysteresis left it up to 45 % over or under its
    # rate (findings.md, loop-ratio-20)
    hysteresis: float = 0.01
    min_interval_s: float = 0.1  # at least this long between two changes
    min_share: float = 0.02  # each leg keeps this share as a probe (0: none)
    # delay policy: how far the split leans from the legs' rate share c per unit of relative
    # delay difference, in units of c(1 - c)
    gain: float = 1.0
    # failover: a leg without a report for this long, while the other leg reports, is down
    # (PacketIns from a loaded software switch arrive in bursts tens of ms apart)
    silence_s: float = 0.25
    down_reports: int = 2  # failover: consecutive reports losing everything -> down
    up_reports: int = 5  # failover: consecutive delivering reports -> up again
    dup: bool = False  # failover: duplicate instead of moving the traffic


class Policy:
    """Base: the applied share, and the smoothing every split policy shares (hysteresis,
    a minimum interval between changes, the probe share)."""

    name = "policy"

    def __init__(self, base_share: float, tuning: Tuning | None = None, now: float = 0.0):
        self.tuning = tuning or Tuning()
        self.base_share = base_share
        self.share = base_share
        self.dup = False
        self.last_change = -float("inf")
        self.start = now

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        return None

    def on_tick(self, now: float) -> Decision | None:
        return None

    def clamp(self, share: float) -> float:
        lo = self.tuning.min_share
        return min(max(share, lo), 1.0 - lo)

    def propose(self, share: float, now: float, reason: str, paced: bool = True) -> Decision | None:
        """A decision when `share` differs enough from the applied one and the last change
        is old enough; the policy then considers it applied. An unpaced decision (a stopgap
        until the first measurement) neither waits for nor delays the next one."""
        share = self.clamp(share)
        if abs(share - self.share) < self.tuning.hysteresis:
            return None
        if paced and now - self.last_change < self.tuning.min_interval_s:
            return None
        self.share = share
        if paced:
            self.last_change = now
        return Decision(share, False, reason)


def make_policy(name: str, base_share: float, tuning: Tuning | None = None, now: float = 0.0):
    from controlplane.policies.failover import FailoverPolicy
    from controlplane.policies.split import CapacityPolicy, DelayPolicy, StaticPolicy

    kinds = {p.name: p for p in (StaticPolicy, CapacityPolicy, DelayPolicy, FailoverPolicy)}
    if name not in kinds:
        raise ValueError(f"policy {name!r} is not one of {', '.join(kinds)}")
    return kinds[name](base_share, tuning, now)


POLICY_NAMES = ("static", "capacity", "delay", "failover")
# The Tuning fields each policy reads: a knob given to another policy would change nothing.
POLICY_KNOBS = {
    "static": (),
    "capacity": ("alpha", "hysteresis", "min_interval_s", "min_share"),
    "delay": ("alpha", "gain", "hysteresis", "min_interval_s", "min_share"),
    "failover": ("silence_s", "down_reports", "up_reports", "dup", "min_share"),
}
# The knobs as `dcctl control`'s options and a scenario's `control:` keys name them (units in
# the names) -> Tuning's fields.
KNOB_NAMES = {
    "alpha": "alpha",
    "hysteresis": "hysteresis",
    "min_interval_ms": "min_interval_s",
    "min_share": "min_share",
    "gain": "gain",
    "silence_ms": "silence_s",
    "down_reports": "down_reports",
    "up_reports": "up_reports",
    "dup": "dup",
}


def knob_readers(knob: str) -> str:
    """The policies that read `knob` (a KNOB_NAMES key), as an error says them."""
    readers = [p for p, knobs in POLICY_KNOBS.items() if KNOB_NAMES[knob] in knobs]
    return f"polic{'ies' if len(readers) > 1 else 'y'} {', '.join(readers)}"


def unused_knob(policy: str, given) -> str | None:
    """The first knob of `given` (KNOB_NAMES keys) that `policy` does not read, with the
    policies that do: "gain: applies to policy delay only, not capacity"."""
    for knob in given:
        if KNOB_NAMES[knob] not in POLICY_KNOBS.get(policy, ()):
            return f"{knob}: applies to {knob_readers(knob)} only, not {policy}"
    return None

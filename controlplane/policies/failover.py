"""The failover family: a leg that is silent for `silence_s` (while the other leg keeps
reporting) or loses everything for
`down_reports` consecutive reports is down; all traffic moves to the other leg (or, with
`dup`, both legs carry everything), except the probe share that tells when it recovers:
`up_reports` consecutive reports that deliver bring the configured split back."""

from __future__ import annotations

from controlplane.pdcp import Report
from controlplane.policies import LEGS, Decision, Policy


class FailoverPolicy(Policy):
    name = "failover"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A leg that never reported carries no traffic yet (linkem reports a user once it
        # has seen one of its PDUs): silence counts from its first report.
        self.heard: dict[str, float | None] = dict.fromkeys(LEGS)
        self.bad = dict.fromkeys(LEGS, 0)
        self.good = dict.fromkeys(LEGS, 0)
        self.down = dict.fromkeys(LEGS, False)

    def on_report(self, leg: str, report: Report, now: float) -> Decision | None:
        self.heard[leg] = now
        if report.losing_everything:
            self.bad[leg], self.good[leg] = self.bad[leg] + 1, 0
        elif report.delivered_bytes > 0:
            self.good[leg], self.bad[leg] = self.good[leg] + 1, 0
        if not self.down[leg] and self.bad[leg] >= self.tuning.down_reports:
            return self._set(leg, True, now, f"leg {leg.upper()} loses everything")
        if self.down[leg] and self.good[leg] >= self.tuning.up_reports:
            return self._set(leg, False, now, f"leg {leg.upper()} delivers again")
        return None

    def on_tick(self, now: float) -> Decision | None:
        for leg, other in (("a", "b"), ("b", "a")):
            if self.heard[leg] is None or self.heard[other] is None:
                continue
            silent = now - self.heard[leg]
            # Silent while the other leg kept reporting: when both are quiet, the reports'
            # path to the controller stalls (a loaded switch delivers PacketIns in bursts),
            # not a leg.
            ahead = self.heard[other] - self.heard[leg]
            if not self.down[leg] and min(silent, ahead) >= self.tuning.silence_s:
                self.good[leg] = 0
                return self._set(leg, True, now, f"leg {leg.upper()} silent {silent * 1e3:.0f} ms")
        return None

    def _set(self, leg: str, down: bool, now: float, reason: str) -> Decision | None:
        self.down[leg] = down
        a_down, b_down = self.down["a"], self.down["b"]
        if a_down == b_down:  # both up, or both down: nothing better than the configured split
            share, dup = self.base_share, False
        else:
            share, dup = (
                self.tuning.min_share if a_down else 1 - self.tuning.min_share
            ), self.tuning.dup
            if dup:
                share = self.base_share
        if (share, dup) == (self.share, self.dup):
            return None
        self.share, self.dup, self.last_change = share, dup, now
        return Decision(share, dup, reason)

"""Progress display: one bar for the current run, one for the whole study, with ETA.

On a terminal the line is redrawn in place; otherwise (CI logs) one line per finished run.
"""

from __future__ import annotations

import sys
import time


def format_duration(seconds: float) -> str:
    """`42s`, `3m05s`, `2h07m` (a campaign's hours in hours)."""
    seconds = max(0, int(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _bar(frac: float, width: int = 20) -> str:
    frac = min(max(frac, 0.0), 1.0)
    full = int(frac * width)
    return "#" * full + "-" * (width - full)


class Progress:
    """Counts runs; the ETA weighs them by an expected cost (seconds) when the caller gives
    one (a campaign mixes 5 s downloads with 3-minute fairness runs), else counts them."""

    def __init__(
        self, total: int, done: int = 0, stream=sys.stderr, cost_left: float | None = None
    ) -> None:
        self.total, self.done, self.stream = total, done, stream
        self.cost_left = cost_left  # expected seconds of the runs still to do, if known
        self.cost_done = 0.0  # expected seconds of the runs finished in this invocation
        self.cost_run = 1.0
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t_start = time.monotonic()
        self.finished_now = 0  # runs finished in this invocation (for the ETA)
        self.run_id = ""
        self.t_run = 0.0
        self._last_draw = 0.0

    def note(self, text: str) -> None:
        self._clear()
        print(text, file=self.stream, flush=True)

    def start_run(self, run_id: str, cost: float = 1.0) -> None:
        self.run_id, self.t_run, self.cost_run = run_id, time.monotonic(), cost
        if not self.tty:
            print(f"[{self.done + 1}/{self.total}] {run_id} ...", file=self.stream, flush=True)

    def _eta(self, run_frac: float) -> str:
        elapsed = time.monotonic() - self.t_start
        if self.cost_left is not None:
            progressed = self.cost_done + run_frac * self.cost_run
            if progressed <= 0:
                return "?"
            return format_duration(
                elapsed / progressed * (self.cost_left - run_frac * self.cost_run)
            )
        progressed = self.finished_now + run_frac
        if progressed <= 0.05:
            return "?"
        left = self.total - self.done - run_frac
        return format_duration(elapsed / progressed * left)

    def tick(self, now_s: float, expected_s: float, flows: dict) -> None:
        if not self.tty or time.monotonic() - self._last_draw < 0.25:
            return
        self._last_draw = time.monotonic()
        fracs = []
        for flow in flows.values():
            size = flow.size_bytes
            got = flow.progress_bytes()
            if size and got is not None:
                fracs.append(got / size)
        run_frac = (
            (sum(fracs) / len(fracs)) if fracs else (now_s / expected_s if expected_s else 0.0)
        )
        run_frac = min(run_frac, 0.99)
        overall = (self.done + run_frac) / self.total
        line = (
            f"\r[{self.done + 1}/{self.total}] {self.run_id[:40]:40s} [{_bar(run_frac, 12)}]"
            f" {now_s:5.1f}s | all [{_bar(overall)}] {overall:4.0%} ETA {self._eta(run_frac)}"
        )
        self.stream.write(line[:160])
        self.stream.flush()

    def ran(self, run_id: str, cost: float, took_s: float) -> None:
        """Runs that overlap (Ray's workers): the next finish_run is about this one, which
        took `took_s` seconds."""
        self.run_id, self.cost_run, self.t_run = run_id, cost, time.monotonic() - took_s

    def finish_run(self, text: str) -> None:
        self.done += 1
        self.finished_now += 1
        if self.cost_left is not None:
            self.cost_left -= self.cost_run
            self.cost_done += self.cost_run
        took = time.monotonic() - self.t_run
        self._clear()
        print(
            f"[{self.done}/{self.total}] {self.run_id}: {text} ({took:.0f}s, "
            f"ETA {self._eta(0)})",
            file=self.stream,
            flush=True,
        )

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")

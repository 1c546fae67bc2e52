"""What an idle testbed costs: every part running, no traffic (issue 25's goal: under 5 % of
one core in total)."""

from __future__ import annotations

import time
from pathlib import Path

from experiments.run.cpu import run_seconds, thread_times
from experiments.run.runner import part_pids
from experiments.run.testbed import Testbed, claim_prefix, release_prefix

SETTLE_S = 1.0  # after the build: the agent's deep idle starts 200 ms after the last frame


def measure(config: dict, duration_s: float, workdir: Path) -> dict[str, float]:
    """Each part's CPU (share of one core) over `duration_s` of a built, silent testbed."""
    prefix = claim_prefix("dx")
    try:
        with Testbed(prefix=prefix, config=config, workdir=workdir) as testbed:
            time.sleep(SETTLE_S)
            pids = part_pids(testbed, {})
            before, t0 = {n: thread_times(p) for n, p in pids.items()}, time.monotonic()
            time.sleep(duration_s)
            after, elapsed = {n: thread_times(p) for n, p in pids.items()}, time.monotonic() - t0
    finally:
        release_prefix(prefix)
    return {name: run_seconds(before[name], after[name]) / elapsed for name in pids}

"""`dcexp clean` removes what a killed run left, and nothing of a live one (root)."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from experiments.cli import main as dcexp
from experiments.run.testbed import DPDK_RUN_DIR, RUN_DIR, claim_prefix, leftovers

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("dcexp clean tests need root (network namespaces); run as root")


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid  # reaped: no process has this id now (barring reuse within the test)


def test_clean_removes_dead_runs_keeps_live_ones(capsys):
    # claimed like a run's: no other run or checkout on this host holds these names now
    dead, live = claim_prefix(), claim_prefix()
    try:
        for prefix, pid in ((dead, dead_pid()), (live, os.getpid())):
            (RUN_DIR / f"{prefix}.pid").write_text(str(pid))
            subprocess.run(["ip", "netns", "add", prefix + "srv"], check=True)
        (DPDK_RUN_DIR / dead).mkdir(parents=True, exist_ok=True)
        # a process left inside the dead run's namespace is stopped by its id
        orphan = subprocess.Popen(["ip", "netns", "exec", dead + "srv", "sleep", "60"])
        assert dcexp(["clean"]) == 0
        out = capsys.readouterr().out
        assert f"removed namespace {dead}srv" in out and f"keeping {live}" in out
        assert leftovers(dead) == [] and leftovers(live) == [live + "srv"]
        assert not (DPDK_RUN_DIR / dead).exists() and not (RUN_DIR / f"{dead}.pid").exists()
        assert orphan.wait(timeout=30) != 0
    finally:
        for prefix in (dead, live):
            subprocess.run(["ip", "netns", "del", prefix + "srv"], capture_output=True, check=False)
            (RUN_DIR / f"{prefix}.pid").unlink(missing_ok=True)


def test_clean_treats_a_zombie_owner_as_dead(capsys):
    """A dcexp killed but not yet reaped by its parent is a zombie: kill(pid, 0) still
    succeeds, but it will never tear its run down, so its leftovers are removed."""
    prefix = claim_prefix()
    zombie = subprocess.Popen(["sleep", "60"])
    try:
        zombie.kill()
        stat = Path(f"/proc/{zombie.pid}/stat")
        deadline = time.monotonic() + 30
        while stat.read_text().split(") ")[1][0] != "Z":  # killed, not yet waited for
            assert time.monotonic() < deadline
            time.sleep(0.01)
        (RUN_DIR / f"{prefix}.pid").write_text(str(zombie.pid))
        subprocess.run(["ip", "netns", "add", prefix + "srv"], check=True)
        assert dcexp(["clean"]) == 0
        out = capsys.readouterr().out
        assert f"removed namespace {prefix}srv" in out, out
        assert leftovers(prefix) == [] and not (RUN_DIR / f"{prefix}.pid").exists()
    finally:
        zombie.wait()
        subprocess.run(["ip", "netns", "del", prefix + "srv"], capture_output=True, check=False)
        (RUN_DIR / f"{prefix}.pid").unlink(missing_ok=True)

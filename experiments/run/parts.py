"""What every part of a run shares: where the built tools are, the error that names a part
which failed, and waiting for a part to come up."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
# The multipath device's address behind each leg (MPTCP and MPQUIC flows; testbed.py)
MP_ADDRS = {"a": "10.0.0.3", "b": "10.0.0.4"}
RUN_DIR = Path("/run/dcexp")  # owner PID files and short socket paths (108-char limit)


class TestbedError(RuntimeError):
    """A part of the testbed failed to start; the message names the part and what to do."""


def venv_tool(name: str) -> str | None:
    """A console script of this project: next to our interpreter first, then on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def wait_for(
    predicate,
    timeout_s: float,
    what: str,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Poll `predicate` until true; fail naming `what` (with the log tail) on timeout or exit."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = ""
    if log is not None and log.exists():
        tail = "\n  " + "\n  ".join(log.read_text(errors="replace").splitlines()[-8:])
    state = (
        f"exited with {proc.returncode}"
        if proc is not None and proc.poll() is not None
        else f"not ready after {timeout_s:.0f} s"
    )
    raise TestbedError(f"{what} {state}; log {log}:{tail}" if log else f"{what} {state}")

"""Stopping a process we started: the switch, linkem, pdcp-agent, a flow's endpoints, a
fuzzer's target. One way for every part, so none is ever stopped by name. And its memory
(rss_kib), for the tests that hold it bounded.

    proc = subprocess.Popen(argv, start_new_session=True)
    ...
    rc = stop_process(proc, grace_s=10)
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def rss_kib(pid: int) -> int:
    """The resident memory of process `pid` in KiB (VmRSS); 0 when it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except FileNotFoundError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith("VmRSS:")), 0)


def stop_process(proc: subprocess.Popen, grace_s: float = 3.0) -> int:
    """SIGTERM the process we started, SIGKILL after `grace_s`; its exit status. A process
    started in a new session leads its own process group: the signal goes to the whole group,
    so the children it started (`ip netns exec`'s program, a shell's) go with it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return proc.returncode
        try:
            if os.getpgid(proc.pid) == proc.pid:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            return proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()

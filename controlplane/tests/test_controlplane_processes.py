"""dccommon.processes: how every part stops the processes it started (switch, linkem, agent).

Run: .venv/bin/pytest -q controlplane/tests/test_controlplane_processes.py
"""

import os
import signal
import subprocess
import sys
import time

from dccommon.processes import stop_process

# Starts a grandchild, prints its PID, then waits for a signal.
PARENT = (
    "import subprocess, sys, time; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
    "print(child.pid, flush=True); time.sleep(60)"
)
# Ignores SIGTERM, says so once it does.
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)"
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by its parent, here init) counts as gone
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[1][0] != "Z"


def test_a_session_leader_goes_with_the_children_it_started():
    proc = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    grandchild = int(proc.stdout.readline())
    assert stop_process(proc) == -signal.SIGTERM
    # the grandchild sleeps 60 s: 30 s tells a stopped one from a survivor on any machine
    deadline = time.monotonic() + 30
    while alive(grandchild):
        assert time.monotonic() < deadline, "the grandchild outlived its process group's stop"
        time.sleep(0.02)


def test_a_process_ignoring_sigterm_is_killed_after_the_grace():
    proc = subprocess.Popen(
        [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout.readline() == "ready\n"
    start = time.monotonic()
    assert stop_process(proc, grace_s=0.3) == -signal.SIGKILL
    assert time.monotonic() - start >= 0.3


def test_a_process_in_our_own_group_is_stopped_alone():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert stop_process(proc) == -signal.SIGTERM  # and the test process itself lives on


def test_a_process_that_has_ended_gives_its_status():
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    assert stop_process(proc) == 3

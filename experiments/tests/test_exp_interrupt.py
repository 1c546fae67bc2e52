"""Ctrl-C in the middle of a run (root): `dcexp run` exits 130, tears the testbed down
(no namespace, no process of the run left) and saves nothing half-done."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from experiments.run.testbed import RUN_DIR
from experiments.tests.test_exp_smoke import assert_prefix_gone

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the interrupt test needs root (network namespaces); run as root")


def owned_prefix(pid: int) -> str | None:
    for pidfile in RUN_DIR.glob("dx*.pid"):
        try:
            if int(pidfile.read_text()) == pid:
                return pidfile.name[: -len(".pid")]
        except (OSError, ValueError):
            continue
    return None


# A flow of each kind whose stop reads the testbed (mpquic: its per-leg byte counters, from
# a namespace the interrupt has torn down already), and the file that shows it is running.
RUNNING_FLOWS = {
    "tcp": ({"kind": "tcp", "cc": "cubic", "duration_s": 60}, "f0-dc/client.json"),
    "mpquic": ({"kind": "mpquic", "size_mb": 500}, "f0-dc/qlog/client/*.qlog"),
}


@pytest.mark.parametrize("kind", RUNNING_FLOWS)
def test_sigint_tears_everything_down(tmp_path, kind):
    flow, running_file = RUNNING_FLOWS[kind]
    scenario = tmp_path / "long.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "name": "long",
                "links": {"both": {"rate_mbit": 20, "delay_ms": 5}},
                "flows": [{**flow, "client": "dc"}],
            }
        )
    )
    out = tmp_path / "out"
    dcexp = Path(sys.executable).parent / "dcexp"
    proc = subprocess.Popen(
        [str(dcexp), "run", str(scenario), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        prefix = None
        while time.monotonic() < deadline and proc.poll() is None:
            prefix = prefix or owned_prefix(proc.pid)
            if prefix and list(out.glob(f"runs/*.partial/logs/{running_file}")):
                break
            time.sleep(0.2)
        assert prefix and proc.poll() is None, proc.stdout.read() if proc.poll() else "no run"
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "interrupted by SIGINT" in output
    assert_prefix_gone(prefix)
    assert not list(out.glob("runs/*/manifest.json")), "a half run was saved as done"
    # how the study was made is kept for its report, even when the study was interrupted
    record = json.loads((out / "study.json").read_text())
    assert record == {"commands": [f"dcexp run {scenario} --out {out}"], "profile": "full"}
    assert not list(RUN_DIR.glob(f"{prefix}.*"))

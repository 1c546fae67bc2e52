"""`dcexp run --executor ray` on a real local Ray cluster (root): a head offering no
dc_testbed and worker nodes offering one each, all on this machine (`ray start`, temp dirs
and free ports of their own, stopped by the PIDs we started, even on failure).

- a small study writes the same tree as the local executor (run names, files per run,
  manifests ok, each stamped with the worker that ran it); a rerun resumes (nothing to do);
- a worker that fails preflight (started without /usr/sbin on its PATH: no
  `ethtool`) gets no runs, and the driver names it and why;
- Ctrl-C on the driver cancels the runs: exit 130, the workers tear their testbeds down;
- a worker killed mid-study (its raylet and its run, SIGKILL) loses no run: Ray runs it again
  on the other worker.
"""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from experiments.analysis import metrics
from experiments.run.raycluster import DCEXP, VENV_BIN, Cluster, descendants
from experiments.run.testbed import RUN_DIR, leftovers, remove_leftovers
from experiments.tests.test_exp_smoke import assert_prefix_gone

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the Ray cluster test runs experiments: it needs root")

LINKS = {"both": {"rate_mbit": 20, "delay_ms": 5}}
TINY = {  # 2 runs of a 2-second TCP download behind the splitter, one per worker
    "name": "tiny",
    "links": LINKS,
    "flows": [{"kind": "tcp", "cc": "cubic", "duration_s": 2, "client": "dc"}],
    "sweep": {"param": "dc.batch", "values": [2, 100]},
}


@pytest.fixture(scope="module")
def cluster():
    # Ray's socket paths must stay short: a temp dir of our own directly under /tmp
    tmp = Path(tempfile.mkdtemp(prefix="dcray", dir="/tmp"))
    c = Cluster(tmp)
    try:
        c.start_head()
        c.start_worker("a")
        c.start_worker("b")
        # a worker that cannot run the testbed: its PATH lacks /usr/sbin (ethtool)
        c.start_worker("nosbin", {**c.env, "PATH": f"{VENV_BIN}:/usr/bin:/bin"})
        c.wait_for(3)
        yield c
    finally:
        c.stop()
        subprocess.run(["rm", "-rf", str(tmp)], check=False)


def dcexp(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DCEXP, *map(str, args)], capture_output=True, text=True, timeout=timeout, check=False
    )


def tree(out: Path) -> dict[str, list[str]]:
    """Run name -> the files of its directory (relative), the shape `dcexp report` reads."""
    runs = out / "runs"
    return {
        d.name: sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())
        for d in sorted(runs.iterdir())
    }


def owned_prefixes(pids: set[int]) -> list[str]:
    """Run prefixes whose owner file names one of `pids`."""
    out = []
    for pidfile in RUN_DIR.glob("dx*.pid"):
        try:
            if int(pidfile.read_text()) in pids:
                out.append(pidfile.name[: -len(".pid")])
        except (OSError, ValueError):
            continue
    return out


def worker_run_pids(cluster, name: str) -> set[int]:
    return descendants(cluster.nodes[name].proc.pid)


def test_ray_study_writes_what_the_local_executor_writes(cluster, tmp_path):
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(TINY))
    local = dcexp("run", scenario, "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    on_ray = ("run", scenario, "--out", tmp_path / "ray", "--executor", "ray")
    on_ray += ("--address", cluster.address)
    ray = dcexp(*on_ray)
    assert ray.returncode == 0, ray.stderr
    assert "dcexp: 2 ok, 0 failed, 0 already saved" in ray.stderr
    # the worker without /usr/sbin: named, with the reason, and given no run
    assert "failed preflight and gets no runs: ethtool is missing (Debian package ethtool)" in (
        ray.stderr
    )
    assert tree(tmp_path / "ray") == tree(tmp_path / "local")
    assert (tmp_path / "ray" / "scenario.yaml").read_text() == (
        tmp_path / "local" / "scenario.yaml"
    ).read_text()
    manifests = metrics.load_manifests(tmp_path / "ray")
    assert [m["status"] for m in manifests] == ["ok"] * 2
    for m in manifests:
        assert m["worker"]["problems"] == [] and m["worker"]["root"]
        assert m["worker"]["git_commit"] == m["git_commit"]
        assert m["host"]["hostname"] == m["worker"]["host"]
        assert all(r["bytes"] > 0 for r in m["flows"].values())
    nodes = {m["worker"]["node_id"] for m in manifests}
    refused = [line for line in ray.stderr.splitlines() if "failed preflight" in line]
    assert len(refused) == 1 and not any(n[:8] in refused[0] for n in nodes)
    # resume and provenance unchanged: a rerun finds every run saved
    again = dcexp(*on_ray)
    assert again.returncode == 0 and "0 ok, 0 failed, 2 already saved" in again.stderr
    for m in manifests:
        assert leftovers(m["prefix"]) == []


def test_ctrl_c_cancels_the_runs_and_the_workers_tear_down(cluster, tmp_path):
    scenario = tmp_path / "long.yaml"
    flows = [{**TINY["flows"][0], "duration_s": 60}]
    doc = {"name": "long", "links": LINKS, "flows": flows, "repetitions": 3}
    scenario.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    argv = [DCEXP, "run", scenario, "--out", out, "--executor", "ray"]
    proc = subprocess.Popen(
        [*map(str, argv), "--address", cluster.address],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline, prefixes = time.monotonic() + 120, []
        while time.monotonic() < deadline and proc.poll() is None and len(prefixes) < 2:
            workers = worker_run_pids(cluster, "a") | worker_run_pids(cluster, "b")
            prefixes = owned_prefixes(workers)
            time.sleep(0.5)
        if proc.poll() is not None:
            raise AssertionError(f"dcexp ended early: {proc.communicate()[0]}")
        assert len(prefixes) == 2, "both workers should be running a run"
        time.sleep(3)  # into the flows
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "interrupted by SIGINT" in output
    for prefix in prefixes:
        assert_prefix_gone(prefix)
        assert not list(RUN_DIR.glob(f"{prefix}.*"))
    assert not list(out.glob("runs/*/manifest.json")), "a cancelled run was saved"


def test_a_worker_killed_mid_study_loses_no_run(cluster, tmp_path):
    """Runs last: it kills worker b."""
    study = {**TINY, "name": "kill", "flows": [{**TINY["flows"][0], "duration_s": 6}]}
    scenario = tmp_path / "kill.yaml"
    scenario.write_text(yaml.safe_dump(study))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [DCEXP, "run", str(scenario), "--out", str(out), "--executor", "ray"]
        + ["--address", cluster.address],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    killed, b_pids = [], set()
    scratch = set(Path(tempfile.gettempdir()).glob("dcexp-ray-*"))
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and not killed:
            b_pids = worker_run_pids(cluster, "b")
            killed = owned_prefixes(b_pids)
            time.sleep(0.3)
        assert killed, "worker b never got a run"
        time.sleep(3)  # its run is in its flows
        cluster.nodes["b"].kill()
        output, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        for prefix in killed:  # what the killed run left (its host did not die with it)
            remove_leftovers(prefix)
        for path in set(Path(tempfile.gettempdir()).glob("dcexp-ray-*")) - scratch:
            subprocess.run(["rm", "-rf", str(path)], check=False)  # its scratch directory
    assert proc.returncode == 0, output
    assert "2 ok, 0 failed" in output
    manifests = metrics.load_manifests(out)
    assert sorted(m["run_id"] for m in manifests) == sorted(tree(out))
    assert len(manifests) == 2 and all(m["status"] == "ok" for m in manifests)
    # b died in its first run: both runs, that one again, ran on a
    assert not any(m["prefix"] in killed or m["worker"]["pid"] in b_pids for m in manifests)
    assert len({m["worker"]["node_id"] for m in manifests}) == 1

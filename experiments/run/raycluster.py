"""A Ray cluster on this machine: a head offering no dc_testbed and worker nodes offering one
each (`ray start --block`, a temp dir and free ports of their own, stopped by the PIDs it
started and their descendants). Used by experiments/tests/test_exp_ray.py, and to time a
study on 1 and on 2 local workers:

    sudo .venv/bin/python -m experiments.run.raycluster SCENARIO.yaml --workers 1 2

prints the wall time of `dcexp run SCENARIO --executor ray` on each cluster size (and of the
local executor, for reference), with the load average. Workers on one host share its CPUs:
the figures show scheduling, not a speed-up per host.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

from dccommon.cliargs import InputFileError, int_range, make_output_dir
from dccommon.ports import free_port, free_ports

VENV_BIN = Path(sys.executable).parent
RAY, DCEXP = str(VENV_BIN / "ray"), str(VENV_BIN / "dcexp")


class ClusterError(RuntimeError):
    """A node did not come up."""


def descendants(pid: int) -> set[int]:
    """`pid` and every process below it (Ray's workers leave its process group)."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        out.add(p)
        todo += children.get(p, [])
    return out


class Node:
    """One `ray start --block` of ours and everything it started."""

    def __init__(self, argv: list[str], log: Path, env: dict) -> None:
        self.log = log
        with open(log, "w") as out:
            self.proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )

    def kill(self, sig=signal.SIGKILL) -> None:
        for pid in descendants(self.proc.pid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill(signal.SIGTERM)
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
        self.kill(signal.SIGKILL)
        self.proc.wait()


class Cluster:
    """A head offering no dc_testbed and worker nodes offering one each, on this machine,
    with a temp dir and free ports of their own; `with LocalCluster(n) as c:` for scripts."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.nodes = tmp, {}
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        self.address = f"127.0.0.1:{free_port()}"

    def _ports(self) -> list[str]:
        options = (
            "--node-manager-port",
            "--object-manager-port",
            "--metrics-export-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
        )
        # distinct, and out of the range Ray's own connections draw from while it starts
        return [a for opt, port in zip(options, free_ports(len(options))) for a in (opt, str(port))]

    def start_head(self) -> None:
        argv = [RAY, "start", "--head", "--block", "--port", self.address.split(":")[1]]
        argv += ["--ray-client-server-port", str(free_port()), "--include-dashboard=false"]
        # a lost node is declared dead within seconds (the default is about a minute)
        argv += [
            "--system-config",
            '{"health_check_period_ms": 1000, "health_check_failure_threshold": 3}',
        ]
        self._start("head", argv + ["--resources", '{"dc_testbed": 0}', "--num-cpus", "0"])

    def start_worker(self, name: str, env: dict | None = None) -> None:
        argv = [RAY, "start", "--block", "--address", self.address]
        self._start(name, argv + ["--resources", '{"dc_testbed": 1}', "--num-cpus", "1"], env)

    def _start(self, name: str, argv: list[str], env: dict | None = None) -> None:
        argv += ["--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        argv += ["--object-store-memory", str(200 * 2**20), "--temp-dir", str(self.tmp)]
        node = Node(argv + self._ports(), self.tmp / f"{name}.log", env or self.env)
        self.nodes[name] = node
        # one at a time: raylets starting together on 2 busy cores time out
        deadline = time.monotonic() + 180
        while "block forever" not in node.log.read_text():
            if node.proc.poll() is not None:
                raise ClusterError(f"ray start ({name}) exited: {node.log.read_text()}")
            if time.monotonic() > deadline:
                raise ClusterError(f"ray start ({name}) not up in time")
            time.sleep(0.5)

    def wait_for(self, n_testbeds: int, timeout_s: float = 120) -> None:
        """Until the cluster offers `n_testbeds` dc_testbed (every worker joined)."""
        probe = (
            f"import ray, logging; ray.init(address={self.address!r}, "
            "logging_level=logging.ERROR); print(ray.cluster_resources().get('dc_testbed', 0))"
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            dead = [n for n, node in self.nodes.items() if node.proc.poll() is not None]
            if dead:
                raise ClusterError(
                    f"ray start of {dead} exited: {self.nodes[dead[0]].log.read_text()}"
                )
            got = subprocess.run(
                [sys.executable, "-c", probe],
                capture_output=True,
                text=True,
                env=self.env,
                check=False,  # not up yet: try again
            )
            if got.returncode == 0 and float(got.stdout.strip() or 0) >= n_testbeds:
                return
            time.sleep(2)
        raise ClusterError(f"the cluster did not offer {n_testbeds} dc_testbed in time")

    def stop(self) -> None:
        for node in self.nodes.values():
            node.stop()


class LocalCluster(Cluster):
    """`with LocalCluster(workers=2) as c:` -- started, and stopped whatever happens."""

    def __init__(self, workers: int) -> None:
        # Ray's socket paths must stay short: a temp dir of our own directly under /tmp
        super().__init__(Path(tempfile.mkdtemp(prefix="dcray", dir="/tmp")))
        self.n_workers = workers

    def __enter__(self) -> Self:
        try:
            self.start_head()
            for i in range(self.n_workers):
                self.start_worker(f"w{i}")
            self.wait_for(self.n_workers)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _timed(argv: list[str]) -> float:
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.monotonic() - t0


def _fresh(study: Path) -> Path:
    """A study folder of ours under --out, emptied so that its runs are timed afresh (only
    it: --out may be a folder holding other results)."""
    shutil.rmtree(study, ignore_errors=True)
    return study


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="wall time of a study on local Ray workers")
    p.add_argument("scenario", type=Path)
    p.add_argument("--workers", type=int_range(1, 64, "workers"), nargs="+", default=[1, 2])
    p.add_argument("--out", type=Path, default=Path("results/ray-walltime"))
    args = p.parse_args(argv)
    try:
        make_output_dir(args.out)
    except InputFileError as exc:
        p.error(f"--out: {exc}")
    rows = []
    load = os.getloadavg()[0]
    wall = _timed([DCEXP, "run", str(args.scenario), "--out", str(_fresh(args.out / "local"))])
    rows.append(("local executor", "-", wall, load))
    for n in args.workers:
        load = os.getloadavg()[0]
        with LocalCluster(n) as cluster:
            out = _fresh(args.out / f"ray-{n}")
            wall = _timed(
                [DCEXP, "run", str(args.scenario), "--out", str(out)]
                + ["--executor", "ray", "--address", cluster.address]
            )
        rows.append(("ray", str(n), wall, load))
    print("| executor | local workers | wall time of the study (s) | load average at start |")
    print("|---|---|---|---|")
    for name, n, wall, load in rows:
        print(f"| {name} | {n} | {wall:.1f} | {load:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

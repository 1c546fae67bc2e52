"""`--executor ray`: a study's runs as Ray tasks over many hosts, one run per host at a time.

Runs cannot share a host without measuring each other's CPU use, so every run is a task that
needs the custom resource `dc_testbed: 1`, which each worker node offers once
(`ray start --address HEAD:PORT --resources '{"dc_testbed": 1}'`); Ray's scheduler does the
rest. On the worker the task calls the very function a local run calls (runner.execute_run)
into a scratch directory, then hands the run directory back as one gzipped tar through Ray's
object store; the driver unpacks it into OUT/runs/<run_id>/ as each run finishes, exactly as
a local run writes it, so resume, `dcexp report` and provenance are unchanged.

Before a study, every worker runs a preflight (root, `make build`'s artefacts, the tools the
study's flows need, the commit it runs, free memory, CPUs): its report is printed by the
driver and stored in each run's manifest (`worker`). A worker that fails it gets no runs: an
actor of ours holds its `dc_testbed` for the rest of the campaign, and the driver says which
host and why. Each run checks again on its host (a worker may join late).

Failures: a run that fails keeps today's meaning (a failed manifest; a testbed that cannot be
built stops the study, exit 1). A run lost with its host or worker process is resubmitted
elsewhere by Ray (max_retries, system failures only; retry_exceptions stays off, so a run that
failed for a real reason is not retried blindly). Ctrl-C cancels the tasks: Ray raises
KeyboardInterrupt in each running one, whose testbed tears down as on a local Ctrl-C; the
driver waits for that before it leaves.
"""

from __future__ import annotations

import io
import logging
import os
import platform
import shutil
import signal
import socket
import tarfile
import tempfile
import time
from pathlib import Path

from experiments.flows import MB, run_payload_bytes
from experiments.run.runner import (
    Interrupted,
    RunOptions,
    execute_run,
    expected_s,
    host_problems,
    provenance,
)
from experiments.run.scenario import Run, Scenario
from experiments.run.testbed import TestbedError

log = logging.getLogger(__name__)

RAY_VERSION = "2.60.0"  # pinned in pyproject.toml's `ray` extra; `make setup` installs it
RESOURCE = "dc_testbed"
MAX_RETRIES = 3  # resubmissions of a run whose worker or node was lost
MIN_MEM_AVAILABLE_MB = 1024  # a testbed with its payload files and flows needs about this
PREFLIGHT_TIMEOUT_S = 120
CONNECT_TIMEOUT_S = 10
CANCEL_WAIT_S = 60  # how long Ctrl-C waits for the workers' teardown
NO_WORKER_S = 120  # a study with no usable worker for this long ends (exit 1)
WAIT_POLL_S = 0.5  # the driver's wait between checks (Ctrl-C is handled in between)


class ExecutorError(RuntimeError):
    """Ray is missing or its cluster cannot be reached: a one-line message with the fix."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            f"--executor ray needs Ray {RAY_VERSION}: run `make setup` (it installs it into "
            f".venv), or `.venv/bin/pip install 'ray=={RAY_VERSION}'`"
        ) from None
    return ray


# ---------------------------------------------------------------- on the worker
def _mem_available_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    return 0


def host_report(runs: list[Run], opts: RunOptions, driver_commit: str) -> dict:
    """This worker's preflight: what it is, what it runs, and what keeps it from runs."""
    import ray

    prov = provenance()
    node = ray.get_runtime_context().get_node_id()
    report = {
        "host": platform.node(),
        "node_id": node,
        "where": f"{platform.node()} (node {node[:8]})",
        "pid": os.getpid(),
        "root": os.geteuid() == 0,
        "git_commit": prov["git_commit"],
        "git_dirty": prov["git_dirty"],
        "cpus": os.cpu_count(),
        "mem_available_mb": _mem_available_mb(),
        "loadavg": os.getloadavg(),
    }
    problems = host_problems(runs, opts.target, opts.switch)
    if prov["git_commit"] != driver_commit:
        problems.append(
            f"it runs commit {prov['git_commit'][:12]}, the driver {driver_commit[:12]}: check "
            "out the driver's commit there and run `make build`"
        )
    scratch = tempfile.gettempdir()  # each run writes its payload files there first
    need = max(run_payload_bytes(run.config["flows"]) for run in runs)
    free = shutil.disk_usage(scratch).free
    report["scratch_free_mb"] = free // MB
    if need > free:
        problems.append(
            f"{scratch} has {free / MB:,.0f} MB free, a run writes {need / MB:,.0f} MB of payload"
        )
    if report["mem_available_mb"] < MIN_MEM_AVAILABLE_MB:
        problems.append(
            f"{report['mem_available_mb']} MB of memory available, below "
            f"{MIN_MEM_AVAILABLE_MB} MB"
        )
    report["problems"] = problems
    return report


def run_task(run: Run, opts: RunOptions, driver_commit: str) -> dict:
    """One run on this worker, through the same execute_run as a local run; returns its
    manifest and its directory as a gzipped tar (or why the host refused it)."""
    report = host_report([run], opts, driver_commit)
    if report["problems"]:
        return {"refused": report}
    # ray.cancel interrupts a running task through SIGINT's handler (KeyboardInterrupt, and
    # the testbed tears down); a worker started in the background inherits SIGINT ignored.
    old_sigint = signal.signal(signal.SIGINT, signal.default_int_handler)
    work = Path(tempfile.mkdtemp(prefix="dcexp-ray-"))
    try:
        run_dir = work / run.run_id
        t0 = time.monotonic()
        try:
            manifest = execute_run(run, run_dir, opts, extra={"worker": report})
        except TestbedError as exc:
            return {"testbed_error": str(exc), "worker": report}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
            tar.add(run_dir, arcname=".")
        return {
            "manifest": manifest,
            "archive": buf.getvalue(),
            "worker": report,
            "took_s": time.monotonic() - t0,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
        signal.signal(signal.SIGINT, old_sigint)


class _Hold:
    """Holds a failed worker's dc_testbed so that Ray schedules no run there."""


# ---------------------------------------------------------------- on the driver
def save_run(archive: bytes, run_dir: Path) -> None:
    """Unpack a worker's run directory into place, whole or not at all (as execute_run
    renames its own): a resume never sees half a run."""
    tmp = run_dir.with_name(run_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(tmp, filter="data")  # no absolute paths, links out or devices
    shutil.rmtree(run_dir, ignore_errors=True)
    tmp.rename(run_dir)


class RayExecutor:
    """Runs a study's pending runs on the Ray cluster at `address` (as ray.init takes it:
    "auto", HOST:PORT of the head's GCS, or ray://HOST:10001 through Ray Client)."""

    def __init__(self, address: str = "auto") -> None:
        self.ray = import_ray()
        self.address = address
        self.commit = provenance()["git_commit"]
        self._connected = False
        self._checked: set = set()
        self.holds: dict[str, object] = {}  # node id -> _Hold actor on it
        self.workers: dict[str, dict] = {}  # node id -> its last preflight report
        self._reachable()  # before anything of the study is made

    def _say(self, text: str) -> None:
        log.info("ray: %s", text)

    def _reachable(self) -> None:
        """Ray's own connect retries an address that does not answer forever (and ignores
        Ctrl-C meanwhile): try it first."""
        if self.address == "auto":
            return  # Ray reads this host's current cluster and fails at once without one
        hostport = self.address.removeprefix("ray://")
        host, _, port = hostport.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()):
            raise ExecutorError(
                f"--address {self.address}: expected auto, HOST:PORT or ray://HOST:PORT"
            )
        try:
            with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
                pass
        except OSError as exc:
            raise ExecutorError(
                f"--address {self.address}: no Ray cluster answers there "
                f"({exc.strerror or exc}); start one (experiments/README.md, 'Many hosts')"
            ) from None

    def _connect(self) -> None:
        if self._connected:
            return
        try:
            self.ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(
                f"--address {self.address}: no Ray cluster there ({str(exc).splitlines()[0]}); "
                "start one (experiments/README.md, 'Many hosts')"
            ) from None
        self._connected = True

    def close(self) -> None:
        for actor in self.holds.values():
            self.ray.kill(actor)
        self.holds.clear()
        if self._connected:
            self.ray.shutdown()
            self._connected = False

    # ---------------------------------------------------------------- preflight
    def _testbed_nodes(self) -> list[dict]:
        return [n for n in self.ray.nodes() if n["Alive"] and n["Resources"].get(RESOURCE, 0) >= 1]

    def _usable_workers(self) -> list[str]:
        """Alive nodes offering dc_testbed that we do not hold."""
        return [n["NodeID"] for n in self._testbed_nodes() if n["NodeID"] not in self.holds]

    def _hold(self, node_id: str) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if node_id in self.holds:
            return
        actor = self.ray.remote(_Hold).options(
            resources={RESOURCE: 1},
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        )
        self.holds[node_id] = actor.remote()

    def _refuse(self, report: dict) -> None:
        self._say(
            f"worker {report['where']} failed preflight and gets no runs: "
            + "; ".join(report["problems"])
        )
        self._hold(report["node_id"])

    def check(self, scenario: Scenario, out: Path, opts: RunOptions) -> None:
        """Every worker's preflight for this study's kind of runs (once per kind)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._connect()
        kinds: dict = {}  # one run per combination the checks depend on
        for run in scenario.runs:
            flows = tuple(sorted({f["kind"] for f in run.config["flows"]}))
            kinds.setdefault((flows, run.config["dc"]["sn_bits"]), run)
        key = (opts.target, tuple(sorted(kinds)))
        if key in self._checked:
            return
        nodes = self._testbed_nodes()
        if not nodes:
            raise TestbedError(
                f"the Ray cluster at {self.address} has no worker offering {RESOURCE}: start "
                f"each with `ray start --address HEAD:PORT --resources '{{\"{RESOURCE}\": 1}}'`"
            )
        task = self.ray.remote(host_report)
        refs = {
            n["NodeID"]: task.options(
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
            ).remote(list(kinds.values()), opts, self.commit)
            for n in nodes
            if n["NodeID"] not in self.holds
        }
        good = []
        for node_id, ref in refs.items():
            try:
                report = self.ray.get(ref, timeout=PREFLIGHT_TIMEOUT_S)
            except self.ray.exceptions.GetTimeoutError:
                self._say(f"worker node {node_id[:8]} did not answer preflight in time; no runs")
                self.ray.cancel(ref, force=True)
                self._hold(node_id)
                continue
            except self.ray.exceptions.RayError as exc:  # lost meanwhile: Ray retries elsewhere
                self._say(f"worker node {node_id[:8]} was lost during preflight: {exc}")
                continue
            self.workers[node_id] = report
            if report["problems"]:
                self._refuse(report)
                continue
            good.append(report)
            self._say(
                f"worker {report['where']} ok: commit {report['git_commit'][:12]}"
                f"{' (dirty)' if report['git_dirty'] else ''}, {report['cpus']} CPUs, "
                f"{report['mem_available_mb']} MB available, load {report['loadavg'][0]:.1f}"
            )
        if not good:
            raise TestbedError(f"no Ray worker at {self.address} passed preflight (see above)")
        if opts.switch is not None and len(good) > 1:  # one switch carries one run at a time
            for report in good[1:]:
                self._say(
                    f"worker {report['where']} gets no runs: the remote switch "
                    f"{opts.switch.address} carries one run at a time, {good[0]['where']} "
                    "drives it"
                )
                self._hold(report["node_id"])
        self._checked.add(key)

    # ---------------------------------------------------------------- the runs
    def runs(self, todo: list[Run], runs_dir: Path, opts: RunOptions, bar):
        """Submit every run; yield (run, manifest) as each is saved in runs_dir, or
        (run, reason) for a run lost with its hosts more often than Ray retries."""
        ray = self.ray
        task = ray.remote(run_task).options(
            resources={RESOURCE: 1},
            num_cpus=0,
            max_retries=MAX_RETRIES,
            retry_exceptions=False,
        )
        pending = {task.remote(run, opts, self.commit): run for run in todo}
        bar.note(f"ray: {len(todo)} runs submitted to {self.address}")
        # A signal handler that raises inside Ray's own wait turns into a SystemError there:
        # note the signal, raise Interrupted between two waits.
        caught: list[str] = []
        old = {
            s: signal.signal(s, lambda signum, _f: caught.append(signal.Signals(signum).name))
            for s in (signal.SIGINT, signal.SIGTERM)
        }
        usable_at = checked_at = time.monotonic()
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_POLL_S)
                if caught:
                    raise Interrupted(caught[0])
                now = time.monotonic()
                if not ready and now - checked_at > 5:  # Ray would wait forever for a
                    checked_at = now  # dc_testbed that nobody offers
                    if self._usable_workers():
                        usable_at = now
                    elif now - usable_at > NO_WORKER_S:
                        raise TestbedError(
                            f"no usable worker in the cluster at {self.address} for "
                            f"{NO_WORKER_S} s (all lost or failed preflight); "
                            f"{len(pending)} runs not done, a resume runs them"
                        )
                for ref in ready:
                    run = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError:
                        raise  # our code raised on the worker: a bug, shown with its traceback
                    except ray.exceptions.RayError as exc:
                        bar.ran(run.run_id, expected_s(run), 0.0)
                        yield run, f"lost with its worker {MAX_RETRIES + 1} times ({exc})"
                        continue
                    if "refused" in result:  # this host cannot run it: never again, elsewhere
                        self._refuse(result["refused"])
                        pending[task.remote(run, opts, self.commit)] = run
                        continue
                    if "testbed_error" in result:  # as locally: the study stops
                        bar.ran(run.run_id, expected_s(run), 0.0)
                        bar.finish_run("FAILED (the testbed could not be built, see below)")
                        raise TestbedError(
                            f"on {result['worker']['where']}: {result['testbed_error']}"
                        )
                    save_run(result["archive"], runs_dir / run.run_id)
                    bar.ran(run.run_id, expected_s(run), result["took_s"])
                    yield run, result["manifest"]
        except BaseException:
            self._cancel(pending, runs_dir)
            raise
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)

    def _cancel(self, pending: dict, runs_dir: Path) -> None:
        """Cancel what is left and wait for the workers to tear their testbeds down; a run
        that finished meanwhile is still saved."""
        ray = self.ray
        for ref in pending:
            ray.cancel(ref)  # a running task gets KeyboardInterrupt: the testbed closes
        left, deadline = list(pending), time.monotonic() + CANCEL_WAIT_S
        while left and time.monotonic() < deadline:
            ready, left = ray.wait(left, num_returns=1, timeout=WAIT_POLL_S)
            for ref in ready:
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError:
                    continue  # cancelled (or lost): nothing to save
                if "archive" in result:
                    save_run(result["archive"], runs_dir / pending[ref].run_id)
        if left:
            self._say(f"{len(left)} runs did not end within {CANCEL_WAIT_S} s of the cancel")

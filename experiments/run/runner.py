"""Runs a scenario: every run in its own fresh testbed, saved the moment it finishes.

Layout of an output directory:

    OUT/scenario.yaml                 the validated scenario (profile, --reps, --scale applied)
    OUT/runs/<run_id>/manifest.json   config, point, variant, rep, seed, scale, commit, tools,
                                      host, CPU saturation flag, status, per-flow results
    OUT/runs/<run_id>/samples.csv     tidy samples: t_s, source, id, metric, value
    OUT/runs/<run_id>/flows.csv       one row per flow: bytes, completion, goodput, intact
    OUT/runs/<run_id>/logs/           every part's log and raw stats (qlogs, JSON lines)

A run directory appears only complete (written under a temporary name, then renamed), so an
interrupted sweep resumes at the first run without one.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from controlplane.client import P4RuntimeError
from controlplane.model import SplitterError
from dccommon.jsonlines import read_json_lines
from experiments.flows import (
    MB,
    FlowContext,
    make_cert,
    make_flow,
    make_payload,
    payload_bytes,
    registry,
    run_payload_bytes,
)
from experiments.flows.mpquic import TQUIC_CLIENT
from experiments.flows.quicgo import QUICGO_BIN
from experiments.run import cpu, limits, progress
from experiments.run.links import LinkError
from experiments.run.linkspec import LinkSpecError
from experiments.run.parts import ROOT, TestbedError, venv_tool
from experiments.run.sampler import SAMPLE_INTERVAL_S, Sampler, flatten_switch_stats, saturation
from experiments.run.scenario import EVENT_DIRECTIONS, FLOW_DEFAULTS, Run, Scenario
from experiments.run.switches import (
    P4_PROGRAM,
    RemoteSwitch,
    bmv2_missing,
    p4sim_engine,
    p4sim_pipeline,
)
from experiments.run.testbed import (
    AGENT_BIN,
    DC_ADDR,
    SERVER_ADDR,
    Testbed,
    claim_prefix,
    release_prefix,
)

FLOW_PORT_BASE = 4433
TAIL_S = 0.5  # keep sampling briefly after the last flow ends
SAMPLE_COLUMNS = ("t_s", "source", "id", "metric", "value")


class Interrupted(Exception):
    """SIGINT/SIGTERM during a run: tear down, keep what is saved, exit."""


def _raise_interrupted(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


# ---------------------------------------------------------------- provenance
def _cmd_version(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "absent"
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0] if text else f"exit {proc.returncode}"


def _dpkg_version(pkg: str) -> str:
    return _cmd_version(["dpkg-query", "-W", "-f=${Version}", pkg])


def provenance() -> dict:
    """Commit and tool versions stamped on every run."""
    import aioquic

    git = ["git", "-C", str(ROOT)]
    commit = _cmd_version(git + ["rev-parse", "HEAD"])
    dirty = (
        subprocess.run(
            git + ["status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,  # outside a git checkout: not dirty, commit "absent"
        ).stdout.strip()
        != ""
    )
    return {
        "git_commit": commit,
        "git_dirty": dirty,
        "tools": {
            "ngtcp2": _dpkg_version("ngtcp2-client"),
            "iperf3": _dpkg_version("iperf3"),
            "dpdk": _dpkg_version("dpdk"),
            "aioquic": aioquic.__version__,
            "quic-go": _cmd_version([str(QUICGO_BIN), "version"]),
            "tquic": _cmd_version([str(TQUIC_CLIENT), "--version"]),
            "python": platform.python_version(),
            "kernel": platform.release(),
        },
        "host": {
            "hostname": platform.node(),
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
        },
    }


# ---------------------------------------------------------------- preflight
def preflight(scenario: Scenario, target: str, switch: RemoteSwitch | None = None) -> None:
    """Fail early, naming what is wrong and how to fix it."""
    problems = host_problems(scenario.runs, target, switch)
    if problems:
        raise TestbedError("preflight failed:\n  " + "\n  ".join(problems))


def host_problems(runs: list[Run], target: str, switch: RemoteSwitch | None = None) -> list[str]:
    """What this host lacks to run `runs` (root, tools, `make build`'s artefacts, the
    target), each with its fix; empty when it can run them."""
    problems = []
    if os.geteuid() != 0:
        problems.append("dcexp run needs root (network namespaces, raw sockets): use sudo")
    needed = {"ip": "iproute2", "ethtool": "ethtool", "openssl": "openssl"}
    plugins = registry()
    for run in runs:
        for flow in run.config["flows"]:
            for tool in plugins[flow["kind"]].tools:
                needed[tool] = {
                    "gtlsserver": "ngtcp2-server",
                    "gtlsclient": "ngtcp2-client",
                    "ping": "iputils-ping",
                }.get(tool, tool)
    for tool, pkg in needed.items():
        if shutil.which(tool) is None:
            problems.append(f"{tool} is missing (Debian package {pkg}): run `make setup`")
    if target == "p4sim" and venv_tool("p4sim") is None:
        problems.append("p4sim is missing: run `make setup`")
    if target == "bmv2":
        for sn_bits in sorted({run.config["dc"]["sn_bits"] for run in runs}):
            missing = bmv2_missing(sn_bits)
            if missing and missing not in problems:
                problems.append(missing)
    if not P4_PROGRAM.exists():
        problems.append(f"{P4_PROGRAM} is missing")
    for built in sorted(
        {b for run in runs for f in run.config["flows"] for b in plugins[f["kind"]].built}
    ):
        if not built.exists():
            problems.append(f"{built} is missing: run `make build`")
    if not AGENT_BIN.exists():
        problems.append(f"{AGENT_BIN} is missing: run `make build`")
    linkem = ROOT / "build" / "linkem" / "linkem"
    if not linkem.exists():
        problems.append(f"{linkem} is missing: run `make build`")
    if switch is not None:
        problems += [
            f"{missing} (cabled to the switch of {switch.source}) is not on this host"
            for missing in switch.missing_interfaces()
        ]
    return problems


def check_disk_space(scenario: Scenario, out: Path) -> None:
    """Each run writes its payload files under OUT before its flows start: refuse a study
    whose largest run cannot fit, before any run."""
    need = max(run_payload_bytes(run.config["flows"]) for run in scenario.runs)
    free = shutil.disk_usage(out).free
    if need > free:
        raise TestbedError(
            f"not enough disk space: a run of {scenario.name} writes {need / MB:,.0f} MB of "
            f"payload under {out}, whose file system has {free / MB:,.0f} MB free; lower "
            "flows.size_mb or give another --out"
        )


# ---------------------------------------------------------------- one run
@dataclass
class RunOptions:
    target: str = "p4sim"
    engine: str | None = None  # p4sim's: native, interp, None = per program (p4sim_engine)
    link_kind: str = "linkem"
    # linkem's, µs (0: every frame at its due time) or "auto" (dcexp's): 50 on legs above
    # 242 Mbit/s, 0 below (experiments.run.links.departure_slack_us)
    departure_slack_us: int | str = "auto"
    io: str = "afpacket"  # the parts' veth I/O (Testbed.io): afpacket or afxdp
    timeout_s: float | None = None
    pin: str = "split"  # experiments/run/cpu.py: network on CPU 0, flow endpoints on the others
    switch: RemoteSwitch | None = None  # target "remote": the switch file's description


def part_pids(testbed: Testbed, flows: dict) -> dict[str, int]:
    """PIDs of the run's processes by part name, for CPU accounting and pinning."""
    out = {name: proc.pid for name, proc in testbed.procs.items() if proc.poll() is None}
    for leg, link in testbed.links.items():
        proc = getattr(link, "proc", None)  # linkem; tc netem has no process
        if proc is not None and proc.poll() is None:
            out[f"link_{leg}"] = proc.pid
    for fid, flow in flows.items():
        for role in ("server", "client"):
            proc = getattr(flow, role)
            if proc is not None and proc.poll() is None:
                out[f"{fid}/{role}"] = proc.pid
    return out


def _pin(pins: dict | None, part: str, pids) -> None:
    if pins is not None:
        for pid in pids:
            cpu.pin(pid, cpu.cpus_for(pins, part))


def _flow_timeout(run: Run) -> float:
    """A generous bound: every flow at a tenth of the slower leg's rate, plus slack."""
    rates = [run.config["links"][leg].get("rate_mbit") or 20 for leg in ("a", "b")]
    slowest = max(min(rates), 1.0)
    worst = 0.0
    for f in run.config["flows"]:
        dur = f["duration_s"] if f["duration_s"] else f["size_mb"] * 8 / (slowest / 10)
        worst = max(worst, f["start_s"] + dur)
    return worst + 30


def _expand_flows(run: Run) -> list[tuple[str, dict, int]]:
    """Flow specs with count > 1 become several flows: (flow id, spec, client index)."""
    out, per_client = [], {"dc": 0, "sc-a": 0, "sc-b": 0}
    for i, spec in enumerate(run.config["flows"]):
        for j in range(spec["count"]):
            client_index = per_client[spec["client"]] if spec["client"] != "dc" else 0
            per_client[spec["client"]] += 1
            out.append(
                (
                    f"f{i}{'' if spec['count'] == 1 else f'.{j}'}-{spec['client']}",
                    spec,
                    client_index,
                )
            )
    return out


def execute_run(
    run: Run, run_dir: Path, opts: RunOptions, on_tick=None, extra: dict | None = None
) -> dict:
    """Build the testbed, run the flows, sample, tear down, write the run directory.
    `extra` goes into the manifest (a Ray worker's preflight report)."""
    prefix = claim_prefix("dx")
    try:
        return _execute_run(run, run_dir, opts, prefix, on_tick, extra or {})
    finally:
        release_prefix(prefix)  # also when the testbed was never built


@dataclass
class _RunFiles:
    """Where a run writes until it is complete (then renamed to its run directory)."""

    tmp: Path
    logs: Path
    payload_dir: Path
    cert: Path
    key: Path


@dataclass
class _RunRecord:
    """What a run gathers as it goes: its flows, sample rows, results and errors."""

    pins: dict | None
    flows: dict = dataclasses.field(default_factory=dict)
    rows: list = dataclasses.field(default_factory=list)
    results: dict = dataclasses.field(default_factory=dict)
    errors: list = dataclasses.field(default_factory=list)
    applied: list = dataclasses.field(default_factory=list)
    sampler: Sampler | None = None
    t0_wall: float = dataclasses.field(default_factory=time.time)
    placement: dict = dataclasses.field(default_factory=dict)  # part -> its CPUs
    net_counters: dict = dataclasses.field(default_factory=dict)  # "before"/"after" -> role


def _execute_run(
    run: Run, run_dir: Path, opts: RunOptions, prefix: str, on_tick, extra: dict
) -> dict:
    """One run, stage by stage; the testbed is torn down whatever happens in it."""
    files = _prepare(run_dir)
    manifest = _manifest_head(run, opts, prefix, extra)
    rec = _RunRecord(pins=cpu.pin_sets(opts.pin))
    testbed = _new_testbed(run, opts, prefix, files.logs, rec.pins)
    try:
        with testbed:
            _pin_parts(testbed, rec.pins)
            _start_flows(run, testbed, files, rec)
            rec.net_counters["before"] = _net_counters(testbed)
            _sample(run, opts, testbed, rec, on_tick)
            rec.net_counters["after"] = _net_counters(testbed)
    finally:
        _stop(testbed, rec)
    manifest["link_slack_us"] = testbed.link_slack_us  # leg -> the slack its linkem ran with
    manifest["link_rt_priority"] = testbed.link_rt_priority  # leg -> SCHED_FIFO prio (0: none)
    _collect(testbed, files, rec)
    return _save(run, run_dir, files, manifest, rec)


def _prepare(run_dir: Path) -> _RunFiles:
    """A fresh temporary run directory with its logs folder, TLS certificate and payloads."""
    tmp = run_dir.with_name(run_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    logs = tmp / "logs"
    logs.mkdir(parents=True)
    cert, key = make_cert(logs)
    payload_dir = tmp / "htdocs"
    payload_dir.mkdir()
    return _RunFiles(tmp, logs, payload_dir, cert, key)


def _engine(config: dict, opts: RunOptions) -> dict:
    """The manifest's p4sim engine (the one the switch ran with: the one asked for, else the
    program's default) and pipeline (what executed the P4 program: the native engine runs a
    TNA program on the interpreter)."""
    if opts.target != "p4sim":
        return {"engine": None, "pipeline": None}
    engine = p4sim_engine(config, opts.engine)
    return {"engine": engine, "pipeline": p4sim_pipeline(config, engine)}


def _manifest_head(run: Run, opts: RunOptions, prefix: str, extra: dict) -> dict:
    """The manifest as the run starts: what runs, where, on which commit and tools."""
    return {
        "run_id": run.run_id,
        "point": run.point,
        "variant": run.variant,
        "rep": run.rep,
        "seed": run.seed,
        "scale": run.scale,  # rates / scale (dcexp run --scale; 1: the scenario's own)
        "config": run.config,
        "target": opts.target,
        **_engine(run.config, opts),
        "switch": dataclasses.asdict(opts.switch) if opts.switch is not None else None,
        "link": opts.link_kind,
        "departure_slack_us": opts.departure_slack_us,
        "io": opts.io,
        "pin": opts.pin,
        "prefix": prefix,
        **provenance(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "loadavg_start": os.getloadavg(),  # other people's work on a shared machine
        **extra,
    }


def _new_testbed(run: Run, opts: RunOptions, prefix: str, logs: Path, pins) -> Testbed:
    """The run's testbed, described but not built (entering it builds it)."""
    return Testbed(
        prefix=prefix,
        config=run.config,
        workdir=logs,
        target=opts.target,
        engine=opts.engine,
        link_kind=opts.link_kind,
        departure_slack_us=opts.departure_slack_us,
        io=opts.io,
        seed=run.seed,
        agent_cpu=min(cpu.cpus_for(pins, "agent")) if pins else 0,
        remote=opts.switch,
    )


def _pin_parts(testbed: Testbed, pins) -> None:
    """The built testbed's processes on their CPUs (the layouts of cpu.pin_sets)."""
    for name, pid in part_pids(testbed, {}).items():
        _pin(pins, name, [pid])


def _net_counters(testbed: Testbed) -> dict[str, dict[str, float]]:
    """The endpoints' namespaces' drop counters (experiments/run/limits.py)."""
    return {
        role: limits.read_net_counters(testbed.hosts[name].ns.name)
        for role, name in (("server", "server"), ("client", "dc"))
        if name in testbed.hosts
    }


def _placement(testbed: Testbed, flows: dict) -> dict[str, list[int]]:
    """The CPUs each running part may use, as the run placed them (manifest 'placement')."""
    out = {}
    for name, pid in part_pids(testbed, flows).items():
        try:
            out[name] = sorted(os.sched_getaffinity(pid))
        except OSError:
            pass  # ended meanwhile
    return out


def _start_flows(run: Run, testbed: Testbed, files: _RunFiles, rec: _RunRecord) -> None:
    """Every flow built with its payload, its server started and ready to serve."""
    t0 = time.monotonic()
    for n, (fid, spec, idx) in enumerate(_expand_flows(run)):
        nbytes = payload_bytes(spec)
        payload = make_payload(files.payload_dir / f"payload-{nbytes}.bin", nbytes, run.seed)
        # a multipath kind's `dc` is the multipath device; its single-path flows (mpquic
        # paths 1) on an SC client run on that client
        host = testbed.host(spec["client"], idx, spec["kind"])
        ctx = FlowContext(
            fid,
            testbed.hosts["server"].ns,
            host.ns,
            SERVER_ADDR,
            FLOW_PORT_BASE + n,
            files.logs / fid,
            payload,
            files.cert,
            files.key,
            t0,
        )
        rec.flows[fid] = make_flow(spec, ctx)
    for flow in rec.flows.values():
        flow.start_server()
        _pin(rec.pins, "flow_server", [flow.server.pid] if flow.server else [])
    for flow in rec.flows.values():
        flow.wait_server_ready()


def _sample(run: Run, opts: RunOptions, testbed: Testbed, rec: _RunRecord, on_tick) -> None:
    """From time zero: clients started at their times, events applied, everything sampled,
    until every flow ends, a part dies, an event fails or the run times out."""
    flows = rec.flows
    t0, rec.t0_wall = time.monotonic(), time.time()
    for flow in flows.values():
        flow.ctx.t0 = t0
    rec.sampler = Sampler(
        t0, flows, testbed.switch_stats, processes=lambda: part_pids(testbed, flows)
    )
    rec.sampler.start()
    pending = sorted(flows.values(), key=lambda f: f.spec["start_s"])
    events = list(run.config.get("events") or [])
    deadline = t0 + (opts.timeout_s or _flow_timeout(run))
    expected = max(f.spec["start_s"] + (f.spec["duration_s"] or 0) for f in pending)
    while True:
        now = time.monotonic() - t0
        while pending and pending[0].spec["start_s"] <= now:
            flow = pending.pop(0)
            flow.start_client()
            _pin(rec.pins, "flow_client", [flow.client.pid])
            if not pending:
                rec.placement = _placement(testbed, flows)
        try:
            while events and events[0]["at_s"] <= now:
                rec.applied.append(apply_event(testbed, events.pop(0), now))
                rec.rows.append((now, "event", str(len(rec.applied) - 1), "applied", 1.0))
        except TestbedError as exc:  # this run is void; the study goes on
            rec.errors.append(str(exc))
            break
        running = [f for f in flows.values() if f.running()]
        if not pending and not running:
            break
        dead = testbed.alive()
        if dead:  # the run fails; the study goes on (a resume retries it)
            rec.errors.append(f"{', '.join(dead)} died during the run; see logs/{dead[0]}.log")
            break
        if time.monotonic() > deadline:
            rec.errors.append(
                f"timeout after {deadline - t0:.0f} s; flows still running: "
                + ", ".join(f.ctx.flow_id for f in running)
            )
            break
        if on_tick:
            on_tick(now, expected, flows)
        time.sleep(0.05)
    time.sleep(TAIL_S)
    rec.sampler.stop()
    for flow in flows.values():
        flow.stop()


def _stop(testbed: Testbed, rec: _RunRecord) -> None:
    """Sampler and flows stopped (also after a failure), their rows and errors kept, with
    the testbed's teardown errors."""
    if rec.sampler is not None:
        rec.sampler.stop()
        rec.rows.extend(rec.sampler.rows)
        rec.errors.extend(rec.sampler.errors)
    for fid, flow in rec.flows.items():
        try:  # every flow is stopped, and what stopped the run is not masked by a cleanup error
            flow.stop()
        except Exception as exc:  # noqa: BLE001 - kept in the run's errors
            rec.errors.append(f"stopping flow {fid}: {exc}")
    rec.errors.extend(getattr(testbed, "teardown_errors", []))


def _collect(testbed: Testbed, files: _RunFiles, rec: _RunRecord) -> None:
    """Per-flow results and samples, the legs', agent's, loop's and switch's rows."""
    logs, rows, flows = files.logs, rec.rows, rec.flows
    t0 = flows[next(iter(flows))].ctx.t0
    for fid, flow in flows.items():
        flow_samples = _read_flow(rec, fid, "samples", flow.samples, [])
        samples = _thin((t, "flow", fid, metric, value) for t, metric, value in flow_samples)
        rows.extend(samples)
        rtts = [row[4] for row in samples if row[3] == "rtt_ms"]
        rec.results[fid] = {
            "rtt_ms_mean": sum(rtts) / len(rtts) if rtts else None,
            "kind": flow.spec["kind"],
            "cc": flow.spec["cc"],
            "client": flow.spec["client"],
            "start_s": flow.spec["start_s"],
            "size_mb": flow.spec["size_mb"],
            "duration_s": flow.spec["duration_s"],
            **_read_flow(rec, fid, "result", flow.result, {}),
        }
        flow.cleanup()
    rows.extend(stats_rows(logs / "link_a.jsonl", "link", "a", t0))
    rows.extend(stats_rows(logs / "link_b.jsonl", "link", "b", t0))
    rows.extend(stats_rows(logs / "agent.jsonl", "agent", "dc", t0))
    rows.extend(_control_rows(logs / "control.jsonl", rec.t0_wall))
    final_switch = getattr(testbed, "final_switch_stats", None)
    if final_switch:
        (logs / "switch_stats.json").write_text(json.dumps(final_switch, indent=1, default=str))
        rows.extend(
            (time.monotonic() - t0, "switch", k, m, v)
            for k, m, v in flatten_switch_stats(final_switch)
        )
    shutil.rmtree(files.payload_dir, ignore_errors=True)


def _read_flow(rec: _RunRecord, fid: str, what: str, read, default):
    """A flow's samples or result. Output the harness cannot read (a stack's log in a form
    not foreseen) fails this run, with the reason in its errors, instead of stopping the
    study: the run is saved as failed and a resume retries it."""
    try:
        return read()
    except Exception as exc:  # noqa: BLE001 - kept in the run's errors
        rec.errors.append(f"flow {fid}: its {what} could not be read: {type(exc).__name__}: {exc}")
        return default


def _save(run: Run, run_dir: Path, files: _RunFiles, manifest: dict, rec: _RunRecord) -> dict:
    """Goodputs and verdict into the manifest, samples and flows written, the temporary
    directory renamed to the run's: a run directory appears only complete."""
    for fid, res in rec.results.items():
        res["goodput_mbit"] = _goodput_mbit(res)
        if rec.flows[fid].spec["size_mb"] and not res.get("complete"):
            rec.errors.append(f"flow {fid} did not complete ({res.get('bytes', 0)} bytes)")
    last_write = {
        f"{fid}/server": res["sender_last_write_s"]
        for fid, res in rec.results.items()
        if res.get("sender_last_write_s") is not None
    }
    sat = saturation(rec.rows, last_write)
    manifest.update(sat)
    delta = limits.counters_delta(
        rec.net_counters.get("before", {}), rec.net_counters.get("after", {})
    )
    manifest.update(limits.assess(run.config, rec.results, sat, rec.rows, delta, files.logs))
    manifest.update(
        flows=rec.results,
        errors=rec.errors,
        placement=rec.placement,
        net_counters_delta=delta,
        events_applied=rec.applied,
        status="ok" if not rec.errors else "failed",
        finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        loadavg_end=os.getloadavg(),
    )
    _write_rows(files.tmp / "samples.csv", rec.rows)
    _write_flows(files.tmp / "flows.csv", run, rec.results)
    (files.tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    shutil.rmtree(run_dir, ignore_errors=True)
    files.tmp.rename(run_dir)
    return manifest


def apply_event(testbed: Testbed, event: dict, now: float) -> dict:
    """A live change: the legs through linkem's control socket, the DC user through the
    controller (one MODIFY; the SN continues)."""
    try:
        if "feedback" in event:  # a leg's reports fall silent or resume (linkem's command)
            for leg in ("a", "b") if event["link"] == "both" else (event["link"],):
                testbed.links[leg].command(f"feedback {event['feedback']}")
        elif "link" in event:
            direction = EVENT_DIRECTIONS[event["direction"]]
            for leg in ("a", "b") if event["link"] == "both" else (event["link"],):
                testbed.links[leg].set(direction, **event["set"])
        else:
            changes = dict(event["dc"])
            if "ratio" in changes:
                changes["ratio"] = tuple(changes["ratio"])
            testbed.splitter.set_user(DC_ADDR, **changes)
    except (LinkError, LinkSpecError, SplitterError, P4RuntimeError, OSError) as exc:
        raise TestbedError(f"event at {event['at_s']} s ({event}) failed: {exc}") from None
    return {**event, "applied_at_s": round(now, 3)}


def _control_rows(path: Path, t0_wall: float) -> list[tuple]:
    """The controller loop's decisions (leg A's share, duplication) and the legs' reported
    drain rates, on the run's clock (the daemon logs wall-clock time)."""
    decisions, reports = [], []
    for rec in read_json_lines(path):
        t = rec.get("t", t0_wall) - t0_wall
        if rec.get("event") == "decision":  # every one: reaction times need their exact time
            decisions.append((t, "control", "decision", "share_a", rec["share_a"]))
            decisions.append((t, "control", "decision", "dup", float(rec["dup"])))
        elif rec.get("event") == "report":
            leg = f"report_{rec['leg_name']}"
            reports.append((t, "control", leg, "drain_mbit", rec["drain_rate"] * 8e-6))
    return decisions + _thin(reports)


def _goodput_mbit(res: dict) -> float | None:
    if res.get("bytes") is None:  # a probe (ping) carries no payload
        return None
    if res.get("completion_s"):
        return res["bytes"] * 8 / res["completion_s"] / 1e6
    if res.get("duration_s"):
        return res["bytes"] * 8 / res["duration_s"] / 1e6
    return None


def _thin(rows, bin_s: float = 0.1) -> list[tuple]:
    """Keep the last sample per metric per 100 ms bin (ngtcp2's qlog logs every ACK)."""
    last = {}
    for row in rows:
        t, _src, fid, metric, _v = row
        last[(fid, metric, int(t / bin_s))] = row
    return sorted(last.values())


def stats_rows(path: Path, source: str, ident: str, t0: float) -> list[tuple]:
    """JSON-lines stats (ts_ms = CLOCK_MONOTONIC ms) -> tidy rows of every numeric field."""
    out = []
    for rec in read_json_lines(path):
        if "ts_ms" not in rec:
            continue
        t = rec["ts_ms"] / 1000 - t0
        sub = f"{ident}/{rec['dir']}" if "dir" in rec else ident
        _flatten(rec, [], lambda key, v, t=t, sub=sub: out.append((t, source, sub, key, v)))
    return out


def _flatten(node, path, emit) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k not in ("ts_ms",):
                _flatten(v, path + [str(k)], emit)
    elif isinstance(node, list):
        pass  # histograms stay in the raw JSON-lines logs; the tidy table holds scalars
    elif (
        isinstance(node, (int, float))
        and not isinstance(node, bool)
        and path
        or isinstance(node, bool)
        and path
    ):
        emit(".".join(path), float(node))


def _write_rows(path: Path, rows) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SAMPLE_COLUMNS)
        for t, source, ident, metric, value in sorted(rows, key=lambda r: r[0]):
            w.writerow((f"{t:.4f}", source, ident, metric, repr(float(value))))


def _write_flows(path: Path, run: Run, results: dict) -> None:
    cols = [
        "flow",
        "kind",
        "cc",
        "client",
        "start_s",
        "size_mb",
        "duration_s",
        "bytes",
        "completion_s",
        "goodput_mbit",
        "rtt_ms_mean",
        "complete",
        "intact",
    ]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for fid, res in results.items():
            w.writerow([fid] + [res.get(c, "") if res.get(c) is not None else "" for c in cols[1:]])


# ---------------------------------------------------------------- a whole scenario
def _saved_ok(run_dir: Path) -> bool:
    """A run is done when its manifest says ok; failed runs are retried on resume."""
    try:
        return json.loads((run_dir / "manifest.json").read_text())["status"] == "ok"
    except (OSError, ValueError, KeyError):
        return False


def _same_config(run_dir: Path, run: Run) -> bool:
    """A saved run counts only for the configuration it was made with (a --quick run does
    not stand in for a full one of the same id)."""
    try:
        saved = json.loads((run_dir / "manifest.json").read_text())["config"]
    except (OSError, ValueError, KeyError):
        return False
    config = json.loads(json.dumps(run.config, default=str))
    if isinstance(saved.get("flows"), list) and len(saved["flows"]) == len(config["flows"]):
        config["flows"] = [
            _as_saved_before_new_keys(new, old) for new, old in zip(config["flows"], saved["flows"])
        ]
    return _by_trace_content(saved) == _by_trace_content(config)


def _by_trace_content(value):
    """A configuration with each trace file (a resolved, absolute path) named by its content:
    the same study resumed from another checkout, or after moving one, replays the same
    trace under another path. A trace file that is gone keeps its path."""
    if isinstance(value, dict):
        return {
            k: _trace_digest(v) if k == "trace" and isinstance(v, str) else _by_trace_content(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_by_trace_content(v) for v in value]
    return value


def _trace_digest(path: str) -> str:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # gone, or a NUL in the name
        return path
    return _file_digest(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)  # a study asks once per saved run; size and mtime key it
def _file_digest(path: str, _size: int, _mtime_ns: int) -> str:
    try:
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return path


def _as_saved_before_new_keys(flow: dict, saved: dict) -> dict:
    """A flow without the keys a saved run predates (e.g. loop) when they hold their default
    value: a run made before a flow key existed did what its default does."""
    return {
        k: v
        for k, v in flow.items()
        if k in saved or k not in FLOW_DEFAULTS or v != FLOW_DEFAULTS[k]
    }


def pending_runs(scenario: Scenario, out: Path) -> list[Run]:
    """The runs of a scenario not yet saved as ok, with this configuration, in `out`."""
    runs_dir = Path(out) / "runs"
    return [
        r
        for r in scenario.runs
        if not (_saved_ok(runs_dir / r.run_id) and _same_config(runs_dir / r.run_id, r))
    ]


def expected_s(run: Run) -> float:
    """A rough duration of one run for ETAs: testbed setup plus the flows at 80% of the legs'
    capacity (the DC client gets both legs unless it runs as SC)."""
    capacity = limits.capacity_mbit(run.config, unlimited_mbit=20.0)
    end = 0.0
    for f in run.config["flows"]:
        span = f["duration_s"] or f["size_mb"] * 8 / (0.8 * capacity)
        end = max(end, f["start_s"] + span)
    return RUN_SETUP_S + end


RUN_SETUP_S = 8.0  # build and tear down one testbed on 2 busy cores


class LocalExecutor:
    """Runs one after another on this host (`--executor local`, the default)."""

    def check(self, scenario: Scenario, out: Path, opts: RunOptions) -> None:
        """Preflight before any run: this host must be able to run the study."""
        preflight(scenario, opts.target, opts.switch)
        check_disk_space(scenario, out)

    def close(self) -> None:
        pass

    def runs(self, todo: list[Run], runs_dir: Path, opts: RunOptions, bar):
        """Run each and yield (run, manifest) once it is saved in runs_dir/<run_id>/."""
        for run in todo:
            bar.start_run(run.run_id, expected_s(run))
            try:
                m = execute_run(
                    run,
                    runs_dir / run.run_id,
                    opts,
                    on_tick=lambda now, exp, flows: bar.tick(now, exp, flows),
                )
            except TestbedError:
                bar.finish_run("FAILED (the testbed could not be built, see below)")
                raise
            yield run, m


def describe_result(m: dict) -> str:
    """One line for the progress output: status, goodputs, the CPU flag (limits.cpu_affected:
    the sampler's saturated processes or the verdict's reasons), the legs linkem released
    late beyond their tolerance, with the share of frames (limits.link_verdict; runs saved
    before the share existed show none)."""
    goodputs = [
        f"{r['goodput_mbit']:.1f}" for r in m["flows"].values() if r.get("goodput_mbit") is not None
    ]
    why = m.get("saturated_processes") or m.get("cpu_reasons") or ["a core"]
    flag = f" [CPU short: {', '.join(why)}]" if limits.cpu_affected(m) else ""
    late = [
        f"{leg.upper()} {share:.1%} of frames > "
        f"{limits.ms_text(m['link_late_tolerance_ms'][leg])} ms late"
        for leg, share in (m.get("link_late_share") or {}).items()
        if share is not None and share > limits.LINK_LATE_SHARE
    ]
    if late:
        flag += f" [link late: {', '.join(late)}]"
    for name, spin in (m.get("cpu_after_last_write") or {}).items():
        if spin["samples"]:
            flag += (
                f" [{name} after its last write: {spin['samples'] * SAMPLE_INTERVAL_S:.1f} s at "
                f"{spin['mean_busy']:.0%} of a core, not judged]"
            )
    if m.get("limit") and m["limit"] != "at capacity" and m.get("goodput_share") is not None:
        flag += f" [{m['goodput_share']:.0%} of capacity; {m['limit']}]"
    status = "ok" if m["status"] == "ok" else "FAILED: " + "; ".join(m["errors"])
    where = f" on {m['worker']['where']}" if m.get("worker") else ""  # a Ray worker's run
    return f"{status}{where}; goodput Mbit/s {', '.join(goodputs) or '-'}{flag}"


def run_scenario(
    scenario: Scenario, out: Path, opts: RunOptions, stream=sys.stderr, bar=None, executor=None
) -> dict:
    """Every pending run of a scenario; `bar` (a campaign's) replaces the study's own;
    `executor` runs them (LocalExecutor, or experiments.run.rayexec.RayExecutor over hosts)."""
    executor = executor or LocalExecutor()
    out = Path(out).resolve()  # the parts run in their own working directories
    out.mkdir(parents=True, exist_ok=True)
    if opts.timeout_s is None and scenario.doc.get("timeout_s"):  # the file's own limit
        opts = dataclasses.replace(opts, timeout_s=scenario.doc["timeout_s"])
    executor.check(scenario, out, opts)
    (out / "scenario.yaml").write_text(yaml.safe_dump(scenario.doc, sort_keys=False))
    runs_dir = out / "runs"
    runs_dir.mkdir(exist_ok=True)
    todo = pending_runs(scenario, out)
    done = len(scenario.runs) - len(todo)
    if bar is None:
        bar = progress.Progress(
            total=len(scenario.runs),
            done=done,
            stream=stream,
            cost_left=sum(expected_s(r) for r in todo),
        )
        if done:
            bar.note(f"resuming: {done} of {len(scenario.runs)} runs already saved in {runs_dir}")
    old = {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    summary = {"ok": 0, "failed": 0, "skipped": done}
    try:
        for _run, m in executor.runs(todo, runs_dir, opts, bar):
            if isinstance(m, str):  # lost with its host, nothing saved: a resume retries it
                summary["failed"] += 1
                bar.finish_run(f"FAILED: {m}")
                continue
            summary[m["status"]] += 1
            bar.finish_run(describe_result(m))
    except Interrupted as exc:
        bar.note(f"interrupted by {exc}; saved runs are kept, rerun the same command to resume")
        raise
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return summary

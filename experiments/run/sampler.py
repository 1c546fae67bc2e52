"""Samples every 100 ms what the parts do not log themselves: per-core CPU, each process's CPU
use and wait (the saturation guard, experiments/run/cpu.py), live goodput of flows that expose
it, and the switch's counters (less often: each read is a P4Runtime round trip through a
software switch).

Linkem and the agent write their own JSON-lines stats at 100 ms; flows log RTT and cwnd; the
runner merges all of it into one tidy table after the run.
"""

from __future__ import annotations

import os
import threading
import time
from statistics import mean

from experiments.run.cpu import process_usage, saturated_processes, thread_times

SAMPLE_INTERVAL_S = 0.1
SWITCH_EVERY = 10  # switch counters every 10th sample (1 s)
SATURATED_BUSY = 0.95  # a core busier than this over a sample interval is saturated
SATURATED_SHARE = 0.25  # a run is flagged when some core was saturated this often
# A sender's last write is known to within its 0.1 s report interval and the few round trips
# between the client's start (the flow's clock) and the server's (its intervals' clock): its
# samples are left out from this long after it, beyond both.
LAST_WRITE_MARGIN_S = 0.5


def read_cpu_times(count_niced: bool | None = None) -> dict[str, tuple[int, int]]:
    """/proc/stat per core -> (busy, total) jiffies (cpu_times)."""
    if count_niced is None:
        count_niced = os.getpriority(os.PRIO_PROCESS, 0) > 0
    with open("/proc/stat") as f:
        return cpu_times(f.read(), count_niced)


def cpu_times(proc_stat: str, count_niced: bool) -> dict[str, tuple[int, int]]:
    """/proc/stat's text -> (busy, total) jiffies per core. Time of niced processes (the
    `nice` column) is busy only when the run itself is niced: a run at the ordinary priority
    takes its core from work at nice 19 or SCHED_IDLE at once, so a background build beside a
    campaign does not make "every core busy"; any delay it still causes shows in the
    processes' own run-queue waits (experiments/run/cpu.py)."""
    out = {}
    for line in proc_stat.splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            name, *vals = line.split()
            vals = [int(v) for v in vals]
            idle = vals[3] + vals[4]  # idle + iowait
            if not count_niced:
                idle += vals[1]
            total = sum(vals[:8])  # guest time is already counted in user
            out[name] = (total - idle, total)
    return out


def cpu_busy(prev: dict, cur: dict) -> dict[str, float]:
    busy = {}
    for core, (b1, t1) in cur.items():
        b0, t0 = prev.get(core, (b1, t1))
        busy[core] = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
    return busy


class Sampler(threading.Thread):
    """Background sampling into `rows` (t_s, source, id, metric, value)."""

    def __init__(self, t0: float, flows: dict, switch_stats=None, processes=None) -> None:
        super().__init__(daemon=True, name="sampler")
        self.t0 = t0
        self.flows = flows  # flow id -> Flow
        self.switch_stats = switch_stats  # callable or None
        self.processes = processes  # callable -> {name: pid} of the parts to account, or None
        self.rows: list[tuple] = []
        self.errors: list[str] = []
        self._halt = threading.Event()

    def run(self) -> None:
        prev = read_cpu_times()
        prev_procs, prev_ns = {}, time.monotonic_ns()
        n = 0
        next_t = time.monotonic() + SAMPLE_INTERVAL_S
        while not self._halt.wait(max(0.0, next_t - time.monotonic())):
            next_t += SAMPLE_INTERVAL_S
            t = time.monotonic() - self.t0
            cur = read_cpu_times()
            for core, busy in cpu_busy(prev, cur).items():
                self.rows.append((t, "cpu", core, "busy", busy))
            prev = cur
            prev_procs, prev_ns = self.sample_processes(t, prev_procs, prev_ns)
            for fid, flow in self.flows.items():
                got = flow.bytes_received()
                if got is not None and flow.t_client_start is not None:
                    self.rows.append((t, "flow", fid, "bytes", float(got)))
            if self.switch_stats is not None and n % SWITCH_EVERY == 0:
                self.sample_switch(t)
            n += 1

    def sample_processes(self, t: float, prev: dict, prev_ns: int) -> tuple[dict, int]:
        """CPU used and waited for by each part since the last sample (source 'proc')."""
        now_ns = time.monotonic_ns()
        cur = {}
        for name, pid in (self.processes() if self.processes else {}).items():
            times = thread_times(pid)
            if times is None:
                continue
            cur[name] = (pid, times)
            if name in prev and prev[name][0] == pid:
                for metric, value in process_usage(prev[name][1], times, now_ns - prev_ns).items():
                    self.rows.append((t, "proc", name, metric, value))
        return cur, now_ns

    def sample_switch(self, t: float) -> None:
        try:
            stats = self.switch_stats()
        except Exception as exc:  # noqa: BLE001 - keep sampling the rest; the run reports it
            self.errors.append(f"switch stats at t={t:.1f}s: {exc}")
            return
        self.rows.extend(
            (t, "switch", key, metric, float(value))
            for key, metric, value in flatten_switch_stats(stats)
        )

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def flatten_switch_stats(stats: dict) -> list[tuple[str, str, float]]:
    """Splitter.stats() nested dict -> (id, metric, value), e.g. ('leg_a', 'packets', 12)."""
    out = []

    def walk(path: list[str], node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(path + [str(k)], v)
        elif isinstance(node, (int, float)) and not isinstance(node, bool) and path:
            out.append(("/".join(path[:-1]) or "switch", path[-1], float(node)))

    walk([], stats)
    return out


def after_last_write(rows: list[tuple], last_write_s: dict[str, float]) -> tuple[list, dict]:
    """Split off the samples of a flow's sender taken after its last write (`last_write_s`:
    process name -> run time of its last write). From then on it has nothing left to send,
    so its own CPU cannot hold the transfer back, yet iperf3 3.12 spins at a full core until
    the receiver has everything (its socket stays in select()'s write set once its byte count
    is reached); what the spin takes from other processes shows in their waits, still judged,
    and in the cores' busy time. -> (the rows the verdict judges, per such process the
    samples left out: from when, how many, their mean CPU)."""
    kept, left_out = [], {}
    for row in rows:
        t, source, name, metric, value = row
        done = last_write_s.get(name) if source == "proc" else None
        if done is None or t <= done + LAST_WRITE_MARGIN_S:
            kept.append(row)
        elif metric == "busy":
            left_out.setdefault(name, {"from_s": round(done, 3), "busy": []})["busy"].append(value)
    summary = {
        name: {"from_s": v["from_s"], "samples": len(v["busy"]), "mean_busy": mean(v["busy"])}
        for name, v in left_out.items()
    }
    return kept, summary


def saturation(rows: list[tuple], last_write_s: dict[str, float] | None = None) -> dict:
    """The run's CPU verdict. Per process (experiments/run/cpu.py): CPU used, waited for, and the
    names of the saturated ones; `cpu_saturated` is true when any of our processes was short
    of CPU. Per core (kept for context): the share of samples in which each core was busier
    than SATURATED_BUSY; `core_saturated` is the old core-level flag, which also fires when
    other people's work fills a core. Without process samples the core flag decides. A flow
    sender's samples after its last write (`last_write_s`) are not judged: they are listed in
    `cpu_after_last_write` instead."""
    rows, left_out = after_last_write(rows, last_write_s or {})
    per_core: dict[str, list[float]] = {}
    for _t, source, core, _metric, value in rows:
        if source == "cpu":
            per_core.setdefault(core, []).append(value)
    shares = {
        core: sum(v >= SATURATED_BUSY for v in vals) / len(vals)
        for core, vals in per_core.items()
        if vals
    }
    mean = {core: sum(vals) / len(vals) for core, vals in per_core.items() if vals}
    core_flag = any(s >= SATURATED_SHARE for s in shares.values())
    procs = saturated_processes(rows)
    return {
        "saturated_share": shares,
        "mean_busy": mean,
        "core_saturated": core_flag,
        **procs,
        "cpu_saturated": bool(procs["saturated_processes"]) if procs["process_cpu"] else core_flag,
        "cpu_after_last_write": left_out,
    }

"""Per-process CPU accounting and CPU pinning for the testbed's processes.

A run measures the protocol only if none of its processes was short of CPU. Core busy time
alone cannot tell: on a shared machine a core may be busy with someone else's work while our
processes wait. The scheduler's own accounting can: /proc/<pid>/task/<tid>/schedstat holds,
per thread, the time spent running and the time spent runnable but waiting for a CPU. A
thread's *demand* over an interval is (run + wait) / interval: 1.0 means it wanted a CPU for
the whole interval, whether it got one or not. A process is saturated in a sample when its
busiest thread's demand reaches SATURATED_DEMAND, and a run names every process saturated in
at least SATURATED_SHARE of its samples.

Pinning keeps the flows' endpoints off the CPU of the emulated network, so a CPU-hungry
endpoint does not slow the network it is measured on (layouts in pin_sets). The agent gets
its CPU through DPDK's EAL (`-l N`), the other processes through sched_setaffinity.
"""

from __future__ import annotations

import os
from pathlib import Path

SATURATED_DEMAND = 0.95  # run + wait of the busiest thread, share of the interval
SATURATED_SHARE = 0.25  # of the samples, for the run to name the process saturated
PIN_LAYOUTS = ("split", "switch", "chain", "none")


def thread_times(pid: int) -> dict[int, tuple[int, int]] | None:
    """Per thread of `pid`: (run_ns, wait_ns) from schedstat; None when the process is gone."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            run, wait, _slices = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        except (OSError, ValueError):
            continue  # the thread ended between listdir and read
        out[int(tid)] = (int(run), int(wait))
    return out


def voluntary_switches(pid: int) -> int:
    """Voluntary context switches of every thread of `pid` so far (its wakeups from blocking
    waits and sleeps); 0 when the process is gone."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:
            continue  # the thread ended between listdir and read
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def process_usage(prev: dict, cur: dict, interval_ns: float) -> dict[str, float]:
    """Two thread_times() readings -> busy (CPUs used), wait (CPUs waited for, summed over
    threads), the busiest thread's demand, its run time alone (run_max: a thread at 1.0
    fills a core) and the most delayed thread's wait (wait_max), each as a share of the
    interval. A process of ten threads each waiting 3 % waits 30 % in sum, while none of
    them was held up: the verdict reads wait_max. The kernel adds a wait to schedstat when
    the thread next gets a core (or leaves the run queue), so one interval can report a wait
    longer than itself: a thread's wait counts at most the whole interval (a DPDK agent's
    thread reported 42.9 s in 0.1 s as it exited; the verdict then took it for 109 % of the
    run)."""
    busy = wait = demand = run_max = wait_max = 0.0
    for tid, (run1, wait1) in cur.items():
        run0, wait0 = prev.get(tid, (run1, wait1))
        r, w = (run1 - run0) / interval_ns, min(1.0, (wait1 - wait0) / interval_ns)
        busy, wait, demand = busy + r, wait + w, max(demand, r + w)
        run_max, wait_max = max(run_max, r), max(wait_max, w)
    return {"busy": busy, "wait": wait, "demand": demand, "run_max": run_max, "wait_max": wait_max}


def run_seconds(before: dict | None, after: dict | None) -> float:
    """CPU seconds a process ran between two thread_times() readings (0 if either is None)."""
    if not before or not after:
        return 0.0
    return sum(run - before.get(tid, (0, 0))[0] for tid, (run, _wait) in after.items()) / 1e9


def saturated_processes(rows: list[tuple]) -> dict:
    """From the sampler's ('proc', name, metric, value) rows: per process the mean CPU used,
    the mean wait, the share of samples in which it was saturated; and the names saturated."""
    per: dict[str, dict[str, list[float]]] = {}
    for _t, source, name, metric, value in rows:
        if source == "proc":
            per.setdefault(name, {}).setdefault(metric, []).append(value)
    stats = {}
    for name, metrics in per.items():
        demand = metrics.get("demand", [])
        if not demand:
            continue
        run_max = metrics.get("run_max") or [0.0]  # absent in runs saved before it existed
        wait_max = metrics.get("wait_max") or metrics["wait"]  # likewise: the sum, an upper bound
        stats[name] = {
            "mean_busy": sum(metrics["busy"]) / len(metrics["busy"]),
            "mean_wait": sum(metrics["wait"]) / len(metrics["wait"]),
            "mean_wait_max": sum(wait_max) / len(wait_max),
            "mean_run_max": sum(run_max) / len(run_max),
            "saturated_share": sum(d >= SATURATED_DEMAND for d in demand) / len(demand),
        }
    names = sorted(n for n, s in stats.items() if s["saturated_share"] >= SATURATED_SHARE)
    return {"process_cpu": stats, "saturated_processes": names}


def pin_sets(layout: str, ncpu: int | None = None) -> dict[str, set[int]] | None:
    """CPU sets of the process groups ('switch', 'network': legs and agent, 'flows') for a
    layout, with per-part overrides ('link_a', 'link_b', 'agent', 'flow_server',
    'flow_client'; cpus_for() resolves them); None = no pinning (layout 'none', or one CPU,
    where nothing can be separated).

    split:  switch, legs and agent on CPU 0; flow endpoints on the others
    switch: the switch alone on CPU 0; legs, agent and flow endpoints on the others
    chain:  the chain cut in two halves of about equal work per packet: the sending half
            (flow servers, switch, leg A's linkem) on CPU 0, the receiving half (leg B's
            linkem, agent, flow clients) on the others. Each half's kernel work (a veth
            hands a frame to its peer's ring in the sender's context) lands on its CPU.
    """
    ncpu = ncpu or os.cpu_count() or 1
    if layout not in PIN_LAYOUTS:
        raise ValueError(f"pin layout {layout!r} is not one of {', '.join(PIN_LAYOUTS)}")
    if layout == "none" or ncpu < 2:
        return None
    rest = set(range(1, ncpu))
    if layout == "switch":
        return {"switch": {0}, "network": rest, "flows": rest}
    if layout == "chain":
        first = {0}
        return {
            "switch": first,
            "network": rest,
            "flows": rest,
            "link_a": first,
            "flow_server": first,
        }
    return {"switch": {0}, "network": {0}, "flows": rest}


PART_GROUPS = {
    "switch": "switch",
    "link_a": "network",
    "link_b": "network",
    "agent": "network",
    "flow_server": "flows",
    "flow_client": "flows",
}


def cpus_for(pins: dict[str, set[int]], part: str) -> set[int]:
    """The CPUs of a part ('switch', 'link_a', 'agent', 'flow_client', ...) in a layout."""
    return pins.get(part) or pins[PART_GROUPS.get(part, "network")]


def pin(pid: int, cpus: set[int]) -> None:
    """Pin every thread of a running process (threads made later inherit their creator's)."""
    for tid in thread_times(pid) or {}:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            pass  # the thread ended meanwhile

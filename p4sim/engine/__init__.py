"""p4sim's execution engine: the typed IR compiled into Python closures, once per device.

Modules, one per P4 concept: `values` (headers, structs, stacks), `expressions`, `control`
(statements, actions, calls), `tables` (match kinds and lookup), `parser` (states, select,
packet_in), `deparser` (packet_out), `externs` (register, counter, meter, hashes),
`runtime` (the state of one program instance).
"""

from __future__ import annotations

import time


def bench_inprocess(compiled, frames: list[tuple[int, bytes]], setup=None, repeat: int = 1) -> dict:
    """Push frames through a fresh device in process; return packets/s and latency figures.

    `setup(device)` may install table entries, multicast groups, ... before timing starts.
    Returns packets, outputs, seconds, pps (wall clock), cpu_pps (per second of this
    thread's CPU time), p50_us and p99_us (per-packet latency of `process`).
    """
    dev = compiled.new_device()
    if setup is not None:
        setup(dev)
    lat = []
    outputs = 0
    c0 = time.thread_time()
    t0 = time.perf_counter()
    for _ in range(repeat):
        for port, frame in frames:
            s = time.perf_counter()
            outputs += len(dev.process(port, frame))
            lat.append(time.perf_counter() - s)
    elapsed = time.perf_counter() - t0
    cpu = time.thread_time() - c0
    lat.sort()
    n = len(lat)
    return {
        "packets": n,
        "outputs": outputs,
        "seconds": elapsed,
        "pps": n / elapsed if elapsed else float("inf"),
        # packets per second of CPU time: the figure that matters on a loaded machine
        "cpu_pps": n / cpu if cpu else float("inf"),
        "p50_us": lat[n // 2] * 1e6 if n else 0.0,
        "p99_us": lat[min(n - 1, int(n * 0.99))] * 1e6 if n else 0.0,
    }


__all__ = ["bench_inprocess"]

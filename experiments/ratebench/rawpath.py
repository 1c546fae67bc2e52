"""The machine's own limit: TCP through the testbed's number of AF_PACKET hops, each a
forwarder that does nothing (build/ratebench/rawfwd), on plain veths.

    server ns --veth-- hop1 ns [rawfwd] --veth-- hop2 ns [rawfwd] --veth-- hop3 ns [rawfwd] --veth-- client ns

The three hops stand where the testbed has the switch, a leg's link emulator and the agent;
what the chain achieves beyond this is the processing of those parts, not the kernel's veth
and AF_PACKET path. Offloads are off on every veth, as in the testbed.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass

from experiments.run.cpu import run_seconds, thread_times
from experiments.run.netns import Topology, stop_process, veth_pair
from experiments.run.parts import BUILD, TestbedError, wait_for
from experiments.run.testbed import claim_prefix, release_prefix

RAWFWD_BIN = BUILD / "ratebench" / "rawfwd"
HOPS = 3  # switch, linkem, agent
SERVER, CLIENT = "10.9.0.1", "10.9.0.2"
MTU = 1500


@dataclass
class RawLimit:
    goodput_mbit: float
    frames_per_s: float  # through each hop, both directions
    hop_us_per_frame: list[float]  # CPU per frame of each forwarder
    hop_core_share: list[float]  # each forwarder's CPU, share of one core


def measure(duration_s: float, workdir) -> RawLimit:
    """One iperf3 TCP (CUBIC) transfer of `duration_s` through HOPS forwarders."""
    if not RAWFWD_BIN.exists():
        raise TestbedError(f"{RAWFWD_BIN} is missing: run `make build`")
    workdir.mkdir(parents=True, exist_ok=True)
    prefix = claim_prefix("rl")
    try:
        with Topology() as topo:
            return _measure(topo, prefix, duration_s, workdir)
    finally:
        release_prefix(prefix)


def _measure(topo: Topology, p: str, duration_s: float, workdir) -> RawLimit:
    server, client = topo.ns(f"{p}srv"), topo.ns(f"{p}cli")
    hops = [topo.ns(f"{p}h{i}") for i in range(HOPS)]
    chain = [server, *hops, client]
    for i in range(len(chain) - 1):  # link i: <p>l<i>a in chain[i], <p>l<i>b in chain[i+1]
        veth_pair(f"{p}l{i}a", chain[i], f"{p}l{i}b", chain[i + 1], mtu=MTU)
    server.add_addr(f"{p}l0a", f"{SERVER}/24")
    client.add_addr(f"{p}l{HOPS}b", f"{CLIENT}/24")
    fwds = []
    for i, ns in enumerate(hops):
        log = workdir / f"rawfwd{i}.log"
        with open(log, "w") as out:
            proc = ns.popen([str(RAWFWD_BIN), f"{p}l{i}b", f"{p}l{i + 1}a"], stdout=out)
        wait_for(lambda log=log: "forwarding" in log.read_text(), 10, "rawfwd", proc, log)
        fwds.append((proc, log))
    srv = server.popen(["iperf3", "-s", "-1", "-B", SERVER], stdout=subprocess.DEVNULL)
    time.sleep(0.5)  # iperf3 has no readiness line worth parsing; it listens at once
    before = [thread_times(proc.pid) for proc, _ in fwds]
    t0 = time.monotonic()
    cli = client.run(
        ["iperf3", "-c", SERVER, "-t", str(duration_s), "-C", "cubic", "-J"],
        timeout=duration_s + 30,
    )
    elapsed = time.monotonic() - t0
    after = [thread_times(proc.pid) for proc, _ in fwds]
    stop_process(srv)
    report = json.loads(cli.stdout)
    frames = []
    for proc, log in fwds:
        stop_process(proc)
        last = log.read_text().strip().splitlines()[-1]
        frames.append(json.loads(last)["frames"])
    cpu_s = [run_seconds(b, a) for b, a in zip(before, after)]
    return RawLimit(
        goodput_mbit=report["end"]["sum_received"]["bits_per_second"] / 1e6,
        frames_per_s=frames[0] / elapsed,
        hop_us_per_frame=[c * 1e6 / f if f else 0.0 for c, f in zip(cpu_s, frames)],
        hop_core_share=[c / elapsed for c in cpu_s],
    )

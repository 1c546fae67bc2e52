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
from pathlib import Path

from dccommon.processes import stop_process
from experiments.run.cpu import run_seconds, thread_times
from experiments.run.netns import Namespace, Topology, veth_pair, wait_bound
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
    paced_mbit: float | None = None  # iperf3 -b, or None: as fast as TCP goes


def measure(
    duration_s: float,
    workdir,
    binary: Path = RAWFWD_BIN,
    hops: int = HOPS,
    paced_mbit: float | None = None,
) -> RawLimit:
    """One iperf3 TCP (CUBIC) transfer of `duration_s` through `hops` forwarders (`binary`:
    rawfwd, or iopaths' AF_XDP twin xskfwd), as fast as it goes or paced to `paced_mbit`."""
    if not binary.exists():
        raise TestbedError(f"{binary} is missing: run `make build`")
    workdir.mkdir(parents=True, exist_ok=True)
    prefix = claim_prefix("rl")
    try:
        with Topology() as topo:
            return _measure(topo, prefix, duration_s, workdir, binary, hops, paced_mbit)
    finally:
        release_prefix(prefix)


def at_frame_rate(frames_per_s: float, limit: RawLimit, duration_s: float, workdir) -> RawLimit:
    """The same chain with TCP paced so that each hop carries about `frames_per_s` (both
    directions), the rate the unpaced `limit` run's frames per Mbit/s calls for: what a hop
    that does nothing costs per frame at the rate a testbed part saw. A hop costs more per
    frame at a lower rate (fewer frames per wake-up), so the floor must be taken at the same
    rate. Above the limit's rate the limit itself is that floor."""
    if frames_per_s >= limit.frames_per_s:
        return limit
    mbit = frames_per_s * limit.goodput_mbit / limit.frames_per_s
    return measure(duration_s, workdir, paced_mbit=mbit)


def forwarder_chain(
    topo: Topology, p: str, first: Namespace, last: Namespace, binary, workdir, hops: int = HOPS
) -> list[subprocess.Popen]:
    """`hops` namespaces between `first` and `last`, each running `binary IF_IN IF_OUT` (rawfwd,
    xskfwd) between its two veths: link i is <p>l<i>a in chain[i] and <p>l<i>b in chain[i+1],
    so `first` holds <p>l0a and `last` <p>l<hops>b. Returns once every forwarder is ready."""
    chain = [first, *(topo.ns(f"{p}h{i}") for i in range(hops)), last]
    for ns in chain[1:-1]:
        ns.disable_ipv6()
    for i in range(len(chain) - 1):
        veth_pair(f"{p}l{i}a", chain[i], f"{p}l{i}b", chain[i + 1], mtu=MTU)
    fwds = []
    for i, ns in enumerate(chain[1:-1]):
        log = workdir / f"{binary.name}{i}.log"
        with open(log, "w") as out:
            argv = [str(binary), f"{p}l{i}b", f"{p}l{i + 1}a"]
            proc = ns.popen(argv, stdout=out, stderr=subprocess.STDOUT)
        wait_for(lambda log=log: "forwarding" in log.read_text(), 30, binary.name, proc, log)
        fwds.append(proc)
    return fwds


def stop_forwarders(fwds: list[subprocess.Popen], workdir: Path, binary: Path) -> list[int]:
    """Stop the forwarders of forwarder_chain; the frames each forwarded (its last line)."""
    frames = []
    for i, proc in enumerate(fwds):
        stop_process(proc, grace_s=30)  # the count is its last words: no SIGKILL
        last = (workdir / f"{binary.name}{i}.log").read_text().strip().splitlines()[-1]
        frames.append(json.loads(last)["frames"])
    return frames


def _measure(
    topo: Topology,
    p: str,
    duration_s: float,
    workdir,
    binary: Path,
    hops: int,
    paced_mbit: float | None,
) -> RawLimit:
    server, client = topo.ns(f"{p}srv"), topo.ns(f"{p}cli")
    fwds = forwarder_chain(topo, p, server, client, binary, workdir, hops)
    server.add_addr(f"{p}l0a", f"{SERVER}/24")
    client.add_addr(f"{p}l{hops}b", f"{CLIENT}/24")
    srv = server.popen(["iperf3", "-s", "-1", "-B", SERVER], stdout=subprocess.DEVNULL)
    wait_bound(server, 5201, "tcp", srv)  # iperf3's port; a fixed pause a loaded machine outlasts
    before = [thread_times(proc.pid) for proc in fwds]
    t0 = time.monotonic()
    pace = [] if paced_mbit is None else ["-b", f"{paced_mbit:.3f}M"]
    cli = client.run(
        ["iperf3", "-c", SERVER, "-t", str(duration_s), "-C", "cubic", "-J", *pace],
        timeout=duration_s + 30,
    )
    elapsed = time.monotonic() - t0
    after = [thread_times(proc.pid) for proc in fwds]
    stop_process(srv)
    report = json.loads(cli.stdout)
    frames = stop_forwarders(fwds, workdir, binary)
    cpu_s = [run_seconds(b, a) for b, a in zip(before, after)]
    return RawLimit(
        goodput_mbit=report["end"]["sum_received"]["bits_per_second"] / 1e6,
        frames_per_s=frames[0] / elapsed,
        hop_us_per_frame=[c * 1e6 / f if f else 0.0 for c, f in zip(cpu_s, frames)],
        hop_core_share=[c / elapsed for c in cpu_s],
        paced_mbit=paced_mbit,
    )

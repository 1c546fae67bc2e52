"""CPU per frame of the testbed's one-process parts, each alone between veths: the native
switch (p4sim's native engine running the splitter, DC split), a leg's linkem (no rate
limit, no delay: its I/O and bookkeeping) and pdcp-agent (the testbed's command line,
net_tap towards the client). With --baseline, another source tree's parts are measured in
the same run, side by side with this tree's; with --io afpacket,afxdp, each part on both of
the testbed's I/O paths (dcexp run --io: AF_PACKET rings or AF_XDP sockets on its veths).

    python -m experiments.ratebench.components [--baseline DIR] [--rates-kpps 20,80,160]
                                               [--parts switch,link,agent] [--io afpacket]

For each part and tree: its CPU over --idle-s seconds without traffic; the delay of
one frame every millisecond (1,000 packets/s; send to receive, the veth and AF_PACKET path
in and out included, so compare trees, not absolute figures); then, at each rate,
clib/pktgen offers 1,400-byte frames paced for --duration-s seconds and the part's CPU
time over the interval (every thread, from schedstat) divided by the frames that came out
gives the CPU per frame; wakeups are its voluntary context switches per second. The part
runs on CPU 0 and pktgen on CPU 1, as in p4sim's bench. DIR needs `make hostagents-build`
done (its build/hostagents/pdcp-agent); its switch runs with this venv's Python.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dccommon.cliargs import ArgumentParser, float_range, number_list_arg, subset_list
from dccommon.pktgen import PKTGEN
from dccommon.processes import stop_process
from experiments.run.cpu import run_seconds, thread_times, voluntary_switches
from experiments.run.links import LINKEM_BINARY, Linkem
from experiments.run.linkspec import LinkSpec
from experiments.run.netns import Namespace, offloads_off, unique_prefix, veth_pair
from hostagents.agent_cmd import IO_PATHS, agent_argv, leg_vdev, wait_ready
from p4sim import bench as switch_bench

ROOT = Path(__file__).resolve().parents[2]
FRAME_BYTES = 1400
PROBE_PPS, PROBES = 1000, 2000
SETTLE_S = 1.0  # after start-up: the agent's deep idle begins 200 ms after the last frame
PARTS = ("switch", "link", "agent")
# locally administered unicast through linkem (which forwards any frame)
LINK_FRAME_HEX = ("02000000000202000000000188b5").ljust(2 * FRAME_BYTES, "0")
PART_CPU, TRAFFIC_CPU = switch_bench.P4SIM_CPU, switch_bench.TRAFFIC_CPU


@dataclass
class Load:
    """One paced run through a part."""

    offered_pps: float
    sent: int
    received: int
    cpu_us_per_frame: float
    wakeups_per_s: float
    p50_us: float
    p99_us: float


@dataclass
class Part:
    """What the bench needs of a running part: its PID and how pktgen reaches it."""

    pid: int
    ns: Namespace
    pktgen_args: list[str]  # -i IF --rx IF and the frame
    pdcp: bool = False  # PDUs: each run continues the SNs of the one before
    sent: int = 0


def pktgen(ns: Namespace, args: list[str], timeout: float) -> dict:
    """clib/pktgen `args` in `ns`, on the traffic CPU when there are several; its JSON line."""
    argv = ["taskset", "-c", str(TRAFFIC_CPU)] if len(os.sched_getaffinity(0)) > 1 else []
    return json.loads(ns.run([*argv, str(PKTGEN), *args], timeout=timeout).stdout)


def pktgen_latency(part: Part, pps: float, count: int) -> dict:
    args = ["latency", *part.pktgen_args, "--pps", str(pps), "--count", str(count)]
    if part.pdcp:
        args += ["--first", str(part.sent)]
    part.sent += count
    return pktgen(part.ns, args, timeout=count / pps + 60)


def offer(part: Part, pps: float, duration_s: float) -> Load:
    """`pps` frames/s for `duration_s` through the part; its CPU and wakeups meanwhile."""
    count = max(1, int(pps * duration_s))
    cpu0, ctx0, t0 = thread_times(part.pid), voluntary_switches(part.pid), time.monotonic()
    res = pktgen_latency(part, pps, count)
    cpu1, ctx1, t1 = thread_times(part.pid), voluntary_switches(part.pid), time.monotonic()
    cpu_s = run_seconds(cpu0, cpu1)
    out = res["received"]
    return Load(
        offered_pps=pps,
        sent=res["sent"],
        received=out,
        cpu_us_per_frame=cpu_s * 1e6 / out if out else float("nan"),
        wakeups_per_s=(ctx1 - ctx0) / (t1 - t0),
        p50_us=res["p50_us"],
        p99_us=res["p99_us"],
    )


def idle_share(pid: int, seconds: float) -> float:
    """The part's CPU over `seconds` without traffic, share of one core."""
    time.sleep(SETTLE_S)
    before, t0 = thread_times(pid), time.monotonic()
    time.sleep(seconds)
    return run_seconds(before, thread_times(pid)) / (time.monotonic() - t0)


# ---------------------------------------------------------------------------------- parts


def _io_options(io: str) -> list[str]:
    """A part's --io option; none for the default, which a baseline tree from before --io
    runs too."""
    return [] if io == "afpacket" else ["--io", io]


@contextmanager
def switch_part(tree: Path | None, io: str):
    """The splitter on the native engine (DC split: h0 in, legs h1 and h2 out); `tree`:
    another source tree's p4sim (None: this one)."""
    frame = switch_bench._frame(FRAME_BYTES, switch_bench.DSTS["dc-split"]).hex()
    program = (tree or ROOT) / "p4src" / "dc_splitter.p4"
    with (
        tempfile.TemporaryDirectory(prefix="components-switch-") as tmp,
        switch_bench.switch_namespace(unique_prefix("csw")) as ns,
        switch_bench.running_switch(
            ns, "native", program, tmp, pythonpath=tree, options=_io_options(io)
        ) as (proc, _),
    ):
        yield Part(proc.pid, ns, ["-i", "h0", "--rx", "h1,h2", "--frame", frame])


@contextmanager
def link_part(tree: Path | None, io: str):
    """linkem between two veths (frames in on <p>a1, out on <p>b0), no rate limit and no
    delay, pinned to the part's CPU; `tree`: another source tree's build (None: this one)."""
    binary = (tree / "build" / "linkem" / "linkem") if tree else LINKEM_BINARY
    p = unique_prefix("clk")
    with Namespace(p) as ns:
        ns.disable_ipv6()
        veth_pair(f"{p}a0", ns, f"{p}a1", ns)
        veth_pair(f"{p}b0", ns, f"{p}b1", ns)
        link = Linkem(binary).start(f"{p}a1", f"{p}b0", LinkSpec(), LinkSpec(), netns=ns,
                                    cpu=PART_CPU, **({"io": io} if io != "afpacket" else {}))  # fmt: skip
        try:
            yield Part(link.proc.pid, ns, ["-i", f"{p}a0", "--rx", f"{p}b1",
                                           "--frame", LINK_FRAME_HEX])  # fmt: skip
        finally:
            link.stop()


@contextmanager
def agent_part(tree: Path | None, io: str):
    """pdcp-agent with the testbed's options: legs A and B on veths (PDUs enter on leg A),
    the host port a net_tap; `tree`: another source tree's build (None: this one)."""
    binary = (tree or ROOT) / "build" / "hostagents" / "pdcp-agent"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run `make hostagents-build` there")
    p = unique_prefix("cag")
    with tempfile.TemporaryDirectory(prefix="components-agent-") as tmp, Namespace(p) as ns:
        ns.disable_ipv6()
        veth_pair(f"{p}a0", ns, f"{p}a1", ns, mtu=1600)
        veth_pair(f"{p}b0", ns, f"{p}b1", ns, mtu=1600)
        tap = f"{p}t"
        legs = [leg_vdev(io, i, f"{p}{leg}1") for i, leg in enumerate("ab")]
        vdevs = [*legs, f"net_tap0,iface={tap}"]
        stats = Path(tmp) / "agent.jsonl"
        app_args = ["--sn-bits", "18", "--stats", str(stats), "--stats-interval-ms", "100"]
        argv = agent_argv(binary, p, vdevs, app_args, cpu=PART_CPU)
        log = Path(tmp) / "agent.log"
        with open(log, "w") as out:
            proc = ns.popen(argv, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_ready(proc, log)
            offloads_off(tap, netns=ns.name)
            pktgen_args = ["-i", f"{p}a0", "--rx", tap, "--pdcp", "18", "--size", str(FRAME_BYTES)]
            yield Part(proc.pid, ns, pktgen_args, pdcp=True)
        finally:
            stop_process(proc)


PART_STARTERS = {"switch": switch_part, "link": link_part, "agent": agent_part}


def measure(part_name: str, tree: Path | None, io: str, rates_kpps: list[float], args) -> dict:
    with PART_STARTERS[part_name](tree, io) as part:
        idle = idle_share(part.pid, args.idle_s)
        probes = pktgen_latency(part, PROBE_PPS, PROBES)
        loads = [offer(part, kpps * 1000, args.duration_s) for kpps in rates_kpps]
    return {"idle": idle, "probes": probes, "loads": loads}


# ---------------------------------------------------------------------------------- report


def print_table(results: dict[tuple[str, str, str], dict]) -> None:
    print(f"{'part':<7}{'tree':<10}{'io':<10}{'load':<13}{'CPU us/frame':>13}{'wakeups/s':>11}"
          f"{'out/sent':>17}{'p50 us':>9}{'p99 us':>9}")  # fmt: skip
    for (part, tree, io), r in results.items():
        probes = r["probes"]
        print(f"{part:<7}{tree:<10}{io:<10}{'idle':<13}{100 * r['idle']:>11.2f} %")
        print(f"{'':<27}{'1 kpps delay':<13}{'':>13}{'':>11}"
              f"{probes['received']:>8} / {probes['sent']:<6}"
              f"{probes['p50_us']:>9.1f}{probes['p99_us']:>9.1f}")  # fmt: skip
        for load in r["loads"]:
            print(f"{'':<27}{f'{load.offered_pps / 1000:.0f} kpps':<13}"
                  f"{load.cpu_us_per_frame:>13.2f}{load.wakeups_per_s:>11,.0f}"
                  f"{load.received:>8} / {load.sent:<6}"
                  f"{load.p50_us:>9.1f}{load.p99_us:>9.1f}")  # fmt: skip


# comma-separated kpps, each once (a rate given twice would be measured twice)
rate_list = number_list_arg(0, 1000, "rates", low_open=True, example="20,80,160")


part_list, io_list = subset_list(PARTS), subset_list(IO_PATHS)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m experiments.ratebench.components",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--baseline", type=Path, help="another source tree to compare with")
    parser.add_argument("--parts", type=part_list, default=list(PARTS),
                        help="switch,link,agent")  # fmt: skip
    parser.add_argument("--io", type=io_list, default=["afpacket"],
                        help="afpacket,afxdp: each part on both I/O paths (default afpacket)")  # fmt: skip
    parser.add_argument("--rates-kpps", type=rate_list, default=[20.0, 80.0, 160.0])
    parser.add_argument("--duration-s", type=float_range(0, 600, "duration", low_open=True),
                        default=2.0, help="per rate (default 2)")  # fmt: skip
    parser.add_argument("--idle-s", type=float_range(0, 600, "idle time"), default=10.0,
                        help="idle CPU interval")  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if os.geteuid() != 0:
        print("components: error: needs root (namespaces, packet sockets)", file=sys.stderr)
        return 2
    if not PKTGEN.exists():
        print(f"components: error: {PKTGEN} is missing: run `make pktgen-build`", file=sys.stderr)
        return 2
    if args.baseline is not None and not (args.baseline / "p4sim").is_dir():
        print(f"components: error: --baseline {args.baseline}: not a source tree of this "
              "project (no p4sim/ in it)", file=sys.stderr)  # fmt: skip
        return 2
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{FRAME_BYTES}-byte frames; part on CPU {PART_CPU}, pktgen on CPU {TRAFFIC_CPU}; "
          f"load average at start {load}")  # fmt: skip
    trees = [("baseline", args.baseline.resolve())] if args.baseline else []
    trees.append(("this", None))
    results = {}
    for part in args.parts:
        for label, tree in trees:
            for io in args.io:
                results[(part, label, io)] = measure(part, tree, io, args.rates_kpps, args)
    print_table(results)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average at end {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

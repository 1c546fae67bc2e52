"""AF_XDP against AF_PACKET on veth: the CPU a do-nothing forwarder spends per frame on each
of the kernel's two raw I/O paths, through the same hops (issue 25's goal: 2 us per frame).

    python -m experiments.ratebench.iopaths [--rates-kpps 20,80] [--repeat 3] [--hops 3]
                                            [--tcp-s 10] [--json FILE]

Each path is a chain of --hops forwarders (rawpath.forwarder_chain), rawfwd (AF_PACKET:
TPACKET_V2 ring, sendmmsg) or xskfwd (AF_XDP: XDP in veth's driver, libxdp's redirect
program, one UMEM for both sockets), between two veth ends in one namespace. clib/pktgen
there, pinned to CPU 1, offers 1,400-byte frames paced at each rate for --duration-s, then
as fast as it can (the maximum, pktgen's flood mode); every forwarder is pinned to CPU 0.
Then, unless --tcp-s 0, iperf3 TCP crosses each chain (rawpath.measure, the raw limit of
`make bench-testbed`, forwarders not pinned). Both paths run in every repeat, one after the
other, so they share the machine's load; the ratios are taken within each repeat.

CPU per frame per hop = (the forwarders' CPU time + ksoftirqd/0's) / (frames delivered x
hops). A forwarder's CPU time (schedstat) includes the softirq work that runs in its
context: this kernel has no IRQ time accounting, and a veth runs its peer's receive path
(netif_rx's backlog, or the peer's XDP program and the copy into its socket) in the
sender's softirq, so each hop pays the next hop's receive; pktgen pays the first hop's and
the last hop pays pktgen's (AF_PACKET on both paths). Softirq work deferred to the
ksoftirqd thread of CPU 0 is added; `softirq %` is the share of CPU 0's time the kernel
counted as softirq (its ticks, whoever ran them); `core` the forwarders' CPU as a share of
that one core, `wakeups/frame` their blocking waits per frame and hop. Frames lost on the
way (drops) cost CPU but are not counted, so a lossy load costs more per delivered frame.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dccommon.cliargs import (
    ArgumentParser,
    InputFileError,
    check_output_file,
    float_range,
    int_range,
)
from dccommon.pktgen import PKTGEN
from experiments.ratebench import rawpath
from experiments.ratebench.components import PART_CPU, pktgen, rate_list
from experiments.run.cpu import pin, run_seconds, thread_times, voluntary_switches
from experiments.run.netns import Topology
from experiments.run.parts import BUILD, TestbedError
from experiments.run.testbed import claim_prefix, release_prefix

PATHS = {"af_packet": rawpath.RAWFWD_BIN, "af_xdp": BUILD / "ratebench" / "xskfwd"}
FRAME_BYTES = 1400
# locally administered unicast: the generator's namespace drops it at once
FRAME_HEX = ("02000000000202000000000188b5").ljust(2 * FRAME_BYTES, "0")


@dataclass
class Load:
    """One offered load through one path's chain."""

    path: str
    offered_pps: float  # 0: as fast as pktgen goes
    sent: int
    received: int
    seconds: float
    hop_cpu_s: list[float]
    softirqd_s: float  # ksoftirqd of the forwarders' CPU
    softirq_share: float  # of that CPU's time, counted as softirq
    wakeups: int  # the forwarders' voluntary context switches (blocking waits)
    hops: int = field(default=rawpath.HOPS)

    @property
    def achieved_pps(self) -> float:
        return self.received / self.seconds if self.seconds else 0.0

    def us_per_frame_hop(self, with_softirqd: bool = True) -> float:
        cpu = sum(self.hop_cpu_s) + (self.softirqd_s if with_softirqd else 0.0)
        return cpu * 1e6 / (self.received * self.hops) if self.received else float("nan")

    @property
    def core_share(self) -> float:
        """The forwarders' CPU (with ksoftirqd's) as a share of their one core."""
        return (sum(self.hop_cpu_s) + self.softirqd_s) / self.seconds

    @property
    def label(self) -> str:
        return f"{self.offered_pps / 1000:g} kpps" if self.offered_pps else "max"


def ksoftirqd(cpu: int) -> int:
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == f"ksoftirqd/{cpu}":
                return int(entry.name)
        except OSError:
            continue  # the process ended meanwhile
    raise TestbedError(f"no ksoftirqd/{cpu} thread: is CPU {cpu} online?")


def softirq_jiffies(cpu: int) -> tuple[int, int]:
    """(softirq, total) jiffies of `cpu` from /proc/stat."""
    with open("/proc/stat") as f:
        for line in f:
            name, *vals = line.split()
            if name == f"cpu{cpu}":
                vals = [int(v) for v in vals[:8]]
                return vals[6], sum(vals)
    raise TestbedError(f"/proc/stat has no cpu{cpu} line")


def offer(path: str, fwds, gen, ends: list[str], pps: float, args) -> Load:
    """`pps` frames/s (0: flood) for args.duration_s through the chain; its CPU meanwhile."""
    sirq = ksoftirqd(PART_CPU)
    before = [thread_times(proc.pid) for proc in fwds]
    sirq0, stat0 = thread_times(sirq), softirq_jiffies(PART_CPU)
    ctx0 = sum(voluntary_switches(proc.pid) for proc in fwds)
    if pps:
        count = int(pps * args.duration_s)
        res = pktgen(gen, ["latency", *ends, "--pps", str(pps), "--count", str(count)],
                     timeout=args.duration_s + 60)  # fmt: skip
        seconds = count / pps
    else:
        res = pktgen(gen, ["flood", *ends, "--duration-s", str(args.duration_s)],
                     timeout=args.duration_s + 60)  # fmt: skip
        seconds = res["elapsed_s"]
    after = [thread_times(proc.pid) for proc in fwds]
    sirq1, stat1 = thread_times(sirq), softirq_jiffies(PART_CPU)
    ctx1 = sum(voluntary_switches(proc.pid) for proc in fwds)
    ticks = stat1[1] - stat0[1]
    return Load(
        path=path,
        offered_pps=pps,
        sent=res["sent"],
        received=res["received"],
        seconds=seconds,
        hop_cpu_s=[run_seconds(b, a) for b, a in zip(before, after)],
        softirqd_s=run_seconds(sirq0, sirq1),
        softirq_share=(stat1[0] - stat0[0]) / ticks if ticks else 0.0,
        wakeups=ctx1 - ctx0,
        hops=args.hops,
    )


def run_path(path: str, args, workdir: Path) -> list[Load]:
    """Build `path`'s chain, offer each rate and then the maximum, tear it down."""
    binary = PATHS[path]
    if not binary.exists():
        raise TestbedError(f"{binary} is missing: run `make ratebench-build`")
    p = claim_prefix("io")
    try:
        with Topology() as topo:
            gen = topo.ns(f"{p}gen")
            gen.disable_ipv6()
            fwds = rawpath.forwarder_chain(topo, p, gen, gen, binary, workdir, args.hops)
            if len(os.sched_getaffinity(0)) > 1:
                for proc in fwds:
                    pin(proc.pid, {PART_CPU})
            ends = ["-i", f"{p}l0a", "--rx", f"{p}l{args.hops}b", "--frame", FRAME_HEX]
            loads = [offer(path, fwds, gen, ends, kpps * 1000, args) for kpps in args.rates_kpps]
            loads.append(offer(path, fwds, gen, ends, 0, args))
            rawpath.stop_forwarders(fwds, workdir, binary)
            return loads
    finally:
        release_prefix(p)


# ---------------------------------------------------------------------------------- report


def print_runs(runs: list[list[Load]]) -> None:
    print(f"{'run':<5}{'path':<11}{'load':<10}{'achieved kpps':>14}{'out / sent':>19}"
          f"{'hops us/frame':>15}{'+ksoftirqd':>12}{'core':>7}{'wakeups/frame':>15}"
          f"{'CPU0 softirq':>14}")  # fmt: skip
    for i, loads in enumerate(runs, 1):
        for load in loads:
            print(f"{i:<5}{load.path:<11}{load.label:<10}{load.achieved_pps / 1000:>14.1f}"
                  f"{load.received:>9} / {load.sent:<7}"
                  f"{load.us_per_frame_hop(False):>15.2f}{load.us_per_frame_hop():>12.2f}"
                  f"{100 * load.core_share:>6.0f}%"
                  f"{load.wakeups / max(1, load.received * load.hops):>15.2f}"
                  f"{100 * load.softirq_share:>12.0f} %")  # fmt: skip


def print_tcp(tcp_runs: list[dict[str, rawpath.RawLimit]], args) -> None:
    print(f"\nTCP through the same {args.hops} hops (rawpath's raw limit: iperf3 CUBIC, "
          f"{args.tcp_s:g} s, forwarders not pinned)")  # fmt: skip
    print(f"{'run':<5}{'path':<11}{'goodput Mbit/s':>15}{'frames/s per hop':>18}"
          f"{'us/frame per hop':>18}  each hop")  # fmt: skip
    for i, by_path in enumerate(tcp_runs, 1):
        for path, raw in by_path.items():
            each = ", ".join(f"{u:.2f}" for u in raw.hop_us_per_frame)
            print(f"{i:<5}{path:<11}{raw.goodput_mbit:>15.0f}{raw.frames_per_s:>18,.0f}"
                  f"{tcp_us_per_frame(raw):>18.2f}  {each}")  # fmt: skip


def tcp_us_per_frame(raw: rawpath.RawLimit) -> float:
    return sum(raw.hop_us_per_frame) / len(raw.hop_us_per_frame)


def tcp_summary(tcp_runs: list[dict[str, rawpath.RawLimit]]) -> str:
    x = [run["af_xdp"] for run in tcp_runs]
    a = [run["af_packet"] for run in tcp_runs]
    goodput = [xi.goodput_mbit / ai.goodput_mbit for xi, ai in zip(x, a)]
    cpu = [tcp_us_per_frame(xi) / tcp_us_per_frame(ai) for xi, ai in zip(x, a)]
    return (f"{'TCP':<9}{'ratio':<11}AF_XDP / AF_PACKET, same run: CPU per frame "
            f"{_span(cpu, '.2f')}, goodput {_span(goodput, '.2f')}")  # fmt: skip


def _span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}} to {hi:{fmt}}"


def summary(runs: list[list[Load]]) -> list[str]:
    """Per load: each path's range over the runs, and AF_XDP / AF_PACKET within each run."""
    lines = []
    labels = list(dict.fromkeys(load.label for load in runs[0]))
    for label in labels:
        by_path = {
            p: [lo for run in runs for lo in run if lo.label == label and lo.path == p]
            for p in PATHS
        }
        for path, loads in by_path.items():
            drops = [lo.sent - lo.received for lo in loads]
            lines.append(f"{label:<9}{path:<11}CPU per frame per hop "
                         f"{_span([lo.us_per_frame_hop() for lo in loads], '.2f')} us, "
                         f"{_span([lo.achieved_pps / 1000 for lo in loads], '.1f')} kpps out, "
                         f"drops {_span(drops, 'd')}")  # fmt: skip
        pairs = list(zip(by_path["af_xdp"], by_path["af_packet"]))
        ratios = [x.us_per_frame_hop() / a.us_per_frame_hop() for x, a in pairs]
        rates = [x.achieved_pps / a.achieved_pps for x, a in pairs if a.achieved_pps]
        rate = _span(rates, ".2f") if rates else "-"
        lines.append(f"{label:<9}{'ratio':<11}AF_XDP / AF_PACKET, same run: CPU per frame "
                     f"{_span(ratios, '.2f')}, rate {rate}")  # fmt: skip
    return lines


SECONDS = float_range(0, 600, "seconds")  # per load and of TCP


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m experiments.ratebench.iopaths",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rates-kpps", type=rate_list, default=[20.0, 80.0],
                        help="paced loads before the maximum (default 20,80)")  # fmt: skip
    parser.add_argument("--repeat", type=int_range(1, 20, "repeat"), default=3, metavar="1..20",
                        help="runs of both paths (default 3)")  # fmt: skip
    parser.add_argument("--hops", type=int_range(1, 8, "hops"), default=rawpath.HOPS,
                        metavar="1..8", help="forwarders in a chain (default 3)")  # fmt: skip
    parser.add_argument("--duration-s", type=SECONDS, default=2.0, help="per load (default 2)")
    parser.add_argument("--tcp-s", type=SECONDS, default=10.0,
                        help="then TCP through each chain (0: none; default 10)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write every load to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.duration_s == 0:
        parser.error("--duration-s: expected seconds above 0 (at most 600)")
    if args.json is not None:
        try:
            check_output_file(args.json)
        except InputFileError as exc:
            parser.error(f"--json {exc}")
    if os.geteuid() != 0:
        print("iopaths: error: needs root (namespaces, packet and XDP sockets)", file=sys.stderr)
        return 2
    if not PKTGEN.exists():
        print(f"iopaths: error: {PKTGEN} is missing: run `make pktgen-build`", file=sys.stderr)
        return 2
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    hops = f"{args.hops} hop{'s' if args.hops > 1 else ''}"
    print(f"{FRAME_BYTES}-byte frames through {hops}; forwarders on CPU {PART_CPU}, "
          f"pktgen on the other; load average at start {load}")  # fmt: skip
    runs, tcp_runs = [], []
    with tempfile.TemporaryDirectory(prefix="iopaths-") as tmp:
        for _ in range(args.repeat):
            runs.append([lo for path in PATHS for lo in run_path(path, args, Path(tmp))])
            if args.tcp_s > 0:
                tcp_runs.append({path: rawpath.measure(args.tcp_s, Path(tmp) / path, binary,
                                                       args.hops)
                                 for path, binary in PATHS.items()})  # fmt: skip
    print_runs(runs)
    if tcp_runs:
        print_tcp(tcp_runs, args)
    print()
    print("\n".join(summary(runs) + ([tcp_summary(tcp_runs)] if tcp_runs else [])))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average at end {load}")
    if args.json:
        loads = [dict(asdict(lo), run=i) for i, run in enumerate(runs, 1) for lo in run]
        tcp = [
            dict(asdict(raw), run=i, path=path)
            for i, run in enumerate(tcp_runs, 1)
            for path, raw in run.items()
        ]
        rows = {"loads": loads, "tcp": tcp}
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

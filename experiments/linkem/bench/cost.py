"""linkem's CPU cost per frame, old binary against new, side by side in one run.

    make linkem-bench-cost                       (this tree's linkem against main's)
    .venv/bin/python experiments/linkem/bench/cost.py --baseline REF|BINARY --kpps 20,80,160
        [--baseline REF2 ...] [--delay-ms 0,10]

Topology as in bench.py: ns1 --veth-- [linkem] --veth-- ns2. build/clib/pktgen offers a fixed
rate of 1,400-byte frames, in the "ab" direction or in both, through one linkem whose links
have a rate 25 % above the offer (no standing queue) and a constant delay (--delay-ms, 10 ms
by default; several, e.g. 0,10, run each point at each: a frame held 10 ms has left the cache
when it is sent, one held 0 ms has not); a pktgen sink on each far end timestamps the frames
in the kernel. Per binary and point it prints:
  us/frame   linkem's CPU time (schedstat run time of its threads) over the offer, divided by
             the frames it forwarded (both directions);
  wakeups/s  voluntary context switches per second: each is one sleep in epoll_wait;
  late p50/p99  linkem's own timing error (departure minus due time, from its stats) over
                the frames that left at or after their due time;
  early p99     the share of frames that left early (a departure slack) and how early, p99;
  e2e p50/p99   the sink's one-way delay minus the configured delay and serialization.
Then the same at the --delay-rates-mbit link rates (20 and 500 Mbit/s: the paper's legs and
NR's), for the delay error, and the idle cost: CPU share of one core over --idle-s with no
traffic.
--departure-slack-us 0,25,50 runs this tree's linkem once per slack (the baseline with its
own behaviour) and adds the early departures (share of frames, p99). Every binary and slack
runs at the same points, alternately, under the same load: compare within a run. linkem runs as an ordinary task unless --rt-priority is given (the testbed's default is
SCHED_FIFO 10; on a shared machine the bench leaves the other processes their CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dccommon.cliargs import ArgumentParser, float_range, int_range, number_list_arg, parse_int
from dccommon.pktgen import PKTGEN, pktgen_argv
from experiments.run.cpu import run_seconds, thread_times
from experiments.run.links import Linkem
from experiments.run.linkspec import LinkSpec
from experiments.run.netns import Topology, unique_prefix, veth_pair

ROOT = Path(__file__).resolve().parents[3]
LINKEM = ROOT / "build" / "linkem" / "linkem"
FRAME_BYTES = 1400
DELAY_MS = 10  # the default --delay-ms
HEADROOM = 1.25  # link rate / offered rate
DIRECTIONS = ("ab", "both")


class BaselineSpec(LinkSpec):
    """A SPEC older binaries parse too: they predate loss_at, and departure is what they do."""

    def to_spec(self) -> str:
        return super().to_spec().replace(",loss_at=departure", "")


def build_baseline(ref: str, workdir: Path) -> Path:
    """linkem as committed at git `ref` (with that commit's clib/pktio), built in workdir."""
    src = workdir / "src"
    src.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "experiments/linkem/src", "clib/pktio"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    out = workdir / "linkem"
    sources = sorted(str(p) for p in (src / "experiments/linkem/src").glob("*.c"))
    sources += sorted(str(p) for p in (src / "clib/pktio").glob("*.c"))
    libs = ["-lm"]
    if (src / "clib/pktio/pktio_xsk.c").exists():  # --io afxdp: libxdp, as PKTIO_XSK_LIBS
        pkg = ["pkg-config", "--libs", "libxdp", "libbpf"]
        libs += subprocess.run(pkg, check=True, capture_output=True, text=True).stdout.split()
    cc = ["cc", "-O2", "-std=gnu11", f"-I{src / 'clib/pktio'}", "-o", str(out)]
    subprocess.run(cc + sources + libs, check=True)
    return out


def voluntary_switches(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    raise RuntimeError(f"no voluntary_ctxt_switches in /proc/{pid}/status")


SYSCALLS = ("epoll_wait", "timerfd_settime", "read", "sendmmsg", "epoll_ctl")


class SyscallCount:
    """linkem's system calls over an interval, counted by `perf stat` on their tracepoints
    (--syscalls): a figure the machine's load shifts less than CPU time."""

    def __init__(self, pid: int) -> None:
        events = ",".join(f"syscalls:sys_enter_{name}" for name in SYSCALLS)
        argv = ["perf", "stat", "-x", ",", "-e", events, "-p", str(pid)]
        self.proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)

    def stop(self) -> dict[str, int]:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        counts = {}
        for line in err.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("syscalls:sys_enter_"):
                name = fields[2].removeprefix("syscalls:sys_enter_")
                counts[name] = int(fields[0]) if fields[0].isdigit() else 0
        return counts


class Bed:
    """The namespaces and veths of one bench run; a linkem between IF_A and IF_B."""

    def __init__(self, topo: Topology, prefix: str, workdir: str) -> None:
        self.workdir = workdir
        self.ns1, self.nsl, self.ns2 = (topo.ns(f"{prefix}{n}") for n in ("n1", "nl", "n2"))
        self.h1, self.a, self.b, self.h2 = (f"{prefix}{n}" for n in ("h1", "la", "lb", "h2"))
        for ns in (self.ns1, self.nsl, self.ns2):
            ns.disable_ipv6()
        veth_pair(self.h1, self.ns1, self.a, self.nsl)
        veth_pair(self.b, self.nsl, self.h2, self.ns2)

    def start(self, binary: Path, spec: LinkSpec, args, slack_us: int = 0) -> Linkem:
        """linkem as the testbed runs it: stats every 100 ms into a file."""
        return Linkem(binary).start(
            self.a,
            self.b,
            spec,
            spec,
            netns=self.nsl,
            stats_path=Path(self.workdir) / "stats.jsonl",
            busy_poll_us=args.busy_poll_us,
            departure_slack_us=slack_us,
            rt_priority=args.rt_priority,
        )


def cost_point(
    bed: Bed, variant: tuple, kpps: float, direction: str, args, delay_ms: float = DELAY_MS
) -> dict:
    binary, slack_us = variant
    offered_mbit = kpps * 1000 * FRAME_BYTES * 8 / 1e6
    rate = round(offered_mbit * HEADROOM, 3)
    spec = BaselineSpec(rate_mbit=rate, delay_ms=delay_ms, dist="const")
    link = bed.start(binary, spec, args, slack_us)
    # (sender namespace and interface, sink namespace and interface) per direction used
    legs = [(bed.ns1, bed.h1, bed.ns2, bed.h2)]
    if direction == "both":
        legs.append((bed.ns2, bed.h2, bed.ns1, bed.h1))
    try:
        sinks = []
        for _tx_ns, _tx_if, rx_ns, rx_if in legs:
            sink = rx_ns.popen(
                pktgen_argv("rx", rx_if, idle_ms=500, duration_s=args.duration_s + 5),
                stdout=subprocess.PIPE,
                text=True,
            )
            assert json.loads(sink.stdout.readline()) == {"ready": True}
            sinks.append(sink)
        pid = link.proc.pid
        before = link.stats()  # also starts linkem's delay windows afresh
        syscalls = SyscallCount(pid) if args.syscalls else None
        cpu0, vcs0, t0 = thread_times(pid), voluntary_switches(pid), time.monotonic()
        senders = [
            tx_ns.popen(
                pktgen_argv(
                    "tx", tx_if, size=FRAME_BYTES, pps=kpps * 1000, duration_s=args.duration_s
                ),
                stdout=subprocess.DEVNULL,
            )
            for tx_ns, tx_if, _rx_ns, _rx_if in legs
        ]
        for s in senders:
            s.wait(timeout=args.duration_s + 30)
        time.sleep(delay_ms / 1000 + 0.05)  # the last frames leave the delay line
        cpu1, vcs1, t1 = thread_times(pid), voluntary_switches(pid), time.monotonic()
        calls = syscalls.stop() if syscalls else {}
        after = link.stats()
        got = [json.loads(s.communicate(timeout=30)[0].strip().splitlines()[-1]) for s in sinks]
    finally:
        link.stop()
    dirs = ["ab", "ba"][: len(legs)]
    frames = sum(after[d]["frames"] - before[d]["frames"] for d in dirs)
    configured_us = delay_ms * 1000 + FRAME_BYTES * 8 / rate
    return {
        "delay_ms": delay_ms,
        "offered_kfps": kpps * len(legs),
        "forwarded": frames,
        "us_per_frame": run_seconds(cpu0, cpu1) * 1e6 / frames if frames else float("nan"),
        "cpu_share": run_seconds(cpu0, cpu1) / (t1 - t0),
        "wakeups_per_s": (vcs1 - vcs0) / (t1 - t0),
        "late_p50": max(after[d]["late_us"]["p50"] for d in dirs),
        "late_p99": max(after[d]["late_us"]["p99"] for d in dirs),
        # older binaries have no early_us: they never send early
        "early_share": (
            sum(after[d].get("early_us", {}).get("n", 0) for d in dirs) / frames if frames else 0.0
        ),
        "early_p99": max(after[d].get("early_us", {}).get("p99", 0) for d in dirs),
        "e2e_p50": max(g["owd_us"]["p50"] for g in got) - configured_us,
        "e2e_p99": max(g["owd_us"]["p99"] for g in got) - configured_us,
        "calls_per_frame": {k: v / frames for k, v in calls.items()} if frames else {},
    }


def idle_cost(bed: Bed, variant: tuple, seconds: float, args) -> dict:
    """CPU share of one core and wakeups/s of a linkem carrying nothing (20 Mbit/s, 10 ms)."""
    binary, slack_us = variant
    link = bed.start(binary, BaselineSpec(rate_mbit=20, delay_ms=DELAY_MS), args, slack_us)
    try:
        time.sleep(0.5)
        pid = link.proc.pid
        cpu0, vcs0, t0 = thread_times(pid), voluntary_switches(pid), time.monotonic()
        time.sleep(seconds)
        cpu1, vcs1, t1 = thread_times(pid), voluntary_switches(pid), time.monotonic()
    finally:
        link.stop()
    return {
        "cpu_share": run_seconds(cpu0, cpu1) / (t1 - t0),
        "wakeups_per_s": (vcs1 - vcs0) / (t1 - t0),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    refs = args.baseline or []
    twice = next((ref for i, ref in enumerate(refs) if ref in refs[:i]), None)
    if twice is not None:  # each binary is a row keyed by its name: a second would vanish
        parser.error(f"--baseline {twice!r} is given twice; give each once")
    return args


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="experiments/linkem/bench/cost.py",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    p.add_argument(
        "--baseline",
        action="append",
        help="git ref or linkem binary to compare with (default main; give it again for more)",
    )
    p.add_argument(
        "--delay-ms",
        type=number_list_arg(0, 1000, "--delay-ms", example="0,10"),
        default=[DELAY_MS],
        help=f"the links' constant delay at the frame-rate points, ms (default {DELAY_MS})",
    )
    p.add_argument(
        "--kpps",
        type=number_list_arg(
            0, 10_000, "--kpps", low_open=True, example="20,80,160", empty_ok=True
        ),
        default=[20.0, 80.0, 160.0],
        help="offered kframes/s per direction ('' for none)",
    )
    p.add_argument(
        "--delay-rates-mbit",
        type=number_list_arg(
            0, 100_000, "--delay-rates-mbit", low_open=True, example="20,500", empty_ok=True
        ),
        default=[20.0, 500.0],
        help="link rates of the delay-error points (ab, offered at 1/1.25 of the rate; '' for none)",
    )
    p.add_argument("--duration-s", type=float_range(0, 600, "duration", low_open=True), default=3.0)
    p.add_argument("--idle-s", type=float_range(0, 600, "idle time"), default=10.0)
    p.add_argument(
        "--busy-poll-us",
        type=int_range(0, 10000, "busy poll"),
        default=None,
        help="linkem's; default its own",
    )
    p.add_argument(
        "--departure-slack-us",
        type=number_list_arg(0, 1000, "--departure-slack-us", parse_int, example="0,25,50"),
        default=[0],
        help="this tree's linkem at each of these slacks (comma-separated µs, 0 to 1000)",
    )
    p.add_argument(
        "--rt-priority",
        type=int_range(0, 99, "priority"),
        default=0,
        help="linkem's; default 0 (ordinary)",
    )
    p.add_argument(
        "--syscalls", action="store_true", help="count linkem's system calls per frame (perf)"
    )
    return p


def print_point(name: str, direction: str, r: dict) -> None:
    print(
        f"{name:<18} {direction:>4} {r['delay_ms']:>5g} {r['offered_kfps']:>6.1f} {r['forwarded']:>8} "
        f"{r['us_per_frame']:>9.2f} {r['cpu_share']:>6.1%} {r['wakeups_per_s']:>10.0f} "
        f"{r['late_p50']:>9.0f} {r['late_p99']:>6.0f} {r['early_share']:>6.0%} "
        f"{r['early_p99']:>6.0f} {r['e2e_p50']:>8.0f} {r['e2e_p99']:>6.0f}",
        flush=True,
    )
    if r["calls_per_frame"]:
        calls = ", ".join(f"{k} {v:.2f}" for k, v in r["calls_per_frame"].items())
        print(f"{'':<23} system calls per frame: {calls}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for need in (PKTGEN, LINKEM):
        if not need.exists():
            print(f"{need} missing: run make linkem-build", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp, Topology() as topo:
        variants = {}
        for i, ref in enumerate(args.baseline or ["main"]):
            base = Path(ref)
            if not base.is_file():
                (Path(tmp) / str(i)).mkdir()
                base = build_baseline(ref, Path(tmp) / str(i))
            variants[f"old ({ref})"] = (base, 0)
        for slack in args.departure_slack_us:
            name = f"new, slack {slack}" if args.departure_slack_us != [0] else "new (this tree)"
            variants[name] = (LINKEM, slack)
        bed = Bed(topo, unique_prefix("lc"), tmp)
        print(
            f"linkem CPU cost: {FRAME_BYTES}-byte frames, link rate {HEADROOM:.2f} x offered, "
            f"{'/'.join(f'{d:g}' for d in args.delay_ms)} ms constant delay, "
            f"{args.duration_s:g} s per point, "
            f"{'SCHED_FIFO ' + str(args.rt_priority) if args.rt_priority else 'ordinary task'}, "
            f"nice {os.nice(0)}, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
        )
        print(
            f"{'binary':<18} {'dir':>4} {'delay':>5} {'kfps':>6} {'fwd':>8} {'us/frame':>9} "
            f"{'core':>6} "
            f"{'wakeups/s':>10} {'late p50':>9} {'p99':>6} {'early':>6} {'p99':>6} "
            f"{'e2e p50':>8} {'p99':>6}"
        )
        for kpps in args.kpps:
            for direction in DIRECTIONS:
                for delay_ms in args.delay_ms:
                    for name, variant in variants.items():
                        r = cost_point(bed, variant, kpps, direction, args, delay_ms)
                        print_point(name, direction, r)
        for rate in args.delay_rates_mbit:
            print(f"delay error at {rate:g} Mbit/s ({rate / HEADROOM:g} offered):")
            kpps = rate / HEADROOM * 1e6 / (FRAME_BYTES * 8) / 1000
            for name, variant in variants.items():
                print_point(name, "ab", cost_point(bed, variant, kpps, "ab", args))
        for name, variant in variants.items():
            r = idle_cost(bed, variant, args.idle_s, args)
            print(
                f"{name:<18} idle {args.idle_s:g} s: {r['cpu_share']:.2%} of a core, "
                f"{r['wakeups_per_s']:.0f} wakeups/s"
            )
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""pdcp-agent benchmark on veths: sustained packets/s and the delay it adds to in-order PDUs.

    .venv/bin/python hostagents/bench/bench_agent.py --build build/hostagents   (as root)
        [--io afpacket,afxdp] [--rates-pps 100000,200000] [--unpaced-frames 0]

Ceiling: the agent alone, a pcap of PDUs replayed forever on leg A, net_null elsewhere.
Throughput: `pktgen --pdcp` (clib/pktgen: AF_PACKET + sendmmsg) sends in-order PDUs on leg A; the rate
is what the agent delivered to the host port, from its own stats lines. Added delay: a
probe goes leg A -> agent -> client, another the same way over a plain veth pair; both are
timed from just before send() to the kernel's receive timestamp (SO_TIMESTAMPNS) at the
client, and the difference of the percentiles is what the agent adds. With --io
afpacket,afxdp the veth rows are measured with the legs on each I/O path (dcexp run --io:
AF_PACKET rings or AF_XDP sockets), side by side; the host port stays on AF_PACKET.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from controlplane.pdcp import dc_frame
from dccommon.cliargs import int_range, number_list_arg, parse_int, subset_list
from dccommon.pktgen import PKTGEN
from dccommon.processes import stop_process
from experiments.run import netns
from hostagents.agent_cmd import IO_PATHS, af_packet, agent_argv, leg_vdev, wait_ready

SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
PROBES = 2000
THROUGHPUT_FRAMES = 2_000_000
PACED_PPS = 300_000  # the goal
PACED_LADDER_PPS = (100_000, 200_000, 300_000, 400_000)
PACED_SECONDS = 2
# how the agent waits between frames, for the delay probes
WAIT_MODES = {
    "busy poll": ("--idle-sleep-us", "0"),
    "blocking wait (default)": (),
    "--spin-us 20": ("--spin-us", "20"),
}


def l2_socket(ns: str, ifname: str, timestamps: bool = False) -> socket.socket:
    sock = netns.l2_socket(ns, ifname)
    if timestamps:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return sock


def probe_frame(seq: int, pdcp: bool) -> bytes:
    macs = bytes.fromhex("020000000c01" "020000000a01")  # dst = client, src = sender
    ip = bytes.fromhex("4500003c" "00000000" "40110000" "0a090001" "0a090002")
    payload = ip + struct.pack("!HHHH", 40000, 5000, 40, 0) + struct.pack("!Q", seq) + bytes(24)
    if pdcp:
        return dc_frame(macs + b"\x08\x00" + payload, seq)  # SN = seq mod 2^18
    return macs + b"\x08\x00" + payload


def one_way_delays_us(
    tx: socket.socket, rx: socket.socket, pdcp: bool, first_seq: int
) -> list[float]:
    """PROBES probes, one at a time, ~2000/s; send() to the client's kernel rx timestamp."""
    delays = []
    rx.settimeout(1.0)
    for i in range(PROBES):
        seq = first_seq + i
        frame = probe_frame(seq, pdcp)
        t_send = time.time_ns()
        tx.send(frame)
        while True:
            data, anc, _flags, addr = rx.recvmsg(2048, 256)
            if addr[2] != PACKET_OUTGOING and data.endswith(struct.pack("!Q", seq) + bytes(24)):
                break
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                delays.append((sec * 1_000_000_000 + nsec - t_send) / 1000)
        time.sleep(0.0005)
    return delays


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def hist_percentile_us(hist: dict, q: float) -> str:
    """Upper edge of the histogram bucket holding the q-th percentile ('<= N us')."""
    counts, edges = hist["counts"], hist["edges_us"]
    total = sum(counts)
    if total == 0:
        return "n/a"
    running = 0
    for i, c in enumerate(counts):
        running += c
        if running >= q / 100 * total:
            return f"< {edges[i]}" if i < len(edges) else f">= {edges[-1]}"
    return "n/a"


class Bench:
    def __init__(self, topo: netns.Topology, build: Path, pktgen: Path, tmp: Path):
        self.build, self.pktgen, self.tmp = build, pktgen, tmp
        self.p = p = netns.unique_prefix("pab")
        self.ns_legs, self.ns_agent, self.ns_client = (topo.ns(p + s) for s in "lac")
        for ns in (self.ns_legs, self.ns_agent, self.ns_client):
            ns.disable_ipv6()
        netns.veth_pair(p + "la", self.ns_legs, p + "la1", self.ns_agent, mtu=1600)
        netns.veth_pair(p + "lb", self.ns_legs, p + "lb1", self.ns_agent, mtu=1600)
        netns.veth_pair(p + "h", self.ns_agent, p + "c", self.ns_client)
        # the reference path: the same sender, a plain veth pair to the client namespace
        netns.veth_pair(p + "d", self.ns_legs, p + "e", self.ns_client)
        self.agent = None
        self.runs = 0

    @contextmanager
    def agent_running(self, io: str, *app_args: str):
        """The agent with its legs on I/O path `io` (one of IO_PATHS)."""
        p = self.p
        self.runs += 1
        stats = self.tmp / f"stats{self.runs}.jsonl"
        err_path = self.tmp / f"agent{self.runs}.stderr"
        vdevs = [
            leg_vdev(io, 0, f"{p}la1", framecnt=16384),
            leg_vdev(io, 1, f"{p}lb1", framecnt=16384),
            af_packet(2, f"{p}h", framecnt=4096),
        ]
        argv = agent_argv(self.build / "pdcp-agent", p, vdevs, ["--stats", str(stats), *app_args])
        with open(err_path, "wb") as err:
            proc = self.ns_agent.popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_ready(proc, err_path)
            self.stats_path = stats
            yield proc
        finally:
            rc = stop_process(proc, grace_s=10)
            if rc != 0:
                raise RuntimeError(f"pdcp-agent exited with {rc}:\n" + err_path.read_text())

    def stats_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stats_path.read_text().splitlines()]

    def blast(self, frames: int, pps: int, first: int) -> dict:
        """`frames` in-order PDUs (18-bit SNs from `first`) on leg A; pps 0 = unpaced."""
        argv = [str(self.pktgen), "tx", "-i", self.p + "la", "--size", "128", "--pdcp", "18"]
        argv += ["--count", str(frames), "--pps", str(pps), "--first", str(first)]
        return json.loads(self.ns_legs.run(argv, timeout=120).stdout)


def write_pcap(path: Path, order: list[int]) -> None:
    """PDCP frames (12-bit SN) with the SNs in `order`, as a classic pcap file."""
    ip = bytes.fromhex("4500006e" "00000000" "40110000" "0a090001" "0a090002") + bytes(90)
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for sn in order:
            frame = dc_frame(bytes.fromhex("020000000c01" "020000000a01" "0800") + ip, sn, 12)
            out.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)


def agent_without_kernel_io(build: Path, tmp: Path, order: list[int]) -> tuple[float, dict]:
    """The agent's own ceiling: leg A replays a pcap of 4096 PDUs forever (net_pcap
    infinite_rx; 4096 = one 12-bit SN cycle, so the stream continues across wraps), the
    other ports are net_null. Returns (delivered PDUs/s, final stats)."""
    pcap = tmp / "pdus.pcap"
    stats = tmp / "pcap-stats.jsonl"
    write_pcap(pcap, order)
    prefix = netns.unique_prefix("pab")
    vdevs = [f"net_pcap0,rx_pcap={pcap},infinite_rx=1", "net_null1,no-rx=1", "net_null2,no-rx=1"]
    app_args = ["--sn-bits", "12", "--idle-sleep-us", "0", "--stats-interval-ms", "250"]
    argv = agent_argv(build / "pdcp-agent", prefix, vdevs, [*app_args, "--stats", str(stats)])
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        time.sleep(4)
    finally:
        rc = stop_process(proc, grace_s=10)
    if rc != 0:
        raise RuntimeError(f"pdcp-agent exited with {rc}: {proc.stderr.read().decode()}")
    proc.stderr.close()
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    return sustained_rate(lines), lines[-1]


def sustained_rate(lines: list[dict]) -> float:
    """Delivered PDUs/s between the first and the last stats line that saw deliveries."""

    def delivered(line):
        return line["delivered_in_order"] + line["delivered_reordered"]

    active = [line for line in lines if not line.get("final")]
    first = next(i for i, line in enumerate(active) if delivered(line) > 0)
    last = max(
        i
        for i, line in enumerate(active)
        if delivered(line) > delivered(active[first]) or i == first
    )
    while last > first and delivered(active[last]) == delivered(active[last - 1]):
        last -= 1
    if last == first:
        return float("nan")
    return (delivered(active[last]) - delivered(active[first])) / (
        (active[last]["ts_ms"] - active[first]["ts_ms"]) / 1000
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--build",
        type=Path,
        default=PKTGEN.parents[1] / "hostagents",
        help="directory holding pdcp-agent (default: %(default)s)",
    )
    parser.add_argument(
        "--pktgen",
        type=Path,
        default=PKTGEN,
        help="the frame generator, clib/pktgen (default: %(default)s)",
    )
    parser.add_argument(
        "--io",
        type=subset_list(IO_PATHS),
        default=["afpacket"],
        help="afpacket,afxdp: the veth rows with the legs on each I/O path (default afpacket)",
    )
    parser.add_argument(
        "--rates-pps",
        type=number_list_arg(1, 10_000_000, "--rates-pps", parse_int, example="100000,200000"),
        default=list(PACED_LADDER_PPS),
        help="the paced rates (default %(default)s)",
    )
    parser.add_argument(
        "--unpaced-frames",
        type=int_range(0, 100_000_000, "--unpaced-frames"),
        default=THROUGHPUT_FRAMES,
        help="PDUs sent as fast as pktgen can, 0: none (default %(default)s)",
    )
    return parser


def veth_rows(bench: Bench, io: str, args: argparse.Namespace, direct: list[float]) -> list:
    """(metric, value, goal) of the agent on veth with its legs on I/O path `io`."""
    rows = []
    busy_poll = ("--idle-sleep-us", "0", "--stats-interval-ms", "100")
    if args.unpaced_frames:
        with bench.agent_running(io, *busy_poll):
            sent = bench.blast(args.unpaced_frames, 0, 0)
            time.sleep(0.5)
        lines = bench.stats_lines()
        final = lines[-1]
        delivered = final["delivered_in_order"] + final["delivered_reordered"]
        rows.append(("offered, unpaced (pktgen)", f"{sent['pps']:,.0f} pps", ""))
        rows.append(
            (
                "delivered rate, unpaced (busy poll)",
                f"{sustained_rate(lines):,.0f} pps",
                f">= {PACED_PPS:,}",
            )
        )
        rows.append(("delivered / sent, unpaced", f"{delivered:,} / {sent['sent']:,}", ""))

    for pps in args.rates_pps:
        with bench.agent_running(io, *busy_poll):
            sent = bench.blast(pps * PACED_SECONDS, pps, 0)
            time.sleep(0.5)
        final = bench.stats_lines()[-1]
        delivered = final["delivered_in_order"] + final["delivered_reordered"]
        rows.append(
            (
                f"delivered at {pps:,} pps offered",
                f"{100 * delivered / sent['sent']:.2f} % ({sent['pps']:,.0f} pps sent)",
                "100 %" if pps >= PACED_PPS else "",
            )
        )

    tx_leg = l2_socket(bench.ns_legs.name, bench.p + "la")
    rx_client = l2_socket(bench.ns_client.name, bench.p + "c", timestamps=True)
    for mode, wait_args in WAIT_MODES.items():
        with bench.agent_running(io, *wait_args, "--stats-interval-ms", "0"):
            time.sleep(0.2)
            via = one_way_delays_us(tx_leg, rx_client, pdcp=True, first_seq=0)
        hist = bench.stats_lines()[-1]["delay_us_hist"]
        rows.append(
            (
                f"added delay p50 / p99 ({mode})",
                (
                    f"{percentile(via, 50) - percentile(direct, 50):.1f} / "
                    f"{percentile(via, 99) - percentile(direct, 99):.1f} us"
                ),
                "p50 <= 20 us",
            )
        )
        rows.append(
            (
                f"  agent's own histogram p50 / p99 ({mode})",
                f"{hist_percentile_us(hist, 50)} / {hist_percentile_us(hist, 99)} us",
                "",
            )
        )
    tx_leg.close()
    rx_client.close()
    return rows


def print_table(title: str, rows: list, io_paths: list[str]) -> None:
    """`rows`: (metric, value, goal), a value one string (the same on every I/O path) or a
    dict by I/O path; a column per path."""
    width = max(len(r[0]) for r in rows)
    cells = [
        [values.get(io, "") if isinstance(values, dict) else values for io in io_paths]
        for _, values, _ in rows
    ]
    value_width = max(28, *(len(c) for row in cells for c in row))
    print(title)
    heads = " | ".join(f"{'value, legs on ' + io:<{value_width}}" for io in io_paths)
    print(f"| {'metric':<{width}} | {heads} | {'goal':<13} |")
    dashes = "|".join("-" * (value_width + 2) for _ in io_paths)
    print(f"|{'-' * (width + 2)}|{dashes}|{'-' * 15}|")
    for (name, _, goal), row in zip(rows, cells):
        values = " | ".join(f"{c:<{value_width}}" for c in row)
        print(f"| {name:<{width}} | {values} | {goal:<13} |")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for tool, target in (
        (args.build / "pdcp-agent", "hostagents-build"),
        (args.pktgen, "pktgen-build"),
    ):
        if not tool.exists():
            print(f"bench_agent: error: {tool} is missing: run `make {target}`", file=sys.stderr)
            return 2
    load_at_start = load_average()
    rows: list = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, order in (
            ("in order", list(range(4096))),
            ("pairs swapped", [sn ^ 1 for sn in range(4096)]),
        ):
            rate, _ = agent_without_kernel_io(args.build.resolve(), Path(tmp), order)
            rows.append(
                (f"agent alone, pcap -> null, {label}", f"{rate:,.0f} pps", f">= {PACED_PPS:,}")
            )
    with tempfile.TemporaryDirectory() as tmp, netns.Topology() as topo:
        bench = Bench(topo, args.build.resolve(), args.pktgen.resolve(), Path(tmp))
        tx_direct = l2_socket(bench.ns_legs.name, bench.p + "d")
        rx_direct = l2_socket(bench.ns_client.name, bench.p + "e", timestamps=True)
        direct = one_way_delays_us(tx_direct, rx_direct, pdcp=False, first_seq=0)
        tx_direct.close()
        rx_direct.close()
        by_io = {io: veth_rows(bench, io, args, direct) for io in args.io}
    rows.append(
        (
            "reference veth path p50 / p99",
            f"{percentile(direct, 50):.1f} / {percentile(direct, 99):.1f} us",
            "",
        )
    )
    first = by_io[args.io[0]]
    for i, (name, _, goal) in enumerate(first):
        rows.append((name, {io: by_io[io][i][1] for io in args.io}, goal))

    print_table(
        f"pdcp-agent on veth ({args.unpaced_frames:,} frames unpaced; {PROBES} delay probes); "
        f"load average at start {load_at_start}, at end {load_average()}",
        rows,
        args.io,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""p4sim forwarding benchmark on veth: packets/s and per-packet latency, one core.

    python -m p4sim.bench [--frame-size 1500] [--duration 5] [--latency-samples 2000]

For each program (a simple L2/L3 forwarding program, and p4src/dc_splitter.p4 when it
exists) the benchmark builds a namespace with veths h0-s0, h1-s1, h2-s2, starts the real
`p4sim` console script on s0..s2 pinned to CPU 0, installs entries over P4Runtime, and runs
a traffic generator pinned to CPU 1 on h0..h2:

- rate: a closed loop keeps up to --window frames in flight (never more, so no frame is lost
  to a full socket buffer) for --duration seconds; rate = frames out / time, and the best
  whole second (other work on a shared machine shows as a gap between the two).
- latency: one frame at a time, send -> first copy seen on an output veth (the AF_PACKET
  path in and out included), --latency-samples times; p50 and p99.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FWD_PROGRAM = Path(__file__).parent / "tests" / "p4" / "runtime_fwd.p4"
SPLITTER_PROGRAM = ROOT / "p4src" / "dc_splitter.p4"
GOAL_SPLITTER_PPS = 20_000
P4SIM_CPU, TRAFFIC_CPU = 0, 1


# ---------------------------------------------------------------------------
# Traffic generator (runs inside the namespace: python -m p4sim.bench traffic ...)
# ---------------------------------------------------------------------------


def _open(ifname: str, rx: bool) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3) if rx else 0)
    sock.bind((ifname, 3 if rx else 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF if rx else socket.SO_SNDBUF, 1 << 22)
    sock.setblocking(False)
    return sock


def _drain(socks: list[socket.socket], timeout: float) -> list[float]:
    """Arrival times of frames received within `timeout` (ignores our own transmissions)."""
    times = []
    ready, _, _ = select.select(socks, [], [], timeout)
    now = time.perf_counter()
    for sock in ready:
        while True:
            try:
                _, addr = sock.recvfrom(65536)
            except BlockingIOError:
                break
            if addr[2] != socket.PACKET_OUTGOING:
                times.append(now)
    return times


def traffic(args: argparse.Namespace) -> None:
    if len(os.sched_getaffinity(0)) > 1 and os.cpu_count() > TRAFFIC_CPU:
        os.sched_setaffinity(0, {TRAFFIC_CPU})
    frame = bytes.fromhex(args.frame)
    tx = _open(args.send_if, rx=False)
    rxs = [_open(i, rx=True) for i in args.recv_ifs.split(",")]
    result: dict[str, object] = {}
    # latency: one at a time
    latencies = []
    for _ in range(args.latency_samples):
        sent = time.perf_counter()
        tx.send(frame)
        got = _drain(rxs, 1.0)
        if got:
            latencies.append(got[0] - sent)
        while _drain(rxs, 0.002):  # a duplicated frame's second copy
            pass
    result["latencies_us"] = [x * 1e6 for x in latencies]
    # rate: closed loop with a bounded number of frames in flight
    in_flight, received, sent = 0, 0, 0
    start = time.perf_counter()
    deadline = start + args.duration
    per_second: dict[int, int] = {}  # whole seconds since start -> frames received
    while time.perf_counter() < deadline:
        while in_flight < args.window:
            try:
                tx.send(frame)
            except BlockingIOError:
                break
            in_flight += 1
            sent += 1
        got = len(_drain(rxs, 0.5))
        if got == 0 and in_flight:
            in_flight = 0  # frames lost (should not happen); refill the window
        received += got
        second = int(time.perf_counter() - start)
        per_second[second] = per_second.get(second, 0) + got
        in_flight = max(0, in_flight - got // args.copies_per_frame)
    elapsed = time.perf_counter() - start
    full_seconds = [n for s, n in per_second.items() if s < int(elapsed)]
    result.update(
        sent=sent, received=received, elapsed_s=elapsed, best_second=max(full_seconds, default=0)
    )
    print(json.dumps(result))


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    program: Path
    frame: bytes
    copies_per_frame: int  # output frames per input frame (1 for split and forwarding)
    entries: Callable[[_Client], None]  # installs the case's table entries
    mtu: int = 1600


def _frame(size: int, dst_ip: str, dst_mac: str = "02:00:00:00:00:02") -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    head = (
        Ether(dst=dst_mac, src="02:00:00:00:00:01")
        / IP(src="10.0.0.1", dst=dst_ip)
        / UDP(sport=4433, dport=4433)
    )
    return bytes(head) + bytes(size - len(head))


class _EntryWriter:
    """Installs benchmark entries by name; subclasses say where the Update goes."""

    p4info = None

    def _find(self, kind: str, suffix: str):
        for obj in getattr(self.p4info, kind):
            if obj.preamble.name == suffix or obj.preamble.name.endswith("." + suffix):
                return obj
        raise LookupError(f"no {kind[:-1]} named *{suffix} in the P4Info")

    def insert(
        self, table: str, match: dict[str, tuple], action: str, params: dict[str, int]
    ) -> None:
        from p4.v1 import p4runtime_pb2

        t = self._find("tables", table)
        a = self._find("actions", action)
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        entry = update.entity.table_entry
        entry.table_id = t.preamble.id
        fields = {m.name: m for m in t.match_fields}
        for name, value in match.items():
            m = entry.match.add(field_id=fields[name].id)
            nbytes = (fields[name].bitwidth + 7) // 8
            if len(value) == 2:  # (value, prefix_len)
                m.lpm.value, m.lpm.prefix_len = value[0].to_bytes(nbytes, "big"), value[1]
            else:
                m.exact.value = value[0].to_bytes(nbytes, "big")
        entry.action.action.action_id = a.preamble.id
        for p in a.params:
            entry.action.action.params.add(
                param_id=p.id, value=params.get(p.name, 0).to_bytes((p.bitwidth + 7) // 8, "big")
            )
        self._apply(update)

    def _apply(self, update) -> None:
        raise NotImplementedError


class _Client(_EntryWriter):
    """A minimal P4Runtime client (primary, election id 1)."""

    def __init__(self, address: str) -> None:
        import queue

        import grpc
        from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

        self.pb = p4runtime_pb2
        self.channel = grpc.insecure_channel(address)
        grpc.channel_ready_future(self.channel).result(timeout=120)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue = queue.Queue()
        arb = p4runtime_pb2.StreamMessageRequest()
        arb.arbitration.device_id = 0
        arb.arbitration.election_id.low = 1
        self._requests.put(arb)
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        next(self._stream)
        self.p4info = self.stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=10
        ).config.p4info

    def _apply(self, update) -> None:
        req = self.pb.WriteRequest(device_id=0)
        req.election_id.low = 1
        req.updates.append(update)
        self.stub.Write(req, timeout=10)

    def close(self) -> None:
        self._requests.put(None)
        self.channel.close()


class _Local(_EntryWriter):
    """The same entries written straight into an in-process device (no I/O, no gRPC)."""

    def __init__(self, program: Path) -> None:
        from p4sim import frontend
        from p4sim.p4runtime.pipeline import from_program

        self.pipeline = from_program(frontend.compile_file(str(program)), b"", None)
        self.p4info = self.pipeline.p4info

    def _apply(self, update) -> None:
        from p4sim.p4runtime.entities import apply_update

        apply_update(self.pipeline.index, self.pipeline.device, update)


def engine_rate(case: Case, frames: int = 5000, repeats: int = 3) -> float:
    """Packets/s of device.process alone (best of `repeats`, on p4sim's CPU): the ceiling
    the packet I/O path adds to."""
    local = _Local(case.program)
    case.entries(local)
    device = local.pipeline.device
    before = os.sched_getaffinity(0)
    if len(before) > 1:
        os.sched_setaffinity(0, {P4SIM_CPU})
    try:
        best = 0.0
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(frames):
                device.process(0, case.frame)
            best = max(best, frames / (time.perf_counter() - start))
        return best
    finally:
        os.sched_setaffinity(0, before)


def _fwd_entries(client: _EntryWriter) -> None:
    client.insert(
        "ipv4_lpm", {"ipv4_dst": (0x0A000100, 24)}, "route", {"port": 1, "next_hop": 0x020000000102}
    )
    client.insert("l2_fwd", {"dst_mac": (0x020000000102,)}, "forward", {"port": 1})


def _splitter_entries(client: _EntryWriter) -> None:
    client.insert(
        "ue_sessions_v4",
        {"ue_addr": (0x0A000102,)},
        "split_dc",
        {"user_idx": 0, "batch": 4, "leg_a_count": 2, "leg_a_port": 1, "leg_b_port": 2},
    )


def run_case(case: Case, args: argparse.Namespace) -> dict:
    from experiments.netns import Namespace, unique_prefix, veth_pair

    prefix = unique_prefix("p4b")
    p4sim = str(Path(sys.executable).parent / "p4sim")
    with tempfile.TemporaryDirectory(prefix="p4sim-bench-") as tmp, Namespace(f"{prefix}ns") as ns:
        for i in range(3):
            veth_pair(f"h{i}", ns, f"s{i}", ns, mtu=case.mtu)
        ns.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
        sock = f"unix:{tmp}/p4rt.sock"
        log_path = Path(tmp) / "p4sim.log"
        with open(log_path, "w") as log:
            cpus = os.sched_getaffinity(0)
            pin = (lambda: os.sched_setaffinity(0, {P4SIM_CPU})) if len(cpus) > 1 else None
            proc = ns.popen(
                [
                    p4sim,
                    str(case.program),
                    "-i",
                    "0@s0",
                    "-i",
                    "1@s1",
                    "-i",
                    "2@s2",
                    "--grpc-server-addr",
                    sock,
                    "--log-level",
                    "warn",
                ],
                stdout=log,
                stderr=log,
                preexec_fn=pin,
            )
            try:
                client = _Client(sock)
            except Exception as exc:  # noqa: BLE001 - report why this case did not run
                proc.poll()
                detail = log_path.read_text().strip()[-800:] or str(exc)
                raise RuntimeError(f"p4sim did not come up: {detail}") from None
            try:
                case.entries(client)
            finally:
                client.close()
            out = ns.run(
                [
                    sys.executable,
                    "-m",
                    "p4sim.bench",
                    "traffic",
                    "--send-if",
                    "h0",
                    "--recv-ifs",
                    "h1,h2",
                    "--frame",
                    case.frame.hex(),
                    "--duration",
                    str(args.duration),
                    "--latency-samples",
                    str(args.latency_samples),
                    "--window",
                    str(args.window),
                    "--copies-per-frame",
                    str(case.copies_per_frame),
                ],
                timeout=args.duration + args.latency_samples + 120,
            )
        result = json.loads(out.stdout)
    lat = sorted(result["latencies_us"])
    return {
        "rate_pps": result["received"] / result["elapsed_s"],
        "best_second_pps": result["best_second"],
        "received": result["received"],
        "p50_us": statistics.median(lat) if lat else float("nan"),
        "p99_us": lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan"),
        "lost_latency_probes": args.latency_samples - len(lat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m p4sim.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--frame-size", type=int, default=1500, help="bytes per frame")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of rate test")
    parser.add_argument("--latency-samples", type=int, default=2000)
    parser.add_argument("--window", type=int, default=32, help="frames in flight (rate test)")
    sub = parser.add_subparsers(dest="command")
    t = sub.add_parser("traffic", help="(internal) the traffic generator, run in the namespace")
    t.add_argument("--send-if", required=True)
    t.add_argument("--recv-ifs", required=True)
    t.add_argument("--frame", required=True)
    t.add_argument("--duration", type=float, default=5.0)
    t.add_argument("--latency-samples", type=int, default=2000)
    t.add_argument("--window", type=int, default=32)
    t.add_argument("--copies-per-frame", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "traffic":
        traffic(args)
        return 0
    if os.geteuid() != 0:
        print("p4sim.bench: needs root (network namespaces and packet sockets)", file=sys.stderr)
        return 1
    if not 64 <= args.frame_size <= 1500:
        print("p4sim.bench: --frame-size must be 64..1500", file=sys.stderr)
        return 1
    cases = [
        Case("L2/L3 forwarding", FWD_PROGRAM, _frame(args.frame_size, "10.0.1.2"), 1, _fwd_entries)
    ]
    if SPLITTER_PROGRAM.exists():
        cases.append(
            Case(
                "dc_splitter (DC split)",
                SPLITTER_PROGRAM,
                _frame(args.frame_size, "10.0.1.2"),
                1,
                _splitter_entries,
            )
        )
    print(
        f"p4sim forwarding benchmark: {args.frame_size}-byte frames on veth, p4sim on one "
        f"core (CPU {P4SIM_CPU}), traffic on CPU {TRAFFIC_CPU}"
    )
    print(
        f"{'program':<26}{'packets/s':>12}{'best 1 s':>10}{'p50 latency':>14}{'p99 latency':>14}"
        f"{'engine only':>14}"
    )
    failed = False
    for case in cases:
        try:
            r = run_case(case, args)
            r["engine_pps"] = engine_rate(case)
        except Exception as exc:  # noqa: BLE001 - one failing case must not hide the others
            print(f"{case.name:<26}  not run: {exc}")
            failed = True
            continue
        print(
            f"{case.name:<26}{r['rate_pps']:>12,.0f}{r['best_second_pps']:>10,.0f}"
            f"{r['p50_us']:>11,.0f} us{r['p99_us']:>11,.0f} us{r['engine_pps']:>10,.0f} p/s"
        )
        if r["lost_latency_probes"]:
            print(f"{'':<26}({r['lost_latency_probes']} latency probes got no answer)")
        if case.program == SPLITTER_PROGRAM:
            verdict = "met" if r["rate_pps"] >= GOAL_SPLITTER_PPS else "NOT met"
            if verdict != "met" and r["best_second_pps"] >= GOAL_SPLITTER_PPS:
                verdict = "met in the best second only (other load on the machine?)"
            print(f"{'':<26}goal {GOAL_SPLITTER_PPS:,} packets/s: {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

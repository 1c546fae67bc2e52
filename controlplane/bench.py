"""Benchmarks of the splitter on p4sim: live reconfiguration latency through the controller,
and packets per second of the dc_splitter pipeline per mode (in-process ports, one core).

    .venv/bin/python -m controlplane.bench [--packets 3000] [--changes 100]
"""

from __future__ import annotations

import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

from controlplane.model import UserConfig
from controlplane.splitter import Splitter
from controlplane.targets import p4sim_compile
from dccommon.cliargs import ArgumentParser, int_range
from p4sim.io import InProcessPorts
from p4sim.p4runtime.server import P4RuntimeServer
from p4sim.switch import Switch

PROGRAM = Path(__file__).resolve().parent.parent / "p4src" / "dc_splitter.p4"


def udp_frame(dst: str, seq: int, size: int = 1000) -> bytes:
    payload = bytes(size)
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        28 + size,
        seq & 0xFFFF,
        0,
        64,
        17,
        0,
        bytes([10, 0, 0, 1]),
        bytes(int(x) for x in dst.split(".")),
    )
    udp = struct.pack("!HHHH", 4433, 5555, 8 + size, 0)
    return bytes.fromhex("0200000000fe020000000001") + b"\x08\x00" + ip + udp + payload


def pps(ports: InProcessPorts, addr: str, packets: int) -> float:
    frames = [udp_frame(addr, i) for i in range(packets)]
    start = time.perf_counter()
    for frame in frames:
        ports.inject(0, frame)
    elapsed = time.perf_counter() - start
    ports.collect()
    return packets / elapsed


def main(argv=None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int_range(1, 1_000_000, "packets"), default=3000)
    parser.add_argument("--changes", type=int_range(1, 100_000, "changes"), default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        p4info, config = p4sim_compile(PROGRAM, Path(tmp))
        ports = InProcessPorts([0, 1, 2])
        switch = Switch(ports)
        switch.start()
        server = P4RuntimeServer(switch, "127.0.0.1:0")
        server.start()
        try:
            with Splitter.connect(server.address) as sw:
                sw.push_pipeline(p4info, config)
                sw.configure_ports(0, 1, 2)
                sw.add_user(UserConfig(addr="10.0.0.2", batch=100, ratio=(1, 1), name="ue1"))
                sw.add_user(UserConfig(addr="10.0.0.3", mode="dc-dup", name="ue2"))
                sw.add_user(UserConfig(addr="10.0.0.4", mode="sc", port=1, name="ue3"))
                latencies = []
                for i in range(args.changes):
                    start = time.perf_counter()
                    sw.set_user("ue1", ratio=(9, 1) if i % 2 == 0 else (1, 1))
                    latencies.append((time.perf_counter() - start) * 1e3)
                latencies.sort()
                p95 = latencies[int(0.95 * (len(latencies) - 1))]
                print(
                    f"splitter-bench: set_user (read + MODIFY over P4Runtime): median "
                    f"{statistics.median(latencies):.2f} ms, p95 {p95:.2f} ms "
                    f"({args.changes} changes)"
                )
                for label, addr in (
                    ("dc-split", "10.0.0.2"),
                    ("dc-dup", "10.0.0.3"),
                    ("sc", "10.0.0.4"),
                ):
                    rate = pps(ports, addr, args.packets)
                    print(
                        f"splitter-bench: p4sim dc_splitter {label:<8} {rate:8.0f} packets/s "
                        f"({rate * 1042 * 8 / 1e6:.1f} Mbit/s of 1042-byte frames, one core)"
                    )
        finally:
            server.stop()
            switch.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

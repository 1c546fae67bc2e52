"""pdcp-agent on veths in namespaces: PDCP frames sent out of order on two legs reach the
client side in order, header stripped, byte-identical; non-PDCP frames pass through; the
client's frames go out on leg A; the stats file ends with a correct final line.

    .venv/bin/pytest -q hostagents/tests/test_agent_integration.py     (as root)

Topology (every name carries a per-run prefix from unique_prefix("pa")):

    ns <p>l (sender)          ns <p>a (agent)                  ns <p>c (client)
    <p>la  ------------------ <p>la1  -- leg A (port 0) -+
    <p>lb  ------------------ <p>lb1  -- leg B (port 1) -+- pdcp-agent -- <p>h (port 2) -- <p>c
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.utils import checksum

from controlplane.pdcp import dc_frame
from dccommon.garbage import garbage_frames, send_all
from dccommon.jsonlines import read_json_lines
from dccommon.processes import rss_kib, stop_process
from experiments.run import cpu, netns, parts
from experiments.run.netns import in_netns
from hostagents.agent_cmd import AGENT_BIN as AGENT
from hostagents.agent_cmd import (
    AGENT_READY_LINE,
    IO_PATHS,
    af_packet,
    agent_argv,
    leg_vdev,
    wait_ready,
)

PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35  # also the control message's type (SCM_TIMESTAMPNS)
SENDER_MAC = "02:00:00:00:0a:01"  # marks our frames among anything else on the wire
CLIENT_MAC = "02:00:00:00:0c:01"

pytestmark = pytest.mark.netns


def l2_socket(ns: str, ifname: str) -> socket.socket:
    sock = netns.l2_socket(ns, ifname)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # arrival times: receive_ours
    return sock


def drain(sock: socket.socket) -> None:
    sock.setblocking(False)
    try:
        while True:
            sock.recv(65535)
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)


def receive_ours(sock: socket.socket, count: int, timeout_s: float) -> list[tuple[bytes, float]]:
    """Up to `count` incoming frames from SENDER_MAC or CLIENT_MAC, with arrival times: the
    kernel's, on the wall clock (time.time()), so a test process kept waiting for a core
    does not add its own delay to the agent's."""
    ours = {bytes.fromhex(SENDER_MAC.replace(":", "")), bytes.fromhex(CLIENT_MAC.replace(":", ""))}
    frames: list[tuple[bytes, float]] = []
    deadline = time.monotonic() + timeout_s
    while len(frames) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            data, ancillary, _flags, addr = sock.recvmsg(65535, socket.CMSG_SPACE(16))
        except TimeoutError:
            break
        if addr[2] != PACKET_OUTGOING and data[6:12] in ours:
            frames.append((data, _kernel_time(ancillary)))
    return frames


def _kernel_time(ancillary: list[tuple[int, int, bytes]]) -> float:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec + nsec / 1e9
    raise AssertionError("a frame without its kernel timestamp (SO_TIMESTAMPNS)")


def scapy_inner_frame(count: int) -> bytes:
    """The frame the client must receive for PDCP COUNT `count`: Ethernet + IPv4/UDP."""
    payload = b"pdcp-agent test %08d " % count + bytes(range(64))
    pkt = (
        Ether(dst=CLIENT_MAC, src=SENDER_MAC, type=0x0800)
        / IP(src="10.9.0.1", dst="10.9.0.2", id=count & 0xFFFF)
        / UDP(sport=40000, dport=5000)
        / payload
    )
    return bytes(pkt)


INNER_TEMPLATE = scapy_inner_frame(0)
IP_AT, UDP_AT = 14, 34  # offsets of the IPv4 and UDP headers in the frame


def inner_frame(count: int) -> bytes:
    """scapy_inner_frame(count), built from a template with the COUNT's fields and the two
    checksums patched: scapy takes 0.6 ms a frame, and the SN wrap test needs 16,000 of them
    (test_inner_frame_is_scapys checks that both agree)."""
    frame = bytearray(INNER_TEMPLATE)
    frame[UDP_AT + 8 : UDP_AT + 32] = b"pdcp-agent test %08d" % count
    frame[IP_AT + 4 : IP_AT + 6] = struct.pack("!H", count & 0xFFFF)
    frame[IP_AT + 10 : IP_AT + 12] = b"\0\0"
    frame[IP_AT + 10 : IP_AT + 12] = struct.pack("!H", checksum(bytes(frame[IP_AT:UDP_AT])))
    frame[UDP_AT + 6 : UDP_AT + 8] = b"\0\0"
    udp = bytes(frame[UDP_AT:])
    pseudo = bytes(frame[IP_AT + 12 : IP_AT + 20]) + struct.pack("!BBH", 0, 17, len(udp))
    frame[UDP_AT + 6 : UDP_AT + 8] = struct.pack("!H", checksum(pseudo + udp) or 0xFFFF)
    return bytes(frame)


def test_inner_frame_is_scapys():
    for count in (0, 1, 255, 4095, 4096, 65535, 65536, 2 * 4096 + 101, 200_003, 99_999_999):
        assert inner_frame(count) == scapy_inner_frame(count), count


def test_wait_ready_returns_on_the_ready_line_and_names_an_agent_that_exited(tmp_path):
    log = tmp_path / "agent.stderr"
    log.write_text(f"EAL: Detected CPU lcores: 2\n{AGENT_READY_LINE} 0 and 1, host 2\n")
    running = subprocess.Popen(["sleep", "30"])
    try:
        wait_ready(running, log, timeout_s=5)
    finally:
        stop_process(running)
    log.write_text("EAL: failed to open interface pa0000la1\n")
    ended = subprocess.Popen(["sh", "-c", "exit 1"])
    with pytest.raises(parts.TestbedError, match=r"(?s)pdcp-agent exited with 1.*pa0000la1"):
        wait_ready(ended, log, timeout_s=30)


def pdcp_frame(count: int, sn_bits: int = 18, data: bool = True) -> bytes:
    """inner_frame(count) as it travels on a DC leg (DESIGN.md section 3), SN = COUNT mod
    2^sn_bits."""
    return dc_frame(inner_frame(count), count, sn_bits, data)


class AgentTestbed:
    """Three namespaces, three veth pairs, and a pdcp-agent between them."""

    def __init__(self, topo: netns.Topology, tmp: Path):
        self.prefix = p = netns.unique_prefix("pa")
        self.tmp = tmp
        self.ns_legs, self.ns_agent, self.ns_client = (topo.ns(p + s) for s in "lac")
        for ns in (self.ns_legs, self.ns_agent, self.ns_client):
            ns.disable_ipv6()
        self.leg_if = (p + "la", p + "lb")
        netns.veth_pair(p + "la", self.ns_legs, p + "la1", self.ns_agent, mtu=1600)
        netns.veth_pair(p + "lb", self.ns_legs, p + "lb1", self.ns_agent, mtu=1600)
        netns.veth_pair(p + "h", self.ns_agent, p + "c", self.ns_client)
        self.ns_client.run(["ip", "link", "set", p + "c", "address", CLIENT_MAC])
        self.stats_path = tmp / "stats.jsonl"
        self.agent: subprocess.Popen | None = None

    def start_agent(
        self, *app_args: str, host_vdev: str | None = None, io: str = "afpacket"
    ) -> None:
        """The agent, its legs on I/O path `io` (agent_cmd.IO_PATHS)."""
        p = self.prefix
        self.stderr_path = self.tmp / "agent.stderr"
        vdevs = [
            leg_vdev(io, 0, f"{p}la1"),
            leg_vdev(io, 1, f"{p}lb1"),
            host_vdev or af_packet(2, f"{p}h"),
        ]
        argv = agent_argv(AGENT, p, vdevs, ["--stats", str(self.stats_path), *app_args])
        with open(self.stderr_path, "wb") as err:
            self.agent = self.ns_agent.popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        wait_ready(self.agent, self.stderr_path)
        self.legs = [l2_socket(self.ns_legs.name, ifname) for ifname in self.leg_if]
        self.client = l2_socket(self.ns_client.name, p + "c")
        for sock in (*self.legs, self.client):
            drain(sock)

    def send_leg(self, leg: int, frame: bytes) -> None:
        self.legs[leg].send(frame)

    def send_leg_timed(self, leg: int, frame: bytes) -> tuple[float, float]:
        """Send; the wall-clock times just before and just after. The frame left between
        them: a lower bound on a delay is checked from the first, an upper bound from the
        second, so the test's own scheduling never makes either fail."""
        before = time.time()
        self.send_leg(leg, frame)
        return before, time.time()

    def wait_stats(self, done, timeout_s: float = 60) -> dict:
        """The agent's first stats line (one every --stats-interval-ms) for which `done` holds:
        what the agent has seen, rather than a pause a loaded machine may outlast."""
        deadline = time.monotonic() + timeout_s
        while True:
            lines = read_json_lines(self.stats_path)
            for stats in lines:
                if done(stats):
                    return stats
            assert time.monotonic() < deadline, f"no stats line as awaited: {lines[-1:]}"
            time.sleep(0.02)

    def stop_agent(self) -> dict:
        """SIGTERM the agent; return its final stats line."""
        assert self.agent is not None
        rc = stop_process(self.agent, grace_s=120)  # its final stats line, however starved
        assert rc == 0, self.stderr_path.read_text(errors="replace")
        lines = [json.loads(line) for line in self.stats_path.read_text().splitlines()]
        assert lines and lines[-1].get("final") is True, lines[-1:]
        assert all("final" not in line for line in lines[:-1])
        return lines[-1]

    def close(self) -> None:
        for sock in (*getattr(self, "legs", ()), getattr(self, "client", None)):
            if sock is not None:
                sock.close()


@pytest.fixture
def testbed(tmp_path):
    if not AGENT.exists():
        pytest.fail(f"{AGENT} is missing: run `make hostagents-build` first")
    with netns.Topology() as topo:
        bed = AgentTestbed(topo, tmp_path)
        try:
            yield bed
        finally:
            bed.close()
            if bed.agent is not None:
                stop_process(bed.agent)
    prefix = bed.prefix
    # The agent removes its EAL runtime directory itself; nothing of ours may be left.
    leftover_dir = Path("/var/run/dpdk") / prefix
    names = netns.run(["ip", "netns", "list"]).stdout
    assert prefix not in names, f"namespaces left behind: {names}"
    assert not leftover_dir.exists(), f"{leftover_dir} left behind"


@pytest.mark.parametrize("io", IO_PATHS)
def test_reorders_two_legs_strips_headers_passes_through_and_sends_uplink(testbed, io):
    bed = testbed
    # t-Reordering 60 s: no step here may depend on the timer, however long a busy machine
    # keeps this test from sending (the timer has a test of its own, below).
    bed.start_agent("--t-reordering-us", "60000000", "--stats-interval-ms", "50", io=io)

    # 1. SN 0..39: even SNs on leg A, then odd ones on leg B; a reordered mess that the
    #    agent must hand to the client as 0, 1, 2, ... with the PDCP header stripped.
    for sn in range(0, 40, 2):
        bed.send_leg(0, pdcp_frame(sn))
    for sn in range(1, 40, 2):
        bed.send_leg(1, pdcp_frame(sn))
    got = receive_ours(bed.client, 40, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(sn) for sn in range(40)]

    # 2. A non-PDCP frame (ARP) passes through unchanged.
    arp = bytes(
        Ether(dst="ff:ff:ff:ff:ff:ff", src=SENDER_MAC)
        / ARP(hwsrc=SENDER_MAC, psrc="10.9.0.1", pdst="10.9.0.2")
    )
    bed.send_leg(1, arp)
    assert [f for f, _ in receive_ours(bed.client, 1, timeout_s=30)] == [arp]

    # 3. Duplication: SN 40 on both legs arrives once.
    bed.send_leg(0, pdcp_frame(40))
    bed.send_leg(1, pdcp_frame(40))
    # 4. A PDCP Control PDU (D/C = 0) is malformed here: dropped and counted.
    bed.send_leg(0, pdcp_frame(41, data=False))
    got = receive_ours(bed.client, 1, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(40)]
    assert receive_ours(bed.client, 2, timeout_s=1) == []  # no second 40, no control PDU

    # 5. Uplink: a frame from the client goes out on leg A, unchanged, and not on leg B.
    drain(bed.legs[0])
    drain(bed.legs[1])
    uplink = bytes(
        Ether(dst=SENDER_MAC, src=CLIENT_MAC)
        / IP(src="10.9.0.2", dst="10.9.0.1")
        / UDP(sport=5000, dport=40000)
        / b"ack"
    )
    bed.client.send(uplink)
    assert [f for f, _ in receive_ours(bed.legs[0], 1, timeout_s=30)] == [uplink]
    assert receive_ours(bed.legs[1], 1, timeout_s=0.3) == []

    # 6. Shutdown with a PDU waiting behind a gap (41 missing): SIGTERM delivers it, long
    #    before the 60 s timer could.
    bed.send_leg(0, pdcp_frame(42))
    bed.wait_stats(lambda s: s["rx_leg_a"] == 20 + 3 and s["buffered"] == 1)
    final = bed.stop_agent()
    assert [f for f, _ in receive_ours(bed.client, 1, timeout_s=30)] == [inner_frame(42)]

    assert final["rx_leg_a"] == 20 + 1 + 1 + 1  # evens, 40, control PDU, 42
    assert final["rx_leg_b"] == 20 + 1 + 1  # odds, ARP, 40
    assert final["rx_host"] == 1 and final["uplink"] == 1
    assert final["passthrough"] == 1
    # All even SNs reached the agent before the first odd one: 0, the odd SNs and 40 left on
    # arrival; 2..38 waited for their odd predecessor, 42 for the flush.
    assert final["delivered_in_order"] == 1 + 20 + 1
    assert final["delivered_reordered"] == 19 + 1
    assert final["skipped"] == 1  # 41, at shutdown
    assert final["duplicates"] == 1
    assert final["out_of_window"] == 0
    assert final["malformed"] == 1 and final["malformed_reasons"]["control_pdu"] == 1
    assert final["t_reordering_expiries"] == 0
    assert final["flushed"] == 1 and final["buffered"] == 0
    assert final["rx_deliv"] == final["rx_next"] == 43
    lines = [json.loads(line) for line in bed.stats_path.read_text().splitlines()]
    assert len(lines) >= 5  # a line every 50 ms over a run of more than a second
    assert all(a["ts_ms"] <= b["ts_ms"] for a, b in itertools.pairwise(lines))
    assert sum(final["delay_us_hist"]["counts"]) == 42
    assert len(final["delay_us_hist"]["counts"]) == len(final["delay_us_hist"]["edges_us"]) + 1
    assert final["tx_dropped_host"] == 0

    # 7. The state at the stop, read before the flush: 42 was still waiting; on AF_XDP each
    #    leg's socket counters, none of which may show a frame lost at these few frames.
    stderr = bed.stderr_path.read_text(errors="replace")
    assert "at stop: mbuf pool " in stderr
    assert "free, 1 buffered for reordering, 0 queued for the host" in stderr
    xdp = {
        int(m["port"]): {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m["counters"])}
        for m in re.finditer(r"port (?P<port>\d+) AF_XDP statistics: (?P<counters>.*)", stderr)
    }
    if io == "afxdp":
        assert sorted(xdp) == [0, 1], stderr  # the legs; the host port is on AF_PACKET
        for counters in xdp.values():
            assert counters["rx_ring_full"] == counters["rx_fill_ring_empty_descs"] == 0
            assert counters["rx_invalid_descs"] == counters["tx_invalid_descs"] == 0
    else:
        assert xdp == {}, stderr


def test_t_reordering_gives_up_a_gap_after_its_time(testbed):
    """SN 1 behind a gap leaves when t-Reordering (1 s) expires, never earlier; SN 0,
    arriving after that, is outside the window and discarded."""
    bed = testbed
    bed.start_agent("--t-reordering-us", "1000000", "--stats-interval-ms", "50")
    sent, _ = bed.send_leg_timed(1, pdcp_frame(1))
    got = receive_ours(bed.client, 1, timeout_s=60)  # nothing but the timer can release it
    assert [f for f, _ in got] == [inner_frame(1)]
    waited = got[0][1] - sent
    assert waited >= 0.95, f"SN 1 left after {waited:.3f} s; t-Reordering is 1 s"
    bed.send_leg(0, pdcp_frame(0))
    bed.wait_stats(lambda s: s["rx_leg_a"] == 1)
    final = bed.stop_agent()
    assert receive_ours(bed.client, 1, timeout_s=0.3) == []  # the late SN 0 never arrives
    assert final["t_reordering_expiries"] == 1
    assert final["skipped"] == 1  # 0, given up on expiry
    assert final["out_of_window"] == 1  # 0 again, when it came too late
    assert final["delivered_reordered"] == 1 and final["delivered_in_order"] == 0
    assert final["flushed"] == 0
    assert final["rx_deliv"] == final["rx_next"] == 2


def test_sn12_wraparound_and_zero_timer(testbed):
    bed = testbed
    bed.start_agent("--sn-bits", "12", "--t-reordering-us", "0", "--stats-interval-ms", "0")
    n = 2 * 4096 + 100  # two HFN wraps of the 12-bit SN
    received: list[bytes] = []
    for start in range(0, n, 256):  # in chunks, so no socket buffer overflows
        for count in range(start, min(n, start + 256)):
            bed.send_leg(0, pdcp_frame(count, sn_bits=12))
        received += [f for f, _ in receive_ours(bed.client, min(n, start + 256) - start, 30)]
    # Each client frame carries its COUNT (not just the SN) in the payload.
    assert len(received) == n
    assert received == [inner_frame(count) for count in range(n)]

    # t-Reordering = 0: a PDU behind a gap leaves at once; the gap is given up.
    _, sent = bed.send_leg_timed(1, pdcp_frame(n + 1, sn_bits=12))
    got = receive_ours(bed.client, 1, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(n + 1)]
    assert got[0][1] - sent < 1.0
    final = bed.stop_agent()
    assert final["rx_deliv"] == final["rx_next"] == n + 2  # COUNT, with HFN = 2
    assert final["delivered_in_order"] == n
    assert final["t_reordering_expiries"] == 1 and final["skipped"] == 1


def test_initial_sn_auto_joins_a_running_sender(testbed):
    """Started after the switch: with --initial-sn auto the window opens at the first SN
    seen, where the spec's start at 0 would discard SNs from 2^17 on until the wrap."""
    bed = testbed
    bed.start_agent("--t-reordering-us", "1000000", "--initial-sn", "auto")
    first = 200_000
    for count in (first, first + 2, first + 1, first + 3):
        bed.send_leg(count % 2, pdcp_frame(count))
    got = receive_ours(bed.client, 4, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(first + i) for i in range(4)]
    final = bed.stop_agent()
    assert final["rx_deliv"] == final["rx_next"] == first + 4
    assert final["out_of_window"] == 0


def test_tap_host_port_feeds_the_client_ip_stack(testbed):
    """net_tap as the host port: the client's kernel accepts what the agent delivers (the
    tap's MAC is the frames' destination), and its answers go out on leg A."""
    bed = testbed
    tap = bed.prefix + "t"
    bed.start_agent(
        "--t-reordering-us", "1000000", host_vdev=f"net_tap0,iface={tap},mac={CLIENT_MAC}"
    )
    # the tap's Rx queue has a descriptor too: the agent blocks between frames
    assert "between frames: blocking wait on the ports" in bed.stderr_path.read_text()
    ns = bed.ns_agent
    ns.add_addr(tap, "10.9.0.2/24")
    ns.run(["ip", "link", "set", tap, "up"])
    ns.run(
        ["ip", "neigh", "replace", "10.9.0.1", "lladdr", SENDER_MAC, "dev", tap, "nud", "permanent"]
    )
    with in_netns(ns.name):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind(("10.9.0.2", 5000))
        udp.settimeout(30)
        for sn in (1, 0, 3, 2, 5, 4):
            bed.send_leg(sn % 2, pdcp_frame(sn))
        got = [udp.recv(2048) for _ in range(6)]
        assert got == [bytes(Ether(inner_frame(sn))[UDP].payload) for sn in range(6)]

        drain(bed.legs[0])
        udp.sendto(b"ack from the client stack", ("10.9.0.1", 40000))
        frames = [f for f, _ in receive_ours(bed.legs[0], 1, timeout_s=30)]
        assert len(frames) == 1
        answer = Ether(frames[0])
        assert answer[IP].dst == "10.9.0.1" and answer[UDP].dport == 40000
        assert bytes(answer[UDP].payload) == b"ack from the client stack"
    finally:
        udp.close()
    final = bed.stop_agent()
    assert final["delivered_in_order"] + final["delivered_reordered"] == 6
    assert final["uplink"] >= 1 and final["tx_dropped_host"] == 0


def _cpu_s(pid: int) -> float:
    """CPU seconds `pid` has run (all threads), from schedstat."""
    times = cpu.thread_times(pid) or {}
    return sum(run for run, _wait in times.values()) / 1e9


@pytest.mark.parametrize("io", IO_PATHS)
def test_idle_agent_blocks_on_its_ports_and_wakes_on_the_next_pdu(testbed, io):
    """With nothing to do the agent blocks until a port has a frame (it slept 50 us, then
    1 ms, between looks before: 2 to 4 % of a core): under 1 % of a core while idle, and
    the next PDU, or a frame from the client, wakes it at once (AF_XDP legs too: their
    sockets are found through the kernel's socket diagnostics)."""
    testbed.start_agent("--stats-interval-ms", "0", io=io)
    assert "between frames: blocking wait on the ports" in testbed.stderr_path.read_text()
    time.sleep(0.3)
    before, t0 = _cpu_s(testbed.agent.pid), time.monotonic()
    time.sleep(2.0)
    share = (_cpu_s(testbed.agent.pid) - before) / (time.monotonic() - t0)
    assert share < 0.01, f"idle agent used {share:.1%} of a core"
    _, sent = testbed.send_leg_timed(0, pdcp_frame(0))
    got = receive_ours(testbed.client, 1, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(0)]
    # Without a wake-up from the leg it would have waited for the wait's 1 s limit.
    assert got[0][1] - sent < 0.5, f"the PDU took {got[0][1] - sent:.3f} s"


def test_blocked_agent_wakes_for_t_reordering(testbed):
    """A PDU behind a gap leaves when t-Reordering (300 ms) expires, though no frame and no
    stats line wake the blocked agent: its wait ends at the timer's deadline."""
    bed = testbed
    bed.start_agent("--t-reordering-us", "300000", "--stats-interval-ms", "0")
    time.sleep(0.3)
    before, after = bed.send_leg_timed(1, pdcp_frame(1))
    got = receive_ours(bed.client, 1, timeout_s=30)
    assert [f for f, _ in got] == [inner_frame(1)]
    earliest, latest = got[0][1] - after, got[0][1] - before
    assert (
        latest >= 0.29 and earliest < 0.8
    ), f"SN 1 left {earliest:.3f} to {latest:.3f} s after it came; t-Reordering is 0.3 s"


def test_garbage_on_both_legs_loses_no_pdu_and_memory_stays_bounded(testbed):
    """dccommon.garbage's frames on both legs (runts, past the MTU, VLAN, non-IP, PDCP cut
    inside its header, Control PDUs, bad inner ethertype, no SDU, random bytes) between the
    PDUs of a valid flow: every PDU reaches the client in order and byte-identical, each
    malformed PDCP frame is counted, the agent stays up and stops cleanly, and its RSS
    stays bounded."""
    bed = testbed
    bed.start_agent("--t-reordering-us", "60000000", "--stats-interval-ms", "50")
    rng = random.Random(1)
    dst, src = bytes.fromhex(CLIENT_MAC.replace(":", "")), bytes.fromhex("02000000b001")
    rounds, runs, count = 100, 5, 0
    refused: dict[int, str] = {}
    rss = []
    for _ in range(runs):  # the first run warms up (allocations that stay)
        for _ in range(rounds):
            # light traffic: a round (about 90 frames) at a time, its PDU awaited
            for leg in (0, 1):
                send_all(bed.legs[leg], garbage_frames(rng, dst, src), refused)
            bed.send_leg(count % 2, pdcp_frame(count))
            got = receive_ours(bed.client, 1, timeout_s=30)
            assert [f for f, _ in got] == [inner_frame(count)], f"PDU {count}"
            count += 1
        assert bed.agent.poll() is None, "the agent stopped"
        rss.append(rss_kib(bed.agent.pid))
    # runts (EINVAL) and frames past the legs' 1600-byte MTU stop in the sender's kernel
    assert all(n < 14 or n > 1600 for n in refused), refused
    final = bed.stop_agent()
    assert final["delivered_in_order"] == count and final["skipped"] == 0
    pdcp_garbage = 8  # per round and leg: cut at 0..4 header bytes, control, bad type, no SDU
    assert final["malformed"] == pdcp_garbage * 2 * rounds * runs, final["malformed_reasons"]
    growth = rss[-1] - rss[0]
    assert growth < 4096, f"the agent's RSS grew {growth} KiB: {rss} (KiB, per run)"
    print(f"agent RSS KiB per run {rss}; malformed {final['malformed_reasons']}")


def test_missing_interface_is_a_clear_error(tmp_path):
    if not AGENT.exists():
        pytest.fail(f"{AGENT} is missing: run `make hostagents-build` first")
    prefix = netns.unique_prefix("pa")
    proc = subprocess.run(
        agent_argv(AGENT, prefix, [af_packet(0, f"{prefix}none")], ["--leg-a", "0"]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # the exit code is the test
    assert proc.returncode == 1
    assert "--vdev devices came up" in proc.stderr
    assert not (Path("/var/run/dpdk") / prefix).exists()


def test_a_leg_that_refuses_xdp_is_a_clear_error(tmp_path):
    """veth refuses an XDP program when its peer's MTU leaves no room for XDP's headroom
    (9000 here): the agent stops with status 1 at once (no hang), naming the port, its
    interface and where the kernel's reason is, and the kernel's reason is there."""
    if not AGENT.exists():
        pytest.fail(f"{AGENT} is missing: run `make hostagents-build` first")
    prefix = netns.unique_prefix("pa")
    with netns.Topology() as topo:
        ns = topo.ns(prefix + "x")
        netns.veth_pair(f"{prefix}j0", ns, f"{prefix}j1", ns, mtu=9000)
        vdevs = [leg_vdev("afxdp", 0, f"{prefix}j0"), leg_vdev("afxdp", 1, f"{prefix}j1")]
        argv = agent_argv(AGENT, prefix, [*vdevs, "net_null0"], ["--host", "2"])
        proc = ns.run(argv, timeout=60, check=False)  # the exit code is the test
    assert proc.returncode == 1, proc.stderr
    assert f"cannot set up leg A port 0 (net_af_xdp on {prefix}j0)" in proc.stderr
    assert "Peer MTU is too large to set XDP" in proc.stderr
    assert not (Path("/var/run/dpdk") / prefix).exists()


def test_stats_that_cannot_be_written_stop_the_agent():
    """A full disk must not leave a run without its measurements unnoticed: the first stats
    line that cannot be written is named on stderr and the agent stops with status 1."""
    if not AGENT.exists():
        pytest.fail(f"{AGENT} is missing: run `make hostagents-build` first")
    prefix = netns.unique_prefix("pa")
    vdevs = [f"net_null{i}" for i in range(3)]  # ports without interfaces
    proc = subprocess.run(
        agent_argv(AGENT, prefix, vdevs, ["--stats", "/dev/full", "--stats-interval-ms", "10"]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # the exit code is the test
    assert proc.returncode == 1, proc.stderr
    assert (
        "pdcp-agent: error: cannot write stats to /dev/full: No space left on device; stopping"
        in proc.stderr
    )
    assert not (Path("/var/run/dpdk") / prefix).exists()


def test_a_stats_fifo_nobody_reads_is_refused_at_once(tmp_path):
    """It blocked the agent forever in open(2) before its first packet."""
    prefix = netns.unique_prefix("pa")
    os.mkfifo(tmp_path / "stats")
    vdevs = [f"net_null{i}" for i in range(3)]  # ports without interfaces
    proc = subprocess.run(
        agent_argv(AGENT, prefix, vdevs, ["--stats", str(tmp_path / "stats")]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # a hang is the failure
    assert proc.returncode == 1, proc.stderr
    assert f"--stats {tmp_path}/stats: a fifo that nobody reads (start its reader" in proc.stderr
    assert not (Path("/var/run/dpdk") / prefix).exists()


def test_a_stats_reader_that_leaves_stops_the_agent_cleanly(tmp_path):
    """The reader of a stats fifo reads one line and leaves: the next line fails with EPIPE
    (not a SIGPIPE death), and the agent stops with status 1, its EAL files removed."""
    prefix = netns.unique_prefix("pa")
    fifo = tmp_path / "stats"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # there before the agent opens it
    vdevs = [f"net_null{i}" for i in range(3)]
    argv = agent_argv(AGENT, prefix, vdevs, ["--stats", str(fifo), "--stats-interval-ms", "10"])
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        got, deadline = b"", time.monotonic() + 30
        while b"\n" not in got and time.monotonic() < deadline:  # until the agent writes
            try:
                got += os.read(reader, 4096)  # b"" until it has opened the fifo
            except BlockingIOError:
                pass
            time.sleep(0.02)
        os.close(reader)  # one stats line, then the reader leaves
        assert got.startswith(b"{"), got
        _, err = proc.communicate(timeout=60)
    finally:
        stop_process(proc)
    assert proc.returncode == 1, err
    assert f"cannot write stats to {fifo}: Broken pipe; stopping" in err
    assert not (Path("/var/run/dpdk") / prefix).exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sn-bits", "16"], "--sn-bits '16' is not allowed: use 12 or 18"),
        (["--t-reordering-us", "-5"], "--t-reordering-us '-5' is not allowed"),
        (["--uplink-leg", "c"], "--uplink-leg 'c' is not allowed: use a or b"),
        (["--host", "1"], "must be three different ports"),
        (["--host-dst-mac", "02:00"], "is not a MAC address"),
        # sscanf's %2x took a sign or a space: -1 was the byte ff
        (["--host-dst-mac", "-1:00:00:00:00:01"], "'-1:00:00:00:00:01' is not a MAC address"),
        (["--host-dst-mac", " 2:00:00:00:00:01"], "' 2:00:00:00:00:01' is not a MAC address"),
        (["--host-dst-mac", "+2:00:00:00:00:01"], "'+2:00:00:00:00:01' is not a MAC address"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
        (["--sn-bits", "12", "--initial-sn", "5000"], "--initial-sn 5000 is not allowed with"),
        (["--deep-idle-ms", "-1"], "--deep-idle-ms '-1' is not allowed: use an integer from 0"),
        (["--spin-us", "x"], "--spin-us 'x' is not allowed: use an integer from 0"),
    ],
)
def test_bad_flag_values_are_refused_before_eal(args, message):
    if not AGENT.exists():
        pytest.fail(f"{AGENT} is missing: run `make hostagents-build` first")
    proc = subprocess.run(
        [str(AGENT), "-l", "0", "--", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )  # the exit code is the test
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and "EAL:" not in proc.stderr


@pytest.mark.parametrize("io", IO_PATHS)
def test_a_leg_receives_again_after_a_gap_held_the_whole_pool(testbed, io):
    """Issue 25 at a low rate: PDUs behind a missing SN take every mbuf of the pool, then
    t-Reordering gives the gap up and frees them all. The leg must carry the next PDUs.
    On AF_XDP it did not: net_af_xdp registered only part of the pool as its UMEM, and the
    mbufs beyond it that the pool handed to a fill ring were dropped by the kernel until the
    ring was empty (hostagents/agent/mbufpool.h)."""
    bed = testbed
    bed.start_agent("--t-reordering-us", "3000000", "--stats-interval-ms", "100", io=io)
    behind_gap = 64000  # more than the 65,535-mbuf pool minus what the rings hold
    for sn in range(1, behind_gap + 1):  # SN 0 never comes
        bed.send_leg(0, pdcp_frame(sn))
    # Wait for the host queue too: the expiry queues every freed PDU at once, and sending
    # them takes a while; a drain before they are all out left old PDUs for the check below.
    bed.wait_stats(
        lambda s: s["t_reordering_expiries"] >= 1 and s["buffered"] == 0 and s["queued_host"] == 0
    )
    drain(bed.client)
    after = range(behind_gap + 1, behind_gap + 11)
    for sn in after:
        bed.send_leg(0, pdcp_frame(sn))
    got = receive_ours(bed.client, len(after), timeout_s=30)
    final = bed.stop_agent()
    stderr = bed.stderr_path.read_text(errors="replace")
    assert [f for f, _ in got] == [inner_frame(sn) for sn in after], (final, stderr[-1500:])
    # the whole pool usable: 65,535 mbufs, none outside AF_XDP's UMEM
    assert re.search(r"mbuf pool \d+ of 65535 free, .*, 0 held unused", stderr), stderr[-1500:]

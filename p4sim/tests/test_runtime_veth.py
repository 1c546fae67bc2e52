"""p4sim on real veths: the console script runs in a network namespace on two veths and
forwards a scapy-built frame by a table entry installed over P4Runtime, and drops it once
the entry is deleted.

    h0 --veth-- s0 [port 0]  p4sim  [port 1] s1 --veth-- h1      (all in one namespace)

Needs root (network namespaces). Run: .venv/bin/pytest -q p4sim/tests/test_runtime_veth.py
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from dccommon.processes import rss_kib, stop_process
from experiments.run.cpu import run_seconds, thread_times, voluntary_switches
from experiments.run.netns import Namespace, unique_prefix, veth_pair
from p4sim.p4runtime.primary import PrimarySession

pytestmark = pytest.mark.netns

HERE = Path(__file__).parent
PROGRAM = HERE / "p4" / "runtime_fwd.p4"
P4SIM = str(Path(sys.executable).parent / "p4sim")
DST = "02:00:00:00:00:02"

# Sends one frame on argv[1] and prints (as JSON hex) every frame of ethertype 0x88b5 that
# arrives on argv[2] within argv[4] seconds (0.3 s after the first one, when argv[5] is
# "early": a loaded machine gets time, duplicates still show). Runs inside the namespace.
SEND_AND_SNIFF = r"""
import json, select, socket, sys, time
send_if, recv_if, frame, wait = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]), float(sys.argv[4])
early = sys.argv[5] == "early"
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # no protocol until bound: opened
rx.bind((recv_if, 3))  # for ETH_P_ALL, it would queue every interface's frames until its bind
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((send_if, 0))
tx.send(frame)
got, deadline = [], time.monotonic() + wait
while (left := deadline - time.monotonic()) > 0:
    if select.select([rx], [], [], left)[0]:
        data, addr = rx.recvfrom(65536)
        if addr[2] != socket.PACKET_OUTGOING and data[12:14] == b"\x88\xb5":
            got.append(data.hex())
            if early:
                deadline = min(deadline, time.monotonic() + 0.3)
print(json.dumps(got))
"""


def send_and_sniff(
    ns: Namespace, send_if: str, recv_if: str, frame: bytes, wait: float, early: bool = False
) -> list[bytes]:
    argv = [sys.executable, "-c", SEND_AND_SNIFF, send_if, recv_if, frame.hex(), str(wait)]
    proc = ns.run(argv + ["early" if early else "full"], timeout=wait + 30)
    return [bytes.fromhex(h) for h in json.loads(proc.stdout)]


class P4RuntimeClient(PrimarySession):
    def __init__(self, address: str) -> None:
        super().__init__(address, ready_timeout_s=60)
        assert self.arbitration.status.code == 0
        config = self.stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=60
        ).config
        self.ids = {
            o.preamble.name: o.preamble.id
            for o in list(config.p4info.tables) + list(config.p4info.actions)
        }

    def l2_update(self, kind: int, dst_mac: str, port: int) -> None:
        update = p4runtime_pb2.Update(type=kind)
        entry = update.entity.table_entry
        entry.table_id = self.ids["FwdIngress.l2_fwd"]
        entry.match.add(field_id=1).exact.value = bytes.fromhex(dst_mac.replace(":", ""))
        entry.action.action.action_id = self.ids["FwdIngress.forward"]
        entry.action.action.params.add(param_id=1, value=bytes([port]))
        self.write(update)


@pytest.fixture(params=["interp", "native", "native-afxdp"])
def switch_ns(tmp_path, request):
    """p4sim on two veths: the interpreter, or the native engine on AF_PACKET or AF_XDP."""
    engine, _, io = request.param.partition("-")
    prefix = unique_prefix("p4rt")
    with Namespace(f"{prefix}ns") as ns:
        veth_pair("h0", ns, "s0", ns)
        veth_pair("h1", ns, "s1", ns)
        ns.disable_ipv6()
        sock = f"unix:{tmp_path}/p4rt.sock"
        argv = [
            P4SIM,
            str(PROGRAM),
            "-i",
            "0@s0",
            "-i",
            "1@s1",
            "--grpc-server-addr",
            sock,
            "--pcap-dir",
            str(tmp_path / "pcap"),
            "--engine",
            engine,  # native: the pipeline and the packet I/O in C (p4sim/native)
            *(["--io", io] if io else []),
        ]
        with open(tmp_path / "p4sim.log", "w") as log:
            proc = ns.popen(argv, stdout=log, stderr=log)  # the child keeps its own copy
        yield ns, sock, tmp_path, proc


def test_forwards_by_p4runtime_entry_and_drops_after_delete(switch_ns):
    ns, sock, tmp_path, proc = switch_ns
    client = P4RuntimeClient(sock)
    try:
        frame = bytes(Ether(dst=DST, src="02:00:00:00:00:01", type=0x88B5) / Raw(b"p4sim" * 20))
        assert send_and_sniff(ns, "h0", "h1", frame, wait=1.0) == []  # no entry: dropped
        client.l2_update(p4runtime_pb2.Update.INSERT, DST, port=1)
        assert send_and_sniff(ns, "h0", "h1", frame, wait=60.0, early=True) == [frame]
        client.l2_update(p4runtime_pb2.Update.DELETE, DST, port=1)
        assert send_and_sniff(ns, "h0", "h1", frame, wait=1.0) == []
    finally:
        client.close()
    assert stop_process(proc, grace_s=120) == 0  # p4sim says its counters as it stops
    log = (tmp_path / "p4sim.log").read_text()
    # Three frames in on port 0, one out on port 1, on both engines (native: counted in C).
    n = len(frame)
    assert (
        f"counters: port 0 rx 3 frames {3 * n} bytes, tx 0 frames 0 bytes; "
        f"port 1 rx 0 frames 0 bytes, tx 1 frames {n} bytes; "
        "packet_in 0, packet_out 0, dropped without a pipeline 0"
    ) in log, log
    assert "Traceback" not in log
    assert "offloads on" not in log  # veth_pair turned them off; p4sim checked
    assert "runs on the interpreter" not in log  # --engine native ran it natively
    from p4sim.io.pcap import read_pcap

    assert read_pcap(tmp_path / "pcap" / "1-out.pcap") == [frame]


def test_offloads_on_are_reported_with_the_fix():
    """A veth left with offloads on gets a warning naming the exact ethtool command."""
    with Namespace(f"{unique_prefix('p4of')}ns") as ns:
        veth_pair("on0", ns, "on1", ns, offloads=True)
        veth_pair("off0", ns, "off1", ns)
        script = (
            "import json; from p4sim.io import offload_warnings; "
            "print(json.dumps([offload_warnings('on0'), offload_warnings('off0')]))"
        )
        on, off = json.loads(ns.run([sys.executable, "-c", script]).stdout)
    assert off == []
    assert len(on) == 1 and "ethtool -K on0 tx off tso off gso off gro off" in on[0]


def test_native_io_sends_cpu_port_frames_up_as_packet_in(tmp_path):
    """--engine native: a frame the C data path sends to the CPU port reaches the
    controller as a PacketIn (the up-call path of p4sim/native/io.c), with its metadata.
    Before it, the idle switch sleeps: its up-call thread waits for the next frame instead
    of waking every 10 ms (120 wake-ups/s in all before; about 16 now, gRPC's timers)."""
    with Namespace(f"{unique_prefix('p4pi')}ns") as ns:
        veth_pair("h0", ns, "s0", ns)
        veth_pair("h1", ns, "s1", ns)
        ns.disable_ipv6()
        sock = f"unix:{tmp_path}/p4rt.sock"
        argv = [P4SIM, str(PROGRAM), "-i", "0@s0", "-i", "1@s1", "--cpu-port", "64",
                "--grpc-server-addr", sock, "--engine", "native"]  # fmt: skip
        with open(tmp_path / "p4sim.log", "w") as log:
            proc = ns.popen(argv, stdout=log, stderr=log)
        client = P4RuntimeClient(sock)
        try:
            req = p4runtime_pb2.WriteRequest(device_id=0)
            req.election_id.low = 1
            entry = req.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry
            entry.table_id = client.ids["FwdIngress.l2_fwd"]
            entry.match.add(field_id=1).exact.value = bytes.fromhex(DST.replace(":", ""))
            entry.action.action.action_id = client.ids["FwdIngress.send_to_cpu"]
            client.stub.Write(req, timeout=60)
            time.sleep(1.0)  # the idle up-call wait starts at the first call without frames
            wakeups0, t0 = voluntary_switches(proc.pid), time.monotonic()
            time.sleep(2.0)
            idle_wakeups = (voluntary_switches(proc.pid) - wakeups0) / (time.monotonic() - t0)
            frame = bytes(Ether(dst=DST, src="02:00:00:00:00:01", type=0x88B5) / Raw(b"up" * 30))
            got: queue.Queue = queue.Queue()
            threading.Thread(
                target=lambda: got.put(
                    next(m for m in client.stream if m.WhichOneof("update") == "packet")
                ),
                daemon=True,
            ).start()
            ns.run([sys.executable, "-c", SEND_ONLY, "h0", frame.hex()])
            msg = got.get(timeout=30)  # queue.Empty: no PacketIn arrived
        finally:
            client.close()
        assert stop_process(proc, grace_s=120) == 0
    assert idle_wakeups < 60, f"the idle switch woke {idle_wakeups:.0f} times a second"
    assert msg.packet.payload == frame
    assert {m.metadata_id: m.value for m in msg.packet.metadata} == {1: b"\x00", 2: b"\x00"}
    log = (tmp_path / "p4sim.log").read_text()
    assert "runs on the interpreter" not in log
    assert f"counters: port 0 rx 1 frames {len(frame)} bytes, tx 0 frames 0 bytes;" in log, log
    assert "packet_in 1, packet_out 0" in log, log


SEND_ONLY = r"""
import socket, sys
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((sys.argv[1], 0))
tx.send(bytes.fromhex(sys.argv[2]))
"""


# Opens a native port on argv[1] argv[3] times; each time sends one frame from its peer
# argv[2] and, once the port counted it (its ring is FIFO: anything taken in before it is
# counted by then), prints how many frames the port took in.
OPEN_NATIVE_PORT = r"""
import socket, sys, time
from p4sim.native.ports import NativePorts
port_if, peer_if, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((peer_if, 0))
frame = bytes.fromhex("02000000000202000000000188b5") + b"marker" * 10
for _ in range(times):
    ports = NativePorts({0: port_if})
    ports.start(lambda port, data: None)
    tx.send(frame)
    deadline = time.monotonic() + 30
    while ports.port_stats()[0][0] == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    print(ports.port_stats()[0][0], flush=True)
    ports.close()
"""

# Sends frames on argv[1] as fast as it can, for at most argv[2] seconds.
FLOOD = r"""
import socket, sys, time
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((sys.argv[1], 0))
frame = bytes.fromhex("02000000000402000000000388b5") + b"flood" * 10
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    for _ in range(100):
        tx.send(frame)
"""


def test_afxdp_on_a_veth_that_refuses_xdp_is_a_clear_error(tmp_path):
    """veth refuses an XDP program while its peer's MTU leaves no room for XDP's headroom:
    p4sim --engine native --io afxdp says so in one line naming the interface (exit 1), at
    once rather than hanging."""
    with Namespace(f"{unique_prefix('p4rt')}ns") as ns:
        veth_pair("h0", ns, "s0", ns, mtu=9000)
        argv = [P4SIM, "--no-p4", "-i", "0@s0", "--engine", "native", "--io", "afxdp",
                "--grpc-server-addr", f"unix:{tmp_path}/p4rt.sock"]  # fmt: skip
        proc = ns.run(argv, check=False, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "AF_XDP socket on s0: Numerical result out of range: the driver refused XDP" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_native_port_takes_in_only_its_own_interface_frames():
    """A native port's packet socket takes in its own interface's frames only, also while it
    is being opened. Opened for ETH_P_ALL before its bind, it took every interface's frames
    in the namespace (another port's, the loopback's P4Runtime traffic) into its ring for the
    time its ring took to set up, and the switch handled them as frames of that port."""
    with Namespace(f"{unique_prefix('p4ob')}ns") as ns:
        veth_pair("h0", ns, "s0", ns)
        veth_pair("h1", ns, "s1", ns)
        ns.disable_ipv6()
        flood = ns.popen([sys.executable, "-c", FLOOD, "h1", "120"])  # s1 receives nonstop
        try:
            taken = ns.run([sys.executable, "-c", OPEN_NATIVE_PORT, "s0", "h0", "10"], timeout=120)
            flooding = flood.poll() is None
        finally:
            stop_process(flood)
    assert flooding, "the flood ended before the port was opened for the last time"
    assert taken.stdout.split() == ["1"] * 10  # the one frame sent to it, each time


def test_port_down_and_up_again_forwards_and_does_not_spin(switch_ns):
    """An interface going down sets an error on its packet socket that stays until read: the
    I/O loop must clear it (not wake on it forever, a core at 100 %) and forward again once
    the interface is up."""
    ns, sock, tmp_path, proc = switch_ns
    client = P4RuntimeClient(sock)
    try:
        client.l2_update(p4runtime_pb2.Update.INSERT, DST, port=1)
        ns.run(["ip", "link", "set", "s0", "down"])
        ns.run(["ip", "link", "set", "s0", "up"])
        frame = bytes(Ether(dst=DST, src="02:00:00:00:00:01", type=0x88B5) / Raw(b"up" * 40))
        assert send_and_sniff(ns, "h0", "h1", frame, wait=60.0, early=True) == [frame]
        before, start = thread_times(proc.pid), time.monotonic()
        time.sleep(2.0)
        busy = run_seconds(before, thread_times(proc.pid)) / (time.monotonic() - start)
        assert busy < 0.25, f"p4sim used {busy:.0%} of a core while idle after a port bounce"
    finally:
        client.close()
    assert stop_process(proc, grace_s=120) == 0
    assert "Traceback" not in (tmp_path / "p4sim.log").read_text()


# Sends argv[3] rounds, each one valid frame (ethertype 0x88b5, its round number inside)
# and then a round of dccommon.garbage's frames, on argv[1]; prints as JSON the valid frames
# that arrived on argv[2] (within 30 s, or 2 s after the last of them) and the garbage
# lengths the kernel refused. argv[1] has a 9000-byte MTU, its peer (the switch's) 1500.
SEND_GARBAGE = r"""
import json, random, select, socket, struct, sys, time
from dccommon.garbage import garbage_frames, send_all
send_if, recv_if, rounds, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
dst, src = bytes.fromhex("020000000002"), bytes.fromhex("020000000001")
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
rx.bind((recv_if, 3))
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind((send_if, 0))
refused, valid = {}, []
def take(wait):
    while select.select([rx], [], [], wait)[0]:
        data, addr = rx.recvfrom(65536)
        if addr[2] != socket.PACKET_OUTGOING and data[12:19] == b"\x88\xb5valid":
            valid.append(data.hex())
        wait = 0
for i in range(rounds):
    tx.send(dst + src + b"\x88\xb5valid" + struct.pack("!I", i) + b"v" * 50)
    send_all(tx, garbage_frames(rng, dst, src), refused)
    take(0.001)  # light traffic: about 40 frames a millisecond at most
deadline = time.monotonic() + 30
while len(valid) < rounds and time.monotonic() < deadline:
    take(0.1)
take(2.0)
print(json.dumps({"valid": valid, "refused": refused}))
"""


@pytest.mark.parametrize("switch_ns", ["interp", "native"], indirect=True)
def test_garbage_frames_lose_no_valid_frame_and_memory_stays_bounded(switch_ns):
    """Runts, frames past the MTU, VLAN-tagged, non-IP, truncated IPv4 and random bytes,
    interleaved with a valid flow: every valid frame arrives intact and in order, the switch
    stays up (it still forwards and stops cleanly) and its memory stays bounded."""
    ns, sock, tmp_path, proc = switch_ns
    ns.run(["ip", "link", "set", "h0", "mtu", "9000"])  # s0 stays at 1500
    client = P4RuntimeClient(sock)
    rounds, runs = 200, 4
    try:
        client.l2_update(p4runtime_pb2.Update.INSERT, DST, port=1)
        rss = []
        for seed in range(1, runs + 2):  # the first run warms up (allocations that stay)
            argv = [sys.executable, "-c", SEND_GARBAGE, "h0", "h1", str(rounds), str(seed)]
            got = json.loads(ns.run(argv, timeout=120).stdout)
            expected = [
                bytes.fromhex("02000000000202000000000188b5") + b"valid"
                + i.to_bytes(4, "big") + b"v" * 50
                for i in range(rounds)
            ]  # fmt: skip
            assert [bytes.fromhex(h) for h in got["valid"]] == expected
            assert proc.poll() is None, "p4sim stopped"
            # runts (EINVAL) and frames past the peer's MTU (ENOBUFS) stop in the kernel;
            # all the others reached the switch
            assert all(int(n) < 14 or int(n) > 1518 for n in got["refused"]), got["refused"]
            rss.append(rss_kib(proc.pid))
        frame = bytes(Ether(dst=DST, src="02:00:00:00:00:01", type=0x88B5) / Raw(b"after" * 9))
        assert send_and_sniff(ns, "h0", "h1", frame, wait=60.0, early=True) == [frame]
    finally:
        client.close()
    assert stop_process(proc, grace_s=120) == 0
    log = (tmp_path / "p4sim.log").read_text()
    assert "Traceback" not in log
    # 4 runs of 200 rounds, about 50 frames each: a leak of 10 bytes a frame would show.
    growth = rss[-1] - rss[0]
    assert growth < 4096, f"p4sim's RSS grew {growth} KiB over {runs * rounds} rounds: {rss}"
    print(f"garbage: refused by the kernel {got['refused']}; RSS KiB per run {rss}")

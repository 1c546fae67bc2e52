"""End to end: the controller and dcctl against a real switch, parametrized by target:

- p4sim: compiled dc_splitter.p4, its P4Runtime server on loopback, in-process ports;
- bmv2: simple_switch_grpc started with --no-p4 on veths (switch side in this namespace, the
  test's side in a namespace of its own), the pipeline p4c-bm2-ss compiled pushed by the
  controller, gRPC and Thrift on free loopback ports.

Frames are injected and collected per port. BMv2 needs root; SKIP_BMV2=1 leaves it out.
Run: .venv/bin/pytest controlplane/tests/test_controlplane_e2e.py
"""

import os
import shutil
import struct
import subprocess
import threading
from pathlib import Path
from typing import NamedTuple

import pytest

from controlplane import bmv2, targets
from controlplane.cli import main as dcctl
from controlplane.model import UserConfig
from controlplane.pdcp import sn_of
from controlplane.splitter import Splitter
from dccommon.ports import free_ports
from dccommon.processes import stop_process
from experiments.run.netns import Namespace, in_netns, offloads_off, run, unique_prefix
from p4sim.io import InProcessPorts
from p4sim.io.afpacket import AfPacketPorts
from p4sim.p4runtime.server import P4RuntimeServer
from p4sim.switch import Switch

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "dc_splitter.p4"
PORTS = (0, 1, 2)
LEG_MTU = 1600


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(p4info, config) from `p4sim compile`, as `make p4` produces them."""
    return targets.p4sim_compile(PROGRAM, tmp_path_factory.mktemp("p4"))


@pytest.fixture(scope="module")
def compiled_bmv2(tmp_path_factory):
    """(p4info, BMv2 JSON) from the real p4c, as `make p4c-bmv2` produces them."""
    bmv2.require()
    out = tmp_path_factory.mktemp("p4c")
    p4info, config = out / "dc.p4info.txtpb", out / "dc.json"
    proc = subprocess.run(
        [shutil.which("p4c-bm2-ss"), "--Werror", "--p4runtime-files", str(p4info)]
        + ["-o", str(config), str(PROGRAM)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return p4info, config


class Target(NamedTuple):
    sw: Splitter  # connected, pipeline pushed, ports configured
    ports: object  # inject(port, frame), wait_for(count, timeout)
    addr: str  # its P4Runtime address
    pipeline: tuple[Path, Path]  # (P4Info, device config) this target takes


@pytest.fixture(params=bmv2.suite_targets())
def target(request):
    """The splitter on each target."""
    if request.param == "p4sim":
        yield from p4sim_target(request.getfixturevalue("compiled"))
    else:
        yield from bmv2_target(request.getfixturevalue("compiled_bmv2"))


def p4sim_target(compiled, cpu_port: int | None = None):
    """p4sim in this process (ports in memory), the splitter pushed and its ports set."""
    ports = InProcessPorts(list(PORTS))
    switch = Switch(ports, cpu_port=cpu_port)
    switch.start()
    server = P4RuntimeServer(switch, "127.0.0.1:0")
    server.start()
    try:
        with Splitter.connect(server.address) as sw:
            sw.push_pipeline(*compiled)
            sw.configure_ports(0, 1, 2)
            yield Target(sw, ports, server.address, compiled)
    finally:
        server.stop()
        switch.close()


class VethPorts:
    """The test's side of the switch's veths (in namespace `ns`): `inject(port, frame)` sends
    into the switch port, `wait_for(n, timeout)` collects what the switch sent, per arrival."""

    def __init__(self, ns: Namespace, ifaces: dict[int, str]):
        with in_netns(ns.name):  # packet sockets stay in the namespace they were opened in
            self._io = AfPacketPorts(ifaces)
        self._sent: list[tuple[int, bytes]] = []
        self._cond = threading.Condition()
        self._io.start(self._received)

    def _received(self, port: int, frame: bytes) -> None:
        with self._cond:
            self._sent.append((port, frame))
            self._cond.notify_all()

    def inject(self, port: int, frame: bytes) -> None:
        self._io.send(port, frame)

    def wait_for(self, count: int, timeout: float) -> list[tuple[int, bytes]]:
        with self._cond:
            self._cond.wait_for(lambda: len(self._sent) >= count, timeout)
            sent, self._sent = self._sent, []
        return sent

    def close(self) -> None:
        self._io.close()


def bmv2_target(compiled):
    if os.geteuid() != 0:
        raise RuntimeError("the BMv2 end-to-end tests need root (veths, namespaces)")
    prefix = unique_prefix("cb")
    grpc_port, thrift_port = free_ports(2)
    grpc_addr = f"127.0.0.1:{grpc_port}"
    with Namespace(prefix) as ns:
        ns.disable_ipv6()
        for port in PORTS:
            sw_if, test_if = f"{prefix}s{port}", f"{prefix}p{port}"
            run(
                ["ip", "link", "add", sw_if, "mtu", str(LEG_MTU), "type", "veth"]
                + ["peer", "name", test_if, "mtu", str(LEG_MTU), "netns", ns.name]
            )
            run(["sysctl", "-q", "-w", f"net.ipv6.conf.{sw_if}.disable_ipv6=1"])
            run(["ip", "link", "set", sw_if, "up"])
            ns.run(["ip", "link", "set", test_if, "up"])
            offloads_off(sw_if)
            offloads_off(test_if, netns=ns.name)
        argv = targets.bmv2_argv({p: f"{prefix}s{p}" for p in PORTS}, grpc_addr, thrift_port)
        switch = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        ports = VethPorts(ns, {p: f"{prefix}p{p}" for p in PORTS})
        try:
            with Splitter.connect(
                grpc_addr, timeout_s=30, thrift_addr=f"127.0.0.1:{thrift_port}"
            ) as sw:
                sw.push_pipeline(*compiled)
                sw.configure_ports(0, 1, 2)
                yield Target(sw, ports, grpc_addr, compiled)
        finally:
            ports.close()
            stop_process(switch, grace_s=10)


def frame(dst: str, seq: int) -> bytes:
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        28,
        seq,
        0,
        64,
        17,
        0,
        bytes([10, 0, 0, 1]),
        bytes(int(x) for x in dst.split(".")),
    )
    udp = struct.pack("!HHHH", 4433, 5555, 8, 0)
    return bytes.fromhex("0200000000fe020000000001") + b"\x08\x00" + ip + udp


def legs(ports: InProcessPorts) -> list[tuple[int, int]]:
    """(port, SN) of every DC frame an in-process switch sent since the last call, in order."""
    return [(port, sn_of(data)) for port, data in ports.collect()]


def legs_per_port(ports, count: int) -> dict[int, list[int]]:
    """{port: [SN, ...]} of the next `count` DC frames the switch sent, in order per port
    (frames of different ports may arrive in any order from a switch on veths)."""
    out: dict[int, list[int]] = {}
    sent = ports.wait_for(count, timeout=30)
    assert len(sent) == count, f"expected {count} frames, got {len(sent)}"
    for port, data in sent:
        out.setdefault(port, []).append(sn_of(data))
    return out


def test_split_then_live_changes_keep_the_sn(target):
    sw, ports = target.sw, target.ports
    sw.add_user(UserConfig(addr="10.0.0.2", batch=10, ratio=(7, 3), name="ue1"))
    for i in range(10):
        ports.inject(0, frame("10.0.0.2", i))
    assert legs_per_port(ports, 10) == {1: list(range(7)), 2: [7, 8, 9]}
    sw.set_user("ue1", batch=4, ratio="1:1")
    sw.set_user("ue1", dup=True)
    ports.inject(0, frame("10.0.0.2", 10))
    assert legs_per_port(ports, 2) == {1: [10], 2: [10]}
    sw.set_user("ue1", dup=False)
    for i in range(11, 15):
        ports.inject(0, frame("10.0.0.2", i))
    assert legs_per_port(ports, 4) == {1: [11, 12], 2: [13, 14]}
    # p4sim reads registers over P4Runtime, BMv2 over its Thrift runtime (PI issue 376)
    assert sw.user_registers("ue1") == {"next_sn": 15, "batch_pos": 0}
    stats = sw.stats()
    assert stats["users"]["10.0.0.2"]["packets"] == 15
    assert stats["ports"]["leg_a"]["tx_packets"] == 10
    assert stats["ports"]["leg_b"]["tx_packets"] == 6


def test_users_read_back_and_reset(target):
    sw = target.sw
    sw.add_user(UserConfig(addr="10.0.0.2", mode="dc-dup", batch=100, ratio="9:1", name="ue1"))
    sw.add_user(UserConfig(addr="2001:db8::2", mode="sc", port=2, name="ue6"))
    assert [(u.name, u.mode, u.k) for u in sw.users()] == [("ue1", "dc-dup", 90), ("ue6", "sc", 50)]
    sw.reset()
    assert sw.users() == []


def test_dcctl_against_p4sim(target, capsys):
    ports, addr = target.ports, target.addr
    assert (
        dcctl(
            [
                "--grpc-addr",
                addr,
                "--election-id",
                "5",
                "apply",
                str(ROOT / "controlplane" / "examples" / "testbed.yaml"),
            ]
        )
        == 0
    )
    assert (
        dcctl(["--grpc-addr", addr, "--election-id", "5", "user", "set", "ue1", "--ratio", "100%"])
        == 0
    )
    ports.inject(0, frame("10.0.0.2", 0))
    ports.inject(0, frame("10.0.0.3", 1))  # sc user ue2 on port 1: unchanged
    sent = ports.wait_for(2, timeout=30)
    assert [p for p, _ in sent] == [1, 1]
    assert sent[1][1] == frame("10.0.0.3", 1)
    capsys.readouterr()
    assert dcctl(["--grpc-addr", addr, "--election-id", "5", "--json", "stats"]) == 0
    assert '"packets": 1' in capsys.readouterr().out


def test_push_says_what_it_replaced(target, capsys):
    """A push discards the running pipeline's users and port rules: dcctl names them."""
    sw, addr = target.sw, target.addr
    sw.add_user(UserConfig(addr="10.0.0.2", name="ue1"))
    p4info, config = target.pipeline
    argv = ["--grpc-addr", addr, "--election-id", "2", "push", "--p4info", str(p4info)]
    argv += ["--config", str(config)]
    assert dcctl(argv) == 0
    out = capsys.readouterr().out
    assert "it replaced the running pipeline and removed 1 user(s): ue1 (10.0.0.2)" in out
    assert "port rule(s)" in out
    assert sw.users() == []  # what the message said is what happened
    assert dcctl(argv) == 0
    assert "which held no users or port rules" in capsys.readouterr().out

"""End to end: the controller and dcctl against a real p4sim (compiled dc_splitter.p4, its
P4Runtime server on loopback, in-process ports), frames injected and collected in memory.

Run: .venv/bin/pytest controlplane/tests/test_controlplane_p4sim_e2e.py
"""

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from controlplane.cli import main as dcctl
from controlplane.splitter import Splitter, UserConfig
from p4sim.io import InProcessPorts
from p4sim.p4runtime.server import P4RuntimeServer
from p4sim.switch import Switch

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "dc_splitter.p4"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(p4info, config) from `p4sim compile`, as `make p4` produces them."""
    out = tmp_path_factory.mktemp("p4")
    p4info, config = out / "dc.p4info.txtpb", out / "dc.p4sim.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "p4sim.cli",
            "compile",
            str(PROGRAM),
            "--p4runtime-files",
            str(p4info),
            "-o",
            str(config),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return p4info, config


@pytest.fixture
def target(compiled):
    ports = InProcessPorts([0, 1, 2])
    switch = Switch(ports)
    switch.start()
    server = P4RuntimeServer(switch, "127.0.0.1:0")
    server.start()
    try:
        with Splitter.connect(server.address) as sw:
            sw.push_pipeline(*compiled)
            sw.configure_ports(0, 1, 2)
            yield sw, ports, server.address
    finally:
        server.stop()
        switch.close()


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
    """(port, SN) of every DC frame sent since the last call."""
    out = []
    for port, data in ports.collect():
        assert data[12:14] == b"\x88\xb5"
        out.append((port, ((data[14] & 3) << 16) | (data[15] << 8) | data[16]))
    return out


def test_split_then_live_changes_keep_the_sn(target):
    sw, ports, _ = target
    sw.add_user(UserConfig(addr="10.0.0.2", batch=10, ratio=(7, 3), name="ue1"))
    for i in range(10):
        ports.inject(0, frame("10.0.0.2", i))
    assert legs(ports) == [(1, i) for i in range(7)] + [(2, i) for i in range(7, 10)]
    sw.set_user("ue1", batch=4, ratio="1:1")
    sw.set_user("ue1", dup=True)
    ports.inject(0, frame("10.0.0.2", 10))
    assert sorted(legs(ports)) == [(1, 10), (2, 10)]
    sw.set_user("ue1", dup=False)
    for i in range(11, 15):
        ports.inject(0, frame("10.0.0.2", i))
    assert legs(ports) == [(1, 11), (1, 12), (2, 13), (2, 14)]
    assert sw.user_registers("ue1") == {"next_sn": 15, "batch_pos": 0}
    stats = sw.stats()
    assert stats["users"]["10.0.0.2"]["packets"] == 15
    assert stats["ports"]["leg_a"]["tx_packets"] == 10
    assert stats["ports"]["leg_b"]["tx_packets"] == 6


def test_users_read_back_and_reset(target):
    sw, _, _ = target
    sw.add_user(UserConfig(addr="10.0.0.2", mode="dc-dup", batch=100, ratio="9:1", name="ue1"))
    sw.add_user(UserConfig(addr="2001:db8::2", mode="sc", port=2, name="ue6"))
    assert [(u.name, u.mode, u.k) for u in sw.users()] == [("ue1", "dc-dup", 90), ("ue6", "sc", 50)]
    sw.reset()
    assert sw.users() == []


def test_dcctl_against_p4sim(target, capsys):
    _sw, ports, addr = target
    assert (
        dcctl(
            [
                "--addr",
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
        dcctl(["--addr", addr, "--election-id", "5", "user", "set", "ue1", "--ratio", "100%"]) == 0
    )
    ports.inject(0, frame("10.0.0.2", 0))
    ports.inject(0, frame("10.0.0.3", 1))  # sc user ue2 on port 1: unchanged
    sent = ports.collect()
    assert [p for p, _ in sent] == [1, 1]
    assert sent[1][1] == frame("10.0.0.3", 1)
    capsys.readouterr()
    assert dcctl(["--addr", addr, "--election-id", "5", "--json", "stats"]) == 0
    assert '"packets": 1' in capsys.readouterr().out


def test_push_says_what_it_replaced(target, compiled, capsys):
    """A push discards the running pipeline's users and port rules: dcctl names them."""
    sw, _, addr = target
    sw.add_user(UserConfig(addr="10.0.0.2", name="ue1"))
    p4info, config = compiled
    argv = ["--addr", addr, "--election-id", "2", "push", "--p4info", str(p4info)]
    argv += ["--config", str(config)]
    assert dcctl(argv) == 0
    out = capsys.readouterr().out
    assert "it replaced the running pipeline and removed 1 user(s): ue1 (10.0.0.2)" in out
    assert "port rule(s)" in out
    assert sw.users() == []  # what the message said is what happened
    assert dcctl(argv) == 0
    assert "which held no users or port rules" in capsys.readouterr().out

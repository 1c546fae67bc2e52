"""AF_XDP against AF_PACKET (experiments/ratebench/iopaths.py): the AF_XDP forwarder
(xskfwd.c) carries every frame intact through veths both ways and names a bad interface in
one line; the bench's reduction compares the two paths within each run.

    .venv/bin/python -m pytest -q experiments/tests/test_exp_iopaths.py
"""

import os
import socket
import time
from types import SimpleNamespace

import pytest

from dccommon.processes import stop_process
from experiments.ratebench import iopaths, rawpath
from experiments.run import netns
from experiments.run.netns import Topology, unique_prefix

XSKFWD = iopaths.PATHS["af_xdp"]
SOL_PACKET, PACKET_IGNORE_OUTGOING = 263, 23
HEADER = bytes.fromhex("020000000002" "020000000001" "88b5")
FRAMES = 300


def l2_socket(ns: str, ifname: str) -> socket.socket:
    sock = netns.l2_socket(ns, ifname)
    sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)  # only what arrives
    sock.settimeout(30)  # a deadline for frames that come at once unless the machine is loaded
    return sock


def frames(direction: int) -> list[bytes]:
    """FRAMES frames of random content, 60 to 1,514 bytes, each numbered."""
    return [
        HEADER + bytes([direction]) + i.to_bytes(4, "big") + os.urandom(41 + i * 4 % 1455)
        for i in range(FRAMES)
    ]


def carry(tx: socket.socket, rx: socket.socket, sent: list[bytes]) -> list[bytes]:
    for frame in sent:
        tx.send(frame)
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < len(sent) and time.monotonic() < deadline:
        try:
            frame = rx.recv(2048)
        except TimeoutError:
            break
        if frame.startswith(HEADER):
            got.append(frame)
    return got


@pytest.fixture
def one_hop(tmp_path):
    """xskfwd between two veths whose other ends are in one namespace."""
    p = unique_prefix("xt")
    with Topology() as topo:
        gen = topo.ns(f"{p}g")
        gen.disable_ipv6()
        [proc] = rawpath.forwarder_chain(topo, p, gen, gen, XSKFWD, tmp_path, hops=1)
        yield gen, f"{p}l0a", f"{p}l1b", proc, tmp_path / "xskfwd0.log"


@pytest.mark.netns
def test_xskfwd_carries_every_frame_intact_both_ways_in_copy_mode(one_hop):
    gen, end_a, end_b, proc, log = one_hop
    assert "(XDP in the driver, copy mode)" in log.read_text()  # veth has no zero-copy
    a, b = l2_socket(gen.name, end_a), l2_socket(gen.name, end_b)
    for tx, rx, direction in ((a, b, 0), (b, a, 1)):
        sent = frames(direction)
        got = carry(tx, rx, sent)
        assert len(got) == FRAMES
        assert got == sent  # every byte, in order
    stop_process(proc, grace_s=30)  # its count is written as it exits: no SIGKILL
    assert '"frames": 600, ' in log.read_text()


@pytest.mark.netns
def test_xskfwd_names_a_bad_interface_in_one_line(one_hop):
    gen, end_a, _, _, _ = one_hop
    cases = {
        ("nosuchif0", end_a): "xskfwd: nosuchif0: no such interface here\n",
        (end_a, "x" * 20): f"xskfwd: {'x' * 20}: no such interface here\n",
        ("lo", end_a): "xskfwd: lo: no XDP in its driver (veth has it)\n",
    }
    for args, message in cases.items():
        res = gen.run([str(XSKFWD), *args], check=False, timeout=10)
        assert (res.returncode, res.stderr) == (1, message)
    res = gen.run([str(XSKFWD), end_a], check=False, timeout=10)
    assert (res.returncode, res.stderr) == (2, "usage: xskfwd IF_A IF_B\n")


@pytest.mark.netns
def test_both_paths_deliver_a_paced_load_and_count_its_cpu(tmp_path):
    args = SimpleNamespace(rates_kpps=[5.0], duration_s=0.3, hops=1)
    for path in iopaths.PATHS:
        paced, flood = iopaths.run_path(path, args, tmp_path)
        assert paced.sent == 1500
        assert paced.received >= 1485  # all on a quiet machine; a starved hop may lose a few
        assert 0 < paced.us_per_frame_hop() < 1000 and paced.wakeups > 0
        assert flood.received > 0 and flood.label == "max"


@pytest.mark.netns
def test_tcp_crosses_three_af_xdp_hops(tmp_path):
    raw = rawpath.measure(1.0, tmp_path, XSKFWD)
    assert raw.goodput_mbit > 1  # TCP got through (0 if broken); its rate is the benchmark's
    assert len(raw.hop_us_per_frame) == 3 and all(u > 0 for u in raw.hop_us_per_frame)


def test_bad_options_are_refused_naming_the_allowed_values(capsys):
    for argv, message in (
        (["--hops", "9"], "argument --hops: hops 9 is out of range (allowed 1..8)"),
        (["--repeat", " 12 "], "repeat ' 12 ' is not a whole number (allowed 1..20)"),
        (["--rates-kpps", "20, 80"], "'20, 80': expected comma-separated numbers above 0"),
        (["--duration-s", "-1"], "seconds '-1' must be a number from 0 to 600"),
        (["--tcp-s", "١٠"], "seconds '١٠' must be a number from 0 to 600"),
        (["--duration-s", "0"], "--duration-s: expected seconds above 0"),
        (["--rates-kpps", "fast"], "expected comma-separated numbers above 0 up to 1000"),
        (["--json", "/nonexistent/x.json"], "--json /nonexistent/x.json: its folder /nonexistent"),
        (["--json", "/"], "--json /: is a directory (expected a file name)"),
    ):
        with pytest.raises(SystemExit):
            iopaths.main(argv)
        assert message in capsys.readouterr().err


def _load(path: str, us: float, kpps: float, offered: float = 80e3) -> iopaths.Load:
    seconds, frames = 1.0, int(kpps * 1000)
    cpu = us * frames * 3 / 1e6
    return iopaths.Load(path, offered, frames, frames, seconds, [cpu / 3] * 3, 0.0, 0.1, 0)


def test_summary_gives_each_paths_range_and_their_ratio_within_each_run():
    runs = [
        [_load("af_packet", 3.0, 80), _load("af_xdp", 1.5, 80)],
        [_load("af_packet", 4.0, 80), _load("af_xdp", 2.4, 80)],
    ]
    lines = iopaths.summary(runs)
    assert lines == [
        "80 kpps  af_packet  CPU per frame per hop 3.00 to 4.00 us, 80.0 kpps out, drops 0",
        "80 kpps  af_xdp     CPU per frame per hop 1.50 to 2.40 us, 80.0 kpps out, drops 0",
        "80 kpps  ratio      AF_XDP / AF_PACKET, same run: CPU per frame 0.50 to 0.60, rate 1.00",
    ]

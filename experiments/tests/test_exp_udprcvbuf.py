"""clib/udprcvbuf, the LD_PRELOAD library behind ngtcp2's `udp_rcvbuf: large`: a child process
started under it gets UDP sockets with the buffer asked for (SO_RCVBUFFORCE: root), its other
sockets and a child without the variable keep the kernel's default, and a bad value is named.

    .venv/bin/python -m pytest -q experiments/tests/test_exp_udprcvbuf.py
"""

import json
import os
import subprocess
import sys

import pytest

from experiments.flows.ngtcp2 import UDPRCVBUF_LIB

ASKED = 4 * 1024 * 1024  # above net.core.rmem_max's usual 208 KiB: only the FORCE form reaches it

# The child opens an IPv4 and an IPv6 UDP socket (one non-blocking, as QUIC programs do) and a
# TCP one, and prints the receive buffer of each as the kernel reports it.
CHILD = """
import json, socket
def rcvbuf(family, kind):
    with socket.socket(family, kind) as s:
        return s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
print(json.dumps({
    "udp4": rcvbuf(socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK),
    "udp6": rcvbuf(socket.AF_INET6, socket.SOCK_DGRAM),
    "tcp": rcvbuf(socket.AF_INET, socket.SOCK_STREAM),
}))
"""

if os.geteuid() != 0:
    raise RuntimeError("udprcvbuf tests need root (SO_RCVBUFFORCE); run as root")


def run_child(env: dict[str, str], preload: bool = True) -> tuple[dict, str]:
    if not UDPRCVBUF_LIB.exists():
        raise RuntimeError(f"{UDPRCVBUF_LIB} is missing: run `make build`")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DC_UDP_", "LD_PRELOAD"))}
    extra = {"LD_PRELOAD": str(UDPRCVBUF_LIB)} if preload else {}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**clean, **extra, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(proc.stdout), proc.stderr


@pytest.fixture(scope="module")
def default():
    """The buffers of a child without the library."""
    return run_child({}, preload=False)[0]


def test_udp_sockets_get_the_size_asked_and_report_it(default, tmp_path):
    report = tmp_path / "rcvbuf"
    got, err = run_child({"DC_UDP_RCVBUF": str(ASKED), "DC_UDP_RCVBUF_REPORT": str(report)})
    assert got["udp4"] >= ASKED and got["udp6"] >= ASKED, got
    assert got["udp4"] > default["udp4"]
    assert got["tcp"] == default["tcp"], "a TCP socket must be left alone"
    assert err == ""
    # one line per UDP socket, as the kernel set it (it doubles what was asked: socket(7))
    assert report.read_text().split() == [str(got["udp4"]), str(got["udp6"])]


def test_without_the_variable_nothing_changes(default, tmp_path):
    got, err = run_child({"DC_UDP_RCVBUF_REPORT": str(tmp_path / "rcvbuf")})
    assert got == default
    assert err == ""
    assert not (tmp_path / "rcvbuf").exists()


@pytest.mark.parametrize("value", ["lots", "12", "-1", "4096k", "99999999999"])
def test_a_bad_size_is_named_on_one_line_and_changes_nothing(default, value):
    got, err = run_child({"DC_UDP_RCVBUF": value})
    assert got == default
    lines = err.splitlines()
    assert len(lines) == 1, err  # once per process, not once per socket
    assert f"DC_UDP_RCVBUF={value}" in lines[0] and "[1024, 1073741824]" in lines[0]

"""dccommon.ports: the free ports the switch targets (and Ray, a QUIC endpoint) are started on.

Run: .venv/bin/pytest -q controlplane/tests/test_controlplane_ports.py
"""

import socket

import pytest

from dccommon import ports


def ephemeral_start() -> int:
    return int(ports.EPHEMERAL_RANGE.read_text().split()[0])


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_ports_are_distinct_bindable_and_below_the_ephemeral_range(proto):
    got = ports.free_ports(6, proto)
    assert len(set(got)) == 6
    assert all(ports.LOWEST <= p < ephemeral_start() for p in got), got
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    held = []
    try:
        for port in got:  # each still free once returned (no socket of ours left on it)
            s = socket.socket(socket.AF_INET, kind)
            held.append(s)
            s.bind(("127.0.0.1", port))
    finally:
        for s in held:
            s.close()


def test_a_port_in_use_is_never_returned(monkeypatch):
    a, b, c = ports.free_ports(3)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", a))
        busy.listen()
        monkeypatch.setattr(ports, "_candidates", lambda count: [a, b, c])
        assert sorted(ports.free_ports(2)) == sorted([b, c])
        with pytest.raises(RuntimeError, match="no 3 free tcp ports"):
            ports.free_ports(3)


def test_bad_protocol_is_named():
    with pytest.raises(ValueError, match="proto 'sctp': expected one of tcp, udp"):
        ports.free_ports(1, "sctp")

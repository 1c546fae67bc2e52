"""Free loopback ports for the servers our tools and tests start (a switch's gRPC and Thrift
servers, Ray's nodes, a QUIC endpoint).

A port found free by binding port 0 comes from the kernel's ephemeral range, the range every
connect() and bind(0) on the machine draws from. Between the moment it is found and the
moment the server binds it (seconds, for a switch starting on a loaded machine), another
process's connection may take it, and the server fails to start. Ports below that range are
never handed out by the kernel: one found free there stays free unless someone binds it by
number. `free_ports(n)` also holds every port it found until it has all of them, so they are
distinct.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20000  # below: ports services are set to (9090, 9559, Ray's workers 10002-19999)
ATTEMPTS = 1000
KINDS = {"tcp": socket.SOCK_STREAM, "udp": socket.SOCK_DGRAM}


def _ephemeral_start() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _candidates(count: int) -> list[int]:
    """Ports below the ephemeral range, in random order (concurrent callers spread out)."""
    top = _ephemeral_start()
    if top - LOWEST < count:
        raise RuntimeError(
            f"the ephemeral port range starts at {top}: no room below it for {count} ports"
        )
    return random.sample(range(LOWEST, top), min(ATTEMPTS, top - LOWEST))


def free_ports(count: int = 1, proto: str = "tcp", host: str = "127.0.0.1") -> list[int]:
    """`count` distinct `proto` ports free on `host` now, below the ephemeral range."""
    if proto not in KINDS:
        raise ValueError(f"proto {proto!r}: expected one of {', '.join(KINDS)}")
    held: list[socket.socket] = []
    try:
        for port in _candidates(count):
            s = socket.socket(socket.AF_INET, KINDS[proto])
            try:
                s.bind((host, port))
            except OSError:
                s.close()
                continue
            held.append(s)
            if len(held) == count:
                return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()
    raise RuntimeError(f"no {count} free {proto} ports on {host} below the ephemeral range")


def free_port(proto: str = "tcp", host: str = "127.0.0.1") -> int:
    """One port of free_ports()."""
    return free_ports(1, proto, host)[0]

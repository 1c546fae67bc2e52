"""Network namespaces, veth pairs and bridges for the testbed and for tests.

Every name carries a per-run prefix (other runs may share the machine), every command is an
argument list whose return code is checked, and everything created is torn down by what was
created (namespaces by name, processes by the PIDs we started), even on an exception.
"""

from __future__ import annotations

import ctypes
import os
import random
import socket
import subprocess
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Self

from dccommon.processes import stop_process

IFNAMSIZ = 15  # Linux interface names: at most 15 characters
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


class NetnsError(RuntimeError):
    """A plumbing command failed; the message carries the command and its stderr."""


def run(
    argv: list[str], netns: str | None = None, check: bool = True, timeout: float = 30
) -> subprocess.CompletedProcess:
    """Run argv (inside `netns` if given) and return it; raise NetnsError on failure."""
    full = (["ip", "netns", "exec", netns] + argv) if netns else argv
    # the return code is checked below, so the error can carry the command and its stderr
    proc = subprocess.run(full, capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise NetnsError(f"{' '.join(full)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def unique_prefix(tag: str) -> str:
    """A short per-run prefix such as 'le4821', so parallel runs never share a name."""
    if not tag.isalnum() or len(tag) > 4:
        raise ValueError(f"prefix tag must be 1-4 alphanumerics, got {tag!r}")
    return f"{tag}{(os.getpid() * 7919 + random.randrange(10_000)) % 10_000:04d}"


def check_ifname(name: str) -> str:
    if not 0 < len(name) <= IFNAMSIZ:
        raise ValueError(f"interface name {name!r} must be 1 to {IFNAMSIZ} characters")
    return name


@contextmanager
def in_netns(name: str):
    """Run the block inside namespace `name` (this thread only); sockets opened there stay
    in it. Python 3.11 has no os.setns, hence libc."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {name} failed")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back failed")
    finally:
        os.close(target)
        os.close(own)


ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33  # root may exceed rmem_max: bursts of thousands of frames must fit


def l2_socket(ns: str, ifname: str, rcvbuf: int = 8 << 20) -> socket.socket:
    """A raw socket on interface `ifname` of namespace `ns` that takes in every frame
    arriving there and nothing else: opened for no protocol and bound for all, since a socket
    opened for ETH_P_ALL queues every interface's frames until its bind."""
    with in_netns(ns):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        sock.bind((ifname, ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    return sock


def offloads_off(ifname: str, netns: str | None = None) -> None:
    """AF_PACKET readers (p4sim, linkem, DPDK af_packet) need real checksums and no GSO/GRO."""
    run(
        ["ethtool", "-K", ifname, "tx", "off", "tso", "off", "gso", "off", "gro", "off"],
        netns=netns,
    )


@dataclass
class Namespace:
    """A network namespace that lives as long as the `with` block (or until close())."""

    name: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_ifname(self.name)  # same limit keeps names readable in `ip` output

    def __enter__(self) -> Self:
        run(["ip", "netns", "add", self.name])
        self.run(["ip", "link", "set", "lo", "up"])
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, argv: list[str], check: bool = True, timeout: float = 30):
        return run(argv, netns=self.name, check=check, timeout=timeout)

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start a process inside the namespace; it is stopped by its PID on close()."""
        kwargs.setdefault("start_new_session", True)  # Ctrl-C reaches us, not it
        proc = subprocess.Popen(["ip", "netns", "exec", self.name] + argv, **kwargs)
        self.processes.append(proc)
        return proc

    def add_addr(self, ifname: str, cidr: str) -> None:
        self.run(["ip", "addr", "add", cidr, "dev", ifname])

    def disable_ipv6(self) -> None:
        """No IPv6 on interfaces here or moved here later: no router solicitations or MLD
        reports among the frames a test or bench counts."""
        self.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1"])  # fmt: skip

    def close(self) -> None:
        for proc in reversed(self.processes):
            stop_process(proc)
        self.processes.clear()
        # Deleting a namespace with processes left inside would leave it alive; the
        # processes we started are gone by now.
        run(["ip", "netns", "del", self.name], check=False)


def wait_bound(
    ns: Namespace, port: int, proto: str, proc: subprocess.Popen, timeout_s: float = 60
) -> None:
    """Wait until a socket in `ns` has bound `port` (`proto` "tcp": listening, "udp": bound),
    as `ss` shows it, while `proc` (the server meant to bind it) runs. A fixed pause before
    its client starts is too short on a loaded machine."""
    argv = ["ss", "-H", "-ln", {"tcp": "-t", "udp": "-u"}[proto], f"sport = :{port}"]
    deadline = time.monotonic() + timeout_s
    while not ns.run(argv, check=False).stdout.strip():
        if proc.poll() is not None:
            raise NetnsError(
                f"the server exited ({proc.returncode}) before binding {proto} port {port}"
            )
        if time.monotonic() > deadline:
            raise NetnsError(f"no server bound {proto} port {port} within {timeout_s:g} s")
        time.sleep(0.05)


def veth_pair(
    name_a: str,
    ns_a: Namespace | None,
    name_b: str,
    ns_b: Namespace | None,
    mtu: int = 1500,
    offloads: bool = False,
) -> None:
    """Create veth name_a<->name_b, move each end to its namespace (None = this one), set
    the MTU, bring both up and, unless offloads=True, turn offloads off on both ends."""
    check_ifname(name_a)
    check_ifname(name_b)
    run(
        [
            "ip",
            "link",
            "add",
            name_a,
            "mtu",
            str(mtu),
            "type",
            "veth",
            "peer",
            "name",
            name_b,
            "mtu",
            str(mtu),
        ]
    )
    for name, ns in ((name_a, ns_a), (name_b, ns_b)):
        if ns is not None:
            run(["ip", "link", "set", name, "netns", ns.name])
        netns = ns.name if ns else None
        run(["ip", "link", "set", name, "up"], netns=netns)
        if not offloads:
            offloads_off(name, netns=netns)


def bridge(ns: Namespace, name: str, members: list[str], mtu: int = 1500) -> None:
    """A Linux bridge inside `ns` enslaving `members` (already in `ns`)."""
    ns.run(["ip", "link", "add", check_ifname(name), "mtu", str(mtu), "type", "bridge"])
    for member in members:
        ns.run(["ip", "link", "set", member, "master", name])
    ns.run(["ip", "link", "set", name, "up"])


class Topology(ExitStack):
    """A set of namespaces torn down together: `with Topology() as topo: a = topo.ns(...)`."""

    def ns(self, name: str) -> Namespace:
        return self.enter_context(Namespace(name))

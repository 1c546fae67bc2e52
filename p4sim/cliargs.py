"""Argument types and the help formatter shared by the project's three commands (p4sim,
dcctl, dcexp). It lives in p4sim because p4sim is the layer the other two build on.

Every type refuses bad input with one line that names the option's allowed values, so that
argparse prints `PROG: error: argument --x: ...` and exits with status 2.
"""

from __future__ import annotations

import argparse
import fcntl
import ipaddress
import math
import socket
import struct

MAX_TCP_PORT = 65535
MAX_UINT64 = (1 << 64) - 1


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows `(default: X)` only where X tells the reader something: not for options whose
    absence means "not given" (None), empty repeatable options ([]) or flags (False)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        default = action.default
        if default is None or default is False or default == [] or not action.option_strings:
            return action.help or ""
        return super()._get_help_string(action)


def _range_text(lo: float, hi: float) -> str:
    return f"{lo}..{'2^64-1' if hi == MAX_UINT64 else hi}"


def int_range(lo: int, hi: int, what: str = "value"):
    """An argparse type: a whole number in lo..hi."""

    def parse(text: str) -> int:
        try:
            value = int(text, 0) if text.strip().lower().startswith("0x") else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} is not a whole number (allowed {_range_text(lo, hi)})"
            ) from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"{what} {text} is out of range (allowed {_range_text(lo, hi)})"
            )
        return value

    parse.__name__ = what  # argparse names the type in its fallback message
    return parse


def float_range(lo: float, hi: float, what: str = "value", low_open: bool = False):
    """An argparse type: a finite number in lo..hi (above lo when low_open)."""
    allowed = f"above {lo:g} up to {hi:g}" if low_open else f"from {lo:g} to {hi:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < lo or value > hi or (low_open and value == lo):
            raise argparse.ArgumentTypeError(f"{what} {text!r} must be a number {allowed}")
        return value

    parse.__name__ = what
    return parse


def host_port(text: str) -> str:
    """HOST:PORT for a gRPC address: an IPv4 address or host name, or [IPv6], then a TCP port
    0..65535 (gRPC itself would wrap 99999 to another port); or unix:PATH."""
    if text.startswith("unix:") and len(text) > len("unix:"):
        return text
    host, sep, port = text.rpartition(":")
    shape = "expected HOST:PORT with PORT 0..65535 (e.g. 127.0.0.1:9559, [::1]:9559) or unix:PATH"
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: {shape}")
    if int(port) > MAX_TCP_PORT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: port {port} is out of range (allowed 0..65535)"
        )
    if host.startswith("[") != host.endswith("]"):
        raise argparse.ArgumentTypeError(f"{text!r}: {shape}")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {host} is not a bracketed IPv6 address; {shape}"
            ) from None
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{text!r}: write an IPv6 host in brackets; {shape}")
    return text


class NotUtf8Error(ValueError):
    """A text input file holds bytes that are not UTF-8; the message gives file:line:col."""


def read_utf8_text(path) -> str:
    """The text of a UTF-8 file (scenario, desired state). A bad byte is reported at its
    line and column, counted in bytes from 1 as editors and `cmp` show them."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8Error(
            f"{path}:{line}:{col}: byte 0x{data[exc.start]:02x} is not UTF-8 ({exc.reason}); "
            "save the file as UTF-8"
        ) from None


# -- the loopback interface: a server or client on 127.0.0.1 in a network namespace whose lo
# is down binds, but nothing can connect (a fresh `unshare -n` or `ip netns add` namespace).

SIOCGIFFLAGS, IFF_UP = 0x8913, 0x1  # <linux/sockios.h>, <net/if.h>
LO_DOWN_FIX = (
    "bring it up with `ip link set lo up` (in a namespace NS: `ip netns exec NS ip link set lo up`)"
)


def loopback_is_up() -> bool:
    """Whether `lo` is up in this process's network namespace. Asked of the kernel by ioctl,
    which answers for the caller's namespace (/sys/class/net shows the namespace that
    mounted /sys, which `unshare -n` does not change)."""
    ifreq = struct.pack("16sH14x", b"lo", 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            (flags,) = struct.unpack_from("H", fcntl.ioctl(sock, SIOCGIFFLAGS, ifreq), 16)
        except OSError:  # no lo at all
            return False
    return bool(flags & IFF_UP)


def is_loopback_addr(addr: str) -> bool:
    """HOST:PORT with a loopback host (127.0.0.0/8, [::1], localhost)."""
    host = addr.rpartition(":")[0].strip("[]")
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

"""Argument types and the help formatter shared by the project's three commands (p4sim,
dcctl, dcexp). It lives in p4sim because p4sim is the layer the other two build on.

Every type refuses bad input with one line that names the option's allowed values, so that
argparse prints `PROG: error: argument --x: ...` and exits with status 2.
"""

from __future__ import annotations

import argparse
import ipaddress
import math

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

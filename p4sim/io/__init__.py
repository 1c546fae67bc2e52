"""Packet I/O for the running switch, behind one small interface.

A `PortSet` owns a set of numbered ports. The switch calls `start(on_frame)` once; from then
on every frame that arrives on a port is handed to `on_frame(port, frame)` (from one receive
thread, or from the caller's thread for in-process ports), and the switch transmits with
`send(port, frame)`. Implementations: `AfPacketPorts` (Linux interfaces), `InProcessPorts`
(tests and benchmarks without interfaces). `PcapWriter` records frames in libpcap format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

FrameHandler = Callable[[int, bytes], None]


class PortError(RuntimeError):
    """A port cannot be opened (missing interface, no permission, ...)."""


class PortSet(Protocol):
    ports: dict[int, str]  # port number -> human-readable name (interface)

    def start(self, on_frame: FrameHandler) -> None: ...

    def send(self, port: int, frame: bytes) -> None: ...

    def close(self) -> None: ...


from p4sim.io.afpacket import AfPacketPorts, offload_warnings
from p4sim.io.inproc import InProcessPorts
from p4sim.io.pcap import PcapWriter

__all__ = [
    "AfPacketPorts",
    "FrameHandler",
    "InProcessPorts",
    "PcapWriter",
    "PortError",
    "PortSet",
    "offload_warnings",
]

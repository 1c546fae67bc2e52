"""Packet I/O for the running switch, behind one small interface.

A `PortSet` owns a set of numbered ports. The switch calls `start(on_frame)` once; from then
on every frame that arrives on a port is handed to `on_frame(port, frame)` (from one receive
thread, or from the caller's thread for in-process ports), and the switch transmits with
`send(port, frame)`. Implementations: `AfPacketPorts` (Linux interfaces), `InProcessPorts`
(tests and benchmarks without interfaces). `PcapWriter` records frames in libpcap format.
The interface itself is in `p4sim.io.portset`; this package gathers its implementations.
"""

from __future__ import annotations

from p4sim.io.afpacket import AfPacketPorts, offload_warnings
from p4sim.io.inproc import InProcessPorts
from p4sim.io.pcap import PcapWriter
from p4sim.io.portset import FrameHandler, PortError, PortSet

__all__ = [
    "AfPacketPorts",
    "FrameHandler",
    "InProcessPorts",
    "PcapWriter",
    "PortError",
    "PortSet",
    "offload_warnings",
]

"""The running switch: ports + the committed pipeline + the packet loop.

Every frame that arrives on a port runs through the current pipeline's device under
`device.lock` (the P4Runtime server takes the same lock for each update it writes, so every
update is atomic for packets). A new pipeline replaces the old one by swapping one reference: each frame
runs entirely on the pipeline it started on, none is processed half on each.

Frames the pipeline sends to the CPU port go to the packet-in listeners (the P4Runtime
server), digest() records to the digest listeners; PacketOut frames enter the pipeline as if
received on the CPU port.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from p4.config.v1 import p4info_pb2

from p4sim.io import PcapWriter, PortSet
from p4sim.model import CompiledProgram, Device

log = logging.getLogger("p4sim.switch")

DROP_PORT = 511  # v1model: egress_spec 511 drops; the engine never emits it, but be safe


@dataclass
class Pipeline:
    """One committed forwarding pipeline: the program, its P4Info and its running device."""

    program: CompiledProgram
    p4info: p4info_pb2.P4Info  # what Get returns (the client's, when it pushed one)
    device_config: bytes  # p4sim device config (see p4sim.p4runtime.device_config)
    device: Device
    cookie: int | None = None
    # P4Runtime ids -> definitions (p4sim.p4runtime.entities.PipelineIndex), built from the
    # P4Info generated for `program` (equal to the client's where both describe the program).
    index: object = field(default=None, repr=False)


PacketInListener = Callable[[bytes], None]
DigestListener = Callable[[list[tuple[str, int, list[int]]]], None]  # see model.Device.digests


class Switch:
    def __init__(
        self, ports: PortSet, cpu_port: int | None = None, pcap_dir: str | Path | None = None
    ) -> None:
        self.ports = ports
        self.cpu_port = cpu_port
        self.pipeline: Pipeline | None = None
        self._listeners: list[PacketInListener] = []
        self._digest_listeners: list[DigestListener] = []
        self._listeners_lock = threading.Lock()
        self._pcaps: dict[tuple[int, str], PcapWriter] = {}
        if pcap_dir is not None:
            Path(pcap_dir).mkdir(parents=True, exist_ok=True)
            # Port sets that record their own traffic (the native engine's C I/O) leave only
            # the CPU port to the switch.
            own = [] if getattr(ports, "writes_pcaps", False) else list(ports.ports)
            for port in own + ([cpu_port] if cpu_port is not None else []):
                for direction in ("in", "out"):  # BMv2's --pcap naming: <port>-in.pcap
                    self._pcaps[(port, direction)] = PcapWriter(
                        Path(pcap_dir) / f"{port}-{direction}.pcap"
                    )
        self._counts = {"packet_in": 0, "packet_out": 0, "dropped_no_pipeline": 0}
        # (rx packets, rx bytes, tx packets, tx bytes) per port, counted here unless the port
        # set counts its interfaces' frames itself (the native engine's C I/O)
        self._port_counts: dict[int, list[int]] = {}
        self._own_counts = not getattr(ports, "counts_frames", False)
        self._counts_lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self.ports.start(self.receive)

    def close(self) -> None:
        self.ports.close()
        for writer in self._pcaps.values():
            writer.close()

    def set_pipeline(self, pipeline: Pipeline | None) -> None:
        """Atomic for packets: a frame runs on the old or on the new pipeline, never both."""
        self.pipeline = pipeline
        attach = getattr(self.ports, "attach_pipeline", None)
        if attach is not None:  # port sets that run the data path themselves (native engine)
            attach(pipeline, self)
        log.info("pipeline %s", "committed" if pipeline else "removed")

    # -- packet path ------------------------------------------------------------------------

    def add_packet_in_listener(self, listener: PacketInListener) -> None:
        with self._listeners_lock:
            self._listeners.append(listener)

    def remove_packet_in_listener(self, listener: PacketInListener) -> None:
        with self._listeners_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def add_digest_listener(self, listener: DigestListener) -> None:
        self._digest_listeners.append(listener)

    def remove_digest_listener(self, listener: DigestListener) -> None:
        if listener in self._digest_listeners:
            self._digest_listeners.remove(listener)

    @property
    def stats(self) -> dict:
        """What the switch counted: per port of the port set, frames and bytes received and
        sent (`ports`: {port: {rx_packets, rx_bytes, tx_packets, tx_bytes}}) and their sums
        (`rx`, `tx`); frames to and from the controller (`packet_in`, `packet_out`); frames
        dropped because no pipeline was committed. The same on both engines: with the native
        engine's C I/O the interface counters are read from C when asked."""
        with self._counts_lock:
            out = dict(self._counts)
            counts = {p: tuple(c) for p, c in self._port_counts.items()}
        if not self._own_counts:
            counts = self.ports.port_stats()
        ports = {}
        for port in sorted(self.ports.ports):
            rx_p, rx_b, tx_p, tx_b = counts.get(port, (0, 0, 0, 0))
            ports[port] = {
                "rx_packets": rx_p,
                "rx_bytes": rx_b,
                "tx_packets": tx_p,
                "tx_bytes": tx_b,
            }
        out["rx"] = sum(c["rx_packets"] for c in ports.values())
        out["tx"] = sum(c["tx_packets"] for c in ports.values())
        out["ports"] = ports
        return out

    def stats_line(self) -> str:
        """`stats` in one log line."""
        stats = self.stats
        ports = "; ".join(
            f"port {p} rx {c['rx_packets']} frames {c['rx_bytes']} bytes, "
            f"tx {c['tx_packets']} frames {c['tx_bytes']} bytes"
            for p, c in stats["ports"].items()
        )
        return (
            f"{ports or 'no ports'}; packet_in {stats['packet_in']}, packet_out "
            f"{stats['packet_out']}, dropped without a pipeline {stats['dropped_no_pipeline']}"
        )

    def _count(self, port: int, direction: int, frame: bytes) -> None:
        """direction 0: received, 2: sent (the index into the per-port counters)."""
        with self._counts_lock:
            c = self._port_counts.setdefault(port, [0, 0, 0, 0])
            c[direction] += 1
            c[direction + 1] += len(frame)

    def receive(self, port: int, frame: bytes) -> None:
        """A frame arrived on `port` (from the port set, or a PacketOut on the CPU port)."""
        if port == self.cpu_port:
            with self._counts_lock:
                self._counts["packet_out"] += 1
        elif self._own_counts:
            self._count(port, 0, frame)
        self._record(port, "in", frame)
        pipeline = self.pipeline
        if pipeline is None:
            with self._counts_lock:
                self._counts["dropped_no_pipeline"] += 1
            return
        device = pipeline.device
        with device.lock:
            outputs = device.process(port, frame)
            digests = getattr(device, "digests", None)
            if digests:
                batch = list(digests)
                digests.clear()
            else:
                batch = None
        if batch:
            self.deliver_digests(batch)
        for egress_port, out in outputs:
            self.transmit(egress_port, out)

    def deliver_digests(self, batch: list) -> None:
        for listener in list(self._digest_listeners):
            listener(batch)

    def packet_out(self, frame: bytes) -> None:
        if self.cpu_port is None:
            raise RuntimeError("no CPU port configured (start p4sim with --cpu-port N)")
        self.receive(self.cpu_port, frame)

    def transmit(self, port: int, frame: bytes) -> None:
        """A frame the pipeline sent to `port` (the CPU port: to the packet-in listeners)."""
        self._record(port, "out", frame)
        if port == self.cpu_port:
            with self._counts_lock:
                self._counts["packet_in"] += 1
            with self._listeners_lock:
                listeners = list(self._listeners)
            for listener in listeners:
                listener(frame)
            return
        if port == DROP_PORT:
            return
        if self._own_counts:
            self._count(port, 2, frame)
        self.ports.send(port, frame)

    def _record(self, port: int, direction: str, frame: bytes) -> None:
        writer = self._pcaps.get((port, direction))
        if writer is not None:
            writer.write(frame)

"""In-process ports: frames are injected by the caller and outputs collected in memory."""

from __future__ import annotations

import threading

from p4sim.io.portset import FrameHandler


class InProcessPorts:
    """`inject(port, frame)` runs the frame through the switch in the caller's thread;
    everything the switch sends is kept until `collect()`."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = {p: f"inproc{p}" for p in ports}
        self._on_frame: FrameHandler | None = None
        self._sent: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()
        self._sent_event = threading.Condition(self._lock)

    def start(self, on_frame: FrameHandler) -> None:
        self._on_frame = on_frame

    def inject(self, port: int, frame: bytes) -> None:
        if port not in self.ports:
            raise ValueError(f"port {port} is not one of {sorted(self.ports)}")
        if self._on_frame is None:
            raise RuntimeError("ports not started: the switch has not called start()")
        self._on_frame(port, frame)

    def send(self, port: int, frame: bytes) -> None:
        with self._lock:
            self._sent.append((port, frame))
            self._sent_event.notify_all()

    def collect(self) -> list[tuple[int, bytes]]:
        """Every (port, frame) sent since the last call, in order."""
        with self._lock:
            sent, self._sent = self._sent, []
        return sent

    def wait_for(self, count: int, timeout: float) -> list[tuple[int, bytes]]:
        """Wait until `count` frames were sent (or timeout), then collect()."""
        with self._lock:
            self._sent_event.wait_for(lambda: len(self._sent) >= count, timeout)
        return self.collect()

    def close(self) -> None:
        self._on_frame = None

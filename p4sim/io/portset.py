"""The interface every packet I/O implementation offers the switch (see p4sim.io): a
`PortSet`, the `FrameHandler` it calls per received frame, and `PortError`."""

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

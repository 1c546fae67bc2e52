"""A minimal libpcap (classic format, LINKTYPE_ETHERNET) writer, safe across threads."""

from __future__ import annotations

import struct
import threading
import time
from pathlib import Path

_MAGIC = 0xA1B2C3D4  # microsecond timestamps
_LINKTYPE_ETHERNET = 1
_SNAPLEN = 262144


class PcapWriter:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file = open(self.path, "wb")  # noqa: SIM115 - lives as long as the writer
        self._lock = threading.Lock()
        self._file.write(struct.pack("<IHHiIII", _MAGIC, 2, 4, 0, 0, _SNAPLEN, _LINKTYPE_ETHERNET))
        self._file.flush()

    def write(self, frame: bytes, timestamp: float | None = None) -> None:
        ts = time.time() if timestamp is None else timestamp
        sec = int(ts)
        usec = int((ts - sec) * 1_000_000)
        data = frame[:_SNAPLEN]
        with self._lock:
            if self._file.closed:
                return
            self._file.write(struct.pack("<IIII", sec, usec, len(data), len(frame)) + data)
            self._file.flush()  # readable while the switch runs (tcpdump -r, tests)

    def close(self) -> None:
        with self._lock:
            self._file.close()


def read_pcap(path: str | Path) -> list[bytes]:
    """The frames of a pcap file written by PcapWriter (for tests and tools)."""
    data = Path(path).read_bytes()
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic != _MAGIC:
        raise ValueError(f"{path}: not a little-endian microsecond pcap file")
    frames, offset = [], 24
    while offset + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, offset)
        frames.append(data[offset + 16 : offset + 16 + incl])
        offset += 16 + incl
    return frames

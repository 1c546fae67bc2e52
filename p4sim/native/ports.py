"""`NativePorts`: Linux interfaces driven by the native engine's C I/O loop (io.c).

A `PortSet` like `p4sim.io.AfPacketPorts`, but the receive loop, the pipeline and the
transmission are C when the committed pipeline is native: Python only sees frames for the
CPU port (PacketIn), digests (drained every 10 ms) and, while the pipeline is the
interpreter's, every frame (the up-call path, processed by `Switch.receive`).

Each interface is read and written through a packet socket with a TPACKET_V2 ring (io
"afpacket", the default) or through an AF_XDP socket (io "afxdp": XDP in the driver, copy
mode on veth; clib/pktio's pktio_xsk).
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import time
from pathlib import Path

from p4sim.io import PortError
from p4sim.native.build import build_io

log = logging.getLogger("p4sim.native")

_MAX_FRAME = 65536 + 64
_LOSSES = (
    ("upcalls_dropped", "frames for Python dropped (up-call queue full)"),
    ("truncated", "received frames longer than the ring's frame size dropped"),
    ("upcalls_nomem", "frames for Python dropped (no memory for their copy)"),
)
_lib = None


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(str(build_io()))
        lib.p4nio_new.restype = ctypes.c_void_p
        lib.p4nio_add_port.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p,
                                       ctypes.c_uint32, ctypes.c_char_p]  # fmt: skip
        lib.p4nio_add_port_xdp.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p,
                                           ctypes.c_char_p]  # fmt: skip
        lib.pktio_xsk_strerror.restype = ctypes.c_char_p
        lib.pktio_xsk_strerror.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_uint]  # fmt: skip
        lib.p4nio_set_pipeline.argtypes = (
            [ctypes.c_void_p] + [ctypes.c_void_p] * 4 + [ctypes.c_int64]
        )
        lib.p4nio_upcall.restype = ctypes.c_int64
        lib.p4nio_upcall.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_uint32),
                                     ctypes.POINTER(ctypes.c_uint32), ctypes.c_int]  # fmt: skip
        lib.p4nio_send.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_char_p,
            ctypes.c_uint32,
        ]
        lib.p4nio_port_stats.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_uint64),
        ]
        for name in ("p4nio_run", "p4nio_stop", "p4nio_close", "p4nio_stats", "p4nio_nports"):
            getattr(lib, name).argtypes = [ctypes.c_void_p] + (
                [ctypes.POINTER(ctypes.c_uint64)] if name == "p4nio_stats" else []
            )
        _lib = lib
    return _lib


def _mtu(ifname: str) -> int:
    try:
        return int(Path(f"/sys/class/net/{ifname}/mtu").read_text())
    except (OSError, ValueError):
        return 1500


IO_PATHS = ("afpacket", "afxdp")


class NativePorts:
    writes_pcaps = True  # io.c writes <port>-in/out.pcap of the interfaces itself
    counts_frames = True  # io.c counts each interface's frames (port_stats); see Switch.stats

    def __init__(
        self, interfaces: dict[int, str], pcap_dir: str | None = None, io: str = "afpacket"
    ) -> None:
        if io not in IO_PATHS:
            raise PortError(f"I/O path {io!r}: expected one of {', '.join(IO_PATHS)}")
        self.ports = dict(interfaces)
        self.lib = _load()
        self.io = ctypes.c_void_p(self.lib.p4nio_new())
        if not self.io.value:
            raise MemoryError("native I/O: no memory for its state (p4nio_new)")
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._switch = None
        self._device = None
        self._final_port_stats: dict[int, tuple[int, int, int, int]] | None = None
        if pcap_dir is not None:
            try:
                Path(pcap_dir).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self.close()
                raise PortError(f"--pcap-dir {pcap_dir}: {exc.strerror}") from None
        for port, ifname in self.ports.items():
            if not Path(f"/sys/class/net/{ifname}").exists():
                self.close()
                raise PortError(f"interface {ifname!r} does not exist (in this network namespace)")
            pcap = str(pcap_dir).encode() if pcap_dir is not None else None
            if io == "afxdp":
                r = self.lib.p4nio_add_port_xdp(self.io, port, ifname.encode(), pcap)
                if r < 0:
                    self.close()
                    msg = ctypes.create_string_buffer(256)
                    self.lib.pktio_xsk_strerror(r, ifname.encode(), msg, len(msg))
                    raise PortError(msg.value.decode(errors="replace"))
                continue
            r = self.lib.p4nio_add_port(self.io, port, ifname.encode(), _mtu(ifname), pcap)
            if r < 0:
                self.close()
                if -r == errno.EPERM:
                    raise PortError(f"{ifname}: opening a packet socket needs root (CAP_NET_RAW)")
                raise PortError(f"{ifname}: cannot open a packet ring: {os.strerror(-r)}")

    # -- the switch hands us each committed pipeline --------------------------------------
    def attach_pipeline(self, pipeline, switch) -> None:
        self._switch = switch
        device = pipeline.device if pipeline is not None else None
        if getattr(device, "engine", "interp") == "native":
            lib = device.lib
            fn = [
                ctypes.cast(getattr(lib, n), ctypes.c_void_p)
                for n in ("p4n_process_into", "p4n_lock", "p4n_unlock")
            ]
            cpu = switch.cpu_port if switch.cpu_port is not None else -1
            self.lib.p4nio_set_pipeline(self.io, fn[0], fn[1], fn[2], device.ctx, cpu)
            log.info("native I/O: the data path runs in C")
        else:
            self.lib.p4nio_set_pipeline(self.io, None, None, None, None, -1)
            if device is not None:
                log.info("native I/O: the pipeline is the interpreter's; frames go to Python")
        self._device = device

    # -- PortSet --------------------------------------------------------------------------
    def start(self, on_frame) -> None:
        run = threading.Thread(
            target=self.lib.p4nio_run, args=(self.io,), name="p4sim-native-io", daemon=True
        )
        up = threading.Thread(
            target=self._upcalls, args=(on_frame,), name="p4sim-upcalls", daemon=True
        )
        self._threads = [run, up]
        run.start()
        up.start()

    def _upcalls(self, on_frame) -> None:
        buf = ctypes.create_string_buffer(_MAX_FRAME)
        kind, port = ctypes.c_uint32(), ctypes.c_uint32()
        reported = {key: 0 for key, _ in _LOSSES}
        next_check = time.monotonic() + 5
        while not self._closed:
            if time.monotonic() >= next_check:  # losses of the C side, said once per 5 s
                next_check = time.monotonic() + 5
                stats = self.stats()
                for key, what in _LOSSES:
                    if stats[key] > reported[key]:
                        log.warning("native I/O: %d %s", stats[key] - reported[key], what)
                        reported[key] = stats[key]
            n = self.lib.p4nio_upcall(
                self.io, buf, _MAX_FRAME, ctypes.byref(kind), ctypes.byref(port), 10
            )
            if n == -2:
                return
            try:
                if n >= 0:
                    frame = buf.raw[:n]
                    if kind.value == 0:
                        on_frame(port.value, frame)
                    elif self._switch is not None:
                        self._switch.transmit(port.value, frame)
                self._drain_digests()
            except Exception:  # the switch must survive any one frame
                log.exception("native I/O: handling an up-call failed")

    def _drain_digests(self) -> None:
        device = self._device
        if getattr(device, "engine", None) != "native" or self._switch is None:
            return
        with device.lock:
            device.drain_digests()
            batch = list(device.digests)
            device.digests.clear()
        if batch:
            self._switch.deliver_digests(batch)

    def send(self, port: int, frame: bytes) -> None:
        self.lib.p4nio_send(self.io, port, frame, len(frame))

    def stats(self) -> dict[str, int]:
        out = (ctypes.c_uint64 * 6)()
        self.lib.p4nio_stats(self.io, out)
        names = ("rx", "tx", "tx_dropped", "upcalls_dropped", "truncated", "upcalls_nomem")
        return dict(zip(names, out))

    def port_stats(self) -> dict[int, tuple[int, int, int, int]]:
        """Per interface: (rx packets, rx bytes, tx packets, tx bytes), as the C side counts
        them (the last values once closed)."""
        if self._final_port_stats is not None:
            return dict(self._final_port_stats)
        out = (ctypes.c_uint64 * 5)()
        stats = {}
        for i in range(self.lib.p4nio_nports(self.io)):
            self.lib.p4nio_port_stats(self.io, i, out)
            stats[out[0]] = tuple(out[1:5])
        return stats

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.lib.p4nio_stop(self.io)
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=2)
        self._final_port_stats = self.port_stats()
        self.lib.p4nio_close(self.io)

"""Linux interfaces through AF_PACKET raw sockets (what BMv2's default packet I/O does).

One socket per interface, bound to ETH_P_ALL; frames the kernel reports as PACKET_OUTGOING
(our own transmissions, looped back to packet sockets) are ignored. One receive thread
waits on all sockets with select() and hands each frame to the switch.

Offloads: a veth with checksum/segmentation offloads on hands packet sockets frames with
partial checksums and GSO super-frames. p4sim does not repair them (no PACKET_AUXDATA
handling); it checks `ethtool -k` at start and warns with the exact command that fixes it.
"""

from __future__ import annotations

import logging
import os
import select
import shutil
import socket
import subprocess
import threading

from p4sim.io.portset import FrameHandler, PortError

log = logging.getLogger("p4sim.io")

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23  # Linux >= 4.20; the pkttype check below covers older kernels
_RECV_SIZE = 65536 + 64
_RCVBUF = 4 * 1024 * 1024
_BURST = 64  # frames read from one socket before looking at the others again

# `ethtool -k` feature names that must be off on an interface read by a packet socket.
_OFFLOADS = (
    "tx-checksumming",
    "tcp-segmentation-offload",
    "generic-segmentation-offload",
    "generic-receive-offload",
)


def offload_warnings(ifname: str) -> list[str]:
    """Messages for every offload that is on (or for being unable to check)."""
    fix = f"ethtool -K {ifname} tx off tso off gso off gro off"
    ethtool = shutil.which("ethtool") or next(
        (p for p in ("/usr/sbin/ethtool", "/sbin/ethtool") if os.path.exists(p)), None
    )
    if ethtool is None:
        return [
            (
                f"{ifname}: cannot check offloads (ethtool not installed); if frames are lost "
                f"or TCP stalls, run: {fix} (on both ends of a veth)"
            )
        ]
    proc = subprocess.run(
        [ethtool, "-k", ifname], capture_output=True, text=True, timeout=10, check=False
    )
    if proc.returncode != 0:
        return [f"{ifname}: `ethtool -k` failed ({proc.stderr.strip()}); cannot check offloads"]
    on = []
    for line in proc.stdout.splitlines():
        name, _, value = line.strip().partition(":")
        if name in _OFFLOADS and value.split() and value.split()[0] == "on":
            on.append(name)
    if not on:
        return []
    return [
        (
            f"{ifname}: offloads on ({', '.join(on)}): frames may carry partial checksums or "
            f"arrive as GSO super-frames; fix with: {fix} (on both ends of a veth)"
        )
    ]


class AfPacketPorts:
    def __init__(self, interfaces: dict[int, str]) -> None:
        self.ports = dict(interfaces)
        self._socks: dict[int, socket.socket] = {}
        self._by_fd: dict[int, int] = {}
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self.tx_dropped = 0
        try:
            for port, ifname in self.ports.items():
                self._socks[port] = self._open(ifname)
                self._by_fd[self._socks[port].fileno()] = port
        except PortError:
            self.close()
            raise

    @staticmethod
    def _open(ifname: str) -> socket.socket:
        try:
            socket.if_nametoindex(ifname)
        except OSError:
            raise PortError(
                f"interface {ifname!r} does not exist (in this network namespace)"
            ) from None
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # ETH_P_ALL once bound
        except PermissionError:
            raise PortError(f"{ifname}: opening a packet socket needs root (CAP_NET_RAW)") from None
        try:
            sock.bind((ifname, ETH_P_ALL))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RCVBUF)
            sock.setblocking(False)
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                pass
        except OSError as exc:
            sock.close()
            raise PortError(f"{ifname}: cannot bind a packet socket: {exc.strerror}") from None
        return sock

    def start(self, on_frame: FrameHandler) -> None:
        self._thread = threading.Thread(
            target=self._receive_loop, args=(on_frame,), name="p4sim-rx", daemon=True
        )
        self._thread.start()

    def _receive_loop(self, on_frame: FrameHandler) -> None:
        fds = list(self._by_fd) + [self._wake_r]
        while not self._stopping:
            try:
                ready, _, _ = select.select(fds, [], [])
            except (OSError, ValueError):
                return  # sockets closed under us: shutting down
            for fd in ready:
                if fd == self._wake_r:
                    return
                port = self._by_fd[fd]
                recvfrom = self._socks[port].recvfrom
                # Drain a burst per wake-up: one select() per frame costs as much as the I/O.
                for _ in range(_BURST):
                    try:
                        frame, addr = recvfrom(_RECV_SIZE)
                    except BlockingIOError:
                        break
                    except OSError as exc:
                        log.warning("port %d (%s): receive failed: %s", port, self.ports[port], exc)
                        break
                    if addr[2] == PACKET_OUTGOING:
                        continue
                    try:
                        on_frame(port, frame)
                    except Exception:  # the switch must survive any one frame
                        log.exception("port %d: processing a frame failed", port)

    def send(self, port: int, frame: bytes) -> None:
        sock = self._socks.get(port)
        if sock is None:
            log.debug("dropping frame for port %d: no interface attached", port)
            return
        try:
            sock.send(frame)
        except BlockingIOError:  # transmit queue full: drop, as a switch port would
            self.tx_dropped += 1
        except OSError as exc:
            log.warning(
                "port %d (%s): send of %d bytes failed: %s",
                port,
                self.ports[port],
                len(frame),
                exc.strerror,
            )

    def close(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        for sock in self._socks.values():
            sock.close()
        self._socks.clear()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

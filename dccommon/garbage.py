"""Garbage frames for the wire tests: what a parser that reads frames off a wire must survive.

The switch (p4sim/tests/test_runtime_veth.py), linkem (experiments/tests/
test_linkem_integration.py) and the PDCP agent (hostagents/tests/test_agent_integration.py)
each take rounds of these beside a valid flow, which must arrive intact. No frame here is a
deliverable PDCP Data PDU (ethertype 0x88B5 frames are cut short, Control PDUs, a bad inner
ethertype or an empty SDU), so a receiver's reordering window sees only the valid flow.
"""

from __future__ import annotations

import random
import socket

PDCP_ETHERTYPE = b"\x88\xb5"
OTHER_ETHERTYPE = b"\x88\xb6"  # IEEE 802 local experimental ethertype 2: no one's protocol
# past a 1500-byte MTU: within a veth's allowance for a VLAN tag (1515..1518), and beyond it
OVERSIZE = (1515, 1516, 1517, 1518, 4000, 9000)


def garbage_frames(rng: random.Random, dst: bytes, src: bytes) -> list[bytes]:
    """One round (about 45 frames): runts of 0..13 bytes, frames past the MTU, VLAN-tagged,
    ARP, truncated and bogus IPv4 headers, PDCP frames cut inside their header or with a
    Control PDU, a bad inner ethertype or no SDU, and random bytes. `dst`, `src`: the MACs of
    those that have an Ethernet header of their own."""

    def noise(n: int) -> bytes:
        return rng.getrandbits(8 * n).to_bytes(n, "big") if n > 0 else b""

    def not_pdcp(frame: bytes) -> bytes:
        return (
            frame[:12] + OTHER_ETHERTYPE + frame[14:] if frame[12:14] == PDCP_ETHERTYPE else frame
        )

    eth = dst + src
    frames = [noise(n) for n in range(14)]
    frames += [eth + OTHER_ETHERTYPE + noise(n - 14) for n in OVERSIZE]
    frames += [
        eth + b"\x81\x00\x00\x05" + OTHER_ETHERTYPE + b"vlan" * 10,
        eth + b"\x81\x00\x00\x05\x08\x00" + noise(20),
        eth + b"\x08\x06" + noise(28),  # ARP
        eth + b"\x08\x00\x45",  # IPv4 cut after one byte
        eth + b"\x08\x00\x4f" + noise(18),  # IHL 15, 19 bytes in all
        eth + b"\x08\x00\x45\x00\xff\xff" + noise(16),  # total length 65535
        eth + b"\x86\xdd\x60" + noise(10),  # IPv6 cut inside its header
    ]
    # PDCP (DC leg format, DESIGN.md section 3): cut before the end of an 18-bit SN header
    # and its inner ethertype; a Control PDU (D/C = 0); inner ethertype 0 (a length);
    # an inner ethertype and nothing after it
    frames += [eth + PDCP_ETHERTYPE + b"\x80\x00\x01\x08\x00"[:n] for n in range(5)]
    frames += [
        eth + PDCP_ETHERTYPE + b"\x00" + noise(40),
        eth + PDCP_ETHERTYPE + b"\x80\x00\x02\x00\x00" + noise(40),
        eth + PDCP_ETHERTYPE + b"\x80\x00\x03\x08\x00",
    ]
    frames += [not_pdcp(noise(rng.randrange(14, 1515))) for _ in range(4)]
    frames += [not_pdcp(dst + noise(rng.randrange(8, 200))) for _ in range(4)]
    return frames


def send_all(sock: socket.socket, frames: list[bytes], refused: dict[int, str]) -> None:
    """Send each frame on the AF_PACKET socket; the lengths the kernel refused go into
    `refused` with its reason (runts: EINVAL; past the peer's MTU: ENOBUFS on a veth)."""
    for frame in frames:
        try:
            sock.send(frame)
        except OSError as exc:
            refused[len(frame)] = exc.strerror

"""Leg feedback reports (p4src/README.md, "Leg feedback frames"): decoding the frames that
linkem's `--feedback` sends towards the switch and the adaptive profile punts to the
controller as PacketIns.

    report = decode_report(frame, ingress_port=1, t=time.monotonic())
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import asdict, dataclass, field

ETHERTYPE_PDCP = 0x88B5
PDU_TYPE_DC_FEEDBACK = 7
VERSION = 1
FIXED = struct.Struct("!BBBBIIIIIIII")  # after the Ethernet header: 36 bytes
ETH_LEN = 14


class FeedbackError(ValueError):
    """A frame that is not a well-formed leg feedback report (the message says why)."""


@dataclass
class Report:
    """One leg's report about one user, as received (t: the receiver's monotonic clock, s)."""

    leg: int
    seq: int
    ue: str
    desired_bytes: int
    drain_rate: int  # bytes/s over the leg's busy time
    held_bytes: int
    delivered_sn: int
    delivered_bytes: int  # in the report period
    lost: int  # SNs lost in the report period
    lost_ranges: list[tuple[int, int]] = field(default_factory=list)
    ingress_port: int | None = None
    t: float = 0.0

    @property
    def queue_delay_s(self) -> float | None:
        """How long the leg needs to deliver what it holds (None: rate unknown)."""
        return self.held_bytes / self.drain_rate if self.drain_rate else None

    @property
    def losing_everything(self) -> bool:
        return self.lost > 0 and self.delivered_bytes == 0

    def as_dict(self) -> dict:
        d = asdict(self)
        d["lost_ranges"] = [list(r) for r in self.lost_ranges]
        return d


def is_report(frame: bytes) -> bool:
    return (
        len(frame) >= ETH_LEN + 1
        and int.from_bytes(frame[12:14], "big") == ETHERTYPE_PDCP
        and frame[ETH_LEN] >> 4 == PDU_TYPE_DC_FEEDBACK  # D/C = 0 and PDU type 7
    )


def decode_report(frame: bytes, ingress_port: int | None = None, t: float = 0.0) -> Report:
    if not is_report(frame):
        raise FeedbackError("not a leg feedback report (ethertype 0x88B5, D/C=0, PDU type 7)")
    if len(frame) < ETH_LEN + FIXED.size:
        raise FeedbackError(f"report of {len(frame)} bytes: at least {ETH_LEN + FIXED.size}")
    _first, version, leg, nranges, seq, ue, desired, rate, held, sn, delivered, lost = (
        FIXED.unpack_from(frame, ETH_LEN)
    )
    if version != VERSION:
        raise FeedbackError(f"report version {version}: this controller reads version {VERSION}")
    end = ETH_LEN + FIXED.size + 8 * nranges
    if len(frame) < end:
        raise FeedbackError(f"report announces {nranges} lost ranges but has {len(frame)} bytes")
    ranges = [
        struct.unpack_from("!II", frame, ETH_LEN + FIXED.size + 8 * i) for i in range(nranges)
    ]
    return Report(
        leg=leg,
        seq=seq,
        ue=str(ipaddress.IPv4Address(ue)),
        desired_bytes=desired,
        drain_rate=rate,
        held_bytes=held,
        delivered_sn=sn,
        delivered_bytes=delivered,
        lost=lost,
        lost_ranges=[tuple(r) for r in ranges],
        ingress_port=ingress_port,
        t=t,
    )


def encode_report(r: Report, dst_mac: bytes = b"\xff" * 6) -> bytes:
    """The frame linkem sends for r (tests and tools; linkem's C code is the producer)."""
    src = bytes([0x02, 0xDD, 0xD5, 0, 0, r.leg & 0xFF])
    body = FIXED.pack(
        PDU_TYPE_DC_FEEDBACK << 4,
        VERSION,
        r.leg,
        len(r.lost_ranges),
        r.seq,
        int(ipaddress.IPv4Address(r.ue)),
        r.desired_bytes,
        r.drain_rate,
        r.held_bytes,
        r.delivered_sn,
        r.delivered_bytes,
        r.lost,
    )
    ranges = b"".join(struct.pack("!II", a, b) for a, b in r.lost_ranges)
    return dst_mac + src + ETHERTYPE_PDCP.to_bytes(2, "big") + body + ranges

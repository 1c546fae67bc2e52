"""PDCP frames on a DC leg (DESIGN.md section 3, p4src/README.md): the data PDUs the splitter
sends (Ethernet, ethertype 0x88B5, the TS 38.323 header with an 18- or 12-bit SN, the inner
ethertype, the inner packet) and the leg feedback reports that linkem's `--feedback` sends
towards the switch and the adaptive profile punts to the controller as PacketIns.

    frame = dc_frame(inner_frame, sn=5)            # what a leg carries for `inner_frame`
    sn_of(frame, sn_bits=12)
    report = decode_report(frame, ingress_port=1, t=time.monotonic())
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import asdict, dataclass, field

ETHERTYPE_PDCP = 0x88B5
ETH_LEN = 14
MACS_LEN = 12  # the header is inserted after the MAC addresses, before the inner ethertype
SN_BITS = (12, 18)
D_C_DATA = 0x80  # D/C bit of the first header byte: 1 data PDU, 0 control PDU
PDU_TYPE_DC_FEEDBACK = 7
VERSION = 1
FIXED = struct.Struct("!BBBBIIIIIIII")  # after the Ethernet header: 36 bytes


# -- data PDUs --------------------------------------------------------------------------


def _check_sn_bits(sn_bits: int) -> None:
    if sn_bits not in SN_BITS:
        raise ValueError(f"sn_bits {sn_bits}: allowed are 12 and 18")


def data_header(sn: int, sn_bits: int = 18, data: bool = True) -> bytes:
    """TS 38.323 PDU header: D/C (1 for `data`), reserved bits 0, the SN in 18 or 12 bits."""
    _check_sn_bits(sn_bits)
    low_bytes = sn_bits // 8  # the SN's bits below the first byte: 2 (18-bit), 1 (12-bit)
    sn &= (1 << sn_bits) - 1
    first = (D_C_DATA if data else 0) | sn >> 8 * low_bytes
    return bytes([first]) + (sn & ((1 << 8 * low_bytes) - 1)).to_bytes(low_bytes, "big")


def dc_frame(frame, sn: int, sn_bits: int = 18, data: bool = True) -> bytes:
    """What a DC leg carries for the Ethernet `frame` (bytes, or a scapy packet): ethertype
    0x88B5 and the PDCP header between the MAC addresses and the original ethertype."""
    raw = bytes(frame)
    head = raw[:MACS_LEN] + ETHERTYPE_PDCP.to_bytes(2, "big")
    return head + data_header(sn, sn_bits, data) + raw[MACS_LEN:]


def sn_of(frame: bytes, sn_bits: int = 18) -> int:
    """The SN of a DC leg's frame; ValueError naming the ethertype when it is not PDCP."""
    _check_sn_bits(sn_bits)
    if frame[MACS_LEN:ETH_LEN] != ETHERTYPE_PDCP.to_bytes(2, "big"):
        raise ValueError(f"not a DC frame: ethertype {frame[MACS_LEN:ETH_LEN].hex()}")
    header_len = 1 + sn_bits // 8
    value = int.from_bytes(frame[ETH_LEN : ETH_LEN + header_len], "big")
    return value & ((1 << sn_bits) - 1)


# -- leg feedback reports ---------------------------------------------------------------


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

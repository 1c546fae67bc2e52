"""PacketOut / PacketIn: the @controller_header headers between the CPU port and P4Runtime.

PacketOut: the `packet_out` header (its fields from the metadata, in declaration order,
packed big-endian bit by bit) is prepended to the payload, and the frame enters the pipeline
on the CPU port. PacketIn: a frame the pipeline sends to the CPU port starts with the
`packet_in` header; its fields become metadata and the rest is the payload. This is what
BMv2's PI server does.
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4sim.p4runtime import codec
from p4sim.p4runtime.errors import invalid


def _header_bits(header: p4info_pb2.ControllerPacketMetadata) -> int:
    return sum(m.bitwidth for m in header.metadata)


def build_packet_out(
    header: p4info_pb2.ControllerPacketMetadata | None, packet: p4runtime_pb2.PacketOut
) -> bytes:
    if header is None:
        if packet.metadata:
            raise invalid(
                'the program has no @controller_header("packet_out") header: '
                "PacketOut metadata cannot be used"
            )
        return packet.payload
    fields = {m.id: m for m in header.metadata}
    values: dict[int, int] = {}
    for md in packet.metadata:
        f = fields.get(md.metadata_id)
        if f is None:
            raise invalid(
                f"packet_out has no metadata field with id {md.metadata_id} "
                f"(valid: {sorted(fields)})"
            )
        if md.metadata_id in values:
            raise invalid(f"packet_out metadata {f.name} given twice")
        values[md.metadata_id] = codec.decode(
            md.value, f.bitwidth, f"packet_out metadata " f"{f.name}"
        )
    missing = [m.name for m in header.metadata if m.id not in values]
    if missing:
        raise invalid(f"packet_out metadata missing: {', '.join(missing)}")
    bits = _header_bits(header)
    word = 0
    for m in header.metadata:
        word = (word << m.bitwidth) | values[m.id]
    if bits % 8:
        raise invalid(f"the packet_out header is {bits} bits, not a whole number of bytes")
    return codec.encode_padded(word, bits) + packet.payload


def parse_packet_in(
    header: p4info_pb2.ControllerPacketMetadata | None, frame: bytes
) -> p4runtime_pb2.PacketIn:
    if header is None:
        return p4runtime_pb2.PacketIn(payload=frame)
    bits = _header_bits(header)
    nbytes = (bits + 7) // 8
    if len(frame) < nbytes:  # the program sent something else to the CPU port
        return p4runtime_pb2.PacketIn(payload=frame)
    word = int.from_bytes(frame[:nbytes], "big") >> (nbytes * 8 - bits)
    msg = p4runtime_pb2.PacketIn(payload=frame[nbytes:])
    shift = bits
    for m in header.metadata:
        shift -= m.bitwidth
        value = (word >> shift) & ((1 << m.bitwidth) - 1)
        msg.metadata.add(metadata_id=m.id, value=codec.encode(value))
    return msg

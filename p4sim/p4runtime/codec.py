"""P4Runtime bytestrings (spec section 8.4): big-endian unsigned values of a known width.

The server answers with the canonical form (shortest, no leading zero bytes, at least one
byte). It accepts non-canonical input with leading zeros as long as the value fits the width;
a value that does not fit is OUT_OF_RANGE, and so is an empty bytestring ("If the string's
byte length is zero, the server always rejects the string ... OUT_OF_RANGE").
"""

from __future__ import annotations

from p4sim.p4runtime.errors import out_of_range


def decode(data: bytes, bitwidth: int, what: str) -> int:
    if not data:
        raise out_of_range(f"{what}: empty bytestring (a value needs at least one byte)")
    value = int.from_bytes(data, "big")
    if value >> bitwidth:
        shown = data[:32].hex() + (f"... ({len(data)} bytes)" if len(data) > 32 else "")
        raise out_of_range(f"{what}: value 0x{shown} does not fit in {bitwidth} bits")
    return value


def encode(value: int, bitwidth: int | None = None) -> bytes:
    """Canonical bytestring of a non-negative value (bitwidth only checked, not padded)."""
    if value < 0:
        raise ValueError(f"negative value {value}")
    if bitwidth is not None and value >> bitwidth:
        raise ValueError(f"value {value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, bitwidth: int) -> bytes:
    """Full-width big-endian bytes (what packet headers carry)."""
    return value.to_bytes((bitwidth + 7) // 8, "big")

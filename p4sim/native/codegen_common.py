"""What every part of the C generator shares: C literals and widths, hash ids, and the
exception that sends a pipeline back to the interpreter.
"""

from __future__ import annotations

from p4sim.frontend.types import (
    Bits,
    BoolT,
    EnumT,
    HeaderT,
    InfInt,
    bit_width,
    flattened_fields,
)

HASH_IDS = {"crc16": 0, "crc32": 1, "csum16": 2, "xor16": 3, "identity": 4}
HASH_IDS |= {"crc16_custom": 0, "crc32_custom": 1}  # BMv2's defaults: engine/externs.py


HIT = 1 << 31


class Unsupported(Exception):
    def __init__(self, pos, what: str):
        super().__init__(f"{pos}: {what}" if pos else what)
        self.pos = pos
        self.what = what


def _w(t) -> int:
    """A scalar's width in bits (the front end's bit_width), or a header's struct field's;
    32 for the others, which the C code holds in a uint32_t (error codes, enums without an
    underlying type)."""
    if (
        isinstance(t, (Bits, BoolT))
        or (isinstance(t, EnumT) and t.underlying is not None)
        or (isinstance(t, HeaderT) and t.kind == "struct")
    ):
        return bit_width(t)
    return 32


def header_leaves(t: HeaderT):
    """(C member path, type) of the serialised fields of header type t in packet order
    (`f_row.f_e` for a field of struct field `row`)."""
    for path, ft in flattened_fields(t):
        yield ".".join(f"f_{n}" for n in path), ft


def _lit(v: int, t) -> str:
    v = int(v)
    w = _w(t) if not isinstance(t, InfInt) else (64 if -(1 << 63) <= v < (1 << 63) else 128)
    signed = (isinstance(t, Bits) and t.signed) or isinstance(t, InfInt)
    if w <= 64:
        if signed:
            if v == -(1 << 63):
                return "(-INT64_C(9223372036854775807) - 1)"
            return f"INT64_C({v})"
        return f"UINT64_C({v & ((1 << 64) - 1):#x})"
    u = v & ((1 << 128) - 1)
    body = f"(((u128)UINT64_C({u >> 64:#x}) << 64) | UINT64_C({u & ((1 << 64) - 1):#x}))"
    return f"((s128){body})" if signed else body

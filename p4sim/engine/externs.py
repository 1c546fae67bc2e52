"""Stateful externs (register, counter, meter) and the hash/checksum algorithms of v1model.

Hash outputs are BMv2's: the data fields are packed MSB-first into a byte buffer (padded with
zero bits at the end to a whole byte), then
- crc16: CRC-16/ARC (poly 0x8005, reflected, init 0, xorout 0; check "123456789" = 0xBB3D)
- crc32: CRC-32 as in Ethernet/zlib (reflected 0x04C11DB7, init and xorout 0xFFFFFFFF)
- csum16: the Internet checksum (RFC 1071) of the buffer, odd length padded with a zero byte
- xor16: XOR of the 16-bit words of the buffer
- identity: the first 8 bytes of the buffer read as a big-endian integer
Fields of invalid headers are left out of the buffer, as BMv2's BufBuilder does.
"""

from __future__ import annotations

import time
import zlib

from p4sim.model import CounterDef, FieldMatch, MeterDef, RegisterDef, TableFull, ValueSetDef


class Register:
    """`register<T, I>`: implements `p4sim.model.RegisterState`. Cells are stored when first
    written (`values`: index -> value), so memory follows use, not the declared size."""

    def __init__(self, definition: RegisterDef, signed: bool = False):
        self.definition = definition
        self.values: dict[int, int] = {}
        self.mask = (1 << definition.bitwidth) - 1
        self.signed = signed

    def _check(self, index: int) -> None:
        if not 0 <= index < self.definition.size:
            raise IndexError(
                f"register {self.definition.name} index {index} is outside 0..{self.definition.size - 1}"
            )

    def read(self, index: int) -> int:
        self._check(index)
        return self.values.get(index, self.definition.initial_value) & self.mask

    def write(self, index: int, value: int) -> None:
        self._check(index)
        self.values[index] = value & self.mask


class ValueSet:
    """A parser value set: the members the control plane wrote (each a FieldMatch per field
    name; a ternary, LPM or range field left out matches anything). A select case on it
    matches when any member matches every select value."""

    def __init__(self, definition: ValueSetDef):
        self.definition = definition
        self.members: list[dict[str, FieldMatch]] = []
        self._checks: list[list[tuple]] = []

    def write(self, members: list[dict[str, FieldMatch]]) -> None:
        """Replace every member (P4Runtime writes a value set as a whole)."""
        if len(members) > self.definition.size:
            raise TableFull(
                f"value set {self.definition.name} holds at most {self.definition.size} "
                f"members, got {len(members)}"
            )
        self.members = list(members)
        self._checks = [
            [_value_set_check(m.get(f.name), f.bitwidth) for f in self.definition.fields]
            for m in members
        ]

    def matches(self, values: list[int]) -> bool:
        for checks in self._checks:
            for v, (kind, a, b) in zip(values, checks):
                if kind == "m" and v & b != a or kind == "r" and not a <= v <= b:
                    break
            else:
                return True
        return False


def _value_set_check(m: FieldMatch | None, width: int) -> tuple:
    """A member's match on one field as (kind, a, b): "m" value & mask, "r" low..high."""
    full = (1 << width) - 1
    if m is None:
        return ("m", 0, 0)
    if m.kind == "range":
        return ("r", m.low, m.high)
    if m.kind == "ternary":
        return ("m", m.value & m.mask, m.mask)
    if m.kind == "lpm":
        mask = full ^ (full >> m.prefix_len) if m.prefix_len else 0
        return ("m", m.value & mask, mask)
    return ("m", m.value, full)  # exact, optional


class Counter:
    """`counter`: implements `p4sim.model.CounterState` (packets and bytes per index), stored
    from the first count (`cells`: index -> [packets, bytes])."""

    def __init__(self, definition: CounterDef):
        self.definition = definition
        self.cells: dict[int, list[int]] = {}

    def _check(self, index: int) -> None:
        if not 0 <= index < self.definition.size:
            raise IndexError(
                f"counter {self.definition.name} index {index} is outside 0..{self.definition.size - 1}"
            )

    def read(self, index: int) -> tuple[int, int]:
        self._check(index)
        packets, bytes_ = self.cells.get(index, (0, 0))
        return packets, bytes_

    def write(self, index: int, packets: int, bytes_: int) -> None:
        self._check(index)
        self.cells[index] = [packets, bytes_]

    def count(self, index: int, length: int) -> None:
        # BMv2 ignores a count() with an index outside the array (it logs an error).
        if 0 <= index < self.definition.size:
            cell = self.cells.get(index)
            if cell is None:
                cell = self.cells[index] = [0, 0]
            cell[0] += 1
            cell[1] += length


GREEN, YELLOW, RED = 0, 1, 2


class Meter:
    """`meter` / `direct_meter`: a two-rate three-color marker (RFC 2698), like BMv2's.

    Unconfigured meters mark everything GREEN (BMv2 behaviour). Rates are units per second
    (packets or bytes, by the meter's type); bursts are units.
    """

    def __init__(self, definition: MeterDef, clock=time.monotonic):
        self.definition = definition
        self.clock = clock
        self.configs: dict[int, tuple[int, int, int, int]] = {}
        self.state: dict[int, list[float]] = {}  # index -> [Tc, Tp, last time]

    def set_config(self, index: int, config: tuple[int, int, int, int] | None) -> None:
        if config is None:
            self.configs.pop(index, None)
            self.state.pop(index, None)
            return
        _, cburst, _, pburst = config
        self.configs[index] = config
        self.state[index] = [float(cburst), float(pburst), self.clock()]

    def get_config(self, index: int):
        return self.configs.get(index)

    def execute(self, index: int, size: int) -> int:
        cfg = self.configs.get(index)
        if cfg is None:
            return GREEN
        return self._mark(cfg, self.state[index], size)

    def execute_entry(self, rec, config, size: int) -> int:
        """Direct meters: the configuration lives on the table entry, the bucket state on
        the table's record of it (`rec.meter_state`)."""
        if config is None:
            return GREEN
        st = rec.meter_state
        if st is None or st[3] != config:
            st = rec.meter_state = [float(config[1]), float(config[3]), self.clock(), config]
        return self._mark(config, st, size)

    def _mark(self, cfg, st, size: int) -> int:
        cir, cburst, pir, pburst = cfg
        now = self.clock()
        dt = now - st[2]
        st[2] = now
        st[0] = min(cburst, st[0] + cir * dt)
        st[1] = min(pburst, st[1] + pir * dt)
        if st[1] < size:
            return RED
        if st[0] < size:
            st[1] -= size
            return YELLOW
        st[0] -= size
        st[1] -= size
        return GREEN


# --------------------------------------------------------------------------- hashing
def pack_fields(fields: list[tuple[int, int]]) -> bytes:
    """(value, width) pairs, MSB first, into bytes padded with zero bits at the end."""
    acc, bits = 0, 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        bits += width
    pad = (-bits) % 8
    return (acc << pad).to_bytes((bits + pad) // 8, "big")


def _crc16_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC16 = _crc16_table()


def crc16(data: bytes) -> int:
    crc = 0
    for b in data:
        crc = (crc >> 8) ^ _CRC16[(crc ^ b) & 0xFF]
    return crc


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    r = 0
    for i in range(0, len(data), 2):
        r ^= int.from_bytes(data[i : i + 2], "big")
    return r


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")  # BMv2: the first 8 bytes of the buffer


# HashAlgorithm member -> function over bytes. BMv2 starts crc16_custom and crc32_custom
# with the parameters of crc16 and crc32 (bm_sim/calculations.cpp, crc_custom_init); only
# its Thrift CLI (set_crc16_parameters), which p4sim does not serve, changes them. `random`
# is not deterministic: rejected.
HASH_ALGORITHMS = {
    "crc16": crc16,
    "crc32": crc32,
    "crc16_custom": crc16,
    "crc32_custom": crc32,
    "csum16": csum16,
    "xor16": xor16,
    "identity": identity,
}

"""The externs of tna.p4 (Tofino 1), compiled for one TnaDevice.

Each `compile_*` returns a closure over the device, as `p4sim.v1model.externs` does. State
that lives for one packet (a Checksum's running sum) is kept on the packet (`device.cur`).
"""

from __future__ import annotations

from p4sim.engine.control import ReturnSignal
from p4sim.engine.externs import GREEN, RED, YELLOW, csum16, pack_fields
from p4sim.errors import unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import EnumT

# Meter colours: the engine's marker gives GREEN/YELLOW/RED = 0/1/2; TNA's MeterColor_t
# encodes them as 0, 1 and 3.
TNA_COLOR = {GREEN: 0, YELLOW: 1, RED: 3}
COLOR_FROM_TNA = {0: GREEN, 1: YELLOW, 3: RED, 2: YELLOW}


def crc(width: int, poly: int, reversed_: bool, init: int, xor: int):
    """A CRC over bytes with a `width`-bit polynomial (without its top bit), as the Tofino
    compiler's CRCPolynomial(coeff, reversed, msb = false, extended = false, init, xor)."""
    mask = (1 << width) - 1
    if reversed_:
        rpoly = int(f"{poly:0{width}b}"[::-1], 2)

        def crc_reflected(data: bytes) -> int:
            c = init
            for b in data:
                c ^= b
                for _ in range(8):
                    c = (c >> 1) ^ rpoly if c & 1 else c >> 1
            return (c ^ xor) & mask

        return crc_reflected
    top = 1 << (width - 1)

    def crc_normal(data: bytes) -> int:
        c = init
        for b in data:
            for i in range(7, -1, -1):
                bit = (b >> i) & 1
                c = ((c << 1) & mask) ^ poly if bool(c & top) ^ bit else (c << 1) & mask
        return (c ^ xor) & mask

    return crc_normal


def identity(data: bytes) -> int:
    return int.from_bytes(data, "big") if data else 0


def xor_words(width: int):
    def xor_(data: bytes) -> int:
        n = width // 8
        data += bytes(-len(data) % n)
        r = 0
        for i in range(0, len(data), n):
            r ^= int.from_bytes(data[i : i + n], "big")
        return r

    return xor_


# HashAlgorithm_t members p4sim computes; the CRCs are the Tofino tools' predefined crc_8,
# crc_16 and crc_32: CRC-8 (0x07), CRC-16/ARC (0x8005 reflected), CRC-32 (Ethernet's).
TNA_HASHES = {
    "IDENTITY": identity,
    "XOR8": xor_words(8),
    "XOR16": xor_words(16),
    "XOR32": xor_words(32),
    "CRC8": crc(8, 0x07, False, 0, 0),
    "CRC16": crc(16, 0x8005, True, 0, 0),
    "CRC32": crc(32, 0x04C11DB7, True, 0xFFFFFFFF, 0xFFFFFFFF),
}


class TnaExterns:
    def __init__(self, device):
        self.dev = device

    def enum_member(self, enum: str, value: int) -> str:
        return self.dev.program.checker.scope.lookup(enum).type.members[value]

    # -- functions --------------------------------------------------------------------
    def compile_function(self, c, e: ir.Call, name: str):
        if name in ("min", "max"):
            a, b = c.arg(e, 0), c.arg(e, 1)
            pick = min if name == "min" else max
            return lambda f: pick(a(f), b(f))
        raise unsupported(e.pos, f"the TNA extern function {name}")

    # -- objects ----------------------------------------------------------------------
    def compile_method(self, c, e: ir.Call, kind: str, name: str, obj, inst):
        method = getattr(self, f"_{kind}_{name}", None)
        if method is None:
            raise unsupported(e.pos, f"the TNA extern method {kind}.{name}")
        return method(c, e, obj, inst)

    def _Counter_count(self, c, e, obj, inst):
        idx = c.arg(e, 0)
        adjust = c.arg(e, 1) if len(e.args) > 1 and e.args[1].value is not None else None
        count, dev = obj.count, self.dev
        if adjust is None:
            return lambda f: count(idx(f), dev.cur.length)
        # tofino1_base.p4: adjust_byte_count is subtracted (p4c-barefoot programs the
        # counter's bytecount_adjust as its negative).
        return lambda f: count(idx(f), max(dev.cur.length - adjust(f), 0))

    def _DirectCounter_count(self, c, e, obj, inst):
        return lambda f: None  # the table counts the entry it hits (as v1model's)

    def _Register_read(self, c, e, obj, inst):
        idx = c.arg(e, 0)
        return lambda f: register_cell(obj, idx(f))

    def _Register_write(self, c, e, obj, inst):
        idx, val = c.arg(e, 0), c.arg(e, 1)

        def write(f):
            i = idx(f)
            if 0 <= i < obj.definition.size:
                obj.values[i] = val(f) & obj.mask

        return write

    def _RegisterAction_execute(self, c, e, obj, inst):
        """`ra.execute(index)`: the cell of the Register the action was built on; an index
        outside the register reads 0 and writes nothing."""
        reg = self.dev.extern_object(c.node, inst.ctor_args[0])
        idx = c.arg(e, 0)
        values, size, mask = reg.values, reg.definition.size, reg.mask
        initial = reg.definition.initial_value

        def load(f):
            i = idx(f)
            return (i, values.get(i, initial)) if 0 <= i < size else (None, 0)

        def store(i, value):
            if i is not None:
                values[i] = value & mask

        return self.run_apply(c, inst, load, store)

    def _DirectRegisterAction_execute(self, c, e, obj, inst):
        """`dra.execute()` in an action of the table the DirectRegister belongs to: the cell of
        the entry that hit (on a miss there is none: it reads 0 and writes nothing)."""
        load, store = self.direct_cell(inst.ctor_args[0])
        return self.run_apply(c, inst, lambda f: load(), store)

    def _DirectRegister_read(self, c, e, obj, inst):
        load, _ = self.direct_cell(inst)
        return lambda f: load()[1]

    def _DirectRegister_write(self, c, e, obj, inst):
        load, store = self.direct_cell(inst)
        val = c.arg(e, 0)
        return lambda f: store(load()[0], val(f))

    def direct_cell(self, reg):
        """load() -> (entry record or None, value) and store(record, value) for the cells a
        DirectRegister keeps on its table's entries, starting at its initial value."""
        initial = reg.ctor_args[0] if reg.ctor_args else 0
        mask = (1 << reg.binding["T"].width) - 1
        dev = self.dev

        def load():
            rec = dev.hit
            if rec is None:
                return None, 0
            return rec, initial if rec.register_cell is None else rec.register_cell

        def store(rec, value):
            if rec is not None:
                rec.register_cell = value & mask

        return load, store

    def run_apply(self, c, inst, load, store):
        """A register action's execute: load the cell, run `apply(inout value, out rv)`,
        store the value, return rv, in one step (the stateful ALU's atomic update; the
        device lock makes it atomic for the control plane too)."""
        apply = inst.methods["apply"]  # the type checker requires it
        body = c.block(apply.body.stmts)
        value_slot = apply.params[0].var.slot
        rv_slot = apply.params[1].var.slot if len(apply.params) > 1 else None

        def execute(f):
            where, f[value_slot] = load(f)
            if rv_slot is not None:
                f[rv_slot] = 0
            try:
                body(f)
            except ReturnSignal:
                pass
            store(where, f[value_slot])
            return f[rv_slot] if rv_slot is not None else None

        return execute

    def _Hash_get(self, c, e, obj, inst):
        algo = self.enum_member("HashAlgorithm_t", inst.ctor_args[0])
        fn = custom_crc(e, inst.ctor_args[1]) if algo == "CUSTOM" else TNA_HASHES.get(algo)
        if fn is None:
            raise unsupported(
                e.pos,
                f"Hash with HashAlgorithm_t.{algo} (p4sim computes {', '.join(TNA_HASHES)} "
                "and CUSTOM with a CRCPolynomial)",
            )
        data = c.field_list(e.args[0].value, copy_in=True)
        width = inst.binding["W"].width
        mask = (1 << width) - 1
        return lambda f: fn(pack_fields(data(f))) & mask

    def _Random_get(self, c, e, obj, inst):
        width = inst.binding["W"].width
        rng = self.dev.rng
        return lambda f: rng.getrandbits(width)

    def _Meter_execute(self, c, e, obj, inst):
        idx = c.arg(e, 0)
        bytes_unit = obj.definition.unit == "bytes"
        dev = self.dev
        execute = obj.execute
        # execute(index, color) with a colour: color-aware, the result is never better
        colored = len(e.args) > 1 and isinstance(e.args[1].value.type, EnumT)
        color = c.arg(e, 1) if colored else None

        def meter(f):
            mark = execute(idx(f), dev.cur.length if bytes_unit else 1)
            if color is not None:
                mark = max(mark, COLOR_FROM_TNA.get(color(f), RED))
            return TNA_COLOR[mark]

        return meter

    # Checksum: a running ones'-complement sum per packet (add/subtract), read by get()
    # and verify(); update(data) is the checksum of data alone (the deparser's use).
    def _checksum_sum(self, inst):
        sums = self.dev.cur.checksums
        return sums.get(id(inst), 0)

    def _Checksum_add(self, c, e, obj, inst):
        return self._checksum_step(c, e, inst, 1)

    def _Checksum_subtract(self, c, e, obj, inst):
        return self._checksum_step(c, e, inst, -1)

    def _checksum_step(self, c, e, inst, sign: int):
        data = c.field_list(e.args[0].value)
        dev, key = self.dev, id(inst)

        def step(f):
            word = (~csum16(pack_fields(data(f)))) & 0xFFFF  # the data's ones'-complement sum
            if sign < 0:
                word = (~word) & 0xFFFF
            s = dev.cur.checksums.get(key, 0) + word
            dev.cur.checksums[key] = (s & 0xFFFF) + (s >> 16)

        return step

    def _Checksum_get(self, c, e, obj, inst):
        return lambda f: (~self._checksum_sum(inst)) & 0xFFFF

    def _Checksum_verify(self, c, e, obj, inst):
        # The data added includes the checksum field: a correct one sums to 0xFFFF.
        return lambda f: self._checksum_sum(inst) in (0xFFFF,)

    def _Checksum_update(self, c, e, obj, inst):
        data = c.field_list(e.args[0].value)
        return lambda f: csum16(pack_fields(data(f)))


def custom_crc(e: ir.Call, poly):
    """The CRC of `Hash(HashAlgorithm_t.CUSTOM, CRCPolynomial<T>(coeff, reversed, msb,
    extended, init, xor))`: T's width, the polynomial without its top bit."""
    coeff, reversed_, msb, extended, init, xor = poly.ctor_args
    if msb or extended:
        raise unsupported(e.pos, "a CRCPolynomial with msb or extended set")
    width = poly.binding["T"].width
    return crc(width, coeff, bool(reversed_), init, xor)


def register_cell(reg, index: int) -> int:
    """A Register cell as the data plane reads it (an index outside the array reads 0)."""
    if 0 <= index < reg.definition.size:
        return reg.values.get(index, reg.definition.initial_value)
    return 0

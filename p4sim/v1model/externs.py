"""The extern functions and objects of v1model.p4, compiled for one device.

Each `compile_*` returns a closure over the device (`compile_function` through the
`<function>_fn` method that EXTERN_FUNCTIONS names); calls that affect the traffic manager
(clone, resubmit, recirculate, truncate) record a request on the packet being processed
(`device.cur`), which the pipeline honours at the end of ingress/egress as BMv2 does.
"""

from __future__ import annotations

import logging

from p4sim.engine.externs import HASH_ALGORITHMS, pack_fields
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import Bits, EnumT

log = logging.getLogger("p4sim.log_msg")

DROP_PORT = 511
MASK64 = (1 << 64) - 1  # BMv2 computes hash() offsets in uint64_t


class AssertionFailed(Exception):
    """assert()/assume() failed: BMv2 aborts; p4sim drops the packet and logs an error."""


class V1ModelExterns:
    def __init__(self, device):
        self.dev = device

    # -- helpers ----------------------------------------------------------------------
    def algorithm(self, e: ir.Expr) -> str:
        if e.const is None or not isinstance(e.type, EnumT) or e.type.enum_name != "HashAlgorithm":
            raise P4Error.at(e.pos, "the hash algorithm must be a constant HashAlgorithm member")
        name = e.type.members[e.const]
        if name not in HASH_ALGORITHMS:
            raise P4Error.at(
                e.pos,
                f"HashAlgorithm.{name} is not supported by p4sim (supported: {', '.join(HASH_ALGORITHMS)})",
            )
        return name

    # -- functions --------------------------------------------------------------------
    def compile_function(self, c, e: ir.Call, name: str):
        rule = EXTERN_FUNCTIONS.get(name)
        if rule is None:
            raise unsupported(e.pos, f"extern function {name}")
        return rule(self, c, e, name)

    def mark_to_drop_fn(self, c, e: ir.Call, name: str):
        if not e.args:
            return self.kept_by_no_compiler_fn(c, e, name)
        sm = self.dev.sm_index
        g = c.arg(e, 0)
        spec, grp = sm["egress_spec"], sm["mcast_grp"]

        def mark_to_drop(f):
            s = g(f)
            s.v[spec] = DROP_PORT
            s.v[grp] = 0

        return mark_to_drop

    def hash_fn(self, c, e: ir.Call, name: str):
        out = c.out_arg(e, 0)
        algo = HASH_ALGORITHMS[self.algorithm(e.args[1].value)]
        base = c.arg(e, 2)
        data = c.field_list(e.args[3].value, copy_in=True)
        mx = c.arg(e, 4)

        def hash_(f):
            h = algo(pack_fields(data(f)))
            # BMv2: (h % max) + base in 64-bit arithmetic (max and base cut to their low
            # 64 bits), and a max of 0 is treated as 1.
            out(f, ((h % ((mx(f) & MASK64) or 1)) + (base(f) & MASK64)) & MASK64)

        return hash_

    def random_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        out = c.out_arg(e, 0)
        lo, hi = c.arg(e, 1), c.arg(e, 2)
        rng = dev.rng

        def random_(f):
            a, b = lo(f), hi(f)
            out(f, rng.randint(a, b) if a <= b else a)

        return random_

    def verify_checksum_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        sm = dev.sm_index
        cond = c.arg(e, 0)
        data = c.field_list(e.args[1].value)
        chk = c.arg(e, 2)
        algo = HASH_ALGORITHMS[self.algorithm(e.args[3].value)]
        with_payload = name.endswith("payload")
        cerr = sm["checksum_error"]

        def verify_checksum(f):
            if cond(f):
                buf = pack_fields(data(f))
                if with_payload:
                    buf += dev.cur.payload
                if algo(buf) != chk(f):
                    dev.cur.sm.v[cerr] = 1

        return verify_checksum

    def update_checksum_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        cond = c.arg(e, 0)
        data = c.field_list(e.args[1].value)
        out = c.out_arg(e, 2)
        algo = HASH_ALGORITHMS[self.algorithm(e.args[3].value)]
        with_payload = name.endswith("payload")

        def update_checksum(f):
            if cond(f):
                buf = pack_fields(data(f))
                if with_payload:
                    buf += dev.cur.payload
                out(f, algo(buf))

        return update_checksum

    def clone_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        ctype = c.arg(e, 0)
        session = c.arg(e, 1)
        fl = None
        if name == "clone_preserving_field_list":
            fl = e.args[2].value.const
            if fl is None:
                raise P4Error.at(e.args[2].pos, "the field list index must be a constant")

        def clone(f):
            cur = dev.cur
            cur.clone_type = ctype(f)
            cur.clone_session = session(f)
            cur.clone_fields = dev.field_list(fl)

        return clone

    def request_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        fl = e.args[0].value.const
        if fl is None:
            raise P4Error.at(e.args[0].pos, "the field list index must be a constant")
        fields = dev.field_list(fl)
        attr = "resubmit_fields" if name.startswith("resubmit") else "recirculate_fields"

        def request(f):
            setattr(dev.cur, attr, fields)

        return request

    def kept_by_no_compiler_fn(self, c, e: ir.Call, name: str):
        """resubmit/recirculate/clone3(data), mark_to_drop() and Checksum16.get: the front end
        refuses every call p4c keeps (typecheck/targets.py, REFUSED_V1MODEL_CALLS), so the
        calls left are in code that never runs (`if (false)`, an action never used)."""
        return lambda f: None

    def truncate_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        g = c.arg(e, 0)

        def truncate(f):
            dev.cur.truncate = g(f)

        return truncate

    def assertion_fn(self, c, e: ir.Call, name: str):
        g = c.arg(e, 0)
        pos = e.pos

        def check(f):
            if not g(f):
                raise AssertionFailed(f"{name} failed at {pos}")

        return check

    def log_msg_fn(self, c, e: ir.Call, name: str):
        msg = e.args[0].value.const
        data = c.field_list(e.args[1].value) if len(e.args) > 1 else (lambda f: [])

        def log_msg(f):
            if log.isEnabledFor(logging.INFO):
                vals = [v for v, _ in data(f)]
                text = msg
                for v in vals:
                    text = text.replace("{}", str(v), 1)
                log.info("%s", text)

        return log_msg

    def digest_fn(self, c, e: ir.Call, name: str):
        dev = self.dev
        receiver = c.arg(e, 0)
        arg = e.args[1].value
        data = c.field_list(arg)
        tname = getattr(e, "digest_name", "digest")  # the front end's: P4Info's name

        def digest(f):
            dev.digests.append((tname, receiver(f), [v for v, _ in data(f)]))

        return digest

    # -- objects ----------------------------------------------------------------------
    def compile_method(self, c, e: ir.Call, kind: str, name: str, obj, inst):
        dev = self.dev
        if kind == "register":
            idx = c.arg(e, 1 if name == "read" else 0)
            if name == "read":
                out = c.out_arg(e, 0)
                values = obj.values  # sparse: cells never written read 0
                size = obj.definition.size
                conv = _elem_conv(inst)

                def reg_read(f):
                    i = idx(f)
                    # BMv2 reports an out-of-bounds index as an error; p4sim reads 0.
                    out(f, conv(values.get(i, 0)) if 0 <= i < size else 0)

                return reg_read
            if name == "write":
                val = c.arg(e, 1)
                values = obj.values
                size = obj.definition.size
                mask = obj.mask

                def reg_write(f):
                    i = idx(f)
                    if 0 <= i < size:
                        values[i] = val(f) & mask

                return reg_write
        if kind == "counter" and name == "count":
            idx = c.arg(e, 0)
            count = obj.count
            return lambda f: count(idx(f), dev.cur.length)
        if kind == "direct_counter" and name == "count":
            return lambda f: None  # BMv2 counts direct counters on every hit by itself
        if kind == "meter" and name == "execute_meter":
            idx = c.arg(e, 0)
            out = c.out_arg(e, 1)
            bytes_unit = obj.definition.unit == "bytes"
            execute = obj.execute

            def execute_meter(f):
                out(f, execute(idx(f), dev.cur.length if bytes_unit else 1))

            return execute_meter
        if kind == "direct_meter" and name == "read":
            out = c.out_arg(e, 0)
            mname = obj.definition.name
            return lambda f: out(f, dev.cur.direct_colors.get(mname, 0))
        if kind == "Checksum16" and name == "get":
            return self.kept_by_no_compiler_fn(c, e, name)
        raise unsupported(e.pos, f"{kind}.{name}")


def _elem_conv(inst):
    t = inst.binding.get("T")
    if isinstance(t, Bits) and t.signed:
        return t.wrap
    return lambda v: v


# v1model's extern functions: name -> the method compiling a call of it into a closure.
EXTERN_FUNCTIONS = {
    "mark_to_drop": V1ModelExterns.mark_to_drop_fn,
    "hash": V1ModelExterns.hash_fn,
    "random": V1ModelExterns.random_fn,
    "verify_checksum": V1ModelExterns.verify_checksum_fn,
    "verify_checksum_with_payload": V1ModelExterns.verify_checksum_fn,
    "update_checksum": V1ModelExterns.update_checksum_fn,
    "update_checksum_with_payload": V1ModelExterns.update_checksum_fn,
    "clone": V1ModelExterns.clone_fn,
    "clone3": V1ModelExterns.kept_by_no_compiler_fn,
    "clone_preserving_field_list": V1ModelExterns.clone_fn,
    "resubmit": V1ModelExterns.kept_by_no_compiler_fn,
    "resubmit_preserving_field_list": V1ModelExterns.request_fn,
    "recirculate": V1ModelExterns.kept_by_no_compiler_fn,
    "recirculate_preserving_field_list": V1ModelExterns.request_fn,
    "truncate": V1ModelExterns.truncate_fn,
    "assert": V1ModelExterns.assertion_fn,
    "assume": V1ModelExterns.assertion_fn,
    "log_msg": V1ModelExterns.log_msg_fn,
    "digest": V1ModelExterns.digest_fn,
}

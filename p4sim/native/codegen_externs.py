"""C for packet_in/packet_out and the v1model externs (registers, counters, meters, hashes,
checksums, digests, clone/resubmit/recirculate).
"""

from __future__ import annotations

from p4sim.errors import P4Error
from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Instance
from p4sim.frontend.typecheck.targets import REFUSED_V1MODEL_CALLS
from p4sim.frontend.types import (
    Bits,
    BoolT,
    EnumT,
    ErrorT,
    HeaderT,
    StackT,
    Varbit,
)
from p4sim.native.codegen_common import HASH_IDS, Unsupported, _w, header_leaves


class ExternGen:
    """A part of CodeGen: packet I/O and externs."""

    def packet_in(self, e: ir.Call, pre: list) -> str:
        name = e.method.name
        too_short = self.errors["PacketTooShort"]
        if name == "extract":
            if len(e.args) != 1:
                raise Unsupported(e.pos, "extract with a size (varbit)")
            target = e.args[0].value
            if target is None:  # extract<H>(_): H's bytes are checked and skipped
                return self.extract_dont_care(e, pre)
            t = target.type
            if not isinstance(t, HeaderT) or t.kind != "header":
                raise Unsupported(e.pos, f"extract into {t}")
            stack_next = (
                isinstance(target, ir.Member)
                and isinstance(target.expr.type, StackT)
                and target.name == "next"
            )
            siblings = "" if stack_next else self.union_siblings(target, pre)
            if stack_next:
                st = self.lvalue(target.expr, pre)
                pre.append(
                    f"if ({st}.next >= {target.expr.type.size}) return {self.errors['StackOutOfBounds']};"
                )
                h = f"{st}.e[{st}.next]"
            else:
                h = self.lvalue(target, pre)
            bits = sum(_w(ft) for _, ft in t.fields)
            if any(isinstance(ft, Varbit) for _, ft in t.fields):
                raise Unsupported(e.pos, "varbit")
            if bits % 8:
                raise P4Error.at(target.pos, f"header {t.type_name} is not a whole number of bytes")
            n = bits // 8
            sets = self.unpack(t, h, "q")
            pre.append(
                f"if (P->pos + {n} > P->len) {{ {h}.valid = 0; return {too_short}; }}"
                f" {{ const uint8_t *q = P->data + P->pos; {sets} {h}.valid = 1; P->pos += {n}; }}"
            )
            if stack_next:
                pre.append(f"{st}.next++;")
            if siblings:
                pre.append(siblings)
            union = target.expr if isinstance(target, ir.Member) else None
            if (
                isinstance(union, ir.Member)
                and union.name == "next"
                and isinstance(union.expr.type, StackT)
            ):  # a member of a stack of header unions: the element is complete, move on
                pre.append(f"{self.lvalue(union.expr, pre)}.next++;")
            return "0"
        if name == "lookahead":
            t = e.targs[0]
            if not isinstance(t, (Bits, BoolT)):
                raise Unsupported(e.pos, f"lookahead of {t}")
            w = _w(t)
            if w > 64:
                raise Unsupported(e.pos, "lookahead wider than 64 bits")
            n = (w + 7) // 8
            r = self.new_tmp()
            conv = (
                f"sext(getbits(P->data + P->pos, 0, {w}), {w})"
                if isinstance(t, Bits) and t.signed
                else f"getbits(P->data + P->pos, 0, {w})"
            )
            pre.append(f"if (P->pos + {n} > P->len) return {too_short};")
            pre.append(f"{self.ctype(t)} {r} = {conv};")
            return r
        if name == "advance":
            v = self.expr(e.args[0].value, pre)
            tb = self.new_tmp()
            pre.append(f"uint64_t {tb} = (uint64_t){v};")
            pre.append(f"if ({tb} % 8) return {self.errors['ParserInvalidArgument']};")
            pre.append(f"if (P->pos + {tb} / 8 > P->len) return {too_short};")
            pre.append(f"P->pos += {tb} / 8;")
            return "0"
        if name == "length":
            return "((uint64_t)P->len)"
        raise Unsupported(e.pos, f"packet_in.{name}")

    def extract_dont_care(self, e: ir.Call, pre: list) -> str:
        t = e.targs[0] if e.targs else None
        if not (isinstance(t, HeaderT) and t.kind == "header"):
            raise Unsupported(e.pos, "extract into _ without a header type argument")
        if any(isinstance(ft, Varbit) for _, ft in t.fields):
            raise Unsupported(e.pos, "varbit")
        n = sum(_w(ft) for _, ft in t.fields) // 8
        pre.append(f"if (P->pos + {n} > P->len) return {self.errors['PacketTooShort']};")
        pre.append(f"P->pos += {n};")
        return "0"

    def unpack(self, t: HeaderT, h: str, src: str) -> str:
        out, off = [], 0
        for member, ft in header_leaves(t):
            w = _w(ft)
            if w > 64:
                v = f"getbits128({src}, {off}, {w})"
                if isinstance(ft, Bits) and ft.signed:
                    v = f"sext128({v}, {w})"
            else:
                v = f"getbits({src}, {off}, {w})"
                if isinstance(ft, Bits) and ft.signed:
                    v = f"sext({v}, {w})"
            out.append(f"{h}.{member} = {v};")
            off += w
        return " ".join(out)

    def pack(self, t: HeaderT, h: str, dst: str) -> str:
        out, off = [], 0
        for member, ft in header_leaves(t):
            w = _w(ft)
            if w > 64:
                out.append(f"putbits128({dst}, {off}, {w}, (u128){h}.{member});")
            else:
                out.append(f"putbits({dst}, {off}, {w}, (uint64_t){h}.{member});")
            off += w
        return " ".join(out)

    def emit(self, value: str, t, pos, pre: list) -> list[str]:
        if isinstance(t, HeaderT) and t.kind == "header":
            bits = sum(_w(ft) for _, ft in t.fields)
            if any(isinstance(ft, Varbit) for _, ft in t.fields):
                raise Unsupported(pos, "varbit")
            n = bits // 8
            code = (
                f"if ({value}.valid) {{ uint8_t *q = header_room(D, P->out_len, {n}); "
                f"if (!q) {{ P->stop = STOP_ABORT; {self.stop_check()} }} memset(q, 0, {n}); "
                f"{self.pack(t, value, 'q')} P->out_len += {n}; }}"
            )
            return [code]
        if isinstance(t, HeaderT) and t.kind in ("struct", "header_union"):
            out = []
            for fname, ft in t.fields:
                out += self.emit(f"{value}.f_{fname}", ft, pos, pre)
            return out
        if isinstance(t, StackT):
            out = []
            for i in range(t.size):
                out += self.emit(f"{value}.e[{i}]", t.elem, pos, pre)
            return out
        raise Unsupported(pos, f"emit of {t}")

    def extern_method(self, e: ir.Call, pre: list) -> str:
        inst: Instance = e.target
        kind = inst.type.decl.name
        name = e.method.name
        if kind == "packet_in":
            self.packet_in(e, pre)
            return ";"
        if kind == "packet_out":
            if name != "emit":
                raise Unsupported(e.pos, f"packet_out.{name}")
            arg = e.args[0].value
            v = self.expr(arg, pre)
            return " ".join(self.emit(v, arg.type, arg.pos, pre))
        obj_name = self.node.externs.get(inst)
        if kind == "register":
            i = [r for r in self.registers].index(obj_name)
            t = inst.binding.get("T")
            if isinstance(t, EnumT) and t.underlying is not None:
                t = t.underlying  # a serializable enum's value is its underlying bits here
            if not isinstance(t, Bits) or t.width > 64:
                raise Unsupported(e.pos, f"register of {t}")
            if name == "read":
                idx = self.expr(e.args[1].value, pre)
                ti = self.new_tmp()
                pre.append(f"uint64_t {ti} = (uint64_t){idx};")
                v = f"({ti} < D->regs[{i}].size ? D->regs[{i}].v[{ti}] : 0)"
                if t.signed:
                    v = f"sext({v}, {t.width})"
                return self.out_store(e.args[0].value, v, pre)
            if name == "write":
                idx = self.expr(e.args[0].value, pre)
                val = self.expr(e.args[1].value, pre)
                ti = self.new_tmp()
                pre.append(f"uint64_t {ti} = (uint64_t){idx};")
                return f"if ({ti} < D->regs[{i}].size) D->regs[{i}].v[{ti}] = (uint64_t)({val}) & D->regs[{i}].mask;"
        if kind == "counter" and name == "count":
            i = self.counters.index(obj_name)
            idx = self.expr(e.args[0].value, pre)
            ti = self.new_tmp()
            pre.append(f"uint64_t {ti} = (uint64_t){idx};")
            return f"if ({ti} < D->ctrs[{i}].size) {{ D->ctrs[{i}].packets[{ti}]++; D->ctrs[{i}].bytes[{ti}] += P->length; }}"
        if kind == "direct_counter" and name == "count":
            return ";"
        if kind == "meter" and name == "execute_meter":
            i = self.meters.index(obj_name)
            idx = self.expr(e.args[0].value, pre)
            unit = "P->length" if self.dev.meters[obj_name].definition.unit == "bytes" else "1"
            ti = self.new_tmp()
            pre.append(f"uint64_t {ti} = (uint64_t){idx};")
            v = f"({ti} < D->mtrs[{i}].size ? (uint64_t)meter_mark(&D->mtrs[{i}].cells[{ti}], {unit}) : 0)"
            return self.out_store(e.args[1].value, v, pre)
        if kind == "direct_meter" and name == "read":
            mi = self.direct_meter_index(obj_name)
            return self.out_store(e.args[0].value, f"(uint64_t)P->direct_colors[{mi}]", pre)
        raise Unsupported(e.pos, f"{kind}.{name}")

    def out_store(self, target: ir.Expr | None, value: str, pre: list) -> str:
        if target is None:
            return ";"
        t = target.type
        if isinstance(t, Bits):
            value = self.wrap(value, t)
        return self.store(target, value, pre)

    def field_data(
        self, e: ir.Expr, pre: list, guard: str | None = None, copy_in: bool = False
    ) -> list:
        """[(guard or None, C value, width)] flattened as the interpreter's field_list."""
        if isinstance(e, ir.ListExpr):
            out = []
            for x in e.items:
                out += self.field_data(x, pre, guard, copy_in)
            return out
        t = e.type
        if isinstance(t, HeaderT):
            v = self.expr(e, pre)
            g = guard
            if t.kind == "header":
                g = f"{v}.valid" if guard is None else f"({guard} && {v}.valid)"
            elif t.kind not in ("struct", "header_union"):
                raise Unsupported(e.pos, f"{t.kind} as hash or checksum data")
            out = []
            for fname, ft in t.fields:
                if isinstance(ft, (HeaderT, StackT)):
                    out += self.field_data_value(f"{v}.f_{fname}", ft, e.pos, g)
                else:
                    out.append((g, self.bits_value(f"{v}.f_{fname}", ft, e.pos), _w(ft)))
            return out
        # enums without a type and errors: 32 bits (_w), as in a struct above and in p4c-bm2-ss
        if isinstance(t, (Bits, BoolT, EnumT, ErrorT)):
            if (
                not copy_in
                and isinstance(e, ir.Member)
                and isinstance(e.expr.type, HeaderT)
                and e.expr.type.kind == "header"
            ):
                hv = self.expr(e.expr, pre)
                g = f"{hv}.valid" if guard is None else f"({guard} && {hv}.valid)"
                return [(g, self.bits_value(self.expr(e, pre), t, e.pos), _w(t))]
            return [(guard, self.bits_value(self.expr(e, pre), t, e.pos), _w(t))]
        raise Unsupported(e.pos, f"a value of type {t} as hash or checksum data")

    def field_data_value(self, v: str, t, pos, guard):
        if isinstance(t, StackT):
            out = []
            for i in range(t.size):
                out += self.field_data_value(f"{v}.e[{i}]", t.elem, pos, guard)
            return out
        if isinstance(t, HeaderT):
            g = guard
            if t.kind == "header":
                g = f"{v}.valid" if guard is None else f"({guard} && {v}.valid)"
            out = []
            for fname, ft in t.fields:
                out += self.field_data_value(f"{v}.f_{fname}", ft, pos, g)
            return out
        return [(guard, self.bits_value(v, t, pos), _w(t))]

    def bits_value(self, v: str, t, pos) -> str:
        if isinstance(t, BoolT):
            return f"(uint64_t)({v} ? 1 : 0)"
        if _w(t) > 64:
            return f"(u128)({v})"
        self.ctype(t, pos)
        return f"(uint64_t)({v})"

    def pack_data(self, data: list, pre: list) -> tuple[str, str]:
        """Emit code packing the data MSB-first into a buffer; returns (buffer, length)."""
        total = sum(w for _, _, w in data)
        buf, bits = self.new_tmp(), self.new_tmp()
        pre.append(
            f"uint8_t {buf}[{(total + 7) // 8 + 1}]; memset({buf}, 0, sizeof {buf}); unsigned {bits} = 0;"
        )
        for g, v, w in data:
            put = (
                f"putbits128({buf}, {bits}, {w}, {v});"
                if w > 64
                else f"putbits({buf}, {bits}, {w}, {v});"
            )
            step = f"{put} {bits} += {w};"
            pre.append(f"if ({g}) {{ {step} }}" if g else step)
        return buf, f"(({bits} + 7) / 8)"

    def algorithm(self, e: ir.Expr) -> int:
        if e.const is None or not isinstance(e.type, EnumT):
            raise Unsupported(e.pos, "a hash algorithm that is not a constant")
        name = e.type.members[e.const]
        if name not in HASH_IDS:
            raise Unsupported(e.pos, f"HashAlgorithm.{name}")
        return HASH_IDS[name]

    def extern_func(self, e: ir.Call, pre: list) -> str:
        name = e.target.name
        if name in REFUSED_V1MODEL_CALLS and (name != "mark_to_drop" or not e.args):
            return ";"  # only in code that never runs: the front end refuses the rest
        if name == "mark_to_drop":
            sm = self.lvalue(e.args[0].value, pre)
            return f"{sm}.f_egress_spec = 511; {sm}.f_mcast_grp = 0;"
        if name in (
            "verify_checksum",
            "verify_checksum_with_payload",
            "update_checksum",
            "update_checksum_with_payload",
        ):
            inner: list[str] = []
            cond = self.expr(e.args[0].value, inner)
            data = self.field_data(e.args[1].value, inner)
            algo = self.algorithm(e.args[3].value)
            buf, n = self.pack_data(data, inner)
            if name.endswith("payload"):
                s = self.new_tmp()
                inner.append(f"size_t {s}n = {n}; uint8_t *{s} = scratch(D, {s}n + P->plen + 1);")
                inner.append(f"if (!{s}) {{ P->stop = STOP_ABORT; {self.stop_check()} }}")
                inner.append(f"memcpy({s}, {buf}, {s}n); memcpy({s} + {s}n, P->payload, P->plen);")
                h = f"run_hash({algo}, {s}, {s}n + P->plen)"
            else:
                h = f"run_hash({algo}, {buf}, {n})"
            if name.startswith("verify"):
                chk = self.expr(e.args[2].value, inner)
                inner.append(f"if ({h} != (uint64_t)({chk})) P->sm.f_checksum_error = 1;")
            else:
                inner.append(self.out_store(e.args[2].value, h, inner))
            return f"if ({cond}) {{ {' '.join(inner)} }}"
        if name == "hash":
            algo = self.algorithm(e.args[1].value)
            base = self.expr(e.args[2].value, pre)
            data = self.field_data(e.args[3].value, pre, copy_in=True)
            mx = self.expr(e.args[4].value, pre)
            buf, n = self.pack_data(data, pre)
            h, m = self.new_tmp(), self.new_tmp()
            pre.append(
                f"uint64_t {h} = run_hash({algo}, {buf}, {n}); uint64_t {m} = (uint64_t)({mx});"
            )
            return self.out_store(
                e.args[0].value, f"(({h} % ({m} ? {m} : 1)) + (uint64_t)({base}))", pre
            )
        if name in ("clone", "clone_preserving_field_list"):
            ctype = self.expr(e.args[0].value, pre)
            session = self.expr(e.args[1].value, pre)
            if name == "clone_preserving_field_list":
                fl = e.args[2].value.const
                if fl is None:
                    raise Unsupported(e.args[2].pos, "a field list index that is not a constant")
                fid = self.field_list_id(self.dev.field_list(fl))
            else:
                fid = 0
            return f"P->clone_type = (int32_t)({ctype}); P->clone_session = (int64_t)({session}); P->clone_fields = {fid};"
        if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            fl = e.args[0].value.const
            if fl is None:
                raise Unsupported(e.args[0].pos, "a field list index that is not a constant")
            fid = self.field_list_id(self.dev.field_list(fl))
            attr = "resubmit_fields" if name.startswith("resubmit") else "recirc_fields"
            return f"P->{attr} = {fid};"
        if name == "truncate":
            return f"P->truncate = (uint32_t)({self.expr(e.args[0].value, pre)});"
        if name in ("assert", "assume"):
            c = self.expr(e.args[0].value, pre)
            return f"if (!({c})) {{ P->stop = STOP_ABORT; {self.stop_check()} }}"
        if name == "digest":
            receiver = self.expr(e.args[0].value, pre)
            arg = e.args[1].value
            data = self.field_data(arg, pre)
            if any(w > 64 for _, _, w in data) or len(data) > 32:
                raise Unsupported(
                    e.pos, "digest with a field wider than 64 bits or more than 32 fields"
                )
            tname = getattr(e, "digest_name", "digest")  # the front end's: P4Info's name
            di = len(self.digests)
            self.digests.append((tname, [w for _, _, w in data]))
            # Fields of invalid headers are left out, as the interpreter's field list does.
            puts = " ".join(
                f"if ({g}) dv[n++] = {v};" if g else f"dv[n++] = {v};" for g, v, _ in data
            )
            return f"{{ uint64_t dv[{len(data) + 1}]; uint32_t n = 0; {puts} add_digest(D, {di}, (uint32_t)({receiver}), dv, n); }}"
        if name == "verify":
            c = self.expr(e.args[0].value, pre)
            err = self.expr(e.args[1].value, pre)
            return f"if (!({c})) return (int)({err});"
        raise Unsupported(e.pos, f"extern function {name}")

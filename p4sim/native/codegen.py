"""From p4sim's typed IR to C: one function per parser, control, deparser, action and table.

Values: bit<W> up to 64 bits are uint64_t kept reduced to W bits, int<W> int64_t kept
sign-extended, 65..128 bits unsigned __int128 / __int128; bool, error and enums are integers.
Headers and structs are C structs (`valid` plus `f_<field>` members). Every parser, control
and top-level action or function has a frame struct whose members are the interpreter's frame
slots (`v<slot>`); parameters passed by reference are pointers. `exit` and run-time errors set
`P->stop` and every caller returns at once, so the C follows the interpreter's control flow.

Anything this generator does not translate raises `Unsupported(pos, construct)`; the native
engine then runs the interpreter for that pipeline and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4sim.engine.control import MAX_LOOP_ITERATIONS, calls_in_indices
from p4sim.engine.parser import MAX_TRANSITIONS
from p4sim.errors import P4Error
from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Instance, Var
from p4sim.frontend.types import (
    ApplyResultT,
    Bits,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    InfInt,
    StackT,
    TupleT,
    Varbit,
)

HASH_IDS = {"crc16": 0, "crc32": 1, "csum16": 2, "xor16": 3, "identity": 4}
HIT = 1 << 31


class Unsupported(Exception):
    def __init__(self, pos, what: str):
        super().__init__(f"{pos}: {what}" if pos else what)
        self.pos = pos
        self.what = what


@dataclass
class TableLayout:
    """How a table's key is laid out in 64-bit words, shared by the C and the loader."""

    name: str
    index: int
    key_words: list[tuple[int, int]]  # per key field: (first word, number of words)
    nwords: int
    exact_words: list[int]
    actions: list[str]  # action names in C switch order
    arg_words: dict[str, list[int]] = field(default_factory=dict)  # action -> words per param
    nargs: int = 0


def _w(t) -> int:
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    return 32


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


class CodeGen:
    def __init__(self, device):
        """`device` is the interpreter's V1ModelDevice for the program (its tables, registers,
        counters and meters give the names and sizes the C objects mirror)."""
        self.dev = device
        self.program = device.program
        self.errors = device.error_codes
        self.struct_names: dict[int, str] = {}
        self.struct_defs: list[str] = []
        self.frames: dict[int, dict] = {}  # id(owner) -> {slot: (ctype, is_ptr)}
        self.frame_names: dict[int, str] = {}
        self.protos: list[str] = []
        self.bodies: list[str] = []
        self.done: dict = {}
        self.tables: list[TableLayout] = []
        self.table_by_name: dict[str, TableLayout] = {}
        self.registers = list(device.registers)
        self.counters = list(device.counters)
        self.meters = list(device.meters)
        self.direct_meters: list[str] = []
        self.digests: list[tuple[str, list[int]]] = []  # (type name, field widths)
        self.field_lists: dict[tuple, int] = {(): 0}
        self.max_header_bytes = 0
        self.tmp = 0
        self.loops: list[str] = []  # labels of the enclosing for loops (break/continue)

    # ------------------------------------------------------------------ types
    def ctype(self, t, pos=None) -> str:
        if isinstance(t, Bits):
            if t.width > 128:
                raise Unsupported(pos, f"{t} (wider than 128 bits)")
            if t.width > 64:
                return "s128" if t.signed else "u128"
            return "int64_t" if t.signed else "uint64_t"
        if isinstance(t, (BoolT, ErrorT)):
            return "uint32_t"
        if isinstance(t, EnumT):
            return self.ctype(t.underlying, pos) if t.underlying is not None else "uint32_t"
        if isinstance(t, HeaderT):
            return "struct " + self.struct(t, pos)
        if isinstance(t, StackT):
            return "struct " + self.stack_struct(t, pos)
        if isinstance(t, Varbit):
            raise Unsupported(pos, "varbit")
        if isinstance(t, TupleT):
            raise Unsupported(pos, "tuple value")
        raise Unsupported(pos, f"value of type {t}")

    def struct(self, t: HeaderT, pos) -> str:
        name = self.struct_names.get(id(t))
        if name is not None:
            return name
        members = ["uint8_t valid;"] if t.kind == "header" else []
        for fname, ft in t.fields:
            try:
                members.append(f"{self.ctype(ft, pos)} f_{fname};")
            except Unsupported as exc:
                if exc.pos is not None:
                    raise
                raise Unsupported(pos, f"{exc.what} (field {fname} of {t.type_name})") from None
        if not members:
            members.append("uint8_t empty_;")
        name = f"S{len(self.struct_names)}_{t.type_name}"
        self.struct_names[id(t)] = name
        self.struct_defs.append(f"struct {name} {{ {' '.join(members)} }};")
        if t.kind == "header":
            self.max_header_bytes += (sum(_w(ft) for _, ft in t.fields) + 7) // 8
        return name

    def stack_struct(self, t: StackT, pos) -> str:
        """A header stack: its elements and nextIndex (one C type per element type and size:
        `h1 = h2` between two stack fields of the same type must compile)."""
        key = ("stack", id(t.elem), t.size)
        name = self.struct_names.get(key)
        if name is None:
            elem = self.ctype(t.elem, pos)
            name = f"K{len(self.struct_names)}_{t.elem.type_name}_{t.size}"
            self.struct_names[key] = name
            self.struct_defs.append(f"struct {name} {{ {elem} e[{t.size}]; uint32_t next; }};")
            self.max_header_bytes += ((sum(_w(ft) for _, ft in t.elem.fields) + 7) // 8) * (
                t.size - 1
            )
        return name

    def oob(self) -> str:
        """Code for a header stack index out of bounds: a parser error in a parser (as the
        interpreter's StackOutOfBounds), a dropped packet elsewhere."""
        if getattr(self, "in_parser", False) and self.ret == "int":
            return f"return {self.errors['StackOutOfBounds']};"
        return f"{{ P->stop = STOP_ABORT; {self.stop_check()} }}"

    def stack_elem(self, e: ir.Expr, pre: list) -> str:
        """The C lvalue of a stack element expression (s[i], s.next, s.last), bounds checked."""
        if isinstance(e, ir.Index):
            st = self.lvalue(e.expr, pre)
            size = e.expr.type.size
            if e.index.const is not None:
                i = int(e.index.const)
                if not 0 <= i < size:
                    pre.append(self.oob())
                    return f"{st}.e[0]"
                return f"{st}.e[{i}]"
            ti = getattr(e, "pinned_c", None)  # evaluated once already (see assign)
            if ti is None:
                ti = self.new_tmp()
                pre.append(f"uint64_t {ti} = (uint64_t)({self.expr(e.index, pre)});")
            # Outside the stack: a never-valid element that writes go nowhere into, as the
            # interpreter does (p4sim/docs/semantics.md, "Header stacks").
            scratch = self.new_tmp()
            pre.append(f"{self.ctype(e.expr.type.elem, e.pos)} {scratch} = {{0}};")
            return f"(*({ti} < {size} ? &{st}.e[{ti}] : &{scratch}))"
        st = self.lvalue(e.expr, pre)
        size = e.expr.type.size
        if e.name == "next":
            pre.append(f"if ({st}.next >= {size}) {self.oob()}")
            return f"{st}.e[{st}.next]"
        pre.append(f"if ({st}.next == 0) {self.oob()}")
        return f"{st}.e[{st}.next - 1]"

    def zero(self, t, pos=None) -> str:
        """A C initializer of the default value of t."""
        if isinstance(t, EnumT) and t.underlying is None and t.members:
            return str(t.values[t.members[0]])
        if isinstance(t, (HeaderT, StackT)):
            return f"(({self.ctype(t, pos)}){{0}})"
        return "0"

    # ------------------------------------------------------------------ frames
    def new_tmp(self) -> str:
        self.tmp += 1
        return f"t{self.tmp}"

    def frame_member(self, var: Var, is_ptr: bool = False) -> None:
        slots = self.frames[id(self.owner)]
        if var.slot not in slots:
            slots[var.slot] = (self.ctype(var.type, var.pos), is_ptr)

    def var_ref(self, var: Var, pos) -> str:
        slots = self.frames[id(self.owner)]
        if var.slot not in slots:
            self.frame_member(var)
        return f"(*F->v{var.slot})" if slots[var.slot][1] else f"F->v{var.slot}"

    def begin_owner(self, owner, label: str) -> str:
        self.owner = owner
        if id(owner) not in self.frames:
            self.frames[id(owner)] = {}
            self.frame_names[id(owner)] = f"F{len(self.frame_names)}_{label}"
        return self.frame_names[id(owner)]

    # ------------------------------------------------------------------ top level
    def generate(self) -> str:
        roots = self.program.roots
        names = ["parser", "verify", "ingress", "egress", "compute", "deparser"]
        root_args = [
            [None, "&P->hdr", "&P->meta", "&P->sm"],
            ["&P->hdr", "&P->meta"],
            ["&P->hdr", "&P->meta", "&P->sm"],
            ["&P->hdr", "&P->meta", "&P->sm"],
            ["&P->hdr", "&P->meta"],
            [None, "&P->hdr"],
        ]
        self.hdr_t = self.ctype(self.dev.hdr_type)
        self.meta_t = self.ctype(self.dev.meta_type)
        self.sm_t = self.ctype(self.dev.sm_type)
        wrappers = []
        for name, node, args in zip(names, roots, root_args):
            fn = self.block_fn(node)
            frame = self.frame_names[id(node)]
            inits = []
            for p, a in zip(node.decl.params, args):
                if a is not None and not isinstance(p.type, ExternT):
                    inits.append(f"F->v{p.var.slot} = {a};")
            ret = "int" if name == "parser" else "void"
            call = f"return {fn}(D, P, F);" if name == "parser" else f"{fn}(D, P, F);"
            wrappers.append(
                f"static {ret} gen_{name}(struct dev *D, struct pkt *P)\n{{\n"
                f"    struct {frame} FR;\n    memset(&FR, 0, sizeof FR);\n"
                f"    struct {frame} *F = &FR;\n    {' '.join(inits)}\n    {call}\n}}\n"
            )
        out = ['#include "runtime.h"', ""]
        out += self.struct_defs
        out.append(f"typedef {self.hdr_t} hdr_t;\ntypedef {self.meta_t} meta_t;")
        out.append(f"typedef {self.sm_t} sm_t;")
        out.append(f"#define MAX_HEADER_BYTES {max(self.max_header_bytes, 1)}")
        out.append(f"#define NDIRECT_METERS {max(len(self.direct_meters), 1)}")
        out.append(PKT_STRUCT)
        for owner_id, slots in self.frames.items():
            members = [
                f"{ct} {'*' if ptr else ''}v{slot};" for slot, (ct, ptr) in sorted(slots.items())
            ] or ["int unused_;"]
            out.append(f"struct {self.frame_names[owner_id]} {{ {' '.join(members)} }};")
        out += self.protos
        out += self.bodies
        out.append(self.preserve_fn())
        out += wrappers
        out.append('#include "pipeline.c"')
        out.append('#include "api.c"')
        return "\n".join(out) + "\n"

    def preserve_fn(self) -> str:
        meta = self.dev.meta_type
        cases = []
        for fields, i in self.field_lists.items():
            copies = " ".join(
                f"d->f_{meta.fields[j][0]} = s->f_{meta.fields[j][0]};" for j in fields
            )
            cases.append(f"case {i}: {copies} break;")
        return (
            "static void preserve_fields(meta_t *d, const meta_t *s, int list)\n{\n"
            f"    switch (list) {{ {' '.join(cases)} default: break; }}\n}}\n"
        )

    def field_list_id(self, indices) -> int:
        key = tuple(indices)
        if key not in self.field_lists:
            self.field_lists[key] = len(self.field_lists)
        return self.field_lists[key]

    # ------------------------------------------------------------------ blocks
    def block_fn(self, node) -> str:
        key = ("block", id(node))
        if key in self.done:
            return self.done[key]
        decl = node.decl
        fname = f"B{len(self.done)}_{decl.name}"
        self.done[key] = fname
        saved = self.save()
        frame = self.begin_owner(node, decl.name)
        self.node = node
        for i, p in enumerate(decl.params):
            if isinstance(p.type, ExternT):
                continue
            by_ref = p.direction in ("out", "inout") or node in self.program.roots
            self.frame_member(p.var, by_ref)
        body = []
        locals_ = [loc for loc in decl.locals if isinstance(loc, ir.VarDecl)]
        if isinstance(decl, ir.ParserDecl):
            code = self.parser_body(decl, locals_)
            ret = "int"
        else:
            code = self.stmts(locals_, 1) + self.stmts(decl.body.stmts, 1)
            ret = "void"
        body.append(f"static {ret} {fname}(struct dev *D, struct pkt *P, struct {frame} *F)\n{{")
        body += code
        body.append("    return 0;\n}" if ret == "int" else "}")
        self.protos.append(
            f"static {ret} {fname}(struct dev *D, struct pkt *P, struct {frame} *F);"
        )
        self.bodies.append("\n".join(body))
        self.restore(saved)
        return fname

    def save(self):
        return (
            getattr(self, "owner", None),
            getattr(self, "node", None),
            getattr(self, "ret", "void"),
        )

    def restore(self, saved):
        self.owner, self.node, self.ret = saved

    # ------------------------------------------------------------------ parser
    def parser_body(self, decl: ir.ParserDecl, locals_) -> list[str]:
        self.ret = "int"
        self.in_parser = True
        lines = self.stmts(locals_, 1)
        lines.append("    unsigned steps = 0;")
        lines.append("    (void)steps;")
        lines.append("    goto st_start;")
        timeout = self.errors["ParserTimeout"]
        for s in decl.states:
            lines.append(f"st_{s.name}:")
            lines.append(f"    if (++steps > {MAX_TRANSITIONS}) return {timeout};")
            lines += self.stmts(s.stmts, 1)
            lines += self.transition(s.transition, 1)
        lines.append("st_accept:\n    return 0;")
        lines.append("st_reject:\n    return -1;")
        self.in_parser = False
        return lines

    def transition(self, tr: ir.Transition, ind: int) -> list[str]:
        pad = "    " * ind
        if tr.state is not None:
            return [f"{pad}goto st_{tr.state};"]
        pre: list[str] = []
        keys = []
        for e in tr.select:
            v = self.expr(e, pre)
            t = self.new_tmp()
            ct = "uint32_t" if isinstance(e.type, BoolT) else self.ctype(e.type, e.pos)
            pre.append(f"{ct} {t} = {v};")
            keys.append((t, e.type))
        lines = [pad + p for p in pre]
        for c in tr.cases:
            if getattr(c, "value_set", None) is not None:
                raise Unsupported(c.keyset[0].pos, "a parser value set")
            if len(c.keyset) == 1 and isinstance(c.keyset[0], ir.Default) and len(keys) != 1:
                lines.append(f"{pad}goto st_{c.state};")
                break
            conds = []
            for (k, kt), ks in zip(keys, c.keyset):
                if isinstance(ks, ir.Default):
                    continue
                if isinstance(ks, ir.Mask):
                    m = int(ks.mask.const)
                    v = int(ks.value.const) & m
                    ut = Bits(_w(kt)) if isinstance(kt, Bits) else Bits(64)
                    cast = "u128" if _w(kt) > 64 else "uint64_t"
                    conds.append(f"(({cast}){k} & {_lit(m, ut)}) == {_lit(v, ut)}")
                elif isinstance(ks, ir.Range):
                    conds.append(
                        f"({k} >= {_lit(ks.low.const, kt)} && {k} <= {_lit(ks.high.const, kt)})"
                    )
                else:
                    if ks.const is None:
                        raise Unsupported(ks.pos, "a select case that is not a constant")
                    conds.append(f"{k} == {_lit(int(ks.const), kt)}")
            if not conds:
                lines.append(f"{pad}goto st_{c.state};")
                break
            lines.append(f"{pad}if ({' && '.join(conds)}) goto st_{c.state};")
        else:
            lines.append(f"{pad}return {self.errors['NoMatch']};")
        return lines

    # ------------------------------------------------------------------ statements
    def stmts(self, stmts, ind: int) -> list[str]:
        out = []
        for s in stmts:
            out += self.stmt(s, ind)
        return out

    def stop_check(self, when: str = "P->stop") -> str:
        if self.ret == "int":
            return f"if ({when}) return 0;"
        if self.ret == "void":
            return f"if ({when}) return;"
        return f"if ({when}) return ({self.ret}){{0}};"

    def after_action(self, outs: list[str]) -> str:
        """After an action call: copy-out, also when the action ran `exit` (P4_16 spec,
        "Exit statement"; BMv2 and the interpreter copy out), not after a run-time error."""
        if not outs:
            return self.stop_check()
        return f"{self.stop_check('P->stop == STOP_ABORT')} {' '.join(outs)} {self.stop_check()}"

    def stmt(self, s: ir.Stmt, ind: int) -> list[str]:
        pad = "    " * ind
        pre: list[str] = []
        if isinstance(s, ir.Block):
            return [pad + "{"] + self.stmts(s.stmts, ind + 1) + [pad + "}"]
        if isinstance(s, ir.Empty):
            return []
        if isinstance(s, ir.Assign):
            code = self.assign(s.lhs, s.rhs, pre)
        elif isinstance(s, ir.CallStmt):
            code = self.call_stmt(s.call, pre)
        elif isinstance(s, ir.If):
            cond = self.expr(s.cond, pre)
            then = self.stmt(s.then, ind + 1)
            other = self.stmt(s.other, ind + 1) if s.other is not None else []
            lines = [pad + p for p in pre] + [f"{pad}if ({cond}) {{"] + then
            if other:
                lines += [f"{pad}}} else {{"] + other
            return lines + [pad + "}"]
        elif isinstance(s, ir.VarDecl):
            if s.is_const:
                return []
            self.frame_member(s.var)
            ref = self.var_ref(s.var, s.pos)
            if s.init is not None:
                code = f"{ref} = {self.expr(s.init, pre)};"
            else:
                code = f"{ref} = {self.zero(s.var_type, s.pos)};"
        elif isinstance(s, ir.Exit):
            code = "P->stop = STOP_EXIT; " + self.stop_check()
        elif isinstance(s, ir.Return):
            if s.value is None:
                code = "return 0;" if self.ret == "int" else "return;"
            else:
                code = f"return {self.expr(s.value, pre)};"
        elif isinstance(s, ir.Switch):
            return self.switch(s, ind)
        elif isinstance(s, ir.For):
            return self.for_loop(s, ind)
        elif isinstance(s, (ir.Break, ir.Continue)):
            if not self.loops:
                raise Unsupported(s.pos, f"{type(s).__name__.lower()} outside a loop")
            k = self.loops[-1]
            code = f"goto {'brk' if isinstance(s, ir.Break) else 'cont'}_{k};"
        else:
            raise Unsupported(s.pos, f"statement {type(s).__name__}")
        return [pad + p for p in pre] + [pad + code]

    def for_loop(self, s: ir.For, ind: int) -> list[str]:
        """As the interpreter: more than MAX_LOOP_ITERATIONS iterations drop the packet."""
        pad = "    " * ind
        k = self.new_tmp()
        lines = [pad + "{"] + self.stmts(s.init, ind + 1)
        lines.append(f"{pad}    uint32_t n_{k} = 0;")
        lines.append(f"{pad}    for (;;) {{")
        if s.cond is not None:
            pre: list[str] = []
            c = self.expr(s.cond, pre)
            lines += [f"{pad}        {p}" for p in pre]
            lines.append(f"{pad}        if (!({c})) break;")
        lines.append(
            f"{pad}        if (++n_{k} > {MAX_LOOP_ITERATIONS}) "
            f"{{ P->stop = STOP_ABORT; {self.stop_check()} }}"
        )
        self.loops.append(k)
        lines += self.stmt(s.body, ind + 2)
        self.loops.pop()
        lines.append(f"{pad}    cont_{k}:;")
        lines += self.stmts(s.update, ind + 2)
        lines.append(f"{pad}    }}")
        lines.append(f"{pad}    brk_{k}:;")
        return lines + [pad + "}"]

    def assign(self, lhs: ir.Expr, rhs: ir.Expr, pre: list) -> str:
        indices = calls_in_indices(lhs) if rhs.const is None else []
        if not indices:
            value = self.expr(rhs, pre)
            return self.store(lhs, value, pre)
        # `a[f(x)].g = rhs` (and `a[f(x)].g op= b`, whose right side holds the same nodes):
        # each index with a call is evaluated once, before the right side, as the
        # interpreter does (p4sim.engine.control.calls_in_indices).
        for ix in indices:
            t = self.new_tmp()
            pre.append(f"uint64_t {t} = (uint64_t)({self.expr(ix.index, pre)});")
            ix.pinned_c = t
        try:
            value = self.expr(rhs, pre)
            return self.store(lhs, value, pre)
        finally:
            for ix in indices:
                del ix.pinned_c

    def store(self, lhs: ir.Expr, value: str, pre: list) -> str:
        if isinstance(lhs, ir.Slice):
            base_t = lhs.expr.type
            lo, hi = int(lhs.lo.const), int(lhs.hi.const)
            w = hi - lo + 1
            # the base's new value, stored in turn (a slice of a slice is a slice too)
            ref = self.expr(lhs.expr, pre)
            bw = base_t.width
            if bw > 64:
                m = f"MASK128({w})"
                new = f"(((u128){ref} & ~({m} << {lo})) | ((((u128){value}) & {m}) << {lo}))"
                if base_t.signed:
                    new = f"sext128({new}, {bw})"
            else:
                m = f"MASK({w})"
                new = (
                    f"(((uint64_t){ref} & ~({m} << {lo})) | ((((uint64_t){value}) & {m}) << {lo}))"
                )
                if base_t.signed:
                    new = f"sext({new}, {bw})"
            return self.store(lhs.expr, new, pre)
        return f"{self.lvalue(lhs, pre)} = {value};"

    def lvalue(self, e: ir.Expr, pre: list) -> str:
        if isinstance(e, ir.Name):
            if isinstance(e.decl, Var) and e.decl.slot is not None:
                return self.var_ref(e.decl, e.pos)
            raise Unsupported(e.pos, f"assignment to {e.name}")
        if isinstance(e, ir.Member) and isinstance(e.expr.type, HeaderT):
            self.ctype(e.expr.type, e.pos)
            return f"{self.lvalue(e.expr, pre)}.f_{e.name}"
        if isinstance(e, ir.Index) and isinstance(e.expr.type, StackT):
            return self.stack_elem(e, pre)
        if (
            isinstance(e, ir.Member)
            and isinstance(e.expr.type, StackT)
            and e.name in ("next", "last")
        ):
            return self.stack_elem(e, pre)
        raise Unsupported(e.pos, f"assignment to a {type(e).__name__} expression")

    def switch(self, s: ir.Switch, ind: int) -> list[str]:
        pad = "    " * ind
        pre: list[str] = []
        v = self.expr(s.expr, pre)
        action_run = isinstance(s.expr.type, ApplyResultT) or (
            isinstance(s.expr, ir.Member) and s.expr.name == "action_run"
        )
        layout = self.last_switch_table if action_run else None  # before nested switches
        lines = [pad + p for p in pre] + [f"{pad}switch ({v}) {{"]
        seen = set()
        for c in s.cases:
            for label in c.labels:
                if label is None:
                    lines.append(f"{pad}default:")
                    continue
                if action_run:
                    key = layout.actions.index(self.action_name(label.decl))
                else:
                    if label.const is None:
                        raise Unsupported(label.pos, "a switch label that is not a constant")
                    key = int(label.const)
                if key in seen:
                    continue
                seen.add(key)
                lines.append(f"{pad}case {key}:")
            if c.body is not None:
                lines += [pad + "{"] + self.stmt(c.body, ind + 1) + [pad + "    break;", pad + "}"]
        lines.append(f"{pad}default: break;" if not any(None in c.labels for c in s.cases) else "")
        lines.append(pad + "}")
        return lines

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, pre: list) -> str:
        c = e.const
        if c is not None and isinstance(c, (bool, int)) and not isinstance(e, ir.Call):
            if isinstance(e.type, BoolT):
                return "1" if c else "0"
            return _lit(int(c), e.type)
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise Unsupported(e.pos, f"expression {type(e).__name__}")
        return m(e, pre)

    def _Name(self, e: ir.Name, pre):
        if isinstance(e.decl, Var) and e.decl.slot is not None:
            return self.var_ref(e.decl, e.pos)
        raise Unsupported(e.pos, f"reading {e.name}")

    def _Member(self, e: ir.Member, pre):
        bt = e.expr.type
        if isinstance(bt, HeaderT):
            self.ctype(bt, e.pos)
            return f"{self.expr(e.expr, pre)}.f_{e.name}"
        if isinstance(bt, StackT):
            if e.name in ("next", "last"):
                return self.stack_elem(e, pre)
            if e.name == "lastIndex":
                return f"((uint64_t)({self.expr(e.expr, pre)}.next - 1) & 0xFFFFFFFFu)"
            if e.name == "size":
                return _lit(bt.size, Bits(32))
        if e.name in ("hit", "miss", "action_run") and isinstance(bt, ApplyResultT):
            r = self.expr(e.expr, pre)
            if e.name == "hit":
                return f"(({r} >> 31) & 1)"
            if e.name == "miss":
                return f"(!(({r} >> 31) & 1))"
            return f"({r} & 0x7fffffff)"
        raise Unsupported(e.pos, f"member {e.name} of {bt}")

    def _Index(self, e: ir.Index, pre):
        if not isinstance(e.expr.type, StackT):
            raise Unsupported(e.pos, f"indexing a {e.expr.type}")
        return self.stack_elem(e, pre)

    def _Slice(self, e: ir.Slice, pre):
        x = self.expr(e.expr, pre)
        lo, hi = int(e.lo.const), int(e.hi.const)
        w = hi - lo + 1
        if e.expr.type.width > 64:
            v = f"(((u128){x} >> {lo}) & MASK128({w}))"
            return v if w > 64 else f"((uint64_t){v})"
        return f"(((uint64_t){x} >> {lo}) & MASK({w}))"

    def _Unary(self, e: ir.Unary, pre):
        x = self.expr(e.expr, pre)
        t = e.type
        if e.op == "!":
            return f"(!{x})"
        if e.op == "+":
            return x
        if not isinstance(t, Bits):
            raise Unsupported(e.pos, f"unary {e.op} on {t}")
        if e.op == "-":
            return self.wrap(f"(0 - ({'u128' if t.width > 64 else 'uint64_t'}){x})", t)
        if e.op == "~":
            return f"(~{x})" if t.signed else self.wrap(f"(~{x})", t)
        raise Unsupported(e.pos, f"unary {e.op}")

    def wrap(self, x: str, t: Bits) -> str:
        w = t.width
        if w > 64:
            return f"sext128((u128)({x}), {w})" if t.signed else f"((u128)({x}) & MASK128({w}))"
        if t.signed:
            return f"sext((uint64_t)({x}), {w})"
        return f"((uint64_t)({x}) & MASK({w}))" if w < 64 else f"((uint64_t)({x}))"

    def _Binary(self, e: ir.Binary, pre):
        op = e.op
        if op in ("&&", "||"):
            inner: list[str] = []
            a = self.expr(e.left, pre)
            b = self.expr(e.right, inner)
            if inner:  # evaluated only when needed: a GNU C statement expression
                b = f"({{ {' '.join(inner)} {b}; }})"
            return f"({a} {op} {b})"
        a = self.expr(e.left, pre)
        inner: list[str] = []
        b = self.expr(e.right, inner)
        if inner:  # the right side calls something: read the left side first (left to right)
            ta = self.new_tmp()
            pre.append(
                f"{self.ctype(e.left.type, e.pos) if not isinstance(e.left.type, (BoolT, InfInt)) else 'int64_t'} {ta} = {a};"
            )
            a = ta
            pre.extend(inner)
        lt = e.left.type
        if op in ("==", "!=") and isinstance(lt, (HeaderT, StackT)):
            fn = self.eq_fn(lt, e.pos)
            r = f"{fn}(&{self.addressable(a, lt, pre)}, &{self.addressable(b, lt, pre)})"
            return r if op == "==" else f"(!{r})"
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return f"({a} {op} {b})"
        t = e.type
        if op == "++":
            wb = _w(e.right.type)
            ub = "u128" if t.width > 64 else "uint64_t"
            ma = f"MASK128({_w(lt)})" if _w(lt) > 64 else f"MASK({_w(lt)})"
            mb = f"MASK128({wb})" if wb > 64 else f"MASK({wb})"
            v = f"(((({ub}){a} & {ma}) << {wb}) | (({ub}){b} & {mb}))"
            return self.wrap(v, t) if t.signed else v
        if not isinstance(t, Bits):
            raise Unsupported(e.pos, f"operator {op} on {t}")
        w, signed = t.width, t.signed
        ct = self.ctype(t, e.pos)
        if op in ("+", "-", "*"):  # in unsigned arithmetic (it wraps), then to W bits
            u = "u128" if w > 64 else "uint64_t"
            return self.wrap(f"(({u}){a} {op} ({u}){b})", t)
        if op in ("/", "%"):
            if signed:
                if w > 64:
                    raise Unsupported(e.pos, f"signed {op} wider than 64 bits")
                return f"{'sdiv_floor' if op == '/' else 'smod_floor'}({a}, {b})"
            tb = self.new_tmp()
            pre.append(f"{ct} {tb} = {b};")
            return f"({tb} ? ({ct})({a} {op} {tb}) : 0)"
        if op in ("&", "|", "^"):
            return f"(({ct})({a} {op} {b}))"
        if op == "<<":
            ts = self.new_tmp()
            pre.append(f"uint64_t {ts} = (uint64_t){b};")
            return f"({ts} >= {w} ? ({ct})0 : {self.wrap(f'(({ct}){a} << {ts})', t)})"
        if op == ">>":
            ts = self.new_tmp()
            pre.append(f"uint64_t {ts} = (uint64_t){b};")
            lim = 128 if w > 64 else 64
            if signed:
                return f"({ts} >= {lim - 1} ? ({a} < 0 ? ({ct})-1 : ({ct})0) : ({ct})({a} >> {ts}))"
            return f"({ts} >= {lim} ? ({ct})0 : ({ct})({a} >> {ts}))"
        if op in ("|+|", "|-|"):
            if w > 64:
                raise Unsupported(e.pos, f"{op} wider than 64 bits")
            o = "+" if op == "|+|" else "-"
            lo = -(1 << (w - 1)) if signed else 0
            hi = (1 << (w - 1)) - 1 if signed else (1 << w) - 1
            r = self.new_tmp()
            pre.append(f"s128 {r} = (s128){a} {o} (s128){b};")
            return f"(({ct})({r} < (s128){_lit(lo, InfInt())} ? (s128){_lit(lo, InfInt())} : {r} > (s128){_lit(hi, Bits(128))} ? (s128){_lit(hi, Bits(128))} : {r}))"
        raise Unsupported(e.pos, f"operator {op}")

    def addressable(self, x: str, t, pre) -> str:
        tv = self.new_tmp()
        pre.append(f"{self.ctype(t)} {tv} = {x};")
        return tv

    def eq_fn(self, t, pos) -> str:
        key = ("eq", ("stack", id(t.elem), t.size)) if isinstance(t, StackT) else ("eq", id(t))
        if key in self.done:
            return self.done[key]
        if isinstance(t, StackT):  # element by element (nextIndex is not compared)
            name = f"eq_{self.stack_struct(t, pos)}"
            self.done[key] = name
            ct = self.ctype(t, pos)
            el = self.eq_fn(t.elem, pos)
            body = " && ".join(f"{el}(&a->e[{i}], &b->e[{i}])" for i in range(t.size)) or "1"
            self.protos.append(f"static int {name}(const {ct} *a, const {ct} *b);")
            self.bodies.append(
                f"static int {name}(const {ct} *a, const {ct} *b)\n{{\n    return {body};\n}}"
            )
            return name
        name = f"eq_{self.struct(t, pos)}"
        self.done[key] = name
        ct = self.ctype(t, pos)
        parts = []
        for fname, ft in t.fields:
            if isinstance(ft, (HeaderT, StackT)):
                parts.append(f"{self.eq_fn(ft, pos)}(&a->f_{fname}, &b->f_{fname})")
            else:
                self.ctype(ft, pos)
                parts.append(f"a->f_{fname} == b->f_{fname}")
        body = " && ".join(parts) or "1"
        if t.kind == "header":
            body = f"(!a->valid && !b->valid) || (a->valid == b->valid && ({body}))"
        self.protos.append(f"static int {name}(const {ct} *a, const {ct} *b);")
        self.bodies.append(
            f"static int {name}(const {ct} *a, const {ct} *b)\n{{\n    return {body};\n}}"
        )
        return name

    def _Ternary(self, e: ir.Ternary, pre):
        c = self.expr(e.cond, pre)
        then_pre: list[str] = []
        other_pre: list[str] = []
        a, b = self.expr(e.then, then_pre), self.expr(e.other, other_pre)
        if then_pre:  # only the branch taken runs its calls: GNU C statement expressions
            a = f"({{ {' '.join(then_pre)} {a}; }})"
        if other_pre:
            b = f"({{ {' '.join(other_pre)} {b}; }})"
        return f"({c} ? {a} : {b})"

    def _Cast(self, e: ir.Cast, pre):
        x = self.expr(e.expr, pre)
        to, frm = e.type, e.expr.type
        if isinstance(to, Bits):
            if isinstance(frm, BoolT):
                return f"(({self.ctype(to)})({x} ? 1 : 0))"
            return self.wrap(
                f"({self.ctype(to)})({x})" if to.width > 64 else f"(uint64_t)({x})", to
            )
        if isinstance(to, BoolT):
            return f"({x} != 0)"
        if isinstance(to, EnumT) and to.underlying is not None:
            return self.wrap(f"(uint64_t)({x})", to.underlying)
        return x

    def _ListExpr(self, e: ir.ListExpr, pre):
        t = e.type
        if not isinstance(t, HeaderT):
            raise Unsupported(e.pos, f"list expression of type {t}")
        vals = [self.expr(x, pre) for x in e.items]
        inits = [f".f_{n} = {v}" for (n, _), v in zip(t.fields, vals)]
        if t.kind == "header":
            inits.insert(0, ".valid = 1")
        return f"(({self.ctype(t, e.pos)}){{{', '.join(inits)}}})"

    def _StructInit(self, e: ir.StructInit, pre):
        t = e.type
        if not isinstance(t, HeaderT):
            raise Unsupported(e.pos, f"struct initializer of type {t}")
        inits = [f".f_{n} = {self.expr(x, pre)}" for n, x in e.fields]
        if t.kind == "header":
            inits.insert(0, ".valid = 1")
        return f"(({self.ctype(t, e.pos)}){{{', '.join(inits)}}})"

    def _Call(self, e: ir.Call, pre):
        kind = e.kind
        if kind == "header_method" and e.target == "isValid":
            t = e.func.expr.type
            v = self.expr(e.func.expr, pre)
            if isinstance(t, HeaderT) and t.kind == "header_union":  # valid when a member is
                return "(" + " || ".join(f"{v}.f_{n}.valid" for n, _ in t.fields) + ")"
            return f"{v}.valid"
        if kind == "table_apply":
            r = self.new_tmp()
            pre.append(f"uint32_t {r} = {self.table_fn(e.target)}(D, P, F); {self.stop_check()}")
            return r
        if kind == "function":
            return self.function_call(e, pre)
        if kind == "extern_method" and e.target.type.decl.name == "packet_in":
            return self.packet_in(e, pre)
        raise Unsupported(e.pos, f"call of {kind} {getattr(e.target, 'name', '')} as a value")

    # ------------------------------------------------------------------ calls
    def union_siblings(self, header_expr: ir.Expr, pre: list) -> str:
        """For a member of a header_union, code invalidating the other members (at most one
        member is valid, as the interpreter keeps it)."""
        if not (
            isinstance(header_expr, ir.Member)
            and isinstance(header_expr.expr.type, HeaderT)
            and header_expr.expr.type.kind == "header_union"
        ):
            return ""
        u = self.lvalue(header_expr.expr, pre)
        others = [n for n, _ in header_expr.expr.type.fields if n != header_expr.name]
        return " ".join(f"{u}.f_{n}.valid = 0;" for n in others)

    def call_stmt(self, e: ir.Call, pre: list) -> str:
        kind = e.kind
        if kind == "static_assert":  # checked by the front end: nothing to run
            return ""
        if kind == "header_method":
            h = self.lvalue(e.func.expr, pre)
            if e.target == "setValid":
                siblings = self.union_siblings(e.func.expr, pre)
                return (
                    f"if (!{h}.valid) {{ memset(&{h}, 0, sizeof {h}); {h}.valid = 1; }} {siblings}"
                )
            if e.target == "setInvalid":
                return f"{h}.valid = 0;"
            return f"(void){h}.valid;"
        if kind == "table_apply":
            return f"{self.table_fn(e.target)}(D, P, F); {self.stop_check()}"
        if kind == "stack_method":
            st = self.lvalue(e.func.expr, pre)
            size, n = e.func.expr.type.size, int(e.count)
            elem_t = e.func.expr.type.elem

            def clear(i: int) -> str:  # a header turns invalid; a union loses every member
                if elem_t.kind == "header_union":
                    return f"{st}.e[{i}] = {self.zero(elem_t, e.pos)};"
                return f"{st}.e[{i}].valid = 0;"

            if e.target == "push_front":
                moves = " ".join(
                    f"{st}.e[{i}] = {st}.e[{i - n}];" if i - n >= 0 else clear(i)
                    for i in range(size - 1, -1, -1)
                )
                return f"{moves} {st}.next = {st}.next + {n} > {size} ? {size} : {st}.next + {n};"
            moves = " ".join(
                f"{st}.e[{i}] = {st}.e[{i + n}];" if i + n < size else clear(i) for i in range(size)
            )
            return f"{moves} {st}.next = {st}.next > {n} ? {st}.next - {n} : 0;"
        if kind == "action":
            return self.action_call(e, pre)
        if kind == "function":
            return f"(void){self.function_call(e, pre)};"
        if kind == "block_apply":
            return self.block_apply(e, pre)
        if kind == "extern_method":
            return self.extern_method(e, pre)
        if kind == "extern_func":
            return self.extern_func(e, pre)
        raise Unsupported(e.pos, f"call of kind {kind}")

    def copy_in_out(self, e: ir.Call, params, frame_ref: str, pre: list):
        ins, outs = [], []
        for p, a in zip(params, e.args):
            slot = f"{frame_ref}v{p.var.slot}"
            if a.value is None:
                ins.append(f"{slot} = {self.zero(p.type, p.pos)};")
                continue
            if p.direction in ("", "in", "inout"):
                ins.append(f"{slot} = {self.expr(a.value, pre)};")
            else:
                ins.append(f"{slot} = {self.zero(p.type, p.pos)};")
            if p.direction in ("out", "inout"):
                outs.append(self.store(a.value, slot, pre))
        for p in params[len(e.args) :]:
            if p.default is not None:
                ins.append(f"{frame_ref}v{p.var.slot} = {self.expr(p.default, pre)};")
        return ins, outs

    def action_call(self, e: ir.Call, pre: list) -> str:
        decl = e.target
        fn, top = self.action_fn(decl)
        if top:
            frame = self.frame_names[id(decl)]
            g = self.new_tmp()
            ins, outs = self.copy_in_out(e, decl.params, f"{g}.", pre)
            return (
                f"{{ struct {frame} {g}; memset(&{g}, 0, sizeof {g}); {' '.join(ins)} "
                f"{fn}(D, P, &{g}); {self.after_action(outs)} }}"
            )
        for p in decl.params:
            self.frame_member(p.var)
        ins, outs = self.copy_in_out(e, decl.params, "F->", pre)
        return f"{{ {' '.join(ins)} {fn}(D, P, F); {self.after_action(outs)} }}"

    def action_name(self, decl) -> str:
        return self.node.actions.get(decl) or decl.name

    def action_fn(self, decl: ir.ActionDecl):
        top = decl.top_level
        key = ("action", id(decl) if top else (id(self.node), id(decl)))
        if key in self.done:
            return self.done[key], top
        fname = f"A{len(self.done)}_{decl.name}"
        self.done[key] = fname
        saved = self.save()
        if top:
            frame = self.begin_owner(decl, decl.name)
        else:
            frame = self.frame_names[id(self.owner)]
        for p in decl.params:
            self.frame_member(p.var)
        self.ret = "void"
        code = self.stmts(decl.body.stmts, 1)
        sig = f"static void {fname}(struct dev *D, struct pkt *P, struct {frame} *F)"
        self.protos.append(sig + ";")
        self.bodies.append("\n".join([sig, "{"] + code + ["}"]))
        self.restore(saved)
        return fname, top

    def function_call(self, e: ir.Call, pre: list) -> str:
        decl: ir.FunctionDecl = e.target
        key = ("function", id(decl))
        rt = decl.ret_type
        ret_c = "void" if rt.name() == "void" else self.ctype(rt, e.pos)
        if key not in self.done:
            fname = f"U{len(self.done)}_{decl.name}"
            self.done[key] = fname
            saved = self.save()
            frame = self.begin_owner(decl, decl.name)
            for p in decl.params:
                self.frame_member(p.var)
            self.ret = ret_c
            code = self.stmts(decl.body.stmts, 1)
            sig = f"static {ret_c} {fname}(struct dev *D, struct pkt *P, struct {frame} *F)"
            end = "}" if ret_c == "void" else f"    return ({ret_c}){{0}};\n}}"
            self.protos.append(sig + ";")
            self.bodies.append("\n".join([sig, "{"] + code + [end]))
            self.restore(saved)
        fname = self.done[key]
        frame = self.frame_names[id(decl)]
        g, r = self.new_tmp(), self.new_tmp()
        ins, outs = self.copy_in_out(e, decl.params, f"{g}.", pre)
        call = f"{fname}(D, P, &{g})"
        if ret_c == "void":
            pre.append(
                f"struct {frame} {g}; memset(&{g}, 0, sizeof {g}); {' '.join(ins)} {call}; {self.stop_check()} {' '.join(outs)}"
            )
            return "0"
        pre.append(
            f"struct {frame} {g}; memset(&{g}, 0, sizeof {g}); {' '.join(ins)} "
            f"{ret_c} {r} = {call}; {self.stop_check()} {' '.join(outs)}"
        )
        return r

    def block_apply(self, e: ir.Call, pre: list) -> str:
        inst: Instance = e.target
        child = self.node.children[inst]
        if isinstance(child.decl, ir.ParserDecl):
            raise Unsupported(e.pos, "a sub-parser call")
        fn = self.block_fn(child)
        frame = self.frame_names[id(child)]
        g = self.new_tmp()
        sets = []
        for p, a in zip(child.decl.params, e.args):
            if p.direction in ("out", "inout"):
                sets.append(f"{g}.v{p.var.slot} = &{self.lvalue(a.value, pre)};")
            else:
                sets.append(f"{g}.v{p.var.slot} = {self.expr(a.value, pre)};")
        return (
            f"{{ struct {frame} {g}; memset(&{g}, 0, sizeof {g}); {' '.join(sets)} "
            f"{fn}(D, P, &{g}); {self.stop_check()} }}"
        )

    # ------------------------------------------------------------------ tables
    def table_fn(self, t: ir.TableDecl) -> str:
        tdef = self.node.tables[t]
        layout = self.table_layout(t, tdef)
        self.last_switch_table = layout
        key = ("table", id(self.node), id(t))
        if key in self.done:
            return self.done[key]
        fname = f"T{len(self.done)}_{t.name}"
        self.done[key] = fname
        frame = self.frame_names[id(self.owner)]
        pre: list[str] = []
        keys = []
        for k, (w0, nw) in zip(t.keys, layout.key_words):
            v = self.expr(k.expr, pre)
            kt = k.expr.type
            if isinstance(kt, Bits) and kt.signed:
                v = (
                    f"((u128)(s128){v} & MASK128({kt.width}))"
                    if kt.width > 64
                    else f"((uint64_t){v} & MASK({kt.width}))"
                )
            if nw == 2:
                keys.append(
                    f"key[{w0}] = (uint64_t)((u128)({v}) >> 64); key[{w0 + 1}] = (uint64_t)({v});"
                )
            else:
                keys.append(f"key[{w0}] = (uint64_t)({v});")
        cases = []
        for i, ref_name in enumerate(layout.actions):
            decl = self.table_action_decls[layout.name].get(ref_name)
            if decl is None:  # NoAction not listed: the implicit default
                cases.append(f"case {i}: break;")
                continue
            fn, top = self.action_fn(decl)
            directionless = [p for p in decl.params if not p.direction]
            words = layout.arg_words[ref_name]
            sets = []
            target = "G." if top else "F->"
            for p, (w0, nw) in zip(directionless, words):
                ct = self.ctype(p.type, p.pos)
                if nw == 2:
                    v = f"((((u128)args[{w0}]) << 64) | args[{w0 + 1}])"
                else:
                    v = f"args[{w0}]"
                if isinstance(p.type, Bits) and p.type.signed:
                    v = f"sext128({v}, {p.type.width})" if nw == 2 else f"sext({v}, {p.type.width})"
                elif isinstance(p.type, BoolT):
                    v = f"({v} != 0)"
                sets.append(f"{target}v{p.var.slot} = ({ct}){v};")
            # Directional parameters bound in the actions list (`a(x)`): copy-in before the
            # action, copy-out after it (after an `exit` too), as the interpreter does.
            ref = self.table_action_refs[layout.name][ref_name]
            directional = [p for p in decl.params if p.direction]
            bind_pre: list[str] = []
            ins, outs = [], []
            if ref.args:
                fake = ir.Call(ref.pos, ref.name, [], ref.args[: len(directional)])
                ins, outs = self.copy_in_out(fake, directional, target, bind_pre)
            body = " ".join(bind_pre + ins + sets)
            after = f"if (P->stop == STOP_ABORT) return 0; {' '.join(outs)}" if outs else ""
            if top:
                g = self.frame_names[id(decl)]
                cases.append(
                    f"case {i}: {{ struct {g} G; memset(&G, 0, sizeof G); {body} "
                    f"{fn}(D, P, &G); {after} break; }}"
                )
            else:
                cases.append(f"case {i}: {{ {body} {fn}(D, P, F); {after} break; }}")
        tdef_py = self.dev.tables[tdef.name].definition
        counted = tdef_py.direct_counter is not None
        meter = ""
        if tdef_py.direct_meter:
            mi = self.direct_meter_index(tdef_py.direct_meter)
            unit = (
                "P->length"
                if self.dev.meters[tdef_py.direct_meter].definition.unit == "bytes"
                else "1"
            )
            meter = f"P->direct_colors[{mi}] = meter_mark(&r->meter, {unit});"
        lines = [
            f"static uint32_t {fname}(struct dev *D, struct pkt *P, struct {frame} *F)",
            "{",
            f"    struct table *t = &D->tables[{layout.index}];",
            f"    uint64_t key[{max(layout.nwords, 1)}];",
        ]
        lines += ["    " + p for p in pre]
        lines += ["    " + k for k in keys]
        # A table implemented by an action profile or selector (interpreter:
        # BlockCompiler.indirect_apply): a record's action is its member's, or -2 - g for
        # group g, whose member the selector hash picks; a miss runs no action (-1).
        select, miss = [], "action = t->default_action; args = t->default_args;"
        if t.implementation is not None:
            miss = "action = -1; args = t->default_args;"
            inner: list[str] = []
            algo = HASH_IDS.get(getattr(t.implementation, "algorithm", ""), 0)
            data = []
            for k in t.selector_keys:
                data += self.field_data(k.expr, inner)
            buf, n = self.pack_data(data, inner)
            select = [
                "        if (action <= -2) {",
                "            const struct sel_group *g = &t->groups[-2 - action];",
                "            if (g->n == 0) {",
                "                action = -1;",
                "            } else {",
                *("                " + x for x in inner),
                f"                uint32_t h = (uint32_t)run_hash({algo}, {buf}, {n});",
                "                action = g->actions[h % g->n];",
                "                args = g->args + (size_t)(h % g->n) * t->nargs;",
                "            }",
                "        }",
            ]
        lines += [
            "    int32_t slot = table_lookup(t, key);",
            "    int32_t action; const uint64_t *args; uint32_t hit = 0;",
            "    if (slot >= 0) {",
            "        struct rec *r = &t->recs[slot];",
            "        action = r->action; args = r->args; hit = 1;",
            ("        r->packets++; r->bytes += P->length;" if counted else ""),
            f"        {meter}",
            *select,
            "    } else {",
            f"        {miss}",
            "    }",
            "    (void)args;",
            f"    switch (action) {{ {' '.join(cases)} default: break; }}",
            "    return (hit << 31) | ((uint32_t)action & 0x7fffffffu);",
            "}",
        ]
        sig = f"static uint32_t {fname}(struct dev *D, struct pkt *P, struct {frame} *F);"
        self.protos.append(sig)
        self.bodies.append("\n".join(lines))
        return fname

    def direct_meter_index(self, name: str) -> int:
        if name not in self.direct_meters:
            self.direct_meters.append(name)
        return self.direct_meters.index(name)

    def table_layout(self, t: ir.TableDecl, tdef) -> TableLayout:
        name = tdef.name
        if name in self.table_by_name:
            return self.table_by_name[name]
        if not hasattr(self, "table_action_decls"):
            self.table_action_decls = {}
        key_words, exact, n = [], [], 0
        for k, mk in zip(t.keys, tdef.keys):
            if mk.bitwidth > 128:
                raise Unsupported(k.pos, f"table key wider than 128 bits ({mk.bitwidth})")
            if mk.match_kind == "range" and mk.bitwidth > 64:
                raise Unsupported(k.pos, "range key wider than 64 bits")
            nw = 2 if mk.bitwidth > 64 else 1
            key_words.append((n, nw))
            if mk.match_kind == "exact":
                exact += list(range(n, n + nw))
            n += nw
        decls = {}
        refs = {}
        for ref in t.action_refs:
            decls[self.action_name(ref.decl)] = ref.decl
            refs[self.action_name(ref.decl)] = ref
        self.table_action_refs = getattr(self, "table_action_refs", {})
        self.table_action_refs[name] = refs
        actions = list(decls)
        if "NoAction" not in decls:
            actions.append("NoAction")
        layout = TableLayout(name, len(self.tables), key_words, n, exact, actions)
        for a, decl in decls.items():
            words, m = [], 0
            for p in decl.params:
                if p.direction:
                    continue
                w = _w(p.type)
                if w > 128:
                    raise Unsupported(p.pos, "action parameter wider than 128 bits")
                nw = 2 if w > 64 else 1
                words.append((m, nw))
                m += nw
            layout.arg_words[a] = words
            layout.nargs = max(layout.nargs, m)
        layout.arg_words.setdefault("NoAction", [])
        self.table_action_decls[name] = decls
        self.tables.append(layout)
        self.table_by_name[name] = layout
        return layout

    # ------------------------------------------------------------------ packet_in / packet_out
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
        for fname, ft in t.fields:
            w = _w(ft)
            if w > 64:
                v = f"getbits128({src}, {off}, {w})"
                if isinstance(ft, Bits) and ft.signed:
                    v = f"sext128({v}, {w})"
            else:
                v = f"getbits({src}, {off}, {w})"
                if isinstance(ft, Bits) and ft.signed:
                    v = f"sext({v}, {w})"
            out.append(f"{h}.f_{fname} = {v};")
            off += w
        return " ".join(out)

    def pack(self, t: HeaderT, h: str, dst: str) -> str:
        out, off = [], 0
        for fname, ft in t.fields:
            w = _w(ft)
            if w > 64:
                out.append(f"putbits128({dst}, {off}, {w}, (u128){h}.f_{fname});")
            else:
                out.append(f"putbits({dst}, {off}, {w}, (uint64_t){h}.f_{fname});")
            off += w
        return " ".join(out)

    def emit(self, value: str, t, pos, pre: list) -> list[str]:
        if isinstance(t, HeaderT) and t.kind == "header":
            bits = sum(_w(ft) for _, ft in t.fields)
            if any(isinstance(ft, Varbit) for _, ft in t.fields):
                raise Unsupported(pos, "varbit")
            n = bits // 8
            code = (
                f"if ({value}.valid) {{ uint8_t *q = P->out + P->out_len; memset(q, 0, {n}); "
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

    # ------------------------------------------------------------------ externs
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
        if isinstance(t, (Bits, BoolT)) or (isinstance(t, EnumT) and t.underlying is not None):
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
        if name == "mark_to_drop":
            if not e.args:
                raise Unsupported(e.pos, "mark_to_drop() without arguments")
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
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            ctype = self.expr(e.args[0].value, pre)
            session = self.expr(e.args[1].value, pre)
            if name == "clone_preserving_field_list":
                fl = e.args[2].value.const
                if fl is None:
                    raise Unsupported(e.args[2].pos, "a field list index that is not a constant")
                fid = self.field_list_id(self.dev.field_list(fl))
            elif name == "clone3":
                fid = self.field_list_id(self.dev.arch.field_indices(e, 2))
            else:
                fid = 0
            return f"P->clone_type = (int32_t)({ctype}); P->clone_session = (int64_t)({session}); P->clone_fields = {fid};"
        if name in (
            "resubmit",
            "resubmit_preserving_field_list",
            "recirculate",
            "recirculate_preserving_field_list",
        ):
            if name.endswith("field_list"):
                fl = e.args[0].value.const
                if fl is None:
                    raise Unsupported(e.args[0].pos, "a field list index that is not a constant")
                fid = self.field_list_id(self.dev.field_list(fl))
            else:
                fid = self.field_list_id(self.dev.arch.field_indices(e, 0))
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
            tname = getattr(arg.type, "type_name", "digest")
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


PKT_STRUCT = """
enum { STOP_EXIT = 1, STOP_ABORT = 2 };
struct pkt {
    hdr_t hdr;
    meta_t meta;
    sm_t sm;
    const uint8_t *data; uint32_t len, pos;   /* parser input and cursor */
    const uint8_t *frame; uint32_t flen;     /* the frame as received */
    const uint8_t *payload; uint32_t plen;   /* what the parser left */
    uint32_t length;                         /* packet_length for counters and meters */
    int depth, stop;
    int64_t clone_session;
    int32_t clone_type, clone_fields, resubmit_fields, recirc_fields;
    uint32_t truncate;
    uint8_t direct_colors[NDIRECT_METERS];
    uint8_t *out; size_t out_len;            /* deparser output (headers) */
};
"""

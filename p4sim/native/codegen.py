"""From p4sim's typed IR to C: one function per parser, control, deparser, action and table.

Values: bit<W> up to 64 bits are uint64_t kept reduced to W bits, int<W> int64_t kept
sign-extended, 65..128 bits unsigned __int128 / __int128; bool, error and enums are integers.
Headers and structs are C structs (`valid` plus `f_<field>` members). Every parser, control
and top-level action or function has a frame struct whose members are the interpreter's frame
slots (`v<slot>`); parameters passed by reference are pointers. `exit` and run-time errors set
`P->stop` and every caller returns at once, so the C follows the interpreter's control flow.

Anything this generator does not translate raises `Unsupported(pos, construct)`; the native
engine then runs the interpreter for that pipeline and says why.

CodeGen here holds the state and generates the program, blocks, parsers, statements and
calls; its parts for expressions (codegen_expressions), tables (codegen_tables), packet I/O
and externs (codegen_externs) are mixed into it.
"""

from __future__ import annotations

from p4sim.engine.control import (
    MAX_LOOP_ITERATIONS,
    arguments_overlap,
    calls_in_indices,
    makes_header_valid,
)
from p4sim.engine.layout import layout_of
from p4sim.engine.parser import MAX_TRANSITIONS
from p4sim.frontend import ir
from p4sim.frontend.program import qualify
from p4sim.frontend.typecheck.symbols import Instance, Var
from p4sim.frontend.types import (
    ApplyResultT,
    Bits,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    StackT,
    TupleT,
    Varbit,
)
from p4sim.native.codegen_common import Unsupported, _lit, _w
from p4sim.native.codegen_expressions import ExpressionGen
from p4sim.native.codegen_externs import ExternGen
from p4sim.native.codegen_tables import TableGen, TableLayout


class CodeGen(ExpressionGen, TableGen, ExternGen):
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
            if makes_header_valid(lhs, rhs):  # as setValid(): the interpreter's assign
                h = self.lvalue(lhs, pre)
                n = layout_of(lhs.type, lhs.pos).nbytes
                pre.append(f"if (!{h}.valid) P->egress_length += {n};")
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
        if isinstance(lhs.type, (HeaderT, StackT)):
            t = self.new_tmp()
            ct = self.ctype(lhs.type, lhs.pos)
            fn = self.assign_fn(lhs.type, lhs.pos)
            return f"{{ {ct} {t} = {value}; {fn}(&{self.lvalue(lhs, pre)}, &{t}); }}"
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
            nbytes = layout_of(e.func.expr.type, e.pos).nbytes  # no varbit here
            if e.target == "setValid":
                siblings = self.union_siblings(e.func.expr, pre)
                return (
                    f"if (!{h}.valid) {{ memset(&{h}, 0, sizeof {h}); {h}.valid = 1; "
                    f"P->egress_length += {nbytes}; }} {siblings}"
                )
            if e.target == "setInvalid":
                return f"if ({h}.valid) {{ {h}.valid = 0; P->egress_length -= {nbytes}; }}"
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

            if elem_t.kind == "header_union":  # copied: the popped elements cleared
                if e.target == "push_front":
                    moves = " ".join(
                        f"{st}.e[{i}] = {st}.e[{i - n}];" if i - n >= 0 else clear(i)
                        for i in range(size - 1, -1, -1)
                    )
                else:
                    moves = " ".join(
                        f"{st}.e[{i}] = {st}.e[{i + n}];" if i + n < size else clear(i)
                        for i in range(size)
                    )
            else:  # as BMv2 and the interpreter: swapped, the shifted-out values kept
                push = e.target == "push_front"
                pairs = (
                    [(i, i - n) for i in range(size - 1, n - 1, -1)]
                    if push
                    else [(i, i + n) for i in range(size - n)]
                )
                cleared = range(min(n, size)) if push else range(max(size - n, 0), size)
                swaps = [
                    f"{{ __typeof__({st}.e[0]) t = {st}.e[{i}]; {st}.e[{i}] = {st}.e[{j}]; "
                    f"{st}.e[{j}] = t; }}"
                    for i, j in pairs
                ]
                moves = " ".join(swaps + [clear(i) for i in cleared])
            if e.target == "push_front":
                return f"{moves} {st}.next = {st}.next + {n} > {size} ? {size} : {st}.next + {n};"
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
            if p.direction in ("", "in", "inout") and isinstance(p.type, (HeaderT, StackT)):
                ct, asg = self.ctype(p.type, p.pos), self.assign_fn(p.type, p.pos)
                ins.append(
                    f"{slot} = {self.zero(p.type, p.pos)}; "
                    f"{{ {ct} t = {self.expr(a.value, pre)}; {asg}(&{slot}, &t); }}"
                )
            elif p.direction in ("", "in", "inout"):
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
        return self.node.actions.get(decl) or qualify("", decl.name, decl.annotations)

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
        sets, outs = [], []
        by_reference = not arguments_overlap(
            [a.value for p, a in zip(child.decl.params, e.args) if p.direction in ("out", "inout")]
        )
        for p, a in zip(child.decl.params, e.args):
            if p.var.slot is None:
                continue  # an extern object: bound by the model (BlockNode.externs)
            slot = f"{g}.v{p.var.slot}"
            composite = isinstance(p.type, (HeaderT, StackT))
            if not composite and not by_reference and p.direction in ("out", "inout"):
                c = self.new_tmp()  # copied out in order, after the composites before it
                init = self.expr(a.value, pre) if p.direction == "inout" else "0"
                sets.append(f"{self.ctype(p.type, p.pos)} {c} = {init}; {slot} = &{c};")
                outs.append(self.store(a.value, c, pre))
                continue
            if not composite or (by_reference and p.direction != "in"):  # as the interpreter
                if p.direction in ("out", "inout"):
                    sets.append(f"{slot} = &{self.lvalue(a.value, pre)};")
                else:
                    sets.append(f"{slot} = {self.expr(a.value, pre)};")
                continue
            # composites: copied in and out as p4c's inlining does on BMv2, by assignment
            # (an invalid header copied as invalid, its fields left: the interpreter's copy_in)
            ct, asg, c = self.ctype(p.type, p.pos), self.assign_fn(p.type, p.pos), self.new_tmp()
            sets.append(f"{ct} {c} = {self.zero(p.type, p.pos)};")
            if p.direction in ("out", "inout"):
                sets.append(f"{ct} *{c}_arg = &{self.lvalue(a.value, pre)};")
                if p.direction == "inout":
                    sets.append(f"{asg}(&{c}, {c}_arg);")
                sets.append(f"{slot} = &{c};")
                outs.append(f"{asg}({c}_arg, &{c});")
            else:
                sets.append(f"{{ {ct} t = {self.expr(a.value, pre)}; {asg}(&{c}, &t); }}")
                sets.append(f"{slot} = {c};")
        return (
            f"{{ struct {frame} {g}; memset(&{g}, 0, sizeof {g}); {' '.join(sets)} "
            f"{fn}(D, P, &{g}); {' '.join(outs)} {self.stop_check()} }}"
        )


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
    uint32_t egress_length;                  /* packet_length in egress (BMv2's register):
                                                length +/- setValid/setInvalid bytes */
    int depth, stop;
    int64_t clone_session;
    int32_t clone_type, clone_fields, resubmit_fields, recirc_fields;
    uint32_t truncate;
    uint8_t direct_colors[NDIRECT_METERS];
    size_t out_len;                          /* deparser output: D->hdr_buf's first bytes */
};
"""

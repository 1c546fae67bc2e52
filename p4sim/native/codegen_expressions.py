"""C for expressions: one method per IR expression class (`_<Class>`), values kept reduced
to their width as the interpreter keeps them.
"""

from __future__ import annotations

from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Var
from p4sim.frontend.types import (
    ApplyResultT,
    Bits,
    BoolT,
    EnumT,
    HeaderT,
    InfInt,
    StackT,
)
from p4sim.native.codegen_common import Unsupported, _lit, _w


class ExpressionGen:
    """A part of CodeGen: expressions."""

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
        if isinstance(e.decl, Var) and e.decl.composite is not None:
            return self.expr(e.decl.composite, pre)  # a struct/header/tuple constant
        raise Unsupported(e.pos, f"reading {e.name}")

    def _DefaultValue(self, e: ir.DefaultValue, pre):
        return self.zero(e.type, e.pos)  # a composite one: scalars are constants (e.const)

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

    def assign_fn(self, t, pos) -> str:
        """C function `(d, s)` doing `*d = *s` for a header, header union, struct or stack
        as the interpreter's assignment does (p4sim.engine.values.assign_into with
        as_assignment): a header given an invalid header becomes invalid, its fields kept."""
        stack = isinstance(t, StackT)
        key = ("asg", ("stack", id(t.elem), t.size)) if stack else ("asg", id(t))
        if key in self.done:
            return self.done[key]
        name = f"asg_{self.stack_struct(t, pos) if stack else self.struct(t, pos)}"
        self.done[key] = name
        ct = self.ctype(t, pos)
        if stack:
            el = self.assign_fn(t.elem, pos)
            parts = [f"{el}(&d->e[{i}], &s->e[{i}]);" for i in range(t.size)]
            parts.append("d->next = s->next;")
        elif t.kind == "header":
            parts = ["if (s->valid) *d = *s; else d->valid = 0;"]
        else:
            parts = [
                (
                    f"{self.assign_fn(ft, pos)}(&d->f_{fname}, &s->f_{fname});"
                    if isinstance(ft, (HeaderT, StackT))
                    else f"d->f_{fname} = s->f_{fname};"
                )
                for fname, ft in t.fields
            ]
        self.protos.append(f"static void {name}({ct} *d, const {ct} *s);")
        self.bodies.append(
            f"static void {name}({ct} *d, const {ct} *s)\n{{\n    {' '.join(parts)}\n}}"
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

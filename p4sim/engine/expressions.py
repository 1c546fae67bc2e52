"""Compilation of typed P4 expressions into Python closures.

Every expression becomes `fn(f) -> value`, where `f` is the frame (a list) of the running
parser, control or function; every assignable expression also gets a setter `fn(f, value)`.
Arithmetic is exact-width: bit<W> wraps modulo 2^W, int<W> wraps in two's complement, |+| and
|-| saturate, shifts by the width or more give 0 (or the sign for signed >>).
"""

from __future__ import annotations

from p4sim.engine.values import (
    Header,
    Struct,
    assign_into,
    copy_value,
    default_value,
    values_equal,
)
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Var
from p4sim.frontend.types import Bits, BoolT, EnumT, HeaderT, InfInt, StackT, TupleT


class RuntimeAbort(Exception):
    """A run-time condition that drops the packet with an error log (BMv2 stops too)."""


class StackOutOfBounds(RuntimeAbort):
    """Raised at run time for a header stack access outside its bounds."""


class LoopLimitExceeded(RuntimeAbort):
    """A `for` loop ran more than MAX_LOOP_ITERATIONS times (BMv2 would hang)."""


class ParserError(Exception):
    """A parser error (error code) ends parsing in `reject`."""

    def __init__(self, code: int):
        self.code = code


class ParserReject(Exception):
    """A sub-parser ended in `reject` without an error: the caller rejects too."""


def is_composite(t) -> bool:
    return isinstance(t, (HeaderT, StackT, TupleT))


def _const(c):
    return lambda f: c


class ExprCompiler:
    """Base of the block compiler: expressions and lvalues. Calls are the subclass's job."""

    def call(self, e: ir.Call):  # pragma: no cover - provided by the control compiler
        raise NotImplementedError

    # -- reads ------------------------------------------------------------------------
    def expr(self, e: ir.Expr):
        if e.const is not None and (
            not isinstance(e, ir.Call) or getattr(e, "kind", None) == "size_method"
        ):
            return _const(e.const)
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise unsupported(e.pos, f"expression {type(e).__name__}")
        return m(e)

    def _Name(self, e: ir.Name):
        d = e.decl
        if isinstance(d, Var) and d.slot is not None:
            s = d.slot
            return lambda f: f[s]
        if isinstance(d, Var) and d.composite is not None:
            return self.expr(d.composite)  # a struct/header/tuple constant: its initializer
        raise P4Error.at(e.pos, f"'{e.name}' cannot be read here")

    def _DefaultValue(self, e: ir.DefaultValue):
        t = e.type  # a composite one: scalars are constants (e.const)
        return lambda f: default_value(t)

    def _Member(self, e: ir.Member):
        bt = e.expr.type
        if isinstance(bt, HeaderT):
            i = bt.index[e.name]
            base = e.expr
            path = field_path(base)
            if path is not None:
                # Common shapes compiled flat: `x.f` and `x.h.f` on a frame variable.
                if len(path) == 1:
                    s = path[0]
                    return lambda f: f[s].v[i]
                if len(path) == 2:
                    s, j = path
                    return lambda f: f[s].v[j].v[i]
            g = self.expr(base)
            return lambda f: g(f).v[i]
        if isinstance(bt, StackT):
            g = self.expr(e.expr)
            size = bt.size
            if e.name == "next":

                def nxt(f):
                    st = g(f)
                    if st.next >= size:
                        raise StackOutOfBounds()
                    return st.elems[st.next]

                return nxt
            if e.name == "last":

                def last(f):
                    st = g(f)
                    if st.next == 0:
                        raise StackOutOfBounds()
                    return st.elems[st.next - 1]

                return last
            if e.name == "lastIndex":
                return lambda f: (g(f).next - 1) & 0xFFFFFFFF
            if e.name == "size":
                return _const(size)
        if e.name in ("hit", "miss", "action_run"):
            g = self.expr(e.expr)
            if e.name == "hit":
                return lambda f: g(f)[0]
            if e.name == "miss":
                return lambda f: not g(f)[0]
            return lambda f: g(f)[1]
        raise P4Error.at(e.pos, f"cannot read member '{e.name}' of {bt}")

    def _Index(self, e: ir.Index):
        g = self.expr(e.expr)
        if isinstance(e.expr.type, TupleT):  # constant index (checked by the front end)
            i = e.index.const
            return lambda f: g(f)[i]
        pinned = getattr(e, "pinned", None)  # see BlockCompiler.assign
        idx = (lambda f: pinned[0]) if pinned is not None else self.expr(e.index)
        size = e.expr.type.size
        elem_t = e.expr.type.elem

        def index(f):
            i = idx(f)
            if not 0 <= i < size:
                # As p4c compiles a run-time index for BMv2: an element outside the stack
                # reads as a header never valid (all zero), and writes to it go nowhere.
                return default_value(elem_t)
            return g(f).elems[i]

        return index

    def _Slice(self, e: ir.Slice):
        g = self.expr(e.expr)
        lo = e.lo.const
        m = (1 << (e.hi.const - lo + 1)) - 1
        return lambda f: (g(f) >> lo) & m

    def _Unary(self, e: ir.Unary):
        g = self.expr(e.expr)
        t = e.type
        if e.op == "!":
            return lambda f: not g(f)
        if e.op == "+":
            return g
        if e.op == "-":
            if isinstance(t, Bits):
                wrap = t.wrap
                if not t.signed:
                    m = (1 << t.width) - 1
                    return lambda f: (-g(f)) & m
                return lambda f: wrap(-g(f))
            return lambda f: -g(f)
        if e.op == "~":
            if t.signed:
                return lambda f: ~g(f)
            m = (1 << t.width) - 1
            return lambda f: g(f) ^ m
        raise P4Error.at(e.pos, f"unknown unary operator {e.op}")

    def _Binary(self, e: ir.Binary):
        op = e.op
        a, b = self.expr(e.left), self.expr(e.right)
        c = e.right.const
        if c is not None and op in _CONST_RIGHT and not isinstance(e.type, InfInt):
            fast = _CONST_RIGHT[op](a, c, e.type)
            if fast is not None:
                return fast
        if op == "&&":
            return lambda f: a(f) and b(f)
        if op == "||":
            return lambda f: a(f) or b(f)
        if op in ("==", "!=") and is_composite(e.left.type):
            if op == "==":
                return lambda f: values_equal(a(f), b(f))
            return lambda f: not values_equal(a(f), b(f))
        if op == "==":
            return lambda f: a(f) == b(f)
        if op == "!=":
            return lambda f: a(f) != b(f)
        if op == "<":
            return lambda f: a(f) < b(f)
        if op == ">":
            return lambda f: a(f) > b(f)
        if op == "<=":
            return lambda f: a(f) <= b(f)
        if op == ">=":
            return lambda f: a(f) >= b(f)
        t = e.type
        if op == "++":
            lt, rt = e.left.type, e.right.type
            wb = rt.width
            ma, mb = (1 << lt.width) - 1, (1 << wb) - 1
            if t.signed:
                wrap = t.wrap
                return lambda f: wrap(((a(f) & ma) << wb) | (b(f) & mb))
            return lambda f: ((a(f) & ma) << wb) | (b(f) & mb)
        if isinstance(t, InfInt):
            raise P4Error.at(e.pos, "an integer without a width needs a constant value here")
        w = t.width
        m = (1 << w) - 1
        signed = t.signed
        wrap = t.wrap
        if op == "+":
            return (lambda f: wrap(a(f) + b(f))) if signed else (lambda f: (a(f) + b(f)) & m)
        if op == "-":
            return (lambda f: wrap(a(f) - b(f))) if signed else (lambda f: (a(f) - b(f)) & m)
        if op == "*":
            return (lambda f: wrap(a(f) * b(f))) if signed else (lambda f: (a(f) * b(f)) & m)
        if op in ("/", "%"):
            is_div = op == "/"

            def div(f):
                y = b(f)
                if y == 0:
                    # BMv2 leaves the result undefined; p4sim gives 0 rather than crash.
                    return 0
                return a(f) // y if is_div else a(f) % y

            return div
        if op == "&":
            return lambda f: a(f) & b(f)
        if op == "|":
            return lambda f: a(f) | b(f)
        if op == "^":
            return lambda f: a(f) ^ b(f)
        if op == "<<":

            def shl(f):
                s = b(f)
                if s >= w:
                    return 0
                return wrap(a(f) << s) if signed else (a(f) << s) & m

            return shl
        if op == ">>":
            # Python's >> on a negative int is an arithmetic shift: sign fill, -1 past the width.
            return lambda f: a(f) >> b(f)
        if op in ("|+|", "|-|"):
            lo = -(1 << (w - 1)) if signed else 0
            hi = (1 << (w - 1)) - 1 if signed else m
            if op == "|+|":
                return lambda f: max(lo, min(hi, a(f) + b(f)))
            return lambda f: max(lo, min(hi, a(f) - b(f)))
        raise P4Error.at(e.pos, f"unknown operator {op}")

    def _Ternary(self, e: ir.Ternary):
        c, a, b = self.expr(e.cond), self.expr(e.then), self.expr(e.other)
        return lambda f: a(f) if c(f) else b(f)

    def _Cast(self, e: ir.Cast):
        g = self.expr(e.expr)
        to, frm = e.type, e.expr.type
        if isinstance(to, Bits):
            if isinstance(frm, BoolT):
                return lambda f: 1 if g(f) else 0
            if to.signed:
                return lambda f: to.wrap(g(f))
            m = (1 << to.width) - 1
            return lambda f: g(f) & m
        if isinstance(to, BoolT):
            return lambda f: bool(g(f))
        if isinstance(to, EnumT) and to.underlying is not None:
            wrap = to.underlying.wrap
            return lambda f: wrap(g(f))
        return g

    def _Call(self, e: ir.Call):
        return self.call(e)

    def _ListExpr(self, e: ir.ListExpr):
        items = [self.expr(x) for x in e.items]
        t = e.type
        if isinstance(t, HeaderT):
            if t.kind == "header" and not t.nested:
                return lambda f: Header(t, [g(f) for g in items], True)
            if t.kind == "header":
                return lambda f: Header(t, [copy_value(g(f)) for g in items], True)
            return lambda f: Struct(t, [copy_value(g(f)) for g in items])
        return lambda f: [g(f) for g in items]

    def _StructInit(self, e: ir.StructInit):
        t = e.type
        getters = {n: self.expr(x) for n, x in e.fields}
        order = [getters[n] for n, _ in t.fields]
        if t.kind == "header" and not t.nested:
            return lambda f: Header(t, [g(f) for g in order], True)
        if t.kind == "header":
            return lambda f: Header(t, [copy_value(g(f)) for g in order], True)
        return lambda f: Struct(t, [copy_value(g(f)) for g in order])

    # -- writes -----------------------------------------------------------------------
    def lvalue(self, e: ir.Expr):
        """A setter `fn(f, value)`. Composite values are copied into the existing object."""
        if is_composite(e.type):
            g = self.expr(e)
            if isinstance(e, ir.Name):
                s = e.decl.slot
                return lambda f, v: assign_into(f[s], v, True)
            return lambda f, v: assign_into(g(f), v, True)
        if isinstance(e, ir.Name):
            s = e.decl.slot
            if s is None:
                raise P4Error.at(e.pos, f"'{e.name}' is not assignable")

            def set_slot(f, v):
                f[s] = v

            return set_slot
        if isinstance(e, ir.Member):
            bt = e.expr.type
            if isinstance(bt, HeaderT):
                i = bt.index[e.name]
                base = e.expr
                path = field_path(base)
                if path is not None and len(path) == 1:
                    s = path[0]

                    def set_field_direct(f, v):
                        f[s].v[i] = v

                    return set_field_direct
                if path is not None and len(path) == 2:
                    s, j = path

                    def set_field_nested(f, v):
                        f[s].v[j].v[i] = v

                    return set_field_nested
                g = self.expr(base)

                def set_field(f, v):
                    g(f).v[i] = v

                return set_field
        if isinstance(e, ir.Index) and isinstance(e.expr.type, TupleT):
            g, i = self.expr(e.expr), e.index.const  # a tuple is a list, its index a constant

            def set_item(f, v):
                g(f)[i] = v

            return set_item
        if isinstance(e, ir.Slice):
            g = self.expr(e.expr)
            setter = self.lvalue(e.expr)
            lo = e.lo.const
            m = (1 << (e.hi.const - lo + 1)) - 1
            clear = ~(m << lo)

            base_t = e.expr.type
            if base_t.signed:  # keep int<W> values in their signed range
                wrap = base_t.wrap

                def set_slice_signed(f, v):
                    setter(f, wrap((g(f) & clear) | ((v & m) << lo)))

                return set_slice_signed

            def set_slice(f, v):
                setter(f, (g(f) & clear) | ((v & m) << lo))

            return set_slice
        raise P4Error.at(e.pos, "expression is not assignable")


def field_path(e: ir.Expr):
    """(slot,) for a frame variable, (slot, field index) for `var.field`; else None."""
    if isinstance(e, ir.Name) and isinstance(e.decl, Var) and e.decl.slot is not None:
        return (e.decl.slot,)
    if (
        isinstance(e, ir.Member)
        and isinstance(e.expr.type, HeaderT)
        and isinstance(e.expr, ir.Name)
        and isinstance(e.expr.decl, Var)
        and e.expr.decl.slot is not None
    ):
        return (e.expr.decl.slot, e.expr.type.index[e.name])
    return None


def _arith_const(op):
    def build(a, c, t):
        if not isinstance(t, Bits) or t.signed:
            return None
        m = (1 << t.width) - 1
        if op == "+":
            return lambda f: (a(f) + c) & m
        if op == "-":
            return lambda f: (a(f) - c) & m
        if op == "&":
            return lambda f: a(f) & c
        if op == "|":
            return lambda f: a(f) | c
        return None

    return build


# Binary operators with a constant right operand, compiled without a second call.
_CONST_RIGHT = {
    "==": lambda a, c, t: (lambda f: a(f) == c),
    "!=": lambda a, c, t: (lambda f: a(f) != c),
    "<": lambda a, c, t: (lambda f: a(f) < c),
    ">": lambda a, c, t: (lambda f: a(f) > c),
    "<=": lambda a, c, t: (lambda f: a(f) <= c),
    ">=": lambda a, c, t: (lambda f: a(f) >= c),
    "+": _arith_const("+"),
    "-": _arith_const("-"),
    "&": _arith_const("&"),
    "|": _arith_const("|"),
}


def copy_in(t, g):
    """Getter of an argument's value as a parameter receives it (copy-in): composite values
    are assigned into a fresh value as BMv2 runs p4c's `param = arg` (assign_header), so
    an invalid header arrives invalid with its fields at 0, not with the fields the caller's
    header holds (which the spec leaves unspecified)."""
    if isinstance(t, (HeaderT, StackT)):

        def fresh_copy(f):
            v = default_value(t)
            assign_into(v, g(f), True)
            return v

        return fresh_copy
    return copy_if_composite(t, g)


def copy_if_composite(t, g):
    """Getter that copies composite values (for copy-in of `in` arguments and assignments)."""
    if is_composite(t):
        return lambda f: copy_value(g(f))
    return g

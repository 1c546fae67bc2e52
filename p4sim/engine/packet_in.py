"""The packet_in extern's methods (extract, lookahead, advance, length) and verify, compiled
for the block that calls them: `c` is that block's compiler (p4sim.engine.control's
BlockCompiler, or the parser's), which hands these functions its expression getters."""

from __future__ import annotations

from p4sim.engine.expressions import ParserError
from p4sim.engine.layout import layout_of
from p4sim.engine.values import Header, Stack, Struct, VarbitLayout
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import Bits, BoolT, EnumT, HeaderT, StackT


def compile_extract_dont_care(c, e: ir.Call, pk_get, too_short: int):
    t = e.targs[0] if e.targs else None
    if not (isinstance(t, HeaderT) and t.kind == "header"):
        raise P4Error.at(e.pos, "extract into _ needs a header type argument: extract<H>(_)")
    lay = layout_of(t, e.pos)
    if lay.has_varbit:
        raise unsupported(e.pos, "extract<H>(_) of a header with a varbit field")
    n = lay.nbytes

    def skip(f):
        pk = pk_get(f)
        if pk.pos + n > len(pk.data):
            raise ParserError(too_short)
        pk.pos += n
        if c.rt.tracing:
            c.rt.trace_skip(f"extract<{t.type_name}>(_)", n)

    return skip


def compile_packet_in(c, e: ir.Call, method: str):
    pk_get = c.expr(e.func.expr)
    too_short = c.rt.error_codes["PacketTooShort"]
    if method == "extract":
        return compile_extract(c, e, pk_get, too_short)
    if method == "lookahead":
        return compile_lookahead(c, e, pk_get, too_short)
    if method == "advance":
        g = c.arg(e, 0)

        def advance(f):
            bits = g(f)
            pk = pk_get(f)
            if bits % 8:
                raise ParserError(c.rt.error_codes["ParserInvalidArgument"])
            if pk.pos + bits // 8 > len(pk.data):
                raise ParserError(too_short)
            pk.pos += bits // 8
            if c.rt.tracing:
                c.rt.trace_skip("advance", bits // 8)

        return advance
    if method == "length":
        return lambda f: len(pk_get(f).data) & 0xFFFFFFFF
    raise unsupported(e.pos, f"packet_in.{method}")


def compile_extract(c, e: ir.Call, pk_get, too_short: int):
    """extract(hdr), extract(stack.next), extract of a union member; varbit and `_` apart."""
    target = e.args[0].value
    if target is None:  # extract<H>(_): H's bytes are checked and skipped
        return compile_extract_dont_care(c, e, pk_get, too_short)
    t = target.type
    if not (isinstance(t, HeaderT) and t.kind == "header"):
        raise P4Error.at(target.pos, f"extract needs a header, got {t}")
    lay = layout_of(t, target.pos)
    if lay.has_varbit != (len(e.args) == 2):
        raise P4Error.at(
            e.pos,
            "extract(hdr, size_in_bits) is for headers with a varbit field, extract(hdr) for the others",
        )
    if lay.has_varbit:
        return compile_extract_varbit(c, e, pk_get, lay)
    n = lay.nbytes
    unpack = lay.unpack
    if (
        isinstance(target, ir.Member)
        and target.name == "next"
        and isinstance(target.expr.type, StackT)
    ):
        st_get = c.expr(target.expr)
        size = target.expr.type.size
        err_stack = c.rt.error_codes["StackOutOfBounds"]

        def next_element(f):
            st = st_get(f)
            if st.next >= size:
                raise ParserError(err_stack)
            return st.elems[st.next]

        element = compile_extract_plain(
            c.rt, t.type_name, next_element, pk_get, n, unpack, too_short
        )

        def extract_next(f):
            element(f)
            st_get(f).next += 1

        return extract_next
    h_get = c.expr(target)
    plain = compile_extract_plain(c.rt, t.type_name, h_get, pk_get, n, unpack, too_short)
    siblings = c.union_siblings(target)
    if siblings is not None:
        union = target.expr
        if (
            isinstance(union, ir.Member)
            and union.name == "next"
            and isinstance(union.expr.type, StackT)
        ):
            # extract(stack.next.member) of a stack of header unions: the element is
            # complete, so nextIndex moves on (as for a stack of headers)
            st_get = c.expr(union.expr)

            def extract_next_union_member(f):
                plain(f)
                siblings(f)
                st_get(f).next += 1

            return extract_next_union_member

        def extract_union_member(f):
            plain(f)
            siblings(f)

        return extract_union_member
    return plain


def compile_lookahead(c, e: ir.Call, pk_get, too_short: int):
    """lookahead<T>() of a header, a bit string or a struct of bit fields."""
    if not e.targs:
        raise P4Error.at(e.pos, "lookahead needs a type argument: lookahead<T>()")
    t = e.targs[0]
    if isinstance(t, HeaderT) and t.kind == "header":
        lay = layout_of(t, e.pos)
        if lay.has_varbit:
            raise unsupported(e.pos, "lookahead of a header with a varbit field")
        n = lay.nbytes

        def look_header(f):
            pk = pk_get(f)
            if pk.pos + n > len(pk.data):
                raise ParserError(too_short)
            return Header(t, lay.unpack(int.from_bytes(pk.data[pk.pos : pk.pos + n], "big")), True)

        return look_header
    if isinstance(t, (Bits, BoolT)):
        w = 1 if isinstance(t, BoolT) else t.width
        n = (w + 7) // 8
        shift = n * 8 - w
        m = (1 << w) - 1
        conv = bool if isinstance(t, BoolT) else (t.wrap if t.signed else (lambda x: x))

        def look_bits(f):
            pk = pk_get(f)
            if pk.pos + n > len(pk.data):
                raise ParserError(too_short)
            return conv((int.from_bytes(pk.data[pk.pos : pk.pos + n], "big") >> shift) & m)

        return look_bits
    if isinstance(t, HeaderT) and t.kind == "struct":
        # a struct of bit fields, headers, header stacks and such structs, laid out in
        # declaration order (p4c and BMv2 allow it; p4c's issue2465-bmv2): its headers valid
        width, build = _lookahead_reader(t, e.pos)
        n = (width + 7) // 8

        def look_struct(f):
            pk = pk_get(f)
            if pk.pos + n > len(pk.data):
                raise ParserError(too_short)
            return build(int.from_bytes(pk.data[pk.pos : pk.pos + n], "big") >> (n * 8 - width))

        return look_struct
    raise unsupported(e.pos, f"lookahead of {t}")


def _lookahead_reader(t, pos):
    """(width in bits, fn(int of that width) -> the value of type t it holds) for a
    lookahead<t>(): bit fields, headers (valid), stacks of headers (each element valid,
    nextIndex 0) and structs of these, first field in the most significant bits."""
    if isinstance(t, (Bits, BoolT)):
        return (1, bool) if isinstance(t, BoolT) else (t.width, t.wrap if t.signed else int)
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width, int
    if isinstance(t, HeaderT) and t.kind == "header":
        lay = layout_of(t, pos)
        if lay.has_varbit:
            raise unsupported(pos, f"lookahead of a header with a varbit field ({t})")
        return lay.bits, lambda x: Header(t, lay.unpack(x), True)
    if isinstance(t, StackT) and t.elem.kind == "header":
        w, elem = _lookahead_reader(t.elem, pos)
        m, size = (1 << w) - 1, t.size
        return w * size, lambda x: Stack(
            t, [elem((x >> (w * (size - 1 - i))) & m) for i in range(size)]
        )
    if isinstance(t, HeaderT) and t.kind == "struct":
        parts = [_lookahead_reader(ft, pos) for _, ft in t.fields]
        width = sum(w for w, _ in parts)

        def build(x):
            shift, values = width, []
            for w, part in parts:
                shift -= w
                values.append(part((x >> shift) & ((1 << w) - 1)))
            return Struct(t, values)

        return width, build
    raise unsupported(pos, f"lookahead of {t}")


def compile_extract_plain(rt, type_name: str, h_get, pk_get, n, unpack, too_short):
    """extract(hdr) of a header of `n` bytes (a union member too: its siblings are the
    caller's); traced, as BMv2 logs each extraction, when the device traces."""

    def extract(f):
        pk = pk_get(f)
        h = h_get(f)
        p = pk.pos
        if p + n > len(pk.data):
            h.valid = False
            raise ParserError(too_short)
        h.v = unpack(int.from_bytes(pk.data[p : p + n], "big"))
        h.valid = True
        pk.pos = p + n
        if rt.tracing:
            rt.trace_extract(type_name, n)

    return extract


def compile_extract_varbit(c, e: ir.Call, pk_get, lay: VarbitLayout):
    """extract(hdr, bits): the varbit field takes `bits` bits (spec: HeaderTooShort when
    more than its maximum width; the size must keep the header whole bytes)."""
    errors = c.rt.error_codes
    too_short, too_long, bad = (
        errors["PacketTooShort"],
        errors["HeaderTooShort"],
        errors["ParserInvalidArgument"],
    )
    target = e.args[0].value
    stack_next = (
        isinstance(target, ir.Member)
        and target.name == "next"
        and isinstance(target.expr.type, StackT)
    )
    if stack_next:  # the element at nextIndex; nextIndex advances once it is extracted
        st_get = c.expr(target.expr)
        stack_size = target.expr.type.size
        err_stack = errors["StackOutOfBounds"]

        def h_get(f):
            st = st_get(f)
            if st.next >= stack_size:
                raise ParserError(err_stack)
            return st.elems[st.next]

    else:
        h_get = c.expr(target)
    size = c.arg(e, 1)
    fixed, max_bits = lay.bits, lay.max_bits
    unpack = lay.unpack_var

    def extract_varbit(f):
        pk = pk_get(f)
        h = h_get(f)
        var = size(f)
        total = fixed + var
        # BMv2's order (bm_sim extract_VL): not whole bytes, then not enough data, then
        # more than the varbit's maximum
        n = total // 8
        p = pk.pos
        for failed, code in (
            (total % 8, bad),
            (p + n > len(pk.data), too_short),
            (total > max_bits, too_long),
        ):
            if failed:
                h.valid = False
                raise ParserError(code)
        h.v = unpack(int.from_bytes(pk.data[p : p + n], "big"), total, var)
        h.valid = True
        pk.pos = p + n
        if stack_next:
            st_get(f).next += 1
        if c.rt.tracing:
            c.rt.trace_extract(target.type.type_name, n)

    return extract_varbit


def compile_verify(c, e: ir.Call):
    cond = c.arg(e, 0)
    err = c.arg(e, 1)

    def verify(f):
        if not cond(f):
            raise ParserError(err(f))

    return verify

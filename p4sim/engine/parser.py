"""Parsers: states, select, and the packet_in extern (extract, lookahead, advance, length).

A parser compiles to `run(f) -> error code` (0 = error.NoError, -1 = an explicit `reject`
without an error). On a parser error (packet too short, no select match, stack overflow,
failed verify) the parser stops in `reject` and returns the error; what happens next is the architecture's business (v1model: the packet
continues into ingress with standard_metadata.parser_error set, as BMv2 does). Headers must
be whole bytes, as BMv2 requires.
"""

from __future__ import annotations

from p4sim.engine.control import BlockCompiler, as_int
from p4sim.engine.expressions import ParserError, ParserReject, StackOutOfBounds
from p4sim.engine.values import Header, HeaderLayout, Struct, VarbitLayout
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import Bits, BoolT, HeaderT, StackT, Varbit

ACCEPT, REJECT = -1, -2
REJECTED = -1  # run() result for an explicit `transition reject` without an error
MAX_TRANSITIONS = 10_000  # guard against parser loops; reported as error.ParserTimeout


class PacketIn:
    """The packet_in extern: the frame and the extraction cursor (in bytes)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0


def layout_of(t: HeaderT, pos=None):
    """The (cached) byte layout of a header type. Cached on the type object itself: a cache
    keyed by id() could hand a new program's type the layout of a freed one."""
    lay = getattr(t, "_layout", None)
    if lay is None:
        if any(isinstance(ft, Varbit) for _, ft in t.fields):
            lay = VarbitLayout(t)
        else:
            lay = HeaderLayout(t)
            if lay.bits % 8:
                raise P4Error.at(
                    pos,
                    f"header {t.type_name} is {lay.bits} bits long: headers must be a whole "
                    "number of bytes (as in BMv2)",
                )
        t._layout = lay
    return lay


class ParserCompiler(BlockCompiler):
    def compile(self):
        d: ir.ParserDecl = self.decl
        errors = self.rt.error_codes
        self.err_too_short = errors["PacketTooShort"]
        self.err_no_match = errors["NoMatch"]
        self.err_stack = errors["StackOutOfBounds"]
        timeout = errors["ParserTimeout"]
        order = {s.name: i for i, s in enumerate(d.states)}
        order["accept"], order["reject"] = ACCEPT, REJECT
        self.order = order
        local_init = self.block([loc for loc in d.locals if isinstance(loc, ir.VarDecl)])
        fns = [self.state(s) for s in d.states]
        start = order["start"]
        err_stack = self.err_stack
        rt = self.rt
        names = [s.name for s in d.states]

        def run(f):
            local_init(f)
            i = start
            steps = 0
            try:
                while i >= 0:
                    if rt.tracing:
                        rt.trace_state(names[i])
                    i = fns[i](f)
                    steps += 1
                    if steps > MAX_TRANSITIONS:
                        return timeout
            except ParserError as e:
                return e.code
            except ParserReject:
                return REJECTED
            except StackOutOfBounds:
                return err_stack
            return REJECTED if i == REJECT else 0

        return run

    def state(self, s: ir.ParserState):
        body = self.block(s.stmts)
        tr = s.transition
        if tr.state is not None:
            nxt = self.order[tr.state]

            def direct(f):
                body(f)
                return nxt

            return direct
        select = self.select(tr)

        def selecting(f):
            body(f)
            return select(f)

        return selecting

    def select(self, tr: ir.Transition):
        keys = [self.expr(e) for e in tr.select]
        keys = [as_int(g) if isinstance(e.type, BoolT) else g for g, e in zip(keys, tr.select)]
        no_match = self.err_no_match
        cases = []  # (checks or None for default, target)
        for c in tr.cases:
            target = self.order[c.state]
            if len(c.keyset) == 1 and isinstance(c.keyset[0], ir.Default) and len(keys) != 1:
                cases.append((None, target))
                continue
            if getattr(c, "value_set", None) is not None:
                vset = self.rt.value_sets[self.node.value_sets[c.value_set]]
                cases.append(([("v", vset, None)], target))
                continue
            checks = []
            for k in c.keyset:
                if isinstance(k, ir.Default):
                    checks.append(None)
                elif isinstance(k, ir.Mask):
                    m = int(k.mask.const)
                    checks.append(("m", int(k.value.const) & m, m))
                elif isinstance(k, ir.Range):
                    checks.append(("r", int(k.low.const), int(k.high.const)))
                else:
                    checks.append(("e", int(k.const), None))
            if all(ch is None for ch in checks):
                checks = None
            cases.append((checks, target))
        # Fast path: one key, exact values, optional default: a dict lookup.
        if len(keys) == 1 and all(ch is None or ch[0][0] == "e" for ch, _ in cases):
            table: dict = {}
            default = None
            for ch, target in cases:
                if ch is None:
                    default = target
                    break
                table.setdefault(ch[0][1], target)
            g = keys[0]
            get = table.get
            if default is None:

                def select_exact(f):
                    nxt = get(g(f))
                    if nxt is None:
                        raise ParserError(no_match)
                    return nxt

                return select_exact
            return lambda f: get(g(f), default)

        def select_general(f):
            vals = [g(f) for g in keys]
            for checks, target in cases:
                if checks is None:
                    return target
                if checks[0] is not None and checks[0][0] == "v":
                    if checks[0][1].matches(vals):
                        return target
                    continue
                for v, ch in zip(vals, checks):
                    if ch is None:
                        continue
                    kind, a, b = ch
                    if kind == "e":
                        if v != a:
                            break
                    elif kind == "m":
                        if v & b != a:
                            break
                    elif not a <= v <= b:
                        break
                else:
                    return target
            raise ParserError(no_match)

        return select_general


# --------------------------------------------------------------------------- packet_in
def compile_extract_dont_care(c: BlockCompiler, e: ir.Call, pk_get, too_short: int):
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

    return skip


def compile_packet_in(c: BlockCompiler, e: ir.Call, method: str):
    pk_get = c.expr(e.func.expr)
    too_short = c.rt.error_codes["PacketTooShort"]
    if method == "extract":
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
        rt = c.rt
        if (
            isinstance(target, ir.Member)
            and target.name == "next"
            and isinstance(target.expr.type, StackT)
        ):
            st_get = c.expr(target.expr)
            size = target.expr.type.size
            err_stack = c.rt.error_codes["StackOutOfBounds"]

            def extract_next(f):
                pk = pk_get(f)
                st = st_get(f)
                if st.next >= size:
                    raise ParserError(err_stack)
                h = st.elems[st.next]
                p = pk.pos
                if p + n > len(pk.data):
                    h.valid = False
                    raise ParserError(too_short)
                h.v = unpack(int.from_bytes(pk.data[p : p + n], "big"))
                h.valid = True
                pk.pos = p + n
                st.next += 1

            return extract_next
        h_get = c.expr(target)
        siblings = c.union_siblings(target)
        if siblings is not None:
            plain = compile_extract_plain(h_get, pk_get, n, unpack, too_short)
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
                rt.trace_extract(t.type_name, n)

        return extract
    if method == "lookahead":
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
                return Header(
                    t, lay.unpack(int.from_bytes(pk.data[pk.pos : pk.pos + n], "big")), True
                )

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
        if (
            isinstance(t, HeaderT)
            and t.kind == "struct"
            and all(isinstance(ft, (Bits, BoolT)) for _, ft in t.fields)
        ):
            # a struct of bit fields, laid out as a header would be (p4c and BMv2 allow it)
            lay = layout_of(t, e.pos)
            n = lay.nbytes

            def look_struct(f):
                pk = pk_get(f)
                if pk.pos + n > len(pk.data):
                    raise ParserError(too_short)
                return Struct(
                    t, list(lay.unpack(int.from_bytes(pk.data[pk.pos : pk.pos + n], "big")))
                )

            return look_struct
        raise unsupported(e.pos, f"lookahead of {t}")
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

        return advance
    if method == "length":
        return lambda f: len(pk_get(f).data) & 0xFFFFFFFF
    raise unsupported(e.pos, f"packet_in.{method}")


def compile_extract_plain(h_get, pk_get, n, unpack, too_short):
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

    return extract


def compile_extract_varbit(c: BlockCompiler, e: ir.Call, pk_get, lay: VarbitLayout):
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
        if total > max_bits:
            h.valid = False
            raise ParserError(too_long)
        if total % 8:
            h.valid = False
            raise ParserError(bad)
        n = total // 8
        p = pk.pos
        if p + n > len(pk.data):
            h.valid = False
            raise ParserError(too_short)
        h.v = unpack(int.from_bytes(pk.data[p : p + n], "big"), total, var)
        h.valid = True
        pk.pos = p + n
        if stack_next:
            st_get(f).next += 1

    return extract_varbit


def compile_verify(c: BlockCompiler, e: ir.Call):
    cond = c.arg(e, 0)
    err = c.arg(e, 1)

    def verify(f):
        if not cond(f):
            raise ParserError(err(f))

    return verify

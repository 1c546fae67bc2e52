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
from p4sim.frontend import ir
from p4sim.frontend.types import BoolT

ACCEPT, REJECT = -1, -2
REJECTED = -1  # run() result for an explicit `transition reject` without an error
MAX_TRANSITIONS = 10_000  # guard against parser loops; reported as error.ParserTimeout


class PacketIn:
    """The packet_in extern: the frame and the extraction cursor (in bytes)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0


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

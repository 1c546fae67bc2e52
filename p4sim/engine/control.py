"""Controls: statements, actions, table application, calls; compiled into closures.

A `BlockCompiler` compiles one parser or control *instance* (a `BlockNode`) for one device:
extern instances and tables resolve to that device's runtime objects at compile time, so the
data path never looks anything up by name. Control flow uses exceptions for the rare cases
(`exit`, `return`), plain calls for everything else.
"""

from __future__ import annotations

import logging
import operator

from p4sim.engine.action_profiles import Member
from p4sim.engine.deparser import compile_packet_out
from p4sim.engine.expressions import (
    ExprCompiler,
    LoopLimitExceeded,
    ParserError,
    ParserReject,
    copy_if_composite,
    copy_in,
    field_path,
    is_composite,
)
from p4sim.engine.externs import HASH_ALGORITHMS, pack_fields
from p4sim.engine.layout import packet_bytes
from p4sim.engine.packet_in import compile_packet_in, compile_verify
from p4sim.engine.values import (
    assign_into,
    default_value,
    fresh_fields,
    make_sibling_invalidator,
)
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.program import qualify
from p4sim.frontend.typecheck.symbols import Instance
from p4sim.frontend.types import Bits, BoolT, EnumT, ErrorT, HeaderT, TupleT, Varbit

trace = logging.getLogger("p4sim.trace")
log = logging.getLogger("p4sim")


def calls_in_indices(e: ir.Expr) -> list[ir.Index]:
    """The stack indices of an l-value that contain a call, outermost last.

    p4c (SideEffectOrdering) evaluates the calls of an assignment left to right, the
    l-value's first, and the rest of each expression afterwards: `a[f(x)] = g(y)` calls
    f before g, while `a[i] = g(y)` reads i after g ran."""
    found = []
    while isinstance(e, (ir.Member, ir.Slice, ir.Index)):
        if isinstance(e, ir.Index) and e.index.const is None and _has_call(e.index):
            found.append(e)
        e = e.expr
    return found[::-1]


def _has_call(e) -> bool:
    if isinstance(e, ir.Call):
        return True
    if isinstance(e, ir.Expr):
        return any(_has_call(v) for v in vars(e).values() if isinstance(v, (ir.Expr, list)))
    if isinstance(e, list):
        return any(_has_call(v) for v in e)
    if isinstance(e, ir.Arg):
        return _has_call(e.value)
    return False


class ExitSignal(Exception):
    """`exit`: ends the current top-level control (after copy-out)."""


class BreakSignal(Exception):
    pass


class ContinueSignal(Exception):
    pass


# A `for` loop that runs longer than this drops the packet (the spec leaves
# non-terminating loops undefined; BMv2 would never finish the packet).
MAX_LOOP_ITERATIONS = 65536


class ReturnSignal(Exception):
    """`return` from an action, control or function; carries the function result."""

    def __init__(self, value=None):
        self.value = value


class BlockCompiler(ExprCompiler):
    def __init__(self, runtime, node):
        self.rt = runtime  # the device's Runtime: tables, externs, architecture hooks
        self.node = node
        self.decl = node.decl
        self.action_fns: dict = {}  # ir.ActionDecl -> fn(f, argv)

    # -- statements -------------------------------------------------------------------
    def block(self, stmts: list[ir.Stmt]):
        fns = [fn for fn in (self.stmt(s) for s in stmts) if fn is not None]
        if not fns:
            return lambda f: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            a, b = fns

            def two(f):
                a(f)
                b(f)

            return two
        fns = tuple(fns)

        def seq(f):
            for fn in fns:
                fn(f)

        return seq

    def stmt(self, s: ir.Stmt):
        if isinstance(s, ir.Block):
            return self.block(s.stmts)
        if isinstance(s, ir.Empty):
            return None
        if isinstance(s, ir.Assign):
            return self.assign(s.lhs, s.rhs)
        if isinstance(s, ir.CallStmt):
            return self.call(s.call)
        if isinstance(s, ir.If):
            c = self.expr(s.cond)
            then = self.stmt(s.then) or (lambda f: None)
            if s.other is None:
                if s.cond.const is not None:
                    return then if s.cond.const else None

                def if_(f):
                    if c(f):
                        then(f)

                return if_
            other = self.stmt(s.other) or (lambda f: None)

            def if_else(f):
                if c(f):
                    then(f)
                else:
                    other(f)

            return if_else
        if isinstance(s, ir.VarDecl):
            if s.is_const:
                return None
            slot = s.var.slot
            t = s.var_type
            if s.init is not None:
                g = copy_if_composite(t, self.expr(s.init))

                def init(f):
                    f[slot] = g(f)

                return init

            def init_default(f):
                f[slot] = default_value(t)

            return init_default
        if isinstance(s, ir.Exit):

            def exit_(f):
                raise ExitSignal()

            return exit_
        if isinstance(s, ir.Return):
            if s.value is None:

                def ret(f):
                    raise ReturnSignal()

                return ret
            g = copy_if_composite(s.value.type, self.expr(s.value))

            def ret_value(f):
                raise ReturnSignal(g(f))

            return ret_value
        if isinstance(s, ir.Switch):
            return self.switch(s)
        if isinstance(s, ir.For):
            return self.for_loop(s)
        if isinstance(s, ir.Break):

            def break_(f):
                raise BreakSignal()

            return break_
        if isinstance(s, ir.Continue):

            def continue_(f):
                raise ContinueSignal()

            return continue_
        raise unsupported(s.pos, f"statement {type(s).__name__}")

    def for_loop(self, s: ir.For):
        init = self.block(s.init)
        cond = self.expr(s.cond) if s.cond is not None else (lambda f: True)
        body = self.stmt(s.body) or (lambda f: None)
        update = self.block(s.update)

        def for_(f):
            init(f)
            n = 0
            while cond(f):
                n += 1
                if n > MAX_LOOP_ITERATIONS:
                    raise LoopLimitExceeded()
                try:
                    body(f)
                except BreakSignal:
                    break
                except ContinueSignal:
                    pass
                update(f)

        return for_

    def assign(self, lhs: ir.Expr, rhs: ir.Expr):
        indices = calls_in_indices(lhs)
        if indices and rhs.const is None:
            return self.assign_indexed(lhs, rhs, indices)
        set_ = self.lvalue(lhs)
        g = self.expr(rhs)
        if makes_header_valid(lhs, rhs):
            # p4c writes `h = {...}` as h.setValid() and field assignments: BMv2's
            # add_header counts the header's bytes into the packet length when h was invalid
            target, nbytes = self.expr(lhs), packet_bytes(lhs.type, lhs.pos)
            adjust = self.rt.adjust_packet_length

            def assign_valid(f):
                h = target(f)
                was_valid = h.valid
                set_(f, g(f))
                if not was_valid:
                    adjust(nbytes(h))

            return assign_valid
        if is_composite(lhs.type):
            g = copy_if_composite(lhs.type, g)
        elif isinstance(lhs, ir.Member):
            path = field_path(lhs.expr)
            i = lhs.expr.type.index.get(lhs.name) if isinstance(lhs.expr.type, HeaderT) else None
            if path is not None and i is not None:
                # The common `hdr.h.f = expr` / `meta.f = expr`, without the setter call.
                if len(path) == 2:
                    s, j = path
                    if rhs.const is not None:
                        c = rhs.const

                        def assign_nested_const(f):
                            f[s].v[j].v[i] = c

                        return assign_nested_const

                    def assign_nested(f):
                        f[s].v[j].v[i] = g(f)

                    return assign_nested
                s = path[0]
                if rhs.const is not None:
                    c = rhs.const

                    def assign_field_const(f):
                        f[s].v[i] = c

                    return assign_field_const

                def assign_field(f):
                    f[s].v[i] = g(f)

                return assign_field

        def assign(f):
            set_(f, g(f))

        return assign

    def assign_indexed(self, lhs: ir.Expr, rhs: ir.Expr, indices: list[ir.Index]):
        """`a[f(x)].g = rhs`: an index with a call is evaluated once, before the right side
        (which may change what it reads through an inout argument), as p4c orders side
        effects (see calls_in_indices)."""
        getters = [self.expr(ix.index) for ix in indices]
        boxes = []
        for ix in indices:
            ix.pinned = [0]
            boxes.append(ix.pinned)
        try:
            set_ = self.lvalue(lhs)
            # `a[i].f op= b` is `a[i].f = a[i].f op b` with the same nodes for `a[i]`:
            # compiled while pinned, the index is evaluated once.
            g = self.expr(rhs)
        finally:
            for ix in indices:
                del ix.pinned
        if is_composite(lhs.type):
            g = copy_if_composite(lhs.type, g)
        pins = list(zip(boxes, getters))

        def assign_indexed(f):
            for box, gi in pins:
                box[0] = gi(f)
            set_(f, g(f))

        return assign_indexed

    def switch(self, s: ir.Switch):
        g = self.expr(s.expr)
        cases: dict = {}
        default = None
        pending = []  # labels falling through to the next block
        for c in s.cases:
            pending += c.labels
            if c.body is None:
                continue
            body = self.stmt(c.body) or (lambda f: None)
            for label in pending:
                if label is None:
                    default = body
                else:
                    key = (
                        self.node_action_name(label.decl)
                        if label.decl is not None and isinstance(label.decl, ir.ActionDecl)
                        else label.const
                    )
                    cases.setdefault(key, body)
            pending = []
        get = cases.get

        def switch(f):
            body = get(g(f), default)
            if body is not None:
                body(f)

        return switch

    def node_action_name(self, decl: ir.ActionDecl) -> str:
        # a top-level action's control-plane name, `@name` included, as the model has it
        return self.node.actions.get(decl) or qualify("", decl.name, decl.annotations)

    # -- calls ------------------------------------------------------------------------
    def call(self, e: ir.Call):
        kind = e.kind
        if kind == "header_method":
            g = self.expr(e.func.expr)
            if e.target == "isValid":
                return lambda f: g(f).valid
            if e.target == "setValid":
                t = e.func.expr.type
                siblings = self.union_siblings(e.func.expr)
                nbytes = packet_bytes(e.func.expr.type, e.pos)
                adjust = self.rt.adjust_packet_length
                var = next(
                    (i for i, (_, ft) in enumerate(t.fields) if isinstance(ft, Varbit)), None
                )

                def set_valid(f):
                    h = g(f)
                    if not h.valid:  # BMv2 (add_header) zeroes a header that becomes valid
                        v = fresh_fields(t)
                        if var is not None:  # its varbit keeps the width it had (Header::reset)
                            v[var] = (h.v[var][0], 0)
                        h.v = v
                        h.valid = True
                        adjust(nbytes(h))
                    if siblings is not None:  # their bytes stay counted (BMv2)
                        siblings(f)

                return set_valid

            nbytes = packet_bytes(e.func.expr.type, e.pos)
            adjust = self.rt.adjust_packet_length

            def set_invalid(f):
                h = g(f)
                if h.valid:
                    adjust(-nbytes(h))
                    h.valid = False

            return set_invalid
        if kind == "stack_method":
            return self.stack_method(e)
        if kind == "table_apply":
            return self.table_apply(e.target)
        if kind == "action":
            return self.direct_action_call(e)
        if kind == "function":
            return self.function_call(e)
        if kind == "block_apply":
            return self.block_apply(e)
        if kind in ("extern_method", "extern_func"):
            return self.extern_call(e)
        if kind == "static_assert":  # checked by the front end: nothing to run
            return None
        raise unsupported(e.pos, f"call of kind {kind}")

    def union_siblings(self, header_expr: ir.Expr):
        """For a member of a header_union, fn(f) invalidating the other members; else None."""
        if (
            isinstance(header_expr, ir.Member)
            and isinstance(header_expr.expr.type, HeaderT)
            and header_expr.expr.type.kind == "header_union"
        ):
            union = header_expr.expr
            return make_sibling_invalidator(self.expr(union), union.type.index[header_expr.name])
        return None

    def stack_method(self, e: ir.Call):
        g = self.expr(e.func.expr)
        n = e.count
        size = e.func.expr.type.size
        push = e.target == "push_front"
        elem_t = e.func.expr.type.elem
        if elem_t.kind == "header_union":  # elements copied member by member

            def shift_unions(f):
                st = g(f)
                elems = st.elems
                order = range(size - 1, -1, -1) if push else range(size)
                for i in order:
                    src = i - n if push else i + n
                    assign_into(elems[i], elems[src] if 0 <= src < size else default_value(elem_t))
                st.next = min(size, st.next + n) if push else max(0, st.next - n)

            return shift_unions

        def shift(f):
            # As BMv2 (bm_sim/stacks.cpp, StackP4_16): elements swap values, so the ones
            # made invalid hold what the elements shifted out held, which a program may read.
            st = g(f)
            elems = st.elems
            pairs = (
                [(i, i - n) for i in range(size - 1, n - 1, -1)]
                if push
                else [(i, i + n) for i in range(size - n)]
            )
            for i, j in pairs:
                a, b = elems[i], elems[j]
                a.v[:], b.v[:] = list(b.v), list(a.v)
                a.valid, b.valid = b.valid, a.valid
            for i in range(min(n, size)) if push else range(max(size - n, 0), size):
                elems[i].valid = False
            st.next = min(size, st.next + n) if push else max(0, st.next - n)

        return shift

    def bind_call(self, e: ir.Call, params: list[ir.Param]):
        """Argument handling for calls with copy-in/copy-out: returns (copy_in, copy_out)
        lists of (param, getter/setter)."""
        ins, outs = [], []
        for p, a in zip(params, e.args):
            if a.value is None:
                ins.append((p, None))
                continue
            if p.direction in ("", "in"):
                ins.append((p, copy_in(a.value.type, self.expr(a.value))))
            elif p.direction == "inout":
                # Copy-in of a composite value too: the callee may also write the
                # argument's variable directly (an action writing `hdr` while `hdr` is
                # its inout argument), and copy-out must then win.
                ins.append((p, copy_in(a.value.type, self.expr(a.value))))
                outs.append((p, self.lvalue(a.value), a.value))
            else:
                ins.append((p, None))
                outs.append((p, self.lvalue(a.value), a.value))
        for p in params[len(e.args) :]:
            if p.default is not None:
                ins.append((p, self.expr(p.default)))
        return ins, outs

    def direct_action_call(self, e: ir.Call):
        decl = e.target
        run = self.action_body(decl)
        ins, outs = self.bind_call(e, decl.params)
        own_frame = decl.top_level
        size = decl.frame_size
        slots_in = [(p.var.slot, g, p.type, p.direction) for p, g in ins]
        slots_out = [(p.var.slot, s) for p, s, _ in outs]
        body = run

        def call_action(f):
            g_frame = [None] * size if own_frame else f
            for slot, g, t, d in slots_in:
                g_frame[slot] = default_value(t) if g is None else g(f)
            try:
                body(g_frame)
            except ReturnSignal:
                pass
            except ExitSignal:
                # exit still copies out the action's out/inout arguments (P4_16 spec,
                # "Exit statement"; BMv2 does)
                for slot, s in slots_out:
                    s(f, g_frame[slot])
                raise
            for slot, s in slots_out:
                s(f, g_frame[slot])

        return call_action

    def action_body(self, decl: ir.ActionDecl):
        fn = self.action_fns.get(decl)
        if fn is None:
            fn = self.block(decl.body.stmts)
            self.action_fns[decl] = fn
        return fn

    def table_action(self, decl: ir.ActionDecl, ref: ir.ActionRef | None):
        """fn(f, argv) running an action from a table: directional params come from the
        actions list (`a(x)`), directionless ones from the entry (argv)."""
        body = self.action_body(decl)
        directional = [p for p in decl.params if p.direction]
        directionless = [p.var.slot for p in decl.params if not p.direction]
        # Control-plane values are unsigned bit strings: int<W> parameters get their sign.
        signed = [
            (i, p.type.wrap)
            for i, p in enumerate(x for x in decl.params if not x.direction)
            if isinstance(p.type, Bits) and p.type.signed
        ]
        bound = []
        outs = []
        if ref is not None and ref.args:
            fake = ir.Call(ref.pos, ref.name, [], ref.args[: len(directional)])
            ins, outs = self.bind_call(fake, directional)
            bound = [(p.var.slot, g, p.type) for p, g in ins]
            outs = [(p.var.slot, s) for p, s, _ in outs]
        own = decl.top_level
        size = decl.frame_size

        def run(f, argv):
            g_frame = [None] * size if own else f
            for slot, g, t in bound:
                g_frame[slot] = default_value(t) if g is None else g(f)
            for slot, value in zip(directionless, argv):
                g_frame[slot] = value
            for i, wrap in signed:
                g_frame[directionless[i]] = wrap(argv[i])
            try:
                body(g_frame)
            except ReturnSignal:
                pass
            except ExitSignal:  # copy-out still happens, as in direct_action_call
                for slot, s in outs:
                    s(f, g_frame[slot])
                raise
            for slot, s in outs:
                s(f, g_frame[slot])

        return run

    def table_apply(self, t: ir.TableDecl):
        tdef = self.node.tables[t]
        table = self.rt.tables[tdef.name]
        # Compile every action of the table for this instance.
        for ref in t.action_refs:
            name = self.node_action_name(ref.decl)
            table.bound[name] = self.table_action(ref.decl, ref)
        if "NoAction" not in table.bound:
            table.bound["NoAction"] = lambda f, argv: None
        table.rebind()
        keys = [self.expr(k.expr) for k in t.keys]
        key_fns = [key_value(g, k.expr.type) for g, k in zip(keys, t.keys)]
        for i, k in enumerate(t.keys):
            header = key_header(k.expr)
            if header is not None:
                key_fns[i] = zero_unless_valid(key_fns[i], self.expr(header))
        rt = self.rt
        name = tdef.name
        account = self.direct_resources(tdef)
        lookup = table.lookup
        k0 = key_fns[0] if len(key_fns) == 1 else None
        if table.profile is not None:
            return self.indirect_apply(t, table, key_fns)

        def apply(f):
            keyvals = [k0(f)] if k0 is not None else [g(f) for g in key_fns]
            if rt.tracing:  # the key, for tools that make entries matching it (pktdiff)
                trace.debug("Table %s: key %s", name, keyvals)
            rec = rt.hit = lookup(keyvals)  # the entry an action's direct externs use
            if rec is not None:
                if account is not None:
                    account(rec)
                if rt.tracing:
                    trace.debug(
                        "Table %s: hit, action %s%s", name, rec.entry.action, _args(rec.entry.args)
                    )
                rec.action_fn(f, rec.argv)
                return (True, rec.entry.action)
            fn, argv = table._default_bound
            if rt.tracing:
                trace.debug("Table %s: miss, default action %s", name, table._default_entry.action)
            fn(f, argv)
            return (False, table._default_entry.action)

        return apply

    def direct_resources(self, tdef):
        """What a hit does to the table's direct counter and direct meter, or None when it
        has neither: count the packet and its bytes (also in a table with idle timeouts),
        colour the packet by the entry's meter."""
        rt = self.rt
        # a direct counter, or idle timeouts, which read the hits (p4runtime/idle_timeouts.py)
        counted = tdef.direct_counter is not None or tdef.support_timeout
        meter = rt.meters.get(tdef.direct_meter) if tdef.direct_meter else None
        if not counted and meter is None:
            return None

        def account(rec) -> None:
            if counted:
                rec.entry.packets += 1
                rec.entry.bytes += rt.packet_length()
            if meter is not None:
                size = rt.packet_length() if meter.definition.unit == "bytes" else 1
                rt.direct_meter_color(
                    meter.definition.name, meter.execute_entry(rec, rec.entry.meter_config, size)
                )

        return account

    def indirect_apply(self, t: ir.TableDecl, table, key_fns):
        """A table implemented by an action profile or selector, as BMv2 runs it: a hit runs
        the entry's member, or the member its group's selector picks; a miss, and a hit on
        an empty group, run no action at all (p4c: "Target does not support default_action
        ... (due to action profiles)")."""
        tdef = table.definition
        rt = self.rt
        name = tdef.name
        account = self.direct_resources(tdef)
        lookup = table.lookup
        bound = table.bound
        choose = table.profile.choose
        algorithm = table.profile.definition.algorithm
        algo = HASH_ALGORITHMS[algorithm] if algorithm else None
        data = [self.field_list(k.expr) for k in t.selector_keys]

        def selector_hash(f) -> int:
            fields = []
            for d in data:
                fields += d(f)
            return algo(pack_fields(fields))

        def apply(f):
            rec = lookup([g(f) for g in key_fns])
            if rec is None:
                if rt.tracing:
                    trace.debug("Table %s: miss, no action (action profile table)", name)
                return (False, "")
            if account is not None:
                account(rec)
            member = rec.target
            if member.__class__ is not Member:
                group = member
                h = selector_hash(f) if algo is not None else 0
                member = choose(group, h)
                if member is None:
                    log.error("Lookup in table %s yielded an empty group", name)
                    return (True, "")
                if rt.tracing:
                    trace.debug(
                        "Table %s: group %d (%d slots), hash %#x picks member %d",
                        name,
                        group.info.group_id,
                        len(group.slots),
                        h,
                        member.info.member_id,
                    )
            action = member.info.action
            if rt.tracing:
                trace.debug("Table %s: hit, action %s%s", name, action, _args(member.info.args))
            bound[action](f, member.argv)
            return (True, action)

        return apply

    def function_call(self, e: ir.Call):
        decl: ir.FunctionDecl = e.target
        # Compiled once per device, not on the shared IR: the closures hold this device's
        # state (bound to the front end's checking device, a setValid() here crashed).
        bodies, key = self.rt.function_bodies, id(decl)
        if key not in bodies:
            bodies[key] = None
            bodies[key] = self.block(decl.body.stmts)
        ins, outs = self.bind_call(e, decl.params)
        slots_in = [(p.var.slot, g, p.type) for p, g in ins]
        slots_out = [(p.var.slot, s) for p, s, _ in outs]
        size = decl.frame_size

        def call_function(f):
            g_frame = [None] * size
            for slot, g, t in slots_in:
                g_frame[slot] = default_value(t) if g is None else g(f)
            result = None
            try:
                bodies[key](g_frame)
            except ReturnSignal as r:
                result = r.value
            for slot, s in slots_out:
                s(f, g_frame[slot])
            return result

        return call_function

    def block_apply(self, e: ir.Call):
        """`instance.apply(args)` of a nested control (or parser)."""
        inst: Instance = e.target
        child = self.node.children[inst]
        runner = self.rt.compile_block(child)
        decl = child.decl
        # As p4c inlines the call on BMv2: composite inout/out arguments by reference when
        # no two arguments overlap; else copied in and out by assignment (an invalid
        # header copied as invalid, its fields left: copy_in), an out one from its default.
        plan = []
        by_reference = not arguments_overlap(
            [a.value for p, a in zip(decl.params, e.args) if p.direction in ("out", "inout")]
        )
        for p, a in zip(decl.params, e.args):
            if p.var.slot is None:
                continue  # an extern object: bound by the model (BlockNode.externs)
            g = self.expr(a.value)
            if p.direction in ("", "in"):
                plan.append((p.var.slot, copy_in(p.type, g), None))
            elif by_reference and is_composite(p.type):
                plan.append((p.var.slot, g, None))
            elif p.direction == "out" and is_composite(p.type):
                plan.append(
                    (p.var.slot, lambda f, t=p.type: default_value(t), self.lvalue(a.value))
                )
            else:
                plan.append((p.var.slot, copy_in(p.type, g), self.lvalue(a.value)))
        size = decl.frame_size
        outs = [(slot, s) for slot, _, s in plan if s is not None]
        if isinstance(decl, ir.ParserDecl):

            def apply_parser(f):
                g_frame = [None] * size
                for slot, g, _ in plan:
                    g_frame[slot] = g(f)
                code = runner(g_frame)
                for slot, s in outs:
                    s(f, g_frame[slot])
                if code == -1:
                    raise ParserReject()
                if code:
                    raise ParserError(code)

            return apply_parser

        def apply_block(f):
            g_frame = [None] * size
            for slot, g, _ in plan:
                g_frame[slot] = g(f)
            try:
                runner(g_frame)
            finally:
                for slot, s in outs:
                    s(f, g_frame[slot])

        return apply_block

    # -- externs ----------------------------------------------------------------------
    def extern_call(self, e: ir.Call):
        if e.kind == "extern_method":
            inst: Instance = e.target
            kind = inst.type.decl.name
            name = e.method.name
            if kind == "packet_in":
                return compile_packet_in(self, e, name)
            if kind == "packet_out":
                return compile_packet_out(self, e, name)
            obj = self.rt.extern_object(self.node, inst)
            return self.rt.arch.compile_method(self, e, kind, name, obj, inst)
        if e.target.name == "verify":
            return compile_verify(self, e)
        return self.rt.arch.compile_function(self, e, e.target.name)

    # -- helpers used by extern implementations ----------------------------------------
    def arg(self, e: ir.Call, i: int):
        a = e.args[i]
        return self.expr(a.value)

    def out_arg(self, e: ir.Call, i: int):
        a = e.args[i]
        if a.value is None:
            return lambda f, v: None
        setter = self.lvalue(a.value)
        t = a.value.type
        if isinstance(t, Bits):
            m = (1 << t.width) - 1
            if t.signed:
                wrap = t.wrap
                return lambda f, v: setter(f, wrap(v))
            return lambda f, v: setter(f, v & m)
        return setter

    def field_list(self, e: ir.Expr, copy_in: bool = False):
        """fn(f) -> [(value, width)] for hashing/checksums: tuples, headers and structs are
        flattened field by field, in order. Invalid headers are left out, as BMv2 does. With
        copy_in (v1model hash()), a lone field of an invalid header still counts with the value
        it reads as: p4c copies hash() data into temporaries, so BMv2 sees no header there."""
        t = e.type
        if isinstance(e, ir.ListExpr):
            parts = [self.field_list(x, copy_in) for x in e.items]

            def flat_list(f):
                out = []
                for p in parts:
                    out += p(f)
                return out

            return flat_list
        g = self.expr(e)
        flat = flatten_fn(t, g, e.pos)
        if (
            not copy_in
            and isinstance(e, ir.Member)
            and isinstance(e.expr.type, HeaderT)
            and e.expr.type.kind == "header"
        ):
            # BMv2 leaves the fields of invalid headers out of hash/checksum data.
            valid = self.expr(e.expr)
            return lambda f: flat(f) if valid(f).valid else []
        return flat


def flatten_fn(t, g, pos):
    if isinstance(t, Varbit):
        return lambda f: [tuple(reversed(g(f)))]  # (width, value) -> (value, width)
    if isinstance(t, Bits):
        w = t.width
        return lambda f: [(g(f), w)]
    if isinstance(t, BoolT):
        return lambda f: [(int(g(f)), 1)]
    if isinstance(t, EnumT) and t.underlying is not None:
        w = t.underlying.width
        return lambda f: [(g(f), w)]
    if isinstance(t, (EnumT, ErrorT)):  # p4c-bm2-ss gives other enums and errors 32 bits
        return lambda f: [(g(f), 32)]
    if isinstance(t, HeaderT):
        subs = []
        for i, (_, ft) in enumerate(t.fields):
            subs.append(flatten_fn(ft, _field_getter(i), pos))

        header = t.kind == "header"

        def flat(f):
            v = g(f)
            if header and not v.valid:
                return []  # BMv2 leaves invalid headers out of hash/checksum data
            out = []
            for s in subs:
                out += s(v)
            return out

        return flat
    if isinstance(t, TupleT):
        subs = [flatten_fn(it, operator.itemgetter(i), pos) for i, it in enumerate(t.items)]

        def flat_t(f):
            v = g(f)
            out = []
            for s in subs:
                out += s(v)
            return out

        return flat_t
    raise P4Error.at(pos, f"a value of type {t} cannot be used as hash or checksum data")


def as_int(g):
    """A getter converting bool to int (table keys and select values are integers)."""
    return lambda f: int(g(f))


def key_value(g, t):
    """Table keys are matched as unsigned bit strings (P4Runtime): bool -> int, int<W> -> its
    two's complement bits."""
    if isinstance(t, BoolT):
        return as_int(g)
    if isinstance(t, Bits) and t.signed:
        m = (1 << t.width) - 1
        return lambda f: g(f) & m
    return g


def _lvalue_path(e) -> tuple | None:
    """hdr.a.b[2] as ("hdr", "a", "b", 2); None when not a plain l-value path."""
    if isinstance(e, ir.Name):
        return (e.name,)
    if isinstance(e, ir.Member):
        base = _lvalue_path(e.expr)
        return base + (e.name,) if base is not None else None
    if isinstance(e, ir.Index) and isinstance(e.index, ir.IntLit):
        base = _lvalue_path(e.expr)
        return base + (int(e.index.value),) if base is not None else None
    return None


def arguments_overlap(args) -> bool:
    """Whether two out/inout arguments of a call may name the same storage (one path a
    prefix of another, or one not a plain path). p4c inlines a control call by reference
    unless they do (an `in` argument reading them does not count); then it copies its
    arguments in and out (block_apply)."""
    paths = [_lvalue_path(a) for a in args]
    if any(p is None for p in paths):
        return len(paths) > 1
    return any(
        a[: len(b)] == b or b[: len(a)] == a for i, a in enumerate(paths) for b in paths[i + 1 :]
    )


def key_header(e: ir.Expr) -> ir.Expr | None:
    """The header whose field the key `e` is (also through struct fields of the header,
    which p4c flattens into it), else None. BMv2 matches such a key as 0 while the header
    is invalid, whatever the field holds (bm_sim's MatchKeyBuilder): a program may have
    written it, or an assignment kept it. A slice, a field of a stack element (`st[1].f`:
    p4c's IsLikeLeftValue takes the constant index for a complex expression) or any other
    expression p4c copies into a temporary first, which reads the field as it is."""
    base = e.expr if isinstance(e, ir.Member) else None
    while (
        isinstance(base, ir.Member)
        and isinstance(base.type, HeaderT)
        and base.type.kind == "struct"
    ):
        base = base.expr
    if (
        isinstance(base, (ir.Member, ir.Name))  # not a stack element
        and isinstance(base.type, HeaderT)
        and base.type.kind == "header"
    ):
        return base
    return None


def makes_header_valid(lhs: ir.Expr, rhs: ir.Expr) -> bool:
    """`h = {...}` (a list or struct initializer assigned to a header): valid afterwards, as
    setValid() makes it."""
    return (
        isinstance(rhs, (ir.ListExpr, ir.StructInit))
        and isinstance(lhs.type, HeaderT)
        and lhs.type.kind == "header"
    )


def zero_unless_valid(g, header_g):
    """A key getter reading 0 while the key's header is invalid (key_header)."""
    return lambda f: g(f) if header_g(f).valid else 0


def _field_getter(i: int):
    return lambda v: v.v[i]


def _args(args: dict) -> str:
    if not args:
        return ""
    return "(" + ", ".join(f"{k}={v:#x}" for k, v in args.items()) + ")"

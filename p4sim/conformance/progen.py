"""A seeded generator of well-typed v1model programs for the program differential
(`p4sim.conformance.progdiff`).

`generate(seed)` gives one program's text: random headers (bit<W> and int<W> fields of odd
widths, a header stack, a varbit header, a header union) and a parser over them whose
`select`s use values, masks, ranges, tuples, `default` and `lookahead`, with `advance` and
`verify`; an ingress control of random statements and expressions over the corners a
generator finds (arithmetic at odd widths, saturation, shifts at or past the width and by
run-time amounts, slices, concatenation, casts, folded `int` constants, signed comparisons,
division by constants, conditional expressions, validity, stacks, actions with in/out/inout
arguments passed twice, `exit` and `return`, tables with const entries and `switch` on
`action_run`, registers, `hash` with every algorithm BMv2 computes, a nested control); a
checksum verified and updated; and a deparser emitting every header. Every computed value
is written into a field of the `res` header, which ingress makes valid and the deparser
emits first, so it shows in the output frame. The same seed always gives the same text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

# the corners: odd widths and the ones around 64 bits
WIDTHS = (1, 2, 7, 8, 9, 16, 32, 33, 63, 64, 65, 128)
# HashAlgorithm values simple_switch computes (random is left out: not reproducible)
HASHES = ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16")
STACK_SIZE = 3


@dataclass(frozen=True)
class T:
    """A P4 type: bit<w>, int<w> or bool (w 0)."""

    kind: str  # "bit" | "int" | "bool"
    w: int = 0

    def __str__(self) -> str:
        return "bool" if self.kind == "bool" else f"{self.kind}<{self.w}>"

    @property
    def signed(self) -> bool:
        return self.kind == "int"


BOOL = T("bool")


@dataclass
class Var:
    text: str  # how it is written in P4
    type: T
    writable: bool = True


@dataclass
class Header:
    name: str  # the header type is NAME_t, the instance hdr.NAME
    fields: list[tuple[str, T]]

    @property
    def bits(self) -> int:
        return sum(t.w for _, t in self.fields)


def _fields(rng: random.Random, prefix: str, count: int, ints: bool = True) -> list:
    fields = []
    for i in range(count):
        w = rng.choice(WIDTHS)
        kind = "int" if ints and w >= 2 and rng.random() < 0.35 else "bit"
        fields.append((f"{prefix}{i}", T(kind, w)))
    pad = -sum(t.w for _, t in fields) % 8
    if pad:
        fields.append(("pad", T("bit", pad)))
    return fields


@dataclass
class Scope:
    """What an expression may read and a statement may write at one place of the program."""

    vars: list[Var] = field(default_factory=list)

    def of(self, t: T, writable: bool = False) -> list[Var]:
        return [v for v in self.vars if v.type == t and (v.writable or not writable)]

    def plain(self, writable: bool = False) -> list[Var]:
        return [v for v in self.vars if v.type.kind != "bool" and (v.writable or not writable)]


class ProgramGen:
    """One program from one `random.Random`; `text()` assembles it."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.depth = 0
        self.headers = [Header(f"h{i}", _fields(rng, "f", rng.randint(2, 4))) for i in range(3)]
        self.res = Header("res", _fields(rng, "r", rng.randint(5, 9)))
        self.stack = Header("st", _fields(rng, "s", 2, ints=False))
        self.varlen = Header("vl", [("len", T("bit", 8))])
        self.u_a = Header("ua", _fields(rng, "a", 2))
        self.u_b = Header("ub", _fields(rng, "b", 1))
        self.meta = _fields(rng, "m", 3)
        self.action_sigs: dict[str, list[tuple[str, str, T]]] = {}
        self.table_actions: dict[str, list[str]] = {}
        self.registers: list[tuple[str, T]] = []
        self._table_only: set[str] = set()
        self.nested_params: tuple[T, T] = (BOOL, BOOL)

    # -- expressions ----------------------------------------------------------------------

    def literal(self, t: T) -> str:
        r = self.rng
        if t.kind == "bool":
            return r.choice(("true", "false"))
        top = (1 << t.w) - 1
        v = r.choice((0, 1, top, top - 1 if top else 0, 1 << (t.w - 1), r.getrandbits(t.w)))
        if t.kind == "bit":
            return f"{t.w}w{v}" if r.random() < 0.7 else f"{t.w}w0x{v:x}"
        v -= (v >> (t.w - 1)) << t.w  # as a signed value
        if v < 0 and r.random() < 0.5:
            return f"-{t.w}s{-v}" if -v < (1 << (t.w - 1)) else f"(int<{t.w}>){t.w}w{v & top}"
        return f"{t.w}s{v}" if v >= 0 else f"(int<{t.w}>){t.w}w{v & top}"

    def int_const(self) -> str:
        """An arbitrary-precision `int` expression p4c folds (maybe negative)."""
        r = self.rng
        a, b = r.randint(-300, 300), r.randint(1, 70)
        return r.choice(
            (
                f"({a} + {b})",
                f"({a} * {b})",
                f"({a} - {b} * 3)",
                f"({abs(a)} / {b})",
                f"({abs(a)} % {b})",
                f"(1 << {b})",
                f"({abs(a)} >> {b % 9})",
                f"({a} & {b})",
                str(a),
            )
        )

    def expr(self, t: T, scope: Scope) -> str:
        self.depth += 1
        try:
            if t.kind == "bool":
                return self._bool(scope)
            return self._value(t, scope)
        finally:
            self.depth -= 1

    def _leaf(self, t: T, scope: Scope) -> str:
        r = self.rng
        have = scope.of(t)
        if have and r.random() < 0.7:
            return r.choice(have).text
        if r.random() < 0.3:
            return self.literal(t)
        # a cast of something of another type
        source = r.choice(scope.plain()) if scope.plain() else None
        if source is None:
            return self.literal(t)
        s = source.type
        if t.kind == "bit":
            inner = source.text if s.kind == "bit" else f"(bit<{s.w}>){source.text}"
            return f"(bit<{t.w}>){inner}" if s.w != t.w or s.kind != "bit" else inner
        # int<w>: from bit<w> of the same width, or int<s> resized
        if s.kind == "int":
            return f"(int<{t.w}>){source.text}" if s.w != t.w else source.text
        inner = f"(bit<{t.w}>){source.text}" if s.w != t.w else source.text
        return f"(int<{t.w}>){inner}"

    def _value(self, t: T, scope: Scope) -> str:
        r = self.rng
        if self.depth > 3 or r.random() < 0.25:
            return self._leaf(t, scope)
        w = t.w
        choice = r.randrange(13)

        def sub() -> str:
            return self.expr(t, scope)

        if choice == 0:
            op = r.choice(("+", "-", "*", "&", "|", "^"))
            return f"({sub()} {op} {sub()})"
        if choice == 1:
            return f"({sub()} {r.choice(('|+|', '|-|'))} {sub()})"
        if choice == 2:
            amount = r.choice((0, 1, w - 1, w, w + 1, r.randint(0, w + 3)))
            return f"({sub()} {r.choice(('<<', '>>'))} {max(amount, 0)})"
        if choice == 3:  # a run-time shift amount
            amount = self.expr(T("bit", r.choice((3, 8))), scope)
            return f"({sub()} {r.choice(('<<', '>>'))} {amount})"
        if choice == 4:
            return f"({r.choice(('-', '~'))}{sub()})"
        if choice == 5:  # slice of something as wide or wider
            wider = T(r.choice(("bit", "int")), r.choice([x for x in WIDTHS if x >= w] or [w]))
            if wider.kind == "int" and wider.w < 2:
                wider = T("bit", wider.w)
            lo = r.randint(0, wider.w - w)
            text = f"({self.expr(wider, scope)})[{lo + w - 1}:{lo}]"
            return text if t.kind == "bit" else f"(int<{w}>)({text})"
        if choice == 6 and w >= 2:  # concatenation (of bit<>: p4c refuses int<> ++ bit<>)
            left = r.randint(1, w - 1)
            text = f"({self.expr(T('bit', left), scope)} ++ {self.expr(T('bit', w - left), scope)})"
            return text if t.kind == "bit" else f"((int<{w}>){text})"
        if choice == 7:
            return f"({self.expr(BOOL, scope)} ? {sub()} : {sub()})"
        if choice == 8 and t.kind == "bit":
            # p4c computes / and % of run-time values only by powers of two (shift, mask)
            return f"({sub()} {r.choice(('/', '%'))} {1 << r.randrange(w)})"
        if choice == 9:  # an int constant folded into the expression
            op = r.choice(("+", "-", "*", "&", "|", "^", "|+|", "|-|"))
            return f"({sub()} {op} {abs(eval_int(self.int_const())) % (1 << w)})"
        if choice == 10:
            return f"(({t}){self.int_const()})"
        if choice == 11 and t.kind == "bit" and w == 1:
            return f"((bit<1>){self.expr(BOOL, scope)})"
        return self._leaf(t, scope)

    def _bool(self, scope: Scope) -> str:
        r = self.rng
        if self.depth > 3:
            return self.literal(BOOL)
        choice = r.randrange(7)
        if choice <= 2:
            t = self.some_type()
            ops = ("==", "!=", "<", ">", "<=", ">=") if t.kind != "bool" else ("==", "!=")
            return f"({self.expr(t, scope)} {r.choice(ops)} {self.expr(t, scope)})"
        if choice == 3:
            op = r.choice(("&&", "||"))
            return f"({self.expr(BOOL, scope)} {op} {self.expr(BOOL, scope)})"
        if choice == 4:
            return f"(!{self.expr(BOOL, scope)})"
        if choice == 5:
            return f"hdr.{r.choice(self.headers + [self.u_a, self.u_b]).name}.isValid()".replace(
                "hdr.ua", "hdr.un.ua"
            ).replace("hdr.ub", "hdr.un.ub")
        return f"((bool){self.expr(T('bit', 1), scope)})"

    def some_type(self) -> T:
        w = self.rng.choice(WIDTHS)
        if w >= 2 and self.rng.random() < 0.4:
            return T("int", w)
        return T("bit", w)

    # -- statements -----------------------------------------------------------------------

    def assignment(self, scope: Scope) -> str:
        r = self.rng
        target = r.choice(scope.plain(writable=True))
        t = target.type
        if t.kind == "bit" and t.w >= 4 and r.random() < 0.2:  # a slice as an l-value
            lo = r.randint(0, t.w - 2)
            hi = r.randint(lo, t.w - 1)
            return f"{target.text}[{hi}:{lo}] = {self.expr(T('bit', hi - lo + 1), scope)};"
        if r.random() < 0.15:
            op = r.choice(("+", "-", "&", "|", "^", "<<", ">>"))
            rhs = self.expr(t, scope) if op not in ("<<", ">>") else str(r.randint(0, t.w + 1))
            return f"{target.text} = {target.text} {op} {rhs};"
        return f"{target.text} = {self.expr(t, scope)};"

    def block(self, scope: Scope, n: int, indent: str, kinds) -> list[str]:
        lines = []
        for _ in range(n):
            lines += self.statement(scope, indent, kinds)
        return lines

    def statement(self, scope: Scope, indent: str, kinds) -> list[str]:
        r = self.rng
        kind = r.choices(list(kinds), weights=list(kinds.values()))[0]
        if kind == "if" and self.depth < 2:
            self.depth += 1
            cond = self.expr(BOOL, scope)
            body = self.block(scope, r.randint(1, 3), indent + "    ", kinds)
            lines = [f"{indent}if ({cond}) {{", *body]
            if r.random() < 0.5:
                lines += [
                    f"{indent}}} else {{",
                    *self.block(scope, r.randint(1, 2), indent + "    ", kinds),
                ]
            self.depth -= 1
            return lines + [f"{indent}}}"]
        return [indent + getattr(self, "st_" + kind, self.st_assign)(scope)]

    def st_assign(self, scope: Scope) -> str:
        return self.assignment(scope)

    def st_valid(self, scope: Scope) -> str:
        h = self.rng.choice(self.headers)
        return f"hdr.{h.name}.{self.rng.choice(('setValid', 'setInvalid'))}();"

    def st_stack(self, scope: Scope) -> str:
        r = self.rng
        i = r.randrange(STACK_SIZE)
        return r.choice(
            (
                f"hdr.st.push_front({r.randint(1, 2)});",
                f"hdr.st.pop_front({r.randint(1, 2)});",
                f"hdr.st[{i}].setValid();",
                f"hdr.st[{i}].setInvalid();",
                f"hdr.st[{i}].s0 = {self.expr(self.stack.fields[0][1], scope)};",
            )
        )

    def st_union(self, scope: Scope) -> str:
        member = self.rng.choice((self.u_a, self.u_b))
        name, t = member.fields[0]
        if self.rng.random() < 0.5:
            return f"hdr.un.{member.name}.setValid();"
        return f"hdr.un.{member.name}.{name} = {self.expr(t, scope)};"

    def st_call(self, scope: Scope) -> str:
        direct = [a for a in self.action_sigs if a not in self._table_only]
        if not direct:
            return self.assignment(scope)
        name = self.rng.choice(direct)
        args = []
        chosen = []
        for direction, pname, t in self.action_sigs[name]:
            if direction in ("out", "inout"):
                targets = scope.of(t, writable=True)
                # the same field passed twice: copy-out order decides
                if chosen and self.rng.random() < 0.4 and any(c.type == t for c in chosen):
                    targets = [c for c in chosen if c.type == t]
                if not targets:
                    return self.assignment(scope)
                v = self.rng.choice(targets)
                chosen.append(v)
                args.append(v.text)
            else:
                args.append(self.expr(t, scope))
        return f"{name}({', '.join(args)});"

    def st_register(self, scope: Scope) -> str:
        name, t = self.rng.choice(self.registers)
        index = self.rng.choice(("0", "1", "3", f"(bit<32>)({self.expr(T('bit', 2), scope)})"))
        if self.rng.random() < 0.5:
            targets = scope.of(t, writable=True)
            if targets:
                return f"{name}.read({self.rng.choice(targets).text}, {index});"
        return f"{name}.write({index}, {self.expr(t, scope)});"

    def st_hash(self, scope: Scope) -> str:
        r = self.rng
        targets = [v for v in scope.plain(writable=True) if v.type.kind == "bit"]
        if not targets:
            return self.assignment(scope)
        out = r.choice(targets)
        data = ", ".join(r.choice(scope.plain()).text for _ in range(r.randint(1, 3)))
        base = f"({out.type}){r.choice((0, 1, 5))}"
        top = r.choice(("0", "1", "7", "256", "65536", str(1 << min(out.type.w, 63))))
        top_t = r.choice(("bit<16>", "bit<32>", "bit<64>"))
        algorithm = r.choice(HASHES)
        return f"hash({out.text}, HashAlgorithm.{algorithm}, {base}, {{ {data} }}, ({top_t}){top});"

    def st_drop(self, scope: Scope) -> str:
        return "mark_to_drop(sm);"

    def st_exit(self, scope: Scope) -> str:
        return "exit;"

    def st_log(self, scope: Scope) -> str:
        v = self.rng.choice(scope.plain())
        return f'log_msg("value {{}}", {{ {v.text} }});'

    # -- declarations ---------------------------------------------------------------------

    def header_decls(self) -> list[str]:
        out = []
        for h in [*self.headers, self.res, self.stack, self.varlen, self.u_a, self.u_b]:
            fields = " ".join(f"{t} {name};" for name, t in h.fields)
            out.append(f"header {h.name}_t {{ {fields} }}")
        out.append("header vb_t { varbit<64> data; }")
        out.append("header_union un_t { ua_t ua; ub_t ub; }")
        out.append(
            "struct headers_t { res_t res; h0_t h0; h1_t h1; h2_t h2; "
            f"st_t[{STACK_SIZE}] st; vl_t vl; vb_t vb; un_t un; }}"
        )
        fields = " ".join(f"{t} {n};" for n, t in self.meta)
        # `recirculated` (no expression reads or writes it) bounds recirculation to one pass
        out.append(f"struct meta_t {{ {fields} @field_list(1) bit<8> recirculated; }}")
        out.append("error { BadValue }")
        return out

    def control_scope(self) -> Scope:
        scope = Scope()
        for h in [self.res, *self.headers]:
            scope.vars += [Var(f"hdr.{h.name}.{n}", t) for n, t in h.fields if n != "pad"]
        for i in range(STACK_SIZE):
            scope.vars += [Var(f"hdr.st[{i}].{n}", t) for n, t in self.stack.fields if n != "pad"]
        for h in (self.u_a, self.u_b):
            scope.vars += [Var(f"hdr.un.{h.name}.{n}", t) for n, t in h.fields if n != "pad"]
        scope.vars += [Var(f"meta.{n}", t) for n, t in self.meta if n != "pad"]
        scope.vars += [
            Var("sm.ingress_port", T("bit", 9), writable=False),
            Var("sm.checksum_error", T("bit", 1), writable=False),
            Var("sm.packet_length", T("bit", 32), writable=False),
            Var("sm.instance_type", T("bit", 32), writable=False),
            Var("hdr.vl.len", T("bit", 8)),
        ]
        return scope

    # -- parser -----------------------------------------------------------------------------

    def select_key(self, h: Header) -> tuple[str, list[T]]:
        r = self.rng
        usable = [(n, t) for n, t in h.fields if t.kind == "bit" and t.w >= 2]
        if not usable or r.random() < 0.2:
            w = r.choice((8, 16))
            return f"pkt.lookahead<bit<{w}>>()", [T("bit", w)]
        a = r.choice(usable)
        if len(usable) > 1 and r.random() < 0.3:
            b = r.choice([u for u in usable if u != a])
            return f"hdr.{h.name}.{a[0]}, hdr.{h.name}.{b[0]}", [a[1], b[1]]
        return f"hdr.{h.name}.{a[0]}", [a[1]]

    def label(self, types: list[T]) -> str:
        """A select label. Never one that matches every key: p4c-bm2-ss writes such a label
        (a mask of 0, a range over the whole width, `_` everywhere) as a second `default`
        transition, and BMv2 keeps only the last default (docs/conformance.md)."""
        r = self.rng
        parts = []
        for t in types:
            v = r.getrandbits(t.w)
            kind = r.randrange(4 if len(types) == 1 else 5)
            if kind == 1:
                parts.append(f"{v:#x} &&& {r.getrandbits(t.w) or 1:#x}")
            elif kind == 2:
                hi = min(v + r.randint(0, 40), (1 << t.w) - 1)
                if v == 0 and hi == (1 << t.w) - 1:
                    hi -= 1
                parts.append(f"{v} .. {hi}")
            elif kind == 4:
                parts.append("_")
            else:
                parts.append(str(v))
        if all(p == "_" for p in parts):
            parts[0] = str(r.getrandbits(types[0].w))
        return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"

    def select(self, h: Header, targets: list[str]) -> list[str]:
        key, types = self.select_key(h)
        lines = [f"        transition select({key}) {{"]
        for target in targets:
            lines.append(f"            {self.label(types)}: {target};")
        lines.append(f"            default: {self.rng.choice(('accept', 'accept', 'reject'))};")
        return lines + ["        }"]

    def parser(self) -> list[str]:
        r = self.rng
        h0, h1, _ = self.headers
        s0 = self.stack.fields[0]
        out = [
            "parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta,",
            "           inout standard_metadata_t sm) {",
            "    state start {",
            "        pkt.extract(hdr.h0);",
        ]
        out += self.select(h0, r.sample(["s_h1", "s_st", "s_vl", "s_un"], 4))
        out += ["    }", "    state s_h1 {"]
        if r.random() < 0.3:
            out.append(f"        pkt.advance({r.choice((8, 16, 32))});")
        out.append("        pkt.extract(hdr.h1);")
        if r.random() < 0.5:
            name, t = r.choice([f for f in h1.fields if f[0] != "pad"])
            out.append(f"        verify(hdr.h1.{name} != {self.literal(t)}, error.BadValue);")
        out += self.select(h1, ["s_h2"])
        out += [
            "    }",
            "    state s_h2 {",
            "        pkt.extract(hdr.h2);",
            "        transition accept;",
            "    }",
        ]
        out += [
            "    state s_st {",
            "        pkt.extract(hdr.st.next);",
            f"        transition select(hdr.st.last.{s0[0]}) {{",
            f"            {self.label([s0[1]])}: s_st;",
            f"            {self.label([s0[1]])}: s_h2;",
            "            default: accept;",
            "        }",
            "    }",
        ]
        out += [
            "    state s_vl {",
            "        pkt.extract(hdr.vl);",
            "        pkt.extract(hdr.vb, ((bit<32>)hdr.vl.len & 32w15) << 3);",
            "        transition accept;",
            "    }",
        ]
        out += [
            "    state s_un {",
            "        transition select(pkt.lookahead<bit<8>>()) {",
            f"            {self.label([T('bit', 8)])}: s_ua;",
            "            default: s_ub;",
            "        }",
            "    }",
            "    state s_ua { pkt.extract(hdr.un.ua); transition accept; }",
            "    state s_ub { pkt.extract(hdr.un.ub); transition accept; }",
            "}",
        ]
        return out

    # -- ingress: actions, tables, a nested control -----------------------------------------

    def action(self, name: str, scope: Scope, direct: bool) -> list[str]:
        r = self.rng
        params: list[tuple[str, str, T]] = []
        for i in range(r.randint(0 if not direct else 1, 3)):
            direction = r.choice(("in", "out", "inout")) if direct else ""
            params.append((direction, f"p{i}", self.some_type()))
        self.action_sigs[name] = params
        inner = Scope(list(scope.vars))
        body = []
        for direction, pname, t in params:
            inner.vars.append(Var(pname, t, writable=direction in ("out", "inout")))
            if direction == "out":  # not read before it is written
                body.append(f"        {pname} = {self.expr(t, scope)};")
        kinds = {"assign": 6, "if": 2, "valid": 1, "stack": 1}
        body += self.block(inner, r.randint(1, 4), "        ", kinds)
        if r.random() < 0.3:
            cond = self.expr(BOOL, inner)
            body.append(f"        if ({cond}) {{ {r.choice(('return', 'exit'))}; }}")
            body += self.block(inner, 1, "        ", kinds)
        decl = ", ".join(f"{d} {t} {n}".strip() for d, n, t in params)
        return [f"    action {name}({decl}) {{", *body, "    }"]

    def const_entry(self, keys: list[tuple[str, str, T]], action: str) -> tuple[str, str]:
        r = self.rng
        parts = []
        for _, kind, t in keys:
            v = r.getrandbits(t.w)
            if kind == "exact":
                parts.append(str(v))
            elif kind == "ternary":
                parts.append(r.choice(("_", f"{v:#x} &&& {r.getrandbits(t.w):#x}")))
            elif kind == "lpm":
                n = r.randint(0, t.w)
                mask = ((1 << n) - 1) << (t.w - n)
                parts.append(f"{v & mask:#x} &&& {mask:#x}" if n else "_")
            else:
                parts.append(f"{v} .. {min(v + r.randint(0, 100), (1 << t.w) - 1)}")
        key = parts[0] if len(parts) == 1 else f"({', '.join(parts)})"
        return key, f"{action}({self.const_args(action)})"

    def const_args(self, action: str) -> str:
        # p4c-bm2-ss: "Negative values not supported yet" in action data
        return ", ".join(
            self.literal(t) if t.kind == "bit" else f"{t.w}s{self.rng.getrandbits(t.w - 1)}"
            for _, _, t in self.action_sigs[action]
        )

    def table(self, name: str, actions: list[str], scope: Scope) -> list[str]:
        r = self.rng
        fields = [v for v in scope.vars if v.type.kind == "bit" and v.text.startswith("hdr.")]
        keys = []
        kinds = ["exact", "ternary", "range", "lpm"]
        for v in r.sample(fields, min(len(fields), r.randint(1, 2))):
            # lpm only on whole bytes up to 64 bits: p4c-bm2-ss refuses wider masks, and BMv2
            # takes a prefix from the top of the key's bytes, not of its bits (PI issue 625)
            lpm_ok = v.type.w <= 64 and v.type.w % 8 == 0
            kind = r.choice(kinds if lpm_ok else [k for k in kinds if k != "lpm"])
            if kind == "lpm":
                kinds.remove("lpm")  # one lpm key a table
            keys.append((v.text, kind, v.type))
        self.table_actions[name] = actions
        out = [f"    table {name} {{", "        key = {"]
        out += [f"            {text}: {kind};" for text, kind, _ in keys]
        out += ["        }", f"        actions = {{ {' '.join(a + ';' for a in actions)} }}"]
        if r.random() < 0.8:
            out.append("        const entries = {")
            entries = {}  # by key: p4c takes a key twice, BMv2 does not
            for _ in range(r.randint(1, 4)):
                key, action = self.const_entry(keys, r.choice(actions))
                entries.setdefault(key, f"            {key}: {action};")
            out += entries.values()
            out.append("        }")
        default = r.choice(actions)
        const = "const " if r.random() < 0.3 else ""
        out.append(f"        {const}default_action = {default}({self.const_args(default)});")
        return out + ["    }"]

    def nested(self) -> tuple[list[str], list[tuple[str, T]]]:
        """control sub(inout headers_t hdr, inout X x, in Y y): its statements and params."""
        x, y = self.some_type(), self.some_type()
        scope = Scope([v for v in self.control_scope().vars if v.text.startswith("hdr.")])
        scope.vars += [Var("x", x), Var("y", y, writable=False)]
        body = self.block(scope, self.rng.randint(2, 4), "        ", {"assign": 5, "if": 2})
        if self.rng.random() < 0.3:
            body.append(f"        if ({self.expr(BOOL, scope)}) {{ return; }}")
            body += self.block(scope, 1, "        ", {"assign": 1})
        lines = [
            f"control sub(inout headers_t hdr, inout {x} x, in {y} y) {{",
            "    apply {",
            *body,
            "    }",
            "}",
        ]
        return lines, [("x", x), ("y", y)]

    def ingress(self) -> list[str]:
        r = self.rng
        scope = self.control_scope()
        out = [
            "control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {"
        ]
        for i in range(r.randint(1, 2)):
            t = T("bit", r.choice((1, 8, 9, 32, 33, 64, 65)))
            self.registers.append((f"rg{i}", t))
            out.append(f"    register<{t}>(4) rg{i};")
        out.append("    sub() nested;")
        direct = [f"act{i}" for i in range(r.randint(1, 3))]
        for name in direct:
            out += self.action(name, scope, direct=True)
        table_only = [f"tact{i}" for i in range(r.randint(2, 3))]
        self._table_only = set(table_only)
        for name in table_only:
            out += self.action(name, scope, direct=False)
        tables = [f"tbl{i}" for i in range(r.randint(1, 2))]
        for name in tables:
            out += self.table(name, r.sample(table_only, r.randint(1, len(table_only))), scope)
        out.append("    apply {")
        out.append("        hdr.res.setValid();")
        out.append("        sm.egress_spec = 1;")
        for i in range(r.randint(1, 3)):
            t = self.some_type()
            out.append(f"        {t} l{i} = {self.expr(t, scope)};")
            scope.vars.append(Var(f"l{i}", t))
        kinds = {
            "assign": 10,
            "if": 3,
            "call": 3,
            "valid": 1,
            "stack": 1,
            "union": 1,
            "register": 2,
            "hash": 2,
            "log": 1,
        }
        statements = self.block(scope, r.randint(4, 10), "        ", kinds)
        for name in tables:
            statements.insert(r.randint(0, len(statements)), self.apply_table(name, scope))
        x, y = self.nested_params
        xs, ys = scope.of(x, writable=True), y
        if xs:
            call = f"        nested.apply(hdr, {r.choice(xs).text}, {self.expr(ys, scope)});"
            statements.insert(r.randint(0, len(statements)), call)
        out += statements
        if r.random() < 0.3:
            out.append(f"        sm.egress_spec = (bit<9>)({self.expr(T('bit', 2), scope)});")
        if r.random() < 0.15:
            out.append(f"        if ({self.expr(BOOL, scope)}) {{ mark_to_drop(sm); }}")
        if r.random() < 0.2:
            out.append(f"        if ({self.expr(BOOL, scope)}) {{ exit; }}")
            out += self.block(scope, 1, "        ", {"assign": 1})
        if r.random() < 0.15:  # once: a resubmitted packet has instance_type 6
            cond = self.expr(BOOL, scope)
            out.append(
                f"        if (sm.instance_type == 0 && {cond}) {{ "
                "resubmit_preserving_field_list(0); }"
            )
        out.append(
            f"        hdr.res.{self.res.fields[0][0]} = "
            f"({self.res.fields[0][1]})(sm.parser_error == error.NoError ? 1w1 : 1w0);"
            if self.res.fields[0][1].kind == "bit"
            else ""
        )
        return out + ["    }", "}"]

    def apply_table(self, name: str, scope: Scope) -> str:
        r = self.rng
        form = r.randrange(3)

        def body() -> str:
            return " ".join(s.strip() for s in self.block(scope, 1, "", {"assign": 1}))

        if form == 0:
            return f"        {name}.apply();"
        if form == 1:
            return f"        if ({name}.apply().{r.choice(('hit', 'miss'))}) {{ {body()} }}"
        cases = " ".join(f"{a}: {{ {body()} }}" for a in self.table_actions[name][:2])
        return f"        switch ({name}.apply().action_run) {{ {cases} default: {{ {body()} }} }}"

    def egress(self) -> list[str]:
        scope = self.control_scope()
        scope.vars.append(Var("sm.egress_port", T("bit", 9), writable=False))
        body = self.block(scope, self.rng.randint(0, 3), "        ", {"assign": 3, "if": 1})
        if self.rng.random() < 0.15:  # once: instance_type is 0 in egress on every pass
            cond = self.expr(BOOL, scope)
            body.append(
                f"        if (meta.recirculated == 0 && {cond}) {{ meta.recirculated = 1; "
                "recirculate_preserving_field_list(1); }"
            )
        return [
            "control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {",
            "    apply {",
            *body,
            "    }",
            "}",
        ]

    def checksums(self) -> list[str]:
        h1, h2 = self.headers[1], self.headers[2]
        data1 = ", ".join(f"hdr.h1.{n}" for n, _ in h1.fields if n != "ck")
        data2 = ", ".join(f"hdr.h2.{n}" for n, _ in h2.fields if n != "ck")
        return [
            "control vck(inout headers_t hdr, inout meta_t meta) {",
            (
                f"    apply {{ verify_checksum(hdr.h1.isValid(), {{ {data1} }}, hdr.h1.ck, "
                "HashAlgorithm.csum16); }"
            ),
            "}",
            "control uck(inout headers_t hdr, inout meta_t meta) {",
            (
                f"    apply {{ update_checksum(hdr.h2.isValid(), {{ {data2} }}, hdr.h2.ck, "
                f"HashAlgorithm.{self.rng.choice(('csum16', 'csum16', 'crc16'))}); }}"
            ),
            "}",
        ]

    def text(self) -> str:
        for h in self.headers[1:]:  # a checksum field, whole bytes before it
            pad = -sum(t.w for n, t in h.fields if n != "pad") % 8
            h.fields = [f for f in h.fields if f[0] != "pad"]
            if pad:
                h.fields.append(("pad", T("bit", pad)))
            h.fields.append(("ck", T("bit", 16)))
        nested, params = self.nested()
        self.nested_params = (params[0][1], params[1][1])
        parts = [
            "#include <core.p4>",
            "#include <v1model.p4>",
            "",
            *self.header_decls(),
            "",
            *self.parser(),
            *self.checksums(),
            *nested,
            *self.ingress(),
            *self.egress(),
            "control dep(packet_out pkt, in headers_t hdr) {",
            "    apply {",
            *[
                f"        pkt.emit(hdr.{n});"
                for n in ("res", "h0", "h1", "h2", "st", "vl", "vb", "un")
            ],
            "    }",
            "}",
            "V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;",
        ]
        return "\n".join(line for line in parts if line != "") + "\n"


def generate(seed: int, index: int = 0) -> str:
    """Program number `index` of seed `seed`: the same text on every run."""
    return ProgramGen(random.Random(f"progen:{seed}:{index}")).text()


def eval_int(text: str) -> int:
    """The value of an int_const() text (integers, + - * / % << >> &, as P4 folds them:
    the operands of / and % are not negative there)."""
    import ast
    import operator

    ops = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.Div: operator.floordiv,
        ast.Mod: operator.mod,
        ast.LShift: operator.lshift,
        ast.RShift: operator.rshift,
        ast.BitAnd: operator.and_,
    }

    def ev(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp):
            return -ev(node.operand)
        return ops[type(node.op)](ev(node.left), ev(node.right))

    return ev(ast.parse(text, mode="eval").body)

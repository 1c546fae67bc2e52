"""C for tables: the key laid out in 64-bit words (shared with the loader), the lookup, the
actions run by index, direct counters and meters, action profiles and selectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4sim.engine.control import key_header
from p4sim.frontend import ir
from p4sim.frontend.types import (
    Bits,
    BoolT,
)
from p4sim.native.codegen_common import HASH_IDS, Unsupported, _w


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


class TableGen:
    """A part of CodeGen: tables."""

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
            header = key_header(k.expr)
            if header is not None:  # 0 while the header is invalid, as the interpreter
                v = f"({self.expr(header, pre)}.valid ? {v} : 0)"
            if nw == 2:
                keys.append(
                    f"key[{w0}] = (uint64_t)((u128)({v}) >> 64); key[{w0 + 1}] = (uint64_t)({v});"
                )
            else:
                keys.append(f"key[{w0}] = (uint64_t)({v});")
        cases = self.table_action_cases(layout)
        tdef_py = self.dev.tables[tdef.name].definition
        # a direct counter, or idle timeouts, which read the hits (p4runtime/idle_timeouts.py)
        counted = tdef_py.direct_counter is not None or tdef_py.support_timeout
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
        select, miss = self.table_selection(t)
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

    def table_action_cases(self, layout: TableLayout) -> list[str]:
        """The C `case`s running each action of the table by its index, its arguments
        taken from the entry (or the default) and its bound parameters copied in and out."""
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
        return cases

    def table_selection(self, t: ir.TableDecl) -> tuple[list[str], str]:
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
        return select, miss

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

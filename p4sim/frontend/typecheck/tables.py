"""Tables: keys, actions lists, default actions, direct resources, implementations and
constant entries with their priorities.
"""

from __future__ import annotations

from dataclasses import fields

from p4sim.engine.externs import HASH_ALGORITHMS
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Instance, Scope
from p4sim.frontend.types import (
    Bits,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    TableT,
    TypeVar,
)
from p4sim.limits import MAX_TABLE_SIZE


class TableRules:
    """The checker's rules for tables (a part of `Checker`, which holds the state)."""

    def table_decl(self, t: ir.TableDecl, scope: Scope) -> None:
        t.keys, t.action_refs, t.default, t.size, t.entries = [], [], None, 1024, None
        t.const_default = False
        t.direct_counter = t.direct_meter = t.direct_register = None
        t.implementation, t.selector_keys = None, []
        t.entries_const = True
        t.entry_priorities, t.largest_priority_wins = [], True
        props = {}
        for p in t.properties:
            if p.name in props:
                raise P4Error.at(p.pos, f"table property '{p.name}' given twice")
            props[p.name] = p
        if "actions" not in props:
            raise P4Error.at(t.pos, f"table {t.name} has no 'actions' property")
        self.table_keys(t, props, scope)
        self.table_actions(t, props, scope)
        if "size" in props:
            t.size = self.const_int(props["size"].value, scope)
            if not 0 <= t.size <= MAX_TABLE_SIZE:
                raise P4Error.at(
                    props["size"].value.pos,
                    f"table size {t.size} must be between 0 and {MAX_TABLE_SIZE:,} (p4sim's limit)",
                )
        self.table_direct_resources(t, props, scope)
        t.support_timeout = False  # v1model's support_timeout, TNA's idle_timeout (P4Info)
        for name in ("support_timeout", "idle_timeout"):
            if name in props:
                v = props[name].value
                self.expr(v, scope)
                if not isinstance(v.const, bool):
                    raise P4Error.at(v.pos, f"table property {name} must be true or false")
                t.support_timeout = v.const
        if "implementation" in props:
            t.implementation = self.table_implementation(t, props["implementation"], scope)
            if "entries" in props:
                raise P4Error.at(
                    props["entries"].pos,
                    f"table {t.name} has an implementation (action profile/selector): its "
                    f"entries come from the control plane, 'entries' cannot be given",
                )
        self.table_entries(t, props, scope)

    def table_keys(self, t: ir.TableDecl, props: dict, scope: Scope) -> None:
        """The match keys (and an action selector's `selector` keys)."""
        for k in props["key"].value if "key" in props else []:
            kt = self.expr(k.expr, scope)
            if not self.simple_key(k.expr) and ir.annotation(k.annotations, "name") is None:
                # p4c names a key after its expression only for these forms (P4Runtime)
                raise P4Error.at(
                    k.pos,
                    "a key expression other than a field, slice, index, mask or isValid() "
                    "needs a @name annotation (the control plane's name for it)",
                )
            if isinstance(kt, TypeVar):  # as p4c, also where the argument would be one
                raise P4Error.at(k.pos, f"a table key must have a scalar type, not {kt}")
            if not isinstance(kt, (Bits, BoolT, ErrorT, EnumT)):
                raise P4Error.at(k.pos, f"table key of type {kt} is not supported (use bit<W>)")
            if k.match_kind not in self.match_kinds.members:
                raise P4Error.at(
                    k.pos,
                    f"unknown match kind '{k.match_kind}' (expected one of {', '.join(sorted(self.match_kinds.members))})",
                )
            if k.match_kind == "selector":
                t.selector_keys.append(k)  # the selector's hash input, not a match field
                continue
            if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
                raise unsupported(k.pos, f"match kind '{k.match_kind}'")
            t.keys.append(k)
        if sum(1 for k in t.keys if k.match_kind == "lpm") > 1:
            raise P4Error.at(t.pos, f"table {t.name} has more than one lpm key")

    def table_actions(self, t: ir.TableDecl, props: dict, scope: Scope) -> None:
        """The actions list, and the default action taken from it."""
        for ref in props["actions"].value:
            self.action_ref(ref, scope, bind_all=False)
            if any(r.decl is ref.decl for r in t.action_refs):
                raise P4Error.at(
                    ref.pos, f"action {ref.decl.name} is listed twice in table {t.name}"
                )
            t.action_refs.append(ref)
        if "default_action" in props and t.properties.index(props["default_action"]) < (
            t.properties.index(props["actions"])
        ):
            raise P4Error.at(
                props["default_action"].pos,
                f"table {t.name}: default_action must come after the actions property "
                f"(spec 14.2.1.3)",
            )
        if "default_action" not in props:
            no_action = self.scope.lookup("NoAction")
            if not (isinstance(no_action, ir.ActionDecl) and not no_action.params):
                raise P4Error.at(
                    t.pos,
                    f"table {t.name} has no default_action, and its implicit default NoAction "
                    f"is not declared as an action without parameters (include core.p4)",
                )
        if "default_action" in props:
            p = props["default_action"]
            self.action_ref(p.value, scope, bind_all=True)
            self.listed_action(t, p.value, "default action")
            t.default = p.value
            t.const_default = p.is_const

    def table_direct_resources(self, t: ir.TableDecl, props: dict, scope: Scope) -> None:
        """`counters = c;` and `meters = m;`: direct counters and meters."""
        for pname in ("counters", "meters"):
            if pname in props:
                e = props[pname].value
                if not isinstance(e, ir.Name):
                    raise P4Error.at(
                        props[pname].pos,
                        f"'{pname}' must name a direct_counter/direct_meter instance",
                    )
                inst = scope.lookup(e.name)
                want = "direct_counter" if pname == "counters" else "direct_meter"
                wanted = (want, "DirectCounter") if pname == "counters" else (want,)  # + TNA's
                if not (
                    isinstance(inst, Instance)
                    and isinstance(inst.type, ExternT)
                    and inst.type.decl.name in wanted
                ):
                    raise P4Error.at(e.pos, f"'{e.name}' is not a {want} instance")
                if pname == "counters":
                    t.direct_counter = inst
                else:
                    t.direct_meter = inst
                inst.table = t
        if "registers" in props:  # TNA: `registers = r;` gives each entry a DirectRegister cell
            e = props["registers"].value
            inst = scope.lookup(e.name) if isinstance(e, ir.Name) else None
            if not (
                isinstance(inst, Instance)
                and isinstance(inst.type, ExternT)
                and inst.type.decl.name == "DirectRegister"
            ):
                raise P4Error.at(props["registers"].pos, "'registers' must name a DirectRegister")
            t.direct_register = inst
            inst.table = t

    def table_entries(self, t: ir.TableDecl, props: dict, scope: Scope) -> None:
        """`entries = {...}`: constant entries and their priorities."""
        if "entries" in props:
            p = props["entries"]
            t.entries = p.value
            t.entries_const = p.is_const
            self.entries_rules(t, p)
            for e in t.entries:
                if len(e.keyset) == 1 and isinstance(e.keyset[0], ir.Default) and len(t.keys) != 1:
                    e.keyset = [ir.Default(e.pos) for _ in t.keys]
                if len(e.keyset) != len(t.keys):
                    raise P4Error.at(
                        e.pos,
                        f"entry has {len(e.keyset)} key value(s), table {t.name} has {len(t.keys)} key(s)",
                    )
                for k, ks in zip(t.keys, e.keyset):
                    self.keyset_element(ks, k.expr.type, scope)
                self.action_ref(e.action, scope, bind_all=True)
                listed = self.listed_action(t, e.action, "action")
                if ir.annotation(listed.annotations, "defaultonly"):
                    raise P4Error.at(
                        e.action.pos,
                        f"action {e.action.decl.name} is @defaultonly in table {t.name}: "
                        f"it cannot be used in an entry",
                    )
                if e.priority is not None:
                    self.const_int(e.priority, scope)
            self.entry_priorities(t, props, scope)
            self.duplicate_exact_entries(t)

    def table_implementation(self, t: ir.TableDecl, p: ir.TableProperty, scope: Scope):
        """`implementation = name;` of an action_profile/action_selector instance, or an
        anonymous `action_profile(N)` / `action_selector(...)` (named by the property's
        @name, which p4c requires for P4Runtime)."""
        e = p.value
        kinds = ("action_profile", "action_selector")
        if isinstance(e, ir.Name):
            inst = scope.lookup(e.name)
            if not (
                isinstance(inst, Instance)
                and isinstance(inst.type, ExternT)
                and inst.type.decl.name in kinds
            ):
                raise P4Error.at(
                    e.pos, f"'{e.name}' is not an action_profile or action_selector instance"
                )
        elif isinstance(e, ir.Call) and isinstance(e.func, ir.Name) and e.func.name in kinds:
            a = ir.annotation(p.annotations, "name")
            if a is None or not a.args or not isinstance(a.args[0], str):
                raise P4Error.at(
                    p.pos,
                    f"table {t.name}: an anonymous {e.func.name} needs a @name annotation on the "
                    f"implementation property (its P4Runtime name; p4c requires it too)",
                )
            d = ir.Instantiation(
                e.pos, a.args[0], p.annotations, ir.NamedTypeRef(e.func.pos, e.func.name), e.args
            )
            inst = self.instantiation(d, scope)
            inst.anonymous = True
        else:
            raise P4Error.at(
                p.pos,
                "implementation must name an action_profile or action_selector instance, or "
                "construct one (action_profile(N), action_selector(algorithm, N, width))",
            )
        if inst.type.decl.name == "action_selector":
            algo = inst.ctor_args[0]
            name = self.scope.lookup("HashAlgorithm").type.members[algo]
            if name not in HASH_ALGORITHMS:
                raise P4Error.at(
                    (inst.node or p).pos,
                    f"HashAlgorithm.{name} in an action_selector is not supported by p4sim "
                    f"(supported: {', '.join(HASH_ALGORITHMS)})",
                )
            inst.algorithm = name
        return inst

    @classmethod
    def simple_key(cls, e: ir.Expr) -> bool:
        if isinstance(e, (ir.Name, ir.Member, ir.Index, ir.IntLit, ir.BoolLit)):
            return True
        if isinstance(e, ir.Slice):
            return cls.simple_key(e.expr)
        if isinstance(e, ir.Binary) and e.op == "&":
            return cls.simple_key(e.left) and isinstance(e.right, ir.IntLit)
        if isinstance(e, ir.Call):
            return isinstance(e.func, ir.Member) and e.func.name == "isValid"
        return False

    @staticmethod
    def entries_rules(t: ir.TableDecl, prop) -> None:
        """P4_16 spec, "Entries": a table with entries has a key; priorities only where a
        ternary, range or optional key makes them meaningful, and once one entry gives a
        priority the first must give one too (later ones then count on from it)."""
        if not t.keys and t.entries:
            raise P4Error.at(prop.pos, f"table {t.name} has no key: it cannot have entries")
        given = [e for e in t.entries if e.priority is not None]
        if given and not any(k.match_kind in ("ternary", "range", "optional") for k in t.keys):
            raise P4Error.at(
                given[0].pos,
                f"table {t.name} has no ternary, range or optional key: its entries "
                f"cannot have a priority",
            )
        if given and t.entries_const:
            raise P4Error.at(given[0].pos, "a table with const entries cannot give them priorities")
        if given and t.entries[0].priority is None:
            raise P4Error.at(
                t.entries[0].pos,
                "entry must have a priority (later entries of the table give one)",
            )

    @staticmethod
    def listed_action(t: ir.TableDecl, ref: ir.ActionRef, what: str) -> ir.ActionRef:
        """The element of t's actions list that `ref` (default action or entry) invokes. Spec
        14.2.1.3: the same action, with arguments of its directional parameters identical
        to those bound in the list."""
        listed = next((r for r in t.action_refs if r.decl is ref.decl), None)
        if listed is None:
            namesake = next((r for r in t.action_refs if r.decl.name == ref.decl.name), None)
            raise P4Error.at(
                ref.pos,
                f"{what} {ref.decl.name} is not in the actions of table {t.name}"
                + (" (the listed one is a different declaration)" if namesake else ""),
            )
        for param, arg, bound in zip(ref.decl.params, ref.args, listed.args):
            if not same_expr(arg.value, bound.value):
                raise P4Error.at(
                    arg.value.pos,
                    f"argument of {param.direction} parameter '{param.name}' of {what} "
                    f"{ref.decl.name} must be the one bound in table {t.name}'s actions list "
                    f"(line {bound.value.pos.line})",
                )
        return listed

    def entry_priorities(self, t: ir.TableDecl, props: dict, scope: Scope) -> None:
        """P4_16 spec, "Entry priorities": entries without a priority count on from the one
        before by `priority_delta` (down when `largest_priority_wins`, the default); a
        priority that comes out negative is an error. When no entry gives one, the compiler
        numbers them 1, 1 + delta, ... so that the first listed wins. The result is
        `t.entry_priorities` (one per entry) and `t.largest_priority_wins`."""
        largest_wins, delta = True, 1
        if "largest_priority_wins" in props:
            e = props["largest_priority_wins"].value
            if self.expr(e, scope) != BoolT() or e.const is None:
                raise P4Error.at(e.pos, "largest_priority_wins must be true or false")
            largest_wins = e.const
        if "priority_delta" in props:
            delta = self.const_int(props["priority_delta"].value, scope)
            if delta < 0:  # p4c takes 0 (entries without a priority repeat the one before)
                raise P4Error.at(
                    props["priority_delta"].value.pos, "priority_delta cannot be negative"
                )
        t.largest_priority_wins = largest_wins
        n = len(t.entries)
        if all(e.priority is None for e in t.entries):
            t.entry_priorities = [1 + (n - 1 - i if largest_wins else i) * delta for i in range(n)]
            return
        prio, t.entry_priorities = 0, []
        for e in t.entries:
            if e.priority is not None:
                prio = e.priority.const
            else:
                prio += -delta if largest_wins else delta
            if prio < 0:
                raise P4Error.at(
                    e.pos,
                    f"this entry's priority comes out as {prio} (counting on from the last "
                    f"given one by priority_delta {delta}); priorities cannot be negative",
                )
            t.entry_priorities.append(prio)

    @staticmethod
    def duplicate_exact_entries(t: ir.TableDecl) -> None:
        """P4_16 spec, "Entry priorities": in a table whose keys are all exact, no two entries
        have the same key."""
        if not all(k.match_kind == "exact" for k in t.keys):
            return
        seen: dict[tuple, ir.EntryDecl] = {}
        for e in t.entries:
            key = tuple(k.const for k in e.keyset)
            if None in key:
                continue
            if key in seen:
                raise P4Error.at(
                    e.pos,
                    f"table {t.name}: duplicate entry key (the same as line "
                    f"{seen[key].pos.line}); its keys are all exact",
                )
            seen[key] = e

    def action_ref(self, ref: ir.ActionRef, scope: Scope, bind_all: bool) -> None:
        decl = (
            self.scope.lookup(ref.name.name) if ref.name.absolute else scope.lookup(ref.name.name)
        )
        if not isinstance(decl, ir.ActionDecl):
            raise P4Error.at(ref.pos, f"'{ref.name.name}' is not an action")
        ref.decl = decl
        decl.used = True
        directional = [p for p in decl.params if p.direction]
        if bind_all:
            if len(ref.args) != len(decl.params):
                raise P4Error.at(
                    ref.pos,
                    f"action {decl.name} takes {len(decl.params)} argument(s), got {len(ref.args)}",
                )
        elif ref.args and len(ref.args) != len(directional):
            raise P4Error.at(
                ref.pos,
                f"action {decl.name} in an actions list binds its {len(directional)} directional parameter(s), got {len(ref.args)} argument(s)",
            )
        for p, a in zip(decl.params, ref.args):
            if a.value is None:
                raise P4Error.at(ref.pos, "'_' is not allowed as an action argument")
            self.expr(a.value, scope, p.type)
            self.coerce(a.value, p.type)
            applied = table_apply_in(a.value)
            if applied is not None:
                raise P4Error.at(
                    applied.pos,
                    "a table cannot be applied inside an action argument in an actions list",
                )
            if p.direction == "" and a.value.const is None:
                raise P4Error.at(
                    a.value.pos,
                    f"argument for directionless parameter '{p.name}' must be a compile-time constant",
                )
            if p.direction in ("out", "inout"):
                self.check_lvalue(a.value)


def table_apply_in(e) -> ir.Call | None:
    """The first `t.apply()` inside the checked expression `e`, or None."""
    if (
        isinstance(e, ir.Call)
        and isinstance(e.func, ir.Member)
        and e.func.name == "apply"
        and isinstance(e.func.expr.type, TableT)
    ):
        return e
    if isinstance(e, (ir.Expr, ir.Arg)):
        for f in fields(e):
            found = table_apply_in(getattr(e, f.name))
            if found is not None:
                return found
    if isinstance(e, (list, tuple)):
        for item in e:
            found = table_apply_in(item)
            if found is not None:
                return found
    return None


def same_expr(a, b) -> bool:
    """Whether two checked expressions are the same (spec: "syntactically identical"), up to
    positions and the spelling of constants: `1` bound to a bit<32> equals `32w1`."""
    if isinstance(a, ir.Expr) and isinstance(b, ir.Expr):
        if a.const is not None or b.const is not None:
            return a.const == b.const and a.type == b.type
        if type(a) is not type(b):
            return False
        if isinstance(a, ir.Name):
            return a.decl is b.decl
        if isinstance(a, ir.Cast):
            return a.type == b.type and same_expr(a.expr, b.expr)
        if isinstance(a, ir.StructInit):  # fields by name, in any order
            fa, fb = dict(a.fields), dict(b.fields)
            return fa.keys() == fb.keys() and all(same_expr(fa[n], fb[n]) for n in fa)
        return all(
            same_expr(getattr(a, f.name), getattr(b, f.name)) for f in fields(a) if f.name != "pos"
        )
    if isinstance(a, ir.Arg) and isinstance(b, ir.Arg):
        return a.name == b.name and same_expr(a.value, b.value)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    return a == b

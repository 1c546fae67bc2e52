"""The checker: its state, the program-wide rules, name declaration and type resolution; the
rule families it is made of live in the sibling modules.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.calls import CallRules
from p4sim.frontend.typecheck.declarations import DeclarationRules
from p4sim.frontend.typecheck.expressions import ExpressionRules
from p4sim.frontend.typecheck.instances import InstanceRules
from p4sim.frontend.typecheck.statements import StatementRules
from p4sim.frontend.typecheck.symbols import Frame, Instance, Overloads, Scope, TypeEntry, is_param
from p4sim.frontend.typecheck.tables import TableRules
from p4sim.frontend.typecheck.targets import TargetRules
from p4sim.frontend.typecheck.typerules import contains_extern
from p4sim.frontend.types import (
    Bits,
    BlockT,
    BoolT,
    DontCareT,
    ErrorT,
    ExternT,
    GenericHeaderT,
    HeaderT,
    InfInt,
    MatchKindT,
    StackT,
    StringT,
    TupleT,
    Type,
    Varbit,
    VoidT,
)
from p4sim.limits import MAX_STACK_SIZE, MAX_WIDTH


class Checker(
    DeclarationRules,
    InstanceRules,
    TableRules,
    StatementRules,
    ExpressionRules,
    CallRules,
    TargetRules,
):
    loop_depth = 0  # nesting of `for` loops around the statement being checked
    block: ir.ParserDecl | ir.ControlDecl | None = None  # the one whose locals are checked

    def __init__(self, program: ir.Program):
        self.program = program
        self.scope = Scope()
        self.error_type = ErrorT({})
        self.match_kinds = MatchKindT(set())
        self.frame: Frame | None = None
        self.return_type: Type | None = None
        self.in_action = False
        self.main: Instance | None = None
        self.controller_headers: list[HeaderT] = []
        self.digest_calls: list = []  # digest(receiver, data) calls, in program order
        self.extern_function_calls: list = []  # calls of extern functions, verify() aside
        self.actions: list[ir.ActionDecl] = []
        self.in_parser = False
        self.action: ir.ActionDecl | None = None  # the action being checked
        self.direct_meters: list[Instance] = []
        # Checks of what p4c's back end keeps after its optimisations (inlining, copy
        # propagation, removal of unused code): (check, node, enclosing parser/control),
        # run once the whole program is known, on code in blocks that main uses.
        self.target_checks: list[tuple] = []

    def run(self) -> None:
        for d in self.program.decls:
            self.declaration(d)
        for a in getattr(self.program, "structured_annotations", ()):
            self.structured_annotation(a)
        self.direct_meter_rules()
        if self.main is None:
            raise P4Error.at(
                getattr(self.program, "end_pos", None),
                "no package instantiation named 'main' (expected V1Switch(...) main;)",
            )
        live = self.live_blocks()
        for check, node, block in self.target_checks:
            if block in live:
                check(node)

    def structured_annotation(self, a: ir.Annotation) -> None:
        """Spec 18.2: every value of `@a[...]` is a compile-time constant int, string or
        bool. The text becomes the folded values (`@a[k=6]` for `@a[k=2*3]`), the form
        P4Info's structured_annotations is written from."""
        values = []
        for key, e in a.structured:
            t = None if isinstance(e, (ir.ListExpr, ir.StructInit)) else self.expr(e, self.scope)
            if t is not None and e.const is None:
                raise P4Error.at(
                    e.pos,
                    f"@{a.name}: a structured annotation value must be a compile-time constant",
                )
            if not isinstance(t, (InfInt, StringT, BoolT)):
                raise P4Error.at(
                    e.pos,
                    f"@{a.name}: illegal type {t or 'list'} for a structured annotation value; must be "
                    f"int, string or bool",
                )
            if isinstance(t, StringT):
                value = json.dumps(e.const)
            else:
                value = str(e.const).lower() if isinstance(t, BoolT) else str(e.const)
            values.append(value if key is None else f"{key}={value}")
        a.text = f"@{a.name}[{', '.join(values)}]"

    def direct_meter_rules(self) -> None:
        """v1model as BMv2 implements it (p4c-bm2-ss): a direct_meter belongs to one table
        (`meters = m`), and some action of that table reads the color with m.read()."""
        for inst in self.direct_meters:
            table = getattr(inst, "table", None)
            if table is None and getattr(inst, "read_by_action", False):
                raise P4Error.at(
                    inst.node.pos,
                    f"direct meter {inst.name} is not attached to a table (meters = {inst.name})",
                )
            if table is None:
                continue  # never used: p4c drops it
            if not any(inst in getattr(r.decl, "meters_read", ()) for r in table.action_refs):
                raise P4Error.at(
                    table.pos,
                    f"table {table.name} has direct meter {inst.name}, but none of its actions "
                    f"reads it ({inst.name}.read(color))",
                )

    def declare(self, scope: Scope, name: str, obj, pos) -> None:
        old = scope.names.get(name)
        if old is not None:
            if isinstance(old, Overloads) and isinstance(obj, Overloads):
                old.decls += obj.decls
                return
            raise P4Error.at(pos, f"'{name}' is already declared in this scope")
        shadowed = scope.parent.lookup(name) if scope.parent else None
        if is_param(shadowed) and not is_param(obj):
            raise P4Error.at(
                pos,
                f"declaration of '{name}' shadows the parameter '{name}' "
                f"(line {shadowed.pos.line}): rename one of them",
            )
        scope.names[name] = obj

    def resolve_type(self, ref: ir.TypeRef, scope: Scope) -> Type:
        if isinstance(ref, ir.BaseTypeRef):
            n = ref.name
            if n in ("bit", "int"):
                if ref.width is None:
                    if n == "int":
                        return InfInt()
                    return Bits(1)
                w = self.const_int(ref.width, scope, in_type=True)
                if w <= 0 or w > MAX_WIDTH:
                    raise P4Error.at(
                        ref.pos, f"width of {n}<{w}> must be between 1 and {MAX_WIDTH}"
                    )
                return Bits(w, n == "int")
            if n == "varbit":
                w = self.const_int(ref.width, scope, in_type=True)
                if w <= 0 or w > MAX_WIDTH:
                    raise P4Error.at(
                        ref.pos, f"width of varbit<{w}> must be between 1 and {MAX_WIDTH}"
                    )
                return Varbit(w)
            return {
                "bool": BoolT(),
                "string": StringT(),
                "void": VoidT(),
                "error": self.error_type,
                "match_kind": self.match_kinds,
                "_": DontCareT(),
            }[n]
        if isinstance(ref, ir.StackTypeRef):
            elem = self.resolve_type(ref.elem, scope)
            if not (isinstance(elem, HeaderT) and elem.kind in ("header", "header_union")):
                raise P4Error.at(
                    ref.pos, f"header stack elements must be headers or header unions, not {elem}"
                )
            size = self.const_int(ref.size, scope, in_type=True)
            if not 0 < size <= MAX_STACK_SIZE:
                raise P4Error.at(
                    ref.size.pos,
                    f"header stack size {size} must be between 1 and {MAX_STACK_SIZE:,} "
                    "(p4sim's limit)",
                )
            return StackT(elem, size)
        if isinstance(ref, ir.TupleTypeRef):
            items = [self.resolve_type(a, scope) for a in ref.args]
            for a, t in zip(ref.args, items):
                # spec, "Tuple types": a tuple holds values (p4c lowers it to a struct, whose fields
                # cannot be strings either); p4sim reads list<T> as a tuple, but p4c's lists
                # are their own type, so they are left alone here
                if ref.kind == "tuple" and isinstance(t, (StringT, DontCareT, VoidT, ExternT)):
                    what = f"extern {t}" if isinstance(t, ExternT) else t
                    raise P4Error.at(
                        a.pos,
                        f"a tuple cannot hold an element of type {what} (allowed: bit<W>, "
                        f"int<W>, bool, enums, error, headers, structs, tuples)",
                    )
            return TupleT(items)
        entry = scope.lookup(ref.name)
        if isinstance(entry, TypeEntry):
            t = entry.type
            if ref.args and not self.takes_type_args(t):
                raise P4Error.at(
                    ref.pos,
                    f"type {ref.name} is not generic (or already specialised): it takes no "
                    f"type arguments",
                )
            if isinstance(t, GenericHeaderT):
                return self.specialize_header(t, ref, scope)
            if isinstance(t, ExternT):
                args = [self.resolve_type(a, scope) for a in ref.args]
                for a, at in zip(ref.args, args):
                    if contains_extern(at, t.decl):
                        raise P4Error.at(
                            a.pos, f"{ref.name} cannot have itself as (or in) a type argument"
                        )
                return ExternT(t.decl, args) if ref.args else t  # t: maybe a typedef's
            if ref.args and isinstance(t, BlockT):
                for a in ref.args:  # generic parser/control types: the arguments must exist
                    self.resolve_type(a, scope)
                return t
            return t
        if entry is None:
            if ref.name == "list":
                raise unsupported(ref.pos, "the list<T> type")
            raise P4Error.at(ref.pos, f"unknown type '{ref.name}'")
        raise P4Error.at(ref.pos, f"'{ref.name}' is not a type")

    @staticmethod
    def takes_type_args(t: Type) -> bool:
        """A generic extern not yet specialised, a generic struct/header, or a generic
        parser/control/package type."""
        if isinstance(t, ExternT):
            return bool(t.decl.type_params) and not t.args
        if isinstance(t, GenericHeaderT):
            return True
        return isinstance(t, BlockT) and bool(getattr(t.decl, "type_params", None))

    def specialize_header(self, t: GenericHeaderT, ref: ir.NamedTypeRef, scope: Scope) -> Type:
        """`S<bit<8>>` of `struct S<T>`: S with T bound, one type per list of arguments,
        named as p4c names it (`S_bit8`)."""
        params = t.decl.type_params
        if len(ref.args) != len(params):
            raise P4Error.at(
                ref.pos,
                f"{t.decl.kind} {t.decl.name} takes {len(params)} type argument(s) "
                f"({', '.join(params)}), got {len(ref.args)}",
            )
        args = [self.resolve_type(a, scope) for a in ref.args]
        own = set(map(id, t.specializations.values()))
        for a, at in zip(ref.args, args):
            if isinstance(at, (DontCareT, VoidT, ExternT, StringT, BlockT)):
                raise P4Error.at(a.pos, f"{at} cannot be a type argument of {t.decl.name}")
            if id(at) in own:  # as p4c: S<S<bit<8>>> is refused
                raise P4Error.at(
                    a.pos,
                    f"{t.decl.kind} {t.decl.name} cannot have itself as a type argument",
                )
        key = tuple(str(a) for a in args)
        if key not in t.specializations:
            name = "_".join([t.decl.name, *(re.sub(r"\W", "", k) for k in key)])
            bound = self.type_scope(t.scope, dict(zip(params, args)))
            t.specializations[key] = self.header_type(t.decl, bound, name)
        return t.specializations[key]

    def const_int(self, e: ir.Expr, scope: Scope, in_type: bool = False) -> int:
        """in_type: a width or stack size, which p4c wants known without the constructor
        arguments of the parser or control it is in."""
        self.expr(e, scope)
        if e.const is None or not isinstance(e.const, int) or isinstance(e.const, bool):
            raise P4Error.at(e.pos, "expected a compile-time constant integer")
        if in_type:
            param = ctor_param_in(e)
            if param is not None:
                raise P4Error.at(
                    e.pos,
                    f"a width or stack size must be a constant, not constructor parameter "
                    f"'{param}'",
                )
        return e.const


def ctor_param_in(e):
    """The name of a constructor parameter the expression reads, or None."""
    if isinstance(e, ir.Name) and getattr(getattr(e, "decl", None), "ctor_param", False):
        return e.name
    if not hasattr(e, "__dataclass_fields__"):
        return None
    for f in fields(e):
        value = getattr(e, f.name)
        for v in value if isinstance(value, list) else [value]:
            if hasattr(v, "__dataclass_fields__"):
                found = ctor_param_in(v)
                if found is not None:
                    return found
    return None

"""Name resolution, type checking and constant folding of the supported P4_16 subset.

The checker walks the IR once, in declaration order (P4 declares before use), and annotates
it in place: every expression gets `.type` and, when it is a compile-time constant, `.const`;
every name gets `.decl` (a `Var`, an `Instance`, a declaration); every call gets `.kind` and
`.target`. Variables get a slot in the frame of the parser/control/function that owns them,
which is how the engine addresses them without dictionaries.

Representation of values shared with the engine: bit<W>/int<W> are Python ints (int<W> in
two's complement range), bool is bool, `error` and plain enums are ints (member index; for
`error`, NoError is 0), serializable enums are their underlying value.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, fields

from p4sim.engine.externs import HASH_ALGORITHMS
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import (
    ActionEnumT,
    ApplyResultT,
    Bits,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    InfInt,
    MatchKindT,
    NewBits,
    NewBool,
    StackT,
    StringT,
    TableT,
    TupleT,
    Type,
    TypeVar,
    Varbit,
    VoidT,
    base_type,
    bit_width,
    is_newtype,
)
from p4sim.limits import MAX_EXTERN_SIZE, MAX_STACK_SIZE, MAX_TABLE_SIZE, MAX_WIDTH


@dataclass(eq=False)
class Var:
    name: str
    type: Type
    direction: str  # "", "in", "out", "inout" for parameters; "local"; "const"
    slot: int | None = None
    const: object = None
    pos: object = None
    init: object = None  # a local's constant initializer, if it has one
    assigned: bool = False  # a local written after its declaration (or passed as out/inout)
    block: object = None  # the parser/control whose apply parameter this is
    ctor_param: bool = False  # a constructor parameter, bound to its argument's value


@dataclass(eq=False)
class Instance:
    """An instantiation: extern object, or parser/control instance."""

    name: str
    type: Type
    node: ir.Instantiation | None
    ctor_args: list = field(default_factory=list)
    annotations: list = field(default_factory=list)


@dataclass(eq=False)
class TypeEntry:
    type: Type


@dataclass(eq=False)
class Overloads:
    """Extern functions and global functions of one name (overloaded by argument count)."""

    decls: list


class Frame:
    def __init__(self):
        self.size = 0

    def alloc(self) -> int:
        self.size += 1
        return self.size - 1


class Scope:
    def __init__(self, parent: Scope | None = None):
        self.names: dict[str, object] = {}
        self.parent = parent

    def lookup(self, name: str):
        s = self
        while s is not None:
            v = s.names.get(name)
            if v is not None:
                return v
            s = s.parent
        return None

    def root(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s


def is_param(entry) -> bool:
    return isinstance(entry, Var) and entry.direction in ("", "in", "out", "inout")


ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
MAX_CONST_SHIFT = 2048  # p4c's maximumWidthSupported: the largest constant shift it folds
COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def fold(op: str, a: int, b: int, t: Type, pos) -> int:
    """Evaluate a binary operator on ints (used by the checker and, via the same rules, the
    engine). `t` is the operand type: Bits results wrap, InfInt results do not."""
    if op in ("/", "%") and b == 0:
        raise P4Error.at(pos, "division by zero")
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        r = a // b
    elif op == "%":
        r = a % b
    elif op == "&":
        r = a & b
    elif op == "|":
        r = a | b
    elif op == "^":
        r = a ^ b
    elif op == "<<":
        r = a << b
    elif op == ">>":
        r = a >> b
    elif op in ("|+|", "|-|"):
        r = a + b if op == "|+|" else a - b
        if isinstance(t, Bits):
            lo = -(1 << (t.width - 1)) if t.signed else 0
            hi = (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
            return max(lo, min(hi, r))
        return r
    else:
        raise P4Error.at(pos, f"operator {op} cannot be folded")
    return t.wrap(r) if isinstance(t, Bits) else r


class Checker:
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
        self.digest_types: list[HeaderT] = []
        self.extern_functions: set[str] = set()  # extern functions the program calls
        self.actions: list[ir.ActionDecl] = []
        self.in_parser = False
        self.action: ir.ActionDecl | None = None  # the action being checked
        self.direct_meters: list[Instance] = []
        # Checks of what p4c's back end keeps after its optimisations (inlining, copy
        # propagation, removal of unused code): (check, node, enclosing parser/control),
        # run once the whole program is known, on code in blocks that main uses.
        self.target_checks: list[tuple] = []

    # -- entry ------------------------------------------------------------------------
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

    # -- types ------------------------------------------------------------------------
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
        """A generic extern not yet specialised, or a generic parser/control/package type."""
        if isinstance(t, ExternT):
            return bool(t.decl.type_params) and not t.args
        return isinstance(t, BlockT) and bool(getattr(t.decl, "type_params", None))

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

    # -- declarations -----------------------------------------------------------------
    def declaration(self, d, scope: Scope | None = None) -> None:
        scope = scope or self.scope
        if scope is self.scope and getattr(d, "name", None) == "main":
            self.main_rules(d)
        if isinstance(d, ir.ErrorDecl):
            target = self.error_type if d.kind == "error" else self.match_kinds
            for name, pos in d.members:
                if d.kind == "error":
                    if name in target.members:
                        raise P4Error.at(pos, f"error.{name} is already declared")
                    target.members[name] = len(target.members)
                else:
                    if name in target.members:
                        raise P4Error.at(pos, f"match_kind {name} is already declared")
                    target.members.add(name)
            return
        if isinstance(d, ir.TypedefDecl):
            t = self.resolve_type(d.typeref, scope)
            if d.newtype and not isinstance(t, (Bits, BoolT)):
                # spec, "Introducing new types" (p4c agrees): `type` only over bit<W>,
                # int<W>, bool or another `type`
                raise P4Error.at(
                    d.typeref.pos,
                    f"'type' can only define a new type over bit<W>, int<W>, bool or another "
                    f"'type', not over {t} (use typedef for a synonym)",
                )
            if d.newtype:  # a type of its own, run as its base type
                t = NewBits(t.width, t.signed, d.name) if isinstance(t, Bits) else NewBool(d.name)
            self.declare(scope, d.name, TypeEntry(t), d.pos)
            return
        if isinstance(d, ir.HeaderDecl):
            if d.type_params:
                raise unsupported(d.pos, "generic struct/header")
            fields = []
            seen = set()
            for f in d.fields:
                ft = self.resolve_type(f.typeref, scope)
                if f.name in seen:
                    raise P4Error.at(f.pos, f"duplicate field '{f.name}' in {d.name}")
                seen.add(f.name)
                if d.kind == "header" and isinstance(ft, HeaderT) and ft.kind == "struct":
                    # P4_16 allows structs of bit-string fields in headers (p4c does)
                    raise unsupported(f.pos, f"header field '{d.name}.{f.name}' of struct type")
                if (
                    d.kind == "header"
                    and not isinstance(ft, (Bits, Varbit, BoolT))
                    and not (isinstance(ft, EnumT) and ft.underlying)
                ):
                    raise P4Error.at(
                        f.pos,
                        f"header field {d.name}.{f.name} must be bit<W>, int<W>, bool or a serializable enum, not {ft}",
                    )
                if isinstance(ft, StringT):
                    raise P4Error.at(f.pos, f"field {d.name}.{f.name} cannot have type string")
                match = ir.annotation(f.annotations, "match")
                if (
                    d.kind == "struct"
                    and match
                    and match.args not in ([k] for k in self.match_kinds.members)
                ):
                    raise P4Error.at(
                        match.pos,
                        f"@match of field {d.name}.{f.name} must name one match_kind: "
                        f"{', '.join(sorted(self.match_kinds.members))}",
                    )
                if d.kind == "header_union" and not (
                    isinstance(ft, HeaderT) and ft.kind == "header"
                ):
                    raise P4Error.at(
                        f.pos, f"header_union {d.name} may only contain headers, not {ft}"
                    )
                if isinstance(ft, Varbit):
                    if d.kind != "header":
                        raise unsupported(f.pos, "varbit outside a header")
                    if any(isinstance(x, Varbit) for _, x in fields):
                        raise P4Error.at(f.pos, f"header {d.name} has more than one varbit field")
                fields.append((f.name, ft))
            t = HeaderT(d.name, d.kind, fields, d.annotations)
            t.field_annotations = [f.annotations for f in d.fields]
            self.declare(scope, d.name, TypeEntry(t), d.pos)
            ann = ir.annotation(d.annotations, "controller_header")
            if ann is not None:
                self.controller_headers.append(t)
            return
        if isinstance(d, ir.EnumDecl):
            under = None
            if d.underlying is not None:
                under = self.resolve_type(d.underlying, scope)
                if not isinstance(under, Bits):
                    raise P4Error.at(d.pos, "a serializable enum needs a bit<W> or int<W> type")
            t = EnumT(d.name, [m[0] for m in d.members], under)
            for i, (mname, value, mpos) in enumerate(d.members):
                if mname in t.values:
                    raise P4Error.at(mpos, f"duplicate member {d.name}.{mname}")
                if under is not None:
                    if value is None:
                        raise P4Error.at(
                            mpos, f"member {d.name}.{mname} of a serializable enum needs a value"
                        )
                    t.values[mname] = under.wrap(self.const_int(value, scope))
                else:
                    t.values[mname] = i
            self.declare(scope, d.name, TypeEntry(t), d.pos)
            return
        if isinstance(d, ir.ConstDecl):
            t = self.resolve_type(d.typeref, scope)
            self.expr(d.value, scope, t)
            self.coerce(d.value, t)
            if d.value.const is None:
                raise P4Error.at(
                    d.value.pos, f"value of constant '{d.name}' is not a compile-time constant"
                )
            self.declare(scope, d.name, Var(d.name, t, "const", None, d.value.const, d.pos), d.pos)
            return
        for names in (getattr(d, "type_params", None) or [],):
            dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
            if dup:
                raise P4Error.at(d.pos, f"duplicate type parameter '{dup}' of {d.name}")
        if isinstance(d, ir.ExternDecl):
            self.declare(scope, d.name, TypeEntry(ExternT(d, [])), d.pos)
            # overloads are told apart by the number and the names of their parameters
            signatures: set[tuple] = set()
            for m in d.methods:
                sig = (m.name, tuple(p.name for p in m.params))
                if sig in signatures:
                    raise P4Error.at(
                        m.pos,
                        f"{d.name}.{m.name}({', '.join(sig[1])}) is declared twice",
                    )
                signatures.add(sig)
            for m in d.methods:
                if m.ret is None and m.name != d.name:
                    raise P4Error.at(
                        m.pos,
                        f"'{m.name}' has no return type and is not a constructor of {d.name}",
                    )
                if m.name == d.name and m.ret is not None:
                    raise P4Error.at(m.pos, f"constructor {d.name} cannot have a return type")
                self.param_rules(m.params, scope, [*d.type_params, *m.type_params])
                for ref, t in self.signature(m, scope, [*d.type_params, *m.type_params]):
                    if contains_extern(t, d):
                        raise P4Error.at(
                            ref.pos,
                            f"extern {d.name} refers to itself in {m.name}: a type cannot "
                            f"contain itself",
                        )
            return
        if isinstance(d, ir.MethodDecl):
            self.param_rules(d.params, scope, d.type_params)
            self.signature(d, scope, d.type_params)
            self.declare(scope, d.name, Overloads([d]), d.pos)
            return
        if isinstance(d, ir.FunctionDecl):
            self.function_decl(d, scope)
            self.declare(scope, d.name, Overloads([d]), d.pos)
            return
        if isinstance(d, ir.ActionDecl):
            self.action_decl(d, scope)
            return
        if isinstance(d, (ir.ParserDecl, ir.ControlDecl, ir.PackageDecl)):
            if getattr(d, "ctor_params", None):
                # checked once per instance, with its constructor arguments bound (specialize)
                d.template = copy.deepcopy(d)
            self.param_rules(d.params, scope, d.type_params)
            d.param_types = [t for _, t in self.signature(d, scope, d.type_params)]
            self.param_rules(getattr(d, "ctor_params", []), scope, d.type_params)
            if {p.name for p in d.params} & {p.name for p in getattr(d, "ctor_params", [])}:
                dup = next(p for p in d.ctor_params if p.name in {q.name for q in d.params})
                raise P4Error.at(dup.pos, f"duplicate parameter '{dup.name}'")
            self.declare(scope, d.name, TypeEntry(BlockT(d)), d.pos)
            if getattr(d, "ctor_params", None):
                if d.type_params:
                    raise unsupported(d.pos, f"generic {kind_of(d)}")
                for p in d.ctor_params:
                    p.type = self.resolve_type(p.typeref, scope)
                    if isinstance(p.type, BlockT) and has_body(p.type.decl):
                        raise P4Error.at(
                            p.pos,
                            f"{p.name}: a parameter cannot have the type of {kind_of(p.type.decl)} "
                            f"{p.type.decl.name}, which is a declaration (give a "
                            f"{kind_of(p.type.decl)} type, `{kind_of(p.type.decl)} "
                            f"T(...);`)",
                        )
            elif isinstance(d, ir.ParserDecl) and d.states is not None:
                self.parser_decl(d)
            elif isinstance(d, ir.ControlDecl) and d.body is not None:
                self.control_decl(d)
            return
        if isinstance(d, ir.Instantiation):
            inst = self.instantiation(d, scope)
            self.declare(scope, d.name, inst, d.pos)
            if d.name == "main" and scope is self.scope:
                self.main = inst
            return
        raise unsupported(getattr(d, "pos", None), type(d).__name__)

    def main_rules(self, d) -> None:
        """The top-level name `main` is the program's package instance."""
        t = self.resolve_type(d.typeref, self.scope) if isinstance(d, ir.Instantiation) else None
        if not (isinstance(t, BlockT) and isinstance(t.decl, ir.PackageDecl)):
            what = f"an instance of {t}" if t is not None else "a declaration"
            raise P4Error.at(
                d.pos,
                f"main must be a package instantiation such as V1Switch(...) main; "
                f"here it is {what}",
            )

    def param_rules(self, params: list[ir.Param], scope: Scope, type_params=()) -> None:
        """P4_16 spec, "Parameter declarations" and "Directions": names are unique in a list;
        int, string and extern-typed parameters are directionless; only in parameters (and
        directionless ones) may have a default value. Runs on declarations with and without
        bodies, so prototypes (parser types, packages, externs) are held to it too."""
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                raise P4Error.at(p.pos, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            if p.default is not None and p.direction in ("out", "inout"):
                raise P4Error.at(
                    p.pos, f"{p.direction} parameter '{p.name}' cannot have a default value"
                )
            if not p.direction:
                continue
            ref = p.typeref
            what = None
            if isinstance(ref, ir.BaseTypeRef) and ref.name == "string":
                what = "string"
            elif isinstance(ref, ir.BaseTypeRef) and ref.name == "int" and ref.width is None:
                what = "int"
            elif isinstance(ref, ir.NamedTypeRef) and ref.name not in type_params:
                entry = scope.lookup(ref.name)
                if isinstance(entry, TypeEntry) and isinstance(entry.type, ExternT):
                    what = f"extern {ref.name}"
            if what:
                raise P4Error.at(
                    p.pos,
                    f"parameter '{p.name}' of type {what} must be directionless "
                    f"(remove '{p.direction}')",
                )

    def signature(self, d, scope: Scope, type_params) -> list[tuple[ir.TypeRef, Type]]:
        """The parameter and return types of a declaration without a body (extern method or
        function, parser/control/package type), resolved with its type parameters unbound:
        they must name existing, well-formed types even where nothing calls them."""
        tscope = self.type_scope(scope, {n: TypeVar(n) for n in type_params})
        refs = [p.typeref for p in d.params] + [r for r in [getattr(d, "ret", None)] if r]
        return [(ref, self.resolve_type(ref, tscope)) for ref in refs]

    @staticmethod
    def type_scope(scope: Scope, binding: dict[str, Type]) -> Scope:
        """scope with the type parameters of a generic declaration bound (to TypeVars when
        not known yet)."""
        inner = Scope(scope)
        inner.names.update((n, TypeEntry(t)) for n, t in binding.items())
        return inner

    def params(self, params: list[ir.Param], scope: Scope, frame: Frame | None) -> None:
        self.param_rules(params, scope)
        for p in params:
            t = self.resolve_type(p.typeref, scope)
            p.type = t
            if (
                isinstance(t, ExternT)
                and frame is not None
                and t.decl.name not in ("packet_in", "packet_out")
            ):
                raise unsupported(p.pos, "extern object as a parameter")
            var = Var(p.name, t, p.direction, frame.alloc() if frame else None, None, p.pos)
            p.var = var
            self.declare(scope, p.name, var, p.pos)

    @staticmethod
    def no_optional_params(params: list[ir.Param]) -> None:
        """p4c: @optional is for the parameters of externs, parsers, controls and packages
        (architecture declarations), not of functions or actions."""
        for p in params:
            if ir.annotation(p.annotations, "optional"):
                raise P4Error.at(
                    p.pos,
                    f"{p.name}: @optional is allowed only on parameters of externs, parsers, "
                    "controls and packages",
                )

    def function_decl(self, d: ir.FunctionDecl, scope: Scope) -> None:
        self.no_optional_params(d.params)
        if d.type_params:
            raise unsupported(d.pos, "generic function")
        saved = (self.frame, self.return_type)
        self.frame = Frame()
        fscope = Scope(scope)
        self.params(d.params, fscope, self.frame)
        d.ret_type = self.resolve_type(d.ret, scope)
        self.return_type = d.ret_type
        self.stmt(d.body, fscope)
        if not isinstance(d.ret_type, VoidT) and not leaves(d.body):
            raise P4Error.at(d.pos, f"function '{d.name}' does not return a value on all paths")
        d.frame_size = self.frame.size
        self.frame, self.return_type = saved

    def action_decl(self, d: ir.ActionDecl, scope: Scope) -> None:
        self.no_optional_params(d.params)
        top_level = self.frame is None
        saved = self.frame
        if top_level:
            self.frame = Frame()
        ascope = Scope(scope)
        seen_directionless = False
        for p in d.params:
            if p.direction == "":
                seen_directionless = True
            elif seen_directionless:
                raise P4Error.at(
                    p.pos, "directional action parameters must come before directionless ones"
                )
        for p in d.params:
            ref = p.typeref
            untyped_int = isinstance(ref, ir.BaseTypeRef) and ref.name == "int" and not ref.width
            if not p.direction and untyped_int:
                raise P4Error.at(
                    p.pos,
                    f"action parameter '{p.name}' of type int: parameters set by the "
                    f"control plane need a fixed-width type such as bit<W>",
                )
        self.params(d.params, ascope, self.frame)
        prev_action, self.in_action = self.in_action, True
        outer, self.action = self.action, d
        d.meters_read = set()
        self.stmt(d.body, ascope)
        self.in_action = prev_action
        self.action = outer
        d.top_level = top_level
        d.frame_size = self.frame.size if top_level else None
        if top_level:
            self.frame = saved
        d.qualified = d.name
        self.declare(scope, d.name, d, d.pos)
        self.actions.append(d)

    def instantiation(self, d: ir.Instantiation, scope: Scope) -> Instance:
        t = self.resolve_type(d.typeref, scope)
        inst = Instance(d.name, t, d, [], d.annotations)
        if isinstance(t, ExternT):
            ctors = [m for m in t.decl.methods if m.ret is None]
            ctor = next((c for c in ctors if len(c.params) == len(d.args)), None)
            if ctor is None:
                raise P4Error.at(
                    d.pos,
                    f"{t.decl.name} takes {' or '.join(str(len(c.params)) for c in ctors) or 'no'} constructor argument(s), got {len(d.args)}",
                )
            names = t.decl.type_params
            optional = V1MODEL_OPTIONAL_INDEX.get(t.decl.name, ())
            left_out = names[len(t.args) :]
            if t.args and len(t.args) != len(names) and not set(left_out) <= set(optional):
                raise P4Error.at(
                    d.typeref.pos,
                    f"{t.decl.name} takes {len(names)} type argument(s), got {len(t.args)}",
                )
            binding = self.bind_type_params(names, t.args)
            binding.update((n, Bits(32)) for n in optional if isinstance(binding[n], TypeVar))
            self.infer_from_args(ctor.params, d.args, scope, binding)
            for p, a in zip(ctor.params, d.args):
                if p.name == "size":
                    self.check_extern_size(t.decl.name, a.value)
            self.convert_args(ctor.params, d.args, scope, binding, t.decl.name)
            for i, n in enumerate(names):
                given = t.args[i] if i < len(t.args) else None
                if isinstance(binding[n], TypeVar) and isinstance(given, DontCareT):
                    binding[n] = given  # `E<_>`: what no argument determines stays `_`
                elif isinstance(binding[n], TypeVar) and not t.args:
                    raise P4Error.at(
                        d.pos,
                        f"{d.name}: could not infer a type for type parameter {n} of "
                        f"{t.decl.name} (no constructor argument determines it): give the "
                        f"type arguments, {t.decl.name}<...>(...)",
                    )
            for p, a in zip(ctor.params, d.args):
                if a.value.const is None:
                    raise P4Error.at(
                        a.value.pos,
                        f"constructor argument '{p.name}' must be a compile-time constant",
                    )
                inst.ctor_args.append(a.value.const)
            inst.binding = binding
            if t.decl.name == "direct_meter":
                self.direct_meters.append(inst)
            return inst
        if isinstance(t, BlockT):
            if isinstance(t.decl, ir.PackageDecl):
                if not self.arity_ok(t.decl.params, d.args):
                    raise P4Error.at(
                        d.pos,
                        f"package {t.decl.name} takes {len(t.decl.params)} arguments, got {len(d.args)}",
                    )
                args = d.args
                if any(a.name for a in args):  # V1Switch(p = P(), ig = I(), ...)
                    by_name = {a.name: a for a in args}
                    if set(by_name) != {p.name for p in t.decl.params}:
                        raise P4Error.at(
                            d.pos,
                            f"package {t.decl.name} takes the named arguments "
                            f"{', '.join(p.name for p in t.decl.params)}",
                        )
                    args = [by_name[p.name] for p in t.decl.params]
                tscope = self.type_scope(scope, {n: TypeVar(n) for n in t.decl.type_params})
                # the package's type parameters: as given (`V1Switch<H, M>(...)`), else inferred
                targs = [self.resolve_type(a, scope) for a in getattr(d.typeref, "args", [])]
                if targs and len(targs) != len(t.decl.type_params):
                    raise P4Error.at(
                        d.typeref.pos,
                        f"package {t.decl.name} takes {len(t.decl.type_params)} type "
                        f"argument(s), got {len(targs)}",
                    )
                binding: dict[str, Type] = {
                    n: a for n, a in zip(t.decl.type_params, targs) if not isinstance(a, DontCareT)
                }
                for p, a in zip(t.decl.params, args):
                    arg = self.block_arg(a.value, scope)
                    self.package_arg_rules(p, arg, a.value.pos, tscope, binding)
                    inst.ctor_args.append(arg)
                return inst
            if scope is self.scope:
                raise P4Error.at(
                    d.pos,
                    f"{d.name}: {t.decl.name} cannot be instantiated at the top level (only "
                    f"externs and packages can; instantiate it inside a parser or control)",
                )
            if d.args or getattr(t.decl, "ctor_params", None):
                inst.type = self.specialize(t, d.args, scope, d.pos)
            return inst
        raise P4Error.at(d.pos, f"cannot instantiate {t}")

    def direct_instance(self, ref: ir.Name, t: BlockT) -> Instance:
        """`C.apply(...)` on a parser or control type (spec, "Direct type invocation"): a
        fresh instance of C without constructor arguments, local to the block that applies
        it and named by the type, as p4c's frontend names it (`Ingress.C.t` for its table)."""
        if not isinstance(t.decl, (ir.ParserDecl, ir.ControlDecl)) or self.block is None:
            raise P4Error.at(
                ref.pos,
                f"{ref.name} is a type: only a parser or control type "
                "can be applied directly, from a parser or control",
            )
        if t.decl is self.block:
            raise P4Error.at(ref.pos, f"{ref.name} cannot apply itself")
        if t.decl.ctor_params:
            raise P4Error.at(
                ref.pos,
                f"{ref.name} has constructor parameters: instantiate it to apply it "
                f"({ref.name}(...) name;)",
            )
        loc = ir.Instantiation(ref.pos, ref.name, [], ir.NamedTypeRef(ref.pos, ref.name), [])
        loc.instance = Instance(ref.name, t, loc)
        self.block.locals.append(loc)
        if isinstance(self.block, ir.ControlDecl):
            self.block.instances.append(loc.instance)
        return loc.instance

    def specialize(self, t: BlockT, args: list[ir.Arg], scope: Scope, pos) -> BlockT:
        """The parser or control type t with its constructor parameters bound to args: a copy
        of its declaration, checked with each value parameter a constant and each parser or
        control parameter the instance given (spec, "Instantiations"; p4c likewise checks
        and names every instance's objects separately)."""
        decl = t.decl
        params = decl.ctor_params
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            if set(by_name) != {p.name for p in params}:
                raise P4Error.at(
                    pos,
                    f"{decl.name} takes the constructor arguments "
                    f"{', '.join(p.name for p in params)}",
                )
            args = [by_name[p.name] for p in params]
        if len(args) != len(params):
            raise P4Error.at(
                pos, f"{decl.name} takes {len(params)} constructor argument(s), got {len(args)}"
            )
        bound = []
        for p, a in zip(params, args):
            if isinstance(p.type, BlockT):
                arg = self.block_arg(a.value, scope)
                self.package_arg_rules(p, arg, a.value.pos, self.scope, {}, "constructor parameter")
                bound.append((p.name, arg, p.pos))
                continue
            self.expr(a.value, scope, p.type)
            self.coerce(a.value, p.type)
            if a.value.const is None:
                raise P4Error.at(
                    a.value.pos, f"constructor argument '{p.name}' must be a compile-time constant"
                )
            var = Var(p.name, p.type, "const", None, a.value.const, p.pos, ctor_param=True)
            bound.append((p.name, var, p.pos))
        spec = copy.deepcopy(decl.template)
        spec.ctor_params, spec.param_types = [], decl.param_types
        state = ("frame", "block", "in_parser", "return_type", "in_action", "action")
        saved = {n: getattr(self, n) for n in state}
        self.return_type, self.in_action, self.action = None, False, None
        try:
            if isinstance(spec, ir.ParserDecl):
                self.parser_decl(spec, bound)
            else:
                self.control_decl(spec, bound)
        finally:
            for n, v in saved.items():
                setattr(self, n, v)
        spec.bound_instances = [obj for _, obj, _ in bound if isinstance(obj, Instance)]
        return BlockT(spec)

    def package_arg_rules(
        self,
        p: ir.Param,
        arg: Instance,
        pos,
        scope: Scope,
        binding: dict[str, Type],
        what: str = "package parameter",
    ) -> None:
        """A package argument is a parser where the parameter's type is a parser type and a
        control where it is a control type, with the same parameter directions and types
        (the package's type parameters, such as V1Switch's H and M, bind once for all its
        arguments: spec, "Type inference")."""
        want = self.resolve_type(p.typeref, scope)
        if not isinstance(want, BlockT):
            raise P4Error.at(pos, f"{what} '{p.name}' is not a parser or control type")
        kind = {ir.ParserDecl: "parser", ir.ControlDecl: "control", ir.PackageDecl: "package"}
        got_kind, want_kind = kind[type(arg.type.decl)], kind[type(want.decl)]
        if got_kind != want_kind:
            raise P4Error.at(
                pos,
                f"{got_kind} {arg.type.decl.name} does not match {what} "
                f"'{p.name}' of type {want_kind} {want.decl.name}",
            )
        got_params, want_params = arg.type.decl.params, want.decl.params
        omitted = want_params[len(got_params) :]  # only those with a default (or @optional)
        if len(got_params) > len(want_params) or any(
            w.default is None and not ir.annotation(w.annotations, "optional") for w in omitted
        ):
            raise P4Error.at(
                pos,
                f"{got_kind} {arg.type.decl.name} has {len(got_params)} parameter(s), but "
                f"{what} '{p.name}' of type {want.decl.name} takes "
                f"{len(want_params)}",
            )
        if len(got_params) == len(want_params):
            for g, w in zip(got_params, want_params):
                if g.direction != w.direction:
                    raise P4Error.at(
                        g.pos,
                        f"parameter '{g.name}' of {arg.type.decl.name} is "
                        f"'{g.direction or 'directionless'}', but {want.decl.name} declares "
                        f"it '{w.direction or 'directionless'}' ({what} '{p.name}')",
                    )
            # `Parser<H, M>`: the parser type's own type parameters stand for the package's
            targs = [self.resolve_type(a, scope) for a in getattr(p.typeref, "args", [])]
            rename = {
                n: TypeVar(f"{p.name}.{n}") if isinstance(a, DontCareT) else a  # `_`: infer
                for n, a in zip(want.decl.type_params, targs)
            }
            if not rename:
                binding = {}  # a type without arguments binds its own type parameters
            got_types, want_types = arg.type.decl.param_types, want.decl.param_types
            for g, gt, wt in zip(got_params, got_types, want_types):
                wt = substitute(wt, rename)
                if not unifies(wt, gt, binding):
                    raise P4Error.at(
                        g.pos,
                        f"parameter '{g.name}' of {arg.type.decl.name} has type {gt}, but "
                        f"{want.decl.name} declares it {substitute(wt, binding)} (package "
                        f"parameter '{p.name}')",
                    )

    def block_arg(self, e: ir.Expr, scope: Scope) -> Instance:
        """A package argument: `Ctl()` (anonymous instance) or the name of an instance."""
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Name):
            entry = scope.lookup(e.func.name)
            if isinstance(entry, TypeEntry) and isinstance(entry.type, BlockT):
                t = entry.type
                if e.args or getattr(t.decl, "ctor_params", None):
                    t = self.specialize(t, e.args, scope, e.pos)
                return Instance(e.func.name, t, None)
        if isinstance(e, ir.Name):
            entry = scope.lookup(e.name)
            if isinstance(entry, Instance) and isinstance(entry.type, BlockT):
                return entry
        raise P4Error.at(
            e.pos, "package arguments must be parser/control instances such as MyIngress()"
        )

    @staticmethod
    def bind_type_params(names: list[str], args: list[Type]) -> dict[str, Type]:
        """Type parameters bound to the type arguments given; the others, and those given as
        `_`, stay open (TypeVar) for inference from the arguments."""
        binding: dict[str, Type] = {n: TypeVar(n) for n in names}
        for n, a in zip(names, args):
            if not isinstance(a, DontCareT):
                binding[n] = a
        return binding

    def type_args_rule(self, e: ir.Call, names: list[str], what: str) -> None:
        if e.targs and len(e.targs) != len(names):
            raise P4Error.at(
                e.pos,
                f"{what} takes {len(names)} type argument(s), got {len(e.targs)}",
            )

    def param_type(self, p: ir.Param, scope: Scope, binding: dict[str, Type]) -> Type:
        ref = p.typeref
        if isinstance(ref, ir.NamedTypeRef) and ref.name in binding:
            return binding[ref.name]
        try:
            return self.resolve_type(ref, self.type_scope(scope, binding) if binding else scope)
        except P4Error:
            return TypeVar(getattr(ref, "name", "?"))

    def parser_decl(self, d: ir.ParserDecl, bound=()) -> None:
        """bound: (name, constant Var or Instance, pos) of the constructor parameters."""
        if d.type_params:
            raise unsupported(d.pos, "generic parser")
        self.frame = Frame()
        self.in_parser = True
        pscope = Scope(self.scope)
        self.params(d.params, pscope, self.frame)
        for name, obj, pos in bound:
            self.declare(pscope, name, obj, pos)
        for p in d.params:
            p.var.block = d
        self.block = d
        for loc in d.locals:
            self.local(loc, pscope)
        d.state_map = {}
        for s in d.states:
            if s.name in d.state_map or s.name in ("accept", "reject"):
                raise P4Error.at(
                    s.pos, f"state '{s.name}' is declared twice (or is a reserved state)"
                )
            d.state_map[s.name] = s
        if "start" not in d.state_map:
            raise P4Error.at(d.pos, f"parser {d.name} has no 'start' state")
        for s in d.states:
            sscope = Scope(pscope)
            for st in s.stmts:
                self.stmt(st, sscope)
            tr = s.transition
            if tr is None:  # spec, "Parser states": no transition statement is `reject`
                tr = s.transition = ir.Transition(s.pos, "reject")
            targets = [tr.state] if tr.state is not None else [c.state for c in tr.cases]
            for tname, pos in zip(targets, [tr.pos] if tr.state else [c.pos for c in tr.cases]):
                if tname not in d.state_map and tname not in ("accept", "reject"):
                    raise P4Error.at(pos, f"transition to unknown state '{tname}'")
            if tr.select is not None:
                types = []
                for e in tr.select:
                    t = self.expr(e, sscope)
                    if not isinstance(t, (Bits, BoolT, EnumT, ErrorT, InfInt)):
                        raise P4Error.at(e.pos, f"cannot select on a value of type {t}")
                    types.append(t)
                for c in tr.cases:
                    if len(c.keyset) == 1 and isinstance(c.keyset[0], ir.Default):
                        continue
                    if self.select_value_set(c, types, sscope):
                        continue
                    if len(c.keyset) != len(types):
                        raise P4Error.at(
                            c.pos,
                            f"select has {len(types)} expression(s) but this case has {len(c.keyset)}",
                        )
                    for k, t in zip(c.keyset, types):
                        self.keyset_element(k, t, sscope)
        if not {"accept", "reject"} & reachable_states(d):
            raise P4Error.at(d.pos, f"parser {d.name} never reaches the accept or reject state")
        d.frame_size = self.frame.size
        self.frame = None
        self.in_parser = False
        self.block = None

    def value_set_decl(self, d: ir.ValueSetDecl, scope: Scope) -> None:
        """value_set<T>(size): T is bit<W> (or a serializable enum, a new type of bit<W>) or
        a struct of such fields, each matched as its @match annotation says (exact when
        absent), as p4c's P4Info describes it."""
        t = self.resolve_type(d.typeref, scope)
        if isinstance(t, HeaderT) and t.kind == "struct":
            annots = getattr(t, "field_annotations", [[] for _ in t.fields])
            members = [(n, ft, a) for (n, ft), a in zip(t.fields, annots)]
        else:
            members = [("", t, [])]
        d.fields = []  # (name, width, match kind)
        for name, ft, annots in members:
            if value_set_width(ft) is None:
                what = f"field {t.name()}.{name}" if name else "element type"
                raise P4Error.at(
                    d.typeref.pos,
                    f"value_set {d.name}: {what} must be bit<W> (or a struct of bit<W> "
                    f"fields), not {ft}",
                )
            match = ir.annotation(annots, "match")
            d.fields.append((name, value_set_width(ft), match.args[0] if match else "exact"))
        d.type = t
        d.size_value = self.const_int(d.size, scope)
        if not 0 < d.size_value <= MAX_TABLE_SIZE:
            raise P4Error.at(
                d.size.pos,
                f"value_set size {d.size_value} must be between 1 and {MAX_TABLE_SIZE:,}",
            )

    def select_value_set(self, c: ir.SelectCase, types: list[Type], scope: Scope) -> bool:
        """A select case whose keyset is a value set: its fields must be as many and as wide
        as the select's expressions."""
        k = c.keyset[0] if len(c.keyset) == 1 else None
        vs = scope.lookup(k.name) if isinstance(k, ir.Name) else None
        if not isinstance(vs, ir.ValueSetDecl):
            return False
        widths = [value_set_width(t) for t in types]
        if widths != [w for _, w, _ in vs.fields]:
            raise P4Error.at(
                k.pos,
                f"value_set {vs.name} holds {vs.type} values, which do not match the select "
                f"expression types ({', '.join(str(t) for t in types)})",
            )
        k.decl = c.value_set = vs
        return True

    def keyset_element(self, k: ir.Expr, t: Type, scope: Scope) -> None:
        if isinstance(k, ir.Default):
            return
        parts = (
            [k.value, k.mask]
            if isinstance(k, ir.Mask)
            else [k.low, k.high] if isinstance(k, ir.Range) else [k]
        )
        for p in parts:
            pt = t
            if isinstance(k, ir.Mask) and p is k.mask and isinstance(t, EnumT) and t.underlying:
                pt = t.underlying  # a mask on a serializable enum is a plain bit string (p4c)
            self.expr(p, scope, pt)
            self.coerce(p, pt)
            if p.const is None:
                raise P4Error.at(p.pos, "select keysets must be compile-time constants")

    def control_decl(self, d: ir.ControlDecl, bound=()) -> None:
        """bound: (name, constant Var or Instance, pos) of the constructor parameters."""
        if d.type_params:
            raise unsupported(d.pos, "generic control")
        self.frame = Frame()
        cscope = Scope(self.scope)
        self.params(d.params, cscope, self.frame)
        for name, obj, pos in bound:
            self.declare(cscope, name, obj, pos)
        for p in d.params:
            p.var.block = d
        d.tables = []
        d.instances = []
        d.local_actions = []
        self.block = d
        for loc in d.locals:
            self.local(loc, cscope, d)
        self.stmt(d.body, cscope)
        d.frame_size = self.frame.size
        self.frame = None
        self.block = None

    def local(self, loc, scope: Scope, control: ir.ControlDecl | None = None) -> None:
        if isinstance(loc, ir.ConstDecl):
            self.declaration(loc, scope)
        elif isinstance(loc, ir.VarDecl):
            self.stmt(loc, scope)
        elif isinstance(loc, ir.Instantiation):
            inst = self.instantiation(loc, scope)
            if isinstance(inst.type, BlockT) and inst.type.decl is self.block:
                raise P4Error.at(
                    loc.pos, f"{loc.name}: {self.block.name} cannot instantiate itself"
                )
            loc.instance = inst
            self.declare(scope, loc.name, inst, loc.pos)
            if control is not None:
                control.instances.append(inst)
        elif isinstance(loc, ir.ValueSetDecl):
            if not self.in_parser:
                raise P4Error.at(loc.pos, f"value_set {loc.name}: value sets belong in parsers")
            self.value_set_decl(loc, scope)
            self.declare(scope, loc.name, loc, loc.pos)
        elif isinstance(loc, ir.ActionDecl):
            self.action_decl(loc, scope)
            control.local_actions.append(loc)
        elif isinstance(loc, ir.TableDecl):
            self.table_decl(loc, scope)
            self.declare(scope, loc.name, loc, loc.pos)
            control.tables.append(loc)
        else:
            raise unsupported(getattr(loc, "pos", None), type(loc).__name__)

    # -- tables -----------------------------------------------------------------------
    def table_decl(self, t: ir.TableDecl, scope: Scope) -> None:
        t.keys, t.action_refs, t.default, t.size, t.entries = [], [], None, 1024, None
        t.const_default = False
        t.direct_counter = t.direct_meter = None
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
        for k in props["key"].value if "key" in props else []:
            kt = self.expr(k.expr, scope)
            if not self.simple_key(k.expr) and ir.annotation(k.annotations, "name") is None:
                # p4c names a key after its expression only for these forms (P4Runtime)
                raise P4Error.at(
                    k.pos,
                    "a key expression other than a field, slice, index, mask or isValid() "
                    "needs a @name annotation (the control plane's name for it)",
                )
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
        if "size" in props:
            t.size = self.const_int(props["size"].value, scope)
            if not 0 <= t.size <= MAX_TABLE_SIZE:
                raise P4Error.at(
                    props["size"].value.pos,
                    f"table size {t.size} must be between 0 and {MAX_TABLE_SIZE:,} (p4sim's limit)",
                )
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
                if not (
                    isinstance(inst, Instance)
                    and isinstance(inst.type, ExternT)
                    and inst.type.decl.name == want
                ):
                    raise P4Error.at(e.pos, f"'{e.name}' is not a {want} instance")
                if pname == "counters":
                    t.direct_counter = inst
                else:
                    t.direct_meter = inst
                inst.table = t
        if "implementation" in props:
            t.implementation = self.table_implementation(t, props["implementation"], scope)
            if "entries" in props:
                raise P4Error.at(
                    props["entries"].pos,
                    f"table {t.name} has an implementation (action profile/selector): its "
                    f"entries come from the control plane, 'entries' cannot be given",
                )
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

    # -- statements -------------------------------------------------------------------
    def stmt(self, s: ir.Stmt, scope: Scope) -> None:
        if isinstance(s, ir.Block):
            inner = Scope(scope)
            for st in s.stmts:
                self.stmt(st, inner)
        elif isinstance(s, ir.Assign):
            lt = self.expr(s.lhs, scope)
            self.check_lvalue(s.lhs)
            self.expr(s.rhs, scope, lt)
            self.coerce(s.rhs, lt)
        elif isinstance(s, ir.CallStmt):
            self.expr(s.call, scope)
        elif isinstance(s, ir.If):
            self.condition(s.cond, scope)
            self.stmt(s.then, Scope(scope))
            if s.other is not None:
                self.stmt(s.other, Scope(scope))
        elif isinstance(s, ir.VarDecl):
            t = self.resolve_type(s.typeref, scope)
            if isinstance(t, (ExternT, BlockT, VoidT)) or (
                isinstance(t, InfInt) and not s.is_const  # `const int c = 1;` is fine
            ):
                raise P4Error.at(s.pos, f"cannot declare a variable of type {t}")
            s.var_type = t
            if s.init is not None:
                self.expr(s.init, scope, t)
                self.coerce(s.init, t)
            if s.is_const:
                if s.init is None or s.init.const is None:
                    raise P4Error.at(
                        s.pos, f"constant '{s.name}' needs a compile-time constant value"
                    )
                var = Var(s.name, t, "const", None, s.init.const, s.pos)
            else:
                var = Var(s.name, t, "local", self.frame.alloc(), None, s.pos)
                var.init = s.init.const if s.init is not None else None
            s.var = var
            self.declare(scope, s.name, var, s.pos)
        elif isinstance(s, ir.Switch):
            t = self.expr(s.expr, scope)
            if self.action is not None:
                self.target_checks.append((self.switch_in_action, (self.action, s), self.block))
            if not isinstance(t, ActionEnumT) and s.cases:  # p4c drops a switch without cases
                self.target_checks.append((self.switch_needs_exact, s, self.block))
            seen: dict = {}  # label (action or constant value) -> its first position
            default_seen = False
            for c in s.cases:
                for label in c.labels:
                    # P4_16 spec, "Switch statement": labels are unique and `default`
                    # comes once, last.
                    if default_seen:
                        raise P4Error.at(
                            (label or c).pos, "no switch label may follow the 'default' label"
                        )
                    if label is None:
                        default_seen = True
                        continue
                    if isinstance(t, ActionEnumT):
                        names = {r.decl.name: r.decl for r in t.table.action_refs}
                        if not isinstance(label, ir.Name) or label.name not in names:
                            raise P4Error.at(
                                label.pos,
                                f"switch label must be an action of table {t.table.name} ({', '.join(names)})",
                            )
                        label.decl = names[label.name]
                        key = label.name
                    else:
                        if not isinstance(t, (Bits, EnumT, ErrorT)):
                            raise P4Error.at(s.expr.pos, f"cannot switch on a value of type {t}")
                        self.expr(label, scope, t)
                        self.coerce(label, t)
                        if label.const is None:
                            raise P4Error.at(
                                label.pos, "switch labels must be compile-time constants"
                            )
                        key = label.const
                    if key in seen:
                        raise P4Error.at(label.pos, "duplicate switch label")
                    seen[key] = label.pos
                if c.body is not None:
                    self.stmt(c.body, scope)
            if s.cases and s.cases[-1].body is None:
                raise P4Error.at(s.cases[-1].pos, "the last switch case needs a block")
        elif isinstance(s, ir.Return):
            if self.in_parser and not self.in_action and self.return_type is None:
                raise P4Error.at(s.pos, "return is not allowed in a parser state (p4c's grammar)")
            if s.value is not None:
                if self.return_type is None or isinstance(self.return_type, VoidT):
                    raise P4Error.at(
                        s.pos, "return with a value outside a function returning a value"
                    )
                self.expr(s.value, scope, self.return_type)
                self.coerce(s.value, self.return_type)
            elif self.return_type is not None and not isinstance(self.return_type, VoidT):
                raise P4Error.at(
                    s.pos, f"this function must return a value of type {self.return_type}"
                )
        elif isinstance(s, (ir.Exit, ir.Empty)):
            pass
        elif isinstance(s, ir.For):
            inner = Scope(scope)
            for st in s.init:
                self.stmt(st, inner)
            if s.cond is not None:
                self.condition(s.cond, inner)
            self.loop_depth += 1
            try:
                self.stmt(s.body, Scope(inner))
            finally:
                self.loop_depth -= 1
            for st in s.update:
                self.stmt(st, inner)
        elif isinstance(s, (ir.Break, ir.Continue)):
            if not self.loop_depth:
                kw = "break" if isinstance(s, ir.Break) else "continue"
                raise P4Error.at(s.pos, f"'{kw}' outside a for loop")
        else:
            raise unsupported(s.pos, type(s).__name__)

    def condition(self, e: ir.Expr, scope: Scope) -> None:
        t = self.expr(e, scope, BoolT())
        if not isinstance(t, BoolT) or is_newtype(t):
            raise P4Error.at(e.pos, f"condition must be bool, not {t}")

    def check_lvalue(self, e: ir.Expr) -> None:
        base = e
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            if isinstance(base, ir.Index) and isinstance(base.expr.type, TupleT):
                raise unsupported(base.pos, "assignment to a tuple element")
            if (
                isinstance(base, ir.Member)
                and isinstance(base.expr.type, StackT)
                and base.name in ("lastIndex", "size")
            ):
                break
            base = base.expr
        if (
            isinstance(base, ir.Name)
            and isinstance(base.decl, Var)
            and base.decl.direction not in ("const", "in")
        ):
            if isinstance(base.decl.type, (ExternT,)):
                raise P4Error.at(e.pos, "cannot assign to an extern object")
            base.decl.assigned = True
            return
        if isinstance(base, ir.Name) and isinstance(base.decl, Var) and base.decl.direction == "in":
            raise P4Error.at(e.pos, f"cannot assign to '{base.name}': it is an 'in' parameter")
        raise P4Error.at(
            e.pos,
            "expression is not assignable (expected a variable, field, stack element or slice)",
        )

    @staticmethod
    def check_extern_size(kind: str, size: ir.Expr) -> None:
        """Before the value is converted to the parameter's bit<32> (which would wrap it) and
        before any storage exists (allocated on first use anyway)."""
        if isinstance(size.const, int) and not 0 < size.const <= MAX_EXTERN_SIZE:
            raise P4Error.at(
                size.pos,
                f"{kind} size {size.const} must be between 1 and {MAX_EXTERN_SIZE:,} "
                "(p4sim's limit)",
            )

    # -- expressions ------------------------------------------------------------------
    def coerce(self, e: ir.Expr, target: Type) -> None:
        """Implicit conversions: untyped integer literals to bit<W>/int<W>; lists to
        headers/structs/tuples. Anything else must already have the target type."""
        t = e.type
        if isinstance(target, (TypeVar, DontCareT)) or same_stack(t, target):
            return
        if isinstance(t, InfInt) and isinstance(target, Bits):
            e.type = target
            e.const = target.wrap(e.const) if e.const is not None else None
            return
        if isinstance(t, InfInt) and isinstance(target, EnumT) and target.underlying is not None:
            raise P4Error.at(e.pos, f"an integer needs an explicit cast to {target}")
        if isinstance(t, EnumT) and t.underlying is not None and t.underlying == target:
            e.type = target  # spec 8.12.2: implicit cast to the underlying type
            return
        if isinstance(target, (HeaderT, TupleT)) and isinstance(e, (ir.ListExpr, ir.StructInit)):
            self.list_to(e, target)
            return
        if isinstance(t, (ErrorT, MatchKindT)) and type(t) is type(target):
            return
        if isinstance(t, ExternT) and isinstance(target, ExternT) and t.decl is target.decl:
            return
        if t == target and isinstance(t, (Bits, BoolT, StringT, InfInt, Varbit)):
            return
        if isinstance(t, Bits) and isinstance(target, Bits):
            raise P4Error.at(
                e.pos, f"expected a value of type {target}, got {t} (cast it: ({target})(...))"
            )
        raise P4Error.at(e.pos, f"expected a value of type {target}, got {t}")

    def list_to(self, e: ir.Expr, target: Type) -> None:
        if isinstance(target, TupleT):
            if not isinstance(e, ir.ListExpr) or len(e.items) != len(target.items):
                raise P4Error.at(e.pos, f"expected {len(target.items)} items for {target}")
            for item, it in zip(e.items, target.items):
                self.coerce(item, it)
            e.type = target
            return
        if isinstance(e, ir.ListExpr):
            if len(e.items) != len(target.fields):
                raise P4Error.at(
                    e.pos,
                    f"{target} has {len(target.fields)} fields, the list has {len(e.items)} items",
                )
            for item, (_, ft) in zip(e.items, target.fields):
                self.coerce(item, ft)
            e.order = list(range(len(e.items)))
        else:
            names = [n for n, _ in e.fields]
            if sorted(names) != sorted(n for n, _ in target.fields):
                raise P4Error.at(
                    e.pos,
                    f"initializer for {target} must set exactly its fields: {', '.join(n for n, _ in target.fields)}",
                )
            for n, item in e.fields:
                self.coerce(item, target.field_type(n))
        e.type = target
        e.const = None

    def expr(self, e: ir.Expr, scope: Scope, expected: Type | None = None) -> Type:
        t = self._expr(e, scope, expected)
        e.type = t
        return t

    def _expr(self, e: ir.Expr, scope: Scope, expected: Type | None) -> Type:
        if isinstance(e, ir.IntLit):
            if e.width is None:
                e.const = e.value
                return InfInt()
            if e.width == 0 and e.signed:
                raise P4Error.at(e.pos, "a signed literal needs a width of at least 1 (int<0>)")
            t = Bits(e.width, e.signed)
            e.const = t.wrap(e.value)
            return t
        if isinstance(e, ir.BoolLit):
            e.const = e.value
            return BoolT()
        if isinstance(e, ir.StrLit):
            e.const = e.value
            return StringT()
        if isinstance(e, ir.Name):
            return self.name(e, scope)
        if isinstance(e, ir.Member):
            return self.member(e, scope)
        if isinstance(e, ir.Index):
            bt = self.expr(e.expr, scope)
            it = self.expr(e.index, scope)
            if isinstance(bt, TupleT):  # spec 8.11: a compile-time constant index
                if e.index.const is None or not 0 <= e.index.const < len(bt.items):
                    raise P4Error.at(
                        e.index.pos,
                        f"a tuple index must be a constant in 0..{len(bt.items) - 1}",
                    )
                return bt.items[e.index.const]
            if not isinstance(bt, StackT):
                raise P4Error.at(e.pos, f"cannot index a value of type {bt}")
            if not isinstance(it, (Bits, InfInt)):
                raise P4Error.at(e.index.pos, "stack index must be an integer")
            if e.index.const is not None and not 0 <= e.index.const < bt.size:
                raise P4Error.at(e.index.pos, f"index {e.index.const} out of range for {bt}")
            if (
                bt.elem.kind == "header_union"
                and e.index.const is None
                and not (self.loop_depth or self.return_type)  # p4c may unroll or inline
            ):
                self.target_checks.append((self.union_stack_index, e, self.block))
            return bt.elem
        if isinstance(e, ir.Slice):
            bt = self.expr(e.expr, scope)
            if isinstance(bt, InfInt) and e.expr.const is not None:
                bt = Bits(max(e.expr.const.bit_length(), 1) + 1)
            if not isinstance(bt, Bits) or is_newtype(bt):
                raise P4Error.at(e.pos, f"cannot slice a value of type {bt}")
            hi, lo = self.const_int(e.hi, scope), self.const_int(e.lo, scope)
            if not (0 <= lo <= hi < bt.width):
                raise P4Error.at(e.pos, f"slice [{hi}:{lo}] out of range for {bt}")
            t = Bits(hi - lo + 1)
            if e.expr.const is not None:
                e.const = (e.expr.const >> lo) & ((1 << (hi - lo + 1)) - 1)
            return t
        if isinstance(e, ir.Unary):
            return self.unary(e, scope, expected)
        if isinstance(e, ir.Binary):
            return self.binary(e, scope, expected)
        if isinstance(e, ir.Ternary):
            self.condition(e.cond, scope)
            self.expr(e.then, scope, expected)
            self.expr(e.other, scope, expected)
            t = self.unify(e.then, e.other, e.pos, "?:")
            if isinstance(t, InfInt) and expected is not None and isinstance(expected, Bits):
                self.coerce(e.then, expected)
                self.coerce(e.other, expected)
                t = expected
            if e.cond.const is not None and e.then.const is not None and e.other.const is not None:
                e.const = e.then.const if e.cond.const else e.other.const
            return t
        if isinstance(e, ir.Cast):
            return self.cast(e, scope)
        if isinstance(e, ir.Call):
            return self.call(e, scope)
        if isinstance(e, ir.ListExpr):
            hint = expected if isinstance(expected, TupleT) else None
            items = []
            for i, item in enumerate(e.items):
                items.append(
                    self.expr(item, scope, hint.items[i] if hint and i < len(hint.items) else None)
                )
            if isinstance(expected, (HeaderT, TupleT)):
                t = TupleT(items)
                e.type = t
                self.list_to(e, expected)
                return expected
            return TupleT(items)
        if isinstance(e, ir.StructInit):
            if not isinstance(expected, HeaderT):
                raise P4Error.at(
                    e.pos,
                    "a {field = value} initializer needs a struct or header type from context",
                )
            for n, item in e.fields:
                ft = expected.field_type(n)
                if ft is None:
                    raise P4Error.at(item.pos, f"{expected} has no field '{n}'")
                self.expr(item, scope, ft)
            self.list_to(e, expected)
            return expected
        if isinstance(e, ir.TypeExpr):
            raise P4Error.at(e.pos, "a type is not a value here")
        if isinstance(e, (ir.Mask, ir.Range, ir.Default)):
            raise P4Error.at(e.pos, "keyset expression outside a select case or table entry")
        raise unsupported(e.pos, type(e).__name__)

    def name(self, e: ir.Name, scope: Scope) -> Type:
        if e.name == "error":
            e.decl = TypeEntry(self.error_type)
            return self.error_type
        d = self.scope.lookup(e.name) if e.absolute else scope.lookup(e.name)
        if d is None:
            if e.name == "list":
                raise unsupported(e.pos, "the list<T> type")
            raise P4Error.at(e.pos, f"'{e.name}' is not declared")
        e.decl = d
        if isinstance(d, Var):
            if d.direction == "const":
                e.const = d.const
            return d.type
        if isinstance(d, Instance):
            return d.type
        if isinstance(d, TypeEntry):
            return d.type
        if isinstance(d, ir.TableDecl):
            return TableT(d)
        if isinstance(d, (ir.ActionDecl, Overloads)):
            return VoidT()
        raise P4Error.at(e.pos, f"'{e.name}' cannot be used here")

    def member(self, e: ir.Member, scope: Scope) -> Type:
        base = e.expr
        bt = self.expr(base, scope)
        if isinstance(base, ir.Name) and isinstance(base.decl, TypeEntry):
            if isinstance(bt, ErrorT):
                if e.name not in bt.members:
                    raise P4Error.at(
                        e.pos, f"error.{e.name} is not declared (declared: {', '.join(bt.members)})"
                    )
                e.const = bt.members[e.name]
                return bt
            if isinstance(bt, EnumT):
                if e.name not in bt.values:
                    raise P4Error.at(
                        e.pos,
                        f"{bt.enum_name} has no member '{e.name}' (members: {', '.join(bt.members)})",
                    )
                e.const = bt.values[e.name]
                return bt
            raise P4Error.at(e.pos, f"type {bt} has no member '{e.name}'")
        if isinstance(bt, HeaderT):
            ft = bt.field_type(e.name)
            if ft is None:
                if bt.kind == "header" and e.name in ("isValid", "setValid", "setInvalid"):
                    return VoidT()  # resolved by call()
                if bt.kind == "header_union" and e.name == "isValid":
                    return VoidT()  # resolved by call()
                if e.name in SIZE_METHODS:
                    return VoidT()  # resolved by call()
                raise P4Error.at(e.pos, f"{bt.kind} {bt.type_name} has no field '{e.name}'")
            return ft
        if isinstance(bt, StackT):
            if e.name in ("next", "last", "lastIndex") and not self.in_parser:
                raise P4Error.at(
                    e.pos,
                    f"stack '{e.name}' can only be used in a parser (P4_16 spec, Header stacks)",
                )
            if e.name in ("next", "last"):
                return bt.elem
            if e.name in ("lastIndex", "size"):
                if e.name == "size":
                    e.const = bt.size
                return Bits(32)
            if e.name in ("push_front", "pop_front"):
                return VoidT()
            raise P4Error.at(
                e.pos,
                f"header stack has no member '{e.name}' (next, last, lastIndex, size, push_front, pop_front)",
            )
        if isinstance(bt, ApplyResultT):
            if e.name in ("hit", "miss"):
                return BoolT()
            if e.name == "action_run":
                return ActionEnumT(bt.table)
            raise P4Error.at(
                e.pos, f"table apply result has no member '{e.name}' (hit, miss, action_run)"
            )
        if isinstance(bt, (ExternT, TableT, BlockT)):
            return VoidT()  # a method: resolved by call()
        raise P4Error.at(e.pos, f"a value of type {bt} has no member '{e.name}'")

    @staticmethod
    def enum_as_bits(e: ir.Expr) -> Type:
        """The type of e, with a serializable enum replaced by its underlying bit<W> (the
        run-time value already is that integer)."""
        if isinstance(e.type, EnumT) and e.type.underlying is not None:
            e.type = e.type.underlying
        return e.type

    def unify(self, a: ir.Expr, b: ir.Expr, pos, op: str) -> Type:
        ta, tb = a.type, b.type
        if isinstance(ta, InfInt) and isinstance(tb, Bits):
            self.coerce(a, tb)
            return tb
        if isinstance(tb, InfInt) and isinstance(ta, Bits):
            self.coerce(b, ta)
            return ta
        if isinstance(ta, InfInt) and isinstance(tb, InfInt):
            return ta
        if ta == tb and isinstance(ta, (Bits, BoolT, Varbit)):
            return ta
        if same_stack(ta, tb):
            return ta
        if isinstance(ta, ErrorT) and isinstance(tb, ErrorT):
            return ta
        raise P4Error.at(
            pos, f"operands of '{op}' have different types: {ta} and {tb} (cast one of them)"
        )

    def unary(self, e: ir.Unary, scope: Scope, expected) -> Type:
        t = self.expr(e.expr, scope, expected if e.op != "!" else None)
        self.newtype_rule(e.op, e.expr, e.pos)
        c = e.expr.const
        if e.op == "!":
            if not isinstance(t, BoolT):
                raise P4Error.at(e.pos, f"'!' needs a bool operand, got {t}")
            e.const = None if c is None else not c
            return t
        if not isinstance(t, (Bits, InfInt)):
            raise P4Error.at(e.pos, f"'{e.op}' needs an integer operand, got {t}")
        if c is not None:
            if e.op == "-":
                e.const = t.wrap(-c) if isinstance(t, Bits) else -c
            elif e.op == "~":
                if isinstance(t, InfInt):
                    raise P4Error.at(e.pos, "'~' needs an operand with a width (e.g. 8w5)")
                e.const = t.wrap(~c)
            else:
                e.const = c
        elif e.op == "~" and isinstance(t, InfInt):
            raise P4Error.at(e.pos, "'~' needs an operand with a width")
        return t

    def binary(self, e: ir.Binary, scope: Scope, expected) -> Type:
        op = e.op
        if op in ("&&", "||"):
            self.condition(e.left, scope)
            self.condition(e.right, scope)
            a, b = e.left.const, e.right.const
            if a is not None and b is not None:
                e.const = (a and b) if op == "&&" else (a or b)
            return BoolT()
        hint = expected if op in ARITH or op in ("<<", ">>") else None
        lt = self.expr(e.left, scope, hint)
        rt = self.expr(e.right, scope, hint if op not in ("<<", ">>") else None)
        if not (op in ("==", "!=") and lt == rt):  # a `type` compares with its own type
            self.newtype_rule(op, e.right if is_newtype(rt) else e.left, e.pos)
        # Spec 8.12.2: a serializable enum converts implicitly to its underlying type in
        # arithmetic, shifts, concatenation and comparisons with other values (two values
        # of the same enum type compare as they are).
        if not (op in ("==", "!=") and isinstance(lt, EnumT) and lt is rt):
            lt, rt = self.enum_as_bits(e.left), self.enum_as_bits(e.right)
        if op in ("<<", ">>"):
            if isinstance(rt, Bits) and rt.signed:
                raise P4Error.at(e.right.pos, "shift amount must be unsigned")
            if not isinstance(rt, (Bits, InfInt)) or not isinstance(lt, (Bits, InfInt)):
                raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {lt} and {rt}")
            if isinstance(lt, InfInt) and e.right.const is None:
                raise P4Error.at(
                    e.left.pos,
                    "the left operand of a shift by a non-constant needs a width (e.g. 32w1)",
                )
            if isinstance(rt, InfInt) and e.right.const is not None and e.right.const < 0:
                raise P4Error.at(e.right.pos, "shift amount must not be negative")
            if e.left.const is not None and e.right.const is not None:
                if e.right.const > MAX_CONST_SHIFT:
                    raise P4Error.at(
                        e.pos,
                        f"constant shift by {e.right.const}: p4c folds shifts of constants "
                        f"by at most {MAX_CONST_SHIFT} bits",
                    )
                e.const = (
                    fold(op, e.left.const, e.right.const, lt, e.pos)
                    if e.right.const < 4096 or isinstance(lt, Bits)
                    else 0
                )
                if isinstance(lt, Bits) and e.right.const >= lt.width:
                    e.const = (-1 if e.left.const < 0 and op == ">>" else 0) if lt.signed else 0
                    e.const = lt.wrap(e.const)
            return lt
        if op == "++":
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, Bits):
                    raise P4Error.at(
                        side.pos, f"'++' needs operands with a width (bit<W>/int<W>), got {st}"
                    )
            t = Bits(lt.width + rt.width, lt.signed)
            if e.left.const is not None and e.right.const is not None:
                r = ((e.left.const & ((1 << lt.width) - 1)) << rt.width) | (
                    e.right.const & ((1 << rt.width) - 1)
                )
                e.const = t.wrap(r)
            return t
        if op in ("/", "%"):
            for side, st in ((e.left, lt), (e.right, rt)):
                if isinstance(st, InfInt) and side.const is not None and side.const < 0:
                    raise P4Error.at(
                        e.pos, f"'{op}' is not defined on negative numbers ({side.const})"
                    )
        if op in COMPARE and ExternT in (type(lt), type(rt)):
            raise P4Error.at(e.pos, f"extern objects cannot be compared ('{op}' on {lt})")
        t = self.unify(e.left, e.right, e.pos, op)
        if op in COMPARE:
            if op not in ("==", "!=") and not isinstance(t, (Bits, InfInt)):
                raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {t}")
            if not isinstance(t, (Bits, InfInt, BoolT, EnumT, ErrorT, Varbit, HeaderT, StackT)):
                raise unsupported(e.pos, f"comparison of {t} values")
            a, b = e.left.const, e.right.const
            if a is not None and b is not None:
                e.const = {
                    "==": a == b,
                    "!=": a != b,
                    "<": a < b,
                    ">": a > b,
                    "<=": a <= b,
                    ">=": a >= b,
                }[op]
            return BoolT()
        if not isinstance(t, (Bits, InfInt)):
            raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {t}")
        if op in ("/", "%"):
            if isinstance(t, Bits) and t.signed:
                raise P4Error.at(e.pos, f"'{op}' is not defined on signed values ({t})")
            if e.right.const is not None and e.right.const <= 0:
                raise P4Error.at(e.right.pos, f"'{op}' by {e.right.const}")
        a, b = e.left.const, e.right.const
        if a is not None and b is not None:
            e.const = fold(op, a, b, t, e.pos)
        elif op in ("/", "%") and a != 0:
            self.target_checks.append((self.run_time_division, e, self.block))
        return t

    def live_blocks(self) -> set:
        """The parsers and controls main runs: its arguments and what they instantiate."""
        live, todo = set(), [a.type.decl for a in self.main.ctor_args]
        while todo:
            d = todo.pop()
            if d in live:
                continue
            live.add(d)
            for loc in getattr(d, "locals", ()):  # a package argument has none
                inst = getattr(loc, "instance", None)
                if inst is not None and isinstance(inst.type, BlockT):
                    todo.append(inst.type.decl)
            todo += [inst.type.decl for inst in getattr(d, "bound_instances", ())]
        return live

    def known_value(self, e: ir.Expr):
        """The value of `e` as p4c's optimisations see it: a constant, or a local never
        written after its constant initializer (copy propagation); else None."""
        if e.const is not None:
            return e.const
        var = e.decl if isinstance(e, ir.Name) else None
        if isinstance(var, Var) and var.init is not None and not var.assigned:
            return var.init
        return None

    def run_time_value(self, e: ir.Expr) -> bool:
        """Whether `e` is read from the apply parameters of a block (the packet and its
        metadata), which no optimisation of p4c makes constant."""
        while isinstance(e, (ir.Member, ir.Index, ir.Slice)):
            e = e.expr
        return isinstance(e, ir.Name) and getattr(e.decl, "block", None) is not None

    def switch_in_action(self, node) -> None:
        action, s = node
        if getattr(action, "used", False):  # p4c drops unused actions first
            raise P4Error.at(
                s.pos,
                f"BMv2 (p4c-bm2-ss) does not support switch statements in actions "
                f"({action.name}); use if/else, or switch in the control's apply block",
            )

    def switch_needs_exact(self, s: ir.Switch) -> None:
        if "exact" not in self.match_kinds.members:  # p4c makes it a table with an exact key
            raise P4Error.at(
                s.pos, "a switch on a value needs match_kind 'exact': #include <core.p4>"
            )

    def union_stack_index(self, e: ir.Index) -> None:
        if self.known_value(e.index) is None and self.run_time_value(e.index):
            raise P4Error.at(
                e.index.pos,
                f"BMv2 (p4c-bm2-ss) does not support a run-time index into a stack of "
                f"header unions ({e.expr.type}): use a constant index",
            )

    def run_time_division(self, e: ir.Binary) -> None:
        """p4c (every back end, BMv2's too) keeps `/` and `%` of a run-time value only when
        its optimisations turn the divisor into a power-of-two constant (a shift or a mask);
        it rejects the rest. The divisor is judged where p4c could not make it anything
        else: a constant, a local never written after its constant initializer, or read
        from the apply parameters of a block of main (the packet and its metadata)."""
        value = self.known_value(e.right)
        if value is None and not self.run_time_value(e.right):
            return  # p4c may still fold it (inlining, copy propagation): not ours to judge
        if value is None or value & (value - 1):
            raise P4Error.at(
                e.pos,
                f"'{e.op}' of a run-time value needs a constant power-of-two divisor: p4c "
                f"(p4c-bm2-ss too) computes / and % only at compile time, or as a shift or a mask",
            )

    @staticmethod
    def newtype_rule(op: str, operand: ir.Expr, pos) -> None:
        """Spec, "Introducing new types": a value of a `type` is assigned, compared with ==
        and != to its own type, and cast; every other operator needs a cast to the base type
        first."""
        t = operand.type
        if is_newtype(t):
            raise P4Error.at(
                operand.pos,
                f"'{op}' cannot take a value of type {t}, a 'type' over {base_type(t)}: cast "
                f"it first, ({base_type(t)})(...)",
            )

    def cast(self, e: ir.Cast, scope: Scope) -> Type:
        to = self.resolve_type(e.to, scope)
        ft = self.expr(e.expr, scope, to if isinstance(to, HeaderT) else None)
        c = e.expr.const
        if is_newtype(to) or is_newtype(ft):
            # spec, "Introducing new types": a `type` converts to and from its base type
            # (and other `type`s over it) only; an integer literal converts to a `type`
            # over bit<W>/int<W>
            literal = isinstance(ft, InfInt) and isinstance(to, Bits)
            if not (literal or base_type(ft) == base_type(to)):
                raise P4Error.at(
                    e.pos,
                    f"cannot cast {ft} to {to}: a 'type' casts only to and from its base "
                    f"type ({base_type(to if is_newtype(to) else ft)})",
                )
            if c is not None:
                e.const = to.wrap(c) if isinstance(to, Bits) else c
            return to
        ok = False
        if isinstance(to, Bits):
            if isinstance(ft, (Bits, InfInt)):
                ok = True
                if c is not None:
                    e.const = to.wrap(c)
            elif isinstance(ft, BoolT) and to.width == 1 and not to.signed:
                ok = True
                if c is not None:
                    e.const = int(c)
            elif isinstance(ft, EnumT) and ft.underlying is not None:
                ok = True
                if c is not None:
                    e.const = to.wrap(c)
        elif isinstance(to, BoolT):
            if (isinstance(ft, Bits) and ft.width == 1 and not ft.signed) or isinstance(ft, BoolT):
                ok = True
                if c is not None:
                    e.const = bool(c)
            elif isinstance(ft, InfInt) and c in (0, 1):
                ok = True
                e.const = bool(c)
        elif isinstance(to, EnumT) and to.underlying is not None:
            if isinstance(ft, (Bits, InfInt)) or ft is to:
                ok = True
                if c is not None:
                    e.const = to.underlying.wrap(c)
        elif isinstance(to, HeaderT) and ft is to:
            ok = True
        elif ft is to or ft == to:
            ok = True
            e.const = c
        if not ok:
            raise P4Error.at(e.pos, f"cannot cast {ft} to {to}")
        return to

    # -- calls ------------------------------------------------------------------------
    def call(self, e: ir.Call, scope: Scope) -> Type:
        f = e.func
        targs = [self.resolve_type(t, scope) for t in e.type_args]
        e.targs = targs
        if isinstance(f, ir.Member):
            bt = self.expr(f.expr, scope)
            m = f.name
            if isinstance(bt, HeaderT) and m in SIZE_METHODS:
                # spec 8.9: compile-time sizes of the serialised header/struct
                if bt.kind == "header_union":
                    raise unsupported(e.pos, f"{m}() of a header union")
                self.no_args(e, 0)
                e.kind, e.target = "size_method", m
                e.const = serialized_size(bt, m)
                return InfInt()
            if isinstance(bt, HeaderT) and bt.kind == "header_union" and m == "isValid":
                self.no_args(e, 0)
                e.kind, e.target = "header_method", m
                return BoolT()
            if (
                isinstance(bt, HeaderT)
                and bt.kind == "header"
                and m in ("isValid", "setValid", "setInvalid")
            ):
                self.no_args(e, 0)
                e.kind, e.target = "header_method", m
                return BoolT() if m == "isValid" else VoidT()
            if isinstance(bt, StackT) and m in ("push_front", "pop_front"):
                self.no_args(e, 1)
                e.count = self.const_int(e.args[0].value, scope)
                e.kind, e.target = "stack_method", m
                return VoidT()
            if isinstance(bt, TableT) and m == "apply":
                self.no_args(e, 0)
                e.kind, e.target = "table_apply", bt.decl
                if self.in_action:
                    raise P4Error.at(e.pos, "tables cannot be applied inside actions")
                return ApplyResultT(bt.decl)
            if isinstance(bt, BlockT) and m == "apply":
                if isinstance(f.expr, ir.Name) and isinstance(f.expr.decl, TypeEntry):
                    f.expr.decl = self.direct_instance(f.expr, bt)
                inst = f.expr.decl
                decl = bt.decl
                want = ir.ParserDecl if self.in_parser else ir.ControlDecl
                if not isinstance(decl, want) or not isinstance(inst, Instance):
                    where = "a parser" if self.in_parser else "a control"
                    raise P4Error.at(
                        e.pos,
                        f"{where} can only apply {'parser' if self.in_parser else 'control'} instances",
                    )
                if self.in_action:
                    raise P4Error.at(e.pos, "controls cannot be applied inside actions")
                e.kind, e.target = "block_apply", inst
                self.bind_args(e, decl.params, scope, {}, decl.name)
                return VoidT()
            if isinstance(bt, ExternT):
                return self.extern_method(e, bt, m, scope)
            raise P4Error.at(f.pos, f"{bt} has no method '{m}'")
        if isinstance(f, ir.Name):
            d = self.scope.lookup(f.name) if f.absolute else scope.lookup(f.name)
            if d is None:
                if f.name == "static_assert":  # declared by p4c's core.p4 (2023), not ours
                    return self.static_assert(e, scope)
                raise P4Error.at(f.pos, f"'{f.name}' is not declared")
            f.decl = d
            if isinstance(d, ir.ActionDecl):
                if e.type_args:
                    raise P4Error.at(
                        e.pos, f"action {d.name} is not generic: a call takes no type arguments"
                    )
                if self.in_parser and not self.in_action:
                    raise P4Error.at(e.pos, f"action {d.name} cannot be called from a parser")
                if self.return_type is not None:
                    raise P4Error.at(e.pos, f"action {d.name} cannot be called from a function")
                e.kind, e.target = "action", d
                d.used = True
                self.bind_args(e, d.params, scope, {}, d.name)
                return VoidT()
            if isinstance(d, Overloads):
                cands = [c for c in d.decls if self.arity_ok(c.params, e.args)]
                if not cands:
                    raise P4Error.at(
                        e.pos, f"no overload of '{f.name}' takes {len(e.args)} argument(s)"
                    )
                decl = cands[0]
                self.type_args_rule(e, decl.type_params, f.name)
                binding = self.bind_type_params(decl.type_params, targs)
                e.kind = "function" if isinstance(decl, ir.FunctionDecl) else "extern_func"
                e.target = decl
                if e.kind == "extern_func" and f.name != "verify":
                    self.extern_functions.add(f.name)  # (p4c's P4Info ignores verify)
                if f.name == "verify" and not self.in_parser:
                    raise P4Error.at(e.pos, "verify() can only be called in a parser")
                self.bind_args(e, decl.params, scope, binding, f.name)
                if e.kind == "extern_func":
                    self.target_checks.append((nested_struct_out, e, self.block))
                if f.name == "digest" and len(e.args) == 2 and e.args[1].value is not None:
                    self.digest_types.append(e.args[1].value.type)
                ret = (
                    decl.ret_type
                    if isinstance(decl, ir.FunctionDecl)
                    else self.param_type(
                        ir.Param(decl.pos, "", decl.ret, "", None, []), scope, binding
                    )
                )
                return ret
            raise P4Error.at(f.pos, f"'{f.name}' is not a function, action or method")
        raise P4Error.at(e.pos, "this expression cannot be called")

    def no_args(self, e: ir.Call, n: int) -> None:
        if len(e.args) != n:
            raise P4Error.at(e.pos, f"expected {n} argument(s), got {len(e.args)}")

    def arity_ok(self, params: list[ir.Param], args: list[ir.Arg]) -> bool:
        """Spec 6.8.2: a parameter with a default value or @optional may be left out."""
        required = sum(
            1 for p in params if p.default is None and not ir.annotation(p.annotations, "optional")
        )
        return required <= len(args) <= len(params)

    def extern_method(self, e: ir.Call, et: ExternT, m: str, scope: Scope) -> Type:
        cands = [
            md
            for md in et.decl.methods
            if md.name == m and md.ret is not None and self.arity_ok(md.params, e.args)
        ]
        if not cands:
            names = sorted({md.name for md in et.decl.methods if md.ret is not None})
            raise P4Error.at(
                e.pos,
                f"{et.decl.name} has no method '{m}' taking {len(e.args)} argument(s) (methods: {', '.join(names)})",
            )
        exact = [md for md in cands if len(md.params) == len(e.args)]
        if len(exact) > 1:
            raise P4Error.at(
                e.pos,
                f"ambiguous call: {et.decl.name} declares {len(exact)} methods '{m}' taking "
                f"{len(e.args)} argument(s)",
            )
        md = cands[0]
        inst = e.func.expr.decl
        binding = dict(
            getattr(inst, "binding", None) or self.bind_type_params(et.decl.type_params, et.args)
        )
        self.type_args_rule(e, md.type_params, f"{et.decl.name}.{m}")
        binding.update(self.bind_type_params(md.type_params, e.targs))
        e.kind, e.target, e.method = "extern_method", inst, md
        if et.decl.name == "direct_meter" and m == "read" and self.action is not None:
            self.action.meters_read.add(inst)
            inst.read_by_action = True
        self.bind_args(e, md.params, scope, binding, f"{et.decl.name}.{m}")
        self.target_checks.append((nested_struct_out, e, self.block))
        if et.decl.name == "packet_in":
            self.packet_in_rules(e, m)
        return self.param_type(ir.Param(md.pos, "", md.ret, "", None, []), scope, binding)

    def static_assert(self, e: ir.Call, scope: Scope) -> Type:
        """core.p4's `bool static_assert(bool check[, string message])`: true, or a
        compile-time error where check is false (p4c evaluates it wherever it stands)."""
        if not 1 <= len(e.args) <= 2 or any(a.name for a in e.args):
            raise P4Error.at(e.pos, "static_assert takes a condition and an optional message")
        check = e.args[0].value
        self.expr(check, scope, BoolT())
        if not isinstance(check.type, BoolT) or check.const is None:
            raise P4Error.at(check.pos, "static_assert needs a compile-time constant bool")
        message = ""
        if len(e.args) == 2:
            m = e.args[1].value
            if not isinstance(self.expr(m, scope), StringT) or m.const is None:
                raise P4Error.at(m.pos, "static_assert's message must be a string literal")
            message = m.const
        if not check.const:
            raise P4Error.at(e.pos, f"static_assert failed{': ' + message if message else ''}")
        e.kind, e.const = "static_assert", True
        return BoolT()

    @staticmethod
    def packet_in_rules(e: ir.Call, m: str) -> None:
        """core.p4's packet_in: extract takes a header (with a size only for a header with a
        varbit field); lookahead<T> takes a fixed-size type."""
        if m == "extract" and e.args and e.args[0].value is not None:
            target = e.args[0].value
            t = target.type
            if not (isinstance(t, HeaderT) and t.kind == "header"):
                raise P4Error.at(target.pos, f"extract needs a header, got {t}")
            has_varbit = any(isinstance(ft, Varbit) for _, ft in t.fields)
            if has_varbit != (len(e.args) == 2):
                raise P4Error.at(
                    e.pos,
                    "extract(hdr, size_in_bits) is for headers with a varbit field, "
                    "extract(hdr) for the others",
                )
        if m == "lookahead" and e.targs:
            t = e.targs[0]
            if isinstance(t, VoidT) or (
                isinstance(t, HeaderT) and any(isinstance(ft, Varbit) for _, ft in t.fields)
            ):
                raise P4Error.at(
                    e.pos,
                    f"lookahead<{t}> needs a fixed-size type (bit<W>, a header without varbit)",
                )

    def bind_args(
        self, e: ir.Call, params: list[ir.Param], scope: Scope, binding, what: str
    ) -> None:
        if any(a.name for a in e.args):
            by_name = {a.name: a for a in e.args}
            if None in by_name or set(by_name) - {p.name for p in params}:
                raise P4Error.at(
                    e.pos,
                    f"bad named arguments for {what} (parameters: {', '.join(p.name for p in params)})",
                )
            e.args = [by_name.get(p.name, ir.Arg(p.default, p.name, e.pos)) for p in params]
        if not self.arity_ok(params, e.args):
            raise P4Error.at(e.pos, f"{what} takes {len(params)} argument(s), got {len(e.args)}")
        e.params = params
        self.infer_from_args(params, e.args, scope, binding)
        self.convert_args(params, e.args, scope, binding, what)
        for p, a in zip(params, e.args):
            if a.value is not None and p.direction in ("out", "inout"):
                self.check_lvalue(a.value)

    def infer_from_args(self, params: list[ir.Param], args: list[ir.Arg], scope, binding) -> None:
        """Type the arguments, binding the type variables the call leaves open to the types
        of the arguments passed for them (spec "Type inference": all arguments first, so
        `random(x, 0, 255)` takes T from x; an integer literal gives no width)."""
        for p, a in zip(params, args):
            if a.value is None:
                continue
            pt = getattr(p, "type", None) or self.param_type(p, scope, binding)
            self.expr(a.value, scope, pt)
            if isinstance(a.value.type, TableT):
                raise P4Error.at(
                    a.value.pos,
                    f"a table cannot be passed as an argument (parameter '{p.name}'); "
                    f"arguments are values, extern objects, parsers or controls",
                )
            if free_vars(pt):
                unifies(pt, a.value.type, binding, open_vars=True)

    def convert_args(self, params: list[ir.Param], args: list[ir.Arg], scope, binding, what):
        """Each argument against its parameter's type with the type variables inferred."""
        for p, a in zip(params, args):
            pt = getattr(p, "type", None) or self.param_type(p, scope, binding)
            if a.value is None:
                if p.direction != "out":
                    raise P4Error.at(a.pos, "'_' can only be passed to an out parameter")
                if isinstance(pt, TypeVar):
                    raise P4Error.at(
                        a.pos,
                        f"'_' gives no type for parameter '{p.name}' of {what}: pass a "
                        f"variable or field of the type wanted",
                    )
                continue
            if a.value is p.default and a.value.const is None:
                raise P4Error.at(
                    a.value.pos,
                    f"default value of parameter '{p.name}' must be a compile-time constant",
                )
            generic = isinstance(p.typeref, ir.NamedTypeRef) and p.typeref.name in binding
            if generic and isinstance(pt, DontCareT):
                raise P4Error.at(
                    a.value.pos,
                    f"could not infer a type for parameter '{p.name}' of {what}: its type "
                    f"{p.typeref.name} is `_` in the instance's type (give the type there)",
                )
            if free_vars(pt):
                if isinstance(a.value.type, InfInt):
                    raise P4Error.at(
                        a.value.pos,
                        f"could not infer a width for parameter '{p.name}' of {what} from "
                        f"an integer without one: give it a width (e.g. 32w{a.value.const})",
                    )
                continue  # generic parameters take the argument's type as it is
            if generic and p.direction and isinstance(pt, StringT):
                raise P4Error.at(
                    a.value.pos,
                    f"parameter '{p.name}' of {what} has a direction ({p.direction}), so its "
                    f"type {p.typeref.name} cannot be string (only directionless "
                    f"parameters take strings)",
                )
            try:
                self.coerce(a.value, pt)
            except P4Error as err:
                if not generic:
                    raise
                raise P4Error.at(
                    a.value.pos,
                    f"{err.message} (parameter '{p.name}' of {what} has type "
                    f"{p.typeref.name}, which is {pt} here)",
                ) from None


def nested_struct_out(e: ir.Call) -> None:
    """BMv2's back end (p4c-bm2-ss, its RemoveNestedStructs pass) cannot pass a struct that
    holds structs, headers, stacks or tuples to an extern's out or inout parameter."""
    what = e.target.name if e.kind == "extern_func" else f"{e.func.expr.type}.{e.method.name}"
    for p, a in zip(e.params, e.args):
        t = a.value.type if a.value is not None else None
        nested = (
            isinstance(t, HeaderT)
            and t.kind == "struct"
            and any(isinstance(ft, (HeaderT, StackT, TupleT)) for _, ft in t.fields)
        )
        if nested and p.direction in ("out", "inout"):
            raise P4Error.at(
                a.value.pos,
                f"BMv2 (p4c-bm2-ss) does not support passing a struct of structs or "
                f"headers ({t}) to the {p.direction} parameter '{p.name}' of extern {what}",
            )


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


def reachable_states(d: ir.ParserDecl) -> set[str]:
    """Names of the states the parser's written transitions lead to from `start`."""
    seen, todo = set(), ["start"]
    while todo:
        name = todo.pop()
        state = d.state_map.get(name)
        if name in seen or state is None:
            seen.add(name)
            continue
        seen.add(name)
        tr = state.transition
        todo += [tr.state] if tr.state is not None else [c.state for c in tr.cases]
    return seen


def leaves(s: ir.Stmt | None) -> bool:
    """Whether every path through `s` ends in `return` or `exit` (what follows it is
    unreachable, as p4c's def-use analysis finds it)."""
    if isinstance(s, (ir.Return, ir.Exit)):
        return True
    if isinstance(s, ir.Block):
        return any(leaves(st) for st in s.stmts)
    if isinstance(s, ir.If):
        return leaves(s.then) and leaves(s.other)
    if isinstance(s, ir.Switch):
        has_default = any(None in c.labels for c in s.cases)
        return has_default and all(leaves(c.body) for c in s.cases if c.body is not None)
    return False


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


def contains_extern(t: Type, decl) -> bool:
    """t is, or holds in a tuple or as a type argument, the extern type declared by decl."""
    if isinstance(t, ExternT):
        return t.decl is decl or any(contains_extern(a, decl) for a in t.args)
    if isinstance(t, TupleT):
        return any(contains_extern(i, decl) for i in t.items)
    return False


def free_vars(t: Type) -> bool:
    """t still holds a type variable (a generic parameter not bound yet)."""
    if isinstance(t, TypeVar):
        return True
    if isinstance(t, TupleT):
        return any(free_vars(i) for i in t.items)
    if isinstance(t, ExternT):
        return any(free_vars(a) for a in t.args)
    return False


def value_set_width(t: Type) -> int | None:
    """The width of a value set field or select expression of type t: bit<W>, a type over
    bit<W>, a serializable enum; None for any other type."""
    b = base_type(t)
    if isinstance(b, Bits) and not b.signed:
        return b.width
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    return None


def kind_of(d) -> str:
    return {ir.ParserDecl: "parser", ir.ControlDecl: "control"}.get(type(d), "package")


def has_body(d) -> bool:
    """A parser or control declaration, not a parser or control type (prototype)."""
    return getattr(d, "states", None) is not None or getattr(d, "body", None) is not None


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


def unifies(want: Type, got: Type, binding: dict[str, Type], open_vars: bool = False) -> bool:
    """got is an instance of want: type variables of want bind (in binding) on first sight
    and must then match; everything else must be the same type. open_vars: the binding
    holds the variables still open as TypeVars, and an integer literal (no width) or `_`
    binds nothing."""
    if isinstance(want, TypeVar):
        bound = binding.get(want.var)
        if open_vars:
            if isinstance(bound, TypeVar) and not isinstance(got, (InfInt, DontCareT, TypeVar)):
                binding[want.var] = got
            return True
        if bound is None:
            binding[want.var] = got
            return True
        return same_type(bound, got)
    if isinstance(want, TupleT):
        return (
            isinstance(got, TupleT)
            and len(got.items) == len(want.items)
            and all(unifies(w, g, binding) for w, g in zip(want.items, got.items))
        )
    if isinstance(want, ExternT) and isinstance(got, ExternT) and want.decl is got.decl:
        return len(want.args) == len(got.args) and all(
            unifies(w, g, binding) for w, g in zip(want.args, got.args)
        )
    return same_type(want, got)


def substitute(t: Type, binding: dict[str, Type]) -> Type:
    if isinstance(t, TypeVar):
        return binding.get(t.var, t)
    if isinstance(t, TupleT):
        return TupleT([substitute(i, binding) for i in t.items])
    return t


def same_type(a: Type, b: Type) -> bool:
    """One type, however written: declared types (header, struct, enum, extern, ...) are one
    object each; bit<W>, tuples and stacks are equal by structure."""
    if a is b or same_stack(a, b):
        return True
    if isinstance(a, (Bits, Varbit, BoolT, StringT, InfInt, VoidT, DontCareT)):
        return a == b
    if isinstance(a, (ErrorT, MatchKindT)):
        return type(a) is type(b)
    if isinstance(a, TupleT) and isinstance(b, TupleT):
        return len(a.items) == len(b.items) and all(map(same_type, a.items, b.items))
    if isinstance(a, ExternT) and isinstance(b, ExternT):
        return (
            a.decl is b.decl and len(a.args) == len(b.args) and all(map(same_type, a.args, b.args))
        )
    if isinstance(a, BlockT) and isinstance(b, BlockT):
        return a.decl is b.decl
    if isinstance(a, TypeVar) and isinstance(b, TypeVar):
        return a.var == b.var
    return False


def same_stack(a: Type, b: Type) -> bool:
    """a is b, or both are stacks of the same element type and size (each `H[2]` in the
    source makes its own StackT, yet all of them are one type)."""
    if a is b:
        return True
    return isinstance(a, StackT) and isinstance(b, StackT) and a.elem is b.elem and a.size == b.size


# p4c's default v1model.p4 (V1MODEL_VERSION 20180101) declares these externs without the
# index type I that p4sim's v1model.p4 declares (as p4c's 20200408 version does), with a
# bit<32> index: programs written for it give no type argument for I, which is then bit<32>.
V1MODEL_OPTIONAL_INDEX = {"counter": ("I",), "meter": ("I",), "register": ("I",)}

SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def serialized_size(t: HeaderT, method: str) -> int:
    """minSizeIn*: varbit fields count 0 bits; maxSizeIn*: their maximum width."""
    largest = method.startswith("max")

    def bits(ft) -> int:
        if isinstance(ft, Varbit):
            return ft.max_width if largest else 0
        if isinstance(ft, HeaderT):
            return sum(bits(x) for _, x in ft.fields)
        if isinstance(ft, StackT):
            return bits(ft.elem) * ft.size
        return bit_width(ft)

    n = bits(t)
    return n if method.endswith("Bits") else (n + 7) // 8

"""The P4_16 IR: dataclasses for the parsed program, each carrying its source position.

The parser builds these nodes; the type checker fills in `type` (a `p4sim.frontend.types`
type), `const` (the value, when the expression is a compile-time constant) and `decl` (what a
name refers to). The engine compiles the typed IR into closures once per device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4sim.frontend.lexer import Pos


@dataclass(eq=False)
class Annotation:
    name: str
    text: str  # as written, e.g. '@name("ipv4_lpm")'
    args: list  # literal arguments: str / int values of the tokens inside the parentheses
    pos: Pos | None = None
    # `@a[...]` (spec 18.2): (key or None, expression) items; None for `@a(...)` and `@a`
    structured: list[tuple[str | None, Expr]] | None = None
    # the key=value pairs of @pkginfo(...) and @platform_property(...), as p4c parses them
    pairs: list[tuple[str, Expr]] | None = None


def annotation(annots: list[Annotation], name: str) -> Annotation | None:
    for a in annots:
        if a.name == name:
            return a
    return None


# --------------------------------------------------------------------------- types (syntax)
@dataclass(eq=False)
class TypeRef:
    pos: Pos


@dataclass(eq=False)
class BaseTypeRef(TypeRef):
    name: str  # bit, int, varbit, bool, string, void, error, match_kind, _ (don't care)
    width: Expr | None = None


@dataclass(eq=False)
class NamedTypeRef(TypeRef):
    name: str
    args: list[TypeRef] = field(default_factory=list)


@dataclass(eq=False)
class StackTypeRef(TypeRef):
    elem: TypeRef
    size: Expr


@dataclass(eq=False)
class TupleTypeRef(TypeRef):
    args: list[TypeRef]
    kind: str = "tuple"  # or "list" (p4sim treats list<T> as a tuple)


# --------------------------------------------------------------------------- expressions
@dataclass(eq=False)
class Expr:
    pos: Pos

    def __post_init__(self):
        self.type = None
        self.const = None
        self.decl = None


@dataclass(eq=False)
class IntLit(Expr):
    value: int
    width: int | None
    signed: bool
    text: str = ""


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False)
class StrLit(Expr):
    value: str


@dataclass(eq=False)
class Name(Expr):
    name: str
    absolute: bool = False  # `.name` (top-level scope)


@dataclass(eq=False)
class Member(Expr):
    expr: Expr
    name: str


@dataclass(eq=False)
class Index(Expr):
    expr: Expr
    index: Expr


@dataclass(eq=False)
class Slice(Expr):
    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(eq=False)
class Call(Expr):
    func: Expr
    type_args: list[TypeRef]
    args: list[Arg]


@dataclass(eq=False)
class Arg:
    value: Expr | None  # None for a don't-care `_`
    name: str | None = None  # named argument
    pos: Pos | None = None


@dataclass(eq=False)
class Unary(Expr):
    op: str
    expr: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False)
class Cast(Expr):
    to: TypeRef
    expr: Expr


@dataclass(eq=False)
class ListExpr(Expr):
    """`{a, b, c}`: a tuple / list / struct or header initializer by position; `{a, ...}`
    (dots) leaves the rest at their default values."""

    items: list[Expr]
    dots: bool = False


@dataclass(eq=False)
class StructInit(Expr):
    """`{f = a, g = b}`; `{f = a, ...}` (dots) leaves the other fields at their defaults."""

    fields: list[tuple[str, Expr]]
    dots: bool = False


@dataclass(eq=False)
class DefaultValue(Expr):
    """The default value of its type (spec "default values"): what `...` in an initializer
    stands for, made by the checker."""


@dataclass(eq=False)
class Mask(Expr):  # keyset `a &&& b`
    value: Expr
    mask: Expr


@dataclass(eq=False)
class Range(Expr):  # keyset `a .. b`
    low: Expr
    high: Expr


@dataclass(eq=False)
class Default(Expr):  # keyset `default` or `_`
    pass


@dataclass(eq=False)
class TypeExpr(Expr):  # a type used where an expression is expected (`bit<8>` in a call)
    ref: TypeRef


# --------------------------------------------------------------------------- statements
@dataclass(eq=False)
class Stmt:
    pos: Pos


@dataclass(eq=False)
class Assign(Stmt):
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class CallStmt(Stmt):
    call: Call


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None


@dataclass(eq=False)
class Block(Stmt):
    stmts: list[Stmt]


@dataclass(eq=False)
class SwitchCase:
    labels: list[Expr | None]  # None = default
    body: Block | None  # None = fall through to the next case
    pos: Pos


@dataclass(eq=False)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(eq=False)
class Exit(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None


@dataclass(eq=False)
class Empty(Stmt):
    pass


@dataclass(eq=False)
class For(Stmt):
    """for (init; cond; update) body (P4_16 1.2.5): init and update are lists of simple
    statements (declarations, assignments, calls); cond None means true."""

    init: list[Stmt]
    cond: Expr | None
    update: list[Stmt]
    body: Stmt


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class VarDecl(Stmt):
    typeref: TypeRef
    name: str
    init: Expr | None
    annotations: list[Annotation] = field(default_factory=list)
    is_const: bool = False


# --------------------------------------------------------------------------- declarations
@dataclass(eq=False)
class Decl:
    pos: Pos
    name: str
    annotations: list[Annotation]


@dataclass(eq=False)
class ConstDecl(Decl):
    typeref: TypeRef
    value: Expr


@dataclass(eq=False)
class TypedefDecl(Decl):
    typeref: TypeRef
    newtype: bool  # `type` rather than `typedef`


@dataclass(eq=False)
class FieldDecl:
    pos: Pos
    name: str
    typeref: TypeRef
    annotations: list[Annotation]


@dataclass(eq=False)
class HeaderDecl(Decl):
    fields: list[FieldDecl]
    kind: str  # "header", "struct", "header_union"
    type_params: list[str] = field(default_factory=list)


@dataclass(eq=False)
class EnumDecl(Decl):
    members: list[tuple[str, Expr | None, Pos]]
    underlying: TypeRef | None  # serializable enum: enum bit<8> E { A = 1 }


@dataclass(eq=False)
class ErrorDecl(Decl):  # also match_kind
    members: list[tuple[str, Pos]]
    kind: str  # "error" or "match_kind"


@dataclass(eq=False)
class Param:
    pos: Pos
    direction: str  # "", "in", "out", "inout"
    typeref: TypeRef
    name: str
    default: Expr | None
    annotations: list[Annotation]


@dataclass(eq=False)
class MethodDecl(Decl):
    """An extern method, extern constructor, extern function or function/action prototype."""

    ret: TypeRef | None  # None for a constructor
    type_params: list[str]
    params: list[Param]
    abstract: bool = False


@dataclass(eq=False)
class ExternDecl(Decl):
    type_params: list[str]
    methods: list[MethodDecl]


@dataclass(eq=False)
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass(eq=False)
class FunctionDecl(Decl):
    ret: TypeRef
    type_params: list[str]
    params: list[Param]
    body: Block


@dataclass(eq=False)
class KeyElement:
    pos: Pos
    expr: Expr
    match_kind: str
    annotations: list[Annotation]


@dataclass(eq=False)
class ActionRef:
    pos: Pos
    name: Expr  # Name (possibly absolute)
    args: list[Arg]
    annotations: list[Annotation]


@dataclass(eq=False)
class EntryDecl:
    pos: Pos
    keyset: list[Expr]
    action: ActionRef
    priority: Expr | None
    annotations: list[Annotation]
    is_const: bool = False  # `const` on this entry of a non-const list (P4_16 1.2.4)


@dataclass(eq=False)
class TableProperty:
    pos: Pos
    name: str
    is_const: bool
    value: object  # list[KeyElement] | list[ActionRef] | list[EntryDecl] | ActionRef | Expr
    annotations: list[Annotation]


@dataclass(eq=False)
class TableDecl(Decl):
    properties: list[TableProperty]


@dataclass(eq=False)
class Instantiation(Decl):
    typeref: TypeRef
    args: list[Arg]
    # `= { ... }`: the extern's abstract methods implemented for this instance (spec
    # "Abstract methods"), e.g. a TNA RegisterAction's apply
    initializer: list[FunctionDecl] | None = None


@dataclass(eq=False)
class ValueSetDecl(Decl):
    """`value_set<T>(size) name;` in a parser: a select keyset the control plane fills."""

    typeref: TypeRef
    size: Expr


@dataclass(eq=False)
class SelectCase:
    pos: Pos
    keyset: list[Expr]  # one per select expression (or a single Default)
    state: str


@dataclass(eq=False)
class Transition:
    pos: Pos
    state: str | None  # direct transition
    select: list[Expr] | None = None
    cases: list[SelectCase] | None = None


@dataclass(eq=False)
class ParserState(Decl):
    stmts: list[Stmt]
    transition: Transition | None


@dataclass(eq=False)
class ParserDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list  # Instantiation, VarDecl, ConstDecl, ...
    states: list[ParserState] | None  # None for a parser type declaration


@dataclass(eq=False)
class ControlDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list  # ActionDecl, TableDecl, Instantiation, VarDecl, ConstDecl
    body: Block | None  # None for a control type declaration


@dataclass(eq=False)
class PackageDecl(Decl):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class Program:
    decls: list[Decl]
    source: str

"""P4_16 types as the type checker and the engine see them (typedefs already resolved)."""

from __future__ import annotations

from dataclasses import dataclass, field


class Type:
    def __str__(self) -> str:
        return self.name()

    def name(self) -> str:
        return type(self).__name__


@dataclass(frozen=True, eq=True)
class Bits(Type):
    width: int
    signed: bool = False

    def name(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    def wrap(self, v: int) -> int:
        """Reduce an integer to this type's range (two's complement for int<W>)."""
        m = (1 << self.width) - 1
        v &= m
        if self.signed and v >> (self.width - 1):
            v -= 1 << self.width
        return v


@dataclass(frozen=True, eq=True)
class NewBits(Bits):
    """A `type` over bit<W>/int<W> (spec, "Introducing new types"): stored and run as
    bit<W>/int<W>, yet a type of its own for the checker: explicit casts to and from its base
    type, no arithmetic."""

    type_name: str = ""
    # @p4runtime_translation(uri, W | bit<W> | string): the control plane sees another type
    # (P4Runtime spec 8.3): (uri, its width W, or None for a string)
    translation: tuple[str, int | None] | None = None
    annotations: tuple[str, ...] = ()  # the other annotations on the `type` (P4Info lists them)

    def name(self) -> str:
        return self.type_name


@dataclass(frozen=True)
class Varbit(Type):
    max_width: int

    def name(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class InfInt(Type):
    """The type of an integer literal without a width (arbitrary precision, compile time)."""

    def name(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolT(Type):
    def name(self) -> str:
        return "bool"


@dataclass(frozen=True)
class NewBool(BoolT):
    """A `type` over bool (see NewBits)."""

    type_name: str = ""
    annotations: tuple[str, ...] = ()  # as NewBits.annotations

    def name(self) -> str:
        return self.type_name


def is_newtype(t: Type) -> bool:
    return isinstance(t, (NewBits, NewBool))


def base_type(t: Type) -> Type:
    """A `type`'s base type (bit<W>, int<W> or bool); any other type as it is."""
    if isinstance(t, NewBits):
        return Bits(t.width, t.signed)
    return BoolT() if isinstance(t, NewBool) else t


@dataclass(frozen=True)
class StringT(Type):
    def name(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidT(Type):
    def name(self) -> str:
        return "void"


@dataclass(frozen=True)
class DontCareT(Type):
    def name(self) -> str:
        return "_"


@dataclass(eq=False)
class ErrorT(Type):
    members: dict[str, int] = field(default_factory=dict)

    def name(self) -> str:
        return "error"


@dataclass(eq=False)
class MatchKindT(Type):
    members: set[str] = field(default_factory=set)

    def name(self) -> str:
        return "match_kind"


@dataclass(eq=False)
class EnumT(Type):
    enum_name: str
    members: list[str]
    underlying: Bits | None = None  # serializable enum
    values: dict[str, int] = field(default_factory=dict)

    def name(self) -> str:
        return self.enum_name


@dataclass(eq=False)
class HeaderT(Type):
    """header, struct and header_union types. Fields in declaration order."""

    type_name: str
    kind: str  # "header" | "struct" | "header_union"
    fields: list[tuple[str, Type]]
    annotations: list = field(default_factory=list)

    def __post_init__(self):
        self.index = {n: i for i, (n, _) in enumerate(self.fields)}
        # a header with struct-typed fields (P4_16 "Header types"): its values hold Structs
        self.nested = self.kind == "header" and any(isinstance(t, HeaderT) for _, t in self.fields)

    def name(self) -> str:
        return self.type_name

    def field_type(self, name: str) -> Type | None:
        i = self.index.get(name)
        return None if i is None else self.fields[i][1]

    @property
    def width(self) -> int:
        """Total bits of a header (fixed-width fields only)."""
        return sum(t.width for _, t in self.fields if isinstance(t, Bits))


@dataclass(eq=False)
class GenericHeaderT(Type):
    """A generic struct, header or header_union (`struct S<T> { T f; }`): a type only once
    specialised (`S<bit<8>>`), each specialisation made once (the checker's resolve_type)."""

    decl: object  # ir.HeaderDecl
    scope: object  # where it is declared: its fields' types are resolved there
    specializations: dict = field(default_factory=dict)  # argument names -> HeaderT

    def name(self) -> str:
        return self.decl.name


@dataclass(eq=False)
class StackT(Type):
    elem: HeaderT
    size: int

    def name(self) -> str:
        return f"{self.elem.name()}[{self.size}]"


@dataclass(eq=False)
class TupleT(Type):
    items: list[Type]

    def name(self) -> str:
        return "tuple<" + ", ".join(t.name() for t in self.items) + ">"


@dataclass(eq=False)
class TypeVar(Type):
    """An unbound type parameter of a generic extern: accepts anything."""

    var: str

    def name(self) -> str:
        return self.var


class TypeParam(TypeVar):
    """A type parameter of a generic declaration whose body is checked before any
    specialisation (check_generic), as p4c checks it: a value of this type comes only from
    another value of it (`T t = x;`, not `T t = 0;`)."""


@dataclass(eq=False)
class ExternT(Type):
    decl: object  # ir.ExternDecl
    args: list[Type]

    def name(self) -> str:
        return self.decl.name


@dataclass(eq=False)
class BlockT(Type):
    """A parser, control or package type (declaration), possibly instantiated."""

    decl: object

    def name(self) -> str:
        return self.decl.name


@dataclass(eq=False)
class TableT(Type):
    decl: object

    def name(self) -> str:
        return "table " + self.decl.name


@dataclass(eq=False)
class ApplyResultT(Type):
    """What `t.apply()` returns: .hit, .miss, .action_run."""

    table: object

    def name(self) -> str:
        return "apply_result"


@dataclass(eq=False)
class ActionEnumT(Type):
    """The type of `t.apply().action_run`."""

    table: object

    def name(self) -> str:
        return "action_list(" + self.table.name + ")"


def is_integer(t: Type) -> bool:
    return isinstance(t, (Bits, InfInt))


def bit_width(t: Type) -> int:
    """Width in bits when serialised (bit<W>, int<W>, bool, serializable enum, header)."""
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, HeaderT):
        return sum(bit_width(ft) for _, ft in t.fields)
    if isinstance(t, StackT):
        return bit_width(t.elem) * t.size
    if isinstance(t, ErrorT):
        return 0
    raise TypeError(t)


def flattened_fields(t: HeaderT, path: tuple = ()):
    """(path, type) of the fields of a header or struct type in declaration order, the
    fields of a struct-typed field in its place (as p4c flattens headers): ("row", "e")."""
    for name, ft in t.fields:
        if isinstance(ft, HeaderT) and ft.kind == "struct":
            yield from flattened_fields(ft, (*path, name))
        else:
            yield (*path, name), ft

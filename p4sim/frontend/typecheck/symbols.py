"""What names stand for: variables, instances, types and overloads in nested scopes, and the
frames that give variables their slots. The engine and the native generator read the
checked IR through these records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4sim.frontend import ir
from p4sim.frontend.types import (
    Type,
)


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
    # a constant of a struct, header or tuple type: its checked initializer, whose leaves are
    # all compile-time constants (`const PortId_t CPU = {9w192};`); engines evaluate it
    composite: object = None
    # an extern parameter of a parser or control: its type arguments (register<T>'s T)
    binding: dict | None = None


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

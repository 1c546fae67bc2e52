"""Relations between types: sameness, unification with type variables (generic externs and
packages), substitution, and the serialized sizes of headers.
"""

from __future__ import annotations

from p4sim.frontend.types import (
    Bits,
    BlockT,
    BoolT,
    DontCareT,
    ErrorT,
    ExternT,
    HeaderT,
    InfInt,
    MatchKindT,
    StackT,
    StringT,
    TupleT,
    Type,
    TypeVar,
    Varbit,
    VoidT,
    bit_width,
)


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

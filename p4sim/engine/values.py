"""Runtime values of composite P4 types, and (de)serialisation of headers.

Scalars are plain Python values (see `p4sim.frontend.typecheck`). Headers, structs and header
stacks are small mutable objects whose fields live in a list indexed by field position, so a
compiled field access is one list index.
"""

from __future__ import annotations

from p4sim.frontend.types import (
    Bits,
    BoolT,
    EnumT,
    ErrorT,
    HeaderT,
    StackT,
    TupleT,
    Type,
    Varbit,
    flattened_fields,
)


class Header:
    """An instance of a header type: validity bit plus field values."""

    __slots__ = ("t", "v", "valid")

    def __init__(self, t: HeaderT, v: list | None = None, valid: bool = False):
        self.t = t
        self.valid = valid
        self.v = v if v is not None else fresh_fields(t)

    def copy(self) -> Header:
        if self.t.nested:
            return Header(self.t, [copy_value(x) for x in self.v], self.valid)
        return Header(self.t, list(self.v), self.valid)

    def set_valid(self) -> None:
        self.valid = True

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={x}" for (n, _), x in zip(self.t.fields, self.v))
        return f"{self.t.type_name}({'valid' if self.valid else 'invalid'}: {fields})"


class Struct:
    __slots__ = ("t", "v")

    def __init__(self, t: HeaderT, v: list | None = None):
        self.t = t
        self.v = v if v is not None else [default_value(ft) for _, ft in t.fields]

    def copy(self) -> Struct:
        return Struct(self.t, [copy_value(x) for x in self.v])

    @property
    def valid(self) -> bool:  # structs are always "valid" (emit recurses into them)
        return True

    def __repr__(self) -> str:
        return f"{self.t.type_name}({', '.join(f'{n}={x}' for (n, _), x in zip(self.t.fields, self.v))})"


class Union(Struct):
    """A header_union: member headers, at most one valid; valid when one member is."""

    __slots__ = ()

    def copy(self) -> Union:
        return Union(self.t, [h.copy() for h in self.v])

    @property
    def valid(self) -> bool:
        return any(h.valid for h in self.v)


def make_sibling_invalidator(union_get, index: int):
    """fn(f) making every other member of a header_union invalid (spec: at most one valid)."""

    def invalidate_siblings(f):
        for j, h in enumerate(union_get(f).v):
            if j != index:
                h.valid = False

    return invalidate_siblings


class Stack:
    """A header stack: elements plus nextIndex (the spec's name)."""

    __slots__ = ("elems", "next", "t")

    def __init__(self, t: StackT, elems: list | None = None, next_index: int = 0):
        self.t = t
        self.elems = elems if elems is not None else [default_value(t.elem) for _ in range(t.size)]
        self.next = next_index

    def copy(self) -> Stack:
        return Stack(self.t, [h.copy() for h in self.elems], self.next)


def values_equal(a, b) -> bool:
    """P4_16 8.17/8.18 equality of composite values: headers are equal when both are invalid
    or both valid with equal fields; structs, unions, stacks and tuples element by element
    (a union is valid through at most one member, so member-wise equality is the spec's)."""
    if isinstance(a, Header):
        if not (a.valid or b.valid):
            return True
        return a.valid == b.valid and all(values_equal(x, y) for x, y in zip(a.v, b.v))
    if isinstance(a, Struct):
        return all(values_equal(x, y) for x, y in zip(a.v, b.v))
    if isinstance(a, Stack):
        return all(values_equal(x, y) for x, y in zip(a.elems, b.elems))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    return a == b


def _zeros(t: HeaderT) -> tuple:
    z = getattr(t, "_zeros", None)
    if z is None:
        z = t._zeros = tuple(default_value(ft) for _, ft in t.fields)
    return z


def fresh_fields(t: HeaderT) -> list:
    """The field values of a header of type t that becomes valid: all 0, a struct field a
    Struct of its own."""
    if t.nested:
        return [copy_value(z) for z in _zeros(t)]
    return list(_zeros(t))


def _constant(c):
    return lambda: c


def factory(t: Type):
    """A fast constructor fn() -> fresh default value of type t (cached on the type)."""
    fn = getattr(t, "_factory", None)
    if fn is not None:
        return fn
    if isinstance(t, HeaderT) and t.kind == "header":
        zeros = _zeros(t)

        def fn():
            return Header(t, list(zeros) if not t.nested else fresh_fields(t))

    elif isinstance(t, HeaderT) and t.kind == "header_union":
        members = [factory(ft) for _, ft in t.fields]

        def fn():
            return Union(t, [m() for m in members])

    elif isinstance(t, HeaderT):
        parts = []
        for _, ft in t.fields:
            if isinstance(ft, (HeaderT, StackT, TupleT)):
                parts.append(factory(ft))
            else:
                parts.append(_constant(default_value(ft)))
        scalars = all(not isinstance(ft, (HeaderT, StackT, TupleT)) for _, ft in t.fields)
        if scalars:
            zeros = tuple(default_value(ft) for _, ft in t.fields)

            def fn():
                return Struct(t, list(zeros))

        else:

            def fn():
                return Struct(t, [p() for p in parts])

    elif isinstance(t, StackT):
        elem = factory(t.elem)
        n = t.size

        def fn():
            return Stack(t, [elem() for _ in range(n)])

    else:
        value = default_value(t)
        if isinstance(value, list):
            return lambda: default_value(t)
        return lambda: value
    try:
        t._factory = fn
    except AttributeError:
        pass
    return fn


def default_value(t: Type):
    """Initial value of a variable or field: 0 / false / first member / invalid header."""
    if isinstance(t, Bits):
        return 0
    if isinstance(t, BoolT):
        return False
    if isinstance(t, ErrorT):
        return 0
    if isinstance(t, EnumT):
        if t.underlying is not None:  # spec "Default values": 0, named or not (BMv2 zeroes)
            return 0
        return t.values[t.members[0]] if t.members else 0
    if isinstance(t, HeaderT):
        if t.kind == "header_union":
            return Union(t)
        return Header(t) if t.kind == "header" else Struct(t)
    if isinstance(t, StackT):
        return Stack(t)
    if isinstance(t, TupleT):
        return [default_value(x) for x in t.items]
    if isinstance(t, Varbit):
        return (0, 0)  # varbit values are (width in bits, value)
    return None


def copy_value(v):
    if isinstance(v, (Header, Struct, Stack)):
        return v.copy()
    if isinstance(v, list):
        return [copy_value(x) for x in v]
    return v


def assign_into(dst, src, as_assignment: bool = False) -> None:
    """Copy a composite value into an existing object (keeps references held elsewhere).

    `as_assignment`: as BMv2 runs `dst = src` (bm_sim's assign_header, which p4c's header,
    struct and stack assignments and copy-out become): a header given an invalid header
    becomes invalid and keeps its fields, which a program may read afterwards (the spec
    leaves them unspecified)."""
    if isinstance(dst, Header):
        if src.valid or not as_assignment:
            dst.v[:] = src.v if not dst.t.nested else [copy_value(x) for x in src.v]
        dst.valid = src.valid
    elif isinstance(dst, Struct):
        for i, x in enumerate(src.v):
            if isinstance(x, (Header, Struct, Stack, list)):
                assign_into(dst.v[i], x, as_assignment)
            else:
                dst.v[i] = x
    elif isinstance(dst, Stack):
        for d, s in zip(dst.elems, src.elems):
            assign_into(d, s, as_assignment)
        dst.next = src.next
    elif isinstance(dst, list):  # a tuple
        for i, x in enumerate(src):
            if isinstance(x, (Header, Struct, Stack, list)):
                assign_into(dst[i], x, as_assignment)
            else:
                dst[i] = x


class VarbitLayout:
    """Headers with a varbit field: sizes known per packet, so (de)serialised field by field."""

    has_varbit = True

    def __init__(self, t: HeaderT):
        self.t = t
        self.fields = []  # (width or None for the varbit, kind, type)
        for name, ft in t.fields:
            if isinstance(ft, Varbit):
                self.fields.append((None, "v", ft))
            elif isinstance(ft, Bits):
                self.fields.append((ft.width, "s" if ft.signed else "u", ft))
            elif isinstance(ft, BoolT):
                self.fields.append((1, "b", ft))
            elif isinstance(ft, EnumT) and ft.underlying is not None:
                u = ft.underlying
                self.fields.append((u.width, "s" if u.signed else "u", u))
            else:
                raise TypeError(f"field {name} of {t.type_name} is not serialisable")
        self.bits = sum(w for w, _, _ in self.fields if w is not None)  # fixed part
        self.max_bits = self.bits + next(ft.max_width for w, _, ft in self.fields if w is None)

    def unpack_var(self, value: int, total_bits: int, var_bits: int) -> list:
        out = []
        shift = total_bits
        for w, kind, ft in self.fields:
            w = var_bits if w is None else w
            shift -= w
            x = (value >> shift) & ((1 << w) - 1)
            if kind == "v":
                x = (w, x)
            elif kind == "b":
                x = bool(x)
            elif kind == "s":
                x = ft.wrap(x)
            out.append(x)
        return out

    def pack_var(self, values: list) -> bytes:
        acc, bits = 0, 0
        for (w, _, _), x in zip(self.fields, values):
            if w is None:
                w, x = x
            acc = (acc << w) | (int(x) & ((1 << w) - 1))
            bits += w
        pad = (-bits) % 8  # only for a varbit whose size is not whole bytes (never extracted)
        return (acc << pad).to_bytes((bits + pad) // 8, "big")


class HeaderLayout:
    """How a header type maps to bytes: per field (shift, mask, kind) from the MSB."""

    has_varbit = False

    def __init__(self, t: HeaderT):
        self.t = t
        self.nested = t.nested
        widths = []
        for path, ft in flattened_fields(t):
            name = ".".join(path)
            if isinstance(ft, Bits):
                widths.append((ft.width, "s" if ft.signed else "u", ft))
            elif isinstance(ft, BoolT):
                widths.append((1, "b", ft))
            elif isinstance(ft, EnumT) and ft.underlying is not None:
                widths.append(
                    (ft.underlying.width, "s" if ft.underlying.signed else "u", ft.underlying)
                )
            else:
                raise TypeError(f"field {name} of {t.type_name} is not serialisable")
        self.bits = sum(w for w, _, _ in widths)
        self.nbytes = (self.bits + 7) // 8
        self.fields = []
        shift = self.bits
        for w, kind, ft in widths:
            shift -= w
            self.fields.append((shift, (1 << w) - 1, kind, ft))
        self.plain = all(k == "u" for _, _, k, _ in self.fields) and not self.nested
        if self.plain:
            # Straight-line (de)serialisers for the common all-unsigned header: one Python
            # expression each, generated once per header type.
            terms = [f"((x >> {s}) & {m:#x})" for s, m, _, _ in self.fields]
            self.unpack = eval(f"lambda x: [{', '.join(terms)}]")
            terms = [f"((v[{i}] & {m:#x}) << {s})" for i, (s, m, _, _) in enumerate(self.fields)]
            self.pack = eval(f"lambda v: {' | '.join(terms) or '0'}")

    def unpack(self, value: int) -> list:
        out = []
        for s, m, kind, ft in self.fields:
            x = (value >> s) & m
            if kind == "b":
                x = bool(x)
            elif kind == "s":
                x = ft.wrap(x)
            out.append(x)
        return _nest(self.t, iter(out)) if self.nested else out

    def pack(self, values: list) -> int:
        if self.nested:
            values = list(_flat(values))
        acc = 0
        for (s, m, _, _), x in zip(self.fields, values):
            acc |= (int(x) & m) << s
        return acc


def _nest(t: HeaderT, flat) -> list:
    """The field values of t from its serialised fields' values (an iterator)."""
    return [
        Struct(ft, _nest(ft, flat)) if isinstance(ft, HeaderT) else next(flat) for _, ft in t.fields
    ]


def _flat(values: list):
    for x in values:
        if isinstance(x, Struct):
            yield from _flat(x.v)
        else:
            yield x

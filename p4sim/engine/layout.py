"""Byte layouts of header types, shared by the parser's extract and the deparser's emit."""

from __future__ import annotations

from p4sim.engine.values import HeaderLayout, VarbitLayout
from p4sim.errors import P4Error
from p4sim.frontend.types import HeaderT, Varbit


def layout_of(t: HeaderT, pos=None):
    """The (cached) byte layout of a header type. Cached on the type object itself: a cache
    keyed by id() could hand a new program's type the layout of a freed one."""
    lay = getattr(t, "_layout", None)
    if lay is None:
        if any(isinstance(ft, Varbit) for _, ft in t.fields):
            lay = VarbitLayout(t)
        else:
            lay = HeaderLayout(t)
            if lay.bits % 8:
                raise P4Error.at(
                    pos,
                    f"header {t.type_name} is {lay.bits} bits long: headers must be a whole "
                    "number of bytes (as in BMv2)",
                )
        t._layout = lay
    return lay


def packet_bytes(t: HeaderT, pos=None):
    """fn(header) -> the bytes a header of type t takes in a packet (a varbit counts with the
    width it holds)."""
    lay = layout_of(t, pos)
    if getattr(lay, "has_varbit", False):
        fixed = lay.bits
        var = next(i for i, (w, _, _) in enumerate(lay.fields) if w is None)
        return lambda h: (fixed + h.v[var][0]) // 8
    nbytes = lay.nbytes
    return lambda h: nbytes

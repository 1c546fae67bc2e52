"""Deparser: the packet_out extern. `emit` appends a valid header's bytes; structs and header
stacks are emitted field by field / element by element, invalid headers are skipped."""

from __future__ import annotations

from p4sim.engine.expressions import field_path
from p4sim.engine.layout import layout_of
from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.types import HeaderT, StackT


class PacketOut:
    __slots__ = ("parts",)

    def __init__(self):
        self.parts: list[bytes] = []


def emitter(t, pos):
    """fn(packet_out, value) for a value of type t."""
    if isinstance(t, HeaderT) and t.kind == "header":
        lay = layout_of(t, pos)
        if lay.has_varbit:
            pack_var = lay.pack_var

            def emit_varbit_header(out, h):
                if h.valid:
                    out.parts.append(pack_var(h.v))

            return emit_varbit_header
        n = lay.nbytes
        pack = lay.pack

        def emit_header(out, h):
            if h.valid:
                out.parts.append(pack(h.v).to_bytes(n, "big"))

        return emit_header
    if isinstance(t, HeaderT):  # struct
        subs = [(i, emitter(ft, pos)) for i, (_, ft) in enumerate(t.fields)]

        def emit_struct(out, s):
            for i, em in subs:
                em(out, s.v[i])

        return emit_struct
    if isinstance(t, StackT):
        em = emitter(t.elem, pos)

        def emit_stack(out, st):
            for h in st.elems:
                em(out, h)

        return emit_stack
    raise P4Error.at(pos, f"emit needs a header, header stack or struct of headers, got {t}")


def compile_packet_out(c, e: ir.Call, method: str):
    if method != "emit":
        raise unsupported(e.pos, f"packet_out.{method}")
    out_get = c.expr(e.func.expr)
    arg = e.args[0].value
    t = arg.type
    path = field_path(arg)
    out_path = field_path(e.func.expr)
    lay = layout_of(t, arg.pos) if isinstance(t, HeaderT) and t.kind == "header" else None
    if lay is not None and not lay.has_varbit and path and len(path) == 2 and out_path:
        # `packet.emit(hdr.h)`, the usual deparser statement, in one closure.
        n, pack = lay.nbytes, lay.pack
        s, i = path
        so = out_path[0]

        def emit_field_header(f):
            h = f[s].v[i]
            if h.valid:
                f[so].parts.append(pack(h.v).to_bytes(n, "big"))

        return emit_field_header
    em = emitter(t, arg.pos)
    g = c.expr(arg)
    return lambda f: em(out_get(f), g(f))

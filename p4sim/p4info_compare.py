"""Compare two P4Infos, at two depths, with one comparison of keyed views:

    differences(ours, theirs)    everything P4Runtime reads except the order of top-level
                                 entities (clients look them up by id); the conformance runner
                                 and coverage compare p4sim's P4Info with p4c-bm2-ss's
    id_mismatches(program, sent) only what a controller addresses by id (ids, names, widths;
                                 annotations and order do not matter); the P4Runtime server
                                 checks a pushed P4Info against the program with it

Each returns one-line descriptions, [] when equal.
"""

from __future__ import annotations

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

_SINGLE = ("pkg_info", "type_info")


def _entities(info: p4info_pb2.P4Info) -> dict[tuple[str, str], str]:
    """Each top-level entity by (kind, name), as one-line text."""
    out = {}
    for fd, value in info.ListFields():
        if fd.name in _SINGLE:
            out[(fd.name, "")] = text_format.MessageToString(value, as_one_line=True)
            continue
        for entity in value:
            # an architecture's `externs` entry has no preamble: it is keyed by its type
            name = entity.extern_type_name if fd.name == "externs" else entity.preamble.name
            out[(fd.name, name)] = text_format.MessageToString(entity, as_one_line=True)
    return out


def _addressed(info: p4info_pb2.P4Info) -> dict[tuple[str, int], str]:
    """(kind, id) -> name for every object a controller addresses by id."""
    out: dict[tuple[str, int], str] = {}
    for kind in (
        "tables",
        "actions",
        "counters",
        "direct_counters",
        "meters",
        "direct_meters",
        "registers",
        "controller_packet_metadata",
    ):
        for obj in getattr(info, kind):
            out[(kind, obj.preamble.id)] = obj.preamble.name
    for t in info.tables:
        for m in t.match_fields:
            out[(f"{t.preamble.name} match field", m.id)] = f"{m.name}/{m.bitwidth}"
    for a in info.actions:
        for p in a.params:
            out[(f"{a.preamble.name} parameter", p.id)] = f"{p.name}/{p.bitwidth}"
    for h in info.controller_packet_metadata:
        for m in h.metadata:
            out[(f"{h.preamble.name} metadata", m.id)] = f"{m.name}/{m.bitwidth}"
    return out


def _compare(a: dict, b: dict, only_a, only_b, changed) -> list[str]:
    """One line per key of either view that is missing from the other or differs, in key
    order; the three callbacks word each case from (key, value(s))."""
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in b:
            lines.append(only_a(key, a[key]))
        elif key not in a:
            lines.append(only_b(key, b[key]))
        elif a[key] != b[key]:
            lines.append(changed(key, a[key], b[key]))
    return lines


def differences(
    ours: p4info_pb2.P4Info, theirs: p4info_pb2.P4Info, ours_label="p4sim", theirs_label="p4c"
) -> list[str]:
    def what(key) -> str:
        return " ".join(key).strip()

    return _compare(
        _entities(ours),
        _entities(theirs),
        lambda key, x: f"{what(key)}: only in {ours_label}'s: {x}",
        lambda key, y: f"{what(key)}: only in {theirs_label}'s: {y}",
        lambda key, x, y: f"{what(key)}: {ours_label} {{{x}}} vs {theirs_label} {{{y}}}",
    )


def id_mismatches(program: p4info_pb2.P4Info, sent: p4info_pb2.P4Info) -> list[str]:
    """Differences in ids, names and widths between the program's P4Info and one sent."""
    return _compare(
        _addressed(program),
        _addressed(sent),
        lambda key, x: f"{key[0]} {x} (id {key[1]}) is missing from the P4Info",
        lambda key, y: f"{key[0]} id {key[1]} ({y}) is not in the program",
        lambda key, x, y: f"{key[0]} id {key[1]}: program has {x}, P4Info has {y}",
    )


def read_text(path) -> p4info_pb2.P4Info:
    with open(path) as f:
        return text_format.Parse(f.read(), p4info_pb2.P4Info())

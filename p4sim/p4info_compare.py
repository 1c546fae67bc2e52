"""Compare two P4Infos as P4Runtime reads them: the order of top-level entities carries no
meaning (clients look entities up by id), everything else does.

    differences(ours, theirs) -> list of one-line descriptions, [] when equal

Used by the conformance runner (p4sim's P4Info against p4c-bm2-ss's for p4c's samples).
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
            out[(fd.name, entity.preamble.name)] = text_format.MessageToString(
                entity, as_one_line=True
            )
    return out


def differences(
    ours: p4info_pb2.P4Info, theirs: p4info_pb2.P4Info, ours_label="p4sim", theirs_label="p4c"
) -> list[str]:
    a, b = _entities(ours), _entities(theirs)
    diffs = []
    for key in sorted(set(a) | set(b)):
        kind, name = key
        what = f"{kind} {name}".strip()
        if key not in a:
            diffs.append(f"{what}: only in {theirs_label}'s: {b[key]}")
        elif key not in b:
            diffs.append(f"{what}: only in {ours_label}'s: {a[key]}")
        elif a[key] != b[key]:
            diffs.append(f"{what}: {ours_label} {{{a[key]}}} vs {theirs_label} {{{b[key]}}}")
    return diffs


def read_text(path) -> p4info_pb2.P4Info:
    with open(path) as f:
        return text_format.Parse(f.read(), p4info_pb2.P4Info())

"""The program skeleton of the rejection tests (test_lang_rejects*.py): a small v1model
program whose parts a case replaces, and the check every case makes."""

import pytest

from p4sim.errors import P4Error
from p4sim.frontend import compile_source

# %(top)s: declarations before the parser; %(parser)s: states of the parser;
# %(ingress)s: the ingress control's body; %(main)s: the package instantiation.
SKELETON = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
header v_t { varbit<16> v; }
struct headers_t { h_t h; h_t[2] st; v_t v; }
struct meta_t { bit<8> m; }
%(top)s
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%(parser)s
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%(ingress)s
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
%(main)s
"""

DEFAULTS = {
    "top": "",
    "parser": "state start { pkt.extract(hdr.h); transition accept; }",
    "ingress": "apply { }",
    "main": "V1Switch(P(), VC(), I(), E(), CC(), D()) main;",
}


def source(**parts) -> str:
    return SKELETON % {**DEFAULTS, **parts}


def ternary_table(
    entries: str, key: str = "hdr.h.a: ternary;", actions: str = "a;", priority_delta: int = 0
) -> str:
    delta = f"priority_delta = {priority_delta}; " if priority_delta else ""
    return (
        "action a(bit<8> x) { meta.m = x; } @defaultonly action d() { }\n"
        f"table t {{ key = {{ {key} }} actions = {{ {actions} }} {delta}"
        f"entries = {{ {entries} }} }}\n"
        "apply { t.apply(); }"
    )


def check_rejects_bad_and_keeps_good(bad: dict, message: str, good: dict) -> None:
    """The valid neighbour compiles; the bad program is rejected with `message`, at a
    position in its file, in p4c's `file:line:col: error:` form."""
    compile_source(source(**good), "good.p4")  # the neighbour compiles
    with pytest.raises(P4Error) as info:
        compile_source(source(**bad), "bad.p4")
    e = info.value
    assert message in e.message
    assert e.file == "bad.p4" and e.line >= 1 and e.col >= 1
    assert str(e).startswith(f"bad.p4:{e.line}:{e.col}: error: ")

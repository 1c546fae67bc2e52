"""Checks p4sim's front end has for programs p4c rejects, one small program of our own per
class (the corpus run is `python -m p4sim.rejects`, `make p4sim-rejects`). Each bad program
sits beside a valid neighbour that must still compile, so a check can't reject good code.

Run: .venv/bin/pytest p4sim/tests/test_lang_rejects.py
"""

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


def ternary_table(entries: str, key: str = "hdr.h.a: ternary;", actions: str = "a;") -> str:
    return (
        "action a(bit<8> x) { meta.m = x; } @defaultonly action d() { }\n"
        f"table t {{ key = {{ {key} }} actions = {{ {actions} }} entries = {{ {entries} }} }}\n"
        "apply { t.apply(); }"
    )


# (class of check, the bad program's parts, message fragment, line, the valid neighbour)
CASES = [
    (
        "entries on a table without key",
        {"ingress": "action a() {} table t { actions = { a; } entries = { _ : a(); } } apply { }"},
        "has no key: it cannot have entries",
        {
            "ingress": "action a() {} table t { actions = { a; } entries = { } } apply { t.apply(); }"
        },
    ),
    (
        "priority on an exact-only table",
        {"ingress": ternary_table("priority = 3: 1 : a(1);", key="hdr.h.a: exact;")},
        "its entries cannot have a priority",
        {"ingress": ternary_table("priority = 3: 1 : a(1);")},
    ),
    (
        "first entry without priority when others give one",
        {"ingress": ternary_table("1 : a(1); priority = 5: 2 : a(2);")},
        "entry must have a priority",
        {"ingress": ternary_table("priority = 6: 1 : a(1); 2 : a(2);")},
    ),
    (
        "@defaultonly action in an entry",
        {"ingress": ternary_table("1 : d();", actions="a; @defaultonly d;")},
        "is @defaultonly in table t",
        {"ingress": ternary_table("1 : a(1);", actions="a; @defaultonly d;")},
    ),
    (
        "direction on a string parameter",
        {"top": "extern void f(in string s);"},
        "parameter 's' of type string must be directionless",
        {"top": "extern void f(string s);"},
    ),
    (
        "direction on an int parameter",
        {"top": "extern void f(in int x);"},
        "parameter 'x' of type int must be directionless",
        {"top": "extern void f(int x);"},
    ),
    (
        "direction on an extern parameter",
        {"top": "extern X { X(); } extern void f(inout X x);"},
        "of type extern X must be directionless",
        {"top": "extern X { X(); } extern void f(X x);"},
    ),
    (
        "duplicate parameter",
        {"top": "extern void f(in bit<8> x, in bit<8> x);"},
        "duplicate parameter 'x'",
        {"top": "extern void f(in bit<8> x, in bit<8> y);"},
    ),
    (
        "default value on an out parameter",
        {"top": "extern void f(out bit<8> x = 1);"},
        "out parameter 'x' cannot have a default value",
        {"top": "extern void f(in bit<8> x = 1);"},
    ),
    (
        "constructor with a return type",
        {"top": "extern X { bit<8> X(); }"},
        "constructor X cannot have a return type",
        {"top": "extern X { X(); bit<8> get(); }"},
    ),
    (
        "int action parameter",
        {"ingress": "action a(int x) { } apply { }"},
        "action parameter 'x' of type int",
        {"ingress": "action a(bit<8> x) { } apply { }"},
    ),
    (
        "duplicate enum member",
        {"top": "enum Color { Red, Red }"},
        "duplicate member Color.Red",
        {"top": "enum Color { Red, Green }"},
    ),
    (
        "duplicate match_kind",
        {"top": "match_kind { exact }"},
        "match_kind exact is already declared",
        {"top": "match_kind { fuzzy }"},
    ),
    (
        "signed literal of width 0",
        {"ingress": "apply { meta.m = (bit<8>)(int<8>)0s0; }"},
        "a signed literal needs a width of at least 1",
        {"ingress": "apply { meta.m = (bit<8>)(int<8>)8s0; }"},
    ),
    (
        "control instantiated at the top level",
        {
            "top": "control C() { apply { } }\nC() c;",
        },
        "c: C cannot be instantiated at the top level",
        {"top": "control C() { apply { } }"},
    ),
    (
        "package argument of the wrong kind",
        {"main": "V1Switch(P(), VC(), I(), E(), CC(), P()) main;"},
        "does not match package parameter 'dep'",
        {"main": "V1Switch(p = P(), vr = VC(), ig = I(), eg = E(), ck = CC(), dep = D()) main;"},
    ),
    (
        "'_' for a generic out parameter",
        {"parser": "state start { pkt.extract(_); transition accept; }"},
        "'_' gives no type for parameter",
        {"parser": "state start { pkt.extract(hdr.h); transition accept; }"},
    ),
    (
        "extract of a non-header",
        {"parser": "state start { pkt.extract(meta); transition accept; }"},
        "extract needs a header, got meta_t",
        {"parser": "state start { pkt.extract(hdr.v, 8); transition accept; }"},
    ),
    (
        "extract of a varbit header without size",
        {"parser": "state start { pkt.extract(hdr.v); transition accept; }"},
        "extract(hdr, size_in_bits) is for headers with a varbit field",
        {"parser": "state start { pkt.extract(hdr.v, 16); transition accept; }"},
    ),
    (
        "lookahead<void>",
        {"parser": "state start { pkt.lookahead<void>(); transition accept; }"},
        "lookahead<void> needs a fixed-size type",
        {"parser": "state start { meta.m = pkt.lookahead<bit<8>>(); transition accept; }"},
    ),
    (
        "switch label after default",
        {
            "ingress": "apply { switch (hdr.h.a) { default: {} 1: {} } }",
        },
        "no switch label may follow the 'default' label",
        {"ingress": "apply { switch (hdr.h.a) { 1: {} default: {} } }"},
    ),
    (
        "two default labels",
        {"ingress": "apply { switch (hdr.h.a) { 1: default: {} default: {} } }"},
        "no switch label may follow the 'default' label",
        {"ingress": "apply { switch (hdr.h.a) { 1: {} 2: {} default: {} } }"},
    ),
    (
        "duplicate switch label",
        {"ingress": "apply { switch (hdr.h.a) { 1: {} 2: {} 1: {} } }"},
        "duplicate switch label",
        {"ingress": "apply { switch (hdr.h.a) { 1: {} 2: {} 3: {} } }"},
    ),
    (
        "duplicate action label",
        {
            "ingress": "action a() {} action b() {} table t { actions = { a; b; } }\n"
            "apply { switch (t.apply().action_run) { a: {} a: {} } }"
        },
        "duplicate switch label",
        {
            "ingress": "action a() {} action b() {} table t { actions = { a; b; } }\n"
            "apply { switch (t.apply().action_run) { a: {} b: {} } }"
        },
    ),
    (
        "action called from a parser",
        {
            "top": "action a() { }",
            "parser": "state start { a(); transition accept; }",
        },
        "action a cannot be called from a parser",
        {"top": "action a() { }", "ingress": "apply { a(); }"},
    ),
    (
        "action called from a function",
        {"top": "action a() { }\nbit<8> f() { a(); return 1; }"},
        "action a cannot be called from a function",
        {"top": "action a() { }\nbit<8> f() { return 1; }"},
    ),
    (
        "stack next outside a parser",
        {"ingress": "apply { hdr.st.next.a = 1; }"},
        "stack 'next' can only be used in a parser",
        {"ingress": "apply { hdr.st[1].a = 1; }"},
    ),
    (
        "stack lastIndex outside a parser",
        {"ingress": "apply { meta.m = (bit<8>)hdr.st.lastIndex; }"},
        "stack 'lastIndex' can only be used in a parser",
        {
            "parser": "state start { pkt.extract(hdr.st.next); "
            "meta.m = (bit<8>)hdr.st.lastIndex; transition accept; }"
        },
    ),
    (
        "complex key without @name",
        {
            "ingress": "action a() {} table t { key = { hdr.h.a + hdr.h.b: exact; } "
            "actions = { a; } } apply { t.apply(); }"
        },
        "needs a @name annotation",
        {
            "ingress": 'action a() {} table t { key = { hdr.h.a + hdr.h.b: exact @name("s"); '
            "hdr.h.c[7:0] & 0xf: exact; hdr.h.isValid(): exact; } "
            "actions = { a; } } apply { t.apply(); }"
        },
    ),
    (
        "direct meter read by no action of its table",
        {
            "ingress": "direct_meter<bit<2>>(MeterType.packets) m;\n"
            "action a() { } table t { key = { hdr.h.a: exact; } actions = { a; } meters = m; }\n"
            "apply { t.apply(); }"
        },
        "none of its actions reads it",
        {
            "ingress": "direct_meter<bit<2>>(MeterType.packets) m;\n"
            "action a() { m.read(meta.m[1:0]); }\n"
            "table t { key = { hdr.h.a: exact; } actions = { a; } meters = m; }\n"
            "apply { t.apply(); }"
        },
    ),
    (
        "direct meter read but attached to no table",
        {
            "ingress": "direct_meter<bit<2>>(MeterType.packets) m;\n"
            "action a() { m.read(meta.m[1:0]); } apply { a(); }"
        },
        "direct meter m is not attached to a table",
        {"ingress": "direct_meter<bit<2>>(MeterType.packets) m;\napply { }"},
    ),
    (
        "action listed twice in a table",
        {"ingress": "action a() {} table t { actions = { a; a; } } apply { t.apply(); }"},
        "action a is listed twice in table t",
        {"ingress": "action a() {} action b() {} table t { actions = { a; b; } } apply { }"},
    ),
    (
        "duplicate type parameter",
        {"top": "extern X<T, T> { X(); }"},
        "duplicate type parameter 'T' of X",
        {"top": "extern X<T, U> { X(); }"},
    ),
    (
        "duplicate extern constructor",
        {"top": "extern X { X(bit<8> a); X(bit<8> a); }"},
        "X.X(a) is declared twice",
        {"top": "extern X { X(bit<8> a); X(bit<8> b); }"},
    ),
    (
        "struct field of type string",
        {"top": "struct S { string s; }"},
        "field S.s cannot have type string",
        {"top": "struct S { bit<8> s; }"},
    ),
    (
        "package argument with other parameter directions",
        {
            "top": "control VC2(in headers_t hdr, inout meta_t meta) { apply {} }",
            "main": "V1Switch(P(), VC2(), I(), E(), CC(), D()) main;",
        },
        "parameter 'hdr' of VC2 is 'in', but VerifyChecksum declares it 'inout'",
        {
            "top": "control VC2(inout headers_t hdr, inout meta_t meta) { apply {} }",
            "main": "V1Switch(P(), VC2(), I(), E(), CC(), D()) main;",
        },
    ),
]


@pytest.mark.parametrize("name, bad, message, good", CASES, ids=[c[0] for c in CASES])
def test_check_rejects_bad_and_keeps_good(name, bad, message, good):
    compile_source(source(**good), "good.p4")  # the neighbour compiles
    with pytest.raises(P4Error) as info:
        compile_source(source(**bad), "bad.p4")
    e = info.value
    assert message in e.message
    assert e.file == "bad.p4" and e.line >= 1 and e.col >= 1
    assert str(e).startswith(f"bad.p4:{e.line}:{e.col}: error: ")


def test_table_without_default_needs_core_noaction():
    """Without core.p4 a table's implicit default action NoAction does not exist."""
    bare = (
        "extern packet_in { void extract<T>(out T hdr); }\n"
        "match_kind { exact }\n"
        "control C(inout bit<8> x) { action a() {} table t { key = { x: exact; } "
        "actions = { a; } %s } apply { t.apply(); } }\n"
    )
    with pytest.raises(P4Error, match="implicit default NoAction is not declared"):
        compile_source(bare % "", "bare.p4")
    with pytest.raises(P4Error, match="no package instantiation named 'main'"):
        compile_source(bare % "default_action = a;", "bare.p4")  # past the table check


def test_package_named_arguments_wire_by_name():
    """V1Switch(ig = ..., p = ...) in any order: each block lands where its name says."""
    prog = compile_source(
        source(main="V1Switch(ig = I(), vr = VC(), p = P(), dep = D(), ck = CC(), eg = E()) main;"),
        "named.p4",
    )
    assert [type(r).__name__ for r in prog.roots]  # built
    assert prog.checker.main.ctor_args[0].type.decl.name == "P"
    assert prog.checker.main.ctor_args[2].type.decl.name == "I"

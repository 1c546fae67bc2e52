"""Type-system checks of p4sim's front end for programs p4c rejects (generic types, type
arguments, tuples, package arguments, overloads), each bad program beside a valid
neighbour, as in test_lang_rejects.py.

Run: .venv/bin/pytest p4sim/tests/test_lang_rejects_types.py
"""

import pytest

from p4sim.errors import P4Error
from p4sim.frontend import compile_source
from p4sim.tests.reject_programs import check_rejects_bad_and_keeps_good, source


def test_extern_method_overloads_of_the_same_arity_are_ambiguous():
    # p4c: "Ambiguous method"; core.p4's packet_in.extract (1 or 2 arguments) still resolves
    bad = source(
        top="extern X { X(); void m(in bit<8> a); void m(in bit<8> b); }",
        ingress="X() x; apply { x.m(hdr.h.a); }",
    )
    with pytest.raises(P4Error, match="ambiguous call: X declares 2 methods 'm' taking 1"):
        compile_source(bad, "bad.p4")


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


def test_switch_on_a_value_needs_core_exact():
    """p4c implements a switch on a value as a table with an exact key: core.p4's
    match_kind exact must be declared."""
    bare = (
        "%s\ncontrol C(in bit<4> a) { apply { switch (a) { 0: { } default: { } } } }\n"
        "control C_t(in bit<4> a);\npackage Pkg(C_t c);\nPkg(C()) main;\n"
    )
    with pytest.raises(P4Error, match="a switch on a value needs match_kind 'exact'"):
        compile_source(bare % "", "bare.p4")
    with pytest.raises(P4Error, match="main must be a V1Switch package"):
        compile_source(bare % "match_kind { exact }", "bare.p4")  # past the switch check


def test_package_argument_may_leave_out_parameters_with_defaults():
    """A control type's trailing parameters with a default value need not be declared by the
    control passed for it (p4c accepts this); any other missing parameter is an error."""
    prog = (
        "control C_t(inout bit<8> x, in bit<8> y%s);\npackage Pkg(C_t c);\n"
        "control C(inout bit<8> x) { apply { } }\nPkg(C()) main;\n"
    )
    with pytest.raises(P4Error, match="main must be a V1Switch package"):
        compile_source(prog % " = 1", "default.p4")  # past the package argument check
    with pytest.raises(P4Error, match="control C has 1 parameter"):
        compile_source(prog % "", "default.p4")


def test_package_named_arguments_wire_by_name():
    """V1Switch(ig = ..., p = ...) in any order: each block lands where its name says."""
    prog = compile_source(
        source(main="V1Switch(ig = I(), vr = VC(), p = P(), dep = D(), ck = CC(), eg = E()) main;"),
        "named.p4",
    )
    assert [type(r).__name__ for r in prog.roots]  # built
    assert prog.checker.main.ctor_args[0].type.decl.name == "P"
    assert prog.checker.main.ctor_args[2].type.decl.name == "I"


# Type-system checks (generic types, type arguments, tuples, package arguments).
TYPE_CASES = [
    (
        "tuple of string",
        {"top": "extern X1 { X1(); void f(in tuple<string> t); }"},
        "a tuple cannot hold an element of type string",
        {"top": "extern X1 { X1(); void f(in tuple<bit<8>> t); }"},
    ),
    (
        "tuple of an extern object",
        {"top": "extern X1 { X1(); } extern X2 { X2(); tuple<X1, bit<8>> f(); }"},
        "a tuple cannot hold an element of type extern X1",
        {"top": "extern X1 { X1(); } extern X2 { X2(); tuple<bit<8>, bit<8>> f(); }"},
    ),
    (
        "extern that refers to itself",
        {"top": "extern Node { Node(); void link(Node other); }"},
        "extern Node refers to itself in link",
        {"top": "extern Node { Node(); void link(bit<8> other); }"},
    ),
    (
        "generic extern with itself as type argument",
        {"top": "extern Box<T> { Box(); void put(in T v); }\ntypedef Box<Box<bit<8>>> B;"},
        "Box cannot have itself as (or in) a type argument",
        {"top": "extern Box<T> { Box(); void put(in T v); }\ntypedef Box<bit<8>> B;"},
    ),
    (
        "type arguments for a type that is not generic",
        {"ingress": "apply { h_t<bit<8>> x; x.setInvalid(); }"},
        "type h_t is not generic (or already specialised)",
        {"ingress": "apply { h_t x; x.setInvalid(); }"},
    ),
    (
        "type arguments for an already specialised typedef",
        {"top": "extern Box<T> { Box(); }\ntypedef Box<bit<8>> B8;\ntypedef B8<bit<8>> B;"},
        "type B8 is not generic (or already specialised)",
        {"top": "extern Box<T> { Box(); }\ntypedef Box<bit<8>> B8;\ntypedef B8 B;"},
    ),
    (
        "undeclared type argument in a prototype",
        {"top": "parser Pt<T>(in T i);\npackage Pk(Pt<U> p);"},
        "unknown type 'U'",
        {"top": "parser Pt<T>(in T i);\npackage Pk(Pt<bit<8>> p);"},
    ),
    (
        "integer without a width for a type variable",
        {"ingress": "apply { hash(meta.m, HashAlgorithm.crc16, 8w0, { hdr.h.a }, 16); }"},
        "could not infer a width for parameter 'max' of hash",
        {"ingress": "apply { hash(meta.m, HashAlgorithm.crc16, 8w0, { hdr.h.a }, 8w16); }"},
    ),
    (
        "conflicting types inferred for one type variable",
        {"ingress": "apply { random(meta.m, 0, 16w255); }"},
        "(parameter 'hi' of random has type T, which is bit<8> here)",
        {"ingress": "apply { random(meta.m, 0, 255); }"},  # T from meta.m, then 0 and 255
    ),
    (
        "wrong number of type arguments in a call",
        {"ingress": "apply { random<bit<8>, bit<8>>(meta.m, 0, 1); }"},
        "random takes 1 type argument(s), got 2",
        {"ingress": "apply { random<bit<8>>(meta.m, 0, 1); }"},
    ),
    (
        "type arguments in an action call",
        {"ingress": "action a() { } apply { a<bit<8>>(); }"},
        "action a is not generic",
        {"ingress": "action a() { } apply { a(); }"},
    ),
    (
        "a table as an argument",
        {"ingress": 'table t { actions = { NoAction; } } apply { log_msg("t", t); }'},
        "a table cannot be passed as an argument",
        {"ingress": 'table t { actions = { NoAction; } } apply { log_msg("t", {hdr.h.a}); }'},
    ),
    (
        "a string for a directional generic parameter",
        {"ingress": 'apply { log_msg("a", "b"); }'},
        "parameter 'data' of log_msg has a direction (in), so its type T cannot be string",
        {"ingress": 'apply { log_msg("a", { hdr.h.a }); }'},
    ),
    (
        "instance type argument `_` that nothing determines",
        {"ingress": "register<_>(4) r; apply { r.write(0, meta.m); }"},
        "could not infer a type for parameter 'value' of register.write",
        {"ingress": "register<bit<8>>(4) r; apply { r.write(0, meta.m); }"},  # index: bit<32>
    ),
    (
        "extern type parameter no constructor argument determines",
        {"ingress": "register(32w4) r; apply { r.write(0, meta.m); }"},
        "r: could not infer a type for type parameter T of register",
        {"ingress": "register<bit<8>, bit<32>>(32w4) r; apply { r.write(0, meta.m); }"},
    ),
    (
        "'type' over a header",
        {"top": "type h_t HT;"},
        "'type' can only define a new type over bit<W>, int<W>, bool or another 'type'",
        {"top": "type bit<8> HT;"},
    ),
    (
        "'type' value assigned from its base type without a cast",
        {"top": "type bit<8> T8;", "ingress": "apply { T8 x = hdr.h.a; }"},
        "expected a value of type T8, got bit<8> (cast it: (T8)(...))",
        {"top": "type bit<8> T8;", "ingress": "apply { T8 x = (T8)hdr.h.a; T8 y = 1; }"},
    ),
    (
        "arithmetic on a 'type' value",
        {"top": "type bit<8> T8;", "ingress": "apply { T8 x = (T8)hdr.h.a; x = x + 1; }"},
        "'+' cannot take a value of type T8, a 'type' over bit<8>",
        {
            "top": "type bit<8> T8;",
            "ingress": "apply { T8 x = (T8)hdr.h.a; x = (T8)((bit<8>)x + 1); }",
        },
    ),
    (
        "'type' value compared with an integer",
        {"top": "type bit<8> T8;", "ingress": "apply { T8 x = (T8)hdr.h.a; if (x == 1) { } }"},
        "'==' cannot take a value of type T8",
        {"top": "type bit<8> T8;", "ingress": "apply { T8 x = (T8)hdr.h.a; if (x == x) { } }"},
    ),
    (
        "'type' value as a shift amount",
        {"top": "type bit<8> T8;", "ingress": "apply { hdr.h.b = hdr.h.b << (T8)hdr.h.a; }"},
        "'<<' cannot take a value of type T8",
        {"top": "type bit<8> T8;", "ingress": "apply { hdr.h.b = hdr.h.b << hdr.h.a; }"},
    ),
    (
        "cast between 'type's over different bases",
        {"top": "type bit<8> T8;\ntype bit<16> T16;", "ingress": "apply { T16 y = (T16)(T8)1; }"},
        "cannot cast T8 to T16: a 'type' casts only to and from its base type",
        {"top": "type bit<8> T8;\ntype T8 U8;", "ingress": "apply { U8 y = (U8)(T8)1; }"},
    ),
    (
        "'type' over bool as a condition",
        {"top": "type bool B;", "ingress": "apply { B b = (B)true; if (b) { } }"},
        "condition must be bool, not B",
        {"top": "type bool B;", "ingress": "apply { B b = (B)true; if ((bool)b) { } }"},
    ),
    (
        "package argument whose parameter types do not unify",
        {
            "top": "control VC2(inout meta_t hdr, inout meta_t meta) { apply {} }",
            "main": "V1Switch(P(), VC2(), I(), E(), CC(), D()) main;",
        },
        "parameter 'hdr' of VC2 has type meta_t, but VerifyChecksum declares it headers_t",
        {
            "top": "control VC2(inout headers_t hdr, inout meta_t meta) { apply {} }",
            "main": "V1Switch(P(), VC2(), I(), E(), CC(), D()) main;",
        },
    ),
]


@pytest.mark.parametrize("name, bad, message, good", TYPE_CASES, ids=[c[0] for c in TYPE_CASES])
def test_type_check_rejects_bad_and_keeps_good(name, bad, message, good):
    check_rejects_bad_and_keeps_good(bad, message, good)


ENUMS = "enum bit<16> E16 { A = 1, B = 2 }\nenum bit<16> F16 { A = 1 }\n"


@pytest.mark.parametrize(
    "bad, good",
    [
        ("E16 e = (E16) hdr.h.a;", "E16 e = (E16) hdr.h.c;"),  # bit<8> is not bit<16>
        ("E16 e = (E16) (int<16>) hdr.h.c;", "E16 e = (E16) F16.A;"),  # another enum over it
        ("E16 e = (E16) 8w1;", "E16 e = (E16) 1;"),  # an untyped integer converts
        ("hdr.h.a = (bit<8>) E16.A;", "hdr.h.c = (bit<16>) E16.A;"),
        ("hdr.h.c = (bit<16>) (int<16>) E16.A;", "hdr.h.c = (bit<16>) E16.B;"),
    ],
)
def test_a_serializable_enum_casts_only_to_and_from_its_underlying_type(bad, good):
    """p4c (type-error "Cannot cast"): an enum over bit<16> converts to and from bit<16>, an
    integer literal and another enum over bit<16>, not to or from another width or
    signedness (each pair checked against p4c-bm2-ss)."""
    check_rejects_bad_and_keeps_good(
        {"top": ENUMS, "ingress": f"apply {{ {bad} }}"},
        "a serializable enum casts only to and from its underlying type (bit<16>)",
        {"top": ENUMS, "ingress": f"apply {{ {good} }}"},
    )

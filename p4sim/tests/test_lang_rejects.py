"""Checks p4sim's front end has for programs p4c rejects, one small program of our own per
class (the corpus run is `python -m p4sim.rejects`, `make p4sim-rejects`). Each bad program
sits beside a valid neighbour that must still compile, so a check can't reject good code.
Type-system checks: test_lang_rejects_types.py; the program skeleton: reject_programs.py.

Run: .venv/bin/pytest p4sim/tests/test_lang_rejects.py
"""

import pytest

from p4sim.tests.reject_programs import check_rejects_bad_and_keeps_good, ternary_table

# (class of check, the bad program's parts, message fragment, line, the valid neighbour)
CASES = [
    # -- tables: what the actions list binds (spec 14.2.1.2-14.2.1.4) ---------------------
    (
        "default action binding another argument",
        {
            "ingress": "action a(inout bit<8> x, bit<8> y) { x = y; }\n"
            "table t { actions = { a(meta.m); } default_action = a(hdr.h.a, 1); }\n"
            "apply { t.apply(); }"
        },
        "must be the one bound in table t's actions list",
        {
            "ingress": "action a(inout bit<8> x, bit<8> y) { x = y; }\n"
            "table t { actions = { a(meta.m); } default_action = a(meta.m, 1); }\n"
            "apply { t.apply(); }"
        },
    ),
    (
        "entry binding another constant",
        {
            "ingress": "action a(in bit<8> x, bit<8> y) { meta.m = x + y; }\n"
            "table t { key = { hdr.h.a: exact; } actions = { a(1); }\n"
            "const entries = { 7 : a(2, 3); } }\napply { t.apply(); }"
        },
        "argument of in parameter 'x' of action a must be the one bound",
        {
            "ingress": "action a(in bit<8> x, bit<8> y) { meta.m = x + y; }\n"
            "table t { key = { hdr.h.a: exact; } actions = { a(1); }\n"
            "const entries = { 7 : a(8w1, 3); } }\napply { t.apply(); }"
        },
    ),
    (
        "default action binding other struct fields",
        {
            "top": "struct pair_t { bit<8> f0; bit<8> f1; }",
            "ingress": "action a(in pair_t v) { meta.m = v.f0; }\n"
            "table t { actions = { a({f0 = hdr.h.a, f1 = hdr.h.b}); }\n"
            "default_action = a({f1 = hdr.h.a, f0 = hdr.h.b}); }\napply { t.apply(); }",
        },
        "argument of in parameter 'v' of default action a must be the one bound",
        {
            "top": "struct pair_t { bit<8> f0; bit<8> f1; }",
            "ingress": "action a(in pair_t v) { meta.m = v.f0; }\n"
            "table t { actions = { a({f0 = hdr.h.a, f1 = hdr.h.b}); }\n"
            "default_action = a({f1 = hdr.h.b, f0 = hdr.h.a}); }\napply { t.apply(); }",
        },
    ),
    (
        "default action of another declaration",
        {
            "top": "action b() { }",
            "ingress": "action b() { } table t { actions = { b; } default_action = .b(); }\n"
            "apply { t.apply(); }",
        },
        "(the listed one is a different declaration)",
        {
            "top": "action b() { }",
            "ingress": "action b() { } table t { actions = { b; } default_action = b(); }\n"
            "apply { t.apply(); }",
        },
    ),
    (
        "default_action before actions",
        {"ingress": "action a() { } table t { default_action = a; actions = { a; } }\napply { }"},
        "default_action must come after the actions property",
        {"ingress": "action a() { } table t { actions = { a; } default_action = a; }\napply { }"},
    ),
    (
        "table applied in an action argument",
        {
            "ingress": "action a(in bit<8> x) { meta.m = x; } action b() { }\n"
            "table s { actions = { b; } }\n"
            "table t { actions = { a(s.apply().hit ? 8w1 : 8w2); } } apply { t.apply(); }"
        },
        "a table cannot be applied inside an action argument",
        {
            "ingress": "action a(in bit<8> x) { meta.m = x; } action b() { }\n"
            "table s { actions = { b; } }\n"
            "table t { actions = { a(hdr.h.a); } } apply { s.apply(); t.apply(); }"
        },
    ),
    # -- table entries (spec 14.2.1.4, "Entry priorities") --------------------------------
    (
        "entry priority counted below zero",
        {
            "ingress": ternary_table(
                "priority = 12: 1 : a(1); 2 : a(2); 3 : a(3);", priority_delta=10
            )
        },
        "this entry's priority comes out as -8",
        {
            "ingress": ternary_table(
                "priority = 30: 1 : a(1); 2 : a(2); 3 : a(3);", priority_delta=10
            )
        },
    ),
    (
        "duplicate key in an exact table",
        {"ingress": ternary_table("1 : a(1); 2 : a(2); 1 : a(3);", key="hdr.h.a: exact;")},
        "duplicate entry key (the same as line",
        {"ingress": ternary_table("1 : a(1); 2 : a(2); 3 : a(3);", key="hdr.h.a: exact;")},
    ),
    # -- annotations (spec 18; the bodies p4c parses) -------------------------------------
    (
        "@pkginfo without key=value pairs",
        {"top": "@pkginfo const bit<8> X = 1;"},
        "@pkginfo must hold key=value pairs",
        {"top": '@pkginfo(version = "1.0", contact = "me") const bit<8> X = 1;'},
    ),
    (
        "a character no token starts with, outside an annotation body",
        {"top": "const bit<8> X = 1 ' 2;"},
        'unexpected character "\'"',
        {"top": "@note(it's free-form: ' $ `) const bit<8> X = 1;"},  # p4c's free-form bodies
    ),
    (
        "@pkginfo on main with a value not a string",
        {"main": "@pkginfo(name = 1) V1Switch(P(), VC(), I(), E(), CC(), D()) main;"},
        "@pkginfo: the value of 'name' must be a string",
        {
            "main": '@pkginfo(name = "prog.p4", color = 1) V1Switch(P(), VC(), I(), E(), CC(), D()) main;'
        },  # unknown keys: ignored
    ),
    (
        "@pkginfo with a key twice",
        {"main": '@pkginfo(name = "a", name = "b") V1Switch(P(), VC(), I(), E(), CC(), D()) main;'},
        "@pkginfo: duplicate key 'name'",
        {
            "main": '@pkginfo(name = "a", version = "b") V1Switch(P(), VC(), I(), E(), CC(), D()) main;'
        },
    ),
    (
        "@platform_property without key=value pairs",
        {"main": "@platform_property(64) V1Switch(P(), VC(), I(), E(), CC(), D()) main;"},
        "@platform_property must hold key=value pairs",
        {
            "main": "@platform_property(multicast_group_table_size = 64) V1Switch(P(), VC(), I(), E(), CC(), D()) main;"
        },
    ),
    (
        "@platform_property with a value not an integer",
        {
            "main": '@platform_property(multicast_group_table_size = "64") V1Switch(P(), VC(), I(), E(), CC(), D()) main;'
        },
        "@platform_property: the value of 'multicast_group_table_size' must be an integer",
        {
            "main": "@platform_property(multicast_group_table_size = 64) V1Switch(P(), VC(), I(), E(), CC(), D()) main;"
        },
    ),
    (
        "@name of a number",
        {"ingress": "@name(4) action a() { } apply { a(); }"},
        "@name must hold a string",
        {"ingress": '@name ("a" ++ "b") action a() { } apply { a(); }'},
    ),
    (
        "@deprecated of a non-string expression",
        {"top": '@deprecated("a" | "b") extern void f();'},
        "@deprecated must hold a string",
        {"top": '@deprecated("use g" ++ "()") extern void f();'},
    ),
    (
        "structured annotation given twice",
        {"top": "@a[] @a[1] const bit<8> X = 1;"},
        "@a: duplicate name for structured annotation",
        {"top": "@a[1] @b[2] const bit<8> X = 1;"},
    ),
    (
        "structured and unstructured annotation of one name",
        {"top": "@a(1) @a[2] const bit<8> X = 1;"},
        "@a: duplicate name for structured annotation",
        {"top": "@a(1) @a(2) const bit<8> X = 1;"},
    ),
    (
        "structured annotation with a list value",
        {"top": "@a[x = {1, 2}] const bit<8> X = 1;"},
        "illegal type list for a structured annotation value",
        {"top": '@a[x = 2 * 3, y = "s", z = 1 == 2] const bit<8> X = 1;'},
    ),
    (
        "structured annotation with a bit<W> value",
        {"top": "@a[8w1] const bit<8> X = 1;"},
        "illegal type bit<8> for a structured annotation value; must be int, string or bool",
        {"top": "@a[1, X2] const int X2 = 1; @b[X2] const bit<8> X = 1;"},
    ),
    (
        "structured annotation with a key twice",
        {"top": "@a[k = 1, k = 2] const bit<8> X = 1;"},
        "@a: duplicate key 'k' in structured annotation",
        {"top": "@a[k = 1, l = 2] const bit<8> X = 1;"},
    ),
    (
        "structured annotation mixing keys and expressions",
        {"top": "@a[k = 1, 2] const bit<8> X = 1;"},
        "expressions or key=value pairs, not both",
        {"top": "@a[1, 2] const bit<8> X = 1;"},
    ),
    # -- syntax ---------------------------------------------------------------------------
    (
        "'_' as a field type",
        {"top": "struct s1 { _ f; }"},
        "expected the type of a field ('_' is not a type here)",
        {"top": "struct s1 { bit<8> f; }"},
    ),
    (
        "type name as an operand",
        {"ingress": "apply { meta.m = meta_t + 3; }"},
        "expected '(' or '.' after the type name meta_t",
        {"ingress": "apply { bit<8> meta_t = 3; meta.m = meta_t + 3; }"},
    ),
    # -- declarations and main ------------------------------------------------------------
    (
        "package argument with another number of parameters",
        {
            "top": "control CC3(inout headers_t hdr, inout meta_t meta, "
            "inout standard_metadata_t sm) { apply { } }",
            "main": "V1Switch(P(), VC(), I(), E(), CC3(), D()) main;",
        },
        "control CC3 has 3 parameter(s), but package parameter 'ck' of type ComputeChecksum",
        {
            "top": "control CC3(inout headers_t hdr, inout meta_t meta) { apply { } }",
            "main": "V1Switch(P(), VC(), I(), E(), CC3(), D()) main;",
        },
    ),
    (
        "V1Switch with a header as its headers type",
        {
            "top": "parser P2(packet_in pkt, out h_t hdr, inout meta_t meta, "
            "inout standard_metadata_t sm) { state start { pkt.extract(hdr); transition accept; } }\n"
            "control VC2(inout h_t hdr, inout meta_t meta) { apply { } }\n"
            "control I2(inout h_t hdr, inout meta_t meta, inout standard_metadata_t sm) "
            "{ apply { } }\n"
            "control CC2(inout h_t hdr, inout meta_t meta) { apply { } }\n"
            "control D2(packet_out pkt, in h_t hdr) { apply { pkt.emit(hdr); } }",
            "main": "V1Switch(P2(), VC2(), I2(), I2(), CC2(), D2()) main;",
        },
        "V1Switch: the headers type must be a struct, got h_t",
        {},
    ),
    (
        "main an extern instance",
        {"main": "extern X { X(); }\nX() main;"},
        "main must be a package instantiation such as V1Switch(...) main; here it is an instance",
        {"main": "extern X { X(); }\nV1Switch(P(), VC(), I(), E(), CC(), D()) main;"},
    ),
    (
        "main a declaration",
        {"main": "extern main { }"},
        "main must be a package instantiation",
        {"main": "extern main_t { }\nV1Switch(P(), VC(), I(), E(), CC(), D()) main;"},
    ),
    (
        "control instantiating itself",
        {"top": "control C2() { C2() c; apply { c.apply(); } }"},
        "c: C2 cannot instantiate itself",
        {"top": "control C3() { apply { } }\ncontrol C2() { C3() c; apply { c.apply(); } }"},
    ),
    (
        "local shadowing a parameter",
        {"ingress": "apply { headers_t hdr = hdr; }"},
        "declaration of 'hdr' shadows the parameter 'hdr'",
        {
            "ingress": "action a(bit<8> x) { bit<8> y = x; meta.m = y; } apply { headers_t h = hdr; }"
        },
    ),
    (
        "function without a return on every path",
        {"top": "bit<8> f(in bit<8> x) { if (x > 1) { return x; } }"},
        "function 'f' does not return a value on all paths",
        {
            "top": "bit<8> f(in bit<8> x) { if (x > 1) { return x; } else { return 0; } }\n"
            "bit<8> g(in bit<8> x) { switch (x) { 1: { return 1; } default: { return 2; } } }"
        },
    ),
    (
        "parser that never reaches accept or reject",
        {"parser": "state start { transition s1; } state s1 { transition start; }"},
        "parser P never reaches the accept or reject state",
        {
            "parser": "state start { transition s1; }\n"
            "state s1 { transition select(meta.m) { 1: start; default: reject; } }"
        },
    ),
    (
        "@match of a value that is no match_kind",
        {"top": "struct m2 { @match(1 + 1) bit<8> f; }"},
        "@match of field m2.f must name one match_kind",
        {"top": "struct m2 { @match(ternary) bit<8> f; }"},
    ),
    (
        "extern parameter of a control with a direction",
        {
            "top": "control c(inout bit<8> x, in register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<8>>(4) cells; c() sub;\napply { sub.apply(meta.m, cells); }",
        },
        "parameter 'r' of type extern register must be directionless (remove 'in')",
        {
            "top": "control c(inout bit<8> x, register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<8>>(4) cells; c() sub;\napply { sub.apply(meta.m, cells); }",
        },
    ),
    (
        "extern object of another element type passed to a control",
        {
            "top": "control c(inout bit<8> x, register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<16>>(4) cells; c() sub;\n"
            "apply { sub.apply(meta.m, cells); }",
        },
        "expected a register<bit<8>>, got a register<bit<16>>",
        {
            "top": "control c(inout bit<8> x, register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<8>>(4) cells; c() sub;\napply { sub.apply(meta.m, cells); }",
        },
    ),
    (
        "one control instance given two different extern objects",
        {
            "top": "control c(inout bit<8> x, register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<8>>(4) r1; register<bit<8>>(4) r2; c() sub;\n"
            "apply { sub.apply(meta.m, r1); sub.apply(meta.m, r2); }",
        },
        "applying I.sub with two different objects for its parameter 'r' (I.r1, I.r2)",
        {
            "top": "control c(inout bit<8> x, register<bit<8>> r) { apply { r.read(x, 0); } }",
            "ingress": "register<bit<8>>(4) r1; register<bit<8>>(4) r2; c() sub;\n"
            "apply { sub.apply(meta.m, r1); sub.apply(meta.m, r1); }",
        },
    ),
    (
        "generic struct with itself as its type argument",
        {"top": "struct w_t<T> { T x; }", "ingress": "apply { w_t<w_t<bit<8>>> v; meta.m = 1; }"},
        "struct w_t cannot have itself as a type argument",
        {"top": "struct w_t<T> { T x; }", "ingress": "apply { w_t<bit<8>> v; meta.m = 1; }"},
    ),
    (
        "generic struct without its type arguments",
        {"top": "struct w_t<T> { T x; }", "ingress": "apply { w_t v; meta.m = 1; }"},
        "struct w_t takes 1 type argument(s) (T), got 0",
        {"top": "struct w_t<T> { T x; }", "ingress": "apply { w_t<bool> v; meta.m = 1; }"},
    ),
    (
        "'...' before the end of an initializer",
        {
            "top": "struct p_t { bit<8> a; bit<8> b; }",
            "ingress": "apply { p_t v = { a = 1, ..., b = 2 }; meta.m = v.a; }",
        },
        "expected '}' after '...' (it ends an initializer)",
        {
            "top": "struct p_t { bit<8> a; bit<8> b; }",
            "ingress": "apply { p_t v = { a = 1, ... }; meta.m = v.a; }",
        },
    ),
    (
        "'...' for a value that is not a struct, header or tuple",
        {"ingress": "apply { meta.m = { ... }; }"},
        "an initializer with '...' needs the struct, header or tuple type it initializes",
        {"ingress": "apply { meta.m = 0; }"},
    ),
    (
        "generic function comparing values of its type parameter",
        {
            "top": "T larger<T>(in T x, in T y) { if (x > y) { return x; } return y; }",
            "ingress": "apply { meta.m = larger(hdr.h.a, hdr.h.b); }",
        },
        "'>' needs integer operands, got T",
        {
            "top": "T pick<T>(in bool c, in T x, in T y) { if (c) { return x; } return y; }",
            "ingress": "apply { meta.m = pick(hdr.h.a > hdr.h.b, hdr.h.a, hdr.h.b); }",
        },
    ),
    (
        "generic function whose type argument nothing gives",
        {
            "top": "T zero<T>() { T z; return z; }",
            "ingress": "apply { meta.m = 1; bit<8> v = zero(); }",
        },
        "cannot infer type parameter(s) T of zero",
        {
            "top": "T zero<T>() { T z; return z; }",
            "ingress": "apply { meta.m = 1; bit<8> v = zero<bit<8>>(); }",
        },
    ),
    (
        "generic control with a table key of its type parameter",
        {
            "top": "control L<K>(in K k) { action a() { } table t { key = { k : exact; } "
            "actions = { a; } } apply { t.apply(); } }",
            "ingress": "L<bit<8>>() l; apply { l.apply(hdr.h.a); }",
        },
        "a table key must have a scalar type, not K",
        {
            "top": "control L(in bit<8> k) { action a() { } table t { key = { k : exact; } "
            "actions = { a; } } apply { t.apply(); } }",
            "ingress": "L() l; apply { l.apply(hdr.h.a); }",
        },
    ),
    (
        "generic control instantiated without its type arguments",
        {
            "top": "control S<T>(inout T p, inout T q) { apply { T t = p; p = q; q = t; } }",
            "ingress": "S() s; apply { s.apply(hdr.h.a, hdr.h.b); }",
        },
        "generic control S needs its 1 type argument(s) (T)",
        {
            "top": "control S<T>(inout T p, inout T q) { apply { T t = p; p = q; q = t; } }",
            "ingress": "S<bit<8>>() s; apply { s.apply(hdr.h.a, hdr.h.b); }",
        },
    ),
    (
        "struct constant with a field that is not constant",
        {
            "top": "struct pair_t { bit<8> f0; bit<8> f1; }",
            "ingress": "apply { const pair_t c = { f0 = 1, f1 = hdr.h.a }; meta.m = c.f0; }",
        },
        "constant 'c' needs a compile-time constant value",
        {
            "top": "struct pair_t { bit<8> f0; bit<8> f1; }",
            "ingress": "apply { const pair_t c = { f0 = 1, f1 = 2 }; meta.m = c.f0; }",
        },
    ),
    (
        "default parameter value that is not constant",
        {
            "top": "bit<8> h(in bit<8> a) { return a; }\n"
            "bit<8> f(in bit<8> a = h(1), in bit<8> b) { return b; }",
            "ingress": "apply { meta.m = f(b = hdr.h.a); }",
        },
        "default value of parameter 'a' must be a compile-time constant",
        {
            "top": "bit<8> f(in bit<8> a = 1 + 1, in bit<8> b) { return a + b; }",
            "ingress": "apply { meta.m = f(b = hdr.h.a); }",
        },
    ),
    (
        "extern objects compared",
        {"top": "extern X { X(); }", "ingress": "X() x1; X() x2; apply { if (x1 == x2) { } }"},
        "extern objects cannot be compared ('==' on X)",
        {"top": "extern X { X(); }", "ingress": "apply { if (hdr.h.a == 1) { } }"},
    ),
    # -- constant folding and what p4c folds ----------------------------------------------
    (
        "division by a negative number",
        {"ingress": "apply { meta.m = hdr.h.a / -1; }"},
        "'/' is not defined on negative numbers (-1)",
        {"ingress": "apply { meta.m = hdr.h.a / 1; }"},
    ),
    (
        "division of a packet field by a packet field",
        {"ingress": "apply { meta.m = hdr.h.a / hdr.h.b; }"},
        "'/' of a run-time value needs a constant power-of-two divisor",
        {
            "ingress": "apply { meta.m = hdr.h.a / 4; meta.m = meta.m % 8; meta.m = 9 / 3;\n"
            "bit<8> d = 16; meta.m = hdr.h.b / d; }"
        },
    ),
    (
        "modulo by a local that p4c propagates to 3",
        {"ingress": "apply { bit<8> d = 3; meta.m = hdr.h.a % d; }"},
        "'%' of a run-time value needs a constant power-of-two divisor",
        {"ingress": "apply { bit<8> d = 3; d = hdr.h.b; meta.m = hdr.h.a % (d + 1); }"},
    ),
    (
        "constant shift wider than p4c folds",
        {"ingress": "apply { meta.m = (bit<8>)(1 << 3000); }"},
        "constant shift by 3000: p4c folds shifts of constants by at most 2048 bits",
        {"ingress": "apply { meta.m = (bit<8>)(1 << 2048); }"},
    ),
    # -- what BMv2 (p4c-bm2-ss) does not support ------------------------------------------
    (
        "switch in an action",
        {"ingress": "action a() { switch (hdr.h.a) { 1: { } } } apply { a(); }"},
        "BMv2 (p4c-bm2-ss) does not support switch statements in actions (a)",
        {
            "ingress": "action a() { switch (hdr.h.a) { 1: { } } } apply { switch (hdr.h.a) { 1: { } } }"
        },
    ),
    (
        "run-time index into a stack of header unions",
        {
            "top": "header_union u_t { h_t x; }",
            "ingress": "u_t[2] us; apply { us[meta.m].x.a = 1; }",
        },
        "does not support a run-time index into a stack of header unions (u_t[2])",
        {
            "top": "header_union u_t { h_t x; }",
            "ingress": "u_t[2] us; apply { us[1].x.setValid(); bit<8> i = 0; us[i].x.a = 2; }",
        },
    ),
    (
        "struct of headers to an extern's inout parameter",
        {
            "top": "struct nest_t { h_t h; }\nextern void ext(inout nest_t v);",
            "ingress": "nest_t n; apply { ext(n); }",
        },
        "struct of structs or headers (nest_t) to the inout parameter 'v' of extern ext",
        {
            "top": "struct nest_t { h_t h; }\nextern void ext(inout nest_t v);\n"
            "control Unused() { nest_t n; apply { ext(n); } }",
        },
    ),
    (
        "recirculate in ingress",
        {"ingress": "apply { recirculate_preserving_field_list(0); }"},
        "takes recirculate_preserving_field_list in egress only, not in ingress (I)",
        {
            "top": "control Eg(inout headers_t hdr, inout meta_t meta,\n"
            "inout standard_metadata_t sm) { apply { recirculate_preserving_field_list(0); } }",
            "main": "V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;",
        },
    ),
    (
        "an I2E clone in an action egress uses",
        {
            "top": "control Eg(inout headers_t hdr, inout meta_t meta,\n"
            "inout standard_metadata_t sm) {\n"
            "action a() { clone(CloneType.I2E, 5); } apply { a(); } }",
            "main": "V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;",
        },
        "takes clone(CloneType.I2E, ...) in ingress only, not in egress (Eg)",
        {  # p4c drops the unused action first
            "top": "control Eg(inout headers_t hdr, inout meta_t meta,\n"
            "inout standard_metadata_t sm) {\n"
            "action a() { clone(CloneType.I2E, 5); } apply { } }",
            "main": "V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;",
        },
    ),
    # -- v1model calls this p4c's BMv2 back end refuses although v1model.p4 declares them,
    # -- each beside the same call in code p4c drops (which p4c-bm2-ss accepts) --------------
    (
        "the deprecated resubmit(data)",
        {"ingress": "apply { resubmit(meta); }"},
        "resubmit() is not in the v1model that BMv2's compiler (p4c-bm2-ss) takes",
        {"ingress": "apply { if (false) { resubmit(meta); } }"},
    ),
    (
        "the deprecated recirculate(data) in an applied table's action",
        {
            "ingress": "action r() { recirculate({meta.m}); }\n"
            "table t { key = { hdr.h.a: exact; } actions = { r; } } apply { t.apply(); }"
        },
        "the deprecated form; use recirculate_preserving_field_list(index)",
        {  # the table is never applied: p4c drops it, then its unused action
            "ingress": "action r() { recirculate({meta.m}); }\n"
            "table t { key = { hdr.h.a: exact; } actions = { r; } } apply { }"
        },
    ),
    (
        "the deprecated clone3(type, session, data)",
        {"ingress": "apply { clone3(CloneType.I2E, 5, {meta.m}); }"},
        "use clone_preserving_field_list(type, session, index)",
        {"ingress": "apply { exit; clone3(CloneType.I2E, 5, {meta.m}); }"},
    ),
    (
        "the deprecated mark_to_drop()",
        {"ingress": "action a() { mark_to_drop(); } apply { a(); }"},
        "mark_to_drop() is not in the v1model that BMv2's compiler (p4c-bm2-ss) takes",
        {"ingress": "action a() { mark_to_drop(sm); } apply { a(); }"},
    ),
    (
        "the deprecated Checksum16.get",
        {"ingress": "Checksum16() c; apply { hdr.h.c = c.get(hdr.h); }"},
        "Checksum16.get() is not in the v1model that BMv2's compiler (p4c-bm2-ss) takes",
        {"ingress": "Checksum16() c; apply { if (false) { hdr.h.c = c.get(hdr.h); } }"},
    ),
    (
        "resubmit in egress, not dropped by p4c",
        {
            "top": "control Eg(inout headers_t hdr, inout meta_t meta,\n"
            "inout standard_metadata_t sm) {\n"
            "action r() { resubmit_preserving_field_list(0); }\n"
            "table t { key = { hdr.h.a: exact; } actions = { r; } } apply { t.apply(); } }",
            "main": "V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;",
        },
        "takes resubmit_preserving_field_list in ingress only, not in egress (Eg)",
        {  # the spec's reading and p4c's: a call that can never run is no call (BMv2
            # never sees it); after `return`, under `if (false)`, in an unapplied table
            "top": "control Eg(inout headers_t hdr, inout meta_t meta,\n"
            "inout standard_metadata_t sm) {\n"
            "action r() { resubmit_preserving_field_list(0); }\n"
            "table t { key = { hdr.h.a: exact; } actions = { r; } }\n"
            "apply { if (false) { t.apply(); } if (1 == 2) { r(); }\n"
            "return; resubmit_preserving_field_list(0); } }",
            "main": "V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;",
        },
    ),
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
        "negative priority_delta (p4c takes 0)",
        {"ingress": ternary_table("priority = 3: 1 : a(1); 2 : a(2);", priority_delta=-1)},
        "priority_delta cannot be negative",
        {"ingress": ternary_table("priority = 3: 1 : a(1); 2 : a(2);", priority_delta=1)},
    ),
    (
        "priority on a const entry (p4c: const entries cannot have priorities)",
        {
            "ingress": ternary_table("priority = 3: 1 : a(1);").replace(
                "entries =", "const entries ="
            )
        },
        "a table with const entries cannot give them priorities",
        {"ingress": ternary_table("1 : a(1);").replace("entries =", "const entries =")},
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
    # -- a state without a transition is `transition reject`: what else p4c rejects there
    (
        "return in a parser state",
        {"parser": "state start { pkt.extract(hdr.h); return; }"},
        "return is not allowed in a parser state",
        {"parser": "state start { pkt.extract(hdr.h); }"},
    ),
    (
        "package type argument that its arguments do not match",
        {"main": "V1Switch<meta_t, meta_t>(P(), VC(), I(), E(), CC(), D()) main;"},
        "has type headers_t, but Parser declares it meta_t",
        {"main": "V1Switch<headers_t, meta_t>(P(), VC(), I(), E(), CC(), D()) main;"},
    ),
    (
        "static_assert that fails",
        {"ingress": 'apply { static_assert(1 == 2, "math"); }'},
        "static_assert failed: math",
        {"ingress": 'apply { static_assert(1 == 1, "math"); }'},
    ),
    (
        "static_assert of a run-time value",
        {"ingress": "apply { static_assert(meta.m == 1); }"},
        "static_assert needs a compile-time constant bool",
        {"ingress": "apply { static_assert(true); }"},
    ),
    # -- direct type invocation (spec, "Direct type invocation")
    (
        "direct invocation of the control itself",
        {"top": "control C(inout meta_t m) { apply { C.apply(m); } }"},
        "C cannot apply itself",
        {
            "top": "control C0(inout meta_t m) { apply { m.m = 1; } }\n"
            "control C(inout meta_t m) { apply { C0.apply(m); } }",
            "ingress": "apply { C.apply(meta); }",
        },
    ),
    (
        "direct invocation of a control with constructor parameters",
        {
            "top": "control C(inout meta_t m)(bit<8> k) { apply { m.m = k; } }",
            "ingress": "apply { C.apply(meta); }",
        },
        "C has constructor parameters: instantiate it to apply it",
        {
            "top": "control C(inout meta_t m)(bit<8> k) { apply { m.m = k; } }",
            "ingress": "C(1) c; apply { c.apply(meta); }",
        },
    ),
    # -- constructor parameters (spec, "Instantiations")
    (
        "constructor argument that is not a constant",
        {
            "top": "control C(inout meta_t m)(bit<8> k) { apply { m.m = k; } }",
            "ingress": "bit<8> v = 1; C(v) c; apply { c.apply(meta); }",
        },
        "constructor argument 'k' must be a compile-time constant",
        {
            "top": "control C(inout meta_t m)(bit<8> k) { apply { m.m = k; } }",
            "ingress": "const bit<8> v = 1; C(v) c; apply { c.apply(meta); }",
        },
    ),
    (
        "constructor arguments missing",
        {
            "top": "control C(inout meta_t m)(bit<8> k, bool b) { apply { m.m = k; } }",
            "ingress": "C(1) c; apply { c.apply(meta); }",
        },
        "C takes 2 constructor argument(s), got 1",
        {
            "top": "control C(inout meta_t m)(bit<8> k, bool b) { apply { m.m = k; } }",
            "ingress": "C(1, true) c; apply { c.apply(meta); }",
        },
    ),
    (
        "constructor argument of another control type",
        {
            "top": "control T(inout meta_t m); control U(inout meta_t m, in bit<8> x);\n"
            "control A(inout meta_t m, in bit<8> x) { apply { m.m = x; } }\n"
            "control C(inout meta_t m)(T t) { apply { t.apply(m); } }",
            "ingress": "A() a; C(a) c; apply { c.apply(meta); }",
        },
        "A has 2 parameter(s), but constructor parameter 't' of type T takes 1",
        {
            "top": "control T(inout meta_t m);\n"
            "control A(inout meta_t m) { apply { m.m = 1; } }\n"
            "control C(inout meta_t m)(T t) { apply { t.apply(m); } }",
            "ingress": "A() a; C(a) c; apply { c.apply(meta); }",
        },
    ),
    (
        "constructor parameter of a control declaration's type",
        {
            "top": "control A(inout meta_t m) { apply { m.m = 1; } }\n"
            "control C(inout meta_t m)(A a) { apply { a.apply(m); } }"
        },
        "a: a parameter cannot have the type of control A, which is a declaration",
        {
            "top": "control T(inout meta_t m); control A(inout meta_t m) { apply { m.m = 1; } }\n"
            "control C(inout meta_t m)(T a) { apply { a.apply(m); } }"
        },
    ),
    (
        "stack size from a constructor parameter",
        {
            "top": "control C(inout meta_t m)(bit<32> n) { apply { h_t[n] s; m.m = 1; } }",
            "ingress": "C(2) c; apply { c.apply(meta); }",
        },
        "a width or stack size must be a constant, not constructor parameter 'n'",
        {
            "top": "control C(inout meta_t m)(bit<32> n) { apply { h_t[2] s; m.m = 1; } }",
            "ingress": "C(2) c; apply { c.apply(meta); }",
        },
    ),
    (
        "type error inside a control checked with its constructor arguments",
        {
            "top": "control C(inout meta_t m)(bool b) { apply { m.m = b; } }",
            "ingress": "C(true) c; apply { c.apply(meta); }",
        },
        "bool",
        {
            "top": "control C(inout meta_t m)(bool b) { apply { m.m = b ? 8w1 : 8w2; } }",
            "ingress": "C(true) c; apply { c.apply(meta); }",
        },
    ),
    (
        "direct invocation of a control from a parser",
        {
            "top": "control C(inout meta_t m) { apply { m.m = 1; } }",
            "parser": "state start { C.apply(meta); transition accept; }",
        },
        "a parser can only apply parser instances",
        {
            "top": "control C(inout meta_t m) { apply { m.m = 1; } }",
            "ingress": "apply { C.apply(meta); }",
        },
    ),
]


@pytest.mark.parametrize("name, bad, message, good", CASES, ids=[c[0] for c in CASES])
def test_check_rejects_bad_and_keeps_good(name, bad, message, good):
    check_rejects_bad_and_keeps_good(bad, message, good)

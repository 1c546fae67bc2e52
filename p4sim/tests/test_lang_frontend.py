"""Front end: preprocessing, error reporting (p4c's `file:line:col: error:` shape, never a
Python traceback), and the program model's p4c naming.

Run: .venv/bin/pytest p4sim/tests/test_lang_frontend.py
"""

from pathlib import Path

import pytest

from p4sim.errors import P4Error
from p4sim.frontend import compile_file, compile_source, preprocess
from p4sim.frontend.preprocess import preprocess_text

STF_DIR = Path(__file__).parent / "stf"

SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%s
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def program(ingress_body: str):
    return compile_source(SKELETON % ingress_body, "prog.p4")


def error_of(ingress_body: str) -> P4Error:
    with pytest.raises(P4Error) as info:
        program(ingress_body)
    return info.value


# --------------------------------------------------------------------------- preprocessor
def test_preprocessor_macros_conditionals_and_includes(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.p4").write_text("#define SIZE 64\n#define TWICE(x) ((x) * 2)\n")
    src = tmp_path / "main.p4"
    src.write_text(
        '#include "inc/sizes.p4"\n'
        "#if defined(SIZE) && SIZE > 32 && !defined(NOPE)\n"
        "const bit<16> A = TWICE(SIZE);\n"
        "#elif 1\n"
        "const bit<16> A = 0;\n"
        "#endif\n"
        "#ifdef PROFILE\n"
        "const bit<8> P = PROFILE;\n"
        "#else\n"
        "const bit<8> P = 0;\n"
        "#endif // PROFILE\n"
    )
    out = preprocess(src, defines={"PROFILE": "7"})
    assert "const bit<16> A = ((64) * 2);" in out
    assert "const bit<8> P = 7;" in out
    assert "= 0;" not in out
    assert '# 1 "' + str(tmp_path / "inc" / "sizes.p4") + '"' in out


def test_error_in_included_file_reports_that_file(tmp_path):
    (tmp_path / "bad.p4").write_text("\n\nheader h_t { bit<8> a }\n")
    src = tmp_path / "main.p4"
    src.write_text('#include <core.p4>\n#include "bad.p4"\n')
    with pytest.raises(P4Error) as info:
        compile_file(src)
    e = info.value
    assert e.file == str(tmp_path / "bad.p4")
    assert (e.line, e.col) == (3, 23)
    assert str(e).startswith(f"{tmp_path / 'bad.p4'}:3:23: error: expected ';'")


def test_error_directive_and_unterminated_if():
    with pytest.raises(P4Error, match=r"x.p4:2:1: error: #error pick a profile"):
        preprocess_text("#ifndef PROFILE\n#error pick a profile\n#endif\n", "x.p4")
    with pytest.raises(P4Error, match="missing #endif"):
        preprocess_text("#if 1\nconst bit<8> a = 1;\n", "x.p4")
    with pytest.raises(P4Error, match="cannot find include file 'nope.p4'"):
        preprocess_text('#include "nope.p4"\n', "x.p4")


def test_defines_select_profile_of_the_splitter():
    repo = Path(__file__).resolve().parents[2]
    p18 = compile_file(repo / "p4src" / "dc_splitter.p4")
    p12 = compile_file(repo / "p4src" / "dc_splitter.p4", defines={"PDCP_SN_12": "1"})
    width = {p.name: p.bitwidth for p in p18.model.registers}
    assert width["DcIngress.pdcp_sequencer.next_sn"] == 18
    width = {p.name: p.bitwidth for p in p12.model.registers}
    assert width["DcIngress.pdcp_sequencer.next_sn"] == 12


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "body, message",
    [
        ("apply { hdr.h.a = hdr.h.c; }", "expected a value of type bit<8>, got bit<16>"),
        (
            "apply { hdr.h.a = hdr.h.a + hdr.h.c; }",
            "operands of '+' have different types: bit<8> and bit<16>",
        ),
        ("apply { hdr.h.zz = 1; }", "header h_t has no field 'zz'"),
        ("apply { undefined_thing(); }", "'undefined_thing' is not declared"),
        ("apply { if (hdr.h.a) { } }", "condition must be bool, not bit<8>"),
        ("apply { hdr.h.a = hdr.h.a[8:0]; }", "slice [8:0] out of range for bit<8>"),
        (
            "table t { key = { hdr.h.a: fuzzy; } actions = { NoAction; } } apply { t.apply(); }",
            "unknown match kind 'fuzzy'",
        ),
        (
            "table t { key = { hdr.h.a: exact; } actions = { NoAction; } implementation = 1; } apply { }",
            "implementation must name an action_profile or action_selector instance",
        ),
        ("apply { 3 = hdr.h.a; }", "expression is not assignable"),
        ("apply { break; }", "'break' outside a for loop"),
        ("apply { list<bit<8>> l = {1, 2}; }", "the list<T> type is not supported by p4sim"),
        ('apply { static_assert(false, "why"); }', "static_assert failed: why"),
        (
            "apply { tuple<bit<8>, bit<8>> t = {1, 2}; hdr.h.a = t[2]; }",
            "a tuple index must be a constant in 0..1",
        ),
        (
            "apply { tuple<bit<8>, bit<8>> t = {1, 2}; t[2] = 3; }",
            "a tuple index must be a constant in 0..1",
        ),
        ("apply { hdr.h.c = (bit<16>)hdr.h.minSizeInBits(1); }", "argument"),
        (
            "apply { digest(1, { hdr.h.a, error.NoMatch }); }",
            "a digest field of an error or enum type (1) is not supported by p4sim",
        ),
        (
            "apply { for (bit<8> i in 1 .. 3) { } }",
            "'for (... in ...)' statement is not supported by p4sim",
        ),
        ("apply { for (bit<8> i = 0; i; ) { } }", "condition must be bool, not bit<8>"),
        ("apply { for (bit<8> i = 0; ; ) { } }", "a for loop needs a condition"),
        (
            "action a(bit<8> x, inout bit<8> y) { } apply { }",
            "directional action parameters must come before directionless ones",
        ),
        ("apply { hdr.h.a = (bit<8>) true; }", "cannot cast bool to bit<8>"),
        ("apply { verify(true, error.NoMatch); }", "verify() can only be called in a parser"),
    ],
)
def test_type_errors_are_reported_with_position(body, message):
    e = error_of(body)
    assert message in e.message
    assert e.file == "prog.p4" and e.line >= 11 and e.col >= 1
    assert str(e).startswith(f"prog.p4:{e.line}:{e.col}: error: ")


@pytest.mark.parametrize(
    "extra, message",
    [
        ("control G<T>(inout T x) { apply { } }", None),
        ("extern Foo { Foo(); void bar(); }\ncontrol G2() { Foo() f; apply { } }", None),
        ("header_union u_t { bit<8> x; }", "header_union u_t may only contain headers"),
        (
            "struct in_t { error e; }\nstruct s_t { bit<8> a; in_t i; }\nheader g_t { s_t s; }",
            (
                "header field g_t.s: a struct in a header may hold only bit<W>, int<W>, bool, "
                "serializable enums or such structs, not error"
            ),
        ),
        (
            "struct s_t { bit<8> a; }\nheader g_t { s_t s; varbit<8> v; }",
            "header g_t with both a varbit and a struct field is not supported by p4sim",
        ),
    ],
)
def test_unsupported_constructs_say_so(extra, message):
    src = SKELETON.replace("header h_t", extra + "\nheader h_t") % "apply { }"
    if message is None:  # declared but unused: fine, as in p4c
        compile_source(src, "prog.p4")
        return
    with pytest.raises(P4Error, match=message):
        compile_source(src, "prog.p4")


def test_unsupported_extern_instance_in_use():
    src = SKELETON.replace("header h_t", "extern Foo { Foo(); void bar(); }\nheader h_t")
    with pytest.raises(P4Error, match="extern Foo is not supported by p4sim"):
        compile_source(src % "Foo() f; apply { f.bar(); }", "prog.p4")


def test_missing_main_and_wrong_package():
    src = SKELETON % "apply { }"
    with pytest.raises(P4Error, match="no package instantiation named 'main'"):
        compile_source(src.replace(" main;", " other;"), "prog.p4")


def test_truncated_programs_only_ever_raise_p4error():
    """Fuzz-ish: every prefix of a valid program (cut at many points) fails cleanly."""
    text = (STF_DIR / "tables.p4").read_text()
    full = preprocess_text(text, "tables.p4")
    user_part = full.index("header h_t")
    cuts = range(user_part, len(full) - 1, max(1, (len(full) - user_part) // 300))
    for cut in cuts:
        try:
            compile_source(full[:cut], "tables.p4")
        except P4Error as e:
            assert str(e).startswith("tables.p4:"), str(e)
        # (a prefix that happens to be a complete program is fine too)


def test_garbage_input_is_a_p4error():
    for junk in [
        "\x00\x01",
        "header {",
        "control c() { apply { x = ; } }",
        "@@@",
        "const bit<8> x = 1 / 0;",
    ]:
        with pytest.raises(P4Error):
            compile_source(junk, "junk.p4")


# --------------------------------------------------------------------------- naming
NAMING = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct headers_t { h_t h; h_t[2] st; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control Inner(inout headers_t hdr, inout meta_t meta) {
    counter(8, CounterType.packets) hits;
    action mark(bit<8> v) { meta.m = v; }
    table inner_t { key = { meta.m: exact; } actions = { mark; } }
    apply { inner_t.apply(); }
}
@name("global_action") action top(bit<16> w) { }
control ig(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) dc;
    @name("regs") register<bit<32>>(16) r;
    Inner() nested;
    action set_port(bit<9> port) { sm.egress_spec = port; }
    @name("renamed_action") action other() { }
    @hidden action helper() { }
    @name(".absolute_table")
    table t1 {
        key = {
            hdr.h.a: exact @name("first");
            hdr.h.b[7:0]: ternary;
            hdr.h.isValid(): exact;
            hdr.st[1].a: lpm;
        }
        actions = { set_port; @tableonly other; @defaultonly NoAction; top; }
        const default_action = NoAction();
        counters = dc;
    }
    @hidden table hidden_t { actions = { helper; } default_action = helper(); }
    table with_entries {
        key = { hdr.h.a: ternary; }
        actions = { set_port; }
        size = 8;
        const entries = {
            0x01 &&& 0x0f : set_port(1);
            _ : set_port(2);
        }
    }
    apply { t1.apply(); hidden_t.apply(); with_entries.apply(); nested.apply(hdr, meta); }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), ig(), E(), CC(), D()) main;
"""


def test_model_uses_p4c_names():
    m = compile_source(NAMING, "naming.p4").model
    tables = {t.name: t for t in m.tables}
    assert set(tables) == {"absolute_table", "ig.with_entries", "ig.nested.inner_t"}
    t1 = tables["absolute_table"]
    assert [(k.name, k.bitwidth, k.match_kind) for k in t1.keys] == [
        ("first", 8, "exact"),
        ("hdr.h.b[7:0]", 8, "ternary"),
        ("hdr.h.$valid$", 1, "exact"),
        ("hdr.st[1].a", 8, "lpm"),
    ]
    assert [(a.name, a.scope) for a in t1.actions] == [
        ("ig.set_port", "TABLE_AND_DEFAULT"),
        ("ig.renamed_action", "TABLE_ONLY"),
        ("NoAction", "DEFAULT_ONLY"),
        ("global_action", "TABLE_AND_DEFAULT"),
    ]
    assert t1.size == 1024 and t1.const_default_action and t1.default_action == "NoAction"
    assert t1.direct_counter == "ig.dc" and t1.needs_priority
    actions = {a.name: a for a in m.actions}
    assert "ig.helper" not in actions  # only used by a @hidden table
    assert [(p.name, p.bitwidth) for p in actions["global_action"].params] == [("w", 16)]
    assert [r.name for r in m.registers] == ["ig.regs"]
    counters = {c.name: c for c in m.counters}
    assert counters["ig.dc"].direct_table == "absolute_table" and counters["ig.dc"].size == 0
    assert counters["ig.nested.hits"].unit == "packets" and counters["ig.nested.hits"].size == 8
    entries = tables["ig.with_entries"].const_entries
    assert tables["ig.with_entries"].size == 8
    assert entries[0].match["hdr.h.a"].value == 1 and entries[0].match["hdr.h.a"].mask == 0x0F
    assert entries[0].action == "ig.set_port" and entries[0].args == {"port": 1}
    assert entries[1].match == {} and entries[1].args == {"port": 2}


def test_anonymous_control_is_named_by_type():
    m = compile_source(
        NAMING.replace("control ig(", "control MyIngress(").replace("ig()", "MyIngress()"), "n.p4"
    ).model
    assert {t.name for t in m.tables} == {
        "absolute_table",
        "MyIngress.with_entries",
        "MyIngress.nested.inner_t",
    }


def test_token_mutations_only_ever_raise_p4error():
    """Fuzz-ish: delete, duplicate or insert tokens in valid programs (fixed seed)."""
    import random

    from p4sim.frontend.lexer import tokenize

    rng = random.Random(4)
    sources = [
        preprocess_text((STF_DIR / f"{n}.p4").read_text(), f"{n}.p4")
        for n in ("tables", "parser", "lang", "tm")
    ]
    inserts = [
        "1",
        "x",
        "(",
        ")",
        "{",
        "}",
        ";",
        "bit<8>",
        "hdr",
        "<",
        ">",
        ".",
        "8w3",
        "true",
        "-",
        "_",
        "default",
        "apply",
    ]
    for _ in range(400):
        src = rng.choice(sources)
        toks = tokenize(src)
        start = next(i for i, t in enumerate(toks) if "p4include" not in t.pos.file)
        t = toks[rng.randrange(start, len(toks) - 1)]
        if rng.random() < 0.5:
            mutated = src[: t.start] + src[t.end :]
        else:
            mutated = src[: t.start] + rng.choice(inserts) + " " + src[t.start :]
        try:
            compile_source(mutated, "m.p4")
        except P4Error as e:
            assert e.line > 0 or "main" in e.message, str(e)


def test_compile_source_round_trips_its_own_preprocessed_output():
    """The device config carries `.source`; compiling it again gives the same program and
    errors still point into the original files."""
    repo = Path(__file__).resolve().parents[2]
    first = compile_file(repo / "p4src" / "dc_splitter.p4")
    again = compile_source(first.source, "config")
    assert [t.name for t in again.model.tables] == [t.name for t in first.model.tables]
    broken = first.source.replace("size = 1024;", "size = 1024", 1)  # MAX_USERS, expanded
    with pytest.raises(P4Error) as info:
        compile_source(broken, "config")
    assert info.value.file.endswith("ue_sessions.p4")


def test_compile_source_accepts_comments_without_directives():
    text = (SKELETON % "apply { }").replace("#include <core.p4>\n#include <v1model.p4>\n", "")
    header = preprocess_text("#include <core.p4>\n#include <v1model.p4>\n", "x.p4")
    prog = compile_source(header + "// a comment\n/* another */\n" + text, "x.p4")
    assert prog.model.tables == []


@pytest.mark.parametrize(
    "decl, value",
    [
        ("const bit<8> X = 8w255;", 255),
        ("const int<8> X = 8s-1;", -1),
        ("const bit<8> X = (bit<8>) 8s-1;", 0xFF),
        ("const bit<16> X = 0x_ff_00;", 0xFF00),
        ("const bit<8> X = 0b1010_1010;", 0xAA),
        ("const bit<8> X = 0o17;", 15),
        ("const bit<8> X = 300;", 44),  # wraps to the declared width
        ("const bit<8> X = 8w200 + 8w100;", 44),
        ("const bit<8> X = 8w200 |+| 8w100;", 255),
        ("const bit<8> X = 8w100 |-| 8w200;", 0),
        ("const int<8> X = 8s100 |+| 8s100;", 127),
        ("const int<8> X = -8s128;", -128),
        ("const bit<8> X = 8w1 << 9;", 0),
        ("const int<8> X = 8s-128 >> 9;", -1),
        ("const bit<16> X = 8w0xab ++ 8w0xcd;", 0xABCD),
        ("const bit<4> X = (16w0xabcd)[11:8];", 0xB),
        ("const bool X = (bool) 1w1;", True),
        ("const bit<1> X = (bit<1>) false;", 0),
        ("const bit<8> X = 8w5 > 8w3 ? 8w1 : 8w2;", 1),
        ("const int X = 2 ** 3;", None),  # not P4: a syntax error
    ],
)
def test_literals_and_constant_folding(decl, value):
    src = decl + "\n" + SKELETON % "apply { }"
    if value is None:
        with pytest.raises(P4Error):
            compile_source(src, "c.p4")
        return
    prog = compile_source(src, "c.p4")
    assert prog.checker.scope.lookup("X").const == value


def test_varbit_rules():
    two = SKELETON.replace("header h_t {", "header v_t { varbit<8> a; varbit<8> b; }\nheader h_t {")
    with pytest.raises(P4Error, match="more than one varbit field"):
        compile_source(two % "apply { }", "v.p4")
    one_arg = (
        SKELETON.replace("header h_t {", "header v_t { varbit<16> a; }\nheader h_t {")
        .replace("struct headers_t { h_t h; }", "struct headers_t { h_t h; v_t v; }")
        .replace("pkt.extract(hdr.h);", "pkt.extract(hdr.h); pkt.extract(hdr.v);")
    )
    with pytest.raises(P4Error, match=r"extract\(hdr, size_in_bits\) is for headers with a varbit"):
        compile_source(one_arg % "apply { }", "v.p4")

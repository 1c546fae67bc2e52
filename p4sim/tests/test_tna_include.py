"""p4sim's tna.p4 declares what it declares exactly as the Tofino compiler's tna.p4 does.

Both sets of files are parsed by p4sim's own front end; every type, constant, extern (each of
its methods), parser/control type and package in p4sim's p4include/tofino1_*.p4 must have a
same-named declaration in /opt/p4tools/share/p4c/p4include with the same structure (source
positions and the compiler-only annotations @noWarn/@deprecated aside)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from p4sim.errors import P4Error
from p4sim.frontend import compile_file, compile_source, ir
from p4sim.frontend.parser import parse
from p4sim.frontend.preprocess import P4INCLUDE, preprocess_text

REAL_P4INCLUDE = Path("/opt/p4tools/share/p4c/p4include")
IGNORED_ANNOTATIONS = {"noWarn", "deprecated", "synchronous"}


def declarations(include_dir: Path) -> dict[str, ir.Decl]:
    """Top-level declarations by name; `error` and `match_kind` members of all files merged
    under "error:error" / "match_kind:match_kind"."""
    source = f'#define __TARGET_TOFINO__ 1\n#include "{include_dir / "tna.p4"}"\n'
    program = parse(preprocess_text(source, "tna_probe.p4"), "tna_probe.p4")
    found: dict[str, ir.Decl] = {}
    for decl in program.decls:
        if isinstance(decl, ir.ErrorDecl):
            key = f"{decl.kind}:{decl.kind}"
            if key in found:
                found[key] = dataclasses.replace(decl, members=found[key].members + decl.members)
                continue
            found[key] = decl
        else:
            found[decl.name] = decl
    return found


def shape(node):
    """`node` as nested tuples without source positions or ignored annotations."""
    if isinstance(node, ir.Pos):
        return None
    if isinstance(node, ir.Annotation):
        return ("@", node.name, tuple(node.args))
    if dataclasses.is_dataclass(node):
        items = []
        for field in dataclasses.fields(node):
            if field.name == "pos":
                continue
            value = getattr(node, field.name)
            if field.name == "annotations":
                value = [a for a in value if a.name not in IGNORED_ANNOTATIONS]
            items.append((field.name, shape(value)))
        return (type(node).__name__, tuple(items))
    if isinstance(node, (list, tuple)):
        return tuple(shape(v) for v in node)
    return node


def method_key(method: ir.MethodDecl) -> tuple:
    return (method.name, len(method.params), tuple(p.name for p in method.params))


OURS = declarations(P4INCLUDE)
REAL = declarations(REAL_P4INCLUDE)


def test_p4sim_declares_the_tna_essentials():
    for name in ("PortId_t", "PORT_METADATA_SIZE", "ingress_intrinsic_metadata_t",
                 "egress_intrinsic_metadata_for_deparser_t", "Register", "RegisterAction",
                 "Hash", "Checksum", "Counter", "Mirror", "Pipeline", "Switch"):  # fmt: skip
        assert name in OURS, name


@pytest.mark.parametrize("name", sorted(OURS))
def test_declaration_matches_the_compilers(name):
    ours = OURS[name]
    assert name in REAL, f"{name} is not declared by the Tofino compiler's tna.p4"
    real = REAL[name]
    if isinstance(ours, ir.ExternDecl):
        # p4sim may declare fewer methods (the rest is refused); those it declares must match.
        assert ours.type_params == real.type_params
        real_methods = {method_key(m): m for m in real.methods}
        for method in ours.methods:
            assert method_key(method) in real_methods, f"{name}.{method.name}"
            assert shape(method) == shape(real_methods[method_key(method)]), f"{name}.{method.name}"
    elif isinstance(ours, ir.ErrorDecl):
        real_members = {m for m, _ in real.members}
        assert {m for m, _ in ours.members} <= real_members
    else:
        assert shape(ours) == shape(real)


# ---------------------------------------------------------------- programs written for TNA

TNA_FORWARD = Path(__file__).parent / "tna" / "forward.p4"


def test_p4sim_compiles_a_tna_program_leaving_out_optional_parameters():
    """Front end: @optional parameters left out (ig_intr_md_for_tm..., Counter.count's
    adjust_byte_count, Switch's pipe1..3) are accepted, and main selects TNA."""
    assert compile_file(TNA_FORWARD).model.arch == "tna"


def test_a_required_argument_may_not_be_left_out():
    source = TNA_FORWARD.read_text().replace(
        "rx_counter.count(ig_intr_md.ingress_port);", "rx_counter.count();"
    )
    with pytest.raises(P4Error, match="Counter has no method 'count' taking 0 argument"):
        compile_source(source, str(TNA_FORWARD))


def test_the_tna_splitter_compiles_with_its_register_actions():
    splitter = Path(__file__).resolve().parents[2] / "p4src" / "dc_splitter_tna.p4"
    model = compile_file(splitter).model
    assert model.arch == "tna"
    assert {r.name: r.bitwidth for r in model.registers}["DcIngress.pdcp_sequencer.next_sn"] == 32


REGISTER_ACTION = Path(__file__).parent / "tna" / "register_action.p4"
PEEK = """    RegisterAction<bit<16>, PortId_t, bit<16>>(seqs) peek_seq = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };"""


@pytest.mark.parametrize(
    "replacement,message",
    [
        (
            PEEK.replace("void apply", "void run"),
            "peek_seq: RegisterAction has no abstract method 'run'",
        ),
        (
            PEEK.replace("inout bit<16> value", "in bit<16> value"),
            "parameter 'value' must be inout bit<16>",
        ),
        (PEEK.replace("out bit<16> rv", "out bit<8> rv"), "parameter 'rv' must be out bit<16>"),
        (
            PEEK.split(" = {")[0] + ";",
            "peek_seq: RegisterAction needs an initializer implementing apply",
        ),
        (PEEK.replace("rv = value;", "rv = nothing;"), "nothing"),
    ],
)
def test_a_bad_register_action_initializer_is_named(replacement, message):
    source = REGISTER_ACTION.read_text().replace(PEEK, replacement)
    with pytest.raises(P4Error, match=message):
        compile_source(source, str(REGISTER_ACTION))


def test_optional_is_refused_on_a_function_parameter():
    source = "bit<8> f(@optional bit<8> a) { return a; }\n" + TNA_FORWARD.read_text()
    with pytest.raises(P4Error, match=r"<f>:1:\d+: error: a: @optional is allowed only on"):
        compile_source(source, "<f>")


def test_an_initializer_on_a_control_instance_is_refused():
    source = "control c()() { apply { } }\ncontrol d() { c() cc = { }; apply { } }\n"
    with pytest.raises(P4Error, match="cc: initializers .* only allowed for extern instances"):
        compile_source(source)


def test_an_optional_abstract_method_may_be_left_out_and_a_required_one_not():
    extern = (
        "extern E<T> { E(); T run(); abstract T f(in T x); @optional abstract void g(); }\n"
        "control d(inout bit<8> v) { E<bit<8>>() e = { %s }; apply { v = e.run(); } }\n"
    )
    implemented = extern % "bit<8> f(in bit<8> x) { return x + 1; }"
    with pytest.raises(P4Error, match="no package instantiation named 'main'"):
        compile_source(implemented)  # the initializer passed: only main is missing
    with pytest.raises(P4Error, match="e: the initializer does not implement f"):
        compile_source(extern % "void g() { }")

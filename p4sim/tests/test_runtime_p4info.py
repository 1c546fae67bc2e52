"""P4Info generation against p4c's conventions and a real p4c-generated P4Info.

The reference is the P4Info that p4c-bm2-ss generated for p4lang/tutorials'
exercises/p4runtime/advanced_tunnel.p4 (as published alongside that program, plus the P4Runtime
1.4 `initial_default_action` that p4c 1.2.5 writes for every table); our own
program with the same control-plane surface is in p4sim/tests/p4/advanced_tunnel.p4.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_p4info.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4sim import frontend, p4info
from p4sim.model import (
    ActionDef,
    ActionRefDef,
    ControllerHeaderDef,
    CounterDef,
    MatchFieldDef,
    ParamDef,
    ProgramModel,
    RegisterDef,
    TableDef,
)
from p4sim.p4runtime.index import PipelineIndex
from p4sim.p4runtime.table_entries import decode_action, encode_action

HERE = Path(__file__).parent

# p4c-bm2-ss --p4runtime-files output for advanced_tunnel.p4 (p4lang/tutorials).
P4C_ADVANCED_TUNNEL = """
pkg_info { arch: "v1model" }
tables {
  preamble { id: 37375156 name: "MyIngress.ipv4_lpm" alias: "ipv4_lpm" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 28792405 } action_refs { id: 24181246 }
  action_refs { id: 25652968 } action_refs { id: 21257015 }
  initial_default_action { action_id: 21257015 }
  size: 1024
}
tables {
  preamble { id: 35862311 name: "MyIngress.myTunnel_exact" alias: "myTunnel_exact" }
  match_fields { id: 1 name: "hdr.myTunnel.dst_id" bitwidth: 16 match_type: EXACT }
  action_refs { id: 27454791 } action_refs { id: 33029817 } action_refs { id: 25652968 }
  initial_default_action { action_id: 25652968 }
  size: 1024
}
actions { preamble { id: 21257015 name: "NoAction" alias: "NoAction"
                     annotations: "@noWarn(\\"unused\\")" } }
actions { preamble { id: 25652968 name: "MyIngress.drop" alias: "drop" } }
actions { preamble { id: 28792405 name: "MyIngress.ipv4_forward" alias: "ipv4_forward" }
          params { id: 1 name: "dstAddr" bitwidth: 48 } params { id: 2 name: "port" bitwidth: 9 } }
actions { preamble { id: 24181246 name: "MyIngress.myTunnel_ingress" alias: "myTunnel_ingress" }
          params { id: 1 name: "dst_id" bitwidth: 16 } }
actions { preamble { id: 27454791 name: "MyIngress.myTunnel_forward" alias: "myTunnel_forward" }
          params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 33029817 name: "MyIngress.myTunnel_egress" alias: "myTunnel_egress" }
          params { id: 1 name: "dstAddr" bitwidth: 48 } params { id: 2 name: "port" bitwidth: 9 } }
counters { preamble { id: 315557958 name: "MyIngress.ingressTunnelCounter"
                      alias: "ingressTunnelCounter" }
           spec { unit: BOTH } size: 65536 }
counters { preamble { id: 312374841 name: "MyIngress.egressTunnelCounter"
                      alias: "egressTunnelCounter" }
           spec { unit: BOTH } size: 65536 }
type_info { }
"""


def reference() -> p4info_pb2.P4Info:
    return text_format.Parse(P4C_ADVANCED_TUNNEL, p4info_pb2.P4Info())


def by_id(info: p4info_pb2.P4Info) -> dict[tuple[str, int], bytes]:
    """Every top-level object keyed by (kind, id); order in P4Info carries no meaning."""
    out = {}
    for fd, values in info.ListFields():
        if fd.name in ("pkg_info", "type_info"):
            out[(fd.name, 0)] = values.SerializeToString(deterministic=True)
            continue
        for obj in values:
            out[(fd.name, obj.preamble.id)] = text_format.MessageToString(obj)
    return out


def advanced_tunnel_model() -> ProgramModel:
    """The model our front end produces for advanced_tunnel.p4, written out by hand."""
    actions = [
        ActionDef("NoAction", [], ['@noWarn("unused")']),
        ActionDef("MyIngress.drop", []),
        ActionDef("MyIngress.ipv4_forward", [ParamDef("dstAddr", 48), ParamDef("port", 9)]),
        ActionDef("MyIngress.myTunnel_ingress", [ParamDef("dst_id", 16)]),
        ActionDef("MyIngress.myTunnel_forward", [ParamDef("port", 9)]),
        ActionDef("MyIngress.myTunnel_egress", [ParamDef("dstAddr", 48), ParamDef("port", 9)]),
    ]
    tables = [
        TableDef(
            "MyIngress.ipv4_lpm",
            [MatchFieldDef("hdr.ipv4.dstAddr", 32, "lpm")],
            [
                ActionRefDef(n)
                for n in (
                    "MyIngress.ipv4_forward",
                    "MyIngress.myTunnel_ingress",
                    "MyIngress.drop",
                    "NoAction",
                )
            ],
            1024,
            "NoAction",
            {},
            False,
            None,
        ),
        TableDef(
            "MyIngress.myTunnel_exact",
            [MatchFieldDef("hdr.myTunnel.dst_id", 16, "exact")],
            [
                ActionRefDef(n)
                for n in (
                    "MyIngress.myTunnel_forward",
                    "MyIngress.myTunnel_egress",
                    "MyIngress.drop",
                )
            ],
            1024,
            "MyIngress.drop",
            {},
            False,
            None,
        ),
    ]
    counters = [
        CounterDef("MyIngress.ingressTunnelCounter", 65536, "packets_and_bytes"),
        CounterDef("MyIngress.egressTunnelCounter", 65536, "packets_and_bytes"),
    ]
    return ProgramModel(tables, actions, [], counters, [], [])


def test_matches_p4c_output_for_advanced_tunnel_model():
    ours = p4info.generate(advanced_tunnel_model())
    assert by_id(ours) == by_id(reference())


def test_jenkins_hash_gives_p4c_ids():
    # ids seen in p4c-generated P4Info files of public projects
    assert (0x02 << 24) | (
        p4info.jenkins_one_at_a_time("MyIngress.ipv4_lpm") & 0xFFFFFF
    ) == 37375156
    assert (0x01 << 24) | (p4info.jenkins_one_at_a_time("NoAction") & 0xFFFFFF) == 21257015
    # stratum/fabric-tna: @controller_header("packet_in") header packet_in_header_t has id
    # 81826293 in its P4Info: the header *type* name is hashed, not "packet_in"
    header = ControllerHeaderDef(
        "packet_in",
        [ParamDef("ingress_port", 9)],
        ['@controller_header("packet_in")'],
        "packet_in_header_t",
    )
    [h] = p4info.generate(minimal(headers=[header])).controller_packet_metadata
    assert h.preamble.id == 81826293


def minimal(tables=(), actions=(), registers=(), counters=(), headers=()) -> ProgramModel:
    return ProgramModel(
        list(tables), list(actions), list(registers), list(counters), [], list(headers)
    )


def test_aliases_are_shortest_unique_suffixes_across_all_kinds():
    model = minimal(
        actions=[
            ActionDef("Ingress.a.drop", []),
            ActionDef("Egress.b.drop", []),
            ActionDef("Ingress.fwd", []),
        ],
        registers=[RegisterDef("Ingress.fwd_state", 4, 8), RegisterDef("Egress.fwd", 4, 8)],
    )
    info = p4info.generate(model)
    aliases = {a.preamble.name: a.preamble.alias for a in info.actions}
    aliases.update({r.preamble.name: r.preamble.alias for r in info.registers})
    assert aliases == {
        "Ingress.a.drop": "a.drop",
        "Egress.b.drop": "b.drop",
        "Ingress.fwd": "Ingress.fwd",
        "Egress.fwd": "Egress.fwd",
        "Ingress.fwd_state": "fwd_state",
    }


def test_id_annotations_and_collision_probing():
    # Two names whose hashes collide in the low 24 bits would be probed; force a collision
    # with an @id that takes the hashed id of another action.
    taken = (0x01 << 24) | (p4info.jenkins_one_at_a_time("Ingress.b") & 0xFFFFFF)
    model = minimal(
        actions=[
            ActionDef("Ingress.a", [], [f"@id({taken & 0xFFFFFF})"]),
            ActionDef("Ingress.b", []),
        ]
    )
    ids = {a.preamble.name: a.preamble.id for a in p4info.generate(model).actions}
    assert ids["Ingress.a"] == taken  # prefix added to the bare @id
    h = p4info.jenkins_one_at_a_time("Ingress.b")
    assert ids["Ingress.b"] == (0x01 << 24) | ((h + 1) & 0xFFFFFF)  # linear probing of the hash
    bad = minimal(actions=[ActionDef("Ingress.a", [], ["@id(0x02000001)"])])
    with pytest.raises(p4info.P4InfoBuildError, match="wrong 8-bit prefix"):
        p4info.generate(bad)


def test_table_details_scopes_const_and_direct_counter():
    table = TableDef(
        "Ingress.t",
        [MatchFieldDef("k1", 8, "ternary", ['@name("k1")']), MatchFieldDef("k2", 16, "range")],
        [
            ActionRefDef("Ingress.set", "TABLE_ONLY", ["@tableonly"]),
            ActionRefDef("NoAction", "DEFAULT_ONLY", ["@defaultonly"]),
        ],
        64,
        "NoAction",
        {},
        True,
        [],
        direct_counter="Ingress.t_counter",
    )
    model = minimal(
        tables=[table],
        actions=[
            ActionDef("NoAction", []),
            ActionDef("Ingress.set", [ParamDef("a", 3), ParamDef("b", 5, ["@id(7)"])]),
        ],
        counters=[CounterDef("Ingress.t_counter", 0, "packets", direct_table="Ingress.t")],
        registers=[RegisterDef("Ingress.sn", 16, 18)],
        headers=[
            ControllerHeaderDef(
                "packet_in",
                [ParamDef("port", 9), ParamDef("pad", 7)],
                ['@controller_header("packet_in")'],
                "cpu_in_t",
            )
        ],
    )
    info = p4info.generate(model)
    [t] = info.tables
    assert [(m.id, m.name, m.match_type) for m in t.match_fields] == [
        (1, "k1", p4info_pb2.MatchField.TERNARY),
        (2, "k2", p4info_pb2.MatchField.RANGE),
    ]
    assert list(t.match_fields[0].annotations) == []  # @name is consumed, not copied
    assert [(r.scope, list(r.annotations)) for r in t.action_refs] == [
        (p4info_pb2.ActionRef.TABLE_ONLY, ["@tableonly"]),
        (p4info_pb2.ActionRef.DEFAULT_ONLY, ["@defaultonly"]),
    ]
    assert t.const_default_action_id == info.actions[0].preamble.id
    assert t.is_const_table and t.size == 64
    [dc] = info.direct_counters
    assert t.direct_resource_ids == [dc.preamble.id] and dc.preamble.id >> 24 == 0x13
    assert dc.direct_table_id == t.preamble.id and dc.spec.unit == p4info_pb2.CounterSpec.PACKETS
    assert [(p.id, p.name) for p in info.actions[1].params] == [(1, "a"), (7, "b")]
    [reg] = info.registers
    assert reg.preamble.id >> 24 == 0x16 and reg.size == 16
    assert reg.type_spec.bitstring.bit.bitwidth == 18
    [hdr] = info.controller_packet_metadata
    assert hdr.preamble.name == hdr.preamble.alias == "packet_in"
    assert hdr.preamble.id == (0x04 << 24) | (p4info.jenkins_one_at_a_time("cpu_in_t") & 0xFFFFFF)
    assert list(hdr.preamble.annotations) == ['@controller_header("packet_in")']
    assert [(m.id, m.name, m.bitwidth) for m in hdr.metadata] == [(1, "port", 9), (2, "pad", 7)]


def test_hidden_objects_are_left_out():
    model = minimal(
        actions=[ActionDef("Ingress.helper", [], ["@hidden"]), ActionDef("Ingress.visible", [])]
    )
    assert [a.preamble.name for a in p4info.generate(model).actions] == ["Ingress.visible"]


@pytest.mark.parametrize(
    "suffix,fmt", [(".txt", "text"), (".txtpb", "text"), (".json", "json"), (".bin", "binary")]
)
def test_file_formats_round_trip(tmp_path, suffix, fmt):
    info = p4info.generate(advanced_tunnel_model())
    path = tmp_path / f"out.p4info{suffix}"
    p4info.write(info, path)
    assert p4info.parse(path.read_bytes(), fmt) == info


def test_unknown_suffix_is_a_clear_error(tmp_path):
    with pytest.raises(p4info.P4InfoBuildError, match=r"\.txt, \.txtpb, \.json, \.bin"):
        p4info.write(p4info_pb2.P4Info(), tmp_path / "out.yaml")


def test_compiled_program_matches_p4c_output():
    """Our front end + P4Info generator on the same program p4c compiled: same P4Info."""
    from p4sim import frontend

    program = frontend.compile_file(str(HERE / "p4" / "advanced_tunnel.p4"))
    assert by_id(p4info.generate(program.model)) == by_id(reference())


def test_brief_and_description_become_doc():
    action = ActionDef(
        "Ingress.fwd",
        [ParamDef("port", 9, ['@brief("egress port")'])],
        ['@brief("Forward")', '@description("Sets \\"egress_spec\\".")', "@my_note"],
    )
    [a] = p4info.generate(minimal(actions=[action])).actions
    assert (a.preamble.doc.brief, a.preamble.doc.description) == (
        "Forward",
        'Sets "egress_spec".',
    )
    assert list(a.preamble.annotations) == ["@my_note"]
    assert a.params[0].doc.brief == "egress port" and not a.params[0].annotations


TWO_TABLES = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> f; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table no_default { key = { hdr.h.f : exact; } actions = { set; } }
    table with_noaction { key = { hdr.h.f : exact; } actions = { set; NoAction; } }
    apply { no_default.apply(); with_noaction.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Ck(inout headers_t hdr, inout meta_t m) { apply { } }
control Dp(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), Ck(), Ing(), Eg(), Ck(), Dp()) main;
"""


def test_table_without_default_action_gets_noaction_default_only():
    """p4c's frontend gives a table without default_action `default_action = NoAction()`
    and, unless NoAction is already one of its actions, adds it @defaultonly: P4Info lists
    NoAction as an action and as a DEFAULT_ONLY ref (as p4c-bm2-ss writes it)."""
    from p4sim import frontend

    info = p4info.generate(frontend.compile_source(TWO_TABLES).model)
    noaction = 21257015  # NoAction's id in every P4Info p4c writes
    tables = {t.preamble.name: t for t in info.tables}
    last = tables["Ing.no_default"].action_refs[-1]
    assert (last.id, last.scope, list(last.annotations)) == (
        noaction,
        p4info_pb2.ActionRef.DEFAULT_ONLY,
        ["@defaultonly"],
    )
    assert [r.scope for r in tables["Ing.with_noaction"].action_refs] == [
        p4info_pb2.ActionRef.TABLE_AND_DEFAULT
    ] * 2
    assert noaction in [a.preamble.id for a in info.actions]


def _program(ingress_body: str, ingress_locals: str = "", top: str = "") -> str:
    return f"""
#include <core.p4>
#include <v1model.p4>
enum bit<8> Kind {{ A = 1, B = 0xff }}
header h_t {{ bit<8> f; }}
struct headers_t {{ h_t h; }}
struct meta_t {{ }}
{top}
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(hdr.h); transition accept; }}
}}
control Ing(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{
    {ingress_locals}
    apply {{ {ingress_body} }}
}}
control Eg(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {{ apply {{ }} }}
control Ck(inout headers_t hdr, inout meta_t m) {{ apply {{ }} }}
control Dp(packet_out pk, in headers_t hdr) {{ apply {{ pk.emit(hdr.h); }} }}
V1Switch(P(), Ck(), Ing(), Eg(), Ck(), Dp()) main;
"""


def _p4info(source: str) -> p4info_pb2.P4Info:
    from p4sim import frontend

    return p4info.generate(frontend.compile_source(source).model)


def test_type_info_written_when_p4c_writes_it():
    """p4c writes type_info (empty or not) once it serializes a table or an extern
    instance or meets an extern function call in code it keeps; a program with none has no
    type_info."""
    assert not _p4info(_program("hdr.h.f = 1;")).HasField("type_info")
    assert _p4info(_program("mark_to_drop(sm);")).HasField("type_info")
    unused = "action unused(inout standard_metadata_t s) { mark_to_drop(s); }"
    assert not _p4info(_program("hdr.h.f = 1;", top=unused)).HasField("type_info")  # issue1535
    assert _p4info(_program("r.write(0, 1);", "register<bit<8>>(2) r;")).HasField("type_info")


def test_directly_called_actions_are_listed():
    """An action called from apply (not from a table) is in p4c's P4Info too."""
    info = _p4info(
        _program("set(); top_set();", "action set() { hdr.h.f = 2; }", "action top_set() { }")
    )
    assert {a.preamble.name for a in info.actions} == {"Ing.set", "top_set"}


def test_a_table_applied_in_an_applied_tables_key_is_listed():
    """p4c lists a table whose only apply is in another table's key (its issue2362); a
    table applied nowhere stays out."""
    info = _p4info(
        _program(
            "outer.apply();",
            """table inner { key = { hdr.h.f : exact; } actions = { NoAction; } }
               table unused { key = { hdr.h.f : exact; } actions = { NoAction; } }
               table outer { key = { inner.apply().hit : exact @name("inner_hit"); }
                             actions = { NoAction; } }""",
        )
    )
    assert {t.preamble.name for t in info.tables} == {"Ing.outer", "Ing.inner"}


def test_const_entries_are_initial_entries_and_enum_keys_in_type_info():
    """p4c: a table with const entries has has_initial_entries; a serializable enum that
    keys a table is described in type_info (values as full-width bytestrings)."""
    info = _p4info(
        _program(
            "t.apply();",
            """action a(Kind k) { }
               table t { key = { hdr.h.f : exact; } actions = { a; }
                         const entries = { 1 : a(Kind.A); } }""",
        )
    )
    [t] = info.tables
    assert t.is_const_table and t.has_initial_entries
    enum = info.type_info.serializable_enums["Kind"]
    assert enum.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in enum.members] == [("A", b"\x01"), ("B", b"\xff")]


def test_only_live_code_counts_as_p4c_does():
    """p4c drops code under a constant-false condition, then unused declarations: a table
    applied only there is not in P4Info; a directly called action is listed without the
    parameters its call binds; verify() alone does not make a type_info."""
    info = _p4info(
        _program(
            "if (false) { t.apply(); } else { set(1); }",
            """action set(bit<8> v) { hdr.h.f = v; }
               action other() { }
               table t { key = { hdr.h.f : exact; } actions = { other; } }""",
        )
    )
    assert not info.tables
    assert [(a.preamble.name, len(a.params)) for a in info.actions] == [("Ing.set", 0)]
    verify_only = _program("").replace(
        "pk.extract(hdr.h);", "pk.extract(hdr.h); verify(hdr.h.f == 1, error.NoMatch);"
    )
    assert not _p4info(verify_only).HasField("type_info")


def test_error_key_has_no_width_and_errors_in_type_info():
    info = _p4info(
        _program(
            "t.apply();",
            "table t { key = { sm.parser_error : exact; } actions = { NoAction; } }",
        )
    )
    assert info.tables[0].match_fields[0].bitwidth == 0
    assert list(info.type_info.error.members)[:3] == ["NoError", "PacketTooShort", "NoMatch"]


def test_structured_annotations_folded_into_their_own_field():
    """`@a[...]` (spec 18.2) goes to `structured_annotations` with its values folded, as
    p4c writes it (p4c's structured_annotations.p4 sample), never into `annotations`."""
    from p4sim import frontend

    program = frontend.compile_source(
        TWO_TABLES.replace(
            "    table no_default",
            '    @list[1, "hi", 1 == 2, 5 + 6] @kv[label = "text", n = 2 * 3] @Empty[]\n'
            "    table no_default",
        ).replace("actions = { set; }", "actions = { @id_note[7] set; }"),
        "structured.p4",
    )
    [t] = [t for t in p4info.generate(program.model).tables if t.preamble.alias == "no_default"]
    assert list(t.preamble.annotations) == []

    def values(sa):
        pairs = [(kv.key, kv.value) for kv in sa.kv_pair_list.kv_pairs] or [
            (None, v) for v in sa.expression_list.expressions
        ]
        return [(k, v.WhichOneof("value"), getattr(v, v.WhichOneof("value"))) for k, v in pairs]

    assert [
        (sa.name, sa.WhichOneof("body"), values(sa)) for sa in t.preamble.structured_annotations
    ] == [
        (
            "list",
            "expression_list",
            [
                (None, "int64_value", 1),
                (None, "string_value", "hi"),
                (None, "bool_value", False),
                (None, "int64_value", 11),
            ],
        ),
        ("kv", "kv_pair_list", [("label", "string_value", "text"), ("n", "int64_value", 6)]),
        ("Empty", "expression_list", []),
    ]
    [ref] = [r for r in t.action_refs if r.structured_annotations]
    assert (ref.structured_annotations[0].name, list(ref.annotations)) == ("id_note", [])
    assert ref.structured_annotations[0].expression_list.expressions[0].int64_value == 7


def test_a_renamed_parameter_is_written_and_read_under_its_p4info_name():
    """P4Info names a parameter by its @name (p4c); a P4Runtime client sends that name's id,
    and the entry holds the argument under the P4 name the action body uses."""
    program = frontend.compile_file(str(HERE / "p4" / "p4info_names_types.p4")).model
    info = p4info.generate(program)
    [forward] = [a for a in info.actions if a.preamble.name == "I.forward"]
    assert [(p.id, p.name, p.type_name.name) for p in forward.params] == [
        (1, "egress_port", "Port_t"),
        (2, "next_hop", "OtherMac_t"),
    ]
    index = PipelineIndex.build(program, info)
    [table] = index.tables.values()
    sent = p4runtime_pb2.TableAction()
    sent.action.action_id = forward.preamble.id
    sent.action.params.add(param_id=1, value=b"\x05")
    sent.action.params.add(param_id=2, value=b"\x02\x00\x00\x00\x00\x01")
    name, args = decode_action(index, table, sent, default_entry=False)
    assert (name, args) == ("I.forward", {"port": 5, "next_hop": 0x020000000001})
    read = p4runtime_pb2.TableAction()
    encode_action(index, name, args, read)
    assert read == sent


def test_translated_types_are_served_untranslated():
    """@p4runtime_translation: P4Info gives the control plane's type (as p4c, compared in
    test_runtime_p4info_p4c.py); the server takes and gives the data plane's values, which
    must fit its 16 bits whatever width P4Info gives, and refuses a string-translated field
    or parameter as UNIMPLEMENTED, naming why, rather than misreading its bytes."""
    from p4sim.p4runtime.entities import apply_update, read_entity
    from p4sim.p4runtime.errors import StatusError

    program = frontend.compile_file(HERE / "p4" / "p4runtime_translation.p4")
    info = p4info.generate(program.model)
    device, index = program.new_device(), PipelineIndex.build(program.model, info)
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    wide = tables["I.by_wide"]
    assert [(m.name, m.bitwidth, m.type_name.name) for m in wide.match_fields] == [
        ("hdr.ports.wide", 32, "Port32_t"),
        ("hdr.ports.narrow", 12, "Port12_t"),
    ]
    named = tables["I.by_name"].match_fields[0]
    assert named.bitwidth == 0 and named.type_name.name == "PortName_t"
    new_types = info.type_info.new_types
    assert new_types["PortName_t"].translated_type.HasField("sdn_string")
    assert new_types["Port32_t"].translated_type.sdn_bitwidth == 32

    def entry(table, values, action, param: bytes):
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        e = u.entity.table_entry
        e.table_id = table.preamble.id
        for fid, value in enumerate(values, start=1):
            e.match.add(field_id=fid).exact.value = value
        e.action.action.action_id = actions[action].preamble.id
        e.action.action.params.add(param_id=1, value=param)
        return u

    apply_update(index, device, entry(wide, [b"\x00\x00\x12\x34", b"\x05"], "I.set_wide", b"\x07"))
    [read] = read_entity(
        index, device, p4runtime_pb2.Entity(table_entry={"table_id": wide.preamble.id})
    )
    assert [m.exact.value for m in read.table_entry.match] == [b"\x12\x34", b"\x05"]
    with pytest.raises(StatusError, match="does not fit in 16 bits") as info_:
        apply_update(index, device, entry(wide, [b"\x01\x00\x00", b"\x05"], "I.set_wide", b"\x07"))
    assert info_.value.code.name == "OUT_OF_RANGE"
    with pytest.raises(StatusError, match="translated to a string") as info_:
        apply_update(index, device, entry(tables["I.by_name"], [b"eth0"], "I.set_named", b"x"))
    assert info_.value.code.name == "UNIMPLEMENTED"
    with pytest.raises(StatusError, match="parameter p: its type is translated") as info_:
        apply_update(index, device, entry(wide, [b"\x01", b"\x02"], "I.set_named", b"x"))
    assert info_.value.code.name == "UNIMPLEMENTED"

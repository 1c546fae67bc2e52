"""Parser value sets through P4Runtime's entity layer (p4sim/p4runtime/entities.py): the
P4Info p4c writes for them, ValueSetEntry writes (MODIFY only, the whole set at once) and
reads, the errors the spec assigns, and the packets the written members select.

Run: .venv/bin/pytest p4sim/tests/test_runtime_value_sets.py
"""

from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4sim import p4info
from p4sim.frontend import compile_file
from p4sim.p4runtime.entities import PipelineIndex, apply_update, read_entity
from p4sim.p4runtime.errors import StatusError

PROGRAM = Path(__file__).parent / "stf" / "value_set.p4"
Update = p4runtime_pb2.Update


@pytest.fixture
def pipeline():
    program = compile_file(PROGRAM)
    info = p4info.generate(program.model)
    ids = {v.preamble.name: v.preamble.id for v in info.value_sets}
    return program.new_device(), PipelineIndex.build(program.model, info), info, ids


def modify(value_set_id: int, *members: list[tuple[int, bytes]], kind=Update.MODIFY) -> Update:
    """members: each a list of (field id, exact value)."""
    u = Update(type=kind)
    u.entity.value_set_entry.value_set_id = value_set_id
    for fields in members:
        m = u.entity.value_set_entry.members.add()
        for fid, value in fields:
            m.match.add(field_id=fid).exact.value = value
    return u


def test_p4info_lists_the_value_sets_as_p4c_does(pipeline):
    _, _, info, _ = pipeline
    sets = {v.preamble.name: v for v in info.value_sets}
    assert sorted(sets) == ["P.pairs", "P.types"]  # @name("pairs") renames pair_set
    types, pairs = sets["P.types"], sets["P.pairs"]
    assert types.size == 4 and [(m.id, m.name, m.bitwidth) for m in types.match] == [(1, "", 16)]
    assert pairs.size == 2
    assert [(m.id, m.name, m.bitwidth) for m in pairs.match] == [(1, "x", 8), (2, "y", 8)]
    assert types.preamble.id >> 24 == 0x03  # P4Ids.VALUE_SET


def test_members_written_select_packets_and_read_back(pipeline):
    device, index, _, ids = pipeline
    frame = bytes.fromhex("1234 0102 0304")
    assert device.process(0, frame) == [(1, bytes.fromhex("1234 00 0102 0304"))]
    with device.lock:
        apply_update(index, device, modify(ids["P.types"], [(1, b"\x12\x34")], [(1, b"\x56")]))
    assert device.process(0, frame) == [(1, bytes.fromhex("1234 0102 02 0304"))]
    assert device.process(0, bytes.fromhex("0056 0102")) == [(1, bytes.fromhex("0056 0102 02"))]
    apply_update(index, device, modify(ids["P.pairs"], [(1, b"\x01"), (2, b"\x02")]))
    assert device.process(0, frame) == [(1, bytes.fromhex("1234 0102 03 03 04"))]
    [read] = read_entity(index, device, modify(ids["P.types"]).entity)
    members = [[m.exact.value for m in member.match] for member in read.value_set_entry.members]
    assert members == [[b"\x12\x34"], [b"\x56"]]
    assert len(list(read_entity(index, device, p4runtime_pb2.Entity(value_set_entry={})))) == 2
    # a write replaces every member: the empty set matches nothing again
    apply_update(index, device, modify(ids["P.types"]))
    assert device.process(0, frame) == [(1, bytes.fromhex("1234 00 0102 0304"))]


@pytest.mark.parametrize(
    "make, code",
    [
        (
            lambda ids: modify(ids["P.types"], [(1, b"\x01")], kind=Update.INSERT),
            "INVALID_ARGUMENT",
        ),
        (lambda ids: modify(0x03ABCDEF, [(1, b"\x01")]), "NOT_FOUND"),
        (lambda ids: modify(0, [(1, b"\x01")]), "INVALID_ARGUMENT"),
        (lambda ids: modify(ids["P.types"], [(2, b"\x01")]), "INVALID_ARGUMENT"),
        (lambda ids: modify(ids["P.types"], [(1, b"\x01\x00\x00")]), "OUT_OF_RANGE"),
        (lambda ids: modify(ids["P.pairs"], [(1, b"\x01")]), "INVALID_ARGUMENT"),  # y missing
        (
            lambda ids: modify(ids["P.pairs"], *[[(1, b"\x01"), (2, b"\x02")]] * 3),
            "RESOURCE_EXHAUSTED",
        ),
    ],
    ids=[
        "insert",
        "unknown id",
        "id 0",
        "unknown field",
        "too wide",
        "exact field missing",
        "over size",
    ],
)
def test_bad_writes_get_the_spec_status_and_change_nothing(pipeline, make, code):
    device, index, _, ids = pipeline
    apply_update(index, device, modify(ids["P.types"], [(1, b"\x12\x34")]))
    with pytest.raises(StatusError) as info:
        apply_update(index, device, make(ids))
    assert info.value.code == getattr(grpc.StatusCode, code)
    assert [len(device.value_sets[n].members) for n in ("P.types", "P.pairs")] == [1, 0]

"""The P4Runtime differential (p4sim/conformance/rtdiff.py, rtgen.py, rtexplain.py): its request generator,
its verdicts and cases, and a short run against the real simple_switch_grpc that must find
nothing unexplained, then must find the differences once the explanations are taken away.

Run: PATH=/opt/p4tools/bin:$PATH .venv/bin/pytest -q p4sim/tests/test_rtdiff.py
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter

import pytest
from p4.v1 import p4runtime_pb2

from controlplane import bmv2 as cp_bmv2
from p4sim import frontend, p4info
from p4sim.conformance import rtdiff, rtexplain
from p4sim.conformance.rtgen import RPCS, STREAM_RPCS, RequestGenerator, Step
from p4sim.tool import ToolError

BMV2 = ["bmv2"] if "bmv2" in cp_bmv2.suite_targets() else []


@pytest.fixture(scope="module")
def info():
    """runtime_fwd.p4's P4Info (p4sim's, as p4c's has the same ids)."""
    return p4info.generate(frontend.compile_file(str(rtdiff.PROGRAMS["runtime_fwd"])).model)


def texts(steps: list[Step]) -> list[str]:
    return [json.dumps(rtdiff.step_json(s)) for s in steps]


def test_sequences_are_seeded(info):
    one = RequestGenerator(info, random.Random("rtdiff:1:0")).sequence(40)
    again = RequestGenerator(info, random.Random("rtdiff:1:0")).sequence(40)
    other = RequestGenerator(info, random.Random("rtdiff:2:0")).sequence(40)
    assert texts(one) == texts(again)
    assert texts(one) != texts(other)


def test_sequences_cover_every_rpc_and_entity_kind(info):
    steps = RequestGenerator(info, random.Random("rtdiff:1:0")).sequence(600)
    assert set(RPCS) - set(STREAM_RPCS) <= {s.rpc for s in steps}
    kinds = Counter(
        u.entity.WhichOneof("entity") for s in steps if s.rpc == "Write" for u in s.request.updates
    )
    for kind in ("table_entry", "counter_entry", "direct_counter_entry", "meter_entry",
                 "register_entry", "packet_replication_engine_entry"):  # fmt: skip
        assert kinds[kind] > 0, kind
    notes = {s.note for s in steps}
    assert {"role name", "no election id", "unknown device", "VERIFY_AND_COMMIT"} <= notes
    assert any("election id" in n for n in notes)


def test_stream_sequences_cover_packets_digests_value_sets_and_rearbitration():
    """On a program that sends every frame back (runtime_stream.p4): PacketOut (right and
    wrong metadata), DigestListAck, the primary's own re-arbitration, ValueSetEntry and
    DigestEntry writes and reads, the same digest data twice and then after its ack; writes
    after a re-arbitration carry the new election id."""
    program = rtdiff.PROGRAMS["stream"]
    stream_info = p4info.generate(frontend.compile_file(str(program)).model)
    sequences = [  # as rtdiff runs them (a second primary ends PacketOuts)
        RequestGenerator(stream_info, random.Random(f"rtdiff:1:{n}"), stream=True).sequence(30)
        for n in range(20)
    ]
    steps = [step for sequence in sequences for step in sequence]
    assert set(RPCS) <= {s.rpc for s in steps}
    notes = {s.note for s in steps if s.rpc == "PacketOut"}
    assert {"metadata missing", "metadata twice", "unknown metadata id"} <= notes
    assert any(s.rpc == "Arbitrate" and s.client == "primary" for s in steps)
    entities = Counter(
        e.WhichOneof("entity")
        for s in steps
        for e in (
            [u.entity for u in s.request.updates] if s.rpc == "Write" else
            list(s.request.entities) if s.rpc == "Read" else []
        )
    )  # fmt: skip
    assert entities["value_set_entry"] > 0 and entities["digest_entry"] > 0
    # the same digest data twice before its ack, then (the next step) once after it
    pairs = [pair for sequence in sequences for pair in itertools.pairwise(sequence)]
    for first, then in pairs:
        if first.times == 2:
            assert first.note == "the same data twice before its ack"
            assert then.note == "the same data after its ack"
            assert then.request.packet.payload == first.request.packet.payload
    assert sum(s.times == 2 for s in steps) >= 2
    generator = RequestGenerator(stream_info, random.Random("rtdiff:1:1"), stream=True)
    eid = rtdiff.PRIMARY_ELECTION_ID
    for s in generator.sequence(200):
        if s.rpc == "Arbitrate" and s.client == "primary":
            eid = s.request.arbitration.election_id.low
        elif s.rpc == "Write" and s.client == "primary" and s.request.HasField("election_id"):
            assert s.request.election_id.low == eid
    # the other programs get none of the stream's steps
    plain = RequestGenerator(stream_info, random.Random("rtdiff:1:0")).sequence(200)
    assert not {s.rpc for s in plain} & set(STREAM_RPCS)


def test_stream_differences_are_explained_only_for_their_cause():
    malformed = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note="metadata missing")
    packet = 'packet payload: "\\001" metadata { metadata_id: 1 value: "@" }'
    ours = outcome("OK", stream=["error INVALID_ARGUMENT on packet_out"])
    reasons, diverges = rtexplain.explain(malformed, ours, outcome("OK", stream=[packet]))
    assert "16.1 PacketOut" in reasons[0] and not diverges
    # a well-formed PacketOut whose PacketIn only one side sends stays unexplained
    good = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note="kind 1")
    assert rtexplain.explain(good, outcome("OK", stream=[]), outcome("OK", stream=[packet])) is None
    assert rtexplain.differences(good, outcome("OK", stream=[]), outcome("OK", stream=[packet]))
    # a digest only p4sim sends: PI's while a VERIFY_AND_SAVE config waits, nothing else
    digest = 'digest struct { members { bitstring: "\\001" } }'
    ours, theirs = outcome("OK", stream=[packet, digest]), outcome("OK", stream=[packet])
    assert rtexplain.explain(good, ours, theirs) is None
    reasons, diverges = rtexplain.explain(good, ours, theirs, saved=True)
    assert reasons == [rtexplain.SAVED_CONFIG_DIGESTS] and not diverges
    assert rtexplain.explain(good, ours, outcome("OK", stream=[]), saved=True) is None
    # and the reverse: a DigestEntry written while it waits configures the saved config on
    # p4sim, PI's target learns for the running pipeline
    reasons, _ = rtexplain.explain(good, theirs, ours, saved=True)
    assert reasons == [rtexplain.SAVED_CONFIG_DIGEST_ENTRY]
    assert rtexplain.explain(good, theirs, ours) is None


@pytest.mark.parametrize("note", rtexplain.SAME_DATA_NOTES)
def test_repeated_digest_data_is_explained_only_when_pi_holds_it_longer(note):
    """p4sim sends repeated data again once acknowledged or ack_timeout_ns old, PI may hold
    it longer (a lost ack; its sweep's 100 ms floor): explained. p4sim holding what PI sends,
    other data, or another difference stays a DIFFER."""
    step = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note=note, times=2)
    packet = 'packet payload: "\001" metadata { metadata_id: 1 value: "@" }'
    data = 'digest struct { members { bitstring: "\001" } }'
    other = 'digest struct { members { bitstring: "\002" } }'
    explained = [
        ([packet, packet, data, data], [packet, packet, data]),
        ([packet, data], [packet]),
    ]
    short = 1_000_000  # ack_timeout_ns 1 ms: it can pass between the two copies
    for ours, theirs in explained:
        reasons, diverges = rtexplain.explain(
            step,
            outcome("OK", stream=ours, ack_timeout_ns=short),
            outcome("OK", stream=theirs, ack_timeout_ns=short),
        )
        assert reasons == [rtexplain.HELD_LONGER] and not diverges
    unexplained = [
        ([packet], [packet, data]),  # p4sim holds what PI sends
        ([packet, data, other], [packet, data]),  # two data
        ([packet, data], []),  # a PacketIn missing too
        ([packet, data, data], [packet, other]),
    ]
    for ours, theirs in unexplained:
        assert (
            rtexplain.explain(step, outcome("OK", stream=ours), outcome("OK", stream=theirs))
            is None
        )
    kind = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note="kind 1")
    assert (
        rtexplain.explain(
            kind, outcome("OK", stream=[packet, data]), outcome("OK", stream=[packet])
        )
        is None
    )


def test_data_sent_again_before_its_ack_under_a_long_timeout_is_not_explained():
    """Two copies back to back under ack_timeout_ns 10 s: the spec (9.9 DigestEntry) lets no
    server send the data twice before its ack, so p4sim doing it is a DIFFER, not PI holding
    data longer; after the ack, or under a 1 ms timeout, the second copy may come."""
    packet = 'packet payload: "\001" metadata { metadata_id: 1 value: "@" }'
    data = 'digest struct { members { bitstring: "\001" } }'
    ours, theirs = [packet, packet, data, data], [packet, packet, data]
    before, after = rtexplain.SAME_DATA_NOTES
    for note, timeout_ns, explained in (
        (before, 10_000_000_000, False),
        (before, None, False),  # no digest configured as far as p4sim's read goes
        (before, 1_000_000, True),
        (after, 10_000_000_000, True),
    ):
        step = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note=note, times=2)
        got = rtexplain.explain(
            step,
            outcome("OK", stream=ours, ack_timeout_ns=timeout_ns),
            outcome("OK", stream=theirs, ack_timeout_ns=timeout_ns),
        )
        assert (got == ([rtexplain.HELD_LONGER], False)) if explained else got is None, note


def outcome(code, message="", **rest):
    return {"code": code, "message": message, **rest}


def write_step(n: int = 1) -> Step:
    request = p4runtime_pb2.WriteRequest()
    for _ in range(n):
        request.updates.add(type=p4runtime_pb2.Update.INSERT)
    return Step("Write", request)


def test_digest_lists_are_not_ordered_against_packet_ins():
    """simple_switch_grpc sends a packet's DigestList before or after its PacketIn (the spec
    orders neither): both orders compare equal; the order among PacketIns, and among
    digests, still counts."""
    packet_a, packet_b = 'packet payload: "a"', 'packet payload: "b"'
    digest_a, digest_b = 'digest struct { members { bitstring: "a" } }', "digest struct { }"
    assert rtdiff.digests_last([digest_a, packet_a]) == rtdiff.digests_last([packet_a, digest_a])
    assert rtdiff.digests_last([digest_a, packet_a, packet_b]) == [packet_a, packet_b, digest_a]
    assert rtdiff.digests_last([packet_a, packet_b]) != rtdiff.digests_last([packet_b, packet_a])
    assert rtdiff.digests_last([digest_a, digest_b]) != rtdiff.digests_last([digest_b, digest_a])


def test_explanations_match_only_their_pair():
    wide = "table t, field f: value 0x0100 does not fit in 8 bits"
    ours = outcome("UNKNOWN", updates=["OUT_OF_RANGE", "OK"], messages=[wide, ""])
    theirs = outcome(
        "UNKNOWN",
        updates=["INVALID_ARGUMENT", "OK"],
        messages=["Bytestring provided does not fit within 8 bits", ""],
    )
    reasons, diverges = rtexplain.explain(write_step(2), ours, theirs)
    assert "8.4 Bytestrings" in reasons[0] and not diverges
    # the same codes with another cause stay unexplained
    theirs["messages"][0] = "Unexpected number of action parameters"
    assert rtexplain.explain(write_step(2), ours, theirs) is None
    # PI applied what p4sim refused: unexplained unless a rule names it
    assert rtexplain.explain(write_step(1), outcome("OK"), outcome("INVALID_ARGUMENT")) is None


def test_an_explained_update_that_parts_the_states_explains_the_rest_of_its_batch():
    empty = "field f: empty bytestring (a value needs at least one byte)"
    ours = outcome("UNKNOWN", updates=["OUT_OF_RANGE", "OK"], messages=[empty, ""])
    theirs = outcome("UNKNOWN", updates=["OK", "ALREADY_EXISTS"], messages=["", "exists"])
    reasons, diverges = rtexplain.explain(write_step(2), ours, theirs)
    assert diverges and rtexplain.PARTED_IN_BATCH in reasons


def test_read_differences_are_explained_entity_by_entity():
    const = (
        'table_entry { table_id: 7 match { field_id: 1 exact { value: "\\001" } } is_const: true }'
    )
    plain = const.replace(" is_const: true", "")
    read = Step("Read", p4runtime_pb2.ReadRequest())
    reasons, _ = rtexplain.explain(
        read, outcome("OK", entities=[const]), outcome("OK", entities=[plain])
    )
    assert "is_const" in reasons[0]
    # an entity only one side has, for no known reason
    assert (
        rtexplain.explain(read, outcome("OK", entities=[]), outcome("OK", entities=[plain])) is None
    )
    # twice is not once
    assert rtexplain.differences(
        read, outcome("OK", entities=[plain]), outcome("OK", entities=[plain] * 2)
    )


def test_replica_order_does_not_count():
    entity = p4runtime_pb2.Entity()
    group = entity.packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = 1
    group.replicas.add(egress_port=3)
    group.replicas.add(egress_port=2, instance=1)
    swapped = p4runtime_pb2.Entity()
    swapped.CopyFrom(entity)
    replicas = swapped.packet_replication_engine_entry.multicast_group_entry.replicas
    replicas[0].CopyFrom(group.replicas[1])
    replicas[1].CopyFrom(group.replicas[0])
    assert rtexplain.entity_text(entity) == rtexplain.entity_text(swapped)


def test_cases_round_trip_and_bad_ones_are_named(info, tmp_path):
    steps = RequestGenerator(info, random.Random("rtdiff:1:3")).sequence(30)
    back = [rtdiff.step_from_json(json.loads(json.dumps(rtdiff.step_json(s)))) for s in steps]
    assert texts(back) == texts(steps)
    twice = Step("PacketOut", p4runtime_pb2.StreamMessageRequest(), note="x", times=2)
    assert rtdiff.step_from_json(json.loads(json.dumps(rtdiff.step_json(twice)))).times == 2
    for times in (0, 11, "2"):
        with pytest.raises(ToolError, match="times .*: expected a whole number from 1 to 10"):
            rtdiff.step_from_json({"rpc": "PacketOut", "request": "", "times": times})
    with pytest.raises(ToolError, match="expected one of Write, Read"):
        rtdiff.step_from_json({"rpc": "Delete", "request": ""})
    bad = tmp_path / "bad.json"
    bad.write_text('{"program": "nope", "steps": []}')
    with pytest.raises(ToolError, match="program 'nope': expected one of dc_splitter"):
        rtdiff.replay(bad, False, None)


@pytest.mark.parametrize("target", BMV2)
def test_short_run_on_simple_switch_grpc(tmp_path, capsys, monkeypatch, target):
    """Seed 1 on two programs: every difference explained (exit 0). Without the explanations
    the same run must fail, write its cases, and a case must replay as a difference."""
    argv = ["--seed", "1", "--requests", "60", "--programs", "runtime_fwd,action_selector"]
    assert rtdiff.main(argv + ["--cases", str(tmp_path / "none")]) == 0
    report = capsys.readouterr().out
    assert "DIFFER        0 sequences" in report and not (tmp_path / "none").exists()
    assert "explained by (requests, rule):" in report
    monkeypatch.setattr(rtexplain, "EXPLANATIONS", [])
    monkeypatch.setattr(rtexplain, "ENTITY_EXPLANATIONS", [])
    assert rtdiff.main(argv + ["--cases", str(tmp_path / "cases")]) == 1
    cases = sorted((tmp_path / "cases").glob("*.json"))
    assert cases
    assert rtdiff.main(["--replay", str(cases[0])]) == 1
    assert "1 differ" in capsys.readouterr().out


def test_a_digest_entry_both_applied_is_state_pis_reconcile_drops():
    """PI's RECONCILE_AND_COMMIT keeps only what it reads back first (tables, profiles,
    counters, meters) and its digest manager starts afresh, so a DigestEntry both servers
    applied parts the states there, as a multicast group or a default entry does; p4sim
    keeps it and sends the digests PI no longer sends (seed 1, 1000 requests, found it)."""
    request = p4runtime_pb2.WriteRequest()
    request.updates.add(type=p4runtime_pb2.Update.INSERT).entity.digest_entry.digest_id = 1
    request.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry.table_id = 2
    step = Step("Write", request)
    both = outcome("UNKNOWN", updates=["OK", "NOT_FOUND"], messages=["", ""])
    assert rtexplain.wrote_what_reconcile_drops(step, both, both)
    refused = outcome("UNKNOWN", updates=["ALREADY_EXISTS", "OK"], messages=["", ""])
    assert not rtexplain.wrote_what_reconcile_drops(step, refused, refused)
    assert "DigestEntry" in rtexplain.RECONCILE_DROPS_PRE

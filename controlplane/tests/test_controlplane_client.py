"""The P4Runtime client and P4Info index against an in-process servicer (exact requests).

Run: .venv/bin/pytest controlplane/tests/test_controlplane_client.py
"""

import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from controlplane import entries as E
from controlplane.client import ConnectionFailed, NotPrimary, P4RuntimeClient, P4RuntimeWriteError
from controlplane.p4info import P4InfoError, P4InfoIndex, encode


def test_canonical_bytestrings():
    assert encode(0, 9) == b"\x00"
    assert encode(1, 9) == b"\x01"
    assert encode(256, 9) == b"\x01\x00"
    assert encode("10.0.0.2", 32) == b"\x0a\x00\x00\x02"
    assert encode("0.0.0.1", 32) == b"\x01"
    assert encode("02:00:00:00:00:0a", 48) == b"\x02\x00\x00\x00\x00\x0a"
    assert encode("2001:db8::1", 128) == bytes.fromhex("20010db8000000000000000000000001")


def test_value_too_wide_names_the_range():
    with pytest.raises(P4InfoError, match=r"does not fit in 9 bits \(allowed 0..511\)"):
        encode(512, 9, "port")
    with pytest.raises(P4InfoError, match="neither a number"):
        encode("ten", 16)


def test_names_resolve_by_full_name_and_alias(p4info):
    index = P4InfoIndex(p4info)
    full = index.table("DcIngress.ue_sessions.ue_sessions_v4")
    assert index.table("ue_sessions_v4") is full
    with pytest.raises(P4InfoError, match="no table named 'ue_table'"):
        index.table("ue_table")


def test_table_entry_encoding_ternary_and_exact(p4info):
    index = P4InfoIndex(p4info)
    entry = E.table_entry(
        index,
        "l2_forwards",
        {"ingress_port": 0, "ether_type": 0x0806},
        "flood",
        {"mcast_grp": 1},
        priority=20,
    )
    assert entry.priority == 20
    assert entry.match[0].field_id == 1 and entry.match[0].exact.value == b"\x00"
    assert entry.match[1].ternary.value == b"\x08\x06"
    assert entry.match[1].ternary.mask == b"\xff\xff"
    assert entry.action.action.params[0].value == b"\x01"
    wildcard = E.table_entry(
        index,
        "l2_forwards",
        {"ingress_port": 1, "ether_type": None},
        "forward",
        {"port": 0},
        priority=10,
    )
    assert [m.field_id for m in wildcard.match] == [1]  # the don't-care field is omitted
    decoded = E.decode_table_entry(index, entry)
    assert decoded.match == {"ingress_port": 0, "ether_type": (0x0806, 0xFFFF)}
    assert decoded.action == "DcIngress.l2_forwarding.flood" and decoded.params == {"mcast_grp": 1}


def test_missing_action_parameter_is_named(p4info):
    index = P4InfoIndex(p4info)
    with pytest.raises(P4InfoError, match="missing parameter.*leg_b_port"):
        E.table_entry(
            index,
            "ue_sessions_v4",
            {"ue_addr": "10.0.0.2"},
            "split_dc",
            {"user_idx": 0, "session": 1, "batch": 10, "leg_a_count": 5, "leg_a_port": 1},
        )


def test_arbitration_sends_device_and_election_id(fake_target):
    servicer, addr = fake_target
    with P4RuntimeClient(addr, device_id=3, election_id=(1 << 64) + 5):
        pass
    arb = servicer.arbitrations[0]
    assert arb.device_id == 3 and arb.election_id.high == 1 and arb.election_id.low == 5


def test_lower_election_id_is_not_primary(fake_target):
    _servicer, addr = fake_target
    with (
        P4RuntimeClient(addr, election_id=10),
        pytest.raises(NotPrimary, match=r"election id 2 is not primary .*use 11 or more"),
    ):
        P4RuntimeClient(addr, election_id=2)


def test_connection_failure_names_the_address():
    with pytest.raises(ConnectionFailed, match=r"127\.0\.0\.1:9 "):
        P4RuntimeClient("127.0.0.1:9", timeout_s=0.5)


def test_write_request_is_exact(fake_target, p4info):
    servicer, addr = fake_target
    index = P4InfoIndex(p4info)
    entry = E.table_entry(
        index, "egress_macs", {"egress_port": 1}, "set_src_mac", {"src_mac": "02:00:00:00:00:01"}
    )
    with P4RuntimeClient(addr, device_id=0, election_id=7) as client:
        client.write([E.update("INSERT", "table_entry", entry)])
    request = servicer.writes[0]
    expected = p4runtime_pb2.WriteRequest(device_id=0)
    expected.election_id.low = 7
    expected.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry.CopyFrom(entry)
    assert request == expected


def test_batch_error_is_one_line_per_failed_update(fake_target, p4info):
    servicer, addr = fake_target
    index = P4InfoIndex(p4info)
    updates = [
        E.update(
            "INSERT",
            "table_entry",
            E.table_entry(index, "egress_macs", {"egress_port": p}, "set_src_mac", {"src_mac": 1}),
        )
        for p in (1, 2, 3)
    ]
    servicer.fail_next_write = [
        (code_pb2.OK, ""),
        (code_pb2.ALREADY_EXISTS, "entry exists"),
        (code_pb2.INVALID_ARGUMENT, "bad port"),
    ]
    with P4RuntimeClient(addr) as client:
        client.describe_update = lambda u: E.describe_update(index, u)
        with pytest.raises(P4RuntimeWriteError) as err:
            client.write(updates)
    lines = str(err.value).splitlines()
    assert lines[0].startswith(f"write to {addr} failed: UNKNOWN")
    assert lines[1] == (
        "  update 1 INSERT DcEgress.egress_macs [egress_port=2] -> "
        "DcEgress.set_src_mac: ALREADY_EXISTS: entry exists"
    )
    assert lines[2].endswith("INVALID_ARGUMENT: bad port") and "egress_port=3" in lines[2]
    assert len(lines) == 3
    assert err.value.codes == {"ALREADY_EXISTS", "INVALID_ARGUMENT"}


def test_pipeline_push_request(fake_target, p4info):
    servicer, addr = fake_target
    with P4RuntimeClient(addr, election_id=4) as client:
        client.set_pipeline(p4info, b'{"p4sim": 1}')
    req = servicer.pipelines[0]
    assert req.action == p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    assert req.config.p4_device_config == b'{"p4sim": 1}'
    assert req.election_id.low == 4 and req.config.p4info == p4info

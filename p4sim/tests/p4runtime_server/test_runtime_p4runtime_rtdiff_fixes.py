"""What the P4Runtime differential (p4sim/conformance/rtdiff.py) found p4sim answering against
the P4Runtime specification, pinned: each test names the spec's rule.

Run: .venv/bin/pytest -q p4sim/tests/p4runtime_server/test_runtime_p4runtime_rtdiff_fixes.py
"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from p4sim.tests.p4runtime_server.fakes import (
    CPU_PORT,
    IDS,
    entity,
    fwd_entry,
    table_update,
    update,
    write_error,
)

C = code_pb2


def indexed(kind: str, name: str, index: int):
    """A CounterEntry, MeterEntry or RegisterEntry of cell `index`."""
    message = {
        "counter_entry": p4runtime_pb2.CounterEntry(counter_id=IDS[name]),
        "meter_entry": p4runtime_pb2.MeterEntry(meter_id=IDS[name]),
        "register_entry": p4runtime_pb2.RegisterEntry(register_id=IDS[name]),
    }[kind]
    message.index.index = index
    if kind == "register_entry":
        message.data.bitstring = b"\x01"
    return message


@pytest.mark.parametrize(
    "kind, name, size",
    [
        ("counter_entry", "Ingress.port_counter", 4),
        ("meter_entry", "Ingress.rate", 4),
        ("register_entry", "Ingress.next_sn", 8),
    ],
)
def test_negative_index_is_invalid_argument_past_the_end_out_of_range(client, kind, name, size):
    """Spec "CounterEntry", "MeterEntry", "RegisterEntry": INVALID_ARGUMENT for a negative
    index, OUT_OF_RANGE for one past the array (p4sim said OUT_OF_RANGE for both)."""
    errors = write_error(
        client,
        update("MODIFY", kind, indexed(kind, name, -1)),
        update("MODIFY", kind, indexed(kind, name, size)),
    )
    assert [code for code, _ in errors] == [C.INVALID_ARGUMENT, C.OUT_OF_RANGE]
    assert "negative" in errors[0][1]
    for index, code in (
        (-1, grpc.StatusCode.INVALID_ARGUMENT),
        (size, grpc.StatusCode.OUT_OF_RANGE),
    ):
        with pytest.raises(grpc.RpcError) as info:
            client.read(entity(kind, indexed(kind, name, index)))
        assert info.value.code() == code


def test_modify_with_a_malformed_action_is_invalid_even_without_the_entry(client):
    """Spec "Write RPC": a malformed entity is INVALID_ARGUMENT; NOT_FOUND is for a well-formed
    one that does not exist. p4sim looked the entry up first and said NOT_FOUND."""
    missing_param = fwd_entry(5, 1)
    del missing_param.action.action.params[:]
    errors = write_error(
        client,
        table_update("MODIFY", missing_param),  # no such entry, and a parameter missing
        table_update("MODIFY", fwd_entry(6, 1)),  # no such entry, well formed
    )
    assert [code for code, _ in errors] == [C.INVALID_ARGUMENT, C.NOT_FOUND]


def test_empty_bytestring_is_out_of_range(client):
    """Spec "Bytestrings": "If the string's byte length is zero, the server always rejects the
    string" with OUT_OF_RANGE (p4sim said INVALID_ARGUMENT; PI takes it as zero)."""
    errors = write_error(
        client,
        table_update("INSERT", fwd_entry(0, 1, value=b"")),
        table_update("INSERT", fwd_entry(1, None, action="Ingress.drop")),
    )
    assert [code for code, _ in errors] == [C.OUT_OF_RANGE, C.OK]


def test_clone_session_with_negative_length_is_refused(client, server):
    """packet_length_bytes is an int32: a negative length truncated every clone by the end of
    the frame (a Python slice [:-1]); now INVALID_ARGUMENT, and nothing is stored."""
    clone = p4runtime_pb2.PacketReplicationEngineEntry()
    clone.clone_session_entry.session_id = 5
    clone.clone_session_entry.replicas.add(egress_port=CPU_PORT)
    clone.clone_session_entry.packet_length_bytes = -1
    errors = write_error(client, update("INSERT", "packet_replication_engine_entry", clone))
    assert [code for code, _ in errors] == [C.INVALID_ARGUMENT]
    assert "packet_length_bytes -1" in errors[0][1]
    assert 5 not in server.switch.pipeline.device.pre.clone_sessions

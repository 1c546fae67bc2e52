"""P4Runtime server tests with a real gRPC client against an in-process server: sessions.

Arbitration, pipeline config, packet I/O through the CPU port, the stream and its limits, over
real gRPC (entities: test_runtime_p4runtime_entities.py). The device behind the server is the
small fake engine of fakes.py; the same scenarios run against the real engine in
test_runtime_integration.py.

Run: .venv/bin/pytest -q p4sim/tests/p4runtime_server/test_runtime_p4runtime.py
"""

from __future__ import annotations

import json
import queue
import time

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4sim import p4info as p4info_gen
from p4sim.model import (
    FieldMatch,
)
from p4sim.p4runtime.device_config import DeviceConfig
from p4sim.tests.p4runtime_server.fakes import (
    IDS,
    P4INFO,
    Client,
    entity,
    fake_model,
    fwd_entry,
    table_update,
)


def test_capabilities(server):
    stub = p4runtime_pb2_grpc.P4RuntimeStub(grpc.insecure_channel(server.address))
    resp = stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=30)
    assert resp.p4runtime_api_version == "1.6.0"


def test_arbitration_primary_backup_and_permission(server):
    """Highest election id is primary; backups learn it; only the primary may write."""
    a = Client(server.address, election_id=5)
    b_ = Client(server.address, election_id=9)
    try:
        upd = a.arbitrate()
        assert upd.status.code == code_pb2.OK and upd.election_id.low == 5
        a.set_pipeline()
        upd = b_.arbitrate()
        assert upd.status.code == code_pb2.OK and upd.election_id.low == 9
        # a is told it lost primary: ALREADY_EXISTS with the primary's election id
        upd = a.next("arbitration")
        assert upd.status.code == code_pb2.ALREADY_EXISTS and upd.election_id.low == 9
        with pytest.raises(grpc.RpcError) as info:
            a.write(table_update("INSERT", fwd_entry(0, 1)))
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.RpcError) as info:
            a.set_pipeline()
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        b_.write(table_update("INSERT", fwd_entry(0, 1)))
        # an election id nobody holds is not primary either
        with pytest.raises(grpc.RpcError) as info:
            b_.write(table_update("INSERT", fwd_entry(1, 1)), election_id=100)
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # the primary leaves: no primary until someone reaches the highest id seen
        b_.close()
        upd = a.next("arbitration")
        assert upd.status.code == code_pb2.NOT_FOUND and upd.election_id.low == 9
        upd = a.arbitrate(11)
        assert upd.status.code == code_pb2.OK and upd.election_id.low == 11
        a.write(table_update("INSERT", fwd_entry(1, 1)))
    finally:
        a.close()
        b_.close()


def no_message(client: Client, kind: str, wait: float = 0.3) -> bool:
    """True if `client` receives no `kind` message within `wait` seconds."""
    try:
        return client.next(kind, timeout=wait) is None
    except queue.Empty:
        return True


def test_backup_joining_is_answered_alone(server):
    """Spec ("Rules for Handling MasterArbitrationUpdate"): a client that becomes a backup (and was not primary) is the only one told;
    the primary hears nothing. A primary that downgrades itself tells everyone."""
    a = Client(server.address, election_id=5)
    b_ = Client(server.address, election_id=3)
    try:
        assert a.arbitrate().status.code == code_pb2.OK
        upd = b_.arbitrate()
        assert upd.status.code == code_pb2.ALREADY_EXISTS and upd.election_id.low == 5
        assert no_message(a, "arbitration")
        # the backup re-arbitrates with another id that is still lower: again only itself
        assert b_.arbitrate(4).status.code == code_pb2.ALREADY_EXISTS
        assert no_message(a, "arbitration")
        # the primary downgrades itself: below the highest seen (5), nobody is primary
        upd = a.arbitrate(2)
        assert upd.status.code == code_pb2.NOT_FOUND and upd.election_id.low == 5
        upd = b_.next("arbitration")
        assert upd.status.code == code_pb2.NOT_FOUND and upd.election_id.low == 5
    finally:
        a.close()
        b_.close()


def test_client_without_election_id_is_a_backup(server):
    """An arbitration without election id (an observer) never becomes primary and is not a
    duplicate of another one; before any primary the update carries no election id."""
    x = Client(server.address, election_id=0)
    y = Client(server.address, election_id=0)
    p = Client(server.address, election_id=1)
    try:
        upd = x.arbitrate(unset=True)
        assert upd.status.code == code_pb2.NOT_FOUND and not upd.HasField("election_id")
        upd = y.arbitrate(unset=True)  # not INVALID_ARGUMENT: no id, no duplicate
        assert upd.status.code == code_pb2.NOT_FOUND and not upd.HasField("election_id")
        assert p.arbitrate().status.code == code_pb2.OK
        for observer in (x, y):
            upd = observer.next("arbitration")
            assert upd.status.code == code_pb2.ALREADY_EXISTS and upd.election_id.low == 1
        p.set_pipeline()
        # a Write without election id is not the primary's, even with no id 0 around
        req = p4runtime_pb2.WriteRequest(device_id=0)
        req.updates.append(table_update("INSERT", fwd_entry(1, 2)))
        with pytest.raises(grpc.RpcError) as info:
            x.stub.Write(req, timeout=60)
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        # observers read
        table = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
        assert x.read(entity("table_entry", table)) == []
    finally:
        for c in (x, y, p):
            c.close()


def test_arbitration_errors_end_the_stream(server):
    c = Client(server.address, election_id=3)
    try:
        assert c.arbitrate().status.code == code_pb2.OK
        dup = Client(server.address, election_id=3)
        assert dup.arbitrate() is None
        assert dup.stream_error.code() == grpc.StatusCode.INVALID_ARGUMENT
        role = Client(server.address, election_id=4)
        assert role.arbitrate(role="sdn") is None
        assert role.stream_error.code() == grpc.StatusCode.UNIMPLEMENTED
        wrong = Client(server.address, election_id=6, device_id=7)
        assert wrong.arbitrate() is None
        assert wrong.stream_error.code() == grpc.StatusCode.NOT_FOUND
        # a live stream that changes its device id: FAILED_PRECONDITION, not NOT_FOUND
        moving = Client(server.address, election_id=2)
        assert moving.arbitrate().status.code == code_pb2.ALREADY_EXISTS
        moving.device_id = 7
        assert moving.arbitrate() is None
        assert moving.stream_error.code() == grpc.StatusCode.FAILED_PRECONDITION
        # the server is still fine and c still primary
        c.set_pipeline()
    finally:
        c.close()


def test_pipeline_push_and_get(server):
    c = Client(server.address, election_id=1)
    try:
        c.arbitrate()
        stub = c.stub
        # spec "GetForwardingPipelineConfig RPC": no config yet -> the config field is unset
        empty = stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=30
        )
        assert not empty.HasField("config")
        c.set_pipeline(program="// verify only", action="VERIFY")
        assert server.switch.pipeline is None
        c.set_pipeline(program="// v1", cookie=77)
        RT = p4runtime_pb2.GetForwardingPipelineConfigRequest
        full = stub.GetForwardingPipelineConfig(RT(device_id=0, response_type=RT.ALL))
        assert full.config.p4info == P4INFO
        assert json.loads(full.config.p4_device_config)["program"] == "// v1"
        assert full.config.cookie.cookie == 77
        cookie = stub.GetForwardingPipelineConfig(RT(device_id=0, response_type=RT.COOKIE_ONLY))
        assert not cookie.config.HasField("p4info") and not cookie.config.p4_device_config
        assert cookie.config.cookie.cookie == 77
        info_only = stub.GetForwardingPipelineConfig(
            RT(device_id=0, response_type=RT.P4INFO_AND_COOKIE)
        )
        assert info_only.config.p4info == P4INFO and not info_only.config.p4_device_config
        dev_only = stub.GetForwardingPipelineConfig(
            RT(device_id=0, response_type=RT.DEVICE_CONFIG_AND_COOKIE)
        )
        assert not dev_only.config.HasField("p4info") and dev_only.config.p4_device_config
        # VERIFY_AND_SAVE then COMMIT
        c.set_pipeline(program="// v2", action="VERIFY_AND_SAVE")
        assert json.loads(server.switch.pipeline.device_config)["program"] == "// v1"
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = req.COMMIT
        stub.SetForwardingPipelineConfig(req)
        assert json.loads(server.switch.pipeline.device_config)["program"] == "// v2"
    finally:
        c.close()


def test_commit_follows_the_spec(server):
    """COMMIT: NOT_FOUND with nothing saved, INVALID_ARGUMENT with a config (spec "SetForwardingPipelineConfig RPC")."""
    c = Client(server.address, election_id=1)
    try:
        c.arbitrate()
        c.set_pipeline(program="// v1")
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = req.COMMIT
        with pytest.raises(grpc.RpcError) as info:
            c.stub.SetForwardingPipelineConfig(req)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        c.set_pipeline(program="// v2", action="VERIFY_AND_SAVE")
        req.config.p4_device_config = DeviceConfig("// v3", "prog.p4").encode()
        req.config.p4info.CopyFrom(P4INFO)
        with pytest.raises(grpc.RpcError) as info:
            c.stub.SetForwardingPipelineConfig(req)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert json.loads(server.switch.pipeline.device_config)["program"] == "// v1"
        req.ClearField("config")
        c.stub.SetForwardingPipelineConfig(req)  # the saved v2, not the request's v3
        assert json.loads(server.switch.pipeline.device_config)["program"] == "// v2"
    finally:
        c.close()


def test_reconcile_and_commit_keeps_state_or_refuses(client, server):
    """RECONCILE_AND_COMMIT must preserve the forwarding state: with the running program it
    keeps the entries (new cookie); another program is INVALID_ARGUMENT, nothing changes."""
    client.write(table_update("INSERT", fwd_entry(1, 2)))
    running = server.switch.pipeline
    program = json.loads(running.device_config)["program"]
    client.set_pipeline(program=program, action="RECONCILE_AND_COMMIT", cookie=99)
    assert server.switch.pipeline is running and running.cookie == 99
    table = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    assert len(client.read(entity("table_entry", table))) == 1
    with pytest.raises(grpc.RpcError) as info:
        client.set_pipeline(program="// another", action="RECONCILE_AND_COMMIT")
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "VERIFY_AND_COMMIT" in info.value.details()
    assert server.switch.pipeline is running
    assert len(client.read(entity("table_entry", table))) == 1


def test_bad_pipeline_configs(server):
    c = Client(server.address, election_id=1)
    try:
        c.arbitrate()
        cases = [
            {"program": "syntax error here"},  # the front end's error text is passed on
            {"config_bytes": b"{not json"},
            {"config_bytes": b'{"target": "bmv2"}'},
            {"config_bytes": b""},
        ]
        messages = []
        for kwargs in cases:
            with pytest.raises(grpc.RpcError) as info:
                c.set_pipeline(**kwargs)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            messages.append(info.value.details())
        assert messages[0] == "prog.p4:3:7: error: syntax error, unexpected IDENTIFIER"
        assert "not a p4sim JSON device config" in messages[1]
        assert "p4sim_device_config" in messages[2]
        assert "empty" in messages[3]
        # a P4Info that does not describe the program
        wrong = p4info_gen.generate(fake_model())
        wrong.tables[0].preamble.id += 1
        with pytest.raises(grpc.RpcError) as info:
            c.set_pipeline(p4info=wrong)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "Ingress.fwd" in info.value.details()
        assert server.switch.pipeline is None
    finally:
        c.close()


def test_write_before_pipeline_is_failed_precondition(server):
    c = Client(server.address, election_id=1)
    try:
        c.arbitrate()
        with pytest.raises(grpc.RpcError) as info:
            c.write(table_update("INSERT", fwd_entry(0, 1)))
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        c.close()


def test_packet_out_and_packet_in(client, server):
    # PacketOut: the packet_out header (egress_port=2) is prepended; the fake engine honours it
    out = p4runtime_pb2.StreamMessageRequest()
    out.packet.payload = b"\xaa" * 20
    out.packet.metadata.add(metadata_id=1, value=b"\x02")
    out.packet.metadata.add(metadata_id=2, value=b"\x00")
    client.send(out)
    assert server.ports.wait_for(1, timeout=30) == [(2, b"\xaa" * 20)]
    # PacketIn: the pipeline sends to the CPU port; metadata parsed off the front
    client.write(table_update("INSERT", fwd_entry(1, action="Ingress.to_cpu")))
    server.ports.inject(1, b"\xbb" * 30)
    packet_in = client.next("packet")
    assert packet_in.payload == b"\xbb" * 30
    assert [(m.metadata_id, m.value) for m in packet_in.metadata] == [(1, b"\x01"), (2, b"\x00")]
    # a bad PacketOut gets a stream error, the stream stays open
    bad = p4runtime_pb2.StreamMessageRequest()
    bad.packet.payload = b"\x00"
    bad.packet.metadata.add(metadata_id=7, value=b"\x01")
    client.send(bad)
    err = client.next("error")
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT
    assert err.packet_out.packet_out.payload == b"\x00"
    client.send(out)
    assert server.ports.wait_for(1, timeout=30) == [(2, b"\xaa" * 20)]


def test_packet_out_from_backup_is_rejected(client, server):
    backup = Client(server.address, election_id=2)
    try:
        assert backup.arbitrate().status.code == code_pb2.ALREADY_EXISTS
        out = p4runtime_pb2.StreamMessageRequest()
        out.packet.payload = b"\xaa" * 20
        out.packet.metadata.add(metadata_id=1, value=b"\x02")
        out.packet.metadata.add(metadata_id=2, value=b"\x00")
        backup.send(out)
        assert backup.next("error").canonical_code == code_pb2.PERMISSION_DENIED
        assert server.ports.collect() == []
    finally:
        backup.close()


def test_random_stream_messages_keep_the_stream_and_server_alive(client, server):
    """Malformed PacketOuts get StreamErrors with spec codes; the stream stays usable."""
    import random

    rng = random.Random(5)
    sent_bad = 0
    for _ in range(40):
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 30)))
        for _ in range(rng.choice([0, 1, 2, 3])):
            msg.packet.metadata.add(
                metadata_id=rng.choice([0, 1, 2, 5]),
                value=bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 2, 3]))),
            )
        client.send(msg)
        sent_bad += 1
    errors = 0
    while True:
        try:  # the first error may take long on a loaded machine; then 1 s of quiet ends it
            err = client.next("error", timeout=30.0 if errors == 0 else 1.0)
        except queue.Empty:
            break
        assert err.canonical_code in (code_pb2.INVALID_ARGUMENT, code_pb2.OUT_OF_RANGE)
        errors += 1
    assert 0 < errors <= sent_bad
    server.ports.collect()
    good = p4runtime_pb2.StreamMessageRequest()
    good.packet.payload = b"\xaa" * 20
    good.packet.metadata.add(metadata_id=1, value=b"\x02")
    good.packet.metadata.add(metadata_id=2, value=b"\x00")
    client.send(good)
    assert server.ports.wait_for(1, timeout=30) == [(2, b"\xaa" * 20)]


def test_stream_errors_name_the_offending_message(client):
    """Spec "Stream Error Reporting": a DigestListAck for an unknown digest is
    INVALID_ARGUMENT, an `other` message UNIMPLEMENTED; every StreamError sets the details oneof for its message kind.
    """
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id = 0x17ABCDEF
    ack.digest_ack.list_id = 3
    client.send(ack)
    err = client.next("error")
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT
    assert err.WhichOneof("details") == "digest_list_ack"
    assert err.digest_list_ack.digest_list_ack.list_id == 3
    other = p4runtime_pb2.StreamMessageRequest()
    other.other.type_url = "type.example/unknown"
    client.send(other)
    err = client.next("error")
    assert err.canonical_code == code_pb2.UNIMPLEMENTED
    assert err.WhichOneof("details") == "other"
    assert err.other.other.type_url == "type.example/unknown"
    bad_out = p4runtime_pb2.StreamMessageRequest()
    bad_out.packet.payload = b"x"
    client.send(bad_out)  # packet_out metadata missing
    err = client.next("error")
    assert err.WhichOneof("details") == "packet_out" and err.packet_out.packet_out.payload == b"x"


def test_stream_limit_is_resource_exhausted_and_unary_rpcs_still_run(server):
    """Spec "Rules for Handling MasterArbitrationUpdate": streams beyond the server's limit
    get RESOURCE_EXHAUSTED; the streams held never starve unary RPCs."""
    from p4sim.p4runtime.server import MAX_STREAMS

    clients = [Client(server.address, election_id=i + 1) for i in range(MAX_STREAMS)]
    try:
        for c in clients:
            assert c.arbitrate() is not None
        extra = Client(server.address, election_id=100)
        assert extra.arbitrate() is None
        assert extra.stream_error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        extra.close()
        stub = p4runtime_pb2_grpc.P4RuntimeStub(clients[0].channel)
        assert stub.Capabilities(
            p4runtime_pb2.CapabilitiesRequest(), timeout=30
        ).p4runtime_api_version
        clients.pop().close()  # a slot frees once the server has seen the stream end
        deadline = time.monotonic() + 30
        while True:
            again = Client(server.address, election_id=200)
            answered = again.arbitrate() is not None
            again.close()
            if answered:
                break
            assert time.monotonic() < deadline, "the closed stream's slot was never freed"
            time.sleep(0.1)
    finally:
        for c in clients:
            c.close()


def test_writes_after_verify_and_save_land_at_commit(client, server):
    """Spec "SetForwardingPipelineConfig RPC": after VERIFY_AND_SAVE the forwarding state is
    not modified, reads and writes refer to the saved config, and COMMIT brings in the
    writes made since."""
    client.write(table_update("INSERT", fwd_entry(1, 2)))
    running = server.switch.pipeline
    client.set_pipeline(program="// saved", action="VERIFY_AND_SAVE")
    table = entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"]))
    assert client.read(table) == []  # the saved config starts empty
    client.write(table_update("INSERT", fwd_entry(2, 1)))
    assert server.switch.pipeline is running
    assert [e.match for e in running.device.tables["Ingress.fwd"].entries()] == [
        {"standard_metadata.ingress_port": FieldMatch("exact", value=1)}
    ]
    commit = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
    commit.election_id.low = client.election_id
    commit.action = commit.COMMIT
    client.stub.SetForwardingPipelineConfig(commit, timeout=60)
    assert server.switch.pipeline is not running
    (entry,) = client.read(table)
    assert entry.table_entry.match[0].exact.value == b"\x02"


def test_a_named_role_in_unary_rpcs_is_not_found(client):
    """Spec ("Write RPC", "SetForwardingPipelineConfig RPC"): a role the device does not have
    is NOT_FOUND, checked before the primary check."""
    write = p4runtime_pb2.WriteRequest(device_id=0, role="sdn")
    write.election_id.low = client.election_id
    write.updates.append(table_update("INSERT", fwd_entry(1, 2)))
    read = p4runtime_pb2.ReadRequest(device_id=0, role="sdn")
    read.entities.append(entity("table_entry", p4runtime_pb2.TableEntry()))
    config = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0, role="sdn")
    config.action = config.VERIFY
    for call, req in (
        (client.stub.Write, write),
        (lambda r, timeout: list(client.stub.Read(r, timeout=timeout)), read),
        (client.stub.SetForwardingPipelineConfig, config),
    ):
        with pytest.raises(grpc.RpcError) as info:
            call(req, timeout=60)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND, req

"""P4Runtime server tests with a real gRPC client against an in-process server.

These tests exercise the server module (arbitration, pipeline config, translation, status
codes, packet I/O through the CPU port) over real gRPC. The device behind it is a small fake
engine defined here (the unit under test is the server, not the engine); the same scenarios
run against the real engine in test_runtime_integration.py.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_p4runtime.py
"""

from __future__ import annotations

import json
import queue
import threading
import time

import grpc
import pytest
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

from p4sim import model
from p4sim import p4info as p4info_gen
from p4sim.io import InProcessPorts
from p4sim.model import (
    ActionDef,
    ActionRefDef,
    ConstEntryDef,
    ControllerHeaderDef,
    CounterDef,
    FieldMatch,
    MatchFieldDef,
    MeterDef,
    ParamDef,
    ProgramModel,
    RegisterDef,
    TableDef,
)
from p4sim.p4runtime import P4RuntimeServer
from p4sim.p4runtime.device_config import DeviceConfig
from p4sim.switch import Switch

CPU_PORT = 64
Update = p4runtime_pb2.Update

# ---------------------------------------------------------------------------
# A fake program and engine: enough v1model to forward by one exact table
# ---------------------------------------------------------------------------


def fake_model() -> ProgramModel:
    fwd = TableDef(
        name="Ingress.fwd",
        keys=[MatchFieldDef("standard_metadata.ingress_port", 9, "exact")],
        actions=[
            ActionRefDef("Ingress.set_port"),
            ActionRefDef("Ingress.to_cpu"),
            ActionRefDef("Ingress.drop"),
            ActionRefDef("NoAction", "DEFAULT_ONLY", ["@defaultonly"]),
        ],
        size=16,
        default_action="NoAction",
        default_args={},
        const_default_action=False,
        const_entries=None,
        direct_counter="Ingress.fwd_counter",
        direct_meter="Ingress.fwd_meter",
    )
    acl = TableDef(
        name="Ingress.acl",
        keys=[
            MatchFieldDef("dst_mac", 48, "ternary", ['@name("dst_mac")']),
            MatchFieldDef("ipv4_dst", 32, "lpm"),
            MatchFieldDef("l4_port", 16, "range"),
            MatchFieldDef("vlan", 12, "optional"),
        ],
        actions=[
            ActionRefDef("Ingress.drop", "TABLE_ONLY", ["@tableonly"]),
            ActionRefDef("NoAction"),
        ],
        size=1024,
        default_action="NoAction",
        default_args={},
        const_default_action=False,
        const_entries=None,
    )
    fixed = TableDef(
        name="Ingress.fixed",
        keys=[MatchFieldDef("hdr.ethernet.ether_type", 16, "exact")],
        actions=[ActionRefDef("Ingress.drop"), ActionRefDef("NoAction")],
        size=4,
        default_action="NoAction",
        default_args={},
        const_default_action=True,
        const_entries=[
            ConstEntryDef(
                {"hdr.ethernet.ether_type": FieldMatch("exact", 0x86DD)}, "Ingress.drop", {}, 0
            )
        ],
    )
    return ProgramModel(
        tables=[fwd, acl, fixed],
        actions=[
            ActionDef("NoAction", [], ['@noWarn("unused")']),
            ActionDef("Ingress.set_port", [ParamDef("port", 9)]),
            ActionDef("Ingress.to_cpu", []),
            ActionDef("Ingress.drop", []),
        ],
        registers=[RegisterDef("Ingress.next_sn", 8, 18)],
        counters=[
            CounterDef("Ingress.port_counter", 4, "packets_and_bytes"),
            CounterDef("Ingress.fwd_counter", 0, "packets_and_bytes", direct_table="Ingress.fwd"),
        ],
        meters=[
            MeterDef("Ingress.rate", 4, "bytes"),
            MeterDef("Ingress.fwd_meter", 0, "packets", direct_table="Ingress.fwd"),
        ],
        controller_headers=[
            ControllerHeaderDef(
                "packet_in",
                [ParamDef("ingress_port", 9), ParamDef("_pad", 7)],
                ['@controller_header("packet_in")'],
                "packet_in_header_t",
            ),
            ControllerHeaderDef(
                "packet_out",
                [ParamDef("egress_port", 9), ParamDef("_pad", 7)],
                ['@controller_header("packet_out")'],
                "packet_out_header_t",
            ),
        ],
    )


class FakeTable:
    def __init__(self, definition: TableDef) -> None:
        self.definition = definition
        self._entries: dict[tuple, model.TableEntry] = {}
        self._default = model.TableEntry(
            {}, definition.default_action, dict(definition.default_args)
        )
        for e in definition.const_entries or []:
            entry = model.TableEntry(
                dict(e.match), e.action, dict(e.args), e.priority, is_const=True
            )
            self._entries[self._key(entry.match, entry.priority)] = entry

    @staticmethod
    def _key(match, priority):
        return (tuple(sorted((k, repr(v)) for k, v in match.items())), priority)

    def insert(self, entry):
        key = self._key(entry.match, entry.priority)
        if key in self._entries:
            raise model.EntryExists("duplicate entry")
        if len(self._entries) >= self.definition.size:
            raise model.TableFull("table full")
        self._entries[key] = entry

    def modify(self, entry):
        key = self._key(entry.match, entry.priority)
        if key not in self._entries:
            raise model.EntryNotFound("no such entry")
        self._entries[key] = entry

    def delete(self, entry):
        if self._entries.pop(self._key(entry.match, entry.priority), None) is None:
            raise model.EntryNotFound("no such entry")

    def find(self, match, priority):
        return self._entries.get(self._key(match, priority))

    def entries(self):
        return list(self._entries.values())

    def default_entry(self):
        return self._default

    def set_default(self, action, args):
        self._default = model.TableEntry({}, action, dict(args))

    def reset_default(self):
        self._default = model.TableEntry(
            {}, self.definition.default_action, dict(self.definition.default_args)
        )

    def clear(self):
        self._entries = {k: e for k, e in self._entries.items() if e.is_const}
        self.reset_default()


class FakeRegister:
    def __init__(self, definition):
        self.definition = definition
        self.values = [0] * definition.size

    def read(self, index):
        return self.values[index]

    def write(self, index, value):
        self.values[index] = value


class FakeCounter:
    def __init__(self, definition):
        self.definition = definition
        self.values = [(0, 0)] * definition.size

    def read(self, index):
        return self.values[index]

    def write(self, index, packets, bytes_):
        self.values[index] = (packets, bytes_)


class FakeMeter:
    def __init__(self, definition):
        self.definition = definition
        self.configs = {}

    def set_config(self, index, config):
        if config is None:
            self.configs.pop(index, None)
        else:
            self.configs[index] = config

    def get_config(self, index):
        return self.configs.get(index)


class FakeDevice:
    """Ingress.fwd on the ingress port; packet_out/packet_in headers on the CPU port."""

    def __init__(self, program_model, cpu_port):
        self.model = program_model
        self.lock = threading.RLock()
        self.cpu_port = cpu_port
        self.tables = {t.name: FakeTable(t) for t in program_model.tables}
        self.registers = {r.name: FakeRegister(r) for r in program_model.registers}
        self.counters = {
            c.name: FakeCounter(c) for c in program_model.counters if not c.direct_table
        }
        self.pre = model.ReplicationEngine()
        self.meters = {m.name: FakeMeter(m) for m in program_model.meters}

    def process(self, ingress_port, frame):
        if ingress_port == self.cpu_port:
            egress = int.from_bytes(frame[:2], "big") >> 7
            return [(egress, frame[2:])]
        entry = self.tables["Ingress.fwd"].find(
            {"standard_metadata.ingress_port": FieldMatch("exact", ingress_port)}, 0
        )
        if entry is None:
            return []
        entry.packets += 1
        entry.bytes += len(frame)
        if entry.action == "Ingress.set_port":
            return [(entry.args["port"], frame)]
        if entry.action == "Ingress.to_cpu":
            return [(self.cpu_port, (ingress_port << 7).to_bytes(2, "big") + frame)]
        return []


class FakeProgram:
    def __init__(self, source):
        self.model = fake_model()
        self.source = source

    def new_device(self, cpu_port=None):
        return FakeDevice(self.model, cpu_port)


def fake_compiler(text: str, filename: str):
    from p4sim.errors import P4Error

    if "syntax error" in text:
        raise P4Error("syntax error, unexpected IDENTIFIER", filename, 3, 7)
    return FakeProgram(text)


# ---------------------------------------------------------------------------
# Fixtures: a server on an ephemeral port, clients with a StreamChannel
# ---------------------------------------------------------------------------


class Client:
    """A P4Runtime client: a stub and an open StreamChannel."""

    def __init__(self, address: str, election_id: int, device_id: int = 0) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.election_id = election_id
        self.device_id = device_id
        self._requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self.stream_error: grpc.RpcError | None = None
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        try:
            for response in self._stream:
                self.responses.put(response)
        except grpc.RpcError as exc:
            self.stream_error = exc
        self.responses.put(None)

    def arbitrate(self, election_id: int | None = None, role: str = "", unset: bool = False):
        """Send a MasterArbitrationUpdate (`unset`: without an election id) and return the
        server's answer."""
        if election_id is not None:
            self.election_id = election_id
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        if not unset:
            req.arbitration.election_id.low = self.election_id
        if role:
            req.arbitration.role.name = role
        self._requests.put(req)
        return self.next("arbitration")

    def next(self, kind: str, timeout: float = 5.0):
        while True:
            msg = self.responses.get(timeout=timeout)
            if msg is None:
                return None
            if msg.WhichOneof("update") == kind:
                return getattr(msg, kind)

    def send(self, req):
        self._requests.put(req)

    def set_pipeline(
        self,
        program="control C() {}",
        action="VERIFY_AND_COMMIT",
        p4info=None,
        config_bytes=None,
        cookie=None,
    ):
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        req.election_id.low = self.election_id
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.Action.Value(action)
        if config_bytes is None:
            config_bytes = DeviceConfig(program, "prog.p4").encode()
        req.config.p4_device_config = config_bytes
        req.config.p4info.CopyFrom(p4info if p4info is not None else P4INFO)
        if cookie is not None:
            req.config.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(req, timeout=10)

    def write(self, *updates, election_id=None):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.low = self.election_id if election_id is None else election_id
        req.updates.extend(updates)
        return self.stub.Write(req, timeout=10)

    def read(self, *entities):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        return [e for resp in self.stub.Read(req, timeout=10) for e in resp.entities]

    def close(self):
        self._requests.put(None)
        self.channel.close()


P4INFO = p4info_gen.generate(fake_model())
IDS = {
    o.preamble.name: o.preamble.id
    for kind in (
        "tables",
        "actions",
        "counters",
        "direct_counters",
        "registers",
        "meters",
        "direct_meters",
    )
    for o in getattr(P4INFO, kind)
}


@pytest.fixture
def server():
    ports = InProcessPorts([0, 1, 2])
    switch = Switch(ports, cpu_port=CPU_PORT)
    switch.start()
    srv = P4RuntimeServer(switch, "127.0.0.1:0", device_id=0, compiler=fake_compiler)
    srv.start()
    srv.ports = ports
    srv.switch = switch
    yield srv
    srv.stop()
    switch.close()


@pytest.fixture
def client(server):
    c = Client(server.address, election_id=10)
    assert c.arbitrate().status.code == code_pb2.OK
    c.set_pipeline()
    yield c
    c.close()


# ---------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------


def b(value: int, nbytes: int | None = None) -> bytes:
    """Big-endian bytes: canonical (shortest) unless nbytes asks for padding."""
    return value.to_bytes(nbytes or max(1, (value.bit_length() + 7) // 8), "big")


def fwd_entry(
    in_port: int, out_port: int | None = 2, action="Ingress.set_port", value: bytes | None = None
):
    e = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    e.match.add(field_id=1).exact.value = value if value is not None else b(in_port)
    e.action.action.action_id = IDS[action]
    if action == "Ingress.set_port":
        e.action.action.params.add(param_id=1, value=b(out_port))
    return e


def update(kind: str, entity_field: str, msg) -> p4runtime_pb2.Update:
    u = p4runtime_pb2.Update(type=Update.Type.Value(kind))
    getattr(u.entity, entity_field).CopyFrom(msg)
    return u


def table_update(kind: str, entry) -> p4runtime_pb2.Update:
    return update(kind, "table_entry", entry)


def batch_errors(exc: grpc.RpcError) -> list[tuple[int, str]]:
    """(canonical_code, message) per update from grpc-status-details-bin."""
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            errors = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                assert detail.Unpack(err)
                errors.append((err.canonical_code, err.message))
            return errors
    raise AssertionError("no grpc-status-details-bin in the error")


def write_error(client, *updates) -> list[tuple[int, str]]:
    with pytest.raises(grpc.RpcError) as info:
        client.write(*updates)
    assert info.value.code() == grpc.StatusCode.UNKNOWN
    return batch_errors(info.value)


def entity(field: str, msg) -> p4runtime_pb2.Entity:
    e = p4runtime_pb2.Entity()
    getattr(e, field).CopyFrom(msg)
    return e


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_capabilities(server):
    stub = p4runtime_pb2_grpc.P4RuntimeStub(grpc.insecure_channel(server.address))
    resp = stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
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
            x.stub.Write(req, timeout=10)
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
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=5
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


def test_table_entry_crud_and_reads(client, server):
    client.write(table_update("INSERT", fwd_entry(0, 1)), table_update("INSERT", fwd_entry(1, 2)))
    all_fwd = client.read(
        entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"]))
    )
    assert sorted(e.table_entry.match[0].exact.value for e in all_fwd) == [b"\x00", b"\x01"]
    # canonical bytestrings on read even when written with leading zeros
    client.write(table_update("MODIFY", fwd_entry(1, 0, value=b"\x00\x01")))
    one = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    one.match.add(field_id=1).exact.value = b"\x01"
    [got] = client.read(entity("table_entry", one))
    assert got.table_entry.action.action.params[0].value == b"\x00"
    assert got.table_entry.action.action.action_id == IDS["Ingress.set_port"]
    # wildcard over all tables includes the const entry, marked const
    everything = client.read(entity("table_entry", p4runtime_pb2.TableEntry()))
    assert len(everything) == 3
    const = [e.table_entry for e in everything if e.table_entry.table_id == IDS["Ingress.fixed"]]
    assert const[0].is_const and const[0].match[0].exact.value == b"\x86\xdd"
    client.write(table_update("DELETE", fwd_entry(0, None, action="Ingress.drop")))
    left = client.read(entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])))
    assert [e.table_entry.match[0].exact.value for e in left] == [b"\x01"]


def test_default_entry_modify_and_read(client):
    entry = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"], is_default_action=True)
    entry.action.action.action_id = IDS["Ingress.drop"]
    client.write(table_update("MODIFY", entry))
    req = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"], is_default_action=True)
    [got] = client.read(entity("table_entry", req))
    assert got.table_entry.is_default_action
    assert got.table_entry.action.action.action_id == IDS["Ingress.drop"]
    # MODIFY without an action restores the program's default
    client.write(
        table_update(
            "MODIFY", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"], is_default_action=True)
        )
    )
    [got] = client.read(entity("table_entry", req))
    assert got.table_entry.action.action.action_id == IDS["NoAction"]
    # INSERT of a default entry is invalid; the const default action is PERMISSION_DENIED
    fixed = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fixed"], is_default_action=True)
    fixed.action.action.action_id = IDS["Ingress.drop"]
    errors = write_error(client, table_update("INSERT", entry), table_update("MODIFY", fixed))
    assert [code for code, _ in errors] == [code_pb2.INVALID_ARGUMENT, code_pb2.PERMISSION_DENIED]


def acl_entry(
    priority=10,
    mac=(0x0A0000000000, 0xFF0000000000),
    prefix=(0x0A000000, 8),
    port_range=(1000, 2000),
    vlan=None,
    action="Ingress.drop",
):
    e = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.acl"], priority=priority)
    if mac is not None:
        t = e.match.add(field_id=1).ternary
        t.value, t.mask = b(mac[0], 6), b(mac[1], 6)
    if prefix is not None:
        lpm = e.match.add(field_id=2).lpm
        lpm.value, lpm.prefix_len = b(prefix[0], 4), prefix[1]
    if port_range is not None:
        r = e.match.add(field_id=3).range
        r.low, r.high = b(port_range[0], 2), b(port_range[1], 2)
    if vlan is not None:
        e.match.add(field_id=4).optional.value = b(vlan, 2)
    e.action.action.action_id = IDS[action]
    return e


def test_ternary_lpm_range_optional_round_trip(client):
    client.write(
        table_update("INSERT", acl_entry(vlan=5)),
        table_update("INSERT", acl_entry(priority=20, mac=None, port_range=None)),
    )
    got = client.read(entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.acl"])))
    by_priority = {e.table_entry.priority: e.table_entry for e in got}
    assert set(by_priority) == {10, 20}
    first = by_priority[10]
    assert [m.field_id for m in first.match] == [1, 2, 3, 4]
    assert first.match[0].ternary.value == b"\x0a" + bytes(5)
    assert first.match[1].lpm.prefix_len == 8
    assert first.match[2].range.low == b"\x03\xe8"
    assert first.match[3].optional.value == b"\x05"
    assert [m.field_id for m in by_priority[20].match] == [2]  # wildcards stay omitted


def test_every_entry_error_code(client):
    """Each malformed update gets its own code; the valid ones in the batch still apply."""
    unknown_table = fwd_entry(0, 1)
    unknown_table.table_id = 0x02ABCDEF
    unknown_action = fwd_entry(0, 1)
    unknown_action.action.action.action_id = 0x01ABCDEF
    bad_field = fwd_entry(0, 1)
    bad_field.match[0].field_id = 9
    missing_exact = fwd_entry(0, 1)
    del missing_exact.match[:]
    wrong_kind = fwd_entry(0, 1)
    wrong_kind.match[0].ClearField("exact")
    wrong_kind.match[0].lpm.value, wrong_kind.match[0].lpm.prefix_len = b"\x01", 9
    missing_param = fwd_entry(3, 1)
    del missing_param.action.action.params[:]
    defaultonly = fwd_entry(4, action="NoAction")
    updates = [
        table_update("INSERT", fwd_entry(0, 1)),  # OK
        table_update("INSERT", fwd_entry(0, 2)),  # duplicate
        table_update("DELETE", fwd_entry(5, 1)),  # absent
        table_update("MODIFY", fwd_entry(6, 1)),  # absent
        table_update("INSERT", fwd_entry(0, 1, value=b"\x02\x00")),  # 512 > 9 bits
        table_update("INSERT", fwd_entry(7, 1024)),  # parameter too wide
        table_update("INSERT", fwd_entry(0, 1, value=b"")),  # empty bytestring
        table_update("INSERT", unknown_table),
        table_update("INSERT", unknown_action),
        table_update("INSERT", bad_field),
        table_update("INSERT", missing_exact),
        table_update("INSERT", wrong_kind),
        table_update("INSERT", missing_param),
        table_update("INSERT", defaultonly),
        table_update("INSERT", acl_entry(priority=0)),  # priority required
        table_update("INSERT", acl_entry(mac=(0x0A0000000001, 0xFF0000000000))),  # value&~mask
        table_update("INSERT", acl_entry(prefix=(0x0A000001, 8))),  # bits past the prefix
        table_update("INSERT", acl_entry(port_range=(5, 4))),  # low > high
        table_update("INSERT", acl_entry(mac=(0, 0))),  # zero mask must be omitted
        table_update("INSERT", acl_entry(action="NoAction", priority=3)),  # OK
        table_update("INSERT", table_entry_with_priority()),  # priority on exact table
        table_update("INSERT", const_table_entry()),  # const table
        p4runtime_pb2.Update(type=Update.INSERT),  # no entity
        table_update("UNSPECIFIED", fwd_entry(8, 1)),
    ]
    errors = write_error(client, *updates)
    C = code_pb2
    assert [code for code, _ in errors] == [
        C.OK,
        C.ALREADY_EXISTS,
        C.NOT_FOUND,
        C.NOT_FOUND,
        C.OUT_OF_RANGE,
        C.OUT_OF_RANGE,
        C.INVALID_ARGUMENT,
        C.NOT_FOUND,
        C.INVALID_ARGUMENT,  # spec "Action Specification": an action_id not among the table's actions
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.PERMISSION_DENIED,  # spec "Action Specification": a valid action against its @defaultonly scope
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
        C.OK,
        C.INVALID_ARGUMENT,
        C.PERMISSION_DENIED,
        C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
    ]
    messages = dict(enumerate(m for _, m in errors))
    assert "does not fit in 9 bits" in messages[4]
    assert "priority" in messages[14]
    assert "outside the mask" in messages[15]
    assert "@defaultonly" in messages[13]
    # both OK updates were applied, and the server is still up
    acl = client.read(entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.acl"])))
    assert [e.table_entry.priority for e in acl] == [3]
    assert (
        len(
            client.read(
                entity("table_entry", p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"]))
            )
        )
        == 1
    )


def table_entry_with_priority():
    e = fwd_entry(9, 1)
    e.priority = 5
    return e


def const_table_entry():
    e = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fixed"])
    e.match.add(field_id=1).exact.value = b"\x08\x00"
    e.action.action.action_id = IDS["Ingress.drop"]
    return e


def test_table_full_is_resource_exhausted(client):
    updates = [table_update("INSERT", fwd_entry(i, 1)) for i in range(17)]
    errors = write_error(client, *updates)
    assert [c for c, _ in errors] == [code_pb2.OK] * 16 + [code_pb2.RESOURCE_EXHAUSTED]


def test_read_errors(client):
    with pytest.raises(grpc.RpcError) as info:
        client.read(entity("table_entry", p4runtime_pb2.TableEntry(table_id=0x02000001)))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        client.read(entity("counter_entry", p4runtime_pb2.CounterEntry(counter_id=0x12000001)))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    # a program without value sets has none to read; extern entries are not supported
    assert list(client.read(entity("value_set_entry", p4runtime_pb2.ValueSetEntry()))) == []
    with pytest.raises(grpc.RpcError) as info:
        client.read(entity("value_set_entry", p4runtime_pb2.ValueSetEntry(value_set_id=0x03000001)))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        client.read(entity("extern_entry", p4runtime_pb2.ExternEntry()))
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    req = p4runtime_pb2.ReadRequest(device_id=3)
    req.entities.add().table_entry.table_id = 0
    with pytest.raises(grpc.RpcError) as info:
        list(client.stub.Read(req))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_direct_and_indirect_counters(client, server):
    client.write(table_update("INSERT", fwd_entry(0, 1)))
    for _ in range(3):
        server.ports.inject(0, bytes(60))
    assert len(server.ports.collect()) == 3
    req = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    req.counter_data.SetInParent()
    [got] = client.read(entity("table_entry", req))
    assert (got.table_entry.counter_data.packet_count, got.table_entry.counter_data.byte_count) == (
        3,
        180,
    )
    # direct counter entity: read and reset
    dce = p4runtime_pb2.DirectCounterEntry()
    dce.table_entry.CopyFrom(fwd_entry(0, 1))
    [got] = client.read(entity("direct_counter_entry", dce))
    assert got.direct_counter_entry.data.packet_count == 3
    dce.data.packet_count, dce.data.byte_count = 0, 0
    client.write(update("MODIFY", "direct_counter_entry", dce))
    [got] = client.read(entity("direct_counter_entry", dce))
    assert got.direct_counter_entry.data.packet_count == 0
    # MODIFY of the entry keeps its counter
    server.ports.inject(0, bytes(60))
    client.write(table_update("MODIFY", fwd_entry(0, 2)))
    [got] = client.read(entity("direct_counter_entry", dce))
    assert got.direct_counter_entry.data.packet_count == 1
    # indirect counter: write one cell, wildcard-read all cells
    ce = p4runtime_pb2.CounterEntry(counter_id=IDS["Ingress.port_counter"])
    ce.index.index = 2
    ce.data.packet_count, ce.data.byte_count = 5, 500
    client.write(update("MODIFY", "counter_entry", ce))
    cells = client.read(
        entity("counter_entry", p4runtime_pb2.CounterEntry(counter_id=IDS["Ingress.port_counter"]))
    )
    assert [(c.counter_entry.index.index, c.counter_entry.data.packet_count) for c in cells] == [
        (0, 0),
        (1, 0),
        (2, 5),
        (3, 0),
    ]
    assert len(client.read(entity("counter_entry", p4runtime_pb2.CounterEntry()))) == 4
    ce.index.index = 4
    errors = write_error(
        client, update("MODIFY", "counter_entry", ce), update("INSERT", "counter_entry", ce)
    )
    assert [c for c, _ in errors] == [code_pb2.OUT_OF_RANGE, code_pb2.INVALID_ARGUMENT]


def test_registers(client, server):
    re_ = p4runtime_pb2.RegisterEntry(register_id=IDS["Ingress.next_sn"])
    re_.index.index = 3
    re_.data.bitstring = b(0x3FFFF, 3)
    client.write(update("MODIFY", "register_entry", re_))
    assert server.switch.pipeline.device.registers["Ingress.next_sn"].values[3] == 0x3FFFF
    [got] = client.read(entity("register_entry", re_))
    assert got.register_entry.data.bitstring == b"\x03\xff\xff"
    everything = client.read(entity("register_entry", p4runtime_pb2.RegisterEntry()))
    assert [e.register_entry.index.index for e in everything] == list(range(8))
    too_wide = p4runtime_pb2.RegisterEntry(register_id=IDS["Ingress.next_sn"])
    too_wide.index.index = 0
    too_wide.data.bitstring = b(0x40000, 3)
    bad_index = p4runtime_pb2.RegisterEntry(register_id=IDS["Ingress.next_sn"])
    bad_index.index.index = 8
    bad_index.data.bitstring = b"\x01"
    not_bits = p4runtime_pb2.RegisterEntry(register_id=IDS["Ingress.next_sn"])
    not_bits.index.index = 0
    not_bits.data.CopyFrom(p4data_pb2.P4Data(bool=True))
    errors = write_error(
        client,
        update("MODIFY", "register_entry", too_wide),
        update("MODIFY", "register_entry", bad_index),
        update("MODIFY", "register_entry", not_bits),
        update("MODIFY", "register_entry", p4runtime_pb2.RegisterEntry(register_id=0x16ABCDEF)),
    )
    assert [c for c, _ in errors] == [
        code_pb2.OUT_OF_RANGE,
        code_pb2.OUT_OF_RANGE,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.NOT_FOUND,
    ]


def test_pre_multicast_groups_and_clone_sessions(client, server):
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 1
    pre.multicast_group_entry.replicas.add(egress_port=1, instance=1)
    pre.multicast_group_entry.replicas.add(port=b"\x02", instance=1)
    client.write(update("INSERT", "packet_replication_engine_entry", pre))
    device = server.switch.pipeline.device
    assert device.pre.multicast_groups[1] == [model.Replica(1, 1), model.Replica(2, 1)]
    clone = p4runtime_pb2.PacketReplicationEngineEntry()
    clone.clone_session_entry.session_id = 5
    clone.clone_session_entry.replicas.add(egress_port=CPU_PORT)
    clone.clone_session_entry.packet_length_bytes = 128
    client.write(update("INSERT", "packet_replication_engine_entry", clone))
    assert device.pre.clone_sessions[5].packet_length_bytes == 128
    pre.multicast_group_entry.replicas.pop()
    client.write(update("MODIFY", "packet_replication_engine_entry", pre))
    wildcard = p4runtime_pb2.PacketReplicationEngineEntry()
    wildcard.multicast_group_entry.SetInParent()
    [got] = client.read(entity("packet_replication_engine_entry", wildcard))
    assert [
        (r.egress_port, r.instance)
        for r in got.packet_replication_engine_entry.multicast_group_entry.replicas
    ] == [(1, 1)]
    wildcard_clone = p4runtime_pb2.PacketReplicationEngineEntry()
    wildcard_clone.clone_session_entry.SetInParent()
    [got] = client.read(entity("packet_replication_engine_entry", wildcard_clone))
    assert got.packet_replication_engine_entry.clone_session_entry.session_id == 5
    absent = p4runtime_pb2.PacketReplicationEngineEntry()
    absent.multicast_group_entry.multicast_group_id = 9
    zero = p4runtime_pb2.PacketReplicationEngineEntry()
    zero.multicast_group_entry.multicast_group_id = 0
    errors = write_error(
        client,
        update("INSERT", "packet_replication_engine_entry", pre),
        update("MODIFY", "packet_replication_engine_entry", absent),
        update("DELETE", "packet_replication_engine_entry", absent),
        update("INSERT", "packet_replication_engine_entry", zero),
        update("DELETE", "packet_replication_engine_entry", clone),
    )
    assert [c for c, _ in errors] == [
        code_pb2.ALREADY_EXISTS,
        code_pb2.NOT_FOUND,
        code_pb2.NOT_FOUND,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.OK,
    ]
    assert device.pre.clone_sessions == {}


def test_packet_out_and_packet_in(client, server):
    # PacketOut: the packet_out header (egress_port=2) is prepended; the fake engine honours it
    out = p4runtime_pb2.StreamMessageRequest()
    out.packet.payload = b"\xaa" * 20
    out.packet.metadata.add(metadata_id=1, value=b"\x02")
    out.packet.metadata.add(metadata_id=2, value=b"\x00")
    client.send(out)
    assert server.ports.wait_for(1, timeout=5) == [(2, b"\xaa" * 20)]
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
    assert server.ports.wait_for(1, timeout=5) == [(2, b"\xaa" * 20)]


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


def test_meters_indirect_and_direct(client, server):
    device = server.switch.pipeline.device
    me = p4runtime_pb2.MeterEntry(meter_id=IDS["Ingress.rate"])
    me.index.index = 1
    me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 1000, 100, 2000, 200
    client.write(update("MODIFY", "meter_entry", me))
    assert device.meters["Ingress.rate"].configs == {1: (1000, 100, 2000, 200)}
    cells = client.read(entity("meter_entry", p4runtime_pb2.MeterEntry()))
    assert [c.meter_entry.HasField("config") for c in cells] == [False, True, False, False]
    assert cells[1].meter_entry.config.pir == 2000
    # unset config: back to unconfigured
    reset = p4runtime_pb2.MeterEntry(meter_id=IDS["Ingress.rate"])
    reset.index.index = 1
    client.write(update("MODIFY", "meter_entry", reset))
    assert device.meters["Ingress.rate"].configs == {}
    # direct meter: on the entry (TableEntry.meter_config) and through DirectMeterEntry
    entry = fwd_entry(0, 1)
    entry.meter_config.cir, entry.meter_config.cburst = 10, 5
    entry.meter_config.pir, entry.meter_config.pburst = 20, 5
    client.write(table_update("INSERT", entry))
    req = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    req.meter_config.SetInParent()
    [got] = client.read(entity("table_entry", req))
    assert got.table_entry.meter_config.pir == 20
    dme = p4runtime_pb2.DirectMeterEntry()
    dme.table_entry.CopyFrom(fwd_entry(0, 1))
    dme.config.cir, dme.config.cburst, dme.config.pir, dme.config.pburst = 1, 1, 2, 1
    client.write(update("MODIFY", "direct_meter_entry", dme))
    [got] = client.read(entity("direct_meter_entry", p4runtime_pb2.DirectMeterEntry()))
    assert got.direct_meter_entry.config.pir == 2
    # MODIFY of the entry without meter_config keeps the configuration
    client.write(table_update("MODIFY", fwd_entry(0, 2)))
    [got] = client.read(entity("direct_meter_entry", p4runtime_pb2.DirectMeterEntry()))
    assert got.direct_meter_entry.config.pir == 2
    bad = p4runtime_pb2.MeterEntry(meter_id=IDS["Ingress.rate"])
    bad.index.index = 0
    bad.config.cir, bad.config.pir = 10, 5
    far = p4runtime_pb2.MeterEntry(meter_id=IDS["Ingress.rate"])
    far.index.index = 4
    direct_as_indirect = p4runtime_pb2.MeterEntry(meter_id=IDS["Ingress.fwd_meter"])
    direct_as_indirect.index.index = 0
    codes = [
        c
        for c, _ in write_error(
            client,
            update("MODIFY", "meter_entry", bad),
            update("MODIFY", "meter_entry", far),
            update("MODIFY", "meter_entry", direct_as_indirect),
            update("INSERT", "meter_entry", me),
        )
    ]
    assert codes == [
        code_pb2.INVALID_ARGUMENT,
        code_pb2.OUT_OF_RANGE,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.INVALID_ARGUMENT,
    ]


ALLOWED = {
    code_pb2.OK,
    code_pb2.INVALID_ARGUMENT,
    code_pb2.NOT_FOUND,
    code_pb2.OUT_OF_RANGE,
    code_pb2.ALREADY_EXISTS,
    code_pb2.PERMISSION_DENIED,
    code_pb2.RESOURCE_EXHAUSTED,
    code_pb2.UNIMPLEMENTED,
}


def random_update(rng) -> p4runtime_pb2.Update:
    """A random, mostly malformed update built from valid and invalid ids and values."""
    u = p4runtime_pb2.Update(type=rng.choice([0, 1, 2, 3]))
    ids = list(IDS.values()) + [0, rng.getrandbits(32)]

    def blob():
        return bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 2, 6, 9])))

    kind = rng.choice(["table", "counter", "register", "pre", "meter", "direct_counter"])
    if kind in ("table", "direct_counter"):
        e = p4runtime_pb2.TableEntry(table_id=rng.choice(ids))
        e.priority = rng.choice([0, 0, 1, 7, -1, 2**31 - 1])
        e.is_default_action = rng.random() < 0.1
        for _ in range(rng.choice([0, 1, 1, 2, 4])):
            m = e.match.add(field_id=rng.choice([0, 1, 2, 3, 4, 9]))
            which = rng.choice(["exact", "lpm", "ternary", "range", "optional"])
            if which == "exact":
                m.exact.value = blob()
            elif which == "lpm":
                m.lpm.value, m.lpm.prefix_len = blob(), rng.choice([0, 1, 8, 32, 33, -1])
            elif which == "ternary":
                m.ternary.value, m.ternary.mask = blob(), blob()
            elif which == "range":
                m.range.low, m.range.high = blob(), blob()
            else:
                m.optional.value = blob()
        if rng.random() < 0.8:
            e.action.action.action_id = rng.choice(ids)
            for _ in range(rng.choice([0, 1, 2])):
                e.action.action.params.add(param_id=rng.choice([0, 1, 2]), value=blob())
        if kind == "table":
            u.entity.table_entry.CopyFrom(e)
        else:
            u.entity.direct_counter_entry.table_entry.CopyFrom(e)
            u.entity.direct_counter_entry.data.packet_count = rng.getrandbits(16)
    elif kind == "counter":
        u.entity.counter_entry.counter_id = rng.choice(ids)
        if rng.random() < 0.8:
            u.entity.counter_entry.index.index = rng.choice([0, 3, 4, -1, 2**40])
    elif kind == "register":
        u.entity.register_entry.register_id = rng.choice(ids)
        if rng.random() < 0.8:
            u.entity.register_entry.index.index = rng.choice([0, 7, 8, -5])
        u.entity.register_entry.data.bitstring = blob()
    elif kind == "meter":
        u.entity.meter_entry.meter_id = rng.choice(ids)
        u.entity.meter_entry.index.index = rng.choice([0, 3, 4])
        u.entity.meter_entry.config.cir = rng.choice([-1, 0, 5, 10])
        u.entity.meter_entry.config.pir = rng.choice([0, 5, 10])
    else:
        g = u.entity.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = rng.choice([0, 1, 2, 2**32 - 1])
        for _ in range(rng.choice([0, 1, 2])):
            g.replicas.add(egress_port=rng.choice([0, 1, 511]), instance=rng.choice([0, 1]))
    return u


def test_random_malformed_writes_and_reads_get_spec_codes(client, server):
    """300 random updates in batches and 100 random reads: every outcome is a code the
    spec assigns (never INTERNAL/UNKNOWN per update), and the server keeps serving."""
    import random

    rng = random.Random(20261122)
    for _ in range(60):
        batch = [random_update(rng) for _ in range(5)]
        try:
            client.write(*batch)
            codes = [code_pb2.OK] * len(batch)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNKNOWN, exc.details()
            codes = [c for c, _ in batch_errors(exc)]
        assert len(codes) == len(batch)
        assert set(codes) <= ALLOWED, codes
    for _ in range(100):
        u = random_update(rng)
        try:
            client.read(u.entity)
        except grpc.RpcError as exc:
            assert exc.code().value[0] in ALLOWED - {code_pb2.OK}, exc.details()
    stub = p4runtime_pb2_grpc.P4RuntimeStub(grpc.insecure_channel(server.address))
    assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5).p4runtime_api_version


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
    assert server.ports.wait_for(1, timeout=5) == [(2, b"\xaa" * 20)]


def test_modify_without_action_keeps_it_and_delete_ignores_non_key_fields(client):
    """Spec "Action Specification": a MODIFY with the action unset keeps the action (here it
    sets only the direct counter); spec "TableEntry": a DELETE looks at the key only."""
    client.write(table_update("INSERT", fwd_entry(1, 2)))
    counter_only = fwd_entry(1)
    counter_only.ClearField("action")
    counter_only.counter_data.packet_count = 42
    client.write(table_update("MODIFY", counter_only))
    read = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"])
    read.counter_data.SetInParent()
    (got,) = client.read(entity("table_entry", read))
    assert got.table_entry.action.action.action_id == IDS["Ingress.set_port"]
    assert got.table_entry.action.action.params[0].value == b"\x02"
    assert got.table_entry.counter_data.packet_count == 42
    odd = fwd_entry(1, 2)
    odd.action.action.action_id = 0x01ABCDEF  # no such action
    odd.idle_timeout_ns = 5  # p4sim has no idle timeouts
    odd.meter_config.cir, odd.meter_config.pir = 10, 1  # cir > pir
    client.write(table_update("DELETE", odd))
    assert (
        client.read(entity("table_entry", p4runtime_pb2.TableEntry(table_id=read.table_id))) == []
    )


def test_is_const_in_writes_and_const_entries(client):
    """Spec "TableEntry": is_const set in any write is INVALID_ARGUMENT; spec "Constant Tables": a const entry
    takes a MODIFY without action (its direct resources), not one with an action."""
    flagged = fwd_entry(1, 2)
    flagged.is_const = True
    codes = [
        code
        for code, _ in write_error(
            client,
            table_update("INSERT", flagged),
            table_update("INSERT", fwd_entry(2, 2)),
            table_update("DELETE", flagged),
        )
    ]
    assert codes == [code_pb2.INVALID_ARGUMENT, code_pb2.OK, code_pb2.INVALID_ARGUMENT]
    const_key = const_table_entry()
    const_key.match[0].exact.value = b"\x86\xdd"  # the program's const entry
    with_action = p4runtime_pb2.TableEntry()
    with_action.CopyFrom(const_key)
    without_action = p4runtime_pb2.TableEntry()
    without_action.CopyFrom(const_key)
    without_action.ClearField("action")
    codes = [
        code
        for code, _ in write_error(
            client,
            table_update("MODIFY", without_action),
            table_update("MODIFY", with_action),
            table_update("DELETE", without_action),
        )
    ]
    assert codes == [code_pb2.OK, code_pb2.PERMISSION_DENIED, code_pb2.PERMISSION_DENIED]


def test_wildcard_read_filters_by_action_and_metadata(client):
    """Spec "Wildcard Reads": action_id, controller_metadata and metadata in a read select entries."""
    to_port = fwd_entry(1, 2)
    to_port.controller_metadata = 7
    to_cpu = fwd_entry(2, action="Ingress.to_cpu")
    to_cpu.metadata = b"tag"
    client.write(table_update("INSERT", to_port), table_update("INSERT", to_cpu))

    def ports(**filters) -> list[bytes]:
        read = p4runtime_pb2.TableEntry(table_id=IDS["Ingress.fwd"], **filters)
        return sorted(
            e.table_entry.match[0].exact.value for e in client.read(entity("table_entry", read))
        )

    assert ports() == [b"\x01", b"\x02"]
    by_action = p4runtime_pb2.TableAction()
    by_action.action.action_id = IDS["Ingress.to_cpu"]
    assert ports(action=by_action) == [b"\x02"]
    assert ports(controller_metadata=7) == [b"\x01"]
    assert ports(metadata=b"tag") == [b"\x02"]
    assert ports(metadata=b"other") == []


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
            p4runtime_pb2.CapabilitiesRequest(), timeout=5
        ).p4runtime_api_version
        clients.pop().close()  # a slot frees once the server has seen the stream end
        deadline = time.monotonic() + 10
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
    client.stub.SetForwardingPipelineConfig(commit, timeout=10)
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
            call(req, timeout=10)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND, req

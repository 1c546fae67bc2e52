"""The fake program and engine behind the P4Runtime server tests, and the
message builders the tests of this folder share (their fixtures: conftest.py).

The unit under test is the server, not the engine: the device is a small fake with enough
v1model to forward by one exact table; the same scenarios run against the real engine in
test_runtime_integration.py.
"""

from __future__ import annotations

import queue
import threading

import grpc
import pytest
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4sim import model
from p4sim import p4info as p4info_gen
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
from p4sim.p4runtime.device_config import DeviceConfig

CPU_PORT = 64

Update = p4runtime_pb2.Update


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

    def next(self, kind: str, timeout: float = 30.0):
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
        return self.stub.SetForwardingPipelineConfig(req, timeout=60)

    def write(self, *updates, election_id=None):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.low = self.election_id if election_id is None else election_id
        req.updates.extend(updates)
        return self.stub.Write(req, timeout=60)

    def read(self, *entities):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        return [e for resp in self.stub.Read(req, timeout=60) for e in resp.entities]

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

"""Fixtures for the controller's unit tests: a P4Info shaped like p4src/dc_splitter.p4 and an
in-process gRPC P4Runtime servicer that records every request and keeps entries, so that the
tests can assert on the exact requests the client sends (the model: p4runtime-shell's tests).
"""

from __future__ import annotations

import threading
from concurrent import futures

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

EXACT, TERNARY = p4info_pb2.MatchField.EXACT, p4info_pb2.MatchField.TERNARY

# (name, [(key, width, kind)], [actions], size) -- mirrors p4src/include/*.p4
TABLES = [
    (
        "DcIngress.ue_sessions.ue_sessions_v4",
        [("ue_addr", 32, EXACT)],
        [
            "DcIngress.ue_sessions.split_dc",
            "DcIngress.ue_sessions.duplicate_dc",
            "DcIngress.ue_sessions.forward_sc",
            "DcIngress.ue_sessions.miss",
        ],
        1024,
    ),
    (
        "DcIngress.ue_sessions.ue_sessions_v6",
        [("ue_addr", 128, EXACT)],
        [
            "DcIngress.ue_sessions.split_dc",
            "DcIngress.ue_sessions.duplicate_dc",
            "DcIngress.ue_sessions.forward_sc",
            "DcIngress.ue_sessions.miss",
        ],
        1024,
    ),
    (
        "DcIngress.l2_forwarding.l2_forwards",
        [("ingress_port", 9, EXACT), ("ether_type", 16, TERNARY)],
        [
            "DcIngress.l2_forwarding.forward",
            "DcIngress.l2_forwarding.flood",
            "DcIngress.l2_forwarding.drop",
        ],
        256,
    ),
    (
        "DcEgress.egress_macs",
        [("egress_port", 9, EXACT)],
        ["DcEgress.set_macs", "DcEgress.set_src_mac", "NoAction"],
        64,
    ),
]
ACTIONS = {
    "DcIngress.ue_sessions.split_dc": [
        ("user_idx", 16),
        ("session", 32),
        ("batch", 16),
        ("leg_a_count", 16),
        ("leg_a_port", 9),
        ("leg_b_port", 9),
    ],
    "DcIngress.ue_sessions.duplicate_dc": [("user_idx", 16), ("session", 32), ("mcast_grp", 16)],
    "DcIngress.ue_sessions.forward_sc": [("user_idx", 16), ("port", 9)],
    "DcIngress.ue_sessions.miss": [],
    "DcIngress.l2_forwarding.forward": [("port", 9)],
    "DcIngress.l2_forwarding.flood": [("mcast_grp", 16)],
    "DcIngress.l2_forwarding.drop": [],
    "DcEgress.set_macs": [("src_mac", 48), ("dst_mac", 48)],
    "DcEgress.set_src_mac": [("src_mac", 48)],
    "NoAction": [],
}
COUNTERS = [
    ("DcIngress.ue_sessions.user_counter", 1024),
    ("DcIngress.port_rx_counter", 512),
    ("DcEgress.port_tx_counter", 512),
]
REGISTERS = [
    ("DcIngress.pdcp_sequencer.next_sn", 1024, 18),
    ("DcIngress.pdcp_sequencer.batch_pos", 1024, 16),
    ("DcIngress.pdcp_sequencer.user_session", 1024, 32),
]


def build_p4info() -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    action_ids = {}
    for i, (name, params) in enumerate(ACTIONS.items()):
        act = info.actions.add()
        act.preamble.id = 0x01000000 + i + 1
        act.preamble.name = name
        act.preamble.alias = name.split(".")[-1]
        for j, (pname, width) in enumerate(params):
            act.params.add(id=j + 1, name=pname, bitwidth=width)
        action_ids[name] = act.preamble.id
    for i, (name, keys, actions, size) in enumerate(TABLES):
        tab = info.tables.add()
        tab.preamble.id = 0x02000000 + i + 1
        tab.preamble.name = name
        tab.preamble.alias = name.split(".")[-1]
        for j, (kname, width, kind) in enumerate(keys):
            tab.match_fields.add(id=j + 1, name=kname, bitwidth=width, match_type=kind)
        for aname in actions:
            tab.action_refs.add(id=action_ids[aname])
        tab.size = size
    for i, (name, size) in enumerate(COUNTERS):
        ctr = info.counters.add()
        ctr.preamble.id = 0x12000000 + i + 1
        ctr.preamble.name = name
        ctr.preamble.alias = name.split(".")[-1]
        ctr.spec.unit = p4info_pb2.CounterSpec.BOTH
        ctr.size = size
    for i, (name, size, width) in enumerate(REGISTERS):
        reg = info.registers.add()
        reg.preamble.id = 0x13000000 + i + 1
        reg.preamble.name = name
        reg.preamble.alias = name.split(".")[-1]
        reg.type_spec.bitstring.bit.bitwidth = width
        reg.size = size
    return info


def build_tna_p4info() -> p4info_pb2.P4Info:
    """The same control surface as the Tofino compiler writes it for a multi-pipe program:
    names under the Pipeline instance (`pipe.`), arch tna, a 32-bit next_sn register."""
    info = build_p4info()
    info.pkg_info.arch = "tna"
    for kind in ("tables", "actions", "counters", "registers"):
        for obj in getattr(info, kind):
            obj.preamble.name = "pipe." + obj.preamble.name
    for reg in info.registers:
        if reg.preamble.name.endswith(".next_sn"):
            reg.type_spec.bitstring.bit.bitwidth = 32
    return info


P4INFOS = {"v1model": build_p4info, "tna": build_tna_p4info}


class FakeP4Runtime(p4runtime_pb2_grpc.P4RuntimeServicer):
    """Keeps table entries and multicast groups keyed like a target would, answers reads,
    records every request, and fails the next Write when told to (`fail_next_write`)."""

    def __init__(self, p4info: p4info_pb2.P4Info | None):
        self.p4info = p4info
        self.writes: list[p4runtime_pb2.WriteRequest] = []
        self.reads: list[p4runtime_pb2.ReadRequest] = []
        self.pipelines: list[p4runtime_pb2.SetForwardingPipelineConfigRequest] = []
        self.arbitrations: list[p4runtime_pb2.MasterArbitrationUpdate] = []
        self.entries: dict[bytes, p4runtime_pb2.TableEntry] = {}
        self.groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = {}
        self.counters: dict[tuple[int, int], tuple[int, int]] = {}
        self.registers: dict[tuple[int, int], bytes] = {}  # (register id, index) -> bitstring
        self.fail_next_write: list[tuple[int, str]] | None = None  # (code, message) per update
        self.primary_election_id = 0
        self.lock = threading.Lock()

    @staticmethod
    def _key(entry: p4runtime_pb2.TableEntry) -> bytes:
        key = p4runtime_pb2.TableEntry(table_id=entry.table_id, priority=entry.priority)
        key.match.extend(sorted(entry.match, key=lambda m: m.field_id))
        return key.SerializeToString(deterministic=True)

    # -- RPCs --------------------------------------------------------------------

    def StreamChannel(self, request_iterator, context):
        for request in request_iterator:
            if request.HasField("arbitration"):
                self.arbitrations.append(request.arbitration)
                eid = (
                    request.arbitration.election_id.high << 64
                ) | request.arbitration.election_id.low
                response = p4runtime_pb2.StreamMessageResponse()
                response.arbitration.CopyFrom(request.arbitration)
                if eid >= self.primary_election_id:
                    self.primary_election_id = eid
                    response.arbitration.status.code = code_pb2.OK
                else:
                    response.arbitration.status.code = code_pb2.ALREADY_EXISTS
                    response.arbitration.status.message = "not primary"
                    response.arbitration.election_id.low = self.primary_election_id
                yield response

    def SetForwardingPipelineConfig(self, request, context):
        self.pipelines.append(request)
        self.p4info = request.config.p4info
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if self.p4info is not None:
            response.config.p4info.CopyFrom(self.p4info)
        return response

    def Write(self, request, context):
        with self.lock:
            self.writes.append(request)
            if self.fail_next_write is not None:
                failures, self.fail_next_write = self.fail_next_write, None
                status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
                for code, message in failures:
                    detail = any_pb2.Any()
                    detail.Pack(p4runtime_pb2.Error(canonical_code=code, message=message))
                    status.details.append(detail)
                context.abort_with_status(_RpcStatus(status))
            for upd in request.updates:
                self._apply(upd, context)
        return p4runtime_pb2.WriteResponse()

    def _apply(self, upd, context) -> None:
        kind = p4runtime_pb2.Update.Type.Name(upd.type)
        which = upd.entity.WhichOneof("entity")
        if which == "table_entry":
            key = self._key(upd.entity.table_entry)
            present = key in self.entries
            if (kind == "INSERT") == present:
                context.abort(
                    grpc.StatusCode.ALREADY_EXISTS if present else grpc.StatusCode.NOT_FOUND,
                    f"{kind} {which}",
                )
            if kind == "DELETE":
                del self.entries[key]
            else:
                self.entries[key] = upd.entity.table_entry
        elif which == "packet_replication_engine_entry":
            group = upd.entity.packet_replication_engine_entry.multicast_group_entry
            present = group.multicast_group_id in self.groups
            if (kind == "INSERT") == present:
                context.abort(
                    grpc.StatusCode.ALREADY_EXISTS if present else grpc.StatusCode.NOT_FOUND,
                    f"{kind} group",
                )
            if kind == "DELETE":
                del self.groups[group.multicast_group_id]
            else:
                self.groups[group.multicast_group_id] = group
        elif which == "register_entry":  # a data-plane cell: MODIFY only, as the spec says
            r = upd.entity.register_entry
            if kind != "MODIFY":
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{kind} register_entry")
            self.registers[(r.register_id, r.index.index)] = r.data.bitstring

    def Read(self, request, context):
        self.reads.append(request)
        response = p4runtime_pb2.ReadResponse()
        for ent in request.entities:
            which = ent.WhichOneof("entity")
            if which == "table_entry":
                for entry in self.entries.values():
                    if entry.table_id == ent.table_entry.table_id:
                        response.entities.add().table_entry.CopyFrom(entry)
            elif which == "packet_replication_engine_entry":
                gid = ent.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
                if gid in self.groups:
                    response.entities.add().packet_replication_engine_entry.multicast_group_entry.CopyFrom(
                        self.groups[gid]
                    )
            elif which == "counter_entry":
                c = ent.counter_entry
                out = response.entities.add().counter_entry
                out.CopyFrom(c)
                pkts, byts = self.counters.get((c.counter_id, c.index.index), (0, 0))
                out.data.packet_count, out.data.byte_count = pkts, byts
            elif which == "register_entry":  # every cell exists; unwritten ones hold 0
                r = ent.register_entry
                out = response.entities.add().register_entry
                out.CopyFrom(r)
                out.data.bitstring = self.registers.get((r.register_id, r.index.index), b"\x00")
        yield response


class _RpcStatus(grpc.Status):
    """What grpc's abort_with_status expects (grpcio-status is not a dependency)."""

    def __init__(self, status: status_pb2.Status):
        self.code = grpc.StatusCode.UNKNOWN
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


@pytest.fixture(params=sorted(P4INFOS))
def arch(request) -> str:
    """Every controller test runs against the v1model and the TNA P4Info."""
    return request.param


@pytest.fixture
def fake_target(arch):
    """(servicer, "127.0.0.1:PORT") of a running in-process P4Runtime server."""
    servicer = FakeP4Runtime(P4INFOS[arch]())
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)


@pytest.fixture
def p4info(arch) -> p4info_pb2.P4Info:
    return P4INFOS[arch]()

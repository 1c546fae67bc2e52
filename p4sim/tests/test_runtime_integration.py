"""The P4Runtime server on the real front end and engine: a program pushed as a p4sim device
config, entries written over gRPC, frames injected on in-process ports.

Program: p4sim/tests/p4/runtime_fwd.p4 (l2_fwd with a direct counter, ipv4_lpm, acl,
rx_port_counter, last_src_mac register, packet_in/packet_out headers, CPU port 64).

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_integration.py
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4sim import frontend, native
from p4sim.io import InProcessPorts
from p4sim.p4runtime import P4RuntimeServer
from p4sim.p4runtime.device_config import DeviceConfig
from p4sim.p4runtime.primary import PrimarySession
from p4sim.switch import Switch

PROGRAM = Path(__file__).parent / "p4" / "runtime_fwd.p4"
CPU_PORT = 64
Update = p4runtime_pb2.Update


@pytest.fixture(scope="module")
def compiled():
    return frontend.compile_file(str(PROGRAM))


@pytest.fixture(params=["interp", "native"])
def rig(compiled, request):
    """A switch with ports 0..3, a server on an ephemeral port, and a primary client that
    pushed the program as a p4sim device config; on both engines (native: the program
    compiled to C, its state mirrored from the P4Runtime server's writes)."""
    ports = InProcessPorts([0, 1, 2, 3])
    switch = Switch(ports, cpu_port=CPU_PORT)
    switch.start()
    server = P4RuntimeServer(switch, "127.0.0.1:0", compiler=native.compiler(request.param))
    server.start()
    client = Client(server.address)
    client.push(DeviceConfig(compiled.source, PROGRAM.name).encode())
    assert getattr(switch.pipeline.device, "engine", "interp") == request.param
    yield client, ports, switch
    client.close()
    server.stop()
    switch.close()


class Client(PrimarySession):
    def __init__(self, address: str) -> None:
        super().__init__(address)
        assert self.arbitration.status.code == code_pb2.OK
        self.packets: queue.Queue = queue.Queue()
        self.digests: queue.Queue = queue.Queue()
        self.idle: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.ids: dict[str, int] = {}
        self.p4info = None

    def _pump(self):
        try:
            for msg in self.stream:
                if msg.WhichOneof("update") == "packet":
                    self.packets.put(msg.packet)
                elif msg.WhichOneof("update") == "digest":
                    self.digests.put(msg.digest)
                elif msg.WhichOneof("update") == "idle_timeout_notification":
                    self.idle.put(msg.idle_timeout_notification)
        except grpc.RpcError:
            pass

    def push(self, device_config: bytes) -> None:
        from p4sim import p4info

        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = req.VERIFY_AND_COMMIT
        req.config.p4_device_config = device_config
        # what `p4sim compile --p4runtime-files` would have written
        program = frontend.compile_source(_program_text(device_config), PROGRAM.name)
        req.config.p4info.CopyFrom(p4info.generate(program.model))
        self.stub.SetForwardingPipelineConfig(req, timeout=30)
        self.p4info = req.config.p4info
        for kind in ("tables", "actions", "counters", "direct_counters", "registers"):
            for obj in getattr(self.p4info, kind):
                self.ids[obj.preamble.name] = obj.preamble.id

    def read(self, entity: p4runtime_pb2.Entity):
        req = p4runtime_pb2.ReadRequest(device_id=0)
        req.entities.append(entity)
        return [e for r in self.stub.Read(req, timeout=60) for e in r.entities]

    def send_packet_out(self, payload: bytes, egress_port: int) -> None:
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = payload
        msg.packet.metadata.add(metadata_id=1, value=bytes([egress_port]))
        msg.packet.metadata.add(metadata_id=2, value=b"\x00")
        self.send(msg)

    def l2(self, kind: str, mac: int, action: str, **params) -> p4runtime_pb2.Update:
        u = p4runtime_pb2.Update(type=Update.Type.Value(kind))
        e = u.entity.table_entry
        e.table_id = self.ids["FwdIngress.l2_fwd"]
        e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
        e.action.action.action_id = self.ids[f"FwdIngress.{action}"]
        for i, (_, value) in enumerate(params.items(), start=1):
            e.action.action.params.add(param_id=i, value=value)
        return u


def _program_text(device_config: bytes) -> str:
    from p4sim.p4runtime.device_config import decode

    return decode(device_config).program


def frame_to(dst: str, size: int = 100) -> bytes:
    head = Ether(dst=dst, src="02:00:00:00:00:09") / IP(src="10.0.0.9", dst="10.0.2.2") / UDP()
    return bytes(head) + bytes(size - len(head))


def test_forwarding_follows_entries_and_counters_count(rig):
    client, ports, _ = rig
    frame = frame_to("02:00:00:00:00:02")
    ports.inject(0, frame)
    assert ports.collect() == []  # no entry: dropped
    client.write(client.l2("INSERT", 0x020000000002, "forward", port=b"\x02"))
    for _ in range(3):
        ports.inject(0, frame)
    assert ports.collect() == [(2, frame)] * 3
    req = p4runtime_pb2.Entity()
    req.table_entry.table_id = client.ids["FwdIngress.l2_fwd"]
    req.table_entry.counter_data.SetInParent()
    [got] = client.read(req)
    assert got.table_entry.counter_data.packet_count == 3
    assert got.table_entry.counter_data.byte_count == 3 * len(frame)
    cells = p4runtime_pb2.Entity()
    cells.counter_entry.counter_id = client.ids["FwdIngress.rx_port_counter"]
    cells.counter_entry.index.index = 0
    [cell] = client.read(cells)
    assert cell.counter_entry.data.packet_count == 4
    # the register holds the last source MAC seen on port 0
    reg = p4runtime_pb2.Entity()
    reg.register_entry.register_id = client.ids["FwdIngress.last_src_mac"]
    reg.register_entry.index.index = 0
    [value] = client.read(reg)
    assert value.register_entry.data.bitstring == bytes.fromhex("020000000009")
    # a MODIFY that carries counter_data sets the direct counter
    reset = client.l2("MODIFY", 0x020000000002, "forward", port=b"\x01")
    reset.entity.table_entry.counter_data.packet_count = 100
    client.write(reset)
    ports.inject(0, frame)
    assert ports.collect() == [(1, frame)]
    [got] = client.read(req)
    assert got.table_entry.counter_data.packet_count == 101
    client.write(client.l2("DELETE", 0x020000000002, "forward", port=b"\x02"))
    ports.inject(0, frame)
    assert ports.collect() == []


def test_register_write_is_seen_by_reads(rig):
    client, _, _ = rig
    u = p4runtime_pb2.Update(type=Update.MODIFY)
    u.entity.register_entry.register_id = client.ids["FwdIngress.last_src_mac"]
    u.entity.register_entry.index.index = 5
    u.entity.register_entry.data.bitstring = bytes.fromhex("0a0b0c0d0e0f")
    client.write(u)
    reg = p4runtime_pb2.Entity()
    reg.register_entry.register_id = client.ids["FwdIngress.last_src_mac"]
    cells = client.read(reg)
    assert len(cells) == 16
    assert cells[5].register_entry.data.bitstring == bytes.fromhex("0a0b0c0d0e0f")


def test_multicast_group_replicates(rig):
    client, ports, _ = rig
    pre = p4runtime_pb2.Update(type=Update.INSERT)
    group = pre.entity.packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = 7
    for port in (1, 2, 3):
        group.replicas.add(egress_port=port, instance=1)
    client.write(pre, client.l2("INSERT", 0xFFFFFFFFFFFF, "flood", group=b"\x07"))
    frame = frame_to("ff:ff:ff:ff:ff:ff")
    ports.inject(0, frame)
    assert sorted(ports.collect()) == [(1, frame), (2, frame), (3, frame)]


def _pre_update(kind: str, ident: int) -> p4runtime_pb2.Update:
    u = p4runtime_pb2.Update(type=Update.INSERT)
    pre = u.entity.packet_replication_engine_entry
    entry = pre.multicast_group_entry if kind == "group" else pre.clone_session_entry
    setattr(entry, "multicast_group_id" if kind == "group" else "session_id", ident)
    entry.replicas.add(egress_port=1, instance=1)
    return u


def test_pre_ids_are_bmv2s_range(rig):
    """Multicast groups and clone sessions 1..32767, as BMv2's P4Runtime server (PI) takes
    them: above, OUT_OF_RANGE (groups) and INVALID_ARGUMENT (sessions), nothing installed; the
    highest group replicates on both engines."""
    client, ports, switch = rig
    codes = _write_codes(
        client,
        _pre_update("group", 32768),
        _pre_update("group", 70000),
        _pre_update("group", 2**32 - 1),
        _pre_update("session", 32768),
        _pre_update("session", 70000),
        _pre_update("group", 32767),
    )
    out, bad = code_pb2.OUT_OF_RANGE, code_pb2.INVALID_ARGUMENT
    assert codes == [out, out, out, bad, bad, code_pb2.OK]
    pre = switch.pipeline.device.pre
    assert list(pre.multicast_groups) == [32767] and pre.clone_sessions == {}
    with pytest.raises(grpc.RpcError, match=r"multicast_group_id 70000 is out of range 1\.\.32767"):
        client.write(_pre_update("group", 70000))
    client.write(client.l2("INSERT", 0xFFFFFFFFFFFF, "flood", group=b"\x7f\xff"))
    frame = frame_to("ff:ff:ff:ff:ff:ff")
    ports.inject(0, frame)
    assert ports.collect() == [(1, frame)]


def test_write_batch_is_atomic_per_update_not_per_batch(rig, monkeypatch):
    """A Write batch takes the device lock in slices between updates (here every update is a
    slice of its own), so packets run between its updates and see each update whole: a frame
    sent between INSERT (to port 1) and MODIFY (to port 2) of one entry leaves on port 1."""
    from p4sim.p4runtime import idle_timeouts
    from p4sim.p4runtime import server as server_module

    client, ports, switch = rig
    monkeypatch.setattr(server_module, "_LOCK_SLICE_S", -1.0)
    # the idle-timeout poller takes the device lock too (ipv4_lpm has idle timeouts): kept
    # out, so that the first release the wrapper below sees is the Write's
    monkeypatch.setattr(idle_timeouts.IdleTimeouts, "poll", lambda self: False)
    device = switch.pipeline.device
    frame = frame_to("02:00:00:00:00:02")
    between = []

    class LockThatSendsAFrame:
        """The device's lock (reentrant); when the Write first lets it go, one frame goes in."""

        def __init__(self, lock):
            self.lock, self.depth, self.released = lock, 0, 0

        def __enter__(self):
            self.lock.__enter__()
            self.depth += 1

        def __exit__(self, *exc):
            self.depth -= 1
            self.lock.__exit__(*exc)
            if self.depth == 0:
                self.released += 1
                if self.released == 1:
                    ports.inject(0, frame)
                    between.extend(ports.collect())

    monkeypatch.setattr(device, "lock", LockThatSendsAFrame(device.lock))
    client.write(
        client.l2("INSERT", 0x020000000002, "forward", port=b"\x01"),
        client.l2("MODIFY", 0x020000000002, "forward", port=b"\x02"),
    )
    assert between == [(1, frame)]
    ports.inject(0, frame)
    assert ports.collect() == [(2, frame)]


def test_packet_in_and_packet_out_through_the_cpu_port(rig):
    client, ports, _ = rig
    client.write(client.l2("INSERT", 0x020000000064, "send_to_cpu"))
    frame = frame_to("02:00:00:00:00:64")
    ports.inject(3, frame)
    packet_in = client.packets.get(timeout=30)
    assert packet_in.payload == frame
    assert [(m.metadata_id, m.value) for m in packet_in.metadata] == [(1, b"\x03"), (2, b"\x00")]
    client.send_packet_out(frame, egress_port=1)
    assert ports.wait_for(1, timeout=30) == [(1, frame)]


def _route(client, idle_timeout_ns: int = 0, kind=Update.INSERT) -> p4runtime_pb2.Update:
    """10.0.2.0/24 to port 1, next hop 02:00:00:00:07:77."""
    u = p4runtime_pb2.Update(type=kind)
    e = u.entity.table_entry
    e.table_id = client.ids["FwdIngress.ipv4_lpm"]
    lpm = e.match.add(field_id=1).lpm
    lpm.value, lpm.prefix_len = bytes([10, 0, 2, 0]), 24
    e.action.action.action_id = client.ids["FwdIngress.route"]
    e.action.action.params.add(param_id=1, value=b"\x01")
    e.action.action.params.add(param_id=2, value=bytes.fromhex("020000000777"))
    e.idle_timeout_ns = idle_timeout_ns
    return u


def test_routing_rewrites_and_decrements_ttl(rig):
    client, ports, _ = rig
    client.write(_route(client))
    frame = frame_to("02:00:00:00:00:01")
    ports.inject(0, frame)
    [(port, out)] = ports.collect()
    routed = Ether(out)
    assert port == 1 and routed.dst == "02:00:00:00:07:77"
    assert routed[IP].ttl == Ether(frame)[IP].ttl - 1
    del routed[IP].chksum
    assert Ether(out)[IP].chksum == Ether(bytes(routed))[IP].chksum  # checksum recomputed


def test_an_idle_route_is_notified_once_until_hit_again(rig):
    """P4Runtime idle timeouts on ipv4_lpm (support_timeout = true): an entry not hit for
    its idle_timeout_ns is named in one IdleTimeoutNotification and stays; a hit re-arms it
    (time_since_last_hit drops), and it is notified again once idle again."""
    client, ports, _ = rig
    timeout_ns = 300_000_000
    client.write(_route(client, timeout_ns))
    start = time.monotonic()
    note = client.idle.get(timeout=10)
    waited = time.monotonic() - start
    [entry] = note.table_entry
    assert entry.table_id == client.ids["FwdIngress.ipv4_lpm"]
    assert entry.match[0].lpm.value == bytes([10, 0, 2, 0]) and entry.idle_timeout_ns == timeout_ns
    assert note.timestamp > 0
    assert waited >= 0.25, f"notified after {waited:.3f} s, before the 0.3 s timeout"
    with pytest.raises(queue.Empty):
        client.idle.get(timeout=0.6)  # once: not again while it stays idle
    read = p4runtime_pb2.Entity()
    read.table_entry.table_id = client.ids["FwdIngress.ipv4_lpm"]
    read.table_entry.time_since_last_hit.SetInParent()
    [before] = client.read(read)
    assert before.table_entry.time_since_last_hit.elapsed_ns >= 900_000_000
    hit_before = time.monotonic_ns()
    ports.inject(0, frame_to("02:00:00:00:00:01"))  # routed: a hit
    assert len(ports.collect()) == 1
    [after] = client.read(read)
    # bounded by the time since the hit, not by a fixed figure a loaded machine could pass
    assert after.table_entry.time_since_last_hit.elapsed_ns <= time.monotonic_ns() - hit_before
    assert after.table_entry.idle_timeout_ns == timeout_ns
    note = client.idle.get(timeout=10)  # idle again after the hit
    assert note.table_entry[0].match[0].lpm.prefix_len == 24


def _write_codes(client, *updates) -> list[int]:
    from google.rpc import status_pb2

    with pytest.raises(grpc.RpcError) as info:
        client.write(*updates)
    assert info.value.code() == grpc.StatusCode.UNKNOWN
    [details] = [v for k, v in info.value.trailing_metadata() if k == "grpc-status-details-bin"]
    codes = []
    for any_ in status_pb2.Status.FromString(details).details:
        err = p4runtime_pb2.Error()
        any_.Unpack(err)
        codes.append(err.canonical_code)
    return codes


def test_engine_errors_map_to_status_codes(rig):
    """Errors the engine raises (duplicate, absent) reach the client with the right codes."""
    client, _, _ = rig
    add = client.l2("INSERT", 0x020000000002, "forward", port=b"\x01")
    codes = _write_codes(
        client,
        add,
        add,
        client.l2("DELETE", 0x020000000003, "forward", port=b"\x01"),
        client.l2("MODIFY", 0x020000000004, "forward", port=b"\x01"),
    )
    assert codes == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.NOT_FOUND, code_pb2.NOT_FOUND]


def test_an_idle_timeout_on_a_table_without_support_is_invalid(rig):
    """P4Runtime: idle_timeout_ns is for tables whose P4Info has NOTIFY_CONTROL (P4
    `support_timeout = true`); elsewhere it is a bad request, and nothing is installed."""
    client, _, _ = rig
    add = client.l2("INSERT", 0x020000000002, "forward", port=b"\x01")
    add.entity.table_entry.idle_timeout_ns = 10**9
    assert _write_codes(client, add) == [code_pb2.INVALID_ARGUMENT]
    add.entity.table_entry.idle_timeout_ns = 0
    client.write(add)


def test_ternary_and_optional_acl_drops_by_priority(rig):
    client, ports, _ = rig
    client.write(client.l2("INSERT", 0x020000000002, "forward", port=b"\x02"))

    def acl(priority: int, in_port: int | None) -> p4runtime_pb2.Update:
        u = p4runtime_pb2.Update(type=Update.INSERT)
        e = u.entity.table_entry
        e.table_id, e.priority = client.ids["FwdIngress.acl"], priority
        t = e.match.add(field_id=1).ternary
        t.value, t.mask = b"\x08\x00", b"\xff\xff"
        if in_port is not None:
            e.match.add(field_id=2).optional.value = bytes([in_port])
        e.action.action.action_id = client.ids["FwdIngress.drop"]
        return u

    assert _write_codes(client, acl(0, 1)) == [code_pb2.INVALID_ARGUMENT]  # priority needed
    client.write(acl(10, 1))
    frame = frame_to("02:00:00:00:00:02")
    ports.inject(1, frame)
    ports.inject(0, frame)
    assert ports.collect() == [(2, frame)]  # only the frame from port 1 was dropped


def test_meter_config_over_p4runtime_polices_a_port(rig):
    """rx_meter with cburst = pburst = 2 packets: two frames pass, then RED drops."""
    client, ports, _ = rig
    client.write(client.l2("INSERT", 0x020000000002, "forward", port=b"\x02"))
    meter_id = {m.preamble.name: m.preamble.id for m in client.p4info.meters}["FwdIngress.rx_meter"]
    u = p4runtime_pb2.Update(type=Update.MODIFY)
    u.entity.meter_entry.meter_id = meter_id
    u.entity.meter_entry.index.index = 1
    cfg = u.entity.meter_entry.config
    cfg.cir, cfg.cburst, cfg.pir, cfg.pburst = 1, 2, 1, 2
    client.write(u)
    frame = frame_to("02:00:00:00:00:02")
    for _ in range(5):
        ports.inject(1, frame)
    for _ in range(3):
        ports.inject(0, frame)  # port 0's meter is unconfigured: all pass
    assert ports.collect() == [(2, frame)] * 5


def test_random_updates_on_the_real_engine_get_spec_codes(rig):
    """Random valid-looking and malformed entries for every table of the program: the engine
    and the translation agree (no INTERNAL), and forwarding still works afterwards."""
    import random

    client, ports, _ = rig
    rng = random.Random(7)
    allowed = {
        code_pb2.OK,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.NOT_FOUND,
        code_pb2.OUT_OF_RANGE,
        code_pb2.ALREADY_EXISTS,
        code_pb2.PERMISSION_DENIED,
        code_pb2.RESOURCE_EXHAUSTED,
    }
    tables = list(client.p4info.tables)
    actions = {a.preamble.id: a for a in client.p4info.actions}
    for _ in range(40):
        batch = []
        for _ in range(5):
            t = rng.choice(tables)
            u = p4runtime_pb2.Update(type=rng.choice([1, 1, 2, 3]))
            e = u.entity.table_entry
            e.table_id = t.preamble.id
            for f in t.match_fields:
                if rng.random() < 0.8:
                    nbytes = (f.bitwidth + 7) // 8
                    value = rng.getrandbits(f.bitwidth).to_bytes(nbytes, "big")
                    m = e.match.add(field_id=f.id)
                    if f.match_type == f.EXACT:
                        m.exact.value = value
                    elif f.match_type == f.LPM:
                        m.lpm.value, m.lpm.prefix_len = value, rng.randint(0, f.bitwidth)
                    elif f.match_type == f.TERNARY:
                        m.ternary.value, m.ternary.mask = value, value
                    elif f.match_type == f.OPTIONAL:
                        m.optional.value = value
            if any(f.match_type in (f.TERNARY, f.OPTIONAL) for f in t.match_fields):
                e.priority = rng.randint(0, 3)
            ref = rng.choice(t.action_refs)
            e.action.action.action_id = ref.id
            for p in actions[ref.id].params:
                e.action.action.params.add(
                    param_id=p.id, value=rng.getrandbits(p.bitwidth + 1).to_bytes(8, "big")
                )
            batch.append(u)
        try:
            client.write(*batch)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNKNOWN, exc.details()
            codes = _write_codes_from(exc)
            assert set(codes) <= allowed, codes
    everything = p4runtime_pb2.Entity()
    everything.table_entry.SetInParent()
    assert client.read(everything) is not None
    # clear the random ACL entries, then a fresh L2 entry forwards a non-IP frame
    acl = p4runtime_pb2.Entity()
    acl.table_entry.table_id = client.ids["FwdIngress.acl"]
    deletes = []
    for found in client.read(acl):
        d = p4runtime_pb2.Update(type=Update.DELETE)
        d.entity.table_entry.CopyFrom(found.table_entry)
        deletes.append(d)
    if deletes:
        client.write(*deletes)
    assert client.read(acl) == []
    client.write(client.l2("INSERT", 0x02AABBCCDDEE, "forward", port=b"\x03"))
    frame = bytes.fromhex("02aabbccddee020000000009" "88b5") + bytes(60)
    ports.inject(0, frame)
    assert ports.collect() == [(3, frame)]


def _write_codes_from(exc: grpc.RpcError) -> list[int]:
    from google.rpc import status_pb2

    [details] = [v for k, v in exc.trailing_metadata() if k == "grpc-status-details-bin"]
    codes = []
    for any_ in status_pb2.Status.FromString(details).details:
        err = p4runtime_pb2.Error()
        any_.Unpack(err)
        codes.append(err.canonical_code)
    return codes


def test_digest_reaches_the_controller_once_configured(rig):
    client, ports, _ = rig
    [digest] = client.p4info.digests
    assert digest.preamble.name == "mac_learn_t"
    frame = bytes.fromhex("020000000002" "0200000000aa" "88b6") + bytes(50)
    ports.inject(2, frame)  # not configured yet: nothing is sent
    u = p4runtime_pb2.Update(type=Update.INSERT)
    u.entity.digest_entry.digest_id = digest.preamble.id
    u.entity.digest_entry.config.max_list_size = 1
    client.write(u)
    ports.inject(2, frame)
    lst = client.digests.get(timeout=30)
    assert lst.digest_id == digest.preamble.id and lst.list_id >= 1
    [data] = lst.data
    assert [m.bitstring for m in data.struct.members] == [bytes.fromhex("0200000000aa"), b"\x02"]
    assert client.digests.empty()
    read = p4runtime_pb2.Entity()
    read.digest_entry.SetInParent()
    [entry] = client.read(read)
    assert entry.digest_entry.config.max_list_size == 1
    assert _write_codes(client, u) == [code_pb2.ALREADY_EXISTS]
    # one digest named: NOT_FOUND once it is not configured (as PI; a wildcard reads none)
    u.type = Update.DELETE
    client.write(u)
    read.digest_entry.digest_id = digest.preamble.id
    with pytest.raises(grpc.RpcError) as info:
        client.read(read)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    read.digest_entry.digest_id = 0
    assert client.read(read) == []


def test_digests_are_batched_and_held_until_acknowledged(rig):
    """DigestEntry.Config applies (spec): two records in one list (max_list_size 2), the
    same data not sent again until its list is acknowledged."""
    client, ports, _ = rig
    [digest] = client.p4info.digests
    u = p4runtime_pb2.Update(type=Update.INSERT)
    u.entity.digest_entry.digest_id = digest.preamble.id
    u.entity.digest_entry.config.max_list_size = 2
    u.entity.digest_entry.config.max_timeout_ns = 60 * 10**9  # the size decides, not time
    u.entity.digest_entry.config.ack_timeout_ns = 60 * 10**9
    client.write(u)

    def frame(src: int) -> bytes:
        return (
            bytes.fromhex("020000000002")
            + src.to_bytes(6, "big")
            + bytes.fromhex("88b6")
            + bytes(50)
        )

    ports.inject(2, frame(0x0200000000AA))
    ports.inject(2, frame(0x0200000000AA))  # the same data, gathered already: not again
    ports.inject(2, frame(0x0200000000BB))
    lst = client.digests.get(timeout=30)
    sources = [d.struct.members[0].bitstring for d in lst.data]
    assert sources == [bytes.fromhex("0200000000aa"), bytes.fromhex("0200000000bb")]
    ports.inject(2, frame(0x0200000000AA))  # held back: its list is not acknowledged
    ports.inject(2, frame(0x0200000000CC))
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = digest.preamble.id, lst.list_id
    client.send(ack)
    for _ in range(100):  # the ack is read on the stream's own thread: wait until it applied
        ports.inject(2, frame(0x0200000000AA))
        try:
            second = client.digests.get(timeout=0.3)
            break
        except queue.Empty:
            continue
    else:
        pytest.fail("no DigestList after the ack")
    sources = [d.struct.members[0].bitstring for d in second.data]
    assert sources == [bytes.fromhex("0200000000cc"), bytes.fromhex("0200000000aa")]


def test_a_modify_shortening_max_timeout_ns_sends_the_pending_list(rig):
    """A list gathering under a 60 s max_timeout_ns goes out soon after a MODIFY to 10 ms,
    not at the old deadline (the wait ends at 30 s): the Write wakes the flush thread."""
    client, ports, _ = rig
    [digest] = client.p4info.digests
    u = p4runtime_pb2.Update(type=Update.INSERT)
    u.entity.digest_entry.digest_id = digest.preamble.id
    u.entity.digest_entry.config.max_timeout_ns = 60 * 10**9
    client.write(u)
    ports.inject(2, bytes.fromhex("020000000002" "0200000000aa" "88b6") + bytes(50))
    with pytest.raises(queue.Empty):
        client.digests.get(timeout=0.5)  # gathering: nothing comes before the deadline
    u.type = Update.MODIFY
    u.entity.digest_entry.config.max_timeout_ns = 10 * 10**6
    client.write(u)
    lst = client.digests.get(timeout=30)
    assert [d.struct.members[0].bitstring for d in lst.data] == [bytes.fromhex("0200000000aa")]

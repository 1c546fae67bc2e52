"""P4Runtime server tests with a real gRPC client against an in-process server: entities.

Table entries, counters, registers, meters, the PRE, their reads and the status code of each
malformed write, over real gRPC (sessions: test_runtime_p4runtime.py). The device behind the
server is the small fake engine of fakes.py.

Run: .venv/bin/pytest -q p4sim/tests/p4runtime_server/test_runtime_p4runtime_entities.py
"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

from p4sim import model
from p4sim.tests.p4runtime_server.fakes import (
    CPU_PORT,
    IDS,
    FakeTable,
    Update,
    b,
    batch_errors,
    entity,
    fwd_entry,
    table_update,
    update,
    write_error,
)


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
        C.OUT_OF_RANGE,  # spec "Bytestrings": an empty one is always rejected, OUT_OF_RANGE
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


def test_an_engine_without_memory_is_resource_exhausted_naming_what(client, monkeypatch):
    """model.NoMemory (the native engine's C state could not be allocated, the table left
    as it was) is the update's RESOURCE_EXHAUSTED with the engine's words."""

    def no_memory(self, entry):
        raise model.NoMemory("native engine: no memory for an entry of table Ingress.fwd")

    monkeypatch.setattr(FakeTable, "insert", no_memory)
    errors = write_error(client, table_update("INSERT", fwd_entry(1, 1)))
    assert errors == [
        (code_pb2.RESOURCE_EXHAUSTED, "native engine: no memory for an entry of table Ingress.fwd")
    ]


def test_no_memory_when_the_device_lock_is_released_fails_the_write_naming_what(client, server):
    """The native engine mirrors the PRE into C as the device lock is released; a group it
    cannot allocate there fails the Write with RESOURCE_EXHAUSTED and the engine's words."""

    class PreWithoutMemory:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            raise model.NoMemory("native engine: no memory for multicast group 5")

    server.switch.pipeline.device.lock = PreWithoutMemory()
    with pytest.raises(grpc.RpcError) as info:
        client.write(table_update("INSERT", fwd_entry(1, 1)))
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert info.value.details() == "Write: native engine: no memory for multicast group 5"


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
    assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=30).p4runtime_api_version


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

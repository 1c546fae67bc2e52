"""Translation between P4Runtime entities and the device's runtime objects (p4sim.model).

Everything a client sends is validated here against the program (ids, widths, match kinds,
priorities, action scopes) before the engine sees it, so that each mistake gets the status
code the P4Runtime spec assigns to it:

- unknown table/action/counter/register id: NOT_FOUND (id 0 where one is needed:
  INVALID_ARGUMENT); unknown match field or parameter id: INVALID_ARGUMENT
- a value wider than its field: OUT_OF_RANGE (spec 8.4.2); empty bytestring: OUT_OF_RANGE too
- ternary value with bits outside the mask, LPM value with bits past the prefix, a
  don't-care match that is present instead of omitted, an exact field left out, priority
  missing on a ternary/range/optional table or present on another: INVALID_ARGUMENT
- an action the table does not list, or used against its @tableonly/@defaultonly scope:
  INVALID_ARGUMENT; const default action or const table: PERMISSION_DENIED
- index out of a counter's, meter's or register's size: OUT_OF_RANGE

This module dispatches each update and read to its entity family: `table_entries` (and
value sets), `action_profiles`, `counters` (counters, registers, meters),
`direct_resources` (direct counters and meters), `digests`, `replication` (the PRE);
`index` maps P4Runtime ids to the program's definitions.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.p4runtime.action_profiles import (
    profiles_of,
    read_profile_groups,
    read_profile_members,
    write_profile_group,
    write_profile_member,
)
from p4sim.p4runtime.counters import (
    counter_def,
    meter_def,
    read_counters,
    read_meters,
    read_registers,
    register_def,
    write_counter,
    write_meter,
    write_register,
)
from p4sim.p4runtime.digests import read_digests, write_digest
from p4sim.p4runtime.direct_resources import (
    read_direct_counters,
    read_direct_meters,
    write_direct_counter,
    write_direct_meter,
)
from p4sim.p4runtime.errors import (
    from_engine,
    invalid,
    unimplemented,
)
from p4sim.p4runtime.index import PipelineIndex
from p4sim.p4runtime.replication import read_pre, write_pre
from p4sim.p4runtime.table_entries import (
    read_table_entries,
    read_value_sets,
    write_table_entry,
    write_value_set,
)

Update = p4runtime_pb2.Update


# Entity kind -> writer(index, device, update type, message).
_WRITERS = {
    "table_entry": write_table_entry,
    "counter_entry": write_counter,
    "direct_counter_entry": write_direct_counter,
    "register_entry": write_register,
    "meter_entry": write_meter,
    "direct_meter_entry": write_direct_meter,
    "packet_replication_engine_entry": lambda index, device, kind, msg: write_pre(
        device, kind, msg
    ),
    "digest_entry": lambda index, device, kind, msg: write_digest(index, kind, msg),
    "action_profile_member": write_profile_member,
    "action_profile_group": write_profile_group,
    "value_set_entry": write_value_set,
}


def apply_update(index: PipelineIndex, device: model.Device, update: p4runtime_pb2.Update):
    """Apply one update; raise StatusError on any problem. Caller holds device.lock."""
    if update.type not in (Update.INSERT, Update.MODIFY, Update.DELETE):
        raise invalid("update type must be INSERT, MODIFY or DELETE (got UNSPECIFIED)")
    entity = update.entity
    kind = entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the update has no entity")
    writer = _WRITERS.get(kind)
    if writer is None:
        raise unimplemented(f"writing {kind} is not supported by p4sim")
    try:
        writer(index, device, update.type, getattr(entity, kind))
    except model.ControlPlaneError as exc:
        raise from_engine(exc) from None


# Entity kind -> reader(index, device, message) yielding that kind's messages.
_READERS = {
    "table_entry": read_table_entries,
    "counter_entry": read_counters,
    "direct_counter_entry": read_direct_counters,
    "register_entry": read_registers,
    "meter_entry": read_meters,
    "direct_meter_entry": read_direct_meters,
    "action_profile_member": read_profile_members,
    "action_profile_group": read_profile_groups,
    "digest_entry": lambda index, device, msg: read_digests(index, msg),
    "value_set_entry": read_value_sets,
    "packet_replication_engine_entry": lambda index, device, msg: read_pre(device, msg),
}


def read_entity(index: PipelineIndex, device: model.Device, entity: p4runtime_pb2.Entity):
    """Every entity the (possibly wildcard) read `entity` selects, as Entity messages, made
    one at a time: the caller holds device.lock for a slice of them at a time (each table
    is snapshot when reached, so writes between slices cannot break the iteration)."""
    kind = entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the read request has an empty entity")
    reader = _READERS.get(kind)
    if reader is None:
        raise unimplemented(f"reading {kind} is not supported by p4sim")
    for found in reader(index, device, getattr(entity, kind)):
        yield p4runtime_pb2.Entity(**{kind: found})


def count_entity(index: PipelineIndex, device: model.Device, entity: p4runtime_pb2.Entity) -> int:
    """At most how many entities `read_entity` answers, without building any (bad ids raise
    as the read would)."""
    kind = entity.WhichOneof("entity")
    msg = getattr(entity, kind) if kind else None

    def entries(table_id: int, resource: str | None = None) -> int:
        tables = [index.table(table_id)] if table_id else list(index.tables.values())
        return sum(
            len(device.tables[t.definition.name].entries())
            for t in tables
            if resource is None or getattr(t.definition, resource)
        )

    def cells(resource_id: int, all_ids, lookup) -> int:
        definitions = [lookup(resource_id)] if resource_id else [lookup(i) for i in all_ids]
        return len(definitions) if msg.HasField("index") else sum(d.size for d in definitions)

    if kind == "table_entry":
        if msg.is_default_action or (msg.table_id and msg.match):
            return 1
        return entries(msg.table_id)
    if kind in ("direct_counter_entry", "direct_meter_entry"):
        if msg.table_entry.table_id and msg.table_entry.match:
            return 1
        return entries(msg.table_entry.table_id, kind.replace("_entry", ""))
    if kind == "counter_entry":
        return cells(msg.counter_id, index.counters, lambda i: counter_def(index, i))
    if kind == "register_entry":
        return cells(msg.register_id, index.registers, lambda i: register_def(index, i))
    if kind == "meter_entry":
        return cells(msg.meter_id, index.meters, lambda i: meter_def(index, i))
    if kind in ("action_profile_member", "action_profile_group"):
        profiles = profiles_of(index, msg.action_profile_id)
        states = [device.action_profiles[d.name] for _, d in profiles]
        if kind == "action_profile_member":
            return 1 if msg.member_id else sum(len(s.members()) for s in states)
        return 1 if msg.group_id else sum(len(s.groups()) for s in states)
    if kind == "digest_entry":
        return len(index.digests)
    if kind == "value_set_entry":
        return 1 if msg.value_set_id else len(index.value_sets)
    if kind == "packet_replication_engine_entry":
        return len(device.pre.multicast_groups) + len(device.pre.clone_sessions)
    return 0  # an empty or unsupported entity: read_entity names the problem

"""Direct counters and direct meters: the cells of table entries, addressed by the entry."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.p4runtime.counters import decode_meter_config, encode_meter_config
from p4sim.p4runtime.errors import (
    invalid,
    not_found,
)
from p4sim.p4runtime.index import PipelineIndex
from p4sim.p4runtime.table_entries import decode_match, encode_entry

Update = p4runtime_pb2.Update


def _find_entry(index: PipelineIndex, device: model.Device, msg: p4runtime_pb2.TableEntry):
    table = index.table(msg.table_id)
    if not table.definition.direct_counter:
        raise invalid(f"table {table.definition.name} has no direct counter")
    state = device.tables[table.definition.name]
    match = decode_match(table, msg.match)
    entry = state.find(match, msg.priority)
    if entry is None:
        raise not_found(f"table {table.definition.name}: no such entry")
    return table, state, entry


def write_direct_counter(index, device, update_type, msg: p4runtime_pb2.DirectCounterEntry):
    if update_type != Update.MODIFY:
        raise invalid("direct counter entries can only be modified")
    _, _, entry = _find_entry(index, device, msg.table_entry)
    entry.packets = msg.data.packet_count
    entry.bytes = msg.data.byte_count


def _entries_with(index, device, table_id: int, resource: str):
    """(table, entry) for every entry of the tables with a `resource` attached
    ("direct_counter" or "direct_meter"): of one table, or of all when table_id is 0."""
    tables = [index.table(table_id)] if table_id else list(index.tables.values())
    return [
        (t, e)
        for t in tables
        if getattr(t.definition, resource)
        for e in device.tables[t.definition.name].entries()
    ]


def read_direct_counters(index, device, msg: p4runtime_pb2.DirectCounterEntry):
    if msg.table_entry.table_id and msg.table_entry.match:
        table, _, entry = _find_entry(index, device, msg.table_entry)
        pairs = [(table, entry)]
    else:
        pairs = _entries_with(index, device, msg.table_entry.table_id, "direct_counter")
    for table, entry in pairs:
        item = p4runtime_pb2.DirectCounterEntry()
        item.table_entry.CopyFrom(encode_entry(index, table, entry))
        item.data.packet_count = entry.packets
        item.data.byte_count = entry.bytes
        yield item


def _find_metered_entry(index, device, msg: p4runtime_pb2.TableEntry):
    table = index.table(msg.table_id)
    if not table.definition.direct_meter:
        raise invalid(f"table {table.definition.name} has no direct meter")
    entry = device.tables[table.definition.name].find(decode_match(table, msg.match), msg.priority)
    if entry is None:
        raise not_found(f"table {table.definition.name}: no such entry")
    return table, entry


def write_direct_meter(index, device, update_type, msg: p4runtime_pb2.DirectMeterEntry):
    if update_type != Update.MODIFY:
        raise invalid("direct meter entries can only be modified")
    table, entry = _find_metered_entry(index, device, msg.table_entry)
    what = f"table {table.definition.name}"
    entry.meter_config = decode_meter_config(msg.config, what) if msg.HasField("config") else None


def read_direct_meters(index, device, msg: p4runtime_pb2.DirectMeterEntry):
    if msg.table_entry.table_id and msg.table_entry.match:
        pairs = [_find_metered_entry(index, device, msg.table_entry)]
    else:
        pairs = _entries_with(index, device, msg.table_entry.table_id, "direct_meter")
    for table, entry in pairs:
        item = p4runtime_pb2.DirectMeterEntry()
        item.table_entry.CopyFrom(encode_entry(index, table, entry))
        if entry.meter_config is not None:
            encode_meter_config(entry.meter_config, item.config)
        yield item

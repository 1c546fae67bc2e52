"""Table entries (spec "TableEntry") and parser value sets (spec "ValueSetEntry": written
whole, by MODIFY): match fields and actions decoded, validated and encoded.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.model import FieldMatch, TableEntry
from p4sim.p4runtime import codec, idle_timeouts
from p4sim.p4runtime.counters import decode_meter_config, encode_meter_config
from p4sim.p4runtime.errors import (
    StatusError,
    invalid,
    not_found,
    unimplemented,
)
from p4sim.p4runtime.index import PipelineIndex, TableInfo

Update = p4runtime_pb2.Update


# p4sim takes and gives the data plane's values of a translated `type` (P4Runtime spec 8.3):
# a width the control plane's differs from is taken as it is; a string cannot be
NO_STRING_TRANSLATION = (
    "its type is translated to a string (@p4runtime_translation(..., string)), and p4sim "
    "does not translate P4Runtime values"
)


def full_mask(width: int) -> int:
    return (1 << width) - 1


def decode_match(table: TableInfo, matches, entity: str = "table") -> dict[str, FieldMatch]:
    """entity: what `table` is, for the messages ("table", or "value set")."""
    result: dict[str, FieldMatch] = {}
    tname = f"{entity} {table.definition.name}"
    for m in matches:
        key = table.fields.get(m.field_id)
        if key is None:
            raise invalid(
                f"{tname}: no match field with id {m.field_id} " f"(valid: {sorted(table.fields)})"
            )
        if key.name in result:
            raise invalid(f"{tname}: match field {key.name} given twice")
        kind = m.WhichOneof("field_match_type")
        what = f"{tname}, field {key.name}"
        if key.name in table.string_fields:
            raise unimplemented(f"{what}: {NO_STRING_TRANSLATION}")
        if kind != key.match_kind:
            raise invalid(f"{what}: is a {key.match_kind} field, got a {kind} match")
        w = key.bitwidth
        if kind == "exact":
            result[key.name] = FieldMatch("exact", value=codec.decode(m.exact.value, w, what))
        elif kind == "optional":
            result[key.name] = FieldMatch("optional", value=codec.decode(m.optional.value, w, what))
        elif kind == "lpm":
            plen = m.lpm.prefix_len
            if not 0 < plen <= w:
                raise invalid(
                    f"{what}: prefix_len {plen} must be 1..{w} "
                    "(a /0 match is a wildcard: omit the field)"
                )
            value = codec.decode(m.lpm.value, w, what)
            if value & (full_mask(w) >> plen):
                raise invalid(f"{what}: bits past the /{plen} prefix must be zero")
            result[key.name] = FieldMatch("lpm", value=value, prefix_len=plen)
        elif kind == "ternary":
            value = codec.decode(m.ternary.value, w, what)
            mask = codec.decode(m.ternary.mask, w, what + " (mask)")
            if mask == 0:
                raise invalid(f"{what}: an all-zero mask is a wildcard: omit the field")
            if value & ~mask:
                raise invalid(
                    f"{what}: value has bits set outside the mask " "(value & ~mask must be 0)"
                )
            result[key.name] = FieldMatch("ternary", value=value, mask=mask)
        elif kind == "range":
            low = codec.decode(m.range.low, w, what + " (low)")
            high = codec.decode(m.range.high, w, what + " (high)")
            if low > high:
                raise invalid(f"{what}: range low {low} > high {high}")
            if low == 0 and high == full_mask(w):
                raise invalid(f"{what}: the full range is a wildcard: omit the field")
            result[key.name] = FieldMatch("range", low=low, high=high)
        else:
            raise invalid(f"{what}: match kind {kind} is not supported")
    for key in table.definition.keys:
        if key.match_kind == "exact" and key.name not in result:
            raise invalid(
                f"{tname}: exact match field {key.name} "
                f"(id {table.field_ids.get(key.name)}) is missing"
            )
    return result


def check_priority(table: TableInfo, priority: int) -> None:
    tname = table.definition.name
    if table.definition.needs_priority:
        if priority <= 0:
            raise invalid(
                f"table {tname} has ternary/range/optional keys: a priority > 0 " "is required"
            )
        if priority > 0x7FFFFFFF:
            raise invalid(f"table {tname}: priority {priority} exceeds 2^31-1")
    elif priority != 0:
        raise invalid(
            f"table {tname} has only exact/lpm keys: priority must be 0 " f"(got {priority})"
        )


def decode_action(
    index: PipelineIndex, table: TableInfo, table_action, default_entry: bool, member: bool = False
) -> tuple[str, dict[str, int]]:
    """The action and arguments of a TableAction holding an `action` (`member`: the action
    of an action profile member or action set, checked against this table's actions)."""
    tname = table.definition.name
    kind = table_action.WhichOneof("type")
    if kind is None:
        raise invalid(f"table {tname}: the entry has no action")
    if kind != "action":
        raise invalid(f"table {tname} is a direct table (no action profile): {kind} is not valid")
    action = table_action.action
    info = index.actions.get(action.action_id)
    ref = table.actions.get(action.action_id)
    if info is None or ref is None:  # spec "Action Specification": not one of the table's actions
        what = info.definition.name if info else f"id {action.action_id}"
        raise invalid(
            f"action {what} is not one of table {tname}'s actions "
            f"(valid ids: {sorted(table.actions)})"
        )
    name = info.definition.name
    # spec "Action Specification": a valid action used against its @tableonly/@defaultonly scope
    if default_entry and ref.scope == "TABLE_ONLY":
        raise StatusError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"action {name} is @tableonly in table {tname}: not a default action",
        )
    if not default_entry and ref.scope == "DEFAULT_ONLY":
        raise StatusError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"action {name} is @defaultonly in table {tname}: not for entries",
        )
    args: dict[str, int] = {}
    for p in action.params:
        param = info.params.get(p.param_id)
        if param is None:
            raise invalid(
                f"action {name}: no parameter with id {p.param_id} "
                f"(valid: {sorted(info.params)})"
            )
        if param.name in args:
            raise invalid(f"action {name}: parameter {param.name} given twice")
        if param.name in info.string_params:
            raise unimplemented(f"action {name}, parameter {param.name}: {NO_STRING_TRANSLATION}")
        args[param.name] = codec.decode(
            p.value, param.bitwidth, f"action {name}, parameter " f"{param.name}"
        )
    missing = [p.name for p in info.definition.params if p.name not in args]
    if missing:
        raise invalid(f"action {name}: missing parameter(s) {', '.join(missing)}")
    return name, args


def no_watch(msg, what: str) -> None:
    if msg.WhichOneof("watch_kind") is not None:
        raise unimplemented(f"{what}: watch ports are not supported by p4sim (no port status)")


def decode_entry_action(index: PipelineIndex, table: TableInfo, table_action) -> dict:
    """The TableEntry fields of an entry's action: `action` and `args` in a direct table;
    in one implemented by an action profile (spec "Action Profile"), a member id, a group id
    or a one-shot action set [(action, args, weight)] (as PI takes them)."""
    d = table.definition
    kind = table_action.WhichOneof("type")
    if not d.implementation or kind is None:
        action, args = decode_action(index, table, table_action, default_entry=False)
        return {"action": action, "args": args}
    if kind == "action":
        raise invalid(
            f"table {d.name} is implemented by action profile {d.implementation}: an entry "
            "gives an action_profile_member_id, action_profile_group_id or "
            "action_profile_action_set, not an action"
        )
    if kind == "action_profile_member_id":
        return {"action": "", "args": {}, "member_id": table_action.action_profile_member_id}
    if kind == "action_profile_group_id":
        return {"action": "", "args": {}, "group_id": table_action.action_profile_group_id}
    action_set = table_action.action_profile_action_set
    if action_set.group_action.ListFields() or action_set.action_selection_mode:
        raise unimplemented(
            "group_action and action_selection_mode of an action set are not supported by p4sim"
        )
    actions = []
    for a in action_set.action_profile_actions:
        no_watch(a, f"table {d.name}, action set")
        name, args = decode_action(
            index, table, p4runtime_pb2.TableAction(action=a.action), False, member=True
        )
        actions.append((name, args, a.weight))
    if not actions:  # PI: "No support for empty action profile groups"
        raise unimplemented(f"table {d.name}: an empty action set (no action_profile_actions)")
    return {"action": "", "args": {}, "action_set": actions}


def encode_match(table: TableInfo, entry: TableEntry, out: p4runtime_pb2.TableEntry) -> None:
    for key in table.definition.keys:  # P4Info order
        m = entry.match.get(key.name)
        if m is None:
            continue
        w = key.bitwidth
        fm = p4runtime_pb2.FieldMatch(field_id=table.field_ids[key.name])
        if m.kind == "exact":
            fm.exact.value = codec.encode(m.value)
        elif m.kind == "optional":
            fm.optional.value = codec.encode(m.value)
        elif m.kind == "lpm":
            if not m.prefix_len:
                continue  # a wildcard is never sent back
            fm.lpm.value = codec.encode(m.value)
            fm.lpm.prefix_len = m.prefix_len
        elif m.kind == "ternary":
            if not m.mask:
                continue
            fm.ternary.value = codec.encode(m.value & m.mask)
            fm.ternary.mask = codec.encode(m.mask)
        elif m.kind == "range":
            if m.low == 0 and m.high == full_mask(w):
                continue
            fm.range.low = codec.encode(m.low)
            fm.range.high = codec.encode(m.high)
        out.match.append(fm)


def encode_action(
    index: PipelineIndex, action: str, args: dict[str, int], out: p4runtime_pb2.TableAction
) -> None:
    action_id = index.action_ids.get(action)
    if action_id is None:
        return  # a @hidden action: not visible to P4Runtime
    info = index.actions[action_id]
    out.action.action_id = action_id
    for param in info.definition.params:
        out.action.params.add(
            param_id=info.param_ids[param.name], value=codec.encode(args.get(param.name, 0))
        )


def encode_entry(
    index: PipelineIndex,
    table: TableInfo,
    entry: TableEntry,
    *,
    default: bool = False,
    with_counter: bool = False,
    with_meter: bool = False,
    with_hit_time: bool = False,
) -> p4runtime_pb2.TableEntry:
    out = p4runtime_pb2.TableEntry(table_id=table.id)
    if default:
        out.is_default_action = True
    else:
        encode_match(table, entry, out)
        # only tables with ternary/range/optional keys have priorities in P4Runtime (const
        # entries of other tables may carry the engine's program-order rank)
        out.priority = entry.priority if table.definition.needs_priority else 0
        out.controller_metadata = entry.controller_metadata
        out.metadata = entry.metadata
        out.is_const = entry.is_const
    if entry.member_id is not None:
        out.action.action_profile_member_id = entry.member_id
    elif entry.group_id is not None:
        out.action.action_profile_group_id = entry.group_id
    elif entry.action_set is not None:
        out_set = out.action.action_profile_action_set
        for action, args, weight in entry.action_set:
            a = out_set.action_profile_actions.add(weight=weight)
            encode_action(index, action, args, a)
    elif not (default and table.definition.implementation):
        encode_action(index, entry.action, entry.args, out.action)
    if not default:
        out.idle_timeout_ns = entry.idle_timeout_ns
    if with_hit_time and table.definition.support_timeout and not default:
        out.time_since_last_hit.elapsed_ns = idle_timeouts.since_last_hit(entry)
    if with_counter and table.definition.direct_counter:
        out.counter_data.packet_count = entry.packets
        out.counter_data.byte_count = entry.bytes
    if with_meter and table.definition.direct_meter and entry.meter_config is not None:
        encode_meter_config(entry.meter_config, out.meter_config)
    return out


def write_table_entry(
    index: PipelineIndex, device: model.Device, update_type: int, msg: p4runtime_pb2.TableEntry
) -> None:
    table = index.table(msg.table_id)
    state = device.tables[table.definition.name]
    tname = table.definition.name
    if msg.is_const:
        raise invalid(f"table {tname}: is_const must be false in a write (it is read-only)")
    if msg.is_default_action:
        _write_default_entry(index, table, state, update_type, msg)
        return
    if update_type == Update.INSERT and not table.definition.keys:
        raise invalid(f"table {tname} has no match key: only its default entry can be written")
    match = decode_match(table, msg.match)
    check_priority(table, msg.priority)
    if update_type == Update.DELETE:
        # spec "TableEntry": only the key (match, priority) counts in a DELETE; the rest is ignored
        if table.definition.const_entries is not None:
            raise StatusError(grpc.StatusCode.PERMISSION_DENIED, f"table {tname} has const entries")
        state.delete(TableEntry(match=match, action="", args={}, priority=msg.priority))
        return
    if update_type not in (Update.INSERT, Update.MODIFY):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    meter_config = None
    if msg.HasField("meter_config"):
        if not table.definition.direct_meter:
            raise invalid(f"table {tname} has no direct meter: meter_config not allowed")
        meter_config = decode_meter_config(msg.meter_config, f"table {tname}")
    if msg.HasField("counter_data") and not table.definition.direct_counter:
        raise invalid(f"table {tname} has no direct counter: counter_data not allowed")
    if msg.idle_timeout_ns and not table.definition.support_timeout:
        raise invalid(
            f"table {tname} does not support idle timeouts (no support_timeout = true): "
            f"idle_timeout_ns must be 0"
        )
    if msg.idle_timeout_ns < 0:
        raise invalid(f"table {tname}: idle_timeout_ns must not be negative")
    if update_type == Update.MODIFY:
        _modify_entry(index, table, state, match, msg, meter_config)
        return
    if table.definition.const_entries is not None:
        raise StatusError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"table {tname} has const entries: it cannot be written",
        )
    entry = TableEntry(
        match=match,
        **decode_entry_action(index, table, msg.action),
        priority=msg.priority,
        controller_metadata=msg.controller_metadata,
        metadata=msg.metadata,
        meter_config=meter_config,
    )
    if msg.HasField("counter_data"):
        entry.packets = msg.counter_data.packet_count
        entry.bytes = msg.counter_data.byte_count
    idle_timeouts.arm(entry, msg.idle_timeout_ns)
    state.insert(entry)
    idle_timeouts.written()


def _modify_entry(index, table: TableInfo, state, match, msg, meter_config) -> None:
    """MODIFY (spec "Action Specification", "Constant Tables"): an unset action keeps the entry's action; direct resources
    change only when given. Const entries take MODIFYs of their direct resources only."""
    tname = table.definition.name
    # a malformed action is INVALID_ARGUMENT whether or not the entry exists (spec "Write
    # RPC": NOT_FOUND is for a well-formed entity that does not exist)
    given = decode_entry_action(index, table, msg.action) if msg.HasField("action") else None
    old = state.find(match, msg.priority)
    if old is None:
        raise not_found(f"table {tname} has no entry with this match key")
    if table.definition.const_entries is not None or old.is_const:
        if msg.HasField("action"):
            raise StatusError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"table {tname}: a const entry's action cannot be modified (only its "
                "direct counter or meter, with the action left unset)",
            )
        _set_direct_resources(old, msg, meter_config)
        idle_timeouts.arm(old, msg.idle_timeout_ns)
        idle_timeouts.written()
        return
    if given is not None:
        target = given
    else:
        target = {
            "action": old.action,
            "args": dict(old.args),
            "member_id": old.member_id,
            "group_id": old.group_id,
            "action_set": old.action_set,
        }
    entry = TableEntry(
        match=match,
        **target,
        priority=msg.priority,
        controller_metadata=msg.controller_metadata,
        metadata=msg.metadata,
        packets=old.packets,
        bytes=old.bytes,
        meter_config=old.meter_config,
    )
    state.modify(entry)
    # the engine's modify() keeps its own counters: set what the client gave afterwards
    stored = state.find(match, msg.priority)
    _set_direct_resources(stored, msg, meter_config)
    if stored is not None:
        idle_timeouts.arm(stored, msg.idle_timeout_ns)  # a MODIFY starts the timeout again
        idle_timeouts.written()


def _set_direct_resources(entry: TableEntry | None, msg, meter_config) -> None:
    if entry is None:
        return
    if msg.HasField("counter_data"):
        entry.packets = msg.counter_data.packet_count
        entry.bytes = msg.counter_data.byte_count
    if msg.HasField("meter_config"):
        entry.meter_config = meter_config


def _write_default_entry(index, table: TableInfo, state, update_type, msg) -> None:
    tname = table.definition.name
    if update_type != Update.MODIFY:
        raise invalid(
            f"table {tname}: the default entry can only be modified "
            "(INSERT/DELETE are not allowed)"
        )
    if msg.match or msg.priority:
        raise invalid(f"table {tname}: a default entry has no match fields or priority")
    if table.definition.implementation:  # as PI: P4Runtime and PSA give them none
        raise invalid(
            f"table {tname} is implemented by an action profile: its default action cannot "
            "be set or reset"
        )
    if table.definition.const_default_action:
        raise StatusError(
            grpc.StatusCode.PERMISSION_DENIED, f"table {tname}: the default action is const"
        )
    if not msg.HasField("action"):
        state.reset_default()  # spec: MODIFY without action restores the program's default
        return
    action, args = decode_action(index, table, msg.action, default_entry=True)
    state.set_default(action, args)


def read_table_entries(
    index: PipelineIndex, device: model.Device, msg: p4runtime_pb2.TableEntry
) -> Iterator[p4runtime_pb2.TableEntry]:
    with_counter = msg.HasField("counter_data")
    with_meter = msg.HasField("meter_config")
    with_hit_time = msg.HasField("time_since_last_hit")
    tables = [index.table(msg.table_id)] if msg.table_id else list(index.tables.values())
    if msg.is_default_action and not msg.table_id:
        raise invalid("reading default entries needs a table_id")
    for table in tables:
        state = device.tables[table.definition.name]
        if msg.is_default_action:
            yield encode_entry(index, table, state.default_entry(), default=True)
            continue
        if msg.match:
            match = decode_match(table, msg.match)
            entry = state.find(match, msg.priority)
            entries = [entry] if entry is not None else []
        else:  # a snapshot: the table may change between the chunks of the answer
            entries = [e for e in state.entries() if not msg.priority or e.priority == msg.priority]
        for e in entries:
            if _read_filter(index, msg, e):
                yield encode_entry(
                    index,
                    table,
                    e,
                    with_counter=with_counter,
                    with_meter=with_meter,
                    with_hit_time=with_hit_time,
                )


def _read_filter(index: PipelineIndex, msg: p4runtime_pb2.TableEntry, entry: TableEntry) -> bool:
    """Spec "Wildcard Reads" (table entries): the read's action id, controller_metadata and metadata filter the entries
    (their default values select everything)."""
    wanted = msg.action.action.action_id if msg.action.HasField("action") else 0
    if wanted and index.action_ids.get(entry.action) != wanted:
        return False
    kind = msg.action.WhichOneof("type")
    if (
        kind == "action_profile_member_id"
        and entry.member_id != msg.action.action_profile_member_id
    ):
        return False
    if kind == "action_profile_group_id" and entry.group_id != msg.action.action_profile_group_id:
        return False
    if msg.controller_metadata and entry.controller_metadata != msg.controller_metadata:
        return False
    return not msg.metadata or entry.metadata == msg.metadata


def _value_set(index: PipelineIndex, value_set_id: int) -> TableInfo:
    try:
        return index.value_sets[value_set_id]
    except KeyError:
        raise not_found(f"no value set with id {value_set_id} in the P4Info") from None


def write_value_set(index, device, update_type, msg: p4runtime_pb2.ValueSetEntry):
    if update_type != Update.MODIFY:
        raise invalid("value set entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.value_set_id:
        raise invalid("value_set_id 0: a write needs one value set")
    info = _value_set(index, msg.value_set_id)
    members = [decode_match(info, m.match, "value set") for m in msg.members]
    device.value_sets[info.definition.name].write(members)


def read_value_sets(index, device, msg: p4runtime_pb2.ValueSetEntry):
    infos = [_value_set(index, msg.value_set_id)] if msg.value_set_id else index.value_sets.values()
    for info in infos:
        item = p4runtime_pb2.ValueSetEntry(value_set_id=info.id)
        for member in device.value_sets[info.definition.name].members:
            entry = TableEntry(member, "", {})
            encode_match(info, entry, item.members.add())
        yield item

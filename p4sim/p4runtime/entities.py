"""Translation between P4Runtime entities and the device's runtime objects (p4sim.model).

Everything a client sends is validated here against the program (ids, widths, match kinds,
priorities, action scopes) before the engine sees it, so that each mistake gets the status
code the P4Runtime spec assigns to it:

- unknown table/action/counter/register id: NOT_FOUND (id 0 where one is needed:
  INVALID_ARGUMENT); unknown match field or parameter id: INVALID_ARGUMENT
- a value wider than its field: OUT_OF_RANGE (spec 8.4.2); empty bytestring: INVALID_ARGUMENT
- ternary value with bits outside the mask, LPM value with bits past the prefix, a
  don't-care match that is present instead of omitted, an exact field left out, priority
  missing on a ternary/range/optional table or present on another: INVALID_ARGUMENT
- an action the table does not list, or used against its @tableonly/@defaultonly scope:
  INVALID_ARGUMENT; const default action or const table: PERMISSION_DENIED
- index out of a counter's, meter's or register's size: OUT_OF_RANGE
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4sim import model
from p4sim.model import FieldMatch, ProgramModel, TableEntry
from p4sim.p4runtime import codec
from p4sim.p4runtime.errors import (
    StatusError,
    from_engine,
    invalid,
    not_found,
    out_of_range,
    unimplemented,
)

Update = p4runtime_pb2.Update


# ---------------------------------------------------------------------------
# Index: P4Runtime ids -> the program's definitions
# ---------------------------------------------------------------------------


@dataclass
class TableInfo:
    id: int
    definition: model.TableDef
    fields: dict[int, model.MatchFieldDef]  # by match field id
    field_ids: dict[str, int]  # by name
    actions: dict[int, model.ActionRefDef]  # by action id: the table's action list


@dataclass
class ActionInfo:
    id: int
    definition: model.ActionDef
    params: dict[int, model.ParamDef]
    param_ids: dict[str, int]


@dataclass
class PipelineIndex:
    tables: dict[int, TableInfo] = field(default_factory=dict)
    actions: dict[int, ActionInfo] = field(default_factory=dict)
    counters: dict[int, model.CounterDef] = field(default_factory=dict)  # indirect
    direct_counters: dict[int, model.CounterDef] = field(default_factory=dict)
    registers: dict[int, model.RegisterDef] = field(default_factory=dict)
    meters: dict[int, model.MeterDef] = field(default_factory=dict)  # indirect
    digests: dict[int, model.DigestDef] = field(default_factory=dict)
    digest_ids: dict[str, int] = field(default_factory=dict)
    # P4Runtime-side state of this pipeline: DigestEntry configs by digest id
    digest_configs: dict[int, p4runtime_pb2.DigestEntry.Config] = field(default_factory=dict)
    direct_meters: dict[int, model.MeterDef] = field(default_factory=dict)
    value_sets: dict[int, TableInfo] = field(default_factory=dict)  # match fields as a table's
    table_ids: dict[str, int] = field(default_factory=dict)
    action_ids: dict[str, int] = field(default_factory=dict)
    counter_ids: dict[str, int] = field(default_factory=dict)
    register_ids: dict[str, int] = field(default_factory=dict)
    profiles: dict[int, model.ActionProfileDef] = field(default_factory=dict)
    profile_ids: dict[str, int] = field(default_factory=dict)
    packet_in: p4info_pb2.ControllerPacketMetadata | None = None
    packet_out: p4info_pb2.ControllerPacketMetadata | None = None

    @classmethod
    def build(cls, program: ProgramModel, info: p4info_pb2.P4Info) -> PipelineIndex:
        """`info` must be the P4Info generated from `program` (same order, same names)."""
        index = cls()
        actions = {a.name: a for a in program.actions}
        for a in info.actions:
            definition = actions[a.preamble.name]
            by_name = {p.name: p for p in definition.params}
            index.actions[a.preamble.id] = ActionInfo(
                id=a.preamble.id,
                definition=definition,
                params={p.id: by_name[p.name] for p in a.params},
                param_ids={p.name: p.id for p in a.params},
            )
            index.action_ids[a.preamble.name] = a.preamble.id
        tables = {t.name: t for t in program.tables}
        for t in info.tables:
            definition = tables[t.preamble.name]
            keys = {k.name: k for k in definition.keys}
            refs = {r.name: r for r in definition.actions}
            id_to_name = {a.preamble.id: a.preamble.name for a in info.actions}
            index.tables[t.preamble.id] = TableInfo(
                id=t.preamble.id,
                definition=definition,
                fields={m.id: keys[m.name] for m in t.match_fields},
                field_ids={m.name: m.id for m in t.match_fields},
                actions={r.id: refs[id_to_name[r.id]] for r in t.action_refs if r.id in id_to_name},
            )
            index.table_ids[t.preamble.name] = t.preamble.id
        counters = {c.name: c for c in program.counters}
        for c in info.counters:
            index.counters[c.preamble.id] = counters[c.preamble.name]
            index.counter_ids[c.preamble.name] = c.preamble.id
        for c in info.direct_counters:
            index.direct_counters[c.preamble.id] = counters[c.preamble.name]
            index.counter_ids[c.preamble.name] = c.preamble.id
        registers = {r.name: r for r in program.registers}
        for r in info.registers:
            index.registers[r.preamble.id] = registers[r.preamble.name]
            index.register_ids[r.preamble.name] = r.preamble.id
        meters = {m.name: m for m in program.meters}
        for m in info.meters:
            index.meters[m.preamble.id] = meters[m.preamble.name]
        for m in info.direct_meters:
            index.direct_meters[m.preamble.id] = meters[m.preamble.name]
        digests = {d.name: d for d in program.digests}
        for d in info.digests:
            index.digests[d.preamble.id] = digests[d.preamble.name]
            index.digest_ids[d.preamble.name] = d.preamble.id
        profiles = {p.name: p for p in program.action_profiles}
        for p in info.action_profiles:
            index.profiles[p.preamble.id] = profiles[p.preamble.name]
            index.profile_ids[p.preamble.name] = p.preamble.id
        value_sets = {v.name: v for v in program.value_sets}
        for v in info.value_sets:
            definition = value_sets[v.preamble.name]
            index.value_sets[v.preamble.id] = TableInfo(
                id=v.preamble.id,
                definition=definition,
                fields={m.id: definition.fields[m.id - 1] for m in v.match},
                field_ids={f.name: i for i, f in enumerate(definition.fields, 1)},
                actions={},
            )
        for h in info.controller_packet_metadata:
            if h.preamble.name == "packet_in":
                index.packet_in = h
            elif h.preamble.name == "packet_out":
                index.packet_out = h
        return index

    def profile(self, profile_id: int) -> model.ActionProfileDef:
        if profile_id == 0:
            raise invalid("action_profile_id 0 is not an action profile (0 = all, in a Read)")
        try:
            return self.profiles[profile_id]
        except KeyError:
            raise not_found(f"no action profile with id {profile_id} in the P4Info") from None

    def table(self, table_id: int) -> TableInfo:
        if table_id == 0:
            raise invalid("table_id 0 is not a table (0 means all tables only in a Read)")
        try:
            return self.tables[table_id]
        except KeyError:
            raise not_found(f"no table with id {table_id} in the P4Info") from None


# ---------------------------------------------------------------------------
# Table entries
# ---------------------------------------------------------------------------


def _full(width: int) -> int:
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
            if value & (_full(w) >> plen):
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
            if low == 0 and high == _full(w):
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
        args[param.name] = codec.decode(
            p.value, param.bitwidth, f"action {name}, parameter " f"{param.name}"
        )
    missing = [p.name for p in info.definition.params if p.name not in args]
    if missing:
        raise invalid(f"action {name}: missing parameter(s) {', '.join(missing)}")
    return name, args


def _no_watch(msg, what: str) -> None:
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
        _no_watch(a, f"table {d.name}, action set")
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
            if m.low == 0 and m.high == _full(w):
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
    if with_counter and table.definition.direct_counter:
        out.counter_data.packet_count = entry.packets
        out.counter_data.byte_count = entry.bytes
    if with_meter and table.definition.direct_meter and entry.meter_config is not None:
        _encode_meter_config(entry.meter_config, out.meter_config)
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
    if msg.idle_timeout_ns:
        raise unimplemented(f"table {tname}: idle timeouts are not supported by p4sim")
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
    state.insert(entry)


def _modify_entry(index, table: TableInfo, state, match, msg, meter_config) -> None:
    """MODIFY (spec "Action Specification", "Constant Tables"): an unset action keeps the entry's action; direct resources
    change only when given. Const entries take MODIFYs of their direct resources only."""
    tname = table.definition.name
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
        return
    if msg.HasField("action"):
        target = decode_entry_action(index, table, msg.action)
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
    _set_direct_resources(state.find(match, msg.priority), msg, meter_config)


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
                    index, table, e, with_counter=with_counter, with_meter=with_meter
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


# ---------------------------------------------------------------------------
# Action profile members and groups (spec "ActionProfileMember", "ActionProfileGroup")
# ---------------------------------------------------------------------------


def write_profile_member(index, device, update_type, msg: p4runtime_pb2.ActionProfileMember):
    definition = index.profile(msg.action_profile_id)
    state = device.action_profiles[definition.name]
    if msg.member_id == 0:
        raise invalid("member_id must be non-zero")
    if update_type == Update.DELETE:  # only the ids count
        state.delete_member(msg.member_id)
        return
    tables = [index.tables[index.table_ids[t]] for t in definition.tables if t in index.table_ids]
    table = next((t for t in tables if msg.action.action_id in t.actions), None)
    if table is None:  # PI: "Invalid action for action profile"
        what = (
            index.actions[msg.action.action_id].definition.name
            if (msg.action.action_id in index.actions)
            else f"id {msg.action.action_id}"
        )
        raise invalid(
            f"action {what} is not an action of action profile {definition.name}'s tables"
        )
    action, args = decode_action(
        index, table, p4runtime_pb2.TableAction(action=msg.action), False, member=True
    )
    member = model.ProfileMember(msg.member_id, action, args)
    if update_type == Update.INSERT:
        state.insert_member(member)
    else:
        state.modify_member(member)


def write_profile_group(index, device, update_type, msg: p4runtime_pb2.ActionProfileGroup):
    definition = index.profile(msg.action_profile_id)
    state = device.action_profiles[definition.name]
    if msg.group_id == 0:
        raise invalid("group_id must be non-zero")
    if update_type == Update.DELETE:
        state.delete_group(msg.group_id)
        return
    members: dict[int, int] = {}
    for m in msg.members:
        _no_watch(m, f"group {msg.group_id}, member {m.member_id}")
        if m.member_id in members:  # PI: "use weights instead"
            raise invalid(
                f"group {msg.group_id}: member {m.member_id} is listed twice (give it a weight)"
            )
        members[m.member_id] = m.weight
    group = model.ProfileGroup(msg.group_id, members, msg.max_size)
    if update_type == Update.INSERT:
        state.insert_group(group)
    else:
        state.modify_group(group)


def _profiles(index: PipelineIndex, profile_id: int) -> list[tuple[int, model.ActionProfileDef]]:
    if profile_id:
        return [(profile_id, index.profile(profile_id))]
    return list(index.profiles.items())


def read_profile_members(index, device, msg: p4runtime_pb2.ActionProfileMember):
    for profile_id, definition in _profiles(index, msg.action_profile_id):
        for m in list(device.action_profiles[definition.name].members()):
            if msg.member_id and m.member_id != msg.member_id:
                continue
            out = p4runtime_pb2.ActionProfileMember(
                action_profile_id=profile_id, member_id=m.member_id
            )
            encode_action(index, m.action, m.args, out)
            yield out


def read_profile_groups(index, device, msg: p4runtime_pb2.ActionProfileGroup):
    for profile_id, definition in _profiles(index, msg.action_profile_id):
        for g in list(device.action_profiles[definition.name].groups()):
            if msg.group_id and g.group_id != msg.group_id:
                continue
            out = p4runtime_pb2.ActionProfileGroup(
                action_profile_id=profile_id, group_id=g.group_id, max_size=g.max_size
            )
            for member_id, weight in g.members.items():
                out.members.add(member_id=member_id, weight=weight)
            yield out


# ---------------------------------------------------------------------------
# Direct counters, counters, registers
# ---------------------------------------------------------------------------


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


def _counter(index: PipelineIndex, counter_id: int) -> model.CounterDef:
    if counter_id in index.direct_counters:
        raise invalid(f"counter id {counter_id} is a direct counter: use DirectCounterEntry")
    try:
        return index.counters[counter_id]
    except KeyError:
        raise not_found(f"no counter with id {counter_id} in the P4Info") from None


def _check_index(what: str, i: int, size: int) -> None:
    if not 0 <= i < size:
        raise out_of_range(f"{what}: index {i} is outside 0..{size - 1}")


def _selected_cells(msg, resource_id: int, all_ids, lookup, kind: str):
    """The (id, definition, index) cells an indexed read selects: id 0 = every resource of
    the kind, an unset index = every cell (P4Runtime wildcard reads)."""
    for rid in [resource_id] if resource_id else list(all_ids):
        definition = lookup(rid)
        if msg.HasField("index"):
            _check_index(f"{kind} {definition.name}", msg.index.index, definition.size)
            indices = [msg.index.index]
        else:
            indices = range(definition.size)
        for i in indices:
            yield rid, definition, i


def _counter_data(
    definition: model.CounterDef, packets: int, bytes_: int, out: p4runtime_pb2.CounterData
) -> None:
    if definition.unit in ("packets", "packets_and_bytes"):
        out.packet_count = packets
    if definition.unit in ("bytes", "packets_and_bytes"):
        out.byte_count = bytes_


def write_counter(index, device, update_type, msg: p4runtime_pb2.CounterEntry):
    if update_type != Update.MODIFY:
        raise invalid("counter entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.counter_id:
        raise invalid("counter_id 0: a write needs one counter")
    definition = _counter(index, msg.counter_id)
    if not msg.HasField("index"):
        raise invalid(f"counter {definition.name}: a write needs an index")
    _check_index(f"counter {definition.name}", msg.index.index, definition.size)
    device.counters[definition.name].write(
        msg.index.index, msg.data.packet_count, msg.data.byte_count
    )


def read_counters(index, device, msg: p4runtime_pb2.CounterEntry):
    cells = _selected_cells(
        msg, msg.counter_id, index.counters, lambda cid: _counter(index, cid), "counter"
    )
    for cid, definition, i in cells:
        packets, bytes_ = device.counters[definition.name].read(i)
        item = p4runtime_pb2.CounterEntry(counter_id=cid)
        item.index.index = i
        _counter_data(definition, packets, bytes_, item.data)
        yield item


def _register(index: PipelineIndex, register_id: int) -> model.RegisterDef:
    try:
        return index.registers[register_id]
    except KeyError:
        raise not_found(f"no register with id {register_id} in the P4Info") from None


def write_register(index, device, update_type, msg: p4runtime_pb2.RegisterEntry):
    if update_type != Update.MODIFY:
        raise invalid("register entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.register_id:
        raise invalid("register_id 0: a write needs one register")
    definition = _register(index, msg.register_id)
    what = f"register {definition.name}"
    if not msg.HasField("index"):
        raise invalid(f"{what}: a write needs an index")
    _check_index(what, msg.index.index, definition.size)
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"{what}: data must be a bitstring of {definition.bitwidth} bits")
    value = codec.decode(msg.data.bitstring, definition.bitwidth, what)
    device.registers[definition.name].write(msg.index.index, value)


def read_registers(index, device, msg: p4runtime_pb2.RegisterEntry):
    cells = _selected_cells(
        msg, msg.register_id, index.registers, lambda rid: _register(index, rid), "register"
    )
    for rid, definition, i in cells:
        value = device.registers[definition.name].read(i)
        item = p4runtime_pb2.RegisterEntry(register_id=rid)
        item.index.index = i
        item.data.CopyFrom(p4data_pb2.P4Data(bitstring=codec.encode(value)))
        yield item


# ---------------------------------------------------------------------------
# Parser value sets (spec "ValueSetEntry": written whole, by MODIFY)
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Meters (two-rate three-color; rates in units/s, bursts in units, as BMv2 takes them)
# ---------------------------------------------------------------------------


def decode_meter_config(config: p4runtime_pb2.MeterConfig, what: str):
    values = (config.cir, config.cburst, config.pir, config.pburst)
    if min(values) < 0:
        raise invalid(f"{what}: meter rates and bursts must not be negative")
    if config.cir > config.pir:
        raise invalid(f"{what}: meter cir {config.cir} exceeds pir {config.pir}")
    if config.eburst:
        raise unimplemented(f"{what}: eburst (single-rate meters) is not supported by p4sim")
    return values


def _encode_meter_config(config, out: p4runtime_pb2.MeterConfig) -> None:
    out.cir, out.cburst, out.pir, out.pburst = config


def _meter(index: PipelineIndex, meter_id: int) -> model.MeterDef:
    if meter_id in index.direct_meters:
        raise invalid(f"meter id {meter_id} is a direct meter: use DirectMeterEntry")
    try:
        return index.meters[meter_id]
    except KeyError:
        raise not_found(f"no meter with id {meter_id} in the P4Info") from None


def write_meter(index, device, update_type, msg: p4runtime_pb2.MeterEntry):
    if update_type != Update.MODIFY:
        raise invalid("meter entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.meter_id:
        raise invalid("meter_id 0: a write needs one meter")
    definition = _meter(index, msg.meter_id)
    what = f"meter {definition.name}"
    if not msg.HasField("index"):
        raise invalid(f"{what}: a write needs an index")
    _check_index(what, msg.index.index, definition.size)
    # an unset config returns the cell to its default (unconfigured: everything GREEN)
    config = decode_meter_config(msg.config, what) if msg.HasField("config") else None
    device.meters[definition.name].set_config(msg.index.index, config)


def read_meters(index, device, msg: p4runtime_pb2.MeterEntry):
    cells = _selected_cells(
        msg, msg.meter_id, index.meters, lambda mid: _meter(index, mid), "meter"
    )
    for mid, definition, i in cells:
        item = p4runtime_pb2.MeterEntry(meter_id=mid)
        item.index.index = i
        config = device.meters[definition.name].get_config(i)
        if config is not None:
            _encode_meter_config(config, item.config)
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
            _encode_meter_config(entry.meter_config, item.config)
        yield item


# ---------------------------------------------------------------------------
# Digests: which digest() calls reach the controller (as DigestList on the stream)
# ---------------------------------------------------------------------------


def write_digest(index: PipelineIndex, update_type: int, msg: p4runtime_pb2.DigestEntry):
    if not msg.digest_id:
        raise invalid("digest_id 0: a write needs one digest")
    if msg.digest_id not in index.digests:
        raise not_found(f"no digest with id {msg.digest_id} in the P4Info")
    name = index.digests[msg.digest_id].name
    exists = msg.digest_id in index.digest_configs
    if update_type == Update.INSERT and exists:
        raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"digest {name} is configured")
    if update_type in (Update.MODIFY, Update.DELETE) and not exists:
        raise not_found(f"digest {name} is not configured")
    if update_type == Update.DELETE:
        del index.digest_configs[msg.digest_id]
    else:
        index.digest_configs[msg.digest_id] = msg.config


def read_digests(index: PipelineIndex, msg: p4runtime_pb2.DigestEntry):
    if msg.digest_id and msg.digest_id not in index.digests:
        raise not_found(f"no digest with id {msg.digest_id} in the P4Info")
    ids = [msg.digest_id] if msg.digest_id else sorted(index.digest_configs)
    configs = [(i, index.digest_configs.get(i)) for i in ids]
    return [p4runtime_pb2.DigestEntry(digest_id=i, config=c) for i, c in configs if c is not None]


def digest_data(definition: model.DigestDef, values: list[int]) -> p4data_pb2.P4Data:
    """One digest() record as the P4Data struct P4Runtime sends in a DigestList."""
    data = p4data_pb2.P4Data()
    data.struct.SetInParent()
    for fld, value in zip(definition.fields, values):
        data.struct.members.add(bitstring=codec.encode(value & ((1 << fld.bitwidth) - 1)))
    return data


# ---------------------------------------------------------------------------
# Packet replication engine
# ---------------------------------------------------------------------------


V1MODEL_PORT_BITS = 9  # standard_metadata's egress_spec/egress_port are bit<9>


def _replicas(replicas, what: str, cpu_port: int | None) -> list[model.Replica]:
    out, seen = [], set()
    for r in replicas:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            port = codec.decode(r.port, 32, f"{what}: replica port")
        else:
            port = r.egress_port
        if port >> V1MODEL_PORT_BITS and port != cpu_port:
            raise invalid(
                f"{what}: replica port {port} cannot exist: v1model ports are "
                f"{V1MODEL_PORT_BITS} bits (0..511)"
                + (f"; the CPU port is {cpu_port}" if cpu_port is not None else "")
            )
        if r.backup_replicas:
            raise unimplemented(f"{what}: backup_replicas are not supported by p4sim")
        if (port, r.instance) in seen:
            raise invalid(f"{what}: replica (port {port}, instance {r.instance}) given twice")
        seen.add((port, r.instance))
        out.append(model.Replica(egress_port=port, instance=r.instance))
    return out


def write_pre(
    device: model.Device, update_type: int, msg: p4runtime_pb2.PacketReplicationEngineEntry
) -> None:
    pre = device.pre
    kind = msg.WhichOneof("type")
    if kind == "multicast_group_entry":
        group = msg.multicast_group_entry
        gid = group.multicast_group_id
        what = f"multicast group {gid}"
        if gid == 0:
            raise invalid("multicast_group_id 0 is not a group (v1model: 0 = no multicast)")
        if gid > model.MAX_PRE_ID:
            raise out_of_range(
                f"multicast_group_id {gid} is out of range 1..{model.MAX_PRE_ID} (as BMv2's "
                f"P4Runtime server: the ids above are reserved for clone sessions)"
            )
        exists = gid in pre.multicast_groups
        if update_type == Update.INSERT:
            if exists:
                raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"{what} already exists")
            pre.multicast_groups[gid] = _replicas(group.replicas, what, device.cpu_port)
        elif update_type == Update.MODIFY:
            if not exists:
                raise not_found(f"{what} does not exist")
            pre.multicast_groups[gid] = _replicas(group.replicas, what, device.cpu_port)
        elif update_type == Update.DELETE:
            if not exists:
                raise not_found(f"{what} does not exist")
            del pre.multicast_groups[gid]
        else:
            raise invalid("update type must be INSERT, MODIFY or DELETE")
    elif kind == "clone_session_entry":
        session = msg.clone_session_entry
        sid = session.session_id
        what = f"clone session {sid}"
        if not 1 <= sid <= model.MAX_PRE_ID:
            raise invalid(
                f"clone session id {sid} is out of range 1..{model.MAX_PRE_ID} "
                f"(BMv2's mirroring sessions; 0 is reserved)"
            )
        exists = sid in pre.clone_sessions
        if update_type == Update.DELETE:
            if not exists:
                raise not_found(f"{what} does not exist")
            del pre.clone_sessions[sid]
            return
        if update_type == Update.INSERT and exists:
            raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"{what} already exists")
        if update_type == Update.MODIFY and not exists:
            raise not_found(f"{what} does not exist")
        if update_type not in (Update.INSERT, Update.MODIFY):
            raise invalid("update type must be INSERT, MODIFY or DELETE")
        pre.clone_sessions[sid] = model.CloneSession(
            replicas=_replicas(session.replicas, what, device.cpu_port),
            class_of_service=session.class_of_service,
            packet_length_bytes=session.packet_length_bytes,
        )
    else:
        raise invalid(
            "PacketReplicationEngineEntry needs a multicast_group_entry or a " "clone_session_entry"
        )


def _encode_replicas(replicas: list[model.Replica], out) -> None:
    for r in replicas:
        out.add(egress_port=r.egress_port, instance=r.instance)


def read_pre(device: model.Device, msg: p4runtime_pb2.PacketReplicationEngineEntry):
    pre = device.pre
    kind = msg.WhichOneof("type")
    out = []
    if kind == "multicast_group_entry":
        gid = msg.multicast_group_entry.multicast_group_id
        if gid and gid not in pre.multicast_groups:
            raise not_found(f"multicast group {gid} does not exist")
        groups = [
            (g, pre.multicast_groups[g]) for g in ([gid] if gid else sorted(pre.multicast_groups))
        ]
        for g, replicas in groups:
            item = p4runtime_pb2.PacketReplicationEngineEntry()
            item.multicast_group_entry.multicast_group_id = g
            _encode_replicas(replicas, item.multicast_group_entry.replicas)
            out.append(item)
    elif kind == "clone_session_entry":
        sid = msg.clone_session_entry.session_id
        if sid and sid not in pre.clone_sessions:
            raise not_found(f"clone session {sid} does not exist")
        sessions = [
            (s, pre.clone_sessions[s]) for s in ([sid] if sid else sorted(pre.clone_sessions))
        ]
        for s, session in sessions:
            item = p4runtime_pb2.PacketReplicationEngineEntry()
            entry = item.clone_session_entry
            entry.session_id = s
            entry.class_of_service = session.class_of_service
            entry.packet_length_bytes = session.packet_length_bytes
            _encode_replicas(session.replicas, entry.replicas)
            out.append(item)
    else:
        raise invalid(
            "PacketReplicationEngineEntry read needs a multicast_group_entry or a "
            "clone_session_entry"
        )
    return out


# ---------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------


def apply_update(index: PipelineIndex, device: model.Device, update: p4runtime_pb2.Update):
    """Apply one update; raise StatusError on any problem. Caller holds device.lock."""
    if update.type not in (Update.INSERT, Update.MODIFY, Update.DELETE):
        raise invalid("update type must be INSERT, MODIFY or DELETE (got UNSPECIFIED)")
    entity = update.entity
    kind = entity.WhichOneof("entity")
    try:
        if kind == "table_entry":
            write_table_entry(index, device, update.type, entity.table_entry)
        elif kind == "counter_entry":
            write_counter(index, device, update.type, entity.counter_entry)
        elif kind == "direct_counter_entry":
            write_direct_counter(index, device, update.type, entity.direct_counter_entry)
        elif kind == "register_entry":
            write_register(index, device, update.type, entity.register_entry)
        elif kind == "meter_entry":
            write_meter(index, device, update.type, entity.meter_entry)
        elif kind == "direct_meter_entry":
            write_direct_meter(index, device, update.type, entity.direct_meter_entry)
        elif kind == "packet_replication_engine_entry":
            write_pre(device, update.type, entity.packet_replication_engine_entry)
        elif kind == "digest_entry":
            write_digest(index, update.type, entity.digest_entry)
        elif kind == "action_profile_member":
            write_profile_member(index, device, update.type, entity.action_profile_member)
        elif kind == "action_profile_group":
            write_profile_group(index, device, update.type, entity.action_profile_group)
        elif kind == "value_set_entry":
            write_value_set(index, device, update.type, entity.value_set_entry)
        elif kind is None:
            raise invalid("the update has no entity")
        else:
            raise unimplemented(f"writing {kind} is not supported by p4sim")
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
        return cells(msg.counter_id, index.counters, lambda i: _counter(index, i))
    if kind == "register_entry":
        return cells(msg.register_id, index.registers, lambda i: _register(index, i))
    if kind == "meter_entry":
        return cells(msg.meter_id, index.meters, lambda i: _meter(index, i))
    if kind in ("action_profile_member", "action_profile_group"):
        profiles = _profiles(index, msg.action_profile_id)
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

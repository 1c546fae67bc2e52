"""Name-keyed builders and decoders for P4Runtime entities (tables, counters, registers, PRE).

Everything above this module says `table_entry(index, "ue_sessions_v4", {"ue_addr":
"10.0.0.2"}, "split_dc", {...})`; only this module knows field ids and bytestrings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controlplane.p4info import P4InfoError, P4InfoIndex, decode, encode, parse_value

MatchValue = int | str | bytes | tuple  # ternary: (value, mask); lpm: (value, prefix_len)


def table_entry(
    index: P4InfoIndex,
    table: str,
    match: dict[str, MatchValue],
    action: str | None = None,
    params: dict[str, int | str] | None = None,
    priority: int = 0,
    metadata: bytes = b"",
) -> p4runtime_pb2.TableEntry:
    """A TableEntry; match fields set to None (or omitted, for non-exact kinds) are wildcards."""
    tinfo = index.table(table)
    entry = p4runtime_pb2.TableEntry(
        table_id=tinfo.preamble.id, priority=priority, metadata=metadata
    )
    for name, value in match.items():
        if value is None:
            continue
        mf = index.match_field(tinfo, name)
        what = f"{tinfo.preamble.name} {name}"
        fm = entry.match.add(field_id=mf.id)
        kind = mf.match_type
        if kind == p4info_pb2.MatchField.EXACT:
            fm.exact.value = encode(value, mf.bitwidth, what)
        elif kind == p4info_pb2.MatchField.TERNARY:
            val, mask = value if isinstance(value, tuple) else (value, (1 << mf.bitwidth) - 1)
            mask_int = parse_value(mask, mf.bitwidth, what + " mask")
            fm.ternary.value = encode(
                parse_value(val, mf.bitwidth, what) & mask_int, mf.bitwidth, what
            )
            fm.ternary.mask = encode(mask_int, mf.bitwidth, what + " mask")
        elif kind == p4info_pb2.MatchField.LPM:
            val, plen = value if isinstance(value, tuple) else (value, mf.bitwidth)
            fm.lpm.value = encode(val, mf.bitwidth, what)
            fm.lpm.prefix_len = plen
        elif kind == p4info_pb2.MatchField.OPTIONAL:
            fm.optional.value = encode(value, mf.bitwidth, what)
        else:
            raise P4InfoError(f"{what}: match kind {kind} is not supported by this controller")
    if action is not None:
        entry.action.action.CopyFrom(action_msg(index, action, params or {}))
    return entry


def action_msg(
    index: P4InfoIndex, action: str, params: dict[str, int | str]
) -> p4runtime_pb2.Action:
    ainfo = index.action(action)
    msg = p4runtime_pb2.Action(action_id=ainfo.preamble.id)
    missing = [p.name for p in ainfo.params if p.name not in params]
    if missing:
        raise P4InfoError(
            f"action {ainfo.preamble.name}: missing parameter(s) " f"{', '.join(missing)}"
        )
    for name, value in params.items():
        pinfo = index.param(ainfo, name)
        msg.params.add(
            param_id=pinfo.id, value=encode(value, pinfo.bitwidth, f"{ainfo.preamble.name} {name}")
        )
    return msg


@dataclass
class DecodedEntry:
    table: str
    match: dict[str, int | tuple[int, int]]  # ternary as (value, mask)
    action: str | None
    params: dict[str, int]
    priority: int = 0
    metadata: bytes = b""
    packets: int | None = None
    bytes: int | None = None
    raw: p4runtime_pb2.TableEntry | None = field(default=None, repr=False)


def decode_table_entry(index: P4InfoIndex, entry: p4runtime_pb2.TableEntry) -> DecodedEntry:
    tinfo = index.by_id(entry.table_id)
    fields = {f.id: f for f in tinfo.match_fields}
    match: dict[str, int | tuple[int, int]] = {}
    for fm in entry.match:
        name = fields[fm.field_id].name
        kind = fm.WhichOneof("field_match_type")
        if kind == "exact":
            match[name] = decode(fm.exact.value)
        elif kind == "ternary":
            match[name] = (decode(fm.ternary.value), decode(fm.ternary.mask))
        elif kind == "lpm":
            match[name] = (decode(fm.lpm.value), fm.lpm.prefix_len)
        elif kind == "optional":
            match[name] = decode(fm.optional.value)
    action = None
    params: dict[str, int] = {}
    if entry.action.HasField("action"):
        ainfo = index.by_id(entry.action.action.action_id)
        action = index.name_of(ainfo.preamble.id)
        pnames = {p.id: p.name for p in ainfo.params}
        params = {pnames[p.param_id]: decode(p.value) for p in entry.action.action.params}
    decoded = DecodedEntry(
        index.name_of(tinfo.preamble.id),
        match,
        action,
        params,
        entry.priority,
        entry.metadata,
        raw=entry,
    )
    if entry.HasField("counter_data"):
        decoded.packets = entry.counter_data.packet_count
        decoded.bytes = entry.counter_data.byte_count
    return decoded


def update(kind: str, entity_field: str, message) -> p4runtime_pb2.Update:
    """update("INSERT", "table_entry", entry) -> an Update carrying that entity."""
    upd = p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind))
    getattr(upd.entity, entity_field).CopyFrom(message)
    return upd


def table_read(index: P4InfoIndex, table: str) -> p4runtime_pb2.Entity:
    """A wildcard read of every entry of one table."""
    entity = p4runtime_pb2.Entity()
    entity.table_entry.table_id = index.table(table).preamble.id
    return entity


def counter_read(index: P4InfoIndex, counter: str, idx: int | None = None) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    entity.counter_entry.counter_id = index.counter(counter).preamble.id
    if idx is not None:
        entity.counter_entry.index.index = idx
    return entity


def register_entity(
    index: P4InfoIndex, register: str, idx: int, value: int | None = None
) -> p4runtime_pb2.Entity:
    """A register cell to read, or (with `value`) to write."""
    rinfo = index.register(register)
    entity = p4runtime_pb2.Entity()
    entity.register_entry.register_id = rinfo.preamble.id
    entity.register_entry.index.index = idx
    if value is not None:
        width = rinfo.type_spec.bitstring.bit.bitwidth or 32
        entity.register_entry.data.bitstring = encode(value, width, rinfo.preamble.name)
    return entity


def multicast_group(group_id: int, replicas: list[tuple[int, int]]) -> p4runtime_pb2.Entity:
    """A PRE multicast group; replicas as (egress port, instance)."""
    entity = p4runtime_pb2.Entity()
    group = entity.packet_replication_engine_entry.multicast_group_entry
    group.multicast_group_id = group_id
    for port, instance in replicas:
        group.replicas.add(egress_port=port, instance=instance)
    return entity


def multicast_group_update(
    kind: str, group_id: int, replicas: list[tuple[int, int]]
) -> p4runtime_pb2.Update:
    """update(kind, ...) of a PRE multicast group (a DELETE needs no replicas)."""
    entity = multicast_group(group_id, replicas)
    return update(kind, "packet_replication_engine_entry", entity.packet_replication_engine_entry)


def describe_update(index: P4InfoIndex, upd: p4runtime_pb2.Update) -> str:
    """One line naming what an update touches, for error messages."""
    kind = p4runtime_pb2.Update.Type.Name(upd.type)
    which = upd.entity.WhichOneof("entity")
    if which == "table_entry":
        try:
            dec = decode_table_entry(index, upd.entity.table_entry)
        except (KeyError, P4InfoError):
            return f"{kind} table entry (table id {upd.entity.table_entry.table_id})"
        keys = " ".join(f"{k}={_fmt(v)}" for k, v in dec.match.items())
        return f"{kind} {dec.table} [{keys}] -> {dec.action}"
    if which == "packet_replication_engine_entry":
        pre = upd.entity.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            return f"{kind} multicast group {pre.multicast_group_entry.multicast_group_id}"
        return f"{kind} clone session {pre.clone_session_entry.session_id}"
    return f"{kind} {which}"


def _fmt(value) -> str:
    if isinstance(value, tuple):
        return f"{value[0]:#x}&&&{value[1]:#x}"
    return f"{value:#x}" if value > 0xFFFF else str(value)


# ---------------------------------------------------------------- comparing entries
def dump_meta(meta: dict) -> bytes:
    """An entry's P4Runtime metadata: compact, sorted JSON of the keys that are set."""
    return json.dumps(
        {k: v for k, v in meta.items() if v is not None}, separators=(",", ":"), sort_keys=True
    ).encode()


def load_meta(data: bytes) -> dict:
    """An entry's metadata read back; {} when it is not JSON of ours."""
    try:
        meta = json.loads(data.decode()) if data else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _canon(data: bytes) -> bytes:
    """Targets may return padded bytestrings; compare canonical ones."""
    return data.lstrip(b"\0") or b"\0"


def match_key(entry: p4runtime_pb2.TableEntry) -> bytes:
    """An entry's identity (table, priority, match) with canonical bytestrings."""
    key = p4runtime_pb2.TableEntry(table_id=entry.table_id, priority=entry.priority)
    for fm in sorted(entry.match, key=lambda m: m.field_id):
        fm_copy = key.match.add()
        fm_copy.CopyFrom(fm)
        fm = fm_copy
        kind = fm.WhichOneof("field_match_type")
        if kind in ("exact", "optional"):
            getattr(fm, kind).value = _canon(getattr(fm, kind).value)
        elif kind == "ternary":
            fm.ternary.value, fm.ternary.mask = _canon(fm.ternary.value), _canon(fm.ternary.mask)
        elif kind == "lpm":
            fm.lpm.value = _canon(fm.lpm.value)
    return key.SerializeToString(deterministic=True)


def same_action(a: p4runtime_pb2.TableEntry, b: p4runtime_pb2.TableEntry) -> bool:
    """Same action, parameters and metadata, whatever padding a target returns."""

    def norm(e):
        act = p4runtime_pb2.Action(action_id=e.action.action.action_id)
        for p in sorted(e.action.action.params, key=lambda p: p.param_id):
            act.params.add(param_id=p.param_id, value=_canon(p.value))
        return act.SerializeToString(deterministic=True), e.metadata

    return norm(a) == norm(b)

"""The index of a pipeline: P4Runtime ids -> the program's definitions (tables, actions,
profiles, counters, meters, registers, digests, value sets).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.model import ProgramModel
from p4sim.p4runtime.errors import (
    invalid,
    not_found,
)


@dataclass
class TableInfo:
    id: int
    definition: model.TableDef
    fields: dict[int, model.MatchFieldDef]  # by match field id
    field_ids: dict[str, int]  # by name
    actions: dict[int, model.ActionRefDef]  # by action id: the table's action list
    # fields of a `type` P4Info translates to a string (@p4runtime_translation(..., string)):
    # p4sim does not translate, so it cannot take their values
    string_fields: set[str] = field(default_factory=set)


@dataclass
class ActionInfo:
    id: int
    definition: model.ActionDef
    params: dict[int, model.ParamDef]
    param_ids: dict[str, int]
    string_params: set[str] = field(default_factory=set)  # as TableInfo.string_fields


def string_types(info: p4info_pb2.P4Info) -> set[str]:
    """The `type`s P4Info translates to strings (translated_type with sdn_string)."""
    return {
        name
        for name, t in info.type_info.new_types.items()
        if t.HasField("translated_type") and t.translated_type.HasField("sdn_string")
    }


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
        strings = string_types(info)
        actions = {a.name: a for a in program.actions}
        for a in info.actions:
            definition = actions[a.preamble.name]
            # P4Info lists the parameters in order, under their @name if they have one
            pairs = list(zip(a.params, definition.params, strict=True))
            index.actions[a.preamble.id] = ActionInfo(
                id=a.preamble.id,
                definition=definition,
                params={p.id: d for p, d in pairs},
                param_ids={d.name: p.id for p, d in pairs},
                string_params={d.name for p, d in pairs if p.type_name.name in strings},
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
                string_fields={m.name for m in t.match_fields if m.type_name.name in strings},
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

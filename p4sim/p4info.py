"""P4Info generation from a `ProgramModel`, following p4c's conventions.

What "p4c's conventions" means here, as implemented in p4c's `control-plane/`
(`p4RuntimeSymbolTable.cpp`, `p4RuntimeSerializer.cpp`, `p4RuntimeArchStandard`):

- Every object's id is `(prefix << 24) | (jenkins_one_at_a_time(name) & 0xffffff)`, prefix
  from p4info.proto's `P4Ids.Prefix`. An `@id(N)` annotation wins (the prefix is added when
  its top byte is 0). Ids are assigned per resource type in ascending order of resource type,
  names sorted; a collision is resolved by linear probing of the hash value (not the id).
- The alias is the shortest unique dot-separated suffix among *all* symbols of the program,
  whatever their type.
- Match fields, action parameters and controller-header fields get ids 1..n in declaration
  order, unless `@id` says otherwise (ids are never reused).
- Controller headers: the preamble's name and alias are the `@controller_header` string, the
  id is hashed from the header *type* name.
- `@hidden` objects get no P4Info entry. `@name`, `@id`, `@brief` and `@description` are not
  copied into `annotations`; the last two fill the `doc` fields instead.

A TNA or T2NA program gets the P4Info of p4c-barefoot with --p4runtime-force-std-externs
(bf-p4c's `control-plane/`): tables and externs are hashed and aliased as `<pipe>.<name>` but
shown as `<name>`, extern ids are hashed under the Tofino prefixes, and the ingress parser's
port metadata is a `PortMetadata` extern (see `SymbolTable`, `_add_port_metadata`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from p4sim.model import ProgramModel

# p4info.proto P4Ids.Prefix
PREFIX_ACTION = 0x01
PREFIX_TABLE = 0x02
PREFIX_VALUE_SET = 0x03
PREFIX_CONTROLLER_HEADER = 0x04
PREFIX_ACTION_PROFILE = 0x11
PREFIX_COUNTER = 0x12
PREFIX_DIRECT_COUNTER = 0x13
PREFIX_METER = 0x14
PREFIX_DIRECT_METER = 0x15
PREFIX_REGISTER = 0x16
PREFIX_DIGEST = 0x17

# Annotations p4c consumes itself instead of copying them into P4Info.
_NOT_SERIALIZED = {"name", "id", "brief", "description"}
_ID_ANNOTATION = re.compile(r"^@id\s*\(\s*(0[xX][0-9a-fA-F]+|\d+)\s*\)$")

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}
_SCOPES = {
    "TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
    "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
    "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY,
}


class P4InfoBuildError(ValueError):
    """The program cannot be described in P4Info (bad or duplicate @id, ...)."""


def jenkins_one_at_a_time(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash over the UTF-8 bytes, 32-bit (what p4c uses)."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def annotation_name(text: str) -> str:
    return re.match(r"@\s*([A-Za-z_][A-Za-z0-9_]*)", text).group(1) if text.startswith("@") else ""


def id_annotation(annotations: list[str]) -> int | None:
    for text in annotations:
        if annotation_name(text) == "id":
            m = _ID_ANNOTATION.match(text.strip())
            if not m:
                raise P4InfoBuildError(f"{text}: @id needs one unsigned integer argument")
            return int(m.group(1), 0)
    return None


def is_hidden(annotations: list[str]) -> bool:
    return any(annotation_name(a) == "hidden" for a in annotations)


def serialized_annotations(annotations: list[str]) -> list[str]:
    return [
        a
        for a in annotations
        if annotation_name(a) not in _NOT_SERIALIZED and not _STRUCTURED.match(a)
    ]


# A structured annotation as the front end leaves it, its values folded to literals:
# `@a[1, "s", true]` or `@a[k=1, l="s"]`.
_STRUCTURED = re.compile(r"^@\s*([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]$", re.DOTALL)
_STRUCTURED_ITEM = re.compile(
    r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)=)?("(?:[^"\\]|\\.)*"|true|false|-?\d+)\s*(?:,|$)'
)


def add_annotations(msg, annotations: list[str]) -> None:
    """`annotations` and `structured_annotations` (p4types.proto) of a P4Info message."""
    msg.annotations.extend(serialized_annotations(annotations))
    for text in annotations:
        m = _STRUCTURED.match(text)
        if not m:
            continue
        sa = msg.structured_annotations.add(name=m.group(1))
        sa.expression_list.SetInParent()
        for key, literal in _STRUCTURED_ITEM.findall(m.group(2)):
            if key:
                pair = sa.kv_pair_list.kv_pairs.add(key=key)
                value = pair.value
            else:
                value = sa.expression_list.expressions.add()
            if literal.startswith('"'):
                value.string_value = json.loads(literal)
            elif literal in ("true", "false"):
                value.bool_value = literal == "true"
            else:
                value.int64_value = int(literal)


_DOC_ANNOTATION = re.compile(
    r'^@\s*(brief|description)\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)$', re.DOTALL
)


def set_doc(msg, annotations: list[str]) -> None:
    """@brief("...") / @description("...") become the `doc` field, as p4c does."""
    for text in annotations:
        m = _DOC_ANNOTATION.match(text.strip())
        if m:
            setattr(msg.doc, m.group(1), m.group(2).replace('\\"', '"'))


class _SuffixSet:
    """Shortest unique dot-separated suffixes (p4c's P4SymbolSuffixSet)."""

    def __init__(self) -> None:
        self._symbols: set[str] = set()
        self._counts: dict[tuple[str, ...], int] = {}

    def add(self, symbol: str) -> None:
        if symbol in self._symbols:
            return
        self._symbols.add(symbol)
        parts = symbol.split(".")
        for n in range(1, len(parts) + 1):
            suffix = tuple(parts[-n:])
            self._counts[suffix] = self._counts.get(suffix, 0) + 1

    def shortest_unique(self, symbol: str) -> str:
        parts = symbol.split(".")
        for n in range(1, len(parts) + 1):
            if self._counts[tuple(parts[-n:])] < 2:
                return ".".join(parts[-n:])
        return symbol


# p4c-barefoot's own id prefixes (bf-p4c control-plane/proto/barefoot/p4info.proto). It hashes
# a TNA extern's id under these; --p4runtime-force-std-externs then keeps the low 24 bits under
# the standard prefix (p4runtime_force_std.cpp).
_BAREFOOT_PREFIXES = {
    PREFIX_ACTION_PROFILE: 0x81,
    PREFIX_COUNTER: 0x83,
    PREFIX_DIRECT_COUNTER: 0x84,
    PREFIX_METER: 0x85,
    PREFIX_DIRECT_METER: 0x86,
    PREFIX_REGISTER: 0x8B,
    PREFIX_DIGEST: 0x8E,
    PREFIX_VALUE_SET: 0xFE,
}
BAREFOOT_PREFIX_PORT_METADATA = 0x90  # stays a Tofino `externs` entry
# What p4c's common serializer collects with its declaration (so with its @id) on TNA too.
_DECLARED = (PREFIX_ACTION, PREFIX_TABLE, PREFIX_CONTROLLER_HEADER)
TNA_ARCHS = ("tna", "t2na")


class SymbolTable:
    """Names to P4Runtime ids and aliases, computed the way p4c does.

    With a `pipe` (TNA, T2NA) the ids and aliases are p4c-barefoot's: the symbol of a table or
    an extern is `pipe.<name>` (its P4Info name is `<name>`: the converter strips the pipe),
    an action's is its name, and an extern's id is hashed under its Tofino prefix."""

    def __init__(self, pipe: str = "") -> None:
        self.pipe = pipe
        self._wanted: dict[int, dict[str, int | None]] = {}  # prefix -> name -> @id
        self._ids: dict[tuple[int, str], int] = {}
        self._suffixes = _SuffixSet()

    def symbol(self, prefix: int, name: str) -> str:
        """The name p4c hashes and suffixes for the object called `name` in P4Info."""
        if self.pipe and prefix not in (PREFIX_ACTION, PREFIX_CONTROLLER_HEADER):
            return f"{self.pipe}.{name}"
        return name

    def hash_prefix(self, prefix: int) -> int:
        """The prefix the id of a `prefix` object is hashed and checked under."""
        return _BAREFOOT_PREFIXES.get(prefix, prefix) if self.pipe else prefix

    def add(self, prefix: int, name: str, annotations: list[str] = ()) -> None:
        table = self._wanted.setdefault(prefix, {})
        if name in table:
            return  # p4c: duplicates of the same type are fine (inlined global actions)
        if self.pipe and prefix not in _DECLARED:
            annotations = ()  # p4c-barefoot adds a TNA extern by name: its @id is not seen
        table[name] = id_annotation(list(annotations))
        self._suffixes.add(self.symbol(prefix, name))

    def add_alias_only(self, name: str) -> None:
        """A symbol that has no P4Info entry but takes part in alias uniqueness."""
        self._suffixes.add(name)

    def compute(self) -> None:
        assigned: set[int] = set()
        # First the ids the program asks for, then hashed ids in p4c's order.
        for prefix, names in self._wanted.items():
            hashed = self.hash_prefix(prefix)
            for name, wanted in names.items():
                if wanted is None:
                    continue
                top = wanted & 0xFF000000
                if top and top != hashed << 24:
                    raise P4InfoBuildError(
                        f"{name}: @id {wanted:#x} has the wrong 8-bit prefix "
                        f"(expected {hashed:#04x})"
                    )
                full = (wanted & 0xFFFFFF) | (hashed << 24)
                if full in assigned:
                    raise P4InfoBuildError(f"@id {wanted} is assigned to multiple declarations")
                assigned.add(full)
                self._ids[(prefix, name)] = (prefix << 24) | (wanted & 0xFFFFFF)
        for prefix in sorted(self._wanted, key=self.hash_prefix):
            hashed = self.hash_prefix(prefix)
            unnumbered = (n for n, w in self._wanted[prefix].items() if w is None)
            for name in sorted(unnumbered, key=lambda n: self.symbol(prefix, n)):
                value = jenkins_one_at_a_time(self.symbol(prefix, name))
                while (hashed << 24) | (value & 0xFFFFFF) in assigned:
                    value = (value + 1) & 0xFFFFFFFF
                assigned.add((hashed << 24) | (value & 0xFFFFFF))
                self._ids[(prefix, name)] = (prefix << 24) | (value & 0xFFFFFF)

    def id(self, prefix: int, name: str) -> int:
        return self._ids[(prefix, name)]

    def alias(self, prefix: int, name: str) -> str:
        return self._suffixes.shortest_unique(self.symbol(prefix, name))


def _field_ids(annotation_lists: list[list[str]]) -> list[int]:
    """p4c's FieldIdAllocator: @id first, the rest 1..n by position, skipping used ids."""
    explicit = [id_annotation(a) for a in annotation_lists]
    used = {i for i in explicit if i is not None}
    if 0 in used:
        raise P4InfoBuildError("0 is not a valid @id value")
    if len(used) != len([i for i in explicit if i is not None]):
        raise P4InfoBuildError("an @id is used multiple times among fields of one object")
    ids, index = [], 1
    for wanted in explicit:
        if wanted is not None:
            ids.append(wanted)
            index += 1
            continue
        while index in used:
            index += 1
        ids.append(index)
        used.add(index)
    return ids


def argument_bytes(value: int, bitwidth: int) -> bytes:
    """An initial_default_action argument as p4c writes it: big-endian over the parameter's
    whole width in bytes (not P4Runtime's canonical, shortest form); negative values in
    two's complement of the width."""
    value &= (1 << bitwidth) - 1 if bitwidth else 0
    return value.to_bytes(max(1, (bitwidth + 7) // 8), "big")


def _bitstring(spec, width: int) -> None:
    spec.bitstring.bit.bitwidth = width


def build_symbols(model: ProgramModel) -> SymbolTable:
    symbols = SymbolTable(model.pipe if model.arch in TNA_ARCHS else "")
    for action in model.actions:
        symbols.add(PREFIX_ACTION, action.name, action.annotations)
    for table in model.tables:
        symbols.add(PREFIX_TABLE, table.name, table.annotations)
    for counter in model.counters:
        prefix = PREFIX_DIRECT_COUNTER if counter.direct_table else PREFIX_COUNTER
        symbols.add(prefix, counter.name, counter.annotations)
    for meter in model.meters:
        prefix = PREFIX_DIRECT_METER if meter.direct_table else PREFIX_METER
        symbols.add(prefix, meter.name, meter.annotations)
    for register in model.registers:
        symbols.add(PREFIX_REGISTER, register.name, register.annotations)
    for value_set in model.value_sets:
        symbols.add(PREFIX_VALUE_SET, value_set.name, value_set.annotations)
    for header in model.controller_headers:
        symbols.add(PREFIX_CONTROLLER_HEADER, header.type_name or header.name, header.annotations)
    for digest in model.digests:
        symbols.add(PREFIX_DIGEST, digest.name)
    for profile in model.action_profiles:
        symbols.add(PREFIX_ACTION_PROFILE, profile.name, profile.annotations)
    if symbols.pipe:
        symbols.add(BAREFOOT_PREFIX_PORT_METADATA, port_metadata_name(model))
        for name in model.unlisted_externs:  # bf-p4c's symbols, dropped but aliased
            symbols.add_alias_only(f"{symbols.pipe}.{name}")
        for value_set in model.value_sets:  # p4c's own symbol beside bf-p4c's `pipe.` one
            symbols.add_alias_only(value_set.name)
    symbols.compute()
    return symbols


def port_metadata_name(model: ProgramModel) -> str:
    """p4c-barefoot's PortMetadata extern of a TNA program: one per ingress parser."""
    return f"{model.ingress_parser}.$PORT_METADATA"


def _preamble(
    msg,
    symbols: SymbolTable,
    prefix: int,
    name: str,
    annotations: list[str],
    shown_name: str | None = None,
) -> None:
    msg.preamble.id = symbols.id(prefix, name)
    msg.preamble.name = shown_name or name
    msg.preamble.alias = shown_name or symbols.alias(prefix, name)
    add_annotations(msg.preamble, annotations)
    set_doc(msg.preamble, annotations)


def _add_pkg_info(info: p4info_pb2.P4Info, model: ProgramModel) -> None:
    """The architecture, then what main's @pkginfo says (its `arch` wins, as in p4c), its
    @platform_property and its other annotations."""
    pkg = info.pkg_info
    pkg.arch = model.arch
    for key, value in model.package.fields.items():
        setattr(pkg, key, value)
    for key, value in model.package.platform_properties.items():
        setattr(pkg.platform_properties, key, value)
    add_annotations(pkg, model.package.annotations)
    set_doc(pkg, model.package.annotations)


def generate(model: ProgramModel) -> p4info_pb2.P4Info:
    """The P4Info message for `model`, as p4c-bm2-ss writes it for v1model and p4c-barefoot
    with --p4runtime-force-std-externs for TNA/T2NA. Raises P4InfoBuildError for bad @id
    annotations."""
    symbols = build_symbols(model)
    info = p4info_pb2.P4Info()
    _add_pkg_info(info, model)
    info.type_info.SetInParent()  # cleared at the end when p4c would not write it
    _add_tables(info, model, symbols)
    _add_actions(info, model, symbols)
    _add_counters(info, model, symbols)
    _add_meters(info, model, symbols)
    _add_controller_headers(info, model, symbols)
    _add_registers(info, model, symbols)
    _add_value_sets(info, model, symbols)
    _add_digests(info, model, symbols)
    _add_action_profiles(info, model, symbols)
    if symbols.pipe:
        _add_port_metadata(info, model, symbols)
    _add_type_info(info, model)
    return info


def _add_tables(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    action_by_name = {a.name: a for a in model.actions}
    counter_names = {c.name for c in model.counters}
    meter_names = {m.name for m in model.meters}
    for table in model.tables:
        if is_hidden(table.annotations):
            continue
        t = info.tables.add()
        _preamble(t, symbols, PREFIX_TABLE, table.name, table.annotations)
        for key, fid in zip(table.keys, _field_ids([k.annotations for k in table.keys])):
            mf = t.match_fields.add(
                id=fid,
                name=key.name,
                bitwidth=0 if key.is_error else sdn_width(model, key),
                match_type=_MATCH_TYPES[key.match_kind],
            )
            if key.is_error:  # p4c: no width, the error members in type_info
                info.type_info.error.members[:] = model.errors
            if key.type_name:
                mf.type_name.name = key.type_name
            add_annotations(mf, key.annotations)
            set_doc(mf, key.annotations)
        for ref in table.actions:
            ar = t.action_refs.add(id=symbols.id(PREFIX_ACTION, ref.name), scope=_SCOPES[ref.scope])
            add_annotations(ar, ref.annotations)
        if table.const_default_action:
            t.const_default_action_id = symbols.id(PREFIX_ACTION, table.default_action)
        _set_initial_default_action(t, table, action_by_name.get(table.default_action), symbols)
        if table.direct_counter in counter_names:
            t.direct_resource_ids.append(symbols.id(PREFIX_DIRECT_COUNTER, table.direct_counter))
        if table.direct_meter in meter_names:
            t.direct_resource_ids.append(symbols.id(PREFIX_DIRECT_METER, table.direct_meter))
        if table.implementation:
            t.implementation_id = symbols.id(PREFIX_ACTION_PROFILE, table.implementation)
        t.size = table.size
        if table.support_timeout:
            t.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if table.const_entries is not None:
            t.is_const_table = True
        if table.const_entries or table.initial_entries:
            t.has_initial_entries = True  # p4c: const entries are initial entries too


def _set_initial_default_action(t, table, action, symbols: SymbolTable) -> None:
    """P4Runtime 1.4: the default action the table starts with, const or not."""
    default = t.initial_default_action
    default.action_id = symbols.id(PREFIX_ACTION, table.default_action)
    params = action.params if action is not None else []
    for param, pid in zip(params, _field_ids([p.annotations for p in params])):
        if param.name in table.default_args:
            value = table.default_args[param.name]
            default.arguments.add(param_id=pid, value=argument_bytes(value, param.bitwidth))


def _add_actions(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for action in model.actions:
        if is_hidden(action.annotations):
            continue
        a = info.actions.add()
        _preamble(a, symbols, PREFIX_ACTION, action.name, action.annotations)
        for param, pid in zip(action.params, _field_ids([p.annotations for p in action.params])):
            p = a.params.add(
                id=pid, name=param.control_name or param.name, bitwidth=sdn_width(model, param)
            )
            if param.type_name:
                p.type_name.name = param.type_name
            add_annotations(p, param.annotations)
            set_doc(p, param.annotations)


def _add_counters(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for counter in model.counters:
        # p4c lists a direct counter only with the table it counts
        if is_hidden(counter.annotations) or (counter.direct and not counter.direct_table):
            continue
        if counter.direct_table:
            c = info.direct_counters.add()
            _preamble(c, symbols, PREFIX_DIRECT_COUNTER, counter.name, counter.annotations)
            c.direct_table_id = symbols.id(PREFIX_TABLE, counter.direct_table)
        else:
            c = info.counters.add()
            _preamble(c, symbols, PREFIX_COUNTER, counter.name, counter.annotations)
            c.size = counter.size
        c.spec.unit = _COUNTER_UNITS[counter.unit]


def _add_meters(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for meter in model.meters:
        if is_hidden(meter.annotations) or (meter.direct and not meter.direct_table):
            continue
        if meter.direct_table:
            m = info.direct_meters.add()
            _preamble(m, symbols, PREFIX_DIRECT_METER, meter.name, meter.annotations)
            m.direct_table_id = symbols.id(PREFIX_TABLE, meter.direct_table)
        else:
            m = info.meters.add()
            _preamble(m, symbols, PREFIX_METER, meter.name, meter.annotations)
            m.size = meter.size
        m.spec.unit = _METER_UNITS[meter.unit]


def _add_controller_headers(
    info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable
) -> None:
    for header in model.controller_headers:
        if is_hidden(header.annotations):
            continue
        h = info.controller_packet_metadata.add()
        _preamble(
            h,
            symbols,
            PREFIX_CONTROLLER_HEADER,
            header.type_name or header.name,
            header.annotations,
            shown_name=header.name,
        )
        for fld, fid in zip(header.fields, _field_ids([f.annotations for f in header.fields])):
            md = h.metadata.add(id=fid, name=fld.name, bitwidth=sdn_width(model, fld))
            if fld.type_name:
                md.type_name.name = fld.type_name
            add_annotations(md, fld.annotations)


def _add_registers(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for register in model.registers:
        if is_hidden(register.annotations):
            continue
        r = info.registers.add()
        _preamble(r, symbols, PREFIX_REGISTER, register.name, register.annotations)
        if register.type_name:
            r.type_spec.serializable_enum.name = register.type_name
        else:
            _bitstring(r.type_spec, register.bitwidth)
        r.size = register.size


def _add_value_sets(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for value_set in model.value_sets:
        if is_hidden(value_set.annotations):
            continue
        v = info.value_sets.add()
        _preamble(v, symbols, PREFIX_VALUE_SET, value_set.name, value_set.annotations)
        if symbols.pipe:
            v.size = value_set.size  # bf-p4c's converter keeps no match fields
            continue
        for fid, fld in enumerate(value_set.fields, 1):
            m = v.match.add(id=fid, bitwidth=fld.bitwidth, match_type=_MATCH_TYPES[fld.match_kind])
            m.name = fld.name  # p4c: no name when the value set's type is bit<W>
        v.size = value_set.size


def _add_digests(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    for digest in model.digests:
        d = info.digests.add()
        _preamble(d, symbols, PREFIX_DIGEST, digest.name, [])
        if digest.is_tuple:
            for fld in digest.fields:
                _bitstring(d.type_spec.tuple.members.add(), fld.bitwidth)
            continue
        d.type_spec.struct.name = digest.name
        struct = info.type_info.structs[digest.name]
        for fld in digest.fields:
            member = struct.members.add(name=fld.name).type_spec
            if fld.type_name:
                member.new_type.name = fld.type_name
            else:
                _bitstring(member, fld.bitwidth)


def _add_action_profiles(
    info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable
) -> None:
    for profile in model.action_profiles:
        ap = info.action_profiles.add()
        _preamble(ap, symbols, PREFIX_ACTION_PROFILE, profile.name, profile.annotations)
        # p4c keeps a profile's tables in a set of names: listed in name order
        ap.table_ids.extend(symbols.id(PREFIX_TABLE, t) for t in sorted(profile.tables))
        ap.with_selector = profile.with_selector
        ap.size = profile.size
        ap.max_group_size = profile.max_group_size
        if profile.size_semantics == "sum_of_weights":
            ap.sum_of_weights.SetInParent()
        elif profile.size_semantics == "sum_of_members":
            ap.sum_of_members.max_member_weight = profile.max_member_weight
            ap.sum_of_members.SetInParent()


def _add_port_metadata(info: p4info_pb2.P4Info, model: ProgramModel, symbols: SymbolTable) -> None:
    """The one Tofino extern p4c-barefoot keeps with --p4runtime-force-std-externs: the port
    metadata of the ingress parser, its content replaced by the phase-0 table's key name."""
    extern = info.externs.add(
        extern_type_id=BAREFOOT_PREFIX_PORT_METADATA, extern_type_name="PortMetadata"
    )
    instance = extern.instances.add()
    name = port_metadata_name(model)
    instance.preamble.id = symbols.id(BAREFOOT_PREFIX_PORT_METADATA, name)
    instance.preamble.name = name
    instance.preamble.alias = symbols.alias(BAREFOOT_PREFIX_PORT_METADATA, name)
    instance.info.type_url = "type.googleapis.com/barefoot.PortMetadata"
    instance.info.value = b"ig_intr_md.ingress_port"


def sdn_width(model: ProgramModel, field) -> int:
    """The width P4Info gives a key, parameter or metadata field: its own, or the control
    plane's of a translated `type` (0, no width, for a string). p4sim's P4Runtime server
    does not translate: it takes and gives the data plane's values, which must fit both."""
    new_type = model.new_types.get(field.type_name or "")
    if new_type is not None and new_type[0] == "translated":
        return new_type[2] or 0
    return field.bitwidth


def _add_type_info(info: p4info_pb2.P4Info, model: ProgramModel) -> None:
    for name, (width, members) in sorted(model.serializable_enums.items()):
        enum = info.type_info.serializable_enums[name]
        enum.underlying_type.bitwidth = width
        for member, value in members:
            enum.members.add(name=member, value=value.to_bytes((width + 7) // 8, "big"))
    for name, (kind, *rest) in sorted(model.new_types.items()):
        info.type_info.new_types[name].annotations.extend(model.new_type_annotations.get(name, []))
        if kind == "translated":  # P4Runtime spec 8.3; p4sim's server does not translate
            uri, width = rest
            translated = info.type_info.new_types[name].translated_type
            translated.uri = uri
            if width is None:
                translated.sdn_string.SetInParent()
            else:
                translated.sdn_bitwidth = width
            continue
        original = info.type_info.new_types[name].original_type
        if kind == "bool":
            original.bool.SetInParent()
        else:
            getattr(original.bitstring, kind).bitwidth = rest[0]
    # p4c creates type_info (maybe empty) when it serializes a table or an extern instance
    # or meets an extern function call; a program with none of these has no type_info.
    # p4c-barefoot does for every extern instance, a Checksum or a Hash as well.
    if not (
        info.type_info.ListFields()
        or info.tables
        or model.registers
        or model.counters
        or model.meters
        or model.extern_functions
        or model.action_profiles
        or (model.arch in TNA_ARCHS and model.extern_instances)
        or any(h.has_struct_field for h in model.controller_headers)
    ):
        info.ClearField("type_info")


# ---------------------------------------------------------------------------
# Files, with p4c's suffix rule (--p4runtime-files): .txt text, .json JSON, .bin binary.
# ---------------------------------------------------------------------------

P4INFO_FORMATS = {".txt": "text", ".txtpb": "text", ".json": "json", ".bin": "binary"}


def p4info_format(path: str | Path) -> str:
    suffix = Path(path).suffix
    try:
        return P4INFO_FORMATS[suffix]
    except KeyError:
        raise P4InfoBuildError(
            f"{path}: cannot tell the P4Info format from the suffix "
            f"{suffix or '(none)'}; use one of {', '.join(P4INFO_FORMATS)}"
        ) from None


def serialize(info: p4info_pb2.P4Info, fmt: str) -> bytes:
    if fmt == "text":
        return text_format.MessageToString(info).encode()
    if fmt == "json":
        return json_format.MessageToJson(info).encode()
    if fmt == "binary":
        return info.SerializeToString()
    raise P4InfoBuildError(f"unknown P4Info format {fmt!r}; use text, json or binary")


def write(info: p4info_pb2.P4Info, path: str | Path) -> None:
    Path(path).write_bytes(serialize(info, p4info_format(path)))


def parse(data: bytes, fmt: str) -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    if fmt == "text":
        text_format.Parse(data.decode(), info)
    elif fmt == "json":
        json_format.Parse(data.decode(), info)
    else:
        info.ParseFromString(data)
    return info

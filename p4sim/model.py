"""The program model: what a compiled P4 program exposes to the control plane.

This module is the contract between p4sim's two halves:
- the language half (front end + engine + v1model) produces a `ProgramModel` from the
  source and implements the runtime objects (`TableState`, `RegisterState`, ...);
- the control half (P4Info generation, P4Runtime server, packet I/O) reads the model and
  drives the runtime objects. It never looks at the IR.

Names are fully qualified the way p4c names P4Info objects (`Ingress.ue_table`,
`Ingress.split_dc`, `NoAction`), after @name annotations are applied. Match-field names
are the key's @name, else the key expression's source text (`hdr.ipv4.dst_addr`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# Match kinds as P4Info spells them (lower case here; P4Info uses EXACT, LPM, ...).
MATCH_KINDS = ("exact", "lpm", "ternary", "range", "optional")


class ControlPlaneError(Exception):
    """Base for errors the control half maps to P4Runtime status codes."""


class EntryExists(ControlPlaneError):
    """INSERT of an entry whose match key (and priority) is already present: ALREADY_EXISTS."""


class EntryNotFound(ControlPlaneError):
    """MODIFY/DELETE/read of an absent entry: NOT_FOUND."""


class InvalidEntry(ControlPlaneError):
    """Malformed entry (wrong width, bad mask, unknown action, action not allowed): INVALID_ARGUMENT."""


class TableFull(ControlPlaneError):
    """Table at its declared size: RESOURCE_EXHAUSTED."""


class NoMemory(ControlPlaneError, MemoryError):
    """An engine could not allocate what a write or a load needs (the native engine's C
    state): RESOURCE_EXHAUSTED; the table is left as it was."""


class ConstViolation(ControlPlaneError):
    """Write to a const default action or to a table with const entries: PERMISSION_DENIED."""


class InUse(ControlPlaneError):
    """DELETE of an action profile member or group that a group or a table entry still
    refers to: FAILED_PRECONDITION."""


# ---------------------------------------------------------------------------
# Static description (P4Info is generated from this)
# ---------------------------------------------------------------------------


@dataclass
class MatchFieldDef:
    name: str  # P4Info name (see module doc)
    bitwidth: int
    match_kind: str  # one of MATCH_KINDS
    annotations: list[str] = field(default_factory=list)  # raw text, e.g. '@defaultonly'
    is_error: bool = False  # of type error: P4Info gives no bitwidth (type_info lists errors)
    type_name: str = ""  # the `type` it has, if any (P4Info type_name, type_info.new_types)


@dataclass
class ParamDef:
    name: str
    bitwidth: int
    annotations: list[str] = field(default_factory=list)
    control_name: str = ""  # the name P4Info gives it (its @name), when not `name`
    type_name: str = ""  # the `type` it has, if any (P4Info type_name, type_info.new_types)


@dataclass
class ActionDef:
    name: str  # fully qualified, e.g. "Ingress.split_dc"; global actions unqualified ("NoAction")
    params: list[ParamDef]  # directionless parameters only (the control-plane arguments)
    annotations: list[str] = field(default_factory=list)


@dataclass
class ActionRefDef:
    name: str
    scope: str = "TABLE_AND_DEFAULT"  # or "TABLE_ONLY" (@tableonly), "DEFAULT_ONLY" (@defaultonly)
    annotations: list[str] = field(default_factory=list)


#: the match kinds that give a table's entries priorities (P4Runtime; p4c's EntryPriorities)
PRIORITY_MATCH_KINDS = ("ternary", "range", "optional")


@dataclass
class ConstEntryDef:
    """One entry of a table's `const entries` / `entries` list, already evaluated."""

    match: dict[str, FieldMatch]
    action: str
    args: dict[str, int]
    priority: int  # P4Runtime's (larger wins), as BMv2 orders the entry; 0 without priorities
    is_const: bool = False  # `const` on this entry of a non-const `entries` list


@dataclass
class TableDef:
    name: str
    keys: list[MatchFieldDef]
    actions: list[ActionRefDef]
    size: int  # declared size, or 1024 (BMv2's default) when absent
    default_action: str  # action name
    default_args: dict[str, int]
    const_default_action: bool
    const_entries: list[ConstEntryDef] | None  # None when the table has no const entries
    direct_counter: str | None = None  # name of the direct_counter attached via `counters =`
    direct_meter: str | None = None
    annotations: list[str] = field(default_factory=list)
    # `entries = {...}` without `const`: installed when the device starts, then ordinary
    # entries the control plane may modify or delete (P4_16 1.2.4; P4Info has_initial_entries)
    initial_entries: list[ConstEntryDef] = field(default_factory=list)
    # `implementation = <action_profile or action_selector>`: the ActionProfileDef's name.
    # Entries then hold a member or group id instead of an action (an "indirect" table).
    implementation: str | None = None
    # `support_timeout = true` (v1model; TNA: idle_timeout): P4Info's NOTIFY_CONTROL, entries
    # with idle timeouts (p4sim.p4runtime.idle_timeouts); the engines count their hits
    support_timeout: bool = False

    @property
    def needs_priority(self) -> bool:
        """P4Runtime requires a priority when any key is ternary, range or optional."""
        return any(k.match_kind in PRIORITY_MATCH_KINDS for k in self.keys)


@dataclass
class RegisterDef:
    name: str
    size: int
    bitwidth: int  # width of the element type bit<W>
    annotations: list[str] = field(default_factory=list)
    initial_value: int = 0  # what a cell never written reads (TNA's Register(size, initial))
    type_name: str = ""  # a serializable enum's name when the element type is one (P4Info)


@dataclass
class CounterDef:
    name: str
    size: int  # 0 for direct counters
    unit: str  # "packets", "bytes", "packets_and_bytes"
    direct_table: str | None = None  # set for direct_counter
    annotations: list[str] = field(default_factory=list)
    direct: bool = False  # a direct_counter, attached to a table (direct_table) or not


@dataclass
class MeterDef:
    name: str
    size: int
    unit: str  # "packets" or "bytes"
    direct_table: str | None = None
    annotations: list[str] = field(default_factory=list)
    direct: bool = False  # a direct_meter, attached to a table (direct_table) or not


@dataclass
class ActionProfileDef:
    """An `action_profile(size)` or `action_selector(algorithm, size, outputWidth)` used as
    the implementation of one or more tables (P4Info `action_profiles`)."""

    name: str
    size: int  # members the profile holds
    with_selector: bool
    tables: list[str]  # the tables it implements, in declaration order
    algorithm: str = ""  # selectors: the HashAlgorithm member
    max_group_size: int = 0  # @max_group_size; 0 = no limit declared
    size_semantics: str = ""  # @selector_size_semantics: "sum_of_weights" / "sum_of_members"
    max_member_weight: int = 0  # @max_member_weight (with sum_of_members)
    annotations: list[str] = field(default_factory=list)


@dataclass
class ControllerHeaderDef:
    """A header type annotated @controller_header("packet_in" | "packet_out")."""

    name: str  # "packet_in" or "packet_out"
    # in declaration order (P4Info ids 1..n); a struct field's fields in its place, named
    # by their path ("s.f"), as p4c flattens them
    fields: list[ParamDef]
    annotations: list[str] = field(default_factory=list)
    # The header type's fully qualified name (e.g. "packet_in_header_t"): p4c hashes it,
    # not `name`, for the P4Info id, and it takes part in alias computation. "" = use `name`.
    type_name: str = ""
    has_struct_field: bool = False  # p4c then writes type_info (empty)


@dataclass
class ValueSetDef:
    """A parser value set (`value_set<T>(size)`): members the control plane writes, each a
    match on every field of T (one unnamed field when T is bit<W>)."""

    name: str
    fields: list[MatchFieldDef]
    size: int
    annotations: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[MatchFieldDef]:  # as TableDef's, for the shared match decoding
        return self.fields


@dataclass
class DigestDef:
    name: str  # the struct type name p4c uses; digest_0, ... for a list (p4c's auto names)
    fields: list[ParamDef]
    is_tuple: bool = False  # sends a list: P4Info's type_spec and P4Data are tuples


@dataclass
class PackageInfo:
    """What `main`'s annotations give P4Info's pkg_info, as p4c reads them."""

    fields: dict[str, str] = field(default_factory=dict)  # @pkginfo: name, version, url, ...
    platform_properties: dict[str, int] = field(default_factory=dict)  # @platform_property
    annotations: list[str] = field(default_factory=list)  # main's other annotations


@dataclass
class ProgramModel:
    tables: list[TableDef]
    actions: list[ActionDef]
    registers: list[RegisterDef]
    counters: list[CounterDef]  # indirect and direct
    meters: list[MeterDef]  # indirect and direct
    controller_headers: list[ControllerHeaderDef]
    digests: list[DigestDef] = field(default_factory=list)
    arch: str = "v1model"
    extern_functions: list[str] = field(default_factory=list)  # called: mark_to_drop, hash...
    # serializable enums that key a table or type an action parameter:
    # name -> (bit width, [(member, value), ...]) (P4Info type_info)
    serializable_enums: dict[str, tuple[int, list[tuple[str, int]]]] = field(default_factory=dict)
    # `type`s the control plane sees (type_info): name -> ("bit" | "int" | "bool", width), or
    # ("translated", uri, the control plane's width or None for a string)
    new_types: dict[str, tuple] = field(default_factory=dict)
    new_type_annotations: dict[str, list[str]] = field(default_factory=dict)  # their other ones
    errors: list[str] = field(default_factory=list)  # the error members, in value order
    action_profiles: list[ActionProfileDef] = field(default_factory=list)
    value_sets: list[ValueSetDef] = field(default_factory=list)
    pipe: str = ""  # TNA: the Pipeline instance's name (p4c-barefoot hashes P4Info ids with it)
    ingress_parser: str = ""  # TNA: the ingress parser's name (names its $PORT_METADATA)
    # TNA: the Hash and DirectRegister instances, p4c-barefoot symbols without a P4Info
    # entry (with --p4runtime-force-std-externs) that still count in aliases
    unlisted_externs: list[str] = field(default_factory=list)
    extern_instances: list[str] = field(default_factory=list)  # every one, of every kind
    package: PackageInfo = field(default_factory=PackageInfo)


# ---------------------------------------------------------------------------
# Runtime objects (implemented by the engine, driven by the P4Runtime server)
# ---------------------------------------------------------------------------


@dataclass
class FieldMatch:
    """One key field of an entry. Omitted fields of ternary/lpm/range/optional keys are
    wildcards; exact keys can never be omitted."""

    kind: str  # one of MATCH_KINDS
    value: int = 0  # exact, lpm, ternary, optional
    mask: int | None = None  # ternary
    prefix_len: int | None = None  # lpm
    low: int | None = None  # range
    high: int | None = None  # range


@dataclass
class TableEntry:
    match: dict[str, FieldMatch]  # by MatchFieldDef.name
    action: str
    args: dict[str, int]  # by ParamDef.name
    priority: int = 0  # P4Runtime semantics: larger wins; 0 for tables without priority
    packets: int = 0  # direct counter, if the table has one
    bytes: int = 0
    meter_config: tuple[int, int, int, int] | None = None  # cir, cburst, pir, pburst
    controller_metadata: int = 0
    metadata: bytes = b""
    is_const: bool = False
    # Indirect tables (TableDef.implementation): the entry names an action profile member
    # or group instead of an action (then `action` is "" and `args` empty), or carries a
    # one-shot action set [(action, args, weight)] for which the profile makes a group.
    member_id: int | None = None
    group_id: int | None = None
    action_set: list[tuple[str, dict[str, int], int]] | None = None
    # Tables with idle timeouts (TableDef.support_timeout; p4sim.p4runtime.idle_timeouts):
    # the entry's timeout (0: none), when it was last seen hit (time.monotonic_ns), the hit
    # count (`packets`) then, and whether its expiry was notified since.
    idle_timeout_ns: int = 0
    last_hit_ns: int = 0
    hits_seen: int = 0
    idle_notified: bool = False


class TableState(Protocol):
    definition: TableDef

    def insert(
        self, entry: TableEntry
    ) -> None: ...  # EntryExists, InvalidEntry, TableFull, ConstViolation

    def modify(self, entry: TableEntry) -> None: ...  # EntryNotFound, InvalidEntry; keeps counters

    def delete(self, entry: TableEntry) -> None: ...  # EntryNotFound (only match+priority are used)

    def find(self, match: dict[str, FieldMatch], priority: int) -> TableEntry | None: ...

    def entries(self) -> list[TableEntry]: ...

    def default_entry(self) -> TableEntry: ...  # match == {}

    def set_default(
        self, action: str, args: dict[str, int]
    ) -> None: ...  # ConstViolation, InvalidEntry

    def reset_default(self) -> None: ...  # back to the program's default action

    def clear(self) -> None: ...  # drop all non-const entries, reset default


@dataclass
class ProfileMember:
    member_id: int
    action: str
    args: dict[str, int]


@dataclass
class ProfileGroup:
    group_id: int
    members: dict[int, int]  # member id -> weight, in the order the client gave them
    max_size: int = 0


class ActionProfileState(Protocol):
    """Members and groups of one action profile or selector (P4Runtime ActionProfileMember
    and ActionProfileGroup). Errors: EntryExists, EntryNotFound, InvalidEntry, TableFull,
    InUse."""

    definition: ActionProfileDef

    def insert_member(self, member: ProfileMember) -> None: ...

    def modify_member(self, member: ProfileMember) -> None: ...

    def delete_member(self, member_id: int) -> None: ...

    def members(self) -> list[ProfileMember]: ...

    def insert_group(self, group: ProfileGroup) -> None: ...

    def modify_group(self, group: ProfileGroup) -> None: ...

    def delete_group(self, group_id: int) -> None: ...

    def groups(self) -> list[ProfileGroup]: ...


class RegisterState(Protocol):
    definition: RegisterDef

    def read(self, index: int) -> int: ...  # IndexError-> InvalidEntry by caller

    def write(self, index: int, value: int) -> None: ...


class CounterState(Protocol):
    definition: CounterDef

    def read(self, index: int) -> tuple[int, int]: ...  # (packets, bytes)

    def write(self, index: int, packets: int, bytes_: int) -> None: ...


class MeterState(Protocol):
    """An indirect meter array (two-rate three-color, RFC 2698 as in BMv2)."""

    definition: MeterDef

    def set_config(self, index: int, config: tuple[int, int, int, int] | None) -> None: ...

    def get_config(
        self, index: int
    ) -> tuple[int, int, int, int] | None: ...  # cir, cburst, pir, pburst


@dataclass
class Replica:
    egress_port: int
    instance: int  # egress_rid for multicast, 0 for clones


@dataclass
class CloneSession:
    replicas: list[Replica]
    class_of_service: int = 0
    packet_length_bytes: int = 0  # 0 = no truncation


# PRE ids. Over P4Runtime, as BMv2's server (PI) takes them: multicast groups and clone
# sessions 1..MAX_PRE_ID (PI keeps groups from 32768 up for the ones behind clone sessions;
# BMv2's mirroring sessions end at 32767). STF files may also create the other multicast
# groups v1model can select (mcast_grp is bit<16>), as BMv2's Thrift CLI does; both engines
# hold every id up to MAX_MCAST_GROUP.
MAX_PRE_ID = 32767
MAX_MCAST_GROUP = 65535


@dataclass
class ReplicationEngine:
    """The traffic manager's PRE: what P4Runtime's PacketReplicationEngineEntry writes."""

    multicast_groups: dict[int, list[Replica]] = field(default_factory=dict)
    clone_sessions: dict[int, CloneSession] = field(default_factory=dict)


class Device(Protocol):
    """One running instance of a program (engine + architecture + state).

    Thread safety: the packet path and the P4Runtime server share one device; both
    hold `lock` while they touch it, so each write is atomic for packets (the P4Runtime
    server releases it between the updates of a batch, in slices of a few milliseconds).
    """

    model: ProgramModel
    lock: object  # a threading.RLock
    cpu_port: int | None
    tables: dict[str, TableState]
    registers: dict[str, RegisterState]
    counters: dict[str, CounterState]  # indirect counters only; direct ones live on entries
    pre: ReplicationEngine
    meters: dict[str, MeterState]  # indirect and direct (direct configs live on entries)
    action_profiles: dict[str, ActionProfileState]
    # parser value sets by name: `members` (a FieldMatch per field name, each member) and
    # `write(members)`, which replaces them all (TableFull past the declared size)
    value_sets: dict
    # digest() calls of processed packets, in order: (DigestDef.name, receiver, field values
    # in DigestDef.fields order). The engine appends; the switch drains it after each packet.
    digests: list[tuple[str, int, list[int]]]

    def process(self, ingress_port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the whole v1model pipeline; return (egress_port, frame)
        for every frame that leaves (multicast and clones included). Never raises on a
        malformed frame."""
        ...


class CompiledProgram(Protocol):
    """What the front end returns (`p4sim.frontend.compile_file` / `compile_source`)."""

    model: ProgramModel
    source: str  # the preprocessed source with #line markers: p4sim's device config payload

    def new_device(self, cpu_port: int | None = None) -> Device: ...

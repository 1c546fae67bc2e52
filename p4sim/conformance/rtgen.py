"""P4Runtime request sequences generated from a P4Info, for the P4Runtime differential
(`rtdiff.py`): valid requests and the mistakes controllers make, seeded.

A sequence is a list of `Step`s: one RPC (Write, Read, SetForwardingPipelineConfig,
GetForwardingPipelineConfig, Capabilities), an arbitration on a second client's stream or
the primary's own (a re-arbitration, spec 5.2), or a message on the primary's stream: a
PacketOut or a DigestListAck (programs with controller headers and digests).
The generator remembers the entries, members, groups, multicast groups and clone sessions it
wrote (right or wrong), so later steps duplicate, modify, delete and read them. Each mistake
is one change to a valid update: unknown ids of every kind, match values that are not
canonical, too wide, or have bits outside the mask or prefix, missing and zero priorities,
an idle timeout on a table without idle timeouts, missing, extra and wrong-width action
parameters, indexes out of range, and so on.

A SetForwardingPipelineConfig step carries `DEVICE_CONFIG` in place of the device config: the
differential puts in each target's own (BMv2's JSON, p4sim's device config).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

DEVICE_CONFIG = b"rtdiff:device-config"  # replaced by each target's own config
PRIMARY_ELECTION_ID = 10  # the second client arbitrates below, equal to or above it
RPCS = (
    "Write",
    "Read",
    "SetForwardingPipelineConfig",
    "GetForwardingPipelineConfig",
    "Capabilities",
    "Arbitrate",
    "PacketOut",
    "DigestListAck",
)
STREAM_RPCS = ("PacketOut", "DigestListAck")  # a message on the primary's StreamChannel
Update = p4runtime_pb2.Update
MatchField = p4info_pb2.MatchField
FPC = p4runtime_pb2.SetForwardingPipelineConfigRequest


# The notes of the two PacketOut steps that send one digest data again (Generator.packet_out):
# rtexplain tells from them when the spec lets a server send it again.
SAME_DATA_BEFORE_ACK = "the same data twice before its ack"
SAME_DATA_AFTER_ACK = "the same data after its ack"


@dataclass
class Step:
    """One request: `rpc` (one of RPCS), the message, and who sends it: "primary", "second"
    (the client of the last Arbitrate step) or "nobody" (no election id)."""

    rpc: str
    request: object
    client: str = "primary"
    note: str = ""  # what the generator meant (a mistake's name), for the report
    times: int = 1  # a stream message sent this many times back to back


def canonical(value: int) -> bytes:
    """P4Runtime's canonical bytestring of `value`: no leading zero bytes, zero as one byte."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def nbytes(bits: int) -> int:
    return max(1, (bits + 7) // 8)


class RequestGenerator:
    """Steps for one program's P4Info from a seeded random source."""

    def __init__(self, info: p4info_pb2.P4Info, rng: random.Random, stream: bool = False) -> None:
        """`stream`: the program sends every frame back to the controller, so that steps on
        the primary's stream (PacketOut, DigestListAck, its re-arbitration) can be compared
        up to a marker PacketOut's PacketIn (runtime_stream.p4)."""
        self.info = info
        self.rng = rng
        self.actions = {a.preamble.id: a for a in info.actions}
        self.profiles = {p.preamble.id: p for p in info.action_profiles}
        self.entries: list[p4runtime_pb2.TableEntry] = []
        self.members: list[p4runtime_pb2.ActionProfileMember] = []
        self.groups: list[int] = []
        self.second_election_id = 0
        self.highest_second_election_id = 0  # every second client's stream stays open
        self.primary_election_id = PRIMARY_ELECTION_ID  # the primary may re-arbitrate higher
        packet_out = [m for m in info.controller_packet_metadata if m.preamble.name == "packet_out"]
        self.packet_out_header = packet_out[0] if packet_out and stream else None
        self.value_sets = list(info.value_sets)
        self.digests = list(info.digests)
        # each PacketOut's own tag, from a start of this sequence's: no digest repeats one
        # of an earlier sequence that a switch may still hold unacknowledged (ack_timeout_ns)
        self.tag = rng.randrange(1 << 30) if stream else 0
        self.next_steps: list[Step] = []  # steps that must follow the one just made

    # -- values ----------------------------------------------------------------------------
    def number(self, bits: int) -> int:
        """Mostly from a small pool, so that entries collide."""
        pool = [0, 1, 2, 5, (1 << bits) - 1]
        if self.rng.random() < 0.3:
            return self.rng.getrandbits(bits)
        return self.rng.choice(pool) & ((1 << bits) - 1)

    def unknown_id(self) -> int:
        return self.rng.choice([0, 1, 0x01FFFFFF, 0x02000001, 0x7FFFFFFF])

    # -- table entries -----------------------------------------------------------------------
    def field_match(self, field: p4info_pb2.MatchField) -> p4runtime_pb2.FieldMatch | None:
        """A valid match on `field`, or None for a don't-care (left out, as the spec asks)."""
        bits, kind = field.bitwidth, field.match_type
        fm = p4runtime_pb2.FieldMatch(field_id=field.id)
        if kind == MatchField.EXACT:
            fm.exact.value = canonical(self.number(bits))
        elif kind == MatchField.LPM:
            prefix = self.rng.choice([0, bits // 2, bits, self.rng.randint(1, bits)])
            if prefix == 0:
                return None
            mask = ((1 << prefix) - 1) << (bits - prefix)
            fm.lpm.value = canonical(self.number(bits) & mask)
            fm.lpm.prefix_len = prefix
        elif kind == MatchField.TERNARY:
            mask = self.number(bits)
            if mask == 0:
                return None
            fm.ternary.value = canonical(self.number(bits) & mask)
            fm.ternary.mask = canonical(mask)
        elif kind == MatchField.RANGE:
            low, high = sorted((self.number(bits), self.number(bits)))
            if low == 0 and high == (1 << bits) - 1:
                return None
            fm.range.low, fm.range.high = canonical(low), canonical(high)
        elif kind == MatchField.OPTIONAL:
            if self.rng.random() < 0.3:
                return None
            fm.optional.value = canonical(self.number(bits))
        else:
            return None
        return fm

    @staticmethod
    def needs_priority(table: p4info_pb2.Table) -> bool:
        kinds = {MatchField.TERNARY, MatchField.RANGE, MatchField.OPTIONAL}
        return any(f.match_type in kinds for f in table.match_fields)

    def action(self, table: p4info_pb2.Table, default: bool = False) -> p4runtime_pb2.Action:
        scope = (
            p4info_pb2.ActionRef.DEFAULT_ONLY if not default else p4info_pb2.ActionRef.TABLE_ONLY
        )
        refs = [r for r in table.action_refs if r.scope != scope] or list(table.action_refs)
        action = self.actions[self.rng.choice(refs).id]
        msg = p4runtime_pb2.Action(action_id=action.preamble.id)
        for p in action.params:
            msg.params.add(param_id=p.id, value=canonical(self.number(p.bitwidth)))
        return msg

    def table_action(self, table: p4info_pb2.Table, entry: p4runtime_pb2.TableEntry) -> None:
        """The entry's action: direct, or a member, group or one-shot set on an indirect table."""
        if not table.implementation_id:
            entry.action.action.CopyFrom(self.action(table))
            return
        members = [m for m in self.members if m.action_profile_id == table.implementation_id]
        r = self.rng.random()
        if r < 0.5 and members:
            entry.action.action_profile_member_id = self.rng.choice(members).member_id
        elif r < 0.75 and self.groups:
            entry.action.action_profile_group_id = self.rng.choice(self.groups)
        else:
            one = entry.action.action_profile_action_set.action_profile_actions.add(weight=1)
            one.action.CopyFrom(self.action(table))

    def table_entry(self, table: p4info_pb2.Table) -> p4runtime_pb2.TableEntry:
        entry = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
        for field in table.match_fields:
            fm = self.field_match(field)
            if fm is not None:
                entry.match.append(fm)
        if self.needs_priority(table):
            entry.priority = self.rng.choice([1, 2, 10, 1000])
        self.table_action(table, entry)
        if table.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL:
            entry.idle_timeout_ns = self.rng.choice([0, 10**9, 60 * 10**9])
        return entry

    def entry_mistake(self, entry: p4runtime_pb2.TableEntry, table) -> str:
        """One mistake made to a valid entry; its name."""
        options = ["table id", "priority missing or extra", "action id", "param"]
        if entry.match:
            options += ["field id", "value width", "not canonical", "duplicate field", "kind"]
            options += ["empty value"]
        kinds = {m.WhichOneof("field_match_type") for m in entry.match}
        options += ["outside mask"] * ("ternary" in kinds) + ["outside prefix"] * ("lpm" in kinds)
        options += ["range inverted"] * ("range" in kinds) + ["prefix too long"] * ("lpm" in kinds)
        options += ["mask zero"] * ("ternary" in kinds)
        if any(f.match_type == MatchField.EXACT for f in table.match_fields):
            options.append("exact missing")
        if table.idle_timeout_behavior != p4info_pb2.Table.NOTIFY_CONTROL:
            options.append("idle timeout")
        mistake = self.rng.choice(options)
        fields = {f.id: f for f in table.match_fields}
        fm = self.rng.choice(entry.match) if entry.match else None
        kind = fm.WhichOneof("field_match_type") if fm else None
        if mistake == "table id":
            entry.table_id = self.unknown_id()
        elif mistake == "priority missing or extra":
            entry.priority = 0 if entry.priority else self.rng.choice([1, -1])
        elif mistake == "action id":
            if entry.action.HasField("action"):
                entry.action.action.action_id = self.rng.choice(
                    [self.unknown_id(), *(a for a in self.actions)]
                )
            else:
                entry.action.action_profile_member_id = 999
        elif mistake == "param":
            self.param_mistake(entry)
        elif mistake == "field id":
            fm.field_id = self.rng.choice([0, 99])
        elif mistake == "duplicate field":
            entry.match.append(fm)
        elif mistake == "kind":
            other = p4runtime_pb2.FieldMatch(field_id=fm.field_id)
            other.exact.value = b"\x01" if kind != "exact" else b""
            if kind == "exact":
                other.ternary.value, other.ternary.mask = b"\x01", b"\x01"
            fm.CopyFrom(other)
        elif mistake in ("value width", "not canonical", "empty value"):
            bits = fields[fm.field_id].bitwidth if fm.field_id in fields else 8
            target = getattr(fm, kind)
            name = "low" if kind == "range" else "value"
            value = getattr(target, name)
            if mistake == "value width":
                wider = int.from_bytes(value, "big") | (1 << (bits + self.rng.choice([0, 8])))
                setattr(target, name, canonical(wider))
            elif mistake == "not canonical":
                setattr(target, name, value.rjust(nbytes(bits) + self.rng.choice([0, 1]), b"\0"))
            else:
                setattr(target, name, b"")
        elif mistake == "outside mask":
            fm = next(m for m in entry.match if m.HasField("ternary"))
            mask = int.from_bytes(fm.ternary.mask, "big")
            bits = fields[fm.field_id].bitwidth
            outside = ((1 << bits) - 1) & ~mask
            fm.ternary.value = canonical(int.from_bytes(fm.ternary.value, "big") | (outside or 1))
        elif mistake == "mask zero":
            fm = next(m for m in entry.match if m.HasField("ternary"))
            fm.ternary.mask = b"\x00"
        elif mistake in ("outside prefix", "prefix too long"):
            fm = next(m for m in entry.match if m.HasField("lpm"))
            bits = fields[fm.field_id].bitwidth
            if mistake == "prefix too long":
                fm.lpm.prefix_len = bits + 1
            elif fm.lpm.prefix_len < bits:
                fm.lpm.value = canonical(int.from_bytes(fm.lpm.value, "big") | 1)
            else:
                fm.lpm.prefix_len = -1
        elif mistake == "range inverted":
            fm = next(m for m in entry.match if m.HasField("range"))
            bits = fields[fm.field_id].bitwidth
            fm.range.low, fm.range.high = canonical((1 << bits) - 1), b"\x00"
        elif mistake == "idle timeout":  # on a table without idle timeouts
            entry.idle_timeout_ns = 10**9
        elif mistake == "exact missing":
            exact = [f.id for f in table.match_fields if f.match_type == MatchField.EXACT]
            keep = [m for m in entry.match if m.field_id not in exact]
            del entry.match[:]
            entry.match.extend(keep)
        return mistake

    def param_mistake(self, entry: p4runtime_pb2.TableEntry) -> None:
        if not entry.action.HasField("action"):
            entry.action.action_profile_group_id = 999
            return
        action = entry.action.action
        info = self.actions.get(action.action_id)
        r = self.rng.random()
        if r < 0.25 and action.params:
            del action.params[self.rng.randrange(len(action.params))]
        elif r < 0.5:
            action.params.add(param_id=self.rng.choice([0, 77]), value=b"\x01")
        elif r < 0.75 and action.params:
            p = self.rng.choice(action.params)
            bits = next((q.bitwidth for q in info.params if q.id == p.param_id), 8) if info else 8
            p.value = (
                canonical(1 << bits) if self.rng.random() < 0.6 else b"\0" * (nbytes(bits) + 1)
            )
        elif action.params:
            action.params.append(action.params[0])  # a parameter given twice
        else:
            action.params.add(param_id=1, value=b"\x01")

    def entry_update(self) -> Update:
        tables = [t for t in self.info.tables]
        r = self.rng.random()
        if self.entries and r < 0.4:  # an entry written before: duplicate, modify, delete
            entry = p4runtime_pb2.TableEntry()
            entry.CopyFrom(self.rng.choice(self.entries))
            kind = self.rng.choice([Update.INSERT, Update.MODIFY, Update.MODIFY, Update.DELETE])
            if kind == Update.MODIFY:
                table = next(t for t in tables if t.preamble.id == entry.table_id)
                entry.ClearField("action")
                self.table_action(table, entry)
            return Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=entry))
        table = self.rng.choice(tables)
        entry = self.table_entry(table)
        kind = self.rng.choice([Update.INSERT] * 4 + [Update.MODIFY, Update.DELETE])
        if self.rng.random() < 0.35:
            self.entry_mistake(entry, table)  # not remembered: later steps build on good ones
            return Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=entry))
        if self.rng.random() < 0.15:  # the default entry: modify, or reset (no action)
            del entry.match[:]
            entry.priority = 0
            entry.is_default_action = True
            entry.ClearField("action")
            if self.rng.random() < 0.7 and not table.implementation_id:
                entry.action.action.CopyFrom(self.action(table, default=True))
            kind = self.rng.choice([Update.MODIFY] * 4 + [Update.INSERT, Update.DELETE])
            return Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=entry))
        self.entries.append(entry)
        return Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=entry))

    # -- other entities ------------------------------------------------------------------------
    def index_of(self, size: int) -> int:
        return self.rng.choice([0, 1, size - 1, size, size + 7, -1, 2**31])

    def counter_update(self) -> Update | None:
        choices = []
        if self.info.counters:
            choices.append("counter")
        if self.info.direct_counters and self.entries:
            choices.append("direct")
        if not choices:
            return None
        entity = p4runtime_pb2.Entity()
        if self.rng.choice(choices) == "counter":
            counter = self.rng.choice(self.info.counters)
            c = entity.counter_entry
            c.counter_id = self.rng.choice([counter.preamble.id] * 5 + [self.unknown_id()])
            c.index.index = self.index_of(counter.size)
            c.data.packet_count = self.rng.choice([0, 5, 2**40])
            c.data.byte_count = self.rng.choice([0, 64])
        else:
            d = entity.direct_counter_entry
            d.table_entry.CopyFrom(self.rng.choice(self.entries))
            d.table_entry.ClearField("action")
            d.data.packet_count, d.data.byte_count = 3, 300
        return Update(type=self.rng.choice([Update.MODIFY] * 5 + [Update.INSERT]), entity=entity)

    def meter_update(self) -> Update | None:
        if self.info.direct_meters and self.entries and self.rng.random() < 0.4:
            entity = p4runtime_pb2.Entity()
            d = entity.direct_meter_entry
            d.table_entry.CopyFrom(self.rng.choice(self.entries))
            d.table_entry.ClearField("action")
            if self.rng.random() < 0.8:
                d.config.cir, d.config.cburst, d.config.pir, d.config.pburst = 10, 5, 20, 5
            return Update(
                type=self.rng.choice([Update.MODIFY] * 5 + [Update.DELETE]), entity=entity
            )
        if not self.info.meters:
            return None
        meter = self.rng.choice(self.info.meters)
        entity = p4runtime_pb2.Entity()
        m = entity.meter_entry
        m.meter_id = self.rng.choice([meter.preamble.id] * 5 + [self.unknown_id()])
        m.index.index = self.index_of(meter.size)
        r = self.rng.random()
        if r < 0.6:
            m.config.cir, m.config.cburst, m.config.pir, m.config.pburst = 100, 10, 200, 20
        elif r < 0.8:
            m.config.cir, m.config.cburst, m.config.pir, m.config.pburst = 200, 10, 100, 20
        return Update(type=self.rng.choice([Update.MODIFY] * 5 + [Update.DELETE]), entity=entity)

    def register_update(self) -> Update | None:
        if not self.info.registers:
            return None
        register = self.rng.choice(self.info.registers)
        entity = p4runtime_pb2.Entity()
        r = entity.register_entry
        r.register_id = self.rng.choice([register.preamble.id] * 5 + [self.unknown_id()])
        r.index.index = self.index_of(register.size)
        r.data.bitstring = b"\x05"
        return Update(type=Update.MODIFY, entity=entity)

    def pre_update(self) -> Update:
        entity = p4runtime_pb2.Entity()
        pre = entity.packet_replication_engine_entry
        replicas = [(self.rng.choice([1, 2, 3, 511]), self.rng.choice([0, 1]))]
        replicas *= self.rng.choice([1, 1, 2])  # twice: the same replica listed twice
        if self.rng.random() < 0.3:
            replicas.append((2, 1))
        if self.rng.random() < 0.6:
            group = pre.multicast_group_entry
            group.multicast_group_id = self.rng.choice([0, 1, 2, 2, 7])
            target = group.replicas
        else:
            session = pre.clone_session_entry
            session.session_id = self.rng.choice([0, 1, 5, 5, 1024])
            session.class_of_service = self.rng.choice([0, 0, 3])
            session.packet_length_bytes = self.rng.choice([0, 0, 64, -1])
            target = session.replicas
        for port, instance in replicas:
            target.add(egress_port=port, instance=instance)
        kind = self.rng.choice([Update.INSERT] * 3 + [Update.MODIFY, Update.DELETE])
        return Update(type=kind, entity=entity)

    def profile_update(self) -> Update | None:
        if not self.profiles:
            return None
        profile = self.rng.choice(list(self.profiles.values()))
        table = next(
            (t for t in self.info.tables if t.implementation_id == profile.preamble.id), None
        )
        if table is None:
            return None
        entity = p4runtime_pb2.Entity()
        kind = self.rng.choice([Update.INSERT] * 3 + [Update.MODIFY, Update.DELETE])
        if self.rng.random() < 0.6 or not self.members:
            m = entity.action_profile_member
            m.action_profile_id = self.rng.choice([profile.preamble.id] * 7 + [self.unknown_id()])
            m.member_id = self.rng.choice([1, 2, 3, 4])
            m.action.CopyFrom(self.action(table))
            self.members.append(m)
        else:
            g = entity.action_profile_group
            g.action_profile_id = profile.preamble.id
            g.group_id = self.rng.choice([10, 11])
            g.max_size = self.rng.choice([0, 0, 4])
            for m in self.rng.sample(self.members, min(len(self.members), 2)):
                g.members.add(member_id=m.member_id, weight=self.rng.choice([1, 1, 2, 0]))
            self.groups.append(g.group_id)
        return Update(type=kind, entity=entity)

    def value_set_update(self) -> Update:
        """A ValueSetEntry: MODIFY with members (spec 9.8: MODIFY only), or a mistake: INSERT
        or DELETE, an unknown id, more members than the set's size, a value too wide, a
        field id unknown."""
        vs = self.rng.choice(self.value_sets)
        entity = p4runtime_pb2.Entity()
        entry = entity.value_set_entry
        entry.value_set_id = vs.preamble.id
        for _ in range(self.rng.choice([0, 1, 1, 2, 3])):
            member = entry.members.add()
            for field in vs.match:
                fm = member.match.add(field_id=field.id)
                fm.exact.value = canonical(self.rng.choice([1, 2, 5, 7]))
        kind = Update.MODIFY
        r = self.rng.random()
        if r < 0.1:
            kind = self.rng.choice([Update.INSERT, Update.DELETE])
        elif r < 0.15:
            entry.value_set_id = self.unknown_id()
        elif r < 0.2 and entry.members:
            while len(entry.members) <= vs.size:
                entry.members.append(entry.members[0])
        elif r < 0.25 and entry.members:
            entry.members[0].match[0].exact.value = canonical(1 << vs.match[0].bitwidth)
        elif r < 0.3 and entry.members:
            entry.members[0].match[0].field_id = 99
        return Update(type=kind, entity=entity)

    def digest_update(self) -> Update:
        """A DigestEntry: its config (one digest per list, so each is sent as it comes), or
        a mistake: digest id 0 or unknown."""
        entity = p4runtime_pb2.Entity()
        entry = entity.digest_entry
        entry.digest_id = self.rng.choice(self.digests).preamble.id
        r = self.rng.random()
        if r < 0.1:
            entry.digest_id = self.rng.choice([0, self.unknown_id()])
        config = entry.config
        config.max_list_size = 1
        config.max_timeout_ns = 0  # with max_list_size 1: each digest at once
        config.ack_timeout_ns = self.rng.choice([1_000_000, 10_000_000_000])
        kind = self.rng.choice([Update.INSERT] * 3 + [Update.MODIFY, Update.DELETE])
        if kind == Update.DELETE and self.rng.random() < 0.5:
            entity.digest_entry.ClearField("config")
        return Update(type=kind, entity=entity)

    def update(self) -> Update:
        if (self.value_sets or self.digests) and self.rng.random() < 0.3:
            if self.digests and (not self.value_sets or self.rng.random() < 0.5):
                return self.digest_update()
            return self.value_set_update()
        r = self.rng.random()
        made = None
        if r < 0.55:
            return self.entry_update()
        if r < 0.65:
            made = self.counter_update()
        elif r < 0.72:
            made = self.meter_update()
        elif r < 0.76:
            made = self.register_update()
        elif r < 0.88:
            made = self.pre_update()
        else:
            made = self.profile_update()
        return made or self.entry_update()

    # -- requests ------------------------------------------------------------------------------
    def write(self) -> Step:
        request = p4runtime_pb2.WriteRequest(device_id=0)
        request.election_id.low = self.primary_election_id
        n = self.rng.choice([1, 1, 1, 2, 3, 5])
        request.updates.extend(self.update() for _ in range(n))
        client, note = "primary", ""
        r = self.rng.random()
        if r < 0.03:
            request.role, note = "rtdiff", "role name"
        elif r < 0.05:
            request.ClearField("election_id")
            client, note = "nobody", "no election id"
        elif r < 0.09 and self.second_election_id:
            client, note = "second", "from the second client"
        elif r < 0.11:
            request.device_id, note = 7, "unknown device"
        elif r < 0.13:
            request.atomicity = self.rng.choice([1, 2, 9])  # rollback, dataplane, unknown
            note = f"atomicity {request.atomicity}"
        return Step("Write", request, client, note)

    def read_entity(self) -> p4runtime_pb2.Entity:
        entity = p4runtime_pb2.Entity()
        if (self.value_sets or self.digests) and self.rng.random() < 0.25:
            if self.value_sets and (not self.digests or self.rng.random() < 0.5):
                entity.value_set_entry.value_set_id = self.rng.choice(
                    [0, self.rng.choice(self.value_sets).preamble.id]
                )
            else:
                entity.digest_entry.digest_id = self.rng.choice(
                    [0, self.rng.choice(self.digests).preamble.id]
                )
            return entity
        r = self.rng.random()
        table = self.rng.choice(self.info.tables)
        if r < 0.2:
            entity.table_entry.SetInParent()  # every table
        elif r < 0.4:
            entity.table_entry.table_id = table.preamble.id
        elif r < 0.5:
            entity.table_entry.table_id = table.preamble.id
            entity.table_entry.is_default_action = True
        elif r < 0.6 and self.entries:
            entity.table_entry.CopyFrom(self.rng.choice(self.entries))
            entity.table_entry.ClearField("action")
        elif r < 0.65:
            entity.table_entry.table_id = self.unknown_id()
        elif r < 0.72 and self.info.counters:
            counter = self.rng.choice(self.info.counters)
            entity.counter_entry.counter_id = counter.preamble.id
            if self.rng.random() < 0.5:
                entity.counter_entry.index.index = self.index_of(counter.size)
        elif r < 0.76 and self.info.direct_counters:
            entity.direct_counter_entry.table_entry.table_id = self.info.direct_counters[
                0
            ].direct_table_id
        elif r < 0.78 and self.info.direct_meters:
            entity.direct_meter_entry.table_entry.table_id = self.info.direct_meters[
                0
            ].direct_table_id
        elif r < 0.8 and self.info.meters:
            meter = self.rng.choice(self.info.meters)
            entity.meter_entry.meter_id = meter.preamble.id
            entity.meter_entry.index.index = self.index_of(meter.size)
        elif r < 0.84 and self.info.registers:
            register = self.rng.choice(self.info.registers)
            entity.register_entry.register_id = register.preamble.id
            entity.register_entry.index.index = self.index_of(register.size)
        elif r < 0.92:
            pre = entity.packet_replication_engine_entry
            if self.rng.random() < 0.5:
                pre.multicast_group_entry.multicast_group_id = self.rng.choice([0, 1, 2])
            else:
                pre.clone_session_entry.session_id = self.rng.choice([0, 5])
        elif self.profiles:
            profile_id = self.rng.choice(list(self.profiles))
            if self.rng.random() < 0.5:
                entity.action_profile_member.action_profile_id = profile_id
            else:
                entity.action_profile_group.action_profile_id = profile_id
        else:
            entity.table_entry.SetInParent()
        return entity

    def read(self) -> Step:
        request = p4runtime_pb2.ReadRequest(device_id=0)
        request.entities.extend(self.read_entity() for _ in range(self.rng.choice([1, 1, 2])))
        note = ""
        if self.rng.random() < 0.03:
            request.role, note = "rtdiff", "role name"
        return Step("Read", request, "primary", note)

    def set_pipeline(self) -> Step:
        request = FPC(device_id=0)
        request.election_id.low = self.primary_election_id
        request.action = self.rng.choice(
            [FPC.VERIFY, FPC.VERIFY_AND_COMMIT, FPC.RECONCILE_AND_COMMIT, FPC.COMMIT,
             FPC.VERIFY_AND_SAVE, FPC.UNSPECIFIED]
        )  # fmt: skip
        note = FPC.Action.Name(request.action)
        if request.action != FPC.COMMIT or self.rng.random() < 0.3:
            request.config.p4info.CopyFrom(self.info)
            request.config.p4_device_config = DEVICE_CONFIG
            if self.rng.random() < 0.2:
                request.config.cookie.cookie = 42
        if self.rng.random() < 0.15 and request.action != FPC.COMMIT:
            request.config.p4_device_config = b"not a device config"
            note += ", a config that is none"
        if request.action == FPC.VERIFY_AND_COMMIT:
            self.entries.clear()  # the state is cleared
            self.members.clear()
            self.groups.clear()
        return Step("SetForwardingPipelineConfig", request, "primary", note)

    def arbitrate(self) -> Step:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = 0
        primary = self.primary_election_id
        eid = self.rng.choice([primary - 5, primary, primary + 5])
        request.arbitration.election_id.low = eid
        note = f"election id {eid}"
        if self.rng.random() < 0.2:
            request.arbitration.role.name = "rtdiff"
            note += ", role rtdiff"
        self.second_election_id = eid
        self.highest_second_election_id = max(self.highest_second_election_id, eid)
        return Step("Arbitrate", request, "second", note)

    def still_primary(self) -> bool:
        """Whether the primary's stream is the primary as far as the steps go (no second
        client arbitrated above it): PacketOut goes only from the primary."""
        return self.highest_second_election_id < self.primary_election_id

    def packet_out(self) -> Step:
        """A PacketOut on the primary's stream: a data header (kind, a tag of its own) after
        the packet_out metadata, or a mistake in the metadata (spec 16.1: unknown id, one
        missing, one given twice, a value too wide); or the same data repeated."""
        if self.digests and self.rng.random() < 0.15:
            return self.same_digest_data()
        self.tag += 1
        request = p4runtime_pb2.StreamMessageRequest()
        packet = request.packet
        kind = self.rng.choice([0, 1, 2, 5, 7])
        packet.payload = bytes([kind]) + self.tag.to_bytes(4, "big")
        for m in self.packet_out_header.metadata:
            packet.metadata.add(metadata_id=m.id, value=canonical(self.number(m.bitwidth)))
        note = f"kind {kind}"
        r = self.rng.random()
        if r < 0.05:
            packet.metadata[0].metadata_id, note = 99, "unknown metadata id"
        elif r < 0.1:
            del packet.metadata[0]
            note = "metadata missing"
        elif r < 0.15:
            packet.metadata.append(packet.metadata[0])
            note = "metadata twice"
        elif r < 0.2:
            bits = self.packet_out_header.metadata[0].bitwidth
            packet.metadata[0].value, note = canonical(1 << bits), "metadata too wide"
        return Step("PacketOut", request, "primary", note)

    def same_digest_data(self) -> Step:
        """One PacketOut sent twice back to back, so that its digest data comes again before
        the DigestList of the first can be acknowledged, then (the next step) once more
        after that ack: the digest cache of spec 9.9 DigestEntry (data sent and not
        acknowledged is not sent again) and its end at the DigestListAck."""
        self.tag += 1
        request = p4runtime_pb2.StreamMessageRequest()
        request.packet.payload = bytes([self.rng.choice([0, 1, 2, 5, 7])]) + self.tag.to_bytes(
            4, "big"
        )
        for m in self.packet_out_header.metadata:
            request.packet.metadata.add(metadata_id=m.id, value=canonical(self.number(m.bitwidth)))
        self.next_steps.append(Step("PacketOut", request, "primary", SAME_DATA_AFTER_ACK))
        return Step("PacketOut", request, "primary", SAME_DATA_BEFORE_ACK, times=2)

    def digest_ack(self) -> Step:
        """A DigestListAck of a list never sent (spec 16.3), of a known digest or not."""
        request = p4runtime_pb2.StreamMessageRequest()
        known = self.rng.random() < 0.7
        request.digest_ack.digest_id = (
            self.rng.choice(self.digests).preamble.id if known else self.unknown_id()
        )
        request.digest_ack.list_id = self.rng.choice([1, 77])
        note = "known digest" if known else "unknown digest"
        return Step("DigestListAck", request, "primary", note)

    def rearbitrate(self) -> Step:
        """The primary arbitrates again on its own stream, with its election id or a higher
        one (what the stream brings up to a marker PacketIn is compared, so a program with
        a packet_out header only)."""
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = 0
        eid = self.primary_election_id + self.rng.choice([0, 3])
        request.arbitration.election_id.low = eid
        self.primary_election_id = eid
        return Step("Arbitrate", request, "primary", f"the primary again, election id {eid}")

    def step(self) -> Step:
        if self.next_steps:
            return self.next_steps.pop(0)
        if self.packet_out_header is not None and self.still_primary() and self.rng.random() < 0.2:
            r = self.rng.random()
            if self.digests and r < 0.15:
                return self.digest_ack()
            if r < 0.3:
                return self.rearbitrate()
            return self.packet_out()
        r = self.rng.random()
        if r < 0.5:
            return self.write()
        if r < 0.8:
            return self.read()
        if r < 0.87:
            return self.set_pipeline()
        if r < 0.92:
            kinds = p4runtime_pb2.GetForwardingPipelineConfigRequest.ResponseType.values()
            request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
                device_id=0, response_type=self.rng.choice(kinds)
            )
            return Step("GetForwardingPipelineConfig", request, "nobody")
        if r < 0.94:
            return Step("Capabilities", p4runtime_pb2.CapabilitiesRequest(), "nobody")
        return self.arbitrate()

    def sequence(self, length: int) -> list[Step]:
        return [self.step() for _ in range(length)]


def final_reads(info: p4info_pb2.P4Info) -> list[Step]:
    """Reads of everything a Read names with wildcards, one kind at a time (a kind one target
    does not serve fails alone), to compare the state a sequence left: table entries,
    default entries, counters, meters, PRE entries, profile members and groups, value sets
    and digest configs (where the program has them)."""
    steps = []
    kinds = ["table_entry", "counter_entry", "meter_entry", "action_profile_member",
             "action_profile_group", "multicast_group_entry", "clone_session_entry"]  # fmt: skip
    kinds += ["value_set_entry"] * bool(info.value_sets) + ["digest_entry"] * bool(info.digests)
    for kind in kinds:
        request = p4runtime_pb2.ReadRequest(device_id=0)
        entity = request.entities.add()
        if kind.endswith("session_entry") or kind.startswith("multicast"):
            getattr(entity.packet_replication_engine_entry, kind).SetInParent()
        else:
            getattr(entity, kind).SetInParent()
        steps.append(Step("Read", request, "primary", f"every {kind}"))
    defaults = p4runtime_pb2.ReadRequest(device_id=0)
    for table in info.tables:  # one by one: a wildcard read takes no is_default_action
        entity = defaults.entities.add()
        entity.table_entry.table_id = table.preamble.id
        entity.table_entry.is_default_action = True
    steps.append(Step("Read", defaults, "primary", "every default entry"))
    return steps

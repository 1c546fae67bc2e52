"""Action profiles and selectors over P4Runtime, on the real front end and engine:
ActionProfileMember / ActionProfileGroup writes and reads, table entries that name a member,
a group or a one-shot action set, the spec's (and PI's) error codes, and the member a
selector picks for each flow (weights included).

Program: p4sim/tests/stf/action_selector.p4 (an ECMP table implemented by an action_selector
over crc16 of the flow's addresses, protocol and UDP ports; two tables sharing one
action_profile). Which member BMv2 picks for these flows is fixed by
p4sim/tests/stf/action_selector.stf, whose expectations are BMv2's output.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_action_profiles.py
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import random
from pathlib import Path

import grpc
import pytest
from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controlplane import bmv2 as cp_bmv2
from p4sim import frontend, native, p4info
from p4sim.conformance import bmv2, differential
from p4sim.errors import P4Error
from p4sim.io import InProcessPorts
from p4sim.model import (
    ControlPlaneError,
    FieldMatch,
    InvalidEntry,
    ProfileGroup,
    ProfileMember,
    TableEntry,
    TableFull,
)
from p4sim.p4runtime import P4RuntimeServer
from p4sim.p4runtime.device_config import DeviceConfig
from p4sim.p4runtime.primary import PrimarySession
from p4sim.switch import Switch

PROGRAM = Path(__file__).parent / "stf" / "action_selector.p4"
Update = p4runtime_pb2.Update


@pytest.fixture(scope="module")
def compiled():
    return frontend.compile_file(str(PROGRAM))


class Client(PrimarySession):
    def __init__(self, address: str, device_config: bytes, info) -> None:
        super().__init__(address)
        assert self.arbitration.status.code == code_pb2.OK
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = req.VERIFY_AND_COMMIT
        req.config.p4_device_config = device_config
        req.config.p4info.CopyFrom(info)
        self.stub.SetForwardingPipelineConfig(req, timeout=30)
        self.ids = {
            o.preamble.name.rsplit(".", 1)[-1]: o.preamble.id
            for kind in ("tables", "actions", "action_profiles")
            for o in getattr(info, kind)
        }

    def codes(self, *updates) -> list[int]:
        """The per-update codes of a batch (OK for the ones applied)."""
        try:
            self.write(*updates)
            return [code_pb2.OK] * len(updates)
        except grpc.RpcError as e:
            for key, value in e.trailing_metadata():
                if key == "grpc-status-details-bin":
                    status = status_pb2.Status.FromString(value)
                    return [
                        p4runtime_pb2.Error.FromString(d.value).canonical_code
                        for d in status.details
                    ]
            raise

    def read(self, **entity) -> list:
        req = p4runtime_pb2.ReadRequest(device_id=0)
        ((kind, fields),) = entity.items()
        getattr(req.entities.add(), kind).CopyFrom(type(getattr(req.entities[0], kind))(**fields))
        return [e for r in self.stub.Read(req, timeout=60) for e in r.entities]

    # -- message builders -----------------------------------------------------------
    def action(self, port: int):
        a = p4runtime_pb2.Action(action_id=self.ids["set_nhop"])
        # canonical bytestrings (no leading zero bytes), as reads answer
        a.params.add(param_id=1, value=bytes([port]))
        a.params.add(param_id=2, value=bytes([port, port]) if port else b"\0")
        return a

    def member(self, member_id: int, port: int, kind=Update.INSERT, profile="ecmp_selector"):
        m = p4runtime_pb2.ActionProfileMember(
            action_profile_id=self.ids[profile], member_id=member_id, action=self.action(port)
        )
        return Update(type=kind, entity=p4runtime_pb2.Entity(action_profile_member=m))

    def group(self, group_id: int, members, kind=Update.INSERT, max_size=0):
        g = p4runtime_pb2.ActionProfileGroup(
            action_profile_id=self.ids["ecmp_selector"], group_id=group_id, max_size=max_size
        )
        for member_id, weight in members:
            g.members.add(member_id=member_id, weight=weight)
        return Update(type=kind, entity=p4runtime_pb2.Entity(action_profile_group=g))

    def route(self, prefix: str, kind=Update.INSERT, **target):
        net = ipaddress.ip_network(prefix)
        e = p4runtime_pb2.TableEntry(table_id=self.ids["ecmp"])
        fm = e.match.add(field_id=1)
        fm.lpm.value = net.network_address.packed
        fm.lpm.prefix_len = net.prefixlen
        if "member" in target:
            e.action.action_profile_member_id = target["member"]
        elif "group" in target:
            e.action.action_profile_group_id = target["group"]
        elif "action_set" in target:
            for port, weight in target["action_set"]:
                a = e.action.action_profile_action_set.action_profile_actions.add(weight=weight)
                a.action.CopyFrom(self.action(port))
        elif "action" in target:
            e.action.action.CopyFrom(self.action(target["action"]))
        return Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=e))


@pytest.fixture(params=["interp", "native"])
def rig(compiled, request):
    """p4sim with ports 0..5 and a primary client that pushed the program, on both engines
    (native: the selector's groups mirrored into C)."""
    ports = InProcessPorts([0, 1, 2, 3, 4, 5])
    switch = Switch(ports, cpu_port=64)
    switch.start()
    server = P4RuntimeServer(switch, "127.0.0.1:0", compiler=native.compiler(request.param))
    server.start()
    config = DeviceConfig(compiled.source, PROGRAM.name).encode()
    client = Client(server.address, config, p4info.generate(compiled.model))
    assert getattr(switch.pipeline.device, "engine", "interp") == request.param
    yield client, ports
    client.close()
    server.stop()
    switch.close()


def stf_flows() -> list[tuple[bytes, int]]:
    """(frame, port BMv2 sent it to) for the flows of action_selector.stf that hit the
    4-member group 10 = members 1..4 on ports 1..4, created in that order."""
    lines = (PROGRAM.with_suffix(".stf")).read_text().splitlines()
    flows = []
    for line, nxt in itertools.pairwise(lines):
        if line.startswith("packet 0 ") and nxt.startswith("expect "):
            frame = bytes.fromhex(line.split()[2])
            if frame[30] == 10:  # destination in 10.0.0.0/8
                flows.append((frame, int(nxt.split()[1])))
    return flows


def send(ports: InProcessPorts, frame: bytes) -> int:
    ports.inject(0, frame)
    out = ports.wait_for(1, timeout=30)
    assert len(out) == 1, out
    return out[0][0]


# ---------------------------------------------------------------------------------------


def test_members_groups_and_entries_round_trip(rig):
    c, _ = rig
    c.write(*(c.member(i, i) for i in range(1, 5)))
    c.write(c.group(10, [(1, 1), (2, 2), (3, 1)], max_size=6))
    c.write(c.route("10.0.0.0/8", group=10), c.route("172.16.0.0/12", member=4))
    members = c.read(action_profile_member={"action_profile_id": 0})
    assert sorted(e.action_profile_member.member_id for e in members) == [1, 2, 3, 4]
    one = c.read(
        action_profile_member={"action_profile_id": c.ids["ecmp_selector"], "member_id": 2}
    )
    assert one[0].action_profile_member.action == c.action(2)
    (g,) = c.read(action_profile_group={"action_profile_id": c.ids["ecmp_selector"]})
    assert g.action_profile_group.max_size == 6
    assert [(m.member_id, m.weight) for m in g.action_profile_group.members] == [
        (1, 1), (2, 2), (3, 1)
    ]  # fmt: skip
    entries = {
        e.table_entry.match[0].lpm.value: e.table_entry.action
        for e in c.read(table_entry={"table_id": c.ids["ecmp"]})
    }
    assert entries[bytes([10, 0, 0, 0])].action_profile_group_id == 10
    assert entries[bytes([172, 16, 0, 0])].action_profile_member_id == 4
    # MODIFY: group membership and an entry's target; the read follows
    c.write(
        c.group(10, [(4, 1)], kind=Update.MODIFY), c.route("172.16.0.0/12", Update.MODIFY, group=10)
    )
    (g,) = c.read(action_profile_group={"action_profile_id": 0, "group_id": 10})
    assert [m.member_id for m in g.action_profile_group.members] == [4]
    filtered = c.read(
        table_entry={"table_id": c.ids["ecmp"], "action": {"action_profile_group_id": 10}}
    )
    assert len(filtered) == 2


def test_selector_picks_the_member_bmv2_picks(rig):
    """Members 1..4 created in order and grouped: for each flow of the STF the same port as
    BMv2 (expectations of action_selector.stf). Then the handle order, not the order the
    group lists its members in, decides: listing them 4, 3, 2, 1 changes nothing."""
    c, ports = rig
    flows = stf_flows()
    assert len(flows) >= 20 and len({port for _, port in flows}) == 4
    c.write(*(c.member(i, i) for i in range(1, 5)))
    c.write(c.group(10, [(4, 1), (3, 1), (2, 1), (1, 1)]))
    c.write(c.route("10.0.0.0/8", group=10))
    assert [send(ports, f) for f, _ in flows] == [port for _, port in flows]


def test_weights_and_one_shot_action_sets_take_handles_as_pi_does(rig):
    """A weight-w member is w members in BMv2 (PI makes w-1 copies, handles allocated after
    the existing ones): group {1: w2, 2: w1} is BMv2's group of handles [0, 1, 2] = members
    [1, 2, 1]. A one-shot action set [(port 1, w2), (port 2, w1)] is the same group; both
    must send every flow where a 3-member group of handles in that order would."""
    c, ports = rig
    flows = [f for f, _ in stf_flows()]
    c.write(c.member(1, 1), c.member(2, 2), c.member(3, 3))
    c.write(c.group(30, [(1, 1), (2, 1), (3, 1)]))  # reference: handles 0, 1, 2
    c.write(c.route("10.0.0.0/8", group=30))
    by_slot = [send(ports, f) for f in flows]  # port k+1 = slot k
    c.write(c.group(30, [(1, 2), (2, 1)], kind=Update.MODIFY))  # handles 0=1, 1=2, 3=copy of 1
    weighted = [send(ports, f) for f in flows]
    slots = {1: 1, 2: 2, 3: 1}  # the slot's member (port) once handle 2 is replaced by 3
    assert weighted == [slots[p] for p in by_slot]
    assert weighted.count(1) > weighted.count(2) > 0
    # one-shot programming on a fresh device state: the profile must be empty of members
    c.write(c.route("10.0.0.0/8", Update.DELETE, group=30))
    c.write(c.group(30, [], kind=Update.DELETE))
    c.write(*(c.member(i, 0, kind=Update.DELETE) for i in (1, 2, 3)))
    c.write(c.route("10.0.0.0/8", action_set=[(1, 1), (2, 1), (3, 1)]))
    assert [send(ports, f) for f in flows] == by_slot
    (e,) = c.read(table_entry={"table_id": c.ids["ecmp"]})
    got = e.table_entry.action.action_profile_action_set.action_profile_actions
    assert [(a.action, a.weight) for a in got] == [(c.action(p), 1) for p in (1, 2, 3)]


def test_miss_and_empty_group_run_no_action(rig):
    """As BMv2, a miss in a table with an implementation runs no action (the program's
    default_action = drop() is not run). A hit on a group left empty runs no action either,
    as PSA's default `psa_empty_group_action` (NoAction) would: the P4Runtime spec leaves it
    to the target, and simple_switch 1.15.5 logs "yielded empty group" and then applies the
    table again and again, forever, for that packet (its ingress thread never gets to the
    next frame)."""
    c, ports = rig
    frame, _ = stf_flows()[0]
    assert send(ports, frame) == 0  # miss: not dropped, egress_spec stays 0
    c.write(c.member(1, 3), c.group(10, [(1, 1)]), c.route("10.0.0.0/8", group=10))
    assert send(ports, frame) == 3
    c.write(c.group(10, [], kind=Update.MODIFY))
    assert send(ports, frame) == 0


def test_error_codes(rig):
    c, _ = rig
    C = code_pb2
    c.write(c.member(1, 1), c.member(2, 2), c.group(10, [(1, 1)]))
    assert c.codes(
        c.member(1, 1),  # duplicate member
        c.member(9, 1, kind=Update.MODIFY),  # unknown member
        c.member(9, 1, kind=Update.DELETE),
        c.member(1, 1, kind=Update.DELETE),  # in group 10
        c.group(10, [(2, 1)]),  # duplicate group
        c.group(11, [(9, 1)]),  # unknown member
        c.group(12, [(2, 0)]),  # weight 0
        c.group(13, [(2, 1), (2, 1)]),  # member listed twice
        c.group(14, [(1, 5), (2, 4)]),  # weights 9 > @max_group_size(8)
        c.group(15, [(1, 1)], max_size=9),  # max_size over max_group_size
        c.group(16, [(1, 2), (2, 1)], max_size=2),  # weights over the group's max_size
        c.group(99, [], kind=Update.DELETE),  # unknown group
    ) == [
        C.ALREADY_EXISTS, C.NOT_FOUND, C.NOT_FOUND, C.FAILED_PRECONDITION,
        C.ALREADY_EXISTS, C.NOT_FOUND, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT,
        C.RESOURCE_EXHAUSTED, C.INVALID_ARGUMENT, C.RESOURCE_EXHAUSTED, C.NOT_FOUND,
    ]  # fmt: skip
    c.write(c.route("10.0.0.0/8", group=10), c.route("11.0.0.0/8", member=2))
    default = p4runtime_pb2.TableEntry(table_id=c.ids["ecmp"], is_default_action=True)
    default.action.action_profile_member_id = 2
    wrong_profile = c.member(3, 1, profile="classes")  # set_nhop is not a `classes` action
    assert c.codes(
        c.group(10, [], kind=Update.DELETE),  # used by an entry
        c.member(2, 0, kind=Update.DELETE),  # used by an entry
        c.route("12.0.0.0/8", member=9),  # unknown member (spec "Action Specification")
        c.route("12.0.0.0/8", group=9),  # unknown group
        c.route("12.0.0.0/8", action=1),  # a direct action on an indirect table
        c.route("12.0.0.0/8", action_set=[(1, 0)]),  # weight 0
        Update(type=Update.MODIFY, entity=p4runtime_pb2.Entity(table_entry=default)),
        wrong_profile,
        c.route("12.0.0.0/8", action_set=[(1, 1)]),  # mixes one-shot with members/groups
    ) == [
        C.FAILED_PRECONDITION, C.FAILED_PRECONDITION, C.NOT_FOUND, C.NOT_FOUND,
        C.INVALID_ARGUMENT, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT, C.INVALID_ARGUMENT,
        C.INVALID_ARGUMENT,
    ]  # fmt: skip
    # a group on a profile without selector; an unknown profile id
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=c.ids["classes"], group_id=1)
    bad = p4runtime_pb2.ActionProfileMember(action_profile_id=0x11000001, member_id=1)
    assert c.codes(
        Update(type=Update.INSERT, entity=p4runtime_pb2.Entity(action_profile_group=g)),
        Update(type=Update.INSERT, entity=p4runtime_pb2.Entity(action_profile_member=bad)),
    ) == [C.INVALID_ARGUMENT, C.NOT_FOUND]
    # after the deletes that were refused, everything still works
    c.write(c.route("10.0.0.0/8", Update.DELETE), c.group(10, [], kind=Update.DELETE))
    c.write(c.member(1, 1, kind=Update.DELETE))
    assert [e.action_profile_member.member_id for e in c.read(action_profile_member={})] == [2]


# --------------------------------------------------------------------------- against BMv2
@pytest.fixture
def bmv2_rig(tmp_path):
    """simple_switch_grpc from p4c-bm2-ss's JSON and P4Info, its ports 0..5 pcap files (port
    0's input a FIFO the test writes), and a primary P4Runtime client."""
    compiled = bmv2.compile_p4c(PROGRAM, tmp_path)
    assert compiled.ok, compiled.message
    info = p4info_pb2.P4Info()
    text_format.Parse(compiled.p4info_path.read_text(), info)
    config = compiled.json_path.read_bytes()
    switch, client = bmv2.start_grpc_switch(
        list(range(6)), [0], tmp_path, lambda address: Client(address, config, info)
    )
    yield client, switch
    client.close()
    switch.stop()


def _p4sim_outputs(ports: InProcessPorts, frames: list[bytes]) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    for frame in frames:
        ports.inject(0, frame)
        for port, sent in ports.wait_for(1, timeout=30):
            out.setdefault(port, []).append(sent)
    return out


class Both:
    """The same writes to p4sim and to simple_switch_grpc, the same flows through both."""

    def __init__(self, rig, bmv2_rig):
        self.ours, self.ports = rig
        self.theirs, self.switch = bmv2_rig
        self.flows = [f for f, _ in stf_flows()]
        self.sent: dict[int, list[bytes]] = {}  # p4sim's frames per port

    def phase(self, *updates) -> None:
        """Apply `updates` on both (BMv2 after it took the frames sent before), then send
        every flow through both."""
        self.ours.write(*updates)
        self.switch.settle()
        self.theirs.write(*updates)
        for port, frames in _p4sim_outputs(self.ports, self.flows).items():
            self.sent.setdefault(port, []).extend(frames)
        for frame in self.flows:
            self.switch.send(0, frame)

    def bmv2_frames(self) -> dict[int, list[bytes]]:
        for fd in self.switch.fifos.values():  # the end of the input: BMv2 takes the rest
            os.close(fd)
        self.switch.fifos = {}
        self.switch.settle()
        return {port: frames for port, frames in self.switch.outputs().items() if frames}

    def same_entries(self) -> bool:
        table = {"table_id": self.ours.ids["ecmp"]}
        return self.ours.read(table_entry=table) == self.theirs.read(table_entry=table)


@pytest.mark.parametrize("target", ["bmv2"] if "bmv2" in cp_bmv2.suite_targets() else [])
def test_same_members_and_codes_as_simple_switch_grpc(rig, bmv2_rig, target):
    """The same P4Runtime writes to p4sim and to BMv2's simple_switch_grpc: weights (PI's
    member copies), a deleted member whose handle a later copy reuses, and a batch of bad
    updates. Every flow leaves both on the same port with the same bytes, and the per-update
    codes agree except where PI reports a BMv2 refusal as UNKNOWN (listed)."""
    both = Both(rig, bmv2_rig)
    ours, theirs, phase = both.ours, both.theirs, both.phase
    phase(
        *(ours.member(i, i) for i in range(1, 6)),
        ours.group(10, [(1, 1), (2, 1), (3, 1), (4, 1)]),
        ours.route("10.0.0.0/8", group=10),
        ours.route("172.16.0.0/12", member=5),
    )
    phase(ours.group(10, [(2, 1), (4, 3)], kind=Update.MODIFY))  # copies of 4: handles 5, 6
    phase(
        ours.member(1, 0, kind=Update.DELETE),  # frees handle 0 ...
        ours.group(10, [(2, 1), (3, 2), (5, 1)], kind=Update.MODIFY),  # ... for 3's copy
    )
    both.switch.settle()
    bad = [
        ours.member(2, 2),  # duplicate member
        ours.member(9, 1, kind=Update.MODIFY),  # unknown member
        ours.member(9, 1, kind=Update.DELETE),
        ours.group(10, [(2, 1)]),  # duplicate group
        ours.group(11, [(9, 1)]),  # unknown member
        ours.group(12, [(2, 0)]),  # weight 0
        ours.group(13, [(2, 1), (2, 1)]),  # member listed twice
        ours.group(14, [(2, 5), (3, 4)]),  # weights 9 > @max_group_size(8)
        ours.group(15, [(2, 1)], max_size=9),  # max_size over max_group_size
        ours.group(10, [(2, 1)], kind=Update.MODIFY, max_size=3),  # max_size changed
        ours.group(99, [], kind=Update.DELETE),  # unknown group
        ours.route("12.0.0.0/8", member=9),  # unknown member
        ours.route("12.0.0.0/8", action=1),  # a direct action on an indirect table
        ours.route("12.0.0.0/8", action_set=[(1, 1)]),  # one-shot beside members and groups
        Update(  # a member running NoAction, not an action of the table
            type=Update.INSERT,
            entity=p4runtime_pb2.Entity(
                action_profile_member=p4runtime_pb2.ActionProfileMember(
                    action_profile_id=ours.ids["ecmp_selector"],
                    member_id=20,
                    action=p4runtime_pb2.Action(action_id=ours.ids["NoAction"]),
                )
            ),
        ),
        ours.member(2, 0, kind=Update.DELETE),  # in group 10
        ours.group(10, [], kind=Update.DELETE),  # used by an entry
    ]
    mine, pi = ours.codes(*bad), theirs.codes(*bad)
    # BMv2 refuses to delete a member or group still in use; PI reports the target's
    # refusal as UNKNOWN, the spec (and p4sim) say FAILED_PRECONDITION.
    in_use = [len(bad) - 2, len(bad) - 1]
    assert [pi[i] for i in in_use] == [code_pb2.UNKNOWN] * 2
    assert [mine[i] for i in in_use] == [code_pb2.FAILED_PRECONDITION] * 2
    # an entry naming a member never inserted: the spec ("Action Specification") and p4sim
    # say NOT_FOUND, PI INVALID_ARGUMENT ("Invalid member / group id")
    unknown_member = 11
    assert (mine[unknown_member], pi[unknown_member]) == (
        code_pb2.NOT_FOUND,
        code_pb2.INVALID_ARGUMENT,
    )
    deviations = in_use + [unknown_member]
    assert [c for i, c in enumerate(mine) if i not in deviations] == [
        c for i, c in enumerate(pi) if i not in deviations
    ]
    # (no empty group: simple_switch 1.15.5 loops forever on a packet that hits one, see
    # test_miss_and_empty_group_run_no_action)
    assert both.same_entries()
    assert sorted(both.sent) == [1, 2, 3, 4, 5]
    assert both.bmv2_frames() == both.sent


@pytest.mark.parametrize("target", ["bmv2"] if "bmv2" in cp_bmv2.suite_targets() else [])
def test_one_shot_action_sets_as_simple_switch_grpc(rig, bmv2_rig, target):
    """One-shot programming (a fresh pipeline: PI keeps a profile in the mode it was first
    programmed in): weighted action sets, replaced by a MODIFY; the same frames and the same
    entries read back."""
    both = Both(rig, bmv2_rig)
    ours = both.ours
    both.phase(
        ours.route("10.0.0.0/8", action_set=[(3, 2), (1, 1), (4, 1)]),
        ours.route("172.16.0.0/12", action_set=[(5, 1)]),
    )
    assert both.same_entries()
    both.phase(ours.route("10.0.0.0/8", Update.MODIFY, action_set=[(2, 1), (5, 3)]))
    assert both.same_entries()
    assert sorted(both.sent) == [1, 2, 3, 4, 5]
    assert both.bmv2_frames() == both.sent


@pytest.mark.parametrize("target", ["bmv2"] if "bmv2" in cp_bmv2.suite_targets() else [])
def test_stf_program_on_bmv2_and_p4sim(target):
    """stf/action_selector.p4 through the differential runner (`p4sim.conformance`): its STF
    (members, groups, indirect entries as simple_switch_CLI's act_prof_* and
    table_indirect_add commands) passes on BMv2, p4sim's frames equal BMv2's, and so do the
    P4Infos."""
    result = differential.run_program(PROGRAM)
    assert result.bmv2 == "pass", result.bmv2_detail
    assert result.both_pass, result.differences or result.p4sim_detail
    assert result.p4info == [], result.p4info


# --------------------------------------------------------------------------- front end
SOURCE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> a; bit<32> b; }
struct H { h_t h; }
struct M { bit<32> x; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    counter(4, CounterType.packets) c;
    TABLE
    apply { t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.mark.parametrize(
    "table, message",
    [
        (
            (
                "table t { key = { hdr.h.a: exact; hdr.h.b: selector; } actions = { fwd; }"
                " implementation = action_selector(HashAlgorithm.crc16, 32w8, 32w16); }"
            ),
            "an anonymous action_selector needs a @name annotation",
        ),
        (
            "table t { key = { hdr.h.a: exact; } actions = { fwd; } implementation = c; }",
            "'c' is not an action_profile or action_selector instance",
        ),
        (
            (
                "action_profile(4) ap; table t { key = { hdr.h.a: exact; } actions = { fwd; }"
                " implementation = ap; entries = { 1: fwd(1); } }"
            ),
            "entries come from the control plane",
        ),
        (
            (
                "action_selector(HashAlgorithm.random, 8, 16) s; table t { key = {"
                " hdr.h.a: exact; hdr.h.b: selector; } actions = { fwd; } implementation = s; }"
            ),
            "HashAlgorithm.random in an action_selector is not supported by p4sim",
        ),
    ],
)
def test_bad_implementations_are_named(table, message):
    with pytest.raises(P4Error) as info:
        frontend.compile_source(SOURCE.replace("TABLE", table), "prog.p4")
    assert message in str(info.value)


def test_size_semantics_and_selector_keys_without_a_selector():
    """`sum_of_members`: a group's size is its number of members and each weight is capped
    by @max_member_weight. Selector keys of a table without a selector are ignored, as p4c
    does (no match field, no error)."""
    prog = frontend.compile_source(
        SOURCE.replace(
            "TABLE",
            '@max_group_size(2) @selector_size_semantics("sum_of_members") @max_member_weight(3)'
            " action_selector(HashAlgorithm.crc16, 8, 16) s;"
            " table t { key = { hdr.h.a: exact; hdr.h.b: selector; } actions = { fwd; }"
            " implementation = s; }"
            " table u { key = { hdr.h.a: exact; hdr.h.b: selector; } actions = { fwd; } }",
        ).replace("t.apply();", "t.apply(); u.apply();"),
        "prog.p4",
    )
    (profile,) = prog.model.action_profiles
    assert (profile.max_group_size, profile.size_semantics, profile.max_member_weight) == (
        2, "sum_of_members", 3
    )  # fmt: skip
    assert [k.name for t in prog.model.tables for k in t.keys] == ["hdr.h.a", "hdr.h.a"]
    state = prog.new_device().action_profiles["I.s"]
    for i in (1, 2, 3):
        state.insert_member(ProfileMember(i, "I.fwd", {"port": i}))
    state.insert_group(ProfileGroup(1, {1: 3, 2: 3}))  # 2 members, weights up to 3
    with pytest.raises(InvalidEntry, match="max_member_weight"):
        state.insert_group(ProfileGroup(2, {1: 4}))
    with pytest.raises(TableFull, match="number of members"):
        state.insert_group(ProfileGroup(3, {1: 1, 2: 1, 3: 1}))


def test_random_operations_keep_books_and_engines_agree(compiled):
    """3,000 random member, group and entry operations on the ECMP selector (seeded), made
    on an interpreter device and on a native one (whose C groups mirror the profile). Every
    refusal is a control-plane error, the same on both. After each operation the books add
    up: the handles in use are exactly the members' and the one-shot groups', each group
    holds member handles in handle order, a member has as many handles as its largest
    weight, reference counts equal the entries and groups that name each member and group.
    Every 25 operations the 32 flows leave both engines identically."""
    rng = random.Random(7)
    interp = compiled.new_device()
    nat = native.new_device(compiled, engine="native")
    assert nat.engine == "native", nat.fallback_reason
    flows = [f for f, _ in stf_flows()]
    errors, ports_seen = 0, set()
    for step in range(3000):
        op = rng.randrange(8)
        mid, gid = rng.randint(1, 6), rng.randint(1, 4)
        dst = (10 + rng.randrange(3)) << 24  # the flows go to 10/8
        members = {m: rng.randint(1, 3) for m in rng.sample(range(1, 7), rng.randint(0, 3))}
        target = ("member_id", mid) if rng.random() < 0.3 else ("group_id", gid)
        weight, insert = rng.randint(1, 3), rng.random() < 0.5
        outcomes = []
        for device in (interp, nat):
            profile = device.action_profiles["MyIngress.ecmp_selector"]
            table = device.tables["MyIngress.ecmp"]
            entry = TableEntry({"hdr.ipv4.dst": FieldMatch("lpm", dst, prefix_len=8)}, "", {})
            try:
                if op == 0:
                    args = {"port": mid, "mac": 1}
                    profile.insert_member(ProfileMember(mid, "MyIngress.set_nhop", args))
                elif op == 1:
                    profile.delete_member(mid)
                elif op in (2, 3):
                    group = ProfileGroup(gid, dict(members))
                    (profile.insert_group if op == 2 else profile.modify_group)(group)
                elif op == 4:
                    profile.delete_group(gid)
                elif op == 5:
                    setattr(entry, *target)
                    (table.insert if insert else table.modify)(entry)
                elif op == 6:
                    args = {"port": 1 + weight, "mac": 2}
                    entry.action_set = [("MyIngress.set_nhop", args, weight)]
                    table.insert(entry)
                else:
                    table.delete(entry)
                outcomes.append("ok")
            except ControlPlaneError as e:
                outcomes.append(type(e).__name__)
        assert outcomes[0] == outcomes[1], (step, outcomes)
        errors += outcomes[0] != "ok"
        # the books (the profile object is the interpreter's on both devices' sides)
        profile = interp.action_profiles["MyIngress.ecmp_selector"]
        table = interp.tables["MyIngress.ecmp"]
        members = {m.member_id: profile._members[m.member_id] for m in profile.members()}
        groups = {g.group_id: profile._groups[g.group_id] for g in profile.groups()}
        oneshot = [h for g in profile._oneshots for h, _ in g.slots]
        handles = [h for m in members.values() for h in m.handles] + oneshot
        assert sorted(handles) == sorted(profile._used_handles)
        assert len(set(handles)) == len(handles)
        for m_id, m in members.items():
            weights = [g.info.members[m_id] for g in groups.values() if m_id in g.info.members]
            assert len(m.handles) == max(weights, default=1)
        for g in groups.values():
            want = sorted(
                (h, members[m_id]) for m_id, w in g.info.members.items()
                for h in members[m_id].handles[:w]
            )  # fmt: skip
            assert [(h, id(m)) for h, m in g.slots] == [(h, id(m)) for h, m in want]
        targets = [table._find_record(e).target for e in table.entries()]
        for m in members.values():
            assert m.refs == sum(t is m for t in targets)
        for g in groups.values():
            assert g.refs == sum(t is g for t in targets)
        assert set(profile._oneshots) == {t for t in targets if getattr(t, "action_set", None)}
        if step % 25 == 0:
            for frame in flows:
                out = interp.process(0, frame)
                assert out == nat.process(0, frame), step
                ports_seen.update(port for port, _ in out)
    assert 300 < errors < 2700  # both kinds of outcome were exercised
    assert 0 in ports_seen and len(ports_seen) >= 5  # misses, and members' ports

"""The Splitter domain API against an in-process servicer: which updates each call sends.

Run: .venv/bin/pytest controlplane/tests/test_controlplane_splitter.py
"""

import pytest
from p4.v1 import p4runtime_pb2

from controlplane import splitter as S
from controlplane.model import SplitterError, UserConfig, leg_a_count
from controlplane.p4info import P4InfoIndex
from controlplane.splitter import Splitter

INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)


@pytest.fixture
def sw(fake_target):
    servicer, addr = fake_target
    with Splitter.connect(addr) as splitter:
        splitter.servicer = servicer
        yield splitter


def updates_since(servicer, n):
    return [u for w in servicer.writes[n:] for u in w.updates]


def action_of(index, upd):
    entry = upd.entity.table_entry
    action = index.by_id(entry.action.action.action_id)
    names = {p.id: p.name for p in action.params}
    return action.preamble.alias, {
        names[p.param_id]: int.from_bytes(p.value, "big") for p in entry.action.action.params
    }


@pytest.mark.parametrize(
    "ratio,batch,k",
    [
        ((7, 3), 10, 7),
        ((9, 1), 100, 90),
        ((1, 1), 100, 50),
        ("0:1", 10, 0),
        ("1:0", 10, 10),
        ("70%", 10, 7),
        ("100%", 3, 3),
        ("0%", 3, 0),
    ],
)
def test_ratio_rule(ratio, batch, k):
    assert leg_a_count(ratio, batch) == k


@pytest.mark.parametrize(
    "ratio,batch,message",
    [
        (
            (2, 1),
            100,
            (
                r"ratio 2:1 does not fit batch 100: a\+b \(3\) must equal the batch size or "
                r"divide it"
            ),
        ),
        ("50%", 3, r"50% of batch 3 is 1.5 packets"),
        ("1:x", 10, "must be whole numbers"),
        ("0:0", 10, "not both 0"),
        ("150%", 10, "from 0% to 100%"),
    ],
)
def test_ratio_refused(ratio, batch, message):
    with pytest.raises(SplitterError, match=message):
        leg_a_count(ratio, batch)


def test_add_split_user_writes_one_entry(sw):
    n = len(sw.servicer.writes)
    sw.add_user(
        UserConfig(
            addr="10.0.0.2", mode="dc-split", batch=10, ratio=(7, 3), leg_a=1, leg_b=2, name="ue1"
        )
    )
    (upd,) = updates_since(sw.servicer, n)
    assert upd.type == INSERT
    entry = upd.entity.table_entry
    assert entry.table_id == sw.index.table(S.T_UE_V4).preamble.id
    assert entry.match[0].exact.value == bytes([10, 0, 0, 2])
    name, params = action_of(sw.index, upd)
    assert name == "split_dc"
    assert params["session"] != 0
    assert {k: v for k, v in params.items() if k != "session"} == {
        "user_idx": 0,
        "batch": 10,
        "leg_a_count": 7,
        "leg_a_port": 1,
        "leg_b_port": 2,
    }
    assert sw.users() == [UserConfig("10.0.0.2", "dc-split", 10, (7, 3), 1, 2, None, "ue1")]


def test_ipv6_user_goes_to_the_v6_table_and_indexes_are_distinct(sw):
    sw.add_user(UserConfig(addr="10.0.0.2"))
    n = len(sw.servicer.writes)
    sw.add_user(UserConfig(addr="2001:db8::2", mode="sc", port=2))
    (upd,) = updates_since(sw.servicer, n)
    assert upd.entity.table_entry.table_id == sw.index.table(S.T_UE_V6).preamble.id
    assert action_of(sw.index, upd) == ("forward_sc", {"user_idx": 1, "port": 2})


def test_set_user_keeps_index_and_session(sw):
    sw.add_user(UserConfig(addr="10.0.0.2", batch=100, ratio=(1, 1), name="ue1"))
    first = updates_since(sw.servicer, 0)[-1]
    _, before = action_of(sw.index, first)
    n = len(sw.servicer.writes)
    sw.set_user("ue1", ratio="9:1")
    (upd,) = updates_since(sw.servicer, n)
    assert upd.type == MODIFY
    _, after = action_of(sw.index, upd)
    assert after == dict(before, leg_a_count=90)


def test_batch_alone_keeps_the_proportion(sw):
    sw.add_user(UserConfig(addr="10.0.0.2", batch=100, ratio=(9, 1)))
    assert sw.set_user("10.0.0.2", batch=10).k == 9
    with pytest.raises(SplitterError, match="batch 15 does not fit the current ratio 9:1"):
        sw.set_user("10.0.0.2", batch=15)


@pytest.mark.parametrize("stored_pos, cleared", [(7, True), (4, True), (3, False)])
def test_batch_shrink_clears_a_stale_position_only_on_tofino(sw, arch, stored_pos, cleared):
    """B 10 -> 4: on TNA a position the new batch does not reach is cleared (the program
    cannot restart there by itself), one inside it continues; v1model's program restarts by
    itself, so nothing is written there."""
    cleared = cleared and arch == "tna"
    sw.add_user(UserConfig(addr="10.0.0.2", batch=10, ratio=(1, 1), name="ue1"))
    inst = sw.installed_user("ue1")
    sw.preset_user_registers("ue1", next_sn=5, batch_pos=stored_pos)
    n = len(sw.servicer.writes)
    sw.set_user("ue1", batch=4)
    registers_written = [
        u.entity.register_entry
        for u in updates_since(sw.servicer, n)
        if u.entity.HasField("register_entry")
    ]
    assert [(r.index.index, r.data.bitstring) for r in registers_written] == (
        [(inst.index, b"\x00")] if cleared else []
    )
    assert sw.user_registers("ue1")["batch_pos"] == (0 if cleared else stored_pos)


def test_dup_on_writes_group_before_entry_and_off_deletes_it_after(sw):
    sw.add_user(UserConfig(addr="10.0.0.2", batch=10, ratio=(7, 3), name="ue1"))
    n = len(sw.servicer.writes)
    sw.set_user("ue1", dup=True)
    group, entry = updates_since(sw.servicer, n)
    assert group.type == INSERT
    mg = group.entity.packet_replication_engine_entry.multicast_group_entry
    assert mg.multicast_group_id == S.DUP_GROUP_BASE + 0
    assert [(r.egress_port, r.instance) for r in mg.replicas] == [(1, 1), (2, 2)]
    assert entry.type == MODIFY and action_of(sw.index, entry)[0] == "duplicate_dc"
    assert action_of(sw.index, entry)[1]["mcast_grp"] == S.DUP_GROUP_BASE
    # The split survives duplication (kept in the entry's metadata).
    assert sw.users()[0].mode == "dc-dup" and sw.users()[0].k == 7
    n = len(sw.servicer.writes)
    back = sw.set_user("ue1", dup=False)
    entry, group = updates_since(sw.servicer, n)
    assert entry.type == MODIFY and action_of(sw.index, entry)[0] == "split_dc"
    assert action_of(sw.index, entry)[1]["leg_a_count"] == 7
    assert group.type == DELETE
    assert back.batch == 10 and back.k == 7 and sw.servicer.groups.keys() == set()


def test_del_user_and_index_reuse_gets_new_session(sw):
    sw.add_user(UserConfig(addr="10.0.0.2"))
    _, first = action_of(sw.index, updates_since(sw.servicer, 0)[-1])
    sw.del_user("10.0.0.2")
    assert sw.users() == []
    sw.add_user(UserConfig(addr="10.0.0.3"))
    _, second = action_of(sw.index, updates_since(sw.servicer, 0)[-1])
    assert second["user_idx"] == first["user_idx"] == 0
    assert second["session"] != first["session"]


@pytest.mark.parametrize(
    "cfg,message",
    [
        (UserConfig(addr="10.0.0.256"), "not an IPv4 or IPv6 address"),
        (
            UserConfig(addr="10.0.0.2", mode="split"),
            "mode 'split' is not one of dc-split, dc-credit, dc-dup, sc",
        ),
        (UserConfig(addr="10.0.0.2", batch=0), "batch 0 must be a whole number from 1 to 65535"),
        (
            UserConfig(addr="10.0.0.2", leg_a=7),
            r"leg_a port 7 is not a leg port: allowed 1 \(leg A\)",
        ),
        (UserConfig(addr="10.0.0.2", leg_a=2, leg_b=2), "leg_a and leg_b must differ"),
        (UserConfig(addr="10.0.0.2", mode="sc"), "an sc user needs a port"),
        (UserConfig(addr="10.0.0.2", mode="sc", port=0), "port 0 is not a leg port"),
        (UserConfig(addr="10.0.0.2", batch=100, ratio=(2, 1)), "does not fit batch 100"),
    ],
)
def test_bad_user_refused_before_any_write(sw, cfg, message):
    n = len(sw.servicer.writes)
    with pytest.raises(SplitterError, match=message):
        sw.add_user(cfg)
    assert len(sw.servicer.writes) == n


def test_unknown_and_duplicate_users(sw):
    sw.add_user(UserConfig(addr="10.0.0.2", name="ue1"))
    with pytest.raises(
        SplitterError, match=r"unknown user 'ue9': configured users are ue1 " r"\(10.0.0.2\)"
    ):
        sw.set_user("ue9", batch=10)
    with pytest.raises(SplitterError, match="already exists"):
        sw.add_user(UserConfig(addr="10.0.0.2"))
    with pytest.raises(SplitterError, match="a user named 'ue1' already exists"):
        sw.add_user(UserConfig(addr="10.0.0.3", name="ue1"))


def test_configure_ports_entries_and_roles(sw):
    sw.configure_ports(0, 1, 2, macs={1: ("02:00:00:00:00:01", "02:00:00:00:01:01")})
    l2 = [
        e
        for k, e in sw.servicer.entries.items()
        if e.table_id == sw.index.table(S.T_L2).preamble.id
    ]
    rules = sorted(
        (
            e.match[0].exact.value,
            len(e.match),
            e.priority,
            sw.index.by_id(e.action.action.action_id).preamble.alias,
            e.action.action.params[0].value,
        )
        for e in l2
    )
    assert rules == [
        (b"\x00", 2, S.PRIO_ETHERTYPE, "flood", bytes([S.FLOOD_GROUP])),
        (b"\x01", 1, S.PRIO_ANY, "forward", b"\x00"),
        (b"\x02", 1, S.PRIO_ANY, "forward", b"\x00"),
    ]
    ports = sw.ports()
    assert (ports.server, ports.leg_a, ports.leg_b) == (0, 1, 2)
    assert ports.macs == {1: ("02:00:00:00:00:01", "02:00:00:00:01:01")}
    n = len(sw.servicer.writes)
    assert sw.configure_ports(0, 1, 2, macs={1: ("02:00:00:00:00:01", "02:00:00:00:01:01")}) == []
    # Nothing but the flood group (INSERT refused as existing, then MODIFY) is written again.
    assert {u.entity.WhichOneof("entity") for u in updates_since(sw.servicer, n)} == {
        "packet_replication_engine_entry"
    }


def test_flood_group_is_inserted_then_modified_to_new_legs_and_reset_deletes_it(sw):
    def flood_ports():
        group = sw.servicer.groups[S.FLOOD_GROUP]
        return [(r.egress_port, r.instance) for r in group.replicas]

    sw.configure_ports(0, 1, 2)
    assert flood_ports() == [(1, 1), (2, 2)]
    n = len(sw.servicer.writes)
    sw.configure_ports(0, 3, 4)  # INSERT refused as existing, then MODIFY
    pre = [
        u
        for u in updates_since(sw.servicer, n)
        if u.entity.HasField("packet_replication_engine_entry")
    ]
    assert [p4runtime_pb2.Update.Type.Name(u.type) for u in pre] == ["INSERT", "MODIFY"]
    assert flood_ports() == [(3, 1), (4, 2)]
    assert f"DELETE multicast group {S.FLOOD_GROUP}" in sw.reset()
    assert S.FLOOD_GROUP not in sw.servicer.groups
    assert "DELETE multicast group" not in " ".join(sw.reset())  # gone already: NOT_FOUND


def test_apply_is_a_diff(sw):
    state = {
        "ports": {"server": 0, "leg_a": 1, "leg_b": 2},
        "users": {
            "ue1": {"addr": "10.0.0.2", "batch": 10, "ratio": "7:3"},
            "ue2": {"addr": "10.0.0.3", "mode": "sc", "port": 1},
        },
    }
    changes = sw.apply(state)
    assert "add user ue1" in changes and "add user ue2" in changes
    assert sw.apply(state) == []
    state["users"]["ue1"]["ratio"] = "1:1"
    del state["users"]["ue2"]
    n = len(sw.servicer.writes)
    assert sw.apply(state) == [
        "kept user ue2: not in the desired state (prune removes it)",
        "set user ue1: ratio 7:3 -> 1:1",
    ]
    assert [u.addr for u in sw.users()] == ["10.0.0.2", "10.0.0.3"]
    assert sw.apply(state, prune=True) == ["del user ue2"]
    kinds = [
        u.type
        for u in updates_since(sw.servicer, n)
        if u.entity.WhichOneof("entity") == "table_entry"
    ]
    assert kinds == [MODIFY, DELETE]


@pytest.mark.parametrize(
    "state,message",
    [
        ({"userz": {}}, r"unknown top-level key\(s\) \['userz'\]"),
        (
            {"users": {"ue1": {"addr": "10.0.0.2", "batchsize": 3}}},
            r"unknown key\(s\) \['batchsize'\]",
        ),
        ({"users": {"ue1": {"addr": "10.0.0.2"}, "ue2": {"addr": "10.0.0.2"}}}, "same address"),
        ({"ports": {"server": 1, "leg_a": 1, "leg_b": 2}}, "three different ports"),
        ({"ports": {"macs": {1: {"src": "zz"}}}}, "not a MAC address"),
    ],
)
def test_apply_refuses_bad_state_before_writing(sw, state, message):
    n = len(sw.servicer.writes)
    with pytest.raises(SplitterError, match=message):
        sw.apply(state)
    assert len(sw.servicer.writes) == n


def test_stats_reads_user_and_port_counters(sw):
    sw.add_user(UserConfig(addr="10.0.0.2", name="ue1"))
    cid = {n: sw.index.counter(n).preamble.id for n in (S.C_USER, S.C_PORT_TX, S.C_PORT_RX)}
    sw.servicer.counters[(cid[S.C_USER], 0)] = (5, 500)
    sw.servicer.counters[(cid[S.C_PORT_TX], 1)] = (3, 300)
    stats = sw.stats()
    assert stats["users"]["10.0.0.2"] == {
        "name": "ue1",
        "mode": "dc-split",
        "packets": 5,
        "bytes": 500,
    }
    assert stats["ports"]["leg_a"] == {
        "port": 1,
        "rx_packets": 0,
        "rx_bytes": 0,
        "tx_packets": 3,
        "tx_bytes": 300,
    }


def test_push_pipeline_sends_files(sw, tmp_path, p4info):
    info_path = tmp_path / "p.txtpb"
    info_path.write_text(str(p4info))
    (tmp_path / "cfg.json").write_bytes(b"{}")
    sw.push_pipeline(info_path, tmp_path / "cfg.json")
    assert sw.servicer.pipelines[-1].config.p4_device_config == b"{}"
    assert isinstance(sw.index, P4InfoIndex)


def test_sc_and_back_keeps_the_session(sw):
    """forward_sc has no session parameter: the session survives in the entry's metadata, so
    the data plane does not restart the SN when the user becomes a DC user again."""
    sw.add_user(UserConfig(addr="10.0.0.2", batch=4, ratio=(1, 1)))
    _, first = action_of(sw.index, updates_since(sw.servicer, 0)[-1])
    sw.set_user("10.0.0.2", mode="sc", port=2)
    sw.set_user("10.0.0.2", mode="dc-split")
    name, back = action_of(sw.index, updates_since(sw.servicer, 0)[-1])
    assert name == "split_dc" and back == first

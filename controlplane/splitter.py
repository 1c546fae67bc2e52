"""The domain API of the PDCP splitter: ports, users, statistics, declarative state.

    sw = Splitter.connect("127.0.0.1:9559", device_id=0, election_id=1)
    sw.push_pipeline("build/p4/dc_splitter.p4info.txtpb", "build/p4/dc_splitter.p4sim.json")
    sw.configure_ports(server_port=0, leg_a_port=1, leg_b_port=2)
    sw.add_user(UserConfig(addr="10.0.0.2", mode="dc-split", batch=100, ratio=(1, 1)))
    sw.set_user("10.0.0.2", batch=10, ratio=(9, 1))

The switch is the only store of state: every user is one entry of the per-user table
(knobs in action parameters, the user's name and remembered split in the entry's P4Runtime
`metadata`), so any controller process can read back and change what another one wrote.
Changes are P4Runtime MODIFYs of that one entry, which never touch the SN register (a
shrink of the batch on Tofino clears a batch position left beyond the new size: `set_user`).
"""

from __future__ import annotations

import ipaddress
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Self

from p4.v1 import p4runtime_pb2

from controlplane import entries as E
from controlplane.client import DEFAULT_ADDR, P4RuntimeClient, P4RuntimeError, P4RuntimeWriteError
from controlplane.limits import MAX_USERS
from controlplane.model import (
    ADAPTIVE_MODES,
    DEFAULT_PORTS,
    MODES,
    PortConfig,
    SplitterError,
    UserConfig,
    leg_a_count,
    parse_ratio,
    reduced_ratio,
    validate_ports,
    validate_user,
)
from controlplane.p4info import PIPELINE_ARCHS, P4InfoIndex, format_mac, load_p4info
from controlplane.registers import RegisterAccess
from controlplane.statefile import parse_state
from dccommon.cliargs import InputFileError, read_bounded

# Names in the P4 program (p4src/), fully qualified as p4c writes them in the P4Info.
T_UE_V4 = "DcIngress.ue_sessions.ue_sessions_v4"
T_UE_V6 = "DcIngress.ue_sessions.ue_sessions_v6"
A_SPLIT = "DcIngress.ue_sessions.split_dc"
A_DUP = "DcIngress.ue_sessions.duplicate_dc"
A_SC = "DcIngress.ue_sessions.forward_sc"
# The -D DC_ADAPTIVE profile only: split by credit, and which user and leg a report is about.
A_CREDIT = "DcIngress.ue_sessions.split_credit"
T_FEEDBACK = "DcIngress.leg_credit.feedback_users"
A_CREDIT_LEG = "DcIngress.leg_credit.credit_leg"
T_L2 = "DcIngress.l2_forwarding.l2_forwards"
A_FORWARD = "DcIngress.l2_forwarding.forward"
A_FLOOD = "DcIngress.l2_forwarding.flood"
T_MACS = "DcEgress.egress_macs"
A_SET_MACS = "DcEgress.set_macs"
A_SET_SRC_MAC = "DcEgress.set_src_mac"
C_USER = "DcIngress.ue_sessions.user_counter"
C_PORT_RX = "DcIngress.port_rx_counter"
C_PORT_TX = "DcEgress.port_tx_counter"
R_NEXT_SN = "DcIngress.pdcp_sequencer.next_sn"
R_BATCH_POS = "DcIngress.pdcp_sequencer.batch_pos"
R_SESSION = "DcIngress.pdcp_sequencer.user_session"
# the per-user cells, indexed by user_idx; the session first (it decides what the others mean)
_USER_REGISTERS = (("session", R_SESSION), ("next_sn", R_NEXT_SN), ("batch_pos", R_BATCH_POS))

FLOOD_GROUP = 1  # multicast group flooding the legs (ARP, unknown downlink if enabled)
MAX_DEVICE_CONFIG_BYTES = 512 * 2**20  # a Tofino config (binary, context, bfrt) is tens of MB
DUP_GROUP_BASE = 1024  # user i duplicates through multicast group DUP_GROUP_BASE + i
ETHERTYPE_ARP = 0x0806
PRIO_ETHERTYPE, PRIO_ANY = 20, 10  # l2_forwards: a specific ethertype beats the port rule


@dataclass
class _Installed:
    """A user as read back from the switch."""

    config: UserConfig
    index: int
    session: int
    entry: p4runtime_pb2.TableEntry


class Splitter:
    def __init__(self, client: P4RuntimeClient, thrift_addr: str | None = None):
        """`thrift_addr`: BMv2's Thrift runtime (HOST:PORT), used for register access when the
        target's P4Runtime server does not implement it (BMv2); unused on p4sim."""
        self.client = client
        self._index: P4InfoIndex | None = None
        self.registers = RegisterAccess(client, lambda: self.index, thrift_addr)

    @classmethod
    def connect(
        cls,
        addr: str = DEFAULT_ADDR,
        device_id: int = 0,
        election_id: int = 1,
        timeout_s: float = 5.0,
        thrift_addr: str | None = None,
    ) -> Splitter:
        """Connect and become primary. The pipeline is read from the target when it has one."""
        return cls(P4RuntimeClient(addr, device_id, election_id, timeout_s), thrift_addr)

    def close(self) -> None:
        self.registers.close()
        self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- pipeline ------------------------------------------------------------

    @property
    def index(self) -> P4InfoIndex:
        if self._index is None:
            self._set_index(P4InfoIndex(self.client.get_p4info()))
        return self._index

    def _set_index(self, index: P4InfoIndex) -> None:
        self._index = index
        self.client.describe_update = lambda upd: E.describe_update(index, upd)

    def push_pipeline(self, p4info_path: str | Path, device_config_path: str | Path) -> None:
        """SetForwardingPipelineConfig(VERIFY_AND_COMMIT) with a P4Info file and the target's
        device config (p4sim's JSON, or BMv2's JSON from p4c), sent as the file's bytes."""
        p4info = load_p4info(p4info_path)
        try:
            config = read_bounded(device_config_path, MAX_DEVICE_CONFIG_BYTES, "a device config")
        except InputFileError as exc:
            raise SplitterError(str(exc)) from None
        self.client.set_pipeline(p4info, config)
        self._set_index(P4InfoIndex(p4info))

    def held_state(self) -> list[str]:
        """What the switch holds of this program, in words (what a new pipeline would
        discard): ["users ue1 (10.0.0.2), 10.0.0.3", "5 port rules and MAC rewrites"]."""
        users = [f"{u.name} ({u.addr})" if u.name else u.addr for u in self.users()]
        rules = len(self._read_table(T_L2)) + len(self._read_table(T_MACS))
        held = [f"{len(users)} user(s): {', '.join(users)}"] if users else []
        return held + ([f"{rules} port rule(s) and MAC rewrite(s)"] if rules else [])

    # -- low-level helpers -----------------------------------------------------

    def _read_table(self, table: str) -> list[E.DecodedEntry]:
        return [
            E.decode_table_entry(self.index, ent.table_entry)
            for ent in self.client.read([E.table_read(self.index, table)])
        ]

    def _entry(self, table, match, action=None, params=None, priority=0, metadata=b""):
        return E.table_entry(self.index, table, match, action, params, priority, metadata)

    # -- ports -----------------------------------------------------------------

    def configure_ports(
        self,
        server_port: int = 0,
        leg_a_port: int = 1,
        leg_b_port: int = 2,
        macs: dict | None = None,
        flood_unknown: bool = False,
    ) -> list[str]:
        """Forwarding for everything that is not a user's downlink: the legs go to the server
        port; ARP from the server is flooded to both legs (multicast group FLOOD_GROUP); with
        flood_unknown, every other non-user frame from the server is flooded too, else it is
        dropped. `macs` maps an egress port to (src_mac, dst_mac | None): frames leaving that
        port get those addresses. Applied as a diff; returns what changed."""
        ports = validate_ports(
            PortConfig(server_port, leg_a_port, leg_b_port, macs or {}, flood_unknown)
        )
        return self._sync_ports(ports)

    def ports(self) -> PortConfig:
        """The port roles as configured on the switch (DESIGN.md defaults when unconfigured)."""
        roles, macs, flood_unknown = {}, {}, False
        for dec in self._read_table(T_L2):
            meta = E.load_meta(dec.metadata)
            if "role" in meta:
                roles[meta["role"]] = dec.match["ingress_port"]
                if dec.action == A_FORWARD:
                    roles["server"] = dec.params["port"]
            if meta.get("rule") == "flood_unknown":
                flood_unknown = True
        for dec in self._read_table(T_MACS):
            dst = dec.params.get("dst_mac")
            macs[dec.match["egress_port"]] = (
                format_mac(dec.params["src_mac"]),
                None if dst is None else format_mac(dst),
            )
        if not {"server", "leg_a", "leg_b"} <= set(roles):
            return PortConfig(macs=macs, flood_unknown=flood_unknown)
        return PortConfig(roles["server"], roles["leg_a"], roles["leg_b"], macs, flood_unknown)

    def _desired_port_entries(self, ports: PortConfig) -> list[p4runtime_pb2.TableEntry]:
        entries = []
        for role in ("leg_a", "leg_b"):
            entries.append(
                self._entry(
                    T_L2,
                    {"ingress_port": ports.roles[role], "ether_type": None},
                    A_FORWARD,
                    {"port": ports.server},
                    PRIO_ANY,
                    E.dump_meta({"role": role}),
                )
            )
        entries.append(
            self._entry(
                T_L2,
                {"ingress_port": ports.server, "ether_type": ETHERTYPE_ARP},
                A_FLOOD,
                {"mcast_grp": FLOOD_GROUP},
                PRIO_ETHERTYPE,
                E.dump_meta({"rule": "arp"}),
            )
        )
        if ports.flood_unknown:
            entries.append(
                self._entry(
                    T_L2,
                    {"ingress_port": ports.server, "ether_type": None},
                    A_FLOOD,
                    {"mcast_grp": FLOOD_GROUP},
                    PRIO_ANY,
                    E.dump_meta({"rule": "flood_unknown"}),
                )
            )
        for port, (src, dst) in sorted(ports.macs.items()):
            if dst is None:
                entries.append(
                    self._entry(T_MACS, {"egress_port": port}, A_SET_SRC_MAC, {"src_mac": src})
                )
            else:
                entries.append(
                    self._entry(
                        T_MACS, {"egress_port": port}, A_SET_MACS, {"src_mac": src, "dst_mac": dst}
                    )
                )
        return entries

    def _sync_ports(self, ports: PortConfig) -> list[str]:
        changes: list[str] = []
        flood = [(ports.leg_a, 1), (ports.leg_b, 2)]
        # INSERT, or MODIFY when it exists: no PRE read needed (not every target has one).
        try:
            self.client.write([E.multicast_group_update("INSERT", FLOOD_GROUP, flood)])
            changes.append(f"flood group {FLOOD_GROUP} -> ports {ports.leg_a}, {ports.leg_b}")
        except P4RuntimeError as exc:
            if exc.codes != {"ALREADY_EXISTS"}:
                raise
            self.client.write([E.multicast_group_update("MODIFY", FLOOD_GROUP, flood)])
        desired = self._desired_port_entries(ports)
        for table in (T_L2, T_MACS):
            tid = self.index.table(table).preamble.id
            want = {E.match_key(e): e for e in desired if e.table_id == tid}
            have = {E.match_key(d.raw): d.raw for d in self._read_table(table)}
            updates = []
            for key, entry in have.items():
                if key not in want:
                    updates.append(E.update("DELETE", "table_entry", entry))
            for key, entry in want.items():
                if key not in have:
                    updates.append(E.update("INSERT", "table_entry", entry))
                elif not E.same_action(have[key], entry):
                    updates.append(E.update("MODIFY", "table_entry", entry))
            self.client.write(updates)
            changes += [E.describe_update(self.index, u) for u in updates]
        return changes

    # -- users -----------------------------------------------------------------

    def _installed(self) -> dict[str, _Installed]:
        users = {}
        for table in (T_UE_V4, T_UE_V6):
            for dec in self._read_table(table):
                inst = self._decode_user(dec)
                users[inst.config.addr] = inst
        return users

    def _decode_user(self, dec: E.DecodedEntry) -> _Installed:
        width = 32 if dec.table == T_UE_V4 else 128
        addr = str(
            ipaddress.ip_address(dec.match["ue_addr"])
            if width == 32
            else ipaddress.IPv6Address(dec.match["ue_addr"])
        )
        meta = E.load_meta(dec.metadata)
        p = dec.params
        batch = meta.get("batch", 100)
        k = meta.get("k", batch // 2)
        legs = (meta.get("leg_a", DEFAULT_PORTS[1]), meta.get("leg_b", DEFAULT_PORTS[2]))
        if dec.action in (A_SPLIT, A_CREDIT):
            batch, k, legs = p["batch"], p["leg_a_count"], (p["leg_a_port"], p["leg_b_port"])
            mode = "dc-split" if dec.action == A_SPLIT else "dc-credit"
            cfg = UserConfig(addr, mode, batch, reduced_ratio(k, batch), *legs)
        elif dec.action == A_DUP:
            cfg = UserConfig(addr, "dc-dup", batch, reduced_ratio(k, batch), *legs)
        else:
            cfg = UserConfig(addr, "sc", batch, reduced_ratio(k, batch), *legs, port=p["port"])
        cfg.name = meta.get("name")
        return _Installed(cfg, p["user_idx"], p.get("session", meta.get("session", 0)), dec.raw)

    def users(self) -> list[UserConfig]:
        """Every configured user, read back from the switch."""
        return [inst.config for inst in sorted(self._installed().values(), key=lambda i: i.index)]

    def _find(self, user: str, installed: dict[str, _Installed]) -> _Installed:
        try:
            addr = str(ipaddress.ip_address(user))
        except ValueError:
            named = [i for i in installed.values() if i.config.name == user]
            if named:
                return named[0]
            addr = None
        if addr in installed:
            return installed[addr]
        known = ", ".join(f"{i.config.name or '-'} ({a})" for a, i in installed.items())
        raise SplitterError(f"unknown user {user!r}: configured users are {known or 'none'}")

    def _user_writes(
        self, kind: str, cfg: UserConfig, index: int, session: int
    ) -> p4runtime_pb2.Update:
        table = T_UE_V4 if ipaddress.ip_address(cfg.addr).version == 4 else T_UE_V6
        # The session goes into the metadata too: forward_sc has no session parameter, and
        # an sc user turned back into a DC user must keep its SN.
        meta = {
            "name": cfg.name,
            "batch": cfg.batch,
            "k": cfg.k,
            "leg_a": cfg.leg_a,
            "leg_b": cfg.leg_b,
            "session": session,
        }
        if cfg.mode in ("dc-split", "dc-credit"):
            action, params = A_SPLIT if cfg.mode == "dc-split" else A_CREDIT, {
                "user_idx": index,
                "session": session,
                "batch": cfg.batch,
                "leg_a_count": cfg.k,
                "leg_a_port": cfg.leg_a,
                "leg_b_port": cfg.leg_b,
            }
        elif cfg.mode == "dc-dup":
            action, params = A_DUP, {
                "user_idx": index,
                "session": session,
                "mcast_grp": DUP_GROUP_BASE + index,
            }
        else:
            action, params = A_SC, {"user_idx": index, "port": cfg.port}
        entry = self._entry(
            table, {"ue_addr": cfg.addr}, action, params, metadata=E.dump_meta(meta)
        )
        return E.update(kind, "table_entry", entry)

    @property
    def adaptive(self) -> bool:
        """The pipeline is the -D DC_ADAPTIVE profile (feedback reports, credit split)."""
        return any(
            self.index.name_of(t.preamble.id) == T_FEEDBACK for t in self.index.p4info.tables
        )

    def _check_mode(self, cfg: UserConfig) -> None:
        if cfg.mode in ADAPTIVE_MODES and not self.adaptive:
            raise SplitterError(
                f"mode {cfg.mode} needs the adaptive profile of the program "
                f"(-D DC_ADAPTIVE: build/p4/dc_splitter_adaptive.*, `make p4-adaptive`)"
            )

    def _feedback_writes(self, kind: str, cfg: UserConfig, index: int) -> list:
        """The adaptive profile's (leg port, user) -> (user index, leg) entries, so that the
        switch credits a report to its user; none for sc or IPv6 users (reports name IPv4
        users) or on other profiles."""
        if not self.adaptive or cfg.mode == "sc" or ipaddress.ip_address(cfg.addr).version != 4:
            return []
        return [
            E.update(
                kind,
                "table_entry",
                self._entry(
                    T_FEEDBACK,
                    {"ingress_port": port, "ue_addr": cfg.addr},
                    A_CREDIT_LEG if kind != "DELETE" else None,
                    {"user_idx": index, "leg": leg} if kind != "DELETE" else None,
                ),
            )
            for leg, port in ((0, cfg.leg_a), (1, cfg.leg_b))
        ]

    def _dup_group(self, kind: str, cfg: UserConfig, index: int) -> p4runtime_pb2.Update:
        legs = [(cfg.leg_a, 1), (cfg.leg_b, 2)]
        return E.multicast_group_update(kind, DUP_GROUP_BASE + index, legs)

    def add_user(self, cfg: UserConfig) -> UserConfig:
        """Install a new user; its SN starts at 0 and its batch at position 0."""
        cfg = validate_user(cfg, self.ports())
        self._check_mode(cfg)
        installed = self._installed()
        if cfg.addr in installed:
            raise SplitterError(f"user {cfg.addr} already exists (change it with dcctl user set)")
        if cfg.name and any(i.config.name == cfg.name for i in installed.values()):
            raise SplitterError(f"a user named {cfg.name!r} already exists")
        used = {i.index for i in installed.values()}
        index = next((i for i in range(MAX_USERS) if i not in used), None)
        if index is None:
            raise SplitterError(f"the switch holds at most {MAX_USERS} users")
        # A fresh session id makes the data plane restart SN and batch position for this
        # index, whatever an earlier user of the index left in the registers.
        session = secrets.randbits(32) or 1
        if cfg.mode == "dc-dup":
            self.client.write([self._dup_group("INSERT", cfg, index)])
        self.client.write([self._user_writes("INSERT", cfg, index, session)])
        self.client.write(self._feedback_writes("INSERT", cfg, index))
        return cfg

    def set_user(
        self,
        user: str,
        *,
        dup: bool | None = None,
        mode: str | None = None,
        batch: int | None = None,
        ratio=None,
        leg_a: int | None = None,
        leg_b: int | None = None,
        port: int | None = None,
        name: str | None = None,
    ) -> UserConfig:
        """Change a user live (one MODIFY of its entry: SN and batch continue). `user` is the
        address or the name. dup=True/False turns duplication on/off keeping batch and ratio.
        A new batch without a ratio keeps the current proportion (it must fit the batch)."""
        installed = self._installed()
        inst = self._find(user, installed)
        old = inst.config
        new = replace(old)
        if dup is not None:
            if mode is not None:
                raise SplitterError("give either dup or mode, not both")
            if old.mode == "sc":
                raise SplitterError(
                    f"user {user} is an sc user: duplication needs a DC user "
                    f"(set mode dc-dup with leg_a and leg_b)"
                )
            new.mode = "dc-dup" if dup else "dc-split"
        if mode is not None:
            new.mode = mode
        if batch is not None:
            new.batch = batch
        if ratio is not None:
            new.ratio = ratio
        elif batch is not None and old.mode != "sc":
            a, b = old.ratio
            if batch % (a + b):
                raise SplitterError(
                    f"batch {batch} does not fit the current ratio {a}:{b} "
                    f"(a+b = {a + b} must divide it): give a ratio too"
                )
        for attr, value in (("leg_a", leg_a), ("leg_b", leg_b), ("port", port), ("name", name)):
            if value is not None:
                setattr(new, attr, value)
        if new.mode != "sc" and port is None:
            new.port = None  # leaving sc: its port no longer applies
        new = validate_user(new, self.ports())
        self._check_mode(new)
        if name and any(i.config.name == name and a != old.addr for a, i in installed.items()):
            raise SplitterError(f"a user named {name!r} already exists")
        if new.key() == old.key():
            return new
        was_dup, is_dup = old.mode == "dc-dup", new.mode == "dc-dup"
        if is_dup:
            # The group must hold the right legs before the entry points to it.
            self.client.write([self._dup_group("MODIFY" if was_dup else "INSERT", new, inst.index)])
        self.client.write([self._user_writes("MODIFY", new, inst.index, inst.session)])
        shrunk = new.mode == old.mode != "sc" and new.batch < old.batch
        if shrunk and self.index.arch in PIPELINE_ARCHS:  # v1model restarts by itself
            self._restart_stale_batch(inst, new.batch)
        if was_dup and not is_dup:
            self.client.write([self._dup_group("DELETE", old, inst.index)])
        if (old.mode == "sc", old.leg_a, old.leg_b) != (new.mode == "sc", new.leg_a, new.leg_b):
            self.client.write(self._feedback_writes("DELETE", old, inst.index))
            self.client.write(self._feedback_writes("INSERT", new, inst.index))
        return new

    def _restart_stale_batch(self, inst, batch: int) -> None:
        """After B shrank below the user's stored batch position, make the next packet start
        a batch at position 0, on Tofino. v1model's program does it by itself (a stale
        position reads as 0 and stores 1); a Tofino stateful ALU updates a cell in at most
        two ways, so the TNA program would store 0 and give position 0 twice. Clearing the
        cell here gives it v1model's sequence; only a packet racing this write still sees
        the data plane's own rule (p4src/README.md, "Tofino")."""
        if self.registers.read(R_SESSION, inst.index) != inst.session:
            return  # no packet since the index was assigned: the data plane restarts at 0
        if self.registers.read(R_BATCH_POS, inst.index) >= batch:
            self.registers.write(R_BATCH_POS, inst.index, 0)

    def installed_user(self, user: str):
        """The user as installed (config, index, session), read once: for `write_ratio`."""
        return self._find(user, self._installed())

    def write_ratio(self, inst, ratio: tuple[int, int]) -> UserConfig:
        """One MODIFY of a split user's ratio without reading the switch first: for a control
        loop that holds the entry (`installed_user`) and is the only writer of this user. The
        batch, legs, mode and session stay; the SN continues."""
        if inst.config.mode not in ("dc-split", "dc-credit"):
            raise SplitterError(
                f"write_ratio needs a dc-split or dc-credit user, not {inst.config.mode}"
            )
        new = replace(inst.config, ratio=ratio)
        new = replace(new, ratio=reduced_ratio(new.k, new.batch))
        self.client.write([self._user_writes("MODIFY", new, inst.index, inst.session)])
        inst.config = new
        return new

    def del_user(self, user: str) -> UserConfig:
        inst = self._find(user, self._installed())
        self.client.write([E.update("DELETE", "table_entry", inst.entry)])
        self.client.write(self._feedback_writes("DELETE", inst.config, inst.index))
        if inst.config.mode == "dc-dup":
            self.client.write([self._dup_group("DELETE", inst.config, inst.index)])
        return inst.config

    # -- statistics --------------------------------------------------------------

    def user_registers(self, user: str) -> dict[str, int]:
        """The user's next SN and batch position as the data plane holds them (over
        P4Runtime, or BMv2's Thrift runtime: see `controlplane.registers`)."""
        inst = self._find(user, self._installed())
        values = {key: self.registers.read(reg, inst.index) for key, reg in _USER_REGISTERS}
        if values["session"] != inst.session:  # no packet since the index was (re)assigned
            values.update(next_sn=0, batch_pos=0)
        del values["session"]
        return values

    def preset_user_registers(self, user: str, next_sn: int, batch_pos: int = 0) -> dict:
        """Make the user's next packet carry SN `next_sn` at batch position `batch_pos` (e.g.
        to test the SN wrap without sending 2^18 packets). Returns the cells as they were
        ({register name: value}), for a caller that wants to put them back."""
        inst = self._find(user, self._installed())
        # The session cell must name this user, or the data plane would restart at 0.
        wanted = {"session": inst.session, "next_sn": next_sn, "batch_pos": batch_pos}
        before = {}
        for key, reg in _USER_REGISTERS:
            before[reg] = self.registers.read(reg, inst.index)
            self.registers.write(reg, inst.index, wanted[key])
        return before

    def stats(self) -> dict:
        """Counters: {"time": unix time, "users": {addr: {name, mode, packets, bytes}},
        "ports": {role: {port, rx_packets, rx_bytes, tx_packets, tx_bytes}}}. Byte counts
        are frame lengths as received by the switch (BMv2's counters count ingress length)."""
        installed = self._installed()
        ports = self.ports()
        requests = [E.counter_read(self.index, C_USER, i.index) for i in installed.values()]
        for port in ports.roles.values():
            requests += [
                E.counter_read(self.index, C_PORT_RX, port),
                E.counter_read(self.index, C_PORT_TX, port),
            ]
        now = time.time()
        values: dict[tuple[int, int], tuple[int, int]] = {}
        for ent in self.client.read(requests):
            c = ent.counter_entry
            values[(c.counter_id, c.index.index)] = (c.data.packet_count, c.data.byte_count)
        cid = {n: self.index.counter(n).preamble.id for n in (C_USER, C_PORT_RX, C_PORT_TX)}
        users = {}
        for addr, inst in sorted(installed.items(), key=lambda kv: kv[1].index):
            pkts, byts = values.get((cid[C_USER], inst.index), (0, 0))
            users[addr] = {
                "name": inst.config.name,
                "mode": inst.config.mode,
                "packets": pkts,
                "bytes": byts,
            }
        port_stats = {}
        for role, port in ports.roles.items():
            rx = values.get((cid[C_PORT_RX], port), (0, 0))
            tx = values.get((cid[C_PORT_TX], port), (0, 0))
            port_stats[role] = {
                "port": port,
                "rx_packets": rx[0],
                "rx_bytes": rx[1],
                "tx_packets": tx[0],
                "tx_bytes": tx[1],
            }
        return {"time": now, "users": users, "ports": port_stats}

    # -- whole state ---------------------------------------------------------------

    def apply(self, state: dict, prune: bool = False) -> list[str]:
        """Make the switch hold `state` (schema: controlplane/docs/reference.md): ports and
        MACs, then users added or changed live (SN continues). Users on the switch that `state`
        does not list are removed with prune=True, else kept (and named in the result).
        Everything is validated before the first write. Returns the changes made, one line
        each."""
        ports, users = parse_state(state)
        changes = self._sync_ports(ports)
        installed = self._installed()
        wanted = {u.addr: u for u in users}
        for addr, inst in installed.items():
            if addr in wanted:
                continue
            if prune:
                self.del_user(addr)
                changes.append(f"del user {inst.config.name or addr}")
            else:
                changes.append(
                    f"kept user {inst.config.name or addr}: not in the desired state "
                    "(prune removes it)"
                )
        for addr, cfg in wanted.items():
            if addr not in installed:
                self.add_user(cfg)
                changes.append(f"add user {cfg.name or addr}")
            elif installed[addr].config.key() != cfg.key():
                self.set_user(
                    addr,
                    mode=cfg.mode,
                    batch=cfg.batch if cfg.mode != "sc" else None,
                    ratio=cfg.ratio if cfg.mode != "sc" else None,
                    leg_a=cfg.leg_a,
                    leg_b=cfg.leg_b,
                    port=cfg.port,
                    name=cfg.name,
                )
                changes.append(
                    f"set user {cfg.name or addr}: {_describe_change(installed[addr].config, cfg)}"
                )
        return changes

    def reset(self) -> list[str]:
        """Remove every user, port rule, MAC rewrite and multicast group this program uses."""
        changes = []
        for inst in self._installed().values():
            self.del_user(inst.config.addr)
            changes.append(f"del user {inst.config.name or inst.config.addr}")
        for table in (T_L2, T_MACS):
            updates = [E.update("DELETE", "table_entry", d.raw) for d in self._read_table(table)]
            self.client.write(updates)
            changes += [E.describe_update(self.index, u) for u in updates]
        try:
            self.client.write([E.multicast_group_update("DELETE", FLOOD_GROUP, [])])
            changes.append(f"DELETE multicast group {FLOOD_GROUP}")
        except P4RuntimeError as exc:
            if exc.codes != {"NOT_FOUND"}:
                raise
        return changes


def _settings(u: UserConfig) -> dict:
    if u.mode == "sc":
        return {"mode": u.mode, "port": u.port, "name": u.name}
    a, b = reduced_ratio(u.k, u.batch)
    return {
        "mode": u.mode,
        "batch": u.batch,
        "ratio": f"{a}:{b}",
        "leg_a": u.leg_a,
        "leg_b": u.leg_b,
        "name": u.name,
    }


def _describe_change(old: UserConfig, new: UserConfig) -> str:
    """'ratio 7:3 -> 1:1, leg_b 2 -> 3': the settings a user change touches."""
    before, after = _settings(old), _settings(new)
    keys = list(dict.fromkeys([*before, *after]))
    return ", ".join(
        f"{k} {before.get(k)} -> {after.get(k)}" for k in keys if before.get(k) != after.get(k)
    )


__all__ = [
    "MODES",
    "P4RuntimeWriteError",
    "PortConfig",
    "Splitter",
    "SplitterError",
    "UserConfig",
    "leg_a_count",
    "parse_ratio",
    "parse_state",
]

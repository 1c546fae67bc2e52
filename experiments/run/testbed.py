"""The DC testbed of DESIGN.md section 2, built in network namespaces for one run.

    server ns --veth(port 0)-- switch ns [p4sim | simple_switch_grpc]
    switch ns --veth(port 1)-- eNB-A ns [linkem A: that veth <-> a veth into the bridge] --veth-- DC client
    switch ns --veth(port 2)-- eNB-B ns [linkem B ...]                           --veth-- DC client
    DC client ns: pdcp-agent on its two leg veths, a tap carrying the client's IP
    SC clients hang off the eNB bridges (one namespace each). A leg that carries the DC client
    alone has no bridge: linkem's veth leads straight to the client.
    MPTCP device (when a flow is kind mptcp or mpquic): one namespace with a veth into each eNB bridge,
    an address per leg (MP_ADDRS), source routing per address, kernel MPTCP subflow endpoints.

Addressing is one IPv4 subnet with static neighbour entries everywhere: the server holds each
client's real MAC (the DC client's is its tap's), so the switch needs no MAC rewrite and the
eNB bridges deliver by destination MAC (no ARP crosses the switch). The switch's P4Runtime server
listens on a Unix socket, which every namespace shares, so the controller (this process, in
the root namespace) reaches it without any address in the root namespace.

Everything is torn down in close(), which runs on success, failure and Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from controlplane.policies import KNOB_NAMES, POLICY_KNOBS
from dccommon.processes import stop_process
from experiments.run import switches
from experiments.run.netns import (
    Namespace,
    NetnsError,
    Topology,
    bridge,
    offloads_off,
    run,
    unique_prefix,
    veth_pair,
)
from experiments.run.parts import MP_ADDRS, RUN_DIR, TestbedError, venv_tool, wait_for
from experiments.run.switches import SERVING_SWITCH_TIMEOUT_S, SWITCH_ROLES, RemoteSwitch
from hostagents.agent_cmd import AGENT_BIN, IO_PATHS, agent_argv, leg_vdev, wait_ready

DPDK_RUN_DIR = Path("/var/run/dpdk")
LEG_MTU = 1600  # PDCP header + inner ethertype add 5 bytes on the legs
# The agent's receive ring per leg, in frames: a linkem that found many frames due sends them
# back to back, and DPDK's default ring (512) overflowed at 2 x 500 Mbit/s once no bridge
# slowed those bursts (the PDCP SNs the agent skipped). 4,096 frames: 8 MiB, 50 ms at 80 kpps.
AGENT_LEG_RING_FRAMES = 4096
# TCP's buffer ceilings in every namespace of a run. A new namespace's send ceiling is the
# kernel's 4 MiB, whatever the host set (its receive ceiling, 32 MiB here, is set the same
# way so that no host leaves it lower): at NR leg rates a sender's 4 MiB held its
# window below the path's BDP (6 MB at 2 x 1000 Mbit/s and 24 ms), while at the paper's 20
# Mbit/s legs drops in the 1000-frame queues stop a window near 3 MB, below either ceiling.
TCP_BUFFER_MAX_BYTES = 32 << 20
SERVER_ADDR = "10.0.0.1"
DC_ADDR = "10.0.0.2"
PREFIXLEN = 24
PORTS = {"server": 0, "a": 1, "b": 2}
CONTROL_ELECTION_ID = 1000  # the loop's daemon is primary (PacketIns go to the primary)
# The MPTCP baseline's device: one address per leg, each an `sc` user of the switch, so each
# subflow rides its own leg end to end (no split, no agent).
MP_LEGS = {"mp": "a", "mp-b": "b"}  # host name -> leg


def claim_prefix(tag: str = "dx") -> str:
    """A run's name prefix, unique on this host for as long as the run lives: claimed by
    creating RUN_DIR/<prefix>.pid exclusively (the owner file `dcexp clean` reads), so
    several runs at once (several Ray workers on one host) never share one, whatever their
    process ids. A prefix whose namespaces a dead run left behind is passed over."""
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    for _ in range(1000):
        prefix = unique_prefix(tag)
        pidfile = RUN_DIR / f"{prefix}.pid"
        try:
            fd = os.open(pidfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        if leftovers(prefix):
            pidfile.unlink()
            continue
        return prefix
    raise TestbedError(f"no free run prefix in {RUN_DIR}: run `sudo dcexp clean`")


def release_prefix(prefix: str) -> None:
    """Give a claimed prefix back (Testbed.close does it for a testbed that was built)."""
    (RUN_DIR / f"{prefix}.pid").unlink(missing_ok=True)


def sc_addr(leg: str, index: int) -> str:
    return f"10.0.0.{(10 if leg == 'a' else 20) + index}"


@dataclass
class Host:
    name: str  # role: server, dc, sc-a0, ...
    ns: Namespace
    ifname: str
    addr: str
    mac: str = ""


def link_mac(ns: Namespace | None, ifname: str) -> str:
    argv = ["ip", "-j", "link", "show", "dev", ifname]
    out = (
        ns.run(argv).stdout
        if ns
        else subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    )
    return json.loads(out)[0]["address"]


@dataclass
class Testbed:
    """One run's topology and the parts running in it."""

    prefix: str
    config: dict  # a resolved run config (links, dc, t_reordering_ms, flows)
    workdir: Path
    target: str = "p4sim"
    engine: str | None = None  # p4sim --engine; None: switches.p4sim_engine's default
    link_kind: str = "linkem"
    # linkem's --departure-slack-us: µs (0: each frame at its due time), or "auto": chosen per
    # leg from its rate (links.departure_slack_us), the choice kept in link_slack_us
    departure_slack_us: int | str = "auto"
    seed: int = 1
    agent_cpu: int = 0  # the agent's DPDK lcore (experiments/run/cpu.py pins the rest)
    # how the testbed's own parts read and write their veths (agent_cmd.IO_PATHS): AF_PACKET
    # rings, or AF_XDP sockets (XDP in veth's driver): the pdcp-agent's legs, linkem, and
    # p4sim's native engine (the interpreter, BMv2 and netem stay on AF_PACKET)
    io: str = "afpacket"
    remote: RemoteSwitch | None = None  # target "remote": a switch we only drive
    hosts: dict[str, Host] = field(default_factory=dict)
    links: dict = field(default_factory=dict)  # leg -> running link emulator
    link_slack_us: dict = field(default_factory=dict)  # leg -> its linkem's departure slack
    # leg -> its linkem's SCHED_FIFO priority (0: ordinary, as under a niced dcexp; None: netem)
    link_rt_priority: dict = field(default_factory=dict)
    splitter: object | None = None
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    _topo: Topology | None = None
    _borrowed: dict = field(default_factory=dict)  # cabled interface -> (namespace, its MTU)

    @property
    def ports(self) -> dict[str, int]:
        """Switch port per side (server, a, b): DESIGN.md's, or the remote switch's map."""
        if self.remote is None:
            return PORTS
        return {side: self.remote.ports[role] for side, role in zip(PORTS, SWITCH_ROLES)}

    def _cabled(self, role: str) -> str | None:
        return self.remote.interfaces[role] if self.remote is not None else None

    # ------------------------------------------------------------------ build
    def __enter__(self) -> Self:
        try:
            self.build()
        except NetnsError as exc:  # a plumbing command failed: name it, no traceback
            self.close()
            raise TestbedError(f"testbed plumbing: {exc}") from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ns(self, suffix: str) -> Namespace:
        ns = self._topo.ns(self.prefix + suffix)
        ns.run(["sysctl", "-qw", f"net.ipv4.tcp_rmem=4096 131072 {TCP_BUFFER_MAX_BYTES}",
                f"net.ipv4.tcp_wmem=4096 16384 {TCP_BUFFER_MAX_BYTES}"])  # fmt: skip
        return ns

    def build(self) -> None:
        if self.io not in IO_PATHS:
            raise TestbedError(f"I/O path {self.io!r}: expected one of {', '.join(IO_PATHS)}")
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        (RUN_DIR / f"{self.prefix}.pid").write_text(str(os.getpid()))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._topo = Topology()
        p = self.prefix
        server = self._ns("srv")
        switch = self._ns("sw") if self.remote is None else None
        enb = {leg: self._ns(f"enb{leg}") for leg in ("a", "b")}
        dc = self._ns("dc")
        mp = self._ns("mp") if self._wants_mptcp() else None

        # Each switch port meets the testbed on a veth into the switch's namespace, or, for
        # a remote switch, on the host interface cabled to it, borrowed into our namespace.
        srv_if = self._cabled("server") or f"{p}s0"
        if self.remote is None:
            veth_pair(f"{p}p0", switch, srv_if, server)
        else:
            self._borrow(srv_if, server, 1500)
        server.add_addr(srv_if, f"{SERVER_ADDR}/{PREFIXLEN}")
        self.hosts["server"] = Host("server", server, srv_if, SERVER_ADDR, link_mac(server, srv_if))
        nsc = self._sc_counts()
        for leg in ("a", "b"):
            ns = enb[leg]
            # switch port -> eNB ingress (linkem side A); linkem side B -> bridge
            if self.remote is None:
                veth_pair(f"{p}p{PORTS[leg]}", switch, f"{p}{leg}in", ns, mtu=LEG_MTU)
            else:
                self._borrow(self._cabled(f"leg_{leg}"), ns, LEG_MTU)
            dc_here = leg == "a" or self.dc_mode == "dc"  # as SC, the DC client is on leg A only
            if dc_here and not nsc[leg] and mp is None:
                # the DC client alone: linkem's side B is cabled to it, no bridge between (a
                # bridge hop costs linkem's sends 1 to 2 us per frame on this VM)
                veth_pair(f"{p}{leg}out", ns, f"{p}dc{leg}", dc, mtu=LEG_MTU)
                continue
            veth_pair(f"{p}{leg}out", ns, f"{p}{leg}br0", ns, mtu=LEG_MTU)
            members = [f"{p}{leg}br0"]
            if dc_here:
                members.append(f"{p}{leg}dc")
                veth_pair(f"{p}{leg}dc", ns, f"{p}dc{leg}", dc, mtu=LEG_MTU)
            for i in range(nsc[leg]):
                client = self._ns(f"sc{leg}{i}")
                veth_pair(f"{p}{leg}c{i}", ns, f"{p}sc{leg}{i}", client, mtu=LEG_MTU)
                members.append(f"{p}{leg}c{i}")
                ifname, addr = f"{p}sc{leg}{i}", sc_addr(leg, i)
                client.add_addr(ifname, f"{addr}/{PREFIXLEN}")
                self.hosts[f"sc-{leg}{i}"] = Host(
                    f"sc-{leg}{i}", client, ifname, addr, link_mac(client, ifname)
                )
            if mp is not None:
                veth_pair(f"{p}{leg}mp", ns, f"{p}mp{leg}", mp, mtu=LEG_MTU)
                members.append(f"{p}{leg}mp")
            bridge(ns, f"{p}{leg}brg", members, mtu=LEG_MTU)
        if mp is not None:
            self._mptcp_device(server, mp)

        if self.remote is None:
            self._start_switch(switch)
        else:
            self.grpc_addr = self.remote.address
        if self.dc_mode == "dc":
            self._start_agent(dc)
        else:  # the overhead baseline: no PDCP, the client's IP on its leg A interface
            dc.add_addr(f"{p}dca", f"{DC_ADDR}/{PREFIXLEN}")
            self.hosts["dc"] = Host("dc", dc, f"{p}dca", DC_ADDR, link_mac(dc, f"{p}dca"))
        self._static_neighbours()
        self._configure_splitter()
        self._start_links(enb)
        self._start_control()

    def _borrow(self, ifname: str, ns: Namespace, mtu: int) -> None:
        """Move a cabled interface of this host into `ns` for the run (close() moves it
        back, with its MTU, before the namespace goes): up, offloads off (AF_PACKET)."""
        try:
            old_mtu = int(Path("/sys/class/net", ifname, "mtu").read_text())
        except (OSError, ValueError):
            raise TestbedError(
                f"switch ({self.remote.source}): interface {ifname} is not on this host"
            ) from None
        run(["ip", "link", "set", ifname, "netns", ns.name])
        self._borrowed[ifname] = (ns, old_mtu)
        ns.run(["ip", "link", "set", ifname, "mtu", str(mtu), "up"])
        offloads_off(ifname, netns=ns.name)

    def _return_borrowed(self, errors: list[str]) -> None:
        for ifname, (ns, mtu) in list(self._borrowed.items()):
            back = ns.run(["ip", "link", "set", ifname, "netns", "1"], check=False)
            if back.returncode != 0:
                errors.append(f"interface {ifname} stays in {ns.name}: {back.stderr.strip()}")
                continue
            run(["ip", "link", "set", ifname, "mtu", str(mtu)], check=False)
            del self._borrowed[ifname]

    def _wants_mptcp(self) -> bool:
        return any(flow["kind"] in ("mptcp", "mpquic") for flow in self.config["flows"])

    def _mptcp_device(self, server: Namespace, mp: Namespace) -> None:
        """Addresses per leg with a routing table each (the reply to a subflow leaves on
        the leg it came from), MPTCP limits for two subflows on both ends, and the leg-B
        address as a subflow endpoint (`backup` when a flow asks for a backup leg B)."""
        p = self.prefix
        backup = any(f.get("mptcp_leg_b") == "backup" for f in self.config["flows"])
        scheduler = next(
            (f["scheduler"] for f in self.config["flows"] if f["kind"] == "mptcp"), "default"
        )
        for ns in (server, mp):
            ns.run(["sysctl", "-qw", "net.mptcp.enabled=1", f"net.mptcp.scheduler={scheduler}"])
            ns.run(["ip", "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2"])
        for table, leg in enumerate(("a", "b"), start=100):
            ifname, addr = f"{p}mp{leg}", MP_ADDRS[leg]
            mp.add_addr(ifname, f"{addr}/{PREFIXLEN}")
            mp.run(["ip", "route", "add", f"{SERVER_ADDR}/32", "dev", ifname, "table", str(table)])
            mp.run(["ip", "rule", "add", "from", addr, "table", str(table)])
            name = "mp" if leg == "a" else "mp-b"
            self.hosts[name] = Host(name, mp, ifname, addr, link_mac(mp, ifname))
        # the connection starts on leg A (its address is the source the kernel picks)
        mp.run(["ip", "route", "add", f"{SERVER_ADDR}/32", "dev", f"{p}mpa", "src", MP_ADDRS["a"]])
        flags = ["subflow", "backup"] if backup else ["subflow"]
        mp.run(["ip", "mptcp", "endpoint", "add", MP_ADDRS["b"], "dev", f"{p}mpb", *flags])

    @property
    def dc_mode(self) -> str:
        """'dc': numbered and split by the switch, reordered by the agent; 'sc': the switch
        forwards the DC client's traffic unnumbered on leg A and there is no agent."""
        return self.config["dc"].get("mode", "dc")

    def _sc_counts(self) -> dict[str, int]:
        counts = {"a": 0, "b": 0}
        for flow in self.config["flows"]:
            if flow["client"].startswith("sc-"):
                counts[flow["client"][-1]] += flow["count"]
        return counts

    # ------------------------------------------------------------------ switch
    def _start_switch(self, switch: Namespace) -> None:
        self.procs["switch"], self.grpc_addr = switches.start_switch(
            self.target, switch, self.prefix, self.config, self.workdir, self.engine, self.io
        )

    def _configure_splitter(self) -> None:
        try:
            from controlplane.client import P4RuntimeError
            from controlplane.model import SplitterError
        except ImportError as exc:
            raise TestbedError(f"controller: controlplane is missing ({exc})") from None
        try:
            self._install_users()
        except (P4RuntimeError, SplitterError) as exc:
            raise TestbedError(f"controller ({self.target} at {self.grpc_addr}): {exc}") from None

    def _install_users(self) -> None:
        from controlplane.model import UserConfig

        self.splitter = switches.connect(self.grpc_addr, self.remote)
        switches.install_pipeline(self.splitter, self.target, self.remote, self.config)
        ports = self.ports
        self.splitter.configure_ports(
            server_port=ports["server"], leg_a_port=ports["a"], leg_b_port=ports["b"]
        )
        dc = self.config["dc"]
        if self.dc_mode == "sc":
            self.splitter.add_user(UserConfig(addr=DC_ADDR, mode="sc", port=ports["a"]))
        else:
            self._add_dc_user(dc)
        for name, host in self.hosts.items():
            leg = name[3] if name.startswith("sc-") else MP_LEGS.get(name)
            if leg:  # single-path users: SC clients and the MPTCP device's two addresses
                self.splitter.add_user(UserConfig(addr=host.addr, mode="sc", port=ports[leg]))

    def _add_dc_user(self, dc: dict) -> None:
        from controlplane.model import UserConfig

        self.splitter.add_user(
            UserConfig(
                addr=DC_ADDR,
                mode="dc-dup" if dc["dup"] else "dc-credit" if dc.get("credit") else "dc-split",
                batch=dc["batch"],
                ratio=tuple(dc["ratio"]),
                leg_a=self.ports["a"],
                leg_b=self.ports["b"],
            )
        )

    # ------------------------------------------------------------------ agent
    def _start_agent(self, dc: Namespace) -> None:
        if not AGENT_BIN.exists():
            raise TestbedError(f"agent: {AGENT_BIN} is missing; run `make hostagents-build`")
        p = self.prefix
        tap = f"{p}dctap"
        self.agent_stats = self.workdir / "agent.jsonl"
        vdevs = [
            leg_vdev(self.io, 0, f"{p}dca", framecnt=AGENT_LEG_RING_FRAMES),
            leg_vdev(self.io, 1, f"{p}dcb", framecnt=AGENT_LEG_RING_FRAMES),
            f"net_tap0,iface={tap}",
        ]
        app_args = [
            "--leg-a", "0", "--leg-b", "1", "--host", "2",
            "--sn-bits", str(self.config["dc"]["sn_bits"]),
            "--t-reordering-us", str(int(self.config["t_reordering_ms"] * 1000)),
            "--uplink-leg", "a",
            "--stats", str(self.agent_stats), "--stats-interval-ms", "100",
        ]  # fmt: skip
        argv = agent_argv(AGENT_BIN, p, vdevs, app_args, cpu=self.agent_cpu)
        log = self.workdir / "agent.log"
        with open(log, "w") as out:  # the child keeps its own descriptor
            self.procs["agent"] = dc.popen(argv, stdout=out, stderr=subprocess.STDOUT)

        # The tap exists from EAL's start, but until the agent's loop runs, frames the client
        # sends into it are lost: a TCP client's first SYN would cost a 1 s retransmission.
        wait_ready(self.procs["agent"], log)
        offloads_off(tap, netns=dc.name)  # the agent reads the client's frames from this tap
        dc.add_addr(tap, f"{DC_ADDR}/{PREFIXLEN}")
        dc.run(["ip", "link", "set", tap, "up"])
        self.hosts["dc"] = Host("dc", dc, tap, DC_ADDR, link_mac(dc, tap))

    def _static_neighbours(self) -> None:
        server = self.hosts["server"]
        for name, host in self.hosts.items():
            if name == "server":
                continue
            server.ns.run(
                [
                    "ip",
                    "neigh",
                    "replace",
                    host.addr,
                    "lladdr",
                    host.mac,
                    "nud",
                    "permanent",
                    "dev",
                    server.ifname,
                ]
            )
            host.ns.run(
                [
                    "ip",
                    "neigh",
                    "replace",
                    server.addr,
                    "lladdr",
                    server.mac,
                    "nud",
                    "permanent",
                    "dev",
                    host.ifname,
                ]
            )

    # ------------------------------------------------------------------ links
    def _start_links(self, enb: dict[str, Namespace]) -> None:
        try:
            from experiments.run.links import LinkError, departure_slack_us, start_link
            from experiments.run.linkspec import LinkSpec, LinkSpecError
        except ImportError as exc:
            raise TestbedError(
                f"link emulation: experiments.run.links is missing ({exc})"
            ) from None
        p = self.prefix
        fb = self.config.get("feedback")
        if self.departure_slack_us not in ("auto", 0) and self.link_kind != "linkem":
            raise TestbedError(
                f"departure slack {self.departure_slack_us} us: a linkem option; "
                f"the {self.link_kind} link has none (use linkem or a slack of 0 or auto)"
            )
        for i, leg in enumerate(("a", "b")):
            # linkem's --feedback: leg id 0 = A, 1 = B, the splitter's SN length
            feedback = (
                f"leg={i},period_ms={fb['period_ms']},target_ms={fb['target_ms']},"
                f"sn_bits={self.config['dc']['sn_bits']}"
                if fb
                else None
            )
            try:
                down = LinkSpec.from_dict(self.config["links"][leg])
                up = LinkSpec.from_dict(self.config["links"][f"{leg}_uplink"])
                slack_us = departure_slack_us(self.departure_slack_us, self.link_kind, down, up)
                self.link_slack_us[leg] = slack_us
                self.links[leg] = start_link(
                    kind=self.link_kind,
                    if_a=self._cabled(f"leg_{leg}") or f"{p}{leg}in",
                    if_b=f"{p}{leg}out",
                    ab=down,
                    ba=up,
                    netns=enb[leg],
                    stats_path=self.workdir / f"link_{leg}.jsonl",
                    control_path=RUN_DIR / f"{p}.{leg}.ctl",
                    seed=self.seed * 10 + i,
                    **({"departure_slack_us": slack_us} if slack_us else {}),
                    **({"io": self.io} if self.link_kind == "linkem" else {}),
                    # with feedback, stats every report period: reaction times need it
                    **(
                        {"feedback": feedback, "stats_interval_ms": fb["period_ms"]}
                        if feedback
                        else {}
                    ),
                )
            except (LinkError, LinkSpecError) as exc:
                raise TestbedError(
                    f"link emulation ({self.link_kind}) on leg {leg.upper()}: " f"{exc}"
                ) from None
            self.link_rt_priority[leg] = getattr(self.links[leg], "rt_priority", None)

    # ------------------------------------------------------------------ control loop
    def _start_control(self) -> None:
        """The controller's feedback loop (`dcctl control`), a process of the run like the
        switch: primary from now on, its JSON lines in control.jsonl."""
        control = self.config.get("control") or {}
        if control.get("policy", "none") == "none":
            return
        dcctl = venv_tool("dcctl")
        if dcctl is None:
            raise TestbedError("control: the dcctl command is missing; run `make setup`")
        self.control_log = self.workdir / "control.jsonl"
        argv = [
            dcctl,
            "--grpc-addr",
            self.grpc_addr,
            "--device-id",
            str(self.remote.device_id if self.remote is not None else 0),
            "--election-id",
            str(CONTROL_ELECTION_ID),
            "--connect-timeout-s",  # the testbed's own controller has reached the switch
            str(SERVING_SWITCH_TIMEOUT_S),
            "control",
            DC_ADDR,
            "--policy",
            control["policy"],
            "--log",
            str(self.control_log),
        ]
        # the knobs this run's policy reads (a study sweeping policies shares one control
        # block; dcctl refuses a knob its policy would ignore)
        reads = POLICY_KNOBS[control["policy"]]
        for key, knob in KNOB_NAMES.items():
            if knob not in reads or control.get(key) in (None, False):
                continue
            argv += [f"--{key.replace('_', '-')}"] + ([] if key == "dup" else [str(control[key])])
        log = self.workdir / "control.log"
        with open(log, "w") as out:
            self.procs["control"] = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # stopped by its process group, like the others
            )

        def started() -> bool:
            return self.control_log.exists() and '"event": "start"' in self.control_log.read_text()

        wait_for(started, 30, "control (dcctl control)", self.procs["control"], log)

    # ------------------------------------------------------------------ run time
    def host(self, client: str, index: int = 0, kind: str = "") -> Host:
        """'dc', 'sc-a', 'sc-b' (+ index) -> the host; a multipath flow's 'dc' is the
        multipath device (its leg-A address is where the connection starts); a single-path
        mpquic flow on an SC client stays on that client."""
        if client == "dc" and kind in ("mptcp", "mpquic"):
            return self.hosts["mp"]
        return self.hosts["dc" if client == "dc" else f"{client}{index}"]

    def alive(self) -> list[str]:
        """Names of parts that died (empty when all run)."""
        return [name for name, proc in self.procs.items() if proc.poll() is not None]

    def switch_stats(self) -> dict:
        return self.splitter.stats() if self.splitter is not None else {}

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        errors = []
        if self.splitter is not None:
            try:
                self.final_switch_stats = self.splitter.stats()
            except Exception as exc:  # noqa: BLE001 - teardown goes on; the switch may be dead
                errors.append(f"switch stats: {exc}")
            if self.remote is not None:  # a switch that outlives the run: leave it empty
                try:
                    self.splitter.reset()
                except Exception as exc:  # noqa: BLE001 - teardown goes on whatever failed
                    errors.append(f"switch reset: {exc}")
            try:
                self.splitter.close()
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever failed
                errors.append(f"controller close: {exc}")
            self.splitter = None
        for leg, link in list(self.links.items()):
            try:
                link.stop()
            except Exception as exc:  # noqa: BLE001 - teardown goes on whatever failed
                errors.append(f"link {leg}: {exc}")
        self.links.clear()
        for name in ("control", "agent", "switch"):
            proc = self.procs.get(name)
            if proc is not None:
                stop_process(proc, grace_s=5)
        self._return_borrowed(errors)
        if self._topo is not None:
            self._topo.close()
            self._topo = None
        shutil.rmtree(DPDK_RUN_DIR / self.prefix, ignore_errors=True)
        for path in RUN_DIR.glob(f"{self.prefix}.*"):
            try:
                path.unlink()
            except OSError:
                pass
        self.teardown_errors = errors


def leftovers(prefix: str) -> list[str]:
    """Namespaces still named with `prefix` (for tests and `dcexp clean`)."""
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=True)
    names = [n["name"] for n in json.loads(out.stdout or "[]")]
    return [n for n in names if n.startswith(prefix)]


def remove_leftovers(prefix: str, names: list[str] | None = None) -> list[str]:
    """Remove what a dead run of `prefix` left (`dcexp clean`): its namespaces (their
    processes stopped by the PIDs `ip netns pids` lists), DPDK runtime dir and RUN_DIR files.
    Returns one line per thing removed or kept."""
    names = leftovers(prefix) if names is None else [n for n in names if n.startswith(prefix)]
    lines = []
    for ns in names:
        pids = subprocess.run(  # empty when the namespace is already going away
            ["ip", "netns", "pids", ns], capture_output=True, text=True, check=False
        ).stdout.split()
        for pid in pids:  # leftovers of the dead run, stopped by their own ids
            try:
                os.kill(int(pid), 9)
            except (ProcessLookupError, ValueError):
                pass
        gone = subprocess.run(
            ["ip", "netns", "del", ns], capture_output=True, text=True, check=False
        )
        if gone.returncode != 0:
            lines.append(f"could not remove namespace {ns}: {gone.stderr.strip()}")
            continue
        lines.append(f"removed namespace {ns}")
    shutil.rmtree(DPDK_RUN_DIR / prefix, ignore_errors=True)
    for path in RUN_DIR.glob(f"{prefix}.*"):
        path.unlink(missing_ok=True)
    return lines

"""Splitter differential: p4sim against BMv2 on seeded random packet sequences.

    .venv/bin/python p4src/tests/splitter_diff.py [--seed 1] [--sequences 12] [--packets 40]
                                                   [--engine interp|native]

Each sequence is a random splitter configuration (users in dc-split, dc-dup or sc mode, port
MAC rewrites, flood_unknown) and a random stream of frames (downlink IPv4/IPv6 to users and to
unknown addresses, uplink PDCP and plain IP from the legs, ARP, truncated and garbage frames)
interleaved with live reconfigurations (ratio, batch, duplication on/off, user add/delete),
applied through our controller (controlplane.Splitter). p4sim and simple_switch_grpc each run
in a namespace of their own on veths (offloads off) and get the same scenario; every frame
each switch sends is captured per port, and the two captures must be byte-identical per
port, in order. Exit status 0 when they are, 1 on any difference (printed), 2 when a tool
is missing.

Ordering: a switch reads its ports in an order of its own, so frames sent back to back on two
ports may be processed in either order (and a frame to a user's address is split whatever
port it came in on). Before a frame on another port than the previous one the driver waits
until the switch has counted every frame it was sent (port_rx_counter, counted in ingress);
frames on one port keep their order.

Draining: a frame counted in ingress may still wait in BMv2's traffic manager (between its
ingress and egress threads) for as long as the machine's load makes it, so equal counters
are no proof that a switch is idle. Before every reconfiguration and at the end the driver
therefore sends drain markers behind the frames so far: an ARP frame from the server port
(flooded to both legs) and one from leg A (forwarded to the server port), each tagged. Each
egress port's queue is FIFO (BMv2's single ingress thread enqueues in order; p4sim runs
each frame to the end under one lock), so once every marker has been captured on its ports,
every frame sent before it has left the switch; the driver then waits until the captures
hold every frame the switch counted out (port_tx_counter). Both targets get the same
markers, which are compared like every other frame. So the outputs never depend on how fast
a target is, or how loaded the machine is.

The parent compiles the splitter with p4sim and with p4c-bm2-ss, writes the scenarios, and
runs one worker per target (`--worker TARGET`, inside the target's namespace), at once.
"""

from __future__ import annotations

import argparse
import json
import random
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from controlplane import targets
from controlplane.pdcp import ETHERTYPE_PDCP, data_header, dc_frame
from dccommon.processes import stop_process

ROOT = Path(__file__).resolve().parents[2]
P4_SRC = ROOT / "p4src" / "dc_splitter.p4"
PORTS = (0, 1, 2)  # server, leg A, leg B (DESIGN.md defaults)
SERVER, LEG_A, LEG_B = PORTS
GRPC_ADDR = "127.0.0.1:9559"  # inside the worker's own namespace
LEG_MTU = 1600
SYNC_TIMEOUT_S = 30
ETH_P_ALL = 0x0003
# Drain markers: ARP requests whose target hardware address carries this tag and a counter
# (the egress MAC rewrite touches only the Ethernet header, never the ARP body).
DRAIN_TAG = b"\x02DRN"
# Where the splitter's port table sends each marker: ARP from the server is flooded to both
# legs, anything from leg A goes to the server (controlplane Splitter.configure_ports).
DRAIN_ROUTES = {SERVER: (LEG_A, LEG_B), LEG_A: (SERVER,)}


# ---------------------------------------------------------------------------
# Scenarios (pure data, made by the parent from the seed)
# ---------------------------------------------------------------------------


def _mac(rng: random.Random) -> str:
    return "02:" + ":".join(f"{rng.randrange(256):02x}" for _ in range(5))


def _user_addr(rng: random.Random, v6: bool) -> str:
    if v6:
        return f"fd00::{rng.randrange(1, 0xFFFF):x}"
    return f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _dc_knobs(rng: random.Random) -> dict:
    parts = rng.choice([(1, 1), (1, 2), (3, 1), (1, 0), (0, 1), (2, 3)])
    batch = sum(parts) * rng.choice([1, 2, 3, 5]) if sum(parts) else 1
    if sum(parts) == 0:
        parts = (1, 1)
    return {"batch": batch, "ratio": list(parts)}


def _new_user(rng: random.Random, taken: set[str]) -> dict:
    while True:
        addr = _user_addr(rng, rng.random() < 0.4)
        if addr not in taken:
            break
    mode = rng.choice(["dc-split", "dc-split", "dc-dup", "sc"])
    user = {"addr": addr, "mode": mode}
    if mode == "sc":
        user["port"] = rng.choice([LEG_A, LEG_B])
    else:
        user.update(_dc_knobs(rng))
        user["leg_a"], user["leg_b"] = rng.choice([(LEG_A, LEG_B), (LEG_B, LEG_A)])
    return user


def _frame(rng: random.Random, users: dict[str, dict], macs: tuple[str, str]) -> tuple[int, str]:
    """One random frame: (ingress port, hex bytes)."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import ARP, Ether
    from scapy.packet import Raw

    server_mac, ue_mac = macs
    payload = Raw(bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 6, 40, 200]))))

    def l4():
        sport, dport = rng.randrange(1, 65536), rng.randrange(1, 65536)
        return (
            TCP(sport=sport, dport=dport) if rng.random() < 0.5 else UDP(sport=sport, dport=dport)
        )

    def ip_to(addr: str):
        if ":" in addr:
            return IPv6(src="fd00::1", dst=addr, hlim=rng.randrange(1, 256)) / l4() / payload
        return (
            IP(src="10.255.0.1", dst=addr, ttl=rng.randrange(1, 256), id=rng.randrange(65536))
            / l4()
            / payload
        )

    kind = rng.choices(
        [
            "down_user",
            "down_unknown",
            "arp",
            "up_pdcp",
            "up_ip",
            "truncated",
            "garbage",
            "pdcp_from_server",
        ],
        weights=[10, 2, 1, 3, 2, 1, 1, 1],
    )[0]
    if kind == "down_user" and users:
        dst = rng.choice(sorted(users))
        return SERVER, bytes(Ether(src=server_mac, dst=ue_mac) / ip_to(dst)).hex()
    if kind in ("down_user", "down_unknown"):
        return (
            SERVER,
            bytes(
                Ether(src=server_mac, dst=ue_mac) / ip_to(_user_addr(rng, rng.random() < 0.4))
            ).hex(),
        )
    if kind == "arp":
        port = rng.choice([SERVER, SERVER, LEG_A, LEG_B])
        arp = ARP(op=rng.choice([1, 2]), psrc="10.255.0.1", pdst=_user_addr(rng, False))
        return port, bytes(Ether(src=server_mac, dst="ff:ff:ff:ff:ff:ff") / arp).hex()
    if kind in ("up_pdcp", "pdcp_from_server"):
        port = SERVER if kind == "pdcp_from_server" else rng.choice([LEG_A, LEG_B])
        sn = rng.randrange(1 << 18)
        inner = ip_to(_user_addr(rng, rng.random() < 0.4))
        return port, dc_frame(Ether(src=ue_mac, dst=server_mac) / inner, sn).hex()
    if kind == "up_ip":
        return (
            rng.choice([LEG_A, LEG_B]),
            bytes(Ether(src=ue_mac, dst=server_mac) / ip_to("10.255.0.1")).hex(),
        )
    if kind == "truncated":
        port = rng.choice(PORTS)
        ethertype = rng.choice([0x0800, 0x86DD, ETHERTYPE_PDCP])
        dst = rng.choice(sorted(users)) if users and rng.random() < 0.7 else _user_addr(rng, False)
        full = bytes(Ether(src=server_mac, dst=ue_mac, type=ethertype)) + (
            bytes(ip_to(dst))
            if ethertype != ETHERTYPE_PDCP
            else data_header(1) + b"\x08\x00" + bytes(ip_to(dst))
        )
        return port, full[: rng.randrange(14, min(len(full), 60))].hex()
    length = rng.randrange(14, 120)  # garbage: the kernel refuses frames under 14 bytes
    return rng.choice(PORTS), bytes(rng.randrange(256) for _ in range(length)).hex()


def make_scenario(seed: int, n_packets: int) -> dict:
    rng = random.Random(seed)
    users: dict[str, dict] = {}
    for _ in range(rng.randrange(1, 5)):
        u = _new_user(rng, set(users))
        users[u["addr"]] = u
    macs = {}
    for port in PORTS:
        if rng.random() < 0.3:
            macs[port] = [_mac(rng), _mac(rng) if rng.random() < 0.5 else None]
    ports = {"macs": macs, "flood_unknown": rng.random() < 0.3}
    mac_pair = (_mac(rng), _mac(rng))
    initial = json.loads(json.dumps(list(users.values())))  # steps change `users`
    steps: list[dict] = []
    for _ in range(n_packets):
        if rng.random() < 0.12:
            steps.append(json.loads(json.dumps(_reconfig(rng, users))))
        port, frame = _frame(rng, users, mac_pair)
        steps.append({"send": port, "frame": frame})
    return {"seed": seed, "ports": ports, "users": initial, "steps": steps}


def _reconfig(rng: random.Random, users: dict[str, dict]) -> dict:
    """A live change, applied to `users` (the scenario's model of what is installed)."""
    dc = [a for a, u in users.items() if u["mode"] != "sc"]
    choice = rng.choice(["ratio", "batch", "dup", "add", "del"])
    if choice == "add" or not users:
        u = _new_user(rng, set(users))
        users[u["addr"]] = u
        return {"add": u}
    if choice == "del":
        addr = rng.choice(sorted(users))
        del users[addr]
        return {"del": addr}
    if not dc:
        addr = rng.choice(sorted(users))
        users[addr] = {
            "addr": addr,
            "mode": "dc-split",
            "leg_a": LEG_A,
            "leg_b": LEG_B,
            **_dc_knobs(rng),
        }
        return {"set": addr, "changes": {k: v for k, v in users[addr].items() if k != "addr"}}
    addr = rng.choice(sorted(dc))
    if choice == "dup":
        on = users[addr]["mode"] != "dc-dup"
        users[addr]["mode"] = "dc-dup" if on else "dc-split"
        return {"set": addr, "changes": {"dup": on}}
    knobs = _dc_knobs(rng)
    users[addr].update(knobs)
    return {"set": addr, "changes": knobs}


# ---------------------------------------------------------------------------
# Worker: one target inside its namespace
# ---------------------------------------------------------------------------


class Capture:
    """AF_PACKET sockets on the host ends of the switch ports; one thread records every
    frame per port, in arrival order.

    Each socket is opened for no protocol and bound to its interface for all of them: a
    packet socket opened for ETH_P_ALL receives every interface's frames until it is bound,
    and keeps them queued after. Those were the namespace's loopback frames (the worker's
    own P4Runtime traffic), recorded as frames the switch sent on a port."""

    def __init__(self, ifaces: dict[int, str]):
        self.socks = {}
        for port, name in ifaces.items():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
            s.bind((name, ETH_P_ALL))
            self.socks[port] = s
        self.frames: dict[int, list[bytes]] = {p: [] for p in ifaces}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        by_fd = {s.fileno(): (p, s) for p, s in self.socks.items()}
        while not self.stop.is_set():
            ready, _, _ = select.select(list(by_fd), [], [], 0.05)
            for fd in ready:
                port, s = by_fd[fd]
                data, addr = s.recvfrom(65535)
                if addr[2] == socket.PACKET_OUTGOING:
                    continue  # our own transmissions
                with self.lock:
                    self.frames[port].append(data)

    def send(self, port: int, frame: bytes) -> None:
        self.socks[port].send(frame)

    def seen(self, port: int, tag: bytes) -> bool:
        """Whether a frame holding `tag` has been captured on `port` (newest first)."""
        with self.lock:
            return any(tag in f for f in reversed(self.frames[port]))

    def counts(self) -> dict[int, int]:
        with self.lock:
            return {p: len(f) for p, f in self.frames.items()}

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for s in self.socks.values():
            s.close()


def _sync(sw, cap: Capture, sent: dict[int, int], base: dict) -> None:
    """Wait until the switch counted every frame sent and every frame it sent is captured.

    The captures are read between two reads of the switch's counters. A frame is counted
    (egress) before it leaves, so the later read bounds what can have been captured. Equal
    reads on both sides mean no frame was counted meanwhile, so the captures are compared
    with a still picture. More captured than counted is waited out like any other
    difference (a counter read may trail the frame it counts; on a loaded machine BMv2's
    runs did show it once in a few hundred syncs) and fails only if it lasts."""
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while True:
        before = _port_counters(sw)
        got = cap.counts()
        now = _port_counters(sw)
        rx = {p: now[p][0] - base[p][0] for p in PORTS}
        tx = {p: now[p][2] - base[p][2] for p in PORTS}
        if before == now and all(rx[p] == sent[p] and got[p] == tx[p] for p in PORTS):
            return
        if time.monotonic() > deadline:
            excess = (
                "; captured more than the switch counted out"
                if any(got[p] > tx[p] for p in PORTS)
                else ""
            )
            raise RuntimeError(
                f"no sync after {SYNC_TIMEOUT_S} s: rx {rx} of {sent}, captured {got} of "
                f"{tx}{excess}"
            )
        time.sleep(0.005)


def drain_marker(number: int) -> bytes:
    """An ARP request tagged as drain marker `number` (the same bytes on every target)."""
    tag = DRAIN_TAG + number.to_bytes(2, "big")
    eth = b"\xff" * 6 + b"\x02\x00\x00\x00\xdd\x01" + b"\x08\x06"
    arp = b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\x02\x00\x00\x00\xdd\x01"
    arp += bytes([192, 0, 2, 254]) + tag + bytes([192, 0, 2, 1])
    return eth + arp


def _drain(sw, cap: Capture, sent: dict[int, int], base: dict, number: int) -> None:
    """Wait until every frame sent so far has left the switch (module docstring, Draining).

    Markers go in once ingress has counted every frame, so each marker is queued behind
    them on its egress ports; `number` keeps each drain's markers apart."""
    _sync(sw, cap, sent, base)
    marker = drain_marker(number)
    tag = marker[32:38]
    for port in DRAIN_ROUTES:
        cap.send(port, marker)
        sent[port] += 1
    awaited = {out for outs in DRAIN_ROUTES.values() for out in outs}
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while awaited:
        awaited = {p for p in awaited if not cap.seen(p, tag)}
        if awaited and time.monotonic() > deadline:
            raise RuntimeError(
                f"drain marker {number} not out on ports {sorted(awaited)} after "
                f"{SYNC_TIMEOUT_S} s (the port table must route it: {DRAIN_ROUTES})"
            )
        time.sleep(0.002)
    _sync(sw, cap, sent, base)


def _apply(sw, step: dict) -> None:
    from controlplane.splitter import UserConfig

    if "add" in step:
        u = dict(step["add"])
        u["ratio"] = tuple(u.get("ratio", (1, 1)))
        sw.add_user(UserConfig(**u))
    elif "del" in step:
        sw.del_user(step["del"])
    else:
        changes = dict(step["changes"])
        if "ratio" in changes:
            changes["ratio"] = tuple(changes["ratio"])
        sw.set_user(step["set"], **changes)


def _port_counters(sw) -> dict[int, tuple[int, int, int, int]]:
    """(rx packets, rx bytes, tx packets, tx bytes) per port."""
    return {
        s["port"]: (s["rx_packets"], s["rx_bytes"], s["tx_packets"], s["tx_bytes"])
        for s in sw.stats()["ports"].values()
    }


def _run_sequence(sw, sc: dict, host_ifs: dict[int, str]) -> dict:
    macs = {int(p): tuple(m) for p, m in sc["ports"]["macs"].items()}
    sw.configure_ports(SERVER, LEG_A, LEG_B, macs, sc["ports"]["flood_unknown"])
    for u in sc["users"]:
        _apply(sw, {"add": u})
    base = _port_counters(sw)
    cap = Capture(host_ifs)
    sent = {p: 0 for p in PORTS}
    last_port = None
    drains = 0
    try:
        for step in sc["steps"]:
            if "send" in step:
                port = step["send"]
                if last_port not in (None, port):
                    _sync(sw, cap, sent, base)
                last_port = port
                cap.send(port, bytes.fromhex(step["frame"]))
                sent[port] += 1
            else:
                _drain(sw, cap, sent, base, drains)
                drains += 1
                last_port = None
                _apply(sw, step)
        _drain(sw, cap, sent, base, drains)
        stats = sw.stats()
        now = _port_counters(sw)
    finally:
        cap.close()
    return {
        "frames": {p: [f.hex() for f in fs] for p, fs in cap.frames.items()},
        "ports": {p: [x - y for x, y in zip(now[p], base[p])] for p in PORTS},
        "users": {a: [u["packets"], u["bytes"]] for a, u in stats["users"].items()},
    }


def run_worker(
    target: str,
    files: dict,
    scenarios: list[dict],
    switch_ifs: dict[int, str],
    host_ifs: dict[int, str],
    out: Path,
    engine: str,
) -> None:
    from controlplane.splitter import Splitter

    results = []
    with open(out.with_suffix(".log"), "w") as log:
        for sc in scenarios:
            # A fresh switch per sequence. Reusing one (a second pipeline push, or the
            # controller's reset and a new configuration) made BMv2 send every flooded
            # frame twice on each leg.
            argv = targets.switch_argv(
                target, switch_ifs, GRPC_ADDR, p4sim_options=("--engine", engine)
            )
            switch = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
            try:
                targets.wait_serving(switch, GRPC_ADDR)
                with Splitter.connect(GRPC_ADDR) as sw:
                    sw.push_pipeline(files["p4info"], files["config"])
                    results.append(_run_sequence(sw, sc, host_ifs))
            except Exception as exc:
                # the sequence's seed, to replay it alone: --seed N --sequences 1
                raise RuntimeError(f"{target}, sequence of seed {sc['seed']}: {exc}") from exc
            finally:
                stop_process(switch, grace_s=10)
    out.write_text(json.dumps(results))


# ---------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------


def compile_targets(work: Path) -> dict[str, dict]:
    p4sim = {"p4info": work / "p4sim.p4info.txtpb", "config": work / "p4sim.json"}
    subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "p4sim"),
            "compile",
            str(P4_SRC),
            "--p4runtime-files",
            str(p4sim["p4info"]),
            "-o",
            str(p4sim["config"]),
        ],
        check=True,
    )
    bmv2 = {"p4info": work / "bmv2.p4info.txtpb", "config": work / "bmv2.json"}
    subprocess.run(
        [
            "p4c-bm2-ss",
            "--arch",
            "v1model",
            "--p4runtime-files",
            str(bmv2["p4info"]),
            "-o",
            str(bmv2["config"]),
            str(P4_SRC),
        ],
        check=True,
        capture_output=True,
    )
    return {
        "p4sim": {k: str(v) for k, v in p4sim.items()},
        "bmv2": {k: str(v) for k, v in bmv2.items()},
    }


def compare(scenarios: list[dict], a: list[dict], b: list[dict]) -> tuple[int, list[str]]:
    """Frames compared, and the differences (p4sim = a, BMv2 = b)."""
    compared, diffs = 0, []
    for sc, ra, rb in zip(scenarios, a, b):
        for port in map(str, PORTS):
            fa, fb = ra["frames"][port], rb["frames"][port]
            compared += max(len(fa), len(fb))
            for i in range(max(len(fa), len(fb))):
                x = fa[i] if i < len(fa) else None
                y = fb[i] if i < len(fb) else None
                if x != y:
                    diffs.append(f"seed {sc['seed']} port {port} frame {i}: p4sim {x} bmv2 {y}")
                    break
        if ra["ports"] != rb["ports"]:
            diffs.append(f"seed {sc['seed']} port counters: p4sim {ra['ports']} bmv2 {rb['ports']}")
        if ra["users"] != rb["users"]:
            diffs.append(f"seed {sc['seed']} user counters: p4sim {ra['users']} bmv2 {rb['users']}")
    return compared, diffs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1, help="first seed; sequence i uses seed+i")
    p.add_argument("--sequences", type=int, default=8, help="number of random sequences")
    p.add_argument("--packets", type=int, default=60, help="frames per sequence")
    p.add_argument("--keep", type=Path, help="write each target's captures to DIR/<target>.json")
    p.add_argument("--engine", choices=("interp", "native"), default="interp",
                   help="p4sim's engine (native: the C pipeline and packet I/O)")  # fmt: skip
    p.add_argument("--worker", choices=("p4sim", "bmv2"), help=argparse.SUPPRESS)
    p.add_argument("--job", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        job = json.loads(args.job.read_text())
        switch_ifs = {int(k): v for k, v in job["switch_ifaces"].items()}
        host_ifs = {int(k): v for k, v in job["host_ifaces"].items()}
        run_worker(
            args.worker,
            job["files"],
            job["scenarios"],
            switch_ifs,
            host_ifs,
            Path(job["out"]),
            job["engine"],
        )
        return 0

    from experiments.run.netns import Namespace, unique_prefix, veth_pair

    for tool in ("p4c-bm2-ss", "simple_switch_grpc"):
        if shutil.which(tool) is None:
            print(
                f"splitter_diff: {tool} is not on PATH (make setup installs p4c and BMv2)",
                file=sys.stderr,
            )
            return 2
    scenarios = [make_scenario(args.seed + i, args.packets) for i in range(args.sequences)]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="splitdiff") as tmp:
        work = Path(tmp)
        files = compile_targets(work)
        with Namespace(unique_prefix("sd")) as ns_a, Namespace(unique_prefix("sd")) as ns_b:
            workers = {}
            for target, ns in (("p4sim", ns_a), ("bmv2", ns_b)):
                ns.disable_ipv6()
                ifaces = {}
                for port in PORTS:
                    s_if, h_if = f"{ns.name}s{port}", f"{ns.name}h{port}"
                    veth_pair(s_if, ns, h_if, ns, mtu=LEG_MTU)
                    ifaces[port] = (s_if, h_if)
                job = work / f"{target}.job.json"
                out = work / f"{target}.out.json"
                job.write_text(
                    json.dumps(
                        {
                            "files": files[target],
                            "scenarios": scenarios,
                            "out": str(out),
                            "engine": args.engine,
                            # the switch uses the s-ends, the worker sends and captures on the h-ends
                            "switch_ifaces": {p: s for p, (s, _) in ifaces.items()},
                            "host_ifaces": {p: h for p, (_, h) in ifaces.items()},
                        }
                    )
                )
                workers[target] = (ns, job, out)
            procs = {}
            for target, (ns, job, out) in workers.items():
                procs[target] = ns.popen(
                    [sys.executable, __file__, "--worker", target, "--job", str(job)]
                )
            failed = [t for t, proc in procs.items() if proc.wait() != 0]
            if failed:
                for t in failed:
                    log = workers[t][2].with_suffix(".log")
                    print(
                        f"splitter_diff: the {t} worker failed; switch log:\n{log.read_text() if log.exists() else ''}",
                        file=sys.stderr,
                    )
                return 1
            a = json.loads(workers["p4sim"][2].read_text())
            b = json.loads(workers["bmv2"][2].read_text())
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for target, (_, _, out) in workers.items():
                    shutil.copy(out, args.keep / f"{target}.json")
    compared, diffs = compare(scenarios, a, b)
    steps = [s for sc in scenarios for s in sc["steps"]]
    sent = sum(1 for s in steps if "send" in s)
    reconfigs = len(steps) - sent
    print(
        f"splitter differential ({args.engine} p4sim): {len(scenarios)} sequences (seeds {args.seed}..{args.seed + len(scenarios) - 1}), "
        f"{sent} frames sent, {reconfigs} live reconfigurations, {compared} output frames compared "
        f"per port in order, {len(diffs)} differences ({time.monotonic() - t0:.1f} s)"
    )
    for d in diffs:
        print("DIFF " + d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

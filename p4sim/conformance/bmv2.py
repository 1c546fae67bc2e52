"""An STF test on BMv2's simple_switch, with the semantics of p4c's backends/bmv2/bmv2stf.py.

The switch reads and writes packets as pcap files (`--use-files`): every port named by a
`packet` or `expect` line is a port of the switch, with a `<port>_out.pcap` file the switch
writes its output frames to. A port that receives packets reads a FIFO the runner writes
input frames into as the STF goes; other ports read an empty file. BMv2 merges its input
files in timestamp order and must hold a pending frame (or the end) of every open input
before it takes the earliest: with several input ports, a frame may wait for a later frame
on another port. So a control-plane command after packets on several input ports cannot be
ordered against them, and the runner refuses such a test (Bmv2Error) rather than guess. Table entries and
the packet replication engine are programmed through `simple_switch_CLI` (Thrift), with
the STF's `add` lines translated into `table_add` as bmv2stf does. Unlike bmv2stf, which
sleeps a fixed second around control-plane commands, the runner waits until the switch has
taken every frame sent so far and is idle (Bmv2Switch.settle), so control-plane changes apply
between the same packets as the STF orders them.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from controlplane import targets
from dccommon.ports import free_port
from dccommon.processes import stop_process
from p4sim.conformance.stf import (
    STATE_CHECKS,
    Script,
    StateCheck,
    StfCommand,
    judge_state,
    read_state_check,
    split_keys,
)
from p4sim.io.pcap import read_pcap

SWITCH_START_TIMEOUT = 30.0  # seconds, for a switch on a loaded 2-core machine
SETTLE_QUIET = 0.25  # seconds of log silence after the last frame was taken
SETTLE_RECHECK = 0.02  # seconds between the two looks at the switch's threads
SETTLE_TIMEOUT = 30.0


class Bmv2Error(Exception):
    """BMv2 or its CLI could not run the test (names the step)."""


@dataclass
class CompileResult:
    ok: bool
    json_path: Path
    p4info_path: Path
    message: str  # p4c's stderr


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Bmv2Error(
            f"{name} not found on PATH (install p4c and BMv2: `make setup` with "
            "P4TOOLS_BUNDLE, or p4lang's packages; then export PATH=/opt/p4tools/bin:$PATH)"
        )
    return path


def compile_p4c(program: Path, outdir: Path, timeout: float = 300) -> CompileResult:
    """One p4c-bm2-ss run gives the BMv2 JSON and the P4Info (text format)."""
    outdir.mkdir(parents=True, exist_ok=True)
    json_path = outdir / (program.stem + ".json")
    p4info_path = outdir / (program.stem + ".p4info.txtpb")
    cmd = [tool("p4c-bm2-ss"), str(program), "-o", str(json_path)]
    cmd += ["--p4runtime-files", str(p4info_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    ok = proc.returncode == 0 and json_path.exists()
    return CompileResult(ok, json_path, p4info_path, proc.stderr.strip())


# -- table_add from an STF `add` line (bmv2stf's translation) ---------------------------


def _by_name(name: str, objects: dict, what: str):
    """bmv2stf's lookup: the full name, else the only name ending with it."""
    if name in objects:
        return objects[name]
    found = [o for n, o in objects.items() if n.endswith(name)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise Bmv2Error(f"no {what} '{name}' in the BMv2 JSON")
    raise Bmv2Error(f"{what} name '{name}' is ambiguous in the BMv2 JSON")


def _key_field(name: str, fields: list[str]) -> str:
    """bmv2stf's key-name rules (st$1.f is st[1].f; `.valid`, `$valid$` spellings)."""
    name = re.sub(r"\$([0-9]+)", r"[\1]", name)
    for candidate in (name, name + "$", name + ".$valid$"):
        if candidate in fields:
            return candidate
    if name.endswith(".valid") and name[:-5] + "$valid$" in fields:
        return name[:-5] + "$valid$"
    found = None
    for f in fields:
        if f.endswith(("." + name, "." + name + "$")) or (
            name == "valid" and f.endswith(".$valid$")
        ):
            found = f
    if found is None and name == "valid" and "$valid$" in fields:
        found = "$valid$"
    if found is None:
        raise Bmv2Error(f"unexpected key field '{name}' (keys: {', '.join(fields)})")
    return found


_BASES = {"0x": ("f", "0123456789abcdef"), "0b": ("1", "01"), "0o": ("7", "01234567")}


def _ternary(value: str, width: int | None = None) -> str:
    if "&&&" in value:  # p4sim's STF: an explicit mask
        return value
    prefix = value[:2].lower()
    if prefix not in _BASES:
        if width is None:
            raise Bmv2Error(f"decimal value {value} not supported for a ternary key (bmv2stf)")
        return f"{value}&&&{hex((1 << width) - 1)}"  # p4sim's STF: decimal values are exact
    digits = value[2:]
    full = _BASES[prefix][0]
    mask = "".join("0" if d == "*" else full for d in digits)
    return f"{prefix}{digits.replace('*', '0')}&&&{prefix}{mask}"


def _lpm(value: str) -> str:
    if "/" in value:
        return value
    prefix = value[:2].lower()
    bits = {"0x": 4, "0b": 1, "0o": 3}.get(prefix)
    if bits is None:
        value, bits = hex(int(value)), 4
    digits = len(value) - 2 - value.count("*")
    return f"{value.replace('*', '0')}/{digits * bits}"


_DEFAULT_KEY = {"ternary": "0&&&0", "lpm": "0/0", "exact": "0", "valid": "0"}


class Bmv2Program:
    """The tables and actions of a BMv2 JSON, for translating STF lines to CLI commands."""

    def __init__(self, json_path: Path):
        config = json.loads(Path(json_path).read_text())
        self.actions = {a["id"]: a for a in config["actions"]}
        self.tables = {}
        self.profiles = {}  # action profile name -> its tables
        for pipeline in config["pipelines"]:
            for t in pipeline["tables"]:
                self.tables[t["name"]] = t
            for ap in pipeline.get("action_profiles", []):
                self.profiles[ap["name"]] = [
                    t for t in pipeline["tables"] if t.get("action_profile") == ap["name"]
                ]
        self.meters = {m["name"]: m for m in config.get("meter_arrays", [])}
        self.counters = {c["name"]: c for c in config.get("counter_arrays", [])}
        self.registers = {r["name"]: r for r in config.get("register_arrays", [])}
        types = {t["name"]: {f[0]: f[1] for f in t["fields"]} for t in config["header_types"]}
        self.widths = {  # (header, field) -> width, for full masks and ranges; p4c may
            # name a header type it does not write (extract_for_header_union): BMv2 says so
            (h["name"], f): w
            for h in config["headers"]
            for f, w in types.get(h["header_type"], {}).items()
        }
        # STF member/group ids -> the handles simple_switch_CLI gives them: BMv2 hands out
        # the lowest free handle, and STF never deletes, so they count 0, 1, ... per profile
        self.handles: dict[tuple[str, str, str], int] = {}
        # table entries the same way: (table, match, priority) -> entry handle, per table
        self.entries: dict[tuple[str, str, str], int] = {}

    def _key_fields(self, table) -> list[tuple[str, str, int | None]]:
        fields = []
        for k in table["key"]:
            name = k.get("name") or ".".join(k["target"])
            width = self.widths.get(tuple(k["target"])) if isinstance(k["target"], list) else None
            fields.append((name, k["match_type"], width))
        return fields

    def _action(self, table, name: str):
        actions = {self.actions[i]["name"]: self.actions[i] for i in table["action_ids"]}
        return _by_name(name, actions, f"action of table {table['name']}")

    def _match(self, table, keys: list[tuple[str, str]]) -> str:
        fields = self._key_fields(table)
        kinds = {name: (kind, width) for name, kind, width in fields}
        values = {}
        for name, kind, width in fields:
            if kind == "range" and width is not None:  # p4sim's STF: an omitted range is all
                values[name] = f"0->{(1 << width) - 1}"
            elif kind in _DEFAULT_KEY:
                values[name] = _DEFAULT_KEY[kind]
            else:
                raise Bmv2Error(f"{kind} key {name}: bmv2stf has no STF form for it")
        for name, value in keys:
            field = _key_field(name, list(kinds))
            kind, width = kinds[field]
            if kind == "ternary":
                value = _ternary(value, width)
            elif kind == "lpm":
                value = _lpm(value)
            elif kind == "range":  # p4sim's STF: lo..hi
                value = value.replace("..", "->")
            values[field] = value
        return " ".join(values.values())

    def table_add(self, cmd: StfCommand) -> str:
        table = _by_name(cmd.table, self.tables, "table")
        match = self._match(table, cmd.keys)
        entry = (table["name"], match, cmd.priority or "")
        if entry not in self.entries:
            self.entries[entry] = sum(1 for t, _, _ in self.entries if t == table["name"])
        if cmd.indirect is not None:
            which, ref = cmd.indirect
            profile = table.get("action_profile", "")
            handle = self.handles.get((profile, which, ref))
            if handle is None:
                raise Bmv2Error(f"{cmd.text}: no {which} {ref} in action profile {profile!r}")
            verb = "table_indirect_add" + ("_with_group" if which == "group" else "")
            line = f"{verb} {table['name']} {match} => {handle}"
        else:
            action = self._action(table, cmd.action)
            args = self._args(action, cmd.args)
            line = f"table_add {table['name']} {action['name']} {match} => {args}"
        if table["match_type"] in ("ternary", "range"):
            # bmv2stf: BMv2 priorities run the other way (a smaller number wins); BMv2 asks
            # for one on range tables too
            line += f" {10000 - int(cmd.priority or 0)}"
        return line.rstrip()

    def _new_handle(self, profile: str, which: str, ref: str) -> int:
        if (profile, which, ref) in self.handles:
            raise Bmv2Error(f"{which} {ref} of action profile {profile} is created twice")
        handle = sum(1 for p, w, _ in self.handles if (p, w) == (profile, which))
        self.handles[(profile, which, ref)] = handle
        return handle

    def profile_commands(self, cmd: StfCommand) -> list[str]:
        """`member` and `group` lines as simple_switch_CLI's act_prof_* commands."""
        name = _by_name(cmd.profile, {n: n for n in self.profiles}, "action profile")
        if cmd.name == "member":
            tables = self.profiles[name]
            if not tables:
                raise Bmv2Error(f"action profile {name} implements no table")
            action = self._action(tables[0], cmd.action)
            self._new_handle(name, "member", cmd.ids[0])
            args = self._args(action, cmd.args)
            return [f"act_prof_create_member {name} {action['name']} {args}".rstrip()]
        group = self._new_handle(name, "group", cmd.ids[0])
        lines = [f"act_prof_create_group {name}"]
        for ref in cmd.ids[1:]:
            member = self.handles.get((name, "member", ref))
            if member is None:
                raise Bmv2Error(f"{cmd.text}: no member {ref} in action profile {name}")
            lines.append(f"act_prof_add_member_to_group {name} {member} {group}")
        return lines

    def meter_set_rates(self, cmd: StfCommand) -> str:
        """p4sim's `meter_config` and `direct_meter_config` as meter_set_rates: STF rates are
        units per second, simple_switch_CLI's units per microsecond; a direct meter's index
        is the handle of the table entry."""
        if cmd.name == "meter_config":
            indirect = {n: m for n, m in self.meters.items() if not m["is_direct"]}
            meter = _by_name(cmd.meter, indirect, "meter")
            index = cmd.index
        else:
            meter, handle = self._direct(
                self.meters, "meter", cmd.table, cmd.keys, cmd.priority, cmd.text
            )
            index = str(handle)
        (cir, cburst), (pir, pburst) = cmd.rates
        return (
            f"meter_set_rates {meter['name']} {index} "
            f"{int(cir, 0) / 1e6!r}:{int(cburst, 0)} {int(pir, 0) / 1e6!r}:{int(pburst, 0)}"
        )

    def state_read(self, check: StateCheck) -> str:
        """The simple_switch_CLI command reading what a state check judges; a direct
        counter's index is the handle of the table entry."""
        if check.kind == "register":
            return f"register_read {_by_name(check.name, self.registers, 'register')['name']} {check.index}"
        if check.kind == "counter":
            indirect = {n: c for n, c in self.counters.items() if not c["is_direct"]}
            return f"counter_read {_by_name(check.name, indirect, 'counter')['name']} {check.index}"
        keys, priority = split_keys(check.key_words)
        counter, handle = self._direct(
            self.counters, "counter", check.name, keys, priority, check.label
        )
        return f"counter_read {counter['name']} {handle}"

    def _direct(self, externs: dict, kind: str, table_name: str, keys, priority, what: str):
        """A table's direct meter or counter and the handle of one of its entries, which
        simple_switch_CLI takes as the extern's index."""
        table = _by_name(table_name, self.tables, "table")
        direct = [e for e in externs.values() if e.get("binding") == table["name"]]
        if not direct:
            raise Bmv2Error(f"table {table['name']} has no direct {kind}")
        entry = (table["name"], self._match(table, keys), priority or "")
        if entry not in self.entries:
            raise Bmv2Error(f"{what}: no such entry was added to {table['name']}")
        return direct[0], self.entries[entry]

    def table_set_default(self, cmd: StfCommand) -> str:
        table = _by_name(cmd.table, self.tables, "table")
        action = self._action(table, cmd.action)
        return f"table_set_default {table['name']} {action['name']} {self._args(action, cmd.args)}"

    @staticmethod
    def _args(action, args: list[tuple[str, str]]) -> str:
        given = dict(args)
        names = [p["name"] for p in action["runtime_data"]]
        unknown = set(given) - set(names)
        if unknown:
            raise Bmv2Error(f"action {action['name']} has no parameter {', '.join(unknown)}")
        missing = [n for n in names if n not in given]
        if missing:
            raise Bmv2Error(f"action {action['name']}: no value for {', '.join(missing)}")
        return " ".join(given[n] for n in names)


# -- running the switch -----------------------------------------------------------------


_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)


class Bmv2Switch:
    """simple_switch reading each input port from a FIFO (pcap records written as the STF
    goes) and writing `p<port>_out.pcap`. With `grpc_addr`: simple_switch_grpc without a
    program (`--no-p4`), serving P4Runtime there; a client pushes the pipeline."""

    def __init__(
        self,
        json_path: Path | None,
        ports: list[int],
        inputs: list[int],
        workdir: Path,
        grpc_addr: str | None = None,
        cpu_port: int | None = None,
    ):
        self.workdir = workdir
        self.ports = ports
        self.inputs = inputs
        self.log = workdir / "switch.log.txt"  # BMv2 appends .txt to --log-file
        self.fifos: dict[int, int] = {}
        self.sent = 0
        self.thrift_port = free_port()
        for port in ports:
            if port in inputs:
                os.mkfifo(workdir / f"p{port}_in.pcap")
            else:
                (workdir / f"p{port}_in.pcap").write_bytes(_PCAP_HEADER)
        options = ["--log-file", "switch.log", "--log-flush", "-L", "debug", "--use-files", "0"]
        options += ["--notifications-addr", f"ipc://{workdir}/notifications.ipc"]
        try:
            cmd = targets.bmv2_argv(
                {port: f"p{port}" for port in ports},
                grpc_addr,
                self.thrift_port,
                cpu_port=cpu_port,
                program=json_path,
                options=options,
            )
        except targets.TargetError as exc:
            raise Bmv2Error(str(exc)) from None
        self.stderr = open(workdir / "switch.stderr", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, cwd=workdir, stdout=self.stderr, stderr=subprocess.STDOUT)
        try:
            self._open_inputs()
            self._wait_thrift()
        except BaseException:
            self.stop()
            raise

    def _check_alive(self, what: str) -> None:
        if self.proc.poll() is not None:
            self.stderr.flush()
            tail = (self.workdir / "switch.stderr").read_text()[-400:].strip()
            raise Bmv2Error(f"simple_switch exited ({self.proc.returncode}) {what}: {tail}")

    def _open_inputs(self) -> None:
        """The switch opens its input FIFOs one after another, each open blocking until a
        writer comes: try them all without blocking until each has its writer."""
        deadline = time.monotonic() + SWITCH_START_TIMEOUT
        while len(self.fifos) < len(self.inputs):
            for port in self.inputs:
                if port in self.fifos:
                    continue
                try:
                    fd = os.open(self.workdir / f"p{port}_in.pcap", os.O_WRONLY | os.O_NONBLOCK)
                except OSError as e:
                    if e.errno != errno.ENXIO:
                        raise
                    continue
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
                os.write(fd, _PCAP_HEADER)
                self.fifos[port] = fd
            self._check_alive("while opening its input files")
            if time.monotonic() > deadline:
                raise Bmv2Error("simple_switch did not open its input files in time")
            time.sleep(0.005)

    def _wait_thrift(self) -> None:
        deadline = time.monotonic() + SWITCH_START_TIMEOUT
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.thrift_port)) == 0:
                    return
            self._check_alive("before its Thrift server started")
            if time.monotonic() > deadline:
                raise Bmv2Error("simple_switch's Thrift server did not start in time")
            time.sleep(0.02)

    def send(self, port: int, frame: bytes) -> None:
        # Timestamps count up by 1 us: the pcap reader merges its input files in
        # timestamp order, which keeps the STF's order across ports.
        self.sent += 1
        record = struct.pack("<IIII", 0, self.sent, len(frame), len(frame)) + frame
        os.write(self.fifos[port], record)

    def settle(self) -> None:
        """Wait until the switch has taken every frame sent and is idle.

        A quiet log alone proves nothing on a loaded machine: a frame taken by the ingress
        thread may wait, unlogged, for an egress or transmit thread the scheduler has not
        run yet (at nice 19 beside a campaign, for longer than any quiet period). Such a
        thread is runnable, so idle means: the log did not grow for SETTLE_QUIET and, in two
        looks SETTLE_RECHECK apart within that silence, every thread of the switch sleeps.
        A frame handed between threads during the first look leaves its receiver runnable
        until it runs, and running it logs."""
        if self.sent == 0:
            return
        deadline = time.monotonic() + SETTLE_TIMEOUT
        last_size, quiet_since = -1, time.monotonic()
        while True:
            self._check_alive("while processing packets")
            size = self._log_size()
            now = time.monotonic()
            if size != last_size:
                last_size, quiet_since = size, now
            elif self._idle_for(now - quiet_since) and self._log_size() == last_size:
                return
            if now > deadline:
                busy = "" if self._threads_asleep() else ", a thread still runnable"
                raise Bmv2Error(f"simple_switch took {self._taken()} of {self.sent} frames{busy}")
            time.sleep(0.02)

    def _idle_for(self, quiet_s: float) -> bool:
        """The log silent long enough, every frame taken, and every thread asleep at two
        looks SETTLE_RECHECK apart (settle's docstring says why both)."""
        if quiet_s < SETTLE_QUIET or self._taken() < self.sent or not self._threads_asleep():
            return False
        time.sleep(SETTLE_RECHECK)
        return self._threads_asleep()

    def _log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def _taken(self) -> int:
        text = self.log.read_bytes() if self.log.exists() else b""
        return text.count(b"Processing packet received on port")

    def _threads_asleep(self) -> bool:
        """Whether every thread of the switch is sleeping (state S in /proc): none is
        running, runnable, in an uninterruptible wait or stopped."""
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                stat = (task / "stat").read_text()
            except FileNotFoundError:
                continue  # the thread has just exited
            if stat.rsplit(")", 1)[1].split()[0] != "S":
                return False
        return True

    def cli(self, commands: list[str]) -> str:
        """Run simple_switch_CLI commands; what it printed."""
        cmd = [tool("simple_switch_CLI"), "--thrift-port", str(self.thrift_port)]
        proc = subprocess.run(
            cmd,
            input="\n".join(commands) + "\n",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        bad = [
            line
            for line in proc.stdout.splitlines()
            if re.search(r"\bError\b|Invalid|exception", line, re.IGNORECASE)
        ]
        if proc.returncode != 0 or bad:
            raise Bmv2Error(
                f"simple_switch_CLI failed on {commands!r}: {' | '.join(bad) or proc.stderr}"
            )
        return proc.stdout

    def outputs(self) -> dict[int, list[bytes]]:
        out = {}
        for port in self.ports:
            path = self.workdir / f"p{port}_out.pcap"
            out[port] = read_pcap(path) if path.exists() and path.stat().st_size else []
        return out

    def stop(self) -> None:
        for fd in self.fifos.values():
            os.close(fd)
        self.fifos = {}
        stop_process(self.proc, grace_s=10)
        self.stderr.close()


GRPC_SWITCH_TRIES = 3


def start_grpc_switch(
    ports: list[int], inputs: list[int], workdir: Path, connect, cpu_port: int | None = None
):
    """simple_switch_grpc without a program (`--no-p4`) serving P4Runtime on a free local
    port (PacketIn/PacketOut on `cpu_port`, when given), and `connect(address)`'s client of
    it: (switch, client). A port picked free may be
    taken before the switch binds it (its Thrift port too), so up to GRPC_SWITCH_TRIES
    switches are started, each in its own WORKDIR/runN."""
    for attempt in range(GRPC_SWITCH_TRIES):
        address = f"127.0.0.1:{free_port()}"
        run_dir = workdir / f"run{attempt}"
        run_dir.mkdir(parents=True, exist_ok=True)
        switch = None
        try:
            switch = Bmv2Switch(None, ports, inputs, run_dir, grpc_addr=address, cpu_port=cpu_port)
            return switch, connect(address)
        except (Bmv2Error, grpc.RpcError, grpc.FutureTimeoutError):
            if switch is not None:
                switch.stop()
            if attempt == GRPC_SWITCH_TRIES - 1:
                raise
    raise AssertionError("unreachable")


def _decimal_numbers(line: str) -> str:
    """simple_switch_CLI reads register indices and values as decimal only; p4sim's STF
    also takes 0x/0b/0o numbers."""
    words = line.split()
    return " ".join(words[:2] + [str(int(w, 0)) if w[:1].isdigit() else w for w in words[2:]])


def run_stf(
    json_path: Path, script: Script, workdir: Path, failures: list[str] | None = None
) -> dict[int, list[bytes]]:
    """Run the script on simple_switch; the frames each STF port sent, in order. The
    failures of its state checks (STATE_CHECKS: registers and counters read through
    simple_switch_CLI once the packets before have gone through) go to `failures`."""
    program = Bmv2Program(json_path)
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = sorted({c.port for c in script.commands if c.name == "packet"})
    for attempt in range(3):
        # The Thrift port is picked free but bound by the switch a moment later: another
        # program may take it in between, and then the switch exits at start; try again.
        run_dir = workdir / f"run{attempt}"
        run_dir.mkdir()
        try:
            switch = Bmv2Switch(json_path, script.ports, inputs, run_dir)
            break
        except Bmv2Error:
            if attempt == 2:
                raise
    last_packet = max((i for i, c in enumerate(script.commands) if c.name == "packet"), default=-1)

    def end_inputs() -> None:  # the end of every input: BMv2 takes the rest
        for fd in switch.fifos.values():
            os.close(fd)
        switch.fifos = {}
        switch.settle()

    try:
        pending: list[str] = []
        for i, cmd in enumerate(script.commands):
            if cmd.name == "packet":
                if pending:
                    switch.cli(pending)
                    pending = []
                switch.send(cmd.port, cmd.data)
            elif cmd.name == "wait":
                if len(inputs) <= 1:
                    switch.settle()
            elif cmd.name in FRAME_CHECKS:
                pass  # judged on the frames at the end (check_outputs)
            elif cmd.name not in TRANSLATED | CLI_PASSTHROUGH | STATE_CHECKS:
                raise Bmv2Error(f"'{cmd.text}': the runner has no BMv2 form for {cmd.name}")
            else:
                # a change or a check comes after the packets before it; on several input
                # ports only after the last packet, once every input has ended
                if not pending and switch.sent:
                    if len(inputs) > 1 and i < last_packet:
                        raise Bmv2Error(
                            f"'{cmd.text}' between packets on several input ports: the "
                            "pcap-file runner cannot order it against them"
                        )
                    if len(inputs) > 1:
                        end_inputs()
                    else:
                        switch.settle()
                if cmd.name in STATE_CHECKS:
                    check = read_state_check(cmd)
                    reply = switch.cli([*pending, program.state_read(check)])
                    pending = []
                    found = judge_state(check, _state_values(check, reply))
                    if failures is not None:
                        failures += found
                    continue
                if cmd.name == "add":
                    pending.append(program.table_add(cmd))
                elif cmd.name == "setdefault":
                    pending.append(program.table_set_default(cmd))
                elif cmd.name in ("member", "group"):
                    pending.extend(program.profile_commands(cmd))
                elif cmd.name in ("meter_config", "direct_meter_config"):
                    pending.append(program.meter_set_rates(cmd))
                elif cmd.name == "register_write":
                    pending.append(_decimal_numbers(cmd.text))
                else:
                    pending.append(cmd.text)
        if pending:
            switch.cli(pending)
        end_inputs()
        return switch.outputs()
    finally:
        switch.stop()


# STF commands that change the switch, translated to simple_switch_CLI commands.
TRANSLATED = frozenset(
    {"add", "setdefault", "member", "group", "meter_config", "direct_meter_config"}
)

# STF commands judged on the frames once all have left (check_outputs): `expect_drop`, p4sim's,
# is judged on p4sim alone, whose frames must then equal BMv2's one by one. Any other command
# the runner cannot carry out on BMv2 (p4sim's `mcast` and `clone_session`, ...) is refused:
# leaving it out would compare two different tests.
FRAME_CHECKS = frozenset({"expect", "expect_drop"})

_COUNTS = re.compile(r"\((\d+) bytes, (\d+) packets\)")
_REGISTER_VALUE = re.compile(r"\]=\s*(-?\d+)")


def _state_values(check: StateCheck, reply: str) -> dict[str, int]:
    """The values simple_switch_CLI printed for a state check's read (its last line that
    shows one): `c[1]= (12 bytes, 2 packets)`, `r[0]= 3`."""
    pattern = _REGISTER_VALUE if check.kind == "register" else _COUNTS
    found = pattern.findall(reply)
    if not found:
        raise Bmv2Error(f"{check.label}: simple_switch_CLI printed no value: {reply.strip()!r}")
    if check.kind == "register":
        return {"value": int(found[-1])}
    return {"bytes": int(found[-1][0]), "packets": int(found[-1][1])}


# STF commands bmv2stf hands to simple_switch_CLI unchanged.
CLI_PASSTHROUGH = frozenset(
    {
        "mirroring_add",
        "mirroring_add_mc",
        "mirroring_delete",
        "mc_mgrp_create",
        "mc_node_create",
        "mc_node_update",
        "mc_node_associate",
        "counter_write",
        "register_write",
        "register_reset",
        "meter_set_rates",
        "meter_array_set_rates",
        "pvs_add",
    }
)


_TRANSMIT = re.compile(rb"Transmitting packet of size \d+ out of port (\d+)")


def transmitted(workdir: Path) -> dict[int, int]:
    """How many frames simple_switch's log says it sent on each port in run_stf's last run
    in `workdir`, whether or not the port had a pcap file (frames to other ports leave no
    other trace)."""
    runs = sorted(workdir.glob("run*"))
    log = runs[-1] / "switch.log.txt" if runs else None
    counts: dict[int, int] = {}
    if log is not None and log.exists():
        for m in _TRANSMIT.finditer(log.read_bytes()):
            counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + 1
    return counts

"""An STF-like conformance runner: a P4 program, control-plane setup, packets in, packets out.
The lines are read by `p4sim.conformance.stf` (the one STF reader, shared with the BMv2 side
of the differential conformance runner); this module carries them out on p4sim.

Usage: python -m p4sim.stf program.p4 test.stf [-I DIR] [-D NAME=VALUE] [-v]

The format follows the shape of p4c's .stf files, one command per line (`#` starts a
comment). Names of tables, actions, registers and counters may be written in full
(`MyIngress.ipv4_lpm`) or by any unique dotted suffix (`ipv4_lpm`). Values are decimal,
0x hex, 0b binary, dotted IPv4 (10.0.0.1) or colon MAC (00:11:22:33:44:55).

    add <table> [<priority>] <key>:<match> ... <action>(<param>:<value>, ...)
        <priority> >= 0, larger wins (p4c's STF; P4Runtime priority = <priority> + 1)
        <match> is <value> (exact, optional; ternary = all bits, lpm = full prefix),
        <value>&&&<mask> (ternary), <value>/<prefix_len> (lpm), <low>..<high> (range);
        keys left out are wildcards (not allowed for exact keys)
    setdefault <table> <action>(<param>:<value>, ...)
    member <profile> <member_id> <action>(<param>:<value>, ...)
                                                an action profile/selector member
    group <profile> <group_id> <member_id> ...  a selector group (each member once)
    add <table> [<priority>] <key>:<match> ... member(<member_id>) | group(<group_id>)
                                                an entry of a table with an implementation
    mcast <group> <port>[:<rid>] ...            multicast group with its replicas
    clone_session <session> <port> [<truncate_bytes>]
    register_write <register> <index> <value>
    register_check <register> <index> <value>                    (alias: check_register)
    counter_check <counter> <index> packets <n> [bytes <n>]      (alias: check_counter)
    direct_counter_check <table> <key>:<match> ... [<priority>] packets <n> [bytes <n>]
    meter_config <meter> <index> <cir> <cburst> <pir> <pburst>
    direct_meter_config <table> <key>:<match> ... [<priority>] <cir> <cburst> <pir> <pburst>
    packet <port> <hex bytes>                   spaces inside the hex are ignored
    expect <port> <hex bytes>[$]                `*` is a wildcard nibble; `$`: see below
    expect <port>                               any number of frames may leave on <port>
    expect_drop                                 the previous packet must produce no output

p4c's STF syntax (testdata/p4_16_samples/*.stf, run on BMv2 by p4c's bmv2stf.py) is accepted
with p4c's meaning:

    mirroring_add <session> <port>              (simple_switch_CLI) clone session to a port
    mc_mgrp_create <group>                      (simple_switch_CLI) empty multicast group
    mc_node_create <rid> <port> ...             node; handles count 0, 1, ... as in BMv2
    mc_node_associate <group> <handle>          the node's ports join the group
    pvs_add <value set> <value>                 (simple_switch_CLI) a member of a parser
                                                value set: its fields' values concatenated
    check_counter <counter>(<index>) [packets|bytes] [==|!=|<|<=|>|>= <n>]
    wait                                        (nothing to wait for: packets run at once)
    key names: any dotted suffix of the key's name, `hdr.h.$valid$` also as `hdr.h.valid`
        or `hdr.h`, `st$1.f` for `st[1].f`; an omitted exact key matches 0
    ternary key without `&&&`: 0x/0b/0o digits give the mask (`0x1*` = 0x10&&&0xf0,
        `0x0001` = 0x0001&&&0xffff); decimal, IPv4 or MAC values are exact
    lpm key without `/`: the prefix is the number of 0x/0b/0o digits before any `*`
        (`0x0a01****` = 0x0a010000/16); decimal, IPv4 or MAC values are full length

Packets are processed when they appear; `expect` lines may come before or after their packet.
At the end, each port must have sent exactly as many frames as it has `expect` lines, in
order (frames on ports with no `expect` are failures too). As in p4c, a frame matches when
it starts with the expected bytes; an expectation ending in `$` must match the whole frame
(`expect <port> $` asks for an empty frame).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dccommon.cliargs import input_dir
from p4sim.conformance.stf import (
    StfCommand,
    StfError,
    frame_matches,
    judge_state,
    parse_script,
    parse_value,
    read_state_check,
    split_keys,
)
from p4sim.errors import P4Error
from p4sim.frontend import compile_file
from p4sim.model import (
    MAX_MCAST_GROUP,
    MAX_PRE_ID,
    CloneSession,
    ControlPlaneError,
    FieldMatch,
    ProfileGroup,
    ProfileMember,
    Replica,
    TableEntry,
)
from p4sim.tool import ToolError, run


@dataclass
class Result:
    failures: list[str] = field(default_factory=list)
    packets: int = 0
    checks: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures


def pre_id(text: str, what: str, top: int) -> int:
    """A multicast group or clone session id: 1..top, as BMv2 takes it."""
    value = parse_value(text)
    if not 1 <= value <= top:
        raise StfError(f"{what} {value} is out of range 1..{top}")
    return value


_RADIX = {"0x": (16, 4), "0b": (2, 1), "0o": (8, 3)}


def _based_digits(text: str):
    """(digits, radix, bits per digit) of a 0x/0b/0o literal, else None (p4c's STF only
    derives masks and prefixes from such literals)."""
    text = text.strip().replace("_", "")
    prefix = text[:2].lower()
    if prefix not in _RADIX or len(text) < 3:
        return None
    radix, bits = _RADIX[prefix]
    return text[2:], radix, bits


def _digit_mask(text: str, width: int) -> tuple[int, int]:
    """A ternary key value as p4c's STF reads it: every written digit is matched, `*`
    digits are wildcards (`0x1*` = 0x10&&&0xf0); other notations match all bits."""
    based = _based_digits(text)
    if based is None:
        return parse_value(text), (1 << width) - 1
    digits, radix, bits = based
    try:
        value = int(digits.replace("*", "0"), radix)
    except ValueError:
        raise StfError(f"bad ternary value '{text}'") from None
    mask = 0
    for ch in digits:
        mask = (mask << bits) | (0 if ch == "*" else (1 << bits) - 1)
    return value, mask & ((1 << width) - 1)


def _digit_prefix(text: str, width: int) -> tuple[int, int]:
    """An lpm key value without /len as p4c's STF reads it: the prefix is the written
    digits that are not `*` (`0x0a01****` = 0x0a010000/16); other notations: full length."""
    based = _based_digits(text)
    if based is None:
        return parse_value(text), width
    digits, radix, bits = based
    try:
        value = int(digits.replace("*", "0"), radix)
    except ValueError:
        raise StfError(f"bad lpm value '{text}'") from None
    return value, min(width, (len(digits) - digits.count("*")) * bits)


def _lpm(kind: str, value: int, prefix_len: int, width: int) -> FieldMatch:
    """Bits past the prefix are ignored, as simple_switch_CLI's table_add does."""
    if not 0 <= prefix_len <= width:
        raise StfError(f"prefix length {prefix_len} outside 0..{width}")
    mask = ((1 << prefix_len) - 1) << (width - prefix_len)
    return FieldMatch(kind, value & mask, prefix_len=prefix_len)


def _resolve(name: str, names, what: str) -> str:
    names = list(names)
    if name in names:
        return name
    matches = [n for n in names if n.endswith("." + name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise StfError(f"unknown {what} '{name}' (known: {', '.join(names) or 'none'})")
    raise StfError(f"{what} name '{name}' is ambiguous: {', '.join(matches)}")


# The fewest words each command takes after its name.
_MIN_ARGS = {
    "add": 2,
    "setdefault": 2,
    "member": 3,
    "group": 2,
    "mcast": 1,
    "clone_session": 2,
    "meter_config": 6,
    "direct_meter_config": 5,
    "register_write": 3,
    "register_check": 3,
    "check_register": 3,
    "counter_check": 2,
    "check_counter": 1,
    "direct_counter_check": 3,
    "packet": 1,
    "expect": 1,
    "mirroring_add": 2,
    "mc_mgrp_create": 1,
    "mc_node_create": 2,
    "mc_node_associate": 2,
    "pvs_add": 2,
}


class StfRunner:
    def __init__(self, program, verbose: bool = False):
        self.program = program
        self.device = program.new_device(seed=1)
        self.verbose = verbose
        self.expected: dict[int, list[tuple[str, bool]]] = {}  # (hex pattern, exact)
        self.received: dict[int, list[bytes]] = {}
        self.result = Result()
        self.last_outputs: list | None = None
        self.any_output: set[int] = set()  # ports with a bare `expect <port>`
        self.mc_nodes: list[list[Replica]] = []  # mc_node_create, by handle

    def run_text(self, text: str, filename: str = "<stf>") -> Result:
        for cmd in parse_script(text, filename).commands:
            try:
                self.command(cmd)
            except (StfError, ControlPlaneError, IndexError, ValueError) as e:
                raise StfError(f"{filename}:{cmd.lineno}: {e}") from None
        self.compare()
        return self.result

    # -- commands ---------------------------------------------------------------------
    def command(self, cmd: StfCommand) -> None:
        """Carry out one command as the STF reader (p4sim.conformance.stf) read it."""
        handler = getattr(self, "cmd_" + cmd.name, None)
        if handler is None:
            raise StfError(f"unknown command '{cmd.name}'")
        if len(cmd.rest) < _MIN_ARGS.get(cmd.name, 0):
            raise StfError(
                f"too few arguments for '{cmd.name}' (the formats are in the p4sim.stf module "
                "documentation)"
            )
        handler(cmd)

    def _action(self, name: str, arg_texts: list[tuple[str, str]], table=None):
        """(action's full name, {param: value}) of an action call the reader split."""
        names = (
            [a.name for a in table.definition.actions] if table else self.device.program.all_actions
        )
        action = _resolve(name, names, "action")
        return action, {k: parse_value(v) for k, v in arg_texts}

    def _table(self, name: str):
        return self.device.tables[_resolve(name, self.device.tables, "table")]

    def _key_name(self, table, name: str) -> str:
        """The key a name in an `add` line means, with p4c's STF lookup rules."""
        keys = [k.name for k in table.definition.keys]
        name = re.sub(r"\$([0-9]+)", r"[\1]", name)  # st$1.f -> st[1].f
        for candidate in (name, name + ".$valid$", re.sub(r"\.valid$", ".$valid$", name)):
            if candidate in keys:
                return candidate
        found = [k for k in keys if k.endswith(("." + name, "." + name + ".$valid$"))]
        if name == "valid":
            found = [k for k in keys if k.endswith("$valid$")]
        if len(found) == 1:
            return found[0]
        if not found:
            raise StfError(
                f"table {table.definition.name} has no key '{name}' (keys: {', '.join(keys)})"
            )
        raise StfError(f"key name '{name}' is ambiguous: {', '.join(found)}")

    def _matches(self, table, key_texts: list[tuple[str, str]], priority_text: str | None):
        """(match, priority) of an entry's keys as the reader split them."""
        keys = {k.name: k for k in table.definition.keys}
        match, priority = {}, parse_value(priority_text) if priority_text else 0
        for kname, text in key_texts:
            kname = self._key_name(table, kname)
            kind = keys[kname].match_kind
            width = keys[kname].bitwidth
            if "&&&" in text:
                v, m = text.split("&&&")
                match[kname] = FieldMatch(
                    kind, parse_value(v) & parse_value(m), mask=parse_value(m)
                )
            elif ".." in text and kind == "range":
                lo, hi = text.split("..")
                match[kname] = FieldMatch(kind, low=parse_value(lo), high=parse_value(hi))
            elif "/" in text:
                v, plen = text.split("/")
                match[kname] = _lpm(kind, parse_value(v), int(plen), width)
            elif kind == "ternary":
                v, mask = _digit_mask(text, width)
                match[kname] = FieldMatch(kind, v & mask, mask=mask)
            elif kind == "lpm":
                match[kname] = _lpm(kind, *_digit_prefix(text, width), width)
            elif kind == "range":
                v = parse_value(text)
                match[kname] = FieldMatch(kind, low=v, high=v)
            else:
                match[kname] = FieldMatch(kind, parse_value(text))
        # p4c's STF: an exact key left out of an `add` line matches 0.
        for name, key in keys.items():
            if name not in match and key.match_kind == "exact":
                match[name] = FieldMatch("exact", 0)
        # STF priorities start at 0 (larger wins, as in P4Runtime, whose priorities start
        # at 1): shift by one so that `add t 0 ...` is a valid entry.
        if table.definition.needs_priority:
            priority += 1
        return match, priority

    def cmd_add(self, cmd: StfCommand) -> None:
        table = self._table(cmd.table)
        match, priority = self._matches(table, cmd.keys, cmd.priority)
        if cmd.indirect is not None and table.profile is not None:
            which, ref = cmd.indirect
            entry = TableEntry(match, "", {}, priority)
            setattr(entry, which + "_id", parse_value(ref))
            table.insert(entry)
            return
        if cmd.indirect is not None:
            raise StfError(f"table {cmd.table} has no action profile for {cmd.indirect[0]}()")
        action, args = self._action(cmd.action, cmd.args, table)
        table.insert(TableEntry(match, action, args, priority))

    def _profile(self, name: str):
        profiles = self.device.action_profiles
        return profiles[_resolve(name, profiles, "action profile")]

    def cmd_member(self, cmd: StfCommand) -> None:
        profile = self._profile(cmd.profile)
        member_id = parse_value(cmd.ids[0])
        table = profile.tables[0] if profile.tables else None
        action, args = self._action(cmd.action, cmd.args, table)
        profile.insert_member(ProfileMember(member_id, action, args))

    def cmd_group(self, cmd: StfCommand) -> None:
        profile = self._profile(cmd.profile)
        members = {}
        for word in cmd.ids[1:]:
            member_id = parse_value(word)
            if member_id in members:
                raise StfError(f"member {member_id} is listed twice (BMv2 groups are sets)")
            members[member_id] = 1
        profile.insert_group(ProfileGroup(parse_value(cmd.ids[0]), members))

    def cmd_setdefault(self, cmd: StfCommand) -> None:
        table = self._table(cmd.table)
        table.set_default(*self._action(cmd.action, cmd.args, table))

    def cmd_mcast(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        grp = pre_id(rest[0], "multicast group", MAX_MCAST_GROUP)
        replicas = []
        for r in rest[1:]:
            port, _, rid = r.partition(":")
            replicas.append(Replica(parse_value(port), parse_value(rid) if rid else 0))
        self.device.pre.multicast_groups[grp] = replicas

    def cmd_clone_session(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        session = pre_id(rest[0], "clone session", MAX_PRE_ID)
        trunc = parse_value(rest[2]) if len(rest) > 2 else 0
        self.device.pre.clone_sessions[session] = CloneSession(
            [Replica(parse_value(rest[1]), 0)], 0, trunc
        )

    def cmd_meter_config(self, cmd: StfCommand) -> None:
        m = self.device.meters[_resolve(cmd.meter, self.device.meters, "meter")]
        m.set_config(parse_value(cmd.index), tuple(parse_value(x) for r in cmd.rates for x in r))

    def cmd_direct_meter_config(self, cmd: StfCommand) -> None:
        table = self._table(cmd.table)
        entry = table.find(*self._matches(table, cmd.keys, cmd.priority))
        if entry is None:
            raise StfError(f"no entry with this match in table {cmd.table}")
        entry.meter_config = tuple(parse_value(x) for r in cmd.rates for x in r)

    def _register(self, name):
        return self.device.registers[_resolve(name, self.device.registers, "register")]

    def cmd_register_write(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        self._register(rest[0]).write(parse_value(rest[1]), parse_value(rest[2]))

    def cmd_pvs_add(self, cmd: StfCommand) -> None:
        """BMv2's CLI: one exact member, the fields' values concatenated (first field in the
        most significant bits), as BMv2 stores a value set's values."""
        rest = cmd.rest
        vset = self.device.value_sets[_resolve(rest[0], self.device.value_sets, "value set")]
        value, fields = parse_value(rest[1]), vset.definition.fields
        total = sum(f.bitwidth for f in fields)
        if value >> total:
            raise StfError(f"pvs_add: {rest[1]} is wider than the value set's {total} bits")
        member, shift = {}, total
        for f in fields:
            shift -= f.bitwidth
            member[f.name] = FieldMatch("exact", value=(value >> shift) & ((1 << f.bitwidth) - 1))
        vset.write(vset.members + [member])

    def state_check(self, cmd: StfCommand) -> None:
        """One of STATE_CHECKS, read and judged as on every target (read_state_check)."""
        check = read_state_check(cmd)
        if check.kind == "register":
            got = {"value": self._register(check.name).read(check.index)}
        elif check.kind == "counter":
            c = self.device.counters[_resolve(check.name, self.device.counters, "counter")]
            got = dict(zip(("packets", "bytes"), c.read(check.index)))
        else:
            table = self._table(check.name)
            entry = table.find(*self._matches(table, *split_keys(check.key_words)))
            if entry is None:
                raise StfError(f"no entry with this match in table {check.name}")
            got = {"packets": entry.packets, "bytes": entry.bytes}
        self.result.checks += 1
        self.result.failures += judge_state(check, got)

    cmd_register_check = cmd_check_register = state_check
    cmd_counter_check = cmd_check_counter = cmd_direct_counter_check = state_check

    def cmd_packet(self, cmd: StfCommand) -> None:
        outputs = self.device.process(cmd.port, cmd.data)
        self.result.packets += 1
        self.last_outputs = outputs
        for p, frame in outputs:
            if self.verbose:
                print(f"  out port {p}: {frame.hex()}")
            self.received.setdefault(p, []).append(frame)

    def cmd_expect(self, cmd: StfCommand) -> None:
        if cmd.pattern is None:  # p4c: any number of frames may leave on this port
            self.any_output.add(cmd.port)
            return
        # Compared nibble by nibble as p4c does, so an odd number of digits is allowed.
        exact = cmd.pattern.endswith("$")
        self.expected.setdefault(cmd.port, []).append((cmd.pattern.removesuffix("$"), exact))

    # -- p4c STF / simple_switch_CLI commands ------------------------------------------
    def cmd_mirroring_add(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        if len(rest) != 2:
            raise StfError("mirroring_add needs <session> <port>")
        self.device.pre.clone_sessions[pre_id(rest[0], "clone session", MAX_PRE_ID)] = CloneSession(
            [Replica(parse_value(rest[1]), 0)]
        )

    def cmd_mc_mgrp_create(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        if len(rest) != 1:
            raise StfError("mc_mgrp_create needs <group>")
        self.device.pre.multicast_groups[pre_id(rest[0], "multicast group", MAX_MCAST_GROUP)] = []

    def cmd_mc_node_create(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        if len(rest) < 2:
            raise StfError("mc_node_create needs <rid> <port> ...")
        rid = parse_value(rest[0])
        # BMv2 keeps a node's ports as a bitmap: copies leave in port order.
        ports = sorted({parse_value(p) for p in rest[1:]})
        self.mc_nodes.append([Replica(port, rid) for port in ports])

    def cmd_mc_node_associate(self, cmd: StfCommand) -> None:
        rest = cmd.rest
        if len(rest) != 2:
            raise StfError("mc_node_associate needs <group> <node handle>")
        group, handle = parse_value(rest[0]), parse_value(rest[1])
        if group not in self.device.pre.multicast_groups:
            raise StfError(f"multicast group {group} was not created (mc_mgrp_create)")
        if not 0 <= handle < len(self.mc_nodes):
            raise StfError(f"no multicast node with handle {handle} (mc_node_create)")
        self.device.pre.multicast_groups[group].extend(self.mc_nodes[handle])

    def cmd_wait(self, cmd: StfCommand) -> None:
        pass  # packets are processed synchronously

    def cmd_expect_drop(self, cmd: StfCommand) -> None:
        self.result.checks += 1
        if self.last_outputs:
            ports = ", ".join(str(p) for p, _ in self.last_outputs)
            self.result.failures.append(
                f"expected the last packet to be dropped, it left on port(s) {ports}"
            )

    # -- comparison -------------------------------------------------------------------
    def compare(self) -> None:
        for port in sorted(set(self.expected) | set(self.received)):
            if port in self.any_output:
                continue
            exp = self.expected.get(port, [])
            got = self.received.get(port, [])
            for i, (pattern, exact) in enumerate(exp):
                if i >= len(got):
                    self.result.failures.append(
                        f"port {port}: expected packet #{i + 1} {pattern} was not sent"
                    )
                    continue
                if not frame_matches(got[i].hex(), pattern, exact):
                    self.result.failures.append(
                        f"port {port}: packet #{i + 1} differs\n    got      {got[i].hex()}"
                        f"\n    expected {pattern}{'$' if exact else ''}"
                    )
            for j in range(len(exp), len(got)):
                self.result.failures.append(
                    f"port {port}: unexpected packet #{j + 1} {got[j].hex()}"
                )


def run_stf(p4_path, stf_path, include_dirs=(), defines=None, verbose: bool = False) -> Result:
    program = compile_file(p4_path, include_dirs, defines or {})
    runner = StfRunner(program, verbose)
    return runner.run_text(Path(stf_path).read_text(), str(stf_path))


PROG = "python -m p4sim.stf"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description="Run an STF-like test against p4sim.")
    ap.add_argument("program", help="P4_16 v1model program")
    ap.add_argument("stf", help="test file (format: see the module documentation)")
    ap.add_argument(
        "-I", dest="include", action="append", default=[], type=input_dir, help="include directory"
    )
    ap.add_argument("-D", dest="define", action="append", default=[], help="NAME[=VALUE] macro")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every output frame")
    args = ap.parse_args(argv)
    defines = {}
    for d in args.define:
        k, _, v = d.partition("=")
        defines[k] = v or "1"
    try:
        result = run_stf(args.program, args.stf, args.include, defines, args.verbose)
    except P4Error as e:
        print(e, file=sys.stderr)  # already `file:line:col: error: ...`
        return 2
    except (StfError, OSError) as e:
        raise ToolError(str(e), exit_code=2) from None
    for f in result.failures:
        print("FAIL:", f)
    status = "PASS" if result.ok else "FAIL"
    print(
        f"{status}: {args.stf}: {result.packets} packet(s), {result.checks} check(s), {len(result.failures)} failure(s)"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(run(PROG, main))

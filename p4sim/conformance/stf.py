"""p4c's STF files read once, for both targets (p4sim's interpreter, `p4sim.stf`, and BMv2,
`p4sim.conformance.bmv2`), and judged as bmv2stf.py judges them.

A test's ports are the ports named by `packet` and `expect` lines (bmv2stf gives BMv2 an
interface for those only, so a frame sent to any other port is not seen). On each such
port, the frames must be as many as the `expect` lines, in order, each starting with the
expected bytes (`*` matches any nibble, a final `$` asks for the exact length); a port with
a bare `expect <port>` may send any number of frames.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field
from pathlib import Path


class StfError(Exception):
    """A malformed STF line, or one a target cannot carry out (names the line)."""


@dataclass
class StfCommand:
    name: str
    text: str  # the line, comment removed
    lineno: int = 0
    port: int = 0
    data: bytes = b""  # packet
    pattern: str | None = None  # expect: hex with `*`, maybe a final `$`; None: any frames
    table: str = ""
    priority: str | None = None
    keys: list[tuple[str, str]] = field(default_factory=list)
    action: str = ""
    args: list[tuple[str, str]] = field(default_factory=list)
    # p4sim's STF for action profiles: `add ... member(N)` / `group(N)` -> ("member", "N");
    # `member <profile> <id> <action>(...)`, `group <profile> <id> <member id> ...`
    indirect: tuple[str, str] | None = None
    profile: str = ""
    ids: list[str] = field(default_factory=list)
    # p4sim's `meter_config <meter> <index> <rates>`, `direct_meter_config <table> <keys>
    # [<priority>] <rates>`: rates ((cir, cburst), (pir, pburst)) in units per second
    meter: str = ""
    index: str = ""
    rates: tuple = ()

    @property
    def rest(self) -> list[str]:
        """The words after the command's name."""
        return self.text.split()[1:]


@dataclass
class Script:
    commands: list[StfCommand]

    @property
    def ports(self) -> list[int]:
        return sorted({c.port for c in self.commands if c.name in ("packet", "expect")})

    @property
    def packets(self) -> int:
        return sum(c.name == "packet" for c in self.commands)


_ACTION = re.compile(r"([\w.$]+)\s*\((.*)\)\s*(=\s*\w+\s*)?$")
_PRIORITY = re.compile(r"\d+|0[xX][0-9a-fA-F]+")


def _action_call(text: str) -> tuple[str, list[tuple[str, str]]]:
    m = _ACTION.match(text.strip())
    if m is None:
        return text.strip(), []
    args = []
    for part in filter(None, (p.strip() for p in m.group(2).split(","))):
        name, sep, value = part.partition(":")
        if not sep:
            raise StfError(f"action argument '{part}' must be <param>:<value>")
        args.append((name.strip(), value.strip()))
    return m.group(1), args


def split_keys(words: list[str]) -> tuple[list[tuple[str, str]], str | None]:
    """`<key>:<match>` words and at most one bare number, the entry's priority, in any order
    (p4c writes it first, p4sim's counter and meter checks last)."""
    keys, priority = [], None
    for w in words:
        kname, sep, value = w.partition(":")
        if sep:
            keys.append((kname, value))
        elif priority is None and _PRIORITY.fullmatch(w):
            priority = w
        else:
            raise StfError(f"cannot read '{w}' (keys are <name>:<value>, a priority a number)")
    return keys, priority


def _read_packet(cmd: StfCommand, words: list[str]) -> None:
    if len(words) < 2:
        raise StfError(
            f"{cmd.name} needs a port" + (" and the frame's hex bytes" * (cmd.name == "packet"))
        )
    try:
        cmd.port = int(words[1], 0)
    except ValueError:
        raise StfError(f"bad port '{words[1]}'") from None
    hexdata = "".join(words[2:])
    if cmd.name == "packet":
        try:
            cmd.data = bytes.fromhex(hexdata)
        except ValueError:
            raise StfError(f"bad hex in packet '{hexdata}'") from None
        return
    pattern = hexdata.lower()
    if pattern and not re.fullmatch(r"[0-9a-f*]*\$?", pattern):  # `$` alone: an empty frame
        raise StfError(f"bad expected packet '{pattern}' (hex digits and * wildcards)")
    cmd.pattern = pattern or None  # p4c: no bytes, any number of frames may leave


def _read_entry(cmd: StfCommand, words: list[str], line: str) -> None:
    """`add <table> [<priority>] <key>:<match> ... <action>(<args>)` and `setdefault`."""
    if len(words) < 3:
        raise StfError(f"{cmd.name} needs a table and an action")
    cmd.table = words[1]
    body = line.split(None, 2)[2]
    m = re.search(r"([\w.$]+\s*\(.*\))\s*(=\s*\w+\s*)?$", body)
    if m:
        key_text, action_text = body[: m.start()], m.group(1)
    else:
        key_text, _, action_text = body.rpartition(" ")
    target = re.fullmatch(r"(member|group)\s*\(\s*(\w+)\s*\)", action_text.strip())
    if cmd.name == "add" and target:
        cmd.indirect = (target.group(1), target.group(2))
    else:
        cmd.action, cmd.args = _action_call(action_text)
    cmd.keys, cmd.priority = split_keys(key_text.split())


def _parse_line(line: str, lineno: int = 0) -> StfCommand:
    words = line.split()
    name = words[0].lower()
    cmd = StfCommand(name, line, lineno)
    if name in ("packet", "expect"):
        _read_packet(cmd, words)
    elif name in ("add", "setdefault"):
        _read_entry(cmd, words, line)
    elif name in ("meter_config", "direct_meter_config"):
        if len(words) < (7 if name == "meter_config" else 6):
            raise StfError(f"{name} needs a meter (or table and keys) and four numbers")
        cir, cburst, pir, pburst = words[-4:]
        cmd.rates = ((cir, cburst), (pir, pburst))
        if name == "meter_config":
            cmd.meter, cmd.index = words[1], words[2]
        else:
            cmd.table = words[1]
            cmd.keys, cmd.priority = split_keys(words[2:-4])
    elif name in ("member", "group"):
        if len(words) < (4 if name == "member" else 3):
            raise StfError(
                f"{name} needs a profile, an id and its "
                + ("action" if name == "member" else "members")
            )
        cmd.profile = words[1]
        cmd.ids = words[2:3] if name == "member" else words[2:]
        if name == "member":
            cmd.action, cmd.args = _action_call(line.split(None, 3)[3])
    return cmd


def parse_script(text: str, filename: str = "<stf>") -> Script:
    """Every command of an STF text, in order; StfError naming `filename`:line otherwise."""
    commands = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            commands.append(_parse_line(line, lineno))
        except (StfError, ValueError) as e:
            raise StfError(f"{filename}:{lineno}: {e}") from None
    return Script(commands)


def read_script(path: Path) -> Script:
    return parse_script(Path(path).read_text(), str(path))


def frame_matches(frame_hex: str, pattern: str, exact: bool) -> bool:
    """p4c's comparison: the frame starts with the pattern (`*` nibbles match anything);
    with `$` it must also end there."""
    if len(frame_hex) < len(pattern) or (exact and len(frame_hex) != len(pattern)):
        return False
    return all(p == "*" or p == f for p, f in zip(pattern, frame_hex))


def check_outputs(script: Script, outputs: dict[int, list[bytes]]) -> list[str]:
    """bmv2stf's verdict on a target's frames (per STF port): the failures, [] if it passes."""
    expected: dict[int, list[str]] = {}
    any_frames: set[int] = set()
    for c in script.commands:
        if c.name == "expect":
            if c.pattern is None:
                any_frames.add(c.port)
            else:
                expected.setdefault(c.port, []).append(c.pattern)
    failures = []
    for port in script.ports:
        if port in any_frames:
            continue
        want, got = expected.get(port, []), outputs.get(port, [])
        if len(want) != len(got):
            failures.append(f"port {port}: {len(got)} frame(s), expected {len(want)}")
            continue
        for i, (pattern, frame) in enumerate(zip(want, got)):
            exact = pattern.endswith("$")
            if not frame_matches(frame.hex(), pattern.removesuffix("$"), exact):
                failures.append(f"port {port}: frame #{i + 1} is {frame.hex()}, expected {pattern}")
    return failures


def diff_outputs(
    ports: list[int], a: dict[int, list[bytes]], b: dict[int, list[bytes]]
) -> list[str]:
    """Where two targets' frames differ, port by port, in order, byte for byte."""
    diffs = []
    for port in ports:
        fa, fb = a.get(port, []), b.get(port, [])
        for i in range(max(len(fa), len(fb))):
            x = fa[i].hex() if i < len(fa) else "(none)"
            y = fb[i].hex() if i < len(fb) else "(none)"
            if x != y:
                diffs.append(f"port {port} frame #{i + 1}: BMv2 {x}, p4sim {y}")
    return diffs


def parse_value(text: str) -> int:
    text = text.strip()
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", text):
        parts = [int(x) for x in text.split(".")]
        if any(p > 255 for p in parts):
            raise StfError(f"bad IPv4 address {text}")
        return int.from_bytes(bytes(parts), "big")
    if re.fullmatch(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}", text):
        return int(text.replace(":", ""), 16)
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        raise StfError(f"bad value '{text}' (expected decimal, 0x.., 0b.., IPv4 or MAC)") from None


# check_counter comparisons (p4c's STF grammar)
_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


STATE_CHECKS = frozenset(
    {"register_check", "check_register", "counter_check", "check_counter", "direct_counter_check"}
)


@dataclass
class StateCheck:
    """One STF line that checks the switch's state, read alike for every target (p4sim's
    device here, BMv2 through simple_switch_CLI in p4sim.conformance): what to read and what
    each value read must be."""

    kind: str  # "register", "counter" or "direct_counter"
    name: str  # the register or counter; a direct counter's table
    label: str  # how a failure names it, as the line wrote it
    index: int = 0
    key_words: list[str] = field(default_factory=list)  # direct counter: <key>:<match> [prio]
    wants: list[tuple[str, str, int]] = field(default_factory=list)  # (value read, op, number)


_CHECK_COUNTER = re.compile(
    r"check_counter\s+([\w.]+)\s*\(\s*(\w+)\s*\)\s*"
    r"(?:(packets|bytes)\s*(?:(==|!=|<=|>=|<|>)\s*(\S+))?)?\s*"
)


def read_state_check(cmd: StfCommand) -> StateCheck:
    """`register_check <register> <index> <value>` (alias check_register), `counter_check
    <counter> <index> packets <n> [bytes <n>]`, p4c's `check_counter <counter>(<index>)
    [packets|bytes] [<op> <n>]` (which may check nothing) and `direct_counter_check <table>
    <key>:<match> ... [<priority>] packets <n> [bytes <n>]`."""
    rest = cmd.rest
    m = _CHECK_COUNTER.fullmatch(cmd.text) if cmd.name == "check_counter" else None
    if m is not None:
        name, index, what, op, value = m.groups()
        wants = [(what, op, parse_value(value))] if value is not None else []
        return StateCheck(
            "counter", name, f"counter {name}({index})", parse_value(index), [], wants
        )
    if cmd.name in ("register_check", "check_register"):
        return StateCheck(
            "register",
            rest[0],
            f"register {rest[0]}[{rest[1]}]",
            parse_value(rest[1]),
            [],
            [("value", "==", parse_value(rest[2]))],
        )
    if cmd.name == "direct_counter_check":
        counts = [i for i, w in enumerate(rest) if w in ("packets", "bytes")]
        if not counts:
            raise StfError(f"'{cmd.text}': give packets <n> and/or bytes <n>")
        split = counts[0]
        kind, name, label = "direct_counter", rest[0], f"direct counter of {rest[0]} entry"
        index, key_words, words = 0, rest[1:split], rest[split:]
    else:  # counter_check, and check_counter in counter_check's word order
        kind, name, label = "counter", rest[0], f"counter {rest[0]}[{rest[1]}]"
        index, key_words, words = parse_value(rest[1]), [], rest[2:]
    if len(words) % 2 or any(w not in ("packets", "bytes") for w in words[0::2]):
        raise StfError(f"'{cmd.text}': the counts are packets <n> and/or bytes <n>")
    wants = [(w, "==", parse_value(v)) for w, v in zip(words[0::2], words[1::2])]
    return StateCheck(kind, name, label, index, key_words, wants)


def judge_state(check: StateCheck, got: dict[str, int]) -> list[str]:
    """The failures of a state check given the values a target read (packets, bytes or
    value)."""
    failures = []
    for what, op, want in check.wants:
        value = got[what]
        if not _COMPARE[op](value, want):
            shown = (f"{value:#x}", f"{want:#x}") if what == "value" else (value, want)
            where = check.label if what == "value" else f"{check.label} {what}"
            failures.append(f"{where} = {shown[0]}, expected {op} {shown[1]}")
    return failures

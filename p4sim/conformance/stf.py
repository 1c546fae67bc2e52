"""p4c's STF files read once, for both targets (p4sim's interpreter, `p4sim.stf`, and BMv2,
`p4sim.conformance.bmv2`), and judged as bmv2stf.py judges them.

A test's ports are the ports named by `packet` and `expect` lines (bmv2stf gives BMv2 an
interface for those only, so a frame sent to any other port is not seen). On each such
port, the frames must be as many as the `expect` lines, in order, each starting with the
expected bytes (`*` matches any nibble, a final `$` asks for the exact length); a port with
a bare `expect <port>` may send any number of frames.
"""

from __future__ import annotations

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

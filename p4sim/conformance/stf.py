"""p4c's STF files read once, for both targets, and judged as bmv2stf.py judges them.

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

from p4sim.stf import _frame_matches


class ScriptError(Exception):
    """A line of the STF this runner cannot read (names the line)."""


@dataclass
class StfCommand:
    name: str
    text: str  # the line, comment removed
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


def _action_call(text: str) -> tuple[str, list[tuple[str, str]]]:
    m = _ACTION.match(text.strip())
    if m is None:
        return text.strip(), []
    args = []
    for part in filter(None, (p.strip() for p in m.group(2).split(","))):
        name, sep, value = part.partition(":")
        if not sep:
            raise ScriptError(f"action argument '{part}' must be <param>:<value>")
        args.append((name.strip(), value.strip()))
    return m.group(1), args


def _parse_line(line: str) -> StfCommand:
    words = line.split()
    name = words[0].lower()
    cmd = StfCommand(name, line)
    if name in ("packet", "expect"):
        if len(words) < 2:
            raise ScriptError(f"{name} needs a port")
        cmd.port = int(words[1], 0)
        hexdata = "".join(words[2:])
        if name == "packet":
            try:
                cmd.data = bytes.fromhex(hexdata)
            except ValueError:
                raise ScriptError(f"bad hex in packet '{hexdata}'") from None
        else:
            cmd.pattern = hexdata.lower() or None
    elif name in ("add", "setdefault"):
        if len(words) < 3:
            raise ScriptError(f"{name} needs a table and an action")
        cmd.table = words[1]
        body = line.split(None, 2)[2]
        m = re.search(r"([\w.$]+\s*\(.*\))\s*(=\s*\w+\s*)?$", body)
        if m:
            key_text, action_text = body[: m.start()], m.group(1)
        else:
            key_text, _, action_text = body.rpartition(" ")
        target = re.fullmatch(r"(member|group)\s*\(\s*(\w+)\s*\)", action_text.strip())
        if name == "add" and target:
            cmd.indirect = (target.group(1), target.group(2))
        else:
            cmd.action, cmd.args = _action_call(action_text)
        for w in key_text.split():
            kname, sep, value = w.partition(":")
            if sep:
                cmd.keys.append((kname, value))
            elif name == "add" and cmd.priority is None and not cmd.keys and w.isdigit():
                cmd.priority = w
            else:
                raise ScriptError(f"cannot read '{w}' (keys are <name>:<value>)")
    elif name in ("meter_config", "direct_meter_config"):
        if len(words) < (7 if name == "meter_config" else 6):
            raise ScriptError(f"{name} needs a meter (or table and keys) and four numbers")
        cir, cburst, pir, pburst = words[-4:]
        cmd.rates = ((cir, cburst), (pir, pburst))
        if name == "meter_config":
            cmd.meter, cmd.index = words[1], words[2]
        else:
            cmd.table = words[1]
            for w in words[2:-4]:
                kname, sep, value = w.partition(":")
                if sep:
                    cmd.keys.append((kname, value))
                elif cmd.priority is None and w.isdigit():
                    cmd.priority = w
                else:
                    raise ScriptError(f"cannot read '{w}' (keys are <name>:<value>)")
    elif name in ("member", "group"):
        if len(words) < (4 if name == "member" else 3):
            raise ScriptError(
                f"{name} needs a profile, an id and its "
                + ("action" if name == "member" else "members")
            )
        cmd.profile = words[1]
        cmd.ids = words[2:3] if name == "member" else words[2:]
        if name == "member":
            cmd.action, cmd.args = _action_call(line.split(None, 3)[3])
    return cmd


def read_script(path: Path) -> Script:
    commands = []
    for lineno, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            commands.append(_parse_line(line))
        except (ScriptError, ValueError) as e:
            raise ScriptError(f"{path}:{lineno}: {e}") from None
    return Script(commands)


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
            if not _frame_matches(frame.hex(), pattern.removesuffix("$"), exact):
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

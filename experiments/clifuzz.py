"""Fuzzer for the project's three command lines and their config files (issue 20).

    python -m experiments.clifuzz [--duration-s 20] [--seed 1] [--min-inputs 0]

Every option and positional of `dcctl`, `dcexp` and `p4sim` (found by walking their argparse
parsers, subcommands included), and of the benches' parsers (parse_only: their main() would
push traffic), gets values a user could type by mistake: control
characters, over-long names and paths (past NAME_MAX and PATH_MAX), special files
(/dev/null, a fifo, a directory), negative-looking values (`-1`, `-1:11`, `-.5`), empty and
huge values, and look-alikes of numbers and addresses (Arabic-Indic, fullwidth and other
Unicode digits, `1_000`, padding, U+2212 minus, a zero-width space), which Python's int()
and float() read as the number a terminal shows: one is never read as its ASCII twin. The
config files (dcctl's desired state, dcexp's scenarios, the remote switch file) get
duplicate keys, control characters, over-long names, .nan/.inf numbers, values of another
type, look-alike numbers, raw control bytes, alias bombs, recursive aliases and deep
nesting. Each input runs `main()` in this process with the side effects stopped at the door (no switch is connected to, no
server started, no study run): the outcome must be acceptance or one clean error line on
stderr (`prog: error: ...` or `dcexp: ...`), never a traceback; a broken config file and a
bad user name or address must be refused.

It lives in experiments because that package is the one that may import all three CLIs.
Seeded and bounded in time (and, with --min-inputs, by a number of inputs that a slow or busy
machine takes longer to reach rather than skips); prints the seed, the inputs tried and the
outcomes counted, and exits 1 listing the offending inputs when a rule is broken.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import logging
import os
import random
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from unittest import mock

from dccommon.cliargs import MAX_UINT64, ArgumentParser, add_old_name, float_range, int_range

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "p4sim" / "tests" / "p4" / "runtime_fwd.p4"
GOOD_SCENARIO = (
    "name: t\nlinks: {both: {rate_mbit: 20, delay_ms: 10, queue_pkts: 100}}\n"
    "flows: [{size_mb: 1}]\n"
)
GOOD_STATE = (
    "ports: {server: 0, leg_a: 1, leg_b: 2, flood_unknown: false,"
    " macs: {1: {src: 02:00:00:00:00:01}}}\n"
    "users:\n  ue1: {addr: 10.0.0.2, batch: 10, ratio: '1:1'}\n"
)
GOOD_REMOTE = (
    "address: 127.0.0.1:9\nports: {leg_a: 1, leg_b: 2, server: 3}\n"
    "interfaces: {leg_a: eth1, leg_b: eth2, server: eth3}\n"
)
NEGATIVE = ["-1", "-1:11", "-0x1", "-.5", "-1e9", "-1@veth0", "-5%", "-inf", "-nan"]
YAML_CONTROL = ["\\n", "\\t", "\\x1b", "\\0", "\\x7f", "\\u202e"]  # YAML escapes
# no NUL: a real command line cannot carry one (argv strings end at it)
CONTROL = ["\n", "\t", "\x1b[2J", "\x7f", "\u202e", "\r"]
NONFINITE = [".nan", ".inf", "-.inf", ".NaN", "+.Inf"]
OTHER_TYPES = ["[1, 2]", "{a: 1}", "true", "null", "''", "'1'", "1.5", "-1", "[]", "{}"]
# Look-alikes: ASCII words a user types, written with other digits or separators
LOOKALIKE_WORDS = ["12", "1000", "0.5", "-1", "20,80", "1:1", "10.0.0.2", "127.0.0.1:9559"]
DIGIT_ZEROS = [0x660, 0x6F0, 0x966, 0x9E6, 0xFF10, 0x1D7CE]  # Arabic-Indic, ..., math bold


def lookalike(word: str, rnd: random.Random) -> str:
    """`word` (ASCII) changed so that it still shows as, or Python reads it as, the same."""
    how = rnd.choice(["digits", "one digit", "underscore", "padding", "minus", "invisible"])
    if how in ("digits", "one digit"):
        zero = rnd.choice(DIGIT_ZEROS)
        at = [i for i, c in enumerate(word) if c.isdigit()]
        at = at if how == "digits" else [rnd.choice(at)]
        return "".join(chr(zero + int(c)) if i in at else c for i, c in enumerate(word))
    if how == "underscore" and re.search(r"\d\d", word):
        i = re.search(r"\d\d", word).start() + 1
        return word[:i] + "_" + word[i:]
    if how == "minus" and "-" in word:
        return word.replace("-", "\u2212")
    if how == "invisible":
        return word + rnd.choice(["\u200b", "\u00a0", "\ufeff"])
    return rnd.choice([" ", "  ", "\t"]) + word + rnd.choice(["", " "])


def ascii_twin(text: str) -> str:
    """The ASCII word a look-alike stands for (its digits as ASCII, no separators)."""
    out = []
    for c in text:
        if unicodedata.decimal(c, None) is not None:
            out.append(str(unicodedata.decimal(c)))
        elif c == "\u2212":
            out.append("-")
        elif c not in "_ \t\u200b\u00a0\ufeff":
            out.append(c)
    return "".join(out)


# Inputs that must be refused: a bad config file, and bad names or addresses where the
# command takes a user's name or address (each was accepted once and broke a table later).
NAME_SLOTS = {(("dcctl", "user", "add"), "--name"), (("dcctl", "user", "set"), "--name")}
ADDRESS_SLOTS = {(("dcctl", "user", "add"), "<positional>")}


def must_refuse(path: tuple, kind: str) -> bool:
    if kind.startswith("config "):
        return not kind.startswith("config maybe ")  # a changed type may still be valid
    what, _, slot = kind.partition(" for ")
    what, _, positional = what.partition(" as ")
    slot = "<positional>" if positional == "positional" else slot.rstrip("=")
    if (path, slot) in NAME_SLOTS:
        return what in ("control", "long name")
    return (path, slot) in ADDRESS_SLOTS


def numeric_slot_took_lookalike(leaf, kind: str, argv: list[str]) -> bool:
    """Whether an accepted look-alike went to a slot whose type reads its ASCII twin as a
    number (or numbers): there it must be refused, as the user meant another number or
    typed something else, and the terminal showed the two the same."""
    if not kind.startswith("look-alike ") or "extra argument" in kind:
        return False
    _, positionals, options = leaf
    slot = kind.partition(" for ")[2]
    action = options.get(slot.rstrip("=")) if slot else positionals[-1]
    value = argv[-1].partition("=")[2] if slot.endswith("=") else argv[-1]
    if action is None or action.type is None:
        return False
    try:
        twin = action.type(ascii_twin(value))
    except (argparse.ArgumentTypeError, ValueError, TypeError, OSError):
        return False
    values = twin if isinstance(twin, (list, tuple)) else [twin]
    return bool(values) and all(isinstance(v, (int, float)) for v in values)


class Accepted(Exception):
    """The input passed every check and reached a side effect (connect, serve, run)."""


def _accept(*_args, **_kwargs):
    raise Accepted()


def walk(parser: argparse.ArgumentParser, path: tuple = ()) -> list[tuple[tuple, list, dict]]:
    """(subcommand path, positionals, {option taking a value: its action}) for every leaf
    parser."""
    leaves, positionals, options = [], [], {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                leaves += walk(sub, path + (name,))
        elif not action.option_strings:
            positionals.append(action)
        elif action.nargs != 0:
            options[action.option_strings[-1]] = action
    if not leaves:
        leaves.append((path, positionals, options))
    return leaves


class Inputs:
    """The bad values, and the files they point at, in one scratch directory."""

    def __init__(self, work: Path, rnd: random.Random):
        self.work, self.rnd = work, rnd
        (work / "dir").mkdir()
        os.mkfifo(work / "fifo")
        self.scenario = self.file("scenario.yaml", GOOD_SCENARIO)
        self.state = self.file("state.yaml", GOOD_STATE)
        self.remote = self.file("remote.yaml", GOOD_REMOTE)
        self.fifo, self.dir = str(work / "fifo"), str(work / "dir")

    def file(self, name: str, text: str) -> str:
        (self.work / name).write_text(text)
        return str(self.work / name)

    def value(self) -> tuple[str, str]:
        """(kind, value) of one bad command-line value."""
        r = self.rnd
        kind = r.choice(
            ["control", "long name", "long path", "special file", "negative", "empty", "huge"]
            + ["look-alike"]
        )
        if kind == "look-alike":
            return kind, lookalike(r.choice(LOOKALIKE_WORDS), r)
        if kind == "control":
            word = r.choice(["ue1", "10.0.0.2", "1", "a:b", self.scenario])
            at = r.randrange(len(word) + 1)
            return kind, word[:at] + r.choice(CONTROL) + word[at:]
        if kind == "long name":
            return kind, r.choice(["n", "é", "1"]) * r.choice([65, 256, 300, 5000])
        if kind == "long path":
            return kind, r.choice(
                [f"{self.work}/{'p' * 300}", f"{self.work}/" + "d/" * 2100 + "x", "/" * 5000]
            )
        if kind == "special file":
            return kind, r.choice(["/dev/null", "/dev/zero", self.fifo, self.dir, "/"])
        if kind == "negative":
            return kind, r.choice(NEGATIVE)
        if kind == "empty":
            return kind, r.choice(["", " ", "=", ":"])
        return kind, r.choice(["1" * 40, "1e999", "0x" + "f" * 40, "99999999999999999999:1"])

    def config(self, what: str) -> tuple[str, str]:
        """(kind, path) of a config file with one mistake in it."""
        r = self.rnd
        good = {"scenario": GOOD_SCENARIO, "state": GOOD_STATE, "remote": GOOD_REMOTE}[what]
        kinds = ["duplicate key", "control name", "long name", "non-finite number"]
        kinds += ["alias bomb", "recursive alias", "deep nesting", "maybe other type"]
        kinds += ["look-alike number", "raw control byte"]
        kind = r.choice(kinds + (["bad address"] if what == "state" else []))
        lines = good.splitlines()
        numbers = list(re.finditer(r"(?<=: )\d+\b", good))
        scalars = list(re.finditer(r"(?<=: )[^\s,{}\[\]][^,{}\[\]\n]*", good))
        if kind == "non-finite number":  # YAML's .nan and .inf are floats
            at = r.choice(numbers)
            text = good[: at.start()] + r.choice(NONFINITE) + good[at.end() :]
        elif kind == "raw control byte":  # not an escape: the byte itself, as a binary file has
            at = r.randrange(len(good) + 1)
            text = good[:at] + r.choice(["\x00", "\x1b", "\x07", "\x7f"]) + good[at:]
        elif kind == "look-alike number":  # quoted: YAML would take a padded 5 as 5
            at = r.choice(numbers)
            text = good[: at.start()] + json.dumps(lookalike(at.group(), r)) + good[at.end() :]
        elif kind == "maybe other type":
            at = r.choice(scalars)
            text = good[: at.start()] + r.choice(OTHER_TYPES) + good[at.end() :]
        elif kind == "alias bomb":  # ten aliases of ten, seven deep: 10^7 values
            bomb = "".join(
                f"b{i}: &b{i} [{', '.join([f'*b{i - 1}' if i else '1'] * 10)}]\n" for i in range(7)
            )
            text = bomb + good
        elif kind == "recursive alias":
            text = good + r.choice(["loop: &r [*r]\n", "loop: &r {a: *r}\n"])
        elif kind == "deep nesting":
            depth = r.choice([100, 1000, 5000])
            text = good + "deep: " + "[" * depth + "]" * depth + "\n"
        elif kind == "duplicate key":
            at = r.randrange(len(lines))
            lines.insert(r.randrange(len(lines) + 1), lines[at])
            text = "\n".join(lines) + "\n"
        elif kind == "control name":
            escape = r.choice(YAML_CONTROL)
            text = good.replace("name: t\n", f'name: "t{escape}"\n')
            text = text.replace("ue1:", f'"ue{escape}1":')
        elif kind == "long name":
            text = good.replace("name: t", "name: " + "t" * 300).replace("ue1:", "u" * 300 + ":")
        else:
            bad = r.choice(["255.255.255.255", "0.0.0.0", "224.0.0.1", "::", "ff02::1", "::1"])
            text = good.replace("10.0.0.2", bad)
        return kind, self.file(f"{what}-{r.randrange(10**9)}.yaml", text)


def _base(path: tuple, inputs: Inputs) -> list[str]:
    """Good values for the positionals of one subcommand."""
    return {
        ("dcctl", "user", "add"): ["10.0.0.2"],
        ("dcctl", "user", "set"): ["ue1"],
        ("dcctl", "user", "del"): ["ue1"],
        ("dcctl", "control"): ["ue1"],
        ("dcctl", "apply"): [inputs.state],
        ("dcexp", "run"): [inputs.scenario],
        ("dcexp", "campaign"): [inputs.dir],
        ("dcexp", "report"): [inputs.dir],
        ("dcexp", "validate"): [inputs.scenario],
        ("p4sim",): ["--no-p4"],
        ("p4sim", "compile"): [str(PROGRAM)],
    }.get(path, [])


def parse_only() -> dict[str, argparse.ArgumentParser]:
    """The benches, whose main() would push traffic: their parsers alone are fuzzed."""
    from experiments.linkem.bench import cost
    from experiments.ratebench import components, iopaths
    from experiments.ratebench.__main__ import build_parser as ratebench

    parsers = [ratebench(), components.build_parser(), iopaths.build_parser(), cost.build_parser()]
    return {p.prog: p for p in parsers}


def _commands():
    from controlplane.cli import build_parser as dcctl
    from experiments.cli import build_parser as dcexp
    from p4sim.cli import build_compile_parser, build_run_parser

    leaves = walk(dcctl(), ("dcctl",)) + walk(dcexp(), ("dcexp",))
    leaves += walk(build_run_parser(), ("p4sim",)) + walk(build_compile_parser(), ("p4sim",))
    for prog, parser in parse_only().items():
        leaves += walk(parser, (prog,))
    # clean removes other runs' leftovers: not something to fuzz on a shared machine
    return [leaf for leaf in leaves if leaf[0] != ("dcexp", "clean")]


def make_input(leaf, inputs: Inputs) -> tuple[str, list[str]]:
    """(kind, argv) with one bad value (or one bad config file) for one command."""
    path, _, options = leaf
    argv = list(path[1:]) + _base(path, inputs)
    r = inputs.rnd
    configs = {("dcctl", "apply"): "state", ("dcexp", "validate"): "scenario"}
    if path in configs and r.random() < 0.3:
        kind, file = inputs.config(configs[path])
        return f"config {kind}", argv[:-1] + [file]
    if path == ("dcexp", "run") and r.random() < 0.15:
        kind, file = inputs.config("remote")
        return f"remote config {kind}", argv + ["--target", f"remote:{file}"]
    kind, value = inputs.value()
    slots = list(options)
    slots += ["<positional>"] if _base(path, inputs) and path != ("p4sim",) else []
    slot = r.choice(slots or ["<extra>"])
    if slot == "<positional>":
        return f"{kind} as positional", argv[:-1] + [value]
    if slot == "<extra>":
        return f"{kind} as extra argument", argv + [value]
    if r.random() < 0.5:
        return f"{kind} for {slot}", argv + [slot, value]
    return f"{kind} for {slot}=", argv + [f"{slot}={value}"]


def _error_lines(err: str) -> list[str]:
    lines = [line for line in err.splitlines() if line.strip()]
    while lines and (lines[0].startswith("usage:") or lines[0].startswith(" ")):
        lines.pop(0)
    return lines


def run_one(prog: str, argv: list[str]) -> tuple[str, str]:
    """("accepted" | "clean error" | "FAIL ...", detail) for one command line."""
    from controlplane.cli import main as dcctl
    from experiments.cli import main as dcexp
    from p4sim.cli import main as p4sim

    benches = parse_only()
    main = {"dcctl": dcctl, "dcexp": dcexp, "p4sim": p4sim}.get(prog)
    if prog in benches:
        main = lambda argv: benches[prog].parse_args(argv) and 0
    argv = (["--grpc-addr", "127.0.0.1:9"] if prog == "dcctl" else []) + argv
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level  # p4sim's main() sets up logging
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    except Accepted:
        return "accepted", ""
    except BaseException as exc:  # noqa: BLE001 - the fuzzer's whole point
        return f"FAIL traceback {type(exc).__name__}", repr(exc)[:300]
    finally:
        root.handlers[:], root.level = handlers, level
    if code == 0:
        return "accepted", ""
    lines = _error_lines(err.getvalue())
    if code in (1, 2) and len(lines) == 1 and re.match(rf"{re.escape(prog)}( [\w-]+)*: ", lines[0]):
        return "clean error", lines[0][:200]
    return f"FAIL exit {code} with {len(lines)} error lines", err.getvalue()[-300:]


@contextlib.contextmanager
def side_effects_stopped(work: Path):
    """Connecting, serving and running studies raise Accepted; the cwd is scratch."""
    patches = [
        mock.patch("controlplane.splitter.Splitter.connect", _accept),
        mock.patch("p4sim.p4runtime.P4RuntimeServer", _accept),
        mock.patch("experiments.run.runner.run_scenario", _accept),
        mock.patch("experiments.run.campaign.run_campaign", _accept),
        mock.patch("experiments.run.rayexec.RayExecutor", _accept),
    ]
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with contextlib.ExitStack() as stack:
            for p in patches:
                stack.enter_context(p)
            yield
    finally:
        os.chdir(cwd)


def fuzz(seconds: float, seed: int, min_inputs: int = 0) -> int:
    rnd = random.Random(seed)
    leaves = _commands()
    outcomes: collections.Counter = collections.Counter()
    kinds: collections.Counter = collections.Counter()
    failures, tried = [], 0
    with tempfile.TemporaryDirectory(prefix="clifuzz-") as tmp:
        work = Path(tmp)
        inputs = Inputs(work, rnd)
        deadline = time.monotonic() + seconds
        with side_effects_stopped(work / "dir"):
            while time.monotonic() < deadline or tried < min_inputs:
                leaf = rnd.choice(leaves)
                kind, argv = make_input(leaf, inputs)
                outcome, detail = run_one(leaf[0][0], argv)
                if outcome == "accepted" and must_refuse(leaf[0], kind):
                    outcome = "FAIL accepted"
                elif outcome == "accepted" and numeric_slot_took_lookalike(leaf, kind, argv):
                    outcome = "FAIL accepted a look-alike number"
                tried += 1
                kinds[kind.split(" for ")[0].split(" as ")[0]] += 1
                outcomes[outcome] += 1
                if outcome.startswith("FAIL"):
                    failures.append(f"{outcome}: {leaf[0][0]} {repr(argv)[:300]}: {detail}")
    print(
        f"CLI/config fuzzer (seed {seed}, {seconds:.0f} s): {tried} inputs to "
        f"{len(leaves)} commands of dcctl, dcexp, p4sim and the benches' parsers"
    )
    print("  inputs:   " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("  outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    for f in failures[:50]:
        print("  " + f)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m experiments.clifuzz", description=__doc__.split("\n\n")[0])
    budget = p.add_argument(
        "--duration-s", type=float_range(0, 86400, "duration"), default=20.0, help="time budget"
    )
    add_old_name(p, "--seconds", budget)
    p.add_argument("--seed", type=int_range(0, MAX_UINT64, "seed"), default=1)
    p.add_argument(
        "--min-inputs",
        type=int_range(0, 10_000_000, "min inputs"),
        default=0,
        help="go on past the time budget until this many inputs were tried",
    )
    args = p.parse_args(argv)
    return fuzz(args.duration_s, args.seed, args.min_inputs)


if __name__ == "__main__":
    sys.exit(main())

"""Argument types, input checks and the help formatter shared by the project's three
commands (p4sim, dcctl, dcexp), and the CLI conventions of README.md ("Command-line
conventions"): one check per kind of input, used wherever that input is met.

Every type refuses bad input with one line that names the option's allowed values, so that
argparse prints `PROG: error: argument --x: ...` and exits with status 2.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import fcntl
import ipaddress
import logging
import math
import os
import re
import socket
import stat
import struct
import sys
from pathlib import Path

import yaml

MAX_TCP_PORT = 65535
MAX_UINT64 = (1 << 64) - 1
MAX_UNIX_PATH = 107  # sun_path of <sys/un.h> holds 108 bytes with the closing NUL
MAX_NAME_CHARS = 64  # user, scenario and flow names: they are printed in tables


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one change: a value that starts with '-' and a digit or dot (`--ratio
    -1:11`, `-i -1@veth0`) is the option's value, so its own type check names the problem,
    instead of argparse's "expected one argument". Subcommand parsers inherit it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-[\d.]")

    def error(self, message: str):
        """argparse's error, with the user's control characters shown escaped: a raw \\r or
        escape sequence in an echoed value would break the one error line."""
        super().error(printable(message))


class DeprecatedName(argparse.Action):
    """An old option name kept for one release: it sets the new option's value and says on
    stderr which name to use."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            f"{parser.prog}: warning: {option_string} is deprecated; use {self.new}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_old_name(parser: argparse.ArgumentParser, old: str, action: argparse.Action) -> None:
    """Accept `old` as a deprecated, hidden spelling of the option `action`."""
    parser.add_argument(
        old,
        dest=action.dest,
        type=action.type,
        metavar=action.metavar,
        action=DeprecatedName,
        new=action.option_strings[-1],
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


def log_to_stderr(prog: str, logger_name: str, level: int = logging.INFO) -> None:
    """A CLI's messages: logger `logger_name` and its children, from `level` on, as lines
    `PROG: message` on the current stderr (the error line is the CLI's own, `PROG: error:`).
    Called again (a test calling main() twice), it replaces the handler it added."""
    logger = logging.getLogger(logger_name)
    logger.handlers[:] = [h for h in logger.handlers if not getattr(h, "dc_cli", False)]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: %(message)s"))
    handler.dc_cli = True
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False  # not twice when the root logger has a handler too


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows `(default: X)` only where X tells the reader something: not for options whose
    absence means "not given" (None), empty repeatable options ([]) or flags (False)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        default = action.default
        if default is None or default is False or default == [] or not action.option_strings:
            return action.help or ""
        return super()._get_help_string(action)


# Numbers as a user types them: ASCII digits only. Python's int() and float() also read
# fullwidth ('１２'), Arabic-Indic ('١٢') and other Unicode digits, '1_000' and padding
# spaces, which a terminal may show as a plain number that is not what was typed.
_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_ASCII_HEX = re.compile(r"[+-]?0[xX][0-9a-fA-F]+")
_ASCII_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_int(text: str, hex_ok: bool = False) -> int:
    """A whole number written in ASCII decimal digits, with an optional sign (or 0x... hex
    when hex_ok): the one reader of the commands' integers. ValueError for anything else."""
    if _ASCII_INT.fullmatch(text):
        return int(text)
    if hex_ok and _ASCII_HEX.fullmatch(text):
        return int(text, 16)
    raise ValueError(f"not a whole number in ASCII digits: {text!r}")


def parse_float(text: str) -> float:
    """A finite decimal number in ASCII (12, 0.5, .5, 1e-3, with an optional sign): the one
    reader of the commands' real numbers. ValueError for anything else, inf and nan too."""
    if _ASCII_FLOAT.fullmatch(text):
        return float(text)
    raise ValueError(f"not a decimal number in ASCII digits: {text!r}")


def number_list(text: str, parse=parse_float) -> list:
    """Comma-separated numbers ('20,80,160'), each read by `parse` (parse_float or
    parse_int): the benches' lists of rates and slacks. ValueError for an item that is not
    such a number, an empty one too, and one with spaces around it, as a single number
    (str.strip() also took a no-break space: '1000\u00a0' was 1000)."""
    return [parse(item) for item in text.split(",")]


def once_each(text: str, values: list, what: str = "") -> list:
    """`values`, read from a list option's `text`, when none is given twice; else an
    ArgumentTypeError naming the repeat (a point or slack given twice would run twice into
    the same folder, or where results are keyed by value, silently once)."""
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        shown_twice = f"{twice:g}" if isinstance(twice, float) else twice
        raise argparse.ArgumentTypeError(
            f"{what + ' ' if what else ''}{text!r}: {shown_twice} is given twice; give each once"
        )
    return values


def number_list_arg(
    lo, hi, what: str, parse=parse_float, low_open=False, example="", empty_ok=False
):
    """An argparse type: number_list of values in lo..hi (above lo when low_open), each given
    once (once_each). With empty_ok, '' is the empty list (a bench's "none of these points")."""
    kind = "whole numbers" if parse is parse_int else "numbers"
    allowed = f"above {lo:g} up to {hi:g}" if low_open else f"from {lo:g} to {hi:g}"
    eg = f", e.g. {example}" if example else ""

    def check(text: str) -> list:
        if empty_ok and text == "":
            return []
        try:
            values = number_list(text, parse)
        except ValueError:
            values = []
        if not values or any(not lo <= v <= hi or (low_open and v == lo) for v in values):
            raise argparse.ArgumentTypeError(
                f"{what} {text!r}: expected comma-separated {kind} {allowed}{eg}"
            )
        return once_each(text, values, what)

    check.__name__ = what
    return check


def subset_list(allowed: tuple[str, ...]):
    """An argparse type: a comma-separated subset of `allowed`, each once."""

    def parse(text: str) -> list[str]:
        values = [x for x in text.split(",") if x]
        if not values or any(v not in allowed for v in values):
            raise argparse.ArgumentTypeError(f"{text!r}: expected a comma-separated subset of "
                                             f"{', '.join(allowed)}")  # fmt: skip
        return once_each(text, values)

    return parse


def _range_text(lo: float, hi: float) -> str:
    return f"{lo}..{'2^64-1' if hi == MAX_UINT64 else hi}"


def int_range(lo: int, hi: int, what: str = "value"):
    """An argparse type: a whole number in lo..hi."""

    def parse(text: str) -> int:
        try:
            value = parse_int(text, hex_ok=True)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} {text!r} is not a whole number (allowed {_range_text(lo, hi)})"
            ) from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"{what} {text} is out of range (allowed {_range_text(lo, hi)})"
            )
        return value

    parse.__name__ = what  # argparse names the type in its fallback message
    return parse


def float_range(lo: float, hi: float, what: str = "value", low_open: bool = False):
    """An argparse type: a finite number in lo..hi (above lo when low_open)."""
    allowed = f"above {lo:g} up to {hi:g}" if low_open else f"from {lo:g} to {hi:g}"

    def parse(text: str) -> float:
        try:
            value = parse_float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < lo or value > hi or (low_open and value == lo):
            raise argparse.ArgumentTypeError(f"{what} {text!r} must be a number {allowed}")
        return value

    parse.__name__ = what
    return parse


def host_port(text: str) -> str:
    """HOST:PORT for a gRPC address: an IPv4 address or host name, or [IPv6], then a TCP port
    0..65535 (gRPC itself would wrap 99999 to another port); or unix:PATH."""
    if text.startswith("unix:") and len(text) > len("unix:"):
        if len(os.fsencode(text[len("unix:") :])) > MAX_UNIX_PATH:
            raise argparse.ArgumentTypeError(
                f"{short_path(text)}: a Unix socket path has at most {MAX_UNIX_PATH} bytes"
            )
        return text
    host, sep, port = text.rpartition(":")
    shape = "expected HOST:PORT with PORT 0..65535 (e.g. 127.0.0.1:9559, [::1]:9559) or unix:PATH"
    if not sep or not host or not _ASCII_INT.fullmatch(port) or port[0] in "+-":
        raise argparse.ArgumentTypeError(f"{text!r}: {shape}")
    if int(port) > MAX_TCP_PORT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: port {port} is out of range (allowed 0..65535)"
        )
    if host.startswith("[") != host.endswith("]"):
        raise argparse.ArgumentTypeError(f"{text!r}: {shape}")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {host} is not a bracketed IPv6 address; {shape}"
            ) from None
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{text!r}: write an IPv6 host in brackets; {shape}")
    elif not _is_host(host):
        raise argparse.ArgumentTypeError(
            f"{text!r}: {host!r} is neither an IPv4 address nor a host name (letters, digits, "
            f"'-' and '.'; e.g. 127.0.0.1, switch1.lab)"
        )
    return text


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


def _is_host(host: str) -> bool:
    """An IPv4 address, or a DNS host name (RFC 1123: labels of letters, digits and '-', at
    most 253 characters; all-numeric dotted text must be an IPv4 address: 999.1.1.1 is
    neither)."""
    if re.fullmatch(r"[\d.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return False
        return True
    labels = host.removesuffix(".").split(".")
    return len(host) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels)


def did_you_mean(word, choices) -> str:
    """ " (did you mean 'delay_ms'?)" when `word` is a near miss of one of `choices`, else ""."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def type_in_words(value) -> str:
    """What a parsed YAML value is, as an error message says it: "nothing (an empty file or
    value)", "a list", "a string 'x'", ..."""
    if value is None:
        return "nothing (an empty file or value)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    words = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "a mapping"}
    return words.get(type(value), f"a {type(value).__name__}")


def check_name(text, what: str = "name") -> str:
    """A name shown later in tables and logs: 1..64 printable characters, no control
    characters (a newline would break every table that prints it)."""
    name = str(text)
    if not 1 <= len(name) <= MAX_NAME_CHARS:
        raise ValueError(f"{what} {name[:80]!r} must be 1 to {MAX_NAME_CHARS} characters")
    if not name.isprintable():
        raise ValueError(
            f"{what} {name!r} holds a control or non-printable character "
            f"(allowed: 1 to {MAX_NAME_CHARS} printable characters)"
        )
    return name


def name_arg(what: str = "name"):
    """An argparse type for check_name."""

    def parse(text: str) -> str:
        try:
            return check_name(text, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = what
    return parse


def check_unicast(text, what: str = "address") -> str:
    """A user's (host's) IPv4 or IPv6 address, normalised: unicast only. Refuses what can
    never be one host: unspecified, loopback, multicast, broadcast (255.255.255.255 whatever
    the subnet) and reserved space. Spaces around it are refused, as around a number: the
    value is what was typed."""
    try:
        addr = ipaddress.ip_address(str(text))
    except ValueError:
        raise ValueError(
            f"{what} {text!r} is not an IPv4 or IPv6 address (e.g. 10.0.0.2, fd00::2; "
            "ASCII digits, no spaces)"
        ) from None
    kind = (
        (addr.is_unspecified and "the unspecified address")
        or (addr.is_loopback and "a loopback address")
        or (addr.is_multicast and "a multicast address")
        or (addr == ipaddress.ip_address("255.255.255.255") and "the broadcast address")
        or (addr.is_reserved and "a reserved address")
    )
    if kind:
        raise ValueError(f"{what} {addr} is {kind} (allowed: a unicast IPv4 or IPv6 address)")
    return str(addr)


def unicast_arg(text: str) -> str:
    """An argparse type for check_unicast."""
    try:
        return check_unicast(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def port_map(pairs) -> dict[int, str]:
    """{port: interface} from (port, interface) pairs (p4sim -i, a testbed's switch port
    map): ValueError when a port or an interface is given twice (two ports on one interface
    would each see the other's frames)."""
    ports: dict[int, str] = {}
    for port, name in pairs:
        if port in ports:
            raise ValueError(f"port {port} given twice ({ports[port]} and {name})")
        if name in ports.values():
            other = next(p for p, n in ports.items() if n == name)
            raise ValueError(
                f"interface {name} given for two ports ({other} and {port}); "
                "give each interface one port"
            )
        ports[port] = name
    return ports


class InputFileError(ValueError):
    """An input path that cannot be read as a file; the message is one line, `reason` its
    short form (e.g. "is a directory")."""

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason


NAME_TOO_LONG = "name too long (a file name has at most 255 bytes, a path at most 4095)"
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a fifo",
    stat.S_IFSOCK: "a socket",
}


def printable(text) -> str:
    """Text for one error line: control characters escaped (a user's \\n or \\r would
    break the line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def shown(value, limit: int = 80) -> str:
    """A value as one error line echoes it: its repr, printable, cut at `limit` characters
    (a YAML value can be a list of thousands of items)."""
    text = printable(repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_path(path) -> str:
    """A path as an error message shows it: printable, one past NAME_MAX cut with '...'."""
    text = printable(path)
    return text if len(text) <= 255 else text[:60] + "..."


def _stat(path) -> os.stat_result:
    """os.stat, its failures as one-line InputFileErrors."""
    try:
        return os.stat(path)
    except ValueError:  # a NUL byte
        raise InputFileError(f"{short_path(path)}: a path cannot hold a NUL byte", "NUL") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputFileError(f"{short_path(path)}: {NAME_TOO_LONG}", NAME_TOO_LONG) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise InputFileError(f"{short_path(path)}: no such file", "no such file") from None
        raise InputFileError(f"{short_path(path)}: {exc.strerror}", exc.strerror) from None


def check_input_file(path) -> None:
    """Raise InputFileError naming why `path` is not a readable regular file: name too
    long, no such file, is a directory, is not a regular file (device, fifo, socket)."""
    st = _stat(path)
    if stat.S_ISDIR(st.st_mode):
        reason = "is a directory (expected a regular file)"
        raise InputFileError(f"{short_path(path)}: {reason}", reason)
    if not stat.S_ISREG(st.st_mode):
        reason = f"is not a regular file ({_KINDS.get(stat.S_IFMT(st.st_mode), 'special')})"
        raise InputFileError(f"{short_path(path)}: {reason}", reason)


def input_file(text: str) -> Path:
    """An argparse type: a readable regular file (check_input_file's reasons as the error)."""
    try:
        check_input_file(text)
    except InputFileError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(text)


def input_dir(text: str) -> Path:
    """An argparse type: an existing directory (a campaign's, a study's results)."""
    try:
        st = _stat(text)
    except InputFileError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("no such file", "no such directory"))
    if not stat.S_ISDIR(st.st_mode):
        raise argparse.ArgumentTypeError(f"{short_path(text)}: is not a directory")
    return Path(text)


def make_output_dir(path) -> Path:
    """Create the output directory `path` (and its parents) unless it exists: InputFileError
    with reason "exists and is not a directory" or "cannot create the directory: ..."."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        reason = "exists and is not a directory"
        raise InputFileError(f"{short_path(path)}: {reason}", reason) from None
    except (OSError, ValueError) as exc:
        reason = f"cannot create the directory: {getattr(exc, 'strerror', None) or exc}"
        raise InputFileError(f"{short_path(path)}: {reason}", reason) from None
    return Path(path)


def check_output_file(path) -> None:
    """A file a command writes when it is done (a bench's JSON): checked before the work, so
    that a typo in its folder does not lose minutes of results at the end."""
    parent = Path(path).parent
    if not parent.is_dir():
        reason = f"its folder {short_path(parent)} does not exist"
        raise InputFileError(f"{short_path(path)}: {reason}", reason)
    if Path(path).is_dir():
        reason = "is a directory (expected a file name)"
        raise InputFileError(f"{short_path(path)}: {reason}", reason)
    if not os.access(parent, os.W_OK):
        reason = f"its folder {short_path(parent)} is not writable"
        raise InputFileError(f"{short_path(path)}: {reason}", reason)


MAX_TEXT_BYTES = 16 * 2**20  # a YAML input; the largest desired state (MAX_USERS) is ~100 kB


def read_bounded(path, limit: int, what: str) -> bytes:
    """The bytes of the regular file `path`, read only up to `limit` (a huge file given by
    mistake is refused at once, never read whole): InputFileError naming `what` it is."""
    check_input_file(path)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:  # no read permission, an I/O error
        raise InputFileError(f"{short_path(path)}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise InputFileError(
            f"{short_path(path)}: larger than the {limit // 2**20} MiB allowed for {what}"
        )
    return data


class NotUtf8Error(InputFileError):
    """A text input file holds bytes that are not UTF-8; the message gives file:line:col."""


def read_utf8_text(path) -> str:
    """The text of a UTF-8 file (scenario, desired state). A bad byte is reported at its
    line and column, counted in bytes from 1 as editors and `cmp` show them."""
    data = read_bounded(
        path, MAX_TEXT_BYTES, "a text input file (a scenario or desired state is a few kB)"
    )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8Error(
            f"{path}:{line}:{col}: byte 0x{data[exc.start]:02x} is not UTF-8 ({exc.reason}); "
            "save the file as UTF-8"
        ) from None


# Bounds of a YAML document: the project's files are a few hundred nodes (a desired state of
# MAX_USERS users some 20,000). Anchors and aliases let a small file stand for a huge or
# endless tree (the "billion laughs"), and every reader that walks it (a check, an error
# message that echoes a value, a JSON dump) would run out of memory or stack.
MAX_YAML_DEPTH = 64
MAX_YAML_NODES = 1_000_000  # counted with every alias expanded


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a mapping that gives a key twice (plain YAML keeps the
    last one silently, so a typo would change a study without a word), nesting deeper than
    MAX_YAML_DEPTH, and aliases that make the tree recursive or larger than MAX_YAML_NODES."""

    _depth = 0

    def compose_node(self, parent, index):
        if self._depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise InputFileError(
                f"{mark.name}:{mark.line + 1}:{mark.column + 1}: nested deeper than "
                f"{MAX_YAML_DEPTH} levels (allowed at most {MAX_YAML_DEPTH})"
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def check_size(self, root) -> None:
        """InputFileError when aliases make the tree under `root` recursive or larger than
        MAX_YAML_NODES; each node is measured once, so a bomb is found in linear time."""
        sizes: dict[int, int] = {}

        def size(node) -> int:
            if id(node) in sizes:
                if sizes[id(node)] < 0:
                    mark = node.start_mark
                    raise InputFileError(
                        f"{mark.name}:{mark.line + 1}:{mark.column + 1}: an alias refers to "
                        "a node that contains it (a recursive tree); write the values out"
                    )
                return sizes[id(node)]
            sizes[id(node)] = -1  # being measured
            children = node.value if isinstance(node, yaml.SequenceNode) else []
            if isinstance(node, yaml.MappingNode):
                children = [n for pair in node.value for n in pair]
            total = 1 + sum(size(child) for child in children)
            if total > MAX_YAML_NODES:
                raise InputFileError(
                    f"{self.name}: aliases expand the document past {MAX_YAML_NODES:,} "
                    "values (allowed at most that many); write the values out"
                )
            sizes[id(node)] = total
            return total

        if root is not None:
            size(root)

    def construct_yaml_int(self, node):
        self._plain_number(node)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):
        self._plain_number(node)
        return super().construct_yaml_float(node)

    def _plain_number(self, node) -> None:
        """YAML 1.1's number forms no user means: base 60 (`delay_ms: 1:30` is 90, an
        unquoted MAC 10:20:30:40:50:51 a huge number) and digits grouped by '_' (1_0 is 10,
        as the project's every other number reader refuses)."""
        text = str(node.value)
        if ":" not in text and "_" not in text:
            return
        mark = node.start_mark
        how = "a base-60 number" if ":" in text else "a number with '_' between digits"
        raise InputFileError(
            f"{mark.name}:{mark.line + 1}:{mark.column + 1}: {shown(text)} is {how} in YAML "
            "1.1; write the number in plain decimal digits, or quote it if it is text (a MAC "
            'address, a ratio such as "9:1")'
        )

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first is not key_node.start_mark:
                mark = key_node.start_mark
                raise InputFileError(
                    f"{mark.name}:{mark.line + 1}:{mark.column + 1}: duplicate key {key!r} "
                    f"(first at line {first.line + 1}); give each key once"
                )
        return super().construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _UniqueKeyLoader.construct_yaml_float)


def load_yaml(path):
    """The one YAML reader of the project (scenarios, desired state, switch port maps):
    a UTF-8 regular file, parsed safely, duplicate keys, deep nesting and alias bombs
    refused. InputFileError (one line, `file:line:col` where there is a position) for
    anything wrong."""
    text = read_utf8_text(path)
    try:
        loader = _UniqueKeyLoader(text)  # its reader refuses a NUL or control byte here
    except yaml.YAMLError as exc:
        raise InputFileError(_reader_error(path, text, exc)) from None
    loader.name = str(path)
    try:
        root = loader.get_single_node()
        loader.check_size(root)
        return None if root is None else loader.construct_document(root)
    except yaml.YAMLError as exc:
        raise InputFileError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()


def _reader_error(path, text: str, exc: yaml.YAMLError) -> str:
    """YAML's reader error (a character YAML refuses anywhere) at file:line:col; the reader
    gives its offset in the whole text."""
    at, char = getattr(exc, "position", None), getattr(exc, "character", None)
    if not isinstance(at, int) or not isinstance(char, int):
        return f"{path}: not valid YAML: {' '.join(str(exc).split())}"
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return (
        f"{path}:{line}:{col}: character U+{char:04X} is not allowed in YAML (allowed: "
        "printable text, tabs and line ends; a NUL or control byte often means a binary file)"
    )


# -- the loopback interface: a server or client on 127.0.0.1 in a network namespace whose lo
# is down binds, but nothing can connect (a fresh `unshare -n` or `ip netns add` namespace).

SIOCGIFFLAGS, IFF_UP = 0x8913, 0x1  # <linux/sockios.h>, <net/if.h>
LO_DOWN_FIX = (
    "bring it up with `ip link set lo up` (in a namespace NS: `ip netns exec NS ip link set lo up`)"
)


def loopback_is_up() -> bool:
    """Whether `lo` is up in this process's network namespace. Asked of the kernel by ioctl,
    which answers for the caller's namespace (/sys/class/net shows the namespace that
    mounted /sys, which `unshare -n` does not change)."""
    ifreq = struct.pack("16sH14x", b"lo", 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            (flags,) = struct.unpack_from("H", fcntl.ioctl(sock, SIOCGIFFLAGS, ifreq), 16)
        except OSError:  # no lo at all
            return False
    return bool(flags & IFF_UP)


def is_loopback_addr(addr: str) -> bool:
    """HOST:PORT with a loopback host (127.0.0.0/8, [::1], localhost)."""
    host = addr.rpartition(":")[0].strip("[]")
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

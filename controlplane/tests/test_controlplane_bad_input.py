"""dcctl under bad input: every bad option or desired-state file is refused with one line
naming the allowed values (exit 2 for usage errors, 1 for a file that cannot be applied),
before anything is sent to a switch, never a traceback. The table runs `main()` in-process
(no target is running: each entry must fail before connecting); a few entries also run the
real console script.

Run: .venv/bin/pytest -q controlplane/tests/test_controlplane_bad_input.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controlplane.cli import build_parser, main
from controlplane.model import SplitterError
from controlplane.p4info import P4InfoError, load_p4info
from controlplane.splitter import Splitter
from dccommon.ports import free_port

DCCTL = str(Path(sys.executable).parent / "dcctl")
USER = ["user", "add", "10.0.0.2"]
STATE = ["apply", "{state}"]

# (argv with {state} for the YAML file, file bytes, expected exit code, the one error line)
TABLE = [
    (
        ["--grpc-addr", "127.0.0.1:99999", "reset"],
        b"",
        2,
        "port 99999 is out of range (allowed 0..65535)",
    ),
    (
        ["--grpc-addr", "switch1", "reset"],
        b"",
        2,
        "'switch1': expected HOST:PORT with PORT 0..65535",
    ),
    (["--device-id", str(2**70), "reset"], b"", 2, "out of range (allowed 0..2^64-1)"),
    (["--device-id", "-1", "reset"], b"", 2, "device id -1 is out of range (allowed 0..2^64-1)"),
    (["--election-id", "0", "reset"], b"", 2, "'0' must be a whole number from 1 to 2^128-1"),
    (["--election-id", str(2**128), "reset"], b"", 2, "must be a whole number from 1 to 2^128-1"),
    ([], b"", 2, "the following arguments are required: COMMAND"),
    (["user", "add", "10.0.0.999"], b"", 2, "'10.0.0.999' is not an IPv4 or IPv6 address"),
    (["user", "add", " 10.0.0.2 "], b"", 2, "' 10.0.0.2 ' is not an IPv4 or IPv6 address (e.g."),
    (["user", "add", "１0.0.0.2"], b"", 2, "'１0.0.0.2' is not an IPv4 or IPv6 address"),
    (USER + ["--leg-a", "600"], b"", 2, "port 600 is out of range (allowed 0..510)"),
    (USER + ["--leg-b", "-1"], b"", 2, "port -1 is out of range (allowed 0..510)"),
    (USER + ["--port", "511"], b"", 2, "port 511 is out of range (allowed 0..510)"),
    (USER + ["--batch", "0"], b"", 2, "batch '0' must be a whole number from 1 to 65535"),
    (USER + ["--batch", "70000"], b"", 2, "batch '70000' must be a whole number from 1 to 65535"),
    (USER + ["--ratio", "7"], b"", 2, "expected 'a:b' (packets on leg A : leg B"),
    (USER + ["--ratio", "120%"], b"", 2, "the percentage must be from 0% to 100%"),
    (USER + ["--ratio=-1:2"], b"", 2, "a and b must be >= 0 and not both 0"),
    (USER + ["--mode", "split"], b"", 2, "invalid choice: 'split' (choose from"),
    (["user", "set", "ue1", "--dup", "maybe"], b"", 2, "'maybe': expected on or off"),
    (["port", "set", "--mac", "1"], b"", 2, "expected PORT=SRC_MAC[,DST_MAC]"),
    (["port", "set", "--mac", "600=02:00:00:00:00:01"], b"", 2, "port 600 is out of range"),
    (["port", "set", "--server", "511"], b"", 2, "port 511 is out of range (allowed 0..510)"),
    (["stats", "--interval", "0"], b"", 2, "interval '0' must be a number above 0 up to 3600"),
    (["stats", "--interval", "nan"], b"", 2, "interval 'nan' must be a number above 0 up to 3600"),
    (["stats", "--interval", "1e9"], b"", 2, "must be a number above 0 up to 3600"),
    (["stats", "--count", "-1"], b"", 2, "count -1 is out of range (allowed 0..1000000000)"),
    (["stats", "--count", "x"], b"", 2, "count 'x' is not a whole number"),
    (["apply", "{state}.missing"], b"", 2, "state.yaml.missing: no such file"),
    (STATE, b"", 2, "state.yaml is empty: the desired state is a mapping with keys ports"),
    (STATE, b"- ue1\n", 2, "must be a mapping with keys ports and/or users, not a list"),
    (STATE, b"users:\n  ue1: {addr: caf\xe9}\n", 2, "state.yaml:2:18: byte 0xe9 is not UTF-8"),
    (STATE, b"users: {ue1: [\n", 2, "not valid YAML: while parsing"),
    # a quoted port was checked, then kept as text: '<' between str and int, a traceback
    (STATE, b"ports: {server: 0, leg_a: ' 1 ', leg_b: 2}\n", 2, "leg_a: ' 1 ' is not a port numb"),
    (STATE, b'ports: {server: "\\t0", leg_a: 1, leg_b: 2}\n', 2, "server: '\\t0' is not a port"),
    # YAML's reader refuses a NUL before parsing: it was a traceback
    (
        STATE,
        b"users:\n  ue1: {addr: 10.0.0.2}\x00\n",
        2,
        "state.yaml:2:24: character U+0000 is not",
    ),
    (
        STATE,
        b"userz: {}\n",
        2,
        "unknown top-level key(s) ['userz'] (did you mean 'users'?): allowed ports, users",
    ),
    (STATE, b"users: {ue1: {addr: 10.0.0.2, bacth: 5}}\n", 2, "['bacth'] (did you mean 'batch'?)"),
    (
        ["--grpc-addr", "999.1.1.1:9559", "reset"],
        b"",
        2,
        "'999.1.1.1' is neither an IPv4 address nor a host name",
    ),
    (["--grpc-addr", "switch 1:9559", "reset"], b"", 2, "'switch 1' is neither an IPv4 address"),
    (
        ["--grpc-addr", "unix:{dir}/no.sock", "reset"],
        b"",
        1,
        "no.sock does not exist (is the switch",
    ),
    (["--grpc-addr", "unix:{state}", "reset"], b"", 1, "state.yaml is not a socket (is the switch"),
    (STATE, b"users: {ue1: {addr: 10.0.0.2, batch: 70000}}\n", 2, "from 1 to 65535"),
    (STATE, b"ports: {server: 600}\n", 2, "port 600 is out of range (allowed 0..510)"),
    # names: printable and bounded, on the command line and in the desired state
    (USER + ["--name", "ue\n1"], b"", 2, "holds a control or non-printable character"),
    (USER + ["--name", "u" * 65], b"", 2, "must be 1 to 64 characters"),
    (["user", "set", "ue1", "--name", "ue\x1b[2J"], b"", 2, "holds a control or non-printable"),
    (STATE, b'users: {"ue\\t1": {addr: 10.0.0.2}}\n', 2, "user 'ue\\t1': user name"),
    (["user", "list", "\rue1"], b"", 2, "unrecognized arguments: \\rue1"),
    (["user", "add", "\r10.0.0.2"], b"", 2, "'\\r10.0.0.2' is not an IPv4 or IPv6 address"),
    # user addresses: unicast only
    (["user", "add", "255.255.255.255"], b"", 2, "is the broadcast address (allowed: a unicast"),
    (["user", "add", "0.0.0.0"], b"", 2, "0.0.0.0 is the unspecified address"),
    (["user", "add", "::"], b"", 2, ":: is the unspecified address"),
    (["user", "add", "224.0.0.5"], b"", 2, "224.0.0.5 is a multicast address"),
    (["user", "add", "ff02::1"], b"", 2, "ff02::1 is a multicast address"),
    (["user", "add", "127.0.0.1"], b"", 2, "127.0.0.1 is a loopback address"),
    (["user", "add", "::1"], b"", 2, "::1 is a loopback address"),
    (STATE, b"users: {ue1: {addr: 239.1.1.1}}\n", 2, "239.1.1.1 is a multicast address"),
    # the desired-state file: one YAML reader, duplicate keys refused with file:line:col
    (
        STATE,
        b"users:\n  ue1: {addr: 10.0.0.2}\n  ue1: {addr: 10.0.0.3}\n",
        2,
        "state.yaml:3:3: duplicate key 'ue1' (first at line 2)",
    ),
    (STATE, b"users: {ue1: {addr: 10.0.0.2, batch: 10, batch: 20}}\n", 2, "duplicate key 'batch'"),
    (["apply", "{dir}"], b"", 2, ": is a directory (expected a regular file)"),
    (["apply", "/dev/null"], b"", 2, "/dev/null: is not a regular file (a character device)"),
    (["apply", "{dir}/" + "n" * 300], b"", 2, "name too long"),
    # a value that starts with '-': its own check speaks, not argparse
    (["user", "set", "ue1", "--ratio", "-1:11"], b"", 2, "a and b must be >= 0 and not both 0"),
    # options that do not go together, and input files: refused before connecting
    (["push"], b"", 2, "push needs PROGRAM.p4, or both --p4info FILE and --config FILE"),
    (["push", "--p4info", "{state}"], b"", 2, "push needs PROGRAM.p4, or both --p4info"),
    (["push", "{state}", "--config", "{state}"], b"", 2, "give either PROGRAM.p4 or --p4info"),
    (["push", "{dir}/x.p4"], b"", 2, "x.p4: no such file"),
    (["push", "--p4info", "{dir}", "--config", "{state}"], b"", 2, ": is a directory"),
    (["user", "set", "ue1"], b"", 2, "user set: nothing to change; give at least one of --mode"),
    (USER + ["--mode", "sc"], b"", 2, "user add: --mode sc needs --port (a leg port)"),
    (USER + ["--port", "1"], b"", 2, "--port applies to sc users only"),
    (USER + ["--batch", "100", "--ratio", "2:1"], b"", 2, "ratio 2:1 does not fit batch 100"),
    # push: empty input files are named before connecting
    (["push", "{state}"], b"", 2, "state.yaml is empty (expected a P4_16 program)"),
    (
        ["push", "--p4info", "{state}", "--config", "{state}"],
        b"",
        2,
        "state.yaml is empty (expected the program's P4Info)",
    ),
    # port set: how the values go together, before connecting
    (
        ["port", "set", "--mac", "1=02:00:00:00:00:01", "--mac", "1=02:00:00:00:00:02"],
        b"",
        2,
        "--mac gives port 1 twice; give each port once",
    ),
    (
        ["port", "set", "--mac", "1=ff:ff:ff:ff:ff:ff"],
        b"",
        2,
        "ff:ff:ff:ff:ff:ff is a group (multicast) address; a source MAC must be unicast",
    ),
    (["port", "set", "--mac", "1=00:00:00:00:00:00"], b"", 2, "is the all-zero address"),
    (["port", "set", "--mac", "1=5"], b"", 2, "'5' is not a MAC address (e.g. 02:00:00:00:00:01)"),
    (["port", "set", "--server", "1"], b"", 2, "server, leg_a and leg_b must be three different"),
    # desired state: wrong types are named, never a traceback or a silent conversion
    (STATE, b"ports: 5\n", 2, "ports: expected a mapping with keys flood_unknown, leg_a"),
    (STATE, b"ports: [{a: 1}]\n", 2, "ports: expected a mapping with keys"),
    (STATE, b"ports: {macs: [1]}\n", 2, "macs: expected a mapping from port to {src: MAC"),
    (STATE, b"ports: {macs: {1: [1, 2, 3]}}\n", 2, "macs for port 1: expected {src: MAC"),
    (STATE, b"ports: {macs: {1: {src: 01:00:5e:00:00:01}}}\n", 2, "a source MAC must be unicast"),
    (STATE, b"ports: {flood_unknown: maybe}\n", 2, "flood_unknown: expected true or false"),
    (
        STATE,
        b"ports: {macs: {1: {src: 10:20:30:40:50:51}}}\n",
        2,
        "state.yaml:1:25: '10:20:30:40:50:51' is a base-60 number in YAML 1.1; write the number",
    ),
    (STATE, b"users: {ue1: {addr: 10.0.0.2, ratio: 9:1}}\n", 2, "'9:1' is a base-60 number in YAM"),
    (STATE, b"ports: {server: true}\n", 2, "server: True is not a port number (allowed 0..510)"),
    (STATE, b"users: {ue1: {addr: 10.0.0.2, leg_a: 1.5}}\n", 2, "leg_a: 1.5 is not a port number"),
    # YAML that stands for a huge or endless tree, or nests past the stack
    (
        STATE,
        b"users: &u {ue1: *u}\n",
        2,
        "state.yaml:1:8: an alias refers to a node that contains",
    ),
    (
        STATE,
        b"a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
        + b"".join(
            b"%c: &%c [%s]\n" % (c, c, b", ".join([b"*%c" % (c - 1)] * 10)) for c in b"bcdefg"
        ),
        2,
        "aliases expand the document past 1,000,000 values",
    ),
    (STATE, b"users: " + b"[" * 3000 + b"]" * 3000 + b"\n", 2, "nested deeper than 64 levels"),
    # control: numbers that are no numbers, and a log that cannot be written, before connecting
    (["control", "ue1", "--gain", "nan"], b"", 2, "gain 'nan' must be a number above 0 up to"),
    (["control", "ue1", "--duration-s", "inf"], b"", 2, "'inf' must be a finite number >= 0"),
    (["control", "ue1", "--min-share", "0.6"], b"", 2, "min share '0.6' must be a number from 0"),
    (["control", "ue1", "--log", "{dir}/no/x.jsonl"], b"", 2, "/no does not exist"),
    (["control", "ue1", "--log", "{dir}"], b"", 2, "is a directory (expected a file name)"),
    # a knob the policy does not read would change nothing; 0 would freeze or flap the loop
    (["control", "ue1", "--dup"], b"", 2, "--dup: applies to policy failover only, not capacity"),
    (["control", "ue1", "--policy", "failover", "--gain", "1"], b"", 2, "policy delay only, not"),
    (["control", "ue1", "--policy", "static", "--min-share", "0.1"], b"", 2, "not static"),
    (["control", "ue1", "--alpha", "0"], b"", 2, "alpha '0' must be a number above 0 up to 1"),
    (["control", "ue1", "--policy", "failover", "--silence-ms", "0"], b"", 2, "above 0"),
    (  # an sc user does not use its batch, but a bad one was a traceback (int('x'))
        STATE,
        b'users:\n  ue2: {addr: 10.0.0.3, mode: sc, port: 1, batch: "x"}\n',
        2,
        "user 'ue2': batch 'x' must be a whole number from 1 to 65535",
    ),
    (["--connect-timeout-s", "0", "reset"], b"", 2, "connect timeout '0' must be a number above 0"),
    (["--connect-timeout-s", "inf", "reset"], b"", 2, "must be a number above 0 up to 3600"),
]


def _prepare(argv, content: bytes, tmp_path: Path) -> list[str]:
    state = tmp_path / "state.yaml"
    state.write_bytes(content)
    return [a.format(state=state, dir=tmp_path) for a in argv]


def _error_lines(err: str) -> list[str]:
    """stderr without argparse's usage lines."""
    lines = err.splitlines()
    while lines and (lines[0].startswith("usage:") or lines[0].startswith(" ")):
        lines.pop(0)
    return lines


@pytest.mark.parametrize("argv,content,code,message", TABLE, ids=[e[3] for e in TABLE])
def test_bad_input_is_refused_in_one_line(argv, content, code, message, tmp_path, capsys):
    # An address nothing listens on: an entry that got as far as connecting would fail
    # with "cannot connect" instead of its own message.
    argv = ["--grpc-addr", "127.0.0.1:9"] + _prepare(argv, content, tmp_path)
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse
        got = exc.code
    err = capsys.readouterr().err
    lines = _error_lines(err)
    assert got == code, err
    assert len(lines) == 1 and message in lines[0], err


@pytest.mark.parametrize("entry", [0, 29])
def test_the_console_script_prints_no_traceback(entry, tmp_path):
    argv, content, code, message = TABLE[entry]
    proc = subprocess.run(
        [DCCTL, "--grpc-addr", "127.0.0.1:9", *_prepare(argv, content, tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == code and "Traceback" not in proc.stderr
    assert message in proc.stderr.splitlines()[-1]


def test_the_connect_timeout_given_is_the_one_waited():
    """A script driving a switch on a loaded machine gives it longer than the 5 s default
    (dcexp's control daemon does); the error names the wait that ran out."""
    proc = subprocess.run(
        [DCCTL, "--grpc-addr", f"127.0.0.1:{free_port()}", "--connect-timeout-s", "0.5", "reset"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # nothing listens on a free port
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "(no answer within 0.5 s; is the switch running" in proc.stderr, proc.stderr


def test_loopback_down_is_named_not_a_missing_switch():
    """In a namespace whose lo is down, 127.0.0.1 is unreachable: say so at once, instead of
    'is the switch running?' after the connect timeout."""
    assert os.geteuid() == 0, "needs root for a network namespace (unshare -n)"
    proc = subprocess.run(
        ["unshare", "-n", DCCTL, "--grpc-addr", "127.0.0.1:9559", "user", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "dcctl: error: cannot connect to the P4Runtime target at 127.0.0.1:9559: the loopback "
        "interface lo is down in this network namespace; bring it up with `ip link set lo up` "
        "(in a namespace NS: `ip netns exec NS ip link set lo up`)"
    )


@pytest.mark.parametrize("text", ["pkg_info { arch: 'v1model' }\n", "# a comment only\n"])
def test_a_p4info_without_tables_is_refused(text, tmp_path):
    """A P4Info file that parses but describes nothing (a wrong file, or one cut short) is
    refused when it is read, not pushed for the target to fill in or reject later."""
    path = tmp_path / "p4info.txtpb"
    path.write_text(text)
    with pytest.raises(P4InfoError, match="a P4Info without tables or actions"):
        load_p4info(path)


def test_a_huge_state_file_is_refused_without_reading_it(tmp_path, capsys):
    """A 10 GB file (sparse: it takes no disk) given by mistake: one line, at once, not an
    attempt to read it all into memory."""
    path = tmp_path / "state.yaml"
    with open(path, "wb") as f:
        f.truncate(10 * 2**30)
    assert main(["--grpc-addr", "127.0.0.1:9", "apply", str(path)]) == 2
    err = capsys.readouterr().err.strip()

    assert err.endswith(
        "state.yaml: larger than the 16 MiB allowed for a text input file (a scenario or "
        "desired state is a few kB)"
    ), err


@pytest.mark.parametrize("option", ["--p4info", "--config"])
def test_a_huge_p4info_or_config_is_refused_without_reading_it(option, tmp_path):
    """Read after connecting, so checked against the loader and the push directly."""
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as f:
        f.truncate(10 * 2**30)
    if option == "--p4info":
        with pytest.raises(P4InfoError, match="larger than the 64 MiB allowed for a P4Info"):
            load_p4info(huge)
    else:
        p4info = tmp_path / "p4info.txtpb"
        p4info.write_text('tables { preamble { id: 1 name: "t" } }\n')
        with pytest.raises(SplitterError, match="larger than the 512 MiB allowed for a device"):
            Splitter(client=None).push_pipeline(p4info, huge)


# Every number dcctl reads, written with digits that are not ASCII: Python's int() and
# float() take fullwidth and Arabic-Indic digits (and '1_0') as numbers. (argv, the value's
# place holder {n} filled with a good ASCII number first, to show the entry is otherwise fine)
NUMBERS = [
    (["--grpc-addr", "127.0.0.1:{n}", "reset"], "9"),
    (["--device-id", "{n}", "reset"], "1"),
    (["--election-id", "{n}", "reset"], "1"),
    (USER + ["--leg-a", "{n}"], "1"),
    (USER + ["--port", "{n}", "--mode", "sc"], "1"),
    (USER + ["--batch", "{n}"], "10"),
    (USER + ["--ratio", "{n}:1"], "9"),
    (USER + ["--ratio", "{n}%"], "50"),
    (["port", "set", "--server", "{n}"], "0"),
    (["port", "set", "--mac", "{n}=02:00:00:00:00:01"], "1"),
    (["stats", "--interval", "{n}"], "1"),
    (["stats", "--count", "{n}"], "1"),
    (["control", "ue1", "--alpha", "0.{n}"], "5"),
    (["control", "ue1", "--gain", "{n}"], "1"),
    (["control", "ue1", "--min-share", "0.{n}"], "1"),
    (["control", "ue1", "--duration-s", "{n}"], "1"),
    (["control", "ue1", "--down-reports", "{n}"], "3"),
    (["control", "ue1", "--up-reports", "{n}"], "3"),
]
NOT_ASCII = {"fullwidth": str.maketrans("0123456789", "０１２３４５６７８９"),
             "arabic-indic": str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")}  # fmt: skip


def _exit_and_lines(argv, capsys) -> tuple[int, list[str]]:
    try:
        got = main(["--grpc-addr", "127.0.0.1:9", *argv] if argv[0] != "--grpc-addr" else argv)
    except SystemExit as exc:  # argparse
        got = exc.code
    return got, _error_lines(capsys.readouterr().err)


@pytest.mark.parametrize("digits", NOT_ASCII)
@pytest.mark.parametrize("argv,good", NUMBERS, ids=[" ".join(e[0]) for e in NUMBERS])
def test_numbers_are_ascii_digits_only(argv, good, digits, capsys):
    """The ASCII number is taken; the same number in other digits is refused as the
    option's own bad value (exit 2), before connecting."""
    build_parser().parse_args([a.replace("{n}", good) for a in argv])
    bad = good.translate(NOT_ASCII[digits])
    code, lines = _exit_and_lines([a.replace("{n}", bad) for a in argv], capsys)
    assert code == 2 and len(lines) == 1 and bad in lines[0], lines


@pytest.mark.parametrize(
    "user,message",
    [
        ('ratio: "９:１"', "a and b in 'a:b' must be whole numbers"),
        ('ratio: "５０%"', "a percentage must be a number from 0 to 100"),
        ("ratio: [9.5, 1]", "a and b in 'a:b' must be whole numbers"),
        ('leg_a: "١"', "is not a port number (allowed 0..510)"),
    ],
)
def test_a_state_file_number_is_ascii_digits_only(user, message, tmp_path, capsys):
    state = tmp_path / "state.yaml"
    state.write_text("users:\n  ue1: {addr: 10.0.0.2, mode: dc-split, batch: 100, " + user + "}\n")
    code, lines = _exit_and_lines(["apply", str(state)], capsys)
    assert code == 2 and len(lines) == 1 and message in lines[0], lines


def test_control_knobs_reach_the_policy_in_its_units():
    """Only the knobs given override the policy's defaults; ms options become seconds."""
    from controlplane.control import _tuning
    from controlplane.policies import Tuning

    argv = ["control", "ue1", "--policy", "failover", "--silence-ms", "500", "--dup"]
    assert _tuning(build_parser().parse_args(argv)) == Tuning(silence_s=0.5, dup=True)
    argv = ["control", "ue1", "--min-interval-ms", "20", "--alpha", "0.5"]
    assert _tuning(build_parser().parse_args(argv)) == Tuning(min_interval_s=0.02, alpha=0.5)


def test_a_quoted_port_in_the_state_file_is_the_number():
    """ports: {leg_a: '1'} is port 1 from then on: kept as text, it met the int 2 in a
    comparison (a traceback)."""
    from controlplane.statefile import parse_state

    ports, users = parse_state(
        {"ports": {"server": "0", "leg_a": "1", "leg_b": 2}, "users": {"u": {"addr": "10.0.0.2"}}}
    )
    assert (ports.server, ports.leg_a, ports.leg_b) == (0, 1, 2) and users[0].addr == "10.0.0.2"

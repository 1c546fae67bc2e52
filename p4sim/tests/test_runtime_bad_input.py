"""p4sim's options under bad input: each refused with one line naming the allowed values
(exit 2 for usage errors, 1 for a file or interface that cannot be used), never a traceback
and never a silently changed value (gRPC would wrap port 99999 to 34463). The table runs
`main()` in-process; a few entries also run the real console script.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_bad_input.py
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from p4sim import p4runtime
from p4sim.cli import build_compile_parser, build_run_parser, main
from p4sim.io import InProcessPorts
from p4sim.switch import Switch

P4SIM = str(Path(sys.executable).parent / "p4sim")
PROGRAM = str(Path(__file__).parent / "p4" / "runtime_fwd.p4")

# (argv, expected exit code, text of the one error line)
TABLE = [
    (
        ["--no-p4", "--grpc-server-addr", "127.0.0.1:99999"],
        2,
        "port 99999 is out of range (allowed 0..65535)",
    ),
    (["--no-p4", "--grpc-server-addr", "127.0.0.1:-1"], 2, "expected HOST:PORT with PORT 0..65535"),
    (["--no-p4", "--grpc-server-addr", "9559"], 2, "expected HOST:PORT with PORT 0..65535"),
    (["--no-p4", "--grpc-server-addr", "::1:9559"], 2, "write an IPv6 host in brackets"),
    (["--no-p4", "--grpc-server-addr", "[zz]:9559"], 2, "[zz] is not a bracketed IPv6 address"),
    (
        ["--no-p4", "--device-id", str(2**70)],
        2,
        f"device id {2**70} is out of range (allowed 0..2^64-1)",
    ),
    (["--no-p4", "--device-id", "-1"], 2, "device id -1 is out of range (allowed 0..2^64-1)"),
    (
        ["--no-p4", "--device-id", "one"],
        2,
        "device id 'one' is not a whole number (allowed 0..2^64-1)",
    ),
    (["--no-p4", "--cpu-port", "600"], 2, "CPU port 600 is out of range (allowed 0..510)"),
    (["--no-p4", "--cpu-port", "-1"], 2, "CPU port -1 is out of range (allowed 0..510)"),
    (["--no-p4", "--cpu-port", "511"], 2, "CPU port 511 is out of range (allowed 0..510)"),
    (
        ["--no-p4", "--thrift-port", "70000"],
        2,
        "Thrift port 70000 is out of range (allowed 0..65535)",
    ),
    (
        ["--no-p4", "-i", "511@veth0"],
        2,
        "port 511 is out of range (allowed 0..510; 511 is the drop port)",
    ),
    (["--no-p4", "--interface=-1@veth0"], 2, "'-1@veth0' is not PORT@INTERFACE"),
    (["--no-p4", "-i", "veth0"], 2, "'veth0' is not PORT@INTERFACE (e.g. 0@veth0)"),
    (["--no-p4", "--log-level", "loud"], 2, "invalid choice: 'loud' (choose from"),
    (["--no-p4", "-D", "1X"], 2, "'1X' is not NAME or NAME=VALUE"),
    ([], 2, "give a PROGRAM.p4 to run, or --no-p4 to wait for a pipeline over P4Runtime"),
    ([PROGRAM, "--no-p4"], 2, "give a PROGRAM.p4 or --no-p4, not both"),
    (["--no-p4", "-i", "0@a", "-i", "0@b"], 2, "port 0 given twice (a and b)"),
    (["--no-p4", "--cpu-port", "3", "-i", "3@a"], 2, "port 3 is the CPU port"),
    (["nope.p4"], 1, "nope.p4: no such file"),
    (["compile"], 2, "the following arguments are required: PROGRAM.p4"),
    (["compile", "nope.p4"], 1, "nope.p4: no such file"),
    (["compile", PROGRAM, "--p4runtime-files", "out.yaml"], 1, ".txt, .txtpb, .json, .bin"),
    (["compile", PROGRAM, "-D", "a-b"], 2, "'a-b' is not NAME or NAME=VALUE"),
    (["compile", PROGRAM, "--frobnicate"], 2, "unrecognized arguments: --frobnicate"),
    # paths past the OS limits and paths that are no regular file
    (["/" + "d" * 300 + ".p4"], 1, "name too long (a file name has at most 255 bytes"),
    (["compile", "/tmp/" + "a/" * 2100 + "x.p4"], 1, "name too long"),
    (["compile", "/"], 1, "/: is a directory (expected a regular file)"),
    (["compile", "/dev/null"], 1, "/dev/null: is not a regular file (a character device)"),
    (["/dev/zero"], 1, "/dev/zero: is not a regular file (a character device)"),
    # one interface, one port; interface names as Linux allows them
    (["--no-p4", "-i", "1@veth1", "-i", "2@veth1"], 2, "interface veth1 given for two ports"),
    (["--no-p4", "-i", "1@" + "v" * 16], 2, "a Linux interface name is 1 to 15 bytes"),
    (["--no-p4", "-i", "1@ve\nth"], 2, "a Linux interface name is 1 to 15 bytes, printable"),
    # a value that starts with '-': its own check speaks, not argparse
    (["--no-p4", "-i", "-1x@veth0"], 2, "'-1x@veth0' is not PORT@INTERFACE"),
    # a host that is neither an address nor a name; a pcap directory that cannot be one
    (["--no-p4", "--grpc-server-addr", "a b:9559"], 2, "'a b' is neither an IPv4 address"),
    (["--no-p4", "--grpc-server-addr", "300.0.0.1:9559"], 2, "'300.0.0.1' is neither an IPv4"),
    (["--no-p4", "--pcap-dir", "/dev/null"], 2, "--pcap-dir /dev/null: exists and is not a dir"),
    (
        ["--no-p4", "--grpc-server-addr", "unix:/tmp/" + "s" * 120],
        2,
        "a Unix socket path has at most 107 bytes",
    ),
    (["--no-p4", "--pcap-dir", "/dev/null/x"], 2, "cannot create the directory: Not a directory"),
    (["--no-p4", "-i", "１@veth0"], 2, "'１@veth0' is not PORT@INTERFACE"),  # int() reads 1
    # an #include folder that is none (cpp would skip it silently)
    ([PROGRAM, "-I", "/nonexistent/inc"], 2, "argument -I: /nonexistent/inc: no such directory"),
    (["compile", PROGRAM, "-I", "/dev/null"], 2, "argument -I: /dev/null: is not a directory"),
]


def _error_lines(err: str) -> list[str]:
    """stderr without argparse's usage lines."""
    lines = err.splitlines()
    while lines and (lines[0].startswith("usage:") or lines[0].startswith(" ")):
        lines.pop(0)
    return lines


class ServerStarted(Exception):
    pass


def _refuse_to_serve(*_args, **_kwargs):
    raise ServerStarted("a bad option got as far as starting the P4Runtime server")


@pytest.mark.parametrize("argv,code,message", TABLE, ids=[e[2] for e in TABLE])
def test_bad_input_is_refused_in_one_line(argv, code, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # compile's outputs, were one accepted, land here
    # An accepted entry would serve until killed: fail it instead of hanging the suite.
    monkeypatch.setattr(p4runtime, "P4RuntimeServer", _refuse_to_serve)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level  # main() sets up logging as a process would
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse
        got = exc.code
    finally:
        root.handlers[:], root.level = handlers, level
    err = capsys.readouterr().err
    lines = _error_lines(err)
    assert got == code, err
    assert len(lines) == 1 and message in lines[0], err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "include,message",
    [
        ('"' + "i" * 300 + '.p4"', "name too long (a file name has at most 255 bytes"),
        ('"' + "i/" * 2100 + 'x.p4"', "name too long"),
        ('"/"', "include file '/': is a directory (expected a regular file)"),
        ('"/dev/null"', "include file '/dev/null': is not a regular file (a character device)"),
    ],
)
def test_an_include_that_cannot_be_read_is_one_positioned_error(include, message, tmp_path):
    """On the command line and in `p4sim compile` alike: never the OSError traceback."""
    program = tmp_path / "inc.p4"
    program.write_text(f"#include {include}\n")
    for argv in ([P4SIM, "compile", str(program)], [P4SIM, str(program)]):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "inc.p4:1:1: error: " in proc.stderr
        assert message in proc.stderr, proc.stderr


@pytest.mark.parametrize("entry", [0, 21])
def test_the_console_script_prints_no_traceback(entry):
    argv, code, message = TABLE[entry]
    proc = subprocess.run([P4SIM, *argv], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == code and "Traceback" not in proc.stderr
    assert message in proc.stderr.splitlines()[-1]


def test_refuses_to_serve_loopback_when_lo_is_down():
    """In a fresh network namespace lo is down: a server on 127.0.0.1 would listen but no
    client could connect (dcctl would say the switch is not running)."""
    assert os.geteuid() == 0, "needs root for a network namespace (unshare -n)"
    proc = subprocess.run(
        ["unshare", "-n", P4SIM, "--no-p4", "--grpc-server-addr", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "p4sim: error: --grpc-server-addr 127.0.0.1:0: the loopback interface lo is down in "
        "this network namespace, so no client could reach the server; bring it up with "
        "`ip link set lo up` (in a namespace NS: `ip netns exec NS ip link set lo up`)"
    )


def test_help_shows_defaults_only_where_meaningful():
    for parser in (build_run_parser(), build_compile_parser()):
        text = parser.format_help()
        for meaningless in ("(default: None)", "(default: [])", "(default: False)"):
            assert meaningless not in text, parser.prog
    assert "(default: 127.0.0.1:9559)" in build_run_parser().format_help()


def test_a_huge_program_is_refused_without_reading_it(tmp_path, capsys):
    """A 10 GB file (sparse: it takes no disk) given as the program: one positioned error,
    at once, not an attempt to read it all into memory."""
    path = tmp_path / "huge.p4"
    with open(path, "wb") as f:
        f.truncate(10 * 2**30)
    assert main(["compile", str(path)]) == 1
    assert "huge.p4:1:1: error: file is larger than p4sim's limit of" in capsys.readouterr().err


@pytest.mark.parametrize(
    "address,reason",
    [
        ("unix:/nonexistent/dir/p4rt.sock", "its folder /nonexistent/dir does not exist"),
        ("unix:/etc/passwd", "/etc/passwd exists: give a path that does not"),
        ("192.0.2.1:9559", "192.0.2.1 is not an address of this host"),
    ],
)
def test_a_server_address_it_cannot_listen_on_is_named_with_the_reason(address, reason):
    """gRPC says only that it could not listen; p4sim says why (and never replaces a file)."""
    before = Path("/etc/passwd").read_bytes()
    with pytest.raises(OSError, match=re.escape(f"cannot listen on {address} ({reason}")):
        p4runtime.P4RuntimeServer(Switch(InProcessPorts([])), address)
    assert Path("/etc/passwd").read_bytes() == before


def test_a_port_in_use_is_named_as_such():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        with pytest.raises(OSError, match="another process listens on that port"):
            p4runtime.P4RuntimeServer(Switch(InProcessPorts([])), address)

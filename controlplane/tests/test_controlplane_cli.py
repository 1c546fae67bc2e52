"""dcctl: the argument parser's messages, and commands against an in-process servicer.

Run: .venv/bin/pytest controlplane/tests/test_controlplane_cli.py
"""

import argparse
import json

import pytest

from controlplane.cli import build_parser, main, render_stats


def parse_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["user", "add", "10.0.0.2", "--ratio", "7"], "expected 'a:b'"),
        (["user", "add", "10.0.0.2", "--ratio", "120%"], "from 0% to 100%"),
        (["user", "add", "10.0.0.999"], "'10.0.0.999' is not an IPv4 or IPv6 address"),
        (
            ["user", "add", "10.0.0.2", "--leg-a", "600"],
            r"port 600 is out of range (allowed 0..510)",
        ),
        (["user", "add", "10.0.0.2", "--leg-a", "x"], "'x' is not a port number"),
        (["user", "add", "10.0.0.2", "--batch", "0"], "batch '0' must be a whole number from 1"),
        (["user", "add", "10.0.0.2", "--mode", "split"], "invalid choice: 'split'"),
        (["user", "set", "ue1", "--dup", "maybe"], "'maybe': expected on or off"),
        (["port", "set", "--mac", "1"], "expected PORT=SRC_MAC[,DST_MAC]"),
        (["stats", "--interval", "0"], "interval '0' must be a number above 0 up to 3600"),
    ],
)
def test_parser_refuses_with_allowed_values(argv, message, capsys):
    assert message in parse_error(argv, capsys)


def test_bad_global_options(capsys):
    assert "'0' must be a whole number from 1" in parse_error(
        ["--election-id", "0", "reset"], capsys
    )
    assert "device id -1 is out of range (allowed 0..2^64-1)" in parse_error(
        ["--device-id", "-1", "reset"], capsys
    )


def test_user_set_without_changes(fake_target, capsys):
    _, addr = fake_target
    code, _, err = run(addr, ["user", "set", "ue1"], capsys)
    assert code == 2 and "nothing to change; give at least one of --mode" in err


def test_port_on_a_dc_user_is_refused(fake_target, capsys):
    _, addr = fake_target
    code, _, err = run(addr, ["user", "add", "10.0.0.2", "--port", "1"], capsys)
    assert code == 2 and "port applies to sc users only" in err


def test_unquoted_yaml_ratio_explained(fake_target, capsys, tmp_path):
    _, addr = fake_target
    state = tmp_path / "state.yaml"
    state.write_text("users:\n  ue1: {addr: 10.0.0.2, batch: 10, ratio: 9:1}\n")
    code, _, err = run(addr, ["apply", str(state)], capsys)
    assert code == 2 and "state.yaml:2:" in err and "'9:1' is a base-60 number" in err
    assert 'quote it if it is text (a MAC address, a ratio such as "9:1")' in err


def test_parser_defaults():
    args = build_parser().parse_args(["user", "set", "ue1", "--ratio", "9:1", "--dup", "on"])
    assert (args.grpc_addr, args.device_id, args.election_id) == ("127.0.0.1:9559", 0, 1)
    assert args.ratio == "9:1" and args.dup is True and args.batch is None


def test_old_option_names_work_with_a_deprecation_message(capsys):
    """--addr and control's --duration still work for one release (README: Command-line
    conventions), each saying on stderr which name replaces it."""
    parser = build_parser()
    args = parser.parse_args(["--addr", "10.1.1.1:9559", "control", "ue1", "--duration", "5"])
    assert args.grpc_addr == "10.1.1.1:9559" and args.duration_s == 5
    assert capsys.readouterr().err.splitlines() == [
        "dcctl: warning: --addr is deprecated; use --grpc-addr",
        "dcctl control: warning: --duration is deprecated; use --duration-s",
    ]
    args = parser.parse_args(
        ["--grpc-addr", "10.1.1.1:9559", "control", "ue1", "--duration-s", "5"]
    )
    assert (args.grpc_addr, args.duration_s) == ("10.1.1.1:9559", 5)
    assert capsys.readouterr().err == ""


def run(addr, argv, capsys):
    code = main(["--grpc-addr", addr] + argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_user_lifecycle_through_the_cli(fake_target, capsys):
    _, addr = fake_target
    assert (
        run(
            addr,
            ["user", "add", "10.0.0.2", "--name", "ue1", "--batch", "10", "--ratio", "70%"],
            capsys,
        )[0]
        == 0
    )
    code, out, _ = run(addr, ["--json", "user", "set", "ue1", "--ratio", "9:1"], capsys)
    assert code == 0 and json.loads(out)["leg_a_count"] == 9
    code, out, _ = run(addr, ["user", "set", "ue1", "--dup", "on"], capsys)
    assert code == 0 and "dc-dup" in out
    code, out, _ = run(addr, ["--json", "user", "list"], capsys)
    assert json.loads(out) == [
        {
            "name": "ue1",
            "addr": "10.0.0.2",
            "mode": "dc-dup",
            "batch": 10,
            "ratio": "9:1",
            "leg_a_count": 9,
            "leg_a": 1,
            "leg_b": 2,
        }
    ]
    code, _, err = run(addr, ["user", "del", "ue7"], capsys)
    assert code == 1 and "unknown user 'ue7': configured users are ue1 (10.0.0.2)" in err


def test_ratio_that_does_not_fit_the_batch(fake_target, capsys):
    _, addr = fake_target
    code, _, err = run(
        addr, ["user", "add", "10.0.0.2", "--batch", "100", "--ratio", "2:1"], capsys
    )
    assert code == 2
    assert err.strip() == (
        "dcctl: error: ratio 2:1 does not fit batch 100: a+b (3) must equal "
        "the batch size or divide it"
    )


def test_apply_yaml_and_bad_yaml(fake_target, capsys, tmp_path):
    _, addr = fake_target
    good = tmp_path / "state.yaml"
    good.write_text("users:\n  ue1: {addr: 10.0.0.2, batch: 10, ratio: '7:3'}\n")
    code, out, _ = run(addr, ["apply", str(good)], capsys)
    assert code == 0 and out.splitlines()[-1] == "add user ue1"
    assert "l2_forwards [ingress_port=1] -> DcIngress.l2_forwarding.forward" in out
    assert run(addr, ["apply", str(good)], capsys)[:2] == (0, "no change\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("users:\n  ue1: {addr: 10.0.0.2, mode: fast}\n")
    code, _, err = run(addr, ["apply", str(bad)], capsys)
    assert (
        code == 2 and "user 'ue1': mode 'fast' is not one of dc-split, dc-credit, dc-dup, sc" in err
    )


def test_connection_failure_names_the_address(capsys):
    code, _, err = run("127.0.0.1:9", ["user", "list"], capsys)
    assert code == 1 and "cannot connect to the P4Runtime target at 127.0.0.1:9" in err


def test_missing_push_arguments(fake_target, capsys):
    _, addr = fake_target
    code, _, err = run(addr, ["push"], capsys)
    assert code == 2 and "push needs PROGRAM.p4, or both --p4info FILE and --config FILE" in err


def test_a_program_that_does_not_compile_is_named_with_the_compilers_message(
    fake_target, tmp_path, capsys
):
    _, addr = fake_target
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol C() { apply { x = 1; } }\n")
    code, _, err = run(addr, ["push", str(bad)], capsys)
    assert code == 1 and f"compiling {bad} failed:" in err and "bad.p4:2:" in err, err


def test_what_the_switch_refuses_is_a_failure_not_a_usage_error(fake_target, capsys):
    """Exit 2 is for what the command line alone shows to be wrong; a command the switch's
    state refuses (an unknown user) is a failure, exit 1."""
    _, addr = fake_target
    code, _, err = run(addr, ["user", "set", "ue9", "--batch", "10"], capsys)
    assert code == 1 and "unknown user 'ue9'" in err


def test_stats_rates():
    before = {
        "time": 10.0,
        "users": {
            "10.0.0.2": {"name": "ue1", "mode": "dc-split", "packets": 100, "bytes": 100_000}
        },
        "ports": {
            "leg_a": {
                "port": 1,
                "rx_packets": 0,
                "rx_bytes": 0,
                "tx_packets": 50,
                "tx_bytes": 50_000,
            }
        },
    }
    now = {
        "time": 12.0,
        "users": {
            "10.0.0.2": {"name": "ue1", "mode": "dc-split", "packets": 300, "bytes": 350_000}
        },
        "ports": {
            "leg_a": {
                "port": 1,
                "rx_packets": 0,
                "rx_bytes": 0,
                "tx_packets": 150,
                "tx_bytes": 150_000,
            }
        },
    }
    text = render_stats(now, before)
    user_line = next(line for line in text.splitlines() if line.startswith("ue1"))
    assert user_line.split()[-2:] == ["100.0", "1.000"]  # 200 pkts and 2 Mbit in 2 s
    leg_line = next(line for line in text.splitlines() if line.startswith("leg_a"))
    assert leg_line.split()[-2:] == ["50.0", "0.400"]


def test_stats_watch_json_lines(fake_target, capsys):
    _, addr = fake_target
    assert run(addr, ["user", "add", "10.0.0.2", "--name", "ue1"], capsys)[0] == 0
    code, out, _ = run(
        addr, ["--json", "stats", "--watch", "--interval", "0.05", "--count", "3"], capsys
    )
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert all(json.loads(line)["users"]["10.0.0.2"]["name"] == "ue1" for line in lines)


def test_port_set_list_and_reset(fake_target, capsys):
    _, addr = fake_target
    code, out, _ = run(
        addr,
        [
            "port",
            "set",
            "--server",
            "3",
            "--leg-a",
            "4",
            "--leg-b",
            "5",
            "--mac",
            "4=02:00:00:00:00:04",
        ],
        capsys,
    )
    assert code == 0 and "flood group 1 -> ports 4, 5" in out
    code, out, _ = run(addr, ["--json", "port", "list"], capsys)
    assert json.loads(out) == {
        "server": 3,
        "leg_a": 4,
        "leg_b": 5,
        "flood_unknown": False,
        "macs": {"4": {"src": "02:00:00:00:00:04", "dst": None}},
    }
    code, _, err = run(addr, ["user", "add", "10.0.0.2", "--mode", "sc", "--port", "1"], capsys)
    assert code == 1 and "port 1 is not a leg port: allowed 4 (leg A) or 5 (leg B)" in err
    code, out, _ = run(addr, ["reset"], capsys)
    assert code == 0 and "DELETE multicast group 1" in out
    assert json.loads(run(addr, ["--json", "port", "list"], capsys)[1])["macs"] == {}


def test_apply_refuses_an_empty_or_non_mapping_file(fake_target, capsys, tmp_path):
    """An empty file once meant 'no users' and deleted every user on the switch."""
    servicer, addr = fake_target
    assert run(addr, ["user", "add", "10.0.0.2", "--name", "ue1"], capsys)[0] == 0
    n = len(servicer.writes)
    for text, message in (
        ("", "is empty: the desired state is a mapping with keys ports and users"),
        ("# only a comment\n", "is empty"),
        ("- ue1\n", "must be a mapping with keys ports and/or users, not a list"),
        ("{}\n", "not an empty mapping"),
        ("users: {ue1: {addr: 10.0.0.2}}\n\xff\n", ":2:1: byte 0xff is not UTF-8"),
    ):
        state = tmp_path / "state.yaml"
        state.write_bytes(text.encode("latin-1"))
        code, _, err = run(addr, ["apply", str(state)], capsys)
        assert code == 2 and message in err and len(err.splitlines()) == 1, err
    assert len(servicer.writes) == n


def test_apply_removes_unlisted_users_only_with_prune(fake_target, capsys, tmp_path):
    _, addr = fake_target
    for argv in (["10.0.0.2", "--name", "ue1"], ["10.0.0.3", "--name", "ue2"]):
        assert run(addr, ["user", "add", *argv], capsys)[0] == 0
    state = tmp_path / "state.yaml"
    state.write_text("users:\n  ue1: {addr: 10.0.0.2, batch: 10, ratio: '7:3'}\n")
    code, out, _ = run(addr, ["apply", str(state)], capsys)
    assert code == 0 and out.splitlines()[-2:] == [
        "kept user ue2: not in the desired state (prune removes it)",
        "set user ue1: batch 100 -> 10, ratio 1:1 -> 7:3",
    ]
    code, out, _ = run(addr, ["apply", "--prune", str(state)], capsys)
    assert code == 0 and out.splitlines()[-1] == "del user ue2"
    assert [u["name"] for u in json.loads(run(addr, ["--json", "user", "list"], capsys)[1])] == [
        "ue1"
    ]


def test_errors_speak_dcctl_not_python(fake_target, capsys):
    _, addr = fake_target
    assert run(addr, ["user", "add", "10.0.0.2"], capsys)[0] == 0
    code, _, err = run(addr, ["user", "add", "10.0.0.2"], capsys)
    assert code == 1 and "already exists (change it with dcctl user set)" in err
    assert "set_user" not in err


def test_help_shows_meaningful_defaults_and_explains_every_option():
    """No '(default: None)' or '(default: [])'; every option of user set has a help text."""
    parser = build_parser()
    parsers = [parser]
    while parsers:
        p = parsers.pop()
        text = p.format_help()
        assert "(default: None)" not in text and "(default: [])" not in text, p.prog
        assert "(default: False)" not in text, p.prog
        for action in p._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{p.prog} {action.option_strings[0]} has no help"
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
    assert "(default: 127.0.0.1:9559)" in parser.format_help()

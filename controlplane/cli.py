"""`dcctl`: drive the PDCP splitter on a P4Runtime target (p4sim, BMv2, a hardware switch).

dcctl push build/p4/dc_splitter.p4info.txtpb ... (see `dcctl push --help`)
dcctl port set --server 0 --leg-a 1 --leg-b 2
dcctl user add 10.0.0.2 --name ue1 --mode dc-split --batch 100 --ratio 1:1
dcctl user set ue1 --ratio 9:1 ; dcctl user set ue1 --dup on
dcctl stats --watch
dcctl apply controlplane/examples/testbed.yaml
dcctl control ue1 --policy capacity --log control.jsonl   (adaptive profile)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from controlplane.client import CONNECT_TIMEOUT_S, DEFAULT_ADDR, ConnectionFailed, P4RuntimeError
from controlplane.control import add_control_parser, check_control_options, cmd_control
from controlplane.limits import MAX_BATCH, MAX_PORT
from controlplane.model import (
    MODES,
    PortConfig,
    SplitterError,
    UserConfig,
    leg_a_count,
    parse_ratio,
    validate_ports,
)
from controlplane.p4info import P4InfoError
from controlplane.splitter import Splitter
from controlplane.statefile import parse_state
from controlplane.targets import TargetError, p4sim_compile
from dccommon.cliargs import (
    MAX_UINT64,
    ArgumentParser,
    HelpFormatter,
    InputFileError,
    add_old_name,
    check_input_file,
    check_output_file,
    float_range,
    host_port,
    int_range,
    load_yaml,
    name_arg,
    parse_int,
    printable,
    unicast_arg,
)

PROG = "dcctl"
USER_SET_OPTIONS = ("mode", "batch", "ratio", "dup", "leg_a", "leg_b", "port", "name")


class UsageError(SplitterError):
    """Bad input seen before connecting (the command line, an input file): exit 2. What
    the switch refuses (an unknown user, a port that is not a leg port) stays exit 1."""


# ---------------------------------------------------------------------------
# Argument types: each refuses bad input with the allowed values
# ---------------------------------------------------------------------------


def port_number(text: str) -> int:
    try:
        port = parse_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port number (allowed 0..{MAX_PORT})"
        ) from None
    if not 0 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (allowed 0..{MAX_PORT})")
    return port


def batch_size(text: str) -> int:
    try:
        batch = parse_int(text)
    except ValueError:
        batch = -1
    if not 1 <= batch <= MAX_BATCH:
        raise argparse.ArgumentTypeError(
            f"batch {text!r} must be a whole number from 1 to {MAX_BATCH}"
        )
    return batch


def ratio_arg(text: str) -> str:
    try:
        parse_ratio(text)
    except SplitterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def on_off(text: str) -> bool:
    if text.lower() in ("on", "true", "yes", "1"):
        return True
    if text.lower() in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: expected on or off")


def mac_rule(text: str) -> tuple[int, str, str | None]:
    """PORT=SRC[,DST]"""
    port, sep, macs = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected PORT=SRC_MAC[,DST_MAC], e.g. 1=02:00:00:00:01:01,02:00:00:00:01:02"
        )
    src, _, dst = macs.partition(",")
    return port_number(port), src, dst or None


def election_id(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        value = 0
    if not 1 <= value < 1 << 128:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number from 1 to 2^128-1")
    return value


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        formatter_class=HelpFormatter,
        description="Control the PDCP splitter over P4Runtime.",
    )
    _add_connection_options(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_subcommand in (
        _add_push_parser,
        _add_port_parser,
        _add_user_parser,
        _add_stats_parser,
        _add_apply_parser,
    ):
        add_subcommand(sub)
    sub.add_parser("reset", help="remove all users, port rules and multicast groups")
    add_control_parser(sub, HelpFormatter)
    return parser


def _add_connection_options(parser: argparse.ArgumentParser) -> None:
    """Where the P4Runtime server is and who we are to it."""
    grpc_addr = parser.add_argument(
        "--grpc-addr",
        type=host_port,
        default=DEFAULT_ADDR,
        metavar="HOST:PORT",
        help="P4Runtime server address",
    )
    add_old_name(parser, "--addr", grpc_addr)
    parser.add_argument(
        "--device-id",
        type=int_range(0, MAX_UINT64, "device id"),
        default=0,
        metavar="N",
        help="P4Runtime device id (0..2^64-1)",
    )
    parser.add_argument(
        "--election-id",
        type=election_id,
        default=1,
        metavar="N",
        help="election id, 1..2^128-1 (the highest one is primary)",
    )
    parser.add_argument(
        "--connect-timeout-s",
        type=float_range(0, 3600, "connect timeout", low_open=True),
        default=CONNECT_TIMEOUT_S,
        metavar="S",
        help="how long to wait for the server to answer the connection and the arbitration",
    )


def _add_push_parser(sub) -> None:
    push = sub.add_parser(
        "push",
        formatter_class=HelpFormatter,
        help="push the pipeline (compile PROGRAM.p4 with p4sim, or give "
        "--p4info and --config as produced by p4sim compile or p4c)",
    )
    push.add_argument("program", nargs="?", type=Path, help="P4 source (compiled with p4sim)")
    push.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME[=VAL]",
        help="preprocessor define for PROGRAM.p4, e.g. -D PDCP_SN_12",
    )
    push.add_argument("--p4info", type=Path, help="P4Info file (text or binary)")
    push.add_argument(
        "--config", type=Path, help="device config: p4sim JSON or BMv2 JSON from p4c-bm2-ss"
    )


def _add_port_parser(sub) -> None:
    port = sub.add_parser("port", help="port roles and MAC rewrite").add_subparsers(
        dest="port_command", required=True, metavar="PORT_COMMAND"
    )
    pset = port.add_parser(
        "set",
        formatter_class=HelpFormatter,
        help="set the server and leg ports, MAC rewrite, flooding",
    )
    pset.add_argument("--server", type=port_number, default=0, help="server/core port")
    pset.add_argument("--leg-a", type=port_number, default=1, help="leg A port")
    pset.add_argument("--leg-b", type=port_number, default=2, help="leg B port")
    pset.add_argument(
        "--mac",
        type=mac_rule,
        action="append",
        default=[],
        metavar="PORT=SRC[,DST]",
        help="rewrite MACs of frames leaving PORT (repeatable)",
    )
    pset.add_argument(
        "--flood-unknown",
        action="store_true",
        help="flood non-user downlink frames to both legs instead of dropping",
    )
    port.add_parser("list", help="show the port configuration")


def _add_user_parser(sub) -> None:
    user = sub.add_parser("user", help="DC and SC users").add_subparsers(
        dest="user_command", required=True, metavar="USER_COMMAND"
    )
    add = user.add_parser("add", formatter_class=HelpFormatter, help="add a user")
    add.add_argument(
        "user_addr",
        metavar="ADDR",
        type=unicast_arg,
        help="the user's unicast IPv4 or IPv6 address",
    )
    add.add_argument(
        "--name",
        type=name_arg("user name"),
        help="a name to refer to the user by (e.g. ue1; 1 to 64 printable characters)",
    )
    add.add_argument(
        "--mode",
        choices=MODES,
        default="dc-split",
        help="dc-split: batches split between the legs; dc-dup: every packet on both legs; "
        "sc: single connectivity on --port",
    )
    add.add_argument("--batch", type=batch_size, default=100, help="batch size B (packets)")
    add.add_argument(
        "--ratio",
        type=ratio_arg,
        default="1:1",
        help="leg A:leg B as a:b (a+b = B, or dividing B) or leg A percent (70%%)",
    )
    add.add_argument("--leg-a", type=port_number, default=1, help="leg A port")
    add.add_argument("--leg-b", type=port_number, default=2, help="leg B port")
    add.add_argument("--port", type=port_number, help="the port of an sc user")

    uset = user.add_parser(
        "set", formatter_class=HelpFormatter, help="change a user live (the PDCP SN continues)"
    )
    uset.add_argument("user", help="name or address")
    uset.add_argument(
        "--mode", choices=MODES, help="switch mode (dc-split, dc-dup or sc with --port)"
    )
    uset.add_argument("--batch", type=batch_size, help="batch size B")
    uset.add_argument("--ratio", type=ratio_arg, help="a:b or percent on leg A")
    uset.add_argument("--dup", type=on_off, metavar="on|off", help="duplication on both legs")
    uset.add_argument("--leg-a", type=port_number, help=f"leg A port (0..{MAX_PORT})")
    uset.add_argument("--leg-b", type=port_number, help=f"leg B port (0..{MAX_PORT})")
    uset.add_argument("--port", type=port_number, help="port of an sc user")
    uset.add_argument(
        "--name", type=name_arg("user name"), help="rename (1 to 64 printable characters)"
    )

    udel = user.add_parser("del", help="remove a user")
    udel.add_argument("user", help="name or address")
    user.add_parser("list", help="list users")


def _add_stats_parser(sub) -> None:
    stats = sub.add_parser(
        "stats",
        formatter_class=HelpFormatter,
        help="per-user and per-port packets, bytes and rates",
    )
    stats.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    stats.add_argument(
        "--interval",
        type=float_range(0, 3600, "interval", low_open=True),
        default=1.0,
        help="seconds between refreshes (above 0 up to 3600)",
    )
    stats.add_argument(
        "--count",
        type=int_range(0, 1_000_000_000, "count"),
        default=0,
        help="stop after this many refreshes (0 = until Ctrl-C)",
    )


def _add_apply_parser(sub) -> None:
    apply = sub.add_parser(
        "apply",
        formatter_class=HelpFormatter,
        help="make the switch hold a YAML desired state (users not listed are kept unless "
        "--prune)",
    )
    apply.add_argument("file", type=Path, help="YAML file (schema: controlplane/docs/reference.md)")
    apply.add_argument(
        "--prune",
        action="store_true",
        help="also delete the users on the switch that the file does not list",
    )


# ---------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------


def _print(args, data, text: str) -> None:
    print(json.dumps(data, indent=2, sort_keys=True) if args.json else text)


def _user_row(u: UserConfig) -> str:
    name = u.name or "-"
    if u.mode == "sc":
        return f"{name:<10} {u.addr:<26} sc        port {u.port}"
    a, b = u.ratio
    return (
        f"{name:<10} {u.addr:<26} {u.mode:<9} batch {u.batch} ratio {a}:{b} "
        f"(k={u.k}) legs {u.leg_a}/{u.leg_b}"
    )


def _user_dict(u: UserConfig) -> dict:
    d = {"name": u.name, "addr": u.addr, "mode": u.mode}
    if u.mode == "sc":
        d["port"] = u.port
    else:
        d.update(
            batch=u.batch,
            ratio=f"{u.ratio[0]}:{u.ratio[1]}",
            leg_a_count=u.k,
            leg_a=u.leg_a,
            leg_b=u.leg_b,
        )
    return d


def _what_a_push_replaces(sw: Splitter) -> str:
    """A push discards every entry of the running pipeline: say which, so that nobody loses
    their users without being told."""
    try:
        _ = sw.index  # reads the running pipeline's P4Info
    except ConnectionFailed:
        raise
    except P4RuntimeError as exc:
        if exc.code is not None:
            raise
        return "no pipeline was running"
    try:
        held = sw.held_state()
    except (P4InfoError, P4RuntimeError, KeyError):
        return "it replaced a pipeline that is not the splitter's, and all its entries"
    if not held:
        return "it replaced the running pipeline, which held no users or port rules"
    return f"it replaced the running pipeline and removed {'; '.join(held)}"


def cmd_push(args, sw: Splitter) -> None:
    if args.program:
        with tempfile.TemporaryDirectory(prefix="dcctl-") as tmp:
            try:
                p4info, config = p4sim_compile(Path(args.program), Path(tmp), args.defines)
            except TargetError as exc:
                raise SplitterError(str(exc)) from None
            replaced = _what_a_push_replaces(sw)
            sw.push_pipeline(p4info, config)
        source = str(args.program)
    else:  # check_command_line: both --p4info and --config
        replaced = _what_a_push_replaces(sw)
        sw.push_pipeline(args.p4info, args.config)
        source = f"{args.p4info} + {args.config}"
    _print(
        args,
        {"pushed": source, "replaced": replaced},
        f"pushed {source} to {args.grpc_addr}; {replaced}",
    )


def cmd_port(args, sw: Splitter) -> None:
    if args.port_command == "set":
        changes = sw.configure_ports(
            args.server, args.leg_a, args.leg_b, args.macs, args.flood_unknown
        )
        _print(args, {"changes": changes}, "\n".join(changes) or "no change")
        return
    ports = sw.ports()
    data = {
        "server": ports.server,
        "leg_a": ports.leg_a,
        "leg_b": ports.leg_b,
        "flood_unknown": ports.flood_unknown,
        "macs": {str(p): {"src": s, "dst": d} for p, (s, d) in ports.macs.items()},
    }
    lines = [
        (
            f"server {ports.server}  leg A {ports.leg_a}  leg B {ports.leg_b}  "
            f"flood unknown: {'on' if ports.flood_unknown else 'off'}"
        )
    ]
    lines += [f"port {p}: src {s} dst {d or '(unchanged)'}" for p, (s, d) in ports.macs.items()]
    _print(args, data, "\n".join(lines))


def cmd_user(args, sw: Splitter) -> None:
    if args.user_command == "add":
        cfg = sw.add_user(
            UserConfig(
                addr=args.user_addr,
                mode=args.mode,
                batch=args.batch,
                ratio=args.ratio,
                leg_a=args.leg_a,
                leg_b=args.leg_b,
                port=args.port,
                name=args.name,
            )
        )
        _print(args, _user_dict(cfg), "added " + _user_row(cfg))
    elif args.user_command == "set":
        changes = {o: getattr(args, o) for o in USER_SET_OPTIONS}
        cfg = sw.set_user(args.user, **changes)
        _print(args, _user_dict(cfg), "set " + _user_row(cfg))
    elif args.user_command == "del":
        cfg = sw.del_user(args.user)
        _print(args, _user_dict(cfg), "deleted " + _user_row(cfg))
    else:
        users = sw.users()
        _print(
            args,
            [_user_dict(u) for u in users],
            "\n".join(_user_row(u) for u in users) or "no users",
        )


def _rate(now: dict, before: dict | None, key_path: tuple, dt: float) -> float:
    if before is None or dt <= 0:
        return 0.0
    a, b = now, before
    for k in key_path:
        a, b = a.get(k, {}) if isinstance(a, dict) else 0, (
            b.get(k, {}) if isinstance(b, dict) else 0
        )
    return max(0.0, ((a or 0) - (b or 0)) / dt)


def render_stats(now: dict, before: dict | None) -> str:
    dt = now["time"] - before["time"] if before else 0.0
    lines = [f"{'user':<26} {'mode':<9} {'packets':>12} {'bytes':>14} {'pkt/s':>10} {'Mbit/s':>9}"]
    for addr, u in now["users"].items():
        pps = _rate(now, before, ("users", addr, "packets"), dt)
        bps = _rate(now, before, ("users", addr, "bytes"), dt) * 8 / 1e6
        label = f"{u['name']} ({addr})" if u["name"] else addr
        lines.append(
            f"{label:<26} {u['mode']:<9} {u['packets']:>12} {u['bytes']:>14} "
            f"{pps:>10.1f} {bps:>9.3f}"
        )
    lines.append("")
    lines.append(
        f"{'port':<12} {'rx pkts':>10} {'rx bytes':>12} {'tx pkts':>10} "
        f"{'tx bytes':>12} {'tx pkt/s':>9} {'tx Mbit/s':>9}"
    )
    for role, p in now["ports"].items():
        pps = _rate(now, before, ("ports", role, "tx_packets"), dt)
        bps = _rate(now, before, ("ports", role, "tx_bytes"), dt) * 8 / 1e6
        lines.append(
            f"{role + ' (' + str(p['port']) + ')':<12} {p['rx_packets']:>10} "
            f"{p['rx_bytes']:>12} {p['tx_packets']:>10} {p['tx_bytes']:>12} "
            f"{pps:>9.1f} {bps:>9.3f}"
        )
    return "\n".join(lines)


def cmd_stats(args, sw: Splitter) -> None:
    before = None
    rounds = 0
    redraw = sys.stdout.isatty() and not args.json
    try:
        while True:
            now = sw.stats()
            if args.json:
                print(json.dumps(now, sort_keys=True), flush=True)
            else:
                if redraw and before is not None:
                    sys.stdout.write("\x1b[H\x1b[J")  # cursor home, clear: redraw in place
                print(render_stats(now, before), flush=True)
                if not redraw and args.watch:
                    print(flush=True)
            rounds += 1
            if not args.watch or (args.count and rounds >= args.count):
                return
            before = now
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return


def load_state(path: Path) -> dict:
    """The YAML desired state, validated before anything is written."""
    try:
        state = load_yaml(path)
    except InputFileError as exc:
        raise UsageError(str(exc)) from None
    if state is None:  # an empty file must not mean "remove everything"
        raise UsageError(
            f"{path} is empty: the desired state is a mapping with keys ports and users "
            "(to remove every user: dcctl reset)"
        )
    try:
        parse_state(state)
    except SplitterError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return state


def check_command_line(args) -> None:
    """What the command line alone shows to be wrong (UsageError, exit 2), checked before
    connecting: argparse checks each value, this checks how they go together."""
    if args.command == "push":
        if args.program and (args.p4info or args.config):
            raise UsageError("push: give either PROGRAM.p4 or --p4info and --config, not both")
        if not args.program and not (args.p4info and args.config):
            raise UsageError("push needs PROGRAM.p4, or both --p4info FILE and --config FILE")
        for path, expected in (
            (args.program, "a P4_16 program"),
            (args.p4info, "the program's P4Info"),
            (args.config, "the target's device config"),
        ):
            if path is not None:
                try:
                    check_input_file(path)
                except InputFileError as exc:
                    raise UsageError(str(exc)) from None
                if os.path.getsize(path) == 0:
                    raise UsageError(f"push: {printable(path)} is empty (expected {expected})")
    elif args.command == "port" and args.port_command == "set":
        args.macs = {}
        for port, src, dst in args.mac:
            if port in args.macs:
                raise UsageError(f"port set: --mac gives port {port} twice; give each port once")
            args.macs[port] = (src, dst)
        try:
            validate_ports(
                PortConfig(args.server, args.leg_a, args.leg_b, args.macs, args.flood_unknown)
            )
        except SplitterError as exc:
            raise UsageError(f"port set: {exc}") from None
    elif args.command == "user" and args.user_command == "add":
        if args.mode == "sc" and args.port is None:
            raise UsageError("user add: --mode sc needs --port (a leg port)")
        if args.mode != "sc" and args.port is not None:
            raise UsageError(
                f"user add: --port applies to sc users only; a {args.mode} user uses "
                "--leg-a and --leg-b"
            )
        if args.mode != "sc":
            try:
                leg_a_count(args.ratio, args.batch)
            except SplitterError as exc:
                raise UsageError(str(exc)) from None
    elif args.command == "user" and args.user_command == "set":
        if all(getattr(args, o) is None for o in USER_SET_OPTIONS):
            raise UsageError(
                "user set: nothing to change; give at least one of --mode, --batch, --ratio, "
                "--dup, --leg-a, --leg-b, --port, --name"
            )
    elif args.command == "apply":
        args.state = load_state(args.file)
    elif args.command == "control":
        try:
            check_control_options(args)
        except ValueError as exc:
            raise UsageError(f"control: {exc}") from None
        if args.log is not None:
            try:
                check_output_file(args.log)
            except InputFileError as exc:
                raise UsageError(f"control: --log {exc}") from None


def cmd_apply(args, sw: Splitter) -> None:
    changes = sw.apply(args.state, prune=args.prune)
    _print(args, {"changes": changes}, "\n".join(changes) or "no change")


def cmd_reset(args, sw: Splitter) -> None:
    changes = sw.reset()
    _print(args, {"changes": changes}, "\n".join(changes) or "nothing to remove")


COMMANDS = {
    "push": cmd_push,
    "port": cmd_port,
    "user": cmd_user,
    "stats": cmd_stats,
    "apply": cmd_apply,
    "reset": cmd_reset,
    "control": cmd_control,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_command_line(args)
        with Splitter.connect(
            args.grpc_addr, args.device_id, args.election_id, args.connect_timeout_s
        ) as sw:
            COMMANDS[args.command](args, sw)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except (SplitterError, P4RuntimeError, P4InfoError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C while connecting or writing: no traceback
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

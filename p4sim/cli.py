"""The `p4sim` command: a software switch shaped like BMv2's `simple_switch_grpc`, and
`p4sim compile`, which checks a program and writes its P4Info like `p4c --p4runtime-files`.

    p4sim [PROGRAM.p4 | --no-p4] -i 0@veth0 -i 1@veth1 [--grpc-server-addr 127.0.0.1:9559]
          [--device-id 0] [--cpu-port N] [--log-level info] [--pcap-dir DIR] [-I DIR] [-D N=V]
          [--engine interp|native] [--io afpacket|afxdp]
    p4sim compile PROGRAM.p4 --p4runtime-files OUT.p4info.txt[,OUT.json,...] [-o OUT.p4sim.json]
          [-I DIR] [-D NAME[=VAL]]
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from dccommon.cliargs import (
    LO_DOWN_FIX,
    MAX_TCP_PORT,
    MAX_UINT64,
    ArgumentParser,
    HelpFormatter,
    InputFileError,
    check_input_file,
    host_port,
    input_dir,
    int_range,
    is_loopback_addr,
    loopback_is_up,
    make_output_dir,
    port_map,
    short_path,
)

IFNAMSIZ = 16  # <net/if.h>: a Linux interface name is at most 15 bytes

TRACE = 5  # below DEBUG: BMv2's "trace" level
LOG_LEVELS = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "off": logging.CRITICAL + 10,
}

log = logging.getLogger("p4sim")

MAX_PORT = 510  # v1model ports are bit<9>; 511 is the drop port


class UsageError(Exception):
    """An error found after the options were parsed (a missing or bad file, a program error,
    an interface that cannot be opened): one line `p4sim: error: ...`, exit status 1.
    Bad options are argparse's: exit status 2."""


# ---------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------


def _interface(text: str) -> tuple[int, str]:
    port, sep, name = text.partition("@")
    if not sep or not (port.isascii() and port.isdigit()) or not name:  # not fullwidth '１'
        raise argparse.ArgumentTypeError(f"{text!r} is not PORT@INTERFACE (e.g. 0@veth0)")
    if not 0 <= int(port) <= MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"port {port} is out of range (allowed 0..{MAX_PORT}; 511 is the drop port)"
        )
    if len(name.encode()) > IFNAMSIZ - 1 or not name.isprintable() or "/" in name:
        raise argparse.ArgumentTypeError(
            f"interface {short_path(name)!r}: a Linux interface name is 1 to {IFNAMSIZ - 1} "
            "bytes, printable, without '/'"
        )
    return int(port), name


def _define(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not name.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME or NAME=VALUE")
    return name, value if value else "1"


def _add_program_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-I",
        dest="include_dirs",
        action="append",
        default=[],
        type=input_dir,  # cpp skips a missing one silently: a typo would hide a header
        metavar="DIR",
        help="add DIR to the #include search path",
    )
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        type=_define,
        metavar="NAME[=VAL]",
        help="define a preprocessor macro (default value 1)",
    )


def build_run_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="p4sim",
        formatter_class=HelpFormatter,
        description="Run a P4_16 program (v1model or TNA) on Linux interfaces and serve P4Runtime "
        "(like simple_switch_grpc). `p4sim compile -h` for the compiler.",
    )
    p.add_argument(
        "program",
        nargs="?",
        metavar="PROGRAM.p4",
        help="P4_16 program to run; omit with --no-p4 and push one over P4Runtime",
    )
    p.add_argument(
        "--no-p4",
        action="store_true",
        help="start without a program (wait for SetForwardingPipelineConfig)",
    )
    p.add_argument(
        "-i",
        "--interface",
        dest="interfaces",
        action="append",
        default=[],
        type=_interface,
        metavar="PORT@IF",
        help="attach interface IF as port PORT",
    )
    p.add_argument(
        "--grpc-server-addr",
        type=host_port,
        default="127.0.0.1:9559",
        metavar="HOST:PORT",
        help="P4Runtime server address",
    )
    p.add_argument(
        "--device-id",
        type=int_range(0, MAX_UINT64, "device id"),
        default=0,
        metavar="N",
        help="P4Runtime device id (0..2^64-1)",
    )
    p.add_argument(
        "--cpu-port",
        type=int_range(0, MAX_PORT, "CPU port"),
        default=None,
        metavar="N",
        help=f"the CPU port (PacketIn/PacketOut), 0..{MAX_PORT}; none by default",
    )
    p.add_argument(
        "--log-level",
        choices=list(LOG_LEVELS),
        default="info",
        help="debug and trace show the per-packet trace of the pipeline",
    )
    p.add_argument(
        "--engine",
        choices=["interp", "native"],
        default="interp",
        help="interp: the Python interpreter; native: the program compiled to C (falls back "
        "to interp, logged, for constructs it does not translate)",
    )
    p.add_argument(
        "--io",
        choices=["afpacket", "afxdp"],
        default="afpacket",
        help="how --engine native reads and writes the interfaces: afpacket (a packet socket "
        "with a TPACKET_V2 ring, sendmmsg) or afxdp (an AF_XDP socket on queue 0, XDP in "
        "the driver: veth has it)",
    )
    p.add_argument(
        "--pcap-dir",
        metavar="DIR",
        help="write <port>-in.pcap and <port>-out.pcap for every port into DIR",
    )
    p.add_argument(
        "--thrift-port",
        type=int_range(0, MAX_TCP_PORT, "Thrift port"),
        metavar="N",
        help="accepted for simple_switch_grpc compatibility and ignored",
    )
    _add_program_options(p)
    return p


def build_compile_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="p4sim compile",
        formatter_class=HelpFormatter,
        description="Check a P4_16 program (v1model or TNA) and write its P4Info "
        "(like p4c-bm2-ss --p4runtime-files) and p4sim device config.",
    )
    p.add_argument("program", metavar="PROGRAM.p4")
    p.add_argument(
        "--p4runtime-files",
        metavar="FILES",
        help="comma-separated P4Info outputs; format by suffix: .txt/.txtpb text, "
        ".json JSON, .bin binary",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.p4sim.json",
        help="write the p4sim device config (JSON) for SetForwardingPipelineConfig",
    )
    _add_program_options(p)
    return p


# ---------------------------------------------------------------------------
# Shared steps
# ---------------------------------------------------------------------------


def setup_logging(level_name: str) -> None:
    logging.addLevelName(TRACE, "trace")
    level = LOG_LEVELS[level_name]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(
            "[%(asctime)s.%(msecs)03d] [%(levelname)s] " "%(name)s: %(message)s", datefmt="%H:%M:%S"
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The engine's per-packet trace (logger p4sim.trace, at DEBUG) shows at debug and trace,
    # as BMv2 prints table hits and actions at debug.
    logging.getLogger("grpc").setLevel(max(level, logging.WARNING))


def compile_program(path: str, include_dirs: list[str], defines: list[tuple[str, str]]):
    """Compile `path`; UsageError carrying the front end's `file:line:col: error:` text."""
    try:
        check_input_file(path)
    except InputFileError as exc:
        raise UsageError(str(exc)) from None
    from p4sim import frontend
    from p4sim.errors import P4Error

    try:
        return frontend.compile_file(path, include_dirs=tuple(include_dirs), defines=dict(defines))
    except P4Error as exc:
        raise UsageError(str(exc)) from None
    except RecursionError:
        raise UsageError(f"{path}: program nested too deeply for p4sim") from None


def check_loopback(addr: str) -> None:
    """A server on 127.0.0.1 in a namespace whose lo is down listens, but no client can
    connect (dcctl would then say the switch is not running): refuse to start."""
    if addr.startswith("unix:") or loopback_is_up():
        return
    if is_loopback_addr(addr):
        raise UsageError(
            f"--grpc-server-addr {addr}: the loopback interface lo is down in this network "
            f"namespace, so no client could reach the server; {LO_DOWN_FIX}"
        )
    log.warning(
        "lo is down in this network namespace: local clients cannot connect; %s", LO_DOWN_FIX
    )


def device_config_for(program, path: str) -> bytes:
    from p4sim.p4runtime.device_config import DeviceConfig

    return DeviceConfig(program=program.source, file=Path(path).name).encode()


# ---------------------------------------------------------------------------
# p4sim compile
# ---------------------------------------------------------------------------


def compile_main(argv: list[str]) -> int:
    from p4sim import p4info

    args = build_compile_parser().parse_args(argv)
    outputs = [f for f in (args.p4runtime_files or "").split(",") if f]
    try:
        formats = [(f, p4info.p4info_format(f)) for f in outputs]
    except p4info.P4InfoBuildError as exc:
        raise UsageError(str(exc)) from None
    program = compile_program(args.program, args.include_dirs, args.defines)
    try:
        info = p4info.generate(program.model)
    except p4info.P4InfoBuildError as exc:
        raise UsageError(f"{args.program}: {exc}") from None
    try:
        for path, fmt in formats:
            Path(path).write_bytes(p4info.serialize(info, fmt))
        if args.output:
            Path(args.output).write_bytes(device_config_for(program, args.program))
    except OSError as exc:
        raise UsageError(f"cannot write {exc.filename}: {exc.strerror}") from None
    if not outputs and not args.output:  # a check only, like p4c without output options
        print(
            f"p4sim: {args.program}: no errors (give --p4runtime-files and/or -o to write "
            "outputs)",
            file=sys.stderr,
        )
    return 0


# ---------------------------------------------------------------------------
# p4sim (the switch)
# ---------------------------------------------------------------------------


def bound_malloc() -> None:
    """Keep the switch's memory from creeping up under large requests. glibc raises its mmap
    threshold each time a large block is freed, so later megabyte-sized request buffers come
    from the heap and stay resident, spread over one arena per gRPC thread; the P4Runtime
    fuzzer saw RSS climb from 57 to over 100 MB that way, and stay flat at 50-60 MB with a
    fixed 128 KiB threshold and two arenas. No effect where the C library is not glibc."""
    import ctypes

    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is not None:
        mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD (fixing it turns the raising off)
        mallopt(-8, 2)  # M_ARENA_MAX


def run_main(argv: list[str]) -> int:
    parser = build_run_parser()
    # simple_switch_grpc puts target options after `--`; accept that shape too.
    args = parser.parse_args([a for a in argv if a != "--"])
    setup_logging(args.log_level)
    bound_malloc()  # before any thread exists
    if args.program and args.no_p4:
        parser.error("give a PROGRAM.p4 or --no-p4, not both")
    if not args.program and not args.no_p4:
        parser.error("give a PROGRAM.p4 to run, or --no-p4 to wait for a pipeline over P4Runtime")
    try:
        interfaces = port_map(args.interfaces)
    except ValueError as exc:
        parser.error(str(exc))
    if args.cpu_port in interfaces:
        parser.error(f"port {args.cpu_port} is the CPU port; it cannot also be an interface")
    check_loopback(args.grpc_server_addr)
    if args.pcap_dir is not None:
        try:
            make_output_dir(args.pcap_dir)
        except InputFileError as exc:
            parser.error(f"--pcap-dir {exc}")
    if args.thrift_port is not None:
        log.info(
            "--thrift-port %d ignored: p4sim has no Thrift runtime, use P4Runtime", args.thrift_port
        )

    from p4sim.io import AfPacketPorts, PortError, offload_warnings
    from p4sim.native import EngineProgram, compiler
    from p4sim.p4runtime import P4RuntimeServer
    from p4sim.p4runtime.errors import StatusError
    from p4sim.p4runtime.pipeline import from_program
    from p4sim.switch import Switch

    engine = args.engine
    if engine == "native" and LOG_LEVELS[args.log_level] <= logging.DEBUG:
        log.warning(
            "--log-level %s: the per-packet trace is the interpreter's; using --engine interp",
            args.log_level,
        )
        engine = "interp"
    pipeline = None
    if args.program:
        program = EngineProgram(
            compile_program(args.program, args.include_dirs, args.defines), engine
        )
        try:
            pipeline = from_program(
                program, device_config_for(program, args.program), args.cpu_port
            )
        except StatusError as exc:
            raise UsageError(f"{args.program}: {exc.message}") from None
    try:
        if engine == "native":  # the C data path: TPACKET ring in, sendmmsg out (io.c)
            from p4sim.native.ports import NativePorts

            ports = NativePorts(interfaces, args.pcap_dir, args.io)
        elif args.io != "afpacket":
            raise UsageError(
                f"--io {args.io}: the native engine's (--engine native); the interpreter "
                "reads its interfaces through AF_PACKET"
            )
        else:
            ports = AfPacketPorts(interfaces)
    except PortError as exc:
        raise UsageError(str(exc)) from None
    for name in interfaces.values():
        for warning in offload_warnings(name):
            log.warning("%s", warning)
    try:
        switch = Switch(ports, cpu_port=args.cpu_port, pcap_dir=args.pcap_dir)
    except OSError as exc:
        ports.close()
        raise UsageError(f"--pcap-dir {args.pcap_dir}: {exc.strerror}") from None
    try:
        if pipeline is not None:
            switch.set_pipeline(pipeline)
        try:
            server = P4RuntimeServer(
                switch, args.grpc_server_addr, device_id=args.device_id, compiler=compiler(engine)
            )
        except (OSError, RuntimeError) as exc:
            raise UsageError(f"P4Runtime server: {exc}") from None
        switch.start()
        server.start()
        log.info(
            "P4Runtime server on %s (device %d); ports %s%s",
            server.address,
            args.device_id,
            ", ".join(f"{p}@{n}" for p, n in sorted(interfaces.items())) or "none",
            f"; CPU port {args.cpu_port}" if args.cpu_port is not None else "",
        )
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        while not stop.wait(0.5):
            pass
        log.info("stopping")
        server.stop()
    finally:
        switch.close()
        log.info("counters: %s", switch.stats_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "compile":
            return compile_main(argv[1:])
        return run_main(argv)
    except UsageError as exc:
        message = str(exc)
        # front end errors already read `file:line:col: error: ...`
        print(message if ": error: " in message else f"p4sim: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

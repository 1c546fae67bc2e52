"""The switch a controller drives: the command line of each target, starting it, waiting
until it serves P4Runtime (while checking it is still alive), and stopping it by its PID.

    p4sim   this project's embedded target (`p4sim PROGRAM` or `p4sim --no-p4`)
    bmv2    BMv2's simple_switch_grpc without a program (the controller pushes p4c's output)
    remote  a switch someone else runs: nothing to start, only an address to reach

PTF (`ptf-tests/run_ptf.py`), the splitter differential (`p4src/tests/splitter_diff.py`),
the experiment testbed and the BMv2 helpers all start their switch through here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc

from controlplane.bmv2 import INSTALL_HINT, THRIFT_PORT
from dccommon.processes import stop_process

TARGETS = ("p4sim", "bmv2", "remote")
START_TIMEOUT_S = 60.0


class TargetError(RuntimeError):
    """A switch could not be started or did not come up; the message says which and why."""


def _port_args(ifaces: dict[int, str]) -> list[str]:
    return [arg for port, name in sorted(ifaces.items()) for arg in ("-i", f"{port}@{name}")]


def p4sim_exe() -> str:
    """p4sim's console script: next to our interpreter first (the project's venv), then PATH."""
    local = Path(sys.executable).parent / "p4sim"
    exe = str(local) if local.exists() else shutil.which("p4sim")
    if exe is None:
        raise TargetError("the p4sim command is missing; run `make setup`")
    return exe


def p4sim_argv(
    ifaces: dict[int, str],
    grpc_addr: str,
    program: Path | None = None,
    *,
    cpu_port: int | None = None,
    options: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """p4sim serving P4Runtime at `grpc_addr`, ports as `-i PORT@IFACE`. With `program` it
    compiles that P4 source itself (`options` may carry its `-D` flags); without, it waits
    for the controller's pipeline (`--no-p4`)."""
    return [
        p4sim_exe(),
        str(program) if program is not None else "--no-p4",
        *options,
        *_port_args(ifaces),
        *(["--cpu-port", str(cpu_port)] if cpu_port is not None else []),
        "--grpc-server-addr",
        grpc_addr,
    ]


def p4sim_compile(
    program: Path, out: Path, defines: list[str] | tuple[str, ...] = (), name: str = "dc"
) -> tuple[Path, Path]:
    """`p4sim compile` of `program` (with `-D` `defines`) into OUT/NAME.p4info.txtpb and
    OUT/NAME.p4sim.json, the pair a controller pushes to p4sim (what `make p4` writes);
    TargetError with the compiler's messages when the program does not compile."""
    p4info, config = out / f"{name}.p4info.txtpb", out / f"{name}.p4sim.json"
    argv = [sys.executable, "-m", "p4sim.cli", "compile", str(program)]
    argv += [arg for define in defines for arg in ("-D", define)]
    argv += ["--p4runtime-files", str(p4info), "-o", str(config)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TargetError(f"compiling {program} failed:\n{proc.stderr.strip()}")
    return p4info, config


def bmv2_argv(
    ifaces: dict[int, str],
    grpc_addr: str | None,
    thrift_port: int = THRIFT_PORT,
    *,
    device_id: int = 0,
    cpu_port: int | None = None,
    program: Path | None = None,
    options: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """simple_switch_grpc serving P4Runtime at `grpc_addr` (simple_switch, Thrift only, when
    None), ports as `-i PORT@IFACE`, BMv2's own `options` before the program (`--no-p4`
    without one); the gRPC server's options (address, PacketIn/Out port) follow `--`."""
    binary = "simple_switch_grpc" if grpc_addr is not None else "simple_switch"
    exe = shutil.which(binary)
    if exe is None:
        raise TargetError(f"{binary} is not on PATH: {INSTALL_HINT}")
    argv = [exe, *options, "--device-id", str(device_id), "--thrift-port", str(thrift_port)]
    argv += [*_port_args(ifaces), str(program.resolve()) if program is not None else "--no-p4"]
    if grpc_addr is None:
        return argv
    argv += ["--", "--grpc-server-addr", grpc_addr]
    return argv + (["--cpu-port", str(cpu_port)] if cpu_port is not None else [])


def switch_argv(
    target: str,
    ifaces: dict[int, str],
    grpc_addr: str,
    *,
    cpu_port: int | None = None,
    program: Path | None = None,
    p4sim_options: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """The command line of `target` (p4sim or bmv2; a remote switch is not ours to start).
    BMv2 is always started without a program (`--no-p4`): it takes p4c's output over
    P4Runtime, whereas p4sim may compile `program` itself."""
    if target == "p4sim":
        return p4sim_argv(ifaces, grpc_addr, program, cpu_port=cpu_port, options=p4sim_options)
    if target == "bmv2":
        return bmv2_argv(ifaces, grpc_addr, cpu_port=cpu_port)
    if target == "remote":
        raise TargetError("target remote: the switch runs elsewhere; there is nothing to start")
    raise TargetError(f"target {target!r}: allowed are {', '.join(TARGETS)}")


def start(argv: list[str], log: Path, popen=subprocess.Popen, **kwargs) -> subprocess.Popen:
    """Start a switch with stdout and stderr in `log`. `popen` is the starter: a namespace's
    `popen` runs it inside that namespace."""
    with open(log, "w") as out:  # the child keeps its own descriptor
        return popen(argv, stdout=out, stderr=subprocess.STDOUT, **kwargs)


# gRPC retries a refused connection after its reconnect backoff: 1 s, then 1.6 s, 2.6 s, ...
# A switch that is still starting refuses the first attempts, so with the defaults the wait
# lasted up to a second or two past the moment the switch served. Starting switches are
# local: retry every 50 to 200 ms.
_RETRY_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 200),
]
_PROBE = (
    "import grpc, sys; "
    f"ch = grpc.insecure_channel(sys.argv[1], options={_RETRY_OPTIONS!r}); "
    "grpc.channel_ready_future(ch).result(timeout=float(sys.argv[2]))"
)
_POLL_S = 0.2


def wait_serving(
    switch: subprocess.Popen,
    grpc_addr: str,
    timeout_s: float = START_TIMEOUT_S,
    *,
    popen=None,
    log: Path | None = None,
) -> None:
    """Return once `grpc_addr` accepts gRPC connections; raise TargetError if the switch
    exits first or `timeout_s` passes (with the last lines of its `log`). An address that
    only exists inside a network namespace is probed by a process `popen` starts there."""
    deadline = time.monotonic() + timeout_s
    served = False
    if popen is None:
        channel = grpc.insecure_channel(grpc_addr, options=_RETRY_OPTIONS)
        ready = grpc.channel_ready_future(channel)
        try:
            while not served and switch.poll() is None and time.monotonic() < deadline:
                try:
                    ready.result(timeout=_POLL_S)
                    served = True
                except grpc.FutureTimeoutError:
                    continue
        finally:
            # unsubscribe first: a subscriber left behind keeps gRPC's connectivity poller
            # running into the closed channel ("Channel closed!" from its thread)
            ready.cancel()
            channel.close()
    else:
        probe = popen([sys.executable, "-c", _PROBE, grpc_addr, str(timeout_s)])
        while probe.poll() is None and switch.poll() is None and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        served = stop_process(probe, grace_s=1) == 0
    if served and switch.poll() is None:
        return
    state = (
        f"exited with {switch.returncode}"
        if switch.poll() is not None
        else f"did not serve P4Runtime on {grpc_addr} within {timeout_s:g} s"
    )
    tail = ""
    if log is not None and log.exists():
        tail = ":\n  " + "\n  ".join(log.read_text(errors="replace").splitlines()[-8:])
    raise TargetError(f"the switch {state}; see {log or 'its log'}{tail}")

"""BMv2 `simple_switch_grpc` as a target of this project: where its tools are (controlplane.targets
starts it), and its Thrift runtime for what its P4Runtime server does not implement.

BMv2's P4Runtime server (PI) answers register reads and writes with UNIMPLEMENTED (p4lang/PI
issue 376); BMv2 serves them over its Thrift runtime instead (`bm_register_read` /
`bm_register_write` of the `standard` service, what `simple_switch_CLI`'s `register_read`
calls). `BMv2Thrift` is that client; `controlplane.registers` picks it when P4Runtime says
UNIMPLEMENTED. Its Python modules (`bm_runtime`) ship with BMv2, not with PyPI: `make setup`
links them into `.venv` (`link_runtime`), from the p4tools bundle or p4lang's packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from controlplane.client import ConnectionFailed, P4RuntimeError

#: the tools a BMv2 run needs, and what provides them
TOOLS = {
    "p4c-bm2-ss": "p4c's BMv2 back end",
    "simple_switch_grpc": "BMv2 with its P4Runtime server",
}
INSTALL_HINT = (
    "install the p4tools bundle (`make setup P4TOOLS_BUNDLE=path/to/p4tools`, see README.md) "
    "or p4lang's packages p4lang-p4c and p4lang-bmv2 (https://github.com/p4lang/p4c and "
    'https://github.com/p4lang/behavioral-model, "Installing packaged versions")'
)
THRIFT_PORT = 9090  # BMv2's default
RUNTIME_LINK_DIR = "lib/bmv2-runtime"  # inside the venv; named by a .pth file
RUNTIME_PTH = "dc_splitter_bmv2_runtime.pth"


def missing() -> list[str]:
    """What a BMv2 run lacks on this machine (empty when everything is there)."""
    problems = [f"{tool} ({what})" for tool, what in TOOLS.items() if shutil.which(tool) is None]
    try:
        import bm_runtime.standard  # noqa: F401 - the import is the check
        import thrift  # noqa: F401
    except ImportError as exc:
        problems.append(
            f"BMv2's Python Thrift runtime ({exc}; `make setup` links BMv2's bm_runtime into "
            f".venv once BMv2 is installed)"
        )
    return problems


def runtime_module_dir() -> Path | None:
    """The directory holding BMv2's `bm_runtime` package: beside simple_switch_grpc
    (PREFIX/lib/python3.X/site-packages of the bundle or of a --prefix build), else where
    the system Python finds it (p4lang's packages install it system-wide)."""
    exe = shutil.which("simple_switch_grpc")
    if exe is not None:
        prefix = Path(exe).resolve().parent.parent
        for site in sorted(prefix.glob("lib/python3*/*-packages")):
            if (site / "bm_runtime" / "__init__.py").is_file():
                return site
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin")
    if python is None:
        return None
    probe = subprocess.run(
        [python, "-c", "import bm_runtime, os; print(os.path.dirname(bm_runtime.__path__[0]))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return Path(probe.stdout.strip()) if probe.returncode == 0 else None


def link_runtime(venv: Path) -> Path | None:
    """Make `bm_runtime` importable in `venv`: a directory holding only a link to it, named
    by a .pth file (the directory BMv2 installs into may hold other packages that must not
    shadow the venv's). Returns the linked package, or None when BMv2 is not installed."""
    source = runtime_module_dir()
    site = next(iter(sorted(venv.glob("lib/python3*/site-packages"))), None)
    if source is None or site is None:
        return None
    link_dir = venv / RUNTIME_LINK_DIR
    link_dir.mkdir(parents=True, exist_ok=True)
    link = link_dir / "bm_runtime"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(source / "bm_runtime", target_is_directory=True)
    (site / RUNTIME_PTH).write_text(f"{link_dir.resolve()}\n")
    return link


def split_addr(addr: str, default_port: int = THRIFT_PORT) -> tuple[str, int]:
    host, sep, port = addr.rpartition(":")
    if not sep:
        return addr, default_port
    try:
        return host.strip("[]") or "127.0.0.1", int(port)
    except ValueError:
        raise ValueError(f"Thrift address {addr!r}: expected HOST:PORT, e.g. 127.0.0.1:9090")


class BMv2Thrift:
    """A connection to BMv2's Thrift runtime (`standard` service), context 0."""

    def __init__(self, addr: str, timeout_s: float = 5.0):
        try:
            from bm_runtime.standard import Standard
            from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
            from thrift.transport import TSocket, TTransport
        except ImportError as exc:
            raise P4RuntimeError(
                f"BMv2's Thrift runtime is not importable ({exc}): run `make setup` after "
                f"installing BMv2 ({INSTALL_HINT})"
            ) from None
        from bm_runtime.standard import ttypes

        self.addr = addr
        self._ttypes = ttypes
        host, port = split_addr(addr)
        socket = TSocket.TSocket(host, port)
        socket.setTimeout(int(timeout_s * 1000))
        self._transport = TTransport.TBufferedTransport(socket)
        protocol = TMultiplexedProtocol.TMultiplexedProtocol(
            TBinaryProtocol.TBinaryProtocol(self._transport), "standard"
        )
        self.standard = Standard.Client(protocol)
        try:
            self._transport.open()
        except TTransport.TTransportException as exc:
            raise ConnectionFailed(
                f"cannot connect to BMv2's Thrift runtime at {addr} ({exc}; is simple_switch_grpc "
                f"running with --thrift-port {port}?)"
            ) from None

    def register_read(self, name: str, index: int) -> int:
        try:
            return self.standard.bm_register_read(0, name, index)
        except self._ttypes.InvalidRegisterOperation as exc:
            raise P4RuntimeError(self._describe(exc, f"register_read {name}[{index}]")) from None

    def register_write(self, name: str, index: int, value: int) -> None:
        try:
            self.standard.bm_register_write(0, name, index, value)
        except self._ttypes.InvalidRegisterOperation as exc:
            raise P4RuntimeError(self._describe(exc, f"register_write {name}[{index}]")) from None

    def _describe(self, exc, what: str) -> str:
        names = self._ttypes.RegisterOperationErrorCode._VALUES_TO_NAMES
        reason = names.get(exc.code, str(exc.code))
        return f"{what} over Thrift at {self.addr} failed: {reason}"

    def close(self) -> None:
        self._transport.close()


# -- test suites ---------------------------------------------------------------------------

SKIP_ENV = "SKIP_BMV2"  # `make test SKIP_BMV2=1`: run without BMv2, saying so loudly


def suite_targets() -> list[str]:
    """The targets the suites run on: p4sim, and BMv2 unless SKIP_BMV2=1. Without that opt-out
    a missing BMv2 fails its tests (naming what is missing), never skips them."""
    return ["p4sim"] if os.environ.get(SKIP_ENV) == "1" else ["p4sim", "bmv2"]


def skipped_note() -> str | None:
    """The loud line a suite prints at its end when BMv2 was left out, else None."""
    if os.environ.get(SKIP_ENV) != "1":
        return None
    return f"*** BMv2 NOT TESTED: {SKIP_ENV}=1 left out every test on BMv2 ***"


def require() -> None:
    """Raise naming what is missing when BMv2 cannot run here."""
    problems = missing()
    if problems:
        raise RuntimeError(
            "BMv2 is needed and missing: "
            + "; ".join(problems)
            + f". {INSTALL_HINT}; or run without BMv2: {SKIP_ENV}=1"
        )

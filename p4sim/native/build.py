"""Building the generated C with the system compiler, cached by content hash.

The shared object for a program is `<cache>/<sha256>.so`, where the hash covers the generated
source, the C runtime it includes and the compiler command; a second commit of the same
program (or a restart) loads it without compiling. The cache is `$P4SIM_NATIVE_CACHE`, else
`$XDG_CACHE_HOME/p4sim/native`, else `~/.cache/p4sim/native`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
RUNTIME_FILES = ("outbuf.h", "runtime.h", "pipeline.c", "api.c")
# The project's AF_PACKET library (clib/pktio), compiled into the packet I/O and trafgen.
PKTIO_DIR = HERE.parent.parent / "clib" / "pktio"
PKTIO_SOURCES = (
    PKTIO_DIR / "pktio.h",
    PKTIO_DIR / "pktio.c",
    PKTIO_DIR / "pktio_xsk.h",
    PKTIO_DIR / "pktio_xsk.c",
)
# pktio_xsk's libraries (AF_XDP sockets and their XDP program)
PKTIO_LIBS = ("-lxdp", "-lbpf")
# -fwrapv: int<W> arithmetic wraps (P4 semantics), never undefined behaviour
CFLAGS = [
    "-O2",
    "-fPIC",
    "-shared",
    "-std=gnu11",
    "-fwrapv",
    "-fno-strict-aliasing",
    "-w",
    "-pthread",
]


class BuildError(Exception):
    """The C compiler is missing or rejected the generated source."""


def cache_dir() -> Path:
    env = os.environ.get("P4SIM_NATIVE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "p4sim" / "native"


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise BuildError("no C compiler found (install gcc, or set CC)")
    return cc


def build_io() -> Path:
    """The packet I/O library (io.c), the same for every program."""
    return build((HERE / "io.c").read_text(), runtime=("outbuf.h",), pktio=True)


def build_iobench(src_dir: Path = HERE) -> Path:
    """The in-memory data path benchmark (iobench.c) around the io.c of `src_dir`."""
    return build(
        (HERE / "iobench.c").read_text(),
        runtime=("io.c", "outbuf.h"),
        pktio=True,
        src_dir=src_dir,
    )


def build_trafgen() -> Path:
    """The benchmark's raw I/O ceiling, `trafgen fwd` (trafgen.c, which includes io.c)."""
    return build(
        (HERE / "trafgen.c").read_text(), runtime=("io.c", "outbuf.h"), executable=True, pktio=True
    )


def build(
    source: str,
    runtime=RUNTIME_FILES,
    executable: bool = False,
    pktio: bool = False,
    src_dir: Path = HERE,
    cc: str | None = None,
    flags: list[str] | None = None,
) -> Path:
    """The path of the shared object for `source` (compiled now unless cached); with `pktio`,
    clib/pktio is compiled in. The C runtime files `source` includes come from `src_dir`
    (another checkout's for the I/O benchmark's baseline; a file it lacks is not hashed, and
    the compiler says so if it was needed). `cc` and `flags` replace the system compiler and
    CFLAGS (the fuzzer's clang with sanitizers, p4sim/native/fuzz.py)."""
    cc = cc or compiler()
    h = hashlib.sha256()
    h.update(source.encode())
    for name in runtime:
        if (src_dir / name).is_file():
            h.update((src_dir / name).read_bytes())
    if pktio:
        missing = [str(f) for f in PKTIO_SOURCES if not f.is_file()]
        if missing:
            raise BuildError(
                f"clib/pktio is missing ({', '.join(missing)}): a full checkout has it"
            )
        for path in PKTIO_SOURCES:
            h.update(path.read_bytes())
    extra = (
        [f"-I{PKTIO_DIR}", str(PKTIO_DIR / "pktio.c"), str(PKTIO_DIR / "pktio_xsk.c"), *PKTIO_LIBS]
        if pktio
        else []
    )
    flags = [f for f in flags or CFLAGS if not (executable and f in ("-shared", "-fPIC"))]
    h.update(" ".join([cc] + flags).encode())
    digest = h.hexdigest()[:32]
    out_dir = cache_dir()
    target = out_dir / (f"{digest}.bin" if executable else f"{digest}.so")
    if target.exists():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="p4sim-native-") as tmp:
        src = Path(tmp) / "program.c"
        src.write_text(source)
        obj = Path(tmp) / "program.so"
        cmd = [cc, *flags, f"-I{src_dir}", "-o", str(obj), str(src), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            (out_dir / f"{digest}.failed.c").write_text(source)
            first = (proc.stderr.strip().splitlines() or ["(no output)"])[:5]
            raise BuildError(
                f"{cc} failed on the generated C (kept as {out_dir / (digest + '.failed.c')}): "
                + " | ".join(first)
            )
        # Atomic: another process may build the same program at the same time.
        fd, part = tempfile.mkstemp(dir=out_dir, suffix=".part")
        os.close(fd)
        shutil.copyfile(obj, part)
        os.chmod(part, 0o755)
        os.replace(part, target)
    return target

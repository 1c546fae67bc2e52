"""The real Tofino compiler for p4sim's TNA tests, with its outputs cached in build/.

`compile_tna(program, chip)` runs `p4c --target tofino --arch tna` (or tofino2/t2na) with
`--p4runtime-force-std-externs` once per content: the cache key covers the compiler
command, the program and the files it includes with `#include "..."`, so an edit
recompiles and an unchanged program costs nothing (a compile takes seconds). Only the
P4Info and the compiler's log are kept.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "p4sim-tofino"
CHIPS = {"tofino": "tna", "tofino2": "t2na"}


@dataclass
class TofinoCompile:
    accepted: bool
    p4info: Path  # the P4Info text, when accepted
    log: str  # the compiler's stdout and stderr


def p4c() -> str:
    found = shutil.which("p4c") or "/opt/p4tools/bin/p4c"
    assert Path(found).exists(), "p4c is not installed: make setup installs /opt/p4tools"
    return found


_LOCAL_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def _sources(program: Path) -> list[Path]:
    """The program and every file it includes with `#include "..."`, transitively (the
    system includes, <tna.p4> and the like, come with the compiler)."""
    found: list[Path] = []
    pending = [program.resolve()]
    while pending:
        path = pending.pop()
        if path in found or not path.is_file():
            continue
        found.append(path)
        for name in _LOCAL_INCLUDE.findall(path.read_bytes()):
            pending.append((path.parent / name.decode()).resolve())
    return found


def _key(command: list[str], program: Path) -> str:
    digest = hashlib.sha256("\0".join(command).encode())
    for path in _sources(program):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compile_tna(program: Path, chip: str = "tofino", defines: dict | None = None) -> TofinoCompile:
    """Compile `program` for `chip` (tofino or tofino2) with the real back end, or return the
    cached result of the same compile."""
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    command = [p4c(), "--target", chip, "--arch", CHIPS[chip], "--p4runtime-force-std-externs"]
    command += flags
    out = CACHE / f"{program.stem}.{chip}.{_key(command, program)}"
    if not (out / "log.txt").is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=CACHE, prefix=".compiling-"))
        proc = subprocess.run(
            command
            + ["--p4runtime-files", str(work / "p4info.txtpb"), "-o", str(work), str(program)],
            capture_output=True,
            text=True,
            check=False,
        )
        status = "accepted" if proc.returncode == 0 else "rejected"
        (work / "log.txt").write_text(f"{status}\n{proc.stdout}{proc.stderr}")
        for produced in work.iterdir():  # keep the P4Info and the log, not the binaries
            if produced.name not in ("p4info.txtpb", "log.txt"):
                shutil.rmtree(produced) if produced.is_dir() else produced.unlink()
        if not (out / "log.txt").is_file():
            shutil.rmtree(out, ignore_errors=True)
        try:
            work.rename(out)  # whole or not at all, for a run that stops half-way
        except OSError:  # a parallel test (pytest -n) finished the same compile first
            shutil.rmtree(work)
    status, _, log = (out / "log.txt").read_text().partition("\n")
    return TofinoCompile(status == "accepted", out / "p4info.txtpb", log)

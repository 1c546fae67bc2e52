"""The real P4 tools (p4c, BMv2) for `make setup`:

    .venv/bin/python tools/p4tools.py link .venv   # make BMv2's bm_runtime importable in .venv
    .venv/bin/python tools/p4tools.py check        # say what is there; with REQUIRE_P4TOOLS=1,
                                                   # exit 1 naming what is missing

The tools come from the p4tools bundle (tools/setup.sh installs it when P4TOOLS_BUNDLE names
its folder) or from p4lang's packages on PATH; either way they are found on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from controlplane import bmv2


def link(venv: Path) -> int:
    linked = bmv2.link_runtime(venv)
    if linked is not None:
        print(f"setup: BMv2's Thrift runtime: {linked} -> {linked.resolve()}")
    return 0


def version(tool: str) -> str:
    proc = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[-1] if lines else "?"


def check() -> int:
    missing = bmv2.missing()
    if not missing:
        for tool in bmv2.TOOLS:
            print(f"setup: {tool}: {shutil.which(tool)} ({version(tool)})")
        return 0
    listed = "\n  ".join(missing)
    if os.environ.get("REQUIRE_P4TOOLS") == "1":
        print(
            f"setup: REQUIRE_P4TOOLS=1 but the real P4 tools are missing:\n  {listed}\n"
            f"  {bmv2.INSTALL_HINT}",
            file=sys.stderr,
        )
        return 1
    print(
        f"setup: WARNING: the real P4 tools are missing, so the BMv2 parts of `make test` will "
        f"fail (or not run, with SKIP_BMV2=1):\n  {listed}\n  {bmv2.INSTALL_HINT}",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["link"] and len(argv) == 2:
        return link(Path(argv[1]))
    if argv == ["check"]:
        return check()
    sys.exit("usage: p4tools.py link VENV | p4tools.py check")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""clib/pktgen's command line, for the Python that starts it (linkem's tests and benchmarks,
p4sim's switch benchmark, ratebench): where `make pktgen-build` puts it, and its argv from
keyword options, the usage of each mode being in pktgen.c's header."""

from __future__ import annotations

from pathlib import Path

PKTGEN = Path(__file__).resolve().parents[1] / "build" / "clib" / "pktgen"


def pktgen_argv(mode: str, ifname: str, **options) -> list[str]:
    """`pktgen MODE -i IFNAME --key=value ...`; a keyword's underscores become dashes
    (`duration_s=2` is `--duration-s=2`)."""
    return [str(PKTGEN), mode, "-i", ifname] + [
        f"--{key.replace('_', '-')}={value}" for key, value in options.items()
    ]

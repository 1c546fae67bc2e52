"""The native switch's data path in memory: its own CPU per frame, before/after in one run.

    python -m p4sim.iobench [--frames 200000] [--frame-size 1500] [--repeats 5] [--warm]
                            [--baseline REV]

io.c's loop as the switch runs it (TPACKET_V2 receive ring, the splitter's C pipeline in DC
split, sendmmsg batches to its two legs), with the kernel's side played in memory
(p4sim/native/iobench.c): no socket, interface or traffic, so it needs no root and disturbs no
other measurement. Frames reach the ring out of the switch core's caches, as the kernel's
receive on another CPU leaves them (--warm: left cached, the lower bound). It counts the user-space CPU time per frame (thread CPU
time, the kernel's stand-ins taken out), the part of the switch's cost that its own code
decides; the kernel's share (system calls, the next hop's receive) is the veth benchmark's
(`make p4sim-bench`).

With --baseline REV, the C runtime of git revision REV (p4sim/native's C files, read with
`git show`) is built as well and measured in the same run, the two interleaved repeat by
repeat, and printed side by side.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from dccommon.cliargs import int_range
from p4sim.bench import DSTS, _frame, splitter_device
from p4sim.native.build import HERE as NATIVE_DIR
from p4sim.native.build import build_iobench
from p4sim.tool import ToolError, run

ROOT = Path(__file__).resolve().parent.parent
PROG = "python -m p4sim.iobench"


class Variant:
    """One C runtime (this checkout's or a revision's): the splitter built on it, and the
    benchmark built around its io.c."""

    def __init__(self, name: str, runtime_dir: Path) -> None:
        self.name = name
        self.device = splitter_device(runtime_dir=runtime_dir)
        lib = self.device.lib
        # the entry point io.c takes: p4n_process_into since io.c sends from the pipeline's
        # output buffer, p4n_process before
        entry = "p4n_process_into" if hasattr(lib, "p4n_process_into") else "p4n_process"
        self.fns = [ctypes.cast(getattr(lib, n), ctypes.c_void_p)
                    for n in (entry, "p4n_lock", "p4n_unlock")]  # fmt: skip
        self.bench = ctypes.CDLL(str(build_iobench(runtime_dir))).p4nio_bench
        self.bench.restype = ctypes.c_int
        self.bench.argtypes = [ctypes.c_void_p] * 4 + [
            ctypes.c_char_p,  # the frames, one after the other
            ctypes.POINTER(ctypes.c_uint32),  # their lengths
            ctypes.c_uint32,
            ctypes.c_uint64,
            ctypes.c_int,
            ctypes.c_uint32,
            ctypes.c_void_p,
        ]
        self.user_ns: list[float] = []  # per frame, one per repeat
        self.send_copy_ns: list[float] = []

    def run(self, frames: list[bytes], n: int, cold: bool = True, send_limit: int = 2**32 - 1):
        """`n` frames into port 0, `frames` in turn; frames out longer than `send_limit`
        refused as by an interface's MTU. The counts and times iobench.c reports."""
        out = (ctypes.c_uint64 * 11)()
        lens = (ctypes.c_uint32 * len(frames))(*map(len, frames))
        r = self.bench(*self.fns, self.device.ctx, b"".join(frames), lens, len(frames), n,
                       int(cold), send_limit, out)  # fmt: skip
        if r < 0:
            raise ToolError(f"{self.name}: the in-memory ports failed (errno {-r})")
        return {
            "rx": out[0],
            "tx": out[1],
            "tx_dropped": out[2],
            "user_ns": out[3],
            "send_copy_ns": out[4],
            # (frames, bytes, digest of the frames in order) per leg
            "sent": {1: tuple(out[5:8]), 2: tuple(out[8:11])},
        }

    def measure(self, frame: bytes, n: int, cold: bool = True) -> None:
        res = self.run([frame], n, cold)
        if res["rx"] != n or res["tx"] != n:
            raise ToolError(f"{self.name}: {res['rx']} frames in, {res['tx']} out of {n}: "
                            "the splitter should send each frame to one leg")  # fmt: skip
        self.user_ns.append(res["user_ns"] / n)
        self.send_copy_ns.append(res["send_copy_ns"] / n)


FNV_OFFSET, FNV_PRIME, M64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def frames_digest(frames) -> int:
    """iobench.c's digest of the frames a port sent, in order (FNV-1a over each frame's
    length and its bytes, 8 at a time)."""
    h = FNV_OFFSET
    for f in frames:
        h = ((h ^ len(f)) * FNV_PRIME) & M64
        for i in range(0, len(f), 8):
            h = ((h ^ int.from_bytes(f[i : i + 8], "little")) * FNV_PRIME) & M64
    return h


def revision_runtime(rev: str, into: Path) -> Path:
    """p4sim/native's C files at git revision `rev`, written into `into`."""
    where = "p4sim/native"

    def git(*args: str) -> str:
        try:
            proc = subprocess.run(
                ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
            )
        except FileNotFoundError:
            raise ToolError(f"--baseline {rev}: git is not installed", exit_code=2) from None
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["git failed"])[0]
            raise ToolError(f"--baseline {rev}: {first}", exit_code=2)
        return proc.stdout

    names = [n for n in git("ls-tree", "--name-only", f"{rev}:{where}").split()
             if n.endswith((".c", ".h"))]  # fmt: skip
    for name in names:
        (into / name).write_text(git("show", f"{rev}:{where}/{name}"))
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frames", type=int_range(1000, 10**8, "--frames"), default=200_000,
                        help="frames per repeat (default 200000)")  # fmt: skip
    parser.add_argument("--frame-size", type=int_range(64, 1500, "--frame-size"), default=1500,
                        help="bytes per frame, 64..1500 (default 1500)")  # fmt: skip
    parser.add_argument("--repeats", type=int_range(1, 100, "--repeats"), default=5,
                        help="measurements per variant, interleaved (default 5)")  # fmt: skip
    parser.add_argument("--warm", action="store_true",
                        help="frames stay in the core's caches (the lower bound: no kernel "
                        "writes them from another CPU)")  # fmt: skip
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure the C runtime of this git revision")  # fmt: skip
    args = parser.parse_args(argv)
    frame = _frame(args.frame_size, DSTS["dc-split"])
    with tempfile.TemporaryDirectory(prefix="p4sim-iobench-") as tmp:
        variants = []
        if args.baseline:
            base_dir = revision_runtime(args.baseline, Path(tmp))
            variants.append(Variant(f"baseline {args.baseline}", base_dir))
        variants.append(Variant("this checkout", NATIVE_DIR))
        for _ in range(args.repeats):
            for v in variants:
                v.measure(frame, args.frames, cold=not args.warm)
    where = "in the core's caches (--warm)" if args.warm else "out of the core's caches"
    print(f"native switch data path in memory: splitter DC split, {args.frame_size}-byte frames "
          f"reaching the ring {where}, "
          f"{args.frames:,} frames x {args.repeats} repeats; user-space CPU per frame "
          "(thread CPU time; io.c and the pipeline, the kernel's work not included)")  # fmt: skip
    print(f"{'variant':<24}{'median ns':>11}{'min ns':>9}{'max ns':>9}{'send copy ns':>14}")
    for v in variants:
        t = v.user_ns
        print(f"{v.name:<24}{statistics.median(t):>11.0f}{min(t):>9.0f}{max(t):>9.0f}"
              f"{statistics.median(v.send_copy_ns):>14.0f}")  # fmt: skip
    print(
        "(send copy: the kernel's copy out of the transmit batches, played in user space, "
        "not in the figures before it)"
    )
    if len(variants) == 2:
        before, after = (statistics.median(v.user_ns) for v in variants)
        print(f"this checkout / baseline: {after / before:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(run(PROG, main))

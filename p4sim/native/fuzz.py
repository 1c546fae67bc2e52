"""libFuzzer on the native engine's generated C: arbitrary frames on arbitrary ports.

    python -m p4sim.native.fuzz [--seconds-each 10] [--seed 1] [--targets splitter|all]
                                [--out build/p4sim-fuzz] [TARGET ...]

Each target is a P4 program with its control-plane setup: the splitter's three profiles
(p4src/dc_splitter.p4 as `make p4` compiles them) with the entries of p4sim/tests/stf/
dc_splitter.stf and more, and p4c's v1model samples that stress parsing (header stacks and
unions, advance, lookahead, verify, checksums, truncate, clone, resubmit, recirculate) with
the entries of their STF files, and the programs of p4sim/tests/stf (stf-NAME) with theirs.
For each, a NativeDevice is built and its entries installed through the ordinary control
plane while every call into the C API is recorded (device.CallRecorder); the generated C,
those calls replayed as C (fuzz_setup) and the harness fuzz_native.c are compiled with
`clang -fsanitize=fuzzer,address,undefined` (through build.py, cached) and run: two bytes
of ingress port, then a frame of 0 to 16 KiB.
The *_io targets use fuzz_io.c instead: io.c's own loop around the pipeline (batches, the
output buffer, transmit batches refused past a length, up-calls), with iobench.c's
stand-ins for the kernel; an input is a settings byte and length-prefixed frames. An input
that makes the generated code read or write out of bounds, leak, or run into undefined
behaviour stops the run; libFuzzer keeps it as <out>/<target>/crash-*, and it belongs in
p4sim/tests/fuzz_native_seeds/<target>/ once its cause is fixed (every file there is run as
a seed on each run, so the bug stays found). The STF file's `packet` lines are seeds too.
Without TARGET names, `--targets splitter` (the default, `make p4sim-fuzz-native`) fuzzes
the splitter's profiles and the samples that have kept seeds; `--targets all` every target.

Exit status 1 when any target crashed (naming the input), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dccommon.cliargs import int_range, make_output_dir
from p4sim.conformance.stf import parse_script
from p4sim.frontend import compile_file
from p4sim.native.build import HERE, BuildError, build
from p4sim.native.codegen import Unsupported
from p4sim.native.device import NativeDevice
from p4sim.stf import StfRunner

PROG = "python -m p4sim.native.fuzz"
ROOT = HERE.parent.parent
SEEDS = ROOT / "p4sim" / "tests" / "fuzz_native_seeds"
SAMPLES = Path(os.environ.get("P4C_SAMPLES", "/opt/p4tools/p4c-testdata/p4_16_samples"))
MAX_FRAME = 16 * 1024
# -D_GNU_SOURCE: io.c asks for it, but after the generated program's system headers
FUZZ_FLAGS = ["-O1", "-g", "-std=gnu11", "-D_GNU_SOURCE", "-fwrapv", "-fno-strict-aliasing",
              "-w", "-pthread", "-fsanitize=fuzzer,address,undefined",
              "-fno-sanitize-recover=undefined"]  # fmt: skip
SPLITTER = ROOT / "p4src" / "dc_splitter.p4"
SPLITTER_STF = ROOT / "p4sim" / "tests" / "stf" / "dc_splitter.stf"
# Beyond dc_splitter.stf: an IPv6 user, a user index past the registers' 1024 cells (the
# control plane admits any bit<16>), egress MACs, and the adaptive profile's credit split.
SPLITTER_SETUP = """
add ue_sessions_v6 ue_addr:0x20010db8000000000000000000000002 split_dc(user_idx:1023, session:9, batch:65535, leg_a_count:0, leg_a_port:1, leg_b_port:511)
add ue_sessions_v4 ue_addr:10.0.0.9 split_dc(user_idx:65535, session:4294967295, batch:0, leg_a_count:65535, leg_a_port:2, leg_b_port:1)
add egress_macs egress_port:1 set_macs(src_mac:02:00:00:00:01:01, dst_mac:02:00:00:00:01:02)
add egress_macs egress_port:2 set_src_mac(src_mac:02:00:00:00:02:01)
clone_session 5 3 64
"""
ADAPTIVE_SETUP = """
add ue_sessions_v4 ue_addr:10.0.0.5 split_credit(user_idx:6, session:10, batch:4, leg_a_count:2, leg_a_port:1, leg_b_port:2)
add feedback_users ingress_port:1 ue_addr:10.0.0.5 credit_leg(user_idx:6, leg:0)
add feedback_users ingress_port:2 ue_addr:10.0.0.5 credit_leg(user_idx:6, leg:1)
add feedback_users ingress_port:2 ue_addr:10.0.0.9 credit_leg(user_idx:65535, leg:1)
"""
# p4c's v1model samples whose parsers or traffic manager paths the splitter does not reach
SAMPLE_NAMES = (
    "header-stack-ops-bmv2", "runtime-index-2-bmv2", "test-parserinvalidargument-error-bmv2",
    "gauntlet_index_1-bmv2", "array-copy-bmv2", "subparser-with-header-stack-bmv2",
    "issue561-1-bmv2", "issue561-7-bmv2", "union-bmv2", "header-bool-bmv2", "issue1879-bmv2",
    "issue1755-bmv2", "issue1755-1-bmv2", "issue1768-bmv2", "issue1025-bmv2",
    "checksum1-bmv2", "checksum2-bmv2", "checksum3-bmv2", "checksum-l4-bmv2", "issue1824-bmv2",
    "issue1043-bmv2", "v1model-special-ops-bmv2", "parser-unroll-test9", "issue1352-bmv2",
    "issue2303", "basic_routing-bmv2",
)  # fmt: skip


@dataclass
class Target:
    name: str
    program: Path
    defines: dict
    stf: Path | None
    setup: str = ""
    io: bool = False  # fuzz_io.c (io.c's loop around the pipeline), else fuzz_native.c


def splitter_targets() -> list[Target]:
    common = SPLITTER_SETUP
    return [
        Target("dc_splitter", SPLITTER, {}, SPLITTER_STF, common),
        Target("dc_splitter_sn12", SPLITTER, {"PDCP_SN_12": "1"}, SPLITTER_STF, common),
        Target("dc_splitter_adaptive", SPLITTER, {"DC_ADAPTIVE": "1"}, SPLITTER_STF,
               common + ADAPTIVE_SETUP),
        Target("dc_splitter_io", SPLITTER, {}, SPLITTER_STF, common, io=True),
    ]  # fmt: skip


def sample_targets() -> list[Target]:
    """p4c's samples of SAMPLE_NAMES, then the programs of p4sim/tests/stf (stf-NAME)."""
    out = []
    for name in SAMPLE_NAMES:
        p4 = SAMPLES / f"{name}.p4"
        if p4.is_file():
            stf = p4.with_suffix(".stf")
            out.append(Target(name, p4, {}, stf if stf.is_file() else None))
    for p4 in sorted(SPLITTER_STF.parent.glob("*.p4")):
        stf = p4.with_suffix(".stf")
        out.append(Target(f"stf-{p4.stem}", p4, {}, stf if stf.is_file() else None))
    return out


class _SetupRunner(StfRunner):
    """An STF runner that carries out the control-plane commands alone (no packets, checks)."""

    def command(self, cmd) -> None:
        if cmd.name in ("packet", "expect", "expect_drop") or "check" in cmd.name:
            return
        super().command(cmd)


class _Recording:
    """A compiled program whose devices are native and record their C API calls."""

    def __init__(self, program, calls: list):
        self._program, self._calls = program, calls

    def __getattr__(self, name):
        return getattr(self._program, name)

    def new_device(self, cpu_port=None, seed=None):
        return NativeDevice(self._program, cpu_port, seed, record=self._calls)


# Calls that read state or take the lock: nothing to replay.
_NOT_REPLAYED = {"p4n_lock", "p4n_unlock", "p4n_aborts", "p4n_digests", "p4n_digests_clear",
                 "p4n_reg_cells", "p4n_ctr_cells", "p4n_process", "p4n_free"}  # fmt: skip
_CTYPES_C = {ctypes.c_uint64: "uint64_t", ctypes.c_uint32: "uint32_t",
             ctypes.c_uint16: "uint16_t", ctypes.c_uint8: "uint8_t", ctypes.c_int32: "int32_t",
             ctypes.c_int64: "int64_t", ctypes.c_double: "double"}  # fmt: skip


def _c_value(value) -> str:
    if isinstance(value, ctypes.c_void_p):
        return "d"
    if isinstance(value, ctypes.Array):
        ctype = _CTYPES_C[value._type_]
        return f"({ctype}[]){{{', '.join(_c_value(v) for v in value)}}}"
    if isinstance(value, ctypes._SimpleCData):
        return _c_value(value.value)
    if type(value).__name__ == "CArgObject":  # ctypes.byref(x)
        return f"&({_CTYPES_C[type(value._obj)]}){{{_c_value(value._obj.value)}}}"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return f"{value}LL" if value < 0 else f"{value}ULL"
    if isinstance(value, float):
        return value.hex()
    raise TypeError(f"no C form for a {type(value).__name__} argument")


def setup_source(calls: list) -> str:
    """`fuzz_setup()`: the recorded calls as C, the device they built returned."""
    lines = ["static struct dev *fuzz_setup(void)", "{"]
    for name, args in calls:
        if name in _NOT_REPLAYED:
            continue
        text = f"{name}({', '.join(_c_value(a) for a in args)})"
        lines.append(f"\tstruct dev *d = {text};" if name == "p4n_new" else f"\t{text};")
    lines += ["\treturn d;", "}", ""]
    return "\n".join(lines)


def set_up(target: Target) -> tuple[NativeDevice, list]:
    """A native device of `target` with its entries installed, and the calls into its C
    library that did it (raises Unsupported when the generator does not translate it)."""
    program = compile_file(str(target.program), defines=target.defines)
    calls: list = []
    runner = _SetupRunner(_Recording(program, calls))
    text = (target.stf.read_text() if target.stf else "") + target.setup
    runner.run_text(text, str(target.stf or target.name))
    runner.device.sync_pre()  # multicast groups and clone sessions reach C on a packet
    return runner.device, calls


def harness(target: Target) -> Path:
    """The fuzzer executable of `target` (raises Unsupported when the generator does not
    translate the program, BuildError when clang fails)."""
    device, calls = set_up(target)
    main = "fuzz_io.c" if target.io else "fuzz_native.c"
    source = device.source + "\n" + setup_source(calls) + f'#include "{main}"\n'
    clang = shutil.which("clang")
    if clang is None:
        raise BuildError("clang is not installed (the fuzzer needs clang's libFuzzer)")
    runtime = ("outbuf.h", "runtime.h", "pipeline.c", "api.c", main)
    if target.io:
        runtime += ("io.c", "iobench.c")
    return build(source, runtime=runtime, executable=True, pktio=target.io, cc=clang,
                 flags=FUZZ_FLAGS)  # fmt: skip


def stf_seeds(target: Target, into: Path) -> None:
    """The STF file's `packet` lines as inputs in `into`: one each (port, then frame), or
    for an I/O target all in one (settings 0, then each frame's length and bytes)."""
    if target.stf is None:
        return
    batch = bytearray(b"\0")
    for i, cmd in enumerate(parse_script(target.stf.read_text(), str(target.stf)).commands):
        if cmd.name == "packet":
            try:
                port = int(cmd.rest[0], 0)
                frame = bytes.fromhex("".join(cmd.rest[1:]))
            except (ValueError, IndexError):
                continue
            if target.io:
                batch += len(frame).to_bytes(2, "little") + frame
            else:
                (into / f"stf-{i}").write_bytes(port.to_bytes(2, "little") + frame)
    if target.io:
        (into / "stf-all").write_bytes(bytes(batch))


def run_target(target: Target, out: Path, seconds: int, seed: int) -> bool:
    """Fuzz `target` for `seconds`; False when it crashed (the input is kept in `out`)."""
    try:
        exe = harness(target)
    except Unsupported as exc:
        print(f"{target.name}: not translated ({exc.what}): skipped")
        return True
    where = make_output_dir(out / target.name)
    corpus, stf = where / "corpus", where / "stf-seeds"
    for d in (corpus, stf):  # a run depends on its seed and the kept seeds alone
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    stf_seeds(target, stf)
    dirs = [corpus, stf] + [d for d in (SEEDS / target.name,) if d.is_dir()]
    log = where / "fuzz.log"
    cmd = [str(exe), f"-seed={seed}", f"-max_total_time={seconds}", f"-max_len={MAX_FRAME + 2}",
           "-rss_limit_mb=1024", "-timeout=10", "-print_final_stats=1",
           f"-artifact_prefix={where}/", *map(str, dirs)]  # fmt: skip
    with open(log, "w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
    text = log.read_text(errors="replace")
    if proc.returncode != 0:
        print(text[-4000:])
        crashes = sorted(str(p) for p in where.glob("*-*") if p.is_file() and
                         p.name.split("-")[0] in ("crash", "leak", "timeout", "oom"))  # fmt: skip
        print(f"{target.name}: FAILED (exit {proc.returncode}); input: {', '.join(crashes)}; "
              f"log: {log}")  # fmt: skip
        return False
    runs = [ln for ln in text.splitlines() if ln.startswith(("Done", "stat::number_of_executed"))]
    print(f"{target.name}: ok, {seconds} s: {'; '.join(runs) or 'no stats'}")
    return True


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds-each", type=int_range(1, 86400, "--seconds-each"), default=10,
                   help="libFuzzer's time per target")  # fmt: skip
    p.add_argument("--seed", type=int_range(1, 2**31 - 1, "--seed"), default=1)
    p.add_argument("--targets", choices=("splitter", "all"), default="splitter",
                   help="the splitter's profiles (and the samples with kept seeds), or those "
                   "and all of p4c's samples listed in SAMPLE_NAMES")  # fmt: skip
    p.add_argument("--out", type=Path, default=ROOT / "build" / "p4sim-fuzz")
    p.add_argument("names", nargs="*", metavar="TARGET", help="only these targets")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    known = splitter_targets() + sample_targets()
    if args.names:
        by_name = {t.name: t for t in known}
        bad = [n for n in args.names if n not in by_name]
        if bad:
            print(f"{PROG}: unknown target {', '.join(bad)} (allowed: "
                  f"{', '.join(by_name)})", file=sys.stderr)  # fmt: skip
            return 2
        targets = [by_name[n] for n in args.names]
    elif args.targets == "all":
        targets = known
    else:  # and the samples that once crashed, so their bugs stay found
        targets = splitter_targets() + [t for t in sample_targets() if (SEEDS / t.name).is_dir()]
    try:
        failed = [t.name for t in targets
                  if not run_target(t, args.out, args.seconds_each, args.seed)]  # fmt: skip
    except BuildError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    if failed:
        print(f"{PROG}: crashes in {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

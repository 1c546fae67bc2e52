"""Run the PTF suite against a P4Runtime target on veths inside a fresh network namespace.

    .venv/bin/python ptf-tests/run_ptf.py --target p4sim [--program tna] [--tests dc_split ...]

One namespace holds the switch and PTF: ports 0, 1, 2 are veth pairs `<prefix>s<i>` (switch
side) <-> `<prefix>p<i>` (PTF side), MTU 1600 for the PDCP shim. The switch (p4sim, or BMv2's
simple_switch_grpc with TARGET=bmv2) serves P4Runtime on 127.0.0.1:9559 inside the namespace
(BMv2 also its Thrift runtime on 127.0.0.1:9090, for register access),
PTF runs as root in the namespace with its cwd in the output directory (ptf.log, ptf.pcap),
and everything is torn down in `finally`, by the PIDs started. Exit status: PTF's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from controlplane import bmv2, targets
from experiments.run.netns import Namespace, unique_prefix, veth_pair

ROOT = Path(__file__).resolve().parent.parent
PORTS = (0, 1, 2)
GRPC_ADDR = "127.0.0.1:9559"
CPU_PORT = 255  # PacketIn port of the adaptive profile (CPU_PORT in p4src/include/defines.p4)
THRIFT_PORT = bmv2.THRIFT_PORT  # BMv2 only: register access (see controlplane/registers.py)
LEG_MTU = 1600  # DESIGN.md section 3: room for the 5-byte shim
# The splitter of each architecture, and the test modules it cannot run: the TNA splitter
# has no adaptive profile (p4src/README.md).
PROGRAMS = {
    "v1model": ("dc_splitter.p4", ()),
    "tna": ("dc_splitter_tna.p4", ("adaptive",)),
}


def parse_args(argv=None) -> argparse.Namespace:
    build = ROOT / "build"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--target", choices=("p4sim", "bmv2"), default="p4sim")
    p.add_argument(
        "--program",
        choices=tuple(PROGRAMS),
        default="v1model",
        help="the splitter's architecture: v1model (dc_splitter.p4) or tna (dc_splitter_tna.p4, "
        "p4sim only)",
    )
    p.add_argument(
        "--p4-dir",
        type=Path,
        default=build / "p4",
        help="where `make p4` (or `make p4c-bmv2`) put the compiled program",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=build / "ptf",
        help="PTF's working directory (ptf.log, ptf.pcap, switch log)",
    )
    p.add_argument(
        "--tests",
        nargs="*",
        default=[],
        help="PTF test specs (modules, Module.Test, groups); default: all",
    )
    return p.parse_args(argv)


def pipeline_files(args) -> dict[str, Path]:
    """The P4Info/config pairs each target needs, or exit naming what is missing."""
    d = args.p4_dir
    if args.target == "p4sim" and args.program == "tna":
        files = {
            "p4info": d / "dc_splitter_tna.p4info.txtpb",
            "config": d / "dc_splitter_tna.p4sim.json",
            "sn12_p4info": d / "dc_splitter_tna_sn12.p4info.txtpb",
            "sn12_config": d / "dc_splitter_tna_sn12.p4sim.json",
        }
    elif args.target == "p4sim":
        files = {
            "p4info": d / "dc_splitter.p4info.txtpb",
            "config": d / "dc_splitter.p4sim.json",
            "sn12_p4info": d / "dc_splitter_sn12.p4info.txtpb",
            "sn12_config": d / "dc_splitter_sn12.p4sim.json",
            "adaptive_p4info": d / "dc_splitter_adaptive.p4info.txtpb",
            "adaptive_config": d / "dc_splitter_adaptive.p4sim.json",
        }
        hint = "run `make p4` first"
    else:
        files = {
            "p4info": d / "dc_splitter.bmv2.p4info.txtpb",
            "config": d / "dc_splitter.json",
            "sn12_p4info": d / "dc_splitter_sn12.bmv2.p4info.txtpb",
            "sn12_config": d / "dc_splitter_sn12.json",
            "adaptive_p4info": d / "dc_splitter_adaptive.bmv2.p4info.txtpb",
            "adaptive_config": d / "dc_splitter_adaptive.json",
        }
        hint = "run `make p4c-bmv2` first"
    missing = [str(f) for f in files.values() if not f.is_file()]
    problems = [f"missing {', '.join(missing)}: {hint}"] if missing else []
    if args.target == "bmv2" and args.program != "v1model":
        sys.exit(f"run_ptf: TARGET=bmv2 runs v1model programs only, not PROGRAM={args.program}")
    if args.target == "bmv2":
        problems += [f"{what} is missing: {bmv2.INSTALL_HINT}" for what in bmv2.missing()]
    if problems:
        sys.exit(
            "run_ptf: TARGET="
            + args.target
            + " cannot run:\n  "
            + "\n  ".join(problems)
            + (
                "\n  (TARGET=p4sim runs the same suite on the embedded target)"
                if args.target == "bmv2"
                else ""
            )
        )
    return files


def main(argv=None) -> int:
    args = parse_args(argv)
    files = pipeline_files(args)
    args.out.mkdir(parents=True, exist_ok=True)
    prefix = unique_prefix("pt")
    switch_ifs = [f"{prefix}s{i}" for i in PORTS]
    ptf_ifs = [f"{prefix}p{i}" for i in PORTS]
    params = {"grpc_addr": GRPC_ADDR, **files}
    if args.target == "bmv2":
        params["thrift_addr"] = f"127.0.0.1:{THRIFT_PORT}"
    test_params = ";".join(["device_id=0"] + [f"{k}='{v}'" for k, v in params.items()])
    source, left_out = PROGRAMS[args.program]
    specs = args.tests or ["all", *[f"^{module}" for module in left_out]]
    with Namespace(prefix) as ns:
        ns.disable_ipv6()
        for s_if, p_if in zip(switch_ifs, ptf_ifs):
            veth_pair(s_if, ns, p_if, ns, mtu=LEG_MTU)
        log_path = args.out / f"{args.target}.log"
        with open(log_path, "w") as log:
            argv = targets.switch_argv(
                args.target,
                dict(zip(PORTS, switch_ifs)),
                GRPC_ADDR,
                cpu_port=CPU_PORT,
                program=ROOT / "p4src" / source,
            )
            switch = ns.popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=args.out)
            targets.wait_serving(switch, GRPC_ADDR, popen=ns.popen, log=log_path)
            ptf_argv = [
                str(ROOT / ".venv" / "bin" / "ptf"),
                "--test-dir",
                str(ROOT / "ptf-tests" / "tests"),
                "--test-params",
                test_params,
                "--qlen",
                "20000",
                # How long an expected frame may take: a generous bound, since a loaded
                # machine can hold a frame for seconds and waiting costs nothing when it
                # comes. (The negative timeout is how long "no other frame" is watched.)
                "--default-timeout",
                "30",
                "--default-negative-timeout",
                "0.5",
                *[a for i, name in zip(PORTS, ptf_ifs) for a in ("--interface", f"{i}@{name}")],
                *specs,
            ]
            print(
                f"run_ptf: {args.program} on {args.target} in namespace {prefix}; logs in "
                f"{args.out}",
                flush=True,
            )
            result = subprocess.run(
                ["ip", "netns", "exec", prefix, *ptf_argv], cwd=args.out, check=False
            )
            if switch.poll() is not None:
                print(
                    f"run_ptf: the switch exited during the run ({switch.returncode}); "
                    f"see {log_path}",
                    file=sys.stderr,
                )
                return 1
    if result.returncode != 0:
        print(
            f"run_ptf: PTF failed ({result.returncode}); see {args.out}/ptf.log and " f"{log_path}",
            file=sys.stderr,
        )
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())

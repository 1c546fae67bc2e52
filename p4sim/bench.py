"""Switch benchmark on veth, side by side: packets/s and added latency, one core per switch.

    python -m p4sim.bench [--duration-s 3] [--latency-samples 1000] [--targets ...] [--cases ...]

Targets: the raw veth + AF_PACKET forwarding ceiling (io.c's ring and sendmmsg forwarding
port 0 to port 1, no pipeline), BMv2 `simple_switch_grpc` (from /opt/p4tools or PATH, with
p4c-bm2-ss compiling the programs), `p4sim --engine interp` and `p4sim --engine native`.
Cases: an L2/L3 forwarding program (p4sim/tests/p4/runtime_fwd.p4) and the splitter
(p4src/dc_splitter.p4, or dc_splitter_tna.p4 with --program tna) in DC split, DC duplication
and single connectivity. Each switch runs
in a namespace with veths h0-s0, h1-s1, h2-s2, pinned to CPU 0 (taskset); the traffic
generator (clib/pktgen, C) runs on CPU 1 and measures, with 1500-byte frames by default:

- packets/s: a closed loop keeps at most --window frames in flight for --duration seconds
  (frames out / time, and the best whole second);
- flood: an open loop sends as fast as it can; what comes out is the rate under overload;
- p50/p99: one frame every millisecond (1,000 packets/s), send to first copy received, the
  AF_PACKET path in and out included; --latency-samples frames.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from dccommon.cliargs import ArgumentParser, add_old_name, float_range, int_range
from dccommon.pktgen import PKTGEN
from p4sim.tool import ToolError, run

ROOT = Path(__file__).resolve().parent.parent
FWD_PROGRAM = Path(__file__).parent / "tests" / "p4" / "runtime_fwd.p4"
SPLITTER_PROGRAM = ROOT / "p4src" / "dc_splitter.p4"
# --program: the splitter measured (the TNA one runs on p4sim only)
SPLITTER_PROGRAMS = {"v1model": SPLITTER_PROGRAM, "tna": ROOT / "p4src" / "dc_splitter_tna.p4"}
GOAL_SPLITTER_PPS = 300_000  # native engine, DC split (issue 12)
P4SIM_CPU, TRAFFIC_CPU = 0, 1


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def _frame(size: int, dst_ip: str, dst_mac: str = "02:00:00:00:00:02") -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    head = (
        Ether(dst=dst_mac, src="02:00:00:00:00:01")
        / IP(src="10.0.0.1", dst=dst_ip)
        / UDP(sport=4433, dport=4433)
    )
    return bytes(head) + bytes(size - len(head))


class _EntryWriter:
    """Installs benchmark entries by name; subclasses say where the Update goes."""

    p4info = None

    def _find(self, kind: str, suffix: str):
        for obj in getattr(self.p4info, kind):
            if obj.preamble.name == suffix or obj.preamble.name.endswith("." + suffix):
                return obj
        raise LookupError(f"no {kind[:-1]} named *{suffix} in the P4Info")

    def insert(
        self, table: str, match: dict[str, tuple], action: str, params: dict[str, int]
    ) -> None:
        from p4.v1 import p4runtime_pb2

        t = self._find("tables", table)
        a = self._find("actions", action)
        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        entry = update.entity.table_entry
        entry.table_id = t.preamble.id
        fields = {m.name: m for m in t.match_fields}
        for name, value in match.items():
            m = entry.match.add(field_id=fields[name].id)
            nbytes = (fields[name].bitwidth + 7) // 8
            if len(value) == 2:  # (value, prefix_len)
                m.lpm.value, m.lpm.prefix_len = value[0].to_bytes(nbytes, "big"), value[1]
            else:
                m.exact.value = value[0].to_bytes(nbytes, "big")
        entry.action.action.action_id = a.preamble.id
        for p in a.params:
            entry.action.action.params.add(
                param_id=p.id, value=params.get(p.name, 0).to_bytes((p.bitwidth + 7) // 8, "big")
            )
        self._apply(update)

    def multicast_group(self, group: int, ports: list[int]) -> None:
        from p4.v1 import p4runtime_pb2

        update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        g = update.entity.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = group
        for port in ports:
            g.replicas.add(egress_port=port, instance=0)
        self._apply(update)

    def _apply(self, update) -> None:
        raise NotImplementedError


class _Client(_EntryWriter):
    """A P4Runtime session as primary that writes the bench's entries."""

    def __init__(self, address: str, push: tuple[Path, Path] | None = None) -> None:
        from p4.v1 import p4runtime_pb2

        from p4sim.p4runtime.primary import PrimarySession

        self.session = PrimarySession(address, ready_timeout_s=120)
        self.stub = self.session.stub
        if push is not None:  # BMv2 starts without a program (--no-p4)
            _push(self, *push)
            return
        self.p4info = self.stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=10
        ).config.p4info

    def _apply(self, update) -> None:
        self.session.write(update)

    def close(self) -> None:
        self.session.close()


def _fwd_entries(client: _EntryWriter) -> None:
    client.insert(
        "ipv4_lpm", {"ipv4_dst": (0x0A000100, 24)}, "route", {"port": 1, "next_hop": 0x020000000102}
    )
    client.insert("l2_fwd", {"dst_mac": (0x020000000102,)}, "forward", {"port": 1})


def _splitter_entries(client: _EntryWriter) -> None:
    client.insert(
        "ue_sessions_v4",
        {"ue_addr": (0x0A000102,)},
        "split_dc",
        {"user_idx": 0, "batch": 4, "leg_a_count": 2, "leg_a_port": 1, "leg_b_port": 2},
    )


TARGETS = ("ceiling", "bmv2", "interp", "native")
CASES = ("fwd", "dc-split", "dc-dup", "sc")
CASE_NAMES = {
    "fwd": "L2/L3 forwarding",
    "dc-split": "splitter DC split",
    "dc-dup": "splitter DC dup",
    "sc": "splitter SC",
}
DSTS = {"fwd": "10.0.1.2", "dc-split": "10.0.1.2", "dc-dup": "10.0.1.3", "sc": "10.0.1.4"}


def _all_splitter_entries(client: _EntryWriter) -> None:
    _splitter_entries(client)
    client.insert("ue_sessions_v4", {"ue_addr": (0x0A000103,)}, "duplicate_dc",
                  {"user_idx": 1, "mcast_grp": 1})  # fmt: skip
    client.insert("ue_sessions_v4", {"ue_addr": (0x0A000104,)}, "forward_sc",
                  {"user_idx": 2, "port": 1})  # fmt: skip
    client.multicast_group(1, [1, 2])


def _p4c(program: Path, out_dir: Path) -> tuple[Path, Path]:
    """(P4Info text, BMv2 JSON) of `program`, compiled with p4c-bm2-ss."""
    import shutil
    import subprocess

    p4c = shutil.which("p4c-bm2-ss", path="/opt/p4tools/bin:" + os.environ.get("PATH", ""))
    if p4c is None:
        raise RuntimeError("p4c-bm2-ss not found (/opt/p4tools/bin or PATH)")
    info, js = out_dir / f"{program.stem}.p4info.txtpb", out_dir / f"{program.stem}.json"
    proc = subprocess.run(
        [p4c, "--p4runtime-files", str(info), "-o", str(js), str(program)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"p4c-bm2-ss {program.name}: {proc.stderr.strip()[-300:]}")
    return info, js


def _push(client: _Client, info: Path, js: Path) -> None:
    from google.protobuf import text_format
    from p4.v1 import p4runtime_pb2

    req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
    req.election_id.low = 1
    req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
    text_format.Parse(info.read_text(), req.config.p4info)
    req.config.p4_device_config = js.read_bytes()
    client.stub.SetForwardingPipelineConfig(req, timeout=60)
    client.p4info = req.config.p4info


def _pinned(cpu: int) -> list[str]:
    return ["taskset", "-c", str(cpu)] if len(os.sched_getaffinity(0)) > 1 else []


def _pktgen(ns, mode: str, hexf: str, timeout: float, **opts) -> dict:
    """clib/pktgen's `mode` from h0 to h1 and h2 (the legs), frame `hexf`."""
    if not PKTGEN.exists():
        raise RuntimeError(f"{PKTGEN} is missing: run `make pktgen-build`")
    argv = [str(PKTGEN), mode, "-i", "h0", "--rx", "h1,h2", "--frame", hexf]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]
    return json.loads(ns.run(_pinned(TRAFFIC_CPU) + argv, timeout=timeout).stdout)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(ns, case: str, frame: bytes, args, pid: int) -> dict:
    copies = 2 if case == "dc-dup" else 1
    hexf = frame.hex()
    cpu0 = _cpu_seconds(pid)
    rate = _pktgen(ns, "rate", hexf, args.duration + 60, duration_s=args.duration,
                   window=args.window, copies=copies)  # fmt: skip
    cpu = _cpu_seconds(pid) - cpu0
    flood = _pktgen(ns, "flood", hexf, 60, duration_s=min(args.duration, 2.0))
    lat = _pktgen(ns, "latency", hexf, args.latency_samples / 1000 + 60, pps=1000,
                  count=args.latency_samples)  # fmt: skip
    return {
        "rate_pps": rate["received"] / copies / rate["elapsed_s"],
        "best_second_pps": rate["best_second"] / copies,
        # frames per second of the switch's own CPU time: what one free core would carry
        "per_cpu_s": rate["received"] / copies / cpu if cpu > 0 else float("nan"),
        "flood_pps": flood["received"] / flood["elapsed_s"],
        "p50_us": lat["p50_us"],
        "p99_us": lat["p99_us"],
        "lost_probes": lat["sent"] - lat["received"],
    }


@contextmanager
def running_switch(
    ns, target: str, program: Path, tmp: str, bmv2_files=None, pythonpath=None, options=()
):
    """`target` on `program` in namespace `ns` (ports 0-2 on s0-s2), pinned to P4SIM_CPU,
    with the entries of p4sim's cases; yields (process, seconds until it took a pipeline).
    `pythonpath`: run the p4sim of that source tree instead of this one (a baseline);
    `options`: more p4sim options (e.g. --io afxdp)."""
    import subprocess

    sock = f"unix:{tmp}/p4rt.sock"
    log_path = Path(tmp) / "switch.log"
    ifaces = ["-i", "0@s0", "-i", "1@s1", "-i", "2@s2"]
    env = None
    if target == "ceiling":
        from p4sim.native.build import build_trafgen

        argv = [str(build_trafgen()), "fwd", "s0", "s1", "100000"]
    elif target == "bmv2":
        import shutil

        ssg = shutil.which(
            "simple_switch_grpc", path="/opt/p4tools/bin:" + os.environ.get("PATH", "")
        )
        if ssg is None:
            raise RuntimeError("simple_switch_grpc not found (/opt/p4tools/bin or PATH)")
        argv = [ssg, "--no-p4", *ifaces, "--", "--grpc-server-addr", sock]
    else:
        p4sim = [str(Path(sys.executable).parent / "p4sim")]
        if pythonpath is not None:
            env = {**os.environ, "PYTHONPATH": str(pythonpath)}  # and cwd: `-c` puts it first
            p4sim = [
                sys.executable,
                "-c",
                "import sys; from p4sim.cli import main; sys.exit(main())",
            ]
        argv = [*p4sim, str(program), *ifaces, "--grpc-server-addr", sock, "--log-level",
                "warn", "--engine", target, *options]  # fmt: skip
    with open(log_path, "w") as log:
        started = time.perf_counter()
        proc = ns.popen(_pinned(P4SIM_CPU) + argv, stdout=log, stderr=subprocess.STDOUT,
                        env=env, cwd=pythonpath)  # fmt: skip
    try:
        ready_s = None
        if target != "ceiling":
            try:
                client = _Client(sock, push=bmv2_files)
            except Exception as exc:  # noqa: BLE001 - report why this target did not run
                proc.poll()
                detail = log_path.read_text().strip()[-600:] or str(exc)
                raise RuntimeError(f"{target} did not come up: {detail}") from None
            ready_s = time.perf_counter() - started
            try:
                (_fwd_entries if program == FWD_PROGRAM else _all_splitter_entries)(client)
            finally:
                client.close()
        else:
            time.sleep(0.5)
        yield proc, ready_s
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def switch_namespace(prefix: str):
    """A namespace with the veth pairs h0-s0, h1-s1, h2-s2 (hosts h*, switch ports s*)."""
    from experiments.run.netns import Namespace, veth_pair

    with Namespace(f"{prefix}ns") as ns:
        for i in range(3):
            veth_pair(f"h{i}", ns, f"s{i}", ns, mtu=1600)
        ns.disable_ipv6()
        yield ns


def run_target(target: str, program: Path, cases: list[str], args, bmv2_files=None) -> dict:
    """Start `target` on `program` in a fresh namespace; measure each case."""
    from experiments.run.netns import unique_prefix

    results = {}
    with (
        tempfile.TemporaryDirectory(prefix="p4sim-bench-") as tmp,
        switch_namespace(unique_prefix("p4b")) as ns,
    ):
        with running_switch(ns, target, program, tmp, bmv2_files) as (proc, ready_s):
            if ready_s is not None:
                results["ready_s"] = ready_s
            for case in cases:
                results[case] = _measure(
                    ns, case, _frame(args.frame_size, DSTS[case]), args, proc.pid
                )
        log = (Path(tmp) / "switch.log").read_text()
        if target == "native" and "native engine:" in log:
            results["note"] = log.strip().splitlines()[-1]
    return results


def commit_time(program: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) from program text to a running native device, C build
    included (a cold build: the cache is a fresh directory). CPU time does not depend on
    what else runs on the machine."""
    import resource

    from p4sim import frontend
    from p4sim.native import new_device

    saved = os.environ.get("P4SIM_NATIVE_CACHE")
    with tempfile.TemporaryDirectory(prefix="p4sim-native-cache-") as cache:
        os.environ["P4SIM_NATIVE_CACHE"] = cache
        try:

            def cpu() -> float:
                own = resource.getrusage(resource.RUSAGE_SELF)
                kids = resource.getrusage(resource.RUSAGE_CHILDREN)
                return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

            start, cpu0 = time.perf_counter(), cpu()
            device = new_device(frontend.compile_file(str(program)), engine="native")
            elapsed, cpu_s = time.perf_counter() - start, cpu() - cpu0
        finally:
            if saved is None:
                os.environ.pop("P4SIM_NATIVE_CACHE", None)
            else:
                os.environ["P4SIM_NATIVE_CACHE"] = saved
    if getattr(device, "engine", "") != "native":
        raise RuntimeError(f"fell back to the interpreter: {device.fallback_reason}")
    return elapsed, cpu_s


def splitter_device(program: Path = SPLITTER_PROGRAM, runtime_dir: Path | None = None):
    """A native device of the splitter with one user in DC split (DSTS["dc-split"], legs on
    ports 1 and 2); its C runtime from `runtime_dir` (default this checkout's)."""
    from p4sim import frontend
    from p4sim.model import FieldMatch, TableEntry
    from p4sim.native.device import RUNTIME_DIR, NativeDevice

    compiled = frontend.compile_file(str(program))
    if compiled.model.arch != "v1model":
        raise RuntimeError(f"the native engine runs v1model programs, not {compiled.model.arch}")
    device = NativeDevice(compiled, runtime_dir=runtime_dir or RUNTIME_DIR)
    args = {"user_idx": 0, "session": 0, "batch": 4, "leg_a_count": 2, "leg_a_port": 1,
            "leg_b_port": 2}  # fmt: skip
    device.tables["DcIngress.ue_sessions.ue_sessions_v4"].insert(
        TableEntry(
            {"ue_addr": FieldMatch("exact", 0x0A000102)}, "DcIngress.ue_sessions.split_dc", args
        )
    )
    return device


def native_engine_only(
    frame_size: int, frames: int = 200_000, program: Path = SPLITTER_PROGRAM
) -> float:
    """Packets per CPU second of the splitter's C pipeline alone (DC split of one user, no
    packet I/O): p4n_bench_process in a loop, timed with this thread's CPU time, so other
    load on the machine does not count."""
    import ctypes

    device = splitter_device(program)
    frame = _frame(frame_size, DSTS["dc-split"])
    bench = device.lib.p4n_bench_process
    bench.restype = ctypes.c_double
    bench.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_uint32,
    ]
    start = time.process_time()
    with device.lock:
        bench(device.ctx, 0, frame, len(frame), frames)
    return frames / max(time.process_time() - start, 1e-9)


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


PROG = "python -m p4sim.bench"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--frame-size", type=int_range(64, 1500, "--frame-size"), default=1500,
                        help="bytes per frame, 64..1500")  # fmt: skip
    duration = parser.add_argument(
        "--duration-s",
        dest="duration",
        type=float_range(0, 3600, "duration", low_open=True),
        default=3.0,
        help="seconds of rate test",
    )
    add_old_name(parser, "--duration", duration)
    parser.add_argument("--latency-samples", type=int_range(1, 100_000, "--latency-samples"),
                        default=1000)  # fmt: skip
    parser.add_argument("--window", type=int_range(1, 65_536, "--window"), default=256,
                        help="frames in flight (rate test)")  # fmt: skip
    parser.add_argument(
        "--targets", default=",".join(TARGETS), help="comma-separated: " + ", ".join(TARGETS)
    )
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES)
    )
    parser.add_argument(
        "--program",
        choices=tuple(SPLITTER_PROGRAMS),
        default="v1model",
        help="the splitter of the dc-* and sc cases (tna: p4sim targets only)",
    )
    args = parser.parse_args(argv)
    splitter = SPLITTER_PROGRAMS[args.program]
    targets = [t for t in args.targets.split(",") if t]
    cases = [c for c in args.cases.split(",") if c]
    bad = [t for t in targets if t not in TARGETS] + [c for c in cases if c not in CASES]
    if bad:
        raise ToolError(f"unknown target/case {', '.join(bad)} (targets: {', '.join(TARGETS)}; "
                        f"cases: {', '.join(CASES)})", exit_code=2)  # fmt: skip
    if os.geteuid() != 0:
        raise ToolError("needs root (network namespaces and packet sockets)")
    print(f"switch benchmark: {args.frame_size}-byte frames on veth, switch pinned to CPU "
          f"{P4SIM_CPU}, traffic (pktgen) on CPU {TRAFFIC_CPU}; load average at start "
          f"{_loadavg()} ({os.cpu_count()} CPUs)")  # fmt: skip
    table: dict[tuple[str, str], dict] = {}
    failed = False
    groups = [(FWD_PROGRAM, [c for c in cases if c == "fwd"]),
              (splitter, [c for c in cases if c != "fwd"])]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="p4sim-bench-p4c-") as p4c_dir:
        for target in targets:
            for program, group in groups:
                if not group:
                    continue
                if target == "ceiling":
                    group = group[:1] if program == FWD_PROGRAM else []
                    if not group:
                        continue
                if target == "bmv2" and program == SPLITTER_PROGRAMS["tna"]:
                    print(f"  bmv2 on {program.name}: not run: BMv2 runs v1model programs only")
                    continue
                try:
                    files = _p4c(program, Path(p4c_dir)) if target == "bmv2" else None
                    res = run_target(target, program, group, args, files)
                except Exception as exc:  # noqa: BLE001 - one target must not hide the others
                    print(f"  {target} on {program.name}: not run: {exc}")
                    failed = True
                    continue
                if res.get("note"):
                    print(f"  {target} on {program.name}: {res['note']}")
                for case in group:
                    table[(target, case)] = res[case]
    header = (
        f"{'case':<20}{'target':<9}{'packets/s':>11}{'best 1 s':>10}{'per CPU-s':>11}"
        f"{'flood':>10}{'p50':>11}{'p99':>11}"
    )
    print(header)
    for case in cases:
        for target in targets:
            r = table.get((target, case))
            if r is None:
                continue
            print(f"{CASE_NAMES[case]:<20}{target:<9}{r['rate_pps']:>11,.0f}{r['best_second_pps']:>10,.0f}"
                  f"{r['per_cpu_s']:>11,.0f}"
                  f"{r['flood_pps']:>10,.0f}{r['p50_us']:>8,.0f} us{r['p99_us']:>8,.0f} us"
                  + (f"  ({r['lost_probes']} probes lost)" if r["lost_probes"] else ""))  # fmt: skip
    for case in cases:
        n, b = table.get(("native", case)), table.get(("bmv2", case))
        if n and b and b["rate_pps"]:
            print(f"{CASE_NAMES[case]}: native / BMv2 = {n['rate_pps'] / b['rate_pps']:.1f}x")
    if "native" in targets:
        try:
            wall, cpu_s = commit_time(splitter)
            print(f"native pipeline commit of the splitter (front end + C build, cold cache): "
                  f"{wall:.2f} s wall, {cpu_s:.2f} s CPU")  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            print(f"native pipeline commit: not measured: {exc}")
    if "native" in targets:
        try:
            pps = native_engine_only(args.frame_size, program=splitter)
            print(f"native C pipeline alone (splitter DC split, no packet I/O): {pps:,.0f} packets "
                  "per CPU second")  # fmt: skip
        except Exception as exc:  # noqa: BLE001
            print(f"native C pipeline alone: not measured: {exc}")
    split = table.get(("native", "dc-split"))
    if split:
        verdict = "met" if split["rate_pps"] >= GOAL_SPLITTER_PPS else "NOT met"
        print(f"goal {GOAL_SPLITTER_PPS:,} packets/s (native, DC split): {verdict}")
    print(f"load average at end {_loadavg()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run(PROG, main))

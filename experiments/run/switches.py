"""The switch of a run: which one (`--target p4sim | bmv2 | remote:FILE.yaml`), starting a
local one in the switch's namespace, and connecting the controller to it with the pipeline
the run needs (p4c's output pushed to BMv2, a remote switch's file pushed or its installed
program checked). The testbed calls these; the rest of the run only sees a P4Runtime
address and a connected `Splitter`.
"""

from __future__ import annotations

import argparse
import subprocess
from dataclasses import dataclass
from pathlib import Path

from controlplane import targets
from dccommon.cliargs import InputFileError, did_you_mean, host_port, load_yaml, port_map
from experiments.run.netns import Namespace
from experiments.run.parts import BUILD, ROOT, RUN_DIR, TestbedError
from experiments.run.scenario import switch_program

P4_PROGRAMS = {  # switch.program -> the splitter source p4sim compiles
    "v1model": ROOT / "p4src" / "dc_splitter.p4",
    "tna": ROOT / "p4src" / "dc_splitter_tna.p4",
}
P4_PROGRAM = P4_PROGRAMS["v1model"]
CPU_PORT = 255  # the adaptive profile's PacketIn port (CPU_PORT in p4src/include/defines.p4)


def p4_defines(sn_bits: int, adaptive: bool = False) -> list[str]:
    """Preprocessor flags of the splitter's profile (p4src/README.md): SN length, and the
    adaptive profile (leg feedback punted to the CPU port, credit split)."""
    return (["-D", "PDCP_SN_12"] if sn_bits == 12 else []) + (
        ["-D", "DC_ADAPTIVE"] if adaptive else []
    )


def bmv2_artifacts(sn_bits: int = 18, adaptive: bool = False) -> tuple[Path, Path]:
    """(P4Info, BMv2 JSON) that `make p4c-bmv2` writes for a profile (the adaptive one has
    18-bit SNs)."""
    stem = "dc_splitter_sn12" if sn_bits == 12 else "dc_splitter"
    stem = "dc_splitter_adaptive" if adaptive else stem
    return BUILD / "p4" / f"{stem}.bmv2.p4info.txtpb", BUILD / "p4" / f"{stem}.json"


def bmv2_missing(sn_bits: int = 18, adaptive: bool = False) -> str | None:
    """What --target bmv2 lacks on this machine, or None."""
    from controlplane import bmv2

    missing = bmv2.missing()
    for path in bmv2_artifacts(sn_bits, adaptive):
        if not path.exists():
            missing.append(f"{path} (`make p4c-bmv2`)")
    if not missing:
        return None
    return f"switch: --target bmv2 needs {' and '.join(missing)} ({bmv2.INSTALL_HINT})"


# ---------------------------------------------------------------- a switch we do not start
SWITCH_ROLES = ("server", "leg_a", "leg_b")  # DESIGN.md's port convention
SWITCH_KEYS = {"address", "device_id", "election_id", "ports", "interfaces", "pipeline", "arch"}
SWITCH_ARCHS = ("v1model", "tna", "t2na")  # P4Info pkg_info.arch of the splitter's builds


@dataclass
class RemoteSwitch:
    """A P4Runtime switch that runs on its own (a hardware switch, or any target started by
    someone else), described by a YAML file (`--target remote:FILE.yaml`): dcexp pushes the
    pipeline when the file names one, else checks the installed one, and drives the switch
    with the controller; it never starts or stops it. `interfaces` are this host's
    interfaces cabled to the switch's `ports`."""

    address: str
    device_id: int
    election_id: int
    ports: dict[str, int]  # role -> switch port
    interfaces: dict[str, str]  # role -> this host's interface cabled to that port
    pipeline: dict[str, str] | None = None  # {p4info: FILE, device_config: FILE}
    source: str = ""
    arch: str | None = None  # when given, the installed P4Info must say this architecture

    @classmethod
    def load(cls, path: Path) -> RemoteSwitch:
        """Read and check a switch file; every problem is a TestbedError naming the key."""
        path = Path(path)
        where = f"--target remote:{path}"
        try:
            doc = load_yaml(path)
        except InputFileError as exc:
            if exc.reason == "no such file":
                raise TestbedError(f"{where}: cannot read it (no such file)") from None
            raise TestbedError(f"--target remote:{exc}") from None
        if not isinstance(doc, dict):
            raise TestbedError(f"{where}: expected a mapping with keys {sorted(SWITCH_KEYS)}")
        unknown = sorted(set(doc) - SWITCH_KEYS)
        if unknown:
            raise TestbedError(
                f"{where}: unknown keys {unknown}{did_you_mean(unknown[0], SWITCH_KEYS)}; "
                f"allowed: {sorted(SWITCH_KEYS)}"
            )
        for key in ("address", "ports", "interfaces"):
            if key not in doc:
                raise TestbedError(f"{where}: `{key}` is missing")
        if not isinstance(doc["address"], str) or not doc["address"]:
            raise TestbedError(f"{where}: address must be HOST:PORT or unix:PATH")
        try:
            host_port(doc["address"])
        except argparse.ArgumentTypeError as exc:
            raise TestbedError(f"{where}: address {exc}") from None
        ids = {}
        for key, default in (("device_id", 0), ("election_id", 1)):
            value = doc.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**64:
                raise TestbedError(f"{where}: {key} must be an integer 0..2^64-1, got {value!r}")
            ids[key] = value
        if ids["election_id"] == 0:
            raise TestbedError(f"{where}: election_id must be 1..2^64-1 (0 is never primary)")
        for key, kind in (("ports", int), ("interfaces", str)):
            table = doc[key]
            if not isinstance(table, dict) or set(table) != set(SWITCH_ROLES):
                raise TestbedError(f"{where}: {key} must map exactly {', '.join(SWITCH_ROLES)}")
            for role, value in table.items():
                if not isinstance(value, kind) or isinstance(value, bool):
                    raise TestbedError(f"{where}: {key}.{role} must be a {kind.__name__}")
        try:
            port_map((doc["ports"][r], doc["interfaces"][r]) for r in SWITCH_ROLES)
        except ValueError as exc:
            raise TestbedError(f"{where}: {exc} (the three roles need three of each)") from None
        for role, port in doc["ports"].items():
            if not 0 <= port <= 510:
                raise TestbedError(f"{where}: ports.{role} must be 0..510, got {port}")
        for role, ifname in doc["interfaces"].items():
            if not 0 < len(ifname) <= 15:
                raise TestbedError(
                    f"{where}: interfaces.{role} {ifname!r} is not an interface name"
                )
        arch = doc.get("arch")
        if arch is not None and arch not in SWITCH_ARCHS:
            raise TestbedError(
                f"{where}: arch must be one of {', '.join(SWITCH_ARCHS)}, got {arch!r}"
            )
        pipeline = doc.get("pipeline")
        if pipeline is not None:
            if not isinstance(pipeline, dict) or set(pipeline) != {"p4info", "device_config"}:
                raise TestbedError(f"{where}: pipeline must give p4info and device_config files")
            pipeline = {k: str((path.parent / v).resolve()) for k, v in pipeline.items()}
            for key, file in pipeline.items():
                if not Path(file).is_file():
                    raise TestbedError(f"{where}: pipeline.{key} {file} does not exist")
        return cls(
            address=doc["address"],
            device_id=ids["device_id"],
            election_id=ids["election_id"],
            ports=dict(doc["ports"]),
            interfaces=dict(doc["interfaces"]),
            pipeline=pipeline,
            source=str(path),
            arch=arch,
        )

    def missing_interfaces(self) -> list[str]:
        """This host's cabled interfaces that do not exist (in the root namespace)."""
        return [
            f"interfaces.{role} {ifname}"
            for role, ifname in self.interfaces.items()
            if not Path("/sys/class/net", ifname).exists()
        ]


def parse_target(value: str) -> tuple[str, RemoteSwitch | None]:
    """--target p4sim | bmv2 | remote:FILE.yaml -> (kind, the remote switch or None)."""
    if value in ("p4sim", "bmv2"):
        return value, None
    if value.startswith("remote:") and len(value) > len("remote:"):
        return "remote", RemoteSwitch.load(Path(value[len("remote:") :]))
    raise TestbedError(f"--target {value!r}: allowed are p4sim, bmv2, remote:FILE.yaml")


# ---------------------------------------------------------------- a switch we start
P4SIM_ENGINES = ("native", "interp")


def p4sim_engine(config: dict, asked: str | None = None) -> str:
    """The p4sim engine a run uses: the one asked for (`--engine`), else `native` for the
    v1model splitter (compiled to C) and `interp` for the TNA one: the native engine
    translates v1model only and would run a TNA pipeline on the interpreter behind its own
    packet I/O, slower than the interpreter alone (12,469 vs 17,000 packets/s,
    p4sim/docs/tna.md)."""
    if asked is None:
        return "native" if switch_program(config) == "v1model" else "interp"
    if asked not in P4SIM_ENGINES:
        raise TestbedError(f"--engine {asked!r}: allowed are {', '.join(P4SIM_ENGINES)}")
    return asked


def p4sim_pipeline(config: dict, engine: str) -> str:
    """What executes the P4 program: `native` (the generated C) only for v1model programs on
    the native engine; the interpreter (`interp`) otherwise."""
    return "native" if engine == "native" and switch_program(config) == "v1model" else "interp"


def start_switch(
    target: str,
    switch: Namespace,
    prefix: str,
    config: dict,
    workdir: Path,
    engine: str | None = None,
    io: str = "afpacket",
) -> tuple[subprocess.Popen, str]:
    """p4sim or BMv2 in the switch's namespace on ports 0, 1, 2 (veths `<prefix>p<port>`):
    (its process, its P4Runtime address), once that address answers. `engine`: p4sim's,
    None for the program's default (p4sim_engine). `io`: p4sim's native engine reads and
    writes its ports through AF_PACKET or AF_XDP (its --io); the interpreter and BMv2 have
    AF_PACKET only."""
    p = prefix
    grpc_addr = f"unix:{RUN_DIR / (p + '.p4rt.sock')}"
    ifaces = {port: f"{p}p{port}" for port in (0, 1, 2)}
    log = workdir / "switch.log"
    adaptive = config.get("feedback") is not None
    program = switch_program(config)
    if target == "bmv2" and program != "v1model":
        raise TestbedError(f"switch.program {program}: BMv2 runs v1model programs only (use p4sim)")
    if target == "bmv2":
        missing = bmv2_missing(config["dc"]["sn_bits"], adaptive)
        if missing:
            raise TestbedError(missing)
    try:
        # p4sim compiles the program itself (the agent's --sn-bits must match its
        # defines); BMv2's Thrift runtime listens on the default port inside the
        # switch's namespace.
        argv = targets.switch_argv(
            target,
            ifaces,
            grpc_addr,
            cpu_port=CPU_PORT if adaptive else None,
            program=P4_PROGRAMS[program],
            p4sim_options=[
                *p4_defines(config["dc"]["sn_bits"], adaptive),
                *("--log-level", "warn", "--engine", p4sim_engine(config, engine)),
                *(("--io", io) if p4sim_engine(config, engine) == "native" else ()),
            ],
        )
        proc = targets.start(argv, log, switch.popen)
        targets.wait_serving(proc, grpc_addr, log=log)
    except targets.TargetError as exc:
        raise TestbedError(f"switch ({target}): {exc}") from None
    return proc, grpc_addr


# How long a controller of the run waits for the answer of a switch known to serve (started
# and waited for, or already answering the testbed): only a loaded machine delays it, and
# the CLI's 5 s (for a mistyped address) is too short for that.
SERVING_SWITCH_TIMEOUT_S = targets.START_TIMEOUT_S


def connect(grpc_addr: str, remote: RemoteSwitch | None):
    """The controller (a `Splitter`), primary on the run's switch."""
    from controlplane.splitter import Splitter

    if remote is not None:
        return Splitter.connect(remote.address, remote.device_id, remote.election_id)
    # start_switch has seen it serve (a remote switch is first reached here: its 5 s stand)
    return Splitter.connect(
        grpc_addr, device_id=0, election_id=1, timeout_s=SERVING_SWITCH_TIMEOUT_S
    )


def install_pipeline(splitter, target: str, remote: RemoteSwitch | None, config: dict) -> None:
    """The pipeline this run needs: p4c's output pushed to BMv2 (p4sim compiled the program
    itself), or a remote switch's own (see `prepare_remote`)."""
    adaptive = config.get("feedback") is not None
    if remote is not None:
        prepare_remote(splitter, remote, adaptive)
    if target == "bmv2":
        splitter.push_pipeline(*bmv2_artifacts(config["dc"]["sn_bits"], adaptive))


def prepare_remote(splitter, sw: RemoteSwitch, wants_adaptive: bool) -> None:
    """Push the file's pipeline or check that the installed one is the splitter's (of the
    profile this run needs), and clear what an earlier run left in its tables: for the
    run, the splitter's tables are ours."""
    if sw.pipeline is not None:
        splitter.push_pipeline(sw.pipeline["p4info"], sw.pipeline["device_config"])
    try:
        splitter.held_state()  # reads the splitter's tables: fails on another program
    except (KeyError, ValueError) as exc:
        raise TestbedError(
            f"switch ({sw.source}, {sw.address}): the installed pipeline is not "
            f"dc_splitter's ({exc}); give `pipeline:` in the file to push it"
        ) from None
    if sw.arch is not None and splitter.index.arch != sw.arch:
        raise TestbedError(
            f"switch ({sw.source}): the installed pipeline is built for "
            f"{splitter.index.arch!r}, the file says arch: {sw.arch}"
        )
    if wants_adaptive and not splitter.adaptive:
        raise TestbedError(
            f"switch ({sw.source}): this scenario's loops need the adaptive profile "
            "(-D DC_ADAPTIVE) but the installed pipeline is the plain splitter"
        )
    splitter.reset()

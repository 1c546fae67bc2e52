"""Compile the TNA splitter for Tofino 1 and 2 with the real back end and summarise resources.

For every profile (18-bit and 12-bit SNs) and chip (tofino/tna, tofino2/t2na) this runs
`p4c -g --verbose 1 --p4runtime-files ... --p4runtime-force-std-externs` into
OUT/<profile>.<chip>/ and reads the compiler's logs (pipe/logs/mau.json for stages per
gress, metrics.json for SRAM, TCAM and PHV use), packs the Stratum device config
(PROFILE.bfpipeline.pb, controlplane/tofino_package.py) and bf_switchd's PROFILE.conf
(p4c-gen-conf) beside the compiler's output. It writes OUT/resources.json (checked
against a budget by p4src/tests/test_tofino.py) and prints a Markdown table for
p4src/docs/tofino.md ("Resources"). Any compiler error or a missing tool ends it with a
one-line message.

    python tools/tofino_build.py [--out build/tofino] [--p4c p4c]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from controlplane.tofino_package import CompilerOutput, build_package

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "p4src" / "dc_splitter_tna.p4"
PROFILES = {"dc_splitter": [], "dc_splitter_sn12": ["-D", "PDCP_SN_12=1"]}
CHIPS = {"tofino": "tna", "tofino2": "t2na"}


def compile_profile(p4c: str, out: Path, profile: str, chip: str) -> Path:
    """Compile one profile for one chip into out/<profile>.<chip>/; return that directory."""
    target_dir = out / f"{profile}.{chip}"
    command = [
        p4c, "--target", chip, "--arch", CHIPS[chip], "-g", "--verbose", "1",
        *PROFILES[profile],
        "--p4runtime-files", str(target_dir / "p4info.txtpb"),
        "--p4runtime-force-std-externs",
        "-o", str(target_dir), str(SOURCE),
    ]  # fmt: skip
    target_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    (target_dir / "compile.log").write_text(result.stdout + result.stderr)
    binary = target_dir / "pipe" / f"{chip}.bin"
    if result.returncode != 0 or not binary.is_file():
        errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
        raise SystemExit(
            f"p4c-tofino: {profile} for {chip} failed: "
            f"{errors[0] if errors else 'no ' + binary.name} (log: {target_dir}/compile.log)"
        )
    return target_dir


def package(target_dir: Path, profile: str, chip: str) -> None:
    """Next to the compiler's output: PROFILE.bfpipeline.pb, the device config stratum_bfrt
    takes in a P4Runtime push, and PROFILE.conf, bf_switchd's configuration (p4c-gen-conf)."""
    output = CompilerOutput(target_dir, chip)
    (target_dir / f"{profile}.bfpipeline.pb").write_bytes(build_package(output, profile))
    command = [
        "p4c-gen-conf", "--conf-type", "BF-RT", "--device", chip, "--name", profile,
        "--bfrt-name", "bfrt.json", "--outputdir", str(target_dir), "--p4-version", "p4-16",
        "--pipe", output.profile_name,
    ]  # fmt: skip
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    if result.returncode != 0 or not (target_dir / f"{profile}.conf").is_file():
        raise SystemExit(
            f"p4c-tofino: p4c-gen-conf for {profile} on {chip} failed: "
            f"{(result.stderr.strip().splitlines() or ['no .conf'])[-1]}"
        )


def summarise(target_dir: Path) -> dict:
    """Stages per gress, memories and PHV containers of one compile, from its logs."""
    logs = target_dir / "pipe" / "logs"
    stages: dict[str, set[int]] = {"ingress": set(), "egress": set()}
    for table in json.loads((logs / "mau.json").read_text())["tables"]:
        for allocation in table["stage_allocation"]:
            stages[table["gress"]].add(allocation["stage_number"])
    metrics = json.loads((logs / "metrics.json").read_text())
    # Tofino 1 has normal and tagalong containers, Tofino 2 normal, mocha and dark (and
    # carries many header bytes in CLOTs instead, hence far fewer PHV bits).
    phv = [kind for kinds in metrics["phv"].values() for kind in kinds]
    return {
        "ingress_stages": max(stages["ingress"], default=-1) + 1,
        "egress_stages": max(stages["egress"], default=-1) + 1,
        "sram_blocks": metrics["mau"]["srams"],
        "tcam_blocks": metrics["mau"]["tcams"],
        "map_rams": metrics["mau"]["map_rams"],
        "phv_containers": sum(kind["containers_occupied"] for kind in phv),
        "phv_bits": sum(kind["bits_occupied"] for kind in phv),
    }


def markdown(summary: dict) -> str:
    lines = [
        "| profile | chip | ingress stages | egress stages | SRAM | TCAM | map RAM | PHV containers (bits) |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for name, use in summary.items():
        profile, chip = name.split(".")
        lines.append(
            f"| {profile} | {chip} | {use['ingress_stages']} | {use['egress_stages']} "
            f"| {use['sram_blocks']} | {use['tcam_blocks']} | {use['map_rams']} "
            f"| {use['phv_containers']} ({use['phv_bits']}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "tofino")
    parser.add_argument("--p4c", default="p4c", help="the p4c driver with the Tofino back end")
    args = parser.parse_args(argv)
    for tool in (args.p4c, "p4c-barefoot", "p4c-gen-conf"):
        if shutil.which(tool) is None:
            raise SystemExit(
                f"p4c-tofino: '{tool}' is not on PATH: install the p4tools bundle with the "
                "Tofino back end (make setup P4TOOLS_BUNDLE=path/to/p4tools) or put "
                "/opt/p4tools/bin on PATH"
            )
    # The compiles are independent and each keeps one core busy: one per core at a time.
    jobs = [(profile, chip) for profile in PROFILES for chip in CHIPS]
    with ThreadPoolExecutor(max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        target_dirs = list(pool.map(lambda job: compile_profile(args.p4c, args.out, *job), jobs))
    summary = {}
    for (profile, chip), target_dir in zip(jobs, target_dirs):
        package(target_dir, profile, chip)
        summary[f"{profile}.{chip}"] = summarise(target_dir)
    (args.out / "resources.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

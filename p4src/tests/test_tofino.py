"""Checks on the Tofino compile of the splitter (`make p4c-tofino` builds what they read).

- Every profile fits the stage budget on Tofino 1 and 2 (build/tofino/resources.json).
- The TNA P4Info (real Tofino back end) has the same control surface as the v1model P4Info
  (real p4c-bm2-ss): tables with their keys and actions, action parameters, registers and
  counters, by name, up to an architecture prefix; one controller drives both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controlplane import splitter as S
from controlplane.p4info import P4InfoIndex, load_p4info
from controlplane.tofino_package import read_package

ROOT = Path(__file__).resolve().parents[2]
TOFINO = ROOT / "build" / "tofino"
BMV2 = ROOT / "build" / "p4"

# Per chip: most MAU stages a gress may use (Tofino 1 has 12, Tofino 2 20; the splitter
# must leave room for a real switch's own tables).
STAGE_BUDGET = {"tofino": 6, "tofino2": 6}
PROFILES = ["dc_splitter", "dc_splitter_sn12"]
CHIPS = list(STAGE_BUDGET)

# Differences the architecture forces, documented in p4src/docs/tofino.md: a stateful
# ALU holds 8, 16 or 32 bits, so the SN register is 32 bits wide (take_sn wraps it at 2^18 or 2^12).
REGISTER_WIDTH_ON_TNA = {"DcIngress.pdcp_sequencer.next_sn": 32}


def resources() -> dict:
    path = TOFINO / "resources.json"
    assert path.is_file(), f"{path} missing: run make p4c-tofino"
    return json.loads(path.read_text())


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("profile", PROFILES)
def test_profile_fits_stage_budget(profile, chip):
    use = resources()[f"{profile}.{chip}"]
    for gress in ("ingress", "egress"):
        assert 1 <= use[f"{gress}_stages"] <= STAGE_BUDGET[chip], (
            f"{profile} on {chip}: {use[f'{gress}_stages']} {gress} stages, "
            f"budget {STAGE_BUDGET[chip]}"
        )


def unprefixed(name: str) -> str:
    """A P4Info name without the TNA pipe prefix (p4c-barefoot adds `pipe.` with several
    pipes; with one it writes the control path as v1model does)."""
    return name.removeprefix("pipe.")


def control_surface(path: Path) -> dict[str, object]:
    """Entity kind + name -> what a controller relies on (ids excluded: they differ)."""
    info = load_p4info(path)
    action_names = {action.preamble.id: action.preamble.name for action in info.actions}
    surface: dict[str, object] = {}
    for table in info.tables:
        surface[f"table {unprefixed(table.preamble.name)}"] = (
            sorted((f.name, f.bitwidth, f.match_type) for f in table.match_fields),
            sorted(unprefixed(action_names[ref.id]) for ref in table.action_refs),
            table.size,
        )
    for action in info.actions:
        if action.preamble.name != "NoAction":
            surface[f"action {unprefixed(action.preamble.name)}"] = sorted(
                (param.name, param.bitwidth) for param in action.params
            )
    for register in info.registers:
        name = unprefixed(register.preamble.name)
        surface[f"register {name}"] = (register.type_spec.bitstring.bit.bitwidth, register.size)
    for counter in info.counters:
        surface[f"counter {unprefixed(counter.preamble.name)}"] = (counter.spec.unit, counter.size)
    return surface


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("profile", PROFILES)
def test_tna_p4info_has_the_v1model_control_surface(profile, chip):
    v1model = control_surface(BMV2 / f"{profile}.bmv2.p4info.txtpb")
    tna = control_surface(TOFINO / f"{profile}.{chip}" / "p4info.txtpb")
    for name, width in REGISTER_WIDTH_ON_TNA.items():
        size = v1model[f"register {name}"][1]
        v1model[f"register {name}"] = (width, size)
    assert sorted(set(v1model) - set(tna)) == [], "missing on TNA"
    assert sorted(set(tna) - set(v1model)) == [], "only on TNA"
    differ = [name for name in v1model if v1model[name] != tna[name]]
    assert differ == [], "; ".join(f"{n}: v1model {v1model[n]} TNA {tna[n]}" for n in differ)


def test_surface_comparison_notices_a_renamed_parameter(tmp_path):
    """The comparison can fail: a TNA P4Info with one parameter renamed differs."""
    source = (TOFINO / "dc_splitter.tofino" / "p4info.txtpb").read_text()
    changed = tmp_path / "p4info.txtpb"
    changed.write_text(source.replace('name: "leg_a_count"', 'name: "leg_a_packets"', 1))
    original = control_surface(TOFINO / "dc_splitter.tofino" / "p4info.txtpb")
    assert (
        control_surface(changed)["action DcIngress.ue_sessions.split_dc"]
        != original["action DcIngress.ue_sessions.split_dc"]
    )


@pytest.mark.parametrize("chip", CHIPS)
def test_p4info_records_the_architecture(chip):
    info = load_p4info(TOFINO / f"dc_splitter.{chip}" / "p4info.txtpb")
    assert info.pkg_info.arch == {"tofino": "tna", "tofino2": "t2na"}[chip]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("profile", PROFILES)
def test_stratum_package_holds_the_compiler_output_byte_for_byte(profile, chip):
    target_dir = TOFINO / f"{profile}.{chip}"
    config = read_package((target_dir / f"{profile}.bfpipeline.pb").read_bytes())
    assert config.p4_name == profile
    assert config.bfruntime_info == (target_dir / "bfrt.json").read_bytes()
    [pipe] = config.profiles
    assert pipe.profile_name == "pipe"
    assert list(pipe.pipe_scope) == [0, 1, 2, 3]
    assert pipe.context == (target_dir / "pipe" / "context.json").read_bytes()
    assert pipe.binary == (target_dir / "pipe" / f"{chip}.bin").read_bytes()


@pytest.mark.parametrize("chip", CHIPS)
def test_bf_switchd_conf_names_the_program_and_its_files(chip):
    target_dir = TOFINO / f"dc_splitter.{chip}"
    conf = json.loads((target_dir / "dc_splitter.conf").read_text())
    assert conf["chip_list"][0]["chip_family"] == chip
    [program] = conf["p4_devices"][0]["p4_programs"]
    assert program["program-name"] == "dc_splitter"
    [pipeline] = program["p4_pipelines"]
    assert (
        Path(pipeline["config"]).read_bytes() == (target_dir / "pipe" / f"{chip}.bin").read_bytes()
    )


@pytest.mark.parametrize("chip", CHIPS)
def test_controller_finds_every_entity_it_drives_in_the_tofino_p4info(chip):
    index = P4InfoIndex.from_file(TOFINO / f"dc_splitter.{chip}" / "p4info.txtpb")
    lookups = {"T_": index.table, "A_": index.action, "C_": index.counter, "R_": index.register}
    adaptive_only = {S.A_CREDIT, S.T_FEEDBACK, S.A_CREDIT_LEG}  # not on TNA (README)
    for constant, name in vars(S).items():
        if constant[:2] in lookups and isinstance(name, str) and name not in adaptive_only:
            assert index.name_of(lookups[constant[:2]](name).preamble.id) == name, constant

"""The example switch files load, and `arch` accepts only the splitter's architectures."""

from pathlib import Path

import pytest

from experiments.run import parts
from experiments.run.switches import RemoteSwitch

SWITCHES = Path(__file__).resolve().parents[1] / "switches"


@pytest.mark.parametrize("name", sorted(p.name for p in SWITCHES.glob("*.yaml")))
def test_example_switch_file_loads(name, tmp_path):
    text = (SWITCHES / name).read_text()
    # Pipeline files exist only after a build: check the rest of the file on its own.
    text = text.split("\npipeline:")[0] + "\n"
    switch = RemoteSwitch.load(_write(tmp_path, text))
    assert set(switch.ports) == {"server", "leg_a", "leg_b"}


def test_tofino_example_says_tna():
    text = (SWITCHES / "example_tofino_stratum.yaml").read_text()
    assert "\narch: tna " in text and "bfpipeline.pb" in text


def test_unknown_arch_is_refused_naming_the_allowed_ones(tmp_path):
    text = (SWITCHES / "example_tofino_stratum.yaml").read_text().split("\npipeline:")[0]
    path = _write(tmp_path, text.replace("arch: tna", "arch: tofino") + "\n")
    with pytest.raises(
        parts.TestbedError, match="arch must be one of v1model, tna, t2na, got 'tofino'"
    ):
        RemoteSwitch.load(path)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "switch.yaml"
    path.write_text(text)
    return path

"""The example switch files load, and `arch` accepts only the splitter's architectures."""

import re
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


@pytest.mark.parametrize(
    "address,message",
    [
        ("'switch 1:9339'", "'switch 1' is neither an IPv4 address nor a host name"),
        ("999.1.1.1:9339", "'999.1.1.1' is neither an IPv4 address nor a host name"),
        ("10.0.0.1:99999", "port 99999 is out of range (allowed 0..65535)"),
    ],
)
def test_a_malformed_address_is_refused_when_the_file_loads(address, message, tmp_path):
    """Not after a 5 s connect timeout that blames a switch that is not running."""
    text = (SWITCHES / "example_remote.yaml").read_text().split("\npipeline:")[0] + "\n"
    text = re.sub(r"(?m)^address: .*$", f"address: {address}", text)
    with pytest.raises(parts.TestbedError, match=re.escape(message)):
        RemoteSwitch.load(_write(tmp_path, text))


@pytest.mark.parametrize("key,hint", [("adress", "address"), ("interface", "interfaces")])
def test_a_misspelt_key_gets_the_right_one_suggested(key, hint, tmp_path):
    text = (SWITCHES / "example_remote.yaml").read_text().split("\npipeline:")[0]
    with pytest.raises(parts.TestbedError, match=f"did you mean '{hint}'"):
        RemoteSwitch.load(_write(tmp_path, text + f"\n{key}: x\n"))

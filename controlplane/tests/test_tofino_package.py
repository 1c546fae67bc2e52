"""The Stratum BfPipelineConfig package: fields round-trip and wire numbers match bf.proto."""

from pathlib import Path

import pytest

from controlplane.tofino_package import CompilerOutput, build_package, read_package


def fake_compile(directory: Path, chip: str) -> CompilerOutput:
    (directory / "pipe").mkdir(parents=True)
    (directory / "bfrt.json").write_bytes(b'{"tables": []}')
    (directory / "pipe" / "context.json").write_bytes(b'{"context": 1}')
    (directory / "pipe" / f"{chip}.bin").write_bytes(bytes(range(256)))
    return CompilerOutput(directory, chip)


def test_package_round_trips_every_file(tmp_path):
    output = fake_compile(tmp_path, "tofino2")
    config = read_package(build_package(output, "dc_splitter", pipe_scope=(0, 2)))
    assert config.p4_name == "dc_splitter"
    assert config.bfruntime_info == b'{"tables": []}'
    [profile] = config.profiles
    assert (profile.profile_name, list(profile.pipe_scope)) == ("pipe", [0, 2])
    assert profile.context == b'{"context": 1}'
    assert profile.binary == bytes(range(256))


def test_wire_format_uses_bf_proto_field_numbers(tmp_path):
    # bf.proto: p4_name = 1 (tag 0x0a), bfruntime_info = 2 (0x12), profiles = 3 (0x1a);
    # Profile: profile_name = 1 (0x0a), context = 2 (0x12), binary = 3 (0x1a), pipe_scope = 4.
    data = build_package(fake_compile(tmp_path, "tofino"), "p")
    assert data.startswith(b"\x0a\x01p\x12\x0e")
    profile = read_package(data).profiles[0].SerializeToString()
    assert profile.startswith(b"\x0a\x04pipe\x12\x0e")
    assert profile.endswith(b"\x22\x04\x00\x01\x02\x03")  # packed repeated uint32


def test_missing_compiler_output_is_named(tmp_path):
    output = fake_compile(tmp_path, "tofino")
    output.binary.unlink()
    with pytest.raises(FileNotFoundError, match="tofino.bin missing"):
        build_package(output, "p")

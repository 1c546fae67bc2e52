"""The native engine's libFuzzer harness (p4sim/native/fuzz.py, fuzz_native.c): the control
plane it replays in C is the one it recorded, so the fuzzer drives the splitter with its
users installed, not an empty pipeline. (`make p4sim-fuzz-native` runs the fuzzer itself.)

    .venv/bin/pytest -q p4sim/tests/test_native_fuzz.py
"""

from __future__ import annotations

import os
import subprocess

import pytest

from p4sim.native.fuzz import harness, set_up, splitter_targets, stf_seeds


@pytest.mark.parametrize(
    "target", [t for t in splitter_targets() if not t.io], ids=lambda t: t.name
)
def test_replayed_setup_forwards_as_the_recorded_device(target, tmp_path):
    """The STF file's frames through the harness (its outputs printed) and through the
    device whose calls it replays, in the same order: the same frames on the same ports."""
    exe = harness(target)
    stf_seeds(target, tmp_path)
    inputs = sorted(tmp_path.iterdir(), key=lambda p: int(p.name.split("-")[1]))
    # -detect_leaks=0: libFuzzer runs an input again when it allocated more than it freed
    # (the output buffer's first growth, here), which would shift the registers' state
    proc = subprocess.run(
        [str(exe), "-detect_leaks=0", *map(str, inputs)],
        env={**os.environ, "P4SIM_FUZZ_PRINT": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    device, _ = set_up(target)
    expected = []
    for path in inputs:
        data = path.read_bytes()
        port = int.from_bytes(data[:2], "little")
        expected += [f"{p} {frame.hex()}" for p, frame in device.process(port, data[2:])]
    assert len(expected) >= 8  # the users' frames were forwarded, split and duplicated
    assert proc.stdout.splitlines() == expected

"""The switch's packet path (p4sim.switch) with in-process ports: no pipeline, pipeline swap,
CPU port delivery and pcap capture. The device is a stub (the unit under test is the switch).

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_switch.py
"""

from __future__ import annotations

import threading

from p4sim.io import InProcessPorts
from p4sim.io.pcap import read_pcap
from p4sim.switch import Pipeline, Switch


class StubDevice:
    """Sends every frame to `out_port` with `tag` appended; records the lock was held."""

    def __init__(self, out_port: int, tag: bytes) -> None:
        self.lock = threading.RLock()
        self.out_port, self.tag = out_port, tag
        self.held = []

    def process(self, port, frame):
        self.held.append(self.lock._is_owned())
        return [(self.out_port, frame + self.tag), (511, frame)]


def pipeline(device) -> Pipeline:
    return Pipeline(program=None, p4info=None, device_config=b"", device=device)


def test_no_pipeline_drops_and_swap_takes_effect_per_frame(tmp_path):
    ports = InProcessPorts([0, 1])
    switch = Switch(ports, cpu_port=64, pcap_dir=tmp_path)
    switch.start()
    ports.inject(0, b"a" * 20)
    assert ports.collect() == [] and switch.stats["dropped_no_pipeline"] == 1
    first = StubDevice(1, b"1")
    switch.set_pipeline(pipeline(first))
    ports.inject(0, b"b" * 20)
    switch.set_pipeline(pipeline(StubDevice(1, b"2")))
    ports.inject(0, b"c" * 20)
    assert ports.collect() == [(1, b"b" * 20 + b"1"), (1, b"c" * 20 + b"2")]  # 511 = drop
    assert first.held == [True]
    switch.close()
    assert read_pcap(tmp_path / "0-in.pcap") == [b"a" * 20, b"b" * 20, b"c" * 20]
    assert read_pcap(tmp_path / "1-out.pcap") == [b"b" * 20 + b"1", b"c" * 20 + b"2"]


def test_cpu_port_frames_go_to_listeners_and_packet_out_enters_on_cpu_port():
    ports = InProcessPorts([0])
    switch = Switch(ports, cpu_port=64)
    switch.start()
    seen = []

    class Loop(StubDevice):
        def process(self, port, frame):
            return [(64, frame)] if port == 0 else [(0, frame)]

    switch.set_pipeline(pipeline(Loop(0, b"")))
    switch.add_packet_in_listener(seen.append)
    ports.inject(0, b"to-cpu" * 5)
    switch.packet_out(b"from-cpu" * 5)
    assert seen == [b"to-cpu" * 5]
    assert ports.collect() == [(0, b"from-cpu" * 5)]
    switch.remove_packet_in_listener(seen.append)
    ports.inject(0, b"x" * 20)
    assert seen == [b"to-cpu" * 5]

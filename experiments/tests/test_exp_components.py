"""The per-part bench (experiments/ratebench/components.py): its options, the wake-up count
it reports, and (root) frames through pdcp-agent run after run.

    .venv/bin/python -m pytest -q experiments/tests/test_exp_components.py
"""

import os
import time

import pytest

from experiments.ratebench import components
from experiments.run import cpu
from hostagents.agent_cmd import IO_PATHS


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rates-kpps", "20,x"], "expected comma-separated numbers above 0 up to 1000"),
        (["--rates-kpps", "0"], "rates '0': expected comma-separated numbers above 0"),
        (["--rates-kpps", "20,20"], "rates '20,20': 20 is given twice; give each once"),
        (["--parts", "agent,agent"], "'agent,agent': agent is given twice; give each once"),
        (["--duration-s", "٢"], "duration '٢' must be a number above 0 up to 600"),
        (["--parts", "switch,linkem"], "expected a comma-separated subset of switch, link, agent"),
        (
            ["--io", "afxdp,dpdk"],
            "'afxdp,dpdk': expected a comma-separated subset of afpacket, afxdp",
        ),
    ],
)
def test_bad_rates_and_parts_are_refused_naming_the_allowed_values(argv, message, capsys):
    with pytest.raises(SystemExit):
        components.build_parser().parse_args(argv)
    assert message in capsys.readouterr().err


def test_voluntary_switches_count_each_sleep_of_every_thread():
    before = cpu.voluntary_switches(os.getpid())
    for _ in range(5):
        time.sleep(0.002)
    assert cpu.voluntary_switches(os.getpid()) - before >= 5
    assert cpu.voluntary_switches(2**22 + 1) == 0  # no such process (above pid_max)


@pytest.mark.netns
@pytest.mark.parametrize("io", IO_PATHS)
def test_agent_passes_every_frame_run_after_run(io):
    """Two paced runs through pdcp-agent: the second continues the first's SNs, so neither
    loses a frame to the agent's duplicate discard; the CPU per frame is measured."""
    with components.agent_part(None, io) as part:
        first = components.offer(part, 2000, 0.5)
        second = components.offer(part, 2000, 0.5)
    for load in (first, second):
        assert load.received == load.sent == 1000
        assert 0 < load.cpu_us_per_frame < 10_000
        assert load.wakeups_per_s > 0


@pytest.mark.netns
@pytest.mark.parametrize("part_name", ["switch", "link"])
def test_switch_and_link_pass_every_frame_on_af_xdp(part_name):
    """The switch and a linkem on AF_XDP (the bench's --io afxdp) pass every frame of a
    paced run; the CPU per frame is measured."""
    with components.PART_STARTERS[part_name](None, "afxdp") as part:
        load = components.offer(part, 2000, 0.5)
    assert load.received == load.sent == 1000
    assert 0 < load.cpu_us_per_frame < 10_000

"""bench_agent's options (hostagents/bench/bench_agent.py, `make hostagents-bench`): a wrong
one is refused naming the allowed values.

    .venv/bin/python -m pytest -q hostagents/tests/test_bench_agent.py
"""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_agent.py"


def bench_agent():
    spec = importlib.util.spec_from_file_location("bench_agent", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_defaults_are_the_full_bench_on_af_packet():
    args = bench_agent().build_parser().parse_args([])
    assert (args.io, args.rates_pps, args.unpaced_frames) == (
        ["afpacket"],
        [100_000, 200_000, 300_000, 400_000],
        2_000_000,
    )


def test_both_io_paths_in_one_run():
    args = bench_agent().build_parser().parse_args(["--io", "afxdp,afpacket"])
    assert args.io == ["afxdp", "afpacket"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--io", "afxdp,dpdk"],
            "'afxdp,dpdk': expected a comma-separated subset of afpacket, afxdp",
        ),
        (["--io", "afxdp,afxdp"], "'afxdp,afxdp': afxdp is given twice; give each once"),
        (["--rates-pps", "0"], "--rates-pps '0': expected comma-separated whole numbers from 1"),
        (["--unpaced-frames", "-1"], "--unpaced-frames -1 is out of range (allowed 0..100000000)"),
    ],
)
def test_bad_options_are_refused_naming_the_allowed_values(argv, message, capsys):
    with pytest.raises(SystemExit):
        bench_agent().build_parser().parse_args(argv)
    assert message in capsys.readouterr().err

"""quic-go through the real chain (root): server -> p4sim -> linkem A/B -> pdcp-agent ->
the DC client, split 1:1. Physical invariants:

- the download arrives whole (SHA-256 of what arrived = the served file);
- both legs carry it, each about half (the 1:1 split, counted by linkem);
- goodput stays below the two legs' capacity and above a quarter of it (a stack that stalls
  on DC's reordering or never leaves slow start would fall below);
- the sender's RTT and cwnd come out of quic-go's qlog; nothing is left behind.
"""

import os

import pytest

from experiments.analysis import metrics
from experiments.run.runner import RunOptions, run_scenario
from experiments.run.scenario import from_dict
from experiments.tests.test_exp_smoke import assert_nothing_left

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the quic-go smoke experiment needs root (network namespaces); run as root")

LEG_MBIT = 10
SIZE_MB = 4


@pytest.fixture(scope="module")
def quicgo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("quicgo") / "quicgo"
    scenario = from_dict(
        {
            "name": "quicgo",
            "links": {"both": {"rate_mbit": LEG_MBIT, "delay_ms": 5, "queue_pkts": 100}},
            "dc": {"batch": 10, "ratio": "1:1"},
            "t_reordering_ms": 100,
            "flows": [{"kind": "quicgo", "size_mb": SIZE_MB, "client": "dc"}],
        }
    )
    summary = run_scenario(scenario, out, RunOptions())
    manifests = metrics.load_manifests(out)
    assert summary["failed"] == 0, [m["errors"] for m in manifests]
    return out, manifests[0]


def test_quicgo_download_over_dc_is_whole_on_both_legs_within_capacity(quicgo_run):
    out, m = quicgo_run
    flow = m["flows"]["f0-dc"]
    assert flow["complete"] and flow["intact"], flow
    samples = metrics.load_samples(out / "runs" / m["run_id"])
    link = metrics.leg_totals(samples)["link"]
    legs = {leg: link[f"{leg}/ab/bytes"] for leg in ("a", "b")}
    assert sum(legs.values()) >= SIZE_MB * 1e6, legs
    for leg, carried in legs.items():
        share = carried / sum(legs.values())
        assert 0.4 <= share <= 0.6, f"leg {leg} carried {share:.0%} of a 1:1 split: {legs}"
    goodput = flow["goodput_mbit"]
    cpu = f"CPU saturated: {m['cpu_saturated']}"
    assert goodput < 2 * LEG_MBIT, f"goodput {goodput:.2f} Mbit/s beyond both legs ({cpu})"
    assert goodput > LEG_MBIT / 2, f"goodput {goodput:.2f} Mbit/s, a quarter of both legs ({cpu})"
    flow_samples = samples[samples["id"] == "f0-dc"]
    rtt = flow_samples[flow_samples["metric"] == "rtt_ms"]["value"]
    assert len(rtt) >= 5 and rtt.min() >= 10, "the sender's RTT (2 x 5 ms legs) from its qlog"
    assert (flow_samples["metric"] == "cwnd_bytes").any()
    assert m["tools"]["quic-go"].startswith("quic-go v"), m["tools"]
    assert_nothing_left([m])

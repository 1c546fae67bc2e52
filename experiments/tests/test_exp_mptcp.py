"""MPTCP baseline through the real chain (root): server -> p4sim (each of the device's two
addresses an `sc` user on its leg) -> linkem A/B -> the MPTCP device. Physical invariants:

- both subflows carry data, on their own legs (linkem's byte counters and the sender's
  per-subflow TCP_INFO agree);
- the goodput exceeds one leg's capacity, which no single path could deliver;
- the download is intact and nothing is left behind.

Legs of 5 Mbit/s keep the Python switch below its limit on a loaded 2-core machine, so the
aggregate is the legs', not the CPU's.
"""

import os

import pytest

from experiments.analysis import metrics
from experiments.run.runner import RunOptions, run_scenario
from experiments.run.scenario import from_dict
from experiments.tests.test_exp_smoke import assert_nothing_left

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the MPTCP smoke experiment needs root (network namespaces); run as root")

LEG_MBIT = 5
SIZE_MB = 3


@pytest.fixture(scope="module")
def mptcp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mptcp") / "mptcp"
    scenario = from_dict(
        {
            "name": "mptcp",
            "links": {"both": {"rate_mbit": LEG_MBIT, "delay_ms": 5, "queue_pkts": 60}},
            "flows": [{"kind": "mptcp", "cc": "cubic", "size_mb": SIZE_MB, "client": "dc"}],
        }
    )
    summary = run_scenario(scenario, out, RunOptions())
    manifests = metrics.load_manifests(out)
    assert summary["failed"] == 0, [m["errors"] for m in manifests]
    return out, manifests[0]


def test_mptcp_uses_both_legs_beyond_one_legs_capacity(mptcp_run):
    out, m = mptcp_run
    flow = m["flows"]["f0-dc"]
    assert flow["complete"] and flow["intact"], flow
    sub = flow["subflow_bytes"]
    assert set(sub) == {"a", "b"}, f"one subflow per leg expected, got {sub}"
    assert sum(sub.values()) >= SIZE_MB * 1e6
    link = metrics.leg_totals(metrics.load_samples(out / "runs" / m["run_id"]))["link"]
    for leg in ("a", "b"):
        # each leg carried at least a fifth of the download, and what its subflow sent
        assert link[f"{leg}/ab/bytes"] >= 0.2 * SIZE_MB * 1e6, link
        assert link[f"{leg}/ab/bytes"] >= 0.95 * sub[leg], (leg, link, sub)
    assert flow["goodput_mbit"] > LEG_MBIT, (
        f"goodput {flow['goodput_mbit']:.2f} Mbit/s is within one {LEG_MBIT} Mbit/s leg "
        f"(subflows {sub}, CPU saturated: {m['cpu_saturated']})"
    )
    assert_nothing_left([m])

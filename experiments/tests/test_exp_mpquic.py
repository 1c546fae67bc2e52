"""Multipath QUIC (tquic) through the real chain (root): server -> p4sim (each of the
device's two addresses an `sc` user on its leg) -> linkem A/B -> the multipath device.
Physical invariants, as for MPTCP:

- both paths carry data, on their own legs (linkem's byte counters and the client's
  per-path bytes agree);
- the goodput exceeds one leg's capacity, which no single path could deliver;
- the download is intact, and every scheduler negotiates multipath and delivers intact;
- single-path QUIC (paths 1, the reference) stays on leg A.

One run: the bulk download (minRTT) first, then a short download per other scheduler and one
single-path, after it. Legs of 5 Mbit/s keep the Python switch below its limit on a loaded 2-core machine.
"""

import os

import pytest

from experiments.analysis import metrics
from experiments.flows.mpquic import SCHEDULERS
from experiments.run.runner import RunOptions, run_scenario
from experiments.run.scenario import from_dict
from experiments.tests.test_exp_smoke import assert_nothing_left

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the MPQUIC smoke experiment needs root (network namespaces); run as root")

LEG_MBIT = 5
SIZE_MB = 3
SHORT_MB = 0.5
OTHERS = [s for s in SCHEDULERS if s != "minrtt"]


@pytest.fixture(scope="module")
def mpquic_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpquic") / "mpquic"
    bulk = {"kind": "mpquic", "scheduler": "minrtt", "size_mb": SIZE_MB, "client": "dc"}
    short = [
        {"kind": "mpquic", "scheduler": s, "size_mb": SHORT_MB, "start_s": 10.0 + 3 * i}
        for i, s in enumerate(OTHERS)
    ]
    single = {"kind": "mpquic", "paths": 1, "size_mb": SHORT_MB, "start_s": 10.0 + 3 * len(OTHERS)}
    scenario = from_dict(
        {
            "name": "mpquic",
            "links": {"both": {"rate_mbit": LEG_MBIT, "delay_ms": 5, "queue_pkts": 60}},
            "flows": [bulk, *short, single],
        }
    )
    summary = run_scenario(scenario, out, RunOptions())
    manifests = metrics.load_manifests(out)
    assert summary["failed"] == 0, [m["errors"] for m in manifests]
    return out, manifests[0]


def test_mpquic_uses_both_legs_beyond_one_legs_capacity(mpquic_run):
    out, m = mpquic_run
    flows = sorted(m["flows"].values(), key=lambda f: f["start_s"])
    bulk = flows[0]
    assert bulk["complete"] and bulk["intact"] and bulk["scheduler"] == "minrtt", bulk
    paths = bulk["path_bytes"]
    for leg in ("a", "b"):
        assert paths[leg] >= 0.2 * SIZE_MB * 1e6, f"each path carries data, got {paths}"
    link = metrics.leg_totals(metrics.load_samples(out / "runs" / m["run_id"]))["link"]
    for leg in ("a", "b"):
        # what the client received on a path crossed that path's leg
        assert link[f"{leg}/ab/bytes"] >= 0.95 * paths[leg], (leg, link, paths)
    assert bulk["goodput_mbit"] > LEG_MBIT, (
        f"goodput {bulk['goodput_mbit']:.2f} Mbit/s is within one {LEG_MBIT} Mbit/s leg "
        f"(paths {paths}, CPU saturated: {m['cpu_saturated']})"
    )
    assert_nothing_left([m])


def test_every_mpquic_scheduler_delivers_intact_over_both_paths(mpquic_run):
    _, m = mpquic_run
    flows = sorted(m["flows"].values(), key=lambda f: f["start_s"])[1:-1]
    assert [f["scheduler"] for f in flows] == OTHERS
    for flow in flows:
        assert flow["complete"] and flow["intact"], flow
        for leg in ("a", "b"):  # both paths carry a share of the data
            assert flow["path_bytes"][leg] >= 0.2 * SHORT_MB * 1e6, flow


def test_single_path_quic_stays_on_leg_a(mpquic_run):
    _, m = mpquic_run
    flow = max(m["flows"].values(), key=lambda f: f["start_s"])
    assert flow["scheduler"] == "single-path" and flow["complete"] and flow["intact"], flow
    assert flow["path_bytes"]["a"] >= SHORT_MB * 1e6, flow
    assert flow["path_bytes"]["b"] < 0.02 * SHORT_MB * 1e6, flow

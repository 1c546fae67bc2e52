"""The multipath fairness study (experiments/scenarios/mpquic_fairness.yaml) through the
real chain (root), shortened: its MPQUIC and MPTCP lines, each a multipath flow on the
dual-connected device beside a single-path flow on leg A and one on leg B (tquic for
MPQUIC, TCP for MPTCP: a variant's per-flow keys). Physical invariants:

- the three flows download concurrently: each delivers data in every second of the run
  after its start-up;
- the multipath flow uses both legs (per-path bytes on the device);
- each SC flow's data crossed its own leg (linkem's bytes cover it and the multipath
  flow's share of that leg);
- Jain's index over the three flows' whole-run goodputs comes out.

Legs of 5 Mbit/s keep p4sim below its limit on a loaded 2-core machine; 8 s per run.
"""

import os
from pathlib import Path

import pytest
import yaml

from experiments.analysis import metrics
from experiments.run.runner import RunOptions, run_scenario
from experiments.run.scenario import from_dict
from experiments.tests.test_exp_smoke import assert_nothing_left

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the multipath fairness smoke test needs root (network namespaces)")

STUDY = Path(__file__).resolve().parents[1] / "scenarios" / "mpquic_fairness.yaml"
LEG_MBIT = 5
DURATION_S = 8
STARTUP_S = 2  # handshakes and the servers' first round trips
# the multipath flow's per-path bytes in its result
PATH_BYTES = {"mpquic-minrtt": "path_bytes", "mptcp": "subflow_bytes"}


@pytest.fixture(scope="module")
def fairness_runs(tmp_path_factory):
    doc = yaml.safe_load(STUDY.read_text())
    doc["links"]["both"].update(rate_mbit=LEG_MBIT, queue_pkts=60)
    for flow in doc["flows"]:
        flow["duration_s"] = DURATION_S
    doc["variants"] = [v for v in doc["variants"] if v["label"] in PATH_BYTES]
    doc["repetitions"] = 1
    scenario = from_dict(doc, where=STUDY.name)
    out = tmp_path_factory.mktemp("mpfair") / "mpfair"
    summary = run_scenario(scenario, out, RunOptions())
    manifests = metrics.load_manifests(out)
    assert summary["failed"] == 0, [m["errors"] for m in manifests]
    assert_nothing_left(manifests)
    return out, {m["variant"]: m for m in manifests}


@pytest.mark.parametrize("variant", sorted(PATH_BYTES))
def test_three_flows_download_concurrently(fairness_runs, variant):
    out, manifests = fairness_runs
    m = manifests[variant]
    clients = {f["client"]: f for f in m["flows"].values()}
    assert sorted(clients) == ["dc", "sc-a", "sc-b"]
    for flow in clients.values():
        assert flow["complete"] and flow["bytes"] > 0, flow
    series = metrics.flow_goodput_series(metrics.load_samples(out / "runs" / m["run_id"]))
    seconds = series[(series.index >= STARTUP_S) & (series.index < DURATION_S - 1)]
    per_second = seconds.groupby((seconds.index // 1).astype(int)).sum()
    assert len(per_second) >= DURATION_S - 1 - STARTUP_S
    idle = per_second[(per_second == 0).any(axis=1)]
    assert idle.empty, f"a flow delivered nothing in these seconds:\n{idle}"


@pytest.mark.parametrize("variant", sorted(PATH_BYTES))
def test_multipath_flow_uses_both_legs_and_sc_flows_their_own(fairness_runs, variant):
    out, manifests = fairness_runs
    m = manifests[variant]
    clients = {f["client"]: f for f in m["flows"].values()}
    multipath = clients["dc"]
    paths = multipath[PATH_BYTES[variant]]
    for leg in ("a", "b"):
        assert paths[leg] >= 0.1 * multipath["bytes"], f"leg {leg} barely used: {paths}"
    link = metrics.leg_totals(metrics.load_samples(out / "runs" / m["run_id"]))["link"]
    for leg in ("a", "b"):
        carried = clients[f"sc-{leg}"]["bytes"] + paths[leg]
        assert link[f"{leg}/ab/bytes"] >= 0.95 * carried, (leg, link, carried)
    # Jain's index over the flows' whole-run goodputs (bytes over duration_s), the paper's
    jfi = metrics.jain(f["goodput_mbit"] for f in clients.values())
    assert 1 / 3 <= jfi <= 1, jfi

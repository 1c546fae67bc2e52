"""Scenario validation of the multipath knobs: MPQUIC's scheduler, paths and congestion
controller (tquic's lists), and MPTCP's scheduler (what this kernel offers)."""

import pytest

from experiments.flows import mpquic
from experiments.flows.mptcp import kernel_schedulers
from experiments.run.scenario import ScenarioError, from_dict

LINKS = {"both": {"rate_mbit": 20}}


def scenario(flow: dict, variants=None):
    doc = {"name": "mp", "links": LINKS, "flows": [flow]}
    return from_dict({**doc, "variants": variants} if variants else doc)


def test_mpquic_defaults_to_two_paths_minrtt_and_each_scheduler_is_accepted():
    variants = [{"kind": "mpquic", "scheduler": s} for s in mpquic.SCHEDULERS]
    variants += [{"kind": "mpquic", "paths": 1}, {"kind": "mpquic", "cc": "copa"}]
    sc = scenario({"kind": "mpquic", "size_mb": 1}, variants)
    assert [r.variant for r in sc.runs] == [
        "mpquic-minrtt",
        "mpquic-roundrobin",
        "mpquic-redundant",
        "mpquic-1path",
        "mpquic-copa",
    ]
    flows = [r.config["flows"][0] for r in sc.runs]
    assert [(f["scheduler"], f["paths"]) for f in flows] == [
        ("minrtt", 2),
        ("roundrobin", 2),
        ("redundant", 2),
        ("minrtt", 1),
        ("minrtt", 2),
    ]


@pytest.mark.parametrize(
    "flow, message",
    [
        ({"scheduler": "blest"}, "'blest' is not one of minrtt, roundrobin, redundant"),
        ({"paths": 3}, "paths: 3 is not one of 1, 2"),
        ({"cc": "newreno"}, "'newreno' is not one of cubic, bbr, bbr3, copa"),
        ({"client": "sc-a"}, "kind mpquic downloads size_mb.*client dc"),
        ({"size_mb": None, "duration_s": 5}, "kind mpquic downloads size_mb"),
    ],
)
def test_mpquic_refuses_what_tquic_does_not_offer(flow, message):
    with pytest.raises(ScenarioError, match=message):
        scenario({"kind": "mpquic", "size_mb": 1, **flow})


def test_mptcp_scheduler_is_one_the_kernel_offers():
    offered = kernel_schedulers()
    assert "default" in offered
    sc = scenario({"kind": "mptcp", "size_mb": 1})
    assert sc.runs[0].config["flows"][0]["scheduler"] == "default"
    missing = next(s for s in ("blest", "redundant", "roundrobin") if s not in offered)
    with pytest.raises(ScenarioError, match=f"not offered by this kernel .*{offered[0]}"):
        scenario({"kind": "mptcp", "size_mb": 1, "scheduler": missing})
    with pytest.raises(ScenarioError, match="paths: applies to kind mpquic only"):
        scenario({"kind": "mptcp", "size_mb": 1, "paths": 2})


def test_other_kinds_refuse_the_multipath_knobs():
    for key, value in (("scheduler", "minrtt"), ("paths", 2)):
        with pytest.raises(ScenarioError, match=f"{key}: applies to kinds mpquic and mptcp"):
            scenario({"kind": "tcp", "size_mb": 1, key: value})

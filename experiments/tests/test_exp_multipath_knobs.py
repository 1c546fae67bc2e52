"""Scenario validation of the multipath knobs: MPQUIC's scheduler, paths and congestion
controller (tquic's lists), and MPTCP's scheduler (what this kernel offers)."""

import json

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
        ({"client": "sc-a"}, "kind mpquic with paths 2 runs on the dual-connected device"),
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


def test_mpquic_downloads_for_a_duration_and_single_path_runs_on_an_sc_client():
    sc = scenario({"kind": "mpquic", "duration_s": 5})
    assert sc.runs[0].config["flows"][0]["duration_s"] == 5
    sc = scenario({"kind": "mpquic", "paths": 1, "client": "sc-b", "duration_s": 5})
    assert sc.runs[0].config["flows"][0]["client"] == "sc-b"


FAIRNESS_FLOWS = [
    {"client": "dc", "duration_s": 5},
    {"client": "sc-a", "duration_s": 5},
    {"client": "sc-b", "duration_s": 5},
]


def test_a_variants_per_flow_keys_win_over_its_keys_for_every_flow():
    """MPQUIC beside single-path tquic SC flows, MPTCP beside TCP: one variant each."""
    sc_quic = {"flows.1.paths": 1, "flows.2.paths": 1}
    variants = [
        {"kind": "mpquic", "cc": "cubic", "scheduler": "roundrobin", **sc_quic},
        {"kind": "mptcp", "cc": "cubic", "flows.1.kind": "tcp", "flows.2.kind": "tcp"},
    ]
    sc = from_dict({"name": "f", "links": LINKS, "flows": FAIRNESS_FLOWS, "variants": variants})
    quic, tcp = (r.config["flows"] for r in sc.runs)
    assert [(f["kind"], f["paths"], f["scheduler"]) for f in quic] == [
        ("mpquic", 2, "roundrobin"),
        ("mpquic", 1, "roundrobin"),  # the variant's stack knob still reaches its stack
        ("mpquic", 1, "roundrobin"),
    ]
    assert [(f["kind"], f["scheduler"]) for f in tcp] == [
        ("mptcp", "default"),
        ("tcp", None),
        ("tcp", None),
    ]
    assert sc.runs[0].variant == "mpquic-cubic-roundrobin-flows.1.paths-1-flows.2.paths-1"


@pytest.mark.parametrize(
    "variant, message",
    [
        ({"kind": "mpquic"}, "flows\\[1\\].client: kind mpquic with paths 2 runs on the dual"),
        ({"kind": "mptcp"}, "flows\\[1\\].client: kind mptcp runs on the dual-connected"),
        ({"flows.3.kind": "tcp"}, "flows.3.kind: there is no flow 3 \\(flows has 3\\)"),
        ({"flows.1.colour": "red"}, "unknown flow key 'colour'; allowed keys: cc, client"),
        ({"flows.x.kind": "tcp"}, "unknown key 'flows.x.kind'; allowed keys: cc, client"),
    ],
)
def test_a_variant_that_cannot_run_every_flow_is_refused(variant, message):
    with pytest.raises(ScenarioError, match=message):
        from_dict({"name": "f", "links": LINKS, "flows": FAIRNESS_FLOWS, "variants": [variant]})


def test_mptcp_per_leg_bytes_survive_the_subflows_teardown_and_a_rejoin(tmp_path):
    """The server's last TCP_INFO record is taken after the client closed: a leg may be
    gone from it or read 0 (CI once saw {'a': 0}). A leg's bytes are what its subflows
    carried over the run; a subflow re-joined after an outage adds on."""
    from experiments.flows import FlowContext
    from experiments.flows.mptcp import MptcpFlow
    from experiments.run.parts import MP_ADDRS

    def record(ts, **acked):
        subs = [
            {"remote": MP_ADDRS[leg], "bytes_acked": n, "rtt_ms": 10.0, "cwnd_bytes": 1500}
            for leg, n in acked.items()
        ]
        return json.dumps({"ts": ts, "subflows": subs})

    log = [record(1.0, a=100, b=200), record(2.0, a=300, b=500)]
    log += [record(3.0, a=40, b=700), record(4.0, a=90, b=900), record(5.0, a=0)]
    (tmp_path / "server.jsonl").write_text("\n".join(log) + "\n")
    ctx = FlowContext("f0", None, None, "10.0.0.1", 1, tmp_path, tmp_path, None, None, t0=0.0)
    flow = MptcpFlow(spec={"size_mb": None, "scheduler": "default"}, ctx=ctx)
    assert flow.result()["subflow_bytes"] == {"a": 300 + 90, "b": 900}
    acked_a = [v for _t, k, v in flow.samples() if k == "subflow_a_bytes"]
    assert acked_a == [100, 300, 340, 390, 390]

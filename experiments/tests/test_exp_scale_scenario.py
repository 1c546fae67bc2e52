"""Scaled rates (dcexp run --scale K, experiments/run/scale.py) on the paper's fairness
files: rates / K, delays and RTT-defined times x K, everything counted in packets unchanged;
refused in one line where the scaling has no meaning."""

import re
from pathlib import Path

import pytest

from experiments.cli import main as dcexp
from experiments.run.runner import RunOptions, _manifest_head
from experiments.run.scenario import ScenarioError, from_dict, load

PAPER = Path(__file__).resolve().parent.parent / "paper"
FAIRNESS = sorted(PAPER.glob("*_fairness.yaml"))
MTU_BITS = 1500 * 8
LEGS = ("a", "b")


def _bdp_pkts(links: dict, leg: str) -> float:
    """Packets in flight on a leg at its rate over its round trip (downlink + uplink)."""
    rtt_ms = links[leg]["delay_ms"] + links[f"{leg}_uplink"].get("delay_ms", 0)
    return links[leg]["rate_mbit"] * 1e6 * rtt_ms / 1000 / MTU_BITS


@pytest.mark.parametrize("k", [2, 2.5])
@pytest.mark.parametrize("path", FAIRNESS, ids=lambda p: p.name)
def test_the_paper_fairness_files_scale_with_the_same_packets_in_flight(path, k):
    plain = {r.run_id: r for r in load(path, paper=True).runs}
    scaled = load(path, paper=True, scale=k)
    assert scaled.doc["scale"] == k
    assert [r.run_id for r in scaled.runs] == list(plain)  # the same points and variants
    for run in scaled.runs:
        ref, cfg = plain[run.run_id].config, run.config
        assert run.scale == k and (run.point, run.variant) == (
            plain[run.run_id].point,
            plain[run.run_id].variant,
        )
        for leg in LEGS:
            new, old = cfg["links"][leg], ref["links"][leg]
            assert new["rate_mbit"] == pytest.approx(old["rate_mbit"] / k)
            assert new["delay_ms"] == pytest.approx(old["delay_ms"] * k)
            assert _bdp_pkts(cfg["links"], leg) == pytest.approx(_bdp_pkts(ref["links"], leg))
            for same in ("queue_pkts", "delay_cv", "loss"):
                assert new.get(same) == old.get(same), same
        ratio = cfg["links"]["a"]["rate_mbit"] / cfg["links"]["b"]["rate_mbit"]
        assert ratio == pytest.approx(
            ref["links"]["a"]["rate_mbit"] / ref["links"]["b"]["rate_mbit"]
        )
        assert cfg["t_reordering_ms"] == pytest.approx(ref["t_reordering_ms"] * k)
        assert cfg["dc"] == ref["dc"]  # batches and split are packet counts
        for new, old in zip(cfg["flows"], ref["flows"], strict=True):
            assert new["duration_s"] == pytest.approx(old["duration_s"] * k)
            assert {**new, "duration_s": 0} == {**old, "duration_s": 0}


@pytest.mark.parametrize("path", FAIRNESS[:2], ids=lambda p: p.name)
def test_scale_1_changes_nothing(path):
    plain, one = load(path, paper=True), load(path, paper=True, scale=1)
    assert "scale" not in one.doc and one.doc == plain.doc
    assert [(r.run_id, r.config, r.scale) for r in one.runs] == [
        (r.run_id, r.config, 1.0) for r in plain.runs
    ]


def _doc(**over):
    doc = {
        "name": "s",
        "links": {
            "both": {"rate_mbit": 20, "delay_ms": 10, "jitter_ms": 1, "queue_bytes": 150_000},
            "a_uplink": {"rate_mbit": 10, "delay_ms": 2},
        },
        "flows": [{"kind": "ngtcp2", "duration_s": 20, "start_s": 1, "client": "dc"}],
        "timeout_s": 60,
    }
    return doc | over


def test_events_sweeps_and_absolute_times_scale_alike():
    events = [{"at_s": 5, "link": "b", "set": {"rate_mbit": 5, "delay_ms": 30}}]
    sweep = {"param": "links.both.rate_mbit", "values": [10, 40]}
    runs = from_dict(_doc(events=events, sweep=sweep), scale=4).runs
    assert [r.point for r in runs] == [10, 40]  # the points keep the names of scale 1
    cfg = runs[1].config
    assert [cfg["links"][leg]["rate_mbit"] for leg in LEGS] == [10, 10]
    assert cfg["links"]["a"]["jitter_ms"] == 4 and cfg["links"]["a"]["queue_bytes"] == 150_000
    assert cfg["links"]["a_uplink"] == {"rate_mbit": 2.5, "delay_ms": 8, "jitter_ms": 4}
    assert cfg["events"] == [
        {"at_s": 20, "link": "b", "direction": "down", "set": {"rate_mbit": 1.25, "delay_ms": 120}}
    ]
    assert (cfg["flows"][0]["duration_s"], cfg["flows"][0]["start_s"]) == (80, 4)
    assert from_dict(_doc(), scale=4).doc["timeout_s"] == 240
    unswept = {"both": {"delay_ms": 10}}  # the rate comes from the sweep alone
    runs = from_dict(_doc(links=unswept, sweep=sweep), scale=4).runs
    assert [r.config["links"]["b"]["rate_mbit"] for r in runs] == [2.5, 10]


def test_a_download_by_size_keeps_its_size():
    flows = [{"kind": "ngtcp2", "size_mb": 100, "client": "dc"}]
    [run] = from_dict(_doc(flows=flows), scale=3).runs
    assert run.config["flows"][0]["size_mb"] == 100  # the same packets, K times the time


@pytest.mark.parametrize(
    "over,message",
    [
        ({"links": {"both": {"trace": "x.trace"}}}, "links.both.trace: a trace-driven leg"),
        ({"links": {"both": {"delay_ms": 10}}}, "links.a: no rate_mbit (unlimited)"),
        ({"feedback": {}}, "cannot scale the split loops"),
        ({"control": {"policy": "capacity"}}, "cannot scale the split loops"),
        ({"dc": {"credit": True}}, "dc.credit: --scale cannot scale the split loops"),
        (
            {"sweep": {"param": "dc.credit", "values": [False, True]}},
            "dc.credit: --scale cannot scale",
        ),
    ],
)
def test_what_cannot_scale_is_refused_in_one_line(over, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        from_dict(_doc(**over), scale=2)


def test_the_cli_checks_k_and_the_manifest_records_it(capsys):
    with pytest.raises(SystemExit) as exc:
        dcexp(["validate", "--scale", "-2", str(FAIRNESS[0])])
    assert exc.value.code == 2
    assert "--scale '-2' must be a number above 0 up to 100" in capsys.readouterr().err
    assert dcexp(["validate", "--paper", "--scale", "2", str(FAIRNESS[0])]) == 0
    [run] = from_dict(_doc(), scale=2).runs
    manifest = _manifest_head(run, RunOptions(), "dx0000", {})
    assert manifest["scale"] == 2 and manifest["config"]["links"]["a"]["rate_mbit"] == 10

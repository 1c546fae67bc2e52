"""The paper's campaign (experiments/paper/), its report and the CPU accounting.

Unit tests on hand-made numbers (per-process CPU, pin layouts, the verdict rules), the
fidelity of the shipped studies to PAPER.md's setup, and one tiny campaign through the real
chain (root): the overhead study's two paths, the SC baseline without agent and DC on one
leg, each with a ping probe and a TCP download; it must resume without repeating a run and
`dcexp report --paper` must write the overhead table and the PDF.
"""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from experiments.analysis import reproduction
from experiments.cli import main as dcexp
from experiments.run import cpu
from experiments.run.campaign import load_campaign
from experiments.run.scenario import load
from experiments.run.testbed import leftovers

PAPER = Path(__file__).resolve().parent.parent / "paper"
STUDIES = sorted(PAPER.glob("*.yaml"))


# ---------------------------------------------------------------- per-process CPU
def test_process_usage_sums_threads_and_takes_the_busiest_threads_demand():
    interval = 100_000_000  # 100 ms in ns
    prev = {1: (0, 0), 2: (0, 0)}
    cur = {1: (60_000_000, 38_000_000), 2: (10_000_000, 0), 3: (5_000_000, 0)}  # 3 is new
    use = cpu.process_usage(prev, cur, interval)
    assert use["busy"] == pytest.approx(0.70)  # thread 3 appeared meanwhile: not counted
    assert use["wait"] == pytest.approx(0.38)
    assert use["demand"] == pytest.approx(0.98)  # thread 1 wanted a CPU 98% of the time


def test_a_process_is_saturated_when_its_demand_is_high_in_a_quarter_of_the_samples():
    rows = []
    for i in range(8):  # switch: demand 0.97 in 2 of 8 samples; agent: never
        rows.append((i, "proc", "switch", "busy", 0.5))
        rows.append((i, "proc", "switch", "wait", 0.47 if i < 2 else 0.1))
        rows.append((i, "proc", "switch", "demand", 0.97 if i < 2 else 0.6))
        for metric, value in (("busy", 0.2), ("wait", 0.1), ("demand", 0.3)):
            rows.append((i, "proc", "agent", metric, value))
        rows.append((i, "cpu", "cpu0", "busy", 1.0))  # a busy core alone decides nothing
    got = cpu.saturated_processes(rows)
    assert got["saturated_processes"] == ["switch"]
    assert got["process_cpu"]["switch"]["saturated_share"] == pytest.approx(0.25)
    assert got["process_cpu"]["agent"]["mean_busy"] == pytest.approx(0.2)


def test_pin_layouts_keep_flows_off_the_switch_cpu():
    assert cpu.pin_sets("none", 2) is None
    assert cpu.pin_sets("switch", 1) is None  # nothing to separate on one CPU
    split = cpu.pin_sets("split", 4)
    assert split == {"switch": {0}, "network": {0}, "flows": {1, 2, 3}}
    alone = cpu.pin_sets("switch", 2)
    assert alone["switch"] == {0} and 0 not in alone["flows"] | alone["network"]
    with pytest.raises(ValueError, match="split, switch, chain, none"):
        cpu.pin_sets("spread", 2)


# ---------------------------------------------------------------- verdict rules
def _study(points, rows, param="dc.batch"):
    table = pd.DataFrame(rows, columns=["variant", "point", "mean", "std", "count"])
    doc = {"name": "t", "sweep": {"param": param, "values": points}}
    return reproduction.StudyData("t", doc, [], pd.DataFrame(), pd.DataFrame(), points), table


def test_batch_rule_agrees_partly_and_disagrees():
    study, table = _study(
        [10, 100, 500],
        [
            ("a", 10, 30.0, 1, 3),
            ("a", 100, 36.0, 1, 3),
            ("a", 500, 28.0, 1, 3),  # large batch 22% below the mid range: agrees
            ("b", 10, 30.0, 1, 3),
            ("b", 100, 30.0, 1, 3),
            ("b", 500, 31.0, 1, 3),  # no drop
        ],
    )
    verdict, _rule, notes = reproduction.check_batch(study, table, "goodput")
    assert verdict == "partly" and len(notes) == 2
    verdict, *_ = reproduction.check_batch(study, table[table.variant == "a"], "goodput")
    assert verdict == "agree"
    verdict, *_ = reproduction.check_batch(study, table[table.variant == "b"], "goodput")
    assert verdict == "disagree"


def test_drop_and_flat_rules_follow_the_sweep_order_not_the_row_order():
    study, table = _study(
        ["1:1", "3:1", "5:1"],
        [("a", "5:1", 20.0, 1, 2), ("a", "1:1", 36.0, 1, 2), ("a", "3:1", 30.0, 1, 2)],
        param="bandwidth_ratio",
    )
    assert reproduction.check_drop(study, table, 0.10, "goodput")[0] == "agree"
    assert reproduction.check_flat(study, table, 0.05, "goodput")[0] == "disagree"
    one_point, t1 = _study(["1:1"], [("a", "1:1", 36.0, 1, 2)])
    assert reproduction.check_drop(one_point, t1, 0.1, "goodput")[0] == "not measured"


# ---------------------------------------------------------------- fidelity to PAPER.md
@pytest.mark.parametrize("path", STUDIES, ids=[p.stem for p in STUDIES])
def test_paper_studies_follow_the_papers_setup(path):
    for quick in (False, True):
        scenario = load(path, quick=quick)
        for run in scenario.runs:
            cfg = run.config
            assert cfg["t_reordering_ms"] == 200
            links = cfg["links"]
            assert links["a_uplink"]["delay_ms"] == 0  # netem on the downlinks only
            if "trace" not in links["a"]:
                assert links["a"]["rate_mbit"] + links["b"]["rate_mbit"] == pytest.approx(
                    40, abs=0.01
                )  # constant mean in the bandwidth-ratio studies
            total_delay = links["a"]["delay_ms"] + links["b"]["delay_ms"]
            assert total_delay == pytest.approx(200 if "high" in scenario.name else 20, abs=0.01)
            clients = sorted(f["client"] for f in cfg["flows"] if f["kind"] != "ping")
            if scenario.doc["figure"] == "fairness":
                assert clients == ["dc", "sc-a", "sc-b"]
                assert all(
                    f["udp_rcvbuf"] == "large" for f in cfg["flows"] if f["kind"] == "aioquic"
                )
        if not quick:
            assert scenario.doc["repetitions"] == 10


def test_the_campaign_covers_every_study_of_the_papers_table():
    names = {s.name for s in load_campaign(PAPER, quick=True)}
    assert names == {s.name for s in reproduction.STUDIES} | {"overhead"}


# ---------------------------------------------------------------- through the real chain
@pytest.mark.netns
def test_tiny_campaign_resumes_and_reports(tmp_path):
    if os.geteuid() != 0:
        raise RuntimeError("the campaign test needs root (network namespaces)")
    doc = yaml.safe_load((PAPER / "00_overhead.yaml").read_text())
    doc["sweep"] = {
        "param": "path",
        "values": ["sc", "dc-1leg"],
        "set": {"dc.mode": ["sc", "dc"], "dc.ratio": ["1:0", "1:0"]},
    }
    doc["flows"] = [
        {"kind": "ping", "client": "dc", "duration_s": 1},
        {"client": "dc", "size_mb": 1, "start_s": 1.2},
    ]
    doc["variants"] = [{"kind": "tcp", "cc": "newreno"}]
    doc["repetitions"] = 1
    studies = tmp_path / "studies"
    studies.mkdir()
    (studies / "00_overhead.yaml").write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    assert dcexp(["campaign", str(studies), "--out", str(out)]) == 0
    manifests = [json.loads(p.read_text()) for p in sorted(out.glob("overhead/runs/*/*.json"))]
    assert [m["point"] for m in manifests] == ["dc-1leg", "sc"]
    for m in manifests:
        assert m["status"] == "ok", m["errors"]
        ping = m["flows"]["f0-dc"]
        # the downlink delay is normal, mean 10 ms, sd 1 ms; the uplink adds none
        assert ping["replies"] >= 10 and 9 < ping["rtt_ms_median"] < 100
        assert m["flows"]["f1-dc"]["goodput_mbit"] > 5
        procs = set(m["process_cpu"])
        assert {"switch", "link_a", "link_b", "f1-dc/server", "f1-dc/client"} <= procs
        assert ("agent" in procs) == (m["point"] == "dc-1leg")  # the SC path has no agent
        assert m["pin"] == "split" and isinstance(m["saturated_processes"], list)
        assert leftovers(m["prefix"]) == []
    record = json.loads((out / "campaign.json").read_text())
    assert record["summary"]["ok"] == 2
    # a second invocation resumes: nothing left to run
    assert dcexp(["campaign", str(studies), "--out", str(out)]) == 0
    assert json.loads((out / "campaign.json").read_text())["summary"]["skipped"] == 2
    assert dcexp(["report", "--paper", str(out)]) == 0
    text = (out / "reproduction.md").read_text()
    assert "| tcp-newreno | dc-1leg |" in text and "| tcp-newreno | sc |" in text
    assert "goodput cost" in text and "kernel's smoothed RTT" in text
    assert (out / "reproduction.pdf").stat().st_size > 10_000
    assert (out / "figures" / "overhead" / "overhead.png").exists()

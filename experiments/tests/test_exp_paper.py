"""The paper's campaign (experiments/paper/), its report and the CPU accounting.

Unit tests on hand-made numbers (per-process CPU, pin layouts, the verdict rules), the
fidelity of the shipped studies to PAPER.md's setup, and one tiny campaign through the real
chain (root): the overhead study's two paths, the SC baseline without agent and DC on one
leg, each with a ping probe and a TCP download; it must resume without repeating a run and
`dcexp report --paper` must write the overhead table and the PDF.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from experiments.analysis import (
    deviations,
    findings,
    metrics,
    paper_plots,
    paperdata,
    reproduction,
    stats,
)
from experiments.cli import main as dcexp
from experiments.run import cpu, limits
from experiments.run.campaign import load_campaign
from experiments.run.scenario import ScenarioError, load, variant_label
from experiments.run.testbed import leftovers
from experiments.tests.test_exp_analysis import _fake_run

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


# ---------------------------------------------------------------- statistics and verdict rules
def test_t_quantiles_and_confidence_intervals_match_the_tables():
    assert stats.t975(1) == 12.706 and stats.t975(9) == 2.262
    assert stats.t975(35) == pytest.approx(2.030, abs=0.005)  # between 30 and 40
    assert stats.t975(1000) == pytest.approx(1.962, abs=0.003)
    est = stats.estimate([0.80, 0.90, 1.00])  # sd 0.1, n 3: half = 4.303 * 0.1 / sqrt 3
    assert est.n == 3 and est.mean == pytest.approx(0.9)
    assert est.half == pytest.approx(4.303 * 0.1 / 3**0.5)
    assert "(n=3)" in est.text() and "[" in est.text()
    assert stats.estimate([0.5]).text() == "0.5 (n=1)"  # no interval from one run


def test_a_ci_crossing_its_quantitys_range_is_clipped_and_says_so():
    """Recovery times 0.1, 0.2, 1.5 s: the t interval 0.6 ± 1.9 would print -1.3 s."""
    plain = stats.estimate([0.1, 0.2, 1.5])
    assert plain.low < 0 and plain.clipped_at == []  # a difference may be negative
    times = stats.estimate([0.1, 0.2, 1.5], stats.NON_NEGATIVE)
    assert times.low == 0 and times.high == plain.high and times.half == plain.half
    assert times.text() == f"0.6 [0, {plain.high:.3g}] (n=3, CI clipped at 0)"
    jfi = stats.estimate([0.99, 1.0, 0.5], stats.JAIN_OF_3)  # crosses both ends
    assert (jfi.low, jfi.high) == (1 / 3, 1.0)
    assert jfi.text().endswith("(n=3, CI clipped at 0.333 and 1)")
    inside = stats.estimate([20.0, 21.0, 22.0], stats.NON_NEGATIVE)
    assert inside.text() == "21 [18.5, 23.5] (n=3)"  # nothing to say when inside
    with pytest.raises(ValueError, match="at least 1"):
        stats.t975(0.5)


def test_welch_difference_is_significant_only_beyond_the_noise():
    assert stats.welch([30, 31, 32], [20, 21, 22]).significant
    noisy = stats.welch([30, 20, 40], [28, 18, 38])
    assert noisy.diff == pytest.approx(-2) and not noisy.significant
    assert not stats.welch([30], [20, 21]).significant  # one run: no CI, never significant


def test_direction_rule_agrees_partly_and_disagrees_and_names_missing_points():
    values = {
        "ngtcp2-newreno": {50: [35, 35.5, 34.5], 500: [25, 26, 24]},  # a clear drop
        "ngtcp2-cubic": {50: [35, 25, 45], 500: [33, 23, 43]},  # a drop within the noise
        "aioquic-newreno": {50: [20, 21, 22], 500: [30, 31, 32]},  # the opposite
        "tcp-newreno": {50: [35, 35, 35]},  # 500 did not run
    }
    rows = {r.variant: r for r in findings.direction(values, "goodput", (50,), (500,), -1)}
    assert rows["ngtcp2-newreno"].verdict == "agree"
    assert rows["ngtcp2-cubic"].verdict == "partly"
    assert rows["aioquic-newreno"].verdict == "disagree"
    assert rows["tcp-newreno"].verdict == "not run" and "500" in rows["tcp-newreno"].note
    assert findings.combine(list(rows.values())) == "partly"


def test_buffer_finding_is_judged_at_the_large_batch_only():
    """The receive-buffer finding on the batch sweep compares the two buffers at batch 500:
    a gap at 500 agrees though the small batches show none."""
    values = {
        "aioquic-newreno": {50: [37.2, 37.3, 37.1], 500: [27.5, 27.9, 27.7]},
        findings.PAPER_STACK: {50: [37.3, 37.2, 37.2], 500: [34.4, 34.6, 34.5]},
    }
    [row] = findings.variants_order(
        findings.at_points(values, 500), "aioquic-newreno", findings.PAPER_STACK
    )
    assert row.verdict == "agree" and "27.7" in row.ours and "34.5" in row.ours
    [pooled_small] = findings.variants_order(
        findings.at_points(values, 50), "aioquic-newreno", findings.PAPER_STACK
    )
    assert pooled_small.verdict == "partly"


def test_fairness_values_judge_the_papers_stack_and_leave_tcp_without_counterpart():
    values = {
        findings.PAPER_STACK: {"5:1": [0.55, 0.60, 0.62]},
        "tcp-newreno": {"5:1": [0.48, 0.47, 0.48]},
        "ngtcp2-newreno": {"5:1": [0.55, 0.56, 0.55]},
    }
    rows = {r.variant: r for r in findings.value(values, "jfi", "5:1", 0.59)}
    assert rows[findings.PAPER_STACK].verdict == "agree"
    assert rows["tcp-newreno"].verdict == "no counterpart"
    assert "TCP is not in the paper's fairness tests" in rows["tcp-newreno"].note
    assert rows["ngtcp2-newreno"].verdict == "no counterpart"
    far = findings.value({findings.PAPER_STACK: {"5:1": [0.80, 0.81, 0.82]}}, "jfi", "5:1", 0.59)
    assert far[0].verdict == "disagree"


def test_the_papers_stack_on_uvloop_is_judged_as_the_papers_stack():
    uvloop = findings.PAPER_STACK + "-uvloop"
    rows = findings.value({uvloop: {"5:1": [0.55, 0.60, 0.62]}}, "jfi", "5:1", 0.59)
    assert rows[0].verdict == "agree"
    assert not findings.is_paper_stack("aioquic-newreno-uvloop")  # default buffer: not it
    assert paper_plots.stack_name(uvloop) == "aioquic NewReno, enlarged UDP buffer, uvloop"


def test_flat_rule_needs_the_ci_of_the_change_inside_the_tolerance():
    tight = {"ngtcp2-newreno": {0: [0.97, 0.971, 0.969], 0.0008: [0.968, 0.97, 0.969]}}
    assert findings.flat(tight, "jfi", (0,), (0.0008,), 0.05)[0].verdict == "agree"
    wide = {"ngtcp2-newreno": {0: [0.99, 0.80, 0.95], 0.0008: [0.97, 0.78, 0.99]}}
    assert findings.flat(wide, "jfi", (0,), (0.0008,), 0.05)[0].verdict == "partly"
    falls = {"ngtcp2-newreno": {0: [0.97, 0.96, 0.97], 0.0008: [0.80, 0.81, 0.79]}}
    assert findings.flat(falls, "jfi", (0,), (0.0008,), 0.05)[0].verdict == "disagree"
    missing = findings.flat({"ngtcp2-newreno": {0: [0.97]}}, "jfi", (0,), (0.0008,), 0.05)
    assert missing[0].verdict == "not run" and "0.0008" in missing[0].note


def test_duplication_is_judged_relative_to_the_split_under_the_same_loss():
    dup = {"ngtcp2-newreno": {0: [18.3, 18.4, 18.3], 0.05: [9.0, 8.0, 10.0]}}
    split = {"ngtcp2-newreno": {0: [35.4, 35.5, 35.4], 0.05: [0.76, 0.8, 0.72]}}
    row = findings.more_stable(dup, split)[0]
    assert row.verdict == "agree" and "loss 0.05" in row.ours
    assert findings.more_stable(dup, {})[0].verdict == "not run"


def test_duplication_rows_not_run_say_which_runs_are_missing():
    dup = {"tcp-cubic": {0: [37.0], 0.05: [30.0]}, "tcp-newreno": {0.05: [30.0]}}
    split = {"tcp-newreno": {0: [37.0], 0.01: [20.0]}}
    notes = {row.variant: row.note for row in findings.more_stable(dup, split)}
    assert notes["tcp-cubic"] == "the loss study has no tcp-cubic runs"
    assert notes["tcp-newreno"] == "no loss-free runs in the duplication study"


def test_duplication_is_judged_at_the_top_of_its_loss_range_not_a_small_shared_rate():
    # Both studies share 0.0008, where neither loses much; the claim is about rising losses.
    dup = {"tcp-newreno": {0: [37.0, 37.1], 0.0008: [36.9, 37.0], 0.05: [30.0, 31.0]}}
    split = {"tcp-newreno": {0: [37.0, 37.2], 0.0008: [17.8, 18.0], 0.005: [5.2, 5.1]}}
    row = findings.more_stable(dup, split)[0]
    assert row.verdict == "not run"
    assert row.note == (
        "the loss study has no tcp-newreno runs at loss 0.05 (the duplication study's largest)"
    )
    split["tcp-newreno"][0.05] = [0.7, 0.8]
    row = findings.more_stable(dup, split)[0]
    assert row.verdict == "agree" and "kept at loss 0.05" in row.ours


def test_stacks_below_needs_significance_at_every_point():
    values = {
        "aioquic-newreno": {"1:1": [14, 15, 14.5], "5:1": [8, 8.1, 7.9]},
        "ngtcp2-newreno": {"1:1": [26, 27, 26.5], "5:1": [5.5, 5.6, 5.4]},
    }
    row = findings.stacks_below(values, "ngtcp2", "aioquic")[0]
    assert row.verdict == "partly" and "above at 1:1" in row.note
    tied = {
        "aioquic-newreno": {"-": [37.1, 37.2, 37.0]},
        "ngtcp2-newreno": {"-": [37.0, 37.3, 36.9]},
    }
    row = findings.stacks_below(tied, "aioquic", "ngtcp2")[0]
    assert (row.verdict, row.note) == ("partly", "no significant difference")
    greedy = {
        "aioquic-newreno": {"-": [37.1, 37.2, 37.0]},
        "ngtcp2-newreno": {"-": [30, 30.2, 29.9]},
    }
    row = findings.stacks_below(greedy, "aioquic", "ngtcp2")[0]
    assert row.verdict == "disagree" and "aioquic-newreno significantly above" in row.note


def test_only_a_significant_difference_confirms_or_refutes_a_direction():
    def verdict(first, second):
        values = {"ngtcp2-newreno": {10: first, 50: second}}
        return findings.direction(values, "goodput", (10,), (50,), +1)[0].verdict

    assert verdict([30, 30.1, 29.9], [37, 37.1, 36.9]) == "agree"
    assert verdict([37.2, 37.1, 37.3], [37.1, 36.8, 37.4]) == "partly"  # opposite, within noise
    assert verdict([37, 37.1, 36.9], [30, 30.1, 29.9]) == "disagree"


def _write_campaign(tmp_path, rows):
    """A committed-style campaign: scenario.yaml per study and one runs.csv, no run dirs."""
    for study in ("batch-size-fairness", "loss"):
        doc = load(PAPER / {"batch-size-fairness": "03_batch_size_fairness.yaml",
                            "loss": "14_loss.yaml"}[study], quick=True).doc  # fmt: skip
        (tmp_path / study).mkdir()
        (tmp_path / study / "scenario.yaml").write_text(yaml.safe_dump(doc))
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)


def test_report_from_runs_csv_uses_the_whole_run_index(tmp_path):
    rows = []
    for point, shares in ((10, (12, 11, 10)), (500, (20, 5, 5))):
        for rep in range(3):
            run = f"dc.batch={point}__ngtcp2-newreno__rep{rep}"
            for client, goodput in zip(("dc", "sc-a", "sc-b"), shares):
                rows.append({"study": "batch-size-fairness", "run_id": run, "point": point,
                             "variant": "ngtcp2-newreno", "rep": rep, "status": "ok",
                             "flow": f"f-{client}", "client": client, "kind": "ngtcp2",
                             "goodput_mbit": goodput + rep * 0.1, "jfi": 0.99,
                             "cpu_saturated": False, "git_commit": "abc"})  # fmt: skip
    for point, goodput in ((0, 35.0), (0.01, 3.0)):
        for rep in range(3 + (point == 0)):  # a fourth pass at one point only
            rows.append({"study": "loss", "run_id": f"l={point}__ngtcp2-newreno__rep{rep}",
                         "point": point, "variant": "ngtcp2-newreno", "rep": rep,
                         "status": "ok", "flow": "f0-dc", "client": "dc", "kind": "ngtcp2",
                         "goodput_mbit": goodput + rep * 0.2, "cpu_saturated": rep == 2,
                         "git_commit": "abc"})  # fmt: skip
    _write_campaign(tmp_path, rows)
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    text = (tmp_path / "reproduction.md").read_text()
    whole = sum(metrics.jain([20 + r / 10, 5 + r / 10, 5 + r / 10]) for r in range(3)) / 3
    measured, slots = text.split("We measured")[1].split("For comparison")[:2]
    assert f"| {whole:.3g} [" in measured  # the paper's index, first
    assert "| 0.99 (n=3) |" in slots.split("**Finding")[0] or "0.99 [0.99, 0.99]" in slots
    assert "Jain's index as the paper defines it" in text
    # the runs in the data, not the scenario file's --reps (1: the quick profile's)
    assert "As run: runs of 15 s; 3 repetitions at each of 10, 500; stacks" in text
    assert "3 to 4 repetitions at each of 0, 0.01; stacks" in text  # 0.05 did not run
    assert "| ngtcp2-newreno | 10:" in text and "| agree |" in text
    assert "ours, no counterpart" not in text.split("## Deviations")[0]  # no TCP here
    assert "0.08 %" in text or "0.0008" in text  # loss fairness names the missing point
    assert "## Deviations from the paper's testbed" in text and "iperf3 in reverse" in text
    assert (tmp_path / "figures" / "batch-size-fairness" / "fairness_vs_param.png").exists()
    assert (tmp_path / "reproduction.pdf").stat().st_size > 10_000
    saved = pd.read_csv(tmp_path / "runs.csv")
    assert "jfi_slots" in saved and len(saved) == len(rows)


def _stalling_dc_study(tmp_path, sc_extra=0.0):
    """batch-size-fairness with run directories: at batch 500 the DC client stalls for the
    last third of each run; SC clients at 10 Mbit/s (+ rep + `sc_extra`)."""
    study = tmp_path / "batch-size-fairness"
    study.mkdir()
    doc = load(PAPER / "03_batch_size_fairness.yaml", quick=True).doc
    (study / "scenario.yaml").write_text(yaml.safe_dump(doc))
    for point in (10, 500):
        for rep in range(2):
            dc = [20.0] * 20 + [0.0] * 10 if point == 500 else [12.0] * 30
            flows = {
                "f0-dc": {"client": "dc", "kind": "ngtcp2", "goodput_mbit": sum(dc) / 30},
                "f1-sc-a": {
                    "client": "sc-a",
                    "kind": "ngtcp2",
                    "goodput_mbit": 10.0 + rep + sc_extra,
                },
                "f2-sc-b": {"client": "sc-b", "kind": "ngtcp2", "goodput_mbit": 10.0},
            }
            series = {"f0-dc": dc, "f1-sc-a": [10.0 + rep] * 30, "f2-sc-b": [10.0] * 30}
            run = f"dc.batch={point}__ngtcp2-newreno__rep{rep}"
            _fake_run(study, run, point, "ngtcp2-newreno", rep, flows, series)
            manifest = study / "runs" / run / "manifest.json"
            m = json.loads(manifest.read_text())
            m["config"]["dc"]["batch"] = point  # what the time series picks its run by
            m["config"]["flows"] = [{"duration_s": 3.0}]
            manifest.write_text(json.dumps(m))
    return study


def test_report_from_run_directories_puts_the_whole_run_index_first(tmp_path):
    """The DC client stalls for the last third of each run: the slot-filtered index (only
    the slots in which all three receive) misses it, the paper's whole-run index does not."""
    _stalling_dc_study(tmp_path)
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    text = (tmp_path / "reproduction.md").read_text()
    whole = [metrics.jain([sum([20.0] * 20) / 30, 10 + r, 10]) for r in range(2)]
    slots = [metrics.jain([20, 10 + r, 10]) for r in range(2)]
    measured, compared = text.split("We measured")[1].split("For comparison")[:2]
    assert f"{sum(whole) / 2:.3g} [" in measured and f"{sum(slots) / 2:.3g} [" in compared
    saved = pd.read_csv(tmp_path / "runs.csv")
    at500 = saved[saved.point == 500]
    assert at500.jfi_slots.iloc[0] == pytest.approx(slots[0], abs=1e-3)
    assert "ngtcp2 0.12.1 (as the runs stamped them)" in text  # versions from the manifests
    assert (tmp_path / "figures" / "batch-size-fairness" / "time_series.png").exists()


def test_a_report_redone_from_its_runs_csv_says_and_draws_the_same(tmp_path):
    """A study is reported from its run directories, which are then deleted (as a campaign
    commits only runs.csv): the report made again from runs.csv must not change a number
    or a figure (it did: runs.csv keeps 4 significant digits, the first report used all)."""
    study = _stalling_dc_study(tmp_path, sc_extra=1 / 3)  # 10.333...: more digits than kept
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    figure = tmp_path / "figures" / "batch-size-fairness" / "fairness_vs_param.png"
    first_text, first_figure = (tmp_path / "reproduction.md").read_text(), figure.read_bytes()
    shutil.rmtree(study / "runs")
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    again = (tmp_path / "reproduction.md").read_text()
    # the numbers and verdicts (the per-process CPU table and the time series need the runs)
    study_section = [t.split("**We measured**")[1].split("## CPU use")[0] for t in
                     (first_text, again)]  # fmt: skip
    verdicts = [t.split("## Verdicts")[1].split("## Deviations")[0] for t in (first_text, again)]
    assert study_section[0] == study_section[1] and verdicts[0] == verdicts[1]
    assert figure.read_bytes() == first_figure


def test_a_study_adds_new_run_directories_to_the_runs_its_runs_csv_kept(tmp_path):
    """A study's first pass is committed as runs.csv only; a second pass (another stack, more
    repetitions) is still in its run directories: the report counts both, each run once."""
    study = _stalling_dc_study(tmp_path)
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    first = (tmp_path / "reproduction.md").read_text()
    for point in (10, 500):  # rep 0 lives on in runs.csv only; rep 1 in both places
        shutil.rmtree(study / "runs" / f"dc.batch={point}__ngtcp2-newreno__rep0")
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    again = (tmp_path / "reproduction.md").read_text()
    numbers = [t.split("**We measured**")[1].split("## CPU use")[0] for t in (first, again)]
    assert numbers[0] == numbers[1] and "(n=2)" in numbers[1]
    assert "CPU use of the testbed's processes (all runs)" in first
    assert "processes (the 2 runs whose directories are here: batch-size-fairness)" in again
    saved = pd.read_csv(tmp_path / "runs.csv")
    assert sorted(saved.run_id.unique()) == sorted(
        f"dc.batch={p}__ngtcp2-newreno__rep{r}" for p in (10, 500) for r in range(2)
    )


def test_runs_csv_and_report_keep_the_dc_clients_socket_buffer_drops(tmp_path):
    """runs.csv and the study's section count the datagrams the DC client's socket buffer
    dropped (Udp RcvbufErrors in its namespace): whole (not in the 4-digit float format), 0
    where counted and none moved, empty for a run saved before the counters were read."""
    study = _stalling_dc_study(tmp_path)
    drops = {"dc.batch=10__ngtcp2-newreno__rep0": {"client": {limits.NET_COUNTERS[("Udp", "RcvbufErrors")]: 12345.0}},
             "dc.batch=10__ngtcp2-newreno__rep1": {"client": {}, "server": {}}}  # fmt: skip
    for run, delta in drops.items():
        manifest = study / "runs" / run / "manifest.json"
        m = json.loads(manifest.read_text())
        m["net_counters_delta"] = delta
        manifest.write_text(json.dumps(m))
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    saved = pd.read_csv(tmp_path / "runs.csv", dtype={"dc_client_rcvbuf_drops": str})
    per_run = saved.groupby("run_id").dc_client_rcvbuf_drops.first()
    assert per_run["dc.batch=10__ngtcp2-newreno__rep0"] == "12345"
    assert per_run["dc.batch=10__ngtcp2-newreno__rep1"] == "0"
    assert pd.isna(per_run["dc.batch=500__ngtcp2-newreno__rep0"])
    text = (tmp_path / "reproduction.md").read_text()
    line = "ngtcp2-newreno: 10: 6172 (0 to 12345, n=2). Not counted in 2 runs"
    assert line in text
    shutil.rmtree(study / "runs")  # as committed: runs.csv only
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    assert line in (tmp_path / "reproduction.md").read_text()


def test_pdf_text_turns_table_rows_into_labelled_lines():
    md = "## V\n\n| finding | verdict |\n|---|---|\n| [“x”](#s) | **agree** |\n![f](f.png)\ntext"
    assert reproduction._pdf_text(md) == ["## V", "", "* “x”", "    verdict: agree", "text"]


def test_deviation_table_measures_the_loss_placement_when_its_study_ran(tmp_path):
    def row(run, point, goodput):
        return {
            "run_id": run,
            "point": point,
            "variant": "ngtcp2-newreno",
            "status": "ok",
            "kind": "ngtcp2",
            "client": "dc",
            "goodput_mbit": goodput,
        }

    goodputs = {"5 % departure": [1.0, 1.1, 0.9], "5 % enqueue": [2.0, 2.1, 1.9]}
    flows = pd.DataFrame(
        [row(f"{p}{i}", p, g) for p, gs in goodputs.items() for i, g in enumerate(gs)]
    )
    doc = yaml.safe_load((PAPER / "deviations" / "loss_placement.yaml").read_text())
    study = paperdata.StudyData("loss-placement", doc, flows, [], tmp_path)
    text = "\n".join(deviations.section({"loss-placement": study}))
    assert (
        "| ngtcp2-newreno | 5 % | 1 [0.752, 1.25] (n=3) | 2 [1.75, 2.25] (n=3) | +1 ± 0.227 |"
        in text
    )
    assert "Not measured" not in text
    assert "Not measured in this campaign" in "\n".join(deviations.section({}))
    runs = load(PAPER / "deviations" / "loss_placement.yaml").runs
    placed = {(r.point, r.config["links"]["b"]["loss_at"]) for r in runs}
    assert placed == {(p, p.split()[-1]) for p in goodputs} | {
        ("1 % departure", "departure"),
        ("1 % enqueue", "enqueue"),
    }


def test_n_per_point_counts_the_runs_of_the_stacks_the_verdict_rests_on(tmp_path):
    """dup-loss-fairness had 5 runs per point of the paper's stack and 3 of ngtcp2: the
    verdict, judged on the paper's stack, rests on n = 5, not '3-5'."""
    runs = [
        {
            "run_id": f"{v}{p}{i}",
            "point": p,
            "variant": v,
            "status": "ok",
            "kind": "quic",
            "client": "dc",
            "goodput_mbit": 10.0,
        }
        for v, n in (("aioquic-newreno-rcvbuf-large-uvloop", 5), ("ngtcp2-newreno", 3))
        for p in ("0", "0.05")
        for i in range(n)
    ]
    study = paperdata.StudyData("dup-loss-fairness", {}, pd.DataFrame(runs), [], tmp_path)
    judged = [findings.Row("aioquic-newreno-rcvbuf-large-uvloop", "0.716", "partly")]
    assert reproduction._n_per_point(study, judged) == "5"
    both = [findings.Row("ngtcp2-newreno − aioquic-newreno-rcvbuf-large-uvloop", "-", "agree")]
    assert reproduction._n_per_point(study, both) == "3-5"
    assert reproduction._n_per_point(study, [findings.Row("-", "-", "not run")]) == "3-5"
    assert reproduction._n_per_point(None, judged) == "-"


# ---------------------------------------------------------------- fidelity to PAPER.md
@pytest.mark.parametrize("path", STUDIES, ids=[p.stem for p in STUDIES])
def test_paper_studies_follow_the_papers_setup(path):
    for profile in ("full", "quick", "paper"):
        quick = profile == "quick"
        scenario = load(path, quick=quick, paper=profile == "paper")
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
        if profile == "full":
            assert scenario.doc["repetitions"] == 10
        if profile == "paper":
            assert_paper_profile(scenario)


def assert_paper_profile(scenario):
    """The paper's sizes, stacks and points: 100 MB downloads (the trace's 25 MB, stated),
    180 s fairness runs with aioquic NewReno and the enlarged buffer, at least 5 runs."""
    doc = scenario.doc
    assert doc["repetitions"] >= 5
    flows = [f for f in doc["flows"] if f["kind"] != "ping"]
    labels = [variant_label(v) for v in doc["variants"]]
    if doc["figure"] == "fairness":
        assert all(f["duration_s"] == 180 for f in flows)
        assert findings.is_paper_stack(labels[0])  # on asyncio or uvloop
    elif scenario.name != "trace":
        assert all(f["size_mb"] == 100 for f in flows)
    assert "aioquic-cubic-rcvbuf-large" not in labels  # aioquic had no CUBIC then
    values = (doc.get("sweep") or {}).get("values", [])
    if doc["sweep"] and doc["sweep"]["param"] == "dc.batch" and scenario.name != "trace":
        assert {10, 50, 100, 150, 500, 1000} <= set(values)
    if doc["sweep"] and doc["sweep"]["param"] == "links.both.loss":
        assert 0.0008 in values and 0 in values  # the paper's small loss, Fig. 13(c)


def test_profiles_are_exclusive_and_checked(tmp_path):
    doc = yaml.safe_load((PAPER / "02_batch_size.yaml").read_text())
    with pytest.raises(ScenarioError, match="quick or paper, not both"):
        load(PAPER / "02_batch_size.yaml", quick=True, paper=True)
    doc["paper"] = {"sweeps.values": [1]}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ScenarioError, match="bad.yaml.paper: 'sweeps.values' does not start"):
        load(bad, paper=True)
    doc["paper"] = {"quick.repetitions": 2}  # a profile does not set another
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ScenarioError, match="does not start with a top-level key"):
        load(bad, paper=True)
    assert "paper" not in load(PAPER / "02_batch_size.yaml", paper=True).doc


def test_the_campaign_covers_every_study_of_the_papers_table():
    names = {s.name for s in load_campaign(PAPER, quick=True)}
    assert names == set(reproduction.STUDIES) | {"overhead"}
    assert {f.study for f in findings.FINDINGS} <= set(reproduction.STUDIES)


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


def test_the_report_names_each_placement_with_the_studies_that_ran_so():
    from types import SimpleNamespace

    from experiments.analysis.reproduction import _pinning

    def study(pin):
        return SimpleNamespace(manifests=[{"pin": pin}])

    assert _pinning({"a": study("split"), "b": study("split")}) == "split"
    mixed = {"a": study("split"), "f": study("chain"), "b": study("split")}
    assert _pinning(mixed) == "split (a, b); chain (f)"


def test_each_dcexp_run_records_its_command_and_the_report_names_it(tmp_path, monkeypatch):
    """A study made by `dcexp run` (not a campaign) says how it was made: the preamble no
    longer claims a campaign, each section gives its commands, the profile is the studies'."""
    from types import SimpleNamespace

    from experiments.cli import _record_study_command

    study = tmp_path / "loss"
    study.mkdir()
    first = ["dcexp", "run", "14_loss.yaml", "--paper", "--variant", "ngtcp2-newreno"]
    for argv in (first, first, first + ["--reps", "2"]):  # resumed twice, once differently
        monkeypatch.setattr(sys, "argv", argv)
        _record_study_command(study, SimpleNamespace(quick=False, paper=True))
    record = json.loads((study / "study.json").read_text())
    assert record == {"commands": [" ".join(first), " ".join(first) + " --reps 2"],
                      "profile": "paper"}  # fmt: skip

    rows = [{"study": "loss", "run_id": f"l=0__ngtcp2-newreno__rep{rep}", "point": 0,
             "variant": "ngtcp2-newreno", "rep": rep, "status": "ok", "flow": "f0-dc",
             "client": "dc", "kind": "ngtcp2", "goodput_mbit": 35.0 + rep,
             "cpu_saturated": False, "git_commit": "abc"} for rep in range(2)]  # fmt: skip
    doc = load(PAPER / "14_loss.yaml", paper=True).doc
    (study / "scenario.yaml").write_text(yaml.safe_dump(doc))
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    assert dcexp(["report", "--paper", str(tmp_path)]) == 0
    text = (tmp_path / "reproduction.md").read_text()
    assert (
        "Made by one `dcexp run` per study (each in its section), then" in text
        and "dcexp campaign" not in text
    )
    assert f"Run as `{' '.join(first)}`." in text
    assert "profile paper" in text and "| Campaign size (paper profile) |" in text

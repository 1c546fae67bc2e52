"""Analysis and report on hand-made run directories (no root needed)."""

import itertools
import json
import math
import os

import pandas as pd
import pytest
import yaml

from experiments.analysis import headline, metrics, plots
from experiments.cli import main as dcexp


def test_jain_hand_computed():
    assert metrics.jain([5, 5, 5]) == pytest.approx(1.0)
    assert metrics.jain([1, 0]) == pytest.approx(0.5)
    assert metrics.jain([3, 1]) == pytest.approx(16 / 20)
    assert math.isnan(metrics.jain([0, 0]))


def test_sfa_hand_computed():
    # slot 1: x = (3, 1): Jain 0.8, unfairness 0.2, flow 0 dominates (+1), flow 1 (-1)
    # slot 2: x = (1, 1): fair, contributes 0
    # slot 3: flow 0 idle: the sessions do not compete, the slot does not count
    slots = pd.DataFrame({"f0": [3, 1, 0], "f1": [1, 1, 2]})
    sfa = metrics.session_fairness(slots)
    assert sfa["f0"] == pytest.approx(0.1)
    assert sfa["f1"] == pytest.approx(-0.1)


def test_sfa_three_sessions_sign_and_bound():
    slots = pd.DataFrame({"dc": [10, 10], "a": [5, 5], "b": [5, 5]})
    sfa = metrics.session_fairness(slots)
    unfair = 1 - metrics.jain([10, 5, 5])
    assert sfa["dc"] == pytest.approx(unfair) and sfa["a"] == pytest.approx(-unfair)
    assert abs(sfa["dc"]) <= 1 - 1 / 3


def test_goodput_series_from_cumulative_bytes():
    rows = [
        (0.05, "flow", "f", "bytes", 0),
        (0.15, "flow", "f", "bytes", 125_000),
        (0.25, "flow", "f", "bytes", 250_000),
        (0.35, "flow", "f", "bytes", 250_000),
    ]
    s = pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"])
    series = metrics.flow_goodput_series(s)
    assert list(series["f"].round(3)) == [0.0, 10.0, 10.0, 0.0]  # 125 kB per 100 ms


def _fake_run(
    out, run_id, point, variant, rep, flows, series, links=(20.0, 20.0), dup=False, **extra
):
    """A run directory as the runner writes it; `series` = per-flow Mbit/s per 100 ms slot;
    `extra`: more manifest keys (e.g. cpu_bound, events_applied)."""
    d = out / "runs" / run_id
    d.mkdir(parents=True)
    rows = []
    for fid, rates in series.items():
        total = 0.0
        for i, r in enumerate(rates):
            total += r * 1e6 / 8 * 0.1
            rows.append((0.1 * i + 0.05, "flow", fid, "bytes", total))
    for leg, rate in zip("ab", links):
        for i in range(30):
            rows.append((0.1 * i, "link", f"{leg}/ab", "bytes", rate * 1e6 / 8 * 0.1 * i))
    rows.append((3.0, "agent", "dc", "delivered_reordered", 7.0))
    rows.append((3.0, "agent", "dc", "delivered_in_order", 100.0))
    pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"]).to_csv(
        d / "samples.csv", index=False
    )
    manifest = {
        "run_id": run_id,
        "point": point,
        "variant": variant,
        "rep": rep,
        "seed": 1,
        "status": "ok",
        "errors": [],
        "cpu_saturated": False,
        "target": "p4sim",
        "link": "linkem",
        "git_commit": "abc",
        "git_dirty": False,
        "host": {"hostname": "h", "cpus": 2},
        "tools": {"ngtcp2": "0.12.1"},
        "config": {
            "dc": {"dup": dup},
            "links": {"a": {"rate_mbit": links[0]}, "b": {"rate_mbit": links[1]}},
        },
        "flows": flows,
        **extra,
    }
    (d / "manifest.json").write_text(json.dumps(manifest))


def test_report_writes_table_figures_and_summary(tmp_path, capsys):
    out = tmp_path / "res"
    out.mkdir()
    (out / "scenario.yaml").write_text(
        yaml.safe_dump({"name": "fake", "sweep": {"param": "dc.batch", "values": [1, 100]}})
    )
    for point, good in ((1, 30.0), (100, 36.0)):
        for rep in range(2):
            _fake_run(
                out,
                f"b={point}__ngtcp2__rep{rep}",
                point,
                "ngtcp2-cubic",
                rep,
                {
                    "f0-dc": {
                        "client": "dc",
                        "goodput_mbit": good + rep,
                        "complete": True,
                        "completion_s": 2.0,
                    }
                },
                {"f0-dc": [good + rep] * 30},
            )
    _fake_run(
        out,
        "fair__rep0",
        None,
        "tcp-cubic",
        0,
        {
            "f0-dc": {"client": "dc", "goodput_mbit": 20.0},
            "f1-sc-a": {"client": "sc-a", "goodput_mbit": 10.0},
            "f2-sc-b": {"client": "sc-b", "goodput_mbit": 10.0},
        },
        {"f0-dc": [20] * 30, "f1-sc-a": [10] * 30, "f2-sc-b": [10] * 30},
    )
    assert dcexp(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "dc.batch" in printed and "30.50" in printed and "36.50" in printed  # means
    assert "0.71" in printed  # sd of (30, 31)
    fair = metrics.fairness_summary(out)
    assert fair.jfi.iloc[0] == pytest.approx(metrics.jain([20, 10, 10]))  # whole run
    assert fair.jfi_slots.iloc[0] == pytest.approx(metrics.jain([20, 10, 10]))  # equal here
    assert (out / "summary.md").read_text().count("![") >= 3
    for name in (
        "throughput_vs_param",
        "fairness_bars",
        "link_utilization",
        "throughput_over_time",
    ):
        for ext in ("png", "pdf"):
            path = out / "figures" / f"{name}.{ext}"
            assert path.stat().st_size > 1000, path
            assert str(path) in printed or ext == "pdf" or str(path) in printed
    reord = metrics.reordering_summary(out)
    assert set(reord.delivered_reordered) == {7.0}


def test_report_of_empty_dir_is_a_clear_error(tmp_path, capsys):
    assert dcexp(["report", str(tmp_path)]) == 1
    assert "holds no runs" in capsys.readouterr().err


def _cut(path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _replace(path, make) -> None:
    """`path` removed and made again by `make(path)` (a directory, a fifo, a symlink)."""
    path.unlink()
    make(path)


@pytest.mark.parametrize(
    "damage,message",
    [
        (
            lambda d: _cut(d / "manifest.json", 40),
            "manifest.json: not a run manifest (Unterminated string",
        ),
        (lambda d: _cut(d / "manifest.json", 0), "manifest.json: not a run manifest"),
        (lambda d: (d / "manifest.json").write_text("[1]"), "expected a JSON object with keys"),
        (
            lambda d: (d / "manifest.json").write_text(
                json.dumps({**json.loads((d / "manifest.json").read_text()), "run_id": "../x"})
            ),
            "run_id must be its directory's name",
        ),
        (lambda d: (d / "samples.csv").unlink(), "samples.csv: missing; remove that run's"),
        (lambda d: _cut(d / "samples.csv", 0), "samples.csv: not a samples table (expected CSV"),
        (lambda d: (d / "samples.csv").write_bytes(bytes(range(256))), "not a samples table"),
        (lambda d: (d / "samples.csv").write_text("user:x:0\nroot:x:0\n"), "not a samples table"),
        (lambda d: (d.parent.parent / "scenario.yaml").write_text(""), "not a saved scenario"),
        (lambda d: _replace(d / "samples.csv", os.mkdir), "samples.csv: is a directory (ex"),
        # read_bytes() of a fifo waited for a writer for ever
        (lambda d: _replace(d / "samples.csv", os.mkfifo), "samples.csv: is not a regular file"),
        (lambda d: _replace(d / "samples.csv", lambda p: os.symlink(p, p)), "symbolic links"),
        (lambda d: _replace(d / "manifest.json", os.mkfifo), "manifest.json: is not a regular"),
    ],
)
def test_report_names_a_damaged_run_file(damage, message, tmp_path, capsys):
    """A run cut short or edited by hand: one line naming the file and the way out (exit 1),
    never a traceback, a path the file names, or the file's content echoed."""
    out = tmp_path / "res"
    out.mkdir()
    (out / "scenario.yaml").write_text(yaml.safe_dump({"name": "fake"}))
    flows = {"f0-dc": {"client": "dc", "goodput_mbit": 30.0}}
    _fake_run(out, "r0", None, "tcp-cubic", 0, flows, {"f0-dc": [30.0] * 30})
    damage(out / "runs" / "r0")
    assert dcexp(["report", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and message in err[0] and "root:x" not in err[0], err


def test_report_drops_a_torn_last_sample_line_and_says_so(tmp_path, capsys):
    """A run whose writer stopped mid-line: the torn row (here "100.0" cut to "10") is
    dropped, never read as a number, and one warning names the file and line; the rest of
    the run is analysed (exit 0)."""
    out = tmp_path / "res"
    out.mkdir()
    (out / "scenario.yaml").write_text(yaml.safe_dump({"name": "fake"}))
    flows = {"f0-dc": {"client": "dc", "goodput_mbit": 30.0}}
    _fake_run(out, "r0", None, "tcp-cubic", 0, flows, {"f0-dc": [30.0] * 30})
    samples = out / "runs" / "r0" / "samples.csv"
    whole = samples.read_bytes()
    assert whole.endswith(b"delivered_in_order,100.0\n")
    lines = whole.count(b"\n")
    _cut(samples, len(whole) - len(b"0.0\n"))  # the last line ends "...,10"

    assert dcexp(["report", str(out)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "cut short" in line]
    expected = (
        f"dcexp: warning: {samples}:{lines}: last line cut short (no end of line: the writer "
        f"stopped mid-line); dropped it and read the {lines - 1} lines before it"
    )
    assert warnings == [expected]  # once, though the report reads the samples for each figure
    table = metrics.load_samples(samples.parent)
    assert len(table) == lines - 2  # the header and the torn row are not rows
    assert "delivered_in_order" not in set(table.metric)


def test_a_runs_csv_written_by_hand_keeps_its_last_row_without_an_end_of_line(tmp_path, capsys):
    """runs.csv is written whole (by --save-runs, or by hand in an editor that leaves the
    last end of line out): its last line is a complete row, never dropped as torn; only a
    file a run writes as it goes (samples.csv) can end mid-line."""
    study = tmp_path / "s"
    study.mkdir()
    rows = [dict.fromkeys(headline.RECORD_COLUMNS, "") | {"study": "s", "run_id": f"r{i}",
            "point": "-", "variant": "tcp-cubic", "rep": i, "cpu": "False",
            "leg_event": "False", "goodput_mbit": 20.0 + i} for i in range(3)]  # fmt: skip
    path = study / headline.RUNS_CSV
    pd.DataFrame(rows).to_csv(path, index=False)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    records = headline.load_records(study)
    assert list(records.goodput_mbit) == [20.0, 21.0, 22.0]
    assert "cut short" not in capsys.readouterr().err
    live = metrics.read_table(path, ["run_id"], "a table", written_live=True)
    assert list(live.run_id) == ["r0", "r1"]  # the same bytes from a live writer: torn
    assert "last line cut short" in capsys.readouterr().err


def test_a_table_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    """A results table is read whole into memory: one over MAX_TABLE_BYTES (a wrong file
    named runs.csv, a runaway writer) is refused with the limit, never read."""
    monkeypatch.setattr(metrics, "MAX_TABLE_BYTES", 2**20)
    path = tmp_path / "runs.csv"
    path.write_bytes(b"run_id\n" + b"r\n" * 2**20)
    with pytest.raises(metrics.RunFileError, match="larger than the 1 MiB allowed for a result"):
        metrics.read_table(path, ["run_id"], "a table", written_live=False)


def test_duplication_summary_compares_goodput_with_both_legs(tmp_path):
    out = tmp_path / "dup"
    # both legs deliver 20 Mbit/s for 2.9 s; the flow took 2.9 s at 19 Mbit/s of goodput
    _fake_run(
        out,
        "loss=0__rep0",
        0,
        "ngtcp2-cubic",
        0,
        {"f0-dc": {"client": "dc", "goodput_mbit": 19.0, "completion_s": 2.9}},
        {"f0-dc": [19.0] * 29},
        dup=True,
    )
    dup = metrics.duplication_summary(out)
    assert dup.links_mbit.iloc[0] == pytest.approx(40.0)
    assert dup.goodput_mbit.iloc[0] == 19.0 and bool(dup.dup.iloc[0])


def test_fairness_bars_split_a_client_by_stack_in_a_pairwise_run(tmp_path, monkeypatch):
    from experiments.analysis import plots

    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, out_dir, name: drawn.append(fig) or [])
    fair = pd.DataFrame(
        [
            {"point": "qg-ng", "variant": "default", "rep": 0, "client": "sc-a", "kind": kind}
            | {"goodput_mbit": goodput, "jfi": 0.9}
            for kind, goodput in (("quicgo", 12.0), ("ngtcp2", 6.0))
        ]
    )
    plots.fairness_bars(fair, tmp_path)
    ax = drawn[0].axes[0]
    assert [p.get_height() for p in ax.patches] == [12.0, 6.0]
    assert {"sc-a quicgo", "sc-a ngtcp2"} <= {t.get_text() for t in ax.texts}
    plots.plt.close(drawn[0])


def test_sweep_axis_puts_numeric_sweeps_in_order_at_distinct_positions():
    """dup-loss once drew 0.02 and 0.05 at one x (a log axis with 0 on it)."""
    import matplotlib.pyplot as plt

    _fig, ax = plt.subplots()
    points, numeric = plots.sweep_axis(ax, [0.05, 0, 0.02])
    assert points == [0, 0.02, 0.05] and numeric and ax.get_xscale() == "linear"
    xs = ax.transData.transform([(p, 0) for p in points])[:, 0]
    assert xs[0] < xs[1] < xs[2] and xs[2] - xs[1] > 10
    _fig, ax = plt.subplots()
    points, _ = plots.sweep_axis(ax, [0, 0.0008, 0.001, 0.005, 0.01, 0.02, 0.05])
    assert ax.get_xscale() == "symlog"  # 0 with loss rates spanning decades
    assert ax.get_xticklabels()[1].get_rotation() == 45  # 0.0008 and 0.001 would touch
    xs = ax.transData.transform([(p, 0) for p in points])[:, 0]
    assert all(b - a > 5 for a, b in itertools.pairwise(xs))
    _fig, ax = plt.subplots()
    assert plots.sweep_axis(ax, [10, 1000, 50])[0] == [10, 50, 1000]
    assert ax.get_xscale() == "log"
    _fig, ax = plt.subplots()
    assert plots.sweep_axis(ax, ["50:50", "90:10"]) == (["50:50", "90:10"], False)
    plt.close("all")


def test_goodput_figure_states_the_exact_runs_per_point(tmp_path, monkeypatch):
    """The baselines' figures said "n ≤ 3" where a reader needs the n behind every point."""
    summary = pd.DataFrame(
        {
            "point": [10, 100, 10, 100],
            "variant": ["tcp-cubic", "tcp-cubic", "ngtcp2-cubic", "ngtcp2-cubic"],
            "client": ["dc"] * 4,
            "goodput_mbit_mean": [30.0, 31.0, 29.0, 28.0],
            "goodput_mbit_sd": [0.5, 0.4, 0.3, None],
            "runs": [3, 3, 3, 2],
            "cpu_saturated_runs": [0, 0, 0, 0],
        }
    )
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, out_dir, name: drawn.append(fig) or [])
    plots.throughput_vs_param(summary, "dc.batch", tmp_path)
    title = drawn[0].axes[0].get_title()
    assert "n = 2 to 3 per point" in title and "≤" not in title
    plots.plt.close(drawn[0])
    assert plots.runs_per_point(pd.Series([5, 5])) == "n = 5"
    assert plots.runs_per_point(pd.Series([], dtype=float)) == "no runs"


def test_a_run_with_only_the_cpu_bound_verdict_counts_as_cpu_affected(tmp_path, monkeypatch):
    """The sampler's older flag (cpu_saturated) is off, the verdict (cpu_bound) on: the
    progress line, the report, its figures and the loop table all count the run."""
    from experiments.analysis import loop_metrics
    from experiments.run.runner import describe_result

    out = tmp_path / "res"
    verdict = {"cpu_bound": True, "cpu_reasons": ["client at 97 % of a core"]}
    for rep, cpu in enumerate(({}, verdict)):
        flows = {"f0-dc": {"client": "dc", "goodput_mbit": 30.0, "completion_s": 2.0}}
        _fake_run(out, f"r{rep}", None, "tcp-cubic", rep, flows, {"f0-dc": [30] * 30}, **cpu)
    bound = metrics.load_manifests(out)[1]
    assert describe_result(bound).endswith("[CPU short: client at 97 % of a core]")
    assert "CPU short" not in describe_result(metrics.load_manifests(out)[0])
    late = {**bound, "cpu_bound": False, "link_late": True, "link_late_ms": {"a": 12.4, "b": 3.0}}
    late |= {"link_late_share": {"a": 0.071, "b": 0.03}, "link_late_tolerance_ms": {"a": 1, "b": 1}}
    assert describe_result(late).endswith("[link late: A 7.1% of frames > 1.0 ms late]")
    assert "link late" not in describe_result(bound)
    # saved before the share existed: the old rule's flag named every run, it shows nothing
    assert "link late" not in describe_result({**late, "link_late_share": None})

    assert dcexp(["report", str(out)]) == 0
    summary = (out / "summary.md").read_text()
    assert "2 runs, 0 failed, 1 CPU-affected" in summary
    assert "## CPU-affected runs\n\n- r1\n" in summary
    table = metrics.throughput_summary(metrics.load_runs(out))
    assert table.cpu_saturated_runs.tolist() == [1]  # what the figures mark

    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, out_dir, name: drawn.append(fig) or [])
    plots.throughput_bars(table, tmp_path)
    assert "CPU-affected" in drawn[0].axes[0].get_title()
    plots.plt.close(drawn[0])

    for m in metrics.load_manifests(out):  # the loop table reads the same flag
        m["config"] |= {"dc": {"ratio": [1, 1]}, "control": {"policy": "none"}}
        (out / "runs" / m["run_id"] / "manifest.json").write_text(json.dumps(m))
    assert loop_metrics.loop_table(out).cpu_saturated.tolist() == [False, True]


@pytest.mark.parametrize(
    "runs_csv,message",
    [
        (b"", "runs.csv: not a campaign's runs.csv (expected CSV with at least the columns"),
        (bytes(range(256)), "runs.csv: not a campaign's runs.csv"),
        (b"a,b\n1,2\n", "runs.csv: not a campaign's runs.csv"),
        (b"study,run_id,variant,status\nother,r0,tcp-cubic,ok\n", "none of its studies has a run"),
    ],
)
def test_paper_report_names_a_damaged_runs_csv(runs_csv, message, tmp_path, capsys):
    """`dcexp report --paper` on a campaign kept as runs.csv only: a cut or foreign table, or
    one without the studies' rows, is one line (exit 1), not a pandas traceback."""
    (tmp_path / "study1").mkdir()
    (tmp_path / "study1" / "scenario.yaml").write_text(yaml.safe_dump({"name": "study1"}))
    (tmp_path / "runs.csv").write_bytes(runs_csv)
    assert dcexp(["report", "--paper", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and message in err[0], err

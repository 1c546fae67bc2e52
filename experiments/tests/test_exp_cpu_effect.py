"""Does the CPU verdict matter (experiments/analysis/cpu_effect.py): flagged runs paired with
the clean runs of their cell over a hand-made results tree.
Run: .venv/bin/python -m pytest experiments/tests/test_exp_cpu_effect.py"""

import json
import math

import pandas as pd
import pytest

from experiments.analysis import cpu_effect

QUIET = {"mean_wait": 0.05, "mean_run_max": 0.2, "mean_busy": 0.2, "saturated_share": 0.0}


def run(study, place, run_id, goodput, waits=None, cores=0.5, rtt=40.0, flagged=None, **extra):
    """A saved run: `waits` = {process: mean wait share} over quiet processes; `flagged` is
    the verdict the runner wrote (None: today's rule decides from the numbers)."""
    d = study / place / run_id
    d.mkdir(parents=True)
    procs = {p: dict(QUIET) for p in ("switch", "agent", "link_a", "link_b")}
    procs |= {"f0-dc/client": dict(QUIET), "f0-dc/server": dict(QUIET)}
    for name, wait in (waits or {}).items():
        procs[name]["mean_wait"] = wait
    manifest = {
        "run_id": run_id,
        "point": extra.pop("point", 100),
        "variant": extra.pop("variant", "ngtcp2-newreno"),
        "rep": 0,
        "status": "ok",
        "mean_busy": {"cpu0": cores, "cpu1": cores},
        "process_cpu": procs,
        "saturated_processes": extra.pop("saturated", []),
        "cpu_saturated": False,
        "cpu_bound": bool(flagged),
        "flows": {
            "f0-dc": {"client": "dc", "goodput_mbit": goodput, "rtt_ms_mean": rtt},
            "f1-probe": {"client": "dc", "goodput_mbit": None},  # a ping has no goodput
        },
    }
    (d / "manifest.json").write_text(json.dumps(manifest))
    return d


@pytest.fixture
def tree(tmp_path):
    """One study: a cell with three clean runs (30, 31, 32 Mbit/s) and two flagged ones moved
    aside (the client waiting 50 %: 27 Mbit/s; the agent waiting 30 %: 31 Mbit/s), and a
    cell whose only run was flagged (no clean reference)."""
    study = tmp_path / "paper-size" / "batch"
    for i, g in enumerate((30.0, 31.0, 32.0)):
        run(study, "runs", f"b100__rep{i}", g, rtt=40.0 + i)
    run(study, "cpu-affected-round0", "b100__rep0", 27.0, {"f0-dc/client": 0.5}, flagged=True)
    run(study, "cpu-affected-round1", "b100__rep1", 31.0, {"agent": 0.3}, rtt=51.0, flagged=True)
    run(study, "runs", "b10__rep0", 20.0, {"switch": 0.6}, point=10, flagged=True)
    return tmp_path


def test_process_kinds():
    kinds = [cpu_effect.process_kind(n) for n in ("link_b", "f0-dc/client", "f1-sc/server")]
    assert kinds == ["linkem", "client", "server"]
    assert cpu_effect.process_kind("agent") == "agent"
    assert cpu_effect.process_kind("sampler") == "other"


def test_load_reads_runs_and_the_folders_set_aside(tree):
    df = cpu_effect.load(tree)
    assert len(df) == 6 and set(df.study) == {"paper-size/batch"}
    assert sorted(df.place.unique()) == ["cpu-affected-round0", "cpu-affected-round1", "runs"]
    assert df.flagged.sum() == 3
    assert df.wait_client.max() == pytest.approx(0.5)
    assert math.isnan(df.reorder_expiries.iloc[0])  # no samples.csv in these runs


def test_todays_rule_flags_a_run_saved_before_it(tmp_path):
    """A run the runner called clean before the wait rule existed is flagged from its numbers."""
    study = tmp_path / "s"
    run(study, "runs", "old", 30.0, {"agent": 0.4}, flagged=False)
    run(study, "runs", "busy", 30.0, cores=0.97, flagged=False)
    run(study, "runs", "quiet", 30.0, flagged=False)
    df = cpu_effect.load(tmp_path).set_index("run_id")
    assert df.flagged.to_dict() == {"busy": True, "old": True, "quiet": False}
    assert not df.flagged_when_run.any()


def test_pairs_against_the_clean_mean_of_the_same_cell(tree):
    p = cpu_effect.pairs(cpu_effect.load(tree)).set_index("place")
    assert len(p) == 2  # the lone flagged run at batch 10 has no clean run to compare with
    client = p.loc["cpu-affected-round0"]
    assert client.diff_mbit == pytest.approx(-4.0)
    assert client.diff_pct == pytest.approx(-400 / 31)
    assert client.reasons == ["wait > 40 %"] and client.culprits == ["client"]
    agent = p.loc["cpu-affected-round1"]
    assert agent.diff_mbit == pytest.approx(0.0) and agent.diff_rtt_ms == pytest.approx(10.0)
    assert agent.reasons == ["wait 30-40 %"] and agent.culprits == ["agent"]
    # clean noise: 30, 31, 32 around 31 -> sd 1/31; the client's run lies 4 sd below
    assert client.z == pytest.approx(-4.0)


def test_noise_pools_the_clean_runs_of_each_cell(tmp_path):
    study = tmp_path / "s"
    for i, g in enumerate((10.0, 12.0)):  # +-10 % around 11... relative: +-1/11
        run(study, "runs", f"a{i}", g, point=1)
    for i, g in enumerate((20.0, 20.0, 20.0)):
        run(study, "runs", f"b{i}", g, point=2)
    n = cpu_effect.noise(cpu_effect.load(tmp_path)).loc["s"]
    assert n.cells == 2 and n.clean_runs == 5
    assert n.clean_sd_pct == pytest.approx(100 * math.sqrt(2 * (1 / 11) ** 2 / 3))


def test_reasons_name_every_way_a_run_was_flagged():
    numbers = {f"{what}_{k}": math.nan for what in ("wait", "run") for k in cpu_effect.KINDS}
    row = pd.Series(
        {**numbers, "wait_switch": 0.27, "run_agent": 0.96, "cores_min_busy": 0.99,
         "demand_flag": True, "demand_kinds": []},
        dtype=object,
    )  # fmt: skip
    assert cpu_effect.reasons(row) == [
        "wait 25-30 %",
        cpu_effect.FULL_CORE,
        cpu_effect.CORES_BUSY,
    ]
    assert cpu_effect.culprits(row) == ["agent", "switch"]
    quiet = row.copy()
    quiet["wait_switch"], quiet["run_agent"], quiet["cores_min_busy"] = 0.1, 0.5, 0.5
    assert cpu_effect.reasons(quiet) == [cpu_effect.DEMAND_ONLY]


def test_effect_table_and_wait_table(tree):
    df = cpu_effect.load(tree)
    table = cpu_effect.effect_table(cpu_effect.pairs(df))
    assert table.loc["all flagged runs", "n"] == 2
    assert table.loc["reason: wait > 40 %", "goodput diff (Mbit/s)"] == "-4 (n=1)"
    assert table.loc["an endpoint tripped (client or server)", "n"] == 1
    assert "process: switch" not in table.index  # its only flagged run had no clean pair
    dev = cpu_effect.deviations(df)
    assert set(dev.point) == {"100"}  # the lone run at batch 10 has nothing to deviate from
    waits = cpu_effect.wait_table(dev)
    assert waits.loc["client", "wait >= 40%"] == "-13 (n=1)"  # 27 against the median 31


def test_cli_prints_the_tables_and_draws_the_figure(tree, tmp_path, capsys):
    out = tmp_path / "fig"
    assert cpu_effect.main([str(tree), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 flagged runs paired" in text and "1 without a clean run" in text
    assert (out / "cpu_effect.png").stat().st_size > 0


def test_cli_names_a_missing_or_empty_results_folder(tmp_path, capsys):
    for argv, message in (
        ([str(tmp_path / "nope")], "argument results: " + str(tmp_path / "nope") + ": no such dir"),
        (["/etc/passwd"], "argument results: /etc/passwd: is not a directory"),  # "does not exist"
        ([str(tmp_path)], "no finished run"),
    ):
        with pytest.raises(SystemExit) as info:
            cpu_effect.main(argv)
        err = capsys.readouterr().err.splitlines()[-1]
        assert info.value.code == 2 and err.startswith(cpu_effect.build_parser().prog), err
        assert message in err, err


def test_latency_counters_from_the_samples(tree):
    d = tree / "paper-size" / "batch" / "runs" / "b100__rep2"
    rows = [(0.1 * i, "flow", "f0-dc", "rtt_ms", 20.0 + i) for i in range(100)]
    rows += [(0.0, "flow", "f9-sc", "rtt_ms", 1.0)]  # another client's flow: not the DC's
    rows += [
        (0.0, "agent", "dc", "t_reordering_expiries", 2),
        (9, "agent", "dc", "t_reordering_expiries", 5),
    ]
    rows += [
        (1.0, "link", "a/ab", "late_us.p99", 300.0),
        (2.0, "link", "b/ab", "late_us.p99", 1500.0),
    ]
    pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"]).to_csv(
        d / "samples.csv", index=False
    )
    df = cpu_effect.load(tree).set_index(["place", "run_id"])
    run = df.loc[("runs", "b100__rep2")]
    assert run.rtt_p5_ms == pytest.approx(24.95)  # 5th percentile of 20..119
    assert run.reorder_expiries == 3 and run.late_p99_ms == pytest.approx(1.5)
    assert run.late_p99_median_ms == pytest.approx(0.9)


def test_within_cell_slopes_separate_the_kinds(tmp_path):
    """Goodput falls with the client's wait only; the agent's wait, varied independently,
    gets a slope of zero, and a second cell's level does not leak into the slopes."""
    study = tmp_path / "s"
    waits = [(0.1, 0.1), (0.3, 0.1), (0.1, 0.5), (0.3, 0.5), (0.2, 0.3), (0.2, 0.3)]
    for point, level in ((1, 30.0), (2, 60.0)):
        for i, (agent, client) in enumerate(waits):
            goodput = level * (1 - 0.5 * (client - 0.3))  # -5 % of the mean per 10 points
            run(
                study,
                "runs",
                f"p{point}r{i}",
                goodput,
                {"agent": agent, "f0-dc/client": client},
                point=point,
            )
    slopes = cpu_effect.within_cell_slopes(cpu_effect.load(tmp_path))
    goodput = slopes.loc["goodput (% of the cell mean)"]
    assert goodput.endpoints.startswith("-5 ") and goodput.runs == 12 and goodput.cells == 2
    assert abs(float(goodput.agent.split()[0])) < 0.01
    assert goodput.switch == "no variation"  # every switch waited 5 %: nothing to fit


def test_a_cell_without_clean_runs_deviates_from_its_own_median(tmp_path):
    study = tmp_path / "s"
    for i, g in enumerate((20.0, 22.0, 24.0)):
        run(study, "runs", f"r{i}", g, {"switch": 0.5}, flagged=True)
    dev = cpu_effect.deviations(cpu_effect.load(tmp_path)).sort_values("goodput_mbit")
    assert not dev.has_clean.any()
    assert dev.dev_pct.tolist() == pytest.approx([-100 / 11, 0.0, 100 / 11])
    assert cpu_effect.wait_table(dev).empty  # no clean reference: not in the bias table


def _late_samples(run_dir, windows, frames=200):
    """samples.csv with linkem's late_us.p99 per window, [(t_s, leg/dir, µs)], each window
    forwarding `frames` more frames on its direction."""
    rows, count = [], {}
    for t, ident, us in windows:
        count[ident] = count.get(ident, 0) + frames
        rows += [(t, "link", ident, "late_us.p99", us), (t, "link", ident, "frames", count[ident])]
    pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"]).to_csv(
        run_dir / "samples.csv", index=False
    )


def _with_delay(run_dir, delay_ms):
    """The run's config: both legs `delay_ms` one way, the uplinks none (the paper's)."""
    path = run_dir / "manifest.json"
    links = {"a": {"delay_ms": delay_ms}, "b": {"delay_ms": delay_ms}}
    links |= {"a_uplink": {"delay_ms": 0}, "b_uplink": {"delay_ms": 0}}
    path.write_text(json.dumps({**json.loads(path.read_text()), "config": {"links": links}}))


def test_the_link_lateness_rule_re_applied_beside_the_old_one(tree):
    """10 windows of 200 frames on leg A's downlink (10 ms): rep0 on time but for 0.3 ms in
    every window (old rule: late; new: no), rep1 2.4 ms late in one window in ten (10 % of
    its frames beyond 1 ms: late), rep2 late only before t = 0; the flagged run moved aside
    (10 ms legs) late in 6 of 10 windows by 3 ms, the flagged run at point 10 (100 ms legs)
    likewise: within its 10 ms tolerance."""
    runs = tree / "paper-size" / "batch" / "runs"
    on = [(0.1 * i, "a/ab", 40.0) for i in range(10)]
    _late_samples(runs / "b100__rep0", [(t, ident, 300.0) for t, ident, _ in on])
    _late_samples(runs / "b100__rep1", [(0.0, "a/ab", 2400.0), *on[1:]])
    _late_samples(runs / "b100__rep2", [(-0.5, "a/ab", 30e3), *on])  # setup: not judged
    flagged = tree / "paper-size" / "batch" / "cpu-affected-round0" / "b100__rep0"
    slow = [(0.1 * i, "a/ab", 3000.0 if i < 6 else 40.0) for i in range(10)]
    for d, delay in ((flagged, 10), (runs / "b10__rep0", 100)):
        _late_samples(d, slow)
        _with_delay(d, delay)
    for rep in range(3):
        _with_delay(runs / f"b100__rep{rep}", 10)
    df = cpu_effect.load(tree)
    late = df.set_index(["place", "run_id"])
    assert late.late_p99_ms[("runs", "b100__rep1")] == pytest.approx(2.4)
    assert late.late_p99_ms[("runs", "b100__rep2")] == pytest.approx(0.04)  # not setup's
    assert late.late_share[("runs", "b100__rep1")] == pytest.approx(0.1)
    assert late.link_late.to_dict() == {
        ("runs", "b100__rep0"): False,
        ("runs", "b100__rep1"): True,
        ("runs", "b100__rep2"): False,
        ("cpu-affected-round0", "b100__rep0"): True,
        ("cpu-affected-round1", "b100__rep1"): False,  # no samples
        ("runs", "b10__rep0"): False,
    }
    row = cpu_effect.link_late_table(df).loc["paper-size/batch"]
    assert (row.runs, row["CPU-flagged"], row.clean) == (6, 3, 3)
    assert (row["link late"], row["link late, CPU-flagged"]) == (2, 1)
    assert row["old rule: worst window > 0.1 ms"] == 4  # every run with samples but rep2


def test_goodput_against_link_lateness_within_cells(tmp_path):
    """Goodput falls 1 % of its base per ms of lateness in two cells of four runs each: 10.3 %
    of the cell mean (96.875 % of the base) per 10 ms, with no scatter."""
    study = tmp_path / "s"
    for cell, base in (("p1", 30.0), ("p2", 20.0)):
        for i, late_ms in enumerate((0.5, 1.0, 3.0, 8.0)):
            d = run(study, "runs", f"{cell}__rep{i}", base * (1 - late_ms / 100), point=cell)
            _late_samples(d, [(1.0, "a/ab", late_ms * 1e3)])
    got = cpu_effect.late_goodput_slope(cpu_effect.load(tmp_path))
    assert got == "-10.3 % [-10.3, -10.3] per 10 ms (8 runs, 2 cells)"

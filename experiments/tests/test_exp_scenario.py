"""Scenario validation and expansion, and which saved runs a resume counts (no root needed)."""

import json
from pathlib import Path

import pytest

from experiments.cli import main as dcexp
from experiments.run.progress import format_duration
from experiments.run.runner import pending_runs
from experiments.run.scenario import ScenarioError, from_dict, load, parse_ratio

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.yaml"))


def base(**over):
    doc = {
        "name": "t",
        "links": {"both": {"rate_mbit": 20, "delay_ms": 10, "delay_cv": 0.1}},
        "flows": [{"kind": "ngtcp2", "cc": "cubic", "size_mb": 1, "client": "dc"}],
    }
    doc.update(over)
    return doc


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenarios_validate_in_both_modes(path):
    full, quick = load(path), load(path, quick=True)
    assert len(quick.runs) <= len(full.runs)
    assert all(r.config["links"]["a"] and r.config["links"]["b"] for r in full.runs)


def test_unknown_top_key_names_allowed_keys():
    with pytest.raises(ScenarioError) as exc:
        from_dict(base(rate=3))
    msg = str(exc.value)
    assert "unknown key 'rate'" in msg and "links" in msg and "repetitions" in msg


def test_unknown_link_key_names_allowed_keys():
    with pytest.raises(ScenarioError) as exc:
        from_dict(base(links={"a": {"rate": 20}}))
    assert "scenario.links.a: unknown key 'rate'" in str(exc.value)
    assert "rate_mbit" in str(exc.value) and "queue_bdp" in str(exc.value)


@pytest.mark.parametrize(
    "flow,needle",
    [
        ({"kind": "quiche", "size_mb": 1}, "ngtcp2, aioquic, quicgo, tcp"),
        ({"cc": "vegas", "size_mb": 1}, "newreno, cubic, bbr"),
        ({"kind": "aioquic", "cc": "bbr", "size_mb": 1}, "newreno and cubic"),
        ({"client": "sc-c", "size_mb": 1}, "dc, sc-a, sc-b"),
        ({}, "exactly one of size_mb"),
        ({"size_mb": 1, "duration_s": 3}, "exactly one of size_mb"),
        (
            {"kind": "tcp", "size_mb": 1, "udp_rcvbuf": "large"},
            "aioquic and ngtcp2 only, not 'tcp'",
        ),
        ({"kind": "quicgo", "size_mb": 1, "udp_rcvbuf": "large"}, "only, not 'quicgo'"),
        ({"size_mb": 1, "udp_rcvbuf": "huge"}, "'huge' is not one of default, large"),
        ({"kind": "quicgo", "cc": "cubic", "size_mb": 1}, "cc must be newreno (its NewReno"),
        ({"kind": "ngtcp2", "qlog": True, "size_mb": 1}, "qlog: applies to kind aioquic only"),
        ({"kind": "aioquic", "qlog": "yes", "size_mb": 1}, "qlog: expected true or false"),
        ({"size_mb": -1}, "out of range"),
    ],
)
def test_bad_flows_are_named(flow, needle):
    with pytest.raises(ScenarioError) as exc:
        from_dict(base(flows=[flow]))
    assert needle in str(exc.value)


def test_ngtcp2_takes_a_large_receive_buffer_and_its_variant_says_so():
    doc = base(
        flows=[{"size_mb": 1, "client": "dc"}],
        variants=[
            {"kind": "ngtcp2", "cc": "cubic"},
            {"kind": "ngtcp2", "cc": "cubic", "udp_rcvbuf": "large"},
        ],
    )
    default, large = from_dict(doc).runs
    assert default.config["flows"][0]["udp_rcvbuf"] == "default"
    assert large.config["flows"][0]["udp_rcvbuf"] == "large"
    assert (default.variant, large.variant) == ("ngtcp2-cubic", "ngtcp2-cubic-rcvbuf-large")


def test_quicgo_takes_its_only_controller_and_pairs_set_one_flow_each():
    [run] = from_dict(base(flows=[{"kind": "quicgo", "size_mb": 1}])).runs
    assert run.config["flows"][0]["cc"] == "newreno"
    doc = base(
        flows=[{"kind": "quicgo", "cc": "newreno", "size_mb": 1}, {"kind": "ngtcp2", "size_mb": 1}],
        sweep={
            "param": "pair",
            "values": ["qg-ng", "ng-aq"],
            "set": {"flows.0.kind": ["quicgo", "ngtcp2"], "flows.1.kind": ["ngtcp2", "aioquic"]},
        },
    )
    kinds = [[f["kind"] for f in run.config["flows"]] for run in from_dict(doc).runs]
    assert kinds == [["quicgo", "ngtcp2"], ["ngtcp2", "aioquic"]]
    doc["sweep"]["set"]["flows.2.kind"] = ["tcp", "tcp"]
    with pytest.raises(ScenarioError, match="sweep.set.flows.2.kind: there is no flow 2"):
        from_dict(doc)


def test_two_queue_kinds_rejected():
    with pytest.raises(ScenarioError, match="one of queue_pkts, queue_bytes, queue_bdp"):
        from_dict(base(links={"both": {"queue_pkts": 10, "queue_bdp": 1}}))


def test_ratio_forms():
    assert parse_ratio("x", "3:1") == (3, 1)
    assert parse_ratio("x", [1, 0]) == (1, 0)
    assert parse_ratio("x", "70%") == (7, 3)  # in lowest terms, as the controller reads it
    assert parse_ratio("x", "12.5%") == (1, 7)
    assert parse_ratio("x", "0%") == (0, 1) and parse_ratio("x", "100%") == (1, 0)
    with pytest.raises(ScenarioError, match="'A:B'"):
        parse_ratio("x", "fast")


def test_percentage_ratio_fits_batches_the_controller_accepts():
    """70% of batch 10 is 7 packets on leg A: accepted; 50% of batch 3 is not whole."""
    [run] = from_dict(base(dc={"batch": 10, "ratio": "70%"})).runs
    assert run.config["dc"]["ratio"] == [7, 3]
    with pytest.raises(ScenarioError, match="does not fit dc.batch 3"):
        from_dict(base(dc={"batch": 3, "ratio": "50%"}))


def test_sweep_variants_reps_expand_with_resolved_links():
    sc = from_dict(
        base(
            sweep={"param": "dc.batch", "values": [2, 10]},
            repetitions=2,
            variants=[{"kind": "tcp"}, {"kind": "ngtcp2", "cc": "newreno"}],
        )
    )
    assert len(sc.runs) == 2 * 2 * 2
    assert len({r.run_id for r in sc.runs}) == 8
    run = sc.runs[0]
    assert run.config["dc"]["batch"] == 2 and run.config["flows"][0]["kind"] == "tcp"
    assert run.config["links"]["a"]["rate_mbit"] == 20
    # the ACK path gets the leg's delay but no rate limit
    assert run.config["links"]["a_uplink"] == {"delay_ms": 10, "delay_cv": 0.1}
    assert sc.runs[-1].config["dc"]["batch"] == 10
    assert sc.runs[-1].config["flows"][0]["cc"] == "newreno"


def test_sweep_set_moves_several_keys_together():
    sc = from_dict(
        base(
            sweep={
                "param": "bw",
                "values": ["1:1", "3:1"],
                "set": {"links.b.rate_mbit": [20, 10], "dc.ratio": ["1:1", "3:1"]},
            }
        )
    )
    assert [r.config["links"]["b"]["rate_mbit"] for r in sc.runs] == [20, 10]
    assert [r.config["dc"]["ratio"] for r in sc.runs] == [[1, 1], [3, 1]]
    with pytest.raises(ScenarioError, match="not sweepable"):
        from_dict(base(sweep={"param": "x", "values": [1], "set": {"name": ["a"]}}))
    with pytest.raises(ScenarioError, match="one value per sweep value"):
        from_dict(base(sweep={"param": "x", "values": [1, 2], "set": {"dc.batch": [1]}}))


def test_quick_overrides_and_reps():
    sc = from_dict(base(repetitions=10, quick={"repetitions": 1, "flows.size_mb": 0.5}), quick=True)
    assert len(sc.runs) == 1 and sc.runs[0].config["flows"][0]["size_mb"] == 0.5
    assert len(from_dict(base(), reps=3).runs) == 3


def test_cli_reports_bad_scenario_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nlinks: {a: {speed: 3}}\nflows: [{size_mb: 1}]\n")
    assert dcexp(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'speed'" in err and "Traceback" not in err
    assert dcexp(["validate", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read scenario" in capsys.readouterr().err


def test_ratio_must_fit_batch():
    with pytest.raises(ScenarioError, match="a\\+b must equal the batch size or divide it"):
        from_dict(base(dc={"batch": 1, "ratio": "1:1"}))
    with pytest.raises(ScenarioError, match="at sweep value 5"):
        from_dict(base(dc={"ratio": "1:1"}, sweep={"param": "dc.batch", "values": [4, 5]}))
    assert len(from_dict(base(dc={"batch": 1, "ratio": "1:1", "dup": True})).runs) == 1


def test_preflight_names_every_problem(monkeypatch):
    from experiments.run import runner
    from experiments.run.testbed import TestbedError

    monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)  # as an ordinary user
    monkeypatch.setenv("PATH", "/nonexistent")  # and without BMv2 (nor any other tool)
    sc = from_dict(base())
    with pytest.raises(TestbedError) as exc:
        runner.preflight(sc, "bmv2")
    msg = str(exc.value)
    assert "needs root" in msg and "simple_switch_grpc" in msg


def test_preflight_names_a_missing_part(monkeypatch, tmp_path):
    from experiments.run import runner
    from experiments.run.testbed import TestbedError

    monkeypatch.setattr(runner, "AGENT_BIN", tmp_path / "pdcp-agent")
    with pytest.raises(TestbedError, match=r"pdcp-agent is missing: run `make build`"):
        runner.preflight(from_dict(base()), "p4sim")


def test_preflight_names_a_missing_quicgo_binary(monkeypatch, tmp_path):
    from experiments.flows.quicgo import QuicgoFlow
    from experiments.run import runner
    from experiments.run.testbed import TestbedError

    monkeypatch.setattr(QuicgoFlow, "built", (tmp_path / "dcexp-quicgo",))
    with pytest.raises(TestbedError, match=r"dcexp-quicgo is missing: run `make build`"):
        runner.preflight(from_dict(base(flows=[{"kind": "quicgo", "size_mb": 1}])), "p4sim")


def test_events_validated_and_sorted():
    sc = from_dict(
        base(
            events=[
                {"at_s": 9, "link": "b", "set": {"loss": 1}},
                {"at_s": 5, "dc": {"ratio": "9:1"}},
            ]
        )
    )
    events = sc.runs[0].config["events"]
    assert [e["at_s"] for e in events] == [5, 9]
    assert events[0]["dc"]["ratio"] == [9, 1] and events[1]["direction"] == "down"
    for bad, needle in [
        ({"at_s": 1, "link": "c", "set": {"loss": 1}}, "a, b, both"),
        ({"at_s": 1, "link": "a", "set": {"speed": 1}}, "unknown key 'speed'"),
        ({"at_s": 1, "dc": {"mode": "sc"}}, "allowed keys: batch, dup, ratio"),
        ({"at_s": 1}, r"either link \(with set\) or dc"),
        ({"at_s": -1, "dc": {"dup": True}}, "out of range"),
    ]:
        with pytest.raises(ScenarioError, match=needle):
            from_dict(base(events=[bad]))


def test_loss_at_is_a_link_key_with_named_values():
    sc = from_dict(base(links={"both": {"rate_mbit": 20, "loss": 0.05, "loss_at": "enqueue"}}))
    assert sc.runs[0].config["links"]["a"]["loss_at"] == "enqueue"
    with pytest.raises(
        ScenarioError, match=r"scenario.links.b.loss_at: 'arrival' is not one of departure, enqueue"
    ):
        from_dict(base(links={"b": {"loss": 0.05, "loss_at": "arrival"}}))


def test_link_driver_rules_apply_at_load_time():
    with pytest.raises(ScenarioError, match="links.a: .*rate_mbit or trace"):
        from_dict(
            base(links={"both": {"rate_mbit": 20}, "a": {"trace": "lte_var20.mahi"}}),
            path=SCENARIOS[0],
        )


def test_cli_unknown_variant_lists_the_scenario_variants(capsys):
    demo = SCENARIOS[0].parent / "demo.yaml"  # variants ngtcp2-cubic, aioquic-cubic, tcp-cubic
    assert dcexp(["run", str(demo), "--variant", "quiche-cubic"]) == 2
    err = capsys.readouterr().err
    assert "not in this scenario" in err and "ngtcp2-cubic" in err


def test_cli_point_keeps_only_the_named_sweep_points():
    from experiments.cli import _only_points

    numbers = from_dict(
        base(sweep={"param": "links.both.loss", "values": [0, 0.01, 0.05]}, repetitions=2)
    )
    picked = _only_points(numbers.runs, ["1e-2", "0.05"])
    assert [(r.point, r.rep) for r in picked] == [(0.01, 0), (0.01, 1), (0.05, 0), (0.05, 1)]
    ratios = from_dict(
        base(sweep={"param": "bw", "values": ["1:1", "5:1"], "set": {"links.b.rate_mbit": [20, 4]}})
    )
    [run] = _only_points(ratios.runs, ["5:1"])
    assert run.config["links"]["b"]["rate_mbit"] == 4


def test_cli_unknown_point_lists_the_sweep_values(capsys, tmp_path):
    swept = tmp_path / "s.yaml"
    swept.write_text(
        "name: s\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1}]\n"
        "sweep: {param: dc.batch, values: [10, 100]}\n"
    )
    assert dcexp(["run", str(swept), "--point", "50", "--out", str(tmp_path / "o")]) == 2
    assert "--point '50': not a sweep value of this scenario; its values: 10, 100" in (
        capsys.readouterr().err
    )
    flat = tmp_path / "f.yaml"
    flat.write_text("name: f\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1}]\n")
    assert dcexp(["run", str(flat), "--point", "1", "--out", str(tmp_path / "o")]) == 2
    assert "--point: this scenario has no sweep" in capsys.readouterr().err


def test_mptcp_flows_run_on_the_dc_device_and_only_they_take_a_backup_leg():
    links = {"both": {"rate_mbit": 20}}
    ok = from_dict(
        {
            "name": "mp",
            "links": links,
            "flows": [{"kind": "mptcp", "size_mb": 1}],
            "variants": [{"kind": "mptcp"}, {"kind": "mptcp", "mptcp_leg_b": "backup"}],
        }
    )
    assert [r.variant for r in ok.runs] == ["mptcp", "mptcp-backup"]
    bad = [
        ({"kind": "mptcp", "size_mb": 1, "client": "sc-a"}, "kind mptcp runs on the dual"),
        ({"kind": "tcp", "size_mb": 1, "mptcp_leg_b": "backup"}, "applies to kind mptcp only"),
        ({"kind": "mptcp", "size_mb": 1, "mptcp_leg_b": "standby"}, "active, backup"),
    ]
    for flow, message in bad:
        with pytest.raises(ScenarioError, match=message):
            from_dict({"name": "mp", "links": links, "flows": [flow]})


def test_a_stacks_knobs_in_a_variant_reach_only_that_stacks_flows():
    doc = base(
        flows=[
            {"kind": "tcp", "size_mb": 1, "client": "sc-a"},
            {"kind": "aioquic", "size_mb": 1, "client": "sc-a", "start_s": 8},
        ],
        variants=[{"label": "n2", "cubic_n": 2, "hystart": False}],
    )
    [run] = from_dict(doc).runs
    tcp, quic = run.config["flows"]
    assert (tcp["cubic_n"], tcp["hystart"]) == (None, None)
    assert (quic["cubic_n"], quic["hystart"], quic["start_s"]) == (2, False, 8)
    with pytest.raises(ScenarioError, match="cubic_n: 3 is not one of 1, 2, 5"):
        from_dict(base(flows=[{"kind": "aioquic", "size_mb": 1, "cubic_n": 3}]))
    with pytest.raises(ScenarioError, match="need kind aioquic and cc cubic"):
        from_dict(base(flows=[{"kind": "aioquic", "cc": "newreno", "size_mb": 1, "hystart": True}]))


def test_switch_program_selects_the_splitter_and_is_checked():
    assert "switch" not in from_dict(base()).runs[0].config  # v1model: configs unchanged
    assert from_dict(base(switch={"program": "tna"})).runs[0].config["switch"] == {"program": "tna"}
    with pytest.raises(
        ScenarioError, match=r"scenario.switch.program: 'psa' is not one of v1model, tna"
    ):
        from_dict(base(switch={"program": "psa"}))
    with pytest.raises(ScenarioError, match="only the v1model splitter has"):
        from_dict(base(switch={"program": "tna"}, feedback={}))


def test_a_trace_study_resumed_from_another_checkout_counts_its_saved_runs(tmp_path):
    """A run's configuration names its trace file by the resolved path, which another
    checkout (or a moved one) changes: a saved run still counts when the file it names
    holds the same trace, and not when the trace differs."""
    old_tree, new_tree = tmp_path / "old", tmp_path / "new"
    for tree, text in ((old_tree, "1\n2\n3\n"), (new_tree, "1\n2\n3\n")):
        tree.mkdir()
        (tree / "leg.mahi").write_text(text)
        (tree / "study.yaml").write_text(
            "name: t\nlinks: {both: {trace: leg.mahi, delay_ms: 10}}\n"
            "flows: [{kind: ngtcp2, cc: newreno, size_mb: 1, client: dc}]\n"
        )
    saved_scenario = load(old_tree / "study.yaml")
    [run] = saved_scenario.runs
    assert run.config["links"]["a"]["trace"] == str(old_tree / "leg.mahi")
    out = tmp_path / "results"
    run_dir = out / "runs" / run.run_id
    run_dir.mkdir(parents=True)
    manifest = {"status": "ok", "config": json.loads(json.dumps(run.config, default=str))}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    assert pending_runs(load(new_tree / "study.yaml"), out) == []
    (new_tree / "leg.mahi").write_text("1\n2\n4\n")  # another trace under the same name
    assert [r.run_id for r in pending_runs(load(new_tree / "study.yaml"), out)] == [run.run_id]
    (old_tree / "leg.mahi").unlink()  # the saved run's file gone: only its path is left
    (new_tree / "leg.mahi").write_text("1\n2\n3\n")
    assert [r.run_id for r in pending_runs(load(new_tree / "study.yaml"), out)] == [run.run_id]


def test_cli_dry_run_lists_the_runs_to_start_and_starts_none(capsys, tmp_path):
    """`dcexp run -n` names the runs a resume would start, skipping those saved ok with the
    same configuration, and makes nothing: no output directory, no testbed."""
    swept = tmp_path / "s.yaml"
    swept.write_text(
        "name: s\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1}]\nrepetitions: 2\n"
        "sweep: {param: dc.batch, values: [10, 100]}\n"
    )
    out = tmp_path / "o"
    assert dcexp(["run", str(swept), "--out", str(out), "--point", "100", "-n"]) == 0
    listed = capsys.readouterr()
    assert listed.out.split() == [r.run_id for r in load(swept).runs if r.point == 100]
    assert "s: 2 of 2 runs to start" in listed.err and "started none" in listed.err
    assert not out.exists()
    first = load(swept).runs[0]  # saved ok with its configuration: not listed again
    (out / "runs" / first.run_id).mkdir(parents=True)
    manifest = {"status": "ok", "config": json.loads(json.dumps(first.config, default=str))}
    (out / "runs" / first.run_id / "manifest.json").write_text(json.dumps(manifest))
    assert dcexp(["run", str(swept), "--out", str(out), "--dry-run"]) == 0
    listed = capsys.readouterr()
    assert first.run_id not in listed.out.split() and len(listed.out.split()) == 3
    assert "s: 3 of 4 runs to start" in listed.err


def test_cli_campaign_dry_run_lists_each_studys_runs(capsys, tmp_path):
    """`dcexp campaign -n` lists STUDY/RUN for every study, a line per study and the total,
    and makes nothing."""
    studies = tmp_path / "studies"
    studies.mkdir()
    for name, reps in (("a", 1), ("b", 2)):
        (studies / f"{name}.yaml").write_text(
            f"name: {name}\nlinks: {{both: {{rate_mbit: 20}}}}\nflows: [{{size_mb: 1}}]\n"
            f"repetitions: {reps}\n"
        )
    out = tmp_path / "o"
    assert dcexp(["campaign", str(studies), "--out", str(out), "--dry-run"]) == 0
    listed = capsys.readouterr()
    assert [line.split("/")[0] for line in listed.out.split()] == ["a", "b", "b"]
    assert "a: 1 of 1 runs to start" in listed.err and "b: 2 of 2 runs to start" in listed.err
    assert "3 of 3 runs to start" in listed.err and not out.exists()


@pytest.mark.parametrize(
    "seconds, shown", [(0, "0s"), (59.9, "59s"), (185, "3m05s"), (7620, "2h07m"), (-3, "0s")]
)
def test_durations_read_in_the_largest_unit_that_fits(seconds, shown):
    assert format_duration(seconds) == shown

"""Issue 26's headline across transports (experiments/analysis/multipath.py) over hand-made
studies named as the issue's: the cells' means, 95 % CIs and n worked out by hand (t for
1 and 2 degrees of freedom: 12.706 and 4.303), "not run" for a study that is not there, the
CPU-affected marks; the same table again from the studies' runs.csv; and the generated
section of experiments/docs/baselines/findings.md as the tool writes it.

    .venv/bin/python -m pytest -q experiments/tests/test_exp_multipath_headline.py
"""

import shutil
from pathlib import Path

import pytest

from experiments.analysis import headline, multipath
from experiments.tests.test_exp_headline import run, study

ROOT = Path(__file__).resolve().parents[2]
BASELINES = Path("experiments/docs/baselines")
OUTAGE = [(8.0, {"loss": 1}), (11.0, {"loss": 0})]
TQUIC_SC = {"scheduler": "single-path"}


def alone(kind, scheduler, goodput):
    """The DC client's flow alone: (flows, series) for run()."""
    extra = {"scheduler": scheduler} if scheduler else {}
    return {"f0-dc": (kind, "dc", goodput, extra)}, {"f0-dc": [goodput] * 20}


@pytest.fixture
def results(tmp_path):
    """mpquic-bulk, -loss, -outage and -fairness; mpquic-stepdown not run."""
    bulk = study(tmp_path, "mpquic-bulk", {"param": "legs", "values": ["20/20", "20/5"]})
    for rep, good in enumerate((30.0, 32.0, 34.0)):
        cpu = {"cpu_bound": True} if rep == 1 else {}
        run(
            bulk, f"20-20__mpq__rep{rep}", "20/20", *alone("mpquic", "minrtt", good), rep=rep, **cpu
        )
    run(bulk, "20-5__mpq__rep0", "20/5", *alone("mpquic", "minrtt", 20.0))
    run(bulk, "20-20__mptcp__rep0", "20/20", *alone("mptcp", None, 35.0))

    loss = study(tmp_path, "mpquic-loss", {"param": "links.both.loss", "values": [0, 0.05]})
    for rate, goods in ((0, (18.0, 20.0)), (0.05, (10.0, 12.0, 14.0))):
        for rep, good in enumerate(goods):
            cpu = {"cpu_bound": True} if (rate, rep) == (0.05, 2) else {}
            run(loss, f"{rate}__red__rep{rep}", rate, *alone("mpquic", "redundant", good),
                loss=rate, rep=rep, **cpu)  # fmt: skip
    run(loss, "0.05__tcp__rep0", 0.05, *alone("tcp", None, 8.0), loss=0.05, dc={"dup": True})

    outage = study(tmp_path, "mpquic-outage")
    tcp = {"f0-dc": ("tcp", "dc", 30.0, {})}
    for rep, back in enumerate(([10] * 10 + [38] * 50, [10] * 20 + [38] * 40)):
        series = {"f0-dc": [37] * 80 + [18] * 30 + back}  # recovers 1 s, then 2 s after 11 s
        run(outage, f"tcp__rep{rep}", None, tcp, series, events=OUTAGE, rep=rep)
    backup = {"f0-dc": ("mptcp", "dc", 20.0, {})}
    run(outage, "backup", None, backup, {"f0-dc": [37] * 80 + [19] * 90}, events=OUTAGE)

    fair = study(tmp_path, "mpquic-fairness")
    for name, kind, extra, sc_kind, sc_extra, goods in (
        ("mpq-even", "mpquic", {"scheduler": "minrtt"}, "mpquic", TQUIC_SC, (10, 10, 10)),
        ("mpq-more", "mpquic", {"scheduler": "minrtt"}, "mpquic", TQUIC_SC, (20, 10, 10)),
        ("quic-dc", "ngtcp2", {}, "mpquic", TQUIC_SC, (10, 10, 10)),
        ("ngtcp2-dc", "ngtcp2", {}, "ngtcp2", {}, (20, 10, 10)),
    ):
        flows = {
            "f0-dc": (kind, "dc", goods[0], extra),
            "f1-sc-a": (sc_kind, "sc-a", goods[1], sc_extra),
            "f2-sc-b": (sc_kind, "sc-b", goods[2], sc_extra),
        }
        run(fair, name, None, flows, {f: [g] * 20 for f, g in zip(flows, goods)})
    return tmp_path


def test_each_cell_is_its_studys_mean_ci_and_n(results):
    found = multipath.load([results])
    table = multipath.headline_table(found).set_index("transport")
    mpq = table.loc["MPQUIC minrtt"]
    assert mpq["goodput 20/20 Mbit/s"] == "32 [27, 37] (n=3), 1 CPU-affected"
    assert mpq["goodput 20/5 Mbit/s"] == "20 (n=1)"
    jfi = 40**2 / (3 * (20**2 + 10**2 + 10**2))  # 0.889; mean with 1: 0.944, sd 0.0786
    assert jfi == pytest.approx(0.8889, abs=1e-4)
    assert (
        mpq["JFI whole run, 1 + 2 SC flows"]
        == "0.944 [0.333, 1] (n=2, CI clipped at 0.333 and 1) vs sc-a tquic, sc-b tquic"
    )
    assert table.loc["MPTCP", "goodput 20/20 Mbit/s"] == "35 (n=1)"
    assert table.loc["MPTCP", "goodput 20/5 Mbit/s"] == multipath.NOT_IN_STUDY

    red = table.loc["MPQUIC redundant"]
    assert red["goodput at 5 % loss Mbit/s"] == "12 [7.03, 17] (n=3), 1 CPU-affected"
    # sd / mean across reps: 1.41 / 19 = 0.074 at 0 %, 2 / 12 = 0.17 at 5 %
    assert red["variation across reps (CV), 0 to 5 % loss"] == (
        "0.074 to 0.17 over 2 rates (n=2 to 3 per rate), 1 CPU-affected"
    )
    dup = table.loc["TCP over DC, duplicated"]
    assert dup["goodput at 5 % loss Mbit/s"] == "8 (n=1)"
    assert dup["variation across reps (CV), 0 to 5 % loss"] == "- (fewer than 2 runs per rate)"

    tcp = table.loc["TCP over DC"]
    # the t interval, 1.5 ± 6.35, reaches below 0 s: shown clipped, and said so
    assert tcp["recovery s, outage"] == "1.5 [0, 7.85] (n=2, CI clipped at 0)"
    # leg B alone 8-11 s, both after: 12.5 and 17.5 MB of capacity, 8 and 9.25 MB arrived
    assert tcp["stalled MB, outage"] == "6.38 [0, 30.2] (n=2, CI clipped at 0)"
    assert tcp["goodput 20/20 Mbit/s"] == multipath.NOT_IN_STUDY
    mptcp = table.loc["MPTCP"]
    assert mptcp["recovery s, outage"] == "not recovered (n=1)"
    assert mptcp["stalled MB, outage"] == "16.1 (n=1)"  # 37.5 MB of capacity, 21.375 arrived
    assert (
        (table[["recovery s, step down", "stalled MB, step down"]] == headline.NOT_RUN).all().all()
    )

    ngtcp2 = table.loc["QUIC over DC (ngtcp2)", "JFI whole run, 1 + 2 SC flows"]
    assert ngtcp2 == "0.889 (n=1) vs sc-a ngtcp2, sc-b ngtcp2; 1 (n=1) vs sc-a tquic, sc-b tquic"
    assert (table.loc["MPQUIC roundrobin"].drop(["recovery s, step down", "stalled MB, step down"])
            == multipath.NOT_IN_STUDY).all()  # fmt: skip
    families = [headline._family_rank(t) for t in table.index]
    assert families == sorted(families)


def test_the_loss_table_and_the_cpu_affected_runs(results):
    found = multipath.load([results])
    loss = multipath.loss_table(found["mpquic-loss"][1]).set_index("transport")
    assert loss.loc["MPQUIC redundant", "0 % loss"] == "19 [6.29, 31.7] (n=2), CV 0.074"
    assert (
        loss.loc["MPQUIC redundant", "5 % loss"] == "12 [7.03, 17] (n=3), CV 0.17, 1 CPU-affected"
    )
    assert loss.loc["TCP over DC, duplicated", "0 % loss"] == multipath.NOT_IN_STUDY
    assert multipath.cpu_lines(found) == [
        "- mpquic-bulk: 1 of 5: 20/20 mpquic (rep 1)",
        "- mpquic-loss: 1 of 6: 0.05 mpquic (rep 2)",
        "- mpquic-outage: 0 of 3",
        "- mpquic-fairness: 0 of 4",
    ]
    text = multipath.render(found)
    assert "\n- mpquic-stepdown: not run\n" in text and "\n- mpquic-loss: 6 runs (" in text


def test_a_study_not_run_is_not_run_in_every_cell(results):
    shutil.rmtree(results / "mpquic-loss")
    found = multipath.load([results / "mpquic-bulk", results / "mpquic-outage"])
    table = multipath.headline_table(found).set_index("transport")
    for column in ("goodput at 5 % loss Mbit/s", "JFI whole run, 1 + 2 SC flows"):
        assert (table[column] == headline.NOT_RUN).all(), table[column]
    assert "per loss rate on both legs (mpquic-loss):\n\nnot run" in multipath.render(found)


def test_a_folder_without_the_issues_studies_gives_not_run_everywhere(tmp_path, capsys):
    study(tmp_path, "loop-ratio-20")  # another study: passed over
    assert multipath.main([str(tmp_path)]) == 0
    table = multipath.headline_table(multipath.load([tmp_path])).set_index("transport")
    assert list(table.index) == list(headline.FAMILIES)
    assert (table == headline.NOT_RUN).all().all()


def test_the_same_table_from_the_studies_runs_csv(results, tmp_path_factory, capsys):
    """--save-runs keeps each study's records; the table comes back from them alone."""
    kept = tmp_path_factory.mktemp("kept")
    assert multipath.main([str(results), "--save-runs", str(kept)]) == 0
    from_runs = capsys.readouterr().out
    for name in ("mpquic-bulk", "mpquic-loss", "mpquic-outage", "mpquic-fairness"):
        shutil.copy(results / name / "scenario.yaml", kept / name)
        assert (kept / name / "runs.csv").exists()
    assert multipath.main([str(kept)]) == 0
    assert capsys.readouterr().out == from_runs.replace(str(results), str(kept))


def test_into_rewrites_only_the_generated_section(results, tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Top\n\n{multipath.BEGIN}\nold table\n{multipath.END}\n\n## After\n")
    assert multipath.main([str(results), "--into", str(readme)]) == 0
    printed = capsys.readouterr().out
    assert readme.read_text() == (
        f"# Top\n\n{multipath.BEGIN}\n{printed.rstrip()}\n{multipath.END}\n\n## After\n"
    )
    readme.write_text("# no markers\n")
    assert multipath.main([str(results), "--into", str(readme)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs the lines" in err[0]
    assert multipath.main([str(results), "--into", str(tmp_path / "none.md")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none.md" in err[0]


@pytest.mark.parametrize(
    "make,code,message",
    [
        (lambda d: d, 2, "neither a study folder (with scenario.yaml) nor a folder of them"),
        (lambda d: study(d, "loop-ratio-20"), 2, "study loop-ratio-20 is none of mpquic-bulk"),
        (lambda d: study(d, "mpquic-loss"), 1, "no runs/ and no runs.csv"),
    ],
)
def test_bad_folders_get_one_line_naming_what_is_expected(tmp_path, capsys, make, code, message):
    assert multipath.main([str(make(tmp_path))]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_a_damaged_runs_csv_is_named(results, capsys):
    shutil.rmtree(results / "mpquic-bulk" / "runs")
    (results / "mpquic-bulk" / "runs.csv").write_text("a,b\n1,2\n")
    assert multipath.main([str(results)]) == 1
    assert "mpquic-bulk/runs.csv: not a study's runs.csv" in capsys.readouterr().err


def test_the_baselines_findings_section_is_the_tools_output(monkeypatch):
    """experiments/docs/baselines/findings.md shows what the committed runs.csv give."""
    monkeypatch.chdir(ROOT)
    text = (BASELINES / "findings.md").read_text()
    section = text.split(multipath.BEGIN + "\n")[1].split("\n" + multipath.END)[0]
    assert section == multipath.render(multipath.load([BASELINES])).rstrip()

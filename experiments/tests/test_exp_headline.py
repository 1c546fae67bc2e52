"""The headline table across transports (experiments/analysis/headline.py) over a folder of
hand-made studies, each answering one of its questions, and `dcexp report` on that folder."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from experiments.analysis import headline, metrics
from experiments.cli import main as dcexp


def run(study, run_id, point, flows, series, loss=0.0, events=(), dc=None, policy="none", **cpu):
    """A run as the runner saves it: `flows` = {id: (kind, client, goodput, extra result)},
    `series` = {id: Mbit/s per 100 ms slot}."""
    d = study / "runs" / run_id
    d.mkdir(parents=True)
    rows = []
    for fid, rates in series.items():
        for i, total in enumerate(np.cumsum(rates) * 1e6 / 8 * 0.1):
            rows.append((0.1 * i + 0.05, "flow", fid, "bytes", total))
    pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"]).to_csv(
        d / "samples.csv", index=False
    )
    specs = [{"kind": kind, "client": client} for kind, client, _, _ in flows.values()]
    manifest = {
        "run_id": run_id,
        "point": point,
        "variant": specs[0]["kind"],
        "rep": 0,
        "status": "ok",
        "config": {
            "links": {leg: {"rate_mbit": 20, "loss": loss} for leg in "ab"},
            "dc": dc or {"ratio": [1, 1]},
            "control": {"policy": policy},
            "flows": specs,
        },
        "flows": {
            fid: {"kind": kind, "client": client, "goodput_mbit": good, **extra}
            for fid, (kind, client, good, extra) in flows.items()
        },
        "events_applied": [
            {"link": "a", "direction": "down", "set": change, "applied_at_s": t}
            for t, change in events
        ],
        **cpu,
    }
    (d / "manifest.json").write_text(json.dumps(manifest))


def study(parent, name, sweep=None):
    s = parent / name
    s.mkdir(parents=True)
    (s / "scenario.yaml").write_text(yaml.safe_dump({"name": name, "sweep": sweep}))
    return s


MINRTT = {"scheduler": "minrtt"}
OUTAGE = [(8.0, {"loss": 1}), (11.0, {"loss": 0})]


@pytest.fixture
def parent(tmp_path):
    """Bulk (swept: only its first value counts), loss, outage and fairness studies."""
    bulk = study(tmp_path, "bulk", {"param": "legs", "values": ["20/20", "20/5"]})
    for rep, good in enumerate((30.0, 32.0)):
        for point, g in (("20/20", good), ("20/5", 20.0)):
            fl = {"f0-dc": ("mpquic", "dc", g, MINRTT)}
            run(bulk, f"{point.replace('/', '-')}__mpq__rep{rep}", point, fl, {"f0-dc": [g] * 20})
    loss = study(tmp_path, "loss")
    tcp = {"f0-dc": ("tcp", "dc", 15.0, {})}
    run(loss, "tcp", None, tcp, {"f0-dc": [10, 20] * 10 + [3]}, loss=0.02, cpu_bound=True)
    dup = {"f0-dc": ("ngtcp2", "dc", 15.0, {})}
    run(loss, "dup", None, dup, {"f0-dc": [15] * 20}, loss=0.02, dc={"dup": True})
    outage = study(tmp_path, "outage")
    for policy, back in (("none", [10] * 10 + [38] * 50), ("failover", [38] * 60)):
        run(outage, f"tcp-{policy}", None, tcp, {"f0-dc": [37] * 80 + [18] * 30 + back},
            events=OUTAGE, policy=policy)  # fmt: skip
    fair = study(tmp_path, "fair")
    fl = {"f0-dc": ("mptcp", "dc", 20.0, {}), "f1-sc-a": ("tcp", "sc-a", 10.0, {})}
    run(fair, "mptcp", None, fl, {"f0-dc": [20] * 20, "f1-sc-a": [10] * 20})
    return tmp_path


def test_each_cell_comes_from_the_runs_that_ask_its_question(parent):
    runs = pd.concat([headline.study_runs(s) for s in headline.studies(parent)])
    table = headline.table(runs).set_index("transport")
    mpq = table.loc["MPQUIC minrtt"]
    assert mpq["goodput Mbit/s"].startswith("31 [") and mpq["goodput Mbit/s"].endswith("(n=2)")
    assert (mpq.drop("goodput Mbit/s") == headline.NOT_RUN).all()
    cv = np.std([10, 20] * 10, ddof=1) / 15
    assert table.loc["TCP over DC", "goodput CV under loss"] == f"{cv:.3g} (n=1), 1 CPU-affected"
    assert table.loc["QUIC over DC (ngtcp2), duplicated", "goodput CV under loss"] == "0 (n=1)"
    assert table.loc["TCP over DC", "recovery s at handover"] == "1 (n=1)"
    assert table.loc["TCP over DC, failover", "recovery s at handover"] == "0 (n=1)"
    jfi = metrics.jain([20, 10])
    assert table.loc["MPTCP", "JFI whole run"] == f"{jfi:.3g} (n=1)"
    assert (table.loc[["MPQUIC roundrobin", "single-path QUIC"]] == headline.NOT_RUN).all().all()
    families = [headline._family_rank(t) for t in table.index]
    assert families == sorted(families)  # the order


def test_closed_loop_runs_get_a_row_per_split_method_not_tcp_over_dcs(parent):
    """A loop_*.yaml study: its oracle, static and credit runs are TCP over DC by their
    config, but what they vary is the split; each method at the first ratio's legs counts."""
    loops = study(parent, "loop-ratio", {"param": "ratio_loop", "values": ["1:1/static"]})
    for point, good, dc in (
        ("1:1/static", 36.0, None),
        ("1:1/oracle", 38.0, None),
        ("1:1/dataplane", 37.0, {"ratio": [1, 1], "credit": True}),
        ("4:1/oracle", 24.0, None),  # another scenario of the study: not the reference legs
    ):
        run_id = point.replace("/", "_").replace(":", "-")
        fl = {"f0-dc": ("tcp", "dc", good, {})}
        run(loops, run_id, point, fl, {"f0-dc": [good] * 20}, dc=dc)
    runs = pd.concat([headline.study_runs(s) for s in headline.studies(parent)])
    table = headline.table(runs).set_index("transport")
    assert table.loc["TCP over DC", "goodput Mbit/s"] == headline.NOT_RUN
    loop_rows = [t for t in table.index if t.startswith("closed-loop study")]
    assert loop_rows == [
        "closed-loop study: oracle split (TCP over DC)",
        "closed-loop study: static split (TCP over DC)",
        "closed-loop study: dataplane split (TCP over DC)",
    ]  # after every transport, in the loop tables' order
    assert table.index[-3:].tolist() == loop_rows
    assert table.loc[loop_rows[0], "goodput Mbit/s"] == "38 (n=1)"
    assert "Closed-loop study rows" in headline.NOTE


def test_report_over_a_folder_of_studies_writes_the_headline(parent, capsys):
    assert dcexp(["report", str(parent)]) == 0
    printed = capsys.readouterr().out
    text = (parent / "headline.md").read_text()
    assert "Studies: bulk, fair, loss, outage" in text and "| MPQUIC minrtt | 31 [" in text
    assert text.split("\n\n")[2] in printed


def test_report_over_a_folder_without_studies_says_what_it_expects(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert dcexp(["report", str(tmp_path)]) == 1
    assert "or study folders each with runs/" in capsys.readouterr().err

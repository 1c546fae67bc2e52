"""aioquic's CPU: the limit bench (experiments/bench/aioquic_limit.py), whose grid is a valid
study and whose table and limits follow from hand-made manifests (the real grid needs an idle
machine: `make aioquic-limit`), quic_endpoint's --loop option, a real download over loopback on
each event loop, and the flow key `loop` that chooses it in studies."""

import hashlib
import json
import subprocess
import sys
import time

import pytest

from dccommon.ports import free_port
from experiments.bench import aioquic_limit, aioquic_loopback
from experiments.flows import make_cert, make_payload, quic_endpoint
from experiments.run.runner import pending_runs
from experiments.run.scenario import ScenarioError, from_dict


def test_the_grid_is_one_study_with_a_point_per_flow_count_and_rate():
    scenario = from_dict(aioquic_limit.scenario_doc([1, 3], [5.0, 20.0], 10))
    points = {r.point: r.config for r in scenario.runs}
    assert list(points) == ["1x5", "1x20", "3x5", "3x20"]
    cfg = points["3x20"]
    assert cfg["flows"][0]["count"] == 3 and cfg["flows"][0]["udp_rcvbuf"] == "large"
    assert cfg["links"]["a"]["rate_mbit"] == cfg["links"]["b"]["rate_mbit"] == 20
    assert cfg["links"]["a"]["delay_ms"] == 10  # the paper's leg otherwise


def test_the_grid_runs_on_either_loop_and_asyncio_leaves_its_runs_as_they_were():
    asyncio_runs = from_dict(aioquic_limit.scenario_doc([1], [5.0], 10)).runs
    uvloop_runs = from_dict(aioquic_limit.scenario_doc([1], [5.0], 10, "uvloop")).runs
    assert asyncio_runs[0].variant == "aioquic-newreno-rcvbuf-large"
    assert asyncio_runs[0].config["flows"][0]["loop"] is None  # asyncio, as before the key
    assert uvloop_runs[0].variant == "aioquic-newreno-rcvbuf-large-uvloop"
    assert uvloop_runs[0].config["flows"][0]["loop"] == "uvloop"
    with pytest.raises(SystemExit):
        aioquic_limit.main(["run", "--loop", "trio"])


def _doc(flows, variants=None):
    doc = {
        "name": "loops",
        "links": {"both": {"rate_mbit": 20, "delay_ms": 10}},
        "flows": flows,
    }
    return doc | ({"variants": variants} if variants else {})


def test_a_variants_loop_reaches_the_aioquic_flows_and_names_the_variant():
    flows = [
        {"kind": "aioquic", "size_mb": 1, "client": "dc"},
        {"kind": "tcp", "size_mb": 1, "client": "sc-a"},
    ]
    variants = [{"cc": "newreno", "loop": "uvloop"}, {"cc": "newreno"}]
    uv, plain = from_dict(_doc(flows, variants)).runs
    assert (uv.variant, plain.variant) == ("newreno-uvloop", "newreno")  # never mixed
    assert [f["loop"] for f in uv.config["flows"]] == ["uvloop", None]  # not on the TCP flow
    assert [f["loop"] for f in plain.config["flows"]] == [None, None]


@pytest.mark.parametrize(
    "flows,variants,message",
    [
        (
            [{"kind": "aioquic", "size_mb": 1, "loop": "trio"}],
            None,
            r"flows\[0\]\.loop: 'trio' is not one of asyncio, uvloop",
        ),
        (
            [{"kind": "ngtcp2", "size_mb": 1, "loop": "uvloop"}],
            None,
            r"flows\[0\]\.loop: applies to kind aioquic only .* not ngtcp2",
        ),
        (
            [{"kind": "aioquic", "size_mb": 1}],
            [{"kind": "tcp", "loop": "uvloop"}],
            r"variants\[0\]\.loop: applies to kind aioquic only, and this variant is kind tcp",
        ),
    ],
)
def test_a_bad_loop_is_one_line_naming_the_allowed(flows, variants, message):
    with pytest.raises(ScenarioError, match=message):
        from_dict(_doc(flows, variants))


def test_runs_saved_before_the_loop_key_still_count_and_uvloop_runs_do_not(tmp_path):
    scenario = from_dict(_doc([{"kind": "aioquic", "size_mb": 1}]))
    [run] = scenario.runs
    saved = json.loads(json.dumps(run.config))
    del saved["flows"][0]["loop"]  # a manifest written before the key existed
    run_dir = tmp_path / "runs" / run.run_id
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"status": "ok", "config": saved}))
    assert pending_runs(scenario, tmp_path) == []
    uv = from_dict(_doc([{"kind": "aioquic", "size_mb": 1, "loop": "uvloop"}]))
    assert [r.run_id for r in pending_runs(uv, tmp_path)] == [run.run_id]


def _manifest(out, point, rate, goodputs, client_busy, short=(), reasons=()):
    run = out / "runs" / point
    run.mkdir(parents=True)
    flows = {f"f0.{i}-dc": {"client": "dc", "goodput_mbit": g} for i, g in enumerate(goodputs)}
    cpu = {f"f0.{i}-dc/client": {"mean_busy": client_busy} for i in range(len(goodputs))}
    cpu |= {f"f0.{i}-dc/server": {"mean_busy": 0.1} for i in range(len(goodputs))}
    cpu["switch"] = {"mean_busy": 0.5}
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": point,
                "variant": "aioquic-newreno",  # the keys every saved manifest has
                "rep": 0,
                "status": "ok",
                "config": {
                    "links": {"a": {"rate_mbit": rate}, "b": {"rate_mbit": rate}},
                    "flows": [{"kind": "aioquic", "loop": None}],
                },
                "flows": flows,
                "process_cpu": cpu,
                "saturated_processes": list(short),
                "cpu_reasons": list(reasons),
                "cpu_bound": bool(reasons),
            }
        )
    )


def test_limits_take_the_highest_offer_used_without_a_cpu_bound_flow(tmp_path):
    _manifest(tmp_path, "1x10", 10, [19.0], 0.3)
    _manifest(tmp_path, "1x20", 20, [37.5], 0.6)
    _manifest(tmp_path, "1x30", 30, [40.0], 0.95, ["f0.0-dc/client"])  # CPU-bound
    _manifest(tmp_path, "3x10", 10, [6.0, 6.2, 6.1], 0.2)
    _manifest(tmp_path, "3x20", 20, [9.0, 9.0, 9.0], 0.3, ["switch"])  # not a flow: counts
    table = aioquic_limit.limit_table(tmp_path)
    assert list(table.flows) == [1, 1, 1, 3, 3]
    row = table[(table.flows == 3) & (table.offered_mbit == 40)].iloc[0]
    assert row.client_cpu == pytest.approx(0.9) and row.server_cpu == pytest.approx(0.3)
    assert not row.cpu_bound and row.used == pytest.approx(27 / 40)
    assert aioquic_limit.limits(table) == {1: 40.0, 3: 20.0}
    text = aioquic_limit.report(tmp_path).read_text()
    assert text.startswith("# Where aioquic's client becomes CPU-bound (event loop: asyncio)")
    assert "| 1 | 60 | 60 | 40.0 | 67% | 0.95 | 0.10 | f0.0-dc/client |" in text
    assert "- 1 flow(s): 40 Mbit/s (40 per flow)" in text
    assert (tmp_path / "aioquic-limit.png").exists()


def test_a_client_the_verdict_names_for_waiting_counts_as_short_of_cpu(tmp_path):
    waited = ["f0.0-dc/client waited for a core 31% of the time"]
    _manifest(tmp_path, "3x20", 20, [13.0, 12.0, 12.2], 0.4, reasons=waited)
    _manifest(tmp_path, "3x10", 10, [6.0, 6.2, 6.1], 0.2, reasons=["every core busy (mean 97%)"])
    table = aioquic_limit.limit_table(tmp_path).set_index("offered_mbit")
    assert table.loc[40].short_of_cpu == "f0.0-dc/client" and table.loc[40].cpu_bound
    assert table.loc[20].short_of_cpu == "-" and table.loc[20].cpu_bound  # cores full: no name


def test_bad_grids_get_one_line_naming_the_range(capsys):
    with pytest.raises(SystemExit):
        aioquic_limit.main(["run", "--flows", "0,2"])
    assert "--flows '0,2': expected comma-separated whole numbers from 1 to 16" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit):  # sorted(set()) kept one 5 silently
        aioquic_limit.main(["run", "--rates", "5,10,5"])
    assert "'5,10,5': 5 is given twice; give each once" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        aioquic_limit.main(["run", "--rates", "fast"])
    assert "--rates (Mbit/s per leg)" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # int() would read fullwidth digits as 1 and 2
        aioquic_limit.main(["run", "--flows", "１,２"])
    assert "--flows '１,２': expected comma-separated whole numbers" in capsys.readouterr().err


def test_the_limit_bench_checks_its_out_folder_before_the_runs(tmp_path, capsys, monkeypatch):
    from experiments.run import runner

    monkeypatch.setattr(runner, "run_scenario", lambda *a, **k: pytest.fail("ran"))
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as info:
        aioquic_limit.main(["run", "--flows", "1", "--rates", "5", "--out", str(tmp_path / "file")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"--out: {tmp_path / 'file'}: exists and is not a dir" in err


def test_the_loopback_bench_checks_its_profile_folder_before_the_runs(
    tmp_path, capsys, monkeypatch
):
    """--profile of a path it cannot make a folder: refused before the first download."""
    monkeypatch.setattr(aioquic_loopback, "client_cpu_s", lambda *a, **k: pytest.fail("ran"))
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as info:
        aioquic_loopback.main(["--runs", "1", "--profile", str(tmp_path / "file" / "prof")])
    err = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and err.endswith(
        "--profile: "
        + str(tmp_path / "file" / "prof")
        + ": cannot create the directory: Not a directory"
    )


@pytest.mark.parametrize("loop", quic_endpoint.LOOPS)
def test_a_download_is_intact_on_either_event_loop(tmp_path, loop):
    cert, key = make_cert(tmp_path)
    payload = make_payload(tmp_path / "payload", 1_000_000, seed=3)
    port = free_port("udp")
    endpoint = [sys.executable, "-m", "experiments.flows.quic_endpoint"]
    common = ["--addr", "127.0.0.1", "--port", str(port), "--loop", loop]
    server = subprocess.Popen(
        [*endpoint, "server", *common, "--cert", str(cert), "--key", str(key)]
        + ["--file", str(payload)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline().strip() == "listening"
        log = tmp_path / "client.jsonl"
        started = time.monotonic()
        client = subprocess.run(
            [*endpoint, "client", *common, "--bytes", "2500000", "--log", str(log)],
            timeout=60,
            check=False,
        )
        assert client.returncode == 0, f"client exit {client.returncode}"
    finally:
        server.terminate()
        server.wait(timeout=10)
    final = json.loads(log.read_text().splitlines()[-1])
    data = payload.read_bytes()
    expected = (data * 3)[:2_500_000]  # the server loops its file
    assert final["complete"] and final["bytes"] == 2_500_000
    assert final["sha256"] == hashlib.sha256(expected).hexdigest()
    assert time.monotonic() - started < 60


def test_uvloop_missing_is_one_line_naming_the_loops(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    with pytest.raises(SystemExit, match="--loop uvloop: the uvloop package is not installed"):
        quic_endpoint._runner("uvloop")
    with quic_endpoint._runner("asyncio") as runner:
        assert runner.run(_answer()) == 42


async def _answer() -> int:
    return 42


def test_the_loopback_bench_measures_each_loop_and_where_the_time_goes(tmp_path, capsys):
    assert aioquic_loopback.main(["--runs", "1", "--mb", "1", "--profile", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for loop in quic_endpoint.LOOPS:
        assert f"  {loop:8} mean " in out
        datagrams, shares = aioquic_loopback.profile_shares(tmp_path / f"{loop}.prof")
        assert datagrams >= 1_000_000 / 1400  # every datagram of the download counted
        receive = shares["aioquic receive (header, decryption, frames)"]
        assert 0 < shares["ours: events, SHA-256"] < receive / 3 and receive > 0.05
        assert sum(shares.values()) == pytest.approx(1)
    with pytest.raises(SystemExit):
        aioquic_loopback.main(["--loops", "asyncio,trio"])
    assert "--loops: a comma-separated list of asyncio, uvloop" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--runs", "５"], "runs '５' is not a whole number (allowed 1..50)"),
        (["--runs", "51"], "runs 51 is out of range (allowed 1..50)"),
        (["--mb", "nan"], "size 'nan' must be a number from 0.1 to 1000"),
        # the loops are alternated run by run: a repeat was dropped without a word
        (["--loops", "uvloop,asyncio,uvloop"], "uvloop is given twice; give each once"),
    ],
)
def test_the_loopback_bench_refuses_bad_options_naming_the_allowed_values(
    argv, message, capsys, monkeypatch
):
    monkeypatch.setattr(aioquic_loopback, "client_cpu_s", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(SystemExit) as info:
        aioquic_loopback.main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err

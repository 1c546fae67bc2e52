"""QUICbench's performance envelope: hull geometry, conformance and deviation on clouds
whose answer is known, the (throughput, delay) points per 10 RTTs from samples, and the
report's envelope table."""

import numpy as np
import pandas as pd
import pytest

from experiments.analysis import envelope


def cloud(seed: int, n: int = 400, thr: float = 18.0, delay: float = 40.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(thr, 1.0, n), rng.normal(delay, 4.0, n)])


def test_hull_of_a_square_with_inner_and_edge_points():
    pts = np.array([[0, 0], [2, 0], [2, 2], [0, 2], [1, 1], [1, 0], [0.5, 1.5]])
    hull = envelope.convex_hull(pts)
    assert {tuple(p) for p in hull} == {(0, 0), (2, 0), (2, 2), (0, 2)}
    inside = envelope.inside_hull(hull, np.array([[1, 1], [2, 1], [2.01, 1], [-0.1, 0]]))
    assert inside.tolist() == [True, True, False, False]


def test_degenerate_hulls_are_segments_and_points():
    seg = envelope.convex_hull(np.array([[0, 0], [1, 1], [2, 2]]))
    assert len(seg) == 2
    assert envelope.inside_hull(seg, np.array([[1.5, 1.5], [1.5, 1.0], [3, 3]])).tolist() == [
        True,
        False,
        False,
    ]
    one = envelope.convex_hull(np.array([[1, 2], [1, 2]]))
    assert envelope.inside_hull(one, np.array([[1, 2], [1, 3]])).tolist() == [True, False]


def test_envelope_drops_the_outer_five_percent():
    pts = cloud(1, n=200)
    far = np.array([[60.0, 400.0]])  # one outlier far from the mean
    hull = envelope.envelope(np.vstack([pts, far]))
    assert not envelope.inside_hull(hull, far)[0]
    assert len(envelope.kept_points(np.vstack([pts, far]))) == int(np.ceil(0.95 * 201))


def test_a_cloud_against_another_draw_of_itself_conforms():
    res = envelope.compare(cloud(2), cloud(3))
    assert res["conformance"] > 0.85
    assert res["deviation"] < 0.05


def test_disjoint_clouds_do_not_conform_and_deviate_by_their_distance():
    res = envelope.compare(cloud(4, thr=18.0), cloud(5, thr=8.0, delay=120.0))
    assert res["conformance"] == 0.0
    assert res["d_throughput_mbit"] == pytest.approx(10.0, abs=0.3)
    assert res["d_delay_ms"] == pytest.approx(-80.0, abs=1.5)
    # relative to the reference's means: (10/8, -80/120)
    assert res["deviation"] == pytest.approx(np.hypot(10 / 8, 80 / 120), rel=0.05)


def test_a_narrower_cloud_conforms_to_a_wider_one_not_the_reverse():
    rng = np.random.default_rng(6)
    wide = np.column_stack([rng.normal(18, 3.0, 400), rng.normal(40, 10.0, 400)])
    narrow = np.column_stack([rng.normal(18, 0.5, 400), rng.normal(40, 2.0, 400)])
    assert envelope.compare(narrow, wide)["conformance"] > 0.95
    assert envelope.compare(wide, narrow)["conformance"] < 0.3


def test_points_every_10_rtts_from_cumulative_bytes_and_rtt():
    # 20 Mbit/s for 10 s, sampled every 100 ms, RTT 20 ms: windows of 200 ms
    t = np.arange(0, 10.01, 0.1)
    rows = [(x, "flow", "f0-dc", "bytes", 20e6 / 8 * x) for x in t]
    rows += [(x, "flow", "f0-dc", "rtt_ms", 20.0 + (x > 5) * 10) for x in t]
    rows += [(x, "link", "a/ab", "bytes", 1.0) for x in t]  # other sources are ignored
    samples = pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"])
    pts = envelope.flow_points(samples)["f0-dc"]
    assert len(pts) == pytest.approx(50, abs=1)
    assert np.allclose(pts[:, 0], 20.0)
    delays = np.round(pts[:, 1]).tolist()
    assert delays[:20] == [20.0] * 20 and delays[-20:] == [30.0] * 20


def test_reference_is_the_tcp_variant():
    assert envelope.reference_variant(["ngtcp2-cubic", "tcp-cubic", "tcp-bbr"]) == "tcp-cubic"
    assert envelope.reference_variant(["ngtcp2-cubic"]) is None


def _study(tmp_path):
    """A saved study of two variants at point 100: TCP at ~18 Mbit/s and 40 ms; the other
    variant twice as slow at three times the delay (disjoint envelopes)."""
    import yaml

    from experiments.tests.test_exp_analysis import _fake_run

    out = tmp_path / "res"
    out.mkdir()
    doc = {
        "name": "env",
        "sweep": {"param": "dc.batch", "values": [100, 1000]},
        "variants": [{"kind": "mptcp", "cc": "cubic"}, {"kind": "tcp", "cc": "cubic"}],
    }
    (out / "scenario.yaml").write_text(yaml.safe_dump(doc))
    rng = np.random.default_rng(7)
    for variant, thr, delay in (("tcp-cubic", 18.0, 40.0), ("mptcp-cubic", 9.0, 120.0)):
        for rep in range(2):
            run_id = f"b=100__{variant}__rep{rep}"
            flows = {"f0-dc": {"client": "dc", "goodput_mbit": thr, "completion_s": 3.0}}
            rates = list(rng.normal(thr, 1.0, 300).clip(min=0.1))
            _fake_run(out, run_id, 100, variant, rep, flows, {"f0-dc": rates})
            path = out / "runs" / run_id / "samples.csv"
            rtt = pd.DataFrame(
                [
                    (0.1 * i + 0.05, "flow", "f0-dc", "rtt_ms", d)
                    for i, d in enumerate(rng.normal(delay, 3.0, 300))
                ],
                columns=["t_s", "source", "id", "metric", "value"],
            )
            pd.concat([pd.read_csv(path), rtt]).to_csv(path, index=False)
    return out


def test_report_draws_envelopes_and_tabulates_them(tmp_path, capsys):
    # the envelope part of `dcexp report` (the whole report draws every figure: slow in CI)
    import yaml

    from experiments.analysis.report import _envelopes
    from experiments.cli import main as dcexp

    out = _study(tmp_path)
    clouds = envelope.variant_clouds(out, 100)
    table = envelope.envelope_table(clouds, "tcp-cubic").set_index("variant")
    assert table.loc["tcp-cubic", "conformance"] == 1.0
    assert table.loc["tcp-cubic", "deviation"] == 0.0
    assert table.loc["mptcp-cubic", "conformance"] == 0.0
    assert table.loc["mptcp-cubic", "d_throughput_mbit"] == pytest.approx(-9.0, abs=0.5)
    doc = yaml.safe_load((out / "scenario.yaml").read_text())
    shown, figures = _envelopes(out, doc, ["mptcp-cubic", "tcp-cubic"], None, out / "figures")
    assert shown.variant.tolist() == ["mptcp-cubic", "tcp-cubic"]
    assert (out / "figures" / "envelopes.png").stat().st_size > 1000
    assert out / "figures" / "envelopes.pdf" in figures
    assert dcexp(["report", str(out), "--envelope-point", "7"]) == 2
    assert "not a swept value" in capsys.readouterr().err

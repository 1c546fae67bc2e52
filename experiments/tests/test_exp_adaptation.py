"""experiments.analysis.loop_metrics on hand-made samples: per-interval frames from linkem's cumulative
counters, leg shares, how long a dead leg kept traffic, the controller's first decision.

Run: .venv/bin/pytest experiments/tests/test_exp_loop_metrics.py
"""

import pandas as pd
import pytest

from experiments.analysis import loop_metrics

PERIOD = 0.01


def samples(per_interval: list[tuple[int, int]], decisions=()) -> pd.DataFrame:
    """linkem rows (cumulative rx_frames of a/ab and b/ab every 10 ms) + control rows."""
    rows, ca, cb = [], 0, 0
    for i, (a, b) in enumerate(per_interval):
        ca, cb = ca + a, cb + b
        t = (i + 1) * PERIOD
        rows += [(t, "link", "a/ab", "rx_frames", ca), (t, "link", "b/ab", "rx_frames", cb)]
        rows += [(t, "link", "a/ba", "rx_frames", 999)]  # uplink: not counted
    rows += [(t, "control", "decision", "share_a", s) for t, s in decisions]
    return pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"])


def test_leg_frames_are_differences_of_the_counters():
    f = loop_metrics.leg_frames(samples([(3, 1), (3, 1), (2, 2)]))
    assert f.a.tolist()[1:] == [3, 2] and f.b.tolist()[1:] == [1, 2]


def test_leg_a_share_in_a_window():
    s = samples([(3, 1)] * 50 + [(1, 1)] * 50)
    assert loop_metrics.leg_a_share(s, 0.02, 0.5) == pytest.approx(0.75)
    assert loop_metrics.leg_a_share(s, 0.52) == pytest.approx(0.5)


def test_dead_leg_left_after_its_last_busy_window():
    """1:1 until 1.0 s, leg B still gets half until 1.05 s, then a 2 % probe only."""
    before = [(5, 5)] * 100
    after = [(5, 5)] * 5 + [(49, 1) if i % 5 == 0 else (50, 0) for i in range(95)]
    s = samples(before + after, decisions=[(1.04, 0.98)])
    left = loop_metrics.left_after_s(s, "b", 1.0, 2.0)
    # windows of 10 intervals from 1.01 s: ending at 1.09 s B has 26 of 250 frames (10.4 %),
    # at 1.10 s 26 of 300 (8.7 %): the last busy window ends at 1.09 s
    assert left == pytest.approx(0.09, abs=1e-6)
    assert loop_metrics.first_decision_s(s, 1.0) == pytest.approx(0.04)


def test_leg_never_used_after_the_event():
    s = samples([(5, 5)] * 100 + [(10, 0)] * 50)
    assert loop_metrics.left_after_s(s, "b", 1.0, 1.5) == 0.0
    assert loop_metrics.first_decision_s(s, 1.0) is None


def test_where_goodput_goes_per_leg_and_at_the_receiver():
    """Leg A (8 Mbit/s = 1 MB/s) sends 1 MB/s, leg B (2 Mbit/s) 125 kB/s: half its rate;
    after the flow's last sample both idle (not counted). The agent gave up on 7 frames
    after 3 expiries; the queues dropped 4; the controller decided twice."""
    rows = []
    for i in range(31):  # 0 .. 3 s, every 0.1 s; the flow ends at 2 s
        t = i * 0.1
        busy = min(t, 2.0)
        rows += [(t, "link", "a/ab", "bytes", busy * 1_000_000)]
        rows += [(t, "link", "b/ab", "bytes", busy * 125_000)]
        rows += [
            (t, "link", "a/ab", "config.rate_mbit", 8),
            (t, "link", "b/ab", "config.rate_mbit", 2),
        ]
        if t <= 2.0:
            rows += [(t, "flow", "f0-dc", "bytes", busy * 1_000_000)]
    rows += [(3.0, "link", "a/ab", "drops.queue", 4), (3.0, "link", "b/ab", "drops.queue", 0)]
    rows += [
        (3.0, "agent", "dc", "out_of_window", 7),
        (3.0, "agent", "dc", "t_reordering_expiries", 3),
    ]
    rows += [
        (0.5, "control", "decision", "share_a", 0.8),
        (1.5, "control", "decision", "share_a", 0.9),
    ]
    s = pd.DataFrame(rows, columns=["t_s", "source", "id", "metric", "value"])
    w = loop_metrics.where_goodput_goes(s, 1.0)
    assert w["use_a"] == pytest.approx(1.0) and w["use_b"] == pytest.approx(0.5)
    assert (w["queue_drops"], w["late_frames"], w["expiries"], w["decisions"]) == (4, 7, 3, 2)


def test_where_goodput_goes_without_feedback_or_agent_samples():
    w = loop_metrics.where_goodput_goes(samples([(3, 1)] * 10))
    assert all(w[k] != w[k] for k in ("use_a", "use_b", "queue_drops", "late_frames", "expiries"))
    assert w["decisions"] == 0


def test_outage_found_in_the_manifest():
    m = {
        "events_applied": [
            {"at_s": 2, "link": "a", "set": {"rate_mbit": 5}, "applied_at_s": 2.01},
            {"at_s": 4, "link": "b", "set": {"loss": 1}, "applied_at_s": 4.02},
            {"at_s": 7, "link": "b", "set": {"loss": 0}, "applied_at_s": 7.03},
        ]
    }
    assert loop_metrics.outage(m) == ("b", 4.02, 7.03)
    assert loop_metrics.outage({"events_applied": []}) is None


def loop_rows(point: str, goodputs: list[float], shares: list[float], **extra) -> list[dict]:
    return [
        {"point": point, "goodput_mbit": g, "leg_a_share": s, "cpu_saturated": False, **extra}
        for g, s in zip(goodputs, shares, strict=True)
    ]


def test_against_oracle_per_ratio_with_the_goal_per_row():
    table = pd.DataFrame(
        loop_rows("2:1/oracle", [30, 28], [0.66, 0.68])
        + loop_rows("2:1/capacity", [28.6, 28.4], [0.70, 0.70])  # 98 %, 0.03 off: pass
        + loop_rows("2:1/static", [20, 21], [0.5, 0.5])  # 70.7 %: fail
        + loop_rows("2:1/delay", [29, 29], [0.75, 0.74])  # 100 %, 0.075 off: fail
        + loop_rows("4:1/capacity", [20], [0.8])  # no oracle at 4:1: no rows
    )
    t = loop_metrics.against_oracle(table).set_index("method")
    goal = next(c for c in t.columns if c.startswith("goal"))
    assert list(t.index) == ["oracle", "static", "capacity", "delay"]
    assert (t.scenario == "2:1").all() and (t.runs == 2).all()
    assert t.loc["capacity", "% of oracle"] == pytest.approx(100 * 28.5 / 29)
    assert t.loc["capacity", "share off oracle's"] == pytest.approx(0.03)
    assert t[goal].to_dict() == {
        "oracle": "-",
        "capacity": "pass",
        "static": "fail",
        "delay": "fail",
    }


def test_against_oracle_after_a_step_compares_the_shares_after_it():
    after = "leg_a_share_after_1st_event"
    table = pd.DataFrame(
        loop_rows("oracle", [15], [0.7], **{after: 0.8, "cpu_saturated": True})
        + loop_rows("dataplane", [14.5], [0.5], **{after: 0.77})
    )
    t = loop_metrics.against_oracle(table).set_index("method")
    assert t.loc["dataplane", "share off oracle's"] == pytest.approx(0.03)
    assert t.loc["oracle", "cpu-affected"] == 1 and t.loc["dataplane", "scenario"] == "-"
    assert t.loc["dataplane"].iloc[-1] == "pass"
    assert loop_metrics.against_oracle(table[table.point != "oracle"]).empty

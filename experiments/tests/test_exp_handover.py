"""Handover metrics (experiments/analysis/handover.py) on synthetic goodput series and on
five runs of the mpquic-outage baseline (their flows' byte counters and manifests, kept in
experiments/tests/data/)."""

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments.analysis import handover

DATA = Path(__file__).parent / "data" / "mpquic-outage"
MB = 1e6 / 8  # bytes in one Mbit


def manifest(events, rates=(20, 20), dc=None):
    links = {leg: {"rate_mbit": r} for leg, r in zip("ab", rates)}
    return {
        "config": {"links": links, "dc": dc or {"ratio": [1, 1]}},
        "events_applied": [
            {"link": leg, "direction": "down", "set": change, "applied_at_s": t}
            for t, leg, change in events
        ],
    }


OUTAGE = manifest([(8.0, "a", {"loss": 1}), (11.0, "a", {"loss": 0})])


def series(*pieces):
    """Mbit/s per 100 ms slot from (seconds, Mbit/s) pieces, indexed by the slot's start."""
    values = np.concatenate([[rate] * round(secs * 10) for secs, rate in pieces])
    return pd.Series(values, index=np.arange(len(values)) / 10)


def test_outage_capacity_comes_from_the_manifest_links_and_events():
    assert handover.leg_event(manifest([], (10, 30))) is None  # no event: nothing to measure
    m = manifest([(8.0, "a", {"loss": 1}), (11.0, "a", {"loss": 0})], rates=(10, 30))
    event = handover.leg_event(m)
    assert (event.start_s, event.end_s, event.remaining_mbit) == (8.0, 11.0, 40)
    assert event.capacity_bytes(8.0, 11.0) == pytest.approx(30 * 3 * MB)  # leg B alone
    assert handover.leg_event(m, "sc-b") is None  # leg B's client sees no event
    assert handover.leg_event(m, "sc-a").remaining_mbit == 10
    dup = manifest([(8.0, "a", {"loss": 1})], dc={"dup": True})
    dup = handover.leg_event(dup)  # duplicated: leg B's copies still arrive
    assert dup.remaining_mbit == 20 and dup.capacity_bytes(8.0, 9.0) == pytest.approx(20 * MB)


def test_a_flow_that_recovers():
    event = handover.leg_event(OUTAGE)
    # 37 before, 18 on leg B during the outage, 1 s at 10 after it, then 38 (>= 36 = 90 %);
    # the 1 s from 11.9 s has a mean of 35.2: the first that holds 90 % starts at 12 s
    got = handover.recovery(series((8, 37), (3, 18), (1, 10), (5, 38)), event)
    assert got["recovered"] and got["recovery_s"] == pytest.approx(1.0)
    # capacity 20 Mbit/s x 3 s + 40 x 1 s; carried 18 x 3 + 10 x 1
    assert got["bytes_stalled"] == pytest.approx((60 + 40 - 54 - 10) * MB)


def test_a_flow_that_never_recovers_says_so_and_stalls_to_its_end():
    event = handover.leg_event(OUTAGE)
    got = handover.recovery(series((8, 37), (3, 18), (9, 30)), event)
    assert not got["recovered"] and math.isnan(got["recovery_s"])
    assert got["bytes_stalled"] == pytest.approx((60 + 9 * 40 - 54 - 9 * 30) * MB)


def test_a_burst_shorter_than_the_sustain_window_is_not_a_recovery():
    event = handover.leg_event(OUTAGE)
    # 0.5 s at 39 then 10: the first second's mean is 24.5; from 12.5 s on 2 s at 38, then 10
    got = handover.recovery(series((8, 37), (3, 18), (0.5, 39), (1, 10), (2, 38), (4, 10)), event)
    assert got["recovered"] and got["recovery_s"] == pytest.approx(1.5)


def test_a_flow_that_ends_before_the_event_ends_is_not_measured():
    assert handover.recovery(series((9, 37)), handover.leg_event(OUTAGE)) == {}


def test_stepdown_measures_from_the_step_against_what_remains():
    event = handover.leg_event(manifest([(8.0, "a", {"rate_mbit": 5})]))
    assert (event.start_s, event.end_s, event.remaining_mbit) == (8.0, 8.0, 25)
    got = handover.recovery(series((8, 37), (2, 5), (5, 24)), event)  # 24 >= 22.5
    assert got["recovery_s"] == pytest.approx(2.0)
    assert got["bytes_stalled"] == pytest.approx((2 * 25 - 2 * 5) * MB)


def test_the_mpquic_outage_baseline():
    """Leg A out 8-11 s at 2 x 20 Mbit/s: TCP over DC with the static split recovers 1-2 s
    after leg A is back, with the controller's failover at once and with fewer bytes stalled;
    MPTCP with leg B as backup never gets near both legs' 40 Mbit/s."""
    table = handover.handover_table(DATA).set_index("run_id")
    assert len(table) == 5
    assert table.remaining_mbit.eq(40).all() and table.event_s.between(8.0, 8.1).all()
    static = table.loc["dc_control=static__tcp-cubic__rep0"]
    failover = table.loc["dc_control=failover__tcp-cubic__rep0"]
    assert 1.0 <= static.recovery_s <= 2.0 and failover.recovery_s <= 0.2
    assert failover.bytes_stalled < static.bytes_stalled / 4
    backup = table.loc["dc_control=static__mptcp-cubic-backup__rep0"]
    assert not backup.recovered and backup.bytes_stalled > 40e6
    assert table.drop(index=backup.name).recovered.all()


def test_the_report_of_a_study_with_a_leg_event_has_the_handover_table(tmp_path):
    from experiments.cli import main as dcexp

    shutil.copytree(DATA, tmp_path / "study")
    assert dcexp(["report", str(tmp_path / "study")]) == 0
    text = (tmp_path / "study" / "summary.md").read_text()
    section = text.split("## Handover")[1].split("\n## ")[0]
    assert "| static | mptcp-cubic-backup | dc | 40 | 0 of 1 | not recovered (n=1) |" in section
    assert "| failover | tcp-cubic | dc | 40 | 1 of 1 | 0.057 (n=1) | 1.88 (n=1) |" in section
    head = text.split("## Headline across transports")[1]
    assert "| MPTCP (leg B backup) | not run | not run | not recovered (n=1) | not run |" in head

"""The feedback loop's pure parts: report frames (controlplane.pdcp) and each split
policy (controlplane.policies) driven by report sequences with an injected clock.

Run: .venv/bin/pytest controlplane/tests/test_controlplane_policies.py
"""

import itertools

import pytest

from controlplane.pdcp import FeedbackError, Report, decode_report, encode_report
from controlplane.policies import Tuning, make_policy

PERIOD = 0.01


def report(leg=0, rate=1_000_000, held=0, delivered=10_000, lost=0, seq=0, desired=None):
    return Report(
        leg=leg,
        seq=seq,
        ue="10.0.0.2",
        desired_bytes=desired if desired is not None else rate * 30 // 1000,
        drain_rate=rate,
        held_bytes=held,
        delivered_sn=seq,
        delivered_bytes=delivered,
        lost=lost,
    )


def feed(policy, reports_a, reports_b, t0=0.0):
    """Alternate A and B reports one period apart; every decision with its time."""
    decisions = []
    for i, (ra, rb) in enumerate(zip(reports_a, reports_b, strict=True)):
        now = t0 + i * PERIOD
        for leg, r in (("a", ra), ("b", rb)):
            if r is not None:
                d = policy.on_report(leg, r, now)
                if d:
                    decisions.append((now, d))
        d = policy.on_tick(now + PERIOD / 2)
        if d:
            decisions.append((now + PERIOD / 2, d))
    return decisions


# -- report frames ---------------------------------------------------------------------


def test_report_round_trip_with_ranges():
    r = report(leg=1, rate=3_750_000, held=42_000, lost=3, seq=77)
    r.lost_ranges = [(262143, 1), (5, 5)]
    frame = encode_report(r, dst_mac=bytes.fromhex("020000000010"))
    assert len(frame) == 14 + 36 + 16
    back = decode_report(frame, ingress_port=2, t=1.5)
    assert back.lost_ranges == [(262143, 1), (5, 5)]
    assert (back.leg, back.seq, back.ue, back.drain_rate, back.held_bytes) == (
        1,
        77,
        "10.0.0.2",
        3_750_000,
        42_000,
    )
    assert back.ingress_port == 2 and back.queue_delay_s == pytest.approx(42_000 / 3_750_000)


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda f: f[:30], "at least 50"),
        (lambda f: f[:14] + bytes([0x80]) + f[15:], "not a leg feedback report"),
        (lambda f: f[:15] + bytes([2]) + f[16:], "version 2"),
        (lambda f: f[:17] + bytes([3]) + f[18:], "announces 3 lost ranges"),
    ],
)
def test_bad_reports_are_named(mangle, message):
    with pytest.raises(FeedbackError, match=message):
        decode_report(mangle(encode_report(report())))


# -- static ------------------------------------------------------------------------------


def test_static_never_changes():
    p = make_policy("static", 0.5)
    assert feed(p, [report(rate=3e6)] * 50, [report(rate=1e6)] * 50) == []


# -- capacity ------------------------------------------------------------------------------


def test_capacity_moves_to_the_rate_ratio_then_holds():
    """Legs draining 30 and 10 Mbit/s: the share goes to 3:1 and stays (hysteresis)."""
    p = make_policy("capacity", 0.5)
    decisions = feed(p, [report(rate=3_750_000)] * 100, [report(rate=1_250_000)] * 100)
    assert decisions, "no decision"
    assert decisions[-1][1].share_a == pytest.approx(0.75, abs=0.01)
    assert len(decisions) == 1  # constant rates: one change, no chatter


def test_capacity_smooths_a_single_outlier_and_respects_hysteresis():
    p = make_policy("capacity", 0.5, Tuning(alpha=0.2, hysteresis=0.05))
    a = [report(rate=1_000_000)] * 30
    b = [report(rate=1_000_000)] * 30
    a[10] = report(rate=1_300_000)  # one noisy sample: 0.5 -> ~0.53 after the EWMA
    assert feed(p, a, b) == []


def test_capacity_corrects_a_share_a_few_hundredths_off():
    """8:1 legs (20 and 2.5 Mbit/s) whose first rates overstate leg B: the share first lands
    at 0.85, then moves to 0.89 once the rates settle. At 8:1 leg B carries 0.11 of the
    packets, so 0.04 of share is 36 % of its load: the default hysteresis must not keep it
    (0.05 did: loop-ratio-20, experiments/docs/baselines/findings.md)."""
    p = make_policy("capacity", 0.5)
    a = [report(rate=2_500_000)] * 100
    b = [report(rate=440_000)] * 10 + [report(rate=312_500)] * 90
    decisions = feed(p, a, b)
    assert decisions[0][1].share_a == pytest.approx(0.85, abs=0.01)
    assert decisions[-1][1].share_a == pytest.approx(0.889, abs=0.01)


def test_capacity_rate_limited_by_min_interval():
    p = make_policy("capacity", 0.5, Tuning(alpha=1.0, hysteresis=0.01, min_interval_s=0.1))
    rates_a = [1_000_000 * (1 + i % 2) for i in range(40)]  # alternates 1:1 and 2:1 each period
    decisions = feed(p, [report(rate=r) for r in rates_a], [report(rate=1_000_000)] * 40)
    times = [t for t, _ in decisions]
    assert len(times) >= 2
    assert all(t2 - t1 >= 0.1 - 1e-9 for t1, t2 in itertools.pairwise(times))


def test_capacity_keeps_a_probe_share_on_a_dead_leg():
    p = make_policy("capacity", 0.5, Tuning(min_share=0.02))
    a = [report(rate=2e6)] * 10 + [report(rate=0, delivered=0, lost=5)] * 50
    decisions = feed(p, a, [report(rate=2e6)] * 60)
    assert decisions[-1][1].share_a == pytest.approx(0.02)


@pytest.mark.parametrize("name", ["capacity", "delay"])
def test_a_leg_without_a_rate_gets_the_probe_until_its_first_rate(name):
    """Leg A drains, leg B has no rate yet (nothing sent to it, or too little): B counts as
    the slow leg and gets only the probe share at once, on A's first rate, before a 50:50
    batch's 50-frame run reaches it (at 8:1 waiting for B's own first report cost TCP its
    start: findings.md, "The start at 8:1"). The probe share keeps B draining, so its rate
    comes, and the rates' share follows it."""
    p = make_policy(name, 0.5)
    ((t, first),) = feed(p, [report(rate=3e6)] * 20, [report(rate=0, delivered=0)] * 20)
    assert (t, first.share_a) == (0.0, pytest.approx(0.98))
    assert "leg B has no rate yet" in first.reason
    decisions = feed(p, [report(rate=3e6)] * 20, [report(rate=1e6)] * 20, t0=1.0)
    assert decisions[0][0] == 1.0  # at B's first rate: the probe share was not paced
    assert decisions[-1][1].share_a == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize("name", ["capacity", "delay"])
def test_a_leg_not_heard_from_gets_the_probe_one_period_after_the_others_rate(name):
    """A linkem reports a user from its first frame on, so at a 50:50 start leg B, which a
    100-packet batch reaches only after 50 frames, says nothing while leg A reports its
    rate: one period later (A's second rate) B gets the probe share, before its 50-frame
    run; the delay policy too, though it evaluates the split once per pair of reports."""
    p = make_policy(name, 0.5)
    decisions = feed(p, [report(rate=2_500_000)] * 5, [None] * 5)
    assert [(t, d.share_a, d.reason) for t, d in decisions] == [
        (pytest.approx(PERIOD), pytest.approx(0.98), "leg B has no rate yet")
    ]


def test_a_start_on_one_leg_alone_discovers_the_other():
    """A loop started at 100:0 sends leg B nothing, so B never reports a rate: with the
    probe share B drains a little and the capacity policy finds its rate (it stayed at
    100:0 before: only a leg holding traffic got the probe)."""
    p = make_policy("capacity", 1.0)
    ((_, first),) = feed(p, [report(rate=3e6)] * 5, [None] * 5)
    assert first.share_a == pytest.approx(0.98)
    decisions = feed(p, [report(rate=3e6)] * 20, [report(rate=3e6)] * 20, t0=1.0)
    assert decisions[-1][1].share_a == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("name", ["capacity", "delay"])
def test_a_leg_holding_traffic_before_its_first_rate_gets_the_probe(name):
    """8:1 legs from a 50:50 start: leg B's first report holds 20 kB (64 ms at 2.5 Mbit/s)
    but has no rate yet (linkem reports one once the leg spent a quarter of a period
    sending). Leg B gets only the probe share as soon as it reports so, and its rate's
    decision follows one report later, not a min-interval later: waiting for the rate let
    TCP's slow start put 44 kB (141 ms) on leg B, past t-Reordering (findings.md,
    loop-ratio-20)."""
    p = make_policy(name, 0.5)
    a = [None, report(rate=2_500_000, held=64_000)] + [report(rate=2_500_000, held=64_000)] * 18
    b = [None, report(rate=0, held=20_000, delivered=0)]
    b += [report(rate=312_500, held=8000)] * 18
    decisions = feed(p, a, b)
    (t1, first), (t2, second) = decisions[:2]
    assert (t1, first.share_a) == (pytest.approx(PERIOD), pytest.approx(0.98))
    assert "leg B holds 20000 B, drained none yet" in first.reason
    assert t2 == pytest.approx(2 * PERIOD)
    assert second.share_a == pytest.approx(0.889, abs=0.03)
    assert decisions[-1][1].share_a == pytest.approx(0.889, abs=0.01)


@pytest.mark.parametrize("name", ["capacity", "delay"])
def test_a_leg_far_behind_at_its_first_rate_drains_before_its_share(name):
    """8:1 legs from a 50:50 start: leg B's first report has its rate and 30 kB (96 ms)
    held, leg A 1 ms. At the rates' share leg B would keep that lag and its 11-frame batch
    runs on top, past t-Reordering (100 ms). Leg B gets the probe share until its delay is
    down to leg A's (leg A fills meanwhile), then the policy's own share, at once."""
    p = make_policy(name, 0.5)
    held_a = [3000, 15_000, 30_000, 45_000, 60_000] + [60_000] * 45  # 1.2 to 24 ms
    held_b = [30_000, 22_000, 14_000, 6000, 2000] + [7500] * 45  # 96 to 6.4, then 24 ms
    a = [report(rate=2_500_000, held=h) for h in held_a]
    b = [report(rate=312_500, held=h) for h in held_b]
    decisions = feed(p, a, b)
    (t1, first), (t2, second) = decisions[:2]
    assert (t1, first.share_a) == (0.0, pytest.approx(0.98))
    assert "leg B 96 ms behind" in first.reason
    assert t2 == pytest.approx(4 * PERIOD)  # leg B 6 ms, leg A 24: handed over
    assert 0.879 <= second.share_a < 0.98  # the delay policy leans from 0.889 at first
    assert decisions[-1][1].share_a == pytest.approx(0.889, abs=0.01)


def test_a_leg_a_little_behind_at_the_start_gets_its_share_at_once():
    """Leg B 14 ms behind leg A at the first rates (1:1 legs): within BEHIND_S, the policy's
    own rule from the first report on, no probe-share detour."""
    p = make_policy("capacity", 0.5)
    a = [report(rate=2_500_000, held=0)] * 10
    b = [report(rate=1_250_000, held=17_500)] * 10
    ((t, d),) = feed(p, a, b)
    assert (t, d.share_a) == (0.0, pytest.approx(2 / 3, abs=0.01))


def test_a_leg_holding_traffic_waits_while_neither_leg_has_a_rate():
    """Without the other leg's rate there is nothing to compare with: the split stays."""
    p = make_policy("capacity", 0.5)
    a = [report(rate=0, held=9000, delivered=0)] * 10
    b = [report(rate=0, held=20_000, delivered=0)] * 10
    assert feed(p, a, b) == []


# -- delay -------------------------------------------------------------------------------


def two_queues(policy, rates, held, seconds=6.0):
    """Two loss-free leg queues fed at exactly their summed drain rate, split by the
    policy's share, reporting every PERIOD: [(t, share, delay_a, delay_b)]. No TCP: what
    stays is the loop's own dynamics (a split off the rates makes one queue grow)."""
    (ca, cb), (ha, hb) = rates, held
    trace = []
    for i in range(int(seconds / PERIOD)):
        now, s = i * PERIOD, policy.share
        ha = max(ha + (s * (ca + cb) - ca) * PERIOD, 0.0)
        hb = max(hb + ((1 - s) * (ca + cb) - cb) * PERIOD, 0.0)
        policy.on_report("a", report(rate=ca, held=int(ha)), now)
        policy.on_report("b", report(rate=cb, held=int(hb)), now)
        trace.append((now, policy.share, ha / ca, hb / cb))
    return trace


@pytest.mark.parametrize("rates", [(2_500_000, 625_000), (2_500_000, 312_500)])
def test_delay_settles_on_the_rate_share_without_swinging(rates):
    """4:1 and 8:1 legs, leg B holding 100 ms from a 50:50 start: the split settles at the
    rates' share and the legs' delays stay together. A split that swings makes one leg's
    frames later than the other's by more than t-Reordering (100 ms), and the receiver
    drops them: the summed lean of an earlier law swung 0.62 to 0.94 here at 4:1, and 0.67
    to 0.97 in the testbed (loop-ratio-20, experiments/docs/baselines/findings.md)."""
    c = rates[0] / sum(rates)
    trace = two_queues(make_policy("delay", 0.5), rates, (0, rates[1] // 10))
    settled = [t for t in trace if t[0] >= 3.0]
    shares = [share for _, share, _, _ in settled]
    assert max(shares) - min(shares) <= 0.03
    assert all(abs(share - c) <= 0.02 for share in shares)
    assert max(abs(da - db) for _, _, da, db in settled) < 0.02
    assert max(abs(da - db) for t, _, da, db in trace if t >= 1.0) < 0.05


def test_delay_leans_away_from_the_leg_with_the_longer_queue():
    """Equal rates, leg A holding 50 ms and leg B 10 ms: A's share goes below the rates'
    0.5, by at most gain x c(1 - c), and stays there while the delays do."""
    p = make_policy("delay", 0.5, Tuning(gain=1.0, min_interval_s=0.05))
    a = [report(rate=1_000_000, held=50_000)] * 40
    b = [report(rate=1_000_000, held=10_000)] * 40
    decisions = feed(p, a, b)
    ((_, d),) = decisions
    lean = (0.01 - 0.05) / (0.05 + 0.01 + 0.05)
    assert d.share_a == pytest.approx(0.5 + 0.25 * lean, abs=0.01)


def test_delay_equal_delays_take_the_rate_share():
    """Both legs 20 ms behind: the split is the rates' (3:1), and it stays."""
    p = make_policy("delay", 0.3)
    a = [report(rate=3_000_000, held=60_000)] * 40  # 20 ms
    b = [report(rate=1_000_000, held=20_000)] * 40  # 20 ms
    ((_, d),) = feed(p, a, b)
    assert d.share_a == pytest.approx(0.75, abs=0.01)


def test_delay_a_leg_that_drains_nothing_loses_its_share():
    p = make_policy("delay", 0.5, Tuning(min_interval_s=0.0))
    a = [report(rate=1e6, held=9000)] * 3 + [report(rate=0, held=9000)] * 3
    decisions = feed(p, a, [report(rate=1e6, held=1000)] * 6)
    assert decisions[-1][1].share_a == pytest.approx(0.02)


# -- failover -----------------------------------------------------------------------------


def test_failover_loss_moves_everything_then_returns():
    p = make_policy("failover", 0.5, Tuning(down_reports=2, up_reports=5, min_share=0.02))
    dead = report(rate=0, delivered=0, lost=20)
    b = [report()] * 5 + [dead] * 10 + [report()] * 10
    decisions = feed(p, [report()] * 25, b)
    (t_down, down), (t_up, up) = decisions
    assert down.share_a == pytest.approx(0.98) and not down.dup
    assert t_down == pytest.approx(6 * PERIOD)  # the second report losing everything
    assert "loses everything" in down.reason
    assert up.share_a == 0.5 and t_up == pytest.approx(19 * PERIOD)  # 5th good report


def test_failover_silent_leg_within_silence_s():
    p = make_policy("failover", 0.7, Tuning(silence_s=0.05))
    decisions = feed(p, [report()] * 5 + [None] * 20, [report()] * 25)
    ((t, d),) = decisions
    assert d.share_a == pytest.approx(0.02) and "silent" in d.reason
    last_a = 4 * PERIOD
    # silence_s, plus up to the other leg's next report (it must have reported since)
    assert 0.05 <= t - last_a <= 0.05 + 2 * PERIOD


def test_failover_both_legs_quiet_is_not_a_leg_failure():
    """Reports stalled on their way to the controller (both legs quiet), then a burst."""
    p = make_policy("failover", 0.5, Tuning(silence_s=0.05))
    gap = [report()] * 3 + [None] * 30 + [report()] * 5
    assert feed(p, gap, list(gap)) == []


def test_failover_a_leg_that_never_reported_is_not_silent():
    """Leg B has no traffic yet (the batch's first half goes to A): not a failure."""
    p = make_policy("failover", 0.5, Tuning(silence_s=0.05))
    assert feed(p, [report()] * 30, [None] * 30) == []


def test_failover_dup_turns_duplication_on_and_off():
    p = make_policy("failover", 0.5, Tuning(dup=True, down_reports=1, up_reports=1))
    dead = report(rate=0, delivered=0, lost=20)
    decisions = feed(p, [report()] * 3, [report(), dead, report()])
    assert [(d.dup, d.share_a) for _, d in decisions] == [(True, 0.5), (False, 0.5)]


def test_failover_both_legs_down_keeps_the_configured_split():
    p = make_policy("failover", 0.6, Tuning(down_reports=1))
    dead = report(rate=0, delivered=0, lost=20)
    decisions = feed(p, [report(), dead, dead], [report(), report(), dead])
    assert [round(d.share_a, 2) for _, d in decisions] == [0.02, 0.6]


def test_unknown_policy_names_the_allowed_ones():
    with pytest.raises(ValueError, match="static, capacity, delay, failover"):
        make_policy("oracle", 0.5)

"""The testbed at NR rates (experiments/ratebench, experiments/run/limits.py): the CPU verdict
and the limit named when goodput falls short, the chain placement, the sweep's reduction of a
saved run, and (root) the raw AF_PACKET limit through three rawfwd hops.

    .venv/bin/python -m pytest -q experiments/tests/test_exp_ratebench.py
"""

import csv
import gzip
import json

import pytest

from experiments.flows import LARGE_RCVBUF
from experiments.ratebench import rawpath, report, sweep
from experiments.ratebench.__main__ import build_parser
from experiments.ratebench.__main__ import main as ratebench_main
from experiments.run import cpu, limits, sampler
from experiments.run.runner import describe_result
from experiments.run.sampler import cpu_times
from experiments.run.scenario import from_dict, resolve_links
from experiments.run.testbed import leftovers

SNMP = """Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors
Udp: 1000 0 23 40 23 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors
UdpLite: 0 0 0 0 0 0
TcpExt: SyncookiesSent TCPRcvQDrop TCPBacklogDrop
TcpExt: 0 5 0
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  12: 0200000A:D2F0 0100000A:1151 01 00000000:00000000 00:00000000 00000000     0        0 5121 2 0000000000000000 7
"""


def _config(rate=100, mode="dc"):
    return {
        "links": {"a": {"rate_mbit": rate}, "b": {"rate_mbit": rate}},
        "dc": {"mode": mode, "dup": False},
    }


def test_net_counters_parse_the_udp_and_tcp_drop_fields_and_socket_drops():
    got = limits.parse_net_counters(SNMP)
    assert got["UDP receive buffer full (RcvbufErrors)"] == 23
    assert got["TCP receive queue drops (TCPRcvQDrop)"] == 5
    assert got[limits.SOCKET_DROPS] == 7  # the UdpLite line does not overwrite Udp's


def test_capacity_counts_both_legs_for_dc_and_one_for_sc():
    assert limits.capacity_mbit(_config(250)) == 500
    assert limits.capacity_mbit(_config(250, mode="sc")) == 250
    assert limits.capacity_mbit({"links": {"a": {}, "b": {}}, "dc": {}}, 20.0) == 40


def test_capacity_of_a_static_split_is_bounded_by_the_leg_it_overloads():
    skewed = {**_config(20), "dc": {"ratio": [70, 30]}}
    assert limits.capacity_mbit(skewed) == pytest.approx(20 / 0.7)
    assert limits.capacity_mbit({**_config(20), "dc": {"ratio": "100:0"}}) == 20
    # a split that moves during the run (closed loop, credit, live event) keeps both legs
    looped = {**skewed, "control": {"policy": "capacity"}}
    assert limits.capacity_mbit(looped) == 40
    assert limits.capacity_mbit({**skewed, "dc": {"ratio": [70, 30], "credit": True}}) == 40
    assert limits.capacity_mbit({**skewed, "events": [{"at_s": 5, "dc": {"ratio": "1:1"}}]}) == 40


def test_multipath_flows_bypass_the_split_and_the_duplication():
    duplicated = {**_config(20), "dc": {"ratio": "80:20", "dup": True}}
    flow = {"client": "dc", "kind": "mpquic", "paths": 2}
    assert limits.capacity_mbit({**duplicated, "flows": [flow]}) == 40
    assert limits.capacity_mbit({**duplicated, "flows": [{**flow, "paths": 1}]}) == 20
    # the redundant scheduler sends every packet on both paths: the faster leg's rate
    redundant = {**flow, "scheduler": "redundant"}
    asymmetric = {**duplicated, "links": {"a": {"rate_mbit": 5}, "b": {"rate_mbit": 20}}}
    assert limits.capacity_mbit({**duplicated, "flows": [redundant]}) == 20
    assert limits.capacity_mbit({**asymmetric, "flows": [redundant]}) == 20
    mptcp = {"client": "dc", "kind": "mptcp", "mptcp_leg_b": "active"}
    assert limits.capacity_mbit({**duplicated, "flows": [mptcp]}) == 40
    assert limits.capacity_mbit({**duplicated, "flows": [{**mptcp, "mptcp_leg_b": "backup"}]}) == 20
    # an SC client's multipath-kind flow (the fairness set-up's SC side) leaves the DC flow's
    sc_flow = {"client": "sc-a", "kind": "mpquic", "paths": 1}
    assert limits.capacity_mbit({**duplicated, "flows": [sc_flow]}) == 20


def _sat(run_max=0.5, wait=0.05, cores=(0.5, 0.4), saturated=()):
    return {
        "process_cpu": {
            "switch": {
                "mean_busy": run_max,
                "mean_wait": wait,
                "mean_run_max": run_max,
                "saturated_share": 0.0,
            }
        },
        "saturated_processes": list(saturated),
        "mean_busy": {f"cpu{i}": c for i, c in enumerate(cores)},
    }


def test_a_process_at_a_full_core_or_waiting_or_full_cores_make_a_run_cpu_bound():
    assert limits.cpu_verdict(_sat()) == []
    assert limits.cpu_verdict(_sat(run_max=0.97)) == ["switch at 97% of a core"]
    assert limits.cpu_verdict(_sat(wait=0.4)) == ["switch waited for a core 40% of the time"]
    assert limits.cpu_verdict(_sat(cores=(0.97, 0.99))) == ["every core busy (mean 98%)"]


def _spin_rows(sender_busy_after: float, sender_busy_before: float = 0.05) -> list[tuple]:
    """24 s of 100 ms samples: the sender at `sender_busy_before` of a core until it wrote its
    last bytes at 16 s, then at `sender_busy_after` (iperf3 3.12 polling its socket); the
    switch at 20 % all along."""
    rows = []
    for i in range(1, 241):
        t = i / 10
        busy = sender_busy_before if t <= 16.0 else sender_busy_after
        for name, b in (("f0-dc/server", busy), ("switch", 0.2)):
            for metric in ("busy", "demand", "run_max"):
                rows.append((t, "proc", name, metric, b))
            rows.append((t, "proc", name, "wait", 0.0))
        rows.append((t, "cpu", "cpu0", "busy", 0.5))
    return rows


def test_a_sender_spinning_after_its_last_write_is_listed_not_judged():
    """The trace study's TCP runs: iperf3's server wrote its 25 MB by 16 s, then spun at a
    full core until the client had them (8 s of 24): a third of the samples saturated, so the
    run was flagged. Its samples from half a second after the last write are left out of the
    verdict and listed; a sender short of CPU while it still writes is still flagged."""
    rows = _spin_rows(sender_busy_after=1.0)
    assert sampler.saturation(rows)["saturated_processes"] == ["f0-dc/server"]
    sat = sampler.saturation(rows, {"f0-dc/server": 16.0})
    assert sat["saturated_processes"] == [] and not sat["cpu_saturated"]
    assert limits.cpu_verdict(sat) == []
    spin = sat["cpu_after_last_write"]["f0-dc/server"]
    assert spin["from_s"] == 16.0 and spin["samples"] == 75  # 16.6 s to 24.0 s
    assert spin["mean_busy"] == pytest.approx(1.0)
    assert sat["process_cpu"]["switch"]["mean_busy"] == pytest.approx(0.2)  # all its samples
    busy_writer = sampler.saturation(
        _spin_rows(1.0, sender_busy_before=1.0), {"f0-dc/server": 16.0}
    )
    assert busy_writer["saturated_processes"] == ["f0-dc/server"]
    line = describe_result(
        {
            "flows": {"f0-dc": {"goodput_mbit": 8.4}},
            "status": "ok",
            "errors": [],
            **sat,
        }
    )
    assert "[f0-dc/server after its last write: 7.5 s at 100% of a core, not judged]" in line
    assert "CPU short" not in line


def test_niced_work_beside_an_unniced_run_leaves_its_cores_free():
    """/proc/stat columns: user nice system idle iowait irq softirq steal. Core 0 spent 10
    jiffies on our work and 85 on a nice-19 build, core 1 was idle: for a run at the
    ordinary priority core 0 was 10 % busy, for a niced run (whose rivals are niced too) 95 %."""
    stat = "cpu  0 0 0 0 0 0 0 0\ncpu0 6 85 3 5 0 0 1 0\ncpu1 0 0 0 100 0 0 0 0\n"
    assert cpu_times(stat, count_niced=False) == {"cpu0": (10, 100), "cpu1": (0, 100)}
    assert cpu_times(stat, count_niced=True) == {"cpu0": (95, 100), "cpu1": (0, 100)}


def test_short_of_capacity_without_cpu_reason_names_the_candidates():
    results = {"f0-dc": {"client": "dc", "goodput_mbit": 250.0}}
    rows = [
        (0.1, "link", "a/ab", "drops.queue", 0.0),
        (5.0, "link", "a/ab", "drops.queue", 9.0),
        (1.0, "flow", "f0-dc", "cwnd_bytes", 400e3),
        (1.0, "flow", "f0-dc", "rtt_ms", 25.0),
    ]
    delta = {"client": {"UDP receive buffer full (RcvbufErrors)": 120.0}}
    got = limits.assess(_config(500), results, _sat(), rows, delta)
    assert got["limit"] == "not CPU-bound: limited by something else"
    assert got["goodput_share"] == pytest.approx(0.25)
    assert "UDP receive buffer full (RcvbufErrors) in the client's namespace: 120" in (
        got["limit_candidates"]
    )
    assert "linkem A queue (drop-tail): 9" in got["limit_candidates"]
    [hint] = [c for c in got["limit_candidates"] if c.startswith("a UDP socket without SO_RCVBUF")]
    assert "`udp_rcvbuf: large` (aioquic, ngtcp2)" in hint  # the knob is named
    assert any("13% of the BDP" in c for c in got["limit_candidates"])  # 400 kB of 3125 kB
    quiet = limits.assess(_config(500), results, _sat(), [], {})
    assert "no drop anywhere" in quiet["limit_candidates"][-1]
    busy = limits.assess(_config(500), results, _sat(run_max=0.99), rows, delta)
    assert busy["cpu_bound"] and busy["limit"].startswith("CPU-bound: switch at 99%")
    probe = limits.assess(
        _config(500), {"f0-dc": {"client": "dc", "goodput_mbit": None}}, _sat(), rows, delta
    )
    assert probe["goodput_share"] is None and probe["limit_candidates"] == []
    fine = limits.assess(_config(100), results, _sat(), rows, delta)
    assert fine["limit"] == "at capacity" and fine["limit_candidates"] == []


def test_gaps_waited_out_by_the_agent_are_named_with_the_time_they_held_the_flow():
    """ngtcp2 at 2 x 500 (stop 40): 14 queue drops that no retransmission fills in time, each
    a full t-Reordering of 200 ms in which the agent delivers nothing: 2.8 s of 12.5 s."""
    results = {"f0-dc": {"client": "dc", "goodput_mbit": 690.0}}
    rows = [
        (0.0, "agent", "dc", "t_reordering_expiries", 0.0),
        (6.0, "agent", "dc", "t_reordering_expiries", 9.0),
        (12.5, "agent", "dc", "t_reordering_expiries", 14.0),
    ]
    config = {**_config(500), "t_reordering_ms": 200}
    got = limits.assess(config, results, _sat(), rows, {})
    assert (
        "agent t-Reordering stalls: 14 gaps never filled, each held the flow 200 ms: 2.8 s of "
        "the run's 12.5 s (22%)"
    ) in got["limit_candidates"]
    # no drop counted, but the agent held the flow: not "the sender held back"
    assert not any("no drop anywhere" in c for c in got["limit_candidates"])
    none = [(r[0], *r[1:4], 3.0) for r in rows]  # expired before the run, none during it
    assert not any(
        "t-Reordering" in c
        for c in limits.assess(config, results, _sat(), none, {})["limit_candidates"]
    )


def test_flows_sharing_the_legs_are_held_to_both_legs_together():
    """The fairness set-up: a DC flow beside an SC flow per leg. The DC flow's own third is
    no shortfall; every flow's goodput against both legs is (a duplicated DC flow's bytes
    cross both legs)."""
    fair = {
        "f0-dc": {"client": "dc", "goodput_mbit": 12.6},
        "f1-sc-a": {"client": "sc-a", "goodput_mbit": 12.4},
        "f2-sc-b": {"client": "sc-b", "goodput_mbit": 12.4},
    }
    got = limits.assess(_config(20), fair, _sat(), [], {})
    assert got["capacity_mbit"] == 40 and got["goodput_share"] == pytest.approx(37.4 / 40)
    assert got["limit"] == "at capacity"
    dup = {**_config(20), "dc": {"mode": "dc", "dup": True}}
    got = limits.assess(
        dup, {**fair, "f0-dc": {"client": "dc", "goodput_mbit": 6.0}}, _sat(), [], {}
    )
    assert got["goodput_share"] == pytest.approx((2 * 6.0 + 24.8) / 40)
    starved = {**fair, "f1-sc-a": {"client": "sc-a", "goodput_mbit": 2.0}}
    got = limits.assess(_config(20), starved, _sat(), [], {})
    assert got["limit"] == "not CPU-bound: limited by something else"


def test_a_quic_senders_qlog_tells_losses_from_flow_control_blocking(tmp_path):
    qlogs = tmp_path / "f0-dc" / "qlog-server"
    qlogs.mkdir(parents=True)
    events = [
        '{"time":1,"name":"recovery:packet_lost","data":{}}',
        '{"time":2,"name":"recovery:packet_lost","data":{}}',
        '{"time":3,"name":"transport:packet_sent","data":{"frames":[{"frame_type":"stream"}]}}',
    ]
    with gzip.open(qlogs / "x.sqlog.gz", "wt") as f:
        f.write("\x1e" + "\n\x1e".join(events) + "\n")
    note = limits.sender_qlog_note(tmp_path, "f0-dc")
    assert note == (
        "f0-dc sender's qlog: 2 packets declared lost, 0 DATA_BLOCKED or STREAM_DATA_BLOCKED "
        "frames (never blocked by flow control)"
    )
    (qlogs / "y.sqlog").write_text('\x1e{"data":{"frames":[{"frame_type":"data_blocked"}]}}\n')
    assert "1 DATA_BLOCKED" in limits.sender_qlog_note(tmp_path, "f0-dc")
    assert limits.sender_qlog_note(tmp_path, "f1-dc") is None  # TCP: no qlog
    results = {"f0-dc": {"client": "dc", "goodput_mbit": 100.0}}
    got = limits.assess(_config(500), results, _sat(), [], {}, tmp_path)
    assert any(c.startswith("f0-dc sender's qlog: 2 packets") for c in got["limit_candidates"])


def test_process_usage_reports_the_busiest_threads_run_alone():
    use = cpu.process_usage({1: (0, 0), 2: (0, 0)}, {1: (96, 4), 2: (10, 50)}, 100)
    assert use["run_max"] == pytest.approx(0.96)  # thread 1 filled 96% of a core
    assert use["demand"] == pytest.approx(1.0)


def test_a_wait_reported_late_counts_at_most_the_interval():
    """schedstat adds a wait when the thread next runs: one 100 ms sample of a pdcp-agent run
    reported 42.9 s, and the run's mean wait came to 109 % of the time (CPU-bound, rerun)."""
    use = cpu.process_usage({1: (0, 0), 2: (0, 0)}, {1: (3, 4294), 2: (2, 5)}, 10)
    assert use["wait_max"] == 1.0 and use["wait"] == pytest.approx(1.5)
    quiet = cpu.process_usage({1: (0, 0)}, {1: (3, 1)}, 10)
    rows = [(i, "proc", "agent", m, v) for i in range(400) for m, v in quiet.items()]
    rows += [(400, "proc", "agent", m, v) for m, v in use.items()]
    assert limits.cpu_verdict(cpu.saturated_processes(rows)) == []


def test_the_wait_verdict_reads_the_most_delayed_thread_not_the_sum_over_threads():
    # ten threads of a switch each waiting 3 %: 30 % in sum, no thread held up
    ten = {tid: (0, 0) for tid in range(10)}
    use = cpu.process_usage(ten, {tid: (2, 3) for tid in range(10)}, 100)
    assert use["wait"] == pytest.approx(0.30) and use["wait_max"] == pytest.approx(0.03)
    rows = [(i, "proc", "switch", m, v) for i in range(4) for m, v in use.items()]
    stats = cpu.saturated_processes(rows)
    assert stats["process_cpu"]["switch"]["mean_wait_max"] == pytest.approx(0.03)
    assert limits.cpu_verdict(stats) == []
    # one thread waiting 30 % is a process held up
    one = cpu.process_usage({1: (0, 0), 2: (0, 0)}, {1: (10, 30), 2: (5, 0)}, 100)
    rows = [(i, "proc", "switch", m, v) for i in range(4) for m, v in one.items()]
    verdict = limits.cpu_verdict(cpu.saturated_processes(rows))
    assert verdict == ["switch waited for a core 30% of the time"]
    # runs saved before wait_max existed fall back to the sum (an upper bound)
    old = [(i, "proc", "switch", m, v) for i in range(4) for m, v in use.items() if m != "wait_max"]
    assert limits.cpu_verdict(cpu.saturated_processes(old)) == [
        "switch waited for a core 30% of the time"
    ]


def test_chain_placement_cuts_the_chain_into_sending_and_receiving_halves():
    pins = cpu.pin_sets("chain", 2)
    send = {p for p in ("switch", "link_a", "flow_server") if cpu.cpus_for(pins, p) == {0}}
    recv = {p for p in ("link_b", "agent", "flow_client") if cpu.cpus_for(pins, p) == {1}}
    assert send == {"switch", "link_a", "flow_server"}
    assert recv == {"link_b", "agent", "flow_client"}
    assert cpu.cpus_for(cpu.pin_sets("split", 2), "flow_server") == {1}  # old layouts keep


def _fake_run(
    tmp_path,
    stack,
    leg,
    goodput,
    switch_busy,
    rcvbuf="default",
    slack_us="auto",
    io=None,
    rep=0,
    t_reordering_ms=sweep.T_REORDERING_MS,
):
    run_dir = tmp_path / "runs" / f"{leg}-{stack}-{rcvbuf}-{slack_us}-{io}-{rep}"
    run_dir.mkdir(parents=True)
    result = {"kind": stack, "goodput_mbit": goodput}
    if rcvbuf == "large":
        result["udp_rcvbuf_bytes"] = 2 * LARGE_RCVBUF
    manifest = {
        "config": {
            **_config(leg),
            "flows": [{"kind": stack, "udp_rcvbuf": rcvbuf}],
            "t_reordering_ms": t_reordering_ms,
        },
        "status": "ok",
        "capacity_mbit": 2 * leg,
        "departure_slack_us": slack_us,
        "rep": rep,
        **({"io": io} if io else {}),  # manifests from before --io have none
        "flows": {"f0-dc": result},
        "mean_busy": {"cpu0": 0.5, "cpu1": 0.3},
        "saturated_processes": [],
        "process_cpu": {
            "switch": {
                "mean_busy": switch_busy,
                "mean_wait": 0.0,
                "mean_run_max": switch_busy,
                "saturated_share": 0.0,
            },
            "link_a": {
                "mean_busy": 0.1,
                "mean_wait": 0.0,
                "mean_run_max": 0.1,
                "saturated_share": 0.0,
            },
        },
        "limit": "at capacity",
        "limit_candidates": [],
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with open(run_dir / "samples.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "source", "id", "metric", "value"])
        for i in range(10):  # 1 s of samples; 20,000 frames on leg A, 10,000 on leg B
            w.writerow([i / 10, "proc", "switch", "busy", switch_busy])
            w.writerow([i / 10, "proc", "link_a", "busy", 0.1])
        for leg_dir, n in (("a/ab", 15000), ("a/ba", 5000), ("b/ab", 10000), ("b/ba", 0)):
            w.writerow([0.0, "link", leg_dir, "frames", 0])
            w.writerow([1.0, "link", leg_dir, "frames", n])
    return run_dir


def test_a_saved_run_reduces_to_goodput_and_cpu_per_frame(tmp_path):
    point = sweep.reduce_run(_fake_run(tmp_path, "tcp", 100, 190.0, 0.6))
    assert (point.stack, point.offered_mbit, point.goodput_mbit) == ("tcp", 200, 190.0)
    assert point.frames == 30000 and point.frames_per_s == 30000
    assert point.us_per_frame["switch"] == pytest.approx(0.6 * 1e6 / 30000)  # every frame
    assert point.us_per_frame["link_a"] == pytest.approx(0.1 * 1e6 / 20000)  # its leg's
    assert point.limited == []


def test_saturation_points_and_table_name_where_each_component_saturates(tmp_path):
    points = [
        sweep.reduce_run(_fake_run(tmp_path, "tcp", r, g, b))
        for r, g, b in ((100, 190.0, 0.6), (500, 700.0, 0.97), (1000, 710.0, 0.99))
    ]
    sat = sweep.saturation_points(points)
    assert sat["tcp"]["switch"] == 500 and sat["tcp"]["link_a"] is None
    text = report.table(points, None)
    assert "tcp: switch 2x500" in text and "link_a never" in text
    goals = report.goals(points, {"switch": 0.01, "agent": 0.02})
    assert "TCP CUBIC at 2x500 >= 90% of capacity: 70% (not met)" in goals
    assert "stretch: TCP CUBIC at 2x1000 >= 90% of capacity: 36% (not met)" in goals
    assert goals[-1].startswith("idle testbed < 5 % of a core: 3.0% (") and "(met)" in goals[-1]
    assert any("nearest point to 80 kframes/s: tcp 2x100, 30 kframes/s" in g for g in goals)
    paths = report.write_files(tmp_path / "out", points, None)
    assert all(p.stat().st_size > 0 for p in paths)


def test_ngtcp2_with_both_receive_buffers_gives_two_points_per_rate_side_by_side(tmp_path):
    args = build_parser().parse_args(["--stacks", "ngtcp2", "--ngtcp2-rcvbuf", "default,large"])
    doc = sweep.scenario_doc([500], args.stacks, 12.0, args.ngtcp2_rcvbuf)
    runs = from_dict(doc).runs
    assert [r.config["flows"][0]["udp_rcvbuf"] for r in runs] == ["default", "large"]
    assert build_parser().parse_args([]).ngtcp2_rcvbuf == ["default"]  # as before the option
    points = [
        sweep.reduce_run(_fake_run(tmp_path, "ngtcp2", 500, g, 0.5, rcvbuf))
        for g, rcvbuf in ((190.0, "default"), (850.0, "large"))
    ]
    assert [(p.stack, p.udp_rcvbuf_bytes) for p in points] == [
        ("ngtcp2", None),
        ("ngtcp2-rcvbuf-large", 2 * LARGE_RCVBUF),
    ]
    text = report.table(points, None)
    assert f"ngtcp2-rcvbuf-large: the client's UDP receive buffer was {2 * LARGE_RCVBUF}" in text
    goals = report.goals(points, None)
    assert "ngtcp2 at 2x500 >= 80% of capacity: 19% (not met)" in goals
    assert "ngtcp2 with a large UDP receive buffer at 2x500 >= 80% of capacity: 85% (met)" in goals


def test_a_goal_missed_by_less_than_half_a_percent_shows_the_decimal():
    # 795.2 of 1000 Mbit/s rounded to whole percent read "80% (not met)" (bench, 2026-11-29)
    assert report.share_against(0.7952, 0.8) == "79.5%"
    assert report.share_against(0.8, 0.8) == "80%"
    assert report.share_against(0.7949, 0.8) == "79%"  # rounds below the goal: whole percent
    assert report.share_against(0.913, 0.9) == "91%"


def test_repetitions_give_each_point_its_mean_spread_and_n(tmp_path):
    """--reps 3: three downloads per point and stack; the table keeps every run (#1 to #3),
    adds the mean, sd and range per point, and the goals judge the mean, every run beside it."""
    args = build_parser().parse_args(["--stacks", "tcp", "--rates", "500", "--reps", "3"])
    doc = sweep.scenario_doc(args.rates, args.stacks, 12.0, args.ngtcp2_rcvbuf, args.reps)
    assert [r.rep for r in from_dict(doc).runs] == [0, 1, 2]
    assert build_parser().parse_args([]).reps == 1
    points = [
        sweep.reduce_run(_fake_run(tmp_path, "tcp", 500, g, 0.5, rep=rep))
        for rep, g in enumerate((920.0, 850.0, 880.0))
    ]
    text = report.table(points, None)
    assert "2x500 #1" in text and "2x500 #3" in text
    assert "tcp 2x500: mean 883.3 Mbit/s (88% of capacity), sd 35.1, 850.0 to 920.0 (n = 3)" in (
        text
    )
    goals = report.goals(points, None)
    assert "TCP CUBIC at 2x500 >= 90% of capacity: 88% mean of n = 3 (92%, 85%, 88%) (not met)" in (
        goals
    )
    paths = report.write_files(tmp_path / "out", points, None)
    rows = list(csv.DictReader(paths[0].read_text().splitlines()))
    assert sorted({r["rep"] for r in rows}) == ["0", "1", "2"]


def test_replot_draws_a_saved_sweep_again_from_its_csv_and_refuses_what_is_not_one(
    tmp_path, capsys
):
    """--replot CSV: the points read back from bench.csv are the ones written (goodput and
    every component's CPU per frame, per repetition), the PNG is drawn beside the CSV and no
    sweep runs; a file that is not a bench.csv is refused naming what is wrong in it."""
    points = [
        sweep.reduce_run(_fake_run(tmp_path, "tcp", 500, g, 0.5, rep=rep))
        for rep, g in enumerate((920.0, 850.0))
    ]
    csv_path = report.write_files(tmp_path / "out", points, None)[0]
    back = sorted(report.read_csv(csv_path), key=lambda p: p.rep)
    assert [(p.stack, p.leg_mbit, p.rep, p.goodput_mbit) for p in back] == [
        ("tcp", 500.0, 0, 920.0),
        ("tcp", 500.0, 1, 850.0),
    ]
    for old, new in zip(points, back):
        assert new.us_per_frame == pytest.approx(
            {c: round(u, 3) for c, u in old.us_per_frame.items()}
        )
    moved = tmp_path / "saved" / "bench-x.csv"
    moved.parent.mkdir()
    moved.write_text(csv_path.read_text())
    assert ratebench_main(["--replot", str(moved), "--out", str(tmp_path / "unused")]) == 0
    assert moved.with_suffix(".png").stat().st_size > 0
    assert not (tmp_path / "unused").exists()  # nothing ran
    header, row = csv_path.read_text().splitlines()[:2]
    for text, why in (
        ("a,b\n1,2\n", "its header has none of the columns"),
        (header.replace(",limit", "") + "\n", "its header lacks limit"),
        (header + "\ntcp,500\n", "line 2 has fewer values than columns"),
        (header + "\n" + row.replace(",500,", ",inf,", 1) + "\n", "leg_mbit is inf (expected"),
        (header + "\n" + row.replace(",500,", ",five,", 1) + "\n", "could not convert"),
    ):
        moved.write_text(text)
        assert ratebench_main(["--replot", str(moved)]) == 1
        err = capsys.readouterr().err
        assert f"--replot {moved}: not a bench.csv (" in err and why in err, err
        assert "its columns are stack,leg_mbit,rep,offered_mbit" in err
    moved.write_text(header + "\n")
    assert ratebench_main(["--replot", str(moved)]) == 1
    assert "no points in it" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--replot", str(tmp_path)])
    assert "is a directory (expected a regular file)" in capsys.readouterr().err


def test_a_departure_slack_runs_the_sweep_again_beside_the_exact_linkem(
    tmp_path, monkeypatch, capsys
):
    """--departure-slack-us auto,0,50: one sweep per slack (the runner's linkem option; auto in
    OUT, a number in OUT/slack-Nus), their points side by side in one table as tcp,
    tcp-slack0us and tcp-slack50us. Without the option the legs' linkem has dcexp's auto
    slack."""
    calls = []

    def fake_sweep(
        out, rates, stacks, duration_s, pin, resume, rcvbufs, departure_slack_us, io, reps, **_
    ):
        calls.append((out, departure_slack_us))
        run = _fake_run(out, "tcp", 500, 900.0, 0.6, slack_us=departure_slack_us)
        return [sweep.reduce_run(run)]

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    argv = ["--out", str(tmp_path), "--rates", "500", "--stacks", "tcp", "--no-raw", "--no-idle"]
    assert ratebench_main(argv + ["--departure-slack-us", "auto,0,50"]) == 0
    assert calls == [
        (tmp_path, "auto"),
        (tmp_path / "slack-0us", 0),
        (tmp_path / "slack-50us", 50),
    ]
    stacks = [line.split()[0] for line in capsys.readouterr().out.splitlines() if "2x500" in line]
    assert stacks[:3] == ["tcp", "tcp-slack0us", "tcp-slack50us"], stacks
    assert build_parser().parse_args([]).departure_slack_us == ["auto"]


def test_t_reordering_values_run_the_sweep_again_side_by_side(tmp_path, monkeypatch, capsys):
    """--t-reordering-ms 200,50: one sweep per value (the paper's 200 in OUT, 50 in
    OUT/treord-50ms), side by side in one table as ngtcp2 and ngtcp2-treord50ms; the
    scenario hands the value to the agent. A value outside TS 38.323's 0 to 3000 ms is refused
    by name."""
    calls = []

    def fake_sweep(*args, t_reordering_ms, **_):
        calls.append((args[0], t_reordering_ms))
        return [
            sweep.reduce_run(
                _fake_run(args[0], "ngtcp2", 500, 700.0, 0.5, t_reordering_ms=t_reordering_ms)
            )
        ]

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    argv = ["--out", str(tmp_path), "--rates", "500", "--stacks", "ngtcp2", "--no-raw", "--no-idle"]
    assert ratebench_main(argv + ["--t-reordering-ms", "200,50"]) == 0
    assert calls == [(tmp_path, 200), (tmp_path / "treord-50ms", 50)]
    stacks = [line.split()[0] for line in capsys.readouterr().out.splitlines() if "2x500" in line]
    assert stacks[:2] == ["ngtcp2", "ngtcp2-treord50ms"], stacks
    points = [
        sweep.reduce_run(_fake_run(tmp_path / "g", "ngtcp2", 500, g, 0.5, t_reordering_ms=t, rep=r))
        for r, (t, g) in enumerate([(50, 850.0), (200, 700.0), (20, 600.0)])
    ]
    assert report.goals(points, None)[:3] == [
        "ngtcp2 at 2x500 >= 80% of capacity: 70% (not met)",
        "ngtcp2 at 2x500, t-Reordering 50 ms >= 80% of capacity: 85% (met)",
        "ngtcp2 at 2x500, t-Reordering 20 ms >= 80% of capacity: 60% (not met)",
    ]
    assert sweep.scenario_doc([500], ["tcp"], 12, t_reordering_ms=50)["t_reordering_ms"] == 50
    assert build_parser().parse_args([]).t_reordering_ms == [200]
    for bad in ("3001", "-1", "50,50", "fast"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["--t-reordering-ms", bad])
    assert "0 to 3000 (ms)" in capsys.readouterr().err


def test_the_cpu_goal_reads_each_part_against_a_do_nothing_hop_at_its_frame_rate(
    tmp_path, monkeypatch, capsys
):
    """After the raw limit, the bench paces the do-nothing chain to each frame rate the goal's
    forwarders saw (here the switch 30 and linkem A 20 kframes/s: two floors), and the goal
    line gives that hop's cost per frame and each part's own work above it."""
    paced = []

    def fake_measure(duration_s, workdir, paced_mbit=None, **_):
        paced.append(paced_mbit)
        if paced_mbit is None:  # the limit: 100 frames per Mbit/s
            return rawpath.RawLimit(1000.0, 100_000.0, [1.9, 2.0, 2.1], [0.2, 0.2, 0.2])
        hop = 2.6 if paced_mbit > 250 else 3.1  # a slower hop costs more per frame
        return rawpath.RawLimit(
            paced_mbit, paced_mbit * 100, [hop - 0.1, hop, hop + 0.1], [0.1] * 3, paced_mbit
        )

    monkeypatch.setattr(
        sweep,
        "run_sweep",
        lambda out, *a, **k: [sweep.reduce_run(_fake_run(out, "tcp", 100, 190.0, 0.6))],
    )
    monkeypatch.setattr(rawpath, "measure", fake_measure)
    argv = ["--out", str(tmp_path), "--rates", "100", "--stacks", "tcp", "--no-idle"]
    assert ratebench_main(argv) == 0
    assert paced == [None, pytest.approx(200.0), pytest.approx(300.0)]
    out = capsys.readouterr().out
    assert (
        "a do-nothing AF_PACKET hop at 30 kframes/s (as switch saw): 2.50 to 2.70 us per frame (above the goal on its own)"
        in out
    )
    assert "a do-nothing AF_PACKET hop at 20 kframes/s (as link_a saw): 3.00 to 3.20 us" in out
    # the switch: 0.6 of a core over 30,000 frames/s = 20 us; linkem A 0.1 over 20,000 = 5 us
    assert "each part's own work above that hop: switch +17.4 us, link_a +1.9 us" in out
    saved = json.loads((tmp_path / "bench.json").read_text())
    assert [f["paced_mbit"] for f in saved["raw_floors"]] == [
        pytest.approx(200.0),
        pytest.approx(300.0),
    ]
    # above the limit's own rate the limit is the floor: nothing more runs
    limit = rawpath.RawLimit(1000.0, 100_000.0, [2.0] * 3, [0.2] * 3)
    assert rawpath.at_frame_rate(150_000, limit, 1.0, tmp_path) is limit
    assert paced == [None, pytest.approx(200.0), pytest.approx(300.0)]


def test_io_afpacket_afxdp_runs_the_sweep_on_both_paths_side_by_side(tmp_path, monkeypatch, capsys):
    """--io afpacket,afxdp: one sweep per I/O path (the runner's io option; afpacket in OUT,
    afxdp in OUT/io-afxdp), side by side in one table as tcp and tcp-afxdp; a manifest from
    before --io counts as afpacket. Without the option the parts stay on AF_PACKET."""
    calls = []

    def fake_sweep(
        out, rates, stacks, duration_s, pin, resume, rcvbufs, departure_slack_us, io, reps, **_
    ):
        calls.append((out, departure_slack_us, io))
        run = _fake_run(
            out,
            "tcp",
            500,
            900.0,
            0.6,
            slack_us=departure_slack_us,
            io=None if io == "afpacket" else io,
        )
        return [sweep.reduce_run(run)]

    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    argv = ["--out", str(tmp_path), "--rates", "500", "--stacks", "tcp", "--no-raw", "--no-idle"]
    assert ratebench_main(argv + ["--io", "afpacket,afxdp", "--departure-slack-us", "auto,0"]) == 0
    assert calls == [
        (tmp_path, "auto", "afpacket"),
        (tmp_path / "io-afxdp", "auto", "afxdp"),
        (tmp_path / "slack-0us", 0, "afpacket"),
        (tmp_path / "slack-0us" / "io-afxdp", 0, "afxdp"),
    ]
    stacks = [line.split()[0] for line in capsys.readouterr().out.splitlines() if "2x500" in line]
    assert set(stacks[:4]) == {"tcp", "tcp-afxdp", "tcp-slack0us", "tcp-slack0us-afxdp"}, stacks
    assert build_parser().parse_args([]).io == ["afpacket"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--io", "afxdp,dpdk"])
    assert (
        "'afxdp,dpdk': give a comma-separated subset of afpacket,afxdp" in capsys.readouterr().err
    )


def test_bad_rates_are_refused_naming_the_allowed_values(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--rates", "20,30"])
    assert "subset of 20,50,100,250,500,1000" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--ngtcp2-rcvbuf", "huge"])
    assert "'huge': give a comma-separated subset of default,large" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--departure-slack-us", "2000"])
    assert "'2000': give comma-separated integers 0 to 1000 (µs) or auto" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--duration-s", "nan"])
    assert "duration 'nan' must be a number from 1 to 600" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--reps", "0"])
    assert "repetitions 0 is out of range (allowed 1..20)" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # int() reads fullwidth digits as 100
        build_parser().parse_args(["--rates", "１００"])
    assert "'１００': give a comma-separated subset of 20,50" in capsys.readouterr().err
    for option, text in (("--rates", "100,100"), ("--departure-slack-us", "auto,0,auto")):
        with pytest.raises(SystemExit):  # the same point or slack twice would run twice
            build_parser().parse_args([option, text])
        assert f"{text!r}: " in (err := capsys.readouterr().err) and "is given twice" in err


def test_an_out_that_cannot_be_a_directory_is_refused_before_the_sweep(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        ratebench_main(["--out", str(tmp_path / "file")])
    assert "--out " + str(tmp_path / "file") + ": exists and is not a directory" in (
        capsys.readouterr().err
    )


def test_raw_limit_carries_tcp_through_three_forwarders(tmp_path):
    before = set(leftovers("rl"))
    raw = rawpath.measure(1.0, tmp_path)
    # TCP got through (0 if the chain is broken); how fast is the benchmark's question
    assert raw.goodput_mbit > 1 and raw.frames_per_s > 0
    assert len(raw.hop_us_per_frame) == 3 and all(u > 0 for u in raw.hop_us_per_frame)
    # paced to a third of that frame rate, the hops carry about a third (iperf3 -b)
    floor = rawpath.at_frame_rate(raw.frames_per_s / 3, raw, 2.0, tmp_path / "paced")
    assert floor.paced_mbit == pytest.approx(raw.goodput_mbit / 3)
    assert 0.5 < floor.frames_per_s / (raw.frames_per_s / 3) < 1.5, (floor, raw)
    assert set(leftovers("rl")) <= before  # its namespaces are gone


def _link_rows(late_us: dict[str, list[float]], frames: int | list[int] = 200) -> list[tuple]:
    """linkem stats rows: per direction ('a/ab'), one 100 ms window from t = 0 per late p99
    (µs), each forwarding `frames` (one count for every window, or one per window), after a
    setup window before t = 0 that was 90 ms late."""
    rows = []
    for ident, lates in late_us.items():
        counts = frames if isinstance(frames, list) else [frames] * len(lates)
        total = 50  # forwarded during setup
        rows += [(-0.1, "link", ident, "frames", total), (-0.1, "link", ident, "late_us.p99", 9e4)]
        for i, (late, n) in enumerate(zip(lates, counts)):
            total += n
            rows += [(0.1 * i, "link", ident, "frames", total)]
            rows += [(0.1 * i, "link", ident, "late_us.p99", late)]
    return rows


def _legs(delay_ms=10, uplink_ms=0):
    """A run's config: two 100 Mbit/s legs as a scenario file gives them (links.both, uplink
    keys), resolved as the runner saves them."""
    links = {
        "both": {"rate_mbit": 100, "delay_ms": delay_ms, "delay_cv": 0.1},
        "a_uplink": {"delay_ms": uplink_ms},
        "b_uplink": {"delay_ms": uplink_ms},
    }
    return {"links": resolve_links(links), "dc": {"mode": "dc", "dup": False}}


def _late(a_ms: list[float], b_ms: list[float] | None = None, config=None, frames=200) -> dict:
    """The verdict of a run whose downlinks were late by these p99s (ms) in its windows, its
    uplink A on time."""
    late = {"a/ab": [1e3 * ms for ms in a_ms], "a/ba": [20.0] * len(a_ms)}
    late["b/ab"] = [1e3 * ms for ms in b_ms or [0.04] * len(a_ms)]
    results = {"f0-dc": {"client": "dc", "goodput_mbit": 190.0}}
    return limits.assess(config or _legs(), results, _sat(), _link_rows(late, frames), {})


def test_a_leg_on_time_is_not_late_and_its_worst_window_is_kept():
    got = _late([0.04] * 100)
    assert not got["link_late"] and got["link_reasons"] == []
    assert got["link_late_ms"] == {"a": pytest.approx(0.04), "b": pytest.approx(0.04)}
    assert got["link_late_share"] == {"a": 0.0, "b": 0.0}
    assert got["link_late_tolerance_ms"] == {"a": 1.0, "b": 1.0}  # 10 % of 10 ms


def test_a_short_spike_under_the_share_is_not_late():
    got = _late([12.4] * 4 + [0.3] * 96)  # 4 % of the frames; 0.3 ms is routine here
    assert not got["link_late"]
    assert got["link_late_share"]["a"] == pytest.approx(0.04)
    assert got["link_late_ms"]["a"] == pytest.approx(12.4)  # the worst window still shows


def test_sustained_lateness_beyond_the_tolerance_names_the_leg_but_is_not_cpu_bound():
    got = _late([2.0] * 7 + [0.3] * 93, [1.5] * 20 + [0.04] * 80)
    assert got["link_late"] and not got["cpu_bound"] and got["limit"] == "at capacity"
    assert got["link_late_share"] == {"a": pytest.approx(0.07), "b": pytest.approx(0.2)}
    reason = (
        "link emulation late: leg {}: {} of its downlink frames passed in stats windows "
        "whose p99 was more than 1.0 ms late (10% of its 10 ms delay; worst window {} ms)"
    )
    assert got["link_reasons"] == [
        reason.format("A", "7.0%", "2.0"),
        reason.format("B", "20.0%", "1.5"),
    ]


def test_a_late_leg_says_how_long_its_linkem_waited_for_a_core_in_those_windows():
    """The sampler's `wait` of linkem A (one sample per 100 ms): 5 % while its first ten
    windows were late, 1 % after. A real-time linkem held off its core: the machine's doing."""
    late = {"a/ab": [2e3] * 10 + [40.0] * 90, "a/ba": [20.0] * 100, "b/ab": [40.0] * 100}
    rows = _link_rows(late)
    rows += [
        (0.05 + 0.1 * i, "proc", "link_a", "wait", 0.05 if i < 10 else 0.01) for i in range(100)
    ]
    results = {"f0-dc": {"client": "dc", "goodput_mbit": 190.0}}
    got = limits.assess(_legs(), results, _sat(), rows, {})
    assert got["link_late_wait"] == {"a": [pytest.approx(0.05), pytest.approx(0.01)]}
    reason = (
        "link emulation late: leg A: 10.0% of its downlink frames passed in stats windows "
        "whose p99 was more than 1.0 ms late (10% of its 10 ms delay; worst window 2.0 ms); "
        "linkem A waited for a core 5.0% of the time in those windows, 1.0% in the others"
    )
    assert got["link_reasons"] == [reason]
    # without the sampler's rows (runs saved before it, linkem's stats alone): no claim
    assert _late([2.0] * 10 + [0.04] * 90)["link_late_wait"] == {}


def test_the_share_counts_frames_not_windows():
    # a fifth of the windows late, but they carried 1 frame each against 500
    got = _late([5.0, 0.04] * 50, frames=[1, 500] * 50)
    assert got["link_late_share"]["a"] == pytest.approx(50 / 25_050)
    assert not got["link_late"]


def test_a_100_ms_leg_tolerates_3_ms_where_a_10_ms_leg_does_not():
    windows = [3.0] * 50 + [0.2] * 50
    slow = _late(windows, config=_legs(delay_ms=100))
    assert not slow["link_late"] and slow["link_late_tolerance_ms"]["a"] == 10.0
    assert _late(windows, config=_legs(delay_ms=10))["link_late"]


def test_an_uplink_is_held_to_its_legs_round_trip_and_few_frames_are_not_judged():
    """The ACK path of a 100 ms leg with no uplink delay: 0.5 ms late is 0.5 % of the round
    trip its ACKs travel; a direction that forwarded under LINK_LATE_MIN_FRAMES is not
    judged however late."""
    late = {"a/ab": [40.0] * 100, "a/ba": [500.0] * 100, "b/ba": [9e4] * 4}
    lateness = limits.link_lateness(_link_rows(late), _legs(delay_ms=100))
    assert lateness["a"]["share"] == 0.0 and lateness["a"]["tolerance_ms"] == 10.0
    assert lateness["b"] == {"worst_ms": 90.0, "share": None}  # 800 frames: not judged
    assert limits.link_verdict(lateness) == []
    scenario_file = {"both": {"delay_ms": 10}}  # unresolved: the uplink takes the leg's delay
    tolerance, why = limits.link_tolerance(scenario_file, "b/ba")
    assert (tolerance, why) == (2.0, "10% of the leg's 20 ms round trip")
    assert limits.link_tolerance({"a": {}}, "a/ab") == (0.1, "linkem's 0.1 ms goal")
    up = limits.link_lateness(_link_rows({"a/ba": [3e3] * 100}), _legs(delay_ms=10))
    assert limits.link_verdict(up)[0].startswith(
        "link emulation late: leg A: 100.0% of its uplink frames passed in stats windows "
        "whose p99 was more than 1.0 ms late (10% of the leg's 10 ms round trip"
    )


def test_the_verdict_carries_the_cpu_bound_process_names_and_old_manifests_are_parsed():
    sat = _sat(wait=0.4, cores=(0.97, 0.99))
    got = limits.assess(_config(100), {}, sat, [], {})
    assert got["cpu_bound_processes"] == ["switch"]
    assert limits.cpu_bound_processes(got) == ["switch"]
    # a name with a space cannot be parsed back from its reason: the data is what counts
    assert limits.cpu_bound_processes(
        {"cpu_bound_processes": ["f0-dc/server main"], "cpu_reasons": ["f0-dc/server main at"]}
    ) == ["f0-dc/server main"]
    saved_before = {
        "cpu_reasons": ["agent waited for a core 30% of the time", "every core busy (mean 97%)"],
        "saturated_processes": ["f0-dc/client"],
    }
    assert limits.cpu_bound_processes(saved_before) == ["agent", "f0-dc/client"]

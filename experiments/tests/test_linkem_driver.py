"""The Python side of link emulation without namespaces: LinkSpec from scenario keys, the
SPEC strings linkem receives (checked against the real binary's parser), live-change strings,
and the netem translation in experiments/run/tc.py.

    .venv/bin/pytest -q experiments/tests/test_linkem_driver.py
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from experiments.linkem.bench import cost, outage
from experiments.run import tc
from experiments.run.links import start_link
from experiments.run.linkspec import LinkSpec, LinkSpecError, change_spec, trace_mean_mbit

LINKEM = Path(__file__).resolve().parents[2] / "build" / "linkem" / "linkem"


def test_scenario_keys_become_a_full_spec():
    spec = LinkSpec.from_dict(
        {"rate_mbit": 20, "delay_ms": 10, "delay_cv": 0.1, "queue_pkts": 100, "loss": 0.01}
    )
    assert spec.to_spec() == (
        "rate_mbit=20,burst_bytes=0,queue_pkts=100,delay_ms=10,"
        "delay_cv=0.1,dist=normal,reorder=0,loss=0.01,loss_at=departure,ge=off"
    )


def test_defaults_are_explicit():
    assert LinkSpec().to_spec() == (
        "rate_mbit=0,burst_bytes=0,queue_pkts=1000,delay_ms=0,"
        "jitter_ms=0,dist=normal,reorder=0,loss=0,loss_at=departure,ge=off"
    )


def test_queue_bdp_resolves_to_bytes():
    # 20 Mbit/s x (2 x 10 ms) = 50,000 bytes; 1.5 BDP = 75,000.
    spec = LinkSpec.from_dict({"rate_mbit": 20, "delay_ms": 10, "queue_bdp": 1.5})
    assert spec.queue_limit_bytes() == 75_000
    assert "queue_bytes=75000" in spec.to_spec()
    assert spec.queue_limit_pkts() == 50  # for netem: ceil(75000 / 1514)


def test_gilbert_elliott_in_netems_order():
    spec = LinkSpec.from_dict({"ge": [0.01, 0.3, 1, 0]})
    assert spec.ge == (0.01, 0.3, 1, 0)
    assert spec.to_spec().endswith(",ge=0.01,0.3,1,0")


@pytest.mark.parametrize(
    "d, message",
    [
        ({"rate": 20}, r"unknown link key\(s\) rate: allowed are rate_mbit"),
        ({"loss": 5}, r"loss=5: expected a number in \[0, 1\]"),
        ({"dist": "gauss"}, "dist='gauss': expected one of const, normal"),
        ({"delay_ms": 10, "delay_cv": 0.1, "jitter_ms": 1}, "delay_cv or jitter_ms, not both"),
        ({"queue_pkts": 10, "queue_bytes": 1000}, "one of queue_pkts, queue_bytes, queue_bdp"),
        ({"queue_pkts": 1.5}, "queue_pkts=1.5: expected an integer"),
        ({"queue_bdp": 1}, "queue_bdp needs delay_ms > 0 and a rate_mbit or trace"),
        ({"trace": "/nonexistent.mahi"}, "trace=/nonexistent.mahi: no such file"),
        ({"ge": [0.1, 2]}, r"ge=\(0.1, 2\): expected \[p, r, 1-h, 1-k\]"),
        ({"reorder": "yes"}, "reorder='yes': expected true or false"),
        ({"loss_at": "queue"}, "loss_at='queue': expected one of departure, enqueue"),
    ],
)
def test_bad_link_descriptions_are_refused(d, message):
    with pytest.raises(LinkSpecError, match=message):
        LinkSpec.from_dict(d)


def test_trace_spec_and_mean(tmp_path):
    trace = tmp_path / "t.mahi"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 101)))  # one per ms: 12 Mbit/s
    assert trace_mean_mbit(trace) == pytest.approx(12.0)
    spec = LinkSpec.from_dict({"trace": str(trace), "delay_ms": 10, "queue_bdp": 1})
    assert spec.to_spec().startswith(f"trace={trace.resolve()},")
    assert spec.queue_limit_bytes() == 30_000  # 12 Mbit/s x 20 ms
    with pytest.raises(LinkSpecError, match="rate_mbit or trace, not both"):
        LinkSpec.from_dict({"trace": str(trace), "rate_mbit": 5})


def test_live_change_strings():
    assert change_spec({"loss": 1}) == "loss=1"
    assert (
        change_spec({"rate_mbit": 5, "delay_ms": 30, "reorder": True})
        == "rate_mbit=5,delay_ms=30,reorder=1"
    )
    assert change_spec({"ge": (0.1, 0.5)}) == "ge=0.1,0.5"
    assert change_spec({"ge": None}) == "ge=off"
    with pytest.raises(LinkSpecError, match="unknown link key speed"):
        change_spec({"speed": 5})
    with pytest.raises(LinkSpecError, match="loss=-1"):
        change_spec({"loss": -1})


@pytest.mark.parametrize(
    "spec",
    [
        LinkSpec(),
        LinkSpec(rate_mbit=20, delay_ms=10, delay_cv=0.1, queue_pkts=100, loss=0.01),
        LinkSpec(
            rate_mbit=100,
            burst_bytes=15000,
            delay_ms=5,
            jitter_ms=2,
            dist="pareto",
            reorder=True,
            ge=(0.01, 0.3, 1, 0),
        ),
        LinkSpec(rate_mbit=50, delay_ms=20, queue_bdp=2),
        LinkSpec(rate_mbit=20, loss=0.05, loss_at="enqueue"),
    ],
)
def test_the_binary_accepts_every_generated_spec(spec):
    # linkem parses SPECs before it looks at interfaces: reaching the interface check means
    # the SPEC was accepted.
    proc = subprocess.run(
        [
            str(LINKEM),
            "-i",
            "nosuchif0",
            "-i",
            "nosuchif1",
            "--ab",
            spec.to_spec(),
            "--ba",
            spec.to_spec(),
        ],
        check=False,  # the exit code is asserted below
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert proc.returncode == 2 and "no interface 'nosuchif0'" in proc.stderr, proc.stderr


def test_netem_arguments():
    spec = LinkSpec(rate_mbit=20, delay_ms=10, delay_cv=0.1, loss=0.01, queue_pkts=100)
    assert tc.netem_args(spec) == [
        "delay",
        "10ms",
        "1ms",
        "distribution",
        "normal",
        "loss",
        "random",
        "1%",
        "rate",
        "20000kbit",
        "limit",
        "100",
    ]
    # uniform: netem's jitter is the half-width, sd x sqrt(3); its default distribution.
    uni = tc.netem_args(LinkSpec(delay_ms=10, jitter_ms=3, dist="uniform"))
    assert uni == ["delay", "10ms", "3ms"]
    ge = tc.netem_args(LinkSpec(ge=(0.01, 0.3, 1, 0)))
    assert ge == ["loss", "gemodel", "1%", "30%", "100%", "0%"]


@pytest.mark.parametrize(
    "spec, message",
    [
        (LinkSpec(queue_bytes=30000), "netem limits its queue in packets"),
        (LinkSpec(rate_mbit=20, burst_bytes=3000), "no token bucket burst"),
        (LinkSpec(loss=0.01, ge=(0.1,)), "one loss model"),
        (LinkSpec(loss=0.01, loss_at="departure"), "loss_at=departure .* needs linkem"),
    ],
)
def test_what_netem_cannot_do_names_linkem(spec, message):
    with pytest.raises(tc.TcError, match=message):
        tc.netem_args(spec)


def test_loss_at_names_where_a_lost_frame_is_dropped():
    """linkem's default stays after serialization (every earlier result's meaning), spelled
    out in the SPEC; enqueue is netem's own behaviour, so netem takes it as it is."""
    assert "loss_at=departure" in LinkSpec(loss=0.05).to_spec()
    assert "loss_at=enqueue" in LinkSpec.from_dict({"loss": 0.05, "loss_at": "enqueue"}).to_spec()
    assert change_spec({"loss_at": "enqueue"}) == "loss_at=enqueue"
    with pytest.raises(LinkSpecError, match="loss_at='late': expected one of departure, enqueue"):
        change_spec({"loss_at": "late"})
    netem = tc.netem_args(LinkSpec(loss=0.05, loss_at="enqueue"))
    assert netem == tc.netem_args(LinkSpec(loss=0.05)) == ["loss", "random", "5%"]


def test_netem_cannot_replay_traces(tmp_path):
    trace = tmp_path / "t.mahi"
    trace.write_text("1\n2\n")
    with pytest.raises(tc.TcError, match="use linkem"):
        tc.netem_args(LinkSpec(trace=str(trace)))


def test_unknown_link_kind():
    with pytest.raises(LinkSpecError, match="link kind 'dummynet': expected linkem or netem"):
        start_link("dummynet", "a", "b", LinkSpec(), LinkSpec())


@pytest.mark.parametrize(
    "args,message",
    [
        (["-i", "v" * 16, "-i", "b"], "name too long or empty (a Linux interface name is 1 to 15"),
        (["-i", "a", "-i", "v" * 300], "'" + "v" * 40 + "...': name too long"),
        (["-i", "", "-i", "b"], "name too long or empty"),
        (["-i", "veth1", "-i", "veth1"], "-i veth1 given twice: the two interfaces must differ"),
        # strtoul skipped the space and took the sign: both were seed 5
        (["--seed", " 5", "-i", "a", "-i", "b"], "--seed  5: expected an integer in [0, "),
        (["--seed", "+5", "-i", "a", "-i", "b"], "--seed +5: expected an integer in [0, "),
        (["--departure-slack-us", "٥"], "--departure-slack-us ٥: expected an integer in [0, 1000]"),
    ],
)
def test_interface_names_are_checked_before_use(args, message):
    """An over-long name was cut to IFNAMSIZ-1 bytes by the kernel request: linkem could
    bridge another interface than the one named."""
    proc = subprocess.run(
        [str(LINKEM), *args], capture_output=True, text=True, timeout=10, check=False
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr, proc.stderr


def test_the_driver_passes_a_departure_slack_and_netem_refuses_one(tmp_path):
    """Linkem.start(departure_slack_us=N) reaches linkem's --departure-slack-us (an out-of-range
    value comes back as linkem's one-line error, checked before the interfaces); a testbed on
    netem, which has no such thing, refuses a slack instead of ignoring it."""
    from experiments.run.links import Linkem, LinkError
    from experiments.run.parts import TestbedError
    from experiments.run.testbed import Testbed

    with pytest.raises(
        LinkError, match=r"--departure-slack-us 2000: expected an integer in \[0, 1000\]"
    ):
        Linkem(LINKEM).start(
            "nosuchif0", "nosuchif1", LinkSpec(), LinkSpec(), departure_slack_us=2000
        )
    testbed = Testbed(
        prefix="t", config={}, workdir=tmp_path, link_kind="netem", departure_slack_us=50
    )
    with pytest.raises(
        TestbedError, match="departure slack 50 us: a linkem option; the netem link"
    ):
        testbed._start_links({})


@pytest.mark.parametrize(
    "nice,asked,priority",
    [
        (0, None, 10),  # dcexp as the campaigns run it: linkem real-time, SCHED_FIFO 10
        (19, None, 0),  # a niced caller (a bench at nice 19): linkem an ordinary, niced task
        (19, 10, 10),  # an explicit priority is kept
        (0, 0, 0),
    ],
)
def test_linkem_is_real_time_only_for_an_unniced_caller(
    nice, asked, priority, tmp_path, monkeypatch
):
    """The --rt-priority linkem gets (seen by a stand-in binary that records its argv), and
    the priority the driver keeps for the run's manifest."""
    from experiments.run import links

    argv_file = tmp_path / "argv"
    fake = tmp_path / "linkem"
    fake.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_file}\necho "linkem: error: x" >&2\nexit 2\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(links.os, "getpriority", lambda which, who: nice)
    link = links.Linkem(fake)
    with pytest.raises(links.LinkError, match="x"):
        link.start("if0", "if1", LinkSpec(), LinkSpec(), rt_priority=asked)
    argv = argv_file.read_text().split("\n")
    assert link.rt_priority == priority
    if priority:
        assert argv[argv.index("--rt-priority") + 1] == str(priority)
    else:
        assert "--rt-priority" not in argv


@pytest.mark.parametrize(
    "down,up,slack_us",
    [
        (LinkSpec(rate_mbit=20, delay_ms=10), LinkSpec(delay_ms=10), 0),  # the paper's legs
        (LinkSpec(rate_mbit=100), LinkSpec(), 0),  # 121 us between full frames
        (LinkSpec(rate_mbit=240), LinkSpec(), 0),  # 50.5 us: just above the slack
        (LinkSpec(rate_mbit=250), LinkSpec(), 50),  # 48.4 us
        (LinkSpec(rate_mbit=500), LinkSpec(), 50),
        (LinkSpec(rate_mbit=20), LinkSpec(rate_mbit=1000), 50),  # the faster direction counts
        (LinkSpec(), LinkSpec(), 0),  # unlimited: no frame spacing to go by
    ],
)
def test_auto_departure_slack_follows_the_leg_rate(down, up, slack_us):
    """dcexp's auto slack: 50 us on a leg whose full-size frames leave closer together than
    that, nothing where a slack would save no wake-up (the paper's 20 Mbit/s legs stay exact)."""
    from experiments.run.links import departure_slack_us

    assert departure_slack_us("auto", "linkem", down, up) == slack_us


def test_auto_departure_slack_reads_a_trace_by_its_mean_and_a_number_as_given(tmp_path):
    from experiments.run.links import departure_slack_us

    fast = tmp_path / "fast.mahi"  # 21 opportunities per ms: 252 Mbit/s
    fast.write_text("1\n" * 21)
    slow = tmp_path / "slow.mahi"  # 2 per ms: 24 Mbit/s
    slow.write_text("1\n1\n")
    assert departure_slack_us("auto", "linkem", LinkSpec(trace=str(fast)), LinkSpec()) == 50
    assert departure_slack_us("auto", "linkem", LinkSpec(trace=str(slow)), LinkSpec()) == 0
    assert departure_slack_us(0, "linkem", LinkSpec(rate_mbit=500), LinkSpec()) == 0
    assert departure_slack_us(25, "linkem", LinkSpec(rate_mbit=20), LinkSpec()) == 25
    assert departure_slack_us("auto", "netem", LinkSpec(rate_mbit=500), LinkSpec()) == 0


def test_the_testbed_gives_each_leg_its_own_slack_and_keeps_it(tmp_path, monkeypatch):
    """A 500 Mbit/s leg A and a 20 Mbit/s leg B: linkem on A gets --departure-slack-us 50,
    B none (linkem's exact default); testbed.link_slack_us, which the run's manifest keeps,
    says so."""
    from experiments.run import links
    from experiments.run.testbed import Testbed

    started = {}

    def fake_start_link(kind, if_a, if_b, ab, ba, **options):
        started[if_a] = options.get("departure_slack_us")
        return links.Linkem()  # not started: its rt_priority is None, as a netem link's

    monkeypatch.setattr(links, "start_link", fake_start_link)
    config = {
        "links": {
            "a": {"rate_mbit": 500, "delay_ms": 10},
            "a_uplink": {"delay_ms": 10},
            "b": {"rate_mbit": 20, "delay_ms": 10},
            "b_uplink": {"delay_ms": 10},
        }
    }
    testbed = Testbed(prefix="t", config=config, workdir=tmp_path)
    testbed._start_links({"a": None, "b": None})
    assert started == {"tain": 50, "tbin": None}
    assert testbed.link_slack_us == {"a": 50, "b": 0}
    assert testbed.link_rt_priority == {"a": None, "b": None}  # kept per leg for the manifest


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--kpps", "nan"], "--kpps 'nan': expected comma-separated numbers above 0 up to 10000"),
        (["--kpps", "２0"], "--kpps '２0': expected comma-separated numbers"),
        (["--kpps", "-5"], "--kpps '-5': expected comma-separated numbers above 0"),
        (["--kpps", "20,80,20"], "--kpps '20,80,20': 20 is given twice; give each once"),
        (["--delay-rates-mbit", "1000\u00a0"], "expected comma-separated numbers above 0"),
        (["--departure-slack-us", "５0"], "expected comma-separated whole numbers from 0 to 1000"),
        # a variant per slack, keyed by its name: the second 25 was dropped without a word
        (["--departure-slack-us", "0,25,25"], "'0,25,25': 25 is given twice; give each once"),
        (["--duration-s", "-1"], "duration '-1' must be a number above 0 up to 600"),
        (["--rt-priority", "100"], "priority 100 is out of range (allowed 0..99)"),
        (["--busy-poll-us", "x"], "busy poll 'x' is not a whole number (allowed 0..10000)"),
        (["--delay-ms", "-1"], "--delay-ms '-1': expected comma-separated numbers"),
        (["--delay-ms", "0,10,0"], "'0,10,0': 0 is given twice; give each once"),
        (["--baseline", "main", "--baseline", "main"], "'main' is given twice; give each once"),
    ],
)
def test_the_cost_bench_refuses_bad_options_before_it_starts(argv, message, capsys):
    with pytest.raises(SystemExit):
        cost.parse_args(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--reps", "0"], "repetitions 0 is out of range (allowed 1..100)"),
        (["--out", "/dev/null"], "--out /dev/null: exists and is not a directory"),
    ],
)
def test_the_outage_bench_refuses_bad_options_before_it_builds_namespaces(argv, message, capsys):
    with pytest.raises(SystemExit):
        outage.main(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--mean-mbit", "nan"], "mean 'nan' must be a number above 0 up to 100000"),
        (["--mean-mbit", "１"], "mean '１' must be a number above 0"),
        (["--mean-mbit", "20", "--cv", "-1"], "cv '-1' must be a number from 0 to 10"),
        (["--mean-mbit", "20", "--duration-s", "0.001"], "from 0.01 to 86400"),
        (["--mean-mbit", "20", "--outage-ms", "-5"], "outage -5 is out of range (allowed 1.."),
        (["--mean-mbit", "20", "--outages-per-min", "nan"], "outages per minute 'nan' must"),
        (["--mean-mbit", "1000", "--duration-s", "100"], "8,333,333 lines, more than the 5,0"),
    ],
)
def test_the_trace_generator_refuses_what_would_be_no_trace(argv, message, capsys):
    """nan, a negative outage or a huge trace once gave a file of one line, a trace with
    no outages, or ran out of memory."""
    from experiments.traces import generate

    with pytest.raises(SystemExit) as info:
        generate.main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_a_generated_trace_is_one_linkem_reads_at_its_mean(tmp_path, capsys):
    from experiments.traces import generate

    assert generate.main(["--mean-mbit", "12", "--cv", "0", "--duration-s", "2"]) == 0
    (tmp_path / "t.mahi").write_text(capsys.readouterr().out)
    assert trace_mean_mbit(tmp_path / "t.mahi") == pytest.approx(12.0, rel=0.01)

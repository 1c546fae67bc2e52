"""End to end on the adaptive profile (-D DC_ADAPTIVE): a real p4sim (compiled program, its
P4Runtime server on loopback, in-process ports, CPU port 255) receives leg feedback reports
on the leg ports: the switch spends credit per packet (dc-credit users), punts every report
to the controller, and `run_control` changes the split live from them.

Run: .venv/bin/pytest controlplane/tests/test_controlplane_adaptive.py
"""

import threading
import time
from pathlib import Path

import pytest

from controlplane.control import JsonLog, run_control
from controlplane.model import SplitterError, UserConfig
from controlplane.pdcp import Report, encode_report
from controlplane.policies import Tuning
from controlplane.splitter import Splitter
from controlplane.targets import p4sim_compile
from controlplane.tests.test_controlplane_e2e import frame, legs, p4sim_target

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "dc_splitter.p4"
CPU_PORT = 255
UE = "10.0.0.2"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    # A report stays fresh for 60 s instead of 20 ms: these tests check the choice rules,
    # not timing, and a loaded machine may take 20 ms for a few in-process packets.
    defines = ["DC_ADAPTIVE=1", "FEEDBACK_STALE_US=60000000"]
    return p4sim_compile(PROGRAM, tmp_path_factory.mktemp("p4"), defines, name="ad")


@pytest.fixture
def target(compiled):
    for t in p4sim_target(compiled, cpu_port=CPU_PORT):
        yield t.sw, t.ports, t.addr


def feedback(leg, desired, held=0, rate=1_000_000, delivered=10_000, lost=0, seq=0) -> bytes:
    r = Report(leg, seq, UE, desired, rate, held, 0, delivered, lost)
    return encode_report(r, dst_mac=bytes.fromhex("020000000001"))


def test_credit_split_follows_the_reports(target):
    """A wants 3000 B more, B 1000 B: 100-byte frames go where the credit is larger."""
    sw, ports, _ = target
    sw.add_user(UserConfig(addr=UE, mode="dc-credit", batch=10, ratio="1:1", name="ue1"))
    assert sw.users()[0].mode == "dc-credit"
    # Before any report: the batch split (5 on A, 5 on B).
    for i in range(10):
        ports.inject(0, frame(UE, i))
    assert [p for p, _ in legs(ports)] == [1] * 5 + [2] * 5
    ports.inject(1, feedback(0, desired=4000, held=1000))  # credit 3000
    ports.inject(2, feedback(1, desired=1000))  # credit 1000
    ports.collect()  # the reports went to the CPU port, not to a port
    n = 120
    for i in range(10, 10 + n):
        ports.inject(0, frame(UE, i))
    out = legs(ports)
    assert [sn for _, sn in out] == list(range(10, 10 + n))  # SN continues, one per packet
    assert [p for p, _ in out] == credit_model(3000, 1000, len(frame(UE, 0)), n, 4000, 1000)


def credit_model(credit_a, credit_b, length, n, desired_a, desired_b):
    """The leg choice of p4src/docs/adaptive.md ("Data-plane loop"), both legs heard from
    and live: the leg with more credit (A on a tie), a leg without credit skipped, and when
    neither has any the leg that asked for the larger buffer (A on a tie), not the batch
    split."""
    ports = []
    for _ in range(n):
        if credit_a and (not credit_b or credit_a >= credit_b):
            ports.append(1)
            credit_a = max(0, credit_a - length)
        elif credit_b:
            ports.append(2)
            credit_b = max(0, credit_b - length)
        else:
            ports.append(1 if desired_a >= desired_b else 2)
    return ports


def test_a_leg_that_wants_nothing_gets_only_the_probe(target):
    """Leg B reports a zero desired buffer (it delivers nothing): every packet on A, even
    with A's credit spent (a live leg takes the overdraft, never a dead one), except one in
    64: the probe that would let B report deliveries again."""
    sw, ports, _ = target
    sw.add_user(UserConfig(addr=UE, mode="dc-credit", batch=2, ratio="1:1"))
    ports.inject(1, feedback(0, desired=200))
    ports.inject(2, feedback(1, desired=0, delivered=0, lost=30))
    for i in range(130):
        ports.inject(0, frame(UE, i))
    assert [i for i, (p, _) in enumerate(legs(ports)) if p == 2] == [63, 127]


def test_reports_for_unknown_users_credit_nobody(target):
    sw, ports, _ = target
    sw.add_user(UserConfig(addr="10.0.0.9", mode="dc-credit", batch=2, ratio="1:1"))
    ports.inject(2, feedback(1, desired=100_000))  # about 10.0.0.2, not configured
    for i in range(4):
        ports.inject(0, frame("10.0.0.9", i))
    assert [p for p, _ in legs(ports)] == [1, 2, 1, 2]


def test_dc_credit_needs_the_adaptive_profile(target):
    sw, _, _ = target
    sw.push_pipeline(
        *[ROOT / "build" / "p4" / f"dc_splitter.{s}" for s in ("p4info.txtpb", "p4sim.json")]
    )
    with pytest.raises(SplitterError, match="adaptive profile"):
        sw.add_user(UserConfig(addr=UE, mode="dc-credit"))


class Daemon:
    """`run_control` in a thread until stopped: the tests wait for what it logged (it is
    primary once it logged "start"; it has handled the reports once it logged them), not for
    fixed times, which a loaded machine would stretch."""

    def __init__(self, addr, policy, tuning, log_path):
        self.log_path = log_path
        self.stop = threading.Event()

        def run():
            with Splitter.connect(addr, election_id=5) as ctl, open(log_path, "w") as out:
                run_control(ctl, "ue1", policy, tuning, JsonLog(out), stop_event=self.stop)

        self.thread = threading.Thread(target=run, daemon=True)  # a failed test still ends
        self.thread.start()

    def logged(self, text: str) -> int:
        return self.log_path.read_text().count(text) if self.log_path.exists() else 0

    def wait_logged(self, text: str, count: int = 1, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while self.logged(text) < count:
            assert self.thread.is_alive(), "the control daemon ended early"
            assert time.monotonic() < deadline, f"{text} not logged {count}x in {timeout_s} s"
            time.sleep(0.05)

    def end(self) -> str:
        self.stop.set()
        self.thread.join()
        return self.log_path.read_text()


def test_controller_capacity_moves_the_split_to_3_to_1(target, tmp_path):
    """Reports say A drains 3x B: the daemon MODIFYs the user to 75:25; SN untouched."""
    sw, ports, addr = target
    sw.add_user(UserConfig(addr=UE, batch=100, ratio="1:1", name="ue1"))
    for i in range(5):
        ports.inject(0, frame(UE, i))
    daemon = Daemon(addr, "capacity", Tuning(min_interval_s=0.0), tmp_path / "control.jsonl")
    daemon.wait_logged('"event": "start"')  # primary and listening
    for seq in range(20):
        ports.inject(1, feedback(0, 100_000, rate=3_750_000, seq=seq))
        ports.inject(2, feedback(1, 30_000, rate=1_250_000, seq=seq))
        time.sleep(0.01)
    daemon.wait_logged('"event": "report"', count=40)
    text = daemon.end()
    assert [(u.mode, u.k) for u in Splitter.connect(addr, election_id=6).users()] == [
        ("dc-split", 75)
    ]
    for i in range(5, 9):
        ports.inject(0, frame(UE, i))
    assert [sn for _, sn in legs(ports)] == list(range(9))
    assert '"event": "decision"' in text and '"ratio": "75:25"' in text
    assert text.count('"event": "report"') == 40


def test_controller_moves_traffic_off_a_leg_before_its_first_rate(target, tmp_path):
    """Leg B's first report holds 20 kB and has no rate yet: the daemon gives B the probe
    share (98:2) before its rate comes, then moves to the rates' 8:1 (89:11) at B's first
    rate without waiting the 100 ms between changes."""
    sw, ports, addr = target
    sw.add_user(UserConfig(addr=UE, batch=100, ratio="1:1", name="ue1"))
    daemon = Daemon(addr, "capacity", Tuning(), tmp_path / "control.jsonl")
    daemon.wait_logged('"event": "start"')
    ports.inject(1, feedback(0, 75_000, held=3000, rate=2_500_000))
    ports.inject(2, feedback(1, 15_000, held=20_000, rate=0, delivered=0))
    daemon.wait_logged('"event": "decision"')
    ports.inject(1, feedback(0, 75_000, held=3000, rate=2_500_000, seq=1))
    ports.inject(2, feedback(1, 9_000, held=8000, rate=312_500, seq=1))
    daemon.wait_logged('"event": "decision"', count=2)
    text = daemon.end()  # before another client connects: a higher election id takes over
    decisions = [line for line in text.splitlines() if '"event": "decision"' in line]
    assert '"ratio": "98:2"' in decisions[0]
    assert "leg B holds 20000 B, drained none yet" in decisions[0]
    assert '"ratio": "89:11"' in decisions[1] and '"error": null' in decisions[1]
    with Splitter.connect(addr, election_id=6) as check:
        assert [u.k for u in check.users()] == [89]


def test_controller_failover_leaves_a_leg_losing_everything(target, tmp_path):
    sw, ports, addr = target
    sw.add_user(UserConfig(addr=UE, batch=100, ratio="1:1", name="ue1"))
    tuning = Tuning(down_reports=2, silence_s=5.0)
    daemon = Daemon(addr, "failover", tuning, tmp_path / "control.jsonl")
    daemon.wait_logged('"event": "start"')
    for seq in range(5):
        ports.inject(1, feedback(0, 30_000, seq=seq))
        ports.inject(2, feedback(1, 0, rate=0, delivered=0, lost=25, seq=seq))
        time.sleep(0.01)
    daemon.wait_logged('"event": "report"', count=10)
    text = daemon.end()
    with Splitter.connect(addr, election_id=6) as check:
        assert [u.k for u in check.users()] == [98]  # 2 % probe share left on leg B
    assert "leg B loses everything" in text

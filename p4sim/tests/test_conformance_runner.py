"""The differential runner's own logic (p4sim.conformance): STF reading, bmv2stf's verdict
and its translation of `add` and meter lines for simple_switch_CLI, when it takes
simple_switch for idle, and the process pool the conformance tools share. The runs on BMv2 themselves are `make p4sim-conformance`.

Run: .venv/bin/pytest -q p4sim/tests/test_conformance_runner.py
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from controlplane import bmv2 as cp_bmv2
from p4sim.conformance.bmv2 import (
    Bmv2Error,
    Bmv2Program,
    Bmv2Switch,
    _lpm,
    _state_values,
    _ternary,
    compile_p4c,
)
from p4sim.conformance.parallel import quiet_p4sim_log, run_parallel, silence_logging
from p4sim.conformance.stf import (
    StfError,
    check_outputs,
    diff_outputs,
    judge_state,
    read_script,
    read_state_check,
)


def script(tmp_path, text):
    path = tmp_path / "t.stf"
    path.write_text(text)
    return read_script(path)


def test_ports_and_commands(tmp_path):
    s = script(
        tmp_path,
        """# comment
        add t 7 h.f:0x1* a(x:1, y:0x2) # trailing comment
        packet 2 0102 03
        expect 1 01**$
        expect 3
        """,
    )
    add, packet, expect, any_ = s.commands
    assert (add.table, add.priority, add.keys, add.action, add.args) == (
        "t",
        "7",
        [("h.f", "0x1*")],
        "a",
        [("x", "1"), ("y", "0x2")],
    )
    assert packet.data == bytes.fromhex("010203") and s.packets == 1
    assert (expect.port, expect.pattern, any_.pattern) == (1, "01**$", None)
    assert s.ports == [1, 2, 3]


def test_bad_line_is_named(tmp_path):
    with pytest.raises(StfError, match=r"t\.stf:2: bad hex"):
        script(tmp_path, "packet 0 00\npacket 0 0g\n")


def test_verdict_is_bmv2stf(tmp_path):
    s = script(tmp_path, "packet 0 00\nexpect 1 ab**$\nexpect 1 cd\nexpect 2\n")
    ok = {1: [bytes.fromhex("abff"), bytes.fromhex("cdef01")], 2: [b"x", b"y"]}
    assert check_outputs(s, ok) == []
    # `$`: exact length; prefix match otherwise; counts per port; port 0 sent nothing
    assert check_outputs(s, {1: [bytes.fromhex("abff00"), bytes.fromhex("cd")]}) == [
        "port 1: frame #1 is abff00, expected ab**$"
    ]
    assert check_outputs(s, {1: [bytes.fromhex("abff")]}) == ["port 1: 1 frame(s), expected 2"]
    assert check_outputs(s, {**ok, 0: [b"\x00"]}) == ["port 0: 1 frame(s), expected 0"]
    # a port the STF does not name is not observed (BMv2 has no interface for it)
    assert check_outputs(s, {**ok, 9: [b"\x00"]}) == []


def test_frames_compared_byte_for_byte(tmp_path):
    a = {1: [b"\x01", b"\x02"]}
    assert diff_outputs([1], a, {1: [b"\x01", b"\x02"]}) == []
    assert diff_outputs([1], a, {1: [b"\x01"]}) == ["port 1 frame #2: BMv2 02, p4sim (none)"]


def test_ternary_and_lpm_from_written_digits():
    assert _ternary("0x1*") == "0x10&&&0xf0"
    assert _ternary("0b1*0") == "0b100&&&0b101"
    # p4sim's STF: an explicit mask is kept, a decimal value is exact over the key's width
    assert _ternary("0x30&&&0xf0") == "0x30&&&0xf0"
    assert _ternary("7", 8) == "7&&&0xff"
    assert _lpm("0x0a01****") == "0x0a010000/16"
    assert _lpm("10.0.0.0/8") == "10.0.0.0/8"


def one_table_program(tmp_path, **arrays) -> Bmv2Program:
    """A BMv2 JSON of one exact table I.t (key h.k, action a) and the extern arrays given."""
    config = {
        "actions": [{"id": 0, "name": "a", "runtime_data": []}],
        "pipelines": [
            {
                "tables": [
                    {
                        "name": "I.t",
                        "key": [{"name": "h.k", "match_type": "exact", "target": ["h", "k"]}],
                        "match_type": "exact",
                        "action_ids": [0],
                    }
                ]
            }
        ],
        "headers": [{"name": "h", "header_type": "h_t"}],
        "header_types": [{"name": "h_t", "fields": [["k", 8, False]]}],
        **arrays,
    }
    (tmp_path / "p.json").write_text(json.dumps(config))
    return Bmv2Program(tmp_path / "p.json")


def test_meter_config_as_meter_set_rates(tmp_path):
    """STF rates are per second, simple_switch_CLI's per microsecond; a direct meter is set
    through the handle of its table entry (0, 1, ... in the order entries were added)."""
    program = one_table_program(
        tmp_path,
        meter_arrays=[
            {"name": "I.m", "is_direct": False},
            {"name": "I.dm", "is_direct": True, "binding": "I.t"},
        ],
    )
    s = script(
        tmp_path,
        "add t h.k:1 a()\nadd t h.k:2 a()\nmeter_config m 3 1000 10 2000000 20\n"
        "direct_meter_config t h.k:2 5 1 7 2\n",
    )
    add1, add2, indirect, direct = s.commands
    assert program.table_add(add1) == "table_add I.t a 1 =>"
    assert program.table_add(add2) == "table_add I.t a 2 =>"
    assert program.meter_set_rates(indirect) == "meter_set_rates I.m 3 0.001:10 2.0:20"
    assert program.meter_set_rates(direct) == "meter_set_rates I.dm 1 5e-06:1 7e-06:2"
    missing = script(tmp_path, "direct_meter_config t h.k:9 5 1 7 2\n").commands[0]
    with pytest.raises(Bmv2Error, match="no such entry"):
        program.meter_set_rates(missing)


def test_state_checks_read_through_simple_switch_cli(tmp_path):
    """Register and counter checks become simple_switch_CLI reads by full name (a direct
    counter's index: its entry's handle), their replies are judged as p4sim judges its own
    reads, and a check the runner cannot read is refused, not left out."""
    program = one_table_program(
        tmp_path,
        counter_arrays=[
            {"name": "I.hits", "is_direct": False},
            {"name": "I.per_entry", "is_direct": True, "binding": "I.t"},
        ],
        register_arrays=[{"name": "cells", "bitwidth": 8}],
    )
    s = script(
        tmp_path,
        "add t h.k:1 a()\nadd t h.k:2 a()\ncheck_counter hits(3) packets == 2\n"
        "counter_check hits 3 packets 2 bytes 18\nregister_check cells 1 0x5\n"
        "direct_counter_check t h.k:2 packets 1\n",
    )
    add1, add2, p4c_form, ours, register, direct = s.commands
    for add in (add1, add2):
        program.table_add(add)
    reads = [program.state_read(read_state_check(c)) for c in (p4c_form, ours, register, direct)]
    assert reads == [
        "counter_read I.hits 3",
        "counter_read I.hits 3",
        "register_read cells 1",
        "counter_read I.per_entry 1",
    ]
    counts = "RuntimeCmd: I.hits[3]= (18 bytes, 2 packets)\nRuntimeCmd: "
    check = read_state_check(ours)
    assert judge_state(check, _state_values(check, counts)) == []
    check = read_state_check(register)
    assert judge_state(check, _state_values(check, "RuntimeCmd: cells[1]= 4\n")) == [
        "register cells[1] = 0x4, expected == 0x5"
    ]
    with pytest.raises(Bmv2Error, match="printed no value"):
        _state_values(check, "RuntimeCmd: Error: Invalid register name (cells)\n")
    missing = script(tmp_path, "direct_counter_check t h.k:9 packets 1\n").commands[0]
    with pytest.raises(Bmv2Error, match="no such entry"):
        program.state_read(read_state_check(missing))


@pytest.mark.parametrize("target", ["bmv2"] if "bmv2" in cp_bmv2.suite_targets() else [])
def test_settle_waits_for_a_switch_that_cannot_run(tmp_path, target):
    """A switch that has logged every frame but cannot run (stopped here; starved by the
    scheduler on a loaded machine) may still hold frames between its threads: settle() must
    not take its silent log for idle, and must return once it runs again."""
    compiled = compile_p4c(Path(__file__).parent / "stf" / "arith.p4", tmp_path / "p4c")
    assert compiled.ok, compiled.message
    (tmp_path / "run").mkdir()
    switch = Bmv2Switch(compiled.json_path, [0, 1], [0], tmp_path / "run")
    frame = bytes(range(64))
    try:
        switch.send(0, frame)
        switch.settle()
        switch.send(0, frame)
        deadline = time.monotonic() + 30
        while switch.log.read_bytes().count(b"Processing packet received") < 2:
            assert time.monotonic() < deadline, "the switch never took the second frame"
            time.sleep(0.01)
        os.kill(switch.proc.pid, signal.SIGSTOP)
        settled = threading.Event()
        waiter = threading.Thread(target=lambda: (switch.settle(), settled.set()))
        waiter.start()
        try:
            assert not settled.wait(1.0), "settle() returned while the switch could not run"
        finally:
            os.kill(switch.proc.pid, signal.SIGCONT)
        waiter.join(30)
        assert settled.is_set(), "settle() did not return once the switch ran again"
    finally:
        switch.stop()


def what_a_worker_logs(n: int) -> tuple[int, bool, bool]:
    """(n, whether a p4sim warning reaches the root logger, whether another one does)."""
    p4sim_log, other_log = logging.getLogger("p4sim.engine"), logging.getLogger("h3.other")
    return (
        n,
        p4sim_log.isEnabledFor(logging.WARNING) and logging.getLogger("p4sim").propagate,
        other_log.isEnabledFor(logging.WARNING),
    )


@pytest.fixture
def restore_logging():
    p4sim_log = logging.getLogger("p4sim")
    handlers = list(p4sim_log.handlers)
    yield
    logging.disable(logging.NOTSET)
    p4sim_log.propagate = True
    p4sim_log.handlers[:] = handlers


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    "initializer, p4sim_heard, others_heard",
    [(quiet_p4sim_log, False, True), (silence_logging, False, False)],
)
def test_the_pool_keeps_order_and_quiets_each_worker_as_asked(
    jobs, initializer, p4sim_heard, others_heard, restore_logging
):
    """pktdiff and progdiff quiet p4sim's log only; differential silences every logger."""
    results = list(run_parallel(what_a_worker_logs, [(n,) for n in range(6)], jobs, initializer))
    assert results == [(n, p4sim_heard, others_heard) for n in range(6)]


def test_differential_silences_every_logger_and_pktdiff_only_p4sims(restore_logging):
    from p4sim.conformance import differential, pktdiff

    list(pktdiff.run_all([], 1, 1.0, 8, True, 1, None))
    assert logging.getLogger("h3.other").isEnabledFor(logging.WARNING)
    assert not logging.getLogger("p4sim").propagate
    list(differential.run_all([], 1))
    assert not logging.getLogger("h3.other").isEnabledFor(logging.CRITICAL)

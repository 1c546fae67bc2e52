"""dccommon.jsonlines: reading the stats the agent, linkem, the flows and the control daemon
write while they run.

Run: .venv/bin/pytest -q experiments/tests/test_exp_jsonlines.py
"""

from dccommon.jsonlines import read_json_lines
from experiments.run.runner import stats_rows


def test_a_file_not_yet_written_has_no_records(tmp_path):
    assert read_json_lines(tmp_path / "stats.jsonl") == []


def test_a_line_cut_short_by_a_kill_is_passed_over(tmp_path):
    path = tmp_path / "stats.jsonl"
    path.write_bytes(b'{"ts_ms": 100, "rx": 1}\n{"ts_ms": 200, "rx": 2}\n{"ts_ms": 300, "r')
    assert read_json_lines(path) == [{"ts_ms": 100, "rx": 1}, {"ts_ms": 200, "rx": 2}]


def test_bytes_that_are_not_utf8_spoil_only_their_own_line(tmp_path):
    path = tmp_path / "stats.jsonl"
    path.write_bytes(b'{"a": 1}\n\xff\xfe{\n{"a": 2}\n')
    assert read_json_lines(path) == [{"a": 1}, {"a": 2}]


def test_the_runner_turns_a_half_written_stats_file_into_rows(tmp_path):
    path = tmp_path / "agent.jsonl"
    path.write_text('{"ts_ms": 1500, "delivered": 7}\n{"ts_ms": 16')
    assert stats_rows(path, "agent", "dc", t0=1.0) == [(0.5, "agent", "dc", "delivered", 7)]

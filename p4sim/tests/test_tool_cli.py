"""The command-line rules of p4sim's tools (p4sim/tool.py, docs/cli.md): `PROG: error:` lines
and exit codes, `--json` on stdout with the old `--json FILE` still working, and the
durations renamed to `--duration-s` with the old names kept for one release.

Run: .venv/bin/pytest -q p4sim/tests/test_tool_cli.py
"""

import argparse
import json
import shutil

import pytest

from p4sim import bench, coverage, fuzz
from p4sim.conformance import differential, pktdiff
from p4sim.conformance.differential import DEFAULT_SAMPLES
from p4sim.tool import ToolError, add_json_option, run, write_json


def failing(exc):
    def main(argv):
        raise exc

    return main


def test_errors_are_one_line_with_the_exit_code_of_their_kind(capsys):
    assert run("tool", failing(ToolError("no samples directory x", exit_code=2))) == 2
    assert capsys.readouterr().err == "tool: error: no samples directory x\n"
    assert run("tool", failing(ToolError("p4c crashed"))) == 1
    assert capsys.readouterr().err == "tool: error: p4c crashed\n"
    assert run("tool", failing(KeyboardInterrupt())) == 130
    assert run("tool", lambda argv: 0) == 0


def test_json_is_a_flag_and_the_old_form_takes_a_file():
    parser = argparse.ArgumentParser()
    add_json_option(parser, "results")
    assert parser.parse_args([]).json is None
    assert parser.parse_args(["--json"]).json == "-"
    assert parser.parse_args(["--json", "out.json"]).json == "out.json"


@pytest.mark.parametrize(
    "path,reason",
    [
        ("{tmp}/missing/r.json", "its folder {tmp}/missing does not exist"),
        ("{tmp}", "is a directory (expected a file name)"),
    ],
)
def test_the_old_json_file_is_checked_before_the_work(path, reason, tmp_path, capsys):
    """`--json FILE` of a typo'd folder is refused at parse time (exit 2), not after the
    minutes a coverage or differential run takes."""
    parser = argparse.ArgumentParser(prog="tool")
    add_json_option(parser, "results")
    path = path.format(tmp=tmp_path)
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--json", path])
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"tool: error: argument --json: {path}: {reason.format(tmp=tmp_path)}"


def test_coverage_with_a_bad_json_file_does_no_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(coverage, "measure", failing(AssertionError("no program is compiled")))
    argv = ["--samples", str(tmp_path), "--json", str(tmp_path / "no" / "r.json")]
    with pytest.raises(SystemExit) as info:
        coverage.main(argv)
    assert info.value.code == 2 and "its folder" in capsys.readouterr().err


def test_json_goes_to_stdout_or_with_a_warning_to_the_old_file(capsys, tmp_path):
    write_json("tool", [{"a": 1}], "-")
    out = capsys.readouterr()
    assert json.loads(out.out) == [{"a": 1}] and out.err == ""
    target = tmp_path / "r.json"
    write_json("tool", [{"a": 2}], str(target))
    out = capsys.readouterr()
    assert json.loads(target.read_text()) == [{"a": 2}] and out.out == ""
    assert out.err.startswith("tool: warning: --json FILE is deprecated; use --json")
    with pytest.raises(ToolError, match="cannot write"):
        write_json("tool", [], str(tmp_path / "missing" / "r.json"))


def test_coverage_json_prints_the_verdicts_to_stdout_and_the_table_to_stderr(capsys, tmp_path):
    """Through the real p4c-bm2-ss, on one of p4c's samples."""
    shutil.copy(DEFAULT_SAMPLES / "issue1566-bmv2.p4", tmp_path)
    assert coverage.main(["--samples", str(tmp_path), "-j", "1", "--json"]) == 0
    out = capsys.readouterr()
    verdicts = json.loads(out.out)
    assert [v["name"] for v in verdicts] == ["issue1566-bmv2"]
    assert verdicts[0]["p4c_accepts"] is True and verdicts[0]["p4sim"] == "accepts"
    assert "p4sim accepts 1 of the 1" in out.err


def test_coverage_refuses_a_missing_samples_directory(capsys, tmp_path):
    assert run(coverage.PROG, coverage.main, ["--samples", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("python -m p4sim.coverage: error: no samples")


def test_fuzz_duration_is_in_seconds_and_the_old_name_still_works(capsys, monkeypatch):
    budgets = []
    monkeypatch.setattr(fuzz, "fuzz_p4", lambda seconds, seed: budgets.append(seconds) or 0)
    assert fuzz.main(["p4", "--duration-s", "2.5"]) == 0
    assert fuzz.main(["p4", "--seconds", "4"]) == 0
    assert budgets == [2.5, 4.0]
    assert "--seconds is deprecated; use --duration-s" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        fuzz.main(["p4", "--duration-s", "-1"])
    assert info.value.code == 2
    assert "duration '-1' must be a number above 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "tool,argv,message",
    [
        (coverage, ["-j", "١٢"], "jobs '١٢' is not a whole number (allowed 1..64)"),
        (coverage, ["-j", "0"], "jobs 0 is out of range (allowed 1..64)"),
        (fuzz, ["p4", "--seed", "1_000"], "seed '1_000' is not a whole number (allowed 0..2^64-1)"),
        (fuzz, ["p4", "--seed", "-1"], "seed -1 is out of range (allowed 0..2^64-1)"),
        (bench, ["--frame-size", " 100 "], "--frame-size ' 100 ' is not a whole number"),
        (bench, ["--frame-size", "9000"], "--frame-size 9000 is out of range (allowed 64..1500)"),
        (bench, ["--window", "0"], "--window 0 is out of range (allowed 1..65536)"),
        (bench, ["--latency-samples", "-5"], "--latency-samples -5 is out of range"),
        (pktdiff, ["--packets", "-3"], "packets -3 is out of range (allowed 1..100000)"),
        (pktdiff, ["--budget-s", "nan"], "budget 'nan' must be a number from 0 to 3600"),
        (pktdiff, ["--seed", "１"], "seed '１' is not a whole number"),
        (pktdiff, ["-j", "-2"], "jobs -2 is out of range (allowed 1..64)"),
        (differential, ["-j", "٣"], "jobs '٣' is not a whole number (allowed 1..64)"),
        (differential, ["--goal", "150"], "goal '150' must be a number from 0 to 100"),
    ],
)
def test_the_tools_numbers_are_ascii_and_in_range(tool, argv, message, capsys):
    """Every count, seed and job number goes through the project's one number reader
    (dccommon.cliargs): Unicode digits, '1_000', padding and negative counts are refused
    at parse time with the allowed range (Python's int() took them all)."""
    with pytest.raises(SystemExit) as info:
        tool.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: argument" in err and message in err, err

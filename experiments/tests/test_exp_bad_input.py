"""dcexp under bad input: every bad option, file or scenario value is refused before the first
run with one line naming what is allowed (exit 2 for usage and scenario errors), never a
traceback. The table runs `main()` in-process; two entries also run the real console script.

Run: .venv/bin/pytest -q experiments/tests/test_exp_bad_input.py
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.cli import build_parser
from experiments.cli import main as dcexp
from experiments.flows import MB
from experiments.run.linkspec import trace_mean_mbit
from experiments.run.scenario import MAX_SIZE_MB

DCEXP = str(Path(sys.executable).parent / "dcexp")
GOOD = """name: t
links: {both: {rate_mbit: 20, delay_ms: 10}}
flows: [{size_mb: 1}]
"""


def scenario(**lines: str) -> bytes:
    """GOOD with extra top-level YAML lines."""
    return (GOOD + "".join(f"{k}: {v}\n" for k, v in lines.items())).encode()


# (argv with {s} for the scenario file and {tmp} for a scratch dir, scenario bytes,
#  expected exit code, text of the one error line)
TABLE = [
    # options
    (["run", "{s}", "--reps", "0"], GOOD, 2, "repetitions 0 is out of range (allowed 1..1000)"),
    (["run", "{s}", "--reps", "x"], GOOD, 2, "repetitions 'x' is not a whole number"),
    (["run", "{s}", "--timeout-s", "-5"], GOOD, 2, "'-5' must be a number from 1 to 86400"),
    (["run", "{s}", "--timeout-s", "nan"], GOOD, 2, "'nan' must be a number from 1 to 86400"),
    (["run", "{s}", "--timeout-s", "1e9"], GOOD, 2, "'1e9' must be a number from 1 to 86400"),
    (["run", "{s}", "--target", "tofino"], GOOD, 2, "allowed are p4sim, bmv2, remote:FILE.yaml"),
    (["run", "{s}", "--link", "tc"], GOOD, 2, "invalid choice: 'tc' (choose from"),
    (["run", "{s}", "--variant", "quic"], GOOD, 2, "not in this scenario; its variants:"),
    (["run", "{s}", "--out", "{tmp}/file"], GOOD, 2, "exists and is not a directory"),
    (["run", "{s}", "--out", "{tmp}/file/sub"], GOOD, 2, "cannot create the directory"),
    (["campaign", "{tmp}", "--out", "{tmp}/file"], GOOD, 2, "file: exists and is not a directory"),
    (["frobnicate"], GOOD, 2, "invalid choice: 'frobnicate'"),
    (["validate"], GOOD, 2, "the following arguments are required: scenarios"),
    (["report", "{tmp}"], GOOD, 1, "holds no runs (expected"),
    # files
    (["validate", "{tmp}/none.yaml"], GOOD, 2, "cannot read scenario"),
    (["validate", "{s}"], GOOD.encode() + b"# caf\xe9\n", 2, "s.yaml:4:6: byte 0xe9 is not UTF-8"),
    (["run", "{s}"], b"name: t\xff\n", 2, "s.yaml:1:8: byte 0xff is not UTF-8"),
    (["validate", "{s}"], "\ufeffname: t\n".encode("utf-16"), 2, "byte 0xff is not UTF-8"),
    (["validate", "{s}"], b"name: [t\n", 2, "not valid YAML: while parsing"),
    (["validate", "{s}"], GOOD.encode() + b"# \x00\n", 2, "s.yaml:4:3: character U+0000 is not"),
    # YAML 1.1 read these as 90 and 1000 without a word
    (["validate", "{s}"], GOOD.replace("10}", "1:30}"), 2, "s.yaml:2:41: '1:30' is a base-60"),
    (["validate", "{s}"], GOOD.replace("size_mb: 1", "size_mb: 1_000"), 2, "'1_000' is a number"),
    (["run", "{s}"], b"name: t\x1b[2J\n", 2, "s.yaml:1:8: character U+001B is not allowed"),
    (["validate", "{s}"], b"", 2, "expected a mapping with keys"),
    (["validate", "{s}"], b"- 1\n", 2, "expected a mapping with keys"),
    # values, in the file and at every sweep point (the P4 program's and controller's limits)
    (["validate", "{s}"], scenario(dc="{batch: 0}"), 2, "dc.batch: 0 is out of range 1..65535"),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: dc.batch, values: [10, 70000]}"),
        2,
        "dc.batch at sweep value 70000: 70000 is out of range 1..65535",
    ),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: dc.batch, values: [0, 10]}"),
        2,
        "dc.batch at sweep value 0: 0 is out of range 1..65535",
    ),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: dc.dup, values: [true, maybe]}"),
        2,
        "dc.dup at sweep value 'maybe': expected true or false",
    ),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: t_reordering_ms, values: [10, 5000]}"),
        2,
        "t_reordering_ms at sweep value 5000: 5000 is out of range 0..3000",
    ),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: flows.size_mb, values: [1, 1.0e+12]}"),
        2,
        "size_mb: 1000000000000.0 is out of range 0.001..100000",
    ),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: links.a.loss, values: [0, 2]}"),
        2,
        "loss: 2 is out of range 0..1",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1.0e+12}]\n",
        2,
        "size_mb: 1000000000000.0 is out of range 0.001..100000",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1e12}]\n",
        2,
        "got '1e12' (YAML reads an exponent as a number only with a dot and a sign",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{duration_s: 1.0e+9}]\n",
        2,
        "duration_s: 1000000000.0 is out of range 0.1..86400",
    ),
    (["validate", "{s}"], scenario(repetitions="5000"), 2, "5000 is out of range 1..1000"),
    (["validate", "{s}"], scenario(seed="-1"), 2, "seed: -1 is out of range 0..4294967295"),
    (["validate", "{s}"], scenario(timeout_s="0"), 2, "timeout_s: 0 is out of range 1..86400"),
    (["validate", "{s}"], scenario(dc="{ratio: '2:1'}"), 2, "does not fit dc.batch 100"),
    (
        ["validate", "{s}"],
        scenario(events="[{at_s: 1, dc: {batch: 70000}}]"),
        2,
        "events[0].dc.batch: 70000 is out of range 1..65535",
    ),
    (["run", "{s}", "--target", "remote:{tmp}/none.yaml"], GOOD, 2, "none.yaml: cannot read it"),
    (["run", "{s}", "--target", "remote:{s}"], GOOD, 2, "unknown keys ['flows', 'links', 'name']"),
    (["run", "{s}", "--address", "auto"], GOOD, 2, "--address is for --executor ray"),
    (["run", "{s}", "--executor", "slurm"], GOOD, 2, "invalid choice: 'slurm' (choose from"),
    (["run", "{s}", "--executor", "ray", "--address", "127.0.0.1:1"], GOOD, 2, "no Ray cluster"),
    (["run", "{s}", "--executor", "ray", "--address", "nohost"], GOOD, 2, "expected auto, HOST:"),
    # paths that are no regular file, or past the OS limits
    (["validate", "{tmp}"], GOOD, 2, ": is a directory (expected a regular file)"),
    (["validate", "/dev/null"], GOOD, 2, "/dev/null: is not a regular file (a character device)"),
    (["validate", "{tmp}/" + "n" * 300], GOOD, 2, "name too long (a file name has at most 255"),
    (["run", "{s}", "--target", "remote:{tmp}"], GOOD, 2, "is a directory"),
    (["report", "{tmp}/" + "n" * 300], GOOD, 2, "name too long (a file name has at most 255"),
    (["campaign", "{tmp}/" + "d/" * 2100], GOOD, 2, "name too long"),
    (["campaign", "{tmp}/file"], GOOD, 2, "file: is not a directory"),
    (["report", "{tmp}/no\rdir"], GOOD, 2, "no\\rdir: no such directory"),
    (["run", "{s}", "--variant", "a\nb"], GOOD, 2, "--variant 'a\\nb': not in this scenario"),
    # one YAML reader: a duplicate key is refused with file:line:col
    (
        ["validate", "{s}"],
        GOOD + "name: u\n",
        2,
        "s.yaml:4:1: duplicate key 'name' (first at line 1)",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20, rate_mbit: 30}}\nflows: [{size_mb: 1}]\n",
        2,
        "s.yaml:2:31: duplicate key 'rate_mbit'",
    ),
    # names: printable and bounded
    (
        ["validate", "{s}"],
        b'name: "t\\nu"\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1}]\n',
        2,
        "holds a control or non-printable character",
    ),
    (
        ["validate", "{s}"],
        b"name: " + b"t" * 65 + b"\nlinks: {both: {rate_mbit: 20}}\nflows: [{size_mb: 1}]\n",
        2,
        "must be 1 to 64 characters",
    ),
    # events that could never take effect: at or after the end of the run
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{duration_s: 10}]\n"
        + b"events: [{at_s: 10, link: a, set: {loss: 1}}]\n",
        2,
        "events[0].at_s: 10 is at or after the end of the run (10 s); allowed 0 <= at_s < 10",
    ),
    (
        ["validate", "{s}"],
        scenario(timeout_s="60", events="[{at_s: 90, dc: {batch: 10}}]"),
        2,
        "events[0].at_s: 90 is at or after the end of the run (60 s)",
    ),
    # not-a-number and infinity (YAML's .nan, .inf), and numbers written as text
    (["validate", "{s}"], GOOD.replace("20", ".nan"), 2, "rate_mbit: nan is not a finite number"),
    (
        ["validate", "{s}"],
        GOOD.replace("rate_mbit: 20", "rate_mbit: 20, queue_pkts: .inf"),
        2,
        "queue_pkts: inf is not a finite number (allowed >= 1)",
    ),
    (
        ["validate", "{s}"],
        scenario(timeout_s=".inf"),
        2,
        "inf is not a finite number (allowed 1..86",
    ),
    (
        ["validate", "{s}"],
        GOOD.replace("20", '"20"'),
        2,
        "got '20' (a number in quotes is text: write it without quotes)",
    ),
    # unknown keys: the near miss is named
    (
        ["validate", "{s}"],
        GOOD.replace("delay_ms", "dealy_ms"),
        2,
        "unknown key 'dealy_ms' (did you mean 'delay_ms'?); allowed keys: burst_bytes",
    ),
    (["validate", "{s}"], scenario(repetitons="2"), 2, "(did you mean 'repetitions'?)"),
    (["validate", "{s}"], b"", 2, "got nothing (an empty file or value)"),
    (["validate", "{s}"], b"just text\n", 2, "with keys control, dc, description"),
    (["validate", "{s}"], scenario(description="[1, 2]"), 2, "description: expected text, got"),
    # YAML standing for a huge or endless tree: refused, its value never echoed in full
    (
        ["validate", "{s}"],
        scenario(description="&d [*d]"),
        2,
        "s.yaml:4:14: an alias refers to a node that contains it",
    ),
    (
        ["validate", "{s}"],
        GOOD.encode()
        + b"".join(
            b"x%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1) if i else b"1"] * 10))
            for i in range(7)
        ),
        2,
        "aliases expand the document past 1,000,000 values",
    ),
    (["validate", "{s}"], scenario(figure="[" + "1, " * 500 + "1]"), 2, "[1, 1, 1, 1, 1, 1, 1,"),
    # sweep points name the runs: one name, one point; profiles checked unapplied; traces
    (
        ["validate", "{s}"],
        scenario(sweep="{param: dc.batch, values: [10, 20, 10]}"),
        2,
        "sweep.values: 10 is given twice (a point runs once",
    ),
    (
        ["validate", "{s}"],
        scenario(quick="{flow.0.size_mb: 0.5}"),
        2,
        "quick: 'flow.0.size_mb' does not start with a top-level key (did you mean 'flows'?)",
    ),
    (
        ["validate", "{s}"],
        GOOD.replace("rate_mbit: 20", "trace: /dev/zero"),
        2,
        "trace: '/dev/zero' is a directory or a special file (expected a Mahimahi trace file)",
    ),
    # a value that starts with '-': its own check speaks, not argparse
    (["run", "{s}", "--reps", "-1x"], GOOD, 2, "repetitions '-1x' is not a whole number"),
    (["run", "{s}", "--timeout-s", "-1e3"], GOOD, 2, "'-1e3' must be a number from 1 to 86400"),
    # a flow's index in ASCII digits, one spelling each (int() reads '０' and '00' as 0 too)
    (["validate", "{s}"], scenario(variants="[{flows.０.kind: tcp}]"), 2, "unknown key 'flows.０"),
    (["validate", "{s}"], scenario(variants="[{flows.00.kind: tcp}]"), 2, "unknown key 'flows.00"),
    (
        ["validate", "{s}"],
        scenario(sweep="{param: flows.０.cc, values: [cubic, bbr]}"),
        2,
        "'flows.０.cc' is not sweepable",
    ),
    # variants name their runs: two of one name would be one run
    (
        ["validate", "{s}"],
        scenario(variants="[{kind: tcp}, {kind: tcp, start_s: 1}]"),
        2,
        "variants[0] and variants[1] are both named 'tcp' (a variant's runs are named by its",
    ),
    (
        ["validate", "{s}"],
        scenario(variants="[{label: a, kind: tcp}, {label: a, kind: aioquic}]"),
        2,
        "variants[0] and variants[1] are both named 'a'",
    ),
    (
        ["validate", "{s}"],
        scenario(variants="[{label: [a]}]"),
        2,
        "label: expected text, got a list",
    ),
    (["validate", "{s}"], scenario(variants="[{label: ''}]"), 2, "label '' must be 1 to 64 char"),
    (["validate", "{s}"], scenario(dc="{ratio: '９:１'}"), 2, "ratio must be 'A:B'"),
    # multipath knobs: an empty or falsy scheduler is no default, a path count is whole
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{kind: mpquic, size_mb: 1, scheduler: ''}]\n",
        2,
        "scheduler: '' is not one of minrtt, roundrobin, redundant",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{kind: mptcp, size_mb: 1, scheduler: 0}]\n",
        2,
        "scheduler: 0 is not offered by this kernel",
    ),
    (
        ["validate", "{s}"],
        b"name: t\nlinks: {both: {rate_mbit: 20}}\nflows: [{kind: mpquic, size_mb: 1, paths: true}]\n",
        2,
        "paths: True is not one of 1, 2 (a whole number of paths)",
    ),
    # control knobs no run's policy reads (a baseline point beside the loops may share them)
    (
        ["validate", "{s}"],
        scenario(control="{policy: capacity, gain: 2}"),
        2,
        "control.gain: applies to policy delay only, and no run of this study has one (polic",
    ),
    (
        ["validate", "{s}"],
        scenario(control="{dup: true}", sweep="{param: control.policy, values: [none, delay]}"),
        2,
        "control.dup: applies to policy failover only, and no run of this study has one",
    ),
    (
        ["validate", "{s}"],
        scenario(control="{policy: capacity, alpha: 0}"),
        2,
        "control.alpha: must be above 0 (0 would never let a report move the estimates)",
    ),
    (["run", "{s}", "--variant", ""], GOOD, 2, "--variant '': not in this scenario"),
    (
        ["run", "{s}", "--executor", "ray", "--address", "127.0.0.1:１"],
        GOOD,
        2,
        "--address 127.0.0.1:１: expected auto, HOST:PORT",
    ),
]


def _prepare(argv, content, tmp_path: Path) -> list[str]:
    (tmp_path / "s.yaml").write_bytes(content.encode() if isinstance(content, str) else content)
    (tmp_path / "file").write_text("not a directory\n")
    return [a.format(s=tmp_path / "s.yaml", tmp=tmp_path) for a in argv]


def _error_lines(err: str) -> list[str]:
    """stderr without argparse's usage lines."""
    lines = err.splitlines()
    while lines and (lines[0].startswith("usage:") or lines[0].startswith(" ")):
        lines.pop(0)
    return lines


@pytest.mark.parametrize("argv,content,code,message", TABLE, ids=[e[3] for e in TABLE])
def test_bad_input_is_refused_in_one_line(argv, content, code, message, tmp_path, capsys):
    argv = _prepare(argv, content, tmp_path)
    try:
        got = dcexp(argv)
    except SystemExit as exc:  # argparse
        got = exc.code
    err = capsys.readouterr().err
    lines = _error_lines(err)
    assert got == code, err
    assert len(lines) == 1 and message in lines[0], err
    assert len(lines[0]) < 1000, "an error line echoes a value in full"
    assert not (tmp_path / "file" / "sub").exists()


@pytest.mark.parametrize("entry", [8, 16])
def test_the_console_script_prints_no_traceback(entry, tmp_path):
    argv, content, code, message = TABLE[entry]
    proc = subprocess.run(
        [DCEXP, *_prepare(argv, content, tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == code and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("dcexp: error: ") and message in proc.stderr


def test_run_refuses_a_payload_larger_than_the_free_disk(tmp_path, capsys):
    """Checked before the first run (and before preflight): nothing of the study starts."""
    free_mb = shutil.disk_usage(tmp_path).free / MB
    sizes = [MAX_SIZE_MB - i for i in range(int(free_mb // MAX_SIZE_MB) + 2)]
    flows = ", ".join(f"{{size_mb: {s}}}" for s in sizes)
    (tmp_path / "big.yaml").write_text(
        f"name: big\nlinks: {{both: {{rate_mbit: 20}}}}\nflows: [{flows}]\n"
    )
    out = tmp_path / "out"
    assert dcexp(["run", str(tmp_path / "big.yaml"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "dcexp: error: not enough disk space: a run of big writes" in err
    assert "lower flows.size_mb or give another --out" in err
    assert list(out.iterdir()) == []  # not even scenario.yaml


def test_help_shows_defaults_only_where_meaningful():
    parsers = [build_parser()]
    while parsers:
        p = parsers.pop()
        text = p.format_help()
        for meaningless in ("(default: None)", "(default: [])", "(default: False)"):
            assert meaningless not in text, p.prog
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
    run_help = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    assert "(default: p4sim)" in run_help and "1..1000" in run_help


@pytest.mark.parametrize(
    "content",
    [
        "\ufeff" + GOOD,  # a byte order mark (Notepad's UTF-8)
        GOOD.replace("\n", "\r\n"),  # Windows line ends
        GOOD.rstrip("\n"),  # no end of line after the last
    ],
    ids=["BOM", "CRLF", "no final newline"],
)
def test_a_scenario_saved_by_any_editor_is_read_as_written(content, tmp_path, capsys):
    (tmp_path / "s.yaml").write_bytes(content.encode())
    assert dcexp(["validate", str(tmp_path / "s.yaml")]) == 0
    assert ": ok (1 runs" in capsys.readouterr().out


def test_validate_reports_the_payload_a_run_writes(tmp_path, capsys):
    """Two flows of 30 MB share one payload file; a third of 50 MB adds its own."""
    (tmp_path / "s.yaml").write_text(
        "name: t\nlinks: {both: {rate_mbit: 20}}\n"
        "flows: [{size_mb: 30}, {size_mb: 30, client: sc-a}, {size_mb: 50, client: sc-b}]\n"
    )
    assert dcexp(["validate", str(tmp_path / "s.yaml")]) == 0
    assert capsys.readouterr().out.endswith(": ok (1 runs, 80 MB of payload files per run)\n")


def test_validate_into_a_closed_pipe_stops_quietly():
    """`dcexp validate ... | head -1`: the reader leaves early; dcexp stops with 141 (SIGPIPE's
    shell status), no BrokenPipeError traceback."""
    scenarios = sorted(Path("experiments").glob("*/*.yaml"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "validate", *map(str, scenarios)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err


def test_executor_ray_without_ray_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    """Ray is optional at run time: without it, --executor ray is refused in one line."""
    (tmp_path / "s.yaml").write_text(GOOD)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    argv = ["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), "--executor", "ray"]
    assert dcexp(argv) == 2
    lines = _error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "--executor ray needs Ray 2.60.0: run `make setup`" in lines[0]
    assert not (tmp_path / "o").exists()


TRACE_LEGS = "links: {a: {trace: t.mahi, delay_ms: 10, queue_bdp: 1}, b: {rate_mbit: 20}}\n"


@pytest.mark.parametrize(
    "trace,where,message",
    [
        ("1\n2\nx\n", "links.a", "t.mahi:3: expected a timestamp in ms (a non-negative integer)"),
        ("1\n2\n-3\n", "links.a", "t.mahi:3: expected a timestamp in ms"),
        ("5\n3\n", "links.a", "t.mahi:2: timestamps must not decrease (3 after 5)"),
        ("0\n0\n", "links.a", "needs at least one opportunity and a last timestamp > 0 ms"),
        ("# nothing\n", "links.a", "needs at least one opportunity"),
        ("1\n2 3\n", "events[0].set", "t.mahi:2: expected a timestamp in ms"),
        # fgets read up to the NUL: "2" and the rest of the line was lost
        ("1\n2\x003\n", "links.a", "t.mahi:2: holds a NUL byte (expected one timestamp"),
        # fgets cut a long line into two: the first read as timestamp 0
        ("1\n" + "0" * 200 + "2\n", "links.a", "t.mahi:2: longer than 127 characters"),
        ("1\n" + " " * 200 + "2\n3\n", "links.a", "t.mahi:2: longer than 127 characters"),
    ],
)
def test_validate_reads_a_trace_as_the_run_does(trace, where, message, tmp_path, capsys):
    """A trace's content is read at validate, by linkem's own parser (the one a run uses,
    `linkem --check-trace`), and its bad line named; a live change to a trace too."""
    (tmp_path / "t.mahi").write_text(trace)
    (tmp_path / "ok.mahi").write_text("1\n2\n")
    legs = TRACE_LEGS
    events = ""
    if where.startswith("events"):  # the leg is a good trace, the live change a bad one
        legs = legs.replace("t.mahi", "ok.mahi")
        events = "events: [{at_s: 1, link: a, set: {trace: t.mahi}}]\n"
    (tmp_path / "s.yaml").write_text(f"name: t\n{legs}flows: [{{size_mb: 1}}]\n{events}")
    assert dcexp(["validate", str(tmp_path / "s.yaml")]) == 2
    lines = _error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(f"dcexp: error: {where}: trace="), lines
    assert message in lines[0]


@pytest.mark.parametrize(
    "trace",
    [
        "# LTE-like\n\n 1\r\n2 \n",
        "\ufeff1\n2\n",  # a byte order mark, as some editors save UTF-8
        "1\n2",  # no end of line after the last: still a line
        "# " + "long comment " * 20 + "\n1\n2\n",
    ],
)
def test_a_trace_linkem_takes_passes_validate(trace, tmp_path, capsys):
    """Comments, blank lines, CRLF, a BOM and spaces are linkem's format too: one parser, one
    verdict (queue_bdp resolves from the same reading: 2 opportunities in 2 ms = 12 Mbit/s)."""
    (tmp_path / "t.mahi").write_bytes(trace.encode())
    (tmp_path / "s.yaml").write_text(f"name: t\n{TRACE_LEGS}flows: [{{size_mb: 1}}]\n")
    assert dcexp(["validate", str(tmp_path / "s.yaml")]) == 0
    assert ": ok (1 runs" in capsys.readouterr().out
    assert trace_mean_mbit(tmp_path / "t.mahi") == pytest.approx(12.0)


def test_a_baseline_beside_the_loops_may_share_their_knobs(tmp_path, capsys):
    """`none` reads no knob, but the sweep's loops do: the study is fine."""
    (tmp_path / "s.yaml").write_bytes(
        scenario(
            control="{alpha: 0.3, dup: true}",
            sweep="{param: control.policy, values: [none, capacity, failover]}",
        )
    )
    assert dcexp(["validate", str(tmp_path / "s.yaml")]) == 0
    assert ": ok (3 runs" in capsys.readouterr().out


def test_the_ray_walltime_tool_empties_only_its_own_studies(tmp_path, capsys):
    """Its --out was removed whole at start: `--out results` would have deleted every
    result. Now a file there is refused, and only the studies it times are emptied."""
    from experiments.run import raycluster

    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as info:
        raycluster.main(["s.yaml", "--out", str(tmp_path / "file")])
    assert info.value.code == 2 and "exists and is not a directory" in capsys.readouterr().err
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "old-run").write_text("")
    (tmp_path / "other-study").mkdir()
    assert raycluster._fresh(tmp_path / "local") == tmp_path / "local"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "other-study"]


@pytest.mark.parametrize("folder", ["{tmp}/none", "/etc/passwd"])
def test_the_adaptation_report_refuses_a_folder_it_cannot_read(folder, tmp_path, capsys):
    """A missing folder printed "(no runs)" and exited 0, as if the study had none."""
    from experiments.analysis import adaptation

    with pytest.raises(SystemExit) as info:
        adaptation.main([folder.format(tmp=tmp_path)])
    err = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and err.startswith("python -m experiments.analysis.adaptation")
    assert "no such directory" in err or "is not a directory" in err, err

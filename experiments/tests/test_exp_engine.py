"""Which p4sim engine a run's switch uses (experiments/run/switches.py): native for the
v1model splitter, the interpreter for the TNA one unless native is asked for, and what the
manifest records. No root needed: the switch's start is intercepted before it runs."""

from types import SimpleNamespace

import pytest

from experiments.run import switches
from experiments.run.parts import TestbedError as SwitchError  # not collected as a test
from experiments.run.runner import RunOptions, _engine

V1MODEL = {"dc": {"sn_bits": 18}, "switch": None}
TNA = {"dc": {"sn_bits": 18}, "switch": {"program": "tna"}}


def test_the_tna_splitter_runs_on_the_interpreter_unless_native_is_asked_for():
    assert switches.p4sim_engine(V1MODEL) == "native"
    assert switches.p4sim_engine(TNA) == "interp"
    assert switches.p4sim_engine(TNA, "native") == "native"  # asked: kept
    assert switches.p4sim_engine(V1MODEL, "interp") == "interp"
    with pytest.raises(SwitchError, match="--engine 'jit': allowed are native, interp"):
        switches.p4sim_engine(TNA, "jit")


def test_the_manifest_records_the_engine_used_and_what_ran_the_program():
    assert _engine(TNA, RunOptions()) == {"engine": "interp", "pipeline": "interp"}
    assert _engine(V1MODEL, RunOptions()) == {"engine": "native", "pipeline": "native"}
    asked = RunOptions(engine="native")
    assert _engine(TNA, asked) == {"engine": "native", "pipeline": "interp"}  # p4sim falls back
    assert _engine(TNA, RunOptions(target="bmv2")) == {"engine": None, "pipeline": None}


@pytest.mark.parametrize(
    "config, asked, engine",
    [(TNA, None, "interp"), (TNA, "native", "native"), (V1MODEL, None, "native")],
)
def test_the_switch_is_started_with_that_engine(monkeypatch, tmp_path, config, asked, engine):
    started = {}

    def argv(target, ifaces, grpc, cpu_port, program, p4sim_options):
        started.update(program=program, options=p4sim_options)
        return ["p4sim"]

    monkeypatch.setattr(switches.targets, "switch_argv", argv)
    monkeypatch.setattr(switches.targets, "start", lambda argv, log, popen: None)
    monkeypatch.setattr(switches.targets, "wait_serving", lambda proc, addr, log: None)
    ns = SimpleNamespace(popen=None)
    switches.start_switch("p4sim", ns, "t0", config, tmp_path, asked)
    opts = started["options"]
    assert opts[opts.index("--engine") + 1] == engine
    tna = config is TNA
    assert started["program"].name == ("dc_splitter_tna.p4" if tna else "dc_splitter.p4")

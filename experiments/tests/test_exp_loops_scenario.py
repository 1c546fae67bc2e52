"""Scenario keys of the split loops (feedback, control, dc.credit, feedback events):
validation and expansion, no root needed.

Run: .venv/bin/pytest experiments/tests/test_exp_loops_scenario.py
"""

import pytest

from experiments.run.scenario import ScenarioError, from_dict, split_is_static


def doc(**over):
    d = {
        "name": "t",
        "links": {"both": {"rate_mbit": 20, "delay_ms": 10}},
        "flows": [{"kind": "tcp", "duration_s": 2, "client": "dc"}],
    }
    d.update(over)
    return d


def test_no_loop_no_feedback():
    [run] = from_dict(doc()).runs
    assert run.config["feedback"] is None and run.config["control"]["policy"] == "none"


@pytest.mark.parametrize(
    "over", [{"control": {"policy": "capacity"}}, {"dc": {"credit": True}}], ids=["ctl", "dp"]
)
def test_a_loop_turns_the_feedback_on(over):
    [run] = from_dict(doc(**over)).runs
    assert run.config["feedback"] == {"period_ms": 10, "target_ms": 20}


def test_the_split_is_static_without_a_loop_or_a_dc_event():
    static, policy, credit, event = (
        from_dict(doc(**over)).runs[0].config
        for over in (
            {},
            {"control": {"policy": "capacity"}},
            {"dc": {"credit": True}},
            {"events": [{"at_s": 1, "dc": {"ratio": "80:20"}}]},
        )
    )
    assert split_is_static(static)
    assert not any(split_is_static(c) for c in (policy, credit, event))
    leg_event = from_dict(doc(events=[{"at_s": 1, "link": "b", "set": {"rate_mbit": 5}}]))
    assert split_is_static(leg_event.runs[0].config)  # a leg's change leaves the split alone


def test_policies_swept_per_point():
    s = from_dict(
        doc(
            sweep={
                "param": "loop",
                "values": ["static", "capacity", "dataplane"],
                "set": {
                    "control.policy": ["none", "capacity", "none"],
                    "dc.credit": [False, False, True],
                },
            }
        )
    )
    got = [
        (r.config["control"]["policy"], r.config["dc"]["credit"], r.config["feedback"])
        for r in s.runs
    ]
    fb = {"period_ms": 10, "target_ms": 20}
    assert got == [("none", False, None), ("capacity", False, fb), ("none", True, fb)]


@pytest.mark.parametrize(
    "over, needle",
    [
        ({"control": {"policy": "oracle"}}, "none, static, capacity, delay, failover"),
        ({"control": {"policy": "capacity", "alpha": 2}}, "control.alpha"),
        ({"control": {"period": 1}}, "allowed keys: alpha"),
        ({"feedback": {"period_ms": 0}}, "feedback.period_ms"),
        ({"dc": {"credit": "yes"}}, "dc.credit: expected true or false"),
        (
            {
                "control": {"policy": "capacity"},
                "events": [{"at_s": 1, "dc": {"ratio": "9:1"}}],
            },
            "dc events would fight",
        ),
        ({"events": [{"at_s": 1, "link": "a", "feedback": "off"}]}, "need the legs' feedback"),
        (
            {"feedback": {}, "events": [{"at_s": 1, "link": "a", "feedback": "mute"}]},
            "feedback: on|off",
        ),
    ],
)
def test_bad_loop_keys_are_named(over, needle):
    with pytest.raises(ScenarioError, match=needle):
        from_dict(doc(**over))


def test_feedback_event_is_kept():
    [run] = from_dict(
        doc(feedback={"period_ms": 5}, events=[{"at_s": 1, "link": "b", "feedback": "off"}])
    ).runs
    assert run.config["feedback"] == {"period_ms": 5, "target_ms": 20}
    assert run.config["events"] == [{"at_s": 1.0, "link": "b", "feedback": "off"}]


STEP = {"at_s": 1, "link": "b", "set": {"rate_mbit": 5}}


def test_events_swept_per_point_for_an_oracle_that_resplits_at_a_step():
    resplit = {"at_s": 1, "dc": {"ratio": "80:20"}}
    sweep = {
        "param": "loop",
        "values": ["static", "oracle", "capacity"],
        "set": {
            "events": [[STEP], [STEP, resplit], [STEP]],
            "control.policy": ["none", "none", "capacity"],
        },
    }
    s = from_dict(doc(events=[STEP], sweep=sweep))
    events = [r.config["events"] for r in s.runs]
    assert [len(e) for e in events] == [1, 2, 1]
    assert events[1][1] == {"at_s": 1.0, "dc": {"ratio": [80, 20]}}
    sweep["set"]["events"][2] = [STEP, resplit]  # a controller point with a dc event
    with pytest.raises(ScenarioError, match="policy capacity at sweep value 'capacity': dc event"):
        from_dict(doc(sweep=sweep))


def test_a_bad_event_in_a_swept_list_is_named_with_its_point():
    sweep = {"param": "loop", "values": ["x", "y"], "set": {"events": [[STEP], [{"at_s": 1}]]}}
    with pytest.raises(ScenarioError, match=r"events at sweep value 'y'\[0\]: give either link"):
        from_dict(doc(sweep=sweep))

"""A sender's RTT and cwnd samples from qlog `recovery:metrics_updated` events
(experiments.flows.metrics_samples), for every QUIC flow kind."""

import types

from experiments.flows import metrics_samples
from experiments.run import runner


def event(time_ms: float, **data) -> dict:
    return {"time": time_ms, "name": "recovery:metrics_updated", "data": data}


def test_an_event_logs_only_what_changed_so_a_missing_metric_adds_no_sample():
    # tquic's server logs only the metrics that changed: this one (from a real run) has no
    # smoothed_rtt and no congestion_window; it used to stop the whole study with a KeyError
    events = [
        event(10.0, smoothed_rtt=333.0, congestion_window=14720),  # before any RTT sample
        event(40.0, latest_rtt=30.5, smoothed_rtt=30.5, congestion_window=16000),
        event(4734.617, latest_rtt=246.67682, rtt_variance=0.817, bytes_in_flight=604992),
        event(4800.0, smoothed_rtt=240.0),  # a change of smoothed_rtt alone, after samples
    ]
    assert metrics_samples(events, base=2.0) == [
        (2.01, "cwnd_bytes", 14720.0),
        (2.04, "rtt_ms", 30.5),
        (2.04, "cwnd_bytes", 16000.0),
        (6.8, "rtt_ms", 240.0),
    ]


def test_no_events_no_samples():
    assert metrics_samples([], base=0.0) == []


def test_a_flow_whose_output_cannot_be_read_fails_its_run_not_the_study(tmp_path):
    """runner._collect with a flow whose samples raise (as the MPQUIC flow's did on a qlog
    event without smoothed_rtt): the error is in the run's errors, the other flow's samples
    and result are kept, and the run can still be saved (as failed)."""

    class ReadableFlow:
        def __init__(self, **spec):
            self.spec = {"kind": "tcp", "cc": "cubic", "client": "sc-a", "start_s": 0.0,
                         "size_mb": None, "duration_s": 10, **spec}  # fmt: skip
            self.ctx = types.SimpleNamespace(t0=0.0)

        def samples(self):
            return [(0.5, "rtt_ms", 20.0)]

        def result(self):
            return {"bytes": 1_250_000}

        def cleanup(self):
            pass

    class UnreadableFlow(ReadableFlow):
        def samples(self):
            raise KeyError("smoothed_rtt")

    logs = tmp_path / "logs"
    logs.mkdir()
    files = runner._RunFiles(tmp_path, logs, tmp_path / "htdocs", tmp_path / "c", tmp_path / "k")
    rec = runner._RunRecord(pins={})
    rec.flows = {"f0-dc": UnreadableFlow(kind="mpquic", client="dc"), "f1-sc-a": ReadableFlow()}
    runner._collect(types.SimpleNamespace(), files, rec)
    assert rec.errors == ["flow f0-dc: its samples could not be read: KeyError: 'smoothed_rtt'"]
    assert rec.results["f0-dc"]["bytes"] == 1_250_000  # its result is still read
    assert rec.results["f1-sc-a"]["rtt_ms_mean"] == 20.0
    assert ("flow", "f1-sc-a", "rtt_ms") in {row[1:4] for row in rec.rows}

"""The native engine's packet I/O in memory (p4sim/native/iobench.c around io.c): every frame
read from the receive ring goes through the pipeline and out of the leg the pipeline chose,
as the pipeline alone sends it; and `python -m p4sim.iobench` measures this checkout beside a
git revision, refusing a revision that does not exist in one line.

Run: .venv/bin/pytest -q p4sim/tests/test_native_iobench.py
"""

from p4sim import iobench
from p4sim.bench import DSTS, _frame, splitter_device
from p4sim.native.build import HERE as NATIVE_DIR


def test_every_frame_leaves_on_the_leg_the_pipeline_picks_as_the_pipeline_made_it():
    frame = _frame(1500, DSTS["dc-split"])
    frames = 1000  # more than a receive burst and a transmit batch, fewer than the ring
    # the splitter's own answer, frame by frame (a device of its own: the split is stateful)
    expected = {1: [], 2: []}
    device = splitter_device()
    for _ in range(frames):
        for port, out in device.process(0, frame):
            expected[port].append(out)
    assert expected[1] and expected[2]  # DC split: both legs

    variant = iobench.Variant("this checkout", NATIVE_DIR)
    variant.measure(frame, frames)  # raises unless every frame came in and went out
    assert variant.sent == {
        port: (len(outs), sum(map(len, outs)), iobench.frames_digest(outs))
        for port, outs in expected.items()
    }
    assert 0 < variant.user_ns[0] < 1e6  # a CPU time per frame, not a count


def test_the_benchmark_prints_both_variants_side_by_side(capsys):
    assert iobench.main(["--frames", "1000", "--repeats", "1", "--baseline", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "baseline HEAD" in out and "this checkout" in out
    assert "this checkout / baseline:" in out


def test_an_unknown_revision_is_one_line_naming_it(capsys):
    assert iobench.run(iobench.PROG, iobench.main, ["--baseline", "no-such-rev-x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m p4sim.iobench: error: --baseline no-such-rev-x: ")
    assert err.count("\n") == 1

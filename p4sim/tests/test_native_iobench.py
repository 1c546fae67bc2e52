"""The native engine's packet I/O in memory (p4sim/native/iobench.c around io.c): every frame
read from the receive ring goes through the pipeline and out of the leg the pipeline chose,
as the pipeline alone sends it; a frame the interface refuses as too long is lost alone; and `python -m p4sim.iobench` measures this checkout beside a
git revision, refusing a revision that does not exist in one line.

Run: .venv/bin/pytest -q p4sim/tests/test_native_iobench.py
"""

from p4sim import iobench
from p4sim.bench import DSTS, _frame, splitter_device
from p4sim.native.build import HERE as NATIVE_DIR


def outputs(frames: list[bytes], n: int) -> dict[int, list[bytes]]:
    """The splitter's own answer to `n` frames, `frames` in turn, on a device of its own (the
    split is stateful): each leg's frames in order."""
    device = splitter_device()
    out = {1: [], 2: []}
    for i in range(n):
        for port, frame in device.process(0, frames[i % len(frames)]):
            out[port].append(frame)
    return out


def sent(handed: dict[int, list[bytes]], out=None) -> dict:
    """iobench's report per leg: frames and bytes the pipeline handed to the port (dropped
    ones too, as the switch's port counters count them), the digest of those that went out."""
    out = out or handed
    return {
        port: (len(fs), sum(map(len, fs)), iobench.frames_digest(out[port]))
        for port, fs in handed.items()
    }


def test_every_frame_leaves_on_the_leg_the_pipeline_picks_as_the_pipeline_made_it():
    frame = _frame(1500, DSTS["dc-split"])
    n = 1000  # more than a receive burst and a transmit batch, fewer than the ring
    expected = outputs([frame], n)
    assert expected[1] and expected[2]  # DC split: both legs

    res = iobench.Variant("this checkout", NATIVE_DIR).run([frame], n)
    assert (res["rx"], res["tx"], res["tx_dropped"]) == (n, n, 0)
    assert res["sent"] == sent(expected)
    assert 0 < res["user_ns"] / n < 1e6  # a CPU time per frame, not a count


def test_a_frame_too_long_for_the_interface_is_lost_alone():
    """The splitter's header makes a full-size frame longer than the leg takes (EMSGSIZE):
    that frame is dropped, the frames queued behind it in the same batch still go out."""
    small, big = _frame(200, DSTS["dc-split"]), _frame(1500, DSTS["dc-split"])
    frames = [small, small, big, small]
    n = 400
    expected = outputs(frames, n)
    limit = max(len(f) for fs in expected.values() for f in fs) - 1
    kept = {port: [f for f in fs if len(f) <= limit] for port, fs in expected.items()}
    lost = sum(len(fs) - len(kept[port]) for port, fs in expected.items())
    assert lost == n // 4

    res = iobench.Variant("this checkout", NATIVE_DIR).run(frames, n, send_limit=limit)
    assert (res["rx"], res["tx"], res["tx_dropped"]) == (n, n - lost, lost)
    assert res["sent"] == sent(expected, kept)


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


# io.c with malloc failing on demand: the up-call of a frame finds no memory for its copy.
UPCALL_NOMEM_TEST = r"""
#define _GNU_SOURCE /* before the first libc header, as io.c wants it */
#include <stdlib.h>
static int fail_allocs;
static void *maybe_malloc(size_t n) { return fail_allocs ? NULL : malloc(n); }
#define malloc(n) maybe_malloc(n)
#include "io.c"
#undef malloc

/* frames queued for Python after a refused and a granted copy, and the drops counted */
int upcall_nomem(uint64_t *out)
{
	struct io *io = p4nio_new();
	uint8_t frame[60] = {0xab};
	fail_allocs = 1;
	upcall(io, 1, 64, frame, sizeof frame);
	fail_allocs = 0;
	upcall(io, 1, 64, frame, sizeof frame);
	p4nio_stats(io, out);
	uint8_t buf[64];
	uint32_t kind, port;
	int64_t n = p4nio_upcall(io, buf, sizeof buf, &kind, &port, 0);
	return (int)io->qlen * 1000 + (int)n;
}
"""


def test_an_upcall_without_memory_drops_its_frame_and_counts_it():
    """io.c's up-call when malloc fails: that frame is dropped and counted (upcalls_nomem,
    out[5]), nothing is queued for it, and the next frame goes through."""
    import ctypes

    from p4sim.native.build import build

    lib = ctypes.CDLL(str(build(UPCALL_NOMEM_TEST, runtime=("io.c", "outbuf.h"), pktio=True)))
    out = (ctypes.c_uint64 * 6)()
    # the granted frame was queued and is handed over whole (60 bytes); none is left
    assert lib.upcall_nomem(out) == 60
    assert (out[3], out[5]) == (0, 1)  # not a full queue: no memory, once

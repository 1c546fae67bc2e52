"""The conformance tools' process pool: one program per call, `jobs` at once, the results in
the programs' order as they come (differential, pktdiff and progdiff all run this way)."""

from __future__ import annotations

import logging
from concurrent.futures import ProcessPoolExecutor


def quiet_p4sim_log() -> None:
    """p4sim logs drops and assertion failures; a tool that reads the engine's own records
    (pktdiff's error handler, packets.Tracer) keeps them, but nothing reaches the report."""
    logging.getLogger("p4sim").propagate = False
    logging.getLogger("p4sim").addHandler(logging.NullHandler())


def silence_logging() -> None:
    """No log record at all: the tool's summary says what matters."""
    logging.disable(logging.CRITICAL)


def _call(job: tuple):
    fn, args = job
    return fn(*args)


def run_parallel(fn, work: list[tuple], jobs: int, initializer=quiet_p4sim_log):
    """`fn(*args)` for each `args` of `work`, in order, in `jobs` processes that each run
    `initializer` first (in this process when `jobs` is 1); `fn` is a module-level function."""
    calls = [(fn, args) for args in work]
    if jobs <= 1:
        initializer()
        yield from map(_call, calls)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=initializer) as pool:
        yield from pool.map(_call, calls)

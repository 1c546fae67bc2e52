"""Idle timeouts (P4Runtime spec, "Idle-timeout"): a table whose P4Info has
`idle_timeout_behavior: NOTIFY_CONTROL` (P4: `support_timeout = true`, TNA `idle_timeout =
true`) takes entries with an `idle_timeout_ns`. When such an entry has not been hit for that
long, the primary client gets an IdleTimeoutNotification naming it, once: again only after
the entry was hit or written (a MODIFY starts its timeout afresh). The entry stays; deleting
it is the controller's call. A Read with `time_since_last_hit` set reports, for each entry of
such a table, how long ago it was last hit (or written, if never hit since).

The engines count the hits of these tables' entries (the count a direct counter keeps, in the
entry's `packets`); a thread looks at the counts every POLL_S while such a table has entries,
so a hit, and an expiry, is seen within POLL_S. It holds the device lock only to take a
snapshot of the entries, and sleeps until the next table write while no such table has any
(an idle switch stays asleep).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from p4sim.model import TableEntry

log = logging.getLogger("p4sim.p4runtime")

POLL_S = 0.05  # how often the hit counts are read: the resolution of idle timeouts

# the entries of one table that expired: (table, entries) to put on the primary's stream;
# False when there is no primary to take them (they are then notified to the next one)
SendExpired = Callable[[object, object, list[TableEntry]], bool]


_written = threading.Event()  # a table entry was written: the pollers look again


def written() -> None:
    """A table entry was written (after the write): wake the pollers."""
    _written.set()


def arm(entry: TableEntry, timeout_ns: int) -> None:
    """An entry written (INSERT or MODIFY) with this timeout: idle from now."""
    entry.idle_timeout_ns = timeout_ns
    entry.last_hit_ns = time.monotonic_ns()
    entry.hits_seen = entry.packets
    entry.idle_notified = False


def _seen(entry: TableEntry, now: int) -> None:
    """Take a hit since the last look as a hit now."""
    hits = entry.packets
    if hits != entry.hits_seen:
        entry.hits_seen, entry.last_hit_ns, entry.idle_notified = hits, now, False


def since_last_hit(entry: TableEntry) -> int:
    """Nanoseconds since the entry was last hit (or written, if not hit since)."""
    now = time.monotonic_ns()
    _seen(entry, now)
    return max(0, now - entry.last_hit_ns)


class IdleTimeouts:
    """The thread that finds expired entries of the current pipeline and has them sent."""

    def __init__(self, current_pipeline: Callable[[], object], send: SendExpired) -> None:
        self._pipeline = current_pipeline
        self._send = send
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="p4rt-idle-timeouts", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        _written.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            _written.clear()  # before the look: a write during it wakes the next wait
            try:
                busy = self.poll()
            except Exception:  # logged; the next poll tries again
                log.exception("idle timeouts: poll failed")
                busy = True
            if busy:
                self._stop.wait(POLL_S)
            else:
                _written.wait()

    def poll(self) -> bool:
        """Look at the entries once; whether a table with idle timeouts has any."""
        pipeline = self._pipeline()
        if pipeline is None:
            return False
        index, device = pipeline.index, pipeline.device
        tables = [t for t in index.tables.values() if t.definition.support_timeout]
        if not tables:
            return False
        with device.lock:  # a snapshot: the entries are looked at without the lock
            snapshot = [(t, list(device.tables[t.definition.name].entries())) for t in tables]
        now = time.monotonic_ns()
        for table, entries in snapshot:
            expired = []
            for e in entries:
                _seen(e, now)
                due = e.idle_timeout_ns and now - e.last_hit_ns >= e.idle_timeout_ns
                if due and not e.idle_notified:
                    expired.append(e)
            if expired and self._send(index, table, expired):
                for e in expired:
                    e.idle_notified = True
        return any(entries for _, entries in snapshot)

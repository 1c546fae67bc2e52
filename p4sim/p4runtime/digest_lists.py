"""DigestLists: how the `digest()` records of configured digests become DigestList messages,
as their DigestEntry.Config asks (P4Runtime spec, DigestEntry and DigestListAck):

- records are gathered into one list until it holds `max_list_size` of them (0: no limit) or
  the first has waited `max_timeout_ns` (0: every record goes at once, in a list of its own);
- data sent, or waiting in the list being gathered, is not sent again until the list holding
  it is acknowledged (DigestListAck) or `ack_timeout_ns` has passed since it was sent
  (0: nothing is held back), so a flow that keeps hitting the same entry does not flood the
  controller.

Memory stays bounded: a list being gathered goes out once it holds MAX_DIGEST_LIST records,
whatever `max_list_size` says, and at most MAX_HELD_RECORDS records per digest are held back
waiting for an ack; a new record beyond that is dropped (counted in `dropped`, logged once).

State belongs to one DigestEntry config object of one pipeline: after a DELETE (and a new
INSERT) or a new pipeline the config is another object, and what was gathered or held for the
old one is forgotten (PI's digest manager resets a digest on DELETE too: DigestData::reset
drops the list being built and the held data). MODIFY keeps the object (digests.write_digest),
so the new values apply to what is gathered and held; `reconfigured()` after such a write
sends a list the new values make due at once (a shorter max_timeout_ns, a smaller
max_list_size) and wakes the flush thread, which waited for the old deadline.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4sim.limits import MAX_DIGEST_LIST, MAX_HELD_RECORDS
from p4sim.p4runtime.index import PipelineIndex

log = logging.getLogger("p4sim.p4runtime")

Record = tuple[int, ...]  # one digest() call's field values
# (index, digest_id, list_id, records): put one DigestList on the primary's stream; False when
# there is no primary to take it (the list is then not held waiting for an ack)
SendList = Callable[[PipelineIndex, int, int, list[Record]], bool]


@dataclass
class _Digest:
    """What one configured digest gathers and holds back."""

    index: PipelineIndex
    digest_id: int
    config: object  # the DigestEntry.Config this state belongs to (compared by identity)
    gathering: list[Record] = field(default_factory=list)
    first_ns: int = 0  # when the first record of `gathering` came
    held: dict[Record, int] = field(default_factory=dict)  # record -> list id (0: gathering)
    unacked: dict[int, tuple[int, list[Record]]] = field(default_factory=dict)  # id -> sent

    def current(self) -> bool:
        """Whether the digest is still configured with the config this state belongs to."""
        return self.index.digest_configs.get(self.digest_id) is self.config


class DigestLists:
    """Batches records into DigestLists and holds back data not yet acknowledged; `start()`
    runs the thread that sends a list whose first record has waited `max_timeout_ns`."""

    def __init__(self, send: SendList, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._send = send
        self._clock = clock
        self._digests: dict[int, _Digest] = {}
        # one count for all digests and configs, so that a late ack never names a newer list
        self._list_ids = itertools.count(1)
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.dropped = 0  # records dropped because MAX_HELD_RECORDS were held

    def start(self) -> None:
        self._thread = threading.Thread(target=self._flush_loop, name="p4rt-digests", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def add(self, index: PipelineIndex, digest_id: int, record: Record) -> None:
        """One digest() record of a digest that `index` may have configured."""
        config = index.digest_configs.get(digest_id)
        if config is None:
            return
        with self._lock:
            now = self._clock()
            state = self._state(index, digest_id, config)
            self._expire(state, now)
            holding = config.ack_timeout_ns > 0
            if holding and record in state.held:
                return  # sent or gathered already, not yet acknowledged
            if holding and len(state.held) >= MAX_HELD_RECORDS:
                self.dropped += 1
                if self.dropped == 1:
                    log.warning(
                        "digest %d: %d records wait for an ack; new ones are dropped until "
                        "lists are acknowledged or ack_timeout_ns passes",
                        digest_id,
                        MAX_HELD_RECORDS,
                    )
                return
            if not state.gathering:
                state.first_ns = now
                self._lock.notify_all()  # the flush thread waits for this list's deadline
            state.gathering.append(record)
            if holding:
                state.held[record] = 0
            if (
                config.max_timeout_ns == 0
                or 0 < config.max_list_size <= len(state.gathering)
                or len(state.gathering) >= MAX_DIGEST_LIST
            ):
                self._send_gathered(digest_id, state, now)

    def ack(self, digest_id: int, list_id: int) -> None:
        """A DigestListAck: the data of that list may be sent again. A list not sent, or
        acknowledged already, is ignored (as PI does)."""
        with self._lock:
            state = self._digests.get(digest_id)
            if state is None or list_id not in state.unacked:
                return
            _, records = state.unacked.pop(list_id)
            _release(state, list_id, records)

    def reconfigured(self) -> None:
        """DigestEntry configs were written (or the pipeline changed): forget the state of
        configs gone, send what the new values make due, and let the flush thread wait for
        the new deadlines instead of the old ones."""
        with self._lock:
            self._flush_due(self._clock())
            self._lock.notify_all()

    def flush_due(self) -> int | None:
        """Send every list whose first record has waited `max_timeout_ns` (or that holds
        `max_list_size` records, which a MODIFY may have lowered); the nanoseconds until the
        next one is due (None: none is gathering)."""
        with self._lock:
            return self._flush_due(self._clock())

    def _flush_due(self, now: int) -> int | None:
        wait = None
        for digest_id, state in list(self._digests.items()):
            if not state.current():
                del self._digests[digest_id]
                continue
            if not state.gathering:
                continue
            due = state.first_ns + state.config.max_timeout_ns
            if due <= now or 0 < state.config.max_list_size <= len(state.gathering):
                self._send_gathered(digest_id, state, now)
            else:
                wait = due - now if wait is None else min(wait, due - now)
        return wait

    def _flush_loop(self) -> None:
        with self._lock:
            while not self._closed:
                wait = self._flush_due(self._clock())
                self._lock.wait(None if wait is None else wait / 1e9)

    def _state(self, index: PipelineIndex, digest_id: int, config) -> _Digest:
        state = self._digests.get(digest_id)
        if state is None or state.index is not index or state.config is not config:
            state = _Digest(index, digest_id, config)
            self._digests[digest_id] = state
        return state

    def _expire(self, state: _Digest, now: int) -> None:
        """Release the lists sent more than ack_timeout_ns ago (oldest first)."""
        timeout = state.config.ack_timeout_ns
        for list_id, (sent_ns, records) in list(state.unacked.items()):
            if now - sent_ns < timeout:
                break
            del state.unacked[list_id]
            _release(state, list_id, records)

    def _send_gathered(self, digest_id: int, state: _Digest, now: int) -> None:
        records, state.gathering = state.gathering, []
        list_id = next(self._list_ids)
        sent = self._send(state.index, digest_id, list_id, records)
        if sent and state.config.ack_timeout_ns > 0:
            state.unacked[list_id] = (now, records)
            for record in records:
                state.held[record] = list_id
        else:  # nothing to wait for (also when a MODIFY set ack_timeout_ns 0 meanwhile)
            _release(state, 0, records)


def _release(state: _Digest, list_id: int, records: list[Record]) -> None:
    for record in records:
        if state.held.get(record) == list_id:
            del state.held[record]

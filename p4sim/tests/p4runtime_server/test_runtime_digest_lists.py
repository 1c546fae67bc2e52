"""DigestLists as DigestEntry.Config asks (P4Runtime spec, DigestEntry and DigestListAck):
batching by max_list_size and max_timeout_ns, data held back until its list is acknowledged
or ack_timeout_ns passes, memory bounded. A fake clock; no switch, no gRPC.

Run: .venv/bin/pytest -q p4sim/tests/p4runtime_server/test_runtime_digest_lists.py
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest
from p4.v1 import p4runtime_pb2

from p4sim import limits
from p4sim.p4runtime import digest_lists
from p4sim.p4runtime.digest_lists import DigestLists
from p4sim.p4runtime.digests import write_digest
from p4sim.p4runtime.errors import StatusError
from p4sim.p4runtime.index import PipelineIndex

DIGEST = 7
MS = 1_000_000
Update = p4runtime_pb2.Update
LEARN = SimpleNamespace(name="learn_t")  # the digest's definition: only its name is read


class Rig:
    """A DigestLists whose sent lists are kept as (list_id, records), on a clock the test
    moves; `primary` says whether a client takes the lists."""

    def __init__(self) -> None:
        self.now = 0
        self.sent: list[tuple[int, list]] = []
        self.primary = True
        self.index = PipelineIndex()
        self.lists = DigestLists(self._send, clock=lambda: self.now)

    def _send(self, index, digest_id, list_id, records) -> bool:
        assert index is self.index and digest_id == DIGEST
        if self.primary:
            self.sent.append((list_id, list(records)))
        return self.primary

    def configure(self, kind=Update.INSERT, **config) -> None:
        self.index.digests.setdefault(DIGEST, LEARN)
        entry = p4runtime_pb2.DigestEntry(digest_id=DIGEST)
        for name, value in config.items():
            setattr(entry.config, name, value)
        write_digest(self.index, kind, entry)

    def add(self, *tags: int) -> None:
        for tag in tags:
            self.lists.add(self.index, DIGEST, (tag,))

    def records(self) -> list[list]:
        return [records for _, records in self.sent]


@pytest.fixture
def rig():
    return Rig()


def test_nothing_is_sent_before_a_digest_entry_configures_the_digest(rig):
    rig.add(1)
    assert rig.sent == []


def test_max_timeout_0_sends_every_record_at_once_in_a_list_of_its_own(rig):
    rig.configure(max_list_size=5, max_timeout_ns=0)
    rig.add(1, 2)
    assert rig.records() == [[(1,)], [(2,)]]
    assert rig.sent[0][0] != rig.sent[1][0]  # each list its own id


def test_records_are_gathered_until_max_list_size(rig):
    rig.configure(max_list_size=3, max_timeout_ns=10 * MS)
    rig.add(1, 2)
    assert rig.sent == []
    rig.add(3, 4)
    assert rig.records() == [[(1,), (2,), (3,)]]  # 4 waits in the next list


def test_a_list_goes_once_its_first_record_waited_max_timeout_ns(rig):
    rig.configure(max_list_size=0, max_timeout_ns=10 * MS)  # 0: no size limit
    rig.add(1)
    rig.now = 4 * MS
    rig.add(2)
    assert rig.lists.flush_due() == 6 * MS  # counted from the first record
    assert rig.sent == []
    rig.now = 10 * MS
    assert rig.lists.flush_due() is None
    assert rig.records() == [[(1,), (2,)]]


def test_data_sent_is_held_back_until_its_list_is_acknowledged(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1)
    rig.add(1, 2)  # 1 again: held back
    assert rig.records() == [[(1,)], [(2,)]]
    rig.lists.ack(DIGEST, rig.sent[1][0])  # the ack of the list of 2 frees only 2
    rig.add(1, 2)
    assert rig.records()[2:] == [[(2,)]]
    rig.lists.ack(DIGEST, rig.sent[0][0])
    rig.add(1)
    assert rig.records()[3:] == [[(1,)]]


def test_data_is_sent_again_once_ack_timeout_ns_passed_without_an_ack(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=100 * MS)
    rig.add(1)
    rig.now = 99 * MS
    rig.add(1)
    assert len(rig.sent) == 1
    rig.now = 100 * MS
    rig.add(1)
    assert rig.records() == [[(1,)], [(1,)]]


def test_data_waiting_in_a_list_is_not_gathered_twice(rig):
    rig.configure(max_list_size=3, max_timeout_ns=10 * MS, ack_timeout_ns=100 * MS)
    rig.add(1, 1, 2, 3)
    assert rig.records() == [[(1,), (2,), (3,)]]


def test_ack_timeout_0_holds_nothing_back(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=0)
    rig.add(1, 1)
    assert rig.records() == [[(1,)], [(1,)]]


def test_a_list_no_client_took_is_not_held(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.primary = False
    rig.add(1)
    rig.primary = True
    rig.add(1)
    assert rig.records() == [[(1,)]]


def test_acks_of_lists_never_sent_are_ignored(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1)
    rig.lists.ack(DIGEST, 9999)
    rig.lists.ack(DIGEST + 1, rig.sent[0][0])
    rig.add(1)
    assert len(rig.sent) == 1


def test_modify_keeps_what_is_held_and_delete_forgets_it(rig):
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1)
    rig.configure(Update.MODIFY, max_list_size=1, ack_timeout_ns=2000 * MS)
    rig.add(1)
    assert len(rig.sent) == 1  # still held under the new values
    rig.configure(Update.DELETE)
    rig.add(1)
    assert len(rig.sent) == 1  # not configured: nothing
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1)
    assert rig.records() == [[(1,)], [(1,)]]


def test_a_list_sent_after_ack_timeout_became_0_leaves_nothing_held(rig):
    rig.configure(max_list_size=2, max_timeout_ns=10 * MS, ack_timeout_ns=1000 * MS)
    rig.add(1)  # gathering, held
    rig.configure(Update.MODIFY, max_list_size=2, max_timeout_ns=10 * MS, ack_timeout_ns=0)
    rig.add(2)
    rig.configure(Update.MODIFY, max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1)
    assert rig.records() == [[(1,), (2,)], [(1,)]]


def test_a_deleted_digest_drops_the_list_it_was_gathering(rig):
    rig.configure(max_list_size=0, max_timeout_ns=10 * MS)
    rig.add(1)
    rig.configure(Update.DELETE)
    rig.now = 20 * MS
    assert rig.lists.flush_due() is None
    assert rig.sent == []


def test_a_list_goes_at_the_cap_whatever_max_list_size_says(rig, monkeypatch):
    monkeypatch.setattr(digest_lists, "MAX_DIGEST_LIST", 4)
    rig.configure(max_list_size=0, max_timeout_ns=10**12)
    rig.add(1, 2, 3, 4, 5)
    assert rig.records() == [[(1,), (2,), (3,), (4,)]]


def test_records_beyond_the_held_cap_are_dropped_and_counted(rig, monkeypatch):
    monkeypatch.setattr(digest_lists, "MAX_HELD_RECORDS", 2)
    rig.configure(max_list_size=1, ack_timeout_ns=1000 * MS)
    rig.add(1, 2, 3)
    assert rig.records() == [[(1,)], [(2,)]] and rig.lists.dropped == 1
    rig.lists.ack(DIGEST, rig.sent[0][0])
    rig.add(3)
    assert rig.records()[2:] == [[(3,)]]


def test_the_caps_are_the_documented_limits():
    assert (digest_lists.MAX_DIGEST_LIST, digest_lists.MAX_HELD_RECORDS) == (
        limits.MAX_DIGEST_LIST,
        limits.MAX_HELD_RECORDS,
    )


@pytest.mark.parametrize("name", ["max_timeout_ns", "max_list_size", "ack_timeout_ns"])
def test_a_negative_config_value_is_invalid_argument_naming_it(rig, name):
    with pytest.raises(StatusError) as info:
        rig.configure(**{name: -1})
    assert info.value.code.name == "INVALID_ARGUMENT" and name in info.value.message
    assert DIGEST not in rig.index.digest_configs


def test_the_flush_thread_sends_a_list_when_max_timeout_ns_passed():
    """On the real clock: the thread that start() runs sends the list without any new
    record (waits on a condition, generous deadline)."""
    index = PipelineIndex()
    index.digests[DIGEST] = LEARN
    sent = threading.Event()
    lists = DigestLists(lambda *_: sent.set() or True)
    lists.start()
    try:
        entry = p4runtime_pb2.DigestEntry(digest_id=DIGEST)
        entry.config.max_timeout_ns = 20 * MS
        write_digest(index, Update.INSERT, entry)
        lists.add(index, DIGEST, (1,))
        assert sent.wait(timeout=30)
    finally:
        lists.close()


def test_a_modify_lowering_max_list_size_sends_the_list_that_now_is_full(rig):
    rig.configure(max_list_size=0, max_timeout_ns=60_000 * MS)
    rig.add(1, 2, 3)
    rig.configure(Update.MODIFY, max_list_size=2, max_timeout_ns=60_000 * MS)
    rig.lists.reconfigured()
    assert rig.records() == [[(1,), (2,), (3,)]]


def test_a_modify_whose_max_timeout_ns_passed_already_sends_at_once(rig):
    rig.configure(max_list_size=0, max_timeout_ns=60_000 * MS)
    rig.add(1)
    rig.now = 30 * MS
    rig.configure(Update.MODIFY, max_list_size=0, max_timeout_ns=10 * MS)
    rig.lists.reconfigured()
    assert rig.records() == [[(1,)]]


def test_a_delete_forgets_the_gathered_list_at_once_as_pi_resets_it(rig):
    """PI's DigestData::reset on DELETE drops the list being built: nothing is sent for it,
    even after a new INSERT of the same digest."""
    rig.configure(max_list_size=0, max_timeout_ns=60_000 * MS)
    rig.add(1)
    rig.configure(Update.DELETE)
    rig.lists.reconfigured()
    rig.configure(max_list_size=0, max_timeout_ns=10 * MS)
    rig.now = 20 * MS
    assert rig.lists.flush_due() is None and rig.sent == []


def test_the_flush_thread_sends_at_the_deadline_a_modify_brought_in():
    """On the real clock: the thread waits for a 60 s max_timeout_ns; a MODIFY to 10 ms must
    send the pending list about 10 ms later, not at the old deadline (the wait below ends
    at 30 s, so a thread still waiting for 60 s fails it)."""
    index = PipelineIndex()
    index.digests[DIGEST] = LEARN
    sent = threading.Event()
    flush_thread_read_clock = threading.Event()

    def clock() -> int:
        if threading.current_thread().name == "p4rt-digests":
            flush_thread_read_clock.set()
        return time.monotonic_ns()

    lists = DigestLists(lambda *_: sent.set() or True, clock=clock)
    lists.start()
    try:
        entry = p4runtime_pb2.DigestEntry(digest_id=DIGEST)
        entry.config.max_timeout_ns = 60_000 * MS
        write_digest(index, Update.INSERT, entry)
        assert flush_thread_read_clock.wait(timeout=30)  # it waits, with nothing gathering
        flush_thread_read_clock.clear()
        lists.add(index, DIGEST, (1,))
        assert flush_thread_read_clock.wait(timeout=30)
        lists.ack(DIGEST, 12345)  # takes the lock the thread holds until it waits: it waits
        entry.config.max_timeout_ns = 10 * MS
        write_digest(index, Update.MODIFY, entry)
        modified_ns = time.monotonic_ns()
        lists.reconfigured()
        assert sent.wait(timeout=30)
        assert time.monotonic_ns() - modified_ns < 30_000 * MS
    finally:
        lists.close()

"""Generic P4Runtime PTF test base: connect and arbitrate, push the pipeline (once per run,
recognised by its cookie), look names up in the P4Info, and undo every write a test made.

Test parameters (ptf --test-params): grpc_addr, device_id, p4info, config, election_id
(default: the clock in ns, so every test's client is the newest primary), and thrift_addr
(BMv2 only: its Thrift runtime, for the register access its P4Runtime server lacks).
Run through `make ptf` (ptf-tests/run_ptf.py), never by hand outside the namespace.
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

import ptf
from p4.v1 import p4runtime_pb2
from ptf import testutils
from ptf.base_tests import BaseTest

from controlplane import entries as E
from controlplane.client import P4RuntimeClient, P4RuntimeError
from controlplane.p4info import P4InfoIndex, load_p4info

log = logging.getLogger("p4runtime_test")


def pipeline_cookie(p4info_path: str, config_path: str) -> int:
    """A stable 64-bit cookie naming one (P4Info, device config) pair."""
    data = Path(p4info_path).read_bytes() + b"\0" + Path(config_path).read_bytes()
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


class P4RuntimeTest(BaseTest):
    #: seconds to wait for the target's gRPC server (a software switch may start slowly)
    CONNECT_TIMEOUT_S = 30.0

    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        params = testutils.test_params_get()
        self.params = params
        # Servers remember the highest election id they have seen (a controller started by a
        # test may have used a higher one): a clock-based id is always the highest so far.
        election_id = int(params.get("election_id", 0)) or time.time_ns()
        self.client = P4RuntimeClient(
            params.get("grpc_addr", "127.0.0.1:9559"),
            int(params.get("device_id", 0)),
            election_id,
            timeout_s=self.CONNECT_TIMEOUT_S,
        )
        self._undo: list[Callable[[], None]] = []
        self._raw_write = self.client.write
        self.client.write = self._recording_write
        self.default_pipeline = (params["p4info"], params["config"])
        self._pushed_other = False
        self.ensure_pipeline(*self.default_pipeline)

    def tearDown(self):
        try:
            if self._pushed_other:
                # A new pipeline wiped all state: restoring the default one is the undo.
                self._undo.clear()
                self.ensure_pipeline(*self.default_pipeline)
            self.undo_writes()
        finally:
            self.client.close()
            BaseTest.tearDown(self)

    # -- pipeline ----------------------------------------------------------------

    def ensure_pipeline(self, p4info_path: str, config_path: str) -> None:
        """Push (P4Info, config) unless the device already runs exactly that pipeline."""
        cookie = pipeline_cookie(p4info_path, config_path)
        p4info = load_p4info(p4info_path)
        if self.client.get_cookie() != cookie:
            self.client.set_pipeline(p4info, Path(config_path).read_bytes(), cookie=cookie)
        self.index = P4InfoIndex(p4info)
        self.client.describe_update = lambda u: E.describe_update(self.index, u)
        self._pushed_other = (p4info_path, config_path) != self.default_pipeline

    # -- writes and their undo -----------------------------------------------------

    def _recording_write(self, updates) -> None:
        updates = list(updates)
        undo = [self._inverse(u) for u in updates]
        self._raw_write(updates)
        self._undo.extend(partial(self._raw_write, [u]) for u in undo if u is not None)

    def on_undo(self, action: Callable[[], None]) -> None:
        """Run `action` when this test's writes are undone (for writes made another way
        than this client's Write, e.g. registers through BMv2's Thrift runtime)."""
        self._undo.append(action)

    def _current(self, entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity | None:
        """The entity as the device holds it now (same key), or None."""
        which = entity.WhichOneof("entity")
        if which == "table_entry":
            wanted = entity.table_entry
            query = p4runtime_pb2.Entity()
            query.table_entry.table_id = wanted.table_id
            key = _entry_key(wanted)
            for found in self._raw_read([query]):
                if _entry_key(found.table_entry) == key:
                    return found
            return None
        if which == "packet_replication_engine_entry":
            gid = entity.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
            query = E.multicast_group(gid, [])
            try:
                found = self._raw_read([query])
            except P4RuntimeError:
                return None
            return found[0] if found else None
        if which == "register_entry":
            return self._raw_read([entity])[0]
        return None

    def _raw_read(self, entities):
        return self.client.read(entities)

    def _inverse(self, upd: p4runtime_pb2.Update) -> p4runtime_pb2.Update | None:
        kind = p4runtime_pb2.Update.Type.Name(upd.type)
        if kind == "INSERT":
            return p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=upd.entity)
        before = self._current(upd.entity)
        if before is None:
            return None  # the write itself will fail with NOT_FOUND
        if upd.entity.WhichOneof("entity") == "table_entry":
            before.table_entry.ClearField("counter_data")
        back = p4runtime_pb2.Update.MODIFY if kind == "MODIFY" else p4runtime_pb2.Update.INSERT
        return p4runtime_pb2.Update(type=back, entity=before)

    def undo_writes(self) -> None:
        """Undo this test's writes, last first; report every failure, then fail."""
        errors = []
        while self._undo:
            action = self._undo.pop()
            try:
                action()
            except P4RuntimeError as exc:
                errors.append(str(exc))
        if errors:
            raise AssertionError("undoing the test's writes failed:\n" + "\n".join(errors))


def _entry_key(entry: p4runtime_pb2.TableEntry) -> bytes:
    key = p4runtime_pb2.TableEntry(table_id=entry.table_id, priority=entry.priority)
    for fm in sorted(entry.match, key=lambda m: m.field_id):
        copy = key.match.add()
        copy.CopyFrom(fm)
        kind = copy.WhichOneof("field_match_type")
        for attr in ("value", "mask"):
            sub = getattr(copy, kind)
            if hasattr(sub, attr) and isinstance(getattr(sub, attr), bytes):
                setattr(sub, attr, getattr(sub, attr).lstrip(b"\0") or b"\0")
    return key.SerializeToString(deterministic=True)

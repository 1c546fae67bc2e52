"""The native device: the program compiled to C, loaded with ctypes, behind `model.Device`.

The control-plane objects keep the interpreter's validation (an interpreter device of the same
program holds the entries, in the same order, and raises the same errors); every change is
then mirrored into the C state that the data path reads. Direct counters, registers and
counters live only in C: entries, registers and counters read them from there.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections import deque
from pathlib import Path

from p4sim.engine.action_profiles import Member
from p4sim.model import MAX_MCAST_GROUP, NoMemory, TableEntry
from p4sim.native.build import HERE as RUNTIME_DIR
from p4sim.native.build import build
from p4sim.native.codegen import CodeGen, TableLayout
from p4sim.v1model import V1ModelDevice
from p4sim.v1model.device import MAX_DIGESTS

log = logging.getLogger("p4sim.native")

u64p = ctypes.POINTER(ctypes.c_uint64)
M64 = (1 << 64) - 1
_LIBS: dict[str, ctypes.CDLL] = {}


def _words(value: int, n: int) -> list[int]:
    return [(value >> 64) & M64, value & M64] if n == 2 else [value & M64]


def _arr(ctype, values):
    return (ctype * max(len(values), 1))(*values)


def _allocated(status: int, what: str) -> None:
    """The status of a C call that allocates (api.c): -1 is memory it could not get; the
    C state is then as before the call."""
    if status == -1:
        raise NoMemory(f"native engine: no memory for {what}")


def load(path) -> ctypes.CDLL:
    lib = _LIBS.get(str(path))
    if lib is None:
        lib = ctypes.CDLL(str(path))
        lib.p4n_new.restype = ctypes.c_void_p
        lib.p4n_reg_cells.restype = u64p
        lib.p4n_ctr_cells.restype = u64p
        lib.p4n_process.restype = ctypes.c_size_t
        lib.p4n_process.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.p4n_digests.restype = ctypes.c_uint32
        lib.p4n_aborts.restype = ctypes.c_uint64
        for name in ("p4n_table_meter", "p4n_mtr_config"):
            getattr(lib, name).argtypes = (
                [ctypes.c_void_p] + [ctypes.c_uint32] * 2 + [ctypes.c_int] + [ctypes.c_double] * 4
            )
        _LIBS[str(path)] = lib
    return lib


class CallRecorder:
    """The C library, with every call of the control plane's C API appended to `calls` as
    (function name, arguments): the fuzz harness replays them as C (p4sim/native/fuzz.py)."""

    def __init__(self, lib: ctypes.CDLL, calls: list):
        self._lib, self._calls = lib, calls

    def __getattr__(self, name):
        fn = getattr(self._lib, name)

        def call(*args):
            self._calls.append((name, args))
            return fn(*args)

        return call


class DigestRec(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("receiver", ctypes.c_uint32),
        ("n", ctypes.c_uint32),
        ("v", ctypes.c_uint64 * 32),
    ]


class NativeLock:
    """The device lock: reentrant for Python threads, and the C mutex the data path takes
    (ctypes releases the GIL while it waits)."""

    def __init__(self, dev):
        self._dev = dev
        self._rlock = threading.RLock()
        self._depth = 0

    def __enter__(self):
        self._rlock.acquire()
        if self._depth == 0:
            self._dev.lib.p4n_lock(self._dev.ctx)
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        try:
            if self._depth == 0:
                try:
                    self._dev.sync_pre()
                finally:
                    self._dev.lib.p4n_unlock(self._dev.ctx)
        finally:
            self._rlock.release()

    acquire = __enter__

    def release(self):
        self.__exit__(None, None, None)


class NativeEntry(TableEntry):
    """A table entry held by a native table: its direct counter and meter live in C.
    (Entries become NativeEntry by a class swap when inserted and plain again when removed.)"""

    def _cell(self):
        table, slot = self.__dict__["_native"]
        pk, by = ctypes.c_uint64(), ctypes.c_uint64()
        table.dev.lib.p4n_table_counter(
            table.dev.ctx, table.layout.index, slot, ctypes.byref(pk), ctypes.byref(by), 0
        )
        return pk.value, by.value

    def _set_cell(self, packets, bytes_):
        table, slot = self.__dict__["_native"]
        pk, by = ctypes.c_uint64(packets & M64), ctypes.c_uint64(bytes_ & M64)
        table.dev.lib.p4n_table_counter(
            table.dev.ctx, table.layout.index, slot, ctypes.byref(pk), ctypes.byref(by), 1
        )

    @property
    def packets(self):
        return self._cell()[0]

    @packets.setter
    def packets(self, v):
        self._set_cell(v, self._cell()[1])

    @property
    def bytes(self):
        return self._cell()[1]

    @bytes.setter
    def bytes(self, v):
        self._set_cell(self._cell()[0], v)

    @property
    def meter_config(self):
        return self.__dict__.get("meter_config")

    @meter_config.setter
    def meter_config(self, config):
        if config != self.__dict__.get("meter_config"):
            table, slot = self.__dict__["_native"]
            table.push_meter(slot, config)
        self.__dict__["meter_config"] = config


class NativeTable:
    """`model.TableState` over the interpreter's table (validation, order) and the C table."""

    def __init__(self, dev: NativeDevice, py, layout: TableLayout, capacity: int):
        self.dev, self.py, self.layout = dev, py, layout
        self.definition = py.definition
        self.slots: dict = {}  # record key -> C slot
        self.free = list(range(capacity - 1, -1, -1))
        words = list(layout.exact_words)
        # A routing table (one LPM key of up to 64 bits, the rest exact) gets the C side's
        # per-prefix-length index: the interpreter's table orders it by prefix length too.
        kinds = [k.match_kind for k in self.definition.keys]
        lpm_word = -1
        if kinds.count("lpm") == 1 and all(k in ("exact", "lpm") for k in kinds):
            w0, nw = layout.key_words[kinds.index("lpm")]
            lpm_word = w0 if nw == 1 else -1
        status = dev.lib.p4n_table_init(
            dev.ctx,
            layout.index,
            layout.nwords,
            len(words),
            _arr(ctypes.c_uint16, words),
            layout.nargs,
            capacity,
            ctypes.c_int32(lpm_word),
        )
        _allocated(status, f"table {self.definition.name} ({capacity} records)")
        # indirect tables: C groups mirrored from the action profile's groups
        self.group_index: dict[int, int] = {}  # id(group) -> C group
        self.group_objs: dict = {}  # C group -> group (kept alive while mirrored)
        self.free_groups: list[int] = []
        if py.profile is not None:
            py.profile.listeners.append(self.resync)
        for rec in list(py.records.values()):
            self._attach(rec)
        for exact in list(py.index):
            self._push_bucket(exact)
        self._push_default()

    def __getattr__(self, name):
        return getattr(self.py, name)

    # -- mirroring --------------------------------------------------------------------
    def _exact_words(self, exact: tuple) -> list[int]:
        out = []
        exact_fields = [i for i, k in enumerate(self.definition.keys) if k.match_kind == "exact"]
        for i, v in zip(exact_fields, exact):
            out += _words(v, self.layout.key_words[i][1])
        return out

    def _args(self, action: str, argv: list[int]) -> list[int]:
        out = [0] * max(self.layout.nargs, 1)
        for (w0, nw), v in zip(self.layout.arg_words.get(action, []), argv):
            out[w0 : w0 + nw] = _words(v, nw)
        return out

    def _push_rec(self, rec, slot: int) -> None:
        words, ranges, a, b = [], [], [], []
        for i, x, y, is_range in rec.checks:
            w0, nw = self.layout.key_words[i]
            if nw == 2:
                for k, (xv, yv) in enumerate(zip(_words(x, 2), _words(y, 2))):
                    words.append(w0 + k), ranges.append(0), a.append(xv), b.append(yv)
            else:
                words.append(w0), ranges.append(int(is_range)), a.append(x), b.append(y)
        if self.py.profile is not None:
            action, args = self._target(rec)
        else:
            action = self.layout.actions.index(rec.entry.action)
            args = self._args(rec.entry.action, rec.argv)
        status = self.dev.lib.p4n_table_set_rec(
            self.dev.ctx,
            self.layout.index,
            slot,
            action,
            len(words),
            _arr(ctypes.c_uint16, words),
            _arr(ctypes.c_uint8, ranges),
            _arr(ctypes.c_uint64, a),
            _arr(ctypes.c_uint64, b),
            _arr(ctypes.c_uint64, args),
        )
        _allocated(status, f"an entry of table {self.definition.name}")

    # -- action profiles and selectors (a table with `implementation`) ------------------
    def _target(self, rec) -> tuple[int, list[int]]:
        """The C action of a record of an indirect table: its member's action and
        arguments, or -2 - g for the C group g its group is mirrored into."""
        target = rec.target
        if target is None:
            return -1, self._args("", [])
        if isinstance(target, Member):
            return self.layout.actions.index(target.info.action), self._args(
                target.info.action, target.argv
            )
        return -2 - self._group_index(target), self._args("", [])

    def _group_index(self, group) -> int:
        index = self.group_index.get(id(group))
        if index is None or self.group_objs[index] is not group:
            index = self.free_groups.pop() if self.free_groups else len(self.group_objs)
            self._push_group(index, group)
            self.group_objs[index] = group
            self.group_index[id(group)] = index
        return index

    def _push_group(self, index: int, group) -> None:
        actions, args = [], []
        for _, member in group.slots:  # in handle order: BMv2's choice is slot hash % n
            actions.append(self.layout.actions.index(member.info.action))
            args += self._args(member.info.action, member.argv)
        status = self.dev.lib.p4n_table_set_group(
            self.dev.ctx,
            self.layout.index,
            index,
            len(actions),
            _arr(ctypes.c_int32, actions),
            _arr(ctypes.c_uint64, args),
        )
        _allocated(status, f"a group of table {self.definition.name}")

    def resync(self) -> None:
        """After a change of the action profile (a member's action, a group's members, a
        one-shot group gone): mirror every group the entries name and every entry again;
        C groups no entry names any more are freed for reuse."""
        named = {id(r.target): r.target for r in self.py.records.values() if r.target is not None}
        for index, group in list(self.group_objs.items()):
            if named.get(id(group)) is not group:
                del self.group_objs[index]
                self.group_index.pop(id(group), None)
                self.free_groups.append(index)
            else:
                self._push_group(index, group)
        for rec in self.py.records.values():
            slot = self.slots.get(rec.key)
            if slot is not None:
                self._push_rec(rec, slot)

    def _attach(self, rec) -> None:
        """A new record of the interpreter's table gets a C slot; its entry moves to C."""
        slot = self.free.pop()
        self.slots[rec.key] = slot
        self.dev.lib.p4n_table_reset_rec(self.dev.ctx, self.layout.index, slot)
        self._push_rec(rec, slot)
        self._adopt(rec.entry, slot)

    def _adopt(self, entry: TableEntry, slot: int) -> None:
        packets, bytes_, config = entry.packets, entry.bytes, entry.meter_config
        entry.__dict__["_native"] = (self, slot)
        entry.__dict__.pop("meter_config", None)
        entry.__class__ = NativeEntry
        entry._set_cell(packets, bytes_)
        entry.meter_config = config

    @staticmethod
    def _release(entry: TableEntry) -> None:
        """An entry leaving the table keeps its last counter values as plain fields."""
        if isinstance(entry, NativeEntry):
            packets, bytes_ = entry._cell()
            config = entry.meter_config
            entry.__class__ = TableEntry
            del entry.__dict__["_native"]
            entry.packets, entry.bytes, entry.meter_config = packets, bytes_, config

    def push_meter(self, slot: int, config) -> None:
        on = config is not None
        cir, cb, pir, pb = config if on else (0, 0, 0, 0)
        self.dev.lib.p4n_table_meter(
            self.dev.ctx, self.layout.index, slot, int(on), cir, cb, pir, pb
        )

    def _push_bucket(self, exact: tuple) -> None:
        bucket = self.py.index.get(exact, [])
        slots = [self.slots[r.key] for r in bucket]
        status = self.dev.lib.p4n_table_set_bucket(
            self.dev.ctx,
            self.layout.index,
            _arr(ctypes.c_uint64, self._exact_words(exact)),
            len(slots),
            _arr(ctypes.c_int32, slots),
        )
        _allocated(status, f"the lookup index of table {self.definition.name}")

    def _push_default(self) -> None:
        entry = self.py.default_entry()
        argv = self.py._default_bound[1]
        action = self.layout.actions.index(entry.action)
        self.dev.lib.p4n_table_set_default(
            self.dev.ctx,
            self.layout.index,
            action,
            _arr(ctypes.c_uint64, self._args(entry.action, argv)),
        )

    # -- TableState -------------------------------------------------------------------
    def insert(self, entry: TableEntry) -> None:
        with self.dev.lock:
            self.py.insert(entry)
            rec = self.py.records[self.py._compile(entry, with_action=False).key]
            try:
                self._attach(rec)
                self._push_bucket(rec.exact)
            except NoMemory:  # the C table is as it was: so is the interpreter's
                slot = self.slots.pop(rec.key, None)
                if slot is not None:
                    self.free.append(slot)
                self._release(rec.entry)
                self.py.delete(entry)
                raise

    def modify(self, entry: TableEntry) -> None:
        with self.dev.lock:
            key = self.py._compile(entry, with_action=False).key
            old = self.py.records.get(key)
            old_entry = old.entry if old is not None else None
            self.py.modify(entry)
            rec = self.py.records[key]
            slot = self.slots[key]
            try:
                self._push_rec(rec, slot)
            except NoMemory:  # the C record is as it was: so is the interpreter's
                self.py.modify(old_entry)
                raise
            if old_entry is not entry:
                config = old_entry.meter_config if old_entry is not None else None
                self._release(old_entry)
                if entry.meter_config is None and config is not None:
                    entry.meter_config = config
                self._adopt(entry, slot)

    def delete(self, entry: TableEntry) -> None:
        with self.dev.lock:
            key = self.py._compile(entry, with_action=False).key
            rec = self.py.records.get(key)
            self.py.delete(entry)
            try:
                self._push_bucket(rec.exact)
            except NoMemory:  # the C bucket still holds the record: so does the interpreter
                self.py.insert(rec.entry)
                raise
            self.free.append(self.slots.pop(key))
            self._release(rec.entry)

    def find(self, match, priority):
        return self.py.find(match, priority)

    def entries(self):
        return self.py.entries()

    def default_entry(self):
        return self.py.default_entry()

    def set_default(self, action, args, initial=False) -> None:
        with self.dev.lock:
            self.py.set_default(action, args, initial)
            self._push_default()

    def reset_default(self) -> None:
        with self.dev.lock:
            self.py.reset_default()
            self._push_default()

    def clear(self) -> None:
        with self.dev.lock:
            for rec in list(self.py.records.values()):
                if not rec.entry.is_const:
                    self.delete(rec.entry)
            self.reset_default()


class NativeRegister:
    def __init__(self, definition, cells, owner):
        self.owner = owner  # the cells are the owner's C memory: keep it alive
        self.definition = definition
        self.cells = cells
        self.mask = (1 << definition.bitwidth) - 1

    def _check(self, index):
        if not 0 <= index < self.definition.size:
            raise IndexError(
                f"register {self.definition.name} index {index} is outside 0..{self.definition.size - 1}"
            )

    def read(self, index: int) -> int:
        self._check(index)
        return self.cells[index] & self.mask

    def write(self, index: int, value: int) -> None:
        self._check(index)
        self.cells[index] = value & self.mask


class NativeCounter:
    def __init__(self, definition, packets, bytes_, owner):
        self.owner = owner
        self.definition = definition
        self.packets_cells, self.bytes_cells = packets, bytes_

    def _check(self, index):
        if not 0 <= index < self.definition.size:
            raise IndexError(
                f"counter {self.definition.name} index {index} is outside 0..{self.definition.size - 1}"
            )

    def read(self, index: int) -> tuple[int, int]:
        self._check(index)
        return self.packets_cells[index], self.bytes_cells[index]

    def write(self, index: int, packets: int, bytes_: int) -> None:
        self._check(index)
        self.packets_cells[index] = packets & M64
        self.bytes_cells[index] = bytes_ & M64


class NativeMeter:
    """Configurations kept by the interpreter's meter (for reads), buckets in C."""

    def __init__(self, dev, py, index):
        self.dev, self.py, self.index = dev, py, index
        self.definition = py.definition

    def set_config(self, index: int, config) -> None:
        with self.dev.lock:
            self.py.set_config(index, config)
            if self.index is not None:
                on = config is not None
                cir, cb, pir, pb = config if on else (0, 0, 0, 0)
                self.dev.lib.p4n_mtr_config(
                    self.dev.ctx, self.index, index, int(on), cir, cb, pir, pb
                )

    def get_config(self, index: int):
        return self.py.get_config(index)


class NativeDevice:
    """Implements `p4sim.model.Device` with the program compiled to C."""

    engine = "native"

    def __init__(
        self,
        program,
        cpu_port: int | None = None,
        seed: int | None = None,
        runtime_dir: Path = RUNTIME_DIR,
        record: list | None = None,
    ):
        """`runtime_dir`: where the C runtime comes from (another checkout's for the I/O
        benchmark's baseline); `record`: a list that collects the calls into the C library
        (CallRecorder)."""
        interp = V1ModelDevice(program, cpu_port, seed)
        gen = CodeGen(interp)
        source = gen.generate()  # raises Unsupported
        self.source = source
        self.lib = load(build(source, src_dir=runtime_dir))
        if record is not None:
            self.lib = CallRecorder(self.lib, record)
        self.program = program
        self.model = program.model
        self.cpu_port = cpu_port
        self.interp = interp
        self.pre = interp.pre
        # members and groups of profiles no applied table uses (a table implemented by one
        # is not translated: such a pipeline runs on the interpreter)
        self.action_profiles = interp.action_profiles
        self.digests: deque = deque(maxlen=MAX_DIGESTS)
        self.digest_types = gen.digests
        self._counts = (len(gen.tables), len(gen.registers), len(gen.counters), len(gen.meters))
        self.ctx = ctypes.c_void_p(self.lib.p4n_new(*self._counts))
        if not self.ctx.value:
            raise NoMemory("native engine: no memory for the device (p4n_new)")
        self.lock = NativeLock(self)
        self._pre_pushed: dict = {}
        self.tables: dict[str, NativeTable] = {}
        layouts = {layout.name: layout for layout in gen.tables}
        for name, py in interp.tables.items():  # in the interpreter's (the model's) order
            layout = layouts.get(name)
            if layout is None:  # never applied: no data path, state in Python only
                self.tables[name] = py
                continue
            d = py.definition
            capacity = d.size + len(d.const_entries or ()) + len(d.initial_entries) + 1
            self.tables[name] = NativeTable(self, py, layout, capacity)
        self.registers = {}
        for i, name in enumerate(gen.registers):
            d = interp.registers[name].definition
            status = self.lib.p4n_reg_init(self.ctx, i, d.size, min(d.bitwidth, 64))
            _allocated(status, f"register {name} ({d.size} cells)")
            self.registers[name] = NativeRegister(d, self.lib.p4n_reg_cells(self.ctx, i), self)
        self.counters = {}
        for i, name in enumerate(gen.counters):
            d = interp.counters[name].definition
            _allocated(
                self.lib.p4n_ctr_init(self.ctx, i, d.size), f"counter {name} ({d.size} cells)"
            )
            self.counters[name] = NativeCounter(
                d,
                self.lib.p4n_ctr_cells(self.ctx, i, 0),
                self.lib.p4n_ctr_cells(self.ctx, i, 1),
                self,
            )
        self.meters = {}
        for name, py in interp.meters.items():
            index = gen.meters.index(name) if name in gen.meters else None
            if index is not None:
                status = self.lib.p4n_mtr_init(self.ctx, index, py.definition.size)
                _allocated(status, f"meter {name} ({py.definition.size} cells)")
            self.meters[name] = NativeMeter(self, py, index)
        self._out = ctypes.c_void_p()

    def __del__(self):
        # The C state goes with the device; nothing else holds it by then (NativePorts swaps
        # its pipeline under its own lock before dropping the old device).
        ctx = getattr(self, "ctx", None)
        if ctx is not None and ctx.value:
            self.lib.p4n_free(ctx, *self._counts)
            self.ctx = None

    # -- PRE: the P4Runtime server and STF edit plain dicts and lists; pushed on change --
    def sync_pre(self) -> None:
        pre = self.pre
        snapshot = {
            (0, g): (tuple((r.egress_port, r.instance) for r in reps), 0)
            for g, reps in pre.multicast_groups.items()
        }
        for s, session in pre.clone_sessions.items():
            snapshot[(1, s)] = (
                tuple((r.egress_port, r.instance) for r in session.replicas),
                session.packet_length_bytes,
            )
        if snapshot == self._pre_pushed:
            return
        for key in set(self._pre_pushed) | set(snapshot):
            new = snapshot.get(key)
            if new == self._pre_pushed.get(key):
                continue
            kind, ident = key
            reps, trunc = new if new is not None else ((), 0)
            if not 0 <= ident <= MAX_MCAST_GROUP:  # the control plane admits none of these
                what = ("multicast group", "clone session")[kind]
                raise ValueError(f"{what} {ident} is out of range 1..{MAX_MCAST_GROUP}")
            status = self.lib.p4n_set_group(
                self.ctx,
                kind,
                ctypes.c_uint32(ident),
                int(new is not None),
                len(reps),
                _arr(ctypes.c_uint32, [p for p, _ in reps]),
                _arr(ctypes.c_uint32, [r for _, r in reps]),
                ctypes.c_uint32(trunc),
            )
            _allocated(status, f"{('multicast group', 'clone session')[kind]} {ident}")
        self._pre_pushed = snapshot

    # -- Device -----------------------------------------------------------------------
    def process(self, ingress_port: int, frame: bytes) -> list[tuple[int, bytes]]:
        frame = bytes(frame)
        with self.lock:
            self.sync_pre()
            aborts = self.lib.p4n_aborts(self.ctx)
            n = self.lib.p4n_process(
                self.ctx, ingress_port, frame, len(frame), ctypes.byref(self._out)
            )
            raw = ctypes.string_at(self._out, n) if n else b""
            self.drain_digests()
            if self.lib.p4n_aborts(self.ctx) != aborts:
                log.error(
                    "dropping packet: a run-time error (loop limit, assert/assume) or no memory"
                )
        out = []
        i = 0
        while i < n:
            port = int.from_bytes(raw[i : i + 4], "little")
            length = int.from_bytes(raw[i + 4 : i + 8], "little")
            out.append((port, raw[i + 8 : i + 8 + length]))
            i += 8 + length
        return out

    def drain_digests(self) -> None:
        ptr = ctypes.c_void_p()
        n = self.lib.p4n_digests(self.ctx, ctypes.byref(ptr))
        if not n:
            return
        recs = ctypes.cast(ptr, ctypes.POINTER(DigestRec))
        for i in range(n):
            r = recs[i]
            name, _ = self.digest_types[r.type]
            self.digests.append((name, r.receiver, list(r.v[: r.n])))
        self.lib.p4n_digests_clear(self.ctx)

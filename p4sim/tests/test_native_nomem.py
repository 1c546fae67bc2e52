"""The native engine without memory. Data path: a frame whose processing needs an allocation
that fails is dropped and counted (the device's aborts), the switch goes on, and the next
frame goes through. Control plane (api.c): a device, table, register, counter or meter that
cannot be allocated is a MemoryError naming it, with what was allocated before freed; an
entry write that cannot be allocated is NoMemory (RESOURCE_EXHAUSTED) and leaves the table
as it was. The generated C is compiled with malloc, calloc and realloc failing on demand and
every block counted until freed.

Run: .venv/bin/pytest p4sim/tests/test_native_nomem.py
"""

from __future__ import annotations

import ctypes
import gc

import pytest

from p4sim.frontend import compile_source
from p4sim.model import FieldMatch, NoMemory, Replica, TableEntry
from p4sim.native import device as native_device
from p4sim.native import new_device

# Before the generated source: the allocator as the C code sees it, failing once
# `allocs_left` allocations have succeeded (-1: never), and counting the blocks not freed.
FAILING_ALLOCS = r"""
#include <stdlib.h>
static long allocs_left = -1, live_allocs;
static int may_alloc(void)
{
	if (allocs_left == 0)
		return 0;
	if (allocs_left > 0)
		allocs_left--;
	return 1;
}
static void *counted(void *p) { live_allocs += p != NULL; return p; }
static void *maybe_malloc(size_t n) { return may_alloc() ? counted(malloc(n)) : NULL; }
static void *maybe_calloc(size_t k, size_t n) { return may_alloc() ? counted(calloc(k, n)) : NULL; }
static void *maybe_realloc(void *p, size_t n)
{
	if (!may_alloc())
		return NULL;
	void *q = realloc(p, n);
	live_allocs += q && !p;
	return q;
}
static void counted_free(void *p) { live_allocs -= p != NULL; free(p); }
#define malloc(n) maybe_malloc(n)
#define calloc(k, n) maybe_calloc(k, n)
#define realloc(p, n) maybe_realloc(p, n)
#define free(p) counted_free(p)
"""
SET_FAIL_ALLOCS = (
    "\n#undef malloc\n#undef calloc\n#undef realloc\n#undef free\n"
    "void set_fail_allocs(int on) { allocs_left = on ? 0 : -1; }\n"
    "void fail_allocs_after(long n) { allocs_left = n; }\n"
    "long live_allocs_now(void) { return live_allocs; }\n"
)

# Ethernet only, out of port 2; {verify}, {egress} and {compute} are filled in per test.
PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { @field_list(1) bit<8> passes; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { {verify} } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { {egress} }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { {compute} } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
CHECKSUM = "KIND_checksum_with_payload(true, { hdr.eth.src }, hdr.eth.type, HashAlgorithm.csum16);"
# one more pass through the pipeline; the second pass writes its number into the frame
RECIRCULATE = (
    "if (meta.passes == 0) { meta.passes = 1; recirculate_preserving_field_list(1); } "
    "hdr.eth.type = (bit<16>) meta.passes;"
)


def failing_device(monkeypatch, verify="", egress="", compute=""):
    """A native device of PROGRAM whose C allocations fail while `set_fail_allocs(1)`."""
    build = native_device.build
    monkeypatch.setattr(
        native_device,
        "build",
        lambda source, **kw: build(FAILING_ALLOCS + source + SET_FAIL_ALLOCS, **kw),
    )
    text = PROGRAM
    for name, code in (("verify", verify), ("egress", egress), ("compute", compute)):
        text = text.replace("{" + name + "}", code)
    dev = native_device.NativeDevice(compile_source(text, "nomem.p4"))
    assert dev.source.count("scratch(D,") == bool(verify or compute)
    return dev


def frame(payload_len: int) -> bytes:
    return bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00" + bytes(range(256))[:payload_len]


@pytest.mark.parametrize("where", ["verify", "update"])
def test_a_checksum_over_the_payload_without_memory_drops_the_frame(monkeypatch, where):
    """scratch() (the buffer of a checksum over headers and payload) when realloc fails: the
    frame is dropped and counted, never a write through NULL; the buffer the device had
    stays, so a frame that fits it goes through with no memory to be had, and a longer one
    once memory is back."""
    call = CHECKSUM.replace("KIND", where)
    dev = failing_device(monkeypatch, **{"verify" if where == "verify" else "compute": call})
    short, long_ = frame(10), frame(200)
    expected = {f: dev.interp.process(0, f) for f in (short, long_)}
    assert all(expected.values())
    assert dev.process(0, short) == expected[short]  # the buffer grows for 10 bytes + 1 field
    dev.lib.set_fail_allocs(1)
    assert dev.process(0, long_) == []  # no room for 200 bytes of payload: dropped
    assert dev.lib.p4n_aborts(dev.ctx) == 1
    assert dev.process(0, short) == expected[short]  # the buffer of 10 is still there
    dev.lib.set_fail_allocs(0)
    assert dev.process(0, long_) == expected[long_]
    assert dev.lib.p4n_aborts(dev.ctx) == 1


def test_a_recirculation_without_memory_drops_the_frame(monkeypatch):
    """pipeline.c's copy of a recirculated frame when malloc fails: dropped and counted
    (aborts), not copied into NULL; with memory back the frame makes its second pass."""
    dev = failing_device(monkeypatch, egress=RECIRCULATE)
    f = frame(20)
    expected = dev.interp.process(0, f)
    assert [(port, out[12:14]) for port, out in expected] == [(2, b"\x00\x01")]  # 2nd pass
    dev.lib.set_fail_allocs(1)
    assert dev.process(0, f) == []
    assert dev.lib.p4n_aborts(dev.ctx) == 1
    dev.lib.set_fail_allocs(0)
    assert dev.process(0, f) == expected
    assert dev.lib.p4n_aborts(dev.ctx) == 1


# A table by exact destination and a routing table (LPM on the source's low 32 bits), a
# register, a counter and a meter: every kind of C state the control plane allocates.
CONTROL_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<16> src_hi; bit<32> src_lo; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) seen;
    counter(4, CounterType.packets) frames;
    meter(4, MeterType.packets) rate;
    action to(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table by_dst { key = { hdr.eth.dst: exact; } actions = { to; drop; } size = 4;
                   default_action = drop(); }
    table routes { key = { hdr.eth.src_lo: lpm; } actions = { to; drop; } size = 4;
                   default_action = drop(); }
    apply {
        bit<2> colour;
        seen.write(0, 1);
        frames.count(0);
        rate.execute_meter(0, colour);
        if (!by_dst.apply().hit) { routes.apply(); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


class FailingLibrary:
    """NativeDevice builds CONTROL_PROGRAM with FAILING_ALLOCS; `allocs_left` is armed as
    soon as the library is loaded, before the device's first allocation."""

    def __init__(self, monkeypatch):
        self.lib = None
        self.allocs_left = -1
        build, load = native_device.build, native_device.load
        monkeypatch.setattr(
            native_device,
            "build",
            lambda source, **kw: build(FAILING_ALLOCS + source + SET_FAIL_ALLOCS, **kw),
        )
        monkeypatch.setattr(native_device, "load", self._load)
        self._real_load = load
        self.program = compile_source(CONTROL_PROGRAM, "nomem_control.p4")

    def _load(self, path):
        self.lib = self._real_load(path)
        self.lib.live_allocs_now.restype = ctypes.c_long
        self.lib.fail_allocs_after(ctypes.c_long(self.allocs_left))
        return self.lib

    def device(self, allocs_left: int = -1):
        self.allocs_left = allocs_left
        return native_device.NativeDevice(self.program)

    def live(self) -> int:
        gc.collect()  # a device that failed half-built is freed by its __del__
        return self.lib.live_allocs_now() if self.lib is not None else 0


def eth(dst: int, src_lo: int) -> bytes:
    return dst.to_bytes(6, "big") + bytes(2) + src_lo.to_bytes(4, "big") + b"\x08\x00"


def test_a_device_without_memory_at_any_of_its_allocations_is_a_memory_error_naming_it(
    monkeypatch,
):
    """p4n_new, table, register, counter and meter creation, with allocation number n
    failing for every n until the device is built: each a MemoryError that names what
    could not be allocated, never a write through NULL, and every block allocated before
    the failure freed."""
    lib = FailingLibrary(monkeypatch)
    lib.device().lib.fail_allocs_after(ctypes.c_long(-1))  # the library, built and loaded
    baseline = lib.live()
    named = set()
    for allocs_left in range(1000):
        try:
            dev = lib.device(allocs_left)
        except MemoryError as exc:
            message = str(exc)
        else:
            break
        assert message.startswith("native engine: no memory for "), message
        named.add(message.split(" for ")[1].split(" (")[0].split(" ")[0])
        lib.lib.fail_allocs_after(ctypes.c_long(-1))
        assert lib.live() == baseline, f"leaked after: {message}"
    else:
        pytest.fail("the device was never built")
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    assert named == {"the", "table", "register", "counter", "meter"}  # "the device"
    assert dev.process(0, eth(1, 0)) == []  # built whole: the default action drops
    del dev
    assert lib.live() == baseline


def test_a_pipeline_without_memory_runs_on_the_interpreter_saying_why(monkeypatch):
    lib = FailingLibrary(monkeypatch)
    lib.allocs_left = 0
    device = new_device(lib.program, engine="native")
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    assert device.engine == "interp"
    assert device.fallback_reason == "native engine: no memory for the device (p4n_new)"


def by_dst(dst: int, port: int) -> TableEntry:
    return TableEntry({"hdr.eth.dst": FieldMatch("exact", dst)}, "I.to", {"port": port})


def route(prefix: int, prefix_len: int, port: int) -> TableEntry:
    match = {"hdr.eth.src_lo": FieldMatch("lpm", prefix, prefix_len=prefix_len)}
    return TableEntry(match, "I.to", {"port": port})


@pytest.mark.parametrize("table, make", [("I.by_dst", by_dst), ("I.routes", route)])
def test_an_entry_insert_without_memory_is_no_memory_and_leaves_the_table_as_it_was(
    monkeypatch, table, make
):
    """The record's checks and then the table's lookup index (an exact bucket; a routing
    table's per-prefix levels) fail in turn: NoMemory naming the table, the entry neither
    in the table nor matching frames, nothing leaked; with memory back it goes in."""
    lib = FailingLibrary(monkeypatch)
    dev = lib.device()
    tables = dev.tables[table]
    first, second = (make(0x0A000000, 8, 3), make(0x0A010000, 16, 4)) if make is route else (
        make(0x0A000000, 3), make(0x0A010000, 4))  # fmt: skip
    tables.insert(first)  # routes: the bucket the second joins exists, it is rebuilt
    frame_ = eth(0x0A010000, 0x0A010000)
    before = dev.process(0, frame_)
    assert before == ([] if make is by_dst else dev.interp.process(0, frame_))
    baseline = lib.live()
    failures = 0
    for allocs_left in range(100):
        lib.lib.fail_allocs_after(ctypes.c_long(allocs_left))
        try:
            tables.insert(second)
        except NoMemory as exc:
            failures += 1
            assert str(exc).startswith("native engine: no memory for ") and table in str(exc)
            lib.lib.fail_allocs_after(ctypes.c_long(-1))
            assert [e.match for e in tables.entries()] == [first.match]
            assert dev.process(0, frame_) == before == dev.interp.process(0, frame_)
            # at most the checks set on the record's slot, which went back to the free
            # slots: replaced when the slot is next used, freed with the device
            assert lib.live() <= baseline + 1
        else:
            break
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    assert failures >= 2  # the record, then the bucket
    assert [port for port, _ in dev.process(0, frame_)] == [4]


def test_a_delete_without_memory_for_the_rebuilt_bucket_keeps_the_entry(monkeypatch):
    lib = FailingLibrary(monkeypatch)
    dev = lib.device()
    routes = dev.tables["I.routes"]
    routes.insert(route(0x0A000000, 8, 3))
    routes.insert(route(0x0A010000, 16, 4))
    lib.lib.fail_allocs_after(ctypes.c_long(0))
    with pytest.raises(NoMemory, match="I.routes"):
        routes.delete(route(0x0A010000, 16, 0))
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    assert len(list(routes.entries())) == 2
    assert [port for port, _ in dev.process(0, eth(0, 0x0A010000))] == [4]
    routes.delete(route(0x0A010000, 16, 0))
    assert [port for port, _ in dev.process(0, eth(0, 0x0A010000))] == [3]


def test_a_modify_without_memory_keeps_the_old_action(monkeypatch):
    lib = FailingLibrary(monkeypatch)
    dev = lib.device()
    by_dst_table = dev.tables["I.by_dst"]
    by_dst_table.insert(by_dst(7, 3))
    lib.lib.fail_allocs_after(ctypes.c_long(0))
    with pytest.raises(NoMemory, match="I.by_dst"):
        by_dst_table.modify(by_dst(7, 5))
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    assert [e.args for e in by_dst_table.entries()] == [{"port": 3}]
    assert [port for port, _ in dev.process(0, eth(7, 0))] == [3]
    by_dst_table.modify(by_dst(7, 5))
    assert [port for port, _ in dev.process(0, eth(7, 0))] == [5]


def test_a_multicast_group_without_memory_fails_and_is_pushed_once_memory_is_back(monkeypatch):
    """The PRE is mirrored into C when the device lock is released: a group that cannot be
    allocated is NoMemory there (the Write fails), and the next release pushes it."""
    lib = FailingLibrary(monkeypatch)
    dev = lib.device()
    baseline = lib.live()
    lib.lib.fail_allocs_after(ctypes.c_long(0))
    with pytest.raises(NoMemory, match="no memory for multicast group 5"), dev.lock:
        dev.pre.multicast_groups[5] = [Replica(1, 0), Replica(2, 0)]
    assert lib.live() == baseline
    lib.lib.fail_allocs_after(ctypes.c_long(-1))
    with dev.lock:
        pass
    assert lib.live() == baseline + 1  # the group's replicas

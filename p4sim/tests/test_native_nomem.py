"""The native engine's data path without memory: a frame whose processing needs an allocation
that fails is dropped and counted (the device's aborts), the switch goes on, and the next
frame goes through. The generated C is compiled with malloc and realloc failing on demand.

Run: .venv/bin/pytest p4sim/tests/test_native_nomem.py
"""

from __future__ import annotations

import pytest

from p4sim.frontend import compile_source
from p4sim.native import device as native_device

# Before the generated source: the allocator as the data path sees it, failing while asked to.
FAILING_ALLOCS = r"""
#include <stdlib.h>
static int fail_allocs;
static void *maybe_malloc(size_t n) { return fail_allocs ? NULL : malloc(n); }
static void *maybe_realloc(void *p, size_t n) { return fail_allocs ? NULL : realloc(p, n); }
#define malloc(n) maybe_malloc(n)
#define realloc(p, n) maybe_realloc(p, n)
"""
SET_FAIL_ALLOCS = (
    "\n#undef malloc\n#undef realloc\nvoid set_fail_allocs(int on) { fail_allocs = on; }\n"
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

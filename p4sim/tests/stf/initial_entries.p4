// Non-const `entries` (P4_16 1.2.4): installed when the device starts, in the listed order
// (first listed wins among overlapping ternary entries), then ordinary entries that the
// control plane may add to, modify or delete.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> v; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.v = v; }
    table t {
        key = { hdr.h.k: ternary; }
        actions = { set; NoAction; }
        entries = {
            0x10 &&& 0xf0 : set(1);
            0x11 &&& 0xff : set(2);     // listed second: loses to the first for 0x11
            0x20 &&& 0xff : set(3);
        }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// Signed values meet the control plane: an int<8> table key matches its two's complement
// bits, an int<8> action parameter from an entry (0xfe) is -2, and a slice assignment on an
// int<8> keeps the value signed (-1 with its low nibble cleared is -16).
#include <core.p4>
#include <v1model.p4>
header h_t { int<8> k; int<8> r; bit<8> s; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(int<8> v) { hdr.h.r = v; if (v < 0) { hdr.h.s = 1; } }
    table t { key = { hdr.h.k: exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply {
        t.apply();
        int<8> x = -1;
        x[3:0] = 4w0;
        if (x == -16) { hdr.h.s = hdr.h.s + 2; }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

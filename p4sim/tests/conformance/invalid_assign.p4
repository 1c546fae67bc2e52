// Assigning an invalid header to a header, as BMv2 runs it (bm_sim's assign_header): the
// target becomes invalid and keeps its fields, which the program then reads (the spec
// leaves them unspecified). Three ways to get there: a local header never made valid, an
// `out` header parameter the callee does not write (copied out invalid), and a header the
// parser did not extract. `r` carries what was read; the others leave only if valid.
#include <core.p4>
#include <v1model.p4>

header R { bit<8> from_local; bit<8> from_out; bit<8> from_unparsed; bit<8> sel; }
header H { bit<8> x; bit<8> y; }

struct Headers { R r; H a; H b; H c; H d; }
struct Meta {}

void forget(out H h) {}

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.r);
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        pkt.extract(hdr.c);
        transition select(hdr.r.sel) {
            1: with_d;
            default: accept;
        }
    }
    state with_d {
        pkt.extract(hdr.d);
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    apply {
        H never_valid;
        hdr.a = never_valid;
        forget(hdr.b);
        hdr.c = hdr.d;  // invalid unless sel was 1
        hdr.r.from_local = hdr.a.x;
        hdr.r.from_out = hdr.b.y;
        hdr.r.from_unparsed = hdr.c.x;
        sm.egress_spec = 2;
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }

control Dep(packet_out pkt, in Headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;

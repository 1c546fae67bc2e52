// Parser value sets (P4_16 spec, "Parser Value Sets"): select cases the control plane fills
// (P4Runtime ValueSetEntry; `pvs_add` in BMv2's CLI and in STF). A bit<16> set picks the
// next header by type; a struct set matches two select expressions at once. A set that
// holds nothing matches nothing.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<16> type; }
header b_t { bit<8> x; bit<8> y; }
header c_t { bit<8> v; }
header res_t { bit<8> path; }
struct headers_t { a_t a; b_t b; c_t c; res_t res; }
struct meta_t { bit<8> path; }
struct pair_t { bit<8> x; bit<8> y; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) types;
    @name("pairs") value_set<pair_t>(2) pair_set;
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.type) {
            0x0800: fixed;
            types: with_b;
            default: accept;
        }
    }
    state fixed {
        meta.path = 1;
        transition accept;
    }
    state with_b {
        pkt.extract(hdr.b);
        meta.path = 2;
        transition select(hdr.b.x, hdr.b.y) {
            pair_set: with_c;
            (0xff, _): accept;
            default: accept;
        }
    }
    state with_c {
        pkt.extract(hdr.c);
        meta.path = 3;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.path = meta.path;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

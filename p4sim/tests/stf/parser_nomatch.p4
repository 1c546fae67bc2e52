// A select without a default case that no label matches: the spec (P4_16 12.6) raises
// error.NoMatch, and v1model then runs ingress with standard_metadata.parser_error set.
// p4c's simple_switch mid-end leaves out the HandleNoMatch pass its other back ends run,
// so BMv2 accepts the packet at that state with NoError: this program is not in the
// differential run (p4sim/README.md, "Conformance").
#include <core.p4>
#include <v1model.p4>

header m_t { bit<8> mode; }
header res_t { bit<8> err; bit<8> path; }
struct headers_t { m_t m; res_t res; }
struct meta_t { bit<8> path; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.m);
        transition select(hdr.m.mode) {
            0x01: one;
            0x30: parse_look;
        }
    }
    state one { meta.path = 1; transition accept; }
    state parse_look {
        meta.path = 2;
        transition select(pkt.lookahead<bit<16>>()) {
            0xabcd: look_full;
        }
    }
    state look_full { meta.path = 3; transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        if (sm.parser_error == error.NoError) {
            hdr.res.err = 0;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.res.err = 2;
        } else {
            hdr.res.err = 0xff;
        }
        hdr.res.path = meta.path;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.m); pkt.emit(hdr.res); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// header_union: one of two alternatives extracted by the parser, isValid on the union and on
// its members, setValid on a member invalidating the other, emit of the valid member.
#include <core.p4>
#include <v1model.p4>

header sel_t { bit<8> kind; bit<8> mode; }
header short_t { bit<16> v; }
header long_t { bit<32> v; }
header_union addr_u { short_t s; long_t l; }
header res_t { bit<8> union_valid; bit<8> which; }

struct headers_t { sel_t sel; addr_u addr; res_t res; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        transition select(hdr.sel.kind) {
            1: parse_short;
            2: parse_long;
            default: accept;
        }
    }
    state parse_short { pkt.extract(hdr.addr.s); transition accept; }
    state parse_long { pkt.extract(hdr.addr.l); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.union_valid = (bit<8>) (bit<1>) hdr.addr.isValid();
        if (hdr.sel.mode == 1) {
            // Switch the union to its long member: the short one becomes invalid.
            hdr.addr.l.setValid();
            hdr.addr.l.v = 0xcafe0000 | (bit<32>) hdr.addr.s.v;
        }
        if (hdr.addr.s.isValid()) {
            hdr.res.which = 1;
        } else if (hdr.addr.l.isValid()) {
            hdr.res.which = 2;
        } else {
            hdr.res.which = 0;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

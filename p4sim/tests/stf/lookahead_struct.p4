// lookahead<S>() of a struct of bit fields: read as a header of the same layout would be,
// without consuming the bytes; too few bytes is PacketTooShort (v1model: on to ingress).
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<8> kind; bit<16> len; }
header h_t { bit<8> kind; bit<16> len; bit<8> copy; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    pair_t peek;
    state start {
        peek = pk.lookahead<pair_t>();
        pk.extract(hdr.h);
        hdr.h.copy = peek.kind + (bit<8>)peek.len;
        transition accept;
    }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 2; }
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

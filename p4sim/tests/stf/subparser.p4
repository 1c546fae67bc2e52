// Sub-parsers: a parser instance applied from a parser state (P4_16 spec, "Sub-parsers").
// Its errors and its reject end the calling parser; on accept the caller goes on.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; }
header b_t { bit<8> v; }
header res_t { bit<8> err; bit<8> after; }
struct headers_t { a_t a; b_t b; res_t res; }
struct meta_t { bit<8> after; }

parser Inner(packet_in pkt, out b_t b, inout meta_t meta) {
    state start {
        pkt.extract(b);
        transition select(b.v) {
            0xff: reject;
            0xee: fail;
            default: accept;
        }
    }
    state fail {
        verify(false, error.ParserInvalidArgument);
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Inner() inner;
    state start {
        pkt.extract(hdr.a);
        inner.apply(pkt, hdr.b, meta);
        meta.after = 1;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.err = 0;
        if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 1; }
        if (sm.parser_error == error.ParserInvalidArgument) { hdr.res.err = 6; }
        hdr.res.after = meta.after;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// Which parser error a varbit extract raises when its size is wrong in several ways at
// once, in BMv2's order: a size that is not whole bytes (ParserInvalidArgument) before a
// packet too short for it (PacketTooShort) before a size over the varbit's maximum
// (HeaderTooShort). `code` carries the error; the packet's bytes follow unparsed.
#include <core.p4>
#include <v1model.p4>

header L { bit<8> bits; bit<8> code; }
header V { varbit<16> opt; }

struct Headers { L l; V v; }
struct Meta {}

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.l);
        pkt.extract(hdr.v, (bit<32>)hdr.l.bits);
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.NoError) {
            hdr.l.code = 0;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            hdr.l.code = 1;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.l.code = 2;
        } else if (sm.parser_error == error.HeaderTooShort) {
            hdr.l.code = 3;
        } else {
            hdr.l.code = 4;
        }
        sm.egress_spec = 2;
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }

control Dep(packet_out pkt, in Headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;

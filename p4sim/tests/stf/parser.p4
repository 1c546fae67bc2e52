// Parser semantics: header stacks with .next/.last, select with values, ranges (..), masks
// (&&&), tuples and lookahead, verify with a program-defined error, and v1model's handling of
// parser errors (the packet continues into ingress with standard_metadata.parser_error set;
// headers extracted before the error stay valid; the unparsed rest is the payload).
#include <core.p4>
#include <v1model.p4>

error { BadValue }

header m_t { bit<8> mode; }
header tag_t { bit<8> kind; bit<8> val; }
header v_t { bit<8> val; }
header res_t { bit<8> err; bit<8> ntags; bit<8> path; }

struct headers_t {
    m_t      m;
    res_t    res;
    tag_t[3] tags;
    v_t      v;
}

struct meta_t { bit<8> path; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.m);
        transition select(hdr.m.mode) {
            0x00: parse_tags;
            0x01: parse_verify;
            0x10 .. 0x1f: in_range;
            0x20 &&& 0xf0: in_mask;
            0x30: parse_look;
            0x40: parse_reject;
            0x50: parse_tuple;
        }  // no default: anything else is error.NoMatch
    }
    state parse_tags {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.kind) {
            0: accept;
            default: parse_tags;
        }
    }
    state parse_verify {
        pkt.extract(hdr.v);
        verify(hdr.v.val == 0x42, error.BadValue);
        transition accept;
    }
    state in_range { meta.path = 1; transition accept; }
    state in_mask { meta.path = 2; transition accept; }
    state parse_look {
        transition select(pkt.lookahead<bit<16>>()) {
            0xabcd: look_full;
            0xab00 &&& 0xff00: look_half;
        }
    }
    state look_full { meta.path = 3; transition accept; }
    state look_half { meta.path = 4; transition accept; }
    state parse_reject { meta.path = 5; transition reject; }
    state parse_tuple {
        pkt.extract(hdr.v);
        transition select(hdr.v.val[7:4], hdr.v.val[3:0]) {
            (0x1, 0x2): tuple_a;
            (0x1, _): tuple_b;
            default: accept;
        }
    }
    state tuple_a { meta.path = 6; transition accept; }
    state tuple_b { meta.path = 7; transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        if (sm.parser_error == error.NoError) {
            hdr.res.err = 0;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.res.err = 1;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.res.err = 2;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            hdr.res.err = 3;
        } else if (sm.parser_error == error.BadValue) {
            hdr.res.err = 9;
        } else {
            hdr.res.err = 0xff;
        }
        bit<8> n = 0;
        if (hdr.tags[0].isValid()) { n = n + 1; }
        if (hdr.tags[1].isValid()) { n = n + 1; }
        if (hdr.tags[2].isValid()) { n = n + 1; }
        hdr.res.ntags = n;
        hdr.res.path = meta.path;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.m);
        pkt.emit(hdr.res);
        pkt.emit(hdr.tags);
        pkt.emit(hdr.v);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

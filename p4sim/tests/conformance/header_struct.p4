// Struct-typed header fields (P4_16 "Header types": a header may hold structs of bit<W>,
// int<W>, bool and serializable enums, nested too; p4c-bm2-ss flattens them into the
// header). Extracted and emitted in declaration order; read, written and compared by
// member and as a whole; copied with the header (a copy does not share the struct), zeroed
// by setValid(), hashed as part of the header, matched in a table key. Refused by p4sim
// before; p4c's bvec-hdr-bmv2 has the one sample.
#include <core.p4>
#include <v1model.p4>

enum bit<4> color_t { RED = 1, BLUE = 2 }

struct inner_t {
    bit<4>  lo;
    color_t c;
}

struct row_t {
    bit<8>  e;
    int<8>  s;
    inner_t inr;
    bit<1>  flag;
    bit<7>  pad;
}

header rowh_t {
    bit<8> tag;
    row_t  row;
    bit<8> tail;
}

header out_t {
    bit<8>  same;     // rows equal: 1
    bit<8>  diff;     // after a change to the copy: rows equal 1, else 0
    bit<16> hash;
    bit<8>  hit;
}

struct headers_t { out_t res; rowh_t a; rowh_t b; rowh_t c; }
struct meta_t { row_t saved; }

parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.row.inr.c) {
            color_t.BLUE: second;
            default: accept;
        }
    }
    state second {
        pkt.extract(hdr.b);
        transition accept;
    }
}

control vck(inout headers_t hdr, inout meta_t meta) { apply {} }

control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action hit(bit<8> v) { hdr.res.hit = v; }
    table by_row {
        key = { hdr.a.row.e : exact; hdr.a.row.inr.lo : ternary; }
        actions = { hit; NoAction; }
        const entries = {
            (0x11, 0x3 &&& 0xf) : hit(0xa1);
            (0x22, _) : hit(0xa2);
        }
    }
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        by_row.apply();
        // a copy of the header, then a change to the original: the copy keeps its struct
        hdr.c = hdr.a;
        hdr.res.same = hdr.c.row == hdr.a.row ? 8w1 : 8w0;
        hdr.a.row.e = hdr.a.row.e + 1;
        hdr.a.row.s = hdr.a.row.s - 3;
        hdr.res.diff = hdr.c == hdr.a ? 8w1 : 8w0;
        // a whole struct out of the header and back into another one
        meta.saved = hdr.c.row;
        meta.saved.inr.lo = meta.saved.inr.lo |+| 4w12;
        if (hdr.b.isValid()) {
            hdr.b.row = meta.saved;
            hdr.b.row.flag = ~hdr.b.row.flag;
        } else {
            hdr.b.setValid();  // zeroed, struct included
            hdr.b.tag = 0xbb;
        }
        hash(hdr.res.hash, HashAlgorithm.crc16, 16w0, { hdr.a, hdr.c.row.e, hdr.c.row.inr.lo }, 32w65536);
    }
}

control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control uck(inout headers_t hdr, inout meta_t meta) { apply {} }

control dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.c);
    }
}

V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;

// Arguments copied in and out of a nested control and an action as BMv2 runs p4c's copies
// (assign_header): an invalid header is copied as invalid and its fields are left, so the
// callee reads its own parameter's fields (0 here), not the caller's, and what the callee
// writes into an invalid header does not come back. Found by the program differential
// (progdiff): p4sim passed the caller's header fields in and out. p4c inlines a control call
// by reference unless two out/inout arguments overlap (sub2): then it copies them too.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; }
header b_t { bit<8> y; }
header res_t { bit<8> v0; bit<8> v1; bit<8> v2; bit<8> v3; bit<8> v4; bit<8> v5; bit<8> v6; bit<8> v7; }

struct headers_t { res_t res; a_t a; b_t b; }
struct meta_t {}

parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.x) {
            1: with_b;
            default: accept;
        }
    }
    state with_b {
        pkt.extract(hdr.b);
        transition accept;
    }
}

control vck(inout headers_t hdr, inout meta_t meta) { apply {} }

control sub(inout headers_t hdr) {
    apply {
        hdr.res.v0 = hdr.b.y;
        hdr.b.y = hdr.b.y + 8w0x55;
    }
}

// hdr and a field of it: p4c copies both in and out (they overlap)
control sub2(inout headers_t hdr, inout bit<8> x) {
    apply {
        hdr.res.v5 = hdr.b.y;
        hdr.b.y = 8w0x77;
        x = x + 1;
    }
}

// an in argument reading hdr does not count as an overlap: by reference again
control sub3(inout headers_t hdr, in bit<8> y) {
    apply {
        hdr.b.y = hdr.b.y + y;
    }
}

control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    sub() nested;
    sub2() nested2;
    sub3() nested3;
    action bump(inout b_t bb, in b_t seen) {
        hdr.res.v2 = seen.y;
        bb.y = bb.y + 8w0x11;
    }
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.b.y = hdr.b.y + 8w0x40;  // a write into b when it is invalid lands all the same
        nested.apply(hdr);
        hdr.res.v1 = hdr.b.y;
        bump(hdr.b, hdr.b);
        hdr.res.v3 = hdr.b.y;
        hdr.res.v4 = (bit<8>)(bit<1>)hdr.b.isValid();
        nested2.apply(hdr, hdr.a.x);
        hdr.res.v6 = hdr.b.y;
        nested3.apply(hdr, hdr.a.x + 8w1);
        hdr.res.v7 = hdr.b.y;
    }
}

control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control uck(inout headers_t hdr, inout meta_t meta) { apply {} }

control dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;

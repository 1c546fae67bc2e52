// Exact-width arithmetic (P4_16 spec 8.5-8.9): wrap-around, saturation, shifts, slices,
// concatenation, casts, signed values, literal forms. Input: header `ops` with a, b.
// Output: the input, then header `res` with one field per operation.
#include <core.p4>
#include <v1model.p4>

header ops_t {
    bit<8> a;
    bit<8> b;
}

header res_t {
    bit<8>  add;        // a + b (wraps)
    bit<8>  sub;        // a - b (wraps)
    bit<8>  mul;        // a * b (wraps)
    bit<8>  sat_add;    // a |+| b
    bit<8>  sat_sub;    // a |-| b
    bit<8>  shl;        // a << 3
    bit<8>  shr;        // a >> 1
    bit<8>  shl_big;    // a << b (b >= 8 gives 0)
    bit<16> concat;     // a ++ b
    bit<4>  slice;      // a[5:2]
    bit<4>  neg;        // -(a[3:0])
    bit<8>  not_a;      // ~a
    bit<8>  sshr;       // (bit<8>)((int<8>)a >> 2): arithmetic shift
    bit<8>  ssat;       // (bit<8>)((int<8>)a |+| 8s100)
    bit<16> sext;       // (bit<16>)(int<16>)(int<8>)a: sign extension
    bit<8>  lits;       // 8w255 + 0x01 + 0b1 + 0o7 + 1_0
    bit<8>  tern;       // a > b ? a : b
    bit<1>  cmp;        // (bit<1>)(a == b)
    bit<7>  div_mod;    // (a / 4)[6:0] when b == 0 else (a % 8)
}

struct headers_t {
    ops_t ops;
    res_t res;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ops);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> a = hdr.ops.a;
        bit<8> b = hdr.ops.b;
        hdr.res.setValid();
        hdr.res.add = a + b;
        hdr.res.sub = a - b;
        hdr.res.mul = a * b;
        hdr.res.sat_add = a |+| b;
        hdr.res.sat_sub = a |-| b;
        hdr.res.shl = a << 3;
        hdr.res.shr = a >> 1;
        hdr.res.shl_big = a << b;
        hdr.res.concat = a ++ b;
        hdr.res.slice = a[5:2];
        hdr.res.neg = -a[3:0];
        hdr.res.not_a = ~a;
        int<8> sa = (int<8>) a;
        hdr.res.sshr = (bit<8>) (sa >> 2);
        hdr.res.ssat = (bit<8>) (sa |+| 8s100);
        hdr.res.sext = (bit<16>) (int<16>) sa;
        hdr.res.lits = 8w255 + 0x01 + 0b1 + 0o7 + 1_0;
        hdr.res.tern = a > b ? a : b;
        hdr.res.cmp = (bit<1>) (a == b);
        if (b == 0) {
            hdr.res.div_mod = (a / 4)[6:0];
        } else {
            hdr.res.div_mod = (a % 8)[6:0];
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ops);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

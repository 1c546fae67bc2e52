// Equality of composite values (P4_16 8.17, 8.18) and varbit extraction into stack.next.
// Frame: k (1 byte: which comparison to report), two option headers with a varbit body
// (len byte + len bytes) extracted into opts.next, then p (2 bytes) and q (2 bytes).
#include <core.p4>
#include <v1model.p4>

header key_t { bit<8> k; }
header opt_t { bit<8> len; varbit<24> body; }
header pair_t { bit<8> a; bit<8> b; }
header result_t { bit<8> bits; }
struct pair_s { bit<8> a; bit<8> b; }
struct headers { key_t key; opt_t[2] opts; pair_t p; pair_t q; result_t r; }
struct metadata { }

parser P(packet_in pk, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.key);
        pk.extract(h.opts.next, (bit<32>)pk.lookahead<bit<8>>() * 8);
        pk.extract(h.opts.next, (bit<32>)pk.lookahead<bit<8>>() * 8);
        pk.extract(h.p);
        pk.extract(h.q);
        transition accept;
    }
}

control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.r.setValid();
        h.r.bits = 0;
        pair_t unset;                       // never valid
        pair_t unset2;
        opt_t[2] copy;                      // a second opt_t[2] type expression
        copy = h.opts;
        pair_s ps = { h.p.a, h.p.b };
        pair_s qs = { h.q.a, h.q.b };
        if (h.p == h.q) { h.r.bits[0:0] = 1; }               // valid, fields equal
        if (unset == unset2) { h.r.bits[1:1] = 1; }          // both invalid: equal
        if (unset != h.p) { h.r.bits[2:2] = 1; }             // invalid vs valid
        if (copy == h.opts) { h.r.bits[3:3] = 1; }           // stack copy
        if (h.opts[0] == h.opts[1]) { h.r.bits[4:4] = 1; }   // varbit bodies compared
        if (ps == qs) { h.r.bits[5:5] = 1; }                 // structs
        h.q.setInvalid();
        if (h.p != h.q) { h.r.bits[6:6] = 1; }               // now invalid vs valid
    }
}

control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers h, inout metadata m) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pk, in headers h) {
    apply { pk.emit(h.key); pk.emit(h.opts); pk.emit(h.p); pk.emit(h.q); pk.emit(h.r); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

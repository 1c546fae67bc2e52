// Constructor parameters of parsers and controls (P4_16 spec, "Instantiations", "Parser and
// control constructor parameters"): each instance is its own copy with the arguments bound,
// its objects named by the instance (I.add1.t and I.add2.t are two tables), and a control
// given as an argument is the instance the caller declared, shared by everything given it
// (Count's register `I.counter.hits` counts for both Twice instances).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct headers_t { h_t h; }
struct meta_t { }
enum bit<8> Op { ADD = 1, XOR = 2 }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm)(bit<9> out_port) {
    state start {
        pkt.extract(hdr.h);
        sm.egress_spec = out_port;
        transition accept;
    }
}

control Arith(inout bit<8> x)(Op op, bit<8> k) {
    action set(bit<8> v) { x = v; }
    table t {
        key = { x: exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (t.apply().miss) {
            if (op == Op.ADD) { x = x + k; } else { x = x ^ k; }
        }
    }
}

control Counting(inout bit<8> x);
control Count(inout bit<8> x) {
    register<bit<8>>(1) hits;
    apply {
        bit<8> n;
        hits.read(n, 0);
        n = n + 1;
        hits.write(0, n);
        x = n;
    }
}

control Twice(inout bit<8> x)(Counting c, bool twice) {
    apply {
        c.apply(x);
        if (twice) { c.apply(x); }
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Arith(Op.ADD, 8w1) add1;
    Arith(k = 8w0x0f, op = Op.XOR) xor;
    Arith(Op.ADD, 8w16) add16;
    Count() counter;
    Twice(counter, false) once;
    Twice(counter, true) twice;
    apply {
        add1.apply(hdr.h.a);
        xor.apply(hdr.h.b);
        add16.apply(hdr.h.c);
        once.apply(hdr.h.d);
        twice.apply(hdr.h.e);
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(2), VC(), I(), E(), CC(), D()) main;

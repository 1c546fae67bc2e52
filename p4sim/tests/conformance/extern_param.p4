#include <core.p4>
#include <v1model.p4>

// Extern objects as parameters of controls (spec 14.1: directionless parameters of an
// extern type): a register and a counter declared in ingress, used by a sub-control and,
// passed on, by the sub-control's own sub-control; a register declared at the top level;
// a hash (stateless) passed too. Each packet reads the cell it adds to, so the frames show
// the register's state.
header h_t { bit<8> idx; bit<8> add; bit<8> seen; bit<8> inner; bit<16> hashed; }
struct H { h_t h; }
struct M { }

register<bit<8>>(4) global_reg;

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}

control Inner(inout h_t h, register<bit<8>> r, counter c) {
    apply {
        bit<8> v;
        r.read(v, (bit<32>)h.idx + 1);  // the next cell: what the outer control wrote last
        h.inner = v;
        c.count((bit<32>)h.idx);
    }
}

control Outer(inout h_t h, register<bit<8>> r, counter c, register<bit<8>> g) {
    Inner() inner;
    apply {
        bit<8> v;
        r.read(v, (bit<32>)h.idx);
        h.seen = v;
        r.write((bit<32>)h.idx, v + h.add);
        r.write((bit<32>)h.idx + 1, h.add);
        inner.apply(h, r, c);
        bit<8> gv;
        g.read(gv, 0);
        g.write(0, gv + 1);
        h.hashed = (bit<16>)gv;
    }
}

control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(8) cells;
    counter(8, CounterType.packets) hits;
    Outer() outer;
    apply {
        outer.apply(hdr.h, cells, hits, global_reg);
        sm.egress_spec = 2;
    }
}

control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

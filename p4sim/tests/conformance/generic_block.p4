#include <core.p4>
#include <v1model.p4>

// Generic parsers and controls: one declaration instantiated with two type arguments each
// (`Keep<bit<8>>()`, `Keep<b_t>()`, `Swap<...>`), beside a control with a table, their
// bodies checked with the type parameters unknown, as p4c checks them (no extract into a T,
// no table key of a T).
header a_t { bit<8> x; bit<8> y; }
header b_t { bit<16> v; }
struct H { a_t a; b_t b; b_t b2; }
struct M { }

parser Keep<T>(packet_in pk, in T v, out T o) {
    state start { o = v; transition accept; }
}
control Swap<T>(inout T p, inout T q) {
    apply { T t = p; p = q; q = t; }
}
control Lookup(in bit<16> k, out bit<8> hit) {
    action found(bit<8> v) { hit = v; }
    action none() { hit = 0; }
    table t {
        key = { k : exact; }
        actions = { found; none; }
        default_action = none();
    }
    apply { t.apply(); }
}

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    Keep<bit<8>>() keep8;
    Keep<b_t>() keep_b;
    state start {
        pk.extract(hdr.a);
        pk.extract(hdr.b);
        keep8.apply(pk, hdr.a.x + 1, hdr.a.y);
        keep_b.apply(pk, hdr.b, hdr.b2);
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Swap<bit<8>>() swap8;
    Swap<b_t>() swap_b;
    Lookup() lookup;
    apply {
        swap8.apply(hdr.a.x, hdr.a.y);
        hdr.b2.setValid();
        hdr.b2.v = 0xbeef;
        swap_b.apply(hdr.b, hdr.b2);
        lookup.apply(hdr.b2.v, hdr.a.x);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

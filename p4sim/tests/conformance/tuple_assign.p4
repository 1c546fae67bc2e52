// Tuple assignment (P4_16 "Tuples"): a whole tuple to a variable, to a struct field and as
// an inout copy-out, which p4sim's interpreter once ignored, keeping the old value; a struct
// copied from another must not share the tuple with it afterwards; one element (p4c's
// issue4057), which p4sim refused; `...` for the items or fields left at their defaults.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct H { h_t h; }
struct M { }
struct S { tuple<bit<8>, bit<8>> t; }

void fill(inout tuple<bit<8>, bit<8>> x, in bit<8> v) { x = { v, v + 1 }; }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        tuple<bit<8>, bit<8>> t = { 1, 2 };
        if (hdr.h.a == 5) { t = { hdr.h.b, 7 }; }
        S s1 = { { 10, 11 } };
        S s2 = { ... };
        s2 = s1;
        s1.t = { hdr.h.c, hdr.h.c };  // s2 keeps { 10, 11 }
        tuple<bit<8>, bit<8>> u = { 0, ... };
        fill(u, hdr.h.d);
        u[1] = u[1] + 1;
        hdr.h.a = t[0];
        hdr.h.b = t[1];
        hdr.h.c = s2.t[0] + s1.t[1];
        hdr.h.d = u[0];
        hdr.h.e = u[1];
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

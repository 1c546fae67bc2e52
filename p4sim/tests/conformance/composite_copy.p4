// Copies of composite values that hold other composites: a struct with a nested struct and
// a header stack copied whole, changed through a function's inout parameter (copy-in,
// copy-out) and a stack copied out of it; each copy keeps its own values. The function's
// setValid() also once crashed p4sim when a second device of the program ran it.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
header s_t { bit<8> x; }
struct In { bit<8> p; bit<8> q; }
struct Out { In i; s_t[2] st; }
struct H { h_t h; }
struct M { }
void bump(inout Out o, in bit<8> v) { o.i.q = v; o.st[1].setValid(); o.st[1].x = v + 1; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        Out o1;
        o1.i = { hdr.h.a, 0 };
        o1.st[0].setValid(); o1.st[0].x = hdr.h.b;
        o1.st[1].setInvalid();
        Out o2 = o1;
        bump(o1, hdr.h.c);
        s_t[2] st2 = o1.st;
        o1.st[0].x = 99;
        hdr.h.a = o2.i.p;
        hdr.h.b = o1.i.q;
        hdr.h.c = st2[0].x;
        hdr.h.d = st2[1].isValid() ? st2[1].x : 8w0xEE;
        hdr.h.e = o2.st[1].isValid() ? 8w1 : 8w0;
        hdr.h.f = o1.st[0].x;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

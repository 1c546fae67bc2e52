// Tuples as `in` and `inout` function parameters (elements read and swapped), inside a
// struct (initialized from a list, copied, an element assigned through the copy) and in
// the comparison of two such structs.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct S { bit<8> x; tuple<bit<8>, bool> t; }
struct H { h_t h; }
struct M { }
bit<8> sum(in tuple<bit<8>, bit<8>> p) { return p[0] + p[1]; }
void swap(inout tuple<bit<8>, bit<8>> p) { bit<8> t = p[0]; p[0] = p[1]; p[1] = t; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        tuple<bit<8>, bit<8>> p = { hdr.h.a, hdr.h.b };
        hdr.h.c = sum(p);
        swap(p);
        hdr.h.a = p[0];
        hdr.h.b = p[1];
        S s1 = { 1, { hdr.h.c, true } };
        S s2 = s1;
        s2.t[1] = false;
        s2.t[0] = s2.t[0] + 1;
        hdr.h.d = s1 == s2 ? 8w1 : 8w0;
        hdr.h.e = (s1.t[1] ? 8w0x10 : 8w0) | (s2.t[1] ? 8w0x01 : 8w0) + s2.t[0];
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

#include <core.p4>
#include <v1model.p4>

// Generic functions: the type argument inferred from the arguments or given, two
// specialisations of one function (bit<8>, bit<16>) and an inout swap of struct values.
// The body of a generic function is checked as p4c checks it, with its type parameters
// unknown (no `x > y` on a T).
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; bit<8> e; bit<8> f; }
struct H { h_t h; }
struct pair_t { bit<8> l; bit<8> r; }
struct M { pair_t p; pair_t q; }

T pick<T>(in bool first, in T x, in T y) {
    if (first) {
        return x;
    }
    return y;
}
void swap<T>(inout T x, inout T y) { T t = x; x = y; y = t; }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.h.a = pick(hdr.h.a > hdr.h.b, hdr.h.a, hdr.h.b);
        hdr.h.c = pick<bit<16>>(false, hdr.h.c, hdr.h.d);
        m.p = { hdr.h.e, 1 };
        m.q = { hdr.h.f, 2 };
        swap(m.p, m.q);
        hdr.h.e = m.p.l + m.p.r;
        hdr.h.f = m.q.l + m.q.r;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

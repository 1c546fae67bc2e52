#include <core.p4>
#include <v1model.p4>

// `...` in initializers (P4_16 1.2.4): the fields or items not written take their default
// values (0, false, a header invalid, error.NoError), by name and by position, for structs,
// headers (which the initializer makes valid), and `{ ... }` alone (tuples: tuple_assign).
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
header e_t { bit<8> p; bit<8> q; }
struct S { bit<8> x; bool y; e_t e; error err; }
struct H { h_t h; e_t e; e_t e2; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        S s = { x = hdr.h.a, y = true, ... };
        hdr.h.b = (s.e.isValid() ? 8w1 : 8w0) + (s.err == error.NoError ? 8w2 : 8w0);
        hdr.e = { p = hdr.h.a + 1, ... };
        hdr.e2 = { 9, ... };
        S t = { ... };
        hdr.h.c = t.x + (t.y ? 8w1 : 8w0) + s.x;
        hdr.h.d = 5;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

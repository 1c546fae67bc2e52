#include <core.p4>
#include <v1model.p4>

// Generic structs and headers (P4_16 1.2.2): one header type given two element widths, a
// generic struct holding a generic header and a stack of one, a typedef of a
// specialisation, a generic struct of a generic header and a cast of a struct initializer to one.
header pair_t<T> { T a; T b; }
struct wrap_t<T> { T inner; bit<8> tag; }
struct holder_t<T> { pair_t<T> p; pair_t<T>[2] st; }
typedef wrap_t<bit<16>> wide_t;

struct H { holder_t<bit<8>> small; pair_t<bit<16>> big; }
struct M { wrap_t<pair_t<bit<8>>> nested; wide_t w; }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.small.p);
        pk.extract(hdr.small.st.next);
        pk.extract(hdr.big);
        transition accept;
    }
}

control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.nested = (wrap_t<pair_t<bit<8>>>){ inner = { a = hdr.small.p.a, b = 1 }, tag = 2 };
        m.w = { inner = hdr.big.a + hdr.big.b, tag = 3 };
        hdr.small.st[1].setValid();
        hdr.small.st[1].a = m.nested.inner.a + m.nested.tag;
        hdr.small.st[1].b = m.w.inner[7:0] + m.w.tag;
        hdr.big.a = hdr.small.st[0].a ++ hdr.small.st[0].b;
        sm.egress_spec = 1;
    }
}

control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

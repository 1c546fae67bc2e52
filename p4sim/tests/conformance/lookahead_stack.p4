#include <core.p4>
#include <v1model.p4>

// lookahead<S>() of a struct holding a header and a header stack (p4c's issue2465-bmv2):
// every header of the value is valid, with the bits ahead of the packet's position, which
// lookahead does not move.
header h1 { bit<8> f1; }
header h2 { bit<4> a; bit<4> b; }
struct s { h2 first; h1[3] h; }
header out_t { bit<8> v0; bit<8> v1; bit<8> v2; bit<8> valid; bit<8> n; }
struct H { out_t o; h1[3] hs; }
struct M { }

parser P(packet_in b, out H hdr, inout M meta, inout standard_metadata_t std) {
    state start {
        s l = b.lookahead<s>();
        hdr.o.setValid();
        hdr.o.v0 = l.h[0].f1;
        hdr.o.v1 = l.h[1].f1;
        hdr.o.v2 = l.h[2].f1 + (bit<8>)l.first.a;
        hdr.o.valid = (l.h[2].isValid() ? 8w1 : 8w0) + (l.first.isValid() ? 8w2 : 8w0);
        transition select(l.first.b) {
            1: one;
            default: accept;
        }
    }
    state one {
        b.extract(hdr.hs.next);
        hdr.o.n = 1;
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// An enum without a type and an error as hash data (p4c's issue2201-bmv2 logs one, its
// v1model-digest-containing-ser-enum digests one): p4c-bm2-ss gives both 32 bits, the value
// being the member's place (error: its code). The identity hash shows the value, crc32 over
// a list and over a struct the width.
#include <core.p4>
#include <v1model.p4>

enum Color { RED, GREEN, BLUE }

header h_t { bit<8> op; bit<32> c; bit<32> e; bit<32> list_crc; bit<32> struct_crc; }
struct S { Color c; error e; bit<8> op; }
struct H { h_t h; }
struct M { }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        S s = { Color.RED, error.NoError, hdr.h.op };
        if (hdr.h.op == 1) { s.c = Color.GREEN; s.e = error.PacketTooShort; }
        if (hdr.h.op == 2) { s.c = Color.BLUE; s.e = error.NoMatch; }
        hash(hdr.h.c, HashAlgorithm.identity, 32w0, { s.c }, 32w0xffffffff);
        hash(hdr.h.e, HashAlgorithm.identity, 32w0, { s.e }, 32w0xffffffff);
        hash(hdr.h.list_crc, HashAlgorithm.crc32, 32w0, { s.c, s.e, hdr.h.op }, 32w0xffffffff);
        hash(hdr.h.struct_crc, HashAlgorithm.crc32, 32w0, s, 32w0xffffffff);
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

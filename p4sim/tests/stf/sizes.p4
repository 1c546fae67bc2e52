// Tuple elements by constant index (spec 8.11) and the compile-time size methods
// minSizeInBits/minSizeInBytes/maxSizeInBits/maxSizeInBytes (spec 8.9).
#include <core.p4>
#include <v1model.p4>

header opt_t { bit<4> kind; bit<4> len; varbit<60> data; }
header out_t { bit<16> min_bits; bit<8> min_bytes; bit<16> max_bits; bit<8> max_bytes;
               bit<8> first; bit<16> second; }
struct headers { out_t o; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.o); transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        opt_t opt;
        tuple<bit<8>, bit<16>> t = { hdr.o.first + 1, 0xbeef };
        hdr.o.min_bits = (bit<16>)opt.minSizeInBits();      // 8: the varbit counts 0
        hdr.o.min_bytes = (bit<8>)opt.minSizeInBytes();     // 1
        hdr.o.max_bits = (bit<16>)opt.maxSizeInBits();      // 68
        hdr.o.max_bytes = (bit<8>)opt.maxSizeInBytes();     // 9 (rounded up)
        hdr.o.first = t[0];
        hdr.o.second = t[1];
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// static_assert (core.p4, 2023): a compile-time check that is `true` where it holds, usable
// as a constant and as a statement; a failing one is a compile-time error (the error case
// is in test_lang_rejects.py).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

const bool checked = static_assert(V1MODEL_VERSION >= 20180101, "v1model too old");
const bit<8> WIDTH = 8;

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        static_assert(WIDTH == 8);
        static_assert(WIDTH * 2 == 16, "arithmetic");
        hdr.h.b = checked ? 8w1 : 8w2;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

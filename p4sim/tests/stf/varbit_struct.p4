// A varbit in a struct (metadata here): the spec allows varbit fields outside headers, and a
// copy carries the value and its width. p4c-bm2-ss compiles this, but simple_switch cannot
// load it ("Invalid reference to object of type 'header' with name 'userMetadata.saved'"),
// so it is checked on p4sim only. An unused one is p4c's issue1291-bmv2.
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> n; }
header opt_t { varbit<32> data; }
struct H { len_t l; opt_t o; opt_t o2; }
struct M { varbit<32> saved; bit<8> n; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.l);
        pk.extract(hdr.o, (bit<32>)hdr.l.n * 8);
        transition accept;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        m.saved = hdr.o.data;
        hdr.o2.setValid();
        hdr.o2.data = m.saved;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control VC(inout H hdr, inout M m) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

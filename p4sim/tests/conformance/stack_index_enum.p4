// A header stack indexed by a serializable enum, over bit<8> and over int<8> (p4c's
// issue2726-bmv2): the index is the enum's underlying value. Out-of-range indices are left
// out: simple_switch 1.15.5 aborts on one (std::out_of_range).
#include <core.p4>
#include <v1model.p4>
enum bit<8> UIdx { A = 0, B = 1, C = 2, FAR = 7 }
enum int<8> SIdx { ZERO = 0, ONE = 1, NEG = -1 }
header sel_t { bit<8> u; int<8> s; }
header e_t { bit<8> v; }
struct H { sel_t sel; e_t[3] st; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.sel); pk.extract(hdr.st[0]); pk.extract(hdr.st[1]); pk.extract(hdr.st[2]); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        UIdx u = (UIdx) hdr.sel.u;
        SIdx s = (SIdx) hdr.sel.s;
        hdr.st[u].v = hdr.st[u].v + 0x10;
        hdr.st[s].v = hdr.st[s].v + 1;
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.sel); pk.emit(hdr.st); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

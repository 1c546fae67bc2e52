// A register whose element type is a serializable enum (p4c's register-serenum-bmv2): its
// cells hold the enum's underlying bit<16>, written from a header field of the enum type and
// read back into another; P4Info names the enum in the register's type_spec.
#include <core.p4>
#include <v1model.p4>

enum bit<16> EthType { IPV4 = 0x0800, ARP = 0x0806, VLAN = 0x8100 }

header h_t { bit<8> op; EthType t; EthType last; }
struct H { h_t h; }
struct M { }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<EthType>(2) seen;
    apply {
        bit<1> cell = hdr.h.op[0:0];
        seen.read(hdr.h.last, (bit<32>)cell);  // what this cell held before
        seen.write((bit<32>)cell, hdr.h.t);
        if (hdr.h.last == EthType.ARP) {
            hdr.h.op = 0xAA;
        }
        sm.egress_spec = 1;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// A top-level action renamed by @name: its entries name it by the new name, and a table
// hit runs it (p4sim bound it under its declared name and crashed on the hit).
#include <core.p4>
#include <v1model.p4>

header H { bit<8> k; bit<8> v; }

struct Headers { H h; }
struct Meta {}

@name("stamp") action set_v(inout H h, bit<8> v) { h.v = v; }
action plain(inout H h) { h.v = 0xee; }

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    table t {
        key = { hdr.h.k: exact; }
        actions = { set_v(hdr.h); plain(hdr.h); NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        sm.egress_spec = 2;
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }
control Dep(packet_out pkt, in Headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;

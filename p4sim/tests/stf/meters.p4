// Meters (two-rate three-color marker, RFC 2698, as in BMv2): an indirect packet meter and a
// direct meter on a table. Colors: 0 green, 1 yellow, 2 red. Unconfigured meters: green.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> idx; bit<8> color; bit<8> dcolor; }
struct headers_t { h_t h; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) m;
    direct_meter<bit<8>>(MeterType.packets) dm;

    action read_color() { dm.read(hdr.h.dcolor); }
    table t {
        key = { hdr.h.idx: exact; }
        actions = { read_color; NoAction; }
        meters = dm;
        default_action = NoAction();
    }
    apply {
        m.execute_meter((bit<32>) hdr.h.idx, hdr.h.color);
        t.apply();
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;

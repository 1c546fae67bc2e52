// setValid() on a header with a varbit field, as simple_switch does it: add_header zeroes
// the fields (Header::reset) but the varbit keeps the width it had, so a header extracted,
// made invalid and valid again emits its varbit as zeros of that width, and the egress
// packet_length counts it again. A varbit never extracted in this packet has no width (BMv2
// resets it between packets). p4sim gave the varbit width 0 (found checking the
// packet_length rule, tests/conformance/packet_length).
#include <core.p4>
#include <v1model.p4>
header op_t { bit<8> kind; }
header l_t { bit<8> n; }
header v_t { bit<8> tag; varbit<32> data; }
header res_t { bit<16> elen; }
struct headers_t { res_t res; op_t op; l_t l; v_t v; }
struct meta_t {}
parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        transition select(hdr.op.kind) {
            3: accept;  // v not extracted: its varbit has no width
            default: with_v;
        }
    }
    state with_v {
        pkt.extract(hdr.l);
        pkt.extract(hdr.v, (bit<32>)hdr.l.n * 8);
        transition accept;
    }
}
control vck(inout headers_t hdr, inout meta_t meta) { apply {} }
control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.op.kind == 1) { hdr.v.setInvalid(); }
        else if (hdr.op.kind == 2) { hdr.v.setInvalid(); hdr.v.setValid(); }
        else if (hdr.op.kind == 3) { hdr.v.setValid(); }
    }
}
control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.res.setValid(); hdr.res.elen = (bit<16>)sm.packet_length; }
}
control uck(inout headers_t hdr, inout meta_t meta) { apply {} }
control dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.res); pkt.emit(hdr.op); pkt.emit(hdr.l); pkt.emit(hdr.v); } }
V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;

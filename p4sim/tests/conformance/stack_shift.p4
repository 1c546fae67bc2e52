// pop_front and push_front as BMv2 does them (bm_sim/stacks.cpp): elements swap values, so
// an element made invalid holds what an element shifted out held, and a program may read
// it. Found by the program differential (progdiff): p4sim copied elements and left the
// invalid ones as they were.
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> kind; }
header e_t { bit<8> v; }
header out_t { bit<8> v0; bit<8> v1; bit<8> v2; bit<8> valid; }

struct headers_t { op_t op; e_t[3] st; out_t res; }
struct meta_t {}

parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        pkt.extract(hdr.st.next);
        pkt.extract(hdr.st.next);
        pkt.extract(hdr.st.next);
        transition accept;
    }
}

control vck(inout headers_t hdr, inout meta_t meta) { apply {} }

control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.op.kind == 1) {
            hdr.st.pop_front(1);
        } else if (hdr.op.kind == 2) {
            hdr.st.pop_front(2);
        } else if (hdr.op.kind == 3) {
            hdr.st.push_front(1);
        } else if (hdr.op.kind == 4) {
            hdr.st.push_front(2);
        }
        hdr.res.setValid();
        hdr.res.v0 = hdr.st[0].v;
        hdr.res.v1 = hdr.st[1].v;
        hdr.res.v2 = hdr.st[2].v;
        hdr.res.valid = 5w0 ++ (bit<1>)hdr.st[2].isValid() ++ (bit<1>)hdr.st[1].isValid()
                        ++ (bit<1>)hdr.st[0].isValid();
    }
}

control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control uck(inout headers_t hdr, inout meta_t meta) { apply {} }

control dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.op);
        pkt.emit(hdr.st);
    }
}

V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;

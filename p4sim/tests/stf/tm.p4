// The v1model traffic manager as BMv2 runs it: multicast replicas (egress_rid),
// I2E and E2E clones with preserved metadata (@field_list), clone truncation, resubmit
// and recirculate, truncate, and the instance_type each copy carries.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> mode;
    bit<8> itype;   // standard_metadata.instance_type seen in egress (0 after resubmit)
    bit<8> rid;     // egress_rid
    bit<8> eport;   // egress_port
    bit<8> keep;    // meta.keep (preserved by field list 1)
    bit<8> nokeep;  // meta.nokeep (not preserved)
    bit<8> passes;  // incremented by every ingress pass
}

struct headers_t { h_t h; }

struct meta_t {
    @field_list(1)
    bit<8> keep;
    bit<8> nokeep;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.passes = hdr.h.passes + 1;
        if (hdr.h.mode == 0) {
            sm.mcast_grp = 1;
        } else if (hdr.h.mode == 1) {
            sm.egress_spec = 2;
            meta.keep = 0xab;
            meta.nokeep = 0xcd;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.h.mode == 2) {
            sm.egress_spec = 2;
            meta.keep = 0xab;
            meta.nokeep = 0xcd;
        } else if (hdr.h.mode == 3) {
            if (sm.instance_type == 0) {
                meta.keep = 0x11;
                meta.nokeep = 0x22;
                sm.egress_spec = 2;
                resubmit_preserving_field_list(1);
            } else {
                sm.egress_spec = 3;
            }
        } else if (hdr.h.mode == 4) {
            if (sm.instance_type == 0) {
                sm.egress_spec = 4;
            } else {
                sm.egress_spec = 5;
            }
        } else if (hdr.h.mode == 5) {
            sm.egress_spec = 2;
            clone(CloneType.I2E, 6);
        } else if (hdr.h.mode == 7) {
            sm.egress_spec = 2;
            truncate(3);
        } else {
            sm.mcast_grp = 9;  // no such group: no copies
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.itype = (bit<8>) sm.instance_type;
        hdr.h.rid = (bit<8>) sm.egress_rid;
        hdr.h.eport = (bit<8>) sm.egress_port;
        hdr.h.keep = meta.keep;
        hdr.h.nokeep = meta.nokeep;
        if (hdr.h.mode == 2 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 5, 1);
        }
        // not `sm.instance_type == 0`: egress sees 0 on the recirculated pass too (BMv2)
        if (hdr.h.mode == 4 && meta.keep == 0) {
            meta.keep = 0x33;
            recirculate_preserving_field_list(1);
        }
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

/* The traffic manager as TNA describes it (tofino1_base.p4): unicast to
 * ig_tm_md.ucast_egress_port, multicast through mcast_grp_a (and mcast_grp_b: the copies of
 * both groups) with one copy per replica whose
 * egress sees its egress_rid and egress_port, bypass_egress, drop_ctl in the ingress and the
 * egress deparser metadata (bit 0 stops unicast and multicast; bit 1 only copy-to-cpu), and
 * no output when ingress chose neither a port nor a group.
 * The probe's op says what ingress does; egress stamps what it saw. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header probe_h {
    bit<8> op;
    MulticastGroupId_t group;
    bit<16> rid;        // eg_intr_md.egress_rid, written by egress
    bit<16> port;       // eg_intr_md.egress_port, written by egress
    bit<8> egress_seen; // 1 once egress ran
}

struct headers_t { probe_h probe; }
struct metadata_t { }

const bit<8> OP_UNICAST = 0;
const bit<8> OP_BYPASS_EGRESS = 1;
const bit<8> OP_MULTICAST = 2;
const bit<8> OP_INGRESS_DROP = 3;
const bit<8> OP_EGRESS_DROP = 4;
const bit<8> OP_NO_DESTINATION = 5;
const bit<8> OP_NO_COPY_TO_CPU = 6;
const bit<8> OP_MULTICAST_DROP = 7;
const bit<8> OP_TWO_GROUPS = 8;  // mcast_grp_a = group, mcast_grp_b = group + 1

parser TmIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control TmIngress(inout headers_t hdr, inout metadata_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.probe.op == OP_UNICAST || hdr.probe.op == OP_EGRESS_DROP) {
            ig_tm_md.ucast_egress_port = 1;
        } else if (hdr.probe.op == OP_BYPASS_EGRESS) {
            ig_tm_md.ucast_egress_port = 2;
            ig_tm_md.bypass_egress = 1;
        } else if (hdr.probe.op == OP_MULTICAST) {
            ig_tm_md.mcast_grp_a = hdr.probe.group;
        } else if (hdr.probe.op == OP_INGRESS_DROP) {
            ig_tm_md.ucast_egress_port = 1;
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.probe.op == OP_NO_COPY_TO_CPU) {
            ig_tm_md.ucast_egress_port = 1;
            ig_dprsr_md.drop_ctl = 2;
        } else if (hdr.probe.op == OP_TWO_GROUPS) {
            ig_tm_md.mcast_grp_a = hdr.probe.group;
            ig_tm_md.mcast_grp_b = hdr.probe.group + 1;
        } else if (hdr.probe.op == OP_MULTICAST_DROP) {
            ig_tm_md.mcast_grp_a = hdr.probe.group;
            ig_dprsr_md.drop_ctl = 1;
        }
    }
}

control TmIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser TmEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control TmEgress(inout headers_t hdr, inout metadata_t md,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        hdr.probe.egress_seen = 1;
        hdr.probe.port = (bit<16>)eg_intr_md.egress_port;
        if (hdr.probe.op == OP_MULTICAST || hdr.probe.op == OP_TWO_GROUPS) {
            hdr.probe.rid = eg_intr_md.egress_rid;
        }
        if (hdr.probe.op == OP_EGRESS_DROP) {
            eg_dprsr_md.drop_ctl = 1;
        }
    }
}

control TmEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(TmIngressParser(), TmIngress(), TmIngressDeparser(),
         TmEgressParser(), TmEgress(), TmEgressDeparser()) pipe;

Switch(pipe) main;

// TNA L2Forwarding: the port table of include/l2_forwarding.p4 (uplink, ARP, other hosts).
#ifndef DC_TNA_L2_FORWARDING_P4
#define DC_TNA_L2_FORWARDING_P4

#include "../headers.p4"

control L2Forwarding(inout parsed_headers_t hdr,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    action forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    // Replicate to the ports of a multicast group (written as a P4Runtime PRE entry).
    action flood(bit<16> mcast_grp) {
        ig_tm_md.mcast_grp_a = mcast_grp;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    table l2_forwards {
        key = {
            ig_intr_md.ingress_port: exact @name("ingress_port");
            hdr.ethernet.ether_type: ternary @name("ether_type");
        }
        actions = {
            forward;
            flood;
            @defaultonly drop;
        }
        const default_action = drop();
        size = L2_FORWARDS_SIZE;
    }

    apply {
        l2_forwards.apply();
    }
}

#endif // DC_TNA_L2_FORWARDING_P4

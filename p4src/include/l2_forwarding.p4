// Everything that is not a configured user's downlink: uplink from the legs to the server,
// ARP, other hosts' traffic. Keyed by ingress port and (ternary) ethertype, so the
// controller says "leg ports -> server port" and "ARP from the server -> flood the legs".
// No matching entry: drop.
#ifndef DC_L2_FORWARDING_P4
#define DC_L2_FORWARDING_P4

#include "headers.p4"

control L2Forwarding(inout parsed_headers_t hdr,
                     inout local_metadata_t meta,
                     inout standard_metadata_t std_meta) {

    action forward(bit<9> port) {
        std_meta.egress_spec = port;
    }

    // Replicate to the ports of a multicast group (written as a P4Runtime PRE entry).
    action flood(bit<16> mcast_grp) {
        std_meta.mcast_grp = mcast_grp;
    }

    action drop() {
        mark_to_drop(std_meta);
    }

    table l2_forwards {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
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

#endif // DC_L2_FORWARDING_P4

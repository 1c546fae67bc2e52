// Egress: counts every frame sent per egress port (so per leg, duplicates included) and
// rewrites the MAC addresses per egress port when the controller configured it, so that a
// host behind that port accepts the frame. Without an entry the frame leaves unchanged.
#ifndef DC_EGRESS_P4
#define DC_EGRESS_P4

#include "headers.p4"

control DcEgress(inout parsed_headers_t hdr,
                 inout local_metadata_t meta,
                 inout standard_metadata_t std_meta) {

    counter(MAX_PORTS, CounterType.packets_and_bytes) port_tx_counter;

    action set_macs(mac_addr_t src_mac, mac_addr_t dst_mac) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    action set_src_mac(mac_addr_t src_mac) {
        hdr.ethernet.src_addr = src_mac;
    }

    table egress_macs {
        key = {
            std_meta.egress_port: exact @name("egress_port");
        }
        actions = {
            set_macs;
            set_src_mac;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = EGRESS_MACS_SIZE;
    }

    apply {
        port_tx_counter.count((bit<32>) std_meta.egress_port);
#ifdef DC_ADAPTIVE
        if (std_meta.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = std_meta.ingress_port;
            hdr.packet_in._pad = 0;
            return;
        }
#endif // DC_ADAPTIVE
        egress_macs.apply();
    }
}

#endif // DC_EGRESS_P4

// TNA egress: per-port transmit counter and MAC rewrite, as include/egress.p4, and the
// PDCP shim of a DC frame put behind Ethernet (bridged from ingress: include/headers.p4).
#ifndef DC_TNA_EGRESS_P4
#define DC_TNA_EGRESS_P4

#include "parser.p4"

// Bytes of the PDCP header and inner ethertype: 5 (18-bit SN) or 4 (12-bit SN).
#define PDCP_SHIM_BYTES ((1 + PDCP_R_WIDTH + PDCP_SN_WIDTH) / 8 + 2)

control DcEgress(inout egress_headers_t hdr,
                 inout egress_metadata_t meta,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {

    Counter<bit<64>, PortId_t>(MAX_PORTS, CounterType_t.PACKETS_AND_BYTES) port_tx_counter;

    action set_macs(mac_addr_t src_mac, mac_addr_t dst_mac) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    action set_src_mac(mac_addr_t src_mac) {
        hdr.ethernet.src_addr = src_mac;
    }

    table egress_macs {
        key = {
            eg_intr_md.egress_port: exact @name("egress_port");
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
        // Egress counts the ingress deparser's bytes: the frame as received plus the bridged
        // shim, which every frame carries; without it, that is the frame as v1model counts it.
        port_tx_counter.count(eg_intr_md.egress_port, PDCP_SHIM_BYTES);
        if (hdr.pdcp.d_c == 0) {
            // No DC frame: the bridged shim was only a marker.
            hdr.pdcp.setInvalid();
            hdr.inner_ethertype.setInvalid();
        }
        egress_macs.apply();
    }
}

#endif // DC_TNA_EGRESS_P4

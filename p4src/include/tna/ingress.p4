// TNA ingress: as the v1model DcIngress (include/ingress.p4): drop frames the parser could
// not read, then a user's downlink (per-user table, numbering, leg choice) or the port table.
#ifndef DC_TNA_INGRESS_P4
#define DC_TNA_INGRESS_P4

#include "../headers.p4"
#include "ue_sessions.p4"
#include "pdcp_sequencer.p4"
#include "l2_forwarding.p4"

control DcIngress(inout parsed_headers_t hdr,
                  inout local_metadata_t meta,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, PortId_t>(MAX_PORTS, CounterType_t.PACKETS_AND_BYTES) port_rx_counter;

    UeSessions() ue_sessions;
    PdcpSequencer() pdcp_sequencer;
    L2Forwarding() l2_forwarding;

    apply {
        port_rx_counter.count(ig_intr_md.ingress_port);
        // Every frame bridges a shim to egress (include/headers.p4); d_c = 0: none.
        hdr.shim_pdcp.setValid();
        hdr.shim_pdcp.d_c = 0;
        hdr.shim_pdcp.reserved = 0;
        hdr.shim_pdcp.sn = 0;
        hdr.shim_ethertype.setValid();
        hdr.shim_ethertype.ether_type = 0;
        if (ig_prsr_md.parser_err != 0) {
            // Truncated headers: the frame cannot be classified safely.
            ig_dprsr_md.drop_ctl = 1;
        } else {
            ue_sessions.apply(hdr, meta, ig_tm_md);
            if (meta.dc_mode == DC_MODE_SPLIT || meta.dc_mode == DC_MODE_DUP) {
                pdcp_sequencer.apply(hdr, meta, ig_tm_md);
            } else if (meta.dc_mode == DC_MODE_NONE) {
                l2_forwarding.apply(hdr, ig_intr_md, ig_dprsr_md, ig_tm_md);
            }
        }
    }
}

#endif // DC_TNA_INGRESS_P4

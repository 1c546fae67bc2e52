// Ingress: drop frames the parser could not read, then either a user's downlink (per-user
// table, then numbering and leg choice for DC users) or the port table for everything else.
// Counts every received frame per ingress port.
#ifndef DC_INGRESS_P4
#define DC_INGRESS_P4

#include "headers.p4"
#include "ue_sessions.p4"
#include "pdcp_sequencer.p4"
#include "l2_forwarding.p4"
#ifdef DC_ADAPTIVE
#include "leg_credit.p4"
#endif // DC_ADAPTIVE

control DcIngress(inout parsed_headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t std_meta) {

    counter(MAX_PORTS, CounterType.packets_and_bytes) port_rx_counter;

    UeSessions() ue_sessions;
    PdcpSequencer() pdcp_sequencer;
    L2Forwarding() l2_forwarding;
#ifdef DC_ADAPTIVE
    LegCredit() leg_credit;
#endif // DC_ADAPTIVE

    apply {
        port_rx_counter.count((bit<32>) std_meta.ingress_port);
        if (std_meta.parser_error != error.NoError) {
            // Truncated headers: the frame cannot be classified safely.
            mark_to_drop(std_meta);
        } else {
            ue_sessions.apply(hdr, meta, std_meta);
            if (meta.dc_mode == DC_MODE_SPLIT || meta.dc_mode == DC_MODE_DUP) {
                pdcp_sequencer.apply(hdr, meta, std_meta);
            } else if (meta.dc_mode == DC_MODE_NONE) {
                l2_forwarding.apply(hdr, meta, std_meta);
            }
#ifdef DC_ADAPTIVE
            // A feedback report refills its leg's credit and goes to the controller (whatever
            // the port table chose); a split_credit user's packet gets its leg by credit.
            if (hdr.feedback.isValid() || meta.by_credit == 1) {
                leg_credit.apply(hdr, meta, std_meta);
            }
#endif // DC_ADAPTIVE
        }
    }
}

#endif // DC_INGRESS_P4

// Numbers a DC user's downlink packet and, for a split user, picks its leg by the batch
// position. Registers hold only data-plane state, indexed by user: the next PDCP SN, the
// position inside the current batch, and the session that owns the index. The knobs (B, k,
// ports) come from the table entry, so reconfiguring never touches the SN.
#ifndef DC_PDCP_SEQUENCER_P4
#define DC_PDCP_SEQUENCER_P4

#include "headers.p4"

control PdcpSequencer(inout parsed_headers_t hdr,
                      inout local_metadata_t meta,
                      inout standard_metadata_t std_meta) {

    register<pdcp_sn_t>(MAX_USERS) next_sn;
    register<batch_size_t>(MAX_USERS) batch_pos;
    register<session_id_t>(MAX_USERS) user_session;

    apply {
        bit<32> idx = (bit<32>) meta.user_idx;
        session_id_t owner;
        pdcp_sn_t sn;
        batch_size_t pos;
        user_session.read(owner, idx);
        next_sn.read(sn, idx);
        batch_pos.read(pos, idx);

        // A user index that was given to a new user (new session id) starts again at SN 0
        // and batch position 0. This is how the controller resets a user without register
        // writes, which BMv2's P4Runtime server does not implement (p4lang/PI issue 376).
        if (owner != meta.session) {
            sn = 0;
            pos = 0;
            user_session.write(idx, meta.session);
        }

        if (meta.dc_mode == DC_MODE_SPLIT) {
            // A smaller B than the current position (live reconfiguration) restarts the
            // batch; a larger one continues it. Either way the SN is untouched.
            if (pos >= meta.batch) {
                pos = 0;
            }
            if (pos < meta.leg_a_count) {
                std_meta.egress_spec = meta.leg_a_port;
            } else {
                std_meta.egress_spec = meta.leg_b_port;
            }
            pos = pos + 1;
            if (pos >= meta.batch) {
                pos = 0;
            }
        }
        batch_pos.write(idx, pos);
        next_sn.write(idx, sn + 1);  // bit<PDCP_SN_WIDTH> arithmetic wraps modulo 2^width

        hdr.pdcp.setValid();
        hdr.pdcp.d_c = PDCP_DATA_PDU;
        hdr.pdcp.reserved = 0;
        hdr.pdcp.sn = sn;
        hdr.inner_ethertype.setValid();
        hdr.inner_ethertype.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_PDCP;
    }
}

#endif // DC_PDCP_SEQUENCER_P4

// The per-user table: a downlink packet whose destination IPv4 or IPv6 address belongs to a
// configured user gets that user's mode and knobs (all in action parameters, so a P4Runtime
// MODIFY changes them atomically). The numbering itself happens in PdcpSequencer.
#ifndef DC_UE_SESSIONS_P4
#define DC_UE_SESSIONS_P4

#include "headers.p4"

control UeSessions(inout parsed_headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta) {

    counter(MAX_USERS, CounterType.packets_and_bytes) user_counter;

    // DC split: positions 0..leg_a_count-1 of each batch of `batch` packets go to leg A,
    // the rest to leg B.
    action split_dc(user_idx_t user_idx, session_id_t session, batch_size_t batch,
                    batch_size_t leg_a_count, bit<9> leg_a_port, bit<9> leg_b_port) {
        meta.dc_mode = DC_MODE_SPLIT;
        meta.user_idx = user_idx;
        meta.session = session;
        meta.batch = batch;
        meta.leg_a_count = leg_a_count;
        meta.leg_a_port = leg_a_port;
        meta.leg_b_port = leg_b_port;
    }

#ifdef DC_ADAPTIVE
    // DC split by credit (LegCredit): each packet goes to a leg with credit from its
    // feedback reports; the batch split above is the fallback when no leg has credit.
    action split_credit(user_idx_t user_idx, session_id_t session, batch_size_t batch,
                        batch_size_t leg_a_count, bit<9> leg_a_port, bit<9> leg_b_port) {
        split_dc(user_idx, session, batch, leg_a_count, leg_a_port, leg_b_port);
        meta.by_credit = 1;
    }
#endif // DC_ADAPTIVE

    // DC duplication: one SN, one copy per leg through multicast group `mcast_grp`
    // (its replicas are the two leg ports, written as a P4Runtime PRE entry).
    action duplicate_dc(user_idx_t user_idx, session_id_t session, bit<16> mcast_grp) {
        meta.dc_mode = DC_MODE_DUP;
        meta.user_idx = user_idx;
        meta.session = session;
        std_meta.mcast_grp = mcast_grp;
    }

    // Single connectivity: out of one port, unchanged.
    action forward_sc(user_idx_t user_idx, bit<9> port) {
        meta.dc_mode = DC_MODE_SC;
        meta.user_idx = user_idx;
        std_meta.egress_spec = port;
    }

    action miss() {
        meta.dc_mode = DC_MODE_NONE;
    }

    table ue_sessions_v4 {
        key = {
            hdr.ipv4.dst_addr: exact @name("ue_addr");
        }
        actions = {
            split_dc;
#ifdef DC_ADAPTIVE
            split_credit;
#endif // DC_ADAPTIVE
            duplicate_dc;
            forward_sc;
            @defaultonly miss;
        }
        const default_action = miss();
        size = MAX_USERS;
    }

    table ue_sessions_v6 {
        key = {
            hdr.ipv6.dst_addr: exact @name("ue_addr");
        }
        actions = {
            split_dc;
#ifdef DC_ADAPTIVE
            split_credit;
#endif // DC_ADAPTIVE
            duplicate_dc;
            forward_sc;
            @defaultonly miss;
        }
        const default_action = miss();
        size = MAX_USERS;
    }

    apply {
        meta.dc_mode = DC_MODE_NONE;
#ifdef DC_ADAPTIVE
        meta.by_credit = 0;
#endif // DC_ADAPTIVE
        // A frame that already carries a PDCP header is never numbered twice.
        if (!hdr.pdcp.isValid()) {
            if (hdr.ipv4.isValid()) {
                ue_sessions_v4.apply();
            } else if (hdr.ipv6.isValid()) {
                ue_sessions_v6.apply();
            }
        }
        if (meta.dc_mode != DC_MODE_NONE) {
            user_counter.count((bit<32>) meta.user_idx);
        }
    }
}

#endif // DC_UE_SESSIONS_P4

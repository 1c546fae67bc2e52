// TNA UeSessions: the per-user tables and counter of include/ue_sessions.p4, with the
// egress port and multicast group in the traffic-manager metadata.
#ifndef DC_TNA_UE_SESSIONS_P4
#define DC_TNA_UE_SESSIONS_P4

#include "../headers.p4"

control UeSessions(inout parsed_headers_t hdr,
                   inout local_metadata_t meta,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<64>, user_idx_t>(MAX_USERS, CounterType_t.PACKETS_AND_BYTES) user_counter;

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

    // DC duplication: one SN, one copy per leg through multicast group `mcast_grp`.
    action duplicate_dc(user_idx_t user_idx, session_id_t session, bit<16> mcast_grp) {
        meta.dc_mode = DC_MODE_DUP;
        meta.user_idx = user_idx;
        meta.session = session;
        ig_tm_md.mcast_grp_a = mcast_grp;
    }

    // Single connectivity: out of one port, unchanged.
    action forward_sc(user_idx_t user_idx, bit<9> port) {
        meta.dc_mode = DC_MODE_SC;
        meta.user_idx = user_idx;
        ig_tm_md.ucast_egress_port = port;
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
            duplicate_dc;
            forward_sc;
            @defaultonly miss;
        }
        const default_action = miss();
        size = MAX_USERS;
    }

    apply {
        meta.dc_mode = DC_MODE_NONE;
        // A frame that already carries a PDCP header is never numbered twice.
        if (!hdr.pdcp.isValid()) {
            if (hdr.ipv4.isValid()) {
                ue_sessions_v4.apply();
            } else if (hdr.ipv6.isValid()) {
                ue_sessions_v6.apply();
            }
        }
        if (meta.dc_mode != DC_MODE_NONE) {
            user_counter.count(meta.user_idx);
        }
    }
}

#endif // DC_TNA_UE_SESSIONS_P4

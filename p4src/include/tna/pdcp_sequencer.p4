// TNA PdcpSequencer: include/pdcp_sequencer.p4 with each register read and written by one
// RegisterAction (one stateful-ALU access per register per packet). Stage order:
// user_session (did the index change owner?) -> next_sn and batch_pos (restart or advance)
// -> leg choice. The SN register is 32 bits wide (stateful ALUs hold 8, 16 or 32 bits) and
// holds the SN itself: take_sn wraps it at 2^18 (2^12) as v1model's bit<18> (bit<12>) one.
#ifndef DC_TNA_PDCP_SEQUENCER_P4
#define DC_TNA_PDCP_SEQUENCER_P4

#include "../headers.p4"

control PdcpSequencer(inout parsed_headers_t hdr,
                      inout local_metadata_t meta,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Register<bit<32>, user_idx_t>(MAX_USERS, 0) next_sn;
    const bit<32> SN_LAST = (1 << PDCP_SN_WIDTH) - 1;   // the largest SN; 0 follows it
    Register<batch_size_t, user_idx_t>(MAX_USERS, 0) batch_pos;
    Register<session_id_t, user_idx_t>(MAX_USERS, 0) user_session;

    bit<1> restarted;           // the index has a new owner: SN and position from 0
    batch_size_t pos;           // this packet's batch position

    batch_size_t below_batch;   // B |-| pos: zero when the stored position is stale (>= B)
    batch_size_t left_on_a;     // k |-| pos: non-zero when the packet goes to leg A

    // pos >= B and pos < k as saturating differences, both in one stage, so that each
    // gateway compares one field with a constant.
    @hidden action count_margins() {
        below_batch = meta.batch |-| pos;
        left_on_a = meta.leg_a_count |-| pos;
    }

    // A user index given to a new user (new session id) starts again at SN 0 and batch
    // position 0: how the controller resets a user without register writes.
    RegisterAction<session_id_t, user_idx_t, bit<1>>(user_session) claim_session = {
        void apply(inout session_id_t owner, out bit<1> changed) {
            changed = 0;
            if (owner != meta.session) {
                owner = meta.session;
                changed = 1;
            }
        }
    };

    // Stores SN + 1 modulo 2^PDCP_SN_WIDTH, so the register holds the SN as v1model's
    // bit<PDCP_SN_WIDTH> one does (controllers read the same value from both programs).
    RegisterAction<bit<32>, user_idx_t, bit<32>>(next_sn) take_sn = {
        void apply(inout bit<32> value, out bit<32> sn) {
            sn = value;
            if (value >= SN_LAST) {
                value = 0;
            } else {
                value = value + 1;
            }
        }
    };

    RegisterAction<bit<32>, user_idx_t, bit<32>>(next_sn) restart_sn = {
        void apply(inout bit<32> value, out bit<32> sn) {
            sn = 0;
            value = 1;
        }
    };

    // Returns the stored position; stores (p + 1) mod B. A stored position >= B (B made
    // smaller mid-batch) reads as 0 (see apply). A stateful ALU updates a value in at most
    // two ways, so such a stale position stores 0, where v1model stores (0 + 1) mod B: the
    // first batch after that shrink has position 0 twice (p4src/README.md, "Tofino").
    RegisterAction<batch_size_t, user_idx_t, batch_size_t>(batch_pos) take_pos = {
        void apply(inout batch_size_t value, out batch_size_t p) {
            p = value;
            if (value + 1 >= meta.batch) {
                value = 0;
            } else {
                value = value + 1;
            }
        }
    };

    RegisterAction<batch_size_t, user_idx_t, batch_size_t>(batch_pos) restart_pos = {
        void apply(inout batch_size_t value, out batch_size_t p) {
            p = 0;
            if (meta.batch <= 1) {      // (0 + 1) mod B
                value = 0;
            } else {
                value = 1;
            }
        }
    };

    // Duplication does not move the position, but a new owner clears it.
    RegisterAction<batch_size_t, user_idx_t, batch_size_t>(batch_pos) clear_pos = {
        void apply(inout batch_size_t value, out batch_size_t p) {
            p = 0;
            value = 0;
        }
    };

    apply {
        restarted = claim_session.execute(meta.user_idx);

        pdcp_sn_t sn;
        if (restarted == 1) {
            sn = (pdcp_sn_t) restart_sn.execute(meta.user_idx);
        } else {
            sn = (pdcp_sn_t) take_sn.execute(meta.user_idx);
        }

        if (meta.dc_mode == DC_MODE_SPLIT) {
            if (restarted == 1) {
                pos = restart_pos.execute(meta.user_idx);
            } else {
                pos = take_pos.execute(meta.user_idx);
            }
            count_margins();
            // A stale position reads as 0: leg A when k > 0.
            ig_tm_md.ucast_egress_port = meta.leg_b_port;
            if (below_batch == 0) {
                if (meta.leg_a_count != 0) {
                    ig_tm_md.ucast_egress_port = meta.leg_a_port;
                }
            } else if (left_on_a != 0) {
                ig_tm_md.ucast_egress_port = meta.leg_a_port;
            }
        } else if (restarted == 1) {
            clear_pos.execute(meta.user_idx);
        }

        // The shim is bridged in front of the frame; egress puts it behind Ethernet.
        hdr.shim_pdcp.d_c = PDCP_DATA_PDU;
        hdr.shim_pdcp.reserved = 0;
        hdr.shim_pdcp.sn = sn;
        hdr.shim_ethertype.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_PDCP;
    }
}

#endif // DC_TNA_PDCP_SEQUENCER_P4

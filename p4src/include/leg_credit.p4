// Data-plane split loop (-D DC_ADAPTIVE): per-user, per-leg credit refilled by the legs'
// feedback reports and spent per packet, in the spirit of TS 38.425's flow control (the
// node that splits sends a leg no more than the buffer it asked for). Reports also go to the
// controller (PacketIn), so the controller's policies see them on the same profile.
#ifndef DC_LEG_CREDIT_P4
#define DC_LEG_CREDIT_P4

#include "headers.p4"

control LegCredit(inout parsed_headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t std_meta) {

    // Indexed by user_idx * 2 + leg (0 = leg A, 1 = leg B).
    register<bit<32>>(MAX_USERS * 2) credit;        // bytes the leg may still be sent
    register<bit<32>>(MAX_USERS * 2) desired;       // its last desired buffer size (0: none)
    register<bit<48>>(MAX_USERS * 2) report_time;   // ingress timestamp of its last report
    register<bit<16>>(MAX_USERS) packets;           // per user: paces the dead-leg probe

    // Which user and leg a report is about: the controller installs one entry per leg port
    // and DC user (the report names the user by address; registers need the index).
    action credit_leg(user_idx_t user_idx, bit<1> leg) {
        meta.user_idx = user_idx;
        meta.report_leg = leg;
    }

    table feedback_users {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
            hdr.feedback.ue_addr: exact @name("ue_addr");
        }
        actions = {
            credit_leg;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = FEEDBACK_USERS_SIZE;
    }

    apply {
        if (hdr.feedback.isValid()) {
            if (feedback_users.apply().hit) {
                bit<32> idx = ((bit<32>) meta.user_idx) * 2 + (bit<32>) meta.report_leg;
                // What the leg wants beyond what it already holds.
                credit.write(idx, hdr.feedback.desired_bytes |-| hdr.feedback.held_bytes);
                desired.write(idx, hdr.feedback.desired_bytes);
                report_time.write(idx, std_meta.ingress_global_timestamp);
            }
            std_meta.egress_spec = CPU_PORT;
        } else {
            bit<32> idx_a = ((bit<32>) meta.user_idx) * 2;
            bit<32> idx_b = idx_a + 1;
            bit<32> credit_a;
            bit<32> credit_b;
            bit<32> desired_a;
            bit<32> desired_b;
            bit<48> time_a;
            bit<48> time_b;
            credit.read(credit_a, idx_a);
            credit.read(credit_b, idx_b);
            desired.read(desired_a, idx_a);
            desired.read(desired_b, idx_b);
            report_time.read(time_a, idx_a);
            report_time.read(time_b, idx_b);
            bit<48> now = std_meta.ingress_global_timestamp;
            bit<16> count;
            packets.read(count, (bit<32>) meta.user_idx);
            packets.write((bit<32>) meta.user_idx, count + 1);
            bool probe = (count & (DEAD_LEG_PROBE_EVERY - 1)) == DEAD_LEG_PROBE_EVERY - 1;
            // Dead: its last report asked for nothing (a leg that delivers nothing reports a
            // zero desired buffer), however old. Live: reported recently, asked for something.
            bool dead_a = time_a != 0 && desired_a == 0;
            bool dead_b = time_b != 0 && desired_b == 0;
            bool live_a = time_a != 0 && now - time_a < FEEDBACK_STALE_US && desired_a != 0;
            bool live_b = time_b != 0 && now - time_b < FEEDBACK_STALE_US && desired_b != 0;
            // Credit steers only once both legs have reported: a leg that has not reported
            // yet (its base station has seen no frame of this user) is of unknown state, not
            // a leg without room, so the other leg's credit must not starve it.
            bool heard_both = time_a != 0 && time_b != 0;
            bool has_a = heard_both && credit_a != 0;
            bool has_b = heard_both && credit_b != 0;

            // The leg with more credit; a leg without credit is skipped. Without credit
            // anywhere, or a leg not heard from yet: never a dead leg, else a single live
            // leg (both heard from), else (both heard from, neither dead) the leg that
            // asked for more; otherwise (a leg not heard from yet) the batch split
            // PdcpSequencer chose.
            if (probe && dead_a != dead_b) {
                // One packet in DEAD_LEG_PROBE_EVERY to a dead leg: it reports again (and
                // gets credit) only once it delivers something.
                std_meta.egress_spec = dead_a ? meta.leg_a_port : meta.leg_b_port;
            } else if (has_a && (!has_b || credit_a >= credit_b)) {
                std_meta.egress_spec = meta.leg_a_port;
                credit.write(idx_a, credit_a |-| std_meta.packet_length);
            } else if (has_b) {
                std_meta.egress_spec = meta.leg_b_port;
                credit.write(idx_b, credit_b |-| std_meta.packet_length);
            } else if (dead_b && !dead_a) {
                std_meta.egress_spec = meta.leg_a_port;
            } else if (dead_a && !dead_b) {
                std_meta.egress_spec = meta.leg_b_port;
            } else if (heard_both && live_a && !live_b) {
                std_meta.egress_spec = meta.leg_a_port;
            } else if (heard_both && live_b && !live_a) {
                std_meta.egress_spec = meta.leg_b_port;
            } else if (heard_both) {
                // Beyond both legs' credit: the leg that asked for the larger buffer, the
                // one that drains faster (A on a tie; neither is dead here). The batch split sent half of TCP's
                // excess to the slower leg, a batch's run of packets at a time; at 8:1 such
                // runs put that leg more than t-Reordering behind the other (loop-ratio-20,
                // experiments/docs/baselines/findings.md).
                if (desired_a >= desired_b) {
                    std_meta.egress_spec = meta.leg_a_port;
                } else {
                    std_meta.egress_spec = meta.leg_b_port;
                }
            }
        }
    }
}

#endif // DC_LEG_CREDIT_P4

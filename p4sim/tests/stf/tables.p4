// Tables: exact / lpm / ternary / optional / range keys, priorities, const entries (first
// listed wins), default actions, hit/miss, switch on action_run, direct counters, exit,
// return, and a direct action call with an inout parameter. Byte `mode` picks the test.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  mode;
    bit<8>  kx;
    bit<32> k_lpm;
    bit<8>  k_tern;
    bit<8>  k_opt;
    bit<16> k_range;
    bit<8>  r1;
    bit<8>  r2;
}

struct headers_t { h_t h; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) lpm_hits;

    action set_out(bit<8> v) { hdr.h.r1 = v; }
    action set_out2(bit<8> v) { hdr.h.r2 = v; }
    action add_to(inout bit<8> x, bit<8> d) {
        x = x + d;
        return;
        x = 0;  // not reached
    }

    table t_exact {
        key = { hdr.h.kx: exact @name("kx"); }
        actions = { set_out; NoAction; }
        default_action = NoAction();
        size = 16;
    }
    table t_lpm {
        key = { hdr.h.k_lpm: lpm; }
        actions = { set_out; }
        default_action = set_out(0xee);
        counters = lpm_hits;
    }
    table t_tern {
        key = { hdr.h.k_tern: ternary; hdr.h.k_opt: optional; }
        actions = { set_out2; }
    }
    table t_range {
        key = { hdr.h.k_range: range; }
        actions = { set_out2; }
    }
    table t_const {
        key = { hdr.h.k_tern: ternary; }
        actions = { set_out2; }
        const entries = {
            0x12 : set_out2(2);
            0x10 &&& 0xf0 : set_out2(1);
            _ : set_out2(3);
        }
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.h.mode == 0) {
            switch (t_exact.apply().action_run) {
                set_out: { hdr.h.r2 = 0xa1; }
                NoAction: { hdr.h.r2 = 0xa0; }
            }
        } else if (hdr.h.mode == 1) {
            if (t_lpm.apply().hit) {
                hdr.h.r2 = 1;
            } else {
                hdr.h.r2 = 0;
            }
        } else if (hdr.h.mode == 2) {
            t_tern.apply();
        } else if (hdr.h.mode == 3) {
            if (t_range.apply().miss) {
                hdr.h.r2 = 0xff;
            }
        } else if (hdr.h.mode == 4) {
            t_const.apply();
        } else if (hdr.h.mode == 5) {
            hdr.h.r1 = 0x55;
            exit;
            hdr.h.r1 = 0x66;  // not reached
        } else if (hdr.h.mode == 6) {
            add_to(hdr.h.r1, 7);
        } else {
            mark_to_drop(sm);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;

// `const` on single entries of a non-const `entries` list (P4_16 1.2.4), with explicit and
// implied priorities (largest_priority_wins = false, priority_delta = 10). p4c-bm2-ss drops
// the per-entry flag (BMv2's JSON has none); p4sim keeps it (test_lang_engine.py). The
// overlapping ternary entries show which priority each entry got, alike on both targets.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> t; bit<8> r; }
struct H { h_t h; }
struct M { }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.r = v; }
    table t {
        key = { hdr.h.k : exact; hdr.h.t : ternary; }
        actions = { set; NoAction; }
        default_action = NoAction();
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            const priority=10: (1, 0x10 &&& 0xF0) : set(1);  // 10
                               (1, 0x11)          : set(2);  // 20: loses to 10 on 0x11
            const              (2, 0x20 &&& 0xF0) : set(3);  // 30
                  priority=5:  (2, 0x22)          : set(4);  // 5: wins over 30 on 0x22
            const              (2, _)             : set(5);  // 15
        }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
